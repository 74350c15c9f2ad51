"""``EdgeCloudML``: preemptive online scheduling of distributed ML jobs over edge servers and a cloud.

Paper: N. Wang, R. Zhou, L. Jiao, R. Zhang, B. Li, Z. Li, "Preemptive Scheduling for Distributed Machine
Learning Jobs in Edge-Cloud Networks", IEEE JSAC 40(8), 2022. One step per arriving job: the job's data
chunks are split over the edge servers and the cloud; edge workers run their chunks preemptively in HAPRF
order. Objective: total job completion time Σ_j (c_j − r_j), in slots (hours).
"""

from ...core.family import Family
from .presets import DEFAULT_PRESET, KEY, V1_OVERRIDES, load_preset, search_overrides

PAPER = (
    "N. Wang, R. Zhou, L. Jiao, R. Zhang, B. Li, Z. Li, \"Preemptive Scheduling for Distributed Machine Learning "
    "Jobs in Edge-Cloud Networks\", IEEE Journal on Selected Areas in Communications 40(8), 2022"
)

FAMILY = Family(
    name="EdgeCloudML",
    key=KEY,
    env_entry_point="edgegym.families.edge_cloud.env:EdgeCloudMLEnv",
    default_preset=DEFAULT_PRESET,
    load_preset=load_preset,
    paper=PAPER,
    default_policy="aonline",
    objective="total job completion time Σ_j (c_j − r_j), in slots (1 slot = 1 hour)",
    search_overrides=search_overrides,
    v1_overrides=V1_OVERRIDES,
    # first_compile*: CPU seconds of the first use with an empty Numba cache (benchmarks/compile_time.py)
    extra={"time_unit": "slot (1 hour)", "first_compile_s": 16.1},
    bound="edgegym.families.edge_cloud.bounds:offline_bound",
)
