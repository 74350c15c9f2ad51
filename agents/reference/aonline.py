"""Wang et al.'s online algorithm ``A_online`` = ``A_greedy`` + ``A_ps``, and its edge-only variant ``A_online-E``.

Paper: N. Wang, R. Zhou, L. Jiao, R. Zhang, B. Li, Z. Li, "Preemptive Scheduling for Distributed Machine Learning Jobs
in Edge-Cloud Networks", IEEE JSAC 40(8), 2022, §IV-C–§IV-D, Algorithms 1-5, with the corrections listed below.

What this policy decides, per arriving job (the env step): where each of its D_j chunks goes, by
``A_greedy`` (Alg. 2): CALCULATEQ (Alg. 3, Eq. (5)) on every qualified edge worker, the whole job to the
cloud if ``Qc1 < min_w Q_w``, otherwise chunk-by-chunk water-filling on ``Q_w + k_w·p/D_j`` against the
cloud's ``Qc0``. It reads the env's read-only view (the Q table is computed by the simulator from the
projected HAPRF plans) and acts **through the env's action space**: its placement is encoded as the
``server_proportions`` action ``counts_s / D_j`` or the ``cloud_split`` action ``x_cloud``; the env's
decoder (within-server Q-min water-filling, the same tie-breaks) reproduces it exactly (tested).
HAPRF execution, preemption (postponement of A2 chunks) and ``A_ps`` are deterministic rules the
simulator runs between arrivals, whoever decides the placement.

Deviations from the paper (where it is ambiguous or wrong):

* Alg. 2, lines 21-24: a chunk is committed with the selected candidate's (Q, t*, A2), then the candidate's Q
  is updated by the exact O(1) rule Q += p/D_j (the paper's line order would use the next chunk's values).
* Algs. 2-3, ζ handling: ζ is passed explicitly (Alg. 3 sets ζ_j = 1 where Alg. 2 calls it to reset it):
  Qc1 decides only the first chunk; after that the cloud candidate is Qc0.
* Alg. 1, line 4: A_ps runs over all arrived, unfinished jobs, not only the new arrivals.
* "Pending" chunks of Eq. (5): remaining times at t0 = r_j + Δ_js come from projecting the current plan
  forward with no new arrivals; "pending" includes dispatched chunks not yet released.
* Slot granularity: continuous, event-driven time (arrivals and Δ on integer slots); c_jd is the end of
  service.
* Alg. 4 (plan shifting): HAPRF simulation is the ground truth for execution; the paper's slot-plan shifting
  is not stored.
* Tie-breaking (unspecified in the paper): ties are broken lexicographically by (Q, server index, worker
  index); the cloud loses exact ties.
* A_online-E with no qualified edge worker (unspecified in the paper): the job falls back to the whole-job
  cloud (ζ = 1), counted in the env's ``fallbacks`` metric.
* Alg. 5 with no free qualified PS: the job gets a cloud PS (never changes timing).
* A_ps runs as one sweep over the executed trace at the end of the episode, since a PS never changes
  a processing time in this model (see ``edgegym.core.engine``).
"""

from __future__ import annotations

import math

import numpy as np

from edgegym.families.edge_cloud.env import CLOUD_LEVELS, EdgeCloudView
from edgegym.families.edge_cloud.simulator import _kernels

from ..policy import Policy, PolicySpec

__all__ = ["AOnline", "a_greedy", "encode_action"]


def a_greedy(view: EdgeCloudView, edge_only: bool = False) -> tuple[np.ndarray, int]:
    """A_greedy's placement of the pending job: ``(worker_counts (W,), num_cloud)`` (Alg. 2)."""
    cloud_on = view.has_cloud and view.use_cloud and not edge_only
    qc0, qc1 = (view.qc0, view.qc1) if cloud_on else (math.inf, math.inf)
    counts = np.zeros(view.q.size, dtype=np.int64)
    n_cloud = _kernels().greedy(view.q, view.worker_order, view.num_chunks, view.p_edge, qc0, qc1, counts)
    if n_cloud < 0:  # no qualified edge worker and the cloud off: whole job to the cloud (paper: unspecified)
        return counts, view.num_chunks
    return counts, int(n_cloud)


