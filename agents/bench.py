"""``edgegym bench``: policies × envs (presets) × seeds (× trace windows), in parallel, into one tidy CSV,
a markdown table and plots; ``edgegym render``: a Gantt chart PNG of one episode.

Every episode runs through :func:`edgegym.agents.runner.run_episode`, the same path as ``edgegym run``, so reference
policies, baselines and learned agents (``ppo:PATH`` / ``maskable-ppo:PATH``) land in the same table.
Envs and policies plug in by registration (``edgegym.registered_ids()`` and ``edgegym.agents.registry.POLICIES``);
``--policies all`` (the default) runs, on each env, every registered policy that supports its family.

Outputs under ``--out DIR``:

* ``results.csv``: one row per episode: env, preset, window, policy, seed, objective, every episode
  metric, ``episode_return``, ``wall_s``, ``decisions_per_s``;
* ``summary.csv`` / ``summary.md``: mean ± sample std over seeds per (env, window, policy), and the mean ±
  std over seeds of ``objective / objective(baseline)`` on the same seed (e.g. the paper's JCT rate over
  SRTF with ``--baseline srtf``); where the env's family declares an offline bound (``Family.bound``,
  :mod:`edgegym.core.bounds`), ``objective / bound`` on the same seed and a row ``bound: <name>`` with the bound
  itself, named under the table with the schedules it bounds;
* ``bounds.csv``: the bound of every (env, window, seed), with its parts (``--no-bound``: not computed);
* ``plots/<env>[_w<window>]_metrics.png`` (bars with error bars), ``..._cdf.png`` (CDF of per-job
  completion / response times, pooled over seeds), ``..._utilisation.png`` (edge utilisation over time,
  mean over seeds), and with ``--gantt`` ``gantt/<env>_<policy>.png`` (first seed) for small presets;
* ``series.json``: the per-job times and utilisation series the plots were drawn from.

Backends: ``local`` (``concurrent.futures.ProcessPoolExecutor`` on ``--workers`` cores, tqdm progress bar)
and ``ray`` (the same cells as Ray tasks on a local or existing cluster; ``pip install 'edgegym[ray]'``).
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "Cell",
    "add_bench_parser",
    "add_render_parser",
    "build_grid",
    "episode_series",
    "format_markdown",
    "bound_cells",
    "run_bench",
    "run_bound",
    "run_cell",
    "summarise",
]

#: columns of results.csv that describe the cell, not the outcome
KEY_COLUMNS = ("env", "preset", "window", "policy", "seed")
#: outcome columns shown last in the table (not episode metrics)
RUN_COLUMNS = ("wall_s", "decisions_per_s")
_NOT_METRICS = {"episode_return", "steps", "episode", "reward_scale", "num_jobs"}
_GANTT_MAX_LANES = 64


def _err(msg: str) -> Exception:
    from .errors import CLIError

    return CLIError(msg)


@dataclass(slots=True)
class Cell:
    """One episode of the grid: ``policy`` on ``env`` with ``reset(seed)``; ``window`` a trace window start
    (with ``env_config`` carrying the workload source) or ``None`` for the env's own workload."""

    env: str
    policy: str
    seed: int
    window: int | None = None
    env_config: dict = field(default_factory=dict)
    gantt: str | None = None  # PNG path for the Gantt chart of this episode, if wanted


def episode_series(env) -> dict:
    """Per-episode series for the plots, from the finished env's own ``episode_series()``.

    ``job_times``: per-job completion (JCT) or response time; ``util_t`` / ``util``: utilisation per time
    bin (empty when the env has none). Envs without ``episode_series()`` give empty series.
    """
    own = getattr(env.unwrapped, "episode_series", None)
    out = {"job_times": [], "util_t": [], "util": []}
    if callable(own):
        out.update(own())
    return out


def _save_gantt(env, path, rec) -> str | None:
    """Write the Gantt chart of a finished episode; the reason as a string when the env cannot draw one (too
    many lanes). A chart that fails the figure check (:class:`edgegym.core.figures.FigureCheckError`) is a
    bug and raises."""
    from edgegym.core.figures import FigureCheckError
    from edgegym.families import save_gantt_png

    title = f"{rec['env']} | {rec['policy']} | seed {rec['seed']} | objective {rec['objective']:.4g}"
    try:
        save_gantt_png(env, path, title=title, max_lanes=_GANTT_MAX_LANES)
    except FigureCheckError:
        raise
    except (ValueError, NotImplementedError) as e:
        return str(e)
    return None


