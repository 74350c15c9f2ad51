"""Learned agents: SB3 PPO / sb3-contrib MaskablePPO training (``edgegym train``) and evaluation
(``edgegym eval``, or the policy name ``ppo:PATH`` / ``maskable-ppo:PATH`` anywhere a policy is accepted).

Hyperparameters live in ``agents/rl/<algo>.yaml``; a saved model ``DIR/model.zip`` carries a sidecar
``DIR/model.edgegym.json`` with the env id and the env config it was trained with, so that evaluation
rebuilds the same observation and action spaces.
"""

from .learned import ALGOS, LearnedPolicy, LearnedPolicyError, is_learned, learned_env_config, load_learned_policy

__all__ = ["ALGOS", "LearnedPolicy", "LearnedPolicyError", "is_learned", "learned_env_config", "load_learned_policy"]
