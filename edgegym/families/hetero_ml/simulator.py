"""HeteroML simulator (Zhou et al., IEEE TCC 2023): heterogeneous worker/PS types, PS and Ring-AllReduce, a resource ledger.

Numpy only (never gymnasium). Conventions:

* Time is slotted, 1 slot = 1 hour; slots are numbered from 1. Slot ``t`` covers ``[t, t+1)``. A job started at
  slot ``t`` with duration ``d`` occupies slots ``t .. t+d-1`` and completes at ``c = t + d``.
* Resources ``r`` are the columns of ``HeteroCluster.capacity`` (default GPU, vCPU, memory GiB, bandwidth Gbps).
  Workers and PSs consume their type's resource vector on their server for the whole run, bandwidth included
 , even when co-located.
* Durations: ``d = ceil(W_j / (N·rho) - 1e-9)`` with the per-iteration time
  ``iter_PS = v_jm + U^p_j + (1-q)·2π_j/b_m`` (eq. 1) or
  ``iter_RA = v_jm + U_j(N-1)/N + (1-q)·2π_j(N-1)/(N b_m)`` (eq. 14), all in slots; ``q`` is computed from the
  actual placement (1 iff every worker and PS of the job is on one server).

The ledger ``usage[h, r, t]`` grows on demand (completions may exceed the horizon). Two drivers share
it: the reservation driver (:class:`ReservationSim`, commit at arrival, non-preemptive; the Gymnasium env) and
the slot driver (:func:`edgegym.families.hetero_ml.disciplines.run_slot_driver`, elastic/preemptive baselines).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "EPS",
    "HeteroCluster",
    "HeteroJobs",
    "Ledger",
    "Placement",
    "ReservationSim",
    "comm_slots",
    "duration_slots",
    "footprint",
    "is_colocated",
    "iteration_slots",
    "placement_duration",
    "check_placement",
]

EPS = 1e-9
MS_PER_SLOT = 3.6e6
S_PER_SLOT = 3600.0


def _frozen(a, dtype) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, slots=True)
class HeteroCluster:
    """Servers with multi-resource capacities and the worker/PS type tables.

    Attributes:
        capacity: C^r_h.                                                         # (H, R) float64
        worker_res: e^r_m, resource use of one worker of type m.                 # (M, R) float64
        ps_res: z^r_p, resource use of one PS of type p (zeros if arch is "ra"). # (P, R) float64
        bw_index: column of ``capacity`` that is bandwidth (Gbps): b_m = e[m, bw], B_p = z[p, bw].
        arch: "ps" (parameter servers) or "ra" (Ring-AllReduce): a cluster-wide choice.
        resource_names, worker_labels, ps_labels, server_labels: names for reports.
    """

    capacity: np.ndarray
    worker_res: np.ndarray
    ps_res: np.ndarray
    bw_index: int = 3
    arch: str = "ps"
    resource_names: tuple[str, ...] = ("gpu", "vcpu", "mem_gib", "bw_gbps")
    worker_labels: tuple[str, ...] = ()
    ps_labels: tuple[str, ...] = ()
    server_labels: tuple[str, ...] = ()
    cbar: np.ndarray = field(default=None)  # (R,) max_h C^r_h: the cost unit

    def __post_init__(self) -> None:
        for name in ("capacity", "worker_res", "ps_res"):
            object.__setattr__(self, name, _frozen(getattr(self, name), np.float64))
        H, R = self.capacity.shape
        if self.worker_res.shape[1] != R or self.ps_res.shape[1] != R:
            raise ValueError("worker_res and ps_res must have one column per resource")
        if self.arch not in ("ps", "ra"):
            raise ValueError(f"arch must be 'ps' or 'ra', got {self.arch!r}")
        if not 0 <= self.bw_index < R:
            raise ValueError(f"bw_index {self.bw_index} outside [0, {R})")
        if np.any(self.capacity < 0) or np.any(self.worker_res < 0) or np.any(self.ps_res < 0):
            raise ValueError("capacities and resource vectors must be >= 0")
        if np.any(self.worker_res[:, self.bw_index] <= 0):
            raise ValueError("every worker type needs a bandwidth > 0")
        if self.arch == "ps" and np.any(self.ps_res[:, self.bw_index] <= 0):
            raise ValueError("every PS type needs a bandwidth > 0")
        cbar = self.capacity.max(axis=0)
        cbar = np.where(cbar > 0, cbar, 1.0)
        object.__setattr__(self, "cbar", _frozen(cbar, np.float64))

    def _with_capacity(self, capacity: np.ndarray, worker_labels: tuple, ps_labels: tuple,
                       server_labels: tuple) -> HeteroCluster | None:
        """This cluster's (checked, read-only) type tables, bandwidth column and architecture with another
        capacity and labels: the constructor's result without re-checking the type tables; ``None`` where the
        capacity fails a check or is not an (H, R) float64 array (the caller then calls the constructor, which
        raises as before)."""
        cap = capacity
        if (type(cap) is not np.ndarray or cap.dtype != np.float64 or cap.ndim != 2
                or cap.shape[1] != self.worker_res.shape[1] or (cap < 0).any()):
            return None
        cap = _frozen(cap, np.float64)
        cbar = cap.max(axis=0)
        cbar = np.where(cbar > 0, cbar, 1.0)
        out = object.__new__(HeteroCluster)
        for name, val in (("capacity", cap), ("worker_res", self.worker_res), ("ps_res", self.ps_res),
                          ("bw_index", self.bw_index), ("arch", self.arch), ("resource_names", self.resource_names),
                          ("worker_labels", worker_labels), ("ps_labels", ps_labels),
                          ("server_labels", server_labels), ("cbar", _frozen(cbar, np.float64))):
            object.__setattr__(out, name, val)
        return out

    @property
    def num_servers(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def num_resources(self) -> int:
        return int(self.capacity.shape[1])

    @property
    def num_worker_types(self) -> int:
        return int(self.worker_res.shape[0])

    @property
    def num_ps_types(self) -> int:
        return int(self.ps_res.shape[0])

    @property
    def worker_bw(self) -> np.ndarray:
        """b_m in Gbps.                                                            # (M,)"""
        return self.worker_res[:, self.bw_index]

    @property
    def ps_bw(self) -> np.ndarray:
        """B_p in Gbps.                                                            # (P,)"""
        return self.ps_res[:, self.bw_index]


