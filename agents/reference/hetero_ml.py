"""Zhou et al.'s ``A_online`` for heterogeneous distributed ML jobs (the HeteroML env family).

Paper: R. Zhou, J. Pang, Q. Zhang, C. Wu, L. Jiao, Y. Zhong, Z. Li, "Online Scheduling Algorithm for Heterogeneous
Distributed Machine Learning Jobs", IEEE Transactions on Cloud Computing 11(2), 2023 (preprint version used for the
algorithm listings).

``A_online`` (Alg. 1) is Hall et al.'s greedy-interval doubling framework: at each boundary tau_i = 2^(i-1) it
batches the arrived, unscheduled jobs and calls ``A_dual`` (Alg. 2), which runs the primal-dual ``A_maxweight``
(Alg. 3) up to alpha times, each in a fresh window of length tau_i; ``A_maxweight`` prices every (server, resource,
slot) with delta = lambda^(beta/C) - 1, lambda = 2 T H R F + 1 and accepts a job iff its weight exceeds the minimum
cost of a schedule, found by ``A_mincost2``/``A_mincost1`` (PS, co-located/spread) or ``A_RAmincost1``/
``A_RAmincost2`` (Ring-AllReduce). The batch schedule of round i runs in [alpha tau_i, alpha tau_{i+1}).

Guarantee (paper Thm. 5 with Lemma 1/2): 4 alpha-competitive for total weighted completion time when
alpha = floor((log w(J) - log w_min) / (1 + log log lambda - log(2 log lambda - 1))) + 1 and assumptions (A1)
(weights proportional to resource use, ratio in [1, F]) and (A2) (every job small on every server) hold;
``A_maxweight`` is a 2 log lambda approximation of the maximum weighted schedule (Thm. 3). In the evaluation regime
(A2) is violated and alpha = 4 is used, so the bound is not guaranteed there; the schedule is always
feasible (Thm. 2).

Forms implemented: the faithful batch form :func:`aonline_batch` (``mode="faithful"``), the exact
per-arrival form :class:`AOnlinePerArrival` (identical schedules for fixed alpha; tested), and the eager variant
(``mode="eager"``: sub-round offsets tau_i instead of alpha tau_i, prices and residuals initialised from the global
ledger) in batch form and in commit-at-arrival form ("A_online-eager-arrival").

Deviations:
    * alpha is a fixed integer (default 4, the paper's "typical value") with early termination, not the theoretical
      value (which needs w(J) in advance and is about 250).
    * F = 10 (not given by the paper); lambda = 2 T H R F + 1 with T the preset's horizon.
    * Costs are measured with every resource in units of max_h C^r_h; weight scale s_w = 1.
    * Tie-breaking "earliest_completion" ("paper_order" available); jobs are processed in arrival order.
    * Alg. 4 FIX 1 (the worker count is reset for every PS server), resource types with e = 0 or z = 0 are skipped
      in the floor divisions, the largest feasible g wins; Alg. 5 made precise (one PS); Alg. 7
      FIX 2 and single-server "spread" RA placements skipped.
    * Only the smallest window length per worker count is enumerated ("dedupe_L"), so the
      reserved window equals the exact duration; the threshold s_w w_j prunes candidates that would be rejected
      anyway (identical accept/reject decisions and schedules).
    * Unschedulable jobs do not exist: every job fits with one worker on an empty server, so a job is
      always accepted in the first fresh sub-round whose window is long enough.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from edgegym.agents.policy import Policy
from edgegym.agents.registry import PolicySpec

from edgegym.families.hetero_ml.mincost import Candidate, SlotTables, SubRound, job_arrays, mincost, price_base
from edgegym.families.hetero_ml.simulator import HeteroCluster, HeteroJobs, Ledger, Placement, footprint

__all__ = [
    "AOnlineParams",
    "AOnlinePerArrival",
    "AOnlineHetero",
    "AOnlineHeteroEager",
    "AOnlineHeteroNow",
    "AOnlineNowCore",
    "BatchResult",
    "a_maxweight",
    "aonline_batch",
    "jain_greedy",
    "maxweight_once",
    "POLICY_SPECS",
]


@dataclass(frozen=True, slots=True)
class AOnlineParams:
    """The knobs (taken from a preset's ``aonline`` section by :meth:`from_preset`)."""

    alpha: int = 4
    F: float = 10.0
    horizon: int = 150  # T in lambda = 2 T H R F + 1
    lambda_override: float | None = None
    weight_scale: float = 1.0
    tie_break: str = "earliest_completion"
    tau: str = "paper"
    horizon_cap: int = 2**22
    allow_types: tuple | None = None  # Fig. 9: force worker types
    max_workers: int | None = None  # Fig. 10: cap on the number of workers

    @staticmethod
    def from_view(v, **kw) -> AOnlineParams:
        base = dict(
            alpha=v.alpha, F=v.F, horizon=v.horizon_slots, lambda_override=v.lambda_override,
            weight_scale=v.weight_scale, tie_break=v.tie_break, tau=v.tau_rule, horizon_cap=v.horizon_cap,
        )
        base.update(kw)
        return AOnlineParams(**base)

    def lam(self, cluster: HeteroCluster) -> float:
        return price_base(self.horizon, cluster.num_servers, cluster.num_resources, self.F, self.lambda_override)

    def tau_of(self, i: int) -> int:
        if self.tau == "hall":
            return 2**i
        return 1 if i == 0 else 2 ** (i - 1)

    def round_of(self, a: int) -> int:
        """The first round i >= 1 with tau_i >= a (the job joins batch J_i)."""
        i = 1
        while self.tau_of(i) < a:
            i += 1
        return i

    def offset(self, i: int, iota: int, mode: str) -> int:
        """Absolute slot of relative slot 1 of sub-round iota of round i."""
        t = self.tau_of(i)
        return (self.alpha * t if mode == "faithful" else t) + (iota - 1) * t


def _to_placement(cluster: HeteroCluster, cand: Candidate, offset: int) -> Placement:
    return Placement(
        start=offset + cand.t_minus - 1, duration=cand.L, worker_type=cand.m,
        ps_type=cand.p if cluster.arch == "ps" else -1, workers=cand.y, ps=cand.s,
    )


def a_maxweight(S: SubRound, jobs: HeteroJobs, order, params: AOnlineParams, duals: dict | None = None,
                min_completion: int = 0):
    """Alg. 3 on the jobs ``order`` (processed in that order) in sub-round S; mutates S. Returns [(j, cand)].
    ``min_completion``: see :func:`~edgegym.families.hetero_ml.mincost.mincost` (0 = every candidate)."""
    accepted = []
    for j in order:
        thr = params.weight_scale * float(jobs.weight[j])
        cand = mincost(S, jobs, j, thr, params.tie_break, _allow(params, S.cluster), params.max_workers,
                       min_completion)
        if cand is not None:  # u_j = s_w w_j - cost > 0
            S.commit(cand)
            accepted.append((j, cand))
        if duals is not None:
            duals[j] = max(0.0, thr - cand.cost) if cand is not None else 0.0
    return accepted


def _allow(params: AOnlineParams, cluster: HeteroCluster):
    if params.allow_types is None:
        return None
    a = np.zeros(cluster.num_worker_types, dtype=bool)
    a[list(params.allow_types)] = True
    return a


@dataclass
class BatchResult:
    """Output of :func:`aonline_batch`: placements, the (round, sub-round) of each job, per-round scheduled weight."""

    placements: dict = field(default_factory=dict)
    where: dict = field(default_factory=dict)  # j -> (i, iota)
    round_weight: dict = field(default_factory=dict)  # i -> w(J^s_i)
    subrounds_used: dict = field(default_factory=dict)  # i -> number of A_maxweight calls


def aonline_batch(cluster: HeteroCluster, jobs: HeteroJobs, params: AOnlineParams, mode: str = "faithful") -> BatchResult:
    """Alg. 1 in batch form: rounds at tau_i, A_dual with up to alpha sub-rounds, roll-over."""
    lam = params.lam(cluster)
    J = jobs.num_jobs
    ledger = Ledger(cluster.capacity) if mode == "eager" else None
    res = BatchResult()
    pending: list[int] = []
    nxt = 0
    i = 1
    while nxt < J or pending:
        tau = params.tau_of(i)
        if params.alpha * tau > params.horizon_cap:
            raise RuntimeError(f"jobs {pending} unschedulable before horizon_cap {params.horizon_cap}")
        while nxt < J and jobs.arrival[nxt] <= tau:
            pending.append(nxt)
            nxt += 1
        if not pending:
            i += 1
            continue
        remaining = list(pending)
        used = 0
        for iota in range(1, params.alpha + 1):
            if not remaining:
                break
            off = params.offset(i, iota, mode)
            init = ledger.window(off, off + tau) if ledger is not None else None
            S = SubRound(cluster, tau, off, lam, init_used=init)
            used += 1
            newly = a_maxweight(S, jobs, remaining, params)
            for j, cand in newly:
                pl = _to_placement(cluster, cand, off)
                res.placements[j] = pl
                res.where[j] = (i, iota)
                res.round_weight[i] = res.round_weight.get(i, 0.0) + float(jobs.weight[j])
                if ledger is not None:
                    f = footprint(cluster, pl.worker_type, pl.ps_type, pl.workers, pl.ps)
                    ledger.commit(f, pl.start, pl.start + pl.duration)
            got = {j for j, _ in newly}
            remaining = [j for j in remaining if j not in got]
        res.subrounds_used[i] = used
        pending = remaining
        i += 1
    return res


class AOnlinePerArrival:
    """The exact per-arrival form (faithful, fixed alpha), or eager commit-at-arrival.

    ``decide(jobs, j)`` returns job j's placement; the jobs must be decided in (arrival, id) order.
    """

    def __init__(self, cluster: HeteroCluster, params: AOnlineParams, mode: str = "faithful") -> None:
        self.cluster, self.params, self.mode = cluster, params, mode
        self.lam = params.lam(cluster)
        self.states: dict[tuple[int, int], SubRound] = {}
        self.ledger = Ledger(cluster.capacity)
        self.where: dict[int, tuple[int, int]] = {}

    def decide(self, jobs: HeteroJobs, j: int) -> Placement:
        p = self.params
        i = p.round_of(int(jobs.arrival[j]))
        while p.alpha * p.tau_of(i) <= p.horizon_cap:
            tau = p.tau_of(i)
            for iota in range(1, p.alpha + 1):
                off = p.offset(i, iota, self.mode)
                if self.mode == "faithful":
                    S = self.states.get((i, iota))
                    if S is None:
                        S = self.states[(i, iota)] = SubRound(self.cluster, tau, off, self.lam)
                else:
                    S = SubRound(self.cluster, tau, off, self.lam, init_used=self.ledger.window(off, off + tau))
                got = a_maxweight(S, jobs, [j], p)
                if got:
                    pl = _to_placement(self.cluster, got[0][1], off)
                    f = footprint(self.cluster, pl.worker_type, pl.ps_type, pl.workers, pl.ps)
                    self.ledger.commit(f, pl.start, pl.start + pl.duration)
                    self.where[j] = (i, iota)
                    return pl
            i += 1
        raise RuntimeError(f"job {j} unschedulable before horizon_cap {p.horizon_cap}")


def maxweight_once(cluster: HeteroCluster, jobs: HeteroJobs, params: AOnlineParams, tau: int, order=None):
    """One A_maxweight call with deadline tau on an empty cluster, all jobs available (Figs. 8, 11, 12).

    Returns (accepted [(j, cand)], duals {j: u_j}, final sub-round state)."""
    S = SubRound(cluster, tau, 1, params.lam(cluster))  # (7b): completion t^- + L <= tau
    duals: dict = {}
    acc = a_maxweight(S, jobs, list(range(jobs.num_jobs)) if order is None else order, params, duals)
    return acc, duals, S


def _window_max_table(U: np.ndarray) -> list:
    """Sparse table of maxima over the last axis: st[k][..., t] = max U[..., t : t + 2^k]."""
    st = [U]
    k = 1
    while (1 << k) <= U.shape[-1]:
        prev, w = st[-1], 1 << (k - 1)
        cur = prev.copy()
        cur[..., : U.shape[-1] - w] = np.maximum(prev[..., : U.shape[-1] - w], prev[..., w:])
        st.append(cur)
        k += 1
    return st


def jain_greedy(cluster: HeteroCluster, jobs: HeteroJobs, ideal, tau: int) -> tuple[float, list]:
    """Jain et al.'s greedy on one batch, deadline tau, empty cluster: total accepted weight.

    Jobs by w_j / (ideal worker-slots · Σ_r ê) descending; types (m*, p*); N from D_j down to 1, co-located then
    spread; latest start first (GreedyRTL); the first fitting (N, t^-) is accepted. Placement: PLACE (best-fit
    co-location, else spread). Window feasibility is screened for all starts at once with a sparse max table."""
    from edgegym.families.hetero_ml.placement import place, server_caps
    from edgegym.families.hetero_ml.simulator import duration_slots, iteration_slots

    e_hat = cluster.worker_res / cluster.cbar
    dens = jobs.weight / (ideal.workers * ideal.duration * e_hat[ideal.worker_type].sum(axis=1))
    order = np.lexsort((np.arange(jobs.num_jobs), -dens))
    H, R = cluster.capacity.shape
    U = np.zeros((H, R, max(1, tau - 1)))  # relative slots 1..tau-1 at indices 0..tau-2
    C = cluster.capacity
    total, acc = 0.0, []
    for j in order:
        m, p = int(ideal.worker_type[j]), int(ideal.ps_type[j])
        st = _window_max_table(U)
        e = cluster.worker_res[m]
        z = cluster.ps_res[p] if cluster.arch == "ps" else np.zeros(R)
        done = False
        for N in range(int(jobs.chunks[j]), 0, -1):
            for q in (True, False):
                d = duration_slots(float(jobs.work[j]), N, iteration_slots(cluster, jobs, j, m, p, N, q))
                nt = tau - d  # starts t = 1..tau-d (completion <= tau), indices 0..nt-1
                if nt < 1:
                    continue
                k = int(np.floor(np.log2(d)))
                wmax = np.maximum(st[k][:, :, :nt], st[k][:, :, d - (1 << k) : d - (1 << k) + nt])
                free = C[:, :, None] - wmax  # (H, R, nt)
                if q:
                    ok = np.any(np.all(free + 1e-9 >= (N * e + z)[None, :, None], axis=1), axis=0)
                else:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        caps = np.where(e[None, :, None] > 0, np.floor(free / np.where(e > 0, e, 1)[None, :, None] + 1e-9), np.inf).min(axis=1)
                    ok = np.minimum(caps, 1 << 30).sum(axis=0) >= N
                for t0 in np.flatnonzero(ok)[::-1]:  # latest start first
                    got = place(cluster, free[:, :, t0], m, p, N, colocate_only=q, spread_only=not q)
                    if got is None:
                        continue
                    f = np.outer(got[0], e) + np.outer(got[1], z)
                    U[:, :, t0 : t0 + d] += f[:, :, None]
                    total += float(jobs.weight[j])
                    acc.append(int(j))
                    done = True
                    break
                if done:
                    break
            if done:
                break
    del server_caps
    return total, acc


# ----------------------------------------------------------------------------------------------------------------
# env policies


class AOnlineHetero(Policy):
    """A_online in the exact per-arrival form (faithful, fixed alpha): returns a structured Placement each step."""

    mode = "faithful"
    markov = False  # it keeps its own schedule of the jobs it placed (rollout and DAgger need to know)

    def __init__(self, env, **overrides) -> None:
        super().__init__(env)
        self.overrides = overrides
        self.core: AOnlinePerArrival | None = None

    def reset(self, seed: int | None = None) -> None:
        self.core = None

    def act(self, obs):
        v = self.unwrapped.view()
        if self.core is None or v.step == 0:
            self.core = AOnlinePerArrival(v.cluster, AOnlineParams.from_view(v, **self.overrides), self.mode)
        return self.core.decide(v.jobs, v.step)


class AOnlineHeteroEager(AOnlineHetero):
    """A_online-eager-arrival: offsets tau_i, prices from the global ledger, commit at arrival."""

    mode = "eager"


class AOnlineNowCore:
    """The practical variant's decision rule (see :class:`AOnlineHeteroNow`), independent of the env.

    ``decide(jobs, j, now)``: windows [now, now + tau), tau from the job's shortest possible duration + 1, growing
    by a quarter (``completion_first``; doubling otherwise) up to ``horizon_cap``; in each,
    one ``A_maxweight`` step for job j alone (``mincost`` with prices delta = lambda^(beta/C) - 1 of the committed
    schedule, threshold s_w w_j, the ``params.tie_break`` predicate); the first window with an accepted candidate
    gives the placement."""

    #: build one sub-round state per decision (grown when a window outgrows it) instead of one per window; False
    #: rebuilds per window (the same decisions, slower: the tests' oracle)
    share_windows = True
    #: keep the window arrays across decisions (:class:`~edgegym.families.hetero_ml.mincost.SlotTables`: each slot's
    #: prices and minima computed once, updated where a placement commits); False builds a sub-round state per
    #: decision as ``share_windows`` says (the same decisions, slower: the tests' oracle)
    keep_tables = True

    def __init__(self, cluster: HeteroCluster, params: AOnlineParams) -> None:
        self.cluster, self.params = cluster, params
        self.lam = params.lam(cluster)
        self.ledger = Ledger(cluster.capacity)
        # the last decision's state (its offset is that decision's slot), with that decision's commit applied
        # (``A_maxweight`` commits the accepted candidate into it): while only :meth:`decide` commits to the ledger,
        # it equals a state built now from the ledger, so the next decision at the same slot starts from it
        self._last: SubRound | None = None
        self._tables: SlotTables | None = None

    def decide(self, jobs: HeteroJobs, j: int, now: int) -> Placement:
        if self.keep_tables and self.share_windows:
            return self._decide_kept(jobs, j, now)
        p = self.params
        # no schedule is shorter than E_j K_j mini-batch iterations of the fastest type (N <= D_j workers)
        it = float(np.min(jobs.v[j])) + (float(np.min(jobs.ps_update[j])) if self.cluster.arch == "ps" else 0.0)
        d_lb = int(np.ceil(float(jobs.epochs[j]) * float(jobs.batches[j]) * it - 1e-9))
        tau, seen = max(2, d_lb + 1), 0
        nested = p.tie_break == "completion_first"
        last, self._last = self._last, None
        built = last if self.share_windows and last is not None and last.offset == now else None
        while tau <= p.horizon_cap:
            if not self.share_windows or built is None or built.tau < tau:
                # the windows of one decision are nested prefixes of [now, ...): one state serves all windows up to
                # its length (prices, residuals, prefix sums and window minima of a prefix are the same numbers)
                size = _grown(tau, p.horizon_cap, nested) if self.share_windows else tau
                built = SubRound(self.cluster, size, now, self.lam, init_used=self.ledger.window(now, now + size))
            S = built.prefix(tau)
            # completion first: a candidate of the previous (nested) window would have been taken there
            got = a_maxweight(S, jobs, [j], p, min_completion=seen if nested else 0)
            seen = tau
            if got:
                pl = _to_placement(self.cluster, got[0][1], now)
                f = footprint(self.cluster, pl.worker_type, pl.ps_type, pl.workers, pl.ps)
                self.ledger.commit(f, pl.start, pl.start + pl.duration)
                self._last = built if self.share_windows else None
                return pl
            tau = tau + max(2, tau // 4) if nested else tau * 2
        raise RuntimeError(f"job {j} unschedulable before horizon_cap {p.horizon_cap}")

    def _decide_kept(self, jobs: HeteroJobs, j: int, now: int) -> Placement:
        """:meth:`decide` on the kept :class:`SlotTables` (the windows, searches and commit of the state-per-decision
        form, the same numbers)."""
        p = self.params
        if self._tables is None:
            self._tables = SlotTables(self.cluster, self.lam, self.ledger)
        it = float(np.min(jobs.v[j])) + (float(np.min(jobs.ps_update[j])) if self.cluster.arch == "ps" else 0.0)
        d_lb = int(np.ceil(float(jobs.epochs[j]) * float(jobs.batches[j]) * it - 1e-9))
        tau, seen = max(2, d_lb + 1), 0
        nested = p.tie_break == "completion_first"
        thr = p.weight_scale * float(jobs.weight[j])
        allow = _allow(p, self.cluster)
        arrays = job_arrays(self.cluster, jobs, j)
        while tau <= p.horizon_cap:
            S = self._tables.view(now, tau)
            cand = mincost(S, jobs, j, thr, p.tie_break, allow, p.max_workers, seen if nested else 0,
                           job_arrays=arrays)
            seen = tau
            if cand is not None:
                pl = _to_placement(self.cluster, cand, now)
                f = footprint(self.cluster, pl.worker_type, pl.ps_type, pl.workers, pl.ps)
                self.ledger.commit(f, pl.start, pl.start + pl.duration)
                self._tables.committed(np.flatnonzero(f.sum(axis=1) > 0), pl.start, pl.start + pl.duration)
                return pl
            tau = tau + max(2, tau // 4) if nested else tau * 2
        raise RuntimeError(f"job {j} unschedulable before horizon_cap {p.horizon_cap}")


def _grown(tau: int, cap: int, nested: bool) -> int:
    """The window length a shared sub-round state is built for: three growth steps past ``tau`` (within ``cap``;
    three beat two and four on HeteroML-v0, fewer rebuilds against larger states)."""
    for _ in range(3):
        nxt = tau + max(2, tau // 4) if nested else tau * 2
        if nxt > cap:
            break
        tau = nxt
    return tau


class AOnlineHeteroNow(Policy):
    """``aonline-hetero-now``: the practical variant of A_online, the family's default policy.

    Paper: R. Zhou, J. Pang, Q. Zhang, C. Wu, L. Jiao, Y. Zhong, Z. Li, "Online Scheduling Algorithm for
    Heterogeneous Distributed Machine Learning Jobs", IEEE Transactions on Cloud Computing 11(2), 2023.

    What it keeps of the paper: the per-job decision of A_maxweight (Sec. 4.2, Alg. 3) with its price function
    (eq. (11), delta = lambda^(beta/C) - 1, lambda = 2 T H R F + 1), the acceptance test u_j = w_j - min cost > 0
    (eq. (10)) and the minimum-cost subroutines A_mincost1/2 (Algs. 4-5, PS) and A_RAmincost1/2 (Algs. 6-7, RA),
    i.e. the choice of worker type, PS type, number of workers, co-location and start inside a window.

    Deviations from A_online (Alg. 1, Sec. 4.1) and A_dual (Alg. 2):

    * no batching and no start offset: a job is decided at its arrival, and its window starts at the arrival slot
      a_j, not at alpha tau_i of the round i with tau_i >= a_j (the faithful form starts every job no earlier
      than alpha tau_i, so c_j >= alpha max(tau(a_j), L_j + 1) + L_j: its ratio to the lower bound follows alpha);
    * no fresh sub-rounds: prices and residual capacities come from the whole committed schedule (as in the
      eager variant), not from a fresh, empty window per sub-round;
    * the window [a_j, a_j + tau) grows (from the job's shortest possible duration + 1, by a quarter each time)
      until the job is accepted, instead of alpha sub-rounds of length tau_i followed by the next round;
    * among the schedules that pass the acceptance test (cost < w_j), the one that completes first is taken
      (ties: the cheaper), where A_maxweight takes the cheapest (``tie_break: completion_first`` of
      :func:`~edgegym.families.hetero_ml.mincost.mincost`; the price still decides admission). With nested
      windows from a_j this equals one unbounded window: the growth only bounds the work;
    * the deviations of :mod:`this module <edgegym.agents.reference.hetero_ml>` (fixed F, cost units, tie-break,
      Alg. 4/5/7 fixes) apply unchanged.

    Guarantee: none. The 4 alpha competitive ratio (Thm. 5) rests on Hall et al.'s interval framework (the batch
    of round i completes inside [alpha tau_i, alpha tau_{i+1}), and each A_dual is run on an empty window); both
    are gone here, so no competitive ratio is claimed. What remains: every placement is feasible against the
    committed schedule (capacity in every slot, at most D_j workers, PS bandwidth (2i)) and starts no earlier than
    the job's arrival.
    """

    tie_break = "completion_first"
    markov = False  # its ledger holds its own past placements

    def __init__(self, env, **overrides) -> None:
        super().__init__(env)
        self.overrides = overrides
        self.core: AOnlineNowCore | None = None

    def reset(self, seed: int | None = None) -> None:
        self.core = None

    def act(self, obs):
        v = self.unwrapped.view()
        if self.core is None or v.step == 0:
            kw = {"tie_break": self.tie_break, **self.overrides}
            self.core = AOnlineNowCore(v.cluster, AOnlineParams.from_view(v, **kw))
        return self.core.decide(v.jobs, v.step, int(v.decision_time))


_FAM = ("HeteroML",)
POLICY_SPECS = (
    PolicySpec(
        "aonline-hetero",
        lambda env, seed: AOnlineHetero(env),
        _FAM,
        "Zhou et al.'s A_online (A_dual + A_maxweight + A_mincost*), faithful per-arrival form",
    ),
    PolicySpec(
        "aonline-hetero-now",
        lambda env, seed: AOnlineHeteroNow(env),
        _FAM,
        "practical A_online: A_maxweight's priced min-cost choice at each arrival, windows from the arrival "
        "(no alpha tau_i offset, no batching; no competitive guarantee)",
    ),
    PolicySpec(
        "aonline-hetero-eager",
        lambda env, seed: AOnlineHeteroEager(env),
        _FAM,
        "Zhou et al.'s A_online, eager variant (offset tau_i, ledger prices), commit at arrival",
    ),
)
