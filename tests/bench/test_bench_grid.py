"""``edgegym bench``: the grid runs, and its CSV, markdown table, summary and plots agree."""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import pytest
from edgegym.agents.bench import Cell, build_grid, run_bench
from edgegym.agents.cli import main
from edgegym.agents.registry import POLICIES

ENVS = ["EdgeCloudML-tiny-v0", "EdgeCloudML-testbed-v0"]
SEEDS = [0, 1, 2]


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    rc = main(["bench", "--envs", *ENVS, "--seeds", "0-2", "--baseline", "srtf", "--out", str(out),
               "--workers", "2", "--no-progress", "--gantt",
               "--metrics", "objective", "avg_jct", "p95_jct", "makespan", "utilisation", "preemptions"])
    assert rc == 0
    return out


def test_bench_outputs_exist(bench_dir):
    for name in ("results.csv", "summary.csv", "summary.md", "series.json", "bounds.csv"):
        assert (bench_dir / name).stat().st_size > 0
    for env in ENVS:
        for kind in ("metrics", "cdf", "utilisation"):
            png = bench_dir / "plots" / f"{env}_{kind}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Gantt charts of the small presets, one per (env, policy)
    assert len(list((bench_dir / "gantt").glob("*.png"))) == sum(
        len([p for p in POLICIES.values() if "EdgeCloudML" in p.families]) for _ in ENVS)


def test_bench_csv_is_tidy_and_complete(bench_dir):
    df = pd.read_csv(bench_dir / "results.csv")
    expected_policies = {n for n, s in POLICIES.items() if "EdgeCloudML" in s.families}
    for env in ENVS:
        g = df[df["env"] == env]
        assert set(g["policy"]) == expected_policies
        assert len(g) == len(expected_policies) * len(SEEDS)
        assert not g.duplicated(["policy", "seed"]).any()
    for col in ("env", "preset", "policy", "seed", "objective", "avg_jct", "makespan", "wall_s", "decisions_per_s",
                "episode_return"):
        assert col in df.columns
    # return = -objective / reward_scale, row by row
    np.testing.assert_allclose(df["episode_return"], -df["objective"] / df["reward_scale"], rtol=1e-9)


def _recompute(df, metrics, baseline, bounds):
    rows = {}
    for (env, pol), g in df.groupby(["env", "policy"]):
        base = df[(df["env"] == env) & (df["policy"] == baseline)].set_index("seed")["objective"]
        ratio = g.set_index("seed")["objective"] / base
        bound_ratio = g.set_index("seed")["objective"] / bounds[bounds["env"] == env].set_index("seed")["bound"]
        r = {f"{m}_mean": g[m].mean() for m in metrics}
        r.update({f"{m}_std": g[m].std(ddof=1) for m in metrics})
        r["ratio_mean"], r["ratio_std"] = ratio.mean(), ratio.std(ddof=1)
        r["bound_ratio_mean"], r["bound_ratio_std"] = bound_ratio.mean(), bound_ratio.std(ddof=1)
        rows[(env, pol)] = r
    return rows


