"""Differential tests of the EdgeUtility what-if kernels on raw item arrays (1,000 random item sets each, with
tied release times, tied and near-tied ready times within the 1e-15 s tolerance, items not yet ready, zero
remaining work): the once-sorted linked-list what-if of fifo/edf/srpt (compiled and as Python) against the heap
what-if. Identical completion orders and finish times are required (``==`` on floats). The whole-simulator
comparison with the pure Python servers is ``test_speed_edge_utility.py``."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.edge_utility import _kernels as K
from edgegym.families.edge_utility.testing import random_utility as _utility

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


def test_o4a_flat_job_set_is_updated_incrementally(monkeypatch):
    """An O4A server's flat job set (updated in place at each admit and completion) equals one rebuilt from its
    job objects after every step, and the compiled levels equal the pure ``levels()`` flattened (the server
    objects' compiled path: ``O4A_BANK`` off)."""
    from edgegym.families.edge_utility import simulator
    from edgegym.families.edge_utility.disciplines import O4AParams
    from edgegym.families.edge_utility.simulator import UtilityJobs, UtilitySimulator

    monkeypatch.setattr(simulator, "O4A_BANK", False)

    for seed in range(20):
        rng = np.random.default_rng(seed)
        J, S = 120, 2
        release = np.sort(rng.integers(0, 40, size=J)).astype(float) * 0.25
        p = rng.uniform(0.2, 2.0, size=(J, S))
        up = rng.uniform(0.0, 0.3, size=(J, S))
        jobs = UtilityJobs(release, p, up, up, p, up, up, tuple(_utility(rng) for _ in range(J)))
        sim = UtilitySimulator(jobs, S, False, "o4a", o4a=O4AParams(fallback=str(rng.choice(["density", "none"]))))
        for i in range(J):
            sim.advance_to(float(release[i]))
            sim.dispatch(i, int(rng.integers(S)))
            for srv in sim.servers:
                got = srv._fa
                if got is None:  # no job admitted yet
                    continue
                srv._fa = None
                srv._removed = -1
                srv._rebuild()  # full rebuild from the job objects
                for x, y in zip(got, srv._fa, strict=True):
                    np.testing.assert_array_equal(x, y)
                    assert x.dtype == y.dtype
                if srv.jobs:
                    lv = srv.levels()
                    lu, lptr, ls, le = K.o4a_levels(srv._fa[1], srv._fa[4], srv._fa[5], srv._fa[6])
                    np.testing.assert_array_equal(lu, [u for u, _, _ in lv])
                    np.testing.assert_array_equal(ls, [x for _, bs, _ in lv for x in bs])
                    np.testing.assert_array_equal(le, [x for _, _, be in lv for x in be])
                    np.testing.assert_array_equal(np.diff(lptr), [len(bs) for _, bs, _ in lv])
        sim.drain()


@pytest.mark.parametrize("disc", ["srpt", "hpu"])
def test_env_with_server_bank_pickles_mid_episode(disc):
    """An env whose priority servers live in the struct-of-arrays bank pickles mid-episode, and the copy continues
    with identical observations and rewards."""
    import pickle

    from edgegym.families.edge_utility.env import EdgeUtilityEnv

    env = EdgeUtilityEnv("testbed", config={"scheduler": {"discipline": disc}, "workload": {"num_jobs": 300},
                                             "env": {"obs_estimates": True}})
    env.reset(seed=3)
    assert env.sim._bank is not None
    rng = np.random.default_rng(0)
    for _ in range(120):
        env.step(int(rng.integers(env.num_edge_servers)))
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(180):
        a = int(rng.integers(env.num_edge_servers))
        o1, r1, t1, _, _ = env.step(a)
        o2, r2, t2, _, _ = clone.step(a)
        np.testing.assert_array_equal(o1, o2)
        assert r1 == r2 and t1 == t2
    assert t1 and env.episode_metrics()["objective"] == clone.episode_metrics()["objective"]
