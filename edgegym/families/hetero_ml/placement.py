"""Placement primitives of the HeteroML family (numpy only).

* :func:`place`: the baselines' PLACE(config) of co-locate on the feasible server with the fewest
  remaining GPUs (best fit); otherwise spread the workers over servers in decreasing free-GPU order and put the PSs on
  the server with the most free bandwidth, s = ceil(remote · b / B).
* :func:`grid_place`: the env's placement for a grid action: A_mincost-style greedy over servers ordered
  by their current price lambda^(utilisation) - 1 over the window, PS type derived deterministically.
"""

from __future__ import annotations

import math

import numpy as np

from .simulator import HeteroCluster

__all__ = ["place", "grid_place", "server_caps", "ps_type_for", "ps_types_for"]


def server_caps(free: np.ndarray, e: np.ndarray) -> np.ndarray:
    """How many workers of resource vector e fit on each server (resources with e = 0 ignored).      # (H,)"""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(e[None, :] > 0, np.floor(free / np.where(e > 0, e, 1.0)[None, :] + 1e-9), np.inf)
    c = q.min(axis=1)
    c = np.where(np.isfinite(c), c, 1 << 30)
    return np.maximum(c, 0).astype(np.int64)


def _fill(order: np.ndarray, caps: np.ndarray, n: int, H: int) -> np.ndarray | None:
    y = np.zeros(H, dtype=np.int64)
    rem = n
    for h in order:
        if rem <= 0:
            break
        k = min(int(caps[h]), rem)
        y[h] = k
        rem -= k
    return y if rem <= 0 else None


def place(
    cluster: HeteroCluster, free: np.ndarray, m: int, p: int, n: int, colocate_only: bool = False,
    spread_only: bool = False,
) -> tuple[np.ndarray, np.ndarray] | None:
    """PLACE of n type-m workers (+ PSs of type p in the PS architecture) on residuals ``free`` (H, R).

    Returns (workers (H,), ps (H,)) or None."""
    H = cluster.num_servers
    e = cluster.worker_res[m]
    ps_arch = cluster.arch == "ps"
    z = cluster.ps_res[p] if ps_arch else np.zeros_like(e)
    if not spread_only:
        need = n * e + z
        ok = np.all(free + 1e-9 >= need[None, :], axis=1)
        if ok.any():
            left_gpu = np.where(ok, free[:, 0] - need[0], np.inf)
            h = int(np.argmin(left_gpu))  # best fit, lowest index on ties
            w = np.zeros(H, dtype=np.int64)
            w[h] = n
            s = np.zeros(H, dtype=np.int64)
            if ps_arch:
                s[h] = 1
            return w, s
    if colocate_only:
        return None
    caps = server_caps(free, e)
    order = np.lexsort((np.arange(H), -free[:, 0]))
    w = _fill(order, caps, n, H)
    if w is None:
        return None
    s = np.zeros(H, dtype=np.int64)
    if not ps_arch:
        if spread_only and np.count_nonzero(w) == 1:
            return None
        return w, s
    after = free - np.outer(w, e)
    bw = cluster.bw_index
    b, B = cluster.worker_bw[m], cluster.ps_bw[p]
    k = np.maximum(1, np.ceil((n - w) * b / B - 1e-9)).astype(np.int64)  # PSs needed if placed on h
    ok = np.all(after + 1e-9 >= k[:, None] * z[None, :], axis=1)
    if spread_only:
        used = w > 0
        ok &= ~(used & (used.sum() == 1))  # the PS on the only worker server would make it co-located
    if not ok.any():
        return None
    cand = np.flatnonzero(ok)
    h = int(cand[np.lexsort((cand, -after[cand, bw]))[0]])  # the most free bandwidth, lowest index on ties
    s[h] = k[h]
    return w, s


def ps_types_for(cluster: HeteroCluster, n: np.ndarray, m: np.ndarray, spread: bool, ps_update: np.ndarray) -> np.ndarray:
    """Vectorised :func:`ps_type_for` over arrays ``n`` and ``m`` of the same shape."""
    zf = (cluster.ps_res / cluster.cbar).sum(axis=1)  # (P,)
    n, m = np.asarray(n), np.asarray(m)
    if spread:
        s = np.maximum(1, np.ceil(n[..., None] * cluster.worker_bw[m][..., None] / cluster.ps_bw - 1e-9))
        val = s * zf
    else:
        val = np.broadcast_to(zf, n.shape + zf.shape)
    best = val.min(axis=-1, keepdims=True)
    tie = np.abs(val - best) <= 1e-12 * np.maximum(1.0, np.abs(best))
    return np.argmin(np.where(tie, ps_update, np.inf), axis=-1)


def ps_type_for(cluster: HeteroCluster, n: int, m: int, spread: bool, ps_update: np.ndarray) -> int:
    """The env's derived PS type: co-located: the smallest footprint Σ_r ẑ; spread: the type minimising
    s · Σ_r ẑ with s = max(1, ceil(n b_m / B_p)); ties by the lower U^p_j, then index."""
    return int(ps_types_for(cluster, np.array(n), np.array(m), spread, ps_update))


def grid_place(
    cluster: HeteroCluster, free: np.ndarray, m: int, p: int, n: int, spread: bool, lam: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """The env's placement for a grid action on residuals ``free`` (H, R) over the window.

    Servers are priced by Σ_r (lambda^(used/C) - 1) · ê (A_mincost style); co-located: the cheapest server that fits
    n workers + 1 PS; spread: the PS server n is the cheapest server fitting s = ceil(n b / B) PSs, then the workers
    fill the cheapest servers first (the PS's footprint is taken from its server first)."""
    H = cluster.num_servers
    C = cluster.capacity
    used = np.divide(C - free, C, out=np.zeros_like(free), where=C > 0)
    price = np.power(lam, np.clip(used, 0.0, 1.0)) - 1.0  # (H, R)
    e = cluster.worker_res[m]
    ps_arch = cluster.arch == "ps"
    z = cluster.ps_res[p] if ps_arch else np.zeros_like(e)
    e_hat, z_hat = e / cluster.cbar, z / cluster.cbar
    if not spread:
        need = n * e + z
        ok = np.all(free + 1e-9 >= need[None, :], axis=1)
        if not ok.any():
            return None
        cost = np.where(ok, price @ (n * e_hat + z_hat), np.inf)
        h = int(np.argmin(cost))
        w = np.zeros(H, dtype=np.int64)
        w[h] = n
        s = np.zeros(H, dtype=np.int64)
        if ps_arch:
            s[h] = 1
        return w, s
    om = price @ e_hat
    s = np.zeros(H, dtype=np.int64)
    rest = free
    if ps_arch:
        k = max(1, math.ceil(n * cluster.worker_bw[m] / cluster.ps_bw[p] - 1e-9))
        ok = np.all(free + 1e-9 >= k * z[None, :], axis=1)
        if not ok.any():
            return None
        h = int(np.argmin(np.where(ok, price @ z_hat, np.inf)))
        s[h] = k
        rest = free.copy()
        rest[h] -= k * z
    caps = server_caps(rest, e)
    order = np.lexsort((np.arange(H), om))
    w = _fill(order, caps, n, H)
    if w is None:
        return None
    return w, s
