"""``benchmarks/steps_per_second.py``: its random legal pick draws the same actions as ``rng.choice`` over the legal
actions (the faster form changes the benchmark's cost, not its actions), every pick is legal, and a row runs."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import steps_per_second as sps  # noqa: E402


@pytest.mark.parametrize("env_id", ["HeteroML-tiny-v1", "EdgeUtility-tiny-v0", "WirelessUDL-tiny-v0"])
def test_random_legal_pick_is_rng_choice_over_the_legal_actions(env_id):
    env = gym.make(env_id)
    env.reset(seed=1)
    mine, ref = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(300):
        mask = np.asarray(env.unwrapped.action_masks())
        a = sps._random_legal(env, mine)
        assert a == int(ref.choice(np.flatnonzero(mask)))
        assert mask[a]
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset(seed=2)


def test_a_row_runs():
    per_wall, per_cpu, episodes = sps.steps_per_second("EdgeUtility-tiny-v0", 0.05)
    assert per_wall > 0 and per_cpu > 0 and episodes >= 0


def test_paired_rounds_give_one_ratio_per_round(capsys):
    carts, envs, ratios = sps.paired_ratios("EdgeUtility-tiny-v0", 0.02, 3)
    assert len(carts) == len(envs) == len(ratios) == 3
    assert ratios == [e / c for e, c in zip(envs, carts, strict=True)]
    sps.paired_table(["EdgeUtility-tiny-v0"], 0.02, 2)
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["env", "rounds"] and out[1].split()[:2] == ["EdgeUtility-tiny-v0", "2"]


def test_repeats_below_one_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["steps_per_second.py", "--repeats", "0"])
    with pytest.raises(SystemExit):
        sps.main()
    assert "--repeats must be >= 1, got 0" in capsys.readouterr().err


def test_each_row_starts_from_a_collected_heap(monkeypatch):
    calls = []
    monkeypatch.setattr(sps.gc, "collect", lambda *a: calls.append(a) or 0)
    sps.steps_per_second("EdgeUtility-tiny-v0", 0.01)
    assert calls == [()]
