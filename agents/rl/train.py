"""``edgegym train`` / ``edgegym eval``: SB3 PPO and sb3-contrib MaskablePPO on any registered env id.

Training: hyperparameters from the recipe ``agents/rl/<algo>.yaml`` (``default`` < env family < env id), overlaid
key by key by ``--hyperparams FILE`` (``--replace-hyperparams``: the file alone), then the recipe flags
(:func:`resolve_hyperparams`; the changed keys printed on one line) and ``--env-config``; a budget rounded up to
whole rollouts; a seeded ``DummyVecEnv`` (``--subproc``: ``SubprocVecEnv``), an optional behaviour-cloning warm
start, evaluations on seeds disjoint from the evaluation seeds with the best model kept and restored at the end
(:mod:`edgegym.agents.rl.best`), warnings when the policy does not learn, collapses onto one action or falls below
its start, optional checkpoints (off by default) and TensorBoard, progress on stderr for every phase (off a
terminal, a line about once a minute instead of a progress bar). Output ``DIR/``: ``model.zip`` (the best evaluated
weights), ``model.edgegym.json`` (env id, algo, env config, seed), ``train.json`` (every phase's time, env steps/s,
every evaluation, warnings), ``checkpoints/`` with ``--checkpoint-freq``. Nothing is written outside ``DIR`` (SB3's
default logger would leave an empty ``SB3-<timestamp>`` folder in the temp folder; edgegym gives it no folder).

Reproducibility: PyTorch threads fixed (:func:`default_torch_threads`), SB3 ``seed=``, env ``i`` seeded
``seed + i``; two runs with the same arguments on the same machine give the same model and the same evaluation.

Evaluation goes through :func:`edgegym.agents.runner.run_episode` with the policy name ``<algo>:DIR/model.zip``, the
same path as every reference policy, so learned and reference policies land in the same table.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from importlib import resources
from pathlib import Path

import yaml

from ..runner import merge_config  # one per-section merge for runs and training (a bad section is a UserError)
from .learned import ALGOS, LearnedPolicyError, learned_env_config, sidecar_path
from .settings import check_dagger as _check_dagger
from .settings import int_setting as _int_setting

__all__ = ["load_hyperparams", "resolve_hyperparams", "describe_hyperparams", "whole_rollouts",
           "LogProgressCallback", "FLAG_KEYS", "RECIPE_FLAGS", "train", "evaluate", "add_train_parser",
           "add_eval_parser", "merge_config", "parse_env_config", "ensure_writable_dir"]

#: keys of the hyperparameter YAML that edgegym consumes (everything else goes to the algorithm)
EDGEGYM_KEYS = ("n_envs", "env_config", "eval_freq", "n_eval_episodes", "eval_seed", "checkpoint_freq",
                "train_env_config", "bc_teacher", "bc_episodes", "bc_epochs", "bc_seed", "collapse_share",
                "teacher", "dagger_rounds", "dagger_episodes", "dagger_beta", "dagger_epochs", "dagger_seed",
                "teacher_workers")
_ALGO_KEYS = (
    "policy", "learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range",
    "clip_range_vf", "normalize_advantage", "ent_coef", "vf_coef", "max_grad_norm", "target_kl",
    "stats_window_size", "policy_kwargs", "use_sde", "sde_sample_freq",
)


def _cli_error(msg: str) -> Exception:
    from ..errors import CLIError

    return CLIError(msg)


def parse_env_config(text: str | None) -> dict:
    """``--env-config``: inline JSON/YAML (``'{"env": {"action_mode": "cloud_split"}}'``) or a file path."""
    if not text:
        return {}
    p = Path(text)
    if not p.is_file() and p.suffix.lower() in (".yaml", ".yml", ".json") and "\n" not in text:
        raise _cli_error(f"--env-config: no such file {text!r}")
    try:
        if p.is_file():
            data = yaml.safe_load(p.read_text())
        else:
            data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise _cli_error(f"--env-config: cannot parse {text!r}: {' '.join(str(e).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise _cli_error(f"--env-config must be a mapping of sections to mappings, got {data!r}")
    return data


def ensure_writable_dir(path: str | Path, flag: str = "--out") -> Path:
    """Create ``path`` (and parents) and check a file can be written in it; a clear error otherwise."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / ".edgegym-write-probe"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise _cli_error(f"{flag} {str(p)!r} is not a writable directory ({e.strerror or e})") from None
    return p


def _family(env_id: str) -> str:
    from ..runner import env_family as _env_family

    return _env_family(env_id)


def _shipped_recipes() -> list[str]:
    """File names of the hyperparameter YAMLs shipped in ``edgegym.agents.rl`` (the recipes)."""
    return sorted(p.name for p in resources.files("edgegym.agents.rl").iterdir() if p.name.endswith(".yaml"))


def shown_recipe(path) -> str:
    """How a hyperparameter file is named in messages: a shipped recipe as ``agents/rl/<name>`` (never the install
    folder's absolute path), any other file as given."""
    p = Path(path)
    try:
        shipped = Path(str(resources.files("edgegym.agents.rl"))).resolve()
        if p.resolve().parent == shipped and p.name in _shipped_recipes():
            return f"agents/rl/{p.name}"
    except (OSError, TypeError):
        pass
    return str(path)


def shipped_recipe(value: str) -> str:
    """``value`` itself when it is a file; else the shipped recipe it names, as a path (``expert-iteration``,
    ``expert-iteration.yaml`` or the repository path ``agents/rl/expert-iteration.yaml`` all name the recipe
    shipped with the package, so a command copied from the docs works from any folder); else ``value`` unchanged."""
    if Path(value).is_file():
        return value
    name = Path(value).name
    name = name if name.endswith(".yaml") else f"{name}.yaml"
    if name in _shipped_recipes():
        with resources.as_file(resources.files("edgegym.agents.rl").joinpath(name)) as path:
            if Path(path).is_file():
                return str(path)
    return value


