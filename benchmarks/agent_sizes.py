"""The shipped ``EdgeCloudML-v1`` agent at other cluster sizes than the 100 edge servers it was trained on.

Usage::

    python benchmarks/agent_sizes.py [--sizes 8 50 100 200 400] [--seeds 100-104] [--reps 5]

The agent's network (:class:`~edgegym.agents.rl.shared.SharedRowPolicy`) has no per-server weights: on an env with
another number of server rows it reads the env's observation with the env's own layout and applies the same weights
to every row (the *variable-row path* of :class:`~edgegym.agents.rl.learned.LearnedPolicy`). Two tables:

* **objective**: per size, the agent's mean total JCT (the objective, lower is better) and ``aonline``'s on the same
  seeds, and the agent's difference in %. Size 8 is ``EdgeCloudML-testbed-v1`` (30 jobs); the others are
  ``EdgeCloudML-v1`` (300 jobs) with ``{"cluster": {"num_edge_servers": N}}``, nothing else changed.
* **decision cost**: decisions per CPU second (``time.process_time``, one PyTorch thread) of the agent's
  deterministic action alone, on the observations and masks of one recorded episode (seed: the first of
  ``--seeds``), best of ``--reps`` (the two paths taking turns): the path of the trained size (the observation
  read with the layout the network was built with: at 100 servers, the agent's own; below, the env padded to 100
  edge rows with ``{"env": {"max_edge_servers": 100}}``, the only way it ran before) against the variable-row
  path, and whether both take the same actions on every state. Above 100 only the variable-row path runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MODEL = Path(__file__).resolve().parents[1] / "docs/results/agents/models/EdgeCloudML-v1/model.zip"
TRAINED = 100  # the edge servers of EdgeCloudML-v1, the agent's training env


def size_env(n: int) -> tuple[str, dict]:
    """``(env id, env config)`` of the ``n``-server env of the table."""
    if n == 8:
        return "EdgeCloudML-testbed-v1", {}
    return "EdgeCloudML-v1", ({} if n == TRAINED else {"cluster": {"num_edge_servers": n}})


def parse_seeds(text: str) -> list[int]:
    """``"100-104"`` or ``"100,101"`` -> the list of seeds."""
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",")]


def objective_row(n: int, seeds: list[int], policy: str) -> tuple[float, float]:
    """The agent's and ``aonline``'s mean objective over ``seeds`` on the ``n``-server env."""
    from edgegym.agents.runner import run_episode

    env_id, cfg = size_env(n)
    agent = [run_episode(env_id, policy, s, cfg)["objective"] for s in seeds]
    base = [run_episode(env_id, "aonline", s, cfg)["objective"] for s in seeds]
    return sum(agent) / len(agent), sum(base) / len(base)


def record(env, pol, seed: int) -> tuple[list, list]:
    """The observations and action masks of one episode of ``pol`` on ``env``."""
    import numpy as np

    obs, _ = env.reset(seed=seed)
    states, done = [], False
    while not done:
        mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
        states.append((obs, mask))
        obs, _, term, trunc, _ = env.step(pol._argmax(obs, mask))
        done = term or trunc
    return states


def decisions_per_s(pols: list, states: list, reps: int) -> tuple[list[float], list[list[int]]]:
    """Decisions per CPU second of each policy's deterministic action on its states (``pols[i]`` on
    ``states[i]``; best of ``reps``, the policies taking turns so that a busy spell of the machine hits both), and
    each one's actions."""
    best = [float("inf")] * len(pols)
    actions: list[list[int]] = [[] for _ in pols]
    for _ in range(reps):
        for i, (pol, st) in enumerate(zip(pols, states, strict=True)):
            t = time.process_time()
            actions[i] = [pol._argmax(o, m) for o, m in st]
            best[i] = min(best[i], time.process_time() - t)
    return [len(st) / b for st, b in zip(states, best, strict=True)], actions


def cost_row(n: int, seed: int, reps: int, model) -> tuple[int, float | None, float, bool | None]:
    """``(decisions, trained-size path /s, variable-row path /s, same actions)`` at ``n`` servers (see the module
    docstring); the trained-size path and the comparison are None above the trained size, where only the
    variable-row path runs."""
    import gymnasium as gym
    from edgegym.agents.rl.learned import LearnedPolicy

    env_id, cfg = size_env(n)
    cfg = {**cfg, "env": {**cfg.get("env", {}), "action_mode": "cloud_fraction"}}
    env_var = gym.make(env_id, config=cfg)
    variable = LearnedPolicy(env_var, model, masked=True, variable_rows=True)
    states_var = record(env_var, variable, seed)
    if n > TRAINED:
        (v,), _ = decisions_per_s([variable], [states_var], reps)
        return len(states_var), None, v, None
    env_fixed = gym.make(env_id, config={**cfg, "env": {**cfg["env"], "max_edge_servers": TRAINED}})
    fixed = LearnedPolicy(env_fixed, model, masked=True)
    (f, v), (a_fixed, a_var) = decisions_per_s([fixed, variable], [record(env_fixed, fixed, seed), states_var], reps)
    return len(states_var), f, v, a_fixed == a_var


def main(argv: list[str] | None = None) -> int:
    """Print both tables (markdown)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 50, 100, 200, 400])
    ap.add_argument("--seeds", default="100-104")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-cost", action="store_true", help="only the objective table")
    args = ap.parse_args(argv)
    import torch
    from edgegym.agents.rl.learned import load_model

    torch.set_num_threads(1)
    seeds = parse_seeds(args.seeds)
    policy = f"maskable-ppo:{MODEL}"
    print(f"objective (total JCT, slots), mean over seeds {args.seeds}; lower is better\n")
    print("| edge servers | agent | aonline | agent vs aonline |")
    print("|---:|---:|---:|---:|")
    for n in args.sizes:
        a, b = objective_row(n, seeds, policy)
        print(f"| {n} | {a:,.0f} | {b:,.0f} | {100 * (a - b) / b:+.1f} % |", flush=True)
    if args.no_cost:
        return 0
    model = load_model(policy)
    print(f"\ndecisions per CPU second of the agent's action (seed {seeds[0]}, best of {args.reps})\n")
    print(f"| edge servers | decisions | trained-size path ({TRAINED} edge rows + cloud) | variable-row path | "
          "variable / trained | same actions |")
    print("|---:|---:|---:|---:|---:|---|")
    for n in args.sizes:
        k, f, v, same = cost_row(n, seeds[0], args.reps, model)
        if f is None:
            print(f"| {n} | {k} | (cannot run) | {v:,.0f} | | |", flush=True)
        else:
            print(f"| {n} | {k} | {f:,.0f} | {v:,.0f} | {v / f:.2f} | {'yes' if same else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
