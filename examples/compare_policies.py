"""Compare policies on several seeds with the bench API: a tidy CSV, a mean ± std table and plots.

    python examples/compare_policies.py [OUT_DIR]

The same as ``edgegym bench --envs EdgeCloudML-tiny-v0 EdgeCloudML-testbed-v0 --policies aonline srtf
all-cloud random --seeds 0-2 --baseline srtf --out OUT_DIR``. Without ``OUT_DIR`` the files go to a temporary
folder that is removed at the end (the table is printed).
"""

import contextlib
import sys
import tempfile
from pathlib import Path

from edgegym.agents.bench import build_grid, format_markdown, run_bench

with contextlib.ExitStack() as stack:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else stack.enter_context(tempfile.TemporaryDirectory()))
    out.mkdir(parents=True, exist_ok=True)
    cells = build_grid(
        envs=["EdgeCloudML-tiny-v0", "EdgeCloudML-testbed-v0"],
        policies=["aonline", "srtf", "all-cloud", "random"],
        seeds=[0, 1, 2],
    )
    res = run_bench(cells, out, workers=1, baselines=["srtf"], progress=False)
    print(format_markdown(res["summary"]))
    print("files:", ", ".join(Path(p).name for k, p in res["paths"].items() if k != "plots"))
    print("plots:", ", ".join(Path(p).name for p in res["paths"].get("plots", [])))
    if len(sys.argv) > 1:
        print(f"in {out}")
