"""The ``tiny`` preset, computed by hand from spec 000 (§2.3, §3.0, §3.2) — see envs_config/tiny.yaml.

Cluster: server 0 has worker w0, server 1 has worker w1 (one type), plus the cloud.
Jobs (p = E·B·τ): A (r=0, D=2, p0=p1=4, Δ=[1,2], Δc=10); B (r=1, D=1, p0=p1=2, Δ=[1,1]);
C (r=1, D=2, p0=3, p1=1.5, Δ=[1,1], Δc=2).
"""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.edge_cloud.env import EdgeCloudMLEnv


def _run(actions, mode="server_proportions"):
    env = EdgeCloudMLEnv("tiny", config={"env": {"action_mode": mode}})
    env.reset(seed=0)
    rewards, infos = [], []
    for a in actions:
        _, r, term, _, info = env.step(a)
        rewards.append(r)
        infos.append(info)
    assert term
    return env, rewards, infos


def test_hand_computed_jcts_with_preemption():
    # A: one chunk on each server. w0 runs A [1,5] (released at 0+1), w1 runs A [2,6].
    # B on server 0: key D·p = 2 < A's 8, released at 2 -> preempts A on w0: B [2,4], A resumes [4,7].
    # C entirely in the cloud (ζ=1): starts at 1+2 = 3, runs p1 = 1.5 -> 4.5.
    # JCTs: A 7, B 3, C 3.5; total 13.5. Rewards: -6 (A projected 6), -4 (B 3 + A +1), -3.5.
    f32 = np.float32
    env, rewards, infos = _run([np.array([0.5, 0.5, 0], f32), np.array([1, 0, 0], f32), np.array([0, 0, 1], f32)])
    m = infos[-1]["episode_metrics"]
    np.testing.assert_allclose(env.sim.job_end - env.jobs.arrival_slots, [7.0, 3.0, 3.5])
    assert rewards == pytest.approx([-6.0, -4.0, -3.5])
    assert m["total_jct"] == pytest.approx(13.5) and sum(rewards) == pytest.approx(-13.5)
    assert m["makespan"] == pytest.approx(7.0)
    assert m["preemptions"] == 1  # A's chunk on w0, once
    assert m["postponed_chunks"] == 1  # B's chunk postponed A's chunk on w0 (|A2| = 1)
    assert infos[2]["zeta"] is True
    assert [i["postponed_chunks"] for i in infos] == [0, 1, 0]
    assert m["cloud_jobs"] == 1
    # utilisation: busy 6 + 4 = 10 worker-slots over 2 workers × makespan 7
    assert m["utilisation"] == pytest.approx(10 / 14)


def test_hand_computed_q_values_and_greedy():
    env = EdgeCloudMLEnv("tiny")
    env.reset(seed=0)
    v = env.view()
    # Q_w = (Δ + wait + p)/D + p·Σ_{A2} 1/D' on empty workers: w0 (1+4)/2 = 2.5, w1 (2+4)/2 = 3
    np.testing.assert_allclose(v.q, [2.5, 3.0])
    assert v.qc1 == pytest.approx((10 + 4) / 2) and v.qc0 == pytest.approx(7.0)


def test_cloud_split_mode_hand_computed():
    # A: 0 to the cloud -> water-filling puts one chunk per worker (Q 2.5 then 3 < 2.5 + 4/2).
    # B: 0 to the cloud -> one chunk on the min-Q worker. At r=1 the projected remaining at t0=2:
    #   w0: A has 3 left (key 8 > 2: A2) -> Q = (1 + 0 + 2)/1 + 2·(1/2) = 4; w1 same (A rem 4 at t0=2) -> 4.
    #   Tie -> lower (server, index): w0. Same schedule as above for A and B.
    # C: 2 to the cloud with ζ = 1 (all chunks) -> 1 + 2 + 1.5 = 4.5.
    env, rewards, infos = _run([0, 0, 2], mode="cloud_split")
    np.testing.assert_allclose(env.sim.job_end - env.jobs.arrival_slots, [7.0, 3.0, 3.5])
    assert infos[1]["placement"].tolist() == [1, 0, 0]


def test_split_job_cloud_chunks_run_at_edge_rate():
    # C with one chunk on the cloud and one on the edge: ζ = 0, so its cloud chunk runs p0 = 3: ends 1+2+3 = 6.
    # Its edge chunk on w1 (server 1): released at 2; w1 holds A's chunk (key 8) and C's key is 2·3 = 6 < 8,
    # so C preempts: C runs [2,5] on w1 -> c_C = max(6, 5) = 6, JCT 5.
    f32 = np.float32
    env, _, infos = _run([np.array([0.5, 0.5, 0], f32), np.array([1, 0, 0], f32), np.array([0, 0.5, 0.5], f32)])
    assert infos[2]["zeta"] is False
    assert env.sim.job_end[2] - 1 == pytest.approx(5.0)
    # A's chunk on w1 was postponed by 3: [2,2] nothing before C -> C [2,5], A [5,9]; A's other chunk ends 7
    assert env.sim.job_end[0] == pytest.approx(9.0)