def run_cell(cell: Cell) -> dict:
    """Run one cell (in a worker process or a Ray task); never raises: ``{"error": ...}`` on failure."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is only needed for learned policies
        pass
    from .runner import run_episode

    series: dict = {}
    gantt_note: list[str] = []

    def on_end(env, rec):
        series.update(episode_series(env))
        if cell.gantt:
            why = _save_gantt(env, cell.gantt, rec)
            if why is not None:
                gantt_note.append(why)

    try:
        rec = run_episode(cell.env, cell.policy, cell.seed, cell.env_config or None, on_end=on_end,
                          render_mode="rgb_array" if cell.gantt else None)
    except Exception as e:  # reported by the driver, one line per failed cell (and the traceback of a bug)
        import traceback

        from .errors import expected_message

        out = {"cell": asdict(cell), "error": f"{type(e).__name__}: {e}"}
        if expected_message(e) is None:
            out["traceback"] = traceback.format_exc()
        return out
    rec["window"] = cell.window
    out = {"cell": asdict(cell), "record": rec, "series": series}
    if gantt_note:
        out["gantt_skipped"] = gantt_note[0]
    return out


BOUND_PREFIX = "bound: "  # the policy column of a summary row that holds the bound itself


def run_bound(cell: Cell) -> dict:
    """The offline bound (``Family.bound``) of ``cell``'s env and seed, with its env config (the grid's, without a
    policy's overrides), in a worker process or a Ray task; never raises: ``{"error": ...}`` on failure."""
    import gymnasium as gym

    from edgegym.core.bounds import family_bound
    from edgegym.families import family

    try:
        fn = family_bound(family(_family(cell.env)))
        env = gym.make(cell.env, config=cell.env_config or None)
        try:
            env.reset(seed=cell.seed)
            b = fn(env.unwrapped)
        finally:
            env.close()
    except Exception as e:  # noqa: BLE001  (reported by the driver, one line per failed bound)
        return {"cell": asdict(cell), "error": f"{type(e).__name__}: {e}"}
    row = {"env": cell.env, "window": cell.window, "seed": cell.seed, "bound": float(b.value), "bound_name": b.name,
           "bound_sense": b.sense, "bound_text": b.bounds, "bound_seconds": float(b.seconds)}
    row.update({f"part: {k}": float(v) for k, v in b.parts.items()})
    return {"cell": asdict(cell), "bound": row}


def bound_cells(cells: list[Cell]) -> list[Cell]:
    """One cell per (env, window, seed) of the grid whose env's family declares a bound (``policy`` empty)."""
    from edgegym.families import family

    out, seen = [], set()
    for c in cells:
        key = (c.env, c.window, c.seed)
        if key in seen or not getattr(family(_family(c.env)), "bound", None):
            continue
        seen.add(key)
        out.append(Cell(c.env, "", c.seed, c.window, c.env_config))
    return out


def _family(env_id: str) -> str:
    from .runner import env_family as _env_family

    return _env_family(env_id)


def _learned_family(name: str) -> str | None:
    from .rl.learned import LearnedPolicyError, learned_env_config, sidecar_path, split_name

    try:
        learned_env_config(name)
    except LearnedPolicyError as e:
        raise _err(str(e)) from None
    _, path = split_name(name)
    p = path / "model.zip" if path.is_dir() else path
    side = sidecar_path(p)
    try:
        env_id = json.loads(side.read_text())["env_id"]
    except (OSError, ValueError, KeyError):
        return None
    return _family(env_id) if env_id in _env_ids() else None


def _env_ids() -> list[str]:
    from .runner import env_ids as ids

    return ids()


def build_grid(envs, policies, seeds, windows=None, trace=None, env_config=None) -> list[Cell]:
    """The cells of the grid, validated (unknown env / policy, unsupported pair: ``CLIError``).

    ``policies``: names, ``["all"]`` (every registered policy supporting each env), or a mix (``all`` plus
    learned ``ppo:PATH``). A policy named explicitly must support every env; ``all`` expands per env; a
    learned policy runs on the envs of the family it was trained on.
    """
    from .registry import POLICIES
    from .rl.learned import is_learned
    from .runner import check_env_policy

    if not envs:
        raise _err("--envs needs at least one env id")
    if not seeds:
        raise _err("--seeds needs at least one seed")
    ids = _env_ids()
    for e in envs:
        if e not in ids:
            raise _err(f"unknown env {e!r}; valid envs: {', '.join(ids)}")
    learned_fam = {p: _learned_family(p) for p in policies if is_learned(p)}
    base_cfg = dict(env_config or {})
    if trace:
        base_cfg = {**base_cfg, "workload": {**base_cfg.get("workload", {}), "source": trace}}
    wins = list(windows) if windows else [None]
    cells = []
    for e in envs:
        fam = _family(e)
        names: list[str] = []
        for p in policies:
            if p == "all":
                names += [n for n, s in POLICIES.items() if fam in s.families]
            elif is_learned(p):
                if learned_fam[p] in (None, fam):
                    names.append(p)
            else:
                check_env_policy(e, p)
                names.append(p)
        names = list(dict.fromkeys(names))
        if not names:
            raise _err(f"no policy of {policies} runs on {e!r}")
        for w in wins:
            cfg = {k: dict(v) for k, v in base_cfg.items()}
            if w is not None:
                cfg.setdefault("workload", {})["window"] = int(w)
            for p in names:
                for s in seeds:
                    cells.append(Cell(e, p, int(s), w, cfg))
    return cells


