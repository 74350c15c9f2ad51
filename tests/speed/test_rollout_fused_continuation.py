"""A rollout candidate's step and its A_online continuation in one compiled call
(``EdgeCloudMLEnv.advance_aonline(first=key)``, ``AOnline.advance_after``) against the two-call path it replaces
(``step`` with the action, then ``advance_aonline``): the same total reward (``==``), the same state and the same
observation afterwards, in every action mode, with random legal actions and A_online's own, at decision points
from the first to the last; and the rollout teacher's decisions with the fused path on and off.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.policy import Policy
from edgegym.agents.reference.aonline import AOnline
from edgegym.agents.reference.rollout import RolloutPolicy
from edgegym.agents.runner import policy_actions

import edgegym  # noqa: F401  (registers the ids)

MODES = ("server_proportions", "cloud_fraction", "cloud_split")
SIM_STATE = ("job_end", "job_zeta", "job_edge_chunks", "job_cloud_chunks", "chunk_worker", "chunk_end", "chunk_rho",
             "chunk_alpha", "_rem", "_qlen", "_phead", "_plen", "worker_sync", "_head_start", "_head_end")


def _same_state(a, b) -> None:
    sa, sb = a.sim, b.sim
    assert (a._k, a._return) == (b._k, b._return)
    assert (sa.now, sa.num_placed, sa.projected_total_jct, sa.postponed_chunks) == \
        (sb.now, sb.num_placed, sb.projected_total_jct, sb.postponed_chunks)
    for f in SIM_STATE:
        np.testing.assert_array_equal(getattr(sa, f), getattr(sb, f), err_msg=f)
    np.testing.assert_array_equal(a.action_masks(), b.action_masks())
    np.testing.assert_array_equal(a.observe(), b.observe())


def _actions(env, rng, mode):
    """A_online's action and two random legal ones at the current decision point."""
    out = [AOnline(env).act(None)]
    for _ in range(2):
        if mode == "server_proportions":
            out.append((rng.random(env.action_space.shape) * env.action_masks()).astype(np.float32))
        else:
            out.append(int(rng.choice(np.flatnonzero(env.action_masks()))))
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("edge_only", (False, True))
def test_first_placement_equals_step_then_advance(mode, edge_only):
    """At every decision point of two testbed episodes (and the first 40 of an EdgeCloudML-v1 one), for three
    actions and two horizons (6 steps, and to the last step): the fused call and ``step`` + ``advance_aonline``."""
    checked = 0
    for env_id, seed, limit in (("EdgeCloudML-testbed-v1", 0, None), ("EdgeCloudML-testbed-v1", 1, None),
                                ("EdgeCloudML-v1", 2, 40)):
        env = gym.make(env_id, config={"env": {"action_mode": mode}}).unwrapped
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        J = env.jobs.num_jobs
        for k in range(J if limit is None else limit):
            for a in _actions(env, rng, mode):
                key = env.action_key(a)
                for steps in (6, None):
                    fused = env.fork(seed=0, future="keep")
                    plain = env.fork(seed=0, future="keep")
                    obs, n, total = fused.advance_aonline(steps, edge_only=edge_only, total=0.25, observe=False,
                                                          first=key)
                    assert obs is None
                    if k == J - 1:  # the first step would end the episode: nothing taken
                        assert (n, total) == (0, 0.25)
                        _same_state(fused, plain)
                        continue
                    _, r, term, _, _ = plain.step(a)
                    assert not term
                    _, m, total_plain = plain.advance_aonline(None if steps is None else steps - 1,
                                                              edge_only=edge_only, total=0.25 + r, observe=False)
                    assert n == m + 1 and total == total_plain, (env_id, k, steps)
                    _same_state(fused, plain)
                    checked += 1
            if k < J - 1:
                env.step(AOnline(env, edge_only=edge_only).act(None))
    assert checked > 300


def test_bad_first_placement_is_refused():
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": {"action_mode": "cloud_split"}}).unwrapped
    env.reset(seed=0)
    counts = np.frombuffer(env.action_key(0)[0], dtype=np.int64).copy()
    D = int(env.jobs.num_chunks[0])
    with pytest.raises(ValueError, match="job 0 must put its"):
        env.advance_aonline(3, first=(counts.tobytes(), D + 1))
    with pytest.raises(ValueError, match="entries"):
        env.advance_aonline(3, first=(counts[:-1].tobytes(), 0))
    assert env._k == 0 and env.sim.num_placed == 0  # nothing placed


def test_advance_after_defaults_and_wrapped_env():
    split = {"action_mode": "cloud_split"}
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": split})
    env.reset(seed=0)
    assert Policy.advance_after(AOnline(env), b"", 3, 0.0) is None  # the default: no such path
    assert AOnline(env).advance_after(env.unwrapped.action_key(0), 3, 0.0) is None  # a wrapped env
    srtf = gym.make("EdgeCloudML-testbed-v1", config={"env": {"discipline": "srtf", **split}}).unwrapped
    srtf.reset(seed=0)
    assert AOnline(srtf).advance_after(srtf.action_key(0), 3, 0.0) is None  # not the paper's discipline


@pytest.mark.parametrize("name", ("rollout(K=2,H=6,k=6):aonline", "rollout(K=2,H=0,k=6):aonline-e",
                                  "rollout(K=1,H=2,k=3):aonline"))
def test_rollout_decisions_with_and_without_the_fused_path(name, monkeypatch):
    """Whole testbed episodes (H=0: every continuation to the episode's end, the last step by ``step``): the same
    decisions with the fused continuation and with the candidate's step taken apart."""
    seeds = range(6)
    fast, changed = policy_actions("EdgeCloudML-testbed-v1", name, seeds)
    monkeypatch.setattr(RolloutPolicy, "fused", False)
    ref, ref_changed = policy_actions("EdgeCloudML-testbed-v1", name, seeds)
    assert fast == ref and changed == ref_changed
    assert len(fast) >= 100
