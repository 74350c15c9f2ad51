"""Compiled hot paths of the HeteroML env (Zhou et al., "Online Scheduling Algorithm for Heterogeneous Distributed
Machine Learning Jobs", IEEE Transactions on Cloud Computing 11(2), 2023): the grid action mask, the observation's
lookahead bins and job features, the placement search that decodes a grid action, and the earliest start of every
grid action (``HeteroMLEnv.grid_estimates``, the v1 per-action rows).

Every kernel is plain Python over numpy arrays, compiled with Numba's ``@njit(cache=True)`` (through
:mod:`edgegym.core.jit`); without Numba the same source runs as Python. Each kernel reproduces the floating-point
operations of the pure reference (:mod:`._reference`, the env's original NumPy code) so that results agree bit for
bit (``tests/speed/test_speed_hetero_ml.py`` checks it on random states), with one exception handled exactly:

* The placement price ``lambda^(used / C) - 1`` and its dot products decide which server gets a PS or a co-located
  job (an ``argmin``) and the order in which spread workers fill the servers. NumPy evaluates the power with its
  own vectorised routine and the dot products with BLAS, which differ from the C library's ``pow`` and a sequential
  sum in the last bit. The kernels compute them with ``pow`` and sequential sums and check every such decision: when
  another candidate server's price lies within a relative 1e-9 of the chosen one (and is not the same computation
  on the same numbers), the kernel reports the decision as ambiguous (status 2) and the env reruns that step's
  search with the NumPy reference. The result is therefore always the reference's.

Usage: the kernels never read the simulator's dense ``Ledger``; they evaluate ``usage[h, r, t]`` from the committed
reservations (``rec``: start, duration, per-server workers and PSs, worker and PS type of each job), adding the
footprints of server ``h``'s jobs that cover slot ``t`` in commit order from 0.0, which is exactly the sequence of
additions the dense ledger performs. The usage is piecewise constant in ``t`` between the starts and ends of a
server's reservations, so its maximum over a window is its maximum over the window's first slot and those
breakpoints inside it. Per-server job lists of the reservations that end after the decision time are built once per
call (CSR arrays ``ptr/jobs``, :func:`server_jobs`).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.jit import njit, njit_inline

TOL = 1e-9
TIE = 1e-9  # relative band within which two prices count as a possible tie (NumPy's result decides)
N_BINS = 8
BIN_EDGES = np.array([0, 1, 2, 4, 8, 16, 32, 64, 128], dtype=np.int64)
BIG_CAP = float(1 << 30)
OBS_HIGH = 10.0  # the observation's clip of the v1 action rows


# ------------------------------------------------------------------------------------------ small helpers
@njit_inline
def _pw_block(a, lo, n):
    """NumPy's pairwise summation of ``a[lo:lo + n]`` for n <= 128 (one unrolled block)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit
def pairwise_sum(a, lo, n):
    """NumPy's pairwise summation of ``a[lo:lo + n]`` (contiguous float64), bit for bit: blocks of <= 128 summed
    unrolled, longer runs split at n/2 rounded down to a multiple of 8 and the halves added (evaluated with an
    explicit stack: Numba's on-disk cache does not support recursive functions)."""
    if n <= 128:
        return _pw_block(a, lo, n)
    seg_lo = np.empty(128, dtype=np.int64)
    seg_n = np.empty(128, dtype=np.int64)
    seg_st = np.zeros(128, dtype=np.int64)  # 0: new, 1: left half done, 2: both halves done
    vals = np.empty(128)
    sp, vp = 0, 0
    seg_lo[0], seg_n[0], seg_st[0] = lo, n, 0
    while sp >= 0:
        nn = seg_n[sp]
        n2 = nn // 2
        n2 -= n2 % 8
        if nn <= 128:
            vals[vp] = _pw_block(a, seg_lo[sp], nn)
            vp += 1
            sp -= 1
        elif seg_st[sp] == 0:
            seg_st[sp] = 1
            seg_lo[sp + 1], seg_n[sp + 1], seg_st[sp + 1] = seg_lo[sp], n2, 0
            sp += 1
        elif seg_st[sp] == 1:
            seg_st[sp] = 2
            seg_lo[sp + 1], seg_n[sp + 1], seg_st[sp + 1] = seg_lo[sp] + n2, nn - n2, 0
            sp += 1
        else:
            vals[vp - 2] = vals[vp - 2] + vals[vp - 1]
            vp -= 1
            sp -= 1
    return vals[0]


@njit_inline
def _n_workers(D, frac):
    """N = min(D, max(1, ceil(D f - 1e-9)))."""
    x = math.ceil(D * frac - 1e-9)
    if x < 1.0:
        x = 1.0
    if D < x:
        x = float(D)
    return np.int64(x)


@njit_inline
def ps_type(n, m, spread, wbw, pbw, zf, psu):
    """The env's derived PS type (``placement.ps_type_for``): smallest s·Σ_r ẑ, ties by the lower U^p_j, then index."""
    P = zf.shape[0]
    best = math.inf
    for p in range(P):
        v = zf[p]
        if spread:
            s = math.ceil(n * wbw[m] / pbw[p] - 1e-9)
            if s < 1.0:
                s = 1.0
            v = s * zf[p]
        if v < best:
            best = v
    tol = 1e-12 * max(1.0, abs(best))
    out = 0
    bu = math.inf
    for p in range(P):
        v = zf[p]
        if spread:
            s = math.ceil(n * wbw[m] / pbw[p] - 1e-9)
            if s < 1.0:
                s = 1.0
            v = s * zf[p]
        if abs(v - best) <= tol and psu[p] < bu:
            bu = psu[p]
            out = p
    return out


@njit_inline
def _ps_type_spread(n, m, wbw, pbw, zf, psu, vbuf):
    """:func:`ps_type` of a spread configuration with each PS type's value s·Σ_r ẑ computed once (into the scratch
    ``vbuf``, P floats) instead of once per pass: the same values and comparisons (its divisions and ceilings were
    most of :func:`job_grid`'s ~5 µs a call on HeteroML-v1)."""
    P = zf.shape[0]
    best = math.inf
    for p in range(P):
        s = math.ceil(n * wbw[m] / pbw[p] - 1e-9)
        if s < 1.0:
            s = 1.0
        v = s * zf[p]
        vbuf[p] = v
        if v < best:
            best = v
    tol = 1e-12 * max(1.0, abs(best))
    out = 0
    bu = math.inf
    for p in range(P):
        if abs(vbuf[p] - best) <= tol and psu[p] < bu:
            bu = psu[p]
            out = p
    return out


@njit_inline
def duration(W, v, psu_p, ra, comm, n, colocated, ps_arch):
    """d = ceil(W · iter / n - 1e-9) with iter of eq. (1) (PS) or eq. (14) (RA)."""
    if ps_arch:
        it = v + psu_p + (0.0 if colocated else comm)
    else:
        frac = (n - 1) / n
        it = v + ra * frac + (0.0 if colocated else comm * frac)
    return np.int64(math.ceil(W * it / n - 1e-9))


@njit_inline
def _caps_of(row_free, e, R):
    """Workers of resource vector e that fit on residual ``row_free`` (``placement.server_caps`` for one server)."""
    c = math.inf
    for r in range(R):
        if e[r] > 0:
            q = math.floor(row_free[r] / e[r] + 1e-9)
            if q < c:
                c = q
    if not math.isfinite(c):
        c = BIG_CAP
    if c < 0.0:
        c = 0.0
    return c


@njit_inline
def _price(free, cap, h, r, lam):
    C = cap[h, r]
    u = (C - free[h, r]) / C if C > 0 else 0.0
    if u < 0.0:
        u = 0.0
    if u > 1.0:
        u = 1.0
    if u == 0.0:  # lambda^0 - 1 = 0 exactly: no pow needed
        return 0.0
    return lam ** u - 1.0


@njit_inline
def _used_equal(free, cap, h1, h2, R):
    """Whether servers h1 and h2 have the same clipped used fractions (hence bit-identical NumPy prices)."""
    for r in range(R):
        C1, C2 = cap[h1, r], cap[h2, r]
        u1 = (C1 - free[h1, r]) / C1 if C1 > 0 else 0.0
        u2 = (C2 - free[h2, r]) / C2 if C2 > 0 else 0.0
        u1 = min(max(u1, 0.0), 1.0)
        u2 = min(max(u2, 0.0), 1.0)
        if u1 != u2:
            return False
    return True


@njit_inline
def _zero_cost(free, cap, h, vec, R):
    """Whether server h's price row is 0 wherever ``vec`` is not (its cost is then exactly 0 for NumPy too, and
    every other cost is > 0: lambda^u - 1 > 0 for u > 0)."""
    for r in range(R):
        if vec[r] != 0:
            C = cap[h, r]
            u = (C - free[h, r]) / C if C > 0 else 0.0
            if min(max(u, 0.0), 1.0) != 0.0:
                return False
    return True


@njit_inline
def _cost(free, cap, h, vec, lam, empty):
    """Σ_r price[h, r] · vec[r] (sequential); 0 on the empty cluster (every price is exactly 0 there)."""
    if empty:
        return 0.0
    s = 0.0
    for r in range(vec.shape[0]):
        s += _price(free, cap, h, r, lam) * vec[r]
    return s


# ------------------------------------------------------------------------------------------ placement
@njit
def grid_place(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, empty, w_out, s_out):
    """``placement.grid_place`` on residuals ``free`` (H, R): 1 placed (``w_out``, ``s_out`` filled), 0 none,
    2 ambiguous (a price tie within rounding: rerun with the NumPy reference). ``empty``: free is the capacity."""
    H, R = free.shape
    w_out[:] = 0
    s_out[:] = 0
    e = wres[m]
    z = np.zeros(R)
    if ps_arch:
        z[:] = pres[p]
    if not spread:
        need = np.empty(R)
        vec = np.empty(R)
        for r in range(R):
            need[r] = n * e[r] + z[r]
            vec[r] = n * (e[r] / cbar[r]) + z[r] / cbar[r]
        for h in range(H):  # an idle (zero-price) server that fits: the first one is the cheapest
            ok = True
            for r in range(R):
                if not free[h, r] + 1e-9 >= need[r]:
                    ok = False
                    break
            if ok and (empty or _zero_cost(free, cap, h, vec, R)):
                w_out[h] = n
                if ps_arch:
                    s_out[h] = 1
                return 1
        cost = np.full(H, math.inf)
        best_h = -1
        best = math.inf
        for h in range(H):
            ok = True
            for r in range(R):
                if not free[h, r] + 1e-9 >= need[r]:
                    ok = False
                    break
            if ok:
                c = _cost(free, cap, h, vec, lam, empty)
                cost[h] = c
                if c < best:
                    best = c
                    best_h = h
        if best_h < 0:
            return 0
        if not empty:
            for h in range(H):
                if h != best_h and cost[h] <= best * (1.0 + TIE) and not (cost[h] == 0.0 and best == 0.0):
                    if not _used_equal(free, cap, h, best_h, R):
                        return 2
        w_out[best_h] = n
        if ps_arch:
            s_out[best_h] = 1
        return 1
    rest = free.copy()
    if ps_arch:
        kk = math.ceil(n * wbw[m] / pbw[p] - 1e-9)
        if kk < 1:
            kk = 1
        zvec = np.empty(R)
        for r in range(R):
            zvec[r] = z[r] / cbar[r]
        cost = np.full(H, math.inf)
        best_h = -1
        best = math.inf
        for h in range(H):  # an idle (zero-price) server that fits the PSs: the first one is the cheapest
            ok = True
            for r in range(R):
                if not free[h, r] + 1e-9 >= kk * z[r]:
                    ok = False
                    break
            if ok and (empty or _zero_cost(free, cap, h, zvec, R)):
                best_h = h
                best = 0.0
                break
        if best_h < 0:
            best_h, best, cost = _cheapest_ps_server(free, cap, cbar, lam, z, kk, empty)
        if best_h < 0:
            return 0
        if not empty and best > 0.0:
            for h in range(H):
                if h != best_h and cost[h] <= best * (1.0 + TIE) and not (cost[h] == 0.0 and best == 0.0):
                    if not _used_equal(free, cap, h, best_h, R):
                        return 2
        s_out[best_h] = kk
        for r in range(R):
            rest[best_h, r] -= kk * z[r]
    caps = np.empty(H)
    tot = 0.0
    nz = 0
    for h in range(H):
        caps[h] = _caps_of(rest[h], e, R)
        tot += caps[h]
        if caps[h] > 0:
            nz += 1
    if tot < n:
        return 0
    # fill order: servers by om = price · ê ascending, ties by index (only servers with room matter)
    ehat = np.empty(R)
    for r in range(R):
        ehat[r] = e[r] / cbar[r]
    idx = np.empty(nz, dtype=np.int64)
    om = np.empty(nz)
    zero_room = 0.0  # room on zero-price servers: if it takes all n workers, no other price is needed
    j = 0
    for h in range(H):
        if caps[h] > 0:
            idx[j] = h
            if empty or _zero_cost(free, cap, h, ehat, R):
                om[j] = 0.0
                zero_room += caps[h]
            else:
                om[j] = -1.0  # computed below if needed
            j += 1
    for j in range(nz):
        if om[j] < 0.0:
            om[j] = _cost(free, cap, idx[j], ehat, lam, empty) if zero_room < n else math.inf
    order = np.argsort(om, kind="mergesort")
    rem = n
    for i in range(nz):
        if rem <= 0:
            break
        h = idx[order[i]]
        if not empty and i + 1 < nz:
            a, b = om[order[i]], om[order[i + 1]]
            if b <= a * (1.0 + TIE) and not (a == 0.0 and b == 0.0):
                if not _used_equal(free, cap, h, idx[order[i + 1]], R):
                    return 2
        kw = min(np.int64(caps[h]), rem)
        w_out[h] = kw
        rem -= kw
    return 1


@njit_inline
def _holds(free, h, kk, z):
    """Whether server h's residual holds ``kk`` PSs of resource vector ``z`` (the placement's 1e-9 tolerance)."""
    for r in range(free.shape[1]):
        if not free[h, r] + 1e-9 >= kk * z[r]:
            return False
    return True


@njit_inline
def _cheapest_ps_server(free, cap, cbar, lam, z, kk, empty):
    """The PS server of a spread placement with ``kk`` PSs of resource vector ``z``: the cheapest by price among the
    servers that hold them (ties: lowest index). Returns ``(server, its cost, every server's cost)`` (inf where a
    server cannot hold them; server -1 when none can)."""
    H, R = free.shape
    best_h = -1
    best = math.inf
    zvec = np.empty(R)
    for r in range(R):
        zvec[r] = z[r] / cbar[r]
    cost = np.full(H, math.inf)
    for h in range(H):
        if _holds(free, h, kk, z):
            c = _cost(free, cap, h, zvec, lam, empty)
            cost[h] = c
            if c < best:
                best = c
                best_h = h
    return best_h, best, cost


