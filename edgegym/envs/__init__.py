"""Registration of every shipped preset of every env family as its own versioned Gymnasium id.

For each family (:func:`edgegym.families.families`) and each preset file ``envs_config/<key>/<stem>.yaml``
(whose ``name`` is ``stem``, or whose stem is ``<name>-v<version>`` for a later version of a preset):
``<Family>-<name>-v<version>``, plus ``<Family>-v<version>`` for every version of the family's default
preset. The kwargs of each id are ``{"preset": stem}``. Nothing here names a family.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import gymnasium as gym

from ..families import families

__all__ = ["EnvInfo", "env_info", "register_envs", "registered_ids"]


@dataclass(frozen=True, slots=True)
class EnvInfo:
    """What a registered id runs: its family name, preset name, description and whether it is the default."""

    env_id: str
    family: str
    preset: str
    description: str
    default: bool = False


# A later version of a preset is an alternative reading (e.g. a reward made for learning), not a replacement:
# gymnasium's "environment <id>-v0 is out of date" deprecation would be wrong for the v0 ids.
warnings.filterwarnings("ignore", message=r".*The environment \S+-v\d+ is out of date", category=DeprecationWarning)

_registered: list[str] = []
_info: dict[str, EnvInfo] = {}


def _register(env_id: str, entry_point: str, family: str, stem: str, preset, default: bool = False) -> None:
    if env_id in _info:
        raise ValueError(f"two presets register the id {env_id!r} ({_info[env_id].preset}, {stem})")
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=entry_point, kwargs={"preset": stem})
    _registered.append(env_id)
    _info[env_id] = EnvInfo(env_id, family, stem, preset.description, default)


def register_envs() -> list[str]:
    """Register every preset of every family (idempotent, cheap: reads the small YAML files). Returns the ids."""
    if _registered:
        return list(_registered)
    for fam in families().values():
        loaded = [(stem, fam.load_preset(stem)) for stem in fam.presets()]
        for stem, preset in loaded:
            src = f"envs_config/{fam.key}/{stem}.yaml"
            if preset.family != fam.name:
                raise ValueError(f"{src}: key 'family': must be {fam.name!r}, got {preset.family!r}")
            if stem not in (preset.name, f"{preset.name}-v{preset.version}"):
                raise ValueError(f"{src}: key 'name': must be {stem!r} (or the file named "
                                 f"'{preset.name}-v{preset.version}.yaml'), got {preset.name!r}")
            _register(preset.env_id, fam.env_entry_point, fam.name, stem, preset)
        default_name = fam.load_preset(fam.default_preset).name
        for stem, preset in loaded:
            if preset.name == default_name:
                _register(f"{fam.name}-v{preset.version}", fam.env_entry_point, fam.name, stem, preset, default=True)
    return list(_registered)


def env_info(env_id: str) -> EnvInfo:
    """Family, preset and description of a registered edgegym id (``KeyError`` if unknown)."""
    register_envs()
    return _info[env_id]


def registered_ids() -> list[str]:
    """All ids edgegym registered."""
    return register_envs()
