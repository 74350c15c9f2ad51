"""Zhou et al.'s per-job minimum-cost subroutines on one sub-round state.

``SubRound`` holds one sub-round's window state (relative slots 1..tau-1, stored at indices 0..tau-2): the
allocated amounts beta[h, r, t], the prices delta = lambda^(beta/C) - 1 (eq. 11) and the residuals omega = C - beta,
plus derived arrays for speed (prefix sums over t of the per-worker / per-PS prices, a sparse table for window
minima of omega). :func:`mincost` enumerates, exactly as the pseudo-code of the paper's Algs. 4-7 (made precise), A_mincost2 (PS, co-located),
A_mincost1 (PS, spread), A_RAmincost1 (RA, co-located) and A_RAmincost2 (RA, spread) and returns the best candidate
under the ``better`` predicate among those whose cost is below the acceptance threshold s_w·w_j (a job
whose minimum cost is >= s_w·w_j is rejected either way, eq. 10). It runs as a Numba kernel when Numba is available;
:func:`mincost_reference` is the literal pure-Python reading of the pseudo-code, kept as the test oracle.

Speed-ups that do not change results: prefix sums (1), sparse-table window minima (2), pruning by the
threshold / a lower bound / the earliest completion (3), ``dedupe_L`` (4: for a fixed N only the smallest window
length can win). The spread greedy for every PS-server position uses cumulative sums over the sorted order
(O(log H) per position instead of O(H)). With ``prune=True`` a candidate is first tested against necessary
conditions of the search's own tests, cheapest first: the best residual over the call's slots (per types and N),
the window's best residuals, the workers' price bound, worker and PS counts, and whether any server could host the
PS (bandwidth) before the servers are sorted; the spread search keeps each window's per-server arrays and sorted
order for all PS types of a worker type (a per-call pool), and sorts from the previous window's order.
:class:`SlotTables` keeps the window arrays of a ledger across decisions (each slot's prices and minima computed
once). The search reads its tables with slots before servers, so a pass over the servers reads adjacent memory.
"""

from __future__ import annotations

import copy
import functools
import math

import numpy as np

from . import _mincost_kernels as _k

try:  # Numba is optional: without it the same code runs as plain Python (slow, identical results)
    from numba import njit
except ImportError:  # pragma: no cover
    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

__all__ = [
    "SubRound", "SlotTables", "WindowView", "Candidate", "job_arrays", "mincost", "mincost_reference", "price_base",
]

TOL = 1e-9


def price_base(T: int, H: int, R: int, F: float, override: float | None = None) -> float:
    """lambda = 2 T H R F + 1."""
    return float(override) if override is not None else 2.0 * T * H * R * F + 1.0


class Candidate:
    """One job's chosen schedule inside a sub-round (relative start t^- is 1-based)."""

    __slots__ = ("cost", "colocated", "m", "p", "L", "N", "t_minus", "y", "s")

    def __init__(self, cost, colocated, m, p, L, N, t_minus, y, s):
        self.cost, self.colocated, self.m, self.p = float(cost), bool(colocated), int(m), int(p)
        self.L, self.N, self.t_minus = int(L), int(N), int(t_minus)
        self.y, self.s = np.asarray(y, dtype=np.int64), np.asarray(s, dtype=np.int64)

    @property
    def completion(self) -> int:
        return self.t_minus + self.L

    def key(self) -> tuple:
        return (self.colocated, self.m, self.p, self.L, self.N, self.t_minus, tuple(self.y), tuple(self.s))


