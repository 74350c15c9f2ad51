"""``edgegym train``'s hyperparameters: ``--hyperparams FILE`` overlays the shipped recipe key by key and says what
it changed, ``--replace-hyperparams`` reads the file alone, the recipe flags (``--learning-rate``, ``--bc-episodes``,
``--dagger-rounds``, ...) override it and are reported the same way, a budget that is not whole rollouts is rounded
up with a notice, evaluations never repeat a step count, and a log file gets short progress lines, not a bar."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("sb3_contrib")

from edgegym.agents.cli import main  # noqa: E402
from edgegym.agents.rl import train as train_mod  # noqa: E402
from edgegym.agents.rl.train import (  # noqa: E402
    describe_hyperparams,
    load_hyperparams,
    resolve_hyperparams,
    train,
    whole_rollouts,
)

V1 = "EdgeCloudML-testbed-v1"  # recipe: shared row policy, behaviour cloning from aonline, cloud_fraction actions
TINY = "EdgeUtility-tiny-v1"
SMALL = ("default:\n  n_envs: 1\n  n_steps: 16\n  batch_size: 16\n  n_epochs: 1\n  n_eval_episodes: 1\n"
         "  policy: SharedRowPolicy\n  policy_kwargs: {}\n  env_config: {}\n")


def _file(tmp_path, text: str, name: str = "hp.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_file_setting_only_the_learning_rate_keeps_the_rest_of_the_recipe(tmp_path):
    f = _file(tmp_path, "default:\n  learning_rate: 3.0e-4\n")
    shipped = load_hyperparams("maskable-ppo", V1)
    hp, changes = resolve_hyperparams("maskable-ppo", V1, f)
    assert hp == {**shipped, "learning_rate": 3.0e-4}
    assert hp["policy"] == "SharedRowPolicy" and hp["bc_teacher"] == "aonline"
    assert changes == [{"key": "learning_rate", "from": shipped["learning_rate"], "to": 3.0e-4, "by": str(f)}]


def test_a_file_teacher_replaces_the_recipe_s_behaviour_cloning_teacher(tmp_path):
    f = _file(tmp_path, "default:\n  teacher: srtf\n")
    hp, changes = resolve_hyperparams("maskable-ppo", V1, f)
    assert changes == [{"key": "teacher", "from": "aonline", "to": "srtf", "by": str(f)}]


def test_nested_mappings_are_merged_key_by_key(tmp_path):
    f = _file(tmp_path, "EdgeCloudML:\n  env_config:\n    workload: {num_jobs: 12}\n")
    hp, changes = resolve_hyperparams("maskable-ppo", V1, f)
    assert hp["env_config"] == {"env": {"action_mode": "cloud_fraction"}, "workload": {"num_jobs": 12}}
    assert [(c["key"], c["from"], c["to"]) for c in changes] == [("env_config.workload.num_jobs", None, 12)]


def test_replace_reads_the_file_alone(tmp_path):
    f = _file(tmp_path, "default:\n  learning_rate: 3.0e-4\n")
    hp, changes = resolve_hyperparams("maskable-ppo", V1, f, replace=True)
    assert hp == {"learning_rate": 3.0e-4} and changes == []
    line = describe_hyperparams("maskable-ppo", V1, f, True, changes)
    assert f"{f} alone" in line and "--replace-hyperparams" in line


def test_flags_override_the_file_and_are_reported_with_their_flag(tmp_path):
    f = _file(tmp_path, "default:\n  learning_rate: 3.0e-4\n")
    hp, changes = resolve_hyperparams("maskable-ppo", V1, f, overrides={
        "learning_rate": 5e-4, "bc_episodes": 3, "dagger_rounds": 2, "teacher": "srtf", "n_steps": None})
    assert hp["learning_rate"] == 5e-4 and hp["bc_episodes"] == 3 and hp["dagger_rounds"] == 2
    assert hp["n_steps"] == load_hyperparams("maskable-ppo", V1)["n_steps"]  # None: not given
    line = describe_hyperparams("maskable-ppo", V1, f, False, changes)
    assert "\n" not in line
    for text in (f"changed by {f}: learning_rate 0.0001 -> 0.0003; by flags: ",
                 "learning_rate 0.0003 -> 0.0005 (--learning-rate)",
                 "bc_episodes 10 -> 3 (--bc-episodes)", "dagger_rounds unset -> 2 (--dagger-rounds)",
                 "teacher aonline -> srtf (--teacher)"):
        assert text in line, line


def test_a_file_that_changes_nothing_says_so(tmp_path):
    shipped = load_hyperparams("maskable-ppo", V1)
    f = _file(tmp_path, f"default:\n  n_steps: {shipped['n_steps']}\n")
    hp, changes = resolve_hyperparams("maskable-ppo", V1, f)
    assert hp == shipped and changes == []
    assert describe_hyperparams("maskable-ppo", V1, f, False, changes).endswith(f"; {f} changes nothing")
    assert describe_hyperparams("maskable-ppo", V1, None, False, []) is None


def _captured_train(monkeypatch):
    """Replace the training itself: the CLI's parsing, checks and notices run, ``train`` records its arguments."""
    calls = []

    def fake(*args, **kwargs):
        calls.append((args, kwargs))
        raise ValueError("stopped before training")

    monkeypatch.setattr(train_mod, "train", fake)
    return calls


