"""Speed of ``env.unwrapped.fork`` mid-episode on each default id, against ``copy.deepcopy`` of the env.

For each env id: one episode (``reset(seed)``) is stepped to the middle with a deterministic legal action (the last
legal one; all-ones weights for a continuous action), then each way of copying the env is timed ``--reps`` times:

* ``deepcopy``: ``copy.deepcopy(env.unwrapped)``, the baseline;
* ``fork keep``: ``fork(seed, "keep")``, the true future (clairvoyant);
* ``fork resample (new seed)``: ``fork(seed_i, "resample")`` with a new seed each time (the future is drawn);
* ``fork resample (same seed)``: the same seed again (the drawn future is memoised, as when a rollout policy forks
  with the same seeds at every decision).

Printed: milliseconds per copy, wall (``time.perf_counter``) and CPU (``time.process_time``; the machine may be
shared). Run: ``python benchmarks/fork_speed.py [--envs ID ...] [--reps N]``.
"""

from __future__ import annotations

import argparse
import copy
import time

import gymnasium as gym
import numpy as np

import edgegym

DEFAULT_IDS = ("EdgeCloudML-v0", "EdgeUtility-v0", "HeteroML-v0", "WirelessUDL-v0")


def _num_jobs(u) -> int:
    t = u.inst if getattr(u, "inst", None) is not None else u.jobs
    return int(t.num_jobs)


def _mid_episode(env_id: str, seed: int):
    env = gym.make(env_id)
    env.reset(seed=seed)
    u = env.unwrapped
    for _ in range(_num_jobs(u) // 2):
        if hasattr(u.action_space, "n"):
            a = int(np.flatnonzero(np.asarray(u.action_masks(), dtype=bool))[-1])
        else:
            a = np.ones(u.action_space.shape, dtype=np.float32)
        u.step(a)
    return u


def _time(fn, reps: int) -> tuple[float, float]:
    fn(0)  # warm-up (first-use imports and compilation)
    w, c = time.perf_counter(), time.process_time()
    for i in range(reps):
        fn(i + 1)
    return (time.perf_counter() - w) / reps * 1e3, (time.process_time() - c) / reps * 1e3


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", nargs="+", default=list(DEFAULT_IDS))
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--seed", type=int, default=100)
    args = p.parse_args(argv)
    print(f"edgegym {edgegym.__version__}: ms per copy, mid-episode (wall / CPU), {args.reps} reps")
    print(f"{'env':<18} {'step':>6} {'deepcopy':>15} {'fork keep':>15} {'resample new':>15} {'resample same':>15}")
    for env_id in args.envs:
        u = _mid_episode(env_id, args.seed)
        cols = [
            _time(lambda i, u=u: copy.deepcopy(u), max(3, args.reps // 4)),
            _time(lambda i, u=u: u.fork(seed=0, future="keep"), args.reps),
            _time(lambda i, u=u: u.fork(seed=1000 + i, future="resample"), args.reps),
            _time(lambda i, u=u: u.fork(seed=7, future="resample"), args.reps),
        ]
        cells = " ".join(f"{w:7.2f} / {c:5.2f}" for w, c in cols)
        print(f"{env_id:<18} {u._k:>6} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
