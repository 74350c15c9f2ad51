"""Headroom sweep: per family, how far the best shipped policy is from the bound, and what rollout finds beyond it.

For each setting of a small grid over the family's own knobs (offered load, utility mix, cloud availability, cluster
size and heterogeneity, number of jobs, horizon), every registered non-learned, non-rollout policy of the family (the
papers' algorithms, their baselines and the trivial policies: random, all-cloud / all-edge, single-worker, one-site)
runs on ``--seeds``; the table gives per setting:

* the **best** of them (the best heuristic: the best mean objective over the seeds) and the trivial policies' objectives;
* **best / bound**: the best heuristic's objective over the family's offline bound on the same seed (the bound the
  family declares, :func:`edgegym.core.bounds.family_bound`; mean over the seeds; ≥ 1 for a cost, ≤ 1 for a utility,
  1 = the bound), and the bound's name;
* **rollout gain**: ``rollout(K=..,H=..):<best>`` against the best heuristic on the same seeds (``--rollout-seeds``,
  the first seeds of ``--seeds``), in % of its objective, positive = rollout is better. Rollout refuses some bases (a
  base that is not Markov or that decides inside the simulator); the best heuristic it accepts is then the base,
  and the table names it.

A setting is marked **hard** when the best heuristic is ≥ 10 % from the bound (ratio ≥ 1.10 for a cost, ≤ 0.90 for a
utility) or rollout gains ≥ 3 % over it.

One command per family (``--family all`` runs the four in turn)::

    python benchmarks/headroom_sweep.py --family WirelessUDL --seeds 100-102 --rollout-seeds 2   # rollout on 100-101
    python benchmarks/headroom_sweep.py --family WirelessUDL --quick        # smoke run: the tiny preset, 1 seed

Episodes run through :func:`edgegym.agents.runner.run_episode` (the path of ``edgegym bench``) in ``--workers``
processes; each setting's line says the CPU time its episodes and bounds took (``time.process_time`` in each worker,
summed).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.leaderboard import HIGHER_IS_BETTER, TRIVIAL, _clean  # noqa: E402

FAMILIES = ("EdgeCloudML", "EdgeUtility", "HeteroML", "WirelessUDL")
SEEDS = (100, 101, 102)
ROOM = 0.10  # best heuristic ≥ 10 % from the bound
GAIN = 0.03  # or rollout ≥ 3 % better than it

#: per family: the base id, the rollout name (``{base}`` = the best heuristic) and the settings (label -> overrides)
GRIDS: dict[str, dict] = {
    "EdgeCloudML": {
        "env": "EdgeCloudML-v0",
        "rollout": "rollout(K=2,H=10):{base}",
        "settings": {
            "default (load 0.5, 300 jobs)": {},
            "load 0.25": {"workload": {"load": 0.25}},
            "load 1.0": {"workload": {"load": 1.0}},
            "50 edge servers": {"cluster": {"num_edge_servers": 50}},
            "cloud upload 20-30 slots": {"job_model": {"cloud_upload_delay_slots": [20, 30]}},
        },
    },
    "EdgeUtility": {
        "env": "EdgeUtility-v0",
        "rollout": "rollout(K=2,H=10,D=1):{base}",
        "settings": {
            "load 1.0, 400 jobs": {"workload": {"num_jobs": 400}},
            "load 1.5": {"workload": {"num_jobs": 400, "load": 1.5}},
            "load 2.0": {"workload": {"num_jobs": 400, "load": 2.0}},
            "all-or-nothing utilities, load 1.5": {"workload": {"num_jobs": 400, "load": 1.5,
                                                                "utility_mix": ["aon"]}},
            "sigmoid utilities, load 1.5": {"workload": {"num_jobs": 400, "load": 1.5, "utility_mix": ["sigmoid"]}},
            "finite cloud, load 1.5": {"workload": {"num_jobs": 400, "load": 1.5},
                                       "servers": {"cloud": True}, "scheduler": {"cloud": "same"}},
        },
    },
    "HeteroML": {
        "env": "HeteroML-rl-v0",
        "rollout": "rollout(K=2,H=10):{base}",
        "settings": {
            "load 2.0 (20 servers, 50 jobs)": {},
            "load 1.0": {"cluster": {"load": 1.0}},
            "load 3.0": {"cluster": {"load": 3.0}},
            "load 4.0": {"cluster": {"load": 4.0}},
            "100 jobs over 60 slots": {"workload": {"num_jobs": 100}, "cluster": {"calibration_jobs": 50}},
        },
    },
    "WirelessUDL": {
        "env": "WirelessUDL-v0",
        "rollout": "rollout(K=2,H=10,D=1):{base}",
        "settings": {
            "default (50 sites, 100 jobs, T 150)": {},
            "200 jobs": {"jobs": {"count": 200}},
            "25 sites": {"cluster": {"sites": 25}},
            "T 50": {"jobs": {"horizon_slots": 50, "arrival_window": [0, 49]}},
        },
    },
}
#: ``--quick``: the family's tiny preset, one setting, one seed
QUICK = {"EdgeCloudML": "EdgeCloudML-tiny-v0", "EdgeUtility": "EdgeUtility-tiny-v0", "HeteroML": "HeteroML-tiny-v0",
         "WirelessUDL": "WirelessUDL-tiny-v0"}


# ---------------------------------------------------------------------------------------------- the runs
def run_task(task: dict) -> dict:
    """One episode (``kind == "episode"``) or one bound (``"bound"``) in a worker process; never raises."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    t0 = time.process_time()
    try:
        out = _bound(task) if task["kind"] == "bound" else _episode(task)
    except Exception as e:  # noqa: BLE001  (reported in the table, not fatal to the sweep)
        out = {**task, "error": _clean(f"{type(e).__name__}: {e}")}
    out["cpu_s"] = time.process_time() - t0
    return out


