"""Bad inputs on the command line are one-line user errors (exit 2) that name the offending flag or model:
a bad ``--seeds`` item, ``--seeds`` together with ``--seed``/``--episodes``, a saved model of one family run
on another family's env; and ``run`` takes ``eval``'s ``--trace``/``--window``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from edgegym.agents.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "docs" / "results" / "agents" / "models"

#: every subcommand with the shared seed flags, and the arguments it needs besides them
SEED_COMMANDS = {
    "run": ["run", "--env", "EdgeCloudML-tiny-v0", "--no-progress"],
    "eval": ["eval", "--model", str(MODELS / "EdgeCloudML-v1"), "--env", "EdgeCloudML-tiny-v1", "--no-progress"],
    "bench": ["bench", "--envs", "EdgeCloudML-tiny-v0", "--policies", "srtf", "--workers", "1", "--no-progress",
              "--no-plots"],
}


def _subcommands():
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    raise AssertionError("no subcommands")


def test_every_subcommand_with_seeds_is_covered():
    # the flags of add_seed_flags (validate takes --seeds alone: a subset of its file)
    with_seeds = {name for name, p in _subcommands().items()
                  if {"--seeds", "--episodes"} <= {s for a in p._actions for s in a.option_strings}}
    assert with_seeds == set(SEED_COMMANDS)


@pytest.mark.parametrize("cmd", sorted(SEED_COMMANDS))
@pytest.mark.parametrize("bad", ["a", "1-x", "5-2", "-3"])
def test_bad_seeds_item_names_the_flag(cmd, bad, capsys, tmp_path):
    argv = SEED_COMMANDS[cmd] + (["--out", str(tmp_path / "b")] if cmd == "bench" else [])
    assert main(argv + ["--seeds", bad]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"edgegym: error: --seeds: bad seed {bad!r}"), err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("cmd", sorted(SEED_COMMANDS))
@pytest.mark.parametrize("other", [["--seed", "0"], ["--episodes", "2"], ["--seed", "0", "--episodes", "2"]])
def test_seeds_with_seed_or_episodes_is_a_user_error(cmd, other, capsys, tmp_path):
    argv = SEED_COMMANDS[cmd] + (["--out", str(tmp_path / "b")] if cmd == "bench" else [])
    assert main(argv + other + ["--seeds", "1-2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "--seeds cannot be combined with" in err
    for flag in other[::2]:
        assert flag in err, err
    assert not (tmp_path / "b").exists()  # nothing ran


def test_seed_and_episodes_alone_still_work(capsys):
    assert main(SEED_COMMANDS["run"] + ["--seed", "3", "--episodes", "2", "--policy", "srtf"]) == 0
    out = capsys.readouterr().out
    assert "seed 3]" in out and "seed 4]" in out


def test_negative_seed_names_the_flag(capsys):
    assert main(SEED_COMMANDS["run"] + ["--seed", "-1"]) == 2
    assert "--seed must be >= 0" in capsys.readouterr().err


def test_run_takes_evals_trace_and_window_flags():
    subs = _subcommands()
    flags = {c: {s for a in subs[c]._actions for s in a.option_strings} for c in ("run", "eval")}
    assert {"--trace", "--window"} <= flags["eval"]
    assert {"--trace", "--window"} <= flags["run"]


def test_run_trace_sets_the_workload_source(capsys):
    # the tiny preset's jobs are inline, so another source is rejected by the preset validation: proof that
    # --trace reached workload.source (the same check --env-config '{"workload": {"source": "philly"}}' makes)
    assert main(SEED_COMMANDS["run"] + ["--trace", "philly"]) == 2
    err_trace = capsys.readouterr().err
    assert main(SEED_COMMANDS["run"] + ["--env-config", '{"workload": {"source": "philly"}}']) == 2
    assert capsys.readouterr().err == err_trace
    assert "source is 'philly'" in err_trace


@pytest.mark.parametrize(
    "argv, trained, target",
    [
        (["eval", "--model", "EdgeUtility-v1", "--env", "EdgeCloudML-tiny-v1", "--seeds", "0"],
         "EdgeUtility/EdgeUtility-v1", "EdgeCloudML-tiny-v1 (EdgeCloudML)"),
        (["run", "--env", "WirelessUDL-tiny-v1", "--policy", "HeteroML-v1"],
         "HeteroML/HeteroML-v1", "WirelessUDL-tiny-v1 (WirelessUDL)"),
        (["run", "--env", "EdgeUtility-tiny-v1", "--policy", "EdgeCloudML-v1"],
         "EdgeCloudML/EdgeCloudML-v1", "EdgeUtility-tiny-v1 (EdgeUtility)"),
        (["eval", "--model", "WirelessUDL-v1", "--env", "HeteroML-tiny-v1", "--seeds", "0"],
         "WirelessUDL/WirelessUDL-v1", "HeteroML-tiny-v1 (HeteroML)"),
    ],
)
def test_model_of_another_family_names_the_mismatch(argv, trained, target, capsys):
    argv = [str(MODELS / a) if (MODELS / a).is_dir() else a for a in argv]
    assert main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"edgegym: error: model trained on {trained} cannot run on {target}"), err
    assert "unknown" not in err and len(err.splitlines()) == 1
