"""HeteroML env API: check_env (Gymnasium, SB3) for every id, return == -(objective - offset)/Z for every preset,
determinism, invalid actions, preset validation, the structured Placement API and the observation bounds."""

import gymnasium as gym
import numpy as np
import pytest

import edgegym
from edgegym.families.hetero_ml.env import HeteroMLEnv, observation_features
from edgegym.families.hetero_ml.presets import load_preset, preset_from_dict
from edgegym.families.hetero_ml.simulator import Placement, verify_schedule

IDS = [i for i in edgegym.registered_ids() if i.startswith("HeteroML-")]
PRESETS = ["tiny", "tiny-ra", "rl", "ps", "ra"]


def _run(env, seed, policy="first"):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    done, ret, obss = False, 0.0, [obs]
    while not done:
        assert env.observation_space.contains(obs)
        mask = env.action_masks()
        acts = np.flatnonzero(mask)
        a = int(acts[0] if policy == "first" else rng.choice(acts))
        obs, r, done, trunc, info = env.step(a)
        ret += r
        obss.append(obs)
    return ret, info, obss


def test_ids_registered():
    assert {"HeteroML-v0", "HeteroML-ra-v0", "HeteroML-ps-v0", "HeteroML-tiny-v0", "HeteroML-rl-v0"} <= set(IDS)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_gymnasium_and_sb3(env_id):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check

    env = gym.make(env_id, config={"workload": {"num_jobs": 6}})
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check(env.unwrapped, warn=False)


@pytest.mark.parametrize("discipline", ["drf", "tiresias"])
def test_check_env_slot_driver(discipline):
    from gymnasium.utils.env_checker import check_env

    env = HeteroMLEnv("tiny", config={"env": {"discipline": discipline}})
    assert env.action_space.n == 1
    check_env(env, skip_render_check=True)


@pytest.mark.parametrize("preset", PRESETS)
def test_return_equals_minus_objective(preset):
    env = HeteroMLEnv(preset)
    ret, info, _ = _run(env, 0, "random")
    m = info["episode_metrics"]
    assert ret == pytest.approx(-(m["objective"] - m["objective_offset"]) / m["reward_scale"], rel=1e-9)
    assert ret == pytest.approx(env.episode_return(), rel=1e-12)
    assert m["reward_scale"] == 5000.0 * env.T
    assert m["objective"] == pytest.approx(verify_schedule(env.cluster, env.jobs, _placements(env)))
    assert m["objective"] >= m["lower_bound"]


def _placements(env):
    s = env.sim
    return {j: Placement(int(s.start[j]), int(s.duration[j]), int(s.worker_type[j]), int(s.ps_type[j]), s.workers[j],
                         s.ps[j]) for j in range(env.jobs.num_jobs)}


def test_completion_reward_mode_and_slot_driver_return():
    env = HeteroMLEnv("tiny", config={"env": {"reward": "completion"}})
    ret, info, _ = _run(env, 3)
    m = info["episode_metrics"]
    assert m["objective_offset"] == 0.0 and ret == pytest.approx(-m["objective"] / m["reward_scale"])
    for disc in ("drf", "antman", "tiresias", "tiresias_las"):
        env = HeteroMLEnv("tiny-ra", config={"env": {"discipline": disc}})
        env.reset(seed=1)
        done, ret = False, 0.0
        while not done:
            _, r, done, _, info = env.step(0)
            ret += r
        m = info["episode_metrics"]
        assert ret == pytest.approx(-(m["objective"] - m["objective_offset"]) / m["reward_scale"])


def test_determinism():
    a = _run(HeteroMLEnv("tiny"), 7, "random")
    b = _run(HeteroMLEnv("tiny"), 7, "random")
    assert a[0] == b[0] and a[1]["episode_metrics"] == b[1]["episode_metrics"]
    for x, y in zip(a[2], b[2], strict=True):
        np.testing.assert_array_equal(x, y)
    c = _run(HeteroMLEnv("tiny"), 8, "random")
    assert c[1]["episode_metrics"]["objective"] != a[1]["episode_metrics"]["objective"]


