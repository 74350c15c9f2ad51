"""WirelessUDL's latency table: ``_episode.lat_exp_args_fast`` (a division only where a window end drops by more
than one) against ``lat_exp_args`` (one per entry, the reference), ``==`` on every output."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import edgegym  # noqa: F401  (registers the ids)
from edgegym.families.wireless_udl import _episode as ep
from edgegym.families.wireless_udl import candidates as cands


def _same(a, b):
    """Both kernels' ``(L, x, start)`` equal element by element (and in dtype and shape)."""
    for u, v in zip(a, b, strict=True):
        assert u.dtype == v.dtype and u.shape == v.shape
        assert np.array_equal(u, v)


def test_fast_equal_reference_random_jobs():
    """2,000 random job sets (tot 0 … 10^6, κ 1 … 500, n_max 1 … 300, kinds 0-3, offsets -3 … 5, rates) give
    the same L, x and start; 40,000+ jobs in all."""
    rng = np.random.default_rng(7)
    jobs = 0
    for _ in range(2000):
        nj = int(rng.integers(0, 40))
        jobs += nj
        tot = rng.integers(0, 10 ** int(rng.integers(1, 7)), nj).astype(np.int64)
        kap = rng.integers(1, 500, nj).astype(np.int64)
        n_max = rng.integers(1, 300, nj).astype(np.int64)
        kind = rng.integers(0, 4, nj).astype(np.int64)
        c = rng.uniform(-5, 200, nj)
        rate = float(rng.choice([0.0, 0.01, 0.3, 5.0, 900.0]))
        offset = int(rng.integers(-3, 6))
        _same(ep.lat_exp_args_fast(tot, kap, n_max, kind, c, rate, offset),
              ep.lat_exp_args(tot, kap, n_max, kind, c, rate, offset))
    assert jobs > 30000


@pytest.mark.parametrize("env_id", ["WirelessUDL-v0", "WirelessUDL-v1"])
def test_latency_table_flag_on_off(env_id, monkeypatch):
    """The latency tables of 30 episodes' instances (3,000 jobs) are == with the flag on and off, and a short
    stepped episode gives == observations, rewards and masks."""
    env = gym.make(env_id).unwrapped
    for seed in range(30):
        env.reset(seed=seed)
        sim = env.sim
        outs = []
        for flag in (True, False):
            monkeypatch.setattr(cands, "_LAT_FAST", flag)
            sim.cand_cache = None
            outs.append(cands._job_table(sim)[2])
        assert np.array_equal(outs[0], outs[1])

    def run(flag):
        monkeypatch.setattr(cands, "_LAT_FAST", flag)
        e = gym.make(env_id).unwrapped
        obs, _ = e.reset(seed=5)
        rng = np.random.default_rng(1)
        rec = [obs]
        for _ in range(150):
            m = e.action_masks()
            obs, r, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(m))))
            rec += [obs, r, m]
            if term or trunc:
                obs, _ = e.reset(seed=int(rng.integers(100)))
                rec.append(obs)
        return rec

    a, b = run(True), run(False)
    assert len(a) == len(b)
    for u, v in zip(a, b, strict=True):
        assert np.array_equal(u, v)
