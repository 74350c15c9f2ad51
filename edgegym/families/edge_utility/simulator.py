"""The model of Zhang et al., "Online Approximation Scheme for Scheduling Heterogeneous Utility Jobs in Edge
Computing", IEEE/ACM ToN 2023 (§III; run-time scheduling of §IV-D): heterogeneous-utility jobs
dispatched online to edge servers or the cloud, each server running a pluggable scheduling discipline.

numpy only, no gymnasium. Continuous time, event-driven: each server advances its own state between the
times something can change (a job becomes ready, an executable-interval boundary, a completion); a heap of
``(time, seq, server, version)`` finds the servers with an event before a target time (ties: earlier push).

Compiled paths (``compiled=True``, the default): the priority-discipline servers live in a :class:`_Bank`
(struct-of-arrays; each server's next event in an array instead of the heap), advanced, committed to and queried
for estimates or OnDisc increments by one kernel call per operation for all of them; the O4A servers likewise in an
:class:`_O4ABank` (jobs in admission order, executable sets in a pool, PLAN's density levels cached per server and
recomputed only after the server's job set changed), unless :data:`O4A_BANK` is off or ``record=True``, where
they stay objects with compiled helpers. ``compiled=False`` builds the pure-Python server objects, the test
oracle: both give identical completions, estimates, plans and preemption counts
(``tests/speed/test_speed_edge_utility.py``).

Units: seconds (``_s``); utility in points. Server indices: edge servers ``0..S-1``, then the cloud
(index ``S``) when it exists.

Disciplines (:data:`DISCIPLINES`): ``o4a`` (executable sets + densities fixed at dispatch, Algorithms 1-2),
``fifo``, ``srpt``, ``edf``, ``hpu`` (highest potential utility, the Random baseline's server rule) and
``hrdf`` (highest g/remaining); the cloud is ``infinite`` (a pure delay server, every job starts when
ready; the paper gives no cloud capacity) or runs the edge discipline on one processor.

Estimation errors (§V-D.3; the error distribution within ±δ is ours, independent per job, server
and quantity): a job carries true ``p, Δ↑, Δ↓`` (used for execution and utility) and
planned ones (the estimates, possibly inflated by ``1 + δ`` for the conservative variant) used by every
``estimate``/``plan`` call.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import MutableMapping
from dataclasses import dataclass, field

import numpy as np

from .disciplines import (
    DISCIPLINES,
    FALLBACKS,
    O4AParams,
    O4AScheduler,
    Plan,
    PriorityScheduler,
    Request,
    make_scheduler,
)
from .utility_fn import UtilityFn

#: keep the compiled O4A servers in the struct-of-arrays :class:`_O4ABank` (False: the server objects with compiled
#: helpers, the previous compiled path; both give identical results)
O4A_BANK = True
#: an env step on a simulator whose servers are all in the O4A bank (commit, advance to the next release, estimates of
#: the next job) as one kernel call, :meth:`UtilitySimulator.step_fast`, and its :meth:`~UtilitySimulator.drain` as
#: one (False: a call per operation or event; identical results)
FUSED_STEP = True
_NO_F = np.zeros(0)
_NO_I = np.zeros(0, dtype=np.int64)
_K = None  # the compiled kernels (._kernels), imported on first use: ``import edgegym`` must not load Numba


def _kernels():
    """The kernel module, imported on first use."""
    global _K
    if _K is None:
        from . import _kernels as k

        _K = k
    return _K


__all__ = [
    "DISCIPLINES",
    "FALLBACKS",
    "Completion",
    "O4AParams",
    "Request",
    "UtilityJobs",
    "UtilitySimulator",
    "upper_bound",
]



# ------------------------------------------------------------------------------------------ containers
def _frozen(a, dtype=np.float64) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, slots=True)
class UtilityJobs:
    """The jobs of one episode (struct of arrays), sorted by release time (trace order breaks ties: O4A's
    result depends on the order of simultaneous releases, which the paper leaves open).

    ``M`` = number of servers including the cloud (last column) when there is one.

    Attributes:
        release_s: r_i.                                                  # (J,) non-decreasing
        p_s, up_s, down_s: true processing time (speed 1), upload and download delay.   # (J, M)
        p_est_s, up_est_s, down_est_s: the scheduler's estimates (equal to the truth when δ = 0). # (J, M)
        utilities: one :class:`UtilityFn` per job.
        model: DNN model index of each job (Table I row), or -1.          # (J,) int
    """

    release_s: np.ndarray
    p_s: np.ndarray
    up_s: np.ndarray
    down_s: np.ndarray
    p_est_s: np.ndarray
    up_est_s: np.ndarray
    down_est_s: np.ndarray
    utilities: tuple[UtilityFn, ...]
    model: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __post_init__(self) -> None:
        for name in ("release_s", "p_s", "up_s", "down_s", "p_est_s", "up_est_s", "down_est_s"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "model", _frozen(self.model, np.int64))
        J = self.release_s.shape[0]
        if self.p_s.ndim != 2 or self.p_s.shape[0] != J:
            raise ValueError(f"UtilityJobs.p_s must have shape (J={J}, M), got {self.p_s.shape}")
        for name in ("up_s", "down_s", "p_est_s", "up_est_s", "down_est_s"):
            if getattr(self, name).shape != self.p_s.shape:
                raise ValueError(f"UtilityJobs.{name} must have shape {self.p_s.shape}")
        for name in ("release_s", "p_s", "up_s", "down_s", "p_est_s", "up_est_s", "down_est_s"):
            arr = getattr(self, name)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"UtilityJobs.{name} holds a NaN or infinite value")
        if J and (self.p_s.min() <= 0 or self.p_est_s.min() <= 0):
            raise ValueError("UtilityJobs processing times must be > 0")
        for name in ("release_s", "up_s", "down_s", "up_est_s", "down_est_s"):
            if J and getattr(self, name).min() < 0:
                raise ValueError(f"UtilityJobs.{name} must be >= 0")
        if J and np.any(np.diff(self.release_s) < 0):
            raise ValueError("UtilityJobs.release_s must be non-decreasing")
        if len(self.utilities) != J:
            raise ValueError(f"UtilityJobs.utilities has {len(self.utilities)} entries, expected {J}")
        if self.model.size and self.model.shape[0] != J:
            raise ValueError("UtilityJobs.model must have one entry per job")

    @property
    def num_jobs(self) -> int:
        """Number of jobs J."""
        return int(self.release_s.shape[0])

    @property
    def num_servers(self) -> int:
        """Number of servers M (edge servers plus the cloud column if any)."""
        return int(self.p_s.shape[1])

    def family_codes(self) -> np.ndarray:
        """Utility family code of every job (index in ``FAMILIES``).                 # (J,) int"""
        return np.array([u.code for u in self.utilities], dtype=np.int64)


