"""Env families: one folder per paper's model (see :mod:`edgegym.core.family` for the file roles).

Adding a family = adding its folder, its presets in ``envs_config/<key>/``, its policies in ``agents/``,
and one line in :data:`FAMILY_MODULES`.
"""

from __future__ import annotations

from importlib import import_module

from ..core.family import Family

__all__ = [
    "FAMILY_MODULES",
    "RENDERING_FUNCTIONS",
    "families",
    "family",
    "family_of",
    "family_module",
    "gantt_figure",
    "render_gantt",
    "save_gantt_png",
]

#: one line per family: the package whose ``FAMILY`` attribute registers it
FAMILY_MODULES: tuple[str, ...] = (
    "edgegym.families.edge_cloud",
    "edgegym.families.edge_utility",
    "edgegym.families.wireless_udl",
    "edgegym.families.hetero_ml",
)

#: what every family's ``rendering.py`` provides (same names, same signatures; tests/test_layout.py checks it):
#: ``gantt_data(env) -> dict`` (numbers only), ``gantt_figure(env, title=None, max_lanes=400) -> Figure``,
#: ``render_gantt(env) -> (H, W, 3) uint8`` (``env.render()``), ``save_gantt_png(env, path, title=None,
#: max_lanes=400) -> Path`` (through :func:`edgegym.core.figures.save_figure`)
RENDERING_FUNCTIONS: tuple[str, ...] = ("gantt_data", "gantt_figure", "render_gantt", "save_gantt_png")

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


def family_of(env) -> Family:
    """The family of a (possibly wrapped) edgegym env (read from its preset)."""
    return family(env.unwrapped.preset.family)


def family_module(fam: Family, role: str):
    """One of a family's modules by file role, e.g. ``family_module(fam, "rendering")``."""
    return import_module(f"{__name__}.{fam.key}.{role}")


def gantt_figure(env, title: str | None = None, max_lanes: int = 400):
    """The family's Gantt chart of ``env`` as a matplotlib ``Figure`` (``ValueError`` beyond ``max_lanes``)."""
    return family_module(family_of(env), "rendering").gantt_figure(env, title=title, max_lanes=max_lanes)


def render_gantt(env):
    """The family's Gantt chart of ``env`` as an ``(H, W, 3)`` uint8 RGB array."""
    return family_module(family_of(env), "rendering").render_gantt(env)


def save_gantt_png(env, path, title: str | None = None, max_lanes: int = 400):
    """Write the family's Gantt chart of ``env`` to ``path`` (PNG), checked by
    :func:`edgegym.core.figures.save_figure` (``FigureCheckError`` if it lacks labels, units or a legend);
    return the path."""
    return family_module(family_of(env), "rendering").save_gantt_png(env, path, title=title, max_lanes=max_lanes)
