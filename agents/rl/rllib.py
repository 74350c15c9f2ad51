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

As in SB3's PPO there is no KL penalty (RLlib measures the KL with coefficient 0, for the diagnostics) and the value
loss is not clipped. The model is :class:`edgegym.agents.rl.rllib_model.MaskedPPOModule` (an RLModule).

The run is the SB3 backend's, phase by phase, with the same functions:

* **warm start** (a teacher: ``--teacher``, or the YAML's ``teacher`` / ``bc_teacher``): behaviour cloning and
  optional DAgger rounds (:func:`edgegym.agents.rl.dagger.warm_start`) fit an SB3 network of the same architecture,
  whose weights are then loaded into the RLModule before the first PPO update;
* **best model**: the policy is evaluated (argmax, masks honoured) on the YAML's evaluation seeds (10000…, disjoint
  from the 100-104 of ``edgegym eval``) before the first update, every ``eval_freq`` env steps (``auto``: about ten
  per run, at iteration ends) and after the last update, by :class:`edgegym.agents.rl.best.BestModelCallback`; the
  best evaluated weights are the ones saved (``keep_best=False``: the final ones);
* **warnings** (:func:`edgegym.agents.rl.best.collapse_warnings`, :func:`edgegym.agents.rl.diagnostics.warnings_for`):
  one action above ``collapse_share`` of an evaluation's decisions, an evaluation below the start, a KL that stays
  near zero (the policy does not move), a near-uniform final policy;
* **interruption** (Ctrl-C): the best evaluated weights so far are saved as the RLModule and ``train.json`` says
  ``"interrupted": true``; the KeyboardInterrupt is raised again.

Ray: without ``address``, a local cluster is started with ``num_cpus`` = max(CPU cores, env runners) and no
dashboard, and shut down at the end; with ``address`` (``"auto"`` or ``HOST:PORT`` of ``ray start --head``), the run
joins that cluster and leaves it running. Each env runner is a Ray actor with one CPU and one env; the learner runs in
the driver process. The workers import ``edgegym``: on a multi-machine cluster it must be installed on every node.
Ray's own log lines (its token-authentication notice, the driver's ``core_worker`` lines, the workers' output) are
off unless ``verbose`` or ``$EDGEGYM_RAY_LOGS=1``; errors still show.

Output ``DIR/``: ``checkpoint/`` (RLlib's algorithm checkpoint, ``Algorithm.from_checkpoint`` resumes it; the
trained RLModule alone is ``checkpoint/learner_group/learner/rl_module/default_policy``, which is all an interrupted
run or a run without PPO writes), ``model.edgegym.json`` (env id, ``algo: rllib``, env config, seed, the module's
path), ``train.json`` (every iteration, phase times, env steps/s, every evaluation, warnings). ``edgegym eval --model
DIR`` (or the policy name ``rllib:DIR`` anywhere a policy is accepted) loads only the RLModule, without a Ray
cluster, and runs it through :func:`edgegym.agents.runner.run_episode` like every policy: argmax of the masked logits.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

from .learned import ALGOS, RLLIB_CHECKPOINT_DIR, RLLIB_MODULE_SUBDIR, RLLIB_SIDECAR

__all__ = ["ENV_NAME", "RAY_LOGS_VAR", "make_env", "rllib_available", "sb3_weights_into", "summary_line",
           "train_rllib"]

#: name under which the env creator is registered with Ray (one per process; the config travels in env_config)
ENV_NAME = "edgegym-rllib"
INSTALL_HINT = "pip install 'edgegym[rllib]'"
#: set to 1 to see Ray's own log lines (quiet by default)
RAY_LOGS_VAR = "EDGEGYM_RAY_LOGS"


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
    return {
        "lr": float(hp.get("learning_rate", 3e-4)),
        "gamma": float(hp.get("gamma", 0.99)),
        "lambda_": float(hp.get("gae_lambda", 0.95)),
        "clip_param": float(hp.get("clip_range", 0.2)),
        "entropy_coeff": float(hp.get("ent_coef", 0.0)),
        "vf_loss_coeff": float(hp.get("vf_coef", 0.5)),
        "grad_clip": float(hp.get("max_grad_norm", 0.5)),
        "num_epochs": int(hp.get("n_epochs", 10)),
        "minibatch_size": int(hp.get("batch_size", 64)),
        # the KL is measured (the "not moving" diagnostic) but not penalised: coefficient 0, as SB3's PPO
        "use_kl_loss": True,
        "kl_coeff": 0.0,
        "vf_clip_param": float("inf"),
    }


