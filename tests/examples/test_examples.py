"""Every script of ``examples/`` runs as a newcomer would run it (``python examples/<name>.py``), with a small
budget, from a scratch folder, and prints what it says it prints; and leaves nothing behind in the temp folder:
each run gets a private, empty ``TMPDIR`` (so that other processes' files do not count) that must be empty again
when the script ends, with and without an output folder named on the command line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _run(name: str, *args: str, cwd: Path, timeout: int = 300) -> str:
    tmp = cwd / "private_tmp"
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "MPLBACKEND": "Agg", "TMPDIR": str(tmp), "TEMP": str(tmp), "TMP": str(tmp)}
    p = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert p.returncode == 0, f"{name} failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    # PyTorch's per-user compile cache (one fixed name, reused by every run, made by torch when an optimizer is
    # built) is not a leftover of the script
    left = sorted(x.name for x in tmp.iterdir() if not x.name.startswith("torchinductor_"))
    assert not left, f"{name} {' '.join(args)} left {left} in the temp folder"
    return p.stdout


def test_every_example_is_tested():
    tested = {"make_and_step.py", "reference_policy.py", "compare_policies.py", "train_maskable_ppo.py",
              "custom_trace.py", "new_policy.py", "gantt_chart.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_make_and_step(tmp_path):
    out = _run("make_and_step.py", cwd=tmp_path)
    m = re.search(r"return (\S+) = total utility (\S+),", out)
    assert m and float(m.group(1)) == pytest.approx(float(m.group(2)))
    assert "obs[0] family.linear" in out


def test_reference_policy(tmp_path):
    out = _run("reference_policy.py", cwd=tmp_path)
    assert "EdgeCloudML-testbed-v0 | aonline: objective" in out
    assert "EdgeUtility-tiny-v0 | o4a: objective" in out


def test_compare_policies(tmp_path):
    out = _run("compare_policies.py", str(tmp_path / "bench"), cwd=tmp_path)
    assert "objective / srtf" in out
    for f in ("results.csv", "summary.md", "plots/EdgeCloudML-testbed-v0_metrics.png"):
        assert (tmp_path / "bench" / f).is_file(), f


def test_train_maskable_ppo(tmp_path):
    out = _run("train_maskable_ppo.py", "512", str(tmp_path / "mppo"), cwd=tmp_path)
    assert (tmp_path / "mppo" / "model.zip").is_file() and (tmp_path / "mppo" / "model.edgegym.json").is_file()
    assert re.search(r"trained \d+ steps", out)
    assert len(re.findall(r"total utility +[\d.]+ ± [\d.]+ over seeds", out)) == 3


def test_custom_trace(tmp_path):
    out = _run("custom_trace.py", cwd=tmp_path)
    assert re.search(r"aonline +total JCT [\d.]+ h over 20 jobs", out)
    assert re.search(r"srtf +total JCT [\d.]+ h over 20 jobs", out)


def test_new_policy(tmp_path):
    out = _run("new_policy.py", cwd=tmp_path)
    assert re.search(r"fastest-server +total utility [\d.]+ ± [\d.]+", out)


def test_gantt_chart(tmp_path):
    png = tmp_path / "g.png"
    _run("gantt_chart.py", str(png), cwd=tmp_path)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name, args", [("compare_policies.py", []), ("train_maskable_ppo.py", ["256"]),
                                        ("gantt_chart.py", [])])
def test_without_an_output_folder_nothing_is_left_in_temp(name, args, tmp_path):
    # no OUT_DIR: the files go to a temporary folder, removed at the end (_run checks the private TMPDIR)
    out = _run(name, *args, cwd=tmp_path)
    assert out.strip()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["private_tmp"]  # nor in the working folder
