"""Compiled upkeep of :class:`~edgegym.families.hetero_ml.mincost.SlotTables`: the window-minimum tables of
the residuals and the prefix sums of the prices, each updated over a range of slots only.

Every function computes its entries with the operations of :func:`~edgegym.families.hetero_ml.mincost._refresh_tables`
(the same additions in the same order, exact minima and maxima), so a table kept here holds the numbers a
:class:`~edgegym.families.hetero_ml.mincost.SubRound` built for the same window holds.
"""

from __future__ import annotations

try:  # Numba is optional: without it the same code runs as plain Python (slow, identical results)
    from numba import njit
except ImportError:  # pragma: no cover
    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

__all__ = ["server_minima", "best_residual_minima", "price_prefix"]


@njit(cache=True)
def server_minima(st, servers, lo, hi, n):
    """Levels k >= 1 of the window-minimum table ``st[k, h, r, t] = min st[0, h, r, t : t + 2^k]`` for ``servers``
    at every position whose window meets slots [lo, hi), after level 0 (the residuals) changed there. Only the
    exact entries (t + 2^k <= n, the ``n`` slots held) are written: no query reads the others."""
    K, R = st.shape[0], st.shape[2]
    for i in range(servers.shape[0]):
        h = servers[i]
        for k in range(1, K):
            w = 1 << (k - 1)
            t0 = lo - (1 << k) + 1
            if t0 < 0:
                t0 = 0
            t1 = n - (1 << k) + 1
            if hi < t1:
                t1 = hi
            for r in range(R):
                for t in range(t0, t1):
                    a, b = st[k - 1, h, r, t], st[k - 1, h, r, t + w]
                    st[k, h, r, t] = a if a <= b else b


@njit(cache=True)
def best_residual_minima(st, cst, lo, hi, n):
    """``cst[0, r, t] = max_h st[0, h, r, t]`` (the best residual over the servers) for slots [lo, hi), then the
    levels k >= 1 of its window-minimum table at the positions whose window meets them (exact entries only)."""
    K, H, R = cst.shape[0], st.shape[1], st.shape[2]
    for r in range(R):
        for t in range(lo, hi):
            best = st[0, 0, r, t]
            for h in range(1, H):
                if st[0, h, r, t] > best:
                    best = st[0, h, r, t]
            cst[0, r, t] = best
    for k in range(1, K):
        w = 1 << (k - 1)
        t0 = lo - (1 << k) + 1
        if t0 < 0:
            t0 = 0
        t1 = n - (1 << k) + 1
        if hi < t1:
            t1 = hi
        for r in range(R):
            for t in range(t0, t1):
                a, b = cst[k - 1, r, t], cst[k - 1, r, t + w]
                cst[k, r, t] = a if a <= b else b


@njit(cache=True)
def price_prefix(delta, t0, e_hat, z_hat, Aw, Ap, done, upto):
    """The prefix sums over the window's slots (from slot ``t0`` of ``delta``) of every server's per-worker and
    per-PS prices, ``Aw[m, h, t + 1] = Σ_{t' <= t} Σ_r delta[h, r, t0 + t'] e_hat[m, r]`` (``Ap`` with ``z_hat``),
    continued for each server from ``done[h]`` up to ``upto`` slots (then ``done[h] = upto``). Σ_r runs from r = 0
    and the running sum adds slot by slot: the operations of ``SubRound``'s tables."""
    H, R = delta.shape[0], delta.shape[1]
    M, P = e_hat.shape[0], z_hat.shape[0]
    for h in range(H):
        s = done[h]
        if s >= upto:
            continue
        for t in range(s, upto):
            for m in range(M):
                x = 0.0
                for r in range(R):
                    x += delta[h, r, t0 + t] * e_hat[m, r]
                Aw[m, h, t + 1] = x if t == 0 else Aw[m, h, t] + x
            for p in range(P):
                x = 0.0
                for r in range(R):
                    x += delta[h, r, t0 + t] * z_hat[p, r]
                Ap[p, h, t + 1] = x if t == 0 else Ap[p, h, t] + x
        done[h] = upto
