"""edgegym's reference tables, generated from the code INTO the Markdown pages, so that they read in the repository
(on GitHub, in an editor) as on the built site, and cannot drift from the code.

A page holds generated content between two marker comments; everything outside them is hand-written::

    <!-- BEGIN GENERATED: env-ids EdgeCloudML -->
    (generated: do not edit)
    <!-- END GENERATED -->

Kinds (the words after ``BEGIN GENERATED:``):

* ``env-ids FAMILY``: every registered id of a family with its preset, spaces and description;
* ``observation ENV_ID``: index, name, meaning, low, high of every observation feature (from
  :func:`edgegym.core.features.observation_features`, the list the encoder itself is sized from);
* ``families``: every registered family, its paper, its page, its default id, whether it names its features;
* ``policies [FAMILY]``: every registered policy (name, families, description, page);
* ``cli``: ``edgegym <command> --help`` of every subcommand, from the CLI's own parser;
* ``api OBJECT...``: signature and docstring of each dotted name (function, class, method or module);
* ``module MODULE``: a module's docstring alone.

Commands (from the repository root)::

    python docs/_ext/edgegym_docs.py --write    # regenerate every block of every page under docs/
    python docs/_ext/edgegym_docs.py --check    # exit 1 naming each stale page (the test suite runs it too)

The output depends on the code only: no absolute path, no time, the help text formatted at a fixed width. As a
Sphinx extension (``conf.py``) this module adds no directive: it warns about every stale page, so a build with
``-W`` fails on docs that were not regenerated.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import pkgutil
import re
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
COMMAND = "python docs/_ext/edgegym_docs.py --write"
BEGIN = re.compile(r"^<!-- BEGIN GENERATED: (?P<spec>[^>]*?) -->[ \t]*$", re.MULTILINE)
END = "<!-- END GENERATED -->"
END_LINE = re.compile(r"^" + re.escape(END) + r"[ \t]*$", re.MULTILINE)
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: the width the CLI help is formatted at (argparse reads $COLUMNS; set while formatting, then restored)
CLI_COLUMNS = 100


class GenerateError(ValueError):
    """A page's marker that cannot be generated (unknown kind, missing argument, no END marker)."""


# ------------------------------------------------------------------------------------------ data
def _fmt_bound(x: float) -> str:
    if x == float("inf"):
        return "∞"
    if x == float("-inf"):
        return "−∞"
    return f"{x:g}"


def observation_rows(env_id: str) -> list[list[str]]:
    """``[index, name, meaning, low, high]`` rows of ``env_id``'s observation (consecutive indices folded)."""
    from edgegym.core.features import feature_rows, observation_features

    return [[r.index, r.name, r.meaning, _fmt_bound(r.low), _fmt_bound(r.high)]
            for r in feature_rows(observation_features(env_id))]


def _space(sp) -> str:
    """``Box(101,)``, ``Discrete(6)``: the kind and the size, not the dtype and bounds."""
    n = getattr(sp, "n", None)
    if n is not None and not getattr(sp, "shape", ()):
        return f"{type(sp).__name__}({int(n)})"
    return f"{type(sp).__name__}{tuple(getattr(sp, 'shape', ()) or ())}"


def env_rows(family: str) -> list[list[str]]:
    """``[id, preset, observation space, action space, description]`` of every registered id of ``family``."""
    import gymnasium as gym

    import edgegym
    from edgegym.envs import env_info

    rows = []
    for env_id in edgegym.registered_ids():
        info = env_info(env_id)
        if info.family != family:
            continue
        env = gym.make(env_id)
        try:
            obs = _space(env.observation_space)
            act = _space(env.action_space)
        finally:
            env.close()
        rows.append([env_id, info.preset + (" (default)" if info.default else ""), obs, act, info.description])
    return rows


def family_page(key: str) -> Path:
    """The page documenting the family whose folder is ``key``."""
    return DOCS / "families" / f"{key}.md"


