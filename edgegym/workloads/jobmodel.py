"""Turn a canonical job table into a :class:`~edgegym.core.types.JobSet` of Wang et al.'s model.

The model is that of Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud
Networks", IEEE JSAC 2022 (§III; experiment parameters in §V-A).

The trace supplies arrivals, GPU counts and job ids (and the model when it has a matching ``model``
column); everything else is sampled from the paper's ranges (§III, §V-A; where it gives none, the PS type
is uniform and the bandwidth is one value per worker type) with an explicit ``np.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.types import JobSet
from .catalog import TABLE_II_MODELS, ModelSpec, find_model
from .schema import validate_job_table

__all__ = ["JobModelParams", "arrival_slots_from_times", "build_jobset", "jobset_from_columns"]


@dataclass(frozen=True, slots=True)
class JobModelParams:
    """Sampling ranges of the per-job parameters of Wang et al. (JSAC 2022) (inclusive bounds; defaults = §V-A).

    Attributes:
        epochs: E_j, uniform integer in [lo, hi] (paper: [20, 60]).
        minibatch_time_h: m_j, uniform in [lo, hi] hours (paper: [0.001, 0.05]).
        ps_update_ms: G_j, uniform in [lo, hi] ms (paper: [10, 100]).
        grad_size_mb: q_j, uniform in [lo, hi] MB (paper: [30, 575]).
        upload_delay_edge_slots: Δ_js per (job, edge server), uniform integer in [lo, hi] (paper: [1, 4]).
        upload_delay_cloud_slots: Δ_{j,c}, uniform integer in [lo, hi] (paper: [10, 15]).
        models: the catalogue jobs draw a model from, uniformly (paper: Table II).
        slot_s: seconds per slot when arrivals are not rescaled (paper: 1 slot = 1 hour).
    """

    epochs: tuple[int, int] = (20, 60)
    minibatch_time_h: tuple[float, float] = (0.001, 0.05)
    ps_update_ms: tuple[float, float] = (10.0, 100.0)
    grad_size_mb: tuple[float, float] = (30.0, 575.0)
    upload_delay_edge_slots: tuple[int, int] = (1, 4)
    upload_delay_cloud_slots: tuple[int, int] = (10, 15)
    models: tuple[ModelSpec, ...] = TABLE_II_MODELS
    slot_s: float = 3600.0

    def __post_init__(self) -> None:
        rules = (
            ("epochs", 1, True),
            ("minibatch_time_h", 0.0, False),
            ("ps_update_ms", 0.0, False),
            ("grad_size_mb", 0.0, False),
            ("upload_delay_edge_slots", 0, True),
            ("upload_delay_cloud_slots", 0, True),
        )
        for name, lo_min, integer in rules:
            value = getattr(self, name)
            if len(value) != 2:
                raise ValueError(f"JobModelParams.{name} must be a (low, high) pair, got {value!r}")
            lo, hi = value
            if integer and (int(lo) != lo or int(hi) != hi):
                raise ValueError(f"JobModelParams.{name} must hold integers, got {value!r}")
            if not lo_min <= lo <= hi or not np.isfinite(hi):
                raise ValueError(f"JobModelParams.{name} must satisfy {lo_min} <= low <= high, got {value!r}")
        if self.minibatch_time_h[0] <= 0:
            raise ValueError(f"JobModelParams.minibatch_time_h must be > 0, got {self.minibatch_time_h!r}")
        if not self.models:
            raise ValueError("JobModelParams.models must hold at least one model")
        if not self.slot_s > 0:
            raise ValueError(f"JobModelParams.slot_s must be > 0, got {self.slot_s!r}")


def arrival_slots_from_times(
    submit_time_s, slot_s: float = 3600.0, horizon_slots: float | None = None
) -> np.ndarray:
    """Integer arrival slots of a window of submission times (the paper, §V-A, only says it scales the
    trace's submission times).

    The times are shifted so the first is 0; with ``horizon_slots`` they are rescaled so the window
    spans exactly ``[0, horizon_slots]`` (a window whose times are all equal maps to 0), otherwise
    divided by ``slot_s``. The result is floored to whole slots (with a 1e-9 tolerance against
    round-off), so jobs arrive at integer slots.

    Args:
        submit_time_s: non-decreasing submission times in seconds.                       # (J,)
        slot_s: seconds per slot (used only without ``horizon_slots``).
        horizon_slots: the span the window is stretched or compressed to, >= 0.

    Returns:
        Arrival slots as float64 integers, non-decreasing, starting at 0.                 # (J,)
    """
    t = np.asarray(submit_time_s, dtype=np.float64)
    if t.size == 0:
        return t.copy()
    t = t - t[0]
    if horizon_slots is not None:
        if not (np.isfinite(horizon_slots) and horizon_slots >= 0):
            raise ValueError(f"horizon_slots must be a finite number >= 0, got {horizon_slots!r}")
        span = t[-1]
        slots = t / span * horizon_slots if span > 0 else np.zeros_like(t)
    else:
        if not slot_s > 0:
            raise ValueError(f"slot_s must be > 0, got {slot_s!r}")
        slots = t / slot_s
    return np.floor(slots + 1e-9)


def build_jobset(
    table: pd.DataFrame,
    num_edge_servers: int,
    num_worker_types: int,
    num_ps_types: int,
    worker_type_bandwidth_mbps: Sequence[float] | np.ndarray,
    rng: np.random.Generator,
    params: JobModelParams | None = None,
    num_jobs: int | None = None,
    start_index: int = 0,
    horizon_slots: float | None = None,
) -> JobSet:
    """Make Wang et al.'s job set from ``num_jobs`` consecutive rows of a canonical job table.

    Args:
        table: a canonical job table (validated again here).
        num_edge_servers: S, number of edge servers (columns of the edge upload delays), >= 0.
        num_worker_types: number of worker types; each job's type is uniform in ``[0, num_worker_types)``.
        num_ps_types: number of PS types; each job's PS type is uniform in ``[0, num_ps_types)`` (the paper gives
            no distribution).
        worker_type_bandwidth_mbps: bandwidth of each worker type; b_j = this[worker_type_j] (one
            bandwidth per worker type, the paper's "bandwidth of workers of specified type").
            # (num_worker_types,)
        rng: the only source of randomness.
        params: sampling ranges; default :class:`JobModelParams()` (the paper's values).
        num_jobs: J, rows taken from ``start_index``; default all remaining rows.
        start_index: first row of the window (0-based position in ``table``).
        horizon_slots: rescale the window's submissions to span ``[0, horizon_slots]`` slots; default:
            no rescaling, ``params.slot_s`` seconds per slot. See :func:`arrival_slots_from_times`.

    Returns:
        A :class:`JobSet` of J jobs in table order. Trace fields: arrivals, ``num_gpus``, ``job_ids``
        and, where the table's ``model`` matches a catalogue name (case-insensitive, ignoring ``-``,
        ``_`` and spaces), the model. Sampled, in this draw order, each a (J,) draw even when a trace
        value replaces it (so the stream does not depend on the table's content): model index,
        E_j, m_j, G_j, q_j, worker type, PS type, edge upload delays (J, S), cloud upload delay (J,).
        D_j and B_j come from the model.

    Raises:
        ValueError: a window past the end of the table (the message says how many rows are available
            from ``start_index``), inconsistent type counts or bandwidths, or bad arguments.
    """
    params, bandwidth = _checked_model_args(
        params, num_edge_servers, num_worker_types, num_ps_types, worker_type_bandwidth_mbps
    )
    if start_index < 0:
        raise ValueError(f"start_index must be >= 0, got {start_index}")
    available = len(table) - start_index
    if num_jobs is None:
        num_jobs = available
    if num_jobs < 1:
        raise ValueError(f"num_jobs must be >= 1, got {num_jobs} (the table has {len(table)} rows)")
    if num_jobs > available:
        raise ValueError(
            f"num_jobs={num_jobs} exceeds the rows available from start_index={start_index}: "
            f"{max(available, 0)} (the table has {len(table)} rows)"
        )
    window = validate_job_table(table.iloc[start_index : start_index + num_jobs], "build_jobset table window")
    return jobset_from_columns(
        window["submit_time_s"].to_numpy(),
        window["num_gpus"].to_numpy(),
        tuple(window["job_id"].tolist()),
        num_edge_servers=num_edge_servers,
        num_worker_types=num_worker_types,
        num_ps_types=num_ps_types,
        worker_type_bandwidth_mbps=bandwidth,
        rng=rng,
        params=params,
        model_names=window["model"].tolist() if "model" in window.columns else None,
        horizon_slots=horizon_slots,
    )


def _checked_model_args(
    params: JobModelParams | None,
    num_edge_servers: int,
    num_worker_types: int,
    num_ps_types: int,
    worker_type_bandwidth_mbps: Sequence[float] | np.ndarray,
) -> tuple[JobModelParams, np.ndarray]:
    """The job model's arguments checked: ``(params or the paper's defaults, the bandwidths as float64)``."""
    params = JobModelParams() if params is None else params
    if num_edge_servers < 0:
        raise ValueError(f"num_edge_servers must be >= 0, got {num_edge_servers}")
    if num_worker_types < 1 or num_ps_types < 1:
        raise ValueError(
            f"num_worker_types and num_ps_types must be >= 1, got {num_worker_types}, {num_ps_types}"
        )
    bandwidth = np.asarray(worker_type_bandwidth_mbps, dtype=np.float64)
    if bandwidth.shape != (num_worker_types,):
        raise ValueError(
            f"worker_type_bandwidth_mbps must have one entry per worker type ({num_worker_types}), "
            f"got shape {bandwidth.shape}"
        )
    if not np.all(np.isfinite(bandwidth) & (bandwidth > 0)):
        raise ValueError("worker_type_bandwidth_mbps must be finite and > 0")
    return params, bandwidth


def jobset_from_columns(
    submit_time_s: np.ndarray,
    num_gpus: np.ndarray,
    job_ids: tuple[str, ...],
    *,
    num_edge_servers: int,
    num_worker_types: int,
    num_ps_types: int,
    worker_type_bandwidth_mbps: Sequence[float] | np.ndarray,
    rng: np.random.Generator,
    params: JobModelParams | None = None,
    model_names: Sequence[str] | None = None,
    horizon_slots: float | None = None,
) -> JobSet:
    """:func:`build_jobset` on the columns of a window of a job table that is already canonical: the same
    draws, in the same order, and the same :class:`JobSet`, without a pandas frame or a second validation.

    For tables this package made or validated itself (an env's reset draws a synthetic table every episode;
    validating it twice and slicing it with pandas cost about 3 ms a reset). A table from anywhere else goes
    through :func:`build_jobset`, which validates it.

    Args:
        submit_time_s: the window's submission times, seconds, sorted.                 # (J,) float64
        num_gpus: the window's GPU counts.                                              # (J,) int64
        job_ids: the window's job ids, J strings.
        model_names: the window's ``model`` column, when the table has one.
        The other arguments: as :func:`build_jobset`'s.
    """
    params, bandwidth = _checked_model_args(
        params, num_edge_servers, num_worker_types, num_ps_types, worker_type_bandwidth_mbps
    )
    J, S = len(job_ids), int(num_edge_servers)
    if J < 1 or len(submit_time_s) != J or len(num_gpus) != J:
        raise ValueError(
            f"submit_time_s, num_gpus and job_ids must have one entry per job (>= 1), got "
            f"{len(submit_time_s)}, {len(num_gpus)} and {J}"
        )
    arrival = arrival_slots_from_times(np.asarray(submit_time_s), params.slot_s, horizon_slots)

    models = params.models
    model = rng.integers(0, len(models), size=J)
    if model_names is not None:
        matched = np.array([find_model(name, models) for name in model_names], dtype=object)
        hit = np.array([m is not None for m in matched], dtype=bool)
        model[hit] = matched[hit].astype(np.int64)
    epochs = rng.integers(params.epochs[0], params.epochs[1] + 1, size=J)
    minibatch_time_h = rng.uniform(*params.minibatch_time_h, size=J)
    ps_update_ms = rng.uniform(*params.ps_update_ms, size=J)
    grad_size_mb = rng.uniform(*params.grad_size_mb, size=J)
    worker_type = rng.integers(0, num_worker_types, size=J)
    ps_type = rng.integers(0, num_ps_types, size=J)
    lo_e, hi_e = params.upload_delay_edge_slots
    delay_edge = rng.integers(lo_e, hi_e + 1, size=(J, S))
    lo_c, hi_c = params.upload_delay_cloud_slots
    delay_cloud = rng.integers(lo_c, hi_c + 1, size=J)

    chunks = np.array([m.num_chunks for m in models], dtype=np.int64)
    batches = np.array([m.batches_per_chunk for m in models], dtype=np.int64)
    return JobSet(
        arrival_slots=arrival,
        num_chunks=chunks[model],
        batches_per_chunk=batches[model],
        epochs=epochs,
        minibatch_time_h=minibatch_time_h,
        ps_update_ms=ps_update_ms,
        grad_size_mb=grad_size_mb,
        bandwidth_mbps=bandwidth[worker_type],
        worker_type=worker_type,
        ps_type=ps_type,
        num_gpus=np.asarray(num_gpus),
        upload_delay_edge_slots=delay_edge.astype(np.float64),
        upload_delay_cloud_slots=delay_cloud.astype(np.float64),
        model=model,
        job_ids=tuple(job_ids),
    )
