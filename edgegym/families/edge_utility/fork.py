"""``EdgeUtilityEnv.fork``: the family's part of forking an env mid-episode (see :mod:`edgegym.core.forking`)."""

from __future__ import annotations

import copy
import dataclasses
import sys

import numpy as np

from ...core.forking import (
    _ATOMIC_TYPES,
    cached_draw,
    check_fork_args,
    fast_copy,
    fork_env,
    retain_freed_memory,
    shifted_arrivals,
    splice_jobs,
)

__all__ = ["DIRECT_FORK", "FAST_RESAMPLE", "FORK_SHARED", "REUSE_SPLICE", "fork", "resample_future"]

#: resample a simulator whose servers are all in the priority bank (or an infinite cloud) by splicing its per-job
#: rows and the utility table directly, from per-draw tables kept with the draw, instead of building a fresh simulator
#: for the spliced jobs and copying its rows (False: the fresh simulator, the test oracle; identical state)
FAST_RESAMPLE = True

#: a resampled fork's spliced job table reuses the arrays of the last splice of the same draw once no fork holds them
#: any more, writing only the rows between the two splice points (:func:`_splice`; False: a new copy of every array by
#: :func:`~edgegym.core.forking.splice_jobs`, the test oracle; the same values)
REUSE_SPLICE = True
#: the job table's (jobs, servers) arrays that :func:`_splice` keeps and writes over
_SPLICE_KEPT = ("p_s", "up_s", "down_s", "p_est_s", "up_est_s", "down_est_s")
#: ``sys.getrefcount`` of a kept splice array that only the cache holds, as :func:`_splice` counts it (the cache's
#: dict, the loop variable and the call's argument)
_UNHELD = 3

#: attributes shared (not copied) between an env and its forks: fixed for the episode, never written in place
FORK_SHARED = ("_fork_draws", "_trace_cache",
               "preset", "features", "observation_space", "action_space", "metadata", "spec", "_instance", "jobs",
               "server_type", "sim.jobs", "sim._scale_p", "sim._scale_up", "sim._scale_down", "sim._bank.utab")


#: fork an env whose simulator is the priority bank alone (every server in it, no pending commit, no record) by
#: copying its attributes directly (:func:`_direct_fork`: the per-job and per-server state arrays copied, the rest
#: shared or rebuilt) instead of :func:`~edgegym.core.forking.fork_env`'s generic walk of the object graph (False:
#: the generic copy, the test oracle; the same state: ``tests/speed/test_fork_edge_utility.py``)
DIRECT_FORK = True

#: env attributes a direct fork copies: per-job arrays written by the steps
_ENV_ARRAYS = frozenset({"_rejected", "_decisions", "_planned"})
#: the per-step caches of the pending job's estimates (arrays that may alias each other, and the tuple
#: ``_util_sim = (_est_sim, utilities)`` whose first item is compared by identity): copied with one memo
_ENV_ALIASED = frozenset({"_est_sim", "_est", "_est_all", "_util_sim", "_inc"})
#: simulator arrays a direct fork copies (written by the steps); its other arrays are the planned job tables
_SIM_ARRAYS = frozenset({"utility", "jrt_s", "server_of", "completed"})
#: simulator lists of immutable items (heap entries, versions, pending commits, completions): shallow copies
_SIM_LISTS = frozenset({"_heap", "_version", "_pending", "_orphans"})
#: simulator attributes a direct fork shares: the planned job tables (replaced, never written in place, by a resampled
#: future) and the last request's rows (a cache of immutable job values)
_SIM_SHARED = frozenset({"jobs", "_scale_p", "_scale_up", "_scale_down", "_req_rows"})
#: bank arrays written by its kernels (the rest, ``ks``, ``member`` and the utility table, is read only)
_BANK_ARRAYS = ("slots", "si", "sf", "jf", "oj", "oc", "os")


def fork(env, seed: int = 0, future: str = "resample"):
    """See :meth:`EdgeUtilityEnv.fork <edgegym.families.edge_utility.env.EdgeUtilityEnv.fork>`."""
    if DIRECT_FORK and _direct_ok(env):
        check_fork_args(env, seed, future)
        retain_freed_memory()
        if "_fork_draws" not in env.__dict__:
            env._fork_draws = {}
        new = _direct_fork(env)
        # the flags as fork_env sets them
        new.clairvoyant = bool(getattr(env, "clairvoyant", False)) or (
            future == "keep" and not getattr(env, "resampled", False))
        new.resampled = bool(getattr(env, "resampled", False)) or future == "resample"
        new.fork_seed = int(seed)
        if future == "resample":
            from ...core.forking import fork_rng

            resample_future(new, fork_rng(seed))
        return new
    return fork_env(env, seed=seed, future=future, shared=FORK_SHARED, resample=resample_future,
                    copies=_bank_copies(env))