def upper_bound(jobs: UtilityJobs, speed: float = 1.0, servers: np.ndarray | None = None) -> np.ndarray:
    """The paper's Upper Bound per job: ``max_j g_i(p_ij/s + Δ↑_ij + Δ↓_ij)`` (no queueing; §V-A.5).

    ``servers``: boolean mask of usable columns (default all). Returns the per-job bound (J,).
    """
    lb = jobs.p_s / speed + jobs.up_s + jobs.down_s
    if servers is not None:
        lb = np.where(np.asarray(servers, dtype=bool)[None, :], lb, np.inf)
    best = lb.min(axis=1)  # g is non-increasing: the smallest no-queue JRT is the best
    return np.array([u(t) if math.isfinite(t) else 0.0 for u, t in zip(jobs.utilities, best.tolist(), strict=True)])


# ------------------------------------------------------------------------------------------ server bank
def _credit(bank, sim: UtilitySimulator, no: int, *, down: int, release: int) -> list[Completion]:
    """Credit the first ``no`` completions a bank kernel buffered (jobs ``bank.oj``, finish times ``bank.oc``, servers
    ``bank.os``): JRT ``C + Δ↓ − r`` from the bank's per-job table ``bank.jf`` (columns ``down`` and ``release``, whose
    layout differs between the two banks), the job's utility of it, recorded on ``sim``."""
    out = []
    if no:
        jf, utilities = bank.jf, sim.jobs.utilities
        for j, C, k in zip(bank.oj[:no].tolist(), bank.oc[:no].tolist(), bank.os[:no].tolist(), strict=True):
            jrt = C + float(jf[j, down]) - float(jf[j, release])
            u = utilities[j](jrt)
            sim.utility[j] = u
            sim.jrt_s[j] = jrt
            sim.completed[j] = True
            out.append(Completion(j, k, C, jrt, u))
    return out


class _BankServer:
    """A priority server held by the :class:`_Bank` (``UtilitySimulator.servers[k]``): name, clock, queue
    length, preemptions and busy time read from the bank's arrays; no executed segments (``record=True`` keeps
    the server objects instead)."""

    __slots__ = ("_bank", "_k", "name", "speed")

    def __init__(self, bank: _Bank, k: int, name: str, speed: float) -> None:
        self._bank, self._k, self.name, self.speed = bank, k, name, speed

    @property
    def queue_length(self) -> int:
        return int(self._bank.si[self._k, 0])

    @property
    def preemptions(self) -> int:
        return int(self._bank.si[self._k, 3])

    @property
    def busy_s(self) -> float:
        return float(self._bank.sf[self._k, 1])

    @property
    def t(self) -> float:
        return float(self._bank.sf[self._k, 0])

    @property
    def segments(self) -> list:
        return []


