"""The offline bound of ``WirelessUDL``: a per-job bound that ignores the other jobs, and the offline MILP on
small instances.

Per-job bound. Job i (D_i^r chunks at site r, κ_i chunks per worker per slot, chunk size δ_i, parameter size
π_i) pays its latency cost f_i(L) and its bandwidth cost. Let ``qmin_r = min_{s ≠ r} q^{rs}``, the cheapest link
out of site r. In a slot where its PS is at site p, a chunk of origin r

* trained at a site r' ≠ r pays the transfer δ_i·q^{rr'} ≥ δ_i·qmin_r;
* trained at its own site r ≠ p: its worker pays π_i·q^{rp} for the slot and trains at most κ_i chunks in it,
  so the chunk's share is at least (π_i/κ_i)·qmin_r;
* trained at r = p (where it lies, next to the PS) is free.

So every chunk pays at least ``u_i·qmin_r`` (``u_i = min(δ_i, π_i/κ_i)``) unless it is trained at its own site
in a slot in which the PS is there too. A job that finishes with latency L = t_last − a_i + offset ran in at most
n = L − offset + 1 slots, so its PS was at most n times at a site; a slot with the PS at p frees at most
κ_i·Y_p chunks of origin p (Y_p: the most job-i workers site p holds beside the PS, on the empty site). The most
a job can save in n slots, V_i(n), is therefore the best choice of n (site, slot) pairs, each worth qmin_p times
the chunks it frees (a concave allocation: the n largest of the per-slot savings). Its bandwidth cost is at least
``B_i(n) = u_i·(Σ_r D_i^r qmin_r − V_i(n))``, and it cannot finish in n slots at all when
D_i > κ_i·n·Σ_r Y'_r (Y'_r: the most workers site r holds without a PS). Hence

    cost_i ≥ LB_i = min over feasible L ≥ offset of f_i(L) + B_i(L − offset + 1),

evaluated on every L up to the point where B_i stops falling (f_i is monotone in L, so beyond it the infimum is
at that point or in the limit). A job cut off at the run-off cap (replan mode) pays f_i at the cap plus δ_i·max q
for every chunk left, at least f_i(L_cap) + B_i at the cap, which is also in the minimum. The bound is Σ_i LB_i:
the capacity the other jobs take, the sampling rule and the plan's shape can only add to a job's cost.

MILP part. On instances of at most ``milp_max_jobs`` jobs, the dual bound of the offline MILP of program (2) of
Han et al. (:func:`edgegym.families.wireless_udl.offline.offline_optimum`, preemptive and capacity-aware) is
computed too, within ``time_limit_s``; the bound is the larger of the two.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...core.bounds import Bound
from .costs import latency_cost
from .instance import Instance

__all__ = ["MILP_MAX_JOBS", "job_bounds", "offline_bound"]

#: the MILP part runs on instances of at most this many jobs
MILP_MAX_JOBS = 8
_FAR = 1e6  # a latency standing for "in the limit" (the latency costs are monotone)


def _site_workers(inst: Instance, i: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Y_ps, Y)`` (R,): the most job-i workers each empty site holds with the PS there, and without it."""
    from ._kernels import max_workers

    m, n = np.asarray(inst.m[i], float), np.asarray(inst.n[i], float)
    y_ps = np.array([max_workers(inst.cap[r], m, n, True) for r in range(inst.num_sites)], dtype=np.int64)
    y = np.array([max_workers(inst.cap[r], m, n, False) for r in range(inst.num_sites)], dtype=np.int64)
    return y_ps, y


def _f(inst: Instance, i: int, L) -> np.ndarray:
    return np.asarray(latency_cost(inst.kind[i], inst.tau[i], inst.b[i], inst.tau1[i], inst.tau2[i], inst.c[i],
                                   np.asarray(L, dtype=float), inst.exp_rate), dtype=float)


