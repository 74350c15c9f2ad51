"""Differential tests of the EdgeUtility what-if kernels on raw item arrays (1,000 random item sets each, with
tied release times, tied and near-tied ready times within the 1e-15 s tolerance, items not yet ready, zero
remaining work): the once-sorted linked-list what-if of fifo/edf/srpt (compiled and as Python) against the heap
what-if. Identical completion orders and finish times are required (``==`` on floats). The whole-simulator
comparison with the pure Python servers is ``test_speed_edge_utility.py``."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.edge_utility import _kernels as K
from edgegym.families.edge_utility.utility_fn import aon, constant, linear, sigmoid, step

N_SETS = 1000


def _items(rng):
    n = int(rng.integers(1, 40))
    ids = rng.permutation(np.arange(n) * 3 + int(rng.integers(0, 5))).astype(np.int64)
    r = np.round(rng.uniform(0, 3, n), int(rng.integers(0, 3)))  # rounding makes ties
    now = float(rng.uniform(0, 4))
    a = np.where(rng.random(n) < 0.6, now - rng.uniform(0, 1, n), now + np.round(rng.uniform(0, 2, n), 1))
    fz = rng.random(n) < 0.1
    a[fz] = now + 1e-16 * rng.integers(1, 20, fz.sum())  # pushed within the tolerance before they are ready
    rem = np.where(rng.random(n) < 0.05, 0.0, rng.uniform(0.01, 1.0, n))
    down = rng.uniform(0, 0.2, n)
    key = np.where(rng.random(n) < 0.3, r, r + np.round(rng.uniform(0, 2, n), 1))  # EDF keys, some tied
    return now, ids, r, a, rem, down, key


def _utility(rng):
    f = int(rng.integers(6))
    if f == 0:
        return linear(rng.uniform(1, 5), rng.uniform(5, 20))
    if f == 1:
        return aon(rng.uniform(1, 100), rng.uniform(0.5, 5), inclusive=bool(rng.random() < 0.3))
    if f == 2:
        return sigmoid(rng.uniform(1, 10), rng.uniform(50, 100), rng.uniform(0.5, 5))
    if f == 3:
        return constant(rng.uniform(0, 10))
    if f == 4:
        br = np.cumsum(rng.uniform(0.2, 2, size=int(rng.integers(1, 4))))
        return step(br, np.sort(rng.uniform(0, 10, size=br.size + 1))[::-1])
    return sigmoid(rng.uniform(200, 400), 10.0, 0.1)  # saturating exponent (x > 700 branch)


@pytest.mark.parametrize("disc", [K.FIFO, K.EDF, K.SRPT])
def test_ordered_whatif_matches_heap(disc):
    rng = np.random.default_rng(disc)
    for seed in range(N_SETS):
        now, ids, r, a, rem, down, key = _items(rng)
        s = float(rng.choice([1.0, 1.02]))
        stop = int(rng.integers(-1, ids.size)) if seed % 2 else -1
        for run in (lambda *x: K._whatif_ordered(*x), lambda *x: K._whatif_ordered.py_func(*x)):
            oa, fa = run(disc, now, s, ids, r, a, rem, down, key, stop)
            ob, fb = K._whatif_static(disc, now, s, ids, r, a, rem, down, key, stop)
            np.testing.assert_array_equal(oa, ob, err_msg=f"set {seed} order")
            np.testing.assert_array_equal(fa, fb, err_msg=f"set {seed} finish")


@pytest.mark.parametrize("disc", [K.HPU, K.HRDF])
def test_lazy_whatif_matches_scan(disc, monkeypatch):
    """hpu/hrdf: the lazily refreshed heap (inline heap, scalar keys) against the plain scan per event."""
    rng = np.random.default_rng(10 + disc)
    monkeypatch.setattr(K, "LAZY", False)  # the Python-mode whatif below takes the scan branch
    for seed in range(N_SETS):
        now, ids, r, a, rem, down, key = _items(rng)
        utab = K.utility_table([_utility(rng) for _ in range(int(ids.max()) + 1)])
        s = float(rng.choice([1.0, 1.02]))
        stop = int(rng.integers(-1, ids.size)) if seed % 2 else -1
        oa, fa = K._whatif_lazy(disc, now, s, ids, r, a, rem, down, key, stop, *utab)
        ob, fb = K.whatif.py_func(disc, now, s, ids, r, a, rem, down, key, stop, *utab)
        np.testing.assert_array_equal(oa, ob, err_msg=f"set {seed} order")
        np.testing.assert_array_equal(fa, fb, err_msg=f"set {seed} finish")
