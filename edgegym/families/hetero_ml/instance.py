"""Instance building for HeteroML: the cluster and the jobs of an episode from a preset and one RNG.

All randomness comes from the ``np.random.Generator`` passed in (uniform draws on the paper's ranges, i.i.d. per
job; U^p_j i.i.d. per (j, p); arrivals uniform on {1..T}, sorted). Mini-batch times v_jm: i.i.d. per (j, m)
(``workload.minibatch_model: independent``, the literal reading) or tied to the worker type (``by_type``:
v_jm = v_j · g_m^(-x) · u_jm, g_m the type's GPUs, x = ``gpu_speedup_exponent``).

Capacity calibration, per resource r (the server shapes are scaled; the total is fixed in expectation across
job-count and server-count sweeps):

* ``cluster.kappa`` (literal): total capacity ``kappa * calibration_jobs * mean_j dem^r_j``, dem_j the per-slot
  demand of job j's ideal configuration (fastest types, fewest workers reaching the shortest duration d*_j);
* ``cluster.load`` (calibrated): total capacity ``calibration_jobs * mean_j (dem^r_j d*_j) / (load * T)``.

:func:`offered_load` is Σ_j dem^r_j d*_j / (Σ_h C^r_h · T), the largest over the resources (reported by the env's
episode metrics for every preset).

A job whose ideal worker type (with its ideal PS type) cannot be placed on the empty cluster even with one worker
(PLACE of :mod:`.placement`; only at extreme capacity settings) gets, as its ideal configuration, the fastest
(worker type, PS type) pair that can; one always exists (a pair fitting co-located on one server is checked at build
time, else ``ValueError``). The baselines (FIFO, DRF, AntMan, Tiresias) use these configurations.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .presets import PS_TYPES, SERVER_SHAPES, WORKER_TYPES, HeteroPreset
from .simulator import EPS, MS_PER_SLOT, S_PER_SLOT, HeteroCluster, HeteroJobs, comm_slots

__all__ = [
    "Instance", "IdealConfig", "build_instance", "draw_jobs", "ideal_configs", "ideal_area", "offered_load",
    "one_worker_fits", "type_tables",
]


@dataclass(frozen=True, slots=True)
class IdealConfig:
    """Per-job "ideal configuration": fastest types, the fewest workers reaching the minimal duration.

    worker_type m*, ps_type p* (-1 for RA), workers N*, PSs s* (spread count), duration d* (spread), demand
    dem_j = N* e_m* + s* z_p* per slot.                                          # (J,), (J,), ..., (J, R)
    """

    worker_type: np.ndarray
    ps_type: np.ndarray
    workers: np.ndarray
    ps: np.ndarray
    duration: np.ndarray
    demand: np.ndarray


@dataclass(frozen=True, slots=True)
class Instance:
    """One episode's cluster, jobs, ideal configurations and offered load (:func:`offered_load`)."""

    cluster: HeteroCluster
    jobs: HeteroJobs
    ideal: IdealConfig
    offered_load: float = float("nan")


def type_tables(preset: HeteroPreset) -> tuple[np.ndarray, np.ndarray]:
    """(worker resource table (M, R), PS resource table (P, R)) of the preset's chosen types."""
    e = np.array([WORKER_TYPES[n] for n in preset.cluster.worker_types], dtype=np.float64)
    z = np.array([PS_TYPES[n] for n in preset.cluster.ps_types], dtype=np.float64)
    return e, z


