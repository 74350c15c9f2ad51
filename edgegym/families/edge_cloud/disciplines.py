"""Job-level baseline scheduling disciplines of Wang et al. (JSAC 2022): SRTF, Tiresias-L and BatchSche.

Source: Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks"
(IEEE JSAC 40(8), 2022, Sec. V-A "Baselines"), which gives one line per baseline.
The concrete rules implemented here are our reconstructions ("Rec" below) of those lines; the paper leaves
out worker counts, cloud use, migration and queue thresholds, inferred here from its Figs. 7-8 (SRTF and
Tiresias-L are in the edge-only category) and its discussion of communication overhead (§V-B).

Each discipline is a pure function ``simulate_<name>(cluster, jobs, *, speed=1.0, rng=None, **knobs)``
returning a :class:`~edgegym.core.metrics.ScheduleOutcome`. They are action-independent: the whole episode
is simulated in one call, deterministically (``rng`` is accepted for API uniformity and unused).
:data:`DISCIPLINES` maps the env's ``discipline`` names to them.

Times (the paper's Eq. (1), §III): ``p0[j] = chunk_time_slots(E_j, B_j, τ_j^(0), speed)`` is the chunk time on an edge
worker (ζ_j = 0, communication 2q_j/b_j included), ``p1[j]`` the chunk time with the whole job in the cloud
(ζ_j = 1).
Upload delays Δ_js / Δ_{j,c} are not scaled by ``speed``.

Outputs common to all three (``ScheduleOutcome``):

- ``completion_slots`` c_j (float: completions may fall inside a slot);
- ``segments`` ``[worker, start, end, job]``: intervals in which an edge worker *made progress* on a job
  (a job holding workers while waiting for its data is not in ``segments``); contiguous progress of one job
  on one worker is one row; rows are sorted by (start, worker);
- ``preemptions``: whole-job suspensions (SRTF, Tiresias-L); 0 for BatchSche;
- ``edge_chunks`` / ``cloud_chunks``: D_j on the side where the job ran (every discipline here runs a job
  entirely on the edge or entirely in the cloud, so ``edge_fraction`` of ``episode_metrics`` is a share of
  chunks; the gang size is not reported per job);
- ``extra``: scalar counters ``migrations``, ``comm_time_slots`` (the paper defines the communication-time rate
  like the JCT rate, §V-B; our reading: upload + migration delays
  + E_j D_j B_j · 2q_j/b_j / speed for edge jobs; Δ_{j,c} for cloud jobs), ``upload_time_slots``,
  ``migration_time_slots``, ``fallbacks`` and, for BatchSche, ``deferrals`` and ``batches``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ...core.metrics import ScheduleOutcome
from ...core.types import Cluster, JobSet
from .rates import chunk_time_slots, comm_time_h, iteration_time_h

__all__ = [
    "DISCIPLINES",
    "GANG_SIZES",
    "gang_sizes",
    "simulate_batchsche",
    "simulate_srtf",
    "simulate_tiresias_l",
]

_EPS = 1e-9


# --------------------------------------------------------------------------------------------------------
# Shared preparation
# --------------------------------------------------------------------------------------------------------


class _Prep:
    """Per-episode constants shared by the disciplines (all arrays indexed by job or worker)."""

    __slots__ = (
        "J",
        "W",
        "S",
        "r",
        "D",
        "p0",
        "p1",
        "comm_edge",
        "jtype",
        "qual_count",
        "type_workers",
        "worker_server",
        "delta_e",
        "delta_c",
        "has_cloud",
    )

    def __init__(self, cluster: Cluster, jobs: JobSet, speed: float) -> None:
        J = jobs.num_jobs
        if J and jobs.num_edge_servers != cluster.num_edge_servers:
            raise ValueError(
                f"jobs give upload delays for {jobs.num_edge_servers} edge servers, "
                f"the cluster has {cluster.num_edge_servers}"
            )
        self.J = J
        self.W = cluster.num_workers
        self.S = cluster.num_edge_servers
        self.r = np.asarray(jobs.arrival_slots, dtype=float)
        self.D = np.asarray(jobs.num_chunks, dtype=np.int64)
        tau0 = iteration_time_h(
            jobs.minibatch_time_h,
            jobs.ps_update_ms,
            jobs.grad_size_mb,
            jobs.bandwidth_mbps,
            all_in_cloud=False,
        )
        tau1 = iteration_time_h(
            jobs.minibatch_time_h,
            jobs.ps_update_ms,
            jobs.grad_size_mb,
            jobs.bandwidth_mbps,
            all_in_cloud=True,
        )
        self.p0 = np.atleast_1d(chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau0, speed)).astype(
            float
        )
        self.p1 = np.atleast_1d(chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau1, speed)).astype(
            float
        )
        # Worker-PS communication of a whole edge job: E_j D_j B_j · 2 q_j / b_j (/ speed, as it sits in p0).
        self.comm_edge = (
            np.asarray(jobs.epochs, dtype=float)
            * self.D
            * np.asarray(jobs.batches_per_chunk, dtype=float)
            * np.atleast_1d(comm_time_h(jobs.grad_size_mb, jobs.bandwidth_mbps))
            / speed
        )
        self.jtype = np.asarray(jobs.worker_type, dtype=np.int64)
        ntypes = max(cluster.num_worker_types, int(self.jtype.max()) + 1 if J else 0)
        wtype = np.asarray(cluster.worker_type, dtype=np.int64)
        counts = np.bincount(wtype, minlength=ntypes) if self.W else np.zeros(ntypes, dtype=np.int64)
        self.qual_count = counts[self.jtype] if J else np.zeros(0, dtype=np.int64)
        self.type_workers = [np.flatnonzero(wtype == k) for k in range(ntypes)]
        self.worker_server = np.asarray(cluster.worker_server, dtype=np.int64)
        self.delta_e = np.asarray(jobs.upload_delay_edge_slots, dtype=float).reshape(J, self.S)
        self.delta_c = np.asarray(jobs.upload_delay_cloud_slots, dtype=float)
        self.has_cloud = bool(cluster.has_cloud)


GANG_SIZES = ("trace_gpus", "chunks")


def _gang(num_gpus, D: np.ndarray, qual: np.ndarray, gang_size: str) -> np.ndarray:
    if gang_size == "trace_gpus":
        return np.minimum(np.minimum(np.asarray(num_gpus, dtype=np.int64), D), qual)
    if gang_size == "chunks":
        return np.minimum(D, qual)
    raise ValueError(f"unknown gang_size {gang_size!r} (valid: {', '.join(GANG_SIZES)})")


def gang_sizes(cluster: Cluster, jobs: JobSet, gang_size: str = "trace_gpus") -> np.ndarray:
    """Gang size g_j of SRTF / Tiresias-L (reconstruction, capped).                        # (J,) int

    ``gang_size="trace_gpus"``: g_j = min(num_gpus_j, D_j, #qualified edge workers in the cluster), the
    paper's "worker requirement" from the trace; ``"chunks"``: g_j = min(D_j, #qualified edge workers).
    0 means the job has no qualified edge worker at all (it then falls back to the cloud, see
    :func:`simulate_srtf`).
    """
    prep = _Prep(cluster, jobs, 1.0)
    return _gang(jobs.num_gpus, prep.D, prep.qual_count, gang_size)


def _segments_array(rows: list) -> np.ndarray:
    seg = np.asarray(rows, dtype=float).reshape(-1, 4)
    if len(seg):
        seg = seg[np.lexsort((seg[:, 0], seg[:, 1]))]
    return seg


# --------------------------------------------------------------------------------------------------------
# SRTF and Tiresias-L: per-slot gang scheduling on the edge, with event skipping
# --------------------------------------------------------------------------------------------------------


def _simulate_gang(
    cluster: Cluster,
    jobs: JobSet,
    speed: float,
    policy: str,
    thresholds: Sequence[float] | None = None,
    theta1_factor: float = 0.5,
    starvation_kappa: float | None = None,
    event_skip: bool = True,
    gang_size: str = "trace_gpus",
) -> ScheduleOutcome:
    prep = _Prep(cluster, jobs, speed)
    J, S = prep.J, prep.S
    r, D, p0, p1 = prep.r, prep.D, prep.p0, prep.p1
    g = _gang(jobs.num_gpus, D, prep.qual_count, gang_size)
    completion = np.full(J, np.nan)
    edge_chunks = np.zeros(J, dtype=np.int64)
    cloud_chunks = np.zeros(J, dtype=np.int64)
    rows: list[list[float]] = []
    upload_time = 0.0
    migration_time = 0.0
    comm_time = 0.0
    migrations = 0
    preemptions = 0

    # Jobs with no qualified edge worker: whole job in the cloud (ζ = 1) at arrival.
    no_edge = g == 0
    if np.any(no_edge) and not prep.has_cloud:
        bad = np.flatnonzero(no_edge)
        raise ValueError(f"jobs {bad.tolist()} have no qualified edge worker and the cluster has no cloud")
    for j in np.flatnonzero(no_edge):
        completion[j] = r[j] + prep.delta_c[j] + p1[j]
        cloud_chunks[j] = D[j]
        upload_time += prep.delta_c[j]
    fallbacks = int(no_edge.sum())

    edge_jobs = np.flatnonzero(~no_edge)
    work = D * p0  # worker-slots of work of each job on the edge
    rem = work.astype(float).copy()
    tol = _EPS * np.maximum(1.0, work)
    edge_chunks[edge_jobs] = D[edge_jobs]
    comm_time += float(prep.comm_edge[edge_jobs].sum())

    # Tiresias-L thresholds on attained service (worker-slots).
    if policy == "tiresias_l":
        if thresholds is None:
            base = float(np.median(work[edge_jobs])) if edge_jobs.size else 0.0
            thr = np.array([theta1_factor * base], dtype=float)
        else:
            thr = np.sort(np.asarray(thresholds, dtype=float).ravel())
    else:
        thr = np.zeros(0)

    elig = np.ceil(r - _EPS).astype(np.int64)  # first slot a job may run in
    jtype = prep.jtype
    wserver = prep.worker_server
    type_workers = prep.type_workers
    cap = np.array([ws.size for ws in type_workers], dtype=np.int64)

    running = np.zeros(J, dtype=bool)  # allocated in the previous interval
    started = np.zeros(J, dtype=bool)
    alloc: list[np.ndarray | None] = [None] * J  # current (or last) worker set
    data_ready: list[dict[int, float]] = [dict() for _ in range(J)]
    ready = np.zeros(J)  # time the job's data is on all its current servers
    attained = np.zeros(J)
    exec_slots = np.zeros(J)
    last_stop = np.zeros(J)
    seg_open = np.zeros(J, dtype=bool)
    seg_start = np.zeros(J)
    seg_end = np.zeros(J)

    def flush(j: int) -> None:
        if seg_open[j]:
            for w in alloc[j]:
                rows.append([float(w), seg_start[j], seg_end[j], float(j)])
            seg_open[j] = False

    def queue_of(j: int) -> int:
        return int(np.searchsorted(thr, attained[j] + _EPS, side="right"))

    order_arrival = edge_jobs[np.argsort(elig[edge_jobs], kind="stable")]
    nxt = 0
    active: list[int] = []
    n_left = edge_jobs.size
    t = int(elig[order_arrival[0]]) if n_left else 0
    while n_left:
        while nxt < order_arrival.size and elig[order_arrival[nxt]] <= t:
            active.append(int(order_arrival[nxt]))
            nxt += 1
        if not active:
            t = int(elig[order_arrival[nxt]])
            continue
        # Optional Tiresias starvation rule: a demoted job that waited >= κ × executed time is reset.
        if starvation_kappa is not None and thr.size:
            for j in active:
                if (
                    not running[j]
                    and queue_of(j) > 0
                    and t - last_stop[j] >= starvation_kappa * exec_slots[j] - _EPS
                ):
                    attained[j] = 0.0
        if policy == "srtf":
            order = sorted(active, key=lambda j: (rem[j] / g[j], r[j], j))
        else:
            order = sorted(active, key=lambda j: (queue_of(j), not running[j], r[j], j))
        # Admission: all-or-nothing, count-based per worker type, with backfill.
        free = cap.copy()
        admitted = []
        for j in order:
            k = jtype[j]
            if free[k] >= g[j]:
                free[k] -= g[j]
                admitted.append(j)
        adm = np.zeros(J, dtype=bool)
        adm[admitted] = True
        for j in active:
            if running[j] and not adm[j]:
                preemptions += 1
                running[j] = False
                last_stop[j] = t
                flush(j)
        # Placement: running jobs keep their workers; the others, in priority order, take their previous
        # workers that are still free, then workers packed on the servers with the most free qualified ones.
        claimed = np.zeros(prep.W, dtype=bool)
        for j in admitted:
            if running[j]:
                claimed[alloc[j]] = True
        for j in admitted:
            if running[j]:
                continue
            prev = alloc[j]
            take = prev[~claimed[prev]] if prev is not None else np.zeros(0, dtype=np.int64)
            need = int(g[j]) - take.size
            if need > 0:
                cand = type_workers[jtype[j]]
                cand = cand[~claimed[cand]]
                if take.size:
                    cand = cand[~np.isin(cand, take)]
                sv = wserver[cand]
                cnt = np.bincount(sv, minlength=S)
                holds = np.zeros(S, dtype=bool)
                if data_ready[j]:
                    holds[list(data_ready[j].keys())] = True
                srv = np.flatnonzero(cnt)
                srv = srv[np.lexsort((srv, ~holds[srv], -cnt[srv]))]
                rank = np.empty(S, dtype=np.int64)
                rank[srv] = np.arange(srv.size)
                pick = cand[np.lexsort((cand, rank[sv]))][:need]
                take = np.concatenate([take, pick])
            take = np.sort(take)
            claimed[take] = True
            alloc[j] = take
            servers = np.unique(wserver[take])
            dr = data_ready[j]
            if not started[j]:
                for s in servers:
                    dr[int(s)] = r[j] + prep.delta_e[j, s]
                d = float(prep.delta_e[j, servers].max())
                upload_time += d
                started[j] = True
            else:
                new = [int(s) for s in servers if int(s) not in dr]
                if new:
                    migrations += 1
                    d = float(prep.delta_e[j, new].max())
                    migration_time += d
                    for s in new:
                        dr[s] = t + prep.delta_e[j, s]
            ready[j] = max(dr[int(s)] for s in servers)
            running[j] = True
        # Next event: arrival, completion (workers free at the next slot boundary), Tiresias demotion or
        # promotion. Between events the admitted set provably does not change (running jobs only gain
        # priority), so the allocation of slot t holds for every slot in [t, t_next).
        t_next = math.inf
        if nxt < order_arrival.size:
            t_next = float(elig[order_arrival[nxt]])
        for j in admitted:
            c = max(t, ready[j]) + rem[j] / g[j]
            t_next = min(t_next, math.ceil(c - _EPS))
            if thr.size:
                q = queue_of(j)
                if q < thr.size:
                    t_next = min(t_next, t + math.ceil((thr[q] - attained[j]) / g[j] - _EPS))
        if starvation_kappa is not None and thr.size:
            for j in active:
                if not adm[j] and queue_of(j) > 0:
                    t_next = min(t_next, math.ceil(last_stop[j] + starvation_kappa * exec_slots[j] - _EPS))
        t_next = max(int(t_next), t + 1) if event_skip else t + 1
        # Advance the admitted jobs over [t, t_next).
        finished = []
        for j in admitted:
            span = t_next - t
            attained[j] += g[j] * span
            exec_slots[j] += span
            u = max(float(t), ready[j])
            if u < t_next:
                dur = min(t_next - u, rem[j] / g[j])
                if seg_open[j] and abs(seg_end[j] - u) <= _EPS:
                    seg_end[j] = u + dur
                else:
                    flush(j)
                    seg_open[j] = True
                    seg_start[j] = u
                    seg_end[j] = u + dur
                rem[j] -= dur * g[j]
                if rem[j] <= tol[j]:
                    rem[j] = 0.0
                    completion[j] = u + dur
                    flush(j)
                    running[j] = False
                    finished.append(j)
        if finished:
            fs = set(finished)
            active = [j for j in active if j not in fs]
            n_left -= len(finished)
        t = t_next

    comm_time += upload_time + migration_time
    extra = {
        "migrations": int(migrations),
        "comm_time_slots": float(comm_time),
        "upload_time_slots": float(upload_time),
        "migration_time_slots": float(migration_time),
        "fallbacks": fallbacks,
    }
    return ScheduleOutcome(
        completion_slots=completion,
        segments=_segments_array(rows),
        preemptions=int(preemptions),
        edge_chunks=edge_chunks,
        cloud_chunks=cloud_chunks,
        extra=extra,
    )


def simulate_srtf(
    cluster: Cluster,
    jobs: JobSet,
    *,
    speed: float = 1.0,
    rng: np.random.Generator | None = None,
    event_skip: bool = True,
    gang_size: str = "trace_gpus",
) -> ScheduleOutcome:
    """SRTF [Schrage & Miller], job-level preemptive, gang-scheduled, edge-only (paper Sec. V-A).

    Paper (Wang et al., IEEE JSAC 2022, Sec. V-A): "jobs are scheduled in the non-decreasing order of
    remaining training time". Rec (our reconstruction), per integer slot t (a job may run from slot
    ceil(r_j)):

    - job j needs g_j workers of its type, all or nothing (``gang_size="trace_gpus"``: g_j = min(num_gpus_j,
      D_j), the trace's GPU count; ``"chunks"``: g_j = D_j, the elastic reading); its D_j chunks are split
      round-robin over the g_j workers at edge speed, so its work is D_j·p0_j worker-slots and its remaining
      time is R_j = remaining work / g_j;
    - active jobs are sorted by (R_j, r_j, j); walking the list, a job is admitted if g_j qualified workers
      are still free (backfill: jobs that do not fit are skipped);
    - a job that ran in the previous slot and is not admitted is preempted (``preemptions`` += 1);
    - a job (re)started on a server that does not hold its data pays Δ_js (max over the new servers),
      holding its workers without progress (``migrations`` += 1, the delay counts as communication time).

    Deviations/reconstruction (decisions where the paper leaves room):

    1. Gang size cap: g_j is further capped at the number of qualified edge workers of the cluster, so that
       every job fits on an empty cluster (use :func:`gang_sizes`).
    2. A job with no qualified edge worker at all (g_j = 0) runs entirely in the cloud with ζ_j = 1 from its
       arrival: c_j = r_j + Δ_{j,c} + p1_j (counted in ``extra["fallbacks"]``). Without a cloud
       (``has_cloud=False``) such an instance is infeasible and ``ValueError`` is raised.
    3. Placement: admission is decided first (it depends only on per-type counts); then jobs that ran in
       the previous slot keep their workers (no gratuitous re-placement), and the other admitted jobs, in
       priority order, take their previous workers that are still free, then workers packed on the servers
       with the most free qualified workers (ties: servers already holding the job's data, then lower server
       index; lower worker index within a server).
    4. Data: a server "holds" a job's data once an upload to it has started; data is never evicted (storage is
       not modelled). The first start waits for the initial upload, which starts at r_j: no progress before
       r_j + max_s Δ_js over the servers used. A restart on new servers uploads from the restart slot t: no
       progress before t + Δ_js. Uploads continue while the job is suspended. Upload delays may be fractional,
       so progress may begin inside a slot.
    5. Progress is g_j worker-slots per slot; a job finishing inside a slot completes at the fractional time
       u + remaining/g_j (so c_j is a float), and its workers become free at the next slot boundary.
    6. ``segments`` hold progress only (not the migration/upload waiting time during which workers are held),
       so the segment lengths of a job sum to D_j·p0_j.
    7. PSs are not modelled (one PS per running job is implicit; PS capacity is not enforced).
    8. Event skipping: slots are simulated in blocks [t, t_next) between arrivals, completions (and, for
       Tiresias-L, demotions/promotions); the admitted set cannot change inside a block, so the result equals
       slot-by-slot simulation (``event_skip=False`` runs slot by slot, for testing).
    9. ``comm_time_slots`` = Σ initial upload delays + Σ migration delays + Σ_edge jobs E_j D_j B_j 2q_j/b_j /
       speed + Σ_cloud jobs Δ_{j,c} (our reading of the paper's communication time, §V-B).
    """
    del rng
    return _simulate_gang(cluster, jobs, speed, "srtf", event_skip=event_skip, gang_size=gang_size)


def simulate_tiresias_l(
    cluster: Cluster,
    jobs: JobSet,
    *,
    speed: float = 1.0,
    rng: np.random.Generator | None = None,
    thresholds: Sequence[float] | None = None,
    theta1_factor: float = 0.5,
    starvation_kappa: float | None = None,
    event_skip: bool = True,
    gang_size: str = "trace_gpus",
) -> ScheduleOutcome:
    """Tiresias-L [Gu et al., NSDI'19]: discretised 2D-LAS, gang-scheduled, edge-only (paper Sec. V-A).

    Paper (Wang et al., IEEE JSAC 2022, Sec. V-A): priority from the number and occupation
    time of allocated GPUs, multi-level priority queues served highest first, all-or-nothing allocation,
    suspend/resume of whole jobs. Rec (ours, following the Tiresias simulator's "dlas-gpu"):

    - attained service A_j = Σ over slots in which j held workers of g_j (worker-slots; slots spent waiting
      for a migration/upload count, as the workers are held);
    - queue of j = number of thresholds ≤ A_j; default one threshold (K = 2 queues)
      θ_1 = ``theta1_factor`` × median over the workload's edge jobs of g_j·(D_j p0_j / g_j) = D_j p0_j;
      ``thresholds`` (worker-slots, any number) overrides it;
    - each slot, jobs are ordered by (queue, not running in the previous slot, r_j, j): highest-priority
      queue first, running jobs first within a queue, then FIFO; allocation, backfill, preemption counting,
      placement and migration delays are exactly as in :func:`simulate_srtf`;
    - ``starvation_kappa`` (default ``None`` = off): a demoted job that has waited ≥ κ × its executed slots
      since it last stopped gets A_j reset to 0.

    Deviations/reconstruction: as items 1-9 of :func:`simulate_srtf`; in addition the threshold median is
    taken over jobs that can run on the edge (g_j > 0) only.
    """
    del rng
    return _simulate_gang(
        cluster,
        jobs,
        speed,
        "tiresias_l",
        thresholds=thresholds,
        theta1_factor=theta1_factor,
        starvation_kappa=starvation_kappa,
        event_skip=event_skip,
        gang_size=gang_size,
    )


# --------------------------------------------------------------------------------------------------------
# BatchSche: doubling batches, cheapest non-preemptive reservation on the edge or the cloud
# --------------------------------------------------------------------------------------------------------


def simulate_batchsche(
    cluster: Cluster,
    jobs: JobSet,
    *,
    speed: float = 1.0,
    rng: np.random.Generator | None = None,
    edge_price_low: float = 1.0,
    edge_price_high: float = 8.0,
    cloud_price: float = 0.5,
    max_deferrals: int = 8,
    max_interval_slots: float | None = None,
) -> ScheduleOutcome:
    """BatchSche [Zhang et al., MobiHoc'20, ref 11]: non-preemptive batch scheduling on edge + cloud (paper Sec. V-A).

    Paper (Wang et al., IEEE JSAC 2022, Sec. V-A/V-C): "first groups the uncompleted jobs
    into multiple batches, then schedules batches one by one to minimize the overall resource cost";
    non-preemptive, elastic, compact-exponential pricing, and "due to the low resource price of the cloud"
    sends jobs to the cloud with very high probability. Rec (ours):

    - decision times τ_0 = first arrival, τ_k = τ_0 + L·2^k (k ≥ 1), L = the minimum over jobs of the minimal
      runtime; at each τ_k the batch is the arrived (r_j ≤ τ_k), unscheduled jobs, in ascending order of
      minimal runtime (ties: r_j, j);
    - for each job, the cheapest configuration finishing by τ_{k+1} is chosen among
      (a) all-cloud, ζ_j = 1: all chunks in parallel on dedicated cloud workers, finishing at
          τ_k + Δ_{j,c} + p1_j, cost ``cloud_price`` × D_j p1_j;
      (b) g ∈ {1..min(D_j, #qualified workers)} edge workers of the job's type, reserved non-preemptively
          from their common start max_w max(free_w, τ_k + Δ_{j,s(w)}); the D_j chunks are dealt round-robin,
          so the job finishes after ceil(D_j/g) chunk times p0_j and worker w is reserved for its own
          n_w·p0_j (n_w = its number of chunks); cost = Σ_w price_{s(w)} n_w p0_j with
          price_s = L_e·(U_e/L_e)^{util_s}, util_s the fraction of s's workers reserved beyond τ_k
          (recomputed after every reservation);
    - a job with no option finishing by τ_{k+1} is deferred to the next batch. No preemption, no migration.

    Deviations/reconstruction:

    1. τ_0 is the first arrival itself (the first batch is taken there), so the first window [τ_0, τ_0 + 2L]
       has length 2L and later windows double (L·2^k); the notation "τ_k = τ_0 + L·2^k" would otherwise
       clash for k = 0. ``max_interval_slots`` optionally caps the window length (default ``None``: pure
       doubling, as in our reconstruction).
    2. Minimal runtime of a job (sort key and L) = min over configurations on an empty cluster of upload delay
       + training time: cloud Δ_{j,c} + p1_j; edge min_s Δ_js (servers with qualified workers) +
       ceil(D_j/G_j) p0_j with G_j = min(D_j, #qualified workers).
    3. For a given g the workers are the g qualified workers that can start earliest (ties: cheaper server,
       lower worker index); the data upload to the edge starts at the decision time τ_k (the job's placement
       is unknown before), the cloud upload likewise; reservations only append at each worker's free time
       (no back-filling of idle gaps).
    4. Ties in cost are broken by earlier finish, then cloud before edge, then smaller g.
    5. Termination: a job deferred ``max_deferrals`` times (default 8) is scheduled at its next batch with
       its earliest-finishing configuration regardless of the window (counted in ``extra["fallbacks"]``).
       With pure doubling every job eventually fits anyway (windows grow without bound, the cloud is
       unlimited and edge reservations are finite), so this only bounds the number of rounds.
    6. A job with no qualified edge worker has only the cloud option; if the cluster also has no cloud the
       instance is infeasible and ``ValueError`` is raised.
    7. ``segments`` are the reserved edge executions [w, start, start + n_w p0_j, j]; ``comm_time_slots`` =
       max_s Δ_js over the servers used + E_j D_j B_j 2q_j/b_j / speed for edge jobs, Δ_{j,c} for cloud jobs.
    """
    del rng
    if edge_price_low <= 0 or edge_price_high < edge_price_low:
        raise ValueError("need 0 < edge_price_low <= edge_price_high")
    if max_interval_slots is not None and max_interval_slots <= 0:
        raise ValueError("max_interval_slots must be > 0")
    prep = _Prep(cluster, jobs, speed)
    J, S = prep.J, prep.S
    r, D, p0, p1 = prep.r, prep.D, prep.p0, prep.p1
    dc = prep.delta_c
    wserver = prep.worker_server
    wps = np.bincount(wserver, minlength=S).astype(float) if prep.W else np.zeros(S)
    completion = np.full(J, np.nan)
    edge_chunks = np.zeros(J, dtype=np.int64)
    cloud_chunks = np.zeros(J, dtype=np.int64)
    rows: list[list[float]] = []
    if J == 0:
        return ScheduleOutcome(
            completion,
            _segments_array(rows),
            0,
            edge_chunks,
            cloud_chunks,
            {
                "migrations": 0,
                "comm_time_slots": 0.0,
                "upload_time_slots": 0.0,
                "migration_time_slots": 0.0,
                "fallbacks": 0,
                "deferrals": 0,
                "batches": 0,
            },
        )

    # Minimal runtimes on an empty cluster.
    minrt = np.full(J, np.inf)
    for j in range(J):
        if prep.has_cloud:
            minrt[j] = dc[j] + p1[j]
        qw = prep.type_workers[prep.jtype[j]] if prep.jtype[j] < len(prep.type_workers) else np.zeros(0, int)
        if qw.size:
            G = min(int(D[j]), qw.size)
            de = float(prep.delta_e[j, np.unique(wserver[qw])].min())
            minrt[j] = min(minrt[j], de + math.ceil(D[j] / G) * p0[j])
    if not np.all(np.isfinite(minrt)):
        bad = np.flatnonzero(~np.isfinite(minrt))
        raise ValueError(f"jobs {bad.tolist()} have no qualified edge worker and the cluster has no cloud")
    L = float(minrt.min())

    free_at = np.full(prep.W, -np.inf)
    scheduled = np.zeros(J, dtype=bool)
    deferrals = np.zeros(J, dtype=np.int64)
    comm_time = 0.0
    upload_time = 0.0
    fallbacks = 0
    total_deferrals = 0
    batches = 0
    ratio = edge_price_high / edge_price_low

    tau0 = float(r.min())
    tau = tau0
    k = 0
    while not scheduled.all():
        length = L * 2.0 ** max(k, 1)
        if max_interval_slots is not None:
            length = min(length, float(max_interval_slots))
        tau_next = tau + length
        batch = np.flatnonzero(~scheduled & (r <= tau + _EPS))
        if batch.size:
            batches += 1
            batch = batch[np.lexsort((batch, r[batch], minrt[batch]))]
            for j in batch:
                j = int(j)
                # Options: (cost, finish, kind, g, start, workers)
                best = None
                fastest = None
                if prep.has_cloud:
                    fin = tau + dc[j] + p1[j]
                    opt = (cloud_price * D[j] * p1[j], fin, 0, 0, tau + dc[j], None)
                    if fin <= tau_next + _EPS:
                        best = opt
                    fastest = opt
                qw = prep.type_workers[prep.jtype[j]] if prep.jtype[j] < len(prep.type_workers) else None
                if qw is not None and qw.size:
                    busy = np.bincount(wserver[free_at > tau + _EPS], minlength=S).astype(float)
                    util = np.divide(busy, wps, out=np.zeros(S), where=wps > 0)
                    price = edge_price_low * ratio**util
                    sv = wserver[qw]
                    avail = np.maximum(free_at[qw], tau + prep.delta_e[j, sv])
                    pr = price[sv]
                    o = np.lexsort((qw, pr, avail))
                    qs, avs, prs = qw[o], avail[o], pr[o]
                    G = min(int(D[j]), qs.size)
                    gs = np.arange(1, G + 1)
                    start = avs[:G]
                    fin = start + np.ceil(D[j] / gs) * p0[j]
                    cp = np.concatenate([[0.0], np.cumsum(prs[:G])])
                    cost = p0[j] * ((D[j] // gs) * cp[gs] + cp[D[j] % gs])
                    ok = np.flatnonzero(fin <= tau_next + _EPS)
                    if ok.size:
                        i = ok[np.lexsort((ok, fin[ok], cost[ok]))[0]]
                        opt = (float(cost[i]), float(fin[i]), 1, int(gs[i]), float(start[i]), qs[: gs[i]])
                        if best is None or (opt[0], opt[1], opt[2]) < (best[0], best[1], best[2]):
                            best = opt
                    i = int(np.lexsort((gs, cost, fin))[0])
                    opt = (float(cost[i]), float(fin[i]), 1, int(gs[i]), float(start[i]), qs[: gs[i]])
                    if fastest is None or (opt[1], opt[0], opt[2]) < (fastest[1], fastest[0], fastest[2]):
                        fastest = opt
                if best is None:
                    if deferrals[j] < max_deferrals:
                        deferrals[j] += 1
                        total_deferrals += 1
                        continue
                    best = fastest
                    fallbacks += 1
                _, fin, kind, gsel, start, ws = best
                scheduled[j] = True
                completion[j] = fin
                if kind == 0:
                    cloud_chunks[j] = D[j]
                    upload_time += dc[j]
                else:
                    edge_chunks[j] = D[j]
                    nq, nr = divmod(int(D[j]), gsel)
                    for i, w in enumerate(ws):
                        n_w = nq + (1 if i < nr else 0)
                        end = start + n_w * p0[j]
                        free_at[w] = end
                        rows.append([float(w), start, end, float(j)])
                    upload_time += float(prep.delta_e[j, np.unique(wserver[ws])].max())
                    comm_time += float(prep.comm_edge[j])
        tau = tau_next
        k += 1

    comm_time += upload_time
    extra = {
        "migrations": 0,
        "comm_time_slots": float(comm_time),
        "upload_time_slots": float(upload_time),
        "migration_time_slots": 0.0,
        "fallbacks": int(fallbacks),
        "deferrals": int(total_deferrals),
        "batches": int(batches),
    }
    return ScheduleOutcome(
        completion_slots=completion,
        segments=_segments_array(rows),
        preemptions=0,
        edge_chunks=edge_chunks,
        cloud_chunks=cloud_chunks,
        extra=extra,
    )


DISCIPLINES: dict[str, Callable[..., ScheduleOutcome]] = {
    "srtf": simulate_srtf,
    "tiresias_l": simulate_tiresias_l,
    "batchsche": simulate_batchsche,
}
