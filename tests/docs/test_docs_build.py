"""The documentation site builds with warnings as errors (as CI builds it), when Sphinx is installed
(``pip install -e ".[docs]"``): a broken link or an unlisted page in docs/ fails here, before CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="the docs need the [docs] extra: pip install -e '.[docs]'")
    pytest.importorskip("myst_parser", reason="the docs need the [docs] extra: pip install -e '.[docs]'")
    p = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"),
                        str(tmp_path / "html")], capture_output=True, text=True, timeout=900)
    warnings = [ln for ln in p.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln]
    assert p.returncode == 0, "docs build failed:\n" + "\n".join(warnings or p.stderr.splitlines()[-20:])
    assert (tmp_path / "html" / "families" / "index.html").is_file()
