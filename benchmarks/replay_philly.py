"""Replay the Microsoft Philly trace (Pollux artifact copy, 82,247 jobs) through ``EdgeCloudML`` under A_online.

Usage::

    python benchmarks/replay_philly.py [--jobs N] [--cluster VC] [--servers 100] [--load 1.0] [--seed 0]
                                       [--path both|compiled|env] [--keep-schedule]

Every job of the trace (all virtual clusters merged, or one with ``--cluster``; the first ``--jobs`` with ``--jobs``)
arrives in trace order at one env step, and ``A_online`` (``A_greedy`` + ``A_ps``) places it through the env's action
space, exactly as ``edgegym run`` would (``--path env``), or is placed by A_greedy in the simulator's compiled loop
(``--path compiled``: ``PaperSimulator.place_greedy``, the same placements, completions and objective, tested);
the episode then drains (A_ps included). The default runs both, the env loop in a second process so that each
path's peak memory is its own. The cluster is the ``sim100`` cluster of Wang et al.,
"Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks", IEEE JSAC 2022 (§V-A)
(``--preset``: another EdgeCloudML preset's cluster and job model) (``--servers`` edge servers, Philly-like GPU counts,
8-10 worker types, a cloud); fields the trace lacks are sampled from the paper's ranges as in the shipped presets. The
trace's arrival pattern is kept and its time axis is scaled so that the offered edge load (the jobs' edge work Σ D_j·p_j
over the edge workers' capacity) is ``--load``: at the trace's own time scale a cluster sized to 82k jobs would need
~10^5 GPUs.

The env runs with ``keep_schedule=False``: the simulator keeps what the metrics and A_ps need (per job: completion,
placement counts, A_ps's running intervals; per chunk: the jobs still in the system) instead of the whole executed
schedule, so memory does not grow with the history; every decision and the objective are the same either way.
``--keep-schedule`` runs the env's default (the whole schedule kept, as rendering needs) for comparison.

Prints the build time, the replay time (every step + the drain; wall and CPU time of the process, which differ
when the machine is shared), jobs per second (wall), per-job microseconds, the
objective and the peak resident memory of the process. Needs the trace (``EDGEGYM_TRACE_DIR`` or the shared
traces folder).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(num_jobs: int | None, servers: int, load: float, cluster: str | None, seed: int, preset: str = "sim100"):
    """``(preset, cluster, jobs)`` of a Philly replay at offered edge load ``load`` (see the module docstring)."""
    from edgegym.families.edge_cloud.instance import build_instance
    from edgegym.families.edge_cloud.presets import load_preset
    from edgegym.families.edge_cloud.rates import chunk_time_slots, iteration_time_h
    from edgegym.workloads import load_philly

    n = len(load_philly(cluster=cluster)) if num_jobs is None else int(num_jobs)
    base = load_preset(preset)

    def instance(horizon: float):
        p = base.replace(
            cluster={"num_edge_servers": servers},
            workload={"source": "philly", "num_jobs": n, "window": 0, "horizon_slots": horizon,
                      "trace_cluster": cluster},
            env={"max_edge_servers": servers},
        )
        return (p, *build_instance(p, np.random.default_rng(seed)))

    p, cl, jobs = instance(1.0)  # same draws at any horizon: measure the edge work, then stretch the arrivals
    tau0 = iteration_time_h(jobs.minibatch_time_h, jobs.ps_update_ms, jobs.grad_size_mb, jobs.bandwidth_mbps, False)
    p0 = chunk_time_slots(jobs.epochs, jobs.batches_per_chunk, tau0, p.env.speed, p.env.slotted)
    work = float(np.sum(jobs.num_chunks * p0))
    horizon = work / (cl.num_workers * load)
    del p, cl, jobs, tau0, p0  # one job table at a time (its upload-delay table is jobs x servers)
    return instance(horizon)


def replay(num_jobs: int | None = None, servers: int = 100, load: float = 1.0, cluster: str | None = None,
           seed: int = 0, policy: str = "aonline", preset: str = "sim100", keep_schedule: bool = False,
           path: str = "env") -> dict:
    """Build and replay; returns timings (s), counts and the episode metrics. ``keep_schedule``: keep the executed
    schedule whole (the env's default; memory then grows with the history) instead of what the metrics need.
    ``path="env"``: ``policy`` through the env's action space, one ``step`` per job; ``"compiled"``: A_online's
    placements in the simulator's compiled loop (``policy`` must be ``aonline``; the env is built and reset the same
    way, then its simulator places every job and drains)."""
    from edgegym.agents.registry import make_policy

    from edgegym.families.edge_cloud.env import EdgeCloudMLEnv

    if path not in ("env", "compiled"):
        raise ValueError(f"path must be 'env' or 'compiled', got {path!r}")
    if path == "compiled" and policy != "aonline":
        raise ValueError(f"the compiled path runs A_online only, got policy {policy!r}")
    t0 = time.perf_counter()
    preset, cl, jobs = build(num_jobs, servers, load, cluster, seed, preset)
    env = EdgeCloudMLEnv(preset, instance=(cl, jobs), keep_schedule=keep_schedule)
    pol = make_policy(policy, env, seed)
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    t1 = time.perf_counter()
    c1 = time.process_time()
    done = False
    steps = 0
    info: dict = {}
    if path == "compiled":
        env.sim.place_greedy(order=env._order, cloud=env.use_cloud)
        outcome = env.sim.drain()
        m = {"objective": float(np.sum(outcome.completion_slots - jobs.arrival_slots))}
        m["avg_jct"] = m["objective"] / max(jobs.num_jobs, 1)
    while path == "env" and not done:
        action, _ = pol.predict(obs, deterministic=True)
        obs, _, done, _, info = env.step(action)
        steps += 1
    t2 = time.perf_counter()
    c2 = time.process_time()
    if path == "env":
        m = info["episode_metrics"]
    return {
        "jobs": jobs.num_jobs, "servers": servers, "workers": cl.num_workers, "chunks": int(jobs.num_chunks.sum()),
        "build_s": t1 - t0, "replay_s": t2 - t1, "replay_cpu_s": c2 - c1, "steps": steps, "objective": m["objective"],
        "avg_jct": m.get("avg_jct", float("nan")), "horizon_slots": float(jobs.arrival_slots[-1]),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=None, help="replay only the first N jobs (default: all)")
    ap.add_argument("--cluster", default=None, help="one Philly virtual cluster (default: all merged)")
    ap.add_argument("--servers", type=int, default=100, help="edge servers (default 100, as sim100)")
    ap.add_argument("--load", type=float, default=1.0, help="offered edge load (default 1.0)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--preset", default="sim100", help="EdgeCloudML preset of the cluster and job model (sim100)")
    ap.add_argument("--keep-schedule", action="store_true",
                    help="keep the whole executed schedule (the env's default; memory grows with the history)")
    ap.add_argument("--path", choices=("both", "compiled", "env"), default="both",
                    help="compiled: A_online in the simulator's compiled loop; env: one env step per job; both "
                         "(default): compiled here, then env in a second process")
    args = ap.parse_args()
    for path in ("compiled", "env") if args.path == "both" else (args.path,):
        if args.path == "both" and path == "env":  # its own process: its own peak memory
            sys.stdout.flush()
            cmd = [sys.executable, __file__, *sys.argv[1:], "--path", "env"]
            raise SystemExit(subprocess.call(cmd))
        r = replay(args.jobs, args.servers, args.load, args.cluster, args.seed, preset=args.preset,
                   keep_schedule=args.keep_schedule, path=path)
        what = ("A_online in the simulator's compiled loop" if path == "compiled"
                else "A_online through the env, one step per job")
        print(f"Philly replay, {what}: {r['jobs']} jobs ({r['chunks']} chunks), {r['servers']} edge servers "
              f"({r['workers']} workers) + cloud, offered edge load {args.load}, arrivals over "
              f"{r['horizon_slots']:.0f} slots; "
              f"{'whole schedule kept' if args.keep_schedule else 'history not kept (keep_schedule=False)'}")
        print(f"  build {r['build_s']:.1f} s | replay {r['replay_s']:.1f} s wall, {r['replay_cpu_s']:.1f} s CPU "
              f"({r['steps'] or r['jobs']} {'steps' if r['steps'] else 'jobs'} + drain) | "
              f"{r['jobs'] / r['replay_s']:.0f} jobs/s | {1e6 * r['replay_s'] / r['jobs']:.0f} us/job | "
              f"peak RSS {r['peak_rss_mb']:.0f} MB")
        print(f"  objective (total JCT, slots) {r['objective']:.6g} | avg JCT {r['avg_jct']:.4g} slots", flush=True)


if __name__ == "__main__":
    main()
