"""Differential tests of the HeteroML env's compiled hot paths (issue 20) against the original NumPy code kept as
the oracle (``edgegym.families.hetero_ml._reference``): on >= 1,000 random states (random legal actions on every
preset kind: tiny, tiny-ra, rl, ps, ra and the v1 ids) the observation, the action mask, the grid estimates
(earliest start and duration of every grid action), the decoded placement of every tried action and the reward
are identical (``==``, no tolerance); whole episodes give identical infos, episode metrics and returns; the
compiled pairwise sum is NumPy's bit for bit; the committed schedule passes T1."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.hetero_ml import _kernels
from edgegym.families.hetero_ml import _reference as ref
from edgegym.families.hetero_ml.env import HeteroMLEnv
from edgegym.families.hetero_ml.simulator import Placement, verify_schedule


class ReferenceEnv(HeteroMLEnv):
    """The env with every compiled path replaced by the NumPy reference (the behaviour before the kernels)."""

    def _observation(self):
        return ref.observation(self)

    def _grid_mask(self):
        return ref.grid_mask(self)

    def _try(self, k, m, n, spread, p, t0):
        return ref.try_place(self, k, m, n, spread, p, t0)

    def _decode_commit(self, k, act, now):
        return None  # decode with the reference search (``_try``) and commit through ReservationSim.commit

    def grid_estimates(self):
        return ref.grid_estimates(self)

    def _action_rows(self):
        return ref.action_rows(self)

    def _gpu_utilisation(self, start, end):
        return float(self.sim.ledger.utilisation(start, end)[0])


def _check_state(env, rng) -> None:
    """Compiled == reference at the current state, for the mask, observation, estimates and some placements."""
    k = env._k
    mask = env.action_masks()
    np.testing.assert_array_equal(mask, ref.grid_mask(env), err_msg=f"mask, job {k}")
    for got, exp in zip(env._job_cfg(), ref.grid_configs(env, k)[:4], strict=True):  # compiled job_grid
        np.testing.assert_array_equal(got, exp.reshape(-1), err_msg=f"grid configurations, job {k}")
    np.testing.assert_array_equal(env._observation(), ref.observation(env), err_msg=f"observation, job {k}")
    if env.obs_actions or rng.random() < 0.3:
        start, dur = env.grid_estimates()
        rs, rd = ref.grid_estimates(env)
        np.testing.assert_array_equal(start, rs, err_msg=f"grid start, job {k}")
        np.testing.assert_array_equal(dur, rd, err_msg=f"grid duration, job {k}")
        np.testing.assert_array_equal(env._action_rows(), ref.action_rows(env), err_msg=f"action rows, job {k}")
    now = env._decision_time(k)
    valid = np.flatnonzero(mask)
    for a in rng.choice(valid, size=min(3, valid.size), replace=False):
        m, n, spread, p, delay = env._grid_config(k, int(a))
        got, exp = env._try(k, m, n, spread, p, now + delay), ref.try_place(env, k, m, n, spread, p, now + delay)
        assert got[0] == exp[0], (k, int(a))
        np.testing.assert_array_equal(got[1][0], exp[1][0])
        np.testing.assert_array_equal(got[1][1], exp[1][1])


# (preset, seed, jobs): the large presets with fewer jobs (same cluster: its capacity is calibrated on 150 jobs)
CASES = [("tiny", 0, None), ("tiny", 1, None), ("tiny-ra", 0, None), ("tiny-ra", 1, None), ("tiny-v1", 2, None),
         ("tiny-ra-v1", 3, None), ("rl", 0, None), ("rl-v1", 1, None), ("ps", 0, 60), ("ps-v1", 1, 40),
         ("ra", 0, 60), ("ra-v1", 1, 40), ("ps-paper-literal", 2, 40), ("ra-paper-literal", 3, 40)]


def _run_pair(preset, seed, check_states, jobs=None):
    """One episode of random legal actions on the compiled env and the reference env side by side."""
    cfg = {"workload": {"num_jobs": jobs}} if jobs else None
    env, oracle = HeteroMLEnv(preset, config=cfg), ReferenceEnv(preset, config=cfg)
    obs, _ = env.reset(seed=seed)
    obs_r, _ = oracle.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states, done, ret, info = 0, False, 0.0, {}
    placements = {}
    while not done:
        np.testing.assert_array_equal(obs, obs_r, err_msg=f"{preset} seed {seed} job {env._k}")
        if check_states:
            _check_state(env, rng)
        a = int(rng.choice(np.flatnonzero(oracle.action_masks())))
        obs, r, done, _, info = env.step(a)
        obs_r, r_r, done_r, _, info_r = oracle.step(a)
        assert r == r_r and done == done_r and info == info_r, (preset, seed, info, info_r)
        j = info["job"]
        placements[j] = Placement(int(env.sim.start[j]), int(env.sim.duration[j]), int(env.sim.worker_type[j]),
                                  int(env.sim.ps_type[j]), env.sim.workers[j], env.sim.ps[j])
        ret += r
        states += 1
    assert env.episode_return() == oracle.episode_return() == ret
    assert info["episode_metrics"] == oracle.episode_metrics()
    # the compiled decode-and-commit wrote exactly what ReservationSim.commit writes (the dense ledger included)
    for name in ("start", "duration", "worker_type", "ps_type", "workers", "ps", "colocated"):
        np.testing.assert_array_equal(getattr(env.sim, name), getattr(oracle.sim, name), err_msg=name)
    end = max(env.sim.ledger.usage.shape[2], oracle.sim.ledger.usage.shape[2])  # both grown on demand
    np.testing.assert_array_equal(env.sim.ledger.window(0, end), oracle.sim.ledger.window(0, end))
    assert verify_schedule(env.cluster, env.jobs, placements) == info["episode_metrics"]["objective"]
    return states


@pytest.mark.parametrize(("preset", "seed", "jobs"), CASES)
def test_compiled_env_equals_reference(preset, seed, jobs):
    """Every state of a random-legal episode: mask, observation, estimates, rows, placements, rewards, metrics."""
    assert _run_pair(preset, seed, check_states=True, jobs=jobs) > 0


def test_at_least_1000_random_states():
    """>= 1,000 random states over several presets and seeds (observations, rewards and infos compared)."""
    states = 0
    for preset, seed in [("ps", 5), ("ra", 6), ("rl", 7), ("tiny", 8), ("tiny-ra", 9), ("ps", 10), ("ra", 11),
                         ("rl-v1", 12), ("ps", 13), ("ra", 14), ("ps", 15)]:
        states += _run_pair(preset, seed, check_states=False)
        if states >= 1000:
            break
    assert states >= 1000


@pytest.mark.parametrize("policy", ["earliest"])
def test_reference_policy_episode_unchanged(policy):
    """A whole episode of the ``earliest`` policy (which reads grid_estimates): identical to the reference env."""
    from edgegym.agents.baselines.hetero_ml import Earliest

    for preset, jobs in (("ps", 60), ("ra-v1", 40)):
        cfg = {"workload": {"num_jobs": jobs}}
        env, oracle = HeteroMLEnv(preset, config=cfg), ReferenceEnv(preset, config=cfg)
        env.reset(seed=3)
        oracle.reset(seed=3)
        done = False
        while not done:
            a = Earliest(env).act(None)
            assert a == Earliest(oracle).act(None)
            _, r, done, _, info = env.step(a)
            _, r_r, _, _, info_r = oracle.step(a)
            assert r == r_r and info == info_r


def test_pairwise_sum_is_numpys():
    rng = np.random.default_rng(0)
    for n in [0, 1, 5, 8, 10, 17, 128, 129, 300, 1000, 5000]:
        for _ in range(20):
            a = rng.random(n) * 10.0 ** rng.integers(-5, 5, n)
            assert _kernels.pairwise_sum(a, 0, n) == a.sum()


@pytest.mark.parametrize("preset", ["ps", "ra-v1"])
def test_tie_fallbacks_equal_reference(preset, monkeypatch):
    """The exact fallbacks taken when the compiled search reports a price tie within rounding (status 2): NumPy's
    grid_place from the tied candidate on (decoding) and the NumPy reference (grid estimates) give the reference's
    results. Forced here on every call."""
    env = HeteroMLEnv(preset, config={"workload": {"num_jobs": 30}})
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    real_try, real_est = _kernels.try_place, _kernels.grid_estimates
    for _ in range(30):
        k = env._k
        now = env._decision_time(k)
        mask = env.action_masks()
        for a in rng.choice(np.flatnonzero(mask), size=3):
            m, n, spread, p, delay = env._grid_config(k, int(a))
            monkeypatch.setattr(_kernels, "try_place", lambda *args: (2, args[-3]))  # tie at the first candidate t0
            got = env._try(k, m, n, spread, p, now + delay)
            monkeypatch.setattr(_kernels, "try_place", real_try)
            exp = ref.try_place(env, k, m, n, spread, p, now + delay)
            assert got[0] == exp[0]
            np.testing.assert_array_equal(got[1][0], exp[1][0])
            np.testing.assert_array_equal(got[1][1], exp[1][1])
        monkeypatch.setattr(_kernels, "grid_estimates", lambda *args: 2)
        env._est_step = None
        start, dur = env.grid_estimates()
        monkeypatch.setattr(_kernels, "grid_estimates", real_est)
        rs, rd = ref.grid_estimates(env)
        np.testing.assert_array_equal(start, rs)
        np.testing.assert_array_equal(dur, rd)
        _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if done:
            break


def test_one_worker_fits_equals_reference():
    """The compiled ``one_worker_fits`` (each reset's PLACE check) equals the NumPy reference on >= 1,000 random
    residuals of every preset kind's clusters (the empty cluster, random fractions, exact fits and zeros)."""
    from edgegym.families.hetero_ml.instance import build_instance, one_worker_fits
    from edgegym.families.hetero_ml.presets import load_preset

    rng = np.random.default_rng(7)
    cases = 0
    for preset in ("ps", "ra", "tiny", "tiny-ra", "rl", "ps-paper-literal", "ra-paper-literal"):
        p = load_preset(preset)
        for seed in range(6):
            c = build_instance(p, np.random.default_rng(seed)).cluster
            cap = c.capacity
            e, z = c.worker_res, c.ps_res
            for i in range(30):
                if i == 0:
                    free = cap.copy()
                else:
                    free = cap * rng.random(cap.shape) ** rng.uniform(0.2, 4.0)
                    free[rng.random(cap.shape[0]) < rng.uniform(0, 0.9)] = 0.0
                    for h in rng.choice(cap.shape[0], size=min(3, cap.shape[0]), replace=False):  # exact fits
                        m, q = rng.integers(e.shape[0]), rng.integers(z.shape[0])
                        free[h] = e[m] + (z[q] if c.arch == "ps" and rng.random() < 0.5 else 0.0)
                np.testing.assert_array_equal(one_worker_fits(c, free), ref.one_worker_fits(c, free),
                                              err_msg=f"{preset} seed {seed} case {i}")
                cases += 1
    assert cases >= 1000


def _decision_states(rng, presets, seeds):
    """Every decision state of random-legal episodes of ``presets`` (``(preset, num_jobs or None)``) and ``seeds``:
    yields ``(preset, seed, env, first)`` (``first``: the episode's first state); the next legal action is drawn
    from ``rng`` after the caller's own draws on the state."""
    for preset, jobs in presets:
        env = HeteroMLEnv(preset, config={"workload": {"num_jobs": jobs}} if jobs else None)
        for seed in seeds:
            env.reset(seed=seed)
            done, first = False, True
            while not done:
                yield preset, seed, env, first
                first = False
                _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))


