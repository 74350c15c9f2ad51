"""WirelessUDL's one-call commit-mode step (``WirelessUDLEnv._commit_step``, the kernel ``_kernels.commit_step``: the
commit, the next job's candidate table and its observation in one compiled call) against the numpy reference env
(``_use_reference``) on >= 1,000 decision states: ``step`` and ``step_quiet`` + ``observe`` interleaved, masked
actions (the cheapest legal row instead), :class:`Plan` actions (the other path) between them, forks that keep or
redraw the future (the fork rebuilds the call's arguments; the parent goes on with its own), a calendar extended under
extreme load, ``proportional`` sampling and the v1 presets. Observations, masks, rewards, infos, candidate tables,
episode metrics and returns identical (``==``), no tolerance."""

from __future__ import annotations

import numpy as np

from edgegym.families.wireless_udl import _reference as ref
from edgegym.families.wireless_udl.env import WirelessUDLEnv
from edgegym.families.wireless_udl.testing import assert_same_candidates, assert_same_step, reference_pair


def _lockstep(e1: WirelessUDLEnv, e2: WirelessUDLEnv, rng, where: str, steps: int | None = None) -> int:
    """Step the compiled env ``e1`` and the reference env ``e2`` with the same actions, drawn at random among: a
    legal row by ``step``, a legal row by ``step_quiet`` then ``observe``, any row (masked ones too), a legal row as
    a ``Plan``; the decision states compared."""
    states = 0
    while steps is None or states < steps:
        at = f"{where} job {e1._k}"
        np.testing.assert_array_equal(e1.action_masks(), e2.action_masks(), err_msg=at)
        assert_same_candidates(e1._cand, e2._cand, at)
        np.testing.assert_array_equal(e1.observe(), e2.observe(), err_msg=at)
        np.testing.assert_array_equal(e1.observe(), ref.observation(e1), err_msg=at)
        states += 1
        mask = e1.action_masks()
        how = int(rng.integers(8))
        a = int(rng.choice(np.flatnonzero(mask)))
        if how == 0:  # any row: a masked one is replaced by the cheapest legal row (counted as illegal)
            a = int(rng.integers(mask.size))
        if how == 1:  # the structured API: Simulator.commit, then _prepare and _observation
            plan = e1._cand.plan(e1._k, a)
            s1, s2 = e1.step(plan), e2.step(plan)
            assert_same_step(s1, s2, at)
            done = s1[2] or s1[3]
        elif how == 2:  # no observation asked for: the step computes none
            r1, r2 = e1.step_quiet(a), e2.step_quiet(a)
            assert r1 == r2, at
            np.testing.assert_array_equal(e1.observe(), e2.observe(), err_msg=at)
            done = r1[1] or r1[2]
        else:
            s1, s2 = e1.step(a), e2.step(a)
            assert_same_step(s1, s2, at)
            assert s1[0] is not e1.observe()  # the step's observation is handed out once (a new array after)
            done = s1[2] or s1[3]
        if done:
            assert e1.episode_return() == e2.episode_return(), at
            assert e1.episode_metrics() == e2.episode_metrics(), at
            break
    return states


def test_default_ids_one_call_step_matches_reference_on_1000_states():
    """``WirelessUDL-v0`` / ``-v1`` presets at full size (100 jobs, 50 sites), and ``proportional`` sampling."""
    rng = np.random.default_rng(31)
    states = 0
    for preset in ("sim", "sim-v1", "sim-exp-proportional-v1"):
        for seed in range(5):
            e1, e2 = reference_pair(preset, None if preset != "sim-exp-proportional-v1" else
                           {"jobs": {"count": 40, "horizon_slots": 60, "arrival_window": [0, 59]}}, seed)
            states += _lockstep(e1, e2, rng, f"{preset} seed {seed}")
            assert e1._fast is not None and e1._fast[0] is e1.sim  # the one-call step ran
    assert states >= 1000


