"""Offline lower bound on the total JCT of Wang et al.'s model, Σ_j (c_j − r_j), for SMALL instances.

The bound is the optimum of the time-indexed relaxation of ILP (4) of Wang et al., "Preemptive Scheduling for
Distributed Machine Learning Jobs in Edge-Cloud Networks", IEEE JSAC 40(8), 2022 (§IV-B "Problem Reformulation",
Eq. (3), ILP (4), Lemma 1 and its proof in Appendix B), the bound the paper's "actual competitive ratio"
experiment (§V-C, Figs. 12-13) divides by. The paper's Lemma 2 (dual feasibility), on which its competitive-ratio
proof rests, fails as written (an idle qualified worker at t = r_j would need α_jd <= 0), so the ratio is measured,
not asserted. It is the denominator of the empirical competitive ratio:
``ratio = Σ JCT(A_online at speed 1+ε) / LB``. The LP is solved with SciPy's HiGHS
(``scipy.optimize.linprog(method="highs")``); ``integer=True`` solves the 0/1 version with
``scipy.optimize.milp`` and returns HiGHS's proven dual bound.

Model (slotted)
---------------
* Slot ``t`` covers ``[t, t+1)``. A chunk that is processed in slots ``t_1 < ... < t_p`` completes at
  ``c_jd = t_p + 1`` (the END of its last processing slot; the paper's "argmax t" in (2j) is the START of
  that slot, off by one).
* Chunk times are whole slots: ``p = chunk_time_slots(E, B, τ, speed=1.0, slotted=True)`` (speed 1: speed
  augmentation belongs to the online side only, Definition 1). ``p0`` uses τ^(0) = m + G + 2q/b (b = the job's
  ``bandwidth_mbps``), ``p1`` uses τ^(1) = m + G.
* Chunk ``c = (j, d)`` may use every qualified edge worker ``w`` (``cluster.worker_type[w] ==
  jobs.worker_type[j]``) from slot ``R_{j,w} = ceil(r_j + Δ_{j,s(w)})`` on, and, if ``cluster.has_cloud``,
  its own dedicated cloud worker (no capacity constraint) from slot ``ceil(r_j + Δ_{j,c})`` on.
* Processing times in the relaxation:
    - ``zeta_one=True`` (the paper's simplification for its competitive-ratio experiment, §V-C): every option
      uses ``p1`` (ζ_j = 1 everywhere, n = 1/(m+G)).
    - ``zeta_one=False`` (default, tighter): edge workers use ``p0`` and the cloud uses ``p1``.
  Both are relaxations of the simulator: a real edge chunk always runs at ``p0`` (any edge part forces
  ζ_j = 0) and ``p1 <= p0``; a real cloud chunk runs at ``p1`` (ζ_j = 1) or at ``p0 >= p1`` (split job,
  which the paper runs at once in the cloud). Any ``p`` real slots of service contain ``p' <= p`` slots, all
  ending by ``c_jd``, and the argument below only needs ``p'`` distinct slots ending by ``c_jd``.
* Variables ``y[c, w, t] ∈ [0, 1]`` (``{0, 1}`` with ``integer=True``) for ``t ∈ [R_{c,w}, T)``.
* Constraints (ILP (4) without the PS/ζ constraints (4c, 4d, 4f, 4g), which only restrict schedules):
    - (4a) cover:        Σ_{w,t} y[c,w,t] / p_{c,w} >= 1                per chunk;
    - (4b) capacity:     Σ_c y[c,w,t] <= 1                            per edge worker and slot;
    - (4e) one place:    Σ_w y[c,w,t] <= 1                            per chunk and slot.
  As in ILP (4), a chunk may migrate between workers ((4e) is per slot);
  this only weakens the bound.

Objective and why it is a lower bound
-------------------------------------
Each variable gets the per-chunk completion weight (a "mean busy time" form of Eq. (3))::

    a[c,w,t] = (t − r̂_j + (p_{c,w} + 1)/2) / p_{c,w},     r̂_j = ceil(r_j),

and the LP minimises Σ_{c,w,t} a[c,w,t] y[c,w,t] / D_j (``objective="chunk_average"``, default: the
paper's Σ_jd f_jd, Eq. (4), with the slot-end correction above).

*Claim.* For every feasible slot-aligned non-migrating schedule of the simulator (each chunk runs on one
worker for p slots, no service before ``r_j + Δ``, a worker runs one chunk per slot),
``OPT(LP) <= Σ_j (c_j − r_j)``.

*Proof.* Map the schedule to ``y``: for a chunk on edge worker w put ``y = 1`` on its ``p0 = p_{c,w}``
slots; for a cloud chunk put ``y = 1`` on the last ``p_{c,cloud} <= p`` of its real slots (``p1 <= p0``).
This ``y`` satisfies (4a), (4b), (4e) and the release times (the real start is ``>= r_j + Δ`` and integer,
hence ``>= ceil(r_j + Δ)``). For one chunk, its ``p`` chosen slots are distinct integers ``<= c_jd − 1``,
so Σ t <= p·c_jd − p(p+1)/2 and

    Σ_t a[c,w,t] = (Σ t)/p − r̂_j + (p+1)/2 <= c_jd − r̂_j <= c_jd − r_j.                        (*)

This is Lemma 1's per-chunk step f_jd <= (c_jd − r_j)/D_j, made exact for slots ending at c_jd (the paper's
proof uses slot starts, off by one). Hence OPT(LP) <= Σ_jd (c_jd − r_j)/D_j <= Σ_j (c_j − r_j),
the second step being Lemma 1's c_jd <= c_j. The 0/1 version is a restriction of the LP that still holds the
mapped schedule, so LP <= MILP <= Σ_j (c_j − r_j). □

``objective="job_max"`` (sound strengthening, not in the paper): minimise Σ_j C_j subject to
``C_j >= Σ_{w,t} a[c,w,t] y[c,w,t]`` for every chunk c of j and ``C_j >= trivial_j`` (below). By (*) and
c_jd <= c_j the mapped schedule satisfies these with ``C_j = c_j − r_j``; the max over chunks is at least
the paper's average over chunks, so this bound dominates the default one. Note: the chunks of a job are
interchangeable, so averaging an LP solution over permutations of them equalises their Σ a·y; the LP
("job_max", fractional) therefore gains only from the per-job trivial floor, i.e. it returns
Σ_j max(avg_j, trivial_j) instead of max(Σ_j avg_j, Σ_j trivial_j). With ``integer=True`` it is genuinely
stronger (and slower).

Trivial bound. Every job needs at least one chunk fully processed after its upload, so
``c_j − r_j >= trivial_j = min_{options}(ceil(r_j + Δ) + p) − r̂_j``. The returned ``value`` is
``max(lp_value, Σ_j trivial_j)``; both parts are reported.

Horizon. By default ``T = R_max + Σ_c max_w p_{c,w} + 1`` with ``R_max`` the latest release slot of any
(chunk, worker) pair. Exchange argument: in an optimal LP solution (the one of least Σ a·y among optima),
mass of chunk c on worker w in slot t could move to any earlier slot ``t' ∈ [R_max, t)`` where neither w
nor c is saturated, strictly lowering Σ a·y; each saturated slot carries one unit of the total mass
``<= Σ_c max_w p_{c,w}``. So the optimum over ``[0, T)`` equals the optimum over any longer horizon, and
the bound holds against every schedule, however late. A user ``horizon_slots`` shorter than that makes the
bound valid only against schedules that finish by it (or infeasible).

Deviations from the paper (all keep the bound valid)
----------------------------------------------------
* Completion weight ``(t − r̂ + (p+1)/2)/p`` instead of Eq. (3)'s ``(t − r)/p``: measures from the END of
  each slot and adds the mean-busy-time correction; the paper's proof shows its own form loses p/2.
  With it the bound is exact on a lone chunk (Δ + p) and on a cloud-only instance (Σ_j (Δ_c + p1)).
* Non-integer data: release slot ``ceil(r_j + Δ)`` (the earliest integer slot a slot-aligned simulator can
  use, whether it rounds r and Δ separately or not) and ``r̂_j = ceil(r_j)`` in the weights, which is valid
  whether JCT is measured from r_j or from ceil(r_j). With integer r and Δ (the paper's setting) these are
  exactly r_j and r_j + Δ.
* ``zeta_one=False`` (default) keeps the edge's communication term; ``zeta_one=True`` is the paper's
  ζ_j = 1 simplification (weaker, what the paper's §V-C uses).
* PS constraints (4c)/(4d) and ζ consistency (4f)/(4g) are dropped (relaxation).
* The bound is for slot-aligned schedules with whole-slot chunk times (run the online side in
  slotted mode for the competitive ratio). It is not a bound for the continuous-time simulator with fractional p.
* LP status other than optimal: with ``integer=True`` and a time limit, HiGHS's proven MIP dual bound is
  used; for the LP, only the trivial bound is returned (``status="time_limit"``, ``lp_value=nan``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from edgegym.core.types import Cluster, JobSet
from edgegym.families.edge_cloud.rates import chunk_time_slots, iteration_time_h

__all__ = [
    "DEFAULT_MAX_VARIABLES",
    "LowerBoundResult",
    "empirical_competitive_ratio",
    "lp_lower_bound",
    "slotted_chunk_times",
]

DEFAULT_MAX_VARIABLES = 2_000_000
_EPS = 1e-9


@dataclass(frozen=True)
class LowerBoundResult:
    """Result of :func:`lp_lower_bound`.

    Attributes:
        value: the lower bound on Σ_j (c_j − r_j), ``max(lp_value, trivial_value)`` (slots).
        status: ``"optimal"`` or ``"time_limit"``.
        lp_value: optimum (or, for a timed-out MILP, HiGHS's proven dual bound) of the time-indexed
            relaxation; ``nan`` when a plain LP hit the time limit.
        trivial_value: Σ_j min over options of (release slot + p) − ceil(r_j).
        num_variables: number of LP columns (``y`` variables, plus one ``C_j`` per job for ``job_max``).
        num_constraints: number of LP rows.
        horizon_slots: the horizon T (slots ``0 .. T−1``).
        solve_time_s: wall-clock time of the HiGHS call.
        per_chunk: for each chunk in job-major order ``(j, d, bound)`` with ``bound`` = Σ a·y of that
            chunk, a lower bound on ``c_jd − ceil(r_j)`` in the optimal LP solution; ``None`` unless an
            optimal solution is available.
    """

    value: float
    status: str
    lp_value: float
    trivial_value: float
    num_variables: int
    num_constraints: int
    horizon_slots: int
    solve_time_s: float
    per_chunk: tuple[tuple[int, int, float], ...] | None = None


def _ceil(x) -> np.ndarray:
    return np.ceil(np.asarray(x, dtype=float) - _EPS).astype(np.int64)


def slotted_chunk_times(jobs: JobSet) -> tuple[np.ndarray, np.ndarray]:
    """(p0, p1) per job, in whole slots at speed 1: edge rate (ζ = 0) and all-in-cloud rate (ζ = 1)."""
    out = []
    for all_in_cloud in (False, True):
        tau = iteration_time_h(
            jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, all_in_cloud
        )
        p = chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau, speed=1.0, slotted=True)
        out.append(np.asarray(p, dtype=float).astype(np.int64))
    return out[0], out[1]


def _options(cluster: Cluster, jobs: JobSet, zeta_one: bool):
    """Per (job, option) arrays: job, worker (−1 = dedicated cloud), release slot, processing slots."""
    if cluster.num_workers and jobs.num_edge_servers < cluster.num_edge_servers:
        raise ValueError(
            f"jobs.upload_delay_edge_slots has {jobs.num_edge_servers} server columns, "
            f"cluster has {cluster.num_edge_servers} edge servers"
        )
    p0, p1 = slotted_chunk_times(jobs)
    p_edge = p1 if zeta_one else p0
    J = jobs.num_jobs
    jj, ww = np.nonzero(jobs.worker_type[:, None] == cluster.worker_type[None, :])
    rel_edge = _ceil(jobs.arrival_slots[jj] + jobs.upload_delay_edge_slots[jj, cluster.worker_server[ww]])
    opt_job = [jj.astype(np.int64)]
    opt_worker = [ww.astype(np.int64)]
    opt_rel = [rel_edge]
    opt_p = [p_edge[jj]]
    if cluster.has_cloud:
        jc = np.arange(J, dtype=np.int64)
        opt_job.append(jc)
        opt_worker.append(np.full(J, -1, dtype=np.int64))
        opt_rel.append(_ceil(jobs.arrival_slots + jobs.upload_delay_cloud_slots))
        opt_p.append(p1)
    o_job, o_worker, o_rel, o_p = (np.concatenate(a) for a in (opt_job, opt_worker, opt_rel, opt_p))
    order = np.lexsort((o_worker, o_job))  # grouped by job
    o_job, o_worker, o_rel, o_p = o_job[order], o_worker[order], o_rel[order], o_p[order]
    missing = np.setdiff1d(np.arange(J), o_job)
    if missing.size:
        raise ValueError(f"job(s) {missing.tolist()} have no qualified edge worker and the cluster has no cloud")
    return o_job, o_worker, o_rel, o_p


def _compress_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Map row keys to consecutive row ids, dropping rows with a single entry (implied by y <= 1)."""
    if keys.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool), 0
    _, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
    keep_row = counts >= 2
    new_id = np.cumsum(keep_row) - 1
    mask = keep_row[inv]
    return new_id[inv[mask]], mask, int(keep_row.sum())


