"""Figures a reviewer accepts for a policy evaluated on (training seed × test seed) episodes.

Following Agarwal et al., "Deep Reinforcement Learning at the Edge of the Statistical Precipice" (NeurIPS 2021):

* the **interquartile mean** (IQM): the mean of the middle 50 % of all episode scores (``scipy.stats.trim_mean``
  with 25 % cut from each end);
* its **95 % stratified-bootstrap confidence interval** (``scipy.stats.bootstrap``, percentile method, an explicit
  seed): with several training seeds the strata are the test seeds and the training seeds are resampled within
  each (the paper's runs-within-tasks scheme); with a single training seed (a non-learned policy, or one model)
  the test seeds are resampled (one stratum);
* the **probability of improvement** over a reference policy on the same test seeds: for each test seed, the share
  of (training seed of X, training seed of Y) pairs in which X beats Y (ties count one half), averaged over the test
  seeds. It is direction-aware: "beats" is a lower objective for a cost, a higher one for a utility. Two identical
  policies give exactly 0.5.

Scores are arrays of shape ``(n_training_seeds, n_test_seeds)``; a 1-D array is one training seed.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_scores", "iqm", "iqm_ci", "prob_improvement", "summarize"]


def as_scores(scores) -> np.ndarray:
    """``scores`` as a float array ``(n_training_seeds, n_test_seeds)`` (a 1-D array is one training seed).

    Raises ``ValueError`` for an empty array, more than two dimensions or a non-finite value."""
    a = np.asarray(scores, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"scores must be a non-empty (training seeds × test seeds) array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("scores must be finite (an episode without an objective?)")
    return a


def iqm(scores, axis=None) -> float | np.ndarray:
    """Interquartile mean: the mean after cutting 25 % of the values from each end (all values when ``axis`` is
    ``None``)."""
    from scipy.stats import trim_mean

    a = np.asarray(scores, dtype=float)
    if axis is None:
        return float(trim_mean(a.ravel(), 0.25))
    return trim_mean(a, 0.25, axis=axis)


def iqm_ci(scores, *, seed: int = 0, confidence: float = 0.95, n_resamples: int = 2000) -> tuple[float, float]:
    """The stratified-bootstrap ``confidence`` interval of the IQM of ``scores`` (see the module docstring).

    Deterministic for a given ``seed``. A single episode has the interval ``(x, x)``."""
    from scipy.stats import bootstrap

    a = as_scores(scores)
    if a.size == 1:
        return float(a[0, 0]), float(a[0, 0])
    if a.shape[0] > 1:  # strata: the test seeds; resampled: the training seeds within each
        data = tuple(a[:, j] for j in range(a.shape[1]))
    else:  # one training seed: resample the test seeds
        data = (a[0],)

    def stat(*cols, axis=-1):
        return iqm(np.concatenate(cols, axis=axis), axis=axis)

    if np.ptp(a) == 0:  # every resample is the same value
        return float(a.flat[0]), float(a.flat[0])
    import inspect

    gen = np.random.default_rng(seed)  # SciPy >= 1.15 calls it rng, older versions random_state
    seeded = {"rng": gen} if "rng" in inspect.signature(bootstrap).parameters else {"random_state": gen}
    res = bootstrap(data, stat, n_resamples=n_resamples, confidence_level=confidence, method="percentile",
                    vectorized=True, paired=False, **seeded)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def prob_improvement(scores, reference, *, lower_is_better: bool) -> float:
    """P(a policy with ``scores`` beats the one with ``reference`` on a test seed): per test seed, the share of
    (training seed, reference training seed) pairs it wins (ties: one half), averaged over the test seeds.

    ``scores`` and ``reference`` must share the test seeds (columns, same order)."""
    x, y = as_scores(scores), as_scores(reference)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"scores cover {x.shape[1]} test seeds, the reference {y.shape[1]}: they must share them")
    d = x[:, None, :] - y[None, :, :]  # (n_x, n_y, n_test)
    if lower_is_better:
        d = -d
    win = (d > 0).astype(float) + 0.5 * (d == 0)
    return float(win.mean(axis=(0, 1)).mean())


def summarize(scores, *, lower_is_better: bool, reference=None, seed: int = 0, confidence: float = 0.95,
              n_resamples: int = 2000) -> dict:
    """``mean``, ``std`` (sample std over every episode; 0 for one), ``iqm``, ``ci_low``/``ci_high`` (the IQM's
    stratified-bootstrap interval), ``n_training_seeds``, ``n_test_seeds``, ``resampled`` (what the bootstrap
    resampled) and, with ``reference`` scores on the same test seeds, ``prob_improvement`` over it."""
    a = as_scores(scores)
    lo, hi = iqm_ci(a, seed=seed, confidence=confidence, n_resamples=n_resamples)
    out = {"mean": float(a.mean()), "std": float(a.std(ddof=1)) if a.size > 1 else 0.0, "iqm": iqm(a),
           "ci_low": lo, "ci_high": hi, "confidence": confidence, "n_training_seeds": int(a.shape[0]),
           "n_test_seeds": int(a.shape[1]),
           "resampled": "training seeds within test seeds" if a.shape[0] > 1 else "test seeds",
           "lower_is_better": bool(lower_is_better)}
    if reference is not None:
        out["prob_improvement"] = prob_improvement(a, reference, lower_is_better=lower_is_better)
    return out
