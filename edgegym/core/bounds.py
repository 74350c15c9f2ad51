"""The offline bound every env family reports beside its policies' objectives.

A family declares ``Family.bound = "module:function"`` (imported lazily, like the env entry point). The
function takes the *unwrapped* env right after ``reset(seed=...)`` (its instance is built: cluster and the whole
job list of the episode) and returns a :class:`Bound`. A bound is *valid* when no legal schedule of that instance,
online or clairvoyant, learned or hand-written, does better than ``value``: a lower bound on a cost the family
minimises (``sense == "lower"``) or an upper bound on a utility it maximises (``sense == "upper"``). Each family's
docs page carries the proof sketch of its bound; a randomized test checks it against every shipped policy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Bound", "family_bound"]


@dataclass(frozen=True, slots=True)
class Bound:
    """An offline bound on one episode's objective.

    Attributes:
        value: the bound (the largest of the valid parts for a lower bound, the smallest for an upper bound).
        name: what it is, in a few words, as tables show it (e.g. ``"standalone JCT"``).
        sense: ``"lower"`` (the objective is a cost, no schedule is below ``value``) or ``"upper"`` (a utility,
            no schedule is above it).
        parts: every bound computed on the way, by name (``value`` is their max / min); ``nan`` = not computed.
        bounds: which schedules it bounds, in words (e.g. ``"every legal schedule, clairvoyant included"``).
        seconds: the wall time it took.
    """

    value: float
    name: str
    sense: str = "lower"
    parts: dict[str, float] = field(default_factory=dict)
    bounds: str = "every legal schedule of the instance, online or clairvoyant"
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.sense not in ("lower", "upper"):
            raise ValueError(f"Bound.sense must be 'lower' or 'upper', got {self.sense!r}")

    def respected_by(self, objective: float, rtol: float = 1e-9) -> bool:
        """True when ``objective`` (the family's episode objective) does not beat the bound."""
        tol = rtol * max(1.0, abs(self.value))
        return objective >= self.value - tol if self.sense == "lower" else objective <= self.value + tol


def family_bound(family: Any) -> Callable[..., Bound] | None:
    """The bound function a family declares (``Family.bound``, ``"module:function"``), imported; None if none."""
    spec = getattr(family, "bound", None)
    if not spec:
        return None
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)
