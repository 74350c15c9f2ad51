"""``EdgeUtility``: online dispatching and scheduling of heterogeneous-utility jobs on edge servers.

Paper: C. Zhang, H. Tan, H. Huang, Z. Han, S. H.-C. Jiang, G. Li, X.-Y. Li, "Online Approximation Scheme for
Scheduling Heterogeneous Utility Jobs in Edge Computing", IEEE/ACM Transactions on Networking, 2023. One
step per released job: the edge server (or the cloud, or reject) that gets it; each server runs a pluggable
discipline. Objective: total utility Σ_i g_i(response time) (the return equals it, a quantity to
maximise). Time unit: seconds.
"""

from ...core.family import Family
from .presets import DEFAULT_PRESET, KEY, V1_OVERRIDES, load_preset

PAPER = (
    "C. Zhang, H. Tan, H. Huang, Z. Han, S. H.-C. Jiang, G. Li, X.-Y. Li, \"Online Approximation Scheme for "
    "Scheduling Heterogeneous Utility Jobs in Edge Computing\", IEEE/ACM Transactions on Networking, 2023"
)

FAMILY = Family(
    name="EdgeUtility",
    key=KEY,
    env_entry_point="edgegym.families.edge_utility.env:EdgeUtilityEnv",
    default_preset=DEFAULT_PRESET,
    load_preset=load_preset,
    paper=PAPER,
    default_policy="o4a",
    objective="total utility Σ_i g_i(response time), to maximise (the return equals it)",
    v1_overrides=V1_OVERRIDES,
    # first_compile*: CPU seconds of the first use with an empty Numba cache (benchmarks/compile_time.py)
    extra={"time_unit": "second", "first_compile_s": 17.1},
    bound="edgegym.families.edge_utility.bounds:offline_bound",
)