def _execute_local(cells, workers: int, progress: bool, fn=None, on_result=None) -> list[dict]:
    """Run ``fn`` (default :func:`run_cell`) on every cell in ``workers`` processes; ``on_result(r)`` is called with
    each result as it finishes (a caller writing partial results)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    out = []
    fn = fn or run_cell
    bar = tqdm(total=len(cells), desc="bench", unit="episode", disable=not progress, file=sys.stderr)
    if workers <= 1:
        for c in cells:
            out.append(fn(c))
            if on_result is not None:
                on_result(out[-1])
            bar.update(1)
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as ex:
            futs = [ex.submit(fn, c) for c in cells]
            for f in as_completed(futs):
                out.append(f.result())
                if on_result is not None:
                    on_result(out[-1])
                bar.update(1)
    bar.close()
    return out


def _execute_ray(cells, workers: int, progress: bool, address: str | None, fn=None, on_result=None) -> list[dict]:
    try:
        import ray
    except ImportError:
        raise _err("--backend ray needs Ray: pip install 'edgegym[ray]'") from None
    from tqdm import tqdm

    started = False
    if not ray.is_initialized():
        kw = {"address": address} if address else {"num_cpus": workers}
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, **kw)
        started = True
    try:
        task = ray.remote(num_cpus=1)(fn or run_cell)
        pending = [task.remote(c) for c in cells]
        out = []
        bar = tqdm(total=len(cells), desc="bench (ray)", unit="episode", disable=not progress, file=sys.stderr)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for r in ray.get(done):
                out.append(r)
                if on_result is not None:
                    on_result(r)
            bar.update(len(done))
        bar.close()
    finally:
        if started:
            ray.shutdown()
    return out


# ------------------------------------------------------------------------------------------- tables
def _metric_columns(df, metrics=None) -> list[str]:
    """The metric columns of the table: ``metrics`` if given, else every numeric episode metric that is
    not constant over the rows of ``df`` (objective first, run columns last)."""
    import pandas as pd

    if metrics:
        cols = [m for m in metrics if m != "objective"]
    else:
        skip = set(KEY_COLUMNS) | set(RUN_COLUMNS) | _NOT_METRICS | {"objective"}
        cols = []
        for c in df.columns:
            if c in skip or not pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]):
                continue
            v = df[c].dropna()
            if len(v) and v.nunique() > 1:
                cols.append(c)
    return ["objective", *cols, *RUN_COLUMNS]


def _groups(df):
    """(env, window) groups in a stable order; window NaN for the env's own workload."""
    keys = df[["env", "window"]].drop_duplicates()
    return [(r.env, r.window) for r in keys.itertuples(index=False)]


def _sel(df, env, window):
    m = df["env"] == env
    m &= df["window"].isna() if _isnan(window) else df["window"] == window
    return df[m]


def _isnan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def summarise(df, baselines=(), metrics=None, bounds=None):
    """Mean ± sample std (ddof=1; 0 for one seed) per (env, window, policy) of each metric column, plus the
    ratio ``objective / objective(baseline)`` on the same seed (mean ± std over seeds) against the first of
    ``baselines`` run on that (env, window). With ``bounds`` (the rows of ``bounds.csv``), also
    ``objective / bound`` on the same seed (``bound_ratio``) and one row ``bound: <name>`` per (env, window) with the
    bound's mean ± std (its ``bound_ratio`` is 1). Returns a DataFrame (also written as ``summary.csv``)."""
    import pandas as pd

    rows = []
    for env, window in _groups(df):
        g = _sel(df, env, window)
        cols = _metric_columns(g, metrics)
        base = next((b for b in baselines if b in set(g["policy"])), None)
        base_obj = g[g["policy"] == base].set_index("seed")["objective"] if base else None
        gb = _sel(bounds, env, window) if bounds is not None and len(bounds) else None
        bound = gb.set_index("seed")["bound"] if gb is not None and len(gb) else None
        about = {"bound": "", "bound_sense": "", "bound_text": ""}
        if bound is not None:
            about = {k: " / ".join(dict.fromkeys(gb[c].astype(str))) for k, c in
                     (("bound", "bound_name"), ("bound_sense", "bound_sense"), ("bound_text", "bound_text"))}
        for pol in dict.fromkeys(g["policy"]):
            gp = g[g["policy"] == pol]
            row = {
                "env": env,
                "preset": gp["preset"].iloc[0],
                "window": window,
                "policy": pol,
                "n": len(gp),
                "baseline": base or "",
            }
            for c in cols:
                v = pd.to_numeric(gp[c], errors="coerce") if c in gp else pd.Series(dtype=float)
                row[f"{c}_mean"] = float(v.mean()) if len(v) else math.nan
                row[f"{c}_std"] = float(v.std(ddof=1)) if len(v) > 1 else 0.0
            row["ratio_mean"], row["ratio_std"] = _ratio(gp, base_obj)
            row["bound_ratio_mean"], row["bound_ratio_std"] = _ratio(gp, bound)
            row.update(about)
            row["metric_columns"] = ",".join(cols)
            rows.append(row)
        if bound is not None:
            row = {"env": env, "preset": g["preset"].iloc[0], "window": window, "policy": BOUND_PREFIX + about["bound"],
                   "n": len(bound), "baseline": base or ""}
            row.update({f"{c}_{k}": math.nan for c in cols for k in ("mean", "std")})
            row["objective_mean"] = float(bound.mean())
            row["objective_std"] = float(bound.std(ddof=1)) if len(bound) > 1 else 0.0
            row.update(ratio_mean=math.nan, ratio_std=math.nan, bound_ratio_mean=1.0, bound_ratio_std=0.0, **about,
                       metric_columns=",".join(cols))
            rows.append(row)
    return pd.DataFrame(rows)


def _ratio(gp, den) -> tuple[float, float]:
    """Mean ± std over seeds of ``objective / den`` on the same seed (``den``: a Series by seed; nan without)."""
    if den is None:
        return math.nan, math.nan
    r = (gp.set_index("seed")["objective"] / den).dropna()
    return (float(r.mean()) if len(r) else math.nan), (float(r.std(ddof=1)) if len(r) > 1 else 0.0)


