"""Rendering on every family, through the CLI (``edgegym render``, ``edgegym bench --gantt``) and through the
functions (``env.render()``, the Gantt figures, the bench plots), each checked by the shared figure check."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from edgegym.agents.cli import main
from edgegym.agents.registry import make_policy

import edgegym  # noqa: F401
from edgegym.core.figures import check_figure
from edgegym.families import families, gantt_figure, render_gantt, save_gantt_png

pytest.importorskip("matplotlib")

FAMILIES = list(families().values())
TINY = {f.name: f.load_preset("tiny").env_id for f in FAMILIES}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_pixels(path) -> np.ndarray:
    """Decode a PNG (fails on anything that is not one) and return its pixels."""
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_MAGIC
    img = matplotlib.image.imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert float(np.std(img)) > 0.01  # something is drawn
    return img


def _play(env_id, policy=None, steps=None, config=None):
    env = gym.make(env_id, render_mode="rgb_array", config=config)
    fam = env.unwrapped.preset.family
    pol = make_policy(policy or families()[fam].default_policy, env, 0)
    obs, _ = env.reset(seed=0)
    k, done = 0, False
    while not done and (steps is None or k < steps):
        obs, _, done, _, _ = env.step(pol.predict(obs)[0])
        k += 1
    return env


@pytest.mark.parametrize("fam", FAMILIES, ids=[f.name for f in FAMILIES])
def test_cli_render_every_family(fam, tmp_path, capsys):
    png = tmp_path / "g.png"
    rc = main(["render", "--env", TINY[fam.name], "--policy", fam.default_policy, "--seed", "0", "--out", str(png)])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert f"wrote {png}" in out.out
    _png_pixels(png)


@pytest.mark.parametrize("fam", FAMILIES, ids=[f.name for f in FAMILIES])
def test_cli_bench_gantt_every_family(fam, tmp_path, capsys):
    out = tmp_path / "b"
    env_id = TINY[fam.name]
    rc = main(["bench", "--envs", env_id, "--policies", fam.default_policy, "random", "--seeds", "0", "--gantt",
               "--workers", "1", "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "Traceback" not in err and "no Gantt chart" not in err
    for pol in (fam.default_policy, "random"):
        _png_pixels(out / "gantt" / f"{env_id}__{pol}.png")
    # the plots went through the figure check (save_figure) and exist
    for kind in ("metrics", "timing"):
        _png_pixels(out / "plots" / f"{env_id}_{kind}.png")


def test_cli_bench_gantt_reports_a_chart_it_cannot_draw(tmp_path, capsys):
    """A preset with more lanes than a readable chart: bench still succeeds and says why the chart is missing."""
    out = tmp_path / "b"
    rc = main(["bench", "--envs", "EdgeCloudML-v0", "--policies", "all-cloud", "--seeds", "0", "--gantt",
               "--workers", "1", "--no-progress", "--no-plots", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "no Gantt chart for EdgeCloudML-v0 | all-cloud: the Gantt chart needs one lane per edge worker" in err
    assert not list((out / "gantt").glob("*.png"))


@pytest.mark.parametrize("fam", FAMILIES, ids=[f.name for f in FAMILIES])
@pytest.mark.parametrize("steps", [2, None])
def test_env_render_rgb_array_every_family(fam, steps):
    env = _play(TINY[fam.name], steps=steps)
    assert "rgb_array" in env.metadata["render_modes"]
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] > 100 and img.shape[1] > 100 and img.std() > 0
    np.testing.assert_array_equal(img, render_gantt(env))


@pytest.mark.parametrize("fam", FAMILIES, ids=[f.name for f in FAMILIES])
def test_every_family_gantt_passes_the_figure_check(fam, tmp_path):
    fresh = gym.make(TINY[fam.name], render_mode="rgb_array")
    check_figure(gantt_figure(fresh))  # before reset: an empty chart, still labelled
    for steps in (1, None):
        env = _play(TINY[fam.name], steps=steps)
        fig = gantt_figure(env, title="t")
        check_figure(fig)
        for ax in fig.axes:
            if ax.get_label() != "<colorbar>":
                assert ax.get_xlabel() and ax.get_ylabel()
        assert fig.legends or any(ax.get_legend() for ax in fig.axes), "a Gantt chart explains its marks"
        assert save_gantt_png(env, tmp_path / f"{steps}.png") == tmp_path / f"{steps}.png"
        _png_pixels(tmp_path / f"{steps}.png")


def test_gantt_max_lanes_is_a_value_error():
    for fam in FAMILIES:
        env = _play(TINY[fam.name], steps=1)
        with pytest.raises(ValueError, match="max_lanes=0"):
            gantt_figure(env, max_lanes=0)


def _bars(fig):
    from matplotlib.patches import Rectangle

    ax = fig.axes[0]
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0]


def test_hetero_ml_bars_are_coloured_by_worker_type_with_a_legend():
    env = _play("HeteroML-tiny-v0")
    sim, names = env.unwrapped.sim, env.unwrapped.preset.cluster.worker_types
    placed = np.flatnonzero(sim.start >= 0)
    types = sim.worker_type[placed]
    assert len(set(types.tolist())) >= 2, "the test needs an episode that uses two worker types"
    fig = gantt_figure(env)
    bars = _bars(fig)
    assert len(bars) == placed.size
    colour = {}
    for bar, m in zip(bars, types, strict=True):
        colour.setdefault(int(m), set()).add(tuple(np.round(bar.get_facecolor(), 3)))
    assert all(len(c) == 1 for c in colour.values()), "one colour per worker type"
    assert len({next(iter(c)) for c in colour.values()}) == len(colour), "different types, different colours"
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    for n in names:
        assert any(f"worker type {n}" in t for t in legend), legend
    assert "arrival" in legend and "last completion" in legend


def test_hetero_ml_slot_driven_discipline_renders():
    env = _play("HeteroML-tiny-v0", policy="drf", config={"env": {"discipline": "drf"}})
    fig = gantt_figure(env)
    check_figure(fig)
    assert len(_bars(fig)) == env.unwrapped.jobs.num_jobs
    legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    assert "first start to completion" in legend


def test_wireless_udl_gantt_explains_colours_dots_and_line():
    env = _play("WirelessUDL-tiny-v0")
    fig = gantt_figure(env)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.startswith("trained in the slot on ") and "site" in t for t in legend)
    assert "arrival slot" in legend
    assert any(t.startswith("current slot") for t in legend)
    assert fig.axes[0].get_xlabel() == "time (slots)"


def test_timing_panel_label_names_its_unit():
    """The decisions-per-second panel of the bench timing figure reads "decisions per second (1/s ...)", not
    "seconds (log)" (its name ends in ``_s``, which used to be read as a time in seconds)."""
    from edgegym.agents.bench import _unit, _with_scale

    assert _with_scale(_unit("decisions_per_s", "hours"), "log") == "decisions per second (1/s; log axis)"
    assert _unit("wall_s", "hours") == "wall-clock time (s)"
    assert _unit("okita_migrate", "slots") == "number (count)"  # "migrate" is not a rate
    assert _unit("avg_jct", "hours") == "time (hours)"


def test_render_help_has_a_description(capsys):
    with pytest.raises(SystemExit) as e:
        main(["render", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "Run one episode of a policy on an env and write the Gantt chart" in " ".join(out.split())
