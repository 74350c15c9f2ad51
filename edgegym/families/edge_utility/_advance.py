"""Compiled OnDisc continuation of the EdgeUtility env (:meth:`EdgeUtilityEnv.advance_ondisc
<edgegym.families.edge_utility.env.EdgeUtilityEnv.advance_ondisc>`): up to ``n`` env steps whose actions are
OnDisc's (``agents.baselines.edge_utility.OnDisc``: least increase of the planned total JRT, exact branch and bound
over the rows in ascending no-queue-time order), in one kernel call instead of a policy call and a ``step`` each.

Every simulator operation of those steps happens here in the order the Python path performs it, on the priority
server bank (``simulator._Bank``) with its own kernels (:func:`~._kernels.bank_sync`, :func:`~._kernels.bank_commit`,
:func:`~._kernels.bank_advance_due`): the observation's estimates sync every busy server to the release time (the
what-if estimates themselves are only computed where a step needs one), OnDisc's increments sync the rows it
evaluates and run their what-if simulations, the dispatch commits, the step advances to the next release. The
what-if simulation of a fifo/srpt/edf server (:func:`_whatif_acc`) is :func:`~._kernels.whatif`'s ordered variant
on preallocated scratch rows: the same event sequence and floating-point operations (the best ready item is the
smallest ``(key, r, id)`` of the items pushed, as its sorted list's first pushed item), without allocations; the
loop runs it as :func:`_whatif_sorted`, which keeps the items' orders between events instead of scanning them at
each event (``_whatif_acc``, the scan, is its test oracle).

What needs Python objects stays in Python (the env, after the call): the completions' utilities (``UtilityFn``),
the dispatch credit's planned utility (``UtilityFn.vector``), the rewards, and the commits to a non-bank cloud
(an infinite delay server: the kernel only counts them, and stops before any step in which an event of the
simulator's heap would fall due, so replaying those commits afterwards leaves the same state).
"""

from __future__ import annotations

import numpy as np

from ...core.jit import njit, njit_inline
from ._kernels import (
    EDF,
    FIFO,
    INF,
    JA,
    JAP,
    JDP,
    JKEY,
    JPP,
    JPT,
    JR,
    JREM,
    SBUSY,
    SDISC,
    SEV,
    SN,
    SRAN,
    SRUN,
    ST,
    _bank_next_bp,
    bank_advance_due,
    bank_commit,
    bank_pick,
    bank_sync,
)

__all__ = ["ondisc_run", "step_credits"]

#: :func:`~._kernels.bank_sync` itself (its source), compiled to be inlined into this module's loops: a call that
#: passes the bank's arrays costs more than the sync of a server with a few jobs
_sync = njit_inline(bank_sync.py_func)

#: why :func:`ondisc_run` stopped: it took every step it was asked for / the next step needs the Python path
DONE, BLOCKED = 0, 1


@njit_inline
def _sync_c(k, t1, cnb, s, slots, si, sf, jf, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val):
    """:func:`_sync` of server ``k`` to ``t1``, in a few operations where ``cnb[k]`` says what the sync would find:
    ``cnb[k]`` (not -inf) is the server's next ready time after its clock, and its running job ``si[k, SRUN]`` is
    the one it picks at its clock. Then, for ``t1`` before that ready time, no job becomes ready, the running job
    stays the best (its key only decreases, srpt, or stays, fifo and edf) and, unless it completes by ``t1``, the
    sync's one iteration runs it to ``t1``: the same operations, and ``cnb[k]`` stays true. Anything else (a
    completion, a ready time passed, no cache) runs :func:`_sync` and drops the cache."""
    t = sf[k, ST]
    if t <= t1 and t1 < cnb[k]:
        q = si[k, SRUN]
        if q < 0:  # nothing ready: the clock moves
            if t1 > t:
                sf[k, ST] = t1
            return no
        if t + jf[q, JREM] / s > t1:
            jf[q, JREM] -= (t1 - t) * s
            if t1 > t:
                si[k, SRAN] = 1
            sf[k, SBUSY] += t1 - t
            if t1 > t:
                sf[k, ST] = t1
            return no
    cnb[k] = -INF
    return _sync(k, t1, s, slots, si, sf, jf, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val)


