"""Lower bounds on the optimal total weighted completion time Σ_j w_j c_j.

* :func:`simple_lower_bound`: Σ_j w_j (a_j + d_j^min), d^min the shortest standalone duration (co-located rate,
  capacity ignored). Valid for any instance, O(J·M·D).
* :func:`lp_lower_bound`: a time-indexed LP relaxation solved with SciPy's HiGHS, for small instances. Variables
  x[j, m, N, t] >= 0 (job j runs N type-m workers from slot t for d = ceil(W_j / (N rho_q=1)) slots), Σ x = 1 per job,
  and the pooled capacity Σ_h C^r_h bounds, in every slot, the use N e_m + zmin (zmin: the componentwise smallest PS
  vector, PS architecture) of the jobs running then. Any feasible schedule maps to a feasible LP point with an
  objective no larger (its true duration is >= the co-located one and its per-server use sums to at least the pooled
  use), so LP <= OPT. Starts are limited per job to c_j <= UB / w_j, valid for any upper bound UB >= OPT. Its
  schedules keep one configuration per job: it bounds the reservation policies, not the elastic slot driver.
* :func:`pooled_lp_lower_bound`: the contention bound, valid for every schedule, reservation or elastic/preemptive.
  Each resource is pooled over the whole cluster (capacity Σ_h C^r_h per slot) and time is cut into bins; job j may
  run, in any bin after its arrival, any mix of *configurations* k (worker type, worker count, PS type; co-located
  only when they fit one server), each with a progress rate ρ_jk (mini-batches per slot) and a resource use of at
  least α_jk^r per mini-batch. It must make P_j ≈ W_j progress, and Σ_j w_j C_j is bounded below through
  C_j >= a_j + (its busy time) and C_j >= (its progress-weighted mean busy time) + P_j / (2 max_k ρ_jk) (the
  mean-busy-time relaxation of Goemans, "Improved approximation algorithms for scheduling with release dates",
  SODA 1997). Proof sketch in docs/families/hetero_ml.md, "Offline bound".
* :func:`offline_bound`: the family's :class:`~edgegym.core.bounds.Bound`: the larger of the pooled LP bound and the
  per-job standalone bound.
"""

from __future__ import annotations

import math
import time

import numpy as np

from edgegym.core.bounds import Bound

from .simulator import HeteroCluster, HeteroJobs, duration_slots

__all__ = ["job_configurations", "lp_lower_bound", "offline_bound", "pooled_lp_lower_bound", "simple_lower_bound",
           "standalone_lower_bound"]


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
    """Σ_j w_j (a_j + d_j^min), d^min the shortest duration of a fixed configuration (co-located rate, capacity
    ignored): a lower bound on every reservation schedule (one configuration per job)."""
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




# ----------------------------------------------------------------------------------------------------------------
# the contention bound: the pooled, time-binned LP over configuration mixes (valid for every schedule)


