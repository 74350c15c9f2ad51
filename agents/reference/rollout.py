"""``rollout:<base>``: one step of policy improvement over any policy, on every family.

The rollout algorithm of Bertsekas, Tsitsiklis and Wu, "Rollout algorithms for combinatorial optimization",
Journal of Heuristics 3(3), 1997 (see also Bertsekas, "Rollout algorithms for discrete optimization: a survey",
Handbook of Combinatorial Optimization, Springer, 2013): at each decision, every candidate action is scored by
simulating the rest of the episode (or ``H`` steps of it) under the *base* policy from the state that action
leads to, and the best-scoring action is taken. Run with the base's own action among the candidates and ties going
to it, the rollout policy is never worse than its base in expectation of the model it simulates (the cost
improvement property, Bertsekas et al. 1997, Sec. 2).

Names: ``rollout:<base>`` or ``rollout(K=4,H=20,k=6):<base>`` where ``<base>`` is any policy name of the env's
family (a registered policy, a saved agent ``maskable-ppo:PATH`` / ``ppo:PATH`` / ``rllib:DIR`` / a model folder,
even another ``rollout:...``). Parameters (any subset, any order, comma-separated):

* ``K`` (default 4): forks per decision, each with its own resampled future (``env.unwrapped.fork(seed,
  "resample")``: the jobs that have not arrived yet are redrawn from the preset's workload model, never the true
  ones); the score of an action is the mean over the ``K`` forks.
* ``H`` (default 20): steps simulated per candidate and fork (the candidate's own step included); ``H=0``: to the
  end of the episode. The score is the sum of the rewards over those steps: in every family the rewards are the
  increments of the objective, so the sum is the (scaled, negated) objective increase over the horizon.
* ``k`` (default 6): candidate actions per decision (the base's own action always among them), see below.
* ``z`` (default 0): significance margin. The best candidate replaces the base's action only when its mean
  advantage over the base's action, paired fork by fork, exceeds ``z`` standard errors of that mean (``z=0``: any
  advantage beyond the ties tolerance; with ``K=1`` the standard error is taken as 0).
* ``D`` (default 0): ``D=1`` adds a terminal value to each continuation cut by the horizon (see below).
* ``clairvoyant`` (default 0): ``clairvoyant=1`` forks with the true future (``fork(seed, "keep")``) instead of a
  resampled one. **For analysis only** (how much of rollout's result is due to the resampled future): such a policy
  reads jobs that have not arrived, and its name says so.

Design choices (each one a documented decision):

* **Common random numbers.** The same ``K`` fork seeds for every candidate of a decision: candidates are compared
  on the same futures. The seeds are ``seed·1000003 + i`` (``i < K``) of the policy's seed, which the runner sets
  to the episode's seed at ``reset``: deterministic, and the same futures at every decision of an episode (the
  fork splices them in after the pending job, so each decision still sees a future drawn independently of the
  true one).
* **Ties and noise go to the base.** An action replaces the base's only when its mean score is higher by more
  than ``1e-9`` of the base's magnitude, so rollout takes the base's action whenever it cannot tell them apart.
* **Candidates.** All legal actions when there are at most ``k``; otherwise the base's action and the ``k - 1``
  best legal actions by a cheap family score the env exposes: on EdgeUtility the planned finish time
  (``query_finish``, the quantity O4A minimises), on HeteroML the estimated completion (``grid_estimates``:
  start + duration, the quantity ``earliest`` minimises), elsewhere the one-step reward on the first resampled
  fork. A base that returns a structured action (HeteroML's A_online returns a ``Placement``) keeps it as a
  candidate next to the grid actions.
* **Discrete actions only.** Rollout compares a finite candidate set. EdgeCloudML's default ``server_proportions``
  action is a continuous ``Box``: ``rollout`` runs the env in the ``cloud_fraction`` action mode instead
  (``Discrete(6)``: 0-4 send 0, 1/4, ..., all chunks to the cloud, 5 is A_greedy's own split, so ``aonline``'s
  action is one of the candidates), unless the base needs another discrete mode. On WirelessUDL, Okita's
  re-plan mode gets its per-arrival worker rule (``env.replan_workers``, ``Discrete(4)``: 0 is Okita's own
  tentative optimum, so ``okita`` is the base's action; 1-3 give the arriving job one worker, half or twice that
  optimum). A base whose env has a ``Discrete(1)`` action space decides inside the simulator (SRTF, FIFO or DRF in
  re-plan mode, slot-driven HeteroML baselines): there is nothing to improve per step and ``rollout`` refuses it
  with a message naming the base.
* **A terminal value (``D=1``).** With a horizon ``H``, each continuation ends with ``env.drain_return()`` where
  the env has one (EdgeUtility; WirelessUDL, where it is zero in the commit mode): the reward of running the jobs
  already in the system to completion with no further arrival, so that an action is also scored by the jobs it
  leaves queued or running. Off by default.
* **The base must be Markov.** Its continuation follows actions it did not choose, so it must decide from the
  env's state (and its own random stream) alone; a base that keeps its own schedule of its past decisions
  (HeteroML's ``aonline-hetero``, ``aonline-hetero-eager``, ``aonline-hetero-now``; a policy with
  ``markov = False``) is refused with a message naming it. Structured actions (HeteroML's baselines return a
  ``Placement`` computed on the env's state) are fine.
* **The base forks with the env.** Each simulated continuation runs a copy of the base bound to the fork
  (:meth:`Policy.fork <edgegym.agents.policy.Policy.fork>`), so no base plans on a stale state.
* **Simulated once per distinct effect.** Where the env has ``action_key(action)`` (EdgeCloudML: the placement an
  action decodes to; HeteroML: grid actions that differ only in their delay and start at the same estimated
  slot), candidates with equal keys change the state and the rewards the same way: their
  continuation runs once and its returns count for each (the scores are the same as simulating each). Where the
  env has ``step_quiet`` and the base an ``advance`` fast path, a candidate's own step is taken without building
  its observation (``observe()`` builds it only if a ``predict`` needs it). Where the base also has an
  ``advance_after`` path (EdgeCloudML's A_online), a candidate's step and its continuation are one call that takes
  the step by its key (the placement decoded once per decision, the same on every future). Where the env's
  ``fork`` takes ``history=False`` (a fork that does not keep the executed schedule, which no continuation reads), the
  futures are forked so: the same steps and rewards from a smaller copy. Where the base has a ``score_after`` path
  (EdgeCloudML's A_online: the env's compiled loop on scratch copies of the future's state), a continuation that
  covers the whole horizon (``H`` > 0, ``D=0``) is scored without forking the future at all, and a forked
  continuation that reaches its horizon leaves the decision point after it unprepared
  (``advance_after(..., last=True)``); the same returns.
* **Not clairvoyant.** Only resampled forks are used; the real future is never read (unless the name says
  ``clairvoyant=1``, the analysis variant above).

``decisions_per_s`` of ``edgegym run`` is this policy's own decision rate (the simulated continuations are most of
it).
"""

