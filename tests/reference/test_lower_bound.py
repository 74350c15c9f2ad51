"""Tests of edgegym.agents.reference.lower_bound: the time-indexed LP/MILP lower bound on paper 000's Σ JCT."""

from __future__ import annotations

import numpy as np
import pytest
from edgegym.agents.reference.lower_bound import (
    LowerBoundResult,
    empirical_competitive_ratio,
    lp_lower_bound,
    slotted_chunk_times,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgegym.core.types import Cluster, JobSet

BW = 100.0  # Mbps, every job


def make_cluster(worker_server, worker_type, num_servers, has_cloud=True, num_types=2) -> Cluster:
    return Cluster(
        num_edge_servers=num_servers,
        worker_server=np.asarray(worker_server, dtype=np.int64),
        worker_type=np.asarray(worker_type, dtype=np.int64),
        ps_server=np.zeros(0, dtype=np.int64),
        ps_type=np.zeros(0, dtype=np.int64),
        worker_type_bandwidth_mbps=np.full(num_types, BW),
        has_cloud=has_cloud,
    )


def make_jobs(arrival, chunks, m_h, comm_h, wtype, delta_edge, delta_cloud) -> JobSet:
    """E = B = 1 and G = 0, so p1 = ceil(m) and p0 = ceil(m + comm) slots (2q/b = comm_h hours)."""
    J = len(arrival)
    comm = np.asarray(comm_h, dtype=float)
    return JobSet(
        arrival_slots=np.asarray(arrival, dtype=float),
        num_chunks=np.asarray(chunks),
        batches_per_chunk=np.ones(J, dtype=np.int64),
        epochs=np.ones(J, dtype=np.int64),
        minibatch_time_h=np.asarray(m_h, dtype=float),
        ps_update_ms=np.zeros(J),
        grad_size_mb=comm * BW * 3600.0 / 16.0,
        bandwidth_mbps=np.full(J, BW),
        worker_type=np.asarray(wtype),
        ps_type=np.zeros(J, dtype=np.int64),
        num_gpus=np.ones(J, dtype=np.int64),
        upload_delay_edge_slots=np.asarray(delta_edge, dtype=float).reshape(J, -1),
        upload_delay_cloud_slots=np.asarray(delta_cloud, dtype=float),
    )


def simulate(cluster: Cluster, jobs: JobSet, place, prio) -> float:
    """Slotted simulator of any non-migrating schedule: Σ_j (c_j − r_j).

    ``place[c]`` is the worker of chunk c (job-major order) or −1 for the cloud; each edge worker runs, in
    each slot, its released unfinished chunk of smallest ``prio`` (preemptive). Cloud chunks start at
    r + Δ_c and run p1 if the whole job is in the cloud, else p0.
    """
    p0, p1 = slotted_chunk_times(jobs)
    D = jobs.num_chunks
    chunk_job = np.repeat(np.arange(jobs.num_jobs), D)
    place = np.asarray(place)
    r = jobs.arrival_slots.astype(np.int64)
    all_cloud = np.array([np.all(place[chunk_job == j] < 0) for j in range(jobs.num_jobs)])
    done = np.zeros(len(place))
    rem, rel = {}, {}
    for c, (j, w) in enumerate(zip(chunk_job, place, strict=True)):
        if w < 0:
            done[c] = r[j] + jobs.upload_delay_cloud_slots[j] + (p1[j] if all_cloud[j] else p0[j])
        else:
            assert cluster.worker_type[w] == jobs.worker_type[j]
            rem[c] = int(p0[j])
            rel[c] = r[j] + int(jobs.upload_delay_edge_slots[j, cluster.worker_server[w]])
    t = 0
    while rem:
        for w in range(cluster.num_workers):
            ready = [c for c in rem if place[c] == w and rel[c] <= t]
            if ready:
                c = min(ready, key=lambda c: (prio[c], c))
                rem[c] -= 1
                if rem[c] == 0:
                    del rem[c]
                    done[c] = t + 1
        t += 1
    return float(sum(done[chunk_job == j].max() - r[j] for j in range(jobs.num_jobs)))


# (1) one job, one chunk, one edge worker, Δ = 1, p = 3: optimum JCT 4, bound exact.
def test_single_chunk_is_tight():
    cl = make_cluster([0], [0], 1, has_cloud=False)
    jb = make_jobs([0], [1], [2.0], [1.0], [0], [[1]], [10])
    assert tuple(int(x) for x in slotted_chunk_times(jb)[0]) == (3,)
    res = lp_lower_bound(cl, jb)
    assert isinstance(res, LowerBoundResult)
    assert res.status == "optimal"
    assert res.value == pytest.approx(4.0)
    assert res.lp_value == pytest.approx(4.0)  # the LP itself is tight (slot-end + mean-busy weights)
    assert res.trivial_value == pytest.approx(4.0)
    assert res.per_chunk is not None and res.per_chunk[0][:2] == (0, 0)
    assert res.per_chunk[0][2] == pytest.approx(4.0)
    assert simulate(cl, jb, [0], [0]) == 4.0
    # A non-integer p (2.2 h of compute + 0.3 h of comm) rounds up to 3 slots as well.
    jb2 = make_jobs([0], [1], [2.2], [0.3], [0], [[1]], [10])
    assert lp_lower_bound(cl, jb2).value == pytest.approx(4.0)
    # Non-integer arrival and delay: release slot ceil(0.5 + 0.5) = 1, JCT measured from ceil(0.5) = 1.
    jb3 = make_jobs([0.5], [1], [2.0], [1.0], [0], [[0.5]], [10])
    assert lp_lower_bound(cl, jb3).value == pytest.approx(3.0)


# (2) two single-chunk jobs, one worker, release 0: optimum is SPT, 1 + (1 + 3) = 5.
def test_two_jobs_one_worker_vs_spt():
    cl = make_cluster([0], [0], 1, has_cloud=False)
    jb = make_jobs([0, 0], [1, 1], [1.0, 3.0], [0.0, 0.0], [0, 0], [[0], [0]], [0, 0])
    opt = min(simulate(cl, jb, [0, 0], [0, 1]), simulate(cl, jb, [0, 0], [1, 0]))
    assert opt == 5.0  # SPT; LPT gives 3 + 4 = 7
    res = lp_lower_bound(cl, jb)
    assert 0.0 < res.value <= opt + 1e-7
    assert res.trivial_value == pytest.approx(4.0)  # 1 + 3
    # The time-indexed LP with mean-busy weights is exact on 1||ΣC_j.
    assert res.lp_value == pytest.approx(5.0, abs=1e-6)
    assert lp_lower_bound(cl, jb, integer=True).value == pytest.approx(5.0, abs=1e-6)


@st.composite
def tiny_instances(draw):
    S = draw(st.integers(1, 2))
    W = draw(st.integers(0, 2))
    wserver = [draw(st.integers(0, S - 1)) for _ in range(W)]
    wtype = [draw(st.integers(0, 1)) for _ in range(W)]
    J = draw(st.integers(1, 4))
    arrival = sorted(draw(st.integers(0, 4)) for _ in range(J))
    chunks = [draw(st.integers(1, 2)) for _ in range(J)]
    m = [draw(st.integers(1, 3)) for _ in range(J)]
    comm = [draw(st.integers(0, 1)) for _ in range(J)]
    jtype = [draw(st.integers(0, 1)) for _ in range(J)]
    d_edge = [[draw(st.integers(0, 2)) for _ in range(S)] for _ in range(J)]
    d_cloud = [draw(st.integers(0, 4)) for _ in range(J)]
    has_cloud = draw(st.booleans()) or any(t not in wtype for t in jtype)
    cl = make_cluster(wserver, wtype, S, has_cloud=has_cloud)
    jb = make_jobs(arrival, chunks, m, comm, jtype, d_edge, d_cloud)
    place = []
    for j in range(J):
        opts = [w for w in range(W) if wtype[w] == jtype[j]] + ([-1] if has_cloud else [])
        place += [draw(st.sampled_from(opts)) for _ in range(chunks[j])]
    prio = draw(st.permutations(list(range(len(place)))))
    return cl, jb, place, prio


# (3) the bound never exceeds the Σ JCT of a feasible (preemptive, priority-driven) schedule.
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_bound_below_any_feasible_schedule(inst):
    cl, jb, place, prio = inst
    jct = simulate(cl, jb, place, prio)
    fifo = simulate(cl, jb, place, list(range(len(place))))
    target = min(jct, fifo)
    default = lp_lower_bound(cl, jb)
    assert default.value <= target + 1e-6
    assert lp_lower_bound(cl, jb, zeta_one=True).value <= default.value + 1e-6
    strong = lp_lower_bound(cl, jb, objective="job_max")
    assert default.value - 1e-6 <= strong.value <= target + 1e-6
    assert lp_lower_bound(cl, jb, integer=True, objective="job_max").value <= target + 1e-6


def _random_instance(seed):
    rng = np.random.default_rng(seed)
    J = 5
    cl = make_cluster([0, 0, 1], [0, 1, 0], 2, has_cloud=True)
    jb = make_jobs(
        np.sort(rng.integers(0, 6, J)),
        rng.integers(1, 4, J),
        rng.integers(1, 5, J),
        rng.integers(0, 3, J),
        rng.integers(0, 2, J),
        rng.integers(0, 3, (J, 2)),
        rng.integers(3, 9, J),
    )
    return cl, jb


# (4) integer (milp) bound >= LP bound;  (5) zeta_one bound <= default bound.
@pytest.mark.parametrize("seed", range(4))
def test_integer_dominates_lp_and_zeta_one_is_weaker(seed):
    cl, jb = _random_instance(seed)
    lp = lp_lower_bound(cl, jb)
    ip = lp_lower_bound(cl, jb, integer=True)
    assert ip.status == lp.status == "optimal"
    assert ip.lp_value >= lp.lp_value - 1e-6
    assert ip.value >= lp.value - 1e-6
    z1 = lp_lower_bound(cl, jb, zeta_one=True)
    assert z1.lp_value <= lp.lp_value + 1e-6
    assert z1.value <= lp.value + 1e-6
    strong = lp_lower_bound(cl, jb, objective="job_max")
    assert strong.value >= lp.value - 1e-6
    # Extending the horizon beyond the safe default does not change the optimum.
    longer = lp_lower_bound(cl, jb, horizon_slots=lp.horizon_slots + 15)
    assert longer.lp_value == pytest.approx(lp.lp_value, abs=1e-6)
    # And every bound stays below a concrete schedule (every chunk in the cloud).
    everything_in_cloud = simulate(cl, jb, [-1] * int(jb.num_chunks.sum()), [])
    assert strong.value <= everything_in_cloud + 1e-6


# (6) cloud only: each chunk has its own worker, so the bound is exactly Σ_j (Δ_c + p1).
def test_cloud_only_is_exact():
    cl = make_cluster([], [], 0, has_cloud=True)
    jb = make_jobs([0, 1, 3], [1, 3, 2], [2.0, 1.0, 4.0], [1.0, 0.0, 1.0], [0, 1, 0], np.zeros((3, 0)), [10, 12, 11])
    expected = (10 + 2) + (12 + 1) + (11 + 4)
    for integer in (False, True):
        for objective in ("chunk_average", "job_max"):
            res = lp_lower_bound(cl, jb, integer=integer, objective=objective)
            assert res.value == pytest.approx(expected, abs=1e-6)
            assert res.lp_value == pytest.approx(expected, abs=1e-6)
    assert res.trivial_value == pytest.approx(expected)
    assert simulate(cl, jb, [-1] * 6, []) == expected


# (7) oversize instances are refused; misc errors.
def test_errors():
    cl = make_cluster([0], [0], 1, has_cloud=True)
    big = make_jobs([0, 0], [4, 4], [1e5, 1e5], [0, 0], [0, 0], [[1], [1]], [10, 10])
    with pytest.raises(ValueError, match="too large"):
        lp_lower_bound(cl, big)
    small = make_jobs([0], [2], [3.0], [0.0], [0], [[1]], [10])
    with pytest.raises(ValueError, match="max_variables"):
        lp_lower_bound(cl, small, max_variables=5)
    with pytest.raises(ValueError, match="infeasible"):
        lp_lower_bound(make_cluster([0], [0], 1, has_cloud=False), small, horizon_slots=5)
    with pytest.raises(ValueError, match="no qualified edge worker"):
        lp_lower_bound(make_cluster([0], [1], 1, has_cloud=False), small)
    with pytest.raises(ValueError, match="objective"):
        lp_lower_bound(cl, small, objective="bogus")


def test_empirical_competitive_ratio():
    cl = make_cluster([0], [0], 1, has_cloud=False)
    jb = make_jobs([0], [1], [2.0], [1.0], [0], [[1]], [10])
    res = lp_lower_bound(cl, jb)
    assert empirical_competitive_ratio(6.0, res) == pytest.approx(1.5)
    assert empirical_competitive_ratio(6.0, 4.0) == pytest.approx(1.5)
    with pytest.raises(ValueError):
        empirical_competitive_ratio(6.0, 0.0)
