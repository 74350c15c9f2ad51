"""The cost of the per-row policy network of the ``-v1`` agents, per PPO minibatch and per rollout step.

Usage::

    python benchmarks/policy_network.py [--env ID ...] [--reps 20]

For each default ``-v1`` id (or ``--env``): the :class:`~edgegym.agents.rl.shared.SharedRowNet` built on the env's
``obs_layout()`` with the shipped ``maskable-ppo.yaml`` settings, timed on random observations of the env's shape:

* **update**: forward and backward of one PPO minibatch (``batch_size`` of the id's hyperparameters), ms;
* **rollout**: one forward of ``n_envs`` observations without gradients (one vectorised rollout step), ms;
* the same two for the *concatenating* form (every row's input is ``row_i ‖ context``, built as a tensor: the form
  the network had before release 0.4.1, same weights and same function), and their ratio.

``--hidden 64 32 16`` adds a table of the update's cost at other widths of the network (the shipped agents use 64)
and ``--threads 1 2`` one at other PyTorch thread counts (wall-clock ms, since more threads spend more CPU time):
what a cheaper agent, or more threads in the update phase, would save.

Beside them, SB3's default ``MlpPolicy`` network on CartPole-v1 (``[64, 64]`` for the actor and the critic, 4 inputs,
2 actions) on the same batch sizes: the yardstick of ``benchmarks/train_throughput.py``. Times are per CPU second of
this process (``time.process_time``) with one PyTorch thread, as ``edgegym train`` runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_IDS = ("EdgeCloudML-v1", "EdgeUtility-v1", "HeteroML-v1", "WirelessUDL-v1")


def _time(fn, reps: int, clock=time.process_time) -> float:
    """Milliseconds per call of ``fn`` by ``clock`` (CPU time by default; ``time.perf_counter`` for wall time), after
    two warm-up calls."""
    fn()
    fn()
    c0 = clock()
    for _ in range(reps):
        fn()
    return (clock() - c0) / reps * 1e3


def _update(forward, obs):
    def run():
        logits, value = forward(obs)
        (logits.sum() + value.sum()).backward()

    return run


def _rollout(forward, obs):
    import torch as th

    def run():
        with th.no_grad():
            forward(obs)

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", nargs="*", default=list(DEFAULT_IDS), help="ids with obs_layout() (default: the -v1 ids)")
    ap.add_argument("--reps", type=int, default=20, help="timed calls per figure")
    ap.add_argument("--hidden", type=int, nargs="*", default=[],
                    help="also time the update at these hidden widths (the shipped agents: 64)")
    ap.add_argument("--threads", type=int, nargs="*", default=[],
                    help="also time the update (wall clock) with these PyTorch thread counts")
    args = ap.parse_args()

    import gymnasium as gym
    import torch as th
    from edgegym.agents.rl.shared import SharedRowNet, env_obs_layout
    from edgegym.agents.rl.train import load_hyperparams
    from torch import nn

    import edgegym  # noqa: F401

    th.set_num_threads(1)
    th.manual_seed(0)
    print("ms per CPU second, one PyTorch thread; update = forward + backward of one minibatch, rollout = one "
          "forward of n_envs observations\n")
    print("| network | rows x row dim | batch | update ms | update ms, concatenating form | rollout ms (n_envs) | "
          "rollout ms, concatenating form |")
    print("|---|---|---:|---:|---:|---:|---:|")
    batches = set()
    nets = {}  # env_id -> (layout, n_actions, minibatch)
    for env_id in args.env:
        hp = load_hyperparams("maskable-ppo", env_id)
        env = gym.make(env_id, config=hp.get("env_config") or None)
        layout = env_obs_layout(env)
        if layout is None:
            print(f"| {env_id} | no obs_layout(): not a per-row env | | | | | |")
            continue
        net = SharedRowNet(layout, int(env.action_space.n))
        dim = int(env.observation_space.shape[0])
        env.close()
        B, n_envs = int(hp["batch_size"]), int(hp["n_envs"])
        batches.add((B, n_envs))
        big, small = th.randn(B, dim), th.randn(n_envs, dim)
        nets[env_id] = (layout, int(env.action_space.n), big, small)
        new_u = _time(_update(net, big), args.reps)
        old_u = _time(_update(net.forward_concat, big), args.reps)
        new_r = _time(_rollout(net, small), args.reps * 10)
        old_r = _time(_rollout(net.forward_concat, small), args.reps * 10)
        print(f"| {env_id} `SharedRowNet` | {layout['rows']} x {layout['row_dim']} | {B} | {new_u:.2f} | "
              f"{old_u:.2f} ({old_u / new_u:.2f}x) | {new_r:.3f} ({n_envs}) | {old_r:.3f} ({old_r / new_r:.2f}x) |",
              flush=True)

    def mlp(out: int) -> nn.Sequential:
        return nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, out))

    pi, vf = mlp(2), mlp(1)
    for B, n_envs in sorted(batches):
        big, small = th.randn(B, 4), th.randn(n_envs, 4)
        u = _time(_update(lambda o: (pi(o), vf(o)), big), args.reps * 10)
        r = _time(_rollout(lambda o: (pi(o), vf(o)), small), args.reps * 10)
        print(f"| CartPole-v1 SB3 `MlpPolicy` [64, 64] | 4 inputs | {B} | {u:.2f} | | {r:.3f} ({n_envs}) | |",
              flush=True)

    if args.hidden:
        print("\nUpdate (forward + backward of one minibatch) and one rollout step at other hidden widths, CPU ms, one "
              "thread:\n")
        print("| network | " + " | ".join(f"hidden {h}: update, rollout" for h in args.hidden) + " |")
        print("|---|" + "---:|" * len(args.hidden))
        for env_id, (layout, n_act, big, small) in nets.items():
            cells = []
            for h in args.hidden:
                net = SharedRowNet(layout, n_act, h)
                cells.append(f"{_time(_update(net, big), args.reps):.2f}, "
                             f"{_time(_rollout(net, small), args.reps * 10):.3f}")
            print(f"| {env_id} | " + " | ".join(cells) + " |", flush=True)
    if args.threads:
        print("\nUpdate (forward + backward of one minibatch), wall-clock ms, by PyTorch threads:\n")
        print("| network | " + " | ".join(f"{t} thread(s)" for t in args.threads) + " |")
        print("|---|" + "---:|" * len(args.threads))
        for env_id, (layout, n_act, big, _) in nets.items():
            net = SharedRowNet(layout, n_act)
            cells = []
            for t in args.threads:
                th.set_num_threads(t)
                cells.append(f"{_time(_update(net, big), args.reps, time.perf_counter):.2f}")
            th.set_num_threads(1)
            print(f"| {env_id} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
