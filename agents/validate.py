"""Results files anyone can re-validate, and ``edgegym eval``'s protocol figures.

A results file (JSON, ``format`` :data:`FORMAT`) records one evaluation: the env id, the split, the env-config
overlay the episodes ran with (the split's overlay over ``--env-config``), per run (one policy or one saved model,
i.e. one training seed) the policy name, for a saved model the checkpoint path and its sha256, the resolved config
(preset, the policy's own overrides and the overlay, section by section), the seeds and the per-episode objectives,
and the package version. :func:`validate_file` (``edgegym validate FILE``) replays every episode and reports every
difference: an objective that differs by more than 1e-9 relative, a resolved config that changed, a checkpoint
whose sha256 changed (naming the file).

:func:`add_protocol_flags` gives ``edgegym eval`` several ``--model`` (training seeds of one recipe), ``--split``
(the test seeds by default), ``--reference`` (the probability of improvement over it) and ``--results-out``, and
prints the figures of :mod:`edgegym.agents.stats` after the usual summary (``--json``: one ``{"protocol": ...}``
line on stderr).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

from .errors import UserError

__all__ = ["FORMAT", "REL_TOL", "add_protocol_flags", "checkpoint_path", "lower_is_better", "protocol_figures",
           "replay", "resolved_config", "results_entry", "sha256_file", "validate_file", "write_results"]

FORMAT = "edgegym-results/1"
#: objectives replayed must match exactly or within this relative tolerance
REL_TOL = 1e-9


def sha256_file(path) -> str:
    """The hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checkpoint_path(policy: str) -> Path | None:
    """The checkpoint file of a saved-model policy name (``<algo>:PATH``, ``rllib:DIR``), ``None`` otherwise."""
    from .rl.learned import is_learned

    if not is_learned(policy):
        return None
    return Path(policy.split(":", 1)[1])


def _checkpoint_digest(path: Path) -> str:
    """sha256 of a checkpoint file, or of a checkpoint folder's files (names and bytes, sorted)."""
    if path.is_file():
        return sha256_file(path)
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(path)).encode() + b"\0" + sha256_file(f).encode())
    return h.hexdigest()


def resolved_config(env_id: str, policy: str, env_config: dict | None) -> dict:
    """The config the episodes run with, section by section: the preset file, the policy's own overrides (a saved
    agent's training config) and ``env_config`` merged in that order."""
    from .protocol import preset_config
    from .runner import merge_config, policy_env_config

    return merge_config(merge_config(preset_config(env_id), policy_env_config(env_id, policy)), env_config)


def _jsonable(x):
    return json.loads(json.dumps(x, default=lambda o: list(o) if isinstance(o, tuple) else str(o)))


def results_entry(env_id: str, split: str | None, env_config: dict | None, runs: list[tuple[str, list[dict]]],
                  summary: dict | None = None) -> dict:
    """The results file's content for ``runs``: ``(policy name, episode records)`` pairs (records with ``seed``
    and ``objective``)."""
    from edgegym import __version__

    out_runs = []
    for policy, recs in runs:
        run = {"policy": policy, "seeds": [int(r["seed"]) for r in recs],
               "objectives": [float(r["objective"]) for r in recs],
               "resolved_config": _jsonable(resolved_config(env_id, policy, env_config))}
        ckpt = checkpoint_path(policy)
        if ckpt is not None:
            run["checkpoint"] = str(ckpt)
            run["sha256"] = _checkpoint_digest(ckpt)
        out_runs.append(run)
    entry = {"format": FORMAT, "env_id": env_id, "split": split, "env_config": _jsonable(env_config or {}),
             "runs": out_runs, "edgegym_version": __version__}
    if summary is not None:
        entry["summary"] = summary
    return entry


