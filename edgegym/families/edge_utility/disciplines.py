"""Per-server scheduling disciplines of the EdgeUtility model (the ``scheduler.discipline`` preset key).

The model and O4A are those of Zhang et al., "Online Approximation Scheme for Scheduling Heterogeneous Utility
Jobs in Edge Computing", IEEE/ACM ToN 2023 (§III-§IV); the baselines' server rules are from its §V-A.5.

``o4a`` (executable sets + densities fixed at dispatch: O4A's PLAN), ``fifo``, ``srpt``, ``edf``, ``hpu``
(highest potential utility, the Random baseline's server rule) and ``hrdf`` (highest g/remaining); the
cloud is an :class:`InfiniteServer` (a pure delay server) or runs an edge discipline on one processor.
Every discipline is a single processor with speed ``s`` that advances its own state between events;
:func:`make_scheduler` builds one by name. numpy only, no gymnasium.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from .utility_fn import TOL, UtilityFn, discretize, fill, tentative_time

__all__ = [
    "DISCIPLINES",
    "FALLBACKS",
    "InfiniteServer",
    "O4AParams",
    "O4AScheduler",
    "Plan",
    "PriorityScheduler",
    "Request",
    "make_scheduler",
    "plan_o4a",
]

DISCIPLINES = ("o4a", "fifo", "srpt", "edf", "hpu", "hrdf")
FALLBACKS = ("density", "none", "potential_density")
_NO_REM = np.zeros(0)  # O4A's compiled pick reads remaining times only for the potential_density fallback


_K = None


def _kernels():
    """The compiled kernels (:mod:`._kernels`), imported on first use. A server uses them once the simulator
    gives it the job set's utility table (``server.utab``); without one it runs the pure-Python code below,
    which is also the test oracle of the kernels."""
    global _K
    if _K is None:
        from . import _kernels as k

        _K = k
    return _K


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
        self._ran = False  # the running job made progress since it was picked
        self.busy_s = 0.0
        self.record = record
        self.segments: list[tuple[float, float, int]] = []  # (start, end, job) when record=True
        self._bps: list[float] = []
        self._removed = -1  # the last change of the job list: index removed, or -1 (a job appended)

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
                # a preemption: the displaced job is unfinished and made progress since it was picked
                if self.running is not None and self.running.rem > 0 and self._ran:
                    self.preemptions += 1
                self.running = q
                self._ran = False
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
                i = self.jobs.index(q)  # list.remove(q), remembering where (incremental rebuilds)
                del self.jobs[i]
                self._removed = i
                self.running = None
                self._rebuild()
                out.append((tc, q))
                t = tc
                continue
            if self.record and stop > t:
                self.segments.append((t, stop, q.id))
            q.rem -= (stop - t) * s
            self._ran = self._ran or stop > t
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
        self._removed = -1  # appended
        self._rebuild()
        return q

    def _setup(self, q: _Job, now: float) -> None:
        pass


@dataclass(frozen=True, slots=True)
class O4AParams:
    """O4A's knobs (the paper's §IV-B and Algorithm 1): ε, α (default ``2 + 2/ε``), β, the tentative-time mode
    and the fallback."""

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
    """Algorithm 1 (PLAN, the paper's §IV-C), a pure function.

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
    """O4A's server (the paper's Algorithms 1-2, §IV-C–§IV-D): fixed executable sets and power-of-two densities from
    PLAN at commit; runs the highest-density job inside its set, else the fallback (``density``: highest density, then
    earliest d†, then id; ``potential_density``: highest ``g(now + rem/s + Δ↓ − r)/rem``; ``none``: idle)."""

    name = "o4a"

    def __init__(self, speed: float = 1.0, params: O4AParams | None = None, record: bool = False) -> None:
        super().__init__(speed, record)
        self.params = params or O4AParams()
        if self.params.fallback not in FALLBACKS:
            raise ValueError(f"unknown fallback {self.params.fallback!r} (valid: {', '.join(FALLBACKS)})")
        self._levels: list | None = None
        self._flat: tuple | None = None  # levels() flattened for the compiled PLAN (rebuilt with it)
        self._fa: tuple | None = None  # the job set as flat arrays (compiled paths; see _rebuild)
        self.utab: tuple | None = None  # the job set's utility table (set by the simulator): compiled paths on

    def _rebuild(self) -> None:
        self._levels = None
        if self.utab is not None:  # compiled paths: the job set as flat arrays, breakpoints by numpy
            jobs = self.jobs
            fa = self._fa
            if fa is not None and self._removed >= 0 and fa[0].size == len(jobs) + 1:  # one job removed
                *fa, bps = _kernels().o4a_flat_update(self._removed, *fa, 0.0, 0.0, 0.0, 0, _NO_REM, _NO_REM, 0.0, 0.0)
                self._fa = tuple(fa)
                self._flat = None
                self._bps = bps.tolist()
                return
            if fa is not None and self._removed < 0 and fa[0].size == len(jobs) - 1:  # one job appended
                q = jobs[-1]
                qs, qe = np.array(q.starts, dtype=np.float64), np.array(q.ends, dtype=np.float64)
                *fa, bps = _kernels().o4a_flat_update(-1, *fa, q.a, q.u, q.d, q.id, qs, qe, q.r, q.down)
                self._fa = tuple(fa)
                self._flat = None
                self._bps = bps.tolist()
                return
            ptr = np.zeros(len(jobs) + 1, dtype=np.int64)
            np.cumsum([len(q.starts) for q in jobs], out=ptr[1:])
            fa = (np.array([q.a for q in jobs], dtype=np.float64), np.array([q.u for q in jobs], dtype=np.float64),
                  np.array([q.d for q in jobs], dtype=np.float64), np.array([q.id for q in jobs], dtype=np.int64),
                  ptr, np.array([x for q in jobs for x in q.starts], dtype=np.float64),
                  np.array([x for q in jobs for x in q.ends], dtype=np.float64),
                  np.array([q.r for q in jobs], dtype=np.float64), np.array([q.down for q in jobs], dtype=np.float64))
            self._fa = fa
            self._flat = None
            self._bps = np.unique(np.concatenate((fa[0], fa[5], fa[6]))).tolist()  # = sorted(set(...))
            return
        bps = set()
        for q in self.jobs:
            bps.add(q.a)
            bps.update(q.starts)
            bps.update(q.ends)
        self._bps = sorted(bps)

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
        if getattr(self, "utab", None) is not None:  # compiled PLAN (identical results)
            flat = self._flat_levels()
            pr = self.params
            pd = tentative_time(req.p_plan, self.speed, pr.eps, pr.beta, pr.tentative_mode)
            g, d, u, fs, fe = _kernels().plan_o4a(*flat[1:], req.a_plan, req.p_plan, pd, req.down_plan,
                                                  req.release_s, req.job, pr.alpha_value, *self.utab)
            return Plan(int(g), tuple(fs.tolist()), tuple(fe.tolist()), d, d + req.down_plan, u)
        return plan_o4a(self.levels(), req.a_plan, req.p_plan, req.down_plan, req.release_s, req.g, self.speed,
                        self.params)

    def _flat_levels(self) -> tuple:
        """:meth:`levels` flattened for the compiled PLAN: ``(levels, u (K+1,), ptr (K+2,), starts, ends)``
        (with ``utab`` set: computed by a kernel from the flat job set, ``levels`` None; reset by ``_rebuild``)."""
        flat = self._flat
        if self.utab is not None:
            if flat is None:
                fa = self._fa
                flat = self._flat = (None, *_kernels().o4a_levels(fa[1], fa[4], fa[5], fa[6]))
            return flat
        if flat is None or flat[0] is not self.levels():
            lv = self.levels()
            lens = [len(bs) for _, bs, _ in lv]
            flat = self._flat = (lv, np.array([u for u, _, _ in lv]), np.concatenate([[0], np.cumsum(lens)]),
                                 np.array([x for _, bs, _ in lv for x in bs], dtype=np.float64),
                                 np.array([x for _, _, be in lv for x in be], dtype=np.float64))
        return flat

    def estimate(self, req: Request) -> float:
        """Tentative finish time f† of ``req`` if committed here now."""
        return self.plan(req).f

    def estimate_fast(self, job: int, release_s: float, a_plan: float, p_plan: float, down_plan: float) -> float:
        """:meth:`estimate` with the compiled PLAN (``utab`` set) from the request's planned values, without
        building the request or the plan (the same floating-point operations)."""
        pr = self.params
        pd = tentative_time(p_plan, self.speed, pr.eps, pr.beta, pr.tentative_mode)
        if not self.jobs:
            return a_plan + pd + down_plan
        d = _kernels().plan_o4a_d(*self._flat_levels()[1:], a_plan, p_plan, pd, down_plan, release_s, job,
                                  pr.alpha_value, *self.utab)
        return d + down_plan

    def _setup(self, q: _Job, now: float) -> None:
        pl = self.plan(q.req)
        q.starts, q.ends = list(pl.starts), list(pl.ends)
        q.u, q.d, q.f, q.gamma = pl.u, pl.d, pl.f, pl.gamma

    def _pick(self, t: float) -> _Job | None:
        if self.utab is not None and self.jobs:  # compiled scan of the flat job set (same choice)
            fb = FALLBACKS.index(self.params.fallback)
            jobs = self.jobs
            rem = np.fromiter((q.rem for q in jobs), np.float64, len(jobs)) if fb == 2 else _NO_REM
            i = _kernels().o4a_pick(t, self.speed, fb, *self._fa, rem, *self.utab)
            return jobs[i] if i >= 0 else None
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
                # rem may be exactly 0.0 after float subtraction (not yet completed): as PriorityScheduler
                k = (q.g(t + q.rem / self.speed + q.down - q.r) / max(q.rem, 1e-12), -q.d, -q.id)
            if bk is None or k > bk:
                best, bk = q, k
        return best


class PriorityScheduler(_SingleProcessor):
    """Preemptive priority server: among ready jobs run the best key, re-evaluated at events (a job becomes
    ready, a completion, a commit). Keys (larger = first; ties → earlier release, then id):

    ``fifo`` −r; ``srpt`` −remaining; ``edf`` −(r + soft deadline, θ = 0.5); ``hpu`` g(t + rem/s + Δ↓ − r)
    (the Random baseline's "highest potential utility", paper §V-A.5); ``hrdf`` g(t + rem/s + Δ↓ − r)/rem.
    """

    def __init__(self, discipline: str, speed: float = 1.0, record: bool = False) -> None:
        super().__init__(speed, record)
        if discipline not in ("fifo", "srpt", "edf", "hpu", "hrdf"):
            raise ValueError(f"unknown discipline {discipline!r}")
        self.name = discipline
        self.utab: tuple | None = None  # the job set's utility table (set by the simulator): compiled what-if
        self._items: tuple | None = None  # (jobs, static item arrays) for the compiled what-if
        self._pitems: tuple | None = None  # (jobs, static arrays) for the compiled pick
        self._dcode = -1  # the kernels' code of this discipline
        self.soft_deadlines: list | None = None  # per job of the job set, g.soft_deadline(0.5) (set by the simulator)

    def _rebuild(self) -> None:
        super()._rebuild()
        self._items = self._pitems = None  # the job list changed (admit or completion)

    def _whatif_compiled(self, req: Request | None, now: float) -> dict[int, float]:
        """:meth:`whatif` by the compiled kernel (identical results; items as arrays, ``self.jobs`` then req)."""
        ids, order, fin = self._whatif_arrays(req, now)
        idl, fl = ids.tolist(), fin.tolist()
        return {idl[i]: fl[i] for i in order.tolist()}

    def _whatif_arrays(self, req: Request | None, now: float, stop_at_req: bool = False):
        """The compiled what-if: ``(item ids, completion order, finish)``; items = ``self.jobs`` then ``req``.
        ``stop_at_req``: stop when the request completes (only its finish is exact then)."""
        jobs = self.jobs
        n = len(jobs)
        if self._items is None:  # static while the job list is unchanged (reset by _rebuild)
            self._items = (None, np.array([q.id for q in jobs], dtype=np.int64),
                           np.array([[q.r, q.a, q.a_plan, q.req.p_true, q.p_plan, q.down_plan, q.key] for q in jobs],
                                    dtype=np.float64).reshape(n, 7))
        _, jid, st = self._items
        rem = np.fromiter((q.rem for q in jobs), np.float64, n)
        k = _kernels()
        if self._dcode < 0:
            self._dcode = k.DISCIPLINE_CODES[self.name]
        if req is None:
            return k.whatif_finish(self._dcode, float(now), self.speed, jid, st, rem, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                   -1, *self.utab)
        sd = self.soft_deadlines
        key = req.release_s + (sd[req.job] if sd is not None else req.g.soft_deadline(0.5))
        return k.whatif_finish(self._dcode, float(now), self.speed, jid, st, rem, 1, req.job, req.release_s,
                               req.a_plan, req.p_plan, req.down_plan, key, n if stop_at_req else -1, *self.utab)

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
        if self.utab is not None and self.name in ("hpu", "hrdf") and len(self.jobs) > 4:  # compiled scan
            jobs = self.jobs
            if self._pitems is None:  # static while the job list is unchanged: ids, [a, r, Δ↓, key]
                self._pitems = (None, np.array([q.id for q in jobs], dtype=np.int64),
                                np.array([[q.a, q.r, q.down, q.key] for q in jobs], dtype=np.float64))
            _, ids, st = self._pitems
            k = _kernels()
            if self._dcode < 0:
                self._dcode = k.DISCIPLINE_CODES[self.name]
            i = k.pick(self._dcode, t, self.speed, ids, st,
                       np.fromiter((q.rem for q in jobs), np.float64, len(jobs)), *self.utab)
            return jobs[i] if i >= 0 else None
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
        if self.utab is not None:
            return self._whatif_compiled(req, now)
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
        if self.utab is not None:  # compiled: the request is the last item; nothing after its completion matters
            return float(self._whatif_arrays(req, self.t, stop_at_req=True)[2][-1])
        return self.whatif(req, self.t)[req.job]

    def jrt_increase(self, req: Request) -> float:
        """OnDisc's Inc_j: Σ planned JRTs with ``req`` minus without (the paper's "least increase", §V-A.5)."""
        if not self.jobs:
            return req.a_plan + req.p_plan / self.speed + req.down_plan - req.release_s
        with_ = self.whatif(req, self.t)
        without = self.whatif(None, self.t)
        rel = {q.id: q.r for q in self.jobs}
        rel[req.job] = req.release_s
        # plain left-to-right sums in completion order, as the compiled bank (Python >= 3.12's sum() of floats is
        # compensated, which would differ in the last bits)
        acc1 = 0.0
        for i, f in with_.items():
            acc1 += f - rel[i]
        acc0 = 0.0
        for i, f in without.items():
            acc0 += f - rel[i]
        return acc1 - acc0


class InfiniteServer:
    """The cloud as a pure delay server (the paper gives no cloud capacity; our default): a job runs at once when
    ready, finishing at ``a + p/s``; ``estimate = a + p̂/s + Δ̂↓`` (equal to DO4A's local estimate at s = 1)."""

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


