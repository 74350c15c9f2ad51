"""YAML presets -> validated, frozen configuration objects.

A preset file (``envs_config/<name>.yaml``) has the sections ``cluster``, ``workload``, ``job_model`` and
``env`` plus the top-level keys ``name``, ``version``, ``family`` and ``description``. Every key is checked
eagerly: an unknown key or an out-of-range value raises :class:`ValueError` naming the key and the file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.family import preset_dir, shipped_presets
from ...core.presets import TOP_KEYS as _TOP
from ...core.presets import PresetBase
from ...core.validation import fail as _fail
from ...core.validation import number as _num
from ...core.validation import pair as _range
from ...core.validation import read_preset_yaml

__all__ = [
    "BaselinesConfig",
    "ClusterConfig",
    "EnvConfig",
    "JobModelConfig",
    "Preset",
    "WorkloadConfig",
    "discipline_kwargs",
    "list_presets",
    "load_preset",
    "preset_from_dict",
]

ACTION_MODES = ("server_proportions", "cloud_split", "cloud_fraction")
GANG_SIZES = ("chunks", "trace_gpus")
#: hours per unit of the m_j reading (``job_model.minibatch_time_unit``)
TIME_UNITS_H = {"hour": 1.0, "minute": 1.0 / 60.0, "second": 1.0 / 3600.0}
DISCIPLINES = ("paper", "srtf", "tiresias_l", "batchsche")
#: the largest ``workload.num_jobs`` accepted: a bound on the episode's memory (measured: ~2.4 KB per job at
#: reset, so ~0.5 GB here, plus what the simulator keeps per placed job); the whole Philly trace is 82,247 jobs
MAX_NUM_JOBS = 200_000
WORKLOAD_SOURCES = ("synthetic", "philly", "itp", "google2011", "csv", "inline")


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """Edge-cloud hardware. Lists give per-server values; a scalar applies to every server.

    ``workers_per_server``: int, list of ints, or ``"philly"`` (sampled per server from {2, 4, 8}).
    ``worker_types``: explicit type of every worker (flattened in server order), or None (uniform draw).
    ``num_worker_types``/``num_ps_types``: int or ``[lo, hi]`` (drawn once per cluster).
    ``worker_type_bandwidth_mbps``: list (one per type) or ``[lo, hi]`` range with ``bandwidth_range: true``.
    """

    num_edge_servers: int = 2
    workers_per_server: Any = 1
    ps_per_server: Any = None  # default: = workers_per_server (the trace has no CPU counts)
    num_worker_types: Any = 1
    num_ps_types: Any = 1
    worker_types: tuple | None = None
    ps_types: tuple | None = None
    worker_type_bandwidth_mbps: tuple = (1000.0,)
    bandwidth_range: bool = False
    cloud: bool = True


@dataclass(frozen=True, slots=True)
class WorkloadConfig:
    """Where the jobs come from and how many (Wang et al., "Preemptive Scheduling for Distributed Machine Learning
    Jobs in Edge-Cloud Networks", IEEE JSAC 2022, §V-A: "scaled" Philly submission times).

    ``source``: ``synthetic`` (Philly-calibrated, the embedded default), a trace (``philly``, ``itp``,
    ``google2011``, ``csv`` with ``path``), or ``inline`` (``jobs`` listed in the preset, for tests).
    ``window``: ``"random"`` (a seeded random window of ``num_jobs`` consecutive trace jobs) or a start index.
    ``horizon_slots``: the arrivals of the window are rescaled to span ``[0, horizon_slots]``.
    ``load``: offered edge utilisation instead of a horizon: the arrivals are rescaled to span
    ``H = Σ_j D_j p0_j / (W · load)`` slots, the episode's edge work (chunk time at edge speed, the
    ``env.speed`` included) over the W edge workers' capacity (see :func:`~.instance.build_jobs`). Give
    ``load`` or ``horizon_slots``, not both.
    """

    source: str = "synthetic"
    num_jobs: int = 30
    horizon_slots: float | None = 100.0
    load: float | None = None
    window: Any = "random"
    path: str | None = None
    trace_cluster: str | None = None
    jobs: tuple = ()
    columns: tuple = ()  # source csv: ((canonical, column in the file), ...), as load_csv(columns=...)
    time_unit: str = "s"  # source csv: unit of the file's time columns, as load_csv(time_unit=...)


@dataclass(frozen=True, slots=True)
class JobModelConfig:
    """Ranges from which fields a trace lacks are sampled (Wang et al. (JSAC 2022), §V-A; uniform draws).

    ``minibatch_time`` is the m_j range read in ``minibatch_time_unit`` (``hour``: the paper's text,
    "m_j ∈ [0.001, 0.05] hour"; ``minute``/``second``: other readings). A YAML file may give the legacy key
    ``minibatch_time_h`` (hours) instead; :attr:`minibatch_time_h` is the range in hours either way.
    """

    epochs: tuple = (20, 60)
    minibatch_time: tuple = (0.001, 0.05)
    minibatch_time_unit: str = "hour"
    ps_update_ms: tuple = (10.0, 100.0)
    grad_size_mb: tuple = (30.0, 575.0)
    edge_upload_delay_slots: tuple = (1, 4)
    cloud_upload_delay_slots: tuple = (10, 15)

    @property
    def minibatch_time_h(self) -> tuple:
        """The m_j range in hours."""
        f = TIME_UNITS_H[self.minibatch_time_unit]
        return (self.minibatch_time[0] * f, self.minibatch_time[1] * f)


@dataclass(frozen=True, slots=True)
class BaselinesConfig:
    """Knobs of the paper's job-level baselines (``env.discipline`` ≠ ``paper``; §V-A "Baselines").

    ``gang_size``: workers a job of SRTF / Tiresias-L holds: ``chunks`` = min(D_j, #qualified edge workers)
    or ``trace_gpus`` = min(trace GPU count, D_j, #qualified) (the paper's "worker requirement").
    ``tiresias_thresholds``: attained-service thresholds in worker-slots (``null``: one threshold,
    ``tiresias_theta1_factor`` × the median job work). ``tiresias_starvation_kappa``: ``null`` = off.
    ``batchsche_max_interval_slots``: cap on BatchSche's doubling window (``null``: pure doubling).
    """

    gang_size: str = "chunks"
    tiresias_thresholds: tuple | None = None
    tiresias_theta1_factor: float = 0.5
    tiresias_starvation_kappa: float | None = None
    batchsche_max_interval_slots: float | None = None


@dataclass(frozen=True, slots=True)
class EnvConfig:
    """Env knobs (the Gymnasium mapping: one step per job arrival)."""

    action_mode: str = "server_proportions"
    discipline: str = "paper"
    reward_scale: float = 1000.0
    speed: float = 1.0
    slotted: bool = False
    use_cloud: bool = True
    max_edge_servers: int | None = None  # observation padding; default = num_edge_servers
    max_chunks: int = 115  # D_max of the cloud_split action space (Table II)
    max_types: int = 10  # one-hot width of worker/PS types in the observation
    obs_relative: bool = False  # v1: no absolute-time feature; jobs in system relative to the worker count


@dataclass(frozen=True, slots=True)
class Preset(PresetBase):
    """A whole env preset: the id it is registered under and its four sections."""

    name: str
    family: str = "EdgeCloudML"
    version: int = 0
    description: str = ""
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    job_model: JobModelConfig = field(default_factory=JobModelConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    baselines: BaselinesConfig = field(default_factory=BaselinesConfig)
    source_file: str = "<dict>"

    def _sections(self) -> dict:
        return _SECTIONS

    def _from_dict(self, data: dict, source: str) -> Preset:
        return preset_from_dict(data, source=source)

    def _override_base(self, section: str, base: dict, overrides: dict) -> dict:
        # an override of one of two alternative keys replaces the other one
        for new, old in _ALTERNATIVES.get(section, ()):
            if any(k in overrides for k in new) and not any(k in overrides for k in old):
                for k in old:
                    base.pop(k, None)
        return base

    def to_dict(self) -> dict:
        """The preset as a plain mapping (the inverse of :func:`preset_from_dict`)."""
        out = PresetBase.to_dict(self)
        jm = out["job_model"]
        if jm["minibatch_time_unit"] == "hour":  # the legacy spelling: literal presets round-trip unchanged
            jm["minibatch_time_h"] = jm.pop("minibatch_time")
            del jm["minibatch_time_unit"]
        if out["workload"]["load"] is None:
            del out["workload"]["load"]
        return out


_SECTIONS = {
    "cluster": ClusterConfig,
    "workload": WorkloadConfig,
    "job_model": JobModelConfig,
    "env": EnvConfig,
    "baselines": BaselinesConfig,
}
#: per section: pairs of mutually exclusive key groups (an override of one drops the other)
_ALTERNATIVES = {
    "workload": ((("horizon_slots",), ("load",)), (("load",), ("horizon_slots",))),
    "job_model": (
        (("minibatch_time_h",), ("minibatch_time", "minibatch_time_unit")),
        (("minibatch_time", "minibatch_time_unit"), ("minibatch_time_h",)),
    ),
}
_LEGACY_KEYS = {"job_model": {"minibatch_time_h"}}


def _int_or_list(src, key, v, S, lo=0):
    if isinstance(v, list | tuple):
        if len(v) != S:
            _fail(src, key, f"has {len(v)} entries, expected one per edge server ({S})")
        return tuple(_num(src, key, x, lo=lo, integer=True) for x in v)
    return _num(src, key, v, lo=lo, integer=True)


def _check_cluster(c: dict, src: str) -> ClusterConfig:
    k = "cluster."
    S = _num(src, k + "num_edge_servers", c.get("num_edge_servers", 2), lo=0, integer=True)
    wps = c.get("workers_per_server", 1)
    wps = wps if wps == "philly" else _int_or_list(src, k + "workers_per_server", wps, S)
    pps = c.get("ps_per_server")
    pps = None if pps is None else _int_or_list(src, k + "ps_per_server", pps, S)
    types = {}
    for name in ("num_worker_types", "num_ps_types"):
        v = c.get(name, 1)
        types[name] = (
            _range(src, k + name, v, lo=1, hi=64, integer=True)
            if isinstance(v, list | tuple)
            else _num(src, k + name, v, lo=1, hi=64, integer=True)
        )
    bw_range = c.get("bandwidth_range", False)
    if not isinstance(bw_range, bool):
        _fail(src, k + "bandwidth_range", f"expected true/false, got {bw_range!r}")
    bw = c.get("worker_type_bandwidth_mbps", [1000.0])
    if bw_range:
        bw = _range(src, k + "worker_type_bandwidth_mbps", bw, lo=1e-6)
    else:
        if not isinstance(bw, list | tuple) or not bw:
            _fail(src, k + "worker_type_bandwidth_mbps", f"expected a list of bandwidths, got {bw!r}")
        bw = tuple(_num(src, k + "worker_type_bandwidth_mbps", x, lo=0, strict_lo=True) for x in bw)
        nwt = types["num_worker_types"]
        if isinstance(nwt, int) and len(bw) != nwt:
            _fail(src, k + "worker_type_bandwidth_mbps", f"has {len(bw)} entries, num_worker_types is {nwt}")
    explicit = {}
    for name in ("worker_types", "ps_types"):
        v = c.get(name)
        if v is not None:
            if not isinstance(v, list | tuple):
                _fail(src, k + name, f"expected a list of type indices, got {v!r}")
            explicit[name] = tuple(_num(src, k + name, x, lo=0, integer=True) for x in v)
        else:
            explicit[name] = None
    cloud = c.get("cloud", True)
    if not isinstance(cloud, bool):
        _fail(src, k + "cloud", f"expected true/false, got {cloud!r}")
    return ClusterConfig(
        num_edge_servers=S,
        workers_per_server=wps,
        ps_per_server=pps,
        num_worker_types=types["num_worker_types"],
        num_ps_types=types["num_ps_types"],
        worker_types=explicit["worker_types"],
        ps_types=explicit["ps_types"],
        worker_type_bandwidth_mbps=bw,
        bandwidth_range=bw_range,
        cloud=cloud,
    )


_JOB_KEYS = {
    "arrival_slots": (0, None, False),
    "num_chunks": (1, None, True),
    "batches_per_chunk": (1, None, True),
    "epochs": (1, None, True),
    "minibatch_time_h": (0, None, False),
    "ps_update_ms": (0, None, False),
    "grad_size_mb": (0, None, False),
    "worker_type": (0, None, True),
    "ps_type": (0, None, True),
    "num_gpus": (1, None, True),
    "upload_delay_cloud_slots": (0, None, False),
}


def _check_workload(c: dict, src: str, num_servers: int) -> WorkloadConfig:
    k = "workload."
    source = c.get("source", "synthetic")
    if source not in WORKLOAD_SOURCES:
        _fail(src, k + "source", f"unknown source {source!r} (valid: {', '.join(WORKLOAD_SOURCES)})")
    jobs = c.get("jobs", [])
    if source == "inline":
        if not isinstance(jobs, list) or not jobs:
            _fail(src, k + "jobs", "source 'inline' needs a non-empty list of jobs")
        checked = []
        for i, job in enumerate(jobs):
            if not isinstance(job, dict):
                _fail(src, f"{k}jobs[{i}]", f"expected a mapping, got {job!r}")
            extra = set(job) - set(_JOB_KEYS) - {"upload_delay_edge_slots"}
            if extra:
                _fail(src, f"{k}jobs[{i}].{sorted(extra)[0]}", "unknown key")
            row = {}
            for name, (lo, hi, integer) in _JOB_KEYS.items():
                if name not in job:
                    _fail(src, f"{k}jobs[{i}].{name}", "missing")
                row[name] = _num(src, f"{k}jobs[{i}].{name}", job[name], lo=lo, hi=hi, integer=integer)
            d = job.get("upload_delay_edge_slots")
            if not isinstance(d, list | tuple) or len(d) != num_servers:
                _fail(src, f"{k}jobs[{i}].upload_delay_edge_slots", f"expected {num_servers} values, got {d!r}")
            row["upload_delay_edge_slots"] = tuple(
                _num(src, f"{k}jobs[{i}].upload_delay_edge_slots", x, lo=0) for x in d
            )
            checked.append(row)
        jobs = tuple(checked)
        num_jobs = len(jobs)
    else:
        if jobs:
            _fail(src, k + "jobs", f"only allowed with source 'inline' (source is {source!r})")
        jobs = ()
        num_jobs = _num(src, k + "num_jobs", c.get("num_jobs", 30), lo=1, hi=MAX_NUM_JOBS, integer=True)
    load = c.get("load")
    h = c.get("horizon_slots", None if load is not None else 100.0)
    h = None if h is None else _num(src, k + "horizon_slots", h, lo=0, strict_lo=True)
    if load is not None:
        load = _num(src, k + "load", load, lo=0, strict_lo=True, hi=100)
        if h is not None:
            _fail(src, k + "load", "give workload.load or workload.horizon_slots, not both")
        if source == "inline":
            _fail(src, k + "load", "inline jobs carry their own arrival slots (no load rescaling)")
    window = c.get("window", "random")
    if window != "random":
        window = _num(src, k + "window", window, lo=0, integer=True)
    path = c.get("path")
    if source == "csv" and not path:
        _fail(src, k + "path", "source 'csv' needs a path")
    if path is not None and not isinstance(path, str):
        _fail(src, k + "path", f"expected a string, got {path!r}")
    if path is not None and not Path(path).expanduser().exists():  # explicit: an error at make, never a fallback
        _fail(src, k + "path", f"no such file or directory: {path!r}")
    tc = c.get("trace_cluster")
    if tc is not None and not isinstance(tc, str):
        _fail(src, k + "trace_cluster", f"expected a string, got {tc!r}")
    columns, time_unit = _check_csv_keys(c, src, source)
    return WorkloadConfig(source, num_jobs, h, load, window, path, tc, jobs, columns, time_unit)


def _check_csv_keys(c: dict, src: str, source: str) -> tuple[tuple, str]:
    """``workload.columns`` (canonical name -> CSV column) and ``workload.time_unit``: ``source: csv`` only."""
    k = "workload."
    cols = c.get("columns") or {}
    unit = c.get("time_unit", "s")
    if not cols and unit == "s":
        return (), "s"
    from ...workloads.loaders import TIME_UNITS_S  # only when used: pandas stays out of `import edgegym`
    from ...workloads.schema import CANONICAL_COLUMNS

    if isinstance(cols, list | tuple):  # the round-tripped form: [[canonical, column], ...]
        if not all(isinstance(x, list | tuple) and len(x) == 2 for x in cols):
            _fail(src, k + "columns", f"expected a mapping of canonical names to CSV columns, got {cols!r}")
        cols = dict(cols)
    if not isinstance(cols, dict):
        _fail(src, k + "columns", f"expected a mapping of canonical names to CSV columns, got {cols!r}")
    for name, col in cols.items():
        if name not in CANONICAL_COLUMNS:
            _fail(src, f"{k}columns.{name}", f"unknown canonical column (valid: {', '.join(CANONICAL_COLUMNS)})")
        if not isinstance(col, str) or not col:
            _fail(src, f"{k}columns.{name}", f"expected a CSV column name, got {col!r}")
    if unit not in TIME_UNITS_S:
        _fail(src, k + "time_unit", f"unknown unit {unit!r} (valid: {', '.join(TIME_UNITS_S)})")
    if source != "csv" and (cols or unit != "s"):
        _fail(src, k + ("columns" if cols else "time_unit"), f"only used with source 'csv' (source is {source!r})")
    return tuple(sorted(cols.items())), unit


def _check_job_model(c: dict, src: str) -> JobModelConfig:
    k = "job_model."
    d = JobModelConfig()
    if "minibatch_time_h" in c:
        if "minibatch_time" in c or "minibatch_time_unit" in c:
            _fail(
                src,
                k + "minibatch_time_h",
                "give job_model.minibatch_time_h (hours) or job_model.minibatch_time with minibatch_time_unit, "
                "not both",
            )
        mb = _range(src, k + "minibatch_time_h", c["minibatch_time_h"], lo=1e-12)
        unit = "hour"
    else:
        unit = c.get("minibatch_time_unit", d.minibatch_time_unit)
        if unit not in TIME_UNITS_H:
            _fail(src, k + "minibatch_time_unit", f"unknown unit {unit!r} (valid: {', '.join(TIME_UNITS_H)})")
        mb = _range(src, k + "minibatch_time", c.get("minibatch_time", d.minibatch_time), lo=1e-12)
    return JobModelConfig(
        epochs=_range(src, k + "epochs", c.get("epochs", d.epochs), lo=1, integer=True),
        minibatch_time=mb,
        minibatch_time_unit=unit,
        ps_update_ms=_range(src, k + "ps_update_ms", c.get("ps_update_ms", d.ps_update_ms), lo=0),
        grad_size_mb=_range(src, k + "grad_size_mb", c.get("grad_size_mb", d.grad_size_mb), lo=0),
        edge_upload_delay_slots=_range(
            src,
            k + "edge_upload_delay_slots",
            c.get("edge_upload_delay_slots", d.edge_upload_delay_slots),
            lo=0,
            integer=True,
        ),
        cloud_upload_delay_slots=_range(
            src,
            k + "cloud_upload_delay_slots",
            c.get("cloud_upload_delay_slots", d.cloud_upload_delay_slots),
            lo=0,
            integer=True,
        ),
    )


def _check_baselines(c: dict, src: str) -> BaselinesConfig:
    k = "baselines."
    d = BaselinesConfig()
    gang = c.get("gang_size", d.gang_size)
    if gang not in GANG_SIZES:
        _fail(src, k + "gang_size", f"unknown gang size {gang!r} (valid: {', '.join(GANG_SIZES)})")
    thr = c.get("tiresias_thresholds")
    if thr is not None:
        if not isinstance(thr, list | tuple) or not thr:
            _fail(src, k + "tiresias_thresholds", f"expected a non-empty list of worker-slots or null, got {thr!r}")
        thr = tuple(_num(src, k + "tiresias_thresholds", x, lo=0, strict_lo=True) for x in thr)
    kappa = c.get("tiresias_starvation_kappa")
    if kappa is not None:
        kappa = _num(src, k + "tiresias_starvation_kappa", kappa, lo=0, strict_lo=True)
    cap = c.get("batchsche_max_interval_slots")
    if cap is not None:
        cap = _num(src, k + "batchsche_max_interval_slots", cap, lo=0, strict_lo=True)
    return BaselinesConfig(
        gang_size=gang,
        tiresias_thresholds=thr,
        tiresias_theta1_factor=_num(
            src, k + "tiresias_theta1_factor", c.get("tiresias_theta1_factor", d.tiresias_theta1_factor),
            lo=0, strict_lo=True,
        ),
        tiresias_starvation_kappa=kappa,
        batchsche_max_interval_slots=cap,
    )


def discipline_kwargs(preset: Preset) -> dict:
    """Keyword arguments of the preset's baseline discipline (``env.discipline``) from its ``baselines`` section."""
    b = preset.baselines
    disc = preset.env.discipline
    if disc in ("srtf", "tiresias_l"):
        out: dict[str, Any] = {"gang_size": b.gang_size}
        if disc == "tiresias_l":
            out.update(
                thresholds=b.tiresias_thresholds,
                theta1_factor=b.tiresias_theta1_factor,
                starvation_kappa=b.tiresias_starvation_kappa,
            )
        return out
    if disc == "batchsche":
        return {"max_interval_slots": b.batchsche_max_interval_slots}
    return {}


def _check_env(c: dict, src: str) -> EnvConfig:
    k = "env."
    mode = c.get("action_mode", "server_proportions")
    if mode not in ACTION_MODES:
        _fail(src, k + "action_mode", f"unknown mode {mode!r} (valid: {', '.join(ACTION_MODES)})")
    disc = c.get("discipline", "paper")
    if disc not in DISCIPLINES:
        _fail(src, k + "discipline", f"unknown discipline {disc!r} (valid: {', '.join(DISCIPLINES)})")
    flags = {}
    for name, default in (("slotted", False), ("use_cloud", True), ("obs_relative", False)):
        v = c.get(name, default)
        if not isinstance(v, bool):
            _fail(src, k + name, f"expected true/false, got {v!r}")
        flags[name] = v
    mes = c.get("max_edge_servers")
    mes = None if mes is None else _num(src, k + "max_edge_servers", mes, lo=0, integer=True)
    return EnvConfig(
        action_mode=mode,
        discipline=disc,
        reward_scale=_num(src, k + "reward_scale", c.get("reward_scale", 1000.0), lo=0, strict_lo=True),
        speed=_num(src, k + "speed", c.get("speed", 1.0), lo=0, strict_lo=True, hi=100),
        slotted=flags["slotted"],
        use_cloud=flags["use_cloud"],
        obs_relative=flags["obs_relative"],
        max_edge_servers=mes,
        max_chunks=_num(src, k + "max_chunks", c.get("max_chunks", 115), lo=1, integer=True),
        max_types=_num(src, k + "max_types", c.get("max_types", 10), lo=1, integer=True),
    )


def preset_from_dict(data: dict, source: str = "<dict>") -> Preset:
    """Validate a preset mapping (as read from YAML) and build a :class:`Preset`."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a preset must be a mapping, got {type(data).__name__}")
    for key in data:
        if key not in _TOP and key not in _SECTIONS:
            raise ValueError(f"{source}: unknown key '{key}' (valid: {', '.join(list(_TOP) + list(_SECTIONS))})")
    for sec, cls in _SECTIONS.items():
        sub = data.get(sec) or {}
        if not isinstance(sub, dict):
            _fail(source, sec, f"expected a mapping, got {sub!r}")
        valid = {f.name for f in dataclasses.fields(cls)} | _LEGACY_KEYS.get(sec, set())
        for key in sub:
            if key not in valid:
                _fail(source, f"{sec}.{key}", f"unknown key (valid: {', '.join(sorted(valid))})")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        _fail(source, "name", f"expected a non-empty string, got {name!r}")
    cluster = _check_cluster(data.get("cluster") or {}, source)
    env = _check_env(data.get("env") or {}, source)
    if env.max_edge_servers is not None and env.max_edge_servers < cluster.num_edge_servers:
        _fail(source, "env.max_edge_servers", f"must be >= cluster.num_edge_servers ({cluster.num_edge_servers})")
    if not cluster.cloud and env.use_cloud and env.action_mode == "cloud_split":
        pass  # the cloud row is simply masked
    return Preset(
        name=name,
        family=str(data.get("family", "EdgeCloudML")),
        version=_num(source, "version", data.get("version", 0), lo=0, integer=True),
        description=str(data.get("description", "")),
        cluster=cluster,
        workload=_check_workload(data.get("workload") or {}, source, cluster.num_edge_servers),
        job_model=_check_job_model(data.get("job_model") or {}, source),
        env=env,
        baselines=_check_baselines(data.get("baselines") or {}, source),
        source_file=source,
    )


def to_dict(preset: Preset) -> dict:
    """The preset as a plain mapping (the inverse of :func:`preset_from_dict`); ``preset.to_dict()``."""
    return preset.to_dict()


KEY = "edge_cloud"
DEFAULT_PRESET = "sim100"

#: the ``-v1`` overrides (:attr:`Family.v1_overrides`): the reward is already credited at the decision
#: (potential-based projected JCT), so only ``obs_relative`` (no absolute-time feature, jobs in the system relative
#: to the worker count); v0's reward scales already give per-step rewards of mean ≈ −0.7 (testbed, sim100 at 100);
#: ``max_edge_servers: null``: the observation has one row per edge server of the cluster (sim100's 100, the same
#: observation as before), so ``{"cluster": {"num_edge_servers": 400}}`` alone gives a 400-server env, which
#: a shared-row agent reads with the weights it learnt at 100
V1_OVERRIDES = {"env": {"obs_relative": True, "max_edge_servers": None}}


def list_presets() -> list[str]:
    """Names of the presets shipped in ``envs_config/edge_cloud`` (package data)."""
    return shipped_presets(KEY)


def search_overrides(env: dict) -> dict:
    """The ``env`` keys a per-step search adds to a policy's ``env`` section (:attr:`Family.search_overrides`):
    the discrete ``cloud_fraction`` action mode unless the policy sets a mode (the default ``server_proportions``
    is continuous)."""
    return {} if "action_mode" in env else {"action_mode": "cloud_fraction"}


def load_preset(name_or_path: str | Path) -> Preset:
    """Load a shipped preset by name (``"tiny"``) or any YAML file by path."""
    data, src = read_preset_yaml(name_or_path, preset_dir(KEY), "preset", list_presets())
    return preset_from_dict(data, source=src)
