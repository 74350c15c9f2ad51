"""The package layout: every family has the same file roles and provides its interface; no import cycles;
shared code never names a family; simulators never import gymnasium;
the simulation package never imports ``edgegym.agents``."""

from __future__ import annotations

import ast
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import edgegym
from edgegym.core.family import FILE_ROLES, Family
from edgegym.envs import env_info
from edgegym.families import FAMILY_MODULES, families

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = list(families().values())
FAMILY_IDS = [f.name for f in FAMILIES]


def test_every_family_module_is_registered_once():
    assert len(FAMILIES) == len(FAMILY_MODULES) >= 2
    assert len({f.key for f in FAMILIES}) == len(FAMILIES)


@pytest.mark.parametrize("fam", FAMILIES, ids=FAMILY_IDS)
def test_family_folder_has_every_file_role(fam: Family):
    folder = ROOT / "edgegym" / "families" / fam.key
    missing = [f for f in FILE_ROLES if not (folder / f).is_file()]
    assert not missing, f"edgegym/families/{fam.key} lacks {missing}"
    assert (ROOT / "envs_config" / fam.key).is_dir()
    assert fam.presets(), f"envs_config/{fam.key} ships no preset"
    assert fam.default_preset in fam.presets()
    assert fam.paper and fam.objective


@pytest.mark.parametrize("fam", FAMILIES, ids=FAMILY_IDS)
def test_family_interface(fam: Family):
    """Presets load, the env builds, ``view()`` works, ``check_env`` passes, ids are registered."""
    for name in fam.presets():
        preset = fam.load_preset(name)
        assert name in (preset.name, f"{preset.name}-v{preset.version}") and preset.family == fam.name
        assert preset.env_id == f"{fam.name}-{preset.name}-v{preset.version}"
        assert preset.env_id in edgegym.registered_ids()
        assert env_info(preset.env_id).family == fam.name
        assert preset.replace().env_id == preset.env_id
    assert fam.search_overrides is None or isinstance(fam.search_overrides({}), dict)
    default = fam.load_preset(fam.default_preset)
    default_id = f"{fam.name}-v{default.version}"
    assert env_info(default_id).default and env_info(default_id).preset == fam.default_preset
    assert any(i.startswith(f"{fam.name}-v") for i in edgegym.registered_ids())
    small = min(fam.presets(), key=lambda n: len(str(fam.load_preset(n))))
    env = gym.make(fam.load_preset(small).env_id)  # ``small`` may be a "<name>-v1" file stem
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    view = env.unwrapped.view()
    for v in vars(view).values() if hasattr(view, "__dict__") else (getattr(view, s) for s in view.__slots__):
        assert not isinstance(v, list | dict) or v is None, "view() must hold arrays and scalars, not live objects"
    mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
    assert mask.any()
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("fam", FAMILIES, ids=FAMILY_IDS)
def test_family_rendering_role(fam: Family):
    """Every family's ``rendering.py`` provides the same functions with the same parameters (the CLI's
    ``render`` and ``bench --gantt`` call them through :func:`edgegym.families.save_gantt_png`), and imports
    matplotlib only inside them."""
    import inspect

    from edgegym.families import RENDERING_FUNCTIONS, family_module

    mod = family_module(fam, "rendering")
    missing = [f for f in RENDERING_FUNCTIONS if not callable(getattr(mod, f, None))]
    assert not missing, f"edgegym/families/{fam.key}/rendering.py lacks {missing}"
    assert set(RENDERING_FUNCTIONS) <= set(mod.__all__)
    assert list(inspect.signature(mod.gantt_figure).parameters) == ["env", "title", "max_lanes"]
    assert list(inspect.signature(mod.save_gantt_png).parameters) == ["env", "path", "title", "max_lanes"]
    assert list(inspect.signature(mod.render_gantt).parameters) == ["env"]
    assert list(inspect.signature(mod.gantt_data).parameters) == ["env"]
    tree = ast.parse((ROOT / "edgegym" / "families" / fam.key / "rendering.py").read_text())
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    names = [a.name for n in top for a in n.names] + [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
    assert not any(n.startswith("matplotlib") for n in names), "rendering.py must import matplotlib lazily"


def _modules(folder: str, pkg: str) -> dict[str, Path]:
    """The modules under the repository folder ``folder``, named as installed (the package ``pkg``)."""
    out = {}
    for f in (ROOT / folder).rglob("*.py"):
        parts = [*pkg.split("."), *f.relative_to(ROOT / folder).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = {**_modules("edgegym", "edgegym"), **_modules("agents", "edgegym.agents")}


def _imports(name: str, path: Path) -> set[str]:
    """Every module imported anywhere in the file (module level and inside functions), resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                root = base[: len(base) - node.level + 1]
                mod = ".".join(root + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _parents(m: str) -> list[str]:
    parts = m.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def test_no_import_cycle():
    """No cycle among the modules of ``edgegym`` and ``agents`` (counting imports inside functions too).

    Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``: a package's ``__init__`` importing its own
    submodules is not a cycle, so edges to a module's parent packages are ignored."""
    graph = {m: {t for t in deps if t not in _parents(m)} for m, deps in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_layering():
    """Only ``edgegym.agents`` imports ``edgegym.agents``; ``core`` and ``workloads`` never import a family; a family's
    simulator and disciplines never import gymnasium; families never import each other."""
    for m, deps in GRAPH.items():
        if not m.startswith("edgegym.agents"):
            assert not any(d.startswith("edgegym.agents") for d in deps), m
        if m.startswith(("edgegym.core", "edgegym.workloads")):
            assert not any(d.startswith("edgegym.families") and d != "edgegym.families" for d in deps), m
    for fam in FAMILIES:
        for role in ("simulator", "disciplines", "presets", "instance"):
            path = ROOT / "edgegym" / "families" / fam.key / f"{role}.py"
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
            assert not any(x.startswith("gymnasium") for x in names), f"{fam.key}/{role}.py imports gymnasium"
        prefix = f"edgegym.families.{fam.key}"
        for m, deps in GRAPH.items():
            if m.startswith(prefix):
                others = [d for d in deps if d.startswith("edgegym.families.") and not d.startswith(prefix)]
                assert not others, f"{m} imports another family: {others}"


#: modules shared by all families: they iterate over registered families and never name one
SHARED = [
    "edgegym/__init__.py",
    "edgegym/envs/__init__.py",
    *[str(p.relative_to(ROOT)) for p in (ROOT / "edgegym" / "core").glob("*.py")],
    "agents/cli.py",
    "agents/bench.py",
    "agents/runner.py",
    "agents/registry.py",
    "agents/errors.py",
    "agents/policy.py",
    "agents/reference/rollout.py",
]


def test_shared_code_never_names_a_family():
    words = {w for f in FAMILIES for w in (f.name, f.key, f"families.{f.key}")}
    for rel in SHARED:
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                hits = [w for w in words if w in node.value]
                assert not hits, f"{rel}:{node.lineno} names a family ({hits}) in code: {node.value!r}"


def test_installed_packages_are_listed_under_edgegym():
    """``pyproject.toml`` lists every package folder, each installed under ``edgegym`` (``agents/`` as
    ``edgegym.agents``, ``envs_config/`` as ``edgegym.envs_config``): ``edgegym`` is the only top-level name."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = setup["package-dir"]
    assert set(dirs) == {"edgegym", "edgegym.agents", "edgegym.envs_config"}
    expected = set()
    for pkg, folder in dirs.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            expected.add(".".join([pkg, *rel]))
    assert set(setup["packages"]) == expected
    assert all(p.split(".")[0] == "edgegym" for p in setup["packages"])
