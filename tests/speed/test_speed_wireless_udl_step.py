"""Differential tests of the WirelessUDL step's candidate-table shortcut (``candidates.SKIP_EQUAL_SLOT``, the
``skip_equal`` argument of ``_kernels.candidate_table``): where the free resources of the decision slot are the
capacities, the second tentative enumeration is skipped. Whole random-action episodes (v0, v1, the commit and
replan modes, WirelessUDL-sim-hard-v1, several seeds) give identical observations, masks, rewards and infos with the
shortcut on and off, and the kernel's outputs are identical on every state of those episodes and on random
calendars where ``cal[t] == cap`` and where one entry differs (``==``, no tolerance)."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.wireless_udl import _kernels as kn
from edgegym.families.wireless_udl import candidates
from edgegym.families.wireless_udl.env import WirelessUDLEnv

SHORT = {"count": 60, "horizon_slots": 80, "arrival_window": [0, 79]}
CASES = [  # (preset, config)
    ("sim", None),  # WirelessUDL-v0
    ("sim-v1", None),  # WirelessUDL-v1
    ("sim-hard-v1", None),  # WirelessUDL-sim-hard-v1
    ("sim", {"env": {"mode": "replan", "discipline": "okita"}, "jobs": SHORT}),
    ("sim-v1", {"env": {"mode": "replan", "discipline": "okita"}, "jobs": SHORT}),
]


def _same(a, b, where):
    """Exact equality of nested observations / infos (arrays: values and dtype)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for j, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{j}]")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
        assert np.asarray(a).dtype == np.asarray(b).dtype, where
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), f"{where}: {a!r} != {b!r}"


def _episode(preset, config, seed, skip):
    """One random-action episode (uniform legal action, ``rng`` seeded by ``seed``) with the shortcut ``skip``:
    the list of (observation, mask, reward, terminated, truncated, info)."""
    old = candidates.SKIP_EQUAL_SLOT
    candidates.SKIP_EQUAL_SLOT = skip
    try:
        env = WirelessUDLEnv(preset, config=config)
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        out = [(obs, env.action_masks(), 0.0, False, False, info)]
        while True:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, r, term, trunc, info = env.step(a)
            out.append((obs, env.action_masks(), r, term, trunc, info))
            if term or trunc:
                return out
    finally:
        candidates.SKIP_EQUAL_SLOT = old


@pytest.mark.parametrize("preset,config", CASES)
def test_episodes_identical(preset, config):
    for seed in (0, 1, 2):
        new = _episode(preset, config, seed, True)
        old = _episode(preset, config, seed, False)
        assert len(new) == len(old) > 1
        for s, (x, y) in enumerate(zip(new, old)):
            _same(x, y, f"{preset} {config} seed {seed} step {s}")


def _states(preset, seed, n=None):
    """The ``candidate_table`` arguments of every decision of a random-action episode (copies)."""
    got = []
    real = kn.candidate_table

    def spy(*args):
        got.append(tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args))
        return real(*args)

    kn.candidate_table = spy
    try:
        _episode(preset, None, seed, True)
    finally:
        kn.candidate_table = real
    return got[:n] if n else got


def _both(args):
    a = kn.candidate_table(*args[:39], True)
    b = kn.candidate_table(*args[:39], False)
    for j, (x, y) in enumerate(zip(a, b)):
        np.testing.assert_array_equal(x, y, err_msg=f"output {j}")
        assert np.asarray(x).dtype == np.asarray(y).dtype


def test_kernel_every_state_and_equal_slots_occur():
    equal = 0
    for preset in ("sim", "sim-v1"):
        for args in _states(preset, 0):
            cap, cal, t = args[0], args[16], args[17]
            equal += bool(np.array_equal(cal[t], cap))
            _both(args)
    assert equal > 0  # the shortcut was taken on some of these states


def test_kernel_random_calendars():
    """Random decision states with ``cal[t]`` set to the capacities (the shortcut), or to the capacities but one
    entry lowered, or a random mix of the two (the full enumeration), and the slots after ``t`` left as they are."""
    rng = np.random.default_rng(7)
    states = _states("sim-v1", 3, 60) + _states("sim-hard-v1", 4, 60)
    for args in states:
        cap, t = args[0], args[17]
        for variant in range(3):
            cal = args[16].copy()
            if variant == 0:
                cal[t] = cap
            elif variant == 1:
                cal[t] = cap
                r, k = rng.integers(cap.shape[0]), rng.integers(cap.shape[1])
                cal[t, r, k] = np.floor(cap[r, k] * rng.random())
            else:
                keep = rng.random(cap.shape[0]) < 0.7
                cal[t, keep] = cap[keep]
            lst = list(args)
            lst[16] = cal
            _both(tuple(lst))