@njit_inline
def _fill_items(k, t, slots, si, jf, xid, xr, xa, xrem, xdn, xkey):
    """``_bank_items(k, t, 0, ...)`` into the scratch rows: server ``k``'s jobs; returns their number."""
    n = si[k, SN]
    for q in range(n):
        j = slots[k, q]
        xid[q] = j
        xr[q] = jf[j, JR]
        xa[q] = jf[j, JA] if jf[j, JA] <= t else jf[j, JAP]
        e = jf[j, JPP] - (jf[j, JPT] - jf[j, JREM])
        xrem[q] = 0.0 if e < 0.0 else e
        xdn[q] = jf[j, JDP]
        xkey[q] = jf[j, JKEY]
    return n


@njit_inline
def _whatif_acc(disc, now, s, n, xid, xr, xa, xrem, xdn, xkey, live, pushed, want):
    """:func:`~._kernels.whatif` (fifo, srpt, edf) of the ``n`` scratch items from ``now``: returns ``(Σ finish −
    r in completion order, finish of item want)`` (``want < 0``: inf). ``xrem`` is consumed."""
    for i in range(n):
        live[i] = True
        pushed[i] = False
    npl = 0  # pushed, live items
    nd = 0
    acc = 0.0
    fw = INF
    t = now
    while nd < n:
        lim = t + 1e-15
        for i in range(n):
            if live[i] and not pushed[i] and xa[i] <= lim:
                pushed[i] = True
                npl += 1
        if npl == 0:  # the earliest item not pushed yet
            m = INF
            for i in range(n):
                if live[i] and not pushed[i] and xa[i] < m:
                    m = xa[i]
            t = m
            continue
        best = -1
        bk = 0.0
        for i in range(n):
            if live[i] and pushed[i]:
                kk = xr[i] if disc == FIFO else (xkey[i] if disc == EDF else xrem[i])
                if best < 0 or kk < bk or (kk == bk and (xr[i] < xr[best] or (xr[i] == xr[best]
                                                                             and xid[i] < xid[best]))):
                    best = i
                    bk = kk
        nxt = INF
        for i in range(n):
            if live[i] and xa[i] > t and xa[i] < nxt:
                nxt = xa[i]
        tc = t + xrem[best] / s
        if tc <= nxt:
            f = tc + xdn[best]
            acc += f - xr[best]
            if best == want:
                fw = f
            live[best] = False
            npl -= 1
            nd += 1
            t = tc
        else:
            xrem[best] -= (nxt - t) * s
            t = nxt
    return acc, fw


@njit_inline
def _before(disc, i, j, xr, xrem, xkey, xid):
    """Whether item ``i`` comes before item ``j`` in :func:`_whatif_acc`'s choice: the smaller ``(key, r, id)``."""
    ki = xr[i] if disc == FIFO else (xkey[i] if disc == EDF else xrem[i])
    kj = xr[j] if disc == FIFO else (xkey[j] if disc == EDF else xrem[j])
    return ki < kj or (ki == kj and (xr[i] < xr[j] or (xr[i] == xr[j] and xid[i] < xid[j])))


