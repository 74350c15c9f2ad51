"""Paper 003's model (spec ``shared/specs/003_o4a_utility.md`` §2, §3.5, §8.1): heterogeneous-utility jobs
dispatched online to edge servers or the cloud, each server running a pluggable scheduling discipline.

numpy only, no gymnasium. Continuous time, event-driven: each server advances its own state between the
times something can change (a job becomes ready, an executable-interval boundary, a completion); a heap of
``(time, seq, server, version)`` finds the servers with an event before a target time (ties: earlier push).

Units: seconds (``_s``); utility in points. Server indices: edge servers ``0..S-1``, then the cloud
(index ``S``) when it exists.

Disciplines (:data:`DISCIPLINES`): ``o4a`` (executable sets + densities fixed at dispatch, spec §3.3/§3.5),
``fifo``, ``srpt``, ``edf``, ``hpu`` (highest potential utility, the Random baseline's server rule) and
``hrdf`` (highest g/remaining); the cloud is ``infinite`` (a pure delay server, every job starts when
ready, spec A14) or runs the edge discipline on one processor.

Estimation errors (spec §3.7, A20): a job carries true ``p, Δ↑, Δ↓`` (used for execution and utility) and
planned ones (the estimates, possibly inflated by ``1 + δ`` for the conservative variant) used by every
``estimate``/``plan`` call.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from .utility_fn import TOL, UtilityFn, discretize, fill, tentative_time

__all__ = [
    "DISCIPLINES",
    "O4AParams",
    "O4AScheduler",
    "InfiniteServer",
    "PriorityScheduler",
    "Plan",
    "Request",
    "UtilityJobs",
    "UtilitySimulator",
    "make_scheduler",
    "plan_o4a",
    "upper_bound",
]

DISCIPLINES = ("o4a", "fifo", "srpt", "edf", "hpu", "hrdf")
FALLBACKS = ("density", "none", "potential_density")


# ------------------------------------------------------------------------------------------ containers
def _frozen(a, dtype=np.float64) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, slots=True)
class UtilityJobs:
    """The jobs of one episode (struct of arrays), sorted by release time (trace order breaks ties, A19).

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
    """The paper's Upper Bound per job: ``max_j g_i(p_ij/s + Δ↑_ij + Δ↓_ij)`` (no queueing; spec §5.4).

    ``servers``: boolean mask of usable columns (default all). Returns the per-job bound (J,).
    """
    lb = jobs.p_s / speed + jobs.up_s + jobs.down_s
    if servers is not None:
        lb = np.where(np.asarray(servers, dtype=bool)[None, :], lb, np.inf)
    best = lb.min(axis=1)  # g is non-increasing: the smallest no-queue JRT is the best
    return np.array([u(t) if np.isfinite(t) else 0.0 for u, t in zip(jobs.utilities, best, strict=True)])


@dataclass(frozen=True, slots=True)
class Request:
    """One job as seen by a server at dispatch (planning quantities are estimates; truth used to run it)."""

    job: int
    release_s: float
    dispatch_s: float  # when the job is committed (r_i, or r_i + query latency)
    p_plan: float
    up_plan: float
    down_plan: float
    p_true: float
    up_true: float
    down_true: float
    g: UtilityFn

    @property
    def a_plan(self) -> float:
        """Planned ready time ``dispatch + Δ̂↑``."""
        return self.dispatch_s + self.up_plan

    @property
    def a_true(self) -> float:
        """True ready time ``dispatch + Δ↑``."""
        return self.dispatch_s + self.up_true


class _Job:
    """Mutable per-server record of a dispatched, unfinished job."""

    __slots__ = ("req", "id", "r", "a", "a_plan", "rem", "p_plan", "down", "down_plan", "g", "starts", "ends",
                 "u", "d", "f", "key", "gamma")

    def __init__(self, req: Request) -> None:
        self.req = req
        self.id = req.job
        self.r = req.release_s
        self.a = req.a_true
        self.a_plan = req.a_plan
        self.rem = req.p_true
        self.p_plan = req.p_plan
        self.down = req.down_true
        self.down_plan = req.down_plan
        self.g = req.g
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.u = 0.0
        self.d = math.inf
        self.f = math.inf
        self.key = 0.0
        self.gamma = 0

    def est_rem(self) -> float:
        """Remaining work as the scheduler believes it (planned p minus work done)."""
        done = self.req.p_true - self.rem
        return max(self.p_plan - done, 0.0)

    def in_set(self, t: float) -> bool:
        k = bisect_right(self.starts, t) - 1
        return k >= 0 and t < self.ends[k]


