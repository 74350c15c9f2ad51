"""``action_masks()`` before the first ``reset()`` is an error on every family, the same one EdgeCloudML raises
(``RuntimeError: call reset() before action_masks()``), never a mask made up before there is a job to decide."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import edgegym

#: every registered tiny id (each family has at least one; v0 and v1)
TINY_IDS = [i for i in edgegym.registered_ids() if "-tiny-" in i]
#: EdgeCloudML's message: the expected pattern for every family
MESSAGE = re.escape("call reset() before action_masks()")


def test_every_family_has_a_tiny_id():
    fams = {i.split("-", 1)[0] for i in edgegym.registered_ids()}
    assert fams == {i.split("-", 1)[0] for i in TINY_IDS}


@pytest.mark.parametrize("env_id", TINY_IDS)
def test_action_masks_before_reset_raises(env_id):
    env = gym.make(env_id)
    try:
        with pytest.raises(RuntimeError, match=MESSAGE):
            env.unwrapped.action_masks()
        # after reset the mask is the legal set reported in info, with at least one legal action
        _, info = env.reset(seed=0)
        mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
        assert mask.any()
        if "action_mask" in info:
            np.testing.assert_array_equal(mask, np.asarray(info["action_mask"], dtype=bool))
    finally:
        env.close()


def test_edge_cloud_in_simulator_baseline_raises_too():
    # the baselines' Discrete(1) env decides inside the simulator; before reset it has no mask either
    env = gym.make("EdgeCloudML-tiny-v0", config={"env": {"discipline": "srtf"}})
    try:
        with pytest.raises(RuntimeError, match=MESSAGE):
            env.unwrapped.action_masks()
        env.reset(seed=0)
        assert env.unwrapped.action_masks().tolist() == [True]
    finally:
        env.close()
