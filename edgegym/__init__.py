"""edgegym: edge-cloud ML clusters as Gymnasium environments, with the papers' reference policies.

``import edgegym`` registers the envs (its one import-time effect), e.g. ``gym.make("EdgeCloudML-v0")``.
"""

from .envs import register_envs, registered_ids

__version__ = "0.1.0"
__all__ = ["__version__", "register_envs", "registered_ids"]

register_envs()
