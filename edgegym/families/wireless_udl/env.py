"""``WirelessUDL``: unbiased distributed learning over wireless edge sites (Han et al., ICPADS 2021) as a
Gymnasium env. One step per arriving job (arrivals in slot order, then id).

* ``env.mode = "commit"`` (default): the action picks one of ``2·G`` candidate plans for the arriving job
  (:mod:`.candidates`: ``G`` worker counts × {``now``, ``wait``}); the plan (start slot, workers per site,
  PS site) is reserved in a per-slot calendar and is non-preemptive. ``step`` also accepts a
  :class:`~.simulator.Plan` (the structured API heuristics use, same as :meth:`WirelessUDLEnv.commit_plan`).
  Reward: minus the job's exact cost (latency + transfer + parameter exchange) / ``env.reward_scale``.
* ``env.mode = "replan"``: the slot-level discipline ``env.discipline`` (``okita``, ``fifo``, ``drf``)
  re-plans every active job every slot; the action space is ``Discrete(1)`` (a no-op). Reward: minus the
  cost realised in the slots from this arrival to the next (after the last arrival: until every job is done,
  cap ``cap_factor·T``, truncation then) / scale. With ``env.replan_workers: true`` (``okita`` only) the action
  is ``Discrete(4)``: the arriving job's worker rule for its whole life (:data:`.disciplines.WORKER_RULES`):
  0 Okita's own tentative optimum N* (re-chosen every slot, the paper's), 1 one worker, 2 half of N*, 3 twice
  N* (each the nearest count whose tentative plan has a PS site); every action is legal.

Either way the undiscounted return is exactly ``−objective / reward_scale``, with ``objective`` = total
cost Σ_i [f_i(t_i − a_i + 1) + B_i] in ``info["episode_metrics"]`` at the last step.

Version history: v0 — first version. v0 (bounded-cost release, same id) — ``WirelessUDL-v0`` (``sim``) moves to
the paper's Alg. 3 sampling (``sampling: complete``) and the bounded logistic reading of its "Sigmoid" latency cost
(``latency_cost: logistic``, ``b/(e^{−a(L−c)} + 1)``, ``b ∈ [300, 400]``, ``a = 0.25``, ``c = ln(b/τ)/a``); the
testbed preset likewise, ``tiny`` to ``complete`` sampling; the previous default is
``WirelessUDL-sim-exp-proportional-v0`` and the printed exponential stays in ``WirelessUDL-paper-literal-v0``;
Okita's estimates model the sampling in force; episode metrics add ``median_job_cost``, ``geomean_job_cost`` and
``jobs_latency_over_20``; an action outside the action space (e.g. ``np.array([[0]])``) raises ``ValueError``
and ``action_masks()`` before ``reset()`` raises ``RuntimeError``. v1 — same dynamics and reward (the commit
mode already charges each job's exact cost at its decision; scale unchanged); for learning: ``obs_relative`` (no
absolute-time or episode-position feature, active jobs per site), ``obs_rows`` (the candidate features as one row
per action plus the cost relative to the cheapest row and an ``N_tent`` flag; :attr:`WirelessUDLEnv.obs_layout`
describes it), ``prune_ratio: 3`` (candidates estimated above 3× the cheapest legal one are masked) and
``cost_clip: 10``.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ...core.actions import check_action
from ...core.jit import compiled_entry, fingerprint
from ...core.validation import check_config_mapping
from . import _episode as _ep
from . import _kernels as kn
from . import _reference as ref
from . import candidates as _cd
from .candidates import Candidates, _grid_table, _job_consts, _job_table, _lin_table, _new_candidates15, _table
from .disciplines import WORKER_RULES, make_discipline, rule_workers
from .instance import Instance, build_instance
from .presets import DEFAULT_PRESET, UDLPreset, load_preset
from .simulator import Plan, Simulator, make_static

__all__ = ["OBSERVATION_BLOCKS", "UDLView", "WirelessUDLEnv", "observation_blocks", "observation_features"]

CAND_FEATURES = (
    ("n_frac", "workers N / N_max of the job", 0.0, 1.0),
    ("window_frac", "window l / longest window of the preset", 0.0, 1.0),
    ("delay_frac", "start delay / calendar length", 0.0, 1.0),
    ("remote_frac", "workers not at the PS site / N", 0.0, 1.0),
    ("transfer", "estimated transfer cost / reward_scale (clipped)", 0.0, None),
    ("param", "estimated parameter-exchange cost / reward_scale (clipped)", 0.0, None),
    ("latency", "latency cost / reward_scale (clipped)", 0.0, None),
    ("total", "estimated total cost / reward_scale (clipped)", 0.0, None),
    ("peak_util", "peak utilisation of the used sites in the window", 0.0, 1.0),
    ("feasible", "1 if the row is a legal action", 0.0, 1.0),
)
#: extra per-candidate features of the row-major layout (``env.obs_rows``, v1)
ROW_EXTRA_FEATURES = (
    ("total_rel", "estimated total cost minus the cheapest legal row's / reward_scale (clipped)", 0.0, None),
    ("tent", "1 if the row's worker count is Okita's tentative optimum N_tent", 0.0, 1.0),
)


#: the observation blocks with one entry per site (their width depends on the site count): per-row policies read
#: the rest (:attr:`WirelessUDLEnv.obs_layout`), so that they run at any number of sites
SITE_BLOCKS = frozenset({"site_mask", "price_mean", "free_frac", "data_frac"})


def _merge(spans) -> tuple[tuple[int, int], ...]:
    """Adjacent ``(start, stop)`` ranges joined: ``((0, 1), (1, 3), (5, 6))`` -> ``((0, 3), (5, 6))``."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


