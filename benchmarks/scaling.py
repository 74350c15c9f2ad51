"""Scaling of the EdgeCloudML simulator under A_online on the Philly trace: time vs jobs at fixed load, time vs
edge servers at fixed jobs and load. Prints two tables and draws a PNG.

Usage::

    python benchmarks/scaling.py [--jobs 1000 5000 20000 80000] [--servers 25 50 100 200 400]
                                 [--servers-jobs 5000] [--load 1.0] [--path compiled|env]
                                 [--png docs/results/performance/scaling.png]
    python benchmarks/scaling.py --quick     # 1k/5k jobs, 25/100 servers (a smoke run)
    python benchmarks/scaling.py --replot docs/results/performance/scaling.csv   # redraw the PNG only

Each point is one replay of the first N Philly jobs (``benchmarks/replay_philly.py``: the sim100 cluster, the
trace's arrival pattern stretched to the offered edge load ``--load``, the env's ``keep_schedule=False``; with
``--path compiled``, the default, A_online's placements in the simulator's compiled loop, with ``--path env`` one
env step per job through the action space: the same placements and objective), timed
from the first step to the end of the drain (the build is excluded), in wall and in CPU time of the process (they
differ on a shared machine); the peak resident memory is the process's, the build included.
"Time per job flat" means the per-job time does not grow with the number of jobs that came before. The measured
points are written beside the PNG as a CSV (``scaling.csv``); ``--replot CSV`` redraws the PNG from one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay_philly import replay  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, nargs="*", default=[1000, 5000, 20000, 80000])
    ap.add_argument("--servers", type=int, nargs="*", default=[25, 50, 100, 200, 400])
    ap.add_argument("--servers-jobs", type=int, default=5000, help="jobs of the time-vs-servers series")
    ap.add_argument("--load", type=float, default=1.0)
    ap.add_argument("--png", default="docs/results/performance/scaling.png", help="'' to skip the plot")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--path", choices=("compiled", "env"), default="compiled",
                    help="compiled: A_online in the simulator's compiled loop (default); env: one env step per job")
    ap.add_argument("--replot", metavar="CSV", help="only redraw the PNG from the rows CSV of an earlier run "
                    "(written beside the PNG, e.g. docs/results/performance/scaling.csv)")
    args = ap.parse_args()
    if args.replot:
        by_jobs, by_srv = read_rows(Path(args.replot))
        plot_scaling(by_jobs, by_srv, args.load, int(by_srv[0]["jobs"]) if by_srv else args.servers_jobs,
                     Path(args.png))
        print(f"wrote {args.png}")
        return
    if args.quick:
        args.jobs, args.servers, args.servers_jobs = [1000, 5000], [25, 100], 1000
    by_jobs = []
    print(f"time vs jobs (100 edge servers, offered edge load {args.load}, {args.path} path)")
    print(f"{'jobs':>7} {'chunks':>9} {'replay s':>9} {'CPU s':>7} {'us/job':>8} {'CPU us/job':>10} {'jobs/s':>8} "
          f"{'peak RSS MB':>12}")
    for n in args.jobs:
        r = replay(n, 100, args.load, path=args.path)
        by_jobs.append(r)
        print(f"{r['jobs']:>7} {r['chunks']:>9} {r['replay_s']:>9.2f} {r['replay_cpu_s']:>7.2f} "
              f"{1e6 * r['replay_s'] / r['jobs']:>8.0f} {1e6 * r['replay_cpu_s'] / r['jobs']:>10.0f} "
              f"{r['jobs'] / r['replay_s']:>8.0f} {r['peak_rss_mb']:>12.0f}", flush=True)
    by_srv = []
    print(f"\ntime vs edge servers ({args.servers_jobs} jobs, offered edge load {args.load}, {args.path} path)")
    print(f"{'servers':>7} {'workers':>8} {'replay s':>9} {'CPU s':>7} {'us/job':>8} {'CPU us/job':>10} {'jobs/s':>8}")
    for s in args.servers:
        r = replay(args.servers_jobs, s, args.load, path=args.path)
        by_srv.append(r)
        print(f"{s:>7} {r['workers']:>8} {r['replay_s']:>9.2f} {r['replay_cpu_s']:>7.2f} "
              f"{1e6 * r['replay_s'] / r['jobs']:>8.0f} {1e6 * r['replay_cpu_s'] / r['jobs']:>10.0f} "
              f"{r['jobs'] / r['replay_s']:>8.0f}", flush=True)
    if args.png:
        png = Path(args.png)
        write_rows(by_jobs, by_srv, png.with_suffix(".csv"))
        plot_scaling(by_jobs, by_srv, args.load, args.servers_jobs, png)
        print(f"\nwrote {png} and {png.with_suffix('.csv').name}")


#: columns of the rows CSV written beside the PNG (what --replot reads)
ROW_COLUMNS = ("series", "jobs", "servers", "workers", "replay_s", "replay_cpu_s")


def write_rows(by_jobs: list[dict], by_srv: list[dict], path: Path) -> None:
    """The measured points of both series as a CSV (``series`` is ``jobs`` or ``servers``)."""
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(ROW_COLUMNS)
        for series, rows in (("jobs", by_jobs), ("servers", by_srv)):
            for r in rows:
                w.writerow([series, *(r[c] for c in ROW_COLUMNS[1:])])


def read_rows(path: Path) -> tuple[list[dict], list[dict]]:
    """The two series from a CSV written by :func:`write_rows`."""
    import csv

    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    missing = [c for c in ROW_COLUMNS if rows and c not in rows[0]]
    if not rows or missing:
        raise SystemExit(f"scaling.py: error: {path.name} has no rows or lacks the columns {missing}")
    conv = [{k: (v if k == "series" else float(v)) for k, v in r.items() if k in ROW_COLUMNS} for r in rows]
    return [r for r in conv if r["series"] == "jobs"], [r for r in conv if r["series"] == "servers"]


def plot_scaling(by_jobs: list[dict], by_srv: list[dict], load: float, servers_jobs: int, png: Path) -> None:
    """Time per job (wall and CPU) vs jobs and vs edge workers; saved through
    :func:`edgegym.core.figures.save_figure` (labels with units, a legend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.ticker
    from matplotlib.figure import Figure

    from edgegym.core.figures import save_figure

    fig = Figure(figsize=(10, 4), dpi=100)
    ax = fig.subplots(1, 2)
    for a, rows, x in ((ax[0], by_jobs, "jobs"), (ax[1], by_srv, "workers")):
        xs = [r[x] for r in rows]
        a.plot(xs, [1e6 * r["replay_s"] / r["jobs"] for r in rows], "o-", label="wall-clock time")
        a.plot(xs, [1e6 * r["replay_cpu_s"] / r["jobs"] for r in rows], "s--", label="CPU time of the process")
        a.legend(fontsize=8)
        a.set_xscale("log")
        a.set_ylim(bottom=0)
        a.set_ylabel("time per job (µs; step + drain)")
        a.grid(alpha=0.3)
    ax[0].set_xlabel("jobs (count, log axis; Philly, in trace order)")
    ax[0].set_title(f"time per job vs jobs (100 edge servers, load {load:g})", fontsize=10)
    ax[1].set_xlabel("edge workers (count, log axis)")
    ax[1].set_title(f"time per job vs cluster size ({servers_jobs:g} jobs)", fontsize=10)
    ax[1].set_xticks([r["workers"] for r in by_srv], [f"{r['workers']:g}" for r in by_srv], minor=False)
    ax[1].xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, png)


if __name__ == "__main__":
    main()
