"""The window arrays kept across decisions (``SlotTables``) equal a sub-round state built for each window.

Differential: on random ledgers that commit as the windows move forward and grow (tiny and v0-sized clusters, PS and
RA), every window's prices, residuals, prefix sums and window-minimum tables read through ``SlotTables.view`` equal
those of ``SubRound`` built from ``ledger.window`` (numpy-built, ``SubRound.compiled = False``), bit for bit, and the
search on the view (pruned) returns the candidate of the plain search on the fresh state, on more than 1,000 decision
states. Episode level: ``aonline-hetero-now`` on kept tables takes the actions of the state-per-decision form on whole
tiny episodes and the first decisions of ``HeteroML-v0`` / ``HeteroML-v1`` episodes.
"""

from __future__ import annotations

import edgegym.agents.reference.hetero_ml as ref
import numpy as np
import pytest
from edgegym.agents.runner import policy_actions

from edgegym.families.hetero_ml.instance import build_instance
from edgegym.families.hetero_ml.mincost import SlotTables, SubRound, mincost, price_base
from edgegym.families.hetero_ml.presets import load_preset
from edgegym.families.hetero_ml.simulator import Ledger, footprint

MODES = ("earliest_completion", "paper_order", "completion_first")


def _key(c):
    return None if c is None else (c.key(), c.cost)


def _fresh(c, tau, now, lam, ledger):
    """A numpy-built state for window [now, now + tau); a one-slot window (tau = 2) is the prefix of a two-slot state
    (numpy's einsum sums a single slot's resources in another order; the shipped policy never builds one)."""
    size = max(tau, 3)
    SubRound.compiled = False
    try:
        return SubRound(c, size, now, lam, init_used=ledger.window(now, now + size)).prefix(tau)
    finally:
        SubRound.compiled = True


def _assert_view_equals(S, F, where):
    """The view S of the kept tables holds the numbers of the fresh state F (the minima tables' exact entries)."""
    n, t0 = F.tau - 1, S.t0
    # the kept tables are in the search's layouts (slots before servers)
    assert np.array_equal(S.Aw[:, : n + 1], F.Aw[:, :, : n + 1].transpose(0, 2, 1)), (where, "Aw")
    assert np.array_equal(S.Ap[:, : n + 1], F.Ap[:, :, : n + 1].transpose(0, 2, 1)), (where, "Ap")
    for k in range(int(F.logt[n]) + 1):
        m = n - (1 << k) + 1  # positions whose 2^k-window lies inside the window: the entries the search reads
        assert np.array_equal(S.st[k, t0 : t0 + m], F.st[k, :, :, :m].transpose(2, 0, 1)), (where, "st", k)
        assert np.array_equal(S.cst[k, :, t0 : t0 + m], F.cst[k, :, :m]), (where, "cst", k)


def _random_commit(rng, c, ledger, tables, now, horizon):
    """A random footprint on a few servers over a random stretch from ``now`` (at most ~40 % of a server's
    capacity, so the ledger fills up over a run)."""
    H, R = c.capacity.shape
    f = np.zeros((H, R))
    for h in rng.choice(H, size=int(rng.integers(1, min(H, 4) + 1)), replace=False):
        f[h] = rng.uniform(0, 0.4) * c.capacity[h]
        f[h, :2] = np.floor(f[h, :2])
    start = now + int(rng.integers(0, horizon))
    end = start + int(rng.integers(1, horizon))
    ledger.commit(f, start, end)
    tables.committed(np.flatnonzero(f.sum(axis=1) > 0), start, end)