def lp_lower_bound(
    cluster: Cluster,
    jobs: JobSet,
    *,
    zeta_one: bool = False,
    integer: bool = False,
    horizon_slots: int | None = None,
    time_limit_s: float = 60,
    objective: Literal["chunk_average", "job_max"] = "chunk_average",
    max_variables: int = DEFAULT_MAX_VARIABLES,
) -> LowerBoundResult:
    """Lower bound on Σ_j (c_j − r_j) from the time-indexed relaxation of Wang et al.'s ILP (4).

    See the module docstring for the model, the proof of validity and the deviations.

    Args:
        cluster: edge workers (typed) and whether the cloud exists.
        jobs: the jobs; arrivals and upload delays in slots (integers in the paper's setting).
        zeta_one: use the all-in-cloud rate ``p1`` on every worker (paper's simplification, weaker); by
            default edge workers use ``p0`` and the cloud ``p1``.
        integer: solve the 0/1 program with ``scipy.optimize.milp`` (tighter, slower).
        horizon_slots: T; default is the safe horizon ``R_max + Σ_c max p + 1``.
        time_limit_s: HiGHS time limit.
        objective: ``"chunk_average"`` (paper's Σ_jd f_jd, default) or ``"job_max"`` (Σ_j max_d, stronger).
        max_variables: raise ``ValueError`` if the LP would need more ``y`` variables than this.

    Returns:
        A :class:`LowerBoundResult`; ``value`` is the bound.
    """
    if objective not in ("chunk_average", "job_max"):
        raise ValueError(f"objective must be 'chunk_average' or 'job_max', got {objective!r}")
    J = jobs.num_jobs
    if J == 0:
        return LowerBoundResult(0.0, "optimal", 0.0, 0.0, 0, 0, 0, 0.0, ())
    o_job, o_worker, o_rel, o_p = _options(cluster, jobs, zeta_one)
    D = jobs.num_chunks.astype(np.int64)
    r_hat = _ceil(jobs.arrival_slots)

    # Trivial bound: one chunk of each job must be fully processed after its upload.
    finish = (o_rel + o_p).astype(float)
    best = np.full(J, np.inf)
    np.minimum.at(best, o_job, finish)
    trivial_j = best - r_hat
    trivial_value = float(trivial_j.sum())

    # Horizon.
    pmax_job = np.zeros(J, dtype=np.int64)
    np.maximum.at(pmax_job, o_job, o_p)
    safe_T = int(o_rel.max() + int((pmax_job * D).sum()) + 1)
    T = safe_T if horizon_slots is None else int(horizon_slots)
    if T <= 0:
        raise ValueError(f"horizon_slots must be > 0, got {T}")

    # Chunk-option pairs: each chunk of job j gets every option of job j.
    n_opt_job = np.bincount(o_job, minlength=J)
    opt_start = np.concatenate(([0], np.cumsum(n_opt_job)[:-1]))
    chunk_job = np.repeat(np.arange(J), D)
    C = int(D.sum())
    chunk_d = np.arange(C) - np.repeat(np.concatenate(([0], np.cumsum(D)[:-1])), D)
    pair_chunk = np.repeat(np.arange(C), n_opt_job[chunk_job])
    pair_opt = np.arange(pair_chunk.size) - np.repeat(
        np.concatenate(([0], np.cumsum(n_opt_job[chunk_job])[:-1])), n_opt_job[chunk_job]
    )
    pair_opt = opt_start[chunk_job[pair_chunk]] + pair_opt
    pair_len = np.maximum(T - o_rel[pair_opt], 0)
    n_y = int(pair_len.sum())
    if n_y > max_variables:
        raise ValueError(
            f"time-indexed LP too large: {n_y} variables ({C} chunks, {pair_chunk.size} chunk-worker "
            f"pairs, horizon {T} slots) exceeds max_variables={max_variables}; use a smaller instance"
        )

    # Variables y (pair-major, then slot).
    v_pair = np.repeat(np.arange(pair_chunk.size), pair_len)
    v_t = o_rel[pair_opt][v_pair] + (np.arange(n_y) - np.repeat(np.cumsum(pair_len) - pair_len, pair_len))
    v_chunk = pair_chunk[v_pair]
    v_job = chunk_job[v_chunk]
    v_opt = pair_opt[v_pair]
    v_p = o_p[v_opt].astype(float)
    v_worker = o_worker[v_opt]
    a = (v_t - r_hat[v_job] + (v_p + 1.0) / 2.0) / v_p  # per-chunk completion weight, see (*)

    rows, cols, data, b_ub = [], [], [], []
    n_rows = 0
    # (4a) cover: −Σ y/p <= −1.
    rows.append(v_chunk)
    cols.append(np.arange(n_y))
    data.append(-1.0 / v_p)
    b_ub.append(-np.ones(C))
    n_rows += C
    # (4b) edge worker capacity.
    edge = np.nonzero(v_worker >= 0)[0]
    rid, mask, n_new = _compress_rows(v_worker[edge] * T + v_t[edge])
    rows.append(n_rows + rid)
    cols.append(edge[mask])
    data.append(np.ones(rid.size))
    b_ub.append(np.ones(n_new))
    n_rows += n_new
    # (4e) a chunk in one place per slot.
    rid, mask, n_new = _compress_rows(v_chunk * T + v_t)
    rows.append(n_rows + rid)
    cols.append(np.arange(n_y)[mask])
    data.append(np.ones(rid.size))
    b_ub.append(np.ones(n_new))
    n_rows += n_new

    if objective == "job_max":
        # C_j >= Σ a·y of each chunk of j; C_j >= trivial_j (bound).
        n_var = n_y + J
        rows.append(n_rows + v_chunk)
        cols.append(np.arange(n_y))
        data.append(a)
        rows.append(n_rows + np.arange(C))
        cols.append(n_y + chunk_job)
        data.append(-np.ones(C))
        b_ub.append(np.zeros(C))
        n_rows += C
        c_obj = np.concatenate((np.zeros(n_y), np.ones(J)))
        lb = np.concatenate((np.zeros(n_y), trivial_j))
        ub = np.concatenate((np.ones(n_y), np.full(J, np.inf)))
    else:
        n_var = n_y
        c_obj = a / D[v_job]
        lb = np.zeros(n_y)
        ub = np.ones(n_y)

    A = sparse.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, n_var))
    b = np.concatenate(b_ub)

    t0 = time.perf_counter()
    if integer:
        integrality = np.zeros(n_var)
        integrality[:n_y] = 1
        res = milp(
            c_obj,
            constraints=LinearConstraint(A, -np.inf, b),
            integrality=integrality,
            bounds=Bounds(lb, ub),
            options={"time_limit": float(time_limit_s), "disp": False, "mip_rel_gap": 1e-9},
        )
    else:
        res = linprog(
            c_obj,
            A_ub=A,
            b_ub=b,
            bounds=np.column_stack((lb, ub)),
            method="highs",
            options={"time_limit": float(time_limit_s)},
        )
    solve_time = time.perf_counter() - t0

    if res.status == 2:
        raise ValueError(
            f"time-indexed LP infeasible with horizon {T} slots (safe horizon is {safe_T}); horizon_slots too short?"
        )
    x = res.x if res.status == 0 else None
    if integer:
        dual = getattr(res, "mip_dual_bound", None)
        if res.status == 0:
            lp_value = float(res.fun)
            if dual is not None and np.isfinite(dual):
                lp_value = min(lp_value, float(dual))
            status = "optimal"
        elif res.status == 1:
            lp_value = float(dual) if dual is not None and np.isfinite(dual) else math.nan
            status = "time_limit"
        else:
            raise RuntimeError(f"HiGHS MILP failed: status {res.status}: {res.message}")
    else:
        if res.status == 0:
            lp_value = float(res.fun)
            status = "optimal"
        elif res.status == 1:
            lp_value = math.nan
            status = "time_limit"
        else:
            raise RuntimeError(f"HiGHS LP failed: status {res.status}: {res.message}")

    per_chunk = None
    if x is not None:
        chunk_bound = np.bincount(v_chunk, weights=a * x[:n_y], minlength=C)
        per_chunk = tuple((int(j), int(d), float(v)) for j, d, v in zip(chunk_job, chunk_d, chunk_bound, strict=True))
    value = trivial_value if math.isnan(lp_value) else max(lp_value, trivial_value)
    return LowerBoundResult(
        value=float(value),
        status=status,
        lp_value=lp_value,
        trivial_value=trivial_value,
        num_variables=int(n_var),
        num_constraints=int(n_rows),
        horizon_slots=T,
        solve_time_s=float(solve_time),
        per_chunk=per_chunk,
    )


def empirical_competitive_ratio(online_total_jct: float, bound: float | LowerBoundResult) -> float:
    """Empirical competitive ratio (the paper's §V-C): Σ JCT of the online algorithm (at speed 1+ε, slotted mode)
    divided by the offline bound.

    ``bound`` may be a number or a :class:`LowerBoundResult` (its ``value`` is used). The result is an
    upper bound on the true ratio to the offline optimum (the denominator is <= OPT).
    """
    lb = bound.value if isinstance(bound, LowerBoundResult) else float(bound)
    if not np.isfinite(lb) or lb <= 0:
        raise ValueError(f"lower bound must be finite and > 0, got {lb}")
    online = float(online_total_jct)
    if not np.isfinite(online) or online < 0:
        raise ValueError(f"online_total_jct must be finite and >= 0, got {online}")
    return online / lb
