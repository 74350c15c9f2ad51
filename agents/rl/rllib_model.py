"""The RLlib model of ``edgegym train --backend rllib``: an RLModule (RLlib's new API stack) with action masks.

The env runners see each env through :class:`MaskedObservation`, whose observation is a ``Dict`` of
``"observations"`` (the env's own observation) and ``"action_mask"`` (``env.unwrapped.action_masks()`` as 0/1
floats). :class:`MaskedPPOModule` scores the actions from ``"observations"`` and gives every illegal action the
logit ``-1e8`` (as sb3-contrib's MaskablePPO does), in exploration, inference and training, so PPO never samples an
illegal action and its loss never sees one. Two networks:

* ``layout`` given (the env's ``obs_layout()``, for ``policy: SharedRowPolicy`` in the hyperparameter YAML): the
  per-row shared scorer :class:`edgegym.agents.rl.shared.SharedRowNet`, the same network as the SB3 backend's
  :class:`~edgegym.agents.rl.shared.SharedRowPolicy` (one network applied to every server row, pooled, plus a
  context network; permuting the rows permutes the row logits);
* otherwise (``policy: MlpPolicy``): separate tanh MLPs for the logits and the value (``net_arch``, default
  ``[64, 64]``), like SB3's ``MlpPolicy``.

The module implements RLlib's ``ValueFunctionAPI`` (``compute_values``), which RLlib's PPO needs for its
advantages. RLlib's old ModelV2 API is not used: Ray 2.40 and later build PPO on RLModules by default.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from ..policy import Policy

__all__ = ["MASK_KEY", "MASKED_LOGIT", "OBS_KEY", "MaskedObservation", "MaskedPPOModule", "RllibPolicy",
           "load_rllib_module", "quiet_rllib"]

#: keys of the ``Dict`` observation the env runners see
OBS_KEY = "observations"
MASK_KEY = "action_mask"
#: the logit of an illegal action (sb3-contrib's MaskableCategorical uses the same value)
MASKED_LOGIT = -1e8


class MaskedObservation(gym.Wrapper):
    """The env's observation and its action mask, as ``Dict(observations=..., action_mask=Box(0, 1, (n,)))``.

    ``masked=False`` gives an all-ones mask (plain PPO on the same observation space)."""

    def __init__(self, env: gym.Env, masked: bool = True) -> None:
        super().__init__(env)
        if not isinstance(env.action_space, gym.spaces.Discrete):
            raise ValueError(f"the rllib backend needs a Discrete action space, got {env.action_space}")
        self.masked = bool(masked)
        self._n = int(env.action_space.n)
        self.observation_space = gym.spaces.Dict({
            OBS_KEY: env.observation_space,
            MASK_KEY: gym.spaces.Box(0.0, 1.0, (self._n,), np.float32),
        })

    def _wrap(self, obs) -> dict:
        if self.masked:
            mask = np.asarray(self.env.unwrapped.action_masks(), dtype=np.float32).reshape(-1)
            if mask.shape != (self._n,):
                raise ValueError(f"action_masks() has shape {mask.shape}, the action space has {self._n} actions")
        else:
            mask = np.ones(self._n, dtype=np.float32)
        return {OBS_KEY: np.asarray(obs, dtype=np.float32), MASK_KEY: mask}

    def reset(self, **kwargs):
        """``env.reset`` with the masked observation."""
        obs, info = self.env.reset(**kwargs)
        return self._wrap(obs), info

    def step(self, action):
        """``env.step`` with the masked observation (after the last step the mask is not read: all ones)."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            return {OBS_KEY: np.asarray(obs, dtype=np.float32), MASK_KEY: np.ones(self._n, np.float32)}, reward, \
                terminated, truncated, info
        return self._wrap(obs), reward, terminated, truncated, info


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO's RLModule: masked logits and a value, from :class:`~edgegym.agents.rl.shared.SharedRowNet` or an MLP.

    ``model_config``: ``layout`` (the env's ``obs_layout()``; None: MLP), ``hidden`` (shared-row width, 64),
    ``net_arch`` (MLP widths, ``[64, 64]``). The observation space is the ``Dict`` of :class:`MaskedObservation`.
    """

    def setup(self) -> None:
        """Build the networks (RLlib calls this from the constructor)."""
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or OBS_KEY not in space.spaces or MASK_KEY not in space.spaces:
            raise ValueError(f"MaskedPPOModule needs a Dict observation with {OBS_KEY!r} and {MASK_KEY!r}, "
                             f"got {space}")
        n = int(self.action_space.n)
        obs_dim = int(np.prod(space[OBS_KEY].shape))
        cfg = dict(self.model_config or {})
        layout = cfg.get("layout")
        self.shared = None
        if layout:
            from .shared import SharedRowNet

            self.shared = SharedRowNet(dict(layout), n, int(cfg.get("hidden", 64)))
            self.vf_head = nn.Linear(self.shared.latent_dim_vf, 1)
            for head in (self.shared.score[-1] if self.shared.score is not None else None, self.shared.extra):
                if head is not None:  # small initial logits, as the SB3 backend's SharedRowPolicy
                    nn.init.orthogonal_(head.weight, gain=0.01)
                    nn.init.zeros_(head.bias)
        else:
            arch = [int(w) for w in cfg.get("net_arch", [64, 64])]
            self.pi_net = _mlp([obs_dim, *arch])
            self.vf_net = _mlp([obs_dim, *arch])
            self.pi_head = nn.Linear(arch[-1] if arch else obs_dim, n)
            self.vf_head = nn.Linear(arch[-1] if arch else obs_dim, 1)
            nn.init.orthogonal_(self.pi_head.weight, gain=0.01)
            nn.init.zeros_(self.pi_head.bias)

    # ------------------------------------------------------------------ forward passes
    def _logits_and_latent(self, obs: torch.Tensor):
        if self.shared is not None:
            return self.shared(obs)
        return self.pi_head(self.pi_net(obs)), self.vf_net(obs)

    @staticmethod
    def _mask(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.where(mask > 0.5, logits, torch.full_like(logits, MASKED_LOGIT))

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits, _ = self._logits_and_latent(obs[OBS_KEY])
        return {Columns.ACTION_DIST_INPUTS: self._mask(logits, obs[MASK_KEY])}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits, latent_vf = self._logits_and_latent(obs[OBS_KEY])
        return {Columns.ACTION_DIST_INPUTS: self._mask(logits, obs[MASK_KEY]), Columns.EMBEDDINGS: latent_vf}

    def compute_values(self, batch: dict[str, Any], embeddings: Any | None = None) -> torch.Tensor:
        """State values ``(B,)`` (or ``(B, T)``): from ``embeddings`` (the value latent of ``_forward_train``)."""
        if embeddings is None:
            obs = batch[Columns.OBS][OBS_KEY]
            embeddings = self.shared.forward_critic(obs) if self.shared is not None else self.vf_net(obs)
        return self.vf_head(embeddings).squeeze(-1)

    def masked_logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked logits of a batch of observations ``(B, obs_dim)`` and masks ``(B, n)`` (inference, no grad)."""
        with torch.no_grad():
            o = torch.as_tensor(np.asarray(obs, dtype=np.float32))
            m = torch.as_tensor(np.asarray(mask, dtype=np.float32))
            logits, _ = self._logits_and_latent(o)
            return self._mask(logits, m).numpy()


# ---------------------------------------------------------------------------------------------- evaluation
@contextlib.contextmanager
def quiet_rllib():
    """RLlib's warnings off (its 'new API stack is the default' notice and deprecation notices about its own
    internals, printed while building an algorithm or restoring a module); errors still show."""
    loggers = [logging.getLogger(n) for n in ("ray.rllib", "ray.tune", "ray._common.deprecation")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, lv in zip(loggers, levels, strict=True):
            lg.setLevel(lv)


def load_rllib_module(module_dir: str | Path) -> MaskedPPOModule:
    """The RLModule saved in ``module_dir`` (``DIR/checkpoint/learner_group/learner/rl_module/default_policy``),
    without a Ray cluster; ``ValueError`` for a checkpoint that cannot be loaded."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    try:
        with quiet_rllib():
            module = RLModule.from_checkpoint(str(Path(module_dir).resolve()))
    except Exception as e:  # RLlib raises many types for a truncated or foreign checkpoint
        raise ValueError(f"the RLlib module in {str(module_dir)!r} could not be loaded ({type(e).__name__}: {e})") \
            from None
    module.eval()
    return module


class RllibPolicy(Policy):
    """A trained RLlib module behind the common ``predict`` interface: the argmax of the masked logits (the mask is
    the env's ``action_masks()`` when the module was trained with masks). ``ValueError`` when the spaces differ."""

    def __init__(self, env, module, masked: bool = True) -> None:
        super().__init__(env)
        self.module = module
        self.masked = bool(masked)
        space = module.observation_space
        mine, n = env.observation_space, getattr(env.action_space, "n", None)
        theirs = space[OBS_KEY] if hasattr(space, "spaces") else space
        if n is None or mine.shape != theirs.shape or int(module.action_space.n) != int(n) or \
                space[MASK_KEY].shape != (int(n),):
            raise ValueError(
                f"the model's spaces ({theirs}, {module.action_space}) do not match the env's ({mine}, "
                f"{env.action_space}): evaluate it on the env (and env config, e.g. action_mode) it was trained on")
        self._n = int(n)

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = True):
        """SB3-compatible ``(action, state)``; always the argmax (deterministic)."""
        if self.masked:
            mask = np.asarray(self.unwrapped.action_masks(), dtype=np.float32).reshape(1, -1)
        else:
            mask = np.ones((1, self._n), np.float32)
        logits = self.module.masked_logits(np.asarray(observation, np.float32).reshape(1, -1), mask)
        return int(np.argmax(logits[0])), state
