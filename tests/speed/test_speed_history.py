"""Structural (not timed) checks of issue 10: `import edgegym` loads no compiled kernels, and a step of the
EdgeCloudML simulator does not re-scan the jobs placed so far (Φ from an exact running sum of bounded size)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np

from edgegym.families.edge_cloud import simulator as sim_mod
from edgegym.families.edge_cloud.testing import random_instance


def test_import_and_make_load_no_numba():
    code = ("import sys, gymnasium as gym, edgegym; "
            "[gym.make(i) for i in ('EdgeCloudML-v0', 'EdgeUtility-v0')]; print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_phi_is_a_bounded_running_sum():
    """Φ after each placement equals fsum over every placed job (the old definition), while the simulator only
    ever keeps (and sums, in the placement's compiled call) a bounded number of partials, however many jobs were
    placed."""
    real = math.fsum
    rng = np.random.default_rng(11)
    cluster, jobs = random_instance(rng, num_servers=3, max_workers=3, num_jobs=400, max_chunks=4)
    jobs = type(jobs)(**{**{f: getattr(jobs, f) for f in jobs.__dataclass_fields__},
                         "arrival_slots": np.sort(rng.uniform(0, 400, size=400)).round()})
    sim = sim_mod.PaperSimulator(cluster, jobs)
    sizes = []
    for j in range(jobs.num_jobs):
        sim.advance_to(float(jobs.arrival_slots[j]))
        qual = sim.qualified_workers(j)
        D = int(jobs.num_chunks[j])
        counts = np.zeros(cluster.num_workers, dtype=np.int64)
        if qual.size:
            counts[qual[rng.integers(qual.size)]] = D
            sim.place(j, counts, 0)
        else:
            sim.place(j, counts, D)
        n = sim.num_placed
        sizes += [sim._end_np, sim._arr_np]
        assert sim.projected_total_jct == real(sim.job_end[:n]) - real(jobs.arrival_slots[:n])
        assert sim.projected_total_jct == real(sim._end_part[: sim._end_np].tolist()) - real(
            sim._arr_part[: sim._arr_np].tolist())  # the compiled sum of the partials is math.fsum's
        assert sim.jobs_in_system() == int(np.sum(sim.job_end[:n] > sim.now))
    assert 0 < max(sizes) <= 64  # partials, not one term per placed job
