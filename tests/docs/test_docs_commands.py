"""Every command the README and the docs show runs as written (with the small budgets listed in BUDGET).

Commands are the lines of ```bash blocks, and the inline code spans with a flag or a script, that start with
``edgegym `` or ``python examples/`` / ``python benchmarks/``; installs (``pip install``), the test command
itself and lines with placeholders (``PATH``, ``DIR``, ``<...>``) are not commands to run. The commands of one
page run in order in one scratch folder, so ``edgegym train ... --out runs/mppo`` precedes the ``eval`` of
``runs/mppo``. Commands that take minutes even with a small budget (a Ray cluster, the reproductions) run in
a separate test marked slow, with ``EDGEGYM_SLOW_DOCS=1``.

``docs/results/*`` is left out: those pages are generated reports quoting the (hours-long) commands that
produced them; their one-command regeneration (``python benchmarks/reproduce_*.py``) is shown in the README
and runs here with ``--quick``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md",
         *sorted(p for p in (ROOT / "docs").rglob("*.md") if not {"_build", "results"} & set(p.parts))]

#: (regex, replacement): the budgets the commands run with here (a reader runs them as written)
BUDGET = [
    (r"--timesteps \d+", "--timesteps 256"),
    (r"--episodes [2-9]\d*", "--episodes 1"),
    (r"(edgegym bench .*--seeds) \d+-\d+", r"\1 0"),
    (r"(python benchmarks/reproduce_[a-z_]+\.py)(?! --quick)", r"\1 --quick"),
    (r"(python benchmarks/steps_per_second\.py)", r"\1 --seconds 0.2 --no-episodes --env EdgeCloudML-tiny-v0"),
    (r"(python benchmarks/decisions_per_second\.py)", r"\1 --episodes 1"),
    (r"(python benchmarks/wireless_udl_tradeoff\.py)(?! --quick)", r"\1 --quick"),
    (r"(python benchmarks/headroom_sweep\.py [^`]*?)(?: --quick)?$", r"\1 --quick"),
]
#: commands that take minutes even with a small budget: marked slow (run in CI only when they fit)
#: (a rollout policy on a default id decides about once per second: minutes per episode)
#: (the leaderboard runs every policy of every default id: an hour or more)
#: (the RLlib backend and the models it writes under runs/rllib*: ray[rllib] lives in a venv of its own, see .ci/run,
#: where tests/rl/test_rl_rllib.py runs it)
SLOW = [r"--backend ray", r"--backend rllib", r"runs/rllib", r"reproduce_[a-z_]+\.py", r"benchmarks/leaderboard\.py$",
        r"--env [A-Za-z]+-v\d+ --policy \"?rollout"]
_PLACEHOLDER = re.compile(r"<[^>]+>|\bPATH\b|\bDIR\b|\.\.\.|\bID\b|\bFILE\b")


def _is_command(line: str) -> bool:
    return line.startswith(("edgegym ", "python examples/", "python benchmarks/"))


def commands(text: str) -> list[str]:
    """The runnable commands of a markdown page, in page order."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"\s*```(\w+)", lines[i])
        if m:
            lang = m.group(1)
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                block.append(lines[i])
                i += 1
            if lang in ("bash", "sh", "shell", "console"):
                joined = "\n".join(block).replace("\\\n", " ")
                for ln in joined.splitlines():
                    ln = ln.strip().removeprefix("$ ")
                    if not ln or ln.startswith("#") or "pytest" in ln:
                        continue
                    ln = re.sub(r"\s+", " ", re.sub(r"\s+#.*$", "", ln))
                    for part in ln.split("&&"):
                        part = part.strip()
                        if _is_command(part) and not _PLACEHOLDER.search(part):
                            out.append(part)
        else:
            for code in re.findall(r"`([^`]+)`", lines[i]):
                code = code.strip()
                runnable = " --" in code or code.startswith("python ")  # `edgegym run` alone names a command
                if _is_command(code) and runnable and not _PLACEHOLDER.search(code) and code not in out:
                    out.append(code)
        i += 1
    return out


def _budget(cmd: str) -> str:
    for pat, rep in BUDGET:
        cmd = re.sub(pat, rep, cmd)
    if re.match(r"python benchmarks/reproduce_", cmd) and "--out" not in cmd:
        cmd += " --out runs/reproduce"
    return cmd


def _is_slow(cmd: str) -> bool:
    return any(re.search(p, cmd) for p in SLOW)


#: pages whose quick commands together take over a minute on a 2-core machine (the README's: ~75-100 s, of which
#: ``headroom_sweep.py --quick`` ~35 s): marked slow, so deselected by the default run and run by CI (``-m slow``)
SLOW_PAGES = {"README.md"}


def _cases(slow: bool):
    cases = []
    for page in PAGES:
        cmds = [c for c in commands(page.read_text(encoding="utf-8")) if _is_slow(c) == slow]
        if cmds:
            name = str(page.relative_to(ROOT))
            marks = [pytest.mark.slow] if name in SLOW_PAGES else []
            cases.append(pytest.param(page, cmds, id=name, marks=marks))
    return cases


def test_extraction_finds_the_readme_commands():
    cmds = commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert any(c.startswith("edgegym run") for c in cmds)
    assert not any("pip install" in c or "pytest" in c for c in cmds)
    text = ("```bash\npip install -e . && edgegym run --env X-v0  # note\nedgegym list \\\n  --json\n```\n"
            "`edgegym eval --model PATH`")
    assert commands(text) == ["edgegym run --env X-v0", "edgegym list --json"]


@pytest.mark.parametrize("page,cmds", _cases(slow=False))
def test_page_commands_run(page, cmds, tmp_path):
    _run_all(page, cmds, tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("EDGEGYM_SLOW_DOCS") != "1",
                    reason="minutes even with --quick (a Ray cluster, the reproductions): set EDGEGYM_SLOW_DOCS=1")
@pytest.mark.parametrize("page,cmds", _cases(slow=True))
def test_page_slow_commands_run(page, cmds, tmp_path):
    _run_all(page, cmds, tmp_path)


def _run_all(page, cmds, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "MPLBACKEND": "Agg"}
    bindir = Path(sys.executable).parent
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    for cmd in cmds:
        run = _budget(cmd)
        if run.startswith("edgegym "):
            argv = [sys.executable, "-m", "edgegym.agents.cli", *shlex.split(run)[1:]]
        else:
            argv = [sys.executable, *shlex.split(run)[1:]]
            argv[1] = str(ROOT / argv[1])
        p = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, (
            f"{page.name}: `{cmd}` (run as `{run}`) failed:\n{p.stdout[-1500:]}\n{p.stderr[-3000:]}"
        )
