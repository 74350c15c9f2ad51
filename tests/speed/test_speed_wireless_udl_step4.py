"""WirelessUDL's one-call step with the candidate table kept as the kernel's blocks (``WirelessUDLEnv._lazy_table``)
and ``step``'s direct dispatch, against the eager table (the flag off), and with the kernel's compiled entry point
called directly (``_direct_entry``) against Numba's dispatcher (the flag off), identical (``==``), no tolerance.

* Lockstep over whole episodes of ``sim`` (v0), ``sim-v1`` and ``sim-hard`` (>= 1,000 decision states): the same
  observations, rewards, flags, infos (masks included), episode metrics and returns, with random legal actions, a
  masked action every 7th step, a NumPy integer action every 5th, ``step_quiet`` + ``observe`` every 11th; the
  candidate table (built from the blocks on first read) compared field by field every 3rd state, so that both
  the built and the unbuilt table are stepped from.
* Forks of a state whose table is unbuilt, and of one whose table is built, step as the eager env's forks.
* The same lockstep with the entry point on and off; the entry is looked up (and used) after a step, and arguments
  of types never compiled find no entry (the dispatcher is called for them).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.wireless_udl.env import WirelessUDLEnv, _commit_entry
from edgegym.families.wireless_udl.testing import assert_same_candidates
from edgegym.families.wireless_udl.testing import lockstep_run as _lockstep

JOBS = {"count": 70, "horizon_slots": 105, "arrival_window": [0, 104]}


def _pair(preset, flag: str = "_lazy_table"):
    """The env as it ships and the reference with ``flag`` off (forks inherit it)."""
    lazy = WirelessUDLEnv(preset, config={"jobs": JOBS})
    ref = WirelessUDLEnv(preset, config={"jobs": JOBS})
    setattr(ref, flag, False)
    return lazy, ref


def test_lazy_table_lockstep_episodes():
    total = 0
    for preset in ("sim", "sim-v1", "sim-hard"):
        lazy, ref = _pair(preset)
        for seed in range(5):
            o1, i1 = lazy.reset(seed=seed)
            o2, i2 = ref.reset(seed=seed)
            np.testing.assert_array_equal(o1, o2)
            total += _lockstep(lazy, ref, np.random.default_rng(seed), f"{preset} seed {seed}")
    assert total >= 1000, total


def test_lazy_table_forks():
    n = 0
    for preset in ("sim", "sim-v1"):
        lazy, ref = _pair(preset)
        lazy.reset(seed=3)
        ref.reset(seed=3)
        rng = np.random.default_rng(3)
        n += _lockstep(lazy, ref, rng, f"{preset} head", steps=20)
        assert lazy._raw is not None  # the table not built: the fork copies the blocks
        for built in (False, True):
            if built:
                assert_same_candidates(lazy._cand, ref._cand, preset)
                assert lazy._raw is None
            for future in ("keep", "resample"):
                f1, f2 = lazy.fork(seed=7, future=future), ref.fork(seed=7, future=future)
                n += _lockstep(f1, f2, np.random.default_rng(9), f"{preset} fork {future} built={built}")
        n += _lockstep(lazy, ref, rng, f"{preset} parent")  # the parent goes on after its forks
    assert n >= 200, n


def test_direct_entry_lockstep():
    total = 0
    for preset in ("sim", "sim-v1", "sim-hard"):
        env, ref = _pair(preset, "_direct_entry")
        for seed in range(5):
            o1, _ = env.reset(seed=seed)
            o2, _ = ref.reset(seed=seed)
            np.testing.assert_array_equal(o1, o2)
            total += _lockstep(env, ref, np.random.default_rng(seed), f"{preset} seed {seed}")
            assert env._fast[5][0] is not None and ref._fast[5][0] is None  # the entry was found and used
    assert total >= 1000, total


def test_entry_of_other_types():
    env = WirelessUDLEnv("sim", config={"jobs": JOBS})
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    args = env._fast[3]
    entry, y_fp, fp = _commit_entry(args, env.inst.cap.shape[0])
    assert entry is not None and fp(np.zeros(env.inst.cap.shape[0], np.int64)) == y_fp
    assert fp(np.zeros(env.inst.cap.shape[0], np.int32)) != y_fp  # a y of another dtype goes to the dispatcher
    other = (args[0].astype(np.float32), *args[1:])  # never compiled: no entry
    assert _commit_entry(other, env.inst.cap.shape[0]) == [None, None, None]
    assert _commit_entry(args, env.inst.cap.shape[0])[0] is entry  # looked up once
