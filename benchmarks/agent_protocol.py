"""Learned agents under the evaluation protocol: several training seeds, the held-out test seeds, every named split.

Usage::

    python benchmarks/agent_protocol.py --env ID --models DIR [DIR ...] [--splits NAME ...] [--seeds 20000-20019]
                                        [--results-dir DIR] [--workers 2]

``--models``: the model folders of one recipe trained with different training seeds (``edgegym train --seed S``),
all on ``--env``. For every split of the env's family (``edgegym list`` shows them; default: all that this machine
can run, a trace split without its trace is reported as skipped) and every test seed (the protocol's 20,000-20,019
by default, never used by training or model selection), it runs one episode of every model and of every shipped
non-learned, non-rollout policy of the family (kinds reference, variant, baseline and trivial, as the leaderboard
names them), and prints per split:

* the agent's **IQM [95 % CI]** over (training seed × test seed), stratified bootstrap with the test seeds as
  strata (Agarwal et al., "Deep Reinforcement Learning at the Edge of the Statistical Precipice", NeurIPS 2021;
  ``edgegym.agents.stats``), its mean ± std, and each training seed's mean (the spread over training seeds);
* the **best heuristic** of that split (the non-learned, non-rollout policy with the best mean over the same
  seeds), its IQM [95 % CI], and the agent's difference to it in % of its mean (positive = the agent is better)
  with a 95 % bootstrap interval of that difference (paired by test seed, the agent's seed means against the
  heuristic's), and the probability of improvement over it;
* every heuristic's mean, so that a degenerate split (a trivial policy at the top) shows.

``--results-dir``: one results file per split (``<id>.<split>.json``: env id, split, config, seeds, per-episode
objectives, each model's checkpoint and sha256, the package version) that ``edgegym validate FILE`` replays.

``--skip POLICY ...``: heuristics not run, for one that takes minutes per episode (on ``HeteroML-v1``,
``aonline-hetero`` and ``aonline-hetero-eager`` decide at about 2 per second, 75 s per 150-job episode); the
header names them, so that the "best heuristic" of the table is read as the best of those run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def heuristics(env_id: str) -> list[str]:
    """The family's shipped non-learned, non-rollout policies (the leaderboard's kinds)."""
    from edgegym.agents.runner import env_family
    from leaderboard import HEURISTIC_KINDS, policy_kind, registered

    fam = env_family(env_id)
    return [p for p in registered(env_id) if policy_kind(p, fam) in HEURISTIC_KINDS]


def _episode(task: tuple) -> dict:
    env_id, policy, seed, cfg = task
    from edgegym.agents.runner import run_episode

    rec = run_episode(env_id, policy, int(seed), cfg or None)
    return {"policy": policy, "seed": int(seed), "objective": float(rec["objective"]),
            "episode_return": float(rec["episode_return"])}


def diff_ci(agent: np.ndarray, ref: np.ndarray, lower: bool, seed: int = 0) -> tuple[float, float, float]:
    """The agent's improvement over ``ref`` in % of ``ref``'s mean (positive = better), with a 95 % bootstrap
    interval over the test seeds (paired: a resample takes the same seeds for both; the agent's score on a seed is
    its mean over the training seeds)."""
    from scipy.stats import bootstrap

    a = agent.mean(axis=0)
    sign = 1.0 if lower else -1.0

    def pct(x, y, axis=-1):
        return sign * 100.0 * (np.mean(y, axis=axis) - np.mean(x, axis=axis)) / np.mean(y, axis=axis)

    point = float(pct(a, ref))
    res = bootstrap((a, ref), pct, paired=True, vectorized=True, n_resamples=2000, method="percentile",
                    rng=np.random.default_rng(seed))
    return point, float(res.confidence_interval.low), float(res.confidence_interval.high)


def evaluate(env_id: str, models: list[str], splits: list[str], seeds: list[int], workers: int = 1,
             results_dir: Path | None = None, say=print, skip: tuple[str, ...] = ()) -> list[dict]:
    """Run the table's episodes; returns one row per split (see the module docstring). ``skip``: heuristics not
    run (each must be one of the family's; every row records them under ``skipped_heuristics``)."""
    from edgegym.agents.errors import UserError
    from edgegym.agents.protocol import SplitUnavailable, split_overlay
    from edgegym.agents.stats import prob_improvement, summarize
    from edgegym.agents.validate import lower_is_better, results_entry, write_results

    policies = [f"maskable-ppo:{Path(m) / 'model.zip'}" if Path(m).is_dir() else m for m in models]
    if len(seeds) < 2:
        raise SystemExit(f"agent_protocol: {len(seeds)} test seed(s) given; the bootstrap intervals need at least 2")
    heur = heuristics(env_id)
    unknown = sorted(set(skip) - set(heur))
    if unknown:
        raise SystemExit(f"agent_protocol: --skip {', '.join(unknown)}: not a heuristic of {env_id} "
                         f"(its heuristics: {', '.join(heur)})")
    heur = [h for h in heur if h not in skip]
    rows = []
    for split in splits:
        try:
            cfg = split_overlay(env_id, split)
        except SplitUnavailable as e:
            say(f"{split}: skipped ({e})")
            rows.append({"split": split, "skipped": str(e)})
            continue
        except UserError as e:
            raise SystemExit(f"agent_protocol: {e}") from None
        t0 = time.perf_counter()
        tasks = [(env_id, p, s, cfg) for p in policies + heur for s in seeds]
        if workers > 1:
            with ProcessPoolExecutor(workers) as ex:
                recs = list(ex.map(_episode, tasks, chunksize=4))
        else:
            recs = [_episode(t) for t in tasks]
        n = len(seeds)
        runs = [recs[i * n:(i + 1) * n] for i in range(len(policies) + len(heur))]  # task order: one block each
        by = dict(zip(heur, runs[len(policies):], strict=True))
        lower = lower_is_better(recs)
        agent = np.array([[r["objective"] for r in run] for run in runs[:len(policies)]])
        means = {h: float(np.mean([r["objective"] for r in by[h]])) for h in heur}
        best = (min if lower else max)(heur, key=lambda h: means[h])
        ref = np.array([r["objective"] for r in by[best]])
        fig = summarize(agent, lower_is_better=lower, reference=ref[None, :])
        ref_fig = summarize(ref[None, :], lower_is_better=lower)
        pct, lo, hi = diff_ci(agent, ref, lower)
        row = {"split": split, "config": cfg, "agent": fig, "per_training_seed": agent.mean(axis=1).tolist(),
               "best_heuristic": best, "best": ref_fig, "improvement_pct": pct, "improvement_ci": [lo, hi],
               "prob_improvement": float(prob_improvement(agent, ref[None, :], lower_is_better=lower)),
               "heuristic_means": means, "skipped_heuristics": list(skip), "lower_is_better": lower,
               "wall_s": time.perf_counter() - t0}
        rows.append(row)
        say(format_row(row))
        if results_dir is not None:
            entry_runs = list(zip(policies, runs, strict=False)) + [(best, by[best])]
            path = Path(results_dir) / f"{env_id}.{split}.json"
            write_results(path, results_entry(env_id, split, cfg, entry_runs, summary=fig))
    return rows


def _n(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def format_row(row: dict) -> str:
    a, b = row["agent"], row["best"]
    spread = " / ".join(_n(x) for x in row["per_training_seed"])
    return (f"| {row['split']} | {_n(a['iqm'])} [{_n(a['ci_low'])}, {_n(a['ci_high'])}] | "
            f"{_n(a['mean'])} ± {_n(a['std'])} | {spread} | `{row['best_heuristic']}` {_n(b['iqm'])} "
            f"[{_n(b['ci_low'])}, {_n(b['ci_high'])}] | {row['improvement_pct']:+.1f} % "
            f"[{row['improvement_ci'][0]:+.1f}, {row['improvement_ci'][1]:+.1f}] | {row['prob_improvement']:.2f} |")


HEADER = ("| split | agent IQM [95 % CI] | agent mean ± std | mean per training seed | best heuristic: IQM [95 % CI] "
          "| agent vs best heuristic [95 % CI] | P(improvement) |\n|---|---|---|---|---|---|---|")


def main() -> None:
    from edgegym.agents.options import parse_seeds
    from edgegym.agents.protocol import split_names, test_seeds

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", required=True, help="the env id the models were trained on")
    ap.add_argument("--models", nargs="+", required=True, help="model folders, one per training seed")
    ap.add_argument("--splits", nargs="*", default=None, help="split names (default: every split of the family)")
    ap.add_argument("--seeds", default=None, help="test seeds, e.g. 20000-20019 (default: the protocol's)")
    ap.add_argument("--workers", type=int, default=1, help="processes for the episodes (default 1)")
    ap.add_argument("--results-dir", type=Path, default=None, help="write one results file per split here")
    ap.add_argument("--json-out", type=Path, default=None, help="write the rows as JSON here")
    ap.add_argument("--skip", nargs="*", default=[], metavar="POLICY",
                    help="heuristics not to run (e.g. one that takes minutes per episode); the table names them")
    args = ap.parse_args()
    seeds = parse_seeds(args.seeds) if args.seeds else test_seeds()
    splits = args.splits or split_names(args.env)
    print(f"{args.env}: {len(args.models)} model(s) (training seeds) × {len(seeds)} test seed(s) "
          f"{seeds[0]}-{seeds[-1]}; heuristics: {', '.join(h for h in heuristics(args.env) if h not in args.skip)}"
          + (f"; not run (--skip): {', '.join(args.skip)}" if args.skip else "") + "\n")
    print(HEADER, flush=True)
    rows = evaluate(args.env, args.models, splits, seeds, args.workers, args.results_dir,
                    say=lambda s: print(s, flush=True), skip=tuple(args.skip))
    print("\nheuristic means per split (best first):")
    for r in rows:
        if "skipped" in r:
            continue
        order = sorted(r["heuristic_means"].items(), key=lambda kv: kv[1], reverse=not r["lower_is_better"])
        print(f"  {r['split']}: " + ", ".join(f"{k} {_n(v)}" for k, v in order))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps({"env": args.env, "models": args.models, "seeds": seeds, "rows": rows},
                                            indent=1) + "\n")


if __name__ == "__main__":
    main()
