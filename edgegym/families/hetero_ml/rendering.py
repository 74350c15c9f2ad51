"""Rendering of HeteroML episodes: a Gantt chart of the committed jobs (matplotlib imported lazily)."""

from __future__ import annotations

import numpy as np

__all__ = ["render_gantt"]


def render_gantt(env) -> np.ndarray:
    """RGB array: one bar per committed job from start to completion, coloured by worker type."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim = env.sim
    done = np.flatnonzero(sim.start >= 0)
    fig, ax = plt.subplots(figsize=(8, 4), dpi=80)
    cmap = plt.get_cmap("tab10")
    for row, j in enumerate(done):
        ax.barh(row, sim.duration[j], left=sim.start[j], color=cmap(int(sim.worker_type[j]) % 10),
                hatch="" if sim.colocated[j] else "//", edgecolor="k", linewidth=0.3)
        ax.plot([env.jobs.arrival[j]], [row], "k|")
    ax.set_xlabel("slot")
    ax.set_ylabel("job")
    ax.set_title(f"{env.preset.env_id}: {len(done)} jobs (colour = worker type, hatched = spread)")
    fig.tight_layout()
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy()
    plt.close(fig)
    return img
