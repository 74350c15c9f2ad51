"""The one policy interface the benchmark runs: SB3's ``predict(obs, state, episode_start, deterministic)``."""

from __future__ import annotations

import numpy as np

__all__ = ["Policy", "NoOpPolicy", "RandomPolicy"]


class Policy:
    """Base class: a policy bound to an env (reference policies may read ``env.unwrapped.view()``).

    Subclasses implement :meth:`act`; :meth:`predict` adapts it to stable-baselines3's signature so that
    reference policies, baselines and learned agents run through the same loop.
    """

    def __init__(self, env) -> None:
        self.env = env
        self.unwrapped = env.unwrapped

    def act(self, obs):  # pragma: no cover - abstract
        raise NotImplementedError

    def reset(self, seed: int | None = None) -> None:
        """Called at the start of every episode (after ``env.reset``)."""

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = True):
        """SB3-compatible: returns ``(action, state)``."""
        return self.act(observation), state


class NoOpPolicy(Policy):
    """Action 0 every step: for envs whose discipline decides inside the simulator (SRTF, Tiresias-L, ...)."""

    def act(self, obs):
        return 0


class RandomPolicy(Policy):
    """A uniformly random *legal* action (masked rows / values excluded), seeded at each episode."""

    def __init__(self, env, seed: int = 0) -> None:
        super().__init__(env)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs):
        mask = np.asarray(self.unwrapped.action_masks(), dtype=bool)
        space = self.env.action_space
        if hasattr(space, "n"):
            return int(self.rng.choice(np.flatnonzero(mask)))
        a = self.rng.random(space.shape) * mask
        if a.sum() <= 0:
            a = mask.astype(float)
        return a.astype(np.float32)