def _fmt(m: float, s: float) -> str:
    from .options import fmt_pm

    return fmt_pm(m, s)


def format_markdown(summary) -> str:
    """The markdown table(s) of :func:`summarise`'s output, one section per (env, window).

    Cells read ``mean ± std`` rounded to the std's two significant digits (``results.csv`` holds full
    precision); the bound's row has its objective and ``objective / bound`` only, and the line under the table
    names the bound and the schedules it bounds.
    """
    parts = []
    for (env, window), g in summary.groupby(["env", "window"], sort=False, dropna=False):
        cols = g["metric_columns"].iloc[0].split(",")
        base = g["baseline"].iloc[0]
        bound = str(g["bound"].iloc[0]) if "bound" in g and isinstance(g["bound"].iloc[0], str) else ""
        win = "" if _isnan(window) else f", trace window {int(window)}"
        parts.append(f"### {env} (preset {g['preset'].iloc[0]}{win})\n")
        head = ["policy", "n", "objective"]
        if base:
            head.append(f"objective / {base}")
        if bound:
            head.append("objective / bound")
        head += [c for c in cols[1:]]
        parts.append("| " + " | ".join(head) + " |")
        parts.append("|" + "---|" * len(head))
        for r in g.itertuples(index=False):
            r = r._asdict()
            is_bound = str(r["policy"]).startswith(BOUND_PREFIX)
            cells = [r["policy"] if is_bound else f"`{r['policy']}`", str(r["n"]),
                     _fmt(r["objective_mean"], r["objective_std"])]
            if base:
                cells.append("–" if is_bound else _fmt(r["ratio_mean"], r["ratio_std"]))
            if bound:
                cells.append("1" if is_bound else _fmt(r["bound_ratio_mean"], r["bound_ratio_std"]))
            cells += ["–" if is_bound else _fmt(r[f"{c}_mean"], r[f"{c}_std"]) for c in cols[1:]]
            parts.append("| " + " | ".join(cells) + " |")
        if bound:
            sense = g["bound_sense"].iloc[0]
            side = "≤ 1" if sense == "upper" else "≥ 1"
            parts.append(f"\nBound: {bound} ({sense} bound on the objective, objective / bound {side}); it bounds "
                         f"{g['bound_text'].iloc[0]}. Definition and proof sketch: the family's page, section "
                         "\"Offline bound\".")
        parts.append("")
    return "\n".join(parts)


# -------------------------------------------------------------------------------------------- plots
def _tag(env: str, window) -> str:
    return env if _isnan(window) else f"{env}_w{int(window)}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


#: policy markers (with the colours, every policy stays visible where values coincide)
_MARKERS = "osD^vP*Xph<>"


def _time_unit(env: str) -> str:
    """The env family's time unit in words (``Family.extra["time_unit"]``), e.g. ``hours`` or ``seconds``."""
    from edgegym.families import family

    extra = family(_family(env)).extra
    u = str(extra.get("time_unit", extra.get("time unit", "")))
    for word, name in (("hour", "hours"), ("second", "seconds"), ("minute", "minutes"), ("slot", "slots")):
        if word in u:
            return name
    return u or "time units"


def _unit(metric: str, time_unit: str, objective: str = "") -> str:
    """The y-axis label of a metric column, with its unit in parentheses (generic: from the words of its name;
    for the objective and the bounds on it, from the family's objective in words)."""
    m = metric.lower()
    words = set(m.split("_"))
    if m == "ratio":
        return "objective / baseline's (ratio; 1 = baseline)"
    if m == "wall_s":
        return "wall-clock time (s)"
    if m.endswith("per_s"):
        return "decisions per second (1/s)" if "decision" in m or "decisions" in words else "rate (1/s)"
    if words & {"objective", "bound", "offset"}:
        o = objective.lower()
        if "utility" in o:
            return "utility [-]"
        if "cost" in o:
            return "cost (cost units)"
        if "weighted" in o:
            return f"weighted time (weight × {time_unit})"
        if "time" in o:
            return f"time ({time_unit})"
        return "objective [-]"
    if words & {"fraction", "frac", "share", "utilisation", "utilization"}:
        return "share (0–1)"
    if words & {"ratio", "rate", "load"}:
        return "ratio [-]"
    if "cost" in words:
        return "cost (cost units)"
    if "utility" in words:
        return "utility [-]"
    if "weighted" in words:
        return f"weighted time (weight × {time_unit})"
    if m.endswith("_s") or m.endswith("_seconds"):
        return "time (s)"
    if "worker" in words and "slots" in words:
        return "worker-slots (count)"
    if words & {"slots", "jct", "makespan", "jrt", "delay", "time", "latency"}:
        return f"time ({time_unit})"
    return "number (count)"


