"""HeteroML: Zhou et al.'s heterogeneous distributed ML jobs (worker/PS types, PS or Ring-AllReduce) as env family."""

from __future__ import annotations

from edgegym.core.family import Family

from .presets import DEFAULT_PRESET, V1_OVERRIDES, load_preset

FAMILY = Family(
    name="HeteroML",
    key="hetero_ml",
    env_entry_point="edgegym.families.hetero_ml.env:HeteroMLEnv",
    default_preset=DEFAULT_PRESET,
    load_preset=load_preset,
    paper=(
        "Online Scheduling Algorithm for Heterogeneous Distributed Machine Learning Jobs, R. Zhou, J. Pang, "
        "Q. Zhang, C. Wu, L. Jiao, Y. Zhong, Z. Li, IEEE Transactions on Cloud Computing, 2023"
    ),
    default_policy="aonline-hetero-now",
    objective="total weighted completion time Σ_j w_j c_j (return = -(objective - Σ_j w_j a_j) / Z with reward 'flow')",
    v1_overrides=V1_OVERRIDES,
    # first_compile*: CPU seconds of the first use with an empty Numba cache (benchmarks/compile_time.py)
    extra={"time unit": "1 slot = 1 hour", "architectures": "PS, Ring-AllReduce", "first_compile_s": 27.0,
           "first_compile_v1_s": 76.3},
    bound="edgegym.families.hetero_ml.bounds:offline_bound",
)