#: ``HeteroJobs.__post_init__``'s value checks in one compiled pass (``_instance_kernels.jobs_check``) once that
#: module is loaded (an env's first reset loads it; the simulator never imports Numba itself); False: NumPy's checks
#: only (the reference of ``tests/speed/test_speed_hetero_v1_step3.py``)
_COMPILED_CHECKS = True
_JOBS_CHECKS = ("arrivals must be sorted and >= 1", "weights and compute times must be > 0",
                "epochs, chunks and batches must be >= 1", "update times and gradient sizes must be >= 0")


@dataclass(frozen=True, slots=True)
class HeteroJobs:
    """The jobs of one episode, sorted by (arrival, id). Times are already in slots.

    Attributes:
        arrival: a_j, integer slot >= 1.                                          # (J,) int64
        weight: w_j > 0.                                                          # (J,) float64
        epochs, chunks, batches: E_j, D_j (= max workers), K_j.                   # (J,) int64
        v: per-mini-batch compute time of a type-m worker, slots.                 # (J, M) float64
        ps_update: U^p_j, PS update time per iteration on a type-p PS, slots.     # (J, P) float64
        ra_update: U_j, Ring-AllReduce reduction time per iteration, slots.        # (J,) float64
        grad_mb: π_j, gradient size per worker per iteration, MB.                 # (J,) float64
    """

    arrival: np.ndarray
    weight: np.ndarray
    epochs: np.ndarray
    chunks: np.ndarray
    batches: np.ndarray
    v: np.ndarray
    ps_update: np.ndarray
    ra_update: np.ndarray
    grad_mb: np.ndarray

    def __post_init__(self) -> None:
        for name in ("arrival", "epochs", "chunks", "batches"):
            object.__setattr__(self, name, _frozen(getattr(self, name), np.int64))
        for name in ("weight", "v", "ps_update", "ra_update", "grad_mb"):
            object.__setattr__(self, name, _frozen(getattr(self, name), np.float64))
        self._check()

    def _check(self) -> None:
        """The constructor's shape and value checks (``ValueError``)."""
        J = self.arrival.shape[0]
        for name in ("weight", "epochs", "chunks", "batches", "ra_update", "grad_mb"):
            if getattr(self, name).shape != (J,):
                raise ValueError(f"{name} must have shape ({J},)")
        if self.v.ndim != 2 or self.v.shape[0] != J or self.ps_update.ndim != 2 or self.ps_update.shape[0] != J:
            raise ValueError("v and ps_update must be (J, M) and (J, P)")
        kern = sys.modules.get(__package__ + "._instance_kernels") if _COMPILED_CHECKS else None
        if kern is not None and self.arrival.ndim == 1:  # loaded (by an env's reset): the same checks, compiled
            bad = kern.jobs_check(self.arrival, self.weight, self.v, self.epochs, self.chunks, self.batches,
                                  self.ps_update, self.ra_update, self.grad_mb)
            if bad:
                raise ValueError(_JOBS_CHECKS[bad - 1])
            return
        if J and (np.any(np.diff(self.arrival) < 0) or self.arrival.min() < 1):
            raise ValueError("arrivals must be sorted and >= 1")
        if np.any(self.weight <= 0) or np.any(self.v <= 0):
            raise ValueError("weights and compute times must be > 0")
        if np.any(self.epochs < 1) or np.any(self.chunks < 1) or np.any(self.batches < 1):
            raise ValueError("epochs, chunks and batches must be >= 1")
        if np.any(self.ps_update < 0) or np.any(self.ra_update < 0) or np.any(self.grad_mb < 0):
            raise ValueError("update times and gradient sizes must be >= 0")

    @classmethod
    def _fresh(cls, arrival, weight, epochs, chunks, batches, v, ps_update, ra_update, grad_mb) -> HeteroJobs:
        """The constructor's result for freshly made arrays no one else holds (``instance.draw_jobs``'s): arrays
        already int64/float64 C arrays that own their data are frozen in place (``setflags(write=False)``) instead
        of copied, then checked as the constructor checks them; any other argument takes the constructor."""
        args = (arrival, weight, epochs, chunks, batches, v, ps_update, ra_update, grad_mb)
        for a, dt in zip(args, (np.int64, np.float64, np.int64, np.int64, np.int64, np.float64, np.float64,
                                np.float64, np.float64), strict=True):
            if type(a) is not np.ndarray or a.dtype != dt or a.base is not None or not a.flags.c_contiguous:
                return cls(*args)
        for a in args:
            a.setflags(write=False)
        out = object.__new__(cls)
        for f, a in zip(cls.__slots__, args, strict=True):
            object.__setattr__(out, f, a)
        out._check()
        return out

    @property
    def num_jobs(self) -> int:
        return int(self.arrival.shape[0])

    @property
    def work(self) -> np.ndarray:
        """W_j = E_j D_j K_j mini-batches.                                         # (J,) int64"""
        return self.epochs * self.chunks * self.batches


