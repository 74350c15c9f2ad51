"""``WirelessUDLEnv.fork``: the family's part of forking an env mid-episode (see :mod:`edgegym.core.forking`)."""

from __future__ import annotations

import numpy as np

from ...core.forking import cached_draw, fork_env, splice_jobs

__all__ = ["FORK_SHARED", "JOB_FIELDS", "fork", "resample_future"]

#: attributes shared (not copied) between an env and its forks: fixed for the episode, never written in place
FORK_SHARED = ("_fork_draws", "_fast", "_fast_jobs",
               "preset", "features", "observation_space", "action_space", "metadata", "spec", "fixed_instance",
               "inst", "_blocks", "_norm", "_low64", "_high64", "_obs_site", "_obs_job", "_head_rel", "sim.inst",
               "sim.static")
#: the per-job fields of an :class:`~.instance.Instance` (the others describe the sites)
JOB_FIELDS = ("arrival", "kappa", "chunk_mb", "param_mb", "m", "n", "data", "kind", "tau", "b", "tau1", "tau2", "c")


def _copy_calendar(cal: np.ndarray, env) -> np.ndarray:
    """The fork's calendar: a buffer of the same shape with the slots the parent has written copied
    (``Simulator._cal_fill``; the others are written by the fork itself when it needs them, as the parent's)."""
    out = np.empty_like(cal)
    n = env.sim._cal_fill
    out[:n] = cal[:n]
    return out


def fork(env, seed: int = 0, future: str = "resample"):
    """See :meth:`WirelessUDLEnv.fork <edgegym.families.wireless_udl.env.WirelessUDLEnv.fork>`."""
    return fork_env(env, seed=seed, future=future, shared=FORK_SHARED, resample=resample_future,
                    copies=_COPIES)


#: attributes copied by a function of their own (:func:`~edgegym.core.forking.fork_env`'s ``copies``)
_COPIES = {"sim._cal": _copy_calendar}


def resample_future(env, rng: np.random.Generator) -> None:
    """Replace the jobs arriving after the pending one by a fresh draw of the preset's workload model."""
    from .instance import build_instance
    from .simulator import make_static

    k, J = env._k, env.inst.num_jobs
    if k + 1 >= J:
        return
    p = env.preset
    new = cached_draw(env, (env.fork_seed, "instance"), rng, lambda g: build_instance(p, g))
    lo, hi = (int(x) for x in p.jobs.arrival_window)
    a_k = int(env.inst.arrival[k])
    # the preset's arrivals are uniform slots of the arrival window, sorted: given the pending job's, the later
    # ones are uniform on [a_k, end of the window]
    later = np.sort(rng.integers(max(a_k, lo), max(a_k, hi) + 1, size=J - k - 1))
    arrival = np.concatenate([env.inst.arrival[: k + 1], later]).astype(np.int64)
    inst = splice_jobs(env.inst, new, k + 1, fields=JOB_FIELDS, arrival=arrival)
    sim = env.sim
    sim.inst = inst
    sim.static = make_static(inst, p.okita.beta, p.okita.q_norm, p.okita.pa_tie == "le")
    sim.M[k + 1:] = inst.data[k + 1:]  # the redrawn jobs' untrained chunks
    env.inst = inst
    if hasattr(env, "_observation_constants"):  # per-episode observation blocks of every job
        env._obs_site, env._obs_job = env._observation_constants()
