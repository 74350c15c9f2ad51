"""Flags shared by the ``edgegym`` subcommands, and the one way numbers are printed.

Every subcommand that runs episodes takes the same env / seed / config flags, parsed the same way:

* ``--env ID`` (``bench``: ``--envs ID ...``), ``--env-config JSON|YAML|FILE`` (preset overrides);
* ``--seed S --episodes N`` (seeds ``S .. S+N-1``) or ``--seeds 0-4`` / ``--seeds 0,1,2`` / ``--seeds 0 1 2``
  (not both: ``--seeds`` with ``--seed`` or ``--episodes`` is a user error naming the flags);
* a learned policy by path: ``DIR`` or ``DIR/model.zip`` with its sidecar ``model.edgegym.json`` naming the
  algorithm, or explicitly ``ppo:PATH`` / ``maskable-ppo:PATH``.

``fmt_pm`` prints ``mean ± std`` rounded to the std's two significant digits (``10.7 ± 0``, never
``10.7 ± 2.18e-15``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

import numpy as np

from .errors import UserError
from .rl.learned import resolve_policy  # noqa: F401  (re-exported: the CLI's name for it)

__all__ = [
    "add_env_config_flag",
    "add_seed_flags",
    "fmt_num",
    "fmt_pm",
    "install_notice_hook",
    "parse_seeds",
    "print_summary",
    "resolve_policy",
    "seeds_from",
    "summary_stats",
]

SEEDS_HELP = "explicit seeds: 0 1 2, 0,1,2 or a range 0-4 (instead of --seed/--episodes, not with them)"
ENV_CONFIG_HELP = (
    "preset overrides, inline JSON/YAML or a YAML file, e.g. "
    '\'{"workload": {"num_jobs": 10}}\' (keys as in envs_config/<family>/*.yaml)'
)


def parse_seeds(items, flag: str = "--seeds") -> list[int]:
    """``["0-2", "5,7", "9"]`` -> ``[0, 1, 2, 5, 7, 9]`` (duplicates dropped, order kept).

    A bad item raises :class:`UserError` naming ``flag`` (the option the items came from)."""
    seeds: list[int] = []
    for it in [items] if isinstance(items, str | int) else items:
        for part in str(it).split(","):
            part = part.strip()
            if not part:
                continue
            m = re.fullmatch(r"(\d+)-(\d+)", part)
            try:
                if m:
                    a, b = int(m.group(1)), int(m.group(2))
                    if b < a:
                        raise ValueError
                    seeds += list(range(a, b + 1))
                else:
                    seeds.append(int(part))
                    if seeds[-1] < 0:
                        raise ValueError
            except ValueError:
                raise UserError(f"{flag}: bad seed {part!r}: use integers >= 0, lists (0,1,2) or ranges (0-2)") \
                    from None
    return list(dict.fromkeys(seeds))


class _SeedFlag(argparse.Action):
    """Stores an integer like ``type=int`` and records that the flag was given (``seeds_from`` needs to tell a
    default ``--seed``/``--episodes`` from one the user typed next to ``--seeds``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        given = tuple(getattr(namespace, "seed_flags_given", None) or ())
        namespace.seed_flags_given = given + (option_string or self.option_strings[0],)


def add_seed_flags(p, *, seed: int = 0, episodes: int = 1, what: str = "episode") -> None:
    """``--seed``, ``--episodes`` and ``--seeds`` (ranges), the same on every subcommand."""
    p.add_argument("--seed", type=int, default=seed, action=_SeedFlag,
                   help=f"seed of the first {what} ({what} k uses seed+k; default {seed})")
    p.add_argument("--episodes", type=int, default=episodes, action=_SeedFlag,
                   help=f"number of {what}s (default {episodes})")
    p.add_argument("--seeds", nargs="+", metavar="SEEDS", help=SEEDS_HELP)


def seeds_from(args) -> list[int]:
    """The seeds of ``--seeds`` if given, else ``--seed .. --seed + --episodes - 1``.

    ``--seeds`` together with ``--seed`` or ``--episodes`` is a :class:`UserError` naming the flags (one of them
    would be ignored)."""
    given = [f for f in dict.fromkeys(getattr(args, "seed_flags_given", None) or ())]
    if getattr(args, "seeds", None):
        if given:
            raise UserError(f"--seeds cannot be combined with {' and '.join(given)}: give either --seeds "
                            "(e.g. 0-4) or --seed S --episodes N")
        seeds = parse_seeds(args.seeds, "--seeds")
        if not seeds:
            raise UserError("--seeds needs at least one seed")
        return seeds
    if args.seed < 0:
        raise UserError(f"--seed must be >= 0 (NumPy seeds are non-negative), got {args.seed}")
    if args.episodes < 1:
        raise UserError(f"--episodes must be >= 1, got {args.episodes}")
    return [args.seed + k for k in range(args.episodes)]


def add_env_config_flag(p) -> None:
    """``--env-config``: preset overrides (inline JSON/YAML or a file)."""
    p.add_argument("--env-config", metavar="CONFIG", help=ENV_CONFIG_HELP)


# ------------------------------------------------------------------------------------- learned by path
# ------------------------------------------------------------------------------------------ numbers
def fmt_num(x, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits (integers printed whole)."""
    if x is None:
        return "–"
    x = float(x)
    if not math.isfinite(x):
        return "–" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if x == int(x) and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.{digits}g}"


def fmt_pm(mean, std, digits: int = 4) -> str:
    """``mean ± std`` rounded to the std's two significant digits (a std below 1e-9 of the mean reads 0)."""
    if mean is None or not math.isfinite(float(mean)):
        return fmt_num(mean)
    m, s = float(mean), float(std) if std is not None else float("nan")
    if not math.isfinite(s) or s <= 1e-9 * max(abs(m), 1e-300):
        return f"{fmt_num(m, digits)} ± 0"
    e = math.floor(math.log10(s))
    if 1e-4 <= s and abs(m) < 1e6:
        dec = max(0, 1 - e)
        return f"{m:.{dec}f} ± {s:.{dec}f}"
    sig = max(1, min(10, (math.floor(math.log10(abs(m))) if m else e) - e + 2))
    return f"{m:.{sig}g} ± {s:.2g}"


#: metrics in the summary of ``run`` / ``eval`` (when the env reports them), after the objective
SUMMARY_KEYS = (
    "objective",
    "avg_jct",
    "makespan",
    "preemptions",
    "edge_fraction",
    "total_utility",
    "deadline_miss_rate",
    "avg_response_time",
    "episode_return",
    "wall_s",
)


def summary_stats(records: list[dict], keys=SUMMARY_KEYS) -> list[tuple[str, float, float]]:
    """``(key, mean, sample std)`` over ``records`` for each numeric key they all have (std 0 for one)."""
    out = []
    for k in keys:
        vals = [r.get(k) for r in records]
        if not vals or any(not isinstance(v, int | float | np.number) or isinstance(v, bool) for v in vals):
            continue
        a = np.asarray(vals, dtype=float)
        out.append((k, float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0))
    return out


def print_summary(records: list[dict], file=None) -> None:
    """The mean ± std table of ``run`` / ``eval`` over the episodes of one env and one policy."""
    if not records:
        return
    file = file or sys.stdout
    r0 = records[0]
    seeds = [r["seed"] for r in records]
    span = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds[:6]))}" + (
        ", ..." if len(seeds) > 6 else "")
    print(f"{r0['env']} | {r0['policy']}: {len(records)} episode(s), {span}; mean ± std over episodes", file=file)
    for k, m, s in summary_stats(records):
        print(f"  {k:<20} {fmt_pm(m, s)}", file=file)