class _Bank:
    """The simulator's priority-discipline servers as struct-of-arrays (see ``_kernels``' server bank): per job
    ``jf`` (J, 9), per server ``si`` (M, 5) / ``sf`` (M, 3), queues ``slots`` (M, cap) grown by doubling;
    completion buffers of J entries. Every kernel reproduces the server objects' floating-point operations."""

    @property
    def K(self):
        """The kernel module (imported on first use; not an attribute, so that the bank pickles)."""
        return _K or _kernels()

    def __init__(self, sim: UtilitySimulator, members: list[int], utab: tuple, soft: list[float]) -> None:
        K = self.K
        jobs = sim.jobs
        J, M = jobs.num_jobs, len(sim.servers)
        self.s = sim.speed
        self.utab = utab
        self.ks = np.array(members, dtype=np.int64)
        self.member = np.zeros(M, dtype=bool)
        self.member[self.ks] = True
        self.all_members = bool(self.member.all())
        self.jf = np.zeros((J, 9))
        rel = jobs.release_s.tolist()
        self.jf[:, K.JR] = rel
        self.jf[:, K.JKEY] = [r + d for r, d in zip(rel, soft, strict=True)]  # _Job.key = r + soft deadline
        self.si = np.zeros((M, 5), dtype=np.int64)
        self.si[:, K.SRUN] = -1
        self.sf = np.zeros((M, 3))
        self.sf[:, K.SEV] = np.inf
        for k in members:
            self.si[k, K.SDISC] = K.DISCIPLINE_CODES[sim.servers[k].name]
            sim.servers[k] = _BankServer(self, k, sim.servers[k].name, sim.speed)
        self.slots = np.zeros((M, 16), dtype=np.int64)
        self.oj = np.zeros(max(J, 1), dtype=np.int64)  # completion buffers: job, completion time, server
        self.oc = np.zeros(max(J, 1))
        self.os = np.zeros(max(J, 1), dtype=np.int64)
        self.state = (self.slots, self.si, self.sf, self.jf, self.oj, self.oc, self.os)

    def completions(self, sim: UtilitySimulator, no: int) -> list[Completion]:
        """Credit the first ``no`` buffered completions (as ``UtilitySimulator._sync``)."""
        return _credit(self, sim, no, down=6, release=0)

    def advance_due(self, sim: UtilitySimulator, t: float) -> list[Completion]:
        return self.completions(sim, self.K.bank_advance_due(t, self.ks, self.s, *self.state, *self.utab))

    def next_due(self) -> float:
        return float(self.K.bank_next_due(self.ks, self.sf))

    def commit(self, sim: UtilitySimulator, job: int, k: int, dispatch_s: float) -> list[Completion]:
        if self.si[k, 0] == self.slots.shape[1]:  # full: double the queues' capacity
            slots = np.zeros((self.slots.shape[0], 2 * self.slots.shape[1]), dtype=np.int64)
            slots[:, : self.slots.shape[1]] = self.slots
            self.slots = slots
            self.state = (self.slots, *self.state[1:])
        j = sim.jobs
        no = self.K.bank_commit(k, job, dispatch_s, float(j.up_s[job, k]), float(sim._scale_up[job, k]),
                                float(j.p_s[job, k]), float(sim._scale_p[job, k]), float(j.down_s[job, k]),
                                float(sim._scale_down[job, k]), self.s, *self.state, *self.utab)
        return self.completions(sim, no)

    def query(self, sim: UtilitySimulator, mode: int, job: int, ks: np.ndarray, base: np.ndarray,
              out: np.ndarray) -> list[Completion]:
        """``mode`` 0: estimates, 1: OnDisc increments of ``job`` on the bank servers ``ks`` into ``out``."""
        r = float(sim.jobs.release_s[job])
        ap = r + sim._scale_up[job]  # Request.a_plan = dispatch (= r) + Δ̂↑
        no = self.K.bank_query(mode, ks, sim.now, job, r, float(self.jf[job, 8]), base, ap, sim._scale_p[job],
                               sim._scale_down[job], out, self.s, *self.state, *self.utab)
        return self.completions(sim, no)


class _O4ALevels:
    """The compiled O4A servers' PLAN levels (:meth:`O4AScheduler._flat_levels`) copied into one buffer row per
    server, refreshed only for the servers whose job set changed since the last call (the server's cached flat
    levels are a new object after every change), so that one kernel call computes every server's estimate
    without concatenating the levels at each step. Plain numpy arrays: deep-copies and pickles with the
    simulator (the cached references are the servers' own tuples, so a copy stays consistent)."""

    __slots__ = ("flat", "nk", "lu", "lptr", "ls", "le", "_ks")  # no per-job arrays (``fork`` leaves them alone)

    def __init__(self, M: int) -> None:
        self.flat: list = [None] * M  # the flat levels each row holds (None: an idle server, nk = 0)
        self.nk = np.zeros(M, dtype=np.int64)
        self.lu = np.zeros((M, 8))
        self.lptr = np.zeros((M, 9), dtype=np.int64)
        self.ls = np.zeros((M, 16))
        self.le = np.zeros((M, 16))
        self._ks: tuple[list, np.ndarray] = ([], _NO_I)

    def ks(self, ks: list[int]) -> np.ndarray:
        """``ks`` as an int64 array (the last one reused)."""
        if self._ks[0] != ks:
            self._ks = (list(ks), np.array(ks, dtype=np.int64))
        return self._ks[1]

    def refresh(self, servers: list, ks: list[int]) -> None:
        """Copy the current levels of the servers ``ks`` whose job set changed."""
        flat = self.flat
        for k in ks:
            srv = servers[k]
            f = (srv._flat or srv._flat_levels()) if srv.jobs else None
            if f is flat[k]:
                continue
            flat[k] = f
            if f is None:
                self.nk[k] = 0
                continue
            lu, lptr, ls, le = f[1:]
            if lu.size > self.lu.shape[1] or ls.size > self.ls.shape[1]:  # widen the rows (doubling)
                self._grow(max(lu.size, self.lu.shape[1]), max(ls.size, self.ls.shape[1]))
            from . import _kernels as K

            K.o4a_store_levels(k, lu, lptr, ls, le, self.nk, self.lu, self.lptr, self.ls, self.le)

    def _grow(self, kmin: int, bmin: int) -> None:
        M, ck, cb = self.lu.shape[0], self.lu.shape[1], self.ls.shape[1]
        while ck < kmin:
            ck *= 2
        while cb < bmin:
            cb *= 2
        lu, lptr = np.zeros((M, ck)), np.zeros((M, ck + 1), dtype=np.int64)
        ls, le = np.zeros((M, cb)), np.zeros((M, cb))
        lu[:, : self.lu.shape[1]] = self.lu
        lptr[:, : self.lptr.shape[1]] = self.lptr
        ls[:, : self.ls.shape[1]] = self.ls
        le[:, : self.le.shape[1]] = self.le
        self.lu, self.lptr, self.ls, self.le = lu, lptr, ls, le


class _O4ABankServer(_BankServer):
    """An O4A server held by the :class:`_O4ABank` (name, clock, queue length, preemptions, busy time, its O4A
    knobs)."""

    __slots__ = ("params", "utab")

    def __init__(self, bank: _O4ABank, k: int, speed: float, params: O4AParams, utab: tuple) -> None:
        super().__init__(bank, k, "o4a", speed)
        self.params, self.utab = params, utab


