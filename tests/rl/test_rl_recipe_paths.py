"""A shipped recipe is named ``agents/rl/<name>`` in what ``edgegym train`` records, never by the absolute path of
the installed package."""

from __future__ import annotations

from edgegym.agents.rl.train import resolve_hyperparams, shipped_recipe


def test_changes_name_a_shipped_recipe_by_its_repository_path():
    path = shipped_recipe("expert-iteration")
    _, changes = resolve_hyperparams("maskable-ppo", "EdgeCloudML-v1", path)
    assert changes and {c["by"] for c in changes} == {"agents/rl/expert-iteration.yaml"}


def test_changes_name_another_file_as_given(tmp_path):
    f = tmp_path / "hp.yaml"
    f.write_text("EdgeCloudML-v1:\n  learning_rate: 0.0005\n")
    _, changes = resolve_hyperparams("maskable-ppo", "EdgeCloudML-v1", f)
    assert [c["by"] for c in changes] == [str(f)]
