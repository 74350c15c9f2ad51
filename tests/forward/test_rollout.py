"""``rollout:<base>``: fixes a base's obviously bad choice, parses and rejects parameters by name, returns legal
actions over every family's bases (a saved agent included), is deterministic, and refuses a Discrete(1) base."""

from __future__ import annotations

import numpy as np
import pytest
from edgegym.agents.cli import main
from edgegym.agents.errors import UserError
from edgegym.agents.policy import Policy
from edgegym.agents.reference.rollout import DEFAULTS, RolloutPolicy, is_rollout, parse_rollout
from edgegym.agents.runner import check_env_policy, make_env, policy_env_config, run_episode

MODEL = "docs/results/agents/models/ecml_testbed"


class LatestCompletion(Policy):
    """An obviously bad HeteroML base: the legal grid action that completes the pending job last."""

    def act(self, obs):
        env = self.unwrapped
        start, dur = env.grid_estimates()
        legal = np.flatnonzero(env.action_masks())
        return int(legal[np.argmax(start[legal] + dur[legal])])


def test_rollout_fixes_an_obviously_bad_base():
    """With every legal action a candidate and a one-step horizon, the score of an action is its own reward
    -w_j (c_j - a_j): rollout must take the action with the earliest completion, never the base's latest one."""
    env, _ = make_env("HeteroML-tiny-v0", "earliest", 0)
    obs, _ = env.reset(seed=1)
    u = env.unwrapped
    base = LatestCompletion(env)
    pol = RolloutPolicy(env, base, K=2, H=1, k=10_000, seed=0)
    for _ in range(4):
        start, dur = u.grid_estimates()
        legal = np.flatnonzero(u.action_masks())
        done_at = start[legal] + dur[legal]
        a = pol.predict(obs)[0]
        b = base.predict(obs)[0]
        assert done_at[list(legal).index(a)] == done_at.min()
        if done_at.max() > done_at.min():
            assert a != b
        obs, *_ = env.step(a)
    assert pol.changed >= 1


def test_rollout_never_worse_than_base_on_the_model_when_it_keeps_the_base():
    """A base with no better alternative (one candidate: k=1) is followed exactly."""
    r1 = run_episode("EdgeCloudML-testbed-v0", "rollout(K=1,H=2,k=1):aonline", 100)
    r2 = run_episode("EdgeCloudML-testbed-v0", "aonline", 100, {"env": {"action_mode": "cloud_fraction"}})
    assert r1["objective"] == r2["objective"]


def test_names_parse_and_bad_parameters_are_named():
    assert is_rollout("rollout:aonline") and is_rollout("rollout(K=2):o4a") and not is_rollout("aonline")
    assert parse_rollout("rollout:aonline") == (DEFAULTS, "aonline")
    assert parse_rollout("rollout(K=2, H=0,k=3):maskable-ppo:a/b.zip") == (
        {"K": 2, "H": 0, "k": 3, "z": 0.0, "clairvoyant": 0, "D": 0}, "maskable-ppo:a/b.zip")
    assert parse_rollout("rollout(D=1):ondisc")[0]["D"] == 1
    assert parse_rollout("rollout(clairvoyant=1):earliest")[0]["clairvoyant"] == 1
    assert parse_rollout("rollout(z=1.5):earliest")[0]["z"] == 1.5
    for bad, needle in [("rollout(K=0):aonline", "K"), ("rollout(H=-1):aonline", "H"), ("rollout(k=x):aonline", "k"),
                        ("rollout(Q=3):aonline", "Q=3"), ("rollout(z=-1):aonline", "z"),
                        ("rollout(z=inf):aonline", "z"), ("rollout(K2):aonline", "K2"), ("rollout:", "rollout"),
                        ("rollout(clairvoyant=2):aonline", "clairvoyant"), ("rollout(D=2):ondisc", "D")]:
        with pytest.raises(ValueError, match=needle):
            parse_rollout(bad)
    with pytest.raises(UserError, match="K must be"):
        check_env_policy("EdgeCloudML-tiny-v0", "rollout(K=0):aonline")
    with pytest.raises(UserError, match="nope"):
        check_env_policy("EdgeCloudML-tiny-v0", "rollout:nope")


@pytest.mark.parametrize("clairvoyant, future", [(0, "resample"), (1, "keep")])
def test_only_the_clairvoyant_variant_forks_the_true_future(clairvoyant, future, monkeypatch):
    """``rollout`` plans on resampled forks; ``clairvoyant=1`` (analysis only, named so) on ``fork(future="keep")``
    forks, which are marked clairvoyant."""
    env, pol = make_env("HeteroML-tiny-v0", f"rollout(K=2,H=2,k=2,clairvoyant={clairvoyant}):earliest", 0)
    obs, _ = env.reset(seed=1)
    pol.reset(1)
    u = env.unwrapped
    seen = []
    real = type(u).fork

    def spy(self, seed=0, future="resample"):
        f = real(self, seed=seed, future=future)
        if self is u:
            seen.append((future, f.clairvoyant))
        return f

    monkeypatch.setattr(type(u), "fork", spy)
    pol.predict(obs)
    assert seen and all(s == (future, future == "keep") for s in seen)


def test_cli_errors_are_one_line(capsys):
    rc = main(["run", "--env", "EdgeCloudML-tiny-v0", "--policy", "rollout(H=x):aonline"])
    err = capsys.readouterr().err
    assert rc == 2 and "H must be an integer" in err and "Traceback" not in err
    rc = main(["run", "--env", "EdgeCloudML-tiny-v0", "--policy", "rollout:srtf"])
    err = capsys.readouterr().err
    assert rc == 2 and "Discrete(1)" in err and "srtf" in err
    rc = main(["run", "--env", "HeteroML-tiny-v0", "--policy", "rollout:aonline-hetero-now"])
    err = capsys.readouterr().err
    assert rc == 2 and "own schedule" in err and "Traceback" not in err