class SubRound:
    """A sub-round state: window length tau, absolute offset, beta / delta / omega and derived arrays.

    ``compiled`` (class attribute): the derived arrays of :meth:`refresh` come from the compiled
    :func:`_refresh_tables` (windows of two or more slots); ``False`` builds them with whole-array numpy (the same
    numbers, kept as the oracle)."""

    compiled = True
    t0 = 0  # index of relative slot 1 on the time axis of the minima tables (what :func:`mincost` reads)

    def __init__(self, cluster, tau: int, offset: int, lam: float, init_used: np.ndarray | None = None) -> None:
        self.cluster, self.tau, self.offset, self.lam = cluster, int(tau), int(offset), float(lam)
        H, R = cluster.capacity.shape
        n = max(1, self.tau - 1)
        self.cap = cluster.capacity
        self.beta = np.zeros((H, R, n)) if init_used is None else np.array(init_used[:, :, :n], dtype=np.float64)
        self.e_hat = cluster.worker_res / cluster.cbar
        self.z_hat = cluster.ps_res / cluster.cbar
        self.logt = np.zeros(n + 2, dtype=np.int64)
        for L in range(2, n + 2):
            self.logt[L] = self.logt[L // 2] + 1
        K = int(self.logt[n]) + 1
        self.delta = np.zeros((H, R, n))
        self.omega = np.zeros((H, R, n))
        self.Aw = np.zeros((cluster.num_worker_types, H, n + 1))
        self.Ap = np.zeros((cluster.num_ps_types, H, n + 1))
        self.st = np.zeros((K, H, R, n))
        self.cst = np.zeros((K, R, n))
        self.touched = np.zeros(H, dtype=bool)
        self._kern = [None]  # the search's layouts of st, Aw, Ap (shared with prefix views; cleared by refresh)
        self.refresh(np.arange(H))

    def kernel_arrays(self) -> tuple:
        """(st, Aw, Ap) in the layouts :func:`mincost`'s kernel reads: slots before servers, (K, n, H, R),
        (M, n + 1, H) and (P, n + 1, H), so a pass over the servers at one slot reads adjacent memory (the same
        numbers, copied once after each refresh)."""
        if self._kern[0] is None:
            self._kern[0] = (
                np.ascontiguousarray(self.st.transpose(0, 3, 1, 2)),
                np.ascontiguousarray(self.Aw.transpose(0, 2, 1)),
                np.ascontiguousarray(self.Ap.transpose(0, 2, 1)),
            )
        return self._kern[0]

    def prefix(self, tau: int) -> SubRound:
        """This state restricted to the window's first ``tau`` slots (tau <= self.tau), sharing its arrays.

        The prices, residuals, prefix sums and window minima of a prefix are the same numbers, so a search in the
        prefix equals one in a state built for length tau; committing into the prefix commits into this state."""
        if not 1 <= tau <= self.tau:
            raise ValueError(f"prefix length {tau} outside 1..{self.tau}")
        if tau == self.tau:
            return self
        view = copy.copy(self)
        view.tau = int(tau)
        return view

    def refresh(self, servers) -> None:
        """Recompute prices, residuals, prefix sums and window-min tables of ``servers``."""
        servers = np.asarray(servers, dtype=np.int64)
        if servers.size == 0:
            return
        self._kern[0] = None
        if servers.size == self.cap.shape[0] and np.array_equal(servers, np.arange(servers.size)):
            servers = slice(None)  # every server: the same numbers without fancy-indexed copies
        cap = self.cap[servers][:, :, None]
        b = self.beta[servers]
        frac = np.divide(b, cap, out=np.zeros_like(b), where=cap > 0)
        d = np.power(self.lam, frac) - 1.0  # eq. (11)
        self.delta[servers] = d
        self.omega[servers] = cap - b
        hs = np.arange(self.cap.shape[0]) if isinstance(servers, slice) else servers
        if self.compiled and self.delta.shape[2] > 1:  # one slot: numpy's einsum sums r in another order
            _refresh_tables(self.delta, self.omega, self.e_hat, self.z_hat, hs, self.Aw, self.Ap, self.st, self.cst)
        else:
            self._refresh_tables_numpy(servers)

    def _refresh_tables_numpy(self, servers) -> None:
        """The prefix sums, window-min tables and best-residual table as whole-array numpy (the oracle of
        :func:`_refresh_tables`)."""
        d, om = self.delta[servers], self.omega[servers]
        pw = np.einsum("hrt,mr->mht", d, self.e_hat)
        self.Aw[:, servers, 1:] = np.cumsum(pw, axis=2)
        pp = np.einsum("hrt,pr->pht", d, self.z_hat)
        self.Ap[:, servers, 1:] = np.cumsum(pp, axis=2)
        n = om.shape[2]
        self.st[0, servers] = om
        for k in range(1, self.st.shape[0]):
            w = 1 << (k - 1)
            if isinstance(servers, slice):
                prev, cur = self.st[k - 1], self.st[k]
                np.minimum(prev[:, :, : n - w], prev[:, :, w:], out=cur[:, :, : n - w])
                cur[:, :, n - w :] = prev[:, :, n - w :]
                continue
            prev = self.st[k - 1, servers]
            cur = prev.copy()
            cur[:, :, : n - w] = np.minimum(prev[:, :, : n - w], prev[:, :, w:])
            self.st[k, servers] = cur
        # window minima of the best residual over all servers: max_h min_t omega <= min_t max_h omega, a bound the
        # kernel tests before computing the exact maxima
        self.cst[0] = self.omega.max(axis=0)
        for k in range(1, self.cst.shape[0]):
            w = 1 << (k - 1)
            self.cst[k] = self.cst[k - 1]
            self.cst[k, :, : n - w] = np.minimum(self.cst[k - 1, :, : n - w], self.cst[k - 1, :, w:])

    def commit(self, cand: Candidate) -> None:
        """Allocate the candidate's resources in the window and update prices (Alg. 3 lines 10-11)."""
        c = self.cluster
        a, L = cand.t_minus - 1, cand.L
        f = np.outer(cand.y, c.worker_res[cand.m])
        if c.arch == "ps":
            f = f + np.outer(cand.s, c.ps_res[cand.p])
        hs = np.flatnonzero(f.sum(axis=1) > 0)
        self.beta[hs, :, a : a + L] += f[hs][:, :, None]
        self.touched[hs] = True
        self.refresh(hs)

    def dual_value(self) -> float:
        """Σ_{t,h,r} delta[h,r,t] · C^r_h / Cbar^r (the price part of the dual objective (9), normalised units)."""
        return float(np.einsum("hrt,hr->", self.delta, self.cap / self.cluster.cbar))


class WindowView:
    """What :func:`mincost` reads of a window [now, now + tau) of :class:`SlotTables`, in the kernel's layouts (slots
    before servers): the prefix sums ``Aw`` (M, slots + 1, H) and ``Ap`` start at slot ``now``, the minima tables ``st``
    (K, slots, H, R) and ``cst`` (K, R, slots) at the tables' first held slot (index ``t0`` is slot ``now``); only
    the window's first tau - 1 slots are read."""

    __slots__ = ("cluster", "tau", "offset", "e_hat", "z_hat", "logt", "st", "cst", "t0", "Aw", "Ap")

    def __init__(self, tables: SlotTables, now: int, tau: int) -> None:
        self.cluster, self.tau, self.offset, self.t0 = tables.cluster, int(tau), int(now), now - tables.base
        self.e_hat, self.z_hat, self.logt = tables.e_hat, tables.z_hat, tables.logt
        self.st, self.cst, self.Aw, self.Ap = tables.st, tables.cst, tables.Aw, tables.Ap

    def kernel_arrays(self) -> tuple:
        """(st, Aw, Ap), already in the kernel's layouts."""
        return self.st, self.Aw, self.Ap


class SlotTables:
    """The sub-round arrays of a ledger's committed schedule, kept in absolute slots across decisions.

    A :class:`SubRound` built at slot ``now`` from ``ledger.window(now, now + tau)`` recomputes the prices delta,
    the residuals omega and their window-minimum tables of every server and slot. Those are elementwise (prices,
    residuals) or exact (minima, maxima), so they do not depend on the window's start: here they are computed once
    per slot and server, for the slots as the windows first reach them and for a placement's servers and slots when
    it commits (:meth:`committed`), and read through a view from any later start (:meth:`view`). Only the prefix sums
    of the prices depend on the start (rounding); they are computed from ``now`` as far as the windows reach, and a
    decision at the same slot continues them (the committed servers' rows from the start). Every number equals the
    one of a ``SubRound`` built for the same window (the differential tests compare them). The arrays are kept in
    the search's layouts (:meth:`SubRound.kernel_arrays`); ``delta`` is (slots, R, H)."""

    #: the fewest slots the arrays are allocated for (they grow to twice a window's reach, from its start)
    min_size = 256

    def __init__(self, cluster, lam: float, ledger) -> None:
        self.cluster, self.lam, self.ledger = cluster, float(lam), ledger
        self.cap = cluster.capacity
        self.e_hat = cluster.worker_res / cluster.cbar
        self.z_hat = cluster.ps_res / cluster.cbar
        self.base, self.n, self.size = 0, 0, 0  # slots [base, base + n) held, room for ``size``
        self.now = -1  # the start of the prefix sums
        self.done = 0  # prefix sums computed for slots [now, now + done) of every server not in ``dirty``
        self.dirty = np.zeros(self.cap.shape[0], dtype=bool)
        self._any_dirty = False
        self._all = np.arange(self.cap.shape[0], dtype=np.int64)
        self._alloc(0, 0)

    def _alloc(self, base: int, size: int) -> None:
        """Arrays for ``size`` slots from ``base``, keeping what the old arrays held from ``base`` on."""
        H, R = self.cap.shape
        M, P = self.cluster.num_worker_types, self.cluster.num_ps_types
        logt = np.zeros(size + 2, dtype=np.int64)
        for L in range(2, size + 2):
            logt[L] = logt[L // 2] + 1
        K = int(logt[max(size, 1)]) + 1
        # every entry is written before it is read (the minima tables' inexact entries are never read)
        delta, st, cst = np.empty((size, R, H)), np.empty((K, size, H, R)), np.empty((K, R, size))
        keep = self.base + self.n - base if self.size and base >= self.base else 0
        if keep > 0:
            d = base - self.base
            k = min(K, self.st.shape[0])
            delta[:keep] = self.delta[d : d + keep]
            st[:k, :keep] = self.st[:k, d : d + keep]
            cst[:k, :, :keep] = self.cst[:k, :, d : d + keep]
        self.base, self.n, self.size = base, max(keep, 0), size
        self.delta, self.st, self.cst, self.logt = delta, st, cst, logt
        self.Aw, self.Ap = np.empty((M, size + 1, H)), np.empty((P, size + 1, H))
        self.Aw[:, 0], self.Ap[:, 0] = 0.0, 0.0
        self.done = 0

    def _fill(self, servers, lo: int, hi: int) -> None:
        """Prices and residuals of ``servers`` (a slice or an index array) over held slots [lo, hi), from the
        ledger, with the same operations as :meth:`SubRound.refresh`."""
        b = self.ledger.window(self.base + lo, self.base + hi)[servers]
        cap = self.cap[servers][:, :, None]
        frac = np.divide(b, cap, out=np.zeros_like(b), where=cap > 0)
        d = np.power(self.lam, frac) - 1.0  # eq. (11)
        self.delta[lo:hi][:, :, servers] = d.transpose(2, 1, 0)
        self.st[0, lo:hi][:, servers] = (cap - b).transpose(2, 0, 1)

    def _ensure(self, end: int) -> None:
        """Hold slots up to ``end`` (exclusive, absolute)."""
        if end <= self.base + self.n:
            return
        if end > self.base + self.size:
            start = self.now if self.now >= self.base else self.base
            self._alloc(start, max(self.min_size, 2 * (end - start)))
        lo, hi = self.n, end - self.base
        self._fill(slice(None), lo, hi)
        self.n = hi
        _k.server_minima(self.st, self._all, lo, hi, hi)
        _k.best_residual_minima(self.st, self.cst, lo, hi, hi)

    def view(self, now: int, tau: int) -> WindowView:
        """The window [now, now + tau): its tables held and its prefix sums computed (a start before the held
        slots starts the tables afresh)."""
        if now < self.base:
            self._alloc(now, 0)
        if now != self.now:
            self.now, self.done = now, 0
            if self._any_dirty:
                self.dirty[:] = False
                self._any_dirty = False
        self._ensure(now + tau - 1)
        t0 = now - self.base
        if self._any_dirty:
            _k.price_prefix(self.delta, t0, self.e_hat, self.z_hat, self.Aw, self.Ap, np.flatnonzero(self.dirty),
                            0, self.done)
            self.dirty[:] = False
            self._any_dirty = False
        if tau - 1 > self.done:
            _k.price_prefix(self.delta, t0, self.e_hat, self.z_hat, self.Aw, self.Ap, None, self.done, tau - 1)
            self.done = tau - 1
        return WindowView(self, now, tau)

    def committed(self, servers, start: int, end: int) -> None:
        """Update the tables after the ledger committed a placement on ``servers`` over absolute slots
        [start, end): their prices and residuals there, the minima tables around them, and (from the start) the
        prefix sums of those servers."""
        servers = np.asarray(servers, dtype=np.int64)
        lo, hi = max(start - self.base, 0), min(end - self.base, self.n)
        if servers.size == 0 or hi <= lo:
            return
        self._fill(servers, lo, hi)
        _k.server_minima(self.st, servers, lo, hi, self.n)
        _k.best_residual_minima(self.st, self.cst, lo, hi, self.n)
        self.dirty[servers] = True
        self._any_dirty = True


# ----------------------------------------------------------------------------------------------------------------
# Numba kernel


@njit(cache=True)
def _price_prefix(delta, h, weights, k, out, n, R):
    """``out[k, h, 1:n+1]``: the prefix sums over t of server ``h``'s price under weight row ``k`` (Σ_r delta·w, r
    from 0, then the running sum over t: the numpy oracle's order)."""
    acc = 0.0
    for t in range(n):
        x = 0.0
        for r in range(R):
            x += delta[h, r, t] * weights[k, r]
        acc = x if t == 0 else acc + x
        out[k, h, t + 1] = acc


@njit(cache=True)
def _refresh_tables(delta, omega, e_hat, z_hat, servers, Aw, Ap, st, cst):
    """The derived arrays of :meth:`SubRound.refresh` for ``servers`` from their prices and residuals: prefix sums
    over t of the per-worker / per-PS prices (``Aw``, ``Ap``), the sparse tables of window minima of the residuals
    (``st``) and of the best residual over every server (``cst``). The same additions in the same order as the numpy
    oracle (einsum over r from 0, cumsum over t), so the same numbers."""
    H, R, n = delta.shape
    M, P, K = e_hat.shape[0], z_hat.shape[0], st.shape[0]
    for i in range(servers.shape[0]):
        h = servers[i]
        for m in range(M):
            _price_prefix(delta, h, e_hat, m, Aw, n, R)
        for p in range(P):
            _price_prefix(delta, h, z_hat, p, Ap, n, R)
        for r in range(R):
            for t in range(n):
                st[0, h, r, t] = omega[h, r, t]
            for k in range(1, K):
                w = 1 << (k - 1)
                for t in range(n - w):
                    a, b = st[k - 1, h, r, t], st[k - 1, h, r, t + w]
                    st[k, h, r, t] = a if a <= b else b
                for t in range(max(n - w, 0), n):
                    st[k, h, r, t] = st[k - 1, h, r, t]
    for r in range(R):
        for t in range(n):
            best = omega[0, r, t]
            for h in range(1, H):
                if omega[h, r, t] > best:
                    best = omega[h, r, t]
            cst[0, r, t] = best
        for k in range(1, K):
            w = 1 << (k - 1)
            for t in range(n - w):
                a, b = cst[k - 1, r, t], cst[k - 1, r, t + w]
                cst[k, r, t] = a if a <= b else b
            for t in range(max(n - w, 0), n):
                cst[k, r, t] = cst[k - 1, r, t]


@njit(cache=True)
def _wmin(st, t0, logt, h, r, a, L):
    k = logt[L]
    x = st[k, t0 + a, h, r]
    y = st[k, t0 + a + L - (1 << k), h, r]
    return x if x < y else y


@njit(cache=True)
def _units_fit(st, t0, logt, h, d, i, a, L, R, big):
    """How many units of demand row ``d[i]`` server ``h`` holds over the whole window ``[a, a + L)``: the least,
    over the resources the row uses, of the window's minimum free amount over the demand (``big`` when it uses none)."""
    c = big
    for r in range(R):
        if d[i, r] > 0:
            q = int(math.floor(_wmin(st, t0, logt, h, r, a, L) / d[i, r] + 1e-9))
            if q < c:
                c = q
    return c


@njit(cache=True)
def _better(c, comp, bc, bcomp, mode):
    if mode == 1:
        return c < bc
    if mode == 2:  # completion first (the practical variant), then cost
        return comp < bcomp or (comp == bcomp and c < bc - TOL * max(1.0, abs(bc)))
    if c < bc - TOL * max(1.0, abs(bc)):
        return True
    return abs(c - bc) <= TOL * max(1.0, c) and comp < bcomp


@njit(cache=True)
def _can_win(lb, comp, bc, bcomp, mode):
    """Whether any candidate with cost >= lb and completion comp could beat the incumbent."""
    if mode == 1:
        return lb < bc
    if mode == 2:
        return comp < bcomp or (comp == bcomp and lb < bc)
    if lb < bc - TOL * max(1.0, abs(bc)):
        return True
    return lb <= bc + TOL * max(1.0, bc) and comp < bcomp


@njit(cache=True)
def _fill_cost(X, cumcap, cumcost, omo, H):
    """Cost of greedily filling X workers over sorted positions 0..H-1 (cumcap[k] = Σ_{i<k} cap)."""
    if X <= 0:
        return 0.0
    lo, hi = 0, H - 1  # smallest k with cumcap[k+1] >= X
    while lo < hi:
        mid = (lo + hi) // 2
        if cumcap[mid + 1] >= X:
            hi = mid
        else:
            lo = mid + 1
    return cumcost[lo] + (X - cumcap[lo]) * omo[lo]


@njit(cache=True)
def _slot(cache, L, a, min_comp):
    """Index (L, comp - min_comp - 1) of window [a, a + L) in the bound caches, or (-1, -1) outside them."""
    k = a + L - min_comp  # comp = a + 1 + L
    stt = cache[5]
    if L < stt.shape[0] and 0 <= k < stt.shape[1]:
        return L, k
    return -1, -1


@njit(cache=True)
def _res_ub(cst, t0, logt, a, L, out):
    """out[r] = min over the window [a, a + L) of max_h omega[h, r, t] (>= the exact maxima of _res_passes)."""
    k = logt[L]
    for r in range(out.shape[0]):
        x = cst[k, r, t0 + a]
        y = cst[k, r, t0 + a + L - (1 << k)]
        out[r] = x if x < y else y
    return out


@njit(cache=True)
def _res_test(maxw, kind, N, em, zp, bm, Bp, R):
    """kind 0: :func:`_fits_somewhere` (co-located), kind 1: :func:`_ps_may_fit` (spread, PS) on ``maxw``."""
    if kind == 0:
        return _fits_somewhere(N, em, zp, maxw, R)
    return _ps_may_fit(N, maxw, em, zp, bm, Bp, R)


@njit(cache=True)
def _res_passes(L, a, min_comp, H, R, st, t0, logt, cache, stamp, kind, N, em, zp, bm, Bp):
    """Whether the residual test ``kind`` (:func:`_res_test`) passes on maxw[r] = max_h of the window's residual of
    resource r (min over [a, a + L)). The tests only get more lenient as maxw grows, so the servers are scanned in
    order until the partial maxima pass; the cache keeps the partial maxima and the scan's position per window
    (the last entry of its row), so later questions resume where it stopped."""
    lbr, stt = cache[2], cache[5]
    i, k = _slot(cache, L, a, min_comp)
    if i >= 0:
        maxw = lbr[i, k]
        if stt[i, k] != stamp:
            maxw[:] = -1e300
            maxw[maxw.shape[0] - 1] = 0.0
            stt[i, k] = stamp
    else:
        maxw = np.full(R + 1, -1e300)
        maxw[R] = 0.0
    pos = maxw.shape[0] - 1
    h = int(maxw[pos])
    ok = _res_test(maxw, kind, N, em, zp, bm, Bp, R)
    while not ok and h < H:
        for r in range(R):
            w = _wmin(st, t0, logt, h, r, a, L)
            if w > maxw[r]:
                maxw[r] = w
        h += 1
        ok = _res_test(maxw, kind, N, em, zp, bm, Bp, R)
    maxw[pos] = h
    return ok


@njit(cache=True)
def _count_ub(maxw, d, R):
    """An upper bound on max_h min_r floor(wmin_hr / d_r) (the units of demand d that fit on the best server),
    from the per-resource maxima: each term is computed as the search computes it, on a value >= its own."""
    big = 1 << 40
    q = big
    for r in range(R):
        if d[r] > 0:
            x = int(math.floor(maxw[r] / d[r] + 1e-9))
            if x < q:
                q = x
    return q


@njit(cache=True)
def _ps_may_fit(N, maxw, em, zp, bm, Bp, R):
    """The spread search's PS test (s0 >= 1 PS fit on the PS server, s0 B_p >= (N - g) b_m with g workers there)
    against residual bounds ``maxw`` (>= every server's): False means no server passes it."""
    s0ub = _count_ub(maxw, zp, R)
    return not (s0ub < 1 or s0ub * Bp < (N - max(0, _count_ub(maxw, em, R))) * bm - 1e-9)


@njit(cache=True)
def _worker_bounds(m, L, a, min_comp, H, R, e, st, t0, logt, Aw, cache, stamp, counts):
    """(min_h Ω_h, Σ_h cap_h, max_h cap_h) of worker type m in window [a, a + L), cached per call; Ω_h and cap_h
    computed with the same operations as the spread search. ``counts=False`` computes only min_h Ω_h (the two
    counts come back as -1 unless an earlier call of this window computed them)."""
    lbw, stw = cache[0], cache[3]
    i, k = _slot(cache, L, a, min_comp)
    if i >= 0 and stw[m, i, k] == stamp:
        om_min, tot, capmax = lbw[m, i, k, 0], int(lbw[m, i, k, 1]), int(lbw[m, i, k, 2])
    else:
        om_min, tot, capmax = 1e300, -1, -1
        for h in range(H):
            om = Aw[m, a + L, h] - Aw[m, a, h]
            if om < om_min:
                om_min = om
    if counts and tot < 0:
        big = 1 << 40
        tot, capmax = 0, 0
        for h in range(H):
            ch = max(0, _units_fit(st, t0, logt, h, e, m, a, L, R, big))
            tot += ch
            if ch > capmax:
                capmax = ch
    if i >= 0:
        lbw[m, i, k, 0], lbw[m, i, k, 1], lbw[m, i, k, 2] = om_min, tot, capmax
        stw[m, i, k] = stamp
    return om_min, tot, capmax


@njit(cache=True)
def _ps_entry(p, L, a, min_comp, H, Ap, cache, stamp):
    """Index (i, k) of PS type p's cache entry for window [a, a + L), initialised on first use in this call with
    min_h Ψ_h (computed as the spread search computes Ψ) and an empty scan of the servers' PS counts."""
    lbp, stp = cache[1], cache[4]
    i, k = _slot(cache, L, a, min_comp)
    if i < 0 or stp[p, i, k] == stamp:
        return i, k
    ps_min = 1e300
    for h in range(H):
        ps = Ap[p, a + L, h] - Ap[p, a, h]
        if ps < ps_min:
            ps_min = ps
    lbp[p, i, k, 0], lbp[p, i, k, 1], lbp[p, i, k, 2] = ps_min, -(1 << 40), 0
    stp[p, i, k] = stamp
    return i, k


@njit(cache=True)
def _ps_min(p, L, a, min_comp, H, Ap, cache, stamp):
    """min_h Ψ_h of PS type p in window [a, a + L), cached per call."""
    i, k = _ps_entry(p, L, a, min_comp, H, Ap, cache, stamp)
    if i >= 0:
        return cache[1][p, i, k, 0]
    ps_min = 1e300
    for h in range(H):
        ps = Ap[p, a + L, h] - Ap[p, a, h]
        if ps < ps_min:
            ps_min = ps
    return ps_min


@njit(cache=True)
def _ps_passes(s0, N, capmax, bm, Bp):
    """The spread search's PS test (s0 >= 1, s0 B_p >= (N - g) b_m) at g = capmax, its most lenient value."""
    return not (s0 < 1 or s0 * Bp < (N - capmax) * bm - 1e-9)


@njit(cache=True)
def _ps_server_exists(p, L, a, min_comp, H, R, z, st, t0, logt, Ap, cache, stamp, N, capmax, bm, Bp):
    """Whether some server's PS count s0_h (computed as the spread search computes it) passes :func:`_ps_passes`.

    The servers are scanned in order until one passes; the cache keeps the scan's maximum and position per window
    and PS type, so later questions (other N, other worker types) resume where it stopped."""
    lbp = cache[1]
    i, k = _ps_entry(p, L, a, min_comp, H, Ap, cache, stamp)
    big = 1 << 40
    best, h = (int(lbp[p, i, k, 1]), int(lbp[p, i, k, 2])) if i >= 0 else (-big, 0)
    ok = _ps_passes(best, N, capmax, bm, Bp)
    while not ok and h < H:
        s0 = _units_fit(st, t0, logt, h, z, p, a, L, R, big)
        if s0 > best:
            best = s0
            ok = _ps_passes(best, N, capmax, bm, Bp)
        h += 1
    if i >= 0:
        lbp[p, i, k, 1], lbp[p, i, k, 2] = best, h
    return ok


@njit(cache=True)
def _price_may_pass(lb, thr, comp, bc, bcomp, mode):
    """Whether a candidate of cost >= lb and completion comp could pass the threshold and beat the incumbent (the
    search's prices are >= 0, so a bound on part of a cost is a bound on all of it)."""
    return lb < thr and _can_win(lb, comp, bc, bcomp, mode)


@njit(cache=True)
def _ps_host_exists(s0, cap, N, bm, Bp, H):
    """Whether some server h could host the PS of a spread placement: s0_h >= 1 PS fit there and s0_h B_p >= (N - g) b_m
    for g = min(cap_h, N), the most workers it can keep (the spread search's g-loop test at its most lenient)."""
    for h in range(H):
        g = cap[h] if cap[h] < N else N
        if s0[h] >= 1 and s0[h] * Bp >= (N - g) * bm - 1e-9:
            return True
    return False


@njit(cache=True)
def _fits_somewhere(N, em, zp, maxw, R):
    """Whether N workers (demand em each) and one PS (zp) can fit within the per-resource maxima ``maxw`` (the
    co-located test against the best residual of each resource: necessary for fitting on one server)."""
    for r in range(R):
        need = N * em[r] + zp[r]
        if need > 0 and need > maxw[r] + 1e-9:
            return False
    return True


@njit(cache=True)
def _pool_row(cache, pool, L, a, min_comp, stamp, m):
    """The pool row holding the spread search's per-server arrays of worker type m in window [a, a + L) in this
    call (level ``pool[0][row, 1]``: 0 empty, 1 per-server arrays, 2 also sorted), a new row when the window has
    none (or the row holds another type: it is reset), or -1 when the window is outside the caches or the pool is
    full."""
    i, k = _slot(cache, L, a, min_comp)
    if i < 0:
        return -1
    pix, pst, meta, ctr = cache[6], cache[7], pool[0], pool[10]
    if pst[i, k] == stamp:
        row = pix[i, k]
        if meta[row, 0] != m:
            meta[row, 0], meta[row, 1] = m, 0
        return row
    if ctr[1] != stamp:
        ctr[0], ctr[1] = 0, stamp
    if ctr[0] >= meta.shape[0]:
        return -1
    row = ctr[0]
    ctr[0] += 1
    pix[i, k], pst[i, k] = row, stamp
    meta[row, 0], meta[row, 1] = m, 0
    return row


@njit(cache=True)
def _sort_by_cost(order, cost, H):
    """Sort the permutation ``order`` in place by (cost[h], h): the order of a stable sort of ``cost`` (numpy's
    mergesort argsort), whatever the starting permutation. Insertion sort, fast when ``order`` is nearly sorted
    already (the previous window's order: the next window's costs differ a little)."""
    for j in range(1, H):
        v = order[j]
        cv = cost[v]
        i = j - 1
        while i >= 0:
            u = order[i]
            cu = cost[u]
            if cu > cv or (cu == cv and u > v):
                order[i + 1] = u
                i -= 1
            else:
                break
        order[i + 1] = v


@njit(cache=True)
def _kernel(
    arch_ps, mode, thr, H, R, M, P, tau, W, EK, D, v, U, comm, u_ra, e, z, e_hat, z_hat, b, B, st, t0, logt, Aw, Ap,
    out_y, out_s, allow_m, max_workers, min_comp, prune, cache, stamp, cst, pool,
):
    # returns (found, cost, coloc, m, p, L, N, a); writes y and s of the best into out_y / out_s; only candidates
    # completing after relative slot min_comp (comp = a + 1 + L > min_comp) are enumerated.
    # prune: skip a (types, N, window) before its per-server loops when a bound of _window_bounds shows that no
    # server can hold it (resources, PS bandwidth) or that its cost cannot pass (threshold, incumbent)
    best_c = thr
    best_comp = 1 << 60
    found = False
    bcol, bm, bp, bL, bN, ba = 0, -1, -1, 0, 0, 0
    Omega = np.zeros(H)
    Psi = np.zeros(H)
    zero_r = np.zeros(R)
    ub = np.zeros(R)
    cap = np.zeros(H, dtype=np.int64)
    s0a = np.zeros(H, dtype=np.int64)
    wm = np.zeros((H, R))
    omo = np.zeros(H)
    capo = np.zeros(H, dtype=np.int64)
    cumcap = np.zeros(H + 1, dtype=np.int64)
    cumcost = np.zeros(H + 1)
    order = np.arange(H)  # the servers by (Omega, index); each sort starts from the previous window's order
    n_max = D if D < max_workers else max_workers
    nslots = tau - 1
    big = 1 << 40
    # the best residual of each resource over every window of this call (>= _res_ub of any of them)
    ubmax = np.full(R, -1e300)
    for r in range(R):
        for t in range(nslots):
            if cst[0, r, t0 + t] > ubmax[r]:
                ubmax[r] = cst[0, r, t0 + t]
    # ---- co-located (Alg. 3 line 3): A_mincost2 (PS) / A_RAmincost1 (RA)
    for m in range(M):
        if not allow_m[m]:
            continue
        if arch_ps:
            for p in range(P):
                it = v[m] + U[p]
                Lmin = max(1, int(math.ceil(EK * it - 1e-9)))
                Lmax = min(int(math.ceil(W * it - 1e-9)), nslots)
                prevN = -1
                for L in range(Lmin, Lmax + 1):
                    N = int(math.ceil(W * it / L - 1e-9))
                    if N > n_max or N == prevN:
                        continue
                    prevN = N
                    if mode == 1 and found and best_c <= 0.0:
                        break
                    if not _can_win(0.0, 1 + L, best_c, best_comp, mode):
                        break
                    if prune and not _fits_somewhere(N, e[m], z[p], ubmax, R):
                        continue
                    for a in range(max(0, min_comp - L), tau - L):
                        comp = a + 1 + L
                        if not _can_win(0.0, comp, best_c, best_comp, mode):
                            break
                        if prune:
                            if not _fits_somewhere(N, e[m], z[p], _res_ub(cst, t0, logt, a, L, ub), R):
                                continue
                            om_min = _worker_bounds(m, L, a, min_comp, H, R, e, st, t0, logt, Aw, cache, stamp,
                                                    False)[0]
                            if not _price_may_pass(N * om_min, thr, comp, best_c, best_comp, mode):
                                continue
                            if not _res_passes(L, a, min_comp, H, R, st, t0, logt, cache, stamp, 0, N, e[m], z[p], 0.0,
                                               1.0):
                                continue
                            ps_min = _ps_min(p, L, a, min_comp, H, Ap, cache, stamp)
                            lb = N * om_min + ps_min
                            if lb >= thr or not _can_win(lb, comp, best_c, best_comp, mode):
                                continue
                        for h in range(H):
                            ok = True
                            for r in range(R):
                                need = N * e[m, r] + z[p, r]
                                if need > 0 and need > _wmin(st, t0, logt, h, r, a, L) + 1e-9:
                                    ok = False
                                    break
                            if not ok:
                                continue
                            c = N * (Aw[m, a + L, h] - Aw[m, a, h]) + (Ap[p, a + L, h] - Ap[p, a, h])
                            if c < thr and _better(c, comp, best_c, best_comp, mode):
                                found = True
                                best_c, best_comp = c, comp
                                bcol, bm, bp, bL, bN, ba = 1, m, p, L, N, a
                                out_y[:] = 0
                                out_s[:] = 0
                                out_y[h] = N
                                out_s[h] = 1
        else:
            for N in range(1, n_max + 1):
                it = v[m] + u_ra * (N - 1) / N
                L = int(math.ceil(W * it / N - 1e-9))
                if L > nslots:
                    continue
                if mode == 1 and found and best_c <= 0.0:
                    break
                if not _can_win(0.0, 1 + L, best_c, best_comp, mode):
                    continue
                if prune and not _fits_somewhere(N, e[m], zero_r, ubmax, R):
                    continue
                for a in range(max(0, min_comp - L), tau - L):
                    comp = a + 1 + L
                    if not _can_win(0.0, comp, best_c, best_comp, mode):
                        break
                    if prune:
                        if not _fits_somewhere(N, e[m], zero_r, _res_ub(cst, t0, logt, a, L, ub), R):
                            continue
                        lb = N * _worker_bounds(m, L, a, min_comp, H, R, e, st, t0, logt, Aw, cache, stamp, False)[0]
                        if not _price_may_pass(lb, thr, comp, best_c, best_comp, mode):
                            continue
                        if not _res_passes(L, a, min_comp, H, R, st, t0, logt, cache, stamp, 0, N, e[m], zero_r, 0.0,
                                           1.0):
                            continue
                    for h in range(H):
                        ok = True
                        for r in range(R):
                            if e[m, r] > 0 and N * e[m, r] > _wmin(st, t0, logt, h, r, a, L) + 1e-9:
                                ok = False
                                break
                        if not ok:
                            continue
                        c = N * (Aw[m, a + L, h] - Aw[m, a, h])
                        if c < thr and _better(c, comp, best_c, best_comp, mode):
                            found = True
                            best_c, best_comp = c, comp
                            bcol, bm, bp, bL, bN, ba = 1, m, -1, L, N, a
                            out_y[:] = 0
                            out_s[:] = 0
                            out_y[h] = N
    # ---- spread (Alg. 3 line 4): A_mincost1 (PS) / A_RAmincost2 (RA)
    for m in range(M):
        if not allow_m[m]:
            continue
        for p in range(P if arch_ps else 1):
            if arch_ps:
                it0 = v[m] + U[p] + comm[m]
                Lmin = max(1, int(math.ceil(EK * it0 - 1e-9)))
                Lmax = min(int(math.ceil(W * it0 - 1e-9)), nslots)
                Nlo, Nhi = 1, n_max
            else:
                it0 = 0.0
                Lmin, Lmax = 1, nslots
                Nlo, Nhi = 2, n_max
            prevN = -1
            # PS: loop over L (N derived); RA: loop over N (L derived). Unified as an index loop.
            n_iter = (Lmax - Lmin + 1) if arch_ps else (Nhi - Nlo + 1)
            for ii in range(max(0, n_iter)):
                if arch_ps:
                    L = Lmin + ii
                    N = int(math.ceil(W * it0 / L - 1e-9))
                    if N > n_max or N == prevN:
                        continue
                    prevN = N
                else:
                    N = Nlo + ii
                    it = v[m] + (u_ra + comm[m]) * (N - 1) / N
                    L = int(math.ceil(W * it / N - 1e-9))
                    if L > nslots:
                        continue
                if mode == 1 and found and best_c <= 0.0:
                    break
                if not _can_win(0.0, 1 + L, best_c, best_comp, mode):
                    if arch_ps:
                        break
                    continue
                if prune and arch_ps and not _ps_may_fit(N, ubmax, e[m], z[p], b[m], B[p], R):
                    continue
                for a in range(max(0, min_comp - L), tau - L):
                    comp = a + 1 + L
                    if not _can_win(0.0, comp, best_c, best_comp, mode):
                        break
                    if prune:
                        # the PS server n needs s0_n >= 1 and s0_n B_p >= (N - g) b_m with g <= cap_n (the search's
                        # own test, relaxed to the maxima over the servers: first from the per-resource residuals)
                        ps_min = 0.0
                        # the workers' price bound first (it rejects most windows; the PS price only adds to it)
                        lb = N * _worker_bounds(m, L, a, min_comp, H, R, e, st, t0, logt, Aw, cache, stamp, False)[0]
                        if not _price_may_pass(lb, thr, comp, best_c, best_comp, mode):
                            continue
                        if arch_ps and not _ps_may_fit(N, _res_ub(cst, t0, logt, a, L, ub), e[m], z[p], b[m], B[p], R):
                            continue
                        if arch_ps:
                            if not _res_passes(L, a, min_comp, H, R, st, t0, logt, cache, stamp, 1, N, e[m], z[p], b[m],
                                               B[p]):
                                continue
                        om_min, tot, capmax = _worker_bounds(m, L, a, min_comp, H, R, e, st, t0, logt, Aw, cache, stamp,
                                                             True)
                        if tot < N:
                            continue
                        if arch_ps:
                            if not _ps_server_exists(p, L, a, min_comp, H, R, z, st, t0, logt, Ap, cache, stamp, N,
                                                     capmax, b[m], B[p]):
                                continue
                            ps_min = _ps_min(p, L, a, min_comp, H, Ap, cache, stamp)
                        lb = N * om_min + ps_min
                        if lb >= thr or not _can_win(lb, comp, best_c, best_comp, mode):
                            continue
                    # the per-server arrays of (m, L, a) and their sorted form do not depend on p: kept per window
                    # in the call's pool (the same numbers, computed once for all PS types)
                    row = _pool_row(cache, pool, L, a, min_comp, stamp, m)
                    if row >= 0:
                        Omv, capv, wmv = pool[2][row], pool[3][row], pool[4][row]
                        ordv, omov, capov, ccap, ccost = pool[5][row], pool[6][row], pool[7][row], pool[8][row], \
                            pool[9][row]
                        lvl = pool[0][row, 1]
                    else:
                        Omv, capv, wmv, ordv, omov, capov, ccap, ccost = Omega, cap, wm, order, omo, capo, cumcap, \
                            cumcost
                        lvl = 0
                    ps_min = 1e300
                    if lvl >= 1:
                        tot, om_min = pool[0][row, 2], pool[1][row]
                        if arch_ps:
                            for h in range(H):
                                Psi[h] = Ap[p, a + L, h] - Ap[p, a, h]
                                if Psi[h] < ps_min:
                                    ps_min = Psi[h]
                                cs = big
                                for r in range(R):
                                    if z[p, r] > 0:
                                        q = int(math.floor(wmv[h, r] / z[p, r] + 1e-9))
                                        if q < cs:
                                            cs = q
                                s0a[h] = cs
                    else:
                        tot = 0
                        om_min = 1e300
                        for h in range(H):
                            Omv[h] = Aw[m, a + L, h] - Aw[m, a, h]
                            if Omv[h] < om_min:
                                om_min = Omv[h]
                            if arch_ps:
                                Psi[h] = Ap[p, a + L, h] - Ap[p, a, h]
                                if Psi[h] < ps_min:
                                    ps_min = Psi[h]
                            cu = big
                            cs = big
                            for r in range(R):
                                wr = _wmin(st, t0, logt, h, r, a, L)
                                wmv[h, r] = wr
                                if e[m, r] > 0:
                                    q = int(math.floor(wr / e[m, r] + 1e-9))
                                    if q < cu:
                                        cu = q
                                if arch_ps and z[p, r] > 0:
                                    q = int(math.floor(wr / z[p, r] + 1e-9))
                                    if q < cs:
                                        cs = q
                            capv[h] = max(0, cu)
                            tot += capv[h]
                            s0a[h] = cs
                        if row >= 0:
                            pool[0][row, 1], pool[0][row, 2], pool[1][row] = 1, tot, om_min
                    if tot < N:
                        continue
                    lb = N * om_min + (ps_min if arch_ps else 0.0)
                    if lb >= thr or not _can_win(lb, comp, best_c, best_comp, mode):
                        continue
                    if arch_ps and prune and not _ps_host_exists(s0a, capv, N, b[m], B[p], H):
                        continue
                    if lvl < 2:
                        if row >= 0:
                            ordv[:] = order  # start from the last sorted order
                        if prune:
                            _sort_by_cost(ordv, Omv, H)
                        else:  # the plain search sorts afresh (the oracle of the sort from the previous order)
                            ordv[:] = np.argsort(Omv, kind="mergesort")
                        if row >= 0:
                            order[:] = ordv
                            pool[0][row, 1] = 2
                        for i in range(H):
                            omov[i] = Omv[ordv[i]]
                            capov[i] = capv[ordv[i]]
                            ccap[i + 1] = ccap[i] + capov[i]
                            ccost[i + 1] = ccost[i] + capov[i] * omov[i]
                    if not arch_ps:
                        i0 = 0
                        while capov[i0] == 0:
                            i0 += 1
                        if capov[i0] >= N:  # [R] all workers on one server: a q = 1 placement (dominated), skip
                            continue
                        c = _fill_cost(N, ccap, ccost, omov, H)
                        if c < thr and _better(c, comp, best_c, best_comp, mode):
                            found = True
                            best_c, best_comp = c, comp
                            bcol, bm, bp, bL, bN, ba = 0, m, -1, L, N, a
                            out_y[:] = 0
                            out_s[:] = 0
                            rem = N
                            for i in range(H):
                                k = ordv[i]
                                y = capov[i] if capov[i] < rem else rem
                                out_y[k] = y
                                rem -= y
                        continue
                    for pn in range(H):  # PS server n = ordv[pn]
                        n = ordv[pn]
                        rem = N - ccap[pn]
                        if rem < 0:
                            rem = 0
                        yhat = capov[pn] if capov[pn] < rem else rem
                        # largest feasible g in 0..yhat (the last assignment wins, Alg. 4)
                        g = -1
                        s_g = 0
                        s0 = s0a[n]
                        if s0 < 1:
                            continue
                        if prune and s0 * B[p] < (N - yhat) * b[m] - 1e-9:  # no g passes: sh(g) <= s0, g <= yhat
                            continue
                        for gg in range(yhat, -1, -1):
                            sh = big
                            for r in range(R):
                                if z[p, r] > 0:
                                    q = int(math.floor((wmv[n, r] - gg * e[m, r]) / z[p, r] + 1e-9))
                                    if q < sh:
                                        sh = q
                            if sh * B[p] >= (N - gg) * b[m] - 1e-9:
                                g = gg
                                need = int(math.ceil((N - gg) * b[m] / B[p] - 1e-9))
                                s_g = sh if sh < need else need
                                break
                        if g < 0 or s_g < 1:
                            continue
                        X = N - g  # workers on the other servers, greedy in order (n skipped)
                        after = ccap[H] - ccap[pn + 1]
                        if X <= ccap[pn]:
                            cw = _fill_cost(X, ccap, ccost, omov, H)
                        else:
                            Xp = X - ccap[pn]
                            if Xp > after:
                                continue
                            cw = ccost[pn] + _fill_cost(Xp + ccap[pn + 1], ccap, ccost, omov, H) - ccost[pn + 1]
                        c = cw + g * Omv[n] + s_g * Psi[n]
                        if c < thr and _better(c, comp, best_c, best_comp, mode):
                            found = True
                            best_c, best_comp = c, comp
                            bcol, bm, bp, bL, bN, ba = 0, m, p, L, N, a
                            out_y[:] = 0
                            out_s[:] = 0
                            out_y[n] = g
                            out_s[n] = s_g
                            rem = X
                            for i in range(H):
                                if i == pn:
                                    continue
                                k = ordv[i]
                                y = capov[i] if capov[i] < rem else rem
                                out_y[k] = y
                                rem -= y
    return found, best_c, bcol, bm, bp, bL, bN, ba


@functools.lru_cache(maxsize=16)
def _all_types(M: int) -> np.ndarray:
    """Every worker type allowed (one array shared by the calls; the kernel only reads it; writable, so the kernel
    keeps one compiled signature)."""
    return np.ones(M, dtype=np.bool_)


def job_arrays(cluster, jobs, j):
    """Job j's inputs of the search: (work W, E_j K_j, chunks D_j, v, PS update, communication slots, RA update)."""
    return _job_arrays(cluster, jobs, j)


def _job_arrays(cluster, jobs, j):
    from .simulator import comm_slots

    return (
        float(jobs.work[j]),
        float(jobs.epochs[j] * jobs.batches[j]),
        int(jobs.chunks[j]),
        np.ascontiguousarray(jobs.v[j], dtype=np.float64),
        np.ascontiguousarray(jobs.ps_update[j], dtype=np.float64),
        np.ascontiguousarray(comm_slots(jobs.grad_mb[j], cluster.worker_bw), dtype=np.float64),
        float(jobs.ra_update[j]),
    )


class _BoundCache:
    """Work arrays of :func:`_window_bounds`, kept across calls: a call stamps the entries it fills with its own
    number, so nothing is cleared between calls. Windows beyond ``max_entries`` (L, completion) pairs run
    uncached."""

    max_entries = 1 << 16

    def __init__(self) -> None:
        self.stamp = 0
        self.shape = (0, 0, 0, 0, 0)
        self.arrays: tuple = ()
        self._pool: tuple | None = None

    #: windows per call whose spread-search arrays are kept (:func:`_pool_row`)
    pool_rows = 256

    def pool(self, H: int, R: int, rows: int | None = None) -> tuple:
        """The spread search's pool of ``rows`` windows (default ``pool_rows``; 0: none, every window computed
        afresh) for H servers and R resources: (meta [m, level, tot], min Omega, Omega, cap, window minima, order,
        sorted Omega, sorted cap, their cumulative sums, row counter)."""
        n = self.pool_rows if rows is None else int(rows)
        if n == 0:
            return self._empty_pool(H, R)
        if self._pool is None or self._pool[2].shape != (n, H) or self._pool[4].shape[2] != R:
            i8 = np.int64
            self._pool = (
                np.zeros((n, 3), dtype=i8), np.zeros(n), np.zeros((n, H)), np.zeros((n, H), dtype=i8),
                np.zeros((n, H, R)), np.zeros((n, H), dtype=i8), np.zeros((n, H)), np.zeros((n, H), dtype=i8),
                np.zeros((n, H + 1), dtype=i8), np.zeros((n, H + 1)), np.full(2, -1, dtype=i8),
            )
        return self._pool

    @staticmethod
    def _empty_pool(H: int, R: int) -> tuple:
        i8 = np.int64
        return (
            np.zeros((0, 3), dtype=i8), np.zeros(0), np.zeros((0, H)), np.zeros((0, H), dtype=i8), np.zeros((0, H, R)),
            np.zeros((0, H), dtype=i8), np.zeros((0, H)), np.zeros((0, H), dtype=i8), np.zeros((0, H + 1), dtype=i8),
            np.zeros((0, H + 1)), np.full(2, -1, dtype=i8),
        )

    def get(self, M: int, P: int, R: int, tau: int, width: int) -> tuple:
        """((lbw, lbp, lbr, stw, stp, stt, pix, pst), stamp) for windows of length < tau and ``width`` completion
        slots."""
        nC = max(1, width)
        while tau * nC > self.max_entries and nC > 1:
            nC //= 2
        nL = max(1, min(tau, self.max_entries // nC))
        want = (M, P, R, nL, nC)
        M0, P0, R0, L0, C0 = self.shape
        if not self.arrays or M > M0 or P > P0 or R > R0 or nL > L0 or nC > C0:
            M2, P2, R2, L2, C2 = self.shape = tuple(max(x, y) for x, y in zip(self.shape, want, strict=True))
            self.arrays = (
                np.zeros((M2, L2, C2, 3)), np.zeros((P2, L2, C2, 3)), np.zeros((L2, C2, R2 + 1)),
                np.full((M2, L2, C2), -1, dtype=np.int64), np.full((P2, L2, C2), -1, dtype=np.int64),
                np.full((L2, C2), -1, dtype=np.int64), np.zeros((L2, C2), dtype=np.int64),
                np.full((L2, C2), -1, dtype=np.int64),
            )
        self.stamp += 1
        return self.arrays, self.stamp


_BOUNDS = _BoundCache()

#: the ``better`` predicates: cost then completion (default), cost only in the paper's order, or
#: completion then cost (``completion_first``: the practical variant ``aonline-hetero-now``, not the paper's)
_MODES = {"earliest_completion": 0, "paper_order": 1, "completion_first": 2}


def mincost(
    S: SubRound, jobs, j: int, threshold: float, tie_break: str = "earliest_completion",
    allow_types: np.ndarray | None = None, max_workers: int | None = None, min_completion: int = 0,
    prune: bool = True, job_arrays: tuple | None = None,
) -> Candidate | None:
    """The best schedule of job j in sub-round S with cost < threshold (None if there is none).

    ``allow_types`` (bool per worker type) and ``max_workers`` restrict the enumeration (Figs. 9 and 10);
    ``min_completion`` skips the candidates completing at relative slot <= min_completion (the practical variant's
    growing windows: those were enumerated, and rejected, in the previous window). ``prune=False`` runs the search
    without the cached window bounds, the spread search's pool of per-window arrays and the sort from the previous
    order (the same result, slower: the differential tests' oracle). ``job_arrays``: :func:`job_arrays` of (cluster,
    jobs, j), when the caller searches several windows for one job."""
    c = S.cluster
    H, R = c.capacity.shape
    M, P = c.num_worker_types, c.num_ps_types
    W, EK, D, v, U, comm, u_ra = _job_arrays(c, jobs, j) if job_arrays is None else job_arrays
    y = np.zeros(H, dtype=np.int64)
    s = np.zeros(H, dtype=np.int64)
    allow = _all_types(M) if allow_types is None else np.asarray(allow_types, dtype=np.bool_)
    kst, kAw, kAp = S.kernel_arrays()
    found, cost, col, m, p, L, N, a = _kernel(
        c.arch == "ps", _MODES[tie_break], float(threshold), H, R, M, P, S.tau, W, EK, D,
        v, U, comm, u_ra, c.worker_res, c.ps_res, S.e_hat, S.z_hat, c.worker_bw, c.ps_bw, kst, S.t0, S.logt, kAw,
        kAp, y, s, allow, int(max_workers) if max_workers is not None else 1 << 30, int(min_completion),
        prune, *_BOUNDS.get(M, max(P, 1), R, S.tau, S.tau - int(min_completion)), S.cst,
        _BOUNDS.pool(H, R, None if prune else 0),
    )
    if not found:
        return None
    return Candidate(cost, col, m, p, L, N, a + 1, y, s)


# ----------------------------------------------------------------------------------------------------------------
# literal pure-Python reference (the pseudo-code read literally, no pruning, no prefix sums): the test oracle


def mincost_reference(S: SubRound, jobs, j: int, threshold: float, tie_break: str = "earliest_completion"):
    c = S.cluster
    H, R = c.capacity.shape
    e, z, eh, zh, b, B = c.worker_res, c.ps_res, S.e_hat, S.z_hat, c.worker_bw, c.ps_bw
    W, EK, D, v, U, comm, u_ra = _job_arrays(c, jobs, j)
    tau, om, dl = S.tau, S.omega, S.delta
    best = [threshold, 1 << 60, None]

    def better(cost, comp):
        bc, bcomp = best[0], best[1]
        if tie_break == "paper_order":
            return cost < bc
        if tie_break == "completion_first":
            return comp < bcomp or (comp == bcomp and cost < bc - TOL * max(1.0, abs(bc)))
        return cost < bc - TOL * max(1.0, abs(bc)) or (abs(cost - bc) <= TOL * max(1.0, cost) and comp < bcomp)

    def consider(cost, L, t_minus, cand):
        if cost < threshold and better(cost, t_minus + L):
            best[0], best[1], best[2] = cost, t_minus + L, cand

    def wmin(h, r, a, L):
        return om[h, r, a : a + L].min()

    def wcost(h, a, L, vec):
        return float((dl[h, :, a : a + L] * vec[:, None]).sum())

    arch_ps = c.arch == "ps"
    for m in range(c.num_worker_types):  # co-located
        if arch_ps:
            for p in range(c.num_ps_types):
                it = v[m] + U[p]
                prevN = -1
                for L in range(max(1, math.ceil(EK * it - 1e-9)), min(math.ceil(W * it - 1e-9), tau - 1) + 1):
                    N = math.ceil(W * it / L - 1e-9)
                    if N > D or N == prevN:  # dedupe_L
                        continue
                    prevN = N
                    for a in range(0, tau - L):
                        for h in range(H):
                            if any(N * e[m, r] + z[p, r] > 0 and N * e[m, r] + z[p, r] > wmin(h, r, a, L) + 1e-9
                                   for r in range(R)):
                                continue
                            cost = wcost(h, a, L, N * eh[m] + zh[p])
                            y = np.zeros(H, dtype=np.int64)
                            s = np.zeros(H, dtype=np.int64)
                            y[h], s[h] = N, 1
                            consider(cost, L, a + 1, Candidate(cost, True, m, p, L, N, a + 1, y, s))
        else:
            for N in range(1, D + 1):
                L = math.ceil(W * (v[m] + u_ra * (N - 1) / N) / N - 1e-9)
                if L > tau - 1:
                    continue
                for a in range(0, tau - L):
                    for h in range(H):
                        if any(e[m, r] > 0 and N * e[m, r] > wmin(h, r, a, L) + 1e-9 for r in range(R)):
                            continue
                        cost = N * wcost(h, a, L, eh[m])
                        y = np.zeros(H, dtype=np.int64)
                        y[h] = N
                        consider(cost, L, a + 1, Candidate(cost, True, m, -1, L, N, a + 1, y, np.zeros(H, np.int64)))
    for m in range(c.num_worker_types):  # spread
        for p in range(c.num_ps_types if arch_ps else 1):
            if arch_ps:
                it = v[m] + U[p] + comm[m]
                pairs = []
                for L in range(max(1, math.ceil(EK * it - 1e-9)), min(math.ceil(W * it - 1e-9), tau - 1) + 1):
                    N = math.ceil(W * it / L - 1e-9)
                    if N <= D and (not pairs or pairs[-1][1] != N):  # dedupe_L
                        pairs.append((L, N))
            else:
                pairs = []
                for N in range(2, D + 1):
                    L = math.ceil(W * (v[m] + (u_ra + comm[m]) * (N - 1) / N) / N - 1e-9)
                    if L <= tau - 1:
                        pairs.append((L, N))
            for L, N in pairs:
                for a in range(0, tau - L):
                    Om = np.array([wcost(h, a, L, eh[m]) for h in range(H)])
                    Ps = np.array([wcost(h, a, L, zh[p]) for h in range(H)]) if arch_ps else np.zeros(H)
                    cap = np.array(
                        [min(math.floor(wmin(h, r, a, L) / e[m, r] + 1e-9) for r in range(R) if e[m, r] > 0)
                         for h in range(H)]
                    )
                    cap = np.maximum(cap, 0)
                    order = sorted(range(H), key=lambda h: (Om[h], h))
                    if not arch_ps:
                        y = np.zeros(H, dtype=np.int64)
                        rem = N
                        for k in order:
                            y[k] = min(cap[k], rem)
                            rem -= y[k]
                        if rem > 0 or np.count_nonzero(y) == 1:
                            continue
                        cost = float((y * Om).sum())
                        consider(cost, L, a + 1, Candidate(cost, False, m, -1, L, N, a + 1, y, np.zeros(H, np.int64)))
                        continue
                    for n in order:
                        y = np.zeros(H, dtype=np.int64)
                        s_n = 0
                        rem = N
                        for k in order:
                            yh = min(cap[k], rem)
                            y[k] = yh
                            if k == n:
                                for g in range(0, yh + 1):
                                    sh = min(math.floor((wmin(n, r, a, L) - g * e[m, r]) / z[p, r] + 1e-9)
                                             for r in range(R) if z[p, r] > 0)
                                    if sh * B[p] >= (N - g) * b[m] - 1e-9:
                                        y[n] = g
                                        s_n = min(sh, math.ceil((N - g) * b[m] / B[p] - 1e-9))
                            rem -= y[k]
                        if rem > 0 or s_n < 1:
                            continue
                        cost = float((y * Om).sum() + s_n * Ps[n])
                        s = np.zeros(H, dtype=np.int64)
                        s[n] = s_n
                        consider(cost, L, a + 1, Candidate(cost, False, m, p, L, N, a + 1, y, s))
    return best[2]
