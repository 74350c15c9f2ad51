"""The load-calibrated ``sim300`` preset, the exact pruned server search of O4A / OnDisc, and the O4A run-time
semantics re-checked against the paper (zero-utility jobs, work-conserving fallback)."""

from __future__ import annotations

import numpy as np
import pytest
from edgegym.agents.baselines.edge_utility import OnDisc
from edgegym.agents.reference.o4a import O4A
from helpers import single_server_jobs

from edgegym.families.edge_utility.env import EdgeUtilityEnv
from edgegym.families.edge_utility.presets import load_utility_preset
from edgegym.families.edge_utility.simulator import O4AParams, UtilitySimulator
from edgegym.families.edge_utility.utility_fn import aon, constant


def test_sim300_is_load_calibrated():
    p = load_utility_preset("utility/sim300-paper-literal")
    w = p.workload
    assert (w.rate_per_s, w.load_scale, w.time_scale, w.num_jobs) == (100.0, 6.0, 15.0, 3000)
    assert p.num_edge_servers == 300 and p.servers.cloud
    text = open(p.source_file).read()
    assert "51.6%" in text and "seeds 0-3" in text  # the calibration measurement is documented


def test_sim300_small_episode_return_is_total_utility():
    env = EdgeUtilityEnv("utility/sim300", config={"workload": {"num_jobs": 80}, "env": {"obs_estimates": False}})
    pol = O4A(env)
    obs, _ = env.reset(seed=0)
    ret, done = 0.0, False
    while not done:
        a, _ = pol.predict(obs)
        obs, r, done, _, info = env.step(a)
        ret += r
    m = info["episode_metrics"]
    assert ret == pytest.approx(m["total_utility"], rel=1e-9)
    assert m["total_utility"] <= m["upper_bound"] + 1e-9


def _actions(env, pol, seed):
    obs, _ = env.reset(seed=seed)
    out, done = [], False
    while not done:
        a, _ = pol.predict(obs)
        out.append(int(a))
        obs, _, done, _, info = env.step(a)
    return out, info["episode_metrics"]["total_utility"]


@pytest.mark.parametrize("preset,extra", [
    ("utility/sim300", {"workload": {"num_jobs": 150, "load_scale": 40.0}}),
    ("testbed", {"workload": {"num_jobs": 150}}),
    ("testbed", {"workload": {"num_jobs": 120}, "scheduler": {"tentative_mode": "paper_literal"},
                 "estimation": {"delta": 0.2, "conservative": True}}),
])
def test_pruned_o4a_equals_exhaustive(preset, extra):
    cfg = {**extra, "scheduler": {**extra.get("scheduler", {}), "discipline": "o4a"}, "env": {"obs_estimates": False}}
    e1, e2 = EdgeUtilityEnv(preset, config=cfg), EdgeUtilityEnv(preset, config=cfg)
    assert _actions(e1, O4A(e1, prune=True), 1) == _actions(e2, O4A(e2, prune=False), 1)


@pytest.mark.parametrize("preset,extra", [
    ("utility/sim300", {"workload": {"num_jobs": 150, "load_scale": 40.0}}),
    ("testbed", {"workload": {"num_jobs": 150}, "estimation": {"delta": 0.1}}),
])
def test_pruned_ondisc_equals_exhaustive(preset, extra):
    cfg = {**extra, "scheduler": {"discipline": "srpt"}, "env": {"obs_estimates": False}}
    e1, e2 = EdgeUtilityEnv(preset, config=cfg), EdgeUtilityEnv(preset, config=cfg)
    assert _actions(e1, OnDisc(e1, prune=True), 2) == _actions(e2, OnDisc(e2, prune=False), 2)


def test_zero_utility_job_is_kept_and_overlapped_by_positive_jobs():
    """Paper Alg. 1: a job that cannot meet any positive utility gets density 0 (γ = 0, after every set); it is
    not dropped (no rejection in the model, A35) and any later positive-density job may overlap its set
    (line 18 with u_γ = 0), so it never delays a job that still has utility."""
    g = (aon(1.0, 10.0), aon(1.0, 0.5), aon(1.0, 10.0))
    jobs = single_server_jobs(np.zeros(3), [1.0, 1.0, 1.0], g)
    sim = UtilitySimulator(jobs, 1, False, "o4a", record=True)
    for k in range(3):
        sim.dispatch(k, 0)
    assert sim.plans[1].u == 0.0 and sim.plans[1].gamma == 0
    assert sim.plans[2].gamma == 1 and sim.plans[2].u > 0  # overlaps job 1's set
    assert sim.plans[2].starts[0] == pytest.approx(sim.plans[1].starts[0])
    sim.drain()
    assert sim.completed.all()  # the zero-utility job is still processed
    np.testing.assert_allclose(sim.utility, [1.0, 0.0, 1.0])
    assert sim.jrt_s[2] < sim.jrt_s[1]  # ... after the job that still had utility


@pytest.mark.parametrize("fallback", ["density", "none"])
def test_fallback_is_work_conserving(fallback):
    """p† = 1.016·p leaves a gap after a job that finishes early; the paper's practical rule ("when there are
    no jobs in their tentative intervals, jobs with lower priority will be processed") fills it (``density``),
    the theory-literal ``none`` idles until the next set starts."""
    jobs = single_server_jobs(np.zeros(2), [1.0, 1.0], (constant(1.0), constant(1.0)))
    sim = UtilitySimulator(jobs, 1, False, "o4a", o4a=O4AParams(fallback=fallback))
    sim.dispatch(0, 0)
    sim.dispatch(1, 0)
    sim.drain()
    assert sim.jrt_s[0] == pytest.approx(1.0)
    expected = 2.0 if fallback == "density" else 1.016 + 1.0
    assert sim.jrt_s[1] == pytest.approx(expected)