def test_table_agrees_with_csv(bench_dir):
    df = pd.read_csv(bench_dir / "results.csv")
    metrics = ["objective", "avg_jct", "p95_jct", "makespan", "utilisation", "preemptions", "wall_s",
               "decisions_per_s"]
    bounds = pd.read_csv(bench_dir / "bounds.csv")
    expect = _recompute(df, metrics, "srtf", bounds)
    summary = pd.read_csv(bench_dir / "summary.csv")
    is_bound = summary["policy"].str.startswith("bound: ")
    assert is_bound.sum() == len(ENVS)  # one bound row per env, below its policies
    summary = summary[~is_bound]
    assert len(summary) == len(expect)
    for r in summary.itertuples(index=False):
        r = r._asdict()
        e = expect[(r["env"], r["policy"])]
        for k, v in e.items():
            assert r[k] == pytest.approx(v, rel=1e-9, abs=1e-12), (r["env"], r["policy"], k)
    # the markdown table: parse every "mean ± std" cell back and compare (to the printed precision)
    md = (bench_dir / "summary.md").read_text()
    env = None
    seen = 0
    for line in md.splitlines():
        m = re.match(r"### (\S+) ", line)
        if m:
            env = m.group(1)
            continue
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        pol = cells[0].strip("`")
        e = expect[(env, pol)]
        assert int(cells[1]) == 3
        shown = ["objective", "ratio", "bound_ratio", "avg_jct", "p95_jct", "makespan", "utilisation", "preemptions",
                 "wall_s", "decisions_per_s"]
        for name, cell in zip(shown, cells[2:], strict=True):
            # rounded to the std's two significant digits: equal up to half a unit of the last printed digit
            (mean, m_tol), (std, s_tol) = (_value_and_half_ulp(x) for x in cell.split("±"))
            assert mean == pytest.approx(e[f"{name}_mean"], rel=1e-9, abs=m_tol), (env, pol, name)
            assert std == pytest.approx(e[f"{name}_std"], rel=1e-9, abs=max(s_tol, 1e-9 * abs(mean))), (env, pol, name)
        seen += 1
    assert seen == len(expect)
    # the paper's JCT rate: SRTF is exactly 1
    assert summary[summary["policy"] == "srtf"]["ratio_mean"].tolist() == [1.0, 1.0]


def test_bench_bound_row_and_csv(bench_dir):
    """Every (env, seed) has its family's bound (EdgeCloudML: the standalone JCT); the summary's bound row holds its
    mean ± std, objective / bound is ≥ 1 for every policy, and the page names the bound under each table."""
    import gymnasium as gym

    from edgegym.core.bounds import family_bound
    from edgegym.families import family

    bounds = pd.read_csv(bench_dir / "bounds.csv")
    assert sorted(zip(bounds["env"], bounds["seed"], strict=True)) == sorted((e, s) for e in ENVS for s in SEEDS)
    assert set(bounds["bound_name"]) == {"standalone JCT"} and set(bounds["bound_sense"]) == {"lower"}
    env = gym.make("EdgeCloudML-testbed-v0")
    env.reset(seed=1)
    want = family_bound(family("EdgeCloudML"))(env.unwrapped).value
    got = bounds[(bounds["env"] == "EdgeCloudML-testbed-v0") & (bounds["seed"] == 1)]["bound"].iloc[0]
    assert got == pytest.approx(want)
    summary = pd.read_csv(bench_dir / "summary.csv")
    rows = summary[~summary["policy"].str.startswith("bound: ")]
    assert (rows["bound_ratio_mean"] >= 1.0).all()
    brow = summary[summary["policy"] == "bound: standalone JCT"]
    for env_id in ENVS:
        b = bounds[bounds["env"] == env_id]["bound"]
        r = brow[brow["env"] == env_id].iloc[0]
        assert r["objective_mean"] == pytest.approx(b.mean()) and r["bound_ratio_mean"] == 1.0
    md = (bench_dir / "summary.md").read_text()
    assert md.count("| bound: standalone JCT | 3 |") == len(ENVS)
    assert md.count("Bound: standalone JCT (lower bound on the objective") == len(ENVS)


def test_bench_no_bound(tmp_path):
    """``--no-bound``: no bounds.csv, no bound column or row."""
    out = tmp_path / "b"
    assert main(["bench", "--envs", "EdgeCloudML-tiny-v0", "--policies", "aonline", "--seeds", "0", "--out", str(out),
                 "--workers", "1", "--no-progress", "--no-plots", "--no-bound"]) == 0
    assert not (out / "bounds.csv").exists()
    md = (out / "summary.md").read_text()
    assert "objective / bound" not in md and "bound:" not in md


def test_bench_matches_run_episode(bench_dir):
    """The bench runs the same path as `edgegym run`: same objective for the same (env, policy, seed)."""
    from edgegym.agents.runner import run_episode

    df = pd.read_csv(bench_dir / "results.csv")
    row = df[(df["env"] == "EdgeCloudML-testbed-v0") & (df["policy"] == "aonline") & (df["seed"] == 1)].iloc[0]
    assert run_episode("EdgeCloudML-testbed-v0", "aonline", 1)["objective"] == pytest.approx(row["objective"])


