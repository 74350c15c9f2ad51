"""Trivial placement baselines for ``EdgeCloudML`` (not in the paper; simple reference points): all-cloud, all-edge
least-loaded."""

from __future__ import annotations

import numpy as np

from edgegym.families.edge_cloud.simulator import water_fill

from ..policy import NoOpPolicy, Policy, PolicySpec, RandomPolicy
from ..reference.aonline import encode_action

__all__ = ["AllCloud", "AllEdgeLeastLoaded"]


class AllCloud(Policy):
    """Every job entirely in the cloud (ζ_j = 1); edge-only clusters fall back to the edge (water-filled)."""

    def act(self, obs):
        view = self.unwrapped.view()
        if not view.has_cloud:
            return encode_action(view, *_edge_fill(view))
        return encode_action(view, np.zeros(view.q.size, dtype=np.int64), view.num_chunks)


def _edge_fill(view):
    counts = water_fill(view.q, view.p_edge / view.num_chunks, view.num_chunks, view.worker_order)
    return counts, 0


class AllEdgeLeastLoaded(Policy):
    """All of a job's chunks on the one edge server whose qualified workers can start it earliest
    (minimum over its workers of the HAPRF start t*), water-filled within that server; cloud if none qualify."""

    def act(self, obs):
        view = self.unwrapped.view()
        finite = np.isfinite(view.q)
        if not finite.any():
            return encode_action(view, np.zeros(view.q.size, dtype=np.int64), view.num_chunks)
        best_w = min(np.flatnonzero(finite), key=lambda w: (view.t_star[w], view.worker_order[w]))
        server = view.worker_server[best_w]
        q = np.where(view.worker_server == server, view.q, np.inf)
        counts = water_fill(q, view.p_edge / view.num_chunks, view.num_chunks, view.worker_order)
        return encode_action(view, counts, 0)


_FAM = ("EdgeCloudML",)

#: the paper's baselines decide inside the simulator (a scheduling discipline); the env's action is a no-op
_DISCIPLINE_BASELINES = (
    ("srtf", "srtf", "SRTF, job-level, gang, edge-only"),
    ("tiresias-l", "tiresias_l", "Tiresias-L, 2-queue LAS"),
    ("batchsche", "batchsche", "BatchSche, batched, edge+cloud"),
)

POLICY_SPECS = (
    *(
        PolicySpec(name, lambda env, seed: NoOpPolicy(env), _FAM, f"{desc} (baseline of Wang et al., IEEE JSAC 2022)",
                   {"env": {"discipline": d}})
        for name, d, desc in _DISCIPLINE_BASELINES
    ),
    PolicySpec("random", lambda env, seed: RandomPolicy(env, seed), _FAM, "uniformly random legal action"),
    PolicySpec("all-cloud", lambda env, seed: AllCloud(env), _FAM, "every job entirely in the cloud"),
    PolicySpec(
        "all-edge",
        lambda env, seed: AllEdgeLeastLoaded(env),
        _FAM,
        "every job on the edge server that can start it earliest",
    ),
)
