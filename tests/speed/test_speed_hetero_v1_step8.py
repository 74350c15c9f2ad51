"""Differential tests of HeteroML's eighth round of compiled-step shortcuts against the code they replace.

* The observation's lookahead bins (``_kernels._lookahead``: aggregates started at -0.0 instead of an ``if h == 0``
  store, host counts of servers with pieces inside the lookahead added as differences) against the previous
  version kept as ``_lookahead_ref`` (``lookahead_cached_ref``, ``lookahead_profiles_ref``): every decision state of
  random-legal episodes of the v1 presets, at the decision time and a later slot, each cache carried along its
  episode (outputs and caches compared byte for byte), and random hand-made profiles with signed zeros, zero
  capacities, ties and NaN usage; with no server both raise.
* The servers' breakpoints by time (``_kernels._breakpoints``: a two-pass radix sort when they span fewer than
  4,096 slots) against the counting sort / stable sort kept as ``_breakpoints_ref``: on the same v1 decision
  states and on 3,000 random profiles with spans on both sides of 4,096 slots, ties across servers included.
* The v1 action rows with each configuration's resource share computed once for its delays
  (``_kernels.action_rows``) against ``action_rows_ref`` (computed per action), on the same decision states.
* The grid configurations with the spread PS types' values cached for the episode (``_kernels.job_grid_cached``
  with the env's ``_vcache``, what the packed step runs) against ``job_grid`` without the cache and
  ``job_grid_ref``: every decision state of v1 episodes (PS and RA presets, several jobs' counts), the cache carried
  along the episode; the packed step against the full argument list (no cache) in lockstep over whole episodes.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.hetero_ml import _kernels
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.testing import lockstep_episode


def _bytes_equal(a, b, msg):
    """``a`` and ``b`` hold the same bytes (signed zeros and NaN payloads included)."""
    assert a.dtype == b.dtype and a.shape == b.shape, msg
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg=msg)


def _episode_states(preset, seed, jobs=None):
    """Yield ``(env, first)`` at every decision state of one random-legal episode of ``preset``."""
    cfg = {"workload": {"num_jobs": jobs}} if jobs else None
    env = HeteroMLEnv(preset, config=cfg)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    first = True
    while True:
        yield env, first
        first = False
        valid = np.flatnonzero(env.action_masks())
        _, _, term, trunc, _ = env.step(int(valid[rng.integers(valid.size)]))
        if term or trunc:
            return


def _caches(H, R, M):
    """A fresh lookahead cache (NaN rows: nothing cached yet)."""
    return [np.full((H, R), np.nan), np.zeros((H, R)), np.zeros((H, M), dtype=bool)]


def test_lookahead_equals_reference_on_episodes():
    """``lookahead_cached`` and ``lookahead_profiles`` == their references (``_lookahead_ref``) on >= 1,000
    decision states of v1 episodes, at the decision time and at a later slot, caches carried per episode; the
    breakpoints of the same profiles == ``_breakpoints_ref``'s."""
    cases = 0
    for preset, seed, jobs in (("ps-v1", 801, None), ("rl-v1", 802, 80), ("ra-v1", 803, 60), ("tiny-v1", 804, None),
                               ("rl-hard-v1", 805, 80), ("ps-v1", 806, None), ("tiny-ra-v1", 807, None)):
        rng = np.random.default_rng(seed)
        for env, first in _episode_states(preset, seed, jobs):
            if first:
                new_c, ref_c = _caches(env.H, env.R, env.M), _caches(env.H, env.R, env.M)
            k, kc, rec = env._k, env._kc, env._rec()
            now = env._decision_time(k)
            nb = _kernels.N_BINS * (2 * env.R + env.M)
            for t in (now, now + int(rng.integers(1, 80))):
                prof = _kernels.server_profiles(k, t, rec, kc[1], kc[2], kc[6], env.H, env.R)
                got, exp = np.empty(nb), np.empty(nb)
                _kernels.lookahead_cached(*prof, kc[1], kc[0], t, got, *new_c)
                _kernels.lookahead_cached_ref(*prof, kc[1], kc[0], t, exp, *ref_c)
                msg = f"{preset} seed {seed} job {k} slot {t}"
                _bytes_equal(got, exp, msg)
                for a, b in zip(new_c, ref_c, strict=True):
                    _bytes_equal(a, b, msg + " cache")
                _kernels.lookahead_profiles(*prof, kc[1], kc[0], t, got)
                _kernels.lookahead_profiles_ref(*prof, kc[1], kc[0], t, exp)
                _bytes_equal(got, exp, msg + " uncached")
                for a, b in zip(_kernels._breakpoints(env.H, *prof[:3]), _kernels._breakpoints_ref(env.H, *prof[:3]),
                                strict=True):
                    _bytes_equal(a, b, msg + " breakpoints")
                cases += 1
    assert cases >= 1000, cases