@njit_inline
def fits(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, empty):
    """Whether :func:`grid_place` finds a placement (the reference ``fits`` for one configuration): 1 yes, 0 no,
    2 ambiguous (the PS server's price ties within rounding and the candidates disagree)."""
    H, R = free.shape
    e = wres[m]
    if not spread:
        if R == 4:  # the usual four resources: the needs in registers
            z0 = pres[p, 0] if ps_arch else 0.0
            z1 = pres[p, 1] if ps_arch else 0.0
            z2 = pres[p, 2] if ps_arch else 0.0
            z3 = pres[p, 3] if ps_arch else 0.0
            n0, n1, n2, n3 = n * e[0] + z0, n * e[1] + z1, n * e[2] + z2, n * e[3] + z3
            for h in range(H):
                if (free[h, 0] + 1e-9 >= n0 and free[h, 1] + 1e-9 >= n1 and free[h, 2] + 1e-9 >= n2
                        and free[h, 3] + 1e-9 >= n3):
                    return 1
            return 0
        for h in range(H):
            ok = True
            for r in range(R):
                zr = pres[p, r] if ps_arch else 0.0
                if not free[h, r] + 1e-9 >= n * e[r] + zr:
                    ok = False
                    break
            if ok:
                return 1
        return 0
    if not ps_arch:
        tot = 0.0
        for h in range(H):
            tot += _caps_of(free[h], e, R)
            if tot >= n:
                return 1
        return 0
    z = pres[p]
    kk = max(1.0, math.ceil(n * wbw[m] / pbw[p] - 1e-9))
    row = np.empty(R)
    if empty:  # every price is 0: the PS goes to the first server that fits it
        for h in range(H):
            ok = True
            for r in range(R):
                if not free[h, r] + 1e-9 >= kk * z[r]:
                    ok = False
                    break
            if ok:
                for r in range(R):
                    row[r] = free[h, r] - kk * z[r]
                tot = _caps_of(row, e, R) - _caps_of(free[h], e, R)
                for g in range(H):
                    tot += _caps_of(free[g], e, R)
                    if tot >= n:
                        return 1
                return 0
        return 0
    tot = 0.0
    for h in range(H):
        tot += _caps_of(free[h], e, R)
    lo_loss, hi_loss = math.inf, -math.inf
    any_ps = False
    for h in range(H):
        ok = True
        for r in range(R):
            if not free[h, r] + 1e-9 >= kk * z[r]:
                ok = False
                break
        if ok:
            for r in range(R):
                row[r] = free[h, r] - kk * z[r]
            loss = _caps_of(free[h], e, R) - _caps_of(row, e, R)
            any_ps = True
            lo_loss = min(lo_loss, loss)
            hi_loss = max(hi_loss, loss)
    if not any_ps:
        return 0
    if tot - hi_loss >= n:
        return 1
    if tot - lo_loss < n:
        return 0
    # the PS server decides (``empty`` returned above: prices are not all 0 here)
    return _ps_server_decides(free, cap, cbar, lam, e, z, kk, n, tot, free, -1)


@njit_inline
def _room(free, e, h, caps_hm, m):
    """Server h's room for workers of resource vector ``e``: ``caps_hm[h, m]`` (cached) when ``m >= 0``, else
    computed from its residual ``free[h]``."""
    if m >= 0:
        return caps_hm[h, m]
    return _caps_of(free[h], e, free.shape[1])


@njit_inline
def _ps_server_decides(free, cap, cbar, lam, e, z, kk, n, tot, caps_hm, m):
    """The end of :func:`fits`'s spread case with a PS, where the PS server decides: the cheapest by price (ties:
    lowest index; prices not all 0); 1 if the workers' total room ``tot`` less what that server loses to ``kk`` PSs
    of resource vector ``z`` still holds ``n`` workers, else 0; 2 if a server priced within rounding of it
    disagrees. Rooms as :func:`_room` reads them (``m >= 0``: the cache ``caps_hm[:, m]``)."""
    H, R = free.shape
    row = np.empty(R)
    best_h, best, cost = _cheapest_ps_server(free, cap, cbar, lam, z, kk, False)
    for r in range(R):
        row[r] = free[best_h, r] - kk * z[r]
    res = tot - _room(free, e, best_h, caps_hm, m) + _caps_of(row, e, R) >= n
    for h in range(H):
        if h != best_h and cost[h] <= best * (1.0 + TIE) and not (cost[h] == 0.0 and best == 0.0):
            for r in range(R):
                row[r] = free[h, r] - kk * z[r]
            if (tot - _room(free, e, h, caps_hm, m) + _caps_of(row, e, R) >= n) != res:
                return 2
    return 1 if res else 0


# ------------------------------------------------------------------------------------------ grid configurations
@njit
def grid_mask(cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, n_delays, m4, n4, q4, p4, feas, mask):
    """Valid grid actions: :func:`grid_place` finds a placement on the empty cluster. ``feas[m, n, q, p + 1]``
    caches the answer per configuration for the episode (-1: not computed yet; n beyond its size: not cached)."""
    G = mask.shape[0]
    for a in range(0, G, n_delays):
        m, n, q, p = m4[a], n4[a], q4[a], p4[a]
        if n < feas.shape[1] and p + 1 < feas.shape[3]:
            v = feas[m, n, q, p + 1]
            if v < 0:
                v = fits(cap, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, q == 1, True)
                feas[m, n, q, p + 1] = v
        else:
            v = fits(cap, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, q == 1, True)
        for di in range(n_delays):
            mask[a + di] = v == 1


@njit
def job_grid_cached(D, fracs, n_delays, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, zf, psu, feas, vcache,
                    m4, n4, q4, p4, mask):
    """Every grid action's worker type, workers, spread flag and PS type (flat, grid order; the reference is
    ``_reference.grid_configs``) and :func:`grid_mask`, in one call. The co-located PS type does not depend on the
    worker type or count (computed once) and a spread one only on them (computed once per distinct count). The
    spread one's :func:`_ps_type_spread` is written out here (an inlined call took and released a reference to
    each array it was handed, each time); :func:`job_grid_ref` calls it (the reference).

    ``vcache`` (M, n_max + 1, P + 1): the spread PS types' values s·Σ_r ẑ per worker type and count, kept by the
    caller for the episode (they depend on the cluster's bandwidths and ẑ alone, not on the job): ``[m, n, 0]`` is
    1.0 once ``[m, n, 1:]`` holds them (0.0: not yet); empty (or a count beyond its size): computed each time, as
    :func:`job_grid` does. The same values either way (stored and read back as they were computed); only the tie
    between them is broken by the job's ``psu`` at each call. Their divisions and ceilings were ~1.2 of a v1
    step's ~4 µs here."""
    M = wres.shape[0]
    L = fracs.shape[0]
    pc = ps_type(1, 0, False, wbw, pbw, zf, psu) if ps_arch else -1
    P = zf.shape[0]
    vbuf = np.empty(P)
    use_vc = vcache.shape[0] == M and vcache.shape[2] == P + 1
    for m in range(M):
        prev_n = -1
        prev_p = -1
        for lvl in range(L):
            n = _n_workers(D, fracs[lvl])
            for q in range(2):
                p = -1
                if ps_arch:
                    if q == 0:
                        p = pc
                    else:
                        if n != prev_n:  # _ps_type_spread(n, m, wbw, pbw, zf, psu, vbuf)
                            best = math.inf
                            if use_vc and n < vcache.shape[1] and vcache[m, n, 0] == 1.0:
                                for pq in range(P):  # the values computed at an earlier call
                                    vq = vcache[m, n, pq + 1]
                                    vbuf[pq] = vq
                                    if vq < best:
                                        best = vq
                            else:
                                for pq in range(P):
                                    s = math.ceil(n * wbw[m] / pbw[pq] - 1e-9)
                                    if s < 1.0:
                                        s = 1.0
                                    vq = s * zf[pq]
                                    vbuf[pq] = vq
                                    if vq < best:
                                        best = vq
                                if use_vc and n < vcache.shape[1]:
                                    for pq in range(P):
                                        vcache[m, n, pq + 1] = vbuf[pq]
                                    vcache[m, n, 0] = 1.0
                            tol = 1e-12 * max(1.0, abs(best))
                            pbest = 0
                            bu = math.inf
                            for pq in range(P):
                                if abs(vbuf[pq] - best) <= tol and psu[pq] < bu:
                                    bu = psu[pq]
                                    pbest = pq
                            prev_p = pbest
                            prev_n = n
                        p = prev_p
                base = ((m * L + lvl) * 2 + q) * n_delays
                for di in range(n_delays):
                    m4[base + di] = m
                    n4[base + di] = n
                    q4[base + di] = q
                    p4[base + di] = p
    grid_mask(cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, n_delays, m4, n4, q4, p4, feas, mask)


@njit
def job_grid(D, fracs, n_delays, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, zf, psu, feas, m4, n4, q4, p4, mask):
    """:func:`job_grid_cached` without a cache of the spread PS types' values (computed at each call)."""
    job_grid_cached(D, fracs, n_delays, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, zf, psu, feas,
                    np.empty((0, 0, 0)), m4, n4, q4, p4, mask)


@njit
def job_grid_ref(D, fracs, n_delays, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, zf, psu, feas, m4, n4, q4, p4,
                 mask):
    """:func:`job_grid` with :func:`_ps_type_spread` called, the same values (the reference of
    ``tests/speed/test_speed_hetero_v1_step4.py``)."""
    M = wres.shape[0]
    L = fracs.shape[0]
    pc = ps_type(1, 0, False, wbw, pbw, zf, psu) if ps_arch else -1
    vbuf = np.empty(zf.shape[0])
    for m in range(M):
        prev_n = -1
        prev_p = -1
        for lvl in range(L):
            n = _n_workers(D, fracs[lvl])
            for q in range(2):
                p = -1
                if ps_arch:
                    if q == 0:
                        p = pc
                    else:
                        if n != prev_n:
                            prev_p = _ps_type_spread(n, m, wbw, pbw, zf, psu, vbuf)
                            prev_n = n
                        p = prev_p
                base = ((m * L + lvl) * 2 + q) * n_delays
                for di in range(n_delays):
                    m4[base + di] = m
                    n4[base + di] = n
                    q4[base + di] = q
                    p4[base + di] = p
    grid_mask(cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, n_delays, m4, n4, q4, p4, feas, mask)


@njit
def one_worker_fits(free, wres, pres, wbw, pbw, ps_arch, out):
    """``instance.one_worker_fits``: out[m, p] = PLACE finds room for one type-m worker (+ one type-p PS) on the
    residuals ``free`` (H, R) (reference: ``_reference.one_worker_fits``, the same floating-point operations)."""
    H, R = free.shape
    M = wres.shape[0]
    P = out.shape[1]
    # spread fill order: most free GPUs first, then index (a stable sort of -free[:, 0])
    gpu_order = np.argsort(-free[:, 0], kind="mergesort")
    for m in range(M):
        e = wres[m]
        for p in range(P):  # co-located: one server takes the worker and the PS
            co = False
            for h in range(H):
                ok = True
                for r in range(R):
                    zr = pres[p, r] if ps_arch else 0.0
                    if not free[h, r] + 1e-9 >= 1.0 * e[r] + zr:
                        ok = False
                        break
                if ok:
                    co = True
                    break
            out[m, p] = co
        hw = -1
        for i in range(H):
            h = gpu_order[i]
            c = math.inf
            for r in range(R):
                if e[r] > 0:
                    q = math.floor(free[h, r] / e[r] + 1e-9)
                    if q < c:
                        c = q
            if not math.isfinite(c):
                c = BIG_CAP
            if c >= 1.0:
                hw = h
                break
        if hw < 0:  # no server takes one worker: only co-location could (it cannot either: no room)
            continue
        if not ps_arch:
            for p in range(P):
                out[m, p] = True
            continue
        for p in range(P):
            if out[m, p]:
                continue
            ok_any = False
            for g in range(H):
                if g == hw:
                    kk = 1.0  # max(1, ceil(0 · b / B - 1e-9))
                else:
                    kk = max(1.0, math.ceil(wbw[m] / pbw[p] - 1e-9))
                ok = True
                for r in range(R):
                    a = free[g, r] - 1.0 * e[r] if g == hw else free[g, r] - 0.0 * e[r]
                    if not a + 1e-9 >= kk * pres[p, r]:
                        ok = False
                        break
                if ok:
                    ok_any = True
                    break
            out[m, p] = ok_any


# ------------------------------------------------------------------------------------------ ledger windows
# ``rec`` = (start, dur, workers, ps, worker_type, ps_type, jptr, jsrv) of the simulator's committed jobs (< k, in
# commit order); ``jptr`` (J + 2,) and ``jsrv`` (J H,) are the servers each job uses (CSR: job j's are
# ``jsrv[jptr[j]:jptr[j + 1]]``, ascending), filled on demand by :func:`sync_job_servers` for the jobs from
# ``jptr[J + 1]`` (the count already listed) on: a cache of ``workers``/``ps`` alone.


@njit
def sync_job_servers(k, rec):
    """List the servers (workers or PSs > 0) of the committed jobs ``jptr[J + 1] .. k - 1`` into ``jptr/jsrv``."""
    workers, ps, jptr, jsrv = rec[2], rec[3], rec[6], rec[7]
    J = jptr.shape[0] - 2
    H = workers.shape[1]
    done = jptr[J + 1]
    if k <= done:
        return
    for j in range(done, k):
        q = jptr[j]
        for h in range(H):
            if workers[j, h] > 0 or ps[j, h] > 0:
                jsrv[q] = h
                q += 1
        jptr[j + 1] = q
    jptr[J + 1] = k


@njit
def server_jobs(k, t_lo, rec, H):
    """Per server, the jobs (< k, ascending) that use it and end after ``t_lo``: CSR ``(ptr, jobs)``."""
    start, dur, jptr, jsrv = rec[0], rec[1], rec[6], rec[7]
    sync_job_servers(k, rec)
    ptr = np.zeros(H + 1, dtype=np.int64)
    for j in range(k):
        if start[j] + dur[j] > t_lo:
            for i in range(jptr[j], jptr[j + 1]):
                ptr[jsrv[i] + 1] += 1
    for h in range(H):
        ptr[h + 1] += ptr[h]
    jobs = np.empty(ptr[H], dtype=np.int64)
    fill = ptr[:H].copy()
    for j in range(k):
        if start[j] + dur[j] > t_lo:
            for i in range(jptr[j], jptr[j + 1]):
                h = jsrv[i]
                jobs[fill[h]] = j
                fill[h] += 1
    return ptr, jobs


