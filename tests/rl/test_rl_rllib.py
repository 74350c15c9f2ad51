"""``edgegym train --backend rllib``: RLlib PPO with action masks and the per-row shared policy as an RLModule,
env runners on a local Ray cluster, a behaviour-cloning / DAgger warm start, the best evaluated model kept, the
collapse warnings, quiet Ray logs, an interrupted run that leaves a usable folder, and the checkpoint evaluated by
``edgegym eval`` (:mod:`edgegym.agents.rl.rllib`).

Skipped where Ray RLlib is not installed (``pip install -e ".[rllib]"``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("sb3_contrib")  # the shared row network lives beside the SB3 policy

from edgegym.agents.rl.best import collapse_warnings, evaluate_model  # noqa: E402
from edgegym.agents.rl.diagnostics import warnings_for  # noqa: E402
from edgegym.agents.rl.learned import LearnedPolicyError, is_rllib_checkpoint, learned_env_config  # noqa: E402
from edgegym.agents.rl.rllib import _ModuleModel, sb3_weights_into  # noqa: E402
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
#: a few small iterations: 128 steps per env runner, 2 runners -> 256 env steps per iteration; a behaviour-cloning
#: warm start from aonline and one DAgger round, evaluations after every iteration
HYPERPARAMS = f"""
{ENV}:
  env_config: {{env: {{action_mode: cloud_fraction}}}}
  policy: SharedRowPolicy
  n_steps: 128
  batch_size: 64
  n_epochs: 2
  n_eval_episodes: 2
  eval_seed: 10000
  eval_freq: 256
  bc_teacher: aonline
  bc_episodes: 4
  bc_epochs: 20
  dagger_rounds: 1
  dagger_episodes: 2
"""
TIMESTEPS = 768  # three iterations


def _cli(*args, cwd, timeout=600):
    return subprocess.run([sys.executable, "-m", "edgegym.agents.cli", *args], cwd=cwd, env=_ENV,
                          capture_output=True, text=True, timeout=timeout)


_ENV = {**{k: v for k, v in os.environ.items() if k != "EDGEGYM_RAY_LOGS"}, "EDGEGYM_TORCH_THREADS": "1"}
#: what Ray prints by itself, which a run must hold back unless asked (--verbose / EDGEGYM_RAY_LOGS=1)
RAY_NOISE = ("core_worker", "Token authentication", "logging.cc", "Started a local Ray instance", "Deprecation")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``edgegym train --backend rllib`` on the tiny preset: behaviour cloning of aonline and one DAgger round, then 3
    PPO iterations on 2 env runners (a local Ray cluster), an evaluation after each."""
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


def _twin(env, policy="SharedRowPolicy"):
    from edgegym.agents.rl.shared import SharedRowPolicy
    from sb3_contrib import MaskablePPO

    if policy == "SharedRowPolicy":
        return MaskablePPO(SharedRowPolicy, env, seed=1, device="cpu", n_steps=64, batch_size=64,
                           policy_kwargs={"layout": env_obs_layout(env), "hidden": 16})
    return MaskablePPO("MlpPolicy", env, seed=1, device="cpu", n_steps=64, batch_size=64,
                       policy_kwargs={"net_arch": [32, 32]})


@pytest.mark.parametrize("policy", ["SharedRowPolicy", "MlpPolicy"])
def test_sb3_weights_into_the_module_give_the_same_logits_and_values(policy):
    """The warm start fits an SB3 network; copied into the RLModule it is the same function (logits and value)."""
    import torch

    env = gym.make(ENV, config=CFG)
    twin = _twin(env, policy)
    wrapped = MaskedObservation(env)
    cfg = {"layout": env_obs_layout(env), "hidden": 16} if policy == "SharedRowPolicy" else {"net_arch": [32, 32]}
    module = MaskedPPOModule(observation_space=wrapped.observation_space, action_space=env.action_space,
                             model_config=cfg)
    obs = np.stack([wrapped.reset(seed=s)[0][OBS_KEY] for s in range(5)])
    mask = np.ones((5, env.action_space.n), np.float32)
    before = module.masked_logits(obs, mask)
    sb3_weights_into(twin.policy, module)
    after = module.masked_logits(obs, mask)
    with torch.no_grad():
        o = torch.as_tensor(obs)
        dist = twin.policy.get_distribution(o)
        want = dist.distribution.logits.numpy()
        values = twin.policy.predict_values(o).numpy().reshape(-1)
    assert not np.allclose(before - before.mean(1, keepdims=True), want - want.mean(1, keepdims=True), atol=1e-4)
    # Categorical logits are normalised (log-probabilities): compare up to a per-row constant
    assert np.allclose(after - after.mean(1, keepdims=True), want - want.mean(1, keepdims=True), atol=1e-5)
    mine = module.compute_values({"obs": {OBS_KEY: torch.as_tensor(obs), MASK_KEY: torch.as_tensor(mask)}})
    assert np.allclose(mine.detach().numpy(), values, atol=1e-5)
    other = MaskedPPOModule(observation_space=wrapped.observation_space, action_space=env.action_space,
                            model_config={"net_arch": [8]})
    with pytest.raises(ValueError, match="does not match the RLlib module"):
        sb3_weights_into(twin.policy, other)


