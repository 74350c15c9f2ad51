"""``benchmarks/hetero_ml_grid_gap.py``: the grid's worker counts are the env's own decoding, a grid policy's
placements are all inside the grid, and the script prints one row per seed."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import hetero_ml_grid_gap as gap  # noqa: E402

ENV = "HeteroML-tiny-v1"


def test_grid_levels_are_the_envs_decoding():
    env = gym.make(ENV)
    env.reset(seed=3)
    u = env.unwrapped
    for _ in range(5):
        k = u.view().step
        levels = gap.grid_levels(u, k)
        for lvl, n in enumerate(levels):
            a = int(np.ravel_multi_index((0, lvl, 0, 0), u.grid_shape))
            assert u._grid_config(k, a)[1] == n
        env.step(int(np.flatnonzero(u.action_masks())[0]))
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
