"""Baselines of Zhou et al. (HeteroML family) and trivial policies.

Paper: R. Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed Machine Learning Jobs", IEEE
Transactions on Cloud Computing, 2023. Its baselines, all weight-agnostic and using each job's
ideal types (m*, p*) and the PLACE routine (best-fit co-location, else spread):

* ``fifo``: non-preemptive, commit at arrival; N_j = min(D_j, U{1..30}) (seeded per episode); start at the
  earliest slot >= max(a_j, start of the previous job) at which PLACE succeeds for the whole run (head-of-line
  blocking, no backfilling).
* ``drf`` (elastic, slot driver), ``antman``, ``tiresias`` (SRSF), ``tiresias-las`` (2D-LAS): disciplines of the slot
  driver (:mod:`edgegym.families.hetero_ml.disciplines`), no-op actions.
* ``drf-static``: DRF with N fixed at the job's start to its DRF share (1/(active jobs + 1) of the pooled capacity
  in its dominant resource), usable in the env (reservation).
* trivial: ``random`` (uniform over the action mask), ``earliest`` (the grid action with the earliest completion,
  no delay), ``single-worker`` (one worker of the fastest type, co-located with one PS, earliest start).
"""

from __future__ import annotations

import numpy as np
from edgegym.agents.policy import NoOpPolicy, Policy, RandomPolicy
from edgegym.agents.registry import PolicySpec

from edgegym.families.hetero_ml.placement import place
from edgegym.families.hetero_ml.simulator import Placement, duration_slots, iteration_slots

__all__ = ["FIFO", "DRFStatic", "Earliest", "SingleWorker", "POLICY_SPECS"]


def _earliest_place(env, v, j, m, p, n, t0):
    """Earliest t >= t0 (t0 or a reservation end) where PLACE fits n workers for the whole run."""
    c, jobs = v.cluster, v.jobs
    while n > 1 and place(c, c.capacity, m, p, n) is None:  # [R] N shrinks until it fits an empty cluster
        n -= 1
    ends = v.start + v.duration
    W = float(jobs.work[j])
    for t in np.unique(np.concatenate(([t0], ends[ends > t0]))):
        t = int(t)
        for q in (True, False):
            d = duration_slots(W, n, iteration_slots(c, jobs, j, m, p, n, q))
            got = place(c, env.free_over(t, t + d), m, p, n, colocate_only=q, spread_only=not q)
            if got is not None:
                return Placement(t, 0, m, p if c.arch == "ps" else -1, got[0], got[1])
    raise RuntimeError("no placement even on an empty cluster")


class FIFO(Policy):
    """FIFO with head-of-line blocking."""

    def __init__(self, env, seed: int = 0) -> None:
        super().__init__(env)
        self.seed = seed
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed if seed is None else seed)
        self.prev_start = 0

    def act(self, obs):
        v = self.unwrapped.view()
        j = v.step
        if j == 0:
            self.prev_start = 0
        lo, hi = v.fifo_workers
        n = int(min(v.jobs.chunks[j], self.rng.integers(lo, hi + 1)))
        m, p = int(v.ideal_worker_type[j]), int(v.ideal_ps_type[j])
        pl = _earliest_place(self.unwrapped, v, j, m, p, n, max(v.decision_time, self.prev_start))
        self.prev_start = pl.start
        return pl


class DRFStatic(Policy):
    """DRF-static: N fixed at start to the job's DRF share, earliest feasible start (option)."""

    def act(self, obs):
        v = self.unwrapped.view()
        j, c = v.step, v.cluster
        m, p = int(v.ideal_worker_type[j]), int(v.ideal_ps_type[j])
        active = int(np.sum(v.start + v.duration > v.decision_time))
        share = c.capacity.sum(axis=0) / (active + 1)
        e = c.worker_res[m]
        n = int(np.floor(np.min(np.where(e > 0, share / np.where(e > 0, e, 1), np.inf)) + 1e-9))
        n = max(1, min(int(v.jobs.chunks[j]), n))
        return _earliest_place(self.unwrapped, v, j, m, p, n, v.decision_time)