def encode_action(view: EdgeCloudView, worker_counts: np.ndarray, num_cloud: int):
    """The action of ``view.action_mode`` that the env decodes back to this placement."""
    if view.action_mode == "cloud_split":
        return int(num_cloud)
    if view.action_mode == "cloud_fraction":  # A_greedy's own split is an action; otherwise the nearest share
        g_counts, g_cloud = a_greedy(view)
        if g_cloud == int(num_cloud) and np.array_equal(g_counts, np.asarray(worker_counts)):
            return CLOUD_LEVELS + 1
        return int(math.floor(int(num_cloud) / view.num_chunks * CLOUD_LEVELS + 0.5))
    out = np.empty(view.max_edge_servers + 1, dtype=np.float32)  # counts per server / D_j, then the cloud's
    _kernels().server_shares(view.worker_server, np.ascontiguousarray(worker_counts, dtype=np.int64),
                             view.num_edge_servers, int(num_cloud), view.num_chunks, out)
    return out


class AOnline(Policy):
    """``A_online`` (``edge_only=False``) or ``A_online-E`` (``edge_only=True``) on an ``EdgeCloudML`` env."""

    def __init__(self, env, edge_only: bool = False) -> None:
        super().__init__(env)
        self.edge_only = edge_only

    def act(self, obs):
        view = self.unwrapped.view(copy=False)  # read-only arrays, no copies (the decisions are the same)
        counts, n_cloud = a_greedy(view, self.edge_only)
        return encode_action(view, counts, n_cloud)

    def fork(self, env) -> AOnline:
        """This policy bound to ``env`` (its only state is ``edge_only``): what :meth:`Policy.fork` gives, without
        its generic copy (a rollout forks the base once per continuation)."""
        if type(self) is not AOnline or vars(self).keys() != {"env", "unwrapped", "edge_only"}:
            return super().fork(env)
        new = object.__new__(AOnline)
        new.env, new.unwrapped, new.edge_only = env, env.unwrapped, self.edge_only
        return new

    def advance(self, steps: int | None, total: float):
        """The env's compiled A_greedy loop (``EdgeCloudMLEnv.advance_aonline``): the same placements, state and
        rewards as stepping with :meth:`act`'s actions (tested in every action mode), with no observation built
        where it stops (``None``: the env's ``observe()`` builds it if a caller needs it); ``None`` on a wrapped
        env (a wrapper may change what a step returns) or another discipline."""
        env = self.unwrapped
        if self.env is not env or getattr(env, "discipline", None) != "paper":
            return None
        return env.advance_aonline(steps, edge_only=self.edge_only, total=total, observe=False)

    def advance_after(self, key, steps: int | None, total: float, last: bool = False):
        """:meth:`advance` with the first step's placement given by its ``action_key`` (``key``), in the same
        compiled loop (``EdgeCloudMLEnv.advance_aonline(first=key, last=last)``); ``None`` where :meth:`advance`
        is."""
        env = self.unwrapped
        if self.env is not env or getattr(env, "discipline", None) != "paper":
            return None
        return env.advance_aonline(steps, edge_only=self.edge_only, total=total, observe=False, first=key, last=last)

    def score_after(self, key, steps: int, total: float) -> float | None:
        """:meth:`advance_after`'s total without changing the env (``EdgeCloudMLEnv.score_aonline``); ``None``
        where that declines or where :meth:`advance` is ``None``."""
        env = self.unwrapped
        if self.env is not env or getattr(env, "discipline", None) != "paper":
            return None
        return env.score_aonline(steps, key, edge_only=self.edge_only, total=total)


POLICY_SPECS = (
    PolicySpec("aonline", lambda env, seed: AOnline(env), ("EdgeCloudML",),
               "A_online (A_greedy + A_ps) of Wang et al., IEEE JSAC 2022"),
    PolicySpec(
        "aonline-e", lambda env, seed: AOnline(env, edge_only=True), ("EdgeCloudML",), "A_online-E (edge only)"
    ),
)
