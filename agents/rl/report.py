"""``python -m edgegym.agents.rl.report``: a saved agent beside the reference policies, the papers' baselines and the
trivial policies on held-out seeds, for the agents results page (``docs/results/agents.md``).

The agent runs argmax *and* sampled (:func:`edgegym.agents.rl.evaluate.evaluate_agent`), with its mean entropy. Every
other policy runs through :func:`edgegym.agents.runner.run_episode` with its own preset overrides (as its paper runs
it); ``--same KEY`` (``section.key``, e.g. ``scheduler.discipline``) re-runs each policy that ran with another
value of that key once more with the agent's value (from the agent's own env config when its sidecar sets the
key, else the preset's), so that the agent is also compared under the same server discipline.
Writes ``OUT/results.csv`` (one row per episode) and ``OUT/summary.md`` (mean ± sample std per row).

Example::

    python -m edgegym.agents.rl.report --env EdgeUtility-v1 --model docs/results/agents/models/EdgeUtility-v1/model.zip \\
        --policies o4a do4a ondisc random all-edge all-cloud --same scheduler.discipline --seeds 100 101 102 103 104 \\
        --out docs/results/agents/EdgeUtility-v1
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from pathlib import Path

import numpy as np

__all__ = ["main", "run_report"]

_COLS = ("row", "policy", "mode", "seed", "objective", "episode_return", "mean_entropy", "mean_log_legal",
         "illegal_actions", "wall_s", "config")


def _get(cfg: dict, key: str):
    sec, _, k = key.partition(".")
    return (cfg.get(sec) or {}).get(k)


def run_report(env_id: str, model: str | None, policies: list[str], seeds: list[int], out: Path,
               same: list[str] = (), env_config: dict | None = None, algo: str = "maskable-ppo",
               append: bool = False) -> list[dict]:
    """Run everything, write ``out/results.csv`` and ``out/summary.md``; return the rows.

    ``append``: keep the rows already in ``out/results.csv`` (policies run in several invocations)."""
    import gymnasium as gym

    import edgegym  # noqa: F401  (registers the ids)

    from ..runner import merge_config, policy_env_config, run_episode
    from .evaluate import evaluate_agent

    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    if append and (out / "results.csv").is_file():
        with (out / "results.csv").open() as f:
            rows = list(csv.DictReader(f))
    name = None
    if model:
        name = model if ":" in model.split("/", 1)[0] else f"{algo}:{model}"
    preset = gym.make(env_id, config=env_config or None).unwrapped.preset
    # "the agent's value" of each --same key: from its own env config (sidecar) when it sets one, else the preset's
    agent = preset
    if name:
        agent = gym.make(env_id, config=merge_config(policy_env_config(env_id, name), env_config) or None)
        agent = agent.unwrapped.preset
    base_cfg = {sec: {k: getattr(getattr(agent, sec), k)} for sec, _, k in (s.partition(".") for s in same)}
    preset_cfg = {sec: {k: getattr(getattr(preset, sec), k)} for sec, _, k in (s.partition(".") for s in same)}

    def add(row: str, policy: str, mode: str, rec: dict, cfg: dict) -> None:
        r = {c: rec.get(c) for c in _COLS}
        r.update(row=row, policy=policy, mode=mode, config=json.dumps(cfg, sort_keys=True))
        rows.append(r)
        print(f"{row:40s} seed {rec['seed']:4d} objective {rec['objective']:.2f} ({rec['wall_s']:.1f} s)", flush=True)

    for pol in policies:
        own = policy_env_config(env_id, pol)
        for s in seeds:
            add(pol, pol, "own", run_episode(env_id, pol, s, env_config), own)
        for key in same:
            val = _get(base_cfg, key)
            ran = _get(merge_config(own, env_config), key)
            if (_get(preset_cfg, key) if ran is None else ran) != val:
                sec, _, k = key.partition(".")
                cfg = merge_config(env_config, {sec: {k: val}})
                for s in seeds:
                    add(f"{pol} ({k} {val})", pol, "same", run_episode(env_id, pol, s, cfg), cfg)
    if name:
        for rec in evaluate_agent(name, env_id, seeds, env_config):
            add(f"agent ({rec['mode']})", name, rec["mode"], rec, env_config or {})
    with (out / "results.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=_COLS)
        w.writeheader()
        w.writerows(rows)
    (out / "summary.md").write_text(summary_table(rows))
    return rows


def summary_table(rows: list[dict]) -> str:
    """Markdown: one line per row label, objective mean ± sample std, ratio to each row's per-seed best reference."""
    labels = list(dict.fromkeys(r["row"] for r in rows))
    lines = ["| policy | n | objective (mean ± std) | per-seed values | mean entropy / ln(#legal) | s / episode |",
             "|---|---|---|---|---|---|"]
    for lab in labels:
        rs = [r for r in rows if r["row"] == lab]
        obj = np.array([float(r["objective"]) for r in rs])
        sd = float(obj.std(ddof=1)) if obj.size > 1 else 0.0
        ent = [float(r["mean_entropy"]) for r in rs if r["mean_entropy"] not in (None, "")]
        leg = [float(r["mean_log_legal"]) for r in rs if r["mean_log_legal"] not in (None, "")]
        e = f"{np.mean(ent):.3f} / {np.mean(leg):.3f}" if ent and not math.isnan(np.mean(ent)) else ""
        wall = np.mean([float(r["wall_s"]) for r in rs])
        lines.append(f"| {lab} | {obj.size} | {obj.mean():,.1f} ± {sd:,.1f} | "
                     f"{', '.join(f'{v:,.0f}' for v in obj)} | {e} | {wall:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m edgegym.agents.rl.report", description=__doc__.split("\n\n")[0])
    p.add_argument("--env", required=True)
    p.add_argument("--model", help="model.zip (or <algo>:PATH) of the agent")
    p.add_argument("--algo", default="maskable-ppo")
    p.add_argument("--policies", nargs="+", default=[])
    p.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102, 103, 104])
    p.add_argument("--same", nargs="*", default=[], help="section.key to also run under the agent's value")
    p.add_argument("--env-config", help="inline JSON of preset overrides for every run")
    p.add_argument("--out", required=True)
    p.add_argument("--append", action="store_true", help="keep the rows already in OUT/results.csv")
    a = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    run_report(a.env, a.model, a.policies, a.seeds, Path(a.out), a.same,
               json.loads(a.env_config) if a.env_config else None, a.algo, a.append)
    print(f"done in {time.perf_counter() - t0:.1f} s; wrote {a.out}/results.csv and summary.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