#: YAML keys the rllib backend reads (the others are SB3-only and are named in a notice)
USED_KEYS = ("learning_rate", "gamma", "gae_lambda", "clip_range", "ent_coef", "vf_coef", "max_grad_norm",
             "n_epochs", "batch_size", "n_steps", "policy", "policy_kwargs", "env_config", "train_env_config",
             "n_eval_episodes", "eval_seed", "eval_freq", "collapse_share", "n_envs", "teacher", "bc_teacher",
             "bc_episodes", "bc_epochs", "bc_seed", "dagger_rounds", "dagger_episodes", "dagger_beta",
             "dagger_epochs", "dagger_seed", "teacher_workers", "checkpoint_freq")


def _get(d: dict, *path, default=None):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def _finite(v):
    return None if v is None or not np.isfinite(v) else float(v)


def sb3_weights_into(policy, module) -> None:
    """Copy the weights of an SB3 / sb3-contrib actor-critic ``policy`` into ``module`` (a
    :class:`~edgegym.agents.rl.rllib_model.MaskedPPOModule` of the same architecture): the shared-row network and the
    value head for ``SharedRowPolicy``; the two MLPs and both heads for ``MlpPolicy``. ``ValueError`` when the
    architectures differ."""
    try:
        if module.shared is not None:
            pairs = [(module.shared, policy.mlp_extractor), (module.vf_head, policy.value_net)]
        else:
            ext = policy.mlp_extractor
            pairs = [(module.pi_net, ext.policy_net), (module.vf_net, ext.value_net),
                     (module.pi_head, policy.action_net), (module.vf_head, policy.value_net)]
        for dst, src in pairs:
            dst.load_state_dict(src.state_dict())
    except (RuntimeError, AttributeError) as e:
        raise ValueError(f"the warm-started SB3 network does not match the RLlib module ({' '.join(str(e).split())})"
                         ) from None


class _ModuleModel:
    """The driver's copy of the RLModule behind the two attributes and the ``predict`` that
    :class:`~edgegym.agents.rl.best.BestModelCallback` and :func:`~edgegym.agents.rl.best.evaluate_model` use
    (``policy``: the module, whose ``state_dict`` is kept and restored; ``num_timesteps``; ``_n_updates``).

    ``predict`` is the argmax of the masked logits of a batch (all-ones masks when the module was trained without);
    it records ``ln(#legal actions)`` of every decision it sees (the diagnostics' entropy ceiling)."""

    def __init__(self, module, masked: bool) -> None:
        self.policy = module
        self.masked = bool(masked)
        self.num_timesteps = 0
        self._n_updates = 0
        self._n = int(module.action_space.n)
        self._log_legal: list[float] = []

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = True, action_masks=None):
        """``(actions, state)`` for a batch of observations (or one)."""
        obs = np.asarray(observation, dtype=np.float32)
        single = obs.ndim == 1
        obs = obs.reshape(1, -1) if single else obs
        if self.masked and action_masks is not None:
            mask = np.asarray(action_masks, dtype=np.float32).reshape(obs.shape[0], self._n)
        else:
            mask = np.ones((obs.shape[0], self._n), np.float32)
        self._log_legal.extend(np.log(np.maximum(mask.sum(axis=1), 1.0)).tolist())
        acts = self.policy.masked_logits(obs, mask).argmax(axis=1)
        return (int(acts[0]) if single else acts), state

    def mean_log_legal(self) -> float:
        """Mean ``ln(#legal actions)`` over the decisions seen so far (NaN before any)."""
        return float(np.mean(self._log_legal)) if self._log_legal else float("nan")


