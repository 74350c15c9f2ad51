"""WirelessUDL simulator core: kernels and costs against numbers computed by hand from spec 001."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgegym.families.wireless_udl import _kernels as kn
from edgegym.families.wireless_udl.costs import latency_cost
from edgegym.families.wireless_udl.disciplines import OkitaDiscipline
from edgegym.families.wireless_udl.instance import make_instance
from edgegym.families.wireless_udl.simulator import Plan, Simulator, make_static, tentative
from edgegym.families.wireless_udl.testing import check_schedule

Q2 = np.array([[0.0, 0.05], [0.05, 0.0]])


# ---------------------------------------------------------------------------------------------- costs
def test_latency_cost_shapes_by_hand():
    # exp ("Sigmoid", spec E1): τ e^{0.25 L}
    assert latency_cost(0, 10.0, 0, 0, 0, 0, 2) == pytest.approx(10 * math.exp(0.5))
    # linear: τ L + b
    assert latency_cost(1, 10.0, 5.0, 0, 0, 0, 3) == pytest.approx(35.0)
    # piecewise: τ1 if L < c else τ2
    assert latency_cost(2, 0, 0, 7.0, 300.0, 3, 2) == 7.0
    assert latency_cost(2, 0, 0, 7.0, 300.0, 3, 3) == 300.0
    v = latency_cost(np.array([0, 1, 2]), 10.0, 5.0, 7.0, 300.0, 3, np.array([1, 1, 5]))
    np.testing.assert_allclose(v, [10 * math.exp(0.25), 15.0, 300.0])


# ---------------------------------------------------------------------------------------------- kernels
def test_split_local_first_then_q_order():
    # y = (1, 2) workers, κ = 3 → capacity (3, 6); data (5, 1): local (3, 1), 5 spare at site 1 takes 2 more
    d = kn.split(np.array([1, 2]), np.array([5, 1]), 3, 1, np.array([1, 0]))
    np.testing.assert_array_equal(d, [3, 3])
    # window (h = 2): capacity (6, 12), all 6 chunks trained locally where possible: (5, 1)
    np.testing.assert_array_equal(kn.split(np.array([1, 2]), np.array([5, 1]), 3, 2, np.array([1, 0])), [5, 1])


def test_dta_cheapest_source_first():
    q = np.array([[0, 1.0, 3.0], [1.0, 0, 2.0], [3.0, 2.0, 0]])
    src = np.argsort(q.T, axis=1, kind="stable")
    # site 2 needs 4 chunks beyond its own 1; sites 0 and 1 have surplus 3 and 2: site 1 (price 2) first
    S = np.array([3, 2, 1])
    d = np.array([0, 0, 5])
    cost, g, used = kn.dta(S, d, q, src, True)
    assert g[1, 2] == 2 and g[0, 2] == 2 and g[2, 2] == 1
    assert cost == pytest.approx(2 * 2.0 + 2 * 3.0)
    np.testing.assert_array_equal(used, [2, 2, 1])


def test_pa_places_ps_and_fills_in_q_order():
    U = np.array([[4.0], [4.0], [1.0]])
    q = np.array([[0, 0.1, 0.2], [0.1, 0, 0.3], [0.2, 0.3, 0]])
    m, n = np.array([1.0]), np.array([1.0])
    order = np.array([2, 0, 1])
    unit, y, ps = kn.pa(U, order, q, m, n, 4, True)
    # fill order 2, 0, 1: PS at 0 → y = (3, 0, 1): cost 0.2; PS at 1 → (3, 0, 1) cost 0.1+... (=3·0.1+0.3=0.6);
    # PS at 2 → site 2 has no room for a worker: (4, 0, 0) cost 0.8
    assert ps == 0 and unit == pytest.approx(0.2)
    np.testing.assert_array_equal(y, [3, 0, 1])
    cost_all, ps_all = kn.pa_all_n(U, order, q, m, n, 7, True)
    for N in range(1, 8):
        c1, _, p1 = kn.pa(U, order, q, m, n, N, True)
        assert (ps_all[N], cost_all[N]) == (p1, pytest.approx(c1)) if p1 >= 0 else ps_all[N] == -1


def test_pa_tie_rule_le_picks_last_tied_site():
    U = np.array([[2.0], [2.0]])
    q = np.zeros((2, 2))
    assert kn.pa(U, np.array([0, 1]), q, np.array([1.0]), np.array([1.0]), 1, True)[2] == 1
    assert kn.pa(U, np.array([0, 1]), q, np.array([1.0]), np.array([1.0]), 1, False)[2] == 0


def test_earliest_fit_by_hand():
    from edgegym.families.wireless_udl.candidates import earliest_fit

    cal = np.array([[[2.0]], [[0.0]], [[2.0]], [[2.0]], [[0.0]], [[2.0]], [[2.0]], [[2.0]]])  # (8 slots, 1 site, K=1)
    dem = np.array([[1.0]])
    assert earliest_fit(cal, dem, 0, 1) == 0
    assert earliest_fit(cal, dem, 0, 2) == 2
    assert earliest_fit(cal, dem, 0, 3) == 5
    assert earliest_fit(cal, dem, 0, 4) == -1
    assert earliest_fit(cal, np.zeros((1, 1)), 3, 2) == 3


def test_prop_quota_by_hand_and_property():
    o = kn.prop_quota(np.array([3, 1]), np.array([3, 1]), 2)  # shares 1.5 / 0.5 → tie, lower index first
    np.testing.assert_array_equal(o, [2, 0])
    rng = np.random.default_rng(0)
    for _ in range(200):
        D = rng.integers(0, 9, size=rng.integers(1, 6))
        if D.sum() == 0:
            continue
        M = D.copy()
        while M.sum() > 0:
            X = int(rng.integers(1, M.sum() + 1))
            o = kn.prop_quota(M, D, X)
            assert o.sum() == X and np.all(o >= 0) and np.all(o <= M)
            M = M - o
            trained = D - M
            assert np.all(np.abs(trained - D * trained.sum() / D.sum()) < 1 + 1e-9)


@pytest.mark.skipif(not kn.HAVE_NUMBA, reason="numba not installed: the kernels already run as Python")
def test_compiled_kernels_match_pure_python():
    rng = np.random.default_rng(1)
    for _ in range(30):
        R, K = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        U = rng.integers(0, 9, size=(R, K)).astype(float)
        cap = U + rng.integers(0, 4, size=(R, K))
        q = rng.uniform(0.02, 0.08, size=(R, R))
        q = np.triu(q, 1) + np.triu(q, 1).T
        src = np.argsort(q.T, axis=1, kind="stable")
        m = rng.integers(0, 3, size=K).astype(float)
        n = rng.integers(0, 3, size=K).astype(float)
        M = rng.integers(0, 6, size=R)
        D = M + rng.integers(0, 3, size=R)
        qbar = q.sum(axis=1) / max(R - 1, 1)
        o1 = kn.site_order(U, cap, qbar, M, D, 1.0, 1.0, 1.0)[0]
        np.testing.assert_array_equal(o1, kn.PURE["site_order"](U, cap, qbar, M, D, 1.0, 1.0, 1.0)[0])
        N = int(rng.integers(1, 6))
        a, b = kn.pa(U, o1, q, m, n, N, True), kn.PURE["pa"](U, o1, q, m, n, N, True)
        assert a[2] == b[2] and np.array_equal(a[1], b[1])
        a, b = kn.pa_all_n(U, o1, q, m, n, 6, True), kn.PURE["pa_all_n"](U, o1, q, m, n, 6, True)
        np.testing.assert_array_equal(a[1], b[1])
        y = rng.integers(0, 3, size=R)
        d = kn.split(y, M, 2, 1, o1)
        np.testing.assert_array_equal(d, kn.PURE["split"](y, M, 2, 1, o1))
        a, b = kn.dta(M, d, q, src, True), kn.PURE["dta"](M, d, q, src, True)
        assert a[0] == pytest.approx(b[0]) and np.array_equal(a[1], b[1])
        cal = rng.integers(0, 4, size=(12, R, K)).astype(float)
        dem = rng.integers(0, 2, size=(R, K)).astype(float)
        used = np.flatnonzero(dem.any(axis=1)).astype(np.int64)
        assert kn.earliest_fit(cal, dem, used, 1, 3, 12) == kn.PURE["earliest_fit"](cal, dem, used, 1, 3, 12)
        if D.sum() and d.sum() <= M.sum():
            np.testing.assert_array_equal(kn.prop_quota(M, D, int(d.sum())), kn.PURE["prop_quota"](M, D, int(d.sum())))


# ---------------------------------------------------------------------------------------------- hand instance
def _job(kind="exp", **kw):
    base = dict(cap=[[4.0], [4.0]], q=Q2, arrival=[0], kappa=2, chunk_mb=10.0, param_mb=100.0, m=[[1.0]],
                n=[[1.0]], data=[[3, 1]], kind=kind, tau=10.0, b=5.0, tau1=7.0, tau2=300.0, c=2)
    base.update(kw)
    return make_instance(**base)


@pytest.mark.parametrize("sampling", ["proportional", "complete"])
@pytest.mark.parametrize("kind, latency2", [("exp", 10 * math.exp(0.5)), ("linear", 25.0), ("piecewise", 300.0)])
def test_commit_costs_by_hand(sampling, kind, latency2):
    """One job, 2 sites, q = 0.05/MB, δ = 10 MB, π = 100 MB, κ = 2, data (3, 1).

    Plan A: 2 workers + PS at site 0 → l = 1; site 0 trains 4 chunks, pulls site 1's chunk: 0.05·10 = 0.5;
    no parameter cost; latency 1. Plan B: 1 worker at site 1, PS at site 0 → l = 2; 3 chunks move 0 → 1
    (1.5); parameters 2 slots × 100 × 0.05 = 10; latency 2.
    """
    inst = _job(kind)
    sim = Simulator(inst, sampling=sampling, record=True)
    sim.arrive(0)
    cost_a = sim.commit(Plan(0, 0, np.array([2, 0]), 0))
    lat1 = {"exp": 10 * math.exp(0.25), "linear": 15.0, "piecewise": 7.0}[kind]
    assert cost_a == pytest.approx(0.5 + lat1)
    assert check_schedule(sim) == pytest.approx(sim.total_cost())
    sim = Simulator(inst, sampling=sampling, record=True)
    sim.arrive(0)
    cost_b = sim.commit(Plan(0, 0, np.array([0, 1]), 0))
    assert sim.transfer[0] == pytest.approx(1.5) and sim.param[0] == pytest.approx(10.0)
    assert cost_b == pytest.approx(11.5 + latency2)
    assert check_schedule(sim) == pytest.approx(cost_b)
    assert sim.t_last[0] == 1


def test_proportional_sampling_moves_data_per_slot_shares():
    # plan B in proportional mode: slot 0 trains origin (2, 0) [shares 1.5/0.5, tie → lower index], slot 1 (1, 1)
    sim = Simulator(_job(), sampling="proportional", record=True)
    sim.arrive(0)
    sim.commit(Plan(0, 0, np.array([0, 1]), 0))
    g0, g1 = sim.log[0].g, sim.log[1].g
    np.testing.assert_array_equal(g0, [[0, 2], [0, 0]])
    np.testing.assert_array_equal(g1, [[0, 1], [0, 1]])


def test_illegal_plans_raise():
    sim = Simulator(_job())
    sim.arrive(0)
    with pytest.raises(ValueError, match="over-commits"):
        sim.commit(Plan(0, 0, np.array([4, 0]), 0))  # 4 workers + PS > 4 units at site 0
    with pytest.raises(ValueError, match="at least one worker"):
        sim.commit(Plan(0, 0, np.array([0, 0]), 0))


# ---------------------------------------------------------------------------------------------- Okita cases
def test_s1_single_site_data_gives_local_plan_and_zero_bandwidth():
    """S1: all data at site 0, roomy site, large q → PS and all workers at 0, B = 0, N = ceil(D/κ) (l = 1)."""
    inst = make_instance(cap=[[10.0], [10.0]], q=[[0, 5.0], [5.0, 0]], arrival=[0], kappa=2, chunk_mb=10.0,
                         param_mb=100.0, m=[[1.0]], n=[[1.0]], data=[[8, 0]], tau=10.0)
    st = make_static(inst)
    tab = tentative(inst, st, 0, inst.cap, inst.data[0].copy(), 0)
    assert tab["best"] == 4 and tab["ps"][4] == 0 and tab["l"][4] == 1
    assert tab["param"][4] == 0 and tab["transfer"][4] == 0
    sim = Simulator(inst, mode="replan", static=st, discipline=OkitaDiscipline(), record=True)
    sim.arrive(0)
    cost, trunc = sim.run_off()
    assert not trunc and cost == pytest.approx(10 * math.exp(0.25))
    assert sim.transfer[0] == 0 and sim.param[0] == 0


def _two_jobs(data, chunk_mb):
    return make_instance(cap=[[3.0], [3.0]], q=Q2, arrival=[0, 0], kappa=2, chunk_mb=chunk_mb, param_mb=100.0,
                         m=[[1.0]], n=[[1.0]], data=data, tau=10.0)


@pytest.mark.parametrize("chunk_mb, decision", [(10.0, "migrate"), (100.0, "delay")])
def test_s3_conflict_migrate_or_delay_by_hand(chunk_mb, decision):
    """S3: two identical jobs with all 4 chunks at site 0 (κ = 2): tentative N* = 2, l* = 1, PS + workers at
    site 0 (3 units = its capacity). Equal priority → job 0 keeps; job 1 conflicts. Migrate = PS + 2
    workers at site 1, moving 4 chunks: cost1 = 4·δ·0.05 + f(1); delay: cost2 = f(2) (Δ = l_0* = 1).
    δ = 10: 2 + 12.84 < 16.49 → migrate; δ = 100: 20 + 12.84 > 16.49 → delay (job 1 runs in slot 1)."""
    inst = _two_jobs([[4, 0], [4, 0]], chunk_mb)
    disc = OkitaDiscipline()
    sim = Simulator(inst, mode="replan", discipline=disc, record=True)
    sim.arrive(0)
    sim.arrive(1)
    cost, _ = sim.run_off()
    f1, f2 = 10 * math.exp(0.25), 10 * math.exp(0.5)
    assert disc.decisions[decision] == 1 and disc.decisions["keep"] == 1 + (decision == "delay")
    if decision == "migrate":
        assert sim.t_last.tolist() == [0, 0]
        assert cost == pytest.approx(2 * f1 + 4 * chunk_mb * 0.05)
    else:
        assert sim.t_last.tolist() == [0, 1]
        assert cost == pytest.approx(f1 + f2)
    assert check_schedule(sim, unbiased=True) == pytest.approx(cost)


# ---------------------------------------------------------------------------------------------- sub-routines vs exact
def test_dta_never_beats_the_transportation_optimum():
    """DTA is a greedy for (7); the transportation LP (exact, spec E4) is a lower bound, tight with one deficit."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(7)
    for _ in range(40):
        R = int(rng.integers(2, 6))
        q = np.triu(rng.uniform(0.02, 0.08, size=(R, R)), 1)
        q = q + q.T
        src = np.argsort(q.T, axis=1, kind="stable")
        S = rng.integers(0, 8, size=R)
        d = rng.integers(0, 8, size=R)
        if d.sum() > S.sum():
            continue
        cost, g, _ = kn.dta(S, d, q, src, True)
        H = S - d
        sup, dem = np.flatnonzero(H > 0), np.flatnonzero(H < 0)
        if dem.size == 0:
            assert cost == 0
            continue
        c = np.array([q[a, b] for a in sup for b in dem])
        A_ub = np.zeros((sup.size, c.size))
        A_eq = np.zeros((dem.size, c.size))
        for k, (a, b) in enumerate((a, b) for a in sup for b in dem):
            A_ub[list(sup).index(a), k] = 1
            A_eq[list(dem).index(b), k] = 1
        lp = linprog(c, A_ub=A_ub, b_ub=H[sup], A_eq=A_eq, b_eq=-H[dem], bounds=(0, None), method="highs")
        assert cost >= lp.fun - 1e-9
        if dem.size == 1:
            assert cost == pytest.approx(lp.fun)
        np.testing.assert_array_equal(g.sum(axis=0), d)  # every target met


