"""Differential tests of HeteroML's second round of step shortcuts against the paths they replace.

* :meth:`HeteroMLEnv.step`'s one compiled call for a v1 step (``_kernels.commit_prepare``: the commit of the pending
  job and the next job's rows) equals the two calls it replaces (``_fuse = False``): observations, action masks,
  rewards, infos (the episode metrics included), terminations and the committed schedule, in lockstep over whole
  random-legal episodes of the v0 and v1 ids (tiny presets too), >= 1,000 steps in all;
* ``_kernels._ps_type_spread`` (a spread configuration's PS type, each type's value computed once) equals
  ``_kernels.ps_type`` on >= 1,000 random cases, ties of the values and of the update times included.
"""

from __future__ import annotations

import numpy as np

from edgegym.families.hetero_ml import _kernels
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.testing import lockstep_episode


class _TwoCalls(HeteroMLEnv):
    """The env with the step's commit and the next job's rows in two compiled calls (the path before)."""

    _fuse = False


def _lockstep(new, old, seed) -> int:
    """:func:`~edgegym.families.hetero_ml.testing.lockstep_episode` with an invalid action every 7th step."""
    return lockstep_episode(new, old, seed, invalid_every=7, invalid_at=3)


def test_fused_step_equals_two_calls():
    steps = {}
    for preset, seed, jobs in (("ps-v1", 0, None), ("tiny-v1", 1, None), ("rl-hard-v1", 2, None), ("ra-v1", 3, 60),
                               ("tiny-ra-v1", 4, None), ("rl-v1", 5, None), ("ps-v1", 6, None), ("ps", 7, 60),
                               ("tiny", 8, None), ("ps-v1", 9, None), ("tiny-v1", 10, None), ("ps-v1", 11, None),
                               ("rl-v1", 12, None), ("ps-v1", 13, None), ("ps-v1", 14, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        n = _lockstep(HeteroMLEnv(preset, config=cfg), _TwoCalls(preset, config=cfg), seed)
        steps[preset] = steps.get(preset, 0) + n
    assert sum(n for p, n in steps.items() if p.endswith("v1")) >= 1000, steps


def test_ps_type_spread_equals_ps_type():
    rng = np.random.default_rng(21)
    ties = 0
    for case in range(1500):
        M, P = int(rng.integers(1, 9)), int(rng.integers(1, 11))
        wbw = rng.choice([1.0, 2.5, 5.0, 10.0], M)
        pbw = rng.choice([5.0, 10.0, 25.0], P)
        zf = rng.choice([0.5, 1.0, 1.5], P) if case % 2 else rng.random(P)  # equal values: ties
        psu = rng.choice([0.1, 0.2], P) if case % 3 == 0 else rng.random(P)  # equal update times: ties
        n, m = int(rng.integers(1, 65)), int(rng.integers(0, M))
        exp = _kernels.ps_type(n, m, True, wbw, pbw, zf, psu)
        got = _kernels._ps_type_spread(n, m, wbw, pbw, zf, psu, np.empty(P))
        assert got == exp, (case, n, m)
        s = np.maximum(1.0, np.ceil(n * wbw[m] / pbw - 1e-9)) * zf
        ties += int(np.sum(s == s.min()) > 1)
    assert ties >= 100, ties
