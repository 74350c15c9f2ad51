"""Shared, numpy-only building blocks of every env family: cluster/job types, episode metrics, config
validation helpers and the family interface. Nothing here names a family."""

from .family import FILE_ROLES, Family
from .metrics import ScheduleOutcome, episode_metrics, utilisation_series
from .types import Cluster, JobSet

__all__ = [
    "FILE_ROLES",
    "Cluster",
    "Family",
    "JobSet",
    "ScheduleOutcome",
    "episode_metrics",
    "utilisation_series",
]