@njit_inline
def _whatif_sorted(disc, now, s, n, xid, xr, xa, xrem, xdn, xkey, live, aord, ready, want):
    """:func:`_whatif_acc` with the scans replaced by orders kept between events: the items sorted by ready time once
    (pushed items are a prefix of that order, the next ready time a pointer that only moves forward, as ``t`` never
    decreases) and the pushed, live items kept sorted by ``(key, r, id)`` (the running item's key only decreases,
    srpt, or stays, fifo and edf: it stays first). The same choices, event times and floating-point operations."""
    for i in range(n):
        live[i] = True
        p = i
        while p > 0 and xa[aord[p - 1]] > xa[i]:
            aord[p] = aord[p - 1]
            p -= 1
        aord[p] = i
    pp = 0  # the first item of aord not pushed yet
    pn = 0  # the first item of aord that may still be the next ready time (live, ready after t)
    nr = 0  # pushed, live items: ready[:nr], best first
    nd = 0
    acc = 0.0
    fw = INF
    t = now
    while nd < n:
        lim = t + 1e-15
        while pp < n and xa[aord[pp]] <= lim:
            i = aord[pp]
            pp += 1
            p = nr
            while p > 0 and _before(disc, i, ready[p - 1], xr, xrem, xkey, xid):
                ready[p] = ready[p - 1]
                p -= 1
            ready[p] = i
            nr += 1
        if nr == 0:  # the earliest item not pushed yet
            t = xa[aord[pp]]
            continue
        best = ready[0]
        while pn < n and (xa[aord[pn]] <= t or not live[aord[pn]]):
            pn += 1
        nxt = xa[aord[pn]] if pn < n else INF
        tc = t + xrem[best] / s
        if tc <= nxt:
            f = tc + xdn[best]
            acc += f - xr[best]
            if best == want:
                fw = f
            live[best] = False
            nr -= 1
            for p in range(nr):
                ready[p] = ready[p + 1]
            nd += 1
            t = tc
        else:
            xrem[best] -= (nxt - t) * s
            t = nxt
    return acc, fw


@njit_inline
def _whatifs(k, job, rr, rkey, ap, pp, dp, s, slots, si, sf, jf, scratch, iscratch, live, want_inc):
    """The what-if of busy bank server ``k`` with the request of ``job`` added (``bank_query``'s items): returns
    ``(increment of the total planned JRT or 0.0 unless want_inc, the request's finish)``; no side effects."""
    t = sf[k, ST]
    disc = si[k, SDISC]
    xid = iscratch[0]
    xr, xa, xrem, xdn, xkey = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    n = _fill_items(k, t, slots, si, jf, xid, xr, xa, xrem, xdn, xkey)
    xid[n] = job
    xr[n] = rr
    xa[n] = ap
    xrem[n] = pp
    xdn[n] = dp
    xkey[n] = rkey
    acc1, fin = _whatif_sorted(disc, t, s, n + 1, xid, xr, xa, xrem, xdn, xkey, live, iscratch[1], iscratch[2], n)
    if not want_inc:
        return 0.0, fin
    _fill_items(k, t, slots, si, jf, xid, xr, xa, xrem, xdn, xkey)
    acc0, _ = _whatif_sorted(disc, t, s, n, xid, xr, xa, xrem, xdn, xkey, live, iscratch[1], iscratch[2], -1)
    return acc1 - acc0, fin


@njit_inline
def _increment(k, job, now, rr, rkey, ap, pp, dp, s, slots, si, sf, jf, oj, oc, os, no, scratch, iscratch, live,
               quiet, cnb, code, ua, ub, uc, inc, bptr, brk, val):
    """``bank_query(1, [k], ...)``: OnDisc's increment of ``job`` on bank server ``k`` (synced to ``now`` first,
    completions appended from ``no``; ``quiet``: that sync is known to change nothing, skipped). Returns
    ``(increment, the request's what-if finish or -inf when the server was idle, new completion count)``."""
    if si[k, SN] == 0:
        return ap + pp / s + dp - rr, -INF, no
    if not quiet:
        no = _sync_c(k, now, cnb, s, slots, si, sf, jf, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val)
    if si[k, SN] == 0:
        v = ap + pp / s + dp
        return v - rr, -INF, no
    v, fin = _whatifs(k, job, rr, rkey, ap, pp, dp, s, slots, si, sf, jf, scratch, iscratch, live, True)
    return v, fin, no


