"""The one small interface through which an env family plugs into edgegym.

A *family* is one paper's model exposed as Gymnasium envs. It lives in one folder,
``edgegym/families/<key>/``, with the same file roles in every family:

==================  ===========================================================================
``__init__.py``     ``FAMILY = Family(...)`` (this module's dataclass); imports nothing heavy
``simulator.py``    the simulator (numpy only, never gymnasium)
``disciplines.py``  the scheduling disciplines the simulator can run (pluggable, chosen by config)
``presets.py``      preset schema (frozen dataclasses), validation, ``load_preset(name_or_path)``
``instance.py``     instance building: cluster + jobs from a preset and an ``np.random.Generator``
``env.py``          the ``gymnasium.Env``: spaces, observation encoder, action decoder, ``view()``
``rendering.py``    rendering (matplotlib imported lazily)
==================  ===========================================================================

Its presets are YAML files in ``envs_config/<key>/``; its policies are modules of ``agents/`` that
declare ``POLICY_SPECS``. Registration (:mod:`edgegym.envs`), ``edgegym list``, the bench harness and
the CLI iterate over :func:`edgegym.families.families` and never name a family.

A preset object (whatever its schema) must have the attributes ``name``, ``family``, ``version``,
``description`` and ``env_id`` (``f"{family}-{name}-v{version}"``), and a ``replace(**sections)``
method returning a validated copy with some keys of some sections overridden. The env class takes
``(preset: str | Preset = <default>, config: dict | None = None, render_mode: str | None = None)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

__all__ = ["FILE_ROLES", "Family", "preset_dir", "shipped_presets"]

#: the files every family folder has, and what each is for
FILE_ROLES: dict[str, str] = {
    "__init__.py": "FAMILY = Family(...): the family's registration record",
    "simulator.py": "the simulator (numpy only, no gymnasium)",
    "disciplines.py": "scheduling disciplines the simulator runs (pluggable, chosen by config)",
    "presets.py": "preset schema (frozen dataclasses), validation, load_preset()",
    "instance.py": "instance building: cluster + jobs from a preset and an RNG",
    "env.py": "the Gymnasium env: spaces, observation encoder, action decoder, view()",
    "rendering.py": "rendering (matplotlib imported lazily)",
}


@dataclass(frozen=True, slots=True)
class Family:
    """Registration record of an env family.

    Attributes:
        name: the id prefix, e.g. ``"EdgeCloudML"`` (ids are ``<name>-<preset>-v<version>``, and
            ``<name>-v<version>`` for the default preset).
        key: the folder name, under ``edgegym/families/`` and under ``envs_config/``.
        env_entry_point: ``"module:Class"`` of the ``gymnasium.Env`` (imported lazily by ``gym.make``).
        default_preset: the shipped preset behind ``<name>-v<version>``.
        load_preset: ``name_or_path -> preset``: a shipped preset by name or any YAML file by path,
            validated (``ValueError`` naming the file and the key).
        paper: the paper the family implements: title, authors, venue, year.
        default_policy: the name of the family's reference policy (what ``edgegym run`` runs when no
            ``--policy`` is given); a plain string, edgegym never imports the policies.
        objective: what the episode return is minus (or plus, for utilities) of, in words.
        extra: free-form facts shown by ``edgegym list`` (e.g. the time unit).
        search_overrides: ``env_section -> dict``: the ``env`` keys to add, given the ``env`` section a policy's
            config already sets, so that a per-step search (the ``rollout`` policy) has a discrete choice at each
            arrival where the family's default action is continuous or a no-op (e.g. a discrete action mode);
            ``None`` when the family's actions are discrete already.
        v1_overrides: the preset sections' overrides that make a ``-v0`` preset its ``-v1``, the version made for
            learning (same dynamics; reward and observation for an agent); ``python -m edgegym.agents.rl.versions``
            writes the ``-v1`` files from them. Empty: the family has no ``-v1`` presets.
        bound: ``"module:function"`` of the family's offline bound (:mod:`edgegym.core.bounds`): the function takes
            the unwrapped env after ``reset(seed=...)`` and returns a :class:`edgegym.core.bounds.Bound`; imported
            lazily. ``None``: the family has no bound.
    """

    name: str
    key: str
    env_entry_point: str
    default_preset: str
    load_preset: Callable[[str | Path], Any]
    paper: str = ""
    default_policy: str = "random"
    objective: str = ""
    extra: dict = field(default_factory=dict)
    search_overrides: Callable[[dict], dict] | None = None
    v1_overrides: dict = field(default_factory=dict)
    bound: str | None = None

    def presets(self) -> list[str]:
        """Names of the presets shipped in ``envs_config/<key>/``."""
        return shipped_presets(self.key)


def preset_dir(key: str) -> Traversable:
    """The shipped preset folder of a family: ``envs_config/<key>`` (package data)."""
    return resources.files("edgegym.envs_config") / key


def shipped_presets(key: str) -> list[str]:
    """Names (file stems) of the YAML presets shipped for family folder ``key``."""
    d = preset_dir(key)
    if not d.is_dir():
        return []
    return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".yaml"))
