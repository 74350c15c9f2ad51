"""WirelessUDL's latency/bandwidth trade-off: every policy on a preset, with the split of its cost.

Han et al. ("Online Scheduling Unbiased Distributed Learning over Wireless Edge Networks", IEEE ICPADS 2021) minimise
a latency cost plus a bandwidth cost: "there is a trade-off between latency cost and bandwidth cost". This script
shows whether a preset keeps it. Per policy (every registered WirelessUDL policy, the trivial ones included), over
seeds 100-104 by default: the total cost (mean ± sample std), its ratio to the best policy's mean, the latency and
bandwidth costs, the mean latency, and the jobs whose latency cost is at least 90 % of its ceiling (the bound ``b``
of the logistic cost; "n/a" for unbounded shapes). Below the table, the trade-off check: the bandwidth-only
extremes (``okita-one``, ``one-site``) and the latency-only extremes (``drf``, ``oasis``) each at least 10 % above
the best policy, and fewer than half of the jobs at ≥ 90 % of their ceiling under the best policy.

``--sweep`` runs the same table for every level of the logistic ceiling on the grid :data:`LEVELS`: the
piecewise shape's late cost ``τ2 ∈ [300, 400]`` (the default up to 0.5.x, ``WirelessUDL-sim-low-ceiling-v0``) and
the printed exponential ``τ·e^{0.25·L}`` over ``τ ∈ [20, 100]`` at ``L = 5, 10, …, 30`` slots (a ceiling the
printed cost reaches at ``L``: the logistic then follows it, within a factor 2, up to about ``L`` slots)::

    python benchmarks/wireless_udl_tradeoff.py                    # WirelessUDL-v0, seeds 100-104
    python benchmarks/wireless_udl_tradeoff.py --sweep            # every ceiling level of the grid
    python benchmarks/wireless_udl_tradeoff.py --env WirelessUDL-sim-low-ceiling-v0 --seeds 100 101
    python benchmarks/wireless_udl_tradeoff.py --quick                    # smoke run: one seed, 20 jobs

Episodes run through :func:`edgegym.agents.runner.run_episode` (the path of ``edgegym bench``) in ``--workers``
processes; the footer gives the CPU time the episodes took (``time.process_time`` in each worker, summed).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SEEDS = tuple(range(100, 105))
BANDWIDTH_ONLY = ("okita-one", "one-site")  # one worker / one site: least bandwidth, latency ignored
LATENCY_ONLY = ("drf", "oasis")  # finish at latency ≈ 1, bandwidth ignored
MARGIN = 0.10  # each extreme at least 10 % above the best policy
AT_CEILING = 0.90  # a job "pays its ceiling" when its latency cost is ≥ 90 % of b
TAU = (20.0, 100.0)  # "τ ∈ [20, 100]" (the paper's default latency cost)
RATE = 0.25  # "f(t) = τ e^{0.25t}"
SLOTS = (5, 10, 15, 20, 25, 30)  # L of the ceiling levels τ·e^{0.25·L}
QUICK_JOBS = {"count": 20, "horizon_slots": 30, "arrival_window": [0, 29]}  # --quick: the default's arrival rate


def ceiling_at(slots: float, tau=TAU, rate: float = RATE) -> tuple[float, float]:
    """The range of the printed ``τ·e^{rate·L}`` at ``L = slots`` over ``τ ∈ tau``, rounded to 0.1: the logistic
    ceiling ``jobs.logistic_b`` that the printed cost reaches after ``slots`` slots."""
    return tuple(round(t * math.exp(rate * slots), 1) for t in tau)


#: the ceiling levels of ``--sweep``: name -> ``jobs.logistic_b``
LEVELS = {"τ2 [300, 400]": (300.0, 400.0), **{f"τe^(0.25·{L})": ceiling_at(L) for L in SLOTS}}


def run_one(task: dict) -> dict:
    """One episode; the record of ``run_episode`` plus ``at_ceiling`` (jobs with latency cost ≥ 90 % of ``b``,
    ``nan`` when the jobs' cost is not the bounded logistic) and ``cpu_s``."""
    from edgegym.agents.runner import run_episode

    from edgegym.families.wireless_udl.costs import KIND_CODES

    def on_end(env, rec):
        u = env.unwrapped
        logistic = u.inst.kind == KIND_CODES["logistic"]
        rec["at_ceiling"] = (int(np.sum(u.sim.lat_cost[logistic] >= AT_CEILING * u.inst.b[logistic]))
                             if logistic.all() else float("nan"))

    t0 = time.process_time()
    rec = run_episode(task["env"], task["policy"], task["seed"], task["config"] or None, on_end=on_end)
    rec["cpu_s"] = time.process_time() - t0
    rec["level"] = task["level"]
    return rec


def _mean(recs, key) -> float:
    return float(np.mean([r[key] for r in recs]))


def summarise(recs: list[dict], policies) -> tuple[list[dict], dict]:
    """Per-policy rows (means over seeds) and the trade-off check of one level."""
    rows = []
    for p in policies:
        rs = [r for r in recs if r["policy"] == p]
        obj = [r["objective"] for r in rs]
        rows.append({"policy": p, "cost": float(np.mean(obj)), "std": float(np.std(obj, ddof=1)) if len(obj) > 1
                     else 0.0, "latency": _mean(rs, "latency_cost"), "bandwidth": _mean(rs, "bandwidth_cost"),
                     "mean_latency": _mean(rs, "mean_latency_slots"), "at_ceiling": _mean(rs, "at_ceiling"),
                     "jobs": _mean(rs, "jobs")})
    best = min(rows, key=lambda r: r["cost"])
    for r in rows:
        r["ratio"] = r["cost"] / best["cost"]
    by = {r["policy"]: r for r in rows}
    extremes = {p: by[p]["ratio"] - 1.0 for p in BANDWIDTH_ONLY + LATENCY_ONLY if p in by}
    share = best["at_ceiling"] / best["jobs"]
    check = {"best": best["policy"], "extremes": extremes, "best_share_at_ceiling": share,
             "holds": (len(extremes) == len(BANDWIDTH_ONLY + LATENCY_ONLY)
                       and all(v >= MARGIN for v in extremes.values()) and share < 0.5)}
    return rows, check


def render(title: str, rows: list[dict], check: dict, n_seeds: int) -> str:
    """The Markdown table of one level and its trade-off check."""
    out = [f"### {title}", "",
           "| policy | total cost | ratio to best | latency cost | bandwidth cost | mean latency (slots) "
           "| jobs at ≥ 90 % of ceiling |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: r["cost"]):
        ceil = "n/a" if math.isnan(r["at_ceiling"]) else f"{r['at_ceiling']:.1f} / {r['jobs']:.0f}"
        out.append(f"| {r['policy']} | {r['cost']:,.0f} ± {r['std']:,.0f} | {r['ratio']:.3f} | {r['latency']:,.0f} "
                   f"| {r['bandwidth']:,.0f} | {r['mean_latency']:.1f} | {ceil} |")
    missing = [p for p in BANDWIDTH_ONLY + LATENCY_ONLY if p not in check["extremes"]]
    if missing:
        return "\n".join(out + ["", f"Trade-off: not checked ({', '.join(missing)} not run).", ""])
    ext = ", ".join(f"{p} +{100 * v:.1f} %" for p, v in check["extremes"].items())
    share = check["best_share_at_ceiling"]
    share_txt = "n/a (no ceiling)" if math.isnan(share) else f"{100 * share:.1f} % of its jobs"
    out += ["", f"Trade-off ({n_seeds} seed{'s' if n_seeds > 1 else ''}): best `{check['best']}`; extremes above it: {ext} "
                f"(each must be ≥ +{100 * MARGIN:.0f} %); at ≥ 90 % of the ceiling under the best: {share_txt} "
                f"(must be < 50 %): **{'holds' if check['holds'] else 'does not hold'}**.", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    from edgegym.agents.options import parse_seeds  # one seed grammar for the CLI and the scripts

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="WirelessUDL-v0", help="a WirelessUDL env id (default: WirelessUDL-v0)")
    ap.add_argument("--seeds", nargs="+", default=[f"{SEEDS[0]}-{SEEDS[-1]}"], help="seeds: 100 101, 100,101 or "
                                                                                      "100-104 (default 100-104)")
    ap.add_argument("--policies", nargs="+", help="policy names, rollout:<base> or a saved agent <algo>:PATH "
                                                  "(default: every registered WirelessUDL policy)")
    ap.add_argument("--env-config", default=None, help="preset overrides as inline JSON, e.g. "
                                                        "'{\"jobs\": {\"count\": 30}}'")
    ap.add_argument("--sweep", action="store_true", help="one table per ceiling level of the grid (LEVELS)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--quick", action="store_true", help="smoke run: the first seed only, 20 jobs over 30 slots")
    args = ap.parse_args(argv)

    from edgegym.agents.registry import policy_names
    from edgegym.agents.runner import env_family

    import edgegym  # noqa: F401

    if env_family(args.env) != "WirelessUDL":
        ap.error(f"--env {args.env}: not a WirelessUDL id")
    try:
        base = json.loads(args.env_config) if args.env_config else {}
    except json.JSONDecodeError as e:
        ap.error(f"--env-config: not JSON ({e})")
    if not isinstance(base, dict):
        ap.error(f"--env-config: expected a JSON object, got {args.env_config!r}")
    known = policy_names("WirelessUDL")
    policies = args.policies or known
    for p in policies:
        if p not in known and ":" not in p:
            ap.error(f"--policies: unknown WirelessUDL policy {p!r} (valid: {', '.join(known)}, rollout:<base>, "
                     f"a saved agent <algo>:PATH)")
    seeds = parse_seeds(args.seeds)
    if args.quick:
        seeds = seeds[:1]
        base = {**base, "jobs": {**base.get("jobs", {}), **QUICK_JOBS}}
    levels = LEVELS if args.sweep else {"": None}
    tasks = []
    for name, b in levels.items():
        cfg = base if b is None else {**base, "jobs": {**base.get("jobs", {}), "logistic_b": list(b)}}
        tasks += [{"env": args.env, "policy": p, "seed": s, "config": cfg, "level": name}
                  for p in policies for s in seeds]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as ex:
        recs = list(ex.map(run_one, tasks))
    wall = time.perf_counter() - t0
    contiguous = len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1))
    seed_txt = f"{seeds[0]}-{seeds[-1]}" if contiguous else ", ".join(map(str, seeds))
    print(f"## WirelessUDL latency/bandwidth trade-off on `{args.env}`, seeds {seed_txt}\n")
    holds = {}
    for name, b in levels.items():
        rows, check = summarise([r for r in recs if r["level"] == name], policies)
        holds[name] = check["holds"]
        title = f"`{args.env}`" if b is None else f"ceiling {name}: `jobs.logistic_b` = [{b[0]:g}, {b[1]:g}]"
        print(render(title, rows, check, len(seeds)))
    if args.sweep:
        print("Levels where the trade-off holds: " + (", ".join(n for n, h in holds.items() if h) or "none") + "\n")
    cpu = sum(r["cpu_s"] for r in recs)
    print(f"{len(recs)} episodes, {cpu:.1f} CPU-s in {max(1, args.workers)} worker processes "
          f"(time.process_time), {wall:.1f} s wall.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
