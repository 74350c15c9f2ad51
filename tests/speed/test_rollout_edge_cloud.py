"""The fast paths of ``rollout:aonline`` on EdgeCloudML against the reference paths kept as the oracles.

* ``EdgeCloudMLEnv.step_quiet`` + ``observe`` against ``step``: the same rewards (``==``), the same termination,
  the same observation where one is asked for, the same simulator state, after A_online's and random legal actions,
  to the episode's end (the drain), in every action mode;
* ``fork`` by ``_fork_copy`` (one pass over the attributes; keep and resampled forks) against ``fork_env``'s
  generic walk (``_fast_fork = False``): the same state, and the two forks replay the same episode step for step;
* ``action_key``: actions with equal keys give the same reward and next state, and the key changes nothing;
* the rollout teacher's decisions with every fast path on (quiet first step, one continuation per distinct
  placement, the fast forks, the resampled forks' shared keys and reserved buffers) and off
  (``_continue_reference``, ``dedupe = False``, ``lean_forks = False``, ``scored = False``, ``_fast_fork = False``,
  no reserve) on more than 1,000 states, and rollout departs from its base on some of them.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.reference.aonline import AOnline
from edgegym.agents.reference.rollout import RolloutPolicy
from edgegym.agents.runner import policy_actions

import edgegym  # noqa: F401  (registers the ids)
from edgegym.families.edge_cloud.env import EdgeCloudMLEnv

MODES = ("server_proportions", "cloud_fraction", "cloud_split")
SIM_STATE = ("job_end", "job_zeta", "job_edge_chunks", "job_cloud_chunks", "chunk_worker", "chunk_end", "chunk_rho",
             "chunk_alpha", "_rem", "_qlen", "_phead", "_plen", "worker_sync", "_head_start", "_head_end")


def _assert_same_state(a: EdgeCloudMLEnv, b: EdgeCloudMLEnv) -> None:
    sa, sb = a.sim, b.sim
    assert (a._k, a._return, a._fallbacks, a._illegal) == (b._k, b._return, b._fallbacks, b._illegal)
    assert (sa.now, sa.num_placed, sa.projected_total_jct, sa.postponed_chunks) == \
        (sb.now, sb.num_placed, sb.projected_total_jct, sb.postponed_chunks)
    for f in SIM_STATE:
        np.testing.assert_array_equal(getattr(sa, f), getattr(sb, f), err_msg=f)
    n = int(sa._cnt[0])
    assert n == int(sb._cnt[0])
    for f in ("_lw", "_ls", "_le", "_lc"):
        np.testing.assert_array_equal(getattr(sa, f)[:n], getattr(sb, f)[:n], err_msg=f)
    np.testing.assert_array_equal(a.action_masks(), b.action_masks())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", ("EdgeCloudML-tiny-v1", "EdgeCloudML-testbed-v1"))
def test_step_quiet_and_observe_equal_step(env_id, mode):
    """Two copies of an episode, one stepped by ``step``, one by ``step_quiet`` (``observe`` every third step):
    the same rewards, termination, observations and state, to the end (the last step drains)."""
    quiet = gym.make(env_id, config={"env": {"action_mode": mode}}).unwrapped
    loud = gym.make(env_id, config={"env": {"action_mode": mode}}).unwrapped
    for seed in (0, 1):
        obs_q, _ = quiet.reset(seed=seed)
        obs_l, _ = loud.reset(seed=seed)
        np.testing.assert_array_equal(quiet.observe(), obs_l)
        rng = np.random.default_rng(seed)
        base = AOnline(quiet)
        k, term = 0, False
        while not term:
            if k % 2:
                a = base.act(None)
            elif mode == "server_proportions":
                a = (rng.random(quiet.action_space.shape) * quiet.action_masks()).astype(np.float32)
            else:
                a = int(rng.choice(np.flatnonzero(quiet.action_masks())))
            r_q, term, trunc = quiet.step_quiet(a)
            obs_l, r_l, term_l, trunc_l, _ = loud.step(a)
            assert (r_q, term, trunc) == (r_l, term_l, trunc_l) and type(r_q) is float
            if k % 3 == 0 or term:
                np.testing.assert_array_equal(quiet.observe(), obs_l)
            _assert_same_state(quiet, loud)
            k += 1
        np.testing.assert_array_equal(quiet.sim.ps_log, loud.sim.ps_log)  # the drain ran (A_ps's draws) in both
        with pytest.raises(RuntimeError, match="terminated"):
            quiet.step_quiet(0 if mode != "server_proportions" else np.ones(quiet.action_space.shape, np.float32))


def test_observe_before_reset_and_job_level_discipline():
    env = gym.make("EdgeCloudML-tiny-v1").unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.observe()
    with pytest.raises(RuntimeError, match="reset"):
        env.step_quiet(np.zeros(env.action_space.shape, np.float32))
    srtf = gym.make("EdgeCloudML-tiny-v1", config={"env": {"discipline": "srtf"}}).unwrapped
    ref = gym.make("EdgeCloudML-tiny-v1", config={"env": {"discipline": "srtf"}}).unwrapped
    srtf.reset(seed=2)
    ref.reset(seed=2)
    term = False
    while not term:
        r, term, _ = srtf.step_quiet(0)
        obs, r2, term2, _, _ = ref.step(0)
        assert (r, term) == (r2, term2)
        np.testing.assert_array_equal(srtf.observe(), obs)
    assert srtf.action_key(0) == ref.action_key(0)


@pytest.mark.parametrize("env_id", ("EdgeCloudML-testbed-v1", "EdgeCloudML-v1"))
def test_fast_fork_equals_the_generic_fork(env_id, monkeypatch):
    """At several points of an episode, of the real env and of a resampled fork: ``_fork_copy``'s fork and
    ``fork_env``'s are in the same state and replay the same steps (rewards, observations, state)."""
    env = gym.make(env_id, config={"env": {"action_mode": "cloud_fraction"}}).unwrapped
    env.reset(seed=3)
    J = env.jobs.num_jobs
    base = AOnline(env)
    checked = 0
    for k in range(J - 1):
        if k in (0, 1, J // 3, J - 6, J - 2):
            for parent, future in ((env, "keep"), (env, "resample"), (env.fork(seed=k, future="resample"), "keep")):
                fast = parent.fork(seed=k, future=future)
                monkeypatch.setattr(EdgeCloudMLEnv, "_fast_fork", False)
                slow = parent.fork(seed=k, future=future)
                monkeypatch.undo()
                np.testing.assert_array_equal(fast.jobs.arrival_slots, slow.jobs.arrival_slots)
                np.testing.assert_array_equal(fast.sim._keys, slow.sim._keys)
                assert (fast.clairvoyant, fast.resampled, fast.fork_seed) == \
                    (slow.clairvoyant, slow.resampled, slow.fork_seed)
                _assert_same_state(fast, slow)
                for _ in range(min(8, J - k)):
                    a = AOnline(fast).act(None)
                    o1, r1, t1, _, _ = fast.step(a)
                    o2, r2, t2, _, _ = slow.step(a)
                    assert (r1, t1) == (r2, t2)
                    np.testing.assert_array_equal(o1, o2)
                    _assert_same_state(fast, slow)
                    checked += 1
                    if t1:
                        break
                _assert_same_state(parent.fork(seed=0, future="keep"), parent.fork(seed=0, future="keep"))
        env.step(base.act(None))
    assert checked > 50


def test_action_key_groups_actions_with_the_same_effect():
    """Actions with equal keys: the same reward and state after the step; different keys: different placements.
    The key leaves the env as it was (counters included)."""
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": {"action_mode": "cloud_fraction"}}).unwrapped
    env.reset(seed=5)
    same = 0
    for _ in range(env.jobs.num_jobs - 1):
        legal = [int(a) for a in np.flatnonzero(env.action_masks())]
        before = (env._fallbacks, env._illegal, env._k)
        keys = {a: env.action_key(a) for a in range(env.action_space.n)}
        assert (env._fallbacks, env._illegal, env._k) == before
        groups: dict = {}
        for a in legal:
            groups.setdefault(keys[a], []).append(a)
        for acts in groups.values():
            runs = []
            for a in acts:
                g = env.fork(seed=0, future="keep")
                runs.append((g.step(a)[1], g))
            for r, g in runs[1:]:
                assert r == runs[0][0]
                sa, sb = g.sim, runs[0][1].sim
                for f in SIM_STATE:
                    np.testing.assert_array_equal(getattr(sa, f), getattr(sb, f), err_msg=f)
            same += len(acts) - 1
        env.step(AOnline(env).act(None))
    assert same > 0  # some decisions have actions with the same placement


def _decisions(env_id, policy, seeds, monkeypatch, fast, limit=None):
    """Every decision of ``policy`` on ``seeds``, with every fast path on or off."""
    with monkeypatch.context() as mp:
        if not fast:
            mp.setattr(RolloutPolicy, "_continue", RolloutPolicy._continue_reference)
            mp.setattr(RolloutPolicy, "dedupe", False)
            mp.setattr(RolloutPolicy, "lean_forks", False)
            mp.setattr(RolloutPolicy, "scored", False)
            mp.setattr(EdgeCloudMLEnv, "_fast_fork", False)
            mp.setattr(EdgeCloudMLEnv, "_FORK_HEAP", 0)
            mp.setattr(EdgeCloudMLEnv, "_FORK_LOG_ROWS", 0)
        return policy_actions(env_id, policy, seeds, limit)


def test_rollout_decisions_identical(monkeypatch):
    """>= 1,000 states: rollout(K=2,H=6,k=6):aonline on EdgeCloudML-testbed-v1 (whole episodes), and the
    leaderboard parameters (K=4, H=20, k=6) on EdgeCloudML-v1's first decisions; rollout leaves its base on some."""
    name = "rollout(K=2,H=6,k=6):aonline"
    seeds = range(34)
    fast, changed = _decisions("EdgeCloudML-testbed-v1", name, seeds, monkeypatch, True)
    ref, ref_changed = _decisions("EdgeCloudML-testbed-v1", name, seeds, monkeypatch, False)
    assert fast == ref and changed == ref_changed
    assert changed > 0
    fast2, _ = _decisions("EdgeCloudML-v1", "rollout:aonline", [0], monkeypatch, True, limit=25)
    ref2, _ = _decisions("EdgeCloudML-v1", "rollout:aonline", [0], monkeypatch, False, limit=25)
    assert fast2 == ref2
    assert len(fast) + len(fast2) >= 1000