def _same_bins(env, t, kernel, extra, msg):
    """``kernel(*profiles, wres, cap, t, out, *extra)`` on the servers' usage profiles at slot ``t`` of the pending
    job's state writes the lookahead bins that ``lookahead_bins`` computes from the jobs, bit for bit."""
    k, kc, rec = env._k, env._kc, env._rec()
    nb = _kernels.N_BINS * (2 * env.R + env.M)
    got, exp = np.empty(nb), np.empty(nb)
    kernel(*_kernels.server_profiles(k, t, rec, kc[1], kc[2], kc[6], env.H, env.R), kc[1], kc[0], t, got, *extra)
    ptr, jobs_ = _kernels.server_jobs(k, t, rec, env.H)
    _kernels.lookahead_bins(rec, ptr, jobs_, kc[1], kc[2], kc[6], kc[0], t, exp)
    np.testing.assert_array_equal(got.view(np.int64), exp.view(np.int64), err_msg=msg)


def test_lookahead_profiles_equal_lookahead_bins():
    """The lookahead bins from the servers' usage profiles (``lookahead_profiles``, what ``prepare_rows`` hands the
    v1 observation) equal ``lookahead_bins`` (the observation's own path) bit for bit on >= 1,000 random states of
    every preset kind, at the decision time and at later slots (breakpoints inside and across the bins)."""
    rng = np.random.default_rng(11)
    cases = 0
    kinds = (("tiny", None), ("tiny-ra", None), ("rl-v1", None), ("ps-v1", 60), ("ra", 60))
    for preset, seed, env, _ in _decision_states(rng, kinds, range(2)):
        k = env._k
        now = env._decision_time(k)
        for t in (now, now + int(rng.integers(1, 40)), now + int(rng.integers(40, 200))):
            _same_bins(env, t, _kernels.lookahead_profiles, (), f"{preset} seed {seed} job {k} slot {t}")
            cases += 1
    assert cases >= 1000


