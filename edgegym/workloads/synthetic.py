"""Synthetic job tables calibrated to the Microsoft Philly trace: the embedded, offline default workload.

The generator needs no trace file: the calibrated constants below are embedded. They were computed
from ``shared/traces/philly_pollux/philly.csv.gz`` (82,247 jobs; the Pollux artifact's ``philly.csv``)
with the fitting functions of this module, and ``tests/workloads`` recomputes them from the trace:

* ``PHILLY_NUM_GPUS_VALUES`` / ``PHILLY_NUM_GPUS_COUNTS``: ``value_counts`` of the ``num_gpus`` column
  (exact).
* ``PHILLY_DURATION_LOG_MU`` / ``PHILLY_DURATION_LOG_SIGMA``: :func:`fit_lognormal_quantiles` of the
  ``duration`` column: mu = ln(median) = ln(1144 s), sigma = IQR of ln(duration) / (2 * 0.67449). The
  maximum-likelihood fit (mean and std of ln duration: 6.791, 2.156) puts the median at 890 s, 22 % low,
  because ln(duration) is bimodal (a mass of jobs that die within ~1 min); matching the median and
  interquartile range keeps the typical job right. Samples are clipped to Philly's observed range
  ``[PHILLY_DURATION_MIN_S, PHILLY_DURATION_MAX_S]``.
* ``PHILLY_MEAN_ARRIVAL_RATE_PER_S``: jobs / (last - first submission) = 82,247 / 9,408,690 s.
* ``PHILLY_ARRIVAL_PROFILE``: :func:`fit_two_peak_profile` of the submissions' time of day (phase in
  [0, 1) of a 24 h day, clock of the file): a uniform baseline plus two von Mises bumps, the two
  submission peaks of the trace (around 00:30 and 07:15) that Fig. 11 of Wang et al., "Preemptive Scheduling for
  Distributed Machine Learning Jobs in Edge-Cloud Networks", IEEE JSAC 2022, also shows.

Arrivals are a non-homogeneous Poisson process conditioned on the number of jobs (the paper's
§V-A says only "scaling up the submission times"; the two-peak process is our synthetic stand-in):
given ``num_jobs`` events in ``[0, horizon_s)``, the times are i.i.d. with density proportional to the
intensity, sorted. The intensity repeats the two-peak profile with period ``period_s``; by default the
period is the horizon, so one episode is one compressed "day" with both peaks, as in Fig. 11.
Durations and GPU counts are drawn independently of each other and of the arrival time (the trace's
correlations are not modelled).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .schema import validate_job_table

__all__ = [
    "PHILLY_ARRIVAL_PROFILE",
    "PHILLY_DURATION_LOG_MU",
    "PHILLY_DURATION_LOG_SIGMA",
    "PHILLY_DURATION_MAX_S",
    "PHILLY_DURATION_MIN_S",
    "PHILLY_MEAN_ARRIVAL_RATE_PER_S",
    "PHILLY_NUM_GPUS_COUNTS",
    "PHILLY_NUM_GPUS_VALUES",
    "TwoPeakProfile",
    "fit_lognormal_quantiles",
    "fit_two_peak_profile",
    "sample_arrival_times_s",
    "synthetic_philly_columns",
    "synthetic_philly_table",
]

_Z75 = 0.6744897501960817  # standard normal 75 % quantile


@dataclass(frozen=True, slots=True)
class TwoPeakProfile:
    """Arrival-intensity shape over one period: a uniform baseline plus two von Mises bumps.

    The density over the phase ``u`` in [0, 1) is
    ``baseline_weight + sum_k peak_weights[k] * vM(u; peak_centers[k], peak_kappas[k])``, where
    ``vM(u; c, k) = exp(k cos(2 pi (u - c))) / I0(k)`` integrates to 1 over a period; the weights sum to 1.

    Attributes:
        baseline_weight: share of arrivals spread uniformly over the period.
        peak_weights: share of arrivals in each bump.                               # (2,)
        peak_centers: phase of each bump's maximum, in [0, 1).                      # (2,)
        peak_kappas: von Mises concentration of each bump (larger = narrower).      # (2,)
    """

    baseline_weight: float
    peak_weights: tuple[float, float]
    peak_centers: tuple[float, float]
    peak_kappas: tuple[float, float]

    def __post_init__(self) -> None:
        weights = (self.baseline_weight, *self.peak_weights)
        if len(self.peak_weights) != 2 or len(self.peak_centers) != 2 or len(self.peak_kappas) != 2:
            raise ValueError("TwoPeakProfile needs exactly two peak weights, centers and kappas")
        if min(weights) < 0 or abs(sum(weights) - 1.0) > 1e-6:
            raise ValueError(f"TwoPeakProfile weights must be >= 0 and sum to 1, got {weights}")
        if not all(0.0 <= c < 1.0 for c in self.peak_centers):
            raise ValueError(f"TwoPeakProfile.peak_centers must be in [0, 1), got {self.peak_centers}")
        if min(self.peak_kappas) < 0:
            raise ValueError(f"TwoPeakProfile.peak_kappas must be >= 0, got {self.peak_kappas}")

    def density(self, phase) -> np.ndarray:
        """Arrival density at ``phase`` (fraction of the period, taken mod 1); its mean over a period is 1."""
        u = np.asarray(phase, dtype=float)
        out = np.full(u.shape, self.baseline_weight)
        for w, c, k in zip(self.peak_weights, self.peak_centers, self.peak_kappas, strict=True):
            out = out + w * np.exp(k * np.cos(2 * np.pi * (u - c))) / np.i0(k)
        return out


# ------------------------------------------------------------------------- calibrated Philly constants
# Computed from philly.csv.gz as described in the module docstring (see tests/workloads for the check).

#: Distinct GPU counts of Philly jobs and how many jobs have each (82,247 jobs).
PHILLY_NUM_GPUS_VALUES: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32, 64, 128)
PHILLY_NUM_GPUS_COUNTS: tuple[int, ...] = (76627, 1818, 1870, 1643, 7, 199, 7, 67, 6, 3)

#: Lognormal job duration (natural log of seconds): median/IQR fit, median exp(mu) = 1144 s.
PHILLY_DURATION_LOG_MU: float = 7.042286
PHILLY_DURATION_LOG_SIGMA: float = 2.400710
PHILLY_DURATION_MIN_S: float = 1.0
PHILLY_DURATION_MAX_S: float = 4628226.0

#: Mean submission rate: 82,247 jobs over 9,408,690 s (2017-09-04 10:30:41 .. 2017-12-22 08:02:11).
PHILLY_MEAN_ARRIVAL_RATE_PER_S: float = 82247 / 9408690.0

#: Two-peak time-of-day profile of Philly submissions (phase = time of day / 24 h).
PHILLY_ARRIVAL_PROFILE = TwoPeakProfile(
    baseline_weight=0.758762,
    peak_weights=(0.118325, 0.122913),
    peak_centers=(0.5 / 24, 7.25 / 24),
    peak_kappas=(2.0, 16.0),
)


# ------------------------------------------------------------------------------------------- fitting


def fit_lognormal_quantiles(durations_s) -> tuple[float, float]:
    """Lognormal (mu, sigma) of positive durations matching the median and the interquartile range.

    mu = ln(median), sigma = (q75 - q25 of ln duration) / (2 * 0.67449); quantiles by linear
    interpolation (``np.percentile`` default).
    """
    logs = np.log(np.asarray(durations_s, dtype=float))
    q25, q50, q75 = np.percentile(logs, [25, 50, 75])
    return float(q50), float((q75 - q25) / (2 * _Z75))


def fit_two_peak_profile(
    phase,
    num_bins: int = 96,
    kappas: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0),
) -> TwoPeakProfile:
    """Least-squares fit of a :class:`TwoPeakProfile` to the histogram of event phases.

    Args:
        phase: event times as a fraction of the period (taken mod 1), e.g. time of day / 24 h.   # (N,)
        num_bins: histogram bins over one period; the candidate peak centers are the bins' left edges.
        kappas: candidate von Mises concentrations.

    Method: for every pair of candidate bumps (center on the bin grid, kappa from ``kappas``) solve the
    3-weight linear least squares of the binned density on [baseline, bump 1, bump 2]; keep the pair
    with non-negative weights and the least squared error. Deterministic; about a second.
    """
    u = np.mod(np.asarray(phase, dtype=float), 1.0)
    if u.size == 0:
        raise ValueError("fit_two_peak_profile needs at least one event")
    y = np.histogram(u, bins=num_bins, range=(0.0, 1.0))[0] / u.size * num_bins  # (nb,) density
    mids = (np.arange(num_bins) + 0.5) / num_bins
    grid_c, grid_k = np.meshgrid(np.arange(num_bins) / num_bins, np.asarray(kappas, float), indexing="ij")
    grid_c, grid_k = grid_c.ravel(), grid_k.ravel()  # (M,)
    kern = (
        np.exp(grid_k[:, None] * np.cos(2 * np.pi * (mids[None, :] - grid_c[:, None])))
        / np.i0(grid_k)[:, None]
    )
    gram, ksum, ky = kern @ kern.T, kern.sum(axis=1), kern @ y  # (M, M), (M,), (M,)
    i, j = np.triu_indices(grid_c.size, k=1)
    mat = np.empty((i.size, 3, 3))
    mat[:, 0, 0] = num_bins
    mat[:, 0, 1] = mat[:, 1, 0] = ksum[i]
    mat[:, 0, 2] = mat[:, 2, 0] = ksum[j]
    mat[:, 1, 1] = gram[i, i]
    mat[:, 2, 2] = gram[j, j]
    mat[:, 1, 2] = mat[:, 2, 1] = gram[i, j]
    rhs = np.stack([np.full(i.size, y.sum()), ky[i], ky[j]], axis=1)
    with np.errstate(all="ignore"):
        sol = np.linalg.solve(mat + 1e-12 * np.eye(3), rhs[..., None])[..., 0]  # (pairs, 3)
        err = -2 * (sol * rhs).sum(axis=1) + np.einsum("ni,nij,nj->n", sol, mat, sol)
    err[~np.isfinite(err) | (sol < 0).any(axis=1)] = np.inf
    best = int(np.argmin(err))
    w = sol[best] / sol[best].sum()
    peaks = sorted([(grid_c[i[best]], grid_k[i[best]], w[1]), (grid_c[j[best]], grid_k[j[best]], w[2])])
    return TwoPeakProfile(
        baseline_weight=float(w[0]),
        peak_weights=(float(peaks[0][2]), float(peaks[1][2])),
        peak_centers=(float(peaks[0][0]), float(peaks[1][0])),
        peak_kappas=(float(peaks[0][1]), float(peaks[1][1])),
    )


# ------------------------------------------------------------------------------------------ sampling


def sample_arrival_times_s(
    num_jobs: int,
    horizon_s: float,
    rng: np.random.Generator,
    profile: TwoPeakProfile = PHILLY_ARRIVAL_PROFILE,
    period_s: float | None = None,
) -> np.ndarray:
    """Sorted arrival times of a non-homogeneous Poisson process conditioned on ``num_jobs`` events.

    The intensity on ``[0, horizon_s)`` is proportional to ``profile.density(t / period_s)``
    (``period_s`` defaults to ``horizon_s``). Each time is drawn from the profile's mixture (component,
    then a uniform or von Mises phase, then a period index) and times past the horizon are rejected.

    Returns:
        Arrival times in seconds, non-decreasing, in ``[0, horizon_s)``.          # (num_jobs,) float64
    """
    if num_jobs < 0:
        raise ValueError(f"num_jobs must be >= 0, got {num_jobs}")
    if not horizon_s > 0:
        raise ValueError(f"horizon_s must be > 0, got {horizon_s}")
    period = float(horizon_s if period_s is None else period_s)
    if not period > 0:
        raise ValueError(f"period_s must be > 0, got {period_s}")
    num_periods = int(np.ceil(horizon_s / period - 1e-12))
    weights = np.array([profile.baseline_weight, *profile.peak_weights])
    centers = np.array([0.0, *profile.peak_centers])
    kappas = np.array([0.0, *profile.peak_kappas])  # kappa 0 = uniform phase
    # lower bound on the acceptance rate (the baseline alone), to size the batches
    accept = max(profile.baseline_weight * horizon_s / (num_periods * period), 1e-3)
    chunks, have = [], 0
    while have < num_jobs:
        batch = int(min(1.2 * (num_jobs - have) / accept + 16, 10_000_000))
        comp = rng.choice(3, size=batch, p=weights)
        angle = rng.vonmises(2 * np.pi * centers[comp], kappas[comp])
        phase = np.mod(angle / (2 * np.pi), 1.0)
        t = (rng.integers(0, num_periods, size=batch) + phase) * period
        t = t[t < horizon_s]
        chunks.append(t)
        have += t.size
    times = np.concatenate(chunks)[:num_jobs] if chunks else np.zeros(0)
    return np.sort(times, kind="stable")


def synthetic_philly_table(
    num_jobs: int,
    rng: np.random.Generator,
    horizon_s: float | None = None,
    *,
    period_s: float | None = None,
    load_factor: float = 1.0,
    profile: TwoPeakProfile = PHILLY_ARRIVAL_PROFILE,
) -> pd.DataFrame:
    """A canonical job table of ``num_jobs`` synthetic jobs with Philly's statistics.

    Args:
        num_jobs: number of jobs (rows), >= 1.
        rng: the only source of randomness. Draw order: arrival times, GPU counts, durations.
        horizon_s: the span of submissions; default ``num_jobs / (PHILLY_MEAN_ARRIVAL_RATE_PER_S *
            load_factor)``, i.e. Philly's average load times ``load_factor``.
        period_s: period of the two-peak intensity; default ``horizon_s`` (one "day" per table). Use
            86400 for Philly's real daily cycle.
        load_factor: arrival-rate multiplier for the default horizon (ignored when ``horizon_s`` is given).
        profile: the arrival-intensity shape.

    Returns:
        Canonical table with ``job_id`` ``"syn-000000"``..., ``submit_time_s`` in ``[0, horizon_s)``,
        ``duration_s`` lognormal(``PHILLY_DURATION_LOG_MU``, ``PHILLY_DURATION_LOG_SIGMA``) clipped
        to Philly's range, and ``num_gpus`` from Philly's empirical distribution.
    """
    return validate_job_table(
        pd.DataFrame(
            synthetic_philly_columns(num_jobs, rng, horizon_s, period_s=period_s, load_factor=load_factor,
                                     profile=profile)
        ),
        "synthetic_philly_table",
    )


_SYNTHETIC_IDS: dict[int, tuple[str, ...]] = {}


def synthetic_philly_columns(
    num_jobs: int,
    rng: np.random.Generator,
    horizon_s: float | None = None,
    *,
    period_s: float | None = None,
    load_factor: float = 1.0,
    profile: TwoPeakProfile = PHILLY_ARRIVAL_PROFILE,
) -> dict[str, np.ndarray | tuple[str, ...]]:
    """The columns of :func:`synthetic_philly_table` (the same draws, the same values and dtypes), without the
    pandas frame and its validation: ``{"job_id": (J,) str tuple, "submit_time_s": (J,) float64, "duration_s":
    (J,) float64, "num_gpus": (J,) int64}``, canonical by construction (sorted times in ``[0, horizon_s)``,
    durations clipped to a positive range, GPU counts from Philly's values). For an env's reset, which draws a
    table every episode (see :func:`~edgegym.workloads.jobmodel.jobset_from_columns`)."""
    if num_jobs < 1:
        raise ValueError(f"num_jobs must be >= 1, got {num_jobs}")
    if not load_factor > 0:
        raise ValueError(f"load_factor must be > 0, got {load_factor}")
    if horizon_s is None:
        horizon_s = num_jobs / (PHILLY_MEAN_ARRIVAL_RATE_PER_S * load_factor)
    submit = sample_arrival_times_s(num_jobs, horizon_s, rng, profile=profile, period_s=period_s)
    counts = np.asarray(PHILLY_NUM_GPUS_COUNTS, dtype=float)
    gpus = rng.choice(
        np.asarray(PHILLY_NUM_GPUS_VALUES, dtype=np.int64), size=num_jobs, p=counts / counts.sum()
    )
    duration = rng.lognormal(PHILLY_DURATION_LOG_MU, PHILLY_DURATION_LOG_SIGMA, size=num_jobs)
    duration = np.clip(duration, PHILLY_DURATION_MIN_S, PHILLY_DURATION_MAX_S)
    ids = _SYNTHETIC_IDS.get(num_jobs)
    if ids is None:  # the same strings every episode of a preset: made once per size
        ids = _SYNTHETIC_IDS[num_jobs] = tuple(f"syn-{i:06d}" for i in range(num_jobs))
    return {"job_id": ids, "submit_time_s": submit, "duration_s": duration, "num_gpus": gpus}
