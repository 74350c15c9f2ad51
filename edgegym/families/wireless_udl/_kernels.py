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

from ...core.jit import HAVE_NUMBA, njit, njit_inline

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


@njit_inline
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


@njit_inline
def _mw(U, r, m, n, ps_here):
    """:func:`max_workers` of row ``r`` of ``U`` (the same arithmetic, without taking a row view)."""
    best = BIG
    for k in range(U.shape[1]):
        free = U[r, k] - (n[k] if ps_here else 0.0)
        if free < -_EPS:
            return 0
        if m[k] > 0:
            a = int(math.floor(free / m[k] + _EPS))
            if a < best:
                best = a
    return max(best, 0)


@njit_inline
def _ps_fits(U, rt, n):
    """Whether site ``rt`` has room for the PS (demand ``n``) in the resources ``U``."""
    for k in range(U.shape[1]):
        if U[rt, k] < n[k] - _EPS:
            return False
    return True


@njit_inline
def _site_costs(rt, order, q, n_max, A0, A1, steps, cv):
    """PS site ``rt``'s cost of every worker count the Q-order fill reaches: ``cv[N] = c + (N − filled)·q`` for
    ``N`` in ``1..`` (``c`` the cost of the full segments before, ``steps`` the integers as floats); returns the
    first ``N`` not reached (``n_max + 1`` when all are)."""
    N = 1
    filled = 0
    c = 0.0
    for j in range(order.shape[0]):
        r = order[j]
        a = A1[r] if r == rt else A0[r]
        if a <= 0:
            continue
        top = filled + a
        hi = min(top, n_max)
        qr = q[r, rt]
        for x in range(N, hi + 1):
            cv[x] = c + steps[x - filled] * qr
        N = hi + 1
        if N > n_max:
            break
        c += a * qr
        filled = top
    return N


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
        if not _ps_fits(U, rt, n):
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
    (Per PS site, the cost of every N that fits, ``c + (N − filled)·q`` with ``N − filled`` from a float table of
    the integers, then one branch-free pass keeps the cheaper: the same sums and comparisons as the
    element-by-element loop.)
    """
    R = U.shape[0]
    A0 = np.empty(R, np.int64)
    A1 = np.empty(R, np.int64)
    for r in range(R):
        A0[r] = _mw(U, r, m, n, False)
        A1[r] = _mw(U, r, m, n, True)
    return _pa_all_n_b(U, order, q, n, n_max, tie_le, A0, A1)


@njit_inline
def _pa_all_n_b(U, order, q, n, n_max, tie_le, A0, A1):
    """:func:`pa_all_n` with the worker bounds ``A0`` (without the PS) / ``A1`` (with it) of every site given."""
    R, K = U.shape
    cost = np.full(n_max + 1, np.inf)
    best_ps = np.full(n_max + 1, -1, np.int64)
    steps = np.empty(n_max + 1)
    for x in range(n_max + 1):
        steps[x] = x
    cv = np.empty(n_max + 1)  # one PS site's cost of every N that fits
    for rt in range(R):
        if not _ps_fits(U, rt, n):
            continue
        N = _site_costs(rt, order, q, n_max, A0, A1, steps, cv)
        if tie_le:
            for x in range(1, N):
                cN = cv[x]
                cur = cost[x]
                bt = cN <= cur
                cost[x] = cN if bt else cur
                best_ps[x] = rt if bt else best_ps[x]
        else:
            for x in range(1, N):
                cN = cv[x]
                cur = cost[x]
                bt = cN < cur
                cost[x] = cN if bt else cur
                best_ps[x] = rt if bt else best_ps[x]
    return cost, best_ps


@njit_inline
def _pa_all_n_nn(U, order, q, n, n_max, tie_le, A0, A1):
    """:func:`_pa_all_n_b` for prices ``q ≥ 0``. The PS sites whose fill is the fill without a PS (``A1 == A0``, or
    the fill reaches ``n_max`` before the site) share its segments: segment by segment (a site of the order, ``N``
    from ``P + 1`` to ``P + a``), their costs ``C + (N − P)·q[site, ps]`` (``C`` the cost of the full segments before,
    summed as :func:`_pa_all_n_b` sums it) grow with ``N``, so a PS site whose cost at the segment's first ``N``
    exceeds the least cost at its last ``N`` loses on the whole segment; the others are compared ``N`` by ``N``. The
    remaining PS sites take :func:`_pa_all_n_b`'s loop. The two winners of each ``N`` are merged by cost, then by
    the tie rule's site index (``tie_le``: the last PS site of the least cost, else the first): the same result."""
    R, K = U.shape
    n1 = n_max + 1
    # one float block (the costs, the integers 0..n_max as floats, one PS site's costs, and below C and Qg) and one
    # int block (the PS sites, then pos, base, ins, surv): two allocations instead of four
    fl = np.empty(3 * n1 + 2 * R)
    cost = fl[:n1]
    steps = fl[n1:2 * n1]
    cv = fl[2 * n1:3 * n1]
    ib = np.empty(n1 + 4 * R, np.int64)
    best_ps = ib[:n1]
    for x in range(n1):
        cost[x] = np.inf
        steps[x] = x
        best_ps[x] = -1
    # the fill without a PS: where it reaches n_max (order position jJ; R - 1 if it never does)
    jJ = R - 1
    tot = 0
    for j in range(R):
        tot += A0[order[j]]
        if tot >= n_max:
            jJ = j
            break
    pos = ib[n1:n1 + R]
    base = ib[n1 + R:n1 + 2 * R]  # PS sites on the shared fill, ascending
    ins = ib[n1 + 2 * R:n1 + 3 * R]  # the others, ascending
    surv = ib[n1 + 3 * R:]
    for j in range(R):
        pos[order[j]] = j
    nb = 0
    ni = 0
    for rt in range(R):
        if not _ps_fits(U, rt, n):
            continue
        if A1[rt] == A0[rt] or A0[rt] <= 0 or pos[rt] > jJ:
            base[nb] = rt
            nb += 1
        else:
            ins[ni] = rt
            ni += 1
    # ---- the PS sites on the shared fill
    if nb > 0:
        C = fl[3 * n1:3 * n1 + nb]
        Qg = fl[3 * n1 + R:3 * n1 + R + nb]
        for i in range(nb):
            C[i] = 0.0
            Qg[i] = 0.0
        N = 1
        filled = 0
        ap = 0  # the last full segment's workers (its prices in Qg)
        for j in range(R):
            r = order[j]
            a = A0[r]
            if a <= 0:
                continue
            top = filled + a
            hi = min(top, n_max)
            # the costs C of the full segments, this segment's prices, the least cost at its last N
            kh = steps[hi - filled]
            bh = np.inf
            for i in range(nb):
                c = C[i] + ap * Qg[i] if ap > 0 else C[i]
                C[i] = c
                qv = q[r, base[i]]
                Qg[i] = qv
                v = c + kh * qv
                bh = v if v < bh else bh
            kl = steps[N - filled]
            ns = 0
            for i in range(nb):  # the PS sites not above bh at the segment's first N
                if not C[i] + kl * Qg[i] > bh:
                    surv[ns] = i
                    ns += 1
            for x in range(N, hi + 1):  # the least cost among the survivors (ns >= 1: bh's PS site is one)
                sx = steps[x - filled]
                bv = np.inf
                bi = 0
                if tie_le:
                    for jj in range(ns):
                        i = surv[jj]
                        v = C[i] + sx * Qg[i]
                        bt = v <= bv
                        bv = v if bt else bv
                        bi = i if bt else bi
                else:
                    for jj in range(ns):
                        i = surv[jj]
                        v = C[i] + sx * Qg[i]
                        bt = v < bv
                        bv = v if bt else bv
                        bi = i if bt else bi
                cost[x] = bv
                best_ps[x] = base[bi]
            N = hi + 1
            if N > n_max:
                break
            ap = a
            filled = top
    # ---- the others: _pa_all_n_b's loop, merged by cost then index
    for ii in range(ni):
        rt = ins[ii]
        N = _site_costs(rt, order, q, n_max, A0, A1, steps, cv)
        if tie_le:
            for x in range(1, N):
                cN = cv[x]
                cur = cost[x]
                bt = cN < cur or (cN == cur and rt > best_ps[x])
                cost[x] = cN if bt else cur
                best_ps[x] = rt if bt else best_ps[x]
        else:
            for x in range(1, N):
                cN = cv[x]
                cur = cost[x]
                bt = cN < cur or (cN == cur and rt < best_ps[x])
                cost[x] = cN if bt else cur
                best_ps[x] = rt if bt else best_ps[x]
    return cost, best_ps


@njit_inline
def _pa_all_n_nn_fast(U, order, q, n, n_max, tie_le, A0, A1):
    """:func:`_pa_all_n_nn` (the same costs, PS sites and sums) with the segment's least cost at its last ``N``
    (``bh``) taken as the least of four running minima (sites ``i mod 4``) instead of one: a minimum of values that
    are never NaN nor -0.0 (sums of products of prices ≥ 0 and counts ≥ 1, from +0.0) is the same in any order, and
    four independent chains of selects run about four times as fast as one chain, whose latency bounded the loop;
    the survivors listed without a branch. :func:`_pa_all_n_nn` is kept as the reference."""
    R, K = U.shape
    n1 = n_max + 1
    # one float block (the costs, the integers 0..n_max as floats, one PS site's costs, and below C and Qg) and one
    # int block (the PS sites, then pos, base, ins, surv): two allocations instead of four
    fl = np.empty(3 * n1 + 2 * R)
    cost = fl[:n1]
    steps = fl[n1:2 * n1]
    cv = fl[2 * n1:3 * n1]
    ib = np.empty(n1 + 4 * R, np.int64)
    best_ps = ib[:n1]
    for x in range(n1):
        cost[x] = np.inf
        steps[x] = x
        best_ps[x] = -1
    # the fill without a PS: where it reaches n_max (order position jJ; R - 1 if it never does)
    jJ = R - 1
    tot = 0
    for j in range(R):
        tot += A0[order[j]]
        if tot >= n_max:
            jJ = j
            break
    pos = ib[n1:n1 + R]
    base = ib[n1 + R:n1 + 2 * R]  # PS sites on the shared fill, ascending
    ins = ib[n1 + 2 * R:n1 + 3 * R]  # the others, ascending
    surv = ib[n1 + 3 * R:]
    for j in range(R):
        pos[order[j]] = j
    nb = 0
    ni = 0
    for rt in range(R):
        if not _ps_fits(U, rt, n):
            continue
        if A1[rt] == A0[rt] or A0[rt] <= 0 or pos[rt] > jJ:
            base[nb] = rt
            nb += 1
        else:
            ins[ni] = rt
            ni += 1
    # ---- the PS sites on the shared fill
    if nb > 0:
        C = fl[3 * n1:3 * n1 + nb]
        Qg = fl[3 * n1 + R:3 * n1 + R + nb]
        for i in range(nb):
            C[i] = 0.0
            Qg[i] = 0.0
        N = 1
        filled = 0
        ap = 0  # the last full segment's workers (its prices in Qg)
        for j in range(R):
            r = order[j]
            a = A0[r]
            if a <= 0:
                continue
            top = filled + a
            hi = min(top, n_max)
            # the costs C of the full segments, this segment's prices, the least cost at its last N
            kh = steps[hi - filled]
            b0 = np.inf
            b1 = np.inf
            b2 = np.inf
            b3 = np.inf
            if ap > 0:
                for i in range(nb):
                    C[i] = C[i] + ap * Qg[i]
            i = 0
            while i + 4 <= nb:
                q0 = q[r, base[i]]
                q1 = q[r, base[i + 1]]
                q2 = q[r, base[i + 2]]
                q3 = q[r, base[i + 3]]
                Qg[i] = q0
                Qg[i + 1] = q1
                Qg[i + 2] = q2
                Qg[i + 3] = q3
                v0 = C[i] + kh * q0
                v1 = C[i + 1] + kh * q1
                v2 = C[i + 2] + kh * q2
                v3 = C[i + 3] + kh * q3
                b0 = v0 if v0 < b0 else b0
                b1 = v1 if v1 < b1 else b1
                b2 = v2 if v2 < b2 else b2
                b3 = v3 if v3 < b3 else b3
                i += 4
            while i < nb:
                qv = q[r, base[i]]
                Qg[i] = qv
                v = C[i] + kh * qv
                b0 = v if v < b0 else b0
                i += 1
            b0 = b1 if b1 < b0 else b0
            b2 = b3 if b3 < b2 else b2
            bh = b2 if b2 < b0 else b0
            kl = steps[N - filled]
            ns = 0
            for i in range(nb):  # the PS sites not above bh at the segment's first N
                surv[ns] = i
                ns += 0 if C[i] + kl * Qg[i] > bh else 1
            for x in range(N, hi + 1):  # the least cost among the survivors (ns >= 1: bh's PS site is one)
                sx = steps[x - filled]
                bv = np.inf
                bi = 0
                if tie_le:
                    for jj in range(ns):
                        i = surv[jj]
                        v = C[i] + sx * Qg[i]
                        bt = v <= bv
                        bv = v if bt else bv
                        bi = i if bt else bi
                else:
                    for jj in range(ns):
                        i = surv[jj]
                        v = C[i] + sx * Qg[i]
                        bt = v < bv
                        bv = v if bt else bv
                        bi = i if bt else bi
                cost[x] = bv
                best_ps[x] = base[bi]
            N = hi + 1
            if N > n_max:
                break
            ap = a
            filled = top
    # ---- the others: _pa_all_n_b's loop, merged by cost then index
    for ii in range(ni):
        rt = ins[ii]
        N = _site_costs(rt, order, q, n_max, A0, A1, steps, cv)
        if tie_le:
            for x in range(1, N):
                cN = cv[x]
                cur = cost[x]
                bt = cN < cur or (cN == cur and rt > best_ps[x])
                cost[x] = cN if bt else cur
                best_ps[x] = rt if bt else best_ps[x]
        else:
            for x in range(1, N):
                cN = cv[x]
                cur = cost[x]
                bt = cN < cur or (cN == cur and rt < best_ps[x])
                cost[x] = cN if bt else cur
                best_ps[x] = rt if bt else best_ps[x]
    return cost, best_ps


