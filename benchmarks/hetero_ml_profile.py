"""Where a random-legal HeteroML step spends its time: per-step CPU microseconds and a cProfile table.

Usage::

    python benchmarks/hetero_ml_profile.py [--env HeteroML-v1] [--steps 3000] [--top 20]

Runs the same loop as ``benchmarks/steps_per_second.py`` (``gym.make``, a uniform random legal action from
``action_masks()``, reset with the next seed when an episode ends) for ``--steps`` steps after one warm-up step
(compiled kernels load on first use): first without the profiler, printing CPU microseconds per step (resets
included) and per reset, then under cProfile, printing the ``--top`` functions by own time (the compiled kernels
appear as single calls: their time is the kernel's). Figures are per CPU second (``time.process_time``), so they
hold on a shared machine; compare runs made back to back.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import edgegym  # noqa: E402, F401


def _legal(env, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))


def run(env_id: str, steps: int, seed: int = 0) -> tuple[float, float, int]:
    """(CPU microseconds per step, CPU microseconds per reset, episodes) of ``steps`` random legal steps."""
    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    env.step(_legal(env, rng))
    env.reset(seed=seed)
    episodes, reset_cpu = 0, 0.0
    c0 = time.process_time()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(_legal(env, rng))
        if term or trunc:
            episodes += 1
            r0 = time.process_time()
            env.reset(seed=seed + episodes)
            reset_cpu += time.process_time() - r0
    cpu = time.process_time() - c0
    env.close()
    return cpu / steps * 1e6, reset_cpu / max(episodes, 1) * 1e6, episodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="HeteroML-v1")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    us, reset_us, eps = run(args.env, args.steps)
    print(f"{args.env}: {us:.1f} CPU us per step (resets included; {1e6 / us:.0f} steps per CPU second), "
          f"{reset_us:.0f} CPU us per reset, {eps} episodes")
    prof = cProfile.Profile()
    prof.enable()
    run(args.env, args.steps)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
