"""``EdgeUtilityEnv.fork``: the family's part of forking an env mid-episode (see :mod:`edgegym.core.forking`)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...core.forking import cached_draw, fork_env, shifted_arrivals, splice_jobs

__all__ = ["FORK_SHARED", "fork", "resample_future"]

#: attributes shared (not copied) between an env and its forks: fixed for the episode, never written in place
FORK_SHARED = ("_fork_draws", "_trace_cache",
               "preset", "features", "observation_space", "action_space", "metadata", "spec", "_instance", "jobs",
               "server_type", "sim.jobs", "sim._scale_p", "sim._scale_up", "sim._scale_down")


def fork(env, seed: int = 0, future: str = "resample"):
    """See :meth:`EdgeUtilityEnv.fork <edgegym.families.edge_utility.env.EdgeUtilityEnv.fork>`."""
    return fork_env(env, seed=seed, future=future, shared=FORK_SHARED, resample=resample_future)


#: per-server arrays of the server banks (never per-job rows, even when a preset has as many servers as jobs)
_PER_SERVER = frozenset({"si", "sf", "slots", "member", "ks", "nk", "lu", "lptr", "ls", "le", "used"})


def resample_future(env, rng: np.random.Generator) -> None:
    """Replace the jobs released after the pending one by a fresh draw of the preset's workload model."""
    from .simulator import UtilitySimulator

    k, J = env._k, env.jobs.num_jobs
    if k + 1 >= J:
        return
    p = env.preset
    w = p.workload
    if w.source == "google2011" and w.window != "random":  # a fixed window: draw from the same trace at random
        env.preset = dataclasses.replace(p, workload=dataclasses.replace(w, window="random"))
    source = getattr(env, "_workload_source", None)
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the trace-absent notice was given at reset
            new = cached_draw(env, (env.fork_seed, "jobs"), rng, env._draw_jobs)
    finally:
        env.preset = p
        env._workload_source = source
    jobs = splice_jobs(env.jobs, new, k + 1, release_s=shifted_arrivals(env.jobs.release_s, new.release_s, k + 1))
    sim = env.sim
    sc, est = p.scheduler, p.estimation
    from .disciplines import O4AParams

    fresh = UtilitySimulator(
        jobs, env.num_edge_servers, env.has_cloud, discipline=sc.discipline,
        cloud="infinite" if sc.cloud == "infinite" else sc.discipline, speed=p.servers.speed,
        o4a=O4AParams(sc.eps, sc.alpha, sc.beta, sc.tentative_mode, sc.fallback),
        plan_scale=1.0 + est.delta if est.conservative else 1.0, record=env.record,
    )
    sim.jobs = jobs
    sim._scale_p, sim._scale_up, sim._scale_down = fresh._scale_p, fresh._scale_up, fresh._scale_down
    utab = _find_utab(fresh)
    soft = next((s.soft_deadlines for s in fresh.servers if getattr(s, "soft_deadlines", None)), None)
    # the per-job tables held by the servers and the server banks: the utility table and the EDF keys are replaced,
    # the banks' per-job rows (release time, keys, ...) of the redrawn jobs are taken from the fresh simulator
    objs = [(m, t) for m, t in zip(sim.servers, fresh.servers, strict=True)]
    objs += [(v, getattr(fresh, name)) for name, v in vars(sim).items()
             if type(v).__module__.startswith("edgegym") and hasattr(fresh, name) and name != "servers"]
    for mine, theirs in objs:
        if mine is None or theirs is None:
            continue
        if utab is not None and getattr(mine, "utab", None) is not None:
            mine.utab = utab
        if soft is not None and getattr(mine, "soft_deadlines", None) is not None:
            mine.soft_deadlines = soft
        for name, v in (vars(mine).items() if hasattr(mine, "__dict__") else ()):
            t = getattr(theirs, name, None)
            if isinstance(v, np.ndarray) and isinstance(t, np.ndarray) and v.shape == t.shape and v.ndim \
                    and v.shape[0] in (J, max(J, 1)) and v.flags.writeable and name != "utab" \
                    and name not in _PER_SERVER:
                v[k + 1:] = t[k + 1:]
    env.jobs = jobs
    if getattr(env, "_job_features", None) is not None:
        env._job_features = None  # job-only observation features: rebuilt for the new jobs on first use


def _find_utab(sim):
    """The utility table of a fresh simulator (held by its servers or banks), or None."""
    for v in [*sim.servers, *vars(sim).values()]:
        u = getattr(v, "utab", None)
        if isinstance(u, tuple):
            return u
    return None