@njit
def _observe(i, now, full, est, cls, pre, quiet, cnb, cloud, cloud_q, release, sup, sp, sdn, ks, s, slots, si, sf, jf,
             oj, oc, os, no, scratch, iscratch, live, code, ua, ub, uc, inc, bptr, brk, val):
    """The side effects of the observation of pending job ``i`` (``UtilitySimulator.estimates``): every busy bank
    server synced to ``now`` (completions appended from ``no``). Records per server ``cls`` (0 idle, 1 emptied by
    the sync, 2 busy), ``quiet`` (a second sync at ``now`` changes nothing: the job it would pick runs already and
    does not finish at once, so bank_sync would only subtract and add zeros) and ``pre`` (a busy server's estimate
    when a second sync would complete a job, else -inf); with ``full``, every server's estimate into ``est``
    (server order, as ``estimates`` returns them); keeps ``cnb`` (see :func:`_sync_c`) for the busy servers whose
    running job is the one they pick. Returns the new completion count."""
    r = release[i]
    rkey = jf[i, JKEY]
    for k in ks:
        pre[k] = -INF
        quiet[k] = False
        base = r + (sup[i, k] + sp[i, k] / s + sdn[i, k])
        if si[k, SN] == 0:
            cls[k] = 0
            if full:
                est[k] = base
            continue
        no = _sync_c(k, now, cnb, s, slots, si, sf, jf, oj, oc, os, no, code, ua, ub, uc, inc, bptr, brk, val)
        if si[k, SN] == 0:
            cls[k] = 1
            if full:
                est[k] = r + sup[i, k] + sp[i, k] / s + sdn[i, k]
            continue
        cls[k] = 2
        if cnb[k] != -INF:  # the cache holds: the running job is the one picked
            q = si[k, SRUN]
        else:
            q = bank_pick(k, sf[k, ST], s, slots, si, jf, code, ua, ub, uc, inc, bptr, brk, val)
            if q == si[k, SRUN]:
                cnb[k] = _bank_next_bp(k, sf[k, ST], slots, si, jf)
        loom = q >= 0 and sf[k, ST] + jf[q, JREM] / s <= sf[k, ST]  # a second sync at now would complete it
        if full or loom:
            _, pre[k] = _whatifs(k, i, r, rkey, r + sup[i, k], sp[i, k], sdn[i, k], s, slots, si, sf, jf, scratch,
                                 iscratch, live, False)
            if full:
                est[k] = pre[k]
        if not loom:
            quiet[k] = q == si[k, SRUN]
    if cloud >= 0 and full:
        est[cloud] = r + (sup[i, cloud] + sp[i, cloud] / s + sdn[i, cloud]) if cloud_q == 0 else \
            r + sup[i, cloud] + sp[i, cloud] / s + sdn[i, cloud]
    return no