@njit
def fill(U, order, m, n, N, ps):
    """The Q-greedy worker fill of PA for a given PS site (``y`` (R,), or all -1 if N does not fit)."""
    R = U.shape[0]
    y = np.zeros(R, np.int64)
    rem = N
    for j in range(R):
        r = order[j]
        a = _mw(U, r, m, n, r == ps)
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


@njit
def n_cap(cap, m, n):
    """(n_jobs,) most workers each job can place on the empty cluster (one PS included), at least 1: per job, the
    best PS site's ``Σ_r A_r − A_ps + A'_ps`` (``A`` without, ``A'`` with the PS reserved; ``floor(free/m + 1e-9)``
    per resource, 0 if the site lacks room, at most :data:`BIG`), over the sites that can host the PS. The values
    are integers below 2**53, so the sums are exact in any order (``_reference.n_cap``, numpy)."""
    R, K = cap.shape
    nj = m.shape[0]
    out = np.ones(nj, np.int64)
    a0 = np.empty(R)
    a1 = np.empty(R)
    # rep[r]: the first site with the same capacity row as r (its bounds are the same numbers: copied)
    rep = np.empty(R, np.int64)
    for r in range(R):
        rep[r] = r
        for r2 in range(r):
            same = True
            for k in range(K):
                if cap[r2, k] != cap[r, k]:
                    same = False
                    break
            if same:
                rep[r] = r2
                break
    for i in range(nj):
        for w in range(2):
            for r in range(R):
                if rep[r] != r:
                    if w == 0:
                        a0[r] = a0[rep[r]]
                    else:
                        a1[r] = a1[rep[r]]
                    continue
                a = np.inf
                neg = False
                for k in range(K):
                    free = cap[r, k] - (n[i, k] if w == 1 else 0.0)
                    if free < -_EPS:
                        neg = True
                    if m[i, k] > 0:
                        v = math.floor(free / m[i, k] + 1e-9)
                        if v < a:
                            a = v
                if neg:
                    a = 0.0
                a = min(max(a, 0.0), float(BIG))
                if w == 0:
                    a0[r] = a
                else:
                    a1[r] = a
        if R == 0:
            continue
        tot0 = 0.0
        for r in range(R):
            tot0 += a0[r]
        best = -np.inf
        for r in range(R):
            ok = True
            for k in range(K):
                if not cap[r, k] >= n[i, k] - _EPS:
                    ok = False
            v = tot0 - a0[r] + a1[r] if ok else 0.0
            if v > best:
                best = v
        out[i] = int(max(1.0, min(best, float(BIG))))
    return out


