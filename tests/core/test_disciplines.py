"""Tests of the job-level baseline disciplines (spec 000 §5.3): SRTF, Tiresias-L, BatchSche."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgegym.core.metrics import ScheduleOutcome, episode_metrics
from edgegym.core.types import Cluster, JobSet
from edgegym.families.edge_cloud.disciplines import (
    DISCIPLINES,
    gang_sizes,
    simulate_batchsche,
    simulate_srtf,
    simulate_tiresias_l,
)
from edgegym.families.edge_cloud.rates import chunk_time_slots, iteration_time_h

# --------------------------------------------------------------------------------------------------------
# Builders
# --------------------------------------------------------------------------------------------------------


def make_cluster(worker_server, worker_type=None, num_servers=None, has_cloud=True, num_types=None):
    worker_server = np.asarray(worker_server, dtype=np.int64)
    if worker_type is None:
        worker_type = np.zeros_like(worker_server)
    worker_type = np.asarray(worker_type, dtype=np.int64)
    S = int(
        num_servers if num_servers is not None else (worker_server.max() + 1 if worker_server.size else 1)
    )
    T = int(num_types if num_types is not None else (worker_type.max() + 1 if worker_type.size else 1))
    return Cluster(
        num_edge_servers=S,
        worker_server=worker_server,
        worker_type=worker_type,
        ps_server=worker_server.copy(),
        ps_type=np.zeros_like(worker_server),
        worker_type_bandwidth_mbps=np.ones(T),
        has_cloud=has_cloud,
    )


def make_jobs(r, D, p0, gpus, de, dc=None, p1=None, wtype=None):
    """Jobs with E = B = 1, G = 0 and b = 1 Mbps, so that p0 = m + 2q·8/3600 and p1 = m exactly."""
    r = np.asarray(r, dtype=float)
    J = r.size
    p0 = np.broadcast_to(np.asarray(p0, dtype=float), (J,))
    p1 = p0 if p1 is None else np.broadcast_to(np.asarray(p1, dtype=float), (J,))
    comm_h = p0 - p1  # = 2 q 8 / b / 3600 with b = 1
    q = comm_h * 3600.0 / 16.0
    de = np.asarray(de, dtype=float)
    if de.ndim == 1:
        de = de[:, None]
    return JobSet(
        arrival_slots=r,
        num_chunks=np.broadcast_to(np.asarray(D), (J,)),
        batches_per_chunk=np.ones(J, dtype=np.int64),
        epochs=np.ones(J, dtype=np.int64),
        minibatch_time_h=p1,
        ps_update_ms=np.zeros(J),
        grad_size_mb=q,
        bandwidth_mbps=np.ones(J),
        worker_type=np.zeros(J, dtype=np.int64)
        if wtype is None
        else np.broadcast_to(np.asarray(wtype), (J,)),
        ps_type=np.zeros(J, dtype=np.int64),
        num_gpus=np.broadcast_to(np.asarray(gpus), (J,)),
        upload_delay_edge_slots=de,
        upload_delay_cloud_slots=np.zeros(J) if dc is None else np.broadcast_to(np.asarray(dc, float), (J,)),
    )


def seg_of(out, j):
    seg = out.segments
    return seg[seg[:, 3] == j][:, :3].tolist()


# --------------------------------------------------------------------------------------------------------
# API
# --------------------------------------------------------------------------------------------------------


def test_registry_and_outcome_type():
    assert set(DISCIPLINES) == {"srtf", "tiresias_l", "batchsche"}
    cl = make_cluster([0])
    jb = make_jobs([0.0], 1, 2.0, 1, [[0.0]])
    for name, fn in DISCIPLINES.items():
        out = fn(cl, jb, speed=1.0, rng=np.random.default_rng(0))
        assert isinstance(out, ScheduleOutcome), name
        assert out.completion_slots.shape == (1,)
        assert out.segments.shape[1] == 4
        for key in ("migrations", "comm_time_slots", "fallbacks"):
            assert key in out.extra
        m = episode_metrics(jb.arrival_slots, out, cl.num_workers)
        assert m["total_jct"] == pytest.approx(2.0)


def test_helper_times_are_exact():
    jb = make_jobs([0.0], 1, 3.0, 1, [[0.0]], p1=2.0)
    tau0 = iteration_time_h(jb.minibatch_time_h, jb.ps_update_ms, jb.grad_size_mb, jb.bandwidth_mbps, False)
    tau1 = iteration_time_h(jb.minibatch_time_h, jb.ps_update_ms, jb.grad_size_mb, jb.bandwidth_mbps, True)
    assert chunk_time_slots(jb.epochs, jb.batches_per_chunk, tau0)[0] == pytest.approx(3.0)
    assert chunk_time_slots(jb.epochs, jb.batches_per_chunk, tau1)[0] == pytest.approx(2.0)


def test_empty_jobset():
    cl = make_cluster([0])
    jb = make_jobs([], 1, 1.0, 1, np.zeros((0, 1)))
    for fn in DISCIPLINES.values():
        out = fn(cl, jb)
        assert out.completion_slots.shape == (0,)
        assert out.segments.shape == (0, 4)


def test_no_edge_workers_all_cloud():
    cl = Cluster(
        num_edge_servers=0,
        worker_server=np.zeros(0, dtype=np.int64),
        worker_type=np.zeros(0, dtype=np.int64),
        ps_server=np.zeros(0, dtype=np.int64),
        ps_type=np.zeros(0, dtype=np.int64),
        worker_type_bandwidth_mbps=np.ones(1),
    )
    jb = make_jobs([0, 1], 2, 3.0, 1, np.zeros((2, 0)), dc=2.0, p1=1.0)
    for name in ("srtf", "tiresias_l"):
        out = DISCIPLINES[name](cl, jb)
        assert out.completion_slots.tolist() == pytest.approx([3.0, 4.0])
        assert out.extra["fallbacks"] == 2
    # BatchSche: L = 3, batches at 0 and 6.
    out = simulate_batchsche(cl, jb)
    assert out.completion_slots.tolist() == pytest.approx([3.0, 9.0])
    assert out.cloud_chunks.tolist() == [2, 2]


def test_gang_size_cap():
    cl = make_cluster([0, 0, 1], worker_type=[0, 0, 1])
    jb = make_jobs([0, 0, 0, 0], [5, 2, 5, 5], 1.0, [4, 4, 1, 3], np.zeros((4, 2)), wtype=[0, 0, 1, 2])
    assert gang_sizes(cl, jb).tolist() == [2, 2, 1, 0]


# --------------------------------------------------------------------------------------------------------
# SRTF, hand-computed
# --------------------------------------------------------------------------------------------------------


def test_srtf_shorter_job_preempts():
    # One worker. A (work 4) at 0, B (work 1) at 1: B has R=1 < A's R=3, so B runs in slot 1 and A resumes.
    cl = make_cluster([0])
    jb = make_jobs([0, 1], 1, [4.0, 1.0], 1, [[0.0], [0.0]])
    out = simulate_srtf(cl, jb)
    assert out.completion_slots.tolist() == pytest.approx([5.0, 2.0])
    assert out.preemptions == 1
    assert out.extra["migrations"] == 0
    assert seg_of(out, 0) == [[0, 0, 1], [0, 2, 5]]
    assert seg_of(out, 1) == [[0, 1, 2]]


def test_srtf_no_preemption_when_remaining_shorter():
    # A (work 4) at 0, B (work 4) at 1: A has R=3 < 4 and keeps running.
    cl = make_cluster([0])
    jb = make_jobs([0, 1], 1, [4.0, 4.0], 1, [[0.0], [0.0]])
    out = simulate_srtf(cl, jb)
    assert out.completion_slots.tolist() == pytest.approx([4.0, 8.0])
    assert out.preemptions == 0


def test_srtf_gang_and_fractional_completion():
    # Two workers; a gang job of D=3 chunks of p0=1 on g=2 workers: work 3 -> 1.5 slots.
    cl = make_cluster([0, 0])
    jb = make_jobs([0], 3, 1.0, 2, [[0.0]])
    out = simulate_srtf(cl, jb)
    assert out.completion_slots[0] == pytest.approx(1.5)
    assert sorted(seg_of(out, 0)) == [[0, 0, 1.5], [1, 0, 1.5]]


def test_srtf_all_or_nothing_backfill():
    # Two workers. A (g=1, work 10) runs; B (g=2, work 2) is shorter and needs both workers, so it preempts A.
    # C (g=1, work 5) arrives with B and does not fit in slot 1; in slot 2 C and A share the two workers.
    cl = make_cluster([0, 0])
    jb = make_jobs([0, 1, 1], [1, 2, 1], [10.0, 1.0, 5.0], [1, 2, 1], np.zeros((3, 1)))
    out = simulate_srtf(cl, jb)
    # slot 1: B on both -> done at 2. slot 2: C (R=5) and A (R=9) both run.
    assert out.completion_slots.tolist() == pytest.approx([11.0, 2.0, 7.0])
    assert out.preemptions == 1


def test_srtf_initial_upload_delay():
    cl = make_cluster([0])
    jb = make_jobs([0.0], 1, 2.0, 1, [[1.5]])
    out = simulate_srtf(cl, jb)
    assert out.completion_slots[0] == pytest.approx(3.5)
    assert seg_of(out, 0) == [[0, 1.5, 3.5]]
    assert out.extra["comm_time_slots"] == pytest.approx(1.5)
    assert out.extra["migrations"] == 0


def test_srtf_fractional_arrival_waits_for_slot_boundary():
    cl = make_cluster([0])
    jb = make_jobs([0.5], 1, 2.0, 1, [[0.0]])
    out = simulate_srtf(cl, jb)
    assert out.completion_slots[0] == pytest.approx(3.0)


def test_srtf_migration_delay():
    # Servers s0 = {w0}, s1 = {w1}. A (work 10, Δ_A = [0, 2]) starts on w0. X (g=2, work 2) preempts A in
    # slot 1. In slot 2, Dj (R=3) is placed first and packs onto s0 (tie -> lower index), so A restarts on
    # s1, where its data is not: it holds w1 during [2, 4) and then needs 9 slots.
    cl = make_cluster([0, 1])
    de = np.array([[0.0, 2.0], [0.0, 0.0], [0.0, 0.0]])
    jb = make_jobs([0, 1, 1], [1, 2, 1], [10.0, 1.0, 3.0], [1, 2, 1], de)
    out = simulate_srtf(cl, jb)
    assert out.completion_slots.tolist() == pytest.approx([13.0, 2.0, 5.0])
    assert out.preemptions == 1
    assert out.extra["migrations"] == 1
    assert out.extra["migration_time_slots"] == pytest.approx(2.0)
    assert out.extra["comm_time_slots"] == pytest.approx(2.0)
    assert seg_of(out, 0) == [[0, 0, 1], [1, 4, 13]]
    assert seg_of(out, 2) == [[0, 2, 5]]


def test_srtf_no_qualified_worker_falls_back_to_cloud():
    cl = make_cluster([0], worker_type=[0], num_types=2)
    jb = make_jobs([1.0, 0.0][::-1], 2, 3.0, 1, np.zeros((2, 1)), dc=4.0, p1=2.0, wtype=[0, 1])
    for fn in (simulate_srtf, simulate_tiresias_l):
        out = fn(cl, jb)
        assert out.completion_slots[1] == pytest.approx(1.0 + 4.0 + 2.0)
        assert out.cloud_chunks.tolist() == [0, 2]
        assert out.edge_chunks.tolist() == [2, 0]
        assert out.extra["fallbacks"] == 1
    cl_nc = make_cluster([0], worker_type=[0], num_types=2, has_cloud=False)
    with pytest.raises(ValueError):
        simulate_srtf(cl_nc, jb)


def test_speed_scales_processing_not_delays():
    cl = make_cluster([0])
    jb = make_jobs([0.0], 1, 3.0, 1, [[1.0]])
    out = simulate_srtf(cl, jb, speed=1.5)
    assert out.completion_slots[0] == pytest.approx(1.0 + 2.0)


# --------------------------------------------------------------------------------------------------------
# Tiresias-L, hand-computed
# --------------------------------------------------------------------------------------------------------


def test_tiresias_demotion_after_threshold():
    # One worker, threshold 2 worker-slots. A (work 5) at 0 is demoted after 2 slots; B (work 2) arrived at 1
    # waits in queue 0 behind running A (running first), then runs at 2-4; A resumes at 4 and ends at 7.
    cl = make_cluster([0])
    jb = make_jobs([0, 1], 1, [5.0, 2.0], 1, [[0.0], [0.0]])
    out = simulate_tiresias_l(cl, jb, thresholds=[2.0])
    assert out.completion_slots.tolist() == pytest.approx([7.0, 4.0])
    assert out.preemptions == 1
    # Default θ1 = 0.5 × median(5, 2) = 1.75 -> demoted after ceil(1.75) = 2 slots as well.
    out_d = simulate_tiresias_l(cl, jb)
    assert out_d.completion_slots.tolist() == pytest.approx([7.0, 4.0])
    # SRTF differs: B preempts A at once.
    out_s = simulate_srtf(cl, jb)
    assert out_s.completion_slots.tolist() == pytest.approx([7.0, 3.0])


def test_tiresias_fifo_within_queue_without_demotion():
    # Huge threshold: one queue, FIFO with running first: A runs to completion, then B.
    cl = make_cluster([0])
    jb = make_jobs([0, 1], 1, [5.0, 2.0], 1, [[0.0], [0.0]])
    out = simulate_tiresias_l(cl, jb, thresholds=[1e9])
    assert out.completion_slots.tolist() == pytest.approx([5.0, 7.0])
    assert out.preemptions == 0


def test_tiresias_attained_service_counts_gang_size():
    # g=2: A (D=2, p0=4, work 8) accrues 2 worker-slots per slot: with θ=4 it is demoted after 2 slots.
    # B (g=2, work 4) arrives at 1, waits behind running A, runs 2-4 once A is demoted; A ends at 4 + 2 = 6.
    cl = make_cluster([0, 0])
    jb = make_jobs([0, 1], 2, [4.0, 2.0], 2, [[0.0], [0.0]])
    out = simulate_tiresias_l(cl, jb, thresholds=[4.0])
    assert out.completion_slots.tolist() == pytest.approx([6.0, 4.0])


def test_tiresias_starvation_knob_promotes():
    # A (work 3) is demoted after 1 slot (θ=1) by a stream of queue-0 jobs; with κ=1 it is promoted back
    # once it has waited 1 slot (its executed time).
    cl = make_cluster([0])
    jb = make_jobs([0, 1, 2, 3, 4], 1, [3.0, 1.0, 1.0, 1.0, 1.0], 1, np.zeros((5, 1)))
    out_off = simulate_tiresias_l(cl, jb, thresholds=[1.0])
    out_on = simulate_tiresias_l(cl, jb, thresholds=[1.0], starvation_kappa=1.0)
    assert out_off.completion_slots[0] == pytest.approx(7.0)
    assert out_on.completion_slots[0] < out_off.completion_slots[0]


# --------------------------------------------------------------------------------------------------------
# BatchSche, hand-computed
# --------------------------------------------------------------------------------------------------------


def test_batchsche_picks_cloud_when_cheap_and_in_time():
    # Edge runtime 1 (Δ=0, p0=1), cloud runtime Δc + p1 = 1 + 1 = 2. L = 1, first window [0, 2].
    cl = make_cluster([0])
    jb = make_jobs([0.0], 1, 1.0, 1, [[0.0]], dc=1.0)
    out = simulate_batchsche(cl, jb)
    assert out.completion_slots[0] == pytest.approx(2.0)
    assert out.cloud_chunks.tolist() == [1] and out.edge_chunks.tolist() == [0]
    assert out.segments.shape == (0, 4)
    assert out.extra["comm_time_slots"] == pytest.approx(1.0)


def test_batchsche_picks_edge_when_cloud_too_slow_or_expensive():
    cl = make_cluster([0])
    slow = make_jobs([0.0], 1, 1.0, 1, [[0.0]], dc=5.0)  # cloud ends at 6 > window end 2
    out = simulate_batchsche(cl, slow)
    assert out.completion_slots[0] == pytest.approx(1.0)
    assert out.edge_chunks.tolist() == [1]
    assert seg_of(out, 0) == [[0, 0, 1]]
    cheap_cloud = make_jobs([0.0], 1, 1.0, 1, [[0.0]], dc=1.0)
    out = simulate_batchsche(cl, cheap_cloud, cloud_price=2.0)  # cloud now dearer than the edge (price 1)
    assert out.completion_slots[0] == pytest.approx(1.0)
    assert out.edge_chunks.tolist() == [1]


def test_batchsche_doubling_windows_and_deferral():
    # Edge only, one worker. J0 work 1, J1 work 3, both at 0. L = 1: windows [0,2], [2,4], [4,8].
    # J0 first (shorter) on [0,1]; J1 would end at 4 > 2: deferred; at τ1 = 2 it would end at 5 > 4: deferred;
    # at τ2 = 4 it ends at 7 <= 8.
    cl = make_cluster([0], has_cloud=False)
    jb = make_jobs([0, 0], 1, [1.0, 3.0], 1, [[0.0], [0.0]])
    out = simulate_batchsche(cl, jb)
    assert out.completion_slots.tolist() == pytest.approx([1.0, 7.0])
    assert out.extra["deferrals"] == 2
    assert out.preemptions == 0 and out.extra["migrations"] == 0
    # Forced scheduling after one deferral: J1 takes its fastest option at τ1 = 2, i.e. [2, 5].
    out_f = simulate_batchsche(cl, jb, max_deferrals=1)
    assert out_f.completion_slots.tolist() == pytest.approx([1.0, 5.0])
    assert out_f.extra["fallbacks"] == 1


def test_batchsche_edge_chunks_packed_round_robin():
    # D=3 chunks of p0=2, 2 workers: every g costs the same (one price, D·p0 worker-slots), so the tie goes to
    # the earliest finish: g=2, ceil(3/2)*2 = 4 slots after the upload (0.5); worker 0 trains 2 chunks.
    cl = make_cluster([0, 0], has_cloud=False)
    jb = make_jobs([0.0], 3, 2.0, 1, [[0.5]])
    out = simulate_batchsche(cl, jb)
    assert out.completion_slots[0] == pytest.approx(0.5 + 4.0)
    assert sorted(seg_of(out, 0)) == [[0, 0.5, 4.5], [1, 0.5, 2.5]]
    assert out.extra["comm_time_slots"] == pytest.approx(0.5)


def test_batchsche_price_prefers_idle_server():
    # s0 = {w0, w1}, s1 = {w2, w3}. J0 (g irrelevant, D=1, long) is reserved on w0 first; for J1 (D=1),
    # s0 is half reserved (price 8^0.5) and s1 idle (price 1): J1 goes to s1 although w1 is as early.
    cl = make_cluster([0, 0, 1, 1], has_cloud=False)
    jb = make_jobs([0, 0], 1, [1.0, 2.0], 1, np.zeros((2, 2)))
    out = simulate_batchsche(cl, jb)
    w0 = seg_of(out, 0)[0][0]
    w1 = seg_of(out, 1)[0][0]
    assert cl.worker_server[int(w0)] == 0
    assert cl.worker_server[int(w1)] == 1
    assert out.completion_slots.tolist() == pytest.approx([1.0, 2.0])


# --------------------------------------------------------------------------------------------------------
# Invariants on random instances
# --------------------------------------------------------------------------------------------------------


@st.composite
def instances(draw):
    S = draw(st.integers(1, 3))
    T = draw(st.integers(1, 2))
    wps = draw(st.lists(st.integers(1, 3), min_size=S, max_size=S))
    worker_server = np.repeat(np.arange(S), wps)
    W = worker_server.size
    worker_type = np.array(draw(st.lists(st.integers(0, T - 1), min_size=W, max_size=W)))
    has_cloud = draw(st.booleans())
    J = draw(st.integers(1, 7))
    r = np.sort(np.array(draw(st.lists(st.integers(0, 12), min_size=J, max_size=J)), dtype=float))
    r += np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 0.5]), min_size=J, max_size=J)))
    r = np.sort(r)
    D = np.array(draw(st.lists(st.integers(1, 4), min_size=J, max_size=J)))
    gpus = np.array(draw(st.lists(st.integers(1, 4), min_size=J, max_size=J)))
    p1 = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]), min_size=J, max_size=J)))
    extra = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=J, max_size=J)))
    de = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=J * S, max_size=J * S)))
    dc = np.array(draw(st.lists(st.sampled_from([0.0, 2.0, 5.0]), min_size=J, max_size=J)))
    present = np.unique(worker_type)
    if has_cloud:
        wtype = np.array(draw(st.lists(st.integers(0, T - 1), min_size=J, max_size=J)))
    else:
        wtype = np.array(draw(st.lists(st.sampled_from(present.tolist()), min_size=J, max_size=J)))
    cl = make_cluster(worker_server, worker_type, num_servers=S, has_cloud=has_cloud, num_types=T)
    jb = make_jobs(r, D, p1 + extra, gpus, de.reshape(J, S), dc=dc, p1=p1, wtype=wtype)
    return cl, jb


def check_invariants(cl, jb, out, name):
    J = jb.num_jobs
    args = (jb.minibatch_time_h, jb.ps_update_ms, jb.grad_size_mb, jb.bandwidth_mbps)
    p0 = chunk_time_slots(jb.epochs, jb.batches_per_chunk, iteration_time_h(*args, all_in_cloud=False))
    p1 = chunk_time_slots(jb.epochs, jb.batches_per_chunk, iteration_time_h(*args, all_in_cloud=True))
    c = out.completion_slots
    r = jb.arrival_slots
    assert np.all(np.isfinite(c)), name
    assert np.all(c >= r - 1e-9), name
    assert np.all((out.edge_chunks > 0) ^ (out.cloud_chunks > 0)), name
    seg = out.segments
    assert np.all(seg[:, 2] > seg[:, 1] - 1e-12), name
    # no worker runs two jobs at once
    for w in np.unique(seg[:, 0]).astype(int):
        sw = seg[seg[:, 0] == w]
        sw = sw[np.argsort(sw[:, 1], kind="stable")]
        assert np.all(sw[1:, 1] >= sw[:-1, 2] - 1e-9), (name, w, sw)
    ws = seg[:, 0].astype(int)
    js = seg[:, 3].astype(int)
    # type match, no work before arrival + upload delay to the worker's server, within [.., c_j]
    assert np.all(cl.worker_type[ws] == jb.worker_type[js]), name
    assert np.all(seg[:, 1] >= r[js] + jb.upload_delay_edge_slots[js, cl.worker_server[ws]] - 1e-9), name
    assert np.all(seg[:, 2] <= c[js] + 1e-9), name
    for j in range(J):
        mine = seg[js == j]
        if out.edge_chunks[j]:
            assert out.edge_chunks[j] == jb.num_chunks[j]
            assert np.sum(mine[:, 2] - mine[:, 1]) == pytest.approx(jb.num_chunks[j] * p0[j]), (name, j)
            assert c[j] == pytest.approx(mine[:, 2].max()), (name, j)
        else:
            assert len(mine) == 0
            assert out.cloud_chunks[j] == jb.num_chunks[j]
            assert c[j] >= r[j] + jb.upload_delay_cloud_slots[j] + p1[j] - 1e-9, (name, j)
    if name != "batchsche":
        g = gang_sizes(cl, jb)
        for j in range(J):
            if g[j]:
                # gang: exactly g_j distinct workers progress at any instant of the job's progress
                mine = seg[js == j]
                for tt in np.unique(mine[:, 1]):
                    live = mine[(mine[:, 1] <= tt + 1e-12) & (mine[:, 2] > tt + 1e-12)]
                    assert len(np.unique(live[:, 0])) == g[j], (name, j, tt, mine)


@settings(max_examples=25, deadline=None)
@given(instances())
def test_invariants_random(inst):
    cl, jb = inst
    for name, fn in DISCIPLINES.items():
        out = fn(cl, jb)
        check_invariants(cl, jb, out, name)
        again = fn(cl, jb)
        np.testing.assert_array_equal(out.completion_slots, again.completion_slots)
        np.testing.assert_array_equal(out.segments, again.segments)
        assert out.preemptions == again.preemptions and out.extra == again.extra
        if name != "batchsche":
            assert out.extra["migrations"] <= out.preemptions


@settings(max_examples=25, deadline=None)
@given(instances())
def test_event_skipping_equals_slot_by_slot(inst):
    cl, jb = inst
    for fn, kw in (
        (simulate_srtf, {}),
        (simulate_tiresias_l, {}),
        (simulate_tiresias_l, {"starvation_kappa": 1.0}),
    ):
        a = fn(cl, jb, event_skip=True, **kw)
        b = fn(cl, jb, event_skip=False, **kw)
        np.testing.assert_allclose(a.completion_slots, b.completion_slots, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(a.segments, b.segments, rtol=1e-9, atol=1e-9)
        assert a.preemptions == b.preemptions
        assert a.extra["migrations"] == b.extra["migrations"]


# --------------------------------------------------------------------------------------------------------
# Scale
# --------------------------------------------------------------------------------------------------------


def large_instance(seed=0, S=100, J=300, horizon=600.0):
    rng = np.random.default_rng(seed)
    T = 9
    wps = rng.choice([2, 4, 8], size=S, p=[0.4, 0.2, 0.4])
    worker_server = np.repeat(np.arange(S), wps)
    worker_type = rng.integers(0, T, size=worker_server.size)
    cl = Cluster(
        num_edge_servers=S,
        worker_server=worker_server,
        worker_type=worker_type,
        ps_server=worker_server,
        ps_type=rng.integers(0, T, size=worker_server.size),
        worker_type_bandwidth_mbps=rng.uniform(100, 5120, size=T),
        num_ps_types=T,
    )
    jtype = rng.integers(0, T, size=J)
    jb = JobSet(
        arrival_slots=np.sort(rng.uniform(0, horizon, size=J)),
        num_chunks=rng.choice([27, 60, 115], size=J),
        batches_per_chunk=np.full(J, 58),
        epochs=rng.integers(20, 61, size=J),
        minibatch_time_h=rng.uniform(0.001, 0.05, size=J),
        ps_update_ms=rng.uniform(10, 100, size=J),
        grad_size_mb=rng.uniform(30, 575, size=J),
        bandwidth_mbps=np.asarray(cl.worker_type_bandwidth_mbps)[jtype],
        worker_type=jtype,
        ps_type=rng.integers(0, T, size=J),
        num_gpus=rng.choice([1, 2, 4, 8, 16], size=J),
        upload_delay_edge_slots=rng.uniform(1, 4, size=(J, S)),
        upload_delay_cloud_slots=rng.uniform(10, 15, size=J),
    )
    return cl, jb


def test_large_instance_is_fast_and_sane():
    cl, jb = large_instance()
    for name, fn in DISCIPLINES.items():
        t0 = time.perf_counter()
        out = fn(cl, jb)
        dt = time.perf_counter() - t0
        assert dt < 10.0, (name, dt)
        check_invariants(cl, jb, out, name)