class _O4ABank:
    """The simulator's compiled O4A servers as struct-of-arrays (see ``_kernels``' O4A server bank): per job ``jf``
    (J, 6) and ``jp`` (J, 2) into the executable-set pool ``PS/PE`` (grown by doubling), per server ``si`` (M, 6) /
    ``sf`` (M, 3), queues ``slots`` (M, cap) in admission order, each server's PLAN levels in :class:`_O4ALevels`
    rows; completion buffers of J entries. Every kernel reproduces the server objects' floating-point operations
    (:class:`~.disciplines.O4AScheduler`), one call per advance, commit or estimate of all servers. Slotted: a
    job's rows are written at its commit only, so a fork that redraws the future jobs replaces ``utab`` alone."""

    __slots__ = ("s", "utab", "params", "fb", "alpha", "pdm", "pdd", "ks", "member", "all_members", "jf", "jp", "PS",
                 "PE", "used", "si", "sf", "slots", "lv", "oj", "oc", "os")

    @property
    def K(self):
        """The kernel module (imported on first use; not an attribute, so that the bank pickles)."""
        return _K or _kernels()

    def __init__(self, sim: UtilitySimulator, members: list[int], utab: tuple, params: O4AParams) -> None:
        J, M = sim.jobs.num_jobs, len(sim.servers)
        self.s = sim.speed
        self.utab = utab
        self.params = params
        self.fb = FALLBACKS.index(params.fallback)
        self.alpha = params.alpha_value
        if params.tentative_mode == "speed_consistent":  # tentative_time: (1 + βε)·p / s
            self.pdm, self.pdd = 1.0 + params.beta * params.eps, sim.speed
        elif params.tentative_mode == "paper_literal":  # (1 + βε)/(1 + ε)·p (divided by 1.0: exact)
            self.pdm, self.pdd = (1.0 + params.beta * params.eps) / (1.0 + params.eps), 1.0
        else:
            raise ValueError(f"unknown tentative_mode {params.tentative_mode!r} (valid: speed_consistent, "
                             "paper_literal)")
        self.ks = np.array(members, dtype=np.int64)
        self.member = np.zeros(M, dtype=bool)
        self.member[self.ks] = True
        self.all_members = bool(self.member.all())
        self.jf = np.zeros((max(J, 1), 6))
        self.jp = np.zeros((max(J, 1), 2), dtype=np.int64)
        self.PS = np.zeros(64)
        self.PE = np.zeros(64)
        self.used = np.zeros(1, dtype=np.int64)
        self.si = np.zeros((M, 6), dtype=np.int64)
        self.si[:, 1] = -1
        self.sf = np.zeros((M, 3))
        self.sf[:, 2] = np.inf
        self.slots = np.zeros((M, 16), dtype=np.int64)
        self.lv = _O4ALevels(M)
        self.oj = np.zeros(max(J, 1), dtype=np.int64)
        self.oc = np.zeros(max(J, 1))
        self.os = np.zeros(max(J, 1), dtype=np.int64)
        for k in members:
            sim.servers[k] = _O4ABankServer(self, k, sim.speed, params, utab)

    def advance_due(self, sim: UtilitySimulator, t: float) -> list[Completion]:
        no = (_K or _kernels()).o4b_advance_due(t, self.ks, self.s, self.fb, self.slots, self.si, self.sf, self.jf,
                                                self.jp, self.PS, self.PE, self.oj, self.oc, self.os, *self.utab)
        return self.completions(sim, no) if no else []

    def completions(self, sim: UtilitySimulator, no: int) -> list[Completion]:
        """Credit the first ``no`` buffered completions (as ``UtilitySimulator._sync``: JRT ``C + Δ↓ − r``)."""
        return _credit(self, sim, no, down=5, release=4)

    def next_due(self) -> float:
        return float(self.K.bank_next_due(self.ks, self.sf))

    def _make_room(self, k: int) -> None:
        """Room for one more job on server ``k`` (its queue) and for its executable set in the pool (doubling)."""
        if self.si[k, 0] == self.slots.shape[1]:  # full: double the queues' capacity
            slots = np.zeros((self.slots.shape[0], 2 * self.slots.shape[1]), dtype=np.int64)
            slots[:, : self.slots.shape[1]] = self.slots
            self.slots = slots
        room = int(self.si[k, 4]) + 2  # a PLAN set has at most one interval more than the server's sets
        if self.used[0] + room > self.PS.size:
            cap = self.PS.size
            while cap < self.used[0] + room:
                cap *= 2
            self.PS = np.concatenate([self.PS, np.zeros(cap - self.PS.size)])
            self.PE = np.concatenate([self.PE, np.zeros(cap - self.PE.size)])

    def _plan(self, sim: UtilitySimulator, job: int, gamma: int, d: float, f: float, u: float) -> None:
        """Record the committed job's :class:`Plan` in ``sim.plans`` (its executable set read from the pool when the
        entry is first read: :class:`_Plans`)."""
        sim.plans.put_raw(job, (gamma, d, f, u))

    def plan_of(self, job: int, raw: tuple) -> Plan:
        """The :class:`Plan` of a committed job from its ``(γ, d†, f†, u)`` and its executable set in the pool."""
        st, ln = self.jp[job].tolist()
        return Plan(raw[0], tuple(self.PS[st : st + ln].tolist()), tuple(self.PE[st : st + ln].tolist()), *raw[1:])

    def commit(self, sim: UtilitySimulator, job: int, k: int, dispatch_s: float) -> list[Completion]:
        self._make_room(k)
        j = sim.jobs
        lv = self.lv
        no, gamma, d, u, wk, wb = (_K or _kernels()).o4b_commit(
            k, job, dispatch_s, j.release_s, j.up_s, sim._scale_up, j.p_s, sim._scale_p, j.down_s, sim._scale_down,
            self.s, self.fb, self.pdm, self.pdd, self.alpha, self.slots, self.si, self.sf, self.jf, self.jp, self.PS,
            self.PE, self.used, lv.nk, lv.lu, lv.lptr, lv.ls, lv.le, self.oj, self.oc, self.os, *self.utab)
        if wk:
            lv._grow(wk, wb)
        self._plan(sim, job, gamma, d, d + float(sim._scale_down[job, k]), u)
        return self.completions(sim, no) if no else []

    def step(self, sim: UtilitySimulator, job: int, k: int, dispatch_s: float, t: float, jn: int,
             out: np.ndarray) -> tuple[int, list[Completion], int, int]:
        """:func:`~._kernels.o4b_step`: commit ``job`` on ``k`` at ``dispatch_s``, advance to ``t``, estimates of job
        ``jn`` into ``out`` (none when ``jn < 0``). Returns ``(stage, completions (unsorted), wk, wb)``, the
        kernel's stage and level-row widths still needed (the plan is recorded; the caller grows the rows)."""
        j = sim.jobs
        lv = self.lv
        K = _K or _kernels()
        while True:
            stage, no, gamma, d, f, u, wk, wb = K.o4b_step(
                k, job, dispatch_s, t, jn, self.ks, out, j.release_s, j.up_s, sim._scale_up, j.p_s, sim._scale_p,
                j.down_s, sim._scale_down, self.s, self.fb, self.pdm, self.pdd, self.alpha, self.slots, self.si,
                self.sf, self.jf, self.jp, self.PS, self.PE, self.used, lv.nk, lv.lu, lv.lptr, lv.ls, lv.le, self.oj,
                self.oc, self.os, *self.utab)
            if stage:
                break
            self._make_room(k)
        self._plan(sim, job, gamma, d, f, u)
        return stage, (self.completions(sim, no) if no else []), wk, wb

    def estimates(self, sim: UtilitySimulator, job: int, ks: np.ndarray, out: np.ndarray) -> None:
        """O4A's f† of ``job`` on the bank servers ``ks`` into ``out`` (PLAN on the current sets, no sync)."""
        r = float(sim.jobs.release_s[job])
        lv = self.lv
        while True:
            wk, wb = (_K or _kernels()).o4b_estimates(
                ks, r, sim._scale_up[job], sim._scale_p[job], sim._scale_down[job], self.pdm, self.pdd, job, self.alpha,
                out, self.slots, self.si, self.sf, self.jf, self.jp, self.PS, self.PE, lv.nk, lv.lu, lv.lptr, lv.ls,
                lv.le, *self.utab)
            if not wk:
                return
            lv._grow(wk, wb)