@contextlib.contextmanager
def _ray_logs(verbose: bool):
    """Ray's own log lines off (unless ``verbose``): the ``ray`` loggers at ERROR for the run (restored afterwards).
    The lines Ray's C++ core writes to this process's stderr are held back by :func:`_held_stderr` around the calls
    that print them."""
    if verbose:
        yield
        return
    logger = logging.getLogger("ray")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def _held_stderr(hold: bool):
    """With ``hold``, file descriptor 2 goes to a temporary file for the block: what Ray's C++ core prints there
    while starting, building the env runners and stopping (its log-level notice, ``core_worker`` lines about actor
    restarts) is dropped when the block succeeds, and written out when it raises an error (it may explain it)."""
    if not hold:
        yield
        return
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        failed = False
        try:
            yield
        except Exception:
            failed = True
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if failed:
                tmp.seek(0)
                sys.stderr.write(tmp.read().decode(errors="replace"))
                sys.stderr.flush()


def _warm_start_settings(env_id: str, hp: dict, timesteps: int, eval_seed: int, n_eval: int) -> tuple[dict, dict]:
    """The teacher and behaviour-cloning settings, and the validated DAgger ones (as the SB3 backend reads them)."""
    from .learned import resolve_policy
    from .settings import check_dagger as _check_dagger

    teacher = hp.get("teacher") or hp.get("bc_teacher")
    bc = {"bc_teacher": resolve_policy(teacher) if teacher else None,
          **{k: hp[k] for k in ("bc_episodes", "bc_epochs", "bc_seed") if k in hp}}
    dg = {k: hp[k] for k in ("dagger_rounds", "dagger_episodes", "dagger_beta", "dagger_epochs", "dagger_seed",
                             "teacher_workers") if k in hp}
    return bc, _check_dagger(env_id, bc, dg, timesteps, eval_seed, n_eval)