def test_search_on_profiles_equals_search():
    """The decoding search on the servers' usage profiles (``try_place_on``, what ``decode_commit`` runs on the v1
    state ``prepare_rows`` profiled) equals ``try_place`` (status, start, workers, PSs), and the residual from the
    profiles equals ``free_over`` bit for bit, on >= 1,000 random (state, configuration, slot, duration) cases of
    every preset kind, with slots at the decision time and later (candidates after the first included)."""
    rng = np.random.default_rng(13)
    cases = 0
    kinds = (("tiny", None), ("tiny-ra", None), ("rl-v1", None), ("ps-v1", 60), ("ra", 60))
    for preset, seed, env, _ in _decision_states(rng, kinds, range(2)):
        k, kc, rec = env._k, env._kc, env._rec()
        now = env._decision_time(k)
        prof = _kernels.server_profiles(k, now, rec, kc[1], kc[2], kc[6], env.H, env.R)
        mask = env.action_masks()
        for a in rng.choice(np.flatnonzero(mask), size=min(4, int(mask.sum())), replace=False):
            m, n, spread, p, _ = env._grid_config(k, int(a))
            t0 = now + int(rng.choice([0, 0, int(rng.integers(1, 30)), int(rng.integers(30, 300))]))
            d = int(rng.choice([0, 1, int(rng.integers(2, 50)), int(rng.integers(50, 400))]))
            got = [np.zeros(env.H, dtype=np.int64) for _ in range(2)]
            exp = [np.zeros(env.H, dtype=np.int64) for _ in range(2)]
            sg = _kernels.try_place_on(rec, k, *kc, m, p, n, spread, d, t0, *got, *prof)
            se = _kernels.try_place(rec, k, *kc, m, p, n, spread, d, t0, *exp)
            assert sg == se, (preset, seed, k, int(a), t0, d)
            np.testing.assert_array_equal(got[0], exp[0])
            np.testing.assert_array_equal(got[1], exp[1])
            fg, fe = np.empty(kc[0].shape), np.empty(kc[0].shape)
            _kernels._free_over_profiles(*prof, kc[0], t0, d, fg)
            ptr, jobs_ = _kernels.server_jobs(k, t0, rec, env.H)
            _kernels.free_over(rec, ptr, jobs_, kc[1], kc[2], kc[6], kc[0], t0, d, fe)
            np.testing.assert_array_equal(fg.view(np.int64), fe.view(np.int64),
                                          err_msg=f"{preset} seed {seed} job {k} slot {t0} d {d}")
            cases += 1
    assert cases >= 1000


