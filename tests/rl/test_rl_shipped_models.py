"""The agents shipped with the results page load by path and run on their env (short episodes)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("sb3_contrib")

from edgegym.agents.runner import env_family, run_episode  # noqa: E402

import edgegym  # noqa: E402
from edgegym.families import families  # noqa: E402

MODELS = Path(__file__).resolve().parents[2] / "docs" / "results" / "agents" / "models"
SHIPPED = sorted(p.name for p in MODELS.iterdir() if (p / "model.zip").is_file() and p.name in edgegym.registered_ids())


def test_every_existing_family_has_a_shipped_v1_agent():
    assert {"EdgeCloudML-v1", "EdgeUtility-v1"} <= set(SHIPPED)


@pytest.mark.parametrize("env_id", SHIPPED)
def test_shipped_model_runs(env_id):
    preset = families()[env_family(env_id)].load_preset(gym.spec(env_id).kwargs["preset"])
    short = {"workload": {"num_jobs": 30}} if hasattr(preset, "workload") else {"jobs": {"count": 30}}  # job count
    rec = run_episode(env_id, f"maskable-ppo:{MODELS / env_id / 'model.zip'}", 100, short)
    assert rec.get("num_jobs", rec.get("jobs")) == 30 and rec["illegal_actions"] == 0
    # HeteroML's flow reward leaves out the policy-independent Σ w_j a_j (its ``objective_offset``)
    scaled = rec["episode_return"] * rec["reward_scale"] - rec.get("objective_offset", 0.0)
    assert abs(scaled) == pytest.approx(abs(rec["objective"]), rel=1e-9)


def test_legacy_module_names_only_during_load():
    """A model saved when the package was installed as a top-level ``agents`` loads, and no ``agents`` module is left
    in ``sys.modules`` afterwards (it would shadow another project's ``agents``)."""
    import sys

    pytest.importorskip("sb3_contrib")
    from edgegym.agents.rl.learned import load_model

    model = load_model(f"maskable-ppo:{MODELS / 'EdgeUtility-v1' / 'model.zip'}")
    assert type(model.policy).__module__ == "edgegym.agents.rl.shared"
    assert not any(k == "agents" or k.startswith("agents.") for k in sys.modules)
