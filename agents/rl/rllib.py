"""``edgegym train --backend rllib``: PPO from Ray RLlib, with env runners on a local Ray cluster or on an existing one.

Install with ``pip install 'edgegym[rllib]'``. The hyperparameters, the env config (e.g. EdgeCloudML's discrete
action mode) and the network come from the same ``agents/rl/<algo>.yaml`` as the SB3 backend (``--algo
maskable-ppo``: action masks; ``--algo ppo``: all-ones masks), mapped to RLlib's PPO:

=====================  ==============================================================================
YAML key               RLlib
=====================  ==============================================================================
``n_steps``            ``train_batch_size_per_learner = n_steps × env runners`` (one env per runner)
``batch_size``         ``minibatch_size``
``n_epochs``           ``num_epochs``
``learning_rate``      ``lr``
``gamma``              ``gamma``
``gae_lambda``         ``lambda_``
``clip_range``         ``clip_param``
``ent_coef``           ``entropy_coeff``
``vf_coef``            ``vf_loss_coeff`` (SB3's default 0.5)
``max_grad_norm``      ``grad_clip`` (SB3's default 0.5)
``policy``             ``SharedRowPolicy``: the per-row shared scorer; ``MlpPolicy``: an MLP (``net_arch``)
=====================  ==============================================================================

As in SB3's PPO, there is no KL penalty (``use_kl_loss=False``) and the value loss is not clipped. The behaviour
cloning warm start of some ``-v1`` sections (``bc_teacher``) is SB3-only: the rllib backend starts from scratch and
says so. The model is :class:`edgegym.agents.rl.rllib_model.MaskedPPOModule` (an RLModule).

Ray: without ``address``, a local cluster is started with ``num_cpus`` = max(CPU cores, env runners) and no
dashboard, and shut down at the end; with ``address`` (``"auto"`` or ``HOST:PORT`` of ``ray start --head``), the run
joins that cluster and leaves it running. Each env runner is a Ray actor with one CPU and one env; the learner runs in
the driver process. The workers import ``edgegym``: on a multi-machine cluster it must be installed on every node.

Output ``DIR/``: ``checkpoint/`` (RLlib's algorithm checkpoint, ``Algorithm.from_checkpoint`` resumes it; the
trained RLModule alone is ``checkpoint/learner_group/learner/rl_module/default_policy``), ``model.edgegym.json``
(env id, ``algo: rllib``, env config, seed, the module's path), ``train.json`` (every iteration, phase times, env
steps/s, the final evaluation). ``edgegym eval --model DIR`` (or the policy name ``rllib:DIR`` anywhere a policy is
accepted) loads only the RLModule, without a Ray cluster, and runs it through
:func:`edgegym.agents.runner.run_episode` like every policy: argmax of the masked logits.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from .learned import ALGOS, RLLIB_CHECKPOINT_DIR, RLLIB_MODULE_SUBDIR, RLLIB_SIDECAR

__all__ = ["ENV_NAME", "make_env", "rllib_available", "train_rllib"]

#: name under which the env creator is registered with Ray (one per process; the config travels in env_config)
ENV_NAME = "edgegym-rllib"
INSTALL_HINT = "pip install 'edgegym[rllib]'"


def rllib_available() -> bool:
    """Whether ``ray.rllib`` can be imported."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        return False
    return True


def _need_rllib() -> None:
    try:
        import ray.rllib  # noqa: F401
    except ImportError as e:
        raise ValueError(f"--backend rllib needs Ray RLlib: {INSTALL_HINT} ({e})") from None


def make_env(ctx):
    """RLlib's env creator: ``gym.make(env_id, config)`` wrapped in :class:`MaskedObservation` (runs in each env
    runner; ``ctx`` holds ``env_id``, ``config``, ``masked``, ``torch_threads``)."""
    import gymnasium as gym
    import torch

    import edgegym  # noqa: F401  (registers the ids in the env runner's process)

    from .rllib_model import MaskedObservation

    torch.set_num_threads(int(ctx.get("torch_threads", 1)))
    env = gym.make(ctx["env_id"], config=dict(ctx.get("config") or {}) or None)
    return MaskedObservation(env, masked=bool(ctx.get("masked", True)))


