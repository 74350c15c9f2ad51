"""HeteroML presets: YAML files in ``envs_config/hetero_ml/`` -> validated, frozen configuration objects.

A preset has the top-level keys ``name``, ``family``, ``version``, ``description`` and four sections:
``cluster`` (servers, types, architecture, capacity calibration), ``workload`` (the job generator),
``env`` (reward, decision time, action grid, baseline disciplines) and ``aonline`` (the reference policy's
parameters). Every key is checked eagerly: an unknown key, a wrong type or an out-of-range value raises
:class:`ValueError` naming the file and the key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from edgegym.core.family import preset_dir, shipped_presets
from edgegym.core.presets import TOP_KEYS as _TOP
from edgegym.core.presets import PresetBase
from edgegym.core.validation import boolean, choice, fail, number, pair, read_preset_yaml

__all__ = [
    "AOnlineConfig",
    "ClusterConfig",
    "EnvConfig",
    "HeteroPreset",
    "WorkloadConfig",
    "load_preset",
    "preset_from_dict",
    "SERVER_SHAPES",
    "WORKER_TYPES",
    "PS_TYPES",
    "DISCIPLINES",
]

KEY = "hetero_ml"
DEFAULT_PRESET = "ps"

#: the ``-v1`` overrides (:attr:`Family.v1_overrides`): the reward is already credited at the decision (a
#: committed job's completion is known), so ``obs_relative`` (no absolute-time / episode-position features),
#: ``obs_actions`` (one feature row per grid action: completion estimate, wait, duration, resource share, for the
#: per-row policy) and ``reward_scale: 1e5`` (weighted flow time in 1e5 weight-slots: per-step mean ≈ −0.7 under
#: ``earliest``)
V1_OVERRIDES = {"env": {"obs_relative": True, "obs_actions": True, "reward_scale": 1.0e5}}

#: EC2 GPU server shapes: GPUs, vCPU, memory GiB, network Gbps
SERVER_SHAPES: dict[str, tuple[float, float, float, float]] = {
    "p3.2xlarge": (1, 8, 61, 10),
    "p3.8xlarge": (4, 32, 244, 10),
    "p3.16xlarge": (8, 64, 488, 25),
    "p2.xlarge": (1, 4, 61, 1.25),
    "p2.8xlarge": (8, 32, 488, 10),
    "p2.16xlarge": (16, 64, 732, 20),
    "g3.4xlarge": (1, 16, 122, 10),
    "g3.8xlarge": (2, 32, 244, 10),
    "g3.16xlarge": (4, 64, 488, 20),
}
#: synthetic worker types (table; * = not an EC2 type): GPU, vCPU, memory GiB, b_m Gbps
WORKER_TYPES: dict[str, tuple[float, float, float, float]] = {
    "p2.xlarge": (1, 4, 61, 1.25),
    "p2.2xlarge": (2, 8, 122, 2.5),
    "p3.2xlarge": (1, 8, 61, 5),
    "p3.4xlarge": (2, 16, 122, 5),
    "small": (1, 1, 8, 0.1),
    "g3.4xlarge-like": (1, 16, 122, 2),
    "g3.8xlarge-like": (2, 16, 244, 3),
    "quad": (4, 16, 244, 5),
}
_PS_VCPU = (1, 2, 2, 4, 4, 8, 8, 12, 16, 16)
_PS_BW = (5, 5, 8, 8, 10, 10, 12, 15, 18, 20)
#: PS types: 0 GPU, vCPU, 4 GiB per vCPU, B_p Gbps
PS_TYPES: dict[str, tuple[float, float, float, float]] = {
    f"ps{i + 1}": (0, c, 4 * c, b) for i, (c, b) in enumerate(zip(_PS_VCPU, _PS_BW, strict=True))
}
DISCIPLINES = ("reservation", "drf", "antman", "tiresias", "tiresias_las")


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """Servers and types. Capacity, two alternative calibrations (per resource r the server shapes are
    scaled, GPU and vCPU then rounded to integers >= 1):

    * ``kappa`` (the paper-literal reading): Σ_h C^r_h = kappa · calibration_jobs · mean_j dem^r_j, the per-slot
      demand of the jobs' ideal configurations all at once;
    * ``load`` (the calibrated reading): Σ_h C^r_h = calibration_jobs · mean_j (dem^r_j d*_j) / (load · T), the
      ideal resource-time of the jobs spread over the horizon T, so that the offered load
      Σ_j dem^r_j d*_j / (Σ_h C^r_h · T) equals ``load`` when J = calibration_jobs.

    Set one and leave the other null; both null keeps the raw EC2 shapes."""

    arch: str = "ps"
    num_servers: int = 150
    server_shapes: tuple[str, ...] = ("p3.16xlarge", "p2.16xlarge", "g3.16xlarge")
    worker_types: tuple[str, ...] = tuple(WORKER_TYPES)
    ps_types: tuple[str, ...] = tuple(PS_TYPES)
    kappa: float | None = 0.35
    calibration_jobs: int = 150
    load: float | None = None  # offered load over the horizon (alternative to kappa)


@dataclass(frozen=True, slots=True)
class WorkloadConfig:
    """Job generator: uniform draws on the paper's ranges; arrivals uniform on {1..horizon}."""

    num_jobs: int = 150
    horizon_slots: int = 150
    weight: tuple[float, float] = (200.0, 5000.0)
    epochs: tuple[int, int] = (50, 100)
    chunks: tuple[int, int] = (5, 50)
    batches: tuple[int, int] = (10, 50)
    minibatch_time_slots: tuple[float, float] = (0.001, 0.05)
    ps_update_ms: tuple[float, float] = (10.0, 100.0)
    ra_update_ms: tuple[float, float] = (10.0, 100.0)
    grad_size_mb: tuple[float, float] = (30.0, 575.0)
    weights: str = "uniform"  # or "proportional": w_j ∝ ideal resource-time (the paper's assumption (A1))
    # v_jm: "independent" (i.i.d. per (j, m) on minibatch_time_slots, the literal reading) or "by_type":
    # v_jm = v_j · g_m^(-gpu_speedup_exponent) · u_jm, v_j on minibatch_time_slots (one GPU), g_m the type's GPUs,
    # u_jm ~ U[1 - type_jitter, 1 + type_jitter]
    minibatch_model: str = "independent"
    gpu_speedup_exponent: float = 0.5849625007211562  # log2(1.5): 15 ms on one GPU, 10 ms on two (paper Sec. 1)
    type_jitter: float = 0.1


