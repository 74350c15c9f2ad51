"""Synthetic Philly-like tables: determinism, ranges, and the embedded constants against the real trace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from edgegym.workloads import (
    PHILLY_ARRIVAL_PROFILE,
    PHILLY_DURATION_LOG_MU,
    PHILLY_DURATION_LOG_SIGMA,
    PHILLY_MEAN_ARRIVAL_RATE_PER_S,
    PHILLY_NUM_GPUS_COUNTS,
    PHILLY_NUM_GPUS_VALUES,
    TwoPeakProfile,
    fit_lognormal_quantiles,
    fit_two_peak_profile,
    sample_arrival_times_s,
    synthetic_philly_table,
    validate_job_table,
)


def test_same_seed_same_table():
    a = synthetic_philly_table(300, np.random.default_rng(7))
    b = synthetic_philly_table(300, np.random.default_rng(7))
    pd.testing.assert_frame_equal(a, b)


def test_different_seeds_differ():
    a = synthetic_philly_table(300, np.random.default_rng(1))
    b = synthetic_philly_table(300, np.random.default_rng(2))
    assert not np.array_equal(a["submit_time_s"], b["submit_time_s"])
    assert not np.array_equal(a["duration_s"], b["duration_s"])


def test_table_is_canonical_and_in_range():
    table = synthetic_philly_table(2000, np.random.default_rng(0), horizon_s=1e5)
    pd.testing.assert_frame_equal(table, validate_job_table(table, "again"))
    assert table["submit_time_s"].min() >= 0 and table["submit_time_s"].max() < 1e5
    assert set(table["num_gpus"]) <= set(PHILLY_NUM_GPUS_VALUES)
    assert table["duration_s"].between(1.0, 4628226.0).all()
    assert table["job_id"].is_unique


def test_default_horizon_follows_philly_rate_and_load_factor():
    n = 3000
    base = synthetic_philly_table(n, np.random.default_rng(0))
    busy = synthetic_philly_table(n, np.random.default_rng(0), load_factor=2.0)
    horizon = n / PHILLY_MEAN_ARRIVAL_RATE_PER_S
    assert horizon * 0.95 < base["submit_time_s"].max() < horizon
    assert busy["submit_time_s"].max() < horizon / 2
    with pytest.raises(ValueError, match="load_factor"):
        synthetic_philly_table(10, np.random.default_rng(0), load_factor=0)
    with pytest.raises(ValueError, match="num_jobs"):
        synthetic_philly_table(0, np.random.default_rng(0))


def test_arrivals_have_the_profiles_two_peaks():
    n, horizon = 200_000, 1000.0
    t = sample_arrival_times_s(n, horizon, np.random.default_rng(3))
    assert np.all(np.diff(t) >= 0) and t[0] >= 0 and t[-1] < horizon
    counts = np.histogram(t, bins=96, range=(0, horizon))[0] / n * 96  # empirical density
    expected = PHILLY_ARRIVAL_PROFILE.density((np.arange(96) + 0.5) / 96)
    assert np.max(np.abs(counts - expected)) < 0.12
    # two local maxima of the smoothed density, near the profile's peak centres
    peak_bins = [int(c * 96) for c in PHILLY_ARRIVAL_PROFILE.peak_centers]
    trough = int(np.argmin(expected))
    for b in peak_bins:
        assert counts[b] > 1.3 * counts[trough]


def test_period_shorter_and_longer_than_horizon():
    rng = np.random.default_rng(5)
    daily = sample_arrival_times_s(50_000, 2.5 * 86400, rng, period_s=86400)  # partial last period
    assert daily[-1] < 2.5 * 86400
    # third day holds only its first half: about (0.5-day mass) / (2.5-day mass) of the jobs
    half = np.mean(daily >= 2 * 86400)
    mass = lambda a, b: np.mean(PHILLY_ARRIVAL_PROFILE.density(np.linspace(a, b, 10001)))  # noqa: E731
    assert half == pytest.approx(0.5 * mass(0, 0.5) / 2.5, abs=0.01)
    tiny = sample_arrival_times_s(100, 10.0, np.random.default_rng(0), period_s=86400)
    assert tiny.size == 100 and tiny[-1] < 10.0


def test_profile_validation_and_density_normalised():
    u = np.linspace(0, 1, 100001)
    assert np.mean(PHILLY_ARRIVAL_PROFILE.density(u)) == pytest.approx(1.0, abs=1e-4)
    with pytest.raises(ValueError, match="sum to 1"):
        TwoPeakProfile(0.5, (0.1, 0.1), (0.1, 0.2), (1.0, 1.0))
    with pytest.raises(ValueError, match="peak_centers"):
        TwoPeakProfile(0.5, (0.25, 0.25), (0.1, 1.2), (1.0, 1.0))


def test_fit_recovers_a_known_profile():
    truth = TwoPeakProfile(0.5, (0.2, 0.3), (0.25, 0.75), (8.0, 16.0))
    t = sample_arrival_times_s(100_000, 1.0, np.random.default_rng(11), profile=truth)
    fit = fit_two_peak_profile(t)
    assert fit.peak_centers == pytest.approx(truth.peak_centers, abs=1.5 / 96)
    assert fit.peak_weights == pytest.approx(truth.peak_weights, abs=0.05)
    assert fit.baseline_weight == pytest.approx(truth.baseline_weight, abs=0.05)


def test_lognormal_fit_on_exact_lognormal():
    d = np.random.default_rng(0).lognormal(3.0, 0.7, size=200_000)
    mu, sigma = fit_lognormal_quantiles(d)
    assert mu == pytest.approx(3.0, abs=0.01) and sigma == pytest.approx(0.7, abs=0.01)


# ----------------------------------------------------------------- calibration against the real trace


def test_constants_match_philly_trace(philly_file, philly_table):
    # GPU distribution: exact
    counts = philly_table["num_gpus"].value_counts().sort_index()
    assert tuple(counts.index) == PHILLY_NUM_GPUS_VALUES
    assert tuple(counts.to_numpy()) == PHILLY_NUM_GPUS_COUNTS
    # lognormal durations
    mu, sigma = fit_lognormal_quantiles(philly_table["duration_s"])
    assert mu == pytest.approx(PHILLY_DURATION_LOG_MU, abs=1e-4)
    assert sigma == pytest.approx(PHILLY_DURATION_LOG_SIGMA, abs=1e-4)
    median = philly_table["duration_s"].median()
    assert np.exp(PHILLY_DURATION_LOG_MU) == pytest.approx(median, rel=0.10)
    synthetic = synthetic_philly_table(50_000, np.random.default_rng(0))
    assert synthetic["duration_s"].median() == pytest.approx(median, rel=0.10)
    assert philly_table["duration_s"].min() == 1.0 and philly_table["duration_s"].max() == 4628226.0
    # arrival rate and time-of-day profile
    span = philly_table["submit_time_s"].iloc[-1]
    assert len(philly_table) / span == pytest.approx(PHILLY_MEAN_ARRIVAL_RATE_PER_S, rel=1e-9)
    stamps = pd.to_datetime(pd.read_csv(philly_file, usecols=["timestamp"])["timestamp"])
    phase = ((stamps - stamps.dt.normalize()).dt.total_seconds() / 86400).to_numpy()
    fit = fit_two_peak_profile(phase)
    ref = PHILLY_ARRIVAL_PROFILE
    assert fit.peak_centers == pytest.approx(ref.peak_centers, abs=1e-9)
    assert fit.peak_kappas == pytest.approx(ref.peak_kappas)
    assert fit.peak_weights == pytest.approx(ref.peak_weights, abs=1e-5)
    assert fit.baseline_weight == pytest.approx(ref.baseline_weight, abs=1e-5)