def test_module_model_is_what_the_best_model_keeper_evaluates():
    """The driver's module behind ``predict``: evaluate_model runs it (argmax, masks honoured) as it runs SB3 models."""
    env = gym.make(ENV, config=CFG)
    module, _ = _module(env)
    model = _ModuleModel(module, masked=True)
    recs = evaluate_model(model, ENV, [10_000, 10_001], CFG)
    assert [r["seed"] for r in recs] == [10_000, 10_001]
    # the argmax of the module's own masked logits, step by step
    obs, _ = env.reset(seed=10_000)
    ret, done = 0.0, False
    while not done:
        mask = env.unwrapped.action_masks().astype(np.float32)
        a = int(module.masked_logits(obs.reshape(1, -1), mask.reshape(1, -1))[0].argmax())
        assert model.predict(obs, action_masks=mask)[0] == a
        obs, r, term, trunc, _ = env.step(a)
        ret += r
        done = term or trunc
    assert recs[0]["episode_return"] == pytest.approx(ret)
    assert np.isfinite(model.mean_log_legal()) and model.mean_log_legal() > 0
    unmasked = _ModuleModel(module, masked=False)
    unmasked.predict(obs, action_masks=np.zeros(env.action_space.n))  # masks ignored: every action legal
    assert unmasked.mean_log_legal() == pytest.approx(np.log(env.action_space.n))


# ------------------------------------------------------------------------------- train, then the CLI
def test_train_warm_starts_keeps_the_best_and_writes_a_checkpoint(trained):
    d, p = trained
    run = d / "run"
    s = json.loads((run / "train.json").read_text())
    assert s["backend"] == "rllib" and s["env_runners"] == 2 and s["ray_address"] == "local"
    assert len(s["iterations"]) == 3 and s["num_timesteps"] >= TIMESTEPS
    assert [it["env_steps"] for it in s["iterations"]] == [256, 512, 768]
    assert s["hyperparams"]["policy"] == "SharedRowPolicy" and s["hyperparams"]["train_batch_size_per_learner"] == 256
    assert s["env_steps_per_s"] > 0 and {"setup_s", "behaviour_cloning_s", "dagger_s", "ray_setup_s", "training_s",
                                         "evaluations_s", "save_s"} <= set(s["phases_s"])
    assert s["resumable"] is True and s["interrupted"] is False
    assert (run / "checkpoint" / "rllib_checkpoint.json").is_file()  # the full algorithm checkpoint (resumable)
    # the warm start: behaviour cloning of aonline, one DAgger round; PPO starts from the best round's network,
    # evaluated on the same seeds before the first update (the DAgger evaluation ran on the SB3 network)
    assert s["behaviour_cloning"]["teacher"] == "aonline" and s["behaviour_cloning"]["samples"] > 0
    assert len(s["dagger"]["rounds"]) == 2
    ev = s["evaluations"]
    assert ev[0]["timesteps"] == 0 and ev[0]["updates"] == 0
    assert ev[0]["mean_objective"] == pytest.approx(s["dagger"]["best"]["eval_mean_objective"])
    # evaluations after every iteration but the last, then after the last update; the saved one is the best
    assert [e["timesteps"] for e in ev] == [0, 256, 512, 768] and [e["updates"] for e in ev] == [0, 2, 4, 6]
    assert s["best"]["mean_return"] == max(e["mean_return"] for e in ev)
    assert s["saved_eval"]["mean_return"] == s["best"]["mean_return"]
    assert s["restored_best"] == (s["best"]["timesteps"] != 768 and s["best"]["mean_return"] > ev[-1]["mean_return"])
    # the diagnostics of the SB3 path, from RLlib's learner results (KL measured with coefficient 0)
    assert len(s["diagnostics"]) == 3
    assert all(r["approx_kl"] >= 0 and r["entropy"] > 0 and "value_loss" in r for r in s["diagnostics"])
    assert s["warnings"] == warnings_for(s["diagnostics"]) + collapse_warnings(ev, s["collapse_share"],
                                                                               warm_start=True)
    for w in s["warnings"]:
        assert f"warning: {w}" in p.stderr
    meta = json.loads((run / "model.edgegym.json").read_text())
    assert meta["algo"] == "rllib" and meta["env_config"] == CFG and meta["masked"] is True
    assert is_rllib_checkpoint(run) and learned_env_config(f"rllib:{run}") == CFG
    assert meta["module"] == "checkpoint/learner_group/learner/rl_module/default_policy"
    assert isinstance(load_rllib_module(run / meta["module"]).shared, SharedRowNet)
    assert "saved run" in p.stdout and "env steps/s" in p.stdout and "evaluation at" in p.stdout
    assert not (d / "checkpoints").exists() and sorted(x.name for x in d.iterdir()) == ["hp.yaml", "run"]


