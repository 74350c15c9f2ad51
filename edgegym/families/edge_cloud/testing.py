"""Reusable helpers for tests of edgegym and of code built on it (small, seeded random instances)."""

from __future__ import annotations

import numpy as np

from ...core.types import Cluster, JobSet

__all__ = ["random_instance", "random_placement"]


def random_instance(
    rng: np.random.Generator,
    *,
    num_servers=2,
    max_workers=2,
    num_jobs=4,
    max_chunks=3,
    num_types=2,
    zero_delay=False,
    integer_p=False,
) -> tuple[Cluster, JobSet]:
    """A small random cluster and job set (hand-sized numbers, integer arrivals and delays)."""
    wps = rng.integers(1, max_workers + 1, size=num_servers)
    worker_server = np.repeat(np.arange(num_servers), wps)
    W = worker_server.size
    worker_type = rng.integers(0, num_types, size=W)
    worker_type[: min(num_types, W)] = np.arange(min(num_types, W))  # every type exists when W allows
    cluster = Cluster(
        num_edge_servers=num_servers,
        worker_server=worker_server,
        worker_type=worker_type,
        ps_server=np.repeat(np.arange(num_servers), wps),
        ps_type=np.zeros(W, dtype=int),
        worker_type_bandwidth_mbps=rng.uniform(10, 100, size=num_types),
        num_ps_types=1,
    )
    J = num_jobs
    arrivals = np.sort(rng.integers(0, 6, size=J)).astype(float)
    m = rng.integers(1, 4, size=J).astype(float) if integer_p else rng.uniform(0.2, 2.0, size=J)
    q = np.zeros(J) if integer_p else rng.uniform(0, 50, size=J)
    wt = rng.integers(0, num_types, size=J)
    jobs = JobSet(
        arrival_slots=arrivals,
        num_chunks=rng.integers(1, max_chunks + 1, size=J),
        batches_per_chunk=rng.integers(1, 3, size=J),
        epochs=rng.integers(1, 3, size=J),
        minibatch_time_h=m,
        ps_update_ms=np.zeros(J) if integer_p else rng.uniform(0, 100, size=J),
        grad_size_mb=q,
        bandwidth_mbps=cluster.worker_type_bandwidth_mbps[wt],
        worker_type=wt,
        ps_type=np.zeros(J, dtype=int),
        num_gpus=rng.integers(1, 3, size=J),
        upload_delay_edge_slots=np.zeros((J, num_servers)) if zero_delay else rng.integers(0, 4, size=(J, num_servers)),
        upload_delay_cloud_slots=np.zeros(J) if zero_delay else rng.integers(3, 8, size=J),
    )
    return cluster, jobs


def random_placement(sim, cluster: Cluster, j: int, num_chunks: int, rng: np.random.Generator,
                     cloud_share: float = 0.3) -> tuple[np.ndarray, int]:
    """A random placement of job ``j``'s ``num_chunks`` chunks on ``sim``: each chunk goes to the cloud with
    probability ``cloud_share`` (when the cluster has one) or when no worker qualifies, else to a uniformly drawn
    qualified worker. Returns ``(counts per worker, chunks to the cloud)``."""
    qual, counts, n_cloud = sim.qualified_workers(j), np.zeros(cluster.num_workers, dtype=np.int64), 0
    for _ in range(num_chunks):
        if qual.size == 0 or (cluster.has_cloud and rng.random() < cloud_share):
            n_cloud += 1
        else:
            counts[rng.choice(qual)] += 1
    return counts, n_cloud
