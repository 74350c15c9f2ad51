"""Pure-NumPy reference of the HeteroML env's hot paths: the test oracle of the compiled kernels (:mod:`._kernels`).

The model is that of Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed Machine Learning
Jobs", IEEE Transactions on Cloud Computing 11(2), 2023. These functions are the env's original, straightforward
implementation (NumPy reductions, the placement rule :func:`~.placement.grid_place` called per candidate start):
the observation, the grid action mask, the vectorised earliest start of every grid action
(:func:`grid_estimates`), the v1 per-action rows, the search that decodes a grid action into a placement
(:func:`try_place`) and the reset's check that one worker (+ PS) of each pair fits (:func:`one_worker_fits`).
The env does not call them on its hot path, except as the exact fallback of the compiled placement search when
two servers' placement prices tie within rounding (see :mod:`._kernels`); the differential
tests (``tests/speed/test_speed_hetero_ml.py``) run them next to the compiled env on random states and require
identical (``==``) observations, masks, estimates, placements and rewards. Keep them unchanged unless the model
changes (then change both, and the tests say whether they still agree).
"""

from __future__ import annotations

import math

import numpy as np

from .placement import grid_place, ps_types_for
from .simulator import comm_slots, duration_slots, iteration_slots

__all__ = ["action_rows", "fits", "grid_configs", "grid_estimates", "grid_mask", "observation", "one_worker_fits",
           "try_place"]

N_BINS = 8
_BIN_EDGES = np.array([0, 1, 2, 4, 8, 16, 32, 64, 128])
OBS_HIGH = 10.0


def grid_mask(env) -> np.ndarray:
    """Valid grid actions of the pending job: :func:`grid_place` finds a placement on the empty cluster.  # (n_grid,)"""
    if env._inst is None or env._k >= env.jobs.num_jobs:
        return np.ones(env.n_grid, dtype=bool)
    k = env._k
    mask = np.zeros(env.grid_shape, dtype=bool)
    D = int(env.jobs.chunks[k])
    fr = np.asarray(env.preset.env.worker_fractions)
    ns = np.minimum(D, np.maximum(1, np.ceil(D * fr - 1e-9))).astype(np.int64)  # (levels,)
    mm, nn = np.meshgrid(np.arange(env.M), ns, indexing="ij")  # (M, levels)
    for qm in (0, 1):
        if env.cluster.arch == "ps":
            ps = ps_types_for(env.cluster, nn, mm, qm == 1, env.jobs.ps_update[k])
        else:
            ps = np.full(nn.shape, -1)
        for m in range(env.M):
            for lvl in range(env.n_levels):
                n, p = int(nn[m, lvl]), int(ps[m, lvl])
                ok = grid_place(env.cluster, env.cluster.capacity, m, p, n, qm == 1, env.lam) is not None
                mask[m, lvl, qm, :] = ok
    return mask.reshape(-1)


def grid_configs(env, k: int):
    """Per grid action of job k: worker type, workers, spread, PS type, delay index (arrays of grid_shape)."""
    D = int(env.jobs.chunks[k])
    fr = np.asarray(env.preset.env.worker_fractions)
    ns = np.minimum(D, np.maximum(1, np.ceil(D * fr - 1e-9))).astype(np.int64)
    mm, nn = np.meshgrid(np.arange(env.M), ns, indexing="ij")  # (M, levels)
    m4, n4, q4, p4, d4 = (np.zeros(env.grid_shape, dtype=np.int64) for _ in range(5))
    for qm in (0, 1):
        ps = (ps_types_for(env.cluster, nn, mm, qm == 1, env.jobs.ps_update[k]) if env.cluster.arch == "ps"
              else np.full(nn.shape, -1))
        m4[:, :, qm, :] = mm[:, :, None]
        n4[:, :, qm, :] = nn[:, :, None]
        q4[:, :, qm, :] = qm
        p4[:, :, qm, :] = ps[:, :, None]
    d4[...] = np.arange(env.n_delays)[None, None, None, :]
    return m4, n4, q4, p4, d4


