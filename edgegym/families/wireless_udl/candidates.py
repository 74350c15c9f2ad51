"""Candidate plans of the commit mode: the Discrete action's rows; numpy only.

For the pending job ``i`` at its arrival slot ``t``, ``G`` worker counts ``𝒩_i`` (a geometric grid over
``[1, N_max]`` that always contains Okita's tentative optimum ``N_tent`` under full capacities and the
same enumeration's optimum ``N_now`` under the free resources of slot ``t``), each in two start modes:

* ``now`` (action ``2j``, Okita's keep / *migrate*): start at ``t``; the tentative placement (PA under C)
  if it fits the free resources of the whole window, else PA under those free resources;
* ``wait`` (action ``2j + 1``, Okita's *delay*): the tentative placement at the earliest start ``≥ t``
  at which it fits the calendar for its whole window.

Costs are Okita's estimates (OSF: PA's ``l·π·Σ q y`` + DTA on the window workload, or under ``proportional``
sampling the slot-by-slot transfer of the plan, and the latency cost of the window's end); the exact cost of the
committed plan is what the reward charges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernels as kn
from .simulator import EPS, Plan, Simulator, job_latency_cost, tentative

__all__ = ["Candidates", "build_candidates", "earliest_fit", "worker_grid"]

NOW, WAIT = 0, 1


@dataclass(frozen=True, slots=True)
class Candidates:
    """The candidate table (row ``a`` = action ``a``; ``mask`` false for padding and infeasible rows)."""

    mode: np.ndarray  # (C,) 0 now, 1 wait
    N: np.ndarray  # (C,) workers
    win: np.ndarray  # (C,) window slots
    start: np.ndarray  # (C,) start slot (-1 infeasible)
    ps: np.ndarray  # (C,) PS site (-1 infeasible)
    y: np.ndarray  # (C, R) workers per site
    transfer: np.ndarray  # (C,) estimated transfer cost
    param: np.ndarray  # (C,) estimated parameter-exchange cost
    latency: np.ndarray  # (C,) latency cost at the window's end
    total: np.ndarray  # (C,) sum of the three
    peak: np.ndarray  # (C,) peak utilisation of the used sites' resources after commit
    mask: np.ndarray  # (C,) bool legal
    n_tent: int
    n_now: int
    n_max: int

    def plan(self, job: int, a: int) -> Plan:
        """The :class:`Plan` of row ``a``."""
        return Plan(job=job, start=int(self.start[a]), y=self.y[a].copy(), ps=int(self.ps[a]))


def worker_grid(n_max: int, G: int, must: tuple[int, ...]) -> np.ndarray:
    """G worker counts in ``[1, n_max]``: the ``must`` values plus a geometric grid, ascending; padded by
    repeating the largest (padding rows are masked)."""
    must_set = sorted({int(x) for x in must if 1 <= x <= n_max})
    grid = np.unique(np.round(np.geomspace(1, n_max, num=max(G, 2))).astype(np.int64)) if n_max > 1 else np.array([1])
    rest = [int(x) for x in grid if x not in must_set]
    k = G - len(must_set)
    if k > 0 and len(rest) > k:
        idx = np.unique(np.round(np.linspace(0, len(rest) - 1, k)).astype(int))
        rest = [rest[j] for j in idx]
    vals = sorted(set(must_set + rest[: max(k, 0)]))[:G]
    return np.asarray(vals, dtype=np.int64)


def earliest_fit(cal: np.ndarray, dem: np.ndarray, t: int, win: int, horizon: int | None = None) -> int:
    """Earliest ``s ≥ t`` with ``dem ≤ cal[s']`` for all ``s' ∈ [s, s + l)`` (-1 if none in the calendar)."""
    used = np.flatnonzero((dem > 0).any(axis=1)).astype(np.int64)
    end = cal.shape[0] if horizon is None else min(cal.shape[0], horizon)
    if t + win > end:
        return -1
    if used.size == 0:
        return t
    return int(kn.earliest_fit(cal, np.ascontiguousarray(dem, dtype=float), used, int(t), int(win), int(end)))


def _peak(dem, U, cap):
    """Peak utilisation, after adding ``dem``, over the (site, resource) pairs ``dem`` uses."""
    used = (dem > 0) & (cap > 0)
    if not used.any():
        return 0.0
    return float(min(max(((cap[used] - U[used] + dem[used]) / cap[used]).max(), 0.0), 1.0))


def build_candidates(sim: Simulator, i: int, G: int, wait_max: int) -> Candidates:
    """The 2·G candidate plans of pending job ``i`` at slot ``sim.t``."""
    inst, st = sim.inst, sim.static
    t, R = sim.t, inst.num_sites
    M = sim.M[i]
    a_i = int(inst.arrival[i])
    tab = tentative(inst, st, i, inst.cap, M, t, sim.offset, sim.prop)
    n_tent = tab["best"]
    tab_u = tentative(inst, st, i, sim.cal[t], M, t, sim.offset, sim.prop)
    n_now = tab_u["best"] or n_tent
    Ns = worker_grid(tab["n_max"], G, (n_tent, n_now))
    C = 2 * G
    mode = np.tile(np.array([NOW, WAIT]), G)
    Nc = np.zeros(C, np.int64)
    lc = np.zeros(C, np.int64)
    start = np.full(C, -1, np.int64)
    ps = np.full(C, -1, np.int64)
    y = np.zeros((C, R), np.int64)
    transfer = np.zeros(C)
    param = np.zeros(C)
    latency = np.zeros(C)
    peak = np.zeros(C)
    mask = np.zeros(C, bool)
    order_c, _ = kn.site_order(inst.cap, inst.cap, st.qbar, M, inst.data[i], *st.beta)
    kap = int(inst.kappa[i])
    for j in range(G):
        N = int(Ns[min(j, Ns.size - 1)])
        real = j < Ns.size
        win = int(tab["l"][N])
        psC = int(tab["ps"][N])
        for r in (2 * j, 2 * j + 1):
            Nc[r], lc[r] = N, win
        if psC < 0 or not real:
            continue
        yC = kn.fill(inst.cap, order_c, inst.m[i], inst.n[i], N, psC)
        demC = sim.demand(i, yC, psC)
        # ---- now
        r = 2 * j
        if t + win <= sim.calendar_len:
            Uw = sim.free_window(t, win)
            if np.all(demC <= Uw + EPS):
                y[r], ps[r] = yC, psC
                param[r], transfer[r] = tab["param"][N], tab["transfer"][N]
                ok = True
            else:
                order_u, _ = kn.site_order(Uw, inst.cap, st.qbar, M, inst.data[i], *st.beta)
                unit, y1, ps1 = kn.pa(Uw, order_u, inst.q, inst.m[i], inst.n[i], N, st.tie_le)
                ok = ps1 >= 0
                if ok:
                    c = kn.window_transfer(y1, M, inst.data[i], kap, win, order_u, inst.q, st.src_order, sim.prop,
                                           inst.cap, st.qbar, st.beta)
                    y[r], ps[r] = y1, ps1
                    param[r] = win * inst.param_mb[i] * unit
                    transfer[r] = inst.chunk_mb[i] * c
            if ok:
                start[r] = t
                latency[r] = job_latency_cost(inst, i, t + win - 1 - a_i + sim.offset)
                peak[r] = _peak(sim.demand(i, y[r], int(ps[r])), Uw, inst.cap)
                mask[r] = True
        # ---- wait
        r = 2 * j + 1
        s = earliest_fit(sim.cal, demC, t, win)
        if s >= 0:
            y[r], ps[r], start[r] = yC, psC, s
            param[r], transfer[r] = tab["param"][N], tab["transfer"][N]
            latency[r] = job_latency_cost(inst, i, s + win - 1 - a_i + sim.offset)
            peak[r] = _peak(demC, sim.free_window(s, win), inst.cap)
            mask[r] = True
    late = mask & (mode == WAIT) & (start - t > wait_max)
    if (mask & ~late).any():
        mask &= ~late
    total = np.where(mask, transfer + param + latency, np.inf)
    return Candidates(mode=mode, N=Nc, win=lc, start=start, ps=ps, y=y, transfer=transfer, param=param,
                      latency=latency, total=total, peak=peak, mask=mask, n_tent=int(n_tent), n_now=int(n_now),
                      n_max=int(tab["n_max"]))
