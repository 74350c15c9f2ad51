"""Compiled hot paths of the edge-cloud simulator (Wang et al., "Preemptive Scheduling for Distributed Machine
Learning Jobs in Edge-Cloud Networks", IEEE JSAC 2022): per-worker HAPRF planning and syncing, CALCULATEQ, placement,
water-filling and A_greedy, on struct-of-arrays state.

Every kernel is plain Python over numpy arrays, compiled with Numba's ``@njit(cache=True)`` when Numba is
installed (without it the same source runs as Python, slowly but identically). Each kernel performs exactly the
floating-point operations of the pure reference (:mod:`._reference`), in the same order, so the two agree bit
for bit (``tests/speed/test_speed_edge_cloud.py`` checks it on random instances).

State layout (owned by :class:`~.simulator.PaperSimulator`, passed in as arrays):

* per chunk (N): ``rho`` release on its worker, ``key`` HAPRF key, ``seq`` dispatch order, ``rem`` remaining
  service as of the worker's sync time, ``end`` projected/actual completion, ``alpha``, ``worker``, ``job``;
* per worker (W): the queue ``qbuf[w, :qlen[w]]`` (chunk ids in dispatch order: finished chunks are dropped
  when the worker syncs past them), the plan ``ps/pe/pc[w, phead[w]:plen[w]]`` (start, end, chunk of each
  planned segment), ``wsync`` (time up to which the plan was executed), ``hstart/hend`` (head segment);
* the executed log ``lw/ls/le/lc[:cnt[0]]`` (worker, start, end, chunk; one row per contiguous run) with
  ``llast[w]`` the row of worker ``w``'s last run (extended in place when the same chunk continues);
* ``cnt``: int64 counters ``[log rows, heap size, finished jobs, dispatch seq, postponed chunks]``.

The cost of a step is O(touched workers · queue length · log) for placement and O(qualified workers · queue
length) for CALCULATEQ: queue lengths depend on the load, not on how many jobs came before.
"""

from __future__ import annotations

import math

import numpy as np

# njit_inline: Numba's IR-level inlining into the calling kernels, for the small heap helpers. A call of a compiled
# function costs two atomic reference-count updates per array argument, and so does each inlined call (the inlined
# parameters are counted references too): the per-worker work of a placement (the sync, 20 arrays, and the
# re-planning, 18) is therefore written out inside one loop over the workers (sync_workers, replan_workers).
from ...core.jit import njit, njit_inline

TOL = 1e-9
INF = math.inf

# indices into the int64 counter array ``cnt``
LOG_N, HEAP_N, DONE_N, SEQ, POSTPONED = 0, 1, 2, 3, 4


# ------------------------------------------------------------------------------------------ small heaps
@njit
def _less(ka, sa, kb, sb):
    return ka < kb or (ka == kb and sa < sb)


@njit_inline
def _heap_push(hk, hs, hi, n, k, s, i):
    """Push (k, s, i) on the min-heap (k, s) held in ``hk/hs/hi[:n]``; returns the new size."""
    pos = n
    hk[pos] = k
    hs[pos] = s
    hi[pos] = i
    while pos > 0:
        par = (pos - 1) >> 1
        if _less(hk[pos], hs[pos], hk[par], hs[par]):
            hk[pos], hk[par] = hk[par], hk[pos]
            hs[pos], hs[par] = hs[par], hs[pos]
            hi[pos], hi[par] = hi[par], hi[pos]
            pos = par
        else:
            break
    return n + 1


@njit_inline
def _heap_pop(hk, hs, hi, n):
    """Remove the top of the heap ``hk/hs/hi[:n]``; returns the new size."""
    n -= 1
    hk[0] = hk[n]
    hs[0] = hs[n]
    hi[0] = hi[n]
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= n:
            break
        best = left
        right = left + 1
        if right < n and _less(hk[right], hs[right], hk[left], hs[left]):
            best = right
        if _less(hk[best], hs[best], hk[pos], hs[pos]):
            hk[pos], hk[best] = hk[best], hk[pos]
            hs[pos], hs[best] = hs[best], hs[pos]
            hi[pos], hi[best] = hi[best], hi[pos]
            pos = best
        else:
            break
    return n


# ------------------------------------------------------------------------------------------ exact sums
@njit
def msum_add(partials, n, x):
    """Add ``x`` exactly to the non-overlapping expansion ``partials[:n]`` (Shewchuk; ``math.fsum``'s
    partials); returns the new length. ``math.fsum(partials[:n])`` is then the correctly rounded total."""
    i = 0
    for k in range(n):
        y = partials[k]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i += 1
        x = hi
    partials[i] = x
    return i + 1


@njit
def msum_total(partials, n):
    """``math.fsum(partials[:n])`` of a non-overlapping expansion (:func:`msum_add`'s): its correctly rounded
    total, with CPython's final rounding (round-half-even on the dropped part)."""
    if n == 0:
        return 0.0
    n -= 1
    hi = partials[n]
    lo = 0.0
    while n > 0:
        x = hi
        n -= 1
        y = partials[n]
        hi = x + y
        yr = hi - x
        lo = y - yr
        if lo != 0.0:
            break
    if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or (lo > 0.0 and partials[n - 1] > 0.0)):
        y = lo * 2.0
        x = hi + y
        yr = x - hi
        if y == yr:
            hi = x
    return hi


# ------------------------------------------------------------------------------------------ workers
#: which workers :func:`sync_workers` syncs: those listed, those whose head segment ends by ``t``, all
SYNC_LISTED, SYNC_ENDED, SYNC_ALL = 0, 1, 2


@njit
def sync_workers(mode, ws, t, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc,
                 llast, cnt):
    """Execute workers' plans up to ``t`` (log them, update remaining times, drop finished chunks): the workers
    ``ws`` in that order (``mode = SYNC_LISTED``), or in worker order every worker whose head segment ends by ``t``
    (``SYNC_ENDED``) or every worker (``SYNC_ALL``). The per-worker work is written out in the loop rather than as an
    inlined helper: an inlined helper's array parameters cost two atomic reference-count updates each per call
    (20 arrays per worker, a third of a rollout's time)."""
    n = ws.size if mode == SYNC_LISTED else hend.size
    for ii in range(n):
        w = ws[ii] if mode == SYNC_LISTED else ii
        if (mode == SYNC_ENDED and not hend[w] <= t) or t <= wsync[w]:
            continue
        k = phead[w]
        np_ = plen[w]
        finished = False
        while k < np_ and ps[w, k] < t:
            s = ps[w, k]
            e = pe[w, k]
            c = pc[w, k]
            e_exec = e if e <= t else t
            li = llast[w]
            if li >= 0 and lc[li] == c and abs(le[li] - s) <= TOL:
                le[li] = e_exec
            else:
                li = cnt[LOG_N]
                lw[li] = w
                ls[li] = s
                le[li] = e_exec
                lc[li] = c
                llast[w] = li
                cnt[LOG_N] = li + 1
            if e_exec >= end[c]:
                rem[c] = 0.0
                finished = True
            else:
                rem[c] -= e_exec - s
            if e <= t:
                k += 1
            else:
                ps[w, k] = t
                break
        phead[w] = k
        if k < np_:  # the head segment
            hstart[w] = ps[w, k]
            hend[w] = pe[w, k]
        else:
            hstart[w] = INF
            hend[w] = INF
        wsync[w] = t
        if finished:
            m = 0
            for i in range(qlen[w]):
                c = qbuf[w, i]
                if end[c] > t:
                    qbuf[w, m] = c
                    m += 1
            qlen[w] = m