@njit_inline
def _usage(rec, ptr, jobs, wres, pres, ps_arch, h, s, out):
    """out[r] = usage[h, r, s] of the ledger: the footprints (w e + s z) of server h's jobs covering slot s, added in
    commit order from 0.0 (exactly the dense ledger's adds)."""
    start, dur, workers, ps, wt, pt = rec[0], rec[1], rec[2], rec[3], rec[4], rec[5]
    R = out.shape[0]
    for r in range(R):
        out[r] = 0.0
    for i in range(ptr[h], ptr[h + 1]):
        j = jobs[i]
        if start[j] <= s < start[j] + dur[j]:
            w = workers[j, h]
            m = wt[j]
            if ps_arch and pt[j] >= 0:
                q = ps[j, h]
                p = pt[j]
                for r in range(R):
                    out[r] += w * wres[m, r] + q * pres[p, r]
            else:
                for r in range(R):
                    out[r] += w * wres[m, r]


@njit
def free_over(rec, ptr, jobs, wres, pres, ps_arch, cap, t, d, free):
    """free[h, r] = C - max usage over slots [t, t + d) (the capacity if d <= 0); ``ptr/jobs`` from
    :func:`server_jobs` with t_lo <= t.

    The usage is piecewise constant between the starts and ends of a server's jobs; an end only removes terms from
    the ordered sum of non-negative footprints (which cannot increase a rounded sum), so the maximum over the window
    is the maximum over its first slot and the starts inside it."""
    H, R = cap.shape
    if d <= 0:
        free[:, :] = cap
        return
    start = rec[0]
    u = np.empty(R)
    for h in range(H):
        _usage(rec, ptr, jobs, wres, pres, ps_arch, h, t, u)
        for r in range(R):
            free[h, r] = u[r]
        for i in range(ptr[h], ptr[h + 1]):
            s = start[jobs[i]]
            if t < s < t + d:
                _usage(rec, ptr, jobs, wres, pres, ps_arch, h, s, u)
                for r in range(R):
                    if u[r] > free[h, r]:
                        free[h, r] = u[r]
        for r in range(R):
            free[h, r] = cap[h, r] - free[h, r]


@njit
def try_place(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, d, t0, w_out, s_out):
    """The env's ``_try``: the earliest start >= t0 among t0 and the later reservation ends at which
    :func:`grid_place` fits over [t, t + d). Returns (status, t): status 1 placed, 0 none, 2 ambiguous."""
    H, R = cap.shape
    ptr, jobs = server_jobs(k, t0, rec, H)
    free = np.empty((H, R))
    # t0 first (every other candidate is later): the later ones are listed only when it does not fit
    free_over(rec, ptr, jobs, wres, pres, ps_arch, cap, t0, d, free)
    st = grid_place(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, False, w_out, s_out)
    if st != 0:
        return st, t0
    cands = _later_ends(rec, k, t0)
    prev = t0
    for i in range(cands.shape[0]):
        t = cands[i]
        if t == prev:
            continue
        prev = t
        free_over(rec, ptr, jobs, wres, pres, ps_arch, cap, t, d, free)
        st = grid_place(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, False, w_out, s_out)
        if st != 0:
            return st, t
    return 0, -1


@njit_inline
def _later_ends(rec, k, t0):
    """The reservation ends (jobs < k) after ``t0``, sorted (repeats kept)."""
    start, dur = rec[0], rec[1]
    nc = 0
    for j in range(k):
        if start[j] + dur[j] > t0:
            nc += 1
    cands = np.empty(nc, dtype=np.int64)
    i = 0
    for j in range(k):
        c = start[j] + dur[j]
        if c > t0:
            cands[i] = c
            i += 1
    cands.sort()
    return cands


@njit_inline
def _free_over_profiles(pp, cnt, times, vals, cap, t, d, free):
    """:func:`free_over` from the servers' usage profiles (:func:`server_profiles` at a slot <= t): the same numbers
    bit for bit. The piece containing t has the usage at t (the jobs covering a slot change only at breakpoints;
    the row is :func:`_usage`'s sum at the piece's first slot); a later piece starting at a job's start has the
    usage at that start; one starting at an end only (no start there) has a usage <= the piece before it (an end
    only removes terms of the ordered non-negative sum), so the maximum is free_over's."""
    H, R = cap.shape
    if d <= 0:
        free[:, :] = cap
        return
    end = t + d
    for h in range(H):
        base = pp[h]
        last = base + cnt[h]
        q = base
        while q + 1 < last and times[q + 1] <= t:
            q += 1
        for r in range(R):
            free[h, r] = vals[q, r]
        q += 1
        while q < last and times[q] < end:
            for r in range(R):
                if vals[q, r] > free[h, r]:
                    free[h, r] = vals[q, r]
            q += 1
        for r in range(R):
            free[h, r] = cap[h, r] - free[h, r]


@njit
def try_place_on(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, d, t0, w_out, s_out, pp,
                 cnt, times, vals):
    """:func:`try_place` given the servers' usage profiles at a slot <= t0 (:func:`server_profiles` of the same
    committed jobs): the same result."""
    H, R = cap.shape
    free = np.empty((H, R))
    _free_over_profiles(pp, cnt, times, vals, cap, t0, d, free)
    st = grid_place(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, False, w_out, s_out)
    if st != 0:
        return st, t0
    cands = _later_ends(rec, k, t0)
    prev = t0
    for i in range(cands.shape[0]):
        t = cands[i]
        if t == prev:
            continue
        prev = t
        _free_over_profiles(pp, cnt, times, vals, cap, t, d, free)
        st = grid_place(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, False, w_out, s_out)
        if st != 0:
            return st, t
    return 0, -1


@njit
def decode_commit(rec, colocated, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, m, p, n,
                  spread, t0, pp, cnt, times, vals):
    """Decode a grid action and commit it (the env's ``_decode`` then ``ReservationSim.commit`` without T1): the
    earliest start >= t0 (:func:`try_place` with the configuration's planned duration), then the placement's actual
    co-location and exact duration, written into the simulator's arrays (``rec`` and ``colocated``, row k).
    Returns ``(status, start, duration, workers, colocated, rows, f_rows)``: status 1 committed, with the servers
    the job uses (``rows``) and their footprint rows (``f_rows``, the dense ledger's pending commit); 0 none, 2
    ambiguous (nothing written: the env takes its exact path). ``pp, cnt, times, vals``: the servers' usage profiles
    (:func:`server_profiles`) of these committed jobs at a slot <= t0, for :func:`try_place_on`; empty: not at hand
    (then :func:`try_place`)."""
    H, R = cap.shape
    comm = 2.0 * grad * 8.0 / (wbw[m] * 1000.0) / 3600.0
    d = duration(W, v[m], psu[p] if ps_arch else 0.0, ra, comm, n, not spread, ps_arch)
    wk = np.zeros(H, dtype=np.int64)
    ps = np.zeros(H, dtype=np.int64)
    if pp.shape[0] == H + 1 and times[pp[0]] <= t0:
        st, t = try_place_on(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, d, t0, wk, ps,
                             pp, cnt, times, vals)
    else:
        st, t = try_place(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, d, t0, wk, ps)
    rows = np.empty(0, dtype=np.int64)
    fr = np.empty((0, R))
    if st != 1:
        return st, t, 0, 0, False, rows, fr
    nz = 0
    nw = 0
    for h in range(H):
        if wk[h] > 0 or ps[h] > 0:
            nz += 1
        nw += wk[h]
    col = nz == 1
    dd = duration(W, v[m], psu[p] if ps_arch else 0.0, ra, comm, nw, col, ps_arch)
    start, dur, workers, psr, wt, pt = rec[0], rec[1], rec[2], rec[3], rec[4], rec[5]
    start[k] = t
    dur[k] = dd
    wt[k] = m
    pt[k] = p
    for h in range(H):
        workers[k, h] = wk[h]
        psr[k, h] = ps[h]
    colocated[k] = col
    # the footprint f = outer(workers, e) (+ outer(ps, z) with a PS type): its nonzero rows
    # (a server without workers or PSs has the row 0 · e (+ 0 · z) = 0.0: never a row)
    with_ps = p >= 0 and ps_arch
    f = np.empty((nz, R))
    hs = np.empty(nz, dtype=np.int64)
    nr = 0
    for h in range(H):
        if wk[h] > 0 or ps[h] > 0:
            nzr = False
            for r in range(R):
                x = wk[h] * wres[m, r]
                if with_ps:
                    x = x + ps[h] * pres[p, r]
                f[nr, r] = x
                if x != 0:
                    nzr = True
            if nzr:
                hs[nr] = h
                nr += 1
    rows = hs[:nr].copy()
    fr = f[:nr].copy()
    return 1, t, dd, nw, col, rows, fr


@njit
def window_free(rec, k, cap, wres, pres, ps_arch, t, d):
    """C - max usage over slots [t, t + d) of the reservations of jobs < k (``Ledger.free_over``).     # (H, R)"""
    H, R = cap.shape
    ptr, jobs = server_jobs(k, t, rec, H)
    free = np.empty((H, R))
    free_over(rec, ptr, jobs, wres, pres, ps_arch, cap, t, d, free)
    return free


@njit
def gpu_busy(k, rec, wres, pres, ps_arch, t0, t1):
    """Σ over servers and slots [t0, t1) of the GPU usage (resource 0) of jobs < k (an exact integer sum when the
    GPU counts are integers)."""
    start, dur, workers, ps, wt, pt = rec[0], rec[1], rec[2], rec[3], rec[4], rec[5]
    H = workers.shape[1]
    tot = 0.0
    for j in range(k):
        a, b = max(start[j], t0), min(start[j] + dur[j], t1)
        if b <= a:
            continue
        g = 0.0
        for h in range(H):
            f = workers[j, h] * wres[wt[j], 0]
            if ps_arch and pt[j] >= 0:
                f = f + ps[j, h] * pres[pt[j], 0]
            g += f
        tot += g * (b - a)
    return tot


@njit
def gpu_busy_listed(k, rec, wres, pres, ps_arch, t0, t1):
    """:func:`gpu_busy` over the servers each job uses (``jptr/jsrv``, listed by :func:`sync_job_servers`) instead
    of all H: the same number bit for bit. A server the job does not use has no workers and no PSs, so its term is
    0 · e + 0 · z = +0.0 (the GPU columns are finite where this is called: ``HeteroMLEnv._gpu_utilisation``), and
    adding +0.0 to the job's running sum (>= +0.0) leaves it unchanged; the listed servers come in ascending order,
    so the remaining terms are added in :func:`gpu_busy`'s order. Reads ~H / (servers per job) times fewer entries
    of the (J, H) ``workers`` and ``ps`` tables."""
    start, dur, workers, ps, wt, pt, jptr, jsrv = rec
    sync_job_servers(k, rec)
    tot = 0.0
    for j in range(k):
        a, b = max(start[j], t0), min(start[j] + dur[j], t1)
        if b <= a:
            continue
        g = 0.0
        for i in range(jptr[j], jptr[j + 1]):
            h = jsrv[i]
            f = workers[j, h] * wres[wt[j], 0]
            if ps_arch and pt[j] >= 0:
                f = f + ps[j, h] * pres[pt[j], 0]
            g += f
        tot += g * (b - a)
    return tot


@njit
def job_workers(k, rec, out):
    """``out[j]`` = Σ_h workers[j, h] for every job (an exact integer sum in any order): over the servers each
    committed job (< k) uses (``jptr/jsrv``), 0 for the others (their rows are all 0). The same values as
    ``workers.sum(axis=1)`` with ~H / (servers per job) times fewer reads."""
    workers, jptr, jsrv = rec[2], rec[6], rec[7]
    sync_job_servers(k, rec)
    for j in range(out.shape[0]):
        s = 0
        if j < k:
            for i in range(jptr[j], jptr[j + 1]):
                s += workers[j, jsrv[i]]
        out[j] = s


# ------------------------------------------------------------------------------------------ observation
@njit
def job_features(w, E, D, K, grad, v, psu, ra, wbw, T, ps_arch, out):
    """The job block of the observation (w, logs, per-type standalone durations, update times) into ``out``."""
    M = v.shape[0]
    P = psu.shape[0]
    W = float(E * D * K)
    out[0] = w / 5000.0
    out[1] = math.log10(float(E)) / 3
    out[2] = math.log10(float(D)) / 3
    out[3] = math.log10(float(K)) / 3
    out[4] = math.log10(max(grad, 1.0)) / 3
    umin = math.inf
    for p in range(P):
        if psu[p] < umin:
            umin = psu[p]
    frac = (D - 1) / D
    for m in range(M):
        comm = 2.0 * grad * 8.0 / (wbw[m] * 1000.0) / 3600.0
        if ps_arch:
            it_c = v[m] + umin
            it_s = it_c + comm
        else:
            it_c = v[m] + ra * frac
            it_s = it_c + comm * frac
        out[5 + 2 * m] = math.ceil(W * it_c / D - 1e-9) / T
        out[6 + 2 * m] = math.ceil(W * it_s / D - 1e-9) / T
    out[5 + 2 * M] = pairwise_sum(psu, 0, P) / P * 1e4
    out[6 + 2 * M] = umin * 1e4
    out[7 + 2 * M] = ra * 1e4


@njit_inline
def _cap_totals(cap):
    """Each resource's capacity summed over the servers (at least 1e-12): the lookahead's aggregate divisor."""
    H, R = cap.shape
    ctot = np.zeros(R)
    for h in range(H):
        for r in range(R):
            ctot[r] += cap[h, r]
    for r in range(R):
        ctot[r] = max(ctot[r], 1e-12)
    return ctot


@njit_inline
def _hosts(free, wres, m):
    """Whether the free resources ``free`` host one worker of type ``m``."""
    for r in range(free.shape[0]):
        if not free[r] + 1e-9 >= wres[m, r]:
            return False
    return True