# --------------------------------------------------------------------------------------------- training
def _rllib_hyperparams(hp: dict) -> dict:
    """RLlib PPO ``training(...)`` keys from the SB3 YAML's (see the module docstring)."""
    for key in ("learning_rate", "clip_range", "ent_coef"):
        if isinstance(hp.get(key), str):
            raise ValueError(f"{key}: the rllib backend takes a number, got {hp[key]!r}")
    out = {
        "lr": float(hp.get("learning_rate", 3e-4)),
        "gamma": float(hp.get("gamma", 0.99)),
        "lambda_": float(hp.get("gae_lambda", 0.95)),
        "clip_param": float(hp.get("clip_range", 0.2)),
        "entropy_coeff": float(hp.get("ent_coef", 0.0)),
        "vf_loss_coeff": float(hp.get("vf_coef", 0.5)),
        "grad_clip": float(hp.get("max_grad_norm", 0.5)),
        "num_epochs": int(hp.get("n_epochs", 10)),
        "minibatch_size": int(hp.get("batch_size", 64)),
        "use_kl_loss": False,
        "vf_clip_param": float("inf"),
    }
    return out


#: YAML keys the rllib backend reads (the others are SB3-only and are named in a notice)
USED_KEYS = ("learning_rate", "gamma", "gae_lambda", "clip_range", "ent_coef", "vf_coef", "max_grad_norm",
             "n_epochs", "batch_size", "n_steps", "policy", "policy_kwargs", "env_config", "train_env_config",
             "n_eval_episodes", "eval_seed", "n_envs", "bc_teacher")


