"""Render a Gantt chart of one episode to a PNG (what ran where, and when), on any env family.

    python examples/gantt_chart.py [OUT.png] [ENV_ID]

The same as ``edgegym render --env ENV_ID --seed 0 --out OUT.png`` (ENV_ID defaults to EdgeCloudML-tiny-v0;
every family draws one: e.g. EdgeUtility-tiny-v0, WirelessUDL-tiny-v0, HeteroML-tiny-v0), with the family's
reference policy. The env's ``render()`` with ``render_mode="rgb_array"`` gives the same picture as an array.
Without ``OUT.png`` the chart goes to a temporary folder that is removed at the end.
"""

import contextlib
import sys
import tempfile
from pathlib import Path

from edgegym.agents.runner import run_episode

from edgegym.families import family, render_gantt, save_gantt_png

env_id = sys.argv[2] if len(sys.argv) > 2 else "EdgeCloudML-tiny-v0"
policy = family(env_id.split("-", 1)[0]).default_policy
shape = {}


def draw(env, rec):  # called by the runner after the last step, before the env is closed
    save_gantt_png(env, out, title=f"{rec['env']} | {rec['policy']} | seed {rec['seed']} | "
                                   f"objective {rec['objective']:.4g}")
    shape["rgb"] = render_gantt(env).shape  # the same chart as an (H, W, 3) array


with contextlib.ExitStack() as stack:
    folder = None if len(sys.argv) > 1 else Path(stack.enter_context(tempfile.TemporaryDirectory()))
    out = Path(sys.argv[1]) if folder is None else folder / "gantt.png"
    rec = run_episode(env_id, policy, 0, on_end=draw, render_mode="rgb_array")
    print(f"{env_id} | {policy}: objective {rec['objective']:.4g}; Gantt chart {out.name} "
          f"({out.stat().st_size} bytes, {shape['rgb'][1]}x{shape['rgb'][0]} pixels)")
    if folder is None:
        print(f"in {out.parent}")
