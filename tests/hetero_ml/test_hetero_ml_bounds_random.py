"""The HeteroML offline bound (edgegym.families.hetero_ml.bounds.offline_bound) against every shipped policy.

On 200 small random instances (the tiny PS and Ring-AllReduce presets with random cluster and workload overrides and
seeds) no registered HeteroML policy (reservation and slot-driven alike) ends an episode below the bound, nor below
any of its finite parts; the rollout policies (resampled and clairvoyant forks, small K/H) run on the first 30 of
them (they cost ~5x an ordinary episode). The hand-computed instances of the A_online and baseline tests check the
bound against their known optima.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from edgegym.agents.registry import policy_names
from edgegym.agents.runner import run_episode
from edgegym.core.bounds import family_bound
from edgegym.families.hetero_ml import FAMILY
from edgegym.families.hetero_ml.bounds import offline_bound, pooled_lp_lower_bound, standalone_lower_bound
from edgegym.families.hetero_ml.testing import hand_cluster, hand_jobs

N_INSTANCES = 200
N_ROLLOUT = 30
ROLLOUTS = ("rollout(K=1,H=4,k=3):earliest", "rollout(K=1,H=4,k=3,clairvoyant=1):earliest",
            "rollout(K=2,H=3,k=3):fifo", "rollout(K=1,H=4,k=3):drf-static", "rollout(K=1,H=4,k=3):single-worker",
            "rollout(K=1,H=4,k=3):random")


def _instance(i: int) -> tuple[str, dict, int]:
    """Instance ``i``: (env id, config overrides, seed), drawn from an explicit seed."""
    rng = np.random.default_rng(10_000 + i)
    env_id = "HeteroML-tiny-v0" if i % 2 == 0 else "HeteroML-tiny-ra-v0"
    lo_e, lo_c, lo_b = (int(x) for x in rng.integers(1, 4, size=3))
    config = {
        "cluster": {"num_servers": int(rng.integers(1, 4))},
        "workload": {
            "num_jobs": int(rng.integers(3, 13)),
            "horizon_slots": int(rng.integers(2, 17)),
            "epochs": [lo_e, lo_e + int(rng.integers(0, 4))],
            "chunks": [lo_c, lo_c + int(rng.integers(0, 5))],
            "batches": [5 * lo_b, 5 * lo_b + int(rng.integers(0, 20))],
            "weight": [float(rng.uniform(1, 100)), float(rng.uniform(100, 5000))],
            "minibatch_time_slots": [0.01, float(rng.uniform(0.02, 0.1))],
        },
    }
    return env_id, config, int(rng.integers(0, 2**31))


def _check(env_id: str, config: dict, seed: int, policies) -> tuple[int, bool]:
    """Run ``policies`` on one instance; returns (episodes checked, whether the LP part was the larger one)."""
    got: dict = {}

    def grab(env, rec):
        u = env.unwrapped
        key = (u.jobs.arrival.tobytes(), u.jobs.work.tobytes(), u.jobs.weight.tobytes(), u.cluster.capacity.tobytes())
        if "bound" not in got:
            got["bound"], got["key"] = offline_bound(u), key
        assert key == got["key"], f"{rec['policy']}: another instance than the bound's on {env_id} seed {seed}"

    n = 0
    for policy in policies:
        rec = run_episode(env_id, policy, seed, config, on_end=grab)
        b = got["bound"]
        for name, value in {**b.parts, "value": b.value}.items():
            if math.isfinite(value):
                assert value <= rec["objective"] * (1 + 1e-9), (
                    f"{policy} beats the bound part {name!r} on {env_id} {config} seed {seed}: "
                    f"{rec['objective']} < {value}")
        n += 1
    return n, got["bound"].parts["pooled LP"] > got["bound"].parts["standalone"]


@pytest.mark.slow  # ~25 s on a 2-core machine: deselected by default, run by CI (``-m slow``)
def test_no_policy_beats_the_bound_on_200_random_instances():
    policies = policy_names("HeteroML")
    episodes = lp_wins = 0
    for i in range(N_INSTANCES):
        env_id, config, seed = _instance(i)
        n, lp = _check(env_id, config, seed, policies + (list(ROLLOUTS) if i < N_ROLLOUT else []))
        episodes += n
        lp_wins += lp
    assert episodes == N_INSTANCES * len(policies) + N_ROLLOUT * len(ROLLOUTS)
    assert lp_wins > 0  # the contention part, not only the standalone one, is exercised


def test_family_declares_the_bound():
    assert family_bound(FAMILY) is offline_bound


@pytest.mark.parametrize("arch", ["ps", "ra"])
def test_single_job_hand_computed_optimum(arch):
    # W = 40, v = 0.1, U = 1e-5: alone, co-located with N = 2 workers it needs 3 slots: arrival 1, completion 4, the
    # optimum (test_hetero_ml_aonline.test_hand_computed_single_job); no schedule does better, and the bound is tight
    inst = SimpleNamespace(cluster=hand_cluster(arch, 1), jobs=hand_jobs())
    b = offline_bound(inst)
    assert b.value == pytest.approx(1000.0 * 4)
    assert b.sense == "lower" and b.parts["pooled LP"] <= b.value + 1e-6


def test_two_conflicting_jobs_hand_computed():
    # one server: the two jobs (2 workers + 1 PS each, 5.1 Gbps of 10) cannot overlap, each needs 3 slots; the optimum
    # runs the heavier job first: 2000 * 4 + 1000 * 7 = 15000. Standalone: both complete at 4 = 12000.
    inst = SimpleNamespace(cluster=hand_cluster("ps", 1), jobs=hand_jobs(arrivals=(1, 1), weights=(1000.0, 2000.0)))
    b = offline_bound(inst)
    assert b.parts["standalone"] == pytest.approx(12000.0)
    assert 12000.0 - 1e-6 <= b.value <= 15000.0


def test_preemptive_tiresias_hand_computed():
    # the preemption instance of test_hetero_ml_policies: Tiresias completes job 1 at 5 and job 0 at 13
    base = hand_jobs(arrivals=(1, 2), weights=(1000.0, 1000.0))
    from edgegym.families.hetero_ml.simulator import HeteroJobs

    jb = HeteroJobs(base.arrival, base.weight, [8, 2], base.chunks, base.batches, base.v, base.ps_update,
                    base.ra_update, base.grad_mb)
    c = hand_cluster("ps", 1)
    assert offline_bound(SimpleNamespace(cluster=c, jobs=jb)).value <= 1000.0 * (5 + 13)
    assert pooled_lp_lower_bound(c, jb) <= 1000.0 * (5 + 13)


def test_standalone_part_is_at_least_the_env_lower_bound():
    # the env's simple bound takes every run co-located; the standalone part only those that fit one server
    import gymnasium as gym

    env = gym.make("HeteroML-tiny-v0")
    env.reset(seed=3)
    u = env.unwrapped
    assert standalone_lower_bound(u.cluster, u.jobs) >= u.lower_bound() * (1 - 1e-12)


def test_no_jobs_is_an_error():
    c, jb = hand_cluster("ps", 1), hand_jobs()
    from edgegym.families.hetero_ml.simulator import HeteroJobs

    empty = HeteroJobs(jb.arrival[:0], jb.weight[:0], jb.epochs[:0], jb.chunks[:0], jb.batches[:0], jb.v[:0],
                       jb.ps_update[:0], jb.ra_update[:0], jb.grad_mb[:0])
    with pytest.raises(ValueError, match="no job"):
        pooled_lp_lower_bound(c, empty)