@njit
def lookahead_bins(rec, ptr, jobs, wres, pres, ps_arch, cap, now, out):
    """The 8 lookahead bins: per bin [now + lo, now + hi), per resource the aggregate and the largest single-server
    free fraction, then per worker type the fraction of servers that can host one worker (``ptr/jobs`` from
    :func:`server_jobs` with t_lo = now)."""
    H, R = cap.shape
    M = wres.shape[0]
    B = BIN_EDGES.shape[0] - 1
    start, dur = rec[0], rec[1]
    binmax = np.empty((B, R))
    agg = np.zeros((B, R))
    mx = np.full((B, R), -math.inf)
    hosts = np.zeros((B, M))
    ctot = _cap_totals(cap)
    free = np.empty(R)
    u = np.empty(R)
    host = np.zeros(M, dtype=np.bool_)
    for h in range(H):
        if ptr[h] == ptr[h + 1]:  # no reservation of this server ends after now: usage 0.0 in every bin
            for m in range(M):
                ok = True
                for r in range(R):
                    if not (cap[h, r] - 0.0) + 1e-9 >= wres[m, r]:
                        ok = False
                        break
                host[m] = ok
            for r in range(R):
                f = cap[h, r] - 0.0
                C = cap[h, r]
                x = f / (C if C > 0 else 1.0)
                for b in range(B):
                    if h == 0:
                        agg[b, r] = f
                    else:
                        agg[b, r] += f
                    if x > mx[b, r]:
                        mx[b, r] = x
            for m in range(M):
                if host[m]:
                    for b in range(B):
                        hosts[b, m] += 1.0
            continue
        for b in range(B):
            # the usage at the bin's first slot: unchanged from the previous bin's first slot unless a job of this
            # server starts or ends in between
            changed = b == 0
            if not changed:
                for i in range(ptr[h], ptr[h + 1]):
                    j = jobs[i]
                    s0, s1 = start[j], start[j] + dur[j]
                    lo, hi = now + BIN_EDGES[b - 1], now + BIN_EDGES[b]
                    if (lo < s0 <= hi) or (lo < s1 <= hi):
                        changed = True
                        break
            if changed:
                _usage(rec, ptr, jobs, wres, pres, ps_arch, h, now + BIN_EDGES[b], u)
                for r in range(R):
                    binmax[b, r] = u[r]
            else:
                for r in range(R):
                    binmax[b, r] = binmax[b - 1, r]
        # only starts can raise the usage inside a bin (ends remove terms of an ordered non-negative sum)
        for i in range(ptr[h], ptr[h + 1]):
            s = start[jobs[i]]
            off = s - now
            if off <= 0 or off >= BIN_EDGES[B]:
                continue
            b = 0
            while BIN_EDGES[b + 1] <= off:
                b += 1
            if off == BIN_EDGES[b]:
                continue  # the bin's first slot: already in
            _usage(rec, ptr, jobs, wres, pres, ps_arch, h, s, u)
            for r in range(R):
                if u[r] > binmax[b, r]:
                    binmax[b, r] = u[r]
        for b in range(B):
            same = b > 0
            if same:
                for r in range(R):
                    if binmax[b, r] != binmax[b - 1, r]:
                        same = False
                        break
            for r in range(R):
                f = cap[h, r] - binmax[b, r]
                free[r] = f
                if h == 0:
                    agg[b, r] = f
                else:
                    agg[b, r] += f
                C = cap[h, r]
                x = f / (C if C > 0 else 1.0)
                if x > mx[b, r]:
                    mx[b, r] = x
            for m in range(M):
                if not same:  # the same residual as in the previous bin: the same answer
                    host[m] = _hosts(free, wres, m)
                if host[m]:
                    hosts[b, m] += 1.0
    i = 0
    for b in range(B):
        for r in range(R):
            out[i] = agg[b, r] / ctot[r]
            out[i + 1] = mx[b, r]
            i += 2
        for m in range(M):
            out[i] = hosts[b, m] / H
            i += 1


@njit
def lookahead_profiles(pp, cnt, times, vals, wres, cap, now, out):
    """:func:`lookahead_bins` from the servers' usage profiles (:func:`server_profiles` at ``now``): the same
    numbers bit for bit. A piece's row is the usage of the jobs covering its slots, summed in commit order as
    :func:`_usage` sums them (the covering jobs change only at the breakpoints), and the largest usage over a bin is
    the largest row of the pieces that overlap it (exact: a maximum, no rounding)."""
    _lookahead(pp, cnt, times, vals, wres, cap, now, out, np.empty((0, 0)), np.empty((0, 0)),
               np.empty((0, 0), dtype=np.bool_))


@njit
def lookahead_cached(pp, cnt, times, vals, wres, cap, now, out, lfree, lx, lhost):
    """:func:`lookahead_profiles` with a cache kept by the caller between calls (``lfree``, ``lx`` (H, R), NaN rows
    at first, and ``lhost`` (H, M)): for a server with one piece over the whole lookahead, its free row, its free
    fractions and whether it hosts one worker of each type (a pure function of the free row, reused where the row
    is the same bit for bit)."""
    _lookahead(pp, cnt, times, vals, wres, cap, now, out, lfree, lx, lhost)


@njit
def lookahead_profiles_ref(pp, cnt, times, vals, wres, cap, now, out):
    """:func:`lookahead_profiles` through :func:`_lookahead_ref` (the reference of the differential tests)."""
    _lookahead_ref(pp, cnt, times, vals, wres, cap, now, out, np.empty((0, 0)), np.empty((0, 0)),
                   np.empty((0, 0), dtype=np.bool_))


@njit
def lookahead_cached_ref(pp, cnt, times, vals, wres, cap, now, out, lfree, lx, lhost):
    """:func:`lookahead_cached` through :func:`_lookahead_ref` (the reference of the differential tests)."""
    _lookahead_ref(pp, cnt, times, vals, wres, cap, now, out, lfree, lx, lhost)


@njit_inline
def _lookahead(pp, cnt, times, vals, wres, cap, now, out, lfree, lx, lhost):
    """:func:`lookahead_profiles` (empty ``lfree``) or :func:`lookahead_cached`. The aggregates start at -0.0
    (-0.0 + x is x bit for bit, so the first server's row is stored as the reference's ``if h == 0`` did, without
    that branch in the loops; with no server both divide by zero), and a server with pieces inside the lookahead
    adds its host counts as differences at the bins where they change (summed over the bins at the end: exact
    integers) instead of bin by bin. :func:`_lookahead_ref` is the reference (~10.5 -> ~9.3 µs a call on 1,500
    recorded v1 states)."""
    H, R = cap.shape
    cached = lfree.shape[0] == H
    M = wres.shape[0]
    B = BIN_EDGES.shape[0] - 1
    binmax = np.empty((B, R))
    agg = np.full((B, R), -0.0)
    mx = np.full((B, R), -math.inf)
    ctot = _cap_totals(cap)
    free = np.empty(R)
    xr = np.empty(R)
    host = np.zeros(M, dtype=np.bool_)
    mx_flat = np.full(R, -math.inf)
    hosts_flat = np.zeros(M, dtype=np.int64)
    hosts_d = np.zeros((B, M), dtype=np.int64)
    last = now + BIN_EDGES[B]
    for h in range(H):
        base = pp[h]
        nq = cnt[h]
        if nq == 1 or times[base + 1] >= last:  # one piece over the whole lookahead
            same = cached
            for r in range(R):
                f = cap[h, r] - vals[base, r]
                free[r] = f
                if same and not (f == lfree[h, r] and math.copysign(1.0, f) == math.copysign(1.0, lfree[h, r])):
                    same = False
            if same:  # the cached numbers of this very row
                for r in range(R):
                    x = lx[h, r]
                    if x > mx_flat[r]:
                        mx_flat[r] = x
                for m in range(M):
                    if lhost[h, m]:
                        hosts_flat[m] += 1
            else:
                for r in range(R):
                    f = free[r]
                    C = cap[h, r]
                    x = f / (C if C > 0 else 1.0)
                    if x > mx_flat[r]:
                        mx_flat[r] = x
                    if cached:
                        lfree[h, r] = f
                        lx[h, r] = x
                for m in range(M):
                    ok = _hosts(free, wres, m)
                    if ok:
                        hosts_flat[m] += 1
                    if cached:
                        lhost[h, m] = ok
            for b in range(B):
                for r in range(R):
                    agg[b, r] += free[r]
            continue
        qi = 0
        for b in range(B):
            lo, hi = now + BIN_EDGES[b], now + BIN_EDGES[b + 1]
            while qi + 1 < nq and times[base + qi + 1] <= lo:
                qi += 1
            for r in range(R):
                binmax[b, r] = vals[base + qi, r]
            q2 = qi + 1
            while q2 < nq and times[base + q2] < hi:
                for r in range(R):
                    if vals[base + q2, r] > binmax[b, r]:
                        binmax[b, r] = vals[base + q2, r]
                q2 += 1
        for b in range(B):
            same = b > 0
            if same:
                for r in range(R):
                    if binmax[b, r] != binmax[b - 1, r]:
                        same = False
                        break
            if not same:  # a new residual: its numbers (a run of bins with the same residual shares them)
                for r in range(R):
                    f = cap[h, r] - binmax[b, r]
                    free[r] = f
                    C = cap[h, r]
                    xr[r] = f / (C if C > 0 else 1.0)
                for m in range(M):
                    ok = _hosts(free, wres, m)
                    if ok != host[m] or b == 0:
                        # the host counts by differences: +1 from the first bin of a run that hosts, -1 after it
                        if ok:
                            hosts_d[b, m] += 1
                        elif b > 0:
                            hosts_d[b, m] -= 1
                    host[m] = ok
            for r in range(R):
                agg[b, r] += free[r]
                if xr[r] > mx[b, r]:
                    mx[b, r] = xr[r]
    hosts_n = hosts_d  # the running sums of the differences, in place
    for b in range(1, B):
        for m in range(M):
            hosts_n[b, m] += hosts_n[b - 1, m]
    i = 0
    for b in range(B):
        for r in range(R):
            out[i] = agg[b, r] / ctot[r]
            out[i + 1] = max(mx[b, r], mx_flat[r])
            i += 2
        for m in range(M):
            out[i] = float(hosts_n[b, m] + hosts_flat[m]) / H
            i += 1


@njit_inline
def _lookahead_ref(pp, cnt, times, vals, wres, cap, now, out, lfree, lx, lhost):
    """:func:`_lookahead` as it was written first (an ``if h == 0`` store in the aggregate loops, every bin's host
    counts added bin by bin): the reference of :func:`lookahead_cached_ref` and :func:`lookahead_profiles_ref`."""
    H, R = cap.shape
    cached = lfree.shape[0] == H
    M = wres.shape[0]
    B = BIN_EDGES.shape[0] - 1
    binmax = np.empty((B, R))
    agg = np.zeros((B, R))
    mx = np.full((B, R), -math.inf)
    ctot = _cap_totals(cap)
    free = np.empty(R)
    xr = np.empty(R)
    host = np.zeros(M, dtype=np.bool_)
    # servers whose usage is the same in every bin (no breakpoint inside the lookahead): their largest free
    # fraction and host counts are the same in every bin, kept aside (a maximum and integer counts: exact)
    mx_flat = np.full(R, -math.inf)
    hosts_flat = np.zeros(M, dtype=np.int64)
    hosts_n = np.zeros((B, M), dtype=np.int64)
    last = now + BIN_EDGES[B]
    for h in range(H):
        base = pp[h]
        nq = cnt[h]
        if nq == 1 or times[base + 1] >= last:  # one piece over the whole lookahead
            same = cached
            for r in range(R):
                f = cap[h, r] - vals[base, r]
                free[r] = f
                if same and not (f == lfree[h, r] and math.copysign(1.0, f) == math.copysign(1.0, lfree[h, r])):
                    same = False
            if same:  # the cached numbers of this very row
                for r in range(R):
                    x = lx[h, r]
                    if x > mx_flat[r]:
                        mx_flat[r] = x
                for m in range(M):
                    if lhost[h, m]:
                        hosts_flat[m] += 1
            else:
                for r in range(R):
                    f = free[r]
                    C = cap[h, r]
                    x = f / (C if C > 0 else 1.0)
                    if x > mx_flat[r]:
                        mx_flat[r] = x
                    if cached:
                        lfree[h, r] = f
                        lx[h, r] = x
                for m in range(M):
                    ok = _hosts(free, wres, m)
                    if ok:
                        hosts_flat[m] += 1
                    if cached:
                        lhost[h, m] = ok
            for b in range(B):
                for r in range(R):
                    if h == 0:
                        agg[b, r] = free[r]
                    else:
                        agg[b, r] += free[r]
            continue
        qi = 0
        for b in range(B):
            lo, hi = now + BIN_EDGES[b], now + BIN_EDGES[b + 1]
            while qi + 1 < nq and times[base + qi + 1] <= lo:
                qi += 1
            for r in range(R):
                binmax[b, r] = vals[base + qi, r]
            q2 = qi + 1
            while q2 < nq and times[base + q2] < hi:
                for r in range(R):
                    if vals[base + q2, r] > binmax[b, r]:
                        binmax[b, r] = vals[base + q2, r]
                q2 += 1
        for b in range(B):
            same = b > 0
            if same:
                for r in range(R):
                    if binmax[b, r] != binmax[b - 1, r]:
                        same = False
                        break
            if not same:  # the same residual as in the previous bin: the same numbers (kept from there)
                for r in range(R):
                    f = cap[h, r] - binmax[b, r]
                    free[r] = f
                    C = cap[h, r]
                    xr[r] = f / (C if C > 0 else 1.0)
                for m in range(M):
                    host[m] = _hosts(free, wres, m)
            for r in range(R):
                if h == 0:
                    agg[b, r] = free[r]
                else:
                    agg[b, r] += free[r]
                if xr[r] > mx[b, r]:
                    mx[b, r] = xr[r]
            for m in range(M):
                if host[m]:
                    hosts_n[b, m] += 1
    i = 0
    for b in range(B):
        for r in range(R):
            out[i] = agg[b, r] / ctot[r]
            out[i + 1] = max(mx[b, r], mx_flat[r])
            i += 2
        for m in range(M):
            out[i] = float(hosts_n[b, m] + hosts_flat[m]) / H
            i += 1


@njit_inline
def _to_obs(y, lo, hi):
    """One observation value: float64 -> float32, NaN -> 0, +-inf -> the float32 extremes, clipped to [lo, hi]."""
    v = np.float32(y)
    if math.isnan(v):
        v = np.float32(0.0)
    elif v == math.inf:
        v = np.float32(3.4028234663852886e38)
    elif v == -math.inf:
        v = np.float32(-3.4028234663852886e38)
    if v < lo:
        v = lo
    if v > hi:
        v = hi
    return v


@njit
def finish_observation(x, lo, hi, out):
    """float64 -> float32, NaN -> 0, +-inf -> the float32 extremes, clipped to [lo, hi] (``np.clip(np.nan_to_num(
    x.astype(np.float32)), lo, hi)``)."""
    finish_range(x, lo, hi, out, 0, x.shape[0])


@njit
def finish_range(x, lo, hi, out, a, b):
    """:func:`finish_observation` of the entries ``a .. b - 1``."""
    for i in range(a, b):
        out[i] = _to_obs(x[i], lo[i], hi[i])


@njit
def count_after(k, start, dur, now):
    """Committed jobs (< k) that complete after ``now``."""
    c = 0
    for j in range(k):
        if start[j] + dur[j] > now:
            c += 1
    return c


