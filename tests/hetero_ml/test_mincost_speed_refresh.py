"""The compiled derived arrays of a sub-round state (``_refresh_tables``) equal the whole-array numpy ones.

Differential: ``SubRound.compiled = True`` against ``False`` on random partly used windows of tiny and v0-sized
clusters, at construction and after a chain of commits (partial refreshes of the touched servers), bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.hetero_ml.instance import build_instance
from edgegym.families.hetero_ml.mincost import SubRound, mincost, price_base
from edgegym.families.hetero_ml.presets import load_preset

FIELDS = ("delta", "omega", "Aw", "Ap", "st", "cst")


def _pair(c, tau, lam, used):
    out = []
    for compiled in (True, False):
        SubRound.compiled = compiled
        try:
            out.append(SubRound(c, tau, 1, lam, init_used=used))
        finally:
            SubRound.compiled = True
    return out


def _assert_same(a, b, where):
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape, (where, f)
        assert np.array_equal(x, y), (where, f, float(np.abs(x - y).max()))


@pytest.mark.parametrize(
    "name,seeds,taus",
    [("tiny", range(40), [1, 2, 3, 4, 8, 17]), ("ps", range(4), [12, 24, 33]), ("ra", range(3), [12, 24])],
)
def test_compiled_refresh_equals_numpy_refresh(name, seeds, taus):
    p = load_preset(name)
    checked = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        inst = build_instance(p, rng)
        c = inst.cluster
        tau = int(rng.choice(taus))
        used = rng.uniform(0, 1, size=(c.num_servers, c.num_resources, tau)) * c.capacity[:, :, None]
        used *= rng.uniform(0.2, 1)
        used[rng.uniform(size=used.shape) < 0.3] = 0.0
        lam = price_base(150, c.num_servers, c.num_resources, 10.0) if rng.uniform() < 0.5 else 1e3
        a, b = _pair(c, tau, lam, used)
        _assert_same(a, b, (name, seed, "built"))
        for j in rng.permutation(inst.jobs.num_jobs)[:6]:
            cand = mincost(a, inst.jobs, int(j), 1e12, "earliest_completion")
            if cand is None:
                continue
            a.commit(cand)
            SubRound.compiled = False
            try:
                b.commit(cand)
            finally:
                SubRound.compiled = True
            _assert_same(a, b, (name, seed, "commit", int(j)))
            checked += 1
    assert checked > 0