#: metrics on the one-line text record of an episode (when present); --json prints them all
LINE_KEYS = ("avg_jct", "makespan", "preemptions", "edge_fraction", "total_utility", "deadline_miss_rate",
             "avg_response_time")


# ------------------------------------------------------------------------------------------ episodes
def _progress(args, desc: str):
    """A step counter on stderr that appears only when an episode runs longer than 2 s (``--no-progress``: off).

    Only on a terminal: redirected to a log file, a counter redrawn in place is a flood of lines, and the episode's
    own line (on stdout) already marks the progress, one line per episode."""
    from tqdm import tqdm

    return tqdm(desc=desc, unit=" steps", delay=2.0, leave=False, file=sys.stderr,
                disable=getattr(args, "no_progress", False) or not _is_terminal(sys.stderr))


def _is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (``False`` for files, pipes and captured streams)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _compile_note(seconds: float) -> None:
    """One line on stderr after an episode during which edgegym's kernels compiled (their first use)."""
    import os

    if seconds > 0 and os.environ.get("EDGEGYM_COMPILE_NOTICE", "1") != "0":
        print(f"edgegym: the kernels compiled for {seconds:.1f} s during this episode (first use; cached now; "
              "not counted in its wall_s)", file=sys.stderr, flush=True)


def run_episodes(args, env_id: str, policy: str, seeds: list[int], env_config: dict | None, on_end=None,
                 render_mode: str | None = None) -> list:
    """Run ``policy`` on ``env_id`` for each seed, printing one line (or JSON object) per episode as it ends,
    then the mean ± std summary (on stderr with ``--json``). Shared by ``run`` and ``eval``."""
    from .runner import compile_clock, json_default, run_episode

    recs = []
    compiled = compile_clock()
    for k, seed in enumerate(seeds):
        bar = _progress(args, f"{env_id} | {policy} | seed {seed}")
        c0 = compiled()
        try:
            rec = run_episode(env_id, policy, seed, env_config or None, on_end=on_end,
                              on_step=None if bar.disable else (lambda n, b=bar: b.update(1)),
                              render_mode=render_mode)
        finally:
            bar.close()
        _compile_note(compiled() - c0)
        rec["episode"] = k
        recs.append(rec)
        if args.json:
            print(json.dumps(rec, default=json_default), flush=True)
        else:
            shown = [f"{m} {rec[m]:.4g}" for m in LINE_KEYS if m in rec]
            print(
                f"[{rec['env']} | {rec['policy']} | seed {rec['seed']}] objective {rec['objective']:.4g}  "
                + "  ".join(shown)
                + f"  return {rec['episode_return']:.4g}  ({rec['wall_s']:.2f} s)",
                flush=True,
            )
    if len(recs) > 1 or not args.json:
        print_summary(recs, file=sys.stderr if args.json else sys.stdout)
    if isinstance(getattr(args, "records_sink", None), list):  # eval's protocol figures read them
        args.records_sink.extend(recs)
    return recs


# ------------------------------------------------------------------------------------------- notices
def install_notice_hook(prog: str = "edgegym") -> None:
    """Print Python warnings (e.g. a missing trace replaced by synthetic data) as one line on stderr."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(message))  # Gymnasium colours its warnings
        print(f"{prog}: notice: {text}", file=file or sys.stderr)

    warnings.showwarning = show
