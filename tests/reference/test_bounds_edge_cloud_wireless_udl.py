"""The offline bounds of EdgeCloudML and WirelessUDL (``edgegym.families.<key>.bounds``): by hand on the hand-computed
instances, and on 200 small random instances per family against every shipped policy of the family, the rollout
policy and its clairvoyant fork variant included (the cheap policies on all 200 instances, the rollout ones on every
tenth): no policy beats the bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from edgegym.agents.registry import policy_names
from edgegym.agents.runner import policy_env_config, run_episode

from edgegym.core.bounds import Bound, family_bound
from edgegym.families import family

N_INSTANCES = 200
ROLLOUT_EVERY = 10  # the rollout policies (a few forks per decision) on every tenth instance


def _violations(env_id: str, cfg: dict, seed: int, bound: Bound, policies, part_for=lambda p: None) -> list:
    """Every (policy, objective, bound) where the policy's episode beats the bound (``part_for(policy)``: the part
    of the bound that applies to that policy, where not the whole bound)."""
    out = []
    for pol in policies:
        obj = run_episode(env_id, pol, seed, cfg)["objective"]
        part = part_for(pol)
        b = bound if part is None else Bound(bound.parts[part], part, bound.sense, {})
        if not b.respected_by(obj):
            out.append((env_id, cfg, seed, pol, obj, b.value))
    return out


def _bound_of(env_id: str, cfg: dict, seed: int, **kw) -> Bound:
    import gymnasium as gym

    env = gym.make(env_id, config=cfg)
    env.reset(seed=seed)
    fam = family(env.unwrapped.preset.family)
    b = family_bound(fam)(env.unwrapped, **kw)
    env.close()
    return b


# ------------------------------------------------------------------------------------------------ EdgeCloudML
EC_ID = "EdgeCloudML-testbed-v0"


def _ec_config(rng: np.random.Generator) -> dict:
    """A small random EdgeCloudML instance: 1-3 servers of 1-3 workers, 1-2 worker types, cloud or not, 2-8 jobs at
    offered load 0.3-3, continuous or slotted time."""
    S, wps, cloud = int(rng.integers(1, 4)), int(rng.integers(1, 4)), bool(rng.random() < 0.8)
    types = int(rng.integers(1, 3)) if cloud else 1  # without the cloud every job needs a worker of its type
    return {
        "cluster": {"num_edge_servers": S, "workers_per_server": wps, "ps_per_server": wps, "worker_types": None,
                    "num_worker_types": types, "worker_type_bandwidth_mbps": [1000.0] * types,
                    "cloud": cloud},
        "workload": {"num_jobs": int(rng.integers(2, 9)), "load": float(rng.uniform(0.3, 3.0))},
        "env": {"slotted": bool(rng.random() < 0.25)},
    }


def _in_simulator(pol: str) -> bool:
    """True when ``pol`` places chunks in the env's own simulator (not a gang-scheduled baseline discipline)."""
    return policy_env_config(EC_ID, pol).get("env", {}).get("discipline", "paper") == "paper"


def test_edge_cloud_bound_by_hand():
    """The tiny preset (tests/envs/test_tiny_hand_computed.py): A (D = 2, p = 4, Δ = [1, 2], cloud 10 + 4): alone
    one chunk per worker ends at max(1 + 4, 2 + 4) = 6; B (D = 1, p = 2, Δ = 1): 3; C (cloud 2 + 1.5 = 3.5 against
    1 + 3 on the edge): 3.5. Σ = 12.5, below the 13.5 of the hand-computed schedule."""
    b = _bound_of("EdgeCloudML-tiny-v0", {}, 0)
    assert b.sense == "lower" and b.name == "standalone JCT"
    assert b.value == pytest.approx(12.5) and b.parts["standalone"] == pytest.approx(12.5)
    assert math.isnan(b.parts["LP"])  # continuous time: no LP part
    assert b.respected_by(13.5) and not b.respected_by(12.4)
    for pol in policy_names("EdgeCloudML"):
        assert b.respected_by(run_episode("EdgeCloudML-tiny-v0", pol, 0)["objective"]), pol


def test_edge_cloud_edge_floor_by_hand():
    """Chunk by chunk: 3 chunks of p = 2 on workers released at 0 and 1 → {2, 4, 6} ∪ {3, 5, 7}: the 3rd smallest
    is 4; gang: g = 1: 0 + 6, g = 2: 1 + 3 = 4. A lone worker: 3 chunks back to back, 0 + 6."""
    from edgegym.families.edge_cloud.bounds import edge_floor

    assert edge_floor(np.array([1.0, 0.0]), 2.0, 3) == pytest.approx(4.0)
    assert edge_floor(np.array([0.0, 0.0]), 2.0, 3) == pytest.approx(3.0)  # gang: 2 workers, 6 / 2
    assert edge_floor(np.array([0.0]), 2.0, 3) == pytest.approx(6.0)
    assert edge_floor(np.zeros(0), 2.0, 3) == math.inf


def test_edge_cloud_slotted_takes_the_lp_part():
    b = _bound_of("EdgeCloudML-tiny-v0", {"env": {"slotted": True}}, 0)
    assert b.parts["LP"] >= b.parts["standalone"] - 1e-9 and b.value == max(b.parts.values())


