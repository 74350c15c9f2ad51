"""Leaderboard: every shipped policy on each default env id, with its ratio to the family's offline bound.

For each default id (``EdgeCloudML-v0``, ``EdgeUtility-v0``, ``HeteroML-v0``, ``WirelessUDL-v0``) and its ``-v1``
id (where the shipped agents run, beside the same policies), every registered policy of the family (reference
policies, baselines, trivial ones), the rollout policy ``rollout:<best>`` on the best of them (when the rollout
policies are registered), and every shipped agent (``docs/results/agents/models/*`` trained on that id) run on
seeds 100-104 through the benchmark's episode runner (the grid runner of ``edgegym bench``: local worker processes,
or Ray tasks with ``--backend ray``). The page ``docs/results/leaderboard.md`` gives per id and policy:

* the objective, mean ± sample std over the seeds (lower or higher is better, per family);
* the ratio to the family's offline bound on the same seed (mean ± std): the bound the family declares
  (``Family.bound``, :mod:`edgegym.core.bounds`: a lower bound on a cost, an upper bound on a utility), named under
  each table with the schedules it bounds; for a family that declares none yet, this script's own bound (named in
  ``BOUND_TEXT``). "n/a (...)" says why a bound could not be computed;
* against the best shipped non-learned, non-rollout policy of the id (the *best heuristic*: a reference policy, a
  variant, a baseline or a trivial policy): the entry's improvement over it in % of its objective (positive =
  better) and the **gap closed**, (best heuristic − entry) / (best heuristic − bound) on the means over the seeds:
  the share of the room the bound leaves that the entry takes (1 = it reaches the bound, negative = worse than
  the best heuristic);
* decisions/s: arrival steps (decisions) per CPU second of the episode (env and policy together, from the second
  decision to the end: the first one carries one-off costs such as loading a model), one episode per process.

Runs are appended to ``<data>/results.jsonl`` as they finish, and a later run with the same ``--data`` skips the
runs already there (``--fresh`` starts over); ``--from-csv FILE`` renders the page from a ``results.csv`` or
``results.jsonl`` without running anything. ``--quick`` runs the tiny presets on seeds 100-101 (a smoke test,
written to ``runs/leaderboard-quick.md`` unless ``--out`` says otherwise).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

def benchmark_ids() -> list[str]:
    """The benchmark ids: each family's default id, then its shipped hard presets (``<preset>-hard``, v0), in family
    order; the ids the learned agents are judged on (docs/results/headroom.md says how the hard ones were chosen)."""
    from edgegym.families import families

    out = []
    for fam in families().values():
        out.append(f"{fam.name}-v0")
        out += [f"{fam.name}-{p}-v0" for p in fam.presets() if p.endswith("-hard")]
    return out

QUICK_IDS = ("EdgeCloudML-tiny-v0", "EdgeUtility-tiny-v0", "HeteroML-tiny-v0", "WirelessUDL-tiny-v0")
SEEDS = tuple(range(100, 105))
QUICK_SEEDS = (100, 101)
AGENTS = ROOT / "docs" / "results" / "agents" / "models"
#: families whose objective is to be maximised (the others minimise theirs)
HIGHER_IS_BETTER = {"EdgeUtility": True, "EdgeCloudML": False, "HeteroML": False, "WirelessUDL": False}
#: the trivial policies (everything else registered is a reference policy or a baseline, by its module)
TRIVIAL = {"random", "all-cloud", "all-edge", "single-worker", "one-site"}
#: the bound of each family that declares none (``Family.bound``), in words: which bound, which side of the optimum
BOUND_TEXT = {
    "EdgeUtility": "upper bound Σ_i max g_i (every job at its best utility, capacity ignored); ratio ≤ 1, "
                   "1 = the bound",
    "HeteroML": "lower bound on Σ w_j c_j: the larger of the simple bound Σ w_j (a_j + d_j^min) and the "
                "time-indexed LP relaxation where it is small enough; ratio ≥ 1, 1 = the bound",
}


# ---------------------------------------------------------------------------------------------- the runs
def run_task(task: dict) -> dict:
    """One run (an episode or a bound), in a worker process or a Ray task; never raises."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    import edgegym  # noqa: F401

    try:
        return _bound(task) if task["kind"] == "bound" else _episode(task)
    except Exception as e:  # noqa: BLE001  (reported in the page, not fatal to the whole run)
        return {**task, "error": _clean(f"{type(e).__name__}: {e}")}


def _clean(text: str) -> str:
    """One line, no absolute path of this checkout."""
    return " ".join(str(text).replace(str(ROOT) + os.sep, "").split())[:300]


#: (family, version, policy) warmed up in this process (see :func:`_warm_up`)
_WARM: set = set()


def _warm_up(env_id: str, policy: str, env_config: dict | None) -> None:
    """One episode of ``policy`` on the family's tiny preset of the same version, once per process, so that a
    measured episode does not carry the first call of compiled kernels (a saved agent, whose spaces fit only its own
    preset, is not warmed: it has no compiled kernels of its own, and the env's are warmed by the other policies)."""
    from edgegym.agents.rl.learned import is_learned
    from edgegym.agents.runner import env_family, run_episode

    import edgegym

    fam, version = env_family(env_id), env_id.rsplit("-v", 1)[-1]
    key = (fam, version, "random" if is_learned(policy) else policy)
    if key in _WARM:
        return
    _WARM.add(key)
    tiny = f"{fam}-tiny-v{version}"
    if tiny not in edgegym.registered_ids():
        return
    try:
        run_episode(tiny, key[2], 0, env_config if not is_learned(policy) else None)
    except Exception:  # noqa: BLE001  (a warm-up that fails leaves the measured run to report the error)
        pass