# ------------------------------------------------------------------------------------------ schedulers
class _SingleProcessor:
    """Base of the one-job-at-a-time preemptive-resume servers: subclasses define ``_pick`` and ``_next_bp``."""

    name = "base"

    def __init__(self, speed: float = 1.0, record: bool = False) -> None:
        self.speed = float(speed)
        self.t = 0.0
        self.jobs: list[_Job] = []
        self.running: _Job | None = None
        self.preemptions = 0
        self.busy_s = 0.0
        self.record = record
        self.segments: list[tuple[float, float, int]] = []  # (start, end, job) when record=True
        self._bps: list[float] = []

    # -- subclass hooks
    def _pick(self, t: float) -> _Job | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _rebuild(self) -> None:
        self._bps = sorted({q.a for q in self.jobs})

    def _next_bp(self, t: float) -> float:
        k = bisect_right(self._bps, t)
        return self._bps[k] if k < len(self._bps) else math.inf

    # -- shared machinery
    @property
    def queue_length(self) -> int:
        """Unfinished jobs on this server."""
        return len(self.jobs)

    def backlog_s(self) -> float:
        """Estimated remaining work of the unfinished jobs, in wall seconds."""
        return sum(q.est_rem() for q in self.jobs) / self.speed

    def advance(self, t1: float) -> list[tuple[float, _Job]]:
        """Run from ``self.t`` to ``t1``; return the completions ``(C, job)`` in time order (C ≤ t1)."""
        out: list[tuple[float, _Job]] = []
        t = self.t
        if t1 < t:
            return out
        s = self.speed
        while True:
            q = self._pick(t)
            if q is not self.running:
                if self.running is not None and self.running.rem > 0:
                    self.preemptions += 1
                self.running = q
            nb = self._next_bp(t)
            if q is None:
                if nb > t1:
                    break
                t = nb
                continue
            tc = t + q.rem / s
            stop = min(nb, t1)
            if tc <= stop:
                if self.record:
                    self.segments.append((t, tc, q.id))
                self.busy_s += tc - t
                q.rem = 0.0
                self.jobs.remove(q)
                self.running = None
                self._rebuild()
                out.append((tc, q))
                t = tc
                continue
            if self.record and stop > t:
                self.segments.append((t, stop, q.id))
            q.rem -= (stop - t) * s
            self.busy_s += stop - t
            t = stop
            if t >= t1:
                break
        self.t = max(self.t, t1)
        return out

    def next_event(self) -> float:
        """Earliest time after ``self.t`` at which the server's state changes (inf if never)."""
        t = self.t
        nb = self._next_bp(t)
        q = self._pick(t)
        if q is None:
            return nb
        return min(nb, t + q.rem / self.speed)

    def admit(self, req: Request, now: float) -> _Job:
        """Commit a dispatched job (the server is synced to ``now`` by the simulator)."""
        q = _Job(req)
        self._setup(q, now)
        self.jobs.append(q)
        self._rebuild()
        return q

    def _setup(self, q: _Job, now: float) -> None:
        pass


@dataclass(frozen=True, slots=True)
class O4AParams:
    """O4A's knobs (spec §3.1): ε, α (default ``2 + 2/ε``), β, the tentative-time mode and the fallback."""

    eps: float = 0.02
    alpha: float | None = None
    beta: float = 0.8
    tentative_mode: str = "speed_consistent"
    fallback: str = "density"

    @property
    def alpha_value(self) -> float:
        """α actually used (``inf`` when ε = 0 and α is not given)."""
        if self.alpha is not None:
            return float(self.alpha)
        return math.inf if self.eps == 0 else 2.0 + 2.0 / self.eps


@dataclass(frozen=True, slots=True)
class Plan:
    """Output of PLAN (Alg. 1): priority level γ, executable set, tentative completion/finish, density."""

    gamma: int
    starts: tuple[float, ...]
    ends: tuple[float, ...]
    d: float
    f: float
    u: float