def load_hyperparams(algo: str, env_id: str, path: str | Path | None = None) -> dict:
    """The hyperparameters of ``algo`` for ``env_id``: ``default``, then the env family, then the env id.

    ``path``: a YAML file of the same shape read instead of the shipped ``agents/rl/<algo>.yaml`` (the file alone:
    :func:`resolve_hyperparams` overlays it on the recipe, as ``edgegym train`` does). Raises ``ValueError`` naming
    the key and the file for an unknown key.
    """
    if algo not in ALGOS:
        raise ValueError(f"unknown algorithm {algo!r} (valid: {', '.join(ALGOS)})")
    if path is None:
        src = f"agents/rl/{algo}.yaml"
        text = resources.files("edgegym.agents.rl").joinpath(f"{algo}.yaml").read_text()
    else:
        src = str(path)
        try:
            text = Path(path).read_text()
        except UnicodeDecodeError as e:
            raise ValueError(f"{src}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ValueError(f"{src}: not valid YAML: {' '.join(str(e).split())}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{src}: expected a mapping of sections (default, family, env id)")
    hp: dict = {}
    fam = _family(env_id)
    version = env_id.rsplit("-v", 1)[-1]
    # a section "<Family>-v<N>" applies to every v<N> id of the family (it is also the default preset's own id)
    sections = ["default", fam] + [s for s in (f"{fam}-v{version}", env_id) if s in data or s == env_id]
    if path is not None:
        _check_sections(data, src, env_id, sections)
    for section in dict.fromkeys(sections):
        vals = data.get(section) or {}
        if not isinstance(vals, dict):
            raise ValueError(f"{src}: section {section!r} must be a mapping")
        for k, v in vals.items():
            if k not in EDGEGYM_KEYS and k not in _ALGO_KEYS:
                raise ValueError(
                    f"{src}: unknown key '{section}.{k}' (valid: {', '.join(EDGEGYM_KEYS + _ALGO_KEYS)})"
                )
            if isinstance(v, dict) and isinstance(hp.get(k), dict):
                hp[k] = {**hp[k], **v}
            else:
                hp[k] = v
    return hp


#: hyperparameter keys set by ``edgegym train`` flags, and the flag of each (the flags override the recipe)
FLAG_KEYS = {
    "learning_rate": "--learning-rate", "n_steps": "--n-steps", "batch_size": "--batch-size",
    "n_epochs": "--n-epochs", "ent_coef": "--ent-coef", "gamma": "--gamma", "bc_episodes": "--bc-episodes",
    "bc_epochs": "--bc-epochs", "teacher": "--teacher", "dagger_rounds": "--dagger-rounds",
    "dagger_episodes": "--dagger-episodes", "dagger_beta": "--dagger-beta", "teacher_workers": "--teacher-workers",
    "n_envs": "--n-envs",
    "eval_freq": "--eval-freq", "checkpoint_freq": "--checkpoint-freq", "collapse_share": "--collapse-share",
}


def _overlay(base: dict, over: dict) -> dict:
    """``base`` with every key of ``over`` set over it, nested mappings merged key by key (lists replaced)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _overlay(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


_UNSET = object()


def _leaves(d: dict, prefix: str = "") -> dict:
    """``{"a.b": value}`` for every leaf of a nested mapping (an empty mapping is a leaf)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(_leaves(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def resolve_hyperparams(algo: str, env_id: str, path: str | Path | None = None, *, replace: bool = False,
                        overrides: dict | None = None) -> tuple[dict, list[dict]]:
    """The hyperparameters ``edgegym train`` uses for ``algo`` on ``env_id``, and what changed them.

    The shipped recipe (:func:`load_hyperparams`: ``agents/rl/<algo>.yaml``, sections ``default`` < family < id)
    is overlaid key by key by the file ``path`` (its own sections resolved the same way; nested mappings such as
    ``env_config`` or ``policy_kwargs`` merged, so a file that sets only ``learning_rate`` keeps everything else of
    the recipe); ``replace=True`` reads ``path`` alone instead. ``overrides`` (hyperparameter key -> value, ``None``
    values skipped: the ``edgegym train`` flags, :data:`FLAG_KEYS`) are set last. Returns ``(hp, changes)``, one
    change per leaf key whose value differs from the recipe: ``{"key", "from", "to", "by"}`` (``key`` dotted for
    nested keys, ``from`` ``None`` when the recipe does not set it, ``by`` the file or the flag)."""
    shipped = load_hyperparams(algo, env_id)
    changes: list[dict] = []
    if path is None:
        hp = copy.deepcopy(shipped)
    elif replace:
        hp = load_hyperparams(algo, env_id, path)
    else:
        hp = _overlay(shipped, load_hyperparams(algo, env_id, path))
        before, after = _leaves(shipped), _leaves(hp)
        if "teacher" not in before and "bc_teacher" in before:  # a teacher replaces the recipe's behaviour cloning's
            before["teacher"] = before["bc_teacher"]
        changes = [{"key": k, "from": before.get(k), "to": v, "by": shown_recipe(path)}
                   for k, v in after.items() if before.get(k, _UNSET) != v]
    for k, v in (overrides or {}).items():
        if v is None:
            continue
        # a teacher flag replaces the recipe's behaviour-cloning teacher, whichever key the recipe names it by
        old = (hp.get("teacher") or hp.get("bc_teacher")) if k == "teacher" else hp.get(k)
        if old != v or k not in hp:
            changes.append({"key": k, "from": old, "to": v, "by": FLAG_KEYS.get(k, k)})
        hp[k] = v
    return hp, changes


def describe_hyperparams(algo: str, env_id: str, path: str | Path | None, replace: bool,
                         changes: list[dict]) -> str | None:
    """The one line ``edgegym train`` prints about its hyperparameters: the recipe and every key a file or a flag
    changed (``None`` when nothing but the shipped recipe is used)."""
    if path is None and not changes:
        return None

    def fmt(v) -> str:
        if v is None:
            return "unset"
        if isinstance(v, float):
            return f"{v:g}"
        return v if isinstance(v, str) else json.dumps(v)

    path = shown_recipe(path) if path is not None else None
    base = (f"{path} alone (--replace-hyperparams: agents/rl/{algo}.yaml not read)" if replace and path is not None
            else f"agents/rl/{algo}.yaml")
    by_file = [c for c in changes if not c["by"].startswith("--")]
    by_flag = [c for c in changes if c["by"].startswith("--")]
    parts = []
    if path is not None and not replace:
        parts.append(f"changed by {path}: " + ", ".join(f"{c['key']} {fmt(c['from'])} -> {fmt(c['to'])}"
                                                        for c in by_file) if by_file else f"{path} changes nothing")
    if by_flag:
        parts.append("by flags: " + ", ".join(f"{c['key']} {fmt(c['from'])} -> {fmt(c['to'])} ({c['by']})"
                                               for c in by_flag))
    return f"hyperparameters for {env_id}: " + "; ".join([base, *parts])


def _check_sections(data: dict, src: str, env_id: str, applying: list[str]) -> None:
    """A ``--hyperparams`` file must name only known sections, and at least one that applies to ``env_id``."""
    import edgegym
    from edgegym.families import families

    fams = list(families())
    known = {"default", *fams, *edgegym.registered_ids()}
    versions = {i.rsplit("-v", 1)[-1] for i in edgegym.registered_ids()}
    known |= {f"{f}-v{v}" for f in fams for v in versions}
    unknown = [s for s in data if s not in known]
    if unknown:
        raise ValueError(f"{src}: unknown section {unknown[0]!r} (a section is 'default', a family "
                         f"({', '.join(fams)}), '<Family>-v<N>' or an env id)")
    if not any(s in data for s in applying):
        raise ValueError(f"{src}: no section applies to {env_id} (its sections: {', '.join(map(str, data))}; "
                         f"sections applied to it: {', '.join(dict.fromkeys(applying))})")






def _make_vec(env_id: str, n_envs: int, seed: int, env_config: dict, subproc: bool):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    return make_vec_env(
        # a subprocess starts without edgegym imported: "module:id" makes gymnasium import it (registering the ids)
        f"edgegym:{env_id}" if subproc else env_id,
        n_envs=n_envs,
        seed=seed,
        env_kwargs={"config": env_config or None, "render_mode": None},
        vec_env_cls=SubprocVecEnv if subproc else DummyVecEnv,
    )


def default_torch_threads() -> int:
    """PyTorch threads for training: ``$EDGEGYM_TORCH_THREADS`` when set, else 1.

    The policies here are small networks fed one batch at a time; PyTorch's default (one thread per core) spends
    its time synchronising threads: plain SB3 PPO ran 2,048 steps in 60.7 s with the default threads against 2.1 s
    with one thread on a 2-core machine. Override with ``--torch-threads`` (or the variable)."""
    import os

    raw = os.environ.get("EDGEGYM_TORCH_THREADS")
    if raw is None:
        return 1
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"EDGEGYM_TORCH_THREADS must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"EDGEGYM_TORCH_THREADS must be a positive integer, got {raw!r}")
    return n


def _quiet_logger(verbose: int):
    """SB3's logger without the ``SB3-<timestamp>`` folder its default creates in the temp folder at verbosity 0."""
    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    return Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose else [])


def train(
    env_id: str,
    algo: str,
    timesteps: int,
    seed: int,
    out: str | Path,
    *,
    hyperparams: str | Path | None = None,
    env_config: dict | None = None,
    n_envs: int | None = None,
    subproc: bool = False,
    tensorboard: bool = False,
    progress: bool = True,
    eval_freq: int | None = None,
    checkpoint_freq: int | None = None,
    verbose: int = 0,
    keep_best: bool = True,
    torch_threads: int | None = None,
    collapse_share: float | None = None,
    teacher: str | None = None,
    dagger_rounds: int | None = None,
    dagger_episodes: int | None = None,
    dagger_beta: float | None = None,
    teacher_workers: int | None = None,
    replace_hyperparams: bool = False,
    overrides: dict | None = None,
    log_every_s: float = 60.0,
    on_model=None,
) -> dict:
    """Train ``algo`` on ``env_id`` for ``timesteps`` env steps; save ``out/model.zip``; return the summary.

    Phases: behaviour cloning (when a teacher is named: ``teacher``, or the YAML's ``teacher`` / ``bc_teacher``),
    expert iteration (``dagger_rounds`` > 0, :mod:`edgegym.agents.rl.dagger`: the teacher labels the states the
    student visits, ``dagger_episodes`` per round, β-mixture ``dagger_beta``, on ``teacher_workers`` processes; the
    best round's model is kept), PPO
    (none with ``timesteps=0``, which needs a teacher), and the evaluations of
    :class:`~edgegym.agents.rl.best.BestModelCallback` (the starting policy, every ``eval_freq`` env steps —
    ``auto``: about ten per run — and the final one) on seeds ``eval_seed, eval_seed + 1, …`` (10,000 by default,
    disjoint from the evaluation seeds 100-104). With ``keep_best`` (the default) the best evaluated weights are
    restored at the end, so ``model.zip`` is never worse on those seeds than any evaluated point of the run;
    ``eval_freq=0`` evaluates only the start and the end. ``progress`` prints a line per phase on stderr (and SB3's
    progress bar during PPO).

    The summary (also written to ``out/train.json``): ``wall_s`` (every phase), ``phases_s`` (setup, behaviour
    cloning, PPO rollouts, PPO updates, evaluations, saving), ``env_steps_per_s`` (timesteps / wall_s),
    ``rollout_steps_per_s`` (timesteps / rollout time), ``evaluations`` (one row per evaluation), ``best``,
    ``restored_best``, ``dagger`` (every round: dataset size, agreement with the teacher, the student's objective on
    the evaluation seeds, the teacher's label time), the hyperparameters, diagnostics and ``warnings`` (not
    learning, argmax collapse, regression below the starting policy, a teacher that is not Markov; also printed on
    stderr).

    ``on_model(stage, row, model)``, when given, is called after every evaluation of the model being trained: ``stage``
    ``"dagger"`` with :func:`~edgegym.agents.rl.dagger.run_dagger`'s round row (round 0: the behaviour-cloned
    model), ``"ppo"`` with :class:`~edgegym.agents.rl.best.BestModelCallback`'s row; a true return value stops
    training there (no further rounds, no PPO), and the best model so far is saved as usual.
    """
    import gymnasium as gym
    import torch
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback

    import edgegym  # noqa: F401  (registers the ids in this process and in subprocess envs)

    from .best import (
        COLLAPSE_SHARE,
        BestModelCallback,
        auto_eval_freq,
        best_model_fields,
        collapse_warnings,
        write_train_json,
    )

    t_start = time.perf_counter()

    def say(msg: str) -> None:
        if progress:
            print(f"edgegym train: {msg}", file=sys.stderr, flush=True)

    threads = int(torch_threads) if torch_threads is not None else default_torch_threads()
    torch.set_num_threads(threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)  # the Python API too (the CLI checks it is writable first)
    flags = {"n_envs": n_envs, "eval_freq": eval_freq, "checkpoint_freq": checkpoint_freq,
             "collapse_share": collapse_share, "teacher": teacher, "dagger_rounds": dagger_rounds,
             "dagger_episodes": dagger_episodes, "dagger_beta": dagger_beta, "teacher_workers": teacher_workers,
             **(overrides or {})}
    hp, hp_changes = resolve_hyperparams(algo, env_id, hyperparams, replace=replace_hyperparams, overrides=flags)
    cfg = merge_config(hp.pop("env_config", {}) or {}, env_config)
    n_envs = _int_setting("n_envs (--n-envs)", hp.pop("n_envs", 1), 1)
    ef_raw = hp.pop("eval_freq", "auto")
    n_eval = int(hp.pop("n_eval_episodes", 3))
    eval_seed = int(hp.pop("eval_seed", 10_000))
    cf = int(hp.pop("checkpoint_freq", 0))
    share = float(hp.pop("collapse_share", COLLAPSE_SHARE))
    policy = hp.pop("policy", "MlpPolicy")
    # training-only overrides (e.g. shorter episodes): not in the sidecar, so evaluation runs the preset itself
    train_cfg = merge_config(cfg, hp.pop("train_env_config", None) or {})
    bc = {k: hp.pop(k) for k in ("bc_teacher", "bc_episodes", "bc_epochs", "bc_seed") if k in hp}
    dg = {k: hp.pop(k) for k in ("dagger_rounds", "dagger_episodes", "dagger_beta", "dagger_epochs", "dagger_seed",
                                 "teacher_workers") if k in hp}
    yaml_teacher = hp.pop("teacher", None)
    bc["bc_teacher"] = yaml_teacher or bc.get("bc_teacher")
    if bc["bc_teacher"]:
        from ..options import resolve_policy

        bc["bc_teacher"] = resolve_policy(bc["bc_teacher"])  # a saved agent by its folder or model.zip
    for key in ("bc_episodes", "bc_epochs"):
        if (overrides or {}).get(key) is not None and not bc["bc_teacher"]:
            raise ValueError(f"{key} ({FLAG_KEYS[key]}) needs a teacher to clone (--teacher NAME, or 'teacher' / "
                             f"'bc_teacher' in the hyperparameters); the recipe for {env_id} names none")
    dg = _check_dagger(env_id, bc, dg, timesteps, eval_seed, n_eval)

    probe = gym.make(env_id, config=train_cfg or None)
    space = probe.action_space
    if policy == "SharedRowPolicy":
        from .shared import SharedRowPolicy, env_obs_layout

        layout = env_obs_layout(probe)
        if layout is None:
            raise ValueError(f"policy SharedRowPolicy needs the env's obs_layout(); {env_id} does not provide it")
        policy = SharedRowPolicy
        hp["policy_kwargs"] = {**(hp.get("policy_kwargs") or {}), "layout": layout}
        hp["policy_kwargs"].pop("net_arch", None)
    probe.close()
    if algo == "maskable-ppo" and not isinstance(space, gym.spaces.Discrete | gym.spaces.MultiDiscrete):
        raise ValueError(
            f"maskable-ppo needs a Discrete or MultiDiscrete action space; {env_id} with this config has {space} "
            '(for EdgeCloudML use --env-config \'{"env": {"action_mode": "cloud_split"}}\')'
        )

    import importlib

    mod, cls = ALGOS[algo]
    klass = getattr(importlib.import_module(mod), cls)
    venv = _make_vec(env_id, n_envs, seed, train_cfg, subproc)
    tb = None
    if tensorboard:
        try:
            import tensorboard  # noqa: F401
        except ImportError:
            raise ValueError("--tensorboard needs the tensorboard package: pip install tensorboard") from None
        tb = str(out / "tb")
    model = klass(policy, venv, seed=seed, verbose=verbose, tensorboard_log=tb, device="cpu", **hp)
    if tb is None:
        model.set_logger(_quiet_logger(verbose))
    rollout = int(getattr(model, "n_steps", 1)) * n_envs
    requested = int(timesteps)
    timesteps = whole_rollouts(requested, rollout)
    if timesteps != requested:
        # SB3 collects whole rollouts: say so rather than train more steps than asked for behind the user's back
        print(f"edgegym train: notice: --timesteps {requested:,} is " + (
            "below one rollout" if requested < rollout else "not a whole number of rollouts")
            + f" (n_steps {rollout // n_envs} x {n_envs} env(s) = {rollout:,} env steps); training "
            f"{timesteps // rollout} rollout(s) = {timesteps:,} env steps", file=sys.stderr, flush=True)
    if ef_raw != "auto" and (isinstance(ef_raw, bool) or not isinstance(ef_raw, int) or ef_raw < 0):
        raise ValueError(f"eval_freq must be 'auto' or an integer >= 0, got {ef_raw!r}")
    ef = auto_eval_freq(timesteps, rollout) if ef_raw == "auto" else int(ef_raw)
    phases = {"setup_s": time.perf_counter() - t_start}

    class _RolloutTimer(BaseCallback):
        def __init__(self):
            super().__init__()
            self.rollout_s = 0.0
            self._t = 0.0

        def _on_rollout_start(self) -> None:
            self._t = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.rollout_s += time.perf_counter() - self._t

        def _on_step(self) -> bool:
            return True

    stop = {"now": False}

    def hook(stage: str):
        def call(row: dict) -> bool:
            stop["now"] = bool(on_model(stage, row, model))
            return stop["now"]
        return call if on_model is not None else None

    bc_summary = dagger_summary = None
    if bc.get("bc_teacher"):
        from .dagger import warm_start

        bc_summary, dagger_summary = warm_start(
            model, env_id, bc, dg, env_config=train_cfg, eval_seeds=range(eval_seed, eval_seed + n_eval), seed=seed,
            keep_best=keep_best, progress=say if progress else None, phases=phases, on_round=hook("dagger"))
    from .diagnostics import DiagnosticsCallback, warnings_for

    timer = _RolloutTimer()
    diag = DiagnosticsCallback()
    keeper = BestModelCallback(env_id, train_cfg, range(eval_seed, eval_seed + n_eval), ef,
                               progress=say if progress else None, on_evaluation=hook("ppo"))
    # the keeper evaluates at rollout starts: first, so that its evaluations stay out of the rollout timer
    callbacks = [keeper, timer, diag]
    bar = progress and sys.stderr.isatty()  # a log file gets a short line at a regular interval instead of a bar
    if progress and not bar:
        callbacks.append(LogProgressCallback(timesteps, say, every_s=log_every_s))
    if cf > 0:
        callbacks.append(CheckpointCallback(max(cf // n_envs, 1), str(out / "checkpoints"), name_prefix="model"))
    if int(timesteps) > 0 and not stop["now"]:
        say(f"PPO: {int(timesteps)} env steps on {n_envs} env(s), {threads} PyTorch thread(s); evaluations on seeds "
            f"{eval_seed}-{eval_seed + n_eval - 1} " + (f"every {ef} steps" if ef > 0 else "at the start and the end"))
        t0 = time.perf_counter()
        model.learn(total_timesteps=int(timesteps), callback=CallbackList(callbacks), progress_bar=bar)
        ppo_wall = time.perf_counter() - t0
        phases["ppo_rollouts_s"] = timer.rollout_s
        phases["evaluations_s"] = keeper.eval_s
        phases["ppo_updates_s"] = max(ppo_wall - timer.rollout_s - keeper.eval_s, 0.0)
    else:
        say("PPO: none (" + ("stopped after an evaluation" if stop["now"] else "--timesteps 0") + "): the model is the "
            + ("best DAgger round's" if dagger_summary else "behaviour-cloned one"))
        if dagger_summary is None and not stop["now"]:
            keeper.init_callback(model)
            keeper.evaluate_now()
            phases["evaluations_s"] = keeper.eval_s
    t_save = time.perf_counter()
    restored = keep_best and keeper.restore_best()
    if restored:
        say(f"restored the best evaluated model (at {keeper.best['timesteps']} steps: mean return "
            f"{keeper.best['mean_return']:.4g}; the final one: {keeper.history[-1]['mean_return']:.4g})")
    model_path = out / "model.zip"
    model.save(str(model_path))
    venv.close()
    meta = {"env_id": env_id, "algo": algo, "env_config": cfg, "seed": seed, "timesteps": int(timesteps),
            **({"timesteps_requested": requested} if requested != timesteps else {})}
    sidecar_path(model_path).write_text(json.dumps(meta, indent=2))
    phases["save_s"] = time.perf_counter() - t_save
    wall = time.perf_counter() - t_start
    saved = keeper.best if restored else (keeper.history[-1] if keeper.history else None)
    if saved is None and dagger_summary is not None and dagger_summary["best"] is not None:
        b = dagger_summary["best"] if keep_best else dagger_summary["rounds"][-1]
        saved = {"timesteps": 0, "dagger_round": b["round"], "mean_return": b.get("eval_mean_return"),
                 "mean_objective": b.get("eval_mean_objective")}
    warnings = warnings_for(diag.history) + collapse_warnings(keeper.history, share, warm_start=bc_summary is not None)
    if dagger_summary is not None:
        warnings += dagger_summary["warnings"]
    summary = {
        **meta,
        "model": str(model_path),
        "n_envs": n_envs,
        "num_timesteps": int(model.num_timesteps),
        "wall_s": wall,
        "phases_s": phases,
        "rollout_s": timer.rollout_s,
        # None (JSON null) where no PPO step ran: train.json must stay plain JSON (no Infinity)
        "env_steps_per_s": model.num_timesteps / wall if wall > 0 and model.num_timesteps else None,
        "rollout_steps_per_s": model.num_timesteps / timer.rollout_s if timer.rollout_s > 0 else None,
        "torch_threads": threads,
        "hyperparams": {"policy": getattr(policy, "__name__", policy), **hp},
        "hyperparams_changed": hp_changes,
        "hyperparams_replaced": bool(replace_hyperparams and hyperparams is not None),
        "train_env_config": train_cfg,
        "behaviour_cloning": bc_summary,
        "dagger": dagger_summary,
        "diagnostics": diag.history,
        **best_model_fields(keeper, ef, eval_seed, n_eval, share, restored, saved, warnings),
    }
    write_train_json(out, summary)
    return summary


def whole_rollouts(timesteps: int, rollout: int) -> int:
    """``timesteps`` rounded up to whole rollouts of ``rollout`` env steps (``n_steps`` x ``n_envs``): what SB3
    trains for a budget of ``timesteps`` (0 stays 0: no PPO)."""
    timesteps, rollout = int(timesteps), max(int(rollout), 1)
    return -(-timesteps // rollout) * rollout


def _log_progress_base():
    from stable_baselines3.common.callbacks import BaseCallback

    return BaseCallback


class LogProgressCallback(_log_progress_base()):
    """PPO's progress as short lines for a log file (stderr not a terminal): at the end of the first rollout that
    ends ``every_s`` seconds or more after the previous line, ``PPO: 40,960/220,000 env steps (18.6 %), 5.2 min,
    about 22.8 min left`` (``every_s=0``: a line per rollout)."""

    def __init__(self, total: int, say, every_s: float = 60.0) -> None:
        super().__init__()
        self.total, self.say, self.every_s = int(total), say, float(every_s)
        self._t0 = self._last = 0.0
        self.lines = 0

    def _on_training_start(self) -> None:
        self._t0 = self._last = time.perf_counter()

    def _on_rollout_end(self) -> None:
        now = time.perf_counter()
        done = int(self.model.num_timesteps)
        if now - self._last < self.every_s or done >= self.total:
            return
        self._last = now
        spent = now - self._t0
        left = spent * (self.total - done) / done if done else float("nan")
        self.say(f"PPO: {done:,}/{self.total:,} env steps ({done / self.total:.1%}), {spent / 60:.1f} min, "
                 f"about {left / 60:.1f} min left")
        self.lines += 1

    def _on_step(self) -> bool:
        return True


def evaluate(name: str, env_id: str, seeds, env_config: dict | None = None, on_end=None) -> list[dict]:
    """Run the learned policy ``name`` (``<algo>:PATH``) on ``env_id`` for each seed via ``run_episode``."""
    from ..runner import run_episode

    return [run_episode(env_id, name, int(s), env_config, on_end=on_end) for s in seeds]


# ------------------------------------------------------------------------------------------------- CLI
def _positive(name: str, v: int) -> None:
    if v < 1:
        raise _cli_error(f"{name} must be >= 1, got {v}")


def _eval_freq(text: str):
    """``--eval-freq``: ``auto`` or an integer."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        import argparse

        raise argparse.ArgumentTypeError(f"expected an integer or 'auto', got {text!r}") from None


def _cmd_train(args) -> int:
    from ..runner import env_ids as _env_ids

    if args.env not in _env_ids():
        raise _cli_error(f"unknown env {args.env!r}; valid envs: {', '.join(_env_ids())}")
    if args.timesteps < 0:
        raise _cli_error(f"--timesteps must be >= 0 (0: no PPO, with --teacher), got {args.timesteps}")
    if args.dagger_rounds is not None and args.dagger_rounds < 0:
        raise _cli_error(f"--dagger-rounds must be >= 0, got {args.dagger_rounds}")
    if args.dagger_episodes is not None:
        _positive("--dagger-episodes", args.dagger_episodes)
    if args.dagger_beta is not None and not 0.0 <= args.dagger_beta <= 1.0:
        raise _cli_error(f"--dagger-beta must be in [0, 1], got {args.dagger_beta}")
    if args.teacher_workers is not None:
        _positive("--teacher-workers", args.teacher_workers)
    if args.n_envs is not None:
        _positive("--n-envs", args.n_envs)
    for flag, v in (("--seed", args.seed), ("--eval-freq", args.eval_freq),
                    ("--checkpoint-freq", args.checkpoint_freq)):
        if v is not None and v != "auto" and v < 0:
            raise _cli_error(f"{flag} must be >= 0, got {v}")
    if args.torch_threads is not None:
        _positive("--torch-threads", args.torch_threads)
    if args.collapse_share is not None and not 0.0 < args.collapse_share <= 1.0:
        raise _cli_error(f"--collapse-share must be in (0, 1], got {args.collapse_share}")
    if args.hyperparams:
        args.hyperparams = shipped_recipe(args.hyperparams)
    if args.hyperparams and not Path(args.hyperparams).is_file():
        shipped = ", ".join(sorted(n[:-5] for n in _shipped_recipes()))
        raise _cli_error(f"--hyperparams {args.hyperparams!r} does not exist (neither a file nor a shipped recipe: "
                         f"{shipped})")
    if args.replace_hyperparams and not args.hyperparams:
        raise _cli_error("--replace-hyperparams needs --hyperparams FILE (the file used instead of the recipe)")
    for key, flag, typ, low, high, _help in RECIPE_FLAGS:
        v = getattr(args, key)
        if v is None:
            continue
        if typ is int:
            if v < low:
                raise _cli_error(f"{flag} must be >= {low}, got {v}")
            continue
        if not ((v > low[0] if low[1] else v >= low[0]) and v <= high):
            raise _cli_error(f"{flag} must be in {'(' if low[1] else '['}{low[0]:g}, {high:g}], got {v:g}")
    cfg = parse_env_config(args.env_config)
    try:
        hp, changes = resolve_hyperparams(args.algo, args.env, args.hyperparams, replace=args.replace_hyperparams,
                                          overrides=_flag_overrides(args))
    except (OSError, ValueError, yaml.YAMLError) as e:
        raise _cli_error(str(e)) from None
    line = describe_hyperparams(args.algo, args.env, args.hyperparams, args.replace_hyperparams, changes)
    if line:
        print(f"edgegym train: {line}", file=sys.stderr)
    _notice_yaml_env_config(args, cfg, hp, changes)
    if args.address and args.backend != "rllib":
        raise _cli_error("--address needs --backend rllib")
    sb3_only = [flag for flag, v in (("--subproc", args.subproc), ("--tensorboard", args.tensorboard),
                                     ("--checkpoint-freq", args.checkpoint_freq)) if v is not None and v is not False]
    if args.backend == "rllib" and sb3_only:
        raise _cli_error(f"{', '.join(sb3_only)}: not supported with --backend rllib (options of the sb3 backend)")
    out = ensure_writable_dir(args.out)
    if args.backend == "rllib":
        return _cmd_train_rllib(args, cfg, out)
    try:
        s = train(
            args.env, args.algo, args.timesteps, args.seed, out,
            hyperparams=args.hyperparams, env_config=cfg, n_envs=args.n_envs, subproc=args.subproc,
            tensorboard=args.tensorboard, progress=not args.no_progress, eval_freq=args.eval_freq,
            checkpoint_freq=args.checkpoint_freq, verbose=args.verbose, keep_best=not args.keep_last,
            torch_threads=args.torch_threads, replace_hyperparams=args.replace_hyperparams,
            overrides=_flag_overrides(args),
        )
    except (ValueError, yaml.YAMLError) as e:
        raise _cli_error(str(e)) from None
    if args.json:
        print(json.dumps(s, default=str))
    else:
        ph = s["phases_s"]
        kept = s["saved_eval"]
        dg = s.get("dagger")
        if dg:
            b = dg["best"] or {}
            print(f"[{s['env_id']} | DAgger, teacher {dg['teacher']}] {len(dg['rounds']) - 1} round(s) in "
                  f"{dg['wall_s']:.1f} s (teacher labels {dg['label_s']:.1f} s, fitting {dg['fit_s']:.1f} s, "
                  f"evaluations {dg['eval_s']:.1f} s); dataset {dg['rounds'][-1]['dataset_size']} states; best round "
                  f"{dg['best_round']} (objective {b.get('eval_mean_objective', float('nan')):.6g} on the evaluation "
                  f"seeds" + ("" if b.get("round", 0) == 0 else f", agreement with the teacher on its states "
                              f"{b['agreement']:.1%}") + ")")
        rate = (f"{s['env_steps_per_s']:.0f} env steps/s overall, {s['rollout_steps_per_s']:.0f} during rollouts; "
                if s["num_timesteps"] else "no PPO; ")
        print(
            f"[{s['env_id']} | {s['algo']} | seed {s['seed']}] {s['num_timesteps']} steps in {s['wall_s']:.1f} s "
            f"({rate}"
            + ", ".join(f"{k[:-2].replace('_', ' ')} {v:.1f} s" for k, v in ph.items()) + "); "
            + (f"saved {s['model']} (DAgger round {kept['dagger_round']}'s weights: mean return "
               f"{kept['mean_return']:.4g})" if kept and "dagger_round" in kept else
               f"saved {s['model']} ({'restored best' if s['restored_best'] else 'final'} weights, evaluation at "
               f"{kept['timesteps']} steps: mean return {kept['mean_return']:.4g})" if kept else f"saved {s['model']}")
        )
    return 0


def _cmd_train_rllib(args, cfg: dict, out: Path) -> int:
    """``edgegym train --backend rllib`` (:mod:`edgegym.agents.rl.rllib`)."""
    from .rllib import summary_line, train_rllib

    try:
        hp = resolve_hyperparams(args.algo, args.env, args.hyperparams, replace=args.replace_hyperparams,
                                 overrides=_flag_overrides(args))[0]
        threads = args.torch_threads if args.torch_threads is not None else default_torch_threads()
        s = train_rllib(args.env, args.algo, args.timesteps, args.seed, out, hp, env_config=cfg,
                        n_env_runners=args.n_envs, address=args.address, progress=not args.no_progress,
                        torch_threads=threads, keep_best=not args.keep_last, verbose=bool(args.verbose) or None)
    except (ValueError, yaml.YAMLError) as e:
        raise _cli_error(str(e)) from None
    if args.json:
        print(json.dumps(s, default=str))
    else:
        print(summary_line(s))
    return 0


def _flag_overrides(args) -> dict:
    """The hyperparameter keys set by ``edgegym train`` flags (:data:`FLAG_KEYS`), those given only."""
    return {key: getattr(args, key) for key in FLAG_KEYS if getattr(args, key, None) is not None}


#: the flags of the recipe settings changed most: (key, flag, type, lowest, highest, help); an int flag's lowest
#: is the smallest value allowed, a float flag's is ``(bound, open)`` (``open``: the bound itself is refused)
RECIPE_FLAGS = (
    ("learning_rate", "--learning-rate", float, (0.0, True), 1.0, "PPO learning rate (Adam step size)"),
    ("n_steps", "--n-steps", int, 1, None, "env steps per env in a rollout of n_steps x n_envs steps"),
    ("batch_size", "--batch-size", int, 1, None, "minibatch size of the PPO updates"),
    ("n_epochs", "--n-epochs", int, 1, None, "passes over each rollout in a PPO update"),
    ("ent_coef", "--ent-coef", float, (0.0, False), 1.0, "entropy bonus coefficient"),
    ("gamma", "--gamma", float, (0.0, True), 1.0, "discount factor"),
    ("bc_episodes", "--bc-episodes", int, 1, None, "teacher episodes collected for behaviour cloning"),
    ("bc_epochs", "--bc-epochs", int, 1, None, "behaviour cloning epochs over those episodes"),
)


def _notice_yaml_env_config(args, cfg: dict, hp: dict, changes: list[dict]) -> None:
    """One line on stderr when the hyperparameters change the env (e.g. MaskablePPO's discrete action mode)."""
    yaml_cfg = hp.get("env_config") or {}
    applied = merge_config(yaml_cfg, cfg)
    # only the keys the YAML sets and --env-config does not override change the env behind the user's back
    yaml_cfg = {sec: {k: v for k, v in vals.items() if k not in (cfg.get(sec) or {})}
                for sec, vals in yaml_cfg.items() if isinstance(vals, dict)}
    yaml_cfg = {sec: vals for sec, vals in yaml_cfg.items() if vals}
    if yaml_cfg:
        recipe = f"agents/rl/{args.algo}.yaml"
        by_file = args.replace_hyperparams or any(c["key"].startswith("env_config.") for c in changes)
        src = (f"{shown_recipe(args.hyperparams)}" + ("" if args.replace_hyperparams else f" over {recipe}")) if by_file else recipe
        print(f"edgegym train: notice: {src} sets env config {json.dumps(yaml_cfg)} for {args.env}; "
              f"training (and later evaluation) uses {json.dumps(applied)} (change it with --env-config)",
              file=sys.stderr)


def add_train_parser(sub) -> None:
    """Add the ``train`` subcommand to the CLI's subparsers."""
    p = sub.add_parser("train", help="train PPO / MaskablePPO on an env; saves DIR/model.zip",
                       description="Train SB3 PPO or sb3-contrib MaskablePPO on an env (hyperparameters: the recipe "
                       "agents/rl/<algo>.yaml, overlaid by --hyperparams FILE, then the flags below); writes "
                       "DIR/model.zip and its sidecar DIR/model.edgegym.json.")
    p.add_argument("--env", required=True, help="env id (see `edgegym list`)")
    p.add_argument("--algo", required=True, choices=list(ALGOS), help="ppo (SB3) or maskable-ppo (sb3-contrib)")
    p.add_argument("--timesteps", type=int, required=True, help="PPO env steps to train for, rounded up to whole "
                   "rollouts of n_steps x n_envs steps with a notice (0: no PPO, with --teacher: the "
                   "behaviour-cloned / DAgger model is the result)")
    p.add_argument("--seed", type=int, default=0, help="seed of the algorithm and of env 0 (env i: seed+i)")
    p.add_argument("--out", required=True, help="output directory (model.zip, train.json, checkpoints, eval)")
    p.add_argument("--hyperparams", metavar="FILE", help="YAML file of the same shape as agents/rl/<algo>.yaml, "
                   "or the name of a shipped recipe (e.g. expert-iteration) (sections default, family, id) overlaid on it key by key (nested mappings merged); the keys it "
                   "changes are printed on one line")
    p.add_argument("--replace-hyperparams", action="store_true", help="use the --hyperparams FILE alone instead "
                   "of overlaying it on agents/rl/<algo>.yaml")
    for key, flag, typ, _low, _high, text in RECIPE_FLAGS:
        p.add_argument(flag, dest=key, type=typ, metavar="N" if typ is int else "X",
                       help=f"{text}: overrides the recipe's {key}")
    p.add_argument("--env-config", help="preset overrides: inline JSON/YAML or a file, e.g. "
                   '\'{"env": {"action_mode": "cloud_split"}}\' (applied after the YAML\'s env_config)')
    p.add_argument("--n-envs", type=int, help="parallel envs (default: from the YAML); with --backend rllib: env "
                   "runners, one env each (default 2)")
    p.add_argument("--subproc", action="store_true", help="SubprocVecEnv instead of DummyVecEnv")
    p.add_argument("--eval-freq", type=_eval_freq, help="evaluate every N env steps on the YAML's eval seeds and "
                   "keep the best model (0: only at the start and the end; default: the YAML's, 'auto': ~10 per run)")
    p.add_argument("--keep-last", action="store_true", help="save the final weights even when an earlier "
                   "evaluation was better (default: restore the best evaluated model)")
    p.add_argument("--collapse-share", type=float, help="warn when one action takes more than this share of an "
                   "evaluation episode's argmax decisions (default 0.8)")
    p.add_argument("--teacher", help="a policy name (registered, rollout:<base>, or a saved agent: DIR, "
                   "DIR/model.zip or <algo>:PATH) to "
                   "clone first (behaviour cloning on its own trajectories; default: the YAML's bc_teacher)")
    p.add_argument("--dagger-rounds", type=int, help="expert iteration (DAgger) rounds after behaviour cloning: the "
                   "student runs, the teacher labels every state it visits, the student is refitted on all labels; "
                   "the best round is kept (default: the YAML's dagger_rounds, else 0)")
    p.add_argument("--dagger-episodes", type=int, help="student episodes per DAgger round (default 5)")
    p.add_argument("--teacher-workers", type=int, help="processes the teacher labels on (behaviour-cloning episodes, "
                   "DAgger states; with --address: Ray tasks on that cluster); the labels are those of one process "
                   "(default: the YAML's teacher_workers, else 1)")
    p.add_argument("--dagger-beta", type=float, help="DAgger β: in round i the teacher's action is executed with "
                   "probability β^i (the label is always the teacher's; default 0: the pure student)")
    p.add_argument("--checkpoint-freq", type=int, help="checkpoint every N env steps (0: off, the default)")
    p.add_argument("--torch-threads", type=int, help="PyTorch threads (default 1, or $EDGEGYM_TORCH_THREADS: "
                   "small networks train fastest on one thread)")
    p.add_argument("--tensorboard", action="store_true", help="log to DIR/tb (needs tensorboard)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verbose", type=int, default=0, help="SB3 verbosity: 0 quiet, 1 training logs, 2 debug; "
                   "with --backend rllib, 1 or more also shows Ray's own log lines (or EDGEGYM_RAY_LOGS=1)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--backend", choices=("sb3", "rllib"), default="sb3", help="sb3: stable-baselines3 / "
                   "sb3-contrib (default); rllib: PPO from Ray RLlib with env runners on a Ray cluster (writes "
                   "DIR/checkpoint; needs the [rllib] extra; see docs/training_on_a_cluster.md)")
    p.add_argument("--address", help="with --backend rllib: the Ray cluster to join ('auto' or HOST:PORT of "
                   "`ray start --head`; default: a local cluster started and stopped by this run)")
    p.set_defaults(func=_cmd_train)


def _model_name(args) -> str:
    model = args.model
    from .learned import is_learned, is_rllib_checkpoint

    if is_learned(model):
        return model
    path = Path(model)
    if is_rllib_checkpoint(path) and not (path / "model.zip").is_file():
        return f"rllib:{path}"
    if path.is_dir():
        path = path / "model.zip"
    algo = args.algo
    if algo is None:
        side = sidecar_path(path)
        try:
            algo = json.loads(side.read_text()).get("algo") if side.is_file() else None
        except (OSError, ValueError):
            algo = None
    if algo is None:
        if not path.exists():
            raise _cli_error(f"model file {str(path)!r} does not exist")
        raise _cli_error(f"cannot tell the algorithm of {str(path)!r} (no sidecar): pass --algo")
    return f"{algo}:{path}"


def _cmd_eval(args) -> int:
    from ..runner import check_env_policy

    name = _model_name(args)
    try:
        learned_env_config(name)  # validates the file before anything runs
    except LearnedPolicyError as e:
        raise _cli_error(str(e)) from None
    env_id = args.env
    if env_id is None:
        side = sidecar_path(Path(name.split(":", 1)[1]))
        try:
            env_id = json.loads(side.read_text())["env_id"]
        except (OSError, ValueError, KeyError):
            raise _cli_error("--env is needed (the model has no sidecar naming its env)") from None
    check_env_policy(env_id, name)
    cfg = parse_env_config(args.env_config)
    if args.trace:
        cfg = merge_config(cfg, {"workload": {"source": args.trace}})
    if args.window is not None:
        cfg = merge_config(cfg, {"workload": {"window": args.window}})
    from ..options import seeds_from

    seeds = seeds_from(args)
    on_end = None
    if args.render_png:
        png = Path(args.render_png)
        if png.suffix.lower() != ".png":
            raise _cli_error(f"--render-png must be a .png path, got {args.render_png!r}")
        ensure_writable_dir(png.parent if str(png.parent) else ".", "--render-png")
        on_end = _gantt_once(png)
    from ..options import run_episodes

    try:
        run_episodes(args, env_id, name, seeds, cfg, on_end=on_end, render_mode="rgb_array" if on_end else None)
    except ValueError as e:
        raise _cli_error(str(e)) from None
    return 0


def _gantt_once(png: Path):
    """An ``on_end`` hook writing the Gantt chart of the first episode to ``png``."""
    state = {"done": False}

    def hook(env, rec):
        if state["done"]:
            return
        from edgegym.families import save_gantt_png

        save_gantt_png(env, png, title=f"{rec['env']} | {rec['policy']} | seed {rec['seed']} | "
                                       f"objective {rec['objective']:.4g}")
        state["done"] = True

    return hook


def add_eval_parser(sub) -> None:
    """Add the ``eval`` subcommand: a saved agent on held-out seeds and trace windows."""
    from ..options import add_env_config_flag, add_seed_flags

    p = sub.add_parser("eval", help="evaluate a saved agent on held-out seeds (same output as `edgegym run`)",
                       description="Evaluate a saved agent on held-out seeds: one line (or JSON object) per "
                       "episode, then mean ± std over the episodes.")
    p.add_argument("--model", required=True, help="DIR, DIR/model.zip or <algo>:PATH (the algorithm and the env "
                   "are read from the sidecar DIR/model.edgegym.json; rllib:DIR for --backend rllib)")
    p.add_argument("--algo", choices=list(ALGOS), help="the model's algorithm (default: from its sidecar)")
    p.add_argument("--env", help="env id (default: the one it was trained on)")
    add_seed_flags(p, seed=100, episodes=5)
    p.add_argument("--trace", help="workload source, e.g. philly (a held-out trace)")
    p.add_argument("--window", type=int, help="trace window start index")
    add_env_config_flag(p)
    p.add_argument("--render-png", help="write a Gantt chart PNG of the first episode")
    p.add_argument("--json", action="store_true", help="one JSON object per episode on stdout (summary on stderr)")
    p.add_argument("--no-progress", action="store_true", help="no step counter on stderr during long episodes")
    p.set_defaults(func=_cmd_eval)
