"""The replan mode's worker-rule rows (``env.replan_workers`` with the v1 ``env.obs_rows``): one candidate row per
rule of ``WORKER_RULES``, what each row says, the layout a per-row policy reads, and that building them changes no
decision of Okita's."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.families.wireless_udl.disciplines import WORKER_RULES, rule_workers
from edgegym.families.wireless_udl.env import WirelessUDLEnv

RULES = {"mode": "replan", "discipline": "okita", "replan_workers": True}


def _episode(env, seed, actions):
    """Rewards and observations of one episode with actions drawn from ``actions(rng)``."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out, rewards = [obs], []
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(actions(rng))
        out.append(obs)
        rewards.append(r)
        done = term or trunc
    return out, rewards, info["episode_metrics"]


@pytest.mark.parametrize("preset", ["testbed-v1", "sim-hard-v1"])
def test_rule_rows_compiled_observation_equals_the_reference(preset):
    """The compiled observation with the rule rows equals the numpy reference, step by step (random rules)."""
    fast = WirelessUDLEnv(preset, config={"env": RULES})
    ref = WirelessUDLEnv(preset, config={"env": RULES})
    ref._use_reference = True
    for seed in (0, 1):
        o1, r1, m1 = _episode(fast, seed, lambda g: int(g.integers(len(WORKER_RULES))))
        o2, r2, m2 = _episode(ref, seed, lambda g: int(g.integers(len(WORKER_RULES))))
        assert r1 == r2 and m1 == m2
        for a, b in zip(o1, o2, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("preset", ["testbed-v1", "sim-hard-v1"])
def test_rule_rows_change_no_decision(preset):
    """Rewards and metrics are the same with the rows on and off (``obs_rows: false``), for every rule sequence:
    the rows read Okita's tentative table through its own cache."""
    on = WirelessUDLEnv(preset, config={"env": RULES})
    off = WirelessUDLEnv(preset, config={"env": {**RULES, "obs_rows": False}})
    assert on._rule_rows and not off._rule_rows
    for seed in (0, 1, 2):
        _, r1, m1 = _episode(on, seed, lambda g: int(g.integers(len(WORKER_RULES))))
        _, r2, m2 = _episode(off, seed, lambda g: int(g.integers(len(WORKER_RULES))))
        assert r1 == r2 and m1 == m2


def test_rule_rows_describe_each_rule():
    """Row r: the worker count of rule r on Okita's table of the arriving job, flagged N_tent on rule 0's row,
    the estimated costs of that count; rows past the rules are zero padding."""
    env = WirelessUDLEnv("sim-hard-v1", config={"env": RULES})
    obs, _ = env.reset(seed=4)
    lay = env.obs_layout()
    assert lay["rows"] == len(WORKER_RULES) and lay["row_actions"] and lay["extra_actions"] == 0
    assert env.action_space.n == lay["rows"]
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(30):
        tbl = env.obs_table()
        sim = env.sim
        tab = sim.discipline.table(sim, env._k, int(sim.t))
        F, s = lay["row_dim"], lay["rows_start"]
        rows = obs[s: s + 2 * env.G * F].reshape(2 * env.G, F)
        for r in range(len(WORKER_RULES)):
            n = rule_workers(tab, r)
            assert tbl.N[r] == n and tbl.mask[r]
            assert tbl.total[r] == tab["total"][n]
            assert rows[r, 9] == 1.0  # the "feasible" feature
            assert rows[r, 11] == (1.0 if n == tab["best"] else 0.0)
        assert not tbl.mask[len(WORKER_RULES):].any()
        assert not rows[len(WORKER_RULES):].any()
        seen += int(len({int(x) for x in tbl.N[: len(WORKER_RULES)]}) > 1)
        obs, _, term, trunc, _ = env.step(int(rng.integers(len(WORKER_RULES))))
        if term or trunc:
            break
    assert seen > 0  # the rows differ somewhere


def test_rule_rows_only_with_the_rule_action_and_v1_rows():
    """No rows without the worker-rule action (plain replan) or without ``obs_rows`` (v0): no row layout."""
    plain = WirelessUDLEnv("sim-hard-v1", config={"env": {"mode": "replan", "discipline": "okita"}})
    plain.reset(seed=0)
    assert plain.obs_table() is None and plain.obs_layout is None
    v0 = WirelessUDLEnv("sim-hard", config={"env": RULES})
    v0.reset(seed=0)
    assert v0.obs_table() is None and v0.obs_layout is None


def test_shared_row_policy_reads_the_rule_rows():
    """The per-row network of the v1 agents builds on the rule rows and scores exactly the four rules."""
    torch = pytest.importorskip("torch")
    from edgegym.agents.rl.shared import SharedRowNet

    env = WirelessUDLEnv("testbed-v1", config={"env": RULES})
    obs, _ = env.reset(seed=0)
    net = SharedRowNet(env.obs_layout(), env.action_space.n)
    with torch.no_grad():
        logits = net.forward_actor(torch.as_tensor(obs[None]))
    assert tuple(logits.shape) == (1, len(WORKER_RULES))