# ------------------------------------------------------------------------------------------ grid estimates (v1)
@njit_inline
def _server_pieces(rec, ptr, jobs, wres, pres, ps_arch, h, now, base, times, vals, u):
    """Server h's pieces of :func:`server_profiles` written from ``times/vals[base]`` on (``ptr/jobs`` from
    :func:`server_jobs` with t_lo = now, or listing server h's jobs ending after ``now`` in the same order). Returns
    their count."""
    start, dur = rec[0], rec[1]
    R = vals.shape[1]
    n = 1
    times[base] = now
    for i in range(ptr[h], ptr[h + 1]):
        j = jobs[i]
        if start[j] > now:
            times[base + n] = start[j]
            n += 1
        times[base + n] = start[j] + dur[j]
        n += 1
    for i in range(base + 1, base + n):  # insertion sort: a server has few breakpoints
        x = times[i]
        q = i - 1
        while q >= base and times[q] > x:
            times[q + 1] = times[q]
            q -= 1
        times[q + 1] = x
    w = 1
    for i in range(1, n):
        if times[base + i] != times[base + w - 1]:
            times[base + w] = times[base + i]
            w += 1
    for i in range(w):
        _usage(rec, ptr, jobs, wres, pres, ps_arch, h, times[base + i], u)
        for r in range(R):
            vals[base + i, r] = u[r]
    return w


@njit
def server_profiles(k, now, rec, wres, pres, ps_arch, H, R):
    """Each server's usage from ``now`` on as a step function: breakpoints (``now``, then the starts and ends after
    ``now`` of its jobs, sorted, distinct) and the usage row from each breakpoint on. CSR: server h's pieces are
    ``times/vals[pp[h]:pp[h] + cnt[h]]``."""
    ptr, jobs = server_jobs(k, now, rec, H)
    pp = np.zeros(H + 1, dtype=np.int64)
    for h in range(H):
        pp[h + 1] = pp[h] + 1 + 2 * (ptr[h + 1] - ptr[h])
    times = np.empty(pp[H], dtype=np.int64)
    vals = np.empty((pp[H], R))
    cnt = np.zeros(H, dtype=np.int64)
    u = np.empty(R)
    for h in range(H):
        cnt[h] = _server_pieces(rec, ptr, jobs, wres, pres, ps_arch, h, now, pp[h], times, vals, u)
    return pp, cnt, times, vals


@njit
def server_profiles_after(k, now, rec, wres, pres, ps_arch, H, R, opp, ocnt, otimes, ovals):
    """:func:`server_profiles` (k, now) given the profiles ``opp, ocnt, otimes, ovals`` of the committed jobs < k - 1
    at a slot <= now (those of the previous decision): the same pieces (the layout may differ: ``pp[h]`` is where
    server h's pieces start, ``cnt[h]`` how many). Only the servers of job k - 1 are profiled again; another server
    has the same jobs, so its pieces after ``now`` are the old ones and its piece at ``now`` is the old piece
    containing ``now`` (the jobs covering a slot change only at breakpoints: the same ordered sum)."""
    start, dur, jptr, jsrv = rec[0], rec[1], rec[6], rec[7]
    sync_job_servers(k, rec)
    sel = np.zeros(H, dtype=np.bool_)
    for i in range(jptr[k - 1], jptr[k]):
        sel[jsrv[i]] = True
    # the jobs (ascending) of the servers of job k - 1 that end after now: CSR over all servers (others empty)
    ptr = np.zeros(H + 1, dtype=np.int64)
    for j in range(k):
        if start[j] + dur[j] > now:
            for i in range(jptr[j], jptr[j + 1]):
                if sel[jsrv[i]]:
                    ptr[jsrv[i] + 1] += 1
    for h in range(H):
        ptr[h + 1] += ptr[h]
    jobs = np.empty(ptr[H], dtype=np.int64)
    fill = ptr[:H].copy()
    for j in range(k):
        if start[j] + dur[j] > now:
            for i in range(jptr[j], jptr[j + 1]):
                h = jsrv[i]
                if sel[h]:
                    jobs[fill[h]] = j
                    fill[h] += 1
    first = np.empty(H, dtype=np.int64)  # an unchanged server's old piece containing now
    pp = np.zeros(H + 1, dtype=np.int64)
    for h in range(H):
        if sel[h]:
            pp[h + 1] = pp[h] + 1 + 2 * (ptr[h + 1] - ptr[h])
        else:
            q = opp[h]
            last = q + ocnt[h]
            while q + 1 < last and otimes[q + 1] <= now:
                q += 1
            first[h] = q
            pp[h + 1] = pp[h] + last - q
    times = np.empty(pp[H], dtype=np.int64)
    vals = np.empty((pp[H], R))
    cnt = np.zeros(H, dtype=np.int64)
    u = np.empty(R)
    for h in range(H):
        base = pp[h]
        if sel[h]:
            cnt[h] = _server_pieces(rec, ptr, jobs, wres, pres, ps_arch, h, now, base, times, vals, u)
        else:
            q = first[h]
            c = pp[h + 1] - base
            times[base] = now
            for r in range(R):
                vals[base, r] = ovals[q, r]
            for i in range(1, c):
                times[base + i] = otimes[q + i]
                for r in range(R):
                    vals[base + i, r] = ovals[q + i, r]
            cnt[h] = c
    return pp, cnt, times, vals


@njit_inline
def _fits_cached(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, caps_hm, tot_m, fmax, cmax):
    """:func:`fits` given the residual's per-server worker capacities ``caps_hm[h, m]`` and their totals ``tot_m``
    (exact integer sums) and largest per server ``cmax`` (max(0, max_h caps_hm[h, m])), with an exact necessary
    condition tested first for a co-located configuration from the residual's per-resource largest free amount
    ``fmax``: every resource must fit on the roomiest server."""
    H, R = free.shape
    e = wres[m]
    if not spread:
        for r in range(R):
            zr = pres[p, r] if ps_arch else 0.0
            if not fmax[r] + 1e-9 >= n * e[r] + zr:
                return 0
        return fits(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, spread, False)
    return _spread_fits_from(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, caps_hm, tot_m, cmax, 0)[0]


@njit_inline
def _spread_fits_from(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, caps_hm, tot_m, cmax, hint):
    """:func:`_fits_cached` of a spread configuration, the servers tried for a PS from server ``hint`` on (whether
    one holds it does not depend on the order): returns ``(status, the next hint)``, the next hint a server that
    held the PSs (else ``hint``)."""
    H, R = free.shape
    tot = tot_m[m]
    if tot < n:
        return 0, hint  # a PS only removes room
    if not ps_arch:
        return 1, hint
    z = pres[p]
    kk = max(1.0, math.ceil(n * wbw[m] / pbw[p] - 1e-9))
    any_ps = False
    for i in range(H + 1):
        h = hint if i == 0 else i - 1
        if i > 0 and h == hint:
            continue
        ok = True
        for r in range(R):
            if not free[h, r] + 1e-9 >= kk * z[r]:
                ok = False
                break
        if ok:
            any_ps = True
            hint = h
            break
    if not any_ps:
        return 0, hint
    mx = cmax[m]
    if tot - mx >= n:
        return 1, hint  # the PS server loses at most all of its room
    return _spread_fits_cached(free, cap, wres, pres, cbar, lam, m, p, n, kk, caps_hm, tot), hint


@njit_inline
def _colocated_fits(free, wres, pres, ps_arch, m, p, n, fmax, hint, need):
    """:func:`fits` of a co-located configuration (whether one server's residual holds its ``n`` workers and PS, with
    the same sums and tolerance), testing server ``hint`` first: returns ``(1 or 0, the next hint)``. The answer does
    not depend on the order the servers are tried in, and the server that held the previous configuration mostly
    holds the next one (the full scan from server 0 tried ~33 servers per test on HeteroML-v1's estimates).
    ``fmax``: the residual's largest free amount per resource (every resource must fit on the roomiest server).
    ``need``: scratch of R floats (an allocation per test cost ~0.03 µs of ~0.1)."""
    H, R = free.shape
    e = wres[m]
    for r in range(R):
        zr = pres[p, r] if ps_arch else 0.0
        need[r] = n * e[r] + zr
        if not fmax[r] + 1e-9 >= need[r]:
            return 0, hint
    for i in range(H + 1):
        h = hint if i == 0 else i - 1
        if i > 0 and h == hint:
            continue
        ok = True
        for r in range(R):
            if not free[h, r] + 1e-9 >= need[r]:
                ok = False
                break
        if ok:
            return 1, h
    return 0, hint


@njit_inline
def _spread_fits_cached(free, cap, wres, pres, cbar, lam, m, p, n, kk, caps_hm, tot):
    """:func:`fits`'s spread case with a PS (``kk`` PSs of type ``p``), given the residual's per-server worker
    capacities ``caps_hm[:, m]`` and their exact total ``tot`` (what :func:`fits` sums itself): the same answer.
    :func:`fits` compares the total less the least and the largest room a PS server loses with ``n``; a server's
    loss lies in [0, its room], so only a server with room > tot - n can lose too much, and only its loss is
    computed (the full search spent ~12 µs here per call, mostly in the rooms)."""
    H, R = free.shape
    e = wres[m]
    z = pres[p]
    row = np.empty(R)
    thr = tot - n  # a PS server losing more than this leaves too little room
    small = False  # a PS server losing <= thr (fits's tot - lo_loss >= n)
    big = False  # a PS server losing > thr (fits's tot - hi_loss < n)
    for h in range(H):
        if not _holds(free, h, kk, z):
            continue
        c = caps_hm[h, m]
        if c <= thr:
            small = True
        else:
            for r in range(R):
                row[r] = free[h, r] - kk * z[r]
            if c - _caps_of(row, e, R) > thr:
                big = True
            else:
                small = True
        if small and big:
            break
    if not (small or big):
        return 0
    if not big:
        return 1
    if not small:
        return 0
    # the PS server decides, as in fits (the rooms from the cache)
    return _ps_server_decides(free, cap, cbar, lam, e, z, kk, n, tot, caps_hm, m)


@njit_inline
def _stable_order(x):
    """``np.argsort(x, kind="mergesort")`` (the stable order) of an int64 array: one sort of the distinct keys
    x[i] · n + i (by value, then by index) when they fit in int64 (x >= 0), else the merge sort itself."""
    n = x.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64)
    lo, hi = x.min(), x.max()
    if lo < 0 or hi >= (2 ** 62) // n:
        return np.argsort(x, kind="mergesort")
    key = x * n + np.arange(n)
    key.sort()
    return key % n


@njit_inline
def _next_end(ends, t):
    """The least of ``ends`` after ``t``, or -1 when none is: the next candidate start after ``t`` (a scan of the
    unsorted ends: a search tries ~5 candidates in all, and sorting the ~70 ends took ~2 µs a call)."""
    best = -1
    for i in range(ends.shape[0]):
        x = ends[i]
        if x > t and (best < 0 or x < best):
            best = x
    return best


@njit_inline
def _valid_by_duration(cdd, valid):
    """The configurations ``c`` with ``valid[c]``, by ``cdd[c]`` (stable: ties by index), and their count: the
    order of :func:`_stable_order` of ``cdd`` with the invalid ones left out, by insertion (~45 of 96 configurations
    are valid; the sort of all 96 mispredicted, ~2 µs a call)."""
    n = cdd.shape[0]
    order = np.empty(n, dtype=np.int64)
    nv = 0
    for c in range(n):
        if not valid[c]:
            continue
        x = cdd[c]
        i = nv
        while i > 0 and cdd[order[i - 1]] > x:
            order[i] = order[i - 1]
            i -= 1
        order[i] = c
        nv += 1
    return order, nv


@njit_inline
def _breakpoints(H, pp, cnt, times):
    """Every breakpoint after the first piece of the usage profile of each of the ``H`` servers, by time (stable):
    ``(time, piece row, server)`` arrays. When they span fewer than 4,096 slots (HeteroML-v1's states: ~130
    breakpoints over ~1,900 slots), a stable LSD radix sort of their offsets from the first one in two passes of 64
    buckets (the low 6 bits, then the high 6: by time, ties in the order they are listed, server by server), the
    order of :func:`_breakpoints_ref`, whose counting sort zeroes and sums a count per slot of the span (~0.6 µs
    more a call); otherwise :func:`_breakpoints_ref` itself."""
    nev = 0
    lo, hi = 0, -1
    for h in range(H):
        nev += cnt[h] - 1
        if cnt[h] > 1:  # a server's breakpoints are sorted: its first and last after the first piece
            a, b = times[pp[h] + 1], times[pp[h] + cnt[h] - 1]
            if hi < lo:
                lo, hi = a, b
            else:
                lo, hi = min(lo, a), max(hi, b)
    if nev == 0 or hi - lo >= 4096:
        return _breakpoints_ref(H, pp, cnt, times)
    # bucket starts of both passes (counts shifted by one, then summed)
    n0 = np.zeros(130, dtype=np.int64)
    for h in range(H):
        for q in range(pp[h] + 1, pp[h] + cnt[h]):
            x = times[q] - lo
            n0[(x & 63) + 1] += 1
            n0[65 + (x >> 6) + 1] += 1
    for i in range(1, 65):
        n0[i] += n0[i - 1]
        n0[65 + i] += n0[65 + i - 1]
    # pass 1 (low bits) into tq/th, listed order kept within a bucket
    tq = np.empty(nev, dtype=np.int64)
    th = np.empty(nev, dtype=np.int64)
    for h in range(H):
        for q in range(pp[h] + 1, pp[h] + cnt[h]):
            b = (times[q] - lo) & 63
            i = n0[b]
            n0[b] = i + 1
            tq[i] = q
            th[i] = h
    # pass 2 (high bits), pass 1's order kept within a bucket
    ev_t = np.empty(nev, dtype=np.int64)
    ev_i = np.empty(nev, dtype=np.int64)
    ev_h = np.empty(nev, dtype=np.int64)
    for j in range(nev):
        q = tq[j]
        x = times[q]
        b = 65 + ((x - lo) >> 6)
        i = n0[b]
        n0[b] = i + 1
        ev_t[i] = x
        ev_i[i] = q
        ev_h[i] = th[j]
    return ev_t, ev_i, ev_h


