"""The evaluation protocol's seed ranges and the statistics of agents/stats.py on hand-checkable data."""

import numpy as np
import pytest
from edgegym.agents import protocol, stats


def test_seed_ranges_are_disjoint():
    protocol.check_disjoint()
    assert len(protocol.test_seeds()) >= 20
    with pytest.raises(ValueError, match="test seeds 5-9 meet the dev seeds 0-6"):
        protocol.check_disjoint({"test": (range(5, 10),), "dev": (range(0, 7),)})


def test_test_seeds_never_training_or_selection():
    from edgegym.agents.rl.dagger import EVAL_SEEDS

    test = set(protocol.test_seeds())
    assert not test & set(EVAL_SEEDS)
    assert not test & {s for r in protocol.TRAINING_SEEDS + protocol.SELECTION_SEEDS for s in r}
    assert 10_000 in protocol.SELECTION_SEEDS[0] and 30_000 in protocol.TRAINING_SEEDS[1]


def test_iqm_of_known_arrays():
    assert stats.iqm([1, 2, 3, 4]) == 2.5  # the middle two
    assert stats.iqm(np.arange(8)) == 3.5  # 2, 3, 4, 5
    assert stats.iqm([0, 0, 10, 10, 10, 10, 100, 1000]) == 10.0  # the outliers are cut


def test_ci_contains_iqm_and_is_deterministic():
    rng = np.random.default_rng(1)
    a = rng.normal(100, 10, size=(5, 20))
    lo, hi = stats.iqm_ci(a, seed=3)
    assert lo < stats.iqm(a) < hi
    assert stats.iqm_ci(a, seed=3) == (lo, hi)
    assert stats.iqm_ci(a, seed=4) != (lo, hi)


def test_single_training_seed_resamples_test_seeds():
    a = np.arange(20.0)
    s = stats.summarize(a, lower_is_better=True)
    assert s["n_training_seeds"] == 1 and s["n_test_seeds"] == 20 and s["resampled"] == "test seeds"
    assert s["ci_low"] < s["iqm"] == 9.5 < s["ci_high"]
    assert s["mean"] == 9.5 and s["std"] == pytest.approx(np.std(a, ddof=1))


def test_constant_scores_have_a_point_interval():
    assert stats.iqm_ci(np.full((3, 4), 7.0)) == (7.0, 7.0)
    assert stats.iqm_ci([5.0]) == (5.0, 5.0)


def test_probability_of_improvement():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]])
    assert stats.prob_improvement(a, a, lower_is_better=True) == 0.5  # identical policies
    assert stats.prob_improvement(a, a, lower_is_better=False) == 0.5
    assert stats.prob_improvement(a, a + 10, lower_is_better=True) == 1.0  # a lower cost on every seed
    assert stats.prob_improvement(a, a + 10, lower_is_better=False) == 0.0  # a lower utility
    # per test seed: X 1 vs Y {0, 1, 2}: win 1, tie 0.5, loss 0 -> 0.5; X 5 vs Y 1 -> 1; mean 0.75
    assert stats.prob_improvement([[1.0, 5.0]], [[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]], lower_is_better=False) == 0.75
    with pytest.raises(ValueError, match="share them"):
        stats.prob_improvement([1.0, 2.0], [1.0], lower_is_better=True)


def test_bad_scores():
    with pytest.raises(ValueError, match="non-empty"):
        stats.as_scores([])
    with pytest.raises(ValueError, match="finite"):
        stats.as_scores([1.0, np.nan])
