"""Differential tests of HeteroML-v1's fourth round of step shortcuts against the paths they replace.

* ``HeteroMLEnv._step_direct`` with its Python trimmed (``_lean = True``) against ``_step_direct_ref`` (``_lean =
  False``), and ``action_masks``'s cached-mask shortcut against ``_grid_mask``: whole random-legal episodes of the
  v1 ids (tiny and RA presets too, and two v0 presets, which never take the direct path) in lockstep:
  observations, masks, rewards, infos, episode metrics and the committed schedule ``==``, >= 1,000 v1 steps of
  which >= 800 through the trimmed path, an invalid action every 11th step (the path it leaves to
  ``_commit_step``).
"""

from __future__ import annotations

import numpy as np

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
