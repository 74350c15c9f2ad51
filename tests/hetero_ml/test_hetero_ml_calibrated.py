"""HeteroML calibrated presets, the practical A_online variant, and behaviour at extreme capacity settings."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import edgegym
from edgegym.agents.reference.hetero_ml import AOnlineHeteroNow
from edgegym.agents.runner import run_episode
from edgegym.families.hetero_ml.disciplines import run_slot_driver
from edgegym.families.hetero_ml.instance import IdealConfig, build_instance, ideal_configs, type_tables
from edgegym.families.hetero_ml.mincost import SubRound, mincost, mincost_reference
from edgegym.families.hetero_ml.placement import place
from edgegym.families.hetero_ml.presets import load_preset
from edgegym.families.hetero_ml.simulator import check_structure

#: calibrated presets and the band their offered load is stated to lie in (ps.yaml: "offered load 2.0")
CALIBRATED = {"ps": (1.9, 2.1), "ra": (1.9, 2.1), "rl": (1.9, 2.1)}


@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_offered_load_of_calibrated_presets_in_band(name):
    p = load_preset(name)
    assert p.cluster.load == 2.0 and p.cluster.kappa is None
    assert p.workload.minibatch_model == "by_type"
    lo, hi = CALIBRATED[name]
    for seed in range(3):
        inst = build_instance(p, np.random.default_rng(seed))
        assert lo <= inst.offered_load <= hi, (name, seed, inst.offered_load)


@pytest.mark.parametrize("name", ["ps-paper-literal", "ra-paper-literal"])
def test_literal_presets_keep_the_light_load(name):
    p = load_preset(name)
    assert p.cluster.kappa == 0.35 and p.cluster.load is None and p.workload.minibatch_model == "independent"
    loads = [build_instance(p, np.random.default_rng(s)).offered_load for s in range(3)]
    assert all(0.3 < x < 0.45 for x in loads), loads


def test_offered_load_in_episode_metrics_and_ids():
    IDS = edgegym.registered_ids()
    assert {"HeteroML-ps-paper-literal-v0", "HeteroML-ra-paper-literal-v0"} <= set(IDS)
    assert "HeteroML-ps-paper-literal-v1" not in IDS
    r = run_episode("HeteroML-tiny-v0", "earliest", 0)
    assert r["offered_load"] > 0


def test_kappa_and_load_are_alternatives():
    p = load_preset("ps")
    q = p.replace(cluster={"kappa": 0.5})  # overriding one drops the other
    assert q.cluster.kappa == 0.5 and q.cluster.load is None
    assert load_preset("ps-paper-literal").replace(cluster={"load": 3.0}).cluster.kappa is None
    from edgegym.families.hetero_ml.presets import preset_from_dict

    with pytest.raises(ValueError, match="cluster.load"):
        preset_from_dict({"name": "x", "cluster": {"kappa": 0.3, "load": 2.0}})


def test_minibatch_time_tied_to_gpus():
    p = load_preset("ps")
    inst = build_instance(p, np.random.default_rng(0))
    e, _ = type_tables(p)
    gpus = e[:, 0]
    v = inst.jobs.v
    # more GPUs: faster, for every job (the +-10% spread cannot reverse a 1.5x step)
    one, two, four = v[:, gpus == 1].max(axis=1), v[:, gpus == 2], v[:, gpus == 4].max(axis=1)
    assert np.all(two.max(axis=1) < one) and np.all(four < two.min(axis=1))
    ratio = v[:, gpus == 1].mean(axis=1) / v[:, gpus == 2].mean(axis=1)
    assert np.all((ratio > 1.5 * 0.9 / 1.1) & (ratio < 1.5 * 1.1 / 0.9))


def test_proportional_weights_are_proportional():
    p = load_preset("tiny").replace(workload={"weights": "proportional"})
    inst = build_instance(p, np.random.default_rng(3))
    cbar = np.array([16, 64, 732, 25.0])
    rt = (inst.ideal.demand / cbar).sum(axis=1) * inst.ideal.duration
    ratio = inst.jobs.weight / rt
    assert np.allclose(ratio, ratio[0])
    assert inst.jobs.weight.mean() == pytest.approx(2600.0)


def test_trivial_policies_not_within_two_percent_of_the_best_reference():
    """A degenerate benchmark (a trivial policy as good as the best reference or baseline policy) fails here
    (calibrated RL-sized preset, seeds 0 and 1 summed; the 150-server default is measured by the reproduction)."""

    def total(policy):
        return sum(run_episode("HeteroML-rl-v0", policy, s)["objective"] for s in (0, 1))

    best = min(total(p) for p in ("aonline-hetero-now", "tiresias", "drf", "fifo"))
    for trivial in ("random", "single-worker", "earliest"):
        obj = total(trivial)
        assert obj > 1.02 * best, (trivial, obj, best)


# ---------------------------------------------------------------------------------------------- aonline-hetero-now


@pytest.mark.parametrize("env_id", ["HeteroML-tiny-v0", "HeteroML-tiny-ra-v0"])
def test_now_variant_invariants(env_id):
    env = gym.make(env_id)
    for seed in (0, 1):
        env.reset(seed=seed)
        pol = AOnlineHeteroNow(env)
        pol.reset(seed)
        u = env.unwrapped
        done = False
        while not done:
            v = u.view()
            pl = pol.act(None)
            assert pl.start >= v.decision_time >= v.jobs.arrival[v.step]  # never before the arrival
            assert check_structure(v.cluster, v.jobs, v.step, pl) is None
            free = u.free_over(pl.start, pl.start + pl.duration)
            from edgegym.families.hetero_ml.simulator import footprint

            f = footprint(v.cluster, pl.worker_type, pl.ps_type, pl.workers, pl.ps)
            assert np.all(f <= free + 1e-9)  # legal against the committed schedule
            _, _, done, _, info = env.step(pl)
            assert info["start"] == pl.start  # the env committed it unchanged
    assert u.episode_metrics()["illegal_actions"] == 0


def test_now_variant_is_the_default_policy():
    from edgegym.agents.runner import default_policy

    assert default_policy("HeteroML-v0") == "aonline-hetero-now"


@pytest.mark.parametrize("name", ["tiny", "tiny-ra"])
def test_completion_first_kernel_equals_pseudocode(name):
    p = load_preset(name)
    found = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        inst = build_instance(p, rng)
        c = inst.cluster
        tau = int(rng.choice([8, 16]))
        used = rng.uniform(0, 1, size=(c.num_servers, c.num_resources, tau)) * c.capacity[:, :, None] * rng.uniform()
        used[:, :2] = np.floor(used[:, :2])
        S = SubRound(c, tau, 1, 1e3, init_used=used)
        for j in range(inst.jobs.num_jobs):
            thr = float(inst.jobs.weight[j]) * float(rng.choice([1e-2, 1.0, 100.0]))
            a = mincost(S, inst.jobs, j, thr, "completion_first")
            b = mincost_reference(S, inst.jobs, j, thr, "completion_first")
            assert (a is None) == (b is None)
            if a is None:
                continue
            found += 1
            assert a.completion == b.completion and a.cost == pytest.approx(b.cost, rel=1e-9, abs=1e-12)
            # min_completion skips exactly the candidates completing at or before it
            same = mincost(S, inst.jobs, j, thr, "completion_first", min_completion=a.completion - 1)
            assert same is not None and same.completion == a.completion
            later = mincost(S, inst.jobs, j, thr, "completion_first", min_completion=a.completion)
            assert later is None or later.completion > a.completion
    assert found > 10


def test_now_variant_at_least_as_good_as_fifo_on_the_calibrated_rl_preset():
    for seed in (0, 1):
        now = run_episode("HeteroML-rl-v0", "aonline-hetero-now", seed)["objective"]
        fifo = run_episode("HeteroML-rl-v0", "fifo", seed)["objective"]
        assert now <= fifo, (seed, now, fifo)


# ---------------------------------------------------------------------------------------------- masks, extreme load


def test_action_masks_before_reset_raises():
    env = gym.make("HeteroML-tiny-v0")
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.action_masks()
    env.reset(seed=0)
    assert env.unwrapped.action_masks().any()


#: capacity factor 0.03 (the instance key that scales capacity) on a small instance: jobs' ideal worker types do
#: not fit any server
EXTREME = {"cluster": {"kappa": 0.03, "num_servers": 4, "calibration_jobs": 8},
           "workload": {"num_jobs": 8, "horizon_slots": 12}}


def test_extreme_load_ideal_configurations_fit_an_empty_server():
    p = load_preset("ps-paper-literal").replace(**EXTREME)
    inst = build_instance(p, np.random.default_rng(0))
    e, z = type_tables(p)
    raw = ideal_configs("ps", e, z, 3, inst.jobs)
    c = inst.cluster
    assert any(place(c, c.capacity, int(m), int(q), 1) is None for m, q in zip(raw.worker_type, raw.ps_type,
                                                                               strict=True))
    for m, q in zip(inst.ideal.worker_type, inst.ideal.ps_type, strict=True):  # the documented rule
        assert place(c, c.capacity, int(m), int(q), 1) is not None


@pytest.mark.parametrize("policy", ["fifo", "tiresias", "drf", "antman", "single-worker", "earliest"])
def test_extreme_load_policies_finish(policy):
    r = run_episode("HeteroML-ps-paper-literal-v0", policy, 0, EXTREME)
    assert r["offered_load"] > 10 and np.isfinite(r["objective"]) and r["makespan"] > 0


def test_slot_driver_stops_on_a_job_that_cannot_run():
    p = load_preset("ps-paper-literal").replace(**EXTREME)
    inst = build_instance(p, np.random.default_rng(0))
    e, z = type_tables(p)
    raw = ideal_configs("ps", e, z, 3, inst.jobs)  # some ideal types do not fit any server here
    bad = IdealConfig(raw.worker_type, raw.ps_type, raw.workers, raw.ps, raw.duration, raw.demand)
    for disc in ("tiresias", "drf"):
        with pytest.raises(RuntimeError, match="cannot run even on an empty cluster"):
            run_slot_driver(inst.cluster, inst.jobs, bad, p.env, disc)


def test_drf_place_calls_per_slot_bounded():
    """DRF's per-slot work does not grow with the number of waiting jobs (a job with no room is skipped)."""
    import edgegym.families.hetero_ml.disciplines as D

    p = load_preset("ps-paper-literal").replace(
        cluster={"kappa": 0.03, "num_servers": 6, "calibration_jobs": 16},
        workload={"num_jobs": 16, "horizon_slots": 16})
    inst = build_instance(p, np.random.default_rng(1))
    calls = [0]
    orig = D.place

    def counting(*a, **k):
        calls[0] += 1
        return orig(*a, **k)

    D.place = counting
    try:
        r = run_slot_driver(inst.cluster, inst.jobs, inst.ideal, p.env, "drf")
    finally:
        D.place = orig
    slots = int(r.completion.max())
    held = int(inst.cluster.capacity[:, 0].sum())  # at most this many one-GPU workers run at once
    assert calls[0] <= slots * (held + 2) + 16 * 50
