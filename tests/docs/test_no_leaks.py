"""Nothing a user reads carries a label meant for the authors or a path of the machine it was made on.

Scanned: the documentation pages (``docs/**/*.md``), every tracked text file under ``docs/results``
(reports, CSV and JSON records, the shipped models' JSON under ``docs/results/agents/models``), the shipped
presets (``envs_config/**``) and the output of ``edgegym list`` and ``edgegym list --json``. Forbidden
(case-insensitive): absolute temporary or work paths (``/tmp/``, ``/work/``), the internal spec's section numbers
(``spec §``), its labels for gaps, errors and recommendations (``spec B5``, ``spec A18``, ``spec E4``, ``spec Rec``),
the internal spec numbers (``spec 004 §6``) and the internal paper numbers (``paper 000`` … ``paper 009``). Papers
are cited by authors, title, venue, year and the paper's own section numbers; the project's own resolution of a gap
is said in words; paths are relative (``runs/...``). A failure names every offending file and line.

The Python source of ``edgegym/`` and ``agents/`` is scanned too (its docstrings are rendered by the API docs, its
comments ship and its strings are printed), one test per file, for the same labels plus the other spellings of
them (``spec E4``, ``spec A18``, ``spec Rec``, ``spec 000 §2.3``, ``paper-000``, ``paper000``, ``paper_000``); a ``paper000`` followed by a
file extension, a ``/`` or a closing quote is a file or folder name (``docs/results/paper000.md``), not a label.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: A spec label is "spec" and a letter with a digit (``spec B5``, ``spec A18``, ``spec E4``), ``spec Rec`` or a spec
#: number (``spec 004``); "Rec" must end there (``spec records`` is prose). Bare labels like ``(A17)`` are not
#: matched: the papers' own symbols look the same (the assumptions ``(A1)``/``(A2)`` of Zhou et al.).
SPEC_LABEL = r"spec (?:[A-Z][0-9]|Rec\b|00[0-9])"
LEAK = re.compile(r"/tmp/|/work/|spec §|" + SPEC_LABEL + r"|paper 00[0-9]", re.IGNORECASE)


def _tracked(*patterns: str) -> list[Path]:
    """Files of the checkout matching the git pathspecs, tracked or new (not ignored); every file under the folders
    when git is not available."""
    try:
        cmd = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *patterns]
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
        files = [ROOT / f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.SubprocessError):
        pats = [pat.replace(":(glob)", "") for pat in patterns]
        files = [f for pat in pats for f in ((ROOT / pat).rglob("*") if (ROOT / pat).is_dir() else ROOT.glob(pat))]
        files = [f for f in files if "_build" not in f.parts]
    return sorted(p for p in files if p.is_file())


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None  # binary (PNG, zip)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _leaks(name: str, text: str) -> list[str]:
    return [f"{name}:{i}: {line.strip()[:160]}" for i, line in enumerate(text.splitlines(), 1) if LEAK.search(line)]


GROUPS = {
    "docs pages": [":(glob)docs/**/*.md"],
    "docs/results": ["docs/results"],
    "shipped models": ["docs/results/agents/models"],
    "envs_config": ["envs_config"],
}


#: Labels (and absolute paths) in Python source. ``paper000`` directly followed by a digit, an extension, a slash or a
#: quote is part of a file or folder name (``docs/results/paper000.md``, ``out / "paper000"``) and is allowed.
PY_LEAK = re.compile(
    r"/tmp/|/work/|spec §|" + SPEC_LABEL + r"|paper[ _-]00[0-9]"
    r"|paper00[0-9](?![0-9]|\.(?:md|png|csv|json)\b|/|[\"'`])",
    re.IGNORECASE,
)
PY_ROOTS = ("edgegym", "agents")


def _python_files() -> list[str]:
    """Tracked (or new, not ignored) ``.py`` files under ``edgegym/`` and ``agents/``, relative to the root."""
    return [str(p.relative_to(ROOT)) for p in _tracked(*PY_ROOTS) if p.suffix == ".py"]


PY_FILES = _python_files()


def test_the_pattern_catches_what_it_should():
    for bad in ("--out /tmp/runs/x", "/work/main/docs", "(spec §5.4)", "Paper 000 simulation", "paper 003's Random"):
        assert LEAK.search(bad), bad
    for good in ("runs/x", "Wang et al. (JSAC 2022), Sec. V-C", "the paper's Random", "docs/results/paper003.md"):
        assert not LEAK.search(good), good


def test_the_pattern_catches_spec_labels_in_yaml_and_docs():
    # the preset comments and docs lines these labels were found in (before they were rewritten)
    for bad in ("# P_s = W_s (spec B5); 8-10 worker types", "# (spec Rec: fills the 16 GB of RAM).",
                "# so that Random misses ~52% of AoN deadlines (spec A18), see below.",
                "  num_jobs: 3000  # 10 per server (spec A38 suggests 10 000; run time)",
                "Regenerate: ... (spec E1).", "## Claims (spec 004 §6)", "spec e4", "(Spec B7; no scale)"):
        assert LEAK.search(bad), bad
        assert PY_LEAK.search(bad), bad
    for good in ("the paper gives no job sizes for the simulation, so", "Wang et al. (JSAC 2022), Sec. V-A",
                 "Zhang et al. (ToN 2023), Fig. 7, Sec. V-C", "under (A1)/(A2) with the theoretical alpha",
                 "the spec records every key", "specification A1", "EnvSpec(", "spec = PolicySpec",
                 "see docs/results/paper003.md"):
        assert not LEAK.search(good), good
        assert not PY_LEAK.search(good), good


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_tracked_user_facing_files_have_no_leaks(group):
    files = _tracked(*GROUPS[group])
    assert files, f"no tracked files for {group}"
    bad = []
    for path in files:
        text = _text(path)
        if text is not None:
            bad += _leaks(str(path.relative_to(ROOT)), text)
    assert not bad, f"{len(bad)} leaking line(s) in {group}:\n" + "\n".join(bad)


@pytest.mark.parametrize("argv", [["list"], ["list", "--json"]])
def test_edgegym_list_has_no_leaks(argv):
    from edgegym.agents.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    out = buf.getvalue()
    assert "EdgeCloudML-v0" in out
    if "--json" in argv:  # one line: report the offending JSON entries one per line
        out = out.replace("}, {", "},\n{")
    bad = _leaks("edgegym " + " ".join(argv), out)
    assert not bad, "\n".join(bad)


def test_the_python_pattern_tells_labels_from_paths():
    for bad in ('"""Paper 000\'s simulator."""', "(spec §3.2)", "# spec E4: every job fits", "(spec 000 §5.4)",
                "sampled from spec 000's ranges", 'print(f"[paper000] done")', "paper-003 baselines",
                "paper_004 defaults", "--out /tmp/x"):
        assert PY_LEAK.search(bad), bad
    for good in ('w("![load sweep](paper000/load_sweep.png)")', "docs/results/paper003.md", 'out / "paper000"',
                 "`paper003/results.csv`", "Wang et al. (JSAC 2022), §IV-C", "the paper's Alg. 2",
                 "specification", "PolicySpec(", "spec = PolicySpec", "reproduce_000.py"):
        assert not PY_LEAK.search(good), good


def test_python_sources_are_found():
    assert "edgegym/__init__.py" in PY_FILES and "agents/policy.py" in PY_FILES, PY_FILES[:5]


@pytest.mark.parametrize("path", PY_FILES)
def test_python_source_has_no_leaks(path):
    """Docstrings, comments and strings of every ``.py`` file under ``edgegym/`` and ``agents/``: no internal label
    (``paper 000``, ``spec §5.4``, ``spec E4``, ...) and no absolute work path; a failure names file:line."""
    text = _text(ROOT / path)
    assert text is not None, f"{path} is not UTF-8 text"
    bad = [f"{path}:{i}: {line.strip()[:160]}" for i, line in enumerate(text.splitlines(), 1) if PY_LEAK.search(line)]
    assert not bad, f"{len(bad)} leaking line(s):\n" + "\n".join(bad)
