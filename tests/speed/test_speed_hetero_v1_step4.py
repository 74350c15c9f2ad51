"""Differential tests of HeteroML-v1's fourth round of step shortcuts against the paths they replace.

* ``HeteroMLEnv._step_direct`` with its Python trimmed (``_lean = True``) against ``_step_direct_ref`` (``_lean =
  False``), and ``action_masks``'s cached-mask shortcut against ``_grid_mask``: whole random-legal episodes of the
  v1 ids (tiny and RA presets too, and two v0 presets, which never take the direct path) in lockstep:
  observations, masks, rewards, infos, episode metrics and the committed schedule ``==``, >= 1,000 v1 steps of
  which >= 800 through the trimmed path, an invalid action every 11th step (the path it leaves to
  ``_commit_step``).
* ``_kernels.grid_estimates_on`` with its per-test helpers written out against ``grid_estimates_on_ref`` (the
  helpers called) at >= 1,000 decision states: status, starts, durations and the caller's cache ``==``.
* ``_kernels.job_grid`` with the spread PS type written out against ``job_grid_ref`` on 1,200 jobs of drawn v1
  instances: configurations, mask and feasibility cache ``==``.
"""

from __future__ import annotations

import numpy as np

from edgegym.families.hetero_ml import _kernels
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.testing import lockstep_episode


class _Reference(HeteroMLEnv):
    """The env with this round's shortcuts off: the untrimmed direct step and ``action_masks`` as before."""

    _lean = False

    def action_masks(self) -> np.ndarray:
        if self._inst is None:
            raise RuntimeError("call reset() before action_masks()")
        if self.slot_driven:
            return np.ones(1, dtype=bool)
        return self._grid_mask()


class _Counted(HeteroMLEnv):
    """The env as shipped, counting the steps the trimmed :meth:`HeteroMLEnv._step_direct` took."""

    direct = 0

    def _step_direct(self, act):
        got = super()._step_direct(act)
        _Counted.direct += got is not None
        return got


def test_trimmed_step_equals_the_reference():
    steps = {}
    _Counted.direct = 0
    for preset, seed, jobs in (("ps-v1", 40, None), ("tiny-v1", 41, None), ("rl-hard-v1", 42, 80), ("ra-v1", 43, 60),
                               ("tiny-ra-v1", 44, None), ("rl-v1", 45, 80), ("ps-v1", 46, None), ("ps", 47, 60),
                               ("tiny", 48, None), ("ps-v1", 49, None), ("ps-v1", 50, None), ("ps-v1", 51, None),
                               ("ps-v1", 52, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        n = lockstep_episode(_Counted(preset, config=cfg), _Reference(preset, config=cfg), seed, invalid_every=11,
                             invalid_at=5)
        steps[preset] = steps.get(preset, 0) + n
    assert sum(n for p, n in steps.items() if p.endswith("v1")) >= 1000, steps
    assert _Counted.direct >= 800, _Counted.direct  # the trimmed path itself was compared (not only its fallback)


def test_action_masks_shortcut_equals_grid_mask():
    """At every decision state of random-legal v1 episodes (and after the episode's end), ``action_masks`` is
    ``_grid_mask`` (the same values, a new array each call)."""
    states = 0
    for preset, seed in (("ps-v1", 60), ("tiny-v1", 61), ("ra-v1", 62), ("ps", 63)):
        env = HeteroMLEnv(preset)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while True:
            got, exp = env.action_masks(), env._grid_mask()
            assert got.dtype == exp.dtype and np.array_equal(got, exp), (preset, env._k)
            assert env._mask_step is None or got is not env._mask_step[1]
            states += 1
            if done:
                break
            _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(got))))
    assert states >= 300, states


def _estimate_inputs(env):
    """``_kernels.grid_estimates_on``'s inputs at the env's pending decision (its configurations and mask, the
    servers' profiles at the decision time)."""
    k, jb, kc = env._k, env.jobs, env._kc
    H, R = kc[0].shape
    now = env._decision_time(k)
    rec = env._rec()
    prof = _kernels.server_profiles(k, now, rec, kc[1], kc[2], kc[6], H, R)
    W = float(jb.epochs[k] * jb.chunks[k] * jb.batches[k])
    return (rec, k, *kc, W, jb.v[k], jb.ps_update[k], float(jb.ra_update[k]), float(jb.grad_mb[k]), now, env._delays,
            *env._job_cfg(), env._grid_mask_shared()), prof


