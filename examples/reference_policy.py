"""Run each family's reference policy (the paper's algorithm) through the one episode runner; print metrics.

    python examples/reference_policy.py
"""

from edgegym.agents.runner import default_policy, run_episode

for env_id in ("EdgeCloudML-testbed-v0", "EdgeUtility-tiny-v0"):
    policy = default_policy(env_id)  # aonline on EdgeCloudML, o4a on EdgeUtility
    rec = run_episode(env_id, policy, seed=0)
    print(f"{env_id} | {policy}: objective {rec['objective']:.4g}, return {rec['episode_return']:.4g}, "
          f"{rec['steps']} decisions in {rec['wall_s']:.2f} s")
    for key in ("avg_jct", "p95_jct", "preemptions", "total_utility", "deadline_miss_rate"):
        if key in rec:
            print(f"    {key:<20} {rec[key]:.4g}")
