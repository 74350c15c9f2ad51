"""Scaling of the EdgeCloudML simulator under A_online on the Philly trace: time vs jobs at fixed load, time vs
edge servers at fixed jobs and load. Prints two tables and draws a PNG.

Usage::

    python benchmarks/scaling.py [--jobs 1000 5000 20000 80000] [--servers 25 50 100 200 400]
                                 [--servers-jobs 5000] [--load 1.0] [--png docs/results/performance/scaling.png]
    python benchmarks/scaling.py --quick     # 1k/5k jobs, 25/100 servers (a smoke run)

Each point is one replay of the first N Philly jobs (``benchmarks/replay_philly.py``: the sim100 cluster, the
trace's arrival pattern stretched to the offered edge load ``--load``), timed from the first step to the end
of the drain (the build is excluded), in wall and in CPU time of the process (they differ on a shared machine). "Time per job flat" means the per-job time does not grow with the
number of jobs that came before.
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
    args = ap.parse_args()
    if args.quick:
        args.jobs, args.servers, args.servers_jobs = [1000, 5000], [25, 100], 1000
    by_jobs = []
    print(f"time vs jobs (100 edge servers, offered edge load {args.load})")
    print(f"{'jobs':>7} {'chunks':>9} {'replay s':>9} {'CPU s':>7} {'us/job':>8} {'CPU us/job':>10} {'jobs/s':>8} "
          f"{'peak RSS MB':>12}")
    for n in args.jobs:
        r = replay(n, 100, args.load)
        by_jobs.append(r)
        print(f"{r['jobs']:>7} {r['chunks']:>9} {r['replay_s']:>9.2f} {r['replay_cpu_s']:>7.2f} "
              f"{1e6 * r['replay_s'] / r['jobs']:>8.0f} {1e6 * r['replay_cpu_s'] / r['jobs']:>10.0f} "
              f"{r['jobs'] / r['replay_s']:>8.0f} {r['peak_rss_mb']:>12.0f}", flush=True)
    by_srv = []
    print(f"\ntime vs edge servers ({args.servers_jobs} jobs, offered edge load {args.load})")
    print(f"{'servers':>7} {'workers':>8} {'replay s':>9} {'CPU s':>7} {'us/job':>8} {'CPU us/job':>10} {'jobs/s':>8}")
    for s in args.servers:
        r = replay(args.servers_jobs, s, args.load)
        by_srv.append(r)
        print(f"{s:>7} {r['workers']:>8} {r['replay_s']:>9.2f} {r['replay_cpu_s']:>7.2f} "
              f"{1e6 * r['replay_s'] / r['jobs']:>8.0f} {1e6 * r['replay_cpu_s'] / r['jobs']:>10.0f} "
              f"{r['jobs'] / r['replay_s']:>8.0f}", flush=True)
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker

        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        ax[0].plot([r["jobs"] for r in by_jobs], [1e6 * r["replay_s"] / r["jobs"] for r in by_jobs], "o-", label="wall")
        ax[0].plot([r["jobs"] for r in by_jobs], [1e6 * r["replay_cpu_s"] / r["jobs"] for r in by_jobs], "s--",
                   label="CPU")
        ax[0].legend()
        ax[0].set(xscale="log", xlabel="jobs (Philly, in trace order)", ylabel="µs per job (step + drain)",
                  title=f"time per job vs jobs (100 servers, load {args.load})")
        ax[0].set_ylim(bottom=0)
        ax[1].plot([r["workers"] for r in by_srv], [1e6 * r["replay_s"] / r["jobs"] for r in by_srv], "o-", label="wall")
        ax[1].plot([r["workers"] for r in by_srv], [1e6 * r["replay_cpu_s"] / r["jobs"] for r in by_srv], "s--",
                   label="CPU")
        ax[1].legend()
        ax[1].set(xscale="log", xlabel="edge workers", ylabel="µs per job",
                  title=f"time per job vs cluster size ({args.servers_jobs} jobs)")
        ax[1].set_ylim(bottom=0)
        ax[1].set_xticks([r["workers"] for r in by_srv], [str(r["workers"]) for r in by_srv], minor=False)
        ax[1].xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        fig.tight_layout()
        Path(args.png).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.png, dpi=100)
        print(f"\nwrote {args.png}")


if __name__ == "__main__":
    main()
