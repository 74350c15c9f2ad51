"""Pure functions for the processing model of Wang et al., "Preemptive Scheduling for Distributed Machine Learning
Jobs in Edge-Cloud Networks", IEEE JSAC 2022 (§III, Eq. (1)).

Unit conventions (stated once): 1 slot = 1 hour; MB = 10^6 bytes; Mbps = 10^6 bit/s.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MS_PER_HOUR", "SECONDS_PER_HOUR", "comm_time_h", "iteration_time_h", "chunk_time_slots"]

MS_PER_HOUR = 3.6e6
SECONDS_PER_HOUR = 3600.0


def comm_time_h(grad_size_mb, bandwidth_mbps):
    """Worker-PS communication time of one iteration, 2 q_j / b_j, in hours (push + pull)."""
    return (
        2.0 * np.asarray(grad_size_mb, dtype=float) * 8.0 / np.asarray(bandwidth_mbps, dtype=float) / SECONDS_PER_HOUR
    )


def iteration_time_h(minibatch_time_h, ps_update_ms, grad_size_mb, bandwidth_mbps, all_in_cloud):
    """τ_j of Eq. (1): m_j + G_j (+ 2 q_j / b_j unless the whole job is in the cloud, ζ_j = 1), in hours."""
    base = np.asarray(minibatch_time_h, dtype=float) + np.asarray(ps_update_ms, dtype=float) / MS_PER_HOUR
    comm = comm_time_h(grad_size_mb, bandwidth_mbps)
    return np.where(np.asarray(all_in_cloud, dtype=bool), base, base + comm)


def chunk_time_slots(epochs, batches_per_chunk, iteration_h, speed: float = 1.0, slotted: bool = False):
    """p_j = E_j B_j τ_j / speed: the slots one worker needs to train one chunk.

    ``speed`` is the (1+ε) speed augmentation; ``slotted=True`` rounds up to whole slots
    (the paper's schedule is indexed by integer slots; used for the time-indexed lower bound).
    """
    if speed <= 0:
        raise ValueError(f"speed must be > 0, got {speed}")
    p = (
        np.asarray(epochs, dtype=float)
        * np.asarray(batches_per_chunk, dtype=float)
        * np.asarray(iteration_h, dtype=float)
        / speed
    )
    if slotted:
        p = np.ceil(p - 1e-9)
        p = np.maximum(p, 1.0)
    return p
