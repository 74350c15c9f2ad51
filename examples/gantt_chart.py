"""Render a Gantt chart of one episode to a PNG (what each edge worker ran, when).

    python examples/gantt_chart.py [OUT.png]

The same as ``edgegym render --env EdgeCloudML-tiny-v0 --policy aonline --seed 0 --out OUT.png``; the env's
``render()`` with ``render_mode="rgb_array"`` gives the same picture as an array.
"""

import sys
import tempfile
from pathlib import Path

from edgegym.agents.runner import run_episode

from edgegym.families import save_gantt_png

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="edgegym_gantt_")) / "gantt.png"


def draw(env, rec):  # called by the runner after the last step, before the env is closed
    save_gantt_png(env, out, title=f"{rec['env']} | {rec['policy']} | seed {rec['seed']} | "
                                   f"total JCT {rec['objective']:.4g} h")


rec = run_episode("EdgeCloudML-tiny-v0", "aonline", 0, on_end=draw, render_mode="rgb_array")
print(f"wrote {out} ({out.stat().st_size} bytes); total JCT {rec['objective']:.4g} h")