def draw_jobs(preset: HeteroPreset, rng: np.random.Generator, M: int, P: int) -> HeteroJobs:
    """Jobs of one episode (defaults), sorted by (arrival, draw order)."""
    w = preset.workload
    J = w.num_jobs
    arrival = np.sort(rng.integers(1, w.horizon_slots + 1, size=J))
    weight = rng.uniform(*w.weight, size=J)
    epochs = rng.integers(w.epochs[0], w.epochs[1] + 1, size=J)
    chunks = rng.integers(w.chunks[0], w.chunks[1] + 1, size=J)
    batches = rng.integers(w.batches[0], w.batches[1] + 1, size=J)
    if w.minibatch_model == "by_type":
        gpus = np.array([WORKER_TYPES[n][0] for n in preset.cluster.worker_types], dtype=np.float64)[:M]
        base = rng.uniform(*w.minibatch_time_slots, size=J)
        jit = rng.uniform(1.0 - w.type_jitter, 1.0 + w.type_jitter, size=(J, M))
        v = base[:, None] * np.power(gpus, -w.gpu_speedup_exponent)[None, :] * jit
    else:
        v = rng.uniform(*w.minibatch_time_slots, size=(J, M))
    ps_update = rng.uniform(*w.ps_update_ms, size=(J, P)) / MS_PER_SLOT
    ra_update = rng.uniform(*w.ra_update_ms, size=J) / MS_PER_SLOT
    grad = rng.uniform(*w.grad_size_mb, size=J)
    make = HeteroJobs._fresh if _LEAN_BUILD else HeteroJobs  # (fresh arrays: frozen in place, not copied)
    return make(arrival, weight, epochs, chunks, batches, v, ps_update, ra_update, grad)


def ideal_configs(
    arch: str, worker_res: np.ndarray, ps_res: np.ndarray, bw_index: int, jobs: HeteroJobs,
    fit: np.ndarray | None = None,
) -> IdealConfig:
    """Each job's "ideal configuration" (the paper defines it only as the one that "leads to most expedited
    single-job training", after its refs. [10]-[12]; our reading: the fastest worker type, the fastest PS type, the
    fewest workers reaching the minimal duration) on an empty cluster (spread rate, so independent of the
    capacities). ``fit`` (M, P) restricts
    the (worker type, PS type) pairs to those marked True (RA: any column True marks the worker type)."""
    J, M = jobs.v.shape
    foot_z = ps_res.sum(axis=1)
    if fit is None and _COMPILED_IDEAL and J:
        got = _ideal_compiled(arch, worker_res, ps_res, foot_z, bw_index, jobs)
        if got is not None:
            return got
    rows = np.arange(J)
    gpus = worker_res[:, 0]
    b, B = worker_res[:, bw_index], ps_res[:, bw_index]
    W = jobs.work.astype(np.float64)
    ns = np.arange(1, int(jobs.chunks.max(initial=1)) + 1)  # N = 1 .. max D_j
    # per job: the fastest type (ties: fewer GPUs, then index), among the allowed ones (vectorised over jobs)
    order = np.lexsort((np.broadcast_to(np.arange(M), (J, M)), np.broadcast_to(gpus, (J, M)), jobs.v), axis=-1)
    first = np.zeros(J, dtype=np.int64) if fit is None else np.argmax(fit.any(axis=1)[order], axis=1)
    m = order[rows, first]
    comm = comm_slots(jobs.grad_mb, b[m])  # (J,)
    if arch == "ps":
        P = ps_res.shape[0]
        porder = np.lexsort((np.broadcast_to(np.arange(P), (J, P)), np.broadcast_to(foot_z, (J, P)), jobs.ps_update),
                            axis=-1)
        pfirst = np.zeros(J, dtype=np.int64) if fit is None else np.argmax(fit[m[:, None], porder], axis=1)
        p = porder[rows, pfirst]
        it = (jobs.v[rows, m] + jobs.ps_update[rows, p] + comm)[:, None]
    else:
        p = np.full(J, -1, dtype=np.int64)
        it = jobs.v[rows, m][:, None] + (jobs.ra_update + comm)[:, None] * (ns - 1)[None, :] / ns[None, :]
    # duration_slots for every N = 1..D_j at once (the same floating-point operations, elementwise)
    durs = np.ceil(W[:, None] * it / ns[None, :] - EPS)
    durs[ns[None, :] > jobs.chunks[:, None]] = np.inf
    n = np.argmin(durs, axis=1) + 1  # argmin returns the first (smallest N) minimum
    d = durs[rows, n - 1].astype(np.int64)
    if arch == "ps":
        s = np.maximum(1, np.ceil(n * b[m] / B[p] - 1e-9)).astype(np.int64)
        dem = n[:, None] * worker_res[m] + s[:, None] * ps_res[p]
    else:
        s = np.zeros(J, dtype=np.int64)
        dem = n[:, None] * worker_res[m] + 0.0
    out = {"m": m.astype(np.int64), "p": p.astype(np.int64), "n": n.astype(np.int64), "s": s, "d": d}
    return IdealConfig(out["m"], out["p"], out["n"], out["s"], out["d"], dem)


