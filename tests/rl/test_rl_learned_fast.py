"""A saved agent's deterministic action: :class:`LearnedPolicy`'s direct argmax equals SB3's ``predict`` on every
state of an episode (the shipped ``-v1`` agents, a ``-v0`` MaskablePPO agent, and a plain PPO model), and the
sampled / recurrent cases still go through SB3."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from edgegym.agents.runner import make_env

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "docs" / "results" / "agents" / "models"


def _compare(env_id: str, name: str, steps: int) -> int:
    env, pol = make_env(env_id, name, 0)
    assert pol._fast_ok
    obs, _ = env.reset(seed=100)
    n = 0
    for _ in range(steps):
        a_fast, _ = pol.predict(obs, deterministic=True)
        pol._fast_ok = False
        a_sb3, _ = pol.predict(obs, deterministic=True)
        pol._fast_ok = True
        assert a_fast == a_sb3 and isinstance(a_fast, int), (env_id, n, a_fast, a_sb3)
        n += 1
        obs, _, term, trunc, _ = env.step(a_fast)
        if term or trunc:
            break
    env.close()
    return n


@pytest.mark.parametrize("env_id, model, steps", [
    ("EdgeCloudML-v1", "EdgeCloudML-v1", 60), ("HeteroML-v1", "HeteroML-v1", 40),
    ("EdgeUtility-v1", "EdgeUtility-v1", 60), ("WirelessUDL-v1", "WirelessUDL-v1", 40),
    ("EdgeCloudML-v0", "ecml_v0", 60),
])
def test_direct_argmax_equals_sb3_predict(env_id, model, steps):
    assert _compare(env_id, f"maskable-ppo:{MODELS / model}", steps) > 10


def test_plain_ppo_model_and_sampled_actions(tmp_path):
    from stable_baselines3 import PPO

    env, _ = make_env("EdgeCloudML-tiny-v0", "random", 0, {"env": {"action_mode": "cloud_split"}})
    PPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu").save(tmp_path / "m.zip")
    env.close()
    cfg_name = f"ppo:{tmp_path / 'm.zip'}"
    env, pol = make_env("EdgeCloudML-tiny-v0", cfg_name, 0, {"env": {"action_mode": "cloud_split"}})
    assert pol._fast_ok and not pol.masked
    obs, _ = env.reset(seed=1)
    for _ in range(10):
        a_fast, _ = pol.predict(obs)
        pol._fast_ok = False
        a_sb3, _ = pol.predict(obs)
        pol._fast_ok = True
        assert a_fast == a_sb3
        obs, _, term, _, _ = env.step(a_fast)
        if term:
            break
    pol.model.set_random_seed(0)  # sampled actions still go through SB3: legal, and not always the argmax
    acts = {pol.predict(obs, deterministic=False)[0] for _ in range(30)}
    assert acts and all(isinstance(a, int) and 0 <= a < env.action_space.n for a in acts)
    assert np.isscalar(pol.predict(obs)[0])
