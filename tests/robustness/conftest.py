"""The robustness tests' folder: its helper module on the path, Gymnasium's version notes silenced."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _quiet_gym_warnings():
    """Gymnasium's deprecation notes on older preset versions are expected here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*out of date.*")
        yield
