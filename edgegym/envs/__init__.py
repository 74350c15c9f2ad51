"""Gymnasium adapters and registration of every shipped preset as its own versioned id."""

from __future__ import annotations

import gymnasium as gym

from ..config import list_presets, load_preset
from .edge_cloud import EdgeCloudMLEnv, EdgeCloudView

__all__ = ["DEFAULT_IDS", "EdgeCloudMLEnv", "EdgeCloudView", "FAMILIES", "register_envs", "registered_ids"]

# family name -> entry point
FAMILIES = {"EdgeCloudML": "edgegym.envs.edge_cloud:EdgeCloudMLEnv"}
# family default ids -> the preset they run (see README "Environments")
DEFAULT_IDS = {"EdgeCloudML-v0": "sim100"}

_registered: list[str] = []


def register_envs() -> list[str]:
    """Register every preset of ``envs_config`` (idempotent, cheap: reads the small YAML files)."""
    if _registered:
        return list(_registered)
    for name in list_presets():
        preset = load_preset(name)
        if preset.env_id not in gym.registry:
            gym.register(id=preset.env_id, entry_point=FAMILIES[preset.family], kwargs={"preset": name})
        _registered.append(preset.env_id)
    for env_id, name in DEFAULT_IDS.items():
        preset = load_preset(name)
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=FAMILIES[preset.family], kwargs={"preset": name})
        _registered.append(env_id)
    return list(_registered)


def registered_ids() -> list[str]:
    """All ids edgegym registered."""
    return register_envs()