# ----------------------------------------------------------------------------------------------------------------
# pure functions: times, rates, durations


def comm_slots(grad_mb, bw_gbps):
    """2π/b in slots: push + pull of π MB over b Gbps."""
    return 2.0 * np.asarray(grad_mb) * 8.0 / (np.asarray(bw_gbps) * 1000.0) / S_PER_SLOT


def iteration_slots(cluster: HeteroCluster, jobs: HeteroJobs, j: int, m: int, p: int, n: int, q: bool) -> float:
    """Per-iteration time of job j with n type-m workers (eq. 1 for PS with PS type p, eq. 14 for RA)."""
    v = float(jobs.v[j, m])
    comm = float(comm_slots(jobs.grad_mb[j], cluster.worker_bw[m]))
    if cluster.arch == "ps":
        return v + float(jobs.ps_update[j, p]) + (0.0 if q else comm)
    frac = (n - 1) / n
    return v + float(jobs.ra_update[j]) * frac + (0.0 if q else comm * frac)


def duration_slots(work: float, n: int, iter_slots: float) -> int:
    """d = ceil(W / (n·rho)) with rho = 1/iter, epsilon-guarded."""
    return int(math.ceil(work * iter_slots / n - EPS))


def footprint(cluster: HeteroCluster, m: int, p: int, workers: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """Per-slot resource use f^r_h of a placement.                              # (H, R)"""
    f = np.outer(workers, cluster.worker_res[m])
    if p >= 0 and cluster.arch == "ps":
        f = f + np.outer(ps, cluster.ps_res[p])
    return f


def is_colocated(workers: np.ndarray, ps: np.ndarray) -> bool:
    """q_j = 1 iff every worker and PS of the job is on one server (eq. 2d / 15a)."""
    return int(np.count_nonzero((np.asarray(workers) > 0) | (np.asarray(ps) > 0))) == 1


@dataclass(frozen=True, slots=True)
class Placement:
    """A job's irrevocable plan (the structured action): start slot, duration, types, per-server counts.

    ``ps_type`` is -1 and ``ps`` all zeros in the RA architecture. ``duration`` may be 0 to let the simulator
    compute it; otherwise it must equal the exact duration of the placement.
    """

    start: int
    duration: int
    worker_type: int
    ps_type: int
    workers: np.ndarray  # (H,) int64
    ps: np.ndarray  # (H,) int64

    def __post_init__(self) -> None:
        object.__setattr__(self, "workers", _frozen(self.workers, np.int64))
        object.__setattr__(self, "ps", _frozen(self.ps, np.int64))

    @property
    def num_workers(self) -> int:
        return int(self.workers.sum())

    @property
    def colocated(self) -> bool:
        return is_colocated(self.workers, self.ps)

    @property
    def completion(self) -> int:
        return int(self.start + self.duration)


def placement_duration(cluster: HeteroCluster, jobs: HeteroJobs, j: int, pl: Placement) -> int:
    """The exact duration of placement ``pl`` for job j (actual q)."""
    n = pl.num_workers
    it = iteration_slots(cluster, jobs, j, pl.worker_type, pl.ps_type, n, pl.colocated)
    return duration_slots(float(jobs.epochs[j] * jobs.chunks[j] * jobs.batches[j]), n, it)  # W_j


def check_structure(cluster: HeteroCluster, jobs: HeteroJobs, j: int, pl: Placement) -> str | None:
    """Everything of T1 except capacity and start time; returns the violation or ``None``."""
    H, M, P = cluster.num_servers, cluster.num_worker_types, cluster.num_ps_types
    if pl.workers.shape != (H,) or pl.ps.shape != (H,):
        return f"workers and ps must have shape ({H},)"
    if not 0 <= pl.worker_type < M:
        return f"worker_type {pl.worker_type} outside [0, {M})"
    if np.any(pl.workers < 0) or np.any(pl.ps < 0):
        return "negative counts"
    n = pl.num_workers
    if n < 1:
        return "no worker"
    if n > jobs.chunks[j]:
        return f"{n} workers > D_j = {jobs.chunks[j]} (2g)"
    if cluster.arch == "ps":
        if not 0 <= pl.ps_type < P:
            return f"ps_type {pl.ps_type} outside [0, {P})"
        if pl.ps.sum() < 1:
            return "no PS (2e)"
        b, B = cluster.worker_bw[pl.worker_type], cluster.ps_bw[pl.ps_type]
        for h in np.flatnonzero(pl.ps):  # (2i): remote workers' bandwidth covered on every PS server
            remote = (n - pl.workers[h]) * b
            if remote > pl.ps[h] * B + 1e-9:
                return f"PS bandwidth on server {h}: {pl.ps[h]}x{B} < remote {remote} (2i)"
    elif pl.ps.sum() != 0 or pl.ps_type != -1:
        return "Ring-AllReduce placements have no PS (ps_type -1)"
    return None


# ----------------------------------------------------------------------------------------------------------------
# the resource ledger


_ZERO_USAGE: dict = {}


def _zeros_of(shape: tuple) -> np.ndarray:
    """A read-only float64 zero array of ``shape``, shared by the new :class:`Ledger` objects of that shape."""
    z = _ZERO_USAGE.get(shape)
    if z is None:
        if len(_ZERO_USAGE) >= 8:
            _ZERO_USAGE.clear()
        z = _ZERO_USAGE[shape] = np.zeros(shape)
        z.setflags(write=False)
    return z


class Ledger:
    """usage[h, r, t] for absolute slots t (index t; slot 0 unused), grown on demand.

    Commits are recorded and added to the dense array when it is next read (``usage``, :meth:`window`, ...), in
    commit order, so its values are exactly those of adding at commit time; a reader that works from the
    reservations themselves (the env's compiled kernels) never pays for the dense array."""

    #: a new ledger's dense array starts as a read-only zero array shared by the ledgers of that shape, replaced by
    #: an array of its own (a copy) on its first write or when :attr:`usage` hands it out: the same values, without
    #: a few MB of zeros per episode that the env's kernels never read (False: ``np.zeros`` at construction, the
    #: reference of ``tests/speed/test_speed_hetero_v1_step3.py``)
    _shared_zeros = True

    def __init__(self, capacity: np.ndarray, horizon: int = 64) -> None:
        self.capacity = np.asarray(capacity, dtype=np.float64)
        H, R = self.capacity.shape
        shape = (H, R, max(2, int(horizon) + 1))
        self._usage = _zeros_of(shape) if self._shared_zeros else np.zeros(shape)
        self._pending: list = []  # (rows, f[rows], start, end) of commits not yet added to _usage

    @property
    def usage(self) -> np.ndarray:
        """The dense usage array (pending commits added first).                          # (H, R, slots)"""
        if self._pending:
            self._flush()
        if not self._usage.flags.writeable:  # still the shared zeros: an array of its own, as a new ledger had
            self._usage = self._usage.copy()
        return self._usage

    def _flush(self) -> None:
        if not self._usage.flags.writeable:  # still the shared zeros: its own copy first
            self._usage = self._usage.copy()
        pending, self._pending = self._pending, []
        for rows, fr, start, end in pending:
            self._ensure(end)
            for i, h in enumerate(rows):  # rows of zeros would add 0.0: skipped (same values)
                self._usage[h, :, start:end] += fr[i][:, None]

    def _ensure(self, end: int) -> None:
        T = self._usage.shape[2]
        if end > T:
            new = max(end, 2 * T)
            grown = np.zeros(self._usage.shape[:2] + (new,))
            grown[:, :, :T] = self._usage
            self._usage = grown

    def window(self, start: int, end: int) -> np.ndarray:
        """usage over slots [start, end) (a copy, zero-padded past the array).           # (H, R, end-start)"""
        self._ensure(end)
        return self.usage[:, :, start:end]

    def free_over(self, start: int, end: int) -> np.ndarray:
        """Residual capacity min over slots [start, end) of C - usage.                    # (H, R)"""
        if end <= start:
            return self.capacity.copy()
        return self.capacity - self.window(start, end).max(axis=2)

    def fits(self, f: np.ndarray, start: int, end: int) -> bool:
        if end <= start:
            return True
        rows = np.flatnonzero(np.any(f > 0, axis=1))  # only the servers the placement uses
        self._ensure(end)
        for h in rows:
            peak = self.usage[h, :, start:end].max(axis=1)
            if not np.all(peak + f[h] <= self.capacity[h] + 1e-9):
                return False
        return True

    def commit(self, f: np.ndarray, start: int, end: int) -> None:
        """Add footprint ``f`` (H, R) over slots [start, end) (recorded; applied on the next read)."""
        if end > start:
            rows = np.flatnonzero(np.any(f != 0, axis=1))
            self._pending.append((rows, np.array(f[rows], dtype=np.float64), int(start), int(end)))

    def commit_rows(self, rows: np.ndarray, f_rows: np.ndarray, start: int, end: int) -> None:
        """:meth:`commit` given the footprint's nonzero rows already: server indices ``rows`` and their rows
        ``f_rows`` (float64, owned by the ledger from now on)."""
        if end > start:
            self._pending.append((rows, f_rows, int(start), int(end)))

    def utilisation(self, start: int, end: int) -> np.ndarray:
        """Mean used fraction per resource over [start, end).                             # (R,)"""
        tot = np.maximum(self.capacity.sum(axis=0), 1e-12)
        return self.window(start, end).sum(axis=(0, 2)) / tot / max(1, end - start)


def check_placement(
    cluster: HeteroCluster, jobs: HeteroJobs, j: int, pl: Placement, ledger: Ledger, earliest: int
) -> str | None:
    """T1 for one placement against a ledger: structure, start >= earliest (>= a_j), exact duration, capacity."""
    err = check_structure(cluster, jobs, j, pl)
    if err:
        return err
    if pl.start < max(int(earliest), int(jobs.arrival[j])):
        return f"start {pl.start} before {max(int(earliest), int(jobs.arrival[j]))} (2j)"
    d = placement_duration(cluster, jobs, j, pl)
    if pl.duration not in (0, d):
        return f"declared duration {pl.duration} != exact duration {d}"
    f = footprint(cluster, pl.worker_type, pl.ps_type, pl.workers, pl.ps)
    if not ledger.fits(f, pl.start, pl.start + d):
        return f"over capacity in [{pl.start}, {pl.start + d}) (2h)"
    return None


class ReservationSim:
    """The reservation driver: each job is committed once, irrevocably, non-preemptively."""

    def __init__(self, cluster: HeteroCluster, jobs: HeteroJobs, horizon: int = 64) -> None:
        self.cluster, self.jobs = cluster, jobs
        J, H = jobs.num_jobs, cluster.num_servers
        self.ledger = Ledger(cluster.capacity, horizon)
        self.start = np.full(J, -1, dtype=np.int64)
        self.duration = np.zeros(J, dtype=np.int64)
        self.worker_type = np.full(J, -1, dtype=np.int64)
        self.ps_type = np.full(J, -1, dtype=np.int64)
        self.workers = np.zeros((J, H), dtype=np.int64)
        self.ps = np.zeros((J, H), dtype=np.int64)
        self.colocated = np.zeros(J, dtype=bool)

    @property
    def completion(self) -> np.ndarray:
        return np.where(self.start >= 0, self.start + self.duration, -1)

    def commit(self, j: int, pl: Placement, earliest: int = 0, validate: bool = True) -> Placement:
        """Validate (T1) and commit; returns the placement with its exact duration. ``validate=False`` skips T1: only
        for placements that a placement rule computed on this schedule's residual capacity (the env's grid
        decoding), feasible by construction."""
        if self.start[j] >= 0:
            raise ValueError(f"job {j} is already committed")
        if validate:
            err = check_placement(self.cluster, self.jobs, j, pl, self.ledger, earliest)
            if err:
                raise ValueError(f"infeasible placement for job {j}: {err}")
        n, col = pl.num_workers, pl.colocated
        it = iteration_slots(self.cluster, self.jobs, j, pl.worker_type, pl.ps_type, n, col)
        d = duration_slots(float(self.jobs.epochs[j] * self.jobs.chunks[j] * self.jobs.batches[j]), n, it)
        f = footprint(self.cluster, pl.worker_type, pl.ps_type, pl.workers, pl.ps)
        self.ledger.commit(f, pl.start, pl.start + d)
        self.start[j], self.duration[j] = pl.start, d
        self.worker_type[j], self.ps_type[j] = pl.worker_type, pl.ps_type
        self.workers[j], self.ps[j] = pl.workers, pl.ps
        self.colocated[j] = col
        return Placement(pl.start, d, pl.worker_type, pl.ps_type, pl.workers, pl.ps)

    def objective(self) -> float:
        """Σ_j w_j c_j over committed jobs (the paper's objective (2))."""
        done = self.start >= 0
        return float(np.sum(self.jobs.weight[done] * self.completion[done]))


def verify_schedule(cluster: HeteroCluster, jobs: HeteroJobs, placements: dict[int, Placement]) -> float:
    """Replay a whole schedule through a fresh ledger (T1); returns Σ w_j c_j. Raises on any violation."""
    sim = ReservationSim(cluster, jobs)
    for j in sorted(placements):
        sim.commit(j, placements[j])
    if np.any(sim.start < 0):
        raise ValueError(f"jobs without a placement: {np.flatnonzero(sim.start < 0).tolist()}")
    return sim.objective()
