"""Rendering of edgegym envs (lazy matplotlib import; ``pip install edgegym[plot]``)."""

from __future__ import annotations

import numpy as np

__all__ = ["render_gantt"]


def render_gantt(env) -> np.ndarray:
    """Gantt chart of the executed (and, before the end, planned) work on each edge worker, as RGB uint8."""
    raise NotImplementedError("render_gantt is being implemented")
