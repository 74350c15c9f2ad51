"""Compiled part of an episode's instance building (:mod:`.instance`): the jobs' ideal configurations.

:func:`ideal_configs` computes what :func:`~edgegym.families.hetero_ml.instance.ideal_configs` computes without a
``fit`` restriction, job by job, with the same floating-point operations in the same order (each a correctly rounded
IEEE operation, so the same bits as NumPy's elementwise ones), the lexicographic sorts' first elements taken as
lexicographic minima and ``argmin``'s first minimum kept. The caller (``instance.ideal_configs``) uses it only where
every input is finite (NumPy orders NaN last; a minimum here would not). ``tests/speed/test_speed_hetero_v1_step3.py``
compares both on drawn and hand-made job tables.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.jit import njit

__all__ = ["ideal_configs"]


@njit
def _finite(a):
    """Whether every entry of the 1-d array ``a`` is finite."""
    for i in range(a.shape[0]):
        if not math.isfinite(a[i]):
            return False
    return True


@njit
def ideal_configs(ps_arch, worker_res, ps_res, foot_z, bw_index, W, v, ps_update, ra_update, grad_mb, chunks, eps,
                  s_per_slot, m_out, p_out, n_out, s_out, d_out, dem_out):
    """Each job's fastest worker type (ties: fewer GPUs, then the lower index), fastest PS type (ties: smaller
    ``foot_z``, then the lower index; -1 without PSs), the fewest workers N <= D_j reaching the shortest duration
    ``ceil(W_j · it_j(N) / N - eps)`` (spread rate), the PSs ``max(1, ceil(N b_m / B_p - 1e-9))`` (0 without PSs),
    that duration and the demand ``N e_m + s z_p`` (``+ 0.0`` without PSs), into the ``*_out`` arrays. Returns False,
    having written nothing, when an input is not finite (the caller then takes NumPy's path)."""
    J, M = v.shape
    P = ps_res.shape[0]
    R = worker_res.shape[1]
    if not (_finite(worker_res.ravel()) and _finite(ps_res.ravel()) and _finite(foot_z) and _finite(v.ravel())
            and _finite(ps_update.ravel()) and _finite(ra_update) and _finite(grad_mb)):
        return False
    for j in range(J):
        m = 0
        for mm in range(1, M):
            x, y = v[j, mm], v[j, m]
            if x < y or (x == y and worker_res[mm, 0] < worker_res[m, 0]):
                m = mm
        b = worker_res[m, bw_index]
        comm = 2.0 * grad_mb[j] * 8.0 / (b * 1000.0) / s_per_slot
        D = chunks[j]
        if ps_arch:
            p = 0
            for pp in range(1, P):
                x, y = ps_update[j, pp], ps_update[j, p]
                if x < y or (x == y and foot_z[pp] < foot_z[p]):
                    p = pp
            it = v[j, m] + ps_update[j, p] + comm
            best = np.ceil(W[j] * it / 1 - eps)
            n = 1
            for q in range(2, D + 1):  # argmin's first minimum
                d = np.ceil(W[j] * it / q - eps)
                if d < best:
                    best = d
                    n = q
            s = max(1.0, np.ceil(n * b / ps_res[p, bw_index] - 1e-9))
            p_out[j] = p
            s_out[j] = np.int64(s)
            for r in range(R):
                dem_out[j, r] = n * worker_res[m, r] + s_out[j] * ps_res[p, r]
        else:
            best = np.ceil(W[j] * (v[j, m] + (ra_update[j] + comm) * 0 / 1) / 1 - eps)
            n = 1
            for q in range(2, D + 1):  # argmin's first minimum
                it = v[j, m] + (ra_update[j] + comm) * (q - 1) / q
                d = np.ceil(W[j] * it / q - eps)
                if d < best:
                    best = d
                    n = q
            p_out[j] = -1
            s_out[j] = 0
            for r in range(R):
                dem_out[j, r] = n * worker_res[m, r] + 0.0
        m_out[j] = m
        n_out[j] = n
        d_out[j] = np.int64(best)
    return True


@njit
def _finite_row_min(a, j, n):
    """``(every a[j, :n] finite, their minimum)`` (``a[j, 0]`` when none is smaller; ``(False, 0.0)`` at the first
    value that is not finite)."""
    lo = a[j, 0]
    for i in range(n):
        x = a[j, i]
        if not math.isfinite(x):
            return False, 0.0
        if x < lo:
            lo = x
    return True, lo


@njit
def lower_bound_ps(v, ps_update, work, chunks, weight, arrival):
    """``HeteroMLEnv.lower_bound`` of the PS architecture: Σ_j w_j (a_j + ceil(W_j (min_m v_jm + min_p U^p_j) / D_j
    - 1e-9)), added in job order from 0.0 with the loop's operations (the minima exact; ``a_j + d_j`` an integer,
    exact in float64 below 2^53). Returns ``(True, bound)``, or ``(False, 0.0)`` when an input is not finite or a
    term leaves float64's exact integers (the caller then runs the loop itself)."""
    J, M = v.shape
    P = ps_update.shape[1]
    lb = 0.0
    for j in range(J):
        ok_v, vm = _finite_row_min(v, j, M)
        ok_p, pm = _finite_row_min(ps_update, j, P)
        if not (ok_v and ok_p):
            return False, 0.0
        d = np.ceil(float(work[j]) * (vm + pm) / chunks[j] - 1e-9)
        if not (abs(d) + abs(float(arrival[j])) < 2.0 ** 53) or not math.isfinite(weight[j]):
            return False, 0.0
        lb += weight[j] * (arrival[j] + d)
    return True, lb


@njit
def _any_below(a, lo, strict):
    """Whether some entry of the 2-d array ``a`` is < ``lo`` (``strict``) or <= ``lo`` (NaN is neither)."""
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            x = a[i, k]
            if x < lo or (not strict and x == lo):
                return True
    return False


@njit
def jobs_check(arrival, weight, v, epochs, chunks, batches, ps_update, ra_update, grad_mb):
    """The value checks of ``HeteroJobs.__post_init__`` in its order, on its converted arrays (1-d int64
    ``arrival, epochs, chunks, batches``; 1-d float64 ``weight, ra_update, grad_mb``; 2-d float64 ``v, ps_update``):
    0 when all pass, else the first failing check (1 arrivals not sorted, by the sign of their int64 differences, or
    < 1; 2 a weight or a compute time <= 0; 3 an epoch, chunk or batch count < 1; 4 an update time or a gradient
    size < 0). NaN passes every comparison, as in NumPy."""
    J = arrival.shape[0]
    if J:
        for i in range(J - 1):
            if arrival[i + 1] - arrival[i] < 0:  # np.diff's int64 difference (wrapping alike)
                return 1
        lo = arrival[0]
        for i in range(J):
            if arrival[i] < lo:
                lo = arrival[i]
        if lo < 1:
            return 1
    if _any_below(weight.reshape((1, weight.shape[0])), 0.0, False) or _any_below(v, 0.0, False):
        return 2
    for a in (epochs, chunks, batches):
        for i in range(a.shape[0]):
            if a[i] < 1:
                return 3
    if (_any_below(ps_update, 0.0, True) or _any_below(ra_update.reshape((1, ra_update.shape[0])), 0.0, True)
            or _any_below(grad_mb.reshape((1, grad_mb.shape[0])), 0.0, True)):
        return 4
    return 0