def _merge(starts: list[float], ends: list[float]) -> tuple[list[float], list[float]]:
    order = sorted(range(len(starts)), key=starts.__getitem__)
    ms: list[float] = []
    me: list[float] = []
    for k in order:
        s, e = starts[k], ends[k]
        if e <= s:
            continue
        if ms and s <= me[-1]:
            if e > me[-1]:
                me[-1] = e
        else:
            ms.append(s)
            me.append(e)
    return ms, me


def plan_o4a(levels: list[tuple[float, list[float], list[float]]], a: float, p: float, down: float, r: float,
             g: UtilityFn, speed: float, params: O4AParams) -> Plan:
    """Algorithm 1 (PLAN), a pure function (spec §3.3).

    Args:
        levels: ``(u_γ, B_γ starts, B_γ ends)`` for γ = 0..K: ``u_0 = -inf`` and ``B_0`` the union of all
            unfinished jobs' sets; for γ ≥ 1 the γ-th smallest distinct density and the union of the sets of
            the jobs with a strictly larger density (see :meth:`O4AScheduler.levels`).
        a: planned ready time; p: planned processing time (speed 1); down: planned Δ↓; r: release time.
    """
    pd = tentative_time(p, speed, params.eps, params.beta, params.tentative_mode)
    alpha = params.alpha_value
    best: Plan | None = None
    for gamma, (u_g, bs, be) in enumerate(levels):
        d, fs, fe = fill(a, pd, bs, be)
        u = discretize(g(d + down - r), p) / p
        if gamma == 0:
            feasible = True
        elif u_g == 0.0:
            feasible = u > 0.0
        else:
            feasible = u > alpha * u_g
        if feasible and (best is None or d < best.d - TOL):
            best = Plan(gamma, tuple(fs), tuple(fe), d, d + down, u)
    return best  # type: ignore[return-value]


class O4AScheduler(_SingleProcessor):
    """O4A's server (spec §3.2–§3.5): fixed executable sets and power-of-two densities from PLAN at commit;
    runs the highest-density job inside its set, else the fallback (``density``: highest density, then
    earliest d†, then id; ``potential_density``: highest ``g(now + rem/s + Δ↓ − r)/rem``; ``none``: idle)."""

    name = "o4a"

    def __init__(self, speed: float = 1.0, params: O4AParams | None = None, record: bool = False) -> None:
        super().__init__(speed, record)
        self.params = params or O4AParams()
        if self.params.fallback not in FALLBACKS:
            raise ValueError(f"unknown fallback {self.params.fallback!r} (valid: {', '.join(FALLBACKS)})")
        self._levels: list | None = None

    def _rebuild(self) -> None:
        bps = set()
        for q in self.jobs:
            bps.add(q.a)
            bps.update(q.starts)
            bps.update(q.ends)
        self._bps = sorted(bps)
        self._levels = None

    def levels(self) -> list[tuple[float, list[float], list[float]]]:
        """Cached ``(u_γ, B_γ)`` for PLAN: γ = 0 (all sets), then one per distinct density, ascending."""
        if self._levels is None:
            by_u: dict[float, tuple[list[float], list[float]]] = {}
            for q in self.jobs:
                s, e = by_u.setdefault(q.u, ([], []))
                s.extend(q.starts)
                e.extend(q.ends)
            us = sorted(by_u)
            K = len(us)
            out = [None] * (K + 1)
            acc_s: list[float] = []
            acc_e: list[float] = []
            bs: list[float] = []
            be: list[float] = []
            for gamma in range(K, -1, -1):  # B_K = ∅; B_γ = B_{γ+1} ∪ sets of level γ+1
                if gamma < K:
                    s, e = by_u[us[gamma]]
                    acc_s.extend(s)
                    acc_e.extend(e)
                    bs, be = _merge(acc_s, acc_e)
                out[gamma] = (us[gamma - 1] if gamma >= 1 else -math.inf, bs, be)
            self._levels = out
        return self._levels

    def plan(self, req: Request) -> Plan:
        """PLAN for ``req`` on this server's current state (no side effects)."""
        if not self.jobs:
            pd = tentative_time(req.p_plan, self.speed, self.params.eps, self.params.beta, self.params.tentative_mode)
            a = req.a_plan
            d = a + pd
            u = discretize(req.g(d + req.down_plan - req.release_s), req.p_plan) / req.p_plan
            return Plan(0, (a,), (d,), d, d + req.down_plan, u)
        return plan_o4a(self.levels(), req.a_plan, req.p_plan, req.down_plan, req.release_s, req.g, self.speed,
                        self.params)

    def estimate(self, req: Request) -> float:
        """Tentative finish time f† of ``req`` if committed here now."""
        return self.plan(req).f

    def _setup(self, q: _Job, now: float) -> None:
        pl = self.plan(q.req)
        q.starts, q.ends = list(pl.starts), list(pl.ends)
        q.u, q.d, q.f, q.gamma = pl.u, pl.d, pl.f, pl.gamma

    def _pick(self, t: float) -> _Job | None:
        best = None
        for q in self.jobs:
            if q.a <= t and q.in_set(t) and (best is None or q.u > best.u):
                best = q
        if best is not None:
            return best
        fb = self.params.fallback
        if fb == "none":
            return None
        bk = None
        for q in self.jobs:
            if q.a > t:
                continue
            if fb == "density":
                k = (q.u, -q.d, -q.id)
            else:
                k = (q.g(t + q.rem / self.speed + q.down - q.r) / q.rem, -q.d, -q.id)
            if bk is None or k > bk:
                best, bk = q, k
        return best


