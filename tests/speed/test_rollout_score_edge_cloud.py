"""A rollout continuation of EdgeCloudML scored without a fork (``EdgeCloudMLEnv.score_aonline``,
``PaperSimulator.score_greedy``, ``_kernels.greedy_score``, ``AOnline.score_after``) against the fork it replaces.

* The score equals the total of ``advance_aonline(steps, first=key, observe=False)`` on a fork (``==``), on more
  than 1,000 (state, action, horizon) triples of lean and full envs, in three action modes, with and without the
  cloud (A_online-E), and the env scored is left as it was (its state, its next steps);
* the log's and the queues' growth inside the compiled call (``NEED_LOG``, ``NEED_QUEUE``) on states whose buffers
  are cut to the least room: the same totals as the Python path, which grows its own;
* ``None`` where the fork's path would take fewer steps (the episode's end) or where the compiled loop stops for
  work it does not do (a heap with no room): rollout then forks, with the same decisions;
* rollout's decisions with the scores (``RolloutPolicy.scored``) on and off: equal.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.reference.aonline import AOnline
from edgegym.agents.reference.rollout import RolloutPolicy
from edgegym.agents.runner import policy_actions

import edgegym  # noqa: F401  (registers the ids)
from edgegym.families.edge_cloud import _kernels as K

SIM_STATE = ("job_end", "job_zeta", "job_edge_chunks", "job_cloud_chunks", "chunk_worker", "chunk_end", "chunk_rho",
             "chunk_alpha", "chunk_key", "chunk_seq", "_rem", "_qlen", "_phead", "_plen", "worker_sync",
             "_head_start", "_head_end", "_qbuf", "_llast", "_cnt", "_served", "_end_part", "_arr_part")


def _snapshot(env) -> dict:
    """Everything of the env's state a score could change, copied."""
    sim = env.sim
    out = {f: np.array(getattr(sim, f), copy=True) for f in SIM_STATE}
    n = int(sim._cnt[0])
    out.update({f: np.array(getattr(sim, f)[:n], copy=True) for f in ("_lw", "_ls", "_le", "_lc")})
    p = int(sim._plen.max(initial=0))
    out.update({f: np.array(getattr(sim, f)[:, :p], copy=True) for f in ("_ps", "_pe", "_pc")})
    out["scalars"] = (env._k, env._return, env._fallbacks, env._illegal, sim.now, sim._advanced, sim.num_placed,
                      sim._phi, sim._end_np, sim._arr_np)
    return out


def _assert_unchanged(before: dict, env) -> None:
    after = _snapshot(env)
    assert before["scalars"] == after["scalars"]
    for f, v in before.items():
        if f != "scalars":
            np.testing.assert_array_equal(v, after[f], err_msg=f)


def _random_action(env, rng):
    if env.action_mode == "server_proportions":
        return (rng.random(env.action_space.shape) * env.action_masks()).astype(np.float32)
    return int(rng.choice(np.flatnonzero(env.action_masks())))


@pytest.mark.parametrize("mode", ("cloud_fraction", "server_proportions", "cloud_split"))
@pytest.mark.parametrize("env_id", ("EdgeCloudML-testbed-v1", "EdgeCloudML-v1"))
def test_score_equals_the_forked_continuation_and_changes_nothing(env_id, mode):
    env = gym.make(env_id, config={"env": {"action_mode": mode}}).unwrapped
    env.reset(seed=7)
    rng = np.random.default_rng(7)
    J = env._J
    checked = declined = 0
    points, every = (60, 2) if env_id == "EdgeCloudML-v1" else (J - 1, 1)
    for k in range(points):
        if k % every == 0:
            lean = env.fork(seed=k, history=False)
            for host in (lean, env):  # a lean resampled fork (rollout's), and the real env with its whole history
                for edge_only in (False, True):
                    key = host.action_key(_random_action(host, rng) if k % 2 else AOnline(host).act(None))
                    for steps in (1, 4, 20):
                        before = _snapshot(host)
                        score = AOnline(host, edge_only=edge_only).score_after(key, steps, 0.125)
                        _assert_unchanged(before, host)
                        g = host.fork(seed=0, future="keep")
                        ref = g.advance_aonline(steps, edge_only=edge_only, total=0.125, observe=False, first=key)
                        if ref[1] < steps:
                            assert score is None  # the episode ends first: the caller forks
                        elif score is None:  # declined: the Python path grew the heap or kept the bounded history
                            hs, gs = host.sim, g.sim
                            assert gs._hcap > hs._hcap or gs.chunk_base != hs.chunk_base or \
                                gs._flush_at != hs._flush_at
                            declined += 1
                        else:
                            assert score == ref[2]
                            checked += 1
            a = AOnline(lean).act(None)  # the scored env goes on as if never scored
            lean2 = env.fork(seed=k, history=False)
            assert lean.step(a)[1:3] == lean2.step(a)[1:3]
        env.step(_random_action(env, rng) if k % 2 else AOnline(env).act(None))
    print(f"{env_id} {mode}: {checked} scores equal, {declined} declined")
    assert checked >= 40


