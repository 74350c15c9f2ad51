"""``edgegym train --backend rllib``: RLlib PPO with action masks and the per-row shared policy as an RLModule,
env runners on a local Ray cluster, the checkpoint evaluated by ``edgegym eval`` (:mod:`edgegym.agents.rl.rllib`).

Skipped where Ray RLlib is not installed (``pip install -e ".[rllib]"``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("sb3_contrib")  # the shared row network lives beside the SB3 policy

from edgegym.agents.rl.learned import LearnedPolicyError, is_rllib_checkpoint, learned_env_config  # noqa: E402
from edgegym.agents.rl.rllib_model import (  # noqa: E402
    MASK_KEY,
    MASKED_LOGIT,
    OBS_KEY,
    MaskedObservation,
    MaskedPPOModule,
    load_rllib_module,
)
from edgegym.agents.rl.shared import SharedRowNet, env_obs_layout  # noqa: E402

ENV = "EdgeCloudML-tiny-v1"
CFG = {"env": {"action_mode": "cloud_fraction"}}
#: a few small iterations: 128 steps per env runner, 2 runners -> 256 env steps per iteration
HYPERPARAMS = f"""
{ENV}:
  env_config: {{env: {{action_mode: cloud_fraction}}}}
  policy: SharedRowPolicy
  n_steps: 128
  batch_size: 64
  n_epochs: 2
  n_eval_episodes: 2
  eval_seed: 10000
"""
TIMESTEPS = 768  # three iterations


def _cli(*args, cwd, timeout=600):
    env = {**os.environ, "EDGEGYM_TORCH_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "edgegym.agents.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``edgegym train --backend rllib`` on the tiny preset: 3 iterations, 2 env runners (a local Ray cluster)."""
    d = tmp_path_factory.mktemp("rllib")
    (d / "hp.yaml").write_text(HYPERPARAMS)
    p = _cli("train", "--backend", "rllib", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", str(TIMESTEPS),
             "--n-envs", "2", "--hyperparams", "hp.yaml", "--seed", "0", "--out", "run", cwd=d)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    return d, p


# ------------------------------------------------------------------------------------------- the model
def _module(env):
    wrapped = MaskedObservation(env)
    return MaskedPPOModule(observation_space=wrapped.observation_space, action_space=env.action_space,
                           model_config={"layout": env_obs_layout(env), "hidden": 16}), wrapped


def test_masked_observation_carries_the_env_mask():
    env = gym.make(ENV, config=CFG)
    wrapped = MaskedObservation(env)
    obs, _ = wrapped.reset(seed=3)
    assert wrapped.observation_space.contains(obs)
    masks = 0
    done = False
    while not done:
        assert np.array_equal(obs[MASK_KEY] > 0.5, env.unwrapped.action_masks())
        masks += int((obs[MASK_KEY] < 0.5).any())
        legal = np.flatnonzero(obs[MASK_KEY])
        obs, _, term, trunc, _ = wrapped.step(int(legal[0]))
        done = term or trunc
    with pytest.raises(ValueError, match="Discrete action space"):
        MaskedObservation(gym.make(ENV))  # server_proportions: a Box


def test_module_is_the_shared_row_net_and_masks_illegal_actions():
    import torch
    from ray.rllib.core.columns import Columns

    env = gym.make("EdgeUtility-tiny-v1")  # row actions: one logit per server row from the shared scorer
    module, wrapped = _module(env)
    assert isinstance(module.shared, SharedRowNet)
    rng = np.random.default_rng(0)
    n = env.action_space.n
    obs = np.stack([wrapped.reset(seed=s)[0][OBS_KEY] for s in range(6)])
    mask = (rng.random((6, n)) < 0.5).astype(np.float32)
    mask[:, 0] = 1.0
    logits = module.masked_logits(obs, mask)
    assert np.all(logits[mask == 0] == MASKED_LOGIT) and np.all(logits[mask == 1] > MASKED_LOGIT / 2)
    assert np.all(mask[np.arange(6), logits.argmax(1)] == 1)  # argmax (evaluation) is always legal
    batch = {Columns.OBS: {OBS_KEY: torch.as_tensor(obs), MASK_KEY: torch.as_tensor(mask)}}
    out = module.forward_train(batch)
    assert np.allclose(out[Columns.ACTION_DIST_INPUTS].detach().numpy(), logits, atol=1e-5)
    values = module.compute_values(batch, out[Columns.EMBEDDINGS])
    assert tuple(values.shape) == (6,)
    assert torch.allclose(values, module.compute_values(batch), atol=1e-6)
    # sampled actions (exploration) never pick a masked action
    dist = module.get_exploration_action_dist_cls().from_logits(module.forward_exploration(batch)[
        Columns.ACTION_DIST_INPUTS])
    for _ in range(20):
        a = dist.sample().numpy()
        assert np.all(mask[np.arange(6), a] == 1)


