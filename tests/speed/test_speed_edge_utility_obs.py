"""Differential tests of the EdgeUtility observation: the env's observation (job-only features from the per-episode
job table, server-state features from the compiled simulator) against the observation computed from scratch
(``EdgeUtilityEnv._observation_reference``) and against an env on the pure simulator (``compiled=False``: the
server objects with no compiled kernel), over 1,000+ random states: identical observations, action masks and
rewards (``==`` on floats)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from edgegym.families.edge_utility import env as env_mod
from edgegym.families.edge_utility import simulator as sim_mod
from edgegym.families.edge_utility.env import EdgeUtilityEnv
from edgegym.families.edge_utility.testing import random_utility
from edgegym.families.edge_utility.utility_fn import vector_rows

CASES = [  # preset, config overrides (disciplines, cloud, padding, estimates off, relative features)
    ("testbed-stressed", {"workload": {"num_jobs": 300}}),
    ("testbed-stressed-v1", {"workload": {"num_jobs": 300}}),
    ("sim300-cloud", {"workload": {"num_jobs": 260}}),
    ("tiny-v1", {"workload": {"num_jobs": 200}, "env": {"max_edge_servers": 6}}),
    ("tiny", {"workload": {"num_jobs": 200}, "scheduler": {"discipline": "srpt"}}),
    ("tiny", {"workload": {"num_jobs": 150}, "scheduler": {"discipline": "hpu"}, "env": {"obs_estimates": False}}),
    ("tiny-v1", {"workload": {"num_jobs": 150}, "scheduler": {"discipline": "edf", "cloud": "same"}}),
    ("testbed-v1", {"workload": {"num_jobs": 200}, "env": {"allow_reject": True}}),
]


def _pure_reset(env: EdgeUtilityEnv, seed: int):
    """``env.reset(seed)`` with the pure-Python simulator (``compiled=False``)."""
    orig = sim_mod.UtilitySimulator

    class Pure(orig):
        def __init__(self, *a, **k):
            k["compiled"] = False
            super().__init__(*a, **k)

    env_mod.UtilitySimulator = Pure
    try:
        return env.reset(seed=seed)
    finally:
        env_mod.UtilitySimulator = orig


@pytest.mark.parametrize("case", range(len(CASES)))
def test_observation_matches_reference_and_pure_simulator(case):
    preset, config = CASES[case]
    fast, pure = EdgeUtilityEnv(preset, config=config), EdgeUtilityEnv(preset, config=config)
    rng = np.random.default_rng(case)
    states = 0
    for ep in range(2):
        o1, i1 = fast.reset(seed=ep)
        o2, i2 = _pure_reset(pure, ep)
        assert pure.sim._bank is None and all(getattr(s, "utab", None) is None for s in pure.sim.servers)
        done = False
        while not done:
            np.testing.assert_array_equal(o1, o2)
            np.testing.assert_array_equal(o1, fast._observation_reference())
            m1, m2 = fast.action_masks(), pure.action_masks()
            np.testing.assert_array_equal(m1, m2)
            states += 1
            a = int(rng.choice(np.flatnonzero(m1))) if rng.random() < 0.9 else int(rng.integers(fast.action_space.n))
            o1, r1, t1, _, i1 = fast.step(a)
            o2, r2, t2, _, i2 = pure.step(a)
            assert r1 == r2 and t1 == t2
            np.testing.assert_array_equal(i1["action_mask"], i2["action_mask"])
            done = t1
        np.testing.assert_array_equal(o1, o2)
        assert fast.episode_metrics()["objective"] == pure.episode_metrics()["objective"]
    assert states >= 300


def test_observation_after_deepcopy_and_pickle():
    """Copies made mid-episode (deep copy shares the job table, pickling drops it) continue identically."""
    env = EdgeUtilityEnv("testbed-stressed-v1", config={"workload": {"num_jobs": 400}})
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(150):
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(250):
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        o, r, t, _, _ = env.step(a)
        for c in copies:
            oc, rc, tc, _, _ = c.step(a)
            np.testing.assert_array_equal(o, oc)
            assert r == rc and t == tc
        if t:
            break
    assert t


def test_vector_rows_matches_vector():
    rng = np.random.default_rng(7)
    for _ in range(1000):
        n, m = int(rng.integers(1, 12)), int(rng.integers(1, 20))
        us = tuple(random_utility(rng) for _ in range(n))
        t = np.abs(rng.normal(0, 3, size=(n, m))) * float(rng.choice([1e-3, 1.0, 10.0, 100.0]))
        t[rng.random(t.shape) < 0.05] = np.inf
        np.testing.assert_array_equal(vector_rows(us, t), np.stack([u.vector(t[q]) for q, u in enumerate(us)]))


def test_job_table_keeps_few_blocks_and_recomputes_evicted_ones():
    """The job table holds at most ``MAX_BLOCKS`` blocks; a deep copy (which shares the table) left behind while the
    original runs on recomputes the evicted blocks with identical values."""
    from edgegym.families.edge_utility.env import _JobFeatures

    env = EdgeUtilityEnv("testbed-stressed", config={"workload": {"num_jobs": 1200}})
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(20):
        env.step(int(rng.integers(env.num_edge_servers)))
    behind = copy.deepcopy(env)
    assert behind._job_features is env._job_features
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(rng.integers(env.num_edge_servers)))
        assert len(env._job_features.blocks) <= _JobFeatures.MAX_BLOCKS
    assert 0 not in env._job_features.blocks
    for _ in range(300):
        o, _, done, _, _ = behind.step(int(rng.integers(behind.num_edge_servers)))
        np.testing.assert_array_equal(o, behind._observation_reference())
