"""The CLI's one place for errors (issue 14): every user mistake of every subcommand is one line on stderr
and exit status 2, never a traceback; a bug shows its traceback and a bug-report hint (exit 1); a closed
stdout ends quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from edgegym.agents.cli import SUBCOMMANDS, main
from edgegym.agents.errors import BUG_HINT, UserError, expected_message, report_errors

ROOT = Path(__file__).resolve().parents[2]
TINY = "EdgeCloudML-tiny-v0"


def _cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _one_line_error(rc, err, *needles):
    assert rc == 2, err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("edgegym: error:")]
    assert len(errors) == 1, err
    for n in needles:
        assert n in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny PPO model on EdgeCloudML-tiny-v0 (a few hundred steps; enough for the eval flags)."""
    pytest.importorskip("stable_baselines3")
    from edgegym.agents.rl.train import train

    out = tmp_path_factory.mktemp("model")
    hp = out / "hp.yaml"
    hp.write_text("default: {n_steps: 32, batch_size: 32, n_epochs: 1, n_envs: 1, eval_freq: 0, checkpoint_freq: 0}\n")
    train(TINY, "ppo", 32, 0, out, hyperparams=hp, progress=False)
    return out


# ----------------------------------------------------------------------------------- the list
@pytest.mark.parametrize("argv", [
    ["run", "--env", TINY, "--seed", "-1"],
    ["render", "--env", TINY, "--seed", "-1", "--out", "{tmp}/g.png"],
    ["bench", "--envs", TINY, "--policies", "random", "--seeds=-1", "--out", "{tmp}/b", "--workers", "1",
     "--no-plots", "--no-progress"],
])
def test_negative_seed_is_one_line(capsys, tmp_path, argv):
    rc, _, err = _cli(capsys, *[a.format(tmp=tmp_path) for a in argv])
    _one_line_error(rc, err, "seed", ">= 0")


def test_eval_flags(capsys, model_dir):
    rc, _, err = _cli(capsys, "eval", "--model", model_dir, "--seeds", "-4")
    _one_line_error(rc, err, "seed", ">= 0")
    rc, _, err = _cli(capsys, "eval", "--model", model_dir, "--episodes", "0")
    _one_line_error(rc, err, "--episodes")
    rc, _, err = _cli(capsys, "eval", "--model", model_dir, "--episodes", "1", "--render-png", model_dir / "chart")
    _one_line_error(rc, err, "--render-png", ".png")


def test_render_env_config_out_of_range(capsys, tmp_path):
    rc, _, err = _cli(capsys, "render", "--env", TINY, "--out", tmp_path / "g.png",
                      "--env-config", '{"env": {"speed": -1}}')
    _one_line_error(rc, err, "env.speed")


def test_render_out_must_be_png(capsys, tmp_path):
    rc, _, err = _cli(capsys, "render", "--env", TINY, "--out", tmp_path / "X")
    _one_line_error(rc, err, "--out", ".png")
    assert not (tmp_path / "X.png").exists() and not (tmp_path / "X").exists()


def test_bench_unknown_metric_and_baseline(capsys, tmp_path):
    common = ["bench", "--envs", TINY, "--policies", "random", "--seeds", "0", "--out", tmp_path / "b",
              "--workers", "1", "--no-plots", "--no-progress"]
    rc, _, err = _cli(capsys, *common, "--metrics", "nosuch")
    _one_line_error(rc, err, "--metrics", "'nosuch'", "avg_jct")
    rc, _, err = _cli(capsys, *common, "--baseline", "nosuch")
    _one_line_error(rc, err, "--baseline", "nosuch")
    rc, out, _ = _cli(capsys, *common, "--metrics", "avg_jct", "--baseline", "random")
    assert rc == 0 and "avg_jct" in out and "objective / random" in out


def test_bench_bad_window_is_one_error_before_any_cell_runs(capsys, tmp_path):
    rc, _, err = _cli(capsys, "bench", "--envs", "EdgeCloudML-testbed-v0", "--policies", "random", "--seeds", "0",
                      "--windows", "-1",
                      "--trace", "philly", "--out", tmp_path / "b", "--workers", "1", "--no-plots", "--no-progress")
    _one_line_error(rc, err, "workload.window", ">= 0")
    assert not (tmp_path / "b" / "results.csv").exists()


@pytest.mark.parametrize("flag", ["--eval-freq", "--checkpoint-freq", "--seed"])
def test_train_negative_frequencies(capsys, tmp_path, flag):
    rc, _, err = _cli(capsys, "train", "--env", TINY, "--algo", "ppo", "--timesteps", "1", "--out", tmp_path / "t",
                      flag, "-1", "--no-progress")
    _one_line_error(rc, err, flag, ">= 0")