def _same_profiles(got, exp, H, msg):
    """The same pieces per server (times and usage rows bit for bit; the CSR layouts may differ)."""
    for h in range(H):
        assert got[1][h] == exp[1][h], f"{msg}: server {h} pieces"
        a, b = got[0][h], exp[0][h]
        c = exp[1][h]
        np.testing.assert_array_equal(got[2][a:a + c], exp[2][b:b + c], err_msg=f"{msg}: server {h} times")
        np.testing.assert_array_equal(got[3][a:a + c].view(np.int64), exp[3][b:b + c].view(np.int64),
                                      err_msg=f"{msg}: server {h} usage")


def test_profiles_after_equal_server_profiles():
    """The servers' usage profiles updated from the previous decision's (``server_profiles_after``, what
    ``prepare_rows`` runs along a v1 episode, chained step after step) equal ``server_profiles`` recomputed from
    scratch, piece by piece, on every state of random-legal episodes of every preset kind (the env's own chained
    profiles, and one update from fresh ones at the decision time and at a later slot)."""
    rng = np.random.default_rng(17)
    states = 0
    kinds = (("tiny-v1", None), ("tiny-ra-v1", None), ("rl-v1", None), ("ps-v1", 60), ("ra-v1", 60))
    for preset, seed, env, first in _decision_states(rng, kinds, range(3)):
        if first:
            old = None
        k, kc, rec = env._k, env._kc, env._rec()
        now = env._decision_time(k)
        exp = _kernels.server_profiles(k, now, rec, kc[1], kc[2], kc[6], env.H, env.R)
        assert env._prof_step[0] == k
        _same_profiles(env._prof_step[1], exp, env.H, f"{preset} seed {seed} job {k} (env)")
        if old is not None:
            for t in (now, now + int(rng.integers(1, 60))):
                got = _kernels.server_profiles_after(k, t, rec, kc[1], kc[2], kc[6], env.H, env.R, *old)
                exp_t = _kernels.server_profiles(k, t, rec, kc[1], kc[2], kc[6], env.H, env.R)
                _same_profiles(got, exp_t, env.H, f"{preset} seed {seed} job {k} slot {t}")
        old = exp
        states += 1
    assert states >= 500


