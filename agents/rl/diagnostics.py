"""Training diagnostics that expose a policy that is not learning: value loss, KL, entropy per PPO update.

:class:`DiagnosticsCallback` reads SB3's ``train/*`` logger values after every update (value loss, approx KL,
entropy, explained variance, clip fraction) and, for masked algorithms, the mean ``ln(#legal actions)`` of
each rollout. :func:`warnings_for` turns the history into warnings:

* KL below ``1e-4`` on every update after the first quarter of training: the policy is not moving;
* final mean entropy above ``0.9 · ln(#legal actions)``: the policy is (nearly) uniform, so its argmax is an
  arbitrary tie-break, not a decision.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["KL_FLOOR", "ENTROPY_CEILING", "DiagnosticsCallback", "policy_entropy", "warnings_for"]

KL_FLOOR = 1e-4
ENTROPY_CEILING = 0.9

_KEYS = {"train/value_loss": "value_loss", "train/approx_kl": "approx_kl", "train/entropy_loss": "entropy_loss",
         "train/explained_variance": "explained_variance", "train/clip_fraction": "clip_fraction",
         "train/policy_gradient_loss": "policy_loss"}


def _callback_base():
    from stable_baselines3.common.callbacks import BaseCallback

    return BaseCallback


class DiagnosticsCallback(_callback_base()):
    """Records one row per PPO update in :attr:`history` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[dict] = []
        self._log_legal = float("nan")

    def _grab(self) -> None:
        vals = dict(self.model.logger.name_to_value)
        if "train/approx_kl" not in vals:
            return
        row = {"timesteps": int(self.model.num_timesteps)}
        for k, name in _KEYS.items():
            if k in vals:
                row[name] = float(vals[k])
        if "entropy_loss" in row:
            row["entropy"] = -row.pop("entropy_loss")
        row["mean_log_legal_actions"] = self._log_legal
        if not self.history or self.history[-1] != row:
            self.history.append(row)

    def _on_rollout_start(self) -> None:  # the previous update's values are in the logger until the next dump
        self._grab()

    def _on_rollout_end(self) -> None:
        buf = getattr(self.model, "rollout_buffer", None)
        masks = getattr(buf, "action_masks", None)
        if masks is not None:
            legal = np.asarray(masks).reshape(-1, masks.shape[-1]).sum(axis=1)
            self._log_legal = float(np.mean(np.log(np.maximum(legal, 1))))
        else:
            n = getattr(self.model.action_space, "n", None)
            self._log_legal = math.log(n) if n else float("nan")

    def _on_training_end(self) -> None:
        self._grab()

    def _on_step(self) -> bool:
        return True


def warnings_for(history: list[dict]) -> list[str]:
    """The warnings of a diagnostics history (empty when training looks healthy)."""
    out = []
    if not history:
        return out
    late = history[len(history) // 4 :] or history
    kls = [h["approx_kl"] for h in late if "approx_kl" in h]
    if kls and max(kls) < KL_FLOOR:
        out.append(f"approx_kl stayed below {KL_FLOOR:g} (max {max(kls):.2e} over the last {len(kls)} updates): "
                   "the policy is barely changing (reward scale? learning rate?)")
    last = history[-1]
    ent, ll = last.get("entropy"), last.get("mean_log_legal_actions")
    if ent is not None and ll is not None and np.isfinite(ll) and ll > 0 and ent > ENTROPY_CEILING * ll:
        out.append(f"final policy entropy {ent:.3f} nats > {ENTROPY_CEILING} · ln(#legal actions) = "
                   f"{ENTROPY_CEILING * ll:.3f}: the policy is close to uniform, its argmax means little")
    return out


def policy_entropy(model, obs: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    """Entropy (nats) of the model's (masked) action distribution at each observation.        # (T,)"""
    import torch as th

    policy = model.policy
    with th.no_grad():
        o = th.as_tensor(np.asarray(obs, dtype=np.float32), device=policy.device)
        if masks is not None:
            dist = policy.get_distribution(o, action_masks=np.asarray(masks, dtype=bool))
        else:
            dist = policy.get_distribution(o)
        return dist.entropy().cpu().numpy().reshape(-1)
