"""Typed containers of the core simulator: the cluster and the job set, as frozen struct-of-arrays.

Units are in the names: ``_slots`` (1 slot = 1 hour in the papers' evaluations), ``_h`` hours,
``_ms`` milliseconds, ``_mb`` megabytes (10^6 bytes), ``_mbps`` megabits per second (10^6 bit/s).
Shapes are given in trailing comments: ``W`` edge workers, ``P`` edge parameter servers (PSs),
``S`` edge servers, ``J`` jobs, ``R`` resource kinds.

The cloud is not a row of these arrays: it is a special server with unlimited workers and PSs,
described by ``Cluster.has_cloud`` and by each job's ``upload_delay_cloud_slots``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Cluster", "JobSet"]


def _frozen_array(a, dtype) -> np.ndarray:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, slots=True)
class Cluster:
    """An edge-cloud cluster: edge servers holding typed worker slots and typed PS slots, plus a cloud.

    Attributes:
        num_edge_servers: number of edge servers S (the cloud is not counted).
        worker_server: server index of each edge worker.                         # (W,) int
        worker_type: type index of each edge worker.                             # (W,) int
        ps_server: server index of each edge PS.                                 # (P,) int
        ps_type: type index of each edge PS.                                     # (P,) int
        worker_type_bandwidth_mbps: reserved worker-PS bandwidth of each worker type (Wang et al.,
            "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks", IEEE JSAC 2022,
            §V-A give b_j as "the bandwidth of workers of specified type": one value per type here).
        num_ps_types: number of PS types (worker types are ``len(worker_type_bandwidth_mbps)``).
        server_capacity: multi-resource capacity of each edge server (e.g. GPU, CPU, memory);
            not used by Wang et al.'s (JSAC 2022) model, kept for the multi-resource families.   # (S, R) float
        resource_names: names of the ``R`` resource columns.
        has_cloud: whether the remote cloud exists (``False`` = edge-only cluster).
    """

    num_edge_servers: int
    worker_server: np.ndarray  # (W,) int64
    worker_type: np.ndarray  # (W,) int64
    ps_server: np.ndarray  # (P,) int64
    ps_type: np.ndarray  # (P,) int64
    worker_type_bandwidth_mbps: np.ndarray  # (num_worker_types,) float64
    num_ps_types: int = 1
    server_capacity: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (S, R) float64
    resource_names: tuple[str, ...] = ()
    has_cloud: bool = True

    def __post_init__(self) -> None:
        for name, dtype in (
            ("worker_server", np.int64),
            ("worker_type", np.int64),
            ("ps_server", np.int64),
            ("ps_type", np.int64),
            ("worker_type_bandwidth_mbps", np.float64),
            ("server_capacity", np.float64),
        ):
            object.__setattr__(self, name, _frozen_array(getattr(self, name), dtype))
        S = self.num_edge_servers
        if S < 0:
            raise ValueError(f"num_edge_servers must be >= 0, got {S}")
        if self.worker_server.shape != self.worker_type.shape:
            raise ValueError("worker_server and worker_type must have the same shape")
        if self.ps_server.shape != self.ps_type.shape:
            raise ValueError("ps_server and ps_type must have the same shape")
        for name in ("worker_server", "ps_server"):
            arr = getattr(self, name)
            if arr.size and (arr.min() < 0 or arr.max() >= S):
                raise ValueError(f"{name} holds a server index outside [0, {S})")
        if self.worker_type.size and (
            self.worker_type.min() < 0 or self.worker_type.max() >= self.num_worker_types
        ):
            raise ValueError("worker_type holds a type without a bandwidth in worker_type_bandwidth_mbps")
        if self.ps_type.size and (self.ps_type.min() < 0 or self.ps_type.max() >= self.num_ps_types):
            raise ValueError("ps_type holds a type index outside [0, num_ps_types)")
        if np.any(self.worker_type_bandwidth_mbps <= 0):
            raise ValueError("worker_type_bandwidth_mbps must be > 0")

    @property
    def num_workers(self) -> int:
        """Number of edge workers W."""
        return int(self.worker_server.size)

    @property
    def num_ps(self) -> int:
        """Number of edge PSs P."""
        return int(self.ps_server.size)

    @property
    def num_worker_types(self) -> int:
        """Number of worker types."""
        return int(self.worker_type_bandwidth_mbps.size)

    def workers_per_server(self) -> np.ndarray:
        """Number of edge workers on each server.                                # (S,) int"""
        return np.bincount(self.worker_server, minlength=self.num_edge_servers)