def test_grid_estimates_written_out_equal_the_helpers():
    """``_kernels.grid_estimates_on`` (its per-test helpers written out in the loop) against
    ``grid_estimates_on_ref`` (the helpers called) at >= 1,000 decision states of random-legal episodes: status,
    starts, durations and the caller's cache (``cfree``, ``ccaps``, NaN rows included, carried from state to state
    as the env carries it) ``==``."""
    states = 0
    ones = 0
    for preset, seed in (("ps-v1", 70), ("tiny-v1", 71), ("ra-v1", 72), ("rl-v1", 73), ("rl-hard-v1", 74),
                         ("tiny-ra-v1", 75), ("ps-v1", 76), ("ps-v1", 77), ("ps-v1", 78), ("ps-v1", 79),
                         ("ps-v1", 80), ("ps-v1", 81)):
        env = HeteroMLEnv(preset)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        G, H = env.n_grid, env.H
        cf = [np.full((H, env.R), np.nan), np.zeros((H, env.M))]
        done = False
        while not done:
            args, prof = _estimate_inputs(env)
            got_s, got_d, exp_s, exp_d = (np.full(G, -9, dtype=np.int64) for _ in range(4))
            gf, gc, ef, ec = cf[0].copy(), cf[1].copy(), cf[0].copy(), cf[1].copy()
            st = _kernels.grid_estimates_on(*args, got_s, got_d, gf, gc, *prof)
            st_ref = _kernels.grid_estimates_on_ref(*args, exp_s, exp_d, ef, ec, *prof)
            assert st == st_ref, (preset, env._k)
            if st == 1:
                ones += 1
                assert np.array_equal(got_s, exp_s) and np.array_equal(got_d, exp_d), (preset, env._k)
            assert np.array_equal(gf, ef, equal_nan=True) and np.array_equal(gc, ec), (preset, env._k)
            cf = [gf, gc]
            states += 1
            mask = env.action_masks()
            _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
    assert states >= 1000 and ones >= 900, (states, ones)


def test_job_grid_written_out_equals_the_helper():
    """``_kernels.job_grid`` (the spread PS type written out) against ``job_grid_ref`` on 1,200 jobs of drawn v1
    instances (their chunks and PS update times, the instance's cluster; 1 to 40 chunks): the four configuration
    arrays, the mask and the feasibility cache ``==``."""
    rng = np.random.default_rng(90)
    cases = 0
    for preset in ("ps-v1", "tiny-v1", "ra-v1", "rl-v1", "rl-hard-v1", "tiny-ra-v1"):
        env = HeteroMLEnv(preset)
        for _ in range(4):
            env.reset(seed=int(rng.integers(1 << 30)))
            kc, G = env._kc, env.n_grid
            J = env.jobs.num_jobs
            for k in rng.integers(0, J, 50):
                D = int(env.jobs.chunks[k]) if rng.random() < 0.7 else int(rng.integers(1, 41))
                psu = env.jobs.ps_update[k]
                outs = []
                for fn in (_kernels.job_grid, _kernels.job_grid_ref):
                    cfg = tuple(np.full(G, -9, dtype=np.int64) for _ in range(4))
                    mask = np.zeros(G, dtype=bool)
                    feas = env._feas.copy()
                    fn(D, env._fracs, env.n_delays, *kc[:6], kc[6], kc[7], env._zf, psu, feas, *cfg, mask)
                    outs.append((cfg, mask, feas))
                (c1, m1, f1), (c2, m2, f2) = outs
                assert all(np.array_equal(x, y) for x, y in zip(c1, c2, strict=True)), (preset, k, D)
                assert np.array_equal(m1, m2) and np.array_equal(f1, f2), (preset, k, D)
                cases += 1
    assert cases >= 1200, cases