def _sb3_twin(env_id: str, train_cfg: dict, policy: str, model_config: dict, hp: dict, seed: int):
    """An sb3-contrib MaskablePPO of the RLlib module's architecture (the network the warm start fits)."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    if "layout" in model_config:
        from .shared import SharedRowPolicy

        pol, kwargs = SharedRowPolicy, {"layout": model_config["layout"], "hidden": model_config["hidden"]}
    else:
        pol, kwargs = "MlpPolicy", {"net_arch": model_config["net_arch"]}
    return MaskablePPO(pol, gym.make(env_id, config=train_cfg or None), seed=int(seed), device="cpu",
                       gamma=float(hp.get("gamma", 0.99)), policy_kwargs=kwargs, n_steps=64, batch_size=64)


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
    keep_best: bool = True,
    verbose: bool | None = None,
) -> dict:
    """Warm-start (with a teacher), then train RLlib PPO on ``env_id`` until ``timesteps`` env steps are sampled;
    save the best evaluated model in ``out/checkpoint`` (see the module docstring for the phases).

    ``hp``: the hyperparameters of ``algo`` for ``env_id`` (what ``edgegym train`` resolves from the recipe, the
    ``--hyperparams`` file and the flags: ``teacher`` / ``bc_teacher``, ``bc_*``, ``dagger_*``, ``eval_freq``,
    ``collapse_share`` as on the SB3 backend); ``algo``: ``maskable-ppo`` (masked actions) or ``ppo`` (unmasked).
    ``timesteps=0`` (with a teacher): no Ray, the warm-started module is the result. ``torch_threads``: the
    learner's PyTorch threads (default 1). ``n_env_runners`` env runners (default 2), one env each, seeded from
    ``seed``. ``address``: join that Ray cluster (else a local one, shut down at the end); with ``teacher_workers``
    > 1 the teacher's labels are Ray tasks on it too. ``keep_best``: save the
    best evaluated weights (else the final ones). ``verbose``: Ray's own log lines (default: ``$EDGEGYM_RAY_LOGS``).

    Returns the summary (also ``out/train.json``): ``iterations`` (one row per ``Algorithm.train()``: env steps,
    mean episode return of the env runners, seconds), ``wall_s``, ``phases_s`` (setup: Ray and the env runners;
    behaviour cloning and DAgger; training: sampling and learning, evaluations excluded; evaluations; save),
    ``env_steps_per_s`` (env steps / training seconds), ``overall_env_steps_per_s`` (env steps / every phase), and
    the SB3 backend's fields: ``behaviour_cloning``, ``dagger``, ``diagnostics`` (per iteration: KL, entropy, value
    loss, explained variance), ``evaluations``, ``best``, ``restored_best``, ``saved_eval``, ``warnings``, plus
    ``interrupted`` and ``resumable`` (whether ``checkpoint/`` is a full algorithm checkpoint).
    """
    _need_rllib()
    import gymnasium as gym
    import torch

    from ..runner import merge_config
    from .best import (
        COLLAPSE_SHARE,
        BestModelCallback,
        auto_eval_freq,
        best_model_fields,
        collapse_warnings,
        write_train_json,
    )
    from .diagnostics import warnings_for
    from .rllib_model import MaskedObservation, MaskedPPOModule, quiet_rllib
    from .shared import env_obs_layout

    t_start = time.perf_counter()

    def say(msg: str) -> None:
        if progress:
            print(f"edgegym train: {msg}", file=sys.stderr, flush=True)

    if algo not in ALGOS:
        raise ValueError(f"unknown algorithm {algo!r} (valid: {', '.join(ALGOS)})")
    if int(timesteps) < 0:
        raise ValueError(f"timesteps must be >= 0, got {timesteps}")
    if verbose is None:
        verbose = os.environ.get(RAY_LOGS_VAR, "") not in ("", "0")
    threads = int(torch_threads) if torch_threads is not None else 1
    torch.set_num_threads(threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    hp = dict(hp)
    cfg = merge_config(hp.pop("env_config", {}) or {}, env_config)
    train_cfg = merge_config(cfg, hp.pop("train_env_config", None) or {})
    runners = int(n_env_runners) if n_env_runners is not None else 2
    if runners < 1:
        raise ValueError(f"env runners must be >= 1, got {runners}")
    n_eval = int(n_eval_episodes if n_eval_episodes is not None else hp.get("n_eval_episodes", 3))
    eval_seed = int(hp.get("eval_seed", 10_000))
    share = float(hp.get("collapse_share", COLLAPSE_SHARE))
    bc, dg = _warm_start_settings(env_id, hp, timesteps, eval_seed, n_eval)
    ignored = [k for k in hp if k not in USED_KEYS]
    if ignored:
        say(f"notice: SB3-only hyperparameters ignored by the rllib backend: {', '.join(ignored)}")
    if int(hp.get("checkpoint_freq", 0) or 0) > 0:
        say("notice: checkpoint_freq is SB3-only: the rllib backend saves the best evaluated model at the end")
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
    ef_raw = hp.get("eval_freq", "auto")
    if ef_raw != "auto" and (isinstance(ef_raw, bool) or not isinstance(ef_raw, int) or ef_raw < 0):
        raise ValueError(f"eval_freq must be 'auto' or an integer >= 0, got {ef_raw!r}")
    ef = auto_eval_freq(timesteps, batch) if ef_raw == "auto" else int(ef_raw)

    # the driver's copy of the module: warm-started, evaluated, kept at its best, saved
    torch.manual_seed(int(seed))
    with quiet_rllib():
        module = MaskedPPOModule(observation_space=obs_space, action_space=act_space, model_config=model_config)
    model = _ModuleModel(module, masked)
    phases: dict = {"setup_s": time.perf_counter() - t_start}
    bc_summary = dagger_summary = None
    keeper = BestModelCallback(env_id, train_cfg, range(eval_seed, eval_seed + n_eval), ef,
                               progress=say if progress else None)
    keeper.init_callback(model)
    # what the PPO phase has done so far (read back after an interruption too)
    st = {"steps": 0, "iterations": [], "diagnostics": [], "ray_s": 0.0, "train_s": 0.0, "resumable": False,
          "restored": False}
    interrupted = False
    ckpt = out / RLLIB_CHECKPOINT_DIR
    try:
        if bc["bc_teacher"]:
            from .dagger import warm_start

            twin = _sb3_twin(env_id, train_cfg, policy, model_config, hp, seed)
            bc_summary, dagger_summary = warm_start(
                twin, env_id, bc, dg, env_config=train_cfg, eval_seeds=range(eval_seed, eval_seed + n_eval),
                seed=int(seed), keep_best=keep_best, progress=say if progress else None, phases=phases,
                address=address)
            sb3_weights_into(twin.policy, module)
            say(f"warm start: the {'DAgger' if dagger_summary else 'behaviour-cloned'} network loaded into the "
                "RLlib module")
        keeper.evaluate_now()  # the starting policy (warm-started or not), before any PPO update
        if int(timesteps) > 0:
            with _ray_logs(verbose):
                _ppo(st, env_id=env_id, timesteps=int(timesteps), seed=int(seed), ckpt=ckpt, rl=rl,
                     spaces=(obs_space, act_space), model_config=model_config, runners=runners, batch=batch,
                     env_ctx={"env_id": env_id, "config": train_cfg, "masked": masked, "torch_threads": 1},
                     address=address, model=model, keeper=keeper, ef=ef, keep_best=keep_best, verbose=verbose,
                     say=say)
        else:
            say("PPO: none (--timesteps 0): the model is the " + ("best DAgger round's" if dagger_summary else
                                                                   "behaviour-cloned one"))
    except KeyboardInterrupt:
        interrupted = True
        st["resumable"] = False
    steps, iters, diag = st["steps"], st["iterations"], st["diagnostics"]
    restored = st["restored"]
    if not st["resumable"]:  # no PPO, or interrupted: the RLModule alone (what evaluation loads)
        restored = keep_best and (keeper.restore_best() or restored)
        if interrupted:
            say("interrupted: saving the " + (("best evaluated" if keep_best else "last evaluated") + " model so far"
                                              if keeper.history else "starting weights (nothing evaluated yet)"))
        t_save = time.perf_counter()
        _save_module(module, ckpt)
        phases["save_s"] = time.perf_counter() - t_save
    for key in ("ray_s", "train_s"):
        if st[key]:
            phases["ray_setup_s" if key == "ray_s" else "training_s"] = st[key]
    if "save_s" in st:
        phases["save_s"] = st["save_s"]
    train_s = st["train_s"]
    phases["evaluations_s"] = keeper.eval_s
    meta = {"env_id": env_id, "algo": "rllib", "rllib_algo": "PPO", "hyperparams_of": algo, "masked": masked,
            "env_config": cfg, "seed": int(seed), "timesteps": int(timesteps),
            "module": Path(RLLIB_CHECKPOINT_DIR, *RLLIB_MODULE_SUBDIR).as_posix()}
    (out / RLLIB_SIDECAR).write_text(json.dumps(meta, indent=2))
    wall = time.perf_counter() - t_start
    saved = keeper.best if restored or (interrupted and keep_best) else (keeper.history[-1] if keeper.history
                                                                         else None)
    for row in diag:
        row["mean_log_legal_actions"] = model.mean_log_legal()
    warnings = warnings_for(diag) + collapse_warnings(keeper.history, share, warm_start=bc_summary is not None)
    if dagger_summary is not None:
        warnings += dagger_summary["warnings"]
    summary = {
        **meta,
        "backend": "rllib",
        "model": str(out),
        "checkpoint": str(ckpt),
        "resumable": bool(st["resumable"]),
        "interrupted": interrupted,
        "ray_address": address or "local",
        "env_runners": runners,
        "num_timesteps": steps,
        "iterations": iters,
        "wall_s": wall,
        "phases_s": phases,
        "env_steps_per_s": steps / train_s if train_s > 0 else None,
        "overall_env_steps_per_s": steps / wall if wall > 0 and steps else None,
        "torch_threads": threads,
        "hyperparams": {"policy": policy, "model_config": {k: v for k, v in model_config.items() if k != "layout"},
                        **{k: ("inf" if v == float("inf") else v) for k, v in rl.items()}},  # plain JSON
        "train_env_config": train_cfg,
        "behaviour_cloning": bc_summary,
        "dagger": dagger_summary,
        "diagnostics": diag,
        **best_model_fields(keeper, ef, eval_seed, n_eval, share, restored, saved, warnings),
    }
    write_train_json(out, summary)
    if interrupted:
        print(f"edgegym train: interrupted after {steps} env steps; {out} holds the "
              f"{'best evaluated' if keep_best else 'last evaluated'} model so far (train.json: interrupted)",
              file=sys.stderr, flush=True)
        raise KeyboardInterrupt
    return summary


def _save_module(module, ckpt: Path) -> None:
    """Save the RLModule alone where an algorithm checkpoint keeps it (a previous run's checkpoint is replaced)."""
    import shutil

    if ckpt.exists():
        shutil.rmtree(ckpt)
    path = ckpt.joinpath(*RLLIB_MODULE_SUBDIR)
    path.parent.mkdir(parents=True, exist_ok=True)
    module.save_to_path(str(path.resolve()))


def _pull(algo_obj, module) -> None:
    """The learner's current weights into the driver's module."""
    module.set_state(algo_obj.get_weights()["default_policy"])


def _push(algo_obj, module) -> None:
    """The driver module's weights into the learner, synced to the env runners (``Algorithm.set_state``)."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE

    algo_obj.set_state({COMPONENT_LEARNER_GROUP: {COMPONENT_LEARNER: {COMPONENT_RL_MODULE: {
        "default_policy": module.get_state()}}}})


def _ppo(st: dict, *, env_id, timesteps, seed, ckpt, rl, spaces, model_config, runners, batch, env_ctx, address,
         model, keeper, ef, keep_best, verbose, say) -> None:
    """RLlib PPO from the driver module's weights: Ray up, the algorithm built, ``Algorithm.train()`` until
    ``timesteps`` env steps, evaluations every ``ef`` env steps and after the last update, the best (or the final)
    weights saved as a full algorithm checkpoint in ``ckpt``; Ray down. Fills ``st`` as it goes (``steps``,
    ``iterations``, ``diagnostics``, ``ray_s``, ``train_s``, ``save_s``, ``resumable``, ``restored``)."""
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from .rllib_model import MaskedPPOModule, quiet_rllib

    t_ray = time.perf_counter()
    module = model.policy
    init_kw = {"log_to_driver": bool(verbose), **({} if verbose else {"logging_level": logging.ERROR})}
    started_ray = False  # this run connected (and disconnects at the end); an already connected caller keeps Ray
    if ray.is_initialized():
        say("using the Ray session this process is already connected to")
    elif address:
        say(f"connecting to the Ray cluster at {address}")
        try:
            with _held_stderr(not verbose):
                ray.init(address=address, **init_kw)
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
        with _held_stderr(not verbose):
            ray.init(num_cpus=ncpu, include_dashboard=False, **init_kw)
        started_ray = True
    algo_obj = None
    try:
        cpus = float(ray.cluster_resources().get("CPU", 0.0))
        if cpus < runners:
            raise ValueError(f"{runners} env runners need {runners} CPUs; the Ray cluster has {cpus:g} "
                             "(fewer env runners with --n-envs, or more CPUs in the cluster)")
        register_env(ENV_NAME, make_env)
        obs_space, act_space = spaces
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
            f"{'masked' if env_ctx['masked'] else 'unmasked'} actions); evaluations on seeds "
            f"{keeper.seeds[0]}-{keeper.seeds[-1]} " + (f"every {ef} steps" if ef > 0 else "at the start and the end"))
        with quiet_rllib(), _held_stderr(not verbose):
            algo_obj = config.build_algo()
        _push(algo_obj, module)  # PPO starts from the evaluated start
        st["ray_s"] = time.perf_counter() - t_ray
        t_train = time.perf_counter()
        eval_before = keeper.eval_s
        last_eval = 0
        while st["steps"] < timesteps:
            t_it = time.perf_counter()
            res = algo_obj.train()
            dt = time.perf_counter() - t_it
            steps = int(_get(res, "env_runners", "num_env_steps_sampled_lifetime",
                             default=_get(res, "num_env_steps_sampled_lifetime", default=st["steps"] + batch)))
            st["steps"] = model.num_timesteps = steps
            model._n_updates += int(rl["num_epochs"])
            ret = _finite(_get(res, "env_runners", "episode_return_mean"))
            st["iterations"].append({
                "iteration": len(st["iterations"]) + 1, "env_steps": steps, "wall_s": dt, "episode_return_mean": ret,
                # RLlib's own timers (exponentially smoothed over the iterations)
                "rllib_sampling_timer_s": _get(res, "timers", "env_runner_sampling_timer"),
                "rllib_learner_update_timer_s": _get(res, "timers", "learner_update_timer")})
            lr = _get(res, "learners", "default_policy", default={})
            row = {"approx_kl": lr.get("mean_kl_loss"), "entropy": lr.get("entropy"), "value_loss": lr.get("vf_loss"),
                   "policy_loss": lr.get("policy_loss"), "explained_variance": lr.get("vf_explained_var")}
            st["diagnostics"].append({"timesteps": steps,
                                      **{k: float(v) for k, v in row.items() if _finite(v) is not None}})
            say(f"iteration {len(st['iterations'])}: {steps}/{timesteps} env steps, {dt:.1f} s"
                + (f", mean episode return {ret:.4g}" if ret is not None else ""))
            if ef > 0 and steps - last_eval >= ef and steps < timesteps:  # the final evaluation covers the end
                _pull(algo_obj, module)
                keeper.evaluate_now()
                last_eval = steps
            st["train_s"] = time.perf_counter() - t_train - (keeper.eval_s - eval_before)
        _pull(algo_obj, module)
        if not keeper.history or keeper.history[-1]["updates"] != model._n_updates:
            keeper.evaluate_now()  # the weights after the last update
        st["train_s"] = time.perf_counter() - t_train - (keeper.eval_s - eval_before)
        t_save = time.perf_counter()
        st["restored"] = keep_best and keeper.restore_best()
        if st["restored"]:
            b = keeper.best
            say(f"restored the best evaluated model (at {b['timesteps']} steps: mean return {b['mean_return']:.4g}; "
                f"the final one: {keeper.history[-1]['mean_return']:.4g})")
            _push(algo_obj, module)
        algo_obj.save_to_path(str(ckpt.resolve()))
        st["resumable"] = True
        st["save_s"] = time.perf_counter() - t_save
    finally:
        with _held_stderr(not verbose):
            if algo_obj is not None:
                algo_obj.stop()
            if started_ray:
                ray.shutdown()


def summary_line(s: dict) -> str:
    """The line ``edgegym train --backend rllib`` prints for the summary ``s`` of :func:`train_rllib`."""
    ph = s["phases_s"]
    rate = (f"{s['env_steps_per_s']:.0f} env steps/s while training, {s['overall_env_steps_per_s']:.0f} overall; "
            if s["num_timesteps"] and s["env_steps_per_s"] else "no PPO; ")
    ev = s["saved_eval"]
    kept = ""
    if ev:
        which = "restored best" if s["restored_best"] else ("best so far" if s["interrupted"] else "final")
        kept = (f" ({which} weights, evaluation at {ev['timesteps']} steps: mean return {ev['mean_return']:.4g}, "
                f"objective {ev['mean_objective']:.6g})")
    return (f"[{s['env_id']} | rllib PPO | seed {s['seed']}] {s['num_timesteps']} steps in {s['wall_s']:.1f} s ({rate}"
            + ", ".join(f"{k[:-2].replace('_', ' ')} {v:.1f} s" for k, v in ph.items()) + f"); saved {s['model']}"
            + kept)
