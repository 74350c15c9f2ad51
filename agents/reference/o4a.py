"""Zhang et al.'s ``O4A`` (Algorithms 1–2) and ``DO4A`` (Algorithm 3) as dispatch policies of ``EdgeUtility``.

Paper: C. Zhang, H. Tan, H. Huang, Z. Han, S. H.-C. Jiang, G. Li, X.-Y. Li, "Online Approximation Scheme for
Scheduling Heterogeneous Utility Jobs in Edge Computing", IEEE/ACM ToN 2023, Sec. IV, with the corrections
listed below.

Split of responsibilities: the per-server half of O4A (PLAN at commit, fixed executable sets and
power-of-two densities, highest-density-in-set run rule with the practical fallback) is the env's ``o4a``
scheduling discipline (:class:`edgegym.core.utility.O4AScheduler`), which these policies require
(``{"scheduler": {"discipline": "o4a"}}``; on another discipline they dispatch by that discipline's
estimate, which is *not* the paper's algorithm). The dispatch half is here: it reads the env's oracle
``query_finish(rows)`` (the tentative finish time f† that PLAN gives on each queried server, without
committing) and acts **through the env's action space** (a ``Discrete`` row index).

Deviations from the paper (where it is ambiguous or wrong; defaults first, the literal reading as an option):

* Tentative execution time (§IV-B): the executable-set length is ``p† = (1+βε)·p/s``
  (``scheduler.tentative_mode: speed_consistent``, default); the paper's ``(1+βε)/(1+ε)·p`` is
  ``tentative_mode: paper_literal``. Equal at s = 1+ε; on a speed-1 server the literal formula gives p† < p.
* Fallback (described in prose only, §V-B.2): when no job is inside its executable set the server runs the
  highest-density ready job (then earliest d†, then id) — ``scheduler.fallback: density`` (default); ``none``
  is the theory-literal idle rule, ``potential_density`` runs the highest ``g(now + rem/s + Δ↓ − r)/rem``.
* Algorithm 1, garbled or inconsistent lines: upload delay before, download delay after; existing jobs keep
  their own densities; the set is ``[a, d†) \\ B`` (bounded).
* Algorithm 1, levels: γ enumerates distinct density levels; γ = 0 is always feasible; feasibility
  ``u > α·u_γ``; among feasible γ the earliest d† wins, ties to the smaller γ.
* Algorithm 2, dispatch = argmin tentative finish f† = d† + Δ↓; ties → smaller planned p, then smaller row
  index.
* Discretisation (Algorithm 1, lines 3-4): λ ranges over all integers; g = 0 gives density 0; times in
  seconds; floating guard on log2.
* AoN boundary: ``t < c`` as in §V-A.3 (``workload.aon_inclusive`` switches to the ``<=`` of Fig. 2 and
  Theorem 1).
* Cloud (capacity and estimator unspecified): an infinite-capacity delay server estimated by
  ``r + Δ̂↑ + p̂/s + Δ̂↓`` for both O4A and DO4A (``scheduler.cloud: same`` makes it a single processor
  planned with PLAN by O4A).
* Simultaneous releases (order unspecified): dispatched in trace order (one env step each).
* Estimation errors (§V-D.3, distribution unspecified): independent uniform per (job, server, quantity); the
  conservative variant (``estimation.conservative``) plans with ``(1+δ)×`` every estimate (PLAN, cloud
  estimate, DO4A's ranking).
* DO4A's query latency (Fig. 12, semantics unspecified): ℓ is ``env.dispatch_latency_s``: candidates are
  evaluated on the state at r_i, the chosen server commits (re-plans) at r_i + ℓ with ready time
  r_i + ℓ + Δ↑.
* Timeline scrolling: a completed job's future intervals are freed at once (no lazy scrolling).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.edge_utility.utility_fn import tentative_time

from ..policy import Policy, PolicySpec

__all__ = ["O4A", "DO4A", "argmin_finish"]


def argmin_finish(finish: np.ndarray, p_plan: np.ndarray, rows) -> int:
    """Row with the earliest finish among ``rows``; ties → smaller planned p, then smaller row index."""
    rows = [int(r) for r in rows]
    return min(rows, key=lambda r: (finish[r], p_plan[r], r))


class O4A(Policy):
    """O4A's dispatcher (Algorithm 2): query PLAN on every server, send the job to the earliest tentative
    finish time f† (ties: smaller planned p, then index). See the module docstring for deviations."""

    #: servers queried per batch by the exact pruned search (see :meth:`act`)
    batch = 16

    def __init__(self, env, prune: bool = True) -> None:
        super().__init__(env)
        self.prune = bool(prune)

    def _bound_factor(self) -> float:
        """c ≤ 1 with ``f† ≥ r + c·(Δ̂↑ + p̂/s + Δ̂↓)`` on every server: PLAN's set has length p† ≥ c·p̂/s."""
        sc = self.unwrapped.preset.scheduler
        s = self.unwrapped.preset.servers.speed
        return min(1.0, tentative_time(1.0, s, sc.eps, sc.beta, sc.tentative_mode) * s)

    def act(self, obs):
        env = self.unwrapped
        view = env.view()
        rows = np.flatnonzero(view.valid)
        if not self.prune:
            finish = env.query_finish(rows)
            return argmin_finish(finish, view.p_plan_s, rows)
        # Exact branch and bound (same decision as querying every server): a server's tentative finish is at
        # least r + c·LB_j (no queueing), so servers are queried in ascending LB order and the search stops
        # once the next LB-bound exceeds the best f† found (plus 1e-9 s against rounding; a tie needs f† equal
        # to the best, so such a server cannot win). The cloud's estimate equals its bound.
        bound = view.release_s + self._bound_factor() * view.lb_s[rows]
        order = rows[np.lexsort((rows, bound))]
        bsort = np.sort(bound)
        best = np.inf
        done: list[int] = []
        finish = np.full(view.valid.size, np.inf)
        k = 0
        while k < order.size and bsort[k] <= best + 1e-9:
            chunk = [int(r) for r in order[k:k + self.batch]]
            f = env.query_finish(chunk)
            finish[chunk] = f[chunk]
            done.extend(chunk)
            best = min(best, float(f[chunk].min()))
            k += len(chunk)
        return argmin_finish(finish, view.p_plan_s, done)


