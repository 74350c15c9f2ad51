"""Where a random-legal WirelessUDL step spends its time: microseconds per step by part, and a cProfile table.

Usage::

    python benchmarks/wireless_udl_profile.py [--env WirelessUDL-v1] [--steps 3000] [--top 15]

Runs the loop of ``benchmarks/steps_per_second.py`` (``gym.make``, a uniform random legal action from
``action_masks()``, a reset when an episode ends) for ``--steps`` steps after a warm-up (compiled kernels load on
first use). First without the profiler: CPU microseconds per step (``time.process_time``, resets included), then the
wall microseconds per step inside each part, measured around the calls themselves (the commit mode's one-call
step: the compiled ``commit_step``, which commits the row, builds the next job's candidate table and its
observation, and ``WirelessUDLEnv._commit_step`` with its Python glue; the kernels the other paths call from
Python, a reset's first table and a ``Plan`` step: the candidate table, the committed plan, the observation;
``Simulator.commit``, ``candidates._table`` and ``_observation`` with their glue; ``reset`` amortised over the
steps; the action pick of the benchmark loop). Then the same loop under cProfile, the ``--top`` functions by own
time (a compiled kernel is one call: its time is the kernel's). Compare figures of runs made back to back: the
machine may be shared.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import edgegym  # noqa: E402, F401
from edgegym.families.wireless_udl import _kernels as kn  # noqa: E402
from edgegym.families.wireless_udl import env as env_mod  # noqa: E402
from edgegym.families.wireless_udl import simulator  # noqa: E402

PARTS = [  # (label, owner, attribute)
    ("one-call step (kernel commit_step)", kn, "commit_step"),
    ("one-call step (kernel + glue, _commit_step)", env_mod.WirelessUDLEnv, "_commit_step"),
    ("candidate table (kernel, other paths)", kn, "candidate_table"),
    ("candidate table (kernel + glue, candidates._table)", env_mod, "_table"),
    ("committed plan (kernel, other paths)", kn, "commit_plan"),
    ("Simulator.commit (kernel + glue)", simulator.Simulator, "commit"),
    ("observation (kernel, other paths)", kn, "observe"),
    ("_observation (kernel + glue)", env_mod.WirelessUDLEnv, "_observation"),
    ("reset (amortised)", env_mod.WirelessUDLEnv, "reset"),
]


def _loop(env, rng: np.random.Generator, steps: int, pick: list | None = None) -> int:
    u = env.unwrapped
    episodes = 0
    for _ in range(steps):
        t0 = time.perf_counter_ns()
        a = int(rng.choice(np.flatnonzero(u.action_masks())))
        if pick is not None:
            pick[0] += time.perf_counter_ns() - t0
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
            episodes += 1
    return episodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", default="WirelessUDL-v0")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    if args.steps < 1:
        raise SystemExit(f"--steps must be >= 1, got {args.steps}")
    env = gym.make(args.env)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    _loop(env, rng, 200)  # warm-up (kernels load, the passive checker's first calls)

    t0 = time.process_time()
    episodes = _loop(env, rng, args.steps)
    cpu = time.process_time() - t0
    print(f"{args.env}: {cpu / args.steps * 1e6:.1f} CPU us per step ({args.steps / cpu:.0f} steps per CPU second), "
          f"{episodes} episodes")

    acc: collections.Counter = collections.Counter()
    saved = []
    for label, owner, name in PARTS:
        f = getattr(owner, name)
        saved.append((owner, name, f))

        def timed(*a, _f=f, _label=label, **k):
            t = time.perf_counter_ns()
            try:
                return _f(*a, **k)
            finally:
                acc[_label] += time.perf_counter_ns() - t

        setattr(owner, name, timed)
    pick = [0]
    try:
        _loop(env, rng, args.steps, pick)
    finally:
        for owner, name, f in saved:
            setattr(owner, name, f)
    print("wall us per step inside each part (nested parts are included in their callers):")
    for label, *_ in PARTS:
        print(f"  {label:<36} {acc[label] / args.steps / 1e3:8.1f}")
    print(f"  {'random legal action pick':<36} {pick[0] / args.steps / 1e3:8.1f}")

    prof = cProfile.Profile()
    prof.enable()
    _loop(env, rng, args.steps)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
