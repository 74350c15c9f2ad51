"""``HeteroMLEnv.fork``: the family's part of forking an env mid-episode (see :mod:`edgegym.core.forking`)."""

from __future__ import annotations

import numpy as np

from ...core.forking import cached_draw, fork_env, splice_jobs
from .simulator import Ledger

__all__ = ["FORK_SHARED", "ForkLedger", "copy_ledger", "fork", "resample_future"]

#: attributes shared (not copied) between an env and its forks: fixed for the episode, never written in place
#: (``_mask_cache`` maps a configuration to whether it fits the empty cluster: a cache of the cluster alone;
#: ``_jsc`` is a cache of the jobs table it names, replaced, never changed, when a fork's jobs change, with a dict of
#: tables derived from it, filled on demand; ``_kc``, ``_zf``, ``_fracs``, ``_delays`` and the empty ``_no_*`` arrays
#: are the kernels' read-only inputs, set at reset; ``_mask_step``, ``_cfg_step``, ``_est_step`` and ``_prof_step``
#: are the pending job's cached mask, configurations, estimates and usage profiles, tuples of arrays never written
#: once cached (a new state gets new tuples))
FORK_SHARED = ("_fork_draws",
               "preset", "features", "observation_space", "action_space", "metadata", "spec", "_inst", "cluster",
               "jobs", "ideal", "_mask_cache", "_jsc", "sim.cluster", "sim.jobs",
               "_kc", "_zf", "_fracs", "_delays", "_no_rows", "_no_mask", "_no_prof",
               "_mask_step", "_cfg_step", "_est_step", "_prof_step")


def fork(env, seed: int = 0, future: str = "resample"):
    """See :meth:`HeteroMLEnv.fork <edgegym.families.hetero_ml.env.HeteroMLEnv.fork>`."""
    return fork_env(env, seed=seed, future=future, shared=FORK_SHARED, resample=resample_future,
                    copies={"sim.ledger": copy_ledger})


def copy_ledger(ledger, env=None):
    """The fork's copy of the simulator's :class:`~edgegym.families.hetero_ml.simulator.Ledger`, equal to a deep copy
    (the same dense usage on every read) without copying what never changes:

    * the pending commits (tuples of the servers and footprint rows of a commit, never written after the commit)
      are shared, in a list of the fork's own;
    * while the dense array has never been written (``_zeros_while``, set by the env at reset, is still the pending
      list: a flush replaces it), it holds zeros only and every commit is still pending, so the fork's ledger (a
      :class:`ForkLedger`) reads a shared read-only zero array of the same shape (no copy of a few MB), replaced by
      its own on its first write, with the same mark; otherwise the dense array is copied."""
    from ...core.forking import fast_copy

    d = ledger.__dict__
    pending = d.get("_pending")
    usage = d.get("_usage")
    if type(ledger) not in (Ledger, ForkLedger) or type(pending) is not list or not isinstance(usage, np.ndarray):
        return fast_copy(ledger)
    new = ForkLedger.__new__(ForkLedger)
    new.__dict__.update(d)
    new._pending = list(pending)
    if d.get("_zeros_while") is pending:
        new._usage = _zeros(usage.shape, usage.dtype)
        new._zeros_while = new._pending
    else:
        new._usage = usage.copy() if usage.flags.writeable else usage
        new._zeros_while = None
    return new


_ZEROS: dict = {}


def _zeros(shape, dtype) -> np.ndarray:
    """A read-only zero array of ``shape`` shared by the forks' ledgers (one per shape and dtype)."""
    key = (tuple(shape), np.dtype(dtype).str)
    z = _ZEROS.get(key)
    if z is None:
        if len(_ZEROS) >= 8:
            _ZEROS.clear()
        z = _ZEROS[key] = np.zeros(shape, dtype=dtype)
        z.setflags(write=False)
    return z


class ForkLedger(Ledger):
    """A fork's :class:`~edgegym.families.hetero_ml.simulator.Ledger` (see :func:`copy_ledger`): the same ledger,
    whose dense array may start as a shared read-only zero array; its first write (a flush of the pending commits)
    gives it its own."""

    def _flush(self) -> None:
        if not self._usage.flags.writeable:  # shared: its own copy first
            self._usage = self._usage.copy()
        super()._flush()


def resample_future(env, rng: np.random.Generator) -> None:
    """Replace the jobs arriving after the pending one by a fresh draw of the preset's workload model."""
    import dataclasses

    from .instance import build_instance

    k, J = env._k, env.jobs.num_jobs
    if k + 1 >= J:
        return
    new = cached_draw(env, (env.fork_seed, "instance"), rng, lambda g: build_instance(env.preset, g))
    a_k, T = int(env.jobs.arrival[k]), int(env.preset.workload.horizon_slots)
    # the preset's arrivals are J uniform slots of [1, T], sorted: given the pending job's, the later ones are
    # uniform on [a_k, T]
    later = np.sort(rng.integers(a_k, max(a_k, T) + 1, size=J - k - 1))
    arrival = np.concatenate([np.asarray(env.jobs.arrival[: k + 1]), later]).astype(np.asarray(env.jobs.arrival).dtype)
    # no revalidation: rows of two valid tables, and arrivals that stay sorted and >= 1 (the same arrays, read-only)
    jobs = splice_jobs(env.jobs, new.jobs, k + 1, arrival=arrival, revalidate=False)
    ideal = splice_jobs(env.ideal, new.ideal, k + 1, rows=J)
    env._inst = dataclasses.replace(env._inst, jobs=jobs, ideal=ideal)
    env.jobs, env.ideal = jobs, ideal
    env.sim.jobs = jobs
    if hasattr(env, "_job_scalars"):  # the per-job cache of the new table, now: shared by this fork's own forks
        env._jsc = None
        env._job_scalars(k)
    if getattr(env, "_slot", None) is not None:  # a slot-driven baseline: its schedule was computed at reset
        from .disciplines import run_slot_driver

        env._slot = run_slot_driver(env.cluster, jobs, ideal, env.preset.env, env.preset.env.discipline)
