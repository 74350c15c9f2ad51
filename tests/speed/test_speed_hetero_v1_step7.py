"""Differential tests of HeteroML-v1's seventh round of step shortcuts against the paths they replace.

* ``HeteroMLEnv._step_direct`` handing the episode's fixed arguments of ``_kernels.commit_prepare`` to
  ``_packed.commit_packed`` in one ``EpisodeArgs`` (``_packed = True``) against the full argument list through the
  entry point (``_packed = False``) and through the dispatcher (``_direct_entry = False``): whole random-legal
  episodes of the v1 ids (tiny, RA and hard presets too, and a v0 preset, which never takes the direct path) in
  lockstep: observations, masks, rewards, infos, episode metrics and the committed schedule ``==``, >= 1,000 v1
  steps of which >= 800 through the packed entry, each asserting that the ``EpisodeArgs`` holds the env's own
  current objects and that the full argument list has the fingerprints the entry was looked up with; an invalid
  action every 11th step.
* Forks taken mid-episode (quick and generic) build their own ``EpisodeArgs`` and step as the reference's forks do;
  the original goes on with its own.
* The observation through ``_packed.observation_packed`` on the same struct (>= 800 of those steps).
* ``EpisodeArgs`` holds its arrays by reference (the objects themselves come back).
"""

from __future__ import annotations

import numpy as np

from edgegym.families.hetero_ml import env as env_mod
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.fork import fork
from edgegym.families.hetero_ml.testing import lockstep_episode


class _Unpacked(HeteroMLEnv):
    """The full argument list through ``commit_prepare``'s entry point (the previous step path)."""

    _packed = False


class _Dispatched(HeteroMLEnv):
    """The kernels through Numba's dispatchers."""

    _direct_entry = False


class _Checked(HeteroMLEnv):
    """The env as shipped, checking each packed call (``_check_packed``) and counting the checks."""

    _check_entry = True
    calls = [0]

    def _check_packed(self, pe, sargs):
        """Count, then check."""
        _Checked.calls[0] += 1
        super()._check_packed(pe, sargs)


def test_packed_step_equals_the_full_argument_list(monkeypatch):
    _Checked.calls = [0]
    obs_calls = [0]
    orig = env_mod._check_fingerprints

    def counted(entry, args):
        obs_calls[0] += len(args) == 15  # observation_packed's step arguments (commit_prepare's full list: 50+)
        orig(entry, args)

    monkeypatch.setattr(env_mod, "_check_fingerprints", counted)
    steps = {}
    for preset, seed, jobs in (("ps-v1", 170, None), ("tiny-v1", 171, None), ("rl-hard-v1", 172, 80),
                               ("ra-v1", 173, 60), ("tiny-ra-v1", 174, None), ("rl-v1", 175, 80), ("ps-v1", 176, None),
                               ("ps", 177, 60), ("ps-v1", 178, None), ("ps-v1", 179, None), ("ps-v1", 180, None),
                               ("ps-v1", 181, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        ref = _Unpacked(preset, config=cfg) if seed % 2 else _Dispatched(preset, config=cfg)
        n = lockstep_episode(_Checked(preset, config=cfg), ref, seed, invalid_every=11, invalid_at=5)
        steps[preset] = steps.get(preset, 0) + n
    assert sum(n for p, n in steps.items() if p.endswith("v1")) >= 1000, steps
    assert _Checked.calls[0] >= 800 and obs_calls[0] >= 800, (_Checked.calls, obs_calls)


def test_one_env_reused_across_episodes_and_flag_switched():
    """One env over several episodes (a new simulator each: a new EpisodeArgs), the flag switched mid-episode."""
    new, ref = _Checked("ps-v1"), _Unpacked("ps-v1")
    for seed in (190, 191, 192):
        for env in (new, ref):
            env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done, i = False, 0
        while not done:
            mask = new.action_masks()
            assert np.array_equal(mask, ref.action_masks())
            act = int(rng.choice(np.flatnonzero(mask)))
            if i == 40:
                new._packed = False
            if i == 70:
                new._packed = True
            oa, ra, done, _, ia = new.step(act)
            ob, rb, db, _, ib = ref.step(act)
            assert np.array_equal(oa, ob) and ra == rb and done == db
            assert {k: v for k, v in ia.items() if k != "episode_metrics"} == {
                k: v for k, v in ib.items() if k != "episode_metrics"}
            i += 1
        del new._packed
        assert new._entry[4] and new._entry[2][2] is not None


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


def test_forks_build_their_own_episode_args():
    for future, cls in (("resample", HeteroMLEnv), ("keep", HeteroMLEnv), ("resample", _Checked)):
        new, ref = cls("ps-v1"), _Unpacked("ps-v1")
        new._check_entry = True
        new.reset(seed=93)
        ref.reset(seed=93)
        rng = np.random.default_rng(93)
        _step_both(new, ref, rng, 12)
        ep = new._entry[2][2]
        f_new, f_ref = fork(new, seed=3, future=future), fork(ref, seed=3, future=future)
        _step_both(f_new, f_ref, np.random.default_rng(5), 15)
        assert f_new._entry[0] is f_new.sim and f_new._entry[2][2] is not ep
        _step_both(new, ref, rng, 15)  # the original goes on with its own
        assert new._entry[2][2] is ep


def test_episode_args_hold_the_objects():
    from edgegym.families.hetero_ml import _packed

    env = HeteroMLEnv("ps-v1")
    env.reset(seed=4)
    got = _packed.fields_of(env._episode_args())
    assert len(got) == len(_packed.FIELDS)
    assert all(a is b for a, b in zip(got[0], env._rec(), strict=True))
    assert got[2] is env._kc[0] and got[10] is env.jobs.v and got[16] is env._est_free and got[23] is env._look_cache[2]
    assert got[8] is env._kc[6] and got[9] == env._kc[7]
    assert got[24] is env._no_mask and got[25] is env.observation_space.low and got[26] is env.observation_space.high
