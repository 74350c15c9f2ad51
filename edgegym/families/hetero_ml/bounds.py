"""Lower bounds on the optimal total weighted completion time Σ_j w_j c_j.

* :func:`simple_lower_bound`: Σ_j w_j (a_j + d_j^min), d^min the shortest standalone duration (co-located rate,
  capacity ignored). Valid for any instance, O(J·M·D).
* :func:`lp_lower_bound`: a time-indexed LP relaxation solved with SciPy's HiGHS, for small instances. Variables
  x[j, m, N, t] >= 0 (job j runs N type-m workers from slot t for d = ceil(W_j / (N rho_q=1)) slots), Σ x = 1 per job,
  and the pooled capacity Σ_h C^r_h bounds, in every slot, the use N e_m + zmin (zmin: the componentwise smallest PS
  vector, PS architecture) of the jobs running then. Any feasible schedule maps to a feasible LP point with an
  objective no larger (its true duration is >= the co-located one and its per-server use sums to at least the pooled
  use), so LP <= OPT. Starts are limited per job to c_j <= UB / w_j, valid for any upper bound UB >= OPT.
"""

from __future__ import annotations

import math

import numpy as np

from .simulator import HeteroCluster, HeteroJobs, duration_slots

__all__ = ["simple_lower_bound", "lp_lower_bound"]


def _options(cluster: HeteroCluster, jobs: HeteroJobs, j: int):
    """(m, N, d) with the co-located rate; only Pareto-useful N per m (the smallest N for each duration)."""
    out = []
    for m in range(cluster.num_worker_types):
        seen = set()
        for n in range(1, int(jobs.chunks[j]) + 1):
            if cluster.arch == "ps":
                it = float(jobs.v[j, m] + jobs.ps_update[j].min())
            else:
                it = float(jobs.v[j, m] + jobs.ra_update[j] * (n - 1) / n)
            d = duration_slots(float(jobs.work[j]), n, it)
            if d not in seen:
                seen.add(d)
                out.append((m, n, d))
    return out


def simple_lower_bound(cluster: HeteroCluster, jobs: HeteroJobs) -> float:
    return float(
        sum(jobs.weight[j] * (jobs.arrival[j] + min(d for _, _, d in _options(cluster, jobs, j))) for j in range(jobs.num_jobs))
    )


def lp_lower_bound(cluster: HeteroCluster, jobs: HeteroJobs, upper_bound: float, max_vars: int = 400_000) -> float:
    """The LP relaxation's optimum (a lower bound on OPT). Raises ``ValueError`` if the LP would be too large."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    R = cluster.num_resources
    zmin = cluster.ps_res.min(axis=0) if cluster.arch == "ps" else np.zeros(R)
    pool = cluster.capacity.sum(axis=0)
    cols_c, rows, cols, vals = [], [], [], []
    eq_rows, eq_cols = [], []
    nvar = 0
    tmax_all = 0
    var_info = []
    for j in range(jobs.num_jobs):
        a = int(jobs.arrival[j])
        cmax = int(math.floor(upper_bound / float(jobs.weight[j]) + 1e-9))
        for m, n, d in _options(cluster, jobs, j):
            use = n * cluster.worker_res[m] + zmin
            if np.any(use > pool + 1e-9):
                continue
            for t in range(a, cmax - d + 1):
                var_info.append((j, t, d, use))
                cols_c.append(float(jobs.weight[j]) * (t + d))
                eq_rows.append(j)
                eq_cols.append(nvar)
                nvar += 1
                tmax_all = max(tmax_all, t + d)
                if nvar > max_vars:
                    raise ValueError(f"LP too large (> {max_vars} variables): use a smaller instance")
    for v, (_j, t, d, use) in enumerate(var_info):
        for r in range(R):
            if use[r] <= 0:
                continue
            for s in range(t, t + d):
                rows.append(s * R + r)
                cols.append(v)
                vals.append(use[r])
    A_ub = coo_matrix((vals, (rows, cols)), shape=((tmax_all + 1) * R, nvar)).tocsr()
    b_ub = np.tile(pool, tmax_all + 1)
    A_eq = coo_matrix((np.ones(len(eq_rows)), (eq_rows, eq_cols)), shape=(jobs.num_jobs, nvar)).tocsr()
    res = linprog(np.array(cols_c), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(jobs.num_jobs), bounds=(0, None),
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"LP failed: {res.message}")
    return float(res.fun)
