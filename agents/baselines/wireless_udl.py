"""Baselines of WirelessUDL: the paper's FIFO, DRF and OASiS (as this package reads them), FIFO's top-of-range
reading, a greedy minimum-estimated-cost rule, the all-in-one-site rule and ``random``.

Paper: Z. Han, R. Zhou, J. Pang, H. Tan, Y. Cao, "Online Scheduling Unbiased Distributed Learning over Wireless
Edge Networks", IEEE ICPADS, 2021 (Sec. V: "FIFO", "DRF", "OASiS [42]").

* ``fifo`` / ``fifo-max`` / ``drf`` — slot-level disciplines of the ``replan`` mode
  (:mod:`edgegym.families.wireless_udl.disciplines`), non-preemptive: FIFO draws N_i uniformly in
  ``[1, ⌊0.5·A_i(a_i)⌋]`` at arrival (A_i: the job's workers the resources free at its arrival hold; as jobs
  pile up A_i shrinks and late jobs starve), ``fifo-max`` takes ``⌊0.5·A_i(a_i)⌋``, and both serve a strict
  queue; DRF progressive-fills the waiting jobs every slot
  by smallest dominant share. All three place the PS at the highest-Q site where the job fits, workers Q-greedy.
* ``oasis`` — :class:`OASiS`: at arrival, the plan minimising latency cost + the exponential resource price
  ``p_r^k(t) = (1/ΣC^k)·(f_i(1)/4)·ρ^{G_r^k(t)/C_r^k}`` (ρ = ``price_ratio``, G = reserved amount) over worker
  counts and start slots; the PS at the cheapest site, workers into the cheapest sites. Bandwidth is ignored
  in the plan (as in the original), charged in execution.
* ``greedy-min-cost`` — the legal candidate row with the smallest estimated total cost: Okita's own estimates
  over a table that contains Okita's tentative worker count, i.e. Okita-A without keep/migrate/delay (not a
  naive baseline).
* ``one-site`` — trivial: PS and every worker on the site holding most of the job's data (among sites that
  can host a worker and the PS together), as many workers as fit there now (else the earliest slot the
  empty-site maximum fits); where no site can host both, the greedy row.
* ``random`` — a uniformly random legal candidate row.

Deviations (the paper under-specifies its baselines):
    * Baseline data is not "dispatched evenly at arrival" into a staging buffer: every policy shares the
      simulator's per-slot SPLIT + sampling + DTA execution (the data moved per job is the same in total).
    * FIFO's PS goes to the highest-Q site for which the worker fill succeeds (not merely where the PS fits).
    * DRF places workers one at a time in Q order during progressive filling (not a Q-greedy re-placement).
    * OASiS uses a constant worker count over its window (no per-slot DP over worker counts), start slots up to
      ``max_delay`` (10) after arrival, and a price normalised by the arriving job's own f_i(1) (the original's
      L^k needs every job's f in advance).
"""

from __future__ import annotations

import numpy as np
from edgegym.agents.policy import NoOpPolicy, Policy, PolicySpec, RandomPolicy

from edgegym.families.wireless_udl._kernels import max_workers
from edgegym.families.wireless_udl.candidates import earliest_fit
from edgegym.families.wireless_udl.costs import latency_cost
from edgegym.families.wireless_udl.simulator import EPS, Plan

__all__ = ["POLICY_SPECS", "GreedyMinCost", "OASiS", "OneSite"]

FAMILY = ("WirelessUDL",)


def _f(v, latency):
    p = v.cost_params
    return latency_cost(v.kind, p[0], p[1], p[2], p[3], p[4], latency, v.exp_rate)


def _demand(v, y, ps):
    dem = np.outer(y, v.m)
    dem[ps] += v.n
    return dem


class GreedyMinCost(Policy):
    """The legal candidate with the smallest estimated total cost (ties: lower index)."""

    def act(self, obs):
        c = self.unwrapped.view().cand
        return int(np.argmin(np.where(c.mask, c.total, np.inf)))


