"""Slot-level disciplines of the ``replan`` mode: chosen by preset ``env.discipline``.

A discipline is called by :meth:`.simulator.Simulator.run_slot` once per slot and returns the slot's
allocations ``[(job, y (R,), ps), ...]``; the simulator executes them (SPLIT, sampling, DTA, costs).

* :class:`OkitaDiscipline` — the paper's Alg 1 (preemptive: every active job re-planned every slot).
* :class:`FIFODiscipline` — FIFO (Hadoop/Spark): strict arrival order, no backfilling, fixed N_i drawn at
  arrival in ``[1, 0.5·A_i(a_i)]``, placement fixed until completion (non-preemptive).
* :class:`DRFDiscipline` — DRF: every slot, progressive filling (smallest dominant share first, one worker
  at a time) over the waiting jobs on the free resources; started jobs keep N and placement.
"""

from __future__ import annotations

import numpy as np

from . import _kernels as kn
from .simulator import EPS, Simulator, job_latency_cost, tentative

__all__ = ["DISCIPLINES", "DRFDiscipline", "FIFODiscipline", "OkitaDiscipline", "WORKER_RULES", "make_discipline",
           "priority", "rule_workers"]

#: the worker rules of the replan mode's per-arrival action (``env.replan_workers``), by action index: the
#: arriving job's worker count in every slot, relative to Okita's tentative optimum N* of that slot (the nearest
#: count whose tentative plan has a PS site, the smaller on a tie)
WORKER_RULES = ("okita", "one", "half", "double")


class Discipline:
    """Base: no allocation. Hooks: ``on_arrival``, ``on_complete``, ``allocate``."""

    name = "none"

    def __init__(self, rng: np.random.Generator | None = None, **_):
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def on_arrival(self, sim: Simulator, i: int) -> None:
        pass

    def on_complete(self, sim: Simulator, i: int) -> None:
        pass

    def allocate(self, sim: Simulator, t: int) -> list:
        return []


# ============================================================================================ Okita
def priority(inst, active: np.ndarray, M: np.ndarray, t: int, alpha=(1.0, 1.0), piecewise="rec") -> np.ndarray:
    """O_i(t) (eq. 4; piecewise jobs by the repaired priority) for the jobs ``active`` (indices)."""
    a = inst.arrival[active]
    pw = inst.kind[active] == 2
    first = np.zeros(active.size)
    w = inst.tau[active] * (t - a)
    if (~pw).any():
        W = w[~pw].max()
        first[~pw] = w[~pw] / W if W > 0 else 0.0
    if pw.any():
        c = inst.c[active][pw]
        ta = (t - a[pw]).astype(float)
        if piecewise == "rec":
            p = np.where(ta + 1 < c, (ta + 1) / c, 0.0)
            P = p.max()
            first[pw] = p / P if P > 0 else 0.0
        else:  # the paper's literal formula (gives every job the same first term)
            num = ta - c
            den = num.max()
            with np.errstate(divide="ignore", invalid="ignore"):
                first[pw] = np.minimum(np.where(den != 0, num / den, 0.0), 0.0)
    D = inst.data[active].sum(axis=1)
    return alpha[0] * first - alpha[1] * M[active].sum(axis=1) / D


