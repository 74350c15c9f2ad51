"""Compiled per-episode constants of the ``WirelessUDL`` commit mode (a reset's tables in a few calls).

Each kernel reproduces, element by element, numpy code that stays in the callers as the reference
(``WirelessUDLEnv._job_block_ref``, ``candidates._latency_table_ref``, ``_kernels.n_cap``):
the same IEEE operations on the same operands (``+ − × /`` and conversions of small integers are exact-rounded in
both), no sums in another order; ``np.exp`` stays numpy's, applied to the same values. A separate module from
``_kernels`` so that their compiled cache is not rebuilt.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.jit import njit

#: ``_kernels.BIG`` (the "unbounded" worker count), as a literal: a global is frozen into this module's compiled
#: cache, which is rebuilt when this file changes, not when ``_kernels`` does (the tests check the two are equal)
BIG = 1 << 40

__all__ = ["ENABLED", "job_block", "job_consts", "lat_exp_args", "lat_exp_args_fast", "lat_fill", "n_cap",
           "src_order", "sym_prices"]

#: False: the callers take their numpy reference paths instead (the differential tests run both)
ENABLED = True


@njit
def job_block(kappa, chunk_mb, param_mb, kind, tau, b, tau1, tau2, c, m, n, data, n_cap, Rm, n_kappa, n_chunk,
              n_param, n_params, n_cap_k, n_data, n_nmax):
    """The observation's per-job block ``(n_jobs, 3 + 3 + 5 + 2K + 1 + Rm + 1)`` of
    ``_observation_constants``: ``κ/n_kappa, δ/n_chunk, π/n_param``, the cost-kind one-hot (kind 3 as 0),
    ``(τ, b, τ1, τ2, c) / n_params``, ``m / n_cap_k``, ``n / n_cap_k``, ``D / n_data``, ``data / D`` (zeros to
    ``Rm``), ``min(ceil(D/κ), n_cap) / n_nmax`` (the normalisers as floats: numpy converts the integers the same
    way). Returns an empty array when some job has ``D = 0`` or ``κ ≤ 0`` (the caller then takes numpy's path, whose
    ``0/0`` and integer division by zero are not errors there)."""
    nj, R = data.shape
    K = m.shape[1]
    F = 3 + 3 + 5 + 2 * K + 1 + Rm + 1
    out = np.zeros((nj, F))
    for i in range(nj):
        D = 0
        for r in range(R):
            D += data[i, r]
        if D == 0 or kappa[i] <= 0:
            return np.zeros((0, F))
        row = out[i]
        row[0] = float(kappa[i]) / n_kappa
        row[1] = chunk_mb[i] / n_chunk
        row[2] = param_mb[i] / n_param
        kd = kind[i]
        row[3 + (kd if kd < 3 else 0)] = 1.0
        row[6] = tau[i] / n_params[0]
        row[7] = b[i] / n_params[1]
        row[8] = tau1[i] / n_params[2]
        row[9] = tau2[i] / n_params[3]
        row[10] = c[i] / n_params[4]
        j = 11
        for k in range(K):
            row[j + k] = m[i, k] / n_cap_k[k]
        j += K
        for k in range(K):
            row[j + k] = n[i, k] / n_cap_k[k]
        j += K
        Df = float(D)
        row[j] = Df / n_data
        j += 1
        for r in range(R):
            row[j + r] = float(data[i, r]) / Df
        j += Rm
        w = -(-D // kappa[i])
        if n_cap[i] < w:
            w = n_cap[i]
        row[j] = float(w) / n_nmax
    return out


@njit
def lat_exp_args(tot, kappa, n_max, kind, c, rate, offset):
    """The window ends and exponents of ``candidates._job_table``'s latency vectors, packed job by job
    (job ``i``'s ``n_max[i] + 1`` entries from ``start[i]``): ``L = ceil(tot/(κN)) − 1 + offset`` (``N = 0``:
    ``offset − 1``) as floats (``window_table``'s integer arithmetic), and ``x = min(rate·L, 700)`` (kind 0),
    ``min(−rate·(L − c), 700)`` (kind 3), ``0`` (kinds 1, 2: no exponential). Returns ``(L, x, start)``."""
    nj = tot.shape[0]
    start = np.empty(nj + 1, np.int64)
    s = 0
    for i in range(nj):
        start[i] = s
        s += n_max[i] + 1
    start[nj] = s
    L = np.empty(s)
    x = np.zeros(s)
    nrate = -rate
    for i in range(nj):
        o = start[i]
        L[o] = float(offset - 1)
        for N in range(1, n_max[i] + 1):
            kn_ = kappa[i] * N
            L[o + N] = float((tot[i] + kn_ - 1) // kn_ - 1 + offset)
        kd = kind[i]
        if kd == 0:
            for N in range(n_max[i] + 1):
                v = rate * L[o + N]
                x[o + N] = v if v < 700.0 else 700.0
        elif kd == 3:
            ci = c[i]
            for N in range(n_max[i] + 1):
                v = nrate * (L[o + N] - ci)
                x[o + N] = v if v < 700.0 else 700.0
    return L, x, start


@njit
def lat_exp_args_fast(tot, kappa, n_max, kind, c, rate, offset):
    """:func:`lat_exp_args` (the same ``L``, ``x``, ``start``) with almost no integer division:
    ``ceil(tot/(κN)) − 1 = floor(A/N)`` with ``A = floor((tot − 1)/κ)`` (nested floor division by positive
    divisors, exact integers; ``tot = 0`` gives ``A = −1`` and ``ceil = 0`` as the original), and ``floor(A/N)``
    never grows with ``N``: the last value ``q`` is kept while ``q·N <= A``, lowered by one when ``(q − 1)·N <= A``
    and divided anew otherwise (exact integer tests; the division only where the value drops by more than one,
    about √A times a job). The same expressions on the same values: bit-identical."""
    nj = tot.shape[0]
    start = np.empty(nj + 1, np.int64)
    s = 0
    for i in range(nj):
        start[i] = s
        s += n_max[i] + 1
    start[nj] = s
    L = np.empty(s)
    x = np.zeros(s)
    nrate = -rate
    for i in range(nj):
        o = start[i]
        kd = kind[i]
        nm = n_max[i]
        A = (tot[i] - 1) // kappa[i]
        L[o] = float(offset - 1)
        q = A  # floor(A / 1); q >= floor(A / N) at every N below
        for N in range(1, nm + 1):
            if q * N > A:
                if (q - 1) * N <= A:
                    q -= 1
                else:
                    q = A // N
            L[o + N] = float(q + offset)
        if kd == 0:
            for N in range(nm + 1):
                v = rate * L[o + N]
                x[o + N] = v if v < 700.0 else 700.0
        elif kd == 3:
            ci = c[i]
            for N in range(nm + 1):
                v = nrate * (L[o + N] - ci)
                x[o + N] = v if v < 700.0 else 700.0
    return L, x, start


@njit
def lat_fill(L, e, start, kind, tau, b, tau1, tau2, c, w):
    """``(n_jobs, w)`` latency table from :func:`lat_exp_args`'s ``L`` and ``e = np.exp(x)``: ``τ·e`` (kind 0),
    ``τ·L + b`` (1), ``τ1 if L < c else τ2`` (2), ``b / (e + 1)`` (3) in job ``i``'s first ``n_max[i] + 1``
    entries (the only ones read), zeros after."""
    nj = kind.shape[0]
    out = np.zeros((nj, w))
    for i in range(nj):
        o = start[i]
        cnt = start[i + 1] - o
        kd = kind[i]
        row = out[i]
        if kd == 0:
            for N in range(cnt):
                row[N] = tau[i] * e[o + N]
        elif kd == 1:
            for N in range(cnt):
                row[N] = tau[i] * L[o + N] + b[i]
        elif kd == 3:
            for N in range(cnt):
                row[N] = b[i] / (e[o + N] + 1.0)
        else:
            for N in range(cnt):
                row[N] = tau1[i] if L[o + N] < c[i] else tau2[i]
    return out


@njit
def n_cap(cap, m, n):
    """``_kernels.n_cap`` (the same numbers) with the per-site work done once per distinct capacity row: a site's
    bounds ``A``, ``A'`` and its PS test depend on its capacity row only (``_kernels.n_cap`` copies them between
    equal rows), so the best PS site's ``Σ_r A_r − A_ps + A'_ps`` is the best over the distinct rows, and
    ``Σ_r A_r`` is the sum over the distinct rows of their count times their bound (integer values below 2**53:
    exact, as the site-by-site sum)."""
    R, K = cap.shape
    nj = m.shape[0]
    out = np.ones(nj, np.int64)
    if R == 0:
        return out
    # the distinct rows (first occurrences, in site order) and how many sites share each
    rows = np.empty(R, np.int64)
    count = np.zeros(R)
    nu = 0
    for r in range(R):
        found = -1
        for j in range(nu):
            r2 = rows[j]
            same = True
            for k in range(K):
                if cap[r2, k] != cap[r, k]:
                    same = False
                    break
            if same:
                found = j
                break
        if found < 0:
            rows[nu] = r
            count[nu] = 1.0
            nu += 1
        else:
            count[found] += 1.0
    a0 = np.empty(nu)
    a1 = np.empty(nu)
    for i in range(nj):
        for j in range(nu):
            r = rows[j]
            for w in range(2):
                a = np.inf
                neg = False
                for k in range(K):
                    free = cap[r, k] - (n[i, k] if w == 1 else 0.0)
                    if free < -1e-9:
                        neg = True
                    if m[i, k] > 0:
                        v = math.floor(free / m[i, k] + 1e-9)
                        if v < a:
                            a = v
                if neg:
                    a = 0.0
                a = min(max(a, 0.0), float(BIG))
                if w == 0:
                    a0[j] = a
                else:
                    a1[j] = a
        tot0 = 0.0
        for j in range(nu):
            tot0 += count[j] * a0[j]
        best = -np.inf
        for j in range(nu):
            r = rows[j]
            ok = True
            for k in range(K):
                if not cap[r, k] >= n[i, k] - 1e-9:
                    ok = False
            v = tot0 - a0[j] + a1[j] if ok else 0.0
            if v > best:
                best = v
        out[i] = int(max(1.0, min(best, float(BIG))))
    return out


@njit
def job_consts(data, kappa, n_cap, shared):
    """Every job's integer constants of ``candidates._job_table`` and ``WirelessUDLEnv._job_arrays`` in one pass:
    ``kap`` (a copy of ``kappa``), ``tot = Σ_r data[i, r]``, ``n_max = max(1, min(ceil(tot/κ), n_cap))``, ``has``
    (data at every site: ``(data > 0).all(axis=1)``), ``orders`` (``(n_jobs, R)``: row ``i`` the shared site order
    ``shared`` where ``has[i]``, zeros elsewhere) and ``max(n_max)`` (integers: the numpy expressions' values
    exactly). Returns ``n_jobs = 0`` arrays when some ``κ ≤ 0`` (the caller then takes numpy's path, where an
    integer division by zero is no error)."""
    nj, R = data.shape
    for i in range(nj):
        if kappa[i] <= 0:
            nj = 0
            break
    kap = np.empty(nj, np.int64)
    tot = np.empty(nj, np.int64)
    nmax = np.empty(nj, np.int64)
    has = np.empty(nj, np.bool_)
    orders = np.zeros((nj, R), np.int64)
    hi = 0
    for i in range(nj):
        k = kappa[i]
        s = 0
        full = True
        for r in range(R):
            v = data[i, r]
            s += v
            if not v > 0:
                full = False
        w = -(-s // k)
        if n_cap[i] < w:
            w = n_cap[i]
        if w < 1:
            w = 1
        kap[i] = k
        tot[i] = s
        nmax[i] = w
        has[i] = full
        if full:
            orders[i, :] = shared
        if i == 0 or w > hi:
            hi = w
    return kap, tot, nmax, has, orders, hi


@njit
def _radix_order(keys):
    """The permutation that sorts the ``uint64`` ``keys`` ascending, equal keys in index order (an LSD radix sort
    by bytes, a pass only for the bytes that differ: no comparisons, so no branch depends on the data's order)."""
    n = keys.shape[0]
    cnt = np.zeros((8, 256), np.int64)
    for t in range(n):
        k = keys[t]
        for d in range(8):
            cnt[d, (k >> np.uint64(8 * d)) & np.uint64(255)] += 1
    idx = np.arange(n)
    tmp = np.empty(n, np.int64)
    pos = np.empty(256, np.int64)
    for d in range(8):
        c = cnt[d]
        if c[(keys[0] >> np.uint64(8 * d)) & np.uint64(255)] == n:
            continue  # every key has this byte: the pass would keep the order
        s = 0
        for v in range(256):
            pos[v] = s
            s += c[v]
        for t in range(n):
            j = idx[t]
            v = (keys[j] >> np.uint64(8 * d)) & np.uint64(255)
            tmp[pos[v]] = j
            pos[v] += 1
        idx, tmp = tmp, idx
    return idx


@njit
def src_order(q):
    """``np.argsort(q.T, axis=1, kind="stable")`` (row ``r``: the sources ``s`` by ``q[s, r]`` ascending, ties in
    index order) and ``bool(np.all(q >= 0))``, in one call. Returns a ``(0, 0)`` order when ``q`` holds a NaN (whose
    place in the order the caller leaves to numpy).

    A symmetric ``q`` (a drawn instance's, ``q = u + u.T``) is ordered by one radix sort of its upper triangle: with
    the pairs ``i ≤ j`` enumerated row by row and sorted stably by value (the float's bits mapped to an unsigned key
    of the same order, ``-0.0`` as ``0.0``), walking them in that order appends ``i`` to row ``j`` and ``j`` to row
    ``i``; row ``r`` then lists its sources by value, and equal values in index order, since the pairs holding
    ``s < s'`` in column ``r`` are enumerated in that order. A comparison sort of 50 fresh random columns mispredicts
    about every other branch (numpy's took ~55 µs in a reset, ~20 µs on the same matrix again and again). Other
    matrices: a stable merge sort of each column."""
    C, R = q.shape
    nonneg = True
    sym = C == R
    for i in range(C):
        for j in range(R):
            x = q[i, j]
            if x != x:
                return np.empty((0, 0), np.int64), False
            if not x >= 0.0:
                nonneg = False
            if sym and x != q[j, i]:
                sym = False
    out = np.empty((R, C), np.int64)
    if not sym:
        col = np.empty(C)
        for r in range(R):
            for j in range(C):
                col[j] = q[j, r]
            out[r] = np.argsort(col, kind="mergesort")
        return out, nonneg
    n = R * (R + 1) // 2
    vals = np.empty(n)
    pi = np.empty(n, np.int64)
    pj = np.empty(n, np.int64)
    p = 0
    for i in range(R):
        for j in range(i, R):
            x = q[i, j]
            vals[p] = 0.0 if x == 0.0 else x
            pi[p] = i
            pj[p] = j
            p += 1
    bits = vals.view(np.uint64)
    keys = np.empty(n, np.uint64)
    sign = np.uint64(1) << np.uint64(63)
    for t in range(n):
        b = bits[t]
        keys[t] = ~b if b & sign else b | sign
    order = _radix_order(keys)
    fill = np.zeros(R, np.int64)
    for t in range(n):
        p = order[t]
        i = pi[p]
        j = pj[p]
        out[j, fill[j]] = i
        fill[j] += 1
        if i != j:
            out[i, fill[i]] = j
            fill[i] += 1
    return out, nonneg


@njit
def sym_prices(v, R):
    """``build_instance``'s price matrix from its draws ``v``: ``q = zeros((R, R)); q[triu_indices(R, 1)] = v;
    q + q.T`` with numpy's operations on the same values (above the diagonal ``v + 0.0``, below ``0.0 + v``, on it
    ``0.0 + 0.0``: ``x + 0.0`` is not folded to ``x`` without fast-math, since ``-0.0 + 0.0`` is ``0.0``), in one
    pass instead of a fancy-index assignment and a transposed sum."""
    q = np.zeros((R, R))
    p = 0
    for i in range(R):
        q[i, i] = 0.0 + 0.0
        for j in range(i + 1, R):
            x = v[p]
            p += 1
            q[i, j] = x + 0.0
            q[j, i] = 0.0 + x
    return q