def _episode(task: dict) -> dict:
    from edgegym.agents.runner import run_episode

    rec = run_episode(task["env"], task["policy"], int(task["seed"]), task["config"] or None)
    return {**task, "objective": float(rec["objective"])}


def _bound(task: dict) -> dict:
    """The family's declared bound of the instance (``Family.bound``); a family that declares none gets the
    capacity-free bound its simulator exposes, when it has one (named so), else ``nan``."""
    import gymnasium as gym

    import edgegym  # noqa: F401
    from edgegym.core.bounds import family_bound
    from edgegym.families import family

    env = gym.make(task["env"], config=task["config"] or None)
    try:
        env.reset(seed=int(task["seed"]))
        u = env.unwrapped
        fn = family_bound(family(u.preset.family))
        if fn is not None:
            b = fn(u, time_limit_s=float(task.get("time_limit_s", 10.0)))
            return {**task, "bound": float(b.value), "bound_name": b.name, "sense": b.sense}
        if hasattr(u, "upper_bound"):
            return {**task, "bound": float(np.sum(u.upper_bound())), "bound_name": "capacity-free upper bound",
                    "sense": "upper"}
        return {**task, "bound": math.nan, "bound_name": "none declared", "sense": "n/a"}
    finally:
        env.close()


def _run(tasks: list[dict], workers: int) -> list[dict]:
    if workers <= 1:
        return [run_task(t) for t in tasks]
    with ProcessPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(run_task, tasks))


# --------------------------------------------------------------------------------------------- a setting
def heuristics(family: str) -> list[str]:
    """Every registered non-learned, non-rollout policy of ``family`` (reference, baselines, trivial)."""
    from edgegym.agents.registry import policy_names

    return [n for n in policy_names(family) if not n.startswith("rollout")]


