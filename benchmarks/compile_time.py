"""First-use compile time of each family's Numba kernels, measured with an empty Numba cache.

Usage::

    nice python benchmarks/compile_time.py [--family NAME ...]

For each registered family (or ``--family``), one family at a time, a fresh Python process with
``NUMBA_CACHE_DIR`` pointed at an empty temporary folder runs, as a new user's first command does:

1. one episode (seed 0) of the family's default id under its default policy: the compile time of the kernels
   (outermost Numba compiles of edgegym kernels, :func:`edgegym.core.jit.compile_times`, CPU and wall seconds) and
   the episode's wall time with and without it;
2. the same episode again in the same process (nothing left to compile);
3. one episode of the family's default ``-v1`` id (when registered) under the same policy: what it compiles on
   top.

A second fresh process then runs step 1 on the now filled cache (the cost of loading the cached kernels). Every
step runs a whole episode of the default id, as a user's first ``edgegym run`` does: one HeteroML-v0 episode under
its default policy takes minutes, so the four families took about 35 minutes on a busy 2-core machine
(``--family`` runs some of them). CPU
seconds are less disturbed by other work on a shared machine than wall seconds; the compile notice
(``edgegym/core/jit.py``) quotes the CPU seconds of step 1, from ``Family.extra["first_compile_s"]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_CHILD = r"""
import json, sys, time
from edgegym.core import jit
from edgegym.agents.runner import run_episode
import edgegym

def episode(env_id, policy):
    c0 = {m: dict(v) for m, v in jit.compile_times().items()}
    t = time.perf_counter()
    rec = run_episode(env_id, policy, 0)
    wall = time.perf_counter() - t
    c1 = jit.compile_times()
    cpu = sum(v["cpu_s"] - c0.get(m, {}).get("cpu_s", 0.0) for m, v in c1.items())
    cw = sum(v["wall_s"] - c0.get(m, {}).get("wall_s", 0.0) for m, v in c1.items())
    return {"env": env_id, "steps": rec["steps"], "episode_wall_s": wall, "compile_cpu_s": cpu,
            "compile_wall_s": cw, "reported_wall_s": rec["wall_s"], "reported_compile_s": rec.get("compile_s", 0.0)}

default_id, v1_id, policy, cached = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
out = {"first": episode(default_id, policy)}
if not cached:
    out["again"] = episode(default_id, policy)
    if v1_id in edgegym.registered_ids():
        out["v1"] = episode(v1_id, policy)
print(json.dumps(out))
"""


def measure(fam, cache_dir: str, cached: bool) -> dict:
    """Run the child process for ``fam`` with ``NUMBA_CACHE_DIR=cache_dir``; its JSON result."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "EDGEGYM_COMPILE_NOTICE": "0"}
    default_id = f"{fam.name}-v0"
    res = subprocess.run([sys.executable, "-c", _CHILD, default_id, f"{fam.name}-v1", fam.default_policy,
                          "1" if cached else "0"], env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    from edgegym.families import families

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", nargs="+", help="family names (default: every registered family)")
    args = ap.parse_args(argv)
    fams = families()
    names = args.family or list(fams)
    unknown = [n for n in names if n not in fams]
    if unknown:
        ap.error(f"unknown family {unknown[0]!r} (valid: {', '.join(fams)})")
    print(f"{'family':<12} {'policy':<20} {'compile CPU s':>13} {'compile wall s':>14} {'1st episode s':>13} "
          f"{'without compile':>15} {'again s':>8} {'-v1 adds CPU s':>14} {'cached: 1st episode s':>21}")
    for name in names:
        fam = fams[name]
        with tempfile.TemporaryDirectory(prefix="edgegym-numba-") as cache:
            cold = measure(fam, cache, cached=False)
            warm = measure(fam, cache, cached=True)
        f, a = cold["first"], cold["again"]
        v1 = cold.get("v1", {}).get("compile_cpu_s")
        print(f"{name:<12} {fam.default_policy:<20} {f['compile_cpu_s']:>13.1f} {f['compile_wall_s']:>14.1f} "
              f"{f['episode_wall_s']:>13.1f} {f['episode_wall_s'] - f['compile_wall_s']:>15.2f} "
              f"{a['episode_wall_s']:>8.2f} {'–' if v1 is None else f'{v1:.1f}':>14} "
              f"{warm['first']['episode_wall_s']:>21.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
