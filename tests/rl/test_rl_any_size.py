"""A saved shared-row agent at any cluster size: the shipped ``EdgeCloudML-v1`` agent (trained at 100 edge servers)
runs without flags at 8, 200 and 2 servers, takes the actions it took before at the trained size and on an env padded
to it, and a model that cannot adapt (a flat MLP) fails with an error naming the setting that fixes it."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch as th  # noqa: E402
from edgegym.agents.errors import UserError  # noqa: E402
from edgegym.agents.rl.learned import LearnedPolicy, LearnedPolicyError, load_learned_policy, load_model  # noqa: E402
from edgegym.agents.runner import run_episode  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
AGENT = f"maskable-ppo:{ROOT / 'docs/results/agents/models/EdgeCloudML-v1/model.zip'}"
FLAT = f"maskable-ppo:{ROOT / 'docs/results/agents/models/ecml_v0/model.zip'}"
CF = {"action_mode": "cloud_fraction"}  # the agent's action mode (its sidecar's env config)


@pytest.fixture(scope="module")
def model():
    return load_model(AGENT)


def _states(env, pol, seed: int, steps: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, mask) of the states of ``pol``'s episode (its first ``steps``)."""
    obs, _ = env.reset(seed=seed)
    out, done = [], False
    while not done and (steps is None or len(out) < steps):
        mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
        out.append((obs, mask))
        obs, _, term, trunc, _ = env.step(pol.predict(obs)[0])
        done = term or trunc
    return out


def test_runs_without_flags_on_the_testbed():
    """The command of the issue: the agent on the 8-server testbed, no --env-config."""
    rec = run_episode("EdgeCloudML-testbed-v1", AGENT, 100)
    assert rec["steps"] == 30 and np.isfinite(rec["objective"]) and rec["objective"] > 0


def test_runs_on_more_servers_than_trained():
    """200 edge servers (a cluster-size override alone: -v1's max_edge_servers derives from the cluster)."""
    cfg = {"cluster": {"num_edge_servers": 200}, "workload": {"num_jobs": 40}}
    rec = run_episode("EdgeCloudML-v1", AGENT, 100, cfg)
    assert rec["steps"] == 40 and np.isfinite(rec["objective"]) and rec["objective"] > 0


def test_v1_rows_follow_the_cluster():
    """-v1 derives max_edge_servers from the cluster: the default observation is unchanged (100 rows + cloud)."""
    assert gym.make("EdgeCloudML-v1").unwrapped.obs_layout()["rows"] == 101
    env = gym.make("EdgeCloudML-v1", config={"cluster": {"num_edge_servers": 400}})
    assert env.unwrapped.obs_layout()["rows"] == 401
    assert env.observation_space.shape == (842 + 300 * 8,)


def test_trained_size_keeps_its_path_and_actions(model):
    """At the trained size the default is the fixed path; the variable-row path forced there gives bit-identical
    logits and the same actions on every state of the first 60 decisions."""
    env = gym.make("EdgeCloudML-v1", config={"env": CF})
    fixed = LearnedPolicy(env, model, masked=True)
    assert fixed.layout is None
    variable = LearnedPolicy(env, model, masked=True, variable_rows=True)
    assert variable.layout == env.unwrapped.obs_layout()
    states = _states(env, fixed, 100, steps=60)
    assert len(states) == 60
    with th.inference_mode():
        for obs, mask in states:
            assert th.equal(fixed._logits(obs, mask), variable._logits(obs, mask))
            assert fixed._argmax(obs, mask) == variable._argmax(obs, mask)


def test_fewer_rows_same_actions_as_padded(model):
    """On the testbed, the variable-row path (9 rows) takes the actions of the path that ran before, the env padded
    to the trained 100 edge rows ({"env": {"max_edge_servers": 100}}): padding rows are zero and not pooled."""
    small = gym.make("EdgeCloudML-testbed-v1", config={"env": CF})
    padded = gym.make("EdgeCloudML-testbed-v1", config={"env": {**CF, "max_edge_servers": 100}})
    p_small, p_padded = LearnedPolicy(small, model, masked=True), LearnedPolicy(padded, model, masked=True)
    assert p_small.layout is not None and p_padded.layout is None
    for seed in (100, 101):
        a = [p_small._argmax(o, m) for o, m in _states(small, p_small, seed)]
        b = [p_padded._argmax(o, m) for o, m in _states(padded, p_padded, seed)]
        assert len(a) == 30 and a == b


def test_stochastic_action_on_another_size(model):
    """predict(deterministic=False) on the variable-row path draws a legal action from torch's generator."""
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": CF})
    pol = LearnedPolicy(env, model, masked=True)
    obs, _ = env.reset(seed=3)
    mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
    draws = []
    for _ in range(2):
        th.manual_seed(0)
        draws.append([pol.predict(obs, deterministic=False)[0] for _ in range(20)])
    assert draws[0] == draws[1] and all(mask[a] for a in draws[0])


def test_other_non_row_features_name_the_trained_setting():
    """tiny-v1 has 2 worker types (max_types 2): the job block is narrower, which no weight sharing bridges; the
    error names the trained env's setting, and with it the agent runs."""
    with pytest.raises(UserError, match=r"job features 29 \(model\) vs 13 \(env\).*\{\"env\": \{\"max_types\": 10\}\}"):
        run_episode("EdgeCloudML-tiny-v1", AGENT, 0)
    rec = run_episode("EdgeCloudML-tiny-v1", AGENT, 0, {"env": {"max_types": 10}})
    assert rec["steps"] == 3


