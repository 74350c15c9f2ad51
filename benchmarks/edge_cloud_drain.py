"""CPU cost of an EdgeCloudML episode's end: A_ps's per-job running intervals (``job_intervals``) against the sorted
sweep it replaced (``job_intervals_sorted``, kept as the reference), on the whole executed logs of random-legal
episodes, and the last step (the drain) and the reset per episode.

Usage: ``python benchmarks/edge_cloud_drain.py [--env EdgeCloudML-v0] [--episodes 5] [--repeats 50]``.

Per episode (seeds 0, 1, ...): random legal actions to the last step, whose drain's ``job_intervals`` call is
recorded; then both kernels run alternately ``--repeats`` times each on the recorded arguments (CPU clock,
``time.process_time``), their outputs compared (``==``). Prints the log's rows, the two kernels' µs per call (median
over episodes) and the median CPU ms of the last step and of the reset that follows it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import edgegym  # noqa: E402,F401  (registers the ids)
from edgegym.families.edge_cloud import _kernels as K  # noqa: E402


def _legal(env, rng):
    mask = np.asarray(env.unwrapped.action_masks())
    if isinstance(env.action_space, gym.spaces.Box):
        return (rng.random(env.action_space.shape) * mask).astype(np.float32)
    return int(rng.choice(np.flatnonzero(mask)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="EdgeCloudML-v0")
    p.add_argument("--episodes", type=int, default=5)
    p.add_argument("--repeats", type=int, default=50)
    args = p.parse_args(argv)
    env = gym.make(args.env)
    rng = np.random.default_rng(0)
    real = K.job_intervals
    seen: list = []

    def record(*a):
        seen.append(a)
        return real(*a)

    K.job_intervals = record
    rows, new, old, last, reset = [], [], [], [], []
    env.reset(seed=0)
    try:
        for ep in range(args.episodes):
            u = env.unwrapped
            while u._k < u._J - 1:
                env.step(_legal(env, rng))
            t = time.process_time()
            env.step(_legal(env, rng))
            last.append(time.process_time() - t)
            t = time.process_time()
            env.reset(seed=ep + 1)
            reset.append(time.process_time() - t)
            a = seen.pop()
            rows.append(a[4] + a[6].size)
            for got, want in zip(real(*a), K.job_intervals_sorted(*a), strict=True):
                if not np.array_equal(got, want):
                    raise SystemExit(f"job_intervals differs from the sorted sweep on episode {ep}")
            tn = to = 0.0
            for _ in range(args.repeats):
                t = time.process_time()
                real(*a)
                tn += time.process_time() - t
                t = time.process_time()
                K.job_intervals_sorted(*a)
                to += time.process_time() - t
            new.append(tn / args.repeats * 1e6)
            old.append(to / args.repeats * 1e6)
    finally:
        K.job_intervals = real
    print(f"{args.env}: {args.episodes} episodes, executed log {int(np.median(rows)):,} rows (median)")
    print(f"  job_intervals (components, no sort): {np.median(new):8.1f} us per call (median)")
    print(f"  job_intervals_sorted (the reference): {np.median(old):8.1f} us per call (median); the same outputs")
    print(f"  last step (the drain) {np.median(last) * 1e3:.2f} ms, reset {np.median(reset) * 1e3:.2f} ms per episode")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
