"""The shared row-scorer policy: permuting the rows (servers, grid actions, candidate plans) permutes the row
logits, nothing else changes; on every family whose v1 observation has rows."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch as th  # noqa: E402
from edgegym.agents.rl.shared import SharedRowPolicy, env_obs_layout  # noqa: E402
from edgegym.agents.runner import env_family  # noqa: E402

import edgegym  # noqa: E402,F401
from edgegym.families import families  # noqa: E402

CASES = [
    ("EdgeUtility-tiny-v1", None),
    ("EdgeUtility-testbed-v1", {"workload": {"num_jobs": 30}}),
    ("EdgeCloudML-testbed-v1", {"env": {"action_mode": "cloud_fraction"}}),
    ("HeteroML-tiny-v1", None),  # rows = grid actions
    ("WirelessUDL-v1", None),  # rows = candidate plans
]


def _policy(env, seed=0):
    th.manual_seed(seed)
    return SharedRowPolicy(env.observation_space, env.action_space, lambda _: 3e-4, layout=env_obs_layout(env))


def _permute(obs, lay, perm):
    s, N, F = lay["rows_start"], lay["rows"], lay["row_dim"]
    out = obs.copy()
    out[s : s + N * F] = obs[s : s + N * F].reshape(N, F)[perm].ravel()
    return out


@pytest.mark.parametrize("env_id,cfg", CASES)
def test_permuting_rows_permutes_logits(env_id, cfg):
    env = gym.make(env_id, config=cfg)
    lay = env_obs_layout(env)
    pol = _policy(env)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=4)
    for _ in range(5):  # a few non-trivial states
        mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
        obs, *_ = env.step(int(rng.choice(np.flatnonzero(mask))))
    N = lay["rows"]
    perm = rng.permutation(N)
    x = th.as_tensor(np.stack([obs, _permute(obs, lay, perm)]))
    with th.no_grad():
        logits = pol.logits(x).numpy()
        values = pol.predict_values(x).numpy().ravel()
    want = np.concatenate([logits[0, :N][perm], logits[0, N:]]) if lay["row_actions"] else logits[0]
    np.testing.assert_allclose(logits[1], want, rtol=1e-5, atol=1e-6)
    assert values[1] == pytest.approx(values[0], rel=1e-5, abs=1e-6)
    assert np.ptp(logits[0][np.asarray(env.unwrapped.action_masks(), dtype=bool)]) > 0  # not trivially constant


def test_row_logit_depends_only_on_its_row_and_the_pool():
    """Two identical rows get identical logits (the same scorer scores every row)."""
    env = gym.make("EdgeUtility-tiny-v1")
    lay = env_obs_layout(env)
    obs, _ = env.reset(seed=0)
    s, F = lay["rows_start"], lay["row_dim"]
    obs = obs.copy()
    obs[s + F : s + 2 * F] = obs[s : s + F]
    with th.no_grad():
        lg = _policy(env).logits(th.as_tensor(obs[None])).numpy()[0]
    assert lg[1] == pytest.approx(lg[0], abs=1e-7)


def test_policy_saves_and_loads(tmp_path):
    from sb3_contrib import MaskablePPO

    env = gym.make("EdgeUtility-tiny-v1")
    model = MaskablePPO(SharedRowPolicy, env, policy_kwargs={"layout": env_obs_layout(env)}, n_steps=64,
                        batch_size=32, seed=0, device="cpu")
    obs, _ = env.reset(seed=0)
    a0 = model.predict(obs, deterministic=True, action_masks=env.unwrapped.action_masks())[0]
    model.save(tmp_path / "m.zip")
    back = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert isinstance(back.policy, SharedRowPolicy)
    assert back.predict(obs, deterministic=True, action_masks=env.unwrapped.action_masks())[0] == a0


def test_every_family_declares_its_layout_or_is_listed():
    """Families whose env has no obs_layout() cannot use the shared policy yet (listed in the agents page)."""
    missing = []
    for name in families():
        env_id = f"{name}-v0"
        env = gym.make(env_id)
        if env_obs_layout(env) is None:
            missing.append(env_family(env_id))
        env.close()
    assert set(missing) <= {"HeteroML", "WirelessUDL"}, missing


@pytest.mark.parametrize("factor_min_rows", [0, 10**9])
@pytest.mark.parametrize("row_actions, n_actions", [(True, 7), (False, 4)])
def test_factorised_layers_equal_concatenating_the_context(row_actions, n_actions, factor_min_rows, monkeypatch):
    """On large batches the row network and the scorer apply their first layer to ``row_i ‖ context`` without
    building the concatenation (the context's product once per sample): both paths are the concatenated form's
    function with the same weights."""
    from edgegym.agents.rl import shared
    from edgegym.agents.rl.shared import SharedRowNet

    monkeypatch.setattr(shared, "FACTOR_MIN_ROWS", factor_min_rows)
    th.manual_seed(3)
    layout = {"job": (0, 3), "glob": (3, 5), "rows_start": 5, "rows": 7, "row_dim": 4, "row_actions": row_actions}
    net = SharedRowNet(layout, n_actions, hidden=16)
    obs = th.randn(9, 5 + 7 * 4)
    obs[:, 5 + 2 * 4 : 5 + 4 * 4] = 0.0  # two padding rows
    logits, value = net(obs)

    want_logits, want_value = net.forward_concat(obs)
    th.testing.assert_close(logits, want_logits, rtol=1e-5, atol=1e-6)
    th.testing.assert_close(value, want_value, rtol=1e-5, atol=1e-6)
    B, N, H = 9, 7, 16  # and the concatenating form is the one written out here
    ctx = net.ctx(th.cat([obs[:, 0:3], obs[:, 3:5]], dim=1))
    h = net.row_net(th.cat([obs[:, 5:].reshape(B, N, 4), ctx.unsqueeze(1).expand(B, N, H)], dim=2))
    h_ref, _, _ = net._encode(obs, concat=True)
    th.testing.assert_close(h_ref, h)


def test_context_ranges_may_be_several_segments():
    """``job`` / ``glob`` given as several ``(start, stop)`` ranges: the context reads them in order, skipping what
    lies between (an env's per-site blocks); the same weights on an observation with the skipped part removed and
    the layout shifted give the same logits and value, whatever the skipped part holds."""
    from edgegym.agents.rl.shared import SharedRowNet, layout_mismatch, segments, width

    assert segments((2, 5)) == ((2, 5),) and segments([[0, 1], [3, 4]]) == ((0, 1), (3, 4))
    assert segments(np.array([1, 4])) == ((1, 4),) and width(((0, 2), (5, 8))) == 5
    for bad in ((3, 1), ((0, 1), "x"), ((0, 1, 2),)):
        with pytest.raises(ValueError, match="layout range"):
            segments(bad)
    th.manual_seed(0)
    split = {"glob": ((0, 2),), "job": ((6, 9), (12, 13)), "rows_start": 13, "rows": 3, "row_dim": 4,
             "row_actions": True}
    packed = {"glob": (0, 2), "job": (2, 6), "rows_start": 6, "rows": 3, "row_dim": 4, "row_actions": True}
    net = SharedRowNet(split, 3, hidden=8)
    assert layout_mismatch(net, packed, 3) is None
    obs = th.randn(5, 13 + 12)
    keep = [0, 1, 6, 7, 8, 12] + list(range(13, 25))
    logits, value = net(obs)
    noise = obs.clone()
    noise[:, 2:6] = th.randn(5, 4)  # the skipped part does not matter
    noise[:, 9:12] = th.randn(5, 3)
    th.testing.assert_close(net(noise)[0], logits)
    th.testing.assert_close(net.forward_actor(obs[:, keep], packed), logits)
    th.testing.assert_close(net.value(net._encode(obs[:, keep], layout=packed)[1]), value)
