"""Shared test fixtures. Helpers live in the packages (e.g. :mod:`edgegym.families.edge_cloud.testing`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgegym.workloads import default_trace_dir


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def trace_file(*parts: str) -> Path:
    """The path of a real trace file under the shared trace folder, or skip the test with a reason.

    The folder is ``$EDGEGYM_TRACE_DIR`` or ``../shared/traces`` beside the checkout; users without it
    see these tests skipped, never failed.
    """
    root = default_trace_dir()
    if root is None:
        pytest.skip("real traces not available: set EDGEGYM_TRACE_DIR to the trace folder")
    p = root.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{'/'.join(parts)} not found under {root} (set EDGEGYM_TRACE_DIR to the trace folder)")
    return p


@pytest.fixture
def need_trace():
    """``need_trace("philly_pollux", "philly.csv.gz") -> Path`` (skips the test when absent)."""
    return trace_file
