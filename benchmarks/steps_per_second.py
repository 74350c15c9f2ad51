"""Arrival-steps per second of every registered edgegym env vs Gymnasium's CartPole-v1, in the same run.

Usage::

    python benchmarks/steps_per_second.py [--seconds 3] [--env ID ...] [--quick] [--episodes-only] [--no-episodes]
                                          [--repeats R]

Three tables, every figure measured in this process on this machine (all envs through ``gym.make``):

1. ``CartPole-v1`` with a random action (the yardstick), then every registered id with a random **legal**
   action (uniform over ``action_masks()``) and with the family's **reference policy**
   (``Family.default_policy``, e.g. A_online, O4A, Okita, with the env overrides it needs); steps/s and the
   ratio to CartPole.
2. Whole episodes: every policy of the ``EdgeUtility`` family on one 4,000-job episode of ``EdgeUtility-v0`` and
   of the paper-literal testbed preset, wall seconds per episode (``--episodes-only`` prints only this table).

Each row runs for ``--seconds`` of wall time (at least one step, after one warm-up step that loads the compiled
kernels), resetting with the next seed when an episode ends; it reports steps per wall second and per CPU second
of the process (the two differ on a shared machine; the CPU figure is the fair one there), each with its ratio to
CartPole's. Each row starts from a collected heap (``gc.collect()`` before its timing; the collector stays on).
``--quick``: 1 s per row and only the default id of each family.

``--repeats R`` (R > 1) replaces the first table by a paired one: per id, R rounds of CartPole then the id, each
``--seconds``, and the median of the R ratios per CPU second with their range. CartPole's own rate moves by
10-30 % between runs on a shared machine; one CartPole row at the start of a long run is a noisy yardstick.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import edgegym  # noqa: E402

EPISODE_ENV = "EdgeUtility-v0"
EPISODE_JOBS = 4000


def _random_legal(env, rng: np.random.Generator):
    u = env.unwrapped
    if hasattr(u, "action_masks"):
        mask = np.asarray(u.action_masks())
        if isinstance(env.action_space, gym.spaces.Box):
            return (rng.random(env.action_space.shape) * mask).astype(np.float32)
        if isinstance(env.action_space, gym.spaces.Discrete) and mask.shape == (env.action_space.n,):
            # The same draw as ``rng.choice(legal)`` (which calls ``integers(0, len)`` itself) without its argument
            # checks: 6.4 -> 2.6 us per pick, a cost the env's figure should not carry.
            legal = np.flatnonzero(mask)
            return int(legal[rng.integers(legal.size)])
    return env.action_space.sample()


def steps_per_second(env_id: str, seconds: float, seed: int = 0, config: dict | None = None):
    """``(steps per wall s, steps per CPU s, completed episodes)`` of ``env_id`` with a random legal action for
    ``seconds`` of wall time (after one warm-up step: compiled kernels load on first use)."""
    env = gym.make(env_id, config=config) if config else gym.make(env_id)
    env.action_space.seed(seed)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    env.step(_random_legal(env, rng))
    env.reset(seed=seed)
    # garbage left by the imports, the kernels' loading and the previous row collected now, not inside this row's
    # timing: a full collection of this process's ~150,000 tracked objects costs ~57 ms of CPU, and one that falls
    # in a row is charged to whichever id happens to run then (``timeit`` turns the collector off; here it stays on)
    gc.collect()
    steps = episodes = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while steps == 0 or time.perf_counter() - t0 < seconds:
        _, _, term, trunc, _ = env.step(_random_legal(env, rng))
        steps += 1
        if term or trunc:
            episodes += 1
            env.reset(seed=seed + episodes)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return steps / wall, steps / max(cpu, 1e-9), episodes


def policy_steps_per_second(env_id: str, policy: str, seconds: float, seed: int = 0):
    """As :func:`steps_per_second`, with the actions of a registered policy (env build and warm-up excluded)."""
    from edgegym.agents.runner import make_env

    env, pol = make_env(env_id, policy, seed)
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    env.step(pol.predict(obs, deterministic=True)[0])
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    gc.collect()  # as in steps_per_second
    steps = episodes = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while steps == 0 or time.perf_counter() - t0 < seconds:
        action, _ = pol.predict(obs, deterministic=True)
        obs, _, term, trunc, _ = env.step(action)
        steps += 1
        if term or trunc:
            episodes += 1
            obs, _ = env.reset(seed=seed + episodes)
            pol.reset(seed + episodes)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    env.close()
    return steps / wall, steps / max(cpu, 1e-9), episodes


def episode_time(env_id: str, policy: str, seed: int, config: dict) -> dict:
    """One whole episode of ``policy`` (the runner's env and policy, :func:`edgegym.agents.runner.make_env`): steps, wall
    and CPU seconds from the first step to the last (env build and reset excluded), objective."""
    from edgegym.agents.runner import make_env

    env, pol = make_env(env_id, policy, seed, config)
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    done, steps, info = False, 0, {}
    t0, c0 = time.perf_counter(), time.process_time()
    while not done:
        action, _ = pol.predict(obs, deterministic=True)
        obs, _, term, trunc, info = env.step(action)
        steps += 1
        done = term or trunc
    out = {"steps": steps, "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
           "objective": info["episode_metrics"]["objective"]}
    env.close()
    return out


def episode_table(env_ids: list[str], seed: int = 0, policies: list[str] | None = None) -> None:
    """Seconds of one whole :data:`EPISODE_JOBS`-job episode of each env under every policy of its family."""
    from edgegym.agents.registry import policy_names
    from edgegym.agents.runner import env_family

    print(f"\nwhole episodes of {EPISODE_JOBS} jobs, seed {seed} (first step to last; env build and reset excluded; "
          "after a 20-job warm-up episode)")
    print(f"{'env':<38} {'policy':<12} {'jobs':>6} {'wall s':>8} {'CPU s':>7} {'steps/s':>9} {'objective':>12}")
    for env_id in env_ids:
        for policy in policy_names(env_family(env_id)):
            if policies and policy not in policies:
                continue
            episode_time(env_id, policy, seed, {"workload": {"num_jobs": 20}})  # warm-up: load compiled kernels
            rec = episode_time(env_id, policy, seed, {"workload": {"num_jobs": EPISODE_JOBS}})
            print(f"{env_id:<38} {policy:<12} {rec['steps']:>6d} {rec['wall_s']:>8.2f} {rec['cpu_s']:>7.2f} "
                  f"{rec['steps'] / rec['wall_s']:>9.0f} {rec['objective']:>12.2f}", flush=True)


def paired_ratios(env_id: str, seconds: float, repeats: int) -> tuple[list[float], list[float], list[float]]:
    """``(CartPole steps per CPU s, env_id's, their ratios)``, one per round; each round measures CartPole-v1 and
    then ``env_id`` (random legal action, seed 0) for ``seconds`` each, so that the machine's drift between rounds
    (CartPole's rate moves by 10-30 % between runs on a shared machine) falls on both sides of a ratio."""
    carts, envs, ratios = [], [], []
    for _ in range(repeats):
        cart = steps_per_second("CartPole-v1", seconds)[1]
        rate = steps_per_second(env_id, seconds)[1]
        carts.append(cart)
        envs.append(rate)
        ratios.append(rate / cart)
    return carts, envs, ratios


def paired_table(env_ids: list[str], seconds: float, repeats: int) -> None:
    """Print, per id, the medians of :func:`paired_ratios` and the ratio's range over the rounds."""
    print(f"{'env':<38} {'rounds':>6} {'CartPole/CPU-s':>14} {'steps/CPU-s':>11} {'median ratio':>12} "
          f"{'min':>7} {'max':>7}")
    for env_id in env_ids:
        carts, envs, ratios = paired_ratios(env_id, seconds, repeats)
        print(f"{env_id:<38} {repeats:>6d} {np.median(carts):>14.0f} {np.median(envs):>11.0f} "
              f"{np.median(ratios):>12.4f} {min(ratios):>7.4f} {max(ratios):>7.4f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="wall time per row")
    ap.add_argument("--env", nargs="*", default=None, help="env ids (default: every registered id)")
    ap.add_argument("--quick", action="store_true", help="1 s per row, only each family's default id")
    ap.add_argument("--episodes-only", action="store_true", help="only the whole-episode table")
    ap.add_argument("--no-episodes", action="store_true", help="skip the whole-episode table")
    ap.add_argument("--episode-env", nargs="*", default=None,
                    help=f"envs of the whole-episode table (default: {EPISODE_ENV} and its paper-literal testbed)")
    ap.add_argument("--episode-policies", nargs="*", default=None, help="policies of that table (default: all)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="R > 1: per id, R rounds of CartPole then the id (random legal action), each --seconds; "
                         "prints the median ratio per CPU-s of the pairs and its range, instead of the first table")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.repeats > 1 and not args.episodes_only:
        ids = [i for i in (args.env or edgegym.registered_ids()) if i != "CartPole-v1"]
        paired_table(ids, args.seconds, args.repeats)
    elif not args.episodes_only:
        from edgegym.agents.runner import default_policy

        secs = 1.0 if args.quick else args.seconds
        ids = args.env or edgegym.registered_ids()
        if args.quick and not args.env:
            ids = [i for i in ids if i.count("-") == 1]  # <Family>-v<N>: the default preset
        cart, cart_cpu, _ = steps_per_second("CartPole-v1", secs)
        print(f"{'env':<38} {'policy':<14} {'steps/s':>9} {'vs CartPole':>11} {'steps/CPU-s':>11} "
              f"{'vs CartPole':>11} {'episodes':>8}")
        print(f"{'CartPole-v1':<38} {'random':<14} {cart:>9.0f} {1.0:>11.4f} {cart_cpu:>11.0f} {1.0:>11.4f}")

        def row(env_id, policy, sps, cpu, eps):
            print(f"{env_id:<38} {policy:<14} {sps:>9.0f} {sps / cart:>11.4f} {cpu:>11.0f} {cpu / cart_cpu:>11.4f} "
                  f"{eps:>8d}", flush=True)

        ours = set(edgegym.registered_ids())
        for env_id in ids:
            if env_id == "CartPole-v1":
                continue  # already the first row
            row(env_id, "random", *steps_per_second(env_id, secs))
            if env_id not in ours:
                continue  # another package's env: no reference policy
            ref = default_policy(env_id)
            row(env_id, ref, *policy_steps_per_second(env_id, ref, secs))
    if not args.no_episodes:
        ids = edgegym.registered_ids()
        default = [EPISODE_ENV, EPISODE_ENV.replace("-v", "-testbed-paper-literal-v")]
        episode_table([i for i in (args.episode_env or default) if i in ids], policies=args.episode_policies)


if __name__ == "__main__":
    main()
