"""How much of `earliest`'s distance to `aonline-hetero-now` on a HeteroML id lies on placements the grid cannot express.

Usage::

    python benchmarks/hetero_ml_grid_gap.py [--env HeteroML-v1] [--split load-x0.5] [--seeds 20000-20004]

The HeteroML ``-v1`` action is a grid (worker type × worker fraction × co-located/spread × start delay), and the
grid's spread placement puts all of a job's parameter servers on one server. ``aonline-hetero-now`` (A_online with
the minimum-cost search) places any number of workers and spreads its parameter servers. Every grid policy
(``earliest``, ``rollout:earliest``, a learned agent on this action space) is confined to the grid.

Per seed the script runs both policies on the named split (``edgegym eval --split`` names; the test seeds by
default) and prints:

* the objective ratio ``earliest / aonline-hetero-now - 1`` (positive: A_online is ahead);
* how many of A_online's placements have no valid grid action of the same worker type and number of workers
  (the action mask of that job, which is the job's feasibility on an empty cluster);
* the share of the weighted-flow-time difference (Σ w_j (flow_j under earliest − flow_j under A_online)) that lies on
  those jobs. A share near 1 means the distance is in placements a grid policy cannot make.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edgegym.agents.options import parse_seeds  # noqa: E402
from edgegym.agents.protocol import split_overlay  # noqa: E402
from edgegym.agents.runner import make_env  # noqa: E402


def grid_pairs(env) -> set[tuple[int, int]]:
    """(worker type, number of workers) of every valid grid action of the pending job: the env's own decoding of
    its grid actions and its action mask."""
    m4, n4, _, _ = env._job_cfg()
    mask = env.action_masks()
    return set(zip(m4[mask].tolist(), n4[mask].tolist(), strict=True))


def run(env_id: str, policy: str, seed: int, overlay: dict) -> dict:
    """One episode of ``policy``: per job its flow time and weight, and whether its placement is a grid action."""
    env, pol = make_env(env_id, policy, seed, overlay)
    try:
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        u = env.unwrapped
        in_grid, done, info = [], False, {}
        while not done:
            k = u.view().step
            pairs = grid_pairs(u)
            action, _ = pol.predict(obs, deterministic=True)
            obs, _, term, trunc, info = env.step(action)
            done = term or trunc
            m, n = int(u.sim.worker_type[k]), int(u.sim.workers[k].sum())
            in_grid.append((m, n) in pairs)
        flow = (u._completions() - u.jobs.arrival).astype(np.float64)
        return {"in_grid": np.array(in_grid), "flow": flow, "weight": u.jobs.weight.astype(np.float64),
                "objective": float(info["episode_metrics"]["objective"])}
    finally:
        env.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="HeteroML-v1")
    ap.add_argument("--split", default="load-x0.5")
    ap.add_argument("--seeds", default="20000-20004")
    args = ap.parse_args(argv)
    overlay = split_overlay(args.env, args.split)
    print(f"{args.env}, split {args.split}: earliest against aonline-hetero-now")
    print("| seed | earliest / aonline - 1 | A_online placements outside the grid | share of the weighted-flow gap on them |")
    print("|---|---|---|---|")
    gaps, outside_gaps = [], []
    for seed in parse_seeds(args.seeds):
        a = run(args.env, "aonline-hetero-now", seed, overlay)
        e = run(args.env, "earliest", seed, overlay)
        gap = a["weight"] * (e["flow"] - a["flow"])
        out = ~a["in_grid"]
        share = gap[out].sum() / gap.sum() if gap.sum() != 0 else float("nan")
        gaps.append(gap.sum())
        outside_gaps.append(gap[out].sum())
        print(f"| {seed} | {e['objective'] / a['objective'] - 1:+.4f} | {int(out.sum())} of {out.size} | {share:.3f} |")
    if sum(gaps) != 0:
        print(f"all seeds: {sum(outside_gaps) / sum(gaps):.3f} of the weighted-flow gap lies on placements outside the grid")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
