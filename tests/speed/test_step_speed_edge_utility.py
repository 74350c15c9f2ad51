"""Differential tests of the EdgeUtility stepping fast paths: each against the slower computation it replaces, with
``==`` on every value (no timing here; ``benchmarks/steps_per_second.py`` measures the speed)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_speed_edge_utility_obs import _pure_reset  # reset on the pure-Python simulator

import edgegym.workloads as workloads
from edgegym.families.edge_utility import env as env_mod
from edgegym.families.edge_utility.env import EdgeUtilityEnv
from edgegym.families.edge_utility.instance import UTILITY_DRAWS, sample_utilities, sample_utility


@pytest.mark.parametrize("inclusive", [False, True])
def test_sample_utilities_draws_what_sample_utility_draws(inclusive):
    """One array draw gives the functions (and leaves the generator where) one call per job would, on 300 random
    family sequences (empty ones included)."""
    names = list(UTILITY_DRAWS)
    for seed in range(300):
        pick = np.random.default_rng(seed)
        fams = [names[k] for k in pick.integers(0, len(names), size=int(pick.integers(0, 60)))]
        one, many = np.random.default_rng(seed + 10_000), np.random.default_rng(seed + 10_000)
        expected = tuple(sample_utility(one, f, inclusive) for f in fams)
        got = sample_utilities(many, fams, inclusive)
        assert got == expected, seed
        assert [type(x.a) for x in got] == [float] * len(got)
        assert one.random() == many.random(), seed  # the same number of draws


def test_sample_utilities_refuses_a_family_it_cannot_draw():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="'step'"):
        sample_utilities(rng, ["linear", "step"])
    assert rng.bit_generator.state == state  # refused before any draw


def test_trace_table_is_read_once_per_env_and_gives_the_same_jobs(monkeypatch):
    """An env's resets parse the Google 2011 table once (its cache, shared with its forks) and draw the jobs a fresh
    env draws with the same seed."""
    calls = []
    load = workloads.load_google2011

    def counting(*a, **k):
        calls.append(1)
        return load(*a, **k)

    monkeypatch.setattr(workloads, "load_google2011", counting)
    config = {"workload": {"num_jobs": 120}}
    env = EdgeUtilityEnv("testbed", config=config)
    if env.preset.workload.source != "google2011":
        pytest.skip("the default preset does not sample the trace")
    for seed in range(3):
        env.reset(seed=seed)
        if env._workload_source != "google2011":
            pytest.skip("the Google 2011 table is absent")
        fresh = EdgeUtilityEnv("testbed", config=config)
        fresh.reset(seed=seed)
        assert np.array_equal(env.jobs.release_s, fresh.jobs.release_s)
        assert env.jobs.utilities == fresh.jobs.utilities
    assert len(calls) == 1 + 3  # the env once, each fresh env once
    fork = env.fork(seed=5)
    assert fork._trace_cache is env._trace_cache
    assert not any(a.flags.writeable for table in env._trace_cache.values() for a in table)


def test_trace_release_times_with_and_without_a_cache():
    """The cached table gives the draws of a fresh read, for random and fixed windows and held-out parts."""
    cache: dict = {}
    base = EdgeUtilityEnv("testbed").preset.workload
    for k, (window, part) in enumerate([("random", (0.0, 1.0)), ("random", (0.5, 1.0)), (100, (0.0, 1.0))]):
        w = dataclasses.replace(base, num_jobs=200, window=window, window_part=part)
        for seed in range(4):
            a = env_mod._trace_release_times(w, np.random.default_rng(seed))
            if a is None:
                pytest.skip("the Google 2011 table is absent")
            b = env_mod._trace_release_times(w, np.random.default_rng(seed), cache)
            assert np.array_equal(a, b), (k, seed)
    assert len(cache) == 1


STEP_CASES = [  # preset, config overrides: both versions, padded rows, no cloud row padding, estimates off, reject
    ("testbed-stressed", {"workload": {"num_jobs": 250}}),
    ("testbed-stressed-v1", {"workload": {"num_jobs": 250}}),
    ("tiny-v1", {"workload": {"num_jobs": 150}, "env": {"max_edge_servers": 6}}),
    ("tiny", {"workload": {"num_jobs": 150}, "scheduler": {"discipline": "srpt"}}),
    ("tiny-v1", {"workload": {"num_jobs": 120}, "env": {"obs_estimates": False}}),
    ("testbed-v1", {"workload": {"num_jobs": 150}, "env": {"allow_reject": True}}),
]


def _same_step(a, b):
    (oa, ra, ta, ua, ia), (ob, rb, tb, ub, ib) = a, b
    assert oa.dtype == ob.dtype and np.array_equal(oa, ob)
    assert (ra, ta, ua) == (rb, tb, ub)
    assert ia.keys() == ib.keys()
    for key, va in ia.items():
        if isinstance(va, np.ndarray):
            assert np.array_equal(va, ib[key]), key
        else:
            assert va == ib[key], key


@pytest.mark.parametrize("case", range(len(STEP_CASES)))
def test_step_fast_paths_match_the_general_estimate_paths(case):
    """Three envs on the same seeds and actions: one steps with nothing asked (the observation's estimates serve the
    dispatch credit), one asks ``query_finish()`` of every row before each step (the per-step row cache), one asks
    ``query_finish(rows)`` of a few rows with the observation's estimates dropped (the general per-server path):
    identical observations, rewards, infos and episode metrics, and every ``query_finish`` equals the simulator's
    estimates; Python ints, NumPy integers and 0-d arrays are the same action."""
    preset, config = STEP_CASES[case]
    envs = [EdgeUtilityEnv(preset, config=config) for _ in range(3)]
    rng = np.random.default_rng(case)
    steps = 0
    for ep in range(2):
        first = [e.reset(seed=ep) for e in envs]
        for o, _ in first[1:]:
            assert np.array_equal(o, first[0][0])
        done = False
        while not done:
            legal = np.flatnonzero(envs[0].action_masks())
            a = int(rng.choice(legal)) if rng.random() < 0.9 else int(rng.integers(0, envs[0].action_space.n))
            full = envs[1].query_finish()
            sim_est = envs[1].sim.estimates(envs[1]._k)
            rows = [r for r in range(envs[0].N) if envs[0]._server_of_row(r) is not None]
            assert [full[r] for r in rows] == [sim_est[envs[0]._server_of_row(r)] for r in rows]
            envs[2]._est_sim = None
            few = sorted(set(rng.choice(envs[0].N, size=min(3, envs[0].N), replace=False).tolist()))
            part = envs[2].query_finish(rows=few)
            assert [part[r] for r in few] == [full[r] for r in few]
            results = [envs[0].step(a), envs[1].step(np.int64(a)), envs[2].step(np.array(a))]
            for other in results[1:]:
                _same_step(results[0], other)
            done = results[0][2]
            steps += 1
    assert steps >= 240


def _narrow(env):
    """Start the O4A bank with one-slot queues, a two-interval set pool and one-level rows, so that every kind of
    growth happens within a short episode."""
    b = env.sim._o4bank
    M = b.lv.nk.size
    b.slots = np.zeros((M, 1), dtype=np.int64)
    b.PS, b.PE = np.zeros(2), np.zeros(2)
    lv = b.lv
    lv.lu, lv.ls, lv.le = np.zeros((M, 1)), np.zeros((M, 1)), np.zeros((M, 1))
    lv.lptr = np.zeros((M, 2), dtype=np.int64)


FUSED_CASES = [  # every server in the O4A bank (the fused step's domain); with and without the estimates
    ("testbed-stressed", {"workload": {"num_jobs": 300}}, False),
    ("testbed-stressed-v1", {"workload": {"num_jobs": 300}}, True),
    ("testbed-stressed", {"workload": {"num_jobs": 300}, "env": {"obs_estimates": False}}, True),
    ("sim300-cloud", {"workload": {"num_jobs": 260}, "scheduler": {"cloud": "same"}}, False),
    ("testbed-v1", {"workload": {"num_jobs": 200}, "env": {"allow_reject": True}}, True),
]


@pytest.mark.parametrize("case", range(len(FUSED_CASES)))
def test_fused_step_matches_the_separate_calls(case, monkeypatch):
    """``UtilitySimulator.step_fast`` (commit, advance and the next job's estimates in one kernel call) against the
    three calls (``FUSED_STEP`` off) on 500+ random steps: identical observations, rewards, infos, plans,
    completions and server state, also when queues, the set pool and the level rows must grow mid-call."""
    from edgegym.families.edge_utility import simulator as sim_mod

    preset, config, narrow = FUSED_CASES[case]
    fused, split = EdgeUtilityEnv(preset, config=config), EdgeUtilityEnv(preset, config=config)
    rng = np.random.default_rng(case)
    steps = 0
    for ep in range(2):
        for env in (fused, split):
            env.reset(seed=ep)
            if narrow:
                _narrow(env)
        done = False
        while not done:
            legal = np.flatnonzero(fused.action_masks())
            a = int(rng.choice(legal))
            monkeypatch.setattr(sim_mod, "FUSED_STEP", True)
            one = fused.step(a)
            monkeypatch.setattr(sim_mod, "FUSED_STEP", False)
            two = split.step(a)
            _same_step(one, two)
            done = one[2]
            steps += 1
        sa, sb = fused.sim, split.sim
        assert sa.plans == sb.plans
        assert np.array_equal(sa.utility, sb.utility) and np.array_equal(sa.jrt_s, sb.jrt_s, equal_nan=True)
        assert sa.preemptions == sb.preemptions and sa.now == sb.now
        for name in ("si", "sf", "jf", "jp"):
            assert np.array_equal(getattr(sa._o4bank, name), getattr(sb._o4bank, name)), name
    assert steps >= 400


def test_plans_are_built_on_first_read_and_follow_copies():
    """``sim.plans`` on the O4A bank holds each plan's scalars until read: it reads like the dict of the server
    objects' plans (keys in commit order, ``==``, ``in``, ``len``), and forks, pickles and deep copies read their own
    bank's pool."""
    import copy
    import pickle

    from edgegym.families.edge_utility.disciplines import Plan

    config = {"workload": {"num_jobs": 200}}
    env = EdgeUtilityEnv("testbed-stressed", config=config)
    pure = EdgeUtilityEnv("testbed-stressed", config=config)
    env.reset(seed=3)
    _pure_reset(pure, 3)
    rng = np.random.default_rng(3)
    for _ in range(80):
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        env.step(a)
        pure.step(a)
    plans = env.sim.plans
    assert list(plans) == list(pure.sim.plans) == [j for j in range(80) if j in plans]
    copies = [env.fork(seed=1), env.fork(future="keep"), pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    assert len(plans) == len(pure.sim.plans) == 80 and 79 in plans and 80 not in plans
    assert plans == pure.sim.plans and pure.sim.plans == dict(plans.items())
    assert all(type(plans[j]) is Plan for j in plans)
    for c in copies:
        assert c.sim.plans.bank is c.sim._o4bank is not env.sim._o4bank
        assert c.sim.plans == pure.sim.plans


def test_upper_bound_matches_the_per_job_definition():
    """``upper_bound`` (Python floats, ``math.isfinite``) gives the paper's bound ``max_j g_i(p_ij/s + Δ↑ + Δ↓)`` job
    by job as the numpy-scalar loop does, with every column, some, or none usable (0 without a usable server)."""
    from edgegym.families.edge_utility.simulator import upper_bound

    env = EdgeUtilityEnv("sim300-cloud", config={"workload": {"num_jobs": 300}})
    for seed in range(3):
        env.reset(seed=seed)
        jobs = env.jobs
        for usable in (None, np.arange(jobs.num_servers) % 3 == 0, np.zeros(jobs.num_servers, dtype=bool)):
            lb = jobs.p_s / 1.5 + jobs.up_s + jobs.down_s
            if usable is not None:
                lb = np.where(usable[None, :], lb, np.inf)
            best = lb.min(axis=1)
            want = np.array([g(t) if np.isfinite(t) else 0.0 for g, t in zip(jobs.utilities, best, strict=True)])
            got = upper_bound(jobs, 1.5, usable)
            assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("relative", [False, True])
def test_obs_server_features_is_the_numpy_arithmetic(relative):
    """The compiled arithmetic of the observation's server features against the numpy expressions it replaces
    (``est - r``, ``est - est.min()``, ``ql / (1 + ql.max())``), bit for bit, on 500 random rows with infinities and
    NaNs, compiled and as Python."""
    from edgegym.families.edge_utility import _kernels as K

    rng = np.random.default_rng(int(relative))
    for trial in range(500):
        n = int(rng.integers(1, 25))
        est = rng.exponential(5.0, n) + rng.uniform(0, 1e4)
        if trial % 7 == 0:
            est[rng.integers(n)] = np.inf
        if trial % 11 == 0:
            est[rng.integers(n)] = np.nan
        ql = rng.integers(0, 40, n).astype(float)
        r = float(rng.uniform(0, 1e4))
        for fn in (K.obs_server_features, K.obs_server_features.py_func):
            feat = np.full((3, n), -1.0)
            with np.errstate(invalid="ignore"):
                fn(est, r, ql, relative, feat)
                e = est - r
                want = [e - e.min() if relative else e, ql / (1.0 + ql.max()) if relative else ql, e]
            for got_row, want_row in zip(feat, want, strict=True):
                assert got_row.tobytes() == np.asarray(want_row, dtype=float).tobytes(), trial
