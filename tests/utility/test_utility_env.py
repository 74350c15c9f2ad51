"""EdgeUtility env: registry-wide API checks, return == total utility, config validation, step semantics."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from helpers import random_jobs

import edgegym  # (registers the envs)
import edgegym.envs
from edgegym.families.edge_utility.env import EdgeUtilityEnv
from edgegym.families.edge_utility.presets import (
    list_utility_presets,
    load_utility_preset,
    utility_preset_from_dict,
)

IDS = [i for i in edgegym.registered_ids() if edgegym.envs.env_info(i).family == "EdgeUtility"]
SMALL = {"workload": {"num_jobs": 60}}


def _rollout(env, seed, policy=None):
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    rewards, infos, obs_list = [], [], [obs]
    done = False
    while not done:
        if policy is None:
            mask = env.unwrapped.action_masks()
            a = int(np.random.default_rng(len(rewards) + seed).choice(np.flatnonzero(mask)))
        else:
            a = policy(env)
        obs, r, term, trunc, info = env.step(a)
        rewards.append(r)
        infos.append(info)
        obs_list.append(obs)
        done = term or trunc
    return obs_list, rewards, infos


def test_ids_registered():
    assert {"EdgeUtility-v0", "EdgeUtility-testbed-v0", "EdgeUtility-sim300-v0", "EdgeUtility-tiny-v0"} <= set(IDS)
    for i in IDS:
        assert i in gym.registry
    assert set(list_utility_presets()) >= {"testbed", "sim300", "tiny"}


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id):
    env = gym.make(env_id, config=SMALL)
    gym_check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env(env_id):
    checker = pytest.importorskip("stable_baselines3.common.env_checker")
    checker.check_env(gym.make(env_id, config=SMALL).unwrapped, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_return_equals_total_utility(env_id):
    env = gym.make(env_id, config=SMALL, info_details=True)
    _, rewards, infos = _rollout(env, seed=3)
    m = infos[-1]["episode_metrics"]
    assert sum(rewards) * m["reward_scale"] == pytest.approx(m["total_utility"], rel=1e-9, abs=1e-9)
    assert m["objective"] == m["total_utility"]
    credited = sum(u for info in infos for (_, _, u, _, _) in info["completed"])
    assert credited == pytest.approx(m["total_utility"], rel=1e-12)
    assert sorted(j for info in infos for (j, *_rest) in info["completed"]) == list(range(m["num_jobs"]))
    assert m["total_utility"] <= m["upper_bound"] + 1e-9
    for key in ("total_utility", "deadline_miss_rate", "avg_response_time", "avg_jct", "makespan", "preemptions",
                "edge_fraction"):
        assert key in m


@pytest.mark.parametrize("disc", ["o4a", "fifo", "srpt", "edf", "hpu", "hrdf"])
@pytest.mark.parametrize("extra", [{}, {"estimation": {"delta": 0.2, "conservative": True}},
                                   {"env": {"dispatch_latency_s": 0.05, "reward_scale": 10.0}}])
def test_return_equals_utility_every_discipline(disc, extra):
    cfg = {"scheduler": {"discipline": disc, "cloud": "same" if disc == "fifo" else "infinite"}, **extra}
    env = gym.make("EdgeUtility-tiny-v0", config=cfg)
    _, rewards, infos = _rollout(env, seed=1)
    m = infos[-1]["episode_metrics"]
    assert sum(rewards) * m["reward_scale"] == pytest.approx(m["total_utility"], rel=1e-9)
    assert m["completed_jobs"] == m["num_jobs"]


def test_seeded_determinism_and_pickle():
    a = gym.make("EdgeUtility-testbed-v0", config=SMALL)
    b = gym.make("EdgeUtility-testbed-v0", config=SMALL)
    oa, ra, ia = _rollout(a, 7)
    ob, rb, ib = _rollout(b, 7)
    assert ra == rb and len(oa) == len(ob)
    for x, y in zip(oa, ob, strict=True):
        np.testing.assert_array_equal(x, y)
    env = EdgeUtilityEnv("tiny")
    env.reset(seed=0)
    env.step(0)
    clone = pickle.loads(pickle.dumps(env))
    o1 = env.step(1)
    o2 = clone.step(1)
    np.testing.assert_array_equal(o1[0], o2[0])
    assert o1[1] == o2[1]


def test_different_seeds_differ():
    env = EdgeUtilityEnv("tiny")
    env.reset(seed=1)
    r1 = env.jobs.release_s.copy()
    env.reset(seed=2)
    assert not np.array_equal(r1, env.jobs.release_s)


def test_reject_action_and_masks():
    env = EdgeUtilityEnv("tiny", config={"env": {"allow_reject": True}})
    obs, info = env.reset(seed=0)
    assert env.action_space.n == 5 and info["action_mask"].tolist() == [True] * 5
    total = 0.0
    done = False
    while not done:
        obs, r, done, _, info = env.step(4)  # reject everything
        total += r
    m = info["episode_metrics"]
    assert total == 0.0 and m["rejected"] == 40 and m["total_utility"] == 0.0
    no_cloud = EdgeUtilityEnv("testbed", config=SMALL)
    _, info = no_cloud.reset(seed=0)
    assert info["action_mask"].tolist() == [True] * 20 + [False]
    _, _, _, _, info = no_cloud.step(20)  # masked (no cloud): counted, mapped to a legal server
    assert info["server"] in range(20)
    do4a_mask = EdgeUtilityEnv("tiny", config={"env": {"mask": "do4a", "do4a_k": 2}})
    _, info = do4a_mask.reset(seed=0)
    assert info["action_mask"].sum() == 3 and info["action_mask"][-1]


def test_invalid_action_raises():
    env = EdgeUtilityEnv("tiny")
    env.reset(seed=0)
    for bad in (7, -1, "x", [0, 1]):
        with pytest.raises(ValueError):
            env.step(bad)


def test_fixed_instance_and_record_invariants():
    rng = np.random.default_rng(5)
    jobs = random_jobs(rng, J=15, S=3, cloud=True)
    env = EdgeUtilityEnv("tiny", instance=jobs, record=True)
    _, rewards, infos = _rollout(env, seed=0)
    assert sum(rewards) == pytest.approx(infos[-1]["episode_metrics"]["total_utility"])
    for k, srv in enumerate(env.sim.servers[:3]):
        seg = sorted(srv.segments)
        for (_s0, e0, _), (s1, _, _) in zip(seg, seg[1:], strict=False):
            assert s1 >= e0 - 1e-9
        for s, _e, j in seg:
            assert s >= jobs.release_s[j] + jobs.up_s[j, k] - 1e-9


def test_completed_info_carries_dispatch_step():
    env = EdgeUtilityEnv("tiny", info_details=True)
    _, _, infos = _rollout(env, seed=2)
    for step, info in enumerate(infos):
        for job, server, util, jrt, dispatch_step in info["completed"]:
            assert dispatch_step == job and dispatch_step <= step and util >= 0 and jrt > 0 and server >= 0


@pytest.mark.parametrize(
    "data,needle",
    [
        ({"name": "x", "bogus": 1}, "unknown key 'bogus'"),
        ({"name": "x", "servers": {"speedy": 1}}, "servers.speedy"),
        ({"name": "x", "workload": {"num_jobs": 0}}, "workload.num_jobs"),
        ({"name": "x", "scheduler": {"discipline": "lifo"}}, "scheduler.discipline"),
        ({"name": "x", "estimation": {"delta": 1.5}}, "estimation.delta"),
        ({"name": "x", "servers": {"edge_types": ["tpu"], "edge_counts": [1]}}, "servers.edge_types"),
        ({"name": "x", "network": {"edge_delay_ms": [5, 1]}}, "network.edge_delay_ms"),
        ({"name": "x", "scheduler": {"beta": 2}}, "scheduler.beta"),
        ({"name": ""}, "'name'"),
    ],
)
def test_config_validation_names_key_and_file(data, needle):
    with pytest.raises(ValueError) as e:
        utility_preset_from_dict(data, source="my.yaml")
    assert needle in str(e.value) and "my.yaml" in str(e.value)


def test_override_validation_and_roundtrip():
    p = load_utility_preset("testbed")
    assert p.env_id == "EdgeUtility-testbed-v0" and p.num_edge_servers == 20
    assert load_utility_preset("utility/testbed") == p
    assert utility_preset_from_dict(p.to_dict(), source=p.source_file) == p
    with pytest.raises(ValueError, match="workload.load_scale"):
        EdgeUtilityEnv("testbed", config={"workload": {"load_scale": -1}})
    with pytest.raises(ValueError, match="unknown section"):
        EdgeUtilityEnv("testbed", config={"cluster": {}})
    with pytest.raises(ValueError, match="unknown EdgeUtility preset"):
        load_utility_preset("nope")


def test_offline_fallback_when_trace_absent(tmp_path, monkeypatch):
    # a fresh machine: the default (window) table ships with the package, so no fallback there
    # (tests/utility/test_utility_shipped_trace.py); the 29-day summary table is not shipped: without it,
    # the generator, recorded in workload_source
    monkeypatch.setenv("EDGEGYM_TRACE_DIR", str(tmp_path))
    monkeypatch.setenv("EDGEGYM_NO_SHARED", "1")
    monkeypatch.setenv("EDGEGYM_CACHE", str(tmp_path / "cache"))
    shipped = EdgeUtilityEnv("testbed", config={"workload": {"num_jobs": 30}})
    shipped.reset(seed=0)
    assert shipped._workload_source == "google2011"
    summary = {"num_jobs": 30, "google_table": "summary"}
    env = EdgeUtilityEnv("testbed", config={"workload": summary})
    with pytest.warns(UserWarning, match="trace is absent"):
        env.reset(seed=0)
    assert env._workload_source.startswith("bursty")
    strict = EdgeUtilityEnv("testbed", config={"workload": {**summary, "offline_fallback": "none"}})
    with pytest.raises(FileNotFoundError):
        strict.reset(seed=0)
    # an explicit trace_dir never falls back (issue 14): a folder without the table fails at reset
    explicit = EdgeUtilityEnv("testbed", config={"workload": {"num_jobs": 30, "trace_dir": str(tmp_path)}})
    with pytest.raises(FileNotFoundError, match="google2011"):
        explicit.reset(seed=0)


def test_trace_release_times_are_bursty_and_rescaled(need_trace):
    need_trace("google_2011")
    env = EdgeUtilityEnv("testbed-paper-literal", config={"workload": {"num_jobs": 400}})
    env.reset(seed=0)
    r = env.jobs.release_s
    assert env._workload_source == "google2011"
    assert r[0] == 0 and np.all(np.diff(r) >= 0)
    w = env.preset.workload
    assert (r.size - 1) / r[-1] == pytest.approx(w.rate_per_s * w.load_scale)
    assert np.sum(np.diff(r) == 0) > 0  # simultaneous releases kept as bursts


def test_fixed_trace_window_is_reproducible_and_validated(need_trace):
    """``workload.window`` pins the Google 2011 window (held-out evaluation); out-of-range names the key."""
    import pytest as _pytest

    need_trace("google_2011", "google2011_jobs_window.csv.gz")
    from edgegym.families.edge_utility.env import EdgeUtilityEnv

    cfg = {"workload": {"window": 5000, "num_jobs": 50}}
    a = EdgeUtilityEnv("tiny", config={**cfg, "workload": {**cfg["workload"], "source": "google2011"}})
    b = EdgeUtilityEnv("tiny", config={**cfg, "workload": {**cfg["workload"], "source": "google2011"}})
    a.reset(seed=1)
    b.reset(seed=2)
    assert a.view().release_s == b.view().release_s  # same window whatever the seed
    bad = EdgeUtilityEnv("tiny", config={"workload": {"source": "google2011", "window": 10**9, "num_jobs": 50}})
    with _pytest.raises(ValueError, match="workload.window"):
        bad.reset(seed=0)
    with _pytest.raises(ValueError, match="workload.window"):
        EdgeUtilityEnv("tiny", config={"workload": {"window": -3}})


@pytest.mark.parametrize("credit", ["completion", "dispatch"])
def test_drain_return_credits_every_dispatched_job_once(credit):
    """``drain_return()`` runs the jobs already dispatched to completion with no further release: after it the
    return so far equals the total utility of the dispatched jobs, under either credit (dispatch credit's plans
    telescope away), every dispatched job is complete, and the episode is over."""
    env = gym.make("EdgeUtility-tiny-v0", config={"env": {"reward_credit": credit}})
    env.reset(seed=2)
    u = env.unwrapped
    for _ in range(u.jobs.num_jobs // 2):
        env.step(int(np.flatnonzero(u.action_masks())[0]))
    g = u.fork(seed=0, future="keep")
    before = g.episode_return
    extra = g.drain_return()
    dispatched = np.flatnonzero(g._decisions[: u._k] >= 0)
    assert g.sim.completed[dispatched].all()
    assert g.episode_return == pytest.approx(before + extra)
    assert g.episode_return * g.reward_scale == pytest.approx(float(g.sim.utility.sum()))
    assert g.drain_return() == 0.0
    with pytest.raises(RuntimeError, match="terminated"):
        g.step(0)
    assert u._k == u.jobs.num_jobs // 2  # the original is untouched
