"""The WirelessUDL simulator (slot semantics and execution modes of Han et al., ICPADS 2021); numpy only.

Time is slotted (0-based slots). In every slot each running job trains ``d_r ≤ κ·y_r`` chunks at each site
``r`` (SPLIT: local data first, then spare capacity by decreasing site score Q), the chunks it trains
are drawn from the origin sites by the *sampling* rule and moved there first (DTA: cheapest source
first), and its workers exchange parameters with its PS. Costs (eq. 1 and f_i):

* transfer: ``δ_i·Σ q^{rr'} g^{rr'}(t)``; parameter exchange: ``π_i·Σ_r q^{r,ps} y^r(t)``;
* latency: ``f_i(t_last − a_i + latency_offset)`` when the job's last chunk is trained.

Sampling (the "unbiased" requirement): ``complete`` (the paper's Alg 3, the default of the paper's presets) —
DTA on the untrained data ``M`` (``H_i^r(t) = M_i^r(t) − d_i^r(t)``, local first): every chunk of every site is
trained once (eq. 2a) and the job's model has seen each site's data in full when it completes (the paper:
"data transmission usually happens at the end of training"; "unbiased": chunks "selected from each
geo-distributed site uniformly"); ``proportional`` (a variant, not the paper's) — the chunks trained in a slot
come from the origin sites in proportion to their share ``D_i^r / D_i`` (every origin's cumulative trained
count stays within one chunk of its share, at every slot). Okita's estimates model the sampling in force
(``tentative(..., prop=True)``: the slot-by-slot transfer cost of a constant plan).

Two execution modes:

* ``commit``: a job gets a full plan at arrival (:class:`Plan`: start slot, constant workers ``y`` per
  site, PS site; window ``l = ceil(D_i / (κ_i N))``), reserved in a per-slot calendar of free resources.
  A job's execution depends on nothing but its plan, so :meth:`Simulator.commit` runs it at once and
  its exact cost is known at commit time.
* ``replan``: between arrivals the simulator runs slot by slot and asks a slot-level discipline
  (:mod:`.disciplines`: Okita, FIFO, DRF) for every active job's allocation of that slot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _episode as _ep
from . import _kernels as kn
from .costs import latency_cost, latency_scalar
from .instance import Instance

__all__ = ["EPS", "Plan", "SlotRecord", "Simulator", "Static", "make_static", "tentative"]

EPS = 1e-9
LATE_SLOTS = 20  # episode metric ``jobs_latency_over_20``: jobs whose latency exceeds this many slots


@dataclass(frozen=True, slots=True)
class Plan:
    """A committed plan for one job: constant ``y`` workers per site and a PS site from ``start`` on."""

    job: int
    start: int
    y: np.ndarray  # (R,) int workers per site
    ps: int

    @property
    def workers(self) -> int:
        return int(np.sum(self.y))


@dataclass(frozen=True, slots=True)
class SlotRecord:
    """One job's activity in one slot (the schedule log, kept when ``record_schedule``)."""

    t: int
    job: int
    y: np.ndarray  # (R,) workers per site
    ps: int
    g: np.ndarray  # (R, R) chunks of origin r trained at r'
    transfer: float
    param: float


@dataclass(frozen=True, slots=True)
class Static:
    """Per-instance constants the kernels need (computed once per episode)."""

    qbar: np.ndarray  # (R,) mean outgoing price, normalised (okita.q_norm)
    src_order: np.ndarray  # (R, R) row r: sources by q[s, r] ascending
    beta: np.ndarray  # (3,)
    tie_le: bool
    n_cap: np.ndarray  # (n_jobs,) most workers placeable on the empty cluster (≥ 1)
    q_nonneg: bool = True  # every price q ≥ 0 (a PA cost only grows along a fill: the kernels may stop early)
    #: ``qbar`` is ``q.sum(axis=1) / (R − 1) / q.max()`` with ``R > 1`` and ``q.max() > 0`` (the observation's mean
    #: price, the same operations: ``WirelessUDLEnv._observation_constants`` copies it instead of recomputing it)
    qbar_obs: bool = False


