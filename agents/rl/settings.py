"""Validated training settings shared by the SB3 and RLlib backends of ``edgegym train``.

One module that both backends import (:mod:`edgegym.agents.rl.train` and :mod:`edgegym.agents.rl.rllib`), so neither
imports the other's module for them (no import cycle).
"""

from __future__ import annotations

__all__ = ["check_dagger", "int_setting"]


def int_setting(name: str, v, low: int) -> int:
    """``v`` as an int, or a ``ValueError`` naming the setting ``name`` when it is not an integer >= ``low``."""
    if isinstance(v, bool) or not isinstance(v, int | float) or int(v) != v or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def check_dagger(env_id: str, bc: dict, dg: dict, timesteps: int, eval_seed: int, n_eval: int) -> dict:
    """The validated expert-iteration settings (``rounds``, ``episodes``, ``beta``, ``epochs``, ``seed``,
    ``workers``: the processes the teacher labels on, the YAML's ``teacher_workers`` / ``--teacher-workers``).

    The teacher must be a policy of ``env_id``'s family; rounds need a teacher; ``timesteps=0`` needs a teacher;
    the rounds' seeds must be disjoint from the evaluation seeds (100-104) and the best-model evaluation seeds."""
    from .dagger import EVAL_SEEDS, check_seeds, check_teacher

    teacher = bc.get("bc_teacher")
    out = {"rounds": int_setting("dagger_rounds (--dagger-rounds)", dg.get("dagger_rounds", 0), 0),
           "episodes": int_setting("dagger_episodes (--dagger-episodes)", dg.get("dagger_episodes", 5), 1),
           "epochs": int_setting("dagger_epochs", dg.get("dagger_epochs", bc.get("bc_epochs", 20)), 1),
           "seed": int_setting("dagger_seed", dg.get("dagger_seed", 30_000), 0),
           "workers": int_setting("teacher_workers (--teacher-workers)", dg.get("teacher_workers", 1), 1)}
    beta = dg.get("dagger_beta", 0.0)
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not 0.0 <= float(beta) <= 1.0:
        raise ValueError(f"dagger_beta (--dagger-beta) must be a number in [0, 1], got {beta!r}")
    out["beta"] = float(beta)
    if teacher:
        check_teacher(env_id, teacher)
    elif out["rounds"] > 0:
        raise ValueError("dagger_rounds (--dagger-rounds) needs a teacher (--teacher NAME, or 'teacher' / "
                         "'bc_teacher' in the hyperparameters)")
    if int(timesteps) == 0 and not teacher:
        raise ValueError("--timesteps 0 (no PPO) needs a teacher to learn from (--teacher NAME)")
    if out["rounds"] > 0:
        check_seeds(out["seed"], out["rounds"] * out["episodes"], "dagger_seed",
                    {"evaluation seeds": EVAL_SEEDS,
                     "best-model evaluation seeds": range(eval_seed, eval_seed + n_eval)})
    return out
