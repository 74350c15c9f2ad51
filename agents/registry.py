"""Policy registry: a new policy plugs in with :func:`register_policy`, not by editing the harness."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["PolicySpec", "POLICIES", "register_policy", "make_policy", "policy_names"]


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """How to build a policy and which env families it supports.

    ``env_config``: preset overrides the env needs (e.g. ``{"env": {"discipline": "srtf"}}`` for baselines
    that decide inside the simulator); ``env_config_by_family`` overrides it for particular families.
    """

    name: str
    factory: Callable
    families: tuple[str, ...]
    description: str
    env_config: dict = field(default_factory=dict)
    env_config_by_family: dict = field(default_factory=dict)  # family -> overrides, when they differ by family

    def config_for(self, family: str) -> dict:
        """The preset overrides this policy needs on an env of ``family``."""
        return self.env_config_by_family.get(family, self.env_config)


POLICIES: dict[str, PolicySpec] = {}


def register_policy(spec: PolicySpec) -> None:
    """Add a policy (its name must be new)."""
    if spec.name in POLICIES:
        raise ValueError(f"policy {spec.name!r} is already registered")
    POLICIES[spec.name] = spec


def policy_names() -> list[str]:
    """Registered policy names."""
    return sorted(POLICIES)


def make_policy(name: str, env, seed: int = 0):
    """Build the named policy for ``env`` (which must already carry the policy's ``env_config``)."""
    if name not in POLICIES:
        raise KeyError(f"unknown policy {name!r} (valid: {', '.join(policy_names())})")
    return POLICIES[name].factory(env, seed)  # the env must already carry spec.config_for(family)


def _register_builtin() -> None:
    from .baselines.edge_cloud import AllCloud, AllEdgeLeastLoaded
    from .policy import NoOpPolicy, RandomPolicy
    from .reference.aonline import AOnline

    fam = ("EdgeCloudML",)
    for spec in (
        PolicySpec("aonline", lambda env, seed: AOnline(env), fam, "Paper 000's A_online (A_greedy + A_ps)"),
        PolicySpec("aonline-e", lambda env, seed: AOnline(env, edge_only=True), fam, "A_online-E (edge only)"),
        *(
            PolicySpec(
                name, lambda env, seed: NoOpPolicy(env), fam, f"{desc} (spec §5.3)", {"env": {"discipline": disc}}
            )
            for name, disc, desc in (
                ("srtf", "srtf", "SRTF, job-level, gang, edge-only"),
                ("tiresias-l", "tiresias_l", "Tiresias-L, 2-queue LAS"),
                ("batchsche", "batchsche", "BatchSche, batched, edge+cloud"),
            )
        ),
        PolicySpec(
            "random",
            lambda env, seed: RandomPolicy(env, seed),
            fam + ("EdgeUtility",),
            "uniformly random legal action (EdgeUtility: servers run highest potential utility, as paper 003)",
            env_config_by_family={"EdgeUtility": {"scheduler": {"discipline": "hpu"}}},
        ),
        PolicySpec("all-cloud", lambda env, seed: AllCloud(env), fam, "every job entirely in the cloud"),
        PolicySpec(
            "all-edge",
            lambda env, seed: AllEdgeLeastLoaded(env),
            fam,
            "every job on the edge server that can start it earliest",
        ),
    ):
        register_policy(spec)
    from .reference.o4a import DO4A, O4A
    from .reference.utility_baselines import OnDisc

    ufam = ("EdgeUtility",)
    for spec in (
        PolicySpec(
            "o4a",
            lambda env, seed: O4A(env),
            ufam,
            "Paper 003's O4A (PLAN + earliest tentative finish)",
            {"scheduler": {"discipline": "o4a"}},
        ),
        PolicySpec(
            "do4a",
            lambda env, seed: DO4A(env, k=5),
            ufam,
            "Paper 003's DO4A (k=5 candidates + cloud)",
            {"scheduler": {"discipline": "o4a"}},
        ),
        PolicySpec(
            "ondisc",
            lambda env, seed: OnDisc(env),
            ufam,
            "OnDisc: least JRT increase, SRPT servers",
            {"scheduler": {"discipline": "srpt"}},
        ),
    ):
        register_policy(spec)


_register_builtin()
