"""WirelessUDL's reset with its per-episode constants in fewer passes, against the previous code (the flags off),
identical (``==``, dtypes included), no tolerance:

* ``simulator._FUSED_STATIC``: ``make_static``'s source orders and price-sign test in one compiled pass
  (``_episode.src_order``: a radix sort of a symmetric matrix's upper triangle) instead of
  ``np.argsort(q.T, kind="stable")`` and ``np.all(q >= 0)``;
* ``candidates._FUSED_JOBS``: the jobs' integer arrays (κ, D, N_max, data at every site, the shared site orders)
  in one compiled pass (``_episode.job_consts``) shared by ``_job_table`` and ``WirelessUDLEnv._job_arrays``
  instead of numpy in each;
* ``instance._FAST_BUILD``: ``build_instance``'s draws with the preset's arrays built once, the price matrix
  filled in one compiled pass (``_episode.sym_prices``: numpy's ``q + q.T`` operations) and the ``Instance``
  filled through its slots (the same calls on the same values);
* ``candidates._LAZY_SCALARS``: the jobs' Python scalars (``_job_table``'s) built per job when first read
  (``candidates.JobScalars``) instead of every job's tuple at reset, and the one-call step's arrivals and N_max from
  two lists;
* ``WirelessUDLEnv._share_qbar``: the observation's mean prices copied from ``Static.qbar`` (the same operations)
  instead of recomputed.

The kernels against numpy on random inputs (ties, negative and NaN prices, empty data, ``κ ≤ 0``); 300 resets
each of ``sim`` (v0), ``sim-v1`` and ``sim-hard``: the observation, mask, info and every per-episode array the
steps read; then >= 1,000 stepped states in lockstep (``testing.lockstep_run``) and forks.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from edgegym.families.wireless_udl import _episode as ep
from edgegym.families.wireless_udl import candidates as cands
from edgegym.families.wireless_udl import instance as instmod
from edgegym.families.wireless_udl import simulator as simmod
from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.instance import make_instance
from edgegym.families.wireless_udl.testing import assert_same_candidates, lockstep_run

PRESETS = ("sim", "sim-v1", "sim-hard")
JOBS = {"count": 70, "horizon_slots": 105, "arrival_window": [0, 104]}


@contextlib.contextmanager
def reference_flags():
    """The previous code paths of this change (every flag off), restored on exit."""
    saved = (simmod._FUSED_STATIC, cands._FUSED_JOBS, WirelessUDLEnv._share_qbar, instmod._FAST_BUILD,
             cands._LAZY_SCALARS)
    (simmod._FUSED_STATIC, cands._FUSED_JOBS, WirelessUDLEnv._share_qbar, instmod._FAST_BUILD,
     cands._LAZY_SCALARS) = (False,) * 5
    try:
        yield
    finally:
        (simmod._FUSED_STATIC, cands._FUSED_JOBS, WirelessUDLEnv._share_qbar, instmod._FAST_BUILD,
         cands._LAZY_SCALARS) = saved


class _Ref:
    """An env whose every method call runs with :func:`reference_flags` (attributes read through)."""

    def __init__(self, env):
        object.__setattr__(self, "_env", env)

    def __getattr__(self, name):
        v = getattr(self._env, name)
        if not callable(v):
            return v

        def call(*a, **k):
            with reference_flags():
                out = v(*a, **k)
            return _Ref(out) if isinstance(out, WirelessUDLEnv) else out
        return call


def _same(a, b, where):
    """``a == b`` as arrays (dtype and shape included), or as Python values (a job's scalars: every tuple, read
    in order, with its types)."""
    if isinstance(a, cands.JobScalars) or isinstance(b, cands.JobScalars):
        assert isinstance(a, (cands.JobScalars, list)) and isinstance(b, (cands.JobScalars, list)), where
        a, b = list(a), list(b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
        assert a.tobytes() == b.tobytes(), where  # bit for bit (0.0 against -0.0, NaN payloads)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for j, (u, v) in enumerate(zip(a, b, strict=True)):
            _same(u, v, f"{where}[{j}]")
    else:
        assert type(a) is type(b) and a == b, where


def _same_episode(e1, e2, where):
    """Every per-episode array a later step reads: the static constants, the simulator's arrays, the observation's
    constants, the candidate cache and the one-call step's job arrays, the pending table."""
    s1, s2 = e1.sim.static, e2.sim.static
    for f in ("qbar", "src_order", "beta", "tie_le", "n_cap", "q_nonneg"):
        _same(getattr(s1, f), getattr(s2, f), f"{where} static.{f}")
    assert s1.src_order.flags.c_contiguous and s2.src_order.flags.c_contiguous, where
    for f in ("calendar_len", "cap_slot", "t", "M", "status", "start", "t_last", "plan_y", "plan_ps", "usage"):
        _same(getattr(e1.sim, f), getattr(e2.sim, f), f"{where} sim.{f}")
    _same(e1._obs_site, e2._obs_site, f"{where} obs_site")
    _same(e1._obs_job, e2._obs_job, f"{where} obs_job")
    _same(e1._head_rel, e2._head_rel, f"{where} head_rel")
    assert e1.sim.job_consts is not None and e2.sim.job_consts is None, where  # each took its own path
    c1, c2 = e1.sim.cand_cache, e2.sim.cand_cache
    assert c1[0] is e1.inst and c2[0] is e2.inst, where
    for j, nm in enumerate(("tots", "lat", "scalars", "orders"), start=1):
        _same(c1[j], c2[j], f"{where} job table {nm}")
    if e1._fast_jobs is not None or e2._fast_jobs is not None:
        _same(e1._fast_jobs[1], e2._fast_jobs[1], f"{where} job arrays")
        _same(e1._fast_jobs[2], e2._fast_jobs[2], f"{where} job scalars")
        _same(e1._fast_jobs[3], e2._fast_jobs[3], f"{where} arrivals and N_max")
        assert isinstance(e1._fast_jobs[2], cands.JobScalars) and isinstance(e2._fast_jobs[2], list), where
    assert_same_candidates(e1._cand, e2._cand, where)


def _reset_pair(env, ref, seed, where):
    """Reset both with ``seed``; the observation, info and mask ``==``."""
    o1, i1 = env.reset(seed=seed)
    o2, i2 = ref.reset(seed=seed)
    assert o1.dtype == o2.dtype == np.float32, where
    np.testing.assert_array_equal(o1, o2, err_msg=where)
    assert set(i1) == set(i2) and i1["job"] == i2["job"], where
    _same(i1["action_mask"], i2["action_mask"], f"{where} info mask")
    _same(env.action_masks(), ref.action_masks(), f"{where} mask")


def test_src_order_equals_numpy():
    """``_episode.src_order`` == ``np.argsort(q.T, axis=1, kind="stable")`` and ``np.all(q >= 0)`` on 4,000 random
    matrices: half symmetric (the radix path: drawn-like prices, many ties, negative entries, -0.0 against 0.0 across
    the diagonal), half not (square and not: the merge sort path); a NaN hands both to numpy (make_static ==)."""
    rng = np.random.default_rng(11)
    sym = 0
    for t in range(4000):
        R = int(rng.integers(1, 60))
        C = R if t % 4 else int(rng.integers(1, 60))
        if t % 2:
            q = rng.integers(-1 if t % 5 == 0 else 0, 4, size=(C, R)).astype(float)
        else:
            q = rng.uniform(-0.1 if t % 7 == 0 else 0.0, 1.0, size=(C, R))
        if t % 13 == 0:
            q[q == 0] = -0.0
        if t % 4 in (1, 2):  # symmetric: q = u + u.T (as drawn), or a triangle mirrored with -0.0 below
            u = np.triu(q, 1)
            q = u + u.T
            if t % 3 == 0:
                q[np.tril_indices(R)] = -0.0
                q[np.tril_indices(R, -1)] = u.T[np.tril_indices(R, -1)]
            sym += int(np.array_equal(q, q.T))
        o, nonneg = ep.src_order(q)
        _same(o, np.argsort(q.T, axis=1, kind="stable").astype(np.int64), f"matrix {t}")
        assert nonneg is bool(np.all(q >= 0)), t
    signed = 0
    for t in range(200):  # 0.0 above the diagonal, -0.0 below (equal values: numpy keeps index order)
        R = int(rng.integers(2, 30))
        u = np.triu(rng.integers(0, 3, size=(R, R)).astype(float), 1)
        q = u + u.T
        low = np.tril_indices(R, -1)
        q[low] = np.where(q[low] == 0.0, -0.0, q[low])
        assert np.array_equal(q, q.T)
        signed += int(np.signbit(q).any())
        o, nonneg = ep.src_order(q)
        _same(o, np.argsort(q.T, axis=1, kind="stable").astype(np.int64), f"signed zeros {t}")
        assert nonneg is True
    q = rng.uniform(0, 1, size=(6, 6))
    q = q + q.T
    q[2, 3] = np.nan
    assert ep.src_order(q)[0].shape == (0, 0)
    inst = make_instance(cap=np.ones((6, 2)), q=q, arrival=[0, 1], kappa=1, chunk_mb=1.0, param_mb=1.0,
                         m=[1, 1], n=[1, 1], data=[1] * 6)
    s1 = simmod.make_static(inst)
    with reference_flags():
        s2 = simmod.make_static(inst)
    _same(s1.src_order, s2.src_order, "nan")
    assert s1.q_nonneg is s2.q_nonneg is False
    assert sym >= 1500 and signed >= 150, (sym, signed)


