"""Differential tests of the WirelessUDL env's compiled per-step kernels (issue 20: ``candidate_table``,
``run_plan``, ``observe`` in ``edgegym/families/wireless_udl/_kernels.py``) against the numpy code they replaced,
kept as the oracle in ``_reference.py``: on >= 1,000 random states (random legal actions, presets tiny, testbed,
the default sim, the v1 ids, ``complete`` and ``proportional`` sampling, every latency cost shape, the calendar
extension under extreme load, the replan mode), the candidate tables (every field), masks, observations, rewards,
infos and episode metrics are identical (``==``, no tolerance)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from edgegym.families.wireless_udl import _kernels as kn
from edgegym.families.wireless_udl import _reference as ref
from edgegym.families.wireless_udl.candidates import _latency_vector
from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.instance import build_instance
from edgegym.families.wireless_udl.presets import load_preset
from edgegym.families.wireless_udl.simulator import Plan, job_latency_cost
from edgegym.families.wireless_udl.testing import assert_same_candidates

SHORT = {"count": 40, "horizon_slots": 60, "arrival_window": [0, 59]}  # the sim preset's arrival rate, fewer jobs


def _lockstep(preset, config, seed, rng, policy="random"):
    """One episode of the compiled env and of the reference env in lockstep; the number of states compared."""
    e1 = WirelessUDLEnv(preset, config=config)
    e2 = WirelessUDLEnv(preset, config=config)
    e2._use_reference = True
    o1, i1 = e1.reset(seed=seed)
    o2, i2 = e2.reset(seed=seed)
    states = 0
    while True:
        where = f"{preset} {config} seed {seed} job {e1._k}"
        np.testing.assert_array_equal(o1, o2, err_msg=where)
        assert o1.dtype == o2.dtype == np.float32
        np.testing.assert_array_equal(i1["action_mask"], i2["action_mask"], err_msg=where)
        np.testing.assert_array_equal(e1.action_masks(), e2.action_masks(), err_msg=where)
        if e1.mode == "commit":
            assert_same_candidates(e1._cand, e2._cand, where)
            np.testing.assert_array_equal(o1, ref.observation(e1), err_msg=where)  # the reference on the same state
        states += 1
        mask = e1.action_masks()
        if policy == "random":
            a = int(rng.choice(np.flatnonzero(mask)))
        elif policy == "any":  # masked actions too (the env falls back to the cheapest legal row)
            a = int(rng.integers(mask.size))
        else:  # a Plan through the structured API (check_plan runs)
            a = e1._cand.plan(e1._k, int(rng.choice(np.flatnonzero(mask))))
        o1, r1, t1, tr1, i1 = e1.step(a)
        o2, r2, t2, tr2, i2 = e2.step(a)
        assert (r1, t1, tr1) == (r2, t2, tr2), where
        assert {k: v for k, v in i1.items() if k != "action_mask"} == {k: v for k, v in i2.items()
                                                                       if k != "action_mask"}, where
        if t1 or tr1:
            np.testing.assert_array_equal(o1, o2, err_msg=where)
            assert i1["episode_metrics"] == i2["episode_metrics"], where
            assert e1.episode_return() == e2.episode_return()
            return states


@pytest.mark.parametrize("preset", ["tiny", "testbed", "sim", "tiny-v1", "testbed-v1", "sim-v1",
                                    "sim-exp-proportional", "sim-exp-proportional-v1", "paper-literal"])
def test_episodes_match_reference_on_presets(preset):
    rng = np.random.default_rng(0)
    cfg = None if preset.startswith(("tiny", "testbed")) else {"jobs": SHORT}
    states = sum(_lockstep(preset, cfg, seed, rng) for seed in range(2))
    assert states > 0


@pytest.mark.parametrize("shape", ["exp", "linear", "piecewise", "logistic"])
@pytest.mark.parametrize("sampling", ["complete", "proportional"])
def test_episodes_match_reference_for_every_cost_shape_and_sampling(shape, sampling):
    rng = np.random.default_rng(1)
    cfg = {"jobs": {**SHORT, "count": 25, "latency_cost": shape}, "env": {"sampling": sampling}}
    for preset in ("sim", "sim-v1"):
        assert _lockstep(preset, cfg, 3, rng) == 25


def test_at_least_1000_random_states_match_reference():
    """Random presets, sizes, loads, worker grids, wait limits and shapes: >= 1,000 decision states."""
    rng = np.random.default_rng(2)
    states = seed = 0
    while states < 1000:
        r = np.random.default_rng(seed)
        preset = ["tiny", "testbed", "sim", "sim-v1", "testbed-v1"][seed % 5]
        p = load_preset(preset)
        T = int(r.integers(5, 40))
        cfg = {"jobs": {"count": int(r.integers(5, 30)), "horizon_slots": T, "arrival_window": [0, T - 1],
                        "latency_cost": ["exp", "linear", "piecewise", "logistic"][int(r.integers(4))]},
               "env": {"sampling": ["complete", "proportional"][int(r.integers(2))],
                       "worker_counts": int(r.integers(1, 10)), "wait_max_slots": int(r.integers(0, 40)),
                       "obs_relative": bool(r.integers(2)), "calendar_slots": int(r.integers(1, 10))}}
        if p.cluster.sites > 20:
            cfg["cluster"] = {"sites": int(r.integers(2, 20))}
        states += _lockstep(preset, cfg, seed, rng, policy=["random", "random", "any", "plan"][seed % 4])
        seed += 1
    assert states >= 1000


def test_extreme_load_calendar_extension_matches_reference():
    """100 jobs in 20 slots book the calendar to its end: it doubles (same tables, same episode)."""
    rng = np.random.default_rng(3)
    assert _lockstep("sim", {"jobs": {"horizon_slots": 20, "arrival_window": [0, 19]}}, 0, rng) == 100


def test_replan_mode_observation_matches_reference():
    rng = np.random.default_rng(4)
    for disc in ("okita", "fifo"):
        cfg = {"jobs": {**SHORT, "count": 15}, "env": {"mode": "replan", "discipline": disc}}
        assert _lockstep("sim", cfg, 0, rng) == 15
        assert _lockstep("testbed-v1", {"env": {"mode": "replan", "discipline": disc}}, 1, rng) > 0


def test_recording_commit_equals_compiled_commit():
    """``record_schedule`` runs the slots one by one in Python (``execute``): same rewards and metrics."""
    rng = np.random.default_rng(5)
    e1 = WirelessUDLEnv("sim", config={"jobs": SHORT})
    e2 = WirelessUDLEnv("sim", config={"jobs": SHORT, "env": {"record_schedule": True}})
    e1.reset(seed=0)
    e2.reset(seed=0)
    while True:
        a = int(rng.choice(np.flatnonzero(e1.action_masks())))
        s1, s2 = e1.step(a), e2.step(a)
        np.testing.assert_array_equal(s1[0], s2[0])
        assert s1[1:4] == s2[1:4]
        if s1[2]:
            assert s1[4]["episode_metrics"] == s2[4]["episode_metrics"]
            break
    assert e2.sim.log


def test_illegal_plan_still_refused():
    env = WirelessUDLEnv("testbed")
    env.reset(seed=0)
    c = env._cand
    r = int(np.flatnonzero(c.mask)[0])
    with pytest.raises(ValueError, match="illegal plan"):
        env.step(Plan(job=env._k, start=int(c.start[r]), y=c.y[r] * 0, ps=int(c.ps[r])))


def test_commit_kernel_matches_reference_on_random_plans():
    """``run_plan`` (via ``Simulator.commit``) = the slot-by-slot reference on random legal candidate rows."""
    rng = np.random.default_rng(6)
    n = 0
    for seed in range(4):
        env = WirelessUDLEnv(["sim", "sim-exp-proportional", "testbed", "sim-v1"][seed], config={"jobs": SHORT}
                             if seed != 2 else None)
        env.reset(seed=seed)
        while env._k < env.inst.num_jobs:
            sim = env.sim
            rows = np.flatnonzero(env._cand.mask)
            plan = env._cand.plan(env._k, int(rng.choice(rows)))
            s_ref = copy.deepcopy(sim)
            c_ref = ref.commit(s_ref, plan)
            s_new = copy.deepcopy(sim)
            c_new = s_new.commit(plan, checked=True)
            assert c_new == c_ref
            for f in ("cal", "M", "transfer", "param", "lat_cost", "start", "t_last", "plan_y", "status"):
                np.testing.assert_array_equal(getattr(s_new, f), getattr(s_ref, f), err_msg=f)
            assert s_new.worker_slots == s_ref.worker_slots
            env.step(plan)
            n += 1
    assert n > 100


@pytest.mark.parametrize("kind", ["exp", "linear", "piecewise", "logistic"])
def test_latency_vector_equals_latency_cost(kind):
    """The tentative enumeration's latency vector: the same numpy operations as ``costs.latency_cost``."""
    p = load_preset("sim").replace(jobs={"latency_cost": kind})
    inst = build_instance(p, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for i in range(inst.num_jobs):
        lat = rng.integers(-5, 3000, size=int(rng.integers(1, 300)))
        np.testing.assert_array_equal(_latency_vector(inst, i, lat), job_latency_cost(inst, i, lat))
        for L in lat[:5]:
            assert kn.latency_scalar(int(inst.kind[i]), float(inst.tau[i]), float(inst.b[i]), float(inst.tau1[i]),
                                     float(inst.tau2[i]), float(inst.c[i]), float(L), float(inst.exp_rate)) == \
                job_latency_cost(inst, i, int(L))


def test_order_by_score_is_the_stable_argsort():
    rng = np.random.default_rng(7)
    for _ in range(500):
        R = int(rng.integers(1, 60))
        Q = np.round(rng.normal(size=R), int(rng.integers(0, 3)))  # ties
        order = rng.permutation(R).astype(np.int64)
        kn._order_by_score(Q, order)
        np.testing.assert_array_equal(order, np.argsort(-Q, kind="mergesort"))


def test_tentative_best_matches_full_enumeration():
    """The pruned enumeration's optimum = argmin over every N of ``simulator.tentative`` (numpy, all N)."""
    from edgegym.families.wireless_udl.simulator import tentative

    rng = np.random.default_rng(8)
    n = 0
    for preset in ("sim", "sim-exp-proportional", "testbed"):
        env = WirelessUDLEnv(preset, config=None if preset == "testbed" else {"jobs": SHORT})
        env.reset(seed=1)
        while env._k < env.inst.num_jobs:
            sim, i = env.sim, env._k
            c = env._cand
            tab = tentative(sim.inst, sim.static, i, sim.inst.cap, sim.M[i], sim.t, sim.offset, sim.prop)
            tab_u = tentative(sim.inst, sim.static, i, sim.cal[sim.t], sim.M[i], sim.t, sim.offset, sim.prop)
            assert c.n_tent == tab["best"]
            assert c.n_now == (tab_u["best"] or tab["best"])
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            n += 1
    assert n == 90


def test_n_cap_kernel_matches_numpy():
    """``simulator._n_cap`` (compiled) = ``_reference.n_cap`` (numpy) on presets and random clusters (zero
    demands, sites too small for a PS, unbounded worker counts)."""
    from types import SimpleNamespace

    from edgegym.families.wireless_udl.simulator import _n_cap

    for preset in ("sim", "tiny", "testbed", "paper-literal"):
        for seed in range(10):
            inst = build_instance(load_preset(preset), np.random.default_rng(seed))
            a, b = _n_cap(inst), ref.n_cap(inst)
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
    rng = np.random.default_rng(9)
    for _ in range(300):
        R, K, nj = int(rng.integers(0, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 6))
        inst = SimpleNamespace(cap=rng.integers(0, 6, (R, K)).astype(float), m=rng.integers(0, 3, (nj, K)) * 1.0,
                               n=rng.integers(0, 4, (nj, K)) * 1.0, num_sites=R, num_jobs=nj)
        np.testing.assert_array_equal(_n_cap(inst), ref.n_cap(inst))
    for _ in range(1000):  # sites drawn from a few types (repeated capacity rows, as the presets draw them)
        R, K, nj = int(rng.integers(1, 9)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        types = rng.integers(0, 6, (int(rng.integers(1, 4)), K)).astype(float)
        inst = SimpleNamespace(cap=types[rng.integers(0, len(types), R)], m=rng.integers(0, 3, (nj, K)) * 1.0,
                               n=rng.integers(0, 4, (nj, K)) * 1.0, num_sites=R, num_jobs=nj)
        np.testing.assert_array_equal(_n_cap(inst), ref.n_cap(inst))


@pytest.mark.parametrize("kind", ["exp", "linear", "piecewise", "logistic"])
def test_job_table_latency_vectors_equal_the_per_job_numpy(kind):
    """The per-episode job table (``candidates._job_table``, all jobs' latency vectors in one numpy pass per cost
    kind) = :func:`_latency_vector` of each job decided at its arrival; rebuilt when ``sim.inst`` is replaced."""
    from edgegym.families.wireless_udl.candidates import _job_table

    for offset in (0, 1):
        env = WirelessUDLEnv("sim", config={"jobs": dict(SHORT, latency_cost=kind), "env": {"latency_offset": offset}})
        env.reset(seed=offset)
        sim, inst = env.sim, env.inst
        table = _job_table(sim)
        assert table[0] is inst and _job_table(sim) is table  # cached
        _, tots, lat, scalars, orders = table
        for i in range(inst.num_jobs):
            if orders[i].size:  # the shared site order of the capacities = site_order of the untrained job
                want, _ = kn.site_order(inst.cap, inst.cap, sim.static.qbar, inst.data[i], inst.data[i],
                                        *sim.static.beta)
                np.testing.assert_array_equal(orders[i], want)
            else:
                assert not (inst.data[i] > 0).all()
            kap, n_max, a_i = scalars[i][:3]
            assert tots[i] == int(inst.data[i].sum())
            N = np.arange(1, n_max + 1)
            L = np.zeros(n_max + 1, np.int64)
            L[1:] = (tots[i] + kap * N - 1) // (kap * N)
            np.testing.assert_array_equal(lat[i, :n_max + 1], _latency_vector(inst, i, a_i + L - 1 - a_i + offset))
        sim.inst = copy.copy(inst)  # a fork that redraws the future replaces the instance: the table is rebuilt
        assert _job_table(sim)[0] is sim.inst


def _rounded_prices(rng, R):
    return np.round(rng.uniform(0.02, 0.08, size=(R, R)), int(rng.integers(1, 4)))


def _random_pa_case(rng, r_hi, prices):
    """A random PA instance ``(U, q, m, n, order, n_max)`` with ``R < r_hi`` sites and prices ``prices(rng, R)``
    (zero on the diagonal)."""
    R, K = int(rng.integers(1, r_hi)), int(rng.integers(1, 5))
    U = rng.integers(0, 12, size=(R, K)).astype(float)
    q = prices(rng, R)
    np.fill_diagonal(q, 0.0)
    m = rng.integers(0, 4, size=K).astype(float)
    n = rng.integers(0, 3, size=K).astype(float)
    order = rng.permutation(R).astype(np.int64)
    return U, q, m, n, order, int(rng.integers(1, 40))


def test_pa_all_n_matches_the_element_by_element_loop():
    """``_kernels.pa_all_n`` (one cost vector per PS site, then a branch-free pass) = ``_reference.pa_all_n`` (the
    element-by-element loop) bit for bit, on 1,200 random clusters, orders, demands and both tie rules."""
    rng = np.random.default_rng(11)
    for trial in range(1200):
        U, q, m, n, order, n_max = _random_pa_case(rng, 13, _rounded_prices)  # rounded: ties happen
        tie = bool(trial % 2)
        got, want = kn.pa_all_n(U, order, q, m, n, n_max, tie), ref.pa_all_n(U, order, q, m, n, n_max, tie)
        np.testing.assert_array_equal(got[0], want[0], err_msg=f"trial {trial}")
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"trial {trial}")


def test_window_table_matches_numpy():
    """``_kernels.window_table`` (integer arithmetic in one compiled pass) = the numpy expression it replaced."""
    rng = np.random.default_rng(12)
    for _ in range(1000):
        nj = int(rng.integers(0, 8))
        tot = rng.integers(1, 2000, size=nj).astype(np.int64)
        kappa = rng.integers(1, 20, size=nj).astype(np.int64)
        w, offset = int(rng.integers(1, 50)), int(rng.integers(0, 3))
        np.testing.assert_array_equal(kn.window_table(tot, kappa, w, offset), ref.window_table(tot, kappa, w, offset))


def _random_calendar(rng):
    """A calendar built as ``Simulator.commit`` builds it (capacities minus random committed plans over their
    windows), with the plans' records (``t_last``, ``plan_y``, ``plan_ps``)."""
    R, K = int(rng.integers(1, 9)), int(rng.integers(1, 4))
    T = int(rng.integers(1, 40))
    cap = rng.integers(0, 9, (R, K)).astype(float)
    cal = np.empty((T, R, K))
    cal[...] = cap
    nj = int(rng.integers(0, 8))
    t_last = np.full(nj, -1, np.int64)
    plan_y = np.zeros((nj, R), np.int64)
    plan_ps = np.full(nj, -1, np.int64)
    for i in range(nj):
        if rng.random() < 0.2:
            continue  # not committed
        start = int(rng.integers(0, T))
        win = int(rng.integers(1, T - start + 1))
        y = rng.integers(0, 3, R) * (rng.random(R) < 0.4)
        ps = int(rng.integers(-1, R))
        m, n = rng.integers(0, 2, K).astype(float), rng.integers(0, 2, K).astype(float)
        dem = y[:, None] * m[None, :]
        if ps >= 0:
            dem[ps] += n
        cal[start:start + win] -= dem
        t_last[i], plan_y[i], plan_ps[i] = start + win - 1, y, ps
    return cap, cal, t_last, plan_y, plan_ps


def test_site_tails_bound_the_busy_slots():
    """``_site_tails``: every slot of site ``r`` from ``F[r]`` on holds ``cap[r]`` (on random calendars and on the
    calendars of env episodes, the record-schedule path and the calendar extension included)."""
    rng = np.random.default_rng(13)
    for _ in range(500):
        cap, cal, t_last, plan_y, plan_ps = _random_calendar(rng)
        T, R = cal.shape[:2]
        t = int(rng.integers(0, T))
        F = np.zeros(R, np.int64)
        kn._site_tails(t, T, t_last, plan_y, plan_ps, F)
        for r in range(R):
            assert t <= F[r] <= T
            assert np.all(cal[F[r]:, r] == cap[r])
    n = 0
    for preset, cfg in (("sim", {"jobs": SHORT}), ("sim", {"jobs": SHORT, "env": {"record_schedule": True}}),
                        ("testbed-v1", None), ("sim", {"jobs": {"horizon_slots": 20, "arrival_window": [0, 19]}})):
        env = WirelessUDLEnv(preset, config=cfg)
        env.reset(seed=n)
        while True:
            sim = env.sim
            T, R = sim.cal.shape[:2]
            F = np.zeros(R, np.int64)
            kn._site_tails(sim.t, T, sim.t_last, sim.plan_y, sim.plan_ps, F)
            busy = np.any(sim.cal != sim.inst.cap, axis=2)  # (T, R)
            for r in range(R):
                assert not busy[F[r]:, r].any()
            n += 1
            if env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))[2]:
                break
    assert n > 150


