"""Upper bounds on the total utility Σ_i g_i(JRT_i) of an EdgeUtility episode (the family's objective, maximised).

* ``no-queue``: Σ_i max_k g_i(p_ik / s + Δ↑_ik + Δ↓_ik), every job at its best server with no queueing, capacity
  ignored (:func:`edgegym.families.edge_utility.simulator.upper_bound`, the paper's Upper Bound, §V-A.5).
* ``burst LP``: capacity-aware. The jobs are split into *groups* (the jobs released at one instant: the trace's
  bursts); the total utility of any schedule is at most the sum over the groups of the best utility each group
  could get alone on the empty servers (the other jobs only take capacity away). A group alone is bounded by an LP:
  the edge servers of one device type are pooled (n servers process at most n seconds of work per second), a job's
  completion time is placed in a time bin and credited the utility of the bin's earliest possible response time, and
  by every bin end the pooled work of the jobs completed on that pool is at most n times the time since the group's
  earliest ready instant. Groups too small to queue keep their no-queue bound.

:func:`offline_bound` returns the smaller (proof sketch in docs/families/edge_utility.md, "Offline bound").
"""

from __future__ import annotations

import math
import time

import numpy as np

from edgegym.core.bounds import Bound

from .simulator import upper_bound
from .utility_fn import vector_rows

__all__ = ["WALL_FACTOR", "burst_lp_upper_bound", "offline_bound", "time_bins"]

#: the wall-clock limit of one HiGHS solve, in multiples of the CPU-time budget ``time_limit_s`` (a safety net on a
#: shared machine: the budget itself is CPU time)
WALL_FACTOR = 10.0


def time_bins(horizon_s: float, fine_s: float = 0.005) -> np.ndarray:
    """Bin edges (seconds after a group's earliest ready instant) from 0 past ``horizon_s``: ``fine_s`` steps for
    the first 0.25 s, then 4x, then 16x coarser (after 1 s). Any edges give a valid bound; fine ones a tighter one.
    """
    if not horizon_s > 0 or not fine_s > 0:
        raise ValueError(f"horizon_s and fine_s must be > 0, got {horizon_s}, {fine_s}")
    edges = [np.arange(0.0, 0.25, fine_s), np.arange(0.25, 1.0, 4 * fine_s)]
    edges.append(np.arange(1.0, max(horizon_s, 1.0) + 16 * fine_s, 16 * fine_s))
    return np.concatenate(edges)


def _pools(env) -> tuple[list[np.ndarray], list[int], int | None]:
    """(capacitated pools as server-index arrays, their processor counts, the infinite cloud's column or None)."""
    st = np.asarray(env.server_type)
    pools = [np.flatnonzero(st == t) for t in np.unique(st)]
    S = int(env.num_edge_servers)
    cloud = None
    if env.has_cloud:
        if env.preset.scheduler.cloud == "infinite":
            cloud = S
        else:  # a finite cloud runs the edge discipline on one processor
            pools.append(np.array([S]))
    return pools, [len(p) for p in pools], cloud


