"""Differential tests: the compiled EdgeCloudML simulator (``simulator.PaperSimulator``, Numba kernels) against
the pure-Python reference (``_reference.ReferenceSimulator``) on 1,000 random instances, plus the exact running
sums and the history-independent aggregates. Results must be identical (==, not approx)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgegym.families.edge_cloud import _kernels
from edgegym.families.edge_cloud import _reference as ref
from edgegym.families.edge_cloud.simulator import PaperSimulator, greedy_placement, water_fill
from edgegym.families.edge_cloud.testing import random_instance

N_INSTANCES = 1000


def _instance(seed: int):
    rng = np.random.default_rng(seed)
    kw = dict(
        num_servers=int(rng.integers(1, 4)),
        max_workers=int(rng.integers(1, 4)),
        num_jobs=int(rng.integers(1, 12)),
        max_chunks=int(rng.integers(1, 6)),
        num_types=int(rng.integers(1, 3)),
        zero_delay=bool(rng.random() < 0.2),
        integer_p=bool(rng.random() < 0.5),
    )
    cluster, jobs = random_instance(rng, **kw)
    return rng, cluster, jobs, bool(rng.random() < 0.3)


def _placement(sim, j, rng, mode):
    D = int(sim.jobs.num_chunks[j])
    qual = sim.qualified_workers(j)
    counts = np.zeros(sim.cluster.num_workers, dtype=np.int64)
    if mode == "greedy":
        cand = sim.candidates(j)
        if not np.isfinite(cand.q).any():
            return counts, D
        return ref.greedy_placement(cand.q, np.arange(cand.q.size), D, cand.p_edge, cand.qc0, cand.qc1)
    n_cloud = 0
    for _ in range(D):
        if qual.size == 0 or (sim.cluster.has_cloud and rng.random() < 0.3):
            n_cloud += 1
        else:
            counts[rng.choice(qual)] += 1
    return counts, n_cloud


def _run(cls, cluster, jobs, seed, mode, slotted):
    rng = np.random.default_rng(seed)
    sim = cls(cluster, jobs, rng=np.random.default_rng(seed + 1), slotted=slotted)
    recs, cands, in_sys = [], [], []
    for j in range(jobs.num_jobs):
        sim.advance_to(float(jobs.arrival_slots[j]))
        cand = sim.candidates(j)
        cands.append(cand)
        if hasattr(sim, "jobs_in_system"):  # the completion heap (compiled) vs the re-scan (reference)
            in_sys.append(sim.jobs_in_system())
        else:
            in_sys.append(int(np.sum(sim.job_end[: sim.num_placed] > sim.now)))
        counts, n_cloud = _placement(sim, j, rng, mode)
        recs.append(sim.place(j, counts, n_cloud, cand))
    out = sim.drain()
    return sim, out, recs, cands, in_sys


@pytest.mark.parametrize("block", range(10))
def test_compiled_simulator_matches_reference(block):
    for seed in range(block * N_INSTANCES // 10, (block + 1) * N_INSTANCES // 10):
        _, cluster, jobs, slotted = _instance(seed)
        mode = "greedy" if seed % 2 else "random"
        a = _run(ref.ReferenceSimulator, cluster, jobs, seed, mode, slotted)
        b = _run(PaperSimulator, cluster, jobs, seed, mode, slotted)
        sa, oa, ra, ca, na = a
        sb, ob, rb, cb, nb = b
        for x, y in zip(ca, cb, strict=True):  # candidate tables (Q, t*, A1/A2 sums): identical
            for f in ("q", "t_star", "wait", "a2_weight", "a2_count", "backlog"):
                np.testing.assert_array_equal(getattr(x, f), getattr(y, f), err_msg=f"seed {seed} {f}")
            assert (x.qc0, x.qc1) == (y.qc0, y.qc1)
        for x, y in zip(ra, rb, strict=True):  # per-step records, hence per-step rewards: identical
            assert x["delta_phi"] == y["delta_phi"], seed
            assert x["projected_jct"] == y["projected_jct"]
            assert x["postponed_chunks"] == y["postponed_chunks"]
            np.testing.assert_array_equal(x["alpha"], y["alpha"])
        assert sa.projected_total_jct == sb.projected_total_jct
        np.testing.assert_array_equal(oa.completion_slots, ob.completion_slots)
        np.testing.assert_array_equal(oa.segments, ob.segments)  # the executed schedule
        np.testing.assert_array_equal(sa.chunk_segments(), sb.chunk_segments())
        assert oa.preemptions == ob.preemptions and oa.extra == ob.extra
        np.testing.assert_array_equal(sa.ps_log, sb.ps_log)  # A_ps (random PS draws included)
        for f in ("chunk_end", "chunk_worker", "chunk_rho", "chunk_seq", "chunk_alpha", "job_end"):
            np.testing.assert_array_equal(getattr(sa, f), getattr(sb, f), err_msg=f)
        assert na == nb  # the completion heap's count equals the re-scan it replaces


def test_jobs_in_system_matches_rescan():
    rng, cluster, jobs, _ = _instance(7)
    cluster, jobs = random_instance(rng, num_servers=3, max_workers=3, num_jobs=40, max_chunks=4)
    sim = PaperSimulator(cluster, jobs)
    for j in range(jobs.num_jobs):
        sim.advance_to(float(jobs.arrival_slots[j]))
        assert sim.jobs_in_system() == int(np.sum(sim.job_end[: sim.num_placed] > sim.now))
        counts, n_cloud = _placement(sim, j, rng, "random")
        sim.place(j, counts, n_cloud)


def test_exact_running_sum_equals_fsum():
    rng = np.random.default_rng(0)
    partials = np.zeros(256)
    n = 0
    vals = []
    for _ in range(2000):
        x = float(rng.choice([1e16, 1.0, 1e-8, 3.3, -1e16])) * float(rng.random())
        vals.append(x)
        n = _kernels.msum_add(partials, n, x)
        if len(vals) % 97 == 0:  # removing a value exactly: add its negative
            n = _kernels.msum_add(partials, n, -vals.pop(0))
        assert math.fsum(partials[:n]) == math.fsum(vals)


def test_water_fill_and_greedy_match_reference():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(1, 8))
        q = np.round(rng.uniform(0, 4, size=n), 1)
        q[rng.random(n) < 0.2] = np.inf
        order = rng.permutation(n)
        step = float(rng.choice([0.5, 1.0, 0.3]))
        D = int(rng.integers(1, 9))
        if np.isfinite(q).any():
            np.testing.assert_array_equal(water_fill(q, step, D, order), ref.water_fill(q, step, D, order))
            qc0, qc1 = (float(x) for x in rng.choice([0.5, 2.0, np.inf], size=2))
            a = greedy_placement(q, order, D, step * D, qc0, qc1)
            b = ref.greedy_placement(q, order, D, step * D, qc0, qc1)
            np.testing.assert_array_equal(a[0], b[0])
            assert a[1] == b[1]


def test_server_aggregates_match_numpy():
    """The observation's one-pass per-server aggregates equal the numpy formulas they replace."""
    from edgegym.families.edge_cloud.simulator import Candidates, server_aggregates

    rng = np.random.default_rng(3)
    for _ in range(200):
        S, W = int(rng.integers(1, 6)), int(rng.integers(1, 15))
        ws = np.sort(rng.integers(0, S, size=W))
        qual = np.flatnonzero(rng.random(W) < 0.7)
        q = np.full(W, np.inf)
        q[qual] = rng.uniform(0, 9, size=qual.size)
        backlog = np.where(rng.random(W) < 0.4, 0.0, rng.uniform(0, 5, size=W))
        wait, a2w = rng.uniform(0, 3, size=W), rng.uniform(0, 2, size=W)
        cand = Candidates(0, 1.7, 1.2, q, q, wait, a2w, np.zeros(W, dtype=np.int64), backlog, 1.0, 1.0)
        nq, idle, mins, bl = server_aggregates(qual, ws, S, cand)
        srv = ws[qual]
        np.testing.assert_array_equal(nq, np.bincount(srv, minlength=S))
        np.testing.assert_array_equal(idle, np.bincount(srv, weights=(backlog[qual] <= 0).astype(float), minlength=S))
        np.testing.assert_array_equal(bl, np.bincount(srv, weights=backlog[qual], minlength=S))
        for k, vals in enumerate((wait[qual], 1.7 * a2w[qual], q[qual])):
            m = np.full(S, np.inf)
            np.minimum.at(m, srv, vals)
            np.testing.assert_array_equal(mins[k], m)
