"""``edgegym train`` / ``edgegym eval``: tiny budgets, reproducibility, and clean errors."""

from __future__ import annotations

import json
import zipfile

import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from edgegym.agents.cli import main  # noqa: E402

ENV = "EdgeCloudML-testbed-v0"
_RUN_ONLY = {"wall_s", "decisions_per_s", "policy"}


def _cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _train(capsys, out, algo="maskable-ppo", env=ENV, seed=0, *extra):
    rc, o, err = _cli(capsys, "train", "--env", env, "--algo", algo, "--timesteps", 256, "--seed", seed,
                      "--out", out, "--n-envs", 2, "--no-progress", "--json", *extra)
    assert rc == 0, err
    return json.loads(o)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):

    dirs = [tmp_path_factory.mktemp(f"run{k}") for k in range(2)]
    summaries = []
    for d in dirs:
        rc = main(["train", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", "256", "--seed", "7",
                   "--out", str(d), "--n-envs", "2", "--eval-freq", "128", "--no-progress"])
        assert rc == 0
        summaries.append(json.loads((d / "train.json").read_text()))
    return dirs, summaries


def test_train_writes_model_and_metadata(two_runs):
    dirs, summaries = two_runs
    d, s = dirs[0], summaries[0]
    assert (d / "model.zip").is_file()
    assert not (d / "checkpoints").exists()  # checkpoints only on request (the best model is kept instead)
    meta = json.loads((d / "model.edgegym.json").read_text())
    assert meta["env_id"] == ENV and meta["algo"] == "maskable-ppo"
    assert meta["env_config"] == {"env": {"action_mode": "cloud_split"}}  # from agents/rl/maskable-ppo.yaml
    assert s["num_timesteps"] >= 256 and s["env_steps_per_s"] > 0 and s["wall_s"] > 0
    # evaluations on the YAML's seeds (10000..), disjoint from 100-104: the start, every 128 steps, the end
    assert [h["timesteps"] for h in s["evaluations"]][0] == 0 and len(s["evaluations"]) >= 2
    assert s["best"]["mean_return"] == max(h["mean_return"] for h in s["evaluations"])
    assert set(s["phases_s"]) >= {"setup_s", "ppo_rollouts_s", "ppo_updates_s", "evaluations_s", "save_s"}
    assert s["wall_s"] >= sum(s["phases_s"].values()) - 1e-6


def test_same_seed_same_evaluation(capsys, two_runs):
    dirs, _ = two_runs
    recs = []
    for d in dirs:
        rc, out, err = _cli(capsys, "eval", "--model", d, "--seeds", 100, 101, "--json")
        assert rc == 0, err
        recs.append([{k: v for k, v in json.loads(x).items() if k not in _RUN_ONLY} for x in out.splitlines()])
    assert len(recs[0]) == 2
    assert recs[0] == recs[1]


def test_run_and_eval_share_the_json(capsys, two_runs):
    dirs, _ = two_runs
    name = f"maskable-ppo:{dirs[0] / 'model.zip'}"
    rc, out, _ = _cli(capsys, "run", "--env", ENV, "--policy", name, "--seed", 100, "--json")
    assert rc == 0
    run_rec = json.loads(out)
    rc, out, _ = _cli(capsys, "eval", "--model", dirs[0], "--seeds", 100, "--json")
    eval_rec = json.loads(out)
    assert run_rec["policy"] == name
    assert set(run_rec) == set(eval_rec)  # both carry the episode index (eval prints like run)
    assert run_rec["objective"] == eval_rec["objective"]
    assert run_rec["episode_return"] == pytest.approx(-run_rec["objective"] / run_rec["reward_scale"])
    assert run_rec["illegal_actions"] == 0  # masks are honoured


def test_learned_policy_in_bench_table(capsys, two_runs, tmp_path):
    dirs, _ = two_runs
    name = f"maskable-ppo:{dirs[0] / 'model.zip'}"
    rc, out, err = _cli(capsys, "bench", "--envs", ENV, "--policies", "srtf", name, "--seeds", 100,
                        "--baseline", "srtf", "--out", tmp_path, "--workers", 1, "--no-progress", "--no-plots")
    assert rc == 0, err
    assert f"`{name}`" in (tmp_path / "summary.md").read_text()


