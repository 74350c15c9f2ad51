"""Instance building for ``WirelessUDL``: sites + jobs of one episode from a preset and an RNG
(the paper's Sec. V-B draws).

All randomness comes from the ``np.random.Generator`` passed in. :func:`make_instance` builds an instance
from explicit arrays (the hand-computed tests and the MILP bound use it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import _episode as _ep
from .costs import KIND_CODES

__all__ = ["Instance", "build_instance", "logistic_midpoint", "make_instance"]


def logistic_midpoint(b, tau, rate):
    """``c = ln(b/τ)/a``: the midpoint at which the logistic cost ``b / (e^{-a(L-c)} + 1)`` equals
    ``τ·e^{aL} / (1 + τ·e^{aL}/b)``, i.e. follows the printed ``τ·e^{aL}`` until it nears ``b``."""
    return np.log(np.asarray(b, float) / np.asarray(tau, float)) / float(rate)


@dataclass(frozen=True, slots=True)
class Instance:
    """One episode's sites and jobs (struct of arrays; jobs sorted by arrival, then id)."""

    cap: np.ndarray  # (R, K) resource capacities C_r^k
    q: np.ndarray  # (R, R) price per MB, symmetric, zero diagonal
    arrival: np.ndarray  # (n_jobs,) int arrival slot a_i (0-based)
    kappa: np.ndarray  # (n_jobs,) int chunks trained per worker per slot κ_i
    chunk_mb: np.ndarray  # (n_jobs,) δ_i
    param_mb: np.ndarray  # (n_jobs,) π_i per worker per slot
    m: np.ndarray  # (n_jobs, K) per-worker demand
    n: np.ndarray  # (n_jobs, K) PS demand
    data: np.ndarray  # (n_jobs, R) int chunks D_i^r
    kind: np.ndarray  # (n_jobs,) int latency cost kind (costs.KINDS)
    tau: np.ndarray  # (n_jobs,) exp multiplier / linear slope / logistic's printed τ (priority weight)
    b: np.ndarray  # (n_jobs,) linear intercept / logistic bound b
    tau1: np.ndarray  # (n_jobs,) piecewise cost before the breakpoint
    tau2: np.ndarray  # (n_jobs,) piecewise cost from the breakpoint on
    c: np.ndarray  # (n_jobs,) piecewise breakpoint / logistic midpoint (slots)
    exp_rate: float = 0.25
    horizon_slots: int = 150

    @property
    def num_sites(self) -> int:
        return self.cap.shape[0]

    @property
    def num_jobs(self) -> int:
        return self.arrival.shape[0]

    @property
    def num_resources(self) -> int:
        return self.cap.shape[1]


def make_instance(cap, q, arrival, kappa, chunk_mb, param_mb, m, n, data, kind="exp", tau=50.0, b=0.0,
                  tau1=0.0, tau2=0.0, c=1, exp_rate=0.25, horizon_slots=None) -> Instance:
    """An instance from explicit values (scalars broadcast over jobs); jobs are re-sorted by arrival."""
    arrival = np.atleast_1d(np.asarray(arrival, dtype=np.int64))
    n_jobs = arrival.size
    cap = np.asarray(cap, dtype=float)
    K = cap.shape[1]

    def per_job(x, dtype=float):
        return np.broadcast_to(np.asarray(x, dtype=dtype), (n_jobs,)).copy()

    if isinstance(kind, str):
        kind = KIND_CODES[kind]
    kinds = np.asarray([KIND_CODES[k] if isinstance(k, str) else k for k in np.atleast_1d(kind)])
    order = np.argsort(arrival, kind="stable")
    fields = dict(
        arrival=arrival,
        kappa=per_job(kappa, np.int64),
        chunk_mb=per_job(chunk_mb),
        param_mb=per_job(param_mb),
        m=np.broadcast_to(np.asarray(m, dtype=float), (n_jobs, K)).copy(),
        n=np.broadcast_to(np.asarray(n, dtype=float), (n_jobs, K)).copy(),
        data=np.broadcast_to(np.asarray(data, dtype=np.int64), (n_jobs, cap.shape[0])).copy(),
        kind=np.broadcast_to(kinds, (n_jobs,)).astype(np.int64),
        tau=per_job(tau),
        b=per_job(b),
        tau1=per_job(tau1),
        tau2=per_job(tau2),
        c=per_job(c),
    )
    fields = {k: np.ascontiguousarray(v[order]) for k, v in fields.items()}
    T = int(horizon_slots if horizon_slots is not None else arrival.max() + 1)
    return Instance(cap=cap, q=np.asarray(q, dtype=float), exp_rate=float(exp_rate), horizon_slots=T, **fields)


