"""The training seeds of ``edgegym train``'s warm start never meet the protocol's held-out test seeds."""

from __future__ import annotations

import pytest

from edgegym.agents.protocol import TEST_SEEDS, TRAINING_SEEDS
from edgegym.agents.rl.dagger import BC_SEED, check_not_test_seeds


def test_default_behaviour_cloning_seeds_are_training_seeds():
    seeds = range(BC_SEED, BC_SEED + 100)  # far more episodes than any recipe collects
    assert all(any(s in r for r in TRAINING_SEEDS) for s in seeds)
    check_not_test_seeds("bc_seed", seeds)


@pytest.mark.parametrize("key", ["bc_seed", "dagger_seed", "eval_seed"])
def test_test_seeds_are_refused_by_name(key):
    first = TEST_SEEDS[0].start
    with pytest.raises(ValueError, match=rf"{key}: seeds {first}-{first + 2} .* held-out test seeds"):
        check_not_test_seeds(key, range(first, first + 3))
    with pytest.raises(ValueError, match=rf"{key}: seed {first + 5} of training"):
        check_not_test_seeds(key, [1, first + 5])
    check_not_test_seeds(key, [TEST_SEEDS[0].stop, first - 1])  # either side: fine


def test_warm_start_refuses_a_test_seed_before_any_work():
    from edgegym.agents.rl.dagger import warm_start

    with pytest.raises(ValueError, match="bc_seed: seeds 20000-20001"):
        warm_start(None, "EdgeCloudML-testbed-v1", {"bc_teacher": "aonline", "bc_episodes": 2, "bc_seed": 20000})
    with pytest.raises(ValueError, match="eval_seed: seed 20003"):
        warm_start(None, "EdgeCloudML-testbed-v1", {"bc_teacher": "aonline", "bc_episodes": 1},
                   eval_seeds=[10000, 20003])
