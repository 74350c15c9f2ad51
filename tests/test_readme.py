"""The README opens with the two commands, and .ci/run runs the README's test command verbatim."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bash_blocks(text):
    blocks, cur, inside = [], [], False
    for line in text.splitlines():
        if line.strip() == "```bash":
            inside, cur = True, []
        elif line.strip() == "```" and inside:
            blocks.append("\n".join(cur).strip())
            inside = False
        elif inside:
            cur.append(line)
    return blocks


def test_readme_commands_and_ci_agree():
    blocks = _bash_blocks((ROOT / "README.md").read_text())
    run_cmd, test_cmd = blocks[0], blocks[1]
    assert run_cmd.startswith("pip install -e .") and "edgegym run" in run_cmd
    assert "pytest" in test_cmd and "torch==2.13.0" in test_cmd
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_cmd in ci
