"""Behaviour cloning: a warm start for PPO from any policy the benchmark runs (a reference policy, a baseline).

:func:`collect` runs the teacher through the same env construction as :func:`edgegym.agents.runner.make_env` (the
teacher's own preset overrides, then the learner's env config) and records, per decision, the observation,
the action mask, the teacher's action and the reward. :func:`clone` fits the *same* policy network PPO will
train (``model.policy``) by maximum likelihood of the teacher's actions under the action mask, and its value
head to the discounted returns of the demonstrations (so that PPO's first advantages are not noise).
:func:`agreement` is the fraction of decisions on which the clone's argmax equals the teacher's action.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

__all__ = ["Demonstrations", "agreement", "clone", "collect", "discrete_label", "label_episodes", "labelling_pool",
           "labels_per_state"]


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


def collect(env_id: str, teacher: str, seeds, env_config: dict | None = None, on_episode=None, *, workers: int = 1,
            address: str | None = None, pool=None) -> Demonstrations:
    """Run ``teacher`` (a policy name) on ``env_id`` for each seed; record its decisions.

    ``on_episode(k, n)``, when given, is called after the ``k``-th of ``n`` episodes (progress reporting).
    ``workers`` > 1 runs the episodes on that many processes (on the Ray cluster at ``address`` when given), the
    result identical to one process; ``pool``: an open :func:`labelling_pool` (:func:`label_episodes`)."""
    return label_episodes(env_id, teacher, seeds, env_config, on_episode=on_episode, workers=workers,
                          address=address, pool=pool)[0]


def label_episodes(env_id: str, teacher: str, seeds, env_config: dict | None = None, *, student=None,
                   beta: float = 1.0, rng_seed=0, on_episode=None, purpose: str = "behaviour cloning",
                   workers: int = 1, address: str | None = None, pool=None):
    """One episode per seed, every decision labelled by ``teacher``: the loop of behaviour cloning and of DAgger.

    The env is built as :func:`edgegym.agents.runner.make_env` builds it for the teacher (its own preset overrides,
    then ``env_config``) and the teacher is bound to it. At every decision the teacher's action is asked for first
    (a projection reads the state before the step); the action executed is the teacher's when there is no
    ``student`` (behaviour cloning), else the student's argmax, or the teacher's with probability ``beta`` (drawn
    from ``rng_seed``). A teacher's structured action (a HeteroML ``Placement``) runs as itself and is labelled by
    its nearest grid action. Returns ``(demos, extras)``: ``demos.actions`` the teacher's labels; ``extras``:
    ``executed`` and ``student`` (arrays over decisions; ``student`` -1 without a student), ``label_s`` (seconds in
    the teacher's decisions) and ``teacher_steps`` (executed actions that were the teacher's). ``purpose`` names the
    caller in errors.

    ``workers`` > 1 labels on that many processes (local ones started with 'spawn', or Ray tasks on the cluster at
    ``address``), with the labels, trajectories and β draws of one process (:func:`_label_parallel`); ``pool``, an
    open :func:`labelling_pool`, is used instead of starting one (its workers already warm: several calls, one
    start-up)."""
    import inspect

    workers = _check_workers(workers)
    seeds = [int(s) for s in seeds]
    if pool is not None or workers > 1:
        with (contextlib.nullcontext(pool) if pool is not None else
              labelling_pool(workers, address, env_id, teacher, env_config)) as p:
            return _label_parallel(env_id, teacher, seeds, env_config, student=student, beta=float(beta),
                                   rng_seed=rng_seed, on_episode=on_episode, purpose=purpose, pool=p)
    rng = np.random.default_rng(rng_seed)
    masked = student is not None and "action_masks" in inspect.signature(student.predict).parameters
    parts = []
    for k, seed in enumerate(seeds, start=1):
        parts.append(_episode(env_id, teacher, seed, env_config, student, masked, beta, rng, purpose)[0])
        if on_episode is not None:
            on_episode(k, len(seeds))
    return _merge(parts)


def _episode(env_id: str, teacher: str, seed: int, env_config: dict | None, student, masked: bool, beta: float, rng,
             purpose: str, *, ask_all: bool = True):
    """One episode of :func:`label_episodes`: ``((demos, extras), run)``, ``run`` the actions as executed (a
    structured teacher action as itself). With ``ask_all`` false the teacher is asked only where its action is
    executed, and the other states' labels are -1 (:func:`_label_parallel` has them labelled by tasks)."""
    import time

    from ..runner import make_env

    env, pol = make_env(env_id, teacher, seed, env_config)
    obs_l, mask_l, lab_l, rew_l, exe_l, stu_l, run_l = [], [], [], [], [], [], []
    label_s, teacher_steps = 0.0, 0

    def ask(obs):
        nonlocal label_s
        t = time.perf_counter()
        own, _ = pol.predict(obs, deterministic=True)  # the teacher reads the state before any step
        label_s += time.perf_counter() - t
        return own, discrete_label(env, own, teacher)  # a structured action: its nearest grid action

    try:
        if not hasattr(env.action_space, "n"):
            raise ValueError(f"{purpose} needs a Discrete action space; {env_id} has {env.action_space}")
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        done = False
        while not done:
            mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
            own, a_t = ask(obs) if ask_all else (None, -1)
            a_s = -1 if student is None else _argmax_action(student, obs, mask, masked)
            use_teacher = student is None or (beta > 0.0 and rng.random() < beta)
            if use_teacher and a_t < 0:
                own, a_t = ask(obs)
            a = a_t if use_teacher else a_s
            run = own if use_teacher and not isinstance(own, np.ndarray | np.generic | int) else a
            teacher_steps += int(use_teacher)
            obs_l.append(np.asarray(obs, dtype=np.float32))
            mask_l.append(mask)
            lab_l.append(a_t)
            stu_l.append(a_s)
            exe_l.append(a)
            run_l.append(run)
            obs, r, term, trunc, info = env.step(run)
            rew_l.append(float(r))
            done = term or trunc
        objective = float(info["episode_metrics"]["objective"])
    finally:
        env.close()
    starts = np.zeros(len(lab_l), dtype=bool)
    starts[0] = True
    demos = Demonstrations(np.stack(obs_l), np.stack(mask_l), np.asarray(lab_l, dtype=np.int64), np.asarray(rew_l),
                           starts, np.asarray([objective]))
    extras = {"executed": np.asarray(exe_l, dtype=np.int64), "student": np.asarray(stu_l, dtype=np.int64),
              "label_s": label_s, "teacher_steps": teacher_steps}
    return (demos, extras), run_l


