"""Training that keeps its best model and says when it breaks.

:class:`BestModelCallback` evaluates the policy being trained (argmax actions, masks honoured) on its own
evaluation seeds — ``eval_seed, eval_seed + 1, …``, disjoint from the seeds ``edgegym eval`` and the reports use
(100-104) — before the first update (the *starting* policy: the behaviour-cloned one when there is a warm start),
every ``eval_freq`` environment steps, and after the last update. It keeps the weights of the best evaluation in
memory, and :meth:`BestModelCallback.restore_best` puts them back at the end, so a run never ends worse than its own
best evaluated model, whatever the budget.

Every evaluation records, per episode, the return (the env's reward sums exactly to minus its objective, so the
best return is the best objective), the objective from ``info["episode_metrics"]``, and the share of the argmax
decisions taken by the most frequent action (``max_action_share``; only decisions with at least two legal actions
count). For the per-row envs of ``-v1`` an action is a server, a grid action or a candidate plan, so this is also the
share of the busiest server row. :func:`collapse_warnings` turns the history into warnings:

* **argmax collapse**: one action takes more than ``collapse_share`` (default 0.8) of an evaluation episode's
  decisions, while the starting policy's share was below it (a behaviour-cloned start that already concentrates on one
  action, as A_online's clone does on EdgeCloudML, is the teacher's choice, not a collapse);
* **regression**: an evaluation's mean return fell below the starting policy's (by more than ``1e-9`` relative).
"""

from __future__ import annotations

import copy
import time

import numpy as np

__all__ = ["COLLAPSE_SHARE", "BestModelCallback", "auto_eval_freq", "collapse_warnings", "evaluate_model"]

#: default share of one action among an evaluation episode's argmax decisions above which a run is flagged
COLLAPSE_SHARE = 0.8