_COMPILED: tuple | None = None


def _compiled() -> tuple:
    """``(_instance_kernels, _kernels)``, imported on first use (``import edgegym`` does not load Numba) and then
    kept: a function-level ``from . import`` runs importlib's Python ``_handle_fromlist`` at each call, a few µs of
    each episode's :func:`build_instance` in a stepping loop."""
    global _COMPILED
    if _COMPILED is None:
        from . import _instance_kernels, _kernels

        _COMPILED = (_instance_kernels, _kernels)
    return _COMPILED


#: :func:`ideal_configs` without ``fit`` from one compiled pass over the jobs (``_instance_kernels.ideal_configs``,
#: where every input is finite; the same values: ~250 -> ~25 µs per 150-job episode); False: NumPy's vectorised
#: code only (the reference of ``tests/speed/test_speed_hetero_v1_step3.py``)
_COMPILED_IDEAL = True


def _ideal_compiled(arch: str, worker_res: np.ndarray, ps_res: np.ndarray, foot_z: np.ndarray, bw_index: int,
                    jobs: HeteroJobs) -> IdealConfig | None:
    """:func:`ideal_configs` (``fit=None``) through the compiled kernel, or ``None`` where an input is not finite
    (NumPy's sorts order NaN last; the kernel's minima would not) or not float64/int64 as the kernel reads it."""
    _instance_kernels = _compiled()[0]
    wr, pr = np.ascontiguousarray(worker_res, dtype=np.float64), np.ascontiguousarray(ps_res, dtype=np.float64)
    fz = np.ascontiguousarray(foot_z, dtype=np.float64)
    v, psu = jobs.v, jobs.ps_update
    if v.dtype != np.float64 or psu.dtype != np.float64 or jobs.chunks.dtype != np.int64 or fz.shape[0] == 0:
        return None
    J, R = v.shape[0], wr.shape[1]
    m, p, n, s, d = (np.empty(J, dtype=np.int64) for _ in range(5))
    dem = np.empty((J, R))
    if not _instance_kernels.ideal_configs(arch == "ps", wr, pr, fz, int(bw_index), jobs.work.astype(np.float64), v,
                                           psu, jobs.ra_update, jobs.grad_mb, jobs.chunks, EPS, S_PER_SLOT, m, p, n, s,
                                           d, dem):
        return None
    return IdealConfig(m, p, n, s, d, dem)


def ideal_area(ideal: IdealConfig) -> np.ndarray:
    """Ideal resource-time dem^r_j · d*_j of every job.                                              # (J, R)"""
    return ideal.demand * ideal.duration[:, None]


def offered_load(capacity: np.ndarray, ideal: IdealConfig, horizon: int) -> float:
    """max_r Σ_j dem^r_j d*_j / (Σ_h C^r_h · T): the jobs' ideal resource-time over the capacity of the horizon."""
    tot = capacity.sum(axis=0) * float(horizon)
    area = ideal_area(ideal).sum(axis=0)
    if _LEAN_BUILD:  # the same operations with the mask computed once and the methods called directly
        pos = tot > 0
        return float(np.where(pos, area / np.where(pos, tot, 1.0), 0.0).max())
    return float(np.max(np.where(tot > 0, area / np.where(tot > 0, tot, 1.0), 0.0)))


