"""The ``-v1`` presets of the learned-agent issue: the same dynamics as ``-v0``, a reward and observation made
for learning (version history in each family's ``env.py``).

``python -m edgegym.agents.rl.versions`` writes ``envs_config/<key>/<name>-v1.yaml`` for every ``-v0`` preset of the
families in :data:`V1_OVERRIDES`: the v0 file's mapping with ``version: 1`` and the ``env`` overrides below (the
comments that argue each value stay in the v0 file). ``tests/rl/test_rl_reward_credit.py`` checks that every
v1 file still equals its v0 file plus these overrides, so a recalibrated v0 preset is noticed.

Per family:

* ``EdgeUtility``: ``reward_credit: dispatch`` (planned utility at dispatch, actual − planned at completion),
  ``obs_relative: true``, ``reward_scale: 100`` (per-job utilities are 0-100; with the o4a discipline the
  per-step reward then has mean ≈ 0.5 and sd ≈ 0.3 on the testbed, measured in the agents page).
* ``EdgeCloudML``: the reward was already credited at the decision (potential-based projected JCT),
  so only ``obs_relative: true`` (no absolute-time feature, jobs in the system relative to the worker count);
  the reward scales of v0 already give per-step rewards of mean ≈ −0.7 (testbed, sim100 at scale 100).
* ``WirelessUDL``: the commit mode's reward is already the job's exact cost at its decision (plans are
  non-preemptive), and v0's scale 1000 gives per-step mean ≈ −1.5, sd ≈ 0.6 on ``sim`` under ``okita-a``, so the
  reward is unchanged; ``obs_relative`` (no absolute time / episode position), ``obs_rows`` (one feature row per
  candidate plan, for the per-row policy), ``prune_ratio: 3`` (plans estimated above 3× the cheapest legal one are
  masked: a one-worker plan's exponential latency cost reaches 1e18) and ``cost_clip: 10`` (features in [0, 10]).
* ``HeteroML``: the reward is already credited at the decision (a committed job's completion is known), so
  ``obs_relative: true`` (no absolute-time / episode-position features), ``obs_actions: true`` (one feature row
  per grid action: completion estimate, wait, duration, resource share, for the per-row policy) and
  ``reward_scale: 1e5`` (weighted flow time in 1e5 weight-slots: per-step mean ≈ −0.7 under ``earliest``).
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["V1_OVERRIDES", "v1_mapping", "write_v1"]

#: family name -> env-section overrides that make a v0 preset its v1
V1_OVERRIDES: dict[str, dict] = {
    "EdgeUtility": {"env": {"reward_credit": "dispatch", "obs_relative": True, "reward_scale": 100.0}},
    "EdgeCloudML": {"env": {"obs_relative": True}},
    "WirelessUDL": {"env": {"obs_relative": True, "obs_rows": True, "prune_ratio": 3.0, "cost_clip": 10.0}},
    "HeteroML": {"env": {"obs_relative": True, "obs_actions": True, "reward_scale": 1.0e5}},
}


def v1_mapping(v0: dict, family: str) -> dict:
    """The v1 preset mapping of a v0 preset mapping of ``family``."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in v0.items()}
    out["version"] = 1
    for sec, vals in V1_OVERRIDES[family].items():
        out[sec] = {**(out.get(sec) or {}), **vals}
    return out


def _v0_files(root: Path, key: str) -> list[Path]:
    # the literal readings of the papers stay v0 only: v1 is the version made for learning
    return sorted(p for p in (root / key).glob("*.yaml") if "-v" not in p.stem and "paper-literal" not in p.stem)


def write_v1(root: str | Path | None = None) -> list[Path]:
    """Write every ``<name>-v1.yaml`` (see the module docstring); returns the paths written."""
    from edgegym.families import families

    root = Path(root) if root else Path(__file__).resolve().parents[2] / "envs_config"
    written = []
    for fam in families().values():
        if fam.name not in V1_OVERRIDES:
            continue
        for src in _v0_files(root, fam.key):
            data = yaml.safe_load(src.read_text())
            if data.get("version", 0) != 0:
                continue
            dst = src.with_name(f"{src.stem}-v1.yaml")
            head = (f"# {fam.name}-{data['name']}-v1: generated from {src.name} by `python -m edgegym.agents.rl.versions` "
                    "(do not edit by hand).\n# Same dynamics as v0; reward / observation for learning: see "
                    f"agents/rl/versions.py and the version history in edgegym/families/{fam.key}/env.py.\n")
            dst.write_text(head + yaml.safe_dump(v1_mapping(data, fam.name), sort_keys=False, width=120))
            written.append(dst)
    return written


if __name__ == "__main__":
    for p in write_v1():
        print(p)