@njit
def window_table(tot, kappa, w, offset):
    """``(n_jobs, w)`` float: ``ceil(tot_i / (κ_i·N)) − 1 + offset`` for ``N = 1..w−1`` (column 0: ``offset − 1``),
    the window ends of ``candidates._job_table``: integer arithmetic (exact), then one conversion per entry."""
    nj = tot.shape[0]
    out = np.empty((nj, w))
    for i in range(nj):
        out[i, 0] = float(offset - 1)
        for N in range(1, w):
            kn_ = kappa[i] * N
            out[i, N] = float((tot[i] + kn_ - 1) // kn_ - 1 + offset)
    return out


PURE = {
    name: globals()[name].py_func
    for name in ("site_order", "max_workers", "pa", "pa_all_n", "fill", "split", "dta", "prop_quota", "earliest_fit",
                 "window_transfer")
}


# --------------------------------------------------------------------------- the commit mode's per-step kernels
# One call builds the whole candidate table of an arriving job (both tentative enumerations, the worker grid, the
# ``now``/``wait`` rows, the wait limit, the v1 pruning), one call runs a committed plan, one call writes the
# observation. Each reproduces, operation for operation, the numpy code kept in ``_reference.py`` (the oracle of
# the differential tests in ``tests/speed/test_speed_wireless_udl.py``).


@njit
def latency_scalar(kind, tau, b, tau1, tau2, c, L, rate):
    """f(L) for one latency ``L`` (the scalar path of :func:`~.costs.latency_cost`, the same operations)."""
    if kind == 0:
        return tau * math.exp(min(rate * L, 700.0))
    if kind == 1:
        return tau * L + b
    if kind == 3:
        return b / (math.exp(min(-rate * (L - c), 700.0)) + 1.0)
    return tau1 if L < c else tau2


@njit_inline
def _split_into(y, used_sites, n_used, M, tot_m, kappa, h, order, d):
    """:func:`split` into the zero scratch ``d`` (``y`` non-zero only on ``used_sites[:n_used]``, which lists those
    sites in the sequence of ``order``; ``tot_m = Σ M``)."""
    tot_c = 0
    sd = 0
    for j in range(n_used):
        r = used_sites[j]
        c = h * kappa * y[r]
        tot_c += c
        d[r] = min(c, M[r])
        sd += d[r]
    rem = min(tot_m, tot_c) - sd
    # split's spare pass visits ``order``, where only the sites with workers take any (x = min(0 − d, rem) <= 0
    # elsewhere): ``used_sites`` lists exactly them in ``order``'s sequence (every caller's fill walks ``order``)
    for j in range(n_used):
        if rem <= 0:
            break
        r = used_sites[j]
        x = min(h * kappa * y[r] - d[r], rem)
        if x > 0:
            d[r] += x
            rem -= x


@njit_inline
def _dta_route(src_order, q, H, sent, used, count_used, touched, track):
    """DTA's deficit routing (the second loop of :func:`dta`, Alg 3) on scratch buffers: each site ``r`` short of
    data (``H[r] < 0``), in index order, takes ``min(H − sent, need)`` from each of its sources ``src_order[r]``
    (cheapest first) with a surplus ``H > 0`` until its need is met. ``cost += q[s, r]·x`` one source at a time
    from 0.0, as ``dta`` adds (the same sums); ``sent`` grows by what each source gives (zero on entry), ``used``
    too if ``count_used``; with ``track`` the sources drawn from are listed in ``touched[:nt]`` in the order first
    drawn. The flags are constants at each call site (compiled away); an array a caller does not use may be any
    int64 array. Returns ``(cost, nt)``."""
    R = src_order.shape[0]
    cost = 0.0
    nt = 0
    for r in range(R):
        if H[r] < 0:
            need = -H[r]
            for j in range(R):
                s = src_order[r, j]
                if s == r or H[s] <= 0:
                    continue
                x = min(H[s] - sent[s], need)
                if x > 0:
                    if track and sent[s] == 0:
                        touched[nt] = s
                        nt += 1
                    sent[s] += x
                    if count_used:
                        used[s] += x
                    need -= x
                    cost += q[s, r] * x
                if need == 0:
                    break
    return cost, nt


@njit_inline
def _complete_transfer(y, used_sites, n_used, M, tot_m, kappa, h, order, q, src_order, d, H, sent, touched):
    """:func:`window_transfer` with ``prop = False`` (SPLIT with ``h`` slots, one DTA on ``M``) on scratch
    buffers: ``d`` and ``sent`` zero and ``H == M`` on entry, restored on exit; ``y`` non-zero only on
    ``used_sites[:n_used]``. The same additions in the same order as ``split`` + ``dta``."""
    R = y.shape[0]
    _split_into(y, used_sites, n_used, M, tot_m, kappa, h, order, d)
    for j in range(n_used):
        r = used_sites[j]
        H[r] = M[r] - d[r]
    cost = 0.0
    ns = 0
    for s in range(R):  # the sources with a surplus, ascending
        if H[s] > 0:
            ns += 1
    if 3 * ns < R:  # few sources: each deficit takes the cheapest one left, (q[s, r], s) least, as dta's scan
        nsrc = 0
        for s in range(R):
            if H[s] > 0:
                touched[nsrc] = s
                nsrc += 1
        for r in range(R):
            if H[r] < 0:
                need = -H[r]
                while need > 0:
                    bs = -1
                    bq = 0.0
                    for j in range(nsrc):
                        s = touched[j]
                        if s != r and H[s] - sent[s] > 0 and (bs < 0 or q[s, r] < bq):
                            bs = s
                            bq = q[s, r]
                    if bs < 0:
                        break
                    x = min(H[bs] - sent[bs], need)
                    sent[bs] += x
                    need -= x
                    cost += q[bs, r] * x
        for j in range(nsrc):
            sent[touched[j]] = 0
    else:
        # dta's scan (deficits only where d > M, sites with workers, in index order), with each source's surplus
        # left kept in ``sent`` (H − what it gave so far; 0 for the sites without a surplus, the deficits
        # included): one load and one test per source visited instead of three, the same x and the same sums
        for s in range(R):
            v = H[s]
            sent[s] = v if v > 0 else 0
        for r in range(R):
            if H[r] < 0:
                need = -H[r]
                for j in range(R):
                    s = src_order[r, j]
                    a = sent[s]
                    if a > 0:
                        x = a if a < need else need
                        sent[s] = a - x
                        need -= x
                        cost += q[s, r] * x
                        if need == 0:
                            break
        for s in range(R):
            sent[s] = 0
    for j in range(n_used):
        r = used_sites[j]
        H[r] = M[r]
        d[r] = 0
    return cost


@njit_inline
def _fill_fast(y, used_sites, A0, A1, order, N, ps):
    """:func:`fill` with the per-site worker bounds precomputed (``A1`` with the PS, ``A0`` without); ``y`` zero on
    entry. Returns the number of sites used (``-1``, ``y`` all -1, if N does not fit)."""
    R = y.shape[0]
    rem = N
    nu = 0
    for j in range(R):
        r = order[j]
        a = A1[r] if r == ps else A0[r]
        take = min(a, rem)
        y[r] = take
        if take != 0:
            used_sites[nu] = r
            nu += 1
        rem -= take
        if rem == 0:
            break
    if rem > 0:
        y[:] = -1
        return -1
    return nu


@njit_inline
def _tent_transfer(N, L, ps, U, cap, qbar, q, src_order, M, tot_m, D, kappa, order, A0, A1, prop, beta, y, used_sites,
                   d, H, sent, touched):
    """``Σ q·g`` of :func:`window_estimate` for one N (``ps[N] >= 0``)."""
    nu = _fill_fast(y, used_sites, A0, A1, order, N, ps[N])
    if nu < 0 or prop:
        c = window_transfer(y.copy(), M, D, kappa, L[N], order, q, src_order, prop, cap, qbar, beta)
        y[:] = 0
    else:
        c = _complete_transfer(y, used_sites, nu, M, tot_m, kappa, L[N], order, q, src_order, d, H, sent, touched)
        for j in range(nu):
            y[used_sites[j]] = 0
    return c


@njit_inline
def _windows(tot, kappa, n_max):
    """``L[N] = ceil(tot / (κ·N))`` for ``N = 0..n_max`` (``L[0] = 0``): the window lengths of the tentative
    enumeration, from a floating-point quotient corrected in integers (exact; no integer division)."""
    L = np.zeros(n_max + 1, np.int64)
    for N in range(1, n_max + 1):
        kn_ = kappa * N
        v = int(math.ceil(tot / kn_))
        if (v - 1) * kn_ >= tot:
            v -= 1
        elif v * kn_ < tot:
            v += 1
        L[N] = v
    return L


@njit
def _tent_best(U, cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop, param_mb, chunk_mb, lat,
               y, used_sites, d, H, sent, touched, q_nonneg, L, order_pre):
    """Okita's tentative enumeration (:func:`~.simulator.tentative`) under ``U``: returns ``(L, param, transfer,
    ps, best, order, A0, A1)`` with ``param``/``transfer`` as ``tentative`` has them (``inf`` where N does not fit)
    and ``best`` its argmin of ``param + transfer + lat`` (first minimum, 0 if none is finite).

    The transfer of an N is computed only if a lower bound of its total does not exceed the least total found so
    far (the N visited by increasing bound): ``transfer`` is ``nan`` where it was not needed; ``best`` is the
    same as with every N computed. The bound, ``param + δ·floor + lat`` with a floor of the transfer under the
    ``complete`` sampling (the chunks SPLIT leaves at each site, ``(M_s − h·κ·y_s)^+``, all moved away from ``s``
    to sites with workers, each at the cheapest such price; less 1e-9 of it and of ``Σ_s M_s·price_s`` for the
    rounding of the sums; 0 under ``proportional``), is below the total in floating point too: rounding is
    monotone. ``q_nonneg`` (every price ≥ 0): PA's cost vector by :func:`_pa_all_n_nn`. ``L``: the windows
    (:func:`_windows`; returned as is). ``order_pre``: the site order of ``U``, ``M``, ``D`` when the caller has it
    (:func:`site_order`'s permutation; read only), else an empty array (computed here)."""
    if order_pre.shape[0] > 0:
        order = order_pre
    else:
        order, _ = site_order(U, cap, qbar, M, D, beta[0], beta[1], beta[2])
    R = U.shape[0]
    # the int scratch (the worker bounds, the search's candidates) and the float one (param, transfer, the bounds,
    # Tpre, cur) in one block each: fewer allocations
    ib = np.empty(2 * R + n_max + 1, np.int64)
    A0 = ib[:R]
    A1 = ib[R:2 * R]
    for r in range(R):
        A0[r] = _mw(U, r, m, n, False)
        A1[r] = _mw(U, r, m, n, True)
    if q_nonneg:
        unit, ps = _pa_all_n_nn(U, order, q, n, n_max, tie_le, A0, A1)
    else:
        unit, ps = _pa_all_n_b(U, order, q, n, n_max, tie_le, A0, A1)
    tot = 0
    for r in range(R):
        tot += M[r]
    n1 = n_max + 1
    fb = np.empty(3 * n1 + 2 * R)
    for x in range(3 * n1):
        fb[x] = np.inf
    param = fb[:n1]
    transfer = fb[n1:2 * n1]
    lb = fb[2 * n1:3 * n1]
    # qpre[j, s]: the cheapest price from s to a site of order[:j + 1] other than s (0 where none), Tpre[j] =
    # Σ_s M_s·qpre[j, s] (rows computed as the fill front reaches them: nq so far)
    qpre = np.empty((R, R))
    Tpre = fb[3 * n1:3 * n1 + R]
    cur = fb[3 * n1 + R:]
    for r in range(R):
        Tpre[r] = 0.0
        cur[r] = np.inf
    nq = 0
    # The floor of the transfer: SPLIT leaves (M_s − h·κ·y_s)^+ chunks of site s untrained there (a site short
    # of its own data has no spare capacity), all of them moved (Σ d = Σ M since h·κ·N ≥ Σ M) to sites with
    # workers (the fill's sites, order[:jf + 1]), each at qpre[jf, s] at least. The fill y of N is kept from
    # N − 1 (one more worker at the fill front) while the PS site stays, and Σ_s min(h·κ·y_s, M_s)·qpre[jf, s]
    # with it while the window h and the fill front jf stay.
    cur_ps = -2
    jf = -1  # order position of the fill front
    wf = -1  # the fill front of S's prices
    h = -1
    S = 0.0  # Σ_s min(h·κ·y_s, M_s)·qpre[wf, s]
    for N in range(1, n_max + 1):
        if ps[N] < 0:
            continue
        param[N] = L[N] * param_mb * unit[N]
        transfer[N] = np.nan
        fl = 0.0
        if not prop:
            if ps[N] != cur_ps:
                for j in range(jf + 1):
                    y[order[j]] = 0
                cur_ps = ps[N]
                rem = N
                jf = -1
                for j in range(R):
                    r = order[j]
                    a = A1[r] if r == cur_ps else A0[r]
                    take = min(a, rem)
                    y[r] = take
                    rem -= take
                    jf = j
                    if rem == 0:
                        break
                h = -1
                wf = jf
            else:
                r = order[jf]
                while y[r] >= (A1[r] if r == cur_ps else A0[r]):
                    jf += 1
                    r = order[jf]
                y[r] += 1
                if jf != wf:
                    wf = jf
                    h = -1
                elif L[N] == h:
                    S += (min(h * kappa * y[r], M[r]) - min(h * kappa * (y[r] - 1), M[r])) * qpre[wf, r]
            while nq <= wf:
                r2 = order[nq]
                # the running minimum without branches on the prices (a select per site), then the sum in site order
                for s in range(R):
                    c = cur[s]
                    v = q[s, r2]
                    c = v if (v < c and s != r2) else c
                    cur[s] = c
                    qpre[nq, s] = c if c < np.inf else 0.0
                T = 0.0
                for s in range(R):
                    T += M[s] * qpre[nq, s]
                Tpre[nq] = T
                nq += 1
            if L[N] != h:
                h = L[N]
                S = 0.0
                for j in range(jf + 1):
                    r = order[j]
                    S += min(h * kappa * y[r], M[r]) * qpre[wf, r]
            T = Tpre[wf]
            fl = max((T - S) * (1.0 - 1e-9) - 1e-9 * T, 0.0)
        lb[N] = param[N] + chunk_mb * fl + lat[N]
    for j in range(jf + 1):
        y[order[j]] = 0
    # the N by increasing bound (ties: smaller N first, np.argsort(lb, kind="mergesort")'s order), the search
    # stopping at the first bound above the least total found: the first N (least bound), then, in that order, the
    # N whose bound is not above its total (the only ones the search can reach: the least total only falls)
    best = 0
    bv = np.inf
    N1 = -1
    for x in range(1, n_max + 1):
        if ps[x] >= 0 and (N1 < 0 or lb[x] < lb[N1]):
            N1 = x
    if N1 < 0:
        return L, param, transfer, ps, best, order, A0, A1
    cand = ib[2 * R:]
    nc = 1
    cand[0] = N1
    for it in range(n_max + 1):
        N = cand[it]
        if lb[N] > bv:
            break
        transfer[N] = chunk_mb * _tent_transfer(N, L, ps, U, cap, qbar, q, src_order, M, tot, D, kappa, order, A0, A1,
                                                prop, beta, y, used_sites, d, H, sent, touched)
        v = param[N] + transfer[N] + lat[N]
        if v < bv or (v == bv and N < best):
            bv = v
            best = N
        if it == 0:  # the rest of the search: the N with lb <= bv, by (lb, N) (insertion: a handful)
            for x in range(1, n_max + 1):
                if x != N1 and ps[x] >= 0 and lb[x] <= bv:
                    p = nc
                    while p > 1 and (lb[cand[p - 1]] > lb[x] or (lb[cand[p - 1]] == lb[x] and cand[p - 1] > x)):
                        cand[p] = cand[p - 1]
                        p -= 1
                    cand[p] = x
                    nc += 1
        if it + 1 >= nc:
            break
    return L, param, transfer, ps, best, order, A0, A1


@njit
def _tent_best_fast(U, cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop, param_mb, chunk_mb,
                    lat, y, used_sites, d, H, sent, touched, q_nonneg, L, order_pre):
    """:func:`_tent_best` (the same arguments, results and bounds, so the same N searched) in less time: PA by
    :func:`_pa_all_n_nn_fast`, and the bounds' ``Tpre[j] = Σ_s M_s·qpre[j, s]`` summed after the loop over N, four
    rows at a time (four independent chains of additions, each row's sum in site order as before), instead of one
    row at a time as the fill front reaches it (a chain of R dependent additions each); the loop keeps each N's
    ``S`` and fill front for it. :func:`_tent_best` is kept as the reference."""
    if order_pre.shape[0] > 0:
        order = order_pre
    else:
        order, _ = site_order(U, cap, qbar, M, D, beta[0], beta[1], beta[2])
    R = U.shape[0]
    # the int scratch (the worker bounds, the search's candidates) and the float one (param, transfer, the bounds,
    # Tpre, cur) in one block each: fewer allocations
    ib = np.empty(2 * R + 2 * (n_max + 1), np.int64)
    A0 = ib[:R]
    A1 = ib[R:2 * R]
    for r in range(R):
        A0[r] = _mw(U, r, m, n, False)
        A1[r] = _mw(U, r, m, n, True)
    if q_nonneg:
        unit, ps = _pa_all_n_nn_fast(U, order, q, n, n_max, tie_le, A0, A1)
    else:
        unit, ps = _pa_all_n_b(U, order, q, n, n_max, tie_le, A0, A1)
    tot = 0
    for r in range(R):
        tot += M[r]
    n1 = n_max + 1
    fb = np.empty(4 * n1 + 2 * R)
    for x in range(3 * n1):
        fb[x] = np.inf
    param = fb[:n1]
    transfer = fb[n1:2 * n1]
    lb = fb[2 * n1:3 * n1]
    # qpre[j, s]: the cheapest price from s to a site of order[:j + 1] other than s (0 where none), Tpre[j] =
    # Σ_s M_s·qpre[j, s] (rows computed as the fill front reaches them: nq so far)
    qpre = np.empty((R, R))
    Tpre = fb[3 * n1:3 * n1 + R]
    cur = fb[3 * n1 + R:3 * n1 + 2 * R]
    Sv = fb[3 * n1 + 2 * R:]  # each N's S and fill front wf: its T (Tpre[wf]) summed after the loop
    wv = ib[2 * R + n1:]
    for r in range(R):
        Tpre[r] = 0.0
        cur[r] = np.inf
    nq = 0
    # The floor of the transfer: SPLIT leaves (M_s − h·κ·y_s)^+ chunks of site s untrained there (a site short
    # of its own data has no spare capacity), all of them moved (Σ d = Σ M since h·κ·N ≥ Σ M) to sites with
    # workers (the fill's sites, order[:jf + 1]), each at qpre[jf, s] at least. The fill y of N is kept from
    # N − 1 (one more worker at the fill front) while the PS site stays, and Σ_s min(h·κ·y_s, M_s)·qpre[jf, s]
    # with it while the window h and the fill front jf stay.
    cur_ps = -2
    jf = -1  # order position of the fill front
    wf = -1  # the fill front of S's prices
    h = -1
    S = 0.0  # Σ_s min(h·κ·y_s, M_s)·qpre[wf, s]
    for N in range(1, n_max + 1):
        if ps[N] < 0:
            continue
        param[N] = L[N] * param_mb * unit[N]
        transfer[N] = np.nan
        fl = 0.0
        if not prop:
            if ps[N] != cur_ps:
                for j in range(jf + 1):
                    y[order[j]] = 0
                cur_ps = ps[N]
                rem = N
                jf = -1
                for j in range(R):
                    r = order[j]
                    a = A1[r] if r == cur_ps else A0[r]
                    take = min(a, rem)
                    y[r] = take
                    rem -= take
                    jf = j
                    if rem == 0:
                        break
                h = -1
                wf = jf
            else:
                r = order[jf]
                while y[r] >= (A1[r] if r == cur_ps else A0[r]):
                    jf += 1
                    r = order[jf]
                y[r] += 1
                if jf != wf:
                    wf = jf
                    h = -1
                elif L[N] == h:
                    S += (min(h * kappa * y[r], M[r]) - min(h * kappa * (y[r] - 1), M[r])) * qpre[wf, r]
            while nq <= wf:
                r2 = order[nq]
                # the running minimum without branches on the prices (a select per site; Tpre after the loop)
                for s in range(R):
                    c = cur[s]
                    v = q[s, r2]
                    c = v if (v < c and s != r2) else c
                    cur[s] = c
                    qpre[nq, s] = c if c < np.inf else 0.0
                nq += 1
            if L[N] != h:
                h = L[N]
                S = 0.0
                for j in range(jf + 1):
                    r = order[j]
                    S += min(h * kappa * y[r], M[r]) * qpre[wf, r]
            Sv[N] = S
            wv[N] = wf
        else:
            lb[N] = param[N] + chunk_mb * fl + lat[N]
    for j in range(jf + 1):
        y[order[j]] = 0
    if not prop:
        # Tpre[j] = Σ_s M_s·qpre[j, s] in site order, four rows at a time (four independent chains of additions, each
        # row's sum in the same order as alone)
        j = 0
        while j + 4 <= nq:
            t0 = 0.0
            t1 = 0.0
            t2 = 0.0
            t3 = 0.0
            for s in range(R):
                ms = M[s]
                t0 += ms * qpre[j, s]
                t1 += ms * qpre[j + 1, s]
                t2 += ms * qpre[j + 2, s]
                t3 += ms * qpre[j + 3, s]
            Tpre[j] = t0
            Tpre[j + 1] = t1
            Tpre[j + 2] = t2
            Tpre[j + 3] = t3
            j += 4
        while j < nq:
            T = 0.0
            for s in range(R):
                T += M[s] * qpre[j, s]
            Tpre[j] = T
            j += 1
        for N in range(1, n_max + 1):
            if ps[N] >= 0:
                T = Tpre[wv[N]]
                fl = max((T - Sv[N]) * (1.0 - 1e-9) - 1e-9 * T, 0.0)
                lb[N] = param[N] + chunk_mb * fl + lat[N]
    # the N by increasing bound (ties: smaller N first, np.argsort(lb, kind="mergesort")'s order), the search
    # stopping at the first bound above the least total found: the first N (least bound), then, in that order, the
    # N whose bound is not above its total (the only ones the search can reach: the least total only falls)
    best = 0
    bv = np.inf
    N1 = -1
    for x in range(1, n_max + 1):
        if ps[x] >= 0 and (N1 < 0 or lb[x] < lb[N1]):
            N1 = x
    if N1 < 0:
        return L, param, transfer, ps, best, order, A0, A1
    cand = ib[2 * R:]
    nc = 1
    cand[0] = N1
    for it in range(n_max + 1):
        N = cand[it]
        if lb[N] > bv:
            break
        transfer[N] = chunk_mb * _tent_transfer(N, L, ps, U, cap, qbar, q, src_order, M, tot, D, kappa, order, A0, A1,
                                                prop, beta, y, used_sites, d, H, sent, touched)
        v = param[N] + transfer[N] + lat[N]
        if v < bv or (v == bv and N < best):
            bv = v
            best = N
        if it == 0:  # the rest of the search: the N with lb <= bv, by (lb, N) (insertion: a handful)
            for x in range(1, n_max + 1):
                if x != N1 and ps[x] >= 0 and lb[x] <= bv:
                    p = nc
                    while p > 1 and (lb[cand[p - 1]] > lb[x] or (lb[cand[p - 1]] == lb[x] and cand[p - 1] > x)):
                        cand[p] = cand[p - 1]
                        p -= 1
                    cand[p] = x
                    nc += 1
        if it + 1 >= nc:
            break
    return L, param, transfer, ps, best, order, A0, A1


@njit_inline
def _pa_fast(U, order, q, m, n, N, tie_le, A0, A1, y, used_sites, q_nonneg):
    """:func:`pa` (the same sums in the same order, the same winner) without rebuilding ``y`` for every PS site:
    ``A0``/``A1`` are the per-site worker bounds under ``U`` (``max_workers`` without / with the PS), a PS site
    whose bound total is below N is skipped (its fill would end short), and ``y`` (scratch) gets the winner's
    fill; ``q_nonneg`` (every price ≥ 0): a PS site's fill stops once its running cost exceeds the best (it can only
    grow). Returns ``(unit_cost, ps, sites used)``
    (``used_sites[:count]`` the sites with workers; ``ps = -1`` and ``y`` zero if no PS site admits N workers)."""
    R, K = U.shape
    tot0 = 0
    for r in range(R):
        tot0 += A0[r]
    best = np.inf
    best_ps = -1
    for rt in range(R):
        if not _ps_fits(U, rt, n) or tot0 - A0[rt] + A1[rt] < N:
            continue
        rem = N
        c = 0.0
        for j in range(R):
            r = order[j]
            a = A1[r] if r == rt else A0[r]
            take = min(a, rem)
            rem -= take
            c += q[r, rt] * take
            if rem == 0 or (q_nonneg and c > best):  # with prices >= 0 the sum only grows: this site loses
                break
        if c < best or (tie_le and c <= best):
            best = c
            best_ps = rt
    y[:] = 0
    nu = 0
    if best_ps >= 0:
        rem = N
        for j in range(R):
            r = order[j]
            take = min(A1[r] if r == best_ps else A0[r], rem)
            y[r] = take
            if take != 0:
                used_sites[nu] = r
                nu += 1
            rem -= take
            if rem == 0:
                break
    return best, best_ps, nu


@njit_inline
def _peak_of(dem, U, cap, y, ps):
    """Peak utilisation after adding ``dem`` over the (site, resource) pairs it uses (``_reference._peak``);
    ``dem`` is the demand of the plan ``(y, ps)`` (zero on the sites without workers or PS, which are skipped)."""
    R, K = dem.shape
    found = False
    mx = 0.0
    for r in range(R):
        if y[r] == 0 and r != ps:
            continue
        for k in range(K):
            if dem[r, k] > 0 and cap[r, k] > 0:
                v = (cap[r, k] - U[r, k] + dem[r, k]) / cap[r, k]
                if not found or v > mx:
                    mx = v
                found = True
    if not found:
        return 0.0
    return min(max(mx, 0.0), 1.0)


@njit_inline
def _demand(y, m, n, ps, dem):
    """``Simulator.demand`` into ``dem`` (R, K)."""
    R, K = dem.shape
    for r in range(R):
        for k in range(K):
            dem[r, k] = y[r] * m[k]
    if ps >= 0:
        for k in range(K):
            dem[ps, k] += n[k]


@njit_inline
def _site_tails(t, end, t_last, plan_y, plan_ps, F):
    """``F[r]``: the first slot ``≥ t`` from which site ``r`` is at its capacity in every later slot of the calendar
    (``end`` slots): 1 + the last slot of the committed plans using ``r`` (workers or PS) that end at or after ``t``
    (``t`` if none; at most ``end``). The calendar is the capacities minus the committed plans' demands over their
    windows (``Simulator.commit`` is its only writer, and sets ``t_last``, ``plan_y``, ``plan_ps``), so the other
    slots of ``r`` hold ``cap[r]``."""
    R = F.shape[0]
    for r in range(R):
        F[r] = t
    for i in range(t_last.shape[0]):
        e = t_last[i] + 1
        if e <= t:
            continue
        if e > end:
            e = end
        for r in range(R):
            if (plan_y[i, r] != 0 or r == plan_ps[i]) and e > F[r]:
                F[r] = e


@njit_inline
def _earliest(cal, cap, F, dem, t, win, U, used):
    """``candidates.earliest_fit`` (whole calendar), and ``U`` = ``cal[s:s + win].min(axis=0)`` on the sites where
    ``dem`` has a positive entry (the only entries :func:`_peak_of` reads) for the start ``s`` found (``used``: an
    (R,) int scratch). ``F`` (:func:`_site_tails`): site ``r`` holds ``cap[r]`` in the slots ``≥ F[r]``, which are
    checked (and enter ``U``) as ``cap[r]``.

    The first start of a run of ``win`` fitting slots, found by checking each candidate window from its last slot
    down: a slot that does not fit rules out every start up to it, so the next candidate starts just after it;
    the slots seen to fit are not read again. From ``Fu`` (the largest ``F`` of the used sites) on, every slot fits
    or none does (``dem`` against ``cap``); before, when ``dem`` fits ``cap``, a slot is checked on the sites whose
    ``F`` is above it only (``used`` sorted by decreasing ``F``)."""
    R, K = dem.shape
    end = cal.shape[0]
    if t + win > end:
        return -1
    nu = 0
    for r in range(R):
        for k in range(K):
            if dem[r, k] > 0:
                used[nu] = r
                nu += 1
                break
    if nu == 0:
        return t
    capfit = True  # dem fits cap on every used site
    Fu = t
    for j in range(nu):
        r = used[j]
        if F[r] > Fu:
            Fu = F[r]
        for k in range(K):
            if cap[r, k] < dem[r, k] - _EPS:
                capfit = False
    if capfit:
        for j in range(1, nu):  # by decreasing F
            r = used[j]
            x = j - 1
            while x >= 0 and F[used[x]] < F[r]:
                used[x + 1] = used[x]
                x -= 1
            used[x + 1] = r
    s = t
    good_lo = -1  # slots [good_lo, good_hi] are known to fit
    good_hi = -2
    found = -1
    while s + win <= end:
        if s >= Fu:
            if capfit:
                found = s
            break
        x = s + win - 1
        bad = -1
        if x >= Fu:
            if capfit:
                x = Fu - 1
            else:
                bad = x
        while bad < 0 and x >= s:
            if good_lo <= x <= good_hi:
                x = good_lo - 1
                continue
            ok = True
            for j in range(nu):
                r = used[j]
                if capfit and F[r] <= x:
                    break  # this site and the next ones hold cap at x, which dem fits
                for k in range(K):
                    v = cal[x, r, k] if x < F[r] else cap[r, k]
                    if v < dem[r, k] - _EPS:
                        ok = False
                        break
                if not ok:
                    break
            if not ok:
                bad = x
                break
            x -= 1
        if bad < 0:
            found = s
            break
        good_lo = bad + 1
        good_hi = s + win - 1
        s = bad + 1
    if found >= 0:
        e = found + win
        for j in range(nu):
            r = used[j]
            hi = min(e, F[r])
            # slot by slot, the K resources of a slot together (one cache line; resource by resource, each slot's
            # line was read K times): the same minima, min being exact in any order
            for k in range(K):
                U[r, k] = np.inf
            for x in range(found, hi):
                for k in range(K):
                    v = cal[x, r, k]
                    if v < U[r, k]:
                        U[r, k] = v
            if e > F[r]:
                for k in range(K):
                    v = cap[r, k]
                    if v < U[r, k]:
                        U[r, k] = v
    return found


@njit_inline
def _earliest_fast(cal, cap, F, dem, t, win, U, used):
    """:func:`_earliest` (the same start and minima; kept as the reference) with the sites the demand uses listed
    without a branch per entry when ``K == 4``: one test of the four entries ORed (``dem > 0``, as there) and an
    unconditional write, the count advanced by the test (a compare and a mispredicted early exit per entry were
    about a quarter of the function)."""
    R, K = dem.shape
    end = cal.shape[0]
    if t + win > end:
        return -1
    nu = 0
    if K == 4:
        for r in range(R):
            used[nu] = r
            nu += 1 if (dem[r, 0] > 0) | (dem[r, 1] > 0) | (dem[r, 2] > 0) | (dem[r, 3] > 0) else 0
    else:
        for r in range(R):
            for k in range(K):
                if dem[r, k] > 0:
                    used[nu] = r
                    nu += 1
                    break
    if nu == 0:
        return t
    capfit = True  # dem fits cap on every used site
    Fu = t
    for j in range(nu):
        r = used[j]
        if F[r] > Fu:
            Fu = F[r]
        for k in range(K):
            if cap[r, k] < dem[r, k] - _EPS:
                capfit = False
    if capfit:
        for j in range(1, nu):  # by decreasing F
            r = used[j]
            x = j - 1
            while x >= 0 and F[used[x]] < F[r]:
                used[x + 1] = used[x]
                x -= 1
            used[x + 1] = r
    s = t
    good_lo = -1  # slots [good_lo, good_hi] are known to fit
    good_hi = -2
    found = -1
    while s + win <= end:
        if s >= Fu:
            if capfit:
                found = s
            break
        x = s + win - 1
        bad = -1
        if x >= Fu:
            if capfit:
                x = Fu - 1
            else:
                bad = x
        while bad < 0 and x >= s:
            if good_lo <= x <= good_hi:
                x = good_lo - 1
                continue
            ok = True
            for j in range(nu):
                r = used[j]
                if capfit and F[r] <= x:
                    break  # this site and the next ones hold cap at x, which dem fits
                for k in range(K):
                    v = cal[x, r, k] if x < F[r] else cap[r, k]
                    if v < dem[r, k] - _EPS:
                        ok = False
                        break
                if not ok:
                    break
            if not ok:
                bad = x
                break
            x -= 1
        if bad < 0:
            found = s
            break
        good_lo = bad + 1
        good_hi = s + win - 1
        s = bad + 1
    if found >= 0:
        e = found + win
        for j in range(nu):
            r = used[j]
            hi = min(e, F[r])
            # slot by slot, the K resources of a slot together (one cache line; resource by resource, each slot's
            # line was read K times): the same minima, min being exact in any order
            for k in range(K):
                U[r, k] = np.inf
            for x in range(found, hi):
                for k in range(K):
                    v = cal[x, r, k]
                    if v < U[r, k]:
                        U[r, k] = v
            if e > F[r]:
                for k in range(K):
                    v = cap[r, k]
                    if v < U[r, k]:
                        U[r, k] = v
    return found


@njit_inline
def _window_min(cal, cap, F, t, w_run, win, Uw, chg):
    """Extend the running minimum ``Uw = cal[t:t + w_run].min(axis=0)`` to ``cal[t:t + win]`` (``win > w_run``),
    setting ``chg[r]`` for the sites whose minimum fell (every site when ``w_run == 0``). ``F``
    (:func:`_site_tails`): site ``r`` holds ``cap[r]`` in the slots ``≥ F[r]``, which enter the minimum once, as
    ``cap[r]`` (the same values as the slot-by-slot minimum). Returns whether some minimum fell below its value in
    the slots before ``t + w_run`` (``cal[t]`` when ``w_run == 0``)."""
    R, K = Uw.shape
    if w_run == 0:
        for r in range(R):
            for k in range(K):
                Uw[r, k] = cal[t, r, k]
            chg[r] = True
        w_run = 1
    if w_run >= win:
        return False
    any_fell = False
    lo = t + w_run
    e = t + win
    for r in range(R):
        hi = min(e, F[r])
        fell = False
        for x in range(lo, hi):
            for k in range(K):
                v = cal[x, r, k]
                if v < Uw[r, k]:
                    Uw[r, k] = v
                    fell = True
        if e > F[r]:  # the window now reaches the slots at cap
            for k in range(K):
                v = cap[r, k]
                if v < Uw[r, k]:
                    Uw[r, k] = v
                    fell = True
        if fell:
            chg[r] = True
            any_fell = True
    return any_fell


@njit_inline
def _window_min_fast(cal, cap, F, t, w_run, win, Uw, chg, capin):
    """:func:`_window_min` (the same minima, flags and result; kept as the reference) without revisiting the sites
    that have nothing left to take: ``capin[r]`` (an int scratch, reset when ``w_run == 0``) records that ``cap[r]``
    has entered ``Uw[r]``; a site with ``F[r] <= t + w_run`` has no calendar slot in the extension (it holds
    ``cap[r]`` from ``F[r]`` on), so once its minimum holds ``cap[r]`` a minimum with ``cap[r]`` again changes
    nothing and nothing falls. Most sites are free from the arrival slot on: the per-site loop was about 4 µs of a
    step, mostly these sites' repeated capacity checks."""
    R, K = Uw.shape
    if w_run == 0:
        for r in range(R):
            for k in range(K):
                Uw[r, k] = cal[t, r, k]
            chg[r] = True
            capin[r] = 0
        w_run = 1
    if w_run >= win:
        return False
    any_fell = False
    lo = t + w_run
    e = t + win
    for r in range(R):
        f = F[r]
        if f <= lo and capin[r] != 0:
            continue
        hi = min(e, f)
        fell = False
        if K == 4 and hi > lo:  # four running minima in registers (selects, no branch); fell: one of them fell
            u0 = Uw[r, 0]
            u1 = Uw[r, 1]
            u2 = Uw[r, 2]
            u3 = Uw[r, 3]
            for x in range(lo, hi):
                v0 = cal[x, r, 0]
                v1 = cal[x, r, 1]
                v2 = cal[x, r, 2]
                v3 = cal[x, r, 3]
                u0 = v0 if v0 < u0 else u0
                u1 = v1 if v1 < u1 else u1
                u2 = v2 if v2 < u2 else u2
                u3 = v3 if v3 < u3 else u3
            fell = u0 < Uw[r, 0] or u1 < Uw[r, 1] or u2 < Uw[r, 2] or u3 < Uw[r, 3]
            Uw[r, 0] = u0
            Uw[r, 1] = u1
            Uw[r, 2] = u2
            Uw[r, 3] = u3
        else:
            for x in range(lo, hi):
                for k in range(K):
                    v = cal[x, r, k]
                    if v < Uw[r, k]:
                        Uw[r, k] = v
                        fell = True
        if e > f:  # the window now reaches the slots at cap
            capin[r] = 1
            for k in range(K):
                v = cap[r, k]
                if v < Uw[r, k]:
                    Uw[r, k] = v
                    fell = True
        if fell:
            chg[r] = True
            any_fell = True
    return any_fell


@njit_inline
def block_layout(C, R):
    """``(Rb, X)``: the width ``max(R, 1)`` of :func:`candidate_block`'s int64 block and its rows after the ``C``
    rows of ``y``, enough for the ``10·C`` entries of ``ti`` and ``tf`` from the flat index ``C·Rb``."""
    Rb = R if R > 0 else 1
    return Rb, (10 * C + Rb - 1) // Rb


@njit
def candidate_table(cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop, param_mb, chunk_mb, lat,
                    cal, t, calendar_len, a_i, offset, kind, tau, b, tau1, tau2, c, rate, G, wait_max, grid,
                    lin_idx, lin_cnt, prune_on, prune_ratio, q_nonneg, t_last, plan_y, plan_ps, order_cap):
    """The candidate table of ``candidates.build_candidates`` (plus the v1 pruning when ``prune_ratio > 0``):
    :func:`candidate_block` without its block, ``(ti, y, tf, mask, n_tent, n_now, any_legal)`` (see there)."""
    _, ti, y, tf, mask, n_tent, n_now, legal = candidate_block(
        cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop, param_mb, chunk_mb, lat, cal, t,
        calendar_len, a_i, offset, kind, tau, b, tau1, tau2, c, rate, G, wait_max, grid, lin_idx, lin_cnt, prune_on,
        prune_ratio, q_nonneg, t_last, plan_y, plan_ps, order_cap)
    return ti, y, tf, mask, n_tent, n_now, legal


@njit
def candidate_block(cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop, param_mb, chunk_mb, lat,
                    cal, t, calendar_len, a_i, offset, kind, tau, b, tau1, tau2, c, rate, G, wait_max, grid,
                    lin_idx, lin_cnt, prune_on, prune_ratio, q_nonneg, t_last, plan_y, plan_ps, order_cap):
    """The candidate table of ``candidates.build_candidates`` (plus the v1 pruning when ``prune_ratio > 0``).

    ``lat`` (n_max+1,): the latency cost of each N's window ending (the tentative enumeration's, computed with
    numpy by the caller); ``grid``: the geometric worker grid of ``worker_grid`` for (n_max, G); ``lin_idx`` /
    ``lin_cnt``: ``np.unique(np.round(np.linspace(0, n - 1, k)))`` for every (n, k) (see ``candidates``).
    ``q_nonneg``: every price ``q`` is ≥ 0 (``Static.q_nonneg``; PA may then stop a PS site's fill early).
    ``t_last``, ``plan_y``, ``plan_ps``: the committed plans (``Simulator``'s), whose windows are the only slots
    below the capacities in ``cal`` (:func:`_site_tails`): the window minima and the earliest fits skip the rest.
    ``order_cap``: :func:`site_order` of the capacities for this ``M`` and ``D`` if the caller has it (the same
    permutation for every untrained job with data at every site: ``candidates._job_table`` computes it once per
    episode, about 1.5 µs of a ~70 µs table), else an empty array.
    Returns ``(blk, ti, y, tf, mask, n_tent, n_now, any_legal)``: ``ti`` (5, C) int64 the rows' ``mode, N, win,
    start, ps``, ``tf`` (5, C) float64 their ``transfer, param, latency, total, peak``, ``any_legal`` whether some row
    is legal (``mask.any()``, which costs the caller about 1.3 µs). ``y``, ``ti`` and ``tf`` are views of one int64
    block ``blk`` of shape ``(C + X, max(R, 1))`` (:func:`block_layout`): ``y`` its first ``C`` rows (when ``R > 0``),
    then, in the flat order from ``C·R``, ``ti`` and ``tf``'s float64 bits (zeros as the three separate arrays
    were); :func:`commit_step_block` hands the block back to Python as one array instead of three (each array
    Numba boxes costs about 0.3 µs).
    """
    R, K = cap.shape
    # the (R,) int and (R, K) float scratch arrays, each set one block (one allocation)
    wi = np.zeros((18, R), np.int64)
    wf = np.empty((6, R, K))
    y_s = wi[0]
    used_s = wi[1]
    d_s = wi[2]
    H_s = wi[3]
    for r in range(R):
        H_s[r] = M[r]
    sent_s = wi[4]
    touched_s = wi[5]
    tot_M = 0
    for r in range(R):
        tot_M += M[r]
    Lw = _windows(tot_M, kappa, n_max)
    Lc, param_c, tr_c, ps_c, n_tent, order_c, A0c, A1c = _tent_best_fast(
        cap, cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop, param_mb, chunk_mb, lat,
        y_s, used_s, d_s, H_s, sent_s, touched_s, q_nonneg, Lw, order_cap)
    Ut = cal[t]
    # site_order(Ut, ...): the scores of Ut (site_order's arithmetic), the permutation re-sorted from the
    # capacities' (slot t differs from them on the busy sites only, which move down: no merge sort and its arrays;
    # the same permutation, the keys (−Q, r) being distinct)
    Qt = wf[5, :, 0]
    busy = wi[16]  # the sites where slot t differs from the capacities (the ones that can move)
    for r in range(R):
        sc = 0.0
        bz = 0
        for k in range(K):
            sc += Ut[r, k] / cap[r, k] if cap[r, k] > 0 else 0.0
            bz |= 1 if Ut[r, k] != cap[r, k] else 0
        busy[r] = bz
        dat = M[r] / D[r] if D[r] > 0 else 0.0
        Qt[r] = beta[0] * sc / K - beta[1] * qbar[r] + beta[2] * dat
    order_t0 = wi[14]
    # the busy sites sorted among themselves and merged into the others' sequence (_order_merge: the same
    # permutation as the insertion sort of order_c, which was ~1.5 µs of a step)
    _order_merge(Qt, order_c, busy, order_t0, wi[17])
    # the enumeration under cal[t] also gives PA under the free resources of every "now" window that is no
    # tighter than slot t (param_t = l·π·unit, ps_t, order_t, A0t/A1t; transfer_t where the search computed it)
    _, param_t, tr_t, ps_t, n_u, order_t, A0t, A1t = _tent_best_fast(
        Ut, cap, qbar, q, src_order, M, D, m, n, kappa, n_max, beta, tie_le, prop, param_mb, chunk_mb, lat,
        y_s, used_s, d_s, H_s, sent_s, touched_s, q_nonneg, Lw, order_t0)
    n_now = n_u if n_u != 0 else n_tent
    # ---- worker grid (worker_grid(n_max, G, (n_tent, n_now)))
    ng = grid.shape[0]
    gi = np.empty(4 + 2 * ng, np.int64)  # must, rest, vals: one allocation
    must = gi[:2]
    nm = 0
    for x in (n_tent, n_now):
        if 1 <= x <= n_max:
            dup = False
            for j in range(nm):
                if must[j] == x:
                    dup = True
            if not dup:
                must[nm] = x
                nm += 1
    if nm == 2 and must[1] < must[0]:
        must[0], must[1] = must[1], must[0]
    rest = gi[2:2 + ng]
    nr = 0
    for x in grid:
        if not ((nm > 0 and must[0] == x) or (nm > 1 and must[1] == x)):
            rest[nr] = x
            nr += 1
    k = G - nm
    if k > 0 and nr > k:
        cnt = lin_cnt[nr, k]
        for j in range(cnt):
            rest[j] = rest[lin_idx[nr, k, j]]
        nr = cnt
    take = min(nr, max(k, 0))
    nt = nm + take
    vals = gi[2 + ng:2 + ng + nt]
    for j in range(nm):
        vals[j] = must[j]
    for j in range(take):
        vals[nm + j] = rest[j]
    # np.unique(vals)[:G] in place: sorted by insertion (a handful of values), repeats dropped
    for j in range(1, nt):
        v = vals[j]
        x = j - 1
        while x >= 0 and vals[x] > v:
            vals[x + 1] = vals[x]
            x -= 1
        vals[x + 1] = v
    nv = 0
    for j in range(nt):
        if nv == 0 or vals[j] != vals[nv - 1]:
            vals[nv] = vals[j]
            nv += 1
    nv = min(nv, G)
    # ---- rows
    C = 2 * G
    # y, the int columns ti and the float columns tf (as int64 bits) in one zeroed block (block_layout)
    Rb, X = block_layout(C, R)
    blk = np.zeros((C + X, Rb), np.int64)
    flat = blk.reshape(-1)
    o = C * Rb
    ti = flat[o:o + 5 * C].reshape((5, C))
    tf = flat[o + 5 * C:o + 10 * C].view(np.float64).reshape((5, C))
    mode = ti[0]
    for j in range(G):
        mode[2 * j] = 0
        mode[2 * j + 1] = 1
    Nc = ti[1]
    lc = ti[2]
    start = ti[3]
    psr = ti[4]
    for r in range(C):
        start[r] = -1
        psr[r] = -1
    if R > 0:
        y = blk[:C]
    else:
        y = np.zeros((C, 0), np.int64)
    transfer = tf[0]
    param = tf[1]
    latency = tf[2]
    peak = tf[4]
    mask = np.zeros(C, np.bool_)
    demC = wf[0]
    dem1 = wf[1]
    Us = wf[2]
    yC = wi[6]
    y1 = wi[7]
    A0u = wi[8]
    A1u = wi[9]
    Qu = wf[4, :, 0]
    order_u = wi[10]
    # PA under a "now" window's free resources Uw starts from slot t's worker bounds, scores and order (Uw = cal[t]
    # until some site's minimum falls): only the sites whose minimum fell are redone, and the insertion sort starts
    # from a nearly sorted order
    for r in range(R):
        order_u[r] = order_t[r]
        A0u[r] = A0t[r]
        A1u[r] = A1t[r]
        Qu[r] = Qt[r]
    chg = wi[13]  # sites whose window minimum fell since the bounds and scores were computed (0 / 1)
    capin = wi[15]  # sites whose window minimum holds their capacity (_window_min_fast)
    # the rows are independent: visited by decreasing N (non-decreasing window), so that the free resources of
    # each "now" window, cal[t:t + l].min(axis=0), extend one running minimum
    Uw = wf[3]
    for r in range(R):
        for k in range(K):
            Uw[r, k] = np.inf
    used_e = wi[11]
    Ft = wi[12]  # the slot from which each site stays at its capacity (_site_tails)
    _site_tails(t, cal.shape[0], t_last, plan_y, plan_ps, Ft)
    w_run = 0
    at_t = True  # Uw = cal[t]: no site's minimum fell in the slots after t so far
    for jj in range(G):
        j = G - 1 - jj
        N = vals[min(j, nv - 1)]
        real = j < nv
        win = Lc[N]
        psC = ps_c[N]
        for r in (2 * j, 2 * j + 1):
            Nc[r] = N
            lc[r] = win
        if psC < 0 or not real:
            continue
        if np.isnan(tr_c[N]):
            tr_c[N] = chunk_mb * _tent_transfer(N, Lc, ps_c, cap, cap, qbar, q, src_order, M, tot_M, D, kappa,
                                                order_c, A0c, A1c, prop, beta, y_s, used_s, d_s, H_s, sent_s,
                                                touched_s)
        yC[:] = 0
        _fill_fast(yC, used_s, A0c, A1c, order_c, N, psC)
        _demand(yC, m, n, psC, demC)
        # ---- now
        r = 2 * j
        if t + win <= calendar_len:
            if w_run < win:
                if w_run == 0:  # Uw = cal[t], whose bounds, scores and order the PA below starts from: no site changed
                    _window_min_fast(cal, cap, Ft, t, 0, 1, Uw, chg, capin)
                    for rr in range(R):
                        chg[rr] = False
                    w_run = 1
                if _window_min_fast(cal, cap, Ft, t, w_run, win, Uw, chg, capin):
                    at_t = False
                w_run = win
            fits = True
            for rr in range(R):
                for kk in range(K):
                    if not demC[rr, kk] <= Uw[rr, kk] + 1e-9:
                        fits = False
                        break
                if not fits:
                    break
            ok = False
            if fits:
                for rr in range(R):
                    y[r, rr] = yC[rr]
                psr[r] = psC
                param[r] = param_c[N]
                transfer[r] = tr_c[N]
                ok = True
            elif at_t:  # PA under Uw = cal[t]: the enumeration's plan for N (the same sums, the same winner)
                ps1 = ps_t[N]
                ok = ps1 >= 0
                if ok:
                    y1[:] = 0
                    nu1 = _fill_fast(y1, used_s, A0t, A1t, order_t, N, ps1)
                    if np.isnan(tr_t[N]):
                        if prop:
                            cc = window_transfer(y1.copy(), M, D, kappa, win, order_t, q, src_order, prop, cap,
                                                 qbar, beta)
                        else:
                            cc = _complete_transfer(y1, used_s, nu1, M, tot_M, kappa, win, order_t, q, src_order,
                                                    d_s, H_s, sent_s, touched_s)
                        tr_t[N] = chunk_mb * cc
                    for rr in range(R):
                        y[r, rr] = y1[rr]
                    psr[r] = ps1
                    param[r] = param_t[N]
                    transfer[r] = tr_t[N]
            else:
                for rr in range(R):  # site_order(Uw, ...) and the worker bounds, redone on the changed sites
                    if chg[rr]:
                        chg[rr] = False
                        A0u[rr] = _mw(Uw, rr, m, n, False)
                        A1u[rr] = _mw(Uw, rr, m, n, True)
                        sc = 0.0
                        for kk in range(K):
                            sc += Uw[rr, kk] / cap[rr, kk] if cap[rr, kk] > 0 else 0.0
                        dat = M[rr] / D[rr] if D[rr] > 0 else 0.0
                        Qu[rr] = beta[0] * sc / K - beta[1] * qbar[rr] + beta[2] * dat
                _order_by_score(Qu, order_u)
                unit, ps1, nu1 = _pa_fast(Uw, order_u, q, m, n, N, tie_le, A0u, A1u, y1, used_s, q_nonneg)
                ok = ps1 >= 0
                if ok:
                    if prop:
                        cc = window_transfer(y1.copy(), M, D, kappa, win, order_u, q, src_order, prop, cap, qbar,
                                             beta)
                    else:
                        cc = _complete_transfer(y1, used_s, nu1, M, tot_M, kappa, win, order_u, q, src_order, d_s,
                                                H_s, sent_s, touched_s)
                    for rr in range(R):
                        y[r, rr] = y1[rr]
                    psr[r] = ps1
                    param[r] = win * param_mb * unit
                    transfer[r] = chunk_mb * cc
            if ok:
                start[r] = t
                latency[r] = latency_scalar(kind, tau, b, tau1, tau2, c, float(t + win - 1 - a_i + offset), rate)
                if fits:  # the tentative plan: its demand is demC
                    peak[r] = _peak_of(demC, Uw, cap, yC, psC)
                else:
                    _demand(y1, m, n, ps1, dem1)
                    peak[r] = _peak_of(dem1, Uw, cap, y1, ps1)
                mask[r] = True
        # ---- wait
        r = 2 * j + 1
        s = _earliest_fast(cal, cap, Ft, demC, t, win, Us, used_e)
        if s >= 0:
            for rr in range(R):
                y[r, rr] = yC[rr]
            psr[r] = psC
            start[r] = s
            param[r] = param_c[N]
            transfer[r] = tr_c[N]
            latency[r] = latency_scalar(kind, tau, b, tau1, tau2, c, float(s + win - 1 - a_i + offset), rate)
            peak[r] = _peak_of(demC, Us, cap, yC, psC)
            mask[r] = True
    any_early = False
    for r in range(C):
        if mask[r] and not (mode[r] == 1 and start[r] - t > wait_max):
            any_early = True
    if any_early:
        for r in range(C):
            if mode[r] == 1 and start[r] - t > wait_max:
                mask[r] = False
    total = tf[3]
    for r in range(C):
        total[r] = np.inf
    mn = np.inf
    anym = False
    for r in range(C):
        if mask[r]:
            total[r] = transfer[r] + param[r] + latency[r]
            if not anym or total[r] < mn:
                mn = total[r]
            anym = True
    if prune_on and anym:
        thr = prune_ratio * mn
        for r in range(C):
            if mask[r] and not total[r] <= thr:
                mask[r] = False
                total[r] = np.inf
    legal = False
    for r in range(C):
        if mask[r]:
            legal = True
            break
    return blk, ti, y, tf, mask, n_tent, n_now, legal


@njit_inline
def _order_by_score(Q, order):
    """Re-sort ``order`` (a permutation) by decreasing ``Q``, ties by lower index first: the same permutation as
    ``np.argsort(-Q, kind="mergesort")`` (the keys ``(−Q_r, r)`` are distinct), by insertion from the last order
    (nearly sorted from one slot to the next)."""
    R = order.shape[0]
    for j in range(1, R):
        r = order[j]
        qr = Q[r]
        x = j - 1
        while x >= 0:
            o = order[x]
            if Q[o] > qr or (Q[o] == qr and o < r):
                break
            order[x + 1] = o
            x -= 1
        order[x + 1] = r


@njit_inline
def _order_merge(Q, src, chg, out, tmp):
    """``out`` = ``src`` re-sorted by decreasing ``Q``, ties by lower index first: what copying ``src`` into ``out``
    and :func:`_order_by_score` give (``out`` may be ``src``; ``tmp`` an (R,) int scratch), when only the sites with
    ``chg[r] != 0`` moved: the others, in ``src``'s sequence, are checked to be in order, the moved ones sorted by
    insertion among themselves (a handful) and the two sequences merged. With the keys ``(−Q_r, r)`` distinct the
    sorted permutation is unique, so the result is the same whatever ``chg`` says; the insertion sort of the whole
    permutation (each site that moved down passed by every site after it, mispredicting) is the fallback when the
    unmoved sites are out of order, and the path when a score is NaN (keys not totally ordered)."""
    R = src.shape[0]
    for j in range(R):
        if Q[j] != Q[j]:
            for x in range(R):
                out[x] = src[x]
            _order_by_score(Q, out)
            return
    nu = 0
    nc = 0
    ok = True
    for j in range(R):
        r = src[j]
        qr = Q[r]
        if chg[r] == 0:
            if nu > 0:
                o = out[nu - 1]
                if not (Q[o] > qr or (Q[o] == qr and o < r)):
                    ok = False
            out[nu] = r  # nu <= j: src (when it is out) is read ahead of these writes
            nu += 1
        else:
            x = nc - 1
            while x >= 0:
                o = tmp[x]
                if Q[o] > qr or (Q[o] == qr and o < r):
                    break
                tmp[x + 1] = o
                x -= 1
            tmp[x + 1] = r
            nc += 1
    if not ok:
        for c in range(nc):
            out[nu + c] = tmp[c]
        _order_by_score(Q, out)
        return
    i = nu - 1  # merged from the back: out[:nu] and tmp[:nc] into out[:R]
    c = nc - 1
    w = R - 1
    while c >= 0:
        if i >= 0:
            a = out[i]
            b = tmp[c]
            if Q[a] > Q[b] or (Q[a] == Q[b] and a < b):
                out[w] = b
                c -= 1
            else:
                out[w] = a
                i -= 1
        else:
            out[w] = tmp[c]
            c -= 1
        w -= 1


@njit_inline
def _run_complete(q, src_order, beta, M, D, y, kappa, win, chunk_mb, param_slot, tot_m, base, Q, order, d, H, sent,
                  used, wk, src, first):
    """The slots of :func:`run_plan` under ``complete`` sampling (DTA on the untrained data ``M``), touching only
    the worker sites and the sources a slot draws from: the sites without workers keep ``d = 0``, ``H = M`` and
    ``used = 0`` between slots, only worker sites can be short of data (``d > M``; visited in index order, as
    ``dta`` does), ``Σ M`` is kept by subtraction (integers). The same operations in the same order as the
    general loop, so the same sums. ``d``, ``sent``, ``used``, ``first`` zero and ``Q`` the scores of ``M`` on
    entry (``sent`` zero again on exit); ``wk`` (the worker sites) and ``src`` (the sources a slot drew from) scratch.

    SPLIT's spare capacity goes to the worker sites only (a site without workers takes ``min(0, rem) = 0``), so
    only their order by score is kept (``order[:nw]``, re-sorted each slot; the other sites' scores are not
    updated). A worker site's scan of its sources skips for good the leading ones left without data (``M = 0``:
    ``H ≤ 0`` from then on, skipped by DTA too).

    The DTA scan is written out here, not a call of :func:`_dta_route` (which ``_complete_transfer`` and the
    ``proportional`` slots of :func:`run_plan` share): besides that skip it visits only the worker sites and lists
    the sources drawn from, and an inlined call per slot costs here reference-count pairs on its array arguments
    that Numba does not prune (measured: ``run_plan`` +20 % under ``complete`` sampling)."""
    R = M.shape[0]
    nw = 0  # the worker sites, ascending, in wk[:nw]
    tot_c = 0
    for r in range(R):
        c = kappa * y[r]
        tot_c += c
        if y[r] != 0:
            wk[nw] = r
            nw += 1
    for r in range(R):
        H[r] = M[r]
    # src: the sources a slot drew from; first: per worker site, its sources before first[r] are out of data (or
    # itself)
    for j in range(nw):
        order[j] = wk[j]
    tr = 0.0
    pa_ = 0.0
    for _ in range(win):
        # the worker sites by decreasing score, ties by lower index (their order in site_order's permutation)
        for j in range(1, nw):
            r = order[j]
            qr = Q[r]
            x = j - 1
            while x >= 0:
                o = order[x]
                if Q[o] > qr or (Q[o] == qr and o < r):
                    break
                order[x + 1] = o
                x -= 1
            order[x + 1] = r
        # split(y, M, kappa, 1, order)
        sd = 0
        for j in range(nw):
            r = wk[j]
            c = kappa * y[r]
            d[r] = min(c, M[r])
            sd += d[r]
        rem = min(tot_m, tot_c) - sd
        for j in range(nw):
            if rem <= 0:
                break
            r = order[j]
            x = min(kappa * y[r] - d[r], rem)
            if x > 0:
                d[r] += x
                rem -= x
        # dta(M, d, q, src_order, False)
        for j in range(nw):
            r = wk[j]
            H[r] = M[r] - d[r]
            used[r] = min(d[r], M[r])
        ns = 0
        cost = 0.0
        # each source's surplus left in ``sent`` (H − what it gave in this slot; 0 for the sites without a surplus,
        # the deficits included): one load and one test per source visited instead of three, the same x and sums
        for s in range(R):
            v = H[s]
            sent[s] = v if v > 0 else 0
        for jw in range(nw):
            r = wk[jw]
            if H[r] < 0:
                need = -H[r]
                j0 = first[r]
                while j0 < R:
                    s = src_order[r, j0]
                    if s != r and M[s] > 0:
                        break
                    j0 += 1
                first[r] = j0
                for j in range(j0, R):
                    s = src_order[r, j]
                    a = sent[s]
                    if a > 0:
                        x = a if a < need else need
                        if a == H[s]:  # its first draw in this slot
                            src[ns] = s
                            ns += 1
                        sent[s] = a - x
                        used[s] += x
                        need -= x
                        cost += q[s, r] * x
                        if need == 0:
                            break
        for j in range(nw):  # M -= used, and the scores of the worker sites whose data changed
            r = wk[j]
            if used[r] != 0:
                M[r] -= used[r]
                tot_m -= used[r]
                dat = M[r] / D[r] if D[r] > 0 else 0.0
                Q[r] = base[r] + beta[2] * dat
        for j in range(ns):
            s = src[j]
            if y[s] == 0:  # a source without workers (a worker site's M was updated above)
                M[s] -= used[s]
                tot_m -= used[s]
                H[s] = M[s]
                used[s] = 0
        tr += chunk_mb * cost
        pa_ += param_slot
    for s in range(R):
        sent[s] = 0
    return tr, pa_


@njit
def run_plan(cap, qbar, q, src_order, beta, M, D, y, kappa, complete, chunk_mb, param_slot, cal, start, m, n, ps):
    """Reserve and run a committed plan (``Simulator.commit`` without recording): ``N = Σ y`` workers, window
    ``win = ceil(Σ M / (κ·N))`` (``Simulator.window``), ``cal[start:start + win]`` minus the plan's demand, then
    ``win`` slots of ``Simulator.execute`` on the untrained data ``M`` (modified in place).
    Returns ``(transfer, param, N, win, left)``: the costs summed slot by slot as ``Simulator.commit`` sums them
    (``param_slot``: one slot's parameter-exchange cost, the caller's ``π·q[:, ps]·y``) and the chunks left
    untrained (0 for a legal plan). The per-slot site order is :func:`site_order`'s (the same scores, the same
    permutation)."""
    R, K = cap.shape
    N = 0
    tot = 0
    for r in range(R):
        N += y[r]
        tot += M[r]
    win = -(-tot // (kappa * N))
    # the scratch arrays in two blocks (two allocations instead of twelve, about 1 µs of a step): the demand
    # (transposed, demT[k, r]), the base scores, the scores; the active sites, the order, d, H, sent, used and
    # _run_complete's worker sites, sources and first live sources
    fb = np.empty((K + 2, R))
    demT = fb[:K]
    iw = np.zeros((9, R), np.int64)
    # the demand once; the sites without workers or PS subtract 0.0, which leaves their slots unchanged
    act = iw[0]
    na = 0
    for r in range(R):
        for k in range(K):
            dm = y[r] * m[k]
            if r == ps:
                dm += n[k]
            demT[k, r] = dm
        if y[r] != 0 or r == ps:
            act[na] = r
            na += 1
    for s in range(start, start + win):
        for j in range(na):
            r = act[j]
            for k in range(K):
                cal[s, r, k] -= demT[k, r]
    base = fb[K]
    for r in range(R):  # site_order(cap, cap, ...): Q_r = β1·mean_k(C/C) − β2·qbar_r + β3·M_r/D_r
        sc = 0.0
        for k in range(K):
            sc += cap[r, k] / cap[r, k] if cap[r, k] > 0 else 0.0
        base[r] = beta[0] * sc / K - beta[1] * qbar[r]
    Q = fb[K + 1]
    order = iw[1]
    for r in range(R):
        order[r] = r
    d = iw[2]
    H = iw[3]
    sent = iw[4]
    used = iw[5]
    tr = 0.0
    pa_ = 0.0
    for r in range(R):
        dat = M[r] / D[r] if D[r] > 0 else 0.0
        Q[r] = base[r] + beta[2] * dat
    if complete:
        tr, pa_ = _run_complete(q, src_order, beta, M, D, y, kappa, win, chunk_mb, param_slot, tot, base, Q, order,
                                d, H, sent, used, iw[6], iw[7], iw[8])
        left = 0
        for r in range(R):
            left += M[r]
        return tr, pa_, N, win, left
    for w in range(win):
        if w > 0:  # the scores of the sites whose untrained data changed in the last slot (the others keep theirs)
            for r in range(R):
                if used[r] != 0:
                    dat = M[r] / D[r] if D[r] > 0 else 0.0
                    Q[r] = base[r] + beta[2] * dat
        _order_by_score(Q, order)
        # split(y, M, kappa, 1, order)
        tot_m = 0
        tot_c = 0
        sd = 0
        for r in range(R):
            c = kappa * y[r]
            tot_m += M[r]
            tot_c += c
            d[r] = min(c, M[r])
            sd += d[r]
        rem = min(tot_m, tot_c) - sd
        for j in range(R):
            if rem <= 0:
                break
            r = order[j]
            x = min(kappa * y[r] - d[r], rem)
            if x > 0:
                d[r] += x
                rem -= x
        # dta(S, d, q, src_order, False) with S the slot's quota (``complete`` returned above)
        S = prop_quota(M, D, d.sum())
        for r in range(R):
            H[r] = S[r] - d[r]
            sent[r] = 0
            used[r] = 0
        cost, _ = _dta_route(src_order, q, H, sent, used, True, used, False)
        # used: what each site's data gave away, plus its local training. S is last used here, after the routing:
        # released before it, its decref would fall between _dta_route's reference-count pairs on its array
        # arguments, which Numba then does not prune (five atomic pairs per slot, +4 % on this loop)
        for r in range(R):
            used[r] += min(d[r], S[r])
            M[r] -= used[r]
        tr += chunk_mb * cost
        pa_ += param_slot
    left = 0
    for r in range(R):
        left += M[r]
    return tr, pa_, N, win, left



@njit
def commit_plan(cap, qbar, q, src_order, beta, M_all, D_all, m_all, n_all, i, y, kappa, complete, chunk_mb, param_slot,
                cal, start, ps, t_start, t_last, plan_l, plan_y, plan_ps, transfer, param, lat_cost, status, kind, tau,
                b, tau1, tau2, c, a_i, offset, rate):
    """``Simulator.commit`` without recording, in one call: :func:`run_plan` for job ``i`` (``M_all[i]`` modified in
    place), then, when the window trains all data, the simulator's per-job records (``t_start``, ``t_last``,
    ``plan_l``, ``plan_y``, ``plan_ps``, ``transfer``, ``param``, ``lat_cost``, ``status``) written as ``commit``
    writes them, with the latency cost of :func:`latency_scalar` (the job's scalars ``kind`` ... ``c``, arrival
    ``a_i``). Returns ``(job cost, worker-slots N·win, chunks left)``; nothing is recorded when chunks are left
    (``commit`` raises then). One crossing instead of two, and no numpy scalar writes from Python (about 4 µs of
    a ~14 µs commit)."""
    tr, pa_, N, win, left = run_plan(cap, qbar, q, src_order, beta, M_all[i], D_all[i], y, kappa, complete, chunk_mb,
                                     param_slot, cal, start, m_all[i], n_all[i], ps)
    if left != 0:
        return 0.0, 0, left
    t_start[i] = start
    t_last[i] = start + win - 1
    plan_l[i] = win
    for r in range(y.shape[0]):
        plan_y[i, r] = y[r]
    plan_ps[i] = ps
    transfer[i] = tr
    param[i] = pa_
    lat = latency_scalar(kind, tau, b, tau1, tau2, c, float(start + win - 1 - a_i + offset), rate)
    lat_cost[i] = lat
    status[i] = 2
    return tr + pa_ + lat, N * win, left


@njit
def observe(low, high, clip, head, site_part, job_part, free_src, free_len, cap, R, Rm, H, replan, usage,
            cand_on, rows, extra_on, mask, N, n_max, win, max_win, start, t, calendar_len, y, ps, transfer, param,
            latency, peak, total, n_tent, scale, start_all, t_last, status):
    """The observation of ``WirelessUDLEnv`` (``_reference.observation``): float64 values, ``nan_to_num`` (nan and
    -inf to 0, +inf to ``clip``), clipped to the space, cast to float32.

    ``head``: ``[slot_frac, job_frac, 1/active_norm]`` (the active count is taken here from ``start_all`` /
    ``t_last`` (commit) or ``status`` (replan)); ``site_part``: site mask and mean price (2·Rm); ``job_part``: the
    job's block; ``free_src``: the calendar (commit; rows ``t..t+free_len``) or ``cap`` (replan, with ``usage``).
    """
    n_out = low.shape[0]
    ob = np.empty(n_out + 12)  # the float64 values, then one row's features (one allocation)
    out = ob[:n_out]
    K = cap.shape[1]
    active = 0
    if replan:
        for i in range(status.shape[0]):
            if status[i] == 1:
                active += 1
    else:
        for i in range(start_all.shape[0]):
            if start_all[i] >= 0 and start_all[i] <= t and t_last[i] >= t:
                active += 1
    out[0] = head[0]
    out[1] = head[1]
    out[2] = active / head[2]
    p = 3
    for j in range(site_part.shape[0]):
        out[p] = site_part[j]
        p += 1
    for r in range(Rm):
        for k in range(K):
            for h in range(H):
                v = 0.0
                if r < R:
                    if replan:
                        v = (cap[r, k] - usage[r, k]) / cap[r, k] if cap[r, k] > 0 else 0.0
                    elif h < free_len:
                        v = free_src[t + h, r, k] / cap[r, k] if cap[r, k] > 0 else 0.0
                out[p] = v
                p += 1
    for j in range(job_part.shape[0]):
        out[p] = job_part[j]
        p += 1
    C = mask.shape[0]
    F = 12 if rows else 10
    mn = np.inf
    anym = False
    if cand_on and extra_on:
        for r in range(C):
            if mask[r]:
                if not anym or total[r] < mn:
                    mn = total[r]
                anym = True
    nmax = max(n_max, 1)
    f = ob[n_out:]
    for r in range(C):
        ok = cand_on and mask[r]
        for fi in range(12):
            f[fi] = 0.0
        if ok:
            f[0] = N[r] / nmax
            f[1] = win[r] / max_win
            f[2] = (start[r] - t) / calendar_len
            f[3] = (N[r] - y[r, max(ps[r], 0)]) / max(N[r], 1)
            f[4] = transfer[r] / scale
            f[5] = param[r] / scale
            f[6] = latency[r] / scale
            f[7] = transfer[r] / scale + param[r] / scale + latency[r] / scale
            f[8] = peak[r]
            f[9] = 1.0
            if anym:
                f[10] = (total[r] - mn) / scale
                f[11] = 1.0 if N[r] == n_tent else 0.0
        for fi in range(F):
            if rows:
                out[p + r * F + fi] = f[fi]
            else:
                out[p + fi * C + r] = f[fi]
    res = np.empty(n_out, np.float32)
    for j in range(n_out):
        v = out[j]
        if np.isnan(v):
            v = 0.0
        elif v == np.inf:
            v = clip
        elif v == -np.inf:
            v = 0.0
        lo = low[j]
        hi = high[j]
        if v < lo:
            v = lo
        if v > hi:
            v = hi
        res[j] = v
    return res


@njit
def commit_step(cap, qbar, q, src_order, beta, tie_le, q_nonneg, prop, complete, offset, rate, G, wait_max, lin_idx,
                lin_cnt, prune_on, prune_ratio, data, m_all, n_all, kap, nmax, arrival, kind, param_mb, chunk_mb, tau,
                b, tau1, tau2, c, lat_tab, orders, has_order, grids, grid_n, M_all, cal, calendar_len, t_start, t_last,
                plan_l, plan_y, plan_ps, transfer, param, lat_cost, status, low, high, clip, rel, head_rel, horizon,
                cap_factor, site_part, job_part, Rm, H, rows, usage, max_win, scale, i, y, start, ps, param_slot,
                want_obs):
    """One commit-mode step in one call: :func:`commit_plan` of pending job ``i`` (plan ``y``, ``start``, ``ps``),
    then, if a job ``k = i + 1`` is left, its arrival (``status[k] = 1``), its :func:`candidate_table` at its arrival
    slot, and (``want_obs``) the observation of :func:`observe` on that table: the operations of
    ``Simulator.commit``, ``WirelessUDLEnv._prepare`` / ``candidates._table`` and ``WirelessUDLEnv._observation`` on
    the per-episode job arrays (``kap`` … ``c`` the jobs' scalars, ``lat_tab`` / ``orders`` / ``has_order``
    ``candidates._job_table``'s latency vectors and shared site orders, ``grids[k, :grid_n[k]]`` the geometric worker
    grid of job ``k``'s ``nmax``), one Python-Numba crossing instead of four (the Python around them was ~30 µs of a
    ~130 µs step). Returns ``(job cost, worker-slots, chunks left, ti, y, tf, mask, n_tent, n_now, any_legal, obs)``;
    the table and observation are empty when no job is left, the observation when not ``want_obs``."""
    cost, ws, left = commit_plan(cap, qbar, q, src_order, beta, M_all, data, m_all, n_all, i, y, kap[i], complete,
                                 chunk_mb[i], param_slot, cal, start, ps, t_start, t_last, plan_l, plan_y, plan_ps,
                                 transfer, param, lat_cost, status, kind[i], tau[i], b[i], tau1[i], tau2[i], c[i],
                                 arrival[i], offset, rate)
    k = i + 1
    R = cap.shape[0]
    C = 2 * G
    if left != 0 or k >= arrival.shape[0]:
        return (cost, ws, left, np.zeros((5, C), np.int64), np.zeros((C, R), np.int64), np.zeros((5, C)),
                np.zeros(C, np.bool_), 0, 0, False, np.zeros(0, np.float32))
    t = arrival[k]
    status[k] = 1
    nm = nmax[k]
    order_cap = orders[k] if has_order[k] else orders[k, :0]
    ti, yt, tf, mask, n_tent, n_now, legal = candidate_table(
        cap, qbar, q, src_order, M_all[k], data[k], m_all[k], n_all[k], kap[k], nm, beta, tie_le, prop, param_mb[k],
        chunk_mb[k], lat_tab[k, :nm + 1], cal, t, calendar_len, arrival[k], offset, kind[k], tau[k], b[k], tau1[k],
        tau2[k], c[k], rate, G, wait_max, grids[k, :grid_n[k]], lin_idx, lin_cnt, prune_on, prune_ratio, q_nonneg,
        t_last, plan_y, plan_ps, order_cap)
    if not (want_obs and legal):
        return cost, ws, left, ti, yt, tf, mask, n_tent, n_now, legal, np.zeros(0, np.float32)
    nj = arrival.shape[0]
    if rel:
        head = head_rel
    else:  # WirelessUDLEnv._observation's head: [min(t / T, cap_factor), k / n_jobs, n_jobs]
        head = np.empty(3)
        head[0] = min(t / horizon, cap_factor)
        head[1] = k / nj
        head[2] = nj
    free_len = max(0, min(H, cal.shape[0] - t))
    obs = observe(low, high, clip, head, site_part, job_part[k], cal, free_len, cap, R, Rm, H, False, usage, True, rows,
                  rows, mask, ti[1], nm, ti[2], max_win, ti[3], t, max(calendar_len, 1), yt, ti[4], tf[0], tf[1],
                  tf[2], tf[4], tf[3], n_tent, scale, t_start, t_last, status)
    return cost, ws, left, ti, yt, tf, mask, n_tent, n_now, legal, obs


@njit
def commit_step_block(cap, qbar, q, src_order, beta, tie_le, q_nonneg, prop, complete, offset, rate, G, wait_max,
                      lin_idx, lin_cnt, prune_on, prune_ratio, data, m_all, n_all, kap, nmax, arrival, kind, param_mb,
                      chunk_mb, tau, b, tau1, tau2, c, lat_tab, orders, has_order, grids, grid_n, M_all, cal,
                      calendar_len, t_start, t_last, plan_l, plan_y, plan_ps, transfer, param, lat_cost, status, low,
                      high, clip, rel, head_rel, horizon, cap_factor, site_part, job_part, Rm, H, rows, usage, max_win,
                      scale, i, y, start, ps, param_slot, want_obs):
    """:func:`commit_step` (the same arguments, the same operations) returning ``(job cost, worker-slots, chunks
    left, blk, mask, n_tent, n_now, any_legal, obs)``: the table's ``ti``, ``y`` and ``tf`` as :func:`candidate_block`'s
    one int64 block ``blk`` (three arrays fewer for Numba to box, about 0.6 µs of a step; ``WirelessUDLEnv`` makes
    the views it reads in Python). Empty table and observation as
    :func:`commit_step`'s; the same code but the block."""
    cost, ws, left = commit_plan(cap, qbar, q, src_order, beta, M_all, data, m_all, n_all, i, y, kap[i], complete,
                                 chunk_mb[i], param_slot, cal, start, ps, t_start, t_last, plan_l, plan_y, plan_ps,
                                 transfer, param, lat_cost, status, kind[i], tau[i], b[i], tau1[i], tau2[i], c[i],
                                 arrival[i], offset, rate)
    k = i + 1
    R = cap.shape[0]
    C = 2 * G
    if left != 0 or k >= arrival.shape[0]:
        Rb, X = block_layout(C, R)
        blk = np.zeros((C + X, Rb), np.int64)
        return cost, ws, left, blk, np.zeros(C, np.bool_), 0, 0, False, np.zeros(0, np.float32)
    t = arrival[k]
    status[k] = 1
    nm = nmax[k]
    order_cap = orders[k] if has_order[k] else orders[k, :0]
    blk, ti, yt, tf, mask, n_tent, n_now, legal = candidate_block(
        cap, qbar, q, src_order, M_all[k], data[k], m_all[k], n_all[k], kap[k], nm, beta, tie_le, prop, param_mb[k],
        chunk_mb[k], lat_tab[k, :nm + 1], cal, t, calendar_len, arrival[k], offset, kind[k], tau[k], b[k], tau1[k],
        tau2[k], c[k], rate, G, wait_max, grids[k, :grid_n[k]], lin_idx, lin_cnt, prune_on, prune_ratio, q_nonneg,
        t_last, plan_y, plan_ps, order_cap)
    if not (want_obs and legal):
        return cost, ws, left, blk, mask, n_tent, n_now, legal, np.zeros(0, np.float32)
    nj = arrival.shape[0]
    if rel:
        head = head_rel
    else:  # WirelessUDLEnv._observation's head: [min(t / T, cap_factor), k / n_jobs, n_jobs]
        head = np.empty(3)
        head[0] = min(t / horizon, cap_factor)
        head[1] = k / nj
        head[2] = nj
    free_len = max(0, min(H, cal.shape[0] - t))
    obs = observe(low, high, clip, head, site_part, job_part[k], cal, free_len, cap, R, Rm, H, False, usage, True, rows,
                  rows, mask, ti[1], nm, ti[2], max_win, ti[3], t, max(calendar_len, 1), yt, ti[4], tf[0], tf[1],
                  tf[2], tf[4], tf[3], n_tent, scale, t_start, t_last, status)
    return cost, ws, left, blk, mask, n_tent, n_now, legal, obs