def write_results(path, entry: dict) -> Path:
    """Write ``entry`` as indented JSON to ``path`` (folders created); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(entry, indent=1) + "\n")
    return p


def _load(path) -> dict:
    p = Path(path)
    try:
        entry = json.loads(p.read_text())
    except OSError as e:
        raise UserError(f"cannot read results file {str(p)!r}: {e.strerror}") from None
    except ValueError as e:
        raise UserError(f"{p}: not JSON: {e}") from None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        raise UserError(f"{p}: not an edgegym results file (expected \"format\": \"{FORMAT}\")")
    for key in ("env_id", "runs"):
        if key not in entry:
            raise UserError(f"{p}: missing key {key!r}")
    for i, run in enumerate(entry["runs"]):
        for key in ("policy", "seeds", "objectives"):
            if key not in run:
                raise UserError(f"{p}: runs[{i}]: missing key {key!r}")
        if len(run["seeds"]) != len(run["objectives"]):
            raise UserError(f"{p}: runs[{i}]: {len(run['seeds'])} seeds but {len(run['objectives'])} objectives")
    return entry


def _close(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


def _config_diff(old: dict, new: dict) -> list[str]:
    keys = sorted({(s, k) for d in (old, new) for s, v in d.items() for k in v})
    out = []
    for s, k in keys:
        a, b = old.get(s, {}).get(k, "<unset>"), new.get(s, {}).get(k, "<unset>")
        if a != b:
            out.append(f"{s}.{k}: recorded {a!r}, now {b!r}")
    return out


def replay(entry: dict, seeds=None, on_episode=None) -> list[str]:
    """Replay ``entry``'s episodes (only ``seeds`` when given); returns one line per difference (empty: valid).

    A checkpoint that is missing or whose sha256 changed is a difference naming the file (its episodes are not
    run)."""
    from .runner import run_episode

    env_id, cfg = entry["env_id"], entry.get("env_config") or {}
    problems = []
    for run in entry["runs"]:
        policy = run["policy"]
        if "sha256" in run:
            ckpt = Path(run.get("checkpoint") or checkpoint_path(policy))
            if not ckpt.exists():
                problems.append(f"{policy}: checkpoint {ckpt} does not exist")
                continue
            digest = _checkpoint_digest(ckpt)
            if digest != run["sha256"]:
                problems.append(f"{policy}: checkpoint {ckpt} changed: sha256 {digest}, recorded {run['sha256']}")
                continue
        if "resolved_config" in run:
            now = _jsonable(resolved_config(env_id, policy, cfg))
            problems += [f"{policy}: config {d}" for d in _config_diff(run["resolved_config"], now)]
        for seed, want in zip(run["seeds"], run["objectives"], strict=True):
            if seeds is not None and seed not in seeds:
                continue
            got = float(run_episode(env_id, policy, int(seed), cfg or None)["objective"])
            same = _close(got, float(want))
            if on_episode:
                on_episode(policy, seed, want, got, same)
            if not same:
                problems.append(f"{policy}: seed {seed}: objective {got!r}, recorded {want!r}")
    return problems


def validate_file(path, seeds=None, out=None) -> int:
    """``edgegym validate``: replay the results file ``path``; print each episode and each difference; 0 when
    everything matches, 1 otherwise."""
    out = out or sys.stdout
    entry = _load(path)
    if seeds is not None and not {s for r in entry["runs"] for s in r["seeds"]} & set(seeds):
        raise UserError(f"--seeds: none of {seeds} is in {path} (its seeds: "
                        f"{sorted({s for r in entry['runs'] for s in r['seeds']})})")

    def show(policy, seed, want, got, same):
        print(f"[{entry['env_id']} | {policy} | seed {seed}] objective {got!r} "
              f"{'matches' if same else 'DIFFERS from'} {want!r}", file=out, flush=True)

    problems = replay(entry, seeds, show)
    split = f", split {entry['split']}" if entry.get("split") else ""
    if problems:
        print(f"{path}: INVALID ({entry['env_id']}{split}): {len(problems)} difference(s)", file=out)
        for p in problems:
            print(f"  {p}", file=out)
        return 1
    print(f"{path}: valid ({entry['env_id']}{split}, recorded with edgegym {entry.get('edgegym_version', '?')})",
          file=out)
    return 0


# ----------------------------------------------------------------------------------------- edgegym eval
def protocol_figures(env_id: str, runs: list[tuple[str, list[dict]]], reference: tuple[str, list[dict]] | None,
                     seed: int = 0) -> dict:
    """:func:`edgegym.agents.stats.summarize` of the objectives of ``runs`` (one row per run, i.e. training seed;
    one column per test seed), with the probability of improvement over ``reference`` when given."""
    import numpy as np

    from .stats import summarize

    lower = lower_is_better([r for _, recs in runs for r in recs] + (reference[1] if reference else []))
    seeds = [r["seed"] for r in runs[0][1]]
    for name, recs in runs:
        if [r["seed"] for r in recs] != seeds:
            raise UserError(f"{name}: ran seeds {[r['seed'] for r in recs]}, the first model {seeds}")
    scores = np.array([[r["objective"] for r in recs] for _, recs in runs], dtype=float)
    ref = None if reference is None else np.array([[r["objective"] for r in reference[1]]], dtype=float)
    out = summarize(scores, lower_is_better=lower, reference=ref, seed=seed)
    out["bootstrap_seed"] = seed
    if reference is not None:
        out["reference"] = reference[0]
        out["reference_iqm"] = summarize(ref, lower_is_better=lower, seed=seed)["iqm"]
    return out


def lower_is_better(records: list[dict]) -> bool:
    """Whether the objective of these episodes is a cost: the return is minus a cost (up to a scale and a
    constant) and plus a utility, so ``Σ return × objective`` is negative or zero for a cost."""
    return sum(float(r["episode_return"]) * float(r["objective"]) for r in records) <= 0.0


def print_figures(fig: dict, env_id: str, split: str | None, file=None) -> None:
    """The protocol block after ``eval``'s summary."""
    from .options import fmt_num, fmt_pm

    file = file or sys.stdout
    better = "lower" if fig["lower_is_better"] else "higher"
    print(f"{env_id}{f' [{split}]' if split else ''}: objective over {fig['n_training_seeds']} model(s) × "
          f"{fig['n_test_seeds']} seed(s) ({better} is better)", file=file)
    print(f"  mean ± std           {fmt_pm(fig['mean'], fig['std'])}", file=file)
    print(f"  IQM [{fig['confidence']:.0%} CI]         {fmt_num(fig['iqm'])} [{fmt_num(fig['ci_low'])}, "
          f"{fmt_num(fig['ci_high'])}]  (stratified bootstrap, {fig['resampled']} resampled)", file=file)
    if "prob_improvement" in fig:
        print(f"  P(improvement)       {fig['prob_improvement']:.3f} over {fig['reference']} (its IQM "
              f"{fmt_num(fig['reference_iqm'])})", file=file)


