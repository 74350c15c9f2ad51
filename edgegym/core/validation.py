"""Eager validation of preset files, shared by every env family.

Every check raises :class:`ValueError` whose message names the file (``src``) and the key, e.g.
``envs_config/testbed.yaml: key 'env.speed': must be > 0, got -2``.
"""

from __future__ import annotations

import math
from importlib.resources.abc import Traversable
from pathlib import Path

import yaml

__all__ = ["boolean", "choice", "fail", "number", "pair", "read_preset_yaml"]


def fail(src: str, key: str, msg: str):
    """Raise the ``ValueError`` naming ``src`` and ``key``."""
    raise ValueError(f"{src}: key '{key}': {msg}")


def number(src, key, v, lo=None, hi=None, integer=False, strict_lo=False):
    """A finite number (``int`` if ``integer``) with optional bounds (``strict_lo``: ``> lo``)."""
    if isinstance(v, bool) or not isinstance(v, int | float) or (isinstance(v, float) and not math.isfinite(v)):
        fail(src, key, f"expected a finite number, got {v!r}")
    if integer and int(v) != v:
        fail(src, key, f"expected an integer, got {v!r}")
    if lo is not None and (v <= lo if strict_lo else v < lo):
        fail(src, key, f"must be {'>' if strict_lo else '>='} {lo}, got {v!r}")
    if hi is not None and v > hi:
        fail(src, key, f"must be <= {hi}, got {v!r}")
    return int(v) if integer else float(v)


def pair(src, key, v, lo=None, hi=None, integer=False):
    """A ``[low, high]`` pair of numbers within bounds, with ``low <= high``; returned as a tuple."""
    if not isinstance(v, list | tuple) or len(v) != 2:
        fail(src, key, f"expected a [low, high] pair, got {v!r}")
    a, b = (number(src, key, x, lo=lo, hi=hi, integer=integer) for x in v)
    if a > b:
        fail(src, key, f"low > high in {v!r}")
    return (a, b)


def boolean(src, key, v):
    """``true`` or ``false`` (not 0/1 or strings)."""
    if not isinstance(v, bool):
        fail(src, key, f"expected true or false, got {v!r}")
    return v


def choice(src, key, v, valid):
    """One of ``valid``."""
    if v not in valid:
        fail(src, key, f"must be one of {', '.join(map(str, valid))}, got {v!r}")
    return v


def read_preset_yaml(name_or_path: str | Path, shipped: Traversable, label: str, names: list[str]):
    """Read a preset: a path to a YAML file, or the name of a file shipped in ``shipped``.

    Returns ``(data, source)`` where ``source`` names the file in error messages. An unknown name raises
    ``ValueError`` listing ``names`` (the shipped presets); invalid YAML raises ``ValueError`` naming the file.
    """
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") and p.exists():
        text, src = p.read_text(), str(p)
    else:
        res = shipped / f"{name_or_path}.yaml"
        if not res.is_file():
            raise ValueError(f"unknown {label} {str(name_or_path)!r} (shipped: {', '.join(names)})")
        text, src = res.read_text(), f"envs_config/{label_dir(shipped)}{name_or_path}.yaml"
    try:
        return yaml.safe_load(text), src
    except yaml.YAMLError as e:
        raise ValueError(f"{src}: not valid YAML: {e}") from e


def label_dir(shipped: Traversable) -> str:
    """``"utility/"`` for ``envs_config/utility``, ``""`` for ``envs_config`` itself."""
    return "" if shipped.name == "envs_config" else f"{shipped.name}/"


def check_config_mapping(config, source: str) -> None:
    """An env's ``config`` overrides must be ``None`` or a mapping of sections; a ``ValueError`` naming
    ``config`` and ``source`` otherwise (never a ``TypeError`` from deep inside ``replace``)."""
    if config is not None and not isinstance(config, dict):
        raise ValueError(f"{source}: config must be a mapping of sections to mappings, e.g. "
                         f"{{'env': {{...}}}}, got {config!r}")
