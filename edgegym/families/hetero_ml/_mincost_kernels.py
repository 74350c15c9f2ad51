"""Compiled upkeep of :class:`~edgegym.families.hetero_ml.mincost.SlotTables`: the window-minimum tables of
the residuals and the prefix sums of the prices, each updated over a range of slots only.

Every function computes its entries with the operations of :func:`~edgegym.families.hetero_ml.mincost._refresh_tables`
(the same additions in the same order, exact minima and maxima), so a table kept here holds the numbers a
:class:`~edgegym.families.hetero_ml.mincost.SubRound` built for the same window holds.
"""

from __future__ import annotations

from ...core.jit import njit, njit_inline

__all__ = ["server_minima", "best_residual_minima", "price_prefix"]


@njit_inline
def _exact_span(lo, hi, n, k):
    """The positions ``t`` of level ``k`` whose window ``[t, t + 2^k)`` meets slots [lo, hi) and is exact
    (``t + 2^k <= n``): ``range(t0, t1)``."""
    t0 = lo - (1 << k) + 1
    if t0 < 0:
        t0 = 0
    t1 = n - (1 << k) + 1
    if hi < t1:
        t1 = hi
    return t0, t1


@njit
def server_minima(st, servers, lo, hi, n):
    """Levels k >= 1 of the window-minimum table ``st[k, t, h, r] = min st[0, t : t + 2^k, h, r]`` (layout: slots
    before servers) for ``servers`` at every position whose window meets slots [lo, hi), after level 0 (the
    residuals) changed there. Only the exact entries (t + 2^k <= n, the ``n`` slots held) are written: no query
    reads the others."""
    K, R = st.shape[0], st.shape[3]
    for k in range(1, K):
        w = 1 << (k - 1)
        t0, t1 = _exact_span(lo, hi, n, k)
        for t in range(t0, t1):
            for i in range(servers.shape[0]):
                h = servers[i]
                for r in range(R):
                    a, b = st[k - 1, t, h, r], st[k - 1, t + w, h, r]
                    st[k, t, h, r] = a if a <= b else b


@njit
def best_residual_minima(st, cst, lo, hi, n):
    """``cst[0, r, t] = max_h st[0, t, h, r]`` (the best residual over the servers) for slots [lo, hi), then the
    levels k >= 1 of its window-minimum table at the positions whose window meets them (exact entries only)."""
    K, H, R = cst.shape[0], st.shape[2], st.shape[3]
    for t in range(lo, hi):
        for r in range(R):
            best = st[0, t, 0, r]
            for h in range(1, H):
                if st[0, t, h, r] > best:
                    best = st[0, t, h, r]
            cst[0, r, t] = best
    for k in range(1, K):
        w = 1 << (k - 1)
        t0, t1 = _exact_span(lo, hi, n, k)
        for r in range(R):
            for t in range(t0, t1):
                a, b = cst[k - 1, r, t], cst[k - 1, r, t + w]
                cst[k, r, t] = a if a <= b else b


@njit
def price_prefix(delta, t0, e_hat, z_hat, Aw, Ap, servers, lo, hi):
    """The prefix sums over the window's slots (from slot ``t0`` of ``delta``, layout (slots, R, H)) of the
    per-worker and per-PS prices of ``servers`` (None: all), ``Aw[m, t + 1, h] = Σ_{t' <= t} Σ_r delta[t0 + t', r, h]
    e_hat[m, r]`` (``Ap`` with ``z_hat``), for window slots t in [lo, hi) (those before ``lo`` already computed).
    Σ_r runs from r = 0 and the running sum adds slot by slot: the operations of ``SubRound``'s tables."""
    for t in range(lo, hi):
        _slot_prefix(delta[t0 + t], e_hat, Aw, servers, t)
        _slot_prefix(delta[t0 + t], z_hat, Ap, servers, t)


@njit
def _slot_prefix(d, wt, out, servers, t):
    """``out[k, t + 1, h] = out[k, t, h] + Σ_r d[r, h] wt[k, r]`` (``out[k, 1, h]`` the sum alone at t = 0) for every
    row k of ``wt`` and every server (``servers`` None) or the listed ones."""
    R, H = d.shape
    for k in range(wt.shape[0]):
        dst = out[k, t + 1]
        if servers is None:  # the same additions per server (0.0, then r = 0, 1, ...), a server per SIMD lane
            for h in range(H):
                dst[h] = 0.0
            for r in range(R):
                w = wt[k, r]
                for h in range(H):
                    dst[h] += d[r, h] * w
            if t > 0:
                src = out[k, t]
                for h in range(H):
                    dst[h] = src[h] + dst[h]
        else:
            for i in range(servers.shape[0]):
                h = servers[i]
                x = 0.0
                for r in range(R):
                    x += d[r, h] * wt[k, r]
                dst[h] = x if t == 0 else out[k, t, h] + x
