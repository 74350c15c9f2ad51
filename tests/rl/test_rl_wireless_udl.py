"""WirelessUDL-v1 (the version made for learning): the reward is the job's exact cost at its decision, the return
equals the objective on every v1 preset, the observation is relative and in range, the candidate rows suit the
per-row shared policy (permuting rows permutes the logits), pruning masks only far-off plans, and the shipped
agent loads and acts legally."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.runner import run_episode

import edgegym

V1_IDS = sorted(i for i in edgegym.registered_ids() if i.startswith("WirelessUDL-") and i.endswith("-v1")
                and i.count("-") == 2)
MODEL = Path(__file__).resolve().parents[2] / "docs" / "results" / "agents" / "models" / "WirelessUDL-v1"


def test_v1_ids_register():
    assert V1_IDS == ["WirelessUDL-sim-v1", "WirelessUDL-testbed-v1", "WirelessUDL-tiny-v1"]
    assert "WirelessUDL-sim-exp-proportional-v1" in edgegym.registered_ids()  # the previous default, kept
    assert "WirelessUDL-v1" in edgegym.registered_ids()
    assert "WirelessUDL-paper-literal-v1" not in edgegym.registered_ids()  # the literal reading stays v0 only


@pytest.mark.parametrize("env_id", V1_IDS)
@pytest.mark.parametrize("policy", ["random", "greedy-min-cost", "okita-a", "okita"])
def test_return_equals_objective_on_every_v1_preset(env_id, policy):
    rec = run_episode(env_id, policy, 7)
    assert rec["episode_return"] * rec["reward_scale"] == pytest.approx(-rec["objective"], rel=1e-9, abs=1e-6)
    assert rec["illegal_actions"] == 0


def test_reward_is_the_committed_jobs_cost():
    """Commit mode: every step's reward is minus the committed job's exact cost / scale (credit at the decision:
    no zero-reward step, the last step is one job among 100)."""
    env = gym.make("WirelessUDL-v1")
    env.reset(seed=3)
    u = env.unwrapped
    assert u.reward_scale == 1000.0
    rs, done = [], False
    while not done:
        c = u.view().cand
        a = int(np.argmin(np.where(c.mask, c.total, np.inf)))
        _, r, done, _, info = env.step(a)
        assert r == pytest.approx(-info["job_cost"] / 1000.0, rel=1e-12)
        assert info["cost"] == info["job_cost"]
        rs.append(r)
    rs = np.asarray(rs)
    assert len(rs) == 100 and np.all(rs < 0)
    assert abs(rs[-1]) / np.abs(rs).sum() < 0.05


def _run(env_id, seed, steps=None):
    """Observations of an episode under greedy-min-cost (the first ``steps``, or all)."""
    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed)
    out, done = [obs], False
    while not done and (steps is None or len(out) <= steps):
        c = env.unwrapped.view().cand
        obs, _, done, _, _ = env.step(int(np.argmin(np.where(c.mask, c.total, np.inf))))
        out.append(obs)
    return env, np.asarray(out)


def test_no_absolute_time_features():
    """v1 zeroes slot t / T and the job index / number of jobs (non-zero under v0 after a few arrivals)."""
    for version, want_zero in ((1, True), (0, False)):
        _, obs = _run(f"WirelessUDL-v{version}", 1, steps=20)
        assert (np.count_nonzero(obs[:, :2]) == 0) == want_zero


@pytest.mark.slow
def test_features_in_range_over_a_full_episode():
    """Every feature of the longest v1 preset (sim: 100 jobs, 50 sites) stays in [0, 10], and the candidate rows
    carry the row features (the cost relative to the cheapest row is 0 on at least one legal row)."""
    for env_id in V1_IDS:
        env, obs = _run(env_id, 2)
        assert obs.min() >= 0.0 and obs.max() <= 10.0, env_id
        assert np.all(obs <= env.observation_space.high + 1e-6)
    env, obs = _run("WirelessUDL-v1", 2)
    lay = env.unwrapped.obs_layout()
    rows = obs[:-1, lay["rows_start"]:].reshape(len(obs) - 1, lay["rows"], lay["row_dim"])
    feasible, total_rel, tent = rows[..., 9], rows[..., 10], rows[..., 11]
    assert np.all(feasible.sum(axis=1) >= 1)
    assert np.all(np.min(np.where(feasible > 0, total_rel, np.inf), axis=1) == 0.0)
    assert np.all(tent <= feasible)  # the N_tent flag only on legal rows
    # Okita's tentative count is a legal row at almost every decision (its rows are masked only when the plan
    # fits neither now nor within env.wait_max_slots, or is pruned at 3x the cheapest estimate)
    assert np.mean(tent.sum(axis=1) >= 1) >= 0.9


def test_obs_layout():
    """v1 describes its blocks; v0 (one block per candidate feature, not per row) has no layout. The context the
    row network reads leaves out the per-site blocks (their width follows the site count)."""
    assert gym.make("WirelessUDL-v0").unwrapped.obs_layout is None
    env = gym.make("WirelessUDL-v1")
    lay = env.unwrapped.obs_layout()
    R, K, H, C = 50, 4, 8, 16
    glob = 3 + R + R + R * K * H  # slot, job and active fractions | site_mask, price_mean, free_frac
    job = 3 + 3 + 5 + K + K + 1  # kappa, chunk, param, cost kind, cost params, demands, data total
    assert lay["glob"] == ((0, 3),)
    assert lay["job"] == ((glob, glob + job), (glob + job + R, glob + job + R + 1))  # data_frac left out; n_max
    assert lay["rows_start"] == glob + job + R + 1 and lay["rows"] == C and lay["row_dim"] == 12
    assert lay["rows_start"] + C * 12 == env.observation_space.shape[0]
    assert lay["row_actions"] and lay["extra_actions"] == 0
    # replan mode has no per-arrival decision: no rows
    assert gym.make("WirelessUDL-v1", config={"env": {"mode": "replan"}}).unwrapped.obs_layout is None


@pytest.mark.parametrize("mode", [{}, {"mode": "replan", "discipline": "okita", "replan_workers": True}])
def test_obs_layout_widths_do_not_follow_the_site_count(mode):
    """25, 50 and 100 sites: the same context and row widths (a trained row network reads each), every range
    inside the observation, and the ranges read exactly the features that are not per-site blocks."""
    from edgegym.agents.rl.shared import segments, width
    from edgegym.families.wireless_udl.env import SITE_BLOCKS, observation_blocks

    seen = set()
    for sites, jobs in ((25, 20), (50, 40), (100, 80)):
        env = gym.make("WirelessUDL-v1", config={"cluster": {"sites": sites}, "jobs": {"count": jobs}, "env": mode})
        lay = env.unwrapped.obs_layout()
        seen.add((width(lay["glob"]), width(lay["job"]), lay["row_dim"], lay["rows"]))
        read = {i for a, b in segments(lay["glob"]) + segments(lay["job"]) for i in range(a, b)}
        blocks = observation_blocks(env.unwrapped.preset)
        names = [n for n, shape, *_ in blocks for _ in range(int(np.prod(shape)))]
        assert all(names[i] not in SITE_BLOCKS for i in read)
        assert {names[i] for i in read} == {n for n, *_ in blocks[:-1]} - SITE_BLOCKS
    assert len(seen) == 1


@pytest.mark.parametrize("base, cfg, some_pruned", [
    ("WirelessUDL-sim-low-ceiling", None, False), ("WirelessUDL", None, True),
    ("WirelessUDL", {"jobs": {"latency_cost": "exp"}}, True)], ids=["low-ceiling", "default", "exp-cost"])
def test_prune_masks_only_far_off_plans(base, cfg, some_pruned):
    """prune_ratio 3: the mask keeps exactly the v0-legal rows estimated within 3× the cheapest (always ≥ 1 row);
    v0 and v1 see the same candidate plans. Under the low latency ceiling b ∈ [300, 400] no row of the first 40 jobs
    is 3× the cheapest; under the default's ceiling (the printed cost at 20 slots) and the printed exponential, a
    slow plan's latency cost puts some there."""
    e0, e1 = gym.make(f"{base}-v0", config=cfg), gym.make(f"{base}-v1", config=cfg)
    e0.reset(seed=5)
    e1.reset(seed=5)
    pruned = 0
    for _ in range(40):
        c0, c1 = e0.unwrapped.view().cand, e1.unwrapped.view().cand
        np.testing.assert_array_equal(c0.start, c1.start)
        best = c0.total[c0.mask].min()
        np.testing.assert_array_equal(c1.mask, c0.mask & (c0.total <= 3.0 * best))
        assert c1.mask.any() and np.array_equal(e1.unwrapped.action_masks(), c1.mask)
        pruned += int(c0.mask.sum() - c1.mask.sum())
        a = int(np.argmin(np.where(c0.mask, c0.total, np.inf)))
        r0, r1 = e0.step(a)[1], e1.step(a)[1]
        assert r0 == r1  # same dynamics, same reward
    assert (pruned > 0) == some_pruned


def test_shipped_model_loads_and_acts_legally():
    pytest.importorskip("sb3_contrib")
    if not (MODEL / "model.zip").is_file():
        pytest.skip("no shipped WirelessUDL-v1 model")
    rec = run_episode("WirelessUDL-v1", f"maskable-ppo:{MODEL / 'model.zip'}", 100, {"jobs": {"count": 30}})
    assert rec["jobs"] == 30 and rec["illegal_actions"] == 0 and rec["decisions"] == 30
    assert rec["episode_return"] * rec["reward_scale"] == pytest.approx(-rec["objective"], rel=1e-9)