def test_cli_prints_one_line_naming_every_changed_key(tmp_path, capsys, monkeypatch):
    calls = _captured_train(monkeypatch)
    f = _file(tmp_path, "default:\n  learning_rate: 3.0e-4\n")
    rc = main(["train", "--env", V1, "--algo", "maskable-ppo", "--timesteps", "1000", "--out", str(tmp_path / "r"),
               "--hyperparams", str(f), "--bc-episodes", "2", "--dagger-rounds", "1", "--learning-rate", "2e-4"])
    err = capsys.readouterr().err
    assert rc == 2 and "stopped before training" in err
    lines = [ln for ln in err.splitlines() if "hyperparameters for" in ln]
    assert len(lines) == 1, err
    assert ("learning_rate 0.0001 -> 0.0003" in lines[0] and "learning_rate 0.0003 -> 0.0002 (--learning-rate)"
            in lines[0] and "bc_episodes 10 -> 2 (--bc-episodes)" in lines[0] and "(--dagger-rounds)" in lines[0])
    (args, kwargs), = calls
    assert kwargs["overrides"] == {"learning_rate": 2e-4, "bc_episodes": 2, "dagger_rounds": 1}
    assert kwargs["hyperparams"] == str(f) and kwargs["replace_hyperparams"] is False


def test_cli_shipped_recipe_alone_prints_no_hyperparameter_line(tmp_path, capsys, monkeypatch):
    _captured_train(monkeypatch)
    main(["train", "--env", V1, "--algo", "maskable-ppo", "--timesteps", "1000", "--out", str(tmp_path / "r")])
    assert "hyperparameters for" not in capsys.readouterr().err


@pytest.mark.parametrize("argv, needle", [
    (["--learning-rate", "0"], "--learning-rate must be in (0, 1], got 0"),
    (["--learning-rate", "2"], "--learning-rate must be in (0, 1]"),
    (["--gamma", "1.5"], "--gamma must be in (0, 1]"),
    (["--ent-coef", "-0.1"], "--ent-coef must be in [0, 1]"),
    (["--bc-episodes", "0"], "--bc-episodes must be >= 1, got 0"),
    (["--n-steps", "0"], "--n-steps must be >= 1"),
    (["--replace-hyperparams"], "--replace-hyperparams needs --hyperparams FILE"),
])
def test_cli_bad_recipe_flags(tmp_path, capsys, argv, needle):
    rc = main(["train", "--env", V1, "--algo", "maskable-ppo", "--timesteps", "100", "--out", str(tmp_path / "r"),
               *argv])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and err.count("\n") == 1, err


def test_bc_flags_need_a_teacher(tmp_path):
    # the ppo recipe of a -v0 id clones nothing: --bc-episodes would change nothing, so it is refused
    with pytest.raises(ValueError, match=r"bc_episodes \(--bc-episodes\) needs a teacher"):
        train("EdgeCloudML-tiny-v0", "ppo", 64, 0, tmp_path / "r", overrides={"bc_episodes": 2}, progress=False)


def test_whole_rollouts():
    assert [whole_rollouts(t, 64) for t in (0, 1, 10, 64, 65, 128)] == [0, 64, 64, 64, 128, 128]
    assert whole_rollouts(220_000, 2048) == 221_184


def test_budget_below_one_rollout_is_rounded_up_with_a_notice(tmp_path, capsys):
    f = _file(tmp_path, SMALL + "  eval_freq: 0\n")
    s = train(TINY, "maskable-ppo", 10, 0, tmp_path / "r", hyperparams=f, replace_hyperparams=True, progress=False)
    err = capsys.readouterr().err
    assert "--timesteps 10 is below one rollout (n_steps 16 x 1 env(s) = 16 env steps); training 1 rollout(s) = 16" \
        in err, err
    assert s["num_timesteps"] == 16 and s["timesteps"] == 16 and s["timesteps_requested"] == 10
    side = json.loads((tmp_path / "r" / "model.edgegym.json").read_text())
    assert side["timesteps"] == 16 and side["timesteps_requested"] == 10


def test_log_file_progress_lines_and_one_evaluation_per_step_count(tmp_path, capsys):
    """stderr is not a terminal under capsys: no progress bar, a short line at the (here: every) interval; the
    periodic evaluations and the final one never share a step count."""
    f = _file(tmp_path, SMALL + "  eval_freq: 16\n")
    s = train(TINY, "maskable-ppo", 64, 0, tmp_path / "r", hyperparams=f, replace_hyperparams=True, progress=True,
              log_every_s=0.0)
    err = capsys.readouterr().err
    assert "\r" not in err
    ppo_lines = [ln for ln in err.splitlines() if ": PPO: " in ln and "/64 env steps" in ln]
    assert [ln.split("PPO: ")[1].split(" env")[0] for ln in ppo_lines] == ["16/64", "32/64", "48/64"], err
    assert "(25.0%)" in ppo_lines[0] and "min left" in ppo_lines[0]
    steps = [e["timesteps"] for e in s["evaluations"]]
    assert steps == [0, 16, 32, 48, 64]
    assert [e["updates"] for e in s["evaluations"]] == sorted({e["updates"] for e in s["evaluations"]})
    logged = [ln for ln in err.splitlines() if "evaluation at" in ln]
    assert len(logged) == len(steps) == len({ln.split(" steps")[0] for ln in logged})


def test_train_json_records_the_changed_keys(tmp_path):
    f = _file(tmp_path, SMALL + "  eval_freq: 0\n")
    s = train(TINY, "maskable-ppo", 16, 0, tmp_path / "r", hyperparams=f, replace_hyperparams=True, progress=False,
              overrides={"learning_rate": 1e-3})
    assert s["hyperparams_replaced"] is True and s["hyperparams"]["learning_rate"] == 1e-3
    assert s["hyperparams_changed"] == [{"key": "learning_rate", "from": None, "to": 1e-3, "by": "--learning-rate"}]
    saved = json.loads((tmp_path / "r" / "train.json").read_text())
    assert saved["hyperparams_changed"] == s["hyperparams_changed"]