@njit
def replan_workers(ws, qbuf, qlen, rho, key, seq, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, si, sf):
    """Recompute the HAPRF plan of every worker of ``ws`` (in that order) from its sync time, with no further
    arrivals. ``si`` (4, C) int64 and ``sf`` (4, C) float64 are scratch rows, C >= the queue capacity. The
    per-worker work is written out in the loop (see :func:`sync_workers`)."""
    ids, pseq, hs, hi = si[0], si[1], si[2], si[3]
    prho, pkey, prem, hk = sf[0], sf[1], sf[2], sf[3]
    for ii in range(ws.size):
        w = ws[ii]
        t = wsync[w]
        n = qlen[w]
        for m in range(n):  # dispatch (= seq) order
            ids[m] = qbuf[w, m]
        if n <= 32:  # insertion sort by (rho, key, seq); stable, and the queue is already in seq order
            for m in range(1, n):
                c = ids[m]
                rc, kc = rho[c], key[c]
                q = m - 1
                while q >= 0 and (rho[ids[q]] > rc or (rho[ids[q]] == rc and key[ids[q]] > kc)):
                    ids[q + 1] = ids[q]
                    q -= 1
                ids[q + 1] = c
        else:
            tmp = qbuf[w, :n].copy()
            o1 = np.argsort(key[tmp], kind="mergesort")  # stable: (key, seq)
            tmp = tmp[o1]
            o2 = np.argsort(rho[tmp], kind="mergesort")  # stable: (rho, key, seq)
            tmp = tmp[o2]
            for m in range(n):
                ids[m] = tmp[m]
        for m in range(n):
            c = ids[m]
            prho[m] = rho[c]
            pkey[m] = key[c]
            pseq[m] = seq[c]
            prem[m] = rem[c]
        h = 0
        k = 0  # plan length
        i = 0
        while h > 0 or i < n:
            while i < n and prho[i] <= t + TOL:
                h = _heap_push(hk, hs, hi, h, pkey[i], pseq[i], i)
                i += 1
            if h == 0:
                if prho[i] > t:
                    t = prho[i]
                continue
            p = hi[0]
            c = ids[p]
            nxt = prho[i] if i < n else INF
            fin = t + prem[p]
            if fin <= nxt + TOL:
                seg_end = fin
                h = _heap_pop(hk, hs, hi, h)
                end[c] = fin
            else:
                seg_end = nxt
                prem[p] -= nxt - t
            if k > 0 and pc[w, k - 1] == c and abs(pe[w, k - 1] - t) <= TOL:
                pe[w, k - 1] = seg_end
            else:
                ps[w, k] = t
                pe[w, k] = seg_end
                pc[w, k] = c
                k += 1
            t = seg_end
        phead[w] = 0
        plen[w] = k
        if k > 0:  # the head segment
            hstart[w] = ps[w, 0]
            hend[w] = pe[w, 0]
        else:
            hstart[w] = INF
            hend[w] = INF


@njit
def advance(now, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast, cnt):
    """Sync every worker whose head segment ends by ``now`` (in worker order)."""
    sync_workers(SYNC_ENDED, plen[:0], now, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls,
                 le, lc, llast, cnt)


@njit
def advance_candidates(go, now, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc,
                       llast, cnt, qual, delay_row, worker_server, r, key_new, D, p0, key, inv_d, served, blk, a2n):
    """The next decision point in one call: :func:`advance_checked` to ``now`` (when ``go``), then
    :func:`candidates` for the job of ``(qual, delay_row, r, key_new, D, p0)`` into ``blk`` (5, W) = (q, t*, wait,
    A2 weight, backlog) and ``a2n``. Returns -1 and does nothing when the log first needs room (as
    :func:`advance_checked`), else 0."""
    if go:
        if log_need(cnt, plen, phead) > lw.size:
            return -1
        advance(now, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast, cnt)
    candidates(qual, delay_row, worker_server, r, key_new, D, p0, qbuf, qlen, rem, key, inv_d, end, ps, pe, pc, phead,
               plen, served, blk[0], blk[1], blk[2], blk[3], a2n, blk[4])
    return 0


@njit
def advance_checked(now, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast,
                    cnt):
    """:func:`advance` if the log has room for every planned segment (see :func:`log_need`): returns 0; else
    returns -1 and does nothing (the caller grows the log and calls :func:`advance`)."""
    if log_need(cnt, plen, phead) > lw.size:
        return -1
    advance(now, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast, cnt)
    return 0


@njit
def sync_all(t, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast, cnt):
    """Sync every worker to ``t`` (the drain: ``t = inf``)."""
    sync_workers(SYNC_ALL, plen[:0], t, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le,
                 lc, llast, cnt)


# ------------------------------------------------------------------------------------------ CALCULATEQ
@njit
def candidates(qual, delay_row, worker_server, r, key_new, D, p0, qbuf, qlen, rem, key, inv_d, end, ps, pe, pc, phead,
               plen, served, q, t_star, wait, a2w, a2n, backlog):
    """CALCULATEQ (the paper's Alg. 3, Eq. (5)) on the qualified workers ``qual`` (upload complete at
    ``t0 = r + delay_row[worker_server[w]]``), written into
    the (W,) outputs ``q, t_star, wait, a2w, a2n, backlog`` (other workers: ``q = t_star = inf``, the rest 0).
    ``served`` is an all-zero (N,) scratch array (left all-zero)."""
    for w in range(q.size):
        q[w] = INF
        t_star[w] = INF
        wait[w] = 0.0
        a2w[w] = 0.0
        a2n[w] = 0
        backlog[w] = 0.0
    lim_add = TOL
    for i in range(qual.size):
        w = qual[i]
        wt = 0.0
        a2 = 0.0
        bl = 0.0
        a2c = 0
        tz = r + delay_row[worker_server[w]]
        if qlen[w] > 0:
            # service each queued chunk receives in the projected plan before tz
            last = phead[w]
            for k in range(phead[w], plen[w]):
                s = ps[w, k]
                if s >= tz:
                    break
                e = pe[w, k]
                served[pc[w, k]] += (e if e <= tz else tz) - s
                last = k + 1
            lim = tz + lim_add
            for m in range(qlen[w]):
                c = qbuf[w, m]
                if end[c] <= lim:
                    continue
                rm = rem[c] - served[c]
                if rm <= TOL:
                    continue
                bl += rm
                if key[c] <= key_new:
                    wt += rm
                else:
                    a2 += inv_d[c]
                    a2c += 1
            for k in range(phead[w], last):
                served[pc[w, k]] = 0.0
        wait[w] = wt
        a2w[w] = a2
        a2n[w] = a2c
        backlog[w] = bl
        q[w] = (tz - r + wt + p0) / D + p0 * a2
        t_star[w] = tz + wt


# ------------------------------------------------------------------------------------------ placement
@njit
def place_edge(j, used, counts, r, rho_w, key_j, p0, D, cand_q, cand_a2n, c0, worker, rho, key, seq, rem, end,
               alpha, qbuf, qlen, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast, cnt,
               chunk_job, mark, touched_jobs, si, sf):
    """Dispatch job ``j``'s edge chunks (``counts[w]`` on each worker of ``used``, in that order, from chunk id
    ``c0``; ``rho_w[i]`` the release on ``used[i]``), re-planning every touched worker. Writes the jobs with a
    chunk on a touched queue into ``touched_jobs`` (``mark`` is an all-False (J,) scratch, left all-False)
    and returns how many."""
    c = c0
    nt = 0
    # every used worker synced, then the chunks queued, then every used worker re-planned: the same as the three per
    # worker in turn (each touches only its worker's queue, plan and chunks; the syncs log in the same order), in one
    # call each (see sync_workers)
    sync_workers(SYNC_LISTED, used, r, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le,
                 lc, llast, cnt)
    for ii in range(used.size):
        w = used[ii]
        rh = rho_w[ii]
        base = cand_q[w]
        for k in range(counts[w]):
            worker[c] = w
            rho[c] = rh
            key[c] = key_j
            seq[c] = cnt[SEQ]
            rem[c] = p0
            alpha[c] = base + k * p0 / D
            cnt[SEQ] += 1
            qbuf[w, qlen[w]] = c
            qlen[w] += 1
            c += 1
        cnt[POSTPONED] += counts[w] * cand_a2n[w]
        for m in range(qlen[w]):
            jj = chunk_job[qbuf[w, m]]
            if not mark[jj]:
                mark[jj] = True
                touched_jobs[nt] = jj
                nt += 1
    replan_workers(used, qbuf, qlen, rho, key, seq, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, si, sf)
    if not mark[j]:
        mark[j] = True
        touched_jobs[nt] = j
        nt += 1
    for m in range(nt):
        mark[touched_jobs[m]] = False
    return nt


@njit
def update_jobs(jobs_, nj, offsets, base, end, job_end, partials, npart, hk, hs, hi, cnt):
    """Recompute ``job_end`` of ``jobs_[:nj]`` from their chunks (job ``a``'s in slots ``offsets[a] - base`` to
    ``offsets[a + 1] - base``); keep the exact running sum of ``job_end`` (``partials[:npart]``, returned new length)
    and push changed ends on the completion heap."""
    for m in range(nj):
        a = jobs_[m]
        mx = -INF
        for c in range(offsets[a] - base, offsets[a + 1] - base):
            if end[c] > mx:
                mx = end[c]
        old = job_end[a]
        if mx != old:
            if old != INF:
                npart = msum_add(partials, npart, -old)
            npart = msum_add(partials, npart, mx)
            job_end[a] = mx
            cnt[HEAP_N] = _heap_push(hk, hs, hi, cnt[HEAP_N], mx, a, a)
    return npart


