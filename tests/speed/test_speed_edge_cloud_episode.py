"""Differential tests of three EdgeCloudML speed paths against the code they replace, kept as the reference:

- ``_kernels.job_intervals`` (A_ps's per-job running intervals at the drain: each row inserted among the job's
  components, no sort) against ``job_intervals_sorted`` (each job's rows sorted by (start, end), then swept), on
  random logs with ties and gaps at the merge tolerance, and on the whole logs of real episodes;
- the env's next decision point in one compiled call (``PaperSimulator.advance_and_candidates``) against
  ``advance_to`` then ``candidates`` (``EdgeCloudMLEnv._fused_prepare = False``), in lockstep over whole episodes:
  the same observations, rewards, masks, infos and episode metrics (``==``);
- Φ summed in the placement's compiled call (``_kernels.after_place``) against ``math.fsum`` of the partials (also
  in ``test_speed_history.py``), over those episodes."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import edgegym  # noqa: F401  (registers the ids)
from edgegym.families.edge_cloud import _kernels as K
from edgegym.families.edge_cloud._kernels import TOL
from edgegym.families.edge_cloud.env import EdgeCloudMLEnv


def _random_log(rng, trial):
    J = int(rng.integers(1, 10))
    n = int(rng.integers(0, 40 if trial % 3 else 400))  # long jobs too (> 64 rows: the reference's fallback sort)
    D = rng.integers(1, 5, size=J)
    chunk_job = np.repeat(np.arange(J), D).astype(np.int64)
    lc = rng.integers(0, chunk_job.size, size=n).astype(np.int64)
    kind = trial % 4
    if kind == 0:  # integer times: many exact ties in start and end, touching rows
        ls = rng.integers(0, 30, size=n).astype(float)
        le = ls + rng.integers(0, 3, size=n)
    elif kind == 1:  # gaps around the merge tolerance
        ls = np.round(rng.uniform(0, 10, size=n), 1)
        le = ls + rng.choice([0.0, 0.5 * TOL, TOL, 2 * TOL, 0.1], size=n)
        ls = ls + rng.choice([0.0, TOL, -TOL], size=n)
    elif kind == 2:  # each job's rows in reverse time order
        ls = np.sort(rng.uniform(0, 50, size=n))[::-1].copy()
        le = ls + rng.uniform(0, 3, size=n)
    else:
        ls = rng.uniform(0, 20, size=n)
        le = ls + rng.exponential(1.0, size=n)
    ls = np.maximum(ls, 0.0)
    lw = rng.integers(0, 3, size=n).astype(np.int64)
    cloud = rng.choice(chunk_job.size, size=int(rng.integers(0, chunk_job.size + 1)), replace=False).astype(np.int64)
    rho = np.round(rng.uniform(0, 20, size=chunk_job.size), 1)
    end = rho + np.round(rng.uniform(0, 3, size=chunk_job.size), 1)
    return lw, ls, le, lc, n, chunk_job, cloud, rho, end, J


def _assert_same_intervals(args, msg="", fast=None):
    got = (fast or K.job_intervals)(*args)
    want = K.job_intervals_sorted(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w, err_msg=msg)
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=msg)  # the same zeros too
    return want[0].size


def test_job_intervals_match_the_sorted_sweep_on_random_logs():
    rng = np.random.default_rng(7)
    intervals = 0
    for trial in range(1500):
        intervals += _assert_same_intervals(_random_log(rng, trial), f"trial {trial}")
    assert intervals > 10_000


def test_job_intervals_bridge_and_tie_cases():
    """Hand-made cases: a row bridging two components, a row inside one, a gap of exactly TOL (joins) and just
    over it (does not), equal starts with different ends (the sweep reports the first in (start, end) order)."""
    cases = [
        [(0.0, 1.0), (2.0, 3.0), (0.5, 2.5)],  # the third row bridges the first two
        [(0.0, 10.0), (2.0, 3.0)],  # inside
        [(0.0, 1.0), (1.0 + TOL, 2.0)],  # at the tolerance: joins
        [(0.0, 1.0), (1.0 + 3 * TOL, 2.0)],  # past it: two intervals
        [(5.0, 6.0), (5.0, 5.5), (5.0, 7.0), (1.0, 2.0), (3.0, 4.0), (2.0, 3.0)],  # equal starts; a late bridge
        [(0.0, 2.0), (-0.0, 1.0), (0.0, 1.0)],  # equal starts told apart by their ends: the sweep's first row
    ]
    for rows in cases:
        n = len(rows)
        ls = np.array([r[0] for r in rows])
        le = np.array([r[1] for r in rows])
        args = (np.zeros(n, np.int64), ls, le, np.zeros(n, np.int64), n, np.zeros(1, np.int64),
                np.zeros(0, np.int64), np.zeros(1), np.zeros(1), 1)
        _assert_same_intervals(args, str(rows))
    lw, ls, le, lc = np.zeros(3, np.int64), np.array([0.0, 2.0, 0.5]), np.array([1.0, 3.0, 2.5]), np.zeros(3, np.int64)
    js, ss, es = K.job_intervals(lw, ls, le, lc, 3, np.zeros(1, np.int64), np.zeros(0, np.int64), ls, le, 1)
    assert js.tolist() == [0] and ss.tolist() == [0.0] and es.tolist() == [3.0]


@pytest.mark.parametrize("env_id", ["EdgeCloudML-v0", "EdgeCloudML-v1", "EdgeCloudML-testbed-v0"])
def test_job_intervals_on_whole_episode_logs(env_id, monkeypatch):
    """The drain's call on the whole executed log of real episodes (tens of thousands of rows on the default ids)."""
    seen = []
    real = K.job_intervals

    def both(*args):
        seen.append(_assert_same_intervals(args, env_id, real))
        return real(*args)

    monkeypatch.setattr(K, "job_intervals", both)
    env = gym.make(env_id)
    rng = np.random.default_rng(1)
    for seed in range(2):
        env.reset(seed=seed)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            a = (rng.random(mask.shape) * mask).astype(np.float32) if mask.dtype == bool and \
                isinstance(env.action_space, gym.spaces.Box) else int(rng.choice(np.flatnonzero(mask)))
            _, _, term, trunc, _ = env.step(a)
            done = term or trunc
    assert len(seen) == 2 and min(seen) > 0


