"""Evaluation that cannot hide a collapse: argmax *and* sampled episodes, with the policy's mean entropy.

A near-uniform policy evaluated by argmax alone can look like a (bad) decision rule when it is only a
tie-break; the sampled result and the entropy show what the policy is. :func:`evaluate_agent` runs a saved
model (``<algo>:PATH``) through the same env construction as every policy (:func:`edgegym.agents.runner.make_env`),
once with ``deterministic=True`` and once sampling (torch seeded per episode), and records per episode the
objective, the return, the mean entropy (nats) of the masked action distribution over the visited states and
the mean ``ln(#legal actions)`` (the entropy of a uniform policy).
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["evaluate_agent"]


def evaluate_agent(name: str, env_id: str, seeds, env_config: dict | None = None,
                   modes: tuple[str, ...] = ("argmax", "sampled")) -> list[dict]:
    """One record per (mode, seed): ``mode``, ``seed``, ``objective``, ``episode_return``, ``mean_entropy``,
    ``mean_log_legal``, ``steps``, ``wall_s``, plus every episode metric."""
    import torch as th

    from ..runner import make_env

    out = []
    for mode in modes:
        for seed in seeds:
            env, pol = make_env(env_id, name, int(seed), env_config)
            try:
                th.manual_seed(int(seed))
                obs, _ = env.reset(seed=int(seed))
                masked = hasattr(env.action_space, "n")
                obs_l, mask_l = [], []
                done, ret, steps = False, 0.0, 0
                t0 = time.perf_counter()
                while not done:
                    obs_l.append(np.asarray(obs, dtype=np.float32))
                    if masked:
                        mask_l.append(np.asarray(env.unwrapped.action_masks(), dtype=bool))
                    a, _ = pol.predict(obs, deterministic=mode == "argmax")
                    obs, r, term, trunc, info = env.step(a)
                    ret += float(r)
                    steps += 1
                    done = term or trunc
                wall = time.perf_counter() - t0
                masks = np.stack(mask_l) if masked else None
                ent = pol.entropy(np.stack(obs_l), masks) if masked else np.array([np.nan])
                legal = np.log(np.maximum(masks.sum(axis=1), 1)) if masked else np.array([np.nan])
                rec = {"env": env_id, "policy": name, "mode": mode, "seed": int(seed), "episode_return": ret,
                       "steps": steps, **info["episode_metrics"], "mean_entropy": float(ent.mean()),
                       "mean_log_legal": float(legal.mean()), "wall_s": wall}
                out.append(rec)
            finally:
                env.close()
    return out
