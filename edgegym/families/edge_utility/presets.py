"""Preset schema of the ``EdgeUtility`` family: frozen dataclasses per section, validated eagerly.

The family models Zhang et al., "Online Approximation Scheme for Scheduling Heterogeneous Utility Jobs in Edge
Computing", IEEE/ACM ToN 2023.

A preset file (``envs_config/edge_utility/<name>.yaml``) has the sections ``servers``, ``network``,
``workload``, ``estimation``, ``scheduler`` and ``env`` plus the top-level keys ``name``, ``version``,
``family`` and ``description``. An unknown key or an out-of-range value raises ``ValueError`` naming the
key and the file. Time unit: seconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.family import preset_dir, shipped_presets
from ...core.presets import TOP_KEYS as _TOP
from ...core.presets import PresetBase
from ...core.validation import boolean as _bool
from ...core.validation import choice as _choice
from ...core.validation import fail as _fail
from ...core.validation import number as _num
from ...core.validation import pair as _range
from ...core.validation import read_preset_yaml
from .disciplines import DISCIPLINES, FALLBACKS
from .instance import DEVICE_TYPES

__all__ = [
    "DEFAULT_PRESET",
    "KEY",
    "capacity_jobs_per_s",
    "offered_load",
    "release_rate_per_s",
    "UtilityPreset",
    "list_utility_presets",
    "load_preset",
    "load_utility_preset",
    "utility_preset_from_dict",
]

KEY = "edge_utility"
DEFAULT_PRESET = "testbed-stressed"

#: the ``-v1`` overrides (:attr:`Family.v1_overrides`): ``reward_credit: dispatch`` (planned utility at dispatch,
#: actual − planned at completion), ``obs_relative`` (no absolute-time feature), ``reward_scale: 100`` (per-job
#: utilities are 0-100; with the o4a discipline the per-step reward then has mean ≈ 0.5 and sd ≈ 0.3 on the testbed)
V1_OVERRIDES = {"env": {"reward_credit": "dispatch", "obs_relative": True, "reward_scale": 100.0}}
ESTIMATION_MODES = ("exact", "table_mean")


# ============================================================================================ presets
@dataclass(frozen=True, slots=True)
class ServersConfig:
    """Edge servers by device type (``edge_types[k]`` × ``edge_counts[k]``), the cloud, the speed s."""

    edge_types: tuple = ("jetson_nano", "raspberry_pi_4b")
    edge_counts: tuple = (10, 10)
    cloud: bool = False
    speed: float = 1.0


@dataclass(frozen=True, slots=True)
class NetworkConfig:
    """Δ↑ = Δ↓ ranges in ms (uniform per job and server) and the cloud's processing-time factor (the paper gives
    neither for its simulations: our defaults)."""

    edge_delay_ms: tuple = (5.0, 50.0)
    cloud_delay_ms: tuple = (100.0, 200.0)
    cloud_time_factor: float = 0.5
    scale_delays: bool = False  # multiply every delay by workload.time_scale too (sizes and delays consistent)


#: the largest ``workload.num_jobs`` accepted: a bound on the episode's memory (measured: ~0.6 KB per job at
#: reset, so ~0.6 GB here); the Google 2011 summary table has 672,074 jobs
MAX_NUM_JOBS = 1_000_000


@dataclass(frozen=True, slots=True)
class WorkloadConfig:
    """Release times and job draws (the paper's §V-A; load calibration and simulation draws are ours).

    ``source``: ``google2011`` (task-level SUBMIT bursts of the Google 2011 window table, each job's tasks
    capped at ``max_burst``, a seeded random window of ``num_jobs`` tasks), ``bursty`` (compound Poisson with
    the trace's burst sizes) or ``poisson``. Times are rescaled so the mean rate is
    ``rate_per_s × load_scale``, or, with ``load`` set, ``load ×`` the servers' capacity in jobs/s
    (:func:`capacity_jobs_per_s`: offered work / capacity = ``load``; refused for a cluster without finite
    capacity, i.e. no edge server and an infinite cloud). ``window``: ``random`` (a seeded
    window per episode) or the index of the first trace job of a fixed window (a held-out window for
    evaluation). ``window_part``: ``[lo, hi]``, fractions of the trace's jobs (in submit order) that a random
    window must lie in entirely; ``[0, 1]`` (default) is the whole trace, and e.g. ``[0, 0.5]`` for training with
    ``[0.5, 1]`` for evaluation gives disjoint (held-out) windows. ``offline_fallback``: ``bursty`` (use the
    generator when the trace folder is absent; recorded in ``info["episode_metrics"]["workload_source"]``) or
    ``none`` (raise). An explicit ``trace_dir`` never falls back: a folder that does not exist is refused at
    ``make``, a folder without the table at ``reset``.
    ``google_table``: which derived Google 2011 table gives the releases: ``window`` (the first 19.3 h, with
    task counts) or ``summary`` (all 29 days, one task per job). ``num_jobs`` is at most
    :data:`MAX_NUM_JOBS`.
    """

    source: str = "google2011"
    num_jobs: int = 1000
    rate_per_s: float = 15.0
    load_scale: float = 1.0
    max_burst: int = 300
    offline_fallback: str = "bursty"
    utility_mix: tuple = ("linear", "aon", "sigmoid")
    aon_inclusive: bool = False
    min_fraction: float = 0.2
    time_scale: float = 1.0
    trace_dir: str | None = None
    window: Any = "random"  # google2011: "random" (seeded) or the index of the window's first trace job
    window_part: tuple = (0.0, 1.0)  # google2011, window "random": the part of the trace (fractions of its jobs)
    google_table: str = "window"  # google2011: "window" (first 19.3 h, task counts) or "summary" (29 days)
    load: float | None = None  # offered utilisation; replaces rate_per_s × load_scale when set


@dataclass(frozen=True, slots=True)
class EstimationConfig:
    """Estimation error bound δ (truth = estimate × U(1−δ, 1+δ)) and the conservative variant (plan with
    (1+δ)·estimates), as in the paper's §V-D.3."""

    delta: float = 0.0
    conservative: bool = False
    mode: str = "exact"  # "exact": estimates = the drawn times; "table_mean": Table I means per model and device


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """Per-server discipline and O4A's knobs (the paper's §IV-B and Algorithm 1; EDF's soft deadline is ours)."""

    discipline: str = "o4a"
    cloud: str = "infinite"
    eps: float = 0.02
    alpha: float | None = None
    beta: float = 0.8
    tentative_mode: str = "speed_consistent"
    fallback: str = "density"


@dataclass(frozen=True, slots=True)
class UEnvConfig:
    """Gym-side options (the Gymnasium mapping: one step per job release)."""

    allow_reject: bool = False
    max_edge_servers: int | None = None
    dispatch_latency_s: float = 0.0
    obs_estimates: bool = True
    reward_scale: float = 1.0
    mask: str = "all"
    do4a_k: int = 5
    reward_credit: str = "completion"  # "completion" (v0) or "dispatch": planned utility at dispatch + correction
    obs_relative: bool = False  # v1: estimates relative to the best row, no absolute-time / episode-length features


_SECTIONS = {
    "servers": ServersConfig,
    "network": NetworkConfig,
    "workload": WorkloadConfig,
    "estimation": EstimationConfig,
    "scheduler": SchedulerConfig,
    "env": UEnvConfig,
}


@dataclass(frozen=True, slots=True)
class UtilityPreset(PresetBase):
    """A validated EdgeUtility preset (one YAML file of ``envs_config/utility``)."""

    name: str
    family: str = "EdgeUtility"
    version: int = 0
    description: str = ""
    servers: ServersConfig = field(default_factory=ServersConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    estimation: EstimationConfig = field(default_factory=EstimationConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    env: UEnvConfig = field(default_factory=UEnvConfig)
    source_file: str = "<dict>"

    @property
    def num_edge_servers(self) -> int:
        """Total number of edge servers."""
        return int(sum(self.servers.edge_counts))

    def _sections(self) -> dict:
        return _SECTIONS

    def _from_dict(self, data: dict, source: str) -> UtilityPreset:
        return utility_preset_from_dict(data, source=source)

    def _override_base(self, section: str, base: dict, overrides: dict) -> dict:
        if section == "workload" and "load_scale" in overrides and "load" not in overrides:
            base["load"] = None  # an explicit rate multiplier replaces the preset's load
        if section == "workload" and "load" in overrides and "load_scale" not in overrides:
            base["load_scale"] = 1.0
        return base


def utility_preset_from_dict(data: dict, source: str = "<dict>") -> UtilityPreset:
    """Validate a preset mapping (as read from YAML) and build a :class:`UtilityPreset`."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a preset must be a mapping, got {type(data).__name__}")
    for key in data:
        if key not in _TOP and key not in _SECTIONS:
            raise ValueError(f"{source}: unknown key '{key}' (valid: {', '.join(list(_TOP) + list(_SECTIONS))})")
    raw = {}
    for sec, cls in _SECTIONS.items():
        sub = data.get(sec) or {}
        if not isinstance(sub, dict):
            _fail(source, sec, f"expected a mapping, got {sub!r}")
        valid = {f.name for f in dataclasses.fields(cls)}
        for key in sub:
            if key not in valid:
                _fail(source, f"{sec}.{key}", f"unknown key (valid: {', '.join(sorted(valid))})")
        raw[sec] = {**{f.name: getattr(cls(), f.name) for f in dataclasses.fields(cls)}, **sub}
    name = data.get("name")
    if not isinstance(name, str) or not name:
        _fail(source, "name", f"expected a non-empty string, got {name!r}")
    family = data.get("family", "EdgeUtility")
    if family != "EdgeUtility":
        _fail(source, "family", f"must be 'EdgeUtility', got {family!r}")
    s = raw["servers"]
    types = s["edge_types"]
    counts = s["edge_counts"]
    if not isinstance(types, list | tuple) or not types:
        _fail(source, "servers.edge_types", f"expected a non-empty list, got {types!r}")
    for t in types:
        _choice(source, "servers.edge_types", t, DEVICE_TYPES)
    if not isinstance(counts, list | tuple) or len(counts) != len(types):
        _fail(source, "servers.edge_counts", "expected one count per entry of servers.edge_types")
    counts = tuple(_num(source, "servers.edge_counts", c, lo=0, integer=True) for c in counts)
    cloud = _bool(source, "servers.cloud", s["cloud"])
    if sum(counts) == 0 and not cloud:
        _fail(source, "servers.edge_counts", "no edge server and no cloud")
    speed = _num(source, "servers.speed", s["speed"], lo=0, strict_lo=True)
    servers = ServersConfig(tuple(types), counts, cloud, speed)
    n = raw["network"]
    network = NetworkConfig(
        _range(source, "network.edge_delay_ms", n["edge_delay_ms"], lo=0),
        _range(source, "network.cloud_delay_ms", n["cloud_delay_ms"], lo=0),
        _num(source, "network.cloud_time_factor", n["cloud_time_factor"], lo=0, strict_lo=True),
        _bool(source, "network.scale_delays", n["scale_delays"]),
    )
    w = raw["workload"]
    mix = w["utility_mix"]
    if not isinstance(mix, list | tuple) or not mix:
        _fail(source, "workload.utility_mix", f"expected a non-empty list, got {mix!r}")
    for f in mix:
        _choice(source, "workload.utility_mix", f, ("linear", "aon", "sigmoid"))
    td = w["trace_dir"]
    if td is not None and not isinstance(td, str):
        _fail(source, "workload.trace_dir", f"expected a path or null, got {td!r}")
    if td is not None and not Path(td).expanduser().is_dir():  # explicit: an error, never a silent fallback
        _fail(source, "workload.trace_dir", f"no such directory: {td!r}")
    workload = WorkloadConfig(
        source=_choice(source, "workload.source", w["source"], ("google2011", "bursty", "poisson")),
        num_jobs=_num(source, "workload.num_jobs", w["num_jobs"], lo=1, hi=MAX_NUM_JOBS, integer=True),
        rate_per_s=_num(source, "workload.rate_per_s", w["rate_per_s"], lo=0, strict_lo=True),
        load_scale=_num(source, "workload.load_scale", w["load_scale"], lo=0, strict_lo=True),
        max_burst=_num(source, "workload.max_burst", w["max_burst"], lo=1, integer=True),
        offline_fallback=_choice(source, "workload.offline_fallback", w["offline_fallback"], ("bursty", "none")),
        utility_mix=tuple(mix),
        aon_inclusive=_bool(source, "workload.aon_inclusive", w["aon_inclusive"]),
        min_fraction=_num(source, "workload.min_fraction", w["min_fraction"], lo=0, hi=1, strict_lo=True),
        time_scale=_num(source, "workload.time_scale", w["time_scale"], lo=0, strict_lo=True),
        trace_dir=td,
        google_table=_choice(source, "workload.google_table", w["google_table"], ("window", "summary")),
        window=(
            "random" if w["window"] == "random" else _num(source, "workload.window", w["window"], lo=0, integer=True)
        ),
        window_part=_range(source, "workload.window_part", w["window_part"], lo=0, hi=1),
        load=None if w["load"] is None else _num(source, "workload.load", w["load"], lo=0, strict_lo=True, hi=100),
    )
    if workload.load is not None and workload.load_scale != 1.0:
        _fail(source, "workload.load", "give workload.load or workload.load_scale (a multiplier of rate_per_s), "
              "not both")
    e = raw["estimation"]
    estimation = EstimationConfig(
        _num(source, "estimation.delta", e["delta"], lo=0, hi=0.9),
        _bool(source, "estimation.conservative", e["conservative"]),
        _choice(source, "estimation.mode", e["mode"], ESTIMATION_MODES),
    )
    c = raw["scheduler"]
    alpha = c["alpha"]
    scheduler = SchedulerConfig(
        discipline=_choice(source, "scheduler.discipline", c["discipline"], DISCIPLINES),
        cloud=_choice(source, "scheduler.cloud", c["cloud"], ("infinite", "same")),
        eps=_num(source, "scheduler.eps", c["eps"], lo=0, hi=1),
        alpha=None if alpha is None else _num(source, "scheduler.alpha", alpha, lo=1),
        beta=_num(source, "scheduler.beta", c["beta"], lo=0, hi=1),
        tentative_mode=_choice(source, "scheduler.tentative_mode", c["tentative_mode"],
                               ("speed_consistent", "paper_literal")),
        fallback=_choice(source, "scheduler.fallback", c["fallback"], FALLBACKS),
    )
    if workload.load is not None and sum(counts) == 0 and not (cloud and scheduler.cloud == "same"):
        _fail(source, "workload.load", "is relative to the servers' finite capacity, and this cluster has none (no "
              "edge server; an infinite cloud, scheduler.cloud: infinite): give workload.rate_per_s instead")
    v = raw["env"]
    mes = v["max_edge_servers"]
    if mes is not None:
        mes = _num(source, "env.max_edge_servers", mes, lo=sum(counts), integer=True)
    env = UEnvConfig(
        allow_reject=_bool(source, "env.allow_reject", v["allow_reject"]),
        max_edge_servers=mes,
        dispatch_latency_s=_num(source, "env.dispatch_latency_s", v["dispatch_latency_s"], lo=0),
        obs_estimates=_bool(source, "env.obs_estimates", v["obs_estimates"]),
        reward_scale=_num(source, "env.reward_scale", v["reward_scale"], lo=0, strict_lo=True),
        mask=_choice(source, "env.mask", v["mask"], ("all", "do4a")),
        do4a_k=_num(source, "env.do4a_k", v["do4a_k"], lo=1, integer=True),
        reward_credit=_choice(source, "env.reward_credit", v["reward_credit"], ("completion", "dispatch")),
        obs_relative=_bool(source, "env.obs_relative", v["obs_relative"]),
    )
    return UtilityPreset(
        name=name,
        family="EdgeUtility",
        version=_num(source, "version", data.get("version", 0), lo=0, integer=True),
        description=str(data.get("description", "")),
        servers=servers,
        network=network,
        workload=workload,
        estimation=estimation,
        scheduler=scheduler,
        env=env,
        source_file=source,
    )


def list_utility_presets() -> list[str]:
    """Names of the shipped EdgeUtility presets (``envs_config/edge_utility/*.yaml``)."""
    return shipped_presets(KEY)


def load_utility_preset(name_or_path: str | Path) -> UtilityPreset:
    """Load a shipped preset by name (``"testbed"`` or ``"utility/testbed"``) or any YAML file by path."""
    name = name_or_path if Path(str(name_or_path)).suffix in (".yaml", ".yml") else str(name_or_path).removeprefix(
        "utility/"
    )
    data, src = read_preset_yaml(name, preset_dir(KEY), "EdgeUtility preset", list_utility_presets())
    return utility_preset_from_dict(data, source=src)




#: the family interface's name for :func:`load_utility_preset`
load_preset = load_utility_preset


def capacity_jobs_per_s(preset: UtilityPreset) -> float:
    """Servers' capacity in jobs/s: Σ over edge servers of 1 / (mean Table I time of the server's device over the
    9 models × ``time_scale`` / speed), plus a finite cloud's (``scheduler.cloud: same``: one processor at
    ``cloud_time_factor`` × the faster device's mean). An infinite cloud (``scheduler.cloud: infinite``) is left
    out: the load is then the edge's. Models are uniform over Table I, as in the job draws."""
    from .instance import DEVICE_TYPES, TABLE_I_MEAN_MS

    sv = preset.servers
    scale = preset.workload.time_scale / sv.speed
    mean_s = TABLE_I_MEAN_MS.mean(axis=0) / 1000.0 * scale  # (2,) per device type
    cap = sum(c / mean_s[DEVICE_TYPES.index(t)] for t, c in zip(sv.edge_types, sv.edge_counts, strict=True))
    if sv.cloud and preset.scheduler.cloud == "same":
        cloud_s = preset.network.cloud_time_factor * TABLE_I_MEAN_MS.min(axis=1).mean() / 1000.0 * scale
        cap += 1.0 / cloud_s
    return float(cap)


def release_rate_per_s(preset: UtilityPreset) -> float:
    """Mean release rate of an episode: ``load × capacity`` or ``rate_per_s × load_scale``."""
    w = preset.workload
    if w.load is not None:
        return float(w.load * capacity_jobs_per_s(preset))
    return float(w.rate_per_s * w.load_scale)


def offered_load(preset: UtilityPreset) -> float:
    """Offered utilisation of a preset: release rate / capacity (``workload.load`` when it is set), always finite.

    The capacity is that of the servers where jobs can queue (:func:`capacity_jobs_per_s`: the edge servers and a
    finite cloud); an infinite cloud never queues a job and is left out. A cloud-only cluster with an infinite
    cloud (no edge server, ``scheduler.cloud: infinite``) has no such server: every job starts on release, nothing
    is loaded, and the offered load is ``0.0`` by definition (``workload.load`` is refused there at validation)."""
    cap = capacity_jobs_per_s(preset)
    return release_rate_per_s(preset) / cap if cap > 0 else 0.0
