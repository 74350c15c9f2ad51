"""EdgeUtility's side of the rollout contract: ``step_quiet(action)`` leaves the env in exactly the state
``step(action)`` leaves it in (every simulator array, bit for bit) and returns the same reward and flags, and
``observe()`` returns the observation that ``step`` returned; checked on more than 1,000 states over presets that
take every stepping path (the priority bank, the O4A bank's fused step, an infinite cloud, a dispatch latency,
DO4A's mask, rejection, no estimates in the observation)."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.edge_utility.env import EdgeUtilityEnv
from edgegym.families.edge_utility.testing import env_state

SMALL = {"num_jobs": 90}
CASES = [
    ("testbed", {"env": {"reward_credit": "dispatch", "obs_relative": True}}),  # v1: O4A bank, fused step
    ("testbed", {"scheduler": {"discipline": "srpt"}, "env": {"reward_credit": "dispatch", "obs_relative": True}}),
    ("testbed", {"scheduler": {"discipline": "fifo", "cloud": "infinite"}}),
    ("testbed", {"scheduler": {"discipline": "edf"}, "env": {"dispatch_latency_s": 0.05}}),
    ("testbed", {"scheduler": {"discipline": "hpu"}, "env": {"allow_reject": True}}),
    ("testbed", {"env": {"mask": "do4a", "obs_estimates": False}}),
]


@pytest.mark.parametrize("preset,config", CASES)
def test_step_quiet_and_observe_match_step(preset, config):
    config = {**config, "workload": SMALL}
    loud, quiet = EdgeUtilityEnv(preset, config=config), EdgeUtilityEnv(preset, config=config)
    checked = 0
    for seed in (0, 1):
        o1, _ = loud.reset(seed=seed)
        o2, _ = quiet.reset(seed=seed)
        rng = np.random.default_rng(seed)
        step = 0
        while True:
            a = int(rng.choice(np.flatnonzero(loud.action_masks())))
            o1, r1, t1, tr1, _ = loud.step(a)
            r2, t2, tr2 = quiet.step_quiet(a)
            assert type(r2) is float and r2 == r1 and t2 == t1 and tr2 == tr1
            assert env_state(quiet) == env_state(loud), (preset, config, seed, step)
            if step % 3 == 0 or t1:  # observe() on some states only: the others continue without any observation
                o2 = quiet.observe()
                assert o2.dtype == o1.dtype and np.array_equal(o2, o1)
                assert np.array_equal(quiet.action_masks(), loud.action_masks())
                assert env_state(quiet) == env_state(loud)
            checked += 1
            step += 1
            if t1:
                break
    assert checked >= 170
    assert quiet.episode_return == loud.episode_return


def test_step_quiet_refuses_what_step_refuses():
    env = EdgeUtilityEnv("tiny")
    with pytest.raises(RuntimeError, match="reset"):
        env.step_quiet(0)
    with pytest.raises(RuntimeError, match="reset"):
        env.observe()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step_quiet(env.action_space.n)
    while not env.step_quiet(0)[1]:
        pass
    assert not env.observe().any()
    with pytest.raises(RuntimeError, match="terminated"):
        env.step_quiet(0)
