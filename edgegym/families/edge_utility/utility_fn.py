"""Utility functions of the job response time and O4A's pure helpers.

Both follow Zhang et al., "Online Approximation Scheme for Scheduling Heterogeneous Utility Jobs in Edge Computing",
IEEE/ACM ToN 2023: the utility families of its §V-A.3, the tentative execution time of §IV-B and the helpers of
Algorithm 1 (§IV-C).

numpy only. A utility function ``g`` maps a job response time (JRT, seconds) to a non-negative,
non-increasing number of utility points. Families (codes in :data:`FAMILY_CODES`):

* ``linear``: ``g(t) = max(0, b - a·t)`` (clipped at 0: the paper's ``b − a·t`` turns negative
  after ``b/a`` seconds, while utilities must be non-negative).
* ``aon`` (all-or-nothing, hard deadline): ``g(t) = a`` if ``t < c`` (or ``t <= c`` when ``inclusive``:
  §V-A.3 writes "<", Fig. 2 and Theorem 1 use "≤"), else 0.
* ``sigmoid``: ``g(t) = b / (exp(a·(t − c)) + 1)``.
* ``constant``: ``g(t) = b``.
* ``step`` (general non-increasing piecewise constant): ``g(t) = values[k]`` for
  ``breaks[k-1] <= t < breaks[k]`` (``values`` has one more entry than ``breaks``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FAMILIES",
    "FAMILY_CODES",
    "UtilityFn",
    "aon",
    "constant",
    "discretize",
    "fill",
    "linear",
    "sigmoid",
    "step",
    "tentative_time",
    "unit_sigmoid",
    "vector_rows",
]

FAMILIES = ("linear", "aon", "sigmoid", "constant", "step")
FAMILY_CODES = {name: k for k, name in enumerate(FAMILIES)}
TOL = 1e-12


@dataclass(frozen=True, slots=True)
class UtilityFn:
    """One job's utility function of its response time (seconds); see the module docstring.

    Attributes:
        family: one of :data:`FAMILIES`.
        a, b, c: the family's parameters (unused ones are 0).
        inclusive: AoN boundary (``t <= c`` counts as met), as in the paper's Fig. 2 and
            Theorem 1; its experiments (§V-A.3) use ``False``.
        breaks, values: the ``step`` family's breakpoints (increasing) and values (non-increasing).
    """

    family: str
    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    inclusive: bool = False
    breaks: tuple[float, ...] = ()
    values: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.family not in FAMILY_CODES:
            raise ValueError(f"unknown utility family {self.family!r} (valid: {', '.join(FAMILIES)})")
        if self.family == "step":
            if len(self.values) != len(self.breaks) + 1:
                raise ValueError("a step utility needs len(values) == len(breaks) + 1")
            if any(y > x for x, y in zip(self.values, self.values[1:], strict=False)) or min(self.values) < 0:
                raise ValueError("step utility values must be non-negative and non-increasing")
            if any(y <= x for x, y in zip(self.breaks, self.breaks[1:], strict=False)):
                raise ValueError("step utility breaks must be increasing")
        elif min(self.a, self.b) < 0 or (self.family == "aon" and self.a < 0):
            raise ValueError(f"utility parameters must be >= 0, got a={self.a}, b={self.b}")

    @property
    def code(self) -> int:
        """Integer family code (index in :data:`FAMILIES`)."""
        return FAMILY_CODES[self.family]

    def __call__(self, t: float) -> float:
        """Utility of response time ``t`` (seconds); a float ≥ 0."""
        f = self.family
        if f == "linear":
            return max(0.0, self.b - self.a * t)
        if f == "aon":
            return self.a if (t <= self.c if self.inclusive else t < self.c) else 0.0
        if f == "sigmoid":
            x = self.a * (t - self.c)
            if x > 700.0:
                return 0.0
            return self.b / (math.exp(x) + 1.0)
        if f == "constant":
            return self.b
        return self.values[bisect_right(self.breaks, t)]

    def vector(self, t: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`__call__` over an array of response times."""
        t = np.asarray(t, dtype=float)
        f = self.family
        if f == "linear":
            return np.maximum(0.0, self.b - self.a * t)
        if f == "aon":
            ok = t <= self.c if self.inclusive else t < self.c
            return np.where(ok, self.a, 0.0)
        if f == "sigmoid":
            with np.errstate(over="ignore"):
                return self.b / (np.exp(np.minimum(self.a * (t - self.c), 700.0)) + 1.0)
        if f == "constant":
            return np.full(t.shape, self.b)
        return np.asarray(self.values)[np.searchsorted(self.breaks, t, side="right")]

    @property
    def g_max(self) -> float:
        """``g(0)``, the largest utility the job can earn."""
        return self(0.0)

    def soft_deadline(self, theta: float = 0.5) -> float:
        """First JRT where ``g <= theta·g(0)`` (the soft deadline of our EDF discipline); ``inf`` if never."""
        g0 = self.g_max
        f = self.family
        if g0 <= 0:
            return 0.0
        if f == "linear":
            return (1 - theta) * self.b / self.a if self.a > 0 else math.inf
        if f == "aon":
            return self.c
        if f == "sigmoid":
            # b/(e^{a(t-c)}+1) = theta*g0  ->  e^{a(t-c)} = b/(theta*g0) - 1
            y = self.b / (theta * g0) - 1.0
            return self.c + math.log(y) / self.a if y > 0 and self.a > 0 else math.inf
        if f == "constant":
            return math.inf
        for k, v in enumerate(self.values[1:]):
            if v <= theta * g0:
                return self.breaks[k]
        return math.inf


