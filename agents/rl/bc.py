"""Behaviour cloning: a warm start for PPO from any policy the benchmark runs (a reference policy, a baseline).

:func:`collect` runs the teacher through the same env construction as :func:`edgegym.agents.runner.make_env` (the
teacher's own preset overrides, then the learner's env config) and records, per decision, the observation,
the action mask, the teacher's action and the reward. :func:`clone` fits the *same* policy network PPO will
train (``model.policy``) by maximum likelihood of the teacher's actions under the action mask, and its value
head to the discounted returns of the demonstrations (so that PPO's first advantages are not noise).
:func:`agreement` is the fraction of decisions on which the clone's argmax equals the teacher's action.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Demonstrations", "agreement", "clone", "collect", "discrete_label", "label_episodes"]


@dataclass(frozen=True, slots=True)
class Demonstrations:
    """Decisions of a teacher: arrays over decisions (episodes concatenated in seed order)."""

    obs: np.ndarray  # (T, obs_dim) float32
    masks: np.ndarray  # (T, n_actions) bool
    actions: np.ndarray  # (T,) int64
    rewards: np.ndarray  # (T,) float64
    episode_start: np.ndarray  # (T,) bool
    objective: np.ndarray  # (episodes,) the teacher's objective per episode

    def __len__(self) -> int:
        return int(self.actions.size)

    @classmethod
    def concat(cls, parts) -> Demonstrations:
        """The decisions of ``parts`` (several :class:`Demonstrations`) in order, as one data set."""
        parts = [p for p in parts if p is not None]
        if not parts:
            raise ValueError("Demonstrations.concat needs at least one data set")
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                     ("obs", "masks", "actions", "rewards", "episode_start", "objective")))

    def returns(self, gamma: float) -> np.ndarray:
        """Discounted return-to-go of every decision, within its episode.              # (T,)"""
        out = np.zeros(len(self))
        acc = 0.0
        for t in range(len(self) - 1, -1, -1):
            acc = self.rewards[t] + gamma * acc
            out[t] = acc
            if self.episode_start[t]:
                acc = 0.0
        return out


def discrete_label(env, action, teacher: str = "the teacher") -> int:
    """The teacher's ``action`` as an index of the env's ``Discrete`` action space, read *before* the action is
    applied: an integer as is; a structured action (HeteroML's policies may return a ``Placement``) projected onto the
    nearest grid action by the env's ``grid_action_of``; anything else is a ``ValueError`` naming the teacher."""
    a = np.asarray(action) if isinstance(action, np.ndarray | np.generic | int) else action
    if isinstance(a, np.ndarray) and a.size == 1 and np.issubdtype(a.dtype, np.integer):
        return int(a.reshape(()))
    project = getattr(env.unwrapped, "grid_action_of", None)
    if project is not None:
        return int(project(action))
    raise ValueError(f"{teacher} returned {action!r}, not an action index of {env.action_space}: it cannot be cloned")


def collect(env_id: str, teacher: str, seeds, env_config: dict | None = None, on_episode=None) -> Demonstrations:
    """Run ``teacher`` (a policy name) on ``env_id`` for each seed; record its decisions.

    ``on_episode(k, n)``, when given, is called after the ``k``-th of ``n`` episodes (progress reporting)."""
    return label_episodes(env_id, teacher, seeds, env_config, on_episode=on_episode)[0]


def label_episodes(env_id: str, teacher: str, seeds, env_config: dict | None = None, *, student=None,
                   beta: float = 1.0, rng_seed=0, on_episode=None, purpose: str = "behaviour cloning"):
    """One episode per seed, every decision labelled by ``teacher``: the loop of behaviour cloning and of DAgger.

    The env is built as :func:`edgegym.agents.runner.make_env` builds it for the teacher (its own preset overrides,
    then ``env_config``) and the teacher is bound to it. At every decision the teacher's action is asked for first
    (a projection reads the state before the step); the action executed is the teacher's when there is no
    ``student`` (behaviour cloning), else the student's argmax, or the teacher's with probability ``beta`` (drawn
    from ``rng_seed``). A teacher's structured action (a HeteroML ``Placement``) runs as itself and is labelled by
    its nearest grid action. Returns ``(demos, extras)``: ``demos.actions`` the teacher's labels; ``extras``:
    ``executed`` and ``student`` (arrays over decisions; ``student`` -1 without a student), ``label_s`` (seconds in
    the teacher's decisions) and ``teacher_steps`` (executed actions that were the teacher's). ``purpose`` names the
    caller in errors."""
    import inspect
    import time

    from ..runner import make_env

    rng = np.random.default_rng(rng_seed)
    masked = student is not None and "action_masks" in inspect.signature(student.predict).parameters
    seeds = [int(s) for s in seeds]
    obs_l, mask_l, lab_l, rew_l, start_l, exe_l, stu_l, objs = [], [], [], [], [], [], [], []
    label_s, teacher_steps = 0.0, 0
    for k, seed in enumerate(seeds, start=1):
        env, pol = make_env(env_id, teacher, seed, env_config)
        try:
            if not hasattr(env.action_space, "n"):
                raise ValueError(f"{purpose} needs a Discrete action space; {env_id} has {env.action_space}")
            obs, _ = env.reset(seed=seed)
            pol.reset(seed)
            done, first = False, True
            while not done:
                mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
                t = time.perf_counter()
                own, _ = pol.predict(obs, deterministic=True)  # the teacher reads the state before any step
                label_s += time.perf_counter() - t
                a_t = discrete_label(env, own, teacher)  # a structured action: its nearest grid action
                a_s = -1 if student is None else _argmax_action(student, obs, mask, masked)
                use_teacher = student is None or (beta > 0.0 and rng.random() < beta)
                a = a_t if use_teacher else a_s
                run = own if use_teacher and not isinstance(own, np.ndarray | np.generic | int) else a
                teacher_steps += int(use_teacher)
                obs_l.append(np.asarray(obs, dtype=np.float32))
                mask_l.append(mask)
                lab_l.append(a_t)
                stu_l.append(a_s)
                exe_l.append(a)
                start_l.append(first)
                first = False
                obs, r, term, trunc, info = env.step(run)
                rew_l.append(float(r))
                done = term or trunc
            objs.append(float(info["episode_metrics"]["objective"]))
        finally:
            env.close()
        if on_episode is not None:
            on_episode(k, len(seeds))
    demos = Demonstrations(np.stack(obs_l), np.stack(mask_l), np.asarray(lab_l, dtype=np.int64),
                           np.asarray(rew_l), np.asarray(start_l, dtype=bool), np.asarray(objs))
    extras = {"executed": np.asarray(exe_l, dtype=np.int64), "student": np.asarray(stu_l, dtype=np.int64),
              "label_s": label_s, "teacher_steps": teacher_steps}
    return demos, extras


