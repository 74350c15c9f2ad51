"""A_online (paper 004): hand-computed schedules, T1-T3, T8 (per-arrival == batch), kernel == literal pseudo-code,
the primal-dual certificate (T4) and the competitive ratio against the LP bound (T7) on small instances."""

import itertools

import numpy as np
import pytest
from edgegym.agents.reference.hetero_ml import AOnlineParams, AOnlinePerArrival, aonline_batch, maxweight_once

from edgegym.families.hetero_ml.bounds import lp_lower_bound, simple_lower_bound
from edgegym.families.hetero_ml.instance import build_instance
from edgegym.families.hetero_ml.mincost import SubRound, mincost, mincost_reference
from edgegym.families.hetero_ml.presets import load_preset
from edgegym.families.hetero_ml.simulator import (
    duration_slots,
    iteration_slots,
    verify_schedule,
)
from edgegym.families.hetero_ml.testing import hand_cluster, hand_jobs


def _inst(name, seed, **workload):
    p = load_preset(name)
    if workload:
        p = p.replace(workload=workload)
    return p, build_instance(p, np.random.default_rng(seed))


@pytest.mark.parametrize("arch", ["ps", "ra"])
def test_hand_computed_single_job(arch):
    # W = 40, v = 0.1, U = 1e-5: co-located N = 2 needs L = 3 slots (PS: ceil(2.0002); RA: ceil(2.0001)); the first
    # round whose window fits L = 3 is tau_3 = 4 (t^- <= tau - L = 1). Faithful: offset alpha tau_3 = 16 -> start 16,
    # completion 19. Eager: offset tau_3 = 4 -> start 4, completion 7.
    c, jb = hand_cluster(arch, 1), hand_jobs()
    par = AOnlineParams(alpha=4, horizon=16)
    res = aonline_batch(c, jb, par)
    pl = res.placements[0]
    assert (pl.start, pl.duration, pl.num_workers, res.where[0]) == (16, 3, 2, (3, 1))
    assert verify_schedule(c, jb, res.placements) == pytest.approx(1000.0 * 19)
    eager = aonline_batch(c, jb, par, mode="eager")
    assert (eager.placements[0].start, eager.placements[0].completion) == (4, 7)


def test_hand_computed_two_jobs_conflict():
    # one server: 2 workers + 1 PS use 10 of 16 vCPUs, so the two jobs cannot overlap. Faithful round 3: job 0 in
    # sub-round 1 ([16, 19)); job 1 has no room in sub-round 1 and goes to sub-round 2, offset 16 + 4 = 20 -> c = 23.
    # Eager: job 0 [4, 7); job 1's sub-round 1 window [4, 7) is taken, sub-round 2 offset 8 -> c = 11.
    c, jb = hand_cluster("ps", 1), hand_jobs(arrivals=(1, 1), weights=(1000.0, 2000.0))
    par = AOnlineParams(alpha=4, horizon=16)
    res = aonline_batch(c, jb, par)
    assert [res.placements[j].completion for j in (0, 1)] == [19, 23]
    assert res.where == {0: (3, 1), 1: (3, 2)}
    assert verify_schedule(c, jb, res.placements) == pytest.approx(1000 * 19 + 2000 * 23)
    eager = aonline_batch(c, jb, par, mode="eager")
    assert [eager.placements[j].completion for j in (0, 1)] == [7, 11]


def test_spread_when_colocation_impossible():
    # 2 servers with 2 GPUs each, a job of D = 4 one-GPU workers: all 4 cannot share a server, so the fastest
    # plans spread them; the declared duration equals the simulated one (E14) and (2i) holds.
    from edgegym.families.hetero_ml.simulator import HeteroCluster, HeteroJobs

    c = HeteroCluster(np.tile([2.0, 16.0, 64.0, 10.0], (2, 1)), np.array([[1.0, 2.0, 8.0, 0.1]]),
                      np.array([[0.0, 2.0, 8.0, 5.0]]), arch="ps")
    jb = HeteroJobs([1], [1000.0], [2], [4], [10], [[0.1]], [[0.0]], [0.0], [450.0])
    res = aonline_batch(c, jb, AOnlineParams(alpha=2, horizon=16))
    pl = res.placements[0]
    verify_schedule(c, jb, res.placements)
    assert not pl.colocated and pl.num_workers in (3, 4)
    assert pl.duration == duration_slots(80, pl.num_workers, iteration_slots(c, jb, 0, 0, 0, pl.num_workers, False))


