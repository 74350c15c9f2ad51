"""``HeteroMLEnv.fork``: the family's part of forking an env mid-episode (see :mod:`edgegym.core.forking`)."""

from __future__ import annotations

import numpy as np

from ...core.forking import cached_draw, fork_env, splice_jobs

__all__ = ["FORK_SHARED", "fork", "resample_future"]

#: attributes shared (not copied) between an env and its forks: fixed for the episode, never written in place
#: (``_mask_cache`` maps a configuration to whether it fits the empty cluster: a cache of the cluster alone;
#: ``_jsc`` is an immutable cache of the jobs table it names, replaced, never changed, when a fork's jobs change)
FORK_SHARED = ("_fork_draws",
               "preset", "features", "observation_space", "action_space", "metadata", "spec", "_inst", "cluster",
               "jobs", "ideal", "_mask_cache", "_jsc", "sim.cluster", "sim.jobs")


def fork(env, seed: int = 0, future: str = "resample"):
    """See :meth:`HeteroMLEnv.fork <edgegym.families.hetero_ml.env.HeteroMLEnv.fork>`."""
    return fork_env(env, seed=seed, future=future, shared=FORK_SHARED, resample=resample_future)


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
    jobs = splice_jobs(env.jobs, new.jobs, k + 1, arrival=arrival)
    ideal = splice_jobs(env.ideal, new.ideal, k + 1, rows=J)
    env._inst = dataclasses.replace(env._inst, jobs=jobs, ideal=ideal)
    env.jobs, env.ideal = jobs, ideal
    env.sim.jobs = jobs
    if getattr(env, "_slot", None) is not None:  # a slot-driven baseline: its schedule was computed at reset
        from .disciplines import run_slot_driver

        env._slot = run_slot_driver(env.cluster, jobs, ideal, env.preset.env, env.preset.env.discipline)
