"""The frame-free job path of an env's reset: ``synthetic_philly_columns`` and ``jobset_from_columns`` give the same
draws, values and dtypes as ``synthetic_philly_table`` and ``build_jobset`` (the validated path, the oracle), and the
EdgeCloudML instance built from them is the one the validated path builds, for synthetic, trace-window and
``load`` presets."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import edgegym  # noqa: F401
from edgegym import workloads as wl
from edgegym.core.types import JobSet
from edgegym.families.edge_cloud import instance as ec_instance


def jobsets_equal(a: JobSet, b: JobSet) -> bool:
    """Every field equal, the arrays in value and dtype."""
    for f in dataclasses.fields(JobSet):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or not np.array_equal(x, y):
                return False
        elif x != y:
            return False
    return True


BW = [100.0, 200.0, 300.0, 400.0]
ARGS = dict(num_edge_servers=6, num_worker_types=4, num_ps_types=3, worker_type_bandwidth_mbps=BW)


@pytest.mark.parametrize("kwargs", [{}, {"horizon_s": 5000.0}, {"load_factor": 2.5, "period_s": 86400.0}])
@pytest.mark.parametrize("num_jobs", [1, 7, 300])
def test_synthetic_columns_are_the_tables_columns(num_jobs, kwargs):
    for seed in range(5):
        r_table, r_cols = np.random.default_rng(seed), np.random.default_rng(seed)
        table = wl.synthetic_philly_table(num_jobs, r_table, **kwargs)
        cols = wl.synthetic_philly_columns(num_jobs, r_cols, **kwargs)
        assert list(cols) == list(table.columns)
        assert cols["job_id"] == tuple(table["job_id"])
        for col in ("submit_time_s", "duration_s", "num_gpus"):
            assert cols[col].dtype == table[col].dtype
            np.testing.assert_array_equal(cols[col], table[col].to_numpy())
        assert r_table.bit_generator.state == r_cols.bit_generator.state  # the same draws, nothing more


@pytest.mark.parametrize("with_model", [False, True])
@pytest.mark.parametrize("horizon_slots", [None, 250.0])
def test_jobset_from_columns_is_build_jobset_on_a_window(with_model, horizon_slots):
    for seed in range(6):
        table = wl.synthetic_philly_table(40, np.random.default_rng(100 + seed))
        if with_model:  # half the rows name a catalogue model, in spellings find_model accepts
            names = ["resnet50", "VGG-16", "unknown-net", "ResNet_50"]
            table["model"] = [names[k % len(names)] for k in range(len(table))]
            table = wl.validate_job_table(table, "test")
        start, J = seed * 3, 20
        want = wl.build_jobset(table, rng=np.random.default_rng(seed), num_jobs=J, start_index=start,
                               horizon_slots=horizon_slots, **ARGS)
        rows = slice(start, start + J)
        got = wl.jobset_from_columns(
            table["submit_time_s"].to_numpy()[rows], table["num_gpus"].to_numpy()[rows],
            tuple(table["job_id"].iloc[rows]), rng=np.random.default_rng(seed), horizon_slots=horizon_slots,
            model_names=table["model"].iloc[rows].tolist() if with_model else None, **ARGS)
        assert jobsets_equal(got, want)
        if with_model:
            assert (got.model != np.random.default_rng(seed).integers(0, len(wl.TABLE_II_MODELS), J)).any()


def test_jobset_from_columns_checks_its_arguments():
    cols = wl.synthetic_philly_columns(5, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"one entry per job .* got 5, 4 and 5"):
        wl.jobset_from_columns(cols["submit_time_s"], cols["num_gpus"][:4], cols["job_id"], rng=rng, **ARGS)
    with pytest.raises(ValueError, match=r"worker_type_bandwidth_mbps must have one entry per worker type"):
        wl.jobset_from_columns(cols["submit_time_s"], cols["num_gpus"], cols["job_id"], rng=rng,
                               **{**ARGS, "worker_type_bandwidth_mbps": [1.0]})
    with pytest.raises(ValueError, match=r"num_jobs must be >= 1"):
        wl.synthetic_philly_columns(0, rng)


def _validated_build_jobs(wcfg, jcfg, cluster, rng, speed):
    """The episode's jobs the way they were built before the frame-free path: the validated table, then
    ``build_jobset`` on its window (the oracle)."""
    J = wcfg.num_jobs
    if wcfg.source == "synthetic":
        table, start = wl.synthetic_philly_table(J, rng), 0
    else:
        table = ec_instance._trace_table(wcfg.source, wcfg.path, wcfg.trace_cluster, wcfg.columns, wcfg.time_unit)
        start = int(rng.integers(0, len(table) - J + 1)) if wcfg.window == "random" else int(wcfg.window)
    params = wl.JobModelParams(
        epochs=jcfg.epochs, minibatch_time_h=jcfg.minibatch_time_h, ps_update_ms=jcfg.ps_update_ms,
        grad_size_mb=jcfg.grad_size_mb, upload_delay_edge_slots=jcfg.edge_upload_delay_slots,
        upload_delay_cloud_slots=jcfg.cloud_upload_delay_slots)
    load = wcfg.load
    jobs = wl.build_jobset(
        table, num_edge_servers=cluster.num_edge_servers, num_worker_types=cluster.num_worker_types,
        num_ps_types=cluster.num_ps_types, worker_type_bandwidth_mbps=cluster.worker_type_bandwidth_mbps, rng=rng,
        params=params, num_jobs=J, start_index=start, horizon_slots=wcfg.horizon_slots if load is None else 1.0)
    if load is None:
        return jobs
    horizon = float(ec_instance.edge_work_slots(jobs, speed).sum()) / (cluster.num_workers * load)
    submit = table["submit_time_s"].to_numpy()[start : start + J]
    return dataclasses.replace(jobs, arrival_slots=wl.arrival_slots_from_times(submit, params.slot_s, horizon))


def _check_env_jobs(env_id, config=None, seeds=range(4)):
    env = gym.make(env_id, config=config) if config else gym.make(env_id)
    preset = env.unwrapped.preset
    for seed in seeds:
        env.reset(seed=seed)
        got = env.unwrapped.jobs
        rng = np.random.default_rng(seed)
        cluster = ec_instance.build_cluster(preset.cluster, rng)
        want = _validated_build_jobs(preset.workload, preset.job_model, cluster, rng, preset.env.speed)
        assert jobsets_equal(got, want), (env_id, seed)


@pytest.mark.parametrize(
    "env_id",
    ["EdgeCloudML-v0", "EdgeCloudML-v1", "EdgeCloudML-sim100-paper-literal-v0", "EdgeCloudML-testbed-paper-literal-v0"],
)
def test_edge_cloud_reset_builds_the_validated_paths_jobs(env_id):
    _check_env_jobs(env_id)


def test_edge_cloud_reset_with_load_builds_the_validated_paths_jobs():
    _check_env_jobs("EdgeCloudML-v1", {"workload": {"load": 1.5, "horizon_slots": None}})


def test_edge_cloud_csv_window_builds_the_validated_paths_jobs(tmp_path):
    rows = [(k, 3 * k, 60 + 7 * k, 1 + k % 4, ["resnet50", "vgg16", "mystery"][k % 3]) for k in range(30)]
    csv = tmp_path / "jobs.csv"
    csv.write_text("job_id,submit_time_s,duration_s,num_gpus,model\n"
                   + "".join(f"j{k},{a},{d},{g},{m}\n" for k, a, d, g, m in rows))
    for window in ("random", 4):
        _check_env_jobs("EdgeCloudML-testbed-v0",
                        {"workload": {"source": "csv", "path": str(csv), "num_jobs": 10, "window": window}})


def test_edge_cloud_philly_window_builds_the_validated_paths_jobs(philly_file):
    _check_env_jobs("EdgeCloudML-testbed-v0",
                    {"workload": {"source": "philly", "path": str(philly_file), "num_jobs": 30}}, seeds=range(2))