class _Plans(MutableMapping):
    """``UtilitySimulator.plans``: job -> :class:`Plan`, a mapping like a dict. A commit on the O4A bank stores the
    plan's scalars only, and its executable set is read from the bank's pool (whose entries for a committed job never
    change) when the entry is first read, so that a step builds no tuple that nobody reads."""

    __slots__ = ("_d", "bank")

    def __init__(self) -> None:
        self._d: dict = {}
        self.bank: _O4ABank | None = None

    def put_raw(self, job: int, raw: tuple) -> None:
        """Record ``(γ, d†, f†, u)`` of a job committed on :attr:`bank`."""
        self._d[job] = raw

    def __getitem__(self, job: int) -> Plan:
        v = self._d[job]
        if type(v) is tuple:
            v = self._d[job] = self.bank.plan_of(job, v)
        return v

    def __setitem__(self, job: int, plan: Plan) -> None:
        self._d[job] = plan

    def __delitem__(self, job: int) -> None:
        del self._d[job]

    def __iter__(self):
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, job) -> bool:
        return job in self._d

    def __repr__(self) -> str:
        return repr(dict(self.items()))


# ------------------------------------------------------------------------------------------ simulator
@dataclass(frozen=True, slots=True)
class Completion:
    """A job whose result reached its device: server, completion C, finish f = C + Δ↓, JRT f − r, utility."""

    job: int
    server: int
    completion_s: float
    jrt_s: float
    utility: float


def _completion_key(c: Completion) -> tuple[float, int, int]:
    """The order of a step's completions: completion time, server, job."""
    return c.completion_s, c.server, c.job