def _episode(task: dict) -> dict:
    from edgegym.agents.runner import run_episode

    _warm_up(task["env"], task["policy"], task.get("env_config"))
    clock: dict = {}

    def on_step(n: int) -> None:
        if n == 1:
            clock["first"] = time.process_time()

    def on_end(env, rec) -> None:
        clock["end"] = time.process_time()

    t0 = time.process_time()
    rec = run_episode(task["env"], task["policy"], int(task["seed"]), task.get("env_config") or None,
                      on_step=on_step, on_end=on_end)
    steps = int(rec["steps"])
    cpu = clock["end"] - clock.get("first", t0)
    out = {**task, "objective": float(rec["objective"]), "steps": steps,
           "cpu_s": clock["end"] - t0, "decisions_per_cpu_s": (steps - 1) / cpu if steps > 1 and cpu > 0 else math.nan,
           "decisions_per_s_policy": float(rec.get("decisions_per_s", math.nan)), "wall_s": float(rec["wall_s"])}
    for k in ("upper_bound", "lower_bound"):  # EdgeUtility / HeteroML report their bound with every episode
        if k in rec:
            out[k] = float(rec[k])
    return out


def declared_bound(fam: str):
    """The bound function the family ``fam`` declares (``Family.bound``, :func:`edgegym.core.bounds.family_bound`);
    ``None`` when it declares none (the page then uses this script's own code for it)."""
    from edgegym.core.bounds import family_bound
    from edgegym.families import family

    return family_bound(family(fam))


def bound_record(b) -> dict:
    """The fields of a results record that carry a :class:`~edgegym.core.bounds.Bound`."""
    return {"bound": float(b.value), "bound_kind": b.name, "bound_sense": b.sense, "bound_text": b.bounds,
            "bound_parts": {k: float(v) for k, v in b.parts.items()}, "bound_seconds": float(b.seconds)}


def stale_bound(rec: dict) -> bool:
    """True for a bound record made by this script's own code for a family that now declares its bound (the run is
    done again, with the declared one)."""
    return rec.get("kind") == "bound" and "bound_sense" not in rec and declared_bound(_family(rec["env"])) is not None


def _bound(task: dict) -> dict:
    import gymnasium as gym

    env = gym.make(task["env"])
    env.reset(seed=int(task["seed"]))
    u = env.unwrapped
    fam = u.preset.family
    limit = float(task.get("time_limit_s", 120.0))
    out = {**task, "family": fam}
    t = time.perf_counter()
    fn = declared_bound(fam)
    if fn is not None:
        out.update(bound_record(fn(u, time_limit_s=limit)))
    elif fam == "EdgeUtility":  # families without a declared bound yet: this script's own code
        from edgegym.families.edge_utility.simulator import upper_bound

        out.update(bound=float(upper_bound(u.jobs, u.preset.servers.speed).sum()), bound_kind="upper bound")
    elif fam == "HeteroML":
        simple = float(u.lower_bound())
        out.update(bound=simple, bound_kind="simple")
        ub = task.get("upper")
        if ub is not None and math.isfinite(ub):
            from edgegym.families.hetero_ml.bounds import lp_lower_bound

            try:
                lp = lp_lower_bound(u.cluster, u.jobs, upper_bound=float(ub))
                if lp > simple:
                    out.update(bound=lp, bound_kind="LP")
                out["lp"] = lp
            except (ValueError, RuntimeError, MemoryError):
                out["lp_na"] = "too large"
    else:  # a family that declares no bound
        out["na"] = "no offline bound"
    env.close()
    out["bound_s"] = time.perf_counter() - t
    return out


# --------------------------------------------------------------------------------------------- the grid
def _family(env_id: str) -> str:
    from edgegym.agents.runner import env_family

    return env_family(env_id)


def policy_kind(name: str, family: str) -> str:
    """``reference``, ``variant``, ``baseline``, ``trivial``, ``rollout`` or ``agent``."""
    from edgegym.agents.reference.rollout import is_rollout
    from edgegym.agents.rl.learned import is_learned

    if is_rollout(name):
        return "rollout"
    if is_learned(name):
        return "agent"
    if name in TRIVIAL:
        return "trivial"
    from edgegym.agents.registry import policy_spec

    spec = policy_spec(name, family)
    if spec.variant:
        return "variant"
    mod = getattr(spec.factory, "__module__", "") or ""
    return "reference" if ".reference." in mod or mod.endswith(".reference") else "baseline"


def registered(env_id: str) -> list[str]:
    """The registered policies of ``env_id``'s family (rollout policies are added later, on the best one)."""
    from edgegym.agents.registry import policy_names

    return [n for n in policy_names(_family(env_id)) if not n.startswith("rollout")]