def add_protocol_flags(p) -> None:
    """Give the ``eval`` parser ``p`` several ``--model``, ``--split``, ``--reference`` and ``--results-out``,
    wrapping its command."""
    for action in p._actions:
        if action.dest == "model":
            action.nargs = "+"
            action.help += "; several (training seeds of one recipe, same env) give one IQM over all"
    p.add_argument("--split", help="a named test split of the env's family (see `edgegym list`); default seeds: "
                   "the protocol's test seeds 20000-20019")
    p.add_argument("--reference", help="policy the probability of improvement is measured against (default: the "
                   "family's reference policy; 'none': skip)")
    p.add_argument("--results-out", metavar="FILE", help="write a results file (JSON) that `edgegym validate` replays")
    base = p.get_default("func")
    p.set_defaults(func=lambda args: _cmd_eval_protocol(args, base))


def split_env_config(args, env_id: str, cfg: dict) -> dict:
    """``cfg`` with ``--split``'s overlay (computed from the preset and ``cfg``) merged over it; with a split and no
    seed flag, ``args.seeds`` becomes the test seeds."""
    from .protocol import TEST_SEEDS, split_overlay
    from .runner import merge_config

    if not getattr(args, "split", None):
        return cfg
    if not getattr(args, "seeds", None) and not getattr(args, "seed_flags_given", None):
        args.seeds = [f"{r.start}-{r.stop - 1}" for r in TEST_SEEDS]
    return merge_config(cfg, split_overlay(env_id, args.split, cfg))


