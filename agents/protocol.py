"""The evaluation protocol: disjoint seed ranges, and the named test splits of every benchmark id.

**Seed ranges** (one place; a test checks that no two meet):

* :data:`TRAINING_SEEDS` — episodes a learner trains on: the algorithm seed ``s`` seeds its env ``i`` with ``s + i``
  (the ``--seed`` of ``edgegym train``, 0-99 here) and DAgger / behaviour-cloning episodes start at 30,000;
* :data:`SELECTION_SEEDS` — the best-model evaluations during training (``eval_seed``, 10,000 by default);
* :data:`DEV_SEEDS` — 100-104, the seeds of the reports and ``edgegym eval``'s default before the protocol
  (kept: shipped figures quote them);
* :data:`TEST_SEEDS` — 20,000-20,019, never used by training or model selection: the seeds ``edgegym eval``
  runs with ``--split`` when no seeds are given (the leaderboard still runs the report seeds, 100-104).

**Splits** — a split is a named overlay of a family's preset, defined relative to the preset's own values in
``envs_config/splits/<family key>.yaml`` so that it applies to every id of the family: ``scale`` multiplies numeric
keys (an integer key stays an integer, at least 1; a list scales element-wise), ``set`` replaces keys, ``trace``
names the trace the split needs (a missing trace is a :class:`SplitUnavailable` error, never a silent synthetic
stand-in). :func:`split_overlay` computes the overlay for an env id, validating every key against the preset.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .errors import UserError

__all__ = ["DEV_SEEDS", "SELECTION_SEEDS", "SEED_RANGES", "Split", "SplitUnavailable", "TEST_SEEDS",
           "TRAINING_SEEDS", "check_disjoint", "family_splits", "preset_config", "split_names", "split_overlay",
           "test_seeds"]

#: episodes learners train on: algorithm seeds (env i of seed s: s + i) and DAgger / BC episodes
TRAINING_SEEDS: tuple[range, ...] = (range(0, 100), range(30_000, 40_000))
#: best-model evaluations during training (``eval_seed``)
SELECTION_SEEDS: tuple[range, ...] = (range(10_000, 20_000),)
#: the reports' seeds before the protocol (``edgegym eval``'s default without ``--split``)
DEV_SEEDS: tuple[range, ...] = (range(100, 105),)
#: held-out test seeds: never a training or selection seed
TEST_SEEDS: tuple[range, ...] = (range(20_000, 20_020),)

SEED_RANGES: dict[str, tuple[range, ...]] = {"training": TRAINING_SEEDS, "selection": SELECTION_SEEDS,
                                             "dev": DEV_SEEDS, "test": TEST_SEEDS}


def test_seeds() -> list[int]:
    """The test seeds as a list (20,000-20,019)."""
    return [s for r in TEST_SEEDS for s in r]


test_seeds.__test__ = False  # not a pytest test


def check_disjoint(ranges: dict[str, tuple[range, ...]] = SEED_RANGES) -> None:
    """Raise ``ValueError`` naming the two uses whose seed ranges meet."""
    items = [(name, r) for name, rs in ranges.items() for r in rs]
    for i, (a, ra) in enumerate(items):
        for b, rb in items[i + 1:]:
            if a != b and max(ra.start, rb.start) < min(ra.stop, rb.stop):
                raise ValueError(f"the {a} seeds {ra.start}-{ra.stop - 1} meet the {b} seeds {rb.start}-{rb.stop - 1}")


# ------------------------------------------------------------------------------------------------ splits
class SplitUnavailable(UserError):
    """A split that needs a trace this machine does not have."""


@dataclass(frozen=True)
class Split:
    """One named test split of a family: ``scale`` (dotted key -> factor), ``set`` (dotted key -> value),
    ``trace`` (the trace loader it needs, or ``None``)."""

    name: str
    description: str
    scale: dict = field(default_factory=dict)
    set: dict = field(default_factory=dict)
    trace: str | None = None
    trace_args: dict = field(default_factory=dict)


def _splits_file(family_key: str):
    from importlib.resources import files

    return files("edgegym.envs_config") / "splits" / f"{family_key}.yaml"


@functools.cache
def family_splits(family: str) -> dict[str, Split]:
    """The splits of ``family`` (a family name, e.g. ``EdgeCloudML``), read from its YAML file (validated)."""
    import yaml

    from edgegym.families import families

    fams = families()
    if family not in fams:
        raise UserError(f"unknown family {family!r}; families: {', '.join(fams)}")
    path = _splits_file(fams[family].key)
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    where = f"envs_config/splits/{path.name}"
    if not isinstance(data.get("splits"), dict):
        raise ValueError(f"{where}: needs a mapping 'splits' (name -> scale/set/trace)")
    out = {}
    for name, spec in data["splits"].items():
        spec = spec or {}
        bad = set(spec) - {"description", "scale", "set", "trace", "trace_args"}
        if bad:
            raise ValueError(f"{where}: split {name!r}: unknown key(s) {', '.join(sorted(bad))} "
                             "(use description, scale, set, trace, trace_args)")
        for k, f in (spec.get("scale") or {}).items():
            if not isinstance(f, int | float) or isinstance(f, bool) or f <= 0:
                raise ValueError(f"{where}: split {name!r}: scale factor of {k!r} must be a number > 0, got {f!r}")
        out[name] = Split(name, str(spec.get("description", "")), dict(spec.get("scale") or {}),
                          dict(spec.get("set") or {}), spec.get("trace"), dict(spec.get("trace_args") or {}))
    return out


def split_names(env_id: str) -> list[str]:
    """The names of the splits that apply to ``env_id`` (its family's)."""
    from edgegym.envs import env_info

    return list(family_splits(env_info(env_id).family))


def _scaled(value, factor: float, what: str):
    if isinstance(value, list):
        return [_scaled(v, factor, what) for v in value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UserError(f"{what} is {value!r}: not a number the split can scale")
    if isinstance(value, int):
        return max(1, int(round(value * factor)))
    return float(value) * factor


@functools.cache
def _trace_available(loader: str, args: tuple) -> str | None:
    """``None`` when the trace loads, else the loader's message."""
    from edgegym.workloads import TRACE_LOADERS

    try:
        TRACE_LOADERS[loader].load(**dict(args))
    except FileNotFoundError as e:
        return str(e)
    return None


def preset_config(env_id: str) -> dict:
    """The sections of ``env_id``'s preset file as a plain dict (the values a split scales)."""
    from importlib.resources import files

    import yaml

    from edgegym.envs import env_info
    from edgegym.families import families

    info = env_info(env_id)
    res = files("edgegym.envs_config") / families()[info.family].key / f"{info.preset}.yaml"
    data = yaml.safe_load(res.read_text()) or {}
    return {k: dict(v) for k, v in data.items() if isinstance(v, dict)}


def split_overlay(env_id: str, split: str, base: dict | None = None) -> dict:
    """The env-config overlay of ``split`` on ``env_id`` (sections -> keys), computed from the preset's values
    (``base``, e.g. ``--env-config``, is applied to the preset first).

    Raises :class:`UserError` naming the split and the key for an unknown split or a key the preset lacks (or
    holds no number), and :class:`SplitUnavailable` when the split's trace is missing."""
    from edgegym.envs import env_info

    from .runner import merge_config

    fam = env_info(env_id).family
    splits = family_splits(fam)
    if split not in splits:
        raise UserError(f"unknown split {split!r} for {env_id}; {fam} splits: {', '.join(splits) or 'none'}")
    sp = splits[split]
    preset = merge_config(preset_config(env_id), base)
    over: dict = {}
    for key, factor in sp.scale.items():
        sec, _, name = key.partition(".")
        if sec not in preset or name not in preset[sec] or preset[sec][name] is None:
            raise UserError(f"split {split!r} on {env_id}: the preset has no value for {key!r} to scale")
        over.setdefault(sec, {})[name] = _scaled(preset[sec][name], factor, f"split {split!r}: {key}")
    for key, value in sp.set.items():
        sec, _, name = key.partition(".")
        if not name:
            raise UserError(f"split {split!r}: key {key!r} must be section.key")
        over.setdefault(sec, {})[name] = value
    if sp.trace:
        msg = _trace_available(sp.trace, tuple(sorted(sp.trace_args.items())))
        if msg:
            raise SplitUnavailable(f"split {split!r} needs the {sp.trace} trace: {msg}")
    return over
