"""Hand-made HeteroML instances for tests (hand-computed small instances)."""

from __future__ import annotations

import numpy as np

from .simulator import MS_PER_SLOT, HeteroCluster, HeteroJobs

__all__ = ["hand_cluster", "hand_jobs"]


def hand_cluster(arch: str = "ps", num_servers: int = 1) -> HeteroCluster:
    """Servers (4 GPU, 16 vCPU, 64 GiB, 10 Gbps); one worker type (1, 4, 16, 0.1 Gbps); one PS type (0, 2, 8, 5)."""
    cap = np.tile([4.0, 16.0, 64.0, 10.0], (num_servers, 1))
    return HeteroCluster(
        capacity=cap,
        worker_res=np.array([[1.0, 4.0, 16.0, 0.1]]),
        ps_res=np.array([[0.0, 2.0, 8.0, 5.0]]) if arch == "ps" else np.zeros((1, 4)),
        arch=arch,
    )


def hand_jobs(arrivals=(1,), weights=(1000.0,), update_ms: float = 36.0) -> HeteroJobs:
    """Jobs with E = 2, D = 2, K = 10 (W = 40), v = 0.1 slot, π = 450 MB (2π/b = 0.02 slot at 0.1 Gbps),
    U^p_j = U_j = ``update_ms`` ms (36 ms = 1e-5 slot)."""
    J = len(arrivals)
    return HeteroJobs(
        arrival=np.array(arrivals), weight=np.array(weights, dtype=float), epochs=np.full(J, 2),
        chunks=np.full(J, 2), batches=np.full(J, 10), v=np.full((J, 1), 0.1),
        ps_update=np.full((J, 1), update_ms / MS_PER_SLOT), ra_update=np.full(J, update_ms / MS_PER_SLOT),
        grad_mb=np.full(J, 450.0),
    )
