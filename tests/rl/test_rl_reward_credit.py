"""v1 presets (reward credited at the decision, relative observations): return == objective on every preset,
a hand-checked dispatch credit, the v1 files match their v0 files, and observations stay in range."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml
from edgegym.agents.rl.versions import V1_OVERRIDES, v1_mapping
from edgegym.agents.runner import env_family, run_episode

import edgegym
from edgegym.families import families

ROOT = Path(__file__).resolve().parents[2] / "envs_config"
V1_IDS = [i for i in edgegym.registered_ids() if i.endswith("-v1") and env_family(i) in V1_OVERRIDES
          and i.count("-") == 2]  # <Family>-<preset>-v1


def _short(env_id: str, n: int = 60) -> dict:
    """A shorter episode of the same preset (inline-job presets are already short)."""
    p = gym.spec(env_id)
    fam = families()[env_family(env_id)]
    workload = getattr(fam.load_preset(p.kwargs["preset"]), "workload", None)  # a family may name it otherwise
    jobs = getattr(workload, "num_jobs", None)
    if getattr(workload, "source", "") == "inline" or jobs is None or jobs <= n:
        return {}
    return {"workload": {"num_jobs": n}}


def test_every_existing_family_has_v1_of_its_default_preset():
    for name in V1_OVERRIDES:
        assert f"{name}-v1" in edgegym.registered_ids()
        assert f"{name}-v0" in edgegym.registered_ids()  # v0 keeps working


@pytest.mark.parametrize("env_id", V1_IDS)
@pytest.mark.parametrize("policy", ["random", "ref"])
def test_return_equals_objective(env_id, policy):
    fam = families()[env_family(env_id)]
    pol = fam.default_policy if policy == "ref" else "random"
    cfg = _short(env_id)
    # the baseline's own discipline is overridden back to the preset's: the credit must hold under any policy
    rec = run_episode(env_id, pol, 3, cfg)
    # HeteroML's flow reward leaves out the policy-independent Σ w_j a_j (its ``objective_offset``)
    scaled = rec["episode_return"] * rec["reward_scale"] - rec.get("objective_offset", 0.0)
    assert abs(scaled) == pytest.approx(abs(rec["objective"]), rel=1e-9, abs=1e-6)
    assert rec["illegal_actions"] == 0


def test_utility_dispatch_credit_by_hand():
    """First step of EdgeUtility-tiny-v1 (FIFO servers, all idle): the reward is the planned utility of the job
    on the chosen server, g(Δ̂↑ + p̂ + Δ̂↓) (the no-queue JRT), divided by the reward scale 100; nothing has
    completed yet, so there is no correction term."""
    env = gym.make("EdgeUtility-tiny-v1", config={"scheduler": {"discipline": "fifo"}})
    env.reset(seed=0)
    u = env.unwrapped
    view = u.view()
    lb = float(view.lb_s[1])
    planned = float(view.utility(lb))
    _, r, _, _, info = env.step(1)
    assert info.get("completed_count", len(info.get("completed", []))) == 0
    assert info["reward_planned_utility"] == pytest.approx(planned, rel=1e-12)
    assert r == pytest.approx(planned / 100.0, rel=1e-12)
    assert u.reward_scale == 100.0


def test_dispatch_credit_leaves_little_to_the_last_step(need_trace):
    """The point of the new credit: utility arrives when decided, not in the final drain (measured on the Google
    2011 release times the preset reads; the synthetic fallback is burstier at the end of an episode)."""
    need_trace("google_2011")
    shares = {}
    for version in (0, 1):
        env = gym.make(f"EdgeUtility-testbed-v{version}", config={"workload": {"num_jobs": 300}})
        env.reset(seed=5)
        rng = np.random.default_rng(0)
        rs, done = [], False
        while not done:
            a = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            _, r, done, _, _ = env.step(a)
            rs.append(r)
        rs = np.asarray(rs)
        shares[version] = (abs(rs[-1]) / np.abs(rs).sum(), float(np.mean(rs == 0)))
    assert shares[0][0] > 0.2  # v0: a large share of the utility arrives in the drain step
    assert shares[1][0] < 0.02  # v1: the last step is one decision among 300
    assert shares[1][1] < 0.2 < shares[0][1]  # most v0 steps have zero reward, few v1 steps


@pytest.mark.parametrize("fam_name", sorted(V1_OVERRIDES))
def test_v1_files_match_v0(fam_name):
    fam = families()[fam_name]
    v1_files = sorted((ROOT / fam.key).glob("*-v1.yaml"))
    assert v1_files, f"no v1 presets for {fam_name}"
    for f in v1_files:
        v0 = yaml.safe_load(f.with_name(f.name.replace("-v1.yaml", ".yaml")).read_text())
        assert yaml.safe_load(f.read_text()) == v1_mapping(v0, fam_name), (
            f"{f.name} is stale: its v0 preset changed; regenerate with `python -m edgegym.agents.rl.versions`")


#: observation indices (in the global block / job block) that held absolute time or the episode position in v0
_TIME_FEATURES = {"EdgeCloudML": {"glob": [0, 3]}, "EdgeUtility": {"glob": [0, 1], "job": [-1]}}


@pytest.mark.parametrize("env_id", ["EdgeCloudML-v1", "EdgeUtility-v1"])
def test_no_absolute_time_features(env_id):
    """v1 observations carry no absolute time and no position in the episode (v0's are non-zero there)."""
    for version, want_zero in ((1, True), (0, False)):
        eid = env_id.replace("-v1", f"-v{version}")
        env = gym.make(eid, config=_short(eid, 60) or None)
        obs, _ = env.reset(seed=1)
        lay = env.unwrapped.obs_layout()
        seen = []
        for _ in range(20):
            for block, idx in _TIME_FEATURES[env_family(eid)].items():
                a, b = lay[block]
                seen += list(obs[a:b][idx])
            mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
            a = int(np.flatnonzero(mask)[-1]) if hasattr(env.action_space, "n") else mask.astype(np.float32)
            obs, *_ = env.step(a)
        assert (np.count_nonzero(seen) == 0) == want_zero, (eid, seen[:6])


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["EdgeCloudML-v1", "EdgeUtility-v1"])
def test_observation_in_range_at_full_length(env_id):
    """Every feature stays in [0, 10] over a full episode of the default preset (the longest default), and the
    return equals the objective there too (4000 jobs for EdgeUtility)."""
    env = gym.make(env_id)
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(2)
    lo, hi, ret, done = np.inf, -np.inf, 0.0, False
    while not done:
        lo, hi = min(lo, float(obs.min())), max(hi, float(obs.max()))
        mask = np.asarray(env.unwrapped.action_masks(), dtype=bool)
        a = int(rng.choice(np.flatnonzero(mask))) if hasattr(env.action_space, "n") else mask.astype(np.float32)
        obs, r, done, _, info = env.step(a)
        ret += r
    assert lo >= 0.0 and hi <= 10.0, (lo, hi)
    m = info["episode_metrics"]
    assert abs(ret * m["reward_scale"]) == pytest.approx(abs(m["objective"]), rel=1e-9)