def test_invalid_actions():
    env = HeteroMLEnv("tiny")
    env.reset(seed=0)
    for bad in (3.5, "3", -1, env.action_space.n, True):
        with pytest.raises(ValueError, match="Discrete"):
            env.step(bad)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.action_space.n,)
    if not mask.all():  # a masked-out action is mapped to the earliest-completion valid action (no penalty)
        env.step(int(np.flatnonzero(~mask)[0]))
    with pytest.raises(ValueError, match="infeasible"):
        env.step(Placement(0, 0, 0, 0, np.zeros(env.H, int), np.zeros(env.H, int)))


def test_structured_placement_and_projection():
    env = HeteroMLEnv("tiny")
    env.reset(seed=0)
    v = env.view()
    j = v.step
    free = env.free_over(v.decision_time, v.decision_time + 50)
    assert free.shape == (env.H, 4)
    y = np.zeros(env.H, int)
    s = np.zeros(env.H, int)
    y[0], s[0] = 1, 1
    pl = Placement(v.decision_time + 2, 0, 0, 0, y, s)
    a = env.grid_action_of(pl)
    assert 0 <= a < env.action_space.n
    _, _, _, _, info = env.step(pl)
    assert info["start"] == v.decision_time + 2 and info["num_workers"] == 1 and info["colocated"]
    assert j == 0 and env.view().jobs.num_jobs == 2  # the view never shows future jobs


def test_view_is_read_only():
    env = HeteroMLEnv("tiny")
    env.reset(seed=0)
    v = env.view()
    with pytest.raises(ValueError):
        v.cluster.capacity[0, 0] = 99
    with pytest.raises(AttributeError):
        v.step = 3


def test_preset_validation_messages():
    with pytest.raises(ValueError, match=r"hetero_ml/nope|unknown"):
        load_preset("nope")
    base = {"name": "x"}
    with pytest.raises(ValueError, match=r"<dict>: key 'env.reward_scale': must be > 0"):
        preset_from_dict({**base, "env": {"reward_scale": -1}})
    with pytest.raises(ValueError, match=r"key 'cluster.bogus': unknown key"):
        preset_from_dict({**base, "cluster": {"bogus": 1}})
    with pytest.raises(ValueError, match=r"key 'workload.chunks'"):
        preset_from_dict({**base, "workload": {"chunks": [5, 2]}})
    with pytest.raises(ValueError, match=r"key 'cluster.worker_types': unknown name"):
        preset_from_dict({**base, "cluster": {"worker_types": ["h100"]}})
    with pytest.raises(ValueError, match=r"key 'aonline.tie_break'"):
        load_preset("tiny").replace(aonline={"tie_break": "random"})
    with pytest.raises(ValueError, match=r"tiny.yaml \(with overrides\): key 'workload.num_jobs'"):
        HeteroMLEnv("tiny", config={"workload": {"num_jobs": 0}})


def test_observation_features_match_space():
    env = HeteroMLEnv("ps")
    feats = observation_features(env.M, env.R, env.n_grid)
    assert len(feats) == env.observation_space.shape[0]
    assert [f[2] for f in feats] == list(env.observation_space.low)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)


def test_render_rgb_array():
    env = HeteroMLEnv("tiny", render_mode="rgb_array")
    _run(env, 0)
    img = env.render()
    assert img.ndim == 3 and img.shape[2] == 3


def test_docs_observation_table_is_generated():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "families" / "hetero_ml.md").read_text()
    # the table is generated from observation_features into the page (tests/docs checks it is current)
    assert "<!-- BEGIN GENERATED: observation HeteroML-" in doc
    env = HeteroMLEnv("ps")
    assert f"Box(0, 10, ({env.observation_space.shape[0]},), float32)" in doc
    assert f"Discrete({env.action_space.n})" in doc
