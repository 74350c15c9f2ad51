"""Pure numpy reference implementations of WirelessUDL's per-step work (the oracle of the compiled kernels).

These are the candidate table, the v1 pruning, the committed plan's run and the observation as they were written
before the per-step kernels of ``_kernels.py`` (``candidate_table``, ``run_plan``, ``observe``) replaced them on
the hot path: the same operations in numpy, step by step. ``tests/speed/test_speed_wireless_udl.py`` checks
that the compiled versions give identical (``==``) tables, masks, observations, rewards and episode metrics.
``WirelessUDLEnv(..., )._use_reference = True`` makes an env run these instead of the kernels.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import _kernels as kn
from .candidates import NOW, WAIT, Candidates, earliest_fit, worker_grid  # earliest_fit: the same wrapper, re-exported
from .simulator import EPS, Plan, Simulator, job_latency_cost, tentative

__all__ = ["build_candidates", "commit", "earliest_fit", "n_cap", "observation", "pa_all_n", "prune", "window_table"]


def _peak(dem, U, cap):
    """Peak utilisation, after adding ``dem``, over the (site, resource) pairs ``dem`` uses."""
    used = (dem > 0) & (cap > 0)
    if not used.any():
        return 0.0
    return float(min(max(((cap[used] - U[used] + dem[used]) / cap[used]).max(), 0.0), 1.0))


def build_candidates(sim: Simulator, i: int, G: int, wait_max: int) -> Candidates:
    """The 2·G candidate plans of pending job ``i`` at slot ``sim.t`` (numpy reference)."""
    inst, st = sim.inst, sim.static
    t, R = sim.t, inst.num_sites
    M = sim.M[i]
    a_i = int(inst.arrival[i])
    tab = tentative(inst, st, i, inst.cap, M, t, sim.offset, sim.prop)
    n_tent = tab["best"]
    tab_u = tentative(inst, st, i, sim.cal[t], M, t, sim.offset, sim.prop)
    n_now = tab_u["best"] or n_tent
    Ns = worker_grid(tab["n_max"], G, (n_tent, n_now))
    C = 2 * G
    mode = np.tile(np.array([NOW, WAIT]), G)
    Nc = np.zeros(C, np.int64)
    lc = np.zeros(C, np.int64)
    start = np.full(C, -1, np.int64)
    ps = np.full(C, -1, np.int64)
    y = np.zeros((C, R), np.int64)
    transfer = np.zeros(C)
    param = np.zeros(C)
    latency = np.zeros(C)
    peak = np.zeros(C)
    mask = np.zeros(C, bool)
    order_c, _ = kn.site_order(inst.cap, inst.cap, st.qbar, M, inst.data[i], *st.beta)
    kap = int(inst.kappa[i])
    for j in range(G):
        N = int(Ns[min(j, Ns.size - 1)])
        real = j < Ns.size
        win = int(tab["l"][N])
        psC = int(tab["ps"][N])
        for r in (2 * j, 2 * j + 1):
            Nc[r], lc[r] = N, win
        if psC < 0 or not real:
            continue
        yC = kn.fill(inst.cap, order_c, inst.m[i], inst.n[i], N, psC)
        demC = sim.demand(i, yC, psC)
        # ---- now
        r = 2 * j
        if t + win <= sim.calendar_len:
            Uw = sim.free_window(t, win)
            if np.all(demC <= Uw + EPS):
                y[r], ps[r] = yC, psC
                param[r], transfer[r] = tab["param"][N], tab["transfer"][N]
                ok = True
            else:
                order_u, _ = kn.site_order(Uw, inst.cap, st.qbar, M, inst.data[i], *st.beta)
                unit, y1, ps1 = kn.pa(Uw, order_u, inst.q, inst.m[i], inst.n[i], N, st.tie_le)
                ok = ps1 >= 0
                if ok:
                    c = kn.window_transfer(y1, M, inst.data[i], kap, win, order_u, inst.q, st.src_order, sim.prop,
                                           inst.cap, st.qbar, st.beta)
                    y[r], ps[r] = y1, ps1
                    param[r] = win * inst.param_mb[i] * unit
                    transfer[r] = inst.chunk_mb[i] * c
            if ok:
                start[r] = t
                latency[r] = job_latency_cost(inst, i, t + win - 1 - a_i + sim.offset)
                peak[r] = _peak(sim.demand(i, y[r], int(ps[r])), Uw, inst.cap)
                mask[r] = True
        # ---- wait
        r = 2 * j + 1
        s = earliest_fit(sim.cal, demC, t, win)
        if s >= 0:
            y[r], ps[r], start[r] = yC, psC, s
            param[r], transfer[r] = tab["param"][N], tab["transfer"][N]
            latency[r] = job_latency_cost(inst, i, s + win - 1 - a_i + sim.offset)
            peak[r] = _peak(demC, sim.free_window(s, win), inst.cap)
            mask[r] = True
    late = mask & (mode == WAIT) & (start - t > wait_max)
    if (mask & ~late).any():
        mask &= ~late
    total = np.where(mask, transfer + param + latency, np.inf)
    return Candidates(mode=mode, N=Nc, win=lc, start=start, ps=ps, y=y, transfer=transfer, param=param,
                      latency=latency, total=total, peak=peak, mask=mask, n_tent=int(n_tent), n_now=int(n_now),
                      n_max=int(tab["n_max"]))


def prune(c: Candidates, ratio) -> Candidates:
    """v1 (``env.prune_ratio``): candidates estimated above ``ratio`` × the cheapest legal one are masked."""
    if ratio is None or not c.mask.any():
        return c
    keep = c.mask & (c.total <= ratio * c.total[c.mask].min())
    return dataclasses.replace(c, mask=keep, total=np.where(keep, c.total, np.inf))


def commit(sim: Simulator, plan: Plan) -> float:
    """``Simulator.commit`` slot by slot with ``Simulator.execute`` (numpy reference; mutates ``sim``)."""
    err = sim.check_plan(plan)
    if err:
        raise ValueError(f"illegal plan: {err}")
    i = plan.job
    y = np.asarray(plan.y, dtype=np.int64)
    N = int(y.sum())
    win = sim.window(i, N)
    sim.cal[plan.start:plan.start + win] -= sim.demand(i, y, plan.ps)
    M = sim.M[i]
    tr = pa = 0.0
    for s in range(win):
        a, b, _ = sim.execute(i, plan.start + s, y, plan.ps, M)
        tr += a
        pa += b
    assert M.sum() == 0, "a committed window must train all data"  # internal invariant
    sim.start[i], sim.t_last[i] = plan.start, plan.start + win - 1
    sim.plan_l[i], sim.plan_y[i], sim.plan_ps[i] = win, y, plan.ps
    sim.transfer[i], sim.param[i] = tr, pa
    sim.worker_slots += N * win
    sim.lat_cost[i] = float(job_latency_cost(sim.inst, i, sim.latency_of(i, plan.start + win - 1)))
    sim.status[i] = 2
    return float(tr + pa + sim.lat_cost[i])


def observation(env) -> np.ndarray:
    """``WirelessUDLEnv``'s observation, computed with numpy from the env's state (reference)."""
    # the env's feature tables, read from the env's own class (this module must not import ``env``: no cycle)
    CAND_FEATURES, ROW_EXTRA_FEATURES = type(env).CAND_FEATURES, type(env).ROW_EXTRA_FEATURES

    p, inst, sim = env.preset, env.inst, env.sim
    R, Rm, K, H = inst.num_sites, env.R_max, env.K, p.env.calendar_slots
    i = min(env._k, inst.num_jobs - 1)
    nz = env._norm
    parts = []
    T = inst.horizon_slots
    rel = p.env.obs_relative
    parts.append([0.0, 0.0] if rel else [min(sim.t / T, p.env.cap_factor), env._k / inst.num_jobs])
    if env.mode == "commit":
        active = np.sum((sim.start >= 0) & (sim.start <= sim.t) & (sim.t_last >= sim.t))
    else:
        active = np.sum(sim.status == 1)
    parts.append([active / (R if rel else inst.num_jobs)])
    site_mask = np.zeros(Rm)
    site_mask[:R] = 1
    parts.append(site_mask)
    pm = np.zeros(Rm)
    qmax = inst.q.max()
    if R > 1 and qmax > 0:
        pm[:R] = inst.q.sum(axis=1) / (R - 1) / qmax
    parts.append(pm)
    free = np.zeros((Rm, K, H))
    with np.errstate(divide="ignore", invalid="ignore"):
        if env.mode == "commit":
            win = sim.cal[sim.t:sim.t + H]
            fr = np.where(inst.cap > 0, win / inst.cap, 0.0)  # (h, R, K)
            free[:R, :, : fr.shape[0]] = np.transpose(fr, (1, 2, 0))
        else:
            fr = np.where(inst.cap > 0, (inst.cap - sim.usage) / inst.cap, 0.0)
            free[:R] = fr[:, :, None]
    parts.append(free.ravel())
    parts.append([inst.kappa[i] / nz["kappa"], inst.chunk_mb[i] / nz["chunk"], inst.param_mb[i] / nz["param"]])
    kind = np.zeros(3)
    kind[inst.kind[i] if inst.kind[i] < 3 else 0] = 1  # the logistic shares the exponential's slot
    parts.append(kind)
    parts.append(np.array([inst.tau[i], inst.b[i], inst.tau1[i], inst.tau2[i], inst.c[i]]) / nz["params"])
    parts.append(inst.m[i] / nz["cap"])
    parts.append(inst.n[i] / nz["cap"])
    D = inst.data[i].sum()
    parts.append([D / nz["data"]])
    df = np.zeros(Rm)
    df[:R] = inst.data[i] / D
    parts.append(df)
    parts.append([min(-(-D // inst.kappa[i]), sim.static.n_cap[i]) / nz["nmax"]])
    C = 2 * env.G
    clip = p.env.cost_clip
    tbl = env.obs_table()  # the commit mode's candidates, or the replan mode's worker-rule rows (or None)
    if tbl is not None:
        c = tbl
        ok = c.mask
        nmax = max(c.n_max, 1)
        remote = np.where(ok, c.N - c.y[np.arange(C), np.maximum(c.ps, 0)], 0) / np.maximum(c.N, 1)
        S = env.reward_scale
        feats = [
            np.where(ok, c.N / nmax, 0), np.where(ok, c.win / p.max_window_slots, 0),
            np.where(ok, (c.start - sim.t) / max(sim.calendar_len, 1), 0), remote,
            np.where(ok, c.transfer / S, 0), np.where(ok, c.param / S, 0), np.where(ok, c.latency / S, 0),
            np.where(ok, c.transfer / S + c.param / S + c.latency / S, 0), np.where(ok, c.peak, 0),
            ok.astype(float),
        ]
    else:
        feats = [np.zeros(C)] * len(CAND_FEATURES)
    if p.env.obs_rows:  # v1: (C, F) row-major, plus the cost relative to the cheapest row and the N_tent flag
        if tbl is not None and tbl.mask.any():
            c = tbl
            rel_cost = np.where(c.mask, (c.total - c.total[c.mask].min()) / env.reward_scale, 0)
            feats = feats + [rel_cost, np.where(c.mask & (c.N == c.n_tent), 1.0, 0.0)]
        else:
            feats = feats + [np.zeros(C)] * len(ROW_EXTRA_FEATURES)
        feats = [np.stack([np.asarray(f, dtype=float) for f in feats], axis=1)]
    for f in feats:
        parts.append(f)
    obs = np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in parts])
    obs = np.nan_to_num(obs, nan=0.0, posinf=clip, neginf=0.0)
    return np.clip(obs, env.observation_space.low, env.observation_space.high).astype(np.float32)


# --------------------------------------------------------------------------- per-instance constants
def _max_workers_all(cap, m, n_sub):
    """(n_jobs, R) most workers of each job per site with ``n_sub`` (n_jobs, K) reserved (vectorised max_workers)."""
    free = cap[None, :, :] - n_sub[:, None, :]  # (n_jobs, R, K)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_k = np.where(m[:, None, :] > 0, np.floor(free / m[:, None, :] + 1e-9), np.inf)
    a = per_k.min(axis=2)
    a = np.where(np.any(free < -EPS, axis=2), 0, a)
    return np.minimum(np.maximum(a, 0), kn.BIG)


def n_cap(inst) -> np.ndarray:
    """(n_jobs,) most workers each job can place on the empty cluster (one PS included), at least 1 (numpy
    reference of ``simulator._n_cap``)."""
    a0 = _max_workers_all(inst.cap, inst.m, np.zeros_like(inst.n))
    a1 = _max_workers_all(inst.cap, inst.m, inst.n)
    ps_ok = np.all(inst.cap[None, :, :] >= inst.n[:, None, :] - EPS, axis=2)  # (n_jobs, R)
    tot = a0.sum(axis=1, keepdims=True) - a0 + a1
    best = np.where(ps_ok, tot, 0).max(axis=1) if inst.num_sites else np.zeros(inst.num_jobs)
    return np.maximum(1, np.minimum(best, kn.BIG)).astype(np.int64)


# --------------------------------------------------------------------------- kernels rewritten for speed
def pa_all_n(U, order, q, m, n, n_max, tie_le):
    """PA for every N in 1..n_max (reference of ``_kernels.pa_all_n``): the element-by-element loop it replaced,
    in plain Python (each PS site's fill along ``order``, each N compared as it is reached)."""
    R, K = U.shape
    mw = kn.PURE["max_workers"]
    cost = np.full(n_max + 1, np.inf)
    best_ps = np.full(n_max + 1, -1, np.int64)
    A0 = [mw(U[r], m, n, False) for r in range(R)]
    for rt in range(R):
        if any(U[rt, k] < n[k] - 1e-9 for k in range(K)):
            continue
        N, filled, c = 1, 0, 0.0
        for j in range(R):
            r = order[j]
            a = mw(U[r], m, n, True) if r == rt else A0[r]
            if a <= 0:
                continue
            top = filled + a
            while N <= n_max and N <= top:
                cN = c + (N - filled) * q[r, rt]
                if cN < cost[N] or (tie_le and cN <= cost[N]):
                    cost[N] = cN
                    best_ps[N] = rt
                N += 1
            if N > n_max:
                break
            c += a * q[r, rt]
            filled = top
    return cost, best_ps


def window_table(tot, kappa, w, offset):
    """``(n_jobs, w)`` window ends ``ceil(tot/(κN)) − 1 + offset`` (reference of ``_kernels.window_table``: the
    numpy expression ``candidates._job_table`` used)."""
    nj = tot.shape[0]
    Ns = np.arange(w, dtype=np.int64)
    Lm = np.zeros((nj, w), np.int64)
    Lm[:, 1:] = (tot[:, None] + kappa[:, None] * Ns[None, 1:] - 1) // (kappa[:, None] * Ns[None, 1:])
    return np.asarray(Lm - 1 + offset, dtype=float)
