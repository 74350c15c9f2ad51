"""WirelessUDL env API: registration, checkers, return identity, invariants every slot, determinism, errors."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import edgegym  # noqa: F401  (registers the envs)
from edgegym.families.wireless_udl.env import WirelessUDLEnv, observation_features
from edgegym.families.wireless_udl.presets import load_preset
from edgegym.families.wireless_udl.simulator import Plan
from edgegym.families.wireless_udl.testing import check_schedule

IDS = ["WirelessUDL-v0", "WirelessUDL-sim-v0", "WirelessUDL-paper-literal-v0", "WirelessUDL-testbed-v0",
       "WirelessUDL-tiny-v0"]
PRESETS = ["sim", "paper-literal", "testbed", "tiny"]
MODES = [{"env": {"mode": "commit"}}, *({"env": {"mode": "replan", "discipline": d}} for d in ("okita", "fifo", "drf"))]


def _run(env, seed=0, policy="random"):
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    ret, done, obs_seq = 0.0, False, [obs]
    while not done:
        mask = env.unwrapped.action_masks()
        a = int(rng.choice(np.flatnonzero(mask))) if policy == "random" else int(np.flatnonzero(mask)[0])
        obs, r, term, trunc, info = env.step(a)
        assert env.observation_space.contains(obs)
        obs_seq.append(obs)
        ret += r
        done = term or trunc
    return ret, info, obs_seq


def test_registered_ids():
    ids = edgegym.registered_ids()
    for i in IDS:
        assert i in ids
    assert gym.spec("WirelessUDL-v0").kwargs["preset"] in ("sim", "sim-v0")


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_and_sb3_check_env(env_id):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env.unwrapped, warn=False)
    rep = gym.make(env_id, config={"env": {"mode": "replan"}})
    check_env(rep.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("cfg", MODES, ids=["commit", "okita", "fifo", "drf"])
def test_return_equals_minus_total_cost(preset, cfg):
    if preset in ("sim", "paper-literal") and cfg["env"].get("discipline") == "fifo":
        cfg = {"env": {**cfg["env"]}, "jobs": {"count": 30}}  # FIFO's queue is slow to drain at 100 jobs
    env = WirelessUDLEnv(preset, config=cfg)
    ret, info, _ = _run(env, seed=3)
    m = info["episode_metrics"]
    assert ret == pytest.approx(-m["objective"] / m["reward_scale"], rel=1e-9)
    assert env.episode_return() == pytest.approx(ret)
    assert m["objective"] == pytest.approx(m["latency_cost"] + m["bandwidth_cost"] + m["penalty_cost"], rel=1e-9)
    assert m["jobs_hit_cap"] == 0


@pytest.mark.parametrize("preset", ["testbed", "tiny"])
@pytest.mark.parametrize("cfg", MODES, ids=["commit", "okita", "fifo", "drf"])
@pytest.mark.parametrize("sampling", ["proportional", "complete"])
def test_invariants_every_slot_and_cost_recomputed(preset, cfg, sampling):
    """I1-I7 from the schedule log: capacity, one PS, throughput, supply, conservation, no activity before
    arrival, per-slot unbiased shares (proportional sampling), and the cost recomputed by hand."""
    conf = {"env": {**cfg["env"], "record_schedule": True, "sampling": sampling}}
    for seed in range(3):
        env = WirelessUDLEnv(preset, config=conf)
        _, info, _ = _run(env, seed=seed)
        cost = check_schedule(env.sim)
        assert cost == pytest.approx(info["episode_metrics"]["objective"], rel=1e-9)


def test_determinism_and_seeds_differ():
    a = _run(WirelessUDLEnv("testbed"), seed=5)
    b = _run(WirelessUDLEnv("testbed"), seed=5)
    c = _run(WirelessUDLEnv("testbed"), seed=6)
    assert a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[2], b[2], strict=True))
    assert a[0] != c[0]
    r1 = _run(WirelessUDLEnv("testbed", config={"env": {"mode": "replan", "discipline": "fifo"}}), seed=2)
    r2 = _run(WirelessUDLEnv("testbed", config={"env": {"mode": "replan", "discipline": "fifo"}}), seed=2)
    assert r1[0] == r2[0]


def test_invalid_actions_raise_and_masked_actions_fall_back():
    env = WirelessUDLEnv("tiny")
    env.reset(seed=0)
    for bad in (3.5, "3", -1, env.action_space.n, True, np.float32(1.0)):
        with pytest.raises(ValueError, match="action space"):
            env.step(bad)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.action_space.n,) and mask.any()
    if not mask.all():
        env.step(int(np.flatnonzero(~mask)[0]))
        assert env._illegal == 1
    with pytest.raises(RuntimeError):
        WirelessUDLEnv("tiny").step(0)


def test_commit_plan_api_equals_decoded_action():
    e1, e2 = WirelessUDLEnv("testbed"), WirelessUDLEnv("testbed")
    e1.reset(seed=1)
    e2.reset(seed=1)
    done = False
    while not done:
        a = int(np.flatnonzero(e1.action_masks())[-1])
        plan = e2.decode(a)
        o1, r1, t1, _, _ = e1.step(a)
        o2, r2, t2, _, _ = e2.commit_plan(plan)
        assert r1 == r2 and np.array_equal(o1, o2)
        done = t1
    env = WirelessUDLEnv("tiny")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="illegal plan"):
        env.commit_plan(Plan(job=0, start=0, y=np.array([99, 0, 0]), ps=0))


def test_view_is_read_only_and_observation_features_match_space():
    env = WirelessUDLEnv("testbed")
    obs, _ = env.reset(seed=0)
    v = env.view()
    with pytest.raises(ValueError):
        v.cap[0, 0] = 5
    with pytest.raises(ValueError):
        v.calendar[0, 0, 0] = 5
    feats = observation_features(env.preset)
    assert len(feats) == env.observation_space.shape[0]
    np.testing.assert_array_equal([f[2] for f in feats], env.observation_space.low)
    np.testing.assert_array_equal([f[3] for f in feats], env.observation_space.high)
    pickle.loads(pickle.dumps(env))


def test_preset_validation_names_file_and_key():
    p = load_preset("tiny")
    with pytest.raises(ValueError, match=r"tiny.yaml \(with overrides\): key 'env.reward_scale': must be > 0"):
        p.replace(env={"reward_scale": -1})
    with pytest.raises(ValueError, match="key 'env.colour': unknown key"):
        p.replace(env={"colour": 1})
    with pytest.raises(ValueError, match="key 'jobs.worker_demand'"):
        p.replace(jobs={"worker_demand": [[0, 1]]})
    with pytest.raises(ValueError, match="key 'env.mode': must be one of"):
        WirelessUDLEnv("tiny", config={"env": {"mode": "batch"}})
    with pytest.raises(ValueError, match="unknown wireless_udl"):
        load_preset("nope")


def test_render_rgb_array():
    pytest.importorskip("matplotlib")
    env = WirelessUDLEnv("tiny", render_mode="rgb_array")
    _run(env, seed=0)
    img = env.render()
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8


@pytest.mark.parametrize("discipline", ["okita", "drf"])
def test_invariants_on_a_scaled_down_simulation(discipline):
    """The paper's simulation setting at 10 sites and 30 jobs (multi-resource EC2 capacities, 4 resources)."""
    cfg = {"cluster": {"sites": 10}, "jobs": {"count": 30, "horizon_slots": 40, "arrival_window": [0, 39]},
           "env": {"mode": "replan", "discipline": discipline, "record_schedule": True}}
    env = WirelessUDLEnv("sim", config=cfg)
    ret, info, _ = _run(env, seed=0)
    assert check_schedule(env.sim) == pytest.approx(info["episode_metrics"]["objective"], rel=1e-9)
    assert ret == pytest.approx(-info["episode_metrics"]["objective"] / env.reward_scale)