def _dur(env, k: int, m: int, p: int, n: int, q: bool) -> int:
    return duration_slots(float(env.jobs.work[k]), n, iteration_slots(env.cluster, env.jobs, k, m, p, n, q))


def grid_estimates(env) -> tuple[np.ndarray, np.ndarray]:
    """Earliest start and duration of every grid action of the pending job (invalid: -1, 0).   # (n_grid,), (n_grid,)"""
    k = env._k
    mask = grid_mask(env)
    m4, n4, q4, p4, d4 = (a.reshape(-1) for a in grid_configs(env, k))
    keys = np.stack([m4, n4, q4], axis=1)[mask]
    uk, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    up = p4[mask][first]
    dur = np.array([_dur(env, k, int(m), int(pp), int(n), not bool(q)) for (m, n, q), pp in zip(uk, up, strict=True)],
                   dtype=np.int64)
    inv = inv.reshape(-1)
    U = uk.shape[0]
    um, un, uq = uk[:, 0], uk[:, 1], uk[:, 2].astype(bool)
    now = env._decision_time(k)
    ends = env.sim.completion[: env._k]
    # usage is piecewise constant between reservation starts and ends: the max over [t, t + d) is the max over
    # the usage at t and at every breakpoint in (t, t + d)
    marks = np.unique(np.concatenate((env.sim.start[: env._k], ends)))
    usage = env.sim.ledger
    start_u = np.full((env.n_delays, U), -1, dtype=np.int64)
    for di, delay in enumerate(env.preset.env.delays):
        t0 = now + int(delay)
        todo = np.arange(U)
        for t in np.unique(np.concatenate(([t0], ends[ends > t0]))):
            if todo.size == 0:
                break
            t = int(t)
            dd = np.maximum(dur[todo], 1)
            bps = np.concatenate(([t], marks[(marks > t) & (marks < t + int(dd.max()))]))
            usage._ensure(int(bps[-1]) + 1)
            cm = np.maximum.accumulate(usage.usage[:, :, bps], axis=2)  # (H, R, breakpoints)
            last = np.searchsorted(bps, t + dd, side="left") - 1
            free = env.cluster.capacity[None] - np.moveaxis(cm[:, :, last], 2, 0)  # (U', H, R)
            ok = fits(env, free, um[todo], un[todo], uq[todo], up[todo])
            start_u[di, todo[ok]] = t
            todo = todo[~ok]
    start = np.full(env.n_grid, -1, dtype=np.int64)
    d_out = np.zeros(env.n_grid, dtype=np.int64)
    start[mask] = start_u[d4[mask], inv]
    d_out[mask] = dur[inv]
    return start, d_out


