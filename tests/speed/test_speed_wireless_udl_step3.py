"""WirelessUDL's lazy calendar and eager job arrays against their references, identical (``==``), no tolerance.

* The calendar written when first needed (``Simulator._lazy_calendar``) against the whole calendar written when the
  simulator is built (the flag off): on >= 1,000 decision states of ``sim`` (v0), ``sim-v1`` and ``sim-hard``, the
  same observations, rewards, masks, infos and episode metrics, the written slots equal to the reference's and every
  slot not yet written at the capacities in the reference (so that writing it later gives the same calendar).
* Forks copy only the written slots and still step as the reference env's forks.
* The one-call step's job arrays are built by ``reset`` (the first step takes the one-call path).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.simulator import Simulator
from edgegym.families.wireless_udl.testing import assert_same_step

JOBS = {"count": 70, "horizon_slots": 105, "arrival_window": [0, 104]}


def _check_calendar(lazy: WirelessUDLEnv, ref: WirelessUDLEnv, where: str) -> None:
    s1, s2 = lazy.sim, ref.sim
    n = s1._cal_fill
    assert s2._cal_fill == s2._cal.shape[0], where
    assert s1._cal.shape == s2._cal.shape, where
    np.testing.assert_array_equal(s1._cal[:n], s2._cal[:n], err_msg=where)
    assert (s2._cal[n:] == s2.inst.cap).all(), where  # the slots not yet written hold the capacities


def _lockstep(lazy, ref, rng, where, steps=None, start=None) -> int:
    if start is not None:
        (o1, i1), (o2, i2) = start
    else:
        o1, i1 = lazy.observe(), {"action_mask": lazy.action_masks()}
        o2, i2 = ref.observe(), {"action_mask": ref.action_masks()}
    n = 0
    while True:
        at = f"{where} job {lazy._k}"
        np.testing.assert_array_equal(o1, o2, err_msg=at)
        np.testing.assert_array_equal(i1["action_mask"], i2["action_mask"], err_msg=at)
        _check_calendar(lazy, ref, at)
        n += 1
        if steps is not None and n > steps:
            return n
        a = int(rng.choice(np.flatnonzero(lazy.action_masks())))
        s1, s2 = lazy.step(a), ref.step(a)
        assert_same_step(s1, s2, at)
        (o1, _, t1, tr1, i1), (o2, *_, i2) = s1, s2
        if t1 or tr1:
            _check_calendar(lazy, ref, at)
            assert lazy.episode_return() == ref.episode_return(), at
            assert lazy.episode_metrics() == ref.episode_metrics(), at
            np.testing.assert_array_equal(lazy.sim.cal, ref.sim.cal, err_msg=at)  # the whole calendar
            return n


def _pair(preset, config, seed, monkeypatch):
    lazy = WirelessUDLEnv(preset, config=config)
    ref = WirelessUDLEnv(preset, config=config)
    start1 = lazy.reset(seed=seed)
    monkeypatch.setattr(Simulator, "_lazy_calendar", False)
    start2 = ref.reset(seed=seed)
    monkeypatch.setattr(Simulator, "_lazy_calendar", True)
    return lazy, ref, (start1, start2)


def test_lazy_calendar_matches_the_whole_calendar_on_1000_states(monkeypatch):
    rng = np.random.default_rng(91)
    states = 0
    for preset in ("sim", "sim-v1", "sim-hard"):
        for seed in range(5):
            cfg = {"jobs": JOBS} if seed else None  # full size (100 jobs) and the 70-job arrival rate
            lazy, ref, start = _pair(preset, cfg, seed, monkeypatch)
            assert lazy.sim._cal_fill < lazy.sim._cal.shape[0]  # lazy indeed
            states += _lockstep(lazy, ref, rng, f"{preset} seed {seed}", start=start)
    assert states >= 1000


def test_forks_of_a_lazy_calendar_step_as_the_reference(monkeypatch):
    rng = np.random.default_rng(92)
    states = 0
    for preset, future in (("sim", "keep"), ("sim-v1", "resample"), ("sim", "resample")):
        lazy, ref, start = _pair(preset, {"jobs": JOBS}, 3, monkeypatch)
        states += _lockstep(lazy, ref, rng, f"{preset} before", steps=20, start=start)
        f1, f2 = lazy.fork(seed=4, future=future), ref.fork(seed=4, future=future)
        assert f1.sim._cal is not lazy.sim._cal and f1.sim._cal_fill == lazy.sim._cal_fill
        states += _lockstep(f1, f2, rng, f"{preset} fork {future}")
        states += _lockstep(lazy, ref, rng, f"{preset} after")  # the parent unchanged by its fork's steps
    assert states >= 100


def test_calendar_property_writes_the_whole_calendar(monkeypatch):
    lazy, ref, _ = _pair("sim", {"jobs": JOBS}, 5, monkeypatch)
    for _ in range(10):
        a = int(np.flatnonzero(lazy.action_masks())[0])
        lazy.step(a)
        ref.step(a)
    assert lazy.sim._cal_fill < lazy.sim._cal.shape[0]
    np.testing.assert_array_equal(lazy.view().calendar, ref.view().calendar)
    assert lazy.sim._cal_fill == lazy.sim._cal.shape[0]


def test_reset_builds_the_job_arrays_and_the_first_step_is_one_call():
    env = WirelessUDLEnv("sim")
    env.reset(seed=2)
    assert env._fast_jobs is not None and env._fast_jobs[0] is env.inst
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert env._fast is not None and env._fast[0] is env.sim


def test_compiled_episode_tables_match_numpy_on_1000_jobs(monkeypatch):
    """The compiled per-episode tables (:mod:`edgegym.families.wireless_udl._episode`) against their numpy
    references: the observation's job blocks and the latency vectors ``lat[i, :n_max_i + 1]`` of every job, bit for
    bit, on the default presets, every latency cost shape, proportional sampling and forked (redrawn) instances."""
    from edgegym.families.wireless_udl import _episode
    from edgegym.families.wireless_udl.candidates import _job_table

    cases = [("sim", None), ("sim-v1", None), ("sim-exp-proportional", None), ("paper-literal", None),
             ("testbed", None), ("tiny", None)]
    cases += [("sim", {"jobs": {"latency_cost": k}}) for k in ("exp", "linear", "piecewise", "mix")]
    jobs = 0
    for preset, cfg in cases:
        for seed in range(3):
            env = WirelessUDLEnv(preset, config=cfg)
            env.reset(seed=seed)
            envs = [env, env.fork(seed=seed, future="resample")] if env.inst.num_jobs > 1 else [env]
            for e in envs:
                tables = []
                for on in (False, True):
                    monkeypatch.setattr(_episode, "ENABLED", on)
                    e.sim.cand_cache = None
                    tables.append((e._observation_constants(), _job_table(e.sim)))
                ((site0, job0), (_, tot0, lat0, sc0, _)), ((site1, job1), (_, tot1, lat1, sc1, _)) = tables
                np.testing.assert_array_equal(site0, site1)
                assert job0.shape == job1.shape and job0.dtype == job1.dtype
                assert (job0.view(np.int64) == job1.view(np.int64)).all(), (preset, cfg, seed)  # bit for bit
                assert tot0 == tot1 and sc0 == sc1
                for i, s in enumerate(sc0):
                    a, b = lat0[i, :s[1] + 1], lat1[i, :s[1] + 1]
                    assert (a.view(np.int64) == b.view(np.int64)).all(), (preset, cfg, seed, i)
                jobs += len(sc0)
    assert jobs >= 1000


def test_job_block_falls_back_to_numpy_for_a_job_without_data():
    import dataclasses

    env = WirelessUDLEnv("tiny")
    env.reset(seed=0)
    data = env.inst.data.copy()
    data[0] = 0
    e = WirelessUDLEnv("tiny", instance=dataclasses.replace(env.inst, data=data))
    with np.errstate(invalid="ignore", divide="ignore"):
        e.reset(seed=0)
        _, job = e._observation_constants()
        np.testing.assert_array_equal(job, e._job_block_ref())


def test_n_cap_per_distinct_row_matches_the_site_by_site_kernel():
    """``_episode.n_cap`` = ``_kernels.n_cap`` on drawn instances (three site types), on every-site-distinct and
    all-equal capacities, zero demands (unbounded) and PS demands that no site fits: >= 1,000 jobs."""
    from edgegym.families.wireless_udl import _episode, _kernels
    from edgegym.families.wireless_udl.instance import build_instance
    from edgegym.families.wireless_udl.presets import load_preset

    assert _episode.BIG == _kernels.BIG
    rng = np.random.default_rng(93)
    jobs = 0
    for preset in ("sim", "testbed", "tiny", "sim-hard"):
        p = load_preset(preset)
        for seed in range(3):
            inst = build_instance(p, np.random.default_rng(seed))
            got = _episode.n_cap(inst.cap, inst.m, inst.n)
            np.testing.assert_array_equal(got, _kernels.n_cap(inst.cap, inst.m, inst.n))
            jobs += got.size
    for R in (1, 2, 7, 30):
        for _ in range(20):
            cap = rng.integers(0, 6, size=(R, 3)).astype(float) * rng.choice([1.0, 8.0])
            if rng.random() < 0.3:
                cap[:] = cap[0]
            m = rng.integers(0, 4, size=(25, 3)).astype(float)
            n = rng.integers(0, 9, size=(25, 3)).astype(float)
            m[::5] = 0.0  # no per-worker demand: unbounded
            got = _episode.n_cap(cap, m, n)
            np.testing.assert_array_equal(got, _kernels.n_cap(cap, m, n))
            jobs += got.size
    assert jobs >= 1000
