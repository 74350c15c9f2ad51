"""Preset loading and eager validation: unknown keys / out-of-range values name the key and the file."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from edgegym.families.edge_cloud.presets import list_presets, load_preset, preset_from_dict, to_dict


def test_shipped_presets_load_and_round_trip():
    assert {"tiny", "testbed", "sim100"} <= set(list_presets())
    for name in list_presets():
        p = load_preset(name)
        assert preset_from_dict(to_dict(p), source="x") == preset_from_dict(to_dict(p), source="x")
        assert p.env_id == f"{p.family}-{p.name}-v{p.version}"


def _write(tmp_path, data):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    "mutate,key",
    [
        (lambda d: d.update(bogus=1), "bogus"),
        (lambda d: d["env"].update(colour="red"), "env.colour"),
        (lambda d: d["cluster"].update(num_edge_servers=-1), "cluster.num_edge_servers"),
        (lambda d: d["env"].update(speed=0), "env.speed"),
        (lambda d: d["env"].update(action_mode="teleport"), "env.action_mode"),
        (lambda d: d["env"].update(discipline="fifo"), "env.discipline"),
        (lambda d: d["job_model"].update(epochs=[60, 20]), "job_model.epochs"),
        (lambda d: d["job_model"].update(minibatch_time_h=[-1, 2]), "job_model.minibatch_time_h"),
        (lambda d: d["workload"].update(num_jobs=0), "workload.num_jobs"),
        (lambda d: d["workload"].update(source="nowhere"), "workload.source"),
        (lambda d: d["cluster"].update(worker_type_bandwidth_mbps=[0.0, 10.0]), "cluster.worker_type_bandwidth_mbps"),
        (lambda d: d["cluster"].update(workers_per_server=[1, 2, 3]), "cluster.workers_per_server"),
        (lambda d: d["env"].update(max_edge_servers=2), "env.max_edge_servers"),
        (lambda d: d["env"].update(slotted="yes"), "env.slotted"),
    ],
)
def test_bad_config_names_key_and_file(tmp_path, mutate, key):
    data = to_dict(load_preset("testbed"))
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ValueError) as err:
        load_preset(path)
    msg = str(err.value)
    assert str(path) in msg and key in msg


def test_inline_job_errors_name_the_job(tmp_path):
    data = to_dict(load_preset("tiny"))
    del data["workload"]["jobs"][1]["epochs"]
    path = _write(tmp_path, data)
    with pytest.raises(ValueError, match=r"workload\.jobs\[1\]\.epochs"):
        load_preset(path)


def test_unknown_preset_lists_shipped():
    with pytest.raises(ValueError, match="tiny"):
        load_preset("no-such-preset")


def test_overrides_are_validated():
    p = load_preset("testbed")
    assert p.replace(env={"action_mode": "cloud_split"}).env.action_mode == "cloud_split"
    with pytest.raises(ValueError, match="env.speed"):
        p.replace(env={"speed": -2})
    with pytest.raises(ValueError, match="unknown section"):
        p.replace(nonsense={})


def test_gym_make_does_not_depend_on_the_working_directory(tmp_path):
    code = "import gymnasium as gym, edgegym; e = gym.make('EdgeCloudML-v0'); e.reset(seed=0); print('ok')"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_trace_workload_through_config():
    from edgegym.workloads import default_trace_dir

    if default_trace_dir() is None or not (default_trace_dir() / "philly_pollux" / "philly.csv.gz").exists():
        pytest.skip("Philly trace not available (../shared/traces or $EDGEGYM_TRACE_DIR)")
    import gymnasium as gym

    env = gym.make("EdgeCloudML-testbed-v0", config={"workload": {"source": "philly", "window": 1000}})
    env.reset(seed=0)
    jobs = env.unwrapped.jobs
    assert jobs.num_jobs == 30 and jobs.arrival_slots[0] == 0
    assert jobs.job_ids[0] != jobs.job_ids[1]