def agents_for(env_id: str, agent_dirs) -> list[str]:
    """The saved agents (folders with ``model.zip`` and its sidecar) trained on ``env_id``, as policy names."""
    out = []
    for d in agent_dirs:
        d = Path(d)
        side = d / "model.edgegym.json"
        if not (d / "model.zip").is_file() or not side.is_file():
            continue
        meta = json.loads(side.read_text())
        if meta.get("env_id") != env_id:
            continue
        path = d / "model.zip"
        try:
            path = path.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            pass
        out.append(f"{meta.get('algo', 'maskable-ppo')}:{path}")
    return out


def _agent_config(env_id: str, name: str) -> dict:
    """An agent whose sidecar changes the workload (e.g. 400-job training episodes) runs the preset's own workload
    here, so that every policy of a table plays the same instances."""
    import gymnasium as gym
    from edgegym.agents.rl.learned import learned_env_config

    wl = learned_env_config(name).get("workload") or {}
    if not wl:
        return {}
    env = gym.make(env_id)
    own = getattr(env.unwrapped.preset, "workload", None)
    env.close()
    fixed = {k: getattr(own, k) for k in wl if own is not None and hasattr(own, k)}
    fixed = {k: (list(v) if isinstance(v, tuple) else v) for k, v in fixed.items()}
    return {"workload": fixed} if fixed else {}


def rollout_name(template: str, base: str, env_id: str, seed: int = 100) -> str | None:
    """``template`` with ``{base}`` filled in, when that policy can be built on ``env_id``; ``None`` otherwise (an
    unknown name, or a base the rollout policy cannot improve, e.g. one deciding inside the simulator)."""
    from edgegym.agents.runner import make_env

    name = template.format(base=base)
    try:
        env, _ = make_env(env_id, name, seed)
    except Exception:  # noqa: BLE001  (any refusal: this base has no rollout row)
        return None
    env.close()
    return name


def _key(r: dict) -> tuple:
    return (r["kind"], r["env"], r.get("policy", ""), int(r["seed"]))


# -------------------------------------------------------------------------------------------- the table
def _mean_std(values):
    import numpy as np

    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if not v.size:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def _fmt(m, s) -> str:
    from edgegym.agents.options import fmt_pm

    return fmt_pm(m, s) if math.isfinite(m) else "n/a"


