"""Fixtures for the workloads tests: the shared trace folder (tests skip cleanly without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgegym.workloads import default_trace_dir


@pytest.fixture(scope="session")
def trace_dir() -> Path:
    """The shared traces folder (``$EDGEGYM_TRACE_DIR`` or ``<repo>/../shared/traces``), else skip."""
    root = default_trace_dir()
    if root is None:
        pytest.skip("shared trace folder not found (set EDGEGYM_TRACE_DIR)")
    return root


def _trace_file(root: Path, relative: str) -> Path:
    path = root / relative
    if not path.is_file():
        pytest.skip(f"trace file {relative} not found under {root} (set EDGEGYM_TRACE_DIR to the trace folder)")
    return path


@pytest.fixture(scope="session")
def philly_file(trace_dir: Path) -> Path:
    return _trace_file(trace_dir, "philly_pollux/philly.csv.gz")


@pytest.fixture(scope="session")
def itp_raw_file(trace_dir: Path) -> Path:
    return _trace_file(trace_dir, "microsoft_itp/raw-traces.tar.gz")


@pytest.fixture(scope="session")
def itp_elasticflow_file(trace_dir: Path) -> Path:
    return _trace_file(trace_dir, "microsoft_itp/elasticflow-traces.tar.gz")


@pytest.fixture(scope="session")
def google_window_file(trace_dir: Path) -> Path:
    return _trace_file(trace_dir, "google_2011/google2011_jobs_window.csv.gz")


@pytest.fixture(scope="session")
def google_summary_file(trace_dir: Path) -> Path:
    return _trace_file(trace_dir, "google_2011/google2011_job_summary.csv.gz")


@pytest.fixture(scope="session")
def philly_table(philly_file: Path):
    """The Philly trace as a canonical table (loaded once per session)."""
    from edgegym.workloads import load_philly

    return load_philly(philly_file)


@pytest.fixture
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point EDGEGYM_TRACE_DIR and EDGEGYM_CACHE at empty folders; returns the tmp root."""
    traces, cache = tmp_path / "traces", tmp_path / "cache"
    traces.mkdir()
    cache.mkdir()
    monkeypatch.setenv("EDGEGYM_TRACE_DIR", str(traces))
    monkeypatch.setenv("EDGEGYM_CACHE", str(cache))
    return tmp_path