def observation_blocks(preset: UDLPreset) -> list[tuple[str, tuple, str, float, float]]:
    """The observation as named blocks ``(name, shape, meaning, low, high)``, in order (flattened C-order)."""
    R, K, H = preset.max_sites, preset.num_resources, preset.env.calendar_slots
    G = preset.env.worker_counts
    clip = preset.env.cost_clip
    cf = float(preset.env.cap_factor)
    rel = preset.env.obs_relative
    blocks = [
        ("slot_frac", (1,), "current slot t / T (at most cap_factor); 0 with env.obs_relative", 0.0, cf),
        ("job_frac", (1,), "index of the arriving job / number of jobs; 0 with env.obs_relative", 0.0, 1.0),
        ("active_frac", (1,), "jobs active (started, unfinished) / number of sites (clipped)" if rel
         else "jobs active (started, unfinished) / number of jobs", 0.0, 1.0),
        ("site_mask", (R,), "1 for a real site, 0 for padding", 0.0, 1.0),
        ("price_mean", (R,), "site's mean outgoing price / max price", 0.0, 1.0),
        ("free_frac", (R, K, H), "free fraction of resource k at site r in slot t+h (replan: last slot)", 0.0, 1.0),
        ("kappa", (1,), "κ_i chunks per worker-slot / preset max", 0.0, 1.0),
        ("chunk_mb", (1,), "δ_i / preset max", 0.0, 1.0),
        ("param_mb", (1,), "π_i / preset max", 0.0, 1.0),
        ("cost_kind", (3,), "latency cost one-hot: exp or logistic (the exponential bounded by b), linear, "
         "piecewise", 0.0, 1.0),
        ("cost_params", (5,), "τ, b, τ1, τ2, c / preset maxima (logistic: b its bound, c its midpoint)", 0.0, 1.0),
        ("worker_demand", (K,), "m_i^k / largest site capacity of k", 0.0, 1.0),
        ("ps_demand", (K,), "n_i^k / largest site capacity of k", 0.0, 1.0),
        ("data_total", (1,), "D_i / preset max", 0.0, 1.0),
        ("data_frac", (R,), "D_i^r / D_i", 0.0, 1.0),
        ("n_max", (1,), "N_max of the job / preset max", 0.0, 1.0),
    ]
    if preset.env.obs_rows:  # one row of features per action (per-row policies, edgegym.agents.rl.shared)
        feats = CAND_FEATURES + ROW_EXTRA_FEATURES
        return blocks + [("cand", (2 * G, len(feats)), "per candidate row: " + ", ".join(nm for nm, *_ in feats),
                          0.0, clip)]
    return blocks + [(f"cand_{nm}", (2 * G,), f"per candidate: {mean}", lo, clip if hi is None else hi)
                     for nm, mean, lo, hi in CAND_FEATURES]


def observation_features(preset: UDLPreset) -> list[tuple[str, str, float, float]]:
    """One ``(name, meaning, low, high)`` per observation index (names like ``free_frac[3,1,0]``)."""
    out = []
    for name, shape, meaning, lo, hi in observation_blocks(preset):
        for idx in np.ndindex(*shape):
            nm = name if shape == (1,) else f"{name}[{','.join(map(str, idx))}]"
            out.append((nm, meaning, lo, hi))
    return out


OBSERVATION_BLOCKS = observation_blocks  # the documented feature list is a function of the preset sizes


@dataclass(frozen=True, slots=True)
class UDLView:
    """Read-only view of a decision point (numpy copies / read-only views and scalars).

    ``cand``: the candidate table (commit mode; ``None`` in replan mode), row = action.
    ``calendar``: read-only (slots, R, K) free resources (commit mode), ``None`` in replan mode.
    """

    t: int
    job: int
    arrival: int
    mode: str
    num_sites: int
    cap: np.ndarray  # (R, K)
    q: np.ndarray  # (R, R)
    kappa: int
    chunk_mb: float
    param_mb: float
    m: np.ndarray  # (K,)
    n: np.ndarray  # (K,)
    data: np.ndarray  # (R,) D_i^r
    kind: int
    cost_params: np.ndarray  # (5,) τ, b, τ1, τ2, c
    cand: Candidates | None
    calendar: np.ndarray | None
    latency_offset: int
    exp_rate: float


def _param_max(jb) -> list[float]:
    """Preset maxima of the job's cost parameters τ, b, τ1, τ2, c (the logistic's b and midpoint c included)."""
    b_max, c_max = jb.b[1], jb.breakpoint_slots[1]
    if jb.latency_cost == "logistic":
        b_max = jb.logistic_b[1]
        c_max = max(float(np.log(jb.logistic_b[1] / jb.tau[0]) / jb.exp_rate), 1.0)
    return [jb.tau[1], b_max, jb.tau1[1], jb.tau2[1], c_max]


_NO_CAL = np.zeros((1, 1, 1))  # the observation kernel's calendar argument in replan mode (unused there)


_PLAN_SET = tuple(getattr(Plan, f).__set__ for f in Plan.__dataclass_fields__)  # Plan's slot descriptors, in order


def _row_plan(job: int, start: int, y: np.ndarray, ps: int) -> Plan:
    """``Plan(job, start, y, ps)`` set through the slot descriptors (the step's hot path; the same object)."""
    p = object.__new__(Plan)
    set_job, set_start, set_y, set_ps = _PLAN_SET
    set_job(p, job)
    set_start(p, start)
    set_y(p, y)
    set_ps(p, ps)
    return p