def sweep_setting(family: str, env_id: str, config: dict, seeds, rollout_seeds, rollout: str, workers: int,
                  time_limit_s: float) -> dict:
    """Run one setting: every heuristic and the bound on ``seeds``, then rollout over the best heuristic (or the
    best one rollout accepts) on ``rollout_seeds``. Returns the setting's summary (see :func:`render`)."""
    higher = HIGHER_IS_BETTER[family]
    pols = heuristics(family)
    tasks = [{"kind": "episode", "env": env_id, "policy": p, "seed": s, "config": config} for p in pols for s in seeds]
    tasks += [{"kind": "bound", "env": env_id, "seed": s, "config": config, "time_limit_s": time_limit_s}
              for s in seeds]
    recs = _run(tasks, workers)
    cpu = sum(r["cpu_s"] for r in recs)
    errors = {r["policy"]: r["error"] for r in recs if r["kind"] == "episode" and "error" in r}
    obj = {p: {r["seed"]: r["objective"] for r in recs if r.get("policy") == p and "objective" in r} for p in pols}
    mean = {p: float(np.mean(list(v.values()))) for p, v in obj.items() if len(v) == len(seeds)}
    if not mean:
        raise RuntimeError(f"{family} {env_id}: no policy finished every seed ({errors})")
    ranked = sorted(mean, key=lambda p: -mean[p] if higher else mean[p])
    best = ranked[0]
    bounds = {r["seed"]: r for r in recs if r["kind"] == "bound"}
    ratios = [obj[best][s] / bounds[s]["bound"] for s in seeds
              if s in bounds and "bound" in bounds[s] and bounds[s]["bound"] > 0]
    b0 = next(iter(bounds.values()), {})
    # rollout over the best heuristic it accepts, on the rollout seeds (paired with its base on the same seeds)
    gain, gain_best, base, rname, refused = math.nan, math.nan, None, None, []
    for cand in ranked:
        name = rollout.format(base=cand)
        rr = _run([{"kind": "episode", "env": env_id, "policy": name, "seed": s, "config": config}
                   for s in rollout_seeds], workers)
        cpu += sum(r["cpu_s"] for r in rr)
        if any("error" in r for r in rr):
            refused.append((cand, next(r["error"] for r in rr if "error" in r)))
            continue
        ro = {r["seed"]: r["objective"] for r in rr}
        gain, base, rname = _gain(ro, obj[cand], rollout_seeds, higher), cand, name
        gain_best = _gain(ro, obj[best], rollout_seeds, higher)
        break
    ratio = float(np.mean(ratios)) if ratios else math.nan
    room = (ratio <= 1 - ROOM) if higher else (ratio >= 1 + ROOM)
    return {"best": best, "best_mean": mean[best], "ratio": ratio, "bound_name": b0.get("bound_name", "n/a"),
            "bound_error": b0.get("error"), "trivial": {p: mean[p] for p in pols if p in TRIVIAL and p in mean},
            "rollout": rname, "rollout_base": base, "gain": gain, "refused": refused, "errors": errors,
            "gain_best": gain_best,
            "hard": bool(room or (math.isfinite(gain_best) and gain_best >= GAIN)), "cpu_s": cpu, "ranked": ranked,
            "means": mean}


def _gain(new: dict, old: dict, seeds, higher: bool) -> float:
    """Mean over ``seeds`` of ``new``'s improvement over ``old`` in % of ``old`` (as a fraction; > 0 = better)."""
    return float(np.mean([(new[s] - old[s]) / abs(old[s]) if higher else (old[s] - new[s]) / abs(old[s])
                          for s in seeds]))


def _reason(err: str) -> str:
    """The short reason of a rollout refusal (the clause after the base's name)."""
    tail = err.split("the base policy", 1)[-1]
    tail = tail.split("'", 2)[-1] if tail.count("'") >= 2 else tail
    return tail.split(" (")[0].split(":")[0].strip()


# ------------------------------------------------------------------------------------------------- output
def _num(x: float) -> str:
    return "n/a" if not math.isfinite(x) else (f"{x:,.0f}" if abs(x) < 1e6 else f"{x:.3g}")


