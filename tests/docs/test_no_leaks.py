"""Nothing a user reads carries a label meant for the authors or a path of the machine it was made on.

Scanned: the documentation pages (``docs/**/*.md``, their generated reference blocks included), every tracked text
file under ``docs/results`` (reports, CSV and JSON records, the shipped models' JSON under
``docs/results/agents/models``), ``README.md``, ``examples/``, ``benchmarks/`` (the scripts print and write the
reports), the shipped presets (``envs_config/**``) and hyperparameter files (``agents/rl/*.yaml``), every JSON file,
and the output of ``edgegym list`` and ``edgegym list --json``. Forbidden (case-insensitive), the words of
:data:`INTERNAL`: absolute temporary or work paths (``/tmp/``, ``/work/``); the internal spec's section numbers
(``spec §``), its labels for gaps, errors and recommendations (``spec B5``, ``spec A18``, ``spec E4``, ``spec Rec``)
and spec numbers (``spec 004 §6``); the internal paper numbers in any spelling, as labels or as page and folder
names (``paper 000``, ``paper-003``, ``paper_004``, ``paper000.md``: the reproduction pages are named by family,
``docs/results/reproduce_edge_cloud.md``); issue numbers and references to "the issue" (``issue 9``, ``issues
9/10``, ``Issue 10.``, ``the issue's command``, ``the preset issue``, ``this issue``); work sessions (``same
session``; a *Ray session* is Ray's own term and allowed); the people who built it (``engineers``); the task
description (``the brief``); the internal background material (``DESIGN.md``, ``shared/specs``,
``shared/papers``). Papers are cited by authors, title, venue, year and the paper's own section numbers; versions
by release (``0.2.0``); the project's own resolution of a gap is said in words; paths are relative (``runs/...``).
A failure names every offending file and line.

The Python source of ``edgegym/`` and ``agents/`` is scanned too (its docstrings are rendered by the API docs, its
comments ship and its strings are printed), one test per file, for the labels and paths (not the prose words, which
its comments may still use): ``spec §5.4``, ``spec E4``, ``spec A18``, ``spec Rec``, ``spec 000 §2.3``,
``paper 000``, ``paper-000``, ``paper000``, ``paper_000``, ``/tmp/``, ``/work/``, ``issue 10``.
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
#: the internal paper numbers in any spelling, as a label or as a page or folder name
PAPER_LABEL = r"paper[ _-]?00[0-9]"
#: ``(regex, what it catches)``: the words no user-facing text may carry (case-insensitive)
INTERNAL = [
    (r"/tmp/|/work/", "absolute temporary or work paths"),
    (r"spec §|" + SPEC_LABEL, "the internal spec's section numbers, labels and numbers"),
    (PAPER_LABEL, "the internal paper numbers (paper 000, paper-003, paper000.md)"),
    (r"\bissues? #?[0-9]+", "issue numbers (issue 9, issues 9/10, Issue 10)"),
    (r"\b(?:the|this|that)\s+(?:[\w-]+\s+)?issue(?:'s|s)?\b", "the issue as a reference (the issue's command)"),
    (r"(?<!Ray )\bsessions?\b", "work sessions (the same session); a Ray session is allowed"),
    (r"\bengineers?\b", "the people who built it (~7 engineers)"),
    (r"\bthe brief\b", "the task description"),
    (r"DESIGN\.md|shared/(?:specs|papers)", "the internal background material"),
]
LEAK = re.compile("|".join(f"(?:{rx})" for rx, _ in INTERNAL), re.IGNORECASE)


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
    "README": ["README.md"],
    "examples": ["examples"],
    "benchmarks": ["benchmarks"],
    "hyperparameters": [":(glob)agents/rl/*.yaml"],
    "JSON": [":(glob)**/*.json"],
}


#: Labels (and absolute paths) in Python source: the first four rows of :data:`INTERNAL` (paths, spec and paper
#: labels, issue numbers).
PY_LEAK = re.compile("|".join(f"(?:{rx})" for rx, _ in INTERNAL[:4]), re.IGNORECASE)
PY_ROOTS = ("edgegym", "agents")


def _python_files() -> list[str]:
    """Tracked (or new, not ignored) ``.py`` files under ``edgegym/`` and ``agents/``, relative to the root."""
    return [str(p.relative_to(ROOT)) for p in _tracked(*PY_ROOTS) if p.suffix == ".py"]


PY_FILES = _python_files()


def test_the_pattern_catches_what_it_should():
    for bad in ("--out /tmp/runs/x", "/work/main/docs", "(spec §5.4)", "Paper 000 simulation", "paper 003's Random"):
        assert LEAK.search(bad), bad
    for good in ("runs/x", "Wang et al. (JSAC 2022), Sec. V-C", "the paper's Random",
                 "docs/results/reproduce_edge_utility.md"):
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
                 "see docs/results/reproduce_edge_utility.md"):
        assert not LEAK.search(good), good
        assert not PY_LEAK.search(good), good


def test_the_pattern_catches_internal_words():
    # the lines these words were found in (docs pages, results, benchmark help) before they were rewritten
    for bad in ("* v0 (issue 9, same id): `EdgeCloudML-v0`", "Issue 10. What was built", "issues 9/10",
                "## What changed (issue 11)", "fixed in issue #12",
                "**Training keeps its best model.** The issue's command,",
                "changed to `exact` by the preset issue during this work", "The page before this issue",
                "measured in the same session", "sessions", "2 CPU cores shared by ~7 engineers",
                "(other engineers' jobs on the 2 cores)", "since the brief left the EdgeUtility env",
                "[paper000 results](../results/paper000.md)", "`docs/results/paper001/records.csv`", "paper004/F.png",
                "see DESIGN.md", "shared/specs/000.md", "shared/papers/x.txt"):
        assert LEAK.search(bad), bad
    for good in ("* v0 (0.2.0, same id, new defaults)", "[reproduction](../results/reproduce_edge_cloud.md)",
                 "using the Ray session this process is already connected to", "open an issue on GitHub",
                 "engineering", "tissue", "`../shared/traces` beside the checkout", "the goal set when rollout was "
                 "introduced", "a brief pause"):
        assert not LEAK.search(good), good


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


def test_no_file_or_folder_is_named_by_an_internal_label():
    """Page, figure and record names are what a user reads first (``docs/results/reproduce_edge_cloud.md``, not
    ``paper000.md``)."""
    paths = [p.relative_to(ROOT).as_posix() for p in _tracked(".")]
    assert "docs/results/reproduce_edge_cloud.md" in paths
    bad = [p for p in paths if re.search(PAPER_LABEL + r"|\bissues?[ _-]?[0-9]|\bsessions?\b", p, re.IGNORECASE)]
    assert not bad, "named by an internal label: " + ", ".join(bad)


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
                "paper_004 defaults", "--out /tmp/x", 'w("![load sweep](paper000/load_sweep.png)")',
                "docs/results/paper003.md", 'out / "paper000"', "`paper003/results.csv`"):
        assert PY_LEAK.search(bad), bad
    for good in ('w("![load sweep](reproduce_edge_cloud/load_sweep.png)")', "docs/results/reproduce_edge_utility.md",
                 "Wang et al. (JSAC 2022), §IV-C", "the paper's Alg. 2",
                 "specification", "PolicySpec(", "spec = PolicySpec", "reproduce_edge_cloud.py"):
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
