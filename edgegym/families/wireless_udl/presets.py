"""Preset schema of the ``WirelessUDL`` family: frozen dataclasses per section, validated eagerly.

A preset file (``envs_config/wireless_udl/<name>.yaml``) has the sections ``cluster``, ``jobs``, ``env`` and
``okita`` plus the top-level keys ``name``, ``family``, ``version`` and ``description``. An unknown key, a
wrong type or an out-of-range value raises ``ValueError`` naming the file and the key, e.g.
``envs_config/wireless_udl/tiny.yaml: key 'env.reward_scale': must be > 0, got -1``. Time unit: slots.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ...core.family import preset_dir, shipped_presets
from ...core.presets import TOP_KEYS as _TOP
from ...core.presets import PresetBase
from ...core.validation import boolean as _bool
from ...core.validation import choice as _choice
from ...core.validation import fail as _fail
from ...core.validation import number as _num
from ...core.validation import pair as _pair
from ...core.validation import read_preset_yaml

__all__ = [
    "DEFAULT_PRESET",
    "DISCIPLINES",
    "KEY",
    "ClusterConfig",
    "EnvConfig",
    "JobsConfig",
    "OkitaConfig",
    "UDLPreset",
    "load_preset",
    "preset_from_dict",
]

KEY = "wireless_udl"
DEFAULT_PRESET = "sim"

#: the ``-v1`` overrides (:attr:`Family.v1_overrides`): the commit mode's reward is already the job's exact cost
#: at its decision and v0's scale 1000 gives per-step mean ≈ −1.5, sd ≈ 0.6 on ``sim`` under ``okita-a``, so the
#: reward is unchanged; ``obs_relative`` (no absolute time / episode position), ``obs_rows`` (one feature row per
#: candidate plan, for the per-row policy), ``prune_ratio: 3`` (plans estimated above 3× the cheapest legal one are
#: masked: a one-worker plan's exponential latency cost reaches 1e18) and ``cost_clip: 10`` (features in [0, 10])
V1_OVERRIDES = {"env": {"obs_relative": True, "obs_rows": True, "prune_ratio": 3.0, "cost_clip": 10.0}}
DISCIPLINES = ("okita", "fifo", "drf")  # slot-level disciplines of the replan mode
LATENCY_KINDS = ("exp", "linear", "piecewise", "logistic", "mix")


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """Sites, their multi-resource capacities (one ``site_types`` row per site, drawn uniformly) and the
    symmetric per-MB link prices ``q`` (uniform per unordered pair, ``q^{rr} = 0``)."""

    sites: int = 50
    max_sites: int | None = None  # observation padding (None: = sites)
    resources: tuple = ("gpu", "vcpu", "ram_gb", "disk_gb")
    site_types: tuple = ((8, 64, 488, 1000), (16, 64, 732, 1000), (4, 64, 488, 1000))
    price_per_mb: tuple = (0.02, 0.08)


@dataclass(frozen=True, slots=True)
class JobsConfig:
    """Job count, arrivals (uniform integer slots in ``arrival_window``) and per-job draws (the paper's Sec. V-B)."""

    count: int = 100
    horizon_slots: int = 150  # T
    arrival_window: tuple = (0, 149)
    chunks_per_site: tuple = (10, 20)  # D_i^r
    chunk_mb: tuple = (20.0, 60.0)  # δ_i
    chunks_per_worker_slot: tuple = (5, 15)  # κ_i = ρ_i / E_i
    param_mb: tuple = (30.0, 575.0)  # π_i
    worker_demand: tuple = ((0, 4), (1, 10), (2, 32), (5, 10))  # m_i^k ranges, one per resource
    ps_demand: tuple = ((0, 0), (1, 10), (2, 32), (5, 10))  # n_i^k ranges
    latency_cost: str = "logistic"  # exp | linear | piecewise | logistic | mix (uniform over exp, linear, piecewise)
    tau: tuple = (20.0, 100.0)
    b: tuple = (50.0, 200.0)
    tau1: tuple = (20.0, 100.0)
    tau2: tuple = (300.0, 400.0)
    breakpoint_slots: tuple = (3, 5)
    exp_rate: float = 0.25
    logistic_b: tuple = (2968.3, 14841.3)  # logistic: the bound b, τe^{0.25·20} (midpoint c = ln(b/τ)/exp_rate)


@dataclass(frozen=True, slots=True)
class EnvConfig:
    """Gym-side options and execution model (see the env module's docstring)."""

    mode: str = "commit"  # commit (plan per job at arrival) | replan (slot-level discipline)
    discipline: str = "okita"  # replan mode: okita | fifo | drf
    replan_workers: bool = False  # replan + okita: the action picks the arriving job's worker rule (WORKER_RULES)
    fifo_workers: str = "uniform"  # FIFO's N_i: uniform (U{1..⌊0.5·A_i⌋}) | max (⌊0.5·A_i⌋, the range's top)
    reward_scale: float = 1000.0
    worker_counts: int = 8  # G: worker-count candidates per job (actions = 2·G)
    calendar_slots: int = 8  # H: calendar slots shown in the observation
    wait_max_slots: int = 30  # "wait" candidates starting later than this are masked (unless none else)
    cap_factor: int = 10  # hard cap on the run-off: cap_factor·T slots
    latency_offset: int = 1  # latency = t_last − a + offset
    sampling: str = "complete"  # complete (the paper's Alg 3 on M) | proportional (per-slot quota, a variant)
    record_schedule: bool = False  # keep the per-slot schedule log (tests, rendering)
    cost_clip: float = 100.0  # candidate cost features: cost / reward_scale clipped to this
    obs_relative: bool = False  # v1: no absolute-time / episode-position features; active jobs per site
    obs_rows: bool = False  # v1: candidate features row-major (one row per action) + relative cost, N_tent flag
    prune_ratio: float | None = None  # v1: mask candidates estimated > ratio × the cheapest legal one (None: off)


@dataclass(frozen=True, slots=True)
class OkitaConfig:
    """Okita's weights and readings of the paper's gaps (docs/families/wireless_udl.md)."""

    alpha: tuple = (1.0, 1.0)
    beta: tuple = (1.0, 1.0, 1.0)
    q_norm: str = "max"  # max (term in [0, 1]) | one (paper-literal)
    pa_tie: str = "le"  # le (paper: last tied PS site wins) | lt
    delay_rule: str = "max"  # Δ over blocking jobs: max | min | one
    priority_piecewise: str = "rec"  # rec (repaired) | paper_literal
    model_sampling: bool = True  # estimates model proportional sampling (false: OSF's window estimate, as before)


_SECTIONS = {"cluster": ClusterConfig, "jobs": JobsConfig, "env": EnvConfig, "okita": OkitaConfig}


@dataclass(frozen=True, slots=True)
class UDLPreset(PresetBase):
    """A validated WirelessUDL preset (one YAML file of ``envs_config/wireless_udl``)."""

    name: str
    family: str = "WirelessUDL"
    version: int = 0
    description: str = ""
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    jobs: JobsConfig = field(default_factory=JobsConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    okita: OkitaConfig = field(default_factory=OkitaConfig)
    source_file: str = "<dict>"

    @property
    def num_resources(self) -> int:
        return len(self.cluster.resources)

    @property
    def max_sites(self) -> int:
        return self.cluster.max_sites or self.cluster.sites

    @property
    def max_window_slots(self) -> int:
        """Longest possible window (one worker): ceil(max D_i / min κ_i)."""
        d_max = self.jobs.chunks_per_site[1] * self.cluster.sites
        return -(-d_max // self.jobs.chunks_per_worker_slot[0])

    @property
    def calendar_len(self) -> int:
        """Slots of the reservation calendar: the run-off cap plus one longest window."""
        return self.env.cap_factor * self.jobs.horizon_slots + self.max_window_slots + 1

    def _sections(self) -> dict:
        return _SECTIONS

    def _from_dict(self, data: dict, source: str) -> UDLPreset:
        return preset_from_dict(data, source=source)


def _ranges(src, key, v, k, lo=0):
    if not isinstance(v, list | tuple) or len(v) != k:
        _fail(src, key, f"expected {k} [low, high] pairs (one per resource), got {v!r}")
    return tuple(_pair(src, key, x, lo=lo, integer=True) for x in v)


def preset_from_dict(data: dict, source: str = "<dict>") -> UDLPreset:
    """Validate a preset mapping (as read from YAML) and build a :class:`UDLPreset`."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a preset must be a mapping, got {type(data).__name__}")
    for key in data:
        if key not in _TOP and key not in _SECTIONS:
            raise ValueError(f"{source}: unknown key '{key}' (valid: {', '.join(list(_TOP) + list(_SECTIONS))})")
    raw: dict[str, dict] = {}
    for sec, cls in _SECTIONS.items():
        sub = data.get(sec) or {}
        if not isinstance(sub, dict):
            _fail(source, sec, f"expected a mapping, got {sub!r}")
        valid = {f.name for f in dataclasses.fields(cls)}
        for key in sub:
            if key not in valid:
                _fail(source, f"{sec}.{key}", f"unknown key (valid: {', '.join(sorted(valid))})")
        raw[sec] = {**{f.name: getattr(cls(), f.name) for f in dataclasses.fields(cls)}, **sub}
    s = source
    c = raw["cluster"]
    sites = _num(s, "cluster.sites", c["sites"], lo=1, hi=1000, integer=True)
    max_sites = c["max_sites"]
    if max_sites is not None:
        max_sites = _num(s, "cluster.max_sites", max_sites, lo=sites, hi=1000, integer=True)
    res = c["resources"]
    if not isinstance(res, list | tuple) or not res or not all(isinstance(x, str) for x in res):
        _fail(s, "cluster.resources", f"expected a non-empty list of names, got {res!r}")
    K = len(res)
    types = c["site_types"]
    if not isinstance(types, list | tuple) or not types:
        _fail(s, "cluster.site_types", f"expected a non-empty list of capacity vectors, got {types!r}")
    site_types = []
    for row in types:
        if not isinstance(row, list | tuple) or len(row) != K:
            _fail(s, "cluster.site_types", f"each capacity vector needs {K} values ({', '.join(res)}), got {row!r}")
        site_types.append(tuple(_num(s, "cluster.site_types", x, lo=0) for x in row))
    cluster = ClusterConfig(
        sites=sites,
        max_sites=max_sites,
        resources=tuple(res),
        site_types=tuple(site_types),
        price_per_mb=_pair(s, "cluster.price_per_mb", c["price_per_mb"], lo=0),
    )
    j = raw["jobs"]
    T = _num(s, "jobs.horizon_slots", j["horizon_slots"], lo=1, hi=100000, integer=True)
    win = _pair(s, "jobs.arrival_window", j["arrival_window"], lo=0, hi=T - 1, integer=True)
    wd = _ranges(s, "jobs.worker_demand", j["worker_demand"], K)
    pd = _ranges(s, "jobs.ps_demand", j["ps_demand"], K)
    jobs = JobsConfig(
        count=_num(s, "jobs.count", j["count"], lo=1, hi=100000, integer=True),
        horizon_slots=T,
        arrival_window=win,
        chunks_per_site=_pair(s, "jobs.chunks_per_site", j["chunks_per_site"], lo=1, integer=True),
        chunk_mb=_pair(s, "jobs.chunk_mb", j["chunk_mb"], lo=0),
        chunks_per_worker_slot=_pair(s, "jobs.chunks_per_worker_slot", j["chunks_per_worker_slot"], lo=1,
                                     integer=True),
        param_mb=_pair(s, "jobs.param_mb", j["param_mb"], lo=0),
        worker_demand=wd,
        ps_demand=pd,
        latency_cost=_choice(s, "jobs.latency_cost", j["latency_cost"], LATENCY_KINDS),
        tau=_pair(s, "jobs.tau", j["tau"], lo=0),
        b=_pair(s, "jobs.b", j["b"], lo=0),
        tau1=_pair(s, "jobs.tau1", j["tau1"], lo=0),
        tau2=_pair(s, "jobs.tau2", j["tau2"], lo=0),
        breakpoint_slots=_pair(s, "jobs.breakpoint_slots", j["breakpoint_slots"], lo=1, integer=True),
        exp_rate=_num(s, "jobs.exp_rate", j["exp_rate"], lo=0, hi=5),
        logistic_b=_pair(s, "jobs.logistic_b", j["logistic_b"], lo=0),
    )
    if jobs.latency_cost == "logistic":
        if jobs.exp_rate <= 0:
            _fail(s, "jobs.exp_rate", "the logistic latency cost needs a rate > 0")
        if jobs.tau[0] <= 0:
            _fail(s, "jobs.tau", f"the logistic latency cost needs τ > 0, got {list(jobs.tau)}")
        if jobs.logistic_b[0] <= 0:
            _fail(s, "jobs.logistic_b", f"the logistic bound b must be > 0, got {list(jobs.logistic_b)}")
    # one worker and the PS of any job must fit the empty cluster whatever the site draw (Thm 1's
    # implicit assumption): every site type holds the largest worker and the largest PS (together if R = 1)
    for cap in site_types:
        w_ok = all(wd[k][1] <= cap[k] for k in range(K))
        p_ok = all(pd[k][1] <= cap[k] for k in range(K))
        both = all(wd[k][1] + pd[k][1] <= cap[k] for k in range(K))
        if not (w_ok and p_ok) or (sites == 1 and not both):
            _fail(s, "cluster.site_types", f"site type {list(cap)} cannot host the largest worker and PS demands")
    e = raw["env"]
    env = EnvConfig(
        mode=_choice(s, "env.mode", e["mode"], ("commit", "replan")),
        discipline=_choice(s, "env.discipline", e["discipline"], DISCIPLINES),
        fifo_workers=_choice(s, "env.fifo_workers", e["fifo_workers"], ("uniform", "max")),
        replan_workers=_bool(s, "env.replan_workers", e["replan_workers"]),
        reward_scale=_num(s, "env.reward_scale", e["reward_scale"], lo=0, strict_lo=True),
        worker_counts=_num(s, "env.worker_counts", e["worker_counts"], lo=1, hi=64, integer=True),
        calendar_slots=_num(s, "env.calendar_slots", e["calendar_slots"], lo=1, hi=256, integer=True),
        wait_max_slots=_num(s, "env.wait_max_slots", e["wait_max_slots"], lo=0, integer=True),
        cap_factor=_num(s, "env.cap_factor", e["cap_factor"], lo=1, hi=1000, integer=True),
        latency_offset=_choice(s, "env.latency_offset", e["latency_offset"], (0, 1)),
        sampling=_choice(s, "env.sampling", e["sampling"], ("proportional", "complete")),
        record_schedule=_bool(s, "env.record_schedule", e["record_schedule"]),
        cost_clip=_num(s, "env.cost_clip", e["cost_clip"], lo=0, strict_lo=True),
        obs_relative=_bool(s, "env.obs_relative", e["obs_relative"]),
        obs_rows=_bool(s, "env.obs_rows", e["obs_rows"]),
        prune_ratio=None if e["prune_ratio"] is None else _num(s, "env.prune_ratio", e["prune_ratio"], lo=1),
    )
    if env.replan_workers and (env.mode, env.discipline) != ("replan", "okita"):
        _fail(s, "env.replan_workers", f"the worker-rule action needs env.mode: replan and env.discipline: okita, "
                                       f"got mode {env.mode!r} and discipline {env.discipline!r}")
    o = raw["okita"]
    alpha = o["alpha"]
    beta = o["beta"]
    if not isinstance(alpha, list | tuple) or len(alpha) != 2:
        _fail(s, "okita.alpha", f"expected [α1, α2], got {alpha!r}")
    if not isinstance(beta, list | tuple) or len(beta) != 3:
        _fail(s, "okita.beta", f"expected [β1, β2, β3], got {beta!r}")
    okita = OkitaConfig(
        alpha=tuple(_num(s, "okita.alpha", x, lo=0) for x in alpha),
        beta=tuple(_num(s, "okita.beta", x, lo=0) for x in beta),
        q_norm=_choice(s, "okita.q_norm", o["q_norm"], ("max", "one")),
        pa_tie=_choice(s, "okita.pa_tie", o["pa_tie"], ("le", "lt")),
        delay_rule=_choice(s, "okita.delay_rule", o["delay_rule"], ("max", "min", "one")),
        priority_piecewise=_choice(s, "okita.priority_piecewise", o["priority_piecewise"], ("rec", "paper_literal")),
        model_sampling=_bool(s, "okita.model_sampling", o["model_sampling"]),
    )
    name = data.get("name", "custom")
    if not isinstance(name, str) or not name:
        _fail(s, "name", f"expected a non-empty string, got {name!r}")
    family = data.get("family", "WirelessUDL")
    if family != "WirelessUDL":
        _fail(s, "family", f"must be WirelessUDL, got {family!r}")
    version = _num(s, "version", data.get("version", 0), lo=0, integer=True)
    desc = data.get("description", "")
    if not isinstance(desc, str):
        _fail(s, "description", f"expected a string, got {desc!r}")
    return UDLPreset(name=name, family=family, version=version, description=desc.strip(), cluster=cluster,
                     jobs=jobs, env=env, okita=okita, source_file=source)


def search_overrides(env: dict) -> dict:
    """The ``env`` keys a per-step search adds to a policy's ``env`` section (:attr:`Family.search_overrides`):
    in Okita's replan mode, the per-arrival worker rule (``replan_workers``; its action 0 is Okita's own choice),
    since the replan mode's action is otherwise a no-op; nothing in the commit mode (its plans are discrete)."""
    return {"replan_workers": True} if env.get("mode") == "replan" and env.get("discipline", "okita") == "okita" else {}


def load_preset(name_or_path: str | Path = DEFAULT_PRESET) -> UDLPreset:
    """A shipped preset by name (``envs_config/wireless_udl/<name>.yaml``) or any YAML file by path."""
    if isinstance(name_or_path, UDLPreset):
        return name_or_path
    data, src = read_preset_yaml(name_or_path, preset_dir(KEY), KEY, shipped_presets(KEY))
    return preset_from_dict(data, source=src)
