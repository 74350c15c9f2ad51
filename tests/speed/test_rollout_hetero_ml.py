"""The fast path of ``rollout:earliest`` on HeteroML against the ordinary one kept as the oracle.

* ``Earliest.advance`` (``HeteroMLEnv.advance_earliest``, a compiled loop that builds no observation on the way)
  against ``act`` + ``step``: the same actions, the same rewards (``==``) and total, the same simulator state and
  ledger, and the same observation and mask where it stops, on HeteroML-v0, -v1 and -rl-hard-v1, several seeds and
  start points (also when every step goes through the ordinary path, and at the episode's end);
* the rollout teacher's decisions with and without the fast path (``Earliest.advance`` returning ``None``, the
  oracle) on more than 1,000 states, and rollout departs from its base on some of them;
* ``HeteroMLEnv.action_key``: grid actions with equal keys give the same reward, state and next observation, on
  more than 1,000 states, and the key changes nothing;
* a fork's ledger (shared pending commits, a shared read-only zero array while the dense one was never written) and
  a resampled fork's job table (spliced without revalidation) equal the deep copy and the revalidated table.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.baselines.hetero_ml import FIFO, Earliest
from edgegym.agents.reference.rollout import RolloutPolicy
from edgegym.agents.runner import policy_actions

import edgegym  # noqa: F401  (registers the envs)
from edgegym.core import forking
from edgegym.families.hetero_ml import fork as hfork
from edgegym.families.hetero_ml.env import HeteroMLEnv

IDS = ("HeteroML-v0", "HeteroML-v1", "HeteroML-rl-hard-v1")


def _state(env) -> tuple:
    """Everything a step changes (the simulator's arrays, the ledger's commits, the rewards, the step index)."""
    s = env.sim
    pending = [(r.tolist(), f.tolist(), a, b) for r, f, a, b in s.ledger._pending]
    arrays = [x.copy() for x in (s.start, s.duration, s.worker_type, s.ps_type, s.workers, s.ps, s.colocated)]
    return env._k, list(env._rewards), pending, arrays


def _assert_same(f1, f2) -> None:
    k1, r1, p1, a1 = _state(f1)
    k2, r2, p2, a2 = _state(f2)
    assert k1 == k2
    assert r1 == r2  # exact float equality, in order
    assert p1 == p2
    for x, y in zip(a1, a2, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(f1.action_masks(), f2.action_masks())


def _oracle(env, steps, total):
    """``act`` + ``step`` as rollout's loop runs them: (actions, observation, steps, total)."""
    pol = Earliest(env)
    obs = env._observation()
    acts, n, J = [], 0, env.jobs.num_jobs
    while (steps is None or n < steps) and env._k < J - 1:
        a = pol.act(obs)
        acts.append(a)
        obs, r, _, _, _ = env.step(a)
        total += float(r)
        n += 1
    return acts, obs, n, total


def _compare_at(env, steps, seed, total=0.25):
    f_fast = env.fork(seed=seed, future="resample")
    f_ref = f_fast.fork(seed=0, future="keep")
    acts = []
    obs, n, tot = f_fast.advance_earliest(steps, decide=lambda: Earliest(f_fast).act(None), total=total,
                                          actions=acts)
    r_acts, r_obs, r_n, r_tot = _oracle(f_ref, steps, total)
    assert n == r_n and tot == r_tot
    assert acts == r_acts
    np.testing.assert_array_equal(obs, r_obs)
    _assert_same(f_fast, f_ref)
    np.testing.assert_array_equal(f_fast.sim.ledger.usage, f_ref.sim.ledger.usage)  # flushed: the dense ledger
    return n


