"""Time to beat the heuristic: the shipped training recipe of each benchmark id, run from scratch, timed to its first
model that is ahead of the best shipped non-learned policy.

Usage::

    nice python benchmarks/time_to_beat.py [--ids ID ...] [--seeds 10000-10002] [--budget-s S]
                                           [--teacher-workers N] [--json-out FILE]

Per benchmark id (default: each family's ``-v1`` default id and its ``-v1`` hard presets, in the leaderboard's
order, those with a recipe section in ``agents/rl/expert-iteration.yaml``):

1. the best shipped non-learned, non-rollout policy of the id (kinds reference, variant, baseline and trivial, as
   the leaderboard names them) is found on the **model-selection seeds** (the recipe's ``eval_seed`` onwards,
   10,000-10,002; never the held-out test seeds): every such policy runs one episode per seed on the preset, once per
   run (the figures are cached for the run and reported, not counted in the time to beat);
2. the recipe (``edgegym train --hyperparams agents/rl/expert-iteration.yaml`` with the step budget of the shipped
   agent's sidecar: behaviour cloning on the rollout teacher's episodes, DAgger rounds, then PPO where the recipe has
   it) trains from scratch; after every evaluation of the model being trained (each DAgger round, round 0 being the
   cloned model, and each PPO evaluation) its mean objective on the same seeds is compared with the heuristic's, and
   training stops at the first model that is strictly ahead (or when ``--budget-s`` has passed at an evaluation);
3. the table gives the wall-clock and this process's CPU seconds from the start of training to that model, its
   round, its objective against the heuristic's, and the phases up to then: teacher labels (the teacher's own
   episodes for cloning and the labelled student episodes of the DAgger rounds), cloning (behaviour-cloning and DAgger
   fits), PPO (rollouts and updates) and evaluation; the rest (building the model, saving) is the difference to the
   total. An id whose recipe never gets ahead is reported as "not ahead after the whole recipe".

The model is judged on the config it is shipped with (the recipe's ``env_config``; a recipe whose training episodes
differ, ``train_env_config``, is evaluated again on the preset's own workload), the heuristics on the preset, as the
leaderboard judges them. CPU seconds are ``time.process_time`` of this process (teacher workers, with
``--teacher-workers`` > 1, are not in it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

ALGO = "maskable-ppo"
#: the phases of the table, in order (seconds each)
PHASES = ("teacher_labels_s", "cloning_s", "ppo_s", "evaluation_s")


def recipe_path() -> Path:
    """The shipped expert-iteration recipe."""
    from edgegym.agents import rl

    return Path(rl.__file__).resolve().parent / "expert-iteration.yaml"


def _default_id(env_id: str) -> str:
    from edgegym.agents.runner import env_family

    return f"{env_family(env_id)}-v1"


def default_ids() -> list[str]:
    """The learnable ``-v1`` benchmark ids: the leaderboard's :func:`benchmark_ids` (each family's default id and its
    hard presets) as ``-v1`` ids, keeping those registered whose recipe names a teacher."""
    import gymnasium as gym
    from edgegym.agents.rl.train import resolve_hyperparams
    from leaderboard import benchmark_ids

    import edgegym  # noqa: F401  (registers the ids)

    out = []
    for v0 in benchmark_ids():
        v1 = v0[:-3] + "-v1"
        if v1 in gym.registry and resolve_hyperparams(ALGO, v1, recipe_path())[0].get("teacher"):
            out.append(v1)
    return out


def shipped_timesteps(env_id: str) -> int:
    """The PPO steps of the shipped agent of ``env_id`` (its ``train.json``; a hard preset has none: its family's
    default id's). ``ValueError`` naming the file when it is missing or has no ``timesteps``."""
    from leaderboard import AGENTS

    for name in (env_id, _default_id(env_id)):
        path = AGENTS / name / "train.json"
        if path.is_file():
            data = json.loads(path.read_text())
            if "timesteps" not in data:
                raise ValueError(f"docs/results/agents/models/{name}/train.json: no 'timesteps'")
            return int(data["timesteps"])
    raise ValueError(f"{env_id}: no shipped agent to read the step budget from "
                     f"(docs/results/agents/models/{_default_id(env_id)}/train.json)")


def check_selection_seeds(seeds) -> list[int]:
    """``seeds`` as a list; ``ValueError`` naming the first one outside the protocol's model-selection seeds."""
    from edgegym.agents.protocol import SELECTION_SEEDS

    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("--seeds: no seeds given")
    for s in seeds:
        if not any(s in r for r in SELECTION_SEEDS):
            rs = ", ".join(f"{r.start}-{r.stop - 1}" for r in SELECTION_SEEDS)
            raise ValueError(f"--seeds: seed {s} is not a model-selection seed ({rs}); the time to beat is measured "
                             "on model-selection seeds only")
    if seeds != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(f"--seeds: the evaluation seeds must be consecutive (eval_seed onwards), got {seeds}")
    return seeds


def recipe_seeds(env_id: str) -> list[int]:
    """The recipe's model-selection seeds of ``env_id``: ``eval_seed .. eval_seed + n_eval_episodes - 1``."""
    from edgegym.agents.rl.train import resolve_hyperparams

    hp = resolve_hyperparams(ALGO, env_id, recipe_path())[0]
    first = int(hp.get("eval_seed", 10_000))
    return list(range(first, first + int(hp.get("n_eval_episodes", 3))))


_HEURISTIC_CACHE: dict = {}


def best_heuristic(env_id: str, seeds, policies=None) -> dict:
    """The best shipped non-learned, non-rollout policy of ``env_id`` on ``seeds`` (one episode each, the preset):
    ``{"policy", "objective", "means" (policy -> mean objective), "higher_is_better", "wall_s"}``; cached per run.
    ``policies`` restricts the candidates (tests)."""
    from agent_protocol import heuristics
    from edgegym.agents.runner import env_family, run_episode
    from leaderboard import HIGHER_IS_BETTER

    names = tuple(policies) if policies is not None else tuple(heuristics(env_id))
    key = (env_id, tuple(int(s) for s in seeds), names)
    if key not in _HEURISTIC_CACHE:
        t = time.perf_counter()
        means = {}
        for p in names:
            objs = [float(run_episode(env_id, p, int(s))["objective"]) for s in seeds]
            means[p] = sum(objs) / len(objs)
        hib = HIGHER_IS_BETTER[env_family(env_id)]
        finite = {p: m for p, m in means.items() if math.isfinite(m)}
        if not finite:
            raise ValueError(f"{env_id}: no non-learned policy has a finite objective on seeds {list(seeds)}")
        best = (max if hib else min)(finite, key=finite.get)
        _HEURISTIC_CACHE[key] = {"policy": best, "objective": finite[best], "means": means, "higher_is_better": hib,
                                 "wall_s": time.perf_counter() - t}
    return _HEURISTIC_CACHE[key]


def ahead(model_obj: float, best: float, higher_is_better: bool) -> bool:
    """Whether ``model_obj`` is strictly better than ``best``."""
    if not (math.isfinite(model_obj) and math.isfinite(best)):
        return False
    return model_obj > best if higher_is_better else model_obj < best


def _phases(summary: dict, own_eval_s: float) -> dict:
    """The phases of a train summary (seconds): teacher labels, cloning, PPO, evaluation."""
    bc = summary.get("behaviour_cloning") or {}
    rounds = [r for r in ((summary.get("dagger") or {}).get("rounds") or []) if r["round"] > 0]
    ph = summary.get("phases_s") or {}
    dagger_eval = sum(r.get("eval_s", 0.0) for r in (summary.get("dagger") or {}).get("rounds") or [])
    return {"teacher_labels_s": bc.get("collect_s", 0.0) + sum(r.get("collect_s", 0.0) for r in rounds),
            "cloning_s": bc.get("fit_s", 0.0) + sum(r.get("fit_s", 0.0) for r in rounds),
            "ppo_s": ph.get("ppo_rollouts_s", 0.0) + ph.get("ppo_updates_s", 0.0),
            "evaluation_s": dagger_eval + ph.get("evaluations_s", 0.0) + own_eval_s}


def time_to_beat(env_id: str, seeds=None, *, budget_s: float | None = None, teacher_workers: int | None = None,
                 overrides: dict | None = None, timesteps: int | None = None, policies=None, seed: int = 0,
                 say=None) -> dict:
    """Train ``env_id``'s shipped recipe from scratch until its first model ahead of the best heuristic on ``seeds``
    (default: the recipe's model-selection seeds). ``overrides``: hyperparameter keys set over the recipe (tests: a
    tiny recipe); ``timesteps``: PPO steps (default: the shipped agent's). Returns the table row: ``id``, ``seeds``,
    ``heuristic`` (:func:`best_heuristic`), ``ahead`` (bool), ``time_to_beat_s`` / ``cpu_to_beat_s`` (``None``
    when not ahead), ``stage`` and ``round`` of the deciding model, ``model_objective``, ``vs_heuristic_pct``
    (positive = better), ``evaluations`` (every model evaluated: stage, round or steps, objective, wall seconds),
    ``phases`` (:data:`PHASES`, up to the stop), ``total_s``, ``total_cpu_s``, ``states`` (labelled),
    ``stopped_by`` (``"ahead"``, ``"budget"`` or ``None``: the whole recipe ran)."""
    import gymnasium as gym
    from edgegym.agents.rl.best import evaluate_model
    from edgegym.agents.rl.train import resolve_hyperparams, train
    from edgegym.agents.runner import merge_config
    from leaderboard import improvement_pct

    say = say or (lambda msg: None)
    if env_id not in gym.registry:
        raise ValueError(f"unknown env id {env_id!r}")
    seeds = check_selection_seeds(seeds if seeds is not None else recipe_seeds(env_id))
    heur = best_heuristic(env_id, seeds, policies)
    say(f"{env_id}: best heuristic on seeds {seeds[0]}-{seeds[-1]}: {heur['policy']} {heur['objective']:.6g} "
        f"({len(heur['means'])} policies, {heur['wall_s']:.1f} s)")
    ov = {"eval_seed": seeds[0], "n_eval_episodes": len(seeds), "teacher_workers": teacher_workers,
          **(overrides or {})}
    hp = resolve_hyperparams(ALGO, env_id, recipe_path(), overrides=ov)[0]
    cfg = merge_config(hp.get("env_config") or {}, None)
    own_config = merge_config(cfg, hp.get("train_env_config") or {}) == cfg
    steps = shipped_timesteps(env_id) if timesteps is None else int(timesteps)
    hib = heur["higher_is_better"]
    state = {"evals": [], "hit": None, "own_eval_s": 0.0, "stopped_by": None}

    def on_model(stage: str, row: dict, model) -> bool:
        obj = row.get("eval_mean_objective" if stage == "dagger" else "mean_objective")
        if obj is None or not own_config:  # evaluated on other episodes than the shipped config's: again here
            t = time.perf_counter()
            recs = evaluate_model(model, env_id, seeds, cfg)
            state["own_eval_s"] += time.perf_counter() - t
            obj = sum(r["objective"] for r in recs) / len(recs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        ev = {"stage": stage, "round": row.get("round"), "timesteps": row.get("timesteps"), "objective": float(obj),
              "wall_s": wall, "cpu_s": cpu}
        state["evals"].append(ev)
        where = f"round {ev['round']}" if stage == "dagger" else f"{ev['timesteps']} PPO steps"
        say(f"{env_id}: {stage} {where}: objective {obj:.6g} vs {heur['objective']:.6g} at {wall:.1f} s")
        if ahead(float(obj), heur["objective"], hib):
            state["hit"], state["stopped_by"] = ev, "ahead"
            return True
        if budget_s is not None and wall >= budget_s:
            state["stopped_by"] = "budget"
            return True
        return False

    with tempfile.TemporaryDirectory(prefix="time_to_beat_") as out:
        t0, c0 = time.perf_counter(), time.process_time()
        summary = train(env_id, ALGO, steps, seed, out, hyperparams=recipe_path(), progress=False,
                        overrides=ov, on_model=on_model)
        total, total_cpu = time.perf_counter() - t0, time.process_time() - c0
    hit = state["hit"]
    last = hit or (state["evals"][-1] if state["evals"] else None)
    model_obj = last["objective"] if last else math.nan
    dg = summary.get("dagger") or {}
    rounds = dg.get("rounds") or []
    return {"id": env_id, "seeds": seeds, "heuristic": heur, "ahead": hit is not None,
            "time_to_beat_s": hit["wall_s"] if hit else None, "cpu_to_beat_s": hit["cpu_s"] if hit else None,
            "stage": last["stage"] if last else None, "round": last["round"] if last else None,
            "timesteps": last["timesteps"] if last else None,
            "model_objective": model_obj, "vs_heuristic_pct": improvement_pct(model_obj, heur["objective"], hib),
            "evaluations": state["evals"], "phases": _phases(summary, state["own_eval_s"]),
            "total_s": total, "total_cpu_s": total_cpu,
            "states": rounds[-1]["dataset_size"] if rounds else (summary.get("behaviour_cloning") or {}).get("samples"),
            "ppo_steps": int(summary.get("num_timesteps", 0)), "stopped_by": state["stopped_by"]}


HEADER = ("| id | best heuristic (selection seeds) | time to beat: wall s (CPU s) | model | model objective "
          "(vs heuristic) | teacher labels s | cloning s | PPO s | evaluation s | total s | labelled states |\n"
          "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")


def table_row(r: dict) -> str:
    """One Markdown row of the table."""
    h = r["heuristic"]
    if r["ahead"]:
        when = f"{r['time_to_beat_s']:.0f} ({r['cpu_to_beat_s']:.0f})"
    else:
        when = ("not ahead within the budget" if r["stopped_by"] == "budget"
                else "not ahead after the whole recipe")
    model = (f"DAgger round {r['round']}" if r["stage"] == "dagger"
             else f"PPO at {r['timesteps']} steps" if r["stage"] == "ppo" else "-")
    ph = r["phases"]
    return (f"| {r['id']} | `{h['policy']}` {h['objective']:.6g} | {when} | {model} | {r['model_objective']:.6g} "
            f"({r['vs_heuristic_pct']:+.2f} %) | " + " | ".join(f"{ph[k]:.0f}" for k in PHASES)
            + f" | {r['total_s']:.0f} | {r['states'] if r['states'] is not None else '-'} |")


def main(argv=None) -> None:
    from edgegym.agents.options import parse_seeds

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", nargs="+", default=None, help="benchmark ids (default: the learnable -v1 ones)")
    ap.add_argument("--seeds", default=None, help="model-selection seeds, consecutive, e.g. 10000-10002 "
                                                  "(default: the recipe's)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="stop an id at its first evaluation after this many seconds of training")
    ap.add_argument("--teacher-workers", type=int, default=None, help="processes the teacher labels on")
    ap.add_argument("--json-out", type=Path, default=None, help="write the rows as JSON here")
    args = ap.parse_args(argv)
    if args.budget_s is not None and args.budget_s <= 0:
        ap.error(f"--budget-s must be > 0, got {args.budget_s}")
    ids = args.ids or default_ids()
    seeds = parse_seeds(args.seeds) if args.seeds else None
    rows = []
    for env_id in ids:
        rows.append(time_to_beat(env_id, seeds, budget_s=args.budget_s, teacher_workers=args.teacher_workers,
                                 say=lambda s: print(s, file=sys.stderr, flush=True)))
        print(table_row(rows[-1]), file=sys.stderr, flush=True)
    print("Time from the start of training to the first model ahead of the best shipped non-learned policy, on the "
          "model-selection seeds (wall-clock seconds; CPU seconds of this process in parentheses); phases up to "
          "that model (or the whole recipe)\n")
    print(HEADER)
    for r in rows:
        print(table_row(r))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps({"rows": rows}, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
