"""build_jobset: determinism, spec ranges (spec 000 §5.1-5.2, B3-B7), windows and horizon rescaling."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgegym.core.types import JobSet
from edgegym.workloads import (
    TABLE_II_MODELS,
    JobModelParams,
    ModelSpec,
    arrival_slots_from_times,
    build_jobset,
    find_model,
    synthetic_philly_table,
)

BW = np.array([100.0, 1000.0, 2500.0, 5120.0])  # (num_worker_types,)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_philly_table(500, np.random.default_rng(123), horizon_s=30 * 3600.0)


def make(table, seed=0, **kwargs) -> JobSet:
    args = dict(num_edge_servers=6, num_worker_types=4, num_ps_types=3, worker_type_bandwidth_mbps=BW)
    args.update(kwargs)
    return build_jobset(table, rng=np.random.default_rng(seed), **args)


def jobsets_equal(a: JobSet, b: JobSet) -> bool:
    return all(
        np.array_equal(getattr(a, f.name), getattr(b, f.name))
        if isinstance(getattr(a, f.name), np.ndarray)
        else getattr(a, f.name) == getattr(b, f.name)
        for f in dataclasses.fields(JobSet)
    )


def test_catalogue_is_table_ii():
    rows = [(m.name, m.dataset, m.num_chunks, m.batches_per_chunk) for m in TABLE_II_MODELS]
    assert rows == [
        ("ResNet-50", "CIFAR10", 27, 58),
        ("ResNet-101", "CIFAR10", 27, 58),
        ("GoogLeNet", "Caltech101", 115, 58),
        ("LeNet", "Caltech101", 115, 58),
        ("AlexNet", "ImageNet-12", 60, 58),
        ("Inception-BN", "ImageNet-12", 60, 58),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        TABLE_II_MODELS[0].num_chunks = 3  # type: ignore[misc]
    assert find_model("resnet-50") == 0 and find_model("RESNET50") == 0 and find_model("inception_bn") == 5
    assert find_model("bert") is None


def test_deterministic_given_rng(table):
    assert jobsets_equal(make(table, seed=4, num_jobs=100), make(table, seed=4, num_jobs=100))
    assert not jobsets_equal(make(table, seed=4, num_jobs=100), make(table, seed=5, num_jobs=100))


def test_parameters_within_spec_ranges(table):
    jobs = make(table, num_jobs=500)
    J, S = 500, 6
    assert jobs.num_jobs == J and jobs.num_edge_servers == S
    assert set(jobs.epochs) <= set(range(20, 61)) and {20, 60} <= set(jobs.epochs)
    assert jobs.minibatch_time_h.min() >= 0.001 and jobs.minibatch_time_h.max() <= 0.05
    assert jobs.ps_update_ms.min() >= 10 and jobs.ps_update_ms.max() <= 100
    assert jobs.grad_size_mb.min() >= 30 and jobs.grad_size_mb.max() <= 575
    assert jobs.upload_delay_edge_slots.shape == (J, S)
    assert set(np.unique(jobs.upload_delay_edge_slots)) == {1.0, 2.0, 3.0, 4.0}
    assert set(np.unique(jobs.upload_delay_cloud_slots)) == {10.0, 11.0, 12.0, 13.0, 14.0, 15.0}
    assert set(jobs.worker_type) == {0, 1, 2, 3} and set(jobs.ps_type) == {0, 1, 2}
    np.testing.assert_array_equal(jobs.bandwidth_mbps, BW[jobs.worker_type])
    assert set(jobs.model) == set(range(6))
    chunks = np.array([m.num_chunks for m in TABLE_II_MODELS])
    np.testing.assert_array_equal(jobs.num_chunks, chunks[jobs.model])
    assert set(jobs.batches_per_chunk) == {58}
    np.testing.assert_array_equal(jobs.num_gpus, table["num_gpus"].to_numpy())
    assert jobs.job_ids == tuple(table["job_id"])
    assert np.all(jobs.arrival_slots == np.floor(jobs.arrival_slots))


def test_window_and_slot_conversion(table):
    jobs = make(table, num_jobs=50, start_index=100)
    t = table["submit_time_s"].to_numpy()[100:150]
    np.testing.assert_array_equal(jobs.arrival_slots, np.floor((t - t[0]) / 3600.0 + 1e-9))
    assert jobs.arrival_slots[0] == 0
    assert jobs.job_ids == tuple(table["job_id"].iloc[100:150])
    half_hour = make(table, num_jobs=50, start_index=100, params=JobModelParams(slot_s=1800.0))
    np.testing.assert_array_equal(half_hour.arrival_slots, np.floor((t - t[0]) / 1800.0 + 1e-9))


def test_horizon_rescaling(table):
    jobs = make(table, num_jobs=300, start_index=50, horizon_slots=100)
    t = table["submit_time_s"].to_numpy()[50:350]
    assert jobs.arrival_slots[0] == 0 and jobs.arrival_slots[-1] == 100
    np.testing.assert_array_equal(jobs.arrival_slots, np.floor((t - t[0]) / (t[-1] - t[0]) * 100 + 1e-9))
    assert np.all(np.diff(jobs.arrival_slots) >= 0)
    short = make(table, num_jobs=300, start_index=50, horizon_slots=7.5)
    assert short.arrival_slots.max() == 7


def test_too_many_jobs_says_how_many_rows(table):
    with pytest.raises(ValueError, match=r"num_jobs=101 .*start_index=400: 100 \(the table has 500 rows\)"):
        make(table, num_jobs=101, start_index=400)
    assert make(table, start_index=400).num_jobs == 100


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(worker_type_bandwidth_mbps=BW[:3]), "one entry per worker type"),
        (dict(worker_type_bandwidth_mbps=np.array([1.0, 2.0, 0.0, 4.0])), "> 0"),
        (dict(num_edge_servers=-1), "num_edge_servers"),
        (dict(num_ps_types=0), "num_ps_types"),
        (dict(start_index=-1), "start_index"),
        (dict(num_jobs=0), "num_jobs"),
        (dict(horizon_slots=-5.0), "horizon_slots"),
    ],
)
def test_bad_arguments(table, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(table, **kwargs)


def test_params_validation():
    with pytest.raises(ValueError, match="JobModelParams.epochs"):
        JobModelParams(epochs=(60, 20))
    with pytest.raises(ValueError, match="JobModelParams.minibatch_time_h"):
        JobModelParams(minibatch_time_h=(0.0, 0.05))
    with pytest.raises(ValueError, match="integers"):
        JobModelParams(upload_delay_edge_slots=(1.5, 4))
    with pytest.raises(ValueError, match="slot_s"):
        JobModelParams(slot_s=0)
    with pytest.raises(ValueError, match="models"):
        JobModelParams(models=())


def test_custom_params_and_model_column():
    table = pd.DataFrame(
        {
            "job_id": ["a", "b", "c", "d"],
            "submit_time_s": [0.0, 10.0, 20.0, 20.0],
            "duration_s": [5.0, 5.0, 5.0, 5.0],
            "num_gpus": [1, 2, 4, 8],
            "model": ["lenet", "bert", "ResNet-101", "INCEPTION-BN"],
        }
    )
    params = JobModelParams(
        epochs=(5, 5),
        minibatch_time_h=(0.01, 0.01),
        ps_update_ms=(0.0, 0.0),
        grad_size_mb=(1.0, 1.0),
        upload_delay_edge_slots=(0, 0),
        upload_delay_cloud_slots=(3, 3),
    )
    jobs = make(table, params=params, num_edge_servers=0, horizon_slots=2)
    assert jobs.model[0] == 3 and jobs.model[2] == 1 and jobs.model[3] == 5
    assert jobs.num_chunks[0] == 115 and jobs.num_chunks[2] == 27
    assert set(jobs.epochs) == {5} and set(jobs.upload_delay_cloud_slots) == {3.0}
    assert jobs.upload_delay_edge_slots.shape == (4, 0)
    np.testing.assert_array_equal(jobs.arrival_slots, [0, 1, 2, 2])
    # the unmatched row ("bert") is sampled; the RNG stream does not depend on the matches
    other = make(table.assign(model="bert"), params=params, num_edge_servers=0, horizon_slots=2)
    assert other.model[1] == jobs.model[1]
    np.testing.assert_array_equal(other.worker_type, jobs.worker_type)
    own = (ModelSpec("Tiny", "Toy", 2, 3),)
    tiny = make(table, params=dataclasses.replace(params, models=own))
    assert set(tiny.num_chunks) == {2} and set(tiny.batches_per_chunk) == {3} and set(tiny.model) == {0}


def test_real_philly_window(philly_table):
    jobs = make(philly_table, num_jobs=300, start_index=1000, horizon_slots=200, num_edge_servers=100)
    assert jobs.num_jobs == 300 and jobs.num_edge_servers == 100
    assert jobs.arrival_slots[-1] == 200
    np.testing.assert_array_equal(jobs.num_gpus, philly_table["num_gpus"].iloc[1000:1300])


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=40),
    start=st.floats(0, 1e7, allow_nan=False),
    horizon=st.one_of(st.none(), st.floats(0, 1000, allow_nan=False)),
)
def test_arrival_slots_properties(gaps, start, horizon):
    t = start + np.cumsum(gaps)
    slots = arrival_slots_from_times(t, 3600.0, horizon)
    assert slots.shape == t.shape and slots[0] == 0
    assert np.all(np.diff(slots) >= 0)
    assert np.all(slots == np.floor(slots))
    if horizon is not None:
        assert slots.max() <= np.floor(horizon + 1e-9)
        if t[-1] > t[0]:
            assert slots[-1] == np.floor(horizon + 1e-9)