def _check_workers(workers) -> int:
    """``workers`` as an int >= 1, else a ``ValueError`` naming ``--teacher-workers``."""
    if isinstance(workers, bool) or not isinstance(workers, int | np.integer) or int(workers) < 1:
        raise ValueError(f"teacher_workers (--teacher-workers) must be an integer >= 1, got {workers!r}")
    return int(workers)


def labels_per_state(policy) -> bool:
    """Whether ``policy`` (a bound teacher) can label states out of order: it decides from the env's current state
    alone (``Policy.markov``) and holds no random stream of its own (a ``numpy`` ``Generator`` / ``RandomState`` or
    a ``random.Random``, in itself or a policy it holds, e.g. a rollout's base), so its label on a state does not
    depend on the states it was asked about before. A rollout policy qualifies: its futures are drawn from seeds of
    the episode's seed, the same at every decision."""
    import random

    from ..policy import Policy

    seen: set[int] = set()

    def clean(p) -> bool:
        if id(p) in seen:
            return True
        seen.add(id(p))
        if not getattr(p, "markov", True):
            return False
        for v in getattr(p, "__dict__", {}).values():
            if isinstance(v, np.random.Generator | np.random.RandomState | random.Random):
                return False
            if isinstance(v, Policy) and not clean(v):
                return False
        return True

    return clean(policy)


