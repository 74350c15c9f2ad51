"""O4A / DO4A / OnDisc / Random on EdgeUtility: act through the action space; DO4A(k ≥ all, ℓ = 0) == O4A."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.baselines.edge_utility import OnDisc, upper_bound_total
from edgegym.agents.reference.o4a import DO4A, O4A
from edgegym.agents.registry import POLICIES, make_policy

import edgegym  # noqa: F401
from edgegym.families.edge_utility.env import EdgeUtilityEnv


def _episode(env, pol, seed=0):
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    actions, ret, done = [], 0.0, False
    while not done:
        a, _ = pol.predict(obs)
        assert env.action_space.contains(a) and env.unwrapped.action_masks()[a]
        actions.append(int(a))
        obs, r, done, _, info = env.step(a)
        ret += r
    return actions, ret, info["episode_metrics"]


@pytest.mark.parametrize("preset,seed", [("tiny", 0), ("tiny", 1), ("testbed", 2)])
def test_do4a_with_all_servers_equals_o4a(preset, seed):
    cfg = {"workload": {"num_jobs": 120}}
    e1 = EdgeUtilityEnv(preset, config=cfg)
    e2 = EdgeUtilityEnv(preset, config=cfg)
    a1, r1, _ = _episode(e1, O4A(e1), seed)
    a2, r2, _ = _episode(e2, DO4A(e2, k=e2.num_edge_servers), seed)
    assert a1 == a2 and r1 == r2


def test_do4a_small_k_only_uses_candidates():
    env = EdgeUtilityEnv("testbed", config={"workload": {"num_jobs": 80}})
    pol = DO4A(env, k=2)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        cand = set(env.do4a_candidates(2).tolist())
        a, _ = pol.predict(obs)
        assert a in cand
        obs, _, done, _, _ = env.step(a)
    assert pol.messages == 4 * 80


def test_o4a_picks_earliest_tentative_finish():
    env = EdgeUtilityEnv("tiny")
    env.reset(seed=4)
    pol = O4A(env)
    for _ in range(15):
        f = env.query_finish()
        a, _ = pol.predict(None)
        assert f[a] == f.min()
        env.step(a)


def test_ondisc_argmin_increase():
    env = gym.make("EdgeUtility-tiny-v0", config={"scheduler": {"discipline": "srpt"}})
    env.reset(seed=0)
    pol = OnDisc(env)
    for _ in range(10):
        inc = env.unwrapped.jrt_increase()
        a, _ = pol.predict(None)
        assert inc[a] == inc.min()
        env.step(a)


@pytest.mark.parametrize("name", ["o4a", "do4a", "ondisc", "random"])
def test_registered_policies_run_and_stay_below_upper_bound(name):
    spec = POLICIES[name]
    assert "EdgeUtility" in spec.families
    env = gym.make("EdgeUtility-testbed-v0", config={**spec.env_config, "workload": {"num_jobs": 150}})
    pol = make_policy(name, env, seed=0)
    _, ret, m = _episode(env, pol, seed=5)
    assert ret == pytest.approx(m["total_utility"], rel=1e-9)
    assert m["total_utility"] <= upper_bound_total(env) + 1e-9
    assert m["illegal_actions"] == 0


def test_o4a_beats_random_under_load():
    cfg = {"workload": {"num_jobs": 300, "load_scale": 4.0}}
    tot = {}
    for name in ("o4a", "random"):
        spec = POLICIES[name]
        env = gym.make("EdgeUtility-testbed-v0", config={**spec.env_config, **cfg})
        _, _, m = _episode(env, make_policy(name, env, seed=0), seed=11)
        tot[name] = m["total_utility"]
    assert tot["o4a"] > tot["random"]


def test_do4a_with_latency_runs():
    env = EdgeUtilityEnv("tiny", config={"env": {"dispatch_latency_s": 0.05}})
    _, ret, m = _episode(env, DO4A(env, k=2), seed=0)
    assert ret == pytest.approx(m["total_utility"]) and m["completed_jobs"] == 40
    with pytest.raises(ValueError):
        DO4A(env, k=0)


def test_upper_bound_matches_definition():
    env = EdgeUtilityEnv("tiny")
    env.reset(seed=0)
    j = env.jobs
    ub = sum(max(j.utilities[i](j.p_s[i, k] + j.up_s[i, k] + j.down_s[i, k]) for k in range(j.num_servers))
             for i in range(j.num_jobs))
    assert upper_bound_total(env) == pytest.approx(ub)
    assert np.isfinite(ub)