@njit
def ondisc_run(i0, nmax, est0, now, batch, prune, hmin, cloud, cloud_q, cloud_next, release, sup, sp, sdn,
               tup, tp, tdn, srv_of_row, member, ks, s, slots, si, sf, jf, code, ua, ub, uc, inc, bptr, brk, val,
               oj, oc, os, cend, dec, est, nows, est_end):
    """Up to ``nmax`` OnDisc steps from pending job ``i0`` at time ``now``, whose observation was built (its
    estimates ``est0``, server order) (see the module docstring).

    ``batch``/``prune``: OnDisc's chunk size and branch and bound (False: every row); ``hmin``: the earliest event on
    the simulator's heap; ``cloud``: the non-bank cloud server (an infinite delay server) or -1, holding ``cloud_q``
    jobs, the earliest finishing at ``cloud_next``; ``release`` and the planned (``sup, sp, sdn``) and true (``tup,
    tp, tdn``) delays and processing times of the jobs; ``srv_of_row``: the server of each action row (-1: none);
    ``member``: bank membership per server; then the bank's state and utility table. Writes the completions
    ``(oj, oc, os)``, each step's end in them ``cend``, its server ``dec``, the chosen server's planned finish
    ``est`` and the step's time ``nows``; after at least one step, the side effects of the observation at the stop
    and its estimates ``est_end`` (its completions after ``cend[steps - 1]``). Returns ``(steps, status, now, number
    of completions, cloud sync time or -inf)``: status :data:`BLOCKED` when it stopped before a step that needs the
    Python path (an event of the heap falls due in it, or a full queue row)."""
    N = srv_of_row.size
    M = member.size
    J = release.size
    cap = slots.shape[1]
    scratch = np.empty((5, cap + 1))
    iscratch = np.empty((3, cap + 1), np.int64)  # item ids, order by ready time, ready items by key
    live = np.empty(cap + 1, np.bool_)
    cls = np.zeros(M, np.int64)
    pre = np.full(M, -INF)
    quiet = np.zeros(M, np.bool_)
    fin = np.full(M, -INF)  # the request's what-if finish of each evaluated busy server
    cnb = np.full(M, -INF)  # _sync_c's cache: the next ready time of each server whose sync it can take
    incs = np.empty(N)
    lb = np.empty(N)
    rows = np.empty(N, np.int64)
    no = 0
    sync_t = -INF
    step = 0
    status = DONE
    while step < nmax:
        i = i0 + step
        nxt_r = release[i + 1]
        if _blocked(nxt_r, hmin, ks, si, cap):
            status = BLOCKED
            break
        r = release[i]
        rkey = jf[i, JKEY]
        first = step == 0
        # OnDisc: rows in ascending (no-queue time, row), evaluated a chunk at a time
        nv = 0
        for row in range(N):
            k = srv_of_row[row]
            if k < 0:
                continue
            v = sup[i, k] + sp[i, k] / s + sdn[i, k]
            p = nv
            while p > 0 and (lb[p - 1] > v or (lb[p - 1] == v and rows[p - 1] > row)):
                lb[p] = lb[p - 1]
                rows[p] = rows[p - 1]
                p -= 1
            lb[p] = v
            rows[p] = row
            nv += 1
        for row in range(N):
            incs[row] = INF
        best = INF
        kk = 0
        while kk < nv and (not prune or lb[kk] <= best + 1e-9):
            hi = nv if not prune else min(kk + batch, nv)
            m = INF
            for p in range(kk, hi):
                row = rows[p]
                k = srv_of_row[row]
                ap = r + sup[i, k]
                if member[k]:
                    qk = quiet[k] and not first
                    v, fin[k], no = _increment(k, i, now, r, rkey, ap, sp[i, k], sdn[i, k], s, slots, si, sf, jf,
                                               oj, oc, os, no, scratch, iscratch, live, qk, cnb, code, ua, ub,
                                               uc, inc, bptr, brk, val)
                else:  # the infinite cloud: estimate − r, synced first when it holds jobs
                    if cloud_q > 0:
                        sync_t = now
                    v = ap + sp[i, k] / s + sdn[i, k] - r
                incs[row] = v
                if v < m:
                    m = v
            if m < best:
                best = m
            kk = hi
        a = 0
        for row in range(1, N):
            if incs[row] < incs[a]:
                a = row
        k = srv_of_row[a]
        # the chosen server's planned finish, as the observation's estimates computed it
        if first:
            e = est0[k]
        elif not member[k]:
            e = r + (sup[i, k] + sp[i, k] / s + sdn[i, k]) if cloud_q == 0 else \
                r + sup[i, k] + sp[i, k] / s + sdn[i, k]
        elif cls[k] == 0:
            e = r + (sup[i, k] + sp[i, k] / s + sdn[i, k])
        elif cls[k] == 1:
            e = r + sup[i, k] + sp[i, k] / s + sdn[i, k]
        elif pre[k] != -INF:
            e = pre[k]
        else:
            e = fin[k]
        est[step] = e
        dec[step] = k
        nows[step] = now
        # dispatch, then advance to the next release
        if member[k]:
            cnb[k] = -INF  # a new job in the queue
            no += bank_commit(k, i, now, tup[i, k], sup[i, k], tp[i, k], sp[i, k], tdn[i, k], sdn[i, k], s, slots,
                              si, sf, jf, oj[no:], oc[no:], os[no:], code, ua, ub, uc, inc, bptr, brk, val)
        else:
            sync_t = now
            cloud_q += 1
            tc = (now + tup[i, k]) + tp[i, k] / s
            if tc < cloud_next:
                cloud_next = tc
            if cloud_next < hmin:
                hmin = cloud_next
        for kq in ks:  # the servers bank_advance_due syncs
            if sf[kq, SEV] <= nxt_r:
                cnb[kq] = -INF
        no += bank_advance_due(nxt_r, ks, s, slots, si, sf, jf, oj[no:], oc[no:], os[no:], code, ua, ub, uc, inc,
                               bptr, brk, val)
        if nxt_r > now:
            now = nxt_r
        cend[step] = no
        step += 1
        # the observation of the next pending job (step() builds it): every estimate when the loop stops there
        i += 1
        last = step >= nmax or i + 1 >= J or _blocked(release[i + 1], hmin, ks, si, cap)
        no = _observe(i, now, last, est_end, cls, pre, quiet, cnb, cloud, cloud_q, release, sup, sp, sdn, ks, s,
                      slots, si, sf, jf, oj, oc, os, no, scratch, iscratch, live, code, ua, ub, uc, inc, bptr,
                      brk, val)
        if cloud >= 0 and cloud_q > 0:
            sync_t = now
    return step, status, now, no, sync_t