def _n_cap(inst: Instance) -> np.ndarray:
    """(n_jobs,) most workers each job can place on the empty cluster (one PS included), at least 1 (one compiled
    call, :func:`~._kernels.n_cap`; ``_reference.n_cap`` is the numpy original)."""
    f = _ep.n_cap if _ep.ENABLED else kn.n_cap  # the compiled per-distinct-row pass (the same numbers) or the original
    return f(np.ascontiguousarray(inst.cap, dtype=float), np.ascontiguousarray(inst.m, dtype=float),
             np.ascontiguousarray(inst.n, dtype=float))


#: False: :func:`make_static` sorts the sources with ``np.argsort`` and tests ``q ≥ 0`` with numpy (the reference of
#: :func:`~._episode.src_order`, one compiled pass for both)
_FUSED_STATIC = True


def make_static(inst: Instance, beta=(1.0, 1.0, 1.0), q_norm="max", tie_le=True) -> Static:
    """The per-instance constants of the kernels (:class:`Static`)."""
    R = inst.num_sites
    q = inst.q
    qsum = q.sum(axis=1) / max(R - 1, 1)
    qmax = float(q.max()) if R > 1 else 0.0
    by_max = q_norm == "max" and qmax > 0
    norm = qmax if by_max else 1.0
    qbar = qsum / norm if R > 1 else np.zeros(R)
    src_order = None
    if _FUSED_STATIC and q.dtype == np.float64 and q.ndim == 2:
        # the stable sort of every column and the sign test in one call (a NaN leaves both to numpy below)
        src_order, q_nonneg = _ep.src_order(q)
        if src_order.shape[0] != q.shape[1]:
            src_order = None
    if src_order is None:
        src_order = np.ascontiguousarray(np.argsort(q.T, axis=1, kind="stable").astype(np.int64))
        q_nonneg = bool(np.all(q >= 0))
    n_cap = _n_cap(inst)
    return Static(qbar=qbar, src_order=src_order, beta=np.asarray(beta, float), tie_le=bool(tie_le), n_cap=n_cap,
                  q_nonneg=q_nonneg, qbar_obs=bool(by_max and R > 1))


def job_latency_cost(inst: Instance, i: int, latency):
    """f_i(latency) (vectorised over ``latency``)."""
    return latency_cost(inst.kind[i], inst.tau[i], inst.b[i], inst.tau1[i], inst.tau2[i], inst.c[i], latency,
                        inst.exp_rate)


