"""What a rollout continuation of EdgeCloudML leaves undone at its end, against the env that does it all.

* A look-ahead fork (``fork(history=False)``) that ends its episode by ``step_quiet`` drains its simulator when the
  outcome is first read, not at that step: the same rewards as a full fork stepped by ``step``, and then the same
  outcome (completions, A_ps's draws, the episode series), also through a fork of the finished fork; ``step``
  still drains at once, and ``reset`` forgets a pending drain.
* ``advance_aonline(last=True)`` (``AOnline.advance_after(..., last=True)``, a rollout continuation at its
  horizon): the same steps and rewards as without it; when every step asked for was taken, the env is spent and
  every call but ``reset`` raises, naming the cause; when fewer were (the episode's last step is left), the env is
  prepared as usual (the same observation, masks and next steps).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.reference.aonline import AOnline

import edgegym  # noqa: F401  (registers the ids)


def _env(env_id="EdgeCloudML-testbed-v1", mode="cloud_fraction", seed=0):
    env = gym.make(env_id, config={"env": {"action_mode": mode}}).unwrapped
    env.reset(seed=seed)
    return env


def _play(env, steps, rng):
    """``steps`` steps of A_online's and random legal actions (alternating)."""
    base = AOnline(env)
    for k in range(steps):
        if k % 2:
            a = base.act(None)
        elif env.action_mode == "server_proportions":
            a = (rng.random(env.action_space.shape) * env.action_masks()).astype(np.float32)
        else:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
        env.step(a)


@pytest.mark.parametrize("mode", ("cloud_fraction", "server_proportions"))
def test_lean_fork_drains_when_the_outcome_is_read(mode):
    env = _env(mode=mode, seed=3)
    rng = np.random.default_rng(3)
    _play(env, env._J // 2, rng)
    lean, full = env.fork(seed=0, future="keep", history=False), env.fork(seed=0, future="keep")
    assert lean._lazy_drain and not full._lazy_drain
    base_l, base_f = AOnline(lean), AOnline(full)
    term = False
    while not term:
        a = base_l.act(None)
        assert a == base_f.act(None) if mode != "server_proportions" else np.array_equal(a, base_f.act(None))
        r_l, term, _ = lean.step_quiet(a)
        _, r_f, term_f, _, info = full.step(a)
        assert (r_l, term) == (r_f, term_f)
    assert not lean.sim._drained and full.sim._drained  # the drain left for later on the look-ahead fork
    assert lean._return == full._return
    again = lean.fork(seed=0, future="keep")  # a fork of the finished fork drains on its own read
    np.testing.assert_array_equal(lean._outcome.completion_slots, full._outcome.completion_slots)
    assert lean.sim._drained
    np.testing.assert_array_equal(lean.sim.ps_log, full.sim.ps_log)  # A_ps's draws: the same
    assert lean.episode_series()["job_times"] == full.episode_series()["job_times"]
    np.testing.assert_array_equal(again._outcome.completion_slots, full._outcome.completion_slots)
    assert info["episode_metrics"]["total_jct"] == pytest.approx(float(np.sum(
        full._outcome.completion_slots - full.jobs.arrival_slots)))


def test_lean_fork_step_drains_at_once_and_reset_forgets_a_pending_drain():
    env = _env(seed=1)
    _play(env, env._J - 3, np.random.default_rng(1))
    loud = env.fork(seed=0, future="keep", history=False)
    quiet = env.fork(seed=0, future="keep", history=False)
    base = AOnline(loud)
    for _ in range(3):
        a = base.act(None)
        _, _, term, _, info = loud.step(a)
        quiet.step_quiet(a)
    assert term and loud.sim._drained and "episode_metrics" in info
    assert quiet._drain_due
    quiet.reset(seed=4)
    assert not quiet._drain_due and quiet._outcome is None
    assert quiet.step(int(np.flatnonzero(quiet.action_masks())[0]))[2] is False


def _spent_calls(env):
    a = int(np.flatnonzero(np.ones(env.action_space.n))[0])
    return {
        "observe": env.observe,
        "step": lambda: env.step(a),
        "step_quiet": lambda: env.step_quiet(a),
        "action_masks": env.action_masks,
        "action_key": lambda: env.action_key(a),
        "decode_action": lambda: env.decode_action(a),
        "view": env.view,
        "advance_aonline": lambda: env.advance_aonline(2, observe=False),
        "fork": lambda: env.fork(seed=0, future="keep"),
        "resampled fork": lambda: env.fork(seed=1),
    }


@pytest.mark.parametrize("env_id", ("EdgeCloudML-testbed-v1", "EdgeCloudML-v1"))
def test_advance_last_takes_the_same_steps_and_leaves_a_spent_env(env_id):
    env = _env(env_id, seed=2)
    rng = np.random.default_rng(2)
    checked = 0
    for point in range(12):
        _play(env, 1 + point % 3, rng)
        if env._k >= env._J - 1:
            break
        key = env.action_key(int(rng.choice(np.flatnonzero(env.action_masks()))))
        for steps in (1, 5):
            g_last = env.fork(seed=point, history=False)
            g_ref = env.fork(seed=point, history=False)
            out_last = AOnline(g_last).advance_after(key, steps, 0.25, last=True)
            out_ref = AOnline(g_ref).advance_after(key, steps, 0.25)
            assert out_last[1:] == out_ref[1:] and out_last[0] is None
            assert g_last._return == g_ref._return and g_last._k == g_ref._k
            if out_ref[1] < steps:  # fewer taken: prepared as usual
                np.testing.assert_array_equal(g_last.observe(), g_ref.observe())
                continue
            for name, call in _spent_calls(g_last).items():
                with pytest.raises(RuntimeError, match="look-ahead"):
                    call()
                    pytest.fail(f"{name} did not raise on a spent env")
                checked += 1
            g_last.reset(seed=5)  # usable again
            assert g_last.step(int(np.flatnonzero(g_last.action_masks())[0]))[2] is False
    assert checked >= 100


def test_advance_last_near_the_end_prepares_and_observe_true_ignores_it():
    env = _env(seed=6)
    _play(env, env._J - 4, np.random.default_rng(6))
    a, b = env.fork(seed=0, future="keep"), env.fork(seed=0, future="keep")
    obs_a, n_a, tot_a = a.advance_aonline(10, observe=False, last=True)  # 3 steps left before the last: fewer
    obs_b, n_b, tot_b = b.advance_aonline(10, observe=False)
    assert (n_a, tot_a) == (n_b, tot_b) == (3, tot_b) and obs_a is None
    np.testing.assert_array_equal(a.observe(), b.observe())
    np.testing.assert_array_equal(a.action_masks(), b.action_masks())
    r_a = a.step(int(np.flatnonzero(a.action_masks())[0]))
    r_b = b.step(int(np.flatnonzero(b.action_masks())[0]))
    assert r_a[1:3] == r_b[1:3] and r_a[2]
    c, d = env.fork(seed=0, future="keep"), env.fork(seed=0, future="keep")
    obs_c, n_c, _ = c.advance_aonline(2, observe=True, last=True)  # an observation asked for: prepared
    obs_d, n_d, _ = d.advance_aonline(2, observe=True)
    assert n_c == n_d == 2
    np.testing.assert_array_equal(obs_c, obs_d)
    c.step(int(np.flatnonzero(c.action_masks())[0]))