@dataclass(frozen=True, slots=True)
class JobSet:
    """The jobs of one episode, sorted by arrival (trace order breaks ties), in Wang et al.'s model (§III).

    A job ``j`` has ``num_chunks[j]`` (D_j) data chunks, each trained for ``epochs[j]`` (E_j) epochs of
    ``batches_per_chunk[j]`` (B_j) mini-batches; ``minibatch_time_h`` is m_j, ``ps_update_ms`` G_j,
    ``grad_size_mb`` q_j, ``bandwidth_mbps`` b_j. ``worker_type``/``ps_type`` select qualified workers
    and PSs (v_jsw, o_jsp). ``num_gpus`` is the trace's GPU count (the gang size of the job-level
    baselines). ``upload_delay_edge_slots[j, s]`` is Δ_js, ``upload_delay_cloud_slots[j]`` is Δ_{j,c}.
    """

    arrival_slots: np.ndarray  # (J,) float64, non-decreasing
    num_chunks: np.ndarray  # (J,) int64, D_j >= 1
    batches_per_chunk: np.ndarray  # (J,) int64, B_j >= 1
    epochs: np.ndarray  # (J,) int64, E_j >= 1
    minibatch_time_h: np.ndarray  # (J,) float64, m_j > 0
    ps_update_ms: np.ndarray  # (J,) float64, G_j >= 0
    grad_size_mb: np.ndarray  # (J,) float64, q_j >= 0
    bandwidth_mbps: np.ndarray  # (J,) float64, b_j > 0
    worker_type: np.ndarray  # (J,) int64
    ps_type: np.ndarray  # (J,) int64
    num_gpus: np.ndarray  # (J,) int64 >= 1
    upload_delay_edge_slots: np.ndarray  # (J, S) float64 >= 0
    upload_delay_cloud_slots: np.ndarray  # (J,) float64 >= 0
    model: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # (J,) int64 or empty
    job_ids: tuple[str, ...] = ()

    _INT = ("num_chunks", "batches_per_chunk", "epochs", "worker_type", "ps_type", "num_gpus", "model")
    _FLOAT = (
        "arrival_slots",
        "minibatch_time_h",
        "ps_update_ms",
        "grad_size_mb",
        "bandwidth_mbps",
        "upload_delay_edge_slots",
        "upload_delay_cloud_slots",
    )

    def __post_init__(self) -> None:
        for name in self._INT:
            object.__setattr__(self, name, _frozen_array(getattr(self, name), np.int64))
        for name in self._FLOAT:
            object.__setattr__(self, name, _frozen_array(getattr(self, name), np.float64))
        J = self.arrival_slots.shape[0]
        for name in self._INT + self._FLOAT:
            arr = getattr(self, name)
            if name == "model" and arr.size == 0:
                continue
            if arr.shape[0] != J:
                raise ValueError(f"JobSet.{name} has {arr.shape[0]} rows, expected {J}")
            if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
                raise ValueError(f"JobSet.{name} holds a NaN or infinite value")
        if self.upload_delay_edge_slots.ndim != 2:
            raise ValueError("JobSet.upload_delay_edge_slots must be 2-D (J, S)")
        if J and np.any(np.diff(self.arrival_slots) < 0):
            raise ValueError("JobSet.arrival_slots must be non-decreasing")
        for name, lo in (
            ("num_chunks", 1),
            ("batches_per_chunk", 1),
            ("epochs", 1),
            ("num_gpus", 1),
        ):
            if J and getattr(self, name).min() < lo:
                raise ValueError(f"JobSet.{name} must be >= {lo}")
        for name in ("arrival_slots", "ps_update_ms", "grad_size_mb", "upload_delay_cloud_slots"):
            if J and getattr(self, name).min() < 0:
                raise ValueError(f"JobSet.{name} must be >= 0")
        if J and self.upload_delay_edge_slots.size and self.upload_delay_edge_slots.min() < 0:
            raise ValueError("JobSet.upload_delay_edge_slots must be >= 0")
        if J and (self.minibatch_time_h.min() <= 0 or self.bandwidth_mbps.min() <= 0):
            raise ValueError("JobSet.minibatch_time_h and bandwidth_mbps must be > 0")
        if self.job_ids and len(self.job_ids) != J:
            raise ValueError(f"JobSet.job_ids has {len(self.job_ids)} entries, expected {J}")

    @property
    def num_jobs(self) -> int:
        """Number of jobs J."""
        return int(self.arrival_slots.shape[0])

    @property
    def num_edge_servers(self) -> int:
        """Number of edge servers the upload delays are given for."""
        return int(self.upload_delay_edge_slots.shape[1])
