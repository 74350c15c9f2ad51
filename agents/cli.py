"""The ``edgegym`` console script: ``list`` and ``run`` (more subcommands plug in via ``SUBCOMMANDS``).

Every user error (unknown env or policy, a policy that does not support the env, bad numbers) prints one
line on stderr and exits with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

__all__ = ["main", "run_episode", "SUBCOMMANDS"]


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


def _env_ids() -> list[str]:
    import edgegym

    return edgegym.registered_ids()


def _env_family(env_id: str) -> str:
    from edgegym.envs import env_info

    return env_info(env_id).family


def check_env_policy(env_id: str, policy: str) -> None:
    """Raise :class:`CLIError` naming the valid choices when ``env_id`` or ``policy`` is unknown or unsupported."""
    from .registry import POLICIES, policy_names

    ids = _env_ids()
    if env_id not in ids:
        raise CLIError(f"unknown env {env_id!r}; valid envs: {', '.join(ids)}")
    if policy.startswith(("ppo:", "maskable-ppo:")):
        return
    if policy not in POLICIES:
        raise CLIError(f"unknown policy {policy!r}; valid policies: {', '.join(policy_names())}")
    fam = _env_family(env_id)
    if fam not in POLICIES[policy].families:
        raise CLIError(
            f"policy {policy!r} does not support env {env_id!r} (family {fam}); it supports "
            f"{', '.join(POLICIES[policy].families)}"
        )


def run_episode(env_id: str, policy: str, seed: int, env_config: dict | None = None, *, on_end=None) -> dict:
    """Run one episode of ``policy`` on ``env_id`` with ``reset(seed=seed)``; return the JSON record.

    ``policy`` is a registered name or a saved agent ``ppo:PATH`` / ``maskable-ppo:PATH`` (loaded with the
    env config it was trained with; a missing or corrupt file raises :class:`CLIError`). ``on_end(env, rec)``,
    when given, is called after the last step, before the env is closed (the benchmark reads per-job
    times and draws Gantt charts there).
    """
    import gymnasium as gym

    from .registry import POLICIES, make_policy

    learned = policy.startswith(("ppo:", "maskable-ppo:"))
    if learned:
        from .rl.learned import LearnedPolicyError, learned_env_config, load_learned_policy

        try:
            base = learned_env_config(policy)
        except LearnedPolicyError as e:
            raise CLIError(str(e)) from None
    else:
        base = POLICIES[policy].config_for(_env_family(env_id))
    config = {k: dict(v) for k, v in base.items()}
    for sec, over in (env_config or {}).items():
        config.setdefault(sec, {}).update(over)
    env = gym.make(env_id, config=config or None)
    if learned:
        try:
            pol = load_learned_policy(policy, env)
        except LearnedPolicyError as e:
            env.close()
            raise CLIError(str(e)) from None
    else:
        pol = make_policy(policy, env, seed)
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    done, ret, steps, decide_s = False, 0.0, 0, 0.0
    t0 = time.perf_counter()
    while not done:
        t = time.perf_counter()
        action, _ = pol.predict(obs, deterministic=True)
        decide_s += time.perf_counter() - t
        obs, r, term, trunc, info = env.step(action)
        ret += r
        steps += 1
        done = term or trunc
    wall = time.perf_counter() - t0
    metrics = info["episode_metrics"]
    rec = {"env": env_id, "policy": policy, "seed": seed, "episode_return": ret, "steps": steps}
    rec.update(metrics)
    rec["wall_s"] = wall
    rec["decisions_per_s"] = steps / decide_s if decide_s > 0 else float("inf")
    if on_end is not None:
        on_end(env, rec)
    env.close()
    return rec


# metrics shown (when present) on the one-line text summary of an episode; --json prints them all
_SUMMARY_KEYS = (
    "avg_jct",
    "makespan",
    "preemptions",
    "edge_fraction",
    "total_utility",
    "deadline_miss_rate",
    "avg_response_time",
)


def _cmd_run(args) -> int:
    check_env_policy(args.env, args.policy)
    if args.episodes < 1:
        raise CLIError(f"--episodes must be >= 1, got {args.episodes}")
    for k in range(args.episodes):
        rec = run_episode(args.env, args.policy, args.seed + k)
        rec["episode"] = k
        if args.json:
            print(json.dumps(rec, default=_json_default))
        else:
            shown = [f"{k} {rec[k]:.4g}" for k in _SUMMARY_KEYS if k in rec]
            print(
                f"[{rec['env']} | {rec['policy']} | seed {rec['seed']}] objective {rec['objective']:.2f}  "
                + "  ".join(shown)
                + f"  return {rec['episode_return']:.4f}  ({rec['wall_s']:.2f} s)"
            )
    return 0


def _json_default(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x).__name__)


def _listing() -> dict:
    from edgegym.envs import env_info
    from edgegym.workloads import TRACE_LOADERS

    from .registry import POLICIES

    envs = []
    for env_id in _env_ids():
        info = env_info(env_id)
        envs.append({"id": env_id, "family": info.family, "preset": info.preset, "description": info.description})
    policies = [{"name": s.name, "families": list(s.families), "description": s.description} for s in POLICIES.values()]
    traces = [{"name": n, "description": getattr(v, "description", str(v))} for n, v in TRACE_LOADERS.items()]
    return {"envs": envs, "policies": policies, "trace_loaders": traces}


def _cmd_list(args) -> int:
    data = _listing()
    if args.json:
        print(json.dumps(data))
        return 0
    print("Environments:")
    for e in data["envs"]:
        print(f"  {e['id']:<28} preset {e['preset']:<16} {e['description']}")
    print("Policies:")
    for p in data["policies"]:
        print(f"  {p['name']:<12} [{', '.join(p['families'])}] {p['description']}")
    print("Trace loaders:")
    for t in data["trace_loaders"]:
        print(f"  {t['name']:<12} {t['description']}")
    return 0


def _add_run(sub):
    p = sub.add_parser("run", help="run one policy on one env; print metrics per episode")
    p.add_argument("--env", default="EdgeCloudML-v0", help="env id (see `edgegym list`)")
    p.add_argument("--policy", default="aonline", help="policy name (see `edgegym list`)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode (episode k uses seed+k)")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--json", action="store_true", help="one JSON object per episode")
    p.set_defaults(func=_cmd_run)


def _add_list(sub):
    p = sub.add_parser("list", help="list envs, policies and trace loaders")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_list)


# name -> function adding the subparser; other modules may add entries before main() runs
def _add_bench(sub):
    from .bench import add_bench_parser, add_render_parser

    add_bench_parser(sub)
    add_render_parser(sub)


def _add_train(sub):
    from .rl.train import add_train_parser

    add_train_parser(sub)


def _add_eval(sub):
    from .rl.train import add_eval_parser

    add_eval_parser(sub)


SUBCOMMANDS = {"run": _add_run, "list": _add_list, "bench": _add_bench, "train": _add_train, "eval": _add_eval}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CLIError(message)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``edgegym`` console script."""
    parser = _Parser(prog="edgegym", description="edge-cloud ML scheduling benchmark")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in SUBCOMMANDS.values():
        add(sub)
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except CLIError as e:
        print(f"edgegym: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
