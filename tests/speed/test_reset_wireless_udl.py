"""WirelessUDL's reset releases the previous episode's simulator before it builds the next one (its calendar's memory
is reused instead of fresh pages), and nothing else changes: one env reset from episode to episode gives, on
>= 1,000 decision states of ``sim`` (v0), ``sim-v1``, the re-plan mode and ``sim-hard``, the same observations,
rewards, masks, infos and episode metrics as a new env per episode running the numpy reference
(``_use_reference``) — identical (``==``), no tolerance."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

from edgegym.families.wireless_udl import env as env_mod
from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.testing import assert_same_step

JOBS = {"count": 70, "horizon_slots": 105, "arrival_window": [0, 104]}  # the sim presets' arrival rate
CASES = [("sim", {}), ("sim-v1", {}), ("sim", {"env": {"mode": "replan"}}), ("sim-hard", {})]


def _episode(reused: WirelessUDLEnv, preset, config, seed, rng) -> int:
    """One episode of ``reused`` (reset again) against a new env on the reference path; the states compared."""
    oracle = WirelessUDLEnv(preset, config=config)
    oracle._use_reference = True
    o1, i1 = reused.reset(seed=seed)
    o2, i2 = oracle.reset(seed=seed)
    states = 0
    while True:
        where = f"{preset} {config} seed {seed} job {reused._k}"
        np.testing.assert_array_equal(o1, o2, err_msg=where)
        np.testing.assert_array_equal(i1["action_mask"], i2["action_mask"], err_msg=where)
        states += 1
        a = int(rng.choice(np.flatnonzero(reused.action_masks())))
        s1, s2 = reused.step(a), oracle.step(a)
        assert_same_step(s1, s2, where)
        (o1, _, t1, tr1, i1), (o2, *_, i2) = s1, s2
        if t1 or tr1:
            assert reused.episode_return() == oracle.episode_return(), where
            return states


def test_reset_again_matches_a_new_reference_env_on_1000_states():
    rng = np.random.default_rng(7)
    states = 0
    for preset, extra in CASES:
        config = {**extra, "jobs": JOBS}
        env = WirelessUDLEnv(preset, config=config)
        for seed in range(4):
            states += _episode(env, preset, config, seed, rng)
    assert states >= 1000


@pytest.mark.parametrize("mode", ["commit", "replan"])
def test_reset_releases_the_previous_simulator_before_building_the_next(monkeypatch, mode):
    env = WirelessUDLEnv("tiny", config={"env": {"mode": mode}})
    env.reset(seed=0)
    old = weakref.ref(env.sim)
    seen = []
    real = env_mod.Simulator

    def spy(*args, **kwargs):
        seen.append(old())
        return real(*args, **kwargs)

    monkeypatch.setattr(env_mod, "Simulator", spy)
    env.reset(seed=1)
    assert seen == [None]  # gone when the next one was built


def test_reset_leaves_a_simulator_the_caller_holds_untouched():
    env = WirelessUDLEnv("tiny")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    held = env.sim
    cal = held.cal.copy()
    env.reset(seed=1)
    assert env.sim is not held
    np.testing.assert_array_equal(held.cal, cal)
