"""The baselines of Zhang et al., "Online Approximation Scheme for Scheduling Heterogeneous Utility Jobs in Edge
Computing", IEEE/ACM ToN 2023, §V-A.5, for ``EdgeUtility``: ``OnDisc``, ``Random`` (re-exported) and the offline
Upper Bound on total utility.

* ``OnDisc`` (paper refs [4]/[28]): dispatch to the server whose planned total JRT increases least when the job is added
  (``env.jrt_increase()``: what-if preemptive SRPT with the current remaining work and no future arrivals; the cloud:
  Δ̂↑ + p̂ + Δ̂↓); servers run preemptive SRPT — the env's ``srpt`` discipline, which the policy's registry entry sets.
  Unit weights (the paper does not give OnDisc's weights). Ties → smaller row index.
* ``Random``: :class:`edgegym.agents.policy.RandomPolicy` (uniform over the legal rows, i.e. all edge servers and the
  cloud if present); the paper's server rule "highest potential utility" is the env's ``hpu`` discipline.
* Upper Bound: ``Σ_i max_j g_i(p_ij/s + Δ↑_ij + Δ↓_ij)`` with the true values (no queueing), which bounds the
  offline optimum at the same speed (not a speed-augmented run's: compare at equal speed).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.edge_utility.simulator import upper_bound

from ..policy import Policy, PolicySpec, RandomPolicy

__all__ = ["AllCloud", "AllEdgeShortestQueue", "OnDisc", "RandomPolicy", "upper_bound_total"]


class OnDisc(Policy):
    """OnDisc: least increase of the planned total job response time; servers run SRPT."""

    batch = 16

    def __init__(self, env, prune: bool = True) -> None:
        super().__init__(env)
        self.prune = bool(prune)

    def act(self, obs):
        env = self.unwrapped
        if not self.prune:
            return int(np.argmin(env.jrt_increase()))
        # Exact branch and bound (same decision as evaluating every server): adding a job never shortens
        # the other jobs' planned JRTs and its own is at least LB_j = Δ̂↑ + p̂/s + Δ̂↓, so Inc_j ≥ LB_j;
        # servers are evaluated in ascending LB order until the next LB exceeds the best Inc (+1e-9 s).
        view = env.view()
        rows = np.flatnonzero(view.valid)
        lb = view.lb_s[rows]
        order = rows[np.lexsort((rows, lb))]
        lsort = np.sort(lb)
        best = np.inf
        inc = np.full(view.valid.size, np.inf)
        k = 0
        while k < order.size and lsort[k] <= best + 1e-9:
            chunk = [int(r) for r in order[k:k + self.batch]]
            v = env.jrt_increase(chunk)
            inc[chunk] = v[chunk]
            best = min(best, float(v[chunk].min()))
            k += len(chunk)
        return int(np.argmin(inc))

    def advance(self, steps: int | None, total: float):
        """The env's compiled OnDisc loop (``EdgeUtilityEnv.advance_ondisc``, with this policy's ``prune`` and
        ``batch``): the same actions, env state and rewards as :meth:`act` + ``step`` (tested on the v0, v1 and tiny
        presets), without the observations in between; a step the loop does not take (the cloud's delay server has an
        event in it) is taken with :meth:`act` + ``step``. Where it stops after the loop, the observation is not built
        either: ``(None, steps taken, total)`` (``env.observe()`` builds it, the same). ``None`` on a wrapped env (a
        wrapper may change what a step returns) or where the env has no such loop (see ``advance_ondisc``)."""
        env = self.unwrapped
        if self.env is not env or not hasattr(env, "advance_ondisc"):
            return None
        taken, obs = 0, None
        while True:
            res = env.advance_ondisc(None if steps is None else steps - taken, total, prune=self.prune,
                                     batch=self.batch, observe=False)
            if res is None:
                return None if taken == 0 else (obs, taken, total)
            obs, n, total, more = res
            taken += n
            if not more or (steps is not None and taken >= steps) or env._k >= env._J - 1:
                return obs, taken, total
            obs, r, _, _, _ = env.step(self.act(obs))
            total += float(r)
            taken += 1


class AllEdgeShortestQueue(Policy):
    """Trivial: the edge server with the fewest unfinished jobs (ties: smaller planned no-queue finish, then index);
    never the cloud. Servers run FIFO (its registry entry), so nothing but the queue length is looked at."""

    def act(self, obs):
        view = self.unwrapped.view()
        S = view.num_edge_servers
        if S == 0:
            return view.max_edge_servers  # the cloud row, the only one there is
        q = view.queue_length[:S]
        return int(np.lexsort((np.arange(S), view.lb_s[:S], q))[0])


class AllCloud(Policy):
    """Trivial: every job to the cloud row; on a preset without a cloud, :class:`AllEdgeShortestQueue`'s server."""

    def act(self, obs):
        view = self.unwrapped.view()
        if view.has_cloud:
            return view.max_edge_servers
        return AllEdgeShortestQueue.act(self, obs)


def upper_bound_total(env) -> float:
    """The paper's Upper Bound on total utility for the env's current episode (call after ``reset``)."""
    u = env.unwrapped
    return float(upper_bound(u.jobs, u.preset.servers.speed).sum())


POLICY_SPECS = (
    PolicySpec(
        "ondisc",
        lambda env, seed: OnDisc(env),
        ("EdgeUtility",),
        "OnDisc: least JRT increase, SRPT servers",
        {"scheduler": {"discipline": "srpt"}},
    ),
    PolicySpec(
        "all-edge",
        lambda env, seed: AllEdgeShortestQueue(env),
        ("EdgeUtility",),
        "trivial: the edge server with the shortest queue, never the cloud; FIFO servers",
        {"scheduler": {"discipline": "fifo"}},
    ),
    PolicySpec(
        "all-cloud",
        lambda env, seed: AllCloud(env),
        ("EdgeUtility",),
        "trivial: every job to the cloud (shortest edge queue on presets without one); FIFO servers",
        {"scheduler": {"discipline": "fifo"}},
    ),
    PolicySpec(
        "random",
        lambda env, seed: RandomPolicy(env, seed),
        ("EdgeUtility",),
        "uniformly random legal server; servers run highest potential utility first, as the Random baseline of "
        "Zhang et al. (ToN 2023)",
        env_config_by_family={"EdgeUtility": {"scheduler": {"discipline": "hpu"}}},
    ),
)
