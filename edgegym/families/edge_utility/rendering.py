"""Rendering of ``EdgeUtility`` (lazy matplotlib import; ``pip install edgegym[plot]``).

:func:`render_gantt` draws one lane per server (edge servers, then the cloud when it exists): each bar is
a contiguous run of one job on that server (colour = the job's utility family), and a dashed red line
marks the current time. It needs the env built with ``render_mode="rgb_array"`` (the simulator then
records executed segments).
"""

from __future__ import annotations

import numpy as np

__all__ = ["gantt_data", "gantt_figure", "render_gantt", "save_gantt_png"]

_FAMILY_COLOURS = {0: "tab:blue", 1: "tab:red", 2: "tab:green", 3: "tab:grey"}
_FAMILY_NAMES = {0: "linear", 1: "all-or-nothing", 2: "sigmoid", 3: "other"}


def gantt_data(env) -> dict:
    """``segments`` rows ``[server, start_s, end_s, job]`` (N, 4), ``num_servers``, ``now``, ``family`` (J,)."""
    u = getattr(env, "unwrapped", env)
    sim = getattr(u, "sim", None)
    if sim is None:
        return {"segments": np.zeros((0, 4)), "num_servers": 0, "now": 0.0, "family": np.zeros(0, dtype=np.int64)}
    rows = [
        (k, s, e, j)
        for k, srv in enumerate(sim.servers)
        for s, e, j in getattr(srv, "segments", [])
    ]
    return {
        "segments": np.array(rows, dtype=float).reshape(-1, 4),
        "num_servers": len(sim.servers),
        "now": float(sim.now),
        "family": np.minimum(u.jobs.family_codes(), 3),
    }


def gantt_figure(env, title: str | None = None, max_lanes: int = 400):
    """A matplotlib ``Figure`` of the per-server Gantt chart (``ValueError`` beyond ``max_lanes`` servers)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    d = gantt_data(env)
    n = d["num_servers"]
    if n > max_lanes:
        raise ValueError(f"the Gantt chart needs one lane per server: {n} > max_lanes={max_lanes}; "
                         "render a smaller preset (e.g. EdgeUtility-testbed-v0)")
    u = getattr(env, "unwrapped", env)
    fig = Figure(figsize=(11, min(2.5 + 0.3 * max(n, 1), 30.0)), dpi=90)
    ax = fig.add_subplot(1, 1, 1)
    fam = d["family"]
    # outlines separate a job's runs on a sparse chart; on a dense one they would paint every thin bar black
    outline = 0.3 if len(d["segments"]) <= 300 else 0.0
    for k, s, e, j in d["segments"]:
        ax.barh(int(k), e - s, left=s, height=0.8, color=_FAMILY_COLOURS[int(fam[int(j)])],
                edgecolor="black", linewidth=outline)
    S = getattr(u, "num_edge_servers", n)
    labels = [f"edge {k}" for k in range(min(S, n))] + ["cloud"] * max(n - S, 0)
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels, fontsize=6 if n > 40 else 8)
    ax.invert_yaxis()
    if d["now"] > 0:
        ax.axvline(d["now"], color="red", linestyle="--", linewidth=0.8)
    handles = [Patch(color=c, label=_FAMILY_NAMES[f]) for f, c in _FAMILY_COLOURS.items() if np.any(fam == f)]
    handles.append(Line2D([], [], color="red", linestyle="--", linewidth=0.8, label="current time"))
    handles.append(Patch(facecolor="white", edgecolor="black", linewidth=0.3,
                         label="bar: a job running (preemption splits a job's bar)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=7,
              title="colour = utility family", title_fontsize=7)
    ax.set_xlim(left=0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("lane (server)")
    name = getattr(getattr(u, "preset", None), "name", "env")
    ax.set_title(title or f"EdgeUtility {name}: t = {d['now']:.2f} s (bar = a job running on a server)", fontsize=10)
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