def fits(env, free: np.ndarray, m, n, spread, p) -> np.ndarray:
    """Whether :func:`grid_place` finds a placement on residuals ``free`` (U, H, R), vectorised over U configs."""
    c = env.cluster
    ps_arch = c.arch == "ps"
    e = c.worker_res[m]  # (U, R)
    z = c.ps_res[p] if ps_arch else np.zeros_like(e)
    ok = np.zeros(m.shape[0], dtype=bool)
    co = ~spread
    if co.any():
        need = n[co, None] * e[co] + z[co]
        ok[co] = np.all(free[co] + 1e-9 >= need[:, None, :], axis=2).any(axis=1)
    sp = np.flatnonzero(spread)
    if sp.size:
        f, es, ns = free[sp], e[sp], n[sp]
        rest, anyps = f, np.ones(sp.size, dtype=bool)
        if ps_arch:
            zs = z[sp]
            kps = np.maximum(1, np.ceil(ns * c.worker_bw[m[sp]] / c.ps_bw[p[sp]] - 1e-9)).astype(np.int64)
            okps = np.all(f + 1e-9 >= (kps[:, None] * zs)[:, None, :], axis=2)  # (S, H)
            C = c.capacity
            used = np.divide(C[None] - f, C[None], out=np.zeros_like(f), where=C[None] > 0)
            price = np.power(env.lam, np.clip(used, 0.0, 1.0)) - 1.0
            cost = np.where(okps, np.einsum("shr,sr->sh", price, zs / c.cbar), np.inf)
            h = np.argmin(cost, axis=1)
            rest = f.copy()
            rest[np.arange(sp.size), h] -= kps[:, None] * zs
            anyps = okps.any(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(es[:, None, :] > 0, np.floor(rest / np.where(es > 0, es, 1.0)[:, None, :] + 1e-9), np.inf)
        cap = q.min(axis=2)
        cap = np.maximum(np.where(np.isfinite(cap), cap, 1 << 30), 0)
        ok[sp] = anyps & (cap.sum(axis=1) >= ns)
    return ok


def action_rows(env) -> np.ndarray:
    """The v1 per-grid-action rows (``ACTION_ROW_FEATURES`` of the env module).      # (n_grid, row features)"""
    rows = np.zeros((env.n_grid, 12))
    if env.slot_driven or env._k >= env.jobs.num_jobs:
        return rows
    k = env._k
    mask = grid_mask(env)
    start, dur = grid_estimates(env)
    now = env._decision_time(k)
    c = env.cluster
    m4, n4, q4, p4, d4 = (a.reshape(-1)[mask] for a in grid_configs(env, k))
    st, du = start[mask].astype(np.float64), dur[mask].astype(np.float64)
    comp = st + du
    best = comp.min()
    ref = max(best - now, 1.0)
    delays = np.asarray(env.preset.env.delays, dtype=np.float64)
    e = c.worker_res[m4]
    if c.arch == "ps":
        kps = np.where(q4 == 1, np.maximum(1, np.ceil(n4 * c.worker_bw[m4] / c.ps_bw[p4] - 1e-9)), 1.0)
        dem = n4[:, None] * e + kps[:, None] * c.ps_res[p4]
    else:
        dem = n4[:, None] * e
    share = (dem / np.maximum(c.capacity.sum(axis=0), 1e-12)[None, :]).max(axis=1)
    area = share * np.maximum(du, 1.0)
    rows[mask] = np.stack([
        np.ones(st.size), (comp - best) / ref, (st - now) / ref, du / ref, n4 / float(env.jobs.chunks[k]),
        q4.astype(np.float64), delays[d4] / max(delays.max(), 1.0), 10.0 * share,
        np.log2(area / max(area.min(), 1e-12)) / 2.0, e[:, 0] / 4.0, c.worker_bw[m4] / 5.0,
        (st == now + delays[d4]).astype(np.float64),
    ], axis=1)
    return np.clip(rows, 0.0, OBS_HIGH)


def observation(env) -> np.ndarray:
    """The observation of the pending job (the env's ``_observation``).                      # (observation size,)"""
    k = min(env._k, env.jobs.num_jobs - 1)
    jb, c = env.jobs, env.cluster
    now = env._decision_time(k)
    D = int(jb.chunks[k])
    W = float(jb.work[k])
    comm = comm_slots(jb.grad_mb[k], c.worker_bw)
    if c.arch == "ps":
        u = float(jb.ps_update[k].min())
        it_c = jb.v[k] + u
        it_s = it_c + comm
    else:
        frac = (D - 1) / D
        it_c = jb.v[k] + jb.ra_update[k] * frac
        it_s = it_c + comm * frac
    x = [
        jb.weight[k] / 5000.0, math.log10(jb.epochs[k]) / 3, math.log10(D) / 3, math.log10(jb.batches[k]) / 3,
        math.log10(max(jb.grad_mb[k], 1.0)) / 3,
    ]
    dc = np.ceil(W * it_c / D - 1e-9) / env.T
    ds = np.ceil(W * it_s / D - 1e-9) / env.T
    x += list(np.stack([dc, ds], axis=1).reshape(-1))
    x += [jb.ps_update[k].mean() * 1e4, jb.ps_update[k].min() * 1e4, jb.ra_update[k] * 1e4]
    a = int(jb.arrival[k])
    tau = 1
    while tau < a:
        tau *= 2
    comp = env.sim.completion[: env._k]
    if env.obs_actions:
        x += list(action_rows(env).reshape(-1))
    if env.obs_relative:
        x += [0.0, 0.0, 0.0, float(np.sum(comp > now)) / env.H]
    else:
        x += [now / env.T, (tau - a) / tau, env._k / jb.num_jobs, float(np.sum(comp > now)) / jb.num_jobs]
    win = env.sim.ledger.window(now, now + 128)  # (H, R, 128)
    C = c.capacity
    Ctot = np.maximum(C.sum(axis=0), 1e-12)
    safeC = np.where(C > 0, C, 1.0)
    blocks = []
    for b in range(N_BINS):
        used = win[:, :, _BIN_EDGES[b] : _BIN_EDGES[b + 1]].max(axis=2)
        free = C - used
        agg = free.sum(axis=0) / Ctot
        mx = (free / safeC).max(axis=0)
        hosts = np.all(free[:, None, :] + 1e-9 >= c.worker_res[None, :, :], axis=2).mean(axis=0)
        blocks.append(np.concatenate([np.stack([agg, mx], axis=1).reshape(-1), hosts]))
    tail = [] if env.obs_actions else [grid_mask(env).astype(np.float64)]
    x = np.concatenate([np.asarray(x, dtype=np.float64), *blocks, *tail])
    lo, hi = env.observation_space.low, env.observation_space.high
    return np.clip(np.nan_to_num(x.astype(np.float32)), lo, hi)


def try_place(env, k, m, n, spread, p, t0):
    """Earliest start >= t0 (candidates: t0 and later reservation ends) at which :func:`grid_place` fits, and the
    placement there (``(t, (workers, ps))``), or ``None``."""
    d = _dur(env, k, m, p, n, not spread)
    ends = env.sim.completion[: env._k]
    cands = np.unique(np.concatenate(([t0], ends[ends > t0])))
    for t in cands:
        t = int(t)
        free = env.sim.ledger.free_over(t, t + d)
        got = grid_place(env.cluster, free, m, p, n, spread, env.lam)
        if got is not None:
            return t, got
    return None


def one_worker_fits(cluster, free: np.ndarray) -> np.ndarray:
    """Whether PLACE (``placement.place``) finds room for one worker of type m (+ its PS of type p) on the
    residuals ``free`` (H, R): ``place(cluster, free, m, p, 1) is not None`` for every pair, vectorised over the PS
    types and the servers (the same floating-point operations).                                 # (M, P) bool"""
    e_all = cluster.worker_res
    M, P, H = e_all.shape[0], cluster.num_ps_types, free.shape[0]
    ps_arch = cluster.arch == "ps"
    out = np.zeros((M, P), dtype=bool)
    gpu_order = np.lexsort((np.arange(H), -free[:, 0]))  # spread fill order: most free GPUs first, then index
    for m in range(M):
        e = e_all[m]
        z = cluster.ps_res if ps_arch else np.zeros((P, e.shape[0]))
        need = 1 * e + z  # (P, R)
        co = np.all(free[None, :, :] + 1e-9 >= need[:, None, :], axis=2).any(axis=1)  # (P,)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(e[None, :] > 0, np.floor(free / np.where(e > 0, e, 1.0)[None, :] + 1e-9), np.inf)
        caps = q.min(axis=1)
        caps = np.maximum(np.where(np.isfinite(caps), caps, 1 << 30), 0).astype(np.int64)
        room = np.flatnonzero(caps[gpu_order] >= 1)
        if room.size == 0:  # no server takes one worker: only co-location could (it cannot either: no room)
            out[m] = co
            continue
        if not ps_arch:
            out[m] = True
            continue
        h = int(gpu_order[room[0]])  # the worker's server
        w = np.zeros(H, dtype=np.int64)
        w[h] = 1
        after = free - np.outer(w, e)
        k = np.maximum(1, np.ceil((1 - w)[None, :] * cluster.worker_bw[m] / cluster.ps_bw[:, None] - 1e-9))
        k = k.astype(np.int64)  # (P, H) PSs needed on each server
        ok = np.all(after[None, :, :] + 1e-9 >= k[:, :, None] * cluster.ps_res[:, None, :], axis=2).any(axis=1)
        out[m] = co | ok
    return out
