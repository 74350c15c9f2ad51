"""Rendering of edgegym envs (lazy matplotlib import; ``pip install edgegym[plot]``).

:func:`render_gantt` draws a Gantt chart of what the simulator did: one lane per edge worker (grouped by
edge server, one colour per job), executed work solid and, before the episode ends, the work already
planned for later lighter, plus a band of cloud lanes (one bar per job's cloud chunks, packed into as few
lanes as do not overlap) and a dashed line at the current time. It reads the env duck-typed (``cluster``,
``jobs``, ``sim`` and the discipline outcome), so it works under every scheduling discipline.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gantt_data", "gantt_figure", "render_gantt", "save_gantt_png"]


def gantt_data(env) -> dict:
    """The numbers a Gantt chart draws, as numpy arrays (no matplotlib needed).

    Returns a dict with ``executed`` and ``planned`` rows ``[worker, start, end, job]`` (N, 4), ``cloud``
    rows ``[job, start, end]`` (M, 3), ``worker_server`` (W,), ``num_jobs``, ``now`` and ``ended`` (every job has
    arrived and been placed: the episode is over, and ``now`` is the last completion, the makespan, not the last
    arrival). Before ``reset()`` every array is empty.
    """
    u = getattr(env, "unwrapped", env)
    empty4 = np.zeros((0, 4))
    cl = getattr(u, "cluster", None)
    if cl is None or getattr(u, "jobs", None) is None:
        return {"executed": empty4, "planned": empty4, "cloud": np.zeros((0, 3)),
                "worker_server": np.zeros(0, dtype=np.int64), "num_jobs": 0, "now": 0.0, "ended": False}
    sim = getattr(u, "sim", None)
    outcome = getattr(u, "_outcome", None)
    jobs = u.jobs
    discipline = getattr(u, "discipline", "paper")
    planned = empty4
    cloud = np.zeros((0, 3))
    if discipline != "paper" and outcome is not None:
        # job-level baselines: the whole schedule is known at reset; show what ran up to the current arrival
        k = int(getattr(u, "_k", jobs.num_jobs))
        done = k >= jobs.num_jobs
        now = float(np.max(outcome.completion_slots)) if done else float(jobs.arrival_slots[k])
        seg = np.asarray(outcome.segments, dtype=float).reshape(-1, 4)
        executed = seg if done else np.column_stack([seg[:, 0], seg[:, 1], np.minimum(seg[:, 2], now), seg[:, 3]])
        executed = executed[executed[:, 2] > executed[:, 1]]
        if not done:
            later = seg[seg[:, 2] > now]
            planned = np.column_stack([later[:, 0], np.maximum(later[:, 1], now), later[:, 2], later[:, 3]])
    else:
        now = float(sim.now)
        executed = sim.segments()
        rows = [(w, s, e, sim.chunk_job[c]) for w, plan in enumerate(sim.worker_plan) for s, e, c in plan]
        planned = np.array(rows, dtype=float).reshape(-1, 4)
        if len(planned):
            planned[:, 1] = np.maximum(planned[:, 1], now)
            planned = planned[planned[:, 2] > planned[:, 1]]
        on_cloud = np.flatnonzero(sim.chunk_worker == -1)
        if on_cloud.size:
            job = sim.chunk_job[on_cloud]
            rows = []
            for j in np.unique(job):
                m = job == j
                rows.append((j, float(np.min(sim.chunk_rho[on_cloud[m]])), float(np.max(sim.chunk_end[on_cloud[m]]))))
            cloud = np.array(rows, dtype=float).reshape(-1, 3)
    return {
        "executed": executed,
        "planned": planned,
        "cloud": cloud,
        "worker_server": np.asarray(cl.worker_server),
        "num_jobs": int(jobs.num_jobs),
        "now": now,
        "ended": int(getattr(u, "_k", 0)) >= int(jobs.num_jobs),
    }


def _cloud_lanes(cloud: np.ndarray) -> np.ndarray:
    """Greedy interval partitioning: the lane of each cloud bar so that bars in one lane never overlap."""
    lanes_end: list[float] = []
    lane = np.zeros(len(cloud), dtype=np.int64)
    for i in np.argsort(cloud[:, 1], kind="stable"):
        s, e = cloud[i, 1], cloud[i, 2]
        for k, end in enumerate(lanes_end):
            if end <= s:
                lane[i], lanes_end[k] = k, e
                break
        else:
            lane[i] = len(lanes_end)
            lanes_end.append(e)
    return lane


def gantt_figure(env, title: str | None = None, max_lanes: int = 400):
    """A matplotlib ``Figure`` of the Gantt chart (see the module docstring).

    One colour per job from a continuous colour map in arrival order (no colour repeats; the colour bar is
    the job legend) and the job's index written on bars wide enough to hold it; a legend explains solid
    (executed) and hatched (planned) bars, the cloud lanes and the dashed line (the current time, or the end
    of the last job). Time is in hours (1 slot = 1 hour).

    Args:
        env: an ``EdgeCloudML`` env (wrapped or not), after ``reset()``.
        title: the figure title (default: the preset name and the current time).
        max_lanes: refuse charts with more worker lanes than this (they are unreadable), ``ValueError``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    d = gantt_data(env)
    ws = d["worker_server"]
    W = ws.size
    if W > max_lanes:
        raise ValueError(f"the Gantt chart needs one lane per edge worker: {W} > max_lanes={max_lanes}; "
                         "render a smaller preset (e.g. EdgeCloudML-testbed-v0)")
    cloud = d["cloud"]
    lane = _cloud_lanes(cloud) if len(cloud) else np.zeros(0, dtype=np.int64)
    n_cloud = int(lane.max()) + 1 if lane.size else 0
    n_lanes = W + (n_cloud + 1 if n_cloud else 0)
    height = min(2.6 + 0.28 * n_lanes, 30.0)
    fig = Figure(figsize=(12, height), dpi=90)
    ax = fig.add_subplot(1, 1, 1)
    J = max(d["num_jobs"], 1)
    # up to 50 jobs: 50 distinct qualitative colours (no repeats; tab10 first, so that jobs 0 and 1 are not a
    # dark and a light shade of one hue, which would read as executed vs planned); more: a colour map + colour bar
    palette = [matplotlib.colormaps["tab10"](k) for k in range(10)]
    palette += [matplotlib.colormaps[m](k) for m in ("tab20b", "tab20c") for k in range(20)]
    cmap = matplotlib.colormaps["turbo"]
    norm = matplotlib.colors.Normalize(vmin=-0.5, vmax=J - 0.5)

    def colour(j):
        return palette[int(j)] if J <= len(palette) else cmap(0.05 + 0.9 * norm(int(j)))

    t_max = max([d["now"], *(r[2] for r in d["executed"]), *(r[2] for r in d["planned"]), *(r[2] for r in cloud),
                 1e-9])
    runs: dict = {}  # (lane, job) -> merged [start, end] runs, to write the job index once per visible run

    def label(y, s, e, j):
        r = runs.setdefault((int(y), int(j)), [])
        if r and s <= r[-1][1] + 1e-9:
            r[-1][1] = max(r[-1][1], e)
        else:
            r.append([s, e])

    # worker lanes top to bottom in (server, index) order; y = lane index
    order = np.lexsort((np.arange(W), ws))
    y_of = np.empty(W, dtype=np.int64)
    y_of[order] = np.arange(W)
    for rows, alpha, hatch in ((d["executed"], 1.0, None), (d["planned"], 0.35, "//")):
        for w, s, e, j in rows:
            ax.barh(y_of[int(w)], e - s, left=s, height=0.8, color=colour(j), alpha=alpha, hatch=hatch,
                    edgecolor="black" if hatch is None else "grey", linewidth=0.3)
            label(y_of[int(w)], s, e, j)
    for (j, s, e), k in zip(cloud, lane, strict=True):
        ax.barh(W + 1 + k, e - s, left=s, height=0.8, color=colour(j), edgecolor="black", linewidth=0.3)
        label(W + 1 + k, s, e, j)
    labels = [f"server {ws[w]} / worker {w}" for w in order]
    ticks = list(range(W))
    if n_cloud:
        ticks += [W + 1 + k for k in range(n_cloud)]
        labels += [f"cloud lane {k}" for k in range(n_cloud)]
        ax.axhline(W, color="black", linewidth=0.8)
    for (y, j), rr in runs.items():
        for s, e in rr:
            if e - s >= 0.02 * t_max:
                r, g, b = colour(j)[:3]
                ink = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.45 else "black"  # readable on dark bars
                ax.text((s + e) / 2, y, str(j), ha="center", va="center", fontsize=6, color=ink)
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=6 if n_lanes > 40 else 8)
    ax.invert_yaxis()
    # server separators
    for y in np.flatnonzero(np.diff(ws[order]) != 0):
        ax.axhline(y + 0.5, color="grey", linewidth=0.4)
    done = bool(d["ended"])
    if d["now"] > 0:
        ax.axvline(d["now"], color="red", linestyle="--", linewidth=0.9)
    ax.set_xlabel("time (hours; 1 slot = 1 hour)")
    ax.set_ylabel("lane (edge worker, cloud)", fontsize=8)
    ax.set_xlim(left=0)
    handles = [
        Patch(facecolor="lightgrey", edgecolor="black", linewidth=0.3, label="executed work (solid)"),
        Patch(facecolor="lightgrey", edgecolor="grey", alpha=0.5, hatch="//", label="planned, not yet run (hatched)"),
        Line2D([], [], color="red", linestyle="--", linewidth=0.9,
               label="episode end: last completion (makespan)" if done else "current time"),
    ]
    if n_cloud:
        handles.append(Patch(facecolor="white", edgecolor="black", linewidth=0.3,
                             label="cloud lanes: a job's cloud chunks (lanes packed, no preemption)"))
    handles.append(Patch(facecolor="white", edgecolor="white",
                         label="colour = job; number on a bar = job index (arrival order)"))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=7, frameon=False)
    if J > len(palette):
        sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
        cb = fig.colorbar(sm, ax=ax, fraction=0.025, pad=0.01)
        cb.set_label("job (arrival order)", fontsize=8)
        cb.ax.tick_params(labelsize=7)
    u = getattr(env, "unwrapped", env)
    name = getattr(getattr(u, "preset", None), "name", "env")
    ax.set_title(title or f"{name}: {J} jobs, t = {d['now']:.1f} h", fontsize=10)
    fig.tight_layout(rect=(0, 0.55 / height, 1, 1))
    return fig


def render_gantt(env) -> np.ndarray:
    """Gantt chart of the executed (and, before the end, planned) work on each edge worker, as RGB uint8.

    Returns an ``(H, W, 3)`` array (the env's ``render()`` for ``render_mode="rgb_array"``).
    """
    from edgegym.core.figures import figure_rgb

    return figure_rgb(gantt_figure(env))


def save_gantt_png(env, path, title: str | None = None, max_lanes: int = 400):
    """Write the Gantt chart of ``env`` to ``path`` as a PNG (checked by :func:`edgegym.core.figures.save_figure`)."""
    from edgegym.core.figures import save_figure

    return save_figure(gantt_figure(env, title=title, max_lanes=max_lanes), path)