class PriorityScheduler(_SingleProcessor):
    """Preemptive priority server: among ready jobs run the best key, re-evaluated at events (a job becomes
    ready, a completion, a commit). Keys (larger = first; ties → earlier release, then id):

    ``fifo`` −r; ``srpt`` −remaining; ``edf`` −(r + soft deadline, θ = 0.5); ``hpu`` g(t + rem/s + Δ↓ − r)
    (the Random baseline's "highest potential utility", spec §5.4); ``hrdf`` g(t + rem/s + Δ↓ − r)/rem.
    """

    def __init__(self, discipline: str, speed: float = 1.0, record: bool = False) -> None:
        super().__init__(speed, record)
        if discipline not in ("fifo", "srpt", "edf", "hpu", "hrdf"):
            raise ValueError(f"unknown discipline {discipline!r}")
        self.name = discipline

    def _key(self, q: _Job, t: float, rem: float | None = None) -> float:
        d = self.name
        rem = q.rem if rem is None else rem
        if d == "fifo":
            return -q.r
        if d == "srpt":
            return -rem
        if d == "edf":
            return -q.key
        v = q.g(t + rem / self.speed + q.down - q.r)
        return v if d == "hpu" else v / max(rem, 1e-12)

    def _setup(self, q: _Job, now: float) -> None:
        q.key = q.r + q.g.soft_deadline(0.5)

    def _pick(self, t: float) -> _Job | None:
        best, bk = None, None
        for q in self.jobs:
            if q.a > t:
                continue
            k = (self._key(q, t), -q.r, -q.id)
            if bk is None or k > bk:
                best, bk = q, k
        return best

    def whatif(self, req: Request | None, now: float) -> dict[int, float]:
        """Finish times (completion + planned Δ↓) of every job (and ``req``) simulated from ``now`` with no
        future arrivals, planned quantities (estimated remaining work, planned ready times)."""
        items = []  # [id, r, a, rem, down, g, key]
        for q in self.jobs:
            items.append([q.id, q.r, q.a if q.a <= now else q.a_plan, q.est_rem(), q.down_plan, q.g, q.key])
        if req is not None:
            items.append([req.job, req.release_s, req.a_plan, req.p_plan, req.down_plan, req.g,
                          req.release_s + req.g.soft_deadline(0.5)])
        s = self.speed
        t = now
        done: dict[int, float] = {}
        live = [it for it in items]
        d = self.name
        while live:
            ready = [it for it in live if it[2] <= t + 1e-15]
            if not ready:
                t = min(it[2] for it in live)
                continue

            def key(it, t=t):
                if d == "fifo":
                    k = -it[1]
                elif d == "srpt":
                    k = -it[3]
                elif d == "edf":
                    k = -it[6]
                else:
                    v = it[5](t + it[3] / s + it[4] - it[1])
                    k = v if d == "hpu" else v / max(it[3], 1e-12)
                return (k, -it[1], -it[0])

            cur = max(ready, key=key)
            nxt = min((it[2] for it in live if it[2] > t), default=math.inf)
            tc = t + cur[3] / s
            if tc <= nxt:
                done[cur[0]] = tc + cur[4]
                live.remove(cur)
                t = tc
            else:
                cur[3] -= (nxt - t) * s
                t = nxt
        return done

    def estimate(self, req: Request) -> float:
        """Planned finish of ``req`` by a what-if simulation from the server's current time."""
        if not self.jobs:
            return req.a_plan + req.p_plan / self.speed + req.down_plan
        return self.whatif(req, self.t)[req.job]

    def jrt_increase(self, req: Request) -> float:
        """OnDisc's Inc_j: Σ planned JRTs with ``req`` minus without (spec §5.4)."""
        if not self.jobs:
            return req.a_plan + req.p_plan / self.speed + req.down_plan - req.release_s
        with_ = self.whatif(req, self.t)
        without = self.whatif(None, self.t)
        rel = {q.id: q.r for q in self.jobs}
        rel[req.job] = req.release_s
        return sum(f - rel[i] for i, f in with_.items()) - sum(f - rel[i] for i, f in without.items())


