"""Differential tests of HeteroML-v1's step shortcuts against the code they replace:

* ``_kernels._colocated_fits`` (a co-located configuration's test, the servers tried from a hint on) equals
  ``_kernels.fits`` on >= 1,000 random residuals (both answers, hints anywhere);
* ``_kernels._spread_fits_from`` (a spread configuration's test, the servers tried for its PSs from a hint on)
  equals ``_kernels.fits`` (status 0, 1 and 2) on >= 1,000 random residuals;
* ``_kernels._valid_by_duration`` (the valid configurations by duration, by insertion) equals the stable argsort
  with the invalid ones left out, and ``_kernels._next_end`` (the next candidate start from the unsorted ends)
  walks the sorted distinct ends, on >= 1,000 random cases each;
* whole random-legal episodes of the v1 presets on the compiled env equal the env with every compiled path replaced
  by the NumPy reference (``ReferenceEnv``): the observation (the per-action rows from the grid estimates), the
  action mask, the reward and the info of >= 1,000 steps, and the committed schedule.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_speed_hetero_ml import ReferenceEnv  # the oracle env (this folder is on the path under pytest)

from edgegym.families.hetero_ml import _kernels
from edgegym.families.hetero_ml.env import HeteroMLEnv


def _cluster():
    """HeteroML-v1's cluster tables (``env._kc``) and its sizes ``H, R, M, P``."""
    env = HeteroMLEnv("ps-v1")
    env.reset(seed=0)
    cap, wres, pres = env._kc[:3]
    return env._kc, (*cap.shape, wres.shape[0], pres.shape[0])


def _crowded(rng, cap):
    """A random residual of a crowded cluster: most servers nearly full, a few with room (both answers common)."""
    H, R = cap.shape
    room = rng.random((H, 1)) < rng.choice([0.0, 0.02, 0.1, 0.5])
    return cap * np.where(room, rng.random((H, R)), rng.random((H, R)) * 0.1)


def test_colocated_fits_equals_fits():
    (cap, wres, pres, wbw, pbw, cbar, ps_arch, lam), (H, R, M, P) = _cluster()
    rng = np.random.default_rng(11)
    seen = {0: 0, 1: 0}
    for case in range(1500):
        free = _crowded(rng, cap)
        m, p, n = int(rng.integers(0, M)), int(rng.integers(0, P)), int(rng.integers(1, 5))
        fmax = free.max(axis=0)
        hint = int(rng.integers(0, H))
        exp = _kernels.fits(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, False, False)
        got, nxt = _kernels._colocated_fits(free, wres, pres, ps_arch, m, p, n, fmax, hint, np.empty(R))
        assert got == exp, (case, m, p, n, hint)
        if got == 1:  # the next hint is a server that holds the configuration
            need = n * wres[m] + pres[p]
            assert np.all(free[nxt] + 1e-9 >= need), (case, nxt)
        else:
            assert nxt == hint
        seen[int(exp)] += 1
    assert sum(seen.values()) >= 1000 and seen[0] >= 100 and seen[1] >= 100, seen


def test_spread_fits_from_equals_fits():
    (cap, wres, pres, wbw, pbw, cbar, ps_arch, lam), (H, R, M, P) = _cluster()
    rng = np.random.default_rng(13)
    seen = {0: 0, 1: 0, 2: 0}
    for case in range(1500):
        free = _crowded(rng, cap)
        if case % 5 == 0:  # servers with equal rows: equal prices
            free[rng.integers(0, H, H // 3)] = free[int(rng.integers(0, H))]
        caps_hm = np.array([[_kernels._caps_of(free[h], wres[m], R) for m in range(M)] for h in range(H)])
        tot_m, cmax = caps_hm.sum(axis=0), np.maximum(caps_hm.max(axis=0), 0.0)
        m, p = int(rng.integers(0, M)), int(rng.integers(0, P))
        n = int(max(1, tot_m[m] - rng.integers(0, 2 + int(cmax[m]))))
        hint = int(rng.integers(0, H))
        exp = _kernels.fits(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, True, False)
        got, nxt = _kernels._spread_fits_from(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, caps_hm,
                                              tot_m, cmax, hint)
        assert got == exp, (case, m, p, n, hint)
        seen[int(exp)] += 1
    assert sum(seen.values()) >= 1000 and seen[0] >= 100 and seen[1] >= 100, seen


def test_valid_by_duration_and_next_end():
    rng = np.random.default_rng(12)
    for _ in range(1200):
        n = int(rng.integers(0, 100))
        cdd = rng.integers(1, int(rng.choice([3, 50, 5000])), n).astype(np.int64)  # many ties to few
        valid = rng.random(n) < rng.random()
        order, nv = _kernels._valid_by_duration(cdd, valid)
        exp = [c for c in np.argsort(cdd, kind="mergesort") if valid[c]]
        assert nv == len(exp) and order[:nv].tolist() == exp
        ends = rng.integers(0, int(rng.choice([5, 100, 3000])), int(rng.integers(0, 80))).astype(np.int64)
        t0 = int(rng.integers(0, 50))
        walk, t = [], t0
        while True:
            t = _kernels._next_end(ends, t)
            if t < 0:
                break
            walk.append(t)
        assert walk == sorted(set(ends[ends > t0].tolist()))


def _run_pair(preset, seed, jobs=None):
    """One random-legal episode on the compiled env and the reference env side by side: observations, masks,
    rewards, infos and the committed schedule equal. Returns the number of steps."""
    cfg = {"workload": {"num_jobs": jobs}} if jobs else None
    env, oracle = HeteroMLEnv(preset, config=cfg), ReferenceEnv(preset, config=cfg)
    obs, _ = env.reset(seed=seed)
    obs_r, _ = oracle.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps, done = 0, False
    while not done:
        np.testing.assert_array_equal(obs, obs_r, err_msg=f"{preset} seed {seed} job {env._k}")
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, oracle.action_masks(), err_msg=f"{preset} seed {seed} job {env._k}")
        a = int(rng.choice(np.flatnonzero(mask)))
        obs, r, done, _, info = env.step(a)
        obs_r, r_r, done_r, _, info_r = oracle.step(a)
        assert r == r_r and done == done_r and info == info_r, (preset, seed, info, info_r)
        steps += 1
    for name in ("start", "duration", "worker_type", "ps_type", "workers", "ps", "colocated"):
        np.testing.assert_array_equal(getattr(env.sim, name), getattr(oracle.sim, name), err_msg=name)
    return steps


@pytest.mark.slow  # ~25 s on a 2-core machine: deselected by default, run by CI (``-m slow``)
def test_v1_random_legal_steps_equal_reference():
    steps = 0
    for preset, seed, jobs in (("ps-v1", 0, None), ("rl-v1", 1, None), ("ra-v1", 2, 80), ("rl-hard-v1", 3, None),
                               ("ps-v1", 4, None), ("tiny-v1", 5, None), ("tiny-ra-v1", 6, None),
                               ("ps-v1", 7, None), ("rl-v1", 8, None), ("ps-v1", 9, None), ("ra-v1", 10, None),
                               ("ps-v1", 11, None)):
        steps += _run_pair(preset, seed, jobs)
        if steps >= 1000:
            break
    assert steps >= 1000, steps
