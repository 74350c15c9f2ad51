"""``HeteroML``: Zhou et al.'s heterogeneous distributed-ML cluster as a Gymnasium env (one step per arriving job).

Each step commits the arriving job irrevocably: a worker type, a number of workers, co-located or
spread, and a start delay (the masked grid action, ``Discrete(M · levels · 2 · delays)``), or a structured
:class:`~edgegym.families.hetero_ml.simulator.Placement` (the reference policies' API; validated by T1). The env
derives the PS type and the placement (A_mincost-style greedy over servers priced by lambda^(util) - 1) and starts
the job at the earliest slot >= decision time + delay at which the placement fits. The reward is
``-w_j (c_j - a_j) / Z`` (``env.reward: flow``, default) or ``-w_j c_j / Z`` (``completion``), Z = 5000 · T, so the
undiscounted return is exactly ``-(objective - objective_offset) / reward_scale`` with ``objective`` = Σ_j w_j c_j
(the paper's total weighted completion time) and ``objective_offset`` = Σ_j w_j a_j (flow) or 0 (completion).

With ``env.discipline`` != ``reservation`` the slot driver runs the elastic / preemptive baseline (DRF, AntMan,
Tiresias) at reset and the action space is ``Discrete(1)`` (no-op); rewards use the slot driver's completions.

The reward is already credited at the decision: a job's completion is fixed when it is committed (reservation,
non-preemptive), so every step's reward is that job's whole weighted flow time (no zero-reward steps, no
delayed credit; measured under ``aonline-hetero`` on the default preset: 0% zero-reward steps, last step 1% of
the return).

Version history: v0 — first version. v1 — ``obs_relative: true`` (no absolute-time or episode-position
features: ``time``, ``to_boundary`` and ``progress`` are 0, ``active`` is jobs in the system per server),
``obs_actions: true`` (one feature row per grid action: its earliest start and completion under the env's own
placement rule relative to the best action's, its duration, workers, spread, delay and resource footprint; the
action mask moves into the rows; :meth:`HeteroMLEnv.obs_layout` describes the blocks for the per-row shared policy
of ``edgegym.agents.rl.shared``) and ``reward_scale`` 1e5 (per-step rewards O(1): under ``earliest`` on the default preset,
seed 100, mean −0.67, sd 0.67); dynamics and objective unchanged.

Preset history (same ids, new default): ``HeteroML-v0`` (= ``HeteroML-ps-v0``), ``HeteroML-ra-v0`` and
``HeteroML-rl-v0`` moved to the calibrated reading (``cluster.load: 2.0``, the offered load over the horizon, instead
of ``kappa: 0.35`` of the per-slot demand of all jobs at once, an offered load of ~0.4; ``workload.minibatch_model:
by_type``, mini-batch times tied to the worker type's GPUs); the earlier defaults stay as
``HeteroML-ps-paper-literal-v0`` and ``HeteroML-ra-paper-literal-v0`` (v0 only). The ``-v1`` files were regenerated
from the new v0 presets. ``episode_metrics`` gained ``offered_load``; ``workload.weights: proportional`` now makes
w_j proportional to the ideal resource-time (it was an affine map onto the weight range).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ...core.validation import check_config_mapping
from . import _reference
from .instance import IdealConfig, _compiled, build_instance
from .placement import grid_place, ps_type_for
from .presets import DEFAULT_PRESET, HeteroPreset, load_preset
from .simulator import (
    HeteroCluster,
    HeteroJobs,
    Ledger,
    Placement,
    ReservationSim,
    duration_slots,
)

_COMMIT_ROWS = Ledger.commit_rows  # (``_step_direct`` appends to the pending list itself where this is the method)

__all__ = [
    "ACTION_ROW_FEATURES", "HeteroMLEnv", "HeteroView", "OBSERVATION_FEATURES", "observation_features",
    "observation_table", "N_BINS",
]

N_BINS = 8  # geometric lookahead bins [0,1), [1,2), [2,4), ..., [64,128)
_BIN_EDGES = np.array([0, 1, 2, 4, 8, 16, 32, 64, 128])
OBS_HIGH = 10.0
_NO_FLOATS = np.zeros(0)
_K = None


def _entry_of(dispatcher, args: tuple):
    """``(entry, fingerprints)``: the compiled entry point of the kernel ``dispatcher`` for the types of ``args``
    and those arguments' fingerprints (for ``HeteroMLEnv._check_entry``), or ``None`` where there is none (no
    Numba, or not compiled for these types yet)."""
    from ...core.jit import compiled_entry, fingerprint

    e = compiled_entry(dispatcher, args)
    return None if e is None else (e, tuple(map(fingerprint, args)))


def _check_fingerprints(entry: tuple, args: tuple) -> None:
    """Assert that ``args`` have the fingerprints ``entry`` (from :func:`_entry_of`) was looked up with."""
    from ...core.jit import fingerprint

    got = tuple(map(fingerprint, args))
    assert got == entry[1], [i for i, (a, b) in enumerate(zip(got, entry[1], strict=True)) if a != b]


_PACKED = None

_JIT = None


def _jit():
    """:mod:`edgegym.core.jit`, imported on first use and then kept (a function-level ``from ... import`` in the
    episode's first step took ~7 µs each in a stepping loop, its caches cold after the reset)."""
    global _JIT
    if _JIT is None:
        from ...core import jit

        _JIT = jit
    return _JIT


#: per packed kernel (dispatcher), the last entry point :func:`_packed_entry` found: ``(the EpisodeArgs' Numba type,
#: the other arguments' fingerprints, entry)`` (process-local, never copied or pickled)
_LAST_PACKED: dict = {}


def _packed_entry(dispatcher, ep, args: tuple, fps: tuple | None = None, reuse: bool = True):
    """``compiled_entry(dispatcher, (ep, *args))`` for the ``EpisodeArgs`` ``ep``: the entry found last for this
    kernel where ``ep``'s Numba type is the same object (Numba interns its types: equal types are one object) and
    ``args`` have the same fingerprints (``fps`` where the caller has them), i.e. where ``compiled_entry``'s key is
    the same; else ``compiled_entry``'s look-up (its key hashes the struct's type, ~30 fields: a few µs, more with
    cold caches after a reset), kept as the last. ``reuse=False``: always the look-up."""
    jit = _jit()
    typ = getattr(ep, "_numba_type_", None)
    if fps is None:
        try:
            fps = tuple(map(jit.fingerprint, args))
        except Exception:  # pragma: no cover - a value without a fingerprint: compiled_entry decides
            fps = None
    last = _LAST_PACKED.get(dispatcher)
    if reuse and last is not None and typ is not None and last[0] is typ and fps is not None and last[1] == fps:
        return last[2]
    e = jit.compiled_entry(dispatcher, (ep, *args))
    if e is not None and typ is not None and fps is not None and None not in fps:
        _LAST_PACKED[dispatcher] = (typ, fps, e)
    return e


def _packed_kernels():
    """:mod:`._packed` (``commit_packed`` and its ``EpisodeArgs``), imported on first use, or ``None`` where it cannot
    be (no Numba, or no ``numba.experimental.structref``): the step then passes the full argument list."""
    global _PACKED
    if _PACKED is None:
        try:
            from . import _packed as p
        except ImportError:  # pragma: no cover - no Numba
            p = False
        _PACKED = p
    return _PACKED or None


def _kernels():
    """The compiled kernels (:mod:`._kernels`), imported on first use (``import edgegym`` does not load Numba)."""
    global _K
    if _K is None:
        from . import _kernels as k

        _K = k
    return _K


#: per-grid-action row of the v1 observation (``env.obs_actions``): (name, meaning, low, high)
ACTION_ROW_FEATURES = (
    ("valid", "1 if the action is valid (the action mask); an invalid action's row is all 0", 0.0, 1.0),
    ("regret", "(completion - best completion) / (best completion - now), clipped", 0.0, OBS_HIGH),
    ("wait", "(earliest start - now) / (best completion - now), clipped", 0.0, OBS_HIGH),
    ("duration", "duration / (best completion - now), clipped", 0.0, OBS_HIGH),
    ("workers", "workers N / D_j", 0.0, 1.0),
    ("spread", "1 if spread (not co-located)", 0.0, 1.0),
    ("delay", "start delay / largest delay", 0.0, 1.0),
    ("share", "10 x the largest share of a resource's cluster total the job holds (workers + PSs), clipped", 0.0,
     OBS_HIGH),
    ("area", "log2(resource share x duration / the smallest over valid actions) / 2, clipped", 0.0, OBS_HIGH),
    ("type_gpu", "GPUs of one worker of this type / 4", 0.0, OBS_HIGH),
    ("type_bw", "bandwidth of one worker of this type (Gbps) / 5", 0.0, OBS_HIGH),
    ("on_time", "1 if the job fits at decision time + delay (no wait beyond the delay)", 0.0, 1.0),
)


def observation_features(M: int, R: int, n_actions: int, resource_names=("gpu", "vcpu", "mem_gib", "bw_gbps"),
                         relative: bool = False, actions: bool = False):
    """The named observation features: (name, meaning, low, high), in observation order.

    v0: job | time, position, active | lookahead bins | action mask. ``actions`` (v1): job | one row per grid
    action (:data:`ACTION_ROW_FEATURES`) | globals | bins, no separate mask. ``relative`` (v1): the same slots,
    the absolute-time and episode-position ones 0 and ``active`` per server."""
    rows = []
    if actions:
        for a in range(n_actions):
            rows += [(f"action[{a}].{n}", m, lo, hi) for n, m, lo, hi in ACTION_ROW_FEATURES]
    f = [
        ("w", "w_j / 5000", 0.0, OBS_HIGH),
        ("log_E", "log10(E_j) / 3", 0.0, OBS_HIGH),
        ("log_D", "log10(D_j) / 3", 0.0, OBS_HIGH),
        ("log_K", "log10(K_j) / 3", 0.0, OBS_HIGH),
        ("log_pi", "log10(π_j MB) / 3", 0.0, OBS_HIGH),
    ]
    for m in range(M):
        f.append((f"d_coloc_{m}", f"standalone duration of type {m} at N = D_j, co-located, / T (clipped)", 0.0, OBS_HIGH))
        f.append((f"d_spread_{m}", f"standalone duration of type {m} at N = D_j, spread, / T (clipped)", 0.0, OBS_HIGH))
    f += [
        ("U_ps_mean", "mean_p U^p_j in slots x 1e4", 0.0, OBS_HIGH),
        ("U_ps_min", "min_p U^p_j in slots x 1e4", 0.0, OBS_HIGH),
        ("U_ra", "U_j (Ring-AllReduce) in slots x 1e4", 0.0, OBS_HIGH),
    ]
    f += rows
    if relative:
        f += [
            ("time", "0 (v1, obs_relative)", 0.0, OBS_HIGH),
            ("to_boundary", "0 (v1, obs_relative)", 0.0, OBS_HIGH),
            ("progress", "0 (v1, obs_relative)", 0.0, 1.0),
            ("active", "committed-but-unfinished jobs / H (clipped)", 0.0, OBS_HIGH),
        ]
    else:
        f += [
            ("time", "decision time / T (clipped)", 0.0, OBS_HIGH),
            ("to_boundary", "(next tau_i - a_j) / tau_i", 0.0, OBS_HIGH),
            ("progress", "k / J", 0.0, 1.0),
            ("active", "committed-but-unfinished jobs / J", 0.0, 1.0),
        ]
    for b in range(N_BINS):
        lo, hi = _BIN_EDGES[b], _BIN_EDGES[b + 1]
        for r in range(R):
            f.append((f"free_{resource_names[r]}_b{b}", f"aggregate free fraction of {resource_names[r]} over [{lo},{hi})", 0.0, 1.0))
            f.append((f"maxfree_{resource_names[r]}_b{b}", f"largest single-server free fraction of {resource_names[r]} over [{lo},{hi})", 0.0, 1.0))
        for m in range(M):
            f.append((f"hosts_{m}_b{b}", f"servers able to host >= 1 type-{m} worker over [{lo},{hi}) / H", 0.0, 1.0))
    if not actions:
        for a in range(n_actions):
            f.append((f"valid_{a}", f"grid action {a} is valid (action mask)", 0.0, 1.0))
    return f


def observation_table(M: int = 8, R: int = 4, n_actions: int = 288) -> str:
    """Markdown table (index, name, meaning, min, max) of the observation; repeated blocks collapse to ranges."""
    rows = ["| index | name | meaning | min | max |", "|---|---|---|---|---|"]
    feats = observation_features(M, R, n_actions)
    i = 0
    while i < len(feats):
        name, meaning, lo, hi = feats[i]
        j = i
        if name.startswith("valid_"):
            j = len(feats) - 1
        if j > i:
            rows.append(f"| {i}-{j} | valid_0 .. valid_{j - i} | grid action a is valid (the action mask) | {lo:g} | {hi:g} |")
        else:
            rows.append(f"| {i} | {name} | {meaning} | {lo:g} | {hi:g} |")
        i = j + 1
    return "\n".join(rows)


#: the default preset's features (8 worker types, 4 resources, 288 grid actions)
OBSERVATION_FEATURES = observation_features(8, 4, 288)


@dataclass(frozen=True, slots=True)
class HeteroView:
    """Read-only state for reference policies (numpy arrays and scalars; jobs restricted to those arrived)."""

    step: int  # index of the job to decide (jobs are in (arrival, id) order)
    decision_time: int
    cluster: HeteroCluster
    jobs: HeteroJobs  # jobs 0..step (future jobs are not visible)
    start: np.ndarray  # (step,) committed starts
    duration: np.ndarray  # (step,)
    horizon_slots: int
    alpha: int
    F: float
    lambda_override: float | None
    weight_scale: float
    tie_break: str
    tau_rule: str
    horizon_cap: int
    fifo_workers: tuple
    ideal_worker_type: np.ndarray  # (step+1,) ideal configuration of the visible jobs
    ideal_ps_type: np.ndarray
    ideal_workers: np.ndarray


def _jobs_prefix(jobs: HeteroJobs, n: int) -> HeteroJobs:
    return HeteroJobs(
        jobs.arrival[:n], jobs.weight[:n], jobs.epochs[:n], jobs.chunks[:n], jobs.batches[:n], jobs.v[:n],
        jobs.ps_update[:n], jobs.ra_update[:n], jobs.grad_mb[:n],
    )


def _p95(x: np.ndarray) -> float:
    """``float(np.percentile(x, 95))`` of a 1-d float64 array (NumPy's default ``linear`` method: the order
    statistics at floor(v) and floor(v) + 1 for v = (n - 1) · 0.95, then its ``_lerp`` with gamma = v - floor(v): ``a +
    (b - a) γ``, or ``b - (b - a)(1 - γ)`` from γ = 0.5), computed directly where every value is finite and nonzero
    (the order statistics are then the same numbers whatever the partition, with no ±0.0 to place) and n >= 2;
    NumPy's function otherwise. ~30 -> ~8 µs per call warm on 150 values."""
    n = x.shape[0]
    if n < 2 or x.dtype != np.float64 or x.ndim != 1 or not (np.isfinite(x).all() and x.all()):
        return float(np.percentile(x, 95))
    vi = (n - 1) * 0.95  # NumPy: (n - 1) * (95 / 100), float64
    lo = math.floor(vi)
    g = vi - lo
    s = np.partition(x, (lo, lo + 1))
    a, b = s[lo], s[lo + 1]
    diff = b - a
    return float(b - diff * (1 - g) if g >= 0.5 else a + diff * g)


class HeteroMLEnv(gym.Env):
    """Zhou et al.'s model (IEEE TCC 2023): one step per arriving job; see the module docstring."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}
    #: :meth:`step` computes the next job's v1 rows in its commit's compiled call (False: two calls, the same values;
    #: the differential tests compare both)
    _fuse = True
    #: the episode metrics read only the servers each job uses (``_kernels.gpu_busy_listed``, ``job_workers``) and
    #: compute the PS lower bound's terms elementwise (:meth:`_lower_bound_ps`); False: the full-table and per-job
    #: loops, the same values (the reference of ``tests/speed/test_speed_hetero_v1_step3.py``)
    _listed = True
    #: :meth:`step` of a fused v1 env through :meth:`_step_direct` (False: :meth:`_commit_step` then
    #: :meth:`_observation`, the same values; the reference of ``tests/speed/test_speed_hetero_v1_step3.py``)
    _direct = True
    #: :meth:`_step_direct` with its Python trimmed (False: :meth:`_step_direct_ref`, the same values; the reference
    #: of ``tests/speed/test_speed_hetero_v1_step4.py``)
    _lean = True
    #: :meth:`_step_direct` calls its two kernels' compiled entry points directly (:meth:`_entries`), skipping
    #: Numba's per-call type resolution of their ~50-75 arguments (False: through the dispatchers, the reference of
    #: ``tests/speed/test_speed_hetero_v1_step5.py``)
    _direct_entry = True
    #: (tests) :meth:`_step_direct` asserts that every argument handed to an entry point has the fingerprint the
    #: entry was looked up with
    _check_entry = False
    #: :meth:`_step_direct` hands the episode's fixed arguments of ``_kernels.commit_prepare`` (simulator records,
    #: cluster tables, caches, scratch) to ``_packed.commit_packed`` as one native object built at the episode's first
    #: direct step, so a step unboxes ~10 arrays instead of ~42 (False: the full argument list, the reference of
    #: ``tests/speed/test_speed_hetero_v1_step7.py``; only with ``_direct_entry``)
    _packed = True
    #: the packed step's entry points of an episode are those of the previous episode (of any env in the process)
    #: when its ``EpisodeArgs`` has the same Numba type object and its step arguments the same fingerprints
    #: (:func:`_packed_entry`), instead of a :func:`~edgegym.core.jit.compiled_entry` look-up per episode that hashes
    #: the struct's type of ~30 fields (False: that look-up at every episode, the reference of
    #: ``tests/speed/test_speed_hetero_v1_step9.py``)
    _reuse_entry = True
    #: :meth:`reset` allocates the episode-independent scratch and constants (empty rows, masks and profiles, the
    #: observation's scratch, the fractions and delays) once per env and reads the job scalars with fewer Python
    #: conversions (False: every reset allocates them; the reference of ``tests/speed/test_speed_hetero_v1_step6.py``)
    _lean_reset = True

    def __init__(self, preset: str | HeteroPreset = DEFAULT_PRESET, config: dict | None = None, render_mode=None):
        p = load_preset(preset) if not isinstance(preset, HeteroPreset) else preset
        check_config_mapping(config, getattr(p, "source_file", p.name))
        if config:
            p = p.replace(**config)
        self.preset = p
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        c, e = p.cluster, p.env
        self.M, self.R = len(c.worker_types), 4
        self.H = c.num_servers
        self.H_max = e.max_servers or self.H
        self.n_levels, self.n_delays = len(e.worker_fractions), len(e.delays)
        self.grid_shape = (self.M, self.n_levels, 2, self.n_delays)
        self.n_grid = int(np.prod(self.grid_shape))
        self.slot_driven = e.discipline != "reservation"
        self.action_space = spaces.Discrete(1 if self.slot_driven else self.n_grid)
        self.obs_relative, self.obs_actions = bool(e.obs_relative), bool(e.obs_actions)
        self.features = observation_features(self.M, self.R, self.n_grid, relative=self.obs_relative,
                                             actions=self.obs_actions)
        self._n_job = 5 + 2 * self.M + 3
        if self.obs_actions and not self.slot_driven:  # the per-row shared policy reads this (edgegym.agents.rl.shared)
            self.obs_layout = self._obs_layout
        lo = np.array([f[2] for f in self.features], dtype=np.float32)
        hi = np.array([f[3] for f in self.features], dtype=np.float32)
        self.observation_space = spaces.Box(lo, hi, dtype=np.float32)
        self.reward_scale = p.reward_scale
        self.T = p.workload.horizon_slots
        self.lam = 2.0 * self.T * self.H * self.R * e.price_F + 1.0
        self._inst = None
        self._k = 0
        self._jsc = None
        self._mask_step = None
        self._rows_step = None
        # whether step() fuses (v1, and this class's own commit and observation, which hand the rows over)
        cls = type(self)
        self._fused = bool(self._fuse and self.obs_actions and not self.slot_driven
                           and cls._decode_commit is HeteroMLEnv._decode_commit
                           and cls._observation is HeteroMLEnv._observation)
        # whether step() takes _step_direct (this class's own commit step and observation, which it inlines)
        self._direct_ok = bool(self._fused and self._direct and cls._commit_step is HeteroMLEnv._commit_step
                               and cls._job_scalars is HeteroMLEnv._job_scalars and cls._rec is HeteroMLEnv._rec)

    # ------------------------------------------------------------------ episode
    def __getstate__(self) -> dict:
        """The env's state for :func:`copy.deepcopy` and :mod:`pickle`, without the step's compiled entry points and
        the episode's native argument struct (``_entry``): process-local objects that can be neither copied nor
        pickled, looked up again by the next step (the same values)."""
        state = self.__dict__.copy()
        state["_entry"] = None
        return state

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._inst = build_instance(self.preset, self.np_random)
        self.cluster, self.jobs, self.ideal = self._inst.cluster, self._inst.jobs, self._inst.ideal
        self.sim = ReservationSim(self.cluster, self.jobs, horizon=2 * self.T)
        # the ledger's dense array holds zeros only while its pending list is this one (a flush replaces the list):
        # a fork's ledger then starts from zeros and the same pending commits (``fork.copy_ledger``)
        self.sim.ledger._zeros_while = self.sim.ledger._pending
        J = self.jobs.num_jobs
        self._jptr = np.zeros(J + 2, dtype=np.int64)  # see ``_kernels.sync_job_servers``
        self._jsrv = np.empty(J * self.H, dtype=np.int64)
        # ``_kernels.grid_estimates``'s cache: residual rows at its first candidate and their worker capacities
        self._est_free = np.full(self.cluster.capacity.shape, np.nan)
        self._est_caps = np.zeros((self.cluster.capacity.shape[0], self.cluster.worker_res.shape[0]))
        self._k = 0
        self._jsc = None
        self._rewards = []
        self._illegal = 0
        self._mask_step = None
        self._est_step = None
        self._cfg_step = None
        self._prof_step = None
        self._rows_step = None
        self._slot = None
        self._entry = None  # :meth:`_entries` of this episode (looked up at its first direct step)
        c = self.cluster
        # the kernels' read-only inputs: capacity, worker/PS tables and bandwidths, cbar, PS architecture, lambda
        self._kc = (np.ascontiguousarray(c.capacity), np.ascontiguousarray(c.worker_res),
                    np.ascontiguousarray(c.ps_res), np.ascontiguousarray(c.worker_bw), np.ascontiguousarray(c.ps_bw),
                    np.ascontiguousarray(c.cbar), c.arch == "ps", float(self.lam))
        self._zf = (c.ps_res / c.cbar).sum(axis=1)  # (P,) Σ_r ẑ of each PS type (as ``placement.ps_types_for``)
        fixed = self.__dict__.get("_reset_fixed") if self._lean_reset else None
        if fixed is None or fixed[0] is not self.preset:
            fixed = self._reset_fixed = (self.preset, ) + self._episode_fixed()
        _, self._fracs, self._delays, self._no_rows, self._no_mask, self._no_prof = fixed
        # scratch of the v1 observation (rows before the area's log2, and the area ratios): consumed by the
        # observation kernel within :meth:`_observation`, never kept; the previous episode's serves again
        if fixed is not self.__dict__.get("_scratch_of") or self.__dict__.get("_rows_buf") is None:
            self._rows_buf = np.empty((self.n_grid, len(ACTION_ROW_FEATURES)))
            self._ratio_buf = np.empty(self.n_grid)
            self._bins_buf = np.empty(N_BINS * (2 * self.R + self.M))  # the lookahead bins (from ``prepare_rows``)
            self._scratch_of = fixed if self._lean_reset else None
        # ``_kernels.lookahead_cached``'s cache: a server's free row, its free fractions and the types it hosts
        H = self.cluster.capacity.shape[0]
        self._look_cache = (np.full((H, self.R), np.nan), np.zeros((H, self.R)), np.zeros((H, self.M), dtype=bool))
        self._flow = self.preset.env.reward == "flow"
        # whether a configuration (m, n, spread, PS type + 1) fits the empty cluster: a cache of the cluster alone
        n_max = max(int(self.jobs.chunks.max()), int(self.preset.workload.chunks[1]))
        self._feas = np.full((self.M, n_max + 1, 2, c.num_ps_types + 1), -1, dtype=np.int8)
        # the spread PS types' values per worker type and count (``_kernels.job_grid_cached``, the packed step's):
        # [m, n, 0] = 1.0 once [m, n, 1:] holds them; a function of the cluster alone
        self._vcache = np.zeros((self.M, n_max + 1, c.num_ps_types + 1))
        if self.slot_driven:
            from .disciplines import run_slot_driver

            self._slot = run_slot_driver(self.cluster, self.jobs, self.ideal, self.preset.env, self.preset.env.discipline)
        return self._observation(), {}

    def _episode_fixed(self) -> tuple:
        """The arrays :meth:`reset` sets that do not depend on the episode: the fractions and delays, the empty
        rows, mask and profiles. None is written after its creation, so an env keeps them across its episodes (and
        keeps their Numba types: writable C arrays as ever)."""
        fracs = np.asarray(self.preset.env.worker_fractions, dtype=np.float64)
        delays = np.asarray(self.preset.env.delays, dtype=np.int64)
        no_rows, no_mask = np.zeros((0, len(ACTION_ROW_FEATURES))), np.zeros(0, dtype=bool)
        # no usage profiles at hand (``_kernels.decode_commit`` then lists the servers' jobs itself)
        no_prof = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                   np.zeros((0, self.R)))
        return fracs, delays, no_rows, no_mask, no_prof

    def _decision_time(self, k: int) -> int:
        a = int(self.jobs.arrival[k])
        if self.preset.env.decision_time == "boundary":
            t = 1
            while t < a:
                t *= 2
            return t
        return a

    def _decision_times(self) -> list:
        """:meth:`_decision_time` of every job (Python ints)."""
        if self.preset.env.decision_time == "boundary":
            return [self._decision_time(j) for j in range(self.jobs.num_jobs)]
        if self._lean_reset and self.jobs.arrival.dtype == np.int64:
            return self.jobs.arrival.tolist()  # (int64's tolist: Python ints already)
        return [int(a) for a in self.jobs.arrival.tolist()]

    def _job_scalars(self, k: int) -> tuple:
        """Job k's (w, E, D, K, π, U, arrival, W = E D K as float, decision time) as Python numbers: a cache of the
        jobs table (rebuilt when the table is replaced, e.g. by a fork's resampled future)."""
        c = getattr(self, "_jsc", None)
        if c is None or c[0] is not self.jobs:
            jb = self.jobs
            work = jb.epochs * jb.chunks * jb.batches
            if self._lean_reset and work.dtype == np.int64 and (work.size == 0 or int(work.max()) < 2 ** 53):
                # int64 -> float64 is exact below 2**53, as float() of each Python int is
                work_f = work.astype(np.float64).tolist()
            else:
                work_f = [float(x) for x in work.tolist()]
            rows = tuple(zip(jb.weight.tolist(), jb.epochs.tolist(), jb.chunks.tolist(), jb.batches.tolist(),
                             jb.grad_mb.tolist(), jb.ra_update.tolist(), jb.arrival.tolist(),
                             work_f, self._decision_times(),
                             strict=True))
            c = self._jsc = (jb, rows, {})  # {}: other per-job tables derived from these rows (filled on demand)
        return c[1][k]

    def step(self, action):
        if self._direct_ok and type(action) is int:
            got = self._step_direct(action)
            if got is not None:
                return got
        r, terminated, info = self._commit_step(action, fuse=self._fused)
        obs = self._observation() if not terminated else np.zeros(self.observation_space.shape, dtype=np.float32)
        return obs, r, terminated, False, info

    def _step_direct(self, act: int):
        """:meth:`step` of a fused v1 env (``_fused``) for a valid grid action (a Python int) on a state whose
        configurations, mask and usage profiles are cached (every decision point after the first): the same
        commit (``_kernels.commit_prepare``), caches, reward, info and observation as :meth:`_commit_step` with
        :meth:`_decode_commit` and then :meth:`_observation`, in one method (their checks, repeated look-ups of the
        job table and per-call set-up done once). Returns ``None``, having changed nothing, where that path does
        something else (an invalid action, a price tie within rounding in the commit's search, no cached state, a
        job table not yet in :meth:`_job_scalars`'s cache); the caller then takes it. ``_direct = False``: always
        that path (the reference of ``tests/speed/test_speed_hetero_v1_step3.py``); ``_lean = False``:
        :meth:`_step_direct_ref`, the same steps with more Python per step (the reference of
        ``tests/speed/test_speed_hetero_v1_step4.py``)."""
        if not self._lean:
            return self._step_direct_ref(act)
        k = self._k
        st, cs, c, jb = self._mask_step, self._cfg_step, self._jsc, self.jobs
        # a cached mask or configuration names a job k < J (set only for an existing job), so ``st[0] == k`` also
        # checks that the episode is running
        if (st is None or st[0] != k or cs is None or cs[0] != k or c is None or c[0] is not jb
                or not 0 <= act < self.n_grid or not st[1].item(act)):
            return None
        tab = c[1]
        J = len(tab)
        w, _, _, _, grad, ra, a, W, now = tab[k]
        m4, n4, q4, p4 = cs[1]
        m, n, spread, p = m4.item(act), n4.item(act), q4.item(act) == 1, p4.item(act)
        t0 = now + self._delays.item(act % self.n_delays)
        est = self._est_step
        if est is not None and est[0] == k:
            s0 = est[1].item(act)
            if s0 >= t0 and est[2].item(act) >= 1:
                t0 = s0  # as in _decode_commit: the search starts at the estimated start
        pr = self._prof_step
        prof = pr[1] if pr is not None and pr[0] == k else self._no_prof
        k1 = k + 1
        nxt = k1 < J
        if not nxt:
            k1 = k
        w1, E1, D1, K1, grad1, ra1, a1, W1, now1 = tab[k1]
        G = self.n_grid
        buf = np.empty((6, G), dtype=np.int64)  # worker type, workers, spread, PS type, start, duration
        b0, b1, b2, b3, start, dur = buf[0], buf[1], buf[2], buf[3], buf[4], buf[5]  # (indexing: faster than unpacking)
        mask = np.empty(G, dtype=bool)
        kc, v, psu, sim = self._kc, jb.v, jb.ps_update, self.sim
        ratio = self._ratio_buf
        K = _kernels()
        ent = self._entry
        direct = self._direct_entry  # (read at each step: a flag switched mid-episode takes effect at once)
        if self._packed and direct and _packed_kernels() is not None:
            # the step's own arguments; the episode's fixed ones are in the entry's EpisodeArgs (see _packed_entries)
            sargs = (k, W, ra, grad, m, p, n, spread, t0, *prof, nxt, D1, W1, ra1, grad1, now1, buf, mask)
            if ent is None or ent[0] is not sim or ent[1] is not jb or not ent[4]:
                ent = self._packed_entries(sargs)
            pe = ent[2]
            if pe is not None:
                if self._check_entry:
                    self._check_packed(pe, sargs)
                stc, t, d, nw, col, rows, fr, nv, prof1 = pe[0](pe[2], *sargs)
            else:  # not compiled for these types yet: the dispatcher compiles, the next step looks the entry up
                stc, t, d, nw, col, rows, fr, nv, prof1 = _packed_kernels().commit_packed(self._episode_args(),
                                                                                          *sargs)
                self._entry = None
        else:
            rec = (sim.start, sim.duration, sim.workers, sim.ps, sim.worker_type, sim.ps_type, self._jptr, self._jsrv)
            rows_buf, bins = self._rows_buf, self._bins_buf
            lf, lx, lh = self._look_cache
            v1, psu1 = v[k1], psu[k1]
            args = (rec, sim.colocated, k, *kc, W, v[k], psu[k], ra, grad, m, p, n, spread, t0, *prof, nxt, D1,
                    self._fracs, self._zf, self._feas, W1, v1, psu1, ra1, grad1, now1, self._delays, self._est_free,
                    self._est_caps, b0, b1, b2, b3, mask, start, dur, rows_buf, ratio, bins, lf, lx, lh)
            # the entries were looked up on this simulator's and job table's arrays; the step's own arguments are of
            # one type each (Python scalars, fresh C arrays, kernel-returned profiles), see _entries
            if ent is None or ent[0] is not sim or ent[1] is not jb or ent[4]:
                ent = self._entries(K, args)
            stc, t, d, nw, col, rows, fr, nv, prof1 = self._commit_unpacked(K, ent, args, direct)
        if stc != 1:
            return None  # nothing committed (the search wrote only its caches): _commit_step decides
        if nv != -2:  # the caches _prepare_rows(k1) sets
            self._prof_step = (k1, prof1)
            self._cfg_step = (k1, (b0, b1, b2, b3))
            self._mask_step = (k1, mask)
            if nv >= 0:
                self._est_step = (k1, start, dur)
                self._rows_step = None  # consumed below (the observation on these rows)
            else:  # for _observation's own path below
                self._rows_step = (k1, int(nv))
        start_k, dur_k, nw, col = int(t), int(d), int(nw), bool(col)
        c_k = start_k + dur_k
        led = sim.ledger
        if type(led).commit_rows is _COMMIT_ROWS:  # Ledger.commit_rows(rows, fr, t, t + d) itself
            if c_k > start_k:
                led._pending.append((rows, fr, start_k, c_k))
        else:
            led.commit_rows(rows, fr, t, t + d)
        rs = self.reward_scale
        r = -w * (c_k - (a if self._flow else 0)) / rs
        self._rewards.append(r)
        self._k = k1 = k + 1
        info = {
            "job": k, "start": start_k, "duration": dur_k, "completion": c_k, "worker_type": m, "num_workers": nw,
            "colocated": col, "weighted_completion": w * c_k, "reward_flow": -w * (c_k - a) / rs,
        }
        if k1 >= J:
            info["episode_metrics"] = self.episode_metrics()
            return np.zeros(self.observation_space.shape, dtype=np.float32), float(r), True, False, info
        if nv < 0:  # the next job's rows were not computed here: the observation's own path
            return self._observation(), float(r), False, False, info
        # _observation on the rows just computed (its fused branch)
        lg = np.log2(ratio[:nv])
        obs_space = self.observation_space
        out = np.empty(obs_space.shape[0], dtype=np.float32)
        if ent[4] and ent[2] is not None:  # packed (this step's commit was): the episode's arguments from its struct
            ep = ent[2][2]
            pargs = (w1, E1, D1, K1, grad1, ra1, a1, k1, J, now1, self.T, self.obs_relative, mask, lg, out)
            eo = ent[3]
            if eo is None:
                eo = self._packed_obs_entry(ent, pargs)
            if eo is not None:
                if self._check_entry:
                    _check_fingerprints(eo, pargs)
                eo[0](ep, *pargs)
            else:
                _packed_kernels().observation_packed(ep, *pargs)
            return out, float(r), False, False, info
        # (the unpacked commit's arguments again: the packed path reads them from its struct instead)
        rec = (sim.start, sim.duration, sim.workers, sim.ps, sim.worker_type, sim.ps_type, self._jptr, self._jsrv)
        rows_buf, bins, v1, psu1 = self._rows_buf, self._bins_buf, v[k1], psu[k1]
        oargs = (w1, E1, D1, K1, grad1, v1, psu1, ra1, a1, k1, J, now1, self.T, self.obs_relative, rec, kc[0], kc[1],
                 kc[2], kc[3], kc[6], rows_buf, mask, lg, self._no_mask, obs_space.low, obs_space.high, out, bins)
        eo = ent[3]
        if eo is None and direct:
            eo = _entry_of(K.observation, oargs)
            self._entry = (sim, jb, ent[2], eo, ent[4])  # a new tuple (a fork may share the old one)
        if eo is not None and direct:
            if self._check_entry:
                _check_fingerprints(eo, oargs)
            eo[0](*oargs)
        else:
            K.observation(*oargs)
        return out, float(r), False, False, info

    def _entries(self, K, args: tuple) -> tuple:
        """``(sim, jobs, commit, observation)``: this episode's compiled entry points of ``_kernels.commit_prepare``
        (for :meth:`_step_direct`'s arguments ``args``) and of ``_kernels.observation`` (looked up at its first
        call), each as ``(entry, fingerprints of the arguments it was looked up with)`` or ``None`` (``_direct_entry
        = False``, no Numba, or not compiled yet: the dispatcher is called), kept as ``self._entry`` while the
        simulator and the job table are these.

        Numba's dispatcher resolves the compiled version from the fingerprints of all the arguments at every call
        (~1 µs for these); an entry point takes them unchecked. The per-episode arrays (the simulator's records,
        the job table's rows, the env's read-only tables and scratch, made at :meth:`reset` and copied with their
        flags by a fork, which has its own simulator) keep their types while the simulator and the job table are
        the same objects; the per-step values are Python scalars of fixed types (the job table's rows as
        ``tolist`` gives them, ``.item()`` of int arrays), fresh C arrays, and the usage profiles, which are
        ``_kernels``' returned C arrays or ``_no_prof``'s (the same types). ``_check_entry`` (tests) asserts it."""
        ent = self._entry = (self.sim, self.jobs, _entry_of(K.commit_prepare, args) if self._direct_entry else None,
                             None, False)
        return ent

    def _commit_unpacked(self, K, ent, args: tuple, direct: bool) -> tuple:
        """``_kernels.commit_prepare(*args)`` through the entry point of ``ent`` (:meth:`_entries`) or, where there is
        none or ``direct`` is off, the dispatcher (then the entry is looked up again at the next step)."""
        if ent[2] is not None and direct:
            if self._check_entry:
                _check_fingerprints(ent[2], args)
            return ent[2][0](*args)
        got = K.commit_prepare(*args)
        if direct:  # compiled now if it was not: looked up again at the next step
            self._entry = None
        return got

    def _episode_args(self):
        """This episode's fixed arguments of ``_kernels.commit_prepare`` as a ``_packed.EpisodeArgs`` (the objects
        themselves, never copies: the kernels write the caches and scratch through it)."""
        kc, sim, jb = self._kc, self.sim, self.jobs
        lf, lx, lh = self._look_cache
        return _packed_kernels().new_episode_args(
            self._rec(), sim.colocated, *kc, jb.v, jb.ps_update, self._fracs, self._zf, self._feas, self._delays,
            self._est_free, self._est_caps, self._rows_buf, self._ratio_buf, self._bins_buf, lf, lx, lh, self._no_mask,
            self.observation_space.low, self.observation_space.high, self._vcache)

    def _full_args(self, sargs: tuple) -> tuple:
        """``_kernels.commit_prepare``'s full argument list for the step arguments ``sargs`` of
        ``_packed.commit_packed`` (as the unpacked path builds it)."""
        k, W, ra, grad, m, p, n, spread, t0, pp, cnt, times, vals, nxt, D1, W1, ra1, grad1, now1, buf, mask = sargs
        kc, sim, v, psu = self._kc, self.sim, self.jobs.v, self.jobs.ps_update
        k1 = k + 1 if nxt else k
        return (self._rec(), sim.colocated, k, *kc, W, v[k], psu[k], ra, grad, m, p, n, spread, t0, pp, cnt, times,
                vals, nxt, D1, self._fracs, self._zf, self._feas, W1, v[k1], psu[k1], ra1, grad1, now1, self._delays,
                self._est_free, self._est_caps, buf[0], buf[1], buf[2], buf[3], mask, buf[4], buf[5], self._rows_buf,
                self._ratio_buf, self._bins_buf, *self._look_cache)

    def _packed_entries(self, sargs: tuple) -> tuple:
        """:meth:`_entries` of the packed step: ``(sim, jobs, (entry, fingerprints, episode args) or None, None,
        True)``, the entry point of ``_packed.commit_packed`` for an ``EpisodeArgs`` of this episode's fixed
        arguments (built here) and step arguments of the types of ``sargs``, and the fingerprints of the full
        argument list :meth:`_full_args` (``_check_entry`` compares each step's with them). ``None`` where the
        kernel is not compiled for these types yet. Entry points are looked up once per process for each type of
        ``EpisodeArgs`` and fingerprints of the step arguments."""
        ep = self._episode_args()
        e = _packed_entry(_packed_kernels().commit_packed, ep, sargs, reuse=self._reuse_entry)
        # (the full list's fingerprints only for ``_check_entry``: a fork stepped a few times pays no more)
        fps = tuple(map(_jit().fingerprint, self._full_args(sargs))) if self._check_entry else None
        pe = None if e is None else (e, fps, ep)
        ent = self._entry = (self.sim, self.jobs, pe, None, True)
        return ent

    def _packed_obs_entry(self, ent: tuple, pargs: tuple):
        """The entry point of ``_packed.observation_packed`` for ``ent``'s ``EpisodeArgs`` and arguments of the
        types of ``pargs``, as ``(entry, fingerprints of pargs)``, kept in a new ``_entry`` (``None`` where it is
        not compiled yet: the dispatcher compiles it, and the next step looks it up)."""
        fps = tuple(map(_jit().fingerprint, pargs))
        e = _packed_entry(_packed_kernels().observation_packed, ent[2][2], pargs, fps, self._reuse_entry)
        if e is None:
            return None
        eo = (e, fps)
        self._entry = (ent[0], ent[1], ent[2], eo, True)  # a new tuple (a fork may share the old one)
        return eo

    def _check_packed(self, pe: tuple, sargs: tuple) -> None:
        """Assert that the full argument list of this step has the fingerprints of the one ``pe`` was looked up with
        and that ``pe``'s ``EpisodeArgs`` holds this episode's objects themselves (``_check_entry``)."""
        if pe[1] is not None:  # (None: looked up with the check off)
            _check_fingerprints(pe, self._full_args(sargs))
        f = _packed_kernels().fields_of(pe[2])
        kc, sim, jb = self._kc, self.sim, self.jobs
        mine = (self._rec(), sim.colocated, *kc, jb.v, jb.ps_update, self._fracs, self._zf, self._feas, self._delays,
                self._est_free, self._est_caps, self._rows_buf, self._ratio_buf, self._bins_buf, *self._look_cache,
                self._no_mask, self.observation_space.low, self.observation_space.high, self._vcache)
        assert len(f) == len(mine)
        for i, (a, b) in enumerate(zip(f, mine, strict=True)):
            if isinstance(b, tuple):
                assert all(x is y for x, y in zip(a, b, strict=True)), i
            elif isinstance(b, np.ndarray):
                assert a is b, i
            else:
                assert a == b and type(a) is type(b), i

    def _step_direct_ref(self, act: int):
        """:meth:`_step_direct` before its Python was trimmed: the same checks, commit, caches, reward, info and
        observation (``_lean = False``; the reference of ``tests/speed/test_speed_hetero_v1_step4.py``)."""
        k = self._k
        jb = self.jobs
        J = jb.arrival.shape[0]
        if k >= J or not 0 <= act < self.n_grid:
            return None
        st, cs = self._mask_step, self._cfg_step
        if st is None or st[0] != k or cs is None or cs[0] != k or not st[1].item(act):
            return None
        c = self._jsc
        if c is None or c[0] is not jb:
            self._job_scalars(k)
            c = self._jsc
        tab = c[1]
        w, _, _, _, grad, ra, a, W, now = tab[k]
        m4, n4, q4, p4 = cs[1]
        m, n, spread, p = m4.item(act), n4.item(act), q4.item(act) == 1, p4.item(act)
        t0 = now + self._delays.item(act % self.n_delays)
        est = self._est_step
        if est is not None and est[0] == k and est[2].item(act) >= 1 and est[1].item(act) >= t0:
            t0 = est[1].item(act)  # as in _decode_commit: the search starts at the estimated start
        pr = self._prof_step
        prof = pr[1] if pr is not None and pr[0] == k else self._no_prof
        nxt = k + 1 < J
        k1, G = k + 1 if nxt else k, self.n_grid
        w1, E1, D1, K1, grad1, ra1, a1, W1, now1 = tab[k1]
        buf = np.empty((6, G), dtype=np.int64)  # worker type, workers, spread, PS type, start, duration
        b0, b1, b2, b3, start, dur = buf
        mask = np.empty(G, dtype=bool)
        kc, v, psu, sim = self._kc, jb.v, jb.ps_update, self.sim
        rec = self._rec()
        rows_buf, ratio, bins = self._rows_buf, self._ratio_buf, self._bins_buf
        K = _kernels()
        stc, t, d, nw, col, rows, fr, nv, prof1 = K.commit_prepare(
            rec, sim.colocated, k, *kc, W, v[k], psu[k], ra, grad, m, p, n, spread, t0, *prof, nxt, D1, self._fracs,
            self._zf, self._feas, W1, v[k1], psu[k1], ra1, grad1, now1, self._delays, self._est_free, self._est_caps,
            b0, b1, b2, b3, mask, start, dur, rows_buf, ratio, bins, *self._look_cache)
        if stc != 1:
            return None  # nothing committed (the search wrote only its caches): _commit_step decides
        if nv != -2:  # the caches _prepare_rows(k1) sets
            self._prof_step = (k1, prof1)
            self._cfg_step = (k1, (b0, b1, b2, b3))
            self._mask_step = (k1, mask)
            if nv >= 0:
                self._est_step = (k1, start, dur)
            self._rows_step = (k1, int(nv))
        sim.ledger.commit_rows(rows, fr, t, t + d)
        start_k, dur_k, nw, col = int(t), int(d), int(nw), bool(col)
        c_k = start_k + dur_k
        r = -w * (c_k - (a if self._flow else 0)) / self.reward_scale
        self._rewards.append(r)
        self._k = k + 1
        terminated = self._k >= J
        info = {
            "job": k, "start": start_k, "duration": dur_k, "completion": c_k, "worker_type": m, "num_workers": nw,
            "colocated": col, "weighted_completion": w * c_k, "reward_flow": -w * (c_k - a) / self.reward_scale,
        }
        if terminated:
            info["episode_metrics"] = self.episode_metrics()
            return np.zeros(self.observation_space.shape, dtype=np.float32), float(r), True, False, info
        if nv < 0:  # the next job's rows were not computed here: the observation's own path
            return self._observation(), float(r), False, False, info
        # _observation on the rows just computed (its fused branch)
        self._rows_step = None
        lg = np.log2(ratio[:nv])
        obs_space = self.observation_space
        out = np.empty(obs_space.shape[0], dtype=np.float32)
        K.observation(w1, E1, D1, K1, grad1, v[k1], psu[k1], ra1, a1, k1, J, now1, self.T, self.obs_relative, rec,
                      kc[0], kc[1], kc[2], kc[3], kc[6], rows_buf, mask, lg, self._no_mask, obs_space.low,
                      obs_space.high, out, bins)
        return out, float(r), False, False, info

    def step_quiet(self, action) -> tuple[float, bool, bool]:
        """:meth:`step` without building the observation and the info: returns ``(reward, terminated, truncated)``
        and leaves the env in exactly the state ``step(action)`` would (the same commit, ledger, rewards and step
        index; the observation's caches of the next job are filled on demand, by :meth:`observe` or the next
        step, with the same values). For look-ahead on forks, where most observations are never read."""
        r, terminated, _ = self._commit_step(action, want_info=False)
        return r, terminated, False

    def observe(self) -> np.ndarray:
        """The observation of the current state: what the last :meth:`step` (or :meth:`reset`) returned, also after
        :meth:`step_quiet` (zeros once the episode has terminated)."""
        if self._inst is None:
            raise RuntimeError("call reset() before observe()")
        if self._k >= self.jobs.num_jobs:
            return np.zeros(self.observation_space.shape, dtype=np.float32)
        return self._observation()

    def _commit_step(self, action, want_info: bool = True, fuse: bool = False):
        """:meth:`step` without the observation: commit the pending job with ``action`` and move to the next one.
        Returns ``(reward, terminated, info)`` (``info`` is ``None`` with ``want_info=False``, except on the
        episode's last step). ``fuse``: the next job's v1 rows are computed in the commit's compiled call
        (:meth:`_decode_commit`), for the observation that follows at once (:meth:`step`)."""
        if self._inst is None:
            raise RuntimeError("call reset() before step()")
        J = self.jobs.num_jobs
        if self._k >= J:
            raise RuntimeError("episode is over: call reset()")
        k = self._k
        w, _, _, _, _, _, a, _, now = self._job_scalars(k)
        if self.slot_driven:
            self._check_discrete(action)
            c = int(self._slot.completion[k])
            start, dur, m, n, col = int(self._slot.first_start[k]), c - int(self._slot.first_start[k]), -1, 0, False
        else:
            got = None
            if isinstance(action, Placement):
                pl = self.sim.commit(k, action, earliest=now)
            else:
                act = action if type(action) is int and 0 <= action < self.action_space.n else \
                    self._check_discrete(action)
                st = self._mask_step
                mask = st[1] if st is not None and st[0] == k else self._grid_mask_shared()
                if not mask[act]:  # an unmasked invalid action maps to the earliest-completion valid one
                    self._illegal += 1
                    act = self._earliest_valid(k, now, mask.copy())
                got = self._decode_commit(k, act, now, True) if fuse else self._decode_commit(k, act, now)
                if got is None:
                    # the decoded placement was computed on the exact residual capacity (feasible by
                    # construction; the differential tests check it against the reference search and T1)
                    pl = self.sim.commit(k, self._decode(k, act, now), earliest=now, validate=False)
            if got is None:
                c, start, dur = pl.completion, pl.start, pl.duration
                m, n, col = pl.worker_type, pl.num_workers, pl.colocated
            else:
                start, dur, m, n, col = got
                c = start + dur
        r = -w * (c - (a if self._flow else 0)) / self.reward_scale
        self._rewards.append(r)
        self._k += 1
        terminated = self._k >= J
        if not (want_info or terminated):
            return float(r), False, None
        info = {
            "job": k, "start": start, "duration": dur, "completion": c, "worker_type": m, "num_workers": n,
            "colocated": bool(col), "weighted_completion": w * c, "reward_flow": -w * (c - a) / self.reward_scale,
        }
        if terminated:
            info["episode_metrics"] = self.episode_metrics()
        return float(r), terminated, info

    def advance_earliest(self, steps: int | None = None, *, decide, total: float = 0.0,
                         actions: list | None = None, observe: bool = True) -> tuple[np.ndarray | None, int, float]:
        """Take up to ``steps`` steps (default: as many as there are) with ``earliest``'s actions (the valid grid
        action without delay of least estimated completion, :meth:`grid_estimates`; ``edgegym.agents.baselines.
        hetero_ml.Earliest``) in one compiled loop (:mod:`._advance`) that builds no observation on the way.

        The env is then exactly where those :meth:`step` calls would leave it (the same commits, ledger, rewards,
        return); the rewards are computed as :meth:`step` computes them. A step the loop cannot take on its compiled
        path (a price tie within rounding, or no valid action without delay) is taken with ``decide()``'s action (the
        policy's own decision on the env's current state) through :meth:`step`'s code. It never takes the episode's
        last step (call :meth:`step` for it). Returns ``(observation, steps taken, total + their rewards added in
        order)``: the observation of the decision point it stops at, as the last ``step`` would have returned it.
        ``actions``: a list that receives the action of every step taken, if given. ``observe=False``: the
        observation is not built (``None`` in its place; :meth:`observe` builds it on demand)."""
        if self.slot_driven:
            raise ValueError("advance_earliest() needs the reservation discipline (this env's decides in its slot "
                             f"driver: {self.preset.env.discipline!r})")
        if self._inst is None:
            raise RuntimeError("call reset() before advance_earliest()")
        if steps is not None and int(steps) < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        J = self.jobs.num_jobs
        n = max(0, J - 1 - self._k)
        n = n if steps is None else min(n, int(steps))
        total = float(total)
        taken = 0
        while taken < n:
            rewards, stopped = self._earliest_run(n - taken, actions)
            for r in rewards:
                total += r
            taken += len(rewards)
            if stopped and taken < n:  # the ordinary path for this one step
                a = decide()
                if actions is not None:
                    actions.append(a)
                r, _, _ = self._commit_step(a, want_info=False)
                total += r
                taken += 1
        if not observe:
            return None, taken, total
        obs = self._observation() if self._k < J else np.zeros(self.observation_space.shape, dtype=np.float32)
        return obs, taken, total

    def _earliest_run(self, n: int, actions: list | None = None) -> tuple[list, bool]:
        """Up to ``n`` steps of ``earliest`` in :func:`._advance.earliest_steps`, applied to the env as :meth:`step`
        applies a step (the kernel writes the simulator's arrays; the ledger's pending commits, the rewards and the
        step index are added here). Returns their rewards and whether it stopped before ``n`` steps because the
        next step needs the ordinary path; ``actions`` (a list), if given, receives their actions."""
        from . import _advance

        k0, jb = self._k, self.jobs
        self._job_scalars(k0)
        derived = self._jsc[2]  # shared by the forks with this jobs table
        tab = derived.get("earliest")
        if tab is None:  # D, W, decision time, U, π, w, a of every job, as _job_scalars has them
            cols = tuple(zip(*self._jsc[1], strict=True))
            tab = derived["earliest"] = (
                np.array(cols[2], dtype=np.int64), np.array(cols[7], dtype=np.float64),
                np.array(cols[8], dtype=np.int64), np.array(cols[5], dtype=np.float64),
                np.array(cols[4], dtype=np.float64), np.array(cols[0], dtype=np.float64),
                np.array(cols[6], dtype=np.int64))
        chunks, work, now_of, ra, grad, weight, arrival = tab
        grid = derived.get("earliest_grid")  # every job's configurations and mask, filled on demand by the kernel
        if grid is None:
            J, G = jb.num_jobs, self.n_grid
            grid = derived["earliest_grid"] = (np.zeros(J, dtype=bool), *(np.empty((J, G), dtype=np.int64)
                                                                          for _ in range(4)),
                                               np.empty((J, G), dtype=bool))
        pr = self._prof_step
        prof_k, prof = (pr[0], pr[1]) if pr is not None and pr[0] in (k0, k0 - 1) else (-1, self._no_prof)
        H, R = self._kc[0].shape
        act_o, start_o, dur_o = (np.empty(n, dtype=np.int64) for _ in range(3))
        r_o = np.empty(n)
        off_o, rows_o, fr_o = np.empty(n + 1, dtype=np.int64), np.empty(n * H, dtype=np.int64), np.empty((n * H, R))
        cnt, reason, pk, *prof = _advance.earliest_steps(
            self._rec(), self.sim.colocated, k0, n, *self._kc, chunks, work, jb.v, jb.ps_update, ra, grad, now_of,
            weight, arrival, self._flow, float(self.reward_scale), self._fracs, self._zf, self._feas, self._delays,
            self._est_free, self._est_caps, prof_k, *prof, *grid, act_o, start_o, dur_o, r_o, off_o, rows_o, fr_o)
        if pk >= 0:
            self._prof_step = (int(pk), tuple(prof))
        commit = self.sim.ledger.commit_rows
        for t, d, lo, hi in zip(start_o[:cnt].tolist(), dur_o[:cnt].tolist(), off_o[:cnt].tolist(),
                                off_o[1:cnt + 1].tolist(), strict=True):
            commit(rows_o[lo:hi], fr_o[lo:hi], t, t + d)  # views: the ledger only reads them
        if actions is not None:
            actions.extend(act_o[:cnt].tolist())
        rewards = r_o[:cnt].tolist()
        self._rewards.extend(rewards)
        self._k = k0 + int(cnt)
        return rewards, int(reason) != _advance.DONE

    def _check_discrete(self, action) -> int:
        if isinstance(action, np.ndarray) and action.shape == () or isinstance(action, np.generic):
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise ValueError(f"action must be an integer of {self.action_space} (or a Placement), got {action!r}")
        if not 0 <= int(action) < self.action_space.n:
            raise ValueError(f"action {action} outside {self.action_space}")
        return int(action)

    # ------------------------------------------------------------------ grid decoding
    def _grid_config(self, k: int, act: int):
        m, lvl, qm, di = np.unravel_index(act, self.grid_shape)
        D = int(self.jobs.chunks[k])
        n = int(min(D, max(1, math.ceil(D * self.preset.env.worker_fractions[lvl] - 1e-9))))
        spread = bool(qm == 1)
        p = ps_type_for(self.cluster, n, int(m), spread, self.jobs.ps_update[k]) if self.cluster.arch == "ps" else -1
        return int(m), n, spread, p, int(self.preset.env.delays[di])

    def _dur(self, k: int, m: int, p: int, n: int, q: bool) -> int:
        from .simulator import iteration_slots

        W = float(self.jobs.epochs[k] * self.jobs.chunks[k] * self.jobs.batches[k])  # W_j = E_j D_j K_j
        return duration_slots(W, n, iteration_slots(self.cluster, self.jobs, k, m, p, n, q))

    def _try(self, k, m, n, spread, p, t0):
        """Earliest start >= t0 (candidate times: t0 and later reservation ends) and the placement there: one
        compiled search (``_kernels.try_place``); the NumPy reference (``_reference.try_place``) decides when two
        servers' prices tie within rounding."""
        d = self._dur(k, m, p, n, not spread)
        wk = np.zeros(self.H, dtype=np.int64)
        ps = np.zeros(self.H, dtype=np.int64)
        K, rec = _kernels(), self._rec()
        st, t = K.try_place(rec, self._k, *self._kc, m, p, n, spread, d, int(t0), wk, ps)
        if st != 2:
            return (int(t), (wk, ps)) if st == 1 else None
        # a price tie within rounding at candidate t (every earlier candidate had no placement, whatever the
        # prices): NumPy's grid_place decides from there on, on the exact residuals
        ends = self.sim.completion[: self._k]
        for tc in np.unique(np.concatenate(([int(t)], ends[ends > t]))):
            free = K.window_free(rec, self._k, self._kc[0], self._kc[1], self._kc[2], self._kc[6], int(tc), d)
            got = grid_place(self.cluster, free, m, p, n, spread, self.lam)
            if got is not None:
                return int(tc), got
        return None

    def _rec(self) -> tuple:
        """The committed reservations as the kernels read them: start, duration, workers, PSs, worker and PS type,
        and the servers each job uses (``_jptr/_jsrv``, listed on demand by the kernels: a cache of workers/PSs)."""
        s = self.sim
        return s.start, s.duration, s.workers, s.ps, s.worker_type, s.ps_type, self._jptr, self._jsrv

    def _decode(self, k: int, act: int, now: int) -> Placement:
        m4, n4, q4, p4 = self._job_cfg()
        m, n, spread, p = int(m4[act]), int(n4[act]), bool(q4[act] == 1), int(p4[act])
        delay = int(self.preset.env.delays[act % self.n_delays])
        got = self._try(k, m, n, spread, p, now + delay)
        if got is None:  # cannot happen for a masked action (the cluster empties after the last reservation)
            raise RuntimeError(f"no start found for a valid action {act}")
        t, (wk, ps) = got
        return Placement(t, 0, m, p, wk, ps)

    def _decode_commit(self, k: int, act: int, now: int, fuse: bool = False):
        """:meth:`_decode` and the simulator's commit (without T1) in one compiled call
        (``_kernels.decode_commit``): ``(start, duration, worker type, workers, co-located)``, or ``None`` when the
        compiled search is ambiguous (a price tie within rounding: nothing was committed, the caller takes the
        exact path). ``fuse`` (v1): the same call also runs :meth:`_prepare_rows` of job ``k + 1``, if there is
        one (``_kernels.commit_prepare``), its rows left in the scratch buffers for the next :meth:`_observation`
        (``_rows_step``)."""
        cs = self._cfg_step
        m4, n4, q4, p4 = cs[1] if cs is not None and cs[0] == self._k else self._job_cfg()
        # Python ints (``item``: the same values as ``int(a[i])``, without a NumPy scalar in between)
        m, n, spread, p = m4.item(act), n4.item(act), q4.item(act) == 1, p4.item(act)
        jb, kc, sim = self.jobs, self._kc, self.sim
        _, _, _, _, grad, ra, _, W, _ = self._job_scalars(k)
        t0 = now + self._delays.item(act % self.n_delays)
        est = self._est_step
        if est is not None and est[0] == k and est[2].item(act) >= 1 and est[1].item(act) >= t0:
            # v1: grid_estimates already found the action's earliest start t* (the search's first candidate that
            # fits; none before it fits, whatever a price tie would decide there), so the search starts at t*
            t0 = est[1].item(act)
        pr = self._prof_step  # v1: the usage profiles of this state (``_prepare_rows``), for the search
        prof = pr[1] if pr is not None and pr[0] == k else self._no_prof
        if fuse:
            # one compiled call for the commit and the next job's rows (as _prepare_rows(k + 1) after the commit);
            # the episode's last commit too (no rows then), so a v1 episode loads no second commit kernel
            nxt = k + 1 < jb.num_jobs
            k1, G = k + 1 if nxt else k, self.n_grid
            _, _, D1, _, grad1, ra1, _, W1, now1 = self._job_scalars(k1)
            buf = np.empty((6, G), dtype=np.int64)  # worker type, workers, spread, PS type, start, duration
            cfg = (buf[0], buf[1], buf[2], buf[3])
            start, dur = buf[4], buf[5]
            mask = np.empty(G, dtype=bool)
            st, t, d, nw, col, rows, fr, nv, prof1 = _kernels().commit_prepare(
                self._rec(), sim.colocated, k, *kc, W, jb.v[k], jb.ps_update[k], ra, grad, m, p, n, spread, t0,
                *prof, nxt, D1, self._fracs, self._zf, self._feas, W1, jb.v[k1], jb.ps_update[k1], ra1, grad1, now1,
                self._delays, self._est_free, self._est_caps, *cfg, mask, start, dur, self._rows_buf,
                self._ratio_buf, self._bins_buf, *self._look_cache)
            if st != 1:
                return None
            if nv != -2:  # the caches _prepare_rows(k1) sets
                self._prof_step = (k1, prof1)
                self._cfg_step = (k1, cfg)
                self._mask_step = (k1, mask)
                if nv >= 0:
                    self._est_step = (k1, start, dur)
                self._rows_step = (k1, int(nv))
        else:
            st, t, d, nw, col, rows, fr = _kernels().decode_commit(
                self._rec(), sim.colocated, k, *kc, W, jb.v[k], jb.ps_update[k], ra, grad, m, p, n, spread, t0,
                *prof)
            if st != 1:
                return None
        sim.ledger.commit_rows(rows, fr, t, t + d)
        return int(t), int(d), m, int(nw), bool(col)

    def _earliest_valid(self, k: int, now: int, mask: np.ndarray) -> int:
        best, best_c = None, None
        for act in np.flatnonzero(mask):
            m, n, spread, p, delay = self._grid_config(k, int(act))
            if delay != self.preset.env.delays[0]:
                continue
            got = self._try(k, m, n, spread, p, now + delay)
            if got is None:
                continue
            t, (wk, ps) = got
            pl = Placement(t, 0, m, p, wk, ps)
            from .simulator import placement_duration

            c = t + placement_duration(self.cluster, self.jobs, k, pl)
            if best_c is None or c < best_c:
                best, best_c = int(act), c
        return best

    def action_key(self, action) -> tuple:
        """What ``action`` does at this decision point, as a hashable key: for a valid grid action, its
        configuration (worker type, workers, spread, PS type) and the slot its start search begins at, which is
        what :meth:`step` commits from. Grid actions that differ only in their delay share a key when their
        estimated starts (:meth:`grid_estimates`) are equal: the search then begins at that start for each (no
        earlier candidate fits, whatever a price tie decides there), so they give the same reward and the same
        next state, and a look-ahead simulates one of them (``rollout``). An invalid action, a ``Placement`` or a
        slot-driven env's action gets a key of its own. Nothing of the env changes (the estimates are cached as
        :meth:`grid_estimates` caches them)."""
        if self._inst is None:
            raise RuntimeError("call reset() before action_key()")
        if isinstance(action, Placement):
            return ("placement", id(action))
        act = self._check_discrete(action)
        if self.slot_driven or self._k >= self.jobs.num_jobs or not self._grid_mask_shared()[act]:
            return ("action", act)
        m4, n4, q4, p4 = self._job_cfg()
        t0 = self._decision_time(self._k) + int(self._delays[act % self.n_delays])
        start, dur = self.grid_estimates()
        if dur[act] >= 1 and start[act] >= t0:  # as ``_decode_commit`` takes it
            t0 = int(start[act])
        return int(m4[act]), int(n4[act]), int(q4[act]), int(p4[act]), t0

    def action_masks(self) -> np.ndarray:
        """Valid grid actions for the current job: feasible on an empty cluster. ``RuntimeError`` before
        :meth:`reset` (there is no job yet)."""
        st = self._mask_step
        if st is not None and st[0] == self._k and not self.slot_driven:
            # the pending job's cached mask (what _grid_mask copies: a cached mask names a job k < J of a reset env)
            return st[1].copy()
        if self._inst is None:
            raise RuntimeError("call reset() before action_masks()")
        if self.slot_driven:
            return np.ones(1, dtype=bool)
        return self._grid_mask()

    def _job_cfg(self):
        """Worker type, workers, spread flag (1 = spread) and derived PS type of every grid action of the pending
        job (flat, in grid order; compiled, cached per step).                                  # 4 x (n_grid,)"""
        st = self._cfg_step
        if st is not None and st[0] == self._k:
            return st[1]
        self._job_grid()
        return self._cfg_step[1]

    def _job_grid(self) -> None:
        """Compute and cache the pending job's grid configurations and action mask (one compiled call,
        ``_kernels.job_grid``; the reference is ``_reference.grid_configs`` and ``_reference.grid_mask``)."""
        k, G, kc = self._k, self.n_grid, self._kc
        cfg = tuple(np.empty(G, dtype=np.int64) for _ in range(4))
        mask = np.empty(G, dtype=bool)
        _kernels().job_grid(int(self.jobs.chunks[k]), self._fracs, self.n_delays, *kc[:6], kc[6], kc[7], self._zf,
                            self.jobs.ps_update[k], self._feas, *cfg, mask)
        self._cfg_step = (k, cfg)
        self._mask_step = (k, mask)

    def _prepare_rows(self, k: int, rows: np.ndarray, ratio: np.ndarray, js: tuple | None = None,
                      bins: np.ndarray = _NO_FLOATS) -> int:
        """The pending job's configurations, mask and grid estimates (cached as :meth:`_job_grid` and
        :meth:`grid_estimates` cache them) and its v1 rows before the area's log2 (``rows``, ``ratio``): one call of
        ``_kernels.prepare_rows``. Returns the number of valid actions, or -1 when the estimates need the reference
        (then only the configurations and the mask are cached); the servers' usage profiles at the decision time are
        kept for :meth:`_decode_commit` on this same state. ``js``: :meth:`_job_scalars` of ``k``, if at hand;
        ``bins``: receives the observation's lookahead bins at the decision time, unless empty."""
        G, kc, jb = self.n_grid, self._kc, self.jobs
        _, _, D, _, grad, ra, _, W, now = js if js is not None else self._job_scalars(k)
        buf = np.empty((6, G), dtype=np.int64)  # worker type, workers, spread, PS type, start, duration
        cfg = (buf[0], buf[1], buf[2], buf[3])
        start, dur = buf[4], buf[5]
        mask = np.empty(G, dtype=bool)
        pr = self._prof_step  # the previous decision's profiles (jobs < k - 1): only job k - 1's servers change
        nv, prof = _kernels().prepare_rows(
            self._rec(), k, *kc, D, self._fracs, self._zf, self._feas, W, jb.v[k], jb.ps_update[k], ra, grad, now,
            self._delays, self._est_free, self._est_caps, *cfg, mask,
            start, dur, rows, ratio, bins, *(pr[1] if pr is not None and pr[0] == k - 1 else self._no_prof),
            *self._look_cache)
        self._prof_step = (k, prof)  # the servers' usage profiles at ``now`` (read only), for ``_decode_commit``
        self._cfg_step = (k, cfg)
        self._mask_step = (k, mask)
        if nv >= 0:
            self._est_step = (k, start, dur)
        return int(nv)

    def _grid_mask_shared(self) -> np.ndarray:
        """The cached mask of the pending job itself (not a copy: read only)."""
        st = self._mask_step
        if st is not None and st[0] == self._k:
            return st[1]
        if self._inst is None or self._k >= self.jobs.num_jobs:
            return np.ones(self.n_grid, dtype=bool)
        mask = self._grid_mask()
        st = self._mask_step
        return st[1] if st is not None and st[0] == self._k else mask

    def _grid_mask(self) -> np.ndarray:
        """The action mask (compiled ``_kernels.grid_mask``; reference ``_reference.grid_mask``), cached per step."""
        if self._inst is None or self._k >= self.jobs.num_jobs:
            return np.ones(self.n_grid, dtype=bool)
        st = self._mask_step
        if st is None or st[0] != self._k:
            self._job_grid()
        return self._mask_step[1].copy()

    # ------------------------------------------------------------------ observation
    def _observation(self) -> np.ndarray:
        """The observation (compiled job block and lookahead bins, v1 rows from :meth:`grid_estimates`); equal
        (``==``) to ``_reference.observation``, the original NumPy encoder (the test oracle)."""
        k = min(self._k, self.jobs.num_jobs - 1)
        jb, kc = self.jobs, self._kc
        js = self._job_scalars(k)
        w, E, D, K_, grad, ra, a, _, now = js
        rmask, lg, mask, bins = self._no_mask, _NO_FLOATS, self._no_mask, _NO_FLOATS
        if not self.obs_actions:
            rows, mask = self._no_rows, self._grid_mask_shared()
        elif self.slot_driven or self._k >= jb.num_jobs:
            rows = self._action_rows()
        else:  # the rows before the area's log2 and the clip (both in the observation kernel)
            rows, ratio = self._rows_buf, self._ratio_buf
            nv = -1
            rs = self._rows_step
            if rs is not None:  # the step's commit computed this job's rows (``_decode_commit(fuse=True)``)
                self._rows_step = None
                if rs[0] == k:
                    bins = self._bins_buf
                    nv = rs[1]
            if nv == -1 and (self._cfg_step is None or self._cfg_step[0] != k):  # a new pending job: one call
                bins = self._bins_buf
                nv = self._prepare_rows(k, rows, ratio, js, bins)
            if nv >= 0:
                rmask = self._mask_step[1]
            else:
                rmask = self._grid_mask_shared()
                start, dur = self.grid_estimates()
                nv = _kernels().action_rows(int(jb.chunks[k]), self._decision_time(k), kc[0], kc[1], kc[2], kc[3],
                                            kc[4], kc[6], self._delays, *self._job_cfg(), rmask, start, dur, rows,
                                            ratio)
            lg = np.log2(ratio[:nv])
        out = np.empty(self.observation_space.shape[0], dtype=np.float32)
        _kernels().observation(
            w, E, D, K_, grad, jb.v[k], jb.ps_update[k], ra, a, self._k, jb.num_jobs, now,
            self.T, self.obs_relative, self._rec(), kc[0], kc[1], kc[2], kc[3], kc[6], rows, rmask, lg, mask,
            self.observation_space.low, self.observation_space.high, out, bins)
        return out

    # ------------------------------------------------------------------ v1: per-grid-action rows
    def _obs_layout(self) -> dict:
        """Where the v1 observation's blocks lie, for per-row policies (``edgegym.agents.rl.shared``): ``job`` and ``glob``
        are ``(start, stop)``; ``rows`` rows (one per grid action) of ``row_dim`` features from ``rows_start``;
        action ``r`` picks row ``r`` (``row_actions``), no other actions. Only with ``env.obs_actions`` (the
        attribute ``obs_layout`` exists only then)."""
        nr = len(ACTION_ROW_FEATURES)
        start = self._n_job + self.n_grid * nr
        return {"job": (0, self._n_job), "rows_start": self._n_job, "rows": self.n_grid, "row_dim": nr,
                "glob": (start, int(self.observation_space.shape[0])), "row_actions": True, "extra_actions": 0}

    def grid_estimates(self) -> tuple[np.ndarray, np.ndarray]:
        """Earliest start and duration (slots) of every grid action for the pending job, exactly as :meth:`step`
        would commit it (earliest start >= decision time + delay among that time and later reservation ends at
        which :func:`grid_place` fits; duration of the planned co-location), computed for all actions at once.
        Invalid actions: start -1, duration 0. Cached per step.                    # (n_grid,), (n_grid,)"""
        k = self._k
        if self._est_step is not None and self._est_step[0] == k:
            return self._est_step[1], self._est_step[2]
        jb = self.jobs
        mask = self._grid_mask_shared()
        start = np.empty(self.n_grid, dtype=np.int64)
        d_out = np.empty(self.n_grid, dtype=np.int64)
        st = _kernels().grid_estimates(
            self._rec(), k, *self._kc, float(jb.epochs[k] * jb.chunks[k] * jb.batches[k]), jb.v[k], jb.ps_update[k],
            float(jb.ra_update[k]),
            float(jb.grad_mb[k]), self._decision_time(k), self._delays, *self._job_cfg(), mask, start, d_out,
            self._est_free, self._est_caps)
        if st == 2:  # a price tie within rounding: the NumPy reference decides
            start, d_out = _reference.grid_estimates(self)
        self._est_step = (k, start, d_out)
        return start, d_out

    def _action_rows(self) -> np.ndarray:
        """The v1 per-grid-action rows (:data:`ACTION_ROW_FEATURES`; compiled, NumPy's log2 for ``area``; equal to
        ``_reference.action_rows``).                                                  # (n_grid, row features)"""
        rows = np.zeros((self.n_grid, len(ACTION_ROW_FEATURES)))
        if self.slot_driven or self._k >= self.jobs.num_jobs:
            return rows
        k = self._k
        mask = self._grid_mask()
        start, dur = self.grid_estimates()
        kc = self._kc
        ratio = np.empty(self.n_grid)
        nv = _kernels().action_rows(int(self.jobs.chunks[k]), self._decision_time(k), kc[0], kc[1], kc[2], kc[3],
                                    kc[4], kc[6], self._delays, *self._job_cfg(), mask, start, dur, rows, ratio)
        if nv:
            rows[mask, 8] = np.log2(ratio[:nv]) / 2.0
        return np.clip(rows, 0.0, OBS_HIGH)

    # ------------------------------------------------------------------ structured API
    def view(self) -> HeteroView:
        if self._inst is None:
            raise RuntimeError("call reset() before view()")
        k = min(self._k, self.jobs.num_jobs - 1)
        a = self.preset.aonline
        idl: IdealConfig = self.ideal
        return HeteroView(
            step=k, decision_time=self._decision_time(k), cluster=self.cluster, jobs=_jobs_prefix(self.jobs, k + 1),
            start=self.sim.start[:k].copy(), duration=self.sim.duration[:k].copy(), horizon_slots=self.T,
            alpha=a.alpha, F=a.F, lambda_override=a.lambda_override, weight_scale=a.weight_scale,
            tie_break=a.tie_break, tau_rule=a.tau, horizon_cap=a.horizon_cap, fifo_workers=self.preset.env.fifo_workers,
            ideal_worker_type=idl.worker_type[: k + 1].copy(), ideal_ps_type=idl.ps_type[: k + 1].copy(),
            ideal_workers=idl.workers[: k + 1].copy(),
        )

    def free_over(self, start: int, end: int) -> np.ndarray:
        """Residual capacity min over [start, end) of the committed schedule (a copy).                  # (H, R)"""
        return self.sim.ledger.free_over(int(start), int(end))

    def grid_action_of(self, pl: Placement) -> int:
        """Projection of a Placement onto the nearest grid action (for behaviour-cloning warm starts)."""
        k = self._k
        D = int(self.jobs.chunks[k])
        fr = np.array(self.preset.env.worker_fractions)
        lvl = int(np.argmin(np.abs(np.minimum(D, np.maximum(1, np.ceil(D * fr - 1e-9))) - pl.num_workers)))
        delay = pl.start - self._decision_time(k)
        di = int(np.argmin(np.abs(np.array(self.preset.env.delays) - delay)))
        return int(np.ravel_multi_index((pl.worker_type, lvl, 0 if pl.colocated else 1, di), self.grid_shape))

    # ------------------------------------------------------------------ metrics
    def _completions(self) -> np.ndarray:
        return self._slot.completion if self.slot_driven else self.sim.completion

    def lower_bound(self) -> float:
        """LB = Σ_j w_j (a_j + d_j^min), d^min the shortest standalone duration over all types, PS types and
        N <= D_j with the co-located rate, ignoring capacity: LB <= OPT."""
        jb, c = self.jobs, self.cluster
        if c.arch == "ps" and self._listed:
            return self._lower_bound_ps()
        lb = 0.0
        work, chunks, weight, arrival = jb.work.tolist(), jb.chunks.tolist(), jb.weight.tolist(), jb.arrival.tolist()
        if c.arch == "ps":
            it_all = (jb.v.min(axis=1) + jb.ps_update.min(axis=1)).tolist()  # per job: v.min() + U^p.min()
        for j in range(jb.num_jobs):
            D = chunks[j]
            if c.arch == "ps":
                d = math.ceil(float(work[j]) * it_all[j] / D - 1e-9)
            else:
                n = np.arange(1, D + 1)
                it = jb.v[j][:, None] + jb.ra_update[j] * (n - 1) / n
                d = int(np.ceil(float(work[j]) * it / n - 1e-9).min())
            lb += weight[j] * (arrival[j] + d)
        return lb

    def _lower_bound_ps(self) -> float:
        """:meth:`lower_bound` of the PS architecture in one compiled pass (``_instance_kernels.lower_bound_ps``: the
        loop's IEEE operations on the same numbers, added in job order; ~45 -> ~3 µs per call on 150 jobs, warm);
        the loop itself where an input is not finite or a term leaves float64's exact integers."""
        _instance_kernels = _compiled()[0]  # (kept after its first import: no importlib call per episode)
        jb = self.jobs
        if jb.v.dtype == np.float64 and jb.ps_update.dtype == np.float64 and jb.v.shape[1] and jb.ps_update.shape[1]:
            ok, lb = _instance_kernels.lower_bound_ps(jb.v, jb.ps_update, jb.work, jb.chunks, jb.weight, jb.arrival)
            if ok:
                return float(lb)
        return self._lower_bound_loop()

    def _lower_bound_loop(self) -> float:
        """:meth:`lower_bound`'s loop (the reference of :meth:`_lower_bound_ps`)."""
        listed = self._listed
        try:
            self._listed = False
            return self.lower_bound()
        finally:
            self._listed = listed

    def episode_metrics(self) -> dict:
        jb = self.jobs
        comp = self._completions().astype(np.float64)
        w, a = jb.weight, jb.arrival.astype(np.float64)
        obj = float(np.sum(w * comp))
        offset = float(np.sum(w * a)) if self.preset.env.reward == "flow" else 0.0
        flow = comp - a
        lb = self.lower_bound()
        out = {
            "objective": obj,
            "weighted_flow_time": float(np.sum(w * flow)),
            "objective_offset": offset,
            "reward_scale": float(self.reward_scale),
            "num_jobs": int(jb.num_jobs),
            "offered_load": float(self._inst.offered_load),
            "lower_bound": lb,
            "ratio_lb": obj / lb if lb > 0 else float("nan"),
            "avg_jct": float(flow.mean()),
            "p95_jct": _p95(flow) if self._listed else float(np.percentile(flow, 95)),
            "makespan": float(comp.max()),
            "frac_after_T": float(np.mean(comp > self.T)),
            "illegal_actions": int(getattr(self, "_illegal", 0)),  # invalid grid actions mapped to a valid one
        }
        if not self.slot_driven:
            s = self.sim
            if self._listed:  # the same integer sums from the servers each job uses (``_kernels.job_workers``)
                nw = np.empty(s.workers.shape[0], dtype=s.workers.dtype)
                _kernels().job_workers(self._k, self._rec(), nw)
            else:
                nw = s.workers.sum(axis=1)
            out["avg_workers"] = float(nw.mean())
            out["frac_colocated"] = float(s.colocated.mean())
            end = int(comp.max())
            out["utilisation_gpu"] = self._gpu_utilisation(1, max(2, end))
        else:
            out["preemptions"] = int(self._slot.preemptions)
            out["utilisation_gpu"] = float(self._slot.gpu_utilisation)
        return out

    def _gpu_utilisation(self, start: int, end: int) -> float:
        """``sim.ledger.utilisation(start, end)[0]`` (mean used GPU fraction): from the reservations (compiled, an
        exact integer sum) when every worker and PS type has a whole number of GPUs, else from the dense ledger."""
        wres, pres = self._kc[1], self._kc[2]
        g = np.concatenate([wres[:, 0], pres[:, 0]])
        if not np.all(g == np.floor(g)) or float(np.abs(g).max(initial=0.0)) * self.H * (end - start) > 2.0 ** 50:
            return float(self.sim.ledger.utilisation(start, end)[0])
        busy = (_kernels().gpu_busy_listed if self._listed else _kernels().gpu_busy)(
            self._k, self._rec(), wres, pres, self._kc[6], int(start), int(end))
        tot = max(float(self.cluster.capacity[:, 0].sum()), 1e-12)
        return float(busy / tot / max(1, end - start))

    def episode_return(self) -> float:
        return float(sum(self._rewards))

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        from .rendering import render_gantt

        return render_gantt(self)

    def fork(self, seed: int = 0, future: str = "resample") -> HeteroMLEnv:
        """An independent env in exactly the current state (mid-episode), for look-ahead planning.

        ``future="keep"``: the jobs that have not arrived yet are the true ones; the fork is marked ``clairvoyant``
        (for analysis and bounds only). ``future="resample"`` (default): they are redrawn, deterministically from
        ``seed``, from the preset's own workload model: a new instance is drawn by the preset's generator and its
        jobs (and their ideal configurations) after the pending one replace the true future; their arrival slots
        are drawn uniformly on [pending job's arrival, horizon] and sorted (the preset draws every arrival
        uniformly on [1, horizon]). The cluster is this episode's and the number of jobs stays the same. A
        slot-driven baseline's schedule is recomputed on the spliced jobs. See :mod:`edgegym.core.forking`.
        """
        from .fork import fork

        return fork(self, seed=seed, future=future)