def _direct_ok(env) -> bool:
    """Whether :func:`_direct_fork` covers ``env``'s simulator: the priority bank holds every server, nothing else."""
    from .simulator import _BankServer

    sim = getattr(env, "sim", None)
    bank = getattr(sim, "_bank", None)
    return bank is not None and bank.all_members and sim._o4bank is None and sim._o4a_lv is None \
        and not sim._pending and not sim.plans and all(type(s) is _BankServer for s in sim.servers)


def _direct_fork(env):
    """A copy of ``env`` in the same state (see :data:`DIRECT_FORK`): the attributes it knows are copied or shared
    by name, any other one by :func:`~edgegym.core.forking.fast_copy` (one memo for all of them)."""
    from .simulator import _BankServer, _Plans

    memo: dict = {}
    for name in FORK_SHARED:
        if "." not in name and name in env.__dict__:
            v = env.__dict__[name]
            memo[id(v)] = v
    new = object.__new__(type(env))
    d = new.__dict__
    for name, v in env.__dict__.items():
        if type(v) in _ATOMIC_TYPES or id(v) in memo:
            d[name] = v
        elif name == "_np_random":  # shared until either env uses it (EdgeUtilityEnv.np_random copies it then)
            d[name] = v
            d["_rng_shared"] = env._rng_shared = True
        elif name in _ENV_ARRAYS:
            d[name] = v.copy()
        elif name != "sim":
            d[name] = fast_copy(v, memo)  # the aliased estimate caches, the generator, the pending completions
    sim = env.sim
    bank = sim._bank
    nb = object.__new__(type(bank))
    nb.__dict__.update(bank.__dict__)
    for name in _BANK_ARRAYS:
        setattr(nb, name, getattr(bank, name).copy())
    nb.state = tuple(getattr(nb, name) for name in _BANK_ARRAYS)
    ns = object.__new__(type(sim))
    sd = ns.__dict__
    for name, v in sim.__dict__.items():
        if name in _SIM_ARRAYS:
            sd[name] = v.copy()
        elif name in _SIM_LISTS:
            sd[name] = list(v)
        elif name == "_bank":
            sd[name] = nb
        elif name == "servers":
            sd[name] = [_BankServer(nb, s._k, s.name, s.speed) for s in v]
        elif name == "plans":
            sd[name] = _Plans()  # empty: only O4A servers record plans
        elif type(v) in _ATOMIC_TYPES or name in _SIM_SHARED:
            sd[name] = v
        else:
            sd[name] = fast_copy(v, memo)
    d["sim"] = ns
    return new


def _bank_copies(env) -> dict | None:
    """``fork_env``'s ``copies`` for a simulator whose servers are all in the priority bank: the bank copied on its
    own (its utility table shared) and the server list rebuilt as views of the copy, instead of a generic copy of
    each of the servers' views (the same state, a fraction of the calls)."""
    from .simulator import _BankServer

    sim = getattr(env, "sim", None)
    bank = getattr(sim, "_bank", None)
    if bank is None or not bank.all_members or any(type(s) is not _BankServer for s in sim.servers):
        return None
    made = []

    def copy_bank(b, _env):
        made.append(fast_copy(b, {id(b.utab): b.utab}))
        return made[0]

    def copy_servers(servers, _env):
        return [_BankServer(made[0], s._k, s.name, s.speed) for s in servers]

    return {"sim._bank": copy_bank, "sim.servers": copy_servers}


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
    # rows of two valid tables are valid, the shifted arrivals non-decreasing: no need to re-run the table's checks
    release = shifted_arrivals(env.jobs.release_s, new.release_s, k + 1)
    jobs = _splice(env, new, k + 1, release) if REUSE_SPLICE else \
        splice_jobs(env.jobs, new, k + 1, revalidate=False, release_s=release)
    sim = env.sim
    if FAST_RESAMPLE and _splice_bank(env, sim, new, jobs, k):
        return
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
    _new_job_features(env, new, k)


def _splice(env, new, start: int, release: np.ndarray):
    """``splice_jobs(env.jobs, new, start, revalidate=False, release_s=release)``, with the spliced per-job arrays
    kept with the draw (``env._fork_draws``) and written over in place by the next splice of the same two tables
    once nothing else holds them (the forks of the last one dropped, as a rollout drops its forks after each decision):
    only the rows between the two splice points change, instead of a copy of every table (see
    :data:`REUSE_SPLICE`)."""
    old = env.jobs
    J = old.num_jobs
    cache = env.__dict__.get("_fork_draws")
    key = (env.fork_seed, "jobs", "splice")
    hit = cache.get(key) if cache is not None else None
    if hit is not None and hit[0] is old and hit[1] is new and all(
            sys.getrefcount(b) <= _UNHELD for b in hit[3].values()):
        prev, bufs = hit[2], hit[3]
        for name, buf in bufs.items():
            buf.setflags(write=True)
            if start > prev:
                buf[prev:start] = getattr(old, name)[prev:start]
            elif start < prev:
                buf[start:prev] = getattr(new, name)[start:prev]
            buf.setflags(write=False)
    else:
        bufs = {name: _spliced(getattr(old, name), getattr(new, name), start) for name in _SPLICE_KEPT}
    if cache is not None:
        cache[key] = (old, new, start, bufs)
    out = copy.copy(old)
    release.setflags(write=False)
    object.__setattr__(out, "release_s", release)
    object.__setattr__(out, "utilities", old.utilities[:start] + new.utilities[start:])
    if old.model.shape[0] == J:  # the small per-job columns: spliced anew
        object.__setattr__(out, "model", _spliced(old.model, new.model, start))
    for name, buf in bufs.items():
        object.__setattr__(out, name, buf)
    return out


