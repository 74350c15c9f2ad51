"""Every episode metric is finite on every legal configuration: random legal actions over every registered id
(short episodes), the stress test's config variants, and cloud-only EdgeUtility clusters (no edge server; an
infinite cloud, where the offered load has no finite capacity to divide by and is 0.0 by definition, and a
finite one). A metric is checked when it is a number, a NumPy array or scalar, or a list/tuple/dict of those;
strings and booleans (labels, flags) are not numbers and are skipped."""

from __future__ import annotations

import math
import numbers

import gymnasium as gym
import numpy as np
import pytest
from robustness_helpers import current_mask, legal_action, registered_ids, small_config
from test_robustness_stress import VARIANTS

#: the cloud-only cluster of the stress failure (an infinite cloud by default), and the same with a finite cloud
CLOUD_ONLY = {"servers": {"edge_counts": [0, 0], "cloud": True}}
CLOUD_ONLY_FINITE = {**CLOUD_ONLY, "scheduler": {"cloud": "same"}}
CLOUD_ONLY_SEEDS = (64000, 64001, 64002, 64003, 64004)

CASES = (
    [(e, small_config(e), (0, 1)) for e in registered_ids()]
    + [(e, c, (0, 1)) for e, c in VARIANTS]
    + [
        ("EdgeUtility-tiny-v0", CLOUD_ONLY, CLOUD_ONLY_SEEDS),
        ("EdgeUtility-tiny-v0", {**CLOUD_ONLY, "workload": {"num_jobs": 60, "source": "bursty"}}, (0, 1)),
        ("EdgeUtility-tiny-v0", CLOUD_ONLY_FINITE, (0, 1)),
    ]
)


def non_finite(metrics: dict, prefix: str = "") -> list[tuple[str, object]]:
    """``(key, value)`` of every numeric entry of ``metrics`` (nested in dicts, lists, arrays) that is nan or ±inf;
    raises ``TypeError`` naming the key of a value that is neither a number nor a label."""
    bad: list[tuple[str, object]] = []
    for k, v in metrics.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            bad += non_finite(v, f"{key}.")
        elif v is None or isinstance(v, (str, bool, np.bool_)):
            continue
        elif isinstance(v, (numbers.Number, np.ndarray, np.generic, list, tuple)):
            a = np.asarray(v, dtype=float)
            if not np.all(np.isfinite(a)):
                bad.append((key, v))
        else:
            raise TypeError(f"episode_metrics[{key!r}] is a {type(v).__name__}, neither a number nor a label")
    return bad


def _metrics(env_id: str, config: dict | None, seed: int) -> dict:
    """The episode metrics of one episode under random legal actions (drawn from ``seed`` only)."""
    env = gym.make(env_id, **({"config": config} if config else {}))
    rng = np.random.default_rng([seed, 32])
    _, info = env.reset(seed=seed)
    for _ in range(20_000):
        _, _, term, trunc, info = env.step(legal_action(env.action_space, current_mask(env, info), rng))
        if term or trunc:
            env.close()
            return info["episode_metrics"]
    raise AssertionError(f"{env_id} {config} seed {seed}: no end within 20,000 steps")


def test_non_finite_finds_nan_and_inf_at_any_depth():
    m = {"a": 1, "b": float("nan"), "c": {"d": [1.0, math.inf]}, "e": np.float32(2), "f": "label", "g": True}
    assert [k for k, _ in non_finite(m)] == ["b", "c.d"]
    assert non_finite({"x": np.array([0.0, 1.0]), "y": None}) == []
    with pytest.raises(TypeError, match="'z'"):
        non_finite({"z": object()})


@pytest.mark.parametrize("env_id,config,seeds", CASES, ids=[f"{e}:{c}" for e, c, _ in CASES])
def test_every_episode_metric_is_finite(env_id, config, seeds):
    for seed in seeds:
        m = _metrics(env_id, config, seed)
        assert any(isinstance(v, numbers.Number) for v in m.values()), f"{env_id}: no numeric metric at all"
        assert non_finite(m) == [], f"{env_id} {config} seed {seed}: non-finite episode metrics"


def test_cloud_only_offered_load_is_zero_and_the_jobs_all_go_to_the_cloud():
    """The stress failure (``offered_load`` nan on a cloud-only cluster, seed 64000): now 0.0, as documented."""
    m = _metrics("EdgeUtility-tiny-v0", CLOUD_ONLY, 64000)
    assert m["offered_load"] == 0.0
    assert m["cloud_jobs"] == m["num_jobs"] > 0 and m["edge_jobs"] == 0
    # a finite cloud is a server where jobs queue: its offered load is positive
    assert _metrics("EdgeUtility-tiny-v0", CLOUD_ONLY_FINITE, 0)["offered_load"] > 0