def _ro(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def _block_views(blk: np.ndarray, C: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ti, y, tf)`` of :func:`~._kernels.candidate_block`'s int64 block ``blk`` (``C`` rows): views of it, the
    (5, C) int columns, the (C, R) rows of y and the (5, C) float columns (their float64 bits)."""
    R = blk.shape[1]
    o = C * R
    flat = blk.reshape(-1)
    return flat[o:o + 5 * C].reshape(5, C), blk[:C], flat[o + 5 * C:o + 10 * C].view(np.float64).reshape(5, C)


def _commit_entry(args: tuple, R: int, kernel=None) -> list:
    """``[entry, y_fingerprint, fingerprint]``: the compiled entry point of :func:`~._kernels.commit_step` for the
    per-episode arguments ``args`` followed by a step's own (``i`` an int, ``y`` an (R,) int64 row, ``start`` and
    ``ps`` ints, ``param_slot`` a float, ``want_obs`` a bool), the fingerprint a step's ``y`` must have to call it,
    and the function that takes it (:func:`edgegym.core.jit.fingerprint`); ``None`` for each where no compiled
    version matches these types yet, or the entry cannot be looked up (the dispatcher is called then, and compiles
    one).

    Numba's dispatcher resolves the compiled version from the types of the 75 arguments at every call (about 1.1 of
    the ~2.8 µs a call costs before the kernel starts, measured on a no-op kernel with the same arguments); the
    entry point skips that resolution (:func:`edgegym.core.jit.compiled_entry`, looked up once per set of argument
    types, so that arguments of other types never reach an entry compiled for different ones). ``kernel``: the
    dispatcher (:func:`~._kernels.commit_step_block`, the default, or :func:`~._kernels.commit_step`)."""
    step_args = (0, np.zeros(R, np.int64), 0, 0, 0.0, True)
    entry = compiled_entry(kernel or kn.commit_step_block, (*args, *step_args)) if kn.HAVE_NUMBA else None
    if entry is None:
        return [None, None, None]
    return [entry, fingerprint(step_args[1]), fingerprint]


class WirelessUDLEnv(gym.Env):
    """UDL scheduling (Han et al., ICPADS 2021), one step per arriving job (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}
    #: the per-candidate feature tables (module constants; here for the reference observation in ``_reference``)
    CAND_FEATURES = CAND_FEATURES
    ROW_EXTRA_FEATURES = ROW_EXTRA_FEATURES

    def __init__(self, preset: UDLPreset | str = DEFAULT_PRESET, config: dict | None = None,
                 render_mode: str | None = None, instance: Instance | None = None) -> None:
        super().__init__()
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r} is not supported (supported: None, 'rgb_array')")
        self.render_mode = render_mode
        p = preset if isinstance(preset, UDLPreset) else load_preset(preset)
        check_config_mapping(config, getattr(p, "source_file", p.name))
        if config:
            p = p.replace(**config)
        self.preset = p
        self.fixed_instance = instance
        self.mode = p.env.mode
        self.reward_scale = float(p.env.reward_scale)
        self.G = p.env.worker_counts
        self._H = int(p.env.calendar_slots)  # the observation's calendar rows
        self.R_max, self.K = p.max_sites, p.num_resources
        if instance is not None and (instance.num_sites > self.R_max or instance.num_resources != self.K):
            raise ValueError(f"instance has {instance.num_sites} sites / {instance.num_resources} resources; "
                             f"the preset allows {self.R_max} / {self.K}")
        blocks = observation_blocks(p)
        self._blocks = blocks
        low = np.concatenate([np.full(int(np.prod(s)), lo, np.float32) for _, s, _, lo, _ in blocks])
        high = np.concatenate([np.full(int(np.prod(s)), hi, np.float32) for _, s, _, _, hi in blocks])
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        n_replan = len(WORKER_RULES) if p.env.replan_workers else 1
        # replan mode with the worker-rule action and v1 rows: one candidate row per rule (``_rule_table``)
        self._rule_rows = bool(self.mode == "replan" and p.env.replan_workers and p.env.obs_rows)
        self.action_space = spaces.Discrete(2 * self.G if self.mode == "commit" else n_replan)
        jb = p.jobs
        self._norm = dict(
            kappa=jb.chunks_per_worker_slot[1], chunk=max(jb.chunk_mb[1], 1e-9), param=max(jb.param_mb[1], 1e-9),
            params=np.maximum(_param_max(jb), 1e-9),
            params_f=np.ascontiguousarray(np.maximum(_param_max(jb), 1e-9), dtype=float),
            cap=np.maximum(np.max(np.asarray(p.cluster.site_types, float), axis=0), 1e-9),
            data=jb.chunks_per_site[1] * p.cluster.sites,
            nmax=-(-jb.chunks_per_site[1] * p.cluster.sites // jb.chunks_per_worker_slot[0]),
        )
        self._low64 = self.observation_space.low.astype(np.float64)
        self._high64 = self.observation_space.high.astype(np.float64)
        self._max_win = int(p.max_window_slots)  # the observation's window normaliser
        self._use_reference = False  # True: the numpy reference (``_reference``) instead of the compiled kernels
        self._obs_site: np.ndarray | None = None  # per episode: site mask + mean price (observation)
        self._obs_job: np.ndarray | None = None  # per episode: (n_jobs, ·) the job blocks of the observation
        self._head_rel: np.ndarray | None = None  # per episode: the observation's head with env.obs_relative
        self.sim: Simulator | None = None
        self.inst: Instance | None = None
        self._k = 0
        self._cand_obj: Candidates | None = None  # the table behind :attr:`_cand`, once built
        self._raw: tuple | None = None  # the one-call step's table as it came back (see :attr:`_cand`)
        self._fast: tuple | None = None  # (sim, inst, calendar, arguments, job scalars) of the one-call step
        self._fast_jobs: tuple | None = None  # (inst, the jobs' arrays of those arguments), shared with forks
        self._fast_seen = None  # the instance of the last step that found no job arrays for it (see _fast_ok)
        self._obs_next: np.ndarray | None = None  # the observation the one-call step computed for ``step``
        self._rules: Candidates | None = None  # replan + replan_workers + obs_rows: the rows of the worker rules
        self._return = 0.0
        self._illegal = 0
        self._decisions = 0

    #: False: the one-call step builds the next job's :class:`~.candidates.Candidates` at once (the reference of
    #: the table kept as the kernel's blocks until something reads it; the differential test runs both)
    _lazy_table = True
    #: False: the one-call step calls :func:`~._kernels.commit_step` through Numba's dispatcher (the reference of the
    #: compiled entry point called directly, :func:`_commit_entry`)
    _direct_entry = True
    #: False: the one-call step reads the chosen row's ps, start and window as three NumPy scalars (the reference of
    #: one ``tolist`` of the row's column)
    _row_list = True
    #: False: ``param_slot`` by ``np.dot`` and NumPy scalars (the reference of ``ndarray.dot`` and Python floats)
    _dot_method = True
    #: False: the fingerprint of a kernel row of y is computed at every step (the reference of once per entry)
    _row_types = True
    #: False: the observation's mean prices are computed from ``q`` (the reference of copying ``Static.qbar``, the
    #: same expression when ``Static.qbar_obs``)
    _share_qbar = True
    #: False: the one-call step calls :func:`~._kernels.commit_step`, which hands the next table back as three arrays
    #: ``ti``, ``y``, ``tf`` (the reference of :func:`~._kernels.commit_step_block`'s one block, whose views are made
    #: here when read: :func:`_block_views`)
    _block_return = True

    @property
    def _cand(self) -> Candidates | None:
        """The pending job's candidate table (commit mode). The one-call step keeps the kernel's blocks
        (``self._raw``: ``ti``, ``y``, ``tf``, ``mask``, ``n_tent``, ``n_now``, ``n_max``) and builds the table from
        them when it is first read here (the same arrays, views of the blocks, as an eager build): a step that only
        reads the mask and the chosen row (a random or masked policy's) skips the table's 15 fields and 10 views,
        about 1.5 µs of a ~95 µs step."""
        c = self._cand_obj
        if c is None:
            raw = self._raw
            if raw is not None:
                ti, yt, tf, mask, n_tent, n_now, n_max = raw
                if ti is None:  # commit_step_block's block: the three arrays as views of it
                    ti, yt, tf = _block_views(yt, mask.shape[0])
                c = _new_candidates15(ti[0], ti[1], ti[2], ti[3], ti[4], yt, tf[0], tf[1], tf[2], tf[3], tf[4],
                                      mask, n_tent, n_now, n_max)
                self._cand_obj = c
                self._raw = None
        return c

    @_cand.setter
    def _cand(self, value: Candidates | None) -> None:
        self._cand_obj = value
        self._raw = None

    # ----------------------------------------------------------------- episode
    def __getstate__(self) -> dict:
        """The env's state for :func:`copy.deepcopy` and :mod:`pickle`, without the one-call step's cached arguments
        and their compiled entry point (``_fast``): process-local objects that can be neither copied nor pickled,
        rebuilt by the next step (the same values)."""
        state = self.__dict__.copy()
        state["_fast"] = None
        return state

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        p = self.preset
        inst = self.fixed_instance if self.fixed_instance is not None else build_instance(p, self.np_random)
        self.inst = inst
        st = make_static(inst, p.okita.beta, p.okita.q_norm, p.okita.pa_tie == "le")
        self.sim = None  # the last episode's simulator released before the next allocates (its ~2.7 MB calendar
        # reused instead of fresh pages: about 0.09 ms of a ~0.9 ms reset, alternating runs); the one-call step's
        # arguments hold it too
        self._fast = None
        disc = None
        if self.mode == "replan":
            disc = make_discipline(p.env.discipline, np.random.default_rng(self.np_random.integers(2**63)), p.okita,
                                   p.env.fifo_workers)
        self.sim = Simulator(inst, mode=self.mode, sampling=p.env.sampling, latency_offset=p.env.latency_offset,
                             cap_factor=p.env.cap_factor,
                             calendar_len=p.calendar_len if self.mode == "commit" else None,
                             record=p.env.record_schedule or self.render_mode == "rgb_array", static=st,
                             discipline=disc, model_sampling=p.okita.model_sampling)
        self._k = 0
        self._return = 0.0
        self._illegal = 0
        self._decisions = 0
        self._obs_site, self._obs_job = self._observation_constants()
        # env.obs_relative: the observation's head is constant for the episode (read only; ~0.5 µs a step to build)
        self._head_rel = np.array([0.0, 0.0, inst.cap.shape[0]], dtype=float)
        self._obs_next = None
        self._prepare()
        if self.mode == "commit" and not (self._use_reference or self.sim.record):
            # the one-call step's job arrays built now (they are needed from the second step on anyway): the first
            # step then takes the one-call path too, which also loads its kernel with the episode's first step
            self._job_arrays()
        return self._observation(), {"job": 0, "action_mask": self.action_masks()}

    def _observation_constants(self) -> tuple[np.ndarray, np.ndarray]:
        """The observation's per-episode parts: site mask + mean price ``(2·R_max,)``, and every job's block
        ``(n_jobs, ·)`` (κ, δ, π, cost kind and parameters, demands, data, N_max: the numpy operations of
        ``_reference.observation``, element by element, for all jobs at once)."""
        inst, Rm, nz = self.inst, self.R_max, self._norm
        R = inst.num_sites
        site = np.zeros(2 * Rm)
        site[:R] = 1
        st = self.sim.static
        if self._share_qbar and st.qbar_obs:  # make_static's qbar: these operations on these values already
            site[Rm:Rm + R] = st.qbar
        else:
            qmax = inst.q.max()
            if R > 1 and qmax > 0:
                site[Rm:Rm + R] = inst.q.sum(axis=1) / (R - 1) / qmax
        if _ep.ENABLED and inst.data.dtype == np.int64 and inst.kappa.dtype == np.int64:
            # the job blocks in one compiled pass (an empty answer: a job without data, numpy's path)
            f = np.asarray
            job = _ep.job_block(f(inst.kappa, np.int64), f(inst.chunk_mb, float), f(inst.param_mb, float),
                                f(inst.kind, np.int64), f(inst.tau, float), f(inst.b, float), f(inst.tau1, float),
                                f(inst.tau2, float), f(inst.c, float), f(inst.m, float), f(inst.n, float),
                                f(inst.data, np.int64), f(self.sim.static.n_cap, np.int64), int(Rm),
                                float(nz["kappa"]), float(nz["chunk"]), float(nz["param"]), nz["params_f"],
                                nz["cap"], float(nz["data"]), float(nz["nmax"]))
            if job.shape[0] == inst.num_jobs:
                return site, job
        return site, self._job_block_ref()

    def _job_block_ref(self) -> np.ndarray:
        """Every job's block of the observation ``(n_jobs, ·)`` with numpy (the reference of
        :func:`~._episode.job_block`)."""
        inst, Rm, nz = self.inst, self.R_max, self._norm
        R = inst.num_sites
        nj = inst.num_jobs
        kind = np.zeros((nj, 3))
        kind[np.arange(nj), np.where(inst.kind < 3, inst.kind, 0)] = 1
        D = inst.data.sum(axis=1)
        df = np.zeros((nj, Rm))
        df[:, :R] = inst.data / D[:, None]
        nmax = np.minimum(-(-D // inst.kappa), self.sim.static.n_cap) / nz["nmax"]
        job = np.concatenate([
            np.stack([inst.kappa / nz["kappa"], inst.chunk_mb / nz["chunk"], inst.param_mb / nz["param"]], axis=1),
            kind, np.stack([inst.tau, inst.b, inst.tau1, inst.tau2, inst.c], axis=1) / nz["params"],
            inst.m / nz["cap"], inst.n / nz["cap"], (D / nz["data"])[:, None], df, nmax[:, None],
        ], axis=1)
        return np.ascontiguousarray(job, dtype=float)

    def _prepare(self) -> float:
        """Advance to the arrival of job ``self._k``; returns the cost of the slots run (replan mode)."""
        sim, i = self.sim, self._k
        a = int(self.inst.arrival[i])
        cost = 0.0
        if self.mode == "replan":
            cost = sim.run_until(a)
        else:
            sim.t = a
        sim.arrive(i)
        if self.mode != "commit":
            self._cand = None
            self._rules = None  # built on demand (obs_table), from this state: the next step runs no slot before
            return cost
        wait_max, ratio = self.preset.env.wait_max_slots, self.preset.env.prune_ratio
        if self._use_reference:
            self._cand = ref.build_candidates(sim, i, self.G, wait_max)
            while not self._cand.mask.any():  # as below
                sim.extend_calendar(sim.calendar_len)
                self._cand = ref.build_candidates(sim, i, self.G, wait_max)
            self._cand = ref.prune(self._cand, ratio)
            return cost
        # v1 (prune_ratio): candidates estimated far above the cheapest legal one are not actions
        # (the kernel says whether some row is legal: ``mask.any()`` would cost ~1.3 µs of a ~140 µs step)
        self._cand, legal = _table(sim, i, self.G, wait_max, ratio)
        while not legal:  # the calendar is booked to its end (extreme load): double it, so that
            sim.extend_calendar(sim.calendar_len)  # the one-worker "wait" row fits
            self._cand, legal = _table(sim, i, self.G, wait_max, ratio)
        return cost

    def _check(self, action) -> int:
        """The action as an ``int``; ``ValueError`` naming the action space for anything else (shared exact
        check of every family, :func:`edgegym.core.actions.check_action`: e.g. ``np.array([[0]])`` is refused)."""
        return check_action(self.action_space, action)

    def commit_plan(self, plan: Plan):
        """Structured API (commit mode): commit ``plan`` for the pending job; same return as :meth:`step`."""
        return self.step(plan)

    def decode(self, action: int) -> Plan:
        """The plan action ``action`` commits for the pending job (commit mode)."""
        if self.mode != "commit":
            raise ValueError("decode() exists in commit mode only")
        return self._cand.plan(self._k, self._check(action))

    def step(self, action):
        """Commit the pending job's plan (or no-op in replan mode), advance to the next arrival."""
        if self._raw is not None and self._k < self.inst.num_jobs and self._one_call(action):
            # the last step was a one-call step (commit mode, no recording) and this one is too: _transition's
            # dispatch without its call, the next mask read from the kernel's blocks (action_masks's copy)
            self._obs_next = None
            reward, terminated, truncated, info = self._commit_step(action, True)
            raw = self._raw
            info["action_mask"] = raw[3].copy() if raw is not None and not terminated else self.action_masks()
        else:
            reward, terminated, truncated, info = self._transition(action, True)
            info["action_mask"] = self.action_masks()
        if terminated or truncated:
            info["episode_metrics"] = self.episode_metrics()
        obs = self._obs_next
        if obs is None:
            return self._observation(), reward, terminated, truncated, info
        self._obs_next = None
        return obs, reward, terminated, truncated, info

    def step_quiet(self, action) -> tuple[float, bool, bool]:
        """:meth:`step` without building the observation and the info: ``(reward, terminated, truncated)``, the env
        left exactly as ``step(action)`` leaves it (for look-ahead loops; :meth:`observe` gives the observation)."""
        reward, terminated, truncated, _ = self._transition(action)
        return reward, terminated, truncated

    def observe(self) -> np.ndarray:
        """The observation of the current state: what the last ``step`` (or ``reset``) returned."""
        if self.sim is None:
            raise RuntimeError("call reset() before observe()")
        return self._observation()

    def advance_constant(self, action, steps: int | None, total: float):
        """Take ``action`` at every decision for up to ``steps`` decisions (``None``: all but the last) with
        :meth:`step_quiet`, never the step that ends the episode: ``(None, steps taken, total + their rewards added
        in order)``, the ``Policy.advance`` contract with no observation built (policies that always take the same
        action, e.g. Okita's re-plan mode, use it as their fast path)."""
        if self.sim is None:
            raise RuntimeError("call reset() before advance_constant()")
        n, last = 0, self.inst.num_jobs - 1
        while (steps is None or n < steps) and self._k < last:
            r, _, _ = self.step_quiet(action)
            total += r
            n += 1
        return None, n, total

    def _transition(self, action, want_obs: bool = False) -> tuple[float, bool, bool, dict]:
        """The state change of :meth:`step`: ``(reward, terminated, truncated, info)`` (info without the mask and
        the metrics). ``want_obs``: the caller will ask for the observation (the one-call step then computes it too,
        into ``self._obs_next``)."""
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        if self._k >= self.inst.num_jobs:
            raise RuntimeError("the episode has terminated; call reset()")
        sim, i = self.sim, self._k
        self._obs_next = None
        if self._one_call(action):
            return self._commit_step(action, want_obs)
        info: dict = {"job": i}
        job_cost = 0.0
        truncated = False
        if self.mode == "commit":
            if isinstance(action, Plan):
                if action.job != i:
                    raise ValueError(f"plan is for job {action.job}, the pending job is {i}")
                plan = action
                a = -1
            else:
                c = self._cand
                # a Python int in range is the shared check's answer as it is (anything else goes through it)
                a = action if type(action) is int and 0 <= action < c.mask.shape[0] else self._check(action)
                if not c.mask[a]:  # masked: count it, use the legal row with the least estimated cost
                    self._illegal += 1
                    a = int(np.argmin(np.where(c.mask, c.total, np.inf)))
                # the row's y as a view (commit only reads it; the table is rebuilt for the next job)
                plan = _row_plan(i, int(c.start[a]), c.y[a], int(c.ps[a]))
            if self._use_reference:
                job_cost = ref.commit(sim, plan)
            else:  # a row of the candidate table is legal by construction: no check_plan
                job_cost = sim.commit(plan, checked=a >= 0)
            cost = job_cost
            info["action"] = a
        else:
            a = self._check(action)
            if a:  # replan_workers: the arriving job's worker rule (0: Okita's own N*)
                sim.discipline.set_rule(i, a)
            info["action"] = a
            cost = 0.0
        self._decisions += 1
        self._k += 1
        terminated = self._k >= self.inst.num_jobs
        if not terminated:
            cost += self._prepare()
        elif self.mode == "replan":
            c, truncated = sim.run_off()
            cost += c
            terminated = not truncated
        reward = -cost / self.reward_scale
        self._return += reward
        info["cost"] = float(cost)
        info["job_cost"] = float(job_cost)
        if terminated or truncated:
            self._rules = None  # no decision left: no rule rows
        return float(reward), bool(terminated), bool(truncated), info

    def _commit_step(self, action, want_obs: bool) -> tuple[float, bool, bool, dict]:
        """:meth:`_transition` of the commit mode for a row of the candidate table (compiled path, no recording):
        the commit, the next job's arrival and candidate table and, with ``want_obs``, its observation in one
        compiled call (:func:`~._kernels.commit_step`; the same operations as ``Simulator.commit``, :meth:`_prepare`
        and :meth:`_observation`, which the other paths keep)."""
        sim, i = self.sim, self._k
        raw = self._raw
        if raw is not None:  # the last step's table as the kernel's blocks (not built): its rows read there
            ti, yt, tf, mask = raw[0], raw[1], raw[2], raw[3]
        else:
            c = self._cand
            mask = c.mask
        # a Python int in range is the shared check's answer as it is (anything else goes through it)
        a = action if type(action) is int and 0 <= action < mask.shape[0] else self._check(action)
        if not mask[a]:  # masked: count it, use the legal row with the least estimated cost
            self._illegal += 1
            if raw is not None and ti is None:  # commit_step_block's block: the table built (views of it), read below
                c = self._cand
                raw = None
            a = int(np.argmin(np.where(mask, c.total if raw is None else tf[3], np.inf)))
        # the row's y (int64) as Simulator.commit reads it, its PS site, start and window
        if raw is None:
            y, ps, start, win = c.y[a], int(c.ps[a]), int(c.start[a]), int(c.win[a])
        elif ti is None:  # commit_step_block's block: y its row a; win, start, ps at the flat index tf (raw[2]) + a,
            # then C and 2·C further (three ndarray.item, as fast as one tolist of a view)
            y = yt[a]
            C = mask.shape[0]
            o = tf + a
            win, start, ps = yt.item(o), yt.item(o + C), yt.item(o + 2 * C)
        elif self._row_list:  # the row's mode, N, win, start, ps as Python ints in one conversion
            y = yt[a]
            _, _, win, start, ps = ti[:, a].tolist()
        else:
            y, ps, start, win = yt[a], int(ti[4, a]), int(ti[3, a]), int(ti[2, a])
        inst = self.inst
        sinst = sim.inst
        # Simulator.param_slot's expression (NumPy's dot, the same sum) without its call
        if not self._dot_method:
            param_slot = float(sinst.param_mb[i] * np.dot(sinst.q[:, ps], y)) if ps >= 0 else 0.0
        elif ps >= 0:  # ndarray.dot is np.dot's function (PyArray_MatrixProduct2, the same BLAS call) without
            # np.dot's __array_function__ dispatch (~0.25 µs); the product of two doubles as Python floats is
            # numpy's float64 product
            param_slot = float(sinst.param_mb[i]) * float(sinst.q[:, ps].dot(y))
        else:
            param_slot = 0.0
        fa = self._fast
        if fa is None or fa[0] is not sim or fa[1] is not sinst or fa[2] is not sim._cal:
            fa = self._fast_args()
        # the calendar written where the call reads and books it: the plan's window, and the next job's
        # observation rows (slots from its arrival; the table reads slot t and the committed windows only)
        k = i + 1
        need = start + win
        nj = inst.arrival.shape[0]
        if k < nj:
            need = max(need, fa[4][0][k] + self._H)
        if need > sim._cal_fill:
            sim.cal_upto(need)
        entry = fa[5]
        if raw is not None and self._row_types:
            # a row of the kernel's own y block: its type (int64, 1-D, C order, writeable, aligned) is the same at
            # every step, so whether it has the entry's fingerprint is checked once per entry (fa[6])
            known = fa[6]
            ok = known[0]
            if ok is None or known[1] is not entry[0]:
                ok = entry[0] is not None and entry[1] == entry[2](y)
                known[0], known[1] = ok, entry[0]
        else:
            ok = entry[0] is not None and entry[1] == entry[2](y)
        if ok:  # the compiled version for these types, directly
            out = entry[0](*fa[3], i, y, start, ps, param_slot, want_obs)
        else:
            out = fa[7](*fa[3], i, y, start, ps, param_slot, want_obs)
            if self._direct_entry and entry[0] is None:  # compiled now if it was not: looked up for the next steps
                entry[:] = _commit_entry(fa[3], y.shape[0], fa[7])
        if fa[7] is kn.commit_step:
            cost, ws, left, ti, yt, tf, mask, n_tent, n_now, legal, obs = out
        else:  # the block: raw = (None, block, flat index of row a's window: C·R + 2·C, mask, ...)
            cost, ws, left, yt, mask, n_tent, n_now, legal, obs = out
            ti = None
            C = mask.shape[0]
            tf = C * yt.shape[1] + 2 * C
        assert left == 0, "a committed window must train all data"  # internal invariant
        sim.worker_slots += ws
        self._decisions += 1
        self._k = k
        terminated = k >= nj
        if not terminated:
            sim.t = fa[4][0][k]  # the job's arrival slot (a Python int)
            if self._lazy_table:  # the table built when something reads it (:attr:`_cand`)
                self._cand_obj = None
                self._raw = (ti, yt, tf, mask, n_tent, n_now, fa[4][1][k])
            else:
                if ti is None:
                    ti, yt, tf = _block_views(yt, mask.shape[0])
                self._cand = _new_candidates15(ti[0], ti[1], ti[2], ti[3], ti[4], yt, tf[0], tf[1], tf[2], tf[3],
                                               tf[4], mask, n_tent, n_now, fa[4][1][k])
            if legal:
                if want_obs:
                    self._obs_next = obs
            else:  # the calendar is booked to its end: as _prepare (the observation then built by _observation)
                wait_max, ratio = self.preset.env.wait_max_slots, self.preset.env.prune_ratio
                while not legal:
                    sim.extend_calendar(sim.calendar_len)
                    self._cand, legal = _table(sim, k, self.G, wait_max, ratio)
        reward = -cost / self.reward_scale
        self._return += reward
        return float(reward), bool(terminated), False, {"job": i, "action": a, "cost": float(cost),
                                                        "job_cost": float(cost)}

    def _one_call(self, action) -> bool:
        """Whether ``action`` is stepped by the one-call path (:meth:`_commit_step`): commit mode, a row index (not
        a :class:`Plan`), no reference env, no schedule recording, and :meth:`_fast_ok`."""
        return self.mode == "commit" and not (self._use_reference or self.sim.record or isinstance(action, Plan)) \
            and self._fast_ok()

    def _fast_ok(self) -> bool:
        """Whether this step takes the one-call path: the jobs' arrays of this instance are built, or this is its
        second such step (the first one of an instance takes the other path: a fork that redraws the future and
        takes a single row step, as a rollout's candidate step, would spend more on the arrays, ~70 µs, than the
        call saves, ~15 µs)."""
        fj = self._fast_jobs
        inst = self.sim.inst
        if (fj is not None and fj[0] is inst) or self._fast_seen is inst:
            return True
        self._fast_seen = inst
        return False

    def _fast_args(self) -> tuple:
        """The arguments of :func:`~._kernels.commit_step` but the step's own, cached in ``self._fast`` with the
        simulator, instance and calendar they belong to (a fork, a redrawn future or an extended calendar rebuilds
        them): the instance and the simulator's arrays, the observation's constants, and the jobs' arrays of
        :meth:`_job_arrays`."""
        sim, pe = self.sim, self.preset.env
        inst, st = sim.inst, sim.static
        jobs, scalars = self._job_arrays()
        wait_max, ratio = pe.wait_max_slots, pe.prune_ratio
        lin_idx, lin_cnt = _lin_table(int(self.G))
        args = (inst.cap, st.qbar, inst.q, st.src_order, st.beta, st.tie_le, st.q_nonneg, sim.prop,
                sim.sampling == "complete", sim.offset, float(inst.exp_rate), int(self.G), int(wait_max), lin_idx,
                lin_cnt, ratio is not None, float(ratio) if ratio is not None else 0.0, inst.data, inst.m, inst.n,
                *jobs, sim.M, sim._cal, int(sim.calendar_len), sim.start, sim.t_last, sim.plan_l, sim.plan_y,
                sim.plan_ps, sim.transfer, sim.param, sim.lat_cost, sim.status, self._low64, self._high64,
                float(pe.cost_clip), bool(pe.obs_relative), self._head_rel, int(inst.horizon_slots),
                float(pe.cap_factor), self._obs_site, self._obs_job, int(self.R_max), int(pe.calendar_slots),
                bool(pe.obs_rows), sim.usage, int(self._max_win), float(self.reward_scale))
        # the compiled entry point and the fingerprint of y it takes (a list: looked up again after a compiling call)
        # the block kernel where its block holds y's rows (a site at least)
        kernel = kn.commit_step_block if self._block_return and inst.cap.shape[0] > 0 else kn.commit_step
        entry = _commit_entry(args, inst.cap.shape[0], kernel) if self._direct_entry else [None, None, None]
        # [whether the kernel's rows of y have the entry's fingerprint, the entry it was checked for] (_commit_step)
        # the step reads the next job's arrival and N_max (Python ints) from two lists, not from its scalars' tuple
        self._fast = (sim, inst, sim._cal, args, self._fast_jobs[3], entry, [None, None], kernel)
        return self._fast

    def _job_arrays(self) -> tuple[tuple, list]:
        """The jobs' arguments of :func:`~._kernels.commit_step` (``kap`` … ``grid_n``: the scalars of
        ``candidates._job_table`` as arrays, its latency vectors, its shared site orders as rows with a flag, each
        job's geometric worker grid) and the table's scalars, cached per instance (``self._fast_jobs``, shared with
        forks that keep the future)."""
        sim = self.sim
        fj = self._fast_jobs
        if fj is not None and fj[0] is sim.inst:
            return fj[1], fj[2]
        inst, st = sim.inst, sim.static
        _, _, lat_tab, scalars, orders = _job_table(sim)
        nj, R, G = inst.num_jobs, inst.num_sites, int(self.G)
        jc = _job_consts(sim) if _cd._FUSED_JOBS else None
        if jc is not None:  # the arrays below, computed once for _job_table and here
            _, kap, tot, nmax, has, orders2, hi = jc
        else:
            # the scalars of _job_table as arrays (the same values): κ, N_max = max(1, min(ceil(D/κ), n_cap)), ...
            kap = np.asarray(inst.kappa).astype(np.int64)
            tot = inst.data.sum(axis=1).astype(np.int64)
            nmax = np.maximum(1, np.minimum(-(-tot // kap), st.n_cap.astype(np.int64)))
            orders2 = np.zeros((nj, R), np.int64)
            # the jobs with the shared order: those with data at every site (how _job_table hands it out)
            has = (inst.data > 0).all(axis=1).reshape(nj)
            if has.any():  # one shared order (the capacities' for untrained jobs with data at every site)
                orders2[has] = orders[int(np.argmax(has))]
            hi = int(nmax.max()) if nj else 0
        arrival, kind = np.asarray(inst.arrival).astype(np.int64), np.asarray(inst.kind).astype(np.int64)
        floats = tuple(np.asarray(getattr(inst, f), dtype=float)
                       for f in ("param_mb", "chunk_mb", "tau", "b", "tau1", "tau2", "c"))
        # each job's grid gathered by its N_max from a table cached per (G, size bucket): no np.unique and no
        # per-episode loop over the distinct N_max (about 0.1 ms of an episode's first one-call step)
        n_hi = 64 if not nj else max(64, 1 << int(hi).bit_length())
        gtab, gsize = _grid_table(G, n_hi)
        grids = gtab[nmax]
        grid_n = gsize[nmax]
        jobs = (kap, nmax, arrival, kind, *floats, lat_tab, orders2, has, grids, grid_n)
        # the jobs' arrivals and N_max as Python ints (the step's, entries 2 and 1 of their scalars)
        cols = scalars.columns() if isinstance(scalars, _cd.JobScalars) else ([s[2] for s in scalars],
                                                                           [s[1] for s in scalars])
        self._fast_jobs = (inst, jobs, scalars, cols)
        return jobs, scalars

    def episode_metrics(self) -> dict:
        """Flat metrics of the episode so far (``objective``: total cost, the return is minus it / scale)."""
        m = self.sim.metrics()
        m.update({
            "reward_scale": self.reward_scale,
            "illegal_actions": int(self._illegal),
            "decisions": int(self._decisions),
            "slots_run": int(self.sim.slots_run),
            "mode_replan": int(self.mode == "replan"),
        })
        d = getattr(self.sim.discipline, "decisions", None)
        if d:
            m.update({f"okita_{k}": int(v) for k, v in d.items()})
        return m

    def episode_return(self) -> float:
        """Undiscounted return accumulated so far."""
        return self._return

    def drain_return(self) -> float:
        """Run the jobs already arrived to completion, with no further arrival, and return the reward that
        credits (the same credit as the steps'); ends the episode (``step`` then raises until ``reset``).

        A terminal value for look-ahead on a fork (``rollout``'s ``D=1``): in the replan mode, the cost the jobs
        in the system will still incur if nothing else arrives (the pending job, already arrived, runs under
        action 0's rule; the cap and its penalty as at the episode's end); in the commit mode ``0.0``, since each
        committed job's exact cost was charged at its decision and the pending job has no plan.
        """
        if self.sim is None:
            raise RuntimeError("call reset() before drain_return()")
        if self._k >= self.inst.num_jobs:
            return 0.0
        cost = self.sim.run_off()[0] if self.mode == "replan" else 0.0
        self._k = self.inst.num_jobs
        reward = -cost / self.reward_scale
        self._return += reward
        return reward

    # ----------------------------------------------------------------- masks, view, observation
    def action_masks(self) -> np.ndarray:
        """Legal actions (bool, shape ``(n,)``): feasible candidate rows (commit), ``[True]`` (replan)."""
        if self.sim is None:
            raise RuntimeError("call reset() before action_masks()")
        if self.mode != "commit":
            return np.ones(self.action_space.n, dtype=bool)
        if self._k >= self.inst.num_jobs:
            return np.ones(self.action_space.n, dtype=bool)
        raw = self._raw
        if raw is not None:  # the one-call step's mask (the table not built yet, see _cand)
            return raw[3].copy()
        c = self._cand
        if c is None:
            return np.ones(self.action_space.n, dtype=bool)
        return c.mask.copy()

    def view(self) -> UDLView:
        """Read-only state of the current decision point (for reference policies)."""
        inst, i = self.inst, min(self._k, self.inst.num_jobs - 1)
        return UDLView(
            t=int(self.sim.t), job=int(i), arrival=int(inst.arrival[i]), mode=self.mode,
            num_sites=inst.num_sites, cap=_ro(inst.cap), q=_ro(inst.q), kappa=int(inst.kappa[i]),
            chunk_mb=float(inst.chunk_mb[i]), param_mb=float(inst.param_mb[i]), m=_ro(inst.m[i]),
            n=_ro(inst.n[i]), data=_ro(inst.data[i]), kind=int(inst.kind[i]),
            cost_params=np.array([inst.tau[i], inst.b[i], inst.tau1[i], inst.tau2[i], inst.c[i]]),
            cand=self._cand, calendar=_ro(self.sim.cal) if self.sim.cal is not None else None,
            latency_offset=self.sim.offset, exp_rate=float(inst.exp_rate),
        )

    def _observation(self) -> np.ndarray:
        """The observation (one compiled call, :func:`~._kernels.observe`; ``_reference.observation`` is the
        numpy original)."""
        if self._use_reference:
            return ref.observation(self)
        inst, sim = self.inst, self.sim
        pe = self.preset.env
        R = inst.cap.shape[0]
        nj = inst.arrival.shape[0]
        k = self._k
        i = k if k < nj else nj - 1
        if pe.obs_relative:  # slot and job fractions, and the normaliser of the active-job count (the episode's)
            head = self._head_rel
        else:
            head = np.array([min(sim.t / inst.horizon_slots, pe.cap_factor), k / nj, nj], dtype=float)
        commit = self.mode == "commit"
        c = self.obs_table()
        has_cand = c is not None
        if c is None:
            c = self._no_cand()
        H = pe.calendar_slots
        t = int(sim.t)
        if commit:
            cal = sim.cal_upto(t + H)  # the rows it shows written (the later slots need not be)
            free_len = max(0, min(H, cal.shape[0] - t))
        else:
            cal = _NO_CAL
            free_len = 0
        rows = bool(pe.obs_rows)
        return kn.observe(
            self._low64, self._high64, float(pe.cost_clip), head, self._obs_site, self._obs_job[i], cal, free_len,
            inst.cap, R, self.R_max, H, not commit, sim.usage, has_cand, rows, rows, c.mask, c.N, int(c.n_max),
            c.win, self._max_win, c.start, t, max(int(sim.calendar_len), 1), c.y, c.ps, c.transfer, c.param, c.latency,
            c.peak, c.total, int(c.n_tent), float(self.reward_scale), sim.start, sim.t_last, sim.status)

    def obs_table(self) -> Candidates | None:
        """The table behind the observation's candidate rows: the commit mode's candidates; in the replan mode with
        ``env.replan_workers`` and ``env.obs_rows``, one row per worker rule (:meth:`_rule_table`); else ``None``."""
        if self.mode == "commit":
            return self._cand
        if self._rules is None and self._rule_rows and self.sim is not None and self._k < self.inst.num_jobs:
            self._rules = self._rule_table(self._k)
        return self._rules

    def _rule_table(self, i: int) -> Candidates:
        """Replan mode, worker-rule action, v1 rows: row ``r`` (action ``r``) describes arriving job ``i`` run with
        ``WORKER_RULES[r]`` as Okita's tentative table prices it at this slot (the table Okita's next allocation
        reads and caches, so asking for it changes no decision): its worker count N, window, PS site and
        Q-greedy worker placement, estimated transfer, parameter and latency costs, and the peak utilisation of
        the sites it would use on top of the last slot's usage. Rows past ``len(WORKER_RULES)`` are padding."""
        sim = self.sim
        disc = sim.discipline
        t = int(sim.t)
        tab = disc.table(sim, i, t)
        inst, st = sim.inst, sim.static
        C, R = 2 * self.G, inst.num_sites
        z = np.zeros(C)
        N, win, start, ps = (np.zeros(C, np.int64) for _ in range(4))
        y = np.zeros((C, R), np.int64)
        transfer, param, latency, total, peak = z.copy(), z.copy(), z.copy(), z.copy(), z.copy()
        mask = np.zeros(C, bool)
        order, _ = kn.site_order(inst.cap, inst.cap, st.qbar, sim.M[i], inst.data[i], *st.beta)
        cap = inst.cap
        for r in range(len(WORKER_RULES)):
            n = rule_workers(tab, r)
            N[r], start[r], mask[r] = n, t, True
            win[r], ps[r] = int(tab["l"][n]), int(tab["ps"][n])
            transfer[r], param[r] = tab["transfer"][n], tab["param"][n]
            latency[r], total[r] = tab["latency"][n], tab["total"][n]
            if ps[r] >= 0:
                y[r] = kn.fill(cap, order, inst.m[i], inst.n[i], n, ps[r])
                if (y[r] >= 0).all():
                    used = sim.usage + sim.demand(i, y[r], int(ps[r]))
                    sites = (y[r] > 0) | (np.arange(R) == ps[r])
                    with np.errstate(divide="ignore", invalid="ignore"):
                        frac = np.where(cap[sites] > 0, used[sites] / cap[sites], 0.0)
                    peak[r] = float(frac.max())  # the PS site is always among them
                else:
                    y[r] = 0
        return Candidates(mode=np.zeros(C, np.int64), N=N, win=win, start=start, ps=ps, y=y, transfer=transfer,
                          param=param, latency=latency, total=total, peak=peak, mask=mask, n_tent=int(tab["best"]),
                          n_now=0, n_max=int(tab["n_max"]))

    def _no_cand(self) -> Candidates:
        """An all-masked table of the right shapes (the observation of the replan mode has no candidates)."""
        C, R = 2 * self.G, self.inst.num_sites
        z = np.zeros(C)
        zi = np.zeros(C, np.int64)
        return Candidates(mode=zi, N=zi, win=zi, start=zi, ps=zi, y=np.zeros((C, R), np.int64), transfer=z,
                          param=z, latency=z, total=z, peak=z, mask=np.zeros(C, bool), n_tent=0, n_now=0, n_max=0)

    @property
    def obs_layout(self):
        """With ``env.obs_rows`` (v1): a callable returning where the observation's blocks lie, for per-row
        policies (``edgegym.agents.rl.shared``): ``glob`` (the slot, job-index and active-job fractions) and ``job``
        (the arriving job's features) are sequences of ``(start, stop)`` ranges; ``rows`` candidate rows of
        ``row_dim`` features from ``rows_start``; action ``a`` picks row ``a`` (``row_actions``), no other actions.
        The per-site blocks (:data:`SITE_BLOCKS`: one entry per site, their width set by the site count) are left out
        of ``glob`` and ``job`` (the rows already carry each plan's site-dependent costs and utilisation), so that a
        network trained on one number of sites reads any other. ``None`` without ``env.obs_rows`` (the v0 candidate
        features are one block per feature) and in the re-plan mode without ``env.replan_workers``."""
        if not self.preset.env.obs_rows or (self.mode != "commit" and not self._rule_rows):
            return None
        sizes = [int(np.prod(shape)) for _, shape, *_ in self._blocks]
        ends = np.cumsum(sizes)
        names = [n for n, *_ in self._blocks]
        span = {n: (int(e - w), int(e)) for n, w, e in zip(names, sizes, ends, strict=True)}
        first_job = names.index("kappa")
        glob = tuple(span[n] for n in names[:first_job] if n not in SITE_BLOCKS)
        job = tuple(span[n] for n in names[first_job:-1] if n not in SITE_BLOCKS)
        C, F = self._blocks[-1][1]
        if self._rule_rows:  # the first len(WORKER_RULES) rows, one per worker rule
            C = len(WORKER_RULES)
        layout = {"job": _merge(job), "rows_start": int(span[names[-1]][0]), "rows": int(C), "row_dim": int(F),
                  "glob": _merge(glob), "row_actions": True, "extra_actions": 0}
        return lambda: dict(layout)

    # ----------------------------------------------------------------- rendering
    def render(self):
        """``render_mode="rgb_array"``: a per-site Gantt chart as an RGB array (needs ``edgegym[plot]``)."""
        if self.render_mode != "rgb_array":
            return None
        from .rendering import render_gantt

        return render_gantt(self)

    def fork(self, seed: int = 0, future: str = "resample") -> WirelessUDLEnv:
        """An independent env in exactly the current state (mid-episode), for look-ahead planning.

        ``future="keep"``: the jobs that have not arrived yet are the true ones; the fork is marked ``clairvoyant``
        (for analysis and bounds only). ``future="resample"`` (default): they are redrawn, deterministically from
        ``seed``, from the preset's own workload model: a new instance is drawn by the preset's generator and its
        jobs after the pending one replace the true future (the sites, capacities and prices are this episode's);
        their arrival slots are drawn uniformly on [pending job's arrival, end of the arrival window] and sorted
        (the preset draws every arrival uniformly on the window). The number of jobs stays the same. See
        :mod:`edgegym.core.forking`.
        """
        from .fork import fork

        return fork(self, seed=seed, future=future)
