"""``benchmarks/time_to_beat.py``: a tiny recipe timed to its first model ahead of a heuristic; the table's
structure, phases within the total, the seed checks, and the trainer's per-evaluation hook that stops training."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import time_to_beat  # noqa: E402

ENV = "EdgeCloudML-tiny-v1"
#: a tiny recipe: a cheap teacher, one cloning episode, one DAgger round of one episode, one epoch each
TINY = {"teacher": "aonline", "bc_episodes": 1, "bc_epochs": 1, "dagger_rounds": 1, "dagger_episodes": 1,
        "dagger_epochs": 1}


def _check_row(r: dict) -> None:
    assert r["id"] == ENV and r["seeds"] == [10_000]
    assert set(r["phases"]) == set(time_to_beat.PHASES)
    assert all(v >= 0.0 for v in r["phases"].values())
    assert sum(r["phases"].values()) <= r["total_s"]
    assert r["evaluations"] and all(e["wall_s"] <= r["total_s"] for e in r["evaluations"])
    line = time_to_beat.table_row(r)
    assert line.startswith(f"| {ENV} |") and line.count("|") == time_to_beat.HEADER.splitlines()[0].count("|")


def test_stops_at_the_first_model_ahead():
    # all-cloud on the tiny preset is far behind any cloned scheduler: the cloned model (round 0) is ahead
    r = time_to_beat.time_to_beat(ENV, [10_000], overrides=TINY, timesteps=0, policies=("all-cloud",))
    _check_row(r)
    assert r["ahead"] and r["stopped_by"] == "ahead"
    assert r["stage"] == "dagger" and r["round"] == 0 and len(r["evaluations"]) == 1
    assert r["time_to_beat_s"] == r["evaluations"][0]["wall_s"]
    assert time_to_beat.ahead(r["model_objective"], r["heuristic"]["objective"], False)
    assert r["vs_heuristic_pct"] > 0
    assert r["heuristic"]["policy"] == "all-cloud"


def test_not_ahead_runs_the_whole_recipe():
    # the cached heuristic's objective set out of reach (a total completion time of 0): every round is evaluated
    # and nothing stops early
    heur = time_to_beat.best_heuristic(ENV, [10_000], ("aonline",))
    saved = dict(heur)
    try:
        heur["objective"] = 0.0
        r = time_to_beat.time_to_beat(ENV, [10_000], overrides=TINY, timesteps=0, policies=("aonline",))
    finally:
        heur.update(saved)
    _check_row(r)
    assert not r["ahead"] and r["stopped_by"] is None and r["time_to_beat_s"] is None
    assert [e["round"] for e in r["evaluations"]] == [0, 1]
    assert "not ahead after the whole recipe" in time_to_beat.table_row(r)


def test_seeds_must_be_model_selection_seeds():
    with pytest.raises(ValueError, match="seed 20000 is not a model-selection seed"):
        time_to_beat.check_selection_seeds([20_000])
    with pytest.raises(ValueError, match="consecutive"):
        time_to_beat.check_selection_seeds([10_000, 10_002])
    assert time_to_beat.recipe_seeds("EdgeCloudML-v1") == [10_000, 10_001, 10_002]


def test_default_ids_are_learnable_v1_benchmark_ids():
    ids = time_to_beat.default_ids()
    assert "EdgeCloudML-v1" in ids and "HeteroML-rl-hard-v1" in ids and "WirelessUDL-sim-hard-v1" in ids
    assert all(i.endswith("-v1") for i in ids)
    assert time_to_beat.shipped_timesteps("EdgeCloudML-v1") == 0
    assert time_to_beat.shipped_timesteps("HeteroML-rl-hard-v1") == time_to_beat.shipped_timesteps("HeteroML-v1")


def test_train_hook_stops_after_the_first_round():
    from edgegym.agents.rl.train import train

    seen = []

    def on_model(stage, row, model):
        seen.append((stage, row["round"], "eval_mean_objective" in row, model is not None))
        return True

    import tempfile

    with tempfile.TemporaryDirectory() as out:
        s = train(ENV, "maskable-ppo", 0, 0, out, hyperparams=time_to_beat.recipe_path(), progress=False,
                  overrides={**TINY, "dagger_rounds": 2, "eval_seed": 10_000, "n_eval_episodes": 1},
                  on_model=on_model)
    assert seen == [("dagger", 0, True, True)]
    assert s["dagger"]["stopped_round"] == 0 and len(s["dagger"]["rounds"]) == 1