def one_worker_fits(cluster: HeteroCluster, free: np.ndarray) -> np.ndarray:
    """Whether PLACE (:func:`~.placement.place`) finds room for one worker of type m (+ its PS of type p) on the
    residuals ``free`` (H, R): ``place(cluster, free, m, p, 1) is not None`` for every pair (compiled,
    ``_kernels.one_worker_fits``; the NumPy reference is ``_reference.one_worker_fits``).           # (M, P) bool"""
    _kernels = _compiled()[1]
    out = np.zeros((cluster.num_worker_types, cluster.num_ps_types), dtype=bool)
    _kernels.one_worker_fits(np.ascontiguousarray(free, dtype=np.float64), np.ascontiguousarray(cluster.worker_res),
                             np.ascontiguousarray(cluster.ps_res), np.ascontiguousarray(cluster.worker_bw),
                             np.ascontiguousarray(cluster.ps_bw), cluster.arch == "ps", out)
    return out


def _server_table(server_shapes: tuple, num_servers: int) -> tuple[np.ndarray, tuple]:
    """The servers' shape rows (read-only; server h has shape ``server_shapes[h % len]``) and labels."""
    return _server_table_of(tuple((n, tuple(SERVER_SHAPES[n])) for n in server_shapes), num_servers)


@functools.lru_cache(maxsize=64)
def _server_table_of(named: tuple, num_servers: int) -> tuple[np.ndarray, tuple]:
    shapes = np.array([named[h % len(named)][1] for h in range(num_servers)])
    shapes.setflags(write=False)
    return shapes, tuple(named[h % len(named)][0] for h in range(num_servers))


#: :func:`build_instance` takes the preset's seed-independent parts from :func:`_preset_tables` (type tables, the
#: one-worker demand table, a checked prototype cluster) and builds the cluster through
#: :meth:`HeteroCluster._with_capacity` (the type tables checked once per preset; the capacity checked per
#: episode); the same random draws, values and errors. False: every part rebuilt and checked at each call (the
#: reference of ``tests/speed/test_speed_hetero_v1_step6.py``)
_LEAN_BUILD = True


@functools.lru_cache(maxsize=64)
def _preset_tables_of(worker_types: tuple, ps_types: tuple, arch: str) -> tuple:
    e = np.array([WORKER_TYPES[n] for n in worker_types], dtype=np.float64)
    z = np.array([PS_TYPES[n] for n in ps_types], dtype=np.float64)
    zz = z if arch == "ps" else np.zeros_like(z)
    need = e[:, None, :] + (z[None, :, :] if arch == "ps" else 0.0)  # (M, P, R)
    need.setflags(write=False)
    try:  # the cluster's type checks (bandwidths, signs, architecture), once: a prototype's frozen tables
        proto = HeteroCluster(capacity=np.zeros((1, e.shape[1])), worker_res=e, ps_res=zz, bw_index=3, arch=arch)
    except ValueError:
        proto = None  # build_instance then calls the full constructor, which raises as before
    return e, z, zz, need, proto


def _preset_tables(preset: HeteroPreset) -> tuple:
    """(e, z, zz, need, proto) of :func:`build_instance`, cached per (worker types, PS types, architecture): the
    worker and PS resource tables (:func:`type_tables`; callers that hand them on copy them), the PS table the
    cluster holds (zeros for RA), the per-slot demand of one worker (+ one PS) of every pair (read-only) and a
    prototype cluster whose checked, read-only type tables every episode's cluster shares (None where the checks
    fail)."""
    c = preset.cluster
    return _preset_tables_of(tuple(c.worker_types), tuple(c.ps_types), c.arch)