def test_lookahead_cached_equals_lookahead_bins():
    """The lookahead bins with the per-server cache kept between calls (``lookahead_cached``, what ``prepare_rows``
    runs along a v1 episode) equal ``lookahead_bins`` bit for bit on every state of random-legal episodes of every
    preset kind, the cache carried from state to state of an episode (new at each reset, as the env's: the cluster
    changes), at the decision time and at later slots."""
    rng = np.random.default_rng(19)
    cases = 0
    kinds = (("tiny-v1", None), ("tiny-ra-v1", None), ("rl-v1", None), ("ps-v1", 60), ("ra", 60))
    for preset, seed, env, first in _decision_states(rng, kinds, range(3)):
        if first:  # a new cache at each reset, as the env's (the cluster changes)
            cache = (np.full((env.H, env.R), np.nan), np.zeros((env.H, env.R)), np.zeros((env.H, env.M), dtype=bool))
        k = env._k
        now = env._decision_time(k)
        for t in (now, now + int(rng.integers(1, 40))):
            _same_bins(env, t, _kernels.lookahead_cached, cache, f"{preset} seed {seed} job {k} slot {t}")
            cases += 1
    assert cases >= 1000


def test_stable_order_is_mergesort_argsort():
    """``_stable_order`` (the events' and durations' order in the grid estimates) is NumPy's stable argsort."""
    rng = np.random.default_rng(23)
    for n in [0, 1, 2, 5, 96, 131, 1000]:
        for _ in range(30):
            x = rng.integers(0, int(rng.choice([3, 50, 10 ** 6])), n).astype(np.int64)
            np.testing.assert_array_equal(_kernels._stable_order(x), np.argsort(x, kind="mergesort"))
    for x in (np.array([-3, 5, -3, 0], dtype=np.int64), np.array([2 ** 61, 1, 2 ** 61], dtype=np.int64)):
        np.testing.assert_array_equal(_kernels._stable_order(x), np.argsort(x, kind="mergesort"))
