"""The offline LP/MILP lower bound on Σ JCT of Wang et al. (IEEE JSAC 2022), kept at this import path.

The implementation lives with its family, :mod:`edgegym.families.edge_cloud.lp_bound` (the family's offline bound,
:mod:`edgegym.families.edge_cloud.bounds`, uses it, and a family never imports from ``edgegym.agents``); this module
re-exports it so that ``from edgegym.agents.reference.lower_bound import lp_lower_bound`` keeps working.
"""

from edgegym.families.edge_cloud.lp_bound import *  # noqa: F401,F403
from edgegym.families.edge_cloud.lp_bound import __all__  # noqa: F401
