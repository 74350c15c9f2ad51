"""Rendering of ``WirelessUDL`` (lazy matplotlib import; ``pip install edgegym[plot]``).

:func:`gantt_figure` draws one lane per job: a bar for every slot in which the job trained (colour: the
number of sites its workers used in that slot, explained by the legend), a dot at its arrival, and a
dashed red line at the current slot. It reads the schedule log, kept when the env is built with
``render_mode="rgb_array"`` or ``env.record_schedule: true``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gantt_data", "gantt_figure", "render_gantt", "save_gantt_png"]


def gantt_data(env) -> dict:
    """``segments`` rows ``[job, slot, sites_used, workers]`` (N, 4), ``arrival`` (I,), ``now``."""
    u = getattr(env, "unwrapped", env)
    sim = getattr(u, "sim", None)
    if sim is None:
        return {"segments": np.zeros((0, 4)), "arrival": np.zeros(0), "now": 0}
    rows = [(r.job, r.t, int(np.count_nonzero(r.y)), int(r.y.sum())) for r in sim.log]
    return {"segments": np.array(rows, dtype=float).reshape(-1, 4), "arrival": sim.inst.arrival.copy(),
            "now": int(sim.t)}


def gantt_figure(env, title: str | None = None, max_lanes: int = 400):
    """A matplotlib ``Figure`` with one lane per job (``ValueError`` beyond ``max_lanes`` jobs).

    A bar per slot in which the job trained, coloured by the number of sites its workers used in that slot
    (legend), with the number of workers written on it when the chart is small enough; a black dot at the
    job's arrival slot and a dashed red line at the current slot (the next slot to decide or execute).
    Time is in slots (0-based).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    d = gantt_data(env)
    n = d["arrival"].size
    if n > max_lanes:
        raise ValueError(f"the Gantt chart needs one lane per job: {n} > max_lanes={max_lanes}; "
                         "render a smaller preset (e.g. WirelessUDL-testbed-v0)")
    seg = d["segments"]
    fig = Figure(figsize=(9, max(2.6, 0.3 * n + 1.6)), dpi=90)
    ax = fig.add_subplot(111)
    handles = []
    if seg.size:
        used = sorted({int(x) for x in seg[:, 2]})
        cmap = matplotlib.colormaps["viridis"]
        top = max(max(used), 2)
        colour = {k: cmap(0.15 + 0.75 * (k - 1) / (top - 1)) if k > 0 else "lightgrey" for k in used}
        label_bars = seg.shape[0] <= 300
        for job, t, sites, workers in seg:
            ax.barh(job, 1.0, left=t, height=0.7, color=colour[int(sites)], edgecolor="white", linewidth=0.5)
            if label_bars:
                r, g, b = matplotlib.colors.to_rgb(colour[int(sites)])
                ink = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.45 else "black"
                ax.text(t + 0.5, job, f"{int(workers)}", ha="center", va="center", fontsize=7, color=ink)
        handles += [Patch(color=colour[k], label=f"trained in the slot on {k} site{'s' if k != 1 else ''}")
                    for k in used]
        if label_bars:
            handles.append(Patch(facecolor="white", edgecolor="white", label="number on a bar = workers in that slot"))
    if n:
        ax.plot(d["arrival"], np.arange(n), "k.", markersize=7, label="arrival slot")
        handles.append(Line2D([], [], color="black", marker=".", markersize=7, linestyle="none", label="arrival slot"))
    ax.axvline(d["now"], color="red", linestyle="--", linewidth=1)
    handles.append(Line2D([], [], color="red", linestyle="--", linewidth=1, label=f"current slot ({d['now']})"))
    ax.set_xlabel("time (slots)")
    ax.set_ylabel("job (index)")
    if n:
        ax.set_yticks(np.arange(n) if n <= 40 else ax.get_yticks())
        ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(left=0)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    u = getattr(env, "unwrapped", env)
    name = getattr(getattr(u, "preset", None), "env_id", "WirelessUDL")
    ax.set_title(title or f"{name}: {n} jobs, slot {d['now']} (bar = a job training in a slot)", fontsize=10)
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
