"""One native object for the per-episode arguments of ``_kernels.commit_prepare`` (the v1 step's compiled call).

``HeteroMLEnv._step_direct`` hands ``commit_prepare`` ~50 arguments, ~42 of them arrays; unboxing each array costs
its share of ~1.5-2 µs a call even through the compiled entry point. About 30 of those arrays (the simulator's
records, the cluster tables, the env's caches and scratch) are the same objects for a whole episode, so they are
put once per episode into an :class:`EpisodeArgs` (a Numba ``StructRef``): a step then unboxes one object and the
arrays that change per step. :func:`commit_packed` reads the fields and calls ``commit_prepare`` itself with the
same values (the job rows ``v[k]`` / ``psu[k]`` and the six rows of the step's buffer are the same views Python
would pass), so its results are ``commit_prepare``'s.
"""

from __future__ import annotations

from numba import njit
from numba.core import types
from numba.experimental import structref

from ._kernels import commit_prepare_cached, observation

#: the fields of :class:`EpisodeArgs`, in ``commit_prepare``'s argument order
FIELDS = ("rec", "colocated", "cap", "wres", "pres", "wbw", "pbw", "cbar", "ps_arch", "lam", "v", "psu", "fracs",
          "zf", "feas", "delays", "cfree", "ccaps", "rows", "ratio", "bins", "lfree", "lx", "lhost",
          # ``_kernels.observation``'s: the empty v0 mask bits and the observation space's bounds
          "no_mask", "olo", "ohi",
          # ``_kernels.job_grid_cached``'s cache of the spread PS types' values (the full list's path has none)
          "vcache")


@structref.register
class EpisodeArgsType(types.StructRef):
    """The Numba type of :class:`EpisodeArgs` (one per combination of field types)."""

    def preprocess_fields(self, fields):
        """Literal field types as their plain types (a bool or float field holds any value of its type)."""
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class EpisodeArgs(structref.StructRefProxy):
    """The per-episode arguments of ``commit_prepare`` (:data:`FIELDS`), held by reference (never copied)."""


structref.define_proxy(EpisodeArgs, EpisodeArgsType, list(FIELDS))


@njit(cache=True)
def new_episode_args(rec, colocated, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, v, psu, fracs, zf, feas, delays,
                     cfree, ccaps, rows, ratio, bins, lfree, lx, lhost, no_mask, olo, ohi, vcache):
    """An :class:`EpisodeArgs` of these fields (:data:`FIELDS`): ``EpisodeArgs(...)`` itself, compiled once and cached
    (Python's ``EpisodeArgs(...)`` compiles its constructor anew in every process, ~0.5 s)."""
    return EpisodeArgs(rec, colocated, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, v, psu, fracs, zf, feas, delays,
                       cfree, ccaps, rows, ratio, bins, lfree, lx, lhost, no_mask, olo, ohi, vcache)


@njit(cache=True)
def commit_packed(ep, k, W, ra, grad, m, p, n, spread, t0, pp, cnt, times, vals, nxt, D1, W1, ra1, grad1, now1, buf,
                  mask):
    """``commit_prepare`` with the per-episode arguments read from ``ep`` (an :class:`EpisodeArgs`): job ``k``'s
    rows ``ep.v[k]``/``ep.psu[k]``, the next job's (``k + 1`` when ``nxt``, else ``k``), and the rows of ``buf``
    (worker type, workers, spread, PS type, start, duration) as the configuration and estimate outputs, and the
    episode's cache of the spread PS types' values (``ep.vcache``: ``commit_prepare_cached``). Returns
    ``commit_prepare``'s values (the cache holds the values computed without it, so they are the same)."""
    k1 = k + 1 if nxt else k
    v, psu = ep.v, ep.psu
    return commit_prepare_cached(ep.rec, ep.colocated, k, ep.cap, ep.wres, ep.pres, ep.wbw, ep.pbw, ep.cbar,
                                 ep.ps_arch, ep.lam, W, v[k], psu[k], ra, grad, m, p, n, spread, t0, pp, cnt, times,
                                 vals, nxt, D1, ep.fracs, ep.zf, ep.feas, ep.vcache, W1, v[k1], psu[k1], ra1, grad1,
                                 now1, ep.delays, ep.cfree, ep.ccaps, buf[0], buf[1], buf[2], buf[3], mask, buf[4],
                                 buf[5], ep.rows, ep.ratio, ep.bins, ep.lfree, ep.lx, ep.lhost)


@njit(cache=True)
def fields_of(ep):
    """The fields of ``ep`` as a tuple in :data:`FIELDS` order (tests: the arrays come back as the objects put in)."""
    return (ep.rec, ep.colocated, ep.cap, ep.wres, ep.pres, ep.wbw, ep.pbw, ep.cbar, ep.ps_arch, ep.lam, ep.v, ep.psu,
            ep.fracs, ep.zf, ep.feas, ep.delays, ep.cfree, ep.ccaps, ep.rows, ep.ratio, ep.bins, ep.lfree, ep.lx,
            ep.lhost, ep.no_mask, ep.olo, ep.ohi, ep.vcache)


@njit(cache=True)
def observation_packed(ep, w, E, D, K, grad, ra, arrival, k, J, now, T, relative, rmask, lg, out):
    """``_kernels.observation`` of job ``k`` with the per-episode arguments read from ``ep`` (an
    :class:`EpisodeArgs`): the job's rows ``ep.v[k]``/``ep.psu[k]``, the records, cluster tables, the v1 rows and
    lookahead bins in its scratch, the empty v0 mask and the bounds; writes ``out`` as ``observation`` does."""
    observation(w, E, D, K, grad, ep.v[k], ep.psu[k], ra, arrival, k, J, now, T, relative, ep.rec, ep.cap, ep.wres,
                ep.pres, ep.wbw, ep.ps_arch, ep.rows, rmask, lg, ep.no_mask, ep.olo, ep.ohi, out, ep.bins)