class UtilitySimulator:
    """All servers of one episode plus the event heap; dispatch decisions come from outside.

    Args:
        jobs: the episode's jobs (estimates in ``*_est_s``; the planning values are those times
            ``plan_scale``, i.e. ``1 + δ`` for the conservative variant).
        num_edge: number of edge servers S (the cloud, if any, is column S of ``jobs``).
        discipline: edge servers' discipline; ``cloud``: ``infinite`` or a discipline name.
        speed: server speed s (1 in practice; 1 + ε in the analysed setting).
        record: keep executed segments (for invariant tests; the server objects are kept then).
        compiled: the compiled paths (bank, kernels); False: the pure-Python servers (test oracle).
    """

    def __init__(self, jobs: UtilityJobs, num_edge: int, has_cloud: bool, discipline: str = "o4a",
                 cloud: str = "infinite", speed: float = 1.0, o4a: O4AParams | None = None,
                 plan_scale: float = 1.0, record: bool = False, compiled: bool = True) -> None:
        self.jobs = jobs
        self.num_edge = int(num_edge)
        self.has_cloud = bool(has_cloud)
        M = self.num_edge + int(self.has_cloud)
        if jobs.num_servers != M:
            raise ValueError(f"jobs have {jobs.num_servers} server columns, expected {M}")
        self.speed = float(speed)
        self.plan_scale = float(plan_scale)
        self.discipline = discipline
        self.servers = [make_scheduler(discipline, speed, o4a, record) for _ in range(self.num_edge)]
        if self.has_cloud:
            self.servers.append(make_scheduler(cloud, speed, o4a, record))
        soft = None
        for srv in self.servers:
            if hasattr(srv, "soft_deadlines"):  # EDF keys of what-if requests, once per job
                soft = soft or [u.soft_deadline(0.5) for u in jobs.utilities]
                srv.soft_deadlines = soft
        self._bank: _Bank | None = None
        self._o4bank: _O4ABank | None = None
        if compiled:  # compiled PLAN / what-if on every server (identical results)
            from ._kernels import utility_table

            utab = utility_table(jobs.utilities)
            for srv in self.servers:
                if hasattr(srv, "utab"):
                    srv.utab = utab
            members = [k for k, srv in enumerate(self.servers) if isinstance(srv, PriorityScheduler)]
            if members and not record:  # the priority servers as struct-of-arrays (segments need the objects)
                self._bank = _Bank(self, members, utab, soft)
            o4 = [k for k, srv in enumerate(self.servers) if isinstance(srv, O4AScheduler)]
            if o4 and O4A_BANK and not record and all(self.servers[k].params == self.servers[o4[0]].params
                                                      for k in o4):  # the O4A servers too (one set of knobs)
                self._o4bank = _O4ABank(self, o4, utab, self.servers[o4[0]].params)
        self._req_rows: tuple | None = None  # the last job's request fields, as Python lists by server
        self._o4a_lv: _O4ALevels | None = None  # the O4A servers' PLAN levels for the compiled estimates
        self.now = 0.0
        self._heap: list[tuple[float, int, int, int]] = []
        self._version = [0] * M
        self._seq = 0
        self._pending: list[tuple[float, int, int, int]] = []  # (commit time, seq, job, server)
        J = jobs.num_jobs
        self.utility = np.zeros(J)
        self.jrt_s = np.full(J, np.nan)
        self.server_of = np.full(J, -1, dtype=np.int64)
        self.completed = np.zeros(J, dtype=bool)
        self.plans = _Plans()  # job -> Plan (a mapping like a dict)
        self.plans.bank = self._o4bank
        self._orphans: list[Completion] = []  # completions found by a sync outside advance_to
        self._scale_p = jobs.p_est_s * self.plan_scale
        self._scale_up = jobs.up_est_s * self.plan_scale
        self._scale_down = jobs.down_est_s * self.plan_scale

    # -- requests
    def request(self, job: int, server: int, dispatch_s: float | None = None) -> Request:
        """The :class:`Request` of ``job`` for ``server`` (planning values = estimates × plan_scale)."""
        rows = self._req_rows
        if rows is None or rows[0] != job:  # one conversion per job, then list look-ups (same float values)
            j = self.jobs
            rows = self._req_rows = (job, float(j.release_s[job]), self._scale_p[job].tolist(),
                                     self._scale_up[job].tolist(), self._scale_down[job].tolist(),
                                     j.p_s[job].tolist(), j.up_s[job].tolist(), j.down_s[job].tolist(),
                                     j.utilities[job])
        _, r, pp, pu, pdn, tp, tu, td, g = rows
        return Request(job, r, r if dispatch_s is None else float(dispatch_s), pp[server], pu[server], pdn[server],
                       tp[server], tu[server], td[server], g)

    def planned_lb(self, job: int) -> np.ndarray:
        """Planned no-queue finish offsets ``Δ̂↑ + p̂/s + Δ̂↓`` for every server (DO4A's LB_j).   # (M,)"""
        return self._scale_up[job] + self._scale_p[job] / self.speed + self._scale_down[job]

    def _split(self, servers) -> tuple[np.ndarray | None, list[int]]:
        """``servers`` (None: all) as (the bank's members as an array or None, the other servers)."""
        bank = self._bank
        if bank is None:
            return None, list(range(len(self.servers)) if servers is None else servers)
        if servers is None:
            if bank.all_members:
                return bank.ks, []
            servers = range(len(self.servers))
        mem = bank.member
        ks = [k for k in servers if mem[k]]
        return (np.array(ks, dtype=np.int64) if ks else None), [k for k in servers if not mem[k]]

    def estimates(self, job: int, servers=None) -> np.ndarray:
        """Planned finish time of ``job`` on each server if committed now (no side effects).  # (M,)

        Idle edge servers take the closed form; busy ones run their discipline's estimate (PLAN for O4A)."""
        M = len(self.servers)
        out = np.full(M, np.inf)
        o4bank = self._o4bank
        if servers is None and o4bank is not None and o4bank.all_members:  # every server: one kernel call
            o4bank.estimates(self, job, o4bank.ks, out)
            return out
        r = float(self.jobs.release_s[job])
        base = r + self.planned_lb(job)
        ks, idx = self._split(servers)
        if ks is not None:  # one kernel call for the bank's servers (servers are independent: order is free)
            self._orphans.extend(self._bank.query(self, 0, job, ks, base, out))
        o4 = [k for k in idx if self.servers[k].name == "o4a" and self.servers[k].utab is not None]
        if o4:  # PLAN's f† on every compiled O4A server in one kernel call
            self._o4a_estimates(job, r, o4, out)
            idx = [k for k in idx if self.servers[k].name != "o4a" or self.servers[k].utab is None]
        for k in idx:
            srv = self.servers[k]
            if srv.name != "o4a":
                if not srv.queue_length:
                    out[k] = base[k]
                    continue
                self._sync_side(k, self.now)  # PLAN needs only the sets; what-if estimates need current work
            out[k] = srv.estimate(self.request(job, k))
        return out

    def _o4a_estimates(self, job: int, r: float, ks: list[int], out: np.ndarray) -> None:
        """:meth:`O4AScheduler.estimate_fast` of ``job`` on the O4A servers ``ks`` (one kernel call)."""
        from .utility_fn import tentative_time

        bank = self._o4bank
        if bank is not None:  # the bank's servers: one kernel call
            inb = [k for k in ks if bank.member[k]]
            if inb:
                bank.estimates(self, job, np.array(inb, dtype=np.int64), out)
                ks = [k for k in ks if not bank.member[k]]
                if not ks:
                    return
        srvs = [self.servers[k] for k in ks]
        pr = srvs[0].params
        if any(s.params is not pr for s in srvs):  # servers with different knobs: one call each
            up, pp, dp = self._scale_up[job].tolist(), self._scale_p[job].tolist(), self._scale_down[job].tolist()
            for k, s in zip(ks, srvs, strict=True):
                out[k] = s.estimate_fast(job, r, r + up[k], pp[k], dp[k])
            return
        from . import _kernels as K

        if pr.tentative_mode in ("speed_consistent", "paper_literal"):  # levels kept per server between calls
            lv = self._o4a_lv
            if lv is None:
                lv = self._o4a_lv = _O4ALevels(len(self.servers))
            lv.refresh(self.servers, ks)
            if pr.tentative_mode == "speed_consistent":  # p† = (1 + βε)·p / s, as the vector expression below
                pdm, pdd = 1.0 + pr.beta * pr.eps, self.speed
            else:  # tentative_time's (1 + βε)/(1 + ε)·p (divided by 1.0: exact)
                pdm, pdd = (1.0 + pr.beta * pr.eps) / (1.0 + pr.eps), 1.0
            K.plan_o4a_d_rows(lv.ks(ks), lv.nk, lv.lu, lv.lptr, lv.ls, lv.le, r, self._scale_up[job],
                              self._scale_p[job], self._scale_down[job], pdm, pdd, job, pr.alpha_value, out,
                              *srvs[0].utab)
            return
        busy = np.array([bool(s.jobs) for s in srvs])
        flats = [s._flat_levels() for s, b in zip(srvs, busy.tolist(), strict=True) if b]
        luo = np.zeros(len(ks) + 1, dtype=np.int64)  # offsets of each server's blocks (idle servers: empty)
        lpo = np.zeros(len(ks) + 1, dtype=np.int64)
        lso = np.zeros(len(ks) + 1, dtype=np.int64)
        if flats:
            at = np.flatnonzero(busy) + 1
            luo[at] = [f[1].size for f in flats]
            lpo[at] = [f[2].size for f in flats]
            lso[at] = [f[3].size for f in flats]
            np.cumsum(luo, out=luo)
            np.cumsum(lpo, out=lpo)
            np.cumsum(lso, out=lso)
            lu = np.concatenate([f[1] for f in flats])
            lptr = np.concatenate([f[2] for f in flats])
            ls = np.concatenate([f[3] for f in flats])
            le = np.concatenate([f[4] for f in flats])
        else:
            lu, ls, le, lptr = _NO_F, _NO_F, _NO_F, _NO_I
        a = r + self._scale_up[job]  # Request.a_plan = dispatch (= r) + Δ̂↑
        p = self._scale_p[job]
        if pr.tentative_mode == "speed_consistent":  # tentative_time on the vector (the same operations)
            pd = (1.0 + pr.beta * pr.eps) * p / self.speed
        else:
            pd = np.array([tentative_time(x, self.speed, pr.eps, pr.beta, pr.tentative_mode) for x in p.tolist()])
        K.plan_o4a_d_many(np.array(ks, dtype=np.int64), np.array(busy), lu, luo, lptr, lpo, ls, le, lso, a, p, pd,
                          self._scale_down[job], r, job, pr.alpha_value, out, *srvs[0].utab)

    def jrt_increase(self, job: int, servers=None) -> np.ndarray:
        """OnDisc's Inc_j for every server, or only ``servers`` (others inf) (SRPT what-if; needs a priority
        discipline).                                                                            # (M,)"""
        out = np.full(len(self.servers), np.inf)
        ks, idx = self._split(servers)
        for k in idx:
            if not hasattr(self.servers[k], "jrt_increase"):
                raise ValueError("jrt_increase needs a priority discipline (e.g. srpt) on the edge servers")
        if ks is not None:
            self._orphans.extend(self._bank.query(self, 1, job, ks, out, out))
        for k in idx:
            srv = self.servers[k]
            if srv.queue_length:
                self._sync_side(k, self.now)
            out[k] = srv.jrt_increase(self.request(job, k))
        return out

    # -- dynamics
    def _sync(self, k: int, t: float) -> list[Completion]:
        srv = self.servers[k]
        done = srv.advance(t)
        out = []
        for C, q in done:
            jrt = C + q.down - q.r
            u = q.g(jrt)
            self.utility[q.id] = u
            self.jrt_s[q.id] = jrt
            self.completed[q.id] = True
            out.append(Completion(q.id, k, C, jrt, u))
        return out

    def _sync_side(self, k: int, t: float) -> None:
        self._orphans.extend(self._sync(k, t))

    def _push(self, k: int) -> None:
        self._version[k] += 1
        te = self.servers[k].next_event()
        if te < math.inf:
            self._seq += 1
            heapq.heappush(self._heap, (te, self._seq, k, self._version[k]))

    def _advance_servers(self, t: float) -> list[Completion]:
        out: list[Completion] = []
        touched = set()
        while self._heap and self._heap[0][0] <= t:
            _, _, k, ver = heapq.heappop(self._heap)
            if ver != self._version[k] or k in touched:
                continue
            touched.add(k)
            out.extend(self._sync(k, t))
        for k in touched:
            self._push(k)
        if self._bank is not None:  # the bank's due servers: one kernel call
            out.extend(self._bank.advance_due(self, t))
        if self._o4bank is not None:
            out.extend(self._o4bank.advance_due(self, t))
        return out

    def advance_to(self, t: float) -> list[Completion]:
        """Process every event (and pending commit) up to and including ``t``; return the completions,
        ordered by (completion time, server, job)."""
        out: list[Completion] = self._orphans
        self._orphans = []
        while self._pending and self._pending[0][0] <= t:
            tc, _, job, k = heapq.heappop(self._pending)
            out.extend(self._advance_servers(tc))
            self.now = max(self.now, tc)
            self._commit(job, k, tc)
        out.extend(self._advance_servers(t))
        self.now = max(self.now, t)
        out.extend(self._orphans)
        self._orphans = []
        out.sort(key=_completion_key)
        return out

    def _commit(self, job: int, server: int, dispatch_s: float) -> None:
        if self._bank is not None and self._bank.member[server]:  # sync, admit and reschedule in one call
            self._orphans.extend(self._bank.commit(self, job, server, dispatch_s))
            self.server_of[job] = server
            return
        if self._o4bank is not None and self._o4bank.member[server]:  # sync, PLAN, admit and reschedule
            self._orphans.extend(self._o4bank.commit(self, job, server, dispatch_s))
            self.server_of[job] = server
            return
        self._sync_side(server, dispatch_s)
        srv = self.servers[server]
        q = srv.admit(self.request(job, server, dispatch_s), dispatch_s)
        self.server_of[job] = server
        if srv.name == "o4a":
            self.plans[job] = Plan(q.gamma, tuple(q.starts), tuple(q.ends), q.d, q.f, q.u)
        self._push(server)

    def step_fast(self, job: int, server: int, t: float, next_job: int) -> tuple[list[Completion],
                                                                               np.ndarray | None] | None:
        """``dispatch(job, server)`` with no latency, ``advance_to(t)`` and, when ``next_job >= 0``,
        ``estimates(next_job)``, in one kernel call (:meth:`_O4ABank.step`) when every server is in the O4A bank and
        nothing else is due (no server event on the heap, no pending commit, no orphan completion): returns
        ``(completions, estimates or None)``, what the three calls return; None (nothing done) otherwise."""
        b = self._o4bank
        if not FUSED_STEP or b is None or not b.all_members or self._bank is not None or self._heap or self._pending \
                or self._orphans:
            return None
        out = np.empty(len(self.servers)) if next_job >= 0 else _NO_F  # every entry written (all in the bank)
        stage, done, wk, wb = b.step(self, job, server, self.now, t, next_job, out)
        self.server_of[job] = server
        if stage == 1:  # the commit needed wider level rows: grow them, then advance and estimate one call each
            b.lv._grow(wk, wb)
            self._orphans.extend(done)
            done = self.advance_to(t)
            return done, (self.estimates(next_job) if next_job >= 0 else None)
        self.now = max(self.now, t)
        done.sort(key=_completion_key)
        if stage == 2:  # the estimates needed wider level rows
            b.lv._grow(wk, wb)
            b.estimates(self, next_job, b.ks, out)
        return done, (out if next_job >= 0 else None)

    def dispatch(self, job: int, server: int, latency_s: float = 0.0) -> None:
        """Send ``job`` to ``server`` now (``latency_s > 0``: commit at ``now + latency``, DO4A's query
        latency of the paper's Fig. 12)."""
        if latency_s > 0:
            self._seq += 1
            heapq.heappush(self._pending, (self.now + latency_s, self._seq, job, server))
            self.server_of[job] = server
        else:
            self._commit(job, server, self.now)

    def drain(self) -> list[Completion]:
        """Advance until nothing can change any more; return the completions."""
        b = self._o4bank
        if FUSED_STEP and b is not None and b.all_members and self._bank is None and not self._heap \
                and not self._pending and not self._orphans:  # every event of the O4A bank in one kernel call
            no, last = (_K or _kernels()).o4b_drain(b.ks, b.s, b.fb, b.slots, b.si, b.sf, b.jf, b.jp, b.PS, b.PE,
                                                    b.oj, b.oc, b.os, *b.utab)
            out = b.completions(self, no) if no else []
            self.now = max(self.now, last)
            out.sort(key=_completion_key)
            return out
        out: list[Completion] = []
        while self._pending:
            out.extend(self.advance_to(self._pending[0][0]))
        bank = self._bank
        while True:  # the earliest scheduled event of any server (the bank's: one call)
            t = self._heap[0][0] if self._heap else math.inf
            if bank is not None:
                t = min(t, bank.next_due())
            if self._o4bank is not None:
                t = min(t, self._o4bank.next_due())
            if t == math.inf:
                break
            out.extend(self.advance_to(t))
        out.sort(key=_completion_key)
        return out

    def queue_lengths(self, dtype=np.int64) -> np.ndarray:
        """Unfinished jobs on each server (committed, not completed), a new array of ``dtype``.     # (M,) int"""
        if self._bank is not None and self._bank.all_members:
            return self._bank.si[:, 0].astype(dtype)
        if self._o4bank is not None and self._o4bank.all_members:
            return self._o4bank.si[:, 0].astype(dtype)
        return np.array([srv.queue_length for srv in self.servers], dtype=np.int64).astype(dtype, copy=False)

    @property
    def preemptions(self) -> int:
        """Total preemptions over all servers."""
        return int(sum(s.preemptions for s in self.servers))
