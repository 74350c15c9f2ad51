"""``env.render()`` (rgb_array Gantt chart) and ``edgegym render``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.cli import main
from edgegym.agents.registry import make_policy

import edgegym  # noqa: F401
from edgegym.families.edge_cloud.rendering import gantt_data

pytest.importorskip("matplotlib")


def _play(policy, steps=None, config=None, env_id="EdgeCloudML-testbed-v0"):
    env = gym.make(env_id, render_mode="rgb_array", config=config)
    pol = make_policy(policy, env, 0)
    obs, _ = env.reset(seed=0)
    k, done = 0, False
    while not done and (steps is None or k < steps):
        obs, _, done, _, _ = env.step(pol.predict(obs)[0])
        k += 1
    return env


@pytest.mark.parametrize("steps", [10, None])
def test_rgb_array_mid_and_end(steps):
    env = _play("aonline", steps)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] > 100 and img.shape[1] > 100
    assert img.std() > 0  # something is drawn
    d = gantt_data(env)
    u = env.unwrapped
    np.testing.assert_array_equal(d["executed"], u.sim.segments())
    assert d["ended"] == (steps is None)
    if steps is None:
        assert len(d["planned"]) == 0  # drained: everything executed
    else:
        assert np.all(d["planned"][:, 1] >= d["now"] - 1e-9)
        assert len(d["planned"]) == sum(1 for plan in u.sim.worker_plan for _, e, _ in plan if e > d["now"])
    # one cloud bar per job with cloud chunks
    assert len(d["cloud"]) == int(np.sum(u.sim.job_cloud_chunks > 0))


def test_gantt_executed_work_matches_metrics():
    env = _play("aonline")
    d = gantt_data(env)
    busy = float(np.sum(d["executed"][:, 2] - d["executed"][:, 1]))
    u = env.unwrapped
    seg = np.asarray(u._outcome.segments)
    assert busy == pytest.approx(float(np.sum(seg[:, 2] - seg[:, 1])))


def test_render_under_a_job_level_discipline():
    env = _play("srtf", 12, config={"env": {"discipline": "srtf"}})
    img = env.render()
    assert img.ndim == 3
    d = gantt_data(env)
    assert np.all(d["executed"][:, 2] <= d["now"] + 1e-9)


def test_render_before_reset_and_without_mode():
    env = gym.make("EdgeCloudML-tiny-v0", render_mode="rgb_array")
    assert gantt_data(env)["executed"].shape == (0, 4)
    plain = gym.make("EdgeCloudML-tiny-v0")
    plain.reset(seed=0)
    assert plain.render() is None


def test_cli_render_png(tmp_path, capsys):
    png = tmp_path / "g.png"
    assert main(["render", "--env", "EdgeCloudML-testbed-v0", "--policy", "aonline", "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_cli_render_errors(tmp_path, capsys):
    assert main(["render", "--env", "EdgeCloudML-v0", "--policy", "srtf", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "smaller preset" in err and "Traceback" not in err
    blocker = tmp_path / "f"
    blocker.write_text("")
    assert main(["render", "--policy", "aonline", "--out", str(blocker / "a" / "x.png")]) == 2
    assert "not a writable directory" in capsys.readouterr().err


@pytest.mark.parametrize("steps, label", [(None, "episode end: last completion (makespan)"), (2, "current time")])
def test_end_line_label_matches_its_position(steps, label):
    """The dashed line of a finished episode is drawn at the last completion: its legend entry says makespan."""
    from edgegym.families.edge_cloud.rendering import gantt_figure

    env = gym.make("EdgeCloudML-tiny-v0", render_mode="rgb_array")
    pol = make_policy("aonline", env, 0)
    obs, _ = env.reset(seed=0)
    k, done, info = 0, False, {}
    while not done and (steps is None or k < steps):
        obs, _, done, _, info = env.step(pol.predict(obs)[0])
        k += 1
    d = gantt_data(env)
    if steps is None:
        assert d["ended"] and d["now"] == pytest.approx(info["episode_metrics"]["makespan"])
        assert d["now"] > float(np.max(env.unwrapped.jobs.arrival_slots))
    fig = gantt_figure(env)
    texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert label in texts and not any("last arrival" in t for t in texts)
    line_x = [ln.get_xdata()[0] for ln in fig.axes[0].get_lines() if ln.get_color() == "red"]
    assert line_x == [pytest.approx(d["now"])]