def job_bounds(inst: Instance, latency_offset: int = 1, cap_slot: int | None = None) -> np.ndarray:
    """(n_jobs,) LB_i of the module docstring for every job (``cap_slot``: the replan mode's run-off cap, the slot
    at which an unfinished job is cut off; ``None``: no cap)."""
    R = inst.num_sites
    q = np.asarray(inst.q, dtype=float)
    qmin = np.where(np.eye(R, dtype=bool), np.inf, q).min(axis=1) if R > 1 else np.zeros(R)
    qmin = np.maximum(qmin, 0.0)
    off = int(latency_offset)
    out = np.zeros(inst.num_jobs)
    for i in range(inst.num_jobs):
        D_r = np.asarray(inst.data[i], dtype=np.int64)
        kap = int(inst.kappa[i])
        unit = min(float(inst.chunk_mb[i]), float(inst.param_mb[i]) / kap)
        y_ps, y = _site_workers(inst, i)
        total = float(np.dot(D_r, qmin))  # chunk·price if no chunk were free
        gains = []  # per-slot savings (chunk·price): whole slots of κ·Y_p chunks, then the remainder
        for p in range(R):
            per = kap * int(y_ps[p])
            if per <= 0 or D_r[p] <= 0 or qmin[p] <= 0:
                continue
            k, rest = divmod(int(D_r[p]), per)
            gains += [per * qmin[p]] * k + ([rest * qmin[p]] if rest else [])
        saved = np.concatenate(([0.0], np.cumsum(np.sort(np.asarray(gains, dtype=float))[::-1])))

        def bw(n, saved=saved, total=total, unit=unit):  # B_i(n)
            return unit * np.maximum(total - saved[np.minimum(n, saved.size - 1)], 0.0)

        wmax = int(y.sum())
        best = math.inf
        if wmax > 0:
            n_min = -(-int(D_r.sum()) // (kap * wmax))
            n = np.arange(max(n_min, 1), max(n_min, len(gains), 1) + 1)  # B_i is constant from len(gains) on
            best = float(np.min(_f(inst, i, n + off - 1) + bw(n)))
            best = min(best, float(_f(inst, i, _FAR) + bw(n[-1])))  # f monotone: the rest is the limit
        if cap_slot is not None:  # cut off at the cap: f at the cap plus at least the bandwidth floor there
            n_cap = max(int(cap_slot) - int(inst.arrival[i]) + 1, 1)
            best = min(best, float(_f(inst, i, n_cap + off - 1) + bw(n_cap)))
        out[i] = best
    return out


def offline_bound(env, *, time_limit_s: float = 10.0, milp_max_jobs: int = MILP_MAX_JOBS) -> Bound:
    """The lower bound on the episode's total cost of ``env`` (unwrapped, right after ``reset``): Σ_i LB_i, and the
    MILP's dual bound where the instance has at most ``milp_max_jobs`` jobs.

    Args:
        env: the unwrapped ``WirelessUDL`` env after ``reset(seed=...)``.
        time_limit_s: HiGHS's time limit for the MILP part.
        milp_max_jobs: the MILP part is skipped (``nan``) above this many jobs.
    """
    t0 = time.perf_counter()
    inst, sim = getattr(env, "inst", None), getattr(env, "sim", None)
    if inst is None or sim is None:
        raise ValueError("offline_bound needs an env after reset(seed=...): it has no instance yet")
    per_job = job_bounds(inst, sim.offset, sim.cap_slot)  # the cap in either mode: a policy may run in replan mode
    parts = {"per-job": float(per_job.sum()), "MILP": math.nan}
    if inst.num_jobs <= int(milp_max_jobs):
        from .offline import offline_optimum

        res = offline_optimum(inst, latency_offset=sim.offset, time_limit_s=time_limit_s)
        if math.isfinite(res.bound):
            parts["MILP"] = float(res.bound)
    name = "MILP dual bound" if parts["MILP"] > parts["per-job"] else "per-job bound"
    value = max(v for v in parts.values() if not math.isnan(v))
    return Bound(value=float(value), name=name, sense="lower", parts=parts,
                 bounds="every legal schedule of the instance, online or clairvoyant, in both execution modes",
                 seconds=time.perf_counter() - t0)