def _model_env(args, model: str) -> str:
    from .rl.learned import LearnedPolicyError, learned_env_config, sidecar_path
    from .rl.train import _model_name

    args.model = model
    name = _model_name(args)
    try:
        learned_env_config(name)  # validates the model file before anything else (as a single --model does)
    except LearnedPolicyError as e:
        raise UserError(str(e)) from None
    if args.env:
        return args.env
    try:
        return json.loads(sidecar_path(Path(name.split(":", 1)[1])).read_text())["env_id"]
    except (OSError, ValueError, KeyError):
        raise UserError("--env is needed (the model has no sidecar naming its env)") from None


def _cmd_eval_protocol(args, base) -> int:
    from .options import seeds_from
    from .rl.train import _model_name, parse_env_config
    from .runner import default_policy, merge_config, run_episode

    models = list(args.model)
    envs = {m: _model_env(args, m) for m in models}
    if len(set(envs.values())) > 1:
        raise UserError(f"--model: the models were trained on different envs "
                        f"({', '.join(sorted(set(envs.values())))}); give --env or models of one env")
    env_id = next(iter(envs.values()))
    cfg = parse_env_config(args.env_config)
    for key, val in (("source", getattr(args, "trace", None)), ("window", getattr(args, "window", None))):
        if val is not None:
            cfg = merge_config(cfg, {"workload": {key: val}})
    full = split_env_config(args, env_id, cfg)
    if args.split:
        args.env_config = json.dumps(full)
        args.trace = args.window = None  # in the config now
    seeds = seeds_from(args)
    runs = []
    for m in models:
        args.model, args.env = m, env_id
        args.records_sink = []
        rc = base(args)
        if rc:
            return rc
        runs.append((_model_name(args), args.records_sink))
    ref_name = args.reference or default_policy(env_id)
    reference = None
    if ref_name != "none":
        reference = (ref_name, [run_episode(env_id, ref_name, s, full or None) for s in seeds])
    fig = protocol_figures(env_id, runs, reference)  # SciPy (a core dependency): the bootstrap
    if args.json:
        print(json.dumps({"protocol": {"env": env_id, "split": args.split, **fig}}), file=sys.stderr)
    else:
        print_figures(fig, env_id, args.split)
    if args.results_out:
        p = write_results(args.results_out, results_entry(env_id, args.split, full, runs, summary=fig))
        print(f"edgegym eval: results written to {p} (replay: edgegym validate {p})", file=sys.stderr)
    return 0


def add_validate_parser(sub) -> None:
    """The ``validate`` subcommand."""
    from .options import parse_seeds

    p = sub.add_parser("validate", help="replay a results file (edgegym eval --results-out) and fail on any "
                       "difference", description="Replay every episode of a results file written by `edgegym "
                       "eval --results-out` (or the leaderboard) and compare the objectives (exactly, or within "
                       "1e-9 relative), the resolved env config and each checkpoint's sha256; exit status 1 on any "
                       "difference.")
    p.add_argument("file", help="the results file (JSON)")
    p.add_argument("--seeds", nargs="+", metavar="SEEDS", help="replay only these of its seeds (e.g. 20000-20002)")

    def cmd(args) -> int:
        return validate_file(args.file, parse_seeds(args.seeds) if args.seeds else None)

    p.set_defaults(func=cmd)
