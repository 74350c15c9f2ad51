"""Behaviour cloning reaches the reference policy's decisions; a tiny-budget train -> eval runs end to end and
reports argmax and sampled results with entropy and the training diagnostics."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from edgegym.agents.rl.bc import agreement, clone, collect  # noqa: E402
from edgegym.agents.rl.diagnostics import warnings_for  # noqa: E402
from edgegym.agents.rl.shared import SharedRowPolicy, env_obs_layout  # noqa: E402

import edgegym  # noqa: E402,F401

ENV = "EdgeCloudML-testbed-v0"
CFG = {"env": {"action_mode": "cloud_fraction"}}


def test_behaviour_cloning_matches_aonline_on_held_out_decisions():
    import torch as th
    from sb3_contrib import MaskablePPO

    th.manual_seed(0)
    train = collect(ENV, "aonline", range(8), CFG)
    test = collect(ENV, "aonline", range(500, 504), CFG)
    assert len(train) == 8 * 30 and len(test) == 4 * 30
    env = gym.make(ENV, config=CFG)
    model = MaskablePPO(SharedRowPolicy, env, policy_kwargs={"layout": env_obs_layout(env)}, seed=0, device="cpu")
    before = agreement(model, test)
    summary = clone(model, train, epochs=15, seed=0)
    after = agreement(model, test)
    assert after >= 0.9, (before, after, summary)
    assert summary["final_nll"] < 0.5 * np.log(6)  # well below the uniform policy's ln 6


def test_demonstration_returns_equal_the_objective():
    demos = collect("EdgeUtility-tiny-v1", "o4a", [0, 1])
    starts = np.flatnonzero(demos.episode_start)
    g = demos.returns(1.0)
    # undiscounted return-to-go at an episode's first decision = its total utility / reward scale (100)
    np.testing.assert_allclose(g[starts] * 100.0, demos.objective, rtol=1e-9)


def test_diagnostics_warnings():
    flat = [{"approx_kl": 1e-5, "entropy": 2.9, "mean_log_legal_actions": np.log(20)} for _ in range(8)]
    w = warnings_for(flat)
    assert len(w) == 2 and "approx_kl" in w[0] and "entropy" in w[1]
    healthy = [{"approx_kl": 1e-2, "entropy": 0.5, "mean_log_legal_actions": np.log(20)} for _ in range(8)]
    assert warnings_for(healthy) == []


def test_tiny_train_then_eval(tmp_path, capsys):
    from edgegym.agents.cli import main
    from edgegym.agents.rl.evaluate import evaluate_agent

    hp = tmp_path / "hp.yaml"
    hp.write_text(
        "default:\n  n_envs: 1\n  eval_freq: 0\n  checkpoint_freq: 0\n  n_steps: 64\n  batch_size: 32\n"
        "  n_epochs: 2\n  policy: SharedRowPolicy\n  bc_teacher: o4a\n  bc_episodes: 2\n  bc_epochs: 3\n"
        "  train_env_config: {workload: {num_jobs: 20}}\n"
    )
    rc = main(["train", "--env", "EdgeUtility-tiny-v1", "--algo", "maskable-ppo", "--timesteps", "192",
               "--out", str(tmp_path), "--hyperparams", str(hp), "--replace-hyperparams", "--no-progress",
               "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    s = json.loads(out.splitlines()[-1])
    assert s["hyperparams"]["policy"] == "SharedRowPolicy"
    assert s["behaviour_cloning"]["samples"] == 2 * 20 and s["behaviour_cloning"]["teacher"] == "o4a"
    assert len(s["diagnostics"]) >= 2
    for row in s["diagnostics"]:
        assert {"value_loss", "approx_kl", "entropy", "mean_log_legal_actions"} <= set(row)
    meta = json.loads((tmp_path / "model.edgegym.json").read_text())
    assert meta["env_config"] == {}  # the 20-job training episodes are not part of the evaluation config
    recs = evaluate_agent(f"maskable-ppo:{tmp_path / 'model.zip'}", "EdgeUtility-tiny-v1", [100, 101])
    assert [r["mode"] for r in recs] == ["argmax", "argmax", "sampled", "sampled"]
    for r in recs:
        assert r["num_jobs"] == 40 and r["illegal_actions"] == 0
        assert 0.0 <= r["mean_entropy"] <= r["mean_log_legal"] + 1e-6
        assert r["episode_return"] * 100.0 == pytest.approx(r["objective"], rel=1e-9)
    # the report puts the agent (argmax and sampled) beside the policies, the random baseline also under the
    # agent's server discipline (its own is hpu, as in paper 003)
    from edgegym.agents.rl.report import run_report

    rows = run_report("EdgeUtility-tiny-v1", str(tmp_path / "model.zip"), ["o4a", "random"], [100, 101],
                      tmp_path / "report", same=["scheduler.discipline"])
    labels = list(dict.fromkeys(r["row"] for r in rows))
    assert labels == ["o4a", "random", "random (discipline o4a)", "agent (argmax)", "agent (sampled)"]
    by = {r["row"]: json.loads(r["config"]) for r in rows}
    assert by["random"] == {"scheduler": {"discipline": "hpu"}}
    assert by["random (discipline o4a)"] == {"scheduler": {"discipline": "o4a"}}
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "| agent (sampled) | 2 |" in summary and (tmp_path / "report" / "results.csv").is_file()
    # an agent whose own env config (sidecar) sets the discipline: the baselines are re-run under that one
    meta["env_config"] = {"scheduler": {"discipline": "srpt"}}
    (tmp_path / "model.edgegym.json").write_text(json.dumps(meta))
    rows = run_report("EdgeUtility-tiny-v1", str(tmp_path / "model.zip"), ["o4a", "ondisc"], [100],
                      tmp_path / "report2", same=["scheduler.discipline"])
    assert list(dict.fromkeys(r["row"] for r in rows)) == [
        "o4a", "o4a (discipline srpt)", "ondisc", "agent (argmax)", "agent (sampled)"]
    rec = evaluate_agent(f"maskable-ppo:{tmp_path / 'model.zip'}", "EdgeUtility-tiny-v1", [100], modes=("argmax",))
    assert rec[0]["discipline"] == "srpt"


def test_train_with_subprocess_envs_into_a_new_folder(tmp_path):
    """``subproc=True`` (``edgegym train --subproc``): the envs run in subprocesses that import edgegym themselves
    (a fresh interpreter knows no edgegym id); ``out`` is created by ``train`` itself; the same model as in-process
    envs (same seed, same rollouts)."""
    from edgegym.agents.rl.train import train

    hp = tmp_path / "hp.yaml"
    hp.write_text("default:\n  n_envs: 2\n  eval_freq: 0\n  n_steps: 16\n  batch_size: 16\n  n_epochs: 1\n"
                  "  n_eval_episodes: 1\n  policy: SharedRowPolicy\n")
    runs = {}
    for subproc in (True, False):
        out = tmp_path / f"new-{subproc}" / "run"
        s = train("EdgeUtility-tiny-v1", "maskable-ppo", 32, 0, out, hyperparams=hp, subproc=subproc, progress=False,
                  replace_hyperparams=True)
        assert (out / "model.zip").is_file() and s["num_timesteps"] == 32
        runs[subproc] = s["evaluations"][-1]["mean_return"]
    assert runs[True] == runs[False]