def test_ray_logs_are_quiet_by_default(trained):
    _, p = trained
    noise = [ln for ln in p.stderr.splitlines() if any(n in ln for n in RAY_NOISE)]
    assert not noise, noise
    assert all(ln.startswith("edgegym train:") for ln in p.stderr.splitlines() if ln.strip()), p.stderr[-3000:]


def test_eval_runs_the_checkpoint_like_any_policy(trained):
    d, _ = trained
    s = json.loads((d / "run" / "train.json").read_text())
    p = _cli("eval", "--model", "run", "--seeds", "10000-10001", "--json", "--no-progress", cwd=d)
    assert p.returncode == 0, p.stderr[-3000:]
    recs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert [r["seed"] for r in recs] == [10000, 10001]
    assert all(r["policy"] == "rllib:run" and r["env"] == ENV for r in recs)
    # the saved module on the best-model seeds: the training run's evaluation of the weights it saved
    assert np.mean([r["episode_return"] for r in recs]) == pytest.approx(s["saved_eval"]["mean_return"])
    assert np.mean([r["objective"] for r in recs]) == pytest.approx(s["saved_eval"]["mean_objective"])
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
             "--subproc", "--out", "x", cwd=d)
    assert p.returncode == 2 and "--subproc: not supported with --backend rllib" in p.stderr
    assert not (d / "x").exists()
    p = _cli("run", "--env", "EdgeUtility-tiny-v1", "--policy", "rllib:run", "--seed", "0", cwd=d)
    assert p.returncode == 2 and "cannot run on EdgeUtility-tiny-v1" in p.stderr


def test_no_ppo_the_warm_started_module_is_the_result(tmp_path):
    """``--timesteps 0`` with a teacher: no Ray at all; the behaviour-cloned module is saved and evaluates as its
    training evaluation said."""
    (tmp_path / "hp.yaml").write_text(HYPERPARAMS.replace("dagger_rounds: 1", "dagger_rounds: 0"))
    p = _cli("train", "--backend", "rllib", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", "0",
             "--hyperparams", "hp.yaml", "--out", "bc", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    s = json.loads((tmp_path / "bc" / "train.json").read_text())
    assert s["num_timesteps"] == 0 and s["iterations"] == [] and s["resumable"] is False
    assert "ray_setup_s" not in s["phases_s"] and "starting a local Ray cluster" not in p.stderr
    assert s["behaviour_cloning"]["train_agreement"] > 0.5 and s["dagger"] is None
    assert len(s["evaluations"]) == 1 and s["saved_eval"] == s["evaluations"][0]
    assert "no PPO" in p.stdout
    p = _cli("eval", "--model", "bc", "--seeds", "10000-10001", "--json", "--no-progress", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    recs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert np.mean([r["episode_return"] for r in recs]) == pytest.approx(s["saved_eval"]["mean_return"])


def test_an_interrupted_run_leaves_the_best_model_so_far(tmp_path):
    """Ctrl-C (SIGINT to the driver) during PPO: exit status 130, and DIR holds the best evaluated module and a
    train.json that says the run was interrupted; ``edgegym eval`` runs it."""
    (tmp_path / "hp.yaml").write_text(HYPERPARAMS.replace("dagger_rounds: 1", "dagger_rounds: 0"))
    cmd = [sys.executable, "-m", "edgegym.agents.cli", "train", "--backend", "rllib", "--env", ENV, "--algo",
           "maskable-ppo", "--timesteps", "1000000", "--hyperparams", "hp.yaml", "--out", "cut"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # SIGINT reaches the driver only, as Ctrl-C reaches edgegym
    err = []
    try:
        deadline = time.monotonic() + 540
        for line in proc.stderr:
            err.append(line)
            if line.startswith("edgegym train: iteration 2:") or time.monotonic() > deadline:
                break
        assert any(ln.startswith("edgegym train: iteration 2:") for ln in err), "".join(err)[-3000:]
        os.kill(proc.pid, signal.SIGINT)
        _, rest = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    err.append(rest or "")
    assert proc.returncode == 130, "".join(err)[-3000:]
    s = json.loads((tmp_path / "cut" / "train.json").read_text())
    assert s["interrupted"] is True and s["resumable"] is False and 512 <= s["num_timesteps"] < 1_000_000
    assert s["saved_eval"] == s["best"] and s["evaluations"][0]["timesteps"] == 0
    assert "interrupted after" in "".join(err)
    p = _cli("eval", "--model", "cut", "--seeds", "10000-10001", "--json", "--no-progress", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    recs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert np.mean([r["episode_return"] for r in recs]) == pytest.approx(s["saved_eval"]["mean_return"])
