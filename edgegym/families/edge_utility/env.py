"""``EdgeUtility``: the heterogeneous-utility dispatch of Zhang et al. (ToN 2023) as a Gymnasium env, one step per
released job.

Paper: Zhang et al., "Online Approximation Scheme for Scheduling Heterogeneous Utility Jobs in Edge
Computing", IEEE/ACM ToN 2023 (system model: Sec. III; O4A: Sec. IV). At each step the agent picks
the edge server (or the cloud, the last row; or ``reject`` when ``env.allow_reject``) that gets the pending
job. Per-server scheduling is
the configured discipline (``scheduler.discipline``: ``o4a`` — O4A's executable sets and densities — or
``fifo``, ``srpt``, ``edf``, ``hpu``, ``hrdf``); the cloud is an infinite-capacity delay server by default.

Reward (``env.reward_credit: completion``, v0): the utility ``g_q(C_q + Δ↓ − r_q)`` of every job whose result
comes back in ``(r_i, r_{i+1}]``, divided by ``env.reward_scale`` (default 1); after the last job the simulator
drains, so the undiscounted return equals the total utility Σ_i g_i(c_i) exactly. ``reward_credit: dispatch``
(v1) credits the dispatched job's *planned* utility ``g_i(f̂_i − r_i)`` (``f̂`` the discipline's finish estimate,
:meth:`EdgeUtilityEnv.query_finish`) at the dispatch step and ``actual − planned`` at its completion (a job
that never completes gives its plan back at the last step): the sum telescopes to the same total utility, but
the decision that caused it is credited at once instead of ~100 steps later. Every ``info`` value has a fixed
shape (vector envs stack them): ``completed_count`` and ``reward_utility`` of the step's completions; with
``info_details=True`` also ``info["completed"]``, a list of ``(job, server, utility, jrt_s, dispatch_step)``
per completion; ``info["episode_metrics"]`` at the last step.

Presets live in ``envs_config/utility/*.yaml`` and are validated by :func:`load_utility_preset` (unknown key
or out-of-range value → ``ValueError`` naming the key and the file). Each registers as
``EdgeUtility-<name>-v<version>``; ``EdgeUtility-v0`` runs ``testbed``.

Version history: v0 — first version. v1 — ``reward_credit: dispatch``, ``obs_relative: true`` (estimate minus
the best row's estimate, queue length relative to the longest queue, no absolute-time or episode-position
features) and ``reward_scale`` 100 (per-step rewards O(1)); dynamics unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ...core.actions import check_discrete_action
from ...core.validation import check_config_mapping
from .disciplines import O4AParams
from .instance import DEVICE_TYPES, build_utility_jobs, bursty_release_times, rescale_release_times
from .presets import (
    DEFAULT_PRESET,
    MAX_NUM_JOBS,
    UtilityPreset,
    WorkloadConfig,
    load_utility_preset,
    offered_load,
    release_rate_per_s,
)
from .simulator import UtilityJobs, UtilitySimulator, _kernels, upper_bound
from .utility_fn import FAMILY_CODES, vector_rows

__all__ = ["EdgeUtilityEnv", "UtilityView", "observation_features"]

_G_POINTS = np.geomspace(0.01, 10.0, 16)
#: upper bound of log1p(x) for any finite x >= 0 (a float64 is at most ~1.8e308): the declared high of the features
#: that are log1p of a time in seconds or of a utility, which no preset bounds below it (``workload`` accepts any
#: positive times and utilities); on the shipped presets they stay far below (docs/families/edge_utility.md)
_LOG_MAX = math.log(np.finfo(np.float64).max)
#: log1p of the queue length: a server holds at most every job of the episode (``workload.num_jobs`` <= 1e6)
_LOG_QUEUE_MAX = math.log1p(MAX_NUM_JOBS)
#: log1p(releases / span) of the release-rate feature: 50 releases over the smallest positive float64 span
_LOG_RATE_MAX = math.log(51.0) - math.log(np.finfo(np.float64).smallest_subnormal)
#: the released job's features: utility family one-hot, g(t)/g_max at 16 response times, scale, position
_JOB_FEATURE_LIST = (
    ("family.linear", "1 if the utility is linear (one-hot of the utility family)", 0.0, 1.0),
    ("family.aon", "1 if the utility is all-or-nothing (hard deadline)", 0.0, 1.0),
    ("family.sigmoid", "1 if the utility is a sigmoid of the response time", 0.0, 1.0),
    ("family.other", "1 if the utility is constant or a step function", 0.0, 1.0),
    *((f"utility_at[{t:.3g}s]", f"g_j({t:.3g} s) / g_max: the utility left after a {t:.3g} s response time",
       0.0, 1.0) for t in _G_POINTS),
    ("log_g_max", "log1p(g_max) / 5: the largest utility the job can give", 0.0, _LOG_MAX / 5),
    ("remaining", "(number of jobs − index of this job) / number of jobs (v1, obs_relative: 0)", 0.0, 1.0),
)
#: per row (edge server s = 0..S_max−1, then the cloud); response times in seconds
_ROW_FEATURE_LIST = (
    ("log_proc", "log1p(estimated processing time on the server, s)", 0.0, _LOG_MAX),
    ("log_up", "log1p(estimated upload delay Δ̂↑, s)", 0.0, _LOG_MAX),
    ("log_down", "log1p(estimated download delay Δ̂↓, s)", 0.0, _LOG_MAX),
    ("log_lb", "log1p(no-queue response time Δ̂↑ + p̂/s + Δ̂↓, s)", 0.0, _LOG_MAX),
    ("log_est", "log1p(estimated response time with the queue, s) (v1: minus the best row's; 0 if "
     "env.obs_estimates is off)", 0.0, _LOG_MAX),
    ("utility_lb", "g_j(no-queue response time) / g_max", 0.0, 1.0),
    ("utility_est", "g_j(estimated response time) / g_max (0 if env.obs_estimates is off)", 0.0, 1.0),
    ("queue", "log1p(jobs queued on the server) (v1: queue / (1 + longest queue))", 0.0, _LOG_QUEUE_MAX),
    ("present", "1 for a real server (or the cloud), 0 for a padded row", 0.0, 1.0),
)
_GLOBAL_FEATURE_LIST = (
    ("log_time", "log1p(release time of the job, s) / 10 (v1: 0)", 0.0, _LOG_MAX / 10),
    ("progress", "index of this job / number of jobs (v1: 0)", 0.0, 1.0),
    ("log_rate", "log1p(jobs per second over the last 50 releases) / 5", 0.0, _LOG_RATE_MAX / 5),
)
_JOB_FEATURES = len(_JOB_FEATURE_LIST)
_ROW_FEATURES = len(_ROW_FEATURE_LIST)
_GLOBAL_FEATURES = len(_GLOBAL_FEATURE_LIST)


def _log_rate(n: int, span: float) -> float:
    """log1p(n / span) (0 for an empty span), finite even when ``n / span`` overflows a float64."""
    if not span > 0:
        return 0.0
    rate = n / float(span)  # a Python float: inf on overflow, no warning
    return math.log1p(rate) if math.isfinite(rate) else math.log(n) - math.log(span)


def _feature_list(max_edge_servers: int) -> list[tuple[str, str, float, float]]:
    f = list(_JOB_FEATURE_LIST)
    for s in range(max_edge_servers + 1):
        row = "cloud" if s == max_edge_servers else f"server[{s}]"
        f += [(f"{row}.{name}", meaning, lo, hi) for name, meaning, lo, hi in _ROW_FEATURE_LIST]
    return f + list(_GLOBAL_FEATURE_LIST)


def observation_features(preset: UtilityPreset | str = DEFAULT_PRESET) -> list[tuple[str, str, float, float]]:
    """One ``(name, meaning, low, high)`` per observation index, in order, for a preset (name, path or object).

    The env allocates its observation from this list (its length is the observation size), so the
    documented table cannot drift from the code. Rows are padded to ``env.max_edge_servers``.
    """
    p = preset if isinstance(preset, UtilityPreset) else load_utility_preset(preset)
    S = p.num_edge_servers
    return _feature_list(p.env.max_edge_servers if p.env.max_edge_servers is not None else S)


# ============================================================================================ env
@dataclass(frozen=True, slots=True)
class UtilityView:
    """Read-only view of a decision point (numpy copies and scalars; ``utility`` is an immutable value).

    Row index = action index: edge servers ``0..S-1`` (padded up to ``max_edge_servers``), then the cloud.
    Times are absolute seconds; ``lb_s`` are offsets (Δ̂↑ + p̂/s + Δ̂↓, DO4A's "minimum possible finish").
    """

    now: float
    job: int
    release_s: float
    utility: Any
    num_edge_servers: int
    max_edge_servers: int
    has_cloud: bool
    valid: np.ndarray  # (N,) bool: row exists
    lb_s: np.ndarray  # (N,) planned no-queue JRT (inf where invalid)
    p_plan_s: np.ndarray  # (N,) planned processing time (speed 1)
    queue_length: np.ndarray  # (N,) int
    discipline: str
    allow_reject: bool
    reject_action: int | None
    dispatch_latency_s: float


def _trace_release_times(cfg: WorkloadConfig, rng: np.random.Generator,
                         cache: dict | None = None) -> np.ndarray | None:
    """Task-level release times of a random window of the Google 2011 trace, or None if absent.

    ``cache``: a dict that keeps the table's sorted submit times and task counts between calls, keyed by the
    table, the folder and ``max_burst`` (an env's: its resets read and parse the file once; the draws are the
    same)."""
    key = (cfg.google_table, cfg.trace_dir, cfg.max_burst)
    sorted_table = cache.get(key) if cache is not None else None
    if sorted_table is None:
        from ...workloads import load_google2011

        try:
            table = load_google2011(table=cfg.google_table, trace_dir=cfg.trace_dir)
        except FileNotFoundError:
            if cfg.trace_dir:  # an explicit folder without the table: an error, never a silent fallback
                raise
            return None
        submit = table["submit_time_s"].to_numpy(dtype=float)
        tasks = np.minimum(table["num_gpus"].to_numpy(dtype=np.int64), cfg.max_burst)
        order = np.argsort(submit, kind="stable")
        sorted_table = (submit[order], tasks[order], np.cumsum(tasks[order]))
        for arr in sorted_table:
            arr.setflags(write=False)
        if cache is not None:
            cache[key] = sorted_table
    submit, tasks, cum = sorted_table
    n = cfg.num_jobs
    ok = np.flatnonzero(cum[-1] - np.concatenate([[0], cum[:-1]]) >= n)
    if cfg.window == "random" and tuple(cfg.window_part) != (0.0, 1.0):
        # held-out windows: the whole window lies in trace jobs [lo·R, hi·R) (disjoint parts never share a task)
        lo, hi = (int(f * submit.size) for f in cfg.window_part)
        before = np.concatenate([[0], cum[:-1]])[lo:hi]
        ok = lo + np.flatnonzero((cum[hi - 1] if hi > lo else 0) - before >= n)
        if not ok.size:
            raise ValueError(f"workload.window_part={list(cfg.window_part)}: that part of the Google 2011 table "
                             f"(trace jobs {lo}..{hi - 1}) holds fewer than num_jobs={n} tasks")
    if cfg.window == "random":
        start = int(rng.choice(ok)) if ok.size else 0
    else:
        start = int(cfg.window)
        if not ok.size or start > ok[-1]:
            last = int(ok[-1]) if ok.size else -1
            raise ValueError(
                f"workload.window={start}: the Google 2011 table has fewer than num_jobs={n} tasks from there "
                f"(largest valid window start: {last})"
            )
    t = np.repeat(submit[start:], tasks[start:])[:n]
    return t


def _utility_rows(utab: tuple, utilities, lo: int, t: np.ndarray) -> np.ndarray:
    """``utilities[lo + q].vector(t[q:q+1])[0]`` for every ``q``: :func:`vector_rows`' elementwise numpy operations,
    a family at a time, with the parameters read from the simulator's utility table (``utility_table``: the same
    values) instead of the utility objects."""
    n = t.size
    code, a, b, c, inc = (x[lo:lo + n] for x in utab[:5])
    out = np.empty(n)
    for f in np.unique(code).tolist():
        sel = np.flatnonzero(code == f)
        x = t[sel]
        if f == 0:  # linear
            out[sel] = np.maximum(0.0, b[sel] - a[sel] * x)
        elif f == 1:  # aon
            out[sel] = np.where(np.where(inc[sel], x <= c[sel], x < c[sel]), a[sel], 0.0)
        elif f == 2:  # sigmoid
            with np.errstate(over="ignore"):
                out[sel] = b[sel] / (np.exp(np.minimum(a[sel] * (x - c[sel]), 700.0)) + 1.0)
        elif f == 3:  # constant
            out[sel] = b[sel]
        else:  # step: one row at a time
            for q in sel.tolist():
                out[q] = utilities[lo + q].vector(t[q:q + 1])[0]
    return out


#: a resampled fork's observation rows of its redrawn jobs are copied from a table of the draw shared by every fork
#: that splices it (:class:`_DrawFeatures`) instead of computed per fork (False: computed, the test oracle; the same
#: values)
SHARE_DRAW_ROWS = True


class _JobFeatures:
    """The observation features of an episode's jobs that do not depend on the servers' state (the job block,
    each row's processing time, delays, no-queue response time and its utility, the presence flags and the global
    features), one float32 row per job, computed a block of jobs at a time with the same elementwise operations as
    :meth:`EdgeUtilityEnv._observation_reference` (numpy over the block instead of one job), so the values are
    identical. Blocks start at the first job not yet covered and double from :attr:`FIRST_BLOCK` to :attr:`BLOCK`
    jobs (a fork that redraws the future and runs a few steps computes few rows); the last :attr:`MAX_BLOCKS`
    blocks are kept (memory independent of the episode length). A cache derived from the immutable jobs: deep
    copies share it (``__deepcopy__`` returns it) and pickling drops it (rebuilt on first use), so env copies stay
    cheap."""

    FIRST_BLOCK = 16
    BLOCK = 128
    MAX_BLOCKS = 8

    def __init__(self, env: EdgeUtilityEnv, base: tuple[int, _DrawFeatures] | None = None) -> None:
        self.jobs = env.jobs
        #: ``(first job of a redrawn future, the draw's rows)``: the rows from there are copied from the draw's
        self.base = base if SHARE_DRAW_ROWS else None
        S = env.num_edge_servers
        idx = list(range(S)) + ([S] if env.has_cloud else [])
        self.idx = None if idx == list(range(len(env.sim.servers))) else np.array(idx, dtype=np.int64)
        self.ridx = np.array([env._row_of_server(k) for k in idx], dtype=np.int64)
        #: flat observation index of each row's first feature
        self.cols = _JOB_FEATURES + self.ridx * _ROW_FEATURES
        self.c4, self.c6, self.c7 = self.cols + 4, self.cols + 6, self.cols + 7  # estimate and queue features
        self.c476 = np.concatenate([self.c4, self.c7, self.c6])  # the three, one assignment of a (3, rows) block
        self.dim = len(env.features)
        #: first job of a block -> (its end, float32 rows, g_max of each job)
        self.blocks: dict[int, tuple[int, np.ndarray, list[float]]] = {}
        self.last: tuple[int, int, np.ndarray, list[float]] | None = None  # the block used last
        self.size = self.FIRST_BLOCK  # the next block's size

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_JobFeatures.__new__, (_JobFeatures,), {"jobs": None})

    @classmethod
    def spliced(cls, env: EdgeUtilityEnv, draw, start: int, cache: dict | None, key) -> _JobFeatures:
        """A new table for ``env``'s jobs, whose jobs from ``start`` on are those of the job table ``draw`` (a
        resampled fork's future): their rows come from the draw's :class:`_DrawFeatures`, kept in ``cache`` under
        ``key`` (the fork's dict of draws, shared with the env and its other forks)."""
        hit = cache.get(key) if cache is not None else None
        if hit is None or hit.jobs is not draw:
            hit = _DrawFeatures(draw, env.sim.plan_scale)
            if cache is not None:
                cache[key] = hit
        return cls(env, (start, hit))

    def row(self, env: EdgeUtilityEnv, i: int) -> tuple[np.ndarray, float]:
        """A new float32 copy of job ``i``'s row (its block computed first if needed) and the job's ``g_max``."""
        last = self.last
        if last is None or not last[0] <= i < last[1]:
            last = next(((lo, *b) for lo, b in self.blocks.items() if lo <= i < b[0]), None)
            if last is None:
                hi = min(i + self.size, self.jobs.num_jobs)
                self.size = min(2 * self.size, self.BLOCK)
                last = (i, hi, *self._fill(env, i, hi))
                if len(self.blocks) >= self.MAX_BLOCKS:
                    del self.blocks[next(iter(self.blocks))]  # the oldest block
                self.blocks[i] = last[1:]
            self.last = last
        q = i - last[0]
        return last[2][q].copy(), last[3][q]

    def _fill(self, env: EdgeUtilityEnv, lo: int, hi: int) -> tuple[np.ndarray, list[float]]:
        base = self.base
        if base is not None and lo >= base[0]:  # jobs of a redrawn future: the draw's rows, shared by its forks
            obs, g0l = base[1].rows(self, env, lo, hi)
        else:
            sim = env.sim
            obs, g0l = self._job_rows(self.jobs.utilities[lo:hi], sim._scale_p[lo:hi], sim._scale_up[lo:hi],
                                      sim._scale_down[lo:hi], sim.speed, env.preset.env.obs_relative, lo, hi)
        self._global_rows(obs, env.preset.env.obs_relative, lo, hi)
        return obs, g0l

    def _job_rows(self, us, p_plan, up_plan, down_plan, speed: float, relative: bool, lo: int,
                  hi: int) -> tuple[np.ndarray, list[float]]:
        """The rows of jobs ``lo..hi-1`` (utilities ``us``, planned rows ``p_plan``, ``up_plan``, ``down_plan``)
        without their global features, and each job's ``g_max``."""
        J = self.jobs.num_jobs
        n = hi - lo
        obs = np.zeros((n, self.dim), dtype=np.float32)  # each float64 value rounded once as it is stored
        g0l = [g.g_max for g in us]
        g0 = np.array(g0l)
        f = obs[:, :_JOB_FEATURES]
        f[np.arange(n), [min(FAMILY_CODES[g.family], 3) for g in us]] = 1.0
        pos = np.flatnonzero(g0 > 0)
        f[:, -2] = [math.log1p(x) / 5 for x in g0l]
        if not relative:
            f[:, -1] = (J - np.arange(lo, hi)) / J
        sel = slice(None) if self.idx is None else self.idx
        pp, pu, pdn = p_plan[:, sel], up_plan[:, sel], down_plan[:, sel]
        lb = pu + pp / speed + pdn  # UtilitySimulator.planned_lb of each job
        c = self.cols
        obs[:, c] = np.log1p(pp)
        obs[:, c + 1] = np.log1p(pu)
        obs[:, c + 2] = np.log1p(pdn)
        obs[:, c + 3] = np.log1p(lb)
        if pos.size:  # g(t)/g_max at the 16 response times and at each row's no-queue time: one evaluation
            G = _G_POINTS.size
            t = np.concatenate([np.broadcast_to(_G_POINTS, (pos.size, G)), lb[pos]], axis=1)
            v = vector_rows([us[q] for q in pos.tolist()], t) / g0[pos, None]
            f[pos, 4 : 4 + G] = v[:, :G]
            obs[pos[:, None], c + 5] = v[:, G:]
        obs[:, c + 8] = 1.0
        return obs, g0l

    def _global_rows(self, obs: np.ndarray, relative: bool, lo: int, hi: int) -> None:
        """The global features (release time, position, release rate) of jobs ``lo..hi-1`` into their rows."""
        J = self.jobs.num_jobs
        gl = obs[:, -_GLOBAL_FEATURES:]
        r = self.jobs.release_s
        if not relative:
            gl[:, 0] = [math.log1p(x) / 10 for x in r[lo:hi].tolist()]
            gl[:, 1] = np.arange(lo, hi) / J
        base = max(0, lo - 50)
        rl = r[base:hi].tolist()  # Python floats: the differences of float(r[i]) - float(r[i - 50])
        first = [max(0, i - 50) for i in range(lo, hi)]  # the first of the last 50 releases
        gl[:, 2] = [_log_rate(i - j, rl[i - base] - rl[j - base]) / 5
                    for i, j in zip(range(lo, hi), first, strict=True)]


class _DrawFeatures:
    """The job-only observation rows (all but the global features) of a redrawn job table (a resampled fork's
    future, :mod:`.fork`), by aligned blocks of :attr:`_JobFeatures.BLOCK` jobs: the forks that splice the same draw
    at different jobs (a rollout's forks at every decision) copy their rows of it instead of computing them, as those
    rows are the draw's own jobs and planned times (the release times, which the splice shifts, enter the global
    features only). A cache like :class:`_JobFeatures` (shared by deep copies, dropped by pickling)."""

    MAX_BLOCKS = 16

    def __init__(self, jobs, plan_scale: float) -> None:
        self.jobs, self.plan_scale = jobs, plan_scale
        self.blocks: dict[int, tuple[np.ndarray, list[float]]] = {}

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_DrawFeatures, (self.jobs, self.plan_scale))

    def rows(self, tab: _JobFeatures, env: EdgeUtilityEnv, lo: int, hi: int) -> tuple[np.ndarray, list[float]]:
        """Rows ``lo..hi-1`` for ``tab`` (a fork's table, same layout) and the jobs' ``g_max``: new arrays."""
        B, J = _JobFeatures.BLOCK, self.jobs.num_jobs
        out = np.empty((hi - lo, tab.dim), dtype=np.float32)
        g0l: list[float] = []
        q = lo
        while q < hi:
            b0 = q - q % B
            blk = self.blocks.get(b0)
            if blk is None:
                b1, jobs, ps = min(b0 + B, J), self.jobs, self.plan_scale
                if ps == 1.0:  # the planned times as the simulator holds them (x * 1.0 == x)
                    p, u, d = jobs.p_est_s[b0:b1], jobs.up_est_s[b0:b1], jobs.down_est_s[b0:b1]
                else:
                    p, u, d = jobs.p_est_s[b0:b1] * ps, jobs.up_est_s[b0:b1] * ps, jobs.down_est_s[b0:b1] * ps
                blk = tab._job_rows(jobs.utilities[b0:b1], p, u, d, env.sim.speed, env.preset.env.obs_relative,
                                    b0, b1)
                if len(self.blocks) >= self.MAX_BLOCKS:
                    del self.blocks[next(iter(self.blocks))]
                self.blocks[b0] = blk
            e = min(hi, b0 + B)
            out[q - lo:e - lo] = blk[0][q - b0:e - b0]
            g0l += blk[1][q - b0:e - b0]
            q = e
        return out, g0l