@dataclass(frozen=True, slots=True)
class EnvConfig:
    """Env knobs."""

    reward: str = "flow"  # "flow": r = -w_j(c_j - a_j)/Z ; "completion": r = -w_j c_j / Z
    reward_scale: float | None = None  # Z; null = 5000 * horizon_slots
    decision_time: str = "arrival"  # or "boundary" (next tau_i >= a_j)
    discipline: str = "reservation"  # slot-driver baselines: drf, antman, tiresias, tiresias_las
    worker_fractions: tuple[float, ...] = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1.0)
    delays: tuple[int, ...] = (0, 4, 16)
    max_servers: int | None = None  # observation padding; default = num_servers
    price_F: float = 10.0  # F of the placement price lambda = 2 T H R F + 1
    preempt_overhead_slots: float = 0.25  # o_pre
    antman_threshold_slots: int = 2  # Theta
    las_threshold_gpu_slots: float = 3200.0 / 3600.0  # Tiresias-L queue threshold, 3200 GPU-s in slots
    fifo_workers: tuple[int, int] = (1, 30)  # FIFO's N ~ U{lo..hi}
    obs_relative: bool = False  # v1: no absolute-time / episode-position features (jobs in system per server)
    obs_actions: bool = False  # v1: one feature row per grid action (its completion estimate, wait, cost, ...)


@dataclass(frozen=True, slots=True)
class AOnlineConfig:
    """A_online parameters."""

    alpha: int = 4
    F: float = 10.0
    lambda_override: float | None = None
    weight_scale: float = 1.0  # s_w
    tie_break: str = "earliest_completion"  # or "paper_order"
    tau: str = "paper"  # tau_i = 2^(i-1) ; "hall": 2^i
    horizon_cap: int = 2**22


@dataclass(frozen=True, slots=True)
class HeteroPreset(PresetBase):
    """A whole HeteroML preset."""

    name: str
    family: str = "HeteroML"
    version: int = 0
    description: str = ""
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    aonline: AOnlineConfig = field(default_factory=AOnlineConfig)
    source_file: str = "<dict>"

    @property
    def reward_scale(self) -> float:
        z = self.env.reward_scale
        return float(z) if z is not None else 5000.0 * self.workload.horizon_slots

    def _sections(self) -> dict:
        return _SECTIONS

    def _override_base(self, section: str, base: dict, overrides: dict) -> dict:
        """``cluster.kappa`` and ``cluster.load`` are alternatives: overriding one drops the other."""
        if section == "cluster":
            for a, b in (("kappa", "load"), ("load", "kappa")):
                if overrides.get(a) is not None and b not in overrides:
                    base = {**base, b: None}
        return base

    def _from_dict(self, data: dict, source: str) -> HeteroPreset:
        return preset_from_dict(data, source=source)


