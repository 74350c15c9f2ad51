"""``policy_actions``: every action of a named policy over seeds, as differential tests of fast paths record them."""

from __future__ import annotations

from edgegym.agents.runner import policy_actions, run_episode


def test_policy_actions_follow_the_episode_and_its_limit():
    acts, changed = policy_actions("EdgeCloudML-tiny-v1", "aonline", [0, 1])
    rec = run_episode("EdgeCloudML-tiny-v1", "aonline", 0)
    assert len(acts) == 2 * rec["num_jobs"] and changed == 0
    assert policy_actions("EdgeCloudML-tiny-v1", "aonline", [0, 1], limit=1)[0] == [acts[0], acts[rec["num_jobs"]]]


def test_policy_actions_count_a_rollouts_departures():
    acts, changed = policy_actions("EdgeCloudML-tiny-v1", "rollout(K=2,H=3,k=3):aonline", [0])
    assert acts and 0 <= changed <= len(acts)
