"""EdgeUtility's direct fork (``fork.DIRECT_FORK``: the state copied attribute by attribute) against the generic copy
of ``edgegym.core.forking.fork_env`` (the oracle): the same state of every attribute (arrays bit for bit, the
random generator's state, the aliasing of the estimate caches), the same steps afterwards, and a fork that is
independent of its parent; on more than 1,000 fork points, ``keep`` and ``resample`` forks, forks of forks."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.edge_utility import fork as fork_mod
from edgegym.families.edge_utility.env import EdgeUtilityEnv
from edgegym.families.edge_utility.testing import env_state, state

V1 = {"reward_credit": "dispatch", "obs_relative": True, "reward_scale": 100.0}
CASES = [
    ("testbed", {"scheduler": {"discipline": "srpt"}, "env": V1}),  # rollout:ondisc's env
    ("testbed", {"scheduler": {"discipline": "edf"}}),
    ("tiny", {"scheduler": {"discipline": "fifo", "cloud": "same"}, "env": V1}),  # a cloud in the bank
]


def _forks(env, seed, future, monkeypatch):
    monkeypatch.setattr(fork_mod, "DIRECT_FORK", False)
    ref = env.fork(seed=seed, future=future)
    monkeypatch.setattr(fork_mod, "DIRECT_FORK", True)
    assert fork_mod._direct_ok(env)
    return ref, env.fork(seed=seed, future=future)


def _same(a, b):
    sa, sb = state(a), state(b)
    sa.pop("_rng_shared"), sb.pop("_rng_shared")  # whether the generator is shared yet (not the env's state)
    assert sa == sb
    assert (a.clairvoyant, a.resampled, a.fork_seed) == (b.clairvoyant, b.resampled, b.fork_seed)
    assert sorted(vars(a)) == sorted(vars(b))
    if a._util_sim is not None:  # the estimate caches alias each other as in the original
        assert (a._util_sim[0] is a._est_sim) == (b._util_sim[0] is b._est_sim)


@pytest.mark.parametrize("preset,config", CASES)
def test_direct_fork_matches_generic_fork(preset, config, monkeypatch):
    config = {**config, "workload": {"num_jobs": 120}}
    env = EdgeUtilityEnv(preset, config=config)
    rng = np.random.default_rng(0)
    points = 0
    for seed in (0, 1):
        env.reset(seed=seed)
        while env._k < env._J - 1:
            if env._k % 2 == 0:
                env.query_finish()  # the estimate caches filled by a policy's query (aliased arrays)
            for future, fs in (("keep", 0), ("resample", 5 + env._k % 3)):
                ref, new = _forks(env, fs, future, monkeypatch)
                _same(ref, new)
                points += 1
            if env._k % 7 == 0:  # forks of a fork, and each fork continues as its oracle does
                before = env_state(env)
                r2, n2 = _forks(new, 0, "keep", monkeypatch)
                _same(r2, n2)
                for _ in range(min(5, env._J - 1 - env._k)):
                    a = int(rng.choice(np.flatnonzero(ref.action_masks())))
                    o1, x1, *_ = ref.step(a)
                    o2, x2, *_ = new.step(a)
                    assert x1 == x2 and np.array_equal(o1, o2)
                    n2.step_quiet(a)
                assert env_state(ref) == env_state(new)
                assert env_state(env) == before  # stepping the forks left the parent alone
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert points >= 300


def test_a_fork_and_its_parent_draw_from_their_own_generators():
    """The direct fork shares the parent's generator until either uses it: each then draws the stream the generic
    copy draws, and neither's draws move the other's."""
    env = EdgeUtilityEnv("testbed", config={"scheduler": {"discipline": "srpt"}, "workload": {"num_jobs": 30}})
    env.reset(seed=4)
    env.step(0)
    ref = fork_mod.fork_env(env, seed=0, future="keep", shared=fork_mod.FORK_SHARED)
    new = env.fork(seed=0, future="keep")
    assert new._np_random is env._np_random and new._rng_shared and env._rng_shared
    first = new.np_random.random(3)
    assert np.array_equal(first, ref.np_random.random(3))
    assert np.array_equal(env.np_random.random(3), first)  # the parent's stream did not move
    new.reset()  # draws the jobs from the fork's own generator
    assert env.np_random is not new.np_random
    env.np_random = np.random.default_rng(1)
    assert not env._rng_shared


def test_direct_fork_leaves_other_simulators_to_the_generic_copy():
    env = EdgeUtilityEnv("tiny", config={"scheduler": {"discipline": "fifo", "cloud": "infinite"}})
    env.reset(seed=0)
    assert not fork_mod._direct_ok(env)  # the infinite cloud is a server object outside the bank
    env.step(0)
    assert env.fork(seed=0, future="keep")._k == 1
    o4a = EdgeUtilityEnv("tiny")
    o4a.reset(seed=0)
    assert not fork_mod._direct_ok(o4a)


@pytest.mark.parametrize("preset,config", [
    ("testbed", {"scheduler": {"discipline": "srpt"}, "env": V1}),
    ("testbed", {"estimation": {"conservative": True, "delta": 0.2}}),  # O4A servers, planned times scaled by 1.2
    ("tiny", {"scheduler": {"discipline": "fifo"}}),
])
def test_rows_shared_by_the_forks_of_a_draw_match_computed_rows(preset, config, monkeypatch):
    """A resampled fork's observations with the draw's shared rows (``env.SHARE_DRAW_ROWS``) equal those computed
    for the fork alone and the from-scratch reference, over the forks of one draw at every decision point."""
    from edgegym.families.edge_utility import env as env_mod

    env = EdgeUtilityEnv(preset, config={**config, "workload": {"num_jobs": 300}})
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    seen = 0
    while env._k < env._J - 4:
        for fs in (0, 7):
            monkeypatch.setattr(env_mod, "SHARE_DRAW_ROWS", True)
            shared = env.fork(seed=fs)
            monkeypatch.setattr(env_mod, "SHARE_DRAW_ROWS", False)
            alone = env.fork(seed=fs)
            assert shared._job_features.base is not None and alone._job_features.base is None
            for _ in range(3):
                a = int(rng.choice(np.flatnonzero(alone.action_masks())))
                o1, *_ = shared.step(a)
                o2, *_ = alone.step(a)
                assert np.array_equal(o1, o2) and np.array_equal(o1, shared._observation_reference())
                seen += 1
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert seen >= 1700


@pytest.mark.parametrize("preset,config", [
    ("testbed", {"scheduler": {"discipline": "srpt"}, "env": V1}),
    ("tiny", {"estimation": {"conservative": True, "delta": 0.2}}),
])
def test_reused_splice_arrays_match_a_fresh_splice(preset, config, monkeypatch):
    """``fork.REUSE_SPLICE``: a resampled fork made after the last one was dropped writes the previous splice's arrays
    in place; its job table equals a fresh ``splice_jobs`` at every decision point, forwards and backwards, and a
    fork still held is never written over."""
    env = EdgeUtilityEnv(preset, config={**config, "workload": {"num_jobs": 200}})
    env.reset(seed=0)
    rng = np.random.default_rng(2)
    fields = ("release_s", "p_s", "up_s", "down_s", "p_est_s", "up_est_s", "down_est_s", "model")
    reused = 0
    points = [*range(0, 150), 40, 3, 120, 0]  # forwards, then jumps back
    held = env.fork(seed=0)  # held for the whole test: its arrays must never be written over
    kept = {f: getattr(held.jobs, f).copy() for f in fields}
    for k in points:
        if k < env._k:
            env.reset(seed=0)
        while env._k < k:
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        ahead = env.fork(seed=0, future="keep")  # the same job table, a later splice point: the next one goes back
        for _ in range(min(4, env._J - 2 - env._k)):
            ahead.step(0)
        for src, fs in ((env, 0), (env, 3), (ahead, 0)):
            monkeypatch.setattr(fork_mod, "REUSE_SPLICE", False)
            ref = src.fork(seed=fs)
            monkeypatch.setattr(fork_mod, "REUSE_SPLICE", True)
            before = env._fork_draws.get((fs, "jobs", "splice"))
            new = src.fork(seed=fs)
            reused += before is not None and new.jobs.p_s is before[3]["p_s"]
            for f in fields:
                a, b = getattr(ref.jobs, f), getattr(new.jobs, f)
                assert a.dtype == b.dtype and np.array_equal(a, b) and not b.flags.writeable, (k, f)
            assert new.jobs.utilities == ref.jobs.utilities
            assert state(new) == state(ref)
            o1, *_ = new.step(0)
            o2, *_ = ref.step(0)
            assert np.array_equal(o1, o2)
            del new, ref
    assert all(np.array_equal(getattr(held.jobs, f), kept[f]) for f in fields)
    assert reused >= len(points)  # most forks reused the arrays of the last one
