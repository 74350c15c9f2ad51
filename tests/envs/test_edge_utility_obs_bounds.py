"""EdgeUtility's observation space declares finite bounds (the features' own, from ``observation_features``), and
no observation leaves them: full episodes of the longest presets, under a random legal policy and under the policy
that piles every job on one server (the longest queues)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import edgegym
from edgegym.core.features import observation_features
from edgegym.families.edge_utility import env as eu_env

EU_IDS = [i for i in edgegym.registered_ids() if i.startswith("EdgeUtility-")]


@pytest.mark.parametrize("env_id", EU_IDS)
def test_declared_bounds_are_finite_and_the_features(env_id):
    env = gym.make(env_id)
    feats = observation_features(env)
    space = env.observation_space
    assert np.all(np.isfinite(space.high)) and np.all(np.isfinite(space.low))
    np.testing.assert_array_equal(space.low, np.array([f[2] for f in feats], dtype=np.float32))
    np.testing.assert_array_equal(space.high, np.array([f[3] for f in feats], dtype=np.float32))
    env.close()


def test_the_log_bounds_hold_for_any_finite_input():
    big = np.finfo(np.float64).max
    assert math.log1p(big) <= eu_env._LOG_MAX
    assert math.log1p(eu_env.MAX_NUM_JOBS) <= eu_env._LOG_QUEUE_MAX
    tiny = np.finfo(np.float64).smallest_subnormal
    for n, span in [(50, tiny), (50, 1e-300), (1, big), (50, 1.0), (0, 1.0)]:
        v = eu_env._log_rate(n, span)
        assert math.isfinite(v) and 0.0 <= v <= eu_env._LOG_RATE_MAX, (n, span, v)
    assert eu_env._log_rate(50, 0.0) == 0.0
    assert eu_env._log_rate(7, 2.0) == math.log1p(3.5)  # unchanged where the rate is finite


def _episode(env_id: str, policy: str, seed: int = 0) -> tuple[int, float]:
    env = gym.make(env_id)
    space = env.observation_space
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    steps, top, done = 0, float(obs.max()), False
    while not done:
        assert space.contains(obs), f"{env_id} step {steps}: {np.flatnonzero((obs > space.high) | (obs < space.low))}"
        legal = np.flatnonzero(env.unwrapped.action_masks())
        a = int(rng.choice(legal)) if policy == "random" else int(legal[0])
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
        steps += 1
        top = max(top, float(obs.max()))
    env.close()
    return steps, top


@pytest.mark.parametrize(
    "env_id, policy",
    [
        # the longest episode (4000 jobs), every job on one server: the longest queues (60 s: slow)
        pytest.param("EdgeUtility-testbed-paper-literal-v0", "one-server", marks=pytest.mark.slow),
        ("EdgeUtility-testbed-paper-literal-v0", "random"),
        ("EdgeUtility-v0", "random"),
        ("EdgeUtility-v1", "random"),
    ],
)
def test_full_episodes_stay_inside_the_declared_space(env_id, policy):
    # the sim300 presets (3000 jobs on 100 servers, ~25 s each) were checked the same way by hand (notes)
    steps, top = _episode(env_id, policy)
    assert steps >= 2000
    assert top < 10.0  # what the docs say the shipped presets reach (docs/families/edge_utility.md)
