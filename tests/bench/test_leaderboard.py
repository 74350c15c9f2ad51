"""benchmarks/leaderboard.py in a quick mode on the tiny presets: one row per policy (registered, rollout, a saved
agent) with objective, ratio to the bound (or why there is none) and decisions/s; resumable; --from-csv re-renders."""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IDS = ["EdgeCloudML-tiny-v0", "EdgeUtility-tiny-v1", "HeteroML-tiny-v0", "WirelessUDL-tiny-v0"]


def _script():
    spec = importlib.util.spec_from_file_location("leaderboard", ROOT / "benchmarks" / "leaderboard.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tables(page: str) -> dict[str, list[list[str]]]:
    out, env = {}, None
    for ln in page.splitlines():
        if ln.startswith("## "):
            env = ln[3:].strip()
            out[env] = []
        elif env and ln.startswith("| ") and not ln.startswith("| rank") and not ln.startswith("| – |"):
            out[env].append([c.strip() for c in ln.strip("|").split("|")])
    return out


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    pytest.importorskip("sb3_contrib")
    from edgegym.agents.cli import main

    d = tmp_path_factory.mktemp("agent")
    hp = d / "hp.yaml"
    hp.write_text("default:\n  n_envs: 1\n  eval_freq: 0\n  n_steps: 32\n  batch_size: 32\n  n_epochs: 1\n"
                  "  n_eval_episodes: 1\n  policy: SharedRowPolicy\n")
    assert main(["train", "--env", "EdgeUtility-tiny-v1", "--algo", "maskable-ppo", "--timesteps", "32", "--out",
                 str(d / "run"), "--hyperparams", str(hp), "--replace-hyperparams", "--no-progress"]) == 0
    return d / "run"


def test_quick_leaderboard_structure(tmp_path, agent, capsys):
    from edgegym.agents.registry import policy_names
    from edgegym.agents.runner import env_family

    lb = _script()
    page_path = tmp_path / "leaderboard.md"
    argv = ["--quick", "--envs", *IDS, "--no-v1", "--seeds", "100", "--workers", "1", "--out", str(page_path),
            "--agents", str(agent), "--rollout", "rollout(K=1,H=3):{base}"]
    assert lb.main(argv) == 0
    page = page_path.read_text()
    # the page names the command that made it, with every setting that changes what it runs (not the output paths)
    assert (f"`python benchmarks/leaderboard.py --quick --envs {' '.join(IDS)} --no-v1 --seeds 100 --workers 1 "
            "--rollout 'rollout(K=1,H=3):{base}'`") in page
    assert "/tmp/" not in page and str(ROOT) not in page
    assert re.search(r"on \d{4}-\d\d-\d\d \d\d:\d\d UTC; machine: .+CPU core", page)
    assert "**lower is better**" in page and "**higher is better**" in page
    tables = _tables(page)
    assert list(tables) == IDS
    for env_id, rows in tables.items():
        fam = env_family(env_id)
        labels = [r[1].replace("**", "").replace(" ★", "") for r in rows]
        want = {f"`{n}`" for n in policy_names(fam) if not n.startswith("rollout")}
        assert want <= set(labels), (env_id, want - set(labels))
        assert rows[0][1].endswith("★") and sum("★" in r[1] for r in rows) == 1  # the best row, marked once
        assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
        for r in rows:
            assert r[2] in ("reference", "variant", "baseline", "trivial", "rollout", "agent")
            float(r[3].split(" ± ")[0].replace(",", ""))  # objective mean ± std
            assert r[4].startswith("n/a") or float(r[4].split(" ± ")[0]) > 0  # ratio to the bound
            assert r[5] == "n/a" or r[5].endswith(" %") and r[5][0] in "+-"  # against the best heuristic
            assert r[6] == "n/a" or float(r[6]) <= 1 + 1e-9  # gap closed: at most the whole room
            assert r[7] == "n/a" or float(r[7].replace(",", "")) > 0  # decisions/s
        objs = [float(r[3].split(" ± ")[0].replace(",", "")) for r in rows]
        hib = fam == "EdgeUtility"
        assert objs == sorted(objs, reverse=hib)
    # the agent runs on the id it was trained on only; a rollout row where a base accepts it
    assert any(r[1].startswith("agent `run`") or "agent `run`" in r[1] for r in tables["EdgeUtility-tiny-v1"])
    assert not any("agent" in r[1] for r in tables["HeteroML-tiny-v0"])
    if lb.rollout_name("rollout(K=1,H=3):{base}", "ondisc", "EdgeUtility-tiny-v1") is not None:
        assert any(r[2] == "rollout" for r in tables["EdgeUtility-tiny-v1"])
    else:  # a version without the rollout policies: no rollout row, and no failure either
        assert not any(r[2] == "rollout" for rows in tables.values() for r in rows)
    # ratios: utility / upper bound <= 1, cost / lower bound >= 1, weighted completion / lower bound >= 1
    for env_id, op in (("EdgeUtility-tiny-v1", "le"), ("WirelessUDL-tiny-v0", "ge"), ("HeteroML-tiny-v0", "ge"),
                       ("EdgeCloudML-tiny-v0", "ge")):
        for r in tables[env_id]:
            if r[2] == "rollout" and r[4].startswith("n/a"):
                continue
            v = float(r[4].split(" ± ")[0])
            assert (v <= 1 + 1e-9) if op == "le" else (v >= 1 - 1e-9), (env_id, r)
    # the bound a family declares is named under its table, with its row and the best heuristic
    assert "| – | bound: standalone JCT | bound |" in page and "Best heuristic" in page
    assert "Bound: standalone JCT (lower bound; ratio ≥ 1, 1 = the bound); it bounds every legal schedule" in page
    data = tmp_path / "leaderboard"
    recs = [json.loads(x) for x in (data / "results.jsonl").read_text().splitlines()]
    assert {r["kind"] for r in recs} == {"episode", "bound"} and (data / "results.csv").is_file()
    capsys.readouterr()

    # resumable: the same command again runs nothing new and writes the same tables
    assert lb.main(argv) == 0
    err = capsys.readouterr().err
    ok = [r for r in recs if "error" not in r]
    n = len([r for r in ok if r["kind"] == "episode" and r.get("policy_kind") != "rollout"
             or r["kind"] == "bound" and "upper" not in r])
    assert f"{n} runs in phase 1, {n} already" in err
    assert _tables(page_path.read_text()) == tables
    # only the runs that had failed are tried again
    assert len((data / "results.jsonl").read_text().splitlines()) == len(recs) + len(recs) - len(ok)

    # --from-csv: the page from the records alone
    again = tmp_path / "again.md"
    assert lb.main(["--quick", "--from-csv", str(data / "results.csv"), "--out", str(again)]) == 0
    assert _tables(again.read_text()) == tables


def test_bad_flags():
    lb = _script()
    with pytest.raises(SystemExit):
        lb.main(["--workers", "0", "--from-csv", "x.csv"])
    with pytest.raises(SystemExit):
        lb.main(["--envs", "NoSuch-v0", "--quick"])


def test_policy_kinds_come_from_the_registry():
    """A variant is declared on its ``PolicySpec`` (``variant=True``), the reference / baseline split follows the
    policy's module, and the trivial policies are named in the script."""
    lb = _script()
    assert lb.policy_kind("okita-one", "WirelessUDL") == "variant"
    assert lb.policy_kind("okita", "WirelessUDL") == "reference"
    assert lb.policy_kind("fifo", "WirelessUDL") == "baseline"
    assert lb.policy_kind("random", "WirelessUDL") == "trivial"
    assert lb.policy_kind("rollout:okita", "WirelessUDL") == "rollout"


def test_rollout_base_forces_the_rollout_row(tmp_path):
    """``--rollout-base ID=POLICY`` picks the rollout row's base on an id; ``ID=<full rollout name>`` is that row as
    it is (other K, H than ``--rollout``); both are named in the page's command; a bad item is an error."""
    lb = _script()
    page = tmp_path / "lb.md"
    common = ["--quick", "--envs", "WirelessUDL-tiny-v0", "--no-v1", "--seeds", "100", "--workers", "1",
              "--policies", "okita-one", "greedy-min-cost", "random", "--agents", "--rollout", "rollout(K=1,H=2):{base}"]
    assert lb.main([*common, "--out", str(page), "--rollout-base", "WirelessUDL-tiny-v0=greedy-min-cost"]) == 0
    rows = _tables(page.read_text())["WirelessUDL-tiny-v0"]
    assert [r[1].strip("*★ `") for r in rows if r[2] == "rollout"] == ["rollout(K=1,H=2):greedy-min-cost"]
    full = "rollout(K=1,H=1,D=1):okita-one"
    page2 = tmp_path / "lb2.md"
    assert lb.main([*common, "--out", str(page2), "--rollout-base", f"WirelessUDL-tiny-v0={full}"]) == 0
    text = page2.read_text()
    assert f"--rollout-base 'WirelessUDL-tiny-v0={full}'" in text
    assert full in [r[1].strip("*★ `") for r in _tables(text)["WirelessUDL-tiny-v0"] if r[2] == "rollout"]
    with pytest.raises(SystemExit):
        lb.main([*common, "--out", str(page2), "--rollout-base", "NoSuch-v0=okita"])


def _fake(env_id: str, objs: dict, bounds: list, sense: str = "lower") -> list[dict]:
    """Fake results: ``objs`` policy -> objective per seed; ``bounds`` per seed (a declared bound's records)."""
    recs = [{"kind": "episode", "env": env_id, "policy": p, "seed": s, "objective": v, "policy_kind": k,
             "decisions_per_cpu_s": 100.0}
            for p, (k, vals) in objs.items() for s, v in enumerate(vals)]
    recs += [{"kind": "bound", "env": env_id, "seed": s, "bound": b, "bound_kind": "fake bound", "bound_sense": sense,
              "bound_text": "every schedule", "bound_parts": {"a": b, "b": float("nan")}} for s, b in enumerate(bounds)]
    return recs


def test_best_heuristic_gap_closed_and_improvement_on_fake_results():
    """Costs: the best heuristic is the best non-learned, non-rollout row run on every seed; the rollout and the
    agent are measured against it: improvement in % of its mean, gap closed = (best − entry) / (best − bound)."""
    lb = _script()
    objs = {"h1": ("reference", [100.0, 120.0]), "h2": ("trivial", [90.0, 110.0]),
            "part": ("baseline", [10.0]),  # one seed only: never the best heuristic
            "rollout:h2": ("rollout", [80.0, 100.0]), "ppo:x/model.zip": ("agent", [60.0, 60.0])}
    rows, info = lb.build_rows(_fake("WirelessUDL-tiny-v0", objs, [50.0, 70.0]), "WirelessUDL-tiny-v0")
    by = {r["policy"]: r for r in rows}
    assert info["best"] == "h2" and info["bound_mean"] == 60.0 and not info["higher_is_better"]
    assert by["h2"]["vs_best_pct"] == 0.0 and by["h2"]["gap_closed"] == 0.0
    assert by["rollout:h2"]["vs_best_pct"] == pytest.approx(10.0)  # 90 against 100
    assert by["rollout:h2"]["gap_closed"] == pytest.approx(0.25)  # (100 − 90) / (100 − 60)
    assert by["ppo:x/model.zip"]["gap_closed"] == pytest.approx(1.0)  # it reaches the bound's mean
    assert by["h1"]["vs_best_pct"] == pytest.approx(-10.0) and by["h1"]["gap_closed"] == pytest.approx(-0.25)
    assert by["rollout:h2"]["ratio_mean"] == pytest.approx((80 / 50 + 100 / 70) / 2)
    assert info["parts"]["a"] == [50.0, 70.0] and all(math.isnan(v) for v in info["parts"]["b"])
    line = lb.bound_line(info)
    assert line.startswith("Bound: fake bound (lower bound; ratio ≥ 1") and "it bounds every schedule" in line
    assert "a 60 ± 14" in line and "b not computed" in line


def test_gap_closed_for_a_utility_and_edge_cases():
    """A utility (upper bound): the same formula; the direction comes from the bound's sense; no room or no bound:
    n/a."""
    lb = _script()
    objs = {"h": ("baseline", [80.0]), "rollout:h": ("rollout", [90.0])}
    rows, info = lb.build_rows(_fake("WirelessUDL-tiny-v0", objs, [100.0], sense="upper"), "WirelessUDL-tiny-v0")
    by = {r["policy"]: r for r in rows}
    assert info["higher_is_better"] and rows[0]["policy"] == "rollout:h"
    assert by["rollout:h"]["gap_closed"] == pytest.approx(0.5) and by["rollout:h"]["vs_best_pct"] == pytest.approx(12.5)
    assert math.isnan(lb.gap_closed(5.0, 5.0, 5.0)) and math.isnan(lb.gap_closed(5.0, 6.0, math.nan))
    assert math.isnan(lb.improvement_pct(1.0, 0.0, False))
    assert lb.best_heuristic([{"policy": "r", "kind": "rollout", "n": 1, "objective_mean": 1.0}], False) is None


def test_page_shows_the_new_columns_from_fake_results(tmp_path):
    """The page from records alone (--from-csv): the columns, the bound row, the bound named with its parts."""
    lb = _script()
    objs = {"h1": ("reference", [100.0, 120.0]), "rollout:h1": ("rollout", [80.0, 100.0])}
    csv = tmp_path / "results.jsonl"
    csv.write_text("\n".join(json.dumps(r) for r in _fake("WirelessUDL-tiny-v0", objs, [50.0, 70.0])) + "\n")
    out = tmp_path / "page.md"
    assert lb.main(["--from-csv", str(csv), "--out", str(out), "--envs", "WirelessUDL-tiny-v0", "--no-v1"]) == 0
    page = out.read_text()
    head = "| rank | policy | kind | objective | objective / bound | vs best heuristic | gap closed | decisions/s |"
    assert head in page
    assert "| – | bound: fake bound | bound | 60 ± 14 | 1 | +45.5 % | 1 | – |" in page
    assert "| 1 | **`rollout:h1`** ★ | rollout | 90 ± 14 | 1.51 ± 0.12 | +18.2 % | 0.40 |" in page
    assert "Best heuristic (the best shipped non-learned, non-rollout policy): `h1`." in page


def test_a_bound_record_of_the_former_code_is_run_again():
    """A results.jsonl from before a family declared its bound holds records of this script's own bound (or its
    "n/a"); a resumed run computes those again with the declared bound, and keeps the declared ones."""
    lb = _script()
    old = {"kind": "bound", "env": "EdgeCloudML-tiny-v0", "seed": 100, "na": "continuous-time preset"}
    assert lb.stale_bound(old)
    assert not lb.stale_bound({**old, "bound": 12.5, "bound_sense": "lower"})
    assert not lb.stale_bound({"kind": "episode", "env": "EdgeCloudML-tiny-v0", "seed": 100, "policy": "aonline"})