def test_flat_model_error_names_max_edge_servers():
    """A flat MLP agent (trained at 100 edge servers) cannot adapt: on the testbed the error names
    {"env": {"max_edge_servers": 100}}; with it, it runs."""
    with pytest.raises(UserError, match=r"reads 101 rows: run with --env-config '\{\"env\": \{\"max_edge_servers\": "
                                        r"100\}\}'"):
        run_episode("EdgeCloudML-testbed-v0", FLAT, 0)
    rec = run_episode("EdgeCloudML-testbed-v0", FLAT, 0, {"env": {"max_edge_servers": 100}})
    assert rec["steps"] == 30


def test_flat_model_on_a_larger_cluster_says_what_cannot_work():
    """Above the flat model's 100 edge servers the same setting is named, with the caveat that the env must accept
    it and that a shared-row agent reads any number of rows."""
    cfg = {"cluster": {"num_edge_servers": 120}, "env": {"max_edge_servers": None, "action_mode": "cloud_split"}}
    env = gym.make("EdgeCloudML-v0", config=cfg)
    why = r"max_edge_servers\": 100.*possible only if this env accepts env.max_edge_servers = 100 \(it has 121 rows"
    with pytest.raises(LearnedPolicyError, match=why + r" now\).*SharedRowPolicy"):
        load_learned_policy(FLAT, env)


def test_shared_model_with_another_action_space_is_refused(model):
    """The variable-row path reads rows, not other actions: another action mode (another action count) fails."""
    env = gym.make("EdgeCloudML-testbed-v1", config={"env": {"action_mode": "cloud_split"}})
    with pytest.raises(LearnedPolicyError, match="non-row actions"):
        LearnedPolicy(env, model, masked=True)


def test_evaluate_agent_on_another_size():
    """The report's evaluation (argmax and sampled, with the entropy) runs at another size; at the trained size the
    entropy is the model's own."""
    from edgegym.agents.rl.diagnostics import policy_entropy
    from edgegym.agents.rl.evaluate import evaluate_agent
    from edgegym.agents.runner import make_env

    recs = evaluate_agent(AGENT, "EdgeCloudML-testbed-v1", [100])
    assert [r["mode"] for r in recs] == ["argmax", "sampled"]
    assert all(r["steps"] == 30 and 0 <= r["mean_entropy"] <= r["mean_log_legal"] + 1e-6 for r in recs)
    env, pol = make_env("EdgeCloudML-v1", AGENT, 0)
    states = _states(env, pol, 100, steps=5)
    obs, masks = np.stack([o for o, _ in states]), np.stack([m for _, m in states])
    variable = LearnedPolicy(env, pol.model, masked=True, variable_rows=True)
    assert np.allclose(variable.entropy(obs, masks), policy_entropy(pol.model, obs, masks), atol=1e-6)


def test_row_action_agent_on_another_size():
    """A shared-row agent whose actions pick rows (EdgeUtility-v1's: one action per server row, then the others)
    reads a smaller env too: one logit per row of the env, every action legal by the env's mask."""
    from edgegym.agents.runner import make_env

    name = f"maskable-ppo:{ROOT / 'docs/results/agents/models/EdgeUtility-v1/model.zip'}"
    env, pol = make_env("EdgeUtility-tiny-v1", name, 0)
    lay = env.unwrapped.obs_layout()
    assert pol.layout == lay and lay["row_actions"] and lay["rows"] != pol.model.policy.mlp_extractor.rows
    obs, _ = env.reset(seed=0)
    mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
    with th.inference_mode():
        assert pol._logits(obs, mask).shape == (1, env.action_space.n)
    rec = run_episode("EdgeUtility-tiny-v1", name, 0)
    assert rec["steps"] > 0 and np.isfinite(rec["objective"])


WUDL = f"maskable-ppo:{ROOT / 'docs/results/agents/models/WirelessUDL-v1/model.zip'}"
WUDL_MODE = {"mode": "replan", "discipline": "okita", "replan_workers": True}  # the agent's sidecar env config


@pytest.mark.parametrize("sites, jobs", [(10, 8), (100, 12)])
def test_wireless_udl_agent_on_other_site_counts(sites, jobs):
    """The shipped WirelessUDL-v1 agent (trained on 50 sites) runs without flags on 10 and 100 sites: its row
    network's context leaves the per-site blocks out, so the observation's width does not matter."""
    rec = run_episode("WirelessUDL-v1", WUDL, 100, {"cluster": {"sites": sites}, "jobs": {"count": jobs}})
    assert rec["steps"] == jobs and np.isfinite(rec["objective"]) and rec["objective"] > 0


def test_wireless_udl_trained_size_keeps_its_actions():
    """At the trained 50 sites the variable-row path gives the fixed path's logits bit for bit (the first 25
    decisions of a test episode)."""
    model = load_model(WUDL)
    env = gym.make("WirelessUDL-v1", config={"env": WUDL_MODE})
    fixed = LearnedPolicy(env, model, masked=True)
    variable = LearnedPolicy(env, model, masked=True, variable_rows=True)
    assert fixed.layout is None and variable.layout == env.unwrapped.obs_layout()
    states = _states(env, fixed, 100, steps=25)
    assert len(states) == 25
    with th.inference_mode():
        for obs, mask in states:
            assert th.equal(fixed._logits(obs, mask), variable._logits(obs, mask))
