"""Decisions per CPU-second of ``aonline-hetero-now``, its search as shipped against the plain search.

Usage::

    python benchmarks/aonline_hetero_now_speed.py [--env HeteroML-v0] [--seeds 0 1] [--jobs N] [--skip-unpruned]

For each seed, runs one episode with the shipped policy and, unless ``--skip-unpruned``, one with the plain search
(``mincost(..., prune=False)``: no bounds, no per-window pool, numpy's argsort; one sub-round state built per
window, ``AOnlineNowCore.share_windows = False``, so no window arrays kept across decisions either; its derived
arrays built by whole-array numpy, ``SubRound.compiled = False``: the policy as it was before these speed-ups),
checks that both take the same actions and reach the same objective, and prints the decisions per CPU-second of each
(the policy's ``predict`` calls only, ``time.process_time``, so the figures hold on a shared machine). ``--jobs`` shortens the
episode (``workload.num_jobs``). The first episode runs after a one-step warm-up, so kernel compilation is not
counted.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import edgegym.agents.reference.hetero_ml as ref  # noqa: E402
from edgegym.agents.runner import make_env  # noqa: E402

from edgegym.families.hetero_ml.mincost import SubRound, mincost  # noqa: E402


def episode(env_id: str, seed: int, config: dict | None, prune: bool) -> tuple[list, float, float]:
    """(actions, objective, decision CPU seconds) of one ``aonline-hetero-now`` episode."""
    ref.mincost = functools.partial(mincost, prune=prune)
    ref.AOnlineNowCore.share_windows = prune
    SubRound.compiled = prune
    try:
        env, pol = make_env(env_id, "aonline-hetero-now", seed, config)
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        actions, cpu, done, info = [], 0.0, False, {}
        while not done:
            c = time.process_time()
            action, _ = pol.predict(obs, deterministic=True)
            cpu += time.process_time() - c
            actions.append(action)
            obs, _, term, trunc, info = env.step(action)
            done = term or trunc
        env.close()
    finally:
        ref.mincost = mincost
        ref.AOnlineNowCore.share_windows = True
        SubRound.compiled = True
    return actions, float(info["episode_metrics"]["objective"]), cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="HeteroML-v0")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--jobs", type=int, default=None, help="workload.num_jobs (default: the preset's)")
    ap.add_argument("--skip-unpruned", action="store_true", help="time the pruned search only")
    args = ap.parse_args()
    config = {"workload": {"num_jobs": args.jobs}} if args.jobs else None
    episode(args.env, args.seeds[0], {"workload": {"num_jobs": 2}}, True)  # warm-up: load the compiled kernels
    print(f"{'env':<14} {'seed':>4} {'steps':>5} {'shipped dec/CPU-s':>17} {'plain dec/CPU-s':>16} {'identical':>9}")
    for seed in args.seeds:
        acts, obj, cpu = episode(args.env, seed, config, True)
        old, same = "-", "-"
        if not args.skip_unpruned:
            acts0, obj0, cpu0 = episode(args.env, seed, config, False)
            old = f"{len(acts0) / cpu0:.1f}"
            same = str(obj == obj0 and all(_same(a, b) for a, b in zip(acts, acts0, strict=True)))
        print(f"{args.env:<14} {seed:>4} {len(acts):>5} {len(acts) / cpu:>17.1f} {old:>16} {same:>9}")


def _same(a, b) -> bool:
    """Whether two actions (Placements or arrays) are equal field by field."""
    import numpy as np

    if hasattr(a, "__dataclass_fields__"):
        return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    return bool(np.array_equal(a, b))


if __name__ == "__main__":
    main()
