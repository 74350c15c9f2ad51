"""``keep_schedule=False`` (EdgeCloudML): memory bounded by the jobs in the system instead of the history.

The simulator then keeps per-chunk state in a sliding window of slots and consumes the executed log as jobs
finish (``_kernels.flush_log``). Everything it decides and reports must be identical to the full-history simulator
(itself tested against the pure reference): candidate tables, per-step records, completions, Φ, preemptions, A_ps's
log and draws; the busy time is the exact sum of the runs' lengths. Small windows and flush thresholds force many
slides, growths and flushes on small instances."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np
import pytest

import edgegym  # noqa: F401  (registers the envs)
from edgegym.families.edge_cloud import _kernels
from edgegym.families.edge_cloud import _reference as ref
from edgegym.families.edge_cloud import simulator as simmod
from edgegym.families.edge_cloud.simulator import PaperSimulator
from edgegym.families.edge_cloud.testing import random_instance, random_placement


@pytest.fixture
def small_window(monkeypatch):
    """A 4-slot initial window and a flush every few log rows: every mechanism runs on tiny instances."""
    monkeypatch.setattr(simmod, "_WIN_MIN", 4)
    monkeypatch.setattr(simmod, "_FLUSH_MIN", 3)


def _instance(seed: int):
    rng = np.random.default_rng(seed)
    cluster, jobs = random_instance(
        rng, num_servers=int(rng.integers(1, 4)), max_workers=int(rng.integers(1, 4)),
        num_jobs=int(rng.integers(1, 40)), max_chunks=int(rng.integers(1, 6)), num_types=int(rng.integers(1, 3)),
        zero_delay=bool(rng.random() < 0.2), integer_p=bool(rng.random() < 0.5))
    if seed % 3 == 0:  # sparse arrivals: jobs finish between arrivals, so the window slides instead of growing
        J = jobs.num_jobs
        jobs = dataclasses.replace(jobs, arrival_slots=np.sort(rng.integers(0, 3 * J + 1, size=J)).astype(float))
    return cluster, jobs


def _episode(cluster, jobs, seed: int, keep: bool, slotted: bool):
    rng = np.random.default_rng(seed)
    sim = PaperSimulator(cluster, jobs, rng=np.random.default_rng(seed + 1), slotted=slotted, keep_schedule=keep)
    steps = []
    for j in range(jobs.num_jobs):
        sim.advance_to(float(jobs.arrival_slots[j]))
        cand = sim.candidates(j)
        D = int(jobs.num_chunks[j])
        if seed % 2 and np.isfinite(cand.q).any():  # A_greedy, else a random placement
            counts, n_cloud = ref.greedy_placement(cand.q, np.arange(cand.q.size), D, cand.p_edge, cand.qc0, cand.qc1)
        else:
            counts, n_cloud = random_placement(sim, cluster, j, D, rng)
        rec = sim.place(j, counts, n_cloud, cand)
        steps.append((cand, rec, sim.jobs_in_system(), sim.projected_total_jct))
    return sim, sim.drain(), steps


@pytest.mark.parametrize("block", range(4))
def test_bounded_history_is_identical_to_the_full_one(block, small_window):
    slid = grown = 0
    for seed in range(block * 100, (block + 1) * 100):
        cluster, jobs = _instance(seed)
        slotted = seed % 5 == 0
        a, oa, sa = _episode(cluster, jobs, seed, True, slotted)
        b, ob, sb = _episode(cluster, jobs, seed, False, slotted)
        for (ca, ra, na, pa), (cb, rb, nb, pb) in zip(sa, sb, strict=True):
            for f in ("q", "t_star", "wait", "a2_weight", "a2_count", "backlog"):
                np.testing.assert_array_equal(getattr(ca, f), getattr(cb, f), err_msg=f"seed {seed} {f}")
            assert (ca.qc0, ca.qc1) == (cb.qc0, cb.qc1)
            assert ra["delta_phi"] == rb["delta_phi"] and ra["projected_jct"] == rb["projected_jct"], seed
            assert ra["postponed_chunks"] == rb["postponed_chunks"] and ra["zeta"] == rb["zeta"]
            np.testing.assert_array_equal(ra["alpha"], rb["alpha"])
            assert (na, pa) == (nb, pb)
        np.testing.assert_array_equal(oa.completion_slots, ob.completion_slots)
        np.testing.assert_array_equal(oa.edge_chunks, ob.edge_chunks)
        np.testing.assert_array_equal(oa.cloud_chunks, ob.cloud_chunks)
        assert oa.preemptions == ob.preemptions and oa.extra == ob.extra, seed
        np.testing.assert_array_equal(a.ps_log, b.ps_log)  # A_ps: same intervals, same draws
        assert a.rng.bit_generator.state == b.rng.bit_generator.state
        seg = a.segments()
        assert b.busy_time == math.fsum((seg[:, 2] - seg[:, 1]).tolist())  # exact sum of the same runs
        assert ob.segments.shape == (0, 4)
        slid += b.chunk_base > 0
        grown += b._win_cap > 4
    assert slid >= 10 and grown >= 10  # both window mechanisms ran


def test_flush_log_merges_like_job_intervals():
    """``flush_log`` (the consumed log) against ``job_intervals`` (the whole log at the drain), on random logs
    consumed in several flushes: the same intervals, counts and exact busy time; kept rows stay in order."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        J, n = int(rng.integers(1, 8)), int(rng.integers(0, 40 if _ % 4 else 400))  # long jobs: > 64 rows
        D = rng.integers(1, 4, size=J)
        offsets = np.concatenate([[0], np.cumsum(D)]).astype(np.int64)
        chunk_job = np.repeat(np.arange(J), D).astype(np.int64)
        lc = rng.integers(0, chunk_job.size, size=n).astype(np.int64)
        ls = np.round(rng.uniform(0, 10, size=n), 1)
        le = ls + np.round(rng.uniform(0, 2, size=n), 1)
        lw = np.where(rng.random(n) < 0.2, -1, rng.integers(0, 3, size=n)).astype(np.int64)
        job_end = np.round(rng.uniform(0, 12, size=J), 1)
        full = _kernels.job_intervals(lw, ls, le, lc, n, chunk_job, np.zeros(0, np.int64), ls, le, J)
        # reference: every row, edge or cloud, as a log row (cloud rows given as "log" rows too)
        cnt = np.array([n, 0, 0, 0, 0], dtype=np.int64)
        llast = np.array([n - 1 if n else -1, -1], dtype=np.int64)
        w = [a.copy() for a in (lw, ls, le, lc)]
        ran, busy, fl = np.zeros(chunk_job.size, np.bool_), np.zeros(64), np.zeros(4, np.int64)
        iv = [np.zeros(n + 1, np.int64), np.zeros(n + 1), np.zeros(n + 1)]
        for t in (*np.sort(rng.uniform(0, 12, size=2)), math.inf):
            kept_before = [(w[0][i], w[1][i], w[2][i], w[3][i]) for i in range(int(cnt[0]))]
            _kernels.flush_log(float(t), *w, cnt, llast, chunk_job, job_end, ran, busy, fl, *iv)
            kept = [(w[0][i], w[1][i], w[2][i], w[3][i]) for i in range(int(cnt[0]))]
            assert kept == [r for r in kept_before if job_end[chunk_job[r[3]]] > t]
        m = int(fl[2])
        o = np.argsort(iv[0][:m], kind="stable")
        for got, want in zip((iv[0][:m][o], iv[1][:m][o], iv[2][:m][o]), full, strict=True):
            np.testing.assert_array_equal(got, want)
        edge = lw >= 0
        assert fl[0] == edge.sum() and fl[1] == np.unique(lc[edge]).size
        assert math.fsum(busy[: int(fl[3])].tolist()) == math.fsum((le[edge] - ls[edge]).tolist())
        assert llast[0] == -1  # its row was consumed (t = inf at the end)


