"""WirelessUDL's compiled candidate table, third pass inside the one-call step: the faster kernels against the ones
they replace, kept as the reference, identical (``==``, NaN where NaN), no tolerance.

* ``_kernels._tent_best_fast`` (PA by ``_pa_all_n_nn_fast``; the bounds' price sums four rows at a time after the
  loop over N) = ``_kernels._tent_best`` on the states of random-legal episodes of ``sim``, ``sim-hard`` and
  ``sim-exp-proportional`` (both enumerations of each state: under the capacities and under the arrival slot's free
  resources; >= 1,000 states) and on random small clusters (both tie rules, both samplings, prices with ties, zeros
  and negatives): every returned array, the searched transfers (NaN where not computed) and the scratch left behind.
* ``_kernels._pa_all_n_nn_fast`` (four running minima per segment) = ``_kernels._pa_all_n_nn`` on 4,000 random
  clusters with prices >= 0 (ties, zeros, sites without room for the PS, fills short of ``n_max``).
* ``_kernels._window_min_fast`` (skips the sites whose running minimum already holds their capacity and has no
  calendar slot in the extension; four running minima in registers when K = 4) = ``_kernels._window_min`` in lockstep
  over 3,000 random calendars (K = 1 to 5; tails from the committed plans, looser ones, and tails that do not bound
  the booked slots, where the skip must not rely on the calendar holding ``cap``), window by window: the minima,
  the changed-site flags and the result.
* ``_kernels._earliest_fast`` (the used sites listed without a branch per entry when K = 4) = ``_kernels._earliest``
  on 4,000 random calendars and demands (K = 1 to 5, zero, negative and NaN demands, tails as above): the start
  and the window minima written (the used-site scratch is the function's own: nothing else reads it).
* ``_kernels._order_merge`` (the moved sites sorted among themselves and merged into the others' sequence) = a
  copy of the permutation sorted by ``_order_by_score``, on 5,000 random cases: scores with ties, NaN and -0.0,
  permutations sorted before some sites moved and not, the moved-site flags right, missing or arbitrary, in place
  and into another array.
* The env (which calls the fast kernels) = the numpy reference env in lockstep over whole episodes.
"""

from __future__ import annotations

import numpy as np

from edgegym.families.wireless_udl import _kernels as kn
from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.testing import assert_same_step, reference_pair

JOBS = {"count": 60, "horizon_slots": 90, "arrival_window": [0, 89]}


def _scratch(M):
    """The scratch arrays of one ``_tent_best`` call: ``y``, ``used``, ``d``, ``H`` (= M), ``sent``, ``touched``."""
    R = M.shape[0]
    return [np.zeros(R, np.int64), np.zeros(R, np.int64), np.zeros(R, np.int64), M.copy(), np.zeros(R, np.int64),
            np.zeros(R, np.int64)]