@pytest.mark.parametrize("env_id", IDS)
def test_advance_equals_act_and_step(env_id):
    """Several seeds and start points, short and long runs (to the episode's last step but one)."""
    env = gym.make(env_id).unwrapped
    taken = 0
    for seed in (0, 3):
        env.reset(seed=seed)
        J = env.jobs.num_jobs
        base = Earliest(env)
        for k in range(J - 1):
            if k in (0, 1, J // 3, J // 2, J - 5, J - 2):
                taken += _compare_at(env, 19 if k % 2 else 7, seed=k)
                if k == J // 3:
                    taken += _compare_at(env, None, seed=k + 1)  # to the end
            env.step(base.act(None))
    assert taken > 100


@pytest.mark.parametrize("env_id", IDS)
def test_advance_after_random_actions(env_id):
    """States reached by random legal actions (delays included: more crowded schedules, later starts)."""
    env = gym.make(env_id).unwrapped
    taken = 0
    for seed in (1, 2):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        J = env.jobs.num_jobs
        for k in range(J - 1):
            if k % max(1, J // 8) == 3:
                taken += _compare_at(env, 12, seed=k)
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert taken > 100


@pytest.mark.parametrize("env_id", ("HeteroML-v1", "HeteroML-rl-hard-v1"))
def test_advance_through_the_ordinary_path(env_id, monkeypatch):
    """Every step through ``decide`` and ``step``'s code (as after a price tie): the same results; the compiled loop
    stopping after one step of two also."""
    env = gym.make(env_id).unwrapped
    env.reset(seed=1)
    for _ in range(9):
        env.step(Earliest(env).act(None))
    real = type(env)._earliest_run

    def none(self, n, actions=None):
        return [], True

    def one(self, n, actions=None):
        return real(self, min(n, 1), actions)[0], True

    for fake in (none, one):
        monkeypatch.setattr(type(env), "_earliest_run", fake)
        assert _compare_at(env, 12, seed=2) == 12
    monkeypatch.undo()


def test_advance_edges():
    """steps=0 leaves the env where it is; ``Earliest.advance`` builds no observation (``observe()`` then gives the
    one the env's ``advance_earliest`` returns by default, and ``step`` would have returned); the episode's last step
    is never taken; a wrapped env or a slot-driven one has no fast path."""
    env = gym.make("HeteroML-v1")
    u = env.unwrapped
    obs0, _ = env.reset(seed=0)
    pol = Earliest(u)
    got = pol.advance(0, 1.5)
    assert got == (None, 0, 1.5)
    np.testing.assert_array_equal(u.observe(), obs0)
    np.testing.assert_array_equal(u.advance_earliest(0, decide=None, total=1.5)[0], obs0)
    f, g = u.fork(seed=1), u.fork(seed=1)
    assert pol.fork(f).advance(9, 0.0)[1:] == g.advance_earliest(9, decide=lambda: Earliest(g).act(None))[1:]
    np.testing.assert_array_equal(f.observe(), g._observation())
    J = u.jobs.num_jobs
    obs, n, _ = pol.advance(None, 0.0)
    assert n == J - 1 and u._k == J - 1
    assert pol.advance(5, 0.0)[1] == 0  # only the last step is left
    assert Earliest(env).advance(5, 0.0) is None  # bound to the wrapper
    slot = gym.make("HeteroML-v1", config={"env": {"discipline": "drf"}}).unwrapped  # no reset needed
    assert slot.slot_driven and Earliest(slot).advance(5, 0.0) is None
    with pytest.raises(ValueError, match="reservation discipline"):
        slot.advance_earliest(5, decide=lambda: 0)


def _decisions(env_id, policy, seeds, monkeypatch, fast, limit=None):
    """Every decision of ``policy`` (a rollout over earliest) on ``seeds``, with or without the fast paths (the
    compiled continuation, one continuation per distinct ``action_key``)."""
    with monkeypatch.context() as mp:
        if not fast:
            mp.setattr(Earliest, "advance", lambda self, steps, total: None)
            mp.setattr(RolloutPolicy, "dedupe", False)
        return policy_actions(env_id, policy, seeds, limit)


def test_rollout_decisions_identical(monkeypatch):
    """>= 1,000 states: rollout(K=2,H=5,k=4):earliest on HeteroML-rl-hard-v1 (50-job episodes), and the leaderboard
    parameters (K=4, H=20, k=6) on HeteroML-v1's first decisions; rollout leaves its base on some states."""
    seeds, name = range(21), "rollout(K=2,H=5,k=4):earliest"
    fast, changed = _decisions("HeteroML-rl-hard-v1", name, seeds, monkeypatch, True)
    ref, ref_changed = _decisions("HeteroML-rl-hard-v1", name, seeds, monkeypatch, False)
    assert fast == ref and changed == ref_changed
    assert changed > 0
    fast2, _ = _decisions("HeteroML-v1", "rollout:earliest", [0], monkeypatch, True, limit=30)
    ref2, _ = _decisions("HeteroML-v1", "rollout:earliest", [0], monkeypatch, False, limit=30)
    assert fast2 == ref2
    assert len(fast) + len(fast2) >= 1000


def _key_groups(env) -> dict:
    groups: dict = {}
    for a in np.flatnonzero(env.action_masks()):
        groups.setdefault(env.action_key(int(a)), []).append(int(a))
    return groups


#: the two default ids take ~20 s each on a 2-core machine: marked slow (deselected by default, run by CI)
@pytest.mark.parametrize(("env_id", "rule", "stride"), [
    pytest.param("HeteroML-v1", "earliest", 2, marks=pytest.mark.slow),
    pytest.param("HeteroML-v0", "random", 3, marks=pytest.mark.slow),
    ("HeteroML-rl-hard-v1", "earliest", 1),
    ("HeteroML-rl-hard-v1", "random", 1)])
def test_action_key_groups_actions_with_the_same_effect(env_id, rule, stride):
    """On the states of an episode (earliest's or random legal actions': with and without cached estimates, more
    and less crowded schedules): the valid actions with one key, each stepped on its own fork, give the same reward
    (``==``), the same simulator state and ledger, and the same next observation and mask; the key leaves the env's
    state as it was. Invalid actions, ``Placement`` objects and slot-driven envs get keys of their own."""
    env = gym.make(env_id).unwrapped
    states = same = 0
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    J = env.jobs.num_jobs
    for k in range(J - 1):
        if k % stride == 0:
            before = _state(env)
            groups = _key_groups(env)
            _assert_same_state(before, _state(env))
            for acts in groups.values():
                if len(acts) < 2:
                    continue
                runs = []
                for a in acts:
                    g = env.fork(seed=0, future="keep")
                    obs, r, *_ = g.step(a)
                    runs.append((r, obs, g))
                for r, obs, g in runs[1:]:
                    assert r == runs[0][0]
                    np.testing.assert_array_equal(obs, runs[0][1])
                    _assert_same(g, runs[0][2])
                same += len(acts) - 1
            states += 1
        mask = env.action_masks()
        if not mask.all():
            bad = int(np.flatnonzero(~mask)[0])
            assert env.action_key(bad) == ("action", bad)
        env.step(Earliest(env).act(None) if rule == "earliest" else int(rng.choice(np.flatnonzero(mask))))
    assert states >= 49 and same > 0
    from edgegym.families.hetero_ml.simulator import Placement

    pl = Placement(0, 0, 0, -1, np.zeros(env.H, dtype=np.int64), np.zeros(env.H, dtype=np.int64))
    assert env.action_key(pl) == ("placement", id(pl))
    slot = gym.make(env_id, config={"env": {"discipline": "drf"}}).unwrapped
    slot.reset(seed=0)
    assert slot.action_key(0) == ("action", 0)
    with pytest.raises(ValueError, match="outside"):
        env.action_key(env.n_grid)


def _assert_same_state(a, b) -> None:
    assert a[:3] == b[:3]
    for x, y in zip(a[3], b[3], strict=True):
        np.testing.assert_array_equal(x, y)


def test_fork_ledger_and_resampled_jobs(monkeypatch):
    """The fork's ledger equals a deep copy's, before and after a flush, and neither env sees the other's commits;
    the resampled fork's jobs equal the revalidated splice (the same values, dtypes and read-only arrays)."""
    env = gym.make("HeteroML-v1").unwrapped
    env.reset(seed=4)
    for _ in range(20):
        env.step(Earliest(env).act(None))
    for flush_first in (False, True):
        if flush_first:
            env.sim.ledger.usage  # noqa: B018  (writes the dense array: from now on a fork copies it)
        n0 = len(env.sim.ledger._pending)
        deep = forking.fast_copy(env.sim.ledger)
        assert _compare_at(env, 6, seed=0) == 6  # both forks' dense ledgers equal after 6 steps
        f = env.fork(seed=0, future="keep")
        Earliest(f).advance(6, 0.0)
        assert len(f.sim.ledger._pending) == n0 + 6 and len(env.sim.ledger._pending) == n0
        g = env.fork(seed=0, future="keep")
        np.testing.assert_array_equal(env.sim.ledger.usage, deep.usage)  # the original is untouched
        np.testing.assert_array_equal(g.sim.ledger.usage, deep.usage)
    # while the dense array was never written, forks read one shared read-only zero array; a flush (here through
    # FIFO's free_over) gives a fork its own, and the fork's and the env's own steps agree
    env2 = gym.make("HeteroML-v1").unwrapped
    env2.reset(seed=4)
    for _ in range(12):
        env2.step(Earliest(env2).act(None))
    f1, f2 = env2.fork(seed=0, future="keep"), env2.fork(seed=0, future="keep")
    assert type(f1.sim.ledger) is hfork.ForkLedger and f1.sim.ledger._usage is f2.sim.ledger._usage
    assert not f1.sim.ledger._usage.flags.writeable
    p1, p0 = FIFO(f1, 3), FIFO(env2, 3)
    for _ in range(5):
        f1.step(p1.act(None))
        env2.step(p0.act(None))
    assert f1.sim.ledger._usage.flags.writeable and not f2.sim.ledger._usage.any()
    _assert_same(f1, env2)
    np.testing.assert_array_equal(f1.sim.ledger.usage, env2.sim.ledger.usage)
    real = hfork.splice_jobs
    forks = [env.fork(seed=7, future="resample")]
    with monkeypatch.context() as mp:  # the oracle: the table revalidated (dataclasses.replace)
        mp.setattr(hfork, "splice_jobs", lambda *a, **kw: real(*a, **{**kw, "revalidate": True}))
        forks.append(env.fork(seed=7, future="resample"))
    for fld in dataclasses.fields(forks[0].jobs):
        x, y = getattr(forks[0].jobs, fld.name), getattr(forks[1].jobs, fld.name)
        np.testing.assert_array_equal(x, y)
        assert x.dtype == y.dtype and not x.flags.writeable and not y.flags.writeable
    a, b = forks
    pa, pb = Earliest(a), Earliest(b)
    assert pa.advance(15, 0.0)[1:] == pb.advance(15, 0.0)[1:]


def _full_state(obj, seen=None):
    """Every value reachable from ``obj``'s attributes (arrays by their bytes), for an exact comparison; the
    shared read-only inputs (the cluster, the job tables, the preset, the spaces), the caches ``quick_fork`` shares
    (``fork.QUICK_SHARED``) and the buffers' parts never read before written (the kernels' listing past its listed
    jobs, the usage profiles' unused tails) are left out."""
    seen = set() if seen is None else seen
    if isinstance(obj, np.ndarray):
        return ("a", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, list | tuple):
        return [_full_state(v, seen) for v in obj]
    if isinstance(obj, dict):
        return {k: _full_state(v, seen) for k, v in obj.items()}
    if isinstance(obj, float) and np.isnan(obj):
        return "nan"
    if isinstance(obj, np.random.Generator):
        return ("rng", str(obj.bit_generator.state))
    if type(obj).__module__.startswith("edgegym") and not hasattr(type(obj), "__dataclass_params__"):
        if id(obj) in seen:
            return ("seen", type(obj).__name__)
        seen.add(id(obj))
        skip = {"jobs", "cluster", "ideal", "_inst", "preset", "observation_space", "action_space", "spec",
                "features", "_jsc", "_fork_draws", "obs_layout", "_jsrv"}
        skip.update(hfork.QUICK_SHARED)  # caches checked against the state they describe, and scratch
        out = {n: _full_state(v, seen) for n, v in vars(obj).items() if n not in skip and n != "_prof_step"}
        if "_jsrv" in vars(obj):
            out["_jsrv"] = obj._jsrv[: obj._jptr[obj._jptr[-1]]].tobytes()
        pr = vars(obj).get("_prof_step")
        if pr is not None:  # the usage profiles: each server's pieces (the buffers' unused tails are not state)
            pp, cnt, times, vals = pr[1]
            out["_prof_step"] = (pr[0], [(times[pp[h]:pp[h] + cnt[h]].tobytes(), vals[pp[h]:pp[h] + cnt[h]].tobytes())
                                         for h in range(cnt.shape[0])])
        return out
    return obj if isinstance(obj, int | float | str | bool | type(None) | np.generic) else type(obj).__name__


@pytest.mark.parametrize("env_id", IDS)
def test_quick_fork_equals_the_generic_fork(env_id):
    """``quick_fork`` (the direct copy ``HeteroMLEnv.fork`` uses) against ``fork_env``'s generic copy, the oracle,
    on states reached by random legal actions and by forks of forks: the same state (every simulator array, the
    ledger, the rewards, the generator, the marks, the resampled jobs), the same observation, and the same
    steps afterwards (rewards, observations, masks, state), with neither fork touching the env."""
    env = gym.make(env_id).unwrapped
    generic = lambda e, s, fut: forking.fork_env(e, seed=s, future=fut, shared=hfork.FORK_SHARED,  # noqa: E731
                                                 resample=hfork.resample_future,
                                                 copies={"sim.ledger": hfork.copy_ledger})
    checked = 0
    for seed in (0, 5):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        J = env.jobs.num_jobs
        for k in range(J - 1):
            if k % max(1, J // 10) == 1:
                before = _full_state(env)
                for fut, s in (("keep", 0), ("resample", k + 3)):
                    src = env if fut == "keep" or k % 2 else env.fork(seed=1, future="resample")
                    assert hfork.quick_forkable(src)
                    q, g = hfork.quick_fork(src, s, fut), generic(src, s, fut)
                    assert _full_state(q) == _full_state(g)
                    for fld in dataclasses.fields(q.jobs):
                        np.testing.assert_array_equal(getattr(q.jobs, fld.name), getattr(g.jobs, fld.name))
                    assert (q.clairvoyant, q.resampled, q.fork_seed) == (g.clairvoyant, g.resampled, g.fork_seed)
                    np.testing.assert_array_equal(q.observe(), g.observe())
                    for _ in range(4):
                        if q._k >= J - 1:
                            break
                        a = int(rng.choice(np.flatnonzero(q.action_masks())))
                        oq, rq, *_ = q.step(a)
                        og, rg, *_ = g.step(a)
                        assert rq == rg
                        np.testing.assert_array_equal(oq, og)
                        np.testing.assert_array_equal(q.action_masks(), g.action_masks())
                        checked += 1
                    assert q.advance_earliest(6, decide=lambda f=q: Earliest(f).act(None))[1:] == \
                        g.advance_earliest(6, decide=lambda f=g: Earliest(f).act(None))[1:]
                    assert _full_state(q) == _full_state(g)
                assert _full_state(env) == before
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert checked > 100
    slot = HeteroMLEnv("tiny", config={"env": {"discipline": "drf"}})
    slot.reset(seed=0)
    assert not hfork.quick_forkable(slot)  # the generic copy
    assert not hfork.quick_forkable(gym.make(env_id).unwrapped)  # never reset


def test_earliest_fork_is_the_generic_copy():
    """``Earliest.fork`` (a new policy on the fork) against ``Policy.fork``'s deep copy: the same attributes, bound to
    the fork (and its unwrapped env), and the same actions there; a subclass or an extra attribute takes the copy."""
    from edgegym.agents.policy import Policy

    env = gym.make("HeteroML-v1")
    env.reset(seed=2)
    pol = Earliest(env)
    f = env.unwrapped.fork(seed=1)
    quick, deep = pol.fork(f), Policy.fork(pol, f)
    assert type(quick) is type(deep) is Earliest
    assert vars(quick).keys() == vars(deep).keys() and quick.env is deep.env is f and quick.unwrapped is f
    assert quick.act(None) == deep.act(None)
    pol.note = [1]
    other = pol.fork(f)
    assert other.note == [1] and other.note is not pol.note
