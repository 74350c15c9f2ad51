"""The ``-v1`` presets made for learned agents: the same dynamics as ``-v0``, a reward and observation made
for learning (version history in each family's ``env.py``).

``python -m edgegym.agents.rl.versions`` writes ``envs_config/<key>/<name>-v1.yaml`` for every ``-v0`` preset of the
families with ``v1_overrides``: the v0 file's mapping with ``version: 1`` and the ``env`` overrides below (the
comments that argue each value stay in the v0 file). ``tests/rl/test_rl_reward_credit.py`` checks that every
v1 file still equals its v0 file plus these overrides, so a recalibrated v0 preset is noticed.

Each family declares its overrides, with the reason for every value, in its ``presets.py`` (``V1_OVERRIDES``,
registered as :attr:`edgegym.core.family.Family.v1_overrides`): a new family needs no line here.
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["V1_OVERRIDES", "v1_mapping", "write_v1"]


def _v1_overrides() -> dict[str, dict]:
    from edgegym.families import families

    return {f.name: f.v1_overrides for f in families().values() if f.v1_overrides}


#: family name -> preset-section overrides that make a v0 preset its v1 (read from the family records)
V1_OVERRIDES: dict[str, dict] = _v1_overrides()


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
