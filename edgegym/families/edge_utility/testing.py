"""Helpers for the EdgeUtility tests (random instances for the differential tests of the compiled kernels)."""

from __future__ import annotations

import numpy as np

from .utility_fn import aon, constant, linear, sigmoid, step

__all__ = ["random_utility"]


def random_utility(rng: np.random.Generator):
    """A utility function of a random kind (linear, all-or-nothing, sigmoid, constant, step, or a sigmoid whose
    exponent saturates), with random parameters drawn from ``rng``."""
    f = int(rng.integers(6))
    if f == 0:
        return linear(rng.uniform(1, 5), rng.uniform(5, 20))
    if f == 1:
        return aon(rng.uniform(1, 100), rng.uniform(0.5, 5), inclusive=bool(rng.random() < 0.3))
    if f == 2:
        return sigmoid(rng.uniform(1, 10), rng.uniform(50, 100), rng.uniform(0.5, 5))
    if f == 3:
        return constant(rng.uniform(0, 10))
    if f == 4:
        br = np.cumsum(rng.uniform(0.2, 2, size=int(rng.integers(1, 4))))
        return step(br, np.sort(rng.uniform(0, 10, size=br.size + 1))[::-1])
    return sigmoid(rng.uniform(200, 400), 10.0, 0.1)  # saturating exponent (x > 700 branch)