class InfiniteServer:
    """The cloud as a pure delay server (spec A14): a job runs at once when ready, finishing at
    ``a + p/s``; ``estimate = a + p̂/s + Δ̂↓`` (equal to DO4A's local estimate at s = 1)."""

    name = "infinite"

    def __init__(self, speed: float = 1.0, record: bool = False) -> None:
        self.speed = float(speed)
        self.t = 0.0
        self._heap: list[tuple[float, int, _Job]] = []
        self.preemptions = 0
        self.busy_s = 0.0
        self.record = record
        self.segments: list[tuple[float, float, int]] = []

    @property
    def jobs(self) -> list[_Job]:
        return [q for _, _, q in self._heap]

    @property
    def queue_length(self) -> int:
        return len(self._heap)

    def backlog_s(self) -> float:
        return 0.0

    def estimate(self, req: Request) -> float:
        return req.a_plan + req.p_plan / self.speed + req.down_plan

    def jrt_increase(self, req: Request) -> float:
        return self.estimate(req) - req.release_s

    def admit(self, req: Request, now: float) -> _Job:
        q = _Job(req)
        tc = q.a + q.rem / self.speed
        if self.record:
            self.segments.append((q.a, tc, q.id))
        self.busy_s += q.rem / self.speed
        heapq.heappush(self._heap, (tc, q.id, q))
        return q

    def advance(self, t1: float) -> list[tuple[float, _Job]]:
        out = []
        while self._heap and self._heap[0][0] <= t1:
            tc, _, q = heapq.heappop(self._heap)
            q.rem = 0.0
            out.append((tc, q))
        self.t = max(self.t, t1)
        return out

    def next_event(self) -> float:
        return self._heap[0][0] if self._heap else math.inf


def make_scheduler(discipline: str, speed: float = 1.0, o4a: O4AParams | None = None, record: bool = False):
    """Build one server's scheduler by name (:data:`DISCIPLINES` or ``infinite``)."""
    if discipline == "o4a":
        return O4AScheduler(speed, o4a, record)
    if discipline == "infinite":
        return InfiniteServer(speed, record)
    if discipline in DISCIPLINES:
        return PriorityScheduler(discipline, speed, record)
    raise ValueError(f"unknown discipline {discipline!r} (valid: {', '.join(DISCIPLINES)}, infinite)")


# ------------------------------------------------------------------------------------------ simulator
@dataclass(frozen=True, slots=True)
class Completion:
    """A job whose result reached its device: server, completion C, finish f = C + Δ↓, JRT f − r, utility."""

    job: int
    server: int
    completion_s: float
    jrt_s: float
    utility: float


