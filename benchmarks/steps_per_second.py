"""Arrival-steps per second of each registered edgegym env (random legal action) vs CartPole-v1.

Usage: ``python benchmarks/steps_per_second.py [--seconds 5] [--scaling]``. Prints one line per env and the ratio to
CartPole (both through ``gym.make``, same process, same machine).
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import edgegym


def steps_per_second(env_id: str, seconds: float, seed: int = 0, config: dict | None = None) -> tuple[float, int]:
    env = gym.make(env_id, config=config) if config else gym.make(env_id)
    env.action_space.seed(seed)
    masked = hasattr(env.unwrapped, "action_masks")
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    steps = episodes = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        if masked and isinstance(env.action_space, gym.spaces.Box):
            a = (rng.random(env.action_space.shape) * env.unwrapped.action_masks()).astype(np.float32)
        elif masked:
            a = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        else:
            a = env.action_space.sample()
        obs, r, term, trunc, _ = env.step(a)
        steps += 1
        if term or trunc:
            episodes += 1
            obs, _ = env.reset(seed=seed + episodes)
    return steps / (time.perf_counter() - t0), episodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=5.0, help="wall time per env")
    ap.add_argument("--scaling", action="store_true", help="also: sim100 steps/s vs edge servers and jobs")
    args = ap.parse_args()
    cart, _ = steps_per_second("CartPole-v1", args.seconds)
    print(f"{'env':<28} {'steps/s':>10} {'episodes':>9} {'vs CartPole':>12}")
    print(f"{'CartPole-v1':<28} {cart:>10.0f} {'':>9} {1.0:>12.4f}")
    for env_id in edgegym.registered_ids():
        sps, eps = steps_per_second(env_id, args.seconds)
        print(f"{env_id:<28} {sps:>10.0f} {eps:>9d} {sps / cart:>12.4f}")
    if args.scaling:
        print("\nscaling (EdgeCloudML-sim100-v0, random legal action; horizon scaled with J for a constant load)")
        print(f"{'edge servers':>12} {'jobs':>6} {'steps/s':>10}")
        for S in (25, 50, 100):
            for J in (100, 300):
                cfg = {"cluster": {"num_edge_servers": S}, "workload": {"num_jobs": J, "horizon_slots": 2500 * J / 300}}
                sps, _ = steps_per_second("EdgeCloudML-sim100-v0", args.seconds, config=cfg)
                print(f"{S:>12} {J:>6} {sps:>10.0f}")


if __name__ == "__main__":
    main()
