"""Learned agents: SB3 PPO / sb3-contrib MaskablePPO training (``edgegym train``) and evaluation
(``edgegym eval``, or the policy name ``ppo:PATH`` / ``maskable-ppo:PATH`` anywhere a policy is accepted).

Hyperparameters live in ``agents/rl/<algo>.yaml``; a saved model ``DIR/model.zip`` carries a sidecar
``DIR/model.edgegym.json`` with the env id and the env config it was trained with, so that evaluation
rebuilds the same observation and action spaces.

Learning aids: :mod:`.shared` (per-server shared-scorer policy, ``policy: SharedRowPolicy``),
:mod:`.bc` (behaviour cloning warm start, ``bc_teacher``), :mod:`.diagnostics` (value loss / KL / entropy per
update, warnings), :mod:`.evaluate` (argmax and sampled episodes with entropy), :mod:`.report` (an agent beside
every policy), :mod:`.versions` (the ``-v1`` presets).
"""

from .learned import ALGOS, LearnedPolicy, LearnedPolicyError, is_learned, learned_env_config, load_learned_policy

__all__ = ["ALGOS", "LearnedPolicy", "LearnedPolicyError", "is_learned", "learned_env_config", "load_learned_policy"]
