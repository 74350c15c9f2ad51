"""Paper 003 core: utility families, O4A's helpers, spec §3.10 worked vectors and simulator invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import FIG2_G, fig2, random_jobs, single_server_jobs
from hypothesis import given, settings
from hypothesis import strategies as st

from edgegym.families.edge_utility.disciplines import O4AParams, plan_o4a
from edgegym.families.edge_utility.simulator import UtilitySimulator, upper_bound
from edgegym.families.edge_utility.utility_fn import (
    aon,
    constant,
    discretize,
    fill,
    linear,
    sigmoid,
    step,
    tentative_time,
)


# ------------------------------------------------------------------------------ pure functions
def test_utility_families_by_hand():
    assert linear(10, 20)(0.5) == 15.0 and linear(10, 20)(3.0) == 0.0  # clipped at 0 (A12)
    g = aon(7, 2.0)
    assert g(1.999) == 7 and g(2.0) == 0 and aon(7, 2.0, inclusive=True)(2.0) == 7  # A13
    s = sigmoid(2, 80, 1.5)
    assert s(1.5) == pytest.approx(40.0) and s(0) == pytest.approx(80 / (math.exp(-3) + 1))
    assert sigmoid(10, 80, 1)(200.0) == 0.0
    assert constant(3)(1e9) == 3
    h = step([1.0, 2.0], [5.0, 2.0, 0.0])
    assert (h(0.5), h(1.0), h(1.5), h(2.0), h(9)) == (5.0, 2.0, 2.0, 0.0, 0.0)
    for fn in (linear(10, 20), g, s, constant(3), h):
        t = np.array([0.0, 0.7, 1.5, 2.0, 3.3])
        np.testing.assert_allclose(fn.vector(t), [fn(x) for x in t])
    with pytest.raises(ValueError):
        step([1.0], [1.0, 2.0])  # increasing values


def test_soft_deadlines():
    assert linear(10, 20).soft_deadline() == pytest.approx(1.0)  # b/(2a)
    assert aon(1, 3).soft_deadline() == 3
    assert constant(1).soft_deadline() == math.inf


def test_discretize_and_tentative_time():
    assert discretize(0.0, 3.0) == 0.0
    assert discretize(1.0, 8.0) == 1.0  # 8 * 2^-3
    v = discretize(0.9999, 10.0)
    assert v / 10.0 == 2.0**-4 and 0.9999 / 2 < v <= 0.9999
    for val, p in [(5.0, 5.0), (4.0, 1.0), (1e-9, 1e3), (123.4, 0.07)]:
        d = discretize(val, p)
        assert val / 2 < d <= val and math.log2(d / p) == int(math.log2(d / p))
    assert tentative_time(10.0, 1.0, 0.02, 0.8) == pytest.approx(10.16)
    assert tentative_time(10.0, 1.02, 0.02, 0.8) == pytest.approx(10.16 / 1.02)
    assert tentative_time(10.0, 1.0, 0.02, 0.8, "paper_literal") == pytest.approx(10.16 / 1.02)


def test_fill_by_hand():
    d, s, e = fill(0.0, 3.0, [1.0, 4.0], [2.0, 5.0])
    assert d == 4.0 and list(zip(s, e, strict=True)) == [(0.0, 1.0), (2.0, 4.0)]
    d, s, e = fill(0.0, 5.0, [1.0, 4.0], [2.0, 5.0])
    assert d == 7.0 and list(zip(s, e, strict=True)) == [(0.0, 1.0), (2.0, 4.0), (5.0, 7.0)]
    d, s, e = fill(3.0, 1.0, [], [])
    assert d == 4.0 and s == [3.0]


# ------------------------------------------------------------------------------ spec §3.10 vectors
FIG2_TABLE = {  # order -> (theory strict, theory fallback, practice, paper_literal at s=1)
    (0, 1, 2): (1.022, 1.025, 1.018, 1.000),
    (1, 2, 0): (2.985, 2.985, 2.982, 1.000),
    (2, 1, 0): (2.000, 2.000, 2.000, 2.000),
}
FIG2_PLANS = {  # theory mode (s = 1.02): (d†, u, γ) per job in arrival order
    (0, 1, 2): [(7.969, 2**-3, 0), (17.929, 2**-10, 0), (29.882, 0.0, 0)],
    (1, 2, 0): [(9.961, 2**-4, 0), (21.914, 2**-4, 0), (29.882, 2**-3, 0)],
    (2, 1, 0): [(11.953, 2**-4, 0), (21.914, 2**-15, 0), (19.922, 2**-3, 1)],
}


@pytest.mark.parametrize("order", list(FIG2_TABLE))
def test_fig2_each_arrival_order(order):
    strict, fb, practice, literal = FIG2_TABLE[order]
    assert fig2(order, 1.02, fallback="none").utility.sum() == pytest.approx(strict, abs=6e-4)
    assert fig2(order, 1.02).utility.sum() == pytest.approx(fb, abs=6e-4)
    assert fig2(order, 1.0).utility.sum() == pytest.approx(practice, abs=6e-4)
    assert fig2(order, 1.0, mode="paper_literal").utility.sum() == pytest.approx(literal, abs=6e-4)
    sim = fig2(order, 1.02)
    for k, (d, u, gamma) in enumerate(FIG2_PLANS[order]):
        pl = sim.plans[k]
        assert pl.d == pytest.approx(d, abs=6e-4) and pl.u == u and pl.gamma == gamma


def test_fig2_paper_numbers_sjf_vs_optimal():
    # SJF order (j1, j2, j3) = 1.02 and the optimal order (j2, j3, j1) = 2.98 (paper Fig. 2), non-preemptive
    def seq(order):
        t, tot = 0.0, 0.0
        for i in order:
            t += (8.0, 10.0, 12.0)[i]
            tot += FIG2_G[i](t)
        return tot

    assert seq((0, 1, 2)) == pytest.approx(1.018, abs=1e-3)
    assert seq((1, 2, 0)) == pytest.approx(2.982, abs=1e-3)


def test_fig3_structure_alpha_rule():
    # existing densities 1, 2, 128 with α = 102: a job of density 128 may overlap density 1 (128 > 102) but not 2
    params = O4AParams(alpha=102.0)
    inf_ = -math.inf
    levels = [(inf_, [0.0], [30.0]), (1.0, [10.0], [30.0]), (2.0, [20.0], [30.0]), (128.0, [], [])]
    # levels: γ=0 all sets; γ=1 sets of density > 1 (jobs 2, 3); γ=2 sets of density > 2 (job 3); γ=3 none
    # a new job with constant utility 128·p can reach density 128 at most
    p = 1.0
    g = constant(128.0)
    pl = plan_o4a(levels, 0.0, p, 0.0, 0.0, g, 1.0, O4AParams(eps=0.0, alpha=102.0))
    assert pl.u == 128.0 and pl.gamma == 1  # overlaps the density-1 job only
    assert pl.starts[0] == 0.0 and pl.d == pytest.approx(1.0)
    # density 2 job cannot overlap density 1 (2 < 102): a new job of density 2 lands at γ = 0 (after all sets)
    pl2 = plan_o4a(levels, 0.0, p, 0.0, 0.0, constant(2.0), 1.0, O4AParams(eps=0.0, alpha=102.0))
    assert pl2.gamma == 0 and pl2.d == pytest.approx(31.0)
    assert params.alpha_value == 102.0 and O4AParams(eps=0.02).alpha_value == pytest.approx(102.0)


def test_theorem1_case2_instance():
    eps, p, dl = 0.02, 100.0, 0.5
    tau = math.sqrt((1 + eps) / (eps * (1 - eps)))
    small_r = [dl * k for k in range(1, 192)]
    T = (1 - eps) / (1 + eps) * p - dl
    rel = [0.0] + small_r + [T]
    ps = [p] + [dl] * 191 + [p]
    gs = [aon(p, p, inclusive=True)] + [aon(tau * dl, dl, inclusive=True)] * 191 + [aon(p, p, inclusive=True)]
    order = np.argsort(rel, kind="stable")
    jobs = single_server_jobs(np.array(rel)[order], np.array(ps)[order], [gs[i] for i in order])
    for fb in ("none", "density"):
        sim = UtilitySimulator(jobs, 1, False, "o4a", speed=1 + eps, o4a=O4AParams(eps=eps, fallback=fb))
        for k in range(jobs.num_jobs):
            sim.advance_to(float(jobs.release_s[k]))
            sim.dispatch(k, 0)
        sim.drain()
        assert sim.utility.sum() == pytest.approx(100.0)
    assert 788.9 / 100.0 >= math.sqrt((1 - eps) / (eps * (1 + eps)))  # spec §3.10: ratio 7.89 ≥ LB 6.93


# ------------------------------------------------------------------------------ invariants
def _run(jobs, S, cloud, discipline, rng, speed=1.0, fallback="density", latency=0.0):
    sim = UtilitySimulator(jobs, S, cloud, discipline, speed=speed, o4a=O4AParams(fallback=fallback), record=True)
    snapshots = []
    for k in range(jobs.num_jobs):
        sim.advance_to(float(jobs.release_s[k]))
        server = int(rng.integers(jobs.num_servers))
        sim.dispatch(k, server, latency)
        if discipline == "o4a" and latency == 0 and server < S:
            snapshots.append([(q.u, list(q.starts), list(q.ends), q.d, q.a_plan) for q in sim.servers[server].jobs])
    sim.drain()
    return sim, snapshots


def _overlap(s1, e1, s2, e2) -> bool:
    return any(min(b, d) - max(a, c) > 1e-9 for a, b in zip(s1, e1, strict=True) for c, d in zip(s2, e2, strict=True))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), disc=st.sampled_from(["o4a", "fifo", "srpt", "edf", "hpu", "hrdf"]),
       delta=st.sampled_from([0.0, 0.2]), fallback=st.sampled_from(["density", "none", "potential_density"]))
def test_simulator_invariants(seed, disc, delta, fallback):
    rng = np.random.default_rng(seed)
    jobs = random_jobs(rng, J=10, S=2, cloud=True, delta=delta)
    sim, snaps = _run(jobs, 2, True, disc, rng, fallback=fallback)
    for k, srv in enumerate(sim.servers):
        seg = sorted(srv.segments)
        for (_s0, e0, _), (s1, _e1, _) in zip(seg, seg[1:], strict=False):
            if k < 2:
                assert s1 >= e0 - 1e-9  # one job at a time on an edge server
        for s, e, j in seg:
            assert e >= s
            assert s >= jobs.release_s[j] + jobs.up_s[j, k] - 1e-9  # no start before release + upload
        # work conserved: each completed job got exactly p/s of service
        work = {}
        for s, e, j in seg:
            work[j] = work.get(j, 0.0) + (e - s)
        for j, w in work.items():
            if sim.completed[j]:
                assert w == pytest.approx(jobs.p_s[j, k], rel=1e-9, abs=1e-9)
    # utilities credited = g(JRT) and JRT ≥ the no-queue lower bound
    for j in np.flatnonzero(sim.completed):
        k = sim.server_of[j]
        assert sim.jrt_s[j] >= jobs.up_s[j, k] + jobs.p_s[j, k] + jobs.down_s[j, k] - 1e-9
        assert sim.utility[j] == jobs.utilities[j](sim.jrt_s[j])
    if fallback != "none":
        assert sim.completed.all()
    assert sim.utility.sum() <= upper_bound(jobs).sum() + 1e-9
    # O4A: α-separation (T1), |I| = p† and I ⊆ [a, d†] (T2), densities 0 or powers of two (T3)
    alpha = O4AParams().alpha_value
    for snap in snaps:
        for k, (u, s, e, d, a) in enumerate(snap):
            assert u == 0.0 or math.log2(u) == int(math.log2(u))
            assert s[0] >= a - 1e-9 and e[-1] == pytest.approx(d)
            for u2, s2, e2, _, _ in snap[k + 1 :]:
                if _overlap(s, e, s2, e2):
                    lo, hi = sorted((u, u2))
                    assert lo == 0.0 and hi > 0 or hi > alpha * lo


def test_o4a_sets_have_tentative_length_and_in_set_job_runs():
    rng = np.random.default_rng(3)
    jobs = random_jobs(rng, J=14, S=1, cloud=False)
    sim = UtilitySimulator(jobs, 1, False, "o4a", record=True)
    srv = sim.servers[0]
    for k in range(jobs.num_jobs):
        sim.advance_to(float(jobs.release_s[k]))
        sim.dispatch(k, 0)
        q = [q for q in srv.jobs if q.id == k][0]
        length = sum(e - s for s, e in zip(q.starts, q.ends, strict=True))
        assert length == pytest.approx(tentative_time(jobs.p_est_s[k, 0], 1.0, 0.02, 0.8))
        # T4: whenever a job is inside its set and ready, the picked job is the densest such job
        t = sim.now
        E = [x for x in srv.jobs if x.a <= t and x.in_set(t)]
        if E:
            assert srv._pick(t) is max(E, key=lambda x: x.u)
    sim.drain()
    assert sim.completed.all()


def test_latency_commit_is_deferred():
    rng = np.random.default_rng(0)
    jobs = random_jobs(rng, J=6, S=2, cloud=True)
    sim, _ = _run(jobs, 2, True, "o4a", rng, latency=0.1)
    for srv in sim.servers:
        for s, _e, j in srv.segments:
            k = sim.server_of[j]
            assert s >= jobs.release_s[j] + 0.1 + jobs.up_s[j, k] - 1e-9
    assert sim.completed.all()


def test_ondisc_increase_formula_all_ready():
    # all jobs ready: Inc = Δ↑ + Σ_{ρq ≤ ρi} ρq + ρi + Δ↓ + ρi·#{ρq > ρi} (spec §5.4), zero delays
    jobs = single_server_jobs([0, 0, 0, 0], [1.0, 3.0, 5.0, 2.0], [constant(1)] * 4)
    sim = UtilitySimulator(jobs, 1, False, "srpt")
    for k in range(3):
        sim.dispatch(k, 0)
    inc = sim.jrt_increase(3)[0]
    assert inc == pytest.approx(1.0 + 2.0 + 2.0 * 2)