def _raw_configurations(cluster: HeteroCluster, jobs: HeteroJobs, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (worker type m, worker count N <= D_j) of job j with its PS type relaxed: ``rate`` (M·N,) the most
    mini-batches of progress per slot over the PS types, ``per`` (M·N, R) the least resource use per mini-batch. Runs
    are co-located (q = 1) only when N e_m (+ z_p) fits one server."""
    c = cluster
    n = np.arange(1, int(jobs.chunks[j]) + 1, dtype=np.float64)
    comm = 2.0 * float(jobs.grad_mb[j]) * 8.0 / (c.worker_bw * 1000.0) / 3600.0  # (M,) 2π/b_m in slots
    if c.arch == "ps":
        use = n[None, None, :, None] * c.worker_res[:, None, None, :] + c.ps_res[None, :, None, :]  # (M, P, N, R)
    else:
        use = (n[None, :, None] * c.worker_res[:, None, :])[:, None, :, :]  # (M, 1, N, R)
    fits = np.zeros(use.shape[:3], dtype=bool)
    for cap in np.unique(c.capacity, axis=0):  # one check per distinct server shape
        fits |= np.all(use <= cap + EPS_FIT, axis=-1)
    if c.arch == "ps":
        it = jobs.v[j][:, None, None] + jobs.ps_update[j][None, :, None] + np.where(fits, 0.0, comm[:, None, None])
    else:
        it = jobs.v[j][:, None, None] + (float(jobs.ra_update[j]) + np.where(fits, 0.0, comm[:, None, None])) * (
            (n - 1.0) / n)
    rate = (n / it).max(axis=1).reshape(-1)
    per = (use * (it / n)[..., None]).min(axis=1).reshape(-1, c.num_resources)
    return rate, per


def job_configurations(cluster: HeteroCluster, jobs: HeteroJobs, j: int, max_configs: int = 12):
    """The relaxed configurations of job j: ``(rho, alpha)``, ``rho`` (K,) the progress per slot (mini-batches) and
    ``alpha`` (K, R) the least resource use per mini-batch of progress, sorted by decreasing ``rho``.

    Every legal configuration (m, N <= D_j, PS type p) runs N type-m workers (and >= 1 type-p PS) at N / iter
    mini-batches per slot, iter its iteration time with q = 1 only when N e_m (+ z_p) fits one server, and holds at
    least N e_m (+ z_p) per slot. Each is *dominated* by one returned configuration: rho >= its rate and alpha <= its
    use per mini-batch, componentwise (the PS type is relaxed first, then dominated configurations are dropped, then
    neighbours in rate are merged, faster rate and smaller use, down to ``max_configs``)."""
    rate, per = _raw_configurations(cluster, jobs, j)
    order = np.lexsort((per.sum(axis=1), -rate))
    rate, per = rate[order], per[order]
    # Pareto filter: drop a configuration that an earlier one (faster or as fast) uses no more than
    le = np.all(per[:, None, :] <= per[None, :, :] + 1e-15, axis=-1)  # le[i', i]: i' uses no more than i
    dominated = np.any(np.triu(le, k=1), axis=0)
    rho, alpha = rate[~dominated], per[~dominated]
    while rho.size > max_configs:  # merge the two neighbours closest in rate (the faster rate, the smaller use)
        i = int(np.argmin(rho[:-1] / rho[1:]))
        alpha[i] = np.minimum(alpha[i], alpha[i + 1])
        rho, alpha = np.delete(rho, i + 1), np.delete(alpha, i + 1, axis=0)
    return rho, alpha


#: capacity tolerance of "fits one server" (the simulator's ledger accepts 1e-9 over capacity)
EPS_FIT = 1e-9
#: the wall-clock limit of the HiGHS solve, in multiples of ``time_limit_s``
WALL_FACTOR = 10.0


def _progress_needed(work: np.ndarray, rho_max: np.ndarray) -> np.ndarray:
    """P_j: the progress every schedule gives job j before it completes, a hair under W_j: the reservation driver's
    duration ceil(W it / N - 1e-9) gives at least W_j - 1e-9 ρ_j, the slot driver stops at W_j - 1e-6.   # (J,)"""
    return np.asarray(work, dtype=np.float64) - np.maximum(1e-6, 1e-9 * rho_max)


def standalone_lower_bound(cluster: HeteroCluster, jobs: HeteroJobs) -> float:
    """Σ_j w_j (a_j + ceil(P_j / ρ_j - 1e-9)), ρ_j the fastest progress of job j per slot (co-located only where it
    fits one server): no schedule, reservation or slot-driven, completes job j sooner."""
    rho = np.array([_raw_configurations(cluster, jobs, j)[0].max() for j in range(jobs.num_jobs)])
    d = np.ceil(_progress_needed(jobs.work, rho) / rho - 1e-9)
    return float(np.sum(jobs.weight * (jobs.arrival + d)))


def pooled_lp_lower_bound(cluster: HeteroCluster, jobs: HeteroJobs, *, max_vars: int = 60_000,
                          max_configs: int = 8, time_limit_s: float = 10.0) -> float:
    """The pooled, time-binned LP bound (module docstring): a lower bound on Σ_j w_j c_j of every legal schedule.

    Variables y[j, b, k] >= 0: the time job j runs configuration k in bin b (bins of ``width`` slots from slot 1, the
    last one unbounded and uncapacitated), and C_j. Constraints: Σ_k y[j, b, k] <= the bin's time after a_j;
    Σ_{b,k} ρ_jk y = P_j; Σ_{j,k} α_jk^r ρ_jk y[j, b, k] <= width Σ_h C^r_h per bin and resource; C_j >= a_j +
    Σ_{b,k} y[j, b, k]; C_j >= Σ_{b,k} s_jb ρ_jk y[j, b, k] / P_j + P_j / (2 max_k ρ_jk), s_jb = max(a_j, bin start).
    ``width`` is the smallest power of two keeping the variables under ``max_vars`` (the size, not a clock, bounds
    the work: about 1 CPU second on HeteroML-v0). Returns ``nan`` when HiGHS does not reach the optimum within
    ``WALL_FACTOR`` x ``time_limit_s`` wall-clock seconds (a safety net on a shared machine), else the LP optimum
    less 1e-6 of it, the solver's tolerance. Raises ``ValueError`` for an instance without jobs."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix

    J, R = jobs.num_jobs, cluster.num_resources
    if J == 0:
        raise ValueError("the instance has no job")
    cfg = [job_configurations(cluster, jobs, j, max_configs) for j in range(J)]
    rmax = np.array([float(r[0]) for r, _ in cfg])
    P = _progress_needed(jobs.work, rmax)
    a = jobs.arrival.astype(np.float64)
    w = jobs.weight.astype(np.float64)
    pool = cluster.capacity.sum(axis=0)
    # the binned horizon: past the last arrival by the longest standalone run plus twice the pooled backlog of the
    # least-use configurations (any horizon is valid: the last bin is unbounded and uncapacitated)
    area = np.array([(al.min(axis=0) * P[j]) for j, (_, al) in enumerate(cfg)])  # (J, R)
    backlog = float(np.max(area.sum(axis=0) / np.maximum(pool, 1e-300)))
    end = float(a.max() + (P / rmax).max() + 2.0 * backlog)
    K = np.array([r.size for r, _ in cfg])
    width = 1.0
    while True:
        B = int(math.ceil((end - 1.0) / width)) + 1  # bins 0..B-1, bin B-1 unbounded
        nb = B - np.minimum(B - 1, np.floor((a - 1.0) / width).astype(np.int64))
        if int(np.sum(nb * K)) <= max_vars or width >= end:
            break
        width *= 2.0
    starts = 1.0 + width * np.arange(B)
    rows, cols, vals, rhs = [], [], [], []
    nrow = 0
    nvar = J  # C_j are variables 0..J-1
    ub: list[float] = [math.inf] * J
    cap_cols: list[list] = [[] for _ in range(B * R)]
    cap_vals: list[list] = [[] for _ in range(B * R)]
    for j in range(J):
        rho, alpha = cfg[j]
        k = rho.size
        b0 = B - int(nb[j])
        bins = np.arange(b0, B)
        lo = np.maximum(starts[bins], a[j])
        length = np.where(bins == B - 1, math.inf, starts[bins] + width - lo)
        v = nvar + np.arange(bins.size * k).reshape(bins.size, k)  # y[j, b, k]
        nvar += v.size
        ub.extend(np.repeat(length, k).tolist())
        flat = v.reshape(-1)
        # mean busy time: Σ s ρ y / P - C_j <= -P / (2 ρ_max)
        rows += [nrow] * (flat.size + 1)
        cols += flat.tolist() + [j]
        vals += (np.outer(lo, rho).reshape(-1) / P[j]).tolist() + [-1.0]
        rhs.append(-P[j] / (2.0 * rmax[j]))
        # progress: -Σ ρ y <= -P
        rows += [nrow + 1] * flat.size
        cols += flat.tolist()
        vals += (-np.tile(rho, bins.size)).tolist()
        rhs.append(-P[j])
        # busy time: Σ y - C_j <= -a_j
        rows += [nrow + 2] * (flat.size + 1)
        cols += flat.tolist() + [j]
        vals += [1.0] * flat.size + [-1.0]
        rhs.append(-a[j])
        nrow += 3
        if k > 1:  # one configuration at a time: Σ_k y[j, b, k] <= the bin's time
            fin = np.flatnonzero(np.isfinite(length))
            rows += np.repeat(nrow + np.arange(fin.size), k).tolist()
            cols += v[fin].reshape(-1).tolist()
            vals += [1.0] * (fin.size * k)
            rhs += length[fin].tolist()
            nrow += fin.size
        use = alpha * rho[:, None]  # (k, R) use per slot of running configuration k
        for i, b in enumerate(bins.tolist()):
            if b == B - 1:
                continue
            for r in range(R):
                nz = np.flatnonzero(use[:, r] > 0)
                cap_cols[b * R + r] += v[i, nz].tolist()
                cap_vals[b * R + r] += use[nz, r].tolist()
    for br in range(B * R):
        if cap_cols[br]:
            rows += [nrow] * len(cap_cols[br])
            cols += cap_cols[br]
            vals += cap_vals[br]
            rhs.append(width * float(pool[br % R]))
            nrow += 1
    A = csr_matrix((vals, (rows, cols)), shape=(nrow, nvar))
    cost = np.zeros(nvar)
    cost[:J] = w
    res = linprog(cost, A_ub=A, b_ub=np.array(rhs), bounds=np.column_stack([np.zeros(nvar), ub]), method="highs",
                  options={"time_limit": WALL_FACTOR * float(time_limit_s)})
    if res.status != 0:
        return math.nan
    return float(res.fun) * (1.0 - 1e-6)


def offline_bound(env, *, time_limit_s: float = 10.0) -> Bound:
    """The HeteroML offline bound of the episode ``env`` (unwrapped, after ``reset``): the larger of
    :func:`pooled_lp_lower_bound` (``nan`` when HiGHS does not finish, see there) and
    :func:`standalone_lower_bound`, a lower bound on Σ_j w_j c_j (the episode objective) of every legal schedule."""
    t0 = time.perf_counter()
    parts = {"standalone": standalone_lower_bound(env.cluster, env.jobs),
             "pooled LP": pooled_lp_lower_bound(env.cluster, env.jobs, time_limit_s=time_limit_s)}
    valid = {k: v for k, v in parts.items() if math.isfinite(v)}
    best = max(valid, key=valid.get)
    return Bound(
        value=valid[best], name="pooled LP" if best == "pooled LP" else "standalone completion", sense="lower",
        parts=parts,
        bounds="every legal schedule, clairvoyant included: reservation (one plan per job) and slot-driven "
               "(elastic, preemptive) alike",
        seconds=time.perf_counter() - t0,
    )