def test_train_invalid_yaml_names_the_file(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("default: {n_steps: [1,\n")
    rc, _, err = _cli(capsys, "train", "--env", TINY, "--algo", "ppo", "--timesteps", "1", "--out", tmp_path / "t",
                      "--hyperparams", bad, "--no-progress")
    _one_line_error(rc, err, str(bad), "not valid YAML")


def test_non_utf8_files_are_named(capsys, tmp_path):
    bad = tmp_path / "hp.yaml"
    bad.write_bytes(b"default:\xff\xfe\n")
    rc, _, err = _cli(capsys, "train", "--env", TINY, "--algo", "ppo", "--timesteps", "1", "--out", tmp_path / "t",
                      "--hyperparams", bad, "--no-progress")
    _one_line_error(rc, err, str(bad), "UTF-8")
    rc, _, err = _cli(capsys, "run", "--env", TINY, "--env-config", bad)
    _one_line_error(rc, err, "--env-config", str(bad))
    rc, _, err = _cli(capsys, "run", "--env", TINY, "--env-config", tmp_path / "missing.yaml")
    _one_line_error(rc, err, "--env-config", "no such file")


def test_run_misspelled_trace_dir(capsys, tmp_path):
    cfg = json.dumps({"workload": {"source": "google2011", "trace_dir": str(tmp_path / "trasces")}})
    rc, _, err = _cli(capsys, "run", "--env", "EdgeUtility-tiny-v0", "--env-config", cfg)
    _one_line_error(rc, err, "workload.trace_dir", "no such directory")


@pytest.mark.parametrize("sub", sorted(SUBCOMMANDS))
def test_every_subcommand_turns_a_bad_flag_into_one_line(capsys, sub):
    rc, _, err = _cli(capsys, sub, "--no-such-flag")
    _one_line_error(rc, err)  # the unknown flag, or first the missing required ones


def test_closed_stdout_ends_quietly():
    """``edgegym list --json | head -c 1``: the reader goes away; no BrokenPipeError traceback."""
    code = "import sys; from edgegym.agents.cli import main; sys.exit(main(['list', '--json']))"
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    p.stdout.close()  # closed before the child writes anything
    err = p.stderr.read().decode()
    rc = p.wait()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert rc in (0, 141)


@pytest.mark.parametrize("exc,bug", [(ZeroDivisionError("float division by zero"), True),
                                     (UserError("bad window"), False)])
def test_bench_cell_failure_shows_a_bug_traceback_only_for_bugs(capsys, tmp_path, monkeypatch, exc, bug):
    import edgegym.agents.runner

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(edgegym.agents.runner, "run_episode", boom)  # cells run in this process with --workers 1
    rc, _, err = _cli(capsys, "bench", "--envs", TINY, "--policies", "random", "--seeds", "0", "--out", tmp_path / "b",
                      "--workers", "1", "--no-plots", "--no-progress")
    assert rc == 1 and "failed EdgeCloudML-tiny-v0 | random | seed 0" in err
    assert ("Traceback" in err and BUG_HINT in err) == bug, err


# ----------------------------------------------------------------------------- the classification
def _raise(exc):
    def f():
        raise exc

    return f


def test_user_error_is_one_line_exit_2(capsys):
    assert report_errors(_raise(UserError("bad flag\n  value"))) == 2
    err = capsys.readouterr().err
    assert err == "edgegym: error: bad flag value\n"


def test_value_error_from_edgegym_code_is_a_user_error(capsys):
    import gymnasium as gym

    rc = report_errors(lambda: gym.make(TINY, config={"env": {"speed": -1}}) and 0)
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("edgegym: error: ") and "env.speed" in err and "Traceback" not in err


@pytest.mark.parametrize("exc", [ZeroDivisionError("float division by zero"), KeyError("x"), AttributeError("_k")])
def test_a_bug_shows_its_traceback_and_the_hint(capsys, exc):
    assert report_errors(_raise(exc)) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and BUG_HINT in err


def test_value_error_raised_inside_numpy_is_a_bug(capsys):
    def broadcast():
        a = np.zeros(3)
        a[:] = np.zeros(4)  # a ValueError raised by numpy, not by edgegym's validation

    assert expected_message(_capture(broadcast)) is None
    assert report_errors(broadcast) == 1
    assert BUG_HINT in capsys.readouterr().err


def _capture(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the test inspects it
        return e
    raise AssertionError("no exception")


def test_debug_env_shows_tracebacks_of_user_errors(capsys, monkeypatch):
    monkeypatch.setenv("EDGEGYM_DEBUG", "1")
    assert report_errors(_raise(UserError("bad flag"))) == 2
    assert "Traceback" in capsys.readouterr().err
