"""The ``edgegym`` CLI: run/list contracts and clean errors (exit 2, one line, no traceback)."""

from __future__ import annotations

import json

import pytest
from edgegym.agents.cli import main


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_run_json_contract(capsys):
    rc, out, err = _run(capsys, "run", "--env", "EdgeCloudML-tiny-v0", "--policy", "aonline", "--seed", "3",
                        "--episodes", "2", "--json")
    assert rc == 0
    lines = [json.loads(x) for x in out.strip().splitlines()]
    assert len(lines) == 2
    for k, rec in enumerate(lines):
        for key in ("env", "policy", "seed", "episode_return", "objective", "avg_jct", "makespan", "preemptions"):
            assert key in rec
        assert rec["seed"] == 3 + k and rec["policy"] == "aonline"
        assert rec["episode_return"] == pytest.approx(-rec["objective"] / rec["reward_scale"])


@pytest.mark.parametrize("policy", ["aonline", "aonline-e", "srtf", "tiresias-l", "batchsche", "random", "all-cloud",
                                    "all-edge"])
def test_every_policy_runs_on_testbed(capsys, policy):
    rc, out, _ = _run(capsys, "run", "--env", "EdgeCloudML-testbed-v0", "--policy", policy, "--json")
    assert rc == 0
    rec = json.loads(out)
    assert rec["objective"] > 0 and rec["num_jobs"] == 30
    assert rec["episode_return"] == pytest.approx(-rec["objective"] / rec["reward_scale"], rel=1e-9)


def test_list_json(capsys):
    rc, out, _ = _run(capsys, "list", "--json")
    data = json.loads(out)
    assert rc == 0
    assert {"EdgeCloudML-v0", "EdgeCloudML-tiny-v0"} <= {e["id"] for e in data["envs"]}
    assert {"aonline", "aonline-e", "srtf", "tiresias-l", "batchsche", "random", "all-cloud"} <= {
        p["name"] for p in data["policies"]
    }
    assert {"philly", "itp", "google2011", "csv"} <= {t["name"] for t in data["trace_loaders"]}


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["run", "--env", "Nope-v0"], "valid envs: "),
        (["run", "--policy", "nope"], "valid policies: "),
        (["run", "--episodes", "0", "--env", "EdgeCloudML-tiny-v0"], "--episodes"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_errors_exit_nonzero_with_message(capsys, argv, needle):
    rc, out, err = _run(capsys, *argv)
    assert rc == 2
    assert needle in err and "Traceback" not in err


def test_list_shows_the_policy_name_forms(capsys):
    """`edgegym list` names the pattern-built policies (rollout over any base, saved agents) beside the registry."""
    import json

    from edgegym.agents.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "rollout:<base>" in out and "<algo>:PATH" in out
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {p["name"] for p in data["policy_forms"]} == {"rollout:<base>", "<algo>:PATH"}