def test_edge_cloud_bound_is_never_beaten():
    rng = np.random.default_rng(2026)
    cheap = policy_names("EdgeCloudML")
    rollouts = ["rollout(K=1,H=3):aonline", "rollout(K=1,H=3,clairvoyant=1):aonline"]
    bad, runs = [], 0
    for n in range(N_INSTANCES):
        cfg, seed = _ec_config(rng), int(rng.integers(0, 10_000))
        b = _bound_of(EC_ID, cfg, seed)
        assert b.value > 0
        pols = cheap + (rollouts if n % ROLLOUT_EVERY == 0 else [])
        # the gang-scheduled baselines ignore ``slotted`` (continuous chunk times): the standalone part bounds them
        bad += _violations(EC_ID, cfg, seed, b, pols, lambda p: None if _in_simulator(p) else "standalone")
        runs += len(pols)
    assert runs >= N_INSTANCES * len(cheap)
    assert not bad, bad[:5]


# ------------------------------------------------------------------------------------------------ WirelessUDL
UDL_ID = "WirelessUDL-tiny-v0"


def _udl_config(rng: np.random.Generator) -> dict:
    """A small random WirelessUDL instance: 1-4 sites, 1-5 jobs, every latency cost shape, both samplings."""
    kind = str(rng.choice(["exp", "linear", "piecewise", "logistic", "mix"]))
    return {
        "cluster": {"sites": int(rng.integers(1, 5))},
        "jobs": {"count": int(rng.integers(1, 6)), "latency_cost": kind,
                 "chunks_per_site": [1, int(rng.integers(1, 7))]},
        "env": {"sampling": str(rng.choice(["complete", "proportional"]))},
    }


def test_wireless_udl_bound_by_hand():
    """One job, 2 sites, q = 0.05, δ = 10, π = 100, κ = 2, data (3, 1), room for 3 workers beside the PS
    (tests/wireless_udl/test_wireless_udl_core.py): u = min(δ, π/κ) = 10; in one slot the PS at site 0 frees
    site 0's 3 chunks, site 1's chunk pays ≥ 10·0.05 = 0.5; so LB = min(f(1) + 0.5, f(2)) = plan A's cost."""
    from edgegym.families.wireless_udl.bounds import job_bounds
    from edgegym.families.wireless_udl.instance import make_instance

    q2 = np.array([[0.0, 0.05], [0.05, 0.0]])
    for kind, f1, f2 in (("exp", 10 * math.exp(0.25), 10 * math.exp(0.5)), ("linear", 15.0, 25.0),
                         ("piecewise", 7.0, 300.0)):
        inst = make_instance(cap=[[4.0], [4.0]], q=q2, arrival=[0], kappa=2, chunk_mb=10.0, param_mb=100.0,
                             m=[[1.0]], n=[[1.0]], data=[[3, 1]], kind=kind, tau=10.0, b=5.0, tau1=7.0, tau2=300.0,
                             c=2)
        assert job_bounds(inst)[0] == pytest.approx(min(f1 + 0.5, f2))
    # two jobs with all 4 chunks at site 0 (κ = 2, 2 workers beside the PS): each can run free in one slot
    inst = make_instance(cap=[[3.0], [3.0]], q=q2, arrival=[0, 0], kappa=2, chunk_mb=10.0, param_mb=100.0,
                         m=[[1.0]], n=[[1.0]], data=[[4, 0], [4, 0]], tau=10.0)
    np.testing.assert_allclose(job_bounds(inst), [10 * math.exp(0.25)] * 2)
    # a site that holds no worker beside the PS saves nothing: every chunk pays u·qmin
    inst = make_instance(cap=[[1.0], [1.0]], q=q2, arrival=[0], kappa=2, chunk_mb=10.0, param_mb=100.0,
                         m=[[1.0]], n=[[1.0]], data=[[2, 0]], kind="linear", tau=10.0, b=0.0)
    assert job_bounds(inst)[0] == pytest.approx(2 * 10 * 0.05 + 10.0)  # two workers, L = 1


def test_wireless_udl_bound_parts_and_milp():
    """The tiny default: the MILP part (≤ 8 jobs) and the per-job part, value = the larger; skipped above the size."""
    b = _bound_of(UDL_ID, {}, 1, time_limit_s=10.0)
    assert b.value == pytest.approx(max(b.parts.values())) and b.parts["per-job"] > 0
    assert math.isfinite(b.parts["MILP"])
    small = _bound_of(UDL_ID, {}, 1, milp_max_jobs=0)
    assert math.isnan(small.parts["MILP"]) and small.value == pytest.approx(b.parts["per-job"])


def test_wireless_udl_bound_is_never_beaten():
    rng = np.random.default_rng(2027)
    cheap = policy_names("WirelessUDL")
    rollouts = ["rollout(K=1,H=3):okita-one", "rollout(K=1,H=3,clairvoyant=1):okita-one"]
    bad, runs = [], 0
    for n in range(N_INSTANCES):
        cfg, seed = _udl_config(rng), int(rng.integers(0, 10_000))
        b = _bound_of(UDL_ID, cfg, seed, milp_max_jobs=0)  # the per-job part (the MILP is checked below)
        pols = cheap + (rollouts if n % ROLLOUT_EVERY == 0 else [])
        bad += _violations(UDL_ID, cfg, seed, b, pols)
        runs += len(pols)
    assert runs >= N_INSTANCES * len(cheap)
    assert not bad, bad[:5]


def test_wireless_udl_milp_part_is_never_beaten():
    rng = np.random.default_rng(2028)
    bad = []
    for _ in range(6):
        cfg, seed = _udl_config(rng), int(rng.integers(0, 10_000))
        cfg["jobs"]["count"] = min(cfg["jobs"]["count"], 3)
        b = _bound_of(UDL_ID, cfg, seed, time_limit_s=5.0)
        bad += _violations(UDL_ID, cfg, seed, b, policy_names("WirelessUDL") + ["rollout(K=1,H=3):okita-one"])
    assert not bad, bad[:5]
