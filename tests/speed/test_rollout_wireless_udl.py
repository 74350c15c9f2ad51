"""WirelessUDL's rollout fast path against the ordinary one kept as the oracle.

* ``step_quiet`` + ``observe`` against ``step`` (the rollout contract): the same rewards (``==``), flags and
  observations, in the commit mode, the plain re-plan mode and the re-plan mode with the worker-rule rows;
* ``advance_constant`` (the loop of ``okita`` = ``NoOpPolicy`` and ``okita-one`` = ``OkitaRule``) against ``act`` +
  ``step``: the same total (summed in order), the same state, never the episode's last step;
* the rollout teacher's decisions over Okita with and without the fast paths on more than 1,000 states.
"""

from __future__ import annotations

import numpy as np
import pytest
from edgegym.agents.policy import NoOpPolicy, Policy
from edgegym.agents.runner import policy_actions
from edgegym.agents.reference.wireless_udl import OkitaRule

from edgegym.families.wireless_udl.env import WirelessUDLEnv

RULES = {"mode": "replan", "discipline": "okita", "replan_workers": True}
MODES = [("sim-hard-v1", RULES), ("testbed-v1", RULES), ("testbed-v1", {"mode": "replan", "discipline": "okita"}),
         ("testbed-v1", {"mode": "commit"})]


def _legal(env, rng) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


@pytest.mark.parametrize(("preset", "cfg"), MODES)
def test_step_quiet_and_observe_equal_step(preset, cfg):
    a = WirelessUDLEnv(preset, config={"env": cfg})
    b = WirelessUDLEnv(preset, config={"env": cfg})
    for seed in (0, 1):
        oa, _ = a.reset(seed=seed)
        ob, _ = b.reset(seed=seed)
        np.testing.assert_array_equal(oa, b.observe())
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            act = _legal(a, rng)
            oa, ra, ta, ua, _ = a.step(act)
            rb, tb, ub = b.step_quiet(act)
            assert (ra, ta, ua) == (rb, tb, ub)
            np.testing.assert_array_equal(oa, b.observe())
            np.testing.assert_array_equal(a.action_masks(), b.action_masks())
            done = ta or ua
        assert a.episode_metrics() == b.episode_metrics()


@pytest.mark.parametrize("rule", [0, 1, 3])
def test_advance_constant_equals_stepping(rule):
    for steps in (None, 1, 7):
        a = WirelessUDLEnv("sim-hard-v1", config={"env": RULES})
        b = WirelessUDLEnv("sim-hard-v1", config={"env": RULES})
        a.reset(seed=5)
        b.reset(seed=5)
        for _ in range(10):  # start mid-episode
            a.step(rule)
            b.step(rule)
        total, n = 0.25, 0
        while (steps is None or n < steps) and a._k < a.inst.num_jobs - 1:
            _, r, term, trunc, _ = a.step(rule)
            assert not (term or trunc)
            total += float(r)
            n += 1
        obs, m, fast_total = b.advance_constant(rule, steps, 0.25)
        assert obs is None and m == n and fast_total == total
        assert b._k == a._k and b.sim.status.tolist() == a.sim.status.tolist()
        np.testing.assert_array_equal(a.observe(), b.observe())
        assert a.episode_metrics() == b.episode_metrics()
        if steps is None:
            assert b._k == b.inst.num_jobs - 1  # stopped before the last job's step


def test_constant_policies_take_the_env_loop():
    env = WirelessUDLEnv("testbed-v1", config={"env": RULES})
    env.reset(seed=0)
    assert NoOpPolicy(env).advance(2, 0.0)[1] == 2
    assert OkitaRule(env, "one").advance(2, 0.0)[1] == 2
    assert env._k == 4


def _decisions(preset, seeds, fast: bool) -> list:
    """Every decision of ``rollout(K=2,H=10,D=1):okita`` on the preset's v1 id, with or without the fast paths."""
    saved = {cls: vars(cls)["advance"] for cls in (NoOpPolicy, OkitaRule)}
    try:
        if not fast:
            for cls in saved:
                cls.advance = Policy.advance
        return policy_actions(f"WirelessUDL-{preset}", "rollout(K=2,H=10,D=1):okita", seeds)[0]
    finally:
        for cls, fn in saved.items():
            cls.advance = fn


@pytest.mark.slow  # ~70 s on a 2-core machine: deselected by default, run by CI (``-m slow``)
def test_rollout_over_okita_same_decisions_with_and_without_the_fast_path():
    """More than 1,000 decisions of ``rollout(K=2,H=10,D=1):okita`` on the testbed (10 jobs per episode)."""
    seeds = range(105)
    fast = _decisions("testbed-v1", seeds, True)
    slow = _decisions("testbed-v1", seeds, False)
    assert len(fast) >= 1000
    assert fast == slow
    assert any(a != 0 for a in fast)  # rollout departs from Okita's own rule somewhere
