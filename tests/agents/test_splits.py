"""Named test splits (envs_config/splits/*.yaml): overlays from the preset's values, validated, per family."""

import gymnasium as gym
import pytest
from edgegym.agents import protocol
from edgegym.agents.errors import UserError

from edgegym.families import families

NAMES = {"in-distribution", "load-x0.5", "load-x2", "size-x0.5", "size-x2"}


@pytest.mark.parametrize("family", sorted(families()))
def test_every_family_has_the_shift_splits(family):
    assert NAMES <= set(protocol.family_splits(family))


def test_overlays_scale_the_preset_values():
    assert protocol.split_overlay("EdgeCloudML-v1", "in-distribution") == {}
    assert protocol.split_overlay("EdgeCloudML-v1", "load-x2") == {"workload": {"load": 1.0}}
    assert protocol.split_overlay("EdgeCloudML-v1", "size-x0.5") == {"cluster": {"num_edge_servers": 50},
                                                                      "workload": {"num_jobs": 150}}
    # relative to --env-config's values, when given
    assert protocol.split_overlay("EdgeCloudML-v1", "load-x2", {"workload": {"load": 0.3}}) == \
        {"workload": {"load": 0.6}}
    # a list scales element-wise, an integer stays an integer >= 1
    over = protocol.split_overlay("EdgeUtility-v1", "size-x2")
    base = protocol.preset_config("EdgeUtility-v1")["servers"]["edge_counts"]
    assert over["servers"]["edge_counts"] == [2 * c for c in base]


@pytest.mark.parametrize("env_id", ["HeteroML-v1", "WirelessUDL-v1", "EdgeCloudML-v1"])
@pytest.mark.parametrize("split", ["load-x0.5", "size-x2"])
def test_split_envs_build(env_id, split):
    env = gym.make(env_id, config=protocol.split_overlay(env_id, split))
    env.reset(seed=protocol.test_seeds()[0])
    env.close()


def test_errors_name_the_split_and_key():
    with pytest.raises(UserError, match="unknown split 'nope' for EdgeCloudML-v1; EdgeCloudML splits: in-distribution"):
        protocol.split_overlay("EdgeCloudML-v1", "nope")
    # the tiny preset's inline jobs have no load to scale
    with pytest.raises(UserError, match="split 'load-x2' on EdgeCloudML-tiny-v1: the preset has no value for "
                                        "'workload.load'"):
        protocol.split_overlay("EdgeCloudML-tiny-v1", "load-x2")


def test_trace_split_without_the_trace_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEGYM_TRACE_DIR", str(tmp_path))
    monkeypatch.setenv("EDGEGYM_NO_SHARED", "1")
    monkeypatch.setenv("EDGEGYM_CACHE", str(tmp_path))
    protocol._trace_available.cache_clear()
    try:
        with pytest.raises(protocol.SplitUnavailable, match="split 'trace-philly' needs the philly trace"):
            protocol.split_overlay("EdgeCloudML-v1", "trace-philly")
    finally:
        protocol._trace_available.cache_clear()


def test_split_files_are_validated(monkeypatch, tmp_path):
    bad = tmp_path / "splits"
    bad.mkdir()
    (bad / "edge_cloud.yaml").write_text("splits:\n  x:\n    scale: {workload.load: -1}\n")
    monkeypatch.setattr(protocol, "_splits_file", lambda key: bad / f"{key}.yaml")
    protocol.family_splits.cache_clear()
    try:
        with pytest.raises(ValueError, match="split 'x': scale factor of 'workload.load' must be a number > 0"):
            protocol.family_splits("EdgeCloudML")
    finally:
        protocol.family_splits.cache_clear()


def test_list_shows_the_splits_and_run_uses_the_test_seeds(capsys):
    import json

    from edgegym.agents.cli import main

    assert main(["list", "--json"]) == 0
    splits = json.loads(capsys.readouterr().out)["splits"]
    assert {"family": "EdgeCloudML", "name": "trace-philly"}.items() <= next(
        s for s in splits if s["name"] == "trace-philly").items()
    assert main(["list"]) == 0
    assert "HeteroML     size-x2" in capsys.readouterr().out
    assert main(["run", "--env", "WirelessUDL-tiny-v1", "--policy", "okita", "--split", "in-distribution",
                 "--json", "--no-progress"]) == 0
    seeds = [json.loads(ln)["seed"] for ln in capsys.readouterr().out.splitlines()]
    assert seeds == protocol.test_seeds()
