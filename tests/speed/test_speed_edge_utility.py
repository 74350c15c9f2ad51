"""Differential tests: the EdgeUtility simulator with its compiled kernels (what-if simulation of the priority
disciplines, O4A's PLAN, utility functions as arrays) against the pure-Python implementation (the same servers
with no utility table, ``server.utab = None``) on 1,000 random instances. Estimates, OnDisc increments, plans,
per-step completed utility (the reward) and the final utilities and response times must be identical."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.edge_utility import _kernels
from edgegym.families.edge_utility.disciplines import DISCIPLINES, O4AParams
from edgegym.families.edge_utility.simulator import UtilityJobs, UtilitySimulator
from edgegym.families.edge_utility.testing import random_utility as _utility

N_INSTANCES = 1000


def _instance(seed, big: bool = False, disc: str | None = None):
    rng = np.random.default_rng(seed)
    J, S, cloud = int(rng.integers(1, 15)), int(rng.integers(1, 4)), bool(rng.random() < 0.6)
    if big:  # long queues: one or two servers, many jobs
        J, S = int(rng.integers(40, 90)), int(rng.integers(1, 3))
    M = S + int(cloud)
    release = np.sort(rng.integers(0, 8, size=J)).astype(float) * float(rng.choice([0.25, 0.5]))
    p = rng.uniform(0.2, 2.0, size=(J, M))
    up = rng.uniform(0.0, 0.3, size=(J, M))
    delta = float(rng.choice([0.0, 0.3]))
    z = rng.uniform(-1, 1, size=(3, J, M))
    jobs = UtilityJobs(release, p * (1 + delta * z[0]), up * (1 + delta * z[1]), up * (1 + delta * z[2]), p, up, up,
                       tuple(_utility(rng) for _ in range(J)))
    disc = disc or DISCIPLINES[seed % len(DISCIPLINES)]
    fallback = str(rng.choice(["density", "none", "potential_density"]))
    mode = "paper_literal" if seed % 7 == 3 else "speed_consistent"
    params = O4AParams(eps=float(rng.choice([0.02, 0.5])), fallback=fallback, tentative_mode=mode)
    return rng, jobs, S, cloud, disc, params, bool(rng.random() < 0.2)


def _run(seed, compiled: bool, big: bool = False, disc: str | None = None):
    rng, jobs, S, cloud, disc, params, same_cloud = _instance(seed, big, disc)
    speed = 1.0 if seed % 3 else 1.02  # the analysed setting's s = 1 + ε on a third of the instances
    sim = UtilitySimulator(jobs, S, cloud, disc, cloud="infinite" if not same_cloud else disc, o4a=params, speed=speed,
                           compiled=compiled)
    if not compiled:  # the pure oracle: server objects, no compiled kernel anywhere
        assert sim._bank is None and all(getattr(srv, "utab", None) is None for srv in sim.servers)
    trace = []
    M = len(sim.servers)
    for i in range(jobs.num_jobs):
        done = sim.advance_to(float(jobs.release_s[i]))
        est = sim.estimates(i)
        inc = sim.jrt_increase(i) if disc != "o4a" else None
        k = int(rng.integers(M))
        latency = float(rng.choice([0.0, 0.0, 0.1]))
        sim.dispatch(i, k, latency)
        trace.append(([(c.job, c.server, c.completion_s, c.utility) for c in done], est, inc))
    trace.append(([(c.job, c.server, c.completion_s, c.utility) for c in sim.drain()], None, None))
    return sim, trace


@pytest.mark.parametrize("block", [*range(10), "big", "big-hpu", "big-hrdf"])
def test_compiled_paths_match_pure(block):
    seeds = range(30) if block.__class__ is str else range(block * N_INSTANCES // 10, (block + 1) * N_INSTANCES // 10)
    disc = block[4:] if block in ("big-hpu", "big-hrdf") else None  # time-dependent keys: the lazy what-if
    for seed in seeds:
        big = block.__class__ is str
        sa, ta = _run(seed, compiled=False, big=big, disc=disc)
        sb, tb = _run(seed, compiled=True, big=big, disc=disc)
        for (da, ea, ia), (db, eb, ib) in zip(ta, tb, strict=True):
            assert da == db, seed  # completions (job, server, time, utility) of each step: the reward
            if ea is not None:
                np.testing.assert_array_equal(ea, eb, err_msg=f"seed {seed} estimates")
            if ia is not None:
                np.testing.assert_array_equal(ia, ib, err_msg=f"seed {seed} jrt_increase")
        np.testing.assert_array_equal(sa.utility, sb.utility)
        np.testing.assert_array_equal(sa.jrt_s, sb.jrt_s)
        assert sa.plans == sb.plans, seed  # O4A's committed plans (γ, executable set, d†, f†, density)
        assert sa.preemptions == sb.preemptions


def test_utility_table_matches_python():
    rng = np.random.default_rng(5)
    us = [_utility(rng) for _ in range(300)]
    tab = _kernels.utility_table(us)
    for j, u in enumerate(us):
        for t in (0.0, 0.1, 0.5, 1.0, 2.5, u.c, u.c - 1e-9, 7.0, 1e3):
            assert _kernels.g_eval(j, t, *tab) == u(t), (u, t)


@pytest.mark.parametrize("variant", ["bank", "bank-big", "objects", "objects-big"])
def test_o4a_bank_and_server_objects_match_pure(variant, monkeypatch):
    """O4A alone on 250 instances per variant (long queues in the ``-big`` ones: the bank's queue, level-row and
    set-pool buffers grow): the struct-of-arrays O4A bank (``O4A_BANK``, the default) and the server objects with
    compiled helpers (``O4A_BANK`` off) both equal the pure servers: completions, estimates, plans, preemptions."""
    from edgegym.families.edge_utility import simulator

    monkeypatch.setattr(simulator, "O4A_BANK", variant.startswith("bank"))
    big = variant.endswith("big")
    for seed in range(250 if not big else 60):
        sa, ta = _run(seed, compiled=False, big=big, disc="o4a")
        sb, tb = _run(seed, compiled=True, big=big, disc="o4a")
        assert (sb._o4bank is not None) == variant.startswith("bank")
        for (da, ea, _), (db, eb, _) in zip(ta, tb, strict=True):
            assert da == db, seed
            if ea is not None:
                np.testing.assert_array_equal(ea, eb, err_msg=f"seed {seed} estimates")
        np.testing.assert_array_equal(sa.utility, sb.utility)
        np.testing.assert_array_equal(sa.jrt_s, sb.jrt_s)
        assert sa.plans == sb.plans, seed
        assert sa.preemptions == sb.preemptions
        assert [s.busy_s for s in sa.servers] == [s.busy_s for s in sb.servers], seed
        np.testing.assert_array_equal(sa.queue_lengths(), sb.queue_lengths())


def test_o4a_bank_estimates_of_some_servers():
    """``estimates(job, servers)`` on a subset (the env's ``query_finish(rows)``) equals the full call's entries."""
    for seed in range(40):
        rng, jobs, S, cloud, _, params, _ = _instance(seed, big=True, disc="o4a")
        sim = UtilitySimulator(jobs, S, cloud, "o4a", cloud="o4a", o4a=params)
        assert sim._o4bank is not None
        M = len(sim.servers)
        for i in range(jobs.num_jobs):
            sim.advance_to(float(jobs.release_s[i]))
            full = sim.estimates(i)
            some = [k for k in range(M) if rng.random() < 0.5]
            part = sim.estimates(i, some)
            np.testing.assert_array_equal(part[some], full[some])
            assert np.isinf(np.delete(part, some)).all()
            sim.dispatch(i, int(rng.integers(M)))
        sim.drain()
