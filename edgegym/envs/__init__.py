"""Gymnasium adapters and registration of every shipped preset as its own versioned id."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym

from ..config import list_presets, load_preset
from .edge_cloud import EdgeCloudMLEnv, EdgeCloudView


@dataclass(frozen=True, slots=True)
class EnvInfo:
    """What a registered id runs: its family (``EdgeCloudML``, ``EdgeUtility``), preset and description."""

    env_id: str
    family: str
    preset: str
    description: str

__all__ = [
    "DEFAULT_IDS",
    "EdgeCloudMLEnv",
    "EdgeCloudView",
    "EnvInfo",
    "FAMILIES",
    "env_info",
    "register_envs",
    "registered_ids",
]

# family name -> entry point
FAMILIES = {
    "EdgeCloudML": "edgegym.envs.edge_cloud:EdgeCloudMLEnv",
    "EdgeUtility": "edgegym.envs.edge_utility:EdgeUtilityEnv",
}
# family default ids -> the preset they run (see README "Environments")
DEFAULT_IDS = {"EdgeCloudML-v0": "sim100", "EdgeUtility-v0": "utility/testbed"}

_registered: list[str] = []
_info: dict[str, EnvInfo] = {}


def register_envs() -> list[str]:
    """Register every preset of ``envs_config`` (idempotent, cheap: reads the small YAML files)."""
    if _registered:
        return list(_registered)
    for name in list_presets():
        preset = load_preset(name)
        if preset.env_id not in gym.registry:
            gym.register(id=preset.env_id, entry_point=FAMILIES[preset.family], kwargs={"preset": name})
        _add(preset.env_id, preset.family, name, preset.description)
    for env_id, name in DEFAULT_IDS.items():
        if name.startswith("utility/"):
            continue  # registered by register_utility_envs below
        preset = load_preset(name)
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=FAMILIES[preset.family], kwargs={"preset": name})
        _add(env_id, preset.family, name, preset.description)
    from .edge_utility import load_utility_preset, register_utility_envs

    for env_id in register_utility_envs():
        name = gym.spec(env_id).kwargs["preset"]
        preset = load_utility_preset(name.split("/", 1)[1])
        _add(env_id, "EdgeUtility", name, preset.description)
    return list(_registered)


def _add(env_id: str, family: str, preset: str, description: str) -> None:
    _registered.append(env_id)
    _info[env_id] = EnvInfo(env_id, family, preset, description)


def env_info(env_id: str) -> EnvInfo:
    """Family, preset and description of a registered edgegym id (``KeyError`` if unknown)."""
    register_envs()
    return _info[env_id]


def registered_ids() -> list[str]:
    """All ids edgegym registered."""
    return register_envs()
