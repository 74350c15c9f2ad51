"""Differential tests of HeteroML's leaner reset against the path it replaces.

* ``instance.build_instance`` with the preset's seed-independent tables cached (``instance._LEAN_BUILD = True``:
  the type tables, the one-worker demand table and a checked prototype cluster whose read-only type tables every
  episode's cluster shares, ``HeteroCluster._with_capacity``) against the full rebuild (``False``): 300 seeds of
  several presets, every field of the instance ``==`` (arrays by dtype, shape, bytes and writeability) and the
  generator left in the same state.
* ``HeteroJobs._fresh`` (``draw_jobs``'s arrays frozen in place, not copied) against the constructor: fields, the
  fallback for arrays that do not own their data, the same errors.
* ``HeteroMLEnv._lean_reset`` (the episode-independent arrays kept per env, the job scalars read with fewer Python
  conversions) together with the lean build against both off: whole random-legal episodes in lockstep (>= 1,000
  v1 steps: observations, masks, rewards, infos, episode metrics, the schedule ``==``), 300 resets' observations
  and job-scalar rows (values and Python types), and forks taken after a reset.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from edgegym.families.hetero_ml import instance as inst_mod
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.fork import fork
from edgegym.families.hetero_ml.presets import load_preset
from edgegym.families.hetero_ml.testing import lockstep_episode


class _Reference(HeteroMLEnv):
    """The env with every reset built and allocated as before (both flags off)."""

    _lean_reset = False

    def reset(self, *, seed=None, options=None):
        """:meth:`HeteroMLEnv.reset` with ``instance._LEAN_BUILD`` off."""
        old = inst_mod._LEAN_BUILD
        inst_mod._LEAN_BUILD = False
        try:
            return super().reset(seed=seed, options=options)
        finally:
            inst_mod._LEAN_BUILD = old


def _same_value(a, b, where):
    """``a == b`` field by field (dataclasses recursively; arrays by dtype, shape, bytes and writeability)."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            _same_value(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray):
        assert (a.dtype, a.shape, a.flags.writeable, a.flags.c_contiguous) == (
            b.dtype, b.shape, b.flags.writeable, b.flags.c_contiguous), where
        assert a.tobytes() == b.tobytes(), where
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), (where, a, b)


@pytest.mark.parametrize("preset", ["ps-v1", "ra-v1", "rl-hard-v1", "ps", "tiny-ra-v1"])
def test_lean_build_equals_the_rebuild(preset):
    p = load_preset(preset)
    old = inst_mod._LEAN_BUILD
    try:
        for seed in range(60):
            rng_new, rng_old = np.random.default_rng(seed), np.random.default_rng(seed)
            inst_mod._LEAN_BUILD = True
            a = inst_mod.build_instance(p, rng_new)
            inst_mod._LEAN_BUILD = False
            b = inst_mod.build_instance(p, rng_old)
            _same_value(a, b, preset)
            assert rng_new.bit_generator.state == rng_old.bit_generator.state
    finally:
        inst_mod._LEAN_BUILD = old
    e, z, zz, need, proto = inst_mod._preset_tables(p)
    assert proto is not None and not need.flags.writeable
    assert not proto.worker_res.flags.writeable and not proto.ps_res.flags.writeable
    assert a.cluster.worker_res is proto.worker_res  # shared, read-only


def test_with_capacity_falls_back_on_a_failing_capacity():
    p = load_preset("ps-v1")
    proto = inst_mod._preset_tables(p)[4]
    cap = np.ones((3, 4))
    assert proto._with_capacity(cap, (), (), ()) is not None
    cap[1, 2] = -1.0
    assert proto._with_capacity(cap, (), (), ()) is None  # the constructor then raises as before
    assert proto._with_capacity(np.ones((3, 3)), (), (), ()) is None
    assert proto._with_capacity(np.ones((3, 4), dtype=np.float32), (), (), ()) is None


