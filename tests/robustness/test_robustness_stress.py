"""Random-action stress test (issue 14): random legal actions over every registered id and a set of config
variants of the two first families, with the invariants checked at every step: the observation is in the
observation space and finite, the reward is a finite float, every info value keeps its type and shape, the
episode ends, and at the end the return equals the objective (``return × reward_scale = ±(objective −
offset)``, one sign per family). Marked ``slow`` (about half a minute here); CI runs it."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from robustness_helpers import (
    check_obs,
    check_return_equals_objective,
    current_mask,
    legal_action,
    registered_ids,
    small_config,
)

pytestmark = pytest.mark.slow

IDS = registered_ids()
SEEDS = (0, 1, 2)
MAX_STEPS = 20_000


def _episode(env_id: str, config: dict | None, seed: int) -> tuple[int, int]:
    """One random-legal-action episode with the invariants checked each step; returns (steps, objective sign)."""
    env = gym.make(env_id, **({"config": config} if config else {}))
    rng = np.random.default_rng([seed, 14])
    obs, info = env.reset(seed=seed)
    check_obs(env_id, env.observation_space, obs, 0)
    ret, shapes = 0.0, {}
    for step in range(1, MAX_STEPS + 1):
        a = legal_action(env.action_space, current_mask(env, info), rng)
        obs, r, term, trunc, info = env.step(a)
        check_obs(env_id, env.observation_space, obs, step)
        assert isinstance(r, float) and math.isfinite(r), f"{env_id} {config} seed {seed} step {step}: reward {r!r}"
        for k, v in info.items():
            if k != "episode_metrics":
                sig = (type(v).__name__, np.shape(v) if isinstance(v, np.ndarray) else None)
                assert shapes.setdefault(k, sig) == sig, f"{env_id} step {step}: info[{k!r}] changed shape"
        ret += r
        if term or trunc:
            m = info["episode_metrics"]
            assert math.isfinite(float(m["objective"]))
            sign = check_return_equals_objective(f"{env_id} {config} seed {seed}", ret, m)
            env.close()
            return step, sign
    raise AssertionError(f"{env_id} {config} seed {seed}: no end within {MAX_STEPS} steps")


def _family(env_id: str) -> str:
    from edgegym.envs import env_info

    return env_info(env_id).family


@pytest.mark.parametrize("env_id", IDS)
def test_random_legal_actions_keep_the_invariants(env_id):
    signs = {_episode(env_id, small_config(env_id), s)[1] for s in SEEDS}
    assert len(signs) == 1, f"{env_id}: the return is + objective on one seed and - objective on another"


# ------------------------------------------------------------------ config variants of the first two families
def _edge_cloud_variants():
    from edgegym.families.edge_cloud.disciplines import DISCIPLINES
    from edgegym.families.edge_cloud.presets import ACTION_MODES

    base = {"num_jobs": 20}
    out = [{"env": {"action_mode": m}} for m in ACTION_MODES]
    out += [{"env": {"discipline": d}} for d in DISCIPLINES]
    out += [
        {"env": {"use_cloud": False}},
        {"env": {"slotted": True, "action_mode": "cloud_split"}},
        {"env": {"max_edge_servers": 12}},
        {"cluster": {"cloud": False}},
        {"env": {"speed": 3.0}, "workload": {"horizon_slots": 10.0}},
    ]
    return [("EdgeCloudML-testbed-v0", {**v, "workload": {**base, **v.get("workload", {})}}) for v in out]


def _edge_utility_variants():
    from edgegym.families.edge_utility.disciplines import DISCIPLINES, FALLBACKS

    base = {"num_jobs": 60}
    out = [{"scheduler": {"discipline": d}} for d in DISCIPLINES]
    out += [{"scheduler": {"discipline": "o4a", "fallback": f, "eps": 1.0, "beta": 0.0}} for f in FALLBACKS]
    out += [
        {"scheduler": {"tentative_mode": "paper_literal"}},
        {"scheduler": {"cloud": "same", "discipline": "srpt"}},
        {"env": {"allow_reject": True}},
        {"env": {"mask": "do4a", "do4a_k": 2}},
        {"env": {"obs_estimates": False}},
        {"estimation": {"delta": 0.3, "conservative": True}},
        {"servers": {"cloud": False}},
        {"servers": {"speed": 2.0}, "workload": {"source": "bursty"}},
    ]
    return [("EdgeUtility-tiny-v0", {**v, "workload": {**base, **v.get("workload", {})}}) for v in out]


VARIANTS = _edge_cloud_variants() + _edge_utility_variants()


@pytest.mark.parametrize("env_id,config", VARIANTS, ids=[f"{e}:{c}" for e, c in VARIANTS])
def test_config_variants_keep_the_invariants(env_id, config):
    signs = {_episode(env_id, config, s)[1] for s in SEEDS}
    expected = {_episode(env_id, small_config(env_id), 0)[1]}
    assert signs == expected, f"{env_id} {config}: the return's sign against the objective differs from the preset's"
