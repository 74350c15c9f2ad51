"""Differential tests of the HeteroML earliest-start search's shortcuts against the code they replace:

* ``_kernels._breakpoints`` (the servers' breakpoints by time, a stable counting sort when they span up to a few
  thousand slots) equals the stable argsort of every breakpoint, on >= 1,000 random profiles (narrow and wide
  spans);
* ``_kernels._spread_fits_cached`` (a spread configuration with a PS, given the residual's per-server worker
  capacities) equals ``_kernels.fits`` (status 0, 1 and 2) on >= 1,000 random residuals, the PS-server price stage
  included;
* ``_advance.earliest_choice`` (``earliest``'s action with the residual reset only on the servers that changed)
  equals the argmin of ``HeteroMLEnv.grid_estimates`` (the estimates the ``earliest`` policy reads) on >= 1,000
  decision states of random-legal and ``earliest`` episodes of HeteroML-v0, -v1, -rl-hard-v1 and a Ring-AllReduce
  preset (its estimated start and duration too).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.hetero_ml import _advance, _kernels
from edgegym.families.hetero_ml.env import HeteroMLEnv


def _profiles(rng, H, R, span):
    """Random server profiles in ``server_profiles``'s CSR layout (each server's times sorted and distinct, from a
    common first slot; the rows are random)."""
    cnt = rng.integers(1, 6, H)
    pp = np.zeros(H + 1, dtype=np.int64)
    pp[1:] = np.cumsum(cnt)
    times = np.empty(pp[H], dtype=np.int64)
    now = int(rng.integers(0, 50))
    for h in range(H):
        later = np.sort(rng.choice(np.arange(now + 1, now + 1 + span), size=cnt[h] - 1, replace=False))
        times[pp[h]:pp[h + 1]] = np.concatenate(([now], later))
    return pp, cnt.astype(np.int64), times, rng.random((pp[H], R))


def test_breakpoints_equal_stable_sort():
    rng = np.random.default_rng(5)
    cases = 0
    for _ in range(1200):
        H = int(rng.integers(1, 40))
        # few slots to a few thousand (the counting sort) and a wide span (the sort)
        span = int(rng.choice([8, 60, 400, 3_000, 100_000]))
        pp, cnt, times, _ = _profiles(rng, H, 4, span)
        ev_t = np.concatenate([times[pp[h] + 1:pp[h] + cnt[h]] for h in range(H)])
        ev_i = np.concatenate([np.arange(pp[h] + 1, pp[h] + cnt[h]) for h in range(H)])
        ev_h = np.concatenate([np.full(cnt[h] - 1, h) for h in range(H)])
        order = np.argsort(ev_t, kind="mergesort")
        got = _kernels._breakpoints(H, pp, cnt, times)
        for g, e in zip(got, (ev_t[order], ev_i[order], ev_h[order]), strict=True):
            np.testing.assert_array_equal(g, e)
        cases += 1
    assert cases >= 1000


def _caps(free, e):
    """Each server's worker capacity (``_caps_of`` per row) and their sum."""
    caps = np.array([_kernels._caps_of(free[h], e, free.shape[1]) for h in range(free.shape[0])])
    return caps, float(caps.sum())


def test_spread_fits_cached_equals_fits():
    env = HeteroMLEnv("ps-v1")
    env.reset(seed=0)
    cap, wres, pres, wbw, pbw, cbar, ps_arch, lam = env._kc
    H, R = cap.shape
    M, P = wres.shape[0], pres.shape[0]
    rng = np.random.default_rng(7)
    seen = {0: 0, 1: 0, 2: 0}
    for case in range(1500):
        # a crowded cluster (most servers nearly full, a few with room): totals near n, where the PS server's
        # loss decides (about 100 of these cases reach the price stage)
        room = rng.random((H, 1)) < rng.choice([0.05, 0.2, 0.5])
        free = cap * np.where(room, rng.random((H, R)), rng.random((H, R)) * 0.05)
        if case % 5 == 0:  # servers with equal rows: equal prices
            free[rng.integers(0, H, H // 3)] = free[int(rng.integers(0, H))]
        m, p = int(rng.integers(0, M)), int(rng.integers(0, P))
        caps_m, tot = _caps(free, wres[m])
        caps_hm = np.zeros((H, M))
        caps_hm[:, m] = caps_m
        n = int(max(1, tot - rng.integers(0, 1 + int(caps_m.max(initial=0)))))  # tot - cmax <= n: fits's search
        kk = max(1.0, np.ceil(n * wbw[m] / pbw[p] - 1e-9))
        got = _kernels._spread_fits_cached(free, cap, wres, pres, cbar, lam, m, p, n, kk, caps_hm, tot)
        exp = _kernels.fits(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, True, False)
        assert got == exp, (case, m, p, n)
        seen[int(exp)] += 1
    assert sum(seen.values()) >= 1000 and seen[0] >= 100 and seen[1] >= 100, seen


def _expected_choice(env):
    """``earliest``'s choice from the grid estimates: (action, start, duration), or None where no valid action
    without delay has an estimate (the env's per-action search decides there)."""
    start, dur = env.grid_estimates()
    mask = env.action_masks()
    di = np.unravel_index(np.arange(env.n_grid), env.grid_shape)[3]
    ok = mask & (start >= 0) & (di == 0)
    if not ok.any():
        return None
    a = int(np.argmin(np.where(ok, start + dur, np.iinfo(np.int64).max)))
    return a, int(start[a]), int(dur[a])


def test_earliest_choice_equals_grid_estimates_argmin():
    rng = np.random.default_rng(9)
    states = ambiguous = 0
    for preset, jobs, seeds in (("ps-v1", None, (0, 1, 2, 3, 4)), ("rl-hard-v1", None, (0, 1)),
                                ("ps", None, (3,)), ("ra-v1", 60, (0, 1))):
        env = HeteroMLEnv(preset, config={"workload": {"num_jobs": jobs}} if jobs else None)
        for seed in seeds:
            env.reset(seed=seed)
            random_play = seed % 2 == 0
            done = False
            while not done:
                k, kc, rec = env._k, env._kc, env._rec()
                now = env._decision_time(k)
                prof = _kernels.server_profiles(k, now, rec, kc[1], kc[2], kc[6], env.H, env.R)
                m4, n4, q4, p4 = env._job_cfg()
                _, _, _, _, grad, ra, _, W, _ = env._job_scalars(k)
                jb = env.jobs
                # the env's own cache of residual rows (shared with the estimates: both keep it consistent)
                st, a, t, d = _advance.earliest_choice(
                    rec, k, *kc, W, jb.v[k], jb.ps_update[k], ra, grad, now, env._delays, m4, n4, q4, p4,
                    env.action_masks(), env._est_free, env._est_caps, *prof)
                exp = _expected_choice(env)
                if st == 2:
                    ambiguous += 1
                elif exp is None:
                    assert st == 0, (preset, seed, k)
                else:
                    assert st == 1 and (a, t, d) == exp, (preset, seed, k, (a, t, d), exp)
                states += 1
                if random_play and rng.random() < 0.7:
                    act = int(rng.choice(np.flatnonzero(env.action_masks())))
                else:
                    act = exp[0] if exp is not None else int(np.flatnonzero(env.action_masks())[0])
                _, _, done, _, _ = env.step(act)
    assert states >= 1000 and ambiguous < states // 10, (states, ambiguous)
