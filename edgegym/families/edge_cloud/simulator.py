"""Event-driven simulator of Wang et al.'s edge-cloud model: fixed chunk placement + preemptive HAPRF.

Source: Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks",
IEEE JSAC 40(8), 2022: the model of its §III and the algorithms of §IV-C/§IV-D. This module has no decisions
in it: a caller (the env, a reference policy, a test) places each arriving job's chunks; the simulator
executes.

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

Implementation: struct-of-arrays state and compiled kernels (:mod:`._kernels`, Numba, ``cache=True``, loaded
on the first simulator built). A step costs O(qualified workers · queue length) for CALCULATEQ and
O(touched workers · queue length · log) for the placement; Φ is kept as an exact running sum (Shewchuk
partials, rounded like ``math.fsum``) and the number of jobs in the system by a completion heap, so nothing
re-scans the jobs placed so far. The executed schedule is kept compactly (one row of 4 numbers per contiguous
run, needed by A_ps at the drain). The pure-Python original is kept as the test oracle
(:class:`._reference.ReferenceSimulator`); the differential tests require identical results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.metrics import ScheduleOutcome
from ...core.types import Cluster, JobSet
from .rates import chunk_time_slots, iteration_time_h

__all__ = [
    "Candidates", "PaperSimulator", "fill_servers", "greedy_placement", "haprf_key", "server_aggregates", "water_fill"
]

_TOL = 1e-9
_WIN_MIN = 1 << 16  # initial slots of the per-chunk window (keep_schedule=False); grown on demand
_FLUSH_MIN = 1 << 18  # log rows that trigger a consumption of the log (keep_schedule=False)
_INF = math.inf
_K = None  # the kernel module, imported on first use (keeps ``import edgegym`` free of Numba)
_NO_RAN = np.zeros(0, dtype=np.bool_)  # greedy_run's per-slot flags with the whole schedule kept: none


def _kernels():
    global _K
    if _K is None:
        from . import _kernels as k

        _K = k
    return _K


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
    q = np.ascontiguousarray(q, dtype=np.float64).reshape(-1)
    order = np.arange(q.size, dtype=np.int64) if order is None else np.ascontiguousarray(order, dtype=np.int64)
    counts = np.zeros(q.size, dtype=np.int64)
    if _kernels().water_fill(q, float(step), int(count), order, counts) < 0:
        raise ValueError("water_fill: no finite candidate to place chunks on")
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


#: the slot setters of :class:`Candidates` in field order (:func:`_new_candidates` builds one through them)
_CAND_SETTERS = tuple(Candidates.__dict__[f].__set__ for f in Candidates.__slots__)


def _new_candidates(values: tuple) -> Candidates:
    """``Candidates(*values)`` without the frozen dataclass's ``__init__`` (one ``object.__setattr__`` call per
    field): the slots set directly, ~1 µs less per decision point."""
    out = object.__new__(Candidates)
    for setter, v in zip(_CAND_SETTERS, values, strict=True):
        setter(out, v)
    return out


class PaperSimulator:
    """The simulator of Wang et al. (JSAC 2022): chunks placed once per arrival, HAPRF-preemptive edge workers, a cloud.

    Args:
        cluster: the edge servers, workers, PSs and cloud.
        jobs: the episode's jobs, sorted by arrival.
        speed: speed factor (1+ε) dividing every processing time (the speed
            augmentation of the paper's Definition 1, §IV-B).
        slotted: round processing times up to whole slots (the paper's integer-slot
            schedule; needed by the time-indexed lower bound).
        rng: generator for A_ps's random PS choices (the only random draw of the simulator).
        keep_schedule: keep the executed schedule whole (``segments()``, ``chunk_segments()``, ``worker_log``,
            rendering) and every chunk's state for the whole episode (``chunk_end``, ``chunk_alpha``, ... indexed
            by chunk id). ``False``: memory bounded by the jobs in the system, not by the history: per-chunk state
            lives in a window of slots (slot = chunk id − ``chunk_base``; the chunks of the jobs that still have a
            chunk queued, or a run not yet consumed), and the executed log is consumed as jobs finish into what
            the metrics and A_ps need: each job's running intervals (about two per job), the number of runs per
            chunk (for the preemptions) and the exact busy time (``busy_time``). Every decision, completion time,
            Φ, reward and A_ps draw is identical to ``True`` (tested).
    """

    #: per-chunk state arrays (entries of unplaced chunks unused) and per-job state arrays
    PER_CHUNK = ("chunk_worker", "chunk_rho", "chunk_key", "chunk_seq", "chunk_end", "_rem", "chunk_alpha")
    PER_JOB = ("job_end", "job_zeta", "job_edge_chunks", "job_cloud_chunks", "_keys")

    def __init__(
        self,
        cluster: Cluster,
        jobs: JobSet,
        *,
        speed: float = 1.0,
        slotted: bool = False,
        rng: np.random.Generator | None = None,
        keep_schedule: bool = True,
    ) -> None:
        if jobs.num_edge_servers != cluster.num_edge_servers:
            raise ValueError(
                f"job set has upload delays for {jobs.num_edge_servers} edge servers, "
                f"cluster has {cluster.num_edge_servers}"
            )
        _kernels()
        self.cluster = cluster
        self.speed = float(speed)
        self.slotted = bool(slotted)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        #: ``rng`` is shared with a fork (or a parent): :meth:`assign_ps` takes a copy in the same state first
        self._rng_shared = False
        self.keep_schedule = bool(keep_schedule)
        #: chunk id of slot 0 of the per-chunk arrays (always 0 with ``keep_schedule``)
        self.chunk_base = 0
        n_chunks = int(np.sum(jobs.num_chunks))
        self._win_cap = n_chunks if self.keep_schedule else min(n_chunks, _WIN_MIN)  # slots of the per-chunk arrays
        self._init_jobs(jobs)
        J = jobs.num_jobs
        W = cluster.num_workers
        self._worker_server = np.ascontiguousarray(cluster.worker_server, dtype=np.int64)
        # qualified workers per worker type, ordered by (server, worker index) for tie-breaks
        self._qualified = {}
        for wt in range(cluster.num_worker_types):
            idx = np.flatnonzero(cluster.worker_type == wt)
            self._qualified[wt] = idx[np.lexsort((idx, cluster.worker_server[idx]))].astype(np.int64)
        # the same as one CSR table (types beyond the cluster's have none), for the compiled A_greedy loop
        lists = [self._qualified[wt] for wt in range(cluster.num_worker_types)]
        self._qual_ptr = np.concatenate([[0], np.cumsum([a.size for a in lists])]).astype(np.int64)
        self._qual_idx = np.concatenate([np.zeros(0, dtype=np.int64), *lists]).astype(np.int64)
        # per-worker queues and plans (grown on demand)
        self._qcap = 8
        self._qbuf = np.zeros((W, self._qcap), dtype=np.int64)
        self._si = np.zeros((4, self._qcap), dtype=np.int64)  # re-planning scratch
        self._sf = np.zeros((4, self._qcap))
        self._qlen = np.zeros(W, dtype=np.int64)
        pcap = 2 * self._qcap + 2
        self._ps = np.zeros((W, pcap))
        self._pe = np.zeros((W, pcap))
        self._pc = np.zeros((W, pcap), dtype=np.int64)
        self._phead = np.zeros(W, dtype=np.int64)
        self._plen = np.zeros(W, dtype=np.int64)
        self.worker_sync = np.zeros(W)  # time up to which each worker's execution is logged
        self._head_start = np.full(W, _INF)  # start of each worker's first planned segment (inf: idle)
        self._head_end = np.full(W, _INF)  # end of each worker's first planned segment
        # executed log: rows (worker, start, end, chunk), grown on demand
        self._lcap = 1024
        self._lw = np.zeros(self._lcap, dtype=np.int64)
        self._ls = np.zeros(self._lcap)
        self._le = np.zeros(self._lcap)
        self._lc = np.zeros(self._lcap, dtype=np.int64)
        self._llast = np.full(W, -1, dtype=np.int64)
        self._cnt = np.zeros(5, dtype=np.int64)  # log rows, heap size, finished jobs, seq, postponed
        # completion heap (lazy entries (c_j, j)) for the number of jobs in the system
        self._hcap = 64
        self._hk = np.zeros(self._hcap)
        self._hs = np.zeros(self._hcap, dtype=np.int64)
        self._hi = np.zeros(self._hcap, dtype=np.int64)
        # exact running sums of placed c_j and r_j (Shewchuk partials)
        self._end_part = np.zeros(256)
        self._end_np = 0
        self._arr_part = np.zeros(256)
        self._arr_np = 0
        self._mark = np.zeros(J, dtype=np.bool_)  # scratch of place_edge, all False between calls
        self._touched = np.zeros(max(J, 1), dtype=np.int64)
        self._advanced = -_INF  # time of the last advance_to, reset to -inf by a placement
        self._worker_type = np.ascontiguousarray(cluster.worker_type, dtype=np.int64)
        self._used = np.zeros(W, dtype=np.int64)  # scratch of place(): the used workers and their releases
        self._rho_used = np.zeros(W)
        self._W = int(W)
        self._has_cloud = bool(cluster.has_cloud)
        self._no_workers = np.zeros(0, dtype=np.int64)
        self.now = float(jobs.arrival_slots[0]) if J else 0.0
        self.num_placed = 0
        self.fallbacks = 0
        self._phi = 0.0  # Σ over placed jobs of (ĉ_j − r_j)
        self._drained = False
        self.ps_log: np.ndarray | None = None
        self.ps_switches = 0
        self.ps_fallbacks = 0
        if not self.keep_schedule:  # what the consumed log leaves (see keep_schedule)
            self._ran = np.zeros(self._win_cap, dtype=np.bool_)  # per slot: the chunk's first run was counted
            self._fl = np.zeros(4, dtype=np.int64)  # edge runs, chunks that ran, intervals, busy partials
            self._busy = np.zeros(256)  # exact running sum of the busy time (Shewchuk partials)
            self._iv_j = np.zeros(1024, dtype=np.int64)  # A_ps's running intervals (job, start, end) so far
            self._iv_s = np.zeros(1024)
            self._iv_e = np.zeros(1024)
            self._flush_at = _FLUSH_MIN  # consume the log when it holds more rows than this

    def _init_jobs(self, jobs: JobSet) -> None:
        """The state that depends on the job table: chunk times, offsets, per-chunk and per-job arrays (unplaced),
        per-job scalars (a resampled fork builds its simulator from its parent's state and this; the attributes
        are the env's ``_SIM_FROM_JOBS``, ``_SIM_PER_CHUNK`` and ``_SIM_PER_JOB``)."""
        self.jobs = jobs
        J = jobs.num_jobs
        tau0 = iteration_time_h(jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, False)
        tau1 = iteration_time_h(jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, True)
        self.p_edge = chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau0, self.speed, self.slotted)  # (J,)
        self.p_cloud = chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau1, self.speed, self.slotted)  # (J,)
        D = np.asarray(jobs.num_chunks, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(D)]).astype(np.int64)  # (J+1,)
        N = int(self.offsets[-1]) if self.keep_schedule else self._win_cap  # chunks, or slots of the window
        if self.keep_schedule:
            self.chunk_job = np.repeat(np.arange(J, dtype=np.int64), D)  # (N,)
        else:  # written per slot at placement
            self.chunk_job = np.zeros(N, dtype=np.int64)
        # per-chunk state (valid once placed)
        self.chunk_worker = np.full(N, -2, dtype=np.int64)  # -2 unplaced, -1 cloud, else edge worker
        self.chunk_rho = np.zeros(N)  # release time on its worker
        self.chunk_key = np.zeros(N)  # HAPRF key D·p
        self.chunk_seq = np.zeros(N, dtype=np.int64)
        self.chunk_end = np.full(N, _INF)  # projected (later: actual) completion c_jd
        self._rem = np.zeros(N)  # remaining service as of the worker's sync time
        self._inv_d = (1.0 / D)[self.chunk_job] if N and self.keep_schedule else np.zeros(N)  # 1/D_j of its job
        self.chunk_alpha = np.zeros(N)  # α_jd recorded at dispatch
        self.job_end = np.full(J, _INF)  # projected / actual c_j
        self.job_zeta = np.zeros(J, dtype=bool)
        self.job_edge_chunks = np.zeros(J, dtype=np.int64)
        self.job_cloud_chunks = np.zeros(J, dtype=np.int64)
        self._delay_edge = np.ascontiguousarray(jobs.upload_delay_edge_slots, dtype=np.float64)
        self._served = np.zeros(N)  # scratch of CALCULATEQ, all zero between calls
        self._arrival = np.ascontiguousarray(jobs.arrival_slots, dtype=np.float64)
        self._job_type = np.ascontiguousarray(jobs.worker_type, dtype=np.int64)
        self._keys = np.full(J, np.nan)  # HAPRF key of each job, computed on first use
        # per-job scalars as Python lists (indexing a list is cheaper than a NumPy scalar per step)
        self._D_list = D.tolist()
        self._r_list = self._arrival.tolist()
        self._p0_list = np.asarray(self.p_edge, dtype=np.float64).tolist()
        self._p1_list = np.asarray(self.p_cloud, dtype=np.float64).tolist()
        self._dc_arr = np.ascontiguousarray(jobs.upload_delay_cloud_slots, dtype=np.float64)
        self._D_arr = D
        self._p0_arr = np.ascontiguousarray(self.p_edge, dtype=np.float64)
        self._p1_arr = np.ascontiguousarray(self.p_cloud, dtype=np.float64)
        self._dc_list = self._dc_arr.tolist()
        self._wt_list = self._job_type.tolist()
        self._off_list = self.offsets.tolist()

    # ------------------------------------------------------------------ state helpers
    def _key(self, j: int) -> float:
        """HAPRF key D_j·p_j of job ``j`` (:func:`haprf_key`), computed once."""
        k = float(self._keys[j])
        if k != k:
            k = self._keys[j] = haprf_key(float(self._D_list[j]), self._p0_list[j])
        return k

    def fill_keys(self, keys: np.ndarray, start: int) -> np.ndarray:
        """``keys`` (J,) with the HAPRF key (:func:`haprf_key`) of every job from ``start`` on written where it is
        NaN (a cache of keys per row, shared by simulators whose job tables agree from ``start`` on); returns it."""
        todo = np.flatnonzero(np.isnan(keys[start:])) + start
        for j in todo.tolist():
            keys[j] = haprf_key(float(self._D_list[j]), self._p0_list[j])
        return keys

    def reserve(self, *, heap: int = 0, log_rows: int = 0) -> None:
        """Capacity for ``heap`` completion-heap entries and ``log_rows`` executed-log rows (buffers grown, the
        contents and every result the same): for a simulator about to be copied many times (forks)."""
        if heap > self._hcap:
            for name in ("_hk", "_hs", "_hi"):
                old = getattr(self, name)
                new = np.zeros(heap, dtype=old.dtype)
                new[: old.size] = old
                setattr(self, name, new)
            self._hcap = heap
        if log_rows > self._lcap:
            self._ensure_log(log_rows - int(self._k.log_need(self._cnt, self._plen, self._phead)))

    @property
    def _k(self):
        return _K if _K is not None else _kernels()

    @property
    def postponed_chunks(self) -> int:
        """Chunks postponed so far: Σ over placed edge chunks of |A2| of their worker (Alg. 3)."""
        return int(self._cnt[4])

    def _state(self):
        """The worker/log arrays every sync-type kernel takes, in their order."""
        return (self._qbuf, self._qlen, self._rem, self.chunk_end, self.worker_sync, self._ps, self._pe, self._pc,
                self._phead, self._plen, self._head_start, self._head_end, self._lw, self._ls, self._le, self._lc,
                self._llast, self._cnt)

    def _ensure_log(self, extra: int = 0) -> None:
        """Room in the log for every planned segment (a sync never logs more rows than planned segments), and for
        ``extra`` more rows."""
        need = int(self._k.log_need(self._cnt, self._plen, self._phead)) + extra
        if need > self._lcap:
            cap = max(need, 2 * self._lcap)
            for name in ("_lw", "_ls", "_le", "_lc"):
                old = getattr(self, name)
                new = np.zeros(cap, dtype=old.dtype)
                new[: old.size] = old
                setattr(self, name, new)
            self._lcap = cap

    # ------------------------------------------------------------ bounded history (keep_schedule=False)
    #: per-slot arrays of the window (moved together when the window slides or grows)
    _SLOT_ARRAYS = ("chunk_job", "_inv_d", *PER_CHUNK, "_ran")

    def _cloud_row(self, c: int, start: float, end: float) -> None:
        """Log the running interval of a job's cloud chunks (slot ``c``: its first) as a row of worker -1."""
        self._ensure_log(1)
        n = int(self._cnt[0])
        self._lw[n], self._ls[n], self._le[n], self._lc[n] = -1, start, end, c
        self._cnt[0] = n + 1

    def _flush(self, t: float | None = None) -> None:
        """Consume the log rows of the jobs finished by ``t`` (default: the time up to which every worker's runs
        are logged, ``min(now, earliest head segment start)``) into the intervals, counts and busy time kept
        (``_kernels.flush_log``)."""
        self._settle_history()
        if t is None:
            t = min(self.now, float(self._head_start.min(initial=_INF)))
        need = int(self._fl[2]) + int(self._cnt[0])
        if need > self._iv_j.size:
            cap = max(need, 2 * self._iv_j.size)
            for name in ("_iv_j", "_iv_s", "_iv_e"):
                old = getattr(self, name)
                new = np.zeros(cap, dtype=old.dtype)
                new[: old.size] = old
                setattr(self, name, new)
        self._k.flush_log(float(t), self._lw, self._ls, self._le, self._lc, self._cnt, self._llast, self.chunk_job,
                          self.job_end, self._ran, self._busy, self._fl, self._iv_j, self._iv_s, self._iv_e)
        self._flush_at = max(_FLUSH_MIN, 4 * int(self._cnt[0]))

    def _shift_window(self, j: int) -> None:
        """Make room in the window for job ``j``'s slots: consume the log, drop the slots of the jobs before the
        oldest one still needed (a chunk queued or a log row kept), and grow the window if that is not enough.
        Slot ids held in the queues, the plans and the log move with the window."""
        self._flush()
        lo = j
        qmask = np.arange(self._qbuf.shape[1]) < self._qlen[:, None]
        queued = self._qbuf[qmask]
        if queued.size:
            lo = min(lo, int(self.chunk_job[queued].min()))
        n = int(self._cnt[0])
        if n:
            lo = min(lo, int(self.chunk_job[self._lc[:n]].min()))
        new_base = self._off_list[lo]
        delta = new_base - self.chunk_base
        used = self._off_list[j] - self.chunk_base
        cap = self._win_cap
        need = self._off_list[j + 1] - new_base
        if 2 * need > cap:  # at least half the window free after the slide: slides stay rare
            cap = max(2 * need, 2 * cap)
        for name in self._SLOT_ARRAYS:
            a = getattr(self, name)
            if cap != self._win_cap:
                b = np.zeros(cap, dtype=a.dtype)
                b[: used - delta] = a[delta:used]
                setattr(self, name, b)
            elif delta:
                a[: used - delta] = a[delta:used]
        if cap != self._win_cap:
            self._served = np.zeros(cap)
            self._win_cap = cap
        if delta:
            self._qbuf[qmask] -= delta
            cols = np.arange(self._pc.shape[1])
            self._pc[(cols >= self._phead[:, None]) & (cols < self._plen[:, None])] -= delta
            self._lc[:n] -= delta
            self.chunk_base = new_base

    def _check_schedule_kept(self, what: str) -> None:
        if not self.keep_schedule:
            raise RuntimeError(f"{what} needs the executed schedule, which this simulator does not keep "
                               "(keep_schedule=False)")

    @property
    def busy_time(self) -> float:
        """Edge worker busy time executed so far (slots): the sum of the executed runs' lengths (with
        ``keep_schedule=False``: the runs consumed so far, all of them after the drain, summed exactly)."""
        if self.keep_schedule:
            n = int(self._cnt[0])
            return float(np.sum(self._le[:n] - self._ls[:n]))
        self._settle_history()
        return math.fsum(self._busy[: int(self._fl[3])].tolist())

    def _chunks_in_use(self) -> int:
        """Slots of the per-chunk arrays holding the chunks placed so far (chunk ids with ``keep_schedule``)."""
        return self._off_list[self.num_placed] - self.chunk_base

    #: simulator attributes that are per chunk slot in the bounded history (``keep_schedule=False``)
    _SLOT_STATE = ("chunk_job", "_inv_d", *PER_CHUNK)

    def lean_copy(self, shared: frozenset = frozenset(), *, room: int = 4096) -> PaperSimulator:
        """An independent copy with the bounded history (``keep_schedule=False``) holding only what the jobs
        still in the system need: the per-chunk state of the jobs from the oldest one with a chunk queued or a
        run not yet consumed (a window of slots), the executed log consumed as ``_kernels.flush_log`` consumes
        it (the finished jobs' rows become A_ps's intervals, the run counts and the exact busy time). Every
        later candidate table, placement, completion, Φ, A_ps draw and metric is the one this simulator would
        give (the bounded history's guarantee, see the class docstring); the copy is a fraction of this one's
        size late in an episode (for look-ahead forks). ``shared``: attribute names that are shared, not copied
        (never written in place); the per-slot arrays are always the copy's own. ``room``: free slots in the
        window and free rows in the log beyond what is used (more are made on demand, as always)."""
        from ...core.forking import fast_copy

        K = self._k
        if not self.keep_schedule:  # already bounded: a copy with the window as it is
            return self._copy_state(shared)
        nplaced = self.num_placed
        off = self._off_list
        n_log = int(self._cnt[0])
        # the log, plus the cloud row the bounded history logs for each job's cloud chunks (a job's cloud chunks
        # come first in its chunks and run together), split as _kernels.flush_log splits it at t (every run before
        # t is logged): the rows of the jobs finished by t are consumed (their order within the kept rows and the
        # history does not matter: the consumption sorts by job), the others kept in order, in chunk ids until the
        # window is known. The finished jobs' rows are consumed lazily (_settle_history): only a drain or a metric
        # reads what they become.
        t = min(self.now, float(self._head_start.min(initial=_INF)))
        cj = np.flatnonzero(self.job_cloud_chunks[:nplaced] > 0)
        first = self.offsets[cj]
        lw_all = np.concatenate([self._lw[:n_log], np.full(cj.size, -1, dtype=self._lw.dtype)])
        ls_all = np.concatenate([self._ls[:n_log], self.chunk_rho[first]])
        le_all = np.concatenate([self._le[:n_log], self.chunk_end[first]])
        lc_all = np.concatenate([self._lc[:n_log], first])
        done = self.job_end[self.chunk_job[lc_all]] <= t
        kept = np.flatnonzero(~done)
        gone = np.flatnonzero(done)
        n = kept.size
        lw, ls, le, lc = (_prefix_grow(x[kept], n, n + room) for x in (lw_all, ls_all, le_all, lc_all))
        newidx = np.full(lw_all.size, -1, dtype=np.int64)
        newidx[kept] = np.arange(n)
        llast = self._llast.copy()
        live = llast >= 0
        llast[live] = newidx[llast[live]]
        cnt = self._cnt.copy()
        cnt[0] = n
        hist = (lw_all[gone], ls_all[gone], le_all[gone], lc_all[gone], self.chunk_job) if gone.size else None
        # the window: from the oldest job with a chunk queued or a log row kept (as _shift_window)
        lo = nplaced
        qmask = np.arange(self._qbuf.shape[1]) < self._qlen[:, None]
        queued = self._qbuf[qmask]
        if queued.size:
            lo = min(lo, int(self.chunk_job[queued].min()))
        if n:
            lo = min(lo, int(self.chunk_job[lc[:n]].min()))
        base = off[lo]
        used = off[nplaced] - base
        cap = max(1, used + room)
        d = {}
        memo: dict = {}
        slot_state = self._SLOT_STATE
        for name, v in self.__dict__.items():
            if name in slot_state or name in self._LEAN_REBUILT:
                continue
            if type(v) is np.ndarray:
                d[name] = v if name in shared else v.copy()
            elif name in shared or isinstance(v, int | float | bool | str | type(None)):
                d[name] = v
            else:
                d[name] = fast_copy(v, memo)
        new = object.__new__(PaperSimulator)
        new.__dict__.update(d)
        for name in slot_state:
            a = getattr(self, name)
            b = np.zeros(cap, dtype=a.dtype)
            b[:used] = a[base : base + used]
            setattr(new, name, b)
        new.chunk_worker[used:] = -2
        new.chunk_end[used:] = _INF
        new._ran = np.zeros(cap, dtype=np.bool_)  # nothing consumed yet
        new._served = np.zeros(cap)
        new.keep_schedule = False
        new.chunk_base = base
        new._win_cap = cap
        # A_ps's intervals, the run counts and the busy time: those of the finished jobs' rows, when settled
        new._fl, new._busy = np.zeros(4, dtype=np.int64), np.zeros(256)
        new._iv_j, new._iv_s, new._iv_e = np.zeros(1024, dtype=np.int64), np.zeros(1024), np.zeros(1024)
        new._hist = hist
        new._flush_at = max(_FLUSH_MIN, 4 * n)
        # the log rows kept, in slots, with ``room`` free rows
        lc[:n] -= base
        new._lw, new._ls, new._le, new._lc = lw, ls, le, lc
        new._cnt, new._llast, new._lcap = cnt, llast, n + room
        # the queues in slots, and each worker's plan moved to columns 0.. (every kernel reads the columns
        # phead..plen of a plan and a re-plan writes from column 0), both as wide as the longest now needs
        qlen = self._qlen
        plen = self._plen - self._phead
        qcap = max(12, 2 * int(qlen.max(initial=0)), (int(plen.max(initial=0)) - 1) // 2)
        W = qlen.size
        new._qcap = qcap
        new._qbuf = np.zeros((W, qcap), dtype=np.int64)
        new._qbuf[:, : min(qcap, self._qbuf.shape[1])] = self._qbuf[:, :qcap]
        new._qbuf[np.arange(qcap) < qlen[:, None]] -= base
        pcap = 2 * qcap + 2
        new._ps, new._pe, new._pc = (np.zeros((W, pcap), dtype=a.dtype) for a in (self._ps, self._pe, self._pc))
        K.compact_plans(self._ps, self._pe, self._pc, self._phead, self._plen, base, new._ps, new._pe, new._pc)
        new._phead = np.zeros(W, dtype=np.int64)
        new._plen = plen
        new._si = np.zeros((4, qcap), dtype=np.int64)
        new._sf = np.zeros((4, qcap))
        return new

    #: what :meth:`lean_copy` builds anew instead of copying
    _LEAN_REBUILT = frozenset({"_qbuf", "_ps", "_pe", "_pc", "_phead", "_plen", "_si", "_sf", "_lw", "_ls", "_le",
                               "_lc", "_cnt", "_llast"})

    def _settle_history(self) -> None:
        """Consume the rows of the jobs that had finished when :meth:`lean_copy` made this simulator (kept aside
        until now: ``_hist``) into A_ps's intervals, the run counts and the busy time, as ``_kernels.flush_log``
        consumes rows (their chunks are not in the window: the flags of their first runs are kept apart)."""
        hist = self.__dict__.get("_hist")
        if hist is None:
            return
        self._hist = None
        lw, ls, le, lc, chunk_job = hist
        m = lw.size
        need = int(self._fl[2]) + m
        if need > self._iv_j.size:
            cap = max(need, 2 * self._iv_j.size)
            self._iv_j, self._iv_s, self._iv_e = (_prefix_grow(a, int(self._fl[2]), cap)
                                                  for a in (self._iv_j, self._iv_s, self._iv_e))
        cnt = np.array([m, 0, 0, 0, 0], dtype=np.int64)
        self._k.flush_log(_INF, lw.copy(), ls.copy(), le.copy(), lc.copy(), cnt, np.zeros(0, dtype=np.int64),
                          chunk_job, self.job_end, np.zeros(chunk_job.size, dtype=np.bool_), self._busy, self._fl,
                          self._iv_j, self._iv_s, self._iv_e)

    def _copy_state(self, shared: frozenset) -> PaperSimulator:
        """A plain copy of this simulator (arrays copied, ``shared`` names shared): :meth:`lean_copy` of a
        simulator that already keeps the bounded history."""
        from ...core.forking import fast_copy

        memo: dict = {}
        new = object.__new__(PaperSimulator)
        for name, v in self.__dict__.items():
            if type(v) is np.ndarray:
                new.__dict__[name] = v if name in shared and name not in self._SLOT_STATE else v.copy()
            elif name in shared or isinstance(v, int | float | bool | str | type(None)):
                new.__dict__[name] = v
            else:
                new.__dict__[name] = fast_copy(v, memo)
        return new

    def _adopt_placed(self, old: PaperSimulator, k: int) -> None:
        """Take ``old``'s state of the chunks and jobs placed so far (job ``k`` arriving): a resampled fork's
        simulator, whose job-table parts :meth:`_init_jobs` rebuilt on the spliced table."""
        n0 = old._chunks_in_use()
        # with keep_schedule=False the chunk's job and 1/D are per-slot state too (_ran: a copy of old's already)
        for name in self.PER_CHUNK if self.keep_schedule else ("chunk_job", "_inv_d", *self.PER_CHUNK):
            getattr(self, name)[:n0] = getattr(old, name)[:n0]
        for name in self.PER_JOB:
            getattr(self, name)[: k + 1] = getattr(old, name)[: k + 1]

    def _ensure_queue(self, extra: int) -> None:
        """Room for ``extra`` more chunks in any one queue (and for the plans that go with it)."""
        need = int(self._qlen.max(initial=0)) + extra
        if need <= self._qcap:
            return
        cap = max(need, 2 * self._qcap)
        W = self._qlen.size
        qb = np.zeros((W, cap), dtype=np.int64)
        qb[:, : self._qcap] = self._qbuf
        self._qbuf = qb
        self._si = np.zeros((4, cap), dtype=np.int64)
        self._sf = np.zeros((4, cap))
        pcap = 2 * cap + 2
        for name in ("_ps", "_pe", "_pc"):
            old = getattr(self, name)
            new = np.zeros((W, pcap), dtype=old.dtype)
            new[:, : old.shape[1]] = old
            setattr(self, name, new)
        self._qcap = cap

    def _ensure_heap(self, extra: int) -> None:
        """Room for ``extra`` completion-heap pushes (compacting stale entries first)."""
        n = int(self._cnt[1])
        if n + extra <= self._hcap:
            return
        self._k.finished_jobs(self.now, self.job_end, self._hk, self._hs, self._hi, self._cnt)
        n = int(self._cnt[1])
        live = np.unique(self._hi[:n])
        live = live[self.job_end[live] > self.now]
        cap = self._hcap
        while live.size + extra > cap // 2:
            cap *= 2
        hk, hs, hi = np.zeros(cap), np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64)
        order = np.lexsort((live, self.job_end[live]))  # a sorted array is a valid heap
        hk[: live.size] = self.job_end[live][order]
        hs[: live.size] = live[order]
        hi[: live.size] = live[order]
        self._hk, self._hs, self._hi, self._hcap = hk, hs, hi, cap
        self._cnt[1] = live.size

    # ------------------------------------------------------------------ time
    def _move_clock(self, t: float) -> bool:
        """The clock moved to ``t`` (never backwards; a ``ValueError`` otherwise); False when it already was advanced
        to ``t`` with nothing placed since (nothing to execute)."""
        if t < self.now - _TOL:
            raise ValueError(f"the clock never goes back: now={self.now}, asked for {t}")
        if t == self._advanced:  # already advanced to t and nothing placed since: a no-op
            return False
        self.now = max(self.now, float(t))
        return True

    def advance_to(self, t: float) -> None:
        """Move the clock to ``t`` (never backwards), executing every worker's plan up to ``t``."""
        if not self._move_clock(t):
            return
        # execute plan heads that end by now; a head still running at `now` is logged later, in one piece
        K = self._k
        if K.advance_checked(self.now, *self._state()) < 0:  # the log first needs room for every planned segment
            self._ensure_log()
            K.advance(self.now, *self._state())
        self._advanced = self.now

    def busy_workers(self) -> int:
        """Number of edge workers training a chunk at the current time."""
        return int(np.count_nonzero(self._head_start <= self.now))

    def jobs_in_system(self) -> int:
        """Placed jobs whose projected completion is after the current time (O(log) amortised per change)."""
        done = self._k.finished_jobs(self.now, self.job_end, self._hk, self._hs, self._hi, self._cnt)
        return self.num_placed - int(done)

    # ------------------------------------------------------------ decisions
    def next_job(self) -> int:
        """Index of the next job to place (== number placed so far)."""
        return self.num_placed

    def qualified_workers(self, j: int) -> np.ndarray:
        """Edge workers qualified for job ``j`` (type match), ordered by (server, index)."""
        return self._qualified.get(int(self.jobs.worker_type[j]), np.zeros(0, dtype=np.int64))

    def candidates(self, j: int) -> Candidates:
        """CALCULATEQ (the paper's Alg. 3, Eq. (5)) on every qualified edge worker, plus the cloud's Qc0 and Qc1."""
        return self._candidate_table(j, None)

    def advance_and_candidates(self, t: float, j: int) -> Candidates:
        """:meth:`advance_to` ``(t)`` then :meth:`candidates` ``(j)`` (the env's next decision point), in one compiled
        call: the same state and the same table."""
        return self._candidate_table(j, self._move_clock(t))

    def _candidate_table(self, j: int, go: bool | None) -> Candidates:
        """:meth:`candidates` of job ``j``: by the ``candidates`` kernel (``go=None``), or after the clock advance
        of :meth:`advance_to` in the same call (``advance_candidates``; ``go``: the clock moved, as
        :meth:`_move_clock` says)."""
        W = self._W
        D = float(self._D_list[j])
        p0, p1 = self._p0_list[j], self._p1_list[j]
        blk = np.empty((5, W))  # q, t*, wait, A2 weight, backlog (one allocation; the kernel writes every entry)
        a2n = np.empty(W, dtype=np.int64)
        qual = self._qualified.get(self._wt_list[j], self._no_workers)
        args = (qual, self._delay_edge[j], self._worker_server, self._r_list[j], self._key(j), D, p0)
        K = self._k
        if go is None:
            K.candidates(*args, self._qbuf, self._qlen, self._rem, self.chunk_key, self._inv_d, self.chunk_end,
                         self._ps, self._pe, self._pc, self._phead, self._plen, self._served, blk[0], blk[1], blk[2],
                         blk[3], a2n, blk[4])
        else:
            rest = (self.chunk_key, self._inv_d, self._served, blk, a2n)
            if K.advance_candidates(go, self.now, *self._state(), *args, *rest) < 0:  # the log first needs room
                self._ensure_log()
                K.advance_candidates(go, self.now, *self._state(), *args, *rest)
            if go:
                self._advanced = self.now
        if self._has_cloud:
            dc = self._dc_list[j]
            qc0, qc1 = (dc + p0) / D, (dc + p1) / D
        else:
            qc0 = qc1 = _INF
        return _new_candidates((j, p0, p1, blk[0], blk[1], blk[2], blk[3], a2n, blk[4], qc0, qc1))

    def worker_order(self) -> np.ndarray:
        """Each edge worker's tie-break rank: its position in (server, index) order (A_greedy's ``order``)."""
        cl = self.cluster
        order = np.empty(cl.num_workers, dtype=np.int64)
        order[np.lexsort((np.arange(cl.num_workers), cl.worker_server))] = np.arange(cl.num_workers)
        return order

    def place_greedy(self, stop: int | None = None, *, cloud: bool = True, order: np.ndarray | None = None,
                     rewards: np.ndarray | None = None, first: tuple[np.ndarray, int] | None = None) -> int:
        """Place jobs ``num_placed .. stop-1`` (default: every job left) as A_greedy (the paper's Alg. 2) does, in
        one compiled loop (``_kernels.greedy_run``).

        The same placements, state and Φ as, per job, :meth:`candidates`, :func:`greedy_placement` and
        :meth:`place` (and so as stepping the env with ``A_online``); the loop hands a job back to that ordinary
        path whenever it needs a buffer grown or the bounded history maintained. ``cloud=False``: the cloud's
        options are off, as ``A_online-E`` (a job with no qualified edge worker still goes to the cloud).
        ``order``: the workers' tie-break rank (default :meth:`worker_order`). ``rewards``: a float array
        ``[total, return, reward scale]`` to which each placed job's reward ``-ΔΦ / scale`` is added, in order (as the
        env's ``step`` computes it). Returns how many of the placed jobs had no qualified edge worker (sent whole to
        the cloud: the env's ``fallbacks``). ``first``: ``(worker_counts, num_cloud)``, the placement of the first
        of those jobs instead of A_greedy's (as :meth:`place` takes it; checked the same way), the jobs after it
        by A_greedy: a given action continued by A_online."""
        stop, order, first_job, first_counts, first_cloud = self._greedy_prep(stop, order, first)
        K = self._k
        clock = np.array([self.now, self._advanced])
        track = rewards is not None
        acc = np.array([self._phi, *rewards]) if track else np.zeros(4)
        nparts = np.array([self._end_np, self._arr_np], dtype=np.int64)
        bounded = not self.keep_schedule
        fallbacks = 0
        while self.num_placed < stop:
            j, fb, need, amount = K.greedy_run(
                self.num_placed, stop, bounded, self._has_cloud, self._has_cloud and cloud,
                self._flush_at if bounded else 0, self._win_cap, self.chunk_base, clock, nparts, track, acc,
                first_job, first_counts, first_cloud, *self._greedy_state(order, bounded))
            fallbacks += int(fb)
            self.now, self._advanced = float(clock[0]), float(clock[1])
            self._end_np, self._arr_np = int(nparts[0]), int(nparts[1])
            self.num_placed = j = int(j)
            # what place() (or advance_to) would do at this point, then on with the loop
            if need == K.NEED_LOG:
                self._ensure_log()
            elif need == K.NEED_LOG_ROW:
                self._ensure_log(1)
            elif need == K.NEED_QUEUE:
                self._ensure_queue(int(amount))
            elif need == K.NEED_HEAP:
                self._ensure_heap(int(amount))
            elif need == K.NEED_WINDOW:
                if self._cnt[0] > self._flush_at:
                    self._flush()
                if self._off_list[j + 1] - self.chunk_base > self._win_cap:
                    self._shift_window(j)
            elif need == K.NEED_ORDINARY:  # no cloud for a job that needs one: place() says so
                self.place(j, np.zeros(self._W, dtype=np.int64), self._D_list[j])
        ends, arrs = self._end_part[: self._end_np].tolist(), self._arr_part[: self._arr_np].tolist()
        self._phi = math.fsum(ends) - math.fsum(arrs)
        if track:
            rewards[:] = acc[1:]
        return fallbacks

    def score_greedy(self, stop: int, *, cloud: bool = True, order: np.ndarray | None = None,
                     first: tuple[np.ndarray, int] | None = None, total: float = 0.0, scale: float = 1.0
                     ) -> float | None:
        """``total`` plus the rewards ``-ΔΦ / scale`` of :meth:`place_greedy` ``(stop, ...)``, computed on scratch
        copies inside one compiled call (``_kernels.greedy_score``): this simulator is left as it was (only the
        HAPRF keys of jobs ``num_placed .. stop-1`` are memoised, as :meth:`place_greedy` does). The score of a
        look-ahead without a copy of the simulator. ``None`` where the compiled loop would stop before ``stop``
        for Python-side work (a buffer grown, the bounded history maintained, a job with no cloud): the caller
        then takes :meth:`place_greedy`'s path on a copy. The same floats as that path (the same kernel on the same
        values)."""
        stop, order, first_job, first_counts, first_cloud = self._greedy_prep(stop, order, first)
        acc = np.array([self._phi, float(total), 0.0, float(scale)])
        bounded = not self.keep_schedule
        j, _, need, _ = self._k.greedy_score(
            self.num_placed, stop, bounded, self._has_cloud, self._has_cloud and cloud,
            self._flush_at if bounded else 0, self._win_cap, self.chunk_base, np.array([self.now, self._advanced]),
            np.array([self._end_np, self._arr_np], dtype=np.int64), acc, first_job, first_counts, first_cloud,
            *self._greedy_state(order, bounded))
        return float(acc[1]) if need == self._k.NEED_NONE and j == stop else None

    def _greedy_prep(self, stop: int | None, order: np.ndarray | None, first: tuple[np.ndarray, int] | None
                     ) -> tuple[int, np.ndarray, int, np.ndarray, int]:
        """The checks and inputs of :meth:`place_greedy` and :meth:`score_greedy`: ``(stop, order, first job,
        its worker counts, its cloud chunks)`` (``-1``: no given first placement), the keys of the jobs to place
        memoised."""
        if self._drained:
            raise RuntimeError("the simulator has drained; no more placements")
        J = self.jobs.num_jobs
        stop = J if stop is None else int(stop)
        if not self.num_placed <= stop <= J:
            raise ValueError(f"stop must lie in [{self.num_placed}, {J}] (jobs placed so far .. jobs), got {stop}")
        order = self.worker_order() if order is None else np.ascontiguousarray(order, dtype=np.int64)
        first_job, first_counts, first_cloud = -1, self._no_workers, 0
        if first is not None and self.num_placed < stop:
            first_job = self.num_placed
            first_counts, first_cloud = self._checked_placement(first_job, *first)[:2]
        for j in np.flatnonzero(np.isnan(self._keys[self.num_placed : stop])).tolist():
            self._key(self.num_placed + j)
        return stop, order, first_job, first_counts, first_cloud

    def _greedy_state(self, order: np.ndarray, bounded: bool) -> tuple:
        """The arguments of ``_kernels.greedy_run`` (and ``greedy_score``) after ``first_cloud``: the job table's
        arrays, the cluster's and the state (read when called: a grown buffer is a new array)."""
        return (
            self._D_arr, self._arrival, self._p0_arr, self._p1_arr, self._dc_arr, self._job_type, self._keys,
            self.offsets, self._delay_edge, self._qual_ptr, self._qual_idx, self._worker_server, self._worker_type,
            order, self._qbuf, self._qlen, self._rem, self.chunk_key, self._inv_d, self.chunk_end, self.worker_sync,
            self._ps, self._pe, self._pc, self._phead, self._plen, self._head_start, self._head_end, self._lw,
            self._ls, self._le, self._lc, self._llast, self._cnt, self._served, self.chunk_worker, self.chunk_rho,
            self.chunk_seq, self.chunk_alpha, self.chunk_job, self._mark, self._touched, self._si, self._sf,
            self._ran if bounded else _NO_RAN, self.job_end, self.job_zeta, self.job_edge_chunks,
            self.job_cloud_chunks, self._end_part, self._arr_part, self._hk, self._hs, self._hi, self._used,
            self._rho_used,
        )

    def _checked_placement(self, j: int, worker_counts, num_cloud) -> tuple[np.ndarray, int, int, int, int, int]:
        """The checks of :meth:`place` on job ``j``'s placement (a ``ValueError`` for a bad one): ``(counts as a
        contiguous int64 array, num_cloud, chunks on the edge, workers used, the most chunks on one worker, the
        longest queue of any worker)``; the used workers and their releases are left in ``_used`` and
        ``_rho_used``."""
        D = self._D_list[j]
        counts = np.ascontiguousarray(worker_counts, dtype=np.int64).reshape(-1)
        if counts.size != self._W:
            raise ValueError(f"worker_counts has {counts.size} entries, the cluster has {self._W} workers")
        # one compiled pass: Σ counts, min, max, the used workers (np.flatnonzero) and their releases, type check
        n_edge, n_used, c_min, c_max, bad_type, q_max = self._k.check_counts(
            counts, self._worker_type, self._wt_list[j], self._delay_edge[j], self._worker_server, self._r_list[j],
            self._used, self._rho_used, self._qlen)
        if c_min < 0 or num_cloud < 0 or n_edge + int(num_cloud) != D:
            raise ValueError(f"placement of job {j} must put its {D} chunks somewhere exactly once")
        if bad_type:
            raise ValueError(f"job {j} placed on a worker of the wrong type")
        if num_cloud and not self._has_cloud:
            raise ValueError("this cluster has no cloud")
        return counts, int(num_cloud), n_edge, n_used, c_max, q_max

    def place(self, j: int, worker_counts: np.ndarray, num_cloud: int, cand: Candidates | None = None) -> dict:
        """Dispatch job ``j``'s chunks once and for all: ``worker_counts[w]`` chunks on edge worker ``w`` and
        ``num_cloud`` in the cloud (ζ_j = 1 iff all chunks go to the cloud). Must be called in job order;
        the clock moves to r_j. Returns a record of the placement (counts, ζ_j, α_jd, postponed chunks).
        """
        if self._drained:
            raise RuntimeError("the simulator has drained; no more placements")
        if j != self.num_placed:
            raise ValueError(f"jobs must be placed in order: expected job {self.num_placed}, got {j}")
        K = self._k
        D = self._D_list[j]
        counts, num_cloud, n_edge, n_used, c_max, q_max = self._checked_placement(j, worker_counts, num_cloud)
        used = self._used[:n_used]
        r = self._r_list[j]
        self.advance_to(r)
        if cand is None or cand.job != j:
            cand = self.candidates(j)
        p0 = self._p0_list[j]
        zeta = num_cloud == D
        self.job_zeta[j] = zeta
        if self.keep_schedule:
            c = self._off_list[j]
        else:  # the job's slots in the window, made room for and initialised
            if self._cnt[0] > self._flush_at:
                self._flush()
            if self._off_list[j + 1] - self.chunk_base > self._win_cap:
                self._shift_window(j)
            c = self._off_list[j] - self.chunk_base
            K.init_slots(j, c, D, 1.0 / D, self.chunk_job, self._inv_d, self.chunk_worker, self.chunk_end, self._rem,
                         self.chunk_key, self.chunk_seq, self._ran)
        c_first = c
        # cloud chunks: dedicated workers, immediate start after upload
        if num_cloud:
            p = self._p1_list[j] if zeta else p0
            start = r + self._dc_list[j]
            alpha = cand.qc1 if zeta else cand.qc0
            sl = slice(c, c + int(num_cloud))
            self.chunk_worker[sl] = -1
            self.chunk_rho[sl] = start
            self.chunk_end[sl] = start + p
            self.chunk_alpha[sl] = alpha
            if not self.keep_schedule:  # A_ps's running interval of the cloud chunks (all the same): one log row
                self._cloud_row(c, start, start + p)
            c += int(num_cloud)
        postponed_before = int(self._cnt[4])
        if used.size:
            if q_max + c_max > self._qcap:
                self._ensure_queue(int(c_max))
            # no _ensure_log() here: advance_to(r) made room for every planned segment, and the syncs below log
            # at most the segments still planned
            self._advanced = -_INF  # plans change: the next advance_to must run
            nt = K.place_edge(
                j, used, counts, r, self._rho_used[:n_used], self._key(j), p0, float(D), cand.q, cand.a2_count, c,
                self.chunk_worker, self.chunk_rho, self.chunk_key, self.chunk_seq, self._rem, self.chunk_end,
                self.chunk_alpha, self._qbuf, self._qlen, self.worker_sync, self._ps, self._pe, self._pc,
                self._phead, self._plen, self._head_start, self._head_end, self._lw, self._ls, self._le, self._lc,
                self._llast, self._cnt, self.chunk_job, self._mark, self._touched, self._si, self._sf,
            )
        else:
            self._touched[0] = j
            nt = 1
        self.job_edge_chunks[j] = n_edge
        self.job_cloud_chunks[j] = int(num_cloud)
        if self._cnt[1] + nt > self._hcap:
            self._ensure_heap(nt)
        # Φ = fsum(job ends) - fsum(arrivals) of the exact running sums, computed in the same call
        self._end_np, self._arr_np, phi = K.after_place(
            self._touched, nt, self.offsets, self.chunk_base, self.chunk_end, self.job_end, self._end_part,
            self._end_np, self._hk, self._hs, self._hi, self._cnt, self._arr_part, self._arr_np, r)
        self.num_placed += 1
        phi_before = self._phi
        self._phi = phi
        return {
            "job": j,
            "zeta": bool(zeta),
            "edge_chunks": n_edge,
            "cloud_chunks": int(num_cloud),
            "alpha": self.chunk_alpha[c_first : c_first + D].copy(),
            "projected_jct": float(self.job_end[j] - r),
            "postponed_chunks": int(self._cnt[4]) - postponed_before,
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
            self._ensure_log()
            self._k.sync_all(_INF, *self._state())
            self._drained = True
            self.now = float(self.job_end.max()) if self.jobs.num_jobs else self.now
            if not self.keep_schedule:
                self._flush(_INF)
            self.assign_ps()
        return self.outcome()

    def _log(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Executed runs ``(worker, start, end, chunk)`` grouped by worker (each worker's in time order)."""
        self._check_schedule_kept("the executed log")
        n = int(self._cnt[0])
        o = self._k.log_order(self._lw, n)  # == np.argsort(self._lw[:n], kind="stable")
        return self._lw[:n][o], self._ls[:n][o], self._le[:n][o], self._lc[:n][o]

    def segments(self) -> np.ndarray:
        """Executed edge work so far: rows ``[worker, start, end, job]``.                 # (N, 4)"""
        return self._log_rows(self.chunk_job)

    def chunk_segments(self) -> np.ndarray:
        """Executed edge work so far per chunk: rows ``[worker, start, end, chunk]``.     # (N, 4)"""
        return self._log_rows(np.arange(self.chunk_job.size, dtype=np.int64))

    def _log_rows(self, label: np.ndarray) -> np.ndarray:
        """The executed log as float rows ``[worker, start, end, label[chunk]]``, grouped by worker (each worker's
        in time order): one compiled pass (``_kernels.log_rows``) for ``np.column_stack`` of :meth:`_log`."""
        self._check_schedule_kept("the executed log")
        return self._k.log_rows(self._lw, self._ls, self._le, self._lc, int(self._cnt[0]), label)

    @property
    def worker_log(self) -> list[list[list]]:
        """Executed runs per worker as ``[start, end, chunk]`` lists (built on demand, for rendering/tests)."""
        out: list[list[list]] = [[] for _ in range(self.cluster.num_workers)]
        for w, s, e, c in zip(*(a.tolist() for a in self._log()), strict=True):
            out[w].append([s, e, c])
        return out

    @property
    def worker_plan(self) -> list[list[list]]:
        """Projected segments per worker as ``[start, end, chunk]`` lists (built on demand, for rendering)."""
        b = self.chunk_base
        return [
            [[float(self._ps[w, k]), float(self._pe[w, k]), int(self._pc[w, k]) + b] for k in range(h, n)]
            for w, (h, n) in enumerate(zip(self._phead.tolist(), self._plen.tolist(), strict=True))
        ]

    @property
    def worker_queue(self) -> list[list[int]]:
        """Chunk ids queued on each worker, in dispatch order (built on demand)."""
        return [(self._qbuf[w, :n] + self.chunk_base).tolist() for w, n in enumerate(self._qlen.tolist())]

    def preemptions(self) -> int:
        """Times a started, unfinished chunk stopped for another chunk: Σ_chunks (executed runs − 1) (with
        ``keep_schedule=False``: over the runs consumed so far, all of them after the drain)."""
        if not self.keep_schedule:
            self._settle_history()
            return int(self._fl[0] - self._fl[1])
        n = int(self._cnt[0])
        runs = np.bincount(self._lc[:n], minlength=self.chunk_job.size)
        return int(np.sum(np.maximum(runs - 1, 0)))

    def outcome(self) -> ScheduleOutcome:
        """The :class:`ScheduleOutcome` of a drained episode."""
        return ScheduleOutcome(
            completion_slots=self.job_end.copy(),
            segments=self.segments() if self.keep_schedule else np.zeros((0, 4)),
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
    def assign_ps(self) -> np.ndarray:
        """A_ps (the paper's Alg. 5) as one sweep over the executed trace, with two corrections.

        Alg. 1 (line 4) passes A_ps only the newly arrived jobs; every arrived, unfinished job needs a PS, so all
        are swept. Alg. 5 may find no free qualified PS; the job then gets a cloud PS (unlimited).

        Returns and stores ``ps_log``: rows ``[ps, start, end, job]`` where ``ps`` is an edge PS index, or
        ``-1`` for a cloud PS (unlimited).                                                   # (M, 4)
        """
        cl, jobs = self.cluster, self.jobs
        from ...core.forking import own_generator

        own_generator(self, "rng")  # shared with a fork: a generator of its own, in the same state
        if self.keep_schedule:
            n = int(self._cnt[0])
            cloud = np.flatnonzero(self.chunk_worker == -1).astype(np.int64)
            ij, is_, ie = self._k.job_intervals(self._lw, self._ls, self._le, self._lc, n, self.chunk_job, cloud,
                                                self.chunk_rho, self.chunk_end, jobs.num_jobs)
        else:  # the intervals the consumed log left, each job's in one piece: sorted by job, then start
            m = int(self._fl[2])
            o = np.argsort(self._iv_j[:m], kind="stable")
            ij, is_, ie = self._iv_j[:m][o], self._iv_s[:m][o], self._iv_e[:m][o]
        # events: acquire (start, 1, job) and release (end, 0, job), sorted by (time, kind, job)
        m = ij.size
        t = np.concatenate([is_, ie])
        kind = np.concatenate([np.ones(m, dtype=np.int64), np.zeros(m, dtype=np.int64)])
        ej = np.concatenate([ij, ij])
        order = np.lexsort((ej, kind, t))
        t, kind, ej = t[order], kind[order], ej[order]
        if type(self.rng.bit_generator) is np.random.PCG64 and self._assign_ps_compiled(t, kind, ej, m):
            return self.ps_log
        free = np.ones(cl.num_ps, dtype=bool)
        # free edge PSs per type, as sorted lists (the pool of a draw, in index order)
        pools: dict[int, list[int]] = {}
        for ps in range(cl.num_ps):
            pools.setdefault(int(cl.ps_type[ps]), []).append(ps)
        held: dict[int, tuple[int, float]] = {}
        rows = []
        zeta = self.job_zeta.tolist()
        ps_type_job = jobs.ps_type.tolist()
        ps_type = cl.ps_type.tolist()
        integers = self.rng.integers
        from bisect import insort

        for tt, kk, j in zip(t.tolist(), kind.tolist(), ej.tolist(), strict=True):
            if kk == 0:
                ps, start = held.pop(j)
                rows.append((ps, start, tt, j))
                if ps >= 0:
                    free[ps] = True
                    insort(pools[ps_type[ps]], ps)
                continue
            ps = -1
            if not zeta[j]:
                pool = pools.get(ps_type_job[j])
                if pool:
                    ps = pool.pop(int(integers(len(pool))))
                    free[ps] = False
                else:
                    self.ps_fallbacks += 1
            held[j] = (ps, tt)
            self.ps_switches += 1
        self.ps_log = np.array(rows, dtype=float).reshape(-1, 4)
        return self.ps_log

    def _assign_ps_compiled(self, t: np.ndarray, kind: np.ndarray, ej: np.ndarray, m: int) -> bool:
        """The sweep of :meth:`assign_ps` in one compiled call (``_kernels.ps_sweep``), with the generator's
        draws reproduced exactly: NumPy's ``integers(n)`` (Lemire's method on PCG64's 32-bit outputs) over raw
        words drawn ahead, after which the generator is left in the state the one-by-one draws leave it in.
        Returns False (nothing changed) when the generator's state is not the plain PCG64 dict."""
        cl, jobs = self.cluster, self.jobs
        bg = self.rng.bit_generator
        st0 = bg.state
        if st0.get("bit_generator") != "PCG64" or "has_uint32" not in st0:
            return False
        pst = np.asarray(cl.ps_type, dtype=np.int64)
        n_types = int(pst.max(initial=-1)) + 1
        pool = np.argsort(pst, kind="stable").astype(np.int64)  # free PSs per type, in index order
        pool_ptr = np.searchsorted(pst[pool], np.arange(n_types + 1)).astype(np.int64)
        J = jobs.num_jobs
        zeta = np.ascontiguousarray(self.job_zeta, dtype=np.bool_)
        job_pst = np.ascontiguousarray(jobs.ps_type, dtype=np.int64)
        out_ps, out_j = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
        out_s, out_e = np.zeros(m), np.zeros(m)
        words = m + 64
        while True:
            raw = bg.random_raw(words)
            bg.state = st0
            st = np.array([0, int(st0["has_uint32"]), int(st0["uinteger"]), 0], dtype=np.int64)
            rows, switches, fallbacks = self._k.ps_sweep(
                t, kind, ej, zeta, job_pst, pst, pool_ptr, pool.copy(), raw, st, out_ps, out_s, out_e, out_j,
                np.full(max(J, 1), -1, dtype=np.int64), np.zeros(max(J, 1)))
            if rows >= 0:
                break
            words *= 2
        if st[0]:
            bg.random_raw(int(st[0]))  # the words the draws used
        st1 = bg.state
        st1["has_uint32"], st1["uinteger"] = int(st[1]), int(st[2])
        bg.state = st1
        self.ps_switches += int(switches)
        self.ps_fallbacks += int(fallbacks)
        self.ps_log = np.column_stack([out_ps[:rows], out_s[:rows], out_e[:rows], out_j[:rows]]).astype(
            float).reshape(-1, 4)
        return True


def _prefix_grow(a: np.ndarray, n: int, size: int) -> np.ndarray:
    """A buffer of ``size`` entries (``size >= n``) whose first ``n`` are ``a``'s, zeros after."""
    out = np.zeros(size, dtype=a.dtype)
    out[:n] = a[:n]
    return out


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
    q = np.ascontiguousarray(q, dtype=np.float64).reshape(-1)
    counts = np.zeros(q.size, dtype=np.int64)
    n_cloud = _kernels().greedy(q, np.ascontiguousarray(order, dtype=np.int64), int(num_chunks), float(p_edge),
                                float(qc0), float(qc1), counts)
    if n_cloud < 0:
        raise ValueError("no qualified edge worker and no cloud: the job cannot be placed")
    return counts, int(n_cloud)


def fill_servers(
    server_counts: np.ndarray, q: np.ndarray, order: np.ndarray, srv_ptr: np.ndarray, srv_workers: np.ndarray,
    step: float, counts: np.ndarray,
) -> None:
    """The within-server Q-min rule for every server at once (one compiled call): ``server_counts[s]`` chunks
    water-filled (:func:`water_fill`) over server ``s``'s workers ``srv_workers[srv_ptr[s]:srv_ptr[s+1]]``,
    written into ``counts`` (W,) int64."""
    bad = _kernels().fill_servers(np.ascontiguousarray(server_counts, dtype=np.int64), q, order, srv_ptr,
                                  srv_workers, float(step), counts)
    if bad >= 0:
        raise ValueError(f"water_fill: no finite candidate on server {bad} to place chunks on")


def server_aggregates(qual: np.ndarray, worker_server: np.ndarray, num_servers: int, cand: Candidates):
    """Per-server aggregates of ``cand`` over the qualified workers ``qual`` for the observation, in one compiled
    pass: ``(qualified count (S,), idle count (S,), min wait / min p·A2 weight / min Q (3, S) (inf: none),
    backlog sum (S,))``; sums in ``qual`` order, equal to ``np.bincount`` and ``np.minimum.at``."""
    return _kernels().server_aggregates(
        np.ascontiguousarray(qual, dtype=np.int64), np.ascontiguousarray(worker_server, dtype=np.int64),
        int(num_servers), cand.backlog, cand.wait, cand.a2_weight, cand.q, float(cand.p_edge),
    )
