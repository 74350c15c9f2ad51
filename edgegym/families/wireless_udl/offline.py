"""Offline optimum of program (2) on small instances: a MILP solved by SciPy's HiGHS.

Variables per job i, slot t ∈ [a_i, H): workers ``y[i,r,t]`` (integer ≤ Ymax_ir, the most job-i workers the
empty site r holds, at most ⌈D_i/κ_i⌉), PS ``s[i,r,t]`` (binary), chunks ``g[i,r,r',t]`` of origin r trained at
r' (integer), ``w[i,r,r',t] ≥ y[i,r,t] − Ymax_ir(1 − s[i,r',t])``
(linearises y·s, r ≠ r'), completion ``v[i,t]`` (binary). Constraints (2a) every chunk trained once, (2b)
``Σ_r g ≤ κ_i y``, one PS and workers only with a PS, (2d) capacities, ``Σ_t v = 1`` and "all data trained by
the completion slot". Objective: ``Σ f_i(t − a_i + offset) v[i,t] + Σ q^{rr'} (δ_i g + π_i w)``.

The MILP lets worker counts and placements change every slot (preemptive), bounds a job's workers only by the
cluster's capacity, and does not impose the per-slot proportional sampling, so its optimum is a lower bound on
the cost of every legal plan of the env, in both sampling modes (and the exact optimum of (2) for ``complete``
sampling). Earlier versions capped a job's workers per slot at ⌈D_i/κ_i⌉ in total, which is not program (2):
a plan with one worker at each of three sites can cost less (``n_cap`` keeps that restricted program).
SciPy is imported lazily.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .costs import latency_cost
from .instance import Instance

__all__ = ["OfflineResult", "offline_optimum"]


@dataclass(frozen=True, slots=True)
class OfflineResult:
    """``objective``: best integer solution found; ``bound``: HiGHS's dual bound (≤ OPT); ``optimal``."""

    objective: float
    bound: float
    optimal: bool
    horizon: int
    completion: np.ndarray  # (n_jobs,) completion slot of each job in the solution


