"""The ``edgegym`` console script: argument parsing and printing only (episodes run in :mod:`edgegym.agents.runner`).

Subcommands: ``list`` and ``run`` here; ``bench``/``render`` (:mod:`edgegym.agents.bench`), ``train``/``eval``
(:mod:`edgegym.agents.rl.train`) plug in via ``SUBCOMMANDS``.

Every user error (unknown env or policy, a policy that does not support the env, bad numbers) prints one
line on stderr and exits with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CLIError
from .runner import check_env_policy, env_ids, fill_env_policy_defaults, run_episode

__all__ = ["build_parser", "main", "run_episode", "SUBCOMMANDS"]


def _cmd_run(args) -> int:
    from .options import resolve_policy, run_episodes, seeds_from
    from .rl.train import parse_env_config

    if args.policy is not None:
        args.policy = resolve_policy(args.policy)
    fill_env_policy_defaults(args)
    check_env_policy(args.env, args.policy)
    from .validate import split_env_config

    cfg = split_env_config(args, args.env, trace_env_config(args, parse_env_config(args.env_config)))
    seeds = seeds_from(args)
    recs = run_episodes(args, args.env, args.policy, seeds, cfg)
    if getattr(args, "results_out", None):
        from .validate import results_entry, write_results

        p = write_results(args.results_out, results_entry(args.env, args.split, cfg, [(args.policy, recs)]))
        print(f"edgegym run: results written to {p} (replay: edgegym validate {p})", file=sys.stderr)
    return 0


def trace_env_config(args, cfg: dict) -> dict:
    """``--trace`` / ``--window`` of ``run`` (the same flags as ``eval``): ``workload.source`` /
    ``workload.window`` merged over ``--env-config``."""
    from .runner import merge_config

    if getattr(args, "trace", None):
        cfg = merge_config(cfg, {"workload": {"source": args.trace}})
    if getattr(args, "window", None) is not None:
        cfg = merge_config(cfg, {"workload": {"window": args.window}})
    return cfg


def _listing() -> dict:
    from edgegym.envs import env_info
    from edgegym.families import families
    from edgegym.workloads import TRACE_LOADERS

    from .registry import POLICIES, policy_name_forms

    envs, defaults = [], {}
    for env_id in env_ids():
        info = env_info(env_id)
        envs.append({"id": env_id, "family": info.family, "preset": info.preset, "description": info.description})
        if info.default:
            defaults.setdefault(info.family, env_id)  # the first version's default id (e.g. <Family>-v0)
    fams = [{"name": f.name, "default_id": defaults.get(f.name), "default_policy": f.default_policy,
             "objective": f.objective, "paper": f.paper} for f in families().values()]
    policies = [{"name": s.name, "families": list(s.families), "description": s.description} for s in POLICIES.values()]
    traces = [{"name": n, "description": getattr(v, "description", str(v))} for n, v in TRACE_LOADERS.items()]
    from .protocol import family_splits

    splits = [{"family": f.name, "name": sp.name, "description": sp.description, "trace": sp.trace}
              for f in families().values() for sp in family_splits(f.name).values()]
    return {"families": fams, "envs": envs, "policies": policies, "policy_forms": policy_name_forms(),
            "trace_loaders": traces, "splits": splits}


def _cmd_list(args) -> int:
    data = _listing()
    if args.json:
        print(json.dumps(data))
        return 0
    print("Families (the policy `edgegym run` uses when --policy is left out):")
    for f in data["families"]:
        print(f"  {f['name']:<12} default id {f['default_id'] or '-':<16} default policy {f['default_policy']:<20} "
              f"{f['objective']}")
    print("Environments:")
    for e in data["envs"]:
        print(f"  {e['id']:<28} preset {e['preset']:<16} {e['description']}")
    print("Policies:")
    for p in data["policies"]:
        print(f"  {p['name']:<12} [{', '.join(p['families'])}] {p['description']}")
    print("Policy names built from a pattern (run wherever a policy is taken; not expanded by --policies all):")
    for p in data["policy_forms"]:
        print(f"  {p['name']:<16} [{', '.join(p['families'])}] {p['description']}")
    print("Trace loaders:")
    for t in data["trace_loaders"]:
        print(f"  {t['name']:<12} {t['description']}")
    print("Test splits (edgegym eval/run --split NAME; overlays of the preset, envs_config/splits/):")
    for sp in data["splits"]:
        print(f"  {sp['family']:<12} {sp['name']:<22} {sp['description']}")
    return 0


def _add_run(sub):
    from .options import add_env_config_flag, add_seed_flags

    p = sub.add_parser("run", help="run one policy on one env; print metrics per episode and their mean ± std",
                       description="Run one policy on one env for some seeds; print each episode's metrics as it "
                       "ends, then mean ± std over the episodes.")
    p.add_argument("--env", help="env id (see `edgegym list`; default: the first family's default id)")
    p.add_argument("--policy", help="policy name (see `edgegym list`), a saved agent DIR or DIR/model.zip, or "
                   "ppo:PATH / maskable-ppo:PATH (default: the env family's reference policy)")
    add_seed_flags(p, seed=0, episodes=1)
    p.add_argument("--trace", help="workload source, e.g. philly (a real trace instead of the preset's workload; "
                   "the same as --env-config '{\"workload\": {\"source\": ...}}')")
    p.add_argument("--window", type=int, help="trace window start index")
    add_env_config_flag(p)
    p.add_argument("--split", help="a named test split of the env's family (see `edgegym list`); default seeds: "
                   "the protocol's test seeds 20000-20019")
    p.add_argument("--results-out", metavar="FILE", help="write a results file (JSON) that `edgegym validate` replays")
    p.add_argument("--json", action="store_true", help="one JSON object per episode on stdout (summary on stderr)")
    p.add_argument("--no-progress", action="store_true", help="no step counter on stderr during long episodes")
    p.set_defaults(func=_cmd_run)


def _add_list(sub):
    p = sub.add_parser("list", help="list families, envs, policies and trace loaders",
                       description="List the env families (each with its default id and default policy), every "
                       "registered env id, the policies, the policy name patterns and the trace loaders.")
    p.add_argument("--json", action="store_true", help="one JSON object with the lists")
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
    from .validate import add_protocol_flags

    add_eval_parser(sub)
    add_protocol_flags(sub.choices["eval"])


def _add_validate(sub):
    from .validate import add_validate_parser

    add_validate_parser(sub)


SUBCOMMANDS = {"run": _add_run, "list": _add_list, "bench": _add_bench, "train": _add_train, "eval": _add_eval,
               "validate": _add_validate}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CLIError(message)


def build_parser() -> argparse.ArgumentParser:
    """The ``edgegym`` argument parser with every subcommand (the docs' CLI reference is generated from it)."""
    from edgegym import __version__

    parser = _Parser(prog="edgegym", description="Gymnasium envs for online ML-job scheduling in edge-cloud "
                     "clusters: run, compare, render, train and evaluate policies.")
    parser.add_argument("--version", action="version", version=f"edgegym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in SUBCOMMANDS.values():
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``edgegym`` console script."""
    from .options import install_notice_hook

    install_notice_hook()
    parser = build_parser()
    from .errors import report_errors

    def _run() -> int:
        args = parser.parse_args(argv)
        return args.func(args)

    # the one place where errors become exit statuses: a user error is one line + exit 2, a bug a traceback
    return report_errors(_run)


if __name__ == "__main__":
    sys.exit(main())