from __future__ import annotations

import gc
import re

import numpy as np

from ..policy import Policy

__all__ = ["DEFAULTS", "RolloutPolicy", "is_rollout", "make_rollout", "parse_rollout", "rollout_env_config"]

PREFIX = "rollout"
#: default parameters (see the module docstring)
DEFAULTS = {"K": 4, "H": 20, "k": 6, "z": 0.0, "clairvoyant": 0, "D": 0}
_NAME = re.compile(r"^rollout(?:\((?P<params>[^)]*)\))?:(?P<base>.+)$", re.S)


def is_rollout(name) -> bool:
    """Whether ``name`` is a rollout policy name (``rollout:<base>`` or ``rollout(...):<base>``)."""
    return isinstance(name, str) and (name.startswith(PREFIX + ":") or name.startswith(PREFIX + "("))


def parse_rollout(name: str) -> tuple[dict, str]:
    """``"rollout(K=2,H=10):aonline"`` -> ``({"K": 2, "H": 10, "k": 6}, "aonline")``; a ``ValueError`` naming the
    parameter for a bad one."""
    m = _NAME.match(name) if isinstance(name, str) else None
    if m is None or not m.group("base").strip():
        raise ValueError(f"bad rollout policy {name!r}: expected rollout:<base> or rollout(K=4,H=20,k=6):<base>")
    params = dict(DEFAULTS)
    text = (m.group("params") or "").strip()
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, val = item.partition("=")
        key, val = key.strip(), val.strip()
        if not eq or key not in DEFAULTS:
            raise ValueError(f"rollout parameter {item!r} in {name!r}: expected K=<forks>, H=<steps>, "
                             "k=<candidates>, z=<margin>, D=<0|1> or clairvoyant=<0|1> "
                             "(e.g. rollout(K=4,H=20,k=6):aonline)")
        if key == "z":
            try:
                z = float(val)
            except ValueError:
                raise ValueError(f"rollout parameter z must be a number, got {val!r} in {name!r}") from None
            if not (z >= 0 and np.isfinite(z)):
                raise ValueError(f"rollout parameter z must be a finite number >= 0, got {val!r} in {name!r}")
            params[key] = z
            continue
        try:
            v = int(val)
        except ValueError:
            raise ValueError(f"rollout parameter {key} must be an integer, got {val!r} in {name!r}") from None
        if key in ("clairvoyant", "D") and v not in (0, 1):
            raise ValueError(f"rollout parameter {key} must be 0 or 1, got {val!r} in {name!r}")
        lo = 0 if key in ("H", "clairvoyant", "D") else 1
        if v < lo:
            raise ValueError(f"rollout parameter {key} must be >= {lo}"
                             f"{' (0: to the end of the episode)' if key == 'H' else ''}, got {v} in {name!r}")
        params[key] = v
    return params, m.group("base").strip()