def _spliced(a: np.ndarray, b: np.ndarray, start: int) -> np.ndarray:
    """Rows ``..start-1`` of ``a`` and ``start..`` of ``b`` in a new read-only array of ``a``'s dtype."""
    out = np.concatenate([a[:start], np.asarray(b[start:], dtype=a.dtype)])
    out.setflags(write=False)
    return out


def _splice_bank(env, sim, new, jobs, k: int) -> bool:
    """:func:`resample_future`'s fresh-simulator splice, done directly, for a simulator whose servers are all in the
    priority bank or the infinite cloud (no per-job tables elsewhere): the same planned arrays (the spliced jobs'
    estimates times ``plan_scale``), utility table (rows ``..k`` of the fork's, ``k+1..`` of the draw's, as
    :func:`~._kernels.utility_table` of the spliced utilities lays them out) and bank rows (rows ``k+1..`` as a fresh
    bank's: release time, EDF key ``r + soft deadline``, zeros). Returns False (nothing done) for other simulators."""
    from .simulator import _BankServer

    bank = sim._bank
    if bank is None or sim._o4bank is not None or sim._o4a_lv is not None or env.record \
            or any(type(s) is not _BankServer and s.name != "infinite" for s in sim.servers):
        return False
    ps = sim.plan_scale
    cache = env.__dict__.get("_fork_draws")
    key = (env.fork_seed, "jobs", "tables")
    hit = cache.get(key) if cache is not None else None
    if hit is None or hit[0] is not new:  # the draw's utility table and soft deadlines, once per draw
        from ._kernels import utility_table

        hit = (new, utility_table(new.utilities), np.array([u.soft_deadline(0.5) for u in new.utilities]))
        if cache is not None:
            cache[key] = hit
    _, unew, soft = hit
    sim.jobs = jobs
    if ps == 1.0:  # x * 1.0 == x for every finite float: the job table's own (read-only) arrays, no product
        sim._scale_p, sim._scale_up, sim._scale_down = jobs.p_est_s, jobs.up_est_s, jobs.down_est_s
    else:
        sim._scale_p, sim._scale_up, sim._scale_down = jobs.p_est_s * ps, jobs.up_est_s * ps, jobs.down_est_s * ps
    bank.utab = _splice_utab(bank.utab, unew, k + 1)
    jf = bank.jf
    rel = jobs.release_s[k + 1:]
    jf[k + 1:] = 0.0
    jf[k + 1:, 0] = rel
    jf[k + 1:, 8] = rel + soft[k + 1:]
    for buf in (bank.oj, bank.oc, bank.os):
        buf[k + 1:] = 0
    env.jobs = jobs
    _new_job_features(env, new, k)
    return True


def _new_job_features(env, draw, k: int) -> None:
    """A new (empty) table of the job-only observation features for the fork's new jobs, made now rather than on the
    first observation, so that the forks of this fork share it (a table is shared by deep copies) and fill each
    block once instead of once per fork; the rows of the jobs after ``k`` are copied from the rows of ``draw``, the
    redrawn table, which every fork that splices it shares."""
    table = getattr(env, "_job_features", None)
    if table is not None:  # the env's own table class (env.py's _JobFeatures), without importing env from here
        env._job_features = type(table).spliced(env, draw, k + 1, env.__dict__.get("_fork_draws"),
                                                (env.fork_seed, "jobs", "features"))


def _splice_utab(old: tuple, new: tuple, start: int) -> tuple:
    """The utility table (:func:`~._kernels.utility_table`) of jobs ``..start-1`` of ``old``'s and ``start..`` of
    ``new``'s: the per-job columns spliced, the step functions' breaks and values re-offset."""
    code, a, b, c, inc = (np.concatenate([o[:start], n[start:]]) for o, n in zip(old[:5], new[:5], strict=True))
    ob, nb = old[5], new[5]
    bptr = np.concatenate([ob[: start + 1], nb[start + 1:] - nb[start] + ob[start]])
    brk = np.concatenate([old[6][: ob[start]], new[6][nb[start]:]])
    val = np.concatenate([old[7][: ob[start] + start], new[7][nb[start] + start:]])
    return code, a, b, c, inc, bptr, brk, val


def _find_utab(sim):
    """The utility table of a fresh simulator (held by its servers or banks), or None."""
    for v in [*sim.servers, *vars(sim).values()]:
        u = getattr(v, "utab", None)
        if isinstance(u, tuple):
            return u
    return None
