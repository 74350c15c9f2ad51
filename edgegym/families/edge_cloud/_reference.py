"""Pure-Python reference of the edge-cloud simulator: the test oracle of the compiled one.

The model is that of Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud
Networks", IEEE JSAC 40(8), 2022 (§III; algorithms in §IV-C/§IV-D).

This is the original, straightforward implementation of :class:`~.simulator.PaperSimulator` (Python lists,
dicts and ``heapq``; ``math.fsum`` over every placed job for Φ). It is not used by the env: the differential
tests (``tests/speed/test_speed_edge_cloud.py``) run it next to the compiled simulator on random instances and
require identical schedules, completion times, per-step Φ increments and A_ps logs. Keep it unchanged unless the
model changes (then change both, and the tests say whether they still agree).

Time model (our resolution of the paper's slot granularity: its schedule y is indexed by integer slots while a
chunk's time p = E_j·B_j/n_j is real):

* Continuous time, event-driven. Arrivals r_j and upload delays Δ are whatever the job set says (integer
  slots in the shipped presets); processing times p are real (or rounded up to whole slots with
  ``slotted=True``, which makes every event fall on an integer slot and matches the time-indexed model).
* Jobs are placed one at a time in job-set order (several arrivals in one slot are separate zero-time
  placements, in trace order). Placing job j happens at time r_j: the clock never goes back.
* An edge worker runs, at every instant, the released (ρ ≤ t), unfinished chunk with the smallest key
  ``(D_j·p_j, seq)``: highest average processing rate first (HAPRF), ties to the earlier dispatch (the
  paper leaves ties open). ``D_j·p_j`` is compared after rounding to 12 significant digits, so that the
  "≥ γ" of Eq. (5) and the execution order agree on near-ties.
* A chunk completes when it has received p slots of service; c_jd is that instant (the end of its last
  piece of service), c_j = max_d c_jd.
* Cloud chunks each get a dedicated worker: they start at r_j + Δ_{j,c} and never wait or get preempted.
* Because execution between arrivals is deterministic, each worker keeps a *plan*: its projected HAPRF
  schedule with no further arrivals. Advancing time executes a prefix of the plan; placing a chunk
  re-plans the workers it touched. Hence "plan = execution" holds by construction.
* A_ps (PS assignment, the paper's Alg. 5, §IV-D) never changes a processing time in this model, so it runs
  as one sweep over the executed trace when the episode drains (``assign_ps``): a job holds a PS while any of
  its chunks is being trained, keeps it while it runs without a break (sticky), and draws a free qualified PS
  uniformly at random (edge PSs of its type if ζ_j = 0, the cloud if ζ_j = 1, the cloud as a fallback: Alg. 5
  may find no free qualified PS, and the cloud's PSs are unlimited).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from ...core.metrics import ScheduleOutcome
from ...core.types import Cluster, JobSet
from .rates import chunk_time_slots, iteration_time_h

__all__ = ["Candidates", "ReferenceSimulator", "greedy_placement", "haprf_key", "water_fill"]

_TOL = 1e-9
_INF = math.inf


def haprf_key(num_chunks: float, chunk_time: float) -> float:
    """HAPRF priority key D_j·p_j (smaller = higher priority), rounded to 12 significant digits."""
    return float(f"{num_chunks * chunk_time:.12g}")


def water_fill(q: np.ndarray, step: float, count: int, order: np.ndarray | None = None) -> np.ndarray:
    """Place ``count`` chunks one at a time on the candidate with minimum ``q[i] + k_i·step``.

    This is the within-server (and A_greedy's) Q-min rule of Alg. 2 (lines 12-20) with the exact O(1)
    update of Alg. 3's Q: the k-th extra chunk of a job on a worker costs ``step = p/D_j`` more. Ties are broken by
    ``order`` (default: the index), i.e. lexicographic (Q, order). Entries with ``q = inf`` are never used.

    Returns the number of chunks given to each candidate.                              # (n,) int
    """
    q = np.asarray(q, dtype=float)
    n = q.size
    order = np.arange(n) if order is None else np.asarray(order)
    counts = np.zeros(n, dtype=np.int64)
    heap = [(float(q[i]), order[i], i) for i in range(n) if np.isfinite(q[i])]
    if count > 0 and not heap:
        raise ValueError("water_fill: no finite candidate to place chunks on")
    heapq.heapify(heap)
    for _ in range(count):
        _, _, i = heapq.heappop(heap)
        counts[i] += 1
        heapq.heappush(heap, (float(q[i]) + counts[i] * step, order[i], i))
    return counts


@dataclass(frozen=True, slots=True)
class Candidates:
    """The candidate table C_j of an arriving job (Algs. 2-3 of the paper), one entry per edge worker.

    Unqualified workers have ``q = inf``. All arrays are (W,) unless stated.
    """

    job: int
    p_edge: float  # p_j^(0), slots
    p_cloud: float  # p_j^(1) (ζ_j = 1), slots
    q: np.ndarray  # Q_w^(0) of Eq. (5)
    t_star: np.ndarray  # t*_w = t0 + wait
    wait: np.ndarray  # Σ_{A1} p̂(t0)
    a2_weight: np.ndarray  # Σ_{A2} 1/D_{j'}
    a2_count: np.ndarray  # |A2|
    backlog: np.ndarray  # Σ of all queued remaining work at t0
    qc0: float  # cloud Q with ζ = 0 (inf if no cloud)
    qc1: float  # cloud Q with ζ = 1 (inf if no cloud)


class ReferenceSimulator:
    """The simulator of Wang et al. (JSAC 2022): chunks placed once per arrival, HAPRF-preemptive edge workers, a cloud.

    Args:
        cluster: the edge servers, workers, PSs and cloud.
        jobs: the episode's jobs, sorted by arrival.
        speed: speed factor (1+ε) dividing every processing time (the speed
            augmentation of the paper's Definition 1, §IV-B).
        slotted: round processing times up to whole slots (the paper's integer-slot
            schedule; needed by the time-indexed lower bound).
        rng: generator for A_ps's random PS choices (the only random draw of the simulator).
    """

    def __init__(
        self,
        cluster: Cluster,
        jobs: JobSet,
        *,
        speed: float = 1.0,
        slotted: bool = False,
        rng: np.random.Generator | None = None,
    ) -> None:
        if jobs.num_edge_servers != cluster.num_edge_servers:
            raise ValueError(
                f"job set has upload delays for {jobs.num_edge_servers} edge servers, "
                f"cluster has {cluster.num_edge_servers}"
            )
        self.cluster = cluster
        self.jobs = jobs
        self.speed = float(speed)
        self.slotted = bool(slotted)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        J = jobs.num_jobs
        tau0 = iteration_time_h(jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, False)
        tau1 = iteration_time_h(jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, True)
        self.p_edge = chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau0, self.speed, self.slotted)  # (J,)
        self.p_cloud = chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau1, self.speed, self.slotted)  # (J,)
        D = jobs.num_chunks
        self.offsets = np.concatenate([[0], np.cumsum(D)]).astype(np.int64)  # (J+1,)
        N = int(self.offsets[-1])
        self.chunk_job = np.repeat(np.arange(J), D)  # (N,)
        # per-chunk state (valid once placed)
        self.chunk_worker = np.full(N, -2, dtype=np.int64)  # -2 unplaced, -1 cloud, else edge worker
        self.chunk_rho = np.zeros(N)  # release time on its worker
        self.chunk_key = np.zeros(N)  # HAPRF key D·p
        self.chunk_seq = np.zeros(N, dtype=np.int64)
        self.chunk_end = np.full(N, _INF)  # projected (later: actual) completion c_jd
        # Python-list mirrors of per-chunk fields read one element at a time on the hot path
        self._rho_l = [0.0] * N
        self._key_l = [0.0] * N
        self._seq_l = [0] * N
        self._end_l = [_INF] * N
        self._rem_l = [0.0] * N
        self._inv_d_l = (1.0 / D[self.chunk_job]).tolist()  # 1/D_j of each chunk's job
        self.chunk_alpha = np.zeros(N)  # α_jd recorded at dispatch
        self.job_end = np.full(J, _INF)  # projected / actual c_j
        self.job_zeta = np.zeros(J, dtype=bool)
        self.job_edge_chunks = np.zeros(J, dtype=np.int64)
        self.job_cloud_chunks = np.zeros(J, dtype=np.int64)
        W = cluster.num_workers
        # qualified workers per worker type, ordered by (server, worker index) for tie-breaks
        self._qualified = {}
        for wt in range(cluster.num_worker_types):
            idx = np.flatnonzero(cluster.worker_type == wt)
            self._qualified[wt] = idx[np.lexsort((idx, cluster.worker_server[idx]))]
        self.worker_queue: list[list[int]] = [[] for _ in range(W)]
        self.worker_sync = np.zeros(W)  # time up to which each worker's execution is logged
        self.worker_plan: list[list[list]] = [[] for _ in range(W)]  # [start, end, chunk]
        self.worker_log: list[list[list]] = [[] for _ in range(W)]  # executed [start, end, chunk]
        self._head_start = np.full(W, _INF)  # start of each worker's first planned segment (inf: idle)
        self._head_end = np.full(W, _INF)  # end of each worker's first planned segment
        self.now = float(jobs.arrival_slots[0]) if J else 0.0
        self.num_placed = 0
        self._seq = 0
        self.postponed_chunks = 0
        self.fallbacks = 0
        self._phi = 0.0  # Σ over placed jobs of (ĉ_j − r_j)
        self._drained = False
        self.ps_log: np.ndarray | None = None
        self.ps_switches = 0
        self.ps_fallbacks = 0

    # ------------------------------------------------------------------ time
    def advance_to(self, t: float) -> None:
        """Move the clock to ``t`` (never backwards), executing every worker's plan up to ``t``."""
        if t < self.now - _TOL:
            raise ValueError(f"the clock never goes back: now={self.now}, asked for {t}")
        self.now = max(self.now, float(t))
        # execute plan heads that end by now; a head still running at `now` is logged later, in one piece
        for w in np.flatnonzero(self._head_end <= self.now).tolist():
            self._sync(w, self.now)

    def _sync(self, w: int, t: float) -> None:
        """Execute worker ``w``'s plan up to time ``t`` (log it, update remaining times, drop finished)."""
        if t <= self.worker_sync[w]:
            return
        plan, log = self.worker_plan[w], self.worker_log[w]
        rem, end = self._rem_l, self._end_l
        k = 0
        finished = False
        while k < len(plan) and plan[k][0] < t:
            s, e, c = plan[k]
            e_exec = min(e, t)
            if log and log[-1][2] == c and abs(log[-1][1] - s) <= _TOL:
                log[-1][1] = e_exec
            else:
                log.append([s, e_exec, c])
            if e_exec >= end[c]:
                rem[c] = 0.0
                finished = True
            else:
                rem[c] -= e_exec - s
            if e <= t:
                k += 1
            else:
                plan[k][0] = t
                break
        del plan[:k]
        self._set_head(w)
        self.worker_sync[w] = t
        if finished:
            self.worker_queue[w] = [c for c in self.worker_queue[w] if end[c] > t]

    def _set_head(self, w: int) -> None:
        plan = self.worker_plan[w]
        if plan:
            self._head_start[w], self._head_end[w] = plan[0][0], plan[0][1]
        else:
            self._head_start[w] = self._head_end[w] = _INF

    def _replan(self, w: int) -> None:
        """Recompute worker ``w``'s HAPRF plan from its sync time, with no further arrivals."""
        t = self.worker_sync[w]
        rho, key, seq = self._rho_l, self._key_l, self._seq_l
        q = self.worker_queue[w]
        rem = {c: self._rem_l[c] for c in q}
        pending = sorted([(rho[c], key[c], seq[c], c) for c in q])
        plan: list[list] = []
        heap: list = []
        done_c, done_t = [], []
        push, pop = heapq.heappush, heapq.heappop
        i, n = 0, len(pending)
        while heap or i < n:
            while i < n and pending[i][0] <= t + _TOL:
                _, k_, s_, c = pending[i]
                push(heap, (k_, s_, c))
                i += 1
            if not heap:
                t = max(t, pending[i][0])
                continue
            c = heap[0][2]
            nxt = pending[i][0] if i < n else _INF
            fin = t + rem[c]
            if fin <= nxt + _TOL:
                seg_end = fin
                pop(heap)
                done_c.append(c)
                done_t.append(fin)
            else:
                seg_end = nxt
                rem[c] -= nxt - t
            if plan and plan[-1][2] == c and abs(plan[-1][1] - t) <= _TOL:
                plan[-1][1] = seg_end
            else:
                plan.append([t, seg_end, c])
            t = seg_end
        self.worker_plan[w] = plan
        self._set_head(w)
        end_l = self._end_l
        for c, f in zip(done_c, done_t, strict=True):
            end_l[c] = f
        if done_c:
            self.chunk_end[done_c] = done_t

    def _queue_stats(self, w: int, t0: float, key_new: float) -> tuple[float, float, int, float]:
        """CALCULATEQ's sums over worker ``w``'s queue at ``t0`` (Alg. 3; the paper does not say how
        remaining times at the future ``t0`` are obtained): ``(wait, a2_weight, a2_count, backlog)``. Remaining
        times at ``t0`` come from the projected plan (no new arrivals); chunks with key ≤ ``key_new``
        (γ ≥ γ_new, ties included) are A1, the others A2.
        Pure Python: queues are short and numpy's per-call overhead dominates at this size.
        """
        served: dict[int, float] = {}
        for s, e, c in self.worker_plan[w]:
            if s >= t0:
                break
            served[c] = served.get(c, 0.0) + (min(e, t0) - s)
        end, rem_l, key, inv_d = self._end_l, self._rem_l, self._key_l, self._inv_d_l
        wait = a2w = backlog = 0.0
        a2n = 0
        lim = t0 + _TOL
        for c in self.worker_queue[w]:
            if end[c] <= lim:
                continue
            rem = rem_l[c] - served.get(c, 0.0)
            if rem <= _TOL:
                continue
            backlog += rem
            if key[c] <= key_new:
                wait += rem
            else:
                a2w += inv_d[c]
                a2n += 1
        return wait, a2w, a2n, backlog

    def busy_workers(self) -> int:
        """Number of edge workers training a chunk at the current time."""
        return int(np.count_nonzero(self._head_start <= self.now))

    # ------------------------------------------------------------ decisions
    def next_job(self) -> int:
        """Index of the next job to place (== number placed so far)."""
        return self.num_placed

    def qualified_workers(self, j: int) -> np.ndarray:
        """Edge workers qualified for job ``j`` (type match), ordered by (server, index)."""
        return self._qualified.get(int(self.jobs.worker_type[j]), np.zeros(0, dtype=np.int64))

    def candidates(self, j: int) -> Candidates:
        """CALCULATEQ (the paper's Alg. 3, Eq. (5)) on every qualified edge worker, plus the cloud's Qc0 and Qc1."""
        jobs = self.jobs
        W = self.cluster.num_workers
        D = float(jobs.num_chunks[j])
        p0, p1 = float(self.p_edge[j]), float(self.p_cloud[j])
        key_new = haprf_key(D, p0)
        r = float(jobs.arrival_slots[j])
        q = np.full(W, _INF)
        t_star = np.full(W, _INF)
        wait = np.zeros(W)
        a2w = np.zeros(W)
        a2n = np.zeros(W, dtype=np.int64)
        backlog = np.zeros(W)
        qual = self.qualified_workers(j)
        t0 = r + jobs.upload_delay_edge_slots[j][self.cluster.worker_server[qual]]  # (|qual|,)
        queue = self.worker_queue
        for i in np.flatnonzero([bool(queue[w]) for w in qual.tolist()]).tolist():
            w = int(qual[i])
            wait[w], a2w[w], a2n[w], backlog[w] = self._queue_stats(w, float(t0[i]), key_new)
        q[qual] = (t0 - r + wait[qual] + p0) / D + p0 * a2w[qual]
        t_star[qual] = t0 + wait[qual]
        if self.cluster.has_cloud:
            dc = float(jobs.upload_delay_cloud_slots[j])
            qc0, qc1 = (dc + p0) / D, (dc + p1) / D
        else:
            qc0 = qc1 = _INF
        return Candidates(j, p0, p1, q, t_star, wait, a2w, a2n, backlog, qc0, qc1)

    def place(self, j: int, worker_counts: np.ndarray, num_cloud: int, cand: Candidates | None = None) -> dict:
        """Dispatch job ``j``'s chunks once and for all: ``worker_counts[w]`` chunks on edge worker ``w`` and
        ``num_cloud`` in the cloud (ζ_j = 1 iff all chunks go to the cloud). Must be called in job order;
        the clock moves to r_j. Returns a record of the placement (counts, ζ_j, α_jd, postponed chunks).
        """
        if self._drained:
            raise RuntimeError("the simulator has drained; no more placements")
        if j != self.num_placed:
            raise ValueError(f"jobs must be placed in order: expected job {self.num_placed}, got {j}")
        jobs, cl = self.jobs, self.cluster
        D = int(jobs.num_chunks[j])
        counts = np.asarray(worker_counts, dtype=np.int64).reshape(-1)
        if counts.size != cl.num_workers:
            raise ValueError(f"worker_counts has {counts.size} entries, the cluster has {cl.num_workers} workers")
        if counts.min(initial=0) < 0 or num_cloud < 0 or int(counts.sum()) + int(num_cloud) != D:
            raise ValueError(f"placement of job {j} must put its {D} chunks somewhere exactly once")
        used = np.flatnonzero(counts)
        if used.size and np.any(cl.worker_type[used] != jobs.worker_type[j]):
            raise ValueError(f"job {j} placed on a worker of the wrong type")
        if num_cloud and not cl.has_cloud:
            raise ValueError("this cluster has no cloud")
        r = float(jobs.arrival_slots[j])
        self.advance_to(r)
        if cand is None or cand.job != j:
            cand = self.candidates(j)
        p0 = float(self.p_edge[j])
        zeta = num_cloud == D
        self.job_zeta[j] = zeta
        c = int(self.offsets[j])
        # cloud chunks: dedicated workers, immediate start after upload
        if num_cloud:
            p = float(self.p_cloud[j]) if zeta else p0
            start = r + float(jobs.upload_delay_cloud_slots[j])
            alpha = cand.qc1 if zeta else cand.qc0
            for _ in range(int(num_cloud)):
                self.chunk_worker[c] = -1
                self.chunk_rho[c] = start
                self.chunk_end[c] = start + p
                self._end_l[c] = start + p
                self.chunk_alpha[c] = alpha
                c += 1
        key = haprf_key(D, p0)
        touched: list[int] = []
        postponed_before = self.postponed_chunks
        for w in used:
            w = int(w)
            self._sync(w, r)
            rho = r + float(jobs.upload_delay_edge_slots[j, cl.worker_server[w]])
            for k in range(int(counts[w])):
                self.chunk_worker[c] = w
                self.chunk_rho[c] = rho
                self.chunk_key[c] = key
                self.chunk_seq[c] = self._seq
                self._rho_l[c], self._key_l[c], self._seq_l[c], self._rem_l[c] = rho, key, self._seq, p0
                self.chunk_alpha[c] = cand.q[w] + k * p0 / D
                self._seq += 1
                self.worker_queue[w].append(c)
                c += 1
            self.postponed_chunks += int(counts[w]) * int(cand.a2_count[w])
            touched.extend(self.worker_queue[w])
            self._replan(w)
        self.job_edge_chunks[j] = int(counts.sum())
        self.job_cloud_chunks[j] = int(num_cloud)
        off = self.offsets
        affected = np.unique(np.concatenate([[j], self.chunk_job[touched]])) if touched else [j]
        for a in affected:
            self.job_end[a] = float(self.chunk_end[off[a] : off[a + 1]].max())
        self.num_placed += 1
        n = self.num_placed
        phi_before = self._phi
        self._phi = math.fsum(self.job_end[:n]) - math.fsum(jobs.arrival_slots[:n])
        return {
            "job": j,
            "zeta": bool(zeta),
            "edge_chunks": int(counts.sum()),
            "cloud_chunks": int(num_cloud),
            "alpha": self.chunk_alpha[off[j] : off[j + 1]].copy(),
            "projected_jct": float(self.job_end[j] - r),
            "postponed_chunks": self.postponed_chunks - postponed_before,
            "delta_phi": self._phi - phi_before,
        }

    @property
    def projected_total_jct(self) -> float:
        """Φ: Σ over placed jobs of projected (or actual) c_j − r_j, assuming no further arrivals."""
        return self._phi

    # --------------------------------------------------------------- drain
    def drain(self) -> ScheduleOutcome:
        """Run every worker to completion (after the last placement) and return the outcome."""
        if self.num_placed != self.jobs.num_jobs:
            raise RuntimeError(f"drain() before all jobs were placed ({self.num_placed}/{self.jobs.num_jobs})")
        if not self._drained:
            for w in range(self.cluster.num_workers):
                self._sync(w, _INF)
            self._drained = True
            self.now = float(self.job_end.max()) if self.jobs.num_jobs else self.now
            self.assign_ps()
        return self.outcome()

    def segments(self) -> np.ndarray:
        """Executed edge work so far: rows ``[worker, start, end, job]``.                 # (N, 4)"""
        rows = [(w, s, e, self.chunk_job[c]) for w, log in enumerate(self.worker_log) for s, e, c in log]
        return np.array(rows, dtype=float).reshape(-1, 4)

    def chunk_segments(self) -> np.ndarray:
        """Executed edge work so far per chunk: rows ``[worker, start, end, chunk]``.     # (N, 4)"""
        rows = [(w, s, e, c) for w, log in enumerate(self.worker_log) for s, e, c in log]
        return np.array(rows, dtype=float).reshape(-1, 4)

    def preemptions(self) -> int:
        """Times a started, unfinished chunk stopped for another chunk: Σ_chunks (executed runs − 1)."""
        runs = np.zeros(self.chunk_job.size, dtype=np.int64)
        for log in self.worker_log:
            for _, _, c in log:
                runs[c] += 1
        return int(np.sum(np.maximum(runs - 1, 0)))

    def outcome(self) -> ScheduleOutcome:
        """The :class:`ScheduleOutcome` of a drained episode."""
        return ScheduleOutcome(
            completion_slots=self.job_end.copy(),
            segments=self.segments(),
            preemptions=self.preemptions(),
            edge_chunks=self.job_edge_chunks.copy(),
            cloud_chunks=self.job_cloud_chunks.copy(),
            extra={
                "postponed_chunks": int(self.postponed_chunks),
                "ps_switches": int(self.ps_switches),
                "ps_fallbacks": int(self.ps_fallbacks),
            },
        )

    # ------------------------------------------------------------------ A_ps
    def _running_intervals(self) -> list[list[tuple[float, float]]]:
        """Per job, the maximal intervals during which at least one of its chunks is trained."""
        J = self.jobs.num_jobs
        per_job: list[list[tuple[float, float]]] = [[] for _ in range(J)]
        for log in self.worker_log:
            for s, e, c in log:
                per_job[self.chunk_job[c]].append((s, e))
        cloud = np.flatnonzero(self.chunk_worker == -1)
        for c in cloud:
            per_job[self.chunk_job[c]].append((self.chunk_rho[c], self.chunk_end[c]))
        merged = []
        for iv in per_job:
            iv.sort()
            out: list[list[float]] = []
            for s, e in iv:
                if out and s <= out[-1][1] + _TOL:
                    out[-1][1] = max(out[-1][1], e)
                else:
                    out.append([s, e])
            merged.append([(s, e) for s, e in out])
        return merged

    def assign_ps(self) -> np.ndarray:
        """A_ps (the paper's Alg. 5) as one sweep over the executed trace, with two corrections.

        Alg. 1 (line 4) passes A_ps only the newly arrived jobs; every arrived, unfinished job needs a PS, so all
        are swept. Alg. 5 may find no free qualified PS; the job then gets a cloud PS (unlimited).

        Returns and stores ``ps_log``: rows ``[ps, start, end, job]`` where ``ps`` is an edge PS index, or
        ``-1`` for a cloud PS (unlimited).                                                   # (M, 4)
        """
        cl, jobs = self.cluster, self.jobs
        events = []  # (time, kind 0=release 1=acquire, job, interval end)
        for j, ivs in enumerate(self._running_intervals()):
            for s, e in ivs:
                events.append((s, 1, j, e))
                events.append((e, 0, j, e))
        events.sort(key=lambda x: (x[0], x[1], x[2]))
        free = np.ones(cl.num_ps, dtype=bool)
        held: dict[int, tuple[int, float]] = {}
        rows = []
        for t, kind, j, _e in events:
            if kind == 0:
                ps, start = held.pop(j)
                rows.append((ps, start, t, j))
                if ps >= 0:
                    free[ps] = True
                continue
            ps = -1
            if not self.job_zeta[j]:
                pool = np.flatnonzero(free & (cl.ps_type == jobs.ps_type[j]))
                if pool.size:
                    ps = int(pool[self.rng.integers(pool.size)])
                    free[ps] = False
                else:
                    self.ps_fallbacks += 1
            held[j] = (ps, t)
            self.ps_switches += 1
        self.ps_log = np.array(rows, dtype=float).reshape(-1, 4)
        return self.ps_log


def greedy_placement(
    q: np.ndarray, order: np.ndarray, num_chunks: int, p_edge: float, qc0: float, qc1: float
) -> tuple[np.ndarray, int]:
    """A_greedy's dispatch of one job (the paper's Alg. 2, with two fixes), as a pure function.

    The fixes: chunk d is committed with the selected worker's (Q, t*, A2) before that worker's Q is updated
    (Alg. 2 lines 21-24, read literally, use the next chunk's values), and ζ_j is passed explicitly, the
    cloud's Qc1 deciding only the first chunk (Alg. 3 sets ζ_j = 1 where Alg. 2 calls it to reset ζ_j = 0).

    ``q`` is the candidate table's Q_w^(0) per edge worker (inf = not qualified), ``order`` the tie-break
    rank of each worker (its (server, index) position). The cloud is off when ``qc0 = qc1 = inf``.

    * If no edge worker qualifies, or ``Qc1 < min_w Q_w``, the whole job goes to the cloud (ζ_j = 1).
    * Otherwise chunks are water-filled: each goes to the worker with minimum ``Q_w + k_w·p/D_j``
      (ties: lexicographic (Q, order)), unless the cloud's ``Qc0`` is strictly smaller (cloud loses exact ties).

    Returns ``(worker_counts (W,), num_cloud)``.
    """
    q = np.asarray(q, dtype=float)
    D = int(num_chunks)
    counts = np.zeros(q.size, dtype=np.int64)
    finite = np.isfinite(q)
    if not finite.any():
        if not np.isfinite(qc1):
            raise ValueError("no qualified edge worker and no cloud: the job cannot be placed")
        return counts, D
    q_best = float(q[finite].min())
    if qc1 < q_best:
        return counts, D
    step = p_edge / D
    heap = [(float(q[i]), order[i], i) for i in np.flatnonzero(finite)]
    heapq.heapify(heap)
    for d in range(D):
        qe, _, i = heap[0]
        if qc0 < qe:
            return counts, D - d
        heapq.heappop(heap)
        counts[i] += 1
        heapq.heappush(heap, (float(q[i]) + counts[i] * step, order[i], i))
    return counts, 0


# ------------------------------------------------------------------------------------------ env oracles
# The EdgeCloudML env's observation and ``server_proportions`` decoding as they were written before they moved
# into compiled kernels: numpy over the env's state. ``tests/speed/test_speed_edge_cloud_env.py``
# requires the compiled versions to give identical observations and placements.


def observation(env) -> np.ndarray:
    """The env's observation at the current decision point, by the original numpy code (float32)."""
    from .env import _GLOBAL_FEATURES, _JOB_BASE_FEATURES, _OBS_HIGH, _ROW_FEATURES
    from .simulator import server_aggregates

    jobs, cl, sim = env.jobs, env.cluster, env.sim
    j = env._k
    obs = np.zeros(env.observation_space.shape, dtype=np.float64)
    D = float(jobs.num_chunks[j])
    p0, p1 = float(sim.p_edge[j]), float(sim.p_cloud[j])
    dc = float(jobs.upload_delay_cloud_slots[j])
    qual = np.flatnonzero(cl.worker_type == jobs.worker_type[j])
    f = obs[: env._job_dim]
    f[0] = D / env.max_chunks
    f[1] = math.log1p(float(jobs.epochs[j] * jobs.batches_per_chunk[j])) / 10
    f[2] = math.log1p(p0) / 6
    f[3] = math.log1p(p1) / 6
    f[4] = math.log1p(D * p0) / 10
    f[5] = (p0 - p1) / p0 if p0 > 0 else 0.0
    f[6] = qual.size / max(cl.num_workers, 1)
    f[7] = math.log1p(dc) / 3
    f[8] = math.log1p(qual.size) / 5
    f[_JOB_BASE_FEATURES + min(int(jobs.worker_type[j]), env.max_types - 1)] = 1.0
    f[_JOB_BASE_FEATURES + env.max_types + min(int(jobs.ps_type[j]), env.max_types - 1)] = 1.0
    rows = obs[env._job_dim : env._job_dim + (env.max_edge_servers + 1) * _ROW_FEATURES].reshape(
        env.max_edge_servers + 1, _ROW_FEATURES
    )
    eligible = eligible_rows(env)
    S = env.num_edge_servers
    backlog_total = 0.0
    cand = env._cand
    if cand is not None and qual.size:
        rows[:S, 0] = np.log1p(jobs.upload_delay_edge_slots[j]) / 3
        nq, idle, mins, bl = server_aggregates(qual, cl.worker_server, S, cand)
        rows[:S, 1] = np.log1p(nq) / 3
        rows[:S, 2] = np.log1p(idle) / 3
        for col, m in ((3, mins[0]), (4, mins[1]), (5, mins[2])):
            rows[:S, col] = np.where(np.isfinite(m), np.log1p(np.where(np.isfinite(m), m, 0.0)), 0.0) / 6
        rows[:S, 6] = np.log1p(bl) / 8
        backlog_total = float(cand.backlog[qual].sum())
    if cand is not None and cl.has_cloud:
        rows[-1, 0] = math.log1p(dc) / 3
        rows[-1, 5] = math.log1p((dc + p0) / D) / 6
        rows[-1, 6] = math.log1p((dc + p1) / D) / 6
    rows[:, 7] = eligible
    g = obs[-_GLOBAL_FEATURES:]
    in_system = int(np.sum(sim.job_end[: sim.num_placed] > sim.now))  # the re-scan the completion heap replaces
    g[2] = math.log1p(backlog_total) / 10
    if env.preset.env.obs_relative:
        g[1] = math.log1p(in_system / max(cl.num_workers, 1))
    else:
        g[0] = math.log1p(max(sim.now, 0.0)) / 8
        g[1] = in_system / jobs.num_jobs
        g[3] = (jobs.num_jobs - j) / jobs.num_jobs
    W = cl.num_workers
    g[4] = int(np.count_nonzero(sim._head_start <= sim.now)) / W if W else 0.0
    return np.clip(obs, 0.0, _OBS_HIGH).astype(np.float32)


def eligible_rows(env) -> np.ndarray:
    """The env's legal rows (edge servers with a qualified worker, then the cloud), by the original numpy code."""
    rows = np.zeros(env.max_edge_servers + 1, dtype=bool)
    if env._k >= env.jobs.num_jobs or env._cand is None:
        rows[-1] = env.cluster.has_cloud
        return rows
    finite = np.isfinite(env._cand.q)
    rows[env.cluster.worker_server[finite]] = True
    rows[-1] = env.cluster.has_cloud and (env.use_cloud or not finite.any())
    return rows


def decode_proportions(env, action) -> tuple[np.ndarray, int, np.ndarray] | None:
    """The original ``server_proportions`` decoding: ``(worker_counts (W,), num_cloud, server_counts)``, or
    ``None`` where the env falls back to A_greedy (all-zero weights on legal rows)."""
    from ...core.actions import check_box_action
    from .env import largest_remainder
    from .simulator import fill_servers

    cand = env._cand
    D = int(env.jobs.num_chunks[env._k])
    rows = eligible_rows(env)
    counts = np.zeros(env.cluster.num_workers, dtype=np.int64)
    a = check_box_action(env.action_space, action)
    if a.min() < -1e-6 or a.max() > 1 + 1e-6:
        raise ValueError("action out of [0, 1]")
    wts = np.clip(a, 0.0, 1.0) * rows
    if wts.sum() <= 0:
        return None
    server_counts = largest_remainder(wts, D)
    n_cloud = int(server_counts[-1])
    fill_servers(server_counts[: env.num_edge_servers], cand.q, env._order, env._srv_ptr, env._srv_workers,
                 cand.p_edge / D, counts)
    return counts, n_cloud, server_counts
