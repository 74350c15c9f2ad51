"""``EdgeCloudML``: the edge-cloud model of Wang et al. (JSAC 2022) as a Gymnasium env, one step per arriving job.

Paper: Wang et al., "Preemptive Scheduling for Distributed Machine Learning Jobs in Edge-Cloud Networks",
IEEE JSAC 40(8), 2022. At each step the agent decides how the arriving job's D_j data chunks are split over the
edge servers and the cloud; within a server, chunks go to workers by the paper's own Q-min rule (water-filling,
A_greedy, Sec. IV-C), and workers run HAPRF preemptively.

Reward (potential-based marginal cost): ``-(Φ_after − Φ_before) / reward_scale`` where Φ is
the projected total JCT of the placed jobs with no further arrivals. Execution between arrivals matches
the projection exactly, so the undiscounted return is ``-Σ_j (c_j − r_j) / reward_scale``.

Episodes end (``terminated``) after the last job is placed; the simulator then drains analytically (no
time loop), so ``truncated`` is never set.

Job-level baselines (``discipline`` ∈ {srtf, tiresias_l, batchsche}) decide everything inside the
simulator; the action space is then ``Discrete(1)`` and the reward is the time integral of the number of
jobs in the system between arrivals, which sums to the same objective.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ...core.actions import check_box_action, check_discrete_action
from ...core.metrics import ScheduleOutcome, episode_metrics, utilisation_series
from ...core.types import Cluster, JobSet
from ...core.validation import check_config_mapping
from .instance import build_instance
from .presets import Preset, discipline_kwargs, load_preset
from .simulator import Candidates, PaperSimulator, _kernels, greedy_placement, water_fill

__all__ = ["EdgeCloudMLEnv", "EdgeCloudView", "largest_remainder", "observation_features"]

_OBS_HIGH = 10.0
_L = _OBS_HIGH  # upper bound of the scaled-log features (the observation is clipped to [0, 10])

#: the arriving job's features (index, then the two one-hot blocks of ``max_types`` each)
_JOB_FEATURES = (
    ("chunks", "D_j / env.max_chunks: the job's number of data chunks", 0.0, 1.0),
    ("log_work_per_chunk", "log1p(epochs_j × batches per chunk) / 10", 0.0, _L),
    ("log_p_edge", "log1p(p_j^0) / 6: processing time of one chunk on an edge worker (hours)", 0.0, _L),
    ("log_p_cloud", "log1p(p_j^1) / 6: processing time of one chunk in the cloud (hours)", 0.0, _L),
    ("log_total_edge_work", "log1p(D_j × p_j^0) / 10: the whole job on one edge worker (hours)", 0.0, _L),
    ("cloud_speedup", "(p_j^0 − p_j^1) / p_j^0: relative speed-up of a chunk in the cloud", 0.0, 1.0),
    ("qualified_share", "qualified edge workers (the job's worker type) / all edge workers", 0.0, 1.0),
    ("log_cloud_upload", "log1p(d_j^cloud) / 3: upload delay to the cloud (hours)", 0.0, _L),
    ("log_qualified", "log1p(number of qualified edge workers) / 5", 0.0, _L),
)
#: per row (edge server s = 0..S_max−1, then the cloud)
_ROW_FEATURE_LIST = (
    ("upload", "log1p(upload delay to the server) / 3 (hours; cloud row: to the cloud)", 0.0, _L),
    ("qualified", "log1p(qualified workers on the server) / 3 (cloud row: 0)", 0.0, _L),
    ("idle", "log1p(idle qualified workers on the server) / 3 (cloud row: 0)", 0.0, _L),
    ("min_wait", "log1p(min over its qualified workers of the queued higher-priority work) / 6 (hours)", 0.0, _L),
    ("min_delay_caused", "log1p(min of p_j^0 × Σ_{A2} 1/D) / 6: delay this job causes lower-priority jobs",
     0.0, _L),
    ("min_q", "log1p(min Q_w) / 6: the paper's marginal cost of one chunk (cloud row: (d+p^0)/D_j)", 0.0, _L),
    ("backlog", "log1p(queued work on the server) / 8 (hours; cloud row: log1p((d+p^1)/D_j) / 6)", 0.0, _L),
    ("eligible", "1 if the row is a legal target (the action mask of the row)", 0.0, 1.0),
)
_GLOBAL_FEATURE_LIST = (
    ("log_time", "log1p(current time) / 8 (hours since the first arrival)", 0.0, _L),
    ("in_system", "jobs placed and not finished / number of jobs", 0.0, 1.0),
    ("log_backlog", "log1p(queued work over all qualified workers) / 10 (hours)", 0.0, _L),
    ("remaining", "(number of jobs − index of this job) / number of jobs", 0.0, 1.0),
    ("busy", "busy edge workers / all edge workers", 0.0, 1.0),
)
_ROW_FEATURES = len(_ROW_FEATURE_LIST)
_GLOBAL_FEATURES = len(_GLOBAL_FEATURE_LIST)
_JOB_BASE_FEATURES = len(_JOB_FEATURES)


def _feature_list(max_types: int, max_edge_servers: int) -> list[tuple[str, str, float, float]]:
    f = list(_JOB_FEATURES)
    f += [(f"worker_type[{t}]", f"1 if the job needs worker type {t} (one-hot; the last also means ≥ {t})", 0.0,
           1.0) for t in range(max_types)]
    f += [(f"ps_type[{t}]", f"1 if the job needs parameter-server type {t} (one-hot)", 0.0, 1.0)
          for t in range(max_types)]
    for s in range(max_edge_servers + 1):
        row = "cloud" if s == max_edge_servers else f"server[{s}]"
        f += [(f"{row}.{name}", meaning, lo, hi) for name, meaning, lo, hi in _ROW_FEATURE_LIST]
    f += list(_GLOBAL_FEATURE_LIST)
    return f


def observation_features(preset: Preset | str = "sim100") -> list[tuple[str, str, float, float]]:
    """One ``(name, meaning, low, high)`` per observation index, in order, for a preset (name, path or object).

    The encoder allocates the observation from this list (its length is the observation size), so the
    documented table cannot drift from the code. Rows are padded to ``env.max_edge_servers`` (default: the
    preset's number of edge servers); padded rows are zero.
    """
    p = preset if isinstance(preset, Preset) else load_preset(preset)
    S = p.cluster.num_edge_servers
    return _feature_list(p.env.max_types, p.env.max_edge_servers if p.env.max_edge_servers is not None else S)
_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # Box actions decoded without check_box_action
#: ``cloud_fraction`` action mode: actions 0..K send round(k/K · D_j) chunks to the cloud, action K+1 is A_greedy
CLOUD_LEVELS = 4


def largest_remainder(weights: np.ndarray, total: int) -> np.ndarray:
    """Integer counts summing to ``total``, proportional to ``weights`` (largest-remainder rounding).

    Ties in the remainder go to the lower index (so the cloud, the last row, loses exact ties).
    """
    w = np.asarray(weights, dtype=float)
    x = w / w.sum() * total
    base = np.floor(x + 1e-9).astype(np.int64)
    short = total - int(base.sum())
    if short > 0:
        frac = x - base
        order = np.lexsort((np.arange(w.size), -np.round(frac, 9)))
        order = [i for i in order if w[i] > 0][:short]
        base[order] += 1
    elif short < 0:  # floating excess: take from the smallest remainders
        frac = x - base
        for i in np.lexsort((-np.arange(w.size), np.round(frac, 9)))[:-short]:
            base[i] -= 1
    return base


@dataclass(frozen=True, slots=True)
class EdgeCloudView:
    """Read-only view of the simulator at a decision point (numpy copies and scalars, never live objects).

    Reference policies read it through ``env.unwrapped.view()``; every array is a copy. ``view(copy=False)``
    gives the same values with read-only arrays (``writeable=False``) that are not copied, valid until the next
    ``step``/``reset`` (what ``AOnline`` uses).
    """

    now: float
    job: int
    num_chunks: int
    p_edge: float
    p_cloud: float
    q: np.ndarray  # (W,) Q_w^(0) of the arriving job, inf where not qualified
    t_star: np.ndarray  # (W,)
    a2_count: np.ndarray  # (W,)
    qc0: float
    qc1: float
    worker_server: np.ndarray  # (W,)
    worker_order: np.ndarray  # (W,) tie-break rank: position in (server, index) order
    server_eligible: np.ndarray  # (S_max + 1,) bool, last = cloud
    use_cloud: bool
    has_cloud: bool
    num_edge_servers: int
    max_edge_servers: int
    action_mode: str
    max_chunks: int


#: the slot setters of :class:`EdgeCloudView`, in field order (``view(copy=False)`` builds a view through them)
_VIEW_SETTERS = tuple(EdgeCloudView.__dict__[f.name].__set__ for f in dataclasses.fields(EdgeCloudView))


def _prefix(a: np.ndarray, n: int) -> np.ndarray:
    """``prefix_copy(a, n)`` of a 1-D buffer (the first ``n`` entries copied, zeros after) in three NumPy calls."""
    out = np.empty_like(a)
    out[:n] = a[:n]
    out[n:] = 0
    return out


def _prefix_cols(a: np.ndarray, n: int) -> np.ndarray:
    """A 2-D buffer like ``a`` with its first ``n`` columns copied and the rest unset (not zeroed, unlike
    ``prefix_copy(a, n, axis=1)``): for the workers' plans, whose columns past the longest plan no kernel reads (a
    worker's plan is ``[phead, plen)``); zeroing them wrote ~330 KB per fork of an ``EdgeCloudML-v1`` state."""
    out = np.empty(a.shape, dtype=a.dtype)
    out[:, :n] = a[:, :n]
    return out


class _Spent:
    """The candidate table of an env left at a look-ahead's horizon (``advance_aonline(last=True)``): it has no
    next decision point, and any use of it raises."""

    __slots__ = ()

    def __getattr__(self, name):
        raise _spent_error()


def _spent_error() -> RuntimeError:
    return RuntimeError("this env was left at the end of a look-ahead (advance_aonline(last=True) took every step "
                        "it was asked for and did not prepare the next decision point): drop it, or reset() it")


#: the candidate table of a spent env (see :class:`_Spent`)
_SPENT = _Spent()


def _placement_of_key(key: tuple[bytes, int]) -> tuple[np.ndarray, int]:
    """``(worker counts, cloud chunks)`` of an :meth:`EdgeCloudMLEnv.action_key`, the counts as a writable int64 array
    (a read-only one would be another type for the compiled loop: a second compile)."""
    return np.frombuffer(key[0], dtype=np.int64).copy(), key[1]


def _share(v, env):
    """A ``fork_env`` copy function that shares ``v`` (the fork replaces it before anyone writes to it)."""
    return v


class EdgeCloudMLEnv(gym.Env):
    """The edge-cloud ML cluster of Wang et al. (JSAC 2022), one step per arriving job.

    Args:
        preset: a :class:`~edgegym.config.Preset`, a shipped preset name (``"tiny"``, ``"testbed"``,
            ``"sim100"``) or a path to a YAML preset.
        config: overrides per section, e.g. ``{"env": {"action_mode": "cloud_split"}}``, validated like a file.
        instance: a fixed ``(Cluster, JobSet)`` to run instead of drawing one from the preset at reset.
        render_mode: ``None`` or ``"rgb_array"`` (a Gantt chart of the edge workers, needs ``edgegym[plot]``).
        info_details: add ``info["alpha"]`` (the job's per-chunk dual values, length D_j) to each step's info;
            off by default so that every info value has a fixed shape (vector envs).
        keep_schedule: keep the executed schedule of the whole episode (default), for rendering, the utilisation
            series of :meth:`episode_series` and the simulator's ``segments()``. ``False``: memory bounded by the
            jobs in the system instead of the history (long trace replays): the simulator keeps only what the
            metrics and A_ps need (see :class:`~.simulator.PaperSimulator`); every decision, reward and metric is
            the same, except ``utilisation``, whose busy time is then summed exactly (it may differ from the
            NumPy sum in the last digit), and an empty utilisation series. Not with ``render_mode``.

    Observation: ``Box`` float32 of ``job features | (S_max+1) server rows × 8 | 5 global features``
    (padded rows are zero and masked). Action: ``server_proportions`` Box(0, 1, (S_max+1,)) or
    ``cloud_split`` Discrete(max_chunks+1); ``action_masks()`` gives the legal rows / values.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        preset: Preset | str = "sim100",
        config: dict | None = None,
        instance: tuple[Cluster, JobSet] | None = None,
        render_mode: str | None = None,
        info_details: bool = False,
        keep_schedule: bool = True,
    ) -> None:
        super().__init__()
        self.keep_schedule = bool(keep_schedule)
        if render_mode is not None and not self.keep_schedule:
            raise ValueError(f"render_mode {render_mode!r} draws the executed schedule: it needs keep_schedule=True")
        #: add the variable-length ``info["alpha"]`` (one dual value per chunk) to each step's info (off: every
        #: info value has a fixed shape, as vector envs need; ``alpha_sum`` is always there)
        self.info_details = bool(info_details)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r} is not supported (supported: None, 'rgb_array')")
        self.render_mode = render_mode
        p = preset if isinstance(preset, Preset) else load_preset(preset)
        check_config_mapping(config, p.source_file)
        if config:
            p = p.replace(**config)
        self.preset = p
        self._instance = instance
        ecfg = p.env
        S = instance[0].num_edge_servers if instance else p.cluster.num_edge_servers
        self.num_edge_servers = S
        self.max_edge_servers = ecfg.max_edge_servers if ecfg.max_edge_servers is not None else S
        if S > self.max_edge_servers:
            raise ValueError(f"instance has {S} edge servers, env.max_edge_servers is {self.max_edge_servers}")
        self.action_mode = ecfg.action_mode
        self.discipline = ecfg.discipline
        self.use_cloud = ecfg.use_cloud
        self.max_types = ecfg.max_types
        self.max_chunks = ecfg.max_chunks
        self.reward_scale = ecfg.reward_scale
        rows = self.max_edge_servers + 1
        self._job_dim = _JOB_BASE_FEATURES + 2 * self.max_types
        #: the named observation features, one per index (``observation_features(preset)``)
        self.features = _feature_list(self.max_types, self.max_edge_servers)
        obs_dim = len(self.features)
        # every feature is a share, a flag or a scaled log1p of a time: bounded by 10 for any realistic instance
        self.observation_space = spaces.Box(0.0, _OBS_HIGH, shape=(obs_dim,), dtype=np.float32)
        if self.discipline != "paper":
            self.action_space = spaces.Discrete(1)
        elif self.action_mode == "server_proportions":
            self.action_space = spaces.Box(0.0, 1.0, shape=(rows,), dtype=np.float32)
        elif self.action_mode == "cloud_fraction":
            self.action_space = spaces.Discrete(CLOUD_LEVELS + 2)
        else:
            self.action_space = spaces.Discrete(self.max_chunks + 1)
        self.sim: PaperSimulator | None = None
        self.cluster: Cluster | None = None
        self.jobs: JobSet | None = None
        self._cand: Candidates | None = None
        self._outcome: ScheduleOutcome | None = None
        self._return = 0.0
        self._J = 0  # jobs of the episode (set at reset)

    @property
    def _outcome(self) -> ScheduleOutcome | None:
        """The episode's outcome (``None`` before its end under the ``paper`` discipline). A look-ahead fork
        (``fork(history=False)``) that ends its episode by :meth:`step_quiet` drains its simulator here, the first
        time the outcome is read, rather than at that step (:attr:`_lazy_drain`)."""
        d = self.__dict__
        if d.get("_drain_due"):
            d["_drain_due"] = False
            d["_outcome_value"] = self.sim.drain()
        return d.get("_outcome_value")

    @_outcome.setter
    def _outcome(self, value: ScheduleOutcome | None) -> None:
        self.__dict__["_drain_due"] = False
        self.__dict__["_outcome_value"] = value

    #: whether :meth:`step_quiet`'s last step leaves the drain (A_ps's schedule of the whole episode, ~1 ms on
    #: ``EdgeCloudML-v1``) until the outcome is first read: on look-ahead forks (``fork(history=False)``), whose
    #: last quiet step is scored by its reward alone (the drain changes no reward). False: drained at that step
    _lazy_drain = False

    @property
    def np_random(self) -> np.random.Generator:
        """gymnasium's ``Env.np_random``. A fork shares its parent's generator until one of them uses it (only
        ``reset`` draws from it): that one then takes a copy in the same state."""
        from ...core.forking import own_generator

        own_generator(self, "_np_random")
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._rng_shared = False
        gym.Env.np_random.fset(self, value)

    # ----------------------------------------------------------- episode
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Draw (or take) the cluster and the job set, then stop at the first arrival."""
        super().reset(seed=seed)
        rng = self.np_random
        if self._instance is not None:
            self.cluster, self.jobs = self._instance
        else:
            self.cluster, self.jobs = build_instance(self.preset, rng)
        cl, jobs = self.cluster, self.jobs
        if cl.num_edge_servers > self.max_edge_servers:
            raise ValueError(
                f"cluster has {cl.num_edge_servers} edge servers > max_edge_servers {self.max_edge_servers}"
            )
        if cl.num_worker_types > self.max_types or cl.num_ps_types > self.max_types:
            raise ValueError(f"the cluster has more worker/PS types than env.max_types={self.max_types}")
        if jobs.num_chunks.max() > self.max_chunks:
            raise ValueError(f"a job has {jobs.num_chunks.max()} chunks > env.max_chunks={self.max_chunks}")
        if not cl.has_cloud:
            missing = np.flatnonzero(~np.isin(jobs.worker_type, cl.worker_type))
            if missing.size:
                j = int(missing[0])
                raise ValueError(
                    f"job {j} needs worker type {int(jobs.worker_type[j])}, which no edge worker has, and the "
                    "cluster has no cloud: the job could never run"
                )
        ps_rng = np.random.default_rng(rng.integers(2**63))
        self.sim = PaperSimulator(cl, jobs, speed=self.preset.env.speed, slotted=self.preset.env.slotted, rng=ps_rng,
                                  keep_schedule=self.keep_schedule)
        order = np.empty(cl.num_workers, dtype=np.int64)
        order[np.lexsort((np.arange(cl.num_workers), cl.worker_server))] = np.arange(cl.num_workers)
        self._order = order
        # edge workers of each server, in (server, index) order                     # S arrays
        by_server = np.argsort(cl.worker_server, kind="stable")
        bounds = np.searchsorted(cl.worker_server[by_server], np.arange(cl.num_edge_servers + 1))
        self._server_workers = [by_server[bounds[s] : bounds[s + 1]] for s in range(cl.num_edge_servers)]
        self._srv_ptr, self._srv_workers = bounds.astype(np.int64), by_server.astype(np.int64)  # CSR of the above
        self._prepare_buffers()
        self._rows_cache = None
        self._outcome = None
        self._return = 0.0
        self._fallbacks = 0
        self._illegal = 0
        if self.discipline != "paper":
            from .disciplines import DISCIPLINES

            self._outcome = DISCIPLINES[self.discipline](
                cl, jobs, speed=self.preset.env.speed, rng=np.random.default_rng(rng.integers(2**63)),
                **discipline_kwargs(self.preset),
            )
        self._k = 0
        self._prepare_step()
        return self._observation(), {"job": 0, "action_mask": self.action_masks()}

    def _prepare_buffers(self) -> None:
        """Per-episode arrays and preallocated buffers of the compiled observation and action decoding."""
        cl = self.cluster
        W, S = cl.num_workers, cl.num_edge_servers
        self._W = W
        self._prepare_job_arrays()
        self._build_type_index()
        self._worker_server = np.ascontiguousarray(cl.worker_server, dtype=np.int64)  # (W,)
        self._obs64 = np.zeros(self.observation_space.shape[0])  # float64 before the clip and the cast
        self._pre = np.zeros((7, S))  # arguments of the per-server log1p
        self._lg = np.zeros((7, S))
        self._scratch = np.zeros(max(W, 1))
        self._rows_buf = np.zeros(self.max_edge_servers + 1, dtype=bool)
        self._wts = np.zeros(self.max_edge_servers + 1)
        self._no_cand = np.zeros(0)
        self._has_cloud, self._use_cloud = bool(cl.has_cloud), bool(self.use_cloud)
        self._relative = bool(self.preset.env.obs_relative)
        # read-only copies for the cached view (view(copy=False))
        self._ro_server = np.array(cl.worker_server, copy=True)
        self._ro_order = self._order.copy()
        for a in (self._ro_server, self._ro_order):
            a.flags.writeable = False

    def _prepare_job_arrays(self) -> None:
        """The part of :meth:`_prepare_buffers` read from the job table (a resampled future rebuilds only this, and
        the workers-by-type index if the redrawn jobs need more worker types than it covers)."""
        jobs = self.jobs
        self._J = jobs.num_jobs  # the number of jobs (a resampled future keeps it)
        f64 = np.float64
        self._jd = np.ascontiguousarray(jobs.num_chunks, dtype=f64)  # (J,) D_j
        self._jdc = np.ascontiguousarray(jobs.upload_delay_cloud_slots, dtype=f64)  # (J,)
        self._jwork = np.ascontiguousarray(jobs.epochs * jobs.batches_per_chunk, dtype=f64)  # (J,)
        self._jwt = np.ascontiguousarray(jobs.worker_type, dtype=np.int64)  # (J,)
        self._jpst = np.ascontiguousarray(jobs.ps_type, dtype=np.int64)  # (J,)
        self._view_cache = None

    def _type_count(self) -> int:
        """The worker types the workers-by-type index covers: up to the largest type of a worker or a job."""
        wt = self.cluster.worker_type
        return int(max(wt.max(initial=-1), self._jwt.max(initial=-1))) + 1

    def _build_type_index(self) -> None:
        """The edge workers of each worker type, in index order (the pure version's np.flatnonzero): CSR."""
        wt = np.asarray(self.cluster.worker_type, dtype=np.int64)
        n_types = self._type_count()
        by_type = np.argsort(wt, kind="stable").astype(np.int64)
        self._type_ptr = np.searchsorted(wt[by_type], np.arange(n_types + 1)).astype(np.int64)  # (T+1,)
        self._type_workers = by_type  # (W,)

    def _prepare_step(self) -> None:
        j = self._k
        if j < self._J:
            if self.discipline == "paper" and self._fused_prepare:  # advance_to, then candidates, in one call
                self._cand = self.sim.advance_and_candidates(float(self.jobs.arrival_slots[j]), j)
            else:
                self.sim.advance_to(float(self.jobs.arrival_slots[j]))
                self._cand = self.sim.candidates(j) if self.discipline == "paper" else None

    #: the next decision point by :meth:`~.simulator.PaperSimulator.advance_and_candidates` (one compiled call);
    #: False: ``advance_to`` then ``candidates`` (the reference for the differential tests: the same state)
    _fused_prepare = True

    def step(self, action):
        """Place the current job per ``action``, advance to the next arrival, return the reward."""
        reward, terminated, info = self._place_and_advance(action, True)
        if terminated:
            obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        else:
            obs = self._observation()
        info["action_mask"] = self.action_masks()  # the same shape at every step (vector envs stack it)
        return obs, float(reward), terminated, False, info

    def step_quiet(self, action) -> tuple[float, bool, bool]:
        """:meth:`step` without the observation and the info: ``(reward, terminated, truncated)``, the env left in
        the state ``step(action)`` leaves it in (the placement, the clock, Φ, the return, the counters, the drain
        at the last job). Only what the observation computes lazily (the completion heap's finished entries, the
        cached legal rows) is left for later, and, on a look-ahead fork (``fork(history=False)``), the drain at the
        last job (run when the outcome is first read); :meth:`observe` then returns what ``step`` would have
        returned. For look-ahead that does not read every observation (``rollout``'s first step of a candidate)."""
        reward, terminated, _ = self._place_and_advance(action, False)
        return float(reward), terminated, False

    def observe(self) -> np.ndarray:
        """The observation of the current state: what the last :meth:`step` (or :meth:`step_quiet`, or
        :meth:`reset`) returned or would have returned (zeros once the episode has terminated)."""
        if self.sim is None:
            raise RuntimeError("call reset() before observe()")
        if self._cand is _SPENT:
            raise _spent_error()
        if self._k >= self._J:
            return np.zeros(self.observation_space.shape, dtype=np.float32)
        return self._observation()

    def _place_and_advance(self, action, details: bool) -> tuple[float, bool, dict | None]:
        """The state change of :meth:`step`: place the current job per ``action`` and advance to the next arrival
        (the drain after the last job). Returns ``(reward, terminated, info)``; ``details=False``: no info
        (``None``)."""
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        if self._k >= self._J:
            raise RuntimeError("the episode has terminated; call reset()")
        if self._cand is _SPENT:
            raise _spent_error()
        j = self._k
        info: dict | None = {"job": j} if details else None
        if self.discipline == "paper":
            before = self._fallbacks
            counts, n_cloud, server_counts = self._decode(action, details)
            if self._fallbacks == before:
                rows = self._legal_rows()
                first = rows.argmax()  # the first legal row (0 when none): rows[:-1].any() without a reduction
                if not (first < rows.size - 1 and rows[first]):
                    self._fallbacks += 1  # no qualified edge worker: the job had to go to the cloud (unspecified)
            rec = self.sim.place(j, counts, n_cloud, self._cand)
            reward = -rec["delta_phi"] / self.reward_scale
            if details:
                info.update(
                    placement=server_counts,
                    zeta=rec["zeta"],
                    alpha_sum=float(_kernels().pairwise_sum(rec["alpha"], 0, rec["alpha"].size)),  # == np.sum
                    projected_jct=rec["projected_jct"],
                    postponed_chunks=rec["postponed_chunks"],
                    reward_projected_jct_increase=rec["delta_phi"],
                )
                if self.info_details:
                    info["alpha"] = rec["alpha"]
        else:
            self._check_discrete(action)
            reward = -self._integral_reward(j) / self.reward_scale
        self._return += reward
        self._k += 1
        terminated = self._k >= self._J
        if not terminated:
            self._prepare_step()
        elif self.discipline == "paper":
            if details or not self._lazy_drain:
                self._outcome = self.sim.drain()
            else:  # run by the first read of ``_outcome``: the same outcome, none of this step's returns need it
                self._outcome = None
                self._drain_due = True
        if terminated and details:
            metrics = episode_metrics(self.jobs.arrival_slots, self._outcome, self.cluster.num_workers)
            if self.discipline == "paper" and not self.keep_schedule:  # no segments: the busy time kept
                busy, W = self.sim.busy_time, self.cluster.num_workers
                span = metrics["makespan"]
                metrics["utilisation"] = float(busy / (W * span)) if W and span > 0 else 0.0
            metrics["objective"] = metrics["total_jct"]
            metrics["fallbacks"] = self._fallbacks + int(self._outcome.extra.get("fallbacks", 0))
            metrics["illegal_actions"] = self._illegal
            metrics["reward_scale"] = self.reward_scale
            info["episode_metrics"] = metrics
        return reward, terminated, info

    def advance_aonline(self, steps: int | None = None, *, edge_only: bool = False, total: float = 0.0,
                        observe: bool = True, first: tuple[bytes, int] | None = None, last: bool = False
                        ) -> tuple[np.ndarray | None, int, float]:
        """Take up to ``steps`` steps (default: as many as there are) with ``A_online``'s actions (``A_online-E``'s
        with ``edge_only``), placed by the simulator's compiled A_greedy loop
        (:meth:`~.simulator.PaperSimulator.place_greedy`) instead of one ``step`` call each.

        The env is then exactly where those ``step`` calls would leave it (placements, clock, Φ, the return,
        ``fallbacks``); the rewards are computed as ``step`` computes them. It never takes the episode's last step
        (that one drains the episode and returns its metrics: call :meth:`step` for it). Needs the ``paper``
        discipline. Returns ``(observation, steps taken, total + their rewards added in order)``: the
        observation of the decision point it stops at (as the last ``step`` would have returned it), or ``None``
        with ``observe=False`` (:meth:`observe` builds it on demand).

        ``first``: the first of those steps takes the action whose :meth:`action_key` (at this decision point) is
        ``first`` instead of A_online's, in the same compiled loop: a given action continued by A_online, as a
        look-ahead (``rollout:aonline``) scores it. The same state and rewards as ``step`` with that action and then
        A_online's; only the counts of illegal actions and of decoding fallbacks in the episode's metrics may
        differ (as :meth:`action_key` says). Taking no step (``steps=0``, or the current step is the episode's
        last) ignores it.

        ``last=True`` (with ``observe=False``): the caller drops the env once these steps are taken, as a
        look-ahead does at its horizon. When all ``steps`` were taken, the next decision point is not prepared
        (the clock's move to the next arrival and its candidate table, which no reward of these steps reads) and
        the env is spent: every later call but :meth:`reset` raises ``RuntimeError``. When fewer were taken (the
        episode's last step is left), it is prepared as usual."""
        self._check_aonline("advance_aonline")
        if steps is not None and int(steps) < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        n = max(0, self._J - 1 - self._k)
        n = n if steps is None else min(n, int(steps))
        if n == 0:
            return self.observe() if observe else None, 0, float(total)
        if first is not None:
            first = _placement_of_key(first)
        acc = np.array([float(total), self._return, self.reward_scale])
        self._fallbacks += self.sim.place_greedy(self._k + n, cloud=self.use_cloud and not edge_only,
                                                 order=self._order, rewards=acc, first=first)
        self._return = float(acc[1])
        self._k += n
        if last and not observe and steps is not None and n == int(steps):
            self._cand = _SPENT  # the horizon: nothing reads the next decision point
            return None, n, float(acc[0])
        self._prepare_step()
        return self._observation() if observe else None, n, float(acc[0])

    def _check_aonline(self, name: str) -> None:
        """The errors of :meth:`advance_aonline` and :meth:`score_aonline` (``name``) for an env they cannot run on:
        never reset, spent at a look-ahead's horizon, or another discipline than ``paper``."""
        if self.sim is None:
            raise RuntimeError(f"call reset() before {name}()")
        if self._cand is _SPENT:
            raise _spent_error()
        if self.discipline != "paper":
            raise ValueError(f"{name}() needs the 'paper' discipline (this env: {self.discipline!r})")

    def score_aonline(self, steps: int, first: tuple[bytes, int], *, edge_only: bool = False, total: float = 0.0
                      ) -> float | None:
        """What ``advance_aonline(steps, first=first, total=total, observe=False)`` returns as its total, computed
        without changing this env (:meth:`~.simulator.PaperSimulator.score_greedy`: A_greedy's compiled loop on
        scratch copies of the state): the score of a look-ahead that needs no fork. ``None`` where that path would
        take fewer than ``steps`` steps (the episode ends first) or where the compiled loop would stop for work
        done in Python (a buffer grown, the bounded history maintained): the caller then advances a fork."""
        self._check_aonline("score_aonline")
        steps = int(steps)
        if steps <= 0 or self._J - 1 - self._k < steps:
            return None
        return self.sim.score_greedy(self._k + steps, cloud=self.use_cloud and not edge_only, order=self._order,
                                     first=_placement_of_key(first), total=float(total), scale=self.reward_scale)

    def _integral_reward(self, j: int) -> float:
        """∫ over [r_j, r_{j+1}) (or [r_J, ∞) at the last job) of the number of jobs in the system."""
        r = self.jobs.arrival_slots
        c = self._outcome.completion_slots
        lo = float(r[j])
        hi = float(r[j + 1]) if j + 1 < r.size else math.inf
        arrived = slice(0, j + 1)
        overlap = np.minimum(c[arrived], hi) - np.maximum(r[arrived], lo)
        return float(np.sum(np.maximum(overlap, 0.0)))

    # ------------------------------------------------------------ actions
    def action_masks(self) -> np.ndarray:
        """Legal actions of the current step: eligible rows (``server_proportions``: edge servers with a
        qualified worker, then the cloud) or legal cloud counts (``cloud_split``)."""
        if self.sim is None:
            raise RuntimeError("call reset() before action_masks()")
        if self.discipline != "paper":
            return np.ones(1, dtype=bool)
        rows = self._eligible_rows()
        if self.action_mode == "server_proportions":
            return rows
        if self.action_mode == "cloud_fraction":
            mask = np.zeros(CLOUD_LEVELS + 2, dtype=bool)
            mask[-1] = True  # A_greedy's split is always legal
            if self._k < self._J:
                edge_ok = rows[:-1].any()
                if not edge_ok:
                    mask[CLOUD_LEVELS] = True
                elif rows[-1]:
                    mask[: CLOUD_LEVELS + 1] = True
                else:
                    mask[0] = True
            return mask
        mask = np.zeros(self.max_chunks + 1, dtype=bool)
        if self._k >= self._J:
            mask[0] = True
            return mask
        D = int(self.jobs.num_chunks[self._k])
        edge_ok = rows[:-1].any()
        if not edge_ok:
            mask[D] = True
        elif rows[-1]:
            mask[: D + 1] = True
        else:
            mask[0] = True
        return mask

    def _legal_rows(self) -> np.ndarray:
        """The legal rows of the current decision point, not copied (callers must not write to it)."""
        cache = self._rows_cache
        if cache is not None and cache[0] is self._cand and self._k < self._J:
            return cache[1]
        return self._eligible_rows()

    def _eligible_rows(self) -> np.ndarray:
        cand = self._cand
        if self._k >= self._J or cand is None:
            rows = np.zeros(self.max_edge_servers + 1, dtype=bool)
            rows[-1] = self.cluster.has_cloud
            return rows
        cache = getattr(self, "_rows_cache", None)
        if cache is not None and cache[0] is cand:  # computed once per decision point
            return cache[1].copy()
        rows = np.zeros(self.max_edge_servers + 1, dtype=bool)
        finite = np.isfinite(cand.q)
        rows[self.cluster.worker_server[finite]] = True
        rows[-1] = self.cluster.has_cloud and (self.use_cloud or not finite.any())
        self._rows_cache = (cand, rows.copy())
        return rows

    def action_key(self, action) -> tuple[bytes, int]:
        """What ``action`` does at this decision point, as a hashable key: the placement it decodes to (chunks per
        edge worker, chunks in the cloud). Two actions with the same key give the same reward and the same next
        state (only the counts of illegal actions and fallbacks in the episode's metrics may differ), so a
        look-ahead simulates one of them (``rollout``). Nothing of the env changes."""
        if self.discipline != "paper":  # one action (Discrete(1)): nothing to tell apart
            return b"", self._check_discrete(action)
        fallbacks, illegal = self._fallbacks, self._illegal
        try:
            counts, n_cloud, _ = self._decode(action, False)
        finally:
            self._fallbacks, self._illegal = fallbacks, illegal
        return counts.tobytes(), int(n_cloud)

    def _check_discrete(self, action) -> int:
        """Exact validation (no coercion of 3.5, "3", True or inf): ``ValueError`` naming the action space."""
        return check_discrete_action(self.action_space, action)

    def decode_action(self, action) -> tuple[np.ndarray, int, np.ndarray]:
        """Decode an action into ``(worker_counts (W,), num_cloud, server_counts (S_max+1,))``.

        ``server_proportions``: weights on ineligible rows are ignored; all-zero weights fall back to
        A_greedy's placement (counted in ``fallbacks``); counts by largest remainder; within each server the
        Q-min water-filling rule. ``cloud_split``: ``action`` chunks to the cloud (a masked value is mapped
        to the nearest legal one and counted in ``illegal_actions``), the rest water-filled over all
        qualified edge workers. Raises ``ValueError`` for an action outside the action space.
        """
        return self._decode(action, True)

    def _decode(self, action, per_server: bool) -> tuple[np.ndarray, int, np.ndarray | None]:
        """:meth:`decode_action`; ``per_server=False``: the discrete modes skip the per-server counts (``None``:
        only the step's info reports them)."""
        cand = self._cand
        j = self._k
        D = self.sim._D_list[j]
        rows = self._legal_rows()
        counts = np.zeros(self._W, dtype=np.int64)
        if self.action_mode == "server_proportions":
            # one compiled call (``_kernels.decode_proportions``): bounds, weights on legal rows, largest remainder
            # (``largest_remainder``), within each server the Q-min water-filling (``fill_servers``); the pure
            # version is ``_reference.decode_proportions`` (the test oracle)
            a = action
            if type(a) is np.ndarray and a.dtype in _FAST_DTYPES and a.shape == self.action_space.shape:
                a = a.astype(np.float64)
            else:
                a = check_box_action(self.action_space, action)  # real, finite, the right shape (no coercion)
            server_counts = np.zeros(self.max_edge_servers + 1, dtype=np.int64)
            code = _kernels().decode_proportions(a, rows, D, cand.q, self._order, self._srv_ptr, self._srv_workers,
                                                 cand.p_edge / D, self._wts, server_counts, counts)
            if code == 1:
                check_box_action(self.action_space, action)  # non-finite: its message
                raise ValueError(
                    f"action must be a finite array of shape {self.action_space.shape} in [0, 1] "
                    f"(action_mode 'server_proportions'), got {np.asarray(action)!r}"
                )
            if code == 2:  # all-zero weights on the legal rows
                self._fallbacks += 1
                counts, n_cloud = self._greedy(cand, D)
                server_counts = self._server_counts(counts, n_cloud)
                return counts, n_cloud, server_counts
            if code >= 3:
                raise ValueError(f"water_fill: no finite candidate on server {code - 3} to place chunks on")
            return counts, int(server_counts[-1]), server_counts
        a = self._check_discrete(action)
        legal = np.flatnonzero(self.action_masks())
        if a not in legal:
            self._illegal += 1
            a = int(legal[np.argmin(np.abs(legal - a))])
        if self.action_mode == "cloud_fraction":
            if a == CLOUD_LEVELS + 1:
                counts, n_cloud = self._greedy(cand, D)
                return counts, n_cloud, self._server_counts(counts, n_cloud) if per_server else None
            a = int(math.floor(a / CLOUD_LEVELS * D + 0.5))
        n_cloud = min(a, D)
        if D - n_cloud:
            ws = np.flatnonzero(np.isfinite(cand.q))
            counts[ws] = water_fill(cand.q[ws], cand.p_edge / D, D - n_cloud, self._order[ws])
        return counts, n_cloud, self._server_counts(counts, n_cloud) if per_server else None

    def _greedy(self, cand: Candidates, D: int) -> tuple[np.ndarray, int]:
        cloud_on = self.cluster.has_cloud and self.use_cloud
        qc0, qc1 = (cand.qc0, cand.qc1) if cloud_on else (math.inf, math.inf)
        if not np.isfinite(cand.q).any():
            return np.zeros(self.cluster.num_workers, dtype=np.int64), D
        return greedy_placement(cand.q, self._order, D, cand.p_edge, qc0, qc1)

    def _server_counts(self, counts: np.ndarray, n_cloud: int) -> np.ndarray:
        sc = np.zeros(self.max_edge_servers + 1, dtype=np.int64)
        sc[: self.num_edge_servers] = np.bincount(
            self.cluster.worker_server, weights=counts, minlength=self.num_edge_servers
        ).astype(np.int64)
        sc[-1] = n_cloud
        return sc

    def encode_placement(self, worker_counts: np.ndarray, num_cloud: int):
        """The action of the current action mode that decodes to this placement, when one exists.

        ``server_proportions``: counts per server / D_j; ``cloud_split``: the number of cloud chunks.
        Used by reference policies to act through the action space.
        """
        D = int(self.jobs.num_chunks[self._k])
        sc = self._server_counts(np.asarray(worker_counts), int(num_cloud))
        if self.action_mode == "server_proportions":
            return (sc / D).astype(np.float32)
        if self.action_mode == "cloud_fraction":
            g_counts, g_cloud = self._greedy(self._cand, D)
            if g_cloud == int(num_cloud) and np.array_equal(g_counts, np.asarray(worker_counts)):
                return CLOUD_LEVELS + 1
            legal = np.flatnonzero(self.action_masks()[: CLOUD_LEVELS + 1])
            return int(legal[np.argmin(np.abs(legal / CLOUD_LEVELS - int(num_cloud) / D))])
        return int(num_cloud)

    # -------------------------------------------------------- observation
    def obs_layout(self) -> dict:
        """Where the observation's blocks lie, for per-server policies (``edgegym.agents.rl.shared``): ``job`` and
        ``glob`` are ``(start, stop)``; ``rows`` rows (edge servers, then the cloud) of ``row_dim`` features from
        ``rows_start``. No action picks a row (``row_actions`` False): the actions are ``extra_actions``.
        ``rows_setting``: the config key that sets the number of rows (``rows`` = its value + ``extra_rows``)."""
        rows = self.max_edge_servers + 1
        start = self._job_dim + rows * _ROW_FEATURES
        n = int(getattr(self.action_space, "n", 0))
        return {"job": (0, self._job_dim), "rows_start": self._job_dim, "rows": rows, "row_dim": _ROW_FEATURES,
                "glob": (start, start + _GLOBAL_FEATURES), "row_actions": False, "extra_actions": n,
                "rows_setting": {"section": "env", "key": "max_edge_servers", "extra_rows": 1}}

    def view(self, copy: bool = True) -> EdgeCloudView:
        """A read-only view of the current decision point (see :class:`EdgeCloudView`).

        ``copy=True`` (default): every array is a fresh, writable copy. ``copy=False``: the arrays are read-only
        (``writeable=False``) views of the decision point's candidate table, valid until the next ``step`` or
        ``reset``, and the same object is returned by every call at this decision point (no copies: the fast
        path of reference policies)."""
        if self.sim is None or self._k >= self._J:
            raise RuntimeError("view() needs a pending job: call reset() and do not step past the last job")
        c = self._cand
        if c is None:
            raise RuntimeError(f"view() is only available with discipline 'paper' (this env: {self.discipline!r})")
        if not copy:
            cached = self._view_cache
            if cached is not None and cached[0] is c:
                return cached[1]
            ro = []
            for a in (c.q, c.t_star, c.a2_count, self._legal_rows()):
                v = a.view()
                v.setflags(write=False)
                ro.append(v)
            # the fields set through the slots' descriptors (the frozen dataclass's __init__ sets each through
            # object.__setattr__: 3x slower); the same object as EdgeCloudView(...) with these values
            view = object.__new__(EdgeCloudView)
            for setter, value in zip(_VIEW_SETTERS, (
                float(self.sim.now), self._k, self.sim._D_list[self._k], c.p_edge, c.p_cloud, ro[0], ro[1], ro[2],
                c.qc0, c.qc1, self._ro_server, self._ro_order, ro[3], self.use_cloud, self.cluster.has_cloud,
                self.num_edge_servers, self.max_edge_servers, self.action_mode, self.max_chunks), strict=True):
                setter(view, value)
            self._view_cache = (c, view)
            return view
        return EdgeCloudView(
            now=float(self.sim.now),
            job=self._k,
            num_chunks=int(self.jobs.num_chunks[self._k]),
            p_edge=c.p_edge,
            p_cloud=c.p_cloud,
            q=c.q.copy(),
            t_star=c.t_star.copy(),
            a2_count=c.a2_count.copy(),
            qc0=c.qc0,
            qc1=c.qc1,
            worker_server=self.cluster.worker_server.copy(),
            worker_order=self._order.copy(),
            server_eligible=self._eligible_rows(),
            use_cloud=self.use_cloud,
            has_cloud=self.cluster.has_cloud,
            num_edge_servers=self.num_edge_servers,
            max_edge_servers=self.max_edge_servers,
            action_mode=self.action_mode,
            max_chunks=self.max_chunks,
        )

    def _observation(self) -> np.ndarray:
        """The observation of the current decision point: two compiled passes (``_kernels.obs_stage1/2``) around
        one NumPy ``log1p`` of the per-server block, the same floating-point operations as the pure version
        (``_reference.observation``, the test oracle); also caches the legal rows of this decision point."""
        K = _kernels()
        sim, c = self.sim, self._cand
        has = c is not None
        e = self._no_cand
        q, wait, a2w, bl = (c.q, c.wait, c.a2_weight, c.backlog) if has else (e, e, e, e)
        nq = K.obs_stage1(
            self._k, self.num_edge_servers, has, self._has_cloud, self._use_cloud, self._relative, self.max_types,
            self.max_chunks, self._job_dim, _ROW_FEATURES, self._J, float(sim.now), sim.num_placed,
            sim.job_end, sim._hk, sim._hs, sim._hi, sim._cnt,
            self._jd, sim.p_edge, sim.p_cloud, self._jdc, self._jwork, self._jwt, self._jpst,
            sim._delay_edge, self._type_ptr, self._type_workers, self._worker_server, sim._head_start, q, wait, a2w,
            bl, self._scratch, self._obs64, self._pre, self._rows_buf,
        )
        if not has:
            nq = 0
        if nq:
            np.log1p(self._pre, out=self._lg)  # NumPy's log1p, as the pure version (libm's differs in the last bit)
        out = np.empty(self._obs64.size, dtype=np.float32)
        K.obs_stage2(self._obs64, self._lg, self.num_edge_servers, nq, self._job_dim, _ROW_FEATURES, _OBS_HIGH, out)
        self._rows_cache = (c, self._rows_buf.copy())
        return out

    def _busy_fraction(self) -> float:
        W = self.cluster.num_workers
        return self.sim.busy_workers() / W if W else 0.0

    def episode_series(self) -> dict:
        """Per-episode series for plots: ``job_times`` (JCT per job, slots) and ``util_t``/``util`` (fraction of
        edge workers busy per time bin). Empty lists before the episode ends."""
        out = {"job_times": [], "util_t": [], "util": []}
        outcome = self._outcome
        if outcome is None or self.jobs is None:
            return out
        c = np.asarray(outcome.completion_slots, dtype=float)
        out["job_times"] = (c - np.asarray(self.jobs.arrival_slots, dtype=float)).tolist()
        seg = np.asarray(outcome.segments, dtype=float).reshape(-1, 4)
        if self.cluster is not None and len(seg):
            t_end = float(max(c.max(), seg[:, 2].max()))
            t, util = utilisation_series(seg, int(self.cluster.num_workers), t_end, max(t_end / 200.0, 1e-9))
            out["util_t"], out["util"] = t.tolist(), util.tolist()
        return out

    def render(self):
        """``rgb_array``: a Gantt chart (H, W, 3) uint8 of what each edge worker ran so far (lazy matplotlib)."""
        if self.render_mode != "rgb_array":
            return None
        from .rendering import render_gantt

        return render_gantt(self)

    @property
    def episode_return(self) -> float:
        """Undiscounted return accumulated so far in this episode."""
        return self._return

    # ------------------------------------------------------------------ forking
    #: attributes shared (not copied) between an env and its forks: fixed for the episode, never written in place
    _FORK_SHARED = (
        "_fork_draws",
        "preset", "features", "observation_space", "action_space", "metadata", "spec", "_instance", "cluster", "jobs",
        "_server_workers", "_order", "_srv_ptr", "_srv_workers", "_type_ptr", "_type_workers", "_worker_server",
        "_jd", "_jdc", "_jwork", "_jwt", "_jpst", "_no_cand",
        # scratch buffers (no state between calls: one env or fork runs at a time)
        "_obs64", "_pre", "_lg", "_scratch", "_rows_buf", "_wts",
        "sim._served", "sim._mark", "sim._touched", "sim._used", "sim._rho_used", "sim._si", "sim._sf",
        "sim.cluster", "sim.jobs", "sim.p_edge", "sim.p_cloud", "sim.offsets", "sim.chunk_job", "sim._inv_d",
        "sim._worker_server", "sim._delay_edge", "sim._qualified", "sim._arrival", "sim._worker_type",
        "sim._job_type", "sim._D_list", "sim._r_list", "sim._p0_list", "sim._p1_list", "sim._dc_list",
        "sim._wt_list", "sim._off_list", "sim._no_workers", "sim._dc_arr", "sim._D_arr", "sim._p0_arr", "sim._p1_arr",
        "sim._qual_ptr", "sim._qual_idx",
    )
    #: the env attributes among them, and those :meth:`_fork_copy` shares besides: never written in place (a new
    #: object replaces them)
    _FORK_SHARED_ENV = frozenset(a for a in _FORK_SHARED if "." not in a) | {
        "_cand", "_rows_cache", "_view_cache", "_lean_cache", "_ro_server", "_ro_order"}
    #: the same without the per-chunk tables that are per-slot state with ``keep_schedule=False``
    _FORK_SHARED_BOUNDED = tuple(a for a in _FORK_SHARED if a not in ("sim.chunk_job", "sim._inv_d"))
    #: the simulator attributes among them (a resampled fork's simulator shares them with its parent's)
    _SIM_SHARED = frozenset(a[4:] for a in _FORK_SHARED if a.startswith("sim."))
    #: the same for a simulator with the bounded history (its per-slot arrays are state)
    _SIM_SHARED_BOUNDED = _SIM_SHARED - frozenset(PaperSimulator._SLOT_STATE) | {"_hist"}
    #: simulator attributes computed from the job table alone (rebuilt for a resampled future)
    _SIM_FROM_JOBS = frozenset({
        "jobs", "p_edge", "p_cloud", "offsets", "chunk_job", "_inv_d", "_delay_edge", "_arrival", "_job_type",
        "_D_list", "_r_list", "_p0_list", "_p1_list", "_dc_list", "_wt_list", "_off_list", "_served",
        "_dc_arr", "_D_arr", "_p0_arr", "_p1_arr",
    })
    #: simulator arrays with one entry per chunk (the chunks of the jobs placed so far are kept)
    _SIM_PER_CHUNK = frozenset(PaperSimulator.PER_CHUNK)
    #: simulator arrays with one entry per job (the jobs arrived so far are kept)
    _SIM_PER_JOB = frozenset(PaperSimulator.PER_JOB)
    #: every simulator attribute built from the job table (a resampled fork rebuilds them on its spliced table)
    _SIM_JOB_PARTS = _SIM_FROM_JOBS | _SIM_PER_CHUNK | _SIM_PER_JOB

    def fork(self, seed: int = 0, future: str = "resample", history: bool = True) -> EdgeCloudMLEnv:
        """An independent env in exactly the current state (mid-episode), for look-ahead planning.

        ``future="keep"``: the jobs that have not arrived yet are the true ones; the fork is marked
        ``clairvoyant`` (for analysis and bounds only). ``future="resample"`` (default): they are redrawn,
        deterministically from ``seed``, from the preset's own workload model: a new job table is drawn with the
        preset's generator (:func:`~.instance.build_jobs`, on this episode's cluster; a trace with a fixed window
        is read at a random window of the same trace), its jobs after the pending one replace the true future, and
        their arrivals continue from the pending job's arrival with the new table's own gaps
        (:func:`~edgegym.core.forking.shifted_arrivals`). The number of jobs stays the same. An ``inline``
        workload (the preset lists its jobs) has no model to draw from: its future is the preset's own. With a
        job-level discipline (SRTF, Tiresias-L, BatchSche) the discipline's schedule is recomputed on the spliced
        job table (it was computed once at reset). See :mod:`edgegym.core.forking`.

        ``history=False``: a fork for look-ahead that does not keep the executed history (the fork runs with
        ``keep_schedule=False``): its simulator holds only what the jobs still in the system need
        (:meth:`~.simulator.PaperSimulator.lean_copy`), so it is several times cheaper to make and to fork again
        late in an episode. Every observation, mask, reward, placement and episode metric of the fork is the one
        a ``history=True`` fork gives, except what needs the whole executed schedule (``render``, the
        utilisation series, ``sim.segments()``) and ``utilisation``, whose busy time is then summed exactly (as
        with ``keep_schedule=False``, see the class docstring). When such a fork ends its episode by
        :meth:`step_quiet`, its simulator drains (A_ps's schedule of the episode, which no reward reads) when the
        outcome is first read (``episode_series``, ``render``) instead of at that step; ``step`` drains at once.
        """
        from ...core.forking import fork_env

        if self._cand is _SPENT:
            raise _spent_error()
        redraw = future == "resample" and self._redraws_future()
        lean = not history and self.keep_schedule and self.sim is not None
        if self.sim is not None and self._fast_fork:
            return self._fork_copy(seed, future, redraw, lean)
        if lean:  # the reference path: the generic fork, then its simulator's lean copy
            fork = self.fork(seed, future)
            fork.sim = fork.sim.lean_copy(fork._sim_shared(), room=max(self._FORK_LOG_ROWS, 1))
            fork.keep_schedule = False
            fork._lazy_drain = True
            fork._lean_cache = None
            return fork
        if redraw:
            # _resample_future builds the fork's own simulator from this env's, reading it only: no copy first
            copies = {"sim": _share}
        else:
            copies = self._fork_copies()
        shared = self._FORK_SHARED if self.keep_schedule else self._FORK_SHARED_BOUNDED
        return fork_env(self, seed=seed, future=future, shared=shared,
                        resample=type(self)._resample_future, copies=copies)

    #: ``fork`` copies the state by :meth:`_fork_copy` where it can (False: always by ``fork_env``'s generic walk,
    #: the reference for the differential tests)
    _fast_fork = True

    def _fork_copy(self, seed: int, future: str, redraw: bool, lean: bool = False) -> EdgeCloudMLEnv:
        """The fork with the state ``fork_env`` gives it (every shared attribute shared, every other array copied,
        the large simulator buffers by their live part as :meth:`_fork_copies` says) but without its generic walk
        over the objects: one pass over the env's and the simulator's attributes. ``redraw``: the simulator is
        not copied but rebuilt on the redrawn future by :meth:`_resample_future` (reading this env's). ``lean``:
        the fork's simulator is (a copy of) this state's lean copy (``fork(history=False)``), made once per
        state and shared by the forks of that state (:meth:`_lean_sim`)."""
        from ...core.forking import (
            _ATOMIC_TYPES,
            check_fork_args,
            fast_copy,
            fork_rng,
            mark_fork,
            retain_freed_memory,
        )

        check_fork_args(self, seed, future)
        retain_freed_memory()
        if "_fork_draws" not in self.__dict__:
            self._fork_draws = {}
        shared = self._FORK_SHARED_ENV
        memo: dict = {}
        src = self._lean_sim() if lean else self.sim
        d = self.__dict__.copy()
        for name, v in self.__dict__.items():
            if name in shared or type(v) in _ATOMIC_TYPES:
                continue
            if name == "sim":
                d[name] = src if redraw else self._fork_sim(memo, src=src)
            elif name == "_np_random":  # drawn from by reset only: shared until either env uses it
                d["_rng_shared"] = True
            else:
                d[name] = fast_copy(v, memo)
        if d.get("_rng_shared"):
            self._rng_shared = True
        if lean:
            d["keep_schedule"], d["_lazy_drain"] = False, True
        fork = object.__new__(type(self))
        fork.__dict__ = d
        mark_fork(self, fork, seed, future)
        if redraw:
            type(self)._resample_future(fork, fork_rng(seed))
        return fork

    def _sim_shared(self, sim: PaperSimulator | None = None) -> frozenset:
        """The simulator attributes a fork shares with ``sim`` (default: this env's): :attr:`_SIM_SHARED`, less
        the per-slot arrays of a simulator with the bounded history (``keep_schedule=False``)."""
        sim = self.sim if sim is None else sim
        return self._SIM_SHARED if sim.keep_schedule else self._SIM_SHARED_BOUNDED

    def _lean_sim(self) -> PaperSimulator:
        """The lean copy of this state's simulator (:meth:`~.simulator.PaperSimulator.lean_copy`), made once per
        decision point and shared, read only, by the ``history=False`` forks of that state."""
        sim = self.sim
        key = (sim, self._cand, sim.num_placed, sim.now)
        hit = self.__dict__.get("_lean_cache")
        if hit is not None and all(a is b or a == b for a, b in zip(hit[0], key, strict=True)):
            return hit[1]
        lean = sim.lean_copy(self._SIM_SHARED_BOUNDED, room=max(self._FORK_LOG_ROWS, 1))
        self._lean_cache = (key, lean)
        return lean

    def _fork_sim(self, memo: dict, skip: frozenset = frozenset(), src: PaperSimulator | None = None
                  ) -> PaperSimulator:
        """The simulator of :meth:`_fork_copy`: a copy of ``src`` (default: this env's simulator) with shared
        attributes shared, the log, the plans and the per-chunk buffers copied by their live part
        (:meth:`_fork_copies`'s rule: zeros past it, except the plans' columns, left unset: see :func:`_prefix_cols`),
        every other array copied, A_ps's generator shared until
        either simulator draws from it (``PaperSimulator._rng_shared``); the attributes named in ``skip`` left
        out (for the caller to build). The attributes are sorted into those groups once per layout
        (:meth:`_sim_plan`), so a fork is a dict copy and the array copies."""
        from ...core.forking import fast_copy

        old = self.sim if src is None else src
        od = old.__dict__
        log, chunk, plan, arrays, objects = self._sim_plan(old, skip)
        d = {k: v for k, v in od.items() if k not in skip} if skip else od.copy()
        n = int(old._cnt[0])
        for name in log:
            d[name] = _prefix(od[name], n)
        n = old._chunks_in_use()
        for name in chunk:
            d[name] = _prefix(od[name], n)
        n = int(old._plen.max(initial=0))
        for name in plan:
            d[name] = _prefix_cols(od[name], n)
        for name in arrays:
            d[name] = od[name].copy()
        for name in objects:
            d[name] = fast_copy(od[name], memo)
        if "rng" in d:  # A_ps's generator (drawn from at the drain only): shared until one of the two draws
            d["_rng_shared"] = old._rng_shared = True
        sim = object.__new__(PaperSimulator)
        sim.__dict__ = d
        return sim

    _SIM_PLANS: dict = {}

    def _sim_plan(self, sim: PaperSimulator, skip: frozenset) -> tuple:
        """The attribute groups of :meth:`_fork_sim` for ``sim``'s layout (history kept or bounded, drained or
        not, its attribute names, ``skip``): ``(log, per-chunk prefix, plans, other arrays, other objects)``; every
        other attribute is shared (a shared name, an immutable value, the generator)."""
        from ...core.forking import _ATOMIC_TYPES

        key = (sim.keep_schedule, sim._drained, skip, tuple(sim.__dict__))  # drained: A_ps's log is an array
        hit = self._SIM_PLANS.get(key)
        if hit is not None:
            return hit
        shared = self._sim_shared(sim)
        groups: tuple = ([], [], [], [], [])
        for name, v in sim.__dict__.items():
            t = type(v)
            if name in skip or name in shared or name in ("rng", "_rng_shared") or (
                    t in _ATOMIC_TYPES and v is not None):  # None: a slot that may hold an array later
                continue
            if t is np.ndarray:
                g = 0 if name in self._LOG_ARRAYS else 1 if name in self._PREFIX_CHUNK_ARRAYS else \
                    2 if name in self._PLAN_ARRAYS else 3
            else:
                g = 4
            groups[g].append(name)
        hit = self._SIM_PLANS[key] = tuple(tuple(g) for g in groups)
        return hit

    def _redraws_future(self) -> bool:
        """Whether ``fork(future="resample")`` redraws anything: a job is still to arrive after the pending one and
        the workload has a model to draw from (an ``inline`` preset lists its jobs)."""
        return self.sim is not None and self._k + 1 < self.jobs.num_jobs and self.preset.workload.source != "inline"

    def _fork_copies(self) -> dict:
        """Large simulator buffers copied by their live part only: the executed log (rows up to its length), the
        per-chunk arrays that are zero until a chunk is placed (the chunks of the jobs placed so far) and the
        workers' plans (columns up to the longest plan)."""
        from ...core.forking import prefix_copy

        sim = self.sim
        if sim is None:
            return {}
        n_log = int(sim._cnt[0])
        n_chunks = sim._chunks_in_use()
        out = {f"sim.{a}": (lambda v, env, n=n_log: prefix_copy(v, n)) for a in self._LOG_ARRAYS}
        out.update({f"sim.{a}": (lambda v, env, n=n_chunks: prefix_copy(v, n)) for a in self._PREFIX_CHUNK_ARRAYS})
        # each worker's plan lives in columns [phead, plen) of ps/pe/pc: the columns up to the longest plen
        n_plan = int(sim._plen.max(initial=0))
        out.update({f"sim.{a}": (lambda v, env, n=n_plan: prefix_copy(v, n, axis=1)) for a in self._PLAN_ARRAYS})
        return out

    #: the executed log's columns (rows up to its length are live)
    _LOG_ARRAYS = ("_lw", "_ls", "_le", "_lc")
    #: per-chunk arrays that are zero until a chunk is placed (the chunks of the jobs placed so far are live)
    _PREFIX_CHUNK_ARRAYS = ("chunk_rho", "chunk_key", "chunk_seq", "_rem", "chunk_alpha")
    #: the workers' plans (columns up to the longest plan are live)
    _PLAN_ARRAYS = ("_ps", "_pe", "_pc")

    #: completion-heap entries and log rows (beyond the used ones) a resampled fork makes room for
    _FORK_HEAP, _FORK_LOG_ROWS = 512, 2048

    def _resample_future(self, rng: np.random.Generator) -> None:
        """Replace the jobs after the pending one by a fresh draw (``fork(future="resample")``)."""
        from ...core.forking import cached_draw, fast_copy, shifted_arrivals, splice_jobs
        from .instance import build_jobs

        k = self._k
        w = self.preset.workload
        if not self._redraws_future():
            return
        if w.source != "synthetic" and w.window != "random":
            w = dataclasses.replace(w, window="random")
        new = cached_draw(self, (self.fork_seed, "jobs"), rng, lambda g: build_jobs(
            w, self.preset.job_model, self.cluster, g, speed=self.preset.env.speed), owner=self.cluster)
        # JobSet checks row by row and derives nothing: the rows of two valid tables need no second check
        jobs = splice_jobs(self.jobs, new, k + 1, revalidate=False,
                           arrival_slots=shifted_arrivals(self.jobs.arrival_slots, new.arrival_slots, k + 1))
        old = self.sim  # the parent env's simulator, shared by fork(): read it, never write to it
        memo: dict = {}
        shared, from_jobs = self._SIM_SHARED, self._SIM_JOB_PARTS
        # the parent's state without its job-derived parts, then those parts built on the spliced table
        if self._fast_fork:  # one pass, the large buffers by their live part
            fresh = self._fork_sim(memo, skip=from_jobs)
        else:
            fresh = object.__new__(PaperSimulator)
            for name, v in vars(old).items():
                if name not in from_jobs:
                    setattr(fresh, name, v if name in shared else fast_copy(v, memo))
        fresh._init_jobs(jobs)
        fresh._adopt_placed(old, k)  # the chunks and jobs placed so far: their state is the parent's
        # the HAPRF keys of the redrawn jobs, computed once per drawn table (they are per row: the spliced rows are
        # the drawn table's), and room in the heap and the log for a look-ahead's steps: the keep forks of this
        # fork (a rollout's candidates) inherit both instead of each computing and growing them (the same values)
        hit = self._fork_draws.get((self.fork_seed, "keys"))
        if hit is None or hit[2] is not new:
            hit = (np.full(jobs.num_jobs, np.nan), None, new)
            self._fork_draws[(self.fork_seed, "keys")] = hit
        fresh._keys[k + 1:] = fresh.fill_keys(hit[0], k + 1)[k + 1:]
        fresh.reserve(heap=self._FORK_HEAP, log_rows=int(fresh._cnt[0]) + self._FORK_LOG_ROWS)
        self.sim, self.jobs = fresh, jobs
        # the cluster's buffers are the parent's (shared scratch, or read only): only the job table's part is new
        self._prepare_job_arrays()
        if self._type_count() != self._type_ptr.size - 1:
            self._build_type_index()
        if self.discipline != "paper":
            from .disciplines import DISCIPLINES

            self._outcome = DISCIPLINES[self.discipline](
                self.cluster, jobs, speed=self.preset.env.speed, rng=np.random.default_rng(rng.integers(2**63)),
                **discipline_kwargs(self.preset),
            )
