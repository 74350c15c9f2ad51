"""Labels in parallel (``--teacher-workers N``): the teacher labels the student's states (and runs its own
behaviour-cloning episodes) on several processes, with the labels, trajectories and β draws of one process; a
teacher that cannot label out of order is labelled episode by episode; bad values are rejected naming the flag."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from edgegym.agents.cli import main  # noqa: E402
from edgegym.agents.rl.bc import collect, labelling_pool, labels_per_state  # noqa: E402
from edgegym.agents.rl.dagger import label_student_states  # noqa: E402
from edgegym.agents.rl.settings import check_dagger  # noqa: E402
from edgegym.agents.runner import make_env  # noqa: E402

import edgegym  # noqa: E402,F401

ENV = "EdgeUtility-tiny-v1"
CFG = {"workload": {"num_jobs": 12}}
ROLLOUT = "rollout(K=1,H=3):o4a"
SEEDS = [30000, 30001]


def _student(seed: int = 0):
    import torch as th
    from edgegym.agents.rl.shared import SharedRowPolicy, env_obs_layout
    from sb3_contrib import MaskablePPO

    th.manual_seed(seed)
    env = gym.make(ENV, config=CFG)
    return MaskablePPO(SharedRowPolicy, env, policy_kwargs={"layout": env_obs_layout(env)}, seed=seed,
                       device="cpu", n_steps=64)


def _same(a, b) -> None:
    for f in ("obs", "masks", "actions", "rewards", "episode_start", "objective"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


@pytest.mark.parametrize("teacher, beta", [("o4a", 0.0), (ROLLOUT, 0.0), (ROLLOUT, 0.5), ("random", 0.0)])
def test_two_workers_label_as_one_process(teacher, beta):
    model = _student()
    one = label_student_states(model, ENV, teacher, SEEDS, CFG, beta=beta, rng_seed=[0, 1])
    two = label_student_states(model, ENV, teacher, SEEDS, CFG, beta=beta, rng_seed=[0, 1], workers=2)
    assert len(one.demos) == 2 * 12
    _same(one.demos, two.demos)
    np.testing.assert_array_equal(one.executed, two.executed)
    np.testing.assert_array_equal(one.student, two.student)
    assert one.teacher_steps == two.teacher_steps and two.label_s > 0.0
    if beta > 0:  # the β-mixture ran the teacher somewhere, the student elsewhere
        assert 0 < two.teacher_steps < len(two.demos)


def test_one_pool_serves_cloning_and_rounds():
    model = _student()
    bc_seeds = [20000, 20001, 20002]
    with labelling_pool(2, None, ENV, ROLLOUT, CFG) as pool:  # warm workers, used by three calls
        _same(collect(ENV, ROLLOUT, bc_seeds, CFG), collect(ENV, ROLLOUT, bc_seeds, CFG, pool=pool))
        for rnd in (1, 2):
            one = label_student_states(model, ENV, ROLLOUT, [30000 + rnd], CFG, rng_seed=[0, rnd])
            _same(one.demos, label_student_states(model, ENV, ROLLOUT, [30000 + rnd], CFG, rng_seed=[0, rnd],
                                                  pool=pool).demos)


def test_which_teachers_label_out_of_order():
    def per_state(name):
        env, pol = make_env(ENV, name, 0, CFG)
        env.close()
        return labels_per_state(pol)

    # decide from the state (a rollout's futures come from the episode's seed) vs a random stream of its own
    assert per_state("o4a") and per_state(ROLLOUT)
    assert not per_state("random") and not per_state("rollout(K=1,H=3):random")


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", True])
def test_bad_teacher_workers_named(value):
    with pytest.raises(ValueError, match=r"teacher_workers \(--teacher-workers\) must be an integer >= 1"):
        check_dagger(ENV, {"bc_teacher": "o4a"}, {"teacher_workers": value}, 0, 10_000, 1)
    with pytest.raises(ValueError, match=r"--teacher-workers"):
        label_student_states(_student(), ENV, "o4a", SEEDS[:1], CFG, workers=value)


def test_cli_rejects_teacher_workers_0(tmp_path, capsys):
    rc = main(["train", "--env", ENV, "--algo", "maskable-ppo", "--timesteps", "0", "--teacher", "o4a",
               "--teacher-workers", "0", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert rc == 2 and "--teacher-workers must be >= 1, got 0" in err, err


def test_yaml_teacher_workers_reaches_the_settings():
    assert check_dagger(ENV, {"bc_teacher": "o4a"}, {"teacher_workers": 3}, 0, 10_000, 1)["workers"] == 3
    assert check_dagger(ENV, {"bc_teacher": "o4a"}, {}, 0, 10_000, 1)["workers"] == 1


def test_ray_tasks_label_as_one_process():
    pytest.importorskip("ray")
    model = _student()
    one = label_student_states(model, ENV, ROLLOUT, SEEDS[:1], CFG)
    ray = label_student_states(model, ENV, ROLLOUT, SEEDS[:1], CFG, workers=2, address="local")
    _same(one.demos, ray.demos)


def test_flag_is_reported_as_a_recipe_change():
    from edgegym.agents.rl.train import resolve_hyperparams

    _, changes = resolve_hyperparams("maskable-ppo", ENV, overrides={"teacher_workers": 3})
    assert {"key": "teacher_workers", "from": None, "to": 3, "by": "--teacher-workers"} in changes


HP = ("default:\n  n_envs: 1\n  eval_freq: 0\n  n_eval_episodes: 1\n  policy: SharedRowPolicy\n  bc_episodes: 2\n"
      "  bc_epochs: 2\n  dagger_epochs: 2\n  train_env_config: {workload: {num_jobs: 12}}\n")


def test_train_with_yaml_teacher_workers_saves_the_one_process_model(tmp_path):
    import io
    import json
    import zipfile

    import torch as th

    runs = {}
    for w in (1, 2):
        hp = tmp_path / f"hp{w}.yaml"
        hp.write_text(HP + f"  teacher_workers: {w}\n")
        out = tmp_path / f"w{w}"
        assert main(["train", "--env", ENV, "--algo", "maskable-ppo", "--teacher", ROLLOUT, "--dagger-rounds", "1",
                     "--dagger-episodes", "2", "--timesteps", "0", "--out", str(out), "--hyperparams", str(hp),
                     "--replace-hyperparams", "--no-progress"]) == 0
        with zipfile.ZipFile(out / "model.zip") as z:
            weights = th.load(io.BytesIO(z.read("policy.pth")), map_location="cpu")
        runs[w] = (json.loads((out / "train.json").read_text())["dagger"], weights)
    assert runs[2][0]["teacher_workers"] == 2 and runs[1][0]["teacher_workers"] == 1
    assert [r["agreement"] for r in runs[1][0]["rounds"]] == [r["agreement"] for r in runs[2][0]["rounds"]]
    a, b = runs[1][1], runs[2][1]  # the same labels: the same fitted weights, bit for bit
    assert a.keys() == b.keys() and all(th.equal(a[k], b[k]) for k in a)


def test_rllib_backend_labels_on_ray_tasks_at_its_address(tmp_path):
    """The rllib backend passes ``--address`` to the labelling: Ray tasks there (``local``: a new local Ray)."""
    pytest.importorskip("ray.rllib")
    from edgegym.agents.rl.rllib import train_rllib

    hp = {"policy": "SharedRowPolicy", "teacher": ROLLOUT, "bc_episodes": 1, "bc_epochs": 2, "dagger_rounds": 1,
          "dagger_episodes": 2, "dagger_epochs": 2, "n_eval_episodes": 1, "eval_freq": 0,
          "train_env_config": CFG}
    one = train_rllib(ENV, "maskable-ppo", 0, 0, tmp_path / "one", hp, progress=False)
    ray = train_rllib(ENV, "maskable-ppo", 0, 0, tmp_path / "ray", {**hp, "teacher_workers": 2}, address="local",
                      progress=False)
    assert ray["dagger"]["teacher_workers"] == 2
    assert [r["agreement"] for r in one["dagger"]["rounds"]] == [r["agreement"] for r in ray["dagger"]["rounds"]]
    assert one["saved_eval"]["mean_return"] == ray["saved_eval"]["mean_return"]
