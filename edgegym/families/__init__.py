"""Env families: one folder per paper's model (see :mod:`edgegym.core.family` for the file roles).

Adding a family = adding its folder, its presets in ``envs_config/<key>/``, its policies in ``agents/``,
and one line in :data:`FAMILY_MODULES`.
"""

from __future__ import annotations

from importlib import import_module

from ..core.family import Family

__all__ = ["FAMILY_MODULES", "families", "family"]

#: one line per family: the package whose ``FAMILY`` attribute registers it
FAMILY_MODULES: tuple[str, ...] = (
    "edgegym.families.edge_cloud",
    "edgegym.families.edge_utility",
)

_cache: dict[str, Family] = {}


def families() -> dict[str, Family]:
    """Every registered family, by name (in registration order)."""
    if not _cache:
        for mod in FAMILY_MODULES:
            fam: Family = import_module(mod).FAMILY
            if fam.name in _cache:
                raise ValueError(f"two families are named {fam.name!r} ({mod})")
            _cache[fam.name] = fam
    return dict(_cache)


def family(name: str) -> Family:
    """The family called ``name`` (``KeyError`` listing the valid ones)."""
    fams = families()
    if name not in fams:
        raise KeyError(f"unknown env family {name!r} (valid: {', '.join(fams)})")
    return fams[name]