class UtilitySimulator:
    """All servers of one episode plus the event heap; dispatch decisions come from outside.

    Args:
        jobs: the episode's jobs (estimates in ``*_est_s``; the planning values are those times
            ``plan_scale``, i.e. ``1 + δ`` for the conservative variant).
        num_edge: number of edge servers S (the cloud, if any, is column S of ``jobs``).
        discipline: edge servers' discipline; ``cloud``: ``infinite`` or a discipline name.
        speed: server speed s (1 in practice; 1 + ε in the analysed setting).
        record: keep executed segments (for invariant tests).
    """

    def __init__(self, jobs: UtilityJobs, num_edge: int, has_cloud: bool, discipline: str = "o4a",
                 cloud: str = "infinite", speed: float = 1.0, o4a: O4AParams | None = None,
                 plan_scale: float = 1.0, record: bool = False) -> None:
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
        self.plans: dict[int, Plan] = {}
        self._orphans: list[Completion] = []  # completions found by a sync outside advance_to
        self._scale_p = jobs.p_est_s * self.plan_scale
        self._scale_up = jobs.up_est_s * self.plan_scale
        self._scale_down = jobs.down_est_s * self.plan_scale

    # -- requests
    def request(self, job: int, server: int, dispatch_s: float | None = None) -> Request:
        """The :class:`Request` of ``job`` for ``server`` (planning values = estimates × plan_scale)."""
        j = self.jobs
        r = float(j.release_s[job])
        return Request(job, r, r if dispatch_s is None else float(dispatch_s),
                       float(self._scale_p[job, server]), float(self._scale_up[job, server]),
                       float(self._scale_down[job, server]), float(j.p_s[job, server]), float(j.up_s[job, server]),
                       float(j.down_s[job, server]), j.utilities[job])

    def planned_lb(self, job: int) -> np.ndarray:
        """Planned no-queue finish offsets ``Δ̂↑ + p̂/s + Δ̂↓`` for every server (DO4A's LB_j).   # (M,)"""
        return self._scale_up[job] + self._scale_p[job] / self.speed + self._scale_down[job]

    def estimates(self, job: int, servers=None) -> np.ndarray:
        """Planned finish time of ``job`` on each server if committed now (no side effects).  # (M,)

        Idle edge servers take the closed form; busy ones run their discipline's estimate (PLAN for O4A)."""
        M = len(self.servers)
        idx = range(M) if servers is None else servers
        out = np.full(M, np.inf)
        r = float(self.jobs.release_s[job])
        base = r + self.planned_lb(job)
        for k in idx:
            srv = self.servers[k]
            if not srv.jobs and srv.name != "o4a":
                out[k] = base[k]
                continue
            if srv.jobs and srv.name != "o4a":
                self._sync_side(k, self.now)  # PLAN needs only the sets; what-if estimates need current work
            out[k] = srv.estimate(self.request(job, k))
        return out

    def jrt_increase(self, job: int, servers=None) -> np.ndarray:
        """OnDisc's Inc_j for every server, or only ``servers`` (others inf) (SRPT what-if; needs a priority
        discipline).                                                                            # (M,)"""
        out = np.full(len(self.servers), np.inf)
        for k in range(len(self.servers)) if servers is None else servers:
            srv = self.servers[k]
            if not hasattr(srv, "jrt_increase"):
                raise ValueError("jrt_increase needs a priority discipline (e.g. srpt) on the edge servers")
            if srv.jobs:
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
        out.sort(key=lambda c: (c.completion_s, c.server, c.job))
        return out

    def _commit(self, job: int, server: int, dispatch_s: float) -> None:
        self._sync_side(server, dispatch_s)
        srv = self.servers[server]
        q = srv.admit(self.request(job, server, dispatch_s), dispatch_s)
        self.server_of[job] = server
        if srv.name == "o4a":
            self.plans[job] = Plan(q.gamma, tuple(q.starts), tuple(q.ends), q.d, q.f, q.u)
        self._push(server)

    def dispatch(self, job: int, server: int, latency_s: float = 0.0) -> None:
        """Send ``job`` to ``server`` now (``latency_s > 0``: commit at ``now + latency``, spec §3.6)."""
        if latency_s > 0:
            self._seq += 1
            heapq.heappush(self._pending, (self.now + latency_s, self._seq, job, server))
            self.server_of[job] = server
        else:
            self._commit(job, server, self.now)

    def drain(self) -> list[Completion]:
        """Advance until nothing can change any more; return the completions."""
        out: list[Completion] = []
        while self._pending:
            out.extend(self.advance_to(self._pending[0][0]))
        while self._heap:
            t = self._heap[0][0]
            out.extend(self.advance_to(t))
        out.sort(key=lambda c: (c.completion_s, c.server, c.job))
        return out

    @property
    def preemptions(self) -> int:
        """Total preemptions over all servers."""
        return int(sum(s.preemptions for s in self.servers))