def build_instance(preset: HeteroPreset, rng: np.random.Generator) -> Instance:
    """Cluster + jobs + ideal configurations of one episode."""
    lean = _LEAN_BUILD
    c = preset.cluster
    if lean:
        e, z, zz, need, proto = _preset_tables(preset)
        e, zz = e.copy(), zz.copy()  # (fresh, writable: the kernels below see the types they always saw)
    else:
        e, z = type_tables(preset)
    M, P = e.shape[0], z.shape[0]
    bw = 3
    jobs = draw_jobs(preset, rng, M, P)
    if not lean:
        zz = z if c.arch == "ps" else np.zeros_like(z)
    ideal = ideal_configs(c.arch, e, zz, bw, jobs)
    if preset.workload.weights == "proportional":  # (A1): w_j / (ideal resource-time) constant, mean weight kept
        cbar = np.array([16, 64, 732, 25.0])
        rt = (ideal.demand / cbar).sum(axis=1) * ideal.duration
        lo, hi = preset.workload.weight
        jobs = HeteroJobs(
            jobs.arrival, rt * (0.5 * (lo + hi)) / max(float(rt.mean()), 1e-12), jobs.epochs, jobs.chunks,
            jobs.batches, jobs.v, jobs.ps_update, jobs.ra_update, jobs.grad_mb,
        )
    shapes, labels = _server_table(tuple(c.server_shapes), int(c.num_servers))
    if c.kappa is not None or c.load is not None:
        if c.kappa is not None:
            target = c.kappa * c.calibration_jobs * ideal.demand.mean(axis=0)
        else:
            target = c.calibration_jobs * ideal_area(ideal).mean(axis=0) / (c.load * preset.workload.horizon_slots)
        sigma = target / shapes.sum(axis=0)
        cap = shapes * sigma
        cap[:, 0] = np.maximum(1.0, np.round(cap[:, 0]))
        cap[:, 1] = np.maximum(1.0, np.round(cap[:, 1]))
    else:
        cap = shapes.astype(np.float64)
    cluster = None
    if lean and proto is not None:
        cluster = proto._with_capacity(cap, tuple(c.worker_types), tuple(c.ps_types), labels)
    if cluster is None:
        cluster = HeteroCluster(
            capacity=cap, worker_res=e, ps_res=zz, bw_index=bw, arch=c.arch,
            worker_labels=tuple(c.worker_types), ps_labels=tuple(c.ps_types), server_labels=labels,
        )
    load = offered_load(cap, ideal, preset.workload.horizon_slots)
    # every job must be runnable with one worker (+ one PS) on some empty server
    if not lean:
        need = e[:, None, :] + (z[None, :, :] if c.arch == "ps" else 0.0)  # (M, P, R)
    # (np.all(need[None] <= cap[:, None, None, :] + 1e-9, axis=-1).any(), pair by pair: usually the first fits)
    if lean:  # the same test, ``cap + 1e-9`` computed once
        cap_tol = cap + 1e-9
        fits = any((need[m, p] <= cap_tol).all(axis=1).any() for m in range(M) for p in range(need.shape[1]))
    else:
        fits = any(np.all(need[m, p] <= cap + 1e-9, axis=1).any() for m in range(M) for p in range(need.shape[1]))
    if not fits:
        raise ValueError(
            f"{preset.source_file}: no worker type (+ PS type) fits on any server: raise the capacity "
            f"(cluster.kappa, or lower cluster.load) (capacity {cap.max(axis=0).tolist()})"
        )
    # (M, P): PLACE (the baselines' placement) finds room for one worker (+ PS) of the pair on the empty cluster
    fit = one_worker_fits(cluster, cap)
    pi = np.maximum(ideal.ps_type, 0)
    if not fit[ideal.worker_type, pi].all():  # the documented rule (module docstring): fastest pair that fits
        ideal = ideal_configs(c.arch, e, zz, bw, jobs, fit=fit)
    return Instance(cluster, jobs, ideal, load)
