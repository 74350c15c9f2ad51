"""Policy registry: a policy plugs in by declaring ``POLICY_SPECS`` in a module of ``edgegym.agents.reference`` or
``edgegym.agents.baselines`` (discovered automatically), or with :func:`register_policy`; never by editing the harness.

A name may be used by several families (``random``, ``fifo``, ``drf``): the env's family picks the spec.
:data:`POLICIES` maps each name to a :class:`PolicyName` (the specs of all families using that name).
"""

from __future__ import annotations

import pkgutil
from collections.abc import Iterator, Mapping
from importlib import import_module
from pathlib import Path

from .policy import PolicySpec

__all__ = [
    "POLICIES",
    "POLICY_PACKAGES",
    "PolicyName",
    "PolicySpec",
    "make_policy",
    "policy_name_forms",
    "policy_names",
    "policy_spec",
    "register_policy",
]

#: packages whose modules may declare ``POLICY_SPECS``
POLICY_PACKAGES = ("edgegym.agents.reference", "edgegym.agents.baselines")


class PolicyName:
    """Every spec registered under one name, by family (``families``, ``description``, ``config_for``)."""

    __slots__ = ("name", "by_family")

    def __init__(self, name: str) -> None:
        self.name = name
        self.by_family: dict[str, PolicySpec] = {}

    @property
    def families(self) -> tuple[str, ...]:
        """The families this name runs on."""
        return tuple(self.by_family)

    @property
    def description(self) -> str:
        """The description (of the first family's spec when the name is shared)."""
        descs = list(dict.fromkeys(s.description for s in self.by_family.values()))
        return descs[0] if len(descs) == 1 else " | ".join(f"{f}: {s.description}" for f, s in self.by_family.items())

    @property
    def env_config(self) -> dict:
        """The env overrides of the first family's spec (use :meth:`config_for` when the family is known)."""
        return next(iter(self.by_family.values())).env_config

    def spec_for(self, family: str) -> PolicySpec:
        """The spec used on ``family`` (``KeyError`` naming the families it supports)."""
        if family not in self.by_family:
            raise KeyError(f"policy {self.name!r} does not support family {family} (it supports "
                           f"{', '.join(self.by_family)})")
        return self.by_family[family]

    def config_for(self, family: str) -> dict:
        """The preset overrides this policy needs on an env of ``family``."""
        return self.spec_for(family).config_for(family)


class _Registry(Mapping):
    """name -> :class:`PolicyName`, filled from the policy packages on first use."""

    def __init__(self) -> None:
        self._names: dict[str, PolicyName] = {}
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for pkg_name in POLICY_PACKAGES:
            pkg = import_module(pkg_name)
            for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
                if not _declares_specs(pkg, mod.name):
                    continue  # e.g. an LP bound needing scipy: never imported just to list policies
                module = import_module(f"{pkg_name}.{mod.name}")
                for spec in getattr(module, "POLICY_SPECS", ()):
                    self.add(spec)

    def add(self, spec: PolicySpec) -> None:
        entry = self._names.setdefault(spec.name, PolicyName(spec.name))
        for fam in spec.families:
            if fam in entry.by_family:
                raise ValueError(f"policy {spec.name!r} is already registered for family {fam}")
        for fam in spec.families:
            entry.by_family[fam] = spec

    def __getitem__(self, name: str) -> PolicyName:
        self._load()
        return self._names[name]

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(sorted(self._names))

    def __len__(self) -> int:
        self._load()
        return len(self._names)


def _declares_specs(pkg, name: str) -> bool:
    """Whether module ``name`` of ``pkg`` assigns ``POLICY_SPECS`` (read from its source, not imported)."""
    for d in pkg.__path__:
        for f in (Path(d) / f"{name}.py", Path(d) / name / "__init__.py"):
            if f.is_file():
                return "POLICY_SPECS" in f.read_text(encoding="utf-8")
    return False


POLICIES = _Registry()


def register_policy(spec: PolicySpec) -> None:
    """Add a policy (its name must be new for each of its families)."""
    POLICIES._load()
    POLICIES.add(spec)


def policy_names(family: str | None = None) -> list[str]:
    """Registered policy names (those supporting ``family`` when given)."""
    return [n for n in POLICIES if family is None or family in POLICIES[n].families]


def policy_spec(name: str, family: str) -> PolicySpec:
    """The spec of ``name`` on ``family`` (``KeyError`` with the valid choices)."""
    if name not in POLICIES:
        raise KeyError(f"unknown policy {name!r} (valid: {', '.join(policy_names())})")
    return POLICIES[name].spec_for(family)


def env_family_of(env) -> str:
    """The family name of a (possibly wrapped) edgegym env."""
    return env.unwrapped.preset.family


def make_policy(name: str, env, seed: int = 0):
    """Build the named policy for ``env`` (which must already carry the policy's ``env_config``)."""
    return policy_spec(name, env_family_of(env)).factory(env, seed)


def policy_name_forms() -> list[dict]:
    """Policy names built from a pattern rather than registered one by one (``name``, ``families``,
    ``description``, as :data:`POLICIES` entries read): ``rollout:<base>`` over any policy of a family
    (:mod:`edgegym.agents.reference.rollout`) and the saved agents ``<algo>:PATH``. They run wherever a policy name
    is taken (``edgegym run --policy``, ``bench --policies``) but are not expanded by ``--policies all``."""
    from edgegym.families import families

    fams = list(families())
    return [
        {"name": "rollout:<base>", "families": fams,
         "description": "rollout (Bertsekas, Tsitsiklis and Wu, J. Heuristics 1997) over any policy <base> of the "
                        "env's family: rollout(K=4,H=20,k=6):<base> (K resampled forks, H steps, k candidates)"},
        {"name": "<algo>:PATH", "families": fams,
         "description": "a saved agent: ppo:PATH, maskable-ppo:PATH, rllib:DIR, or a model folder"},
    ]