def test_lean_reset_episodes_in_lockstep():
    steps = 0
    for preset, seed, jobs in (("ps-v1", 10, None), ("ps-v1", 11, None), ("ra-v1", 12, 80), ("rl-hard-v1", 13, 80),
                               ("ps-v1", 14, None), ("ps", 15, 60), ("ps-v1", 16, None), ("ps-v1", 17, None),
                               ("ps-v1", 18, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        n = lockstep_episode(HeteroMLEnv(preset, config=cfg), _Reference(preset, config=cfg), seed, invalid_every=13,
                             invalid_at=4)
        steps += n if preset.endswith("v1") else 0
    assert steps >= 1000, steps


def test_lean_resets_equal():
    new, ref = HeteroMLEnv("ps-v1"), _Reference("ps-v1")
    for seed in range(300):
        o_new, _ = new.reset(seed=seed)
        o_ref, _ = ref.reset(seed=seed)
        assert np.array_equal(o_new, o_ref), seed
        if seed % 10 == 0:
            rows_new, rows_ref = new._jsc[1], ref._jsc[1]
            assert rows_new == rows_ref
            assert [tuple(map(type, r)) for r in rows_new] == [tuple(map(type, r)) for r in rows_ref]
            assert new.np_random.bit_generator.state == ref.np_random.bit_generator.state
    # the kept arrays are the same objects across episodes (and the reference's are fresh)
    fr, buf = new._fracs, new._rows_buf
    new.reset(seed=1)
    ref_fr = ref._fracs
    ref.reset(seed=1)
    assert new._fracs is fr and new._rows_buf is buf and ref._fracs is not ref_fr


@pytest.mark.parametrize("future", ["keep", "resample"])
def test_forks_after_lean_resets(future):
    new, ref = HeteroMLEnv("ps-v1"), _Reference("ps-v1")
    for seed in (3, 4):
        new.reset(seed=seed)
        ref.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(5):
            a = int(rng.choice(np.flatnonzero(new.action_masks())))
            new.step(a)
            ref.step(a)
        f_new, f_ref = fork(new, seed=7, future=future), fork(ref, seed=7, future=future)
        for env_a, env_b in ((f_new, f_ref), (new, ref)):
            frng = np.random.default_rng(seed + 100)
            for _ in range(10):
                mask = env_a.action_masks()
                assert np.array_equal(mask, env_b.action_masks())
                a = int(frng.choice(np.flatnonzero(mask)))
                oa, ra, da, _, _ = env_a.step(a)
                ob, rb, db, _, _ = env_b.step(a)
                assert np.array_equal(oa, ob) and ra == rb and da == db
                if da:
                    break
        o1, _ = f_new.reset(seed=seed + 1)
        o2, _ = f_ref.reset(seed=seed + 1)
        assert np.array_equal(o1, o2)


def test_fresh_jobs_equal_the_constructor():
    from edgegym.families.hetero_ml.simulator import HeteroJobs

    rng = np.random.default_rng(0)

    def arrays(J=6, bad=None):
        a = dict(arrival=np.sort(rng.integers(1, 9, size=J)), weight=rng.uniform(1, 2, size=J),
                 epochs=rng.integers(1, 3, size=J), chunks=rng.integers(1, 3, size=J),
                 batches=rng.integers(1, 3, size=J), v=rng.uniform(0.1, 0.2, size=(J, 2)),
                 ps_update=rng.uniform(0, 1, size=(J, 3)), ra_update=rng.uniform(0, 1, size=J),
                 grad_mb=rng.uniform(0, 1, size=J))
        if bad:
            a[bad][1] = -1
        return a

    for _ in range(20):
        a = arrays()
        b = {k: v.copy() for k, v in a.items()}
        fresh, made = HeteroJobs._fresh(**a), HeteroJobs(**b)
        _same_value(fresh, made, "jobs")
        assert fresh.v is a["v"] and not a["v"].flags.writeable  # frozen in place
    view = arrays()
    view["v"] = np.ones((12, 2))[::2]  # not its own data: the constructor (a copy)
    assert HeteroJobs._fresh(**view).v is not view["v"]
    for bad in ("weight", "epochs", "ps_update"):
        with pytest.raises(ValueError) as e_fresh:
            HeteroJobs._fresh(**arrays(bad=bad))
        with pytest.raises(ValueError) as e_made:
            HeteroJobs(**arrays(bad=bad))
        assert str(e_fresh.value) == str(e_made.value)
