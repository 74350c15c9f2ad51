"""WirelessUDL's one-call step with the next candidate table handed back as one int64 block
(``_kernels.commit_step_block``, ``WirelessUDLEnv._block_return``) against the three arrays of ``commit_step`` (the
flag off), identical (``==``), no tolerance.

* Lockstep over whole episodes of ``sim`` (v0), ``sim-v1`` and ``sim-hard`` (>= 1,000 decision states): the same
  observations, rewards, flags, infos (masks included), episode metrics and returns, with random legal actions, a
  masked action every 7th step (its table built from the block), NumPy integer actions, ``step_quiet`` +
  ``observe``; the candidate tables compared field by field every 3rd state (built from the block on first read).
* The block's layout: ``y`` its first rows, ``ti`` and ``tf``'s bits after them, the built table's fields its
  views; the eager table (``_lazy_table`` off) and the dispatcher path (``_direct_entry`` off) on the block; forks
  of a state whose block is unbuilt step as the reference's forks.
"""

from __future__ import annotations

import numpy as np

from edgegym.families.wireless_udl import _kernels as kn
from edgegym.families.wireless_udl.env import WirelessUDLEnv, _block_views
from edgegym.families.wireless_udl.testing import lockstep_run as _lockstep

JOBS = {"count": 70, "horizon_slots": 105, "arrival_window": [0, 104]}


def _pair(preset, **flags):
    """The env as it ships (with ``flags``) and the reference with ``_block_return`` off."""
    new = WirelessUDLEnv(preset, config={"jobs": JOBS})
    ref = WirelessUDLEnv(preset, config={"jobs": JOBS})
    ref._block_return = False
    for k, v in flags.items():
        setattr(new, k, v)
        setattr(ref, k, v)
    return new, ref


def test_block_return_lockstep_episodes():
    total = 0
    for preset in ("sim", "sim-v1", "sim-hard"):
        new, ref = _pair(preset)
        for seed in range(5):
            o1, i1 = new.reset(seed=seed)
            o2, i2 = ref.reset(seed=seed)
            np.testing.assert_array_equal(o1, o2)
            total += _lockstep(new, ref, np.random.default_rng(seed), f"{preset} seed {seed}")
            assert new._fast[7] is kn.commit_step_block and ref._fast[7] is kn.commit_step
    assert total >= 1000, total


def test_block_return_eager_table_and_entry_off():
    """The eager table built from the block (``_lazy_table`` off) and the dispatcher path (``_direct_entry`` off)."""
    total = 0
    for flags in ({"_lazy_table": False}, {"_direct_entry": False}):
        new, ref = _pair("sim-v1", **flags)
        for seed in (11, 12):
            new.reset(seed=seed)
            ref.reset(seed=seed)
            total += _lockstep(new, ref, np.random.default_rng(seed), f"{flags} seed {seed}")
    assert total >= 200, total


def test_block_layout_and_views():
    env = WirelessUDLEnv("sim", config={"jobs": JOBS})
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(6):
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    raw = env._raw
    assert raw is not None and raw[0] is None
    blk, mask = raw[1], raw[3]
    C, R = mask.shape[0], env.inst.num_sites
    assert blk.dtype == np.int64 and blk.flags.c_contiguous and blk.shape[1] == R and blk.shape[0] * R >= C * R + 10 * C
    ti, y, tf = _block_views(blk, C)
    assert raw[2] == C * R + 2 * C
    c = env._cand  # built from the block
    assert env._raw is None
    np.testing.assert_array_equal(c.y, y)
    assert c.y.shape == (C, R) and c.y.flags.c_contiguous and c.y.dtype == np.int64
    for j, f in enumerate(("mode", "N", "win", "start", "ps")):
        np.testing.assert_array_equal(getattr(c, f), ti[j])
        assert getattr(c, f).dtype == np.int64
    for j, f in enumerate(("transfer", "param", "latency", "total", "peak")):
        assert getattr(c, f).tobytes() == tf[j].tobytes()
        assert getattr(c, f).dtype == np.float64


def test_block_forks():
    n = 0
    for preset in ("sim", "sim-v1"):
        new, ref = _pair(preset)
        new.reset(seed=5)
        ref.reset(seed=5)
        rng = np.random.default_rng(5)
        n += _lockstep(new, ref, rng, f"{preset} head", steps=20)
        assert new._raw is not None and new._raw[0] is None  # the block, the table not built
        for future in ("keep", "resample"):
            f1, f2 = new.fork(seed=7, future=future), ref.fork(seed=7, future=future)
            n += _lockstep(f1, f2, np.random.default_rng(9), f"{preset} fork {future}")
        n += _lockstep(new, ref, rng, f"{preset} parent")
    assert n >= 100, n