def _same(a, b, path="info"):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=path)
    else:
        assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), path


@pytest.mark.parametrize("preset, mode", [("tiny", "server_proportions"), ("testbed", "server_proportions"),
                                          ("testbed", "cloud_split"), ("sim100", "cloud_fraction")])
def test_fused_prepare_matches_advance_then_candidates(preset, mode, monkeypatch):
    """Two envs in lockstep, one with the fused next decision point and one with the reference path: every
    observation, reward, mask, info and the episode metrics equal; Φ equals fsum of its partials at every step."""
    rng = np.random.default_rng(3)
    fast = EdgeCloudMLEnv(preset, config={"env": {"action_mode": mode}})
    slow = EdgeCloudMLEnv(preset, config={"env": {"action_mode": mode}})
    monkeypatch.setattr(slow, "_fused_prepare", False)
    steps = seed = 0
    while steps < 300:  # whole episodes, at least 300 steps in all
        seed += 1
        o1, i1 = fast.reset(seed=seed)
        o2, i2 = slow.reset(seed=seed)
        np.testing.assert_array_equal(o1, o2)
        _same(i1, i2)
        done = False
        while not done:
            mask = fast.action_masks()
            np.testing.assert_array_equal(mask, slow.action_masks())
            if mode == "server_proportions":
                a = (rng.random(mask.size) * (rng.random(mask.size) < 0.7)).astype(np.float32)
            else:
                a = int(rng.choice(np.flatnonzero(mask)))
            r1 = fast.step(a)
            r2 = slow.step(a)
            np.testing.assert_array_equal(r1[0], r2[0])
            assert r1[1:4] == r2[1:4]
            _same(r1[4], r2[4])
            sim = fast.sim
            assert sim.projected_total_jct == math.fsum(sim._end_part[: sim._end_np].tolist()) - math.fsum(
                sim._arr_part[: sim._arr_np].tolist())
            steps += 1
            done = r1[2]
        assert "episode_metrics" in r1[4]


def test_drain_benchmark_runs_and_restores_the_kernel(capsys):
    """``benchmarks/edge_cloud_drain.py`` on a small preset: both kernels timed on the recorded logs (their outputs
    compared), and ``job_intervals`` put back afterwards."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import edge_cloud_drain

    real = K.job_intervals
    assert edge_cloud_drain.main(["--env", "EdgeCloudML-testbed-v0", "--episodes", "2", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "job_intervals_sorted (the reference)" in out and "the same outputs" in out
    assert K.job_intervals is real
