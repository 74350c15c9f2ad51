"""What a new user meets first: ``edgegym list`` names each family's default policy, ``run`` / ``eval`` write no
redrawn step counter into a log file and report a first-use compile on its own line (not inside ``wall_s``), and an
``edgegym`` folder that shadows the installed package is named in the import error."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

from edgegym.agents import options, runner
from edgegym.agents.cli import main

from edgegym.core import jit
from edgegym.families import families

ROOT = Path(__file__).resolve().parents[2]


def test_list_shows_each_family_s_default_id_and_policy(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for fam in families().values():
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(fam.name + " "))
        assert f"default id {fam.name}-v0" in line and f"default policy {fam.default_policy} " in line, line
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(f["name"], f["default_policy"], f["default_id"]) for f in data["families"]] == [
        (f.name, f.default_policy, f"{f.name}-v0") for f in families().values()]


def test_step_counter_only_on_a_terminal(monkeypatch):
    args = types.SimpleNamespace(no_progress=False)
    assert options._progress(args, "x").disable  # pytest captures stderr: not a terminal
    monkeypatch.setattr(options, "_is_terminal", lambda stream: True)
    assert not options._progress(args, "x").disable
    assert options._progress(types.SimpleNamespace(no_progress=True), "x").disable


def test_run_to_a_log_file_writes_one_line_per_episode_and_no_carriage_returns(tmp_path):
    log = tmp_path / "run.log"
    with log.open("w") as f:
        p = subprocess.run([sys.executable, "-m", "edgegym.agents.cli", "run", "--env", "EdgeCloudML-tiny-v0",
                            "--episodes", "3"], stdout=f, stderr=subprocess.STDOUT, timeout=600)
    text = log.read_text()
    assert p.returncode == 0, text
    assert "\r" not in text
    assert sum(ln.startswith("[EdgeCloudML-tiny-v0 | aonline | seed") for ln in text.splitlines()) == 3


def test_a_compile_during_an_episode_is_reported_once_on_its_own_line(monkeypatch, capsys):
    """Simulated: the compile counter grows by 12 s during the first episode only."""
    spent = [0.0]
    monkeypatch.setattr(jit, "compile_seconds", lambda: spent[0])
    real = runner.run_episode

    def episode(*a, **k):
        if a[2] == 0:
            spent[0] += 12.0
        return real(*a, **k)

    monkeypatch.setattr(runner, "run_episode", episode)
    monkeypatch.delenv("EDGEGYM_COMPILE_NOTICE", raising=False)
    assert main(["run", "--env", "EdgeCloudML-tiny-v0", "--seeds", "0-1", "--json"]) == 0
    err = capsys.readouterr().err
    notes = [ln for ln in err.splitlines() if "kernels compiled" in ln]
    assert notes == ["edgegym: the kernels compiled for 12.0 s during this episode (first use; cached now; not "
                     "counted in its wall_s)"]
    monkeypatch.setenv("EDGEGYM_COMPILE_NOTICE", "0")
    spent[0] = 0.0
    assert main(["run", "--env", "EdgeCloudML-tiny-v0", "--seeds", "0", "--json"]) == 0
    assert "kernels compiled" not in capsys.readouterr().err


def test_a_shadowing_source_folder_is_named_in_the_import_error(tmp_path):
    """``import edgegym`` that finds this repository's ``edgegym`` folder without the installed package's other
    parts (here: the editable install's finder removed, as for a checkout in the working directory that is not the
    installed one) raises an ImportError that says what happened and what to do."""
    code = ("import sys\n"
            "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
            "sys.path_hooks[:] = [h for h in sys.path_hooks if 'editable' not in repr(h).lower()]\n"
            "import edgegym\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: edgegym was imported from ") and "shadows the installed edgegym" in last
    assert "pip install -e ." in last and "edgegym.envs_config" in last
