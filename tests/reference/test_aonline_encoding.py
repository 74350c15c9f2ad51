"""A_online's action in compiled code: ``a_greedy`` (the greedy kernel, with the no-qualified-worker fallback) and
``encode_action``'s ``server_proportions`` shares (``_kernels.server_shares``) against the NumPy formulas they
replace, bit for bit."""

from __future__ import annotations

import numpy as np

from edgegym.agents.reference.aonline import a_greedy, encode_action
from edgegym.families.edge_cloud import _kernels
from edgegym.families.edge_cloud import _reference as ref
from edgegym.families.edge_cloud.env import EdgeCloudView


def _view(rng, W, S, S_max, mode="server_proportions", has_cloud=True, finite=True):
    q = np.round(rng.uniform(0, 5, size=W), 2)
    q[rng.random(W) < 0.3] = np.inf
    if not finite:
        q[:] = np.inf
    D = int(rng.integers(1, 120))
    p_edge = float(rng.uniform(0.1, 4))
    return EdgeCloudView(
        now=0.0, job=0, num_chunks=D, p_edge=p_edge, p_cloud=p_edge / 2, q=q, t_star=q.copy(),
        a2_count=np.zeros(W, dtype=np.int64), qc0=float(rng.uniform(0, 6)), qc1=float(rng.uniform(0, 6)),
        worker_server=np.sort(rng.integers(0, S, size=W)), worker_order=rng.permutation(W).astype(np.int64),
        server_eligible=np.ones(S_max + 1, dtype=bool), use_cloud=True, has_cloud=has_cloud, num_edge_servers=S,
        max_edge_servers=S_max, action_mode=mode, max_chunks=200)


def test_server_shares_equal_the_numpy_formula():
    rng = np.random.default_rng(0)
    for _ in range(500):
        W, S = int(rng.integers(1, 40)), int(rng.integers(1, 8))
        view = _view(rng, W, S, S + int(rng.integers(0, 3)))
        counts = rng.integers(0, 5, size=W)
        n_cloud = int(rng.integers(0, 4))
        D = int(counts.sum()) + n_cloud or 1
        view = EdgeCloudView(**{**{f: getattr(view, f) for f in view.__dataclass_fields__}, "num_chunks": D})
        sc = np.zeros(view.max_edge_servers + 1)
        sc[:S] = np.bincount(view.worker_server, weights=counts, minlength=S)
        sc[-1] = n_cloud
        want = (sc / D).astype(np.float32)
        got = encode_action(view, counts, n_cloud)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
        out = np.empty_like(want)
        _kernels.server_shares(view.worker_server, counts.astype(np.int64), S, n_cloud, D, out)
        np.testing.assert_array_equal(out, want)


def test_a_greedy_equals_the_reference_greedy():
    rng = np.random.default_rng(1)
    for k in range(500):
        W, S = int(rng.integers(1, 30)), int(rng.integers(1, 6))
        view = _view(rng, W, S, S, finite=k % 10 != 0, has_cloud=k % 7 != 0)
        for edge_only in (False, True):
            counts, n_cloud = a_greedy(view, edge_only)
            cloud_on = view.has_cloud and view.use_cloud and not edge_only
            qc0, qc1 = (view.qc0, view.qc1) if cloud_on else (np.inf, np.inf)
            if not np.isfinite(view.q).any():  # no qualified edge worker: the whole job to the cloud
                want = np.zeros(W, dtype=np.int64), view.num_chunks
            else:
                want = ref.greedy_placement(view.q, view.worker_order, view.num_chunks, view.p_edge, qc0, qc1)
            np.testing.assert_array_equal(counts, want[0])
            assert n_cloud == want[1] and type(n_cloud) is int
