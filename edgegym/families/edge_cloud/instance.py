"""Instance generation outside the dynamics: a preset + a seeded generator -> (Cluster, JobSet).

Every random draw comes from the generator passed in (the env's ``np_random`` after ``reset(seed)``).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ...core.types import Cluster, JobSet
from .presets import ClusterConfig, JobModelConfig, Preset, WorkloadConfig

__all__ = [
    "PHILLY_SERVER_GPUS",
    "build_cluster",
    "build_instance",
    "build_jobs",
    "edge_work_slots",
    "offered_load",
    "small_lp_instance",
]

# Per-server worker counts for ``workers_per_server: philly``. The Pollux copy of the Philly trace has
# no machine list; the ATC'19 paper's machines have 2 or 8 GPUs (a few 4), so W_s ~ {2: .4, 4: .2, 8: .4}
# (Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks", IEEE JSAC
# 2022, §V-A: workers per server = GPUs of the trace machine; the split is an assumption, documented in the preset).
PHILLY_SERVER_GPUS = (np.array([2, 4, 8]), np.array([0.4, 0.2, 0.4]))


def _per_server(value, S: int, rng: np.random.Generator) -> np.ndarray:
    if value == "philly":
        sizes, probs = PHILLY_SERVER_GPUS
        return rng.choice(sizes, size=S, p=probs)
    if isinstance(value, tuple):
        return np.array(value, dtype=np.int64)
    return np.full(S, int(value), dtype=np.int64)


def _count(value, rng: np.random.Generator) -> int:
    if isinstance(value, tuple):
        return int(rng.integers(value[0], value[1] + 1))
    return int(value)


def build_cluster(cfg: ClusterConfig, rng: np.random.Generator) -> Cluster:
    """Draw (or read) the cluster of a preset: worker/PS counts per server, types, per-type bandwidth."""
    S = cfg.num_edge_servers
    wps = _per_server(cfg.workers_per_server, S, rng)
    pps = wps.copy() if cfg.ps_per_server is None else _per_server(cfg.ps_per_server, S, rng)
    nwt = _count(cfg.num_worker_types, rng)
    npt = _count(cfg.num_ps_types, rng)
    if cfg.bandwidth_range:
        lo, hi = cfg.worker_type_bandwidth_mbps
        bw = rng.uniform(lo, hi, size=nwt)
    else:
        bw = np.array(cfg.worker_type_bandwidth_mbps, dtype=float)
        if bw.size != nwt:
            raise ValueError(f"cluster.worker_type_bandwidth_mbps has {bw.size} entries for {nwt} worker types")
    worker_server = np.repeat(np.arange(S), wps)
    ps_server = np.repeat(np.arange(S), pps)
    if cfg.worker_types is not None:
        wt = np.array(cfg.worker_types, dtype=np.int64)
        if wt.size != worker_server.size:
            raise ValueError(f"cluster.worker_types has {wt.size} entries for {worker_server.size} workers")
    else:
        wt = rng.integers(0, nwt, size=worker_server.size)
    if cfg.ps_types is not None:
        pt = np.array(cfg.ps_types, dtype=np.int64)
        if pt.size != ps_server.size:
            raise ValueError(f"cluster.ps_types has {pt.size} entries for {ps_server.size} PSs")
    else:
        pt = rng.integers(0, npt, size=ps_server.size)
    return Cluster(
        num_edge_servers=S,
        worker_server=worker_server,
        worker_type=wt,
        ps_server=ps_server,
        ps_type=pt,
        worker_type_bandwidth_mbps=bw,
        num_ps_types=npt,
        has_cloud=cfg.cloud,
    )


@functools.lru_cache(maxsize=8)
def _trace_table(source: str, path: str | None, trace_cluster: str | None, columns: tuple = (), time_unit: str = "s"):
    from ... import workloads as wl

    if source == "philly":
        return wl.load_philly(path, cluster=trace_cluster)
    if source == "itp":
        return wl.load_itp(path, cluster=trace_cluster or "cluster01")
    if source == "google2011":
        return wl.load_google2011(path)
    if source == "csv":
        return wl.load_csv(path, columns=dict(columns) or None, time_unit=time_unit)
    raise ValueError(f"unknown trace source {source!r}")


def _inline_jobs(cfg: WorkloadConfig, cluster: Cluster) -> JobSet:
    rows = cfg.jobs
    col = {k: [r[k] for r in rows] for k in rows[0]}
    return JobSet(
        arrival_slots=col["arrival_slots"],
        num_chunks=col["num_chunks"],
        batches_per_chunk=col["batches_per_chunk"],
        epochs=col["epochs"],
        minibatch_time_h=col["minibatch_time_h"],
        ps_update_ms=col["ps_update_ms"],
        grad_size_mb=col["grad_size_mb"],
        bandwidth_mbps=cluster.worker_type_bandwidth_mbps[np.array(col["worker_type"], dtype=np.int64)],
        worker_type=col["worker_type"],
        ps_type=col["ps_type"],
        num_gpus=col["num_gpus"],
        upload_delay_edge_slots=np.array(col["upload_delay_edge_slots"], dtype=float).reshape(
            len(rows), cluster.num_edge_servers
        ),
        upload_delay_cloud_slots=col["upload_delay_cloud_slots"],
        job_ids=tuple(str(i) for i in range(len(rows))),
    )


def edge_work_slots(jobs: JobSet, speed: float = 1.0) -> np.ndarray:
    """Edge work of each job, D_j · p0_j worker-slots (p0_j: chunk time on an edge worker, ζ_j = 0). # (J,)"""
    from .rates import chunk_time_slots, iteration_time_h

    tau0 = iteration_time_h(
        jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, all_in_cloud=False
    )
    p0 = np.atleast_1d(chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau0, speed)).astype(float)
    return np.asarray(jobs.num_chunks, dtype=float) * p0


