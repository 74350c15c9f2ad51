"""The offline bound of ``EdgeCloudML``: each job alone on the empty cluster (continuous time), and the
time-indexed LP on small slot-aligned presets.

Standalone bound. A job's completion time c_j − r_j in any legal schedule is at least the least completion time
it could reach alone on the empty cluster, because the other jobs only take worker time away from it. Alone, job
j (D_j chunks, edge chunk time p0_j, all-in-cloud chunk time p1_j ≤ p0_j, upload delays Δ_{j,s} to edge server s
and Δ_{j,c} to the cloud) can finish no earlier than

* all in the cloud (ζ_j = 1): Δ_{j,c} + p1_j, exactly (dedicated cloud workers, no waiting);
* a split with at least one chunk in the cloud: that chunk runs at p0_j (any edge part makes ζ_j = 0), so
  ≥ Δ_{j,c} + p0_j ≥ Δ_{j,c} + p1_j: never better than all-cloud;
* all on the edge: its D_j chunks run on qualified edge workers, each from its server's upload Δ_{j,s(w)} on.
  The env's simulator has two kinds of edge execution, and the bound takes the smaller of the two floors:

  - chunk by chunk (the placement policies, A_online and every action of the env; BatchSche): a chunk stays on
    one worker and needs p0_j of service there, so a worker given k chunks finishes its last one no earlier
    than Δ_w + k·p0_j, and the job no earlier than E_j = the D_j-th smallest of {Δ_w + k·p0_j : w qualified,
    k ≥ 1} (the optimum of spreading the chunks, reached by placing them one by one where they end first);
  - gang-scheduled (the SRTF and Tiresias-L baselines): the job holds g ≤ D_j workers, progresses at g
    worker-slots per slot from the last of their uploads on, so it ends no earlier than
    G_j = min_g (g-th smallest Δ_w + D_j·p0_j / g).

``LB_j = min(cloud, E_j, G_j)``; the bound is Σ_j LB_j. Chunk times are the env's continuous ones, ``speed``
included (the slotted times are rounded up and the gang baselines keep continuous ones, so this holds in slotted
mode too). Other jobs, PS limits and HAPRF order can only delay a job, never speed it up.

LP bound. On a slotted preset at speed 1 whose time-indexed LP (:func:`edgegym.families.edge_cloud.lp_bound.
lp_lower_bound`) has at most ``lp_max_variables`` variables, the LP's value is computed too and the bound is the
larger of the two. The LP bounds slot-aligned schedules only (the env's placement policies in slotted mode); the
gang-scheduled baselines keep continuous chunk times, and on such a preset are bounded by the standalone part.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...core.bounds import Bound
from .rates import chunk_time_slots, iteration_time_h

__all__ = ["LP_MAX_VARIABLES", "edge_floor", "offline_bound", "standalone_jct"]

#: the LP part is computed only up to this many variables (a few seconds of HiGHS)
LP_MAX_VARIABLES = 50_000


def edge_floor(delays: np.ndarray, p: float, num_chunks: int) -> float:
    """The least completion time (after arrival) of ``num_chunks`` chunks of ``p`` slots each alone on workers
    released at ``delays``: min(chunk by chunk E, gang G) of the module docstring; ``inf`` without a worker."""
    d = np.sort(np.asarray(delays, dtype=float))
    D = int(num_chunks)
    if d.size == 0 or D <= 0:
        return math.inf if D > 0 else 0.0
    g = np.arange(1, min(D, d.size) + 1)
    gang = float(np.min(d[: g.size] + D * p / g))
    ends = (d[: min(D, d.size), None] + p * np.arange(1, D + 1)[None, :]).ravel()  # Δ_w + k·p, k = 1..D
    chunked = float(np.partition(ends, D - 1)[D - 1])
    return min(chunked, gang)


def standalone_jct(cluster, jobs, speed: float = 1.0) -> np.ndarray:
    """(J,) each job's least completion time alone on the empty cluster, c_j − r_j (see the module docstring):
    the cheapest of all-cloud and the two edge floors; ``inf`` for a job with neither."""
    tau0 = iteration_time_h(jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, False)
    tau1 = iteration_time_h(jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, True)
    p0 = np.atleast_1d(chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau0, speed))
    p1 = np.atleast_1d(chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau1, speed))
    D = np.asarray(jobs.num_chunks, dtype=np.int64)
    delay_e = np.asarray(jobs.upload_delay_edge_slots, dtype=float).reshape(jobs.num_jobs, -1)
    delay_c = np.asarray(jobs.upload_delay_cloud_slots, dtype=float)
    wtype = np.asarray(cluster.worker_type)
    wserver = np.asarray(cluster.worker_server, dtype=np.int64)
    out = np.full(jobs.num_jobs, math.inf)
    for j in range(jobs.num_jobs):
        qual = np.flatnonzero(wtype == jobs.worker_type[j])
        edge = edge_floor(delay_e[j, wserver[qual]], float(p0[j]), int(D[j]))
        cloud = float(delay_c[j] + p1[j]) if cluster.has_cloud else math.inf
        out[j] = min(edge, cloud)
    return out


def offline_bound(env, *, time_limit_s: float = 10.0, lp_max_variables: int = LP_MAX_VARIABLES) -> Bound:
    """The lower bound on Σ_j (c_j − r_j) of the episode ``env`` (unwrapped, right after ``reset``) holds:
    the standalone bound, and the LP bound where the preset is slotted at speed 1 and the LP small.

    Args:
        env: the unwrapped ``EdgeCloudML`` env after ``reset(seed=...)``.
        time_limit_s: HiGHS's time limit for the LP part.
        lp_max_variables: the LP part is skipped (``nan``) above this many variables.
    """
    t0 = time.perf_counter()
    cluster, jobs, cfg = env.cluster, env.jobs, env.preset.env
    if jobs is None:
        raise ValueError("offline_bound needs an env after reset(seed=...): it has no instance yet")
    lb = standalone_jct(cluster, jobs, float(cfg.speed))
    if not np.all(np.isfinite(lb)):
        bad = np.flatnonzero(~np.isfinite(lb)).tolist()
        raise ValueError(f"job(s) {bad} have no qualified edge worker and the cluster has no cloud")
    parts = {"standalone": float(lb.sum()), "LP": math.nan}
    name = "standalone JCT"
    bounds = "every legal schedule of the instance, online or clairvoyant (the gang-scheduled baselines included)"
    integral = all(np.allclose(x, np.round(x)) for x in (jobs.arrival_slots, jobs.upload_delay_edge_slots,
                                                        jobs.upload_delay_cloud_slots))
    if cfg.slotted and float(cfg.speed) == 1.0 and integral:
        from .lp_bound import lp_lower_bound

        try:
            res = lp_lower_bound(cluster, jobs, time_limit_s=time_limit_s, max_variables=lp_max_variables)
            parts["LP"] = float(res.lp_value)
        except ValueError:  # too large for a cheap bound: the part is skipped
            pass
        if parts["LP"] > parts["standalone"]:
            name = "LP (slot-aligned)"
            bounds = ("every slot-aligned schedule of the instance (the placement policies in slotted mode, online "
                      "or clairvoyant); the gang-scheduled baselines by the standalone part only")
    value = max(v for v in parts.values() if not math.isnan(v))
    return Bound(value=float(value), name=name, sense="lower", parts=parts, bounds=bounds,
                 seconds=time.perf_counter() - t0)
