"""Candidate plans of the commit mode: the Discrete action's rows (one compiled call per arriving job, see
:func:`build_candidates`; the numpy original is ``_reference.build_candidates``).

For the pending job ``i`` at its arrival slot ``t``, ``G`` worker counts ``𝒩_i`` (a geometric grid over
``[1, N_max]`` that always contains Okita's tentative optimum ``N_tent`` under full capacities and the
same enumeration's optimum ``N_now`` under the free resources of slot ``t``), each in two start modes:

* ``now`` (action ``2j``, Okita's keep / *migrate*): start at ``t``; the tentative placement (PA under C)
  if it fits the free resources of the whole window, else PA under those free resources;
* ``wait`` (action ``2j + 1``, Okita's *delay*): the tentative placement at the earliest start ``≥ t``
  at which it fits the calendar for its whole window.

Costs are Okita's estimates (OSF: PA's ``l·π·Σ q y`` + DTA on the window workload, or under ``proportional``
sampling the slot-by-slot transfer of the plan, and the latency cost of the window's end); the exact cost of the
committed plan is what the reward charges.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import _episode as _ep
from . import _kernels as kn
from .simulator import Plan, Simulator

__all__ = ["Candidates", "build_candidates", "earliest_fit", "worker_grid"]

NOW, WAIT = 0, 1
_NO_ORDER = np.zeros(0, np.int64)  # the kernel's "no site order given" (it computes the order itself)


@dataclass(frozen=True, slots=True)
class Candidates:
    """The candidate table (row ``a`` = action ``a``; ``mask`` false for padding and infeasible rows)."""

    mode: np.ndarray  # (C,) 0 now, 1 wait
    N: np.ndarray  # (C,) workers
    win: np.ndarray  # (C,) window slots
    start: np.ndarray  # (C,) start slot (-1 infeasible)
    ps: np.ndarray  # (C,) PS site (-1 infeasible)
    y: np.ndarray  # (C, R) workers per site
    transfer: np.ndarray  # (C,) estimated transfer cost
    param: np.ndarray  # (C,) estimated parameter-exchange cost
    latency: np.ndarray  # (C,) latency cost at the window's end
    total: np.ndarray  # (C,) sum of the three
    peak: np.ndarray  # (C,) peak utilisation of the used sites' resources after commit
    mask: np.ndarray  # (C,) bool legal
    n_tent: int
    n_now: int
    n_max: int

    def plan(self, job: int, a: int) -> Plan:
        """The :class:`Plan` of row ``a``."""
        return Plan(job=job, start=int(self.start[a]), y=self.y[a].copy(), ps=int(self.ps[a]))


#: the slot descriptors of the fields, in order (:func:`_new_candidates` fills a table without the frozen
#: dataclass's keyword ``__init__``)
_CAND_SLOTS = tuple(getattr(Candidates, f).__set__ for f in Candidates.__dataclass_fields__)


def _new_candidates(*values) -> Candidates:
    """``Candidates(*values)`` (the fields in declaration order), set through the slot descriptors (faster than the
    frozen dataclass's ``__init__``; the same object)."""
    c = object.__new__(Candidates)
    for put, v in zip(_CAND_SLOTS, values, strict=True):
        put(c, v)
    return c


def _new_candidates15(mode, N, win, start, ps, y, transfer, param, latency, total, peak, mask, n_tent, n_now, n_max):
    """:func:`_new_candidates` with the 15 fields as arguments (the step's hot path; no loop)."""
    c = object.__new__(Candidates)
    s = _CAND_SLOTS
    s[0](c, mode)
    s[1](c, N)
    s[2](c, win)
    s[3](c, start)
    s[4](c, ps)
    s[5](c, y)
    s[6](c, transfer)
    s[7](c, param)
    s[8](c, latency)
    s[9](c, total)
    s[10](c, peak)
    s[11](c, mask)
    s[12](c, n_tent)
    s[13](c, n_now)
    s[14](c, n_max)
    return c


def worker_grid(n_max: int, G: int, must: tuple[int, ...]) -> np.ndarray:
    """G worker counts in ``[1, n_max]``: the ``must`` values plus a geometric grid, ascending; padded by
    repeating the largest (padding rows are masked)."""
    must_set = sorted({int(x) for x in must if 1 <= x <= n_max})
    grid = np.unique(np.round(np.geomspace(1, n_max, num=max(G, 2))).astype(np.int64)) if n_max > 1 else np.array([1])
    rest = [int(x) for x in grid if x not in must_set]
    k = G - len(must_set)
    if k > 0 and len(rest) > k:
        idx = np.unique(np.round(np.linspace(0, len(rest) - 1, k)).astype(int))
        rest = [rest[j] for j in idx]
    vals = sorted(set(must_set + rest[: max(k, 0)]))[:G]
    return np.asarray(vals, dtype=np.int64)


def earliest_fit(cal: np.ndarray, dem: np.ndarray, t: int, win: int, horizon: int | None = None) -> int:
    """Earliest ``s ≥ t`` with ``dem ≤ cal[s']`` for all ``s' ∈ [s, s + l)`` (-1 if none in the calendar)."""
    used = np.flatnonzero((dem > 0).any(axis=1)).astype(np.int64)
    end = cal.shape[0] if horizon is None else min(cal.shape[0], horizon)
    if t + win > end:
        return -1
    if used.size == 0:
        return t
    return int(kn.earliest_fit(cal, np.ascontiguousarray(dem, dtype=float), used, int(t), int(win), int(end)))


@functools.lru_cache(maxsize=4096)
def _geo_grid(n_max: int, G: int) -> np.ndarray:
    """The geometric part of :func:`worker_grid` (cached: it depends on ``n_max`` and ``G`` only)."""
    if n_max > 1:
        return np.unique(np.round(np.geomspace(1, n_max, num=max(G, 2))).astype(np.int64))
    return np.array([1], dtype=np.int64)


@functools.lru_cache(maxsize=64)
def _grid_table(G: int, n_hi: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_geo_grid` of every ``n_max`` in ``0..n_hi`` as rows ``(grids (n_hi + 1, width), sizes (n_hi + 1,))``
    (row ``n``: ``_geo_grid(n, G)`` then zeros), read only: an episode's jobs gather their grids by ``n_max``."""
    gl = [_geo_grid(n, G) for n in range(n_hi + 1)]
    rows = np.zeros((n_hi + 1, max(g.size for g in gl)), np.int64)
    for n, g in enumerate(gl):
        rows[n, :g.size] = g
    sizes = np.array([g.size for g in gl], np.int64)
    rows.flags.writeable = False
    sizes.flags.writeable = False
    return rows, sizes


@functools.lru_cache(maxsize=64)
def _lin_table(G: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(np.round(np.linspace(0, n - 1, k)))`` of :func:`worker_grid` for every ``n ≤ max(G, 2)``,
    ``1 ≤ k < n``: ``(idx (n, k, j), count (n, k))``."""
    n_hi = max(G, 2)
    idx = np.zeros((n_hi + 1, G + 1, max(G, 1)), np.int64)
    cnt = np.zeros((n_hi + 1, G + 1), np.int64)
    for nr in range(n_hi + 1):
        for k in range(1, G + 1):
            if nr > k:
                v = np.unique(np.round(np.linspace(0, nr - 1, k)).astype(int))
                idx[nr, k, : v.size] = v
                cnt[nr, k] = v.size
    return idx, cnt


def _latency_vector(inst, i: int, latency: np.ndarray) -> np.ndarray:
    """``job_latency_cost(inst, i, latency)`` for an int array ``latency``: the same numpy operations as
    :func:`~.costs.latency_cost`'s vectorised path, for the job's kind only (NumPy's ``exp`` is not the scalar
    ``math.exp`` bit for bit, so the tentative enumeration keeps NumPy's)."""
    k = int(inst.kind[i])
    L = np.asarray(latency, dtype=float)
    rate = inst.exp_rate
    if k == 0:
        with np.errstate(over="ignore"):
            return np.asarray(inst.tau[i]) * np.exp(np.minimum(rate * L, 700.0))
    if k == 1:
        return np.asarray(inst.tau[i]) * L + np.asarray(inst.b[i])
    if k == 3:
        with np.errstate(over="ignore"):
            return np.asarray(inst.b[i]) / (np.exp(np.minimum(-rate * (L - np.asarray(inst.c[i])), 700.0)) + 1.0)
    return np.where(L < np.asarray(inst.c[i]), np.asarray(inst.tau1[i]), np.asarray(inst.tau2[i])).astype(float)


def _job_table(sim: Simulator) -> tuple:
    """Per-episode constants of every job for :func:`build_candidates`, cached on ``sim`` (``sim.cand_cache``;
    rebuilt when ``sim.inst`` is replaced, as a fork that redraws the future does): ``(inst, tot, lat, scalars,
    orders)`` with ``lat[i, :n_max_i + 1]`` job ``i``'s latency vector when it is decided at its arrival slot
    (the commit mode's decision slot; the same numpy operations as :func:`_latency_vector`, on all jobs of a kind
    at once), ``scalars[i]`` its Python scalar arguments of the kernel and ``orders[i]`` the site order of the
    capacities while it is untrained (:func:`~._kernels.site_order`: its scores ``β1·mean_k(C/C) − β2·qbar_r +
    β3·M_r/D_r`` have ``M_r/D_r = 1.0`` on every site with data, so every job with data at all sites shares one
    permutation; an empty array for the others, whose order the kernel computes)."""
    cache = sim.cand_cache
    inst = sim.inst
    if cache is not None and cache[0] is inst:
        return cache
    st = sim.static
    jc = _job_consts(sim) if _FUSED_JOBS else None
    if jc is not None:  # the integer arrays in one compiled pass (kept for WirelessUDLEnv._job_arrays)
        shared, kap, tot, n_max, has, _, hi = jc
        nj = tot.shape[0]
        w = hi + 1
    else:
        tot = inst.data.sum(axis=1).astype(np.int64)
        kap = inst.kappa.astype(np.int64)
        n_max = np.maximum(1, np.minimum(-(-tot // kap), st.n_cap.astype(np.int64)))
        nj = tot.shape[0]
        w = int(n_max.max()) + 1 if nj else 1
    if _ep.ENABLED:
        lat = _latency_table(inst, tot, kap, n_max, int(w), int(sim.offset))
    else:
        lat = _latency_table_ref(inst, tot, kap, n_max, int(w), int(sim.offset))
    if _LAZY_SCALARS:  # a job's tuple built when first read (one or two a step; at reset the first job's only)
        scalars = JobScalars(kap, n_max, inst)
    else:
        scalars = list(zip(kap.tolist(), n_max.tolist(), inst.arrival.tolist(), inst.kind.tolist(),
                           np.asarray(inst.param_mb, float).tolist(), np.asarray(inst.chunk_mb, float).tolist(),
                           np.asarray(inst.tau, float).tolist(), np.asarray(inst.b, float).tolist(),
                           np.asarray(inst.tau1, float).tolist(), np.asarray(inst.tau2, float).tolist(),
                           np.asarray(inst.c, float).tolist(), strict=True))
    if jc is None:
        shared = _shared_order(inst, st)
        has = (inst.data > 0).all(axis=1)
    orders = [shared if full else _NO_ORDER for full in has.tolist()]
    cache = (inst, tot.tolist(), lat, scalars, orders)
    sim.cand_cache = cache
    return cache


#: False: :func:`_job_table`'s scalars are a list of every job's tuple built at once (the reference of
#: :class:`JobScalars`, which builds a job's tuple when it is first read)
_LAZY_SCALARS = True


class JobScalars:
    """``scalars[i]``: job ``i``'s Python scalars of the kernels ``(κ, N_max, a, kind, π, δ, τ, b, τ1, τ2, c)``, the
    values of ``list(zip(kap.tolist(), n_max.tolist(), inst.arrival.tolist(), ...))`` (``ndarray.item`` converts
    an element as ``tolist`` does), each tuple built when it is first read and kept. A list of every job's tuple
    built at reset was 11 ``tolist`` and 100 tuples, about 40 µs of a reset between a run's episodes, where an
    episode's one-call steps read none of them (they read the arrivals and N_max, :meth:`columns`)."""

    __slots__ = ("_src", "_rows", "_n")

    def __init__(self, kap: np.ndarray, n_max: np.ndarray, inst) -> None:
        self._src = (kap, n_max, inst.arrival, inst.kind, np.asarray(inst.param_mb, float),
                     np.asarray(inst.chunk_mb, float), np.asarray(inst.tau, float), np.asarray(inst.b, float),
                     np.asarray(inst.tau1, float), np.asarray(inst.tau2, float), np.asarray(inst.c, float))
        self._n = int(kap.shape[0])
        self._rows: list = [None] * self._n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        r = self._rows[i]  # IndexError as a list's
        if r is None:
            k, n, a, kd, p, ch, t, b, t1, t2, c = self._src
            j = i + self._n if i < 0 else i
            r = (k.item(j), n.item(j), a.item(j), kd.item(j), p.item(j), ch.item(j), t.item(j), b.item(j),
                 t1.item(j), t2.item(j), c.item(j))
            self._rows[i] = r
        return r

    def __iter__(self):
        return (self[j] for j in range(self._n))

    def __eq__(self, other) -> bool:
        if isinstance(other, (JobScalars, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None

    def columns(self) -> tuple[list, list]:
        """``([a_i], [N_max_i])`` as Python ints (the entries 2 and 1 of every job's tuple)."""
        return self._src[2].tolist(), self._src[1].tolist()


def _shared_order(inst, st) -> np.ndarray:
    """The site order of the capacities that every untrained job with data at every site shares (see
    :func:`_job_table`)."""
    ones = np.ones(inst.cap.shape[0], np.int64)
    return kn.site_order(inst.cap, inst.cap, st.qbar, ones, ones, st.beta[0], st.beta[1], st.beta[2])[0]


#: False: :func:`_job_table` and ``WirelessUDLEnv._job_arrays`` compute the jobs' integer arrays with numpy, each
#: its own (the reference of :func:`_job_consts`, one compiled pass shared by both)
_FUSED_JOBS = True


def _job_consts(sim: Simulator) -> tuple | None:
    """``(shared, kap, tot, n_max, has, orders, max n_max)`` of ``sim.inst`` (:func:`_shared_order` and
    :func:`~._episode.job_consts`: the values of the numpy expressions in :func:`_job_table` and
    ``WirelessUDLEnv._job_arrays``), cached on ``sim`` (``sim.job_consts``) per instance; ``None`` where those take
    their numpy path (no jobs, a ``κ ≤ 0``, arrays other than int64)."""
    jc = sim.job_consts
    inst = sim.inst
    if jc is not None and jc[0] is inst:
        return jc[1]
    st = sim.static
    data, kappa, n_cap = inst.data, inst.kappa, st.n_cap
    nj = kappa.shape[0]
    if not nj or data.dtype != np.int64 or kappa.dtype != np.int64 or n_cap.dtype != np.int64:
        return None
    shared = _shared_order(inst, st)
    kap, tot, n_max, has, orders, hi = _ep.job_consts(data, kappa, n_cap, shared)
    if kap.shape[0] != nj:
        return None
    out = (shared, kap, tot, n_max, has, orders, int(hi))
    sim.job_consts = (inst, out)
    return out


#: False: :func:`_latency_table` takes :func:`~._episode.lat_exp_args` (one division per entry), the reference of
#: :func:`~._episode.lat_exp_args_fast`
_LAT_FAST = True


def _latency_table(inst, tot, kap, n_max, w: int, offset: int) -> np.ndarray:
    """:func:`_latency_table_ref`'s entries ``[i, :n_max[i] + 1]`` (the only ones read; zeros after) in two compiled
    calls around numpy's ``exp`` (:mod:`._episode`: the same operations on the same values, the exponentials of
    the needed entries only, packed)."""
    kind = np.asarray(inst.kind, np.int64)
    c = np.asarray(inst.c, float)
    # divisions only where the window end drops by more than one (_LAT_FAST = False: one per entry, the reference)
    args = _ep.lat_exp_args_fast if _LAT_FAST else _ep.lat_exp_args
    L, x, start = args(tot, kap, n_max, kind, c, float(inst.exp_rate), offset)
    e = np.exp(x)  # numpy's exp (not bit for bit the compiled one), on a contiguous array as the reference's
    return _ep.lat_fill(L, e, start, kind, np.asarray(inst.tau, float), np.asarray(inst.b, float),
                        np.asarray(inst.tau1, float), np.asarray(inst.tau2, float), c, w)


def _latency_table_ref(inst, tot, kap, n_max, w: int, offset: int) -> np.ndarray:
    """``lat[i, :n_max_i + 1]``: job ``i``'s latency vector when decided at its arrival slot (the same numpy
    operations as :func:`_latency_vector`, on all jobs of a kind at once; the reference of :func:`_latency_table`)."""
    nj = tot.shape[0]
    # ceil(tot / (κ·N)) − 1 + offset as floats (numpy's (tot + κN − 1) // κN, then − 1 + offset, in one compiled
    # pass: integer arithmetic, exact)
    Lf = kn.window_table(tot, kap, int(w), int(offset))
    lat = np.zeros((nj, w))
    rate = inst.exp_rate
    kind = np.asarray(inst.kind)
    for k in range(4):
        rows = np.flatnonzero(kind == k)
        if rows.size == 0:
            continue
        if rows.size == nj:  # every job of this kind (a preset's single cost shape): no gather, the same values
            rows = slice(None)
        L = Lf[rows]
        if k == 0:
            with np.errstate(over="ignore"):
                lat[rows] = inst.tau[rows, None] * np.exp(np.minimum(rate * L, 700.0))
        elif k == 1:
            lat[rows] = inst.tau[rows, None] * L + inst.b[rows, None]
        elif k == 3:
            with np.errstate(over="ignore"):
                lat[rows] = inst.b[rows, None] / (np.exp(np.minimum(-rate * (L - inst.c[rows, None]), 700.0)) + 1.0)
        else:
            lat[rows] = np.where(L < inst.c[rows, None], inst.tau1[rows, None], inst.tau2[rows, None]).astype(float)
    return lat


def build_candidates(sim: Simulator, i: int, G: int, wait_max: int, prune_ratio: float | None = None) -> Candidates:
    """The 2·G candidate plans of pending job ``i`` at slot ``sim.t`` (one compiled kernel,
    :func:`~._kernels.candidate_table`; ``_reference.build_candidates`` is the numpy original).

    ``prune_ratio`` (v1's ``env.prune_ratio``): if some row is legal, rows estimated above ``prune_ratio`` × the
    cheapest legal one are masked too (their ``total`` set to ``inf``).

    ``sim.cal`` is read as :meth:`~.simulator.Simulator.commit` keeps it (the capacities minus the committed plans'
    demands over their windows, the plans recorded in ``sim.t_last`` / ``plan_y`` / ``plan_ps``): a site's slots
    after the last committed window that uses it are taken to hold its capacities."""
    return _table(sim, i, G, wait_max, prune_ratio)[0]


def _table(sim: Simulator, i: int, G: int, wait_max: int, prune_ratio: float | None) -> tuple[Candidates, bool]:
    """:func:`build_candidates` and whether some row is legal (the kernel's answer: ``mask.any()`` costs ~1.3 µs)."""
    inst, st = sim.inst, sim.static
    t = int(sim.t)
    M = sim.M[i]
    _, tots, lat_tab, scalars, orders = _job_table(sim)
    kap, n_max, a_i, kind, param_mb, chunk_mb, tau, b, tau1, tau2, c = scalars[i]
    # untrained: in the commit mode a job's data is trained only by its commit, which marks it done (status 2);
    # the sum test (about 0.9 µs) otherwise
    if sim.mode == "commit":
        untrained = sim.status[i] != 2
    else:
        untrained = np.add.reduce(M) == tots[i]
    order_cap = orders[i] if untrained else _NO_ORDER
    if t == a_i and untrained:  # decided at its arrival, untrained: the cached latency vector
        lat = lat_tab[i, :n_max + 1]
    else:
        tot = int(M.sum())
        n_max = max(1, min(-(-tot // kap), int(st.n_cap[i])))
        Ns = np.arange(1, n_max + 1)
        L = np.zeros(n_max + 1, np.int64)
        L[1:] = (tot + kap * Ns - 1) // (kap * Ns)
        lat = _latency_vector(inst, i, t + L - 1 - a_i + sim.offset)
    lin_idx, lin_cnt = _lin_table(G)
    # the calendar written up to slot t: the table reads slot t and, per site, the slots of the committed windows
    # (below their ends, which the commits wrote), nothing later (see the kernel's docstring)
    cal = sim.cal_upto(t + 1)
    ti, y, tf, mask, n_tent, n_now, legal = kn.candidate_table(
        inst.cap, st.qbar, inst.q, st.src_order, M, inst.data[i], inst.m[i], inst.n[i], kap, n_max, st.beta,
        st.tie_le, sim.prop, param_mb, chunk_mb, lat, cal, t, sim.calendar_len, a_i, sim.offset, kind, tau, b,
        tau1, tau2, c, float(inst.exp_rate), int(G), int(wait_max), _geo_grid(n_max, int(G)), lin_idx, lin_cnt,
        prune_ratio is not None, float(prune_ratio) if prune_ratio is not None else 0.0, st.q_nonneg, sim.t_last,
        sim.plan_y, sim.plan_ps, order_cap)
    mode, Nc, lc, start, ps = ti
    transfer, param, latency, total, peak = tf
    return _new_candidates15(mode, Nc, lc, start, ps, y, transfer, param, latency, total, peak, mask, n_tent, n_now,
                             n_max), legal
