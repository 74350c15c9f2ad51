"""The shared figure check: axis labels with units, a legend where an axes has more than one series."""

from __future__ import annotations

import subprocess
import sys

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
