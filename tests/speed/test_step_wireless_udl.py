"""WirelessUDL's commit-mode step with the shared site order of the capacities (``candidates._job_table``), the
kernel's own "some row is legal" answer, the wait rows' window minima read slot by slot and the episode's cached
observation head: on >= 1,000 decision states of the full-size ``sim`` (``WirelessUDL-v0``) and ``sim-v1``
(``WirelessUDL-v1``) presets, jobs without data at some sites (the kernel computes their order), the re-plan mode with
the v1 worker-rule rows and forks, the compiled env and the numpy reference env (``_use_reference``) give the same
candidate tables, observations, masks, rewards, infos and episode metrics — identical (``==``), no tolerance."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from edgegym.families.wireless_udl import _reference as ref
from edgegym.families.wireless_udl.candidates import _job_table, _table
from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.instance import build_instance
from edgegym.families.wireless_udl.presets import load_preset
from edgegym.families.wireless_udl.testing import assert_same_candidates, assert_same_step, reference_pair


def _lockstep(e1: WirelessUDLEnv, e2: WirelessUDLEnv, rng, where: str, steps: int | None = None) -> int:
    """Step ``e1`` (compiled) and ``e2`` (reference) with the same random legal actions until the episode ends (or
    ``steps`` steps); the decision states compared."""
    states = 0
    o1, o2 = e1.observe(), e2.observe()
    while steps is None or states < steps:
        at = f"{where} job {e1._k}"
        np.testing.assert_array_equal(o1, o2, err_msg=at)
        assert o1.dtype == o2.dtype == np.float32
        np.testing.assert_array_equal(e1.action_masks(), e2.action_masks(), err_msg=at)
        if e1.mode == "commit":
            assert_same_candidates(e1._cand, e2._cand, at)
            np.testing.assert_array_equal(o1, ref.observation(e1), err_msg=at)
            c, legal = _table(e1.sim, e1._k, e1.G, e1.preset.env.wait_max_slots, e1.preset.env.prune_ratio)
            assert legal == bool(c.mask.any()) and legal, at
            assert_same_candidates(c, e1._cand, at)
        states += 1
        a = int(rng.choice(np.flatnonzero(e1.action_masks())))
        s1, s2 = e1.step(a), e2.step(a)
        assert_same_step(s1, s2, at)
        o1, o2 = s1[0], s2[0]
        if s1[2] or s1[3]:
            assert e1.episode_return() == e2.episode_return(), at
            break
    return states


def test_default_ids_match_reference_on_1000_states():
    """The presets of ``WirelessUDL-v0`` and ``-v1`` at full size (100 jobs, 50 sites), 6 episodes each."""
    rng = np.random.default_rng(21)
    states = 0
    for preset in ("sim", "sim-v1"):
        for seed in range(6):
            states += _lockstep(*reference_pair(preset, None, seed), rng, f"{preset} seed {seed}")
    assert states >= 1000


@pytest.mark.parametrize("preset", ["sim", "sim-v1", "testbed"])
def test_jobs_without_data_at_some_sites_match_reference(preset):
    """Jobs with no chunk at some site (a given instance: the presets draw at least one per site) do not share the
    capacities' site order: the kernel computes theirs."""
    rng = np.random.default_rng(22)
    cfg = {"jobs": {"count": 40, "horizon_slots": 60, "arrival_window": [0, 59]}}
    states = 0
    for seed in range(3):
        p = load_preset(preset).replace(**cfg)
        inst = build_instance(p, np.random.default_rng(seed))
        data = inst.data.copy()
        holes = rng.random(data.shape) < 0.3
        holes[::2] = False  # every other job keeps data everywhere (the shared order)
        holes[:, 0] = False  # at least one chunk per job
        data[holes] = 0
        inst = dataclasses.replace(inst, data=data)
        e1 = WirelessUDLEnv(p, instance=inst)
        e2 = WirelessUDLEnv(p, instance=inst)
        e2._use_reference = True
        e1.reset(seed=seed)
        e2.reset(seed=seed)
        orders = _job_table(e1.sim)[4]
        full = (inst.data > 0).all(axis=1)
        assert [o.size > 0 for o in orders] == full.tolist()
        assert full.any() and (~full).any()
        states += _lockstep(e1, e2, rng, f"{preset} seed {seed}")
    assert states >= 100


def test_v1_replan_rule_rows_match_reference():
    """The re-plan mode with the worker-rule action and the v1 rows (the observation's head cached per episode)."""
    rng = np.random.default_rng(23)
    cfg = {"jobs": {"count": 40, "horizon_slots": 60, "arrival_window": [0, 59]},
           "env": {"mode": "replan", "replan_workers": True}}
    states = 0
    for seed in range(3):
        e1, e2 = reference_pair("sim-v1", cfg, seed)
        assert e1._rule_rows
        states += _lockstep(e1, e2, rng, f"replan seed {seed}")
    assert states >= 100


def test_forks_match_reference_forks():
    """A fork mid-episode (the future kept or redrawn: a new instance, so a new job table) steps as the reference
    env's fork with the same seed."""
    rng = np.random.default_rng(24)
    states = 0
    for preset, future in (("sim", "keep"), ("sim-v1", "resample"), ("sim-v1", "keep"), ("sim", "resample")):
        e1, e2 = reference_pair(preset, {"jobs": {"count": 50, "horizon_slots": 75, "arrival_window": [0, 74]}}, 5)
        states += _lockstep(e1, e2, rng, f"{preset} before the fork", steps=20)
        f1, f2 = e1.fork(seed=3, future=future), e2.fork(seed=3, future=future)
        f2._use_reference = True
        states += _lockstep(f1, f2, np.random.default_rng(25), f"{preset} fork {future}")
        states += _lockstep(e1, e2, rng, f"{preset} after the fork")  # the parents are untouched
    assert states >= 200