@njit_inline
def _breakpoints_ref(H, pp, cnt, times):
    """:func:`_breakpoints` by a stable counting sort over the slots they span (up to ``32 * count + 4096``) or a
    stable sort: the reference, and :func:`_breakpoints`'s own path for a span of 4,096 slots or more."""
    nev = 0
    lo, hi = 0, -1
    for h in range(H):
        nev += cnt[h] - 1
        if cnt[h] > 1:  # a server's breakpoints are sorted: its first and last after the first piece
            a, b = times[pp[h] + 1], times[pp[h] + cnt[h] - 1]
            if hi < lo:
                lo, hi = a, b
            else:
                lo, hi = min(lo, a), max(hi, b)
    if nev > 0 and hi - lo <= 32 * nev + 4096:
        # a stable counting sort over the slots they span (a few thousand on HeteroML-v1's states, ~130 breakpoints
        # over ~1,900 slots): the same order as the sort below, which took ~6 µs a call there (its comparisons
        # mispredicted), once per earliest-start search
        pos = np.zeros(hi - lo + 2, dtype=np.int64)
        for h in range(H):
            for q in range(pp[h] + 1, pp[h] + cnt[h]):
                pos[times[q] - lo + 1] += 1
        for i in range(1, hi - lo + 2):
            pos[i] += pos[i - 1]
        ev_t = np.empty(nev, dtype=np.int64)
        ev_i = np.empty(nev, dtype=np.int64)
        ev_h = np.empty(nev, dtype=np.int64)
        for h in range(H):
            for q in range(pp[h] + 1, pp[h] + cnt[h]):
                x = times[q] - lo
                i = pos[x]
                pos[x] = i + 1
                ev_t[i] = times[q]
                ev_i[i] = q
                ev_h[i] = h
        return ev_t, ev_i, ev_h
    ev_t = np.empty(nev, dtype=np.int64)
    ev_i = np.empty(nev, dtype=np.int64)
    ev_h = np.empty(nev, dtype=np.int64)
    i = 0
    for h in range(H):
        for q in range(pp[h] + 1, pp[h] + cnt[h]):
            ev_t[i] = times[q]
            ev_i[i] = q
            ev_h[i] = h
            i += 1
    order = _stable_order(ev_t)
    return ev_t[order], ev_i[order], ev_h[order]


@njit_inline
def _reset_row(h, t, q, first, pp, cnt, times, vals, used, dirty, dlist, n_dirty, qcur):
    """Set server h's usage row to its piece containing ``t``, found from piece ``q`` on (one at a slot <= t), and
    record it in ``qcur``; list h in ``dlist`` once (``dirty``) if its row changed (or ``first``). Returns the new
    count of listed servers."""
    R = used.shape[1]
    while q + 1 < pp[h] + cnt[h] and times[q + 1] <= t:
        q += 1
    qcur[h] = q
    row_changed = False
    for r in range(R):
        if used[h, r] != vals[q, r] or first:
            row_changed = True
        used[h, r] = vals[q, r]
    if row_changed and not dirty[h]:
        dirty[h] = True
        dlist[n_dirty] = h
        n_dirty += 1
    return n_dirty


@njit_inline
def _residual_next(t, e_at, e, ev_h, pp, cnt, times, vals, used, dirty, dlist, n_dirty, qcur, hit, hlist, n_hit):
    """The usage rows at a later candidate ``t`` (each server's piece containing it), from the pieces ``qcur`` at
    the previous one, on the servers that can differ alone: those with a breakpoint in (previous candidate, t]
    (``ev_h[e_at:e]``) and those whose row a window's maximum raised since (``hlist[:n_hit]``, flagged in ``hit``,
    cleared here); a changed server is listed in ``dlist`` once (``dirty``). Every other server's row is its piece
    at t already (walking all H servers at each of a search's ~12 candidates took ~1 µs each). Returns the new
    count of listed servers."""
    for i in range(e_at, e):
        h = ev_h[i]
        if not hit[h]:
            hit[h] = True
            hlist[n_hit] = h
            n_hit += 1
    for i in range(n_hit):
        h = hlist[i]
        hit[h] = False
        n_dirty = _reset_row(h, t, qcur[h], False, pp, cnt, times, vals, used, dirty, dlist, n_dirty, qcur)
    return n_dirty


@njit_inline
def _extend_window(end, e, ev_t, ev_i, ev_h, vals, used, dirty, dlist, n_dirty, hit, hlist, n_hit):
    """Extend the residual's window to ``end``: every breakpoint from ``e`` before ``end`` raises its server's usage
    row to its piece's where larger; a raised server is listed in ``dlist`` (``dirty``) and in ``hlist`` (``hit``,
    for :func:`_residual_next`) once. Returns ``(next breakpoint, listed count, raised count)``."""
    R = used.shape[1]
    nev = ev_t.shape[0]
    while e < nev and ev_t[e] < end:
        h, q = ev_h[e], ev_i[e]
        row_changed = False
        for r in range(R):
            if vals[q, r] > used[h, r]:
                used[h, r] = vals[q, r]
                row_changed = True
        if row_changed:
            if not hit[h]:
                hit[h] = True
                hlist[n_hit] = h
                n_hit += 1
            if not dirty[h]:
                dirty[h] = True
                dlist[n_dirty] = h
                n_dirty += 1
        e += 1
    return e, n_dirty, n_hit


@njit_inline
def _first_residual(t, pp, cnt, times, vals, cap, wres, used, free, cfree, ccaps, caps_hm, qcur, tot_m, cmax, cmax_h,
                    fmax, fmax_h):
    """The residual at a search's first candidate ``t``, in one pass over the servers: each server's usage row (its
    piece containing ``t``, recorded in ``qcur``), residual row, worker capacities (from the cache ``ccaps`` where
    the row equals the cached ``cfree``, refreshing the cache elsewhere), the capacity totals (``tot_m``, from 0)
    and the per-type and per-resource maxima with the first server holding each (``cmax`` from 0, ``fmax`` from
    -inf); no server is listed as changed. Two passes (rows, then what derives from them) with a list of changed
    servers took ~5 µs of a v1 step's estimates."""
    H, R = used.shape
    M = wres.shape[0]
    for h in range(H):
        q = pp[h]
        while q + 1 < pp[h] + cnt[h] and times[q + 1] <= t:
            q += 1
        qcur[h] = q
        same = True
        for r in range(R):
            u = vals[q, r]
            used[h, r] = u
            f = cap[h, r] - u
            free[h, r] = f
            if f != cfree[h, r]:
                same = False
        if same:
            for mm in range(M):
                caps_hm[h, mm] = ccaps[h, mm]
        else:
            for mm in range(M):
                caps_hm[h, mm] = _caps_of(free[h], wres[mm], R)
                ccaps[h, mm] = caps_hm[h, mm]
            for r in range(R):
                cfree[h, r] = free[h, r]
        for mm in range(M):
            c = caps_hm[h, mm]
            tot_m[mm] += c
            if c > cmax[mm]:
                cmax[mm] = c
                cmax_h[mm] = h
        for r in range(R):
            if free[h, r] > fmax[r]:
                fmax[r] = free[h, r]
                fmax_h[r] = h


@njit
def grid_estimates(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, now, delays, m4, n4,
                   q4, p4, mask, start_out, dur_out, cfree, ccaps):
    """``HeteroMLEnv.grid_estimates``: :func:`grid_estimates_on` with the servers' profiles at ``now``."""
    H, R = cap.shape
    pp, cnt, times, vals = server_profiles(k, now, rec, wres, pres, ps_arch, H, R)
    return grid_estimates_on(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, now, delays,
                             m4, n4, q4, p4, mask, start_out, dur_out, cfree, ccaps, pp, cnt, times, vals)


@njit
def grid_estimates_on(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, now, delays, m4, n4,
                      q4, p4, mask, start_out, dur_out, cfree, ccaps, pp, cnt, times, vals):
    """``HeteroMLEnv.grid_estimates`` given the servers' usage profiles at ``now`` (``pp, cnt, times, vals`` of
    :func:`server_profiles`): earliest start (>= now + delay, among that slot and the later reservation
    ends, at which :func:`grid_place` fits over [t, t + max(d, 1))) and duration of every grid action (invalid: -1,
    0). Returns 1, or 2 when a price tie within rounding makes a test ambiguous (rerun with the reference).

    Work sharing (exact): the residual over [t, t + d) is built once per candidate t and extended as d grows
    (configurations visited by duration); spread capacity totals are shared per worker type; and for a larger
    delay, a configuration whose earliest start t* under the previous (smaller) delay is >= now + delay starts at
    now + delay if it fits there and at t* otherwise (the candidates in between were all tried and failed).

    The per-test helpers (:func:`_reset_row`, :func:`_residual_next`, :func:`_extend_window`, :func:`_caps_of`,
    :func:`_colocated_fits`, :func:`_spread_fits_from`) are written out in the loop, the same operations in the same
    order: each inlined call took and released a reference to every array it was handed (atomic counts, ~1/5 of
    this kernel's time on HeteroML-v1); :func:`grid_estimates_on_ref` calls them (the reference).

    ``cfree`` (H, R) and ``ccaps`` (H, M): a cache kept by the caller between calls (NaN rows at first), each
    server's residual row at the first candidate of the last call and its worker capacities (a pure function of the
    row: reused only where the row is equal)."""
    G = mask.shape[0]
    nd = delays.shape[0]
    H, R = cap.shape
    M = wres.shape[0]
    start, dur = rec[0], rec[1]
    for a in range(G):
        start_out[a] = -1
        dur_out[a] = 0
    NC = G // nd
    # the per-call arrays as views of one block per dtype (3 allocations instead of 24; each view is filled as its
    # own np.zeros / np.full was, or written before it is read as its np.empty was)
    ib = np.empty(4 * NC + 4 * H + R + M, dtype=np.int64)
    fb = np.empty(2 * H * R + H * M + 2 * M + 2 * R)
    bb = np.zeros(3 * NC + 2 * H + R + M, dtype=np.bool_)
    cd, cdd, res, prev = ib[0:NC], ib[NC : 2 * NC], ib[2 * NC : 3 * NC], ib[3 * NC : 4 * NC]
    o = 4 * NC
    multi, dlist = ib[o : o + H], ib[o + H : o + 2 * H]
    qcur, hlist = ib[o + 2 * H : o + 3 * H], ib[o + 3 * H : o + 4 * H]
    o += 4 * H
    fmax_h, cmax_h = ib[o : o + R], ib[o + R : o + R + M]
    used, free = fb[0 : H * R].reshape((H, R)), fb[H * R : 2 * H * R].reshape((H, R))
    o = 2 * H * R
    caps_hm = fb[o : o + H * M].reshape((H, M))
    o += H * M
    tot_m, cmax, fmax, need = fb[o : o + M], fb[o + M : o + 2 * M], fb[o + 2 * M : o + 2 * M + R], fb[o + 2 * M + R :]
    valid, todo, limited = bb[0:NC], bb[NC : 2 * NC], bb[2 * NC : 3 * NC]
    o = 3 * NC
    dirty, hit = bb[o : o + H], bb[o + H : o + 2 * H]
    col_stale, cm_stale = bb[o + 2 * H : o + 2 * H + R], bb[o + 2 * H + R :]
    cd[:] = 0
    for c in range(NC):
        a = c * nd
        if not mask[a]:
            continue
        valid[c] = True
        m = m4[a]
        comm = 2.0 * grad * 8.0 / (wbw[m] * 1000.0) / 3600.0
        cd[c] = duration(W, v[m], psu[p4[a]] if ps_arch else 0.0, ra, comm, n4[a], q4[a] == 0, ps_arch)
    # candidate times: the reservation ends after now, unsorted (:func:`_next_end` takes them in order)
    ne = 0
    for j in range(k):
        if start[j] + dur[j] > now:
            ne += 1
    ends = np.empty(ne, dtype=np.int64)
    i = 0
    for j in range(k):
        if start[j] + dur[j] > now:
            ends[i] = start[j] + dur[j]
            i += 1
    # every breakpoint after now of every server, by time: (time, piece row, server)
    ev_t, ev_i, ev_h = _breakpoints(H, pp, cnt, times)
    for c in range(NC):  # np.maximum(cd, 1)
        cdd[c] = max(cd[c], 1)
    by_d, nbd = _valid_by_duration(cdd, valid)
    # the servers with a breakpoint after now (the others' usage rows never change after the first candidate)
    n_multi = 0
    for h in range(H):
        if cnt[h] > 1:
            multi[n_multi] = h
            n_multi += 1
    free[:, :] = np.nan  # NaN: not derived yet (differs from every value)
    caps_hm[:, :] = 0.0
    tot_m[:] = 0.0
    fmax[:] = -math.inf
    fmax_h[:] = -1  # a server holding fmax[r]
    cmax[:] = 0.0  # max(0, max_h caps_hm[h, m]) and a server holding it (-1: none above 0)
    cmax_h[:] = -1
    # ``dirty``: servers whose usage row changed since their residual row was last derived (:func:`_first_residual`
    # derives every row at the first candidate); ``dlist`` lists them
    n_dirty = 0
    # each server's piece at the current candidate (``qcur``) and the servers a window raised since (``hit``,
    # listed in ``hlist``: ``_residual_next``)
    n_hit = 0
    e_at = 0  # the first breakpoint after the current candidate
    nev = ev_t.shape[0]
    res[:] = -1  # earliest start under the current delay
    prev[:] = -1  # ... under the previous (smaller) delay
    # ``todo``; ``limited``: only now + delay to try (else prev)
    dorder = np.argsort(delays, kind="mergesort")
    have_prev = False
    first = True
    hint = 0  # the server where the last co-located configuration fitted (:func:`_colocated_fits`)
    shint = 0  # the server that held the last spread configuration's PSs (:func:`_spread_fits_from`)
    for dk in range(nd):
        di = dorder[dk]
        t0 = now + delays[di]
        n_todo = 0
        for c in range(NC):
            res[c] = -1
            todo[c] = valid[c]
            limited[c] = False
            if valid[c]:
                n_todo += 1
                if have_prev and prev[c] >= t0:
                    if prev[c] == t0:
                        res[c] = t0
                        todo[c] = False
                        n_todo -= 1
                    else:
                        limited[c] = True
        t = t0
        at_t0 = True
        while n_todo > 0:
            if not at_t0:
                t = _next_end(ends, t)
                if t < 0:
                    break
            # residual at t: the piece of each server containing t, then extended by duration (a delay's first
            # candidate walks every server with a breakpoint: the candidates go back in time from one delay to the
            # next)
            e = np.searchsorted(ev_t, t, side="right")
            if at_t0:
                at_t0 = False
                for i in range(n_hit):
                    hit[hlist[i]] = False
                if first:  # worker capacities from the cache where the row is equal
                    _first_residual(t, pp, cnt, times, vals, cap, wres, used, free, cfree, ccaps, caps_hm, qcur,
                                    tot_m, cmax, cmax_h, fmax, fmax_h)
                else:
                    for i in range(n_multi):  # _reset_row(h, t, pp[h], False, ...)
                        h = multi[i]
                        q = pp[h]
                        qe = pp[h] + cnt[h]
                        while q + 1 < qe and times[q + 1] <= t:
                            q += 1
                        qcur[h] = q
                        row_changed = False
                        for r in range(R):
                            if used[h, r] != vals[q, r]:
                                row_changed = True
                            used[h, r] = vals[q, r]
                        if row_changed and not dirty[h]:
                            dirty[h] = True
                            dlist[n_dirty] = h
                            n_dirty += 1
            else:  # _residual_next (its raised servers' list is cleared below)
                for i in range(e_at, e):
                    h = ev_h[i]
                    if not hit[h]:
                        hit[h] = True
                        hlist[n_hit] = h
                        n_hit += 1
                for i in range(n_hit):  # _reset_row(h, t, qcur[h], False, ...)
                    h = hlist[i]
                    hit[h] = False
                    q = qcur[h]
                    qe = pp[h] + cnt[h]
                    while q + 1 < qe and times[q + 1] <= t:
                        q += 1
                    qcur[h] = q
                    row_changed = False
                    for r in range(R):
                        if used[h, r] != vals[q, r]:
                            row_changed = True
                        used[h, r] = vals[q, r]
                    if row_changed and not dirty[h]:
                        dirty[h] = True
                        dlist[n_dirty] = h
                        n_dirty += 1
            n_hit = 0
            e_at = e
            first = False
            for bi in range(nbd):
                c = by_d[bi]
                if not todo[c]:
                    continue
                end = t + cdd[c]
                while e < nev and ev_t[e] < end:  # _extend_window
                    h, q = ev_h[e], ev_i[e]
                    row_changed = False
                    for r in range(R):
                        if vals[q, r] > used[h, r]:
                            used[h, r] = vals[q, r]
                            row_changed = True
                    if row_changed:
                        if not hit[h]:
                            hit[h] = True
                            hlist[n_hit] = h
                            n_hit += 1
                        if not dirty[h]:
                            dirty[h] = True
                            dlist[n_dirty] = h
                            n_dirty += 1
                    e += 1
                if n_dirty > 0:
                    for i in range(n_dirty):
                        h = dlist[i]
                        dirty[h] = False
                        row_changed = False
                        for r in range(R):
                            f = cap[h, r] - used[h, r]
                            if f != free[h, r]:
                                row_changed = True
                            free[h, r] = f
                        if row_changed:
                            for mm in range(M):
                                cnew = math.inf  # _caps_of(free[h], wres[mm], R)
                                for r in range(R):
                                    if wres[mm, r] > 0:
                                        qf = math.floor(free[h, r] / wres[mm, r] + 1e-9)
                                        if qf < cnew:
                                            cnew = qf
                                if not math.isfinite(cnew):
                                    cnew = BIG_CAP
                                if cnew < 0.0:
                                    cnew = 0.0
                                tot_m[mm] += cnew - caps_hm[h, mm]
                                caps_hm[h, mm] = cnew
                                if cnew > cmax[mm]:
                                    cmax[mm] = cnew
                                    cmax_h[mm] = h
                                elif h == cmax_h[mm] and cnew < cmax[mm]:
                                    cm_stale[mm] = True
                            for r in range(R):
                                f = free[h, r]
                                if f > fmax[r]:
                                    fmax[r] = f
                                    fmax_h[r] = h
                                elif h == fmax_h[r] and f < fmax[r]:
                                    col_stale[r] = True
                    n_dirty = 0
                    for mm in range(M):
                        if cm_stale[mm]:
                            cm_stale[mm] = False
                            cmax[mm] = 0.0
                            cmax_h[mm] = -1
                            for h in range(H):
                                if caps_hm[h, mm] > cmax[mm]:
                                    cmax[mm] = caps_hm[h, mm]
                                    cmax_h[mm] = h
                    for r in range(R):
                        if col_stale[r]:
                            col_stale[r] = False
                            fmax[r] = -math.inf
                            for h in range(H):
                                if free[h, r] > fmax[r]:
                                    fmax[r] = free[h, r]
                                    fmax_h[r] = h
                a = c * nd
                m, p, n = m4[a], p4[a], n4[a]
                st = 0
                if q4[a] == 0:  # _colocated_fits(free, wres, pres, ps_arch, m, p, n, fmax, hint, need)
                    room = True
                    for r in range(R):
                        zr = pres[p, r] if ps_arch else 0.0
                        need[r] = n * wres[m, r] + zr
                        if not fmax[r] + 1e-9 >= need[r]:
                            room = False
                            break
                    if room:
                        for i in range(H + 1):
                            h = hint if i == 0 else i - 1
                            if i > 0 and h == hint:
                                continue
                            ok = True
                            for r in range(R):
                                if not free[h, r] + 1e-9 >= need[r]:
                                    ok = False
                                    break
                            if ok:
                                st = 1
                                hint = h
                                break
                else:  # _spread_fits_from(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m, p, n, ..., shint)
                    tot = tot_m[m]
                    if tot < n:
                        st = 0  # a PS only removes room
                    elif not ps_arch:
                        st = 1
                    else:
                        kk = max(1.0, math.ceil(n * wbw[m] / pbw[p] - 1e-9))
                        any_ps = False
                        for i in range(H + 1):
                            h = shint if i == 0 else i - 1
                            if i > 0 and h == shint:
                                continue
                            ok = True
                            for r in range(R):
                                if not free[h, r] + 1e-9 >= kk * pres[p, r]:
                                    ok = False
                                    break
                            if ok:
                                any_ps = True
                                shint = h
                                break
                        if not any_ps:
                            st = 0
                        elif tot - cmax[m] >= n:
                            st = 1  # the PS server loses at most all of its room
                        else:
                            st = _spread_fits_cached(free, cap, wres, pres, cbar, lam, m, p, n, kk, caps_hm, tot)
                if st == 2:
                    return 2
                if st == 1:
                    res[c] = t
                    todo[c] = False
                    n_todo -= 1
                elif limited[c]:
                    res[c] = prev[c]
                    todo[c] = False
                    n_todo -= 1
        for c in range(NC):
            if valid[c]:
                start_out[c * nd + di] = res[c]
                dur_out[c * nd + di] = cd[c]
            prev[c] = res[c]
        have_prev = True
    return 1


