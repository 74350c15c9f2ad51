"""WirelessUDL step, second speed pass: the kernels changed by it against their originals, exactly (``==``).

* ``_complete_transfer`` (SPLIT's spare pass over the worker sites only, DTA with each source's surplus left in one
  array) against ``window_transfer`` (``split`` + ``dta``, the plain kernels) on random plans, few and many
  sources, the scratch arrays restored;
* ``run_plan`` under ``complete`` sampling (the same surplus array in its per-slot DTA) against ``Simulator.execute``
  slot by slot (``site_order`` + ``split`` + ``dta``);
* the candidate table (slot t's site order re-sorted by insertion from the capacities' order, the surplus array)
  and the one-call step against the numpy reference env in lockstep: >= 1,000 decision states over the v0 and v1
  ids, the tiny and testbed presets and several seeds (observations, masks, rewards, infos, candidate tables,
  episode metrics and returns).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.wireless_udl import _kernels as kn
from edgegym.families.wireless_udl import _reference as ref
from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.testing import assert_same_candidates, assert_same_step, reference_pair


def _random_case(rng, R: int):
    """Prices, their source orders, data, the Q order and a fill ``y`` (its sites listed in the order's sequence)."""
    q = rng.uniform(0.02, 0.08, size=(R, R))
    q = q + q.T
    np.fill_diagonal(q, 0.0)
    if rng.random() < 0.3:  # ties among prices
        q = np.round(q, 2)
    src_order = np.ascontiguousarray(np.argsort(q.T, axis=1, kind="stable").astype(np.int64))
    M = rng.integers(0, 25, size=R).astype(np.int64)
    if rng.random() < 0.3:  # few sources with data: the other branch of the routing
        M[rng.random(R) < 0.8] = 0
    order = rng.permutation(R).astype(np.int64)
    y = np.zeros(R, np.int64)
    used = np.zeros(R, np.int64)
    nu = 0
    for r in order[: int(rng.integers(1, R + 1))]:
        take = int(rng.integers(0, 6))
        if take:
            y[r] = take
            used[nu] = r
            nu += 1
    if nu == 0:
        y[order[0]] = 1
        used[0] = order[0]
        nu = 1
    return q, src_order, M, order, y, used, nu


def test_complete_transfer_is_split_and_dta():
    """``_complete_transfer`` = ``window_transfer(..., prop=False)`` on 3,000 random plans; ``d``, ``sent``, ``H``
    and ``y`` as they were."""
    rng = np.random.default_rng(2024)
    for case in range(3000):
        R = int(rng.integers(1, 40))
        q, src_order, M, order, y, used, nu = _random_case(rng, R)
        kappa = int(rng.integers(1, 8))
        h = int(rng.integers(1, 12))
        want = kn.window_transfer(y.copy(), M, M.copy(), kappa, h, order, q, src_order, False, np.ones((R, 1)),
                                  np.zeros(R), np.ones(3))
        d, sent, touched = np.zeros(R, np.int64), np.zeros(R, np.int64), np.zeros(R, np.int64)
        H = M.copy()
        y0 = y.copy()
        got = kn._complete_transfer(y, used, nu, M, int(M.sum()), kappa, h, order, q, src_order, d, H, sent, touched)
        assert got == want, f"case {case}: {got!r} != {want!r}"
        assert not d.any() and not sent.any() and np.array_equal(H, M) and np.array_equal(y, y0), f"case {case}"


def test_run_plan_complete_is_execute_slot_by_slot():
    """``run_plan`` (``complete`` sampling) = ``Simulator.execute``'s operations slot by slot (``site_order``,
    ``split`` with one slot, ``dta`` on the untrained data): the same costs summed in the same order, the same data
    left, the same calendar."""
    rng = np.random.default_rng(7)
    for case in range(600):
        R, K = int(rng.integers(1, 30)), 2
        q, src_order, M, _, y, _, _ = _random_case(rng, R)
        if M.sum() == 0:
            M[0] = 5
        D = M + rng.integers(0, 3, size=R)
        kappa = int(rng.integers(1, 6))
        cap = rng.choice([4.0, 8.0, 16.0], size=(R, K))
        qbar = q.sum(axis=1) / max(R - 1, 1) / max(q.max(), 1e-9)
        beta = np.array([1.0, 1.0, 1.0])
        m, n = np.array([1.0, 2.0]), np.array([1.0, 0.0])
        ps = int(rng.integers(R))
        win0 = -(-int(M.sum()) // (kappa * int(y.sum())))
        cal = np.broadcast_to(cap, (3 + win0 + 2, R, K)).copy()  # the window fits (no bounds checks)
        param_slot = float(rng.uniform(0, 3))
        M1, cal1 = M.copy(), cal.copy()
        tr, pa_, N, win, left = kn.run_plan(cap, qbar, q, src_order, beta, M1, D, y, kappa, True, 1.5, param_slot,
                                            cal1, 3, m, n, ps)
        M2 = M.copy()
        want_tr = want_pa = 0.0
        for _ in range(win):
            order, _ = kn.site_order(cap, cap, qbar, M2, D, beta[0], beta[1], beta[2])
            d = kn.split(y, M2, kappa, 1, order)
            c, _, used = kn.dta(M2, d, q, src_order, False)
            M2 -= used
            want_tr += 1.5 * c
            want_pa += param_slot
        assert (tr, pa_, N, left) == (want_tr, want_pa, int(y.sum()), int(M2.sum())), f"case {case}"
        np.testing.assert_array_equal(M1, M2, err_msg=f"case {case}")
        dem = np.outer(y, m)
        dem[ps] += n
        cal[3:3 + win] -= dem
        np.testing.assert_array_equal(cal1, cal, err_msg=f"case {case}")


def _lockstep(e1: WirelessUDLEnv, e2: WirelessUDLEnv, rng, where: str) -> int:
    """The compiled env ``e1`` and the reference env ``e2`` stepped with the same random actions (a legal row by
    ``step``, sometimes a masked one or the row by ``step_quiet``) to the episode's end; decision states compared."""
    states = 0
    while True:
        at = f"{where} job {e1._k}"
        np.testing.assert_array_equal(e1.action_masks(), e2.action_masks(), err_msg=at)
        assert_same_candidates(e1._cand, e2._cand, at)
        states += 1
        mask = e1.action_masks()
        a = int(rng.choice(np.flatnonzero(mask)))
        how = int(rng.integers(6))
        if how == 0:
            a = int(rng.integers(mask.size))
        if how == 1:
            r1, r2 = e1.step_quiet(a), e2.step_quiet(a)
            assert r1 == r2, at
            np.testing.assert_array_equal(e1.observe(), ref.observation(e2), err_msg=at)
            done = r1[1] or r1[2]
        else:
            s1, s2 = e1.step(a), e2.step(a)
            assert_same_step(s1, s2, at)
            done = s1[2] or s1[3]
        if done:
            assert e1.episode_return() == e2.episode_return(), at
            assert e1.episode_metrics() == e2.episode_metrics(), at
            return states


def test_step_matches_reference_on_1000_states_v0_v1_tiny():
    """The full-size v0 and v1 presets, the tiny and testbed presets (v0 and v1), several seeds: >= 1,000 states."""
    rng = np.random.default_rng(58)
    states = 0
    small = {"jobs": {"count": 60, "horizon_slots": 90, "arrival_window": [0, 89]}}
    for preset, cfg, seeds in (("sim", None, (0, 1, 2, 3, 4)), ("sim-v1", None, (5, 6, 7, 8, 9)), ("sim", small, (6,)),
                               ("tiny", None, (0, 1, 2, 3)), ("tiny-v1", None, (4, 5, 6, 7)),
                               ("testbed", None, (0, 1)), ("testbed-v1", None, (2, 3))):
        for seed in seeds:
            e1, e2 = reference_pair(preset, cfg, seed)
            states += _lockstep(e1, e2, rng, f"{preset} seed {seed}")
    assert states >= 1000


def test_grid_table_rows_are_geo_grids():
    """The cached grid table's row ``n`` = ``_geo_grid(n, G)`` (then zeros), its size column their sizes, read only;
    the one-call step's per-job grids gathered from it."""
    from edgegym.families.wireless_udl.candidates import _geo_grid, _grid_table

    for G in (1, 2, 5, 8, 12):
        rows, sizes = _grid_table(G, 300)
        assert not rows.flags.writeable and not sizes.flags.writeable
        for n in range(301):
            g = _geo_grid(n, G)
            assert sizes[n] == g.size
            np.testing.assert_array_equal(rows[n, :g.size], g)
            assert not rows[n, g.size:].any()
    env = WirelessUDLEnv("sim")
    env.reset(seed=11)
    jobs, scalars = env._job_arrays()
    grids, grid_n = jobs[-2], jobs[-1]
    for j, sc in enumerate(scalars):
        np.testing.assert_array_equal(grids[j, :grid_n[j]], _geo_grid(sc[1], env.G))
