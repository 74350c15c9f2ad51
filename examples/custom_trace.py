"""Run an env on a real trace when it is present, and on your own CSV of jobs.

    python examples/custom_trace.py

Real traces are looked up in $EDGEGYM_TRACE_DIR (see docs/traces.md); they are not part of the repository.
A custom CSV needs a submission time, a duration and a GPU count per job; ``workload.columns`` maps the
canonical names (``submit_time_s``, ``duration_s``, ``num_gpus``, ...) to your column names.
"""

import tempfile
from pathlib import Path

import gymnasium as gym
import numpy as np
from edgegym.agents.runner import run_episode

import edgegym  # noqa: F401
from edgegym.workloads import load_csv, load_philly

# 1. the Philly trace, if it is installed (else say so and go on)
try:
    table = load_philly()
    print(f"Philly trace: {len(table)} jobs; columns {list(table.columns)[:6]} ...")
    rec = run_episode("EdgeCloudML-testbed-v0", "aonline", 0, {"workload": {"source": "philly"}})
    print(f"  A_online on a Philly window: total JCT {rec['objective']:.1f} h")
except FileNotFoundError as e:
    print(f"Philly trace not found ({str(e).splitlines()[0][:80]}...); set EDGEGYM_TRACE_DIR to use it")

# 2. your own jobs as a CSV (here written on the fly, in a temporary folder removed at the end)
rng = np.random.default_rng(0)
with tempfile.TemporaryDirectory() as folder:
    csv = Path(folder) / "my_jobs.csv"
    rows = ["arrival_min,runtime_min,gpus"] + [
        f"{t:.1f},{d:.1f},{g}" for t, d, g in zip(np.cumsum(rng.exponential(20, 40)), rng.uniform(30, 600, 40),
                                                    rng.choice([1, 2, 4, 8], 40), strict=True)
    ]
    csv.write_text("\n".join(rows) + "\n")
    columns = {"submit_time_s": "arrival_min", "duration_s": "runtime_min", "num_gpus": "gpus"}
    print(load_csv(csv, columns=columns, time_unit="min").head(3).to_string())

    config = {"workload": {"source": "csv", "path": str(csv), "columns": columns, "time_unit": "min",
                           "num_jobs": 20}}
    env = gym.make("EdgeCloudML-testbed-v0", config=config)
    obs, info = env.reset(seed=0)
    print(f"env on {csv.name}: first observation has {obs.size} features")
    env.close()
    for policy in ("aonline", "srtf"):
        rec = run_episode("EdgeCloudML-testbed-v0", policy, 0, config)
        print(f"  {policy:<8} total JCT {rec['objective']:.1f} h over {rec['num_jobs']} jobs")
