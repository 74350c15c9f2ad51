"""Sphinx directives that generate edgegym's reference tables from the code itself, so the pages cannot drift.

Directives (MyST: a fenced block ```` ```{edgegym-observation-table} EdgeCloudML-v0 ```` ):

* ``edgegym-observation-table ENV_ID``: index, name, meaning, low, high of every observation feature (from
  :func:`edgegym.core.features.observation_features`, the list the encoder itself is sized from);
* ``edgegym-env-ids FAMILY``: every registered id of a family with its preset, spaces and description;
* ``edgegym-families``: every registered family, its paper, its page and whether it names its features;
* ``edgegym-policies [FAMILY]``: every registered policy (name, families, description, page);
* ``edgegym-cli``: ``edgegym <command> --help`` of every subcommand, from the CLI's own parser.

The data functions (``*_rows``) are plain Python, used by the tests too (tests/docs/).
"""

from __future__ import annotations

import os
import pkgutil
from importlib import import_module
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]


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
    return DOCS / "families" / f"{key}.md"


def family_rows() -> list[list[str]]:
    """``[family, paper, page, default id, observation features]`` of every registered family."""
    import edgegym
    from edgegym.core.features import MissingFeatures, observation_features
    from edgegym.envs import env_info
    from edgegym.families import families

    rows = []
    for fam in families().values():
        default = next((i for i in edgegym.registered_ids() if env_info(i).family == fam.name
                        and env_info(i).default), "")
        page = f"families/{fam.key}" if family_page(fam.key).is_file() else f"no page yet (docs/families/{fam.key}.md)"
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
        for info in pkgutil.iter_modules(mod.__path__):
            m = import_module(f"{pkg}.{info.name}")
            specs = getattr(m, "POLICY_SPECS", ())
            if specs:
                out.append((pkg.rsplit(".", 1)[-1], info.name, tuple(specs)))
    return out


def policy_page(package: str, module: str) -> Path:
    """The page documenting the policies of ``agents/<package>/<module>.py``."""
    return DOCS / "policies" / package / f"{module}.md"


def policy_rows(family: str | None = None) -> list[list[str]]:
    """``[policy, families, description, page]`` for every registered policy spec (of ``family``)."""
    rows = []
    for package, module, specs in policy_modules():
        page = policy_page(package, module)
        ref = f"policies/{package}/{module}" if page.is_file() else f"no page yet (docs/policies/{package}/{module}.md)"
        for s in specs:
            if family and family not in s.families:
                continue
            rows.append([s.name, ", ".join(s.families), s.description, ref])
    return rows


def cli_help() -> list[tuple[str, str]]:
    """``(command, help text)`` for ``edgegym`` and each subcommand, from the CLI's own parser."""
    import argparse

    from edgegym.agents.cli import build_parser

    os.environ["COLUMNS"] = "100"
    parser = build_parser()
    out = [("edgegym", parser.format_help())]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((f"edgegym {name}", sub.format_help()))
    return out


# ------------------------------------------------------------------------------------------ Sphinx
def setup(app):
    from docutils import nodes
    from docutils.parsers.rst import Directive
    from sphinx import addnodes

    def cell(text: str, docname: str | None = None):
        entry = nodes.entry()
        para = nodes.paragraph()
        if docname is not None:
            ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + docname,
                                        refexplicit=False, refwarn=True)
            ref += nodes.inline(text=docname)
            para += ref
        elif text.startswith("`") and text.endswith("`"):
            para += nodes.literal(text=text.strip("`"))
        else:
            para += nodes.Text(text)
        entry += para
        return entry

    def table(headers: list[str], rows: list[list], widths: list[int], links: int | None = None):
        tbl = nodes.table()
        tg = nodes.tgroup(cols=len(headers))
        tbl += tg
        for w in widths:
            tg += nodes.colspec(colwidth=w)
        head = nodes.thead()
        tg += head
        hr = nodes.row()
        for h in headers:
            hr += cell(h)
        head += hr
        body = nodes.tbody()
        tg += body
        for r in rows:
            row = nodes.row()
            for k, v in enumerate(r):
                is_link = links == k and isinstance(v, str) and not v.startswith("no page")
                row += cell(v, docname=v if is_link else None)
            body += row
        return tbl

    class ObservationTable(Directive):
        required_arguments = 1

        def run(self):
            rows = [[f"`{r[0]}`", f"`{r[1]}`", r[2], r[3], r[4]] for r in observation_rows(self.arguments[0])]
            return [table(["index", "name", "meaning", "low", "high"], rows, [10, 22, 52, 6, 6])]

    class EnvIds(Directive):
        required_arguments = 1

        def run(self):
            rows = [[f"`{r[0]}`", *r[1:]] for r in env_rows(self.arguments[0])]
            return [table(["id", "preset", "observation", "action", "description"], rows, [22, 14, 12, 16, 36])]

    class Families(Directive):
        def run(self):
            return [table(["family", "paper", "page", "default id", "observation features"], family_rows(),
                          [12, 40, 18, 14, 16], links=2)]

    class Policies(Directive):
        optional_arguments = 1

        def run(self):
            fam = self.arguments[0] if self.arguments else None
            rows = [[f"`{r[0]}`", *r[1:]] for r in policy_rows(fam)]
            return [table(["policy", "families", "description", "page"], rows, [14, 16, 50, 20], links=3)]

    class Cli(Directive):
        def run(self):
            out = []
            for cmd, text in cli_help():
                out.append(nodes.rubric(text=cmd))
                out.append(nodes.literal_block(text, text, language="text"))
            return out

    for name, cls in [("edgegym-observation-table", ObservationTable), ("edgegym-env-ids", EnvIds),
                      ("edgegym-families", Families), ("edgegym-policies", Policies), ("edgegym-cli", Cli)]:
        app.add_directive(name, cls)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
