"""HeteroML simulator: durations, feasibility (T1) and the ledger, with numbers computed by hand from spec 004 §2.3."""

import numpy as np
import pytest

from edgegym.families.hetero_ml.simulator import (
    Ledger,
    Placement,
    ReservationSim,
    comm_slots,
    duration_slots,
    iteration_slots,
    placement_duration,
    verify_schedule,
)
from edgegym.families.hetero_ml.testing import hand_cluster, hand_jobs


def test_comm_time_conversion():
    # 2 * 450 MB * 8 bit / (0.1 Gbps * 1000) = 72 s = 0.02 slot
    assert comm_slots(450.0, 0.1) == pytest.approx(0.02)
    # the spec's range check: π = 30 MB at 5 Gbps -> 2.7e-5 slot
    assert comm_slots(30.0, 5.0) == pytest.approx(480 / 5000 / 3600)  # 2.67e-5 slot


def test_ps_durations_by_hand():
    c, jb = hand_cluster("ps", 2), hand_jobs()
    # co-located: iter = 0.1 + 1e-5 ; d = ceil(40 * 0.10001 / 2) = ceil(2.0002) = 3
    assert iteration_slots(c, jb, 0, 0, 0, 2, True) == pytest.approx(0.10001)
    assert duration_slots(40, 2, 0.10001) == 3
    # spread: iter = 0.1 + 1e-5 + 0.02 ; d = ceil(40 * 0.12001 / 2) = ceil(2.4002) = 3 ; N = 1: ceil(4.8004) = 5
    assert duration_slots(40, 2, iteration_slots(c, jb, 0, 0, 0, 2, False)) == 3
    assert duration_slots(40, 1, iteration_slots(c, jb, 0, 0, 0, 1, False)) == 5
    # without the PS update time: co-located d = ceil(40 * 0.1 / 2) = 2 exactly (epsilon guard)
    jb0 = hand_jobs(update_ms=0.0)
    assert duration_slots(40, 2, iteration_slots(c, jb0, 0, 0, 0, 2, True)) == 2


def test_ra_durations_by_hand():
    c, jb = hand_cluster("ra", 2), hand_jobs()
    # Φ = 1: iter = 0.1 (no reduction, no communication) -> d = 4
    assert duration_slots(40, 1, iteration_slots(c, jb, 0, 0, -1, 1, True)) == 4
    # Φ = 2 co-located: iter = 0.1 + 1e-5 / 2 -> d = ceil(2.0001) = 3
    assert iteration_slots(c, jb, 0, 0, -1, 2, True) == pytest.approx(0.100005)
    assert duration_slots(40, 2, 0.100005) == 3
    # Φ = 2 spread: iter = 0.1 + (1e-5 + 0.02) / 2 = 0.110005 -> d = ceil(2.2001) = 3
    assert iteration_slots(c, jb, 0, 0, -1, 2, False) == pytest.approx(0.110005)


def test_placement_q_from_actual_servers():
    c, jb = hand_cluster("ps", 2), hand_jobs(update_ms=0.0)
    col = Placement(1, 0, 0, 0, [2, 0], [1, 0])
    spr = Placement(1, 0, 0, 0, [1, 1], [1, 0])
    assert col.colocated and not spr.colocated
    assert placement_duration(c, jb, 0, col) == 2
    assert placement_duration(c, jb, 0, spr) == 3  # ceil(40 * 0.12 / 2) = 3


def test_feasibility_checks():
    c, jb = hand_cluster("ps", 2), hand_jobs(arrivals=(3,))
    sim = ReservationSim(c, jb)
    with pytest.raises(ValueError, match="before"):
        sim.commit(0, Placement(2, 0, 0, 0, [2, 0], [1, 0]))
    with pytest.raises(ValueError, match="D_j"):
        sim.commit(0, Placement(3, 0, 0, 0, [3, 0], [1, 0]))
    with pytest.raises(ValueError, match="no PS"):
        sim.commit(0, Placement(3, 0, 0, 0, [2, 0], [0, 0]))
    with pytest.raises(ValueError, match="declared duration"):
        sim.commit(0, Placement(3, 7, 0, 0, [2, 0], [1, 0]))
    pl = sim.commit(0, Placement(3, 0, 0, 0, [2, 0], [1, 0]))
    assert (pl.start, pl.duration, pl.completion) == (3, 3, 6)
    assert sim.objective() == pytest.approx(1000.0 * 6)
    # usage on server 0 over slots 3..5: 2 workers (2 GPU, 8 vCPU, 32 GiB, 0.2 Gbps) + 1 PS (0, 2, 8, 5)
    np.testing.assert_allclose(sim.ledger.usage[0, :, 3], [2, 10, 40, 5.2])
    assert sim.ledger.usage[0, :, 6].sum() == 0 and sim.ledger.usage[0, :, 2].sum() == 0


def test_ps_bandwidth_covering_2i():
    # 2 remote workers of 0.1 Gbps need 0.2 <= s * 5: one PS suffices; a PS type of 0.1 Gbps would not
    c = hand_cluster("ps", 3)
    jb = hand_jobs()
    sim = ReservationSim(c, jb)
    sim.commit(0, Placement(1, 0, 0, 0, [0, 1, 1], [1, 0, 0]))
    from edgegym.families.hetero_ml.simulator import HeteroCluster

    weak = HeteroCluster(c.capacity, c.worker_res, np.array([[0.0, 2.0, 8.0, 0.1]]), arch="ps")
    with pytest.raises(ValueError, match="2i"):
        ReservationSim(weak, jb).commit(0, Placement(1, 0, 0, 0, [0, 1, 1], [1, 0, 0]))


def test_capacity_and_ledger_growth():
    c, jb = hand_cluster("ps", 1), hand_jobs(arrivals=(1, 1), weights=(1.0, 2.0))
    pls = {0: Placement(1, 0, 0, 0, [2, 0][:1], [1]), 1: Placement(1, 0, 0, 0, [2], [1])}
    # 4 GPUs: both fit at once (2 + 2); vCPU 2*(8+2) = 20 > 16 does not
    with pytest.raises(ValueError, match="over capacity"):
        verify_schedule(c, jb, pls)
    pls[1] = Placement(4, 0, 0, 0, [2], [1])
    assert verify_schedule(c, jb, pls) == pytest.approx(1.0 * 4 + 2.0 * 7)
    led = Ledger(c.capacity, horizon=2)
    led.commit(np.ones((1, 4)), 1000, 1003)
    assert led.usage.shape[2] >= 1003 and led.free_over(1000, 1003)[0, 0] == 3.0


def test_ra_has_no_ps():
    c, jb = hand_cluster("ra", 2), hand_jobs()
    with pytest.raises(ValueError, match="no PS"):
        ReservationSim(c, jb).commit(0, Placement(1, 0, 0, 0, [1, 1], [1, 0]))
    pl = ReservationSim(c, jb).commit(0, Placement(1, 0, 0, -1, [1, 1], [0, 0]))
    assert pl.duration == 3