def _random_profiles(rng, H, R, now):
    """Random usage profiles (``server_profiles``' CSR layout) of H servers: 1-5 pieces each, the first at ``now``,
    breakpoints spread inside and past the 128-slot lookahead, usage rows with repeats, zeros and some NaN."""
    cnt = rng.integers(1, 6, size=H).astype(np.int64)
    pp = np.zeros(H + 1, dtype=np.int64)
    pp[1:] = np.cumsum(cnt)
    times = np.empty(pp[H], dtype=np.int64)
    vals = np.empty((pp[H], R))
    palette = np.array([0.0, -0.0, 1.0, 2.0, 0.5, 3.0, 4.0])
    for h in range(H):
        c = cnt[h]
        gaps = rng.choice([1, 1, 2, 3, 7, 16, 40, 100], size=c - 1)
        times[pp[h]] = now
        times[pp[h] + 1:pp[h] + c] = now + np.cumsum(gaps)
        rows = rng.choice(palette, size=(c, R))
        if rng.random() < 0.3 and c > 1:
            rows[1] = rows[0]  # a breakpoint that leaves the row as it was
        if rng.random() < 0.03:
            rows[rng.integers(c), rng.integers(R)] = np.nan
        vals[pp[h]:pp[h] + c] = rows
    return pp, cnt, times, vals


def test_lookahead_equals_reference_on_random_profiles():
    """The same on 3,000 hand-made profiles: capacities 0, -0.0 and positive (free rows of -0.0 and 0.0), NaN
    usage, repeated rows, several calls per cluster with the cache carried along; with no server both raise."""
    rng = np.random.default_rng(808)
    cases = 0
    for _ in range(600):
        H = int(rng.choice([1, 2, 3, 5, 8, 20]))
        R, M = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        cap = rng.choice(np.array([0.0, -0.0, 1.0, 2.0, 4.0, 3.5]), size=(H, R))
        wres = rng.choice(np.array([0.0, 0.5, 1.0, 2.0]), size=(M, R))
        nb = _kernels.N_BINS * (2 * R + M)
        new_c, ref_c = _caches(H, R, M), _caches(H, R, M)
        for _ in range(5):
            now = int(rng.integers(0, 1000))
            prof = _random_profiles(rng, H, R, now)
            got, exp = np.empty(nb), np.empty(nb)
            _kernels.lookahead_cached(*prof, wres, cap, now, got, *new_c)
            _kernels.lookahead_cached_ref(*prof, wres, cap, now, exp, *ref_c)
            _bytes_equal(got, exp, f"H {H} R {R} M {M}")
            for a, b in zip(new_c, ref_c, strict=True):
                _bytes_equal(a, b, f"H {H} R {R} M {M} cache")
            _kernels.lookahead_profiles(*prof, wres, cap, now, got)
            _kernels.lookahead_profiles_ref(*prof, wres, cap, now, exp)
            _bytes_equal(got, exp, f"H {H} R {R} M {M} uncached")
            cases += 1
    assert cases == 3000


def test_lookahead_without_servers_raises_as_reference():
    """No server: both divide the host counts by H = 0."""
    prof = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 2)))
    for fn in (_kernels.lookahead_profiles, _kernels.lookahead_profiles_ref):
        with pytest.raises(ZeroDivisionError):
            fn(*prof, np.ones((1, 2)), np.zeros((0, 2)), 0, np.empty(_kernels.N_BINS * 5))


def test_breakpoints_equal_reference_on_random_profiles():
    """``_breakpoints`` == ``_breakpoints_ref`` on 3,000 random profiles: 1-60 servers, spans of a few slots to
    well past 4,096 (either side of the radix sort's limit), many breakpoints at the same slot on several servers."""
    rng = np.random.default_rng(809)
    for case in range(3000):
        H = int(rng.integers(1, 61))
        span = int(rng.choice([1, 5, 64, 65, 700, 4094, 4095, 4096, 4097, 20_000]))
        cnt = rng.integers(1, 7, size=H).astype(np.int64)
        pp = np.zeros(H + 1, dtype=np.int64)
        pp[1:] = np.cumsum(cnt)
        times = np.empty(pp[H], dtype=np.int64)
        now = int(rng.integers(0, 5000))
        slots = now + 1 + rng.integers(0, span, size=4)  # shared slots (a job's start or end on all its servers)
        for h in range(H):
            pool = np.unique(np.concatenate((slots, now + 1 + rng.integers(0, span, size=8))))
            later = np.sort(rng.choice(pool, size=min(cnt[h] - 1, pool.size), replace=False))
            cnt[h] = later.size + 1
            times[pp[h]] = now
            times[pp[h] + 1:pp[h] + cnt[h]] = later
        for a, b in zip(_kernels._breakpoints(H, pp, cnt, times), _kernels._breakpoints_ref(H, pp, cnt, times),
                        strict=True):
            _bytes_equal(a, b, f"case {case} H {H} span {span}")


