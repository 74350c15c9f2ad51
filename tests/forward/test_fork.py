"""``env.unwrapped.fork(seed, future)`` on every family: a ``keep`` fork replays the original exactly, forks are
independent of the original (and it of them), a ``resample`` fork keeps every arrived job and the current
observation and never reads the real future, the seed decides the future, bad arguments are named, and
``Policy.fork`` gives a policy acting on the fork's state."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.runner import make_env

import edgegym  # noqa: F401  (registers the envs)

#: (env id, env config, steps before the fork); tiny presets and the cheap default ids
CASES = [
    ("EdgeCloudML-testbed-v0", None, 7),
    ("EdgeCloudML-testbed-v0", {"env": {"action_mode": "cloud_fraction"}}, 12),
    ("EdgeCloudML-v0", None, 40),
    ("EdgeUtility-tiny-v0", None, 9),
    ("EdgeUtility-v0", None, 25),
    ("HeteroML-tiny-v0", None, 3),
    ("WirelessUDL-tiny-v0", None, 1),
    ("WirelessUDL-testbed-v0", None, 4),
]
IDS = [f"{c[0]}{'-' + c[1]['env']['action_mode'] if c[1] else ''}" for c in CASES]


def _make(env_id, cfg, seed=3):
    env = gym.make(env_id, config=cfg)
    env.reset(seed=seed)
    return env.unwrapped


def _action(u, i: int):
    """A deterministic legal action that varies with the step."""
    if not hasattr(u.action_space, "n"):
        w = np.full(u.action_space.shape, 0.3, dtype=np.float32)
        w[i % w.size] = 1.0
        return w
    legal = np.flatnonzero(np.asarray(u.action_masks(), dtype=bool))
    return int(legal[(7 * i + 3) % legal.size])


def _run(u, start: int, limit: int | None = None):
    """Step ``u`` to the end (or ``limit`` steps) with :func:`_action`; (rewards, observations, final info)."""
    rewards, obs, info, i, done = [], [], {}, start, False
    while not done and (limit is None or i - start < limit):
        o, r, term, trunc, info = u.step(_action(u, i))
        rewards.append(r)
        obs.append(o)
        done = term or trunc
        i += 1
    return rewards, obs, info


def _same_metrics(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(x, y, equal_nan=True):
                return False
        elif x != y:
            return False
    return True


def _assert_same(run1, run2):
    r1, o1, i1 = run1
    r2, o2, i2 = run2
    assert r1 == r2
    assert len(o1) == len(o2) and all(np.array_equal(a, b) for a, b in zip(o1, o2, strict=True))
    if "episode_metrics" in i1 or "episode_metrics" in i2:
        assert _same_metrics(i1["episode_metrics"], i2["episode_metrics"])


def _advance(u, n):
    for i in range(n):
        u.step(_action(u, i))


def _table(u):
    return u.inst if getattr(u, "inst", None) is not None else u.jobs


def _per_job_fields(u):
    t = _table(u)
    J = t.num_jobs
    for f in dataclasses.fields(t):
        v = getattr(t, f.name)
        if (isinstance(v, np.ndarray) and v.ndim and v.shape[0] == J) or (isinstance(v, tuple) and len(v) == J):
            yield f.name, v


@pytest.mark.parametrize("env_id,cfg,n", CASES, ids=IDS)
def test_keep_fork_replays_the_original_exactly(env_id, cfg, n):
    u = _make(env_id, cfg)
    _advance(u, n)
    f = u.fork(seed=0, future="keep")
    assert f.clairvoyant is True and f is not u
    assert np.array_equal(f._observation(), u._observation())
    _assert_same(_run(u, n), _run(f, n))


@pytest.mark.parametrize("env_id,cfg,n", CASES, ids=IDS)
def test_forks_and_original_are_independent(env_id, cfg, n):
    a, b = _make(env_id, cfg), _make(env_id, cfg)
    _advance(a, n)
    _advance(b, n)
    for future in ("keep", "resample"):
        f = a.fork(seed=1, future=future)
        _run(f, n)  # the fork runs to the end first: the original must not notice
    g = a.fork(seed=2, future="keep")
    _assert_same(_run(a, n), _run(b, n))  # the original ran to the end: the earlier fork must not notice
    c = _make(env_id, cfg)
    _advance(c, n)
    _assert_same(_run(g, n), _run(c, n))


@pytest.mark.parametrize("env_id,cfg,n", CASES, ids=IDS)
def test_resample_keeps_the_arrived_jobs_and_redraws_the_rest(env_id, cfg, n):
    u = _make(env_id, cfg)
    _advance(u, n)
    k = u._k
    f1, f1b, f2 = u.fork(seed=5), u.fork(seed=5), u.fork(seed=6)
    assert f1.clairvoyant is False and f1.resampled is True
    assert np.array_equal(f1._observation(), u._observation())
    assert np.array_equal(np.asarray(f1.action_masks()), np.asarray(u.action_masks()))
    changed = False
    for (name, true), (_, mine), (_, other) in zip(_per_job_fields(u), _per_job_fields(f1), _per_job_fields(f2),
                                                   strict=True):
        assert np.array_equal(np.asarray(true[: k + 1]), np.asarray(mine[: k + 1])), name
        changed |= not np.array_equal(np.asarray(mine[k + 1:]), np.asarray(other[k + 1:]))
    assert changed, "different seeds must give different futures"
    _assert_same(_run(f1, n), _run(f1b, n))  # same seed, same fork


@pytest.mark.parametrize("env_id,cfg,n", CASES, ids=IDS)
def test_resample_fork_never_reads_the_real_future(env_id, cfg, n):
    u = _make(env_id, cfg)
    _advance(u, n)
    other = u.fork(seed=99)  # the same past with another future: a resample fork must not see the difference
    _assert_same(_run(u.fork(seed=5), n), _run(other.fork(seed=5), n))


@pytest.mark.parametrize("env_id", ["EdgeUtility-tiny-v0", "WirelessUDL-testbed-v0"])
def test_resample_fork_equals_a_fresh_episode_on_the_spliced_jobs(env_id):
    """Oracle: an env built on the fork's job table and replayed with the same actions is in the fork's state."""
    u, n = _make(env_id, None), 4
    _advance(u, n)
    f = u.fork(seed=8)
    fresh = gym.make(env_id, instance=_table(f)).unwrapped
    fresh.reset(seed=3)
    _advance(fresh, n)
    assert np.array_equal(fresh._observation(), f._observation())
    r1, r2 = _run(fresh, n), _run(f, n)
    for r in (r1, r2):
        r[2]["episode_metrics"].pop("workload_source", None)  # 'instance' for the oracle
    _assert_same(r1, r2)


def test_fork_of_a_terminated_episode_and_after_the_last_job():
    u = _make("HeteroML-tiny-v0", None)
    _run(u, 0)
    f = u.fork(seed=1)
    assert f._k == u._k


@pytest.mark.parametrize("env_id", ["EdgeCloudML-tiny-v0", "EdgeUtility-tiny-v0", "HeteroML-tiny-v0",
                                    "WirelessUDL-tiny-v0"])
def test_bad_arguments_and_fork_before_reset(env_id):
    env = gym.make(env_id)
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.fork(seed=0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="future"):
        env.unwrapped.fork(seed=0, future="true")
    with pytest.raises(ValueError, match="seed"):
        env.unwrapped.fork(seed=-1)


@pytest.mark.parametrize("env_id,policy", [("EdgeCloudML-testbed-v0", "aonline"), ("EdgeUtility-tiny-v0", "o4a"),
                                           ("HeteroML-tiny-v0", "aonline-hetero"),
                                           ("WirelessUDL-testbed-v0", "greedy-min-cost")])
def test_policy_fork_acts_on_the_forks_state(env_id, policy):
    env, pol = make_env(env_id, policy, 0)
    obs, _ = env.reset(seed=4)
    pol.reset(4)
    for _ in range(2):
        obs, *_ = env.step(pol.predict(obs)[0])
    u = env.unwrapped
    f = u.fork(seed=0, future="keep")
    pf = pol.fork(f)
    assert pf is not pol and pf.unwrapped is f and pf.env is f
    done, fobs = False, obs
    while not done:  # the fork and its policy follow the original and its policy decision for decision
        a, _ = pol.predict(obs)
        b, _ = pf.predict(fobs)
        assert repr(a) == repr(b)
        obs, r, done, _, _ = env.step(a)
        fobs, rf, _, _, _ = f.step(b)
        assert r == rf


@pytest.mark.parametrize("discipline", ["o4a", "srpt", "hpu"])
def test_resample_fork_with_as_many_jobs_as_servers(discipline):
    """The EdgeUtility banks hold per-server arrays whose length is the number of servers: with as many jobs as
    servers, a resample fork must still redraw only the per-job rows (oracle: a fresh env on the spliced jobs)."""
    probe = _make("EdgeUtility-tiny-v0", None)
    S = probe.num_edge_servers  # the banks' row count (the cloud runs outside them)
    cfg = {"workload": {"num_jobs": S}, "scheduler": {"discipline": discipline}}
    u, n = _make("EdgeUtility-tiny-v0", cfg), 1
    _advance(u, n)
    f = u.fork(seed=8)
    assert f.jobs.num_jobs == S
    fresh = gym.make("EdgeUtility-tiny-v0", config=cfg, instance=_table(f)).unwrapped
    fresh.reset(seed=3)
    _advance(fresh, n)
    assert np.array_equal(fresh._observation(), f._observation())
    r1, r2 = _run(fresh, n), _run(f, n)
    for r in (r1, r2):
        r[2]["episode_metrics"].pop("workload_source", None)
    _assert_same(r1, r2)


def test_retain_freed_memory_is_idempotent_and_can_be_switched_off():
    """The first fork raises glibc's trim threshold once (a bool either way); EDGEGYM_NO_MALLOPT=1 leaves malloc
    alone (checked in a fresh interpreter, the setting is per process)."""
    import subprocess
    import sys

    from edgegym.core.forking import retain_freed_memory

    first = retain_freed_memory()
    assert isinstance(first, bool) and retain_freed_memory() is first
    code = "from edgegym.core.forking import retain_freed_memory as r; print(r())"
    env = {**__import__("os").environ, "EDGEGYM_NO_MALLOPT": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_splice_without_revalidation_equals_the_checked_splice():
    """``splice_jobs(..., revalidate=False)`` (EdgeCloudML's resampled forks) builds the same table as the checked
    path: every field equal, same dtypes, read-only arrays; the originals are untouched."""
    from edgegym.core.forking import shifted_arrivals, splice_jobs

    a_env, b_env = gym.make("EdgeCloudML-v0").unwrapped, gym.make("EdgeCloudML-v0").unwrapped
    a_env.reset(seed=1)
    b_env.reset(seed=2)
    a, b = a_env.jobs, b_env.jobs
    for start in (0, 5, a.num_jobs - 1, a.num_jobs):
        arr = shifted_arrivals(a.arrival_slots, b.arrival_slots, start)
        want = splice_jobs(a, b, start, arrival_slots=arr)
        got = splice_jobs(a, b, start, revalidate=False, arrival_slots=arr)
        for f in dataclasses.fields(want):
            x, y = getattr(want, f.name), getattr(got, f.name)
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype and np.array_equal(x, y) and not y.flags.writeable, (start, f.name)
            else:
                assert x == y, (start, f.name)
    assert a_env.jobs is a and not a.arrival_slots.flags.writeable
