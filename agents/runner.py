"""The one episode runner: builds the env for a policy (with the policy's env overrides), runs episodes,
collects metrics and times decisions. ``edgegym run``, ``edgegym bench``, ``edgegym eval`` and the
reproduction scripts all go through :func:`run_episode`, so every policy lands in the same tables.

Policies are registered names (:mod:`edgegym.agents.registry`; resolved by the env's family) or saved agents
``ppo:PATH`` / ``maskable-ppo:PATH`` (:mod:`edgegym.agents.rl.learned`).
"""

from __future__ import annotations

import time

import numpy as np

from .errors import UserError

__all__ = [
    "check_env_policy",
    "check_model_family",
    "compile_clock",
    "default_env_id",
    "default_policy",
    "env_family",
    "fill_env_policy_defaults",
    "env_ids",
    "json_default",
    "learned_env_id",
    "make_env",
    "merge_config",
    "policy_actions",
    "policy_env_config",
    "run_episode",
]


def env_ids() -> list[str]:
    """Every registered edgegym env id."""
    import edgegym

    return edgegym.registered_ids()


def env_family(env_id: str) -> str:
    """The family name of a registered env id."""
    from edgegym.envs import env_info

    return env_info(env_id).family


def default_env_id() -> str:
    """The default env of the CLI: the first registered family's default id."""
    return next(i for i in env_ids() if _info(i).default)


def default_policy(env_id: str) -> str:
    """The reference policy of ``env_id``'s family (``Family.default_policy``)."""
    from edgegym.families import family

    return family(env_family(env_id)).default_policy


def _info(env_id: str):
    from edgegym.envs import env_info

    return env_info(env_id)


def _is_learned(policy: str) -> bool:
    from .rl.learned import is_learned

    return is_learned(policy)


def _is_rollout(policy: str) -> bool:
    from .reference.rollout import is_rollout

    return is_rollout(policy)


def _rollout_parts(policy: str) -> tuple[dict, str]:
    """``(parameters, base name)`` of ``rollout[(...)]:<base>`` (the base resolved like a ``--policy``)."""
    from .reference.rollout import parse_rollout
    from .rl.learned import resolve_policy

    try:
        params, base = parse_rollout(policy)
    except ValueError as e:
        raise UserError(str(e)) from None
    return params, resolve_policy(base)


def check_env_policy(env_id: str, policy: str) -> None:
    """Raise :class:`UserError` naming the valid choices when ``env_id`` or ``policy`` is unknown or unsupported."""
    from .registry import POLICIES, policy_names

    ids = env_ids()
    if env_id not in ids:
        raise UserError(f"unknown env {env_id!r}; valid envs: {', '.join(ids)}")
    if _is_rollout(policy):  # rollout:<base>: the base must run on the env
        check_env_policy(env_id, _rollout_parts(policy)[1])
        return
    if _is_learned(policy):
        check_model_family(env_id, policy)
        return
    fam = env_family(env_id)
    if policy not in POLICIES:
        raise UserError(
            f"unknown policy {policy!r} for {env_id} (family {fam}); valid policies: {', '.join(policy_names(fam))}"
        )
    if fam not in POLICIES[policy].families:
        raise UserError(
            f"policy {policy!r} does not support env {env_id!r} (family {fam}); it supports "
            f"{', '.join(POLICIES[policy].families)}; valid policies for {env_id}: {', '.join(policy_names(fam))}"
        )


def fill_env_policy_defaults(args) -> None:
    """``--env`` / ``--policy`` left out: the first family's default id, the env family's reference policy."""
    if getattr(args, "env", None) is None:
        args.env = default_env_id()
    if getattr(args, "policy", None) is None:
        check_env_policy(args.env, "random")  # a clear error for an unknown env before reading its family
        args.policy = default_policy(args.env)


def merge_config(base: dict | None, over: dict | None) -> dict:
    """Per-section merge of two env configs (``{"env": {...}, "workload": {...}}``); ``over`` wins."""
    out = {k: dict(v) for k, v in (base or {}).items()}
    for sec, vals in (over or {}).items():
        if not isinstance(vals, dict):
            raise UserError(f"env config section {sec!r} must be a mapping, got {vals!r}")
        out.setdefault(sec, {}).update(vals)
    return out