def labelling_pool(workers: int, address: str | None = None, env_id: str | None = None, teacher: str | None = None,
                   env_config: dict | None = None) -> _Pool:
    """Where the teacher's labelling tasks run, a context manager to pass to :func:`label_episodes` (``pool``):
    ``workers`` local processes (``concurrent.futures`` with the 'spawn' context: a fresh interpreter per worker,
    nothing inherited from the parent's threads, torch or Ray state; they are started at once and, given
    ``env_id`` and ``teacher``, each builds the teacher's env and takes one decision first, so that imports and
    compiled kernels are loaded while this process runs the student), or Ray tasks on the cluster at ``address``
    (connected here unless this process already is, disconnected at the end when connected here)."""
    return _Pool(_check_workers(workers), address, (env_id, teacher, env_config) if env_id and teacher else None)


class _Pool:
    """:func:`labelling_pool`: ``submit(fn, *args)`` returns a handle, ``result(handle)`` its value."""

    def __init__(self, workers: int, address: str | None, warm: tuple | None = None) -> None:
        self.workers, self.address, self.warm = int(workers), address, warm
        self._ex = self._ray = None
        self._started_ray = False

    def __enter__(self) -> _Pool:
        if self.address:
            import logging

            import ray

            if not ray.is_initialized():
                try:
                    ray.init(address=self.address, log_to_driver=False, logging_level=logging.ERROR)
                except (ConnectionError, RuntimeError, ValueError) as e:
                    raise ValueError(f"--teacher-workers with --address {self.address}: cannot connect to a Ray "
                                     f"cluster ({' '.join(str(e).split())})") from None
                self._started_ray = True
            self._ray = ray
            self._task = ray.remote(num_cpus=1)(_call)
        else:
            import concurrent.futures
            import multiprocessing

            self._ex = concurrent.futures.ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_warm_worker if self.warm else None, initargs=self.warm or ())
            for _ in range(self.workers):  # start every worker now (they start on demand otherwise)
                self._ex.submit(int)
        return self

    def submit(self, fn, *args):
        return self._task.remote(fn, *args) if self._ray is not None else self._ex.submit(fn, *args)

    def result(self, handle):
        return self._ray.get(handle) if self._ray is not None else handle.result()

    def __exit__(self, *exc) -> None:
        if self._ex is not None:
            self._ex.shutdown(wait=True, cancel_futures=True)
        if self._started_ray:
            self._ray.shutdown()


def _warm_worker(env_id: str, teacher: str, env_config: dict | None) -> None:
    """A new worker's first job: the teacher's env built and one decision taken (imports, compiled kernels)."""
    from ..runner import make_env

    env, pol = make_env(env_id, teacher, 0, env_config)
    try:
        obs, _ = env.reset(seed=0)
        pol.reset(0)
        pol.predict(obs, deterministic=True)
    finally:
        env.close()


def _call(fn, *args):
    """``fn(*args)``: the body of a Ray labelling task."""
    return fn(*args)


def _own_episode(env_id: str, teacher: str, seed: int, env_config: dict | None, purpose: str):
    """One episode of the teacher's own decisions (behaviour cloning), in a worker: :func:`label_episodes`."""
    return label_episodes(env_id, teacher, [seed], env_config, purpose=purpose)