def test_ppo_box_actions_train_and_run(capsys, tmp_path):
    s = _train(capsys, tmp_path, "ppo", "EdgeCloudML-tiny-v0", 0, "--eval-freq", 0, "--checkpoint-freq", 0)
    assert s["env_config"] == {}
    rc, out, err = _cli(capsys, "run", "--env", "EdgeCloudML-tiny-v0", "--policy", f"ppo:{tmp_path}/model.zip",
                        "--json")
    assert rc == 0, err
    assert json.loads(out)["num_jobs"] == 3


def _one_line_error(rc, err, needle):
    assert rc == 2, err
    assert needle in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["train", "--env", "Nope-v0", "--algo", "ppo", "--timesteps", "8"], "unknown env"),
        (["train", "--env", ENV, "--algo", "dqn", "--timesteps", "8"], "invalid choice"),
        (["train", "--env", ENV, "--algo", "ppo", "--timesteps", "0"], "--timesteps"),
        (["train", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", "8", "--env-config",
          '{"env": {"action_mode": "server_proportions"}}'], "Discrete"),
        (["train", "--env", ENV, "--algo", "ppo", "--timesteps", "8", "--env-config", '{"env": {"nope": 1}}'],
         "nope"),
        (["train", "--env", ENV, "--algo", "ppo", "--timesteps", "8", "--env-config", "[1, 2]"], "--env-config"),
    ],
)
def test_train_bad_input(capsys, tmp_path, argv, needle):
    rc, _, err = _cli(capsys, *argv, "--out", tmp_path / "o", "--no-progress")
    _one_line_error(rc, err, needle)


def test_train_unknown_hyperparameter_key(capsys, tmp_path):
    hp = tmp_path / "hp.yaml"
    hp.write_text("default:\n  n_envs: 1\n  learning_rat: 0.1\n")
    rc, _, err = _cli(capsys, "train", "--env", ENV, "--algo", "ppo", "--timesteps", 8, "--out", tmp_path / "o",
                      "--hyperparams", hp, "--no-progress")
    _one_line_error(rc, err, "learning_rat")


def test_train_unwritable_out(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, _, err = _cli(capsys, "train", "--env", ENV, "--algo", "ppo", "--timesteps", 8, "--out", blocker / "sub",
                      "--no-progress")
    _one_line_error(rc, err, "not a writable directory")


def test_missing_and_corrupt_model_files(capsys, tmp_path):
    rc, _, err = _cli(capsys, "run", "--env", ENV, "--policy", f"ppo:{tmp_path}/missing.zip")
    _one_line_error(rc, err, "does not exist")
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not a zip at all" * 10)
    rc, _, err = _cli(capsys, "run", "--env", ENV, "--policy", f"ppo:{garbage}")
    _one_line_error(rc, err, "corrupt")
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("hello.txt", "hi")
    rc, _, err = _cli(capsys, "eval", "--model", foreign, "--algo", "ppo", "--env", ENV)
    _one_line_error(rc, err, "not an SB3 model")
    truncated = tmp_path / "truncated.zip"
    with zipfile.ZipFile(truncated, "w") as z:
        z.writestr("data", "{not json")
        z.writestr("policy.pth", b"\x00\x01")
    rc, _, err = _cli(capsys, "run", "--env", ENV, "--policy", f"maskable-ppo:{truncated}")
    _one_line_error(rc, err, "could not be loaded")
    rc, _, err = _cli(capsys, "eval", "--model", tmp_path / "nothing-here")
    _one_line_error(rc, err, "does not exist")


def test_model_on_the_wrong_env_is_a_clear_error(capsys, two_runs):
    dirs, _ = two_runs
    rc, _, err = _cli(capsys, "run", "--env", "EdgeCloudML-tiny-v0", "--policy",
                      f"maskable-ppo:{dirs[0] / 'model.zip'}")
    _one_line_error(rc, err, "does not match the env")
    rc, _, err = _cli(capsys, "run", "--env", ENV, "--policy", f"ppo:{dirs[0] / 'model.zip'}")
    _one_line_error(rc, err, "trained with --algo maskable-ppo")
