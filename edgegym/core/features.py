"""Named observation features: what each index of an edgegym observation means.

Every family's ``env.py`` names its observation features, one ``(name, meaning, low, high)`` per index, in
observation order, and sizes its observation from that list, so the documentation generated from it
(``docs/families/<key>.md``) cannot drift from the encoder. A family provides it in one of three ways
(looked up in this order by :func:`observation_features`):

1. the env attribute ``features`` (the list of the env as built, whatever its config);
2. a module function ``observation_features(preset)`` in the env's module;
3. a module list ``OBSERVATION_FEATURES`` (used only when its length matches the observation size).

Example::

    import gymnasium as gym, edgegym
    from edgegym.core.features import observation_features

    env = gym.make("EdgeCloudML-testbed-v0")
    for i, (name, meaning, low, high) in enumerate(observation_features(env)[:3]):
        print(i, name, meaning, low, high)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import import_module

import numpy as np

__all__ = ["FeatureRow", "MissingFeatures", "feature_rows", "observation_features"]


class MissingFeatures(LookupError):
    """The env's family does not name its observation features (or names a list of the wrong size)."""


def _size(env) -> int:
    return int(np.prod(env.observation_space.shape))


def _check(feats, env, where: str) -> list[tuple[str, str, float, float]]:
    out = []
    for k, f in enumerate(feats):
        if len(f) != 4:
            raise MissingFeatures(f"{where}: feature {k} is {f!r}, expected (name, meaning, low, high)")
        name, meaning, lo, hi = f
        out.append((str(name), str(meaning), float(lo), float("inf") if hi is None else float(hi)))
    if len(out) != _size(env):
        raise MissingFeatures(f"{where} names {len(out)} features; the observation has {_size(env)}")
    return out


def observation_features(env) -> list[tuple[str, str, float, float]]:
    """``(name, meaning, low, high)`` for each index of ``env``'s (flattened) observation.

    ``env``: an edgegym env (wrapped or not) or a registered env id. Raises :class:`MissingFeatures` when
    the family provides no list of the right size.
    """
    if isinstance(env, str):
        import gymnasium as gym

        e = gym.make(env)
        try:
            return observation_features(e)
        finally:
            e.close()
    u = env.unwrapped
    cls = type(u).__name__
    feats = getattr(u, "features", None)
    if isinstance(feats, list | tuple) and feats and isinstance(feats[0], tuple):
        return _check(feats, u, f"{cls}.features")
    mod = import_module(type(u).__module__)
    fn = getattr(mod, "observation_features", None)
    if callable(fn):
        try:
            feats = fn(u.preset)
        except TypeError:
            feats = None
        if feats is not None:
            return _check(feats, u, f"{mod.__name__}.observation_features(preset)")
    lst = getattr(mod, "OBSERVATION_FEATURES", None)
    if isinstance(lst, list | tuple) and len(lst) == _size(u):
        return _check(lst, u, f"{mod.__name__}.OBSERVATION_FEATURES")
    raise MissingFeatures(
        f"{cls} ({mod.__name__}) names no observation features for this env: give the env a `features` list or "
        "the module an observation_features(preset) function / OBSERVATION_FEATURES list"
    )


@dataclass(frozen=True, slots=True)
class FeatureRow:
    """One row of the documented table: consecutive features that differ only in their indices."""

    first: int
    last: int
    stride: int  # 1 for a contiguous range; b when the row is one feature of a repeated block of b
    name: str  # the first name, or "first … last"
    meaning: str
    low: float
    high: float

    @property
    def count(self) -> int:
        return (self.last - self.first) // self.stride + 1

    @property
    def index(self) -> str:
        if self.first == self.last:
            return str(self.first)
        if self.stride == 1:
            return f"{self.first}–{self.last}"
        return f"{self.first}, {self.first + self.stride}, …, {self.last}"


_NUM = re.compile(r"\d+(?:\.\d+)?")


def _pattern(f) -> tuple:
    name, meaning, lo, hi = f
    return _NUM.sub("#", name), _NUM.sub("#", meaning), lo, hi


def feature_rows(features) -> list[FeatureRow]:
    """Group consecutive features whose name and meaning differ only in numbers (``server[0].idle`` …
    ``server[99].idle`` is one row when they are adjacent; per-server blocks interleave, so a block of
    repeated rows is folded into one row per feature with the index range written as a stride)."""
    feats = list(features)
    n = len(feats)
    rows: list[FeatureRow] = []
    i = 0
    while i < n:
        # a repeated block: features i..i+b-1 repeat (up to numbers) r >= 3 times
        best = None
        for b in range(1, min(32, n - i) + 1):
            pat = [_pattern(f) for f in feats[i : i + b]]
            r = 1
            while i + (r + 1) * b <= n and [_pattern(f) for f in feats[i + r * b : i + (r + 1) * b]] == pat:
                r += 1
            if r >= 3 and (best is None or r * b > best[0] * best[1]):
                best = (r, b)
        if best is None:
            name, meaning, lo, hi = feats[i]
            rows.append(FeatureRow(i, i, 1, name, meaning, lo, hi))
            i += 1
            continue
        r, b = best
        for k in range(b):
            f0, f1 = feats[i + k], feats[i + (r - 1) * b + k]
            name = f"{f0[0]} … {f1[0]}"
            meaning = f0[1] if f0[1] == f1[1] else f"{f0[1]} … {f1[1]}"
            rows.append(FeatureRow(i + k, i + (r - 1) * b + k, b, name, meaning, f0[2], f0[3]))
        i += r * b
    return rows