@njit
def finished_jobs(now, job_end, hk, hs, hi, cnt):
    """Pop completion-heap entries ending by ``now``; returns the number of placed jobs with ``c_j <= now``."""
    n = cnt[HEAP_N]
    while n > 0 and hk[0] <= now:
        if hk[0] == job_end[hi[0]]:
            cnt[DONE_N] += 1
        n = _heap_pop(hk, hs, hi, n)
    cnt[HEAP_N] = n
    return cnt[DONE_N]


# ------------------------------------------------------------------------------------------ water-filling
@njit
def water_fill(q, step, count, order, counts):
    """Place ``count`` chunks one at a time on the finite entry of ``q`` with minimum ``q[i] + k_i·step``
    (ties: ``order``, then index), adding into ``counts``. Returns 0, or -1 if no entry is finite."""
    n = q.size
    hk = np.empty(n, np.float64)
    hs = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    h = _heap_build(q, order, hk, hs, hi)
    if count > 0 and h == 0:
        return -1
    _heap_fill(q, order, step, count, INF, counts, hk, hs, hi, h)
    return 0


@njit
def _less3(ka, sa, ia, kb, sb, ib):
    return ka < kb or (ka == kb and (sa < sb or (sa == sb and ia < ib)))


# The two heap loops of the Q-min rule (water_fill, greedy), with the heap operations written out: a helper with
# array parameters called per worker or per chunk costs atomic reference-count updates per call (see sync_workers).
@njit
def _heap_build(q, order, hk, hs, hi):
    """The min-heap ``hk/hs/hi[:h]`` of the keys ``(q[i], order[i], i)`` of the finite entries of ``q``; returns
    ``h``."""
    h = 0
    for i in range(q.size):
        if math.isfinite(q[i]):
            pos = h
            hk[pos] = q[i]
            hs[pos] = order[i]
            hi[pos] = i
            while pos > 0:
                par = (pos - 1) >> 1
                if _less3(hk[pos], hs[pos], hi[pos], hk[par], hs[par], hi[par]):
                    hk[pos], hk[par] = hk[par], hk[pos]
                    hs[pos], hs[par] = hs[par], hs[pos]
                    hi[pos], hi[par] = hi[par], hi[pos]
                    pos = par
                else:
                    break
            h += 1
    return h


@njit
def _heap_fill(q, order, step, count, qc0, counts, hk, hs, hi, h):
    """Give ``count`` chunks one at a time to the top of the heap ``hk/hs/hi[:h]`` (a chunk raises its entry's key
    to ``q[i] + counts[i]·step``), adding into ``counts``, unless ``qc0`` is below the top's key: returns the
    chunks not given then (0 when all were). The top is replaced and sifted down in one pass (keys are unique: the
    same picks as a pop and a push)."""
    for d in range(count):
        if qc0 < hk[0]:
            return count - d
        i = hi[0]
        counts[i] += 1
        hk[0] = q[i] + counts[i] * step
        hs[0] = order[i]
        hi[0] = i
        pos = 0
        while True:
            left = 2 * pos + 1
            if left >= h:
                break
            best = left
            right = left + 1
            if right < h and _less3(hk[right], hs[right], hi[right], hk[left], hs[left], hi[left]):
                best = right
            if _less3(hk[best], hs[best], hi[best], hk[pos], hs[pos], hi[pos]):
                hk[pos], hk[best] = hk[best], hk[pos]
                hs[pos], hs[best] = hs[best], hs[pos]
                hi[pos], hi[best] = hi[best], hi[pos]
                pos = best
            else:
                break
    return 0


@njit
def fill_servers(server_counts, q, order, srv_ptr, srv_workers, step, counts):
    """The env's within-server rule for every server at once: ``server_counts[s]`` chunks water-filled over
    server ``s``'s workers ``srv_workers[srv_ptr[s]:srv_ptr[s+1]]`` on ``(q, order)``, into ``counts`` (W,).
    Returns the first server with chunks but no finite candidate, or -1."""
    for s in range(srv_ptr.size - 1):
        k = server_counts[s]
        if k <= 0:
            continue
        ws = srv_workers[srv_ptr[s] : srv_ptr[s + 1]]
        sub = np.zeros(ws.size, np.int64)
        if water_fill(q[ws], step, k, order[ws], sub) < 0:
            return s
        for m in range(ws.size):
            counts[ws[m]] += sub[m]
    return -1


@njit
def greedy(q, order, D, p_edge, qc0, qc1, counts):
    """A_greedy's dispatch (see :func:`~.simulator.greedy_placement`): fills ``counts`` (W,), returns the
    number of cloud chunks (D: whole job to the cloud). ``-1``: no finite candidate and no cloud."""
    n = q.size
    hk = np.empty(n, np.float64)
    hs = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    h = _heap_build(q, order, hk, hs, hi)
    if h == 0:
        if not math.isfinite(qc1):
            return -1
        return D
    if qc1 < hk[0]:  # the top's key is the smallest finite Q
        return D
    return _heap_fill(q, order, p_edge / D, D, qc0, counts, hk, hs, hi, h)


@njit
def server_shares(worker_server, counts, num_servers, num_cloud, D, out):
    """The ``server_proportions`` action of a placement: chunks per edge server (``np.bincount`` of ``counts`` by
    ``worker_server``), then ``num_cloud`` on the last row, each divided by ``D`` in float64 and written as float32
    into ``out`` (S_max+1,) (rows past ``num_servers`` zero)."""
    sc = np.zeros(out.size, np.float64)
    for w in range(counts.size):
        sc[worker_server[w]] += counts[w]
    sc[out.size - 1] = num_cloud
    for s in range(out.size):
        out[s] = np.float32(sc[s] / D) if s < num_servers or s == out.size - 1 else np.float32(0.0)


# ------------------------------------------------------------------------------------------ the executed log
@njit
def _group_order(keys, n):
    """A stable counting sort of the integer keys ``keys[:n]``: ``(order, ends)``, ``order`` the same as
    ``np.argsort(keys[:n], kind="stable")`` and ``ends[a]`` the end in it of the rows with key ``min + a``."""
    o = np.empty(n, np.int64)
    if n == 0:
        return o, np.zeros(1, np.int64)
    lo = keys[0]
    hi = keys[0]
    for i in range(n):
        if keys[i] < lo:
            lo = keys[i]
        if keys[i] > hi:
            hi = keys[i]
    ptr = np.zeros(hi - lo + 2, np.int64)
    for i in range(n):
        ptr[keys[i] - lo + 1] += 1
    for a in range(hi - lo + 1):
        ptr[a + 1] += ptr[a]
    for i in range(n):
        a = keys[i] - lo
        o[ptr[a]] = i
        ptr[a] += 1
    return o, ptr[: hi - lo + 1]


@njit
def log_order(lw, n):
    """The order of the log rows ``lw[:n]`` grouped by worker, rows of a worker in log order (:func:`_group_order`:
    the same order as ``np.argsort(lw[:n], kind="stable")``, 453 -> ~40 us on a 22,000-row log of
    ``EdgeCloudML-v1``'s drain)."""
    return _group_order(lw, n)[0]


@njit
def log_rows(lw, ls, le, lc, n, label):
    """The log's rows ``[worker, start, end, label[chunk]]`` as floats, grouped by worker (:func:`log_order`): what
    ``np.column_stack`` of the sorted columns, then ``astype(float)``, gives, in one pass."""
    o = log_order(lw, n)
    out = np.empty((n, 4))
    for k in range(n):
        i = o[k]
        out[k, 0] = lw[i]
        out[k, 1] = ls[i]
        out[k, 2] = le[i]
        out[k, 3] = label[lc[i]]
    return out


# ------------------------------------------------------------------------------------------ A_ps helpers
@njit
def _interval_rows(ls, le, lc, n_log, chunk_job, cloud_chunks, rho, end):
    """The rows A_ps's intervals are made of: ``(job, start, end)`` of each executed edge run (the log's first
    ``n_log`` rows), then of each cloud chunk."""
    n = n_log + cloud_chunks.size
    js = np.empty(n, np.int64)
    ss = np.empty(n, np.float64)
    es = np.empty(n, np.float64)
    for i in range(n_log):
        js[i] = chunk_job[lc[i]]
        ss[i] = ls[i]
        es[i] = le[i]
    for m in range(cloud_chunks.size):
        c = cloud_chunks[m]
        js[n_log + m] = chunk_job[c]
        ss[n_log + m] = rho[c]
        es[n_log + m] = end[c]
    return js, ss, es


