"""Hand-made HeteroML instances for tests (hand-computed small instances)."""

from __future__ import annotations

import numpy as np

from .simulator import MS_PER_SLOT, HeteroCluster, HeteroJobs

__all__ = ["hand_cluster", "hand_jobs", "lockstep_episode"]


def hand_cluster(arch: str = "ps", num_servers: int = 1) -> HeteroCluster:
    """Servers (4 GPU, 16 vCPU, 64 GiB, 10 Gbps); one worker type (1, 4, 16, 0.1 Gbps); one PS type (0, 2, 8, 5)."""
    cap = np.tile([4.0, 16.0, 64.0, 10.0], (num_servers, 1))
    return HeteroCluster(
        capacity=cap,
        worker_res=np.array([[1.0, 4.0, 16.0, 0.1]]),
        ps_res=np.array([[0.0, 2.0, 8.0, 5.0]]) if arch == "ps" else np.zeros((1, 4)),
        arch=arch,
    )


def hand_jobs(arrivals=(1,), weights=(1000.0,), update_ms: float = 36.0) -> HeteroJobs:
    """Jobs with E = 2, D = 2, K = 10 (W = 40), v = 0.1 slot, π = 450 MB (2π/b = 0.02 slot at 0.1 Gbps),
    U^p_j = U_j = ``update_ms`` ms (36 ms = 1e-5 slot)."""
    J = len(arrivals)
    return HeteroJobs(
        arrival=np.array(arrivals), weight=np.array(weights, dtype=float), epochs=np.full(J, 2),
        chunks=np.full(J, 2), batches=np.full(J, 10), v=np.full((J, 1), 0.1),
        ps_update=np.full((J, 1), update_ms / MS_PER_SLOT), ra_update=np.full(J, update_ms / MS_PER_SLOT),
        grad_mb=np.full(J, 450.0),
    )


def _same(x, y) -> bool:
    """``x == y``, NaN equal to NaN (an episode metric such as ``ratio_lb`` without a bound)."""
    return x == y or (x != x and y != y)


def lockstep_episode(new, old, seed: int, invalid_every: int = 7, invalid_at: int = 3) -> int:
    """One random-legal episode of two HeteroML envs side by side (a fast path and its reference), every output
    compared with ``==`` (observations, masks, rewards, termination, infos, episode metrics with NaN equal to NaN,
    the return, the committed schedule); every ``invalid_every``-th step (at ``invalid_at``) an unmasked invalid
    action where there is one (both envs map it to a valid one). Returns the number of steps. For the differential
    tests of the family's fast paths."""
    obs, _ = new.reset(seed=seed)
    obs_o, _ = old.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps, done = 0, False
    while not done:
        assert np.array_equal(obs, obs_o), (seed, new._k)
        mask = new.action_masks()
        assert np.array_equal(mask, old.action_masks()), (seed, new._k)
        a = int(rng.choice(np.flatnonzero(mask)))
        if steps % invalid_every == invalid_at:
            bad = np.flatnonzero(~mask)
            a = int(bad[0]) if bad.size else a
        obs, r, done, trunc, info = new.step(a)
        obs_o, r_o, done_o, trunc_o, info_o = old.step(a)
        assert r == r_o and done == done_o and trunc == trunc_o, (seed, new._k)
        assert info.keys() == info_o.keys(), (seed, new._k)
        for key, val in info.items():
            if key == "episode_metrics":
                assert val.keys() == info_o[key].keys()
                for m, x in val.items():
                    assert _same(x, info_o[key][m]), (seed, m, x, info_o[key][m])
            else:
                assert val == info_o[key], (seed, new._k, key)
        steps += 1
    assert np.array_equal(obs, obs_o)
    assert new.episode_return() == old.episode_return()
    for name in ("start", "duration", "worker_type", "ps_type", "workers", "ps", "colocated"):
        assert np.array_equal(getattr(new.sim, name), getattr(old.sim, name)), name
    return steps