def test_grid_plugs_in_by_registration():
    """`all` expands per env family from the registry: no policy list lives in the harness."""
    ids = __import__("edgegym").registered_ids()
    envs = [e for e in ("EdgeCloudML-tiny-v0", "EdgeUtility-tiny-v0") if e in ids]
    cells = build_grid(envs, ["all"], [0])
    from edgegym.agents.runner import env_family as _env_family

    for e in envs:
        got = {c.policy for c in cells if c.env == e}
        assert got == {n for n, s in POLICIES.items() if _env_family(e) in s.families}


def test_trace_windows_are_a_grid_axis():
    cells = build_grid(["EdgeCloudML-tiny-v0"], ["srtf"], [0, 1], windows=[0, 30], trace="philly")
    assert len(cells) == 4
    assert {c.window for c in cells} == {0, 30}
    assert all(c.env_config["workload"] == {"source": "philly", "window": c.window} for c in cells)


def test_failed_cell_is_reported_not_raised(tmp_path):
    res = run_bench([Cell("EdgeCloudML-tiny-v0", "srtf", 0),
                     Cell("EdgeCloudML-tiny-v0", "srtf", 1, env_config={"env": {"speed": -1}})],
                    tmp_path, workers=1, progress=False, plots=False)
    assert len(res["failed"]) == 1 and "speed" in res["failed"][0]["error"]
    assert len(res["results"]) == 1


def _cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["bench", "--envs", "Nope-v0"], "unknown env"),
        (["bench", "--envs", "EdgeCloudML-tiny-v0", "--policies", "nope"], "unknown policy"),
        (["bench", "--envs", "EdgeUtility-tiny-v0", "--policies", "aonline"], "does not support"),
        (["bench", "--envs", "EdgeCloudML-tiny-v0", "--seeds", "x"], "bad seed"),
        (["bench", "--envs", "EdgeCloudML-tiny-v0", "--workers", "0"], "--workers"),
        (["bench", "--envs", "EdgeCloudML-tiny-v0", "--backend", "spark"], "invalid choice"),
        (["bench", "--envs", "EdgeCloudML-tiny-v0", "--policies", "ppo:/nonexistent/model.zip"], "does not exist"),
    ],
)
def test_bench_bad_input_is_one_line(capsys, tmp_path, argv, needle):
    rc, _, err = _cli(capsys, *argv, "--out", str(tmp_path / "o"), "--no-progress")
    assert rc == 2
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_bench_unwritable_out(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, _, err = _cli(capsys, "bench", "--envs", "EdgeCloudML-tiny-v0", "--policies", "srtf", "--seeds", "0",
                      "--out", str(blocker / "sub"), "--no-progress")
    assert rc == 2 and "not a writable directory" in err and "Traceback" not in err


def test_ray_missing_message(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    rc, _, err = _cli(capsys, "bench", "--envs", "EdgeCloudML-tiny-v0", "--policies", "srtf", "--seeds", "0",
                      "--backend", "ray", "--out", str(tmp_path), "--no-progress")
    assert rc == 2 and "pip install 'edgegym[ray]'" in err


def test_ray_backend_local_cluster(tmp_path):
    pytest.importorskip("ray")
    cells = build_grid(["EdgeCloudML-tiny-v0"], ["srtf", "aonline"], [0, 1])
    res = run_bench(cells, tmp_path, workers=1, backend="ray", progress=False, plots=False)
    assert not res["failed"]
    local = run_bench(cells, tmp_path / "local", workers=1, progress=False, plots=False) if (
        (tmp_path / "local").mkdir() is None) else None
    cols = ["env", "policy", "seed", "objective", "makespan"]
    pd.testing.assert_frame_equal(res["results"][cols], local["results"][cols])


def _value_and_half_ulp(text: str) -> tuple[float, float]:
    """``"9.833"`` -> ``(9.833, 0.0005)``: the printed number and half a unit of its last digit."""
    from decimal import Decimal

    d = Decimal(text.strip())
    return float(d), 0.5 * 10.0 ** d.as_tuple().exponent * (1 + 1e-9)