def _get(d: dict, *path, default=None):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def train_rllib(
    env_id: str,
    algo: str,
    timesteps: int,
    seed: int,
    out: str | Path,
    hp: dict,
    *,
    env_config: dict | None = None,
    n_env_runners: int | None = None,
    address: str | None = None,
    progress: bool = True,
    torch_threads: int | None = None,
    n_eval_episodes: int | None = None,
) -> dict:
    """Train RLlib PPO on ``env_id`` until ``timesteps`` env steps are sampled; save ``out/checkpoint``.

    ``hp``: the hyperparameters of ``algo`` for ``env_id`` (:func:`edgegym.agents.rl.train.load_hyperparams`, which
    ``edgegym train`` passes); ``algo``: ``maskable-ppo`` (masked actions) or ``ppo`` (unmasked). ``torch_threads``:
    the learner's PyTorch threads (default 1). ``n_env_runners``
    env runners (default 2), one env each, seeded from ``seed``. ``address``: join that Ray cluster (else a local
    one, shut down at the end). After training, the saved module is evaluated (argmax) on the YAML's evaluation seeds
    (10000…, disjoint from the 100-104 of ``edgegym eval``) through :func:`edgegym.agents.runner.run_episode`.

    Returns the summary (also ``out/train.json``): ``iterations`` (one row per ``Algorithm.train()``: env steps,
    mean episode return of the env runners, seconds), ``wall_s``, ``phases_s`` (setup: Ray and the env runners;
    training: sampling and learning; save; evaluation), ``env_steps_per_s`` (env steps / training seconds),
    ``overall_env_steps_per_s`` (env steps / every phase), ``evaluations``.
    """
    _need_rllib()
    import gymnasium as gym
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from ..runner import merge_config
    from .rllib_model import MaskedObservation, MaskedPPOModule, quiet_rllib
    from .shared import env_obs_layout

    t_start = time.perf_counter()

    def say(msg: str) -> None:
        if progress:
            print(f"edgegym train: {msg}", file=sys.stderr, flush=True)

    if algo not in ALGOS:
        raise ValueError(f"unknown algorithm {algo!r} (valid: {', '.join(ALGOS)})")
    threads = int(torch_threads) if torch_threads is not None else 1
    torch.set_num_threads(threads)
    out = Path(out)
    hp = dict(hp)
    cfg = merge_config(hp.pop("env_config", {}) or {}, env_config)
    train_cfg = merge_config(cfg, hp.pop("train_env_config", None) or {})
    runners = int(n_env_runners) if n_env_runners is not None else 2
    if runners < 1:
        raise ValueError(f"env runners must be >= 1, got {runners}")
    n_eval = int(n_eval_episodes if n_eval_episodes is not None else hp.get("n_eval_episodes", 3))
    eval_seed = int(hp.get("eval_seed", 10_000))
    if hp.get("bc_teacher"):
        say(f"notice: the rllib backend has no behaviour-cloning warm start; the YAML's bc_teacher "
            f"{hp['bc_teacher']!r} is ignored (PPO starts from scratch)")
    ignored = [k for k in hp if k not in USED_KEYS and k not in ("eval_freq", "checkpoint_freq", "collapse_share",
                                                                   "bc_episodes", "bc_epochs", "bc_seed")]
    if ignored:
        say(f"notice: SB3-only hyperparameters ignored by the rllib backend: {', '.join(ignored)}")
    policy = hp.get("policy", "MlpPolicy")
    masked = algo == "maskable-ppo"

    probe = gym.make(env_id, config=train_cfg or None)
    try:
        if not isinstance(probe.action_space, gym.spaces.Discrete):
            raise ValueError(
                f"the rllib backend needs a Discrete action space; {env_id} with this config has {probe.action_space} "
                '(for EdgeCloudML use --algo maskable-ppo or --env-config \'{"env": {"action_mode": "cloud_split"}}\')')
        model_config: dict = {"hidden": int((hp.get("policy_kwargs") or {}).get("hidden", 64))}
        if policy == "SharedRowPolicy":
            layout = env_obs_layout(probe)
            if layout is None:
                raise ValueError(f"policy SharedRowPolicy needs the env's obs_layout(); {env_id} does not provide it")
            model_config["layout"] = {k: list(v) if isinstance(v, tuple) else v for k, v in layout.items()}
        elif policy == "MlpPolicy":
            model_config["net_arch"] = list((hp.get("policy_kwargs") or {}).get("net_arch", [64, 64]))
        else:
            raise ValueError(f"policy {policy!r}: the rllib backend knows SharedRowPolicy and MlpPolicy")
        obs_space = MaskedObservation(probe, masked).observation_space
        act_space = probe.action_space
    finally:
        probe.close()

    rl = _rllib_hyperparams(hp)
    n_steps = int(hp.get("n_steps", 256))
    batch = n_steps * runners
    rl["train_batch_size_per_learner"] = batch
    rl["minibatch_size"] = min(rl["minibatch_size"], batch)
    env_ctx = {"env_id": env_id, "config": train_cfg, "masked": masked, "torch_threads": 1}

    started_ray = False  # this run connected (and disconnects at the end); an already connected caller keeps Ray
    if ray.is_initialized():
        say("using the Ray session this process is already connected to")
    elif address:
        say(f"connecting to the Ray cluster at {address}")
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            hint = "" if address == "auto" or os.environ.get("RAY_AUTH_MODE") else (
                "; a cluster with token authentication (the default of Ray 2.60's clusters) needs RAY_AUTH_MODE=token "
                "and its token (ray get-auth-token) in ~/.ray/auth_token or RAY_AUTH_TOKEN")
            raise ValueError(f"--address {address}: cannot connect to a Ray cluster ({' '.join(str(e).split())})"
                             f"{hint}") from None
        started_ray = True
    else:
        ncpu = max(os.cpu_count() or 1, runners)
        say(f"starting a local Ray cluster ({ncpu} CPUs, no dashboard)")
        ray.init(num_cpus=ncpu, include_dashboard=False, log_to_driver=False)
        started_ray = True
    algo_obj = None
    try:
        cpus = float(ray.cluster_resources().get("CPU", 0.0))
        if cpus < runners:
            raise ValueError(f"{runners} env runners need {runners} CPUs; the Ray cluster has {cpus:g} "
                             "(fewer env runners with --n-envs, or more CPUs in the cluster)")
        register_env(ENV_NAME, make_env)
        config = (
            PPOConfig()
            .environment(ENV_NAME, env_config=env_ctx, observation_space=obs_space, action_space=act_space)
            .framework("torch")
            .env_runners(num_env_runners=runners, num_envs_per_env_runner=1, num_cpus_per_env_runner=1,
                         rollout_fragment_length="auto")
            .learners(num_learners=0)
            .training(**rl)
            .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedPPOModule, model_config=model_config))
            .debugging(seed=int(seed), log_level="ERROR")
        )
        say(f"building PPO: {runners} env runner(s), {batch} env steps per iteration "
            f"({'SharedRowPolicy' if 'layout' in model_config else 'MLP'}, "
            f"{'masked' if masked else 'unmasked'} actions)")
        with quiet_rllib():
            algo_obj = config.build_algo()
        phases = {"setup_s": time.perf_counter() - t_start}
        iters: list[dict] = []
        steps = 0
        t_train = time.perf_counter()
        while steps < int(timesteps):
            t_it = time.perf_counter()
            res = algo_obj.train()
            dt = time.perf_counter() - t_it
            steps = int(_get(res, "env_runners", "num_env_steps_sampled_lifetime",
                             default=_get(res, "num_env_steps_sampled_lifetime", default=steps + batch)))
            ret = _get(res, "env_runners", "episode_return_mean")
            iters.append({"iteration": len(iters) + 1, "env_steps": steps, "wall_s": dt,
                          "episode_return_mean": None if ret is None or not np.isfinite(ret) else float(ret),
                          # RLlib's own timers (exponentially smoothed over the iterations)
                          "rllib_sampling_timer_s": _get(res, "timers", "env_runner_sampling_timer"),
                          "rllib_learner_update_timer_s": _get(res, "timers", "learner_update_timer")})
            say(f"iteration {len(iters)}: {steps}/{int(timesteps)} env steps, {dt:.1f} s"
                + (f", mean episode return {ret:.4g}" if iters[-1]["episode_return_mean"] is not None else ""))
        phases["training_s"] = time.perf_counter() - t_train
        t_save = time.perf_counter()
        ckpt = out / RLLIB_CHECKPOINT_DIR
        algo_obj.save_to_path(str(ckpt.resolve()))
        meta = {"env_id": env_id, "algo": "rllib", "rllib_algo": "PPO", "hyperparams_of": algo, "masked": masked,
                "env_config": cfg, "seed": int(seed), "timesteps": int(timesteps),
                "module": Path(RLLIB_CHECKPOINT_DIR, *RLLIB_MODULE_SUBDIR).as_posix()}
        (out / RLLIB_SIDECAR).write_text(json.dumps(meta, indent=2))
        phases["save_s"] = time.perf_counter() - t_save
    finally:
        if algo_obj is not None:
            algo_obj.stop()
        if started_ray:
            ray.shutdown()

    from ..runner import run_episode

    t_eval = time.perf_counter()
    evals = []
    if n_eval > 0:
        say(f"evaluating the saved module (argmax) on seeds {eval_seed}-{eval_seed + n_eval - 1}")
        recs = [run_episode(env_id, f"rllib:{out}", s, train_cfg) for s in range(eval_seed, eval_seed + n_eval)]
        evals.append({"timesteps": steps, "seeds": [r["seed"] for r in recs],
                      "returns": [r["episode_return"] for r in recs],
                      "mean_return": float(np.mean([r["episode_return"] for r in recs])),
                      "objectives": [r.get("objective") for r in recs]})
    phases["evaluation_s"] = time.perf_counter() - t_eval
    wall = time.perf_counter() - t_start
    summary = {
        **meta,
        "backend": "rllib",
        "model": str(out),
        "checkpoint": str(ckpt),
        "ray_address": address or "local",
        "env_runners": runners,
        "num_timesteps": steps,
        "iterations": iters,
        "wall_s": wall,
        "phases_s": phases,
        "env_steps_per_s": steps / phases["training_s"] if phases["training_s"] > 0 else float("inf"),
        "overall_env_steps_per_s": steps / wall if wall > 0 else float("inf"),
        "torch_threads": threads,
        "hyperparams": {"policy": policy, "model_config": {k: v for k, v in model_config.items() if k != "layout"},
                        **{k: ("inf" if v == float("inf") else v) for k, v in rl.items()}},  # plain JSON
        "train_env_config": train_cfg,
        "eval_seed": eval_seed,
        "n_eval_episodes": n_eval,
        "evaluations": evals,
        "saved_eval": evals[-1] if evals else None,
        "warnings": [],
    }
    (out / "train.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary
