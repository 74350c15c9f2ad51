"""Differential tests of HeteroML's third round of step and episode shortcuts against the paths they replace.

* The episode metrics from the servers each job uses (``_kernels.gpu_busy_listed``, ``_kernels.job_workers``) and
  the PS lower bound's terms computed elementwise (``HeteroMLEnv._lower_bound_ps``) equal the full-table kernels and
  the per-job loop (``HeteroMLEnv._listed = False``): on >= 1,000 decision states of random-legal episodes (random
  windows for the GPU sum), on >= 1,000 drawn instances and on hand-made job tables whose terms sit at a ceiling's
  edge.
* ``HeteroMLEnv._step_direct`` (a fused v1 step in one method) and the episode metrics: whole random-legal episodes
  of the v0 and v1 ids (tiny and RA presets too) with every shortcut of this file on and off (``_listed``,
  ``_direct``), in lockstep: observations, masks, rewards, infos, episode metrics and the committed schedule ``==``,
  >= 1,000 v1 steps, an invalid action every 9th step (the path it leaves to ``_commit_step``).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.hetero_ml import _kernels
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.simulator import HeteroJobs
from edgegym.families.hetero_ml.testing import lockstep_episode


class _Reference(HeteroMLEnv):
    """The env with this round's shortcuts off (the paths before)."""

    _listed = False
    _direct = False


class _Counted(HeteroMLEnv):
    """The env as shipped, counting the steps :meth:`HeteroMLEnv._step_direct` took."""

    direct = 0

    def _step_direct(self, act):
        got = super()._step_direct(act)
        _Counted.direct += got is not None
        return got


def _lockstep(new, old, seed) -> int:
    """:func:`~edgegym.families.hetero_ml.testing.lockstep_episode` with an invalid action every 9th step."""
    return lockstep_episode(new, old, seed, invalid_every=9, invalid_at=4)


