"""The shared figure check: axis labels with units, a legend where an axes has more than one series."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from edgegym.core.figures import check_figure, has_unit, save_figure

pytest.importorskip("matplotlib")


def _fig():
    from matplotlib.figure import Figure

    return Figure(figsize=(4, 3), dpi=50)


@pytest.mark.parametrize(
    "label, ok",
    [
        ("time (s)", True),
        ("JCT [slots]", True),
        ("jobs J (count)", True),
        ("throughput [-]", True),
        ("share of jobs (ratio)", True),
        ("decisions per second (1/s, log axis)", True),
        ("seconds (log)", False),  # a scale note is not a unit
        ("seconds (symlog)", False),
        ("J", False),
        ("time", False),
        ("", False),
    ],
)
def test_has_unit(label, ok):
    assert has_unit(label) is ok


def test_good_figure_passes_and_is_saved(tmp_path):
    fig = _fig()
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([1, 2], [3, 4], label="a")
    ax.plot([1, 2], [4, 5], label="b")
    ax.set_xlabel("jobs J (count)")
    ax.set_ylabel("JCT rate (jobs/slot)")
    ax.legend()
    check_figure(fig)
    p = save_figure(fig, tmp_path / "ok.png")
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_labels_units_and_legend_are_named(tmp_path):
    fig = _fig()
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([1, 2], [3, 4], label="a")
    ax.plot([1, 2], [4, 5], label="b")
    ax.set_xlabel("J")
    ax.set_title("JCT rate vs J")
    with pytest.raises(ValueError) as e:
        save_figure(fig, tmp_path / "bad.png")
    msg = str(e.value)
    assert "'JCT rate vs J'" in msg
    assert "x label 'J' names no unit" in msg
    assert "no y label" in msg
    assert "2 labelled series but no legend" in msg
    assert not (tmp_path / "bad.png").exists()  # nothing written when the check fails


def test_scale_note_is_not_a_unit():
    fig = _fig()
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([1, 2], [10, 1000])
    ax.set_yscale("log")
    ax.set_xlabel("policy (index)")
    ax.set_ylabel("seconds (log)")
    ax.set_title("decisions per second")
    with pytest.raises(ValueError, match="y label 'seconds \\(log\\)' names no unit"):
        check_figure(fig)


def test_figure_legend_counts_and_single_series_needs_none():
    fig = _fig()
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([1, 2], [3, 4], label="only")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("x (m)")
    check_figure(fig)  # one series: no legend needed
    ax.plot([1, 2], [1, 2], label="second")
    with pytest.raises(ValueError, match="no legend"):
        check_figure(fig)
    fig.legend(loc="lower center")
    check_figure(fig)


def test_categorical_axis_needs_a_label_but_no_unit_and_colorbars_are_skipped():
    import matplotlib

    fig = _fig()
    ax = fig.add_subplot(1, 1, 1)
    ax.barh([0, 1], [1.0, 2.0])
    ax.set_yticks([0, 1], labels=["edge 0", "cloud"])
    ax.set_xlabel("time (s)")
    with pytest.raises(ValueError, match="no y label"):
        check_figure(fig)
    ax.set_ylabel("server")
    fig.colorbar(matplotlib.cm.ScalarMappable(), ax=ax)  # an unlabelled colour bar is not a data axes
    check_figure(fig)
    ax.set_yticks([0, 1], labels=["0", "1"])  # numeric tick labels: a numeric axis, needs a unit
    with pytest.raises(ValueError, match="y label 'server' names no unit"):
        check_figure(fig)


def test_shared_axes_may_label_one_side():
    fig = _fig()
    top, bottom = fig.subplots(2, 1, sharex=True)
    for a in (top, bottom):
        a.plot([1, 2], [1, 2])
        a.set_ylabel("load (ratio)")
    bottom.set_xlabel("time (slots)")
    check_figure(fig)


def test_core_importable_without_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None; import edgegym.core, edgegym.core.figures; "
            "print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ------------------------------------------------------------------ the benchmark scripts' figures pass the check
ROOT = Path(__file__).resolve().parents[2]


def _script(name: str):
    """Import ``benchmarks/<name>.py`` as a module (the scripts are not a package)."""
    import importlib.util

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(f"_bench_{name}", ROOT / "benchmarks" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return mod


def test_reproduce_edge_cloud_figures_pass_the_check(tmp_path):
    """Every figure of the EdgeCloudML reproduction, drawn from the tracked records (utilisation synthetic)."""
    import numpy as np
    import pandas as pd

    r0 = _script("reproduce_edge_cloud")
    df = pd.read_csv(ROOT / "docs" / "results" / "reproduce_edge_cloud" / "episodes.csv")
    cr = pd.read_csv(ROOT / "docs" / "results" / "reproduce_edge_cloud" / "competitive_ratio.csv")
    t = np.arange(0.0, 100.0, 10.0)
    util = {"arrivals": np.linspace(0, 90, 40)}
    for k, p in enumerate(["aonline", "aonline-e", "srtf", "tiresias-l"]):
        util[p] = (t, np.full(t.size, 0.1 * (k + 1)), 100.0)
    tables = r0.plot_figures(df, cr, util, tmp_path)
    assert set(tables) == {"J", "S", "load"}
    for f in ("jct_rate_vs_J", "jct_rate_vs_S", "load_sweep", "utilisation", "competitive_ratio"):
        assert (tmp_path / f"{f}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f
    assert r0.XLABELS["J"] == "number of jobs J (count)"  # was a bare "J"


def test_reproduce_edge_utility_and_scaling_figures_pass_the_check(tmp_path):
    import pandas as pd

    r3 = _script("reproduce_edge_utility")
    g = pd.DataFrame({"o4a": [59.0, 58.9], "random": [58.4, 57.8]}, index=[0.2, 2.0])
    r3._plot(g, "utilisation (ratio; workload.load)", "average utility per job [-]", tmp_path / "a.png", title="t")
    assert (tmp_path / "a.png").is_file()
    sc = _script("scaling")
    rows = [{"jobs": 1000.0, "workers": 528.0, "replay_s": 0.5, "replay_cpu_s": 0.3},
            {"jobs": 5000.0, "workers": 528.0, "replay_s": 3.0, "replay_cpu_s": 1.5}]
    srv = [{"jobs": 5000.0, "workers": w, "replay_s": 1.0, "replay_cpu_s": 0.8} for w in (134.0, 528.0)]
    sc.write_rows([{**r, "servers": 100} for r in rows], [{**r, "servers": 25} for r in srv], tmp_path / "s.csv")
    by_jobs, by_srv = sc.read_rows(tmp_path / "s.csv")
    assert [r["jobs"] for r in by_jobs] == [1000.0, 5000.0] and [r["workers"] for r in by_srv] == [134.0, 528.0]
    sc.plot_scaling(by_jobs, by_srv, 1.0, 5000, tmp_path / "s.png")
    assert (tmp_path / "s.png").is_file()


def test_every_figure_save_goes_through_save_figure():
    """No ``savefig`` outside :mod:`edgegym.core.figures` in the package, the CLI, the examples and the
    benchmark scripts (every saved figure is checked)."""
    import re

    covered = [*(ROOT / "edgegym").rglob("*.py"), *(ROOT / "agents").rglob("*.py"), *(ROOT / "examples").glob("*.py"),
               *(ROOT / "benchmarks").glob("*.py")]
    offenders = [str(p.relative_to(ROOT)) for p in covered
                 if p.name != "figures.py" and re.search(r"\.savefig\(|imsave\(", p.read_text())]
    assert not offenders, f"save figures through edgegym.core.figures.save_figure: {offenders}"
