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

__version__ = "0.9.0"
__all__ = ["__version__", "register_envs", "registered_ids"]


def _shadowed(missing: str) -> ImportError:
    """The error of an ``edgegym`` imported from a folder that lacks the installed package's parts (``missing``):
    a source checkout, or another folder named ``edgegym``, in the working directory shadows the installed package.
    """
    from pathlib import Path

    here = Path(__file__).resolve().parent
    return ImportError(
        f"edgegym was imported from {here}, which lacks {missing} (part of the installed package): a folder named "
        "edgegym in the working directory (e.g. a source checkout) shadows the installed edgegym. Run Python from "
        "another folder, or install this checkout with `pip install -e .` in the folder that holds pyproject.toml."
    )


try:
    register_envs()
except ModuleNotFoundError as _e:  # only the parts of this package: anything else is a real missing dependency
    if not (_e.name or "").startswith("edgegym."):
        raise
    raise _shadowed(_e.name) from _e
