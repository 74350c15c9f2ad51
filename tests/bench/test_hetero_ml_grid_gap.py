"""``benchmarks/hetero_ml_grid_gap.py``: the grid's (type, workers) pairs are the env's own decoding of its valid
actions, a grid policy's placements are all inside the grid, and the script prints one row per seed."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import hetero_ml_grid_gap as gap  # noqa: E402

ENV = "HeteroML-tiny-v1"


def test_grid_pairs_are_the_envs_decoding_of_the_valid_actions():
    env = gym.make(ENV)
    env.reset(seed=3)
    u = env.unwrapped
    for _ in range(5):
        k = u.view().step
        mask = u.action_masks()
        want = {u._grid_config(k, int(a))[:2] for a in np.flatnonzero(mask)}
        assert gap.grid_pairs(u) == want and want
        invalid = {u._grid_config(k, int(a))[:2] for a in np.flatnonzero(~mask)} - want
        assert not invalid & gap.grid_pairs(u)  # a (type, workers) only invalid actions give is not in the grid
        env.step(int(np.flatnonzero(mask)[0]))
    env.close()


def test_a_grid_policy_stays_inside_the_grid():
    r = gap.run(ENV, "earliest", 3, {})
    assert r["in_grid"].all() and r["in_grid"].size == r["flow"].size == r["weight"].size
    assert r["objective"] > 0 and (r["flow"] > 0).all()


def test_prints_one_row_per_seed(capsys):
    assert gap.main(["--env", ENV, "--split", "in-distribution", "--seeds", "3-4"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| 3 |") or line.startswith("| 4 |")]
    assert len(rows) == 2 and all(" of " in r for r in rows)
