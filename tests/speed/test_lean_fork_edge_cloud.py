"""EdgeCloudML's lean forks (``fork(history=False)``, ``PaperSimulator.lean_copy``) against the full ones.

A lean fork keeps only what the jobs still in the system need (a window of per-chunk slots, the executed log
consumed into A_ps's intervals); everything it decides and reports must be what the full-history fork gives:

* the simulator: ``lean_copy`` at a random point of an episode, then the same placements (A_greedy's or random,
  cloud chunks included) on both: the same candidate tables, records, jobs in the system, completions,
  preemptions, A_ps's log and draws, and the exact busy time; with tiny windows and rooms (slides and growths);
* the env: a full and a lean fork at several points of an episode, stepped to the end with A_online's and random
  legal actions in two action modes: the same rewards, observations, masks and final metrics (utilisation: the
  exact sum, within one rounding), over more than 1,000 states per mode;
* the lean fork by ``_fork_copy`` against the generic fork's lean copy (``_fast_fork = False``), and a lean
  fork's own forks (keep and resampled) against a full fork's.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.reference.aonline import AOnline

import edgegym  # noqa: F401  (registers the ids)
from edgegym.families.edge_cloud import _reference as ref
from edgegym.families.edge_cloud import simulator as simmod
from edgegym.families.edge_cloud.env import EdgeCloudMLEnv
from edgegym.families.edge_cloud.simulator import PaperSimulator
from edgegym.families.edge_cloud.testing import random_instance, random_placement


def _placement(sim, j, cluster, jobs, rng, greedy):
    cand = sim.candidates(j)
    D = int(jobs.num_chunks[j])
    if greedy and np.isfinite(cand.q).any():
        counts, n_cloud = ref.greedy_placement(cand.q, np.arange(cand.q.size), D, cand.p_edge, cand.qc0, cand.qc1)
        return cand, counts, n_cloud
    counts, n_cloud = random_placement(sim, cluster, j, D, rng)
    return cand, counts, n_cloud


@pytest.mark.parametrize("tiny", (False, True))
def test_lean_copy_decides_and_reports_as_the_full_simulator(tiny, monkeypatch):
    if tiny:  # every window and flush mechanism on small instances
        monkeypatch.setattr(simmod, "_WIN_MIN", 4)
        monkeypatch.setattr(simmod, "_FLUSH_MIN", 3)
    compared = 0
    for seed in range(150):
        rng = np.random.default_rng(seed)
        cluster, jobs = random_instance(
            rng, num_servers=int(rng.integers(1, 4)), max_workers=int(rng.integers(1, 4)),
            num_jobs=int(rng.integers(2, 40)), max_chunks=int(rng.integers(1, 6)), num_types=int(rng.integers(1, 3)),
            zero_delay=bool(rng.random() < 0.2), integer_p=bool(rng.random() < 0.5))
        J = jobs.num_jobs
        cut = int(rng.integers(0, J))
        full = PaperSimulator(cluster, jobs, rng=np.random.default_rng(seed + 1), slotted=seed % 5 == 0)
        lean = None
        for j in range(J):
            full.advance_to(float(jobs.arrival_slots[j]))
            if j == cut:
                lean = full.lean_copy(room=int(rng.integers(1, 6)) if tiny else 4096)
                assert not lean.keep_schedule and lean.chunk_base <= full._off_list[j]
            ca, counts, n_cloud = _placement(full, j, cluster, jobs, rng, seed % 2 == 1)
            ra = full.place(j, counts, n_cloud, ca)
            if lean is None:
                continue
            lean.advance_to(float(jobs.arrival_slots[j]))
            cb = lean.candidates(j)
            for f in ("q", "t_star", "wait", "a2_weight", "a2_count", "backlog"):
                np.testing.assert_array_equal(getattr(ca, f), getattr(cb, f), err_msg=f"seed {seed} {f}")
            assert (ca.qc0, ca.qc1) == (cb.qc0, cb.qc1)
            rb = lean.place(j, counts, n_cloud, cb)
            assert ra["delta_phi"] == rb["delta_phi"] and ra["projected_jct"] == rb["projected_jct"], seed
            assert ra["postponed_chunks"] == rb["postponed_chunks"] and ra["zeta"] == rb["zeta"]
            np.testing.assert_array_equal(ra["alpha"], rb["alpha"])
            assert full.jobs_in_system() == lean.jobs_in_system()
            assert full.projected_total_jct == lean.projected_total_jct
            compared += 1
        oa, ob = full.drain(), lean.drain()
        np.testing.assert_array_equal(oa.completion_slots, ob.completion_slots)
        np.testing.assert_array_equal(oa.edge_chunks, ob.edge_chunks)
        assert oa.preemptions == ob.preemptions and oa.extra == ob.extra, seed
        np.testing.assert_array_equal(full.ps_log, lean.ps_log)  # A_ps: the same intervals and draws
        assert full.rng.bit_generator.state == lean.rng.bit_generator.state
        seg = full.segments()
        assert lean.busy_time == math.fsum((seg[:, 2] - seg[:, 1]).tolist())
    assert compared > 1000


def _metrics_equal(ma: dict, mb: dict) -> None:
    assert ma.keys() == mb.keys()
    for key, va in ma.items():
        if key == "utilisation":  # the exact sum of the runs' lengths against NumPy's sum: one rounding apart
            assert va == pytest.approx(mb[key], rel=1e-12, abs=1e-15)
        else:
            assert va == mb[key], key


@pytest.mark.parametrize("mode", ("cloud_fraction", "server_proportions"))
def test_lean_fork_steps_as_the_full_fork(mode):
    """Full and lean forks (keep and resampled futures) at several points of five episodes, stepped to the end:
    the same rewards, observations, masks and final metrics."""
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": {"action_mode": mode}}).unwrapped
    states = 0
    for seed in range(5):
        env.reset(seed=seed)
        J = env.jobs.num_jobs
        base = AOnline(env)
        for k in range(J):
            if k % 4 == 1 or k == J - 1:
                for future in ("keep", "resample"):
                    full = env.fork(seed=k, future=future)
                    lean = env.fork(seed=k, future=future, history=False)
                    assert full.keep_schedule and not lean.keep_schedule
                    assert lean.resampled == full.resampled and lean.clairvoyant == full.clairvoyant
                    np.testing.assert_array_equal(full.jobs.arrival_slots, lean.jobs.arrival_slots)
                    np.testing.assert_array_equal(full.observe(), lean.observe())
                    rng = np.random.default_rng(k)
                    term = False
                    while not term:
                        if rng.random() < 0.5:
                            a = AOnline(full).act(None)
                        elif mode == "server_proportions":
                            a = (rng.random(full.action_space.shape) * full.action_masks()).astype(np.float32)
                        else:
                            a = int(rng.choice(np.flatnonzero(full.action_masks())))
                        oa, ra, term, _, ia = full.step(a)
                        ob, rb, term_b, _, ib = lean.step(a)
                        assert (ra, term) == (rb, term_b)
                        np.testing.assert_array_equal(oa, ob)
                        np.testing.assert_array_equal(ia["action_mask"], ib["action_mask"])
                        states += 1
                    _metrics_equal(ia["episode_metrics"], ib["episode_metrics"])
                    np.testing.assert_array_equal(full.sim.ps_log, lean.sim.ps_log)
            if k < J - 1:
                env.step(base.act(None))
    assert states > 1000


def test_lean_fork_by_the_fast_copy_equals_the_generic_one(monkeypatch):
    """``_fork_copy``'s lean fork against the generic fork's lean copy (``_fast_fork = False``), and the lean
    fork's own keep and resampled forks against a full fork's: the same steps, rewards and observations."""
    env = gym.make("EdgeCloudML-v1", config={"env": {"action_mode": "cloud_fraction"}}).unwrapped
    env.reset(seed=4)
    base = AOnline(env)
    checked = 0
    for k in range(env.jobs.num_jobs - 1):
        if k in (0, 40, 150, 290):
            for future in ("keep", "resample"):
                fast = env.fork(seed=k, future=future, history=False)
                monkeypatch.setattr(EdgeCloudMLEnv, "_fast_fork", False)
                slow = env.fork(seed=k, future=future, history=False)
                monkeypatch.undo()
                full = env.fork(seed=k, future=future)
                pairs = [(fast, slow), (fast.fork(seed=1, future="keep"), full.fork(seed=1, future="keep")),
                         (fast.fork(seed=2, future="resample"), full.fork(seed=2, future="resample"))]
                for a_env, b_env in pairs:
                    assert (a_env.sim.chunk_base, a_env.sim._win_cap) == (b_env.sim.chunk_base, b_env.sim._win_cap) \
                        or b_env.keep_schedule
                    for _ in range(12):
                        act = AOnline(a_env).act(None)
                        oa, ra, ta, _, _ = a_env.step(act)
                        ob, rb, tb, _, _ = b_env.step(act)
                        assert (ra, ta) == (rb, tb)
                        np.testing.assert_array_equal(oa, ob)
                        checked += 1
                        if ta:
                            break
        env.step(base.act(None))
    assert checked > 100


def test_history_false_on_a_bounded_env_is_a_plain_fork():
    """An env that already keeps the bounded history forks the same way with or without ``history``."""
    env = gym.make("EdgeCloudML-testbed-v1", keep_schedule=False).unwrapped
    env.reset(seed=0)
    for _ in range(10):
        env.step(AOnline(env).act(None))
    a, b = env.fork(seed=3, future="keep"), env.fork(seed=3, future="keep", history=False)
    for _ in range(10):
        act = AOnline(a).act(None)
        assert a.step(act)[1] == b.step(act)[1]


@pytest.mark.parametrize("history", (True, False))
def test_shared_generators_leave_every_stream_as_its_own(history):
    """A fork shares its parent's generators (the env's and A_ps's) until one of them draws: a fork that drains
    first leaves the parent's A_ps draws and generator states those of an env that was never forked."""
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": {"action_mode": "cloud_fraction"}}).unwrapped
    twin = gym.make("EdgeCloudML-testbed-v1", config={"env": {"action_mode": "cloud_fraction"}}).unwrapped
    env.reset(seed=7)
    twin.reset(seed=7)
    for _ in range(env.jobs.num_jobs // 2):
        env.step(AOnline(env).act(None))
        twin.step(AOnline(twin).act(None))
    fork = env.fork(seed=1, future="keep", history=history)
    assert fork.sim.rng is env.sim.rng or not history  # shared, not copied (a lean copy takes its own)
    term = False
    while not term:  # the fork drains first: it draws from a generator of its own
        _, _, term, _, _ = fork.step(AOnline(fork).act(None))
    fork.reset(seed=None)  # draws from the env's generator: a copy of its own first
    term = False
    while not term:
        a = AOnline(env).act(None)
        assert env.step(a)[1] == twin.step(a)[1]
        term = env._k >= env._J
    np.testing.assert_array_equal(env.sim.ps_log, twin.sim.ps_log)
    assert env.sim.rng.bit_generator.state == twin.sim.rng.bit_generator.state
    assert env.np_random.bit_generator.state == twin.np_random.bit_generator.state


def test_own_generator_copies_a_shared_generator_once():
    """``own_generator``: a copy in the same state where ``_rng_shared`` says the generator is shared, then the
    flag is cleared; nothing where it is not shared."""
    from types import SimpleNamespace

    from edgegym.core.forking import own_generator

    g = np.random.default_rng(3)
    a = SimpleNamespace(rng=g, _rng_shared=True)
    own_generator(a, "rng")
    assert a.rng is not g and a.rng.bit_generator.state == g.bit_generator.state and not a._rng_shared
    b = SimpleNamespace(rng=g, _rng_shared=False)
    own_generator(b, "rng")
    assert b.rng is g


def test_forks_of_a_finished_episode_and_of_a_job_level_discipline():
    """Forks of a drained env (A_ps's log an array) and then of a running one (no log yet), full and lean: each
    copies what it holds; with a job-level discipline (SRTF) lean and full forks step alike."""
    env = gym.make("EdgeCloudML-tiny-v1").unwrapped
    env.reset(seed=1)
    term = False
    while not term:
        term = env.step(AOnline(env).act(None))[2]
    for history in (True, False):
        f = env.fork(seed=0, future="keep", history=history)
        assert f.sim.preemptions() == env.sim.preemptions()
        np.testing.assert_array_equal(f.sim.ps_log, env.sim.ps_log)
        assert f.sim.ps_log is not env.sim.ps_log
        with pytest.raises(RuntimeError, match="terminated"):
            f.step(0)
    srtf = gym.make("EdgeCloudML-tiny-v1", config={"env": {"discipline": "srtf"}}).unwrapped
    srtf.reset(seed=2)
    srtf.step(0)
    for future in ("keep", "resample"):
        lean, full = srtf.fork(seed=3, future=future, history=False), srtf.fork(seed=3, future=future)
        term = False
        while not term:
            o1, r1, term, _, _ = lean.step(0)
            o2, r2, _, _, _ = full.step(0)
            assert r1 == r2
            np.testing.assert_array_equal(o1, o2)