def _group_lp(jobs, idx: np.ndarray, pools, sizes, cloud, speed: float, latency: float, fine_s: float,
              time_limit_s: float) -> float:
    """The LP bound of group ``idx`` alone (module docstring); ``nan`` if HiGHS does not reach the optimum."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    n = idx.size
    r = jobs.release_s[idx]
    util = [jobs.utilities[i] for i in idx]
    pm = [jobs.p_s[np.ix_(idx, P)] / speed for P in pools]  # (n, |P|)
    up = [jobs.up_s[np.ix_(idx, P)] + latency for P in pools]
    dn = [jobs.down_s[np.ix_(idx, P)] for P in pools]
    ready = np.min([(r[:, None] + u).min(axis=1) for u in up], axis=0)  # (n,) earliest ready instant of each job
    rel = np.unique(r)
    starts = np.array([ready[r >= x].min() for x in rel])  # window start of the jobs released at or after x
    t0 = float(starts.min())
    work = np.min([p.min(axis=1) for p in pm], axis=0)  # (n,) least work of each job on any pool
    horizon = 2.0 * float(work.sum()) / sum(sizes) + float(max(float((r[:, None] + u + p).max()) for u, p in
                                                            zip(up, pm, strict=True))) - t0
    # bin b = [edges[b], edges[b+1]); the last one open, uncapacitated; fine after every window start
    edges = np.unique(np.concatenate([x + time_bins(horizon - (x - t0), fine_s) for x in starts]))
    edges = edges[edges <= t0 + horizon + 1e-12]
    B = edges.size
    cost, rows, cols, vals = [], [], [], []
    cap_rows: list[list] = []
    nvar = 0
    for q, P in enumerate(pools):
        pmin = pm[q].min(axis=1)
        earliest = (r[:, None] + up[q] + pm[q]).min(axis=1)  # earliest completion on the pool
        lb = (up[q] + pm[q] + dn[q]).min(axis=1)  # the no-queue response time on the pool
        jrt = np.maximum(lb[:, None], edges[None, :] + dn[q].min(axis=1)[:, None] - r[:, None])  # (n, B)
        credit = vector_rows(util, jrt)
        ok = np.append(edges[1:], math.inf)[None, :] > earliest[:, None]  # a bin that can hold the completion
        ok &= credit > 0
        ii, bb = np.nonzero(ok)
        v = nvar + np.arange(ii.size)
        nvar += ii.size
        cost.append(credit[ii, bb])
        rows.append(ii)  # assignment rows 0..n-1
        cols.append(v)
        vals.append(np.ones(ii.size))
        # pooled work completed by each finite bin end e by the jobs released at or after x: Σ_{b < e} pmin x <=
        # size (edges[e] - start(x)), one chain per release instant x of the group
        fin = bb < B - 1
        for x, st in zip(rel.tolist(), starts.tolist(), strict=True):
            sel = fin & (r[ii] >= x)
            cap_rows.append((q, st, bb[sel], v[sel], pmin[ii[sel]]))
    if cloud is not None:  # the infinite cloud: no queueing
        lbc = jobs.p_s[idx, cloud] / speed + jobs.up_s[idx, cloud] + jobs.down_s[idx, cloud] + latency
        cost.append(vector_rows(util, lbc[:, None])[:, 0])
        rows.append(np.arange(n))
        cols.append(nvar + np.arange(n))
        vals.append(np.ones(n))
        nvar += n
    # pooled work completed by bin end e, L_e = L_{e-1} + Σ_{bin e-1} pmin x (an equality row per pool and bin end),
    # bounded by size (edges[e] - t0): one nonzero per x instead of one per later bin end
    eq_rows, eq_cols, eq_vals = [], [], []
    ub = [np.full(nvar, np.inf)]
    neq = 0
    for q, st, bb, v, w in cap_rows:
        if not bb.size:
            continue
        L = nvar + np.arange(B - 1)  # L_e for e = 1 .. B-1
        nvar += B - 1
        cost.append(np.zeros(B - 1))
        ub.append(sizes[q] * np.maximum(0.0, edges[1:] - st))
        eq_rows += [neq + bb, neq + np.arange(B - 1), neq + np.arange(1, B - 1)]
        eq_cols += [v, L, L[:-1]]
        eq_vals += [-w, np.ones(B - 1), -np.ones(B - 2)]
        neq += B - 1
    A = csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, nvar))
    A_eq = csr_matrix((np.concatenate(eq_vals), (np.concatenate(eq_rows), np.concatenate(eq_cols))),
                      shape=(neq, nvar)) if neq else None
    c = np.concatenate(cost)
    res = linprog(-c, A_ub=A, b_ub=np.ones(n), A_eq=A_eq, b_eq=np.zeros(neq) if neq else None,
                  bounds=np.column_stack([np.zeros(nvar), np.concatenate(ub)]), method="highs",
                  options={"time_limit": float(time_limit_s)})
    if res.status != 0:
        return math.nan
    return -float(res.fun) * (1.0 + 1e-6)


def burst_lp_upper_bound(env, *, min_group: int = 16, gap_s: float = 0.0, fine_s: float = 0.01,
                         time_limit_s: float = 10.0) -> float:
    """The ``burst LP`` bound (module docstring) of the episode ``env`` (unwrapped, after ``reset``): Σ over the
    groups of jobs released at one instant (``gap_s`` > 0: consecutive releases at most ``gap_s`` apart) of min(the
    group's LP bound, its no-queue bound); groups of fewer than ``min_group`` jobs, or no more jobs than the smallest
    pool has processors, keep their no-queue bound.
    ``time_limit_s`` is a CPU-time budget (checked between groups; each HiGHS solve may take ``WALL_FACTOR`` times it
    in wall-clock time, a safety net): ``nan`` when it runs out or a solve does not reach the optimum."""
    jobs = env.jobs
    speed = float(env.preset.servers.speed)
    latency = float(env.preset.env.dispatch_latency_s)
    pools, sizes, cloud = _pools(env)
    noq = upper_bound(jobs, speed)
    if not pools:  # nothing is capacitated: the no-queue bound is exact
        return float(noq.sum())
    r = jobs.release_s
    cut = np.flatnonzero(np.diff(r) > gap_s) + 1
    total = 0.0
    deadline = time.process_time() + float(time_limit_s)  # CPU time: what other processes on the machine disturb least
    for idx in np.split(np.arange(jobs.num_jobs), cut):
        simple = float(noq[idx].sum())
        # a group no larger than every pool: each job completing at its earliest fits the LP's capacity rows, so its
        # LP bound is its no-queue bound (no solve needed)
        if idx.size >= min_group and idx.size > min(sizes):
            if time.process_time() > deadline:
                return math.nan
            lp = _group_lp(jobs, idx, pools, sizes, cloud, speed, latency, fine_s, WALL_FACTOR * float(time_limit_s))
            if not math.isfinite(lp):
                return math.nan
            simple = min(simple, lp)
        total += simple
    return total


def offline_bound(env, *, time_limit_s: float = 10.0) -> Bound:
    """The EdgeUtility offline bound of the episode ``env`` (unwrapped, after ``reset``): the smaller of the no-queue
    bound and :func:`burst_lp_upper_bound` (``nan`` when its LPs do not finish within ``time_limit_s`` CPU seconds),
    an upper bound on the total utility (the episode objective) of every legal schedule."""
    t0 = time.perf_counter()
    parts = {"no-queue": float(upper_bound(env.jobs, float(env.preset.servers.speed)).sum()),
             "burst LP": burst_lp_upper_bound(env, time_limit_s=time_limit_s)}
    valid = {k: v for k, v in parts.items() if math.isfinite(v)}
    best = min(valid, key=valid.get)
    return Bound(
        value=valid[best], name="burst LP" if best == "burst LP" else "no-queue utility", sense="upper", parts=parts,
        bounds="every legal schedule, clairvoyant included: any dispatch (edge, cloud, reject) and any server "
               "discipline",
        seconds=time.perf_counter() - t0,
    )
