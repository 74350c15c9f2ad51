"""Decisions per second of each policy on each EdgeCloudML preset.

Usage: ``python benchmarks/decisions_per_second.py [--episodes 3] [--env ID ...] [--policy NAME ...]``.

Two figures per (env, policy):
* ``decide/s``: calls of the policy's ``predict`` per second (the policy's own work; for A_online this is
  A_greedy's water-filling on the Q table, reading the env's view);
* ``steps/s``: whole env steps per second with that policy, which includes the simulator's CALCULATEQ over
  every qualified worker (the Q table is part of the observation, computed at every step for any policy),
  placement, HAPRF re-planning and the drain. This is the number to compare with other simulators.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edgegym.agents.runner import run_episode  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--env", nargs="*", default=["EdgeCloudML-testbed-v0", "EdgeCloudML-v0"])
    ap.add_argument("--policy", nargs="*", default=["aonline", "aonline-e", "random", "all-cloud"])
    args = ap.parse_args()
    print(f"{'env':<26} {'policy':<10} {'decide/s':>10} {'steps/s':>9} {'episode s':>10}")
    for env_id in args.env:
        for policy in args.policy:
            recs = [run_episode(env_id, policy, seed) for seed in range(args.episodes)]
            steps = sum(r["steps"] for r in recs)
            wall = sum(r["wall_s"] for r in recs)
            decide = steps / sum(r["steps"] / r["decisions_per_s"] for r in recs)
            print(f"{env_id:<26} {policy:<10} {decide:>10.0f} {steps / wall:>9.1f} {wall / len(recs):>10.2f}")


if __name__ == "__main__":
    main()