def _scale(ax, values, unit: str = "") -> str:
    """Log scale (symlog when a value is 0) when the positive values span more than 20× (never for shares in
    [0, 1]); returns ``"log"``, ``"symlog"`` or ``""`` (see :func:`_with_scale`)."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    pos = v[v > 0]
    if unit.startswith("share") or pos.size < 2 or np.any(v < 0) or pos.max() / pos.min() <= 20:
        return ""
    if np.any(v == 0):
        ax.set_yscale("symlog", linthresh=float(pos.min()))
        return "symlog"
    ax.set_yscale("log")
    return "log"


def _with_scale(label: str, scale: str) -> str:
    """``"time (s)"`` + ``"log"`` -> ``"time (s; log axis)"`` (the unit stays, the scale is a note beside it)."""
    if not scale:
        return label
    if label.endswith(")"):
        return f"{label[:-1]}; {scale} axis)"
    return f"{label} ({scale} axis)"


def _dot_panels(fig, panels, g, pols, time_unit, ncol, objective: str = ""):
    """One panel per metric: mean ± std per policy as a marker with error bars (not bars, so that a log axis
    and values of very different size stay readable); each policy has its own colour and marker."""
    nrow = math.ceil(len(panels) / ncol)
    x = np.arange(len(pols))
    for i, (c, title) in enumerate(panels):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        m, sd = g[f"{c}_mean"].to_numpy(float), g[f"{c}_std"].to_numpy(float)
        for k in range(len(pols)):
            ax.errorbar(x[k], m[k], yerr=sd[k] if np.isfinite(sd[k]) else None, fmt=_MARKERS[k % len(_MARKERS)],
                        color=f"C{k % 10}", capsize=3, markersize=6)
        if c == "ratio":
            ax.axhline(1.0, color="grey", linestyle=":", linewidth=0.8)
        unit = _unit(c, time_unit, objective)  # the objective's unit is the family's (utility, cost, time)
        scale = _scale(ax, np.concatenate([m, m + np.nan_to_num(sd), m - np.nan_to_num(sd)]), unit)
        ax.set_xticks(x)
        ax.set_xticklabels([_short(p) for p in pols], rotation=40, ha="right", fontsize=7)
        ax.set_xlim(-0.6, len(pols) - 0.4)
        ax.set_xlabel("policy", fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(_with_scale(unit, scale), fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(axis="y", linewidth=0.3, alpha=0.6)
    return nrow


def plot_results(df, summary, series: dict, out: Path) -> list[Path]:
    """Per (env, window): quality metrics (``_metrics.png``, ratio to the baseline first), decision timing
    (``_timing.png``), the CDF of per-job times (``_cdf.png``) and utilisation over time (``_utilisation.png``).

    Metrics are mean ± std over seeds as markers with error bars, one colour and marker per policy, a log axis
    where values differ by more than 20×, y labels with units (the family's time unit, seconds for timing)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    from edgegym.families import family

    paths = []
    pdir = out / "plots"
    pdir.mkdir(exist_ok=True)
    for (env, window), g in summary.groupby(["env", "window"], sort=False, dropna=False):
        tag = _tag(env, window)
        tu = _time_unit(env)
        objective = family(_family(env)).objective
        cols = g["metric_columns"].iloc[0].split(",")
        base = g["baseline"].iloc[0]
        quality = [c for c in cols if c not in RUN_COLUMNS]
        timing = [c for c in cols if c in RUN_COLUMNS]
        pols = list(g["policy"])
        panels = ([("ratio", f"objective / objective of {base}")] if base else []) + [(c, c) for c in quality]
        ncol = min(4, len(panels))
        nrow = math.ceil(len(panels) / ncol)
        fig = Figure(figsize=(3.6 * ncol, 3.0 * nrow + 0.6), dpi=90)
        _dot_panels(fig, panels, g, pols, tu, ncol, objective)
        n = int(g["n"].max())
        head = f"{tag}: quality metrics, mean ± std over {n} seed(s) (timing: {_safe(tag)}_timing.png)"
        if objective:
            head += "\n" + textwrap.shorten(f"objective = {objective}", 150, placeholder="…")
        fig.suptitle(head, fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / (3.0 * nrow + 0.6)))
        paths.append(_save(fig, pdir / f"{_safe(tag)}_metrics.png", layout=False))
        if timing:
            tpanels = [(c, {"wall_s": "episode wall time", "decisions_per_s": "policy decisions per second"}.get(c, c))
                       for c in timing]
            fig = Figure(figsize=(3.8 * len(tpanels), 3.6), dpi=90)
            _dot_panels(fig, tpanels, g, pols, tu, len(tpanels))
            fig.suptitle(f"{tag}: timing on this machine, mean ± std over {n} seed(s)", fontsize=10)
            fig.tight_layout(rect=(0, 0, 1, 0.9))
            paths.append(_save(fig, pdir / f"{_safe(tag)}_timing.png", layout=False))

        fig = Figure(figsize=(7.5, 4.6), dpi=90)
        ax = fig.add_subplot(1, 1, 1)
        curves = []
        for k, pol in enumerate(pols):
            times = np.concatenate(
                [
                    np.asarray(s["job_times"], float)
                    for s in series.get((env, _key(window), pol), [])
                    if len(s.get("job_times", []))
                ]
                or [np.zeros(0)]
            )
            if times.size:
                curves.append((k, pol, np.sort(times)))
        if curves:
            styles = ["-", "--", "-.", ":"]
            for rank, (k, pol, x) in enumerate(curves):
                y = np.arange(1, x.size + 1) / x.size
                # thicker lines first: a policy whose curve equals another's still shows as an outline
                ax.step(x, y, where="post", label=_short(pol), color=f"C{k % 10}",
                        linestyle=styles[rank % len(styles)], linewidth=max(3.2 - 0.4 * rank, 1.0),
                        marker=_MARKERS[k % len(_MARKERS)], markevery=max(x.size // 6, 1), markersize=4)
            allx = np.concatenate([c[2] for c in curves])
            pos = allx[allx > 0]
            scale = "linear"
            if pos.size and allx.min() >= 0 and pos.max() / pos.min() > 20:
                ax.set_xscale("log")
                scale = "log"
            ax.set_xlabel(f"per-job completion / response time ({tu}, {scale} axis)")
            ax.set_ylabel("fraction of jobs done within x (share)")
            ax.set_ylim(0, 1.02)
            ax.grid(linewidth=0.3, alpha=0.6)
            ax.legend(fontsize=7, loc="lower right")
            ax.set_title(f"{tag}: CDF of per-job times (all seeds pooled)", fontsize=10)
            paths.append(_save(fig, pdir / f"{_safe(tag)}_cdf.png"))

        fig = Figure(figsize=(7.5, 4.6), dpi=90)
        ax = fig.add_subplot(1, 1, 1)
        drawn = 0
        for k, pol in enumerate(pols):
            ss = [s for s in series.get((env, _key(window), pol), []) if len(s.get("util", []))]
            if not ss:
                continue
            t_end = max(s["util_t"][-1] for s in ss)
            grid = np.linspace(0, t_end, 300)
            ys = [np.interp(grid, s["util_t"], s["util"], right=0.0) for s in ss]
            ax.plot(grid, np.mean(ys, axis=0), label=_short(pol), color=f"C{k % 10}",
                    linestyle=["-", "--", "-.", ":"][drawn % 4], linewidth=max(2.4 - 0.3 * drawn, 0.9))
            drawn += 1
        if drawn:
            ax.set_xlabel(f"time ({tu})")
            ax.set_ylabel("edge worker utilisation (share busy)")
            ax.set_ylim(0, 1.05)
            ax.grid(linewidth=0.3, alpha=0.6)
            ax.legend(fontsize=7)
            ax.set_title(f"{tag}: utilisation over time (mean over seeds)", fontsize=10)
            paths.append(_save(fig, pdir / f"{_safe(tag)}_utilisation.png"))
    return paths


def _save(fig, path: Path, layout: bool = True) -> Path:
    """Lay out (unless already done), check (:func:`edgegym.core.figures.save_figure`: axis labels with units,
    a legend where there is more than one series) and write a figure; return its path."""
    from edgegym.core.figures import save_figure

    if layout:
        fig.tight_layout()
    return save_figure(fig, path)


def _short(policy: str) -> str:
    m = re.match(r"^(rollout(?:\([^)]*\))?):(.+)$", policy)
    if m:  # rollout(...):<base>: the base shortened
        return f"{m.group(1)}:{_short(m.group(2))}"
    if ":" in policy:
        algo, path = policy.split(":", 1)
        return f"{algo}:{Path(path).parent.name or Path(path).name}"
    return policy


def _key(window):
    return None if _isnan(window) else int(window)


# ---------------------------------------------------------------------------------------------- run
def run_bench(
    cells: list[Cell],
    out: str | Path,
    *,
    workers: int = 1,
    backend: str = "local",
    baselines=(),
    metrics=None,
    progress: bool = True,
    ray_address: str | None = None,
    plots: bool = True,
    bounds: bool = True,
) -> dict:
    """Run ``cells``, write ``results.csv``, ``summary.csv``, ``summary.md``, ``series.json``, ``bounds.csv`` (with
    ``bounds``: the offline bound of every (env, window, seed) whose family declares one) and the plots under
    ``out``; return ``{"results", "summary", "failed", "paths", "wall_s", "gantt_skipped", "bounds",
    "bounds_failed"}`` (``gantt_skipped``: the ``(cell, reason)`` of every wanted Gantt chart that was not drawn,
    e.g. too many lanes)."""
    import pandas as pd

    from edgegym.envs import env_info

    out = Path(out)
    t0 = time.perf_counter()
    if backend == "local":
        results = _execute_local(cells, workers, progress)
    elif backend == "ray":
        results = _execute_ray(cells, workers, progress, ray_address)
    else:
        raise _err(f"unknown backend {backend!r} (valid: local, ray)")
    bcells = bound_cells(cells) if bounds else []
    bres = []
    if bcells:
        bres = (_execute_local(bcells, workers, progress, fn=run_bound) if backend == "local"
                else _execute_ray(bcells, workers, progress, ray_address, fn=run_bound))
    bounds_failed = [r for r in bres if "error" in r]
    wall = time.perf_counter() - t0
    failed = [r for r in results if "error" in r]
    ok = [r for r in results if "error" not in r]
    order = {(c.env, c.window, c.policy, c.seed): i for i, c in enumerate(cells)}
    ok.sort(key=lambda r: order[(r["cell"]["env"], r["cell"]["window"], r["cell"]["policy"], r["cell"]["seed"])])
    presets = {e: env_info(e).preset for e in {c.env for c in cells}}
    rows = []
    series: dict = {}
    for r in ok:
        rec = dict(r["record"])
        rec["preset"] = presets[rec["env"]]
        rows.append(rec)
        series.setdefault((rec["env"], r["cell"]["window"], rec["policy"]), []).append(r["series"])
    paths: dict = {}
    skipped = [(r["cell"], r["gantt_skipped"]) for r in ok if "gantt_skipped" in r]
    if not rows:
        return {"results": None, "summary": None, "failed": failed, "paths": paths, "wall_s": wall,
                "gantt_skipped": skipped, "bounds": None, "bounds_failed": bounds_failed}
    df = pd.DataFrame(rows)
    front = [c for c in (*KEY_COLUMNS, "objective") if c in df.columns]
    back = [c for c in (*RUN_COLUMNS,) if c in df.columns]
    df = df[front + [c for c in df.columns if c not in front and c not in back] + back]
    df["window"] = pd.to_numeric(df["window"], errors="coerce")
    paths["results"] = out / "results.csv"
    df.to_csv(paths["results"], index=False)
    df = pd.read_csv(paths["results"])  # the table is computed from exactly what the CSV holds
    _check_metrics(df, metrics, paths["results"])
    bdf = None
    if any("bound" in r for r in bres):
        bdf = pd.DataFrame([r["bound"] for r in bres if "bound" in r])
        bdf["window"] = pd.to_numeric(bdf["window"], errors="coerce")
        bdf = bdf.sort_values(["env", "window", "seed"], kind="stable")
        paths["bounds"] = out / "bounds.csv"
        bdf.to_csv(paths["bounds"], index=False)
    summary = summarise(df, baselines, metrics, bdf)
    paths["summary_csv"] = out / "summary.csv"
    summary.to_csv(paths["summary_csv"], index=False)
    paths["summary_md"] = out / "summary.md"
    paths["summary_md"].write_text(format_markdown(summary))
    paths["series"] = out / "series.json"
    paths["series"].write_text(
        json.dumps([{"env": k[0], "window": k[1], "policy": k[2], "episodes": v} for k, v in series.items()])
    )
    if plots:
        episodes = summary[~summary["policy"].astype(str).str.startswith(BOUND_PREFIX)]
        paths["plots"] = plot_results(df, episodes, series, out)
    return {"results": df, "summary": summary, "failed": failed, "paths": paths, "wall_s": wall,
            "gantt_skipped": skipped, "bounds": bdf, "bounds_failed": bounds_failed}


def _check_metrics(df, metrics, csv) -> None:
    """``--metrics``: every name must be a numeric column of results.csv (else a user error listing them)."""
    import pandas as pd

    if not metrics:
        return
    numeric = [c for c in df.columns if c not in KEY_COLUMNS and pd.api.types.is_numeric_dtype(df[c])
               and not pd.api.types.is_bool_dtype(df[c])]
    bad = [m for m in metrics if m not in numeric]
    if bad:
        raise _err(f"--metrics: no numeric column {', '.join(map(repr, bad))} in {csv} (written); "
                   f"valid: {', '.join(numeric)}")


def _check_cell_configs(cells: list[Cell]) -> None:
    """Build each distinct (env, config) of the grid once, so that a bad ``--env-config`` / ``--trace`` /
    ``--windows`` value is one user error before any worker starts, not one failure per cell."""
    import warnings

    import gymnasium as gym

    seen = set()
    for c in cells:
        key = (c.env, json.dumps(c.env_config, sort_keys=True, default=str))
        if key in seen:
            continue
        seen.add(key)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gym.make(c.env, config=c.env_config or None).close()
        except ValueError as e:
            raise _err(f"{c.env}: {e}") from None


def _check_grid_flags(cells: list[Cell], baselines) -> None:
    """Seeds >= 0, and every ``--baseline`` a policy of the grid that runs on each env (else a user error)."""
    bad = sorted({c.seed for c in cells if c.seed < 0})
    if bad:
        raise _err(f"seeds must be >= 0 (NumPy seeds are non-negative), got {bad[0]}")
    _check_cell_configs(cells)
    if not baselines:
        return
    ran: dict[str, set] = {}
    for c in cells:
        ran.setdefault(c.env, set()).add(c.policy)
    for env, pols in ran.items():
        if not any(b in pols for b in baselines):
            raise _err(f"--baseline {' '.join(baselines)}: none of these runs on {env} (its policies in this grid: "
                       f"{', '.join(sorted(pols))}); add the baseline to --policies")


def _parse_seeds(items: list[str]) -> list[int]:
    from .options import parse_seeds

    return parse_seeds(items)


def _cmd_bench(args) -> int:
    import os

    from .rl.train import ensure_writable_dir, parse_env_config

    if args.workers is not None and args.workers < 1:
        raise _err(f"--workers must be >= 1, got {args.workers}")
    workers = args.workers or max(1, os.cpu_count() or 1)
    from .options import resolve_policy, seeds_from

    seeds = seeds_from(args)
    args.policies = [resolve_policy(p) for p in args.policies]
    if not args.envs:
        from .runner import default_env_id

        args.envs = [default_env_id()]
    cells = build_grid(args.envs, args.policies, seeds, args.windows, args.trace, parse_env_config(args.env_config))
    _check_grid_flags(cells, args.baseline or ())
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise _err("--backend ray needs Ray: pip install 'edgegym[ray]'") from None
    out = ensure_writable_dir(args.out)
    if args.gantt:
        gdir = ensure_writable_dir(out / "gantt", "--gantt")
        seen = set()
        for c in cells:
            k = (c.env, c.window, c.policy)
            if k not in seen:
                seen.add(k)
                c.gantt = str(gdir / f"{_safe(_tag(c.env, c.window))}__{_safe(_short(c.policy))}.png")
    print(f"edgegym bench: {len(cells)} episodes on {workers} worker(s), backend {args.backend}", file=sys.stderr)
    res = run_bench(
        cells,
        out,
        workers=workers,
        backend=args.backend,
        baselines=args.baseline or (),
        metrics=args.metrics,
        progress=not args.no_progress,
        ray_address=args.ray_address,
        plots=not args.no_plots,
        bounds=not args.no_bound,
    )
    for c, why in res.get("gantt_skipped", ()):
        print(f"edgegym bench: no Gantt chart for {c['env']} | {c['policy']}: {why}", file=sys.stderr)
    for f in res.get("bounds_failed", ()):
        c = f["cell"]
        print(f"edgegym bench: no bound for {c['env']} | seed {c['seed']}: {f['error']}", file=sys.stderr)
    for f in res["failed"]:
        c = f["cell"]
        print(f"edgegym bench: failed {c['env']} | {c['policy']} | seed {c['seed']}: {f['error']}", file=sys.stderr)
        if f.get("traceback"):  # a bug, not a user error: show where, as every subcommand does
            from .errors import BUG_HINT

            print(f["traceback"].rstrip() + "\n" + BUG_HINT, file=sys.stderr)
    if res["summary"] is not None:
        print(format_markdown(res["summary"]))
        print(f"wrote {out}/results.csv, summary.md, summary.csv, plots/ ({res['wall_s']:.1f} s)", file=sys.stderr)
    if res["failed"]:
        print(f"edgegym: error: {len(res['failed'])} of {len(cells)} episodes failed", file=sys.stderr)
        return 1
    return 0


def add_bench_parser(sub) -> None:
    """Add the ``bench`` subcommand."""
    from .options import add_env_config_flag, add_seed_flags

    p = sub.add_parser("bench", help="policies x envs x seeds in parallel -> CSV, markdown table, plots",
                       description="Run policies x envs x seeds (x trace windows) in parallel; write results.csv, "
                       "summary.md / summary.csv (mean ± std over seeds, ratio to a baseline) and plots.")
    p.add_argument("--envs", "--env", nargs="+", help="env ids (see `edgegym list`; default: the first family's "
                   "default id)")
    p.add_argument(
        "--policies",
        "--policy",
        nargs="+",
        default=["all"],
        help="policy names, `all` (every policy supporting each env; default), a saved agent DIR or "
        "DIR/model.zip, ppo:PATH, maskable-ppo:PATH",
    )
    add_seed_flags(p, seed=0, episodes=3, what="seed")
    p.add_argument("--trace", help="workload source for every cell (e.g. philly)")
    p.add_argument("--windows", type=int, nargs="+", help="trace window start indices (a grid axis)")
    add_env_config_flag(p)
    p.add_argument("--baseline", nargs="+", help="ratio column: objective / objective(first of these run on the env)")
    p.add_argument("--metrics", nargs="+", help="table columns (default: every non-constant episode metric)")
    p.add_argument("--out", default="bench_out", help="output directory")
    p.add_argument("--workers", type=int, help="parallel processes (default: all cores)")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local processes (default) or Ray tasks (pip install 'edgegym[ray]')")
    p.add_argument("--ray-address", help="existing Ray cluster (default: start a local one)")
    p.add_argument("--gantt", action="store_true", help="Gantt PNG per (env, policy), first seed, small presets")
    p.add_argument("--no-plots", action="store_true", help="write the tables only, no PNG plots")
    p.add_argument("--no-bound", action="store_true", help="do not compute the families' offline bounds (the "
                   "objective / bound column and the bound row)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_cmd_bench)


def _cmd_render(args) -> int:
    from .options import resolve_policy
    from .rl.train import ensure_writable_dir, parse_env_config
    from .runner import check_env_policy, fill_env_policy_defaults, run_episode

    if args.policy is not None:
        args.policy = resolve_policy(args.policy)
    fill_env_policy_defaults(args)
    check_env_policy(args.env, args.policy)
    png = Path(args.out)
    if png.suffix.lower() != ".png":
        raise _err(f"--out must be a .png path (the chart is a PNG), got {args.out!r}; e.g. {str(png) + '.png'!r}")
    ensure_writable_dir(png.parent, "--out")
    state = {}

    def on_end(env, rec):
        why = _save_gantt(env, png, rec)
        if why is not None:
            state["skip"] = f"env {args.env!r}: {why}"

    rec = run_episode(args.env, args.policy, args.seed, parse_env_config(args.env_config), on_end=on_end,
                      render_mode="rgb_array")
    if "skip" in state:
        raise _err(state["skip"])
    print(f"wrote {png} (objective {rec['objective']:.2f})")
    return 0


def add_render_parser(sub) -> None:
    """Add the ``render`` subcommand: the Gantt chart of one episode as a PNG."""
    from .options import add_env_config_flag

    p = sub.add_parser("render", help="run one episode and write its Gantt chart (PNG)",
                       description="Run one episode of a policy on an env and write the Gantt chart of what it did "
                       "as a PNG: one lane per worker (or server), one colour per job, the end of the episode "
                       "marked. Meant for small presets (the chart refuses more lanes than it can draw legibly).")
    p.add_argument("--env", help="env id (default: the first family's default id; small presets only)")
    p.add_argument("--policy", help="policy name, a saved agent DIR or DIR/model.zip, ppo:PATH or "
                   "maskable-ppo:PATH (default: the family's reference)")
    p.add_argument("--seed", type=int, default=0, help="seed of the episode (default 0)")
    add_env_config_flag(p)
    p.add_argument("--out", required=True, help="PNG path")
    p.set_defaults(func=_cmd_render)