def rollout_env_config(family: str, base_config: dict) -> dict:
    """The env overrides of ``rollout:<base>``: the base's, plus the family's ``search_overrides`` of the base's
    ``env`` section (:class:`edgegym.core.family.Family`: e.g. a discrete action mode where the family's default
    is continuous, or a per-arrival choice where the base decides inside the simulator)."""
    from edgegym.families import family as family_record

    cfg = {k: dict(v) for k, v in (base_config or {}).items()}
    hook = family_record(family).search_overrides
    extra = hook(cfg.get("env", {})) if hook is not None else {}
    if extra:
        cfg.setdefault("env", {}).update(extra)
    return cfg


def make_rollout(name: str, env, seed: int, make_base) -> RolloutPolicy:
    """Build ``name`` on ``env``; ``make_base(base_name, env, seed)`` builds the base policy."""
    params, base_name = parse_rollout(name)
    space = env.action_space
    if not hasattr(space, "n"):
        raise ValueError(f"{name}: rollout needs a discrete action space, the env's is {space} ({_discrete_hint(env)})")
    if int(space.n) == 1:
        raise ValueError(f"{name}: the base policy {base_name!r} decides inside the simulator (the env's action "
                         "space is Discrete(1)): there is no per-step choice for rollout to improve; use a base that "
                         "acts through the action space")
    base = make_base(base_name, env, seed)
    if not _is_markov(base):
        raise ValueError(f"{name}: the base policy {base_name!r} keeps its own schedule of the jobs it placed (its "
                         "next decisions assume its own earlier ones), so its continuation cannot follow another "
                         "action; use a base that decides from the env's state (e.g. earliest, fifo, a saved agent)")
    return RolloutPolicy(env, base, seed=seed, **params)


def _discrete_hint(env) -> str:
    """What to set for a discrete action space: the family's ``search_overrides`` as an ``--env-config``."""
    import json

    from edgegym.families import family_of

    hook = family_of(env).search_overrides
    extra = hook({}) if hook is not None else {}
    if not extra:
        return "choose a discrete action mode in the env config"
    return f"e.g. --env-config '{json.dumps({'env': extra})}'"


