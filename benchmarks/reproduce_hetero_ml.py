"""Reproduce the evaluation of Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed Machine
Learning Jobs" (IEEE TCC 2023): A_online vs FIFO, DRF, AntMan, Tiresias (Sec. 7, Figs. 2-12) on the HeteroML family.

One command regenerates ``docs/results/reproduce_hetero_ml.md`` and the plots / CSV under ``docs/results/reproduce_hetero_ml/``::

    python benchmarks/reproduce_hetero_ml.py --out docs/results     # full run (writes the tracked report)
    python benchmarks/reproduce_hetero_ml.py --quick                # fewer sweep points (closing tables: --seeds 5)

Experiments:

* the closing tables: every policy (reference, baselines, trivial) on the calibrated defaults ``HeteroML-v0`` (PS)
  and ``HeteroML-ra-v0`` (RA) and on the paper-literal presets ``HeteroML-ps-paper-literal-v0`` and
  ``HeteroML-ra-paper-literal-v0``, through the shared runner, 5 seeds (3 with --quick): Σ w_j c_j, ratio to the
  simple lower bound (valid for every policy), offered load, decisions/s;
* the paper's figures, on the paper-literal presets (the paper's own reading, with A_online's batch forms):
* Figs. 2/5: objective vs number of jobs (T = 300, capacity fixed at kappa = 0.5 for J = 100), one seed per point;
* Figs. 3/6: objective vs number of servers H (total capacity fixed);
* Fig. 4: A_online's objective vs F; Fig. 11: A_maxweight's scheduled weight vs F;
* Fig. 7: A_online's running time vs J (PS and RA) at H = 150, T = 300, against the paper's "< 2 minutes";
* Fig. 8: A_maxweight vs Jain et al.'s greedy (one batch, deadline 150, empty cluster); Fig. 12: vs H and J;
* Fig. 9: forced worker types vs free choice; Fig. 10: objective vs the maximum number of workers;
* extra: offered load (kappa) sweep; the LP lower bound (HiGHS) and A_online / LP on the small presets.

A_online runs in its faithful form (offsets alpha tau_i, the paper's algorithm) and eager form (offsets tau_i, ledger
prices; batch form, exact) in the sweeps, through the batch implementation (identical schedules to the env policy,
tested); the baselines run in the env.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import json
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MAIN_POLICIES = ["aonline-hetero-now", "aonline-hetero", "aonline-hetero-eager", "fifo", "drf", "drf-static", "antman", "tiresias",
                 "tiresias-las", "random", "earliest", "single-worker"]
SWEEP_ENV = ["fifo", "drf", "antman", "tiresias", "random"]
BATCH = {"A_online (faithful)": "faithful", "A_online (eager, batch)": "eager"}
FIG9_TYPES = ["p3.4xlarge", "p2.2xlarge", "p3.2xlarge", "p2.xlarge"]
PAPER_MATLAB_S = 120.0
BOUNDS_NOTE = (
    "Bounds, and which policies each bounds. The simple LB Σ_j w_j (a_j + shortest standalone duration) ignores "
    "capacity: it bounds **every** policy, the elastic DRF and the preemptive AntMan and Tiresias included. The LP "
    "bound (HiGHS, small presets only) relaxes the paper's program (2)/(15), whose schedules are non-preemptive with "
    "a fixed worker count: it bounds the policies that commit one fixed plan per job (A_online in every form, FIFO, "
    "`drf-static`, the trivial policies, learned agents), **not** DRF, AntMan or Tiresias.\n"
)


# ----------------------------------------------------------------------------------------------------------------
# one task


def _preset(arch: str, overrides: dict):
    from edgegym.families.hetero_ml.presets import load_preset

    p = load_preset("ps-paper-literal" if arch == "ps" else "ra-paper-literal")
    return p.replace(**overrides) if overrides else p


def run_task(t: dict) -> dict:
    kind = t["kind"]
    out = {k: v for k, v in t.items() if k not in ("overrides",)}
    if kind == "env":
        from edgegym.agents.runner import run_episode

        env_id = t.get("env") or ("HeteroML-ps-paper-literal-v0" if t["arch"] == "ps" else "HeteroML-ra-paper-literal-v0")
        rec = run_episode(env_id, t["policy"], t["seed"], t.get("overrides") or None)
        out.update(objective=rec["objective"], lower_bound=rec["lower_bound"], wall_s=rec["wall_s"],
                   decisions_per_s=rec["decisions_per_s"], frac_after_T=rec["frac_after_T"],
                   offered_load=rec["offered_load"], makespan=rec["makespan"])
        return out
    from edgegym.agents.reference.hetero_ml import AOnlineParams, aonline_batch, jain_greedy, maxweight_once

    from edgegym.families.hetero_ml.bounds import simple_lower_bound
    from edgegym.families.hetero_ml.instance import build_instance
    from edgegym.families.hetero_ml.simulator import verify_schedule

    p = _preset(t["arch"], t.get("overrides") or {})
    inst = build_instance(p, np.random.default_rng(t["seed"]))
    par = AOnlineParams(alpha=p.aonline.alpha, F=p.aonline.F, horizon=p.workload.horizon_slots,
                        **t.get("params", {}))
    if kind == "batch":
        if "allow_names" in t:
            names = list(p.cluster.worker_types)
            par = dataclasses.replace(par, allow_types=tuple(names.index(n) for n in t["allow_names"]))
        t0 = time.perf_counter()
        res = aonline_batch(inst.cluster, inst.jobs, par, mode=t["mode"])
        dt = time.perf_counter() - t0
        obj = verify_schedule(inst.cluster, inst.jobs, res.placements)
        out.update(objective=obj, lower_bound=simple_lower_bound(inst.cluster, inst.jobs), wall_s=dt,
                   decisions_per_s=inst.jobs.num_jobs / dt, rounds=len(res.subrounds_used),
                   max_subrounds=max(res.subrounds_used.values()))
        return out
    if kind == "maxweight":
        tau = t["tau"]
        t0 = time.perf_counter()
        acc, _, _ = maxweight_once(inst.cluster, inst.jobs, par, tau)
        out.update(weight=sum(float(inst.jobs.weight[j]) for j, _ in acc), wall_s=time.perf_counter() - t0,
                   total_weight=float(inst.jobs.weight.sum()))
        if t.get("jain"):
            w, _ = jain_greedy(inst.cluster, inst.jobs, inst.ideal, tau)
            out["jain_weight"] = w
        return out
    if kind == "lp":
        from edgegym.agents.reference.hetero_ml import aonline_batch as ab

        from edgegym.families.hetero_ml.bounds import lp_lower_bound
        from edgegym.families.hetero_ml.presets import load_preset

        p = load_preset(t["preset"])
        inst = build_instance(p, np.random.default_rng(t["seed"]))
        par = AOnlineParams(horizon=p.workload.horizon_slots)
        res = {}
        for mode in ("faithful", "eager"):
            res[mode] = verify_schedule(inst.cluster, inst.jobs, ab(inst.cluster, inst.jobs, par, mode=mode).placements)
        lb = lp_lower_bound(inst.cluster, inst.jobs, upper_bound=min(res.values()))
        out.update(lp=lb, faithful=res["faithful"], eager=res["eager"], simple=simple_lower_bound(inst.cluster, inst.jobs))
        return out
    raise ValueError(kind)


# ----------------------------------------------------------------------------------------------------------------
# task lists


#: the closing tables: (env id, architecture, reading)
MAIN_ENVS = [("HeteroML-v0", "ps", "calibrated"), ("HeteroML-ps-paper-literal-v0", "ps", "paper-literal"),
             ("HeteroML-rl-v0", "ps", "calibrated, RL-sized: 20 servers, 50 jobs over 60 slots"),
             ("HeteroML-ra-v0", "ra", "calibrated"), ("HeteroML-ra-paper-literal-v0", "ra", "paper-literal")]


def tasks(quick: bool, main_seeds: int = 5, sweeps: bool = True) -> list[dict]:
    seeds5 = range(main_seeds)
    seeds = range(1)  # sweeps: one seed (the time budget of a ~15 min run on 2 cores)
    T = []
    slow = ["aonline-hetero-now", "aonline-hetero", "aonline-hetero-eager"]  # minutes per episode at H = 150
    order = [(e, [p for p in MAIN_POLICIES if p not in slow]) for e in MAIN_ENVS if e[0] != "HeteroML-rl-v0"]
    order = [(e, MAIN_POLICIES) for e in MAIN_ENVS if e[0] == "HeteroML-rl-v0"] + order
    order += [(e, [p]) for p in slow for e in MAIN_ENVS if e[0] != "HeteroML-rl-v0"]
    for (env_id, arch, reading), pols in order:  # cheap runs first: a partial run still has whole tables
        for pol in pols:
            for s in seeds5:
                T.append(dict(exp="main", kind="env", env=env_id, arch=arch, reading=reading, policy=pol, seed=s))
    if not sweeps:
        return T
    Js = [100] if quick else [100, 150, 200, 250]
    for arch in ("ps", "ra"):
        for J in Js:
            ov = {"workload": {"num_jobs": J, "horizon_slots": 300}, "cluster": {"kappa": 0.5, "calibration_jobs": 100}}
            for s in seeds:
                for pol in SWEEP_ENV:
                    T.append(dict(exp="jobs", kind="env", arch=arch, policy=pol, seed=s, x=J, overrides=ov))
                for name, mode in BATCH.items():
                    T.append(dict(exp="jobs", kind="batch", arch=arch, policy=name, mode=mode, seed=s, x=J, overrides=ov))
    Hs = [50, 150] if quick else [50, 150, 250]
    for arch in ("ps", "ra"):
        for H in Hs:
            ov = {"cluster": {"num_servers": H}}
            for s in seeds:
                for pol in ["fifo", "drf", "antman", "tiresias"]:
                    T.append(dict(exp="servers", kind="env", arch=arch, policy=pol, seed=s, x=H, overrides=ov))
                for name, mode in BATCH.items():
                    T.append(dict(exp="servers", kind="batch", arch=arch, policy=name, mode=mode, seed=s, x=H, overrides=ov))
                T.append(dict(exp="mw_servers", kind="maxweight", arch=arch, policy="A_maxweight", seed=s, x=H, tau=150,
                              overrides=ov))
    Fs = [1, 100] if quick else [1, 5, 10, 50, 100]
    for F in Fs:
        for s in seeds:
            ov = {"aonline": {"F": float(F)}}
            for name, mode in BATCH.items():
                T.append(dict(exp="F", kind="batch", arch="ps", policy=name, mode=mode, seed=s, x=F, overrides=ov))
            T.append(dict(exp="mw_F", kind="maxweight", arch="ps", policy="A_maxweight", seed=s, x=F, tau=150, overrides=ov))
    for arch in ("ps", "ra"):
        for J in ([100] if quick else [100, 200, 300]):
            ov = {"workload": {"num_jobs": J, "horizon_slots": 300}, "cluster": {"kappa": 0.5, "calibration_jobs": 100}}
            T.append(dict(exp="runtime", kind="batch", arch=arch, policy="A_online (faithful)", mode="faithful", seed=0,
                          x=J, overrides=ov))
    for J in ([50] if quick else [50, 100, 150]):
        for s in seeds:
            T.append(dict(exp="jain", kind="maxweight", arch="ps", policy="A_maxweight", seed=s, x=J, tau=150, jain=True,
                          overrides={"workload": {"num_jobs": J}}))
    for arch in ("ps", "ra"):
        for forced in [None, *(FIG9_TYPES[:1] if quick else FIG9_TYPES)]:
            for s in seeds:
                for name, mode in BATCH.items():
                    d = dict(exp="types", kind="batch", arch=arch, policy=name, mode=mode, seed=s, x=forced or "free choice")
                    if forced:
                        d["allow_names"] = [forced]
                    T.append(d)
    for N in ([1, 50] if quick else [1, 5, 10, 30, 50]):
        for s in seeds:
            for name, mode in BATCH.items():
                T.append(dict(exp="workers", kind="batch", arch="ps", policy=name, mode=mode, seed=s, x=N,
                              params={"max_workers": N}))
    for kappa in ([0.35] if quick else [0.05, 0.1, 0.2, 0.35]):
        ov = {"cluster": {"kappa": kappa}}
        for s in seeds:
            for pol in SWEEP_ENV:
                T.append(dict(exp="load", kind="env", arch="ps", policy=pol, seed=s, x=kappa, overrides=ov))
            for name, mode in BATCH.items():
                T.append(dict(exp="load", kind="batch", arch="ps", policy=name, mode=mode, seed=s, x=kappa, overrides=ov))
    for preset in ("tiny", "tiny-ra"):
        for s in (range(1) if quick else range(4)):
            T.append(dict(exp="lp", kind="lp", arch=preset, preset=preset, policy="A_online", seed=s))
    return T


# ----------------------------------------------------------------------------------------------------------------
# report


def fmt(mean, std=None):
    def g(v):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.4g}".replace("e+0", "e").replace("e+", "e")

    return g(mean) if std is None or not np.isfinite(std) else f"{g(mean)} ± {g(std)}"


def agg(df, by, col):
    g = df.groupby(by)[col]
    return g.mean(), g.std(ddof=0)


XLABELS = {"jobs": "number of jobs J (count)", "servers": "number of servers H (count)", "F": "F (ratio)",
           "workers": "maximum workers per job (count)", "load": "kappa: capacity / per-slot ideal demand (ratio)",
           "mw_F": "F (ratio)", "mw_servers": "number of servers H (count)", "jain": "number of jobs J (count)"}


def plot_sweep(df, exp, arch, ylab, path, col="objective", logy=True):
    """One sweep's figure, saved through edgegym.core.figures.save_figure (axis labels with units, a legend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from edgegym.core.figures import save_figure

    d = df[(df.exp == exp) & (df.arch == arch)]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=90)
    for pol, g in d.groupby("policy"):
        m = g.groupby("x")[col].mean()
        ax.plot(m.index, m.values, marker="o", label=pol)
    ax.set_xlabel(XLABELS.get(exp, exp))
    ax.set_ylabel(ylab)
    if logy:
        ax.set_yscale("log")
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def sweep_table(df, exp, arch, col="objective"):
    d = df[(df.exp == exp) & (df.arch == arch)]
    xs = sorted(d.x.unique(), key=lambda v: (isinstance(v, str), v))
    pols = list(dict.fromkeys(d.policy))
    lines = ["| policy | " + " | ".join(str(x) for x in xs) + " |", "|---|" + "---|" * len(xs)]
    for pol in pols:
        cells = []
        for x in xs:
            v = d[(d.policy == pol) & (d.x == x)][col]
            cells.append(fmt(v.mean(), v.std(ddof=0)) if len(v) else "")
        lines.append(f"| {pol} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(df: pd.DataFrame, out: Path, quick: bool, wall: float) -> str:
    figdir = out / "reproduce_hetero_ml"
    figdir.mkdir(parents=True, exist_ok=True)
    df.to_csv(figdir / "results.csv", index=False)
    L = []
    L.append("# Zhou et al., heterogeneous distributed ML jobs (A_online): reproduction on `HeteroML`\n")
    L.append(
        "Paper: R. Zhou, J. Pang, Q. Zhang, C. Wu, L. Jiao, Y. Zhong, Z. Li, \"Online Scheduling Algorithm for "
        "Heterogeneous Distributed Machine Learning Jobs\", IEEE Transactions on Cloud Computing 11(2), 2023. The paper "
        "gives no figure values (its plots are images without readable ticks): every target below is one of its "
        "textual claims (Sec. 7).\n"
    )
    L.append(f"Regenerate: `python benchmarks/reproduce_hetero_ml.py --out docs/results{' --quick' if quick else ''}`; "
             + (f"{len(df)} runs, {wall / 60:.1f} min on 2 shared cores. " if wall > 0 else
                f"{len(df)} runs (this report was rebuilt with `--from-csv` from the runs' results). ")
             + "Objective = Σ_j w_j c_j (total weighted "
             "completion time, weight × slots); mean ± std over seeds.\n")
    L.append(BOUNDS_NOTE)
    L.append("Policies. `aonline-hetero-now` (the family's default policy) is the practical variant: A_maxweight's "
             "priced minimum-cost choice (Alg. 3 with Algs. 4-7) made at each arrival, windows starting at the "
             "arrival, the earliest-completing admissible schedule, no batching and no α τ_i offset; it has no "
             "competitive guarantee. `aonline-hetero` is the paper's A_online (Alg. 1, sub-round offsets α τ_i, fresh "
             "prices, α = 4, F = 10; 4α-competitive under the paper's assumptions (Thm. 5), not in this regime). "
             "`aonline-hetero-eager` starts each round at τ_i with prices from the committed schedule. Baselines "
             "(Sec. 7): `fifo`, `drf` (elastic), `antman`, `tiresias` (preemptive), with `drf-static` and "
             "`tiresias-las` options. Trivial policies: `random` (uniform masked grid action), `earliest` (the grid "
             "action with the earliest completion), `single-worker` (one worker of the fastest type, co-located).\n")
    # main table
    m = df[df.exp == "main"].copy()
    m["ratio_lb"] = m.objective / m.lower_bound
    claims = {}
    L.append("## Closing tables (mean ± std over the seeds listed in each row)\n")
    L.append("`/ simple LB`: the ratio to Σ_j w_j (a_j + shortest standalone duration), a lower bound valid for "
             "**every** policy (the elastic and preemptive DRF, AntMan and Tiresias included). Offered load (below "
             "each table): the jobs' ideal resource-time over the capacity of the horizon. `after T`: the fraction "
             "of jobs completing after the horizon T. `decisions/s`: policy decisions per second (the slot-driver "
             "baselines decide at reset, so theirs is not comparable). A policy missing from a table was not run "
             "to the end in this report's run.\n")
    for env_id, arch, reading in MAIN_ENVS:
        d = m[m.env == env_id]
        if d.empty:
            continue
        L.append(f"### `{env_id}` ({'PS' if arch == 'ps' else 'Ring-AllReduce'}, {reading})\n")
        L.append("| policy | seeds | Σ w_j c_j | / simple LB (all policies) | after T | makespan (slots) | decisions/s |\n"
                 "|---|---|---|---|---|---|---|")
        rows = []
        for pol, g in d.groupby("policy", sort=False):
            rows.append((g.objective.mean(), pol, g))
        for _, pol, g in sorted(rows, key=lambda r: r[0]):
            L.append(f"| `{pol}` | {', '.join(map(str, sorted(g.seed.unique())))} | "
                     f"{fmt(g.objective.mean(), g.objective.std(ddof=0))} | "
                     f"{fmt(g.ratio_lb.mean(), g.ratio_lb.std(ddof=0))} | "
                     f"{fmt(g.frac_after_T.mean())} | {fmt(g.makespan.mean())} | {fmt(g.decisions_per_s.mean())} |")
        L.append(f"\nOffered load: {fmt(d.offered_load.mean(), d.offered_load.std(ddof=0))} "
                 f"(mean ± std over the seeds).\n")
        base = ("fifo", "drf", "antman", "tiresias")
        for pol in ("aonline-hetero-now", "aonline-hetero", "aonline-hetero-eager"):
            seeds_ = set(d[d.policy == pol].seed)  # like for like: the baselines on the same seeds
            same = d[d.seed.isin(seeds_)]
            best_base = min((same[same.policy == p].objective.mean() for p in base), default=float("nan"))
            claims[(env_id, pol)] = 1 - d[d.policy == pol].objective.mean() / best_base if seeds_ else float("nan")
        order = d[d.policy.isin(base)].groupby("policy").objective.mean().sort_values()
        claims[(env_id, "order")] = list(order.index)
        claims[(env_id, "reading")] = reading
    # sweeps
    sections = [
        ("jobs", "Figs. 2 and 5: objective vs number of jobs (T = 300, capacity fixed: kappa = 0.5 at J = 100)"),
        ("servers", "Figs. 3 and 6: objective vs number of servers H (J = 150, total capacity fixed)"),
    ]
    if (df.exp != "main").any():
        L.append("## The paper's figures, on the paper-literal presets\n")
        L.append("Each sweep varies one key of `HeteroML-ps-paper-literal-v0` / `HeteroML-ra-paper-literal-v0` (the "
             "paper's own reading), one seed per point; A_online runs in its batch forms (identical schedules to the "
             "env policies, tested): `A_online (faithful)` (offsets α τ_i) and `A_online (eager, batch)` (offsets "
             "τ_i, prices from the committed schedule). Σ w_j c_j is in weight × slots.\n")
    for exp, title in sections:
        if not (df.exp == exp).any():
            continue
        L.append(f"## {title}\n")
        for arch in ("ps", "ra"):
            png = f"{exp}_{arch}.png"
            plot_sweep(df, exp, arch, "Σ w_j c_j (weight × slots)", figdir / png)
            L.append(f"**{arch.upper()}**\n\n" + sweep_table(df, exp, arch) + f"\n\n![{exp} {arch}](reproduce_hetero_ml/{png})\n")
    sweeps_present = (df.exp == "F").any()
    if sweeps_present:
        L.append("## Fig. 4: A_online's objective vs F (PS, paper-literal preset)\n")
        plot_sweep(df, "F", "ps", "Σ w_j c_j (weight × slots)", figdir / "F.png")
        L.append(sweep_table(df, "F", "ps") + "\n\n![F](reproduce_hetero_ml/F.png)\n")
        L.append("## Fig. 11 / Fig. 12: A_maxweight's scheduled weight (one call, deadline 150, empty cluster, all jobs)\n")
        plot_sweep(df, "mw_F", "ps", "scheduled weight (weight)", figdir / "mw_F.png", col="weight", logy=False)
        L.append("vs F (PS):\n\n" + sweep_table(df, "mw_F", "ps", "weight") + "\n\n![mwF](reproduce_hetero_ml/mw_F.png)\n")
        for arch in ("ps", "ra"):
            L.append(f"vs H ({arch.upper()}):\n\n" + sweep_table(df, "mw_servers", arch, "weight") + "\n")
        L.append("## Fig. 8: A_maxweight vs Jain et al.'s greedy (one batch, deadline 150, empty cluster, PS)\n")
        j = df[df.exp == "jain"]
        L.append("| J | A_maxweight | Jain et al. | total weight |\n|---|---|---|---|")
        for x, g in j.groupby("x"):
            L.append(f"| {x} | {fmt(g.weight.mean(), g.weight.std(ddof=0))} | {fmt(g.jain_weight.mean(), g.jain_weight.std(ddof=0))} | "
                     f"{fmt(g.total_weight.mean())} |")
        L.append("")
        L.append("## Fig. 7: A_online's running time (faithful, batch form, H = 150, T = 300, one seed)\n")
        r = df[df.exp == "runtime"]
        L.append("| J | PS (s) | RA (s) |\n|---|---|---|")
        for x, g in r.groupby("x"):
            ps_ = g[g.arch == "ps"].wall_s
            ra_ = g[g.arch == "ra"].wall_s
            L.append(f"| {x} | {fmt(ps_.mean()) if len(ps_) else ''} | {fmt(ra_.mean()) if len(ra_) else ''} |")
        L.append("")
        L.append("## Fig. 9: forced worker types vs free choice (paper-literal presets)\n")
        for arch in ("ps", "ra"):
            L.append(f"**{arch.upper()}**\n\n" + sweep_table(df, "types", arch) + "\n")
        L.append("## Fig. 10: objective vs the maximum number of workers per job (PS)\n")
        plot_sweep(df, "workers", "ps", "Σ w_j c_j (weight × slots)", figdir / "workers.png")
        L.append(sweep_table(df, "workers", "ps") + "\n\n![workers](reproduce_hetero_ml/workers.png)\n")
        L.append("## Extra: offered load (kappa = total capacity / total ideal demand of the calibration jobs), PS\n")
        plot_sweep(df, "load", "ps", "Σ w_j c_j (weight × slots)", figdir / "load.png")
        L.append(sweep_table(df, "load", "ps") + "\n\n![load](reproduce_hetero_ml/load.png)\n")
        L.append("## LP lower bound (HiGHS) on the small presets: A_online / LP\n")
        L.append("The LP bound relaxes the paper's program (2)/(15): non-preemptive schedules with a fixed worker count "
                 "per job. It bounds A_online (every form), FIFO, `drf-static`, `earliest`, `single-worker`, `random` and "
                 "learned agents (all commit one fixed plan per job), **not** the elastic or preemptive DRF, AntMan and "
                 "Tiresias; the simple LB bounds every policy.\n")
        lp = df[df.exp == "lp"]
        L.append("| preset | LP bound (non-preemptive, fixed N) | simple LB (all policies) | A_online faithful / LP | "
                 "A_online eager / LP | 4α |\n|---|---|---|---|---|---|")
        for pr, g in lp.groupby("preset"):
            L.append(f"| {pr} | {fmt(g.lp.mean(), g.lp.std(ddof=0))} | {fmt(g.simple.mean(), g.simple.std(ddof=0))} | "
                     f"{fmt((g.faithful / g.lp).mean(), (g.faithful / g.lp).std(ddof=0))} | "
                     f"{fmt((g.eager / g.lp).mean(), (g.eager / g.lp).std(ddof=0))} | 16 |")
        L.append("")
    # claims
    L.append("## Claims (Sec. 7)\n")

    def obj(exp, arch, pol):
        return df[(df.exp == exp) & (df.arch == arch) & (df.policy == pol)].groupby("x").objective.mean()

    def pct(g):
        return f"{100 * g:+.1f}%" if np.isfinite(g) else "not run"

    rows = []
    for env_id, arch, reading in MAIN_ENVS:
        if (env_id, "order") not in claims:
            continue
        g_n, g_f, g_e = (claims[(env_id, p)] for p in ("aonline-hetero-now", "aonline-hetero", "aonline-hetero-eager"))
        if not any(np.isfinite([g_n, g_f, g_e])):
            continue  # no A_online form was run to the end on this preset
        rows.append((f"(a) A_online ≥ 30% better than min(FIFO, DRF, AntMan, Tiresias), `{env_id}`",
                     "reproduced" if np.isfinite(g_f) and g_f >= 0.3 else
                     "by the practical variant only (not the paper's algorithm)" if np.nanmax([g_n, g_f, g_e]) >= 0.3
                     else "not reproduced",
                     f"practical (`aonline-hetero-now`): {pct(g_n)}, faithful: {pct(g_f)}, eager: "
                     f"{pct(g_e)} (positive = better; each against the baselines on its own seeds). The faithful form starts every job no earlier than α τ_i "
                     "of its round (Alg. 1: the batch of round i runs in [α τ_i, α τ_{i+1})), so "
                     "c_j ≥ α max(τ(a_j), L_j + 1) + L_j against a bound of a_j + L_j: its ratio to the bound follows "
                     "α (α = 4 here), not the prices."))
        d = m[m.env == env_id]
        refs = ("aonline-hetero-now", "aonline-hetero", "aonline-hetero-eager", "fifo", "drf", "antman", "tiresias")
        parts = []
        for triv in ("random", "single-worker", "earliest"):
            t_ = d[d.policy == triv]
            cand = {}
            for p_ in refs:  # each reference against the trivial policy on their common seeds
                g_ = d[d.policy == p_]
                common = set(g_.seed) & set(t_.seed)
                if common:
                    cand[p_] = (t_[t_.seed.isin(common)].objective.mean() / g_[g_.seed.isin(common)].objective.mean()
                                - 1, len(common))
            if not cand:
                continue
            bp = max(cand, key=lambda k: cand[k][0])  # the best reference: the trivial policy lags it most
            parts.append((triv, cand[bp][0], f"{bp}` ({cand[bp][1]} seeds)"))
        if parts:
            rows.append((f"Benchmark check: no trivial policy within 2% of the best reference or baseline, `{env_id}`",
                         "holds" if all(x > 0.02 for _, x, _ in parts) else "fails",
                         "; ".join(f"`{t}` {100 * x:+.1f}% vs `{b}" for t, x, b in parts)
                         + " (on common seeds; positive = the trivial policy is worse)"))
        order = claims[(env_id, "order")]
        rows.append((f"(b) AntMan and Tiresias worst among the baselines, `{env_id}`",
                     "reproduced" if set(order[-2:]) == {"antman", "tiresias"} else "not reproduced",
                     f"baselines from best to worst: {', '.join(order)}; our AntMan/Tiresias pay o_pre = 0.25 slot per "
                     "resume"))
    if sweeps_present:
        jf = obj("jobs", "ps", "A_online (faithful)")
        rows.append(("(c) objective grows with J (Fig. 2)", "reproduced" if jf.is_monotonic_increasing else "not reproduced",
                     "A_online faithful, PS: " + ", ".join(f"{k}: {fmt(v)}" for k, v in jf.items())))
        hf = obj("servers", "ps", "A_online (faithful)")
        rows.append(("(c) objective may grow with H at fixed total capacity (Fig. 3)",
                     "reproduced" if hf.iloc[-1] >= hf.iloc[0] else "not reproduced",
                     "A_online faithful, PS: " + ", ".join(f"{k}: {fmt(v)}" for k, v in hf.items())))
        ff = obj("F", "ps", "A_online (faithful)")
        rows.append(("(c) A_online's objective non-decreasing in F (Fig. 4)",
                     "reproduced" if ff.is_monotonic_increasing else "not reproduced",
                     ", ".join(f"F={k}: {fmt(v)}" for k, v in ff.items())))
        mwf = df[df.exp == "mw_F"].groupby("x").weight.mean()
        rows.append(("(c) A_maxweight's weight non-increasing in F (Fig. 11)",
                     "reproduced" if mwf.is_monotonic_decreasing else "not reproduced",
                     ", ".join(f"F={k}: {fmt(v)}" for k, v in mwf.items())))
        mwh = df[(df.exp == "mw_servers") & (df.arch == "ps")].groupby("x").weight.mean()
        rows.append(("(c) A_maxweight's weight smaller for larger H (Fig. 12)",
                     "reproduced" if mwh.iloc[-1] <= mwh.iloc[0] else "not reproduced",
                     ", ".join(f"H={k}: {fmt(v)}" for k, v in mwh.items())))
        wf = obj("workers", "ps", "A_online (eager, batch)")
        rows.append(("(c) objective decreases as the number of workers grows (Fig. 10)",
                     "reproduced" if wf.iloc[-1] <= wf.iloc[0] else "not reproduced",
                     "A_online eager, PS: " + ", ".join(f"N≤{k}: {fmt(v)}" for k, v in wf.items())))
        jj = df[df.exp == "jain"].groupby("x")[["weight", "jain_weight"]].mean()
        rows.append(("(d) A_maxweight schedules more weight than Jain et al. (Fig. 8)",
                     "reproduced" if (jj.weight >= jj.jain_weight).all() else "not reproduced",
                     ", ".join(f"J={k}: {fmt(a)} vs {fmt(b)}" for k, (a, b) in jj.iterrows())))
        ty = df[(df.exp == "types") & (df.policy == "A_online (faithful)")]
        free_best = all(
            ty[(ty.arch == a) & (ty.x == "free choice")].objective.mean() <= ty[(ty.arch == a) & (ty.x != "free choice")].groupby("x").objective.mean().min()
            for a in ("ps", "ra"))
        rows.append(("Fig. 9: free choice of worker type smallest", "reproduced" if free_best else "not reproduced",
                     "A_online faithful, PS and RA (table above)"))
        rt = df[(df.exp == "runtime") & (df.x == df[df.exp == "runtime"].x.max())]
        tmax = rt.wall_s.max()
        rows.append(("(e) running time < 2 min at the largest setting (MATLAB); goal 100x faster",
                     "reproduced" if tmax < PAPER_MATLAB_S else "not reproduced",
                     f"J = {int(rt.x.max())}, H = 150, T = 300: {fmt(tmax)} s (PS/RA max) = {PAPER_MATLAB_S / tmax:.0f}x faster "
                     "than the paper's 120 s bound (different machine and language: only the order of magnitude compares)"))
    L.append("| claim | status | numbers / reason |\n|---|---|---|")
    for i, (c, st, why) in enumerate(rows):
        trend = c.startswith("(c)")
        pts = why.count(":") - (1 if why.startswith("A_online") else 0)
        if trend and pts < 3:
            rows[i] = (c, "not attributable", why + " (fewer than 3 sweep points in this run: rerun without --quick)")
        if c.startswith("(e)") and "J = 300" not in why:
            rows[i] = (c, "not attributable", why + " (the largest J = 300 was not run: rerun without --quick)")
    for c, s, why in rows:
        L.append(f"| {c} | **{s}** | {why} |")
    L.append("")
    text = "\n".join(L) + "\n"
    (out / "reproduce_hetero_ml.md").write_text(text)
    return text


def _json_default(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(type(x).__name__)


def _num(v):
    try:
        f = float(v)
        return int(f) if f == int(f) else f
    except (TypeError, ValueError):
        return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="output folder (default: runs/reproduce_hetero_ml-<time>)")
    ap.add_argument("--quick", action="store_true", help="fewer sweep points")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..K-1 of the closing tables (default 5)")
    ap.add_argument("--no-sweeps", action="store_true", help="the closing tables only")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--from-csv", help="rebuild the report from a results.csv (or results.partial.jsonl) of an "
                    "earlier run (no simulation)")
    ap.add_argument("--in-order", action="store_true", help="run the tasks in list order (closing tables first)")
    ap.add_argument("--policies", help="comma-separated subset of the closing tables' policies")
    ap.add_argument("--envs", help="comma-separated subset of the closing tables' env ids")
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else ROOT / "runs" / f"reproduce_hetero_ml-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    if a.from_csv:
        df = pd.read_json(a.from_csv, lines=True) if a.from_csv.endswith(".jsonl") else pd.read_csv(a.from_csv)
        if "x" not in df:
            df["x"] = np.nan
        df["x"] = [(_num(v)) for v in df["x"]]
        report(df, out, a.quick, float(df.attrs.get("wall", 0.0)))
        print(f"wrote {out / 'reproduce_hetero_ml.md'} from {a.from_csv}")
        return
    T = tasks(a.quick, a.seeds, not a.no_sweeps)
    if a.policies:
        keep = set(a.policies.split(","))
        T = [t for t in T if t["exp"] != "main" or t["policy"] in keep]
    if a.envs:
        keep = set(a.envs.split(","))
        T = [t for t in T if t["exp"] != "main" or t["env"] in keep]
    t0 = time.time()
    # longest first for a better packing
    def weight(t):
        ov = t.get("overrides") or {}
        return (ov.get("workload", {}).get("num_jobs", 150) * ov.get("cluster", {}).get("num_servers", 150)
                * (2 if t.get("jain") or t["exp"] == "runtime" else 1) * (20 if t["policy"] == "aonline-hetero-now" else 1))

    order = sorted(range(len(T)), key=lambda i: -weight(T[i]))
    if a.in_order:  # the list order (closing tables first, the calibrated default first): partial results usable
        order = list(range(len(T)))
    part = out / "reproduce_hetero_ml" / "results.partial.jsonl"
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_text("")
    res = []
    with ProcessPoolExecutor(a.workers) as ex:
        futs = [ex.submit(run_task, T[i]) for i in order]
        for f in as_completed(futs):
            r = f.result()
            res.append(r)
            with part.open("a") as fh:  # every finished run at once (a report can be built from a partial run)
                fh.write(json.dumps(r, default=_json_default) + "\n")
    df = pd.DataFrame(res)
    report(df, out, a.quick, time.time() - t0)
    print(f"wrote {out / 'reproduce_hetero_ml.md'} ({len(df)} runs, {(time.time() - t0) / 60:.1f} min)")


if __name__ == "__main__":
    main()