def test_earliest_and_window_min_with_site_tails_match_numpy():
    """``_earliest`` and ``_window_min`` (which read a site's slots from ``F[r]`` on as ``cap[r]``) = the numpy
    earliest fit and window minimum, on random calendars, demands that fit the capacities or not, tails tight or
    loose (``F = T``: nothing skipped)."""
    rng = np.random.default_rng(14)
    hits = {"found": 0, "none": 0, "capfit": 0, "no_capfit": 0}
    for trial in range(3000):
        cap, cal, t_last, plan_y, plan_ps = _random_calendar(rng)
        T, R, K = cal.shape
        t = int(rng.integers(0, T))
        F = np.zeros(R, np.int64)
        kn._site_tails(t, T, t_last, plan_y, plan_ps, F)
        if trial % 3 == 0:
            F[:] = np.maximum(F, rng.integers(t, T + 1, R))  # looser tails (still upper bounds)
        dem = rng.integers(0, 6, (R, K)).astype(float) * (rng.random((R, K)) < 0.5)
        win = int(rng.integers(1, T + 1))
        U = np.full((R, K), -7.0)
        s = kn._earliest(cal, cap, F, dem, t, win, U, np.zeros(R, np.int64))
        assert s == ref.earliest_fit(cal, dem, t, win)
        if s >= 0:
            used = (dem > 0).any(axis=1)
            np.testing.assert_array_equal(U[used], cal[s:s + win].min(axis=0)[used])
        hits["found" if s >= 0 else "none"] += 1
        hits["capfit" if np.all(cap >= dem - 1e-9) else "no_capfit"] += 1
        # the running window minimum, extended window by window
        Uw = np.full((R, K), np.inf)
        chg = np.zeros(R, bool)
        w_run = 0
        for w in sorted({int(x) for x in rng.integers(1, T - t + 1, 4)}):
            before = Uw.copy() if w_run else cal[t].copy()
            chg[:] = False
            fell = kn._window_min(cal, cap, F, t, w_run, w, Uw, chg)
            want = cal[t:t + w].min(axis=0)
            np.testing.assert_array_equal(Uw, want)
            np.testing.assert_array_equal(chg, np.any(want < before, axis=1) | (w_run == 0))
            assert fell == bool(np.any(want < before))  # below the last minimum (cal[t] at first)
            w_run = w
    assert min(hits.values()) > 100, hits


