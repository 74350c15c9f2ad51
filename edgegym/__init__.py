"""edgegym: edge-cloud ML clusters as Gymnasium environments, with the papers' reference policies.

``import edgegym`` registers the envs (its one import-time effect), e.g. ``gym.make("EdgeCloudML-v0")``.

Where things are:

* :func:`registered_ids` lists every env id; ``edgegym.envs.env_info(id)`` its family, preset and description;
* ``edgegym.families.families()``: the env families (one per paper), each with its paper, objective and
  presets; every family's page (spaces, observation table, rewards, episode end, arguments, versions) is in
  the documentation (``docs/families/``);
* ``edgegym.core.features.observation_features(env)``: what each observation index means;
* ``edgegym.workloads``: trace loaders (Philly, ITP, Google 2011, any CSV) and synthetic generators;
* policies, the episode runner, benchmarks and SB3 training live in the ``agents`` package; the
  ``edgegym`` command line (``edgegym --help``) runs them.
"""

from .envs import register_envs, registered_ids

__version__ = "0.5.1"
__all__ = ["__version__", "register_envs", "registered_ids"]

register_envs()
