"""One check for every figure edgegym saves: axis labels with units, a legend where there is more than one series.

:func:`save_figure` is the only way the package (the families' Gantt charts, the bench plots) and the
benchmark scripts write a figure: it runs :func:`check_figure` first and refuses (``ValueError``) a figure a
reader could not decode.

The rules, for every visible axes of the figure (colour bars and hidden axes are skipped):

* the x and the y axis have a label (an axis that shares its label with a sibling axes, as in
  ``sharex=True`` grids, may leave it to the sibling);
* the label names a unit in parentheses or brackets, e.g. ``"time (s)"``, ``"JCT (slots)"``, ``"x [-]"``.
  Dimensionless quantities declare themselves with a marker such as ``(count)``, ``(ratio)``, ``(share)``,
  ``(index)`` or ``[-]``. Scale notes alone (``"(log)"``, ``"(symlog)"``, ``"(log axis)"``) are not a unit.
  A *categorical* axis (its ticks carry names, e.g. one tick per policy or per server lane) needs a label
  but no unit;
* an axes with more than one labelled series (what ``legend()`` would list: artists whose label does not
  start with ``_``) has a legend, on the axes or on the figure.

matplotlib is imported lazily (only the checked figure brings it), so :mod:`edgegym.core` stays importable
without it.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["SCALE_WORDS", "UNITLESS_MARKERS", "FigureCheckError", "check_figure", "figure_rgb", "has_unit",
           "save_figure"]

#: words that describe an axis scale, not a unit: a bracket holding only these is not a unit
SCALE_WORDS = frozenset({"log", "symlog", "linear", "logit", "axis", "scale", "log-scale", "log scale", ",", ";"})

#: the declared markers of a dimensionless axis (any bracketed unit is accepted; these are the documented ones)
UNITLESS_MARKERS = ("(count)", "(ratio)", "(share)", "(fraction)", "(index)", "[-]", "(-)", "(%)")



class FigureCheckError(ValueError):
    """A figure fails :func:`check_figure` (a bug in the code that drew it, not a user error)."""


_BRACKETS = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")
_NUMBER = re.compile(r"^[\s\u2212+-]*[\d.,]+(e[+-]?\d+)?\s*$|^\s*$", re.IGNORECASE)


def has_unit(label: str) -> bool:
    """Whether an axis label names a unit: a ``(...)`` or ``[...]`` group holding more than scale words.

    >>> has_unit("time (s)"), has_unit("JCT [slots]"), has_unit("jobs (count)"), has_unit("share [-]")
    (True, True, True, True)
    >>> has_unit("seconds (log)"), has_unit("J"), has_unit("")
    (False, False, False)
    """
    for a, b in _BRACKETS.findall(label or ""):
        inner = (a or b).strip().lower()
        words = [w for w in re.split(r"[\s,;]+", inner) if w]
        if inner and (not words or any(w not in SCALE_WORDS for w in words)):
            return True
    return False


def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def _categorical(axis) -> bool:
    """An axis whose ticks carry names (``set_xticklabels`` with text, or string data), not numbers."""
    from matplotlib import ticker
    from matplotlib.category import StrCategoryFormatter

    fmt = axis.get_major_formatter()
    if isinstance(fmt, StrCategoryFormatter):
        return True
    if isinstance(fmt, ticker.ScalarFormatter | ticker.LogFormatter | ticker.EngFormatter | ticker.PercentFormatter
                  | ticker.FormatStrFormatter | ticker.StrMethodFormatter):
        return False
    texts = [t.get_text() for t in axis.get_majorticklabels()]
    return any(not _NUMBER.match(s) and not s.startswith("$") for s in texts)


def _name(ax, i: int, fig) -> str:
    title = ax.get_title() or ax.get_title(loc="left") or ax.get_title(loc="right")
    if not title and fig._suptitle is not None:
        title = fig._suptitle.get_text()
    title = " ".join(title.split())
    return f"axes {i} ({title[:80]!r})" if title else f"axes {i} (untitled)"


def _label(ax, which: str) -> str:
    """The axis label, or a sibling's when the axis is shared (``sharex``/``sharey`` grids label one side)."""
    own = (ax.get_xlabel() if which == "x" else ax.get_ylabel()).strip()
    if own:
        return own
    group = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for sib in group.get_siblings(ax):
        lab = (sib.get_xlabel() if which == "x" else sib.get_ylabel()).strip()
        if lab:
            return lab
    return ""


def check_figure(fig) -> None:
    """Raise :class:`FigureCheckError` (a ``ValueError``) naming every axes (by index and title) that lacks an
    x/y label, a unit in a label of a numeric axis, or a legend although it draws more than one labelled series
    (see the module docstring).

    Args:
        fig: a matplotlib ``Figure`` (from ``matplotlib.figure.Figure`` or ``pyplot``).
    """
    problems = []
    fig_legend = bool(getattr(fig, "legends", []))
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison or _is_colorbar(ax) or ax.name != "rectilinear":
            continue
        name = _name(ax, i, fig)
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not axis.get_visible():
                continue
            lab = _label(ax, which)
            if not lab:
                problems.append(f"{name}: no {which} label")
            elif not _categorical(axis) and not has_unit(lab):
                problems.append(f"{name}: {which} label {lab!r} names no unit (e.g. '(s)', '(slots)', '(count)', "
                                "'[-]')")
        _, labels = ax.get_legend_handles_labels()
        if len(labels) > 1 and ax.get_legend() is None and not fig_legend:
            problems.append(f"{name}: {len(labels)} labelled series but no legend")
    if problems:
        raise FigureCheckError("figure check failed: " + "; ".join(problems))


def save_figure(fig, path, **savefig_kwargs) -> Path:
    """Check ``fig`` with :func:`check_figure`, then write it to ``path`` (format from the suffix); return the path.

    Nothing is written when the check fails (:class:`FigureCheckError`).
    """
    check_figure(fig)
    path = Path(path)
    fig.savefig(path, **savefig_kwargs)
    return path


def figure_rgb(fig, check: bool = True):
    """Draw ``fig`` (checked first unless ``check=False``) and return its pixels as an ``(H, W, 3)`` uint8 array
    (what an env's ``render()`` returns for ``render_mode="rgb_array"``)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if check:
        check_figure(fig)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[:, :, :3])
