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
#: once cached (a new state gets new tuples); ``_entry`` names the simulator and jobs table its compiled entry points
#: were looked up for, so a fork, which has its own simulator, looks its own up)
FORK_SHARED = ("_fork_draws",
               "preset", "features", "observation_space", "action_space", "metadata", "spec", "_inst", "cluster",
               "jobs", "ideal", "_mask_cache", "_jsc", "sim.cluster", "sim.jobs",
               "_kc", "_zf", "_fracs", "_delays", "_no_rows", "_no_mask", "_no_prof",
               "_mask_step", "_cfg_step", "_est_step", "_prof_step", "_entry",
               "_reset_fixed", "_scratch_of")  # (the preset's fixed arrays a reset hands out again: never written)


#: caches and scratch buffers a fork shares with its env in :func:`quick_fork` (copied by :func:`fork_env`): each is
#: checked against the state it describes before use (``_est_free``/``_est_caps``: a server's residual row and its
#: worker capacities; ``_look_cache``: a server's free row and what it hosts), a function of the cluster alone
#: (``_feas``, ``_vcache``), or scratch consumed within one call (``_rows_buf``, ``_ratio_buf``, ``_bins_buf``):
#: sharing them changes no result (forks are not stepped in parallel threads)
QUICK_SHARED = ("_est_free", "_est_caps", "_look_cache", "_feas", "_vcache", "_rows_buf", "_ratio_buf", "_bins_buf")
#: what a step changes, copied by :func:`quick_fork`: the simulator (its arrays and ledger), the kernels' per-job server
#: lists, the rewards and the env's generator
QUICK_COPIED = ("sim", "_jptr", "_jsrv", "_rewards", "_np_random")
#: the simulator's arrays (one row per job)
_SIM_ARRAYS = ("start", "duration", "worker_type", "ps_type", "workers", "ps", "colocated")
_IMMUTABLE = (int, float, bool, str, type(None), np.generic)
_MARKS = ("clairvoyant", "resampled", "fork_seed")


def fork(env, seed: int = 0, future: str = "resample"):
    """See :meth:`HeteroMLEnv.fork <edgegym.families.hetero_ml.env.HeteroMLEnv.fork>`: :func:`quick_fork` where it
    applies, else :func:`~edgegym.core.forking.fork_env` (the generic copy)."""
    if quick_forkable(env):
        return quick_fork(env, seed=seed, future=future)
    return fork_env(env, seed=seed, future=future, shared=FORK_SHARED, resample=resample_future,
                    copies={"sim.ledger": copy_ledger})


_ENV_MODULE = __name__.rsplit(".", 1)[0] + ".env"


def quick_forkable(env) -> bool:
    """Whether :func:`quick_fork` knows every attribute of ``env``: a reset ``HeteroMLEnv`` itself (not a subclass)
    with the reservation discipline, whose attributes are the shared ones (:data:`FORK_SHARED`,
    :data:`QUICK_SHARED`), the copied ones (:data:`QUICK_COPIED`), immutable values, the fork marks, or the v1
    ``obs_layout`` method."""
    from .simulator import ReservationSim

    cls = type(env)  # HeteroMLEnv itself, named rather than imported (env.py imports this module)
    if cls.__name__ != "HeteroMLEnv" or cls.__module__ != _ENV_MODULE or env.slot_driven or getattr(env, "_inst", None) is None:
        return False
    if type(env.sim) is not ReservationSim or set(vars(env.sim)) != {"cluster", "jobs", "ledger", *_SIM_ARRAYS}:
        return False
    known = _known_names()
    for name, v in vars(env).items():
        if name in known or name in _MARKS or isinstance(v, _IMMUTABLE):
            continue
        if name == "grid_shape" and type(v) is tuple and all(type(x) is int for x in v):
            continue
        if name == "obs_layout" and getattr(v, "__self__", None) is env:
            continue
        return False
    return True


_KNOWN: set = set()


def _known_names() -> set:
    if not _KNOWN:
        _KNOWN.update(n for n in FORK_SHARED if "." not in n)
        _KNOWN.update(QUICK_SHARED, QUICK_COPIED, ("_slot",))
    return _KNOWN


def quick_fork(env, seed: int = 0, future: str = "resample"):
    """The fork of ``env`` as :func:`~edgegym.core.forking.fork_env` makes it (the same state: every simulator
    array, the ledger, the rewards, the generator's stream, the step index, the marks; the same resampled future),
    built directly: the env's attributes are shared, except the simulator's arrays, the kernels' per-job server
    lists (the listed part), the rewards and the generator, which are copied, and the ledger
    (:func:`copy_ledger`). Only for an env :func:`quick_forkable` accepts; tested against ``fork_env``'s copy."""
    from ...core.forking import check_fork_args, fork_rng, mark_fork, retain_freed_memory

    check_fork_args(env, seed, future)
    retain_freed_memory()
    d = env.__dict__
    if "_fork_draws" not in d:
        env._fork_draws = {}
    cls = type(env)
    new = cls.__new__(cls)
    nd = new.__dict__
    nd.update(d)
    s = env.sim
    sim = type(s).__new__(type(s))
    sim.__dict__.update(s.__dict__)
    for name in _SIM_ARRAYS:
        setattr(sim, name, getattr(s, name).copy())
    sim.ledger = copy_ledger(s.ledger)
    nd["sim"] = sim
    jptr, jsrv = d["_jptr"], d["_jsrv"]
    nd["_jptr"] = jptr.copy()
    listed = int(jptr[int(jptr[-1])])  # the entries of the jobs listed so far (the rest is never read before written)
    new_jsrv = np.empty_like(jsrv)
    new_jsrv[:listed] = jsrv[:listed]
    nd["_jsrv"] = new_jsrv
    nd["_rewards"] = list(d["_rewards"])
    g = d.get("_np_random")
    if g is not None:
        bg = g.bit_generator
        ng = np.random.Generator(type(bg)())
        ng.bit_generator.state = bg.state
        nd["_np_random"] = ng
    if "obs_layout" in d:
        nd["obs_layout"] = new._obs_layout
    mark_fork(env, new, seed, future)
    if future == "resample":
        resample_future(new, fork_rng(seed))
    return new


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
