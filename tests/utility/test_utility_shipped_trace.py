"""EdgeUtility's default workload is the same on every machine: the Google 2011 window table ships inside the
package, so with the traces hidden (a fresh machine) the default preset reads it, warns nothing, and gives the
same episode as with the shared trace folder. Also: a cloud-only cluster (no edge server) is a valid config."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.runner import run_episode

import edgegym  # (registers the envs)
from edgegym.families.edge_utility.env import EdgeUtilityEnv
from edgegym.families.edge_utility.presets import (
    capacity_jobs_per_s,
    load_utility_preset,
    offered_load,
    utility_preset_from_dict,
)
from edgegym.workloads import SHIPPED_TRACE_DIR, default_trace_dir

WINDOW = "google2011_jobs_window.csv.gz"


def _shared_window_dir():
    """The shared folder holding the real window table (looked up before any monkeypatch), or None."""
    root = default_trace_dir()
    return root / "google_2011" if root is not None and (root / "google_2011" / WINDOW).is_file() else None


SHARED = _shared_window_dir()


@pytest.fixture
def traces_hidden(tmp_path, monkeypatch):
    """A fresh machine: an empty trace folder, no ../shared lookup, an empty download cache."""
    monkeypatch.setenv("EDGEGYM_TRACE_DIR", str(tmp_path / "traces"))
    monkeypatch.setenv("EDGEGYM_NO_SHARED", "1")
    monkeypatch.setenv("EDGEGYM_CACHE", str(tmp_path / "cache"))
    (tmp_path / "traces").mkdir()
    assert default_trace_dir() == tmp_path / "traces"
    return tmp_path


def _episode(env_id, seed, config=None):
    """Release times, processing times and the o4a episode record (wall-clock entries dropped)."""
    env = gym.make(env_id, config=config) if config else gym.make(env_id)
    env.reset(seed=seed)
    jobs = env.unwrapped.jobs
    arrays = (jobs.release_s.copy(), jobs.p_s.copy())
    env.close()
    rec = run_episode(env_id, "o4a", seed, config)
    return arrays, {k: v for k, v in rec.items() if k not in ("wall_s", "decisions_per_s")}


def test_shipped_window_is_package_data():
    path = SHIPPED_TRACE_DIR / WINDOW
    assert path.is_file() and path.stat().st_size <= 1_000_000  # 275,603 B
    if SHARED is not None:
        assert path.read_bytes() == (SHARED / WINDOW).read_bytes()


def test_shipped_window_is_listed_as_package_data():
    """A wheel holds only what ``[tool.setuptools.package-data]`` lists: the window table must match it."""
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("not a source checkout")
    data = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["package-data"]["edgegym"]
    package = Path(edgegym.__file__).parent
    listed = {p for pattern in data for p in package.glob(pattern)}
    assert SHIPPED_TRACE_DIR / WINDOW in listed
    assert "pooch" in " ".join(tomllib.loads(pyproject.read_text())["project"]["dependencies"])


def test_every_default_preset_needs_only_the_shipped_table():
    """No shipped EdgeUtility preset reads the (unshipped) summary table."""
    from edgegym.families.edge_utility.presets import list_utility_presets

    for name in list_utility_presets():
        w = load_utility_preset(name).workload
        assert w.source != "google2011" or (w.google_table == "window" and w.trace_dir is None), name


def test_default_preset_without_traces_reads_the_shipped_file_and_warns_nothing(traces_hidden):
    env = gym.make("EdgeUtility-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the old "trace is absent ... synthetic" notice
        env.reset(seed=100)
    assert env.unwrapped._workload_source == "google2011"
    r = env.unwrapped.jobs.release_s
    w = env.unwrapped.preset.workload
    assert r.size == w.num_jobs and r[0] == 0 and np.sum(np.diff(r) == 0) > 0  # trace bursts, not Poisson
    env.close()


@pytest.mark.skipif(SHARED is None, reason="the shared Google 2011 trace folder is absent")
def test_shipped_file_gives_the_real_trace_episode(traces_hidden, monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the old absent-trace notice is a UserWarning
        hidden_arrays, hidden = _episode("EdgeUtility-v0", 101)
    # the same episode read from the shared folder, named explicitly
    shared_arrays, shared = _episode("EdgeUtility-v0", 101, {"workload": {"trace_dir": str(SHARED.parent)}})
    for a, b in zip(hidden_arrays, shared_arrays, strict=True):
        np.testing.assert_array_equal(a, b)
    assert hidden == shared and hidden["workload_source"] == "google2011"


def test_explicit_trace_dir_without_the_table_is_an_error_not_the_shipped_copy(traces_hidden):
    env = EdgeUtilityEnv("testbed", config={"workload": {"num_jobs": 30, "trace_dir": str(traces_hidden)}})
    with pytest.raises(FileNotFoundError, match="never falls back"):
        env.reset(seed=0)


# ------------------------------------------------------------------------------------ cloud-only cluster

CLOUD_ONLY = {"servers": {"edge_counts": [0, 0], "cloud": True}}


def test_cloud_only_cluster_runs_a_full_episode():
    """Before: ZeroDivisionError in the preset's offered-load computation at the last step."""
    env = gym.make("EdgeUtility-tiny-v0", config=CLOUD_ONLY)
    env.reset(seed=64000)
    done, steps, total = False, 0, 0.0
    while not done:
        mask = env.unwrapped.action_masks()
        _, r, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        total += r
        steps += 1
        done = term or trunc
    m = info["episode_metrics"]
    assert steps == 40 and m["cloud_jobs"] == 40 and m["edge_jobs"] == 0
    assert m["offered_load"] == 0.0  # no server where a job can queue: nothing is loaded (finite, documented)
    assert m["total_utility"] == pytest.approx(total)
    env.close()


def test_cloud_only_offered_load_and_load_key():
    p = utility_preset_from_dict({**load_utility_preset("tiny").to_dict(), **CLOUD_ONLY})
    assert capacity_jobs_per_s(p) == 0.0 and offered_load(p) == 0.0
    # a finite cloud has a capacity: the load is defined again
    finite = utility_preset_from_dict({**p.to_dict(), "scheduler": {**p.to_dict()["scheduler"], "cloud": "same"}})
    assert capacity_jobs_per_s(finite) > 0 and offered_load(finite) > 0
    # workload.load is relative to that capacity: with none it cannot be met, so it is refused, naming the key
    with pytest.raises(ValueError, match="workload.load"):
        gym.make("EdgeUtility-tiny-v0", config={**CLOUD_ONLY, "workload": {"load": 0.8}})