def auto_eval_freq(timesteps: int, rollout_steps: int, evaluations: int = 10) -> int:
    """About ``evaluations`` evaluations per run, at whole rollouts (``rollout_steps`` = ``n_steps · n_envs``)."""
    per = max(int(timesteps) // max(int(evaluations), 1), 1)
    return max(int(np.ceil(per / rollout_steps)), 1) * int(rollout_steps)


def evaluate_model(model, env_id: str, seeds, env_config: dict | None = None) -> list[dict]:
    """Run ``model`` (argmax, masks honoured when the env has ``action_masks``) for one episode per seed.

    The episodes run side by side, one batched ``model.predict`` per step over the episodes still running (the
    network's per-call overhead is paid once per step, not once per episode: 2.2x less CPU on three EdgeUtility-v1
    episodes, the same returns). Returns one record per episode: ``seed``, ``episode_return``, ``objective``,
    ``decisions`` (with at least two legal actions), ``max_action_share`` and ``top_action`` (the most frequent action
    among those decisions).
    """
    import inspect

    import gymnasium as gym

    seeds = [int(s) for s in seeds]
    masked = "action_masks" in inspect.signature(model.predict).parameters
    envs = []
    try:
        for _ in seeds:
            envs.append(gym.make(env_id, config=env_config or None))
        obs = [env.reset(seed=seed)[0] for env, seed in zip(envs, seeds, strict=True)]
        discrete = isinstance(envs[0].action_space, gym.spaces.Discrete) if envs else True
        has_masks = bool(envs) and hasattr(envs[0].unwrapped, "action_masks")
        counts: list[dict] = [{} for _ in seeds]
        ret, info = [0.0] * len(seeds), [{} for _ in seeds]
        running = list(range(len(seeds)))
        while running:
            masks = [np.asarray(envs[i].unwrapped.action_masks(), dtype=bool) for i in running] if has_masks else None
            batch = np.stack([obs[i] for i in running])
            if masked:
                acts, _ = model.predict(batch, deterministic=True,
                                        action_masks=None if masks is None else np.stack(masks))
            else:
                acts, _ = model.predict(batch, deterministic=True)
            acts = np.asarray(acts)
            still = []
            for j, i in enumerate(running):
                a = acts[j]
                if masks is None or int(masks[j].sum()) >= 2:
                    key = int(np.asarray(a).reshape(())) if discrete else int(np.argmax(a))
                    counts[i][key] = counts[i].get(key, 0) + 1
                obs[i], r, term, trunc, info[i] = envs[i].step(int(np.asarray(a).reshape(())) if discrete else a)
                ret[i] += float(r)
                if not (term or trunc):
                    still.append(i)
            running = still
    finally:
        for env in envs:
            env.close()
    out = []
    for i, seed in enumerate(seeds):
        n = sum(counts[i].values())
        top = max(counts[i], key=counts[i].get) if counts[i] else None
        out.append({"seed": seed, "episode_return": ret[i],
                    "objective": float((info[i].get("episode_metrics") or {}).get("objective", float("nan"))),
                    "decisions": n, "top_action": top,
                    "max_action_share": counts[i][top] / n if n else 0.0})
    return out


def _callback_base():
    from stable_baselines3.common.callbacks import BaseCallback

    return BaseCallback


class BestModelCallback(_callback_base()):
    """Evaluate at the start, every ``eval_freq`` env steps (at rollout starts, after the previous rollout's update)
    and at the end; keep the best weights.

    ``history`` holds one row per evaluation: ``timesteps`` (env steps collected, every one of them already used by
    an update; each evaluation has its own), ``updates`` (gradient steps taken), ``mean_return``, ``std_return``,
    ``mean_objective``, ``max_action_share`` (the largest over the episodes), ``top_action``, ``wall_s``. ``best``
    is the row of the best mean return (the earliest on ties).
    """

    def __init__(self, env_id: str, env_config: dict | None, seeds, eval_freq: int, progress=None,
                 on_evaluation=None) -> None:
        super().__init__()
        #: ``on_evaluation(row)`` after every evaluation; a true return value stops training at the next step
        self._on_evaluation = on_evaluation
        self._stop = False
        self.env_id, self.env_config = env_id, env_config
        self.seeds = [int(s) for s in seeds]
        self.eval_freq = int(eval_freq)
        self.history: list[dict] = []
        self.best: dict | None = None
        self._best_state = None
        self._last_eval = -1
        self._last_updates = -1
        self._progress = progress
        self.eval_s = 0.0

    def evaluate_now(self) -> dict:
        """Evaluate the current policy, record it, and keep its weights when it is the best so far."""
        t = time.perf_counter()
        recs = evaluate_model(self.model, self.env_id, self.seeds, self.env_config)
        rets = np.array([r["episode_return"] for r in recs])
        worst = max(recs, key=lambda r: r["max_action_share"])
        row = {"timesteps": int(self.model.num_timesteps), "updates": self._updates(),
               "mean_return": float(rets.mean()),
               "std_return": float(rets.std()),
               "mean_objective": float(np.mean([r["objective"] for r in recs])),
               "max_action_share": float(worst["max_action_share"]), "top_action": worst["top_action"],
               "wall_s": time.perf_counter() - t}
        self.eval_s += row["wall_s"]
        self.history.append(row)
        self._last_eval = row["timesteps"]
        self._last_updates = self._updates()
        if self.best is None or row["mean_return"] > self.best["mean_return"]:
            self.best = row
            self._best_state = copy.deepcopy(self.model.policy.state_dict())
        if self._progress is not None:
            self._progress(f"evaluation at {row['timesteps']} steps: mean return {row['mean_return']:.4g} "
                           f"(best {self.best['mean_return']:.4g} at {self.best['timesteps']}), "
                           f"top action share {row['max_action_share']:.2f}")
        if self._on_evaluation is not None and self._on_evaluation(row):
            self._stop = True
        return row

    def _updates(self) -> int:
        return int(getattr(self.model, "_n_updates", 0))

    def _on_training_start(self) -> None:
        self.evaluate_now()

    def _on_rollout_start(self) -> None:
        # at a rollout's start the weights have been updated on every step collected so far: an evaluation "at N
        # steps" is of the policy trained on N steps, and the last rollout's steps are left to the final evaluation
        # (evaluating at rollout ends logged the last periodic evaluation and the final one at the same step count,
        # with the weights before and after the last update)
        if self.eval_freq > 0 and self.model.num_timesteps - self._last_eval >= self.eval_freq:
            self.evaluate_now()

    def _on_training_end(self) -> None:
        if self._updates() != self._last_updates:  # the weights after the last update (the ones saved)
            self.evaluate_now()

    def _on_step(self) -> bool:
        return not self._stop

    def restore_best(self) -> bool:
        """Load the best evaluated weights into the model when they beat the final ones; whether it did."""
        final = self.history[-1] if self.history else None
        if self.best is None or final is None or self.best is final:
            return False
        if self.best["mean_return"] <= final["mean_return"]:
            return False
        self.model.policy.load_state_dict(self._best_state)
        return True


def collapse_warnings(history: list[dict], collapse_share: float = COLLAPSE_SHARE,
                      warm_start: bool = False) -> list[str]:
    """The warnings of an evaluation history (see the module docstring); empty when training looks healthy.

    ``warm_start``: the first row is a behaviour-cloned policy, whose concentration on one action is the teacher's.
    """
    out: list[str] = []
    if not history:
        return out
    start = history[0]
    start_share = start["max_action_share"] if warm_start else 0.0
    collapsed = [h for h in history[1:] if h["max_action_share"] > collapse_share and start_share <= collapse_share]
    if collapsed:
        h = max(collapsed, key=lambda r: r["max_action_share"])
        out.append(f"argmax collapse: at {h['timesteps']} steps action {h['top_action']} took "
                   f"{h['max_action_share']:.1%} of an evaluation episode's decisions (limit {collapse_share:.0%}; "
                   f"the starting policy: {start['max_action_share']:.0%}) in {len(collapsed)} of "
                   f"{len(history) - 1} evaluations")
    tol = 1e-9 * max(abs(start["mean_return"]), 1.0)
    worse = [h for h in history[1:] if h["mean_return"] < start["mean_return"] - tol]
    if worse:
        h = min(worse, key=lambda r: r["mean_return"])
        out.append(f"evaluation fell below the starting policy: mean return {h['mean_return']:.4g} at "
                   f"{h['timesteps']} steps against {start['mean_return']:.4g} at the start, in {len(worse)} of "
                   f"{len(history) - 1} evaluations")
    return out


def best_model_fields(keeper, eval_freq, eval_seed: int, n_eval: int, collapse_share: float, restored, saved,
                      warnings: list[str]) -> dict:
    """The best-model fields of ``train.json`` that both training backends write (same keys, same meaning)."""
    return {"eval_freq": eval_freq, "eval_seed": eval_seed, "n_eval_episodes": n_eval,
            "collapse_share": collapse_share, "evaluations": keeper.history, "best": keeper.best,
            "restored_best": bool(restored), "saved_eval": saved, "warnings": warnings}


def write_train_json(out, summary: dict) -> None:
    """Write ``summary`` to ``out/train.json`` and print its warnings on stderr, one line each."""
    import json
    import sys
    from pathlib import Path

    (Path(out) / "train.json").write_text(json.dumps(summary, indent=2, default=str))
    for w in summary.get("warnings", []):
        print(f"edgegym train: warning: {w}", file=sys.stderr)