def _cut_log(sim) -> None:
    """The log cut to the least room its state allows (every planned segment, no more): the next placement needs
    it grown."""
    need = int(K.log_need(sim._cnt, sim._plen, sim._phead))
    for f in ("_lw", "_ls", "_le", "_lc"):
        setattr(sim, f, np.array(getattr(sim, f)[:need], copy=True))
    sim._lcap = need


def _cut_queue(sim) -> None:
    """The queues (and the plans and re-planning scratch that go with them) cut to the longest queue."""
    cap = max(int(sim._qlen.max(initial=0)), int(sim._plen.max(initial=0) + 1) // 2, 1)
    sim._qbuf = np.array(sim._qbuf[:, :cap], copy=True)
    sim._si, sim._sf = np.zeros((4, cap), dtype=np.int64), np.zeros((4, cap))
    for f in ("_ps", "_pe", "_pc"):
        setattr(sim, f, np.array(getattr(sim, f)[:, : 2 * cap + 2], copy=True))
    sim._qcap = cap


@pytest.mark.parametrize("cut", (_cut_log, _cut_queue))
def test_growth_inside_the_score(cut):
    env = gym.make("EdgeCloudML-v1", config={"env": {"action_mode": "cloud_fraction"}}).unwrapped
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    grown = checked = 0
    for k in range(44):
        if k % 2 == 0:
            f = env.fork(seed=k, history=False)
            cut(f.sim)
            key = f.action_key(_random_action(f, rng))
            score = f.score_aonline(20, key, total=0.0)
            g = f.fork(seed=0, future="keep")
            ref = g.advance_aonline(20, observe=False, first=key)
            assert ref[1] == 20 and score == ref[2]
            checked += 1
            # did the Python path need the growth? (its buffers are larger than the cut ones)
            if cut is _cut_log:
                grown += g.sim._lw.size > f.sim._lw.size
            else:
                grown += g.sim._qbuf.shape[1] > f.sim._qbuf.shape[1]
        env.step(AOnline(env).act(None))
    assert checked >= 20 and grown >= 10


def test_score_declines_at_the_end_for_a_full_heap_and_on_a_spent_env():
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": {"action_mode": "cloud_fraction"}}).unwrapped
    env.reset(seed=2)
    for _ in range(env._J - 5):
        env.step(AOnline(env).act(None))
    key = env.action_key(AOnline(env).act(None))
    lean = env.fork(seed=0, history=False)  # (room in its heap for a look-ahead's steps)
    assert lean.score_aonline(4, key) is not None
    assert lean.score_aonline(5, key) is None  # 4 steps are left before the last: fewer than asked
    assert lean.score_aonline(0, key) is None
    f = lean.fork(seed=0, future="keep")
    n = int(f.sim._cnt[1])
    for name in ("_hk", "_hs", "_hi"):  # no room for one more completion-heap entry: the loop stops for it
        setattr(f.sim, name, np.array(getattr(f.sim, name)[:n], copy=True))
    f.sim._hcap = n
    assert f.score_aonline(4, key) is None
    g = env.fork(seed=0, history=False)
    g.advance_aonline(2, observe=False, first=key, last=True)
    with pytest.raises(RuntimeError, match="look-ahead"):
        g.score_aonline(1, key)


def _decisions(env_id, policy, seeds, monkeypatch, scored, limit=None):
    with monkeypatch.context() as mp:
        mp.setattr(RolloutPolicy, "scored", scored)
        return policy_actions(env_id, policy, seeds, limit)


def test_rollout_decisions_with_and_without_scores(monkeypatch):
    for name, env_id, seeds, limit in (("rollout(K=2,H=6,k=6):aonline", "EdgeCloudML-testbed-v1", range(10), None),
                                       ("rollout(K=3,H=3,k=4):aonline-e", "EdgeCloudML-testbed-v1", range(3), None),
                                       ("rollout:aonline", "EdgeCloudML-v1", [1], 15)):
        on, changed = _decisions(env_id, name, seeds, monkeypatch, True, limit)
        off, changed_off = _decisions(env_id, name, seeds, monkeypatch, False, limit)
        assert on == off and changed == changed_off
