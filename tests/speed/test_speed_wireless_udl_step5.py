"""WirelessUDL's one-call step with the chosen row read by one ``tolist`` (``WirelessUDLEnv._row_list``),
``param_slot`` by ``ndarray.dot`` and Python floats (``_dot_method``) and the fingerprint of the kernel's rows of
``y`` checked once per compiled entry (``_row_types``), against the reference with the three flags off, identical
(``==``), no tolerance.

* Lockstep over whole episodes of ``sim`` (v0), ``sim-v1`` and ``sim-hard`` (>= 1,000 decision states, by
  ``edgegym.families.wireless_udl.testing.lockstep_run``: masked, NumPy-integer and ``step_quiet`` actions, the
  table built every 3rd state so that both the kernel's rows and the built table's are stepped from), and forks.
* ``param_slot``'s two expressions on every legal row of every table met (>= 10,000 rows), ``==``.
* The fingerprint cache: after a few steps it holds the answer for the entry in use, and that answer is the one
  computed from a kernel row.
"""

from __future__ import annotations

import numpy as np

from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.testing import lockstep_run as _lockstep

JOBS = {"count": 70, "horizon_slots": 105, "arrival_window": [0, 104]}

FLAGS = ("_row_list", "_dot_method", "_row_types")


def _pair(preset):
    """The env as it ships and the reference with the three flags off (forks inherit them)."""
    env = WirelessUDLEnv(preset, config={"jobs": JOBS})
    ref = WirelessUDLEnv(preset, config={"jobs": JOBS})
    for f in FLAGS:
        setattr(ref, f, False)
    return env, ref


def test_row_reads_lockstep_episodes():
    total = 0
    for preset in ("sim", "sim-v1", "sim-hard"):
        env, ref = _pair(preset)
        for seed in range(5):
            o1, _ = env.reset(seed=seed)
            o2, _ = ref.reset(seed=seed)
            np.testing.assert_array_equal(o1, o2)
            total += _lockstep(env, ref, np.random.default_rng(seed), f"{preset} seed {seed}")
    assert total >= 1000, total


def test_row_reads_forks():
    n = 0
    for preset in ("sim", "sim-v1"):
        env, ref = _pair(preset)
        env.reset(seed=4)
        ref.reset(seed=4)
        rng = np.random.default_rng(4)
        n += _lockstep(env, ref, rng, f"{preset} head", steps=15)
        for future in ("keep", "resample"):
            f1, f2 = env.fork(seed=5, future=future), ref.fork(seed=5, future=future)
            n += _lockstep(f1, f2, np.random.default_rng(6), f"{preset} fork {future}")
        n += _lockstep(env, ref, rng, f"{preset} parent")
    assert n >= 200, n


def test_param_slot_expressions_equal():
    rows = 0
    for preset in ("sim", "sim-v1", "sim-hard"):
        env = WirelessUDLEnv(preset, config={"jobs": JOBS})
        for seed in range(6):
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            done = False
            while not done:
                c, i, inst = env._cand, env._k, env.sim.inst
                for a in np.flatnonzero(c.mask):
                    y, ps = c.y[a], int(c.ps[a])
                    ref = float(inst.param_mb[i] * np.dot(inst.q[:, ps], y))
                    new = float(inst.param_mb[i]) * float(inst.q[:, ps].dot(y))
                    assert new == ref, (preset, seed, i, a)
                    rows += 1
                _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(c.mask))))
                done = term or trunc
    assert rows >= 10_000, rows


def test_fingerprint_cache():
    env = WirelessUDLEnv("sim", config={"jobs": JOBS})
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    fa = env._fast
    entry = fa[5]
    assert entry[0] is not None
    assert fa[6][1] is entry[0] and fa[6][0] is True
    assert entry[2](env._raw[1][0]) == entry[1]  # a kernel row has the entry's fingerprint
