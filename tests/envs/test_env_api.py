"""Registry-wide API tests: Gymnasium and SB3 env checkers, seeded determinism, pickling, return == −objective."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import edgegym
from edgegym.envs import env_info
from edgegym.families.edge_cloud.env import EdgeCloudMLEnv

IDS = edgegym.registered_ids()
JCT_IDS = [i for i in IDS if env_info(i).family == "EdgeCloudML"]  # EdgeUtility: tests/utility


def _rollout(env, seed, actions=None, action_seed=0):
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(action_seed)
    observations, rewards, infos = [obs], [], []
    done, k = False, 0
    while not done:
        a = actions[k] if actions is not None else env.action_space.sample()
        obs, r, term, trunc, info = env.step(a)
        observations.append(obs)
        rewards.append(r)
        infos.append(info)
        done = term or trunc
        k += 1
    return observations, rewards, infos


def test_registry_has_the_presets():
    for i in (
        "EdgeCloudML-v0",
        "EdgeCloudML-tiny-v0",
        "EdgeCloudML-testbed-v0",
        "EdgeCloudML-sim100-v0",
        "EdgeUtility-v0",
    ):
        assert i in IDS and i in gym.registry
    assert env_info("EdgeCloudML-v0").preset == "sim100"
    assert env_info("EdgeUtility-v0").family == "EdgeUtility"


#: the one warning a checker may give: SB3's on a Box action that is not [-1, 1]. EdgeCloudML's default action mode
#: (``server_proportions``) declares its weights in [0, 1] on every id; changing that changes the legal actions and
#: ``action_space.sample()`` of published ids, a new version (docs/families/edge_cloud.md, "symmetric Box")
SB3_BOX_WARNING = "We recommend you to use a symmetric and normalized Box action space (range=[-1, 1])"
SB3_BOX_WARNING_IDS = [i for i in IDS if env_info(i).family == "EdgeCloudML"]


def _checker_warnings(check, env) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(env)
    return [" ".join(str(w.message).split()) for w in caught if "is out of date" not in str(w.message)]


def test_the_sb3_box_warning_ids_are_the_box_action_ids():
    box = [i for i in IDS if isinstance(gym.make(i).action_space, gym.spaces.Box)]
    assert box == SB3_BOX_WARNING_IDS and len(box) == 10
    for i in box:
        space = gym.make(i).action_space
        assert space.low.min() == 0.0 and space.high.max() == 1.0  # weights in [0, 1], not [-1, 1]


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id):
    env = gym.make(env_id)
    assert _checker_warnings(lambda e: gym_check_env(e, skip_render_check=True), env.unwrapped) == []


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env(env_id):
    sb3_env_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    got = _checker_warnings(lambda e: sb3_env_checker.check_env(e, warn=True), gym.make(env_id).unwrapped)
    if env_id in SB3_BOX_WARNING_IDS:
        assert len(got) == 1 and got[0].startswith(SB3_BOX_WARNING), got
    else:
        assert got == []


@pytest.mark.parametrize("config", [{"env": {"action_mode": "cloud_split"}}, {"env": {"action_mode": "cloud_fraction"}},
                                    None])
def test_sb3_check_env_silent_with_a_discrete_mode_or_rescaled(config):
    # the workarounds the family page gives: a discrete action mode, or Gymnasium's RescaleAction to [-1, 1]
    sb3_env_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gym.make("EdgeCloudML-testbed-v1", config=config)
    if config is None:
        env = gym.wrappers.RescaleAction(env, min_action=np.float32(-1), max_action=np.float32(1))
    assert _checker_warnings(lambda e: sb3_env_checker.check_env(e, warn=True), env) == []


@pytest.mark.parametrize("env_id", JCT_IDS)
def test_return_equals_minus_objective(env_id):
    env = gym.make(env_id)
    _, rewards, infos = _rollout(env, seed=3)
    m = infos[-1]["episode_metrics"]
    assert sum(rewards) == pytest.approx(-m["total_jct"] / m["reward_scale"], rel=1e-9)
    assert m["objective"] == m["total_jct"]
    for key in ("avg_jct", "p95_jct", "makespan", "preemptions", "edge_fraction", "cloud_jobs", "utilisation"):
        assert key in m


@pytest.mark.parametrize("env_id", ["EdgeCloudML-tiny-v0", "EdgeCloudML-testbed-v0"])
@pytest.mark.parametrize("mode", ["server_proportions", "cloud_split"])
def test_seeded_determinism(env_id, mode):
    a = gym.make(env_id, config={"env": {"action_mode": mode}})
    b = gym.make(env_id, config={"env": {"action_mode": mode}})
    oa, ra, ia = _rollout(a, seed=7)
    ob, rb, ib = _rollout(b, seed=7)
    assert len(oa) == len(ob)
    for x, y in zip(oa, ob, strict=True):
        np.testing.assert_array_equal(x, y)
    assert ra == rb
    assert ia[-1]["episode_metrics"] == ib[-1]["episode_metrics"]


def test_different_seeds_give_different_instances():
    env = gym.make("EdgeCloudML-testbed-v0")
    o1, _ = env.reset(seed=1)
    j1 = env.unwrapped.jobs
    o2, _ = env.reset(seed=2)
    assert not np.array_equal(j1.arrival_slots, env.unwrapped.jobs.arrival_slots) or not np.array_equal(o1, o2)


def test_pickle_round_trip_mid_episode():
    env = gym.make("EdgeCloudML-testbed-v0")
    env.reset(seed=11)
    env.action_space.seed(0)
    for _ in range(5):
        env.step(env.action_space.sample())
    clone = pickle.loads(pickle.dumps(env))
    env.action_space.seed(1)
    actions = [env.action_space.sample() for _ in range(40)]
    rest_a, rest_b = [], []
    for target, out in ((env, rest_a), (clone, rest_b)):
        for a in actions:
            obs, r, term, _, info = target.step(a)
            out.append((obs, r))
            if term:
                out.append(info["episode_metrics"])
                break
    assert len(rest_a) == len(rest_b)
    for x, y in zip(rest_a, rest_b, strict=True):
        if isinstance(x, dict):
            assert x == y
        else:
            np.testing.assert_array_equal(x[0], y[0])
            assert x[1] == y[1]


def test_action_outside_space_raises_clear_error():
    env = gym.make("EdgeCloudML-tiny-v0").unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be"):
        env.step(np.array([2.0, 0.0, 0.0], dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        env.step(np.array([0.5, 0.5], dtype=np.float32))
    with pytest.raises(ValueError, match="finite"):
        env.step(np.array([np.nan, 0.5, 0.5], dtype=np.float32))
    split = gym.make("EdgeCloudML-tiny-v0", config={"env": {"action_mode": "cloud_split"}}).unwrapped
    split.reset(seed=0)
    with pytest.raises(ValueError, match="not in the action space"):
        split.step(split.max_chunks + 1)
    with pytest.raises(ValueError, match="not in the action space"):
        split.step(-1)


def test_step_before_reset_and_after_end():
    env = EdgeCloudMLEnv("tiny")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(3, dtype=np.float32))
    _rollout(env, seed=0)
    with pytest.raises(RuntimeError, match="terminated"):
        env.step(np.zeros(3, dtype=np.float32))


def test_action_masks_shapes_and_cloud_split_masking():
    env = EdgeCloudMLEnv("testbed", config={"env": {"action_mode": "cloud_split"}})
    env.reset(seed=0)
    mask = env.action_masks()
    D = int(env.jobs.num_chunks[0])
    assert mask.shape == (env.max_chunks + 1,) and mask[: D + 1].all() and not mask[D + 1 :].any()
    # a masked value maps to the nearest legal one and is counted
    _, _, term, _, info = env.step(env.max_chunks)
    assert info["placement"][-1] == D
    edge_only = EdgeCloudMLEnv("testbed", config={"env": {"action_mode": "cloud_split", "use_cloud": False}})
    edge_only.reset(seed=0)
    assert edge_only.action_masks().tolist()[:2] == [True, False]
    sp = EdgeCloudMLEnv("testbed")
    sp.reset(seed=0)
    rows = sp.action_masks()
    assert rows.shape == (9,) and rows[-1]


def test_all_zero_action_falls_back_to_greedy():
    env = EdgeCloudMLEnv("tiny")
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(3, dtype=np.float32))
    # A_greedy on job A (hand-computed in test_tiny_hand_computed): one chunk per server
    assert info["placement"].tolist() == [1, 1, 0]


def test_padding_rows_are_masked():
    env = EdgeCloudMLEnv("tiny", config={"env": {"max_edge_servers": 5}})
    obs, _ = env.reset(seed=0)
    assert env.action_space.shape == (6,)
    mask = env.action_masks()
    assert mask.tolist() == [True, True, False, False, False, True]
    # weight on a padded row is ignored
    _, _, _, _, info = env.step(np.array([1, 0, 0, 0, 1, 0], dtype=np.float32))
    assert info["placement"].tolist() == [2, 0, 0, 0, 0, 0]


def test_view_is_a_read_only_copy():
    env = EdgeCloudMLEnv("tiny")
    env.reset(seed=0)
    v = env.view()
    v.q[:] = -1
    assert np.all(env.view().q >= 0)
    assert v.num_chunks == 2 and v.action_mode == "server_proportions"


def test_unplaceable_job_is_rejected_at_reset():
    import dataclasses

    from edgegym.families.edge_cloud.testing import random_instance

    cl, jobs = random_instance(np.random.default_rng(0), num_jobs=3, num_types=2)
    cl = dataclasses.replace(cl, has_cloud=False)
    jobs = dataclasses.replace(jobs, worker_type=np.array([0, 3, 1]), bandwidth_mbps=np.full(3, 10.0))
    env = EdgeCloudMLEnv("tiny", config={"env": {"max_types": 4}}, instance=(cl, jobs))
    with pytest.raises(ValueError, match="job 1 needs worker type 3"):
        env.reset(seed=0)


def test_cloud_only_and_edge_only_clusters():
    import dataclasses

    from edgegym.families.edge_cloud.testing import random_instance

    cl, jobs = random_instance(np.random.default_rng(1), num_jobs=4)
    edge_only = dataclasses.replace(cl, has_cloud=False)
    env = EdgeCloudMLEnv("tiny", config={"env": {"max_types": 4}}, instance=(edge_only, jobs))
    _, rewards, infos = _rollout(env, seed=0)
    m = infos[-1]["episode_metrics"]
    assert m["cloud_jobs"] == 0 and m["edge_fraction"] == 1.0
    assert sum(rewards) == pytest.approx(-m["total_jct"] / m["reward_scale"])
