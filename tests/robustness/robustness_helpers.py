"""Helpers of the robustness tests (issue 14): small configs per registered id, random legal actions and
the generic episode invariants. Nothing here names a family: every registered id goes through them."""

from __future__ import annotations

import functools
import math
import warnings

import gymnasium as gym
import numpy as np

import edgegym

#: overrides that cut an episode to a few jobs, tried in order (the first a family accepts is used); a family
#: with none of these keys runs its presets' full episodes
SHRINK = ({"workload": {"num_jobs": 12}}, {"jobs": {"count": 12}})


def registered_ids() -> list[str]:
    return list(edgegym.registered_ids())


@functools.cache
def _small_index(env_id: str) -> int | None:
    for k, cfg in enumerate(SHRINK):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env = gym.make(env_id, config=cfg)
        except (ValueError, TypeError):
            continue
        env.close()
        return k
    return None


def small_config(env_id: str) -> dict | None:
    """A config override giving short episodes on ``env_id`` (``None``: the preset as shipped)."""
    k = _small_index(env_id)
    return None if k is None else {sec: dict(v) for sec, v in SHRINK[k].items()}


def current_mask(env, info: dict):
    """The legal-action mask of the pending step: ``info["action_mask"]``, else ``env.action_masks()``."""
    m = info.get("action_mask") if isinstance(info, dict) else None
    if m is None and hasattr(env.unwrapped, "action_masks"):
        m = env.unwrapped.action_masks()
    return None if m is None else np.asarray(m, dtype=bool)


def legal_action(space: gym.Space, mask, rng: np.random.Generator):
    """A random action of ``space`` (legal under ``mask`` when given), drawn from ``rng`` only."""
    if isinstance(space, gym.spaces.Discrete):
        if mask is not None and mask.shape == (space.n,) and mask.any():
            return np.int64(space.start + rng.choice(np.flatnonzero(mask)))
        return np.int64(space.start + rng.integers(space.n))
    if isinstance(space, gym.spaces.MultiDiscrete):
        nvec = space.nvec.reshape(-1)
        out = np.empty(nvec.size, dtype=np.int64)
        off = 0
        for d, n in enumerate(nvec):
            m = mask[off : off + n] if mask is not None and mask.size == nvec.sum() else None
            out[d] = rng.choice(np.flatnonzero(m)) if m is not None and m.any() else rng.integers(n)
            off += n
        return (out.reshape(space.shape) + space.start).astype(space.dtype)
    if isinstance(space, gym.spaces.Box):
        lo = np.where(np.isfinite(space.low), space.low, -1.0)
        hi = np.where(np.isfinite(space.high), space.high, 1.0)
        return rng.uniform(lo, hi).astype(space.dtype)
    raise NotImplementedError(f"no random legal action for {space}")  # pragma: no cover


def check_obs(env_id: str, space: gym.Space, obs, step: int) -> None:
    assert space.contains(obs), f"{env_id} step {step}: observation outside {space}"
    assert np.all(np.isfinite(obs)), f"{env_id} step {step}: non-finite observation"


def check_return_equals_objective(env_id: str, ret: float, metrics: dict) -> int:
    """``return × reward_scale == ±(objective − objective_offset)``; returns the sign (+1 utility, −1 cost)."""
    scale = float(metrics.get("reward_scale", 1.0))
    target = float(metrics["objective"]) - float(metrics.get("objective_offset", 0.0))
    got = ret * scale
    tol = 1e-7 * max(1.0, abs(target))
    if math.isclose(got, -target, rel_tol=1e-9, abs_tol=tol):
        return -1
    assert math.isclose(got, target, rel_tol=1e-9, abs_tol=tol), (
        f"{env_id}: return × reward_scale = {got!r} is neither ± (objective − offset) = ±{target!r}"
    )
    return +1