class DO4A(Policy):
    """DO4A (Algorithm 3): the k edge servers with the smallest ``Δ̂↑ + p̂/s + Δ̂↓`` (ties: index) are
    queried (PLAN, no commit); the cloud is estimated locally with no queueing; the job goes to the earliest
    finish among them (ties as O4A). With ``k ≥`` the number of edge servers, zero latency and the default
    infinite cloud it makes exactly O4A's decisions (tested). Messages per job: ``2k`` (``self.messages``)."""

    def __init__(self, env, k: int = 5) -> None:
        super().__init__(env)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k = int(k)
        self.messages = 0

    def act(self, obs):
        env = self.unwrapped
        view = env.view()
        S = view.num_edge_servers
        lb = view.lb_s[:S]
        cand = [int(r) for r in np.lexsort((np.arange(S), lb))[: self.k]]
        finish = env.query_finish(cand) if cand else np.full(view.valid.size, np.inf)
        self.messages += 2 * len(cand)
        rows = list(cand)
        if view.has_cloud:
            finish = finish.copy()
            finish[-1] = view.release_s + view.lb_s[-1]  # local estimate: no queueing (Alg. 3 line 2)
            rows.append(view.valid.size - 1)
        return argmin_finish(finish, view.p_plan_s, rows)


POLICY_SPECS = (
    PolicySpec(
        "o4a",
        lambda env, seed: O4A(env),
        ("EdgeUtility",),
        "O4A (PLAN + earliest tentative finish) of Zhang et al., IEEE/ACM ToN 2023",
        {"scheduler": {"discipline": "o4a"}},
    ),
    PolicySpec(
        "do4a",
        lambda env, seed: DO4A(env, k=5),
        ("EdgeUtility",),
        "DO4A (k=5 candidates + cloud) of Zhang et al., IEEE/ACM ToN 2023",
        {"scheduler": {"discipline": "o4a"}},
    ),
)
