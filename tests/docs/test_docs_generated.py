"""The reference tables of the docs are written into the Markdown (they read on GitHub) and cannot drift.

* every page's generated blocks are what ``python docs/_ext/edgegym_docs.py --write`` writes from the code now
  (the failure names the stale pages and the command);
* the generator: markers replaced in place, examples inside code fences left alone, a marker without its END or of
  an unknown kind refused naming the page and line, ``--check`` exits 1 on a stale page and ``--write`` fixes it;
* its output does not depend on the machine (no absolute path, the CLI help the same at any terminal width);
* docstrings become Markdown that reads the same on GitHub as on the site (code spans, sections, literal blocks).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import edgegym_docs as gen  # noqa: E402


def test_committed_pages_match_the_generator():
    stale = [str(p.relative_to(ROOT)) for p, _ in gen.stale_pages()]
    assert not stale, f"generated blocks differ from the code in {stale}; regenerate: {gen.COMMAND}"


def test_the_reference_pages_hold_their_blocks():
    kinds = {p.relative_to(DOCS).as_posix(): [m.group("spec").split()[0] for m in gen.BEGIN.finditer(
        p.read_text(encoding="utf-8"))] for p in gen.pages()}
    assert kinds["cli.md"] == ["cli"]
    assert kinds["families/index.md"] == ["families"]
    assert kinds["policies/index.md"] == ["policies"]
    assert set(kinds["api.md"]) == {"api"}
    for key in ("edge_cloud", "edge_utility", "wireless_udl", "hetero_ml"):
        assert kinds[f"families/{key}.md"] == ["env-ids", "observation"], key
    # no Sphinx-only directive left: what a page shows is in its Markdown
    for p in DOCS.rglob("*.md"):
        text = p.read_text(encoding="utf-8")
        assert "```{eval-rst}" not in text and "```{edgegym-" not in text, p.relative_to(ROOT)


def test_generated_content_is_machine_independent():
    text = "\n".join(p.read_text(encoding="utf-8") for p in gen.pages())
    for needle in (str(ROOT), str(Path.home()), "/tmp/", "/work/", "0x7f"):
        assert needle not in text, needle


def test_cli_help_does_not_depend_on_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    narrow = gen.cli_help()
    monkeypatch.setenv("COLUMNS", "250")
    wide = gen.cli_help()
    assert narrow == wide
    assert os.environ["COLUMNS"] == "250"  # restored after formatting
    assert [c for c, _ in narrow][:2] == ["edgegym", "edgegym run"]
    assert all(len(line) <= gen.CLI_COLUMNS for _, t in narrow for line in t.splitlines() if " " in line.strip())


def _fake(spec: str, page: Path) -> str:
    return f"[{spec} on {page.name}]"


def test_markers_are_filled_in_place_and_examples_left_alone():
    page = Path("x.md")
    text = ("# T\n\n<!-- BEGIN GENERATED: a 1 -->\nold\nstuff\n<!-- END GENERATED -->\n\nprose\n\n"
            "````markdown\n<!-- BEGIN GENERATED: example -->\n<!-- END GENERATED -->\n````\n\n"
            "<!-- BEGIN GENERATED: b -->\n<!-- END GENERATED -->\n")
    out = gen.generate_page(text, page, _fake)
    assert out == ("# T\n\n<!-- BEGIN GENERATED: a 1 -->\n\n[a 1 on x.md]\n\n<!-- END GENERATED -->\n\nprose\n\n"
                   "````markdown\n<!-- BEGIN GENERATED: example -->\n<!-- END GENERATED -->\n````\n\n"
                   "<!-- BEGIN GENERATED: b -->\n\n[b on x.md]\n\n<!-- END GENERATED -->\n")
    assert gen.generate_page(out, page, _fake) == out  # idempotent


@pytest.mark.parametrize("text,needle", [
    ("a\n<!-- BEGIN GENERATED: a -->\nno end\n", "x.md:2: '<!-- BEGIN GENERATED: a -->' has no"),
    ("<!-- BEGIN GENERATED: a -->\n<!-- BEGIN GENERATED: b -->\n<!-- END GENERATED -->\n", "x.md:1:"),
    ("\n\n<!-- BEGIN GENERATED: nonsense 1 -->\n<!-- END GENERATED -->\n", "x.md:3: unknown kind 'nonsense'"),
    ("<!-- BEGIN GENERATED: env-ids -->\n<!-- END GENERATED -->\n", "'env-ids' needs 1 argument"),
    ("<!-- BEGIN GENERATED: env-ids NoSuchFamily -->\n<!-- END GENERATED -->\n", "NoSuchFamily"),
    ("<!-- BEGIN GENERATED: observation NoSuch-v0 -->\n<!-- END GENERATED -->\n", "x.md:1: 'observation NoSuch-v0'"),
])
def test_bad_markers_are_refused_naming_the_page_and_line(text, needle):
    with pytest.raises(gen.GenerateError) as e:
        gen.generate_page(text, Path("x.md"))
    assert needle in str(e.value)


def _run(*argv) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = gen.main(list(argv))
    return rc, out.getvalue() + err.getvalue()


def test_check_fails_on_a_stale_page_and_write_fixes_it(tmp_path):
    page = tmp_path / "sub" / "p.md"
    page.parent.mkdir()
    page.write_text("# P\n\n<!-- BEGIN GENERATED: families -->\nstale\n<!-- END GENERATED -->\n", encoding="utf-8")
    (tmp_path / "plain.md").write_text("no markers\n", encoding="utf-8")
    rc, msg = _run("--check", "--docs", str(tmp_path))
    assert rc == 1 and "stale: p.md" in msg and gen.COMMAND in msg
    assert "stale" in page.read_text(encoding="utf-8")  # --check writes nothing
    rc, msg = _run("--write", "--docs", str(tmp_path))
    assert rc == 0 and "wrote p.md" in msg
    assert "| `EdgeCloudML` |" in page.read_text(encoding="utf-8")
    assert _run("--check", "--docs", str(tmp_path)) == (0, "1 page(s) with generated blocks, all current\n")
    page.write_text("<!-- BEGIN GENERATED: families -->\n", encoding="utf-8")
    rc, msg = _run("--check", "--docs", str(tmp_path))
    assert rc == 2 and "p.md:1:" in msg


def test_links_in_tables_are_relative_to_their_page():
    rows = gen.render_block("policies EdgeCloudML", DOCS / "policies" / "baselines" / "edge_cloud.md")
    assert "[policies/reference/aonline](../reference/aonline.md)" in rows
    fams = gen.render_block("families", DOCS / "families" / "index.md")
    assert "[families/edge_cloud](edge_cloud.md)" in fams


def test_docstrings_become_markdown():
    doc = '''Summary with ``code``, :func:`edgegym.make <edgegym.envs.make>`, :class:`~a.b.Klass` and <tags>.

    Args:
        env: an env, or a
            registered id.
        seed (int): the seed.

    Deviations:
        * one
        * two

    Example::

        x = 1
        print(x)

    Cost $5 per $1.
    '''
    md = gen.docstring_md(doc)
    assert md.splitlines()[0] == "Summary with `code`, `edgegym.make`, `Klass` and \\<tags>."
    assert "**Args:**\n\n* `env`: an env, or a\n  registered id.\n* `seed` (int): the seed." in md
    assert "**Deviations:**\n\n* one\n* two" in md
    assert "Example:\n\n```python\nx = 1\nprint(x)\n```" in md
    assert "Cost \\$5 per \\$1." in md
    assert gen.docstring_md(None) == ""


def test_signatures_are_written_as_annotated():
    def f(a: str, b: int | None = None, *args, c: float = 1.5, **kw) -> list[str]:  # annotations: strings here
        """Doc."""

    assert gen.signature_text("m.f", f) == "m.f(a: str, b: int | None = None, *args, c: float = 1.5, **kw) -> list[str]"

    def g(x, *, y=2):
        pass

    assert gen.signature_text("g", g) == "g(x, *, y=2)"
    long = gen.signature_text("pkg.module.function_with_a_long_name", lambda aaaaaaaaaa=1, bbbbbbbbbbbb=2,
                              ccccccccccccc=3, ddddddddddddd=4, eeeeeeeeeeeeeee=5: None)
    assert long.splitlines()[0] == "pkg.module.function_with_a_long_name(" and long.endswith("\n)")