def test_forks_rebuild_the_call_and_the_parent_keeps_its_own():
    """Forks (the future kept or redrawn; a fork of a fork) step as the reference env's forks; the parent, whose
    arguments the fork shares until its first step, goes on unchanged."""
    rng = np.random.default_rng(32)
    states = 0
    for preset, future in (("sim", "keep"), ("sim-v1", "resample"), ("sim", "resample"), ("sim-v1", "keep")):
        e1, e2 = reference_pair(preset, {"jobs": {"count": 50, "horizon_slots": 75, "arrival_window": [0, 74]}}, 7)
        states += _lockstep(e1, e2, rng, f"{preset} before", steps=15)
        f1, f2 = e1.fork(seed=4, future=future), e2.fork(seed=4, future=future)
        f2._use_reference = True
        states += _lockstep(f1, f2, rng, f"{preset} fork {future}", steps=10)
        g1, g2 = f1.fork(seed=5, future=future), f2.fork(seed=5, future=future)
        g2._use_reference = True
        states += _lockstep(g1, g2, rng, f"{preset} fork of fork {future}")
        states += _lockstep(f1, f2, rng, f"{preset} fork {future} after its fork")
        states += _lockstep(e1, e2, rng, f"{preset} after")
    assert states >= 200


def test_extreme_load_extends_the_calendar_as_the_reference():
    """100 jobs in 20 slots and a calendar of about 20 slots: the calendar doubles when no row fits (the step's
    table then rebuilt as ``_prepare`` builds it, the observation by ``_observation``)."""
    rng = np.random.default_rng(0)
    extended = []
    for preset in ("sim", "sim-v1"):
        cfg = {"jobs": {"horizon_slots": 20, "arrival_window": [0, 19]}, "env": {"cap_factor": 1}}
        e1, e2 = reference_pair(preset, cfg, 0)
        length = e1.sim.calendar_len
        assert _lockstep(e1, e2, rng, f"{preset} extreme") == 100
        extended.append(e1.sim.calendar_len > length)
    assert any(extended)


def test_job_arrays_are_the_job_table_scalars():
    """The one-call step's per-job arrays = ``candidates._job_table``'s scalars, orders and latency vectors, and the
    worker grid ``_table`` passes (``_geo_grid`` of the job's N_max), for full-size and forked (redrawn) instances
    and jobs without data at some sites."""
    from edgegym.families.wireless_udl.candidates import _geo_grid, _job_table

    for preset, cfg in (("sim", None), ("sim-v1", None), ("testbed", {"env": {"worker_counts": 5}})):
        env = WirelessUDLEnv(preset, config=cfg)
        env.reset(seed=3)
        envs = [env, env.fork(seed=1, future="resample")]
        holes = env.inst.data.copy()
        holes[::3, 1] = 0  # every third job without data at site 1: no shared order
        envs.append(WirelessUDLEnv(preset, config=cfg,
                                   instance=__import__("dataclasses").replace(env.inst, data=holes)))
        envs[-1].reset(seed=0)
        for e in envs:
            jobs, scalars = e._job_arrays()
            _, _, lat, sc, orders = _job_table(e.sim)
            assert scalars is sc
            kap, nmax, arrival, kind, *floats, lat_tab, orders2, has, grids, grid_n = jobs
            assert lat_tab is lat
            for j in range(e.inst.num_jobs):
                got = (kap[j], nmax[j], arrival[j], kind[j], *(f[j] for f in floats))
                assert tuple(x.item() for x in got) == sc[j]
                assert has[j] == (orders[j].size > 0)
                if has[j]:
                    np.testing.assert_array_equal(orders2[j], orders[j])
                np.testing.assert_array_equal(grids[j, :grid_n[j]], _geo_grid(sc[j][1], e.G))
            assert not has.all() or e is not envs[-1]


def test_cached_upper_triangle_is_triu_indices():
    """The instance draw's cached upper-triangle indices (read only) = ``np.triu_indices(R, 1)``."""
    from edgegym.families.wireless_udl.instance import _upper

    for R in range(1, 70):
        rows, cols = _upper(R)
        want = np.triu_indices(R, 1)
        np.testing.assert_array_equal(rows, want[0])
        np.testing.assert_array_equal(cols, want[1])
        assert rows.dtype == want[0].dtype and not rows.flags.writeable and not cols.flags.writeable
        assert _upper(R)[0] is rows
