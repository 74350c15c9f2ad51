"""Differential tests of HeteroML-v1's fifth round of step shortcuts against the paths they replace.

* ``HeteroMLEnv._step_direct`` calling ``_kernels.commit_prepare``'s and ``_kernels.observation``'s compiled entry
  points directly (``_direct_entry = True``) against the dispatchers (``_direct_entry = False``): whole random-legal
  episodes of the v1 ids (tiny, RA and hard presets too, and a v0 preset, which never takes the direct path) in
  lockstep: observations, masks, rewards, infos, episode metrics and the committed schedule ``==``, >= 1,000 v1
  steps of which >= 800 through the entry points, each call's arguments asserted to have the fingerprints the entry
  was looked up with (``_check_entry``); an invalid action every 11th step.
* Forks taken mid-episode (quick and generic) look their own entries up and step as the reference's forks do.
"""

from __future__ import annotations

import numpy as np

from edgegym.families.hetero_ml import env as env_mod
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.fork import fork, quick_forkable
from edgegym.families.hetero_ml.testing import lockstep_episode


class _Reference(HeteroMLEnv):
    """The env with the kernels called through Numba's dispatchers."""

    _direct_entry = False


class _Checked(HeteroMLEnv):
    """The env as shipped, asserting each entry call's argument fingerprints and counting the entry calls."""

    _check_entry = True
    calls = [0, 0]


def _count(monkeypatch):
    """Count the calls of :func:`env._check_fingerprints` (one per entry call: commit, then observation)."""
    orig = env_mod._check_fingerprints

    def counted(entry, args):
        _Checked.calls[len(args) < 40] += 1  # commit_prepare takes 50+ arguments, observation 28
        orig(entry, args)

    monkeypatch.setattr(env_mod, "_check_fingerprints", counted)


def test_entry_points_equal_the_dispatchers(monkeypatch):
    _count(monkeypatch)
    _Checked.calls = [0, 0]
    steps = {}
    for preset, seed, jobs in (("ps-v1", 70, None), ("tiny-v1", 71, None), ("rl-hard-v1", 72, 80), ("ra-v1", 73, 60),
                               ("tiny-ra-v1", 74, None), ("rl-v1", 75, 80), ("ps-v1", 76, None), ("ps", 77, 60),
                               ("ps-v1", 78, None), ("ps-v1", 79, None), ("ps-v1", 80, None), ("ps-v1", 81, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        n = lockstep_episode(_Checked(preset, config=cfg), _Reference(preset, config=cfg), seed, invalid_every=11,
                             invalid_at=5)
        steps[preset] = steps.get(preset, 0) + n
    assert sum(n for p, n in steps.items() if p.endswith("v1")) >= 1000, steps
    assert _Checked.calls[0] >= 800 and _Checked.calls[1] >= 800, _Checked.calls


def _step_both(a, b, rng, n):
    """``n`` random-legal steps of ``a`` and ``b`` in lockstep, every output ``==``."""
    for _ in range(n):
        mask = a.action_masks()
        assert np.array_equal(mask, b.action_masks())
        act = int(rng.choice(np.flatnonzero(mask)))
        oa, ra, da, _, ia = a.step(act)
        ob, rb, db, _, ib = b.step(act)
        assert np.array_equal(oa, ob) and ra == rb and da == db
        assert {k: v for k, v in ia.items() if k != "episode_metrics"} == {
            k: v for k, v in ib.items() if k != "episode_metrics"}
        if da:
            return


def test_forks_look_up_their_own_entries(monkeypatch):
    _count(monkeypatch)
    for future, cls in (("resample", HeteroMLEnv), ("keep", HeteroMLEnv), ("resample", _Checked)):
        new, ref = cls("ps-v1"), _Reference("ps-v1")
        new._check_entry = True
        new.reset(seed=90)
        ref.reset(seed=90)
        rng = np.random.default_rng(90)
        _step_both(new, ref, rng, 12)
        assert new._entry is not None and new._entry[2] is not None
        # the entries are shared, not a reason for the generic copy (a subclass takes the generic copy)
        assert quick_forkable(new) == (cls is HeteroMLEnv)
        f_new, f_ref = fork(new, seed=3, future=future), fork(ref, seed=3, future=future)
        _step_both(f_new, f_ref, np.random.default_rng(5), 15)
        assert f_new._entry[0] is f_new.sim and new._entry[0] is new.sim
        _step_both(new, ref, rng, 15)  # the original goes on as before
