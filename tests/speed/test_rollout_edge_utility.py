"""EdgeUtility's fast paths of ``rollout:ondisc``, each against the path it replaces (bit-identical results):

* ``OnDisc.advance`` (the env's compiled OnDisc loop, ``EdgeUtilityEnv.advance_ondisc``) against ``predict`` +
  ``step``: the same actions, rewards (exact float equality), observation, mask and simulator state at the stop;
* the rollout teacher's decisions with and without that fast path (``OnDisc.advance`` returning None is the oracle);
* the compiled loop's what-if (``_advance._whatif_acc``) against the bank's ``_kernels.whatif``;
* a resampled fork's direct splice of the bank (``fork.FAST_RESAMPLE``) against the fresh-simulator splice.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from edgegym.agents.baselines.edge_utility import OnDisc  # noqa: E402
from edgegym.agents.runner import make_env  # noqa: E402

from edgegym.families.edge_utility import fork as fork_mod  # noqa: E402

SMALL = {"workload": {"num_jobs": 120}}


def _state(g) -> dict:
    """The env and simulator state a step sequence determines (arrays compared exactly)."""
    sim, b = g.sim, g.sim._bank
    out = {"k": g._k, "ret": g._return, "now": sim.now, "planned": g._planned, "dec": g._decisions,
           "util": sim.utility, "jrt": sim.jrt_s, "done": sim.completed, "server_of": sim.server_of,
           "jf": b.jf, "si": b.si, "sf": b.sf, "mask": g.action_masks(), "seq": sim._seq,
           "heap": [h[:2] + h[3:] for h in sim._heap]}
    for k, srv in enumerate(sim.servers):
        if srv.name == "infinite":
            out[f"cloud{k}"] = (srv.t, srv.busy_s, [(tc, j) for tc, j, _ in sorted(srv._heap)])
    return out


def _same(a: dict, b: dict) -> bool:
    return all(np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") if isinstance(a[k], np.ndarray)
               else a[k] == b[k] for k in a)


@pytest.mark.parametrize("env_id,seed,config", [
    ("EdgeUtility-v1", 0, None), ("EdgeUtility-v1", 3, SMALL), ("EdgeUtility-v0", 1, SMALL),
    ("EdgeUtility-tiny-v1", 2, None), ("EdgeUtility-tiny-v1", 5, None), ("EdgeUtility-tiny-v0", 4, None),
    ("EdgeUtility-v1", 6, {**SMALL, "servers": {"speed": 1.3}})])  # a speed other than 1: the syncs' products
def test_advance_matches_predict_and_step(env_id, seed, config):
    env, pol = make_env(env_id, "ondisc", seed, env_config=config)
    obs, _ = env.reset(seed=seed)
    u = env.unwrapped
    J = u._J
    checked = 0
    for start in sorted({0, 1, 3, J // 4, J // 2, J - 12, J - 3}):
        while u._k < start:
            a, _ = pol.predict(obs)
            obs, *_ = env.step(a)
        for steps in (1, 7, 19, None):
            g1, g2 = u.fork(seed=0, future="keep"), u.fork(seed=0, future="keep")
            p1, p2 = pol.fork(g1), pol.fork(g2)
            o1, tot1, acts, n1 = g1._observation(), 0.25, [], 0
            while (steps is None or n1 < steps) and g1._k < J - 1:
                a, _ = p1.predict(o1)
                acts.append(a)
                o1, r, term, trunc, _ = g1.step(a)
                assert not (term or trunc)
                tot1 += float(r)
                n1 += 1
            res = p2.advance(steps, 0.25)
            assert res is not None
            o2, n2, tot2 = res
            assert n2 == n1
            assert tot2 == tot1
            assert list(g2._decisions[start:start + n2]) == acts
            if o2 is None:  # not built where the loop stopped: observe() builds it
                o2 = g2.observe()
            assert o2.dtype == o1.dtype and np.array_equal(o2, o1)
            assert _same(_state(g2), _state(g1))
            g3 = u.fork(seed=0, future="keep")  # the env's loop itself builds the observation at the stop by default
            o3, n3, *_ = g3.advance_ondisc(steps, 0.25)
            if n3 == n1:
                assert np.array_equal(o3, o1)
            checked += 1
            if n1:  # both continue identically with the ordinary step
                a, _ = p1.predict(o1)
                assert p2.predict(o2)[0] == a
                assert g1.step(a)[1] == g2.step(a)[1]
                assert _same(_state(g2), _state(g1))
    assert checked >= 20


def test_advance_refuses_what_it_does_not_cover():
    env, pol = make_env("EdgeUtility-tiny-v1", "ondisc", 0)
    obs, _ = env.reset(seed=0)
    u = env.unwrapped
    pol.predict(obs)  # the increments of this decision point are cached: the compiled loop would skip their syncs
    assert u.advance_ondisc(5) is None and pol.advance(5, 0.0) is None
    env2, pol2 = make_env("EdgeUtility-tiny-v1", "ondisc", 0, env_config={"env": {"mask": "do4a"}})
    env2.reset(seed=0)
    assert pol2.advance(5, 0.0) is None
    env3, _ = make_env("EdgeUtility-tiny-v1", "ondisc", 0)
    env3.reset(seed=0)
    with pytest.raises(ValueError, match="steps"):
        env3.unwrapped.advance_ondisc(-1)


def _episode_actions(env_id: str, policy: str, seed: int, config, decisions: int, fast: bool, monkeypatch):
    if not fast:
        monkeypatch.setattr(OnDisc, "advance", lambda self, steps, total: None)
    env, pol = make_env(env_id, policy, seed, env_config=config)
    obs, _ = env.reset(seed=seed)
    pol.reset(seed)
    acts, rewards = [], []
    for _ in range(decisions):
        a, _ = pol.predict(obs, deterministic=True)
        acts.append(int(a))
        obs, r, term, trunc, _ = env.step(a)
        rewards.append(r)
        if term or trunc:
            break
    monkeypatch.undo()
    return acts, rewards, pol.changed


@pytest.mark.parametrize("env_id,policy,seeds,config,decisions", [
    ("EdgeUtility-tiny-v1", "rollout(K=2,H=6,k=4):ondisc", range(16), None, 40),
    ("EdgeUtility-tiny-v0", "rollout(K=2,H=5,k=3):ondisc", range(4), None, 40),
    ("EdgeUtility-v1", "rollout(K=2,H=5,k=3):ondisc", range(2), {"workload": {"num_jobs": 150}}, 150),
    ("EdgeUtility-v1", "rollout:ondisc", (0,), None, 12),
])
def test_rollout_decisions_identical(env_id, policy, seeds, config, decisions, monkeypatch):
    states = changed = 0
    for seed in seeds:
        fast = _episode_actions(env_id, policy, seed, config, decisions, True, monkeypatch)
        slow = _episode_actions(env_id, policy, seed, config, decisions, False, monkeypatch)
        assert fast[0] == slow[0]
        assert fast[1] == slow[1]
        assert fast[2] == slow[2]
        states += len(fast[0])
        changed += fast[2]
    assert changed > 0  # rollout departs from its base on some states
    assert states >= min(decisions, 40) * len(seeds) * 0.5


def test_whatif_scan_matches_the_bank_kernel():
    from edgegym.families.edge_utility import _advance as A
    from edgegym.families.edge_utility import _kernels as K
    from edgegym.families.edge_utility.utility_fn import linear

    utab = K.utility_table([linear(1.0, 10.0)] * 50)
    rng = np.random.default_rng(0)
    cases = 0
    for disc in (K.FIFO, K.SRPT, K.EDF):
        for _ in range(300):
            n = int(rng.integers(1, 12))
            ids = rng.permutation(50)[:n].astype(np.int64)
            r = np.round(rng.uniform(0, 5, n), int(rng.integers(0, 3)))  # ties in r, a and remaining time
            now = 5.0
            a = np.where(rng.random(n) < 0.5, r, np.round(now + rng.uniform(0, 3, n), 1))
            rem = np.round(rng.uniform(0.05, 2, n), int(rng.integers(1, 3)))
            down = rng.uniform(0, 0.3, n)
            key = np.round(r + rng.uniform(0, 4, n), 1)
            s = float(rng.choice([1.0, 1.3]))
            order, finish = K.whatif(disc, now, s, ids, r, a, rem, down, key, -1, *utab)
            acc = 0.0
            for i in order:
                acc += finish[i] - r[i]
            live, pushed = np.empty(n, np.bool_), np.empty(n, np.bool_)
            got, fw = A._whatif_acc(disc, now, s, n, ids.copy(), r.copy(), a.copy(), rem.copy(), down.copy(),
                                    key.copy(), live, pushed, n - 1)
            assert got == acc and fw == finish[n - 1]
            cases += 1
    assert cases == 900


def test_sorted_whatif_matches_the_scan():
    """The compiled loop's what-if with kept orders (``_advance._whatif_sorted``) against the scan per event
    (``_whatif_acc``): the same sum and finish, bit for bit, on 6,000 item sets with tied keys, release and ready
    times, zero remaining times and items ready within the push tolerance."""
    from edgegym.families.edge_utility import _advance as A
    from edgegym.families.edge_utility import _kernels as K

    rng = np.random.default_rng(3)
    cases = 0
    for disc in (K.FIFO, K.SRPT, K.EDF):
        for _ in range(2000):
            n = int(rng.integers(1, 20))
            ids = rng.permutation(3 * n)[:n].astype(np.int64)
            r = np.round(rng.uniform(0, 3, n), int(rng.integers(0, 3)))
            now = float(rng.uniform(0, 4))
            a = np.where(rng.random(n) < 0.5, now - rng.uniform(0, 1, n), now + np.round(rng.uniform(0, 2, n), 1))
            fz = rng.random(n) < 0.15
            a[fz] = now + 1e-16 * rng.integers(1, 20, fz.sum())  # pushed within the tolerance before they are ready
            rem = np.where(rng.random(n) < 0.1, 0.0, np.round(rng.uniform(0.01, 1.0, n), int(rng.integers(1, 4))))
            down = rng.uniform(0, 0.2, n)
            key = np.where(rng.random(n) < 0.3, r, r + np.round(rng.uniform(0, 2, n), 1))
            s = float(rng.choice([1.0, 1.02, 1.3]))
            want = int(rng.integers(-1, n))
            live, pushed = np.empty(n, np.bool_), np.empty(n, np.bool_)
            aord, ready = np.empty(n, np.int64), np.empty(n, np.int64)
            exp = A._whatif_acc(disc, now, s, n, ids, r, a, rem.copy(), down, key, live, pushed, want)
            got = A._whatif_sorted(disc, now, s, n, ids, r, a, rem.copy(), down, key, live, aord, ready, want)
            assert got == exp, (disc, cases)
            cases += 1
    assert cases == 6000


@pytest.mark.parametrize("env_id,seed", [("EdgeUtility-v1", 0), ("EdgeUtility-v0", 2), ("EdgeUtility-tiny-v1", 1)])
def test_fast_resample_matches_fresh_simulator(env_id, seed, monkeypatch):
    env, pol = make_env(env_id, "ondisc", seed, env_config=SMALL if "tiny" not in env_id else None)
    obs, _ = env.reset(seed=seed)
    u = env.unwrapped
    for start in range(0, u._J - 2, max(1, u._J // 6)):
        while u._k < start:
            obs, *_ = env.step(pol.predict(obs)[0])
        for fs in (0, 11):
            monkeypatch.setattr(fork_mod, "FAST_RESAMPLE", False)
            g0 = u.fork(seed=fs)
            monkeypatch.setattr(fork_mod, "FAST_RESAMPLE", True)
            g1 = u.fork(seed=fs)
            b0, b1 = g0.sim._bank, g1.sim._bank
            for name in ("jf", "si", "sf", "oj", "oc", "os"):
                x, y = getattr(b0, name), getattr(b1, name)
                assert x.dtype == y.dtype and np.array_equal(x, y), name
            for x, y in zip(b0.utab, b1.utab, strict=True):
                assert x.dtype == y.dtype and np.array_equal(x, y)
            for name in ("_scale_p", "_scale_up", "_scale_down"):
                assert np.array_equal(getattr(g0.sim, name), getattr(g1.sim, name))
            assert g0.jobs.utilities == g1.jobs.utilities and np.array_equal(g0.jobs.release_s, g1.jobs.release_s)
            o0, o1 = g0._observation(), g1._observation()
            assert np.array_equal(o0, o1)
            p0, p1 = pol.fork(g0), pol.fork(g1)
            for _ in range(8):
                if g0._k >= g0._J - 1:
                    break
                a = p0.predict(o0)[0]
                assert p1.predict(o1)[0] == a
                o0, r0, *_ = g0.step(a)
                o1, r1, *_ = g1.step(a)
                assert r0 == r1 and np.array_equal(o0, o1)


def test_planned_utility_rows_match_vector():
    from edgegym.families.edge_utility import utility_fn as U
    from edgegym.families.edge_utility._kernels import utility_table
    from edgegym.families.edge_utility.env import _utility_rows

    rng = np.random.default_rng(1)
    fns = []
    for q in range(400):
        f = q % 6
        a, b, c = (float(x) for x in rng.uniform(0.1, 5.0, 3))
        fns.append([U.linear(a, b), U.aon(a, c, inclusive=bool(q % 2)), U.sigmoid(a, b, c), U.constant(b),
                    U.step((c, c + 1.0), (b, b / 2, 0.0)), U.sigmoid(800.0, b, 0.0)][f])
    t = np.round(rng.uniform(-1.0, 8.0, 400), int(rng.integers(0, 3)))
    t[::7] = [fn.c if fn.family == "aon" else 1.0 for fn in fns[::7]]  # AoN deadlines hit exactly
    got = _utility_rows(utility_table(fns), fns, 0, t)
    want = np.array([fn.vector(np.array([x]))[0] for fn, x in zip(fns, t.tolist(), strict=True)])
    assert np.array_equal(got, want)
    got = _utility_rows(utility_table(fns), fns, 150, t[150:220])
    assert np.array_equal(got, want[150:220])