def offline_optimum(inst: Instance, horizon: int | None = None, latency_offset: int = 1,
                    time_limit_s: float = 60.0, n_cap: np.ndarray | None = None) -> OfflineResult:
    """Solve the MILP for ``inst`` over slots ``[0, horizon)`` (default: every job run one worker at a time back
    to back after the last arrival, which is always feasible).

    Workers are bounded only by the cluster: per site by what the empty site holds (and ⌈D_i/κ_i⌉, never binding
    on an optimum), so the result bounds every legal plan. ``n_cap`` (optional, per job) adds "at most
    ``n_cap[i]`` workers per slot", the restricted program earlier versions solved (at most ⌈D_i/κ_i⌉ workers in
    total); its optimum need not bound plans with more workers."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    from ._kernels import BIG, max_workers

    n_jobs, R, K = inst.num_jobs, inst.num_sites, inst.num_resources
    D = inst.data.sum(axis=1)
    # per-site worker bound: what the empty site holds, and never more than ⌈D_i/κ_i⌉ (a site trains at most D_i
    # chunks in a slot, so more workers there only add parameter traffic): a bound every legal plan meets
    ysite = np.array([[min(int(max_workers(inst.cap[r], inst.m[i], inst.n[i], False)), int(-(-D[i] // inst.kappa[i])),
                           BIG) for r in range(R)] for i in range(n_jobs)], dtype=np.int64).reshape(n_jobs, R)
    ytot = ysite.sum(axis=1)
    H = int(horizon or (inst.arrival.max() + int(np.sum(-(-D // inst.kappa))) + 1))
    idx = {}
    lo, hi, integ, cost = [], [], [], []

    def var(key, win, h, is_int, c):
        idx[key] = len(lo)
        lo.append(win)
        hi.append(h)
        integ.append(is_int)
        cost.append(c)
        return idx[key]

    slots = {i: range(int(inst.arrival[i]), H) for i in range(n_jobs)}
    for i in range(n_jobs):
        for t in slots[i]:
            for r in range(R):
                var(("y", i, r, t), 0, ysite[i, r], 1, 0.0)
                var(("s", i, r, t), 0, 1, 1, 0.0)
                for r2 in range(R):
                    var(("g", i, r, r2, t), 0, inst.data[i, r], 1, inst.q[r, r2] * inst.chunk_mb[i])
                    if r2 != r:
                        var(("w", i, r, r2, t), 0, ysite[i, r], 0, inst.q[r, r2] * inst.param_mb[i])
            lat = t - inst.arrival[i] + latency_offset
            f = float(latency_cost(inst.kind[i], inst.tau[i], inst.b[i], inst.tau1[i], inst.tau2[i], inst.c[i], lat,
                                   inst.exp_rate))
            var(("v", i, t), 0, 1, 1, f)
    rows, cols, vals, rlo, rhi = [], [], [], [], []

    def con(terms, win, h):
        k = len(rlo)
        for c, v in terms:
            rows.append(k)
            cols.append(c)
            vals.append(v)
        rlo.append(win)
        rhi.append(h)

    inf = np.inf
    for i in range(n_jobs):
        for r in range(R):  # (2a)
            con([(idx[("g", i, r, r2, t)], 1.0) for t in slots[i] for r2 in range(R)], inst.data[i, r], inst.data[i, r])
        for t in slots[i]:
            for r2 in range(R):  # (2b)
                con([(idx[("g", i, r, r2, t)], 1.0) for r in range(R)] + [(idx[("y", i, r2, t)], -inst.kappa[i])],
                    -inf, 0.0)
            con([(idx[("s", i, r, t)], 1.0) for r in range(R)], -inf, 1.0)  # one PS
            con([(idx[("y", i, r, t)], 1.0) for r in range(R)] + [(idx[("s", i, r, t)], -ytot[i]) for r in range(R)],
                -inf, 0.0)  # workers only with a PS
            if n_cap is not None:  # the restricted program: at most n_cap[i] workers in a slot
                con([(idx[("y", i, r, t)], 1.0) for r in range(R)], -inf, float(n_cap[i]))
            for r in range(R):
                for r2 in range(R):
                    if r2 != r:  # w ≥ y_r − Ymax_r (1 − s_r2)
                        con([(idx[("w", i, r, r2, t)], 1.0), (idx[("y", i, r, t)], -1.0),
                             (idx[("s", i, r2, t)], -float(ysite[i, r]))], -float(ysite[i, r]), inf)
        con([(idx[("v", i, t)], 1.0) for t in slots[i]], 1.0, 1.0)
        for t in slots[i]:  # trained by t ≥ D_i · completed by t
            terms = [(idx[("g", i, r, r2, u)], 1.0) for u in range(int(inst.arrival[i]), t + 1)
                     for r in range(R) for r2 in range(R)]
            terms += [(idx[("v", i, u)], -float(D[i])) for u in range(int(inst.arrival[i]), t + 1)]
            con(terms, 0.0, inf)
    for t in range(H):  # (2d)
        for r in range(R):
            for k in range(K):
                terms = []
                for i in range(n_jobs):
                    if t in slots[i]:
                        terms += [(idx[("y", i, r, t)], inst.m[i, k]), (idx[("s", i, r, t)], inst.n[i, k])]
                if terms:
                    con(terms, -inf, inst.cap[r, k])
    A = coo_matrix((vals, (rows, cols)), shape=(len(rlo), len(lo))).tocsr()
    res = milp(np.asarray(cost), constraints=LinearConstraint(A, rlo, rhi), integrality=np.asarray(integ),
               bounds=Bounds(np.asarray(lo, float), np.asarray(hi, float)),
               options={"time_limit": time_limit_s, "mip_rel_gap": 1e-7})
    if res.x is None:
        raise RuntimeError(f"the offline MILP found no solution: {res.message}")
    x = res.x
    completion = np.array([max(slots[i], key=lambda t: x[idx[("v", i, t)]]) for i in range(n_jobs)])
    bound = float(getattr(res, "mip_dual_bound", res.fun) or res.fun)
    return OfflineResult(objective=float(res.fun), bound=min(bound, float(res.fun)), optimal=res.status == 0,
                         horizon=H, completion=completion)