@njit
def grid_estimates_on_ref(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, now, delays, m4,
                          n4, q4, p4, mask, start_out, dur_out, cfree, ccaps, pp, cnt, times, vals):
    """:func:`grid_estimates_on` with its per-test helpers called, the same values (the reference of
    ``tests/speed/test_speed_hetero_v1_step4.py``)."""
    G = mask.shape[0]
    nd = delays.shape[0]
    H, R = cap.shape
    M = wres.shape[0]
    start, dur = rec[0], rec[1]
    for a in range(G):
        start_out[a] = -1
        dur_out[a] = 0
    NC = G // nd
    cd = np.zeros(NC, dtype=np.int64)
    valid = np.zeros(NC, dtype=np.bool_)
    for c in range(NC):
        a = c * nd
        if not mask[a]:
            continue
        valid[c] = True
        m = m4[a]
        comm = 2.0 * grad * 8.0 / (wbw[m] * 1000.0) / 3600.0
        cd[c] = duration(W, v[m], psu[p4[a]] if ps_arch else 0.0, ra, comm, n4[a], q4[a] == 0, ps_arch)
    # candidate times: the reservation ends after now, unsorted (:func:`_next_end` takes them in order)
    ne = 0
    for j in range(k):
        if start[j] + dur[j] > now:
            ne += 1
    ends = np.empty(ne, dtype=np.int64)
    i = 0
    for j in range(k):
        if start[j] + dur[j] > now:
            ends[i] = start[j] + dur[j]
            i += 1
    # every breakpoint after now of every server, by time: (time, piece row, server)
    ev_t, ev_i, ev_h = _breakpoints(H, pp, cnt, times)
    cdd = np.maximum(cd, 1)
    by_d, nbd = _valid_by_duration(cdd, valid)
    # the servers with a breakpoint after now (the others' usage rows never change after the first candidate)
    multi = np.empty(H, dtype=np.int64)
    n_multi = 0
    for h in range(H):
        if cnt[h] > 1:
            multi[n_multi] = h
            n_multi += 1
    used = np.empty((H, R))
    free = np.full((H, R), np.nan)  # NaN: not derived yet (differs from every value)
    caps_hm = np.zeros((H, M))
    tot_m = np.zeros(M)
    fmax = np.full(R, -math.inf)
    fmax_h = np.full(R, -1, dtype=np.int64)  # a server holding fmax[r]
    col_stale = np.zeros(R, dtype=np.bool_)
    cmax = np.zeros(M)  # max(0, max_h caps_hm[h, m]) and a server holding it (-1: none above 0)
    cmax_h = np.full(M, -1, dtype=np.int64)
    cm_stale = np.zeros(M, dtype=np.bool_)
    # servers whose usage row changed since their residual row was last derived (:func:`_first_residual` derives
    # every row at the first candidate)
    dirty = np.zeros(H, dtype=np.bool_)
    dlist = np.empty(H, dtype=np.int64)
    n_dirty = 0
    # each server's piece at the current candidate and the servers a window raised since (``_residual_next``)
    qcur = np.empty(H, dtype=np.int64)
    hit = np.zeros(H, dtype=np.bool_)
    hlist = np.empty(H, dtype=np.int64)
    n_hit = 0
    e_at = 0  # the first breakpoint after the current candidate
    res = np.full(NC, -1, dtype=np.int64)  # earliest start under the current delay
    prev = np.full(NC, -1, dtype=np.int64)  # ... under the previous (smaller) delay
    todo = np.zeros(NC, dtype=np.bool_)
    limited = np.zeros(NC, dtype=np.bool_)  # only now + delay to try (else prev)
    dorder = np.argsort(delays, kind="mergesort")
    have_prev = False
    first = True
    hint = 0  # the server where the last co-located configuration fitted (:func:`_colocated_fits`)
    need = np.empty(R)
    shint = 0  # the server that held the last spread configuration's PSs (:func:`_spread_fits_from`)
    for dk in range(nd):
        di = dorder[dk]
        t0 = now + delays[di]
        n_todo = 0
        for c in range(NC):
            res[c] = -1
            todo[c] = valid[c]
            limited[c] = False
            if valid[c]:
                n_todo += 1
                if have_prev and prev[c] >= t0:
                    if prev[c] == t0:
                        res[c] = t0
                        todo[c] = False
                        n_todo -= 1
                    else:
                        limited[c] = True
        t = t0
        at_t0 = True
        while n_todo > 0:
            if not at_t0:
                t = _next_end(ends, t)
                if t < 0:
                    break
            # residual at t: the piece of each server containing t, then extended by duration (a delay's first
            # candidate walks every server with a breakpoint: the candidates go back in time from one delay to the
            # next)
            e = np.searchsorted(ev_t, t, side="right")
            if at_t0:
                at_t0 = False
                for i in range(n_hit):
                    hit[hlist[i]] = False
                if first:  # worker capacities from the cache where the row is equal
                    _first_residual(t, pp, cnt, times, vals, cap, wres, used, free, cfree, ccaps, caps_hm, qcur,
                                    tot_m, cmax, cmax_h, fmax, fmax_h)
                else:
                    for i in range(n_multi):
                        h = multi[i]
                        n_dirty = _reset_row(h, t, pp[h], False, pp, cnt, times, vals, used, dirty, dlist, n_dirty,
                                             qcur)
            else:
                n_dirty = _residual_next(t, e_at, e, ev_h, pp, cnt, times, vals, used, dirty, dlist, n_dirty, qcur,
                                         hit, hlist, n_hit)
            n_hit = 0
            e_at = e
            first = False
            for bi in range(nbd):
                c = by_d[bi]
                if not todo[c]:
                    continue
                end = t + cdd[c]
                e, n_dirty, n_hit = _extend_window(end, e, ev_t, ev_i, ev_h, vals, used, dirty, dlist, n_dirty, hit,
                                                   hlist, n_hit)
                if n_dirty > 0:
                    for i in range(n_dirty):
                        h = dlist[i]
                        dirty[h] = False
                        row_changed = False
                        for r in range(R):
                            f = cap[h, r] - used[h, r]
                            if f != free[h, r]:
                                row_changed = True
                            free[h, r] = f
                        if row_changed:
                            for mm in range(M):
                                cnew = _caps_of(free[h], wres[mm], R)
                                tot_m[mm] += cnew - caps_hm[h, mm]
                                caps_hm[h, mm] = cnew
                                if cnew > cmax[mm]:
                                    cmax[mm] = cnew
                                    cmax_h[mm] = h
                                elif h == cmax_h[mm] and cnew < cmax[mm]:
                                    cm_stale[mm] = True
                            for r in range(R):
                                f = free[h, r]
                                if f > fmax[r]:
                                    fmax[r] = f
                                    fmax_h[r] = h
                                elif h == fmax_h[r] and f < fmax[r]:
                                    col_stale[r] = True
                    n_dirty = 0
                    for mm in range(M):
                        if cm_stale[mm]:
                            cm_stale[mm] = False
                            cmax[mm] = 0.0
                            cmax_h[mm] = -1
                            for h in range(H):
                                if caps_hm[h, mm] > cmax[mm]:
                                    cmax[mm] = caps_hm[h, mm]
                                    cmax_h[mm] = h
                    for r in range(R):
                        if col_stale[r]:
                            col_stale[r] = False
                            fmax[r] = -math.inf
                            for h in range(H):
                                if free[h, r] > fmax[r]:
                                    fmax[r] = free[h, r]
                                    fmax_h[r] = h
                a = c * nd
                if q4[a] == 0:
                    st, hint = _colocated_fits(free, wres, pres, ps_arch, m4[a], p4[a], n4[a], fmax, hint, need)
                else:
                    st, shint = _spread_fits_from(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m4[a], p4[a],
                                                  n4[a], caps_hm, tot_m, cmax, shint)
                if st == 2:
                    return 2
                if st == 1:
                    res[c] = t
                    todo[c] = False
                    n_todo -= 1
                elif limited[c]:
                    res[c] = prev[c]
                    todo[c] = False
                    n_todo -= 1
        for c in range(NC):
            if valid[c]:
                start_out[c * nd + di] = res[c]
                dur_out[c * nd + di] = cd[c]
            prev[c] = res[c]
        have_prev = True
    return 1