def test_pa_all_n_for_nonnegative_prices_matches_the_element_by_element_loop():
    """``_kernels._pa_all_n_nn`` (prices ≥ 0: the PS sites on the fill without a PS compared segment by segment,
    those a segment rules out skipped; the others by ``_pa_all_n_b``'s loop; merged by cost, then the tie rule's
    site index) = ``_reference.pa_all_n`` bit for bit, on 4,000 random clusters (prices with many ties, zero prices,
    sites without room for the PS, fills that stop short of ``n_max``) and both tie rules."""
    rng = np.random.default_rng(15)
    groups = {"base_only": 0, "mixed": 0}
    for trial in range(4000):
        # every 4th: half-integer prices (many ties, zeros)
        prices = (lambda g, R: g.integers(0, 3, size=(R, R)) * 0.5) if trial % 4 == 0 else _rounded_prices
        U, q, m, n, order, n_max = _random_pa_case(rng, 14, prices)
        tie = bool(trial % 2)
        A0 = np.array([kn.max_workers(U[r], m, n, False) for r in range(len(U))], np.int64)
        A1 = np.array([kn.max_workers(U[r], m, n, True) for r in range(len(U))], np.int64)
        got = kn._pa_all_n_nn(U, order, q, n, n_max, tie, A0, A1)
        want = ref.pa_all_n(U, order, q, m, n, n_max, tie)
        np.testing.assert_array_equal(got[0], want[0], err_msg=f"trial {trial}")
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"trial {trial}")
        groups["mixed" if np.any((A1 < A0) & (A0 > 0)) else "base_only"] += 1
    assert min(groups.values()) > 500, groups


