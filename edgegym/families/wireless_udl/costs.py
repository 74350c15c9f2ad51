"""Pure cost functions of WirelessUDL (eq. (1) and Sec. V-B of Han et al., ICPADS 2021): latency cost shapes and
bandwidth cost.

Latency cost kinds (codes in :data:`KIND_CODES`):

* ``exp`` (the paper's printed "Sigmoid"): ``f(L) = τ·e^{rate·L}``, rate 0.25 (exponent capped at 700 so
  that costs stay finite);
* ``linear``: ``f(L) = τ·L + b``;
* ``piecewise``: ``f(L) = τ1 if L < c else τ2``;
* ``logistic`` (the bounded sigmoid of the paper's reference [44], Zhang et al., "Online Approximation Scheme for
  Scheduling Heterogeneous Utility Jobs in Edge Computing", IEEE/ACM ToN 2023; MobiHoc 2020 in the paper's
  list): ``f(L) = b / (e^{−a(L−c)} + 1)``, the utility ``b / (e^{a(L−c)} + 1)`` of [44] lost by finishing at
  ``L`` (``b`` minus it). With ``a`` = the exponential's rate and ``c = ln(b/τ)/a`` it is exactly
  ``τ·e^{aL} / (1 + τ·e^{aL}/b)``: the printed ``τ·e^{0.25 t}`` while it is small against ``b``, saturating at
  ``b`` (the instance stores ``b`` and ``c`` in the job's ``b`` and ``c``).

``L`` is the job's latency in slots, ``t_last − a + latency_offset`` (offset 1 by default,
so a job finished in its arrival slot has latency 1).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["KIND_CODES", "KINDS", "bandwidth_cost", "latency_cost", "latency_scalar"]

KINDS = ("exp", "linear", "piecewise", "logistic")
KIND_CODES = {k: i for i, k in enumerate(KINDS)}


def latency_cost(kind, tau, b, tau1, tau2, c, latency, rate=0.25):
    """f_i(L), vectorised over any broadcastable arguments (``kind`` an int code of :data:`KINDS`)."""
    if np.ndim(kind) == 0 and np.ndim(latency) == 0:  # scalar fast path (the per-step hot path)
        return latency_scalar(int(kind), float(tau), float(b), float(tau1), float(tau2), float(c), float(latency),
                              rate)
    kind = np.asarray(kind)
    L = np.asarray(latency, dtype=float)
    with np.errstate(over="ignore"):
        exp = np.asarray(tau) * np.exp(np.minimum(rate * L, 700.0))
    lin = np.asarray(tau) * L + np.asarray(b)
    pw = np.where(L < np.asarray(c), np.asarray(tau1), np.asarray(tau2))
    with np.errstate(over="ignore"):
        logi = np.asarray(b) / (np.exp(np.minimum(-rate * (L - np.asarray(c)), 700.0)) + 1.0)
    out = np.where(kind == 0, exp, np.where(kind == 1, lin, np.where(kind == 3, logi, pw)))
    return float(out) if out.ndim == 0 else out.astype(float)


def latency_scalar(k: int, tau: float, b: float, tau1: float, tau2: float, c: float, L: float, rate=0.25) -> float:
    """f_i(L) for Python scalars (``k`` an int code of :data:`KINDS`, the others floats): the scalar path of
    :func:`latency_cost`."""
    if k == 0:
        return tau * math.exp(min(rate * L, 700.0))
    if k == 1:
        return tau * L + b
    if k == 3:
        return b / (math.exp(min(-rate * (L - c), 700.0)) + 1.0)
    return tau1 if L < c else tau2


def bandwidth_cost(q, delta_mb, pi_mb, g, y, ps):
    """Eq. (1) for one slot of one job: ``Σ q^{rr'}·(δ·g^{rr'} + π·y^r·s^{r'})``.

    Returns ``(transfer, parameter)``: ``g`` (R, R) chunks from origin r trained at r', ``y`` (R,) workers,
    ``ps`` the PS site (``s`` one-hot); ``q`` (R, R) price per MB with a zero diagonal.
    """
    transfer = float(delta_mb * np.sum(q * g))
    param = float(pi_mb * np.dot(q[:, ps], y)) if ps >= 0 else 0.0
    return transfer, param
