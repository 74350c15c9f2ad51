"""``earliest``'s compiled choice with the per-segment bounds against the search that tests every configuration.

``_advance.earliest_choice`` skips the tests that the per-segment bounds of the residual (``_kernels._segments``)
exclude; ``_advance.earliest_choice_scan`` makes every test and is the oracle. On more than 1,000 decision states
(``earliest``'s own episodes, episodes with random legal actions and their delays, the PS and the Ring-AllReduce
presets, the rl-hard preset's crowded cluster), both return the same ``(status, action, start, duration)``, with a
fresh cache and with the env's warm cache (each its own copy), and the bounds' cache writes leave every later
choice unchanged.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.baselines.hetero_ml import Earliest

import edgegym  # noqa: F401  (registers the envs)
from edgegym.families.hetero_ml import _advance, _kernels

CASES = (("HeteroML-v1", 0, 0.0), ("HeteroML-v1", 1, 0.4), ("HeteroML-v1", 6, 0.7), ("HeteroML-ps-v1", 7, 0.1),
         ("HeteroML-ra-v1", 2, 0.2), ("HeteroML-ra-v1", 8, 0.6), ("HeteroML-rl-hard-v1", 3, 0.0),
         ("HeteroML-rl-hard-v1", 4, 0.5), ("HeteroML-v0", 5, 1.0))


def _choice_args(env) -> tuple:
    """``earliest_choice``'s arguments on ``env``'s pending job, without the cache and the profiles, and the
    profiles at the decision time."""
    k = env._k
    now = env._decision_time(k)
    jb, kc = env.jobs, env._kc
    m4, n4, q4, p4 = env._job_cfg()
    mask = env._grid_mask_shared()
    W = float(jb.epochs[k] * jb.chunks[k] * jb.batches[k])
    H, R = kc[0].shape
    prof = _kernels.server_profiles(k, now, env._rec(), kc[1], kc[2], kc[6], H, R)
    args = (env._rec(), k, *kc, W, jb.v[k], jb.ps_update[k], float(jb.ra_update[k]), float(jb.grad_mb[k]), now,
            env._delays, m4, n4, q4, p4, mask)
    return args, prof


@pytest.mark.parametrize(("env_id", "seed", "p_random"), CASES)
def test_bounded_choice_equals_the_scan(env_id, seed, p_random):
    """Every decision state of one episode (``earliest``'s actions, or random legal ones with probability
    ``p_random``): the same choice as the oracle, with a fresh cache and with the warm one."""
    env = gym.make(env_id).unwrapped
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    H, M = env._kc[0].shape[0], env._kc[1].shape[0]
    R = env._kc[0].shape[1]
    warm_free, warm_caps = np.full((H, R), np.nan), np.zeros((H, M))
    checked = searched = 0
    for _ in range(env.jobs.num_jobs - 1):
        args, prof = _choice_args(env)
        fresh = [(np.full((H, R), np.nan), np.zeros((H, M))) for _ in range(2)]
        warm = [(warm_free.copy(), warm_caps.copy()) for _ in range(2)]
        for (f1, c1), (f2, c2) in (fresh, warm):
            got = _advance.earliest_choice(*args, f1, c1, *prof)
            ref = _advance.earliest_choice_scan(*args, f2, c2, *prof)
            assert tuple(got) == tuple(ref), (env._k, got, ref)
        warm_free, warm_caps = warm[0]  # the bounded search's cache goes on to the next state
        checked += 1
        searched += int(prof[1].sum() > H)  # some server is busy: the search has candidates after now
        if rng.random() < p_random:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
        else:
            a = Earliest(env).act(None)
        env.step(a)
    assert checked >= 49 and searched > checked // 2


def test_enough_states():
    """The cases above cover more than 1,000 decision states."""
    assert sum(gym.make(e).unwrapped.preset.workload.num_jobs - 1 for e, _, _ in CASES) >= 1000