def offered_load(jobs: JobSet, cluster: Cluster, speed: float = 1.0) -> float:
    """Offered edge utilisation of an instance: Σ_j D_j p0_j / (W · span of the arrivals).

    The denominator is the edge workers' capacity over the arrival window ``[r_1, r_J]`` (``inf`` when all
    jobs arrive at once, 0 work → 0). This is the quantity ``workload.load`` sets.
    """
    work = float(edge_work_slots(jobs, speed).sum())
    r = np.asarray(jobs.arrival_slots, dtype=float)
    span = float(r.max() - r.min()) if r.size else 0.0
    cap = cluster.num_workers * span
    if work == 0:
        return 0.0
    return work / cap if cap > 0 else float("inf")


def build_jobs(
    wcfg: WorkloadConfig, jcfg: JobModelConfig, cluster: Cluster, rng: np.random.Generator, speed: float = 1.0
) -> JobSet:
    """The episode's jobs: inline, synthetic (Philly-calibrated) or a seeded window of a trace.

    With ``workload.load`` the window's submissions are rescaled to span ``H = Σ_j D_j p0_j / (W · load)``
    slots (then floored to whole slots, as with ``horizon_slots``): the offered edge utilisation of the
    episode's own jobs over the arrival window is ``load`` (up to that flooring). The random draws are the
    same as with ``horizon_slots``: only the arrival slots differ.
    """
    from ... import workloads as wl

    if wcfg.source == "inline":
        return _inline_jobs(wcfg, cluster)
    J = wcfg.num_jobs
    if wcfg.source == "synthetic":
        # the columns of ``synthetic_philly_table`` without its frame and validation (canonical by construction):
        # the same draws and jobs, ~3 ms less per reset (a quarter of EdgeCloudML-v1's random stepping)
        cols = wl.synthetic_philly_columns(J, rng)
        submit, gpus, ids, names = cols["submit_time_s"], cols["num_gpus"], cols["job_id"], None
    else:
        table = _trace_table(wcfg.source, wcfg.path, wcfg.trace_cluster, wcfg.columns, wcfg.time_unit)
        n = len(table)
        if n < J:
            raise ValueError(f"workload.num_jobs={J} but the {wcfg.source} trace has only {n} jobs")
        start = int(rng.integers(0, n - J + 1)) if wcfg.window == "random" else int(wcfg.window)
        if start + J > n:
            raise ValueError(f"workload.window={start} + num_jobs={J} runs past the trace's {n} jobs")
        # the loaders return validated, canonical tables: the window's columns, not a second validation
        rows = slice(start, start + J)
        submit = table["submit_time_s"].to_numpy()[rows]
        gpus = table["num_gpus"].to_numpy()[rows].copy()  # the loaders cache their tables: no view into one
        ids = tuple(table["job_id"].iloc[rows].tolist())
        names = table["model"].iloc[rows].tolist() if "model" in table.columns else None
    params = wl.JobModelParams(
        epochs=jcfg.epochs,
        minibatch_time_h=jcfg.minibatch_time_h,
        ps_update_ms=jcfg.ps_update_ms,
        grad_size_mb=jcfg.grad_size_mb,
        upload_delay_edge_slots=jcfg.edge_upload_delay_slots,
        upload_delay_cloud_slots=jcfg.cloud_upload_delay_slots,
    )
    load = getattr(wcfg, "load", None)
    jobs = wl.jobset_from_columns(
        submit,
        gpus,
        ids,
        num_edge_servers=cluster.num_edge_servers,
        num_worker_types=cluster.num_worker_types,
        num_ps_types=cluster.num_ps_types,
        worker_type_bandwidth_mbps=cluster.worker_type_bandwidth_mbps,
        rng=rng,
        params=params,
        model_names=names,
        horizon_slots=wcfg.horizon_slots if load is None else 1.0,
    )
    if load is None:
        return jobs
    if cluster.num_workers == 0:
        raise ValueError("workload.load needs edge workers (the cluster has none); use workload.horizon_slots")
    horizon = float(edge_work_slots(jobs, speed).sum()) / (cluster.num_workers * load)
    arrival = wl.arrival_slots_from_times(submit, params.slot_s, horizon)
    return dataclasses.replace(jobs, arrival_slots=arrival)