def rule_workers(tab: dict, rule: int) -> int:
    """The worker count of ``WORKER_RULES[rule]`` on a tentative table ``tab``: N* (``tab["best"]``) for rule 0,
    else the feasible count nearest to the rule's target (1, N*//2 at least 1, 2·N*), the smaller on a tie."""
    best = tab["best"]
    if rule == 0:
        return best
    total = tab["total"]
    target = (best, 1, max(1, best // 2), 2 * best)[rule]
    feas = np.flatnonzero(np.isfinite(total))
    return int(feas[np.argmin(np.abs(feas - target))]) if feas.size else best


class OkitaDiscipline(Discipline):
    """Okita (Alg 1) as a slot hook: tentative optimum per job under full capacities, priority
    order, then keep / migrate / delay on conflicts. The per-N bandwidth estimates are cached per job and
    recomputed only when the job's data changed (its latency term is re-scored every slot)."""

    name = "okita"

    def __init__(self, rng=None, alpha=(1.0, 1.0), delay_rule="max", priority_piecewise="rec", **_):
        super().__init__(rng)
        self.alpha = tuple(alpha)
        self.delay_rule = delay_rule
        self.piecewise = priority_piecewise
        self.cache: dict[int, tuple[int, dict]] = {}
        self.decisions = {"keep": 0, "migrate": 0, "delay": 0}
        self.rules: dict[int, int] = {}  # job -> index in WORKER_RULES (absent: 0, Okita's own N*)

    def on_complete(self, sim, i):
        self.cache.pop(i, None)
        self.rules.pop(i, None)

    def set_rule(self, i: int, rule: int) -> None:
        """Job ``i`` runs with worker rule ``WORKER_RULES[rule]`` from now on (0: Okita's own choice)."""
        if not 0 <= rule < len(WORKER_RULES):
            raise ValueError(f"worker rule must be in [0, {len(WORKER_RULES)}), got {rule}")
        if rule:
            self.rules[int(i)] = int(rule)
        else:
            self.rules.pop(int(i), None)

    def _workers(self, tab: dict, i: int) -> int:
        """Job ``i``'s worker count this slot: N* (``tab["best"]``) under its rule (see ``WORKER_RULES``)."""
        return rule_workers(tab, self.rules.get(int(i), 0))

    def table(self, sim: Simulator, i: int, t: int) -> dict:
        """Job ``i``'s tentative table at slot ``t`` (:func:`~.simulator.tentative`), the one ``allocate`` reads
        (and caches: asking for it does not change any later decision)."""
        return self._tab(sim, i, t)

    def _tab(self, sim: Simulator, i: int, t: int) -> dict:
        key = int(sim.M[i].sum())
        hit = self.cache.get(i)
        if hit is None or hit[0] != key:
            tab = tentative(sim.inst, sim.static, i, sim.inst.cap, sim.M[i], t, sim.offset, sim.prop)
            self.cache[i] = (key, tab)
            return tab
        tab = hit[1]
        lat = job_latency_cost(sim.inst, i, t + tab["l"] - 1 - sim.inst.arrival[i] + sim.offset)
        total = tab["param"] + tab["transfer"] + lat
        total[0] = np.inf
        total[tab["ps"] < 0] = np.inf
        tab = {**tab, "latency": lat, "total": total, "best": int(np.argmin(total))}
        self.cache[i] = (key, tab)
        return tab

    def allocate(self, sim: Simulator, t: int) -> list:
        inst, st = sim.inst, sim.static
        active = np.flatnonzero(sim.status == 1)
        if active.size == 0:
            return []
        f = lambda i, L: float(job_latency_cost(inst, i, L - inst.arrival[i] + sim.offset))  # noqa: E731
        plans = {}
        for i in active:
            tab = self._tab(sim, i, t)
            N = self._workers(tab, i) if self.rules else tab["best"]
            win = int(tab["l"][N])
            ps = int(tab["ps"][N])
            order, _ = kn.site_order(inst.cap, inst.cap, st.qbar, sim.M[i], inst.data[i], *st.beta)
            y = kn.fill(inst.cap, order, inst.m[i], inst.n[i], N, ps)
            bc = float(tab["param"][N] + tab["transfer"][N])
            plans[i] = (N, win, y, ps, bc)
        prio = priority(inst, active, sim.M, t, self.alpha, self.piecewise)
        seq = active[np.lexsort((active, inst.arrival[active], -prio))]
        Av = inst.cap.copy()
        placed: list[tuple[int, np.ndarray, int, int]] = []  # (job, y, ps, l*)
        out = []
        for i in seq:
            N, win, y, ps, bc = plans[i]
            dem = sim.demand(i, y, ps)
            if np.any(Av - dem < -EPS):  # conflict (Alg 1 line 14)
                order, _ = kn.site_order(Av, inst.cap, st.qbar, sim.M[i], inst.data[i], *st.beta)
                unit, y1, ps1 = kn.pa(Av, order, inst.q, inst.m[i], inst.n[i], N, st.tie_le)
                if ps1 >= 0:
                    c = kn.window_transfer(y1, sim.M[i], inst.data[i], int(inst.kappa[i]), win, order, inst.q,
                                           st.src_order, sim.prop, inst.cap, st.qbar, st.beta)
                    bc1 = win * inst.param_mb[i] * unit + inst.chunk_mb[i] * c
                    cost1 = (sim.transfer[i] + sim.param[i]) + bc1 + f(i, t + win - 1)
                else:
                    cost1 = np.inf
                short = np.any(Av < dem - EPS, axis=1)
                blockers = [lj for (j, yj, psj, lj) in placed if (yj[short] > 0).any() or short[psj]]
                if self.delay_rule == "one" or not blockers:
                    delta = 1
                else:
                    delta = max(blockers) if self.delay_rule == "max" else min(blockers)
                cost_i = (sim.transfer[i] + sim.param[i]) + bc + f(i, t + win - 1)
                cost2 = cost_i - f(i, t + win - 1) + f(i, t + delta + win - 1)
                if cost1 > cost2:
                    self.decisions["delay"] += 1
                    continue
                self.decisions["migrate"] += 1
                y, ps = y1, int(ps1)
                dem = sim.demand(i, y, ps)
            else:
                self.decisions["keep"] += 1
            Av -= dem
            placed.append((i, y, ps, win))
            out.append((i, y, ps))
        return out


# ============================================================================================ FIFO / DRF
class _FixedPlans(Discipline):
    """Shared machinery of the non-preemptive baselines: running jobs keep ``(y, ps)`` until done."""

    def __init__(self, rng=None, **_):
        super().__init__(rng)
        self.running: dict[int, tuple[np.ndarray, int]] = {}

    def on_complete(self, sim, i):
        self.running.pop(i, None)

    def free(self, sim) -> np.ndarray:
        U = sim.inst.cap.copy()
        for i, (y, ps) in self.running.items():
            U -= sim.demand(i, y, ps)
        return U

    def n_max(self, sim, i) -> int:
        return int(min(-(-int(sim.M[i].sum()) // int(sim.inst.kappa[i])), sim.static.n_cap[i]))

    def place(self, sim, i, U, N):
        """Q-greedy placement of N workers + PS: PS at the highest-Q site where it and the workers fit."""
        inst, st = sim.inst, sim.static
        order, _ = kn.site_order(U, inst.cap, st.qbar, sim.M[i], inst.data[i], *st.beta)
        for rt in order:
            if np.any(U[rt] < inst.n[i] - EPS):
                continue
            y = kn.fill(U, order, inst.m[i], inst.n[i], N, rt)
            if y[0] >= 0:
                return y, int(rt)
        return None

    def allocations(self):
        return [(i, y, ps) for i, (y, ps) in self.running.items()]


class FIFODiscipline(_FixedPlans):
    """FIFO: at arrival N_i ~ U{1..max(1, ⌊0.5·A_i(a_i)⌋)} (``workers="uniform"``) or the top of that range,
    ⌊0.5·A_i(a_i)⌋ (``workers="max"``), where A_i(a_i) is the number of job-i workers the resources *free at the
    arrival slot* hold (capped by ⌈M_i/κ_i⌉ and the empty cluster's room); strict queue, no backfilling. As jobs
    pile up, A_i shrinks, so later jobs get few workers (the uniform draw's mean is about A_i/4)."""

    name = "fifo"

    def __init__(self, rng=None, workers="uniform", **kw):
        super().__init__(rng)
        self.queue: list[int] = []
        self.N: dict[int, int] = {}
        self.workers = workers

    def on_arrival(self, sim, i):
        inst = sim.inst
        U = self.free(sim)
        A = sum(min(kn.max_workers(U[r], inst.m[i], inst.n[i], False), kn.BIG) for r in range(inst.num_sites))
        hi = max(1, int(0.5 * min(A, 10**9)))
        n = hi if self.workers == "max" else self.rng.integers(1, hi + 1)
        self.N[i] = int(min(n, self.n_max(sim, i)))
        self.queue.append(i)

    def allocate(self, sim, t):
        U = self.free(sim)
        while self.queue:
            i = self.queue[0]
            got = self.place(sim, i, U, self.N[i])
            if got is None:
                break
            y, ps = got
            U -= sim.demand(i, y, ps)
            self.running[i] = got
            self.queue.pop(0)
        return self.allocations()


class DRFDiscipline(_FixedPlans):
    """DRF: per slot, progressive filling over waiting jobs by smallest dominant share."""

    name = "drf"

    def __init__(self, rng=None, **kw):
        super().__init__(rng)
        self.waiting: list[int] = []

    def on_arrival(self, sim, i):
        self.waiting.append(i)

    def allocate(self, sim, t):
        inst, st = sim.inst, sim.static
        if self.waiting:
            U = self.free(sim)
            total = inst.cap.sum(axis=0)
            total = np.where(total > 0, total, 1.0)
            R = inst.num_sites
            N = {j: 0 for j in self.waiting}
            Y = {j: np.zeros(R, np.int64) for j in self.waiting}
            PS = {j: -1 for j in self.waiting}
            orders = {j: kn.site_order(U, inst.cap, st.qbar, sim.M[j], inst.data[j], *st.beta)[0]
                      for j in self.waiting}
            cands = list(self.waiting)
            while cands:
                share = [float(np.max((N[j] * inst.m[j] + (inst.n[j] if N[j] else 0)) / total)) for j in cands]
                k = min(range(len(cands)), key=lambda x: (share[x], inst.arrival[cands[x]], cands[x]))
                j = cands[k]
                if N[j] >= self.n_max(sim, j):
                    cands.pop(k)
                    continue
                m, n = inst.m[j], inst.n[j]
                placed = False
                if N[j] == 0:
                    for rt in orders[j]:
                        if np.any(U[rt] < n - EPS):
                            continue
                        U[rt] -= n
                        for r in orders[j]:
                            if np.all(U[r] >= m - EPS):
                                U[r] -= m
                                Y[j][r] += 1
                                PS[j] = int(rt)
                                placed = True
                                break
                        if placed:
                            break
                        U[rt] += n
                else:
                    for r in orders[j]:
                        if np.all(U[r] >= m - EPS):
                            U[r] -= m
                            Y[j][r] += 1
                            placed = True
                            break
                if not placed:
                    cands.pop(k)
                    continue
                N[j] += 1
            for j in list(self.waiting):
                if N[j] >= 1:
                    self.running[j] = (Y[j], PS[j])
                    self.waiting.remove(j)
        return self.allocations()


DISCIPLINES = {"okita": OkitaDiscipline, "fifo": FIFODiscipline, "drf": DRFDiscipline}


def make_discipline(name: str, rng: np.random.Generator, okita_cfg=None, fifo_workers: str = "uniform") -> Discipline:
    """The discipline called ``name`` (``okita_cfg``: the preset's ``okita`` section; ``fifo_workers``: FIFO's
    worker-count reading, ``uniform`` or ``max``)."""
    if name == "okita" and okita_cfg is not None:
        return OkitaDiscipline(rng, alpha=okita_cfg.alpha, delay_rule=okita_cfg.delay_rule,
                               priority_piecewise=okita_cfg.priority_piecewise)
    if name == "fifo":
        return FIFODiscipline(rng, workers=fifo_workers)
    return DISCIPLINES[name](rng)