@functools.lru_cache(maxsize=64)
def _upper(R: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(R, 1)``, read only and cached (about 25 µs of an ~150 µs instance draw)."""
    iu = np.triu_indices(R, 1)
    for a in iu:
        a.flags.writeable = False
    return iu


#: False: :func:`build_instance` is :func:`_build_instance_ref` (the reference of the same draws with the preset's
#: arrays built once per preset and the :class:`Instance` filled through its slots)
_FAST_BUILD = True

#: the slot descriptors of :class:`Instance`'s fields, in order (:func:`_new_instance`)
_INST_SLOTS = tuple(getattr(Instance, f).__set__ for f in Instance.__dataclass_fields__)

#: per (cluster, jobs) config, by identity: ``(cluster, jobs, constants)`` (:func:`_draw_constants`)
_DRAW_CONSTS: dict[tuple[int, int], tuple] = {}


def _new_instance(*values) -> Instance:
    """``Instance(*values)`` (the 17 fields in declaration order) set through the slot descriptors, without the
    frozen dataclass's keyword ``__init__`` (no validation there either: the same object)."""
    inst = object.__new__(Instance)
    for put, v in zip(_INST_SLOTS, values, strict=True):
        put(inst, v)
    return inst


def _draw_constants(cl, jb) -> tuple:
    """The arguments of :func:`build_instance`'s draws that depend on the preset only, computed once per
    ``(cluster, jobs)`` config (read only): the site types, the demand bounds ``(low, high + 1)``, the kind code's
    row and the exponential rate as a float."""
    key = (id(cl), id(jb))
    hit = _DRAW_CONSTS.get(key)
    if hit is not None and hit[0] is cl and hit[1] is jb:
        return hit[2]
    types = np.asarray(cl.site_types, dtype=float)
    wd = np.asarray(jb.worker_demand)
    pd = np.asarray(jb.ps_demand)
    arrays = [types, wd[:, 0], wd[:, 1] + 1, pd[:, 0], pd[:, 1] + 1]
    kind = None if jb.latency_cost == "mix" else np.full(jb.count, KIND_CODES[jb.latency_cost])
    if kind is not None:
        arrays.append(kind)
    for a in arrays:
        a.flags.writeable = False
    out = (*arrays[:5], len(types), kind, float(jb.exp_rate))
    if len(_DRAW_CONSTS) > 64:
        _DRAW_CONSTS.clear()
    _DRAW_CONSTS[key] = (cl, jb, out)
    return out


def build_instance(preset, rng: np.random.Generator) -> Instance:
    """Sample one episode's instance from a :class:`~.presets.UDLPreset` (the paper's Sec. V-B draws)."""
    if not _FAST_BUILD:
        return _build_instance_ref(preset, rng)
    cl, jb = preset.cluster, preset.jobs
    R, K, n_jobs = cl.sites, len(cl.resources), jb.count
    types, wd_lo, wd_hi, pd_lo, pd_hi, n_types, kind_row, rate = _draw_constants(cl, jb)
    # the same draws, in the same order, with the same arguments as _build_instance_ref
    cap = types[rng.integers(0, n_types, size=R)]
    q = _ep.sym_prices(rng.uniform(*cl.price_per_mb, size=R * (R - 1) // 2), R)  # = the reference's q + q.T
    arrival = np.sort(rng.integers(jb.arrival_window[0], jb.arrival_window[1] + 1, size=n_jobs))
    kappa = rng.integers(jb.chunks_per_worker_slot[0], jb.chunks_per_worker_slot[1] + 1, size=n_jobs)
    chunk_mb = rng.uniform(*jb.chunk_mb, size=n_jobs)
    param_mb = rng.uniform(*jb.param_mb, size=n_jobs)
    m = rng.integers(wd_lo, wd_hi, size=(n_jobs, K)).astype(float)
    n = rng.integers(pd_lo, pd_hi, size=(n_jobs, K)).astype(float)
    data = rng.integers(jb.chunks_per_site[0], jb.chunks_per_site[1] + 1, size=(n_jobs, R))
    kind = rng.integers(0, 3, size=n_jobs) if kind_row is None else kind_row.copy()
    tau = rng.uniform(*jb.tau, size=n_jobs)
    b = rng.uniform(*jb.b, size=n_jobs)
    tau1 = rng.uniform(*jb.tau1, size=n_jobs)
    tau2 = rng.uniform(*jb.tau2, size=n_jobs)
    c = rng.integers(jb.breakpoint_slots[0], jb.breakpoint_slots[1] + 1, size=n_jobs).astype(float)
    if jb.latency_cost == "logistic":  # drawn last and only here: the other shapes' streams are unchanged
        b = rng.uniform(*jb.logistic_b, size=n_jobs)
        c = np.log(b / tau) / rate  # logistic_midpoint(b, tau, rate): b and tau are float arrays already
    # the draws are fresh int64 arrays already: no copies (copy=False)
    return _new_instance(cap, q, arrival.astype(np.int64, copy=False), kappa.astype(np.int64, copy=False),
                         chunk_mb, param_mb, m, n, data.astype(np.int64, copy=False),
                         kind.astype(np.int64, copy=False), tau, b, tau1, tau2, c, jb.exp_rate, jb.horizon_slots)


def _build_instance_ref(preset, rng: np.random.Generator) -> Instance:
    """:func:`build_instance` as first written (the reference of its fast path)."""
    cl, jb = preset.cluster, preset.jobs
    R, K, n_jobs = cl.sites, len(cl.resources), jb.count
    types = np.asarray(cl.site_types, dtype=float)
    cap = types[rng.integers(0, len(types), size=R)]
    q = np.zeros((R, R))
    iu = _upper(R)
    q[iu] = rng.uniform(*cl.price_per_mb, size=iu[0].size)
    q = q + q.T
    arrival = np.sort(rng.integers(jb.arrival_window[0], jb.arrival_window[1] + 1, size=n_jobs))
    kappa = rng.integers(jb.chunks_per_worker_slot[0], jb.chunks_per_worker_slot[1] + 1, size=n_jobs)
    chunk_mb = rng.uniform(*jb.chunk_mb, size=n_jobs)
    param_mb = rng.uniform(*jb.param_mb, size=n_jobs)
    wd = np.asarray(jb.worker_demand)
    pd = np.asarray(jb.ps_demand)
    m = rng.integers(wd[:, 0], wd[:, 1] + 1, size=(n_jobs, K)).astype(float)
    n = rng.integers(pd[:, 0], pd[:, 1] + 1, size=(n_jobs, K)).astype(float)
    data = rng.integers(jb.chunks_per_site[0], jb.chunks_per_site[1] + 1, size=(n_jobs, R))
    if jb.latency_cost == "mix":
        kind = rng.integers(0, 3, size=n_jobs)
    else:
        kind = np.full(n_jobs, KIND_CODES[jb.latency_cost])
    tau = rng.uniform(*jb.tau, size=n_jobs)
    b = rng.uniform(*jb.b, size=n_jobs)
    tau1 = rng.uniform(*jb.tau1, size=n_jobs)
    tau2 = rng.uniform(*jb.tau2, size=n_jobs)
    c = rng.integers(jb.breakpoint_slots[0], jb.breakpoint_slots[1] + 1, size=n_jobs).astype(float)
    if jb.latency_cost == "logistic":  # drawn last and only here: the other shapes' streams are unchanged
        b = rng.uniform(*jb.logistic_b, size=n_jobs)  # the bound b of f(L) = b / (e^{-a(L-c)} + 1)
        c = logistic_midpoint(b, tau, jb.exp_rate)
    # the draws are fresh int64 arrays already: no copies (copy=False)
    return Instance(cap=cap, q=q, arrival=arrival.astype(np.int64, copy=False),
                    kappa=kappa.astype(np.int64, copy=False), chunk_mb=chunk_mb, param_mb=param_mb, m=m, n=n,
                    data=data.astype(np.int64, copy=False), kind=kind.astype(np.int64, copy=False), tau=tau, b=b,
                    tau1=tau1, tau2=tau2, c=c,
                    exp_rate=jb.exp_rate, horizon_slots=jb.horizon_slots)