def policy_env_config(env_id: str, policy: str) -> dict:
    """The env overrides ``policy`` needs on ``env_id`` (a learned agent's: those it was trained with)."""
    if _is_rollout(policy):
        from .reference.rollout import rollout_env_config

        return rollout_env_config(env_family(env_id), policy_env_config(env_id, _rollout_parts(policy)[1]))
    if _is_learned(policy):
        from .rl.learned import LearnedPolicyError, learned_env_config

        try:
            cfg = learned_env_config(policy)
        except LearnedPolicyError as e:
            raise UserError(str(e)) from None
        check_model_family(env_id, policy)
        return cfg
    from .registry import POLICIES

    return POLICIES[policy].config_for(env_family(env_id))


def learned_env_id(policy: str) -> str | None:
    """The env id a saved agent (``<algo>:PATH``) was trained on, from its sidecar; ``None`` when it names none."""
    import json

    from .rl.learned import _resolve, sidecar_path, split_name

    _, path = split_name(policy)
    try:
        side = sidecar_path(_resolve(path))
        env_id = json.loads(side.read_text()).get("env_id") if side.is_file() else None
    except (OSError, ValueError, AttributeError):
        return None
    return env_id if isinstance(env_id, str) else None


def check_model_family(env_id: str, policy: str) -> None:
    """Raise :class:`UserError` when the saved agent ``policy`` was trained on another family than ``env_id``'s.

    Its env config (e.g. ``env.action_mode`` of EdgeCloudML) would otherwise be merged into a preset that has no
    such key, and its spaces would not fit: the message names both envs and both families instead."""
    trained = learned_env_id(policy)
    if trained is None:
        return
    try:
        trained_fam = env_family(trained)
    except KeyError:  # an id this version does not register: the family is the id's prefix
        trained_fam = trained.split("-", 1)[0]
    fam = env_family(env_id)
    if trained_fam != fam:
        raise UserError(f"model trained on {trained_fam}/{trained} cannot run on {env_id} ({fam}): run it on one "
                        f"of the {trained_fam} ids (edgegym list), or train a model on {env_id}")


def make_env(env_id: str, policy: str, seed: int = 0, env_config: dict | None = None, **make_kwargs):
    """``(env, policy_object)``: the env built with the policy's overrides (then ``env_config``), and the policy."""
    import gymnasium as gym

    check_env_policy(env_id, policy)
    config = merge_config(policy_env_config(env_id, policy), env_config)
    try:
        env = gym.make(env_id, config=config or None, **make_kwargs)
    except ValueError as e:
        raise UserError(str(e)) from None
    try:
        pol = _make_bound_policy(policy, env, seed)
    except UserError:
        env.close()
        raise
    return env, pol


def _make_bound_policy(policy: str, env, seed: int):
    """The policy object of ``policy`` bound to the already-built ``env`` (registered, learned or rollout)."""
    from .registry import make_policy

    if _is_rollout(policy):
        from .reference.rollout import make_rollout

        base = _rollout_parts(policy)[1]
        try:
            return make_rollout(policy, env, seed, lambda _name, e, s: _make_bound_policy(base, e, s))
        except ValueError as e:
            raise UserError(str(e)) from None
    if _is_learned(policy):
        from .rl.learned import LearnedPolicyError, load_learned_policy

        try:
            return load_learned_policy(policy, env)
        except LearnedPolicyError as e:
            raise UserError(str(e)) from None
    return make_policy(policy, env, seed)