class OneSite(Policy):
    """Every worker and the PS on the site holding most of the job's data (trivial all-in-one-place rule)."""

    def act(self, obs):
        v = self.unwrapped.view()
        D = int(v.data.sum())
        R = v.num_sites
        room = np.array([max_workers(v.cap[r], v.m, v.n, True) for r in range(R)])
        if not (room >= 1).any():  # no site holds a worker and the PS together: the greedy row instead
            c = v.cand
            return int(np.argmin(np.where(c.mask, c.total, np.inf)))
        r = int(np.argmax(np.where(room >= 1, v.data, -1)))  # most data among sites that can host the job
        n_emp = max(int(min(room[r], -(-D // v.kappa))), 1)
        cal = v.calendar
        for N in range(n_emp, 0, -1):
            win = -(-D // (v.kappa * N))
            if v.t + win > cal.shape[0]:
                continue
            y = np.zeros(R, np.int64)
            y[r] = N
            if np.all(_demand(v, y, r) <= cal[v.t:v.t + win].min(axis=0) + EPS):
                return Plan(job=v.job, start=v.t, y=y, ps=r)
        y = np.zeros(R, np.int64)
        y[r] = n_emp
        win = -(-D // (v.kappa * n_emp))
        s = earliest_fit(cal, _demand(v, y, r), v.t, win)
        if s < 0:
            c = v.cand
            return int(np.argmin(np.where(c.mask, c.total, np.inf)))
        return Plan(job=v.job, start=s, y=y, ps=r)


class OASiS(Policy):
    """OASiS (Bao et al., INFOCOM 2018) adapted to this model at arrival (see the deviations)."""

    def __init__(self, env, price_ratio: float = 100.0, max_delay: int = 10) -> None:
        super().__init__(env)
        self.ratio = float(price_ratio)
        self.max_delay = int(max_delay)

    def act(self, obs):
        v = self.unwrapped.view()
        cal, cap, t = v.calendar, v.cap, v.t
        R = v.num_sites
        D = int(v.data.sum())
        n_max = int(v.cand.n_max)
        base = float(_f(v, 1)) / 4.0 / np.maximum(cap.sum(axis=0), 1e-9)  # (K,)
        Ls = sorted({-(-D // (v.kappa * N)) for N in range(1, n_max + 1)})
        horizon = min(cal.shape[0], t + self.max_delay + max(Ls) + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            util = np.where(cap > 0, (cap - cal[t:horizon]) / cap, 0.0)
        price = base * self.ratio ** util  # (h, R, K)
        pre = np.concatenate([np.zeros((1, R, cap.shape[1])), np.cumsum(price, axis=0)])
        best = (np.inf, None)
        for win in Ls:
            N = -(-D // (v.kappa * win))
            for s in range(t, min(t + self.max_delay, horizon - win) + 1):
                lat = float(_f(v, s + win - 1 - v.arrival + v.latency_offset))
                if lat >= best[0]:  # prices are positive: no later start of this window can win
                    break
                P = pre[s - t + win] - pre[s - t]  # (R, K) price summed over the window
                U = cal[s:s + win].min(axis=0)
                ps_fit = np.all(U >= v.n - EPS, axis=1)
                if not ps_fit.any():
                    continue
                ps_price = P @ v.n
                rt = int(np.flatnonzero(ps_fit)[np.argmin(ps_price[ps_fit])])
                w = P @ v.m
                y = np.zeros(R, np.int64)
                rem = N
                for r in np.argsort(w, kind="stable"):
                    a = min(max_workers(U[r], v.m, v.n, r == rt), rem)
                    y[r] = a
                    rem -= a
                    if rem == 0:
                        break
                if rem > 0:
                    continue
                cost = lat + float(w @ y + ps_price[rt])
                if cost < best[0]:
                    best = (cost, Plan(job=v.job, start=s, y=y, ps=rt))
        if best[1] is None:  # nothing within max_delay: the greedy candidate
            c = v.cand
            return int(np.argmin(np.where(c.mask, c.total, np.inf)))
        return best[1]


POLICY_SPECS = (
    PolicySpec("fifo", lambda env, seed: NoOpPolicy(env), FAMILY,
               "FIFO (Hadoop/Spark): strict queue, fixed N_i ~ U[1, 0.5·A_i] of the free resources, Q-greedy placement",
               {"env": {"mode": "replan", "discipline": "fifo"}}),
    PolicySpec("fifo-max", lambda env, seed: NoOpPolicy(env), FAMILY,
               "FIFO with N_i = ⌊0.5·A_i⌋, the top of FIFO's range (the other reading of the paper's FIFO)",
               {"env": {"mode": "replan", "discipline": "fifo", "fifo_workers": "max"}}),
    PolicySpec("drf", lambda env, seed: NoOpPolicy(env), FAMILY,
               "DRF: per-slot progressive filling by dominant share, fixed once started",
               {"env": {"mode": "replan", "discipline": "drf"}}),
    PolicySpec("oasis", lambda env, seed: OASiS(env), FAMILY,
               "OASiS (INFOCOM'18) at arrival: latency + exponential resource prices, bandwidth ignored",
               {"env": {"mode": "commit"}}),
    PolicySpec("greedy-min-cost", lambda env, seed: GreedyMinCost(env), FAMILY,
               "the legal candidate plan with the smallest estimated total cost", {"env": {"mode": "commit"}}),
    PolicySpec("one-site", lambda env, seed: OneSite(env), FAMILY,
               "trivial: PS and all workers on the site holding most of the job's data",
               {"env": {"mode": "commit"}}),
    PolicySpec("random", lambda env, seed: RandomPolicy(env, seed), FAMILY,
               "uniformly random legal candidate plan", {"env": {"mode": "commit"}}),
)