def build_instance(preset: Preset, rng: np.random.Generator) -> tuple[Cluster, JobSet]:
    """Cluster then jobs, both from ``rng`` (in that order)."""
    cluster = build_cluster(preset.cluster, rng)
    return cluster, build_jobs(preset.workload, preset.job_model, cluster, rng, speed=preset.env.speed)


def small_lp_instance(
    rng: np.random.Generator, num_jobs: int, num_servers: int = 5, workers_per_server: int = 2, num_types: int = 2
) -> tuple[Cluster, JobSet]:
    """A small instance of Wang et al.'s model on which the LP bound is tractable (small, like the instances of
    the paper's competitive-ratio experiment, §V-C, which its LP solver's matrix-size limit kept small).

    ``num_servers`` × ``workers_per_server`` edge workers of ``num_types`` types (+ the cloud); jobs with
    D_j ≤ 4 chunks, whole-slot chunk times p1 ∈ {1..6} (p0 = p1 or p1 + 1: the edge's communication term),
    arrivals in [0, J), Δ_edge ∈ {1, 2}, Δ_cloud ∈ {4, 5, 6}. Used by the competitive-ratio experiment
    (``benchmarks/reproduce_edge_cloud.py``) and the tests.
    """
    W = num_servers * workers_per_server
    cl = Cluster(
        num_edge_servers=num_servers,
        worker_server=np.repeat(np.arange(num_servers), workers_per_server),
        worker_type=np.tile(np.arange(num_types), W // num_types + 1)[:W],
        ps_server=np.repeat(np.arange(num_servers), workers_per_server),
        ps_type=np.zeros(W, dtype=int),
        worker_type_bandwidth_mbps=np.full(num_types, 100.0),
    )
    J = num_jobs
    wt = rng.integers(0, num_types, size=J)
    jobs = JobSet(
        arrival_slots=np.sort(rng.integers(0, max(2, J), size=J)).astype(float),
        num_chunks=rng.integers(1, 5, size=J),
        batches_per_chunk=np.ones(J, dtype=int),
        epochs=np.ones(J, dtype=int),
        minibatch_time_h=rng.integers(1, 7, size=J).astype(float),  # p1 = m, whole slots
        ps_update_ms=np.zeros(J),
        # communication: 2q/b per iteration = 0 or 1 slot (edge slower than an all-cloud job)
        grad_size_mb=rng.choice([0.0, 22500.0], size=J),
        bandwidth_mbps=np.full(J, 100.0),
        worker_type=wt,
        ps_type=np.zeros(J, dtype=int),
        num_gpus=np.ones(J, dtype=int),
        upload_delay_edge_slots=rng.integers(1, 3, size=(J, num_servers)).astype(float),
        upload_delay_cloud_slots=rng.integers(4, 7, size=J).astype(float),
    )
    return cl, jobs
