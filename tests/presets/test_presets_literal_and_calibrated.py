"""Issue 9: literal and calibrated presets of EdgeCloudML and EdgeUtility.

* the ``*-paper-literal`` presets reproduce the first release's numbers exactly (regression, one seed);
* the calibrated defaults are not degenerate (A_online well ahead of the trivial policies; EdgeUtility's
  policies separate), checked on short episodes (the full-length tables are in docs/results/reproduce_edge_cloud.md
  and reproduce_edge_utility.md);
* ``load`` is offered utilisation, the m_j unit and the baselines' gang size are config, fallbacks count
  every job with no qualified edge worker, Table I estimates, consistent delay scaling, and a preemption
  is counted only when the displaced job had run.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from edgegym.agents.runner import run_episode

from edgegym.families.edge_cloud.instance import build_instance, offered_load
from edgegym.families.edge_cloud.presets import discipline_kwargs, load_preset
from edgegym.families.edge_utility.disciplines import PriorityScheduler, Request
from edgegym.families.edge_utility.instance import TABLE_I_MEAN_MS, build_utility_jobs
from edgegym.families.edge_utility.presets import capacity_jobs_per_s, load_utility_preset, release_rate_per_s
from edgegym.families.edge_utility.utility_fn import constant

# --------------------------------------------------------------------------------------------------------
# Regression: the literal presets are the first release's presets (objectives measured with the code of
# commit ab1b759~1 on the old preset names `testbed`/`sim100`, seed 0; EdgeUtility on the offline bursty
# releases so the numbers do not depend on the trace folder)
# --------------------------------------------------------------------------------------------------------
_JOBS60 = {"workload": {"num_jobs": 60}}
_U300 = {"workload": {"num_jobs": 300, "source": "bursty"}}
LITERAL = [
    ("EdgeCloudML-testbed-paper-literal-v0", "aonline", None, 2620.9200855510753),
    ("EdgeCloudML-testbed-paper-literal-v0", "srtf", None, 167625.70920585378),
    ("EdgeCloudML-testbed-paper-literal-v0", "tiresias-l", None, 166681.70920585378),
    ("EdgeCloudML-testbed-paper-literal-v0", "batchsche", None, 23867.229437526126),
    ("EdgeCloudML-testbed-paper-literal-v0", "all-cloud", None, 2539.275432495358),
    ("EdgeCloudML-sim100-paper-literal-v0", "aonline", _JOBS60, 4281.268284154284),
    ("EdgeCloudML-sim100-paper-literal-v0", "srtf", _JOBS60, 253724.21736447813),
    ("EdgeUtility-testbed-paper-literal-v0", "o4a", _U300, 17741.03043316538),
    ("EdgeUtility-testbed-paper-literal-v0", "ondisc", _U300, 18048.243553363303),
    ("EdgeUtility-testbed-paper-literal-v0", "random", _U300, 16895.389491825594),
    ("EdgeUtility-sim300-paper-literal-v0", "o4a", _U300, 16691.744684087556),
]


@pytest.mark.parametrize("env_id,policy,config,expected", LITERAL)
def test_literal_presets_reproduce_the_first_release(env_id, policy, config, expected):
    assert run_episode(env_id, policy, 0, config)["objective"] == pytest.approx(expected, rel=1e-9)


def test_literal_presets_keep_the_literal_readings():
    sim = load_preset("sim100-paper-literal")
    assert sim.job_model.minibatch_time_unit == "hour" and sim.job_model.minibatch_time_h == (0.001, 0.05)
    assert sim.workload.horizon_slots == 2500 and sim.workload.load is None
    assert sim.baselines.gang_size == "trace_gpus"
    u = load_utility_preset("sim300-paper-literal")
    assert u.servers.cloud and u.scheduler.cloud == "infinite" and u.workload.time_scale == 15.0


# --------------------------------------------------------------------------------------------------------
# Calibrated defaults: not degenerate (short episodes; properties, not a tuned winner)
# --------------------------------------------------------------------------------------------------------
def test_edgecloud_default_is_not_degenerate():
    cfg = {"workload": {"num_jobs": 100}}
    jct = {p: run_episode("EdgeCloudML-v0", p, 0, cfg)["total_jct"] for p in
           ("aonline", "all-cloud", "all-edge", "random", "srtf", "tiresias-l", "batchsche")}
    for trivial in ("all-cloud", "all-edge", "random"):
        assert jct["aonline"] <= 0.8 * jct[trivial], (trivial, jct)
    for baseline in ("srtf", "tiresias-l", "batchsche"):
        assert jct["aonline"] < jct[baseline], (baseline, jct)
    assert jct["srtf"] != pytest.approx(jct["tiresias-l"], rel=1e-3)


def test_edgeutility_default_separates_policies():
    cfg = {"workload": {"num_jobs": 600}}
    util = {p: run_episode("EdgeUtility-v0", p, 0, cfg)["total_utility"] for p in ("o4a", "do4a", "ondisc", "random")}
    best = max(util.values())
    assert best >= 1.04 * util["random"], util  # >= 10% on the full 2000-job episodes (reproduce_edge_utility.md)
    assert max(util.values()) / min(util.values()) > 1.01, util


def test_default_ids_are_the_calibrated_presets():
    from edgegym.envs import env_info

    assert env_info("EdgeCloudML-v0").preset == "sim100"
    assert env_info("EdgeUtility-v0").preset == "testbed-stressed"


# --------------------------------------------------------------------------------------------------------
# EdgeCloudML knobs
# --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("load", [0.25, 0.5, 2.0])
def test_load_is_offered_edge_utilisation(load):
    p = load_preset("testbed").replace(workload={"load": load})
    for seed in range(3):
        cl, jobs = build_instance(p, np.random.default_rng(seed))
        # Σ D_j p0_j / (W · arrival span); the span is floored to whole slots, hence the tolerance
        assert offered_load(jobs, cl) == pytest.approx(load, rel=0.02)


def test_load_and_horizon_are_alternatives():
    p = load_preset("sim100")
    assert p.workload.load == 0.5 and p.workload.horizon_slots is None
    q = p.replace(workload={"horizon_slots": 400})  # an override of one replaces the other
    assert q.workload.load is None and q.workload.horizon_slots == 400
    with pytest.raises(ValueError, match="workload.load"):
        load_preset("sim100").replace(workload={"horizon_slots": 400, "load": 0.5})


def test_minibatch_time_unit_is_a_reading_of_the_same_numbers():
    lit, cal = load_preset("sim100-paper-literal"), load_preset("sim100")
    assert cal.job_model.minibatch_time == lit.job_model.minibatch_time_h == (0.001, 0.05)
    assert cal.job_model.minibatch_time_h == pytest.approx((0.001 / 60, 0.05 / 60))
    assert load_preset("testbed").job_model.minibatch_time_h == pytest.approx((0.001 / 3600, 0.05 / 3600))
    with pytest.raises(ValueError, match="minibatch_time_unit"):
        lit.replace(job_model={"minibatch_time_unit": "fortnight"})


def test_baseline_knobs_reach_the_disciplines():
    p = load_preset("sim100")
    assert discipline_kwargs(p) == {}
    t = p.replace(env={"discipline": "tiresias_l"}, baselines={"tiresias_thresholds": [5.0, 50.0]})
    assert discipline_kwargs(t) == {"gang_size": "chunks", "thresholds": (5.0, 50.0), "theta1_factor": 0.5,
                                    "starvation_kappa": None}
    b = p.replace(env={"discipline": "batchsche"}, baselines={"batchsche_max_interval_slots": 24})
    assert discipline_kwargs(b) == {"max_interval_slots": 24}
    with pytest.raises(ValueError, match="baselines.gang_size"):
        p.replace(baselines={"gang_size": "all"})


def test_gang_size_chunks_vs_trace_gpus():
    cfg = {"workload": {"num_jobs": 20}}
    chunks = run_episode("EdgeCloudML-testbed-v0", "srtf", 0, cfg)
    gpus = run_episode("EdgeCloudML-testbed-v0", "srtf", 0, {**cfg, "baselines": {"gang_size": "trace_gpus"}})
    assert chunks["total_jct"] < gpus["total_jct"]  # one chunk per worker instead of (mostly) one worker per job


def test_fallbacks_count_jobs_with_no_qualified_edge_worker():
    import gymnasium as gym

    # tiny: every edge worker is of type 0; make job 1 need type 1 (no edge worker has it): it must go to the cloud
    env = gym.make("EdgeCloudML-tiny-v0", config={"cluster": {"num_worker_types": 2, "worker_types": [0, 0],
                                                              "worker_type_bandwidth_mbps": [16.0, 16.0]}})
    u = env.unwrapped
    u.reset(seed=0)
    jobs = dataclasses.replace(u.jobs, worker_type=np.array([0, 1, 0]))
    from edgegym.families.edge_cloud.env import EdgeCloudMLEnv

    env = EdgeCloudMLEnv(u.preset, instance=(u.cluster, jobs))
    from edgegym.agents.reference.aonline import AOnline

    pol = AOnline(env, edge_only=True)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, info = env.step(pol.predict(obs)[0])
    assert info["episode_metrics"]["fallbacks"] == 1  # job 1 only (it had no qualified edge worker)


# --------------------------------------------------------------------------------------------------------
# EdgeUtility knobs
# --------------------------------------------------------------------------------------------------------
def test_capacity_and_load_by_hand():
    p = load_utility_preset("testbed")
    nano = (245 + 317 + 84 + 81 + 125 + 124 + 71 + 70 + 73) / 9 / 1000  # mean Table I time, s
    pi = (141 + 195 + 37 + 35 + 59 + 59 + 29 + 28 + 29) / 9 / 1000
    assert capacity_jobs_per_s(p) == pytest.approx(10 / nano + 10 / pi)
    assert release_rate_per_s(p) == pytest.approx(15.0, abs=0.05)  # the paper's rate: load 0.0674
    s = load_utility_preset("testbed-stressed")
    assert release_rate_per_s(s) == pytest.approx(capacity_jobs_per_s(s))
    lit = load_utility_preset("testbed-paper-literal")
    assert release_rate_per_s(lit) == 600.0  # 15 jobs/s x load_scale 40
    # a finite cloud adds one processor at 0.5 x the faster device's mean
    c = load_utility_preset("sim300-cloud")
    assert capacity_jobs_per_s(c) - capacity_jobs_per_s(load_utility_preset("sim300")) == pytest.approx(1 / (0.5 * pi))


def test_load_sets_the_episode_release_rate():
    import gymnasium as gym

    env = gym.make("EdgeUtility-v0", config={"workload": {"num_jobs": 300, "source": "poisson", "load": 0.5}})
    env.reset(seed=1)
    r = env.unwrapped.jobs.release_s
    assert (r.size - 1) / r[-1] == pytest.approx(0.5 * capacity_jobs_per_s(env.unwrapped.preset), rel=0.15)


def test_table_mean_estimates_and_scaled_delays():
    kw = dict(families=("linear",), time_scale=3.0, delay_scale=3.0)
    st = np.array([0, 1])
    exact = build_utility_jobs(np.random.default_rng(0), np.zeros(50), st, True, **kw)
    tm = build_utility_jobs(np.random.default_rng(0), np.zeros(50), st, True, estimate="table_mean", **kw)
    assert np.array_equal(exact.p_s, tm.p_s) and np.array_equal(exact.p_est_s, exact.p_s)  # same truth
    assert np.allclose(tm.p_est_s[:, :2], TABLE_I_MEAN_MS[tm.model][:, st] / 1000 * 3.0)
    assert not np.allclose(tm.p_est_s, tm.p_s)
    assert exact.up_s[:, :2].min() >= 5e-3 * 3.0 and exact.up_s[:, :2].max() <= 50e-3 * 3.0
    assert exact.up_s[:, 2].min() >= 0.1 * 3.0


def test_sim300_calibrated_has_no_cloud_and_cloud_variant_is_finite():
    s, c = load_utility_preset("sim300"), load_utility_preset("sim300-cloud")
    assert not s.servers.cloud and s.workload.time_scale == 1.0 and s.workload.load == 1.0
    assert c.servers.cloud and c.scheduler.cloud == "same" and c.network.scale_delays


def _req(job, p, release=0.0):
    return Request(job, release, release, p, 0.0, 0.0, p, 0.0, 0.0, constant(1.0))


def test_preemption_counted_only_when_displaced_job_had_run():
    srv = PriorityScheduler("srpt")
    srv.admit(_req(0, 2.0), 0.0)
    srv.advance(0.0)  # job 0 picked at t = 0, no progress yet
    srv.admit(_req(1, 1.0), 0.0)  # a shorter job arrives at the same instant
    done = srv.advance(10.0)
    assert [q.id for _, q in done] == [1, 0]
    assert srv.preemptions == 0  # job 0 never ran before job 1 displaced it
    srv2 = PriorityScheduler("srpt")
    srv2.admit(_req(0, 2.0), 0.0)
    srv2.advance(0.5)  # job 0 runs for 0.5 s
    srv2.admit(_req(1, 1.0, release=0.5), 0.5)
    srv2.advance(10.0)
    assert srv2.preemptions == 1
