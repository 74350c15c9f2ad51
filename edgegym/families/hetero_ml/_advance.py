"""Compiled multi-step loop of the ``earliest`` rule (HeteroML): ``HeteroMLEnv.advance_earliest``'s kernel.

``earliest`` (``edgegym.agents.baselines.hetero_ml.Earliest``) takes, among the valid grid actions with the first
(no) delay, the one of least estimated completion ``start + duration`` (:meth:`HeteroMLEnv.grid_estimates`), the
lowest action index among equals. :func:`earliest_steps` takes such steps one after another in one compiled call,
with the env's own kernels (:mod:`._kernels`) for everything that changes the state, and no observation:

* the pending job's configurations and mask: :func:`._kernels.job_grid`;
* the servers' usage profiles at the decision time: :func:`._kernels.server_profiles_after` (or
  :func:`._kernels.server_profiles`), as ``prepare_rows`` computes them;
* the chosen action: :func:`earliest_choice`, the first pass of :func:`._kernels.grid_estimates_on` (the one for the
  first delay, which it computes without reference to the others) restricted to what the argmin needs. It visits
  the same candidate starts and the configurations in the same order, with the same incremental residual (a function
  of the window alone), and only skips a configuration whose completion cannot be below the best one found so far
  (its start is at least the current candidate start), or equal to it with a lower action index. The estimates it
  does compute are therefore ``grid_estimates``'s, and so is the argmin;
* the commit: :func:`._kernels.decode_commit` from the estimated start (as ``HeteroMLEnv._decode_commit`` does when
  the estimates are at hand), with the profiles at the decision time.

Whenever the env's step would leave its compiled path (a price tie within rounding, status 2 of a search; no valid
action without delay, where ``earliest`` asks the env's per-action search), the loop stops before that step without
writing anything, and the env takes that step on its ordinary path.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.jit import njit
from ._kernels import (
    _breakpoints,
    _caps_of,
    _extend_window,
    _first_residual,
    _fits_cached,
    _free_over_profiles,
    _residual_next,
    _stable_order,
    decode_commit,
    duration,
    fits,
    job_grid,
    server_profiles,
    server_profiles_after,
)

__all__ = ["earliest_choice", "earliest_steps"]

#: :func:`earliest_steps`'s reasons to stop
DONE, AMBIGUOUS, NO_ACTION = 0, 1, 2
#: configurations :func:`earliest_choice` tests at the first candidate start alone before the full search
PROBE = 4


@njit
def earliest_choice(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, W, v, psu, ra, grad, now, delays, m4, n4,
                    q4, p4, mask, cfree, ccaps, pp, cnt, times, vals):
    """``earliest``'s action on the servers' profiles at ``now`` (see the module docstring): ``(status, action,
    estimated start, estimated duration)``; status 1, 2 (a price tie within rounding: undecided) or 0 (no valid
    configuration fits at any candidate start)."""
    G = mask.shape[0]
    nd = delays.shape[0]
    H, R = cap.shape
    M = wres.shape[0]
    start, dur = rec[0], rec[1]
    NC = G // nd
    cd = np.zeros(NC, dtype=np.int64)
    todo = np.zeros(NC, dtype=np.bool_)
    n_todo = 0
    for c in range(NC):
        a = c * nd
        if not mask[a]:
            continue
        todo[c] = True
        n_todo += 1
        m = m4[a]
        comm = 2.0 * grad * 8.0 / (wbw[m] * 1000.0) / 3600.0
        cd[c] = duration(W, v[m], psu[p4[a]] if ps_arch else 0.0, ra, comm, n4[a], q4[a] == 0, ps_arch)
    if n_todo == 0:
        return 0, -1, -1, 0
    t0 = now + delays[0]
    cdd = np.maximum(cd, 1)
    by_d = _stable_order(cdd)
    # the first candidate alone, each tested configuration's residual computed directly (the same numbers as the
    # incremental residual below): conclusive when a configuration fits at t0 and none that failed there could
    # still beat it at a later candidate (> t0); otherwise the full search below decides
    if PROBE > 0:
        free1 = np.empty((H, R))
        b_c, b_comp, tests, failed, cut = -1, 0, 0, 0, False
        fail_c = np.empty(PROBE, dtype=np.int64)
        for bi in range(NC):
            c = by_d[bi]
            if not todo[c]:
                continue
            if b_c >= 0 and (t0 + cd[c] > b_comp or (t0 + cd[c] == b_comp and c > b_c)):
                continue
            if tests == PROBE:
                cut = True
                break
            tests += 1
            _free_over_profiles(pp, cnt, times, vals, cap, t0, cdd[c], free1)
            a = c * nd
            st = fits(free1, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m4[a], p4[a], n4[a], q4[a] == 1, False)
            if st == 2:
                return 2, -1, -1, 0
            if st == 1:
                comp = t0 + cd[c]
                if b_c < 0 or comp < b_comp or (comp == b_comp and c < b_c):
                    b_c, b_comp = c, comp
            else:
                fail_c[failed] = c
                failed += 1
        if not cut and b_c >= 0:
            open_ = False
            for i in range(failed):
                c = fail_c[i]
                if not (t0 + 1 + cd[c] > b_comp or (t0 + 1 + cd[c] == b_comp and c > b_c)):
                    open_ = True
            if not open_:
                return 1, b_c * nd, t0, cd[b_c]
    # the later candidate times, the reservation ends after t0 (sorted), are listed when t0 does not settle it
    ne = -1
    ends = np.empty(0, dtype=np.int64)
    # an achievable completion: every valid configuration fits the empty cluster, which it is from the last
    # reservation end (a candidate start) on; a configuration that cannot complete by then is dropped at once
    t_last = t0
    for j in range(k):
        if start[j] + dur[j] > t_last:
            t_last = start[j] + dur[j]
    ub = -1
    for c in range(NC):
        if todo[c] and (ub < 0 or t_last + cd[c] < ub):
            ub = t_last + cd[c]
    for c in range(NC):
        if todo[c] and t0 + cd[c] > ub:
            todo[c] = False
            n_todo -= 1
    # every breakpoint after now of every server, by time: (time, piece row, server)
    ev_t, ev_i, ev_h = _breakpoints(H, pp, cnt, times)
    used = np.empty((H, R))
    free = np.full((H, R), np.nan)
    caps_hm = np.zeros((H, M))
    tot_m = np.zeros(M)
    fmax = np.full(R, -math.inf)
    fmax_h = np.full(R, -1, dtype=np.int64)
    col_stale = np.zeros(R, dtype=np.bool_)
    cmax = np.zeros(M)
    cmax_h = np.full(M, -1, dtype=np.int64)
    cm_stale = np.zeros(M, dtype=np.bool_)
    dirty = np.zeros(H, dtype=np.bool_)  # :func:`_first_residual` derives every row at the first candidate
    dlist = np.empty(H, dtype=np.int64)
    n_dirty = 0
    # each server's piece at the current candidate and the servers a window raised since (``_residual_next``)
    qcur = np.empty(H, dtype=np.int64)
    hit = np.zeros(H, dtype=np.bool_)
    hlist = np.empty(H, dtype=np.int64)
    n_hit = 0
    e_at = 0  # the first breakpoint after the current candidate
    first = True
    best_c = -1  # the configuration of least completion so far (lowest index among equals)
    best_t = -1
    best_comp = 0
    ci = -2
    while n_todo > 0:
        ci += 1
        t = t0
        if ci >= 0:
            if ne < 0:
                ne = 0
                for j in range(k):
                    if start[j] + dur[j] > t0:
                        ne += 1
                ends = np.empty(ne, dtype=np.int64)
                i = 0
                for j in range(k):
                    if start[j] + dur[j] > t0:
                        ends[i] = start[j] + dur[j]
                        i += 1
                ends.sort()
            if ci >= ne:
                break
            t = ends[ci]
            if ci > 0 and t == ends[ci - 1]:
                continue
        # drop what cannot beat the best (or the achievable completion) any more, before the residual at t
        for c in range(NC):
            if todo[c] and (t + cd[c] > ub or best_c >= 0 and (
                    t + cd[c] > best_comp or (t + cd[c] == best_comp and c > best_c))):
                todo[c] = False
                n_todo -= 1
        if n_todo == 0:
            break
        e = np.searchsorted(ev_t, t, side="right")
        if first:  # every server's piece at t, then the residual rows and what derives from them
            _first_residual(t, pp, cnt, times, vals, cap, wres, used, free, cfree, ccaps, caps_hm, qcur, tot_m, cmax,
                            cmax_h, fmax, fmax_h)
        else:  # the candidates only move forward: the servers that can differ alone
            n_dirty = _residual_next(t, e_at, e, ev_h, pp, cnt, times, vals, used, dirty, dlist, n_dirty, qcur, hit,
                                     hlist, n_hit)
            n_hit = 0
        first = False
        e_at = e
        for bi in range(NC):
            c = by_d[bi]
            if not todo[c]:
                continue
            if t + cd[c] > ub or best_c >= 0 and (
                    t + cd[c] > best_comp or (t + cd[c] == best_comp and c > best_c)):
                todo[c] = False
                n_todo -= 1
                continue
            end = t + cdd[c]
            e, n_dirty, n_hit = _extend_window(end, e, ev_t, ev_i, ev_h, vals, used, dirty, dlist, n_dirty, hit, hlist,
                                               n_hit)
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
            st = _fits_cached(free, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, m4[a], p4[a], n4[a], q4[a] == 1,
                              caps_hm, tot_m, fmax, cmax)
            if st == 2:
                return 2, -1, -1, 0
            if st == 1:
                todo[c] = False
                n_todo -= 1
                comp = t + cd[c]
                if best_c < 0 or comp < best_comp or (comp == best_comp and c < best_c):
                    best_c, best_t, best_comp = c, t, comp
    if best_c < 0:
        return 0, -1, -1, 0
    return 1, best_c * nd, best_t, cd[best_c]


@njit
def earliest_steps(rec, colocated, k0, steps, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, chunks, work, v, psu, ra,
                   grad, now_of, weight, arrival, flow, scale, fracs, zf, feas, delays, cfree, ccaps, prof_k, opp, ocnt,
                   otimes, ovals, grid_done, m4j, n4j, q4j, p4j, maskj, act_o, start_o, dur_o, r_o, off_o, rows_o,
                   fr_o):
    """Up to ``steps`` steps of ``earliest`` from the pending job ``k0`` (see the module docstring), committed into
    ``rec``/``colocated`` as the env's step commits them. Per step i: the action (``act_o``), start and duration
    (``start_o``, ``dur_o``), the reward ``-w (c - a) / scale`` (``-w c / scale`` without ``flow``; the step's own
    arithmetic, ``r_o``) and the ledger's pending commit (servers ``rows_o[off_o[i]:off_o[i + 1]]``, their footprint
    rows ``fr_o[...]``). ``opp, ocnt, otimes, ovals``: the servers' usage profiles of the committed jobs < ``prof_k``
    at job ``prof_k``'s decision time, where ``prof_k`` is ``k0`` or ``k0 - 1`` (else they are not used).
    ``m4j, n4j, q4j, p4j, maskj`` (J, grid): every job's configurations and mask (:func:`._kernels.job_grid`, a function
    of the job and the cluster alone), filled here for the jobs whose ``grid_done`` is false: a cache of the jobs
    table, shared by the forks with that table and written in place (like the env's other caches, not for forks
    stepped in parallel threads).
    Returns ``(steps taken, reason, profiles k, pp, cnt, times, vals)``: the reason it stopped (:data:`DONE`,
    :data:`AMBIGUOUS`, :data:`NO_ACTION`: the next step needs the env's ordinary path) and the profiles of the last
    decision it computed (of the jobs < profiles k; profiles k = -1: none)."""
    H, R = cap.shape
    pk = prof_k
    pp, cnt, times, vals = opp, ocnt, otimes, ovals
    off_o[0] = 0
    taken = 0
    reason = DONE
    for i in range(steps):
        k = k0 + i
        now = now_of[k]
        m4, n4, q4, p4, mask = m4j[k], n4j[k], q4j[k], p4j[k], maskj[k]
        if not grid_done[k]:
            job_grid(chunks[k], fracs, delays.shape[0], cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, zf, psu[k],
                     feas, m4, n4, q4, p4, mask)
            grid_done[k] = True
        if pk != k:
            if k >= 1 and pk == k - 1 and pp.shape[0] == H + 1 and times[pp[0]] <= now:
                pp, cnt, times, vals = server_profiles_after(k, now, rec, wres, pres, ps_arch, H, R, pp, cnt, times,
                                                             vals)
            else:
                pp, cnt, times, vals = server_profiles(k, now, rec, wres, pres, ps_arch, H, R)
            pk = k
        st, a, t_est, d_est = earliest_choice(rec, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam, work[k], v[k],
                                              psu[k], ra[k], grad[k], now, delays, m4, n4, q4, p4, mask, cfree,
                                              ccaps, pp, cnt, times, vals)
        if st != 1:
            reason = AMBIGUOUS if st == 2 else NO_ACTION
            break
        t0 = now + delays[0]
        if d_est >= 1 and t_est >= t0:
            t0 = t_est
        m, n, p = m4[a], n4[a], p4[a]
        cst, t, d, nw, col, rows, fr = decode_commit(rec, colocated, k, cap, wres, pres, wbw, pbw, cbar, ps_arch, lam,
                                                     work[k], v[k], psu[k], ra[k], grad[k], m, p, n, q4[a] == 1, t0,
                                                     pp, cnt, times, vals)
        if cst != 1:
            reason = AMBIGUOUS
            break
        act_o[i] = a
        start_o[i] = t
        dur_o[i] = d
        r_o[i] = -weight[k] * (t + d - (arrival[k] if flow else 0)) / scale
        o = off_o[i]
        for q in range(rows.shape[0]):
            rows_o[o + q] = rows[q]
            for r in range(R):
                fr_o[o + q, r] = fr[q, r]
        off_o[i + 1] = o + rows.shape[0]
        taken += 1
    return taken, reason, pk, pp, cnt, times, vals