def family_rows() -> list[list[str]]:
    """``[family, paper, page, default id, observation features]`` of every registered family (page: a path
    relative to ``docs/``, or ``no page yet (...)``)."""
    import edgegym
    from edgegym.core.features import MissingFeatures, observation_features
    from edgegym.envs import env_info
    from edgegym.families import families

    rows = []
    for fam in families().values():
        default = next((i for i in edgegym.registered_ids() if env_info(i).family == fam.name
                        and env_info(i).default), "")
        page = f"families/{fam.key}.md" if family_page(fam.key).is_file() else \
            f"no page yet (docs/families/{fam.key}.md)"
        try:
            feats = f"{len(observation_features(default))} named" if default else "no default id"
        except MissingFeatures as e:
            feats = f"not named: {e}"
        rows.append([fam.name, fam.paper, page, default, feats])
    return rows


def policy_modules() -> list[tuple[str, str, tuple]]:
    """``(package, module name, POLICY_SPECS)`` of every module that registers policies."""
    from edgegym.agents.registry import POLICY_PACKAGES

    out = []
    for pkg in POLICY_PACKAGES:
        mod = import_module(pkg)
        for info in sorted(pkgutil.iter_modules(mod.__path__), key=lambda i: i.name):
            m = import_module(f"{pkg}.{info.name}")
            specs = getattr(m, "POLICY_SPECS", ())
            if specs:
                out.append((pkg.rsplit(".", 1)[-1], info.name, tuple(specs)))
    return out


def policy_page(package: str, module: str) -> Path:
    """The page documenting the policies of ``agents/<package>/<module>.py``."""
    return DOCS / "policies" / package / f"{module}.md"


def policy_rows(family: str | None = None) -> list[list[str]]:
    """``[policy, families, description, page]`` for every registered policy spec (of ``family``); page: a path
    relative to ``docs/``, or ``no page yet (...)``."""
    rows = []
    for package, module, specs in policy_modules():
        page = policy_page(package, module)
        ref = f"policies/{package}/{module}.md" if page.is_file() else \
            f"no page yet (docs/policies/{package}/{module}.md)"
        for s in specs:
            if family and family not in s.families:
                continue
            rows.append([s.name, ", ".join(s.families), s.description, ref])
    return rows


