import numpy as np
import pytest

from edgegym.families.edge_cloud.rates import chunk_time_slots, comm_time_h, iteration_time_h


def test_comm_time__hand_computed():
    # 2 · 1800 MB · 8 bit / 16 Mbps = 1800 s = 0.5 h
    assert comm_time_h(1800, 16) == pytest.approx(0.5)


def test_iteration_time__edge_adds_comm_cloud_does_not():
    # m = 0.5 h, G = 3.6e6 ms = 1 h, comm = 0.5 h
    assert iteration_time_h(0.5, 3.6e6, 1800, 16, False) == pytest.approx(2.0)
    assert iteration_time_h(0.5, 3.6e6, 1800, 16, True) == pytest.approx(1.5)


def test_chunk_time__speed_and_slotting():
    assert chunk_time_slots(2, 3, 0.5) == pytest.approx(3.0)
    assert chunk_time_slots(2, 3, 0.5, speed=1.5) == pytest.approx(2.0)
    assert chunk_time_slots(1, 1, 2.2, slotted=True) == 3.0
    assert chunk_time_slots(1, 1, 3.0, slotted=True) == 3.0
    with pytest.raises(ValueError, match="speed"):
        chunk_time_slots(1, 1, 1.0, speed=0)


def test_vectorised():
    out = iteration_time_h(np.array([1.0, 1.0]), 0, np.array([1800, 1800]), 16, np.array([False, True]))
    np.testing.assert_allclose(out, [1.5, 1.0])
