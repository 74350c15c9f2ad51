"""Results files (``--results-out``) and ``edgegym validate``: a replay that matches passes, any change fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from edgegym.agents.cli import main

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "docs" / "results" / "agents" / "models" / "EdgeUtility-v1"


def _cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_reference_policy_entry_replays(capsys, tmp_path):
    f = tmp_path / "r.json"
    rc, _, err = _cli(capsys, "run", "--env", "EdgeCloudML-tiny-v1", "--policy", "aonline", "--seeds", "20000-20001",
                      "--results-out", f)
    assert rc == 0, err
    entry = json.loads(f.read_text())
    assert entry["env_id"] == "EdgeCloudML-tiny-v1" and entry["split"] is None and entry["edgegym_version"]
    run = entry["runs"][0]
    assert run["policy"] == "aonline" and run["seeds"] == [20000, 20001] and "sha256" not in run
    assert run["resolved_config"]["cluster"]["num_edge_servers"] == 2
    rc, out, _ = _cli(capsys, "validate", f)
    assert rc == 0 and "valid (EdgeCloudML-tiny-v1" in out and out.count("matches") == 2
    # a recorded objective that differs by more than 1e-9 relative fails, naming the seed
    run["objectives"][1] *= 1 + 1e-6
    f.write_text(json.dumps(entry))
    rc, out, _ = _cli(capsys, "validate", f)
    assert rc == 1 and "INVALID" in out and "aonline: seed 20001: objective" in out
    # within 1e-9 relative is the same result
    run["objectives"][1] /= 1 + 1e-6
    run["objectives"][0] *= 1 + 1e-12
    f.write_text(json.dumps(entry))
    assert _cli(capsys, "validate", f, "--seeds", 20000)[0] == 0


def test_changed_config_is_a_difference(capsys, tmp_path):
    f = tmp_path / "r.json"
    assert _cli(capsys, "run", "--env", "EdgeCloudML-tiny-v1", "--policy", "aonline", "--seeds", 20000,
                "--results-out", f)[0] == 0
    entry = json.loads(f.read_text())
    entry["runs"][0]["resolved_config"]["cluster"]["num_edge_servers"] = 3
    f.write_text(json.dumps(entry))
    rc, out, _ = _cli(capsys, "validate", f)
    assert rc == 1 and "config cluster.num_edge_servers: recorded 3, now 2" in out


def test_split_entry_records_the_overlay(capsys, tmp_path):
    f = tmp_path / "s.json"
    rc, _, err = _cli(capsys, "run", "--env", "WirelessUDL-tiny-v1", "--policy", "okita", "--split", "size-x2",
                      "--seeds", 20000, "--results-out", f)
    assert rc == 0, err
    entry = json.loads(f.read_text())
    assert entry["split"] == "size-x2" and set(entry["env_config"]) == {"cluster", "jobs"}
    assert _cli(capsys, "validate", f)[0] == 0


@pytest.mark.skipif(not (AGENT / "model.zip").is_file(), reason="no shipped EdgeUtility-v1 agent")
def test_saved_agent_entry_and_changed_checkpoint(capsys, tmp_path):
    pytest.importorskip("sb3_contrib")
    model = tmp_path / "agent"
    shutil.copytree(AGENT, model)
    f = tmp_path / "a.json"
    rc, out, err = _cli(capsys, "eval", "--model", model, "--env", "EdgeUtility-tiny-v1", "--seeds", "20000-20001",
                        "--results-out", f, "--no-progress")
    assert rc == 0, err
    assert "IQM [95% CI]" in out and "P(improvement)" in out and "over o4a" in out
    entry = json.loads(f.read_text())
    run = entry["runs"][0]
    assert run["checkpoint"] == str(model / "model.zip") and len(run["sha256"]) == 64
    assert entry["summary"]["n_test_seeds"] == 2 and not entry["summary"]["lower_is_better"]
    assert _cli(capsys, "validate", f)[0] == 0
    with open(model / "model.zip", "ab") as fh:  # the checkpoint changed after the entry was written
        fh.write(b"\0")
    rc, out, _ = _cli(capsys, "validate", f)
    assert rc == 1 and f"checkpoint {model / 'model.zip'} changed" in out


def test_eval_several_models_one_iqm_and_json(capsys, tmp_path):
    pytest.importorskip("sb3_contrib")
    if not (AGENT / "model.zip").is_file():
        pytest.skip("no shipped EdgeUtility-v1 agent")
    a, b = tmp_path / "s0", tmp_path / "s1"
    shutil.copytree(AGENT, a)
    shutil.copytree(AGENT, b)
    rc, out, err = _cli(capsys, "eval", "--model", a, b, "--env", "EdgeUtility-tiny-v1", "--seeds", "20000-20001",
                        "--reference", "none", "--json", "--no-progress")
    assert rc == 0, err
    assert len(out.splitlines()) == 4  # one JSON record per (model, seed) on stdout
    fig = json.loads([ln for ln in err.splitlines() if ln.startswith('{"protocol"')][0])["protocol"]
    assert fig["n_training_seeds"] == 2 and fig["n_test_seeds"] == 2 and "prob_improvement" not in fig
    assert fig["resampled"] == "training seeds within test seeds"


def test_bad_results_files(capsys, tmp_path):
    f = tmp_path / "x.json"
    f.write_text("{}")
    rc, _, err = _cli(capsys, "validate", f)
    assert rc == 2 and "not an edgegym results file" in err
    f.write_text(json.dumps({"format": "edgegym-results/1", "env_id": "EdgeCloudML-tiny-v1",
                             "runs": [{"policy": "aonline", "seeds": [1, 2], "objectives": [1.0]}]}))
    rc, _, err = _cli(capsys, "validate", f)
    assert rc == 2 and "runs[0]: 2 seeds but 1 objectives" in err
    rc, _, err = _cli(capsys, "validate", tmp_path / "missing.json")
    assert rc == 2 and "cannot read results file" in err


def test_unknown_split_is_a_user_error(capsys):
    rc, _, err = _cli(capsys, "run", "--env", "EdgeCloudML-tiny-v1", "--split", "nope")
    assert rc == 2 and "unknown split 'nope'" in err


def test_validate_bad_seeds_name_the_flag(capsys, tmp_path):
    f = tmp_path / "r.json"
    assert _cli(capsys, "run", "--env", "EdgeCloudML-tiny-v1", "--policy", "aonline", "--seeds", 20000,
                "--results-out", f)[0] == 0
    rc, _, err = _cli(capsys, "validate", f, "--seeds", "x")
    assert rc == 2 and "--seeds: bad seed 'x'" in err
    rc, _, err = _cli(capsys, "validate", f, "--seeds", 5)
    assert rc == 2 and "--seeds: none of [5] is in" in err