def test_module_without_layout_is_an_mlp():
    env = gym.make(ENV, config=CFG)
    wrapped = MaskedObservation(env)
    module = MaskedPPOModule(observation_space=wrapped.observation_space, action_space=env.action_space,
                             model_config={"net_arch": [32, 32]})
    assert module.shared is None and module.pi_head.in_features == 32


# ------------------------------------------------------------------------------- train, then the CLI
def test_train_writes_a_checkpoint_with_two_env_runners(trained):
    d, p = trained
    run = d / "run"
    s = json.loads((run / "train.json").read_text())
    assert s["backend"] == "rllib" and s["env_runners"] == 2 and s["ray_address"] == "local"
    assert len(s["iterations"]) == 3 and s["num_timesteps"] >= TIMESTEPS
    assert [it["env_steps"] for it in s["iterations"]] == [256, 512, 768]
    assert s["hyperparams"]["policy"] == "SharedRowPolicy" and s["hyperparams"]["train_batch_size_per_learner"] == 256
    assert s["env_steps_per_s"] > 0 and set(s["phases_s"]) == {"setup_s", "training_s", "save_s", "evaluation_s"}
    assert (run / "checkpoint" / "rllib_checkpoint.json").is_file()  # the full algorithm checkpoint (resumable)
    meta = json.loads((run / "model.edgegym.json").read_text())
    assert meta["algo"] == "rllib" and meta["env_config"] == CFG and meta["masked"] is True
    assert is_rllib_checkpoint(run) and learned_env_config(f"rllib:{run}") == CFG
    assert meta["module"] == "checkpoint/learner_group/learner/rl_module/default_policy"
    assert isinstance(load_rllib_module(run / meta["module"]).shared, SharedRowNet)
    assert "saved run" in p.stdout and "env steps/s" in p.stdout
    assert not (d / "checkpoints").exists() and sorted(x.name for x in d.iterdir()) == ["hp.yaml", "run"]


def test_eval_runs_the_checkpoint_like_any_policy(trained):
    d, _ = trained
    s = json.loads((d / "run" / "train.json").read_text())
    p = _cli("eval", "--model", "run", "--seeds", "10000-10001", "--json", "--no-progress", cwd=d)
    assert p.returncode == 0, p.stderr[-3000:]
    recs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert [r["seed"] for r in recs] == [10000, 10001]
    assert all(r["policy"] == "rllib:run" and r["env"] == ENV for r in recs)
    # the same module, the same seeds: the training run's own evaluation (run_episode in the driver)
    assert [r["episode_return"] for r in recs] == pytest.approx(s["saved_eval"]["returns"])
    # the policy name goes through the one episode runner, like every policy
    from edgegym.agents.runner import run_episode

    rec = run_episode(ENV, f"rllib:{d / 'run'}", 10001)
    assert rec["episode_return"] == pytest.approx(recs[1]["episode_return"]) and rec["steps"] == recs[1]["steps"]


def test_wrong_names_and_flags_are_one_line_errors(trained):
    d, _ = trained
    with pytest.raises(LearnedPolicyError, match="backend rllib; load it as rllib:"):
        learned_env_config(f"maskable-ppo:{d / 'run'}")
    p = _cli("eval", "--model", "rllib:hp.yaml", cwd=d)
    assert p.returncode == 2 and "not a folder written by edgegym train --backend rllib" in p.stderr
    p = _cli("train", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", "10", "--address", "auto",
             "--out", "x", cwd=d)
    assert p.returncode == 2 and "--address needs --backend rllib" in p.stderr
    p = _cli("train", "--backend", "rllib", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", "10",
             "--eval-freq", "0", "--out", "x", cwd=d)
    assert p.returncode == 2 and "--eval-freq: not supported with --backend rllib" in p.stderr
    assert not (d / "x").exists()
    p = _cli("run", "--env", "EdgeUtility-tiny-v1", "--policy", "rllib:run", "--seed", "0", cwd=d)
    assert p.returncode == 2 and "cannot run on EdgeUtility-tiny-v1" in p.stderr
