"""Differential tests of EdgeCloudML's compiled A_greedy loop (``PaperSimulator.place_greedy``, the env's
``advance_aonline`` and ``AOnline.advance``) against the ordinary path (candidates, ``greedy_placement`` and
``place`` per job; ``step`` with A_online's actions). Results must be identical (==, not approx): placements,
completions, Φ, rewards, the return, A_ps's draws, ``fallbacks``; with the whole schedule kept and with the bounded
history, with tiny initial buffers so that every growth path runs inside the loop."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.registry import make_policy

import edgegym  # noqa: F401  (registers the ids)
import edgegym.families.edge_cloud.simulator as simmod
from edgegym.families.edge_cloud import _kernels
from edgegym.families.edge_cloud.simulator import PaperSimulator
from edgegym.families.edge_cloud.testing import random_instance

N_INSTANCES = 300


def _instance(seed: int):
    rng = np.random.default_rng(seed)
    kw = dict(
        num_servers=int(rng.integers(1, 5)),
        max_workers=int(rng.integers(1, 4)),
        num_jobs=int(rng.integers(1, 40)),
        max_chunks=int(rng.integers(1, 8)),
        num_types=int(rng.integers(1, 3)),
        zero_delay=bool(rng.random() < 0.2),
        integer_p=bool(rng.random() < 0.5),
    )
    cluster, jobs = random_instance(rng, **kw)
    return cluster, jobs, bool(rng.random() < 0.3), bool(rng.random() < 0.5), bool(rng.random() < 0.8)


def _ordinary(sim: PaperSimulator, stop: int, cloud: bool, order: np.ndarray) -> int:
    """Per job: advance, CALCULATEQ, A_greedy, place (what stepping the env with A_online does)."""
    fallbacks = 0
    for j in range(sim.num_placed, stop):
        sim.advance_to(float(sim.jobs.arrival_slots[j]))
        cand = sim.candidates(j)
        on = sim.cluster.has_cloud and cloud
        counts = np.zeros(sim.cluster.num_workers, dtype=np.int64)
        D = int(sim.jobs.num_chunks[j])
        n = _kernels.greedy(cand.q, order, D, cand.p_edge, cand.qc0 if on else math.inf,
                            cand.qc1 if on else math.inf, counts)
        fallbacks += not np.isfinite(cand.q).any()
        sim.place(j, counts, D if n < 0 else int(n), cand)
    return fallbacks


def _assert_same(a: PaperSimulator, b: PaperSimulator, seed) -> None:
    assert a.projected_total_jct == b.projected_total_jct, seed
    assert (a.now, a.num_placed, a.postponed_chunks) == (b.now, b.num_placed, b.postponed_chunks), seed
    for f in ("job_end", "job_zeta", "job_edge_chunks", "job_cloud_chunks"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f"seed {seed} {f}")
    n = a._chunks_in_use()
    for f in ("chunk_end", "chunk_worker", "chunk_rho", "chunk_seq", "chunk_alpha"):
        np.testing.assert_array_equal(getattr(a, f)[:n], getattr(b, f)[:n], err_msg=f"seed {seed} {f}")


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("block", range(3))
def test_place_greedy_matches_the_ordinary_path(block, keep, monkeypatch):
    monkeypatch.setattr(simmod, "_WIN_MIN", 4)  # tiny buffers: window slides, flushes, growth inside the loop
    monkeypatch.setattr(simmod, "_FLUSH_MIN", 3)
    for seed in range(block * N_INSTANCES // 3, (block + 1) * N_INSTANCES // 3):
        cluster, jobs, slotted, cloud, has_split = _instance(seed)
        kw = dict(slotted=slotted, keep_schedule=keep)
        a = PaperSimulator(cluster, jobs, rng=np.random.default_rng(seed), **kw)
        b = PaperSimulator(cluster, jobs, rng=np.random.default_rng(seed), **kw)
        for sim in (a, b):  # a tiny executed log too: it grows inside the loop (after an advance, for a cloud row)
            sim._lcap = 2
            sim._lw, sim._ls, sim._le, sim._lc = (x[:2].copy() for x in (sim._lw, sim._ls, sim._le, sim._lc))
        order = a.worker_order()
        J = jobs.num_jobs
        stop = int(np.random.default_rng(seed).integers(0, J + 1)) if has_split else J
        fa = _ordinary(a, stop, cloud, order)
        fb = b.place_greedy(stop, cloud=cloud)
        assert fa == fb, seed
        _assert_same(a, b, seed)
        fa += _ordinary(a, J, cloud, order)  # the rest: the ordinary path on b too, then the compiled loop on a
        fb += b.place_greedy(cloud=cloud)
        assert fa == fb, seed
        _assert_same(a, b, seed)
        oa, ob = a.drain(), b.drain()
        np.testing.assert_array_equal(oa.completion_slots, ob.completion_slots)
        assert oa.preemptions == ob.preemptions and oa.extra == ob.extra, seed
        np.testing.assert_array_equal(a.ps_log, b.ps_log)  # A_ps (its random PS draws included)
        if keep:
            np.testing.assert_array_equal(oa.segments, ob.segments)


def test_place_greedy_rewards_match_per_job_delta_phi():
    cluster, jobs = random_instance(np.random.default_rng(3), num_servers=3, max_workers=3, num_jobs=60, max_chunks=5)
    a = PaperSimulator(cluster, jobs)
    b = PaperSimulator(cluster, jobs)
    order = a.worker_order()
    total = ret = 0.0
    for j in range(jobs.num_jobs):
        a.advance_to(float(jobs.arrival_slots[j]))
        cand = a.candidates(j)
        counts = np.zeros(cluster.num_workers, dtype=np.int64)
        n = _kernels.greedy(cand.q, order, int(jobs.num_chunks[j]), cand.p_edge, cand.qc0, cand.qc1, counts)
        r = -a.place(j, counts, int(n), cand)["delta_phi"] / 7.0
        total += r
        ret += r
    acc = np.array([0.0, 0.0, 7.0])
    b.place_greedy(rewards=acc)
    assert (acc[0], acc[1]) == (total, ret)


def test_msum_total_is_fsum():
    rng = np.random.default_rng(0)
    partials = np.zeros(256)
    n = 0
    for i in range(3000):
        x = float(rng.choice([1e16, 1.0, 1e-8, 3.3, -1e16, 2.0**-30])) * float(rng.random())
        n = _kernels.msum_add(partials, n, x)
        if i % 7 == 0:
            assert _kernels.msum_total(partials, n) == math.fsum(partials[:n].tolist())
    assert _kernels.msum_total(partials, 0) == 0.0


def test_place_greedy_argument_errors():
    cluster, jobs = random_instance(np.random.default_rng(1), num_jobs=5)
    sim = PaperSimulator(cluster, jobs)
    with pytest.raises(ValueError, match="stop must lie in"):
        sim.place_greedy(6)
    sim.place_greedy(2)
    with pytest.raises(ValueError, match=r"stop must lie in \[2, 5\]"):
        sim.place_greedy(1)
    sim.place_greedy()
    sim.drain()
    with pytest.raises(RuntimeError, match="drained"):
        sim.place_greedy()


def _episode(env_id: str, seed: int, mode: str, edge_only: bool, fast_at: int, steps):
    env = gym.make(env_id, config={"env": {"action_mode": mode}}).unwrapped
    pol = make_policy("aonline-e" if edge_only else "aonline", env, seed)
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    total, k, done, obs_at = 0.0, 0, False, None
    while not done:
        if k == fast_at:
            obs, n, total = pol.advance(steps, total)
            assert obs is None  # AOnline.advance builds no observation: the env's observe() does on demand
            obs = env.observe()
            k += n
            obs_at = (k, obs)
            fast_at = -1
            continue
        if obs_at is not None and obs_at[0] == k:  # the observation it returned is the one step() would have
            obs_at = (k, obs)
        a, _ = pol.predict(obs, deterministic=True)
        obs, r, done, _, info = env.step(a)
        total += r
        k += 1
    return total, env.episode_return, info["episode_metrics"], obs_at


@pytest.mark.parametrize("mode", ["server_proportions", "cloud_fraction", "cloud_split"])
@pytest.mark.parametrize("edge_only", [False, True])
def test_advance_aonline_equals_stepping(mode, edge_only):
    for env_id, seed in (("EdgeCloudML-testbed-v1", 0), ("EdgeCloudML-testbed-v1", 1), ("EdgeCloudML-v1", 2)):
        plain = _episode(env_id, seed, mode, edge_only, -1, None)
        for fast_at, steps in ((0, None), (3, 11), (5, 0)):
            fast = _episode(env_id, seed, mode, edge_only, fast_at, steps)
            assert fast[0] == plain[0] and fast[1] == plain[1], (env_id, seed, fast_at)
            for key, v in plain[2].items():
                assert fast[2][key] == v or (v != v and fast[2][key] != fast[2][key]), key


def test_advance_aonline_observation_and_last_step():
    env = gym.make("EdgeCloudML-testbed-v1").unwrapped
    ref = gym.make("EdgeCloudML-testbed-v1").unwrapped
    pol, pref = make_policy("aonline", env, 0), make_policy("aonline", ref, 0)
    obs, _ = env.reset(seed=4)
    robs, _ = ref.reset(seed=4)
    J = env.jobs.num_jobs
    twin = env.fork(seed=0, future="keep")
    obs, n, _ = pol.advance(None, 0.0)
    assert n == J - 1 and obs is None  # never the last step; no observation built
    for _ in range(n):
        robs, *_ = ref.step(pref.predict(robs)[0])
    obs = env.observe()
    np.testing.assert_array_equal(obs, robs)
    obs_twin, n_twin, _ = twin.advance_aonline(None)  # observe=True: the observation where it stops
    assert n_twin == n
    np.testing.assert_array_equal(obs_twin, robs)
    np.testing.assert_array_equal(env.action_masks(), ref.action_masks())
    assert pol.advance(None, 1.5)[1:] == (0, 1.5)
    _, _, done, _, info = env.step(pol.predict(obs)[0])
    assert done and "episode_metrics" in info
    with pytest.raises(ValueError, match="steps must be >= 0"):
        env.advance_aonline(-1)


def test_advance_aonline_needs_the_paper_discipline():
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": {"discipline": "srtf"}}).unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="'paper' discipline"):
        env.advance_aonline(3)
    assert make_policy("aonline", gym.make("EdgeCloudML-testbed-v1"), 0).advance(3, 0.0) is None  # wrapped env


def test_rollout_decisions_unchanged_by_the_fast_continuation():
    """On >= 1,000 states: rollout with the base's compiled continuation and rollout with its step-by-step one
    (the base's ``advance`` switched off) take the same action on every state of the episodes the first one runs."""
    from edgegym.agents.runner import make_env

    name = "rollout(K=2,H=8,k=6):aonline"
    states = changed = 0
    seed = 0
    while states < 1000:
        env, fast = make_env("EdgeCloudML-testbed-v1", name, seed)
        _, plain = make_env("EdgeCloudML-testbed-v1", name, seed)
        plain.env = plain.unwrapped = fast.unwrapped  # both decide on the one env
        plain.base.env = plain.base.unwrapped = fast.unwrapped
        plain.base.advance = lambda steps, total: None  # forks copy it: every continuation steps one by one
        obs, _ = env.reset(seed=seed)
        fast.reset(seed)
        plain.reset(seed)
        done = False
        while not done:
            a = fast.predict(obs, deterministic=True)[0]
            assert plain.predict(obs, deterministic=True)[0] == a, (seed, states)
            obs, _, done, _, _ = env.step(a)
            states += 1
        changed += fast.changed
        seed += 1
    assert changed > 0  # rollout did depart from its base: the comparison covers real choices
