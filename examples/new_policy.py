"""Write a new policy, register it, and run it like any other (CLI, bench, runner).

    python examples/new_policy.py

In the repository, a policy is registered by declaring ``POLICY_SPECS`` in a module of ``agents/reference/``
or ``agents/baselines/``; at run time, ``register_policy`` does the same (see docs/adding_a_policy.md).
"""

import numpy as np
from edgegym.agents.policy import Policy, PolicySpec
from edgegym.agents.registry import register_policy
from edgegym.agents.runner import run_episode


class FastestServer(Policy):
    """EdgeUtility: send each job to the legal server with the smallest no-queue response time (greedy, no
    look at the queues). Reads the env's read-only view and acts through the action space."""

    def act(self, obs):
        view = self.unwrapped.view()
        lb = np.where(view.valid, view.lb_s, np.inf)
        return int(np.argmin(lb))


register_policy(PolicySpec("fastest-server", lambda env, seed: FastestServer(env), ("EdgeUtility",),
                           "the server with the smallest no-queue response time"))

for policy in ("fastest-server", "o4a", "random"):
    objs = [run_episode("EdgeUtility-tiny-v0", policy, seed)["objective"] for seed in range(3)]
    print(f"{policy:<16} total utility {np.mean(objs):.1f} ± {np.std(objs, ddof=1):.1f} (seeds 0-2)")