@njit
def job_intervals(lw, ls, le, lc, n_log, chunk_job, cloud_chunks, rho, end, num_jobs):
    """Per job, the maximal intervals during which one of its chunks runs (executed edge runs + cloud chunks),
    merged with tolerance ``TOL`` exactly as the reference's ``_running_intervals``. Returns
    ``(job, start, end)`` rows sorted by job then start."""
    js, ss, es = _interval_rows(ls, le, lc, n_log, chunk_job, cloud_chunks, rho, end)
    n = js.size
    o, ends = _group_order(js, n)
    oj = np.empty(n, np.int64)
    os_ = np.empty(n, np.float64)
    oe = np.empty(n, np.float64)
    m = _merge_groups(o, ends, n, js, ss, es, oj, os_, oe)
    return oj[:m], os_[:m], oe[:m]


@njit
def job_intervals_sorted(lw, ls, le, lc, n_log, chunk_job, cloud_chunks, rho, end, num_jobs):
    """:func:`job_intervals` by sorting each job's rows by (start, end) and sweeping them (:func:`_order_rows`,
    :func:`_merge_rows`): the reference of the differential tests."""
    js, ss, es = _interval_rows(ls, le, lc, n_log, chunk_job, cloud_chunks, rho, end)
    n = js.size
    o = _order_rows(js, ss, es, n)
    oj = np.empty(n, np.int64)
    os_ = np.empty(n, np.float64)
    oe = np.empty(n, np.float64)
    m = _merge_rows(o, n, js, ss, es, oj, os_, oe, 0)
    return oj[:m], os_[:m], oe[:m]


@njit
def _merge_groups(o, ends, n, js, ss, es, oj, os_, oe):
    """Each job's maximal intervals from its rows in any order (``o``, grouped by job, ``ends`` as
    :func:`_group_order` gives them), written to ``oj/os_/oe`` sorted by job then start; returns their count.

    The sweep of :func:`_merge_rows` over rows sorted by start joins a row to the job's last interval when it
    starts within ``TOL`` of its end: its intervals are the connected components of the closed intervals
    ``[s, fl(e + TOL)]`` (rounding is monotone, so a component's reach is ``fl(max e + TOL)``), each reported as
    (its least start, its greatest end). Components do not depend on the order the rows come in, so each row is
    inserted where it belongs among the job's components so far (kept sorted; a row joins every component it
    touches, merging them) with no sort of the rows. A job's rows mostly continue its last component: the scan
    starts there. The start reported is the one the sweep reports (the least start; on a tie, the row with the
    least end, then the earliest), and the end the greatest one."""
    se = np.empty(n, np.float64)
    m = 0
    lo = 0
    for a in range(ends.size):
        hi = ends[a]
        if hi == lo:
            continue
        base = m  # this job's components: oj/os_/oe[base:m], sorted by start; se: the end of the start's row
        for q in range(lo, hi):
            i = o[q]
            s = ss[i]
            e = es[i]
            reach = e + TOL
            # the last component starting at or before reach: b (base - 1: none)
            b = m - 1
            while b >= base and os_[b] > reach:
                b -= 1
            # the first component whose reach is at or after s: f (among base..b)
            f = b
            while f >= base and oe[f] + TOL >= s:
                f -= 1
            f += 1
            if f > b:  # touches none: a new component at f (after the ones before it)
                for k in range(m, f, -1):
                    oj[k] = oj[k - 1]
                    os_[k] = os_[k - 1]
                    oe[k] = oe[k - 1]
                    se[k] = se[k - 1]
                oj[f] = js[i]
                os_[f] = s
                oe[f] = e
                se[f] = e
                m += 1
                continue
            # joins components f..b: one component at f
            cs = os_[f]
            cse = se[f]
            if s < cs or (s == cs and e < cse):
                cs = s
                cse = e
            ce = oe[f]
            for k in range(f + 1, b + 1):
                if oe[k] > ce:
                    ce = oe[k]
            if e > ce:
                ce = e
            os_[f] = cs
            se[f] = cse
            oe[f] = ce
            gone = b - f
            if gone:
                for k in range(b + 1, m):
                    oj[k - gone] = oj[k]
                    os_[k - gone] = os_[k]
                    oe[k - gone] = oe[k]
                    se[k - gone] = se[k]
                m -= gone
        lo = hi
    return m


@njit
def _order_rows(js, ss, es, n):
    """The order of rows ``(js, ss, es)[:n]`` sorted by (job, start, end), ties in row order: a counting sort by
    job, then each job's rows by (start, end) (insertion sort, finished by stable sorts when a long job's rows
    are far from sorted). Rows equal in all three keys merge the same way in any order."""
    o, ends = _group_order(js, n)
    if n == 0:
        return o
    lo = 0
    for a in range(ends.size):  # ends[a]: the end of the a-th job's rows (by job index)
        hi = ends[a]
        # insertion sort (stable); a long job's rows (from a few workers, each worker's in time order) are mostly
        # in order, so it is cheap there too (the drain of an EdgeCloudML-v1 episode: 834 -> ~500 us); past a
        # budget of shifts the group is finished by stable sorts, least significant key first: a stable sort of
        # a partly insertion-sorted group gives the same order (equal keys never swap in either)
        budget = (hi - lo) * (hi - lo) if hi - lo <= 64 else 16 * (hi - lo)  # a short job's is never reached
        for q in range(lo + 1, hi):
            i = o[q]
            si, ei = ss[i], es[i]
            p = q - 1
            while p >= lo and (ss[o[p]] > si or (ss[o[p]] == si and es[o[p]] > ei)):
                o[p + 1] = o[p]
                p -= 1
                budget -= 1
            o[p + 1] = i
            if budget < 0:
                g = o[lo:hi].copy()
                g = g[np.argsort(es[g], kind="mergesort")]
                g = g[np.argsort(ss[g], kind="mergesort")]
                o[lo:hi] = g
                break
        lo = hi
    return o


@njit
def _merge_rows(o, n, js, ss, es, oj, os_, oe, m0):
    """Merge the rows ``(js, ss, es)`` taken in the order ``o[:n]`` into each job's maximal intervals (a row joins
    the job's last interval when it starts within ``TOL`` of its end), written from index ``m0`` of
    ``oj/os_/oe``; returns the new count."""
    m = m0 - 1
    for k in range(n):
        i = o[k]
        j, s, e = js[i], ss[i], es[i]
        if m >= m0 and oj[m] == j and s <= oe[m] + TOL:
            if e > oe[m]:
                oe[m] = e
        else:
            m += 1
            oj[m] = j
            os_[m] = s
            oe[m] = e
    return m + 1


# ------------------------------------------------------------------------------------------ bounded history
# With ``keep_schedule=False`` the simulator keeps per-chunk state in a window of slots (slot = chunk id - base)
# and consumes the executed log as it goes: the rows of finished jobs become A_ps's per-job running intervals, the
# busy time and the run counts (for the preemptions); nothing else of the executed schedule is kept.
FL_RUNS, FL_RAN, FL_IV, FL_BUSY = 0, 1, 2, 3  # indices into ``fl``: edge runs, chunks that ran, intervals, partials


@njit
def init_slots(j, c0, D, inv, chunk_job, inv_d, worker, end, rem, key, seq, ran):
    """Fresh state for job ``j``'s ``D`` chunks in slots ``c0..c0+D-1`` (a slot may have held an earlier chunk)."""
    for c in range(c0, c0 + D):
        chunk_job[c] = j
        inv_d[c] = inv
        worker[c] = -2
        end[c] = INF
        rem[c] = 0.0
        key[c] = 0.0
        seq[c] = 0
        ran[c] = False


@njit
def compact_plans(ps, pe, pc, phead, plen, base, ps2, pe2, pc2):
    """Each worker's plan ``[phead, plen)`` of ``ps/pe/pc`` written to columns ``0..plen-phead`` of
    ``ps2/pe2/pc2``, its chunk ids less ``base`` (the slots of a bounded history with ``chunk_base = base``)."""
    for w in range(phead.size):
        h = phead[w]
        for k in range(h, plen[w]):
            ps2[w, k - h] = ps[w, k]
            pe2[w, k - h] = pe[w, k]
            pc2[w, k - h] = pc[w, k] - base


