"""Regression gate: the hot paths' speed, as ratios to a reference workload, against the figures of the last release.

Usage::

    python benchmarks/regression_gate.py [--tolerance 0.25] [--rounds 5] [--baseline FILE] [--update]

Measured, each as a rate per CPU second of this process (``time.process_time``: the fair clock on a shared
machine), with the functions of the other benchmark scripts:

* ``steps/<id>``: steps/s of the eight default ids (``EdgeCloudML-v0/-v1``, ``EdgeUtility-v0/-v1``,
  ``HeteroML-v0/-v1``, ``WirelessUDL-v0/-v1``) with a random legal action (``steps_per_second.py``);
* ``decide/aonline``: A_online decisions/s (``predict`` only) mid-episode on ``EdgeCloudML-v0``;
* ``decide/rollout``: one ``rollout:aonline`` decision (4 resampled forks × 6 candidates × 20 steps) at the
  same point, in decisions/s;
* ``fork/<id>``: ``fork(seed, "resample")`` mid-episode of each family's default id, the memoised future of a
  rollout policy (``fork_speed.py``), in forks/s;
* ``philly/5000``, ``philly-compiled/5000``: jobs/s of the first 5,000 Philly jobs replayed under A_online
  (``replay_philly.py``), one env step per job, and in the simulator's compiled A_greedy loop; skipped
  with a notice when the trace is not found (``$EDGEGYM_TRACE_DIR`` or the shared traces folder).

Each rate is divided by the **reference**: the geometric mean of Gymnasium's ``CartPole-v1`` steps per CPU second
(random action) and the iterations per CPU second of a fixed NumPy loop, measured in the same run between every two
paths (each rate is divided by the references just before and after it, so a change of the machine's load during
the run moves both sides of its ratio alike). The ratio, unlike a rate, carries over between machines of
different speed. One untimed warm-up round
runs first (Numba kernels compile or load from the cache on first use), then ``--rounds`` timed rounds; the gate
compares the median ratio of each path with the ratio recorded in ``--baseline`` (``gate_baseline.json`` beside
this script: the package version, commit and machine it was recorded on) and **fails (exit status 1) when a path is
slower than recorded by more than ``--tolerance``** (default 0.25: a median ratio below 75 % of the recorded one).
Faster paths and paths the baseline does not list pass. ``--update`` rewrites the baseline with this run's
figures: run it on a release, or to accept an intended, explained slowdown (say why in the commit).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import fork_speed  # noqa: E402
import steps_per_second  # noqa: E402

import edgegym  # noqa: E402

#: the default ids whose steps/s the gate measures
STEP_IDS = ("EdgeCloudML-v0", "EdgeCloudML-v1", "EdgeUtility-v0", "EdgeUtility-v1",
            "HeteroML-v0", "HeteroML-v1", "WirelessUDL-v0", "WirelessUDL-v1")
DECISION_ENV = "EdgeCloudML-v0"
PHILLY_JOBS = 5000
DEFAULT_BASELINE = HERE / "gate_baseline.json"
DEFAULT_TOLERANCE = 0.25
SEED = 100


# ---------------------------------------------------------------------------------------------- the comparison
@dataclass(frozen=True, slots=True)
class Check:
    """One path's verdict: ``status`` is ``ok``, ``slower`` (beyond the tolerance: the gate fails), ``new`` (not in
    the baseline) or ``skipped`` (recorded, not measured in this run, e.g. the trace is absent)."""

    name: str
    recorded: float | None
    measured: float | None
    status: str

    @property
    def failed(self) -> bool:
        return self.status == "slower"

    @property
    def change(self) -> float | None:
        """measured / recorded − 1 (−0.3: 30 % slower), ``None`` when one side is missing."""
        if self.recorded is None or self.measured is None:
            return None
        return self.measured / self.recorded - 1.0


def compare(recorded: dict[str, float], measured: dict[str, float | None], tolerance: float) -> list[Check]:
    """The verdict of each path (recorded first, in their order, then the new ones): ``slower`` when the measured
    ratio is below ``recorded × (1 − tolerance)``, else ``ok``; ``None`` or an absent measurement is ``skipped``."""
    if not 0.0 <= tolerance < 1.0:
        raise ValueError(f"tolerance must be in [0, 1), got {tolerance!r}")
    out = []
    for name, rec in recorded.items():
        got = measured.get(name)
        if got is None:
            out.append(Check(name, rec, None, "skipped"))
        else:
            out.append(Check(name, rec, got, "slower" if got < rec * (1.0 - tolerance) else "ok"))
    out += [Check(n, None, v, "new") for n, v in measured.items() if n not in recorded and v is not None]
    return out


def read_baseline(path: Path) -> dict:
    """The baseline file, checked: a JSON object whose ``ratios`` maps path names to positive finite numbers."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"{path}: no baseline; record one with --update") from None
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path}: not valid JSON ({e})") from None
    ratios = data.get("ratios") if isinstance(data, dict) else None
    if not isinstance(ratios, dict) or not ratios:
        raise SystemExit(f"{path}: key 'ratios' must map each path name to its recorded ratio")
    for k, v in ratios.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
            raise SystemExit(f"{path}: key 'ratios.{k}' must be a positive number, got {v!r}")
    return data


