"""The EdgeUtility offline bound (edgegym.families.edge_utility.bounds.offline_bound) against every shipped policy.

On 200 small random instances (the tiny preset with random servers, cloud, bursty or Poisson releases, utility
mixes, estimation errors, speed, query latency and rejection, and random seeds) no registered EdgeUtility policy
ends an episode above the bound, nor above any of its finite parts, nor above the burst LP bound computed on every
group of at least 2 jobs (so that the LP, not only the no-queue part, is checked on every burst); the server
disciplines other than each policy's own (EDF, FIFO, HRDF) run under OnDisc's dispatch on the first 50, and the
rollout policies (resampled and clairvoyant forks, small K/H) on the first 20 (they cost ~10x an ordinary episode).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from edgegym.agents.registry import policy_names
from edgegym.agents.runner import run_episode
from edgegym.core.bounds import family_bound
from edgegym.families.edge_utility import FAMILY
from edgegym.families.edge_utility.bounds import burst_lp_upper_bound, offline_bound, time_bins
from edgegym.families.edge_utility.simulator import UtilityJobs
from edgegym.families.edge_utility.utility_fn import aon, linear

N_INSTANCES = 200
N_DISCIPLINES = 50
N_ROLLOUT = 20
DISCIPLINES = ("edf", "fifo", "hrdf")
ROLLOUTS = ("rollout(K=1,H=4,k=3):ondisc", "rollout(K=1,H=4,k=3,clairvoyant=1):ondisc",
            "rollout(K=2,H=3,k=3):o4a", "rollout(K=1,H=4,k=3):all-edge")


def _instance(i: int) -> tuple[dict, int]:
    """Instance ``i``: (config overrides of ``EdgeUtility-tiny-v0``, seed), drawn from an explicit seed."""
    rng = np.random.default_rng(20_000 + i)
    cloud = bool(rng.random() < 0.5)
    mixes = (["linear", "aon", "sigmoid"], ["linear"], ["aon"], ["sigmoid", "aon"])
    config = {
        "servers": {"edge_counts": [int(rng.integers(1, 3)), int(rng.integers(0, 3))], "cloud": cloud,
                    "speed": float(rng.choice([1.0, 1.0, 1.5]))},
        "workload": {"source": str(rng.choice(["bursty", "bursty", "poisson"])), "num_jobs": int(rng.integers(10, 41)),
                     "rate_per_s": float(rng.uniform(5.0, 80.0)), "utility_mix": mixes[int(rng.integers(0, 4))]},
        "estimation": {"delta": float(rng.choice([0.0, 0.0, 0.3]))},
        "scheduler": {"cloud": "infinite" if rng.random() < 0.7 else "same"},
        "env": {"allow_reject": bool(rng.random() < 0.3),
                "dispatch_latency_s": float(rng.choice([0.0, 0.0, 0.01]))},
    }
    return config, int(rng.integers(0, 2**31))


def _runs(i: int) -> list[tuple[str, dict]]:
    """(policy, extra config) of instance ``i``."""
    runs = [(p, {}) for p in policy_names("EdgeUtility")]
    if i < N_DISCIPLINES:
        runs += [("ondisc", {"scheduler": {"discipline": d}}) for d in DISCIPLINES]
    if i < N_ROLLOUT:
        runs += [(p, {}) for p in ROLLOUTS]
    return runs


def test_no_policy_beats_the_bound_on_200_random_instances():
    episodes = tightened = 0
    for i in range(N_INSTANCES):
        config, seed = _instance(i)
        got: dict = {}

        def grab(env, rec):
            u = env.unwrapped
            key = (u.jobs.release_s.tobytes(), u.jobs.p_s.tobytes(), u.jobs.up_s.tobytes())
            if "bound" not in got:
                got["key"], got["bound"] = key, offline_bound(u)
                got["lp2"] = burst_lp_upper_bound(u, min_group=2)
            assert key == got["key"], f"{rec['policy']}: another instance than the bound's, {config} seed {seed}"

        for policy, extra in _runs(i):
            cfg = {**config, **{k: {**config.get(k, {}), **v} for k, v in extra.items()}}
            rec = run_episode("EdgeUtility-tiny-v0", policy, seed, cfg, on_end=grab)
            b = got["bound"]
            for name, value in {**b.parts, "value": b.value, "burst LP (groups >= 2)": got["lp2"]}.items():
                if math.isfinite(value):
                    assert rec["objective"] <= value * (1 + 1e-9) + 1e-9, (
                        f"{policy} {extra} beats the bound part {name!r} on {cfg} seed {seed}: "
                        f"{rec['objective']} > {value}")
            episodes += 1
        tightened += got["lp2"] < got["bound"].parts["no-queue"] * (1 - 1e-6)
    assert episodes == (N_INSTANCES * len(policy_names("EdgeUtility")) + N_DISCIPLINES * len(DISCIPLINES)
                        + N_ROLLOUT * len(ROLLOUTS))
    assert tightened > 0  # the burst LP is below the no-queue bound somewhere: its capacity rows are exercised


def test_family_declares_the_bound():
    assert family_bound(FAMILY) is offline_bound


def _one_server(release, p, utilities, up=0.0):
    """An instance on one edge server (type 0), no cloud."""
    J = len(release)
    col = np.full((J, 1), up)
    jobs = UtilityJobs(np.array(release, dtype=float), np.array(p, dtype=float)[:, None], col, col,
                       np.array(p, dtype=float)[:, None], col, col, tuple(utilities))
    preset = SimpleNamespace(servers=SimpleNamespace(speed=1.0), env=SimpleNamespace(dispatch_latency_s=0.0),
                             scheduler=SimpleNamespace(cloud="infinite"))
    return SimpleNamespace(jobs=jobs, preset=preset, server_type=np.zeros(1, dtype=np.int64), num_edge_servers=1,
                           has_cloud=False)


def test_two_jobs_one_server_hand_computed():
    # two jobs released together on one server, 1 s of work each, linear utilities 10 - t and 10 - 2t: the
    # optimum runs the steeper one first (JRTs 1 and 2): 8 + 8 = 16; the other order gives 6 + 9 = 15. The no-queue
    # bound (both JRTs 1) is 9 + 8 = 17. The burst LP is a fluid relaxation: the steeper job completes by 1 (8), the
    # other spreads its completion uniformly over (1, 2] (at most 1 s of work by time t), on average 8.5: 16.5, plus
    # at most one bin width of slope 1 (credits are taken at the bins' starts; past 1 s the bins are 16 x 0.01 s)
    env = _one_server([0.0, 0.0], [1.0, 1.0], [linear(1.0, 10.0), linear(2.0, 10.0)])
    b = offline_bound(env)
    assert b.parts["no-queue"] == pytest.approx(17.0)
    lp = burst_lp_upper_bound(env, min_group=2)
    assert 16.5 - 1e-6 <= lp <= 16.5 + 0.16
    assert b.value == pytest.approx(b.parts["no-queue"])  # a group of 2 is below min_group: no LP by default


def test_deadlines_that_cannot_both_be_met():
    # two all-or-nothing jobs of 1 s with deadline 1.5 s released together on one server: one of them misses it, the
    # optimum is 5, the no-queue bound 8. The fluid LP fits 1.5 s of work before the deadline (the 5-point job and
    # half of the other, 6.5), plus at most one 0.16 s bin of work past it
    env = _one_server([0.0, 0.0], [1.0, 1.0], [aon(5.0, 1.5), aon(3.0, 1.5)])
    assert offline_bound(env).parts["no-queue"] == pytest.approx(8.0)
    assert 6.5 - 1e-6 <= burst_lp_upper_bound(env, min_group=2) <= 5.0 + 3.0 * (0.5 + 0.16) + 1e-6


def test_time_bins_checks_its_arguments():
    assert time_bins(0.5)[0] == 0.0 and time_bins(0.5)[-1] >= 0.5
    with pytest.raises(ValueError, match="horizon_s"):
        time_bins(0.0)