def vector_rows(utilities, t: np.ndarray) -> np.ndarray:
    """``utilities[q].vector(t[q])`` for every row ``q`` of the 2-D array ``t`` (one utility per row), a family at
    a time: the same elementwise numpy operations as :meth:`UtilityFn.vector`, so identical values.  # (n, m)"""
    t = np.ascontiguousarray(t, dtype=float)
    n = t.shape[0]
    out = np.empty(t.shape)
    if n == 0:
        return out
    code = np.fromiter((FAMILY_CODES[u.family] for u in utilities), np.int64, n)
    ua = np.fromiter((u.a for u in utilities), np.float64, n)
    ub = np.fromiter((u.b for u in utilities), np.float64, n)
    uc = np.fromiter((u.c for u in utilities), np.float64, n)
    for f in np.unique(code).tolist():
        sel = np.flatnonzero(code == f)
        a, b, c = ua[sel, None], ub[sel, None], uc[sel, None]
        x = t[sel]
        if f == 0:  # linear
            out[sel] = np.maximum(0.0, b - a * x)
        elif f == 1:  # aon
            inc = np.fromiter((utilities[q].inclusive for q in sel.tolist()), bool, sel.size)[:, None]
            out[sel] = np.where(np.where(inc, x <= c, x < c), a, 0.0)
        elif f == 2:  # sigmoid
            with np.errstate(over="ignore"):
                out[sel] = b / (np.exp(np.minimum(a * (x - c), 700.0)) + 1.0)
        elif f == 3:  # constant
            out[sel] = b
        else:  # step: one row at a time
            for q in sel.tolist():
                out[q] = utilities[q].vector(t[q])
    return out


def linear(a: float, b: float) -> UtilityFn:
    """``max(0, b − a·t)``."""
    return UtilityFn("linear", a=float(a), b=float(b))


def aon(a: float, c: float, inclusive: bool = False) -> UtilityFn:
    """All-or-nothing: ``a`` if ``t < c`` (``<=`` when ``inclusive``) else 0."""
    return UtilityFn("aon", a=float(a), c=float(c), inclusive=bool(inclusive))


def sigmoid(a: float, b: float, c: float) -> UtilityFn:
    """``b / (exp(a(t − c)) + 1)``."""
    return UtilityFn("sigmoid", a=float(a), b=float(b), c=float(c))


def unit_sigmoid(c: float) -> UtilityFn:
    """``1 / (1 + exp(t − c))`` (paper Fig. 2)."""
    return UtilityFn("sigmoid", a=1.0, b=1.0, c=float(c))


def constant(b: float) -> UtilityFn:
    """``g(t) = b``."""
    return UtilityFn("constant", b=float(b))


def step(breaks, values) -> UtilityFn:
    """General non-increasing step function (see the module docstring)."""
    return UtilityFn("step", breaks=tuple(float(x) for x in breaks), values=tuple(float(x) for x in values))


# ------------------------------------------------------------------------------------------ O4A helpers
def tentative_time(p: float, speed: float, eps: float, beta: float, mode: str = "speed_consistent") -> float:
    """Length ``p†`` of a job's executable set (the tentative execution time of the paper's §IV-B).

    ``speed_consistent`` (default): ``(1 + βε)·p / s``; ``paper_literal``: ``(1 + βε)/(1 + ε)·p``. The two agree
    at the analysed speed ``s = 1 + ε``; on a speed-1 server the paper's formula gives ``p† < p``, so no job could
    finish inside its executable set, hence the speed-consistent default.
    """
    if mode == "speed_consistent":
        return (1.0 + beta * eps) * p / speed
    if mode == "paper_literal":
        return (1.0 + beta * eps) / (1.0 + eps) * p
    raise ValueError(f"unknown tentative_mode {mode!r} (valid: speed_consistent, paper_literal)")


def discretize(v: float, p: float) -> float:
    """O4A's logarithmic rounding (Alg. 1 lines 3–4): ``p·2^λ`` with ``λ = floor(log2(v/p))``; 0 if ``v <= 0``.

    So ``v/2 < result <= v`` and ``result / p`` is an exact power of two.
    """
    if v <= 0.0:
        return 0.0
    lam = math.floor(math.log2(v / p))
    while p * 2.0 ** (lam + 1) <= v:
        lam += 1
    while p * 2.0**lam > v:
        lam -= 1
    return p * 2.0**lam


def fill(a: float, need: float, b_starts, b_ends) -> tuple[float, list[float], list[float]]:
    """Earliest ``d`` with ``|[a, d) \\ B| = need`` (the interval filling of Algorithm 1).

    ``B`` is a sorted list of disjoint half-open intervals given as two lists. Returns ``(d, starts, ends)``,
    the intervals of ``[a, d) \\ B`` (total length ``need``).
    """
    t = a
    got = 0.0
    fs: list[float] = []
    fe: list[float] = []
    for bs, be in zip(b_starts, b_ends, strict=True):
        if be <= t:
            continue
        if bs > t:
            take = min(bs - t, need - got)
            fs.append(t)
            fe.append(t + take)
            got += take
            t += take
            if got >= need - TOL:
                return t, fs, fe
        t = max(t, be)
    rest = need - got
    if rest > 0 or not fs:
        fs.append(t)
        fe.append(t + rest)
        t += rest
    return t, fs, fe
