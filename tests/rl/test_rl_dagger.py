"""Expert iteration (DAgger) in ``edgegym train``: rounds aggregate the student's visited states, labelled by the
teacher on those very states; the student ends close to a deterministic teacher; the best round is kept; train.json
records the rounds; the CLI flags work and bad values are rejected."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from edgegym.agents.rl.bc import Demonstrations, clone, collect  # noqa: E402
from edgegym.agents.rl.dagger import label_student_states, run_dagger  # noqa: E402

import edgegym  # noqa: E402,F401

ENV = "EdgeUtility-tiny-v1"
CFG = {"workload": {"num_jobs": 20}}
TEACHER = "o4a"  # deterministic, decides from the env's current state alone


def _student(seed: int = 0):
    import torch as th
    from edgegym.agents.rl.shared import SharedRowPolicy, env_obs_layout
    from sb3_contrib import MaskablePPO

    th.manual_seed(seed)
    env = gym.make(ENV, config=CFG)
    return MaskablePPO(SharedRowPolicy, env, policy_kwargs={"layout": env_obs_layout(env)}, seed=seed,
                       device="cpu", n_steps=64)


def test_rounds_aggregate_the_students_visited_states():
    model = _student()
    d0 = collect(ENV, TEACHER, [20000, 20001], CFG)
    clone(model, d0, epochs=5, seed=0)
    s = run_dagger(model, ENV, TEACHER, d0, rounds=2, episodes=2, env_config=CFG, eval_seeds=[10000], epochs=5)
    rows = s["rounds"]
    assert [r["round"] for r in rows] == [0, 1, 2]
    assert rows[0]["dataset_size"] == len(d0) == 2 * 20
    for prev, r in zip(rows, rows[1:], strict=False):
        # one decision per job: every state of the student's two 20-job episodes is added
        assert r["new_states"] == 2 * 20
        assert r["dataset_size"] == prev["dataset_size"] + r["new_states"]
        assert 0.0 <= r["agreement"] <= 1.0 and 0.0 <= r["train_agreement"] <= 1.0
        assert r["teacher_label_s"] >= 0.0 and np.isfinite(r["eval_mean_objective"])
    assert rows[1]["seeds"] == [30000, 30001] and rows[2]["seeds"] == [30002, 30003]
    assert s["best_round"] in (0, 1, 2)


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_labels_are_the_teachers_actions_on_the_visited_states(beta):
    from edgegym.agents.runner import make_env

    model = _student()
    rnd = label_student_states(model, ENV, TEACHER, [30000, 30001], CFG, beta=beta, rng_seed=[0, 1])
    assert len(rnd.demos) == len(rnd.executed) == len(rnd.student) == 40
    if beta == 1.0:  # the teacher's trajectories: executed = labels
        assert rnd.teacher_steps == 40 and np.array_equal(rnd.executed, rnd.demos.actions)
    else:  # the student's own trajectories
        assert rnd.teacher_steps == 0 and np.array_equal(rnd.executed, rnd.student)
        assert not np.array_equal(rnd.executed, rnd.demos.actions)  # an untrained student differs somewhere
    # replay the executed actions; a fresh teacher on each replayed state gives the recorded label
    k = 0
    for seed in rnd.seeds:
        env, pol = make_env(ENV, TEACHER, seed, CFG)
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        done = False
        while not done:
            np.testing.assert_array_equal(obs, rnd.demos.obs[k])
            assert int(pol.predict(obs)[0]) == rnd.demos.actions[k]
            obs, _, term, trunc, _ = env.step(int(rnd.executed[k]))
            done = term or trunc
            k += 1
        env.close()
    assert k == len(rnd.demos)


def test_student_after_dagger_agrees_with_the_teacher_on_its_own_states():
    model = _student()
    before = label_student_states(model, ENV, TEACHER, [500, 501], CFG).agreement
    d0 = collect(ENV, TEACHER, range(20000, 20003), CFG)
    clone(model, d0, epochs=20, seed=0)
    run_dagger(model, ENV, TEACHER, d0, rounds=3, episodes=3, env_config=CFG, eval_seeds=[10000], epochs=20)
    after = label_student_states(model, ENV, TEACHER, [500, 501], CFG).agreement  # held-out seeds
    assert after >= 0.7 and after > before + 0.2, (before, after)


def test_best_round_is_restored(monkeypatch):
    """The weights of the best evaluated round come back at the end (here round 1 of 3, by construction)."""
    import torch as th
    from edgegym.agents.rl import best

    model = _student()
    d0 = collect(ENV, TEACHER, [20000], CFG)
    clone(model, d0, epochs=2, seed=0)
    returns = iter([1.0, 5.0, 2.0, 3.0])  # rounds 0..3
    states = []

    def fake_eval(m, env_id, seeds, env_config=None):
        states.append({k: v.clone() for k, v in m.policy.state_dict().items()})
        r = next(returns)
        return [{"seed": 0, "episode_return": r, "objective": 100 * r, "decisions": 1, "top_action": 0,
                 "max_action_share": 0.5}]

    monkeypatch.setattr(best, "evaluate_model", fake_eval)
    s = run_dagger(model, ENV, TEACHER, d0, rounds=3, episodes=1, env_config=CFG, eval_seeds=[10000], epochs=2)
    assert s["best_round"] == 1 and s["restored_round"] == 1
    final = model.policy.state_dict()
    assert all(th.equal(final[k], states[1][k]) for k in final)
    assert not all(th.equal(final[k], states[3][k]) for k in final)
    # keep_best=False: the last round's weights stay
    model2 = _student()
    clone(model2, d0, epochs=2, seed=0)
    returns = iter([1.0, 5.0, 2.0, 3.0])
    states.clear()
    s2 = run_dagger(model2, ENV, TEACHER, d0, rounds=3, episodes=1, env_config=CFG, eval_seeds=[10000], epochs=2,
                    keep_best=False)
    assert s2["restored_round"] is None
    final = model2.policy.state_dict()
    assert all(th.equal(final[k], states[3][k]) for k in final)


def test_demonstrations_concat():
    d = collect(ENV, TEACHER, [1], CFG)
    both = Demonstrations.concat([d, d])
    assert len(both) == 2 * len(d) and both.objective.size == 2
    np.testing.assert_array_equal(both.actions[len(d):], d.actions)


HP = ("default:\n  n_envs: 1\n  eval_freq: 0\n  n_steps: 64\n  batch_size: 32\n  n_epochs: 2\n  n_eval_episodes: 1\n"
      "  policy: SharedRowPolicy\n  bc_episodes: 2\n  bc_epochs: 3\n  dagger_epochs: 3\n"
      "  train_env_config: {workload: {num_jobs: 20}}\n")


def test_cli_dagger_rounds_then_ppo_record_train_json(tmp_path, capsys):
    from edgegym.agents.cli import main

    hp = tmp_path / "hp.yaml"
    hp.write_text(HP)
    out = tmp_path / "run"
    rc = main(["train", "--env", ENV, "--algo", "maskable-ppo", "--teacher", TEACHER, "--dagger-rounds", "2",
               "--dagger-episodes", "1", "--dagger-beta", "0.5", "--timesteps", "64", "--out", str(out),
               "--hyperparams", str(hp), "--replace-hyperparams", "--no-progress"])
    cap = capsys.readouterr()
    assert rc == 0
    assert "DAgger, teacher o4a] 2 round(s)" in cap.out and "best round" in cap.out
    s = json.loads((out / "train.json").read_text())
    dg = s["dagger"]
    assert dg["teacher"] == TEACHER and dg["beta"] == 0.5 and len(dg["rounds"]) == 3
    assert [r["beta"] for r in dg["rounds"][1:]] == [0.5, 0.25]
    assert [r["dataset_size"] for r in dg["rounds"]] == [40, 60, 80]
    assert {"agreement", "teacher_label_s", "eval_mean_objective", "dataset_size"} <= set(dg["rounds"][1])
    assert "dagger_s" in s["phases_s"] and "behaviour_cloning_s" in s["phases_s"] and "ppo_rollouts_s" in s["phases_s"]
    assert s["behaviour_cloning"]["teacher"] == TEACHER
    assert s["num_timesteps"] >= 64 and (out / "model.zip").is_file()


def test_cli_dagger_without_ppo_and_yaml_keys(tmp_path, capsys):
    from edgegym.agents.cli import main

    hp = tmp_path / "hp.yaml"
    hp.write_text(HP + "  teacher: o4a\n  dagger_rounds: 1\n  dagger_episodes: 1\n")
    out = tmp_path / "run"
    rc = main(["train", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", "0", "--out", str(out),
               "--hyperparams", str(hp), "--replace-hyperparams", "--no-progress", "--json"])
    assert rc == 0
    s = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert s["num_timesteps"] == 0 and "ppo_rollouts_s" not in s["phases_s"]
    assert len(s["dagger"]["rounds"]) == 2 and s["saved_eval"]["dagger_round"] == s["dagger"]["best_round"]
    assert (out / "model.zip").is_file()
    # a saved agent as the teacher (by its folder): on its own family it teaches, on another it is refused
    hp.write_text(HP)
    rc = main(["train", "--env", ENV, "--algo", "maskable-ppo", "--teacher", str(out), "--dagger-rounds", "1",
               "--dagger-episodes", "1", "--timesteps", "0", "--out", str(tmp_path / "student"), "--hyperparams",
               str(hp), "--replace-hyperparams", "--no-progress", "--json"])
    s = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert rc == 0 and s["dagger"]["teacher"] == f"maskable-ppo:{out / 'model.zip'}"
    rc = main(["train", "--env", "WirelessUDL-tiny-v1", "--algo", "maskable-ppo", "--teacher", str(out),
               "--timesteps", "0", "--out", str(tmp_path / "other"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "teacher" in err and "cannot run on WirelessUDL-tiny-v1" in err, err


@pytest.mark.parametrize("argv, needle", [
    (["--teacher", "no-such-policy"], "valid policies"),
    (["--teacher", "aonline"], "does not support"),  # an EdgeCloudML policy on an EdgeUtility id
    (["--teacher", TEACHER, "--dagger-rounds", "-1"], "--dagger-rounds"),
    (["--teacher", TEACHER, "--dagger-episodes", "0"], "--dagger-episodes"),
    (["--teacher", TEACHER, "--dagger-beta", "1.5"], "--dagger-beta"),
    (["--dagger-rounds", "1"], "needs a teacher"),
    (["--timesteps", "0"], "needs a teacher"),
    (["--timesteps", "-1"], "--timesteps"),
])
def test_cli_bad_dagger_values(tmp_path, capsys, argv, needle):
    from edgegym.agents.cli import main

    hp = tmp_path / "hp.yaml"
    hp.write_text(HP)
    base = ["train", "--env", ENV, "--algo", "maskable-ppo", "--out", str(tmp_path / "r"), "--hyperparams", str(hp),
            "--replace-hyperparams",
            "--no-progress"]
    if "--timesteps" not in argv:
        base += ["--timesteps", "64"]
    rc = main(base + argv)
    err = capsys.readouterr().err
    assert rc == 2 and needle in err, err


def test_yaml_dagger_seeds_must_avoid_the_evaluation_seeds(tmp_path, capsys):
    from edgegym.agents.cli import main

    hp = tmp_path / "hp.yaml"
    hp.write_text(HP + "  dagger_seed: 98\n")
    rc = main(["train", "--env", ENV, "--algo", "maskable-ppo", "--teacher", TEACHER, "--dagger-rounds", "1",
               "--dagger-episodes", "3", "--timesteps", "64", "--out", str(tmp_path / "r"), "--hyperparams", str(hp),
               "--replace-hyperparams",
               "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "dagger_seed" in err and "100-104" in err, err


def test_a_teacher_with_its_own_schedule_is_flagged():
    from edgegym.agents.rl.dagger import teacher_is_markov

    assert teacher_is_markov(ENV, TEACHER, CFG)
    assert teacher_is_markov("HeteroML-tiny-v1", "earliest")
    if teacher_is_markov("HeteroML-tiny-v1", "aonline-hetero-now"):
        pytest.skip("this version cannot tell a policy that keeps its own schedule")
    import torch as th
    from edgegym.agents.rl.shared import SharedRowPolicy, env_obs_layout
    from sb3_contrib import MaskablePPO

    th.manual_seed(0)
    env = gym.make("HeteroML-tiny-v1")
    model = MaskablePPO(SharedRowPolicy, env, policy_kwargs={"layout": env_obs_layout(env)}, seed=0, device="cpu",
                        n_steps=64)
    d0 = collect("HeteroML-tiny-v1", "aonline-hetero-now", [20000])
    clone(model, d0, epochs=1)
    s = run_dagger(model, "HeteroML-tiny-v1", "aonline-hetero-now", d0, rounds=1, episodes=1, epochs=1)
    assert s["teacher_markov"] is False and "own record of its past decisions" in s["warnings"][0]
