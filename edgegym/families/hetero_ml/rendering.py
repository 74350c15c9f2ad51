"""Rendering of ``HeteroML`` episodes (lazy matplotlib import; ``pip install edgegym[plot]``).

:func:`gantt_figure` draws one lane per job (arrival order): under the reservation driver (the paper's
model) a bar from the job's start to its completion, coloured by the worker type it was placed on (legend:
every worker type of the preset), hatched when its workers and PS are spread over several servers, with
the number of workers written on the bar; under a slot-driven discipline (DRF, AntMan, Tiresias) a grey
bar from the job's first start to its completion (the worker type may change from slot to slot, and
preemptions are not drawn). A black tick marks each job's arrival and a dashed red line the time of the
next decision (or, once every job is placed, the last completion). Time is in slots (1 slot = 1 hour).
"""

from __future__ import annotations

import numpy as np

__all__ = ["gantt_data", "gantt_figure", "render_gantt", "save_gantt_png"]


def gantt_data(env) -> dict:
    """The numbers the chart draws (no matplotlib needed).

    Returns ``bars`` rows ``[job, start, end, worker_type, num_workers, colocated]`` (N, 6) for the jobs
    decided so far (``worker_type`` -1 and ``num_workers`` 0 under a slot-driven discipline), ``arrival``
    (J,), ``worker_types`` (the preset's names), ``slot_driven``, ``now`` and ``done``. Before ``reset()``
    every array is empty.
    """
    u = getattr(env, "unwrapped", env)
    jobs = getattr(u, "jobs", None) if getattr(u, "_inst", None) is not None else None
    names = tuple(u.preset.cluster.worker_types) if getattr(u, "preset", None) is not None else ()
    if jobs is None:
        return {"bars": np.zeros((0, 6)), "arrival": np.zeros(0), "worker_types": names, "slot_driven": False,
                "now": 0.0, "done": False}
    J = int(jobs.num_jobs)
    k = int(getattr(u, "_k", J))
    slot = getattr(u, "_slot", None) if getattr(u, "slot_driven", False) else None
    if slot is not None:
        ids = np.arange(k)
        start = np.asarray(slot.first_start, dtype=float)[ids]
        end = np.asarray(slot.completion, dtype=float)[ids]
        wt = np.full(k, -1.0)
        nw = np.zeros(k)
        col = np.zeros(k)
    else:
        sim = u.sim
        ids = np.flatnonzero(sim.start >= 0)
        start = sim.start[ids].astype(float)
        end = start + sim.duration[ids]
        wt = sim.worker_type[ids].astype(float)
        nw = sim.workers[ids].sum(axis=1).astype(float)
        col = sim.colocated[ids].astype(float)
    bars = np.column_stack([ids.astype(float), start, end, wt, nw, col]).reshape(-1, 6)
    done = k >= J
    if done:
        now = float(end.max()) if end.size else 0.0
    else:
        decision_time = getattr(u, "_decision_time", None)
        now = float(decision_time(k)) if callable(decision_time) else float(jobs.arrival[k])
    return {"bars": bars, "arrival": np.asarray(jobs.arrival, dtype=float), "worker_types": names,
            "slot_driven": slot is not None, "now": now, "done": done}


def gantt_figure(env, title: str | None = None, max_lanes: int = 400):
    """A matplotlib ``Figure`` of the per-job Gantt chart (see the module docstring).

    Args:
        env: a ``HeteroML`` env (wrapped or not).
        title: the figure title (default: the env id, the jobs placed and the current time).
        max_lanes: refuse charts with more jobs (lanes) than this, ``ValueError``.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    d = gantt_data(env)
    J = d["arrival"].size
    if J > max_lanes:
        raise ValueError(f"the Gantt chart needs one lane per job: {J} > max_lanes={max_lanes}; "
                         "render a smaller preset (e.g. HeteroML-tiny-v0)")
    fig = Figure(figsize=(10, min(max(2.8, 0.32 * J + 1.6), 30.0)), dpi=90)
    ax = fig.add_subplot(1, 1, 1)
    palette = [matplotlib.colormaps["tab10"](i) for i in range(10)]
    names = d["worker_types"]

    def colour(m: int):
        return "darkgrey" if m < 0 else palette[m % 10]

    bars = d["bars"]
    label_bars = len(bars) <= 200
    for j, s, e, m, n, col in bars:
        ax.barh(j, e - s, left=s, height=0.7, color=colour(int(m)), edgecolor="black", linewidth=0.4,
                hatch=None if col or m < 0 else "//")
        if label_bars and n > 0:
            r, g, b = matplotlib.colors.to_rgb(colour(int(m)))
            ink = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.45 else "black"
            ax.text((s + e) / 2, j, f"{int(n)}", ha="center", va="center", fontsize=7, color=ink,
                    bbox={"facecolor": colour(int(m)), "edgecolor": "none", "pad": 0.5})
    if J:
        ax.plot(d["arrival"], np.arange(J), "k|", markersize=9, markeredgewidth=1.5)
    if d["now"] > 0:
        ax.axvline(d["now"], color="red", linestyle="--", linewidth=0.9)
    handles = []
    if d["slot_driven"]:
        handles.append(Patch(facecolor="darkgrey", edgecolor="black", linewidth=0.4,
                             label="first start to completion (elastic / preemptive; types vary)"))
    else:
        used = {int(m) for m in bars[:, 3]}
        handles += [Patch(facecolor=colour(i), edgecolor="black", linewidth=0.4,
                          label=f"worker type {name}" + ("" if i in used else " (unused)"))
                    for i, name in enumerate(names)]
        handles.append(Patch(facecolor="white", edgecolor="black", linewidth=0.4, hatch="//",
                             label="hatched: spread over several servers"))
        if label_bars:
            handles.append(Patch(facecolor="white", edgecolor="white", label="number on a bar = workers"))
    handles.append(Line2D([], [], color="black", marker="|", markersize=9, markeredgewidth=1.5, linestyle="none",
                          label="arrival"))
    handles.append(Line2D([], [], color="red", linestyle="--", linewidth=0.9,
                          label="last completion" if d["done"] else "next decision"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    ax.set_xlabel("time (slots; 1 slot = 1 hour)")
    ax.set_ylabel("job (index, arrival order)")
    if J:
        if J <= 40:
            ax.set_yticks(np.arange(J))
        ax.set_ylim(J - 0.5, -0.5)
    ax.set_xlim(left=0)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    u = getattr(env, "unwrapped", env)
    name = getattr(getattr(u, "preset", None), "env_id", "HeteroML")
    ax.set_title(title or f"{name}: {len(bars)} of {J} jobs placed, t = {d['now']:.0f} slots", fontsize=10)
    fig.tight_layout()
    return fig


def render_gantt(env) -> np.ndarray:
    """The Gantt chart as an ``(H, W, 3)`` uint8 RGB array (``render()`` for ``render_mode="rgb_array"``)."""
    from edgegym.core.figures import figure_rgb

    return figure_rgb(gantt_figure(env))


def save_gantt_png(env, path, title: str | None = None, max_lanes: int = 400):
    """Write the Gantt chart of ``env`` to ``path`` as a PNG (checked by :func:`edgegym.core.figures.save_figure`)."""
    from edgegym.core.figures import save_figure

    return save_figure(gantt_figure(env, title=title, max_lanes=max_lanes), path)