def render(family: str, env_id: str, rows: dict, seeds, rollout_seeds) -> str:
    """The Markdown table of one family's sweep."""
    higher = HIGHER_IS_BETTER[family]
    trivial = sorted({p for r in rows.values() for p in r["trivial"]})
    out = [f"### {family} (base `{env_id}`, {'higher' if higher else 'lower'} is better)", "",
           f"Heuristics and bound on seeds {_seeds_txt(seeds)}; rollout on seeds {_seeds_txt(rollout_seeds)}.", "",
           "| setting | best heuristic | its objective | best / bound | bound | rollout gain over the best | "
           + " | ".join(f"`{p}`" for p in trivial) + " | hard | CPU s |",
           "|---|---|---|---|---|---|" + "---|" * len(trivial) + "---|---|"]
    for label, r in rows.items():
        if "failed" in r:
            out.append(f"| {label} | failed: {r['failed']} |")
            continue
        if r["rollout"] is None:
            gain = "refused"
        elif r["rollout_base"] == r["best"]:
            gain = f"{100 * r['gain']:+.1f} % (`{r['rollout']}`)"
        else:
            gain = f"{100 * r['gain_best']:+.1f} % (`{r['rollout']}`: {100 * r['gain']:+.1f} % over its base)"
        out.append(f"| {label} | `{r['best']}` | {_num(r['best_mean'])} | {r['ratio']:.3f} | {r['bound_name']} "
                   f"| {gain} | " + " | ".join(_num(r["trivial"].get(p, math.nan)) for p in trivial)
                   + f" | {'**yes**' if r['hard'] else 'no'} | {r['cpu_s']:.0f} |")
    notes = []
    for label, r in rows.items():
        if r.get("refused"):
            notes.append(f"- {label}: rollout refused " + "; ".join(f"`{c}` ({_reason(e)})" for c, e in r["refused"])
                         + ".")
        for p, err in r.get("errors", {}).items():
            notes.append(f"- {label}: `{p}` failed ({err}).")
        if r.get("bound_error"):
            notes.append(f"- {label}: bound failed ({r['bound_error']}).")
    return "\n".join(out + ([""] + notes if notes else []) + [""])


def _seeds_txt(seeds) -> str:
    seeds = list(seeds)
    return f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)) \
        else ", ".join(map(str, seeds))


def main(argv=None) -> int:
    from edgegym.agents.options import parse_seeds  # one seed grammar for the CLI and the scripts

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", required=True, choices=(*FAMILIES, "all"), help="the family to sweep (or all)")
    ap.add_argument("--seeds", nargs="+", default=[f"{SEEDS[0]}-{SEEDS[-1]}"],
                    help="seeds of the heuristics and the bound: 100 101, 100,101 or 100-102 (default 100-102)")
    ap.add_argument("--rollout-seeds", type=int, default=None, metavar="N",
                    help="rollout on the first N seeds only (default: all of --seeds)")
    ap.add_argument("--settings", nargs="+", default=None, metavar="LABEL",
                    help="run only these settings of the grid (their labels, as the table prints them)")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="the bound's LP/MILP time limit in s (default 10)")
    ap.add_argument("--quick", action="store_true", help="smoke run: the tiny preset, one setting, the first seed")
    args = ap.parse_args(argv)

    import edgegym  # noqa: F401

    try:
        seeds = parse_seeds(args.seeds)
    except ValueError:
        ap.error(f"--seeds {' '.join(args.seeds)}: expected integers, e.g. 100-102 or 100,101")
    if args.quick:
        seeds = seeds[:1]
    if args.rollout_seeds is not None and args.rollout_seeds < 1:
        ap.error(f"--rollout-seeds {args.rollout_seeds}: at least 1")
    rseeds = seeds[: args.rollout_seeds] if args.rollout_seeds else seeds
    fams = FAMILIES if args.family == "all" else (args.family,)
    for fam in fams:
        grid = GRIDS[fam]
        env_id = QUICK[fam] if args.quick else grid["env"]
        settings = {"tiny preset": {}} if args.quick else grid["settings"]
        if args.settings:
            unknown = [s for s in args.settings if s not in settings]
            if unknown:
                ap.error(f"--settings: unknown {fam} setting(s) {unknown} (valid: {list(settings)})")
            settings = {k: v for k, v in settings.items() if k in args.settings}
        rows = {}
        for label, cfg in settings.items():
            t0 = time.perf_counter()
            try:
                rows[label] = sweep_setting(fam, env_id, cfg, seeds, rseeds, grid["rollout"], args.workers,
                                            args.time_limit)
            except RuntimeError as e:
                rows[label] = {"failed": _clean(str(e)), "refused": [], "errors": {}}
            r = rows[label]
            print(f"[{fam}] {label}: " + (f"failed ({r['failed']})" if "failed" in r else
                  f"best {r['best']} ratio {r['ratio']:.3f}, rollout {r['gain_best']:+.3%} over it, "
                  f"{r['cpu_s']:.0f} CPU-s, {time.perf_counter() - t0:.0f} s wall"), file=sys.stderr, flush=True)
        print(render(fam, env_id, rows, seeds, rseeds))
        for label, cfg in settings.items():
            print(f"- {label}: `{cfg}`" if cfg else f"- {label}: the preset as shipped")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