def _run(name, seeds, steps, taus):
    """(views compared, decisions compared, found) over random walks of ``steps`` decisions per seed."""
    views = decisions = found = 0
    p = load_preset(name)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        inst = build_instance(p, rng)
        c, jobs = inst.cluster, inst.jobs
        lam = price_base(150, c.num_servers, c.num_resources, 10.0) if rng.uniform() < 0.5 else 1e3
        ledger = Ledger(c.capacity, horizon=int(rng.integers(2, 40)))
        tables = SlotTables(c, lam, ledger)
        tables.min_size = int(rng.choice([1, 8, 64]))  # small arrays: reallocated and rebased often
        now = int(rng.integers(0, 5))
        for _ in range(steps):
            now += int(rng.choice([0, 0, 1, 2, 7]))
            for _ in range(int(rng.integers(0, 4))):
                _random_commit(rng, c, ledger, tables, now, max(taus))
            tau = int(rng.choice(taus))
            for grow in range(int(rng.integers(1, 4))):  # nested windows of one decision
                S = tables.view(now, tau)
                F = _fresh(c, tau, now, lam, ledger)
                _assert_view_equals(S, F, (name, seed, now, tau))
                views += 1
                j = int(rng.integers(jobs.num_jobs))
                thr = float(jobs.weight[j]) * float(rng.choice([1e-2, 1.0, 100.0]))
                mode = MODES[int(rng.integers(3))]
                minc = int(rng.choice([0, tau // 2])) if grow else 0
                a = mincost(S, jobs, j, thr, mode, min_completion=minc)
                b = mincost(F, jobs, j, thr, mode, min_completion=minc, prune=False)
                assert _key(a) == _key(b), (name, seed, now, tau, j, mode, minc)
                decisions += 1
                found += a is not None
                if a is not None and rng.uniform() < 0.5:  # commit the found candidate, as the policy does
                    f = footprint(c, a.m, a.p, a.y, a.s)
                    s, e = now + a.t_minus - 1, now + a.t_minus - 1 + a.L
                    ledger.commit(f, s, e)
                    tables.committed(np.flatnonzero(f.sum(axis=1) > 0), s, e)
                    break
                tau += max(2, tau // 4)
    return views, decisions, found


def test_kept_tables_equal_fresh_states_on_over_1000_decisions():
    totals = np.zeros(3, dtype=int)
    for name, seeds, steps, taus in (
        ("tiny", range(30), 12, [2, 3, 5, 9, 17]),
        ("tiny-ra", range(20), 12, [2, 4, 8, 16]),
        ("ps", range(3), 10, [6, 12, 24]),
        ("ra", range(2), 10, [6, 12, 24]),
    ):
        totals += _run(name, seeds, steps, taus)
    views, decisions, found = totals
    assert decisions >= 1000 and views == decisions
    assert 0.1 * decisions < found < decisions


def test_tables_restart_for_an_earlier_window_start():
    p = load_preset("tiny")
    inst = build_instance(p, np.random.default_rng(0))
    c = inst.cluster
    rng = np.random.default_rng(1)
    ledger = Ledger(c.capacity)
    tables = SlotTables(c, 1e3, ledger)
    for now in (9, 3, 3, 40, 0):
        _random_commit(rng, c, ledger, tables, now, 6)
        _assert_view_equals(tables.view(now, 11), _fresh(c, 11, now, 1e3, ledger), now)


def _actions(env_id, seeds, limit, keep):
    ref.AOnlineNowCore.keep_tables = keep
    try:
        acts, _ = policy_actions(env_id, "aonline-hetero-now", seeds, limit)
    finally:
        ref.AOnlineNowCore.keep_tables = True
    return [(a.start, a.duration, a.worker_type, a.ps_type, tuple(a.workers), tuple(a.ps)) for a in acts]


@pytest.mark.parametrize(
    "env_id,seeds,limit",
    [
        ("HeteroML-tiny-v0", (0, 1, 2), None),
        ("HeteroML-tiny-ra-v0", (0, 1), None),
        ("HeteroML-v0", (0, 1), 30),
        ("HeteroML-v1", (0,), 20),
    ],
)
def test_policy_on_kept_tables_takes_the_per_decision_states_actions(env_id, seeds, limit):
    fast = _actions(env_id, seeds, limit, True)
    assert len(fast) >= len(seeds) * min(limit or 8, 8)
    assert fast == _actions(env_id, seeds, limit, False)


def test_sort_from_a_previous_order_equals_a_stable_argsort():
    """The spread search sorts the servers by window cost starting from the previous window's order: the result is
    numpy's stable argsort whatever the start (ties, zeros of both signs, nearly sorted and reversed starts)."""
    from edgegym.families.hetero_ml.mincost import _sort_by_cost

    rng = np.random.default_rng(7)
    for trial in range(1200):
        H = int(rng.integers(1, 160))
        cost = rng.choice([0.0, -0.0, 1.5, 2.0, 1e300], size=H) if trial % 3 == 0 else rng.uniform(0, 10, H)
        if trial % 3 == 1:
            cost = np.round(cost, 1)  # many ties
        order = rng.permutation(H) if trial % 2 else np.argsort(cost + rng.normal(0, 0.5, H), kind="mergesort")
        _sort_by_cost(order, cost, H)
        assert np.array_equal(order, np.argsort(cost, kind="mergesort")), trial