class EdgeUtilityEnv(gym.Env):
    """The edge system of Zhang et al. (ToN 2023), one step per released job (see the module docstring).

    Args:
        preset: a :class:`UtilityPreset`, a shipped preset name (``"testbed"``, ``"utility/sim300"``) or a
            YAML path.
        config: overrides per section, e.g. ``{"scheduler": {"discipline": "srpt"}}``, validated like a file.
        instance: fixed jobs (:class:`~edgegym.core.utility.UtilityJobs`) to run instead of drawing them; their
            server columns must match the preset's servers (edge servers, then the cloud if any).
        server_type: device type index per edge server when ``instance`` is given (default from the preset).
        record: keep executed segments on every server (invariant tests).
        info_details: add ``info["completed"]`` (one tuple per completion of the step, variable length) to each
            step's info; off by default so that every info value has a fixed shape (vector envs).

    Observation: ``Box`` float32 = job block (family one-hot (4), g at 16 log-spaced JRTs / g(0), log g(0),
    fraction of jobs left) | N rows × 9 (log1p of p̂, Δ̂↑, Δ̂↓, LB, est. finish − r; g(LB)/g(0), g(est)/g(0);
    log1p queue length; valid) | 3 global features. ``N = max_edge_servers + 1`` (cloud last, zero and masked
    when absent). Action: ``Discrete(N)`` or ``Discrete(N + 1)`` with ``allow_reject`` (last = reject).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, preset: UtilityPreset | str = DEFAULT_PRESET, config: dict | None = None,
                 instance: UtilityJobs | None = None, render_mode: str | None = None, record: bool = False,
                 info_details: bool = False) -> None:
        super().__init__()
        #: add the variable-length ``info["completed"]`` list to each step's info (off: every info value has a
        #: fixed shape, as vector envs need)
        self.info_details = bool(info_details)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r} is not supported (supported: None, 'rgb_array')")
        self.render_mode = render_mode
        p = preset if isinstance(preset, UtilityPreset) else load_utility_preset(preset)
        check_config_mapping(config, p.source_file)
        if config:
            p = p.replace(**config)
        self.preset = p
        self._instance = instance
        self.record = record or render_mode == "rgb_array"
        S = p.num_edge_servers
        self.num_edge_servers = S
        self.has_cloud = p.servers.cloud
        self.max_edge_servers = p.env.max_edge_servers if p.env.max_edge_servers is not None else S
        self.server_type = np.repeat(
            [DEVICE_TYPES.index(t) for t in p.servers.edge_types], p.servers.edge_counts
        ).astype(np.int64)
        if instance is not None and instance.num_jobs > MAX_NUM_JOBS:
            raise ValueError(f"instance has {instance.num_jobs} jobs, more than workload.num_jobs allows "
                             f"({MAX_NUM_JOBS}; the queue feature's declared bound assumes it)")
        if instance is not None and instance.num_servers != S + int(self.has_cloud):
            raise ValueError(f"instance has {instance.num_servers} server columns, the preset has {S} edge "
                             f"servers{' + the cloud' if self.has_cloud else ''}")
        self.N = self.max_edge_servers + 1
        self.allow_reject = p.env.allow_reject
        self.reward_scale = p.env.reward_scale
        self._dispatch_credit = p.env.reward_credit == "dispatch"
        self._latency = p.env.dispatch_latency_s
        self._mask_do4a = p.env.mask == "do4a"
        self._relative = p.env.obs_relative
        self._obs_estimates = p.env.obs_estimates
        self.action_space = spaces.Discrete(self.N + int(self.allow_reject))
        self._n_actions = self.N + int(self.allow_reject)
        #: the rows that exist (edge servers, the cloud) and reject when allowed: action_masks() before DO4A's filter
        self._mask_base = np.zeros(self.action_space.n, dtype=bool)
        self._mask_base[:S] = True
        self._mask_base[self.N - 1] = self.has_cloud
        if self.allow_reject:
            self._mask_base[self.N] = True
        #: the named observation features, one per index (``observation_features(preset)``)
        self.features = _feature_list(self.max_edge_servers)
        # the declared bounds are the features' (finite: a log1p of a finite float64 is below _LOG_MAX)
        self.observation_space = spaces.Box(np.array([f[2] for f in self.features], dtype=np.float32),
                                            np.array([f[3] for f in self.features], dtype=np.float32),
                                            dtype=np.float32)
        self.sim: UtilitySimulator | None = None
        self.jobs: UtilityJobs | None = None
        self._job_features: _JobFeatures | None = None  # the job-only observation features of self.jobs
        #: the Google 2011 table sorted by submit time (``_trace_release_times``' cache; shared with forks)
        self._trace_cache: dict = {}
        self._k = 0
        self._J = 0  # the episode's number of jobs (self.jobs.num_jobs)
        self._return = 0.0
        self._est_sim: np.ndarray | None = None
        self._util_sim: tuple | None = None
        #: the generator ``_np_random`` is shared with a fork (or a parent): copied before its first use
        self._rng_shared = False

    @property
    def np_random(self) -> np.random.Generator:
        """gymnasium's ``Env.np_random``. A fork shares its parent's generator until one of them uses it (the
        direct fork of :mod:`.fork`; only ``reset`` draws from it): that one then takes a copy in the same state."""
        if self._rng_shared:
            self._rng_shared = False
            if self._np_random is not None:
                from ...core.forking import fast_copy

                self._np_random = fast_copy(self._np_random)  # the same stream, a generator of its own
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._rng_shared = False
        gym.Env.np_random.fset(self, value)

    # ----------------------------------------------------------------- helpers
    def _row_of_server(self, k: int) -> int:
        return k if k < self.num_edge_servers else self.N - 1

    def _server_of_row(self, row: int) -> int | None:
        if row < self.num_edge_servers:
            return row
        if row == self.N - 1 and self.has_cloud:
            return self.num_edge_servers
        return None

    def _draw_jobs(self, rng: np.random.Generator) -> UtilityJobs:
        w = self.preset.workload
        rate = release_rate_per_s(self.preset)  # rate_per_s × load_scale, or load × capacity
        self._workload_source = w.source
        if w.source == "google2011":
            t = _trace_release_times(w, rng, self._trace_cache)
            if t is None:
                if w.offline_fallback == "none":
                    raise FileNotFoundError("the Google 2011 trace is absent and workload.offline_fallback is 'none'")
                self._workload_source = "bursty (trace absent)"
                import warnings

                warnings.warn(
                    "the Google 2011 trace is absent (set EDGEGYM_TRACE_DIR); EdgeUtility uses synthetic bursty "
                    "release times instead (workload.offline_fallback: bursty; 'none' makes this an error)",
                    UserWarning, stacklevel=2,
                )
                release = bursty_release_times(rng, w.num_jobs, rate)
            else:
                release = rescale_release_times(t, rate)
        elif w.source == "bursty":
            release = bursty_release_times(rng, w.num_jobs, rate)
        else:
            release = np.cumsum(rng.exponential(1.0 / rate, size=w.num_jobs))
            release -= release[0]
        net = self.preset.network
        return build_utility_jobs(
            rng, release, self.server_type, self.has_cloud,
            families=w.utility_mix, edge_delay_ms=net.edge_delay_ms, cloud_delay_ms=net.cloud_delay_ms,
            cloud_time_factor=net.cloud_time_factor, min_fraction=w.min_fraction, time_scale=w.time_scale,
            delta=self.preset.estimation.delta, aon_inclusive=w.aon_inclusive,
            estimate=self.preset.estimation.mode, delay_scale=w.time_scale if net.scale_delays else 1.0,
        )

    # ----------------------------------------------------------------- episode
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Draw (or take) the jobs, reset the servers, stop at the first release."""
        super().reset(seed=seed)
        if self._instance is not None:
            self.jobs = self._instance
            self._workload_source = "instance"
        else:
            self.jobs = self._draw_jobs(self.np_random)
        p = self.preset
        sc = p.scheduler
        est = p.estimation
        self.sim = UtilitySimulator(
            self.jobs, self.num_edge_servers, self.has_cloud, discipline=sc.discipline,
            cloud="infinite" if sc.cloud == "infinite" else sc.discipline, speed=p.servers.speed,
            o4a=O4AParams(sc.eps, sc.alpha, sc.beta, sc.tentative_mode, sc.fallback),
            plan_scale=1.0 + est.delta if est.conservative else 1.0, record=self.record,
        )
        self._k = 0
        self._J = self.jobs.num_jobs
        self._return = 0.0
        self._rejected = np.zeros(self.jobs.num_jobs, dtype=bool)
        self._illegal = 0
        self._decisions = np.full(self.jobs.num_jobs, -1, dtype=np.int64)
        self._planned = np.zeros(self.jobs.num_jobs)
        self._prepare()
        return self._observation(), {"job": 0, "action_mask": self.action_masks()}

    def _prepare(self) -> None:
        self._est: np.ndarray | None = None
        self._est_all: np.ndarray | None = None
        self._est_sim: np.ndarray | None = None  # the simulator's estimates of the pending job (server order)
        self._util_sim: tuple | None = None  # (_est_sim, g_j of each one's response time): the observation's
        self._inc: np.ndarray | None = None
        self._pending_done = []
        if self._k < self._J:
            self._pending_done = self.sim.advance_to(float(self.jobs.release_s[self._k]))

    def step(self, action):
        """Dispatch the pending job per ``action``, advance to the next release, credit completed utility."""
        reward, terminated, i, server, done, utility, planned = self._transition(action)
        info: dict = {
            "job": i,
            "server": -1 if server is None else server,
            "completed_count": len(done),
            "reward_utility": float(utility),
            "reward_planned_utility": planned,
        }
        if self.info_details:
            info["completed"] = [(c.job, c.server, c.utility, c.jrt_s, c.job) for c in done]
        if terminated:
            info["episode_metrics"] = self.episode_metrics()
            obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        else:
            obs = self._observation()
        info["action_mask"] = self.action_masks()  # the same shape at every step (vector envs stack it)
        return obs, float(reward), terminated, False, info

    def step_quiet(self, action) -> tuple[float, bool, bool]:
        """:meth:`step` without building the observation and the info: returns ``(reward, terminated, truncated)``
        and leaves the env in exactly the state ``step(action)`` would (the observation's side effects included:
        with ``env.obs_estimates`` the simulator's estimates of the next job, which sync the busy servers to its
        release, are computed here and kept for :meth:`observe` and the next step's credit). For look-ahead on
        forks, where most observations are never read."""
        reward, terminated, *_ = self._transition(action)
        if not terminated and self._obs_estimates and self._est is None and self._est_sim is None:
            self._est_sim = self.sim.estimates(self._k)  # what _observation computes first (and keeps)
        return float(reward), terminated, False

    def observe(self) -> np.ndarray:
        """The observation of the current state: what the last :meth:`step` (or :meth:`reset`) returned, also after
        :meth:`step_quiet` (zeros once the episode has terminated)."""
        if self.sim is None:
            raise RuntimeError("call reset() before observe()")
        if self._k >= self._J:
            return np.zeros(self.observation_space.shape, dtype=np.float32)
        return self._observation()

    def _transition(self, action) -> tuple[float, bool, int, int | None, list, float, float]:
        """:meth:`step`'s state change: ``(reward, terminated, job, server or None, completions, their utility,
        planned utility)``."""
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        if self._k >= self._J:
            raise RuntimeError("the episode has terminated; call reset()")
        a = self._check(action)
        i = self._k
        mask = self._mask_base if not self._mask_do4a else self.action_masks()  # read only
        if not mask[a]:  # a masked value: count it, use the legal server with the smallest planned LB
            self._illegal += 1
            legal = [r for r in np.flatnonzero(mask) if r < self.N]
            if legal:
                lb = self.view().lb_s
                a = int(min(legal, key=lambda r: (lb[r], r)))
            else:
                a = self.N
        server = None if (self.allow_reject and a == self.N) else self._server_of_row(a)
        planned = 0.0
        if server is not None and self._dispatch_credit:  # planned utility of the discipline's estimate
            util = None
            if self._est is not None and self._est_all is self._est:
                f = self._est[a]
            elif self._est is None and self._est_sim is not None:  # the observation's estimates (server order)
                f = self._est_sim[server]
                if self._util_sim is not None and self._util_sim[0] is self._est_sim:  # and g of them
                    util = self._util_sim[1][server]
            else:
                f = self.query_finish(rows=[a])[a]
            if util is not None:
                planned = float(util)
            else:
                est = float(f) - float(self.jobs.release_s[i])
                planned = float(self.jobs.utilities[i].vector(np.array([est]))[0])
            self._planned[i] = planned
        self._decisions[i] = -1 if server is None else server
        self._k += 1
        terminated = self._k >= self._J
        done = list(self._pending_done) if self._pending_done else []  # completions at r_i, found before the decision
        fused = None
        if server is not None and not terminated and not self._latency > 0:  # dispatch, advance, estimate: one call
            fused = self.sim.step_fast(i, server, float(self.jobs.release_s[self._k]),
                                       self._k if self._obs_estimates else -1)
        if fused is not None:  # what _prepare does, with the estimates the observation reads
            self._est = self._est_all = self._inc = self._util_sim = None
            done += fused[0]
            self._est_sim = fused[1]
            self._pending_done = []
        else:
            if server is None:
                self._rejected[i] = True
            else:
                self.sim.dispatch(i, server, self._latency)
            if terminated:
                done += self.sim.drain()
            else:
                self._prepare()
                done += self._pending_done
                self._pending_done = []
        utility = sum([c.utility for c in done]) if done else 0
        reward = self._credit(done, planned, terminated, utility)
        self._return += reward
        return reward, terminated, i, server, done, utility, planned

    def _credit(self, done: list, planned: float, final: bool, utility: float | None = None) -> float:
        """The reward of a step: the utility of the completions ``done`` (``completion`` credit; ``utility``: their
        sum when the caller has it), or ``planned`` plus ``actual − planned`` of each completion (``dispatch``
        credit; at the ``final`` step the jobs that never complete give their plan back); divided by
        ``reward_scale``."""
        if self._dispatch_credit:
            credit = planned + sum(c.utility - self._planned[c.job] for c in done)
            if final:
                credit -= float(self._planned[~self.sim.completed].sum())
            return credit / self.reward_scale
        return (sum(c.utility for c in done) if utility is None else utility) / self.reward_scale

    def drain_return(self) -> float:
        """Run the jobs already dispatched to completion, with no further release, and return the reward that
        credits (the same credit as the steps'); ends the episode (``step`` then raises until ``reset``).

        A terminal value for look-ahead on a fork: the utility that the jobs in the system will still realise if
        nothing else arrives (``rollout``'s ``D=1``). The pending job is not dispatched and earns nothing.
        """
        if self.sim is None:
            raise RuntimeError("call reset() before drain_return()")
        if self._k >= self.jobs.num_jobs:
            return 0.0
        done = list(self._pending_done) + self.sim.drain()
        self._pending_done = []
        self._k = self.jobs.num_jobs
        reward = self._credit(done, 0.0, True)
        self._return += reward
        return reward

    def _ondisc_estimates(self) -> np.ndarray | None:
        """The pending job's estimates (server order) that :meth:`step`'s dispatch credit reads, when the compiled
        OnDisc loop can take the next step (see :meth:`advance_ondisc`); None where it cannot."""
        sim = self.sim
        if sim is None or self._k >= self._J or not self._obs_estimates or self._mask_do4a or self._latency > 0 \
                or self._inc is not None or sim._o4bank is not None or sim._pending:
            return None
        bank = sim._bank
        if bank is None or np.any(bank.si[bank.ks, 4] > 2):  # fifo, srpt, edf (codes 0-2) only
            return None
        others = [k for k in range(len(sim.servers)) if not bank.member[k]]
        if others and (others != [self.num_edge_servers] or sim.servers[others[0]].name != "infinite"):
            return None  # besides the bank, at most the cloud as an infinite delay server
        if self._est is None:
            return self._est_sim
        if self._est_all is self._est:  # every row known (query_finish): back to server order
            S = self.num_edge_servers
            return np.concatenate([self._est[:S], self._est[-1:]]) if self.has_cloud else self._est[:S]
        return None

    def advance_ondisc(self, steps: int | None = None, total: float = 0.0, *, prune: bool = True,
                       batch: int = 16, observe: bool = True) -> tuple[np.ndarray | None, int, float, bool] | None:
        """Take up to ``steps`` steps (None: as many as there are) with OnDisc's actions
        (``agents.baselines.edge_utility.OnDisc`` with ``prune`` and ``batch``: the least planned-JRT increase,
        ties to the smaller row) in one compiled loop (:mod:`._advance`) instead of a policy call and a ``step``
        each, without building the observations in between.

        The env is then exactly where those ``step`` calls would leave it (servers, completions, clock, decisions,
        planned utilities, the return), and the rewards are those ``step`` returns, added to ``total`` in order. It
        never takes the episode's last step. Returns ``(observation at the stop, steps taken, total, more)``:
        ``more`` is True when it stopped before a step the compiled loop does not take (an event of the cloud's
        delay server falls due in it, or a server's queue storage is full): take that one with :meth:`step`, then
        call again. ``observe=False``: the observation at the stop is not built (None in its place; :meth:`observe`
        builds it, the same). None when the env has no such path: a discipline other than fifo, srpt or edf (or an O4A
        server), a non-bank server other than an infinite cloud, DO4A's mask, a dispatch latency, no estimates in
        the observation, or a decision point whose OnDisc increments were already (partly) computed."""
        est0 = self._ondisc_estimates()
        if est0 is None:
            return None
        if steps is not None and int(steps) < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        k0 = self._k
        nmax = self._J - 1 - k0 if steps is None else min(self._J - 1 - k0, int(steps))
        if nmax <= 0:
            return self._observation() if observe else None, 0, float(total), False
        from ._advance import BLOCKED, ondisc_run
        from .simulator import Completion, _completion_key

        sim = self.sim
        bank = sim._bank
        S = self.num_edge_servers
        srv_of_row = np.full(self.N, -1, dtype=np.int64)
        srv_of_row[:S] = np.arange(S)
        cloud, cloud_q, cloud_next = -1, 0, math.inf
        if self.has_cloud:
            srv_of_row[-1] = S
            if not bank.member[S]:
                cloud, srv = S, sim.servers[S]
                cloud_q = srv.queue_length
                cloud_next = srv.next_event()
        J = self._J
        oj, oc, os_ = np.empty(J, dtype=np.int64), np.empty(J), np.empty(J, dtype=np.int64)
        cend, dec = np.empty(nmax, dtype=np.int64), np.empty(nmax, dtype=np.int64)
        est, nows, est_end = np.empty(nmax), np.empty(nmax), np.empty(len(sim.servers))
        jobs = self.jobs
        n, status, now, no, sync_t = ondisc_run(
            k0, nmax, est0, float(sim.now), int(batch), bool(prune), sim._heap[0][0] if sim._heap else math.inf,
            cloud, cloud_q, cloud_next, jobs.release_s, sim._scale_up, sim._scale_p, sim._scale_down, jobs.up_s,
            jobs.p_s, jobs.down_s, srv_of_row, bank.member, bank.ks, sim.speed, bank.slots, bank.si, bank.sf, bank.jf,
            *bank.utab, oj, oc, os_, cend, dec, est, nows, est_end)
        more = status == BLOCKED
        if n == 0:
            return self._observation() if observe else None, 0, float(total), more
        # what needs the Python objects: completions' utilities, planned utilities, rewards (as step computes them)
        utilities = jobs.utilities
        cj = oj[:no]
        jrt = oc[:no] + bank.jf[cj, 6] - bank.jf[cj, 0]  # C + Δ↓ − r, as the bank's completions
        cjl, jrtl = cj.tolist(), jrt.tolist()
        cu = [utilities[j](t) for j, t in zip(cjl, jrtl, strict=True)]  # UtilityFn.__call__, as the step computes it
        sim.utility[cj] = cu
        sim.jrt_s[cj] = jrt
        sim.completed[cj] = True
        idx = np.arange(k0, k0 + n)
        servers = dec[:n]
        self._decisions[idx] = servers
        sim.server_of[idx] = servers
        if self._dispatch_credit:  # g_i(f̂_i − r_i) of the chosen server's estimate, UtilityFn.vector's operations
            planned = _utility_rows(bank.utab, utilities, k0, est[:n] - jobs.release_s[k0:k0 + n])
            self._planned[idx] = planned
        else:
            planned = np.zeros(n)
        e0, e1 = int(cend[0]), int(cend[n - 1])

        def completions(lo: int, hi: int) -> list:
            return [Completion(j, k, C, t, u) for j, k, C, t, u in zip(
                cjl[lo:hi], os_[lo:hi].tolist(), oc[lo:hi].tolist(), jrtl[lo:hi], cu[lo:hi], strict=True)]

        # the first step: the orphans of the observation built before the call, then the pending completions
        part = sim._orphans + completions(0, e0)
        part.sort(key=_completion_key)
        done = list(self._pending_done) + part if self._pending_done else part
        utility = sum([c.utility for c in done]) if done else 0
        reward = self._credit(done, float(planned[0]), False, utility)
        self._return += reward
        total += float(reward)
        if n > 1:  # the other steps' rewards: the same sums, in the same order, in one compiled call
            from ._advance import step_credits

            self._return, total = step_credits(
                cend[:n], cj, os_, oc, np.array(cu), planned, self._planned, self._dispatch_credit,
                float(self.reward_scale), self._return, total)
        orphans = completions(e1, no)  # found by the observation at the stop (the kernel took its side effects)
        if cloud >= 0:  # the cloud's commits, replayed in order (nothing of it falls due before the stop)
            for q in np.flatnonzero(servers == cloud).tolist():
                sim._commit(k0 + q, cloud, float(nows[q]))
            if sync_t > sim.servers[cloud].t:
                sim.servers[cloud].t = sync_t
        sim._orphans = orphans
        sim.now = max(sim.now, now)
        self._k = k0 + n
        self._est = self._est_all = self._inc = self._util_sim = None
        self._est_sim = est_end  # what the observation's sim.estimates(k) returned
        self._pending_done = []
        return self._observation() if observe else None, n, float(total), more

    def obs_layout(self) -> dict:
        """Where the observation's blocks lie, for per-server policies (``edgegym.agents.rl.shared``): ``job`` and
        ``glob`` are ``(start, stop)``; ``rows`` rows of ``row_dim`` features from ``rows_start``; action ``r``
        picks row ``r`` for ``r < rows`` (``row_actions``), then ``extra_actions`` (reject) follow."""
        return {"job": (0, _JOB_FEATURES), "rows_start": _JOB_FEATURES, "rows": self.N, "row_dim": _ROW_FEATURES,
                "glob": (_JOB_FEATURES + self.N * _ROW_FEATURES, _JOB_FEATURES + self.N * _ROW_FEATURES
                         + _GLOBAL_FEATURES), "row_actions": True, "extra_actions": int(self.allow_reject)}

    def _check(self, action) -> int:
        """Exact validation (no coercion of 3.5, "3", True or inf): ``ValueError`` naming the action space."""
        if type(action) is int and 0 <= action < self._n_actions:  # the common case, without building messages
            return action
        return check_discrete_action(self.action_space, action)

    # ----------------------------------------------------------------- masks, view, oracle
    def action_masks(self) -> np.ndarray:
        """Legal actions: existing edge servers and the cloud (with ``env.mask == "do4a"`` only DO4A's k
        candidates and the cloud), plus reject when allowed. ``RuntimeError`` before the first ``reset()``."""
        if self.sim is None:
            raise RuntimeError("call reset() before action_masks()")
        m = self._mask_base.copy()
        if self._mask_do4a and self._k < self._J:
            cand = self.do4a_candidates(self.preset.env.do4a_k)
            keep = np.zeros_like(m)
            keep[cand] = True
            keep[self.N - 1] = self.has_cloud
            if self.allow_reject:
                keep[self.N] = True
            m &= keep
        return m

    def do4a_candidates(self, k: int) -> np.ndarray:
        """Rows of the k edge servers with the smallest planned LB (ties: smaller index), as DO4A (Algorithm 3)."""
        lb = self.sim.planned_lb(self._k)[: self.num_edge_servers]
        order = np.lexsort((np.arange(lb.size), lb))
        return order[:k]

    def _require_pending(self):
        if self.sim is None or self._k >= self.jobs.num_jobs:
            raise RuntimeError("needs a pending job: call reset() and do not step past the last job")

    def query_finish(self, rows=None) -> np.ndarray:
        """Planned finish time (absolute s) of the pending job on each row if dispatched now: the server's
        discipline estimate (O4A: f† from PLAN), inf for invalid rows. ``rows``: only these rows (others inf).
        Cached per step."""
        self._require_pending()
        if self._est is None and (rows is None or self._est_sim is not None):  # every row at once: one simulator call
            est = self._all_estimates()  # (or the rows from the observation's estimates)
            if rows is None:
                return est.copy()
        if rows is not None and self._est is not None and getattr(self, "_est_all", None) is self._est:
            sel = np.full(self.N, np.inf)
            rows = list(rows)
            sel[rows] = self._est[rows]
            return sel
        if self._est is None:
            self._est = np.full(self.N, np.nan)
        want = range(self.N) if rows is None else rows
        need = [self._server_of_row(r) for r in want if np.isnan(self._est[r])]
        need = [s for s in need if s is not None]
        if need:
            est = self.sim.estimates(self._k, need)
            for s in need:
                self._est[self._row_of_server(s)] = est[s]
        out = np.where(np.isnan(self._est), np.inf, self._est)
        if rows is not None:
            sel = np.full(self.N, np.inf)
            sel[list(rows)] = out[list(rows)]
            return sel
        return out

    def _all_estimates(self) -> np.ndarray:
        """:meth:`query_finish` of every row, the per-step cache itself (not a copy; computed on the first call)."""
        if self._est is not None and self._est_all is self._est:
            return self._est
        if self._est is not None:  # some rows known: the general path fills the rest
            self._est = self.query_finish()
            self._est_all = self._est
            return self._est
        est = self._est_sim if self._est_sim is not None else self.sim.estimates(self._k)
        S = self.num_edge_servers
        if est.size == self.N:  # the rows are the servers (edge servers up to max_edge_servers, then the cloud)
            self._est = est
        else:
            self._est = np.full(self.N, np.inf)
            self._est[:S] = est[:S]
            if self.has_cloud:
                self._est[-1] = est[S]
        self._est_all = self._est  # every row known: later calls only select
        return self._est

    def jrt_increase(self, rows=None) -> np.ndarray:
        """OnDisc's Inc per row (Σ planned JRT with the job − without; needs a priority discipline such as
        ``srpt``); inf for invalid rows. ``rows``: only these rows (others inf). Cached per step."""
        self._require_pending()
        if self._inc is None:
            self._inc = np.full(self.N, np.nan)
        want = range(self.N) if rows is None else rows
        need = [self._server_of_row(r) for r in want if np.isnan(self._inc[r])]
        need = [s for s in need if s is not None]
        if need:
            inc = self.sim.jrt_increase(self._k, need)
            for s in need:
                self._inc[self._row_of_server(s)] = inc[s]
        out = np.where(np.isnan(self._inc), np.inf, self._inc)
        if rows is not None:
            sel = np.full(self.N, np.inf)
            sel[list(rows)] = out[list(rows)]
            return sel
        return out

    def episode_series(self) -> dict:
        """Per-episode series for plots: ``job_times`` (response time of each completed job, seconds)."""
        out = {"job_times": [], "util_t": [], "util": []}
        if self.sim is not None:
            out["job_times"] = np.asarray(self.sim.jrt_s)[np.asarray(self.sim.completed)].astype(float).tolist()
        return out

    def render(self):
        """``render_mode="rgb_array"``: a per-server Gantt chart as an RGB array (needs ``edgegym[plot]``)."""
        if self.render_mode != "rgb_array":
            return None
        from .rendering import render_gantt

        return render_gantt(self)

    def view(self) -> UtilityView:
        """A read-only view of the current decision point (see :class:`UtilityView`)."""
        self._require_pending()
        i = self._k
        S = self.num_edge_servers
        valid = np.zeros(self.N, dtype=bool)
        valid[:S] = True
        valid[-1] = self.has_cloud
        lb = np.full(self.N, np.inf)
        pp = np.full(self.N, np.inf)
        ql = np.zeros(self.N, dtype=np.int64)
        plb = self.sim.planned_lb(i)
        pl = self.sim._scale_p[i]
        lb[:S], pp[:S] = plb[:S], pl[:S]
        qs = self.sim.queue_lengths()
        ql[:S] = qs[:S]
        if self.has_cloud:
            lb[-1], pp[-1], ql[-1] = plb[S], pl[S], qs[S]
        return UtilityView(
            now=float(self.sim.now), job=i, release_s=float(self.jobs.release_s[i]), utility=self.jobs.utilities[i],
            num_edge_servers=S, max_edge_servers=self.max_edge_servers, has_cloud=self.has_cloud, valid=valid,
            lb_s=lb, p_plan_s=pp, queue_length=ql, discipline=self.preset.scheduler.discipline,
            allow_reject=self.allow_reject, reject_action=self.N if self.allow_reject else None,
            dispatch_latency_s=self.preset.env.dispatch_latency_s,
        )

    # ----------------------------------------------------------------- observation, metrics
    def _observation(self) -> np.ndarray:
        """The observation of the pending job: the features that depend on the job alone come from a per-episode
        table (:class:`_JobFeatures`, filled a block of jobs at a time), the server-state ones (estimates, queue
        lengths) are computed here with the operations of :meth:`_observation_reference` (its arithmetic in one
        compiled call, ``obs_server_features``; its numpy functions on the result), so the values are identical
        (``tests/speed/test_speed_edge_utility_obs.py``)."""
        i = self._k
        sim = self.sim
        tab = self._job_features
        if tab is None or tab.jobs is not self.jobs:
            tab = self._job_features = _JobFeatures(self)
        obs, g0 = tab.row(self, i)
        relative = self._relative
        ql = sim.queue_lengths(float)
        if tab.idx is not None:
            ql = ql[tab.idx]
        if not self._obs_estimates:
            # v1: queue length relative to the longest queue (in [0, 1]) instead of log1p of the absolute length
            obs[tab.c7] = ql / (1.0 + ql.max()) if relative else np.log1p(ql)
            return obs
        # the estimates of the rows that exist are the simulator's, in server order (kept for query_finish)
        if self._est is None:
            est = self._est_sim = sim.estimates(i) if self._est_sim is None else self._est_sim
            if tab.idx is not None:
                est = est[tab.idx]
        else:
            est = self._all_estimates()[tab.ridx]
        server_order = est is self._est_sim and tab.idx is None
        # features 4, 7 and 6 of each row, assigned at once: est − r (minus the best row's, v1: it does not drift with
        # the backlog), the queue lengths (v1: relative to the longest queue), g_j(est − r) / g_max
        feat = np.empty((3, est.size))
        _kernels().obs_server_features(est, float(self.jobs.release_s[i]), ql, relative, feat)
        np.maximum(feat[0], 0.0, out=feat[0])
        if relative:
            np.log1p(feat[0], out=feat[0])
        else:
            np.log1p(feat[:2], out=feat[:2])
        if g0 > 0:
            util = self.jobs.utilities[i].vector(feat[2])
            if server_order:  # the dispatch credit's planned utility of each server (v1), elementwise the same
                self._util_sim = (self._est_sim, util)
            np.divide(util, g0, out=feat[2])
        else:
            feat[2] = obs[tab.c6]
        obs[tab.c476] = feat.ravel()
        return obs

    def _observation_reference(self) -> np.ndarray:
        """:meth:`_observation` computed from scratch for the pending job (the test oracle of its job table)."""
        i = self._k
        jobs, sim = self.jobs, self.sim
        obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        g = jobs.utilities[i]
        g0 = g.g_max
        f = obs[:_JOB_FEATURES]
        f[min(FAMILY_CODES[g.family], 3)] = 1.0
        if g0 > 0:
            f[4 : 4 + _G_POINTS.size] = g.vector(_G_POINTS) / g0
        f[-2] = math.log1p(g0) / 5
        f[-1] = (jobs.num_jobs - i) / jobs.num_jobs
        rows = obs[_JOB_FEATURES : _JOB_FEATURES + self.N * _ROW_FEATURES].reshape(self.N, _ROW_FEATURES)
        r = float(jobs.release_s[i])
        S = self.num_edge_servers
        idx = list(range(S)) + ([S] if self.has_cloud else [])
        ridx = [self._row_of_server(k) for k in idx]
        lb = sim.planned_lb(i)[idx]
        rows[ridx, 0] = np.log1p(sim._scale_p[i][idx])
        rows[ridx, 1] = np.log1p(sim._scale_up[i][idx])
        rows[ridx, 2] = np.log1p(sim._scale_down[i][idx])
        rows[ridx, 3] = np.log1p(lb)
        if g0 > 0:
            rows[ridx, 5] = g.vector(lb) / g0
        relative = self.preset.env.obs_relative
        if self.preset.env.obs_estimates:
            est = self.query_finish()[ridx] - r
            # v1 (obs_relative): the estimate minus the best row's, which does not drift with the backlog
            rows[ridx, 4] = np.log1p(np.maximum(est - est.min() if relative else est, 0.0))
            if g0 > 0:
                rows[ridx, 6] = g.vector(est) / g0
        ql = sim.queue_lengths()[idx].astype(float)
        # v1: queue length relative to the longest queue (in [0, 1]) instead of log1p of the absolute length
        rows[ridx, 7] = ql / (1.0 + ql.max()) if relative else np.log1p(ql)
        rows[ridx, 8] = 1.0
        gl = obs[-_GLOBAL_FEATURES:]
        if relative:  # no absolute time, no position in the episode (a model trained on short episodes runs long)
            f[-1] = 0.0
        else:
            gl[0] = math.log1p(r) / 10
            gl[1] = i / jobs.num_jobs
        lo = max(0, i - 50)
        span = r - float(jobs.release_s[lo])
        gl[2] = _log_rate(i - lo, span) / 5
        return obs.astype(np.float32)

    def episode_metrics(self) -> dict:
        """Metrics of the finished episode (``objective`` = ``total_utility``)."""
        jobs, sim = self.jobs, self.sim
        J = jobs.num_jobs
        util = sim.utility
        fam = jobs.family_codes()
        aon_mask = fam == FAMILY_CODES["aon"]
        done = sim.completed
        jrt = sim.jrt_s[done]
        ub = upper_bound(jobs, self.preset.servers.speed)
        total = float(util.sum())
        dec = self._decisions
        edge = int(np.sum((dec >= 0) & (dec < self.num_edge_servers)))
        cloud = int(np.sum(dec == self.num_edge_servers)) if self.has_cloud else 0
        fin = jobs.release_s[done] + jrt
        m = {
            "num_jobs": J,
            "objective": total,
            "total_utility": total,
            "avg_utility": total / J if J else 0.0,
            "deadline_miss_rate": float(np.mean(util[aon_mask] <= 0)) if aon_mask.any() else 0.0,
            "aon_jobs": int(aon_mask.sum()),
            "avg_response_time": float(jrt.mean()) if jrt.size else 0.0,
            "p95_response_time": float(np.percentile(jrt, 95)) if jrt.size else 0.0,
            "upper_bound": float(ub.sum()),
            "ratio_to_upper_bound": total / float(ub.sum()) if ub.sum() > 0 else 0.0,
            "completed_jobs": int(done.sum()),
            "never_completed": int(np.sum(~done & ~self._rejected)),
            "rejected": int(self._rejected.sum()),
            "preemptions": sim.preemptions,
            "edge_jobs": edge,
            "cloud_jobs": cloud,
            "cloud_share": cloud / J if J else 0.0,
            "offered_load": offered_load(self.preset),
            "edge_fraction": edge / J if J else 0.0,
            "makespan": float(fin.max() - jobs.release_s.min()) if fin.size else 0.0,
            "illegal_actions": self._illegal,
            "reward_scale": self.reward_scale,
            "workload_source": self._workload_source,
            "discipline": self.preset.scheduler.discipline,
        }
        m["avg_jct"] = m["avg_response_time"]  # the CLI's text line prints avg_jct
        for fname in ("linear", "aon", "sigmoid"):
            sel = fam == FAMILY_CODES[fname]
            m[f"utility_{fname}"] = float(util[sel].sum())
        return m

    @property
    def episode_return(self) -> float:
        """Undiscounted return accumulated so far."""
        return self._return

    def fork(self, seed: int = 0, future: str = "resample") -> EdgeUtilityEnv:
        """An independent env in exactly the current state (mid-episode), for look-ahead planning.

        ``future="keep"``: the jobs not released yet are the true ones; the fork is marked ``clairvoyant`` (for
        analysis and bounds only). ``future="resample"`` (default): they are redrawn, deterministically from
        ``seed``, from the preset's own workload model: a new job set is drawn by the preset's generator (release
        process, utility mix, processing times and delays; a Google 2011 window is drawn at random from the same
        table, a fixed ``window`` included), its jobs after the pending one replace the true future, and their
        release times continue from the pending job's with the new draw's own gaps. The number of jobs stays the
        same. See :mod:`edgegym.core.forking` and :mod:`edgegym.families.edge_utility.fork`.
        """
        from .fork import fork

        return fork(self, seed=seed, future=future)