def _argmax_action(model, obs, mask, masked: bool) -> int:
    """The deterministic action of an SB3 ``model`` (masks honoured when its ``predict`` takes them)."""
    if masked:
        a, _ = model.predict(obs, deterministic=True, action_masks=mask)
    else:
        a, _ = model.predict(obs, deterministic=True)
    return int(np.asarray(a).reshape(()))


def clone(model, demos: Demonstrations, *, epochs: int = 20, batch_size: int = 256, lr: float = 1e-3,
          value_coef: float = 0.5, seed: int = 0, reset_value_bias: bool = True) -> dict:
    """Fit ``model.policy`` (an SB3 / sb3-contrib actor-critic with a Discrete action space) to ``demos``.

    Minimises ``−log π(a_teacher | s, mask) + value_coef · (V(s) − G_t)² / Var(G)`` with Adam (its own optimiser, so
    PPO's starts fresh); the current weights are the starting point (a warm start when the model was fitted
    before, as in the rounds of :mod:`edgegym.agents.rl.dagger`). ``reset_value_bias``: first set the value head's
    bias to the mean return (off for a warm start that keeps the fitted head). Returns ``{"epochs", "samples",
    "final_nll", "final_value_mse" (divided by Var(G)),
    "train_agreement"}``.
    """
    import torch as th

    policy = model.policy
    dev = policy.device
    obs = th.as_tensor(demos.obs, device=dev)
    acts = th.as_tensor(demos.actions, device=dev)
    masks = th.as_tensor(demos.masks, device=dev)
    ret = th.as_tensor(demos.returns(float(getattr(model, "gamma", 1.0))), dtype=th.float32, device=dev)
    # returns are O(10-100): start the value head at their mean and weigh its error by 1/var, so that fitting it
    # does not drive the (tanh) critic features into saturation (measured: a constant critic otherwise)
    if reset_value_bias:
        with th.no_grad():
            policy.value_net.bias.fill_(float(ret.mean()))
    v_norm = float(ret.var()) + 1e-8 if ret.numel() > 1 else 1.0
    opt = th.optim.Adam(policy.parameters(), lr=lr)
    gen = th.Generator().manual_seed(int(seed))
    n = len(demos)
    nll = mse = float("nan")
    policy.set_training_mode(True)
    for _ in range(int(epochs)):
        perm = th.randperm(n, generator=gen)
        tot_nll = tot_mse = 0.0
        for k in range(0, n, batch_size):
            idx = perm[k : k + batch_size]
            values, log_prob, _ = policy.evaluate_actions(obs[idx], acts[idx], action_masks=masks[idx])
            loss_pi = -log_prob.mean()
            loss_v = ((values.flatten() - ret[idx]) ** 2).mean() / v_norm
            loss = loss_pi + value_coef * loss_v
            opt.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
            tot_nll += loss_pi.item() * idx.numel()
            tot_mse += loss_v.item() * idx.numel()
        nll, mse = tot_nll / n, tot_mse / n
    policy.set_training_mode(False)
    return {"epochs": int(epochs), "samples": n, "final_nll": nll, "final_value_mse": mse,
            "train_agreement": agreement(model, demos)}


def agreement(model, demos: Demonstrations) -> float:
    """Fraction of ``demos`` decisions on which the model's masked argmax equals the teacher's action."""
    import torch as th

    policy = model.policy
    with th.no_grad():
        obs = th.as_tensor(demos.obs, device=policy.device)
        dist = policy.get_distribution(obs, action_masks=demos.masks)
        pred = dist.get_actions(deterministic=True).cpu().numpy().reshape(-1)
    return float(np.mean(pred == demos.actions))