@njit_inline
def _blocked(nxt_r, hmin, ks, si, cap):
    """Whether the next step needs the Python path: an event of the simulator's heap falls due at or before the next
    release ``nxt_r``, or a bank server's queue row is full (the commit would have to grow it)."""
    if hmin <= nxt_r:
        return True
    for k in ks:
        if si[k, SN] >= cap:
            return True
    return False


@njit
def step_credits(cend, oj, os, oc, ou, planned, planned_of, dispatch, scale, ret, total):
    """The rewards of steps ``1..n-1`` of an :func:`ondisc_run` call (step ``q``'s completions are
    ``cend[q-1]:cend[q]`` of ``oj, os, oc`` with utilities ``ou``) as ``EdgeUtilityEnv._credit`` computes them: each
    step's completions in ``(completion time, server, job)`` order, ``(planned[q] + Σ (utility − planned_of[job])) /
    scale`` with the dispatch credit, ``Σ utility / scale`` without, each sum from 0 in that order; returns ``(ret,
    total)`` with every reward added to both in order (``ret`` the env's return)."""
    n = cend.size
    idx = np.empty(oj.size, np.int64)
    for q in range(1, n):
        lo, hi = cend[q - 1], cend[q]
        m = 0
        for c in range(lo, hi):  # insertion sort by (C, server, job): the step's few completions
            p = m
            while p > 0:
                b = idx[p - 1]
                if oc[b] < oc[c] or (oc[b] == oc[c] and (os[b] < os[c] or (os[b] == os[c] and oj[b] < oj[c]))):
                    break
                idx[p] = b
                p -= 1
            idx[p] = c
            m += 1
        acc = 0.0
        if dispatch:
            for p in range(m):
                acc += ou[idx[p]] - planned_of[oj[idx[p]]]
            reward = (planned[q] + acc) / scale
        else:
            for p in range(m):
                acc += ou[idx[p]]
            reward = acc / scale
        ret += reward
        total += reward
    return ret, total