def tentative(inst: Instance, st: Static, i: int, U: np.ndarray, M: np.ndarray, t: int, offset: int = 1,
              prop: bool = False):
    """Okita's tentative enumeration for job ``i`` at slot ``t`` under availability ``U`` (Alg 1 l. 4-11).

    Returns a dict of arrays indexed by N (index 0 unused): ``l``, ``param`` (l·π·Σq y), ``transfer``
    (δ·DTA window cost; ``prop``: the slot-by-slot cost under ``proportional`` sampling, see
    :func:`~._kernels.window_transfer`), ``latency`` (f_i(t + l − 1 − a_i + offset)), ``total``, ``ps``; and
    ``best``, the N minimising ``total`` (ties: smaller N), or 0 if no N fits.
    """
    tot = int(M.sum())
    kap = int(inst.kappa[i])
    n_max = max(1, min(-(-tot // kap), int(st.n_cap[i])))
    L, unit, tr, ps = kn.window_estimate(U, inst.cap, st.qbar, inst.q, st.src_order, M, inst.data[i],
                                         inst.m[i], inst.n[i], kap, n_max, st.beta, st.tie_le, bool(prop))
    ok = ps >= 0
    param = np.where(ok, L * inst.param_mb[i] * np.where(ok, unit, 0.0), np.inf)
    transfer = np.where(ok, inst.chunk_mb[i] * np.where(ok, tr, 0.0), np.inf)
    lat = job_latency_cost(inst, i, t + L - 1 - inst.arrival[i] + offset)
    total = param + transfer + lat
    total[0] = np.inf
    total[ps < 0] = np.inf
    best = int(np.argmin(total)) if np.isfinite(total).any() else 0
    return {"l": L, "param": param, "transfer": transfer, "latency": lat, "total": total, "ps": ps,
            "best": best, "n_max": n_max}


class Simulator:
    """State of one episode (both modes). ``discipline`` is used in ``replan`` mode only."""

    #: False: the calendar is written whole when the simulator is built (the reference of the lazy calendar, which
    #: writes its slots when first needed; the differential test runs both)
    _lazy_calendar = True

    def __init__(self, inst: Instance, *, mode="commit", sampling="proportional", latency_offset=1,
                 cap_factor=10, calendar_len=None, record=False, static: Static | None = None,
                 discipline=None, model_sampling=True):
        self.inst = inst
        self.mode = mode
        self.sampling = sampling
        self.model_sampling = bool(model_sampling)
        self.offset = int(latency_offset)
        self.record = bool(record)
        self.static = static if static is not None else make_static(inst)
        self.discipline = discipline
        R, K, n_jobs = inst.num_sites, inst.num_resources, inst.num_jobs
        self.cap_slot = int(cap_factor * inst.horizon_slots)  # run-off cap
        if calendar_len:  # the commit mode's (the preset's): the longest window is not needed
            self.calendar_len = int(calendar_len)
        else:
            max_l = int(np.max(-(-inst.data.sum(axis=1) // inst.kappa))) if n_jobs else 1
            self.calendar_len = int(self.cap_slot + max_l + 1)
        self.t = 0  # next slot to execute (replan) / current decision slot (commit)
        self.M = inst.data.copy()  # (n_jobs, R) untrained chunks by origin
        self.status = np.zeros(n_jobs, np.int8)  # 0 not arrived, 1 active, 2 done
        self.start = np.full(n_jobs, -1, np.int64)
        self.t_last = np.full(n_jobs, -1, np.int64)
        self.lat_cost = np.zeros(n_jobs)
        self.transfer = np.zeros(n_jobs)
        self.param = np.zeros(n_jobs)
        self.penalty = np.zeros(n_jobs)
        self.plan_l = np.zeros(n_jobs, np.int64)
        self.plan_y = np.zeros((n_jobs, R), np.int64)
        self.plan_ps = np.full(n_jobs, -1, np.int64)
        # the calendar (:attr:`cal`): every slot's free resources = the capacities, written lazily: slots
        # ``[0, _cal_fill)`` hold the calendar, the rest of the buffer is filled with the capacities when first
        # needed (:meth:`cal_upto`; an episode reads and books a few hundred of its ~1,700 slots, and the full fill
        # of the ~2.7 MB buffer was about a third of a reset)
        self._cal = None
        self._cal_fill = 0
        if mode == "commit":
            self._cal = np.empty((self.calendar_len, R, K), inst.cap.dtype)
            if not self._lazy_calendar:  # the reference: the whole calendar written now
                self._fill_calendar(self.calendar_len)
        self.usage = np.zeros((R, K))  # replan: resources used in the last executed slot
        self.log: list[SlotRecord] = []
        self.hit_cap = 0
        self.slots_run = 0
        self.worker_slots = 0  # Σ over slots of workers running
        self.cand_cache = None  # commit mode: per-episode job constants of ``candidates.build_candidates``
        self.job_consts = None  # commit mode: (inst, the jobs' integer arrays of ``_episode.job_consts``)

    # ------------------------------------------------------------------ calendar
    @property
    def cal(self) -> np.ndarray | None:
        """(slots, R, K) free resources per slot (commit mode; ``None`` in replan mode): the capacities minus the
        committed plans' demands over their windows. The whole calendar is written before it is handed out."""
        c = self._cal
        if c is not None and self._cal_fill < c.shape[0]:
            self._fill_calendar(c.shape[0])
        return c

    @cal.setter
    def cal(self, value: np.ndarray | None) -> None:
        self._cal = value
        self._cal_fill = 0 if value is None else value.shape[0]  # a calendar set from outside is complete

    def cal_upto(self, n: int) -> np.ndarray:
        """The calendar buffer with at least its slots ``[0, n)`` written (the later ones may not be: for the
        kernels, which read and book slots below ``n`` only; commit mode)."""
        if n > self._cal_fill:
            self._fill_calendar(n)
        return self._cal

    def _fill_calendar(self, n: int) -> None:
        """Write the capacities into the unwritten slots up to ``n`` (at least 64 more slots, at most the end): no
        commit has touched them (commits book slots below the filled part only)."""
        c = self._cal
        lo = self._cal_fill
        hi = min(c.shape[0], max(int(n), lo + 64))
        c[lo:hi] = self.inst.cap
        self._cal_fill = hi

    # ------------------------------------------------------------------ shared slot mechanics
    def demand(self, i: int, y: np.ndarray, ps: int) -> np.ndarray:
        """(R, K) resources of ``y`` workers of job i plus its PS at ``ps``."""
        dem = np.outer(y, self.inst.m[i])
        if ps >= 0:
            dem[ps] += self.inst.n[i]
        return dem

    def param_slot(self, i: int, y: np.ndarray, ps: int) -> float:
        """The parameter-exchange cost of one slot of job ``i`` with ``y`` workers per site and PS site ``ps``
        (``-1``: none, no cost)."""
        return float(self.inst.param_mb[i] * np.dot(self.inst.q[:, ps], y)) if ps >= 0 else 0.0

    def execute(self, i: int, t: int, y: np.ndarray, ps: int, M: np.ndarray):
        """Run one slot of job ``i`` with ``y``/``ps`` on untrained data ``M`` (modified in place).

        Returns ``(transfer_cost, param_cost, chunks_trained)``; appends a :class:`SlotRecord` if recording.
        """
        inst, st = self.inst, self.static
        order, _ = kn.site_order(inst.cap, inst.cap, st.qbar, M, inst.data[i], st.beta[0], st.beta[1], st.beta[2])
        d = kn.split(y, M, int(inst.kappa[i]), 1, order)
        X = int(d.sum())
        S = M if self.sampling == "complete" else kn.prop_quota(M, inst.data[i], X)
        c, g, used = kn.dta(S, d, inst.q, st.src_order, self.record)
        M -= used
        transfer = float(inst.chunk_mb[i] * c)
        param = self.param_slot(i, y, ps)
        if self.record:
            self.log.append(SlotRecord(t, i, y.copy(), int(ps), g.copy(), transfer, param))
        return transfer, param, X

    @property
    def prop(self) -> bool:
        """True when the estimates model ``proportional`` sampling (that sampling and ``model_sampling``)."""
        return self.sampling == "proportional" and self.model_sampling

    def latency_of(self, i: int, t_last: int) -> int:
        return int(t_last - self.inst.arrival[i] + self.offset)

    # ------------------------------------------------------------------ commit mode
    def window(self, i: int, N: int) -> int:
        """Window length l = ceil(M_i / (κ_i N))."""
        return int(-(-int(self.M[i].sum()) // (int(self.inst.kappa[i]) * N)))

    def extend_calendar(self, slots: int) -> None:
        """Append ``slots`` empty slots to the calendar (commit mode; when no candidate plan fits the calendar)."""
        extra = np.broadcast_to(self.inst.cap, (int(slots), *self.inst.cap.shape))
        self.cal = np.concatenate([self.cal, extra])
        self.calendar_len += int(slots)

    def free_window(self, start: int, win: int) -> np.ndarray:
        """(R, K) resources free in every slot of ``[start, start + l)``."""
        return self.cal_upto(start + win)[start:start + win].min(axis=0)

    def check_plan(self, plan: Plan) -> str | None:
        """Why ``plan`` is not a legal commit now (``None`` if it is)."""
        inst, i = self.inst, plan.job
        y = np.asarray(plan.y)
        if not 0 <= i < inst.num_jobs or self.status[i] != 1:
            return f"job {i} is not the pending job"
        if y.shape != (inst.num_sites,) or np.any(y < 0) or np.any(y != np.round(y)):
            return f"y must be {inst.num_sites} non-negative integers, got {plan.y!r}"
        if y.sum() < 1:
            return "a plan needs at least one worker"
        if not 0 <= plan.ps < inst.num_sites:
            return f"PS site {plan.ps} out of range"
        if plan.start < max(self.t, int(inst.arrival[i])):
            return f"start slot {plan.start} is before the job's arrival/current slot {self.t}"
        win = self.window(i, int(y.sum()))
        if plan.start + win > self.calendar_len:
            return f"window [{plan.start}, {plan.start + win}) runs past the calendar ({self.calendar_len} slots)"
        if np.any(self.demand(i, y, plan.ps) > self.free_window(plan.start, win) + EPS):
            return "the plan over-commits a site's resources in its window"
        return None

    def commit(self, plan: Plan, checked: bool = False) -> float:
        """Reserve and run ``plan`` (commit mode); returns the job's total cost (its exact contribution).

        ``checked``: ``plan`` is known to be legal (a row of the env's candidate table, built on this calendar),
        so :meth:`check_plan` is skipped."""
        if not checked:
            err = self.check_plan(plan)
            if err:
                raise ValueError(f"illegal plan: {err}")
        i = plan.job
        y = np.asarray(plan.y, dtype=np.int64)
        cache = self.cand_cache
        if not self.record and cache is not None and cache[0] is self.inst:  # the job's scalars cached: one call
            inst, st, ps = self.inst, self.static, int(plan.ps)
            param_slot = self.param_slot(i, y, ps)
            kap, _, a_i, kind, _, chunk_mb, tau, b, tau1, tau2, c = cache[3][i]
            cal = self.cal_upto(int(plan.start) + self.window(i, int(y.sum())))  # the slots the window books
            cost, ws, left = kn.commit_plan(inst.cap, st.qbar, inst.q, st.src_order, st.beta, self.M, inst.data,
                                            inst.m, inst.n, i, y, kap, self.sampling == "complete", chunk_mb,
                                            param_slot, cal, int(plan.start), ps, self.start, self.t_last,
                                            self.plan_l, self.plan_y, self.plan_ps, self.transfer, self.param,
                                            self.lat_cost, self.status, kind, tau, b, tau1, tau2, c, a_i, self.offset,
                                            self.inst.exp_rate)
            assert left == 0, "a committed window must train all data"  # internal invariant
            self.worker_slots += ws
            return cost
        M = self.M[i]
        if self.record:  # slot by slot, recording each slot's routing
            N = int(y.sum())
            win = self.window(i, N)
            self.cal[plan.start:plan.start + win] -= self.demand(i, y, plan.ps)
            tr = pa = 0.0
            for s in range(win):
                a, b, _ = self.execute(i, plan.start + s, y, plan.ps, M)
                tr += a
                pa += b
            left = int(M.sum())
        else:  # the same in one compiled call (``execute``'s operations, summed in the same order; N and the
            # window as ``window`` computes them)
            inst, st, ps = self.inst, self.static, int(plan.ps)
            param_slot = self.param_slot(i, y, ps)
            cal = self.cal_upto(int(plan.start) + self.window(i, int(y.sum())))  # the slots the window books
            tr, pa, N, win, left = kn.run_plan(inst.cap, st.qbar, inst.q, st.src_order, st.beta, M, inst.data[i], y,
                                               int(inst.kappa[i]), self.sampling == "complete",
                                               float(inst.chunk_mb[i]), param_slot, cal, int(plan.start),
                                               inst.m[i], inst.n[i], ps)
        assert left == 0, "a committed window must train all data"  # internal invariant
        self.start[i], self.t_last[i] = plan.start, plan.start + win - 1
        self.plan_l[i], self.plan_y[i], self.plan_ps[i] = win, y, plan.ps
        self.transfer[i], self.param[i] = tr, pa
        self.worker_slots += N * win
        cache = self.cand_cache
        if cache is not None and cache[0] is self.inst:  # the job's scalars as Python numbers (candidates' cache)
            _, _, a_i, kind, _, _, tau, b, tau1, tau2, c = cache[3][i]
            lat = latency_scalar(kind, tau, b, tau1, tau2, c, float(plan.start + win - 1 - a_i + self.offset),
                                 self.inst.exp_rate)
        else:
            lat = float(job_latency_cost(self.inst, i, self.latency_of(i, plan.start + win - 1)))
        self.lat_cost[i] = lat
        self.status[i] = 2
        return float(tr + pa + self.lat_cost[i])

    # ------------------------------------------------------------------ replan mode
    def arrive(self, i: int) -> None:
        self.status[i] = 1
        if self.mode == "replan" and self.discipline is not None:
            self.discipline.on_arrival(self, i)

    def run_slot(self) -> float:
        """Execute slot ``self.t`` with the discipline's allocations (replan mode); returns its cost."""
        t = self.t
        allocs = self.discipline.allocate(self, t) if self.discipline is not None else []
        usage = np.zeros_like(self.usage)
        cost = 0.0
        for i, y, ps in allocs:
            if y.sum() <= 0:
                continue
            usage += self.demand(i, y, ps)
            self.worker_slots += int(y.sum())
            if self.start[i] < 0:
                self.start[i] = t
            tr, pa, X = self.execute(i, t, y, ps, self.M[i])
            self.transfer[i] += tr
            self.param[i] += pa
            cost += tr + pa
            if X > 0:
                self.t_last[i] = t
            if self.M[i].sum() == 0:
                self.status[i] = 2
                self.lat_cost[i] = float(job_latency_cost(self.inst, i, self.latency_of(i, t)))
                cost += self.lat_cost[i]
                if self.discipline is not None:
                    self.discipline.on_complete(self, i)
        self.usage = usage
        self.t += 1
        self.slots_run += 1
        return cost

    def run_until(self, t_end: int) -> float:
        """Run slots ``[self.t, t_end)``; returns their cost."""
        cost = 0.0
        while self.t < t_end:
            cost += self.run_slot()
        return cost

    def run_off(self) -> tuple[float, bool]:
        """Run, with no further arrival, until every arrived job is done or the cap; returns ``(cost, truncated)``.

        After the last arrival this ends the episode; earlier, it is the terminal value of a look-ahead (the jobs
        not yet arrived stay out)."""
        cost = 0.0
        while np.any(self.status == 1) and self.t < self.cap_slot:
            cost += self.run_slot()
        if np.any(self.status == 1):  # penalty for jobs unfinished at the cap
            qmax = float(self.inst.q.max())
            for i in np.flatnonzero(self.status == 1):
                pen = float(job_latency_cost(self.inst, i, self.cap_slot - self.inst.arrival[i] + self.offset))
                pen += float(self.M[i].sum() * self.inst.chunk_mb[i] * qmax)
                self.penalty[i] = pen
                self.hit_cap += 1
                cost += pen
                self.status[i] = 2
            return cost, True
        return cost, False

    # ------------------------------------------------------------------ metrics
    def total_cost(self) -> float:
        return float(self.lat_cost.sum() + self.transfer.sum() + self.param.sum() + self.penalty.sum())

    def metrics(self) -> dict:
        done = self.t_last >= 0
        started = self.start >= 0
        lat = (self.t_last - self.inst.arrival + self.offset)[done]
        makespan = int(self.t_last[done].max() + 1 - self.start[started].min()) if done.any() else 0
        job = self.job_costs()
        pos = job[job > 0]
        # each cost array summed once (the same sums, added in total_cost's order)
        s_lat, s_tr, s_pa, s_pen = self.lat_cost.sum(), self.transfer.sum(), self.param.sum(), self.penalty.sum()
        return {
            "objective": float(s_lat + s_tr + s_pa + s_pen),
            "latency_cost": float(s_lat),
            "bandwidth_cost": float(s_tr + s_pa),
            "transfer_cost": float(s_tr),
            "param_cost": float(s_pa),
            "penalty_cost": float(s_pen),
            "jobs": int(self.inst.num_jobs),
            "jobs_hit_cap": int(self.hit_cap),
            "mean_latency_slots": float(lat.mean()) if lat.size else 0.0,
            "max_latency_slots": int(lat.max()) if lat.size else 0,
            "makespan_slots": makespan,
            "worker_slots": int(self.worker_slots),
            "median_job_cost": float(np.median(job)) if job.size else 0.0,
            "geomean_job_cost": float(np.exp(np.mean(np.log(pos)))) if pos.size else 0.0,  # jobs with cost > 0
            "jobs_latency_over_20": int(np.sum(lat > LATE_SLOTS)),
        }

    def job_costs(self) -> np.ndarray:
        """(n_jobs,) each job's cost: latency + transfer + parameter exchange (+ the run-off cap's penalty)."""
        return self.lat_cost + self.transfer + self.param + self.penalty