def _fmt_rate(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def label(name: str) -> str:
    """The row label: the policy name; a saved agent by its folder."""
    from edgegym.agents.rl.learned import is_learned

    if is_learned(name):
        return f"agent `{Path(name.split(':', 1)[1]).parent.name}`"
    return f"`{name}`"


#: the kinds of row that can be the best heuristic (shipped, non-learned, non-rollout policies)
HEURISTIC_KINDS = ("reference", "variant", "baseline", "trivial")


def best_heuristic(rows: list[dict], higher_is_better: bool) -> dict | None:
    """The best row of a shipped non-learned, non-rollout policy (:data:`HEURISTIC_KINDS`) among those run on every
    seed the table has; ``None`` if there is none."""
    full = max((r["n"] for r in rows), default=0)
    cands = [r for r in rows if r["kind"] in HEURISTIC_KINDS and r["n"] == full
             and math.isfinite(r["objective_mean"])]
    if not cands:
        return None
    pick = max if higher_is_better else min
    return pick(cands, key=lambda r: r["objective_mean"])


def improvement_pct(entry: float, best: float, higher_is_better: bool) -> float:
    """How much better ``entry`` is than ``best``, in % of ``best`` (positive = better, either direction)."""
    if not (math.isfinite(entry) and math.isfinite(best)) or best == 0:
        return math.nan
    return (entry - best if higher_is_better else best - entry) / abs(best) * 100.0


def gap_closed(entry: float, best: float, bound: float) -> float:
    """(best − entry) / (best − bound): the share of the room between the best heuristic and the bound that
    ``entry`` takes (0 = the best heuristic, 1 = the bound, negative = worse than the best heuristic); the same
    formula serves a cost (bound below) and a utility (bound above). ``nan`` without a bound or without room."""
    if not all(math.isfinite(x) for x in (entry, best, bound)) or best == bound:
        return math.nan
    return (best - entry) / (best - bound)


def _parts(b: dict) -> dict:
    """A bound record's parts (a dict, or its JSON text when read back from results.csv)."""
    p = b.get("bound_parts")
    if isinstance(p, str):
        try:
            p = json.loads(p)
        except ValueError:
            return {}
    return p if isinstance(p, dict) else {}


def build_rows(results: list[dict], env_id: str) -> tuple[list[dict], dict]:
    """The table rows of ``env_id`` (sorted best first; each with its ratio to the bound, its improvement over the
    best heuristic and the gap it closes) and the bound summary."""
    fam = _family(env_id)
    eps = [r for r in results if r["kind"] == "episode" and r["env"] == env_id and "error" not in r]
    bounds = {int(r["seed"]): r for r in results if r["kind"] == "bound" and r["env"] == env_id and "error" not in r}
    senses = {b["bound_sense"] for b in bounds.values() if isinstance(b.get("bound_sense"), str)}
    hib = senses == {"upper"} if senses else HIGHER_IS_BETTER.get(fam, False)
    per_seed_bound = {s: b.get("bound") for s, b in bounds.items()}
    for r in eps:  # a bound reported by the env itself (EdgeUtility's upper bound, HeteroML's simple bound)
        s = int(r["seed"])
        own = r.get("upper_bound") if fam == "EdgeUtility" else r.get("lower_bound") if fam == "HeteroML" else None
        if own is not None and per_seed_bound.get(s) is None:
            per_seed_bound[s] = own
    rows = []
    for pol in dict.fromkeys(r["policy"] for r in eps):
        g = [r for r in eps if r["policy"] == pol]
        m, s = _mean_std([r["objective"] for r in g])
        ratios = [r["objective"] / per_seed_bound[int(r["seed"])] for r in g
                  if per_seed_bound.get(int(r["seed"])) not in (None, 0)]
        rm, rs = _mean_std(ratios) if len(ratios) == len(g) else (math.nan, math.nan)
        dm, _ = _mean_std([r.get("decisions_per_cpu_s", math.nan) for r in g])
        rows.append({"policy": pol, "label": label(pol), "kind": g[0].get("policy_kind") or policy_kind(pol, fam),
                     "n": len(g), "objective_mean": m, "objective_std": s, "ratio_mean": rm, "ratio_std": rs,
                     "decisions_per_cpu_s": dm,
                     "bound_mean": _mean_std([per_seed_bound.get(int(r["seed"])) for r in g])[0]
                     if len(ratios) == len(g) else math.nan})
    rows.sort(key=lambda r: (-r["objective_mean"] if hib else r["objective_mean"]))
    best = best_heuristic(rows, hib)
    for r in rows:  # against the best heuristic, on the means over the seeds (the bound's over the row's seeds)
        b = best["objective_mean"] if best else math.nan
        r["vs_best_pct"] = improvement_pct(r["objective_mean"], b, hib)
        r["gap_closed"] = gap_closed(r["objective_mean"], b, r["bound_mean"])
    add_protocol_figures(rows, eps, best, hib)
    bm, bs = _mean_std(list(per_seed_bound.values()))
    na = sorted({b["na"] for b in bounds.values() if b.get("na")})
    kinds = sorted({b.get("bound_kind") for b in bounds.values() if b.get("bound_kind")})
    texts = sorted({b["bound_text"] for b in bounds.values() if isinstance(b.get("bound_text"), str)})
    lp_na = sorted({b["lp_na"] for b in bounds.values() if b.get("lp_na")})
    parts: dict[str, list[float]] = {}
    for b in bounds.values():
        for k, v in _parts(b).items():
            parts.setdefault(k, []).append(float(v) if v is not None else math.nan)
    info = {"family": fam, "higher_is_better": hib, "na": na, "kinds": kinds, "lp_na": lp_na, "texts": texts,
            "has_bound": any(v is not None for v in per_seed_bound.values()), "bound_mean": bm, "bound_std": bs,
            "declared": bool(senses), "parts": parts, "best": best["policy"] if best else None,
            "best_mean": best["objective_mean"] if best else math.nan}
    return rows, info


def add_protocol_figures(rows: list[dict], eps: list[dict], best: dict | None, hib: bool) -> None:
    """Per row: the IQM of its objectives with the 95 % stratified-bootstrap CI (one training seed: the seeds are
    resampled; bootstrap seed 0) and the probability of improvement over the best heuristic on the seeds both ran
    (:mod:`edgegym.agents.stats`)."""
    from edgegym.agents.stats import iqm as _iqm
    from edgegym.agents.stats import iqm_ci, prob_improvement

    per = {}
    for r in eps:
        per.setdefault(r["policy"], {})[int(r["seed"])] = float(r["objective"])
    ref = per.get(best["policy"], {}) if best else {}
    for row in rows:
        mine = per.get(row["policy"], {})
        vals = [mine[k] for k in sorted(mine) if math.isfinite(mine[k])]
        row["iqm"], row["iqm_ci"] = (_iqm(vals), iqm_ci(vals, seed=0)) if vals else (math.nan, (math.nan, math.nan))
        common = sorted(set(mine) & set(ref))
        row["p_improvement"] = (prob_improvement([mine[k] for k in common], [ref[k] for k in common],
                                                 lower_is_better=not hib) if common else math.nan)


def _fmt_iqm(r: dict) -> str:
    from edgegym.agents.options import fmt_num

    if not math.isfinite(r.get("iqm", math.nan)):
        return "n/a"
    lo, hi = r["iqm_ci"]
    return f"{fmt_num(r['iqm'])} [{fmt_num(lo)}, {fmt_num(hi)}]"


def _fmt_pct(x: float) -> str:
    return f"{x:+.1f} %" if math.isfinite(x) else "n/a"


def _fmt_share(x: float) -> str:
    return f"{x:.2f}" if math.isfinite(x) else "n/a"


def bound_line(info: dict) -> str:
    """The line under a table naming its bound: what it is, its direction, which schedules it bounds, its parts."""
    side = "ratio ≤ 1, 1 = the bound" if info["higher_is_better"] else "ratio ≥ 1, 1 = the bound"
    if info["declared"]:
        what = "upper" if info["higher_is_better"] else "lower"
        text = f"Bound: {', '.join(info['kinds'])} ({what} bound; {side}); it bounds {'; '.join(info['texts'])}."
        shown = []
        for k, vals in info["parts"].items():
            ok = [v for v in vals if math.isfinite(v)]
            if not ok:
                shown.append(f"{k} not computed")
                continue
            shown.append(f"{k} {_fmt(*_mean_std(ok))}" + (f" ({len(ok)} of {len(vals)} seeds)" if len(ok) < len(vals)
                                                          else ""))
        if shown:
            text += f" Parts (mean over the seeds): {'; '.join(shown)}."
        text += " Definition and proof sketch: the family's page, section \"Offline bound\"."
    else:
        text = f"Bound: {BOUND_TEXT.get(info['family'], 'none known')}."
        if info["kinds"]:
            text += f" Computed here: {', '.join(info['kinds'])}."
    if info["lp_na"]:
        text += f" LP: n/a ({', '.join(info['lp_na'])})."
    return text


def render(results: list[dict], ids, seeds, command: str, workers: int, backend: str, wall_s: float | None,
           kept: int = 0) -> str:
    """The markdown page (``kept``: runs taken from the data folder, made by an earlier invocation)."""
    from edgegym.families import family

    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cores = os.cpu_count()
    cpu = _cpu_model()
    lines = [
        "# Leaderboard",
        "",
        f"Generated by `{command}` on {now}; machine: {cpu}, {cores} CPU core(s), {platform.system()} "
        f"{platform.machine()}, Python {platform.python_version()}; {workers} worker process(es), backend "
        f"{backend}" + (f"; {wall_s / 60:.1f} min wall" if wall_s and kept < len(results) else "")
        + (f" for the {len(results) - kept} runs not already in the data folder ({kept} kept from earlier runs "
           "in that folder)" if wall_s and 0 < kept < len(results) else "")
        + (f"; all {kept} runs kept from earlier invocations in the data folder" if kept and kept >= len(results)
           else "") + ".",
        "",
        f"Every shipped policy on each benchmark id (each family's default and its hard presets), seeds {_seed_text(seeds)} (one episode per seed): "
        "**objective** mean ± sample std over the seeds; **ratio** = objective / the family's offline bound on the "
        "same seed (mean ± std; the bound, its direction and the schedules it bounds are named under each table, "
        "and its value is the row *bound*; n/a says why it could not be computed); **vs best heuristic** = the "
        "improvement over the best shipped non-learned, non-rollout policy of the id (named under the table), in % "
        "of its mean objective (positive = better); **gap closed** = (best heuristic − entry) / (best heuristic − "
        "bound) on the means over the seeds, the share of the room the bound leaves that an entry takes (0 = the "
        "best heuristic, 1 = the bound); **decisions/s** = arrival steps (decisions) per CPU second of the episode, env and policy "
        "together, from the second decision on, one episode per process; **IQM [95 % CI]** = the interquartile mean "
        "of the objectives with its 95 % stratified-bootstrap interval and **P(improvement)** = the probability that "
        "the entry beats the best heuristic on a seed (ties count one half; 0.5 = no difference), as Agarwal et "
        "al., \"Deep Reinforcement Learning at the Edge of the Statistical Precipice\" (NeurIPS 2021) define them "
        "(`edgegym eval` reports the same over several training seeds and the protocol's test seeds). Rows are sorted best first; the best row "
        "is marked ★. Kinds: *reference* (a paper's algorithm), *variant* (a change to a paper's algorithm, shipped "
        "under its own name), *baseline*, *trivial*, *rollout* (the rollout policy on the best non-learned policy, "
        "or on the base the command names), *agent* (a shipped learned agent, argmax). The `-v1` ids carry the "
        "shipped `-v1` agents beside the same policies.",
        "",
    ]
    for env_id in ids:
        rows, info = build_rows(results, env_id)
        if not rows:
            continue
        fam = info["family"]
        obj = family(fam).objective
        better = "higher is better" if info["higher_is_better"] else "lower is better"
        lines += [f"## {env_id}", "", f"Objective: {obj} — **{better}**.", ""]
        head = ["rank", "policy", "kind", "objective", "objective / bound", "vs best heuristic", "gap closed",
                "decisions/s", "IQM [95 % CI]", "P(improvement)"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        na_text = f"n/a ({'; '.join(info['na'])})" if info["na"] else "n/a"
        for k, r in enumerate(rows, start=1):
            name = f"**{r['label']}** ★" if k == 1 else r["label"]
            ratio = _fmt(r["ratio_mean"], r["ratio_std"]) if math.isfinite(r["ratio_mean"]) else na_text
            obj = _fmt(r["objective_mean"], r["objective_std"])
            if r["n"] != len(seeds):
                obj += f" ({r['n']} of {len(seeds)} seeds)"
            lines.append(f"| {k} | {name} | {r['kind']} | {obj} | {ratio} | {_fmt_pct(r['vs_best_pct'])} | "
                         f"{_fmt_share(r['gap_closed'])} | {_fmt_rate(r['decisions_per_cpu_s'])} | {_fmt_iqm(r)} | "
                         f"{_fmt_share(r['p_improvement'])} |")
        if info["has_bound"]:  # the bound itself, as a row (not ranked)
            name = " / ".join(info["kinds"]) or "bound"
            vs = improvement_pct(info["bound_mean"], info["best_mean"], info["higher_is_better"])
            lines.append(f"| – | bound: {name} | bound | {_fmt(info['bound_mean'], info['bound_std'])} | 1 | "
                         f"{_fmt_pct(vs)} | 1 | – | – | – |")
        lines += ["", bound_line(info), ""]
        if info["best"]:
            lines += [f"Best heuristic (the best shipped non-learned, non-rollout policy): `{info['best']}`.", ""]
        lines += identical_notes(results, env_id, rows)
        lines += rollout_notes(results, env_id, rows, info["higher_is_better"])
        lines += agent_notes(rows)
        failed = [r for r in results if r["env"] == env_id and "error" in r]
        if failed:
            lines += ["Runs that failed:", ""]
            for r in failed:
                what = f"`{r.get('policy')}` seed {r['seed']}" if r["kind"] == "episode" else f"bound, seed {r['seed']}"
                lines.append(f"* {what}: {r['error']}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


#: what a shipped agent folder is, for agents the page would otherwise list without a word (folder -> sentence)
AGENT_NOTES = {
    "eu_v0_n400": "a MaskablePPO agent trained for 80,000 steps on 400-job `EdgeUtility-v0` episodes (the raw `-v0` "
                  "observation and reward): the early negative result of the agents page, shipped to reproduce it, "
                  "not a candidate; it runs here on the preset's own workload and is far below `random`.",
    "ecml_v0": "a MaskablePPO agent trained on `EdgeCloudML-v0` (the raw `-v0` observation and reward): the early "
               "result of the agents page, shipped to reproduce it.",
}


def agent_notes(rows: list[dict]) -> list[str]:
    """One line per agent row whose folder :data:`AGENT_NOTES` explains."""
    from edgegym.agents.rl.learned import is_learned

    out = []
    for r in rows:
        if is_learned(r["policy"]):
            folder = Path(r["policy"].split(":", 1)[1]).parent.name
            if folder in AGENT_NOTES:
                out.append(f"Agent `{folder}`: {AGENT_NOTES[folder]}")
    return out + [""] if out else []


def identical_notes(results: list[dict], env_id: str, rows: list[dict]) -> list[str]:
    """A line naming the policies whose objective is the same on every seed (e.g. a trivial policy that falls back
    to another one on a preset without the resource it names), so that a tie is read as what it is."""
    eps = [r for r in results if r["kind"] == "episode" and r["env"] == env_id and "error" not in r]
    per: dict[str, tuple] = {}
    for row in rows:
        got = sorted((int(r["seed"]), r["objective"]) for r in eps if r["policy"] == row["policy"])
        if got:
            per[row["label"]] = tuple(got)
    groups: dict[tuple, list[str]] = {}
    for label, key in per.items():
        groups.setdefault(key, []).append(label)
    out = [f"Identical objectives on every seed: {', '.join(g)} (each policy's description: `edgegym list`)."
           for g in groups.values() if len(g) > 1]
    return out + [""] if out else []


def rollout_notes(results: list[dict], env_id: str, rows: list[dict], hib: bool) -> list[str]:
    """One line per rollout row: its parameters and how it compares with its base policy, seed by seed."""
    out = []
    eps = [r for r in results if r["kind"] == "episode" and r["env"] == env_id and "error" not in r]
    for row in rows:
        if row["kind"] != "rollout":
            continue
        try:
            from edgegym.agents.reference.rollout import parse_rollout

            params, base = parse_rollout(row["policy"])
        except (ImportError, ValueError):
            continue
        mine = {int(r["seed"]): r["objective"] for r in eps if r["policy"] == row["policy"]}
        theirs = {int(r["seed"]): r["objective"] for r in eps if r["policy"] == base}
        common = sorted(set(mine) & set(theirs))
        if not common:
            continue
        # improvement over the base, per seed, in % of the base's objective (positive = the rollout is better)
        gain = [(mine[s] - theirs[s]) / abs(theirs[s]) * (100 if hib else -100) for s in common if theirs[s]]
        m, sd = _mean_std(gain)
        base_row = next((r for r in rows if r["policy"] == base), None)
        speed = ""
        if base_row and math.isfinite(base_row["decisions_per_cpu_s"]) and row["decisions_per_cpu_s"] > 0:
            speed = f"; the base decides {base_row['decisions_per_cpu_s'] / row['decisions_per_cpu_s']:,.0f}× faster"
        better = sum(g > 0 for g in gain)
        out.append(f"Rollout `{row['policy']}`: K = {params.get('K')} forks, H = {params.get('H')} steps "
                   f"(0: to the end), k = {params.get('k')} candidate actions; against its base `{base}`: "
                   f"{m:+.2f} ± {sd:.2f} % better objective over {len(common)} seeds (better on {better}){speed}.")
        out.append("")
    return out


def _shown(path: Path) -> str:
    """``path`` relative to the working directory where it lies under it (no absolute path in the output)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _seed_text(seeds) -> str:
    s = sorted(int(x) for x in seeds)
    return f"{s[0]}-{s[-1]}" if s == list(range(s[0], s[-1] + 1)) and len(s) > 1 else ", ".join(map(str, s))


def _cpu_model() -> str:
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


# ---------------------------------------------------------------------------------------------- driver
def _load(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    if path.suffix == ".csv":
        import pandas as pd

        df = pd.read_csv(path)
        return [{k: v for k, v in r.items() if not (isinstance(v, float) and math.isnan(v))}
                for r in df.to_dict("records")]
    out = []
    for ln in path.read_text().splitlines():
        if ln.strip():
            out.append(json.loads(ln))
    return out


def _execute(tasks, workers: int, backend: str, address, on_result) -> list[dict]:
    from edgegym.agents.bench import _execute_local, _execute_ray

    if not tasks:
        return []
    if backend == "ray":
        return _execute_ray(tasks, workers, True, address, fn=run_task, on_result=on_result)
    return _execute_local(tasks, workers, True, fn=run_task, on_result=on_result)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the tiny presets, seeds 100-101 (a smoke test)")
    ap.add_argument("--out", default=None, help="the page (default docs/results/leaderboard.md; with --quick "
                    "runs/leaderboard-quick.md)")
    ap.add_argument("--data", default=None, help="folder of results.jsonl / results.csv (default: next to the page, "
                    "<page stem>/)")
    ap.add_argument("--workers", type=int, default=2, help="parallel worker processes / Ray tasks (default 2)")
    ap.add_argument("--backend", choices=("local", "ray"), default="local")
    ap.add_argument("--address", help="with --backend ray: an existing Ray cluster")
    ap.add_argument("--envs", nargs="+", help="the ids (default: the benchmark ids, each family's default id and its "
                    "shipped '-hard' presets; their -v1 ids are added unless --no-v1)")
    ap.add_argument("--no-v1", action="store_true", help="leave out the -v1 ids")
    ap.add_argument("--seeds", nargs="+", type=int, help="seeds (default 100-104; --quick: 100 101)")
    ap.add_argument("--policies", nargs="+", help="only these registered policies (default: all of each family)")
    ap.add_argument("--skip-policies", nargs="+", default=[], help="registered policies to leave out")
    ap.add_argument("--agents", nargs="*", help="saved-agent folders (default: docs/results/agents/models/*); each "
                    "runs on the id it was trained on")
    ap.add_argument("--rollout", default="rollout:{base}", help="the rollout policy's name, {base} = the best "
                    "non-learned policy of the id (default 'rollout:{base}'; '' for none)")
    ap.add_argument("--rollout-base", nargs="+", default=[], metavar="ID=POLICY", help="the rollout row's base on "
                    "an id (default: the best non-learned policy the rollout policy accepts); a full rollout name "
                    "(ID='rollout(K=2,H=10):okita-one') is that id's rollout row as it is, e.g. cheaper K and H on a "
                    "slow base")
    ap.add_argument("--bound-time-limit", type=float, default=120.0, help="seconds per bound (its LP / MILP parts)")
    ap.add_argument("--fresh", action="store_true", help="ignore the results already in --data")
    ap.add_argument("--from-csv", help="render the page from a results.csv / results.jsonl (no runs)")
    a = ap.parse_args(argv)
    if a.workers < 1:
        ap.error(f"--workers must be >= 1, got {a.workers}")
    # a quick run never overwrites the shipped page unless asked to
    default = Path("runs") / "leaderboard-quick.md" if a.quick else ROOT / "docs" / "results" / "leaderboard.md"
    out = Path(a.out or default).resolve()
    data = Path(a.data).resolve() if a.data else out.parent / out.stem
    agent_dirs = [Path(d).resolve() for d in a.agents] if a.agents is not None else sorted(AGENTS.glob("*"))
    cwd = Path.cwd()
    os.chdir(ROOT)  # policy names of the shipped agents relative to the repository
    try:
        return _main(a, ap, out, data, agent_dirs)
    finally:
        os.chdir(cwd)


def _main(a, ap, out: Path, data: Path, agent_dirs) -> int:
    from edgegym.agents.rl.learned import is_learned
    from edgegym.agents.runner import env_family

    import edgegym

    base_ids = list(a.envs or (QUICK_IDS if a.quick else benchmark_ids()))
    known = set(edgegym.registered_ids())
    for e in base_ids:
        if e not in known:
            ap.error(f"unknown env {e!r}")
    ids = []
    for e in base_ids:
        ids.append(e)
        v1 = e.rsplit("-v", 1)[0] + "-v1"
        if not a.no_v1 and e.endswith("-v0") and v1 in known:
            ids.append(v1)
    seeds = a.seeds or (QUICK_SEEDS if a.quick else SEEDS)
    forced = {}
    for item in a.rollout_base:
        env_id, sep, base = item.partition("=")
        if not sep or env_id not in ids or not base:
            ap.error(f"--rollout-base expects ID=POLICY with ID one of {', '.join(ids)}, got {item!r}")
        forced[env_id] = base
    cmd = "python benchmarks/leaderboard.py" + (" --quick" if a.quick else "") + \
        (" --envs " + " ".join(a.envs) if a.envs else "") + (" --no-v1" if a.no_v1 else "") + \
        (" --seeds " + " ".join(map(str, a.seeds)) if a.seeds else "") + \
        (f" --workers {a.workers}" if a.workers != 2 else "") + \
        (f" --rollout {shlex.quote(a.rollout)}" if a.rollout != "rollout:{base}" else "") + \
        (" --backend ray" if a.backend == "ray" else "") + \
        (" --rollout-base " + " ".join(shlex.quote(x) for x in a.rollout_base) if a.rollout_base else "")
    if a.from_csv:
        results = _load(Path(a.from_csv))
        ids = [i for i in ids if any(r["env"] == i for r in results)] or list(dict.fromkeys(r["env"] for r in results))
        seeds = sorted({int(r["seed"]) for r in results}) or seeds
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(results, ids, seeds, cmd, a.workers, a.backend, None))
        print(f"wrote {_shown(out)} from {a.from_csv} ({len(results)} runs)")
        return 0

    data.mkdir(parents=True, exist_ok=True)
    part = data / "results.jsonl"
    if a.fresh and part.exists():
        part.unlink()
    done = {_key(r): r for r in _load(part) if "error" not in r and not stale_bound(r)}

    def keep(r: dict) -> None:
        with part.open("a") as fh:
            fh.write(json.dumps(r, default=float) + "\n")

    t0 = time.time()
    # phase 1: every registered policy and agent; the bounds that need no upper bound
    tasks = []
    for e in ids:
        fam = env_family(e)
        pols = [p for p in registered(e) if (a.policies is None or p in a.policies) and p not in a.skip_policies]
        for p in pols + agents_for(e, agent_dirs):
            cfg = _agent_config(e, p) if is_learned(p) else {}
            for s in seeds:
                tasks.append({"kind": "episode", "env": e, "policy": p, "seed": int(s), "env_config": cfg,
                              "policy_kind": policy_kind(p, fam)})
        if declared_bound(fam) is not None or fam != "HeteroML":  # (without one, HeteroML's LP needs phase 2)
            for s in seeds:
                tasks.append({"kind": "bound", "env": e, "seed": int(s), "time_limit_s": a.bound_time_limit})
    todo = [t for t in tasks if _key(t) not in done]
    print(f"leaderboard: {len(tasks)} runs in phase 1, {len(tasks) - len(todo)} already in {part.name}",
          file=sys.stderr)
    for r in _execute(todo, a.workers, a.backend, a.address, keep):
        if "error" not in r:
            done[_key(r)] = r
    # phase 2: the rollout policy on the best non-learned policy of each id; HeteroML's LP bound (needs an upper one)
    from edgegym.agents.reference.rollout import is_rollout

    tasks2 = []
    results = list(done.values())
    for e in ids:
        fam = env_family(e)
        rows, _ = build_rows(results, e)
        plain = [r for r in rows if r["kind"] in ("reference", "variant", "baseline", "trivial")
                 and r["n"] == len(seeds)]
        bases = [forced[e]] if e in forced else [r["policy"] for r in plain]
        if bases and a.rollout:
            # the best base that the rollout policy accepts (one that decides inside the simulator has no choice)
            name = next((n for n in (rollout_name("{base}" if is_rollout(b) else a.rollout, b, e, int(seeds[0]))
                                     for b in bases) if n), None)
            if name is not None:
                tasks2 += [{"kind": "episode", "env": e, "policy": name, "seed": int(s), "env_config": {},
                            "policy_kind": "rollout"} for s in seeds]
            else:
                print(f"leaderboard: no rollout policy ({a.rollout}) runs on {e} here; no rollout row",
                      file=sys.stderr)
        if fam == "HeteroML" and declared_bound(fam) is None:
            for s in seeds:
                objs = [r["objective"] for r in results if r["kind"] == "episode" and r["env"] == e
                        and int(r["seed"]) == int(s)]
                tasks2.append({"kind": "bound", "env": e, "seed": int(s), "upper": min(objs) if objs else None,
                               "time_limit_s": a.bound_time_limit})
    todo2 = [t for t in tasks2 if _key(t) not in done]
    if tasks2:
        print(f"leaderboard: {len(tasks2)} runs in phase 2, {len(tasks2) - len(todo2)} already done", file=sys.stderr)
    for r in _execute(todo2, a.workers, a.backend, a.address, keep):
        if "error" not in r:
            done[_key(r)] = r
    all_runs = _load(part)
    latest: dict = {}
    for r in all_runs:  # the last record of each run (a failure later replaced by a success stays replaced)
        if _key(r) not in latest or "error" not in r or "error" in latest[_key(r)]:
            latest[_key(r)] = r
    results = [latest[_key(t)] for t in tasks + tasks2 if _key(t) in latest]
    failed = [r for r in results if "error" in r]
    _write_csv(results, data / "results.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = (len(tasks) - len(todo)) + (len(tasks2) - len(todo2))
    out.write_text(render(results, ids, seeds, cmd, a.workers, a.backend, time.time() - t0, kept))
    print(f"wrote {_shown(out)} ({len(results)} runs, {len(failed)} failed, {(time.time() - t0) / 60:.1f} min)")
    return 0


def _write_csv(results: list[dict], path: Path) -> None:
    import pandas as pd

    rows = [{k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in r.items()} for r in results]
    pd.DataFrame(rows).to_csv(path, index=False)


if __name__ == "__main__":
    sys.exit(main())
