"""Held-out trace windows (issue 11): ``workload.window_part`` keeps EdgeUtility's random Google 2011 windows
inside one part of the trace, so that training and evaluation windows are disjoint."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import edgegym  # noqa: F401  (registers the ids)
from edgegym.families.edge_utility.env import _trace_release_times
from edgegym.families.edge_utility.presets import load_utility_preset


def _table_times(need_trace):
    from edgegym.workloads import load_google2011

    path = need_trace("google_2011", "google2011_jobs_window.csv.gz")
    return np.sort(load_google2011(path, table="window")["submit_time_s"].to_numpy(dtype=float)), path.parent


def test_window_part_is_validated():
    with pytest.raises(ValueError, match=r"workload\.window_part.*low > high"):
        gym.make("EdgeUtility-v1", config={"workload": {"window_part": [0.6, 0.5]}})
    with pytest.raises(ValueError, match=r"workload\.window_part"):
        gym.make("EdgeUtility-v1", config={"workload": {"window_part": [0.5, 1.5]}})
    with pytest.raises(ValueError, match=r"workload\.window_part"):
        gym.make("EdgeUtility-v1", config={"workload": {"window_part": 0.5}})
    assert load_utility_preset("testbed-stressed").workload.window_part == (0.0, 1.0)


def test_train_and_heldout_windows_are_disjoint(need_trace):
    submit, folder = _table_times(need_trace)
    half = submit.size // 2
    p = load_utility_preset("testbed-stressed")
    for part, lo_s, hi_s in (((0.0, 0.5), submit[0], submit[half - 1]), ((0.5, 1.0), submit[half], submit[-1])):
        w = p.replace(workload={"window_part": list(part), "trace_dir": str(folder)}).workload
        for seed in range(40):
            t = _trace_release_times(w, np.random.default_rng(seed))
            assert t.size == w.num_jobs
            # every task of the window was submitted inside its part (the split falls between two trace jobs)
            assert lo_s <= t[0] and t[-1] <= hi_s
    assert submit[half - 1] < submit[half]


def test_window_part_too_small_is_an_error_at_reset(need_trace):
    need_trace("google_2011", "google2011_jobs_window.csv.gz")
    env = gym.make("EdgeUtility-v1", config={"workload": {"window_part": [0.999, 1.0], "num_jobs": 5000}})
    with pytest.raises(ValueError, match=r"workload\.window_part=\[0\.999, 1\.0\].*fewer than num_jobs=5000"):
        env.reset(seed=0)


def test_heldout_episode_keeps_return_equal_to_objective(need_trace):
    need_trace("google_2011", "google2011_jobs_window.csv.gz")
    env = gym.make("EdgeUtility-v1", config={"workload": {"window_part": [0.5, 1.0], "num_jobs": 60}})
    env.reset(seed=3)
    total, done = 0.0, False
    while not done:
        _, r, term, trunc, info = env.step(0)
        total += r
        done = term or trunc
    m = info["episode_metrics"]
    assert m["workload_source"] == "google2011"
    assert total * m["reward_scale"] == pytest.approx(m["objective"], rel=1e-9, abs=1e-6)


def test_shipped_edge_utility_agent_trained_on_the_first_half_only():
    import json
    from pathlib import Path

    from edgegym.agents.rl.train import load_hyperparams

    assert load_hyperparams("maskable-ppo", "EdgeUtility-v1")["train_env_config"]["workload"]["window_part"] == [
        0.0, 0.5]
    model = Path(__file__).resolve().parents[2] / "docs" / "results" / "agents" / "models" / "EdgeUtility-v1"
    trained = json.loads((model / "train.json").read_text())
    assert trained["train_env_config"]["workload"]["window_part"] == [0.0, 0.5]
    assert trained["behaviour_cloning"]["teacher"] == "ondisc"
    # the sidecar (evaluation config) has no window part: evaluation runs the preset, or the held-out half
    side = json.loads((model / "model.edgegym.json").read_text())
    assert side["env_config"] == {"scheduler": {"discipline": "srpt"}}