def _rollout(env_id, cfg, keep, seed=2, fork_at=None):
    env = gym.make(env_id, config=cfg, keep_schedule=keep)
    u = env.unwrapped
    from edgegym.agents.registry import make_policy

    pol = make_policy("aonline", u, seed)
    obs, _ = u.reset(seed=seed)
    pol.reset(seed)
    out, done, k, forks = [], False, 0, []
    while not done:
        if k == fork_at:
            forks = [u.fork(seed=1, future=f) for f in ("keep", "resample")]
        a, _ = pol.predict(obs, deterministic=True)
        obs, r, done, _, info = u.step(a)
        out.append((obs.tobytes(), r))
        k += 1
    return out, info["episode_metrics"], forks, u


@pytest.mark.parametrize("env_id,cfg", [
    ("EdgeCloudML-testbed-v0", None),
    ("EdgeCloudML-v0", {"workload": {"num_jobs": 150}}),
    ("EdgeCloudML-tiny-v0", {"env": {"action_mode": "cloud_split"}}),
])
def test_env_without_schedule_gives_the_same_episode(env_id, cfg, small_window):
    a_steps, a_m, a_forks, _ = _rollout(env_id, cfg, True, fork_at=5)
    b_steps, b_m, b_forks, u = _rollout(env_id, cfg, False, fork_at=5)
    assert a_steps == b_steps  # observations and rewards, bit for bit
    assert a_m.keys() == b_m.keys()
    for k in a_m:
        if k == "utilisation":  # the busy time summed exactly instead of by NumPy
            assert b_m[k] == pytest.approx(a_m[k], rel=1e-12)
        else:
            assert a_m[k] == b_m[k], k
    assert u.episode_series()["util"] == []
    with pytest.raises(RuntimeError, match="keep_schedule=False"):
        u.sim.segments()
    for fa, fb in zip(a_forks, b_forks, strict=True):  # forks mid-episode: the same futures either way
        ra, rb = _run_fork(fa), _run_fork(fb)
        assert ra[0] == rb[0] and ra[1]["objective"] == rb[1]["objective"]


def _run_fork(u):
    from edgegym.agents.registry import make_policy

    pol = make_policy("aonline", u, 0)
    obs, done, out, info = u._observation(), False, [], {}
    while not done:
        a, _ = pol.predict(obs, deterministic=True)
        obs, r, done, _, info = u.step(a)
        out.append(r)
    return out, info["episode_metrics"]


def test_memory_does_not_grow_with_the_history(small_window):
    """A long episode: the per-chunk window and the log stay at the size of the jobs in the system."""
    env = gym.make("EdgeCloudML-testbed-v0", config={"workload": {"num_jobs": 2000}}, keep_schedule=False)
    u = env.unwrapped
    from edgegym.agents.registry import make_policy

    pol = make_policy("aonline", u, 0)
    obs, _ = u.reset(seed=0)
    done, most_rows = False, 0
    while not done:
        a, _ = pol.predict(obs, deterministic=True)
        obs, _, done, _, _ = u.step(a)
        most_rows = max(most_rows, int(u.sim._cnt[0]))
    chunks = int(u.jobs.num_chunks.sum())
    assert u.sim.chunk_base > 0 and u.sim._win_cap * 10 < chunks
    assert most_rows * 10 < u.sim._fl[0]  # runs consumed over the episode vs the most rows held at once


def test_render_needs_the_schedule():
    with pytest.raises(ValueError, match="keep_schedule=True"):
        gym.make("EdgeCloudML-tiny-v0", render_mode="rgb_array", keep_schedule=False)
