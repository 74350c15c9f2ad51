"""HeteroML-v1 (learned-agent version): return == objective on every v1 preset, the per-grid-action rows are the
env's own placement rule (exact earliest starts), features stay in [0, 10] over a full episode of the longest
preset, no absolute-time features, the shared row policy is permutation invariant over action rows, and the
shipped agent loads and acts legally."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.runner import run_episode

import edgegym
from edgegym.families.hetero_ml.env import ACTION_ROW_FEATURES, OBSERVATION_FEATURES

V1_IDS = sorted(i for i in edgegym.registered_ids() if i.startswith("HeteroML-") and i.endswith("-v1"))
MODEL = Path(__file__).resolve().parents[2] / "docs" / "results" / "agents" / "models" / "HeteroML-v1" / "model.zip"


def test_v1_ids_register_and_v0_is_unchanged():
    assert {"HeteroML-v1", "HeteroML-ps-v1", "HeteroML-ra-v1", "HeteroML-rl-v1", "HeteroML-tiny-v1"} <= set(V1_IDS)
    v0 = gym.make("HeteroML-v0").unwrapped
    assert v0.observation_space.shape == (len(OBSERVATION_FEATURES),)  # job | globals | bins | 288 mask bits
    assert getattr(v0, "obs_layout", None) is None  # v0 has no per-action rows
    v1 = gym.make("HeteroML-v1").unwrapped
    assert v1.reward_scale == 1e5 and v0.reward_scale == 5000.0 * 150
    lay = v1.obs_layout()
    assert lay["rows"] == 288 == v1.action_space.n and lay["row_dim"] == len(ACTION_ROW_FEATURES)
    assert lay["extra_actions"] == 0 and lay["row_actions"]
    assert lay["glob"][1] == v1.observation_space.shape[0]
    # 5 + 2·8 + 3 job features, 288 rows of 12, 4 globals, 8 bins of (2·4 + 8)
    assert v1.observation_space.shape == (24 + 288 * 12 + 4 + 8 * 16,)


@pytest.mark.parametrize("env_id", V1_IDS)
def test_return_equals_objective(env_id):
    rec = run_episode(env_id, "earliest", 2, {"workload": {"num_jobs": 30}})
    # flow reward: return = -(Σ w_j c_j - Σ w_j a_j) / Z, Σ w_j a_j fixed by the arrivals
    assert -rec["episode_return"] * rec["reward_scale"] + rec["objective_offset"] == pytest.approx(
        rec["objective"], rel=1e-12)
    assert rec["reward_scale"] == 1e5 and rec["illegal_actions"] == 0


def test_first_reward_by_hand():
    """The first job lands on an empty cluster: its reward is -w (c - a) / 1e5 with c = a + its duration."""
    env = gym.make("HeteroML-tiny-v1")
    env.reset(seed=0)
    u = env.unwrapped
    start, dur = u.grid_estimates()
    a = int(np.flatnonzero(u.action_masks())[0])
    assert start[a] == u.jobs.arrival[0]  # nothing committed yet: starts at arrival
    _, r, _, _, info = env.step(a)
    assert info["completion"] == start[a] + dur[a]
    assert r == pytest.approx(-float(u.jobs.weight[0]) * float(dur[a]) / 1e5, rel=1e-12)


@pytest.mark.parametrize("env_id", ["HeteroML-tiny-v1", "HeteroML-tiny-ra-v1", "HeteroML-rl-v1"])
def test_action_rows_are_the_env_placement_rule(env_id):
    """grid_estimates (vectorised over all grid actions) equals the env's own per-action search (_try), and the
    committed job starts and completes where its row said."""
    env = gym.make(env_id, config={"workload": {"num_jobs": 25}})
    env.reset(seed=7)
    u = env.unwrapped
    rng = np.random.default_rng(1)
    for _ in range(25):
        k, now = u._k, u._decision_time(u._k)
        start, dur = u.grid_estimates()
        mask = u.action_masks()
        valid = np.flatnonzero(mask)
        assert np.all(start[valid] >= now) and np.all(start[~mask] == -1)
        for a in valid[:: 3]:
            m, n, spread, p, delay = u._grid_config(k, int(a))
            assert u._try(k, m, n, spread, p, now + delay)[0] == start[a]
            assert u._dur(k, m, p, n, not spread) == dur[a]
        a = int(rng.choice(valid))
        _, _, done, _, info = env.step(a)
        assert info["start"] == start[a]
        if done:
            break


def test_features_in_range_full_episode_longest_preset():
    """Every feature in [0, 10] over a full episode of the default (longest, 150 jobs / 150 servers) preset under a
    random policy; the v1 absolute-time / position slots are 0; every valid action's row has valid = 1."""
    env = gym.make("HeteroML-v1")
    u = env.unwrapped
    obs, _ = env.reset(seed=2)
    lay = u.obs_layout()
    names = [f[0] for f in u.features]
    zero = [names.index(n) for n in ("time", "to_boundary", "progress")]
    s, N, F = lay["rows_start"], lay["rows"], lay["row_dim"]
    rng = np.random.default_rng(2)
    lo, hi, done, regret0 = np.inf, -np.inf, False, 0
    while not done:
        lo, hi = min(lo, float(obs.min())), max(hi, float(obs.max()))
        assert np.all(obs[zero] == 0)
        mask = np.asarray(u.action_masks(), dtype=bool)
        rows = obs[s : s + N * F].reshape(N, F)
        np.testing.assert_array_equal(rows[:, 0] == 1, mask)
        assert np.all(rows[~mask] == 0)
        regret0 += int(np.any(rows[mask, 1] == 0))  # the best action has regret 0
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
    assert lo >= 0.0 and hi <= 10.0, (lo, hi)
    assert regret0 == 150 and info["episode_metrics"]["num_jobs"] == 150


@pytest.mark.skipif(not MODEL.is_file(), reason="no shipped HeteroML-v1 model")
def test_shipped_model_loads_and_acts_legally():
    pytest.importorskip("sb3_contrib")
    rec = run_episode("HeteroML-v1", f"maskable-ppo:{MODEL}", 100, {"workload": {"num_jobs": 30}})
    assert rec["num_jobs"] == 30 and rec["illegal_actions"] == 0
    assert -rec["episode_return"] * rec["reward_scale"] + rec["objective_offset"] == pytest.approx(
        rec["objective"], rel=1e-12)