_HISTORY_ARG: dict[type, bool] = {}


def _fork_takes_history(env) -> bool:
    """Whether ``env.fork`` takes ``history=`` (a family's fork may offer ``history=False``: a fork for look-ahead
    that does not keep the executed schedule; see :mod:`edgegym.core.forking`). Looked up once per env class."""
    t = type(env)
    hit = _HISTORY_ARG.get(t)
    if hit is None:
        import inspect

        try:
            hit = "history" in inspect.signature(env.fork).parameters
        except (TypeError, ValueError):
            hit = False
        _HISTORY_ARG[t] = hit
    return hit


def _is_markov(base: Policy) -> bool:
    """Whether ``base`` decides from the env's current state (and its own random stream) alone: the condition for
    simulating it after an action it did not choose. ``Policy.markov`` (default True) says so; a policy that keeps
    its own schedule of its past decisions sets it false."""
    return bool(getattr(base, "markov", True))


class RolloutPolicy(Policy):
    """The rollout policy over ``base`` (see the module docstring for the algorithm and every design choice)."""

    #: run one continuation per distinct effect (the env's ``action_key``); False: one per candidate (the reference
    #: for the differential tests: the same scores)
    dedupe = True
    #: fork with ``history=False`` where the env's ``fork`` takes it (a look-ahead fork without the executed
    #: history: the same observations, rewards and steps, cheaper to copy); False: full forks (the reference)
    lean_forks = True
    #: a candidate's step and its continuation in one call where the base has an ``advance_after`` path and the
    #: env an ``action_key`` (the step's placement decoded once per decision, not once per fork); False: the
    #: candidate's step, then the base's ``advance`` (the reference for the differential tests: the same returns)
    fused = True
    #: a continuation scored without a fork where the base has a ``score_after`` path (the env's compiled loop on
    #: scratch copies of the future's state; the same returns), falling back to the fork where it declines; False:
    #: always a fork (the reference for the differential tests)
    scored = True

    def __init__(self, env, base: Policy, *, K: int = 4, H: int = 20, k: int = 6, z: float = 0.0,
                 clairvoyant: int = 0, D: int = 0, seed: int = 0) -> None:
        super().__init__(env)
        self.base, self.K, self.H, self.k, self.z = base, int(K), int(H), int(k), float(z)
        self.D = int(D)
        if self.D and not hasattr(self.unwrapped, "drain_return"):
            raise ValueError(f"rollout parameter D=1 needs an env with a drain_return() terminal value; "
                             f"{type(self.unwrapped).__name__} has none: use D=0")
        self.future = "keep" if clairvoyant else "resample"  # keep: the analysis variant (its name says so)
        self.seed = int(seed)
        self.decisions = 0
        self.changed = 0  # decisions where rollout did not take the base's action

    def reset(self, seed: int | None = None) -> None:
        self.base.reset(seed)
        if seed is not None:
            self.seed = int(seed)
        self.decisions = self.changed = 0

    def fork(self, env) -> RolloutPolicy:
        new = super().fork(env)
        new.base = self.base.fork(env)
        return new

    def _effects(self, cands: list) -> tuple[list[int], list | None]:
        """Per candidate, the first candidate with the same effect (itself when none): by the env's
        ``action_key(action)`` where it has one (actions with equal keys change the env's state and rewards the
        same way, so their continuations are the same and run once), else every candidate its own; and the
        candidates' ``action_key`` values (``None`` where neither the dedupe nor the fused continuation reads them,
        or the env has no ``action_key``)."""
        key_of = getattr(self.unwrapped, "action_key", None)
        if key_of is None or not (self.dedupe or self._fuses()):
            return list(range(len(cands))), None
        keys = [key_of(a) for a in cands]
        if not self.dedupe:
            return list(range(len(cands))), keys
        first: dict = {}
        return [first.setdefault(k, c) for c, k in enumerate(keys)], keys

    def _fuses(self) -> bool:
        """Whether a candidate's step and its continuation run as one ``advance_after`` call of the base."""
        return self.fused and self.H != 1 and \
            getattr(type(self.base), "advance_after", None) is not getattr(Policy, "advance_after", None)

    def _scores_without_fork(self, keys) -> bool:
        """Whether this decision's continuations may be scored by the base's ``score_after``: with the fused path's
        keys, a horizon and no terminal value (a score covers exactly ``H`` steps, the candidate's included)."""
        if not self.scored or keys is None or not self._fuses() or self.H == 0 or self.D:
            return False
        return getattr(type(self.base), "score_after", None) is not getattr(Policy, "score_after", None)

    def _seeds(self) -> list[int]:
        return [(self.seed * 1000003 + i) % (2**63) for i in range(self.K)]

    def _candidates(self, base_action, futures) -> list:
        env = self.unwrapped
        legal = np.flatnonzero(np.asarray(env.action_masks(), dtype=bool))
        structured = not isinstance(base_action, int | np.integer)
        own = None if structured else int(base_action)
        if legal.size + (1 if structured else 0) <= self.k:
            rest = [int(a) for a in legal if a != own]
        else:
            score = self._scores(legal, futures)
            order = legal[np.lexsort((legal, score))]
            rest = [int(a) for a in order if a != own][: self.k - 1]
        return [base_action if structured else own] + rest

    def _scores(self, legal: np.ndarray, futures) -> np.ndarray:
        """Lower is better: the family's cheap estimate, or minus the one-step reward on the first fork."""
        env = self.unwrapped
        if hasattr(env, "query_finish"):  # EdgeUtility: planned finish per row; reject (past the rows) last
            f = np.asarray(env.query_finish(), dtype=float)
            out = np.full(legal.size, np.inf)
            rows = legal < f.size
            out[rows] = f[legal[rows]]
            return out
        if hasattr(env, "grid_estimates"):
            start, dur = env.grid_estimates()
            return np.where(start[legal] >= 0, start[legal] + dur[legal], np.inf).astype(float)
        out = np.empty(legal.size)
        for i, a in enumerate(legal):
            g = futures[0].fork(seed=0, future="keep")
            quiet = getattr(g, "step_quiet", None)  # the same reward, no observation built
            out[i] = -(quiet(int(a))[0] if quiet is not None else g.step(int(a))[1])
        return out

    def _continue(self, g, action, key=None) -> float:
        """The sum of rewards of ``action`` then the base on fork ``g`` for ``H`` steps (or to the end).

        Where the base has an ``advance`` fast path and the fork offers ``step_quiet``/``observe`` (the rollout
        contract: ``step_quiet`` leaves the env as ``step`` does, without building the observation or the info),
        the candidate's own step is taken quietly and its observation built only if a ``predict`` needs it: the
        same rewards and steps as :meth:`_continue_reference`, the oracle kept for the differential tests. Where
        the base also has an ``advance_after`` path (``key``: the action's ``action_key``), the candidate's step and
        the base's steps after it are that one call."""
        if key is not None and self._fuses():
            pol = self.base.fork(g)
            # last: with no terminal value, a continuation that reaches its horizon is dropped (the env need not
            # prepare the decision point after it)
            fast = pol.advance_after(key, self.H if self.H else None, 0.0, last=not self.D)
            if fast is not None and fast[1] > 0:
                obs, n, total = fast
                return self._finish(g, pol, obs, n, total, quiet=True)
        quiet = getattr(g, "step_quiet", None)
        if quiet is None or not self._base_has_advance():
            return self._continue_reference(g, action)
        r, term, trunc = quiet(action)
        total = float(r)
        if term or trunc:
            return total
        return self._after_first(g, None, total, quiet=True)

    def _base_has_advance(self) -> bool:
        """Whether the base overrides :meth:`Policy.advance <edgegym.agents.policy.Policy.advance>` (a fast path
        that may take the continuation's steps; it can still decline, returning None)."""
        return getattr(type(self.base), "advance", None) is not getattr(Policy, "advance", None)

    def _after_first(self, g, obs, total: float, quiet: bool = False) -> float:
        """The continuation after the candidate's step (``total``: its reward; ``obs``: its observation, ``None``
        when it was taken quietly): the base's ``advance`` fast path where it has one, then ``predict`` + ``step``
        for the steps left (building the observation only when one is needed; ``quiet``: those steps by
        ``step_quiet``, the observation by ``observe()`` when the next ``predict`` needs it, no info built), then
        the terminal value (``D=1``)."""
        pol = self.base.fork(g)
        h = 1
        if self.H != 1:  # the base's own fast path, where it has one (the same steps and rewards)
            fast = pol.advance(self.H - 1 if self.H else None, total)
            if fast is not None:
                obs, n, total = fast
                h += n
        return self._finish(g, pol, obs, h, total, quiet)

    def _finish(self, g, pol, obs, h: int, total: float, quiet: bool) -> float:
        """The continuation's steps after its first ``h`` (``total``: their rewards, ``obs``: the observation
        where they stop or ``None``): ``pol``'s ``predict`` + ``step`` to the horizon or the episode's end, then the
        terminal value (``D=1``)."""
        term = trunc = False
        step_quiet = getattr(g, "step_quiet", None) if quiet else None
        while self.H == 0 or h < self.H:
            if obs is None:
                obs = g.observe()
            a, _ = pol.predict(obs, deterministic=True)
            if step_quiet is not None:
                r, term, trunc = step_quiet(a)
                obs = None
            else:
                obs, r, term, trunc, _ = g.step(a)
            total += float(r)
            h += 1
            if term or trunc:
                return total
        if self.D:  # terminal value: the jobs in the system run to completion
            total += float(g.drain_return())
        return total

    def _continue_reference(self, g, action, key=None) -> float:
        """:meth:`_continue` through ``step`` alone (every observation built): the reference path (``key`` is
        not read)."""
        obs, r, term, trunc, _ = g.step(action)
        total = float(r)
        if term or trunc:
            return total
        return self._after_first(g, obs, total)

    def act(self, obs):
        # a decision makes and drops thousands of short-lived objects (forks, their arrays and dicts), none of them
        # in a reference cycle: the cyclic garbage collector is paused meanwhile (it ran a few times per decision,
        # scanning every live object each time) and resumed after, as it was
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            return self._act(obs)
        finally:
            if paused:
                gc.enable()

    def _act(self, obs):
        base_action, _ = self.base.predict(obs, deterministic=True)
        self.decisions += 1
        env = self.unwrapped
        lean = {"history": False} if self.lean_forks and _fork_takes_history(env) else {}
        futures = [env.fork(seed=s, future=self.future, **lean) for s in self._seeds()]
        cands = self._candidates(base_action, futures)
        if len(cands) == 1:
            return base_action
        runs = np.zeros((len(cands), len(futures)))  # return of each candidate on each fork
        same, keys = self._effects(cands)
        scored = self._scores_without_fork(keys)
        for i, f in enumerate(futures):
            score = self.base.fork(f).score_after if scored else None
            for c, a in enumerate(cands):
                if same[c] < c:  # the same effect as an earlier candidate: the same continuation
                    runs[c, i] = runs[same[c], i]
                    continue
                v = None if score is None else score(keys[c], self.H, 0.0)
                if v is not None:  # the continuation's return, the future left as it was
                    runs[c, i] = v
                    continue
                g = f if c == len(cands) - 1 else f.fork(seed=0, future="keep")
                runs[c, i] = self._continue(g, a, None if keys is None else keys[c])
        score = runs.mean(axis=1)
        best = int(np.argmax(score))
        if best == 0 or score[best] <= score[0] + 1e-9 * max(1.0, abs(score[0])):
            return base_action
        if self.z > 0 and len(futures) > 1:  # paired advantage over the base's action, in standard errors
            d = runs[best] - runs[0]
            if d.mean() <= self.z * d.std(ddof=1) / np.sqrt(d.size):
                return base_action
        self.changed += 1
        return cands[best]