# ----------------------------------------------------------------------------------------------- the workloads
def numpy_loop_rate(iterations: int = 1000) -> float:
    """Iterations per CPU second of a fixed loop of small NumPy calls (sort, cumsum, dot on 256 floats), the
    second half of the reference."""
    a = np.random.default_rng(0).random(256)
    acc = 0.0
    c0 = time.process_time()
    for _ in range(iterations):
        b = np.sort(a)
        acc += float(np.cumsum(b)[-1]) + float(np.dot(a, b))
    return iterations / max(time.process_time() - c0, 1e-9)


def reference_rate(seconds: float) -> tuple[float, float, float]:
    """``(reference, CartPole steps per CPU s, NumPy loop iterations per CPU s)``; reference = their geometric mean."""
    cart = steps_per_second.steps_per_second("CartPole-v1", seconds)[1]
    loop = numpy_loop_rate()
    return math.sqrt(cart * loop), cart, loop


def _mid_episode_policy(env_id: str, policy: str):
    """``(policy, obs)`` at the middle of an episode of ``env_id`` built for ``policy`` (the runner's env),
    stepped there with random legal actions."""
    from edgegym.agents.runner import make_env

    env, pol = make_env(env_id, policy, SEED)
    obs, _ = env.reset(seed=SEED)
    pol.reset(SEED)
    rng = np.random.default_rng(SEED)
    for _ in range(fork_speed._num_jobs(env.unwrapped) // 2):
        obs, *_ = env.step(steps_per_second._random_legal(env, rng))
    return pol, obs


def _per_cpu_second(fn: Callable[[int], object], target_s: float = 0.1) -> Callable[[], float]:
    """Calls of ``fn`` per CPU second (:func:`fork_speed._time`: one warm-up call, then ``reps`` timed calls). The
    first measurement (the warm-up round's) fixes ``reps`` so that the timed calls take about ``target_s`` of CPU
    (at least 2): every timed round then does the same work."""
    reps: list[int] = []

    def rate() -> float:
        if not reps:
            ms = fork_speed._time(fn, 2)[1]
            reps.append(max(2, math.ceil(target_s * 1e3 / max(ms, 1e-6))))
            return 1e3 / max(ms, 1e-9)
        return 1e3 / max(fork_speed._time(fn, reps[0])[1], 1e-9)

    return rate


def path_names() -> list[str]:
    """The names of the measured paths, in the order they run (and the baseline lists them)."""
    return ([f"steps/{e}" for e in STEP_IDS] + ["decide/aonline", "decide/rollout"]
            + [f"fork/{e}" for e in fork_speed.DEFAULT_IDS] + [f"philly/{PHILLY_JOBS}", f"philly-compiled/{PHILLY_JOBS}"])


def workloads(seconds: float) -> dict[str, Callable[[], float | None]]:
    """Path name (:func:`path_names`) -> a function measuring its rate per CPU second (``None``: not measurable
    here)."""
    out: dict[str, Callable[[], float | None]] = {}
    for env_id in STEP_IDS:
        out[f"steps/{env_id}"] = lambda e=env_id: steps_per_second.steps_per_second(e, seconds, seed=SEED)[1]
    pol, obs = _mid_episode_policy(DECISION_ENV, "aonline")
    out["decide/aonline"] = _per_cpu_second(lambda i: pol.predict(obs, deterministic=True))
    rpol, robs = _mid_episode_policy(DECISION_ENV, "rollout:aonline")
    out["decide/rollout"] = _per_cpu_second(lambda i: rpol.predict(robs, deterministic=True))
    for env_id in fork_speed.DEFAULT_IDS:
        u = fork_speed._mid_episode(env_id, SEED)
        out[f"fork/{env_id}"] = _per_cpu_second(lambda i, u=u: u.fork(seed=7, future="resample"))
    out[f"philly/{PHILLY_JOBS}"] = _philly("env")
    out[f"philly-compiled/{PHILLY_JOBS}"] = _philly("compiled")
    assert list(out) == path_names()
    return out


def _philly(path: str) -> Callable[[], float | None]:
    import replay_philly

    from edgegym.workloads import load_philly

    try:
        load_philly()
    except FileNotFoundError:
        name = f"philly{'' if path == 'env' else '-' + path}/{PHILLY_JOBS}"
        print(f"notice: {name} skipped: the Philly trace is not found (set EDGEGYM_TRACE_DIR to the trace folder)")
        return lambda: None

    def rate() -> float:
        r = replay_philly.replay(PHILLY_JOBS, path=path)
        return r["jobs"] / max(r["replay_cpu_s"], 1e-9)

    return rate


@contextlib.contextmanager
def slowed_kernel(spec: str | None):
    """``MODULE:FUNCTION=FACTOR``: while inside, every call of that function takes ``FACTOR`` times its CPU time
    (a busy wait after the real call), to check that the gate catches a slowdown; nothing outside this script."""
    if not spec:
        yield
        return
    target, _, factor = spec.partition("=")
    mod_name, _, fn_name = target.partition(":")
    mod = importlib.import_module(mod_name)
    orig = getattr(mod, fn_name)
    k = float(factor or 2.0)

    def slow(*args, **kwargs):
        c0 = time.process_time()
        res = orig(*args, **kwargs)
        until = c0 + k * (time.process_time() - c0)
        while time.process_time() < until:
            pass
        return res

    setattr(mod, fn_name, slow)
    try:
        yield
    finally:
        setattr(mod, fn_name, orig)


def measure(rounds: int, seconds: float, ref_seconds: float = 0.05) -> tuple[dict, dict, list]:
    """``(ratios, rates, references)``: per path, one ratio and one rate per timed round. A short reference is
    measured between every two paths, and each rate is divided by the geometric mean of the references just before
    and just after it, so that a change of the machine's load (another process on the sibling CPU) during the run
    moves both sides of the ratio alike."""
    paths = workloads(seconds)
    print(f"warm-up round ({len(paths)} paths; compiles or loads the kernels) ...", flush=True)
    for fn in paths.values():
        fn()
    refs = [reference_rate(ref_seconds)]
    rates: dict[str, list[float | None]] = {n: [] for n in paths}
    ratios: dict[str, list[float | None]] = {n: [] for n in paths}
    for r in range(rounds):
        for n, fn in paths.items():
            v = fn()
            refs.append(reference_rate(ref_seconds))
            rates[n].append(v)
            ratios[n].append(None if v is None else v / math.sqrt(refs[-2][0] * refs[-1][0]))
        print(f"round {r + 1}/{rounds} done", flush=True)
    return ratios, rates, refs


def _median(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def _fmt(x: float | None) -> str:
    return f"{x:.4g}" if x is not None else "-"


def _machine() -> dict:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    import numba

    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "os": platform.system(),
            "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__}


def _commit() -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        git = ["git", "-C", str(HERE)]
        p = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
        if p.returncode == 0 and p.stdout.strip():
            d = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no", "--", str(HERE.parent / "edgegym"),
                                str(HERE.parent / "agents")], capture_output=True, text=True, timeout=10)
            return p.stdout.strip() + (" with local changes" if d.stdout.strip() else "")
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE,
                    help=f"largest accepted slowdown, a fraction of the recorded ratio (default {DEFAULT_TOLERANCE})")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds; the median ratio is compared (default 5)")
    ap.add_argument("--seconds", type=float, default=0.25, help="wall seconds of each steps/s window (default 0.25)")
    ap.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE, help="the recorded figures (JSON)")
    ap.add_argument("--update", action="store_true", help="rewrite the baseline with this run's figures")
    ap.add_argument("--slow-kernel", default=None, help=argparse.SUPPRESS)  # MODULE:FUNCTION=FACTOR, checks the gate
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0:
        ap.error("--rounds must be >= 1 and --seconds > 0")
    if not 0.0 <= args.tolerance < 1.0:
        ap.error(f"--tolerance must be in [0, 1), got {args.tolerance}")
    base = None if args.update else read_baseline(args.baseline)
    w0, c0 = time.perf_counter(), time.process_time()
    with slowed_kernel(args.slow_kernel):
        if args.slow_kernel:
            print(f"notice: {args.slow_kernel.partition('=')[0]} deliberately slowed (--slow-kernel)")
        ratios, rates, refs = measure(args.rounds, args.seconds)
    med = {n: _median(v) for n, v in ratios.items()}
    ref_med = [statistics.median(r[i] for r in refs) for i in range(3)]
    print(f"edgegym {edgegym.__version__}: reference {ref_med[0]:.0f}/CPU-s (CartPole-v1 {ref_med[1]:.0f} steps/CPU-s, "
          f"NumPy loop {ref_med[2]:.0f}/CPU-s); {args.rounds} rounds; gate ran {time.perf_counter() - w0:.1f} s wall, "
          f"{time.process_time() - c0:.1f} s CPU")
    if args.update:
        old = json.loads(args.baseline.read_text(encoding="utf-8")) if args.baseline.exists() else {}
        kept = {n: v for n, v in old.get("ratios", {}).items() if med.get(n) is None and n in med}
        for n in kept:
            print(f"notice: {n} not measured in this run: its recorded ratio is kept")
        data = {
            "edgegym_version": edgegym.__version__, "commit": _commit(),
            "recorded_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": _machine(), "rounds": args.rounds,
            "reference": {"per_cpu_s": round(ref_med[0], 1), "cartpole_steps_per_cpu_s": round(ref_med[1], 1),
                          "numpy_loop_per_cpu_s": round(ref_med[2], 1)},
            "ratios": {n: (round(v, 6) if v is not None else kept[n]) for n, v in med.items() if v is not None or n in kept},
            "rates_per_cpu_s": {n: round(_median(v), 3) for n, v in rates.items() if _median(v) is not None},
        }
        args.baseline.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"recorded {len(data['ratios'])} ratios in {args.baseline.name}")
        for n, v in med.items():
            print(f"  {n:<26} {v:.6f}" if v is not None else f"  {n:<26} not measured")
        return 0
    checks = compare(base["ratios"], med, args.tolerance)
    print(f"against {args.baseline.name}: edgegym {base.get('edgegym_version', '?')} (commit {base.get('commit', '?')}), "
          f"recorded {base.get('recorded_utc', '?')} on {base.get('machine', {}).get('cpu', '?')}; "
          f"tolerance {args.tolerance:.0%}")
    if base.get("edgegym_version") != edgegym.__version__:
        print(f"notice: the baseline was recorded for edgegym {base.get('edgegym_version')}, this is "
              f"{edgegym.__version__}: record the release's figures with --update")
    print(f"{'path':<26} {'recorded':>10} {'measured':>10} {'min-max of rounds':>21} {'change':>8}  verdict")
    for c in checks:
        spread = [x for x in ratios.get(c.name, []) if x is not None]
        rng_txt = f"{min(spread):.4g}-{max(spread):.4g}" if spread else "-"
        ch = f"{c.change:+.0%}" if c.change is not None else "-"
        print(f"{c.name:<26} {_fmt(c.recorded):>10} {_fmt(c.measured):>10} {rng_txt:>21} {ch:>8}  {c.status}")
    failed = [c.name for c in checks if c.failed]
    if failed:
        print(f"FAIL: {len(failed)} path(s) slower than recorded by more than {args.tolerance:.0%}: {', '.join(failed)} "
              "(an intended, explained slowdown: --update)")
        return 1
    print(f"PASS: no path slower than recorded by more than {args.tolerance:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
