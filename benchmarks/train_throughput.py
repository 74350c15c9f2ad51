"""Training throughput: MaskablePPO env steps/s on every default ``-v1`` id beside SB3 PPO on CartPole-v1.

Usage::

    python benchmarks/train_throughput.py [--timesteps 50000] [--env ID ...] [--threads-check]

Every figure is measured in this process on this machine, in one run:

1. ``CartPole-v1`` with SB3 PPO (MlpPolicy), then each default ``-v1`` id (``EdgeCloudML-v1``, ``EdgeUtility-v1``,
   ``HeteroML-v1``, ``WirelessUDL-v1``, or ``--env``) through ``edgegym.agents.rl.train.train`` with the shipped
   ``maskable-ppo.yaml`` (behaviour cloning and evaluations included, as a user runs it). Each id's row is compared
   with SB3 PPO on CartPole-v1 run with that id's own PPO hyperparameters (``n_envs``, ``n_steps``, ``batch_size``,
   ``n_epochs``, ``learning_rate``, ``gamma`` of the shipped YAML; one CartPole run per distinct set, printed first).
   Columns: env steps/s during rollouts, overall (every phase counted: setup, behaviour cloning, rollouts, updates,
   evaluations, saving), the ratio of the overall rate to CartPole's with the same hyperparameters, and the seconds
   of each phase.
   ``--hidden H`` runs the ids whose shipped policy is the per-row ``SharedRowPolicy`` with ``H`` hidden units
   instead of the shipped 64 (a cheaper, different agent: throughput only, its learning is not measured here);
   ``--subproc`` steps the ``n_envs`` training envs in subprocesses (``edgegym train --subproc``).
2. ``--threads-check``: plain SB3 PPO on CartPole-v1 for 2,048 steps with PyTorch's default threads and with one
   thread (why ``edgegym train`` sets one thread by default).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_IDS = ("EdgeCloudML-v1", "EdgeUtility-v1", "HeteroML-v1", "WirelessUDL-v1")


PPO_KEYS = ("n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma")


def _ppo_hyperparams(env_id: str) -> dict:
    """The PPO keys of the shipped ``maskable-ppo.yaml`` for ``env_id`` (default < family < id sections)."""
    from edgegym.agents.rl.train import load_hyperparams

    hp = load_hyperparams("maskable-ppo", env_id)
    return {k: hp[k] for k in PPO_KEYS}


def _hp_text(hp: dict) -> str:
    return (f"n_envs {hp['n_envs']}, n_steps {hp['n_steps']}, batch {hp['batch_size']}, epochs {hp['n_epochs']}, "
            f"lr {hp['learning_rate']:g}, gamma {hp['gamma']:g}")


def cartpole(timesteps: int, hp: dict, threads: int | None = 1) -> dict:
    """SB3 PPO on CartPole-v1 with ``hp``: overall and rollout env steps/s."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger

    if threads is not None:
        torch.set_num_threads(threads)

    class Timer(BaseCallback):
        def __init__(self):
            super().__init__()
            self.rollout_s, self._t = 0.0, 0.0

        def _on_rollout_start(self):
            self._t = time.perf_counter()

        def _on_rollout_end(self):
            self.rollout_s += time.perf_counter() - self._t

        def _on_step(self):
            return True

    t0 = time.perf_counter()
    venv = make_vec_env("CartPole-v1", n_envs=hp["n_envs"], seed=0)
    model = PPO("MlpPolicy", venv, seed=0, device="cpu", n_steps=hp["n_steps"], batch_size=hp["batch_size"],
                n_epochs=hp["n_epochs"], learning_rate=hp["learning_rate"], gamma=hp["gamma"])
    model.set_logger(Logger(folder=None, output_formats=[]))
    timer = Timer()
    model.learn(total_timesteps=timesteps, callback=timer)
    wall = time.perf_counter() - t0
    return {"steps": int(model.num_timesteps), "wall_s": wall, "overall": model.num_timesteps / wall,
            "rollout": model.num_timesteps / timer.rollout_s}


