"""Differential tests of HeteroML-v1's ninth round of step shortcuts against the paths they replace.

* The packed step's entry points taken over from the previous episode (``env._packed_entry``, ``_reuse_entry =
  True``) where the episode's ``EpisodeArgs`` has the same Numba type object and the step arguments the same
  fingerprints, against ``compiled_entry``'s look-up at every episode (``_reuse_entry = False``): whole random-legal
  episodes of the v1 presets in lockstep (observations, masks, rewards, infos, episode metrics and the committed
  schedule ``==``), >= 1,000 steps, each packed call checked (``_check_entry``); every entry handed out is the one
  ``compiled_entry`` finds for the same arguments, and most episodes take it over.
* A different struct type or different step-argument fingerprints are looked up again.
"""

from __future__ import annotations

from edgegym.core import jit
from edgegym.families.hetero_ml import env as env_mod
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.testing import lockstep_episode


class _Checked(HeteroMLEnv):
    """The env as shipped, checking each packed call against the argument fingerprints."""

    _check_entry = True


class _LookedUp(HeteroMLEnv):
    """The entries looked up with ``compiled_entry`` at every episode (the previous path)."""

    _reuse_entry = False


def test_reused_entries_equal_the_lookup(monkeypatch):
    orig = env_mod._packed_entry
    seen = {"calls": 0, "taken_over": 0}

    def checked(dispatcher, ep, args, fps=None, reuse=True):
        """The entry, asserted to be ``compiled_entry``'s for the same arguments; counts the calls taken over."""
        last = env_mod._LAST_PACKED.get(dispatcher)
        got = orig(dispatcher, ep, args, fps, reuse)
        assert got is jit.compiled_entry(dispatcher, (ep, *args))
        seen["calls"] += 1
        seen["taken_over"] += bool(reuse and last is not None and got is last[2] and last[0] is ep._numba_type_)
        return got

    monkeypatch.setattr(env_mod, "_packed_entry", checked)
    steps = 0
    for preset, seed, jobs in (("ps-v1", 300, None), ("tiny-v1", 301, None), ("ps-v1", 302, None),
                               ("ra-v1", 303, 60), ("ps-v1", 304, None), ("rl-hard-v1", 305, 80),
                               ("ps-v1", 306, None), ("ps-v1", 307, None), ("tiny-ra-v1", 308, None),
                               ("ps-v1", 309, None)):
        cfg = {"workload": {"num_jobs": jobs}} if jobs else None
        steps += lockstep_episode(_Checked(preset, config=cfg), _LookedUp(preset, config=cfg), seed, invalid_every=13,
                                  invalid_at=4)
    assert steps >= 1000, steps
    # two look-ups an episode (commit and observation) on each side; the shipped side takes most of its over
    assert seen["calls"] >= 30 and seen["taken_over"] >= 10, seen


def test_one_env_over_episodes_takes_the_entries_over(monkeypatch):
    calls = [0]
    orig = jit.compiled_entry

    def counted(dispatcher, args):
        """Count the look-ups."""
        calls[0] += 1
        return orig(dispatcher, args)

    new, ref = _Checked("ps-v1"), _LookedUp("ps-v1")
    lockstep_episode(new, ref, 310)  # (entries known from here on)
    monkeypatch.setattr(jit, "compiled_entry", counted)
    n = 0
    for seed in (311, 312, 313):
        n += lockstep_episode(new, HeteroMLEnv("ps-v1"), seed)
    assert n >= 300 and calls[0] == 0, (n, calls)
    lockstep_episode(_LookedUp("ps-v1"), HeteroMLEnv("ps-v1"), 314)
    assert calls[0] == 2, calls  # the reference looks both up each episode


def test_other_types_are_looked_up_again():
    env = HeteroMLEnv("ps-v1")
    lockstep_episode(env, HeteroMLEnv("ps-v1"), 320)
    from edgegym.families.hetero_ml import _packed

    disp = _packed.commit_packed
    typ, fps, entry = env_mod._LAST_PACKED[disp]
    ep = env._entry[2][2]
    assert ep._numba_type_ is typ
    args = (0,) * len(fps)  # not the step's fingerprints (ints where there are arrays and floats)
    sentinel = object()
    try:
        env_mod._LAST_PACKED[disp] = (typ, tuple(map(jit.fingerprint, args)), sentinel)
        assert env_mod._packed_entry(disp, ep, args, reuse=False) is not sentinel
        env_mod._LAST_PACKED[disp] = (typ, tuple(map(jit.fingerprint, args)), sentinel)
        assert env_mod._packed_entry(disp, ep, args) is sentinel  # same type and fingerprints: taken over
        env_mod._LAST_PACKED[disp] = (object(), tuple(map(jit.fingerprint, args)), sentinel)
        assert env_mod._packed_entry(disp, ep, args) is not sentinel  # another struct type: looked up
        env_mod._LAST_PACKED[disp] = (typ, fps[:-1] + (jit.fingerprint(1.5),), sentinel)
        assert env_mod._packed_entry(disp, ep, args) is not sentinel  # other fingerprints: looked up
    finally:
        env_mod._LAST_PACKED[disp] = (typ, fps, entry)