def test_okita_gets_its_worker_rule_action():
    """WirelessUDL's Okita decides inside the simulator; rollout runs it with the per-arrival worker rule, whose
    action 0 is Okita's own choice (so the base is an action), and still refuses FIFO's Discrete(1)."""
    okita = {"mode": "replan", "discipline": "okita"}
    assert policy_env_config("WirelessUDL-v0", "rollout:okita") == {"env": {**okita, "replan_workers": True}}
    env, pol = make_env("WirelessUDL-tiny-v0", "rollout(K=1,H=2):okita", 0)
    assert env.action_space.n == 4 and pol.base.act(None) == 0
    with pytest.raises((UserError, ValueError), match="Discrete"):
        make_env("WirelessUDL-tiny-v0", "rollout:fifo", 0)


def test_terminal_value_needs_an_env_that_drains():
    with pytest.raises((UserError, ValueError), match="drain_return"):
        make_env("EdgeCloudML-testbed-v0", "rollout(D=1):aonline", 0)
    r1 = run_episode("EdgeUtility-tiny-v0", "rollout(K=1,H=2,k=2,D=1):ondisc", 3)
    r2 = run_episode("EdgeUtility-tiny-v0", "rollout(K=1,H=2,k=2,D=1):ondisc", 3)
    assert r1["objective"] == r2["objective"] and r1["illegal_actions"] == 0
    w1 = run_episode("WirelessUDL-tiny-v0", "rollout(K=1,H=2,D=1):okita-one", 3)  # WirelessUDL's replan drain
    w2 = run_episode("WirelessUDL-tiny-v0", "rollout(K=1,H=2,D=1):okita-one", 3)
    assert w1["objective"] == w2["objective"] > 0 and w1["illegal_actions"] == 0


def test_env_config_is_discrete_on_edgecloudml():
    assert policy_env_config("EdgeCloudML-v0", "rollout:aonline") == {"env": {"action_mode": "cloud_fraction"}}
    import gymnasium as gym
    from edgegym.agents.reference.rollout import make_rollout

    with pytest.raises(ValueError, match="discrete action space.*cloud_fraction"):  # the family's own hint
        make_rollout("rollout:aonline", gym.make("EdgeCloudML-testbed-v0"), 0, lambda *a: None)
    cfg = policy_env_config("EdgeCloudML-testbed-v0", f"rollout:{MODEL}")
    assert cfg["env"]["action_mode"] == "cloud_split"


@pytest.mark.parametrize("env_id,base", [
    ("EdgeCloudML-testbed-v0", "aonline"), ("EdgeCloudML-testbed-v0", "random"),
    ("EdgeUtility-tiny-v0", "o4a"), ("EdgeUtility-tiny-v0", "ondisc"),
    ("HeteroML-tiny-v0", "earliest"), ("HeteroML-tiny-v0", "fifo"),
    ("WirelessUDL-tiny-v0", "greedy-min-cost"), ("WirelessUDL-testbed-v0", "oasis"),
    ("WirelessUDL-tiny-v0", "okita"), ("WirelessUDL-tiny-v0", "okita-one"),
    ("EdgeCloudML-testbed-v0", MODEL),
])
def test_rollout_returns_legal_actions_and_is_deterministic(env_id, base):
    name = f"rollout(K=2,H=3,k=3):{base}"
    env, pol = make_env(env_id, name, 7)
    obs, _ = env.reset(seed=7)
    pol.reset(7)
    done, actions = False, []
    while not done:
        a, _ = pol.predict(obs)
        if isinstance(a, int | np.integer):
            assert env.unwrapped.action_masks()[a], (env_id, base, a)
        actions.append(repr(a))
        obs, _, done, _, info = env.step(a)
    assert info["episode_metrics"].get("illegal_actions", 0) == 0
    r1, r2 = run_episode(env_id, name, 7), run_episode(env_id, name, 7)
    assert r1["objective"] == r2["objective"] and r1["steps"] == len(actions)


def test_rollout_of_a_saved_agent_via_the_cli(capsys):
    rc = main(["run", "--env", "EdgeCloudML-testbed-v0", "--policy", f"rollout(K=1,H=2,k=2):{MODEL}", "--json",
               "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0 and '"objective"' in out


def test_bench_runs_rollout_next_to_its_base(tmp_path):
    from edgegym.agents.bench import _short, build_grid, run_bench

    cells = build_grid(["HeteroML-tiny-v0"], ["earliest", "rollout(K=1,H=2,k=2):earliest"], [0, 1])
    res = run_bench(cells, tmp_path, workers=1, progress=False, plots=False)
    assert not res["failed"]
    text = (tmp_path / "summary.md").read_text()
    assert "rollout(K=1,H=2,k=2):earliest" in text
    assert _short(f"rollout(K=2):maskable-ppo:{MODEL}/model.zip") == "rollout(K=2):maskable-ppo:ecml_testbed"


def test_registry_lists_the_rollout_name_form():
    from edgegym.agents.registry import POLICIES, policy_name_forms

    forms = {f["name"]: f for f in policy_name_forms()}
    assert "rollout:<base>" in forms and "rollout:<base>" not in POLICIES
    assert set(forms["rollout:<base>"]["families"]) == {"EdgeCloudML", "EdgeUtility", "HeteroML", "WirelessUDL"}