def test_pa_never_beats_the_exact_placement():
    """(5) with the PS site fixed is solved exactly by filling sites in ascending q^{r,ps} (spec E5)."""
    rng = np.random.default_rng(8)
    for _ in range(40):
        R, K = int(rng.integers(2, 6)), int(rng.integers(1, 3))
        U = rng.integers(1, 6, size=(R, K)).astype(float)
        q = np.triu(rng.uniform(0.02, 0.08, size=(R, R)), 1)
        q = q + q.T
        m = rng.integers(0, 2, size=K).astype(float)
        m[0] = 1.0
        n = rng.integers(0, 2, size=K).astype(float)
        order = rng.permutation(R)
        N = int(rng.integers(1, 6))
        unit, y, ps = kn.pa(U, order, q, m, n, N, True)
        best = np.inf
        for rt in range(R):
            if np.any(U[rt] < n):
                continue
            asc = np.argsort(q[:, rt], kind="stable")
            y2 = kn.fill(U, asc, m, n, N, rt)
            if y2[0] >= 0:
                best = min(best, float(q[:, rt] @ y2))
        if ps < 0:
            assert best == np.inf
        else:
            assert unit >= best - 1e-12
            assert y.sum() == N and np.all(np.outer(y, m) + np.eye(R)[ps][:, None] * n <= U + 1e-9)
