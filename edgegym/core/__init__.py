"""Pure simulator of edge-cloud ML clusters (numpy only; no gymnasium import)."""

from .engine import Candidates, PaperSimulator, greedy_placement, haprf_key, water_fill
from .metrics import ScheduleOutcome, episode_metrics, utilisation_series
from .rates import chunk_time_slots, comm_time_h, iteration_time_h
from .types import Cluster, JobSet

__all__ = [
    "Candidates",
    "Cluster",
    "JobSet",
    "PaperSimulator",
    "ScheduleOutcome",
    "chunk_time_slots",
    "comm_time_h",
    "episode_metrics",
    "greedy_placement",
    "haprf_key",
    "iteration_time_h",
    "utilisation_series",
    "water_fill",
]