@pytest.mark.parametrize("name", ["tiny", "tiny-ra"])
@pytest.mark.parametrize("tie", ["earliest_completion", "paper_order"])
def test_per_arrival_equals_batch_T8(name, tie):
    for seed in range(4):
        p, inst = _inst(name, seed, num_jobs=12)
        par = AOnlineParams(alpha=3, horizon=p.workload.horizon_slots, tie_break=tie)
        batch = aonline_batch(inst.cluster, inst.jobs, par)
        pa = AOnlinePerArrival(inst.cluster, par)
        for j in range(inst.jobs.num_jobs):
            pl, ref = pa.decide(inst.jobs, j), batch.placements[j]
            assert (pl.start, pl.duration, pl.worker_type, pl.ps_type) == (ref.start, ref.duration, ref.worker_type, ref.ps_type)
            np.testing.assert_array_equal(pl.workers, ref.workers)
            np.testing.assert_array_equal(pl.ps, ref.ps)
        assert pa.where == batch.where


@pytest.mark.parametrize("name", ["tiny", "tiny-ra", "rl"])
def test_feasibility_windows_and_lemma1_T1_T2_T3(name):
    for seed in range(2):
        p, inst = _inst(name, seed)
        par = AOnlineParams(alpha=4, horizon=p.workload.horizon_slots)
        for mode in ("faithful", "eager"):
            res = aonline_batch(inst.cluster, inst.jobs, par, mode=mode)
            obj = verify_schedule(inst.cluster, inst.jobs, res.placements)  # T1 (raises on any violation)
            if mode != "faithful":
                continue
            for j, (i, iota) in res.where.items():  # T2
                tau = par.tau_of(i)
                pl = res.placements[j]
                assert par.alpha * tau + (iota - 1) * tau <= pl.start
                assert pl.completion <= par.alpha * tau + iota * tau - 1
                assert pl.completion < par.alpha * par.tau_of(i + 1)
                assert par.tau_of(i) >= inst.jobs.arrival[j]
            bound = sum(par.alpha * par.tau_of(i + 1) * w for i, w in res.round_weight.items())  # T3
            assert obj <= bound + 1e-6


@pytest.mark.parametrize("name", ["tiny", "tiny-ra"])
def test_kernel_equals_literal_pseudocode(name):
    p = load_preset(name)
    checked = found = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        inst = build_instance(p, rng)
        c = inst.cluster
        tau = int(rng.choice([4, 8, 16]))
        used = rng.uniform(0, 1, size=(c.num_servers, c.num_resources, tau)) * c.capacity[:, :, None] * rng.uniform()
        used[:, :2] = np.floor(used[:, :2])
        S = SubRound(c, tau, 1, 1e3, init_used=used)
        for j in range(inst.jobs.num_jobs):
            for tie in ("earliest_completion", "paper_order"):
                thr = float(inst.jobs.weight[j]) * float(rng.choice([1e-3, 1e-2, 1.0, 100.0]))
                a, b = mincost(S, inst.jobs, j, thr, tie), mincost_reference(S, inst.jobs, j, thr, tie)
                checked += 1
                assert (a is None) == (b is None)
                if a is not None:
                    found += 1
                    assert a.cost == pytest.approx(b.cost, rel=1e-9, abs=1e-12)
                    assert a.completion == b.completion
                    if tie == "earliest_completion" or a.cost != b.cost:
                        assert a.key() == b.key()
    assert found > checked // 4