@njit
def flush_log(T, lw, ls, le, lc, cnt, llast, chunk_job, job_end, ran, busy, fl, iv_j, iv_s, iv_e):
    """Consume the log rows of the jobs finished by ``T`` (``job_end <= T``; every run before ``T`` is logged, so
    those jobs' rows are all there and final): their edge runs are counted (``fl[FL_RUNS]``, and in
    ``fl[FL_RAN]`` the chunks with a first run, marked in ``ran``), their durations added exactly to the partials
    ``busy[:fl[FL_BUSY]]``, and each job's rows (edge runs and cloud rows, ``lw = -1``) merged into maximal running
    intervals exactly as :func:`job_intervals`, appended to ``iv_j/iv_s/iv_e`` from ``fl[FL_IV]`` (room for every
    row needed). The other rows are kept, in order, at the front of the log; ``llast`` follows them (-1 for a
    consumed row: its chunk has finished and never runs again)."""
    n = cnt[LOG_N]
    js = np.empty(n, np.int64)
    ss = np.empty(n, np.float64)
    es = np.empty(n, np.float64)
    newidx = np.empty(n, np.int64)
    nd = 0
    m = 0
    nb = fl[FL_BUSY]
    for i in range(n):
        c = lc[i]
        j = chunk_job[c]
        if job_end[j] <= T:
            js[nd] = j
            ss[nd] = ls[i]
            es[nd] = le[i]
            nd += 1
            newidx[i] = -1
            if lw[i] >= 0:
                nb = msum_add(busy, nb, le[i] - ls[i])
                fl[FL_RUNS] += 1
                if not ran[c]:
                    ran[c] = True
                    fl[FL_RAN] += 1
        else:
            lw[m] = lw[i]
            ls[m] = ls[i]
            le[m] = le[i]
            lc[m] = c
            newidx[i] = m
            m += 1
    fl[FL_BUSY] = nb
    cnt[LOG_N] = m
    for w in range(llast.size):
        if llast[w] >= 0:
            llast[w] = newidx[llast[w]]
    o = _order_rows(js, ss, es, nd)
    fl[FL_IV] = _merge_rows(o, nd, js, ss, es, iv_j, iv_s, iv_e, fl[FL_IV])


# ------------------------------------------------------------------------------------------ observation
@njit
def server_aggregates(qual, worker_server, S, backlog, wait, a2w, q, p0):
    """Per-server aggregates of the candidate table over the qualified workers ``qual`` (in that order, so
    sums match ``np.bincount``): qualified count, idle count (backlog <= 0), min wait, min p0·A2 weight, min Q,
    backlog sum. Returns ``(nq (S,) int64, idle (S,), mins (3, S) (inf where none), backlog (S,))``."""
    nq = np.zeros(S, np.int64)
    idle = np.zeros(S, np.float64)
    mins = np.full((3, S), INF)
    bl = np.zeros(S, np.float64)
    for i in range(qual.size):
        w = qual[i]
        s = worker_server[w]
        nq[s] += 1
        idle[s] += 1.0 if backlog[w] <= 0 else 0.0
        v = wait[w]
        if v < mins[0, s]:
            mins[0, s] = v
        v = p0 * a2w[w]
        if v < mins[1, s]:
            mins[1, s] = v
        v = q[w]
        if v < mins[2, s]:
            mins[2, s] = v
        bl[s] += backlog[w]
    return nq, idle, mins, bl