def _compare(args_head, args_tail, M, where):
    """Run the reference and the fast enumeration on the same arguments (fresh scratch each); assert ``==``."""
    s1, s2 = _scratch(M), _scratch(M)
    want = kn._tent_best(*args_head, *s1, *args_tail)
    got = kn._tent_best_fast(*args_head, *s2, *args_tail)
    assert len(want) == len(got) == 8
    for j, (a, b) in enumerate(zip(want, got, strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype, f"{where}: output {j} dtype"
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: output {j}")
    for j, (a, b) in enumerate(zip(s1, s2, strict=True)):  # the scratch as the reference leaves it (zero, H = M)
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: scratch {j}")
    return int(np.count_nonzero(~np.isnan(want[2]) & np.isfinite(want[1])))


def _state_calls(env):
    """The two enumerations ``candidate_block`` runs for the env's next job: ``(head, tail, M)`` each (under the
    capacities with the job's shared site order, and under the arrival slot's free resources with its order)."""
    fa = env._fast[3]
    (cap, qbar, q, src_order, beta, tie_le, q_nonneg, prop) = fa[:8]
    data, m_all, n_all, kap, nmax = fa[17], fa[18], fa[19], fa[20], fa[21]
    param_mb, chunk_mb, lat_tab, orders, has_order, M_all, cal = fa[24], fa[25], fa[31], fa[32], fa[33], fa[36], fa[37]
    k = env._k
    t = int(env.sim.t)
    M = M_all[k].copy()
    nm = int(nmax[k])
    lat = lat_tab[k, :nm + 1].copy()
    L = kn._windows(int(M.sum()), int(kap[k]), nm)
    order_cap = orders[k].copy() if has_order[k] else orders[k, :0].copy()
    Ut = cal[t].copy()
    order_t, _ = kn.site_order(Ut, cap, qbar, M, data[k], beta[0], beta[1], beta[2])
    out = []
    for U, order in ((cap, order_cap), (Ut, order_t)):
        head = (U, cap, qbar, q, src_order, M, data[k], m_all[k], n_all[k], int(kap[k]), nm, beta, bool(tie_le),
                bool(prop), float(param_mb[k]), float(chunk_mb[k]), lat)
        out.append((head, (bool(q_nonneg), L, order), M))
    return out


def test_tent_best_fast_equals_reference_on_episode_states():
    states = searched = 0
    for preset in ("sim", "sim-hard", "sim-exp-proportional"):
        for seed in range(4):
            env = WirelessUDLEnv(preset)
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            done = False
            while not done:
                if env._fast is not None and env._k < env.inst.num_jobs:
                    for c, (head, tail, M) in enumerate(_state_calls(env)):
                        searched += _compare(head, tail, M, f"{preset} seed {seed} job {env._k} call {c}")
                    states += 1
                a = int(rng.choice(np.flatnonzero(env.action_masks())))
                _, _, te, tr, _ = env.step(a)
                done = te or tr
    assert states >= 1000, states
    assert searched >= 5 * states, searched  # the searches computed transfers (several per enumeration)


def _random_case(rng):
    """A random small cluster and job for ``_tent_best``: ``(head, tail, M)``."""
    R, K = int(rng.integers(1, 12)), int(rng.integers(1, 5))
    cap = rng.integers(0, 14, size=(R, K)).astype(float)
    U = np.minimum(cap, rng.integers(0, 14, size=(R, K)).astype(float)) if rng.random() < 0.6 else cap.copy()
    kind = rng.integers(4)
    if kind == 0:
        q = rng.integers(0, 3, size=(R, R)) * 0.5  # ties and zeros
    elif kind == 1:
        q = np.round(rng.uniform(0.02, 0.08, size=(R, R)), int(rng.integers(1, 4)))
    elif kind == 2:
        q = rng.uniform(0.02, 0.08, size=(R, R))
        q = q + q.T
    else:
        q = rng.uniform(-0.02, 0.08, size=(R, R))  # some negative prices: the general PA
    np.fill_diagonal(q, 0.0)
    q_nonneg = bool(np.all(q >= 0))
    qbar = q.mean(axis=1)
    src_order = np.argsort(q.T, axis=1, kind="stable").astype(np.int64)
    M = rng.integers(0, 25, size=R).astype(np.int64)
    D = M + rng.integers(0, 3, size=R)
    m = rng.integers(0, 4, size=K).astype(float)
    n = rng.integers(0, 3, size=K).astype(float)
    kappa = int(rng.integers(1, 8))
    n_max = int(rng.integers(1, 40))
    beta = rng.uniform(0, 1, 3)
    lat = rng.uniform(0, 50, n_max + 1)
    if rng.random() < 0.2:
        lat[rng.integers(0, n_max + 1, 3)] = np.inf
    L = kn._windows(int(M.sum()), kappa, n_max)
    order = rng.permutation(R).astype(np.int64) if rng.random() < 0.5 else np.zeros(0, np.int64)
    head = (U, cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, bool(rng.integers(2)), bool(rng.integers(2)),
            float(rng.uniform(30, 575)), float(rng.uniform(20, 60)), lat)
    return head, (q_nonneg, L, order), M


def test_tent_best_fast_equals_reference_on_random_clusters():
    rng = np.random.default_rng(91)
    for trial in range(3000):
        head, tail, M = _random_case(rng)
        _compare(head, tail, M, f"trial {trial}")


def test_pa_all_n_nn_fast_equals_reference():
    rng = np.random.default_rng(92)
    mixed = 0
    for trial in range(4000):
        R, K = int(rng.integers(1, 30)), int(rng.integers(1, 5))
        U = rng.integers(0, 12, size=(R, K)).astype(float)
        if trial % 3 == 0:
            q = rng.integers(0, 3, size=(R, R)) * 0.5
        else:
            q = np.round(rng.uniform(0.02, 0.08, size=(R, R)), int(rng.integers(1, 4)))
        np.fill_diagonal(q, 0.0)
        m = rng.integers(0, 4, size=K).astype(float)
        n = rng.integers(0, 3, size=K).astype(float)
        order = rng.permutation(R).astype(np.int64)
        n_max = int(rng.integers(1, 60))
        tie = bool(trial % 2)
        A0 = np.array([kn.max_workers(U[r], m, n, False) for r in range(R)], np.int64)
        A1 = np.array([kn.max_workers(U[r], m, n, True) for r in range(R)], np.int64)
        want = kn._pa_all_n_nn(U, order, q, n, n_max, tie, A0, A1)
        got = kn._pa_all_n_nn_fast(U, order, q, n, n_max, tie, A0, A1)
        np.testing.assert_array_equal(got[0], want[0], err_msg=f"trial {trial}")
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"trial {trial}")
        mixed += bool(np.any((A1 < A0) & (A0 > 0)))
    assert mixed > 500, mixed


def test_env_equals_numpy_reference_in_lockstep():
    states = 0
    for preset, seed in (("sim", 5), ("sim-v1", 6), ("sim-exp-proportional", 7)):
        e1, e2 = reference_pair(preset, {"jobs": JOBS}, seed)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            m1 = e1.action_masks()
            np.testing.assert_array_equal(m1, e2.action_masks())
            a = int(rng.choice(np.flatnonzero(m1)))
            s1, s2 = e1.step(a), e2.step(a)
            assert_same_step(s1, s2, f"{preset} seed {seed} job {e1._k}")
            done = s1[2] or s1[3]
            states += 1
        assert e1.episode_metrics() == e2.episode_metrics()
    assert states >= 150, states


def _calendar_case(rng, trial):
    """A random calendar ``(cap, cal, t, F)``: booked windows below the capacities, the arrival slot ``t`` and site
    tails from the booked slots (every 3rd looser, every 3rd arbitrary)."""
    T, R, K = int(rng.integers(1, 30)), int(rng.integers(1, 12)), int(rng.integers(1, 6))
    if trial % 2:
        K = 4
    cap = rng.integers(1, 10, (R, K)).astype(float)
    cal = np.broadcast_to(cap, (T, R, K)).copy()
    for _ in range(int(rng.integers(0, 6))):  # booked windows
        a = int(rng.integers(0, T))
        b = int(rng.integers(a, T)) + 1
        r = int(rng.integers(R))
        cal[a:b, r] -= rng.integers(0, 4, K)
    t = int(rng.integers(0, T))
    busy = np.flatnonzero(np.any(cal != cap, axis=2).any(axis=0))
    F = np.full(R, t, np.int64)
    for r in busy:  # 1 + the last booked slot of r at or after t
        last = np.flatnonzero(np.any(cal[:, r] != cap[r], axis=1))
        F[r] = max(t, int(last.max()) + 1)
    if trial % 3 == 1:
        F = np.maximum(F, rng.integers(t, T + 1, R))  # looser tails
    elif trial % 3 == 2:
        F = rng.integers(0, T + 1, R).astype(np.int64)  # any tails: the slots from F read as cap
    return cap, cal, t, F


def test_earliest_fast_equals_reference():
    rng = np.random.default_rng(95)
    found = 0
    for trial in range(4000):
        cap, cal, t, F = _calendar_case(rng, trial)
        T, R, K = cal.shape
        dem = rng.integers(-1, 6, (R, K)).astype(float) * (rng.random((R, K)) < 0.5)
        if trial % 11 == 0:
            dem[rng.integers(R), rng.integers(K)] = np.nan
        win = int(rng.integers(1, T + 1))
        U1, U2 = np.full((R, K), -7.0), np.full((R, K), -7.0)
        u1, u2 = np.zeros(R, np.int64), np.zeros(R, np.int64)
        s1 = kn._earliest(cal, cap, F, dem, t, win, U1, u1)
        s2 = kn._earliest_fast(cal, cap, F, dem, t, win, U2, u2)
        assert s1 == s2, f"trial {trial}"
        np.testing.assert_array_equal(U1, U2, err_msg=f"trial {trial}")
        found += s1 >= 0
    assert 400 < found < 3600, found  # windows found and not


def test_window_min_fast_equals_reference_in_lockstep():
    rng = np.random.default_rng(93)
    skipped = 0
    for trial in range(3000):
        cap, cal, t, F = _calendar_case(rng, trial)
        T, R, K = cal.shape
        Uw1, Uw2 = np.full((R, K), np.inf), np.full((R, K), np.inf)
        c1, c2 = np.zeros(R, np.int64), np.zeros(R, np.int64)
        capin = np.full(R, 5, np.int64)
        w_run = 0
        wins = ([1] if trial % 4 else []) + sorted({int(x) for x in rng.integers(1, T - t + 1, 5)})
        for w in wins:
            if w <= w_run and w_run > 0:
                continue
            c1[:] = 0
            c2[:] = 0
            f1 = kn._window_min(cal, cap, F, t, w_run, w, Uw1, c1)
            f2 = kn._window_min_fast(cal, cap, F, t, w_run, w, Uw2, c2, capin)
            where = f"trial {trial} w_run {w_run} win {w}"
            np.testing.assert_array_equal(Uw1, Uw2, err_msg=where)
            np.testing.assert_array_equal(c1, c2, err_msg=where)
            assert f1 == f2, where
            skipped += int(np.sum((F <= t + max(w_run, 1)) & (capin != 0))) if w_run > 0 else 0
            w_run = max(w, 1)
    assert skipped > 1000, skipped


def test_order_merge_equals_the_insertion_sort():
    rng = np.random.default_rng(94)
    merged = 0
    for trial in range(5000):
        R = int(rng.integers(1, 40))
        Q = rng.integers(-3, 4, R) * 0.5 if trial % 3 == 0 else rng.uniform(-1, 1, R)
        if trial % 17 == 0:
            Q[rng.integers(R)] = np.nan
        if trial % 5 == 0:
            Q[rng.integers(R)] = -0.0
        src = np.argsort(-Q, kind="stable").astype(np.int64) if trial % 4 else rng.permutation(R).astype(np.int64)
        moved = rng.random(R) < rng.uniform(0, 0.6)
        Q = Q.copy()
        Q[moved] -= rng.uniform(0, 1.5, int(moved.sum()))  # the moved sites' scores fall (busy sites move down)
        chg = moved.astype(np.int64)
        if trial % 7 == 1:
            chg = (rng.random(R) < 0.3).astype(np.int64)  # flags that do not say which moved
        want = src.copy()
        kn._order_by_score(Q, want)
        out = np.full(R, -1, np.int64)
        kn._order_merge(Q, src, chg, out, np.zeros(R, np.int64))
        np.testing.assert_array_equal(out, want, err_msg=f"trial {trial}")
        inplace = src.copy()
        kn._order_merge(Q, inplace, chg, inplace, np.zeros(R, np.int64))
        np.testing.assert_array_equal(inplace, want, err_msg=f"trial {trial} in place")
        merged += int(not np.isnan(Q).any())
    assert merged > 4000, merged
