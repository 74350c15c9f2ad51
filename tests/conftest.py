"""Shared test fixtures. Helpers live in :mod:`edgegym.testing` (importable from any test directory)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
