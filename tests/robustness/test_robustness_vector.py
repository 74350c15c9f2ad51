"""Vector envs over the whole registry (issue 14): ``gym.make_vec(id, num_envs=2)`` in sync and async mode runs
whole episodes of every registered id, step for step the same as two single envs seeded alike, and async
``close()`` returns. Every ``info`` value has a fixed shape (Gymnasium stacks them into arrays)."""

from __future__ import annotations

import threading

import gymnasium as gym
import numpy as np
import pytest
from robustness_helpers import current_mask, legal_action, registered_ids, small_config

IDS = registered_ids()
SEED = 11
NUM_ENVS = 2
MAX_STEPS = 20_000


def _kwargs(env_id: str) -> dict:
    cfg = small_config(env_id)
    return {"config": cfg} if cfg else {}


def _single_trajectory(env_id: str, i: int) -> dict:
    """Env ``i`` of the vector, run alone: reset(seed=SEED+i), actions from rng [SEED, i]."""
    env = gym.make(env_id, **_kwargs(env_id))
    rng = np.random.default_rng([SEED, i])
    obs, info = env.reset(seed=SEED + i)
    out = {"obs": [obs], "rewards": [], "actions": []}
    for _ in range(MAX_STEPS):
        a = legal_action(env.action_space, current_mask(env, info), rng)
        obs, r, term, trunc, info = env.step(a)
        out["obs"].append(obs)
        out["rewards"].append(r)
        out["actions"].append(a)
        if term or trunc:
            out["objective"] = info["episode_metrics"]["objective"]
            break
    env.close()
    return out


def _close_returns(envs, timeout_s: float = 120.0) -> bool:
    """``envs.close()`` returns (run in a thread so that a hang fails the test instead of the suite)."""
    t = threading.Thread(target=envs.close, daemon=True)
    t.start()
    t.join(timeout_s)
    return not t.is_alive()


def _vector_mask(envs, info: dict, i: int):
    if "action_mask" in info and info.get("_action_mask", np.ones(NUM_ENVS, bool))[i]:
        return np.asarray(info["action_mask"][i], dtype=bool)
    if "action_mask" in info:
        return None
    try:
        return np.asarray(envs.call("action_masks")[i], dtype=bool)
    except AttributeError:
        return None


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_runs_whole_episodes_like_single_envs(env_id, mode):
    singles = [_single_trajectory(env_id, i) for i in range(NUM_ENVS)]
    envs = gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode=mode, **_kwargs(env_id))
    try:
        rngs = [np.random.default_rng([SEED, i]) for i in range(NUM_ENVS)]
        obs, info = envs.reset(seed=SEED)
        got = [{"obs": [obs[i]], "rewards": []} for i in range(NUM_ENVS)]
        done = [False] * NUM_ENVS
        single_space = envs.single_action_space
        for _ in range(MAX_STEPS):
            actions = []
            for i in range(NUM_ENVS):
                mask = _vector_mask(envs, info, i)
                actions.append(legal_action(single_space, mask, rngs[i]) if not done[i] else singles[i]["actions"][-1])
            obs, r, term, trunc, info = envs.step(np.stack(actions))  # raises if an info value changes shape
            for i in range(NUM_ENVS):
                if done[i]:
                    continue
                got[i]["obs"].append(obs[i])
                got[i]["rewards"].append(float(r[i]))
                if term[i] or trunc[i]:
                    done[i] = True
                    assert info["_episode_metrics"][i], f"{env_id}: no episode_metrics at the last step"
                    got[i]["objective"] = info["episode_metrics"]["objective"][i]
            if all(done):
                break
        assert all(done), f"{env_id}: an episode did not end within {MAX_STEPS} steps"
        for i in range(NUM_ENVS):
            s, g = singles[i], got[i]
            assert len(g["rewards"]) == len(s["rewards"]), f"{env_id} env {i}: episode length differs"
            np.testing.assert_array_equal(np.stack(g["obs"]), np.stack(s["obs"]).astype(np.stack(g["obs"]).dtype))
            np.testing.assert_array_equal(np.asarray(g["rewards"]), np.asarray(s["rewards"], dtype=float))
            assert g["objective"] == s["objective"]
    finally:
        assert _close_returns(envs), f"{env_id}: {mode} vector env close() did not return"


@pytest.mark.parametrize("env_id", IDS)
def test_info_values_have_fixed_shapes(env_id):
    """Every info key (but ``episode_metrics``, at the last step) has the same type and shape at every step."""
    env = gym.make(env_id, **_kwargs(env_id))
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    seen: dict = {}
    for step in range(MAX_STEPS):
        obs, r, term, trunc, info = env.step(legal_action(env.action_space, current_mask(env, info), rng))
        for k, v in info.items():
            if k == "episode_metrics":
                continue
            sig = (type(v).__name__, np.shape(v) if isinstance(v, np.ndarray | np.generic) else None)
            assert not isinstance(v, list | tuple | dict), f"{env_id}: info[{k!r}] is a {type(v).__name__}"
            assert seen.setdefault(k, sig) == sig, f"{env_id} step {step}: info[{k!r}] changed from {seen[k]} to {sig}"
        if term or trunc:
            break
    env.close()


def test_async_close_returns_after_a_worker_error():
    """A bad action raises in a worker; the error reaches the caller and ``close()`` still returns."""
    env_id = next(i for i in IDS if isinstance(gym.make(i, **_kwargs(i)).action_space, gym.spaces.Discrete))
    envs = gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode="async", **_kwargs(env_id))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="not in the action space"):
        envs.step(np.full(NUM_ENVS, 10**6, dtype=np.int64))
    assert _close_returns(envs)
