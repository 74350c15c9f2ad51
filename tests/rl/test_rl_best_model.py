"""Training keeps its best model and says when it breaks (:mod:`edgegym.agents.rl.best`)."""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from edgegym.agents.rl.best import (  # noqa: E402
    COLLAPSE_SHARE,
    auto_eval_freq,
    collapse_warnings,
    evaluate_model,
)

ENV = "EdgeUtility-tiny-v1"


class _FixedModel:
    """A stand-in model: always the first legal action (a collapsed argmax) or a seeded uniform legal one."""

    def __init__(self, uniform: bool, seed: int = 0):
        self.uniform = uniform
        self.rng = np.random.default_rng(seed)

    def predict(self, obs, state=None, episode_start=None, deterministic=True, action_masks=None):
        masks = np.atleast_2d(action_masks)  # a batch of observations (one row per episode) or a single one
        acts = [int(self.rng.choice(np.flatnonzero(m))) if self.uniform else int(np.flatnonzero(m)[0]) for m in masks]
        return (np.asarray(acts) if np.ndim(action_masks) == 2 else acts[0]), None


def _row(t, ret, share):
    return {"timesteps": t, "mean_return": ret, "std_return": 0.0, "mean_objective": -ret,
            "max_action_share": share, "top_action": 3}


def test_auto_eval_freq_whole_rollouts():
    assert auto_eval_freq(220_000, 2048) == 22_528  # ~10 evaluations, each at a rollout end
    assert auto_eval_freq(256, 512) == 512  # never less than one rollout
    assert auto_eval_freq(10_000, 1000) == 1000


def test_collapse_warning_fires_on_a_collapsed_policy_and_not_on_a_good_one():
    collapsed = evaluate_model(_FixedModel(uniform=False), ENV, [10_000, 10_001])
    spread = evaluate_model(_FixedModel(uniform=True), ENV, [10_000, 10_001])
    assert min(r["max_action_share"] for r in collapsed) > COLLAPSE_SHARE
    assert max(r["max_action_share"] for r in spread) < COLLAPSE_SHARE
    for r in collapsed + spread:
        assert r["decisions"] > 0 and np.isfinite(r["episode_return"])
    start = _row(0, 10.0, max(r["max_action_share"] for r in spread))
    bad = _row(512, 11.0, max(r["max_action_share"] for r in collapsed))
    good = _row(512, 11.0, max(r["max_action_share"] for r in spread))
    w = collapse_warnings([start, bad])
    assert len(w) == 1 and w[0].startswith("argmax collapse") and "512 steps" in w[0]
    assert collapse_warnings([start, good]) == []


def test_regression_below_the_start_warns():
    w = collapse_warnings([_row(0, 10.0, 0.3), _row(512, 12.0, 0.3), _row(1024, 4.0, 0.3)])
    assert len(w) == 1 and "fell below the starting policy" in w[0] and "1024 steps" in w[0]
    assert collapse_warnings([_row(0, 10.0, 0.3), _row(512, 10.0, 0.3)]) == []


def test_warm_start_concentration_is_the_teachers_not_a_collapse():
    hist = [_row(0, 10.0, 0.95), _row(512, 10.5, 0.97)]
    assert collapse_warnings(hist, warm_start=True) == []
    assert collapse_warnings(hist, warm_start=False)  # from scratch, one action everywhere is a collapse


def _train(tmp_path, lr: float, timesteps: int = 1024, keep_last: bool = False):
    from edgegym.agents.cli import main

    hp = tmp_path / "hp.yaml"
    hp.write_text(
        "default:\n  n_envs: 1\n  eval_freq: 256\n  n_eval_episodes: 2\n  n_steps: 128\n  batch_size: 64\n"
        f"  n_epochs: 4\n  policy: SharedRowPolicy\n  learning_rate: {lr}\n  ent_coef: 0.0\n"
        "  bc_teacher: o4a\n  bc_episodes: 2\n  bc_epochs: 5\n"
    )
    out = tmp_path / "run"
    argv = ["train", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", str(timesteps), "--out", str(out),
            "--hyperparams", str(hp), "--replace-hyperparams", "--no-progress"] + (["--keep-last"] if keep_last else [])
    assert main(argv) == 0
    return out, json.loads((out / "train.json").read_text())


def test_saved_model_is_the_best_evaluated(tmp_path):
    """With a learning rate far too high the run degrades; the saved model is still its best evaluation."""
    from edgegym.agents.rl.learned import load_model

    out, s = _train(tmp_path, lr=0.05)
    hist = s["evaluations"]
    assert hist[0]["timesteps"] == 0 and hist[-1]["timesteps"] == s["num_timesteps"] and len(hist) >= 4
    best = max(h["mean_return"] for h in hist)
    model = load_model(f"maskable-ppo:{out / 'model.zip'}")
    again = evaluate_model(model, ENV, [10_000, 10_001])
    assert np.mean([r["episode_return"] for r in again]) == pytest.approx(best, rel=1e-12)
    assert s["restored_best"] == (best > hist[-1]["mean_return"])
    assert s["saved_eval"]["mean_return"] == best


def test_keep_last_saves_the_final_weights(tmp_path):
    from edgegym.agents.rl.learned import load_model

    out, s = _train(tmp_path, lr=0.05, timesteps=512, keep_last=True)
    assert s["restored_best"] is False
    model = load_model(f"maskable-ppo:{out / 'model.zip'}")
    again = evaluate_model(model, ENV, [10_000, 10_001])
    assert np.mean([r["episode_return"] for r in again]) == pytest.approx(s["evaluations"][-1]["mean_return"],
                                                                          rel=1e-12)


def test_quiet_training_leaves_nothing_in_the_temp_folder(tmp_path, monkeypatch):
    """SB3's default logger at verbosity 0 creates an empty SB3-<timestamp> folder in the temp folder."""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    _train(tmp_path, lr=3e-4, timesteps=128)
    assert os.listdir(private) == []


def test_hyperparams_file_must_name_the_trained_id(tmp_path):
    from edgegym.agents.rl.train import load_hyperparams

    f = tmp_path / "hp.yaml"
    f.write_text("EdgeCloudML-v1:\n  learning_rate: 0.001\n")
    with pytest.raises(ValueError, match="no section applies to EdgeUtility-tiny-v1"):
        load_hyperparams("maskable-ppo", ENV, f)
    f.write_text("EdgeUtilty:\n  learning_rate: 0.001\n")
    with pytest.raises(ValueError, match="unknown section 'EdgeUtilty'"):
        load_hyperparams("maskable-ppo", ENV, f)
    f.write_text("EdgeUtility-v1:\n  learning_rate: 0.001\n")
    assert load_hyperparams("maskable-ppo", ENV, f)["learning_rate"] == 0.001


def test_torch_threads_default_and_override(monkeypatch):
    from edgegym.agents.rl.train import default_torch_threads

    monkeypatch.delenv("EDGEGYM_TORCH_THREADS", raising=False)
    assert default_torch_threads() == 1
    monkeypatch.setenv("EDGEGYM_TORCH_THREADS", "3")
    assert default_torch_threads() == 3
    monkeypatch.setenv("EDGEGYM_TORCH_THREADS", "x")
    with pytest.raises(ValueError, match="EDGEGYM_TORCH_THREADS"):
        default_torch_threads()
