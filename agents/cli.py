"""The ``edgegym`` console script: argument parsing and printing only (episodes run in :mod:`agents.runner`).

Subcommands: ``list`` and ``run`` here; ``bench``/``render`` (:mod:`agents.bench`), ``train``/``eval``
(:mod:`agents.rl.train`) plug in via ``SUBCOMMANDS``.

Every user error (unknown env or policy, a policy that does not support the env, bad numbers) prints one
line on stderr and exits with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CLIError
from .runner import check_env_policy, env_ids, fill_env_policy_defaults, json_default, run_episode

__all__ = ["main", "run_episode", "SUBCOMMANDS"]


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
    fill_env_policy_defaults(args)
    check_env_policy(args.env, args.policy)
    if args.episodes < 1:
        raise CLIError(f"--episodes must be >= 1, got {args.episodes}")
    for k in range(args.episodes):
        rec = run_episode(args.env, args.policy, args.seed + k)
        rec["episode"] = k
        if args.json:
            print(json.dumps(rec, default=json_default))
        else:
            shown = [f"{k} {rec[k]:.4g}" for k in _SUMMARY_KEYS if k in rec]
            print(
                f"[{rec['env']} | {rec['policy']} | seed {rec['seed']}] objective {rec['objective']:.2f}  "
                + "  ".join(shown)
                + f"  return {rec['episode_return']:.4f}  ({rec['wall_s']:.2f} s)"
            )
    return 0


def _listing() -> dict:
    from edgegym.envs import env_info
    from edgegym.workloads import TRACE_LOADERS

    from .registry import POLICIES

    envs = []
    for env_id in env_ids():
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
    p.add_argument("--env", help="env id (see `edgegym list`; default: the first family's default id)")
    p.add_argument("--policy", help="policy name (see `edgegym list`; default: the env family's reference policy)")
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