class SingleWorker(Policy):
    """Trivial: one worker of the fastest type (+ 1 PS), earliest start."""

    def act(self, obs):
        v = self.unwrapped.view()
        j = v.step
        m, p = int(v.ideal_worker_type[j]), int(v.ideal_ps_type[j])
        return _earliest_place(self.unwrapped, v, j, m, p, 1, v.decision_time)


class Earliest(Policy):
    """Trivial greedy: the valid grid action (no delay) with the earliest completion (the env's fallback rule).

    Reads the env's vectorised :meth:`~edgegym.families.hetero_ml.env.HeteroMLEnv.grid_estimates` (start and
    duration of every grid action, exactly as ``step`` would commit it) and takes the first action of least
    completion; the env's per-action search (``_earliest_valid``) is the reference it equals (tested decision by
    decision) and runs when no action is placeable now."""

    def act(self, obs):
        env = self.unwrapped
        k = env._k
        mask = env.action_masks()
        start, dur = env.grid_estimates()
        delays = np.asarray(env.preset.env.delays)
        di = np.unravel_index(np.arange(env.n_grid), env.grid_shape)[3]  # the delay is the grid's last axis
        ok = mask & (start >= 0) & (delays[di] == delays[0])
        if not ok.any():
            return env._earliest_valid(k, env._decision_time(k), mask)
        return int(np.argmin(np.where(ok, start + dur, np.iinfo(np.int64).max)))

    def advance(self, steps: int | None, total: float):
        """The env's compiled loop of this rule (``HeteroMLEnv.advance_earliest``): the same actions, state and
        rewards as :meth:`act` + ``step``, without the observations of the steps in between (tested step by step);
        a step it cannot take on its compiled path is taken with :meth:`act`'s action. The observation where it
        stops is not built either: ``(None, steps taken, total)``, as ``Policy.advance`` allows where the env builds
        it on demand (``env.observe()``). ``None`` on a wrapped env (a wrapper may change what a step returns) or
        one that decides in its slot driver."""
        env = self.unwrapped
        if self.env is not env or getattr(env, "slot_driven", True) or not hasattr(env, "advance_earliest"):
            return None
        return env.advance_earliest(steps, decide=lambda: self.act(None), total=total, observe=False)

    def fork(self, env) -> Earliest:
        """This policy bound to ``env``: it keeps no state besides its env, so a new one is the copy
        (:meth:`Policy.fork <edgegym.agents.policy.Policy.fork>` where a subclass or an attribute says otherwise)."""
        if type(self) is not Earliest or vars(self).keys() != {"env", "unwrapped"}:
            return super().fork(env)
        return Earliest(env)


_FAM = ("HeteroML",)
POLICY_SPECS = (
    PolicySpec("fifo", lambda env, seed: FIFO(env, seed), _FAM, "FIFO, N ~ U{1..30}, head-of-line blocking"),
    PolicySpec("drf", lambda env, seed: NoOpPolicy(env), _FAM, "DRF, elastic, slot driver",
               {"env": {"discipline": "drf"}}),
    PolicySpec("drf-static", lambda env, seed: DRFStatic(env), _FAM, "DRF-static: N = DRF share at start"),
    PolicySpec("antman", lambda env, seed: NoOpPolicy(env), _FAM, "AntMan: RG/opportunistic classes, slot driver",
               {"env": {"discipline": "antman"}}),
    PolicySpec("tiresias", lambda env, seed: NoOpPolicy(env), _FAM, "Tiresias SRSF, gang, preemptive, slot driver",
               {"env": {"discipline": "tiresias"}}),
    PolicySpec("tiresias-las", lambda env, seed: NoOpPolicy(env), _FAM, "Tiresias 2D-LAS option, slot driver",
               {"env": {"discipline": "tiresias_las"}}),
    PolicySpec("random", lambda env, seed: RandomPolicy(env, seed), _FAM, "uniformly random legal grid action"),
    PolicySpec("earliest", lambda env, seed: Earliest(env), _FAM, "grid action with the earliest completion"),
    PolicySpec("single-worker", lambda env, seed: SingleWorker(env), _FAM, "one worker of the fastest type, co-located"),
)
