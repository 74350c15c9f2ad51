"""A mid-episode env survives :func:`copy.deepcopy` and a :mod:`pickle` round trip, and the copy then steps exactly as
the original (every default id): compiled entry points and native argument structs the fast paths cache are not
copied, and are looked up again by the copy's next step."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import edgegym

DEFAULT_IDS = [i for i in edgegym.registered_ids() if i.count("-") == 1]  # <Family>-v<N>: each family's defaults


def _action(env, rng):
    """A legal action: uniform over the mask (Discrete), or the mask times a uniform draw (Box)."""
    u = env.unwrapped
    mask = np.asarray(u.action_masks())
    if isinstance(env.action_space, gym.spaces.Box):
        return (rng.random(env.action_space.shape) * mask).astype(np.float32)
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(legal.size)])


def test_the_default_ids_are_found():
    assert len(DEFAULT_IDS) >= 8


@pytest.mark.parametrize("env_id", DEFAULT_IDS)
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_steps_as_the_original(env_id, how):
    env = gym.make(env_id).unwrapped
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    for _ in range(4):  # past the first steps, so that the fast paths have built their caches
        env.step(_action(env, rng))
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    for n in range(6):
        a = _action(env, rng)
        o1, r1, t1, tr1, i1 = env.step(a)
        o2, r2, t2, tr2, i2 = twin.step(a)
        assert np.array_equal(o1, o2), (env_id, how, n)
        assert (r1, t1, tr1) == (r2, t2, tr2), (env_id, how, n)
        assert i1.keys() == i2.keys(), (env_id, how, n)
        if t1 or tr1:
            break
