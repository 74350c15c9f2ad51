"""The one policy interface the benchmark runs: SB3's ``predict(obs, state, episode_start, deterministic)``,
and :class:`PolicySpec`, the record a policy module declares in ``POLICY_SPECS`` to be registered."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["NoOpPolicy", "Policy", "PolicySpec", "RandomPolicy", "advance_constant"]


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """How to build a policy and which env families it supports.

    ``factory(env, seed) -> Policy``. ``env_config``: preset overrides the env needs (e.g.
    ``{"env": {"discipline": "srtf"}}`` for baselines that decide inside the simulator);
    ``env_config_by_family`` overrides it for particular families; ``variant``: the policy changes a paper's
    algorithm (benchmarks list it apart from the reference policies). A module of ``edgegym.agents.reference`` or
    ``edgegym.agents.baselines`` declaring ``POLICY_SPECS = (PolicySpec(...), ...)`` is registered automatically;
    two families may use the same name (``random``, ``fifo``): the env's family picks the spec.
    """

    name: str
    factory: Callable
    families: tuple[str, ...]
    description: str
    env_config: dict = field(default_factory=dict)
    env_config_by_family: dict = field(default_factory=dict)  # family -> overrides, when they differ by family
    #: a change to a paper's algorithm shipped under its own name (registered with the reference policies)
    variant: bool = False

    def config_for(self, family: str) -> dict:
        """The preset overrides this policy needs on an env of ``family``."""
        return self.env_config_by_family.get(family, self.env_config)


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

    def advance(self, steps: int | None, total: float):
        """Take up to ``steps`` (``None``: as many as there are) of this policy's own steps on its env in one go,
        where the policy has a faster path than :meth:`predict` + ``env.step`` with the same result (the same
        actions, env state and rewards, bit for bit). Returns ``(observation, steps taken, total + their rewards
        added in order)``, where the observation may be ``None`` when the path built none (the caller then asks
        the env's ``observe()`` if it needs one), or ``None`` where the policy has no such path (the default). It
        never takes the step that ends the episode. Rollout (``rollout:<base>``) uses it for its base's
        continuations."""
        return None

    def advance_after(self, key, steps: int | None, total: float, last: bool = False):
        """:meth:`advance` preceded by one step of another action, in one go: the first of up to ``steps`` steps
        (``None``: as many as there are) takes the action whose ``env.action_key(action)`` is ``key`` (the env's
        hashable summary of what the action does at this decision point), the rest are this policy's own. Returns
        what :meth:`advance` returns (the steps counted with the first; ``0`` steps: none taken, e.g. the first
        would end the episode), or ``None`` where the policy has no such path (the default). The same env state
        and rewards as ``env.step(action)`` followed by :meth:`advance`. Rollout (``rollout:<base>``) uses it for
        a candidate's step and its continuation. ``last=True``: the caller drops the env once all ``steps`` are
        taken (a look-ahead's horizon), so the env need not prepare the decision point after them (where it
        can skip that, the env is then spent: see ``EdgeCloudMLEnv.advance_aonline``)."""
        return None

    def score_after(self, key, steps: int, total: float) -> float | None:
        """The total :meth:`advance_after` ``(key, steps, total)`` would return after taking all ``steps`` steps,
        computed without changing the env (no fork needed), or ``None``: where it would take fewer, where the
        policy has no such path (the default) or where the env cannot score it so (the caller then runs
        :meth:`advance_after` on a fork). Rollout scores a candidate's continuation with it."""
        return None

    #: whether the decision depends on the env's current state (and the policy's own random stream) alone, not on a
    #: record of the policy's own past decisions: rollout (``rollout:<base>``) needs this of its base
    markov: bool = True

    #: attributes shared by reference with a fork (read-only while acting, e.g. a trained network); objects of
    #: torch, stable-baselines3, sb3-contrib and Ray are always shared
    fork_shared: tuple[str, ...] = ()

    def fork(self, env) -> Policy:
        """An independent copy of this policy bound to ``env`` (a fork of this policy's env,
        ``env.unwrapped.fork(...)``), in the same internal state, so that a look-ahead never plans on a stale
        state: a deep copy with this policy's env references mapped to ``env`` (and ``env.unwrapped``) and the
        :attr:`fork_shared` objects shared. Override where a policy caches other objects of its env."""
        from edgegym.core.forking import fast_copy

        memo = {id(self.env): env, id(self.unwrapped): env.unwrapped}
        for name, v in vars(self).items():
            mod = type(v).__module__.split(".")[0]
            if name in self.fork_shared or mod in ("torch", "stable_baselines3", "sb3_contrib", "ray"):
                memo[id(v)] = v
        return fast_copy(self, memo)


def advance_constant(policy: Policy, action, steps: int | None, total: float):
    """:meth:`Policy.advance` for a policy that takes ``action`` at every decision: the env's own constant-action
    loop (``advance_constant(action, steps, total)``, where the env offers one; no observation is built), the same
    steps and rewards as ``act`` + ``step``; ``None`` where the env has none, or on a wrapped env."""
    env = policy.unwrapped
    fn = getattr(env, "advance_constant", None)
    if policy.env is not env or fn is None:
        return None
    return fn(action, steps, total)


class NoOpPolicy(Policy):
    """Action 0 every step: for envs whose discipline decides inside the simulator (SRTF, Tiresias-L, ...)."""

    def act(self, obs):
        return 0

    def advance(self, steps: int | None, total: float):
        """:func:`advance_constant` with action 0."""
        return advance_constant(self, 0, steps, total)


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
