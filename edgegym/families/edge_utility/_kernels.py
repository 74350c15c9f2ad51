"""Compiled hot paths of the EdgeUtility simulator (Zhang et al., "Online Approximation Scheme for Scheduling
Heterogeneous Utility Jobs in Edge Computing", IEEE/ACM ToN 2023): utility functions on struct-of-arrays, the priority
disciplines' what-if simulation (the estimates behind the observation, OnDisc's Inc_j and the priority servers' planned
finish), O4A's PLAN (FILL over every density level plus the logarithmic rounding), the server bank (every priority
server's state as arrays, advanced, committed to and queried in one call per step: see the section below), O4A's
server helpers (flat job set, pick, density levels) and the O4A server bank (the same for the O4A servers: the last
section).

Inner loops call helpers with scalar arguments only: a Numba call that passes arrays costs reference-count
operations that, inside a loop, dwarf the work (measured ~20x on a heap of 80 items).

Every kernel is plain Python over numpy arrays, compiled with Numba's ``@njit(cache=True)`` when Numba is
installed (without it the same source runs as Python). Each performs the floating-point operations of the pure
implementation it replaces (:mod:`.disciplines`, :mod:`.utility_fn`) in the same order, so results are
identical; ``tests/speed/test_speed_edge_utility.py`` checks it on random instances.

Utility table (one row per job): ``code`` (index in ``FAMILIES``: linear, aon, sigmoid, constant, step),
``a, b, c``, ``inc`` (AoN inclusive), and for step functions ``bptr`` offsets into ``brk``/``val``.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.jit import njit

TOL = 1e-12  # utility_fn.TOL
INF = math.inf
# discipline codes of the what-if simulation
FIFO, SRPT, EDF, HPU, HRDF = 0, 1, 2, 3, 4
DISCIPLINE_CODES = {"fifo": FIFO, "srpt": SRPT, "edf": EDF, "hpu": HPU, "hrdf": HRDF}
LAZY = True  # hpu/hrdf what-if with lazily refreshed key bounds (False: one scan per event)
ORDERED = True  # fifo/edf/srpt what-if on a once-sorted linked list (False: the heap of _whatif_static)


def utility_table(utilities) -> tuple:
    """The utility functions of a job set as arrays ``(code, a, b, c, inc, bptr, brk, val)``."""
    n = len(utilities)
    code = np.array([u.code for u in utilities], dtype=np.int64)
    a = np.array([u.a for u in utilities], dtype=np.float64)
    b = np.array([u.b for u in utilities], dtype=np.float64)
    c = np.array([u.c for u in utilities], dtype=np.float64)
    inc = np.array([u.inclusive for u in utilities], dtype=np.bool_)
    bptr = np.zeros(n + 1, dtype=np.int64)
    brk: list[float] = []
    val: list[float] = []
    for i, u in enumerate(utilities):
        brk.extend(u.breaks)
        val.extend(u.values if u.family == "step" else (0.0,))  # every job holds len(breaks) + 1 values
        bptr[i + 1] = len(brk)
    # job i's step function: breaks brk[bptr[i]:bptr[i+1]], values val[bptr[i]+i : bptr[i+1]+i+1]
    return code, a, b, c, inc, bptr, np.array(brk, dtype=np.float64), np.array(val, dtype=np.float64)


@njit
def g_eval(j, t, code, a, b, c, inc, bptr, brk, val):
    """``utilities[j](t)`` (see :meth:`~.utility_fn.UtilityFn.__call__`)."""
    f = code[j]
    if f == 0:
        v = b[j] - a[j] * t
        return v if v > 0.0 else 0.0
    if f == 1:
        ok = t <= c[j] if inc[j] else t < c[j]
        return a[j] if ok else 0.0
    if f == 2:
        x = a[j] * (t - c[j])
        if x > 700.0:
            return 0.0
        return b[j] / (math.exp(x) + 1.0)
    if f == 3:
        return b[j]
    lo = bptr[j]
    hi = bptr[j + 1]
    k = lo
    while k < hi and brk[k] <= t:  # bisect_right
        k += 1
    return val[k + j]


@njit
def _prio(disc, t, rem, down, r, key, s, j, code, a, b, c, inc, bptr, brk, val):
    if disc == FIFO:
        return -r
    if disc == SRPT:
        return -rem
    if disc == EDF:
        return -key
    v = g_eval(j, t + rem / s + down - r, code, a, b, c, inc, bptr, brk, val)
    if disc == HPU:
        return v
    return v / max(rem, 1e-12)


@njit
def _gval(f, ga, gb, gc, ginc, t):
    """:func:`g_eval` of a utility of family ``f`` < 4 (not a step function) from its scalars ``a, b, c, inc``:
    the same operations. Kernels call it with scalars because an inner-loop call that passes arrays costs far
    more than the evaluation (reference counts; measured ~20x on a heap of 80 items)."""
    if f == 0:
        v = gb - ga * t
        return v if v > 0.0 else 0.0
    if f == 1:
        ok = t <= gc if ginc else t < gc
        return ga if ok else 0.0
    if f == 2:
        x = ga * (t - gc)
        if x > 700.0:
            return 0.0
        return gb / (math.exp(x) + 1.0)
    return gb


@njit
def _pkey(disc, t, rem, down, r, key, s, f, ga, gb, gc, ginc):
    """:func:`_prio` on scalars for a utility of family ``f`` < 4."""
    if disc == FIFO:
        return -r
    if disc == SRPT:
        return -rem
    if disc == EDF:
        return -key
    v = _gval(f, ga, gb, gc, ginc, t + rem / s + down - r)
    if disc == HPU:
        return v
    return v / max(rem, 1e-12)


@njit
def _lt(a0, a1, a2, b0, b1, b2):
    """``(a0, a1, a2) < (b0, b1, b2)`` lexicographically (the heaps' order)."""
    return a0 < b0 or (a0 == b0 and (a1 < b1 or (a1 == b1 and a2 < b2)))


@njit
def whatif_items(now, jid, st, rem_true, nreq, rid, rr, ra, rp, rdown, rkey):
    """The what-if items of a priority server: its jobs (``jid``; ``st`` rows ``[r, a, â, p, p̂, Δ̂↓, key]``,
    true remaining ``rem_true``) then, when ``nreq``, the request. Ready time ``a`` if ``a <= now`` else ``â``;
    remaining ``max(p̂ − (p − rem), 0)`` as ``_Job.est_rem``. Returns ``(ids, r, a, rem, down, key)``."""
    n0 = jid.size
    n = n0 + nreq
    ids = np.empty(n, np.int64)
    r = np.empty(n, np.float64)
    a = np.empty(n, np.float64)
    rem = np.empty(n, np.float64)
    down = np.empty(n, np.float64)
    key = np.empty(n, np.float64)
    for i in range(n0):
        ids[i] = jid[i]
        r[i] = st[i, 0]
        a[i] = st[i, 1] if st[i, 1] <= now else st[i, 2]
        e = st[i, 4] - (st[i, 3] - rem_true[i])
        rem[i] = 0.0 if e < 0.0 else e
        down[i] = st[i, 5]
        key[i] = st[i, 6]
    if nreq:
        ids[n0] = rid
        r[n0] = rr
        a[n0] = ra
        rem[n0] = rp
        down[n0] = rdown
        key[n0] = rkey
    return ids, r, a, rem, down, key


@njit
def whatif_finish(disc, now, s, jid, st, rem_true, nreq, rid, rr, ra, rp, rdown, rkey, stop, code, ua, ub, uc, inc,
                  bptr, brk, val):
    """:func:`whatif` on a server's items (see :func:`whatif_items`); returns ``(ids, order, finish)``.
    ``stop >= 0``: end the simulation when item ``stop`` completes (its finish is all that is wanted)."""
    ids, r, a, rem, down, key = whatif_items(now, jid, st, rem_true, nreq, rid, rr, ra, rp, rdown, rkey)
    order, finish = whatif(disc, now, s, ids, r, a, rem, down, key, stop, code, ua, ub, uc, inc, bptr, brk, val)
    return ids, order, finish


@njit
def _hless(h, x, y, hk, hr, hid):
    i = h[x]
    j = h[y]
    return hk[i] < hk[j] or (hk[i] == hk[j] and (hr[i] < hr[j] or (hr[i] == hr[j] and hid[i] < hid[j])))


@njit
def _hpush(h, n, i, hk, hr, hid):
    h[n] = i
    pos = n
    while pos > 0:
        par = (pos - 1) >> 1
        if _hless(h, pos, par, hk, hr, hid):
            h[pos], h[par] = h[par], h[pos]
            pos = par
        else:
            break
    return n + 1


@njit
def _hpop(h, n, hk, hr, hid):
    n -= 1
    h[0] = h[n]
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= n:
            break
        best = left
        if left + 1 < n and _hless(h, left + 1, left, hk, hr, hid):
            best = left + 1
        if _hless(h, best, pos, hk, hr, hid):
            h[pos], h[best] = h[best], h[pos]
            pos = best
        else:
            break
    return n


@njit
def _whatif_static(disc, now, s, ids, r, a, rem, down, key, stop):
    """:func:`whatif` for the disciplines whose key is fixed while a job waits (fifo −r, edf −(r + deadline),
    srpt −remaining: only the running job's remaining time changes, and that raises its key): a heap instead of
    a scan per event, O(n log n), the same event sequence and floating-point operations."""
    n = ids.size
    rem = rem.copy()
    hk = np.empty(n, np.float64)  # heap key: −k (min-heap of (−k, r, id) = max of (k, −r, −id))
    for i in range(n):
        hk[i] = r[i] if disc == FIFO else (rem[i] if disc == SRPT else key[i])
    hid = ids.astype(np.float64)
    by_a = np.argsort(a, kind="mergesort")
    h = np.empty(n, np.int64)
    hn = 0
    p = 0
    live = np.ones(n, np.bool_)
    fuzzy = np.empty(n, np.int64)  # pushed, live items with a > t (pushed within the 1e-15 tolerance)
    nf = 0
    finish = np.full(n, INF)
    order = np.empty(n, np.int64)
    nd = 0
    t = now
    while nd < n:
        lim = t + 1e-15
        while p < n and a[by_a[p]] <= lim:
            i = by_a[p]
            hn = _hpush(h, hn, i, hk, r, hid)
            if a[i] > t:
                fuzzy[nf] = i
                nf += 1
            p += 1
        if hn == 0:
            t = a[by_a[p]]
            continue
        best = h[0]
        nxt = a[by_a[p]] if p < n else INF
        m = 0
        for q in range(nf):
            i = fuzzy[q]
            if live[i] and a[i] > t:
                fuzzy[m] = i
                m += 1
                if a[i] < nxt:
                    nxt = a[i]
        nf = m
        tc = t + rem[best] / s
        if tc <= nxt:
            finish[best] = tc + down[best]
            order[nd] = best
            nd += 1
            live[best] = False
            hn = _hpop(h, hn, hk, r, hid)
            t = tc
            if best == stop:
                break
        else:
            rem[best] -= (nxt - t) * s
            if disc == SRPT:  # its key only grows: it stays on top
                hk[best] = rem[best]
            t = nxt
    return order[:nd], finish


@njit
def _whatif_ordered(disc, now, s, ids, r, a, rem, down, key, stop):
    """:func:`_whatif_static` without a heap: the items sorted once by ``(−key, r, id)`` in a linked list; the
    best ready item is the first pushed one in it (the heap's top: the order is total); completed items are
    unlinked. fifo and edf keys never change; srpt's only changing key is the running item's (its remaining time
    shrinks at a split), which then moves up past the not-yet-ready items it now beats (every item before it is
    one). Same event sequence and floating-point operations."""
    n = ids.size
    rem = rem.copy()
    hk = r if disc == FIFO else (key if disc == EDF else rem.copy())
    # stable sorts: by id, then r, then the key -> the order (hk, r, id)
    o = np.argsort(ids, kind="mergesort")
    o = o[np.argsort(r[o], kind="mergesort")]
    if disc != FIFO:
        o = o[np.argsort(hk[o], kind="mergesort")]
    nxt_in = np.empty(n + 1, np.int64)  # linked list over positions of o; n = end; head via nxt_in[n]
    prv_in = np.empty(n + 1, np.int64)
    for q in range(n + 1):
        nxt_in[q] = q + 1 if q < n else 0
        prv_in[q] = q - 1 if q > 0 else n
    if n == 0:
        nxt_in[n] = n
    posof = np.empty(n, np.int64)
    for q in range(n):
        posof[o[q]] = q
    pushed = np.zeros(n, np.bool_)
    by_a = np.argsort(a, kind="mergesort")
    hn = 0
    p = 0
    live = np.ones(n, np.bool_)
    fuzzy = np.empty(n, np.int64)
    nf = 0
    finish = np.full(n, INF)
    order = np.empty(n, np.int64)
    nd = 0
    t = now
    while nd < n:
        lim = t + 1e-15
        while p < n and a[by_a[p]] <= lim:
            i = by_a[p]
            pushed[i] = True
            hn += 1
            if a[i] > t:
                fuzzy[nf] = i
                nf += 1
            p += 1
        if hn == 0:
            t = a[by_a[p]]
            continue
        q = nxt_in[n]
        while not pushed[o[q]]:
            q = nxt_in[q]
        best = o[q]
        nxt = a[by_a[p]] if p < n else INF
        m = 0
        for qq in range(nf):
            i = fuzzy[qq]
            if live[i] and a[i] > t:
                fuzzy[m] = i
                m += 1
                if a[i] < nxt:
                    nxt = a[i]
        nf = m
        tc = t + rem[best] / s
        if tc <= nxt:
            finish[best] = tc + down[best]
            order[nd] = best
            nd += 1
            live[best] = False
            hn -= 1
            q = posof[best]
            nxt_in[prv_in[q]] = nxt_in[q]
            prv_in[nxt_in[q]] = prv_in[q]
            t = tc
            if best == stop:
                break
        else:
            rem[best] -= (nxt - t) * s
            if disc == SRPT:
                hk[best] = rem[best]
                q = posof[best]
                pp = prv_in[q]
                while pp != n and _lt(hk[best], r[best], ids[best], hk[o[pp]], r[o[pp]], ids[o[pp]]):
                    pp = prv_in[pp]
                if pp != prv_in[q]:  # unlink q, insert it after pp
                    nxt_in[prv_in[q]] = nxt_in[q]
                    prv_in[nxt_in[q]] = prv_in[q]
                    nq = nxt_in[pp]
                    nxt_in[pp] = q
                    prv_in[q] = pp
                    nxt_in[q] = nq
                    prv_in[nq] = q
            t = nxt
    return order[:nd], finish


@njit
def _sift_down(h, n, pos, hk, hr, hid):
    while True:
        left = 2 * pos + 1
        if left >= n:
            break
        best = left
        if left + 1 < n and _hless(h, left + 1, left, hk, hr, hid):
            best = left + 1
        if _hless(h, best, pos, hk, hr, hid):
            h[pos], h[best] = h[best], h[pos]
            pos = best
        else:
            break


@njit
def _whatif_lazy(disc, now, s, ids, r, a, rem, down, key, stop, code, ua, ub, uc, inc, bptr, brk, val):
    """:func:`whatif` for ``hpu``/``hrdf`` with lazily refreshed keys. A waiting job's key
    g(t + rem/s + Δ↓ − r) (÷ rem) never grows with t (g is non-increasing, rem is fixed while it waits, and every
    floating-point step is monotone), so a key computed earlier bounds the current one from above: the heap holds
    such bounds, and the top is refreshed until its current key beats the bounds of its children, which bound
    everyone else. The chosen job and every floating-point operation on it are those of the scan.

    The heap operations are written out inline and keys come from :func:`_pkey` on scalars (a call passing
    arrays costs more than the work here: see :func:`_gval`)."""
    n = ids.size
    rem = rem.copy()
    hk = np.empty(n, np.float64)  # −(key bound): min-heap of (−k, r, id) = max of (k, −r, −id)
    hid = ids.astype(np.float64)
    by_a = np.argsort(a, kind="mergesort")
    h = np.empty(n, np.int64)
    hn = 0
    p = 0
    live = np.ones(n, np.bool_)
    fuzzy = np.empty(n, np.int64)
    nf = 0
    finish = np.full(n, INF)
    order = np.empty(n, np.int64)
    nd = 0
    t = now
    while nd < n:
        lim = t + 1e-15
        while p < n and a[by_a[p]] <= lim:
            i = by_a[p]
            j = ids[i]
            f = code[j]
            if f == 4:
                hk[i] = -_prio(disc, t, rem[i], down[i], r[i], key[i], s, j, code, ua, ub, uc, inc, bptr, brk, val)
            else:
                hk[i] = -_pkey(disc, t, rem[i], down[i], r[i], key[i], s, f, ua[j], ub[j], uc[j], inc[j])
            h[hn] = i  # push
            pos = hn
            hn += 1
            while pos > 0:
                par = (pos - 1) >> 1
                x = h[pos]
                y = h[par]
                if _lt(hk[x], r[x], hid[x], hk[y], r[y], hid[y]):
                    h[pos] = y
                    h[par] = x
                    pos = par
                else:
                    break
            if a[i] > t:
                fuzzy[nf] = i
                nf += 1
            p += 1
        if hn == 0:
            t = a[by_a[p]]
            continue
        while True:  # refresh the top until it is the exact argmax
            i = h[0]
            j = ids[i]
            f = code[j]
            if f == 4:
                hk[i] = -_prio(disc, t, rem[i], down[i], r[i], key[i], s, j, code, ua, ub, uc, inc, bptr, brk, val)
            else:
                hk[i] = -_pkey(disc, t, rem[i], down[i], r[i], key[i], s, f, ua[j], ub[j], uc[j], inc[j])
            ok = True
            if 1 < hn:
                x = h[1]
                if _lt(hk[x], r[x], hid[x], hk[i], r[i], hid[i]):
                    ok = False
            if 2 < hn:
                x = h[2]
                if _lt(hk[x], r[x], hid[x], hk[i], r[i], hid[i]):
                    ok = False
            if ok:
                break
            pos = 0  # sift the top down
            while True:
                left = 2 * pos + 1
                if left >= hn:
                    break
                bi = left
                if left + 1 < hn:
                    x = h[left + 1]
                    y = h[left]
                    if _lt(hk[x], r[x], hid[x], hk[y], r[y], hid[y]):
                        bi = left + 1
                x = h[bi]
                y = h[pos]
                if _lt(hk[x], r[x], hid[x], hk[y], r[y], hid[y]):
                    h[pos] = x
                    h[bi] = y
                    pos = bi
                else:
                    break
        best = h[0]
        nxt = a[by_a[p]] if p < n else INF
        m = 0
        for q in range(nf):
            i = fuzzy[q]
            if live[i] and a[i] > t:
                fuzzy[m] = i
                m += 1
                if a[i] < nxt:
                    nxt = a[i]
        nf = m
        tc = t + rem[best] / s
        if tc <= nxt:
            finish[best] = tc + down[best]
            order[nd] = best
            nd += 1
            live[best] = False
            hn -= 1  # pop
            h[0] = h[hn]
            pos = 0
            while True:
                left = 2 * pos + 1
                if left >= hn:
                    break
                bi = left
                if left + 1 < hn:
                    x = h[left + 1]
                    y = h[left]
                    if _lt(hk[x], r[x], hid[x], hk[y], r[y], hid[y]):
                        bi = left + 1
                x = h[bi]
                y = h[pos]
                if _lt(hk[x], r[x], hid[x], hk[y], r[y], hid[y]):
                    h[pos] = x
                    h[bi] = y
                    pos = bi
                else:
                    break
            t = tc
            if best == stop:
                break
        else:
            rem[best] -= (nxt - t) * s
            hk[best] = -INF  # its remaining time changed: no bound, refreshed when next on top (it stays on top)
            t = nxt
    return order[:nd], finish


@njit
def whatif(disc, now, s, ids, r, a, rem, down, key, stop, code, ua, ub, uc, inc, bptr, brk, val):
    """:meth:`PriorityScheduler.whatif <.disciplines.PriorityScheduler.whatif>` on item arrays (ready time
    ``a``, remaining ``rem``, planned ``down``, EDF ``key``; ``ids`` index the utility table). Returns
    ``(order, finish)``: item indices in completion order and each item's finish time (completion + down).
    ``stop >= 0``: stop once item ``stop`` completes (later items keep ``finish = inf``, ``order`` is cut)."""
    if disc == FIFO or disc == SRPT or disc == EDF:
        if ORDERED:  # a compile-time constant: the branch not taken is not compiled
            return _whatif_ordered(disc, now, s, ids, r, a, rem, down, key, stop)
        return _whatif_static(disc, now, s, ids, r, a, rem, down, key, stop)
    if LAZY:
        return _whatif_lazy(disc, now, s, ids, r, a, rem, down, key, stop, code, ua, ub, uc, inc, bptr, brk, val)
    return _whatif_scan(disc, now, s, ids, r, a, rem, down, key, stop, code, ua, ub, uc, inc, bptr, brk, val)


@njit
def _whatif_scan(disc, now, s, ids, r, a, rem, down, key, stop, code, ua, ub, uc, inc, bptr, brk, val):
    """:func:`whatif` for ``hpu``/``hrdf`` by one scan of the live items per event (``LAZY = False``; the
    reference of the lazy heap)."""
    n = ids.size
    rem = rem.copy()
    live = np.arange(n)  # live items (swap-removed: the best key is unique, so scan order does not matter)
    finish = np.full(n, INF)
    order = np.empty(n, np.int64)
    nd = 0
    t = now
    left = n
    while left > 0:
        best = -1
        pos = -1
        bk = 0.0
        br = 0.0
        bid = 0
        m = INF
        nxt = INF
        lim = t + 1e-15
        for q in range(left):
            i = live[q]
            ai = a[i]
            if ai < m:
                m = ai
            if ai > t and ai < nxt:
                nxt = ai
            if ai > lim:
                continue
            k = _prio(disc, t, rem[i], down[i], r[i], key[i], s, ids[i], code, ua, ub, uc, inc, bptr, brk, val)
            if best < 0 or k > bk or (k == bk and (-r[i] > br or (-r[i] == br and -ids[i] > bid))):
                best = i
                pos = q
                bk = k
                br = -r[i]
                bid = -ids[i]
        if best < 0:
            t = m
            continue
        tc = t + rem[best] / s
        if tc <= nxt:
            finish[best] = tc + down[best]
            order[nd] = best
            nd += 1
            left -= 1
            live[pos] = live[left]
            t = tc
            if best == stop:
                break
        else:
            rem[best] -= (nxt - t) * s
            t = nxt
    return order[:nd], finish


@njit
def _fill(a, need, bs, be, lo, hi, fs, fe):
    """:func:`~.utility_fn.fill` on ``B = bs/be[lo:hi]``, writing the set into ``fs/fe``; returns ``(d, n)``."""
    t = a
    got = 0.0
    n = 0
    for k in range(lo, hi):
        s0 = bs[k]
        e0 = be[k]
        if e0 <= t:
            continue
        if s0 > t:
            take = min(s0 - t, need - got)
            fs[n] = t
            fe[n] = t + take
            n += 1
            got += take
            t += take
            if got >= need - TOL:
                return t, n
        t = max(t, e0)
    rest = need - got
    if rest > 0 or n == 0:
        fs[n] = t
        fe[n] = t + rest
        n += 1
        t += rest
    return t, n


@njit
def discretize(v, p):
    """:func:`~.utility_fn.discretize`: ``p·2^λ`` with ``λ = floor(log2(v/p))`` (0 if ``v <= 0``)."""
    if v <= 0.0:
        return 0.0
    lam = math.floor(math.log2(v / p))
    while p * 2.0 ** (lam + 1) <= v:
        lam += 1
    while p * 2.0**lam > v:
        lam -= 1
    return p * 2.0**lam


@njit
def plan_o4a(lu, lptr, ls, le, a, p, pd, down, r, j, alpha, code, ua, ub, uc, inc, bptr, brk, val):
    """PLAN (Alg. 1) over the flattened levels (``lu[γ]``; level γ's B is ``ls/le[lptr[γ]:lptr[γ+1]]``), as
    :func:`~.disciplines.plan_o4a`. Returns ``(γ, d, u, starts, ends)`` of the chosen level."""
    K = lu.size
    cap = lptr[K] + 2
    fs = np.empty(cap, np.float64)
    fe = np.empty(cap, np.float64)
    best_g = -1
    best_d = 0.0
    best_u = 0.0
    best_s = np.empty(0, np.float64)
    best_e = np.empty(0, np.float64)
    for gamma in range(K):
        d, n = _fill(a, pd, ls, le, lptr[gamma], lptr[gamma + 1], fs, fe)
        u = discretize(g_eval(j, d + down - r, code, ua, ub, uc, inc, bptr, brk, val), p) / p
        u_g = lu[gamma]
        if gamma == 0:
            feasible = True
        elif u_g == 0.0:
            feasible = u > 0.0
        else:
            feasible = u > alpha * u_g
        if feasible and (best_g < 0 or d < best_d - TOL):
            best_g = gamma
            best_d = d
            best_u = u
            best_s = fs[:n].copy()
            best_e = fe[:n].copy()
    return best_g, best_d, best_u, best_s, best_e


@njit
def plan_o4a_d(lu, lptr, ls, le, a, p, pd, down, r, j, alpha, code, ua, ub, uc, inc, bptr, brk, val):
    """:func:`plan_o4a`'s tentative completion d† alone (the same loop, no copy of the executable set)."""
    K = lu.size
    cap = lptr[K] + 2
    fs = np.empty(cap, np.float64)
    fe = np.empty(cap, np.float64)
    best_g = -1
    best_d = 0.0
    for gamma in range(K):
        d, n = _fill(a, pd, ls, le, lptr[gamma], lptr[gamma + 1], fs, fe)
        u = discretize(g_eval(j, d + down - r, code, ua, ub, uc, inc, bptr, brk, val), p) / p
        u_g = lu[gamma]
        if gamma == 0:
            feasible = True
        elif u_g == 0.0:
            feasible = u > 0.0
        else:
            feasible = u > alpha * u_g
        if feasible and (best_g < 0 or d < best_d - TOL):
            best_g = gamma
            best_d = d
    return best_d


@njit
def plan_o4a_d_many(ks, busy, lu, luo, lptr, lpo, ls, le, lso, a, p, pd, down, r, j, alpha, out, code, ua, ub, uc,
                    inc, bptr, brk, val):
    """O4A's estimate f† on several servers in one call: for each ``ks[q]`` (request values ``a/p/pd/down``
    indexed by server), ``a + pd + down`` on an idle server, else :func:`plan_o4a_d` on its flattened levels
    (server ``q``'s ``lu[luo[q]:luo[q+1]]``, ``lptr[lpo[q]:lpo[q+1]]`` into ``ls/le[lso[q]:lso[q+1]]``) plus
    ``down``, into ``out[ks[q]]``."""
    for q in range(ks.size):
        k = ks[q]
        if not busy[q]:
            out[k] = a[k] + pd[k] + down[k]
            continue
        d = plan_o4a_d(lu[luo[q] : luo[q + 1]], lptr[lpo[q] : lpo[q + 1]], ls[lso[q] : lso[q + 1]],
                       le[lso[q] : lso[q + 1]], a[k], p[k], pd[k], down[k], r, j, alpha, code, ua, ub, uc, inc, bptr,
                       brk, val)
        out[k] = d + down[k]


@njit
def o4a_store_levels(k, lu, lptr, ls, le, nk, blu, blptr, bls, ble):
    """Copy server ``k``'s flattened levels (:func:`o4a_levels`) into row ``k`` of the level buffers read by
    :func:`plan_o4a_d_rows` (``nk[k]`` = number of levels; the caller made the rows wide enough). Only copies."""
    K = lu.size
    nk[k] = K
    for g in range(K):
        blu[k, g] = lu[g]
    for g in range(K + 1):
        blptr[k, g] = lptr[g]
    for m in range(lptr[K]):
        bls[k, m] = ls[m]
        ble[k, m] = le[m]


@njit
def plan_o4a_d_rows(ks, nk, blu, blptr, bls, ble, r, up, p, down, pdm, pdd, j, alpha, out, code, ua, ub, uc, inc,
                    bptr, brk, val):
    """:func:`plan_o4a_d_many` from per-server level buffers (row ``k``: ``nk[k]`` levels, densities ``blu[k]``,
    level γ's B in ``bls/ble[k, blptr[k, γ]:blptr[k, γ + 1]]``; ``nk[k] == 0``: an idle server) and the request's
    planned values per server (ready time ``r + up[k]``, ``p†`` = ``pdm * p[k] / pdd``, as the simulator's vector
    expression): the same floating-point operations as :func:`plan_o4a_d` (FILL's tentative completion alone, its
    set not written), with scalar-only inner loops. Writes ``f† = d† + down[k]`` into ``out[k]``."""
    f = code[j]
    ga = ua[j]
    gb = ub[j]
    gc = uc[j]
    gi = inc[j]
    for q in range(ks.size):
        k = ks[q]
        ak = r + up[k]
        pk = p[k]
        need = pdm * pk / pdd
        dk = down[k]
        K = nk[k]
        if K == 0:
            out[k] = ak + need + dk
            continue
        best_g = -1
        best_d = 0.0
        for gamma in range(K):
            t = ak  # _fill(a, need, B_gamma): only d
            got = 0.0
            n = 0
            full = False
            for m in range(blptr[k, gamma], blptr[k, gamma + 1]):
                e0 = ble[k, m]
                if e0 <= t:
                    continue
                s0 = bls[k, m]
                if s0 > t:
                    take = min(s0 - t, need - got)
                    n += 1
                    got += take
                    t += take
                    if got >= need - TOL:
                        full = True
                        break
                t = max(t, e0)
            if not full:
                rest = need - got
                if rest > 0 or n == 0:
                    t += rest
            x = t + dk - r
            v = g_eval(j, x, code, ua, ub, uc, inc, bptr, brk, val) if f == 4 else _gval(f, ga, gb, gc, gi, x)
            u = discretize(v, pk) / pk
            u_g = blu[k, gamma]
            if gamma == 0:
                feasible = True
            elif u_g == 0.0:
                feasible = u > 0.0
            else:
                feasible = u > alpha * u_g
            if feasible and (best_g < 0 or t < best_d - TOL):
                best_g = gamma
                best_d = t
        out[k] = best_d + dk


@njit
def o4a_flat_update(i, a, u, d, ids, ptr, S, E, r, down, qa, qu, qd, qid, qS, qE, qr, qdown):
    """An O4A server's flat job set after removing job ``i`` (``i >= 0``) or appending the job ``q*`` (``i < 0``),
    with its breakpoints (sorted distinct ready times and set bounds). Only copies: identical values."""
    n = a.size
    if i >= 0:
        lo = ptr[i]
        hi = ptr[i + 1]
        w = hi - lo
        m = n - 1
        na = np.empty(m, np.float64)
        nu = np.empty(m, np.float64)
        nd = np.empty(m, np.float64)
        nids = np.empty(m, np.int64)
        nr = np.empty(m, np.float64)
        ndown = np.empty(m, np.float64)
        nptr = np.empty(m + 1, np.int64)
        for k in range(m):
            src = k if k < i else k + 1
            na[k] = a[src]
            nu[k] = u[src]
            nd[k] = d[src]
            nids[k] = ids[src]
            nr[k] = r[src]
            ndown[k] = down[src]
        for k in range(m + 1):
            nptr[k] = ptr[k] if k <= i else ptr[k + 1] - w
        tot = ptr[n] - w
        nS = np.empty(tot, np.float64)
        nE = np.empty(tot, np.float64)
        for k in range(tot):
            src = k if k < lo else k + w
            nS[k] = S[src]
            nE[k] = E[src]
    else:
        m = n + 1
        w = qS.size
        na = np.empty(m, np.float64)
        nu = np.empty(m, np.float64)
        nd = np.empty(m, np.float64)
        nids = np.empty(m, np.int64)
        nr = np.empty(m, np.float64)
        ndown = np.empty(m, np.float64)
        nptr = np.empty(m + 1, np.int64)
        na[:n] = a
        nu[:n] = u
        nd[:n] = d
        nids[:n] = ids
        nr[:n] = r
        ndown[:n] = down
        nptr[: n + 1] = ptr
        na[n] = qa
        nu[n] = qu
        nd[n] = qd
        nids[n] = qid
        nr[n] = qr
        ndown[n] = qdown
        nptr[m] = ptr[n] + w
        tot = ptr[n] + w
        nS = np.empty(tot, np.float64)
        nE = np.empty(tot, np.float64)
        nS[: ptr[n]] = S[: ptr[n]]
        nE[: ptr[n]] = E[: ptr[n]]
        nS[ptr[n] :] = qS
        nE[ptr[n] :] = qE
    allb = np.empty(na.size + 2 * nS.size, np.float64)
    allb[: na.size] = na
    allb[na.size : na.size + nS.size] = nS
    allb[na.size + nS.size :] = nE
    return na, nu, nd, nids, nptr, nS, nE, nr, ndown, np.unique(allb)


@njit
def o4a_levels(u, ptr, S, E):
    """:meth:`O4AScheduler.levels <.disciplines.O4AScheduler.levels>` flattened from the flat job set (density
    ``u``; job i's executable set ``S/E[ptr[i]:ptr[i+1]]``): ``(lu, lptr, ls, le)`` with ``lu[0] = −inf``,
    ``lu[γ]`` the γ-th smallest distinct density, and level γ's ``B_γ`` (the union of the sets of the jobs with a
    density above ``lu[γ]``) in ``ls/le[lptr[γ]:lptr[γ+1]]``. The union is the canonical one of ``_merge``
    (intervals sorted by start, empty ones dropped, touching or overlapping ones joined): only copies, no
    arithmetic, so identical values."""
    n = u.size
    us = np.unique(u)
    K = us.size
    lu = np.empty(K + 1, np.float64)
    lu[0] = -INF
    for g in range(1, K + 1):
        lu[g] = us[g - 1]
    total = ptr[n]
    iu = np.empty(total, np.float64)
    for i in range(n):
        for q in range(ptr[i], ptr[i + 1]):
            iu[q] = u[i]
    by_s = np.argsort(S, kind="mergesort")
    lptr = np.zeros(K + 2, np.int64)
    ls = np.empty((K + 1) * total + 1, np.float64)
    le = np.empty((K + 1) * total + 1, np.float64)
    m = 0
    for g in range(K + 1):
        lptr[g] = m
        first = m
        if g < K:
            ug = us[g]
            for q in by_s:
                if iu[q] < ug:
                    continue
                s0 = S[q]
                e0 = E[q]
                if e0 <= s0:
                    continue
                if m > first and s0 <= le[m - 1]:
                    if e0 > le[m - 1]:
                        le[m - 1] = e0
                else:
                    ls[m] = s0
                    le[m] = e0
                    m += 1
    lptr[K + 1] = m
    return lu, lptr, ls[:m].copy(), le[:m].copy()


@njit
def o4a_pick(t, s, fb, a, u, d, ids, ptr, S, E, r, down, rem, code, ua, ub, uc, inc, bptr, brk, val):
    """:meth:`O4AScheduler._pick <.disciplines.O4AScheduler._pick>` on the flat job set (list order): the
    densest ready job inside its executable set (first in list order on ties), else the fallback ``fb``
    (0 density: largest ``(u, −d†, −id)``; 1 none; 2 potential_density: largest
    ``(g(t + rem/s + Δ↓ − r)/max(rem, 1e-12), −d†, −id)``). Returns the job's list index or -1."""
    n = a.size
    best = -1
    bu = 0.0
    for i in range(n):
        if a[i] > t:
            continue
        lo = ptr[i]
        hi = ptr[i + 1]
        while lo < hi:  # bisect_right(starts, t)
            mid = (lo + hi) >> 1
            if t < S[mid]:
                hi = mid
            else:
                lo = mid + 1
        k = lo - 1
        if k >= ptr[i] and t < E[k] and (best < 0 or u[i] > bu):
            best = i
            bu = u[i]
    if best >= 0 or fb == 1:
        return best
    b0 = 0.0
    b1 = 0.0
    b2 = 0
    for i in range(n):
        if a[i] > t:
            continue
        if fb == 0:
            k0 = u[i]
        else:
            j = ids[i]
            x = t + rem[i] / s + down[i] - r[i]
            f = code[j]
            v = g_eval(j, x, code, ua, ub, uc, inc, bptr, brk, val) if f == 4 else _gval(f, ua[j], ub[j], uc[j],
                                                                                          inc[j], x)
            k0 = v / max(rem[i], 1e-12)
        k1 = -d[i]
        k2 = -ids[i]
        if best < 0 or _lt(b0, b1, b2, k0, k1, k2):
            best = i
            b0 = k0
            b1 = k1
            b2 = k2
    return best


@njit
def pick(disc, t, s, ids, st, rem, code, ua, ub, uc, inc, bptr, brk, val):
    """:meth:`PriorityScheduler._pick <.disciplines.PriorityScheduler._pick>`: the ready job (``st`` rows
    ``[a, r, Δ↓, key]``, true remaining ``rem``) with the largest ``(key, −r, −id)`` at ``t``; -1 if none."""
    best = -1
    bk = 0.0
    br = 0.0
    bid = 0
    for i in range(ids.size):
        if st[i, 0] > t:
            continue
        k = _prio(disc, t, rem[i], st[i, 2], st[i, 1], st[i, 3], s, ids[i], code, ua, ub, uc, inc, bptr, brk, val)
        if best < 0 or k > bk or (k == bk and (-st[i, 1] > br or (-st[i, 1] == br and -ids[i] > bid))):
            best = i
            bk = k
            br = -st[i, 1]
            bid = -ids[i]
    return best


# ------------------------------------------------------------------------------------------ server bank
# The priority-discipline servers of one simulator as struct-of-arrays (``simulator._Bank``): one kernel call per
# step advances every due server, one evaluates the estimates (or OnDisc's increments) of every queried server.
# Each server performs the floating-point operations of ``disciplines._SingleProcessor.advance`` /
# ``PriorityScheduler`` in the same order (the pure objects are the test oracle).
#
# jf (J, 9) per job, set at commit: release r, true ready a, planned ready â, true p, planned p̂, true remaining,
#   true Δ↓, planned Δ̂↓, EDF key r + soft deadline (set for every job at construction)
# si (M, 5) per server: queue length n, running job (-1: none), ran since picked (0/1), preemptions, discipline
# sf (M, 3) per server: clock t, busy seconds, scheduled next event (inf: none)
# slots (M, cap): server k's unfinished jobs are slots[k, :n] (unordered: every choice is a unique argmax)
JR, JA, JAP, JPT, JPP, JREM, JDN, JDP, JKEY = 0, 1, 2, 3, 4, 5, 6, 7, 8
SN, SRUN, SRAN, SPRE, SDISC = 0, 1, 2, 3, 4
ST, SBUSY, SEV = 0, 1, 2


@njit
def bank_pick(k, t, s, slots, si, jf, code, ua, ub, uc, inc, bptr, brk, val):
    """``PriorityScheduler._pick`` of server ``k`` at ``t``: the ready job with the largest ``(key, −r, −id)``."""
    disc = si[k, SDISC]
    best = -1
    bk = 0.0
    br = 0.0
    bid = 0
    for q in range(si[k, SN]):
        j = slots[k, q]
        if jf[j, JA] > t:
            continue
        f = code[j]
        if f == 4 and disc >= HPU:
            kk = _prio(disc, t, jf[j, JREM], jf[j, JDN], jf[j, JR], jf[j, JKEY], s, j, code, ua, ub, uc, inc, bptr,
                       brk, val)
        else:
            kk = _pkey(disc, t, jf[j, JREM], jf[j, JDN], jf[j, JR], jf[j, JKEY], s, f, ua[j], ub[j], uc[j], inc[j])
        rj = -jf[j, JR]
        if best < 0 or kk > bk or (kk == bk and (rj > br or (rj == br and -j > bid))):
            best = j
            bk = kk
            br = rj
            bid = -j
    return best


@njit
def _bank_next_bp(k, t, slots, si, jf):
    nb = INF
    for q in range(si[k, SN]):
        a = jf[slots[k, q], JA]
        if a > t and a < nb:
            nb = a
    return nb


@njit
def bank_next_event(k, s, slots, si, sf, jf, code, ua, ub, uc, inc, bptr, brk, val):
    """``_SingleProcessor.next_event`` of server ``k``."""
    t = sf[k, ST]
    nb = _bank_next_bp(k, t, slots, si, jf)
    q = bank_pick(k, t, s, slots, si, jf, code, ua, ub, uc, inc, bptr, brk, val)
    if q < 0:
        return nb
    tc = t + jf[q, JREM] / s
    return tc if tc < nb else nb


@njit
def bank_sync(k, t1, s, slots, si, sf, jf, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val):
    """``_SingleProcessor.advance(t1)`` of server ``k``; completions appended to ``oj/oc/os`` (job, C, server)
    from index ``no``; returns the new count."""
    t = sf[k, ST]
    if t1 < t:
        return no
    while True:
        q = bank_pick(k, t, s, slots, si, jf, code, ua, ub, uc, inc, bptr, brk, val)
        run = si[k, SRUN]
        if q != run:
            if run >= 0 and jf[run, JREM] > 0 and si[k, SRAN] != 0:
                si[k, SPRE] += 1
            si[k, SRUN] = q
            si[k, SRAN] = 0
        nb = _bank_next_bp(k, t, slots, si, jf)
        if q < 0:
            if nb > t1:
                break
            t = nb
            continue
        tc = t + jf[q, JREM] / s
        stop = t1 if t1 < nb else nb
        if tc <= stop:
            sf[k, SBUSY] += tc - t
            jf[q, JREM] = 0.0
            n = si[k, SN]
            for p in range(n):
                if slots[k, p] == q:
                    slots[k, p] = slots[k, n - 1]
                    break
            si[k, SN] = n - 1
            si[k, SRUN] = -1
            oj[no] = q
            oc[no] = tc
            os[no] = k
            no += 1
            t = tc
            continue
        jf[q, JREM] -= (stop - t) * s
        if stop > t:
            si[k, SRAN] = 1
        sf[k, SBUSY] += stop - t
        t = stop
        if t >= t1:
            break
    if t1 > sf[k, ST]:
        sf[k, ST] = t1
    return no


@njit
def bank_advance_due(t, ks, s, slots, si, sf, jf, oj, oc, os, code, ua, ub, uc, inc, bptr, brk, val):
    """``UtilitySimulator._advance_servers(t)`` on the bank: every server ``k`` of ``ks`` whose scheduled event is
    at or before ``t`` is synced to ``t`` and its next event rescheduled. Returns the number of completions."""
    no = 0
    for k in ks:
        if sf[k, SEV] <= t:
            no = bank_sync(k, t, s, slots, si, sf, jf, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val)
            sf[k, SEV] = bank_next_event(k, s, slots, si, sf, jf, code, ua, ub, uc, inc, bptr, brk, val)
    return no


@njit
def bank_next_due(ks, sf):
    """The earliest scheduled event of the bank's servers (inf if none)."""
    m = INF
    for k in ks:
        if sf[k, SEV] < m:
            m = sf[k, SEV]
    return m


@njit
def bank_commit(k, j, dispatch, up_true, up_plan, p_true, p_plan, down_true, down_plan, s, slots, si, sf, jf, oj, oc,
                os, code, ua, ub, uc, inc, bptr, brk, val):
    """``UtilitySimulator._commit`` on the bank: sync server ``k`` to ``dispatch`` (completions returned as
    orphans), admit job ``j`` (``slots`` must have room), reschedule the server's next event."""
    no = bank_sync(k, dispatch, s, slots, si, sf, jf, oj, oc, os, 0, code, ua, ub, uc, inc, bptr, brk, val)
    jf[j, JA] = dispatch + up_true
    jf[j, JAP] = dispatch + up_plan
    jf[j, JPT] = p_true
    jf[j, JPP] = p_plan
    jf[j, JREM] = p_true
    jf[j, JDN] = down_true
    jf[j, JDP] = down_plan
    n = si[k, SN]
    slots[k, n] = j
    si[k, SN] = n + 1
    sf[k, SEV] = bank_next_event(k, s, slots, si, sf, jf, code, ua, ub, uc, inc, bptr, brk, val)
    return no


@njit
def _bank_items(k, now, nreq, rid, rr, ra, rp, rdown, rkey, slots, si, jf):
    """:func:`whatif_items` of bank server ``k`` (its jobs, then the request when ``nreq``)."""
    n0 = si[k, SN]
    n = n0 + nreq
    ids = np.empty(n, np.int64)
    r = np.empty(n, np.float64)
    a = np.empty(n, np.float64)
    rem = np.empty(n, np.float64)
    down = np.empty(n, np.float64)
    key = np.empty(n, np.float64)
    for i in range(n0):
        j = slots[k, i]
        ids[i] = j
        r[i] = jf[j, JR]
        a[i] = jf[j, JA] if jf[j, JA] <= now else jf[j, JAP]
        e = jf[j, JPP] - (jf[j, JPT] - jf[j, JREM])
        rem[i] = 0.0 if e < 0.0 else e
        down[i] = jf[j, JDP]
        key[i] = jf[j, JKEY]
    if nreq:
        ids[n0] = rid
        r[n0] = rr
        a[n0] = ra
        rem[n0] = rp
        down[n0] = rdown
        key[n0] = rkey
    return ids, r, a, rem, down, key


@njit
def bank_query(mode, ks, now, job, rr, rkey, base, ap, pp, dp, out, s, slots, si, sf, jf, oj, oc, os, code, ua, ub,
               uc, inc, bptr, brk, val):
    """For every server ``k`` of ``ks``: ``mode`` 0 the planned finish of ``job`` if committed now
    (``UtilitySimulator.estimates``: ``base[k]`` on an empty server), 1 OnDisc's increment of the planned total
    response time (``UtilitySimulator.jrt_increase``), into ``out[k]``. A busy server is first synced to ``now``
    (completions returned as orphans). ``ap/pp/dp``: the request's planned ready time, p̂ and Δ̂↓ per server."""
    no = 0
    for k in ks:
        if si[k, SN] == 0:
            if mode == 0:
                out[k] = base[k]
            else:
                out[k] = ap[k] + pp[k] / s + dp[k] - rr
            continue
        no = bank_sync(k, now, s, slots, si, sf, jf, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val)
        if si[k, SN] == 0:
            v = ap[k] + pp[k] / s + dp[k]
            out[k] = v if mode == 0 else v - rr
            continue
        t = sf[k, ST]
        n = si[k, SN]
        disc = si[k, SDISC]
        ids, r, a, rem, down, key = _bank_items(k, t, 1, job, rr, ap[k], pp[k], dp[k], rkey, slots, si, jf)
        if mode == 0:
            _, finish = whatif(disc, t, s, ids, r, a, rem, down, key, n, code, ua, ub, uc, inc, bptr, brk, val)
            out[k] = finish[n]
            continue
        order, finish = whatif(disc, t, s, ids, r, a, rem, down, key, -1, code, ua, ub, uc, inc, bptr, brk, val)
        acc1 = 0.0
        for i in order:
            acc1 += finish[i] - r[i]
        ids, r, a, rem, down, key = _bank_items(k, t, 0, job, rr, 0.0, 0.0, 0.0, rkey, slots, si, jf)
        order, finish = whatif(disc, t, s, ids, r, a, rem, down, key, -1, code, ua, ub, uc, inc, bptr, brk, val)
        acc0 = 0.0
        for i in order:
            acc0 += finish[i] - r[i]
        out[k] = acc1 - acc0
    return no


# ------------------------------------------------------------------------------------------ O4A server bank
# The O4A servers of one simulator as struct-of-arrays (``simulator._O4ABank``), as the priority bank above: each
# operation (advance the due servers, commit a job with PLAN, every server's estimate) is one kernel call. Each
# server performs the floating-point operations of ``disciplines.O4AScheduler`` (``_SingleProcessor.advance``, the
# compiled ``_pick``, ``plan``) in the same order and keeps its jobs in admission order (removal keeps the order:
# O4A's pick takes the first of equally dense jobs).
#
# jf (J, 6) per job, set at commit: true ready a, true remaining, density u, tentative completion d†, release r,
#   true Δ↓;  jp (J, 2): the job's executable set in the pool ``PS/PE[jp[j, 0] : jp[j, 0] + jp[j, 1]]``
# si (M, 6) per server: queue length n, running job (-1: none), ran since picked (0/1), preemptions, number of set
#   intervals of its jobs, levels stale (0/1);  sf (M, 3): clock t, busy seconds, next event (as the bank's)
# slots (M, cap): server k's unfinished jobs in admission order are slots[k, :n]
# levels (PLAN's B_γ, :func:`o4a_levels`) per server row: nk (levels), blu, blptr, bls, ble (as plan_o4a_d_rows)
OA, OREM, OU, OD, OR, ODN = 0, 1, 2, 3, 4, 5
ON, ORUN, ORAN, OPRE, ONSET, OSTALE = 0, 1, 2, 3, 4, 5


@njit
def o4b_pick(k, t, s, fb, slots, si, jf, jp, PS, PE, code, ua, ub, uc, inc, bptr, brk, val):
    """:func:`o4a_pick` of server ``k`` at ``t``: the job id, or -1."""
    n = si[k, ON]
    best = -1
    bu = 0.0
    for q in range(n):
        j = slots[k, q]
        if jf[j, OA] > t:
            continue
        lo0 = jp[j, 0]
        lo = lo0
        hi = lo0 + jp[j, 1]
        while lo < hi:  # bisect_right(starts, t)
            mid = (lo + hi) >> 1
            if t < PS[mid]:
                hi = mid
            else:
                lo = mid + 1
        m = lo - 1
        if m >= lo0 and t < PE[m] and (best < 0 or jf[j, OU] > bu):
            best = j
            bu = jf[j, OU]
    if best >= 0 or fb == 1:
        return best
    b0 = 0.0
    b1 = 0.0
    b2 = 0
    for q in range(n):
        j = slots[k, q]
        if jf[j, OA] > t:
            continue
        if fb == 0:
            k0 = jf[j, OU]
        else:
            rem = jf[j, OREM]
            x = t + rem / s + jf[j, ODN] - jf[j, OR]
            f = code[j]
            v = g_eval(j, x, code, ua, ub, uc, inc, bptr, brk, val) if f == 4 else _gval(f, ua[j], ub[j], uc[j],
                                                                                          inc[j], x)
            k0 = v / max(rem, 1e-12)
        k1 = -jf[j, OD]
        k2 = -j
        if best < 0 or _lt(b0, b1, b2, k0, k1, k2):
            best = j
            b0 = k0
            b1 = k1
            b2 = k2
    return best


@njit
def _o4b_next_bp(k, t, slots, si, jf, jp, PS, PE):
    """The smallest breakpoint (ready time or set bound of a job of server ``k``) after ``t`` (inf if none)."""
    nb = INF
    for q in range(si[k, ON]):
        j = slots[k, q]
        x = jf[j, OA]
        if x > t and x < nb:
            nb = x
        for m in range(jp[j, 0], jp[j, 0] + jp[j, 1]):
            x = PS[m]
            if x > t and x < nb:
                nb = x
            x = PE[m]
            if x > t and x < nb:
                nb = x
    return nb


@njit
def o4b_next_event(k, s, fb, slots, si, sf, jf, jp, PS, PE, code, ua, ub, uc, inc, bptr, brk, val):
    """``_SingleProcessor.next_event`` of O4A server ``k``."""
    t = sf[k, ST]
    nb = _o4b_next_bp(k, t, slots, si, jf, jp, PS, PE)
    q = o4b_pick(k, t, s, fb, slots, si, jf, jp, PS, PE, code, ua, ub, uc, inc, bptr, brk, val)
    if q < 0:
        return nb
    tc = t + jf[q, OREM] / s
    return tc if tc < nb else nb


@njit
def o4b_sync(k, t1, s, fb, slots, si, sf, jf, jp, PS, PE, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val):
    """``_SingleProcessor.advance(t1)`` of O4A server ``k``; completions appended to ``oj/oc/os`` from index
    ``no``; returns the new count."""
    t = sf[k, ST]
    if t1 < t:
        return no
    while True:
        q = o4b_pick(k, t, s, fb, slots, si, jf, jp, PS, PE, code, ua, ub, uc, inc, bptr, brk, val)
        run = si[k, ORUN]
        if q != run:
            if run >= 0 and jf[run, OREM] > 0 and si[k, ORAN] != 0:
                si[k, OPRE] += 1
            si[k, ORUN] = q
            si[k, ORAN] = 0
        nb = _o4b_next_bp(k, t, slots, si, jf, jp, PS, PE)
        if q < 0:
            if nb > t1:
                break
            t = nb
            continue
        tc = t + jf[q, OREM] / s
        stop = t1 if t1 < nb else nb
        if tc <= stop:
            sf[k, SBUSY] += tc - t
            jf[q, OREM] = 0.0
            n = si[k, ON]
            p = 0
            while slots[k, p] != q:
                p += 1
            for p2 in range(p, n - 1):  # del jobs[p]: the order is kept
                slots[k, p2] = slots[k, p2 + 1]
            si[k, ON] = n - 1
            si[k, ONSET] -= jp[q, 1]
            si[k, OSTALE] = 1
            si[k, ORUN] = -1
            oj[no] = q
            oc[no] = tc
            os[no] = k
            no += 1
            t = tc
            continue
        jf[q, OREM] -= (stop - t) * s
        if stop > t:
            si[k, ORAN] = 1
        sf[k, SBUSY] += stop - t
        t = stop
        if t >= t1:
            break
    if t1 > sf[k, ST]:
        sf[k, ST] = t1
    return no


@njit
def o4b_advance_due(t, ks, s, fb, slots, si, sf, jf, jp, PS, PE, oj, oc, os, code, ua, ub, uc, inc, bptr, brk, val,
                    no=0):
    """:func:`bank_advance_due` for the O4A bank, its completions appended to ``oj/oc/os`` from index ``no``.
    Returns the new number of completions."""
    for k in ks:
        if sf[k, SEV] <= t:
            no = o4b_sync(k, t, s, fb, slots, si, sf, jf, jp, PS, PE, oj, oc, os, no, code, ua, ub, uc, inc, bptr,
                          brk, val)
            sf[k, SEV] = o4b_next_event(k, s, fb, slots, si, sf, jf, jp, PS, PE, code, ua, ub, uc, inc, bptr, brk,
                                        val)
    return no


@njit
def _o4b_levels(k, slots, si, jf, jp, PS, PE):
    """:func:`o4a_levels` of O4A server ``k``'s current job set (in admission order)."""
    n = si[k, ON]
    u = np.empty(n, np.float64)
    ptr = np.empty(n + 1, np.int64)
    S = np.empty(si[k, ONSET], np.float64)
    E = np.empty(si[k, ONSET], np.float64)
    ptr[0] = 0
    m = 0
    for q in range(n):
        j = slots[k, q]
        u[q] = jf[j, OU]
        for x in range(jp[j, 0], jp[j, 0] + jp[j, 1]):
            S[m] = PS[x]
            E[m] = PE[x]
            m += 1
        ptr[q + 1] = m
    return o4a_levels(u, ptr, S, E)


@njit
def _o4b_refresh(k, slots, si, jf, jp, PS, PE, nk, blu, blptr, bls, ble):
    """Bring server ``k``'s level row up to date; returns ``(0, 0)``, or the row widths it needs (nothing stored)."""
    if si[k, ON] == 0:
        nk[k] = 0
        si[k, OSTALE] = 0
        return 0, 0
    if si[k, OSTALE] == 0:
        return 0, 0
    lu, lptr, ls, le = _o4b_levels(k, slots, si, jf, jp, PS, PE)
    if lu.size > blu.shape[1] or ls.size > bls.shape[1]:
        return lu.size, ls.size
    o4a_store_levels(k, lu, lptr, ls, le, nk, blu, blptr, bls, ble)
    si[k, OSTALE] = 0
    return 0, 0


@njit
def o4b_estimates(ks, r, up, p, down, pdm, pdd, j, alpha, out, slots, si, sf, jf, jp, PS, PE, nk, blu, blptr, bls,
                  ble, code, ua, ub, uc, inc, bptr, brk, val):
    """O4A's estimate f† of job ``j`` on every server of ``ks`` (:func:`plan_o4a_d_rows` after refreshing the stale
    level rows). Returns ``(0, 0)``, or the row widths a level row needs (no estimate written: widen, call again)."""
    for k in ks:
        nkk, nbb = _o4b_refresh(k, slots, si, jf, jp, PS, PE, nk, blu, blptr, bls, ble)
        if nkk > 0:
            return nkk, nbb
    plan_o4a_d_rows(ks, nk, blu, blptr, bls, ble, r, up, p, down, pdm, pdd, j, alpha, out, code, ua, ub, uc, inc, bptr,
                    brk, val)
    return 0, 0


@njit
def o4b_commit(k, j, dispatch, rel, up_t, up_p, p_t, p_p, down_t, down_p, s, fb, pdm, pdd, alpha, slots, si, sf, jf,
               jp, PS, PE, used, nk, blu, blptr, bls, ble, oj, oc, os, code, ua, ub, uc, inc, bptr, brk, val):
    """``UtilitySimulator._commit`` on the O4A bank: sync server ``k`` to ``dispatch`` (completions returned as
    orphans), PLAN job ``j`` (:meth:`O4AScheduler.plan <.disciplines.O4AScheduler.plan>`; its true and planned
    Δ↑, p, Δ↓ are row ``j``, column ``k`` of ``up_t/up_p``, ``p_t/p_p``, ``down_t/down_p``, its release
    ``rel[j]``), admit it (its set appended to the pool at ``used[0]``; the caller made room in ``slots`` and the
    pool), reschedule the server. Returns ``(completions, γ, d†, u, level row widths needed or 0, 0)``."""
    r = rel[j]
    up_true = up_t[j, k]
    up_plan = up_p[j, k]
    p_true = p_t[j, k]
    p_plan = p_p[j, k]
    down_true = down_t[j, k]
    down_plan = down_p[j, k]
    no = o4b_sync(k, dispatch, s, fb, slots, si, sf, jf, jp, PS, PE, oj, oc, os, 0, code, ua, ub, uc, inc, bptr, brk,
                  val)
    a = dispatch + up_plan
    need = pdm * p_plan / pdd
    st = used[0]
    wk = 0
    wb = 0
    if si[k, ON] == 0:
        d = a + need
        u = discretize(g_eval(j, d + down_plan - r, code, ua, ub, uc, inc, bptr, brk, val), p_plan) / p_plan
        gamma = 0
        PS[st] = a
        PE[st] = d
        ln = 1
    else:
        wk, wb = _o4b_refresh(k, slots, si, jf, jp, PS, PE, nk, blu, blptr, bls, ble)
        if wk > 0:  # too wide for the row: PLAN on fresh levels (the row stays stale)
            lu, lptr, ls, le = _o4b_levels(k, slots, si, jf, jp, PS, PE)
        else:
            K = nk[k]
            lu = blu[k, :K]
            lptr = blptr[k, : K + 1]
            ls = bls[k, : blptr[k, K]]
            le = ble[k, : blptr[k, K]]
        gamma, d, u, fs, fe = plan_o4a(lu, lptr, ls, le, a, p_plan, need, down_plan, r, j, alpha, code, ua, ub, uc,
                                       inc, bptr, brk, val)
        ln = fs.size
        for m in range(ln):
            PS[st + m] = fs[m]
            PE[st + m] = fe[m]
    used[0] = st + ln
    jf[j, OA] = dispatch + up_true
    jf[j, OREM] = p_true
    jf[j, OU] = u
    jf[j, OD] = d
    jf[j, OR] = r
    jf[j, ODN] = down_true
    jp[j, 0] = st
    jp[j, 1] = ln
    n = si[k, ON]
    slots[k, n] = j
    si[k, ON] = n + 1
    si[k, ONSET] += ln
    si[k, OSTALE] = 1
    sf[k, SEV] = o4b_next_event(k, s, fb, slots, si, sf, jf, jp, PS, PE, code, ua, ub, uc, inc, bptr, brk, val)
    return no, gamma, d, u, wk, wb


@njit
def o4b_step(k, j, dispatch, t, jn, ks, out, rel, up_t, up_p, p_t, p_p, down_t, down_p, s, fb, pdm, pdd, alpha,
             slots, si, sf, jf, jp, PS, PE, used, nk, blu, blptr, bls, ble, oj, oc, os, code, ua, ub, uc, inc, bptr,
             brk, val):
    """One env step on the O4A bank in one call: :func:`o4b_commit` of job ``j`` on server ``k`` at ``dispatch``,
    then :func:`o4b_advance_due` of the servers ``ks`` to ``t`` (its completions after the commit's in
    ``oj/oc/os``), then :func:`o4b_estimates` of job ``jn`` (released at ``rel[jn]``) into ``out`` (skipped when
    ``jn < 0``): the calls the simulator makes one after the other, in the same order on the same arrays.

    Returns ``(stage, completions, γ, d†, f† = d† + the job's planned Δ↓, u, wk, wb)``: stage 0 when ``slots`` or
    the set pool has no room for the commit (nothing done: make room, call again); 1 when the commit needs wider level
    rows (``wk, wb``; committed, nothing advanced); 2 when the estimates need wider rows (``wk, wb``; committed and
    advanced, no estimate written); 3 when all is done."""
    if si[k, ON] == slots.shape[1] or used[0] + si[k, ONSET] + 2 > PS.size:
        return 0, 0, 0, 0.0, 0.0, 0.0, 0, 0
    no, gamma, d, u, wk, wb = o4b_commit(k, j, dispatch, rel, up_t, up_p, p_t, p_p, down_t, down_p, s, fb, pdm, pdd,
                                         alpha, slots, si, sf, jf, jp, PS, PE, used, nk, blu, blptr, bls, ble, oj, oc,
                                         os, code, ua, ub, uc, inc, bptr, brk, val)
    f = d + down_p[j, k]
    if wk > 0:
        return 1, no, gamma, d, f, u, wk, wb
    no = o4b_advance_due(t, ks, s, fb, slots, si, sf, jf, jp, PS, PE, oj, oc, os, code, ua, ub, uc, inc, bptr, brk, val,
                         no)
    if jn >= 0:
        wk, wb = o4b_estimates(ks, rel[jn], up_p[jn], p_p[jn], down_p[jn], pdm, pdd, jn, alpha, out, slots, si, sf,
                               jf, jp, PS, PE, nk, blu, blptr, bls, ble, code, ua, ub, uc, inc, bptr, brk, val)
        if wk > 0:
            return 2, no, gamma, d, f, u, wk, wb
    return 3, no, gamma, d, f, u, 0, 0


@njit
def o4b_drain(ks, s, fb, slots, si, sf, jf, jp, PS, PE, oj, oc, os, code, ua, ub, uc, inc, bptr, brk, val):
    """``UtilitySimulator.drain`` on the O4A bank in one call: while a server has a scheduled event,
    :func:`o4b_advance_due` to the earliest one (:func:`bank_next_due`). Returns ``(completions, the last time
    advanced to)`` (``-inf`` when nothing was scheduled); the completions fill ``oj/oc/os`` from index 0."""
    no = 0
    last = -INF
    while True:
        t = bank_next_due(ks, sf)
        if t == INF:
            break
        no = o4b_advance_due(t, ks, s, fb, slots, si, sf, jf, jp, PS, PE, oj, oc, os, code, ua, ub, uc, inc, bptr, brk,
                             val, no)
        last = t
    return no, last


@njit
def obs_server_features(est, r, ql, relative, feat):
    """The arithmetic of the observation's server-state features (``EdgeUtilityEnv._observation``), before its numpy
    functions: ``feat[2]`` = the estimated response times ``est − r``; ``feat[0]`` = the same minus the smallest of
    them when ``relative`` (a NaN-propagating minimum, as ``ndarray.min``); ``feat[1]`` = the queue lengths ``ql``,
    divided by ``1 + their largest`` when ``relative``. Elementwise the numpy expressions' operations."""
    n = est.size
    for k in range(n):
        feat[2, k] = est[k] - r
    if relative:
        m = feat[2, 0]
        q = ql[0]
        for k in range(1, n):
            v = feat[2, k]
            if v < m or v != v:
                m = v
            if ql[k] > q or ql[k] != ql[k]:
                q = ql[k]
        for k in range(n):
            feat[0, k] = feat[2, k] - m
            feat[1, k] = ql[k] / (1.0 + q)
    else:
        for k in range(n):
            feat[0, k] = feat[2, k]
            feat[1, k] = ql[k]
