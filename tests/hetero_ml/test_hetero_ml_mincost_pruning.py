"""The pruned minimum-cost search and the shared per-decision state of ``aonline-hetero-now`` change nothing.

Differential: ``mincost(..., prune=True)`` (the shipped search: candidates skipped by cached server bounds) against
``mincost(..., prune=False)`` (the plain enumeration) on more than 1,000 random decision states of tiny and
v0-sized clusters, every tie-break, with and without ``min_completion``, and on about 700 more on heavily loaded
windows (where the PS-host, bandwidth and capacity pre-checks decide); the same candidate, bit for bit. Episode
level: the shipped policy against the plain one (``prune=False``, one sub-round state per window, numpy-built window
arrays) takes the same actions and reaches the same objective on several seeds.
"""

from __future__ import annotations

import functools

import edgegym.agents.reference.hetero_ml as ref
import numpy as np
import pytest
from edgegym.agents.runner import make_env

from edgegym.families.hetero_ml.instance import build_instance
from edgegym.families.hetero_ml.mincost import SubRound, mincost, price_base
from edgegym.families.hetero_ml.presets import load_preset

MODES = ("earliest_completion", "paper_order", "completion_first")


def _key(c):
    return None if c is None else (c.key(), c.cost)


def _states(name: str, seeds, taus, jobs_per_state: int):
    """(S, jobs, j, threshold, tie_break, min_completion) decision states on random partly used windows."""
    p = load_preset(name)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        inst = build_instance(p, rng)
        c = inst.cluster
        tau = int(rng.choice(taus))
        fill = rng.uniform(0.3, 1.0)  # how loaded the window is: from mostly free to mostly full
        used = rng.uniform(0, 1, size=(c.num_servers, c.num_resources, tau)) * c.capacity[:, :, None] * fill
        used[rng.uniform(size=used.shape) < 0.3] = 0.0  # free (server, resource, slot) cells: zero prices
        used[:, :2] = np.floor(used[:, :2])
        lam = price_base(150, c.num_servers, c.num_resources, 10.0) if rng.uniform() < 0.5 else 1e3
        S = SubRound(c, tau, 1, lam, init_used=used)
        for j in rng.choice(inst.jobs.num_jobs, size=min(jobs_per_state, inst.jobs.num_jobs), replace=False):
            thr = float(inst.jobs.weight[j]) * float(rng.choice([1e-3, 1e-1, 1.0, 100.0]))
            yield S, inst.jobs, int(j), thr, MODES[int(rng.integers(3))], int(rng.choice([0, 0, tau // 2]))


def test_pruned_search_equals_plain_search_on_over_1000_states():
    n = found = 0
    gen = [
        _states("tiny", range(120), [4, 8, 16], 4),
        _states("tiny-ra", range(120), [4, 8, 16], 4),
        _states("ps", range(6), [12, 24], 6),
        _states("ra", range(4), [12, 24], 6),
    ]
    for states in gen:
        for S, jobs, j, thr, mode, minc in states:
            a = mincost(S, jobs, j, thr, mode, min_completion=minc, prune=True)
            b = mincost(S, jobs, j, thr, mode, min_completion=minc, prune=False)
            assert _key(a) == _key(b), (j, thr, mode, minc)
            n += 1
            found += a is not None
    assert n >= 1000
    assert 0.1 * n < found < n  # both accepted and rejected states are exercised


def _loaded_states(name: str, seeds, taus, jobs_per_state: int):
    """Decision states on heavily loaded windows (70-100 % of capacity in most cells, one server in four nearly
    free in a random stretch of slots): the spread search's PS-host and bandwidth tests and the per-(types, N)
    capacity pre-checks decide most candidates there."""
    p = load_preset(name)
    for seed in seeds:
        rng = np.random.default_rng(10_000 + seed)
        inst = build_instance(p, rng)
        c = inst.cluster
        H, R = c.num_servers, c.num_resources
        tau = int(rng.choice(taus))
        used = rng.uniform(0.7, 1.0, size=(H, R, tau)) * c.capacity[:, :, None]
        for h in np.flatnonzero(rng.uniform(size=H) < 0.25):
            a = int(rng.integers(0, tau))
            used[h, :, a : a + int(rng.integers(1, tau + 1))] *= rng.uniform(0.0, 0.3)
        used[:, :2] = np.floor(used[:, :2])
        lam = price_base(150, H, R, 10.0) if rng.uniform() < 0.5 else float(rng.choice([10.0, 1e3]))
        S = SubRound(c, tau, 1, lam, init_used=used)
        for j in rng.choice(inst.jobs.num_jobs, size=min(jobs_per_state, inst.jobs.num_jobs), replace=False):
            thr = float(inst.jobs.weight[j]) * float(rng.choice([1.0, 100.0, 1e4]))
            yield S, inst.jobs, int(j), thr, MODES[int(rng.integers(3))], int(rng.choice([0, tau // 3]))


def test_pruned_search_equals_plain_search_on_loaded_windows():
    n = found = 0
    for states in (
        _loaded_states("tiny", range(150), [4, 8, 16], 3),
        _loaded_states("tiny-ra", range(80), [4, 8, 16], 3),
        _loaded_states("ps", range(8), [16, 30], 5),
        _loaded_states("ra", range(3), [16, 30], 5),
    ):
        for S, jobs, j, thr, mode, minc in states:
            a = mincost(S, jobs, j, thr, mode, min_completion=minc, prune=True)
            b = mincost(S, jobs, j, thr, mode, min_completion=minc, prune=False)
            assert _key(a) == _key(b), (j, thr, mode, minc)
            n += 1
            found += a is not None
    assert n >= 700
    assert 0.05 * n < found < n


def test_prefix_state_equals_a_state_built_for_the_prefix():
    p = load_preset("ps")
    rng = np.random.default_rng(3)
    inst = build_instance(p, rng)
    c = inst.cluster
    used = rng.uniform(0, 1, size=(c.num_servers, c.num_resources, 40)) * c.capacity[:, :, None] * 0.8
    big = SubRound(c, 40, 5, 1e4, init_used=used)
    for tau in (9, 17, 31):
        small = SubRound(c, tau, 5, 1e4, init_used=used[:, :, :tau])
        view = big.prefix(tau)
        assert view.tau == tau and big.tau == 40
        for j in range(6):
            thr = float(inst.jobs.weight[j])
            assert _key(mincost(view, inst.jobs, j, thr, "completion_first")) == _key(
                mincost(small, inst.jobs, j, thr, "completion_first"))
    with pytest.raises(ValueError, match="prefix length 41"):
        big.prefix(41)


def _episode(env_id: str, seed: int, config, shipped: bool):
    saved = ref.mincost
    ref.mincost = functools.partial(mincost, prune=shipped)
    ref.AOnlineNowCore.share_windows = shipped
    SubRound.compiled = shipped  # the plain policy: derived window arrays from whole-array numpy
    try:
        env, pol = make_env(env_id, "aonline-hetero-now", seed, config)
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        acts, done, info = [], False, {}
        while not done:
            a, _ = pol.predict(obs, deterministic=True)
            acts.append((a.start, a.duration, a.worker_type, a.ps_type, tuple(a.workers), tuple(a.ps)))
            obs, _, term, trunc, info = env.step(a)
            done = term or trunc
        env.close()
    finally:
        ref.mincost = saved
        ref.AOnlineNowCore.share_windows = True
        SubRound.compiled = True
    return acts, info["episode_metrics"]["objective"]


@pytest.mark.parametrize(
    "env_id,config,seeds",
    [
        ("HeteroML-tiny-v0", None, (0, 1, 2, 3)),
        ("HeteroML-tiny-ra-v0", None, (0, 1, 2)),
        ("HeteroML-v0", {"workload": {"num_jobs": 8}}, (0, 1)),
        ("HeteroML-v1", {"workload": {"num_jobs": 12}}, (2,)),
    ],
)
def test_shipped_policy_takes_the_plain_policys_actions(env_id, config, seeds):
    for seed in seeds:
        fast, obj_fast = _episode(env_id, seed, config, True)
        plain, obj_plain = _episode(env_id, seed, config, False)
        assert fast == plain
        assert obj_fast == obj_plain


def test_kept_state_equals_a_fresh_build_at_the_next_decision():
    """The state a decision leaves (its commit applied) equals one built from the ledger afterwards, array for array,
    so the next decision at the same slot may start from it (the state-per-decision form, ``keep_tables=False``)."""
    env, pol = make_env("HeteroML-v0", "aonline-hetero-now", 3, {"workload": {"num_jobs": 40}})
    obs, _ = env.reset(seed=3)
    pol.reset(3)
    done, nows = False, []
    ref.AOnlineNowCore.keep_tables = False
    try:
        while not done:
            nows.append(int(env.unwrapped.view().decision_time))
            a, _ = pol.predict(obs, deterministic=True)
            core = pol.core
            S = core._last
            assert S is not None and S.offset == nows[-1]
            used = core.ledger.window(S.offset, S.offset + S.tau)
            fresh = SubRound(core.cluster, S.tau, S.offset, core.lam, init_used=used)
            for f in ("beta", "delta", "omega", "Aw", "Ap", "st", "cst"):
                assert np.array_equal(getattr(S, f), getattr(fresh, f)), (len(nows), f)
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
    finally:
        ref.AOnlineNowCore.keep_tables = True
    env.close()
    assert len(nows) == 40
    assert len(set(nows)) < len(nows)  # some decisions share a slot: the kept state is used
