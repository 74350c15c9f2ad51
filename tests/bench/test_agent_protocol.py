"""``benchmarks/agent_protocol.py``: the protocol table's rows, the best heuristic per split, results files that
replay."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import agent_protocol  # noqa: E402

ENV = "EdgeCloudML-testbed-v1"


def test_rows_best_heuristic_and_results_files(tmp_path):
    rows = agent_protocol.evaluate(ENV, ["aonline-e", "aonline-e"], ["in-distribution", "load-x2"], [20000, 20001],
                                   results_dir=tmp_path, say=lambda s: None)
    assert [r["split"] for r in rows] == ["in-distribution", "load-x2"]
    for r in rows:
        means = r["heuristic_means"]
        assert set(means) == set(agent_protocol.heuristics(ENV)) and "aonline" in means
        assert not any(k.startswith("rollout") or ":" in k for k in means)
        assert r["best_heuristic"] == min(means, key=means.get)  # total JCT: lower is better
        assert r["agent"]["n_training_seeds"] == 2 and r["agent"]["n_test_seeds"] == 2
        assert r["per_training_seed"][0] == r["per_training_seed"][1]  # a deterministic policy twice
        assert r["agent"]["mean"] == pytest.approx(means["aonline-e"])
        lo, hi = r["improvement_ci"]
        assert lo <= r["improvement_pct"] <= hi
        assert 0.0 <= r["prob_improvement"] <= 1.0
        assert agent_protocol.format_row(r).startswith(f"| {r['split']} |")
        assert (tmp_path / f"{ENV}.{r['split']}.json").is_file()
    from edgegym.agents.validate import validate_file

    assert validate_file(tmp_path / f"{ENV}.load-x2.json", out=open("/dev/null", "w")) == 0


def test_diff_ci_sign_and_pairing():
    ref = np.array([10.0, 20.0, 30.0, 40.0])
    agent = np.vstack([ref * 0.9, ref * 0.9])
    pct, lo, hi = agent_protocol.diff_ci(agent, ref, lower=True)
    assert pct == pytest.approx(10.0) and lo == pytest.approx(10.0) and hi == pytest.approx(10.0)
    assert agent_protocol.diff_ci(agent, ref, lower=False)[0] == pytest.approx(-10.0)


def test_unknown_split_is_named():
    with pytest.raises(SystemExit, match="nope"):
        agent_protocol.evaluate(ENV, ["aonline"], ["nope"], [20000, 20001], say=lambda s: None)


def test_skip_leaves_out_named_heuristics_and_rejects_unknown_names():
    rows = agent_protocol.evaluate(ENV, ["aonline-e"], ["in-distribution"], [20000, 20001], say=lambda s: None,
                                   skip=("random", "all-edge"))
    assert rows[0]["skipped_heuristics"] == ["random", "all-edge"]
    assert not {"random", "all-edge"} & set(rows[0]["heuristic_means"])
    with pytest.raises(SystemExit, match="--skip nope: not a heuristic of"):
        agent_protocol.evaluate(ENV, ["aonline-e"], ["in-distribution"], [20000, 20001], say=lambda s: None,
                                skip=("nope",))
    with pytest.raises(SystemExit, match="at least 2"):
        agent_protocol.evaluate(ENV, ["aonline-e"], ["in-distribution"], [20000], say=lambda s: None)
