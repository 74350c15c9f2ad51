"""``WirelessUDL``: online scheduling of unbiased distributed learning (UDL) jobs over wireless edge sites.

Paper: Z. Han, R. Zhou, J. Pang, H. Tan, Y. Cao, "Online Scheduling Unbiased Distributed Learning over
Wireless Edge Networks", IEEE ICPADS, 2021. One step per arriving parameter-server training job whose data
is spread over every site: the agent picks a full plan (worker count, placement, PS site, start slot);
every slot trains each site's data in proportion (unbiased sampling), moving chunks over priced wireless
links. Objective: total cost Σ_i [f_i(latency) + bandwidth cost B_i] (the return equals minus it). Time
unit: slot.
"""

from ...core.family import Family
from .presets import DEFAULT_PRESET, KEY, V1_OVERRIDES, load_preset, search_overrides

PAPER = (
    "Z. Han, R. Zhou, J. Pang, H. Tan, Y. Cao, \"Online Scheduling Unbiased Distributed Learning over Wireless "
    "Edge Networks\", IEEE ICPADS, 2021"
)

FAMILY = Family(
    name="WirelessUDL",
    key=KEY,
    env_entry_point="edgegym.families.wireless_udl.env:WirelessUDLEnv",
    default_preset=DEFAULT_PRESET,
    load_preset=load_preset,
    paper=PAPER,
    default_policy="okita",
    objective="total cost Σ_i [latency cost f_i(t_i − a_i + 1) + bandwidth cost B_i], to minimise "
    "(return = −cost / reward_scale)",
    search_overrides=search_overrides,
    v1_overrides=V1_OVERRIDES,
    # first_compile*: CPU seconds of the first use with an empty Numba cache (benchmarks/compile_time.py)
    extra={"time_unit": "slot", "first_compile_s": 12.9},
    bound="edgegym.families.wireless_udl.bounds:offline_bound",
)