def run_episode(
    env_id: str, policy: str, seed: int, env_config: dict | None = None, *, on_end=None, on_step=None,
    render_mode: str | None = None,
) -> dict:
    """Run one episode of ``policy`` on ``env_id`` with ``reset(seed=seed)``; return the JSON-able record.

    The record holds ``env``, ``policy``, ``seed``, ``episode_return``, ``steps``, every episode metric
    (``objective`` included), ``wall_s`` and ``decisions_per_s`` (policy decisions per second of decision
    time; a first-use compile of the kernels, :func:`edgegym.core.jit.compile_seconds`, counts in neither: it is
    the machine's, once, not the episode's). ``on_end(env, rec)``, when given, is called after the last step,
    before the env is closed (the benchmark reads per-job times and draws Gantt charts there). ``on_step(steps)``,
    when given, is called after every step (the CLI's progress bar). ``render_mode="rgb_array"`` builds the env so
    that it records what a Gantt chart draws (``edgegym render``, ``bench --gantt``).
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise UserError(f"seed must be an integer >= 0 (NumPy seeds are non-negative), got {seed!r}")
    env, pol = make_env(env_id, policy, seed, env_config, **({"render_mode": render_mode} if render_mode else {}))
    try:
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        done, ret, steps, decide_s = False, 0.0, 0, 0.0
        compiled = compile_clock()
        c0 = compiled()
        t0 = time.perf_counter()
        info: dict = {}
        while not done:
            c, t = compiled(), time.perf_counter()
            action, _ = pol.predict(obs, deterministic=True)
            decide_s += time.perf_counter() - t - (compiled() - c)  # a policy kernel's first-use compile is no decision
            obs, r, term, trunc, info = env.step(action)
            ret += float(r)
            steps += 1
            done = term or trunc
            if on_step is not None:
                on_step(steps)
        wall = time.perf_counter() - t0 - (compiled() - c0)  # the kernels' first-use compile is not the episode's
        rec = {"env": env_id, "policy": policy, "seed": seed, "episode_return": ret, "steps": steps}
        rec.update(info["episode_metrics"])
        rec["wall_s"] = wall
        rec["decisions_per_s"] = steps / decide_s if decide_s > 0 else float("inf")
        if on_end is not None:
            on_end(env, rec)
    finally:
        env.close()
    return rec


def _action_record(a):
    """An action as a comparable value: a Python number for a scalar, a tuple of numbers for an array, the action
    itself otherwise (a structured action)."""
    if isinstance(a, int | float | np.integer | np.floating) or (isinstance(a, np.ndarray) and a.ndim == 0):
        return a.item() if hasattr(a, "item") else a
    if isinstance(a, np.ndarray | list | tuple):
        return tuple(np.asarray(a).ravel().tolist())
    return a


def policy_actions(env_id: str, policy: str, seeds, limit: int | None = None) -> tuple[list[int], int]:
    """Every action ``policy`` (a name, built as ``edgegym run`` builds it) takes on the episodes of ``seeds`` (at most
    ``limit`` per episode), in order (numbers, or tuples for array actions), and how many of its decisions left its base policy (a rollout policy's
    ``changed`` counter; 0 for other policies): the record that differential tests of fast paths compare."""
    out, changed = [], 0
    for seed in seeds:
        env, pol = make_env(env_id, policy, seed)
        try:
            obs, _ = env.reset(seed=seed)
            pol.reset(seed)
            done, n = False, 0
            while not done and (limit is None or n < limit):
                a, _ = pol.predict(obs, deterministic=True)
                out.append(_action_record(a))
                obs, _, term, trunc, _ = env.step(a)
                done = term or trunc
                n += 1
            changed += int(getattr(pol, "changed", 0))
        finally:
            env.close()
    return out, changed


def compile_clock():
    """A function returning the seconds this process has spent compiling edgegym kernels so far
    (:func:`edgegym.core.jit.compile_seconds`; 0.0 while no kernel module is loaded: it loads no Numba itself)."""
    import sys

    jit = sys.modules.get("edgegym.core.jit")
    if jit is not None:
        return jit.compile_seconds

    def clock() -> float:
        mod = sys.modules.get("edgegym.core.jit")
        return mod.compile_seconds() if mod is not None else 0.0

    return clock


def json_default(x):
    """``json.dumps(default=...)`` for numpy scalars and arrays."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x).__name__)