def test_job_grid_cached_equals_uncached_and_reference():
    """``job_grid_cached`` with a cache carried along each episode == ``job_grid`` (no cache) == ``job_grid_ref``
    (configurations and mask) on >= 1,000 v1 decision states, and the cache's filled rows hold the values the
    uncached computation gives (``s * zf[p]`` per PS type)."""
    states = 0
    hits = 0
    rows_cmp = 0
    for preset, seed, jobs in (("ps-v1", 811, None), ("rl-v1", 812, 80), ("ra-v1", 813, 60), ("tiny-v1", 814, None),
                               ("rl-hard-v1", 815, 80), ("ps-v1", 816, None), ("tiny-ra-v1", 817, None),
                               ("ps-v1", 818, None), ("rl-v1", 819, None), ("ps-v1", 820, None),
                               ("ps-v1", 830, None), ("rl-v1", 831, None), ("ps-v1", 832, None)):
        for env, first in _episode_states(preset, seed, jobs):
            if first:
                vc = np.zeros_like(env._vcache)
            k, kc = env._k, env._kc
            D = int(env.jobs.chunks[k])
            args = (D, env._fracs, env.n_delays, *kc[:6], kc[6], kc[7], env._zf, env.jobs.ps_update[k])
            G = env.n_grid
            outs = []
            for fn, extra in ((_kernels.job_grid_cached, (vc,)), (_kernels.job_grid, ()), (_kernels.job_grid_ref, ())):
                o = [np.empty(G, dtype=np.int64) for _ in range(4)] + [np.empty(G, dtype=bool)]
                fn(*args, env._feas.copy(), *extra, *o)
                outs.append(o)
            for o in outs[1:]:
                for a, b in zip(outs[0], o, strict=True):
                    _bytes_equal(a, b, f"{preset} seed {seed} job {k}")
            hits += int(vc[:, :, 0].sum())
            rows_cmp += _same_action_rows(env, f"{preset} seed {seed} job {k}")
            states += 1
        if kc[6]:  # PS architecture: the filled rows hold s * zf[p] as computed
            wbw, pbw, zf = kc[3], kc[4], env._zf
            for m, n in zip(*np.nonzero(vc[:, :, 0] == 1.0), strict=True):
                s = np.maximum(np.ceil(n * wbw[m] / pbw - 1e-9), 1.0)
                _bytes_equal(vc[m, n, 1:], s * zf, f"{preset} cache row {m} {n}")
    assert states >= 1000 and hits > 0 and rows_cmp >= 1000, (states, hits, rows_cmp)


def _same_action_rows(env, msg) -> int:
    """``action_rows`` == ``action_rows_ref`` (rows, area ratios, count) on the pending job's configurations, mask
    and estimates as the env cached them; 1 if compared (the estimates are at hand), else 0."""
    k = env._k
    cs, ms, es = env._cfg_step, env._mask_step, env._est_step
    if cs is None or cs[0] != k or ms is None or ms[0] != k or es is None or es[0] != k:
        return 0
    kc = env._kc
    now = env._decision_time(k)
    G = env.n_grid
    got = []
    for fn in (_kernels.action_rows, _kernels.action_rows_ref):
        rows, ratio = np.full((G, env._rows_buf.shape[1]), np.nan), np.full(G, np.nan)
        nv = fn(int(env.jobs.chunks[k]), now, kc[0], kc[1], kc[2], kc[3], kc[4], kc[6], env._delays, *cs[1], ms[1],
                es[1], es[2], rows, ratio)
        got.append((nv, rows, ratio))
    assert got[0][0] == got[1][0], msg
    _bytes_equal(got[0][1], got[1][1], msg + " rows")
    _bytes_equal(got[0][2], got[1][2], msg + " ratio")
    return 1


class _FullList(HeteroMLEnv):
    """The full argument list (``commit_prepare``: no cache of the spread PS types' values)."""

    _packed = False


def test_packed_step_with_cache_equals_full_list():
    """Whole random-legal v1 episodes: the packed step (``commit_prepare_cached`` with the episode's cache) and the
    full argument list (no cache) in lockstep: every observation, mask, reward, info and metric ``==``."""
    steps = 0
    for preset, seed, jobs in (("ps-v1", 821, None), ("rl-hard-v1", 822, 80), ("tiny-v1", 823, None),
                               ("ra-v1", 824, 60), ("ps-v1", 825, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        steps += lockstep_episode(HeteroMLEnv(preset, config=cfg), _FullList(preset, config=cfg), seed,
                                  invalid_every=13, invalid_at=4)
    assert steps >= 300, steps