def _job_consts_numpy(data, kappa, n_cap, shared):
    """The numpy expressions of ``_job_table`` / ``_job_arrays`` (the reference of ``_episode.job_consts``)."""
    nj, R = data.shape
    kap = np.asarray(kappa).astype(np.int64)
    tot = data.sum(axis=1).astype(np.int64)
    nmax = np.maximum(1, np.minimum(-(-tot // kap), n_cap.astype(np.int64)))
    has = (data > 0).all(axis=1).reshape(nj)
    orders = np.zeros((nj, R), np.int64)
    if has.any():
        orders[has] = shared
    return kap, tot, nmax, has, orders, int(nmax.max())


def test_job_consts_equals_numpy():
    """``_episode.job_consts`` == the numpy expressions on 3,000 random job sets (zeros in the data, empty rows,
    n_cap below and above ceil(D/κ), 1 to 60 sites); ``κ ≤ 0`` anywhere gives no jobs (numpy's path then)."""
    rng = np.random.default_rng(5)
    jobs = 0
    for t in range(3000):
        nj, R = int(rng.integers(1, 40)), int(rng.integers(1, 60))
        jobs += nj
        data = rng.integers(0 if t % 2 else 1, 10 ** int(rng.integers(1, 6)), size=(nj, R)).astype(np.int64)
        if t % 9 == 0:
            data[0] = 0
        kappa = rng.integers(1, 300, nj).astype(np.int64)
        n_cap = rng.integers(-2, 400, nj).astype(np.int64)
        shared = rng.permutation(R).astype(np.int64)
        got = ep.job_consts(data, kappa, n_cap, shared)
        _same(tuple(got[:5]), _job_consts_numpy(data, kappa, n_cap, shared)[:5], f"set {t}")
        assert int(got[5]) == _job_consts_numpy(data, kappa, n_cap, shared)[5], t
        if t % 10 == 0:
            kappa[int(rng.integers(0, nj))] = 0
            assert ep.job_consts(data, kappa, n_cap, shared)[0].shape == (0,)
    assert jobs > 30000


@pytest.mark.parametrize("preset", PRESETS)
def test_resets_flags_on_off(preset):
    """300 seeds: every reset's observation, mask, info and per-episode arrays ==; the envs are reused from seed
    to seed (as a run's), and a fresh pair every 100 seeds."""
    for seed in range(300):
        if seed % 100 == 0:
            env, ref = WirelessUDLEnv(preset), _Ref(WirelessUDLEnv(preset))
        _reset_pair(env, ref, seed, f"{preset} seed {seed}")
        _same_episode(env, ref._env, f"{preset} seed {seed}")


def test_stepped_states_flags_on_off():
    """>= 1,000 stepped states (whole episodes of 70 jobs, random legal, masked, NumPy-integer and quiet actions)
    after resets with the flags on and off: every output ==."""
    total = 0
    for preset in PRESETS:
        env, ref = WirelessUDLEnv(preset, config={"jobs": JOBS}), _Ref(WirelessUDLEnv(preset, config={"jobs": JOBS}))
        for seed in range(5):
            where = f"{preset} seed {seed}"
            _reset_pair(env, ref, seed, where)
            _same_episode(env, ref._env, where)
            total += lockstep_run(env, ref, np.random.default_rng(seed), where)
    assert total >= 1000, total


def test_forks_flags_on_off():
    """Forks (the future kept, and redrawn: make_static and the job constants of the new instance) step ==."""
    n = 0
    for preset in ("sim", "sim-v1"):
        env, ref = WirelessUDLEnv(preset, config={"jobs": JOBS}), _Ref(WirelessUDLEnv(preset, config={"jobs": JOBS}))
        _reset_pair(env, ref, 3, preset)
        rng = np.random.default_rng(3)
        n += lockstep_run(env, ref, rng, f"{preset} head", steps=20)
        for future in ("keep", "resample"):
            f1, f2 = env.fork(seed=7, future=future), ref.fork(seed=7, future=future)
            assert isinstance(f2, _Ref)
            _same(f1._obs_site, f2._obs_site, f"{preset} fork {future}")
            _same(f1._obs_job, f2._obs_job, f"{preset} fork {future}")
            n += lockstep_run(f1, f2, np.random.default_rng(9), f"{preset} fork {future}")
        n += lockstep_run(env, ref, rng, f"{preset} parent")
    assert n >= 150, n


def test_job_without_data_at_a_site():
    """A hand-made instance (``make_instance``) with a job without data at one site (no shared order for it) resets
    and steps the same with the flags on and off."""
    rng = np.random.default_rng(2)
    R = 5
    q = rng.uniform(0.1, 1, size=(R, R))
    q = np.triu(q, 1)
    q = q + q.T
    data = rng.integers(1, 40, size=(6, R))
    data[1, 2] = 0
    inst = make_instance(cap=np.full((R, 4), 64.0), q=q, arrival=[0, 0, 1, 2, 3, 5], kappa=[2, 3, 1, 4, 2, 2],
                         chunk_mb=1.0, param_mb=0.5, m=[1, 1, 1, 1], n=[1, 1, 1, 1], data=data, kind="logistic",
                         tau=50.0, b=300.0, c=5.0, horizon_slots=10)
    env = WirelessUDLEnv("sim", instance=inst)
    ref = _Ref(WirelessUDLEnv("sim", instance=inst))
    for seed in range(3):
        _reset_pair(env, ref, seed, f"seed {seed}")
        _same_episode(env, ref._env, f"seed {seed}")
        lockstep_run(env, ref, np.random.default_rng(seed), f"seed {seed}")


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("cost", [None, "mix", "exp", "linear", "piecewise"])
def test_build_instance_flag_on_off(preset, cost):
    """``build_instance`` with ``_FAST_BUILD`` on and off: every field == (dtype, shape, writeable) and the
    generator in the same state after it, on 40 seeds of each preset and latency cost shape."""
    import dataclasses

    from edgegym.families.wireless_udl.presets import load_preset

    p = load_preset(preset)
    if cost is not None:
        p = p.replace(jobs={"latency_cost": cost})
    for seed in range(40):
        g1, g2 = np.random.default_rng(seed), np.random.default_rng(seed)
        a = instmod.build_instance(p, g1)
        with reference_flags():
            b = instmod.build_instance(p, g2)
        assert type(a) is type(b) is instmod.Instance
        for f in dataclasses.fields(a):
            u, v = getattr(a, f.name), getattr(b, f.name)
            _same(u, v, f"{preset} {cost} seed {seed} {f.name}")
            if isinstance(u, np.ndarray):
                assert u.flags.writeable and u.flags.c_contiguous == v.flags.c_contiguous, f.name
        assert g1.bit_generator.state == g2.bit_generator.state


def test_job_scalars_read_in_any_order():
    """``JobScalars``: tuples read in random order, by negative index and by slice, == the eager list's (values and
    types); ``len``, iteration, equality both ways, copies and pickles; out of range raises ``IndexError``."""
    import copy
    import pickle

    env = WirelessUDLEnv("sim-hard")
    rng = np.random.default_rng(4)
    for seed in range(20):
        env.reset(seed=seed)
        sim = env.sim
        with reference_flags():
            sim.cand_cache = None
            eager = cands._job_table(sim)[3]
        sim.cand_cache = None
        lazy = cands._job_table(sim)[3]
        assert isinstance(lazy, cands.JobScalars) and isinstance(eager, list)
        n = len(eager)
        assert len(lazy) == n
        for i in rng.permutation(n)[: n // 2]:
            _same(lazy[int(i)], eager[int(i)], f"seed {seed} job {i}")
        _same(lazy[-1], eager[-1], "last")
        _same(lazy[3:9], eager[3:9], "slice")
        assert lazy == eager and eager == lazy and list(lazy) == eager
        assert copy.deepcopy(lazy) == eager and pickle.loads(pickle.dumps(lazy)) == eager
        _same(lazy.columns(), ([s[2] for s in eager], [s[1] for s in eager]), "columns")
        with pytest.raises(IndexError):
            lazy[n]


def test_sym_prices_equals_numpy():
    """``_episode.sym_prices(v, R)`` == ``q[triu_indices(R, 1)] = v; q + q.T`` bit for bit, for R = 0 … 60 with
    drawn prices and with special values (±0.0, ±inf, NaN, subnormals, negatives)."""
    rng = np.random.default_rng(8)
    special = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324])
    for R in range(61):
        for v in (rng.uniform(0.02, 0.08, size=R * (R - 1) // 2), rng.choice(special, size=R * (R - 1) // 2)):
            q = np.zeros((R, R))
            q[np.triu_indices(R, 1)] = v
            _same(ep.sym_prices(v, R), q + q.T, f"R {R}")
