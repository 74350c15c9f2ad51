"""Shared builders for the EdgeUtility tests (not a test module)."""

from __future__ import annotations

import numpy as np

from edgegym.families.edge_utility.simulator import O4AParams, UtilityJobs, UtilitySimulator
from edgegym.families.edge_utility.utility_fn import aon, constant, linear, sigmoid, unit_sigmoid


def single_server_jobs(release, p, utilities, up=None, down=None) -> UtilityJobs:
    """Jobs on one server (one column), estimates = truth."""
    P = np.asarray(p, dtype=float).reshape(-1, 1)
    U = np.zeros_like(P) if up is None else np.asarray(up, dtype=float).reshape(-1, 1)
    D = np.zeros_like(P) if down is None else np.asarray(down, dtype=float).reshape(-1, 1)
    return UtilityJobs(np.asarray(release, dtype=float), P, U, D, P, U, D, tuple(utilities))


FIG2_P = (8.0, 10.0, 12.0)
FIG2_G = (constant(1.0), unit_sigmoid(14.0), aon(1.0, 25.0, inclusive=True))


def fig2(order, speed=1.0, mode="speed_consistent", fallback="density", record=False):
    """Paper Fig. 2 on one server, jobs released at 0 in ``order`` (indices into j1, j2, j3)."""
    jobs = single_server_jobs(np.zeros(3), [FIG2_P[i] for i in order], [FIG2_G[i] for i in order])
    sim = UtilitySimulator(jobs, 1, False, "o4a", speed=speed, o4a=O4AParams(tentative_mode=mode, fallback=fallback),
                           record=record)
    for k in range(3):
        sim.dispatch(k, 0)
    sim.drain()
    return sim


def random_jobs(rng, J=12, S=3, cloud=True, delta=0.0, mix=("linear", "aon", "sigmoid")) -> UtilityJobs:
    """A small random instance with integer-ish times (seconds), a cloud column last when ``cloud``."""
    M = S + int(cloud)
    release = np.sort(rng.integers(0, 6, size=J)).astype(float) * 0.5
    p = rng.uniform(0.2, 2.0, size=(J, M))
    up = rng.uniform(0.0, 0.3, size=(J, M))
    down = up.copy()
    utils = []
    for _ in range(J):
        f = mix[rng.integers(len(mix))]
        if f == "linear":
            utils.append(linear(rng.uniform(1, 5), rng.uniform(5, 20)))
        elif f == "aon":
            utils.append(aon(rng.uniform(1, 100), rng.uniform(0.5, 5)))
        else:
            utils.append(sigmoid(rng.uniform(1, 10), rng.uniform(50, 100), rng.uniform(0.5, 5)))
    z = rng.uniform(-1, 1, size=(3, J, M))
    return UtilityJobs(release, p * (1 + delta * z[0]), up * (1 + delta * z[1]), down * (1 + delta * z[2]), p, up,
                       down, tuple(utils))