# ------------------------------------------------------------------------------------------ env: observation
@njit
def _pairwise_block(a, lo, n):
    """NumPy's pairwise-summation leaf (n <= 128): 8 partial sums, then the tail."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        k = lo + i
        r0 += a[k]
        r1 += a[k + 1]
        r2 += a[k + 2]
        r3 += a[k + 3]
        r4 += a[k + 4]
        r5 += a[k + 5]
        r6 += a[k + 6]
        r7 += a[k + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit
def pairwise_sum(a, lo, n):
    """``np.sum(a[lo:lo+n])`` of a float64 array, bit for bit: NumPy's pairwise summation (leaves of at most
    128 elements, halves rounded to multiples of 8 above). Iterative (an explicit stack): Numba does not cache
    recursive functions reliably."""
    if n <= 128:
        return _pairwise_block(a, lo, n)
    los = np.empty(128, np.int64)
    ns = np.empty(128, np.int64)
    vals = np.empty(128, np.float64)
    top = 1
    nv = 0
    los[0] = lo
    ns[0] = n
    while top > 0:
        top -= 1
        m = ns[top]
        if m < 0:  # combine the last two values: left + right
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        elif m <= 128:
            vals[nv] = _pairwise_block(a, los[top], m)
            nv += 1
        else:
            n2 = m // 2
            n2 -= n2 % 8
            l0 = los[top]
            ns[top] = -1
            top += 1
            los[top] = l0 + n2
            ns[top] = m - n2
            top += 1
            los[top] = l0
            ns[top] = n2
            top += 1
    return vals[0]


@njit
def eligible_rows(q, worker_server, has_cloud, use_cloud, rows):
    """The env's legal rows (``server_proportions`` mask) into ``rows`` (S_max+1,) bool: edge servers with a
    finite-Q worker, then the cloud (if there is one and it is in use, or no edge worker qualifies)."""
    rows[:] = False
    any_finite = False
    for w in range(q.size):
        if math.isfinite(q[w]):
            rows[worker_server[w]] = True
            any_finite = True
    rows[rows.size - 1] = has_cloud and (use_cloud or not any_finite)
    return any_finite


@njit
def obs_stage1(j, S, has_cand, has_cloud, use_cloud, relative, max_types, max_chunks, job_dim, row_dim,
               num_jobs, now, num_placed, job_end, hk, hs, hi, cnt, jd, jp0, jp1, jdc, jwork, jwt, jpst, delay_edge,
               type_ptr, type_workers, worker_server, head_start, q, wait, a2w, backlog, scratch, obs, pre, rows):
    """First pass of the observation (the env's ``_observation``, same floating-point operations): writes every
    scalar feature of ``obs`` (float64, zeroed here) and the arguments of the per-server logarithms into ``pre``
    (7, S) (upload delay, qualified, idle, min wait, min p0·A2 weight, min Q, backlog; 0 where there is none),
    which the caller passes through ``np.log1p`` (NumPy's, as the pure version) before :func:`obs_stage2`.
    Also writes the legal rows into ``rows``; the jobs in the system come from the simulator's completion heap
    (:func:`finished_jobs`). Returns the number of qualified workers (0: no per-server features)."""
    in_system = num_placed - finished_jobs(now, job_end, hk, hs, hi, cnt)
    obs[:] = 0.0
    pre[:, :] = 0.0
    W = worker_server.size
    D = jd[j]
    p0 = jp0[j]
    p1 = jp1[j]
    dc = jdc[j]
    wt = jwt[j]
    nq_all = 0
    if 0 <= wt < type_ptr.size - 1:
        lo = type_ptr[wt]
        nq_all = type_ptr[wt + 1] - lo
    else:
        lo = 0
    obs[0] = D / max_chunks
    obs[1] = math.log1p(jwork[j]) / 10
    obs[2] = math.log1p(p0) / 6
    obs[3] = math.log1p(p1) / 6
    obs[4] = math.log1p(D * p0) / 10
    obs[5] = (p0 - p1) / p0 if p0 > 0 else 0.0
    obs[6] = nq_all / max(W, 1)
    obs[7] = math.log1p(dc) / 3
    obs[8] = math.log1p(float(nq_all)) / 5
    base = 9
    obs[base + min(wt, max_types - 1)] = 1.0
    obs[base + max_types + min(jpst[j], max_types - 1)] = 1.0
    r0 = job_dim
    nrows = rows.size
    backlog_total = 0.0
    if has_cand:
        eligible_rows(q, worker_server, has_cloud, use_cloud, rows)
    else:
        rows[:] = False
        rows[nrows - 1] = has_cloud
    if has_cand and nq_all > 0:
        for s in range(S):
            pre[0, s] = delay_edge[j, s]
            pre[3, s] = INF
            pre[4, s] = INF
            pre[5, s] = INF
        for i in range(nq_all):
            w = type_workers[lo + i]
            s = worker_server[w]
            pre[1, s] += 1.0
            pre[2, s] += 1.0 if backlog[w] <= 0 else 0.0
            v = wait[w]
            if v < pre[3, s]:
                pre[3, s] = v
            v = p0 * a2w[w]
            if v < pre[4, s]:
                pre[4, s] = v
            v = q[w]
            if v < pre[5, s]:
                pre[5, s] = v
            pre[6, s] += backlog[w]
            scratch[i] = backlog[w]
        for k in range(3, 6):
            for s in range(S):
                if not math.isfinite(pre[k, s]):
                    pre[k, s] = 0.0
        backlog_total = pairwise_sum(scratch, 0, nq_all)
    if has_cand and has_cloud:
        c = r0 + (nrows - 1) * row_dim
        obs[c] = math.log1p(dc) / 3
        obs[c + 5] = math.log1p((dc + p0) / D) / 6
        obs[c + 6] = math.log1p((dc + p1) / D) / 6
    for s in range(nrows):
        obs[r0 + s * row_dim + 7] = 1.0 if rows[s] else 0.0
    g = obs.size - 5
    obs[g + 2] = math.log1p(backlog_total) / 10
    if relative:
        obs[g + 1] = math.log1p(in_system / max(W, 1))
    else:
        obs[g] = math.log1p(max(now, 0.0)) / 8
        obs[g + 1] = in_system / num_jobs
        obs[g + 3] = (num_jobs - j) / num_jobs
    busy = 0
    for w in range(W):
        if head_start[w] <= now:
            busy += 1
    obs[g + 4] = busy / W if W else 0.0
    return nq_all


@njit
def obs_stage2(obs, lg, S, nq_all, job_dim, row_dim, hi, out):
    """Second pass: the per-server features from ``lg = np.log1p(pre)`` (7, S), then the clip to [0, hi] and
    the cast to float32 into ``out``."""
    if nq_all > 0:
        for s in range(S):
            c = job_dim + s * row_dim
            obs[c] = lg[0, s] / 3
            obs[c + 1] = lg[1, s] / 3
            obs[c + 2] = lg[2, s] / 3
            obs[c + 3] = lg[3, s] / 6
            obs[c + 4] = lg[4, s] / 6
            obs[c + 5] = lg[5, s] / 6
            obs[c + 6] = lg[6, s] / 8
    for i in range(obs.size):
        v = obs[i]
        if v < 0.0:
            v = 0.0
        elif v > hi:
            v = hi
        out[i] = np.float32(v)


# ------------------------------------------------------------------------------------------ env: actions
@njit
def largest_remainder(w, total, out):
    """The env's largest-remainder rounding (``env.largest_remainder``, same operations) into ``out`` (int64)."""
    n = w.size
    s = pairwise_sum(w, 0, n)
    x = np.empty(n, np.float64)
    fr = np.empty(n, np.float64)
    tot = 0
    for i in range(n):
        x[i] = w[i] / s * total
        out[i] = np.int64(math.floor(x[i] + 1e-9))
        tot += out[i]
    short = total - tot
    if short > 0:
        for i in range(n):
            fr[i] = -(np.rint((x[i] - out[i]) * 1e9) / 1e9)
        order = np.argsort(fr, kind="mergesort")  # stable: (-round(frac, 9), index)
        k = 0
        for m in range(n):
            if k >= short:
                break
            i = order[m]
            if w[i] > 0:
                out[i] += 1
                k += 1
    elif short < 0:  # floating excess: take from the smallest remainders, ties to the higher index
        for m in range(n):
            i = n - 1 - m
            fr[m] = np.rint((x[i] - out[i]) * 1e9) / 1e9
        order = np.argsort(fr, kind="mergesort")
        for m in range(-short):
            out[n - 1 - order[m]] -= 1


@njit
def decode_proportions(a, rows, D, q, order, srv_ptr, srv_workers, step, wts, server_counts, counts):
    """``server_proportions`` decoding (the env's ``decode_action``): ``a`` (S_max+1,) float64. Returns 0 (done:
    ``server_counts`` (S_max+1,) and ``counts`` (W,) written), 1 (an entry outside [-1e-6, 1 + 1e-6] or not
    finite: the caller raises), 2 (all-zero weights on legal rows: the caller falls back to A_greedy), or
    ``3 + s`` (server ``s`` got chunks but has no finite candidate: the caller raises)."""
    n = a.size
    for i in range(n):
        v = a[i]
        if not math.isfinite(v) or v < -1e-6 or v > 1 + 1e-6:
            return 1
    pos = False
    for i in range(n):
        v = a[i]
        v = 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)
        wts[i] = v if rows[i] else 0.0
        if wts[i] > 0:
            pos = True
    if not pos:
        return 2
    largest_remainder(wts, D, server_counts)
    counts[:] = 0
    # within each server the Q-min rule of ``fill_servers``/``water_fill`` (each chunk to the minimum
    # (q + k·step, order)) by a scan of the server's few workers instead of a heap: the same keys, the same picks
    for s in range(srv_ptr.size - 1):
        k = server_counts[s]
        if k <= 0:
            continue
        lo = srv_ptr[s]
        hi = srv_ptr[s + 1]
        for _ in range(k):
            best = -1
            bk = INF
            bo = 0
            for m in range(lo, hi):
                w = srv_workers[m]
                if not math.isfinite(q[w]):
                    continue
                v = q[w] + counts[w] * step if counts[w] else q[w]
                if best < 0 or v < bk or (v == bk and order[w] < bo):
                    best = w
                    bk = v
                    bo = order[w]
            if best < 0:
                return 3 + s
            counts[best] += 1
    return 0


# ------------------------------------------------------------------------------------------ placement checks
@njit
def check_counts(counts, worker_type, wt, delay_row, worker_server, r, used, rho_used, qlen):
    """One pass over a placement's ``counts`` (W,): returns ``(Σ counts, number of used workers, min (<= 0), max,
    a used worker of another type than wt, the longest queue)``; writes the used workers
    (``np.flatnonzero(counts)``) into ``used`` and their releases ``r + delay_row[worker_server[w]]`` into
    ``rho_used``."""
    n_edge = 0
    n_used = 0
    mn = 0
    mx = 0
    bad_type = False
    for w in range(counts.size):
        c = counts[w]
        n_edge += c
        if c < mn:
            mn = c
        if c > mx:
            mx = c
        if c != 0:
            used[n_used] = w
            rho_used[n_used] = r + delay_row[worker_server[w]]
            n_used += 1
            if worker_type[w] != wt:
                bad_type = True
    qmax = 0
    for w in range(qlen.size):
        if qlen[w] > qmax:
            qmax = qlen[w]
    return n_edge, n_used, mn, mx, bad_type, qmax


@njit
def after_place(jobs_, nj, offsets, base, end, job_end, partials, npart, hk, hs, hi, cnt, arr_partials, narr, r):
    """:func:`update_jobs`, then ``r`` added to the exact running sum of arrivals; returns both new lengths and Φ
    (the two exact sums' difference: ``math.fsum`` of each list of partials, as :func:`msum_total` computes it)."""
    npart = update_jobs(jobs_, nj, offsets, base, end, job_end, partials, npart, hk, hs, hi, cnt)
    narr = msum_add(arr_partials, narr, r)
    return npart, narr, msum_total(partials, npart) - msum_total(arr_partials, narr)


@njit
def log_need(cnt, plen, phead):
    """Log rows needed for every planned segment to be logged: rows so far + Σ_w planned segments + 1."""
    n = cnt[LOG_N] + 1
    for w in range(plen.size):
        n += plen[w] - phead[w]
    return n


# ------------------------------------------------------------------------------------------ A_ps sweep
@njit
def _next_uint32(raw, st):
    """NumPy PCG64's ``next_uint32`` over pre-drawn raw 64-bit words: ``st`` = [words used, has a buffered
    upper half, that half, out of words]. Returns the 32-bit value (0 and ``st[3] = 1`` when out of words)."""
    if st[1] == 1:
        st[1] = 0
        return np.uint64(st[2])
    if st[0] >= raw.size:
        st[3] = 1
        return np.uint64(0)
    w = raw[st[0]]
    st[0] += 1
    st[1] = 1
    st[2] = np.int64(w >> np.uint64(32))
    return w & np.uint64(0xFFFFFFFF)


@njit
def _bounded(n, raw, st):
    """``Generator.integers(n)`` (int64, 1 <= n < 2**32) of NumPy: Lemire's method on 32-bit draws."""
    if n == 1:
        return 0
    rng_excl = np.uint64(n)
    m = _next_uint32(raw, st) * rng_excl
    leftover = m & np.uint64(0xFFFFFFFF)
    if leftover < rng_excl:
        threshold = (np.uint64(0xFFFFFFFF) - np.uint64(n - 1)) % rng_excl
        while leftover < threshold and st[3] == 0:
            m = _next_uint32(raw, st) * rng_excl
            leftover = m & np.uint64(0xFFFFFFFF)
    return np.int64(m >> np.uint64(32))


@njit
def ps_sweep(ev_t, ev_kind, ev_job, zeta, job_ps_type, ps_type, pool_ptr, pool, raw, st, out_ps, out_s, out_e,
             out_j, held_ps, held_s):
    """A_ps's sweep over the sorted acquire (kind 1) / release (kind 0) events, exactly as
    ``PaperSimulator._assign_ps_python``: free edge PSs per type kept sorted in ``pool[pool_ptr[t]:...]`` (the
    first ``pool_n[t]`` of each segment), draws by :func:`_bounded` on the pre-drawn words ``raw``. Writes the
    rows ``(ps, start, end, job)`` in release order; returns ``(rows, switches, fallbacks)``, or rows = -1 when
    the words ran out (the caller draws more and calls again)."""
    T = pool_ptr.size - 1
    pool_n = np.empty(T, np.int64)
    for t in range(T):
        pool_n[t] = pool_ptr[t + 1] - pool_ptr[t]
    rows = 0
    switches = 0
    fallbacks = 0
    for e in range(ev_t.size):
        tt = ev_t[e]
        j = ev_job[e]
        if ev_kind[e] == 0:
            ps = held_ps[j]
            out_ps[rows] = ps
            out_s[rows] = held_s[j]
            out_e[rows] = tt
            out_j[rows] = j
            rows += 1
            if ps >= 0:  # back into its type's sorted pool
                t = ps_type[ps]
                lo = pool_ptr[t]
                k = lo + pool_n[t]
                while k > lo and pool[k - 1] > ps:
                    pool[k] = pool[k - 1]
                    k -= 1
                pool[k] = ps
                pool_n[t] += 1
            continue
        ps = -1
        if not zeta[j]:
            t = job_ps_type[j]
            if 0 <= t < T and pool_n[t] > 0:
                idx = _bounded(pool_n[t], raw, st)
                if st[3] != 0:
                    return -1, switches, fallbacks
                lo = pool_ptr[t]
                ps = pool[lo + idx]
                for k in range(lo + idx, lo + pool_n[t] - 1):
                    pool[k] = pool[k + 1]
                pool_n[t] -= 1
            else:
                fallbacks += 1
        held_ps[j] = ps
        held_s[j] = tt
        switches += 1
    return rows, switches, fallbacks


# ------------------------------------------------------------------------------------------ fused A_greedy
# what stopped greedy_run before a job: the Python-side work it needs first
NEED_NONE, NEED_LOG, NEED_WINDOW, NEED_QUEUE, NEED_HEAP, NEED_LOG_ROW, NEED_ORDINARY = 0, 1, 2, 3, 4, 5, 6


@njit
def greedy_run(j0, j1, bounded, has_cloud, cloud_on, flush_at, win_cap, chunk_base, clock, nparts, track, acc,
               first_job, first_counts, first_cloud, D_arr, r_arr, p0_arr, p1_arr, dc_arr, wt_arr, keys, offsets,
               delay_edge, qual_ptr, qual_idx, worker_server, worker_type, order,
               qbuf, qlen, rem, key, inv_d, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast,
               cnt, served, worker, rho, seq, alpha, chunk_job, mark, touched, si, sf, ran,
               job_end, job_zeta, job_edge, job_cloud, end_part, arr_part, hk, hs, hi, used, rho_used):
    """A_greedy (the paper's Alg. 2) placing jobs ``j0 .. j1-1`` in one compiled loop: per job, exactly what
    :meth:`~.simulator.PaperSimulator.advance_to`, :meth:`~.simulator.PaperSimulator.candidates`,
    :func:`greedy` and :meth:`~.simulator.PaperSimulator.place` do, in the same order, on the same state.

    ``clock`` is ``[now, time of the last advance]`` and ``nparts`` ``[end partials, arrival partials]`` (read and
    written). ``track``: also keep the env's rewards in ``acc = [Φ, total, return, reward scale]``: per job, Φ as
    the simulator computes it (``math.fsum`` of the partials), the reward ``-(ΔΦ) / scale`` as the env's ``step``
    does, added in order to ``total`` and to ``return``. Returns ``(j, fallbacks, need, amount)``: ``j`` the first
    job not placed (``j1`` when all were), ``fallbacks`` the placed jobs with no qualified edge worker (sent whole to
    the cloud), and what stopped the loop before job ``j``: ``need`` is one of the ``NEED_*`` codes (Python-side work
    of the simulator: a buffer grown, the bounded history maintained; ``NEED_NONE`` when all were placed) and
    ``amount`` its size. The caller does it
    and calls again. Stopping never leaves a job half placed (at most the clock advanced to its arrival, as the
    ordinary path does first).

    ``first_job`` (``-1``: none): that job is placed as ``first_counts`` (chunks per edge worker) and
    ``first_cloud`` (chunks in the cloud) say instead of by A_greedy, the rest of it as for every job (a given
    first action followed by A_greedy's, as a look-ahead continues an action it did not choose)."""
    W = qlen.size
    q = np.empty(W)
    t_star = np.empty(W)
    wait = np.empty(W)
    a2w = np.empty(W)
    a2n = np.empty(W, dtype=np.int64)
    backlog = np.empty(W)
    counts = np.zeros(W, dtype=np.int64)
    fallbacks = 0
    npart = nparts[0]
    narr = nparts[1]
    j = j0
    need = NEED_NONE
    amount = 0
    while j < j1:
        r = r_arr[j]
        D = D_arr[j]
        # advance_to(r)
        if r != clock[1]:
            if log_need(cnt, plen, phead) > lw.size:
                need = NEED_LOG
                break
            now = clock[0] if clock[0] > r else r
            clock[0] = now
            advance(now, qbuf, qlen, rem, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast,
                    cnt)
            clock[1] = now
        # the bounded history's upkeep is Python-side
        if bounded and (cnt[LOG_N] > flush_at or offsets[j + 1] - chunk_base > win_cap):
            need = NEED_WINDOW
            break
        # CALCULATEQ
        p0 = p0_arr[j]
        wt = wt_arr[j]
        if wt < qual_ptr.size - 1:
            qual = qual_idx[qual_ptr[wt]:qual_ptr[wt + 1]]
        else:
            qual = qual_idx[0:0]
        candidates(qual, delay_edge[j], worker_server, r, keys[j], float(D), p0, qbuf, qlen, rem, key, inv_d, end,
                   ps, pe, pc, phead, plen, served, q, t_star, wait, a2w, a2n, backlog)
        if has_cloud:
            dc = dc_arr[j]
            qc0 = (dc + p0) / D
            qc1 = (dc + p1_arr[j]) / D
        else:
            dc = 0.0
            qc0 = INF
            qc1 = INF
        # A_greedy (or the given placement)
        if j == first_job:
            for w in range(W):
                counts[w] = first_counts[w]
            n_cloud = first_cloud
        elif cloud_on:
            n_cloud = greedy(q, order, D, p0, qc0, qc1, counts)
        else:
            n_cloud = greedy(q, order, D, p0, INF, INF, counts)
        no_edge = True  # no finite Q: no qualified edge worker can take the job
        for i in range(qual.size):
            if math.isfinite(q[qual[i]]):
                no_edge = False
                break
        if n_cloud < 0:
            n_cloud = D
        if n_cloud and not has_cloud:  # the ordinary path raises its error
            for w in range(W):
                counts[w] = 0
            need = NEED_ORDINARY
            break
        # the placement's checks (check_counts) and the room it needs
        n_edge, n_used, c_min, c_max, bad_type, q_max = check_counts(
            counts, worker_type, wt, delay_edge[j], worker_server, r, used, rho_used, qlen)
        bound_nt = 1  # jobs place_edge can touch: at most those queued on the used workers, and j
        for ii in range(n_used):
            w = used[ii]
            bound_nt += qlen[w] + counts[w]
        if n_used and q_max + c_max > qbuf.shape[1]:
            need = NEED_QUEUE
            amount = c_max
        elif cnt[HEAP_N] + bound_nt > hk.size:
            need = NEED_HEAP
            amount = bound_nt
        elif bounded and n_cloud and log_need(cnt, plen, phead) + 1 > lw.size:
            need = NEED_LOG_ROW
        if need != NEED_NONE:
            for ii in range(n_used):
                counts[used[ii]] = 0
            break
        # place
        zeta = n_cloud == D
        job_zeta[j] = zeta
        if bounded:
            c = offsets[j] - chunk_base
            init_slots(j, c, D, 1.0 / D, chunk_job, inv_d, worker, end, rem, key, seq, ran)
        else:
            c = offsets[j]
        if n_cloud:
            p = p1_arr[j] if zeta else p0
            start = r + dc
            al = qc1 if zeta else qc0
            for cc in range(c, c + n_cloud):
                worker[cc] = -1
                rho[cc] = start
                end[cc] = start + p
                alpha[cc] = al
            if bounded:
                n = cnt[LOG_N]
                lw[n] = -1
                ls[n] = start
                le[n] = start + p
                lc[n] = c
                cnt[LOG_N] = n + 1
            c += n_cloud
        if n_used:
            clock[1] = -INF
            nt = place_edge(j, used[:n_used], counts, r, rho_used[:n_used], keys[j], p0, float(D), q, a2n, c,
                            worker, rho, key, seq, rem, end, alpha, qbuf, qlen, wsync, ps, pe, pc, phead, plen, hstart,
                            hend, lw, ls, le, lc, llast, cnt, chunk_job, mark, touched, si, sf)
        else:
            touched[0] = j
            nt = 1
        job_edge[j] = n_edge
        job_cloud[j] = n_cloud
        npart = update_jobs(touched, nt, offsets, chunk_base, end, job_end, end_part, npart, hk, hs, hi, cnt)
        narr = msum_add(arr_part, narr, r)
        for ii in range(n_used):
            counts[used[ii]] = 0
        if no_edge:
            fallbacks += 1
        if track:
            phi = msum_total(end_part, npart) - msum_total(arr_part, narr)
            reward = -(phi - acc[0]) / acc[3]
            acc[0] = phi
            acc[1] += reward
            acc[2] += reward
        j += 1
    nparts[0] = npart
    nparts[1] = narr
    return j, fallbacks, need, amount


@njit
def _max_plan(plen):
    """The longest plan (``plen.max(initial=0)``): the plans' live columns."""
    n = 0
    for w in range(plen.size):
        if plen[w] > n:
            n = plen[w]
    return n


@njit
def _grown_rows(a, cap, n):
    """A buffer of ``cap`` entries with ``a``'s first ``n`` copied (the rest unset: past the live part)."""
    out = np.empty(cap, dtype=a.dtype)
    for i in range(n):
        out[i] = a[i]
    return out


@njit
def _grown_cols(a, cap, n):
    """A (rows, ``cap``) buffer with ``a``'s first ``n`` columns copied (the rest unset)."""
    out = np.empty((a.shape[0], cap), dtype=a.dtype)
    for w in range(a.shape[0]):
        for k in range(n):
            out[w, k] = a[w, k]
    return out


@njit
def greedy_score(j0, j1, bounded, has_cloud, cloud_on, flush_at, win_cap, chunk_base, clock, nparts, acc,
                 first_job, first_counts, first_cloud, D_arr, r_arr, p0_arr, p1_arr, dc_arr, wt_arr, keys, offsets,
                 delay_edge, qual_ptr, qual_idx, worker_server, worker_type, order,
                 qbuf, qlen, rem, key, inv_d, end, wsync, ps, pe, pc, phead, plen, hstart, hend, lw, ls, le, lc, llast,
                 cnt, served, worker, rho, seq, alpha, chunk_job, mark, touched, si, sf, ran,
                 job_end, job_zeta, job_edge, job_cloud, end_part, arr_part, hk, hs, hi, used, rho_used):
    """:func:`greedy_run` with ``track`` on copies of the state it changes, so that the state passed in is left as it
    was: the rewards of a look-ahead without a copy of the simulator (``acc = [Φ, total, return, reward scale]``
    receives them, as :func:`greedy_run` adds them). The log's and the queues' growth (``NEED_LOG``,
    ``NEED_LOG_ROW``, ``NEED_QUEUE``: :meth:`~.simulator.PaperSimulator._ensure_log` and ``_ensure_queue``) is done
    here on the copies, and the loop goes on; any other need stops it. Returns :func:`greedy_run`'s ``(j, fallbacks,
    need, amount)`` at the end: a caller that needs all of ``j0 .. j1-1`` placed discards the result when ``need``
    is not ``NEED_NONE``.

    Copied by their live part only (the rest is never read before it is written): the workers' plans (a worker's
    plan is ``[phead, plen)``), the log (rows ``[0, cnt[LOG_N])``; ``llast`` points below) and the completion heap
    (``[0, cnt[HEAP_N])``). Shared, not copied: the scratch arrays each call writes before it reads (``served``,
    all zero again on return; ``mark``, cleared after each placement; ``touched``, ``si``, ``sf``, ``used``,
    ``rho_used``); the rest whole."""
    W = plen.size
    n = _max_plan(plen)
    ps2 = _grown_cols(ps, ps.shape[1], n)
    pe2 = _grown_cols(pe, pe.shape[1], n)
    pc2 = _grown_cols(pc, pc.shape[1], n)
    qbuf2 = qbuf.copy()
    si2 = si
    sf2 = sf
    cnt2 = cnt.copy()
    m = cnt[LOG_N]
    lw2 = _grown_rows(lw, lw.size, m)
    ls2 = _grown_rows(ls, ls.size, m)
    le2 = _grown_rows(le, le.size, m)
    lc2 = _grown_rows(lc, lc.size, m)
    m = cnt[HEAP_N]
    hk2 = _grown_rows(hk, hk.size, m)
    hs2 = _grown_rows(hs, hs.size, m)
    hi2 = _grown_rows(hi, hi.size, m)
    clock2 = clock.copy()
    nparts2 = nparts.copy()
    qlen2 = qlen.copy()
    rem2 = rem.copy()
    key2 = key.copy()
    inv_d2 = inv_d.copy()
    end2 = end.copy()
    wsync2 = wsync.copy()
    phead2 = phead.copy()
    plen2 = plen.copy()
    hstart2 = hstart.copy()
    hend2 = hend.copy()
    llast2 = llast.copy()
    worker2 = worker.copy()
    rho2 = rho.copy()
    seq2 = seq.copy()
    alpha2 = alpha.copy()
    chunk_job2 = chunk_job.copy()
    ran2 = ran.copy()
    job_end2 = job_end.copy()
    job_zeta2 = job_zeta.copy()
    job_edge2 = job_edge.copy()
    job_cloud2 = job_cloud.copy()
    end_part2 = end_part.copy()
    arr_part2 = arr_part.copy()
    j = j0
    fallbacks = 0
    while True:
        j, fb, need, amount = greedy_run(
            j, j1, bounded, has_cloud, cloud_on, flush_at, win_cap, chunk_base, clock2, nparts2, True, acc, first_job,
            first_counts, first_cloud, D_arr, r_arr, p0_arr, p1_arr, dc_arr, wt_arr, keys, offsets, delay_edge,
            qual_ptr, qual_idx, worker_server, worker_type, order, qbuf2, qlen2, rem2, key2, inv_d2, end2, wsync2,
            ps2, pe2, pc2, phead2, plen2, hstart2, hend2, lw2, ls2, le2, lc2, llast2, cnt2, served, worker2, rho2,
            seq2, alpha2, chunk_job2, mark, touched, si2, sf2, ran2, job_end2, job_zeta2, job_edge2, job_cloud2,
            end_part2, arr_part2, hk2, hs2, hi2, used, rho_used)
        fallbacks += fb
        if need == NEED_LOG or need == NEED_LOG_ROW:  # _ensure_log(0 or 1) on the copies
            want = log_need(cnt2, plen2, phead2) + (1 if need == NEED_LOG_ROW else 0)
            if want <= lw2.size:  # (not reached: the loop stopped for this room)
                return j, fallbacks, need, amount
            cap = max(want, 2 * lw2.size)
            m = cnt2[LOG_N]
            lw2 = _grown_rows(lw2, cap, m)
            ls2 = _grown_rows(ls2, cap, m)
            le2 = _grown_rows(le2, cap, m)
            lc2 = _grown_rows(lc2, cap, m)
        elif need == NEED_QUEUE:  # _ensure_queue(amount) on the copies
            qcap = qbuf2.shape[1]
            want = amount
            for w in range(W):
                if qlen2[w] + amount > want:
                    want = qlen2[w] + amount
            if want <= qcap:  # (not reached, as above)
                return j, fallbacks, need, amount
            else:
                cap = max(want, 2 * qcap)
                qbuf2 = _grown_cols(qbuf2, cap, qcap)
                si2 = np.empty((4, cap), dtype=si.dtype)
                sf2 = np.empty((4, cap), dtype=sf.dtype)
                n = _max_plan(plen2)
                ps2 = _grown_cols(ps2, 2 * cap + 2, n)
                pe2 = _grown_cols(pe2, 2 * cap + 2, n)
                pc2 = _grown_cols(pc2, 2 * cap + 2, n)
        else:
            return j, fallbacks, need, amount