def _replay_labels(env_id: str, teacher: str, seed: int, env_config: dict | None, run: list, indices: list,
                   purpose: str) -> tuple[list[int], float]:
    """In a worker: rebuild the episode ``seed`` (env and teacher as :func:`label_episodes` builds them), replay the
    executed actions ``run`` and return the teacher's labels on the states ``indices`` (ascending) and the seconds
    its decisions took. The teacher is asked only on ``indices``: every state when it cannot label out of order."""
    import time

    from ..runner import make_env

    env, pol = make_env(env_id, teacher, seed, env_config)
    labels, secs = [], 0.0
    try:
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        want, last = set(indices), max(indices)
        for i in range(last + 1):
            if i in want:
                t = time.perf_counter()
                own, _ = pol.predict(obs, deterministic=True)
                secs += time.perf_counter() - t
                labels.append(discrete_label(env, own, teacher))
            if i < last:
                obs, _r, term, trunc, _ = env.step(run[i])
                if term or trunc:
                    raise RuntimeError(f"{purpose}: the replay of episode {seed} ended at step {i + 1}, before "
                                       f"state {last}: {env_id} is not deterministic for its seed")
    finally:
        env.close()
    return labels, secs


def _label_parallel(env_id: str, teacher: str, seeds: list[int], env_config: dict | None, *, student, beta: float,
                    rng_seed, on_episode, purpose: str, pool: _Pool):
    """:func:`label_episodes` on the ``pool``'s workers, the result identical to one process.

    Without a student (behaviour cloning) every episode is a task (the teacher's own run). With a student this
    process runs the episodes (the student's argmax, the β draws from ``rng_seed`` in the same order); the states
    whose executed action is the student's are labelled by tasks that rebuild the episode from its seed and replay
    the executed actions: split into ``workers`` interleaved sets per episode when the teacher labels states out of
    order (:func:`labels_per_state`; the teacher's executed decisions are then asked here), else one task per
    episode that asks the teacher on every state in order, as one process does (only with ``beta`` 0: with β > 0
    such a teacher's executed decisions depend on all its earlier ones, and the episodes are labelled here, in one
    process). The tasks' results are gathered in input order."""
    import inspect

    from ..runner import make_env

    if student is None:
        handles = [pool.submit(_own_episode, env_id, teacher, s, env_config, purpose) for s in seeds]
        parts = []
        for k, h in enumerate(handles, start=1):
            parts.append(pool.result(h))
            if on_episode is not None:
                on_episode(k, len(seeds))
        return _merge(parts)
    env, pol = make_env(env_id, teacher, seeds[0], env_config)
    env.close()
    per_state = labels_per_state(pol)
    if not per_state and beta > 0.0:
        return label_episodes(env_id, teacher, seeds, env_config, student=student, beta=beta, rng_seed=rng_seed,
                              on_episode=on_episode, purpose=purpose)
    rng = np.random.default_rng(rng_seed)
    masked = "action_masks" in inspect.signature(student.predict).parameters
    parts, jobs = [], []
    for seed in seeds:
        part, run_l = _episode(env_id, teacher, seed, env_config, student, masked, beta, rng, purpose, ask_all=False)
        todo = [int(i) for i in np.flatnonzero(part[0].actions < 0)]
        sets = [todo[j :: pool.workers] for j in range(pool.workers)] if per_state else [todo]
        jobs.append([(ix, pool.submit(_replay_labels, env_id, teacher, seed, env_config, run_l, ix, purpose))
                     for ix in sets if ix])
        parts.append(part)
    for k, (handles, (demos, extras)) in enumerate(zip(jobs, parts, strict=True), start=1):
        for ix, h in handles:
            labels, secs = pool.result(h)
            demos.actions[ix] = labels
            extras["label_s"] += secs
        if on_episode is not None:
            on_episode(k, len(seeds))
    return _merge(parts)


def _merge(parts):
    """One ``(demos, extras)`` of :func:`label_episodes` from the per-episode ones, in order."""
    demos = Demonstrations.concat([d for d, _ in parts])
    extras = {"executed": np.concatenate([x["executed"] for _, x in parts]),
              "student": np.concatenate([x["student"] for _, x in parts]),
              "label_s": float(sum(x["label_s"] for _, x in parts)),
              "teacher_steps": int(sum(x["teacher_steps"] for _, x in parts))}
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
