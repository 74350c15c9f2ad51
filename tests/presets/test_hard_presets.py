"""The documented hard presets (one per family where the headroom sweep finds one) and the sweep script.

* each hard preset is registered as ``<Family>-<name>-v0`` and ``-v1``, builds, resets and validates;
* its ``-v1`` file is the generator's (``python -m edgegym.agents.rl.versions``): the v0 mapping plus the family's
  v1 overrides;
* its v0 file cites the paper it rests on, by authors, title and venue, and no internal path;
* ``benchmarks/headroom_sweep.py --quick`` runs on a tiny preset and prints a table with the bound ratio, the rollout
  column and the trivial policies.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import edgegym
from edgegym.agents.rl.versions import v1_mapping
from edgegym.families import family

ROOT = Path(__file__).resolve().parents[2]
#: family -> (preset name, the paper's citation as the preset's head comment gives it)
HARD = {
    "HeteroML": ("rl-hard", "Online Scheduling Algorithm for Heterogeneous Distributed Machine Learning Jobs"),
    "WirelessUDL": ("sim-hard", "Online Scheduling Unbiased Distributed Learning over Wireless Edge Networks"),
}


def _files(fam: str) -> tuple[Path, Path]:
    key, name = family(fam).key, HARD[fam][0]
    return ROOT / "envs_config" / key / f"{name}.yaml", ROOT / "envs_config" / key / f"{name}-v1.yaml"


@pytest.mark.parametrize("fam", sorted(HARD))
def test_hard_preset_ids_are_registered_and_build(fam):
    name = HARD[fam][0]
    for version in (0, 1):
        env_id = f"{fam}-{name}-v{version}"
        assert env_id in edgegym.registered_ids()
        env = gym.make(env_id)
        try:
            obs, _ = env.reset(seed=0)
            assert env.observation_space.contains(obs)
            assert env.unwrapped.preset.name == name
        finally:
            env.close()


@pytest.mark.parametrize("fam", sorted(HARD))
def test_hard_preset_v1_file_is_the_generators(fam):
    v0, v1 = _files(fam)
    assert yaml.safe_load(v1.read_text()) == v1_mapping(yaml.safe_load(v0.read_text()), fam)
    assert "generated from" in v1.read_text().splitlines()[0]


@pytest.mark.parametrize("fam", sorted(HARD))
def test_hard_preset_cites_its_paper_and_no_internal_path(fam):
    text = _files(fam)[0].read_text()
    assert HARD[fam][1] in text
    for bad in ("/work", "shared/", "spec §", "issue ", "paper 00", "session"):
        assert bad not in text, f"{bad!r} in {_files(fam)[0].name}"
    assert yaml.safe_load(text)["description"].strip()


def _sweep():
    sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_file_location("headroom_sweep", ROOT / "benchmarks" / "headroom_sweep.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_headroom_sweep_quick_prints_the_table(capsys):
    sweep = _sweep()
    assert sweep.main(["--family", "HeteroML", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "### HeteroML (base `HeteroML-tiny-v0`, lower is better)" in out
    row = next(line for line in out.splitlines() if line.startswith("| tiny preset |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    ratio = float(cells[3])
    assert math.isfinite(ratio) and ratio >= 1.0 - 1e-9  # a cost over its lower bound
    assert "rollout(K=2,H=10):" in cells[5]
    assert "`random`" in out and "`single-worker`" in out  # the trivial policies are shown


def test_headroom_sweep_gain_sign_follows_the_objective_sense():
    sweep = _sweep()
    assert sweep._gain({0: 90.0}, {0: 100.0}, [0], higher=False) == pytest.approx(0.10)  # a lower cost: better
    assert sweep._gain({0: 90.0}, {0: 100.0}, [0], higher=True) == pytest.approx(-0.10)  # a lower utility: worse


def test_headroom_sweep_rejects_an_unknown_setting(capsys):
    with pytest.raises(SystemExit):
        _sweep().main(["--family", "HeteroML", "--settings", "no such setting"])
    assert "unknown HeteroML setting" in capsys.readouterr().err


@pytest.mark.parametrize("fam,short", [("HeteroML", {"workload": {"num_jobs": 15}}),
                                       ("WirelessUDL", {"jobs": {"count": 15}})])
def test_hard_preset_v1_return_equals_the_objective(fam, short):
    """The -v1 reward credit holds on the hard presets too (a shorter episode of the same preset, random policy)."""
    from edgegym.agents.runner import run_episode

    rec = run_episode(f"{fam}-{HARD[fam][0]}-v1", "random", 3, short)
    scaled = rec["episode_return"] * rec["reward_scale"] - rec.get("objective_offset", 0.0)
    assert abs(scaled) == pytest.approx(abs(rec["objective"]), rel=1e-9, abs=1e-6)
    assert rec["illegal_actions"] == 0


def test_headroom_sweep_rejects_zero_rollout_seeds(capsys):
    with pytest.raises(SystemExit):
        _sweep().main(["--family", "HeteroML", "--quick", "--rollout-seeds", "0"])
    assert "--rollout-seeds 0: at least 1" in capsys.readouterr().err