def test_step_and_metrics_equal_the_reference():
    steps = {}
    _Counted.direct = 0
    for preset, seed, jobs in (("ps-v1", 0, None), ("tiny-v1", 1, None), ("rl-hard-v1", 2, 80), ("ra-v1", 3, 60),
                               ("tiny-ra-v1", 4, None), ("rl-v1", 5, 80), ("ps-v1", 6, None), ("ps", 7, 60),
                               ("tiny", 8, None), ("ps-v1", 9, None), ("ps-v1", 10, None), ("ps-v1", 11, None),
                               ("ps-v1", 12, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        n = _lockstep(_Counted(preset, config=cfg), _Reference(preset, config=cfg), seed)
        steps[preset] = steps.get(preset, 0) + n
    assert sum(n for p, n in steps.items() if p.endswith("v1")) >= 1000, steps
    assert _Counted.direct >= 800, _Counted.direct  # the direct path itself was compared (not only its fallback)


def test_listed_kernels_equal_the_full_tables():
    """``gpu_busy_listed`` == ``gpu_busy`` (random windows) and ``job_workers`` == ``workers.sum(axis=1)`` at every
    decision state of random-legal episodes."""
    rng = np.random.default_rng(5)
    states = 0
    for preset, seed in (("ps-v1", 20), ("tiny-v1", 21), ("ra-v1", 22), ("ps-v1", 23), ("tiny", 24), ("ps", 25),
                         ("ps-v1", 26), ("rl-v1", 27), ("tiny-ra-v1", 28), ("ps-v1", 29), ("ps-v1", 30)):
        env = HeteroMLEnv(preset)
        env.reset(seed=seed)
        done = False
        while not done:
            k, rec, kc = env._k, env._rec(), env._kc
            top = int(max(2, env.sim.completion.max() + 3))
            for _ in range(2):
                t0 = int(rng.integers(0, top))
                t1 = int(rng.integers(t0, top + 2))
                exp = _kernels.gpu_busy(k, rec, kc[1], kc[2], kc[6], t0, t1)
                got = _kernels.gpu_busy_listed(k, rec, kc[1], kc[2], kc[6], t0, t1)
                assert got == exp and np.signbit(got) == np.signbit(exp), (preset, k, t0, t1)
            nw = np.full(env.sim.workers.shape[0], -7, dtype=np.int64)
            _kernels.job_workers(k, rec, nw)
            assert np.array_equal(nw, env.sim.workers.sum(axis=1)), (preset, k)
            states += 1
            _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert states >= 1000, states


def test_lower_bound_ps_equals_the_loop():
    """``_lower_bound_ps`` == the per-job loop on >= 1,000 drawn instances and on hand-made job tables whose terms
    sit at a ceiling's edge (``W · it / D`` an integer or within 1e-9 of one), tiny update times and large works."""
    cases = 0
    for preset, n in (("ps-v1", 500), ("tiny-v1", 300), ("rl-hard-v1", 200), ("ps-paper-literal", 100)):
        env = HeteroMLEnv(preset)
        ref = _Reference(preset)
        for seed in range(n):
            env.reset(seed=seed)
            ref.reset(seed=seed)
            got, exp = env.lower_bound(), ref.lower_bound()
            assert got == exp, (preset, seed, got, exp)
            assert env._lower_bound_ps() == exp
            cases += 1
    assert cases >= 1000
    rng = np.random.default_rng(9)
    env = HeteroMLEnv("ps-v1")
    env.reset(seed=0)
    ref = _Reference("ps-v1")
    jb0 = env.jobs
    J, M = jb0.v.shape
    P = jb0.ps_update.shape[1]
    for case in range(600):
        chunks = rng.integers(1, 65, J)
        epochs = rng.integers(1, 2000 if case % 5 else 10 ** 6, J)
        batches = rng.integers(1, 500, J)
        work = (epochs * chunks * batches).astype(np.float64)
        if case % 3 == 0:  # it_j chosen so that W · it / D lands on (or 1e-9 around) an integer
            target = rng.integers(1, 5000, J) + rng.choice([0.0, 1e-9, -1e-9, 2e-9, 5e-10], J)
            it = target * chunks / work
        else:
            it = rng.random(J) * (10.0 ** rng.integers(-12, 1, J))
        v = np.tile(np.maximum(it, 1e-300)[:, None], (1, M)) * rng.choice([1.0, 1.5, 3.0], (J, M))
        v[np.arange(J), rng.integers(0, M, J)] = np.maximum(it, 1e-300)
        psu = np.zeros((J, P)) if case % 2 else rng.random((J, P)) * 1e-3
        if case % 2 == 0:
            v = v + 0.0  # it = v.min + psu.min: the sum's rounding included
        jobs = HeteroJobs(np.sort(rng.integers(1, 10 ** (case % 7 + 1), J)), rng.random(J) * 5 + 1e-3, epochs,
                          chunks, batches, v, psu, jb0.ra_update, jb0.grad_mb)
        env.jobs = jobs
        ref.cluster, ref.jobs = env.cluster, jobs
        got, exp = env.lower_bound(), ref.lower_bound()
        assert got == exp, (case, got, exp)


def _ideal_equal(a, b) -> None:
    for f in ("worker_type", "ps_type", "workers", "ps", "duration", "demand"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and x.shape == y.shape, f
        assert np.array_equal(x, y) and np.array_equal(np.signbit(x), np.signbit(y)), f


def test_compiled_ideal_configs_equal_numpy(monkeypatch):
    """``instance.ideal_configs`` through ``_instance_kernels.ideal_configs`` == NumPy's vectorised code
    (``_COMPILED_IDEAL = False``) on >= 1,000 drawn job tables (PS and RA presets) and on hand-made ones with ties
    of the compute times, GPUs, update times and PS footprints, tiny and huge works, and a NaN (NumPy's path)."""
    from edgegym.families.hetero_ml import instance as inst
    from edgegym.families.hetero_ml.presets import load_preset

    def both(arch, e, z, jobs):
        monkeypatch.setattr(inst, "_COMPILED_IDEAL", True)
        got = inst.ideal_configs(arch, e, z, 3, jobs)
        monkeypatch.setattr(inst, "_COMPILED_IDEAL", False)
        exp = inst.ideal_configs(arch, e, z, 3, jobs)
        _ideal_equal(got, exp)

    cases = 0
    for name, n in (("ps-v1", 300), ("ra-v1", 200), ("tiny-v1", 150), ("tiny-ra-v1", 150), ("rl-hard-v1", 100),
                    ("ps-paper-literal", 60), ("ra-paper-literal", 60)):
        pr = load_preset(name)
        e, z = inst.type_tables(pr)
        zz = z if pr.cluster.arch == "ps" else np.zeros_like(z)
        for seed in range(n):
            both(pr.cluster.arch, e, zz, inst.draw_jobs(pr, np.random.default_rng(seed), e.shape[0], z.shape[0]))
            cases += 1
    assert cases >= 1000
    rng = np.random.default_rng(13)
    pr = load_preset("ps-v1")
    e, z = inst.type_tables(pr)
    for case in range(400):
        J, M, P = int(rng.integers(1, 40)), e.shape[0], z.shape[0]
        v = rng.choice([0.5, 1.0, 2.0], (J, M)) if case % 2 else rng.random((J, M)) + 1e-3  # ties of v
        psu = rng.choice([0.0, 0.25], (J, P)) if case % 3 else rng.random((J, P))  # ties of U^p
        ee = e.copy()
        if case % 4 == 0:
            ee[:, 0] = rng.choice([1.0, 2.0], M)  # ties of the GPUs
        zz = z.copy() if case % 5 else np.tile(z[:1], (P, 1))  # ties of the PS footprints
        chunks = rng.integers(1, 70, J)
        epochs = rng.integers(1, 10 ** int(rng.integers(1, 7)), J)
        batches = rng.integers(1, 300, J)
        if case == 7:
            v[0, 0] = np.nan  # not finite: NumPy's path on both sides
        jobs = HeteroJobs(np.sort(rng.integers(1, 100, J)), rng.random(J) + 0.1, epochs, chunks, batches, v, psu,
                          rng.random(J) * 1e-2, rng.random(J) * 100.0)
        both("ps" if case % 2 else "ra", ee, zz if case % 2 else np.zeros_like(zz), jobs)


def test_ledger_shared_zeros_equal_own_zeros():
    """A :class:`Ledger` whose dense array starts as the shared read-only zeros == one with ``np.zeros`` of its own
    (``_shared_zeros = False``), through random commits and reads (usage, window, free_over, fits, utilisation), the
    usage handed out writeable and owned (writing it changes no other ledger)."""
    from edgegym.families.hetero_ml.simulator import Ledger

    class _Own(Ledger):
        _shared_zeros = False

    rng = np.random.default_rng(17)
    for _case in range(300):
        H, R = int(rng.integers(1, 6)), 4
        cap = rng.integers(1, 9, (H, R)).astype(np.float64)
        horizon = int(rng.integers(1, 30))
        a, b = Ledger(cap, horizon), _Own(cap, horizon)
        other = Ledger(cap, horizon)
        for _ in range(int(rng.integers(1, 12))):
            op = int(rng.integers(0, 6))
            t0 = int(rng.integers(0, 2 * horizon + 3))
            t1 = t0 + int(rng.integers(0, horizon + 5))
            f = rng.integers(0, 3, (H, R)) * rng.random((H, R))
            if op == 0:
                a.commit(f, t0, t1)
                b.commit(f, t0, t1)
            elif op == 1:
                assert np.array_equal(a.window(t0, t1), b.window(t0, t1))
            elif op == 2:
                assert np.array_equal(a.free_over(t0, t1), b.free_over(t0, t1))
            elif op == 3:
                assert a.fits(f, t0, t1) == b.fits(f, t0, t1)
            elif op == 4:
                assert np.array_equal(a.utilisation(t0, max(t1, t0 + 1)), b.utilisation(t0, max(t1, t0 + 1)))
            else:
                u, w = a.usage, b.usage
                assert u.flags.writeable and np.array_equal(u, w) and u.shape == w.shape
                u[..., :1] += 1.0  # the caller's writes land in this ledger only
                w[..., :1] += 1.0
        assert np.array_equal(a.usage, b.usage)
        assert not other.usage.any() and other.usage.flags.writeable


def test_p95_equals_numpy_percentile():
    """``env._p95`` == ``float(np.percentile(x, 95))`` (bits, sign included) on 20,000 arrays: sizes 0-400, integer
    flow times with ties (as the episode metrics have them), random reals, negative values, zeros, inf and NaN (the
    last three NumPy's path)."""
    from edgegym.families.hetero_ml.env import _p95

    rng = np.random.default_rng(23)
    for case in range(20000):
        n = int(rng.integers(0, 401)) if case % 10 else int(rng.integers(0, 5))
        kind = case % 6
        if kind == 0:
            x = rng.integers(1, 300, n).astype(np.float64)
        elif kind == 1:
            x = rng.integers(-5, 5, n).astype(np.float64)  # zeros and negative values
        elif kind == 2:
            x = rng.random(n) * 10.0 ** rng.integers(-300, 300)
        elif kind == 3:
            x = rng.choice([1.0, 2.0, 2.0000000000000004, 1e308, -1e308], n)
        elif kind == 4:
            x = -rng.random(n) - 1e-300
        else:
            x = rng.integers(1, 50, n).astype(np.float64)
            if n:
                x[int(rng.integers(0, n))] = rng.choice([np.inf, -np.inf, np.nan, -0.0])
        if n == 0:
            continue
        with np.errstate(all="ignore"):  # NumPy's own warnings on inf and NaN (both sides take its path there)
            exp = float(np.percentile(x, 95))
            got = _p95(x)
        assert got == exp or (got != got and exp != exp), (case, n)
        assert np.signbit(got) == np.signbit(exp), case


def test_compiled_job_checks_equal_numpy(monkeypatch):
    """``HeteroJobs`` with its value checks compiled (``_instance_kernels.jobs_check``) == with NumPy's
    (``simulator._COMPILED_CHECKS = False``) on 3,000 tables, valid and not (unsorted or < 1 arrivals, int64
    differences that wrap, zero or negative weights and compute times, zero counts, negative update times and
    gradient sizes, NaN, -0.0): the same error message or the same arrays."""
    from edgegym.families.hetero_ml import _instance_kernels  # noqa: F401  (loaded: the compiled checks apply)
    from edgegym.families.hetero_ml import simulator as sim

    def build(args):
        try:
            return sim.HeteroJobs(*args)
        except ValueError as err:
            return str(err)

    rng = np.random.default_rng(29)
    big = np.iinfo(np.int64).max
    failed = 0
    for case in range(3000):
        J, M, P = int(rng.integers(0, 12)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        arrival = np.sort(rng.integers(1, 50, J))
        weight, v = rng.random(J) + 0.5, rng.random((J, M)) + 0.5
        epochs, chunks, batches = (rng.integers(1, 9, J) for _ in range(3))
        psu, ra, grad = rng.random((J, P)), rng.random(J), rng.random(J)
        if J and case % 2:
            i = int(rng.integers(0, J))
            what = int(rng.integers(0, 12))
            if what == 0:
                arrival[i] = int(rng.integers(-3, 2))
            elif what == 1:
                arrival = arrival[::-1].copy()
            elif what == 2:
                arrival[0], arrival[-1] = -big, big  # differences that wrap in int64
            elif what == 3:
                weight[i] = rng.choice([0.0, -0.0, -1.0, np.nan])
            elif what == 4:
                v[i, int(rng.integers(0, M))] = rng.choice([0.0, -2.0, np.nan, -0.0])
            elif what == 5:
                (epochs, chunks, batches)[int(rng.integers(0, 3))][i] = int(rng.integers(-2, 1))
            elif what == 6:
                psu[i, int(rng.integers(0, P))] = rng.choice([-1e-300, -0.0, np.nan, 0.0])
            elif what == 7:
                ra[i] = rng.choice([-1.0, -0.0, np.nan])
            elif what == 8:
                grad[i] = rng.choice([-1.0, -0.0, np.inf, -np.inf])
            elif what == 9:
                weight[i], psu[i, 0] = -1.0, -1.0  # two checks fail: the first one's message
            elif what == 10:
                arrival[i], epochs[i] = 0, 0
            else:
                v[i, 0], grad[i] = np.inf, -1.0
        args = (arrival, weight, epochs, chunks, batches, v, psu, ra, grad)
        monkeypatch.setattr(sim, "_COMPILED_CHECKS", True)
        got = build(args)
        monkeypatch.setattr(sim, "_COMPILED_CHECKS", False)
        exp = build(args)
        if isinstance(exp, str):
            assert got == exp, (case, got, exp)
            failed += 1
        else:
            for name in sim.HeteroJobs.__slots__:
                x, y = getattr(got, name), getattr(exp, name)
                assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True) and not x.flags.writeable, name
    assert failed >= 1000, failed
