"""Differential tests of the EdgeCloudML env's compiled observation and action decoding (issue 10) against the
original numpy code kept as the oracle (``_reference.observation``, ``_reference.eligible_rows``,
``_reference.decode_proportions``, ``env.largest_remainder``): identical (==) on >= 1,000 random states and
actions, plus NumPy's pairwise summation reproduced bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.edge_cloud import _kernels
from edgegym.families.edge_cloud import _reference as ref
from edgegym.families.edge_cloud.env import EdgeCloudMLEnv, largest_remainder
from edgegym.families.edge_cloud.testing import random_instance


def _random_action(rng, mask):
    kind = rng.integers(4)
    a = rng.random(mask.size)
    if kind == 0:  # sparse weights
        a *= rng.random(mask.size) < 0.3
    elif kind == 1:  # on legal rows only
        a *= mask
    elif kind == 2:  # coarse values: exact ties in the remainders
        a = np.round(a * 4) / 4
    return a.astype(rng.choice([np.float32, np.float64]))


def _check_episode(env, rng, seed):
    obs, _ = env.reset(seed=seed)
    states = 0
    while True:
        np.testing.assert_array_equal(obs, ref.observation(env), err_msg=f"seed {seed} job {env._k}")
        np.testing.assert_array_equal(env._eligible_rows(), ref.eligible_rows(env))
        mask = env.action_masks()
        a = _random_action(rng, mask)
        if env.action_mode == "server_proportions":
            exp = ref.decode_proportions(env, a)
            if exp is not None:
                got = env.decode_action(a)
                np.testing.assert_array_equal(got[0], exp[0])
                assert got[1] == exp[1]
                np.testing.assert_array_equal(got[2], exp[2])
        else:
            a = int(rng.choice(np.flatnonzero(mask)))
        states += 1
        obs, _, term, _, _ = env.step(a)
        if term:
            return states


@pytest.mark.parametrize("preset", ["tiny", "testbed"])
def test_observation_and_decoding_match_reference_on_presets(preset):
    rng = np.random.default_rng(0)
    states = 0
    for seed in range(3):
        env = EdgeCloudMLEnv(preset, config={"env": {"obs_relative": bool(seed % 2)}})
        states += _check_episode(env, rng, seed)
    assert states > 0


def test_observation_and_decoding_match_reference_on_sim100():
    env = EdgeCloudMLEnv("sim100", config={"workload": {"num_jobs": 120}})
    assert _check_episode(env, np.random.default_rng(1), 0) == 120


def test_observation_and_decoding_match_reference_on_random_instances():
    """>= 1,000 random states (random clusters: several worker types, no cloud, padded rows)."""
    states = 0
    seed = 0
    while states < 1000:
        rng = np.random.default_rng(seed)
        cluster, jobs = random_instance(
            rng, num_servers=int(rng.integers(1, 5)), max_workers=int(rng.integers(1, 4)),
            num_jobs=int(rng.integers(1, 15)), max_chunks=int(rng.integers(1, 8)), num_types=int(rng.integers(1, 3)),
        )
        if not cluster.has_cloud and not np.isin(jobs.worker_type, cluster.worker_type).all():
            seed += 1
            continue
        cfg = {"env": {"max_edge_servers": 4 + int(rng.integers(0, 3)), "max_chunks": 8,
                       "max_types": 2, "use_cloud": bool(rng.random() < 0.8),
                       "obs_relative": bool(rng.random() < 0.5)}}
        env = EdgeCloudMLEnv("tiny", config=cfg, instance=(cluster, jobs))
        states += _check_episode(env, rng, seed)
        seed += 1


def test_largest_remainder_kernel_matches_numpy():
    rng = np.random.default_rng(2)
    for _ in range(3000):
        n = int(rng.integers(1, 140))
        w = rng.random(n)
        kind = rng.integers(4)
        if kind == 0:
            w *= rng.random(n) < 0.3
        elif kind == 1:
            w = np.round(w * 3) / 3  # ties
        elif kind == 2:
            w = np.full(n, 1.0 / 3)
        if w.sum() <= 0:
            w[int(rng.integers(n))] = 0.5
        total = int(rng.integers(1, 200))
        out = np.zeros(n, dtype=np.int64)
        _kernels.largest_remainder(w, total, out)
        np.testing.assert_array_equal(out, largest_remainder(w, total))
        assert out.sum() == total


def test_pairwise_sum_is_numpy_sum_bit_for_bit():
    rng = np.random.default_rng(3)
    for _ in range(3000):
        n = int(rng.integers(0, 2100))
        a = rng.random(n) * 10.0 ** rng.integers(-6, 7, n)
        lo = int(rng.integers(0, max(n, 1)))
        assert _kernels.pairwise_sum(a, lo, n - lo) == float(np.sum(a[lo:]))


def test_fast_box_path_keeps_the_error_messages():
    env = EdgeCloudMLEnv("tiny")
    env.reset(seed=0)
    rows = env.max_edge_servers + 1
    for bad in (np.full(rows, np.nan), np.full(rows, 1.5, dtype=np.float32), -np.ones(rows)):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.ones(rows + 1, dtype=np.float32))


def test_compiled_ps_sweep_matches_python_sweep_and_leaves_the_same_generator_state(monkeypatch):
    """A_ps's compiled sweep reproduces ``Generator.integers`` draws (PCG64, Lemire) and the generator's final
    state, against the Python sweep it replaces (forced by disabling the compiled path)."""
    from edgegym.families.edge_cloud.simulator import PaperSimulator

    def run(seed, compiled, pre_draw):
        rng = np.random.default_rng(seed)
        cluster, jobs = random_instance(rng, num_servers=3, max_workers=3, num_jobs=25, max_chunks=4, num_types=2)
        ps_rng = np.random.default_rng(seed + 7)
        if pre_draw:  # leave half a 64-bit word buffered in the generator
            ps_rng.integers(5, dtype=np.int32)
        sim = PaperSimulator(cluster, jobs, rng=ps_rng)
        if not compiled:
            monkeypatch.setattr(sim, "_assign_ps_compiled", lambda *a: False)
        for j in range(jobs.num_jobs):
            sim.advance_to(float(jobs.arrival_slots[j]))
            cand = sim.candidates(j)
            q = cand.q
            counts = np.zeros(cluster.num_workers, dtype=np.int64)
            D = int(jobs.num_chunks[j])
            if np.isfinite(q).any():
                counts[int(np.argmin(q))] = D
                sim.place(j, counts, 0, cand)
            else:
                sim.place(j, counts, D, cand)
        sim.drain()
        return sim, ps_rng.bit_generator.state, ps_rng.random()

    draws = 0
    for seed in range(60):
        a, sa, xa = run(seed, True, seed % 2 == 0)
        b, sb, xb = run(seed, False, seed % 2 == 0)
        np.testing.assert_array_equal(a.ps_log, b.ps_log)
        assert (a.ps_switches, a.ps_fallbacks) == (b.ps_switches, b.ps_fallbacks)
        assert sa == sb and xa == xb
        draws += seed % 2 == 1 and sa != np.random.default_rng(seed + 7).bit_generator.state  # it drew
    assert draws > 0


def test_view_without_copies_is_read_only_and_equal_to_the_copy():
    import dataclasses

    env = EdgeCloudMLEnv("testbed")
    env.reset(seed=0)
    for _ in range(5):
        fast, slow = env.view(copy=False), env.view()
        assert env.view(copy=False) is fast  # built once per decision point
        for f in dataclasses.fields(slow):
            a, b = getattr(fast, f.name), getattr(slow, f.name)
            if isinstance(b, np.ndarray):
                np.testing.assert_array_equal(a, b)
                assert a.dtype == b.dtype and not a.flags.writeable and b.flags.writeable
                with pytest.raises(ValueError):
                    a[...] = 0
            else:
                assert a == b, f.name
        env.step(env.encode_placement(*_greedy_counts(env)))
        assert env.view(copy=False) is not fast


def _greedy_counts(env):
    from edgegym.agents.reference.aonline import a_greedy

    return a_greedy(env.view())
