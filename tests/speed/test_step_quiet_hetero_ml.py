"""HeteroML's side of the rollout contract: ``step_quiet(action)`` leaves the env in exactly the state
``step(action)`` leaves it in (the simulator's arrays, the ledger's commits, the rewards, the step index, the count of
invalid actions) and returns the same reward and flags, and ``observe()`` returns the observation that ``step``
returned (and the same mask); checked on more than 1,000 states reached by random legal actions, invalid actions
and structured placements, on v0, v1, the rl-hard preset and a slot-driven discipline (the tiny preset), observing
only some states (the others go on without any observation, as rollout's continuations do)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.baselines.hetero_ml import SingleWorker

import edgegym  # noqa: F401  (registers the envs)
from edgegym.families.hetero_ml.env import HeteroMLEnv

CASES = [("HeteroML-v0", None), ("HeteroML-v1", None), ("HeteroML-rl-hard-v1", None),
         ("tiny", {"env": {"discipline": "drf"}})]


def _state(env) -> tuple:
    s = env.sim
    pending = [(r.tolist(), f.tolist(), a, b) for r, f, a, b in s.ledger._pending]
    arrays = tuple(x.tobytes() for x in (s.start, s.duration, s.worker_type, s.ps_type, s.workers, s.ps, s.colocated))
    return env._k, list(env._rewards), env._illegal, pending, arrays


def _action(env, rng, step):
    """A random legal grid action; every 7th step an invalid one (mapped by the env), every 11th a placement."""
    mask = env.action_masks()
    if not env.slot_driven and step % 11 == 5:
        return SingleWorker(env).act(None)
    if not env.slot_driven and step % 7 == 3 and not mask.all():
        return int(rng.choice(np.flatnonzero(~mask)))
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("env_id,config", CASES)
def test_step_quiet_and_observe_match_step(env_id, config):
    if config:  # a preset with a slot-driven discipline
        loud, quiet = HeteroMLEnv(env_id, config=config), HeteroMLEnv(env_id, config=config)
    else:
        loud, quiet = gym.make(env_id).unwrapped, gym.make(env_id).unwrapped
    checked = expected = 0
    seeds = (0, 1, 2) if config is None else (0,)
    for seed in seeds:
        loud.reset(seed=seed)
        quiet.reset(seed=seed)
        rng = np.random.default_rng(seed)
        expected += loud.jobs.num_jobs
        step = 0
        while True:
            a = _action(loud, rng, step)
            o1, r1, t1, tr1, _ = loud.step(a)
            r2, t2, tr2 = quiet.step_quiet(a)
            assert type(r2) is float and r2 == r1 and t2 == t1 and tr2 == tr1
            assert _state(quiet) == _state(loud), (env_id, seed, step)
            if step % 3 == 0 or t1:
                o2 = quiet.observe()
                assert o2.dtype == o1.dtype and np.array_equal(o2, o1), (env_id, seed, step)
                assert np.array_equal(quiet.action_masks(), loud.action_masks())
            checked += 1
            step += 1
            if t1:
                break
        assert quiet.episode_return() == loud.episode_return()
        assert quiet.episode_metrics() == loud.episode_metrics()
    assert checked == expected  # every step of every episode (1,050 states and more)


def test_step_quiet_refuses_what_step_refuses():
    env = gym.make("HeteroML-v1").unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step_quiet(0)
    with pytest.raises(RuntimeError, match="reset"):
        env.observe()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside"):
        env.step_quiet(env.action_space.n)
    while not env.step_quiet(int(np.flatnonzero(env.action_masks())[0]))[1]:
        pass
    assert env.observe().shape == env.observation_space.shape and not env.observe().any()
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step_quiet(0)