def _hidden_yaml(hidden: int, folder: str) -> str:
    """The shipped ``maskable-ppo.yaml`` with ``hidden`` units in every ``SharedRowPolicy`` section; its path."""
    from importlib import resources

    import yaml

    data = yaml.safe_load(resources.files("edgegym.agents.rl").joinpath("maskable-ppo.yaml").read_text())
    for sec in data.values():
        if isinstance(sec, dict) and sec.get("policy") == "SharedRowPolicy":
            sec["policy_kwargs"] = {**(sec.get("policy_kwargs") or {}), "hidden": int(hidden)}
    path = Path(folder) / f"maskable-ppo-hidden{hidden}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def edgegym_row(env_id: str, timesteps: int, hp: dict, hidden: int | None = None, subproc: bool = False) -> dict:
    """``edgegym train`` (MaskablePPO, the shipped YAML, or its ``hidden`` variant) on ``env_id``: steps/s and every
    phase's seconds."""
    from edgegym.agents.rl.train import train

    with tempfile.TemporaryDirectory() as out:
        hyper = _hidden_yaml(hidden, out) if hidden else None
        s = train(env_id, "maskable-ppo", timesteps, 0, str(Path(out) / "run"), progress=False, hyperparams=hyper,
                  subproc=subproc)
    return {"steps": s["num_timesteps"], "wall_s": s["wall_s"], "overall": s["env_steps_per_s"],
            "rollout": s["rollout_steps_per_s"], "phases": s["phases_s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timesteps", type=int, default=50_000, help="env steps per row")
    ap.add_argument("--env", nargs="*", default=list(DEFAULT_IDS), help="edgegym ids (default: the four -v1 ids)")
    ap.add_argument("--threads-check", action="store_true",
                    help="also time 2,048 CartPole PPO steps with PyTorch's default threads and with one")
    ap.add_argument("--hidden", type=int, help="hidden units of the per-row policy (default: the shipped 64)")
    ap.add_argument("--subproc", action="store_true", help="the training envs in subprocesses")
    args = ap.parse_args()
    import torch

    default_threads = torch.get_num_threads()
    hps = {env_id: _ppo_hyperparams(env_id) for env_id in args.env}
    print(f"{args.timesteps} env steps per row; PyTorch threads 1"
          + (f"; per-row policy with {args.hidden} hidden units (shipped: 64)" if args.hidden else "")
          + ("; training envs in subprocesses" if args.subproc else "") + "\n")
    print("| env | algorithm | PPO hyperparameters | steps | rollout steps/s | overall steps/s | overall / CartPole "
          "| phases (s) |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    bases: dict[tuple, dict] = {}
    for hp in hps.values():
        key = tuple(hp[k] for k in PPO_KEYS)
        if key not in bases:
            base = bases[key] = cartpole(args.timesteps, hp)
            print(f"| CartPole-v1 | SB3 PPO | {_hp_text(hp)} | {base['steps']} | {base['rollout']:,.0f} | "
                  f"{base['overall']:,.0f} | 1.000 | wall {base['wall_s']:.1f} |", flush=True)
    for env_id in args.env:
        hp = hps[env_id]
        base = bases[tuple(hp[k] for k in PPO_KEYS)]
        r = edgegym_row(env_id, args.timesteps, hp, args.hidden, args.subproc)
        phases = ", ".join(f"{k[:-2].replace('_', ' ')} {v:.1f}" for k, v in r["phases"].items())
        print(f"| {env_id} | MaskablePPO (edgegym train) | {_hp_text(hp)} | {r['steps']} | {r['rollout']:,.0f} | "
              f"{r['overall']:,.0f} | {r['overall'] / base['overall']:.3f} | {phases} |", flush=True)
    if args.threads_check:
        print(f"\nSB3 PPO, CartPole-v1, 2,048 steps: PyTorch's default threads ({default_threads}) vs one thread")
        hp = _ppo_hyperparams("EdgeCloudML-v0")
        for threads in (default_threads, 1):
            r = cartpole(2048, hp, threads=threads)
            print(f"  {threads} thread(s): {r['wall_s']:.1f} s ({r['overall']:,.0f} steps/s)", flush=True)


if __name__ == "__main__":
    main()
