"""Hot loops of the WirelessUDL simulator: SPLIT, DTA, PA, the unbiased per-slot quota, Okita's tentative
enumeration (Alg. 1-3 of the paper).

Every kernel is written once, in plain Python over numpy arrays, and compiled with Numba's
``@njit(cache=True)`` when Numba is installed (it is optional: without it the same source runs as Python).
The uncompiled source of each kernel stays reachable as ``<kernel>.py_func`` (see :data:`PURE`), which the
differential tests use as the oracle of the compiled version.

Conventions: sites ``r = 0..R-1``; ``cap``/``U`` are ``(R, K)`` float64 resource amounts (integral values);
``q`` is ``(R, R)`` price per MB, ``q[r, r] = 0``; data amounts are int64 chunk counts; a plan is
``(y (R,) int64 workers per site, ps int PS site)``.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.jit import HAVE_NUMBA, njit

__all__ = [
    "BIG",
    "HAVE_NUMBA",
    "PURE",
    "dta",
    "earliest_fit",
    "max_workers",
    "pa",
    "pa_all_n",
    "prop_quota",
    "site_order",
    "split",
    "window_estimate",
    "window_transfer",
]

BIG = 1 << 40  # "unbounded" worker count (job with no positive per-worker demand)
_EPS = 1e-9


@njit
def site_order(U, cap, qbar, M, D, beta1, beta2, beta3):
    """Sites by decreasing score Q (eq. 6; ties: lower index first), and the scores.

    Q_r = β1·mean_k(U_rk/C_rk) − β2·qbar_r + β3·M_r/D_r, with ``qbar`` the (normalised) mean outgoing price.
    """
    R, K = U.shape
    Q = np.empty(R)
    for r in range(R):
        s = 0.0
        for k in range(K):
            s += U[r, k] / cap[r, k] if cap[r, k] > 0 else 0.0
        dat = M[r] / D[r] if D[r] > 0 else 0.0
        Q[r] = beta1 * s / K - beta2 * qbar[r] + beta3 * dat
    return np.argsort(-Q, kind="mergesort"), Q


@njit
def max_workers(Ur, m, n, ps_here):
    """A_i^r: most workers of demand ``m`` fitting in ``Ur`` (K,), after the PS (``n``) if ``ps_here``."""
    best = BIG
    for k in range(Ur.shape[0]):
        free = Ur[k] - (n[k] if ps_here else 0.0)
        if free < -_EPS:
            return 0
        if m[k] > 0:
            a = int(math.floor(free / m[k] + _EPS))
            if a < best:
                best = a
    return max(best, 0)


@njit
def pa(U, order, q, m, n, N, tie_le):
    """PA (Alg 2) for ``N`` workers: enumerate the PS site, fill workers along ``order``.

    Returns ``(unit_cost, y, ps)`` with ``unit_cost = Σ_r q[r, ps]·y_r`` (multiply by ``l·π`` for Alg 2's
    cost); ``ps = -1`` if no PS site admits N workers. ``tie_le``: the paper's "≤" (last tied PS site wins).
    """
    R, K = U.shape
    A0 = np.empty(R, np.int64)
    for r in range(R):
        A0[r] = max_workers(U[r], m, n, False)
    best = np.inf
    best_ps = -1
    best_y = np.zeros(R, np.int64)
    y = np.zeros(R, np.int64)
    for rt in range(R):
        ok = True
        for k in range(K):
            if U[rt, k] < n[k] - _EPS:
                ok = False
        if not ok:
            continue
        rem = N
        c = 0.0
        y[:] = 0
        for j in range(R):
            r = order[j]
            a = max_workers(U[r], m, n, True) if r == rt else A0[r]
            take = min(a, rem)
            y[r] = take
            rem -= take
            c += q[r, rt] * take
            if rem == 0:
                break
        if rem == 0 and (c < best or (tie_le and c <= best)):
            best = c
            best_ps = rt
            best_y[:] = y
    return best, best_y, best_ps


@njit
def pa_all_n(U, order, q, m, n, n_max, tie_le):
    """PA for every N in 1..n_max at once (the Q-order fill is a prefix, so the cost is piecewise linear in N).

    Returns ``(unit_cost (n_max+1,), ps (n_max+1,))``, index N; ``inf`` / ``-1`` where N does not fit.
    """
    R, K = U.shape
    cost = np.full(n_max + 1, np.inf)
    best_ps = np.full(n_max + 1, -1, np.int64)
    A0 = np.empty(R, np.int64)
    for r in range(R):
        A0[r] = max_workers(U[r], m, n, False)
    for rt in range(R):
        ok = True
        for k in range(K):
            if U[rt, k] < n[k] - _EPS:
                ok = False
        if not ok:
            continue
        N = 1
        filled = 0
        c = 0.0
        for j in range(R):
            r = order[j]
            a = max_workers(U[r], m, n, True) if r == rt else A0[r]
            if a <= 0:
                continue
            top = filled + a
            while N <= n_max and N <= top:
                cN = c + (N - filled) * q[r, rt]
                if cN < cost[N] or (tie_le and cN <= cost[N]):
                    cost[N] = cN
                    best_ps[N] = rt
                N += 1
            if N > n_max:
                break
            c += a * q[r, rt]
            filled = top
    return cost, best_ps


@njit
def fill(U, order, m, n, N, ps):
    """The Q-greedy worker fill of PA for a given PS site (``y`` (R,), or all -1 if N does not fit)."""
    R = U.shape[0]
    y = np.zeros(R, np.int64)
    rem = N
    for j in range(R):
        r = order[j]
        a = max_workers(U[r], m, n, r == ps)
        take = min(a, rem)
        y[r] = take
        rem -= take
        if rem == 0:
            break
    if rem > 0:
        y[:] = -1
    return y


@njit
def split(y, M, kappa, h, order):
    """SPLIT: chunks trained per site with ``h`` slots of capacity ``h·κ·y``: local data first,
    then spare capacity in ``order`` (decreasing Q)."""
    R = y.shape[0]
    d = np.zeros(R, np.int64)
    tot_m = 0
    tot_c = 0
    for r in range(R):
        c = h * kappa * y[r]
        tot_m += M[r]
        tot_c += c
        d[r] = min(c, M[r])
    rem = min(tot_m, tot_c) - d.sum()
    for j in range(R):
        if rem <= 0:
            break
        r = order[j]
        x = min(h * kappa * y[r] - d[r], rem)
        if x > 0:
            d[r] += x
            rem -= x
    return d


@njit
def dta(S, d, q, src_order, want_g):
    """DTA (Alg 3): each site short of data (``d_r > S_r``) pulls from the cheapest sites with surplus.

    ``S`` (R,) the data available per origin site (untrained data ``M`` in ``complete`` sampling, the
    slot's quota in ``proportional`` sampling), ``d`` (R,) training targets, ``Σ S ≥ Σ d``; ``src_order``
    (R, R): row r = sources sorted by ``q[·, r]`` ascending. Returns ``(Σ q·g over r≠r', g, origin_used)``
    with ``g`` (R, R) (zeros unless ``want_g``; the diagonal is local training) and ``origin_used`` (R,).
    """
    R = S.shape[0]
    H = S - d
    sent = np.zeros(R, np.int64)
    used = np.zeros(R, np.int64)
    g = np.zeros((R, R), np.int64) if want_g else np.zeros((1, 1), np.int64)
    cost = 0.0
    for r in range(R):
        loc = min(d[r], S[r])
        used[r] += loc
        if want_g:
            g[r, r] = loc
    for r in range(R):
        if H[r] < 0:
            need = -H[r]
            for j in range(R):
                s = src_order[r, j]
                if s == r or H[s] <= 0:
                    continue
                x = min(H[s] - sent[s], need)
                if x > 0:
                    sent[s] += x
                    used[s] += x
                    need -= x
                    cost += q[s, r] * x
                    if want_g:
                        g[s, r] += x
                if need == 0:
                    break
    return cost, g, used


@njit
def prop_quota(M, D, X):
    """Unbiased per-slot sampling: how many chunks of each origin the next ``X`` trained chunks take.

    After the slot, every origin's cumulative trained count ``D_r − M_r + o_r`` stays within one chunk of
    its proportional share ``D_r·X_cum/D`` (the Balinski-Young quota property); the remainder goes to the
    largest fractional deficits, lower index first on ties. ``0 ≤ o_r ≤ M_r`` and ``Σ o = X``.
    """
    R = M.shape[0]
    Dtot = D.sum()
    trained = D - M
    x_after = trained.sum() + X
    o = np.zeros(R, np.int64)
    hi = np.zeros(R, np.int64)
    frac = np.zeros(R)
    for r in range(R):
        e = D[r] * x_after / Dtot
        fl = int(math.floor(e + _EPS))
        ce = int(math.ceil(e - _EPS))
        o[r] = max(0, fl - trained[r])
        hi[r] = max(o[r], min(M[r], ce - trained[r]))
        frac[r] = e - trained[r] - o[r]
    rem = X - o.sum()
    if rem > 0:
        idx = np.argsort(-frac, kind="mergesort")
        for j in range(R):
            r = idx[j]
            x = min(hi[r] - o[r], rem)
            if x > 0:
                o[r] += x
                rem -= x
            if rem == 0:
                break
        if rem > 0:  # quota infeasible (never seen): fall back to any origin with data left
            for r in range(R):
                x = min(M[r] - o[r], rem)
                if x > 0:
                    o[r] += x
                    rem -= x
    elif rem < 0:  # too many lower quotas (never seen): trim the smallest deficits
        idx = np.argsort(frac, kind="mergesort")
        for j in range(R):
            r = idx[j]
            x = min(o[r], -rem)
            o[r] -= x
            rem += x
            if rem == 0:
                break
    return o


@njit
def window_transfer(y, M, D, kappa, win, order, q, src_order, prop, cap, qbar, beta):
    """``Σ q·g`` (per MB) of training ``M`` with the constant workers ``y`` over ``win`` slots.

    ``prop = False`` (``complete`` sampling): OSF's window estimate, SPLIT with ``h = win`` along ``order`` and one
    DTA on ``M``. ``prop = True`` (``proportional`` sampling): the slots as the simulator runs them (SPLIT per slot
    along the site order of the untrained data, the slot's unbiased quota, DTA), so the estimate is the exact
    transfer cost of the plan.
    """
    if not prop:
        d = split(y, M, kappa, win, order)
        c, _, _ = dta(M, d, q, src_order, False)
        return c
    Mc = M.copy()
    tot = 0.0
    for _ in range(win):
        if Mc.sum() == 0:
            break
        o, _ = site_order(cap, cap, qbar, Mc, D, beta[0], beta[1], beta[2])
        d = split(y, Mc, kappa, 1, o)
        S = prop_quota(Mc, D, d.sum())
        c, _, used = dta(S, d, q, src_order, False)
        Mc -= used
        tot += c
    return tot


@njit
def window_estimate(U, cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop=False):
    """Okita's tentative enumeration (Alg 1 lines 4-11 with OSF) for every N in 1..n_max.

    Returns ``(l (n_max+1,), param_unit (n_max+1,), transfer_chunk_cost (n_max+1,), ps (n_max+1,))``:
    window length, ``Σ_r q[r, ps]·y_r`` of the PA plan, and ``Σ q·g`` of :func:`window_transfer` (``prop``: the
    sampling is ``proportional``); multiply by ``l·π`` and by ``δ`` respectively. ``ps = -1`` where N does not fit.
    """
    order, _ = site_order(U, cap, qbar, M, D, beta[0], beta[1], beta[2])
    unit, ps = pa_all_n(U, order, q, m, n, n_max, tie_le)
    tot = M.sum()
    L = np.zeros(n_max + 1, np.int64)
    tr = np.full(n_max + 1, np.inf)
    for N in range(1, n_max + 1):
        L[N] = (tot + kappa * N - 1) // (kappa * N)
        if ps[N] < 0:
            continue
        y = fill(U, order, m, n, N, ps[N])
        tr[N] = window_transfer(y, M, D, kappa, L[N], order, q, src_order, prop, cap, qbar, beta)
    return L, unit, tr, ps


@njit
def earliest_fit(cal, dem, used, t, win, end):
    """Earliest ``s ≥ t`` with ``dem[r] ≤ cal[s', r]`` for the sites ``used`` and all ``s' ∈ [s, s + l)``,
    ``s + l ≤ end`` (-1 if none): one pass over the slots, stopping at the first run of ``l`` fitting slots."""
    run = 0
    K = dem.shape[1]
    for s in range(t, end):
        ok = True
        for j in range(used.shape[0]):
            r = used[j]
            for k in range(K):
                if cal[s, r, k] < dem[r, k] - _EPS:
                    ok = False
                    break
            if not ok:
                break
        run = run + 1 if ok else 0
        if run >= win:
            return s - win + 1
    return -1


PURE = {
    name: globals()[name].py_func
    for name in ("site_order", "max_workers", "pa", "pa_all_n", "fill", "split", "dta", "prop_quota", "earliest_fit",
                 "window_transfer")
}