@njit
def action_rows(k_chunks, now, cap, wres, pres, wbw, pbw, ps_arch, delays, m4, n4, q4, p4, mask, start, dur, rows,
                ratio):
    """The v1 per-grid-action rows except ``area``'s log2 (rows[:, 8] holds 0; ``ratio`` gets area / max(smallest
    area, 1e-12) of the valid actions in order, for NumPy's log2). Returns the number of valid actions. An action's
    largest resource share depends on its configuration (worker type, workers, spread, PS type) alone, not on its
    delay: it is computed once for a run of actions with the same configuration (the grid lists a configuration's
    delays one after another) and kept, the same value (:func:`action_rows_ref` computes it for each action)."""
    G = mask.shape[0]
    nd = delays.shape[0]
    H, R = cap.shape
    rows[:, :] = 0.0
    ctot = _cap_totals(cap)
    best = math.inf
    nv = 0
    dmax = -math.inf
    for di in range(nd):
        dmax = max(dmax, float(delays[di]))
    for a in range(G):
        if mask[a]:
            c = float(start[a]) + float(dur[a])
            if c < best:
                best = c
            nv += 1
    if nv == 0:
        return 0
    ref = max(best - now, 1.0)
    amin = math.inf
    lm, ln, lq, lp = -1, -1, -1, -2  # the configuration whose share is ``share`` (none yet)
    share = -math.inf
    for a in range(G):
        if not mask[a]:
            continue
        m, n, q, p = m4[a], n4[a], q4[a], p4[a]
        st, du = float(start[a]), float(dur[a])
        dl = float(delays[a % nd])
        if m != lm or n != ln or q != lq or p != lp:  # a new configuration: its share
            lm, ln, lq, lp = m, n, q, p
            share = -math.inf
            if ps_arch:
                kps = 1.0
                if q == 1:
                    kps = max(1.0, math.ceil(n * wbw[m] / pbw[p] - 1e-9))
                for r in range(R):
                    x = (n * wres[m, r] + kps * pres[p, r]) / ctot[r]
                    if x > share:
                        share = x
            else:
                for r in range(R):
                    x = n * wres[m, r] / ctot[r]
                    if x > share:
                        share = x
        area = share * max(du, 1.0)
        if area < amin:
            amin = area
        comp = st + du
        rows[a, 0] = 1.0
        rows[a, 1] = (comp - best) / ref
        rows[a, 2] = (st - now) / ref
        rows[a, 3] = du / ref
        rows[a, 4] = n / float(k_chunks)
        rows[a, 5] = float(q)
        rows[a, 6] = dl / max(dmax, 1.0)
        rows[a, 7] = 10.0 * share
        rows[a, 8] = area  # replaced by the log2 feature
        rows[a, 9] = wres[m, 0] / 4.0
        rows[a, 10] = wbw[m] / 5.0
        rows[a, 11] = 1.0 if st == now + dl else 0.0
    i = 0
    for a in range(G):
        if mask[a]:
            ratio[i] = rows[a, 8] / max(amin, 1e-12)
            rows[a, 8] = 0.0
            i += 1
    return nv




@njit
def action_rows_ref(k_chunks, now, cap, wres, pres, wbw, pbw, ps_arch, delays, m4, n4, q4, p4, mask, start, dur,
                    rows, ratio):
    """The v1 per-grid-action rows except ``area``'s log2 (rows[:, 8] holds 0; ``ratio`` gets area / max(smallest
    area, 1e-12) of the valid actions in order, for NumPy's log2). Returns the number of valid actions. The
    share computed for every action: the reference of :func:`action_rows`."""
    G = mask.shape[0]
    nd = delays.shape[0]
    H, R = cap.shape
    rows[:, :] = 0.0
    ctot = _cap_totals(cap)
    best = math.inf
    nv = 0
    dmax = -math.inf
    for di in range(nd):
        dmax = max(dmax, float(delays[di]))
    for a in range(G):
        if mask[a]:
            c = float(start[a]) + float(dur[a])
            if c < best:
                best = c
            nv += 1
    if nv == 0:
        return 0
    ref = max(best - now, 1.0)
    amin = math.inf
    for a in range(G):
        if not mask[a]:
            continue
        m, n, q, p = m4[a], n4[a], q4[a], p4[a]
        st, du = float(start[a]), float(dur[a])
        dl = float(delays[a % nd])
        share = -math.inf
        if ps_arch:
            kps = 1.0
            if q == 1:
                kps = max(1.0, math.ceil(n * wbw[m] / pbw[p] - 1e-9))
            for r in range(R):
                x = (n * wres[m, r] + kps * pres[p, r]) / ctot[r]
                if x > share:
                    share = x
        else:
            for r in range(R):
                x = n * wres[m, r] / ctot[r]
                if x > share:
                    share = x
        area = share * max(du, 1.0)
        if area < amin:
            amin = area
        comp = st + du
        rows[a, 0] = 1.0
        rows[a, 1] = (comp - best) / ref
        rows[a, 2] = (st - now) / ref
        rows[a, 3] = du / ref
        rows[a, 4] = n / float(k_chunks)
        rows[a, 5] = float(q)
        rows[a, 6] = dl / max(dmax, 1.0)
        rows[a, 7] = 10.0 * share
        rows[a, 8] = area  # replaced by the log2 feature
        rows[a, 9] = wres[m, 0] / 4.0
        rows[a, 10] = wbw[m] / 5.0
        rows[a, 11] = 1.0 if st == now + dl else 0.0
    i = 0
    for a in range(G):
        if mask[a]:
            ratio[i] = rows[a, 8] / max(amin, 1e-12)
            rows[a, 8] = 0.0
            i += 1
    return nv


@njit
def prepare_rows_cached(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, D, fracs, zf, feas, vcache, W, v, psu,
                        ra, grad, now, delays, cfree, ccaps, m4, n4, q4, p4, mask, start, dur, rows, ratio, bins, opp,
                        ocnt, otimes, ovals, lfree, lx, lhost):
    """The pending job's v1 inputs in one call: :func:`job_grid` (configurations and mask), :func:`grid_estimates`
    (``start``, ``dur``) and :func:`action_rows` (``rows``, ``ratio``). Returns the number of valid actions, or -1
    when the estimates are ambiguous (a price tie within rounding: ``start``/``dur``/``rows`` not final; the env
    takes the reference estimates and calls :func:`action_rows` itself), and the servers' usage profiles at ``now``
    (:func:`server_profiles`: ``pp, cnt, times, vals``, for :func:`decode_commit` on this same state). ``bins``:
    filled with the observation's lookahead bins at ``now`` (:func:`lookahead_profiles` on the profiles the
    estimates use; for :func:`observation` on this same state), unless empty. ``opp, ocnt, otimes, ovals``: the
    profiles this returned at the previous decision (the committed jobs < k - 1, at a slot <= now), updated by
    :func:`server_profiles_after`, or empty (then :func:`server_profiles`). ``lfree, lx, lhost``: the cache of
    :func:`lookahead_cached`. ``vcache``: :func:`job_grid_cached`'s cache (empty: none)."""
    nd = delays.shape[0]
    H, R = cap.shape
    job_grid_cached(D, fracs, nd, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, zf, psu, feas, vcache, m4, n4, q4, p4,
                    mask)
    if k >= 1 and opp.shape[0] == H + 1 and otimes[opp[0]] <= now:
        prof = server_profiles_after(k, now, rec, wres, pres, ps_arch, H, R, opp, ocnt, otimes, ovals)
    else:
        prof = server_profiles(k, now, rec, wres, pres, ps_arch, H, R)
    if bins.shape[0] > 0:
        lookahead_cached(prof[0], prof[1], prof[2], prof[3], wres, cap, now, bins, lfree, lx, lhost)
    st = grid_estimates_on(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, now, delays,
                           m4, n4, q4, p4, mask, start, dur, cfree, ccaps, prof[0], prof[1], prof[2], prof[3])
    if st != 1:
        return -1, prof
    return action_rows(D, now, cap, wres, pres, wbw, pbw, ps_arch, delays, m4, n4, q4, p4, mask, start, dur, rows,
                       ratio), prof



@njit
def prepare_rows(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, D, fracs, zf, feas, W, v, psu, ra, grad, now,
                 delays, cfree, ccaps, m4, n4, q4, p4, mask, start, dur, rows, ratio, bins, opp, ocnt, otimes, ovals,
                 lfree, lx, lhost):
    """:func:`prepare_rows_cached` without :func:`job_grid_cached`'s cache (the spread PS types' values computed)."""
    return prepare_rows_cached(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, D, fracs, zf, feas,
                               np.empty((0, 0, 0)), W, v, psu, ra, grad, now, delays, cfree, ccaps, m4, n4, q4, p4,
                               mask, start, dur, rows, ratio, bins, opp, ocnt, otimes, ovals, lfree, lx, lhost)


@njit
def commit_prepare_cached(rec, colocated, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, m, p,
                          n, spread, t0, pp, cnt, times, vals, nxt, D1, fracs, zf, feas, vcache, W1, v1, psu1, ra1,
                          grad1, now1, delays, cfree, ccaps, m4, n4, q4, p4, mask, start, dur, rows, ratio, bins,
                          lfree, lx, lhost):
    """A v1 step's two compiled parts in one call (one dispatch of their ~70 arguments instead of two):
    :func:`decode_commit` of job ``k`` (arguments up to ``vals``, as there), then, when it committed (status 1) and
    ``nxt`` (a next job exists), :func:`prepare_rows` of job ``k + 1`` (``D1, W1, v1, psu1, ra1, grad1, now1``: its
    inputs; ``pp, cnt, times, vals``: the profiles the commit searched on, which are ``prepare_rows``'s previous
    decision's profiles). Returns :func:`decode_commit`'s seven values, then ``prepare_rows``'s number of valid
    actions (-2 when it did not run) and its profiles (the input profiles when it did not run): the same values
    as the two calls one after the other. ``vcache``: :func:`job_grid_cached`'s cache (empty: none)."""
    st, t, d, nw, col, hs, fr = decode_commit(rec, colocated, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v,
                                              psu, ra, grad, m, p, n, spread, t0, pp, cnt, times, vals)
    if st != 1 or not nxt:
        return st, t, d, nw, col, hs, fr, -2, (pp, cnt, times, vals)
    nv, prof = prepare_rows_cached(rec, k + 1, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, D1, fracs, zf, feas,
                                   vcache, W1, v1, psu1, ra1, grad1, now1, delays, cfree, ccaps, m4, n4, q4, p4, mask,
                                   start, dur, rows, ratio, bins, pp, cnt, times, vals, lfree, lx, lhost)
    return st, t, d, nw, col, hs, fr, nv, prof


@njit
def commit_prepare(rec, colocated, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, m, p, n,
                   spread, t0, pp, cnt, times, vals, nxt, D1, fracs, zf, feas, W1, v1, psu1, ra1, grad1, now1, delays,
                   cfree, ccaps, m4, n4, q4, p4, mask, start, dur, rows, ratio, bins, lfree, lx, lhost):
    """:func:`commit_prepare_cached` without :func:`job_grid_cached`'s cache (the spread PS types' values computed
    at each call): the full argument list's path (``HeteroMLEnv._packed = False``), the packed step's reference."""
    return commit_prepare_cached(rec, colocated, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad,
                                 m, p, n, spread, t0, pp, cnt, times, vals, nxt, D1, fracs, zf, feas,
                                 np.empty((0, 0, 0)), W1, v1, psu1, ra1, grad1, now1, delays, cfree, ccaps, m4, n4, q4,
                                 p4, mask, start, dur, rows, ratio, bins, lfree, lx, lhost)


@njit_inline
def _raw_rows(x, rmask, lg, F, lo, hi, out):
    """:func:`observation`'s v1 rows as :func:`action_rows` leaves them (``x``: the rows flat, ``F`` features each),
    into ``out`` with the bounds ``lo``/``hi`` of their entries: each value clipped to [0, OBS_HIGH], then
    :func:`_to_obs` (a finite float64 becomes a finite float32; NaN -> 0), the valid rows' area (column 8, 0.0 in
    ``x``) written over in a second pass from ``lg``. The same values as one loop over the rows with a running index
    into ``lg`` and :func:`_to_obs`'s branches, which took ~4 µs more a call (288 rows of 12 on HeteroML-v1; the
    flat loop compiles to vector code)."""
    for j in range(x.shape[0]):
        y = x[j]
        if y < 0.0:
            y = 0.0
        if y > OBS_HIGH:
            y = OBS_HIGH
        v = np.float32(y)
        if v != v:
            v = np.float32(0.0)
        if v < lo[j]:
            v = lo[j]
        if v > hi[j]:
            v = hi[j]
        out[j] = v
    iv = 0
    for a in range(rmask.shape[0]):
        if rmask[a]:
            y = lg[iv] / 2.0
            if y < 0.0:
                y = 0.0
            if y > OBS_HIGH:
                y = OBS_HIGH
            q = a * F + 8
            out[q] = _to_obs(y, lo[q], hi[q])
            iv += 1


@njit
def observation(w, E, D, K, grad, v, psu, ra, arrival, k, J, now, T, relative, rec, cap, wres, pres, wbw, ps_arch,
                rows, rmask, lg, mask, lo, hi, out, bins):
    """The whole observation in one call (``HeteroMLEnv._observation``): job block, the v1 action rows (``rows``,
    (n_grid, row features); (0, row features) on v0), the four globals, the lookahead bins, the v0 mask bits
    (``mask``; empty on v1), then float32 and clipped. ``k``: the committed jobs (the env's step index).

    ``rows`` as :func:`action_rows` leaves them when ``rmask`` (the v1 action mask) is given: the ``area`` feature
    (column 8) of the i-th valid row is then ``lg[i] / 2`` (``lg`` = NumPy's log2 of :func:`action_rows`'s
    ``ratio``), and every row value is clipped to [0, OBS_HIGH] (``np.clip``) first; empty ``rmask``: ``rows`` are
    final. ``bins``: the lookahead bins at ``now`` already (from :func:`prepare_rows` on the same state), or empty
    (then computed here)."""
    H = cap.shape[0]
    M = wres.shape[0]
    n = out.shape[0]
    x = np.empty(n)
    nj = 8 + 2 * M
    job_features(w, E, D, K, grad, v, psu, ra, wbw, T, ps_arch, x[:nj])
    i = nj
    G, F = rows.shape
    raw = rmask.shape[0] > 0
    if raw and F > 8 and rows.flags.c_contiguous:  # (as the env's scratch rows are)
        _raw_rows(rows.reshape(G * F), rmask, lg, F, lo[i : i + G * F], hi[i : i + G * F], out[i : i + G * F])
    else:
        iv = 0
        for a in range(G):  # straight into ``out`` (finished there)
            for f in range(F):
                y = rows[a, f]
                if raw:
                    if f == 8 and rmask[a]:
                        y = lg[iv] / 2.0
                    if y < 0.0:
                        y = 0.0
                    if y > OBS_HIGH:
                        y = OBS_HIGH
                q = i + a * F + f
                out[q] = _to_obs(y, lo[q], hi[q])
            if raw and rmask[a]:
                iv += 1
    i += G * F
    active = count_after(k, rec[0], rec[1], now)
    if relative:
        x[i], x[i + 1], x[i + 2], x[i + 3] = 0.0, 0.0, 0.0, active / H
    else:
        tau = 1
        while tau < arrival:
            tau *= 2
        x[i], x[i + 1], x[i + 2], x[i + 3] = now / T, (tau - arrival) / tau, k / J, active / J
    i += 4
    nb = N_BINS * (2 * cap.shape[1] + M)
    if bins.shape[0] == nb:
        x[i : i + nb] = bins
    else:
        ptr, jobs = server_jobs(k, now, rec, H)
        lookahead_bins(rec, ptr, jobs, wres, pres, ps_arch, cap, now, x[i : i + nb])
    i += nb
    for q in range(mask.shape[0]):
        x[i + q] = 1.0 if mask[q] else 0.0
    finish_range(x, lo, hi, out, 0, nj)
    finish_range(x, lo, hi, out, nj + G * F, n)
