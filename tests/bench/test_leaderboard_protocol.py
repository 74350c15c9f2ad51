"""The leaderboard's protocol columns (IQM [95 % CI], P(improvement) over the best heuristic) and its agent notes."""

import importlib.util
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("leaderboard_protocol", ROOT / "benchmarks" / "leaderboard.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _eps(policy, objs):
    return [{"kind": "episode", "env": "X", "policy": policy, "seed": 100 + k, "objective": o}
            for k, o in enumerate(objs)]


def test_iqm_and_probability_of_improvement_per_row():
    lb = _script()
    rows = [{"policy": "h"}, {"policy": "a"}, {"policy": "same"}]
    eps = _eps("h", [10.0, 20.0, 30.0, 40.0]) + _eps("a", [5.0, 25.0, 25.0, 35.0]) + _eps("same", [10, 20, 30, 40])
    lb.add_protocol_figures(rows, eps, {"policy": "h"}, hib=False)
    by = {r["policy"]: r for r in rows}
    assert by["h"]["iqm"] == 25.0 and by["h"]["p_improvement"] == 0.5
    assert by["same"]["p_improvement"] == 0.5
    assert by["a"]["p_improvement"] == 0.75  # a lower cost on seeds 100, 102, 103, a higher one on 101
    lo, hi = by["a"]["iqm_ci"]
    assert lo <= by["a"]["iqm"] == 25.0 <= hi
    lb.add_protocol_figures(rows, eps, None, hib=False)
    assert math.isnan(rows[0]["p_improvement"])


def test_agent_notes_explain_the_early_agents():
    lb = _script()
    rows = [{"policy": "maskable-ppo:docs/results/agents/models/eu_v0_n400/model.zip"}, {"policy": "o4a"}]
    notes = lb.agent_notes(rows)
    assert len(notes) == 2 and notes[0].startswith("Agent `eu_v0_n400`: a MaskablePPO agent trained")