def test_windows_are_the_integer_ceilings():
    """``_kernels._windows`` (a floating-point quotient corrected in integers) = ``ceil(tot / (κ·N))`` in integers."""
    rng = np.random.default_rng(16)
    for _ in range(2000):
        tot, kappa, n_max = int(rng.integers(0, 10**6)), int(rng.integers(1, 200)), int(rng.integers(1, 300))
        N = np.arange(1, n_max + 1)
        want = np.zeros(n_max + 1, np.int64)
        want[1:] = (tot + kappa * N - 1) // (kappa * N)
        np.testing.assert_array_equal(kn._windows(tot, kappa, n_max), want)
    kN = 3 * np.arange(1, 51)
    for tot in range(0, 400):  # every exact multiple and its neighbours
        np.testing.assert_array_equal(kn._windows(tot, 3, 50)[1:], (tot + kN - 1) // kN)



def _dta_by_route_factory():
    """A compiled DTA built on ``_kernels._dta_route`` the way its callers use it (the flags as constants)."""
    numba = pytest.importorskip("numba")

    @numba.njit(cache=False)
    def dta_by_route(S, d, q, src_order, mode):
        R = S.shape[0]
        H = S - d
        sent = np.zeros(R, np.int64)
        used = np.zeros(R, np.int64)
        touched = np.full(R, -1, np.int64)
        nt = 0
        if mode == 0:  # _complete_transfer: no used, the sources drawn from listed
            cost, nt = kn._dta_route(src_order, q, H, sent, sent, False, touched, True)
        elif mode == 1:  # run_plan (proportional sampling): used, no list
            cost, _ = kn._dta_route(src_order, q, H, sent, used, True, used, False)
        else:  # both
            cost, nt = kn._dta_route(src_order, q, H, sent, used, True, touched, True)
        for r in range(R):
            used[r] += min(d[r], S[r])
        return cost, sent, used, touched, nt

    return dta_by_route


def test_dta_route_is_dta_scan():
    """``_kernels._dta_route`` (the deficit routing that ``_complete_transfer`` and ``run_plan``'s ``proportional``
    slots share) = :func:`~._kernels.dta` and its pure-Python version on random instances: the same cost (``==``),
    per-source amounts and ``used``; the listed sources are those drawn from, in the order first drawn."""
    dta_by_route = _dta_by_route_factory()
    rng = np.random.default_rng(17)
    multi = 0  # instances where some site draws from two sources or more
    for trial in range(3000):
        R = int(rng.integers(2, 21))
        if trial % 3 == 0:  # many ties and zero prices
            q = rng.integers(0, 3, size=(R, R)) * 0.5
        else:
            q = np.round(rng.random((R, R)) * 10, int(rng.integers(1, 6)))
        np.fill_diagonal(q, 0.0)
        src = np.ascontiguousarray(np.argsort(q.T, axis=1, kind="stable").astype(np.int64))
        S = rng.integers(0, 12, size=R) * (rng.random(R) < 0.7)
        d = rng.integers(0, 20, size=R) * (rng.random(R) < 0.5)
        while d.sum() > S.sum():  # Σ S ≥ Σ d
            d[int(rng.choice(np.flatnonzero(d)))] -= 1
        S, d = S.astype(np.int64), d.astype(np.int64)
        c0, g0, u0 = kn.dta(S, d, q, src, True)
        c1, g1, u1 = kn.PURE["dta"](S, d, q, src, True)
        assert c0 == c1
        np.testing.assert_array_equal(g0, g1)
        np.testing.assert_array_equal(u0, u1)
        given = g0.sum(axis=1) - np.diag(g0)
        multi += bool(np.any(((g0 - np.diag(np.diag(g0))) > 0).sum(axis=0) >= 2))
        order = []  # dta's order of draws: deficit sites by index, each's sources cheapest first
        for r in range(R):
            for s in src[r]:
                if s != r and g0[s, r] > 0 and s not in order:
                    order.append(int(s))
        for mode in range(3):
            c, sent, used, touched, nt = dta_by_route(S, d, q, src, mode)
            where = f"trial {trial} mode {mode}"
            assert c == c0, where
            np.testing.assert_array_equal(sent, given, err_msg=where)
            np.testing.assert_array_equal(used, u0 if mode else np.minimum(d, S), err_msg=where)
            if mode != 1:
                assert list(touched[:nt]) == order, where
                assert np.all(touched[nt:] == -1), where
    assert multi > 1000, multi