_SECTIONS = {"cluster": ClusterConfig, "workload": WorkloadConfig, "env": EnvConfig, "aonline": AOnlineConfig}


def to_dict(p: HeteroPreset) -> dict:
    """The preset as a plain mapping (the inverse of :func:`preset_from_dict`); ``p.to_dict()``."""
    return p.to_dict()


def _names(src, key, v, table):
    if not isinstance(v, list | tuple) or not v:
        fail(src, key, f"expected a non-empty list of names, got {v!r}")
    for x in v:
        if x not in table:
            fail(src, key, f"unknown name {x!r} (valid: {', '.join(table)})")
    return tuple(v)


def _section(data: dict, sec: str, src: str) -> dict:
    raw = data.get(sec, {}) or {}
    if not isinstance(raw, dict):
        fail(src, sec, f"expected a mapping, got {raw!r}")
    valid = {f.name for f in dataclasses.fields(_SECTIONS[sec])}
    for k in raw:
        if k not in valid:
            fail(src, f"{sec}.{k}", f"unknown key (valid: {', '.join(sorted(valid))})")
    return raw


def preset_from_dict(data: dict, source: str = "<dict>") -> HeteroPreset:
    """Validate a preset mapping (as read from YAML)."""
    src = source
    if not isinstance(data, dict):
        raise ValueError(f"{src}: expected a mapping at the top level, got {type(data).__name__}")
    for k in data:
        if k not in _TOP and k not in _SECTIONS:
            fail(src, k, f"unknown key (valid: {', '.join(_TOP + tuple(_SECTIONS))})")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        fail(src, "name", f"expected a non-empty string, got {name!r}")
    family = data.get("family", "HeteroML")
    if family != "HeteroML":
        fail(src, "family", f"must be HeteroML, got {family!r}")
    version = number(src, "version", data.get("version", 0), lo=0, integer=True)
    desc = data.get("description", "")
    if not isinstance(desc, str):
        fail(src, "description", f"expected a string, got {desc!r}")

    c = _section(data, "cluster", src)
    d = ClusterConfig()
    load = c.get("load", d.load)
    kappa = c.get("kappa", None if load is not None else d.kappa)
    if kappa is not None and load is not None:
        fail(src, "cluster.load", "cluster.kappa and cluster.load are alternative calibrations: set the other to null")
    cluster = ClusterConfig(
        arch=choice(src, "cluster.arch", c.get("arch", d.arch), ("ps", "ra")),
        num_servers=number(src, "cluster.num_servers", c.get("num_servers", d.num_servers), lo=1, hi=4096, integer=True),
        server_shapes=_names(src, "cluster.server_shapes", c.get("server_shapes", d.server_shapes), SERVER_SHAPES),
        worker_types=_names(src, "cluster.worker_types", c.get("worker_types", d.worker_types), WORKER_TYPES),
        ps_types=_names(src, "cluster.ps_types", c.get("ps_types", d.ps_types), PS_TYPES),
        kappa=None if kappa is None else number(src, "cluster.kappa", kappa, lo=0, strict_lo=True, hi=100),
        calibration_jobs=number(
            src, "cluster.calibration_jobs", c.get("calibration_jobs", d.calibration_jobs), lo=1, integer=True
        ),
        load=None if load is None else number(src, "cluster.load", load, lo=0, strict_lo=True, hi=1000),
    )

    w = _section(data, "workload", src)
    d = WorkloadConfig()

    def rng_(k, lo, integer=False, hi=None):
        return pair(src, f"workload.{k}", w.get(k, getattr(d, k)), lo=lo, hi=hi, integer=integer)

    workload = WorkloadConfig(
        num_jobs=number(src, "workload.num_jobs", w.get("num_jobs", d.num_jobs), lo=1, hi=100000, integer=True),
        horizon_slots=number(
            src, "workload.horizon_slots", w.get("horizon_slots", d.horizon_slots), lo=1, hi=100000, integer=True
        ),
        weight=rng_("weight", 1e-9),
        epochs=rng_("epochs", 1, integer=True),
        chunks=rng_("chunks", 1, integer=True, hi=1000),
        batches=rng_("batches", 1, integer=True),
        minibatch_time_slots=rng_("minibatch_time_slots", 1e-12),
        ps_update_ms=rng_("ps_update_ms", 0),
        ra_update_ms=rng_("ra_update_ms", 0),
        grad_size_mb=rng_("grad_size_mb", 0),
        weights=choice(src, "workload.weights", w.get("weights", d.weights), ("uniform", "proportional")),
        minibatch_model=choice(
            src, "workload.minibatch_model", w.get("minibatch_model", d.minibatch_model), ("independent", "by_type")
        ),
        gpu_speedup_exponent=number(
            src, "workload.gpu_speedup_exponent", w.get("gpu_speedup_exponent", d.gpu_speedup_exponent), lo=0, hi=1
        ),
        type_jitter=number(src, "workload.type_jitter", w.get("type_jitter", d.type_jitter), lo=0, hi=0.9),
    )

    e = _section(data, "env", src)
    d = EnvConfig()
    rs = e.get("reward_scale", d.reward_scale)
    fr = e.get("worker_fractions", list(d.worker_fractions))
    if not isinstance(fr, list | tuple) or not fr:
        fail(src, "env.worker_fractions", f"expected a non-empty list, got {fr!r}")
    fr = tuple(number(src, "env.worker_fractions", x, lo=0, strict_lo=True, hi=1) for x in fr)
    dl = e.get("delays", list(d.delays))
    if not isinstance(dl, list | tuple) or not dl:
        fail(src, "env.delays", f"expected a non-empty list, got {dl!r}")
    dl = tuple(number(src, "env.delays", x, lo=0, integer=True) for x in dl)
    ms = e.get("max_servers", d.max_servers)
    env = EnvConfig(
        reward=choice(src, "env.reward", e.get("reward", d.reward), ("flow", "completion")),
        reward_scale=None if rs is None else number(src, "env.reward_scale", rs, lo=0, strict_lo=True),
        decision_time=choice(src, "env.decision_time", e.get("decision_time", d.decision_time), ("arrival", "boundary")),
        discipline=choice(src, "env.discipline", e.get("discipline", d.discipline), DISCIPLINES),
        worker_fractions=fr,
        delays=dl,
        max_servers=None if ms is None else number(src, "env.max_servers", ms, lo=cluster.num_servers, integer=True),
        price_F=number(src, "env.price_F", e.get("price_F", d.price_F), lo=1),
        preempt_overhead_slots=number(
            src, "env.preempt_overhead_slots", e.get("preempt_overhead_slots", d.preempt_overhead_slots), lo=0, hi=1
        ),
        antman_threshold_slots=number(
            src, "env.antman_threshold_slots", e.get("antman_threshold_slots", d.antman_threshold_slots), lo=0,
            integer=True,
        ),
        las_threshold_gpu_slots=number(
            src, "env.las_threshold_gpu_slots", e.get("las_threshold_gpu_slots", d.las_threshold_gpu_slots), lo=0
        ),
        fifo_workers=pair(src, "env.fifo_workers", e.get("fifo_workers", d.fifo_workers), lo=1, integer=True),
        obs_relative=boolean(src, "env.obs_relative", e.get("obs_relative", d.obs_relative)),
        obs_actions=boolean(src, "env.obs_actions", e.get("obs_actions", d.obs_actions)),
    )

    a = _section(data, "aonline", src)
    d = AOnlineConfig()
    lo_ = a.get("lambda_override", d.lambda_override)
    aon = AOnlineConfig(
        alpha=number(src, "aonline.alpha", a.get("alpha", d.alpha), lo=1, hi=1000, integer=True),
        F=number(src, "aonline.F", a.get("F", d.F), lo=1),
        lambda_override=None if lo_ is None else number(src, "aonline.lambda_override", lo_, lo=1, strict_lo=True),
        weight_scale=number(src, "aonline.weight_scale", a.get("weight_scale", d.weight_scale), lo=0, strict_lo=True),
        tie_break=choice(
            src, "aonline.tie_break", a.get("tie_break", d.tie_break), ("earliest_completion", "paper_order")
        ),
        tau=choice(src, "aonline.tau", a.get("tau", d.tau), ("paper", "hall")),
        horizon_cap=number(src, "aonline.horizon_cap", a.get("horizon_cap", d.horizon_cap), lo=2, integer=True),
    )
    return HeteroPreset(
        name=name, family=family, version=version, description=desc, cluster=cluster, workload=workload, env=env,
        aonline=aon, source_file=src,
    )


def load_preset(name_or_path: str | Path = DEFAULT_PRESET) -> HeteroPreset:
    """A shipped preset by name (``envs_config/hetero_ml/<name>.yaml``) or any YAML file by path."""
    if isinstance(name_or_path, HeteroPreset):
        return name_or_path
    data, src = read_preset_yaml(name_or_path, preset_dir(KEY), KEY, shipped_presets(KEY))
    return preset_from_dict(data, source=src)
