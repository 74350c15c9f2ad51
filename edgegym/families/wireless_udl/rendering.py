"""Rendering of ``WirelessUDL`` (lazy matplotlib import; ``pip install edgegym[plot]``).

:func:`gantt_figure` draws one lane per job: a bar for every slot in which the job trained (colour: the
number of sites its workers used in that slot), a dot at its arrival, and a dashed red line at the
current slot. It reads the schedule log, kept when the env is built with ``render_mode="rgb_array"`` or
``env.record_schedule: true``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gantt_data", "gantt_figure", "render_gantt"]


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
    """A matplotlib ``Figure`` with one lane per job (``ValueError`` beyond ``max_lanes`` jobs)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    d = gantt_data(env)
    n = d["arrival"].size
    if n > max_lanes:
        raise ValueError(f"the Gantt chart needs one lane per job: {n} > max_lanes={max_lanes}")
    fig = Figure(figsize=(8, max(2.0, 0.25 * n + 1)), dpi=80)
    ax = fig.add_subplot(111)
    seg = d["segments"]
    if seg.size:
        vmax = max(seg[:, 2].max(), 1)
        cmap = matplotlib.colormaps["viridis"]
        for job, t, sites, _ in seg:
            ax.barh(job, 1.0, left=t, height=0.7, color=cmap(sites / vmax), edgecolor="none")
    if n:
        ax.plot(d["arrival"], np.arange(n), "k.", markersize=4, label="arrival")
    ax.axvline(d["now"], color="red", linestyle="--", linewidth=1)
    ax.set_xlabel("slot")
    ax.set_ylabel("job")
    ax.invert_yaxis()
    ax.set_title(title or "WirelessUDL schedule (colour: sites used)")
    fig.tight_layout()
    return fig


def render_gantt(env) -> np.ndarray:
    """The Gantt chart as an ``(H, W, 3)`` uint8 RGB array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(gantt_figure(env))
    canvas.draw()
    return np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[:, :, :3])
