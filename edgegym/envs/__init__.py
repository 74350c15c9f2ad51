"""Registration of every shipped preset of every env family as its own versioned Gymnasium id.

For each family (:func:`edgegym.families.families`) and each preset ``P`` in ``envs_config/<key>/``:
``<Family>-<P>-v<version>``, plus ``<Family>-v<version>`` for the family's default preset. The kwargs of
each id are ``{"preset": P}``. Nothing here names a family.
"""

from __future__ import annotations

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


_registered: list[str] = []
_info: dict[str, EnvInfo] = {}


def _register(env_id: str, entry_point: str, family: str, preset, default: bool = False) -> None:
    if env_id in _info:
        raise ValueError(f"two presets register the id {env_id!r} ({_info[env_id].preset}, {preset.name})")
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=entry_point, kwargs={"preset": preset.name})
    _registered.append(env_id)
    _info[env_id] = EnvInfo(env_id, family, preset.name, preset.description, default)


def register_envs() -> list[str]:
    """Register every preset of every family (idempotent, cheap: reads the small YAML files). Returns the ids."""
    if _registered:
        return list(_registered)
    for fam in families().values():
        for name in fam.presets():
            preset = fam.load_preset(name)
            if preset.family != fam.name:
                raise ValueError(f"envs_config/{fam.key}/{name}.yaml: key 'family': must be {fam.name!r}, "
                                 f"got {preset.family!r}")
            _register(preset.env_id, fam.env_entry_point, fam.name, preset)
        default = fam.load_preset(fam.default_preset)
        _register(f"{fam.name}-v{default.version}", fam.env_entry_point, fam.name, default, default=True)
    return list(_registered)


def env_info(env_id: str) -> EnvInfo:
    """Family, preset and description of a registered edgegym id (``KeyError`` if unknown)."""
    register_envs()
    return _info[env_id]


def registered_ids() -> list[str]:
    """All ids edgegym registered."""
    return register_envs()
