"""Episode metrics shared by every scheduling discipline, as pure functions.

The metrics are those of Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud
Networks", IEEE JSAC 2022, §V: JCT rate, preemption frequency, communication time rate, cluster utilisation
and makespan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ScheduleOutcome", "episode_metrics", "utilisation_series"]


@dataclass(frozen=True, slots=True)
class ScheduleOutcome:
    """What a discipline did to one episode's jobs, whatever the discipline.

    Attributes:
        completion_slots: c_j, the completion time of each job.                     # (J,) float
        segments: executed work on edge workers, one row per contiguous run:
            ``[worker, start_slot, end_slot, job]``.                                 # (N, 4) float
        preemptions: number of times a started, unfinished piece of work was stopped for another job
            (chunk-level for the HAPRF schedule of Wang et al. (JSAC 2022); whole-job suspensions for
            job-level schedulers).
        edge_chunks: number of the job's chunks (or workers, for gang schedulers) on the edge.  # (J,) int
        cloud_chunks: number of the job's chunks in the cloud.                       # (J,) int
        extra: discipline-specific counters (e.g. ``postponed_chunks``, ``ps_switches``, ``migrations``).
    """

    completion_slots: np.ndarray
    segments: np.ndarray
    preemptions: int
    edge_chunks: np.ndarray
    cloud_chunks: np.ndarray
    extra: dict = field(default_factory=dict)


def utilisation_series(segments: np.ndarray, num_workers: int, t_end: float, bin_slots: float = 1.0):
    """Fraction of edge workers busy in each bin ``[k·bin, (k+1)·bin)`` of ``[0, t_end)``.

    Returns ``(bin_starts, utilisation)``, both (K,) float.
    """
    nbins = max(1, int(np.ceil(t_end / bin_slots)))
    starts = np.arange(nbins) * bin_slots
    busy = np.zeros(nbins)
    if num_workers == 0 or len(segments) == 0:
        return starts, busy
    for _, s, e, _ in np.asarray(segments):
        k0, k1 = int(s // bin_slots), int(min(np.ceil(e / bin_slots), nbins))
        for k in range(k0, k1):
            lo, hi = max(s, k * bin_slots), min(e, (k + 1) * bin_slots)
            if hi > lo:
                busy[k] += hi - lo
    return starts, busy / (num_workers * bin_slots)


def episode_metrics(arrival_slots, outcome: ScheduleOutcome, num_workers: int) -> dict:
    """The episode metrics put in ``info["episode_metrics"]`` at the last step.

    ``total_jct`` Σ(c_j − r_j), ``avg_jct``, ``p95_jct``, ``makespan`` (max c_j − min r_j),
    ``preemptions``, ``edge_fraction`` (share of chunks trained on the edge), ``cloud_jobs`` (jobs entirely
    in the cloud), ``utilisation`` (edge worker busy time over workers × makespan window) and the
    discipline's extra counters.
    """
    r = np.asarray(arrival_slots, dtype=float)
    c = np.asarray(outcome.completion_slots, dtype=float)
    jct = c - r
    J = r.size
    seg = np.asarray(outcome.segments, dtype=float).reshape(-1, 4)
    busy = float(np.sum(seg[:, 2] - seg[:, 1])) if len(seg) else 0.0
    t0 = float(r.min()) if J else 0.0
    makespan = float(c.max() - t0) if J else 0.0
    edge = np.asarray(outcome.edge_chunks)
    cloud = np.asarray(outcome.cloud_chunks)
    total_chunks = float(edge.sum() + cloud.sum())
    out = {
        "num_jobs": int(J),
        "total_jct": float(jct.sum()),
        "avg_jct": float(jct.mean()) if J else 0.0,
        "p95_jct": float(np.percentile(jct, 95)) if J else 0.0,
        "makespan": makespan,
        "preemptions": int(outcome.preemptions),
        "edge_fraction": float(edge.sum() / total_chunks) if total_chunks else 0.0,
        "cloud_jobs": int(np.sum((edge == 0) & (cloud > 0))),
        "utilisation": float(busy / (num_workers * makespan)) if num_workers and makespan > 0 else 0.0,
    }
    for k, v in outcome.extra.items():
        out[k] = v
    return out
