"""The executed log's compiled grouping (``_kernels.log_order`` / ``log_rows``) against the NumPy it replaces
(``np.argsort(lw, kind="stable")`` and ``np.column_stack(...).astype(float)``): random logs with repeated and
negative workers, and the drained simulators of whole ``EdgeCloudML`` episodes (segments, chunk segments, the
episode's outcome). No timing here: ``benchmarks/steps_per_second.py`` measures the speed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import edgegym  # noqa: F401
from edgegym.families.edge_cloud import _kernels as K


def _numpy_rows(lw, ls, le, lc, n, label):
    o = np.argsort(lw[:n], kind="stable")
    w, s, e, c = lw[:n][o], ls[:n][o], le[:n][o], lc[:n][o]
    return np.column_stack([w, s, e, label[c]]).astype(float).reshape(-1, 4)


def test_log_order_is_numpys_stable_argsort_on_random_logs():
    rng = np.random.default_rng(0)
    for trial in range(1000):
        size = int(rng.integers(0, 60))
        n = int(rng.integers(0, size + 1))
        lw = rng.integers(-1, int(rng.integers(1, 12)), size=size).astype(np.int64)
        np.testing.assert_array_equal(K.log_order(lw, n), np.argsort(lw[:n], kind="stable"))
        ls = rng.random(size)
        le = ls + rng.random(size)
        lc = rng.integers(0, 30, size=size).astype(np.int64)
        label = rng.integers(0, 9, size=30).astype(np.int64)
        got = K.log_rows(lw, ls, le, lc, n, label)
        want = _numpy_rows(lw, ls, le, lc, n, label)
        assert got.dtype == want.dtype and got.shape == want.shape, trial
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("env_id", ["EdgeCloudML-v1", "EdgeCloudML-testbed-v0", "EdgeCloudML-tiny-v0"])
def test_drained_episode_segments_are_the_numpy_ones(env_id):
    env = gym.make(env_id)
    u = env.unwrapped
    rng = np.random.default_rng(1)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = np.asarray(u.action_masks())
            a = (rng.random(env.action_space.shape) * mask).astype(np.float32)
            _, _, term, trunc, info = env.step(a)
            done = term or trunc
        sim = u.sim
        n = int(sim._cnt[0])
        assert n > 0
        np.testing.assert_array_equal(sim.segments(), _numpy_rows(sim._lw, sim._ls, sim._le, sim._lc, n, sim.chunk_job))
        chunks = np.arange(sim.chunk_job.size)
        np.testing.assert_array_equal(sim.chunk_segments(),
                                      _numpy_rows(sim._lw, sim._ls, sim._le, sim._lc, n, chunks))
        np.testing.assert_array_equal(u._outcome.segments, sim.segments())
        w, s, e, c = sim._log()
        o = np.argsort(sim._lw[:n], kind="stable")
        for got, col in zip((w, s, e, c), (sim._lw, sim._ls, sim._le, sim._lc), strict=True):
            np.testing.assert_array_equal(got, col[:n][o])


def test_job_row_order_is_a_stable_sort_by_job_start_end():
    """``_order_rows`` (A_ps's per-job intervals): insertion sorts, finished by stable sorts past a budget of
    shifts, against NumPy's stable ``lexsort``; long jobs in order, reversed (the budget runs out) and shuffled,
    with ties in start and end."""
    rng = np.random.default_rng(2)
    for trial in range(1000):
        n = int(rng.integers(0, 400))
        js = rng.integers(0, int(rng.integers(1, 8)), size=n).astype(np.int64)
        ss = rng.integers(0, 40, size=n).astype(float)  # ties on purpose
        es = ss + rng.integers(0, 3, size=n)
        shape = trial % 3
        if shape == 1:  # every job's rows in reverse time order: the budget runs out on long jobs
            o = np.lexsort((-es, -ss, js))
            js, ss, es = js[o], ss[o], es[o]
        elif shape == 2:  # mostly in order: a few rows moved
            o = np.lexsort((es, ss))
            k = rng.integers(0, n, size=min(n, 5))
            o[k] = o[rng.permutation(k)]
            js, ss, es = js[o], ss[o], es[o]
        got = K._order_rows(js, ss, es, n)
        np.testing.assert_array_equal(got, np.lexsort((es, ss, js)), err_msg=f"trial {trial}")