def _all_schedules(c, jb, j, tau):
    """Γ_j of program (8) on a tiny instance: every start, type pair, duration L with N = ceil(W/(L rho)) workers,
    every per-server split (y) and PS placement (s), each fitting an empty server set, completing by tau."""
    H = c.num_servers
    out = []
    W = float(jb.work[j])
    for m, p in itertools.product(range(c.num_worker_types), range(c.num_ps_types) if c.arch == "ps" else [-1]):
        for n in range(1, int(jb.chunks[j]) + 1):
            for y in itertools.product(range(n + 1), repeat=H):
                if sum(y) != n:
                    continue
                y = np.array(y)
                ps_opts = [np.zeros(H, dtype=int)] if c.arch == "ra" else []
                if c.arch == "ps":
                    for h in range(H):
                        for k in range(1, 4):
                            s = np.zeros(H, dtype=int)
                            s[h] = k
                            if (n - y[h]) * c.worker_bw[m] <= k * c.ps_bw[p] + 1e-9:
                                ps_opts.append(s)
                for s in ps_opts:
                    q = np.count_nonzero((y > 0) | (s > 0)) == 1
                    if c.arch == "ra" and n > 1 and not q and np.count_nonzero(y) == 1:
                        continue
                    f = np.outer(y, c.worker_res[m]) + (np.outer(s, c.ps_res[p]) if c.arch == "ps" else 0)
                    if np.any(f > c.capacity + 1e-9):
                        continue
                    d = duration_slots(W, n, iteration_slots(c, jb, j, m, p, n, q))
                    for t in range(1, tau - d + 1):
                        out.append((t, d, f / c.cbar))
    return out


@pytest.mark.parametrize("arch", ["ps", "ra"])
def test_dual_certificate_T4(arch):
    """OPT(8) <= LP(8) <= D = Σ u_j + Σ delta Ĉ: (u, delta_final) is dual feasible for (9) when the min-cost
    subroutines are exact (Thm. 2); a violation would expose a non-optimal subroutine (Thm. 1)."""
    from scipy.optimize import linprog

    from edgegym.families.hetero_ml.simulator import HeteroCluster, HeteroJobs

    ratios = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        c = HeteroCluster(np.tile([2.0, 8.0, 32.0, 10.0], (2, 1)), np.array([[1.0, 2.0, 8.0, 0.5]]),
                          np.array([[0.0, 2.0, 4.0, 5.0]]) if arch == "ps" else np.zeros((1, 4)), arch=arch)
        J = 5
        jb = HeteroJobs(np.ones(J, int), rng.uniform(0.05, 0.5, J), rng.integers(1, 3, J), rng.integers(1, 4, J),
                        rng.integers(2, 5, J), rng.uniform(0.1, 0.4, (J, 1)), np.zeros((J, 1)), np.zeros(J),
                        rng.uniform(30, 300, J))
        tau = 8
        par = AOnlineParams(alpha=1, horizon=tau, lambda_override=50.0)
        acc, duals, S = maxweight_once(c, jb, par, tau)
        D = sum(duals.values()) + S.dual_value()
        # LP(8) over the enumerated schedules
        cols, rows, cost = [], [], []
        A = []
        for j in range(J):
            for t, d, fh in _all_schedules(c, jb, j, tau):
                cost.append(-float(jb.weight[j]))
                A.append((j, t, d, fh))
        n = len(A)
        R, H = 4, 2
        A_ub = np.zeros((J + H * R * (tau - 1), n))
        for k, (j, t, d, fh) in enumerate(A):
            A_ub[j, k] = 1.0
            for s in range(t, t + d):
                A_ub[J + ((s - 1) * H * R) : J + (s * H * R), k] = fh.reshape(-1)
        b_ub = np.concatenate([np.ones(J), np.tile((c.capacity / c.cbar).reshape(-1), tau - 1)])
        lp = -linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=(0, 1), method="highs").fun
        P = sum(float(jb.weight[j]) for j, _ in acc)
        assert P <= lp + 1e-9
        assert lp <= D + 1e-6
        ratios.append(lp / max(P, 1e-12))
    assert all(r >= 1 - 1e-9 for r in ratios)


def test_competitive_ratio_against_lp_bound_T7():
    """ALG <= 4 alpha LB_LP (LB_LP <= OPT, so this implies the 4 alpha-competitiveness of Lemma 1) on tiny traces."""
    for name in ("tiny", "tiny-ra"):
        for seed in range(3):
            p, inst = _inst(name, seed)
            par = AOnlineParams(alpha=4, horizon=p.workload.horizon_slots)
            alg = verify_schedule(inst.cluster, inst.jobs, aonline_batch(inst.cluster, inst.jobs, par).placements)
            lb = lp_lower_bound(inst.cluster, inst.jobs, upper_bound=alg)
            assert simple_lower_bound(inst.cluster, inst.jobs) <= lb + 1e-6 <= alg + 1e-6
            assert alg <= 4 * par.alpha * lb