@contextlib.contextmanager
def _columns(width: int):
    """``$COLUMNS`` set to ``width`` inside the block (argparse wraps the help at it), restored after."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def cli_help() -> list[tuple[str, str]]:
    """``(command, help text)`` for ``edgegym`` and each subcommand, from the CLI's own parser, wrapped at
    :data:`CLI_COLUMNS` whatever the terminal, without colour."""
    from edgegym.agents.cli import build_parser

    with _columns(CLI_COLUMNS):
        parser = build_parser()
        parsers = [("edgegym", parser)]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += [(f"edgegym {name}", sub) for name, sub in action.choices.items()]
        out = []
        for cmd, p in parsers:
            if hasattr(p, "color"):  # Python >= 3.14 may colour the help
                p.color = False
            out.append((cmd, p.format_help()))
    return out


# ------------------------------------------------------------------------------------------ Markdown
_CODE = re.compile(r"``(.+?)``", re.S)
_ROLE = re.compile(r":(?:py:)?[a-z]+:`(?:([^`<]*?)\s*<[^`>]+>|~?([^`]+))`")
_LINK = re.compile(r"`([^`<]+?)\s*<([^`>]+)>`__?")
_SECTION = re.compile(r"^([A-Z][A-Za-z ]*|[A-Z][^:]{0,60}\([^)]*\)):$")
_ITEM_SECTIONS = {"Args", "Arguments", "Attributes", "Parameters", "Keyword Args", "Keyword Arguments", "Raises",
                  "Returns", "Yields"}
_ITEM = re.compile(r"^(\*{0,2}\w[\w.*]*)(?: \(([^)]*)\))?: (.*)$")


def _code_span(text: str) -> str:
    """``text`` as one Markdown code span (a longer fence when it holds a backtick)."""
    text = " ".join(text.split())
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _escape_text(text: str) -> str:
    r"""Plain docstring text made literal in Markdown: ``<`` (an HTML tag otherwise) and ``$`` (math) escaped."""
    return text.replace("\\", "\\\\").replace("<", "\\<").replace("$", "\\$")


def inline_md(text: str) -> str:
    """reStructuredText inline markup of a docstring as Markdown: ````x```` and ``:role:`x``` become code spans
    (``~a.b`` shows ``b``, ``title <target>`` shows the title), ```text <url>`_`` a link; other text is
    escaped so that it reads literally."""
    out, pos = [], 0
    pattern = re.compile("|".join(f"(?:{p.pattern})" for p in (_CODE, _ROLE, _LINK)), re.S)
    for m in pattern.finditer(text):
        out.append(_escape_text(text[pos:m.start()]))
        s = m.group(0)
        if s.startswith("``"):
            out.append(_code_span(_CODE.match(s).group(1)))
        elif s.startswith(":"):
            r = _ROLE.match(s)
            title, target = r.group(1), r.group(2)
            out.append(_code_span(title if title else target.rsplit(".", 1)[-1] if s.count("~") else target))
        else:
            lk = _LINK.match(s)
            out.append(f"[{_escape_text(lk.group(1))}]({lk.group(2)})")
        pos = m.end()
    out.append(_escape_text(text[pos:]))
    return "".join(out)


def _literal_language(body: list[str]) -> str:
    """``text`` for a block of shell commands (so that no docs test runs it as a page's command), else
    ``python``."""
    code = [ln for ln in body if ln.strip() and not ln.lstrip().startswith("#")]
    shell = ("python ", "edgegym ", "pip ", "$ ")
    return "text" if code and all(ln.lstrip().startswith(shell) for ln in code) else "python"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[str], i: int, base: int) -> tuple[list[str], int]:
    """The lines from ``i`` on that are blank or indented deeper than ``base``, dedented; and the next index."""
    j = i
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
        j += 1
    while j > i and not lines[j - 1].strip():
        j -= 1
    body = lines[i:j]
    cut = min((_indent(ln) for ln in body if ln.strip()), default=0)
    return [ln[cut:] for ln in body], j


def _items(body: list[str]) -> list[str]:
    """A Google-style section's entries (``name: text`` with indented continuation lines) as Markdown bullets."""
    out: list[str] = []
    for ln in body:
        m = _ITEM.match(ln) if ln and not ln.startswith(" ") else None
        if m:
            name, kind, rest = m.groups()
            head = _code_span(name) + (f" ({kind})" if kind else "")
            out.append(f"* {head}: {rest}")
        elif out and ln.strip():
            out.append("  " + ln.strip())
        elif ln.strip():
            out.append(ln)
    return out


def docstring_md(doc: str | None) -> str:
    """A Google-style, reStructuredText-flavoured docstring as Markdown that reads the same on GitHub and in
    Sphinx: literal blocks (``::``) fenced, section bodies (``Args:``, ``Deviations:`` ...) dedented (argument
    entries as bullets), inline markup by :func:`inline_md`."""
    if not doc:
        return ""
    lines = inspect.cleandoc(doc).splitlines()
    paras: list[str] = []  # Markdown lines; prose lines are collected, then their inline markup converted
    prose: list[str] = []

    def flush():
        if prose:
            paras.extend(inline_md("\n".join(prose)).splitlines())
            prose.clear()

    i = 0
    while i < len(lines):
        ln = lines[i]
        nxt = next((x for x in lines[i + 1:] if x.strip()), "")
        deeper = bool(nxt) and _indent(nxt) > _indent(ln)
        if ln.rstrip().endswith("::") and deeper:
            lead = ln.rstrip()[:-2].rstrip()
            if lead:
                prose.append(lead + ":")
            flush()
            body, i = _block(lines, i + 1, _indent(ln))
            while body and not body[0].strip():
                body.pop(0)
            paras += ["", "```" + _literal_language(body), *body, "```", ""]
            continue
        m = _SECTION.match(ln.strip())
        if m and deeper and _indent(ln) == 0:
            flush()
            body, i = _block(lines, i + 1, 0)
            paras += ["", f"**{inline_md(m.group(1))}:**", ""]
            if m.group(1) in _ITEM_SECTIONS:
                prose.extend(_items(body))
            else:
                prose.extend(body)
            flush()
            paras.append("")
            continue
        prose.append(ln)
        i += 1
    flush()
    text = "\n".join(paras)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _annotation(ann) -> str:
    return ann if isinstance(ann, str) else inspect.formatannotation(ann)


def signature_text(name: str, obj) -> str:
    """``name(param: type = default, ...) -> return`` from the annotations as written; one parameter a line when
    the one-line form is longer than 100 characters."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    params, star_done = [], False
    for p in sig.parameters.values():
        if p.name == "self" and not params:
            continue
        if p.kind is p.KEYWORD_ONLY and not star_done:
            params.append("*")
            star_done = True
        s = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.kind is p.VAR_POSITIONAL:
            star_done = True
        if p.annotation is not p.empty:
            s += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            s += (" = " if p.annotation is not p.empty else "=") + repr(p.default)
        params.append(s)
    ret = "" if sig.return_annotation is sig.empty else f" -> {_annotation(sig.return_annotation)}"
    one = f"{name}({', '.join(params)}){ret}"
    if len(one) <= 100:
        return one
    return f"{name}(\n" + "".join(f"    {p},\n" for p in params) + f"){ret}"


def _locate(dotted: str):
    """The object named ``dotted`` (``module.attr.attr``): the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def api_md(dotted: str, level: int = 3) -> str:
    """One API entry: a heading with the dotted name, the signature (functions, classes, methods) and the
    docstring, as Markdown."""
    obj = _locate(dotted)
    out = [f"{'#' * level} `{dotted}`", ""]
    if not inspect.ismodule(obj):
        sig = signature_text(dotted, obj)
        if inspect.isclass(obj):  # a class's signature is its constructor's, which returns None
            sig = "class " + sig.removesuffix(" -> None")
        out += ["```python", sig, "```", ""]
    doc = docstring_md(inspect.getdoc(obj) if not inspect.isclass(obj) else obj.__doc__)
    if doc:  # an undocumented member shows its signature alone, as autodoc does
        out += [doc, ""]
    return "\n".join(out)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table (cells on one line, ``|`` escaped)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _page_link(target: str, page: Path) -> str:
    """``target`` (a path relative to ``docs/`` or a ``no page yet`` note) as a link relative to ``page``."""
    if target.startswith("no page"):
        return target
    rel = os.path.relpath(DOCS / target, page.parent).replace(os.sep, "/")
    return f"[{target[:-3]}]({rel})"


def _arg(args: list[str], kind: str, n: int = 1) -> None:
    if len(args) < n:
        raise GenerateError(f"'{kind}' needs {n} argument(s), got {len(args)}")


def render_block(spec: str, page: Path) -> str:
    """The generated Markdown of one marker (``spec``: the kind and its arguments) on ``page``."""
    kind, *args = spec.split()
    if kind == "env-ids":
        _arg(args, kind)
        rows = [[f"`{r[0]}`", *map(_escape_text, r[1:])] for r in env_rows(args[0])]
        if not rows:
            raise GenerateError(f"env-ids: no registered id of the family {args[0]!r}")
        return md_table(["id", "preset", "observation", "action", "description"], rows)
    if kind == "observation":
        _arg(args, kind)
        rows = [[f"`{r[0]}`", f"`{r[1]}`", _escape_text(r[2]), r[3], r[4]] for r in observation_rows(args[0])]
        return md_table(["index", "name", "meaning", "low", "high"], rows)
    if kind == "families":
        rows = [[f"`{r[0]}`", _escape_text(r[1]), _page_link(r[2], page), f"`{r[3]}`" if r[3] else "", r[4]]
                for r in family_rows()]
        return md_table(["family", "paper", "page", "default id", "observation features"], rows)
    if kind == "policies":
        rows = [[f"`{r[0]}`", r[1], _escape_text(r[2]), _page_link(r[3], page)]
                for r in policy_rows(args[0] if args else None)]
        return md_table(["policy", "families", "description", "page"], rows)
    if kind == "cli":
        return "\n".join(f"## `{cmd}`\n\n```text\n{text.rstrip()}\n```\n" for cmd, text in cli_help()).rstrip()
    if kind == "api":
        _arg(args, kind)
        return "\n".join(api_md(a) for a in args).rstrip()
    if kind == "module":
        _arg(args, kind)
        return docstring_md(_locate(args[0]).__doc__)
    raise GenerateError(f"unknown kind {kind!r} (known: env-ids, observation, families, policies, cli, api, "
                        "module)")


def _fenced(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the fenced code blocks of a Markdown text (a marker shown in one is an example,
    not a marker)."""
    spans, pos, opened = [], 0, None
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if opened is None and m:
            opened = (pos, m.group(1))
        elif opened is not None and m and m.group(1)[0] == opened[1][0] and len(m.group(1)) >= len(opened[1]) \
                and not line.strip()[len(m.group(1)):]:
            spans.append((opened[0], pos + len(line)))
            opened = None
        pos += len(line)
    if opened is not None:
        spans.append((opened[0], pos))
    return spans


def _markers(pattern: re.Pattern, text: str, spans: list[tuple[int, int]]) -> list[re.Match]:
    return [m for m in pattern.finditer(text) if not any(a <= m.start() < b for a, b in spans)]


def generate_page(text: str, page: Path, render: Callable[[str, Path], str] = render_block) -> str:
    """``text`` with the content between every BEGIN/END marker pair regenerated (the markers kept; markers inside
    fenced code blocks are examples and left alone); a marker without its END, or one that cannot be generated,
    raises :class:`GenerateError` naming the page and line."""
    out, pos = [], 0
    spans = _fenced(text)
    begins, ends = _markers(BEGIN, text, spans), _markers(END_LINE, text, spans)
    for k, m in enumerate(begins):
        line = text.count("\n", 0, m.start()) + 1
        end = next((e.start() for e in ends if e.start() > m.end()), -1)
        nested = begins[k + 1] if k + 1 < len(begins) else None
        if end < 0 or (nested and nested.start() < end):
            raise GenerateError(f"{_rel(page)}:{line}: '{m.group(0)}' has no '{END}' before the next marker")
        try:
            body = render(m.group("spec").strip(), page)
        except GenerateError as e:
            raise GenerateError(f"{_rel(page)}:{line}: {e}") from None
        except Exception as e:  # an unknown family / id / object: name the marker
            raise GenerateError(f"{_rel(page)}:{line}: '{m.group('spec').strip()}' failed: "
                                f"{type(e).__name__}: {e}") from e
        out += [text[pos:m.end()], "\n\n", body.strip("\n"), "\n\n"]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _rel(page: Path) -> str:
    try:
        return page.resolve().relative_to(DOCS.parent).as_posix()
    except ValueError:
        return page.name


def pages(root: Path = DOCS) -> list[Path]:
    """The Markdown pages under ``root`` that hold a generated block (built output left out)."""
    out = []
    for p in sorted(root.rglob("*.md")):
        text = p.read_text(encoding="utf-8")
        if "_build" not in p.parts and _markers(BEGIN, text, _fenced(text)):
            out.append(p)
    return out


def stale_pages(root: Path = DOCS) -> list[tuple[Path, str]]:
    """``(page, regenerated text)`` of every page whose generated blocks differ from what the code gives."""
    out = []
    for p in pages(root):
        text = p.read_text(encoding="utf-8")
        new = generate_page(text, p)
        if new != text:
            out.append((p, new))
    return out


def main(argv: list[str] | None = None) -> int:
    """``--write``: regenerate the stale pages; ``--check``: exit 1 naming them (nothing written)."""
    ap = argparse.ArgumentParser(prog="python docs/_ext/edgegym_docs.py",
                                 description="Write the generated reference blocks into the Markdown pages of "
                                             "docs/ (between <!-- BEGIN GENERATED: ... --> and "
                                             "<!-- END GENERATED -->), or check that they are current.")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite every stale page")
    mode.add_argument("--check", action="store_true", help="exit 1 when a page is stale (writes nothing)")
    ap.add_argument("--docs", type=Path, default=DOCS, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    try:
        stale = stale_pages(a.docs)
    except GenerateError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for p, new in stale:
        if a.write:
            p.write_text(new, encoding="utf-8")
            print(f"wrote {_rel(p)}")
        else:
            print(f"stale: {_rel(p)}", file=sys.stderr)
    if a.check and stale:
        print(f"{len(stale)} page(s) differ from the code; regenerate: {COMMAND}", file=sys.stderr)
        return 1
    if not stale:
        print(f"{len(pages(a.docs))} page(s) with generated blocks, all current")
    return 0


# ------------------------------------------------------------------------------------------ Sphinx
def setup(app):
    """Sphinx extension: one warning per stale page (``-W`` makes it an error), no directive."""
    from sphinx.util import logging

    log = logging.getLogger(__name__)

    def check(_app):
        try:
            stale = stale_pages()
        except GenerateError as e:
            log.warning(str(e))
            return
        for p, _ in stale:
            log.warning(f"{_rel(p)}: generated blocks differ from the code; regenerate: {COMMAND}")

    app.connect("builder-inited", check)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.path.insert(0, str(DOCS.parent))
    sys.exit(main())
