"""The CLI's shared flags: every option documented, the same seed/config flags on every subcommand that
runs episodes, a mean ± std summary, --version, a saved agent by path, numbers rounded to their precision."""

from __future__ import annotations

import argparse
import json
import warnings

import pytest
from edgegym.agents.cli import build_parser, main
from edgegym.agents.errors import UserError
from edgegym.agents.options import fmt_pm, install_notice_hook, parse_seeds, resolve_policy


def _subparsers():
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return parser, action.choices
    raise AssertionError("no subcommands")


def test_every_option_has_help():
    parser, subs = _subparsers()
    missing = []
    for name, p in [("edgegym", parser), *subs.items()]:
        for a in p._actions:
            if a.option_strings and a.help in (None, "", argparse.SUPPRESS):
                missing.append(f"{name} {a.option_strings[0]}")
    assert not missing, f"options without help: {missing}"


@pytest.mark.parametrize("cmd", ["run", "eval", "bench"])
def test_same_env_seed_config_flags(cmd):
    _, subs = _subparsers()
    flags = {s for a in subs[cmd]._actions for s in a.option_strings}
    assert {"--env-config", "--seed", "--episodes", "--seeds"} <= flags
    assert "--env" in flags or "--envs" in flags


def test_render_and_train_take_env_and_config():
    _, subs = _subparsers()
    for cmd in ("render", "train"):
        flags = {s for a in subs[cmd]._actions for s in a.option_strings}
        assert {"--env", "--env-config", "--seed"} <= flags, cmd


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith("edgegym ")


def test_run_seed_range_and_summary(capsys):
    assert main(["run", "--env", "EdgeCloudML-tiny-v0", "--policy", "srtf", "--seeds", "3-4", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "seed 3]" in out and "seed 4]" in out
    # the tiny preset's jobs are inline: every seed gives the same objective, so the std is exactly 0
    assert "2 episode(s), seeds 3, 4; mean ± std over episodes" in out
    assert [ln.split()[1:] for ln in out.splitlines() if ln.strip().startswith("objective ")][0][1:] == ["±", "0"]


def test_run_json_puts_the_summary_on_stderr(capsys):
    assert main(["run", "--env", "EdgeCloudML-tiny-v0", "--seeds", "0,1", "--json", "--env-config",
                 '{"env": {"reward_scale": 2.0}}']) == 0
    out, err = capsys.readouterr()
    recs = [json.loads(x) for x in out.strip().splitlines()]
    assert [r["seed"] for r in recs] == [0, 1]
    assert recs[0]["episode_return"] == pytest.approx(-recs[0]["objective"] / 2.0)  # --env-config applied
    assert "mean ± std over episodes" in err


def test_bad_seed_range_is_a_user_error(capsys):
    assert main(["run", "--env", "EdgeCloudML-tiny-v0", "--seeds", "5-2"]) == 2
    assert "bad seed '5-2'" in capsys.readouterr().err


def test_parse_seeds():
    assert parse_seeds(["100-104"]) == [100, 101, 102, 103, 104]
    assert parse_seeds(["0,2", "2", "7"]) == [0, 2, 7]
    with pytest.raises(UserError):
        parse_seeds(["x"])


def test_saved_agent_by_path(tmp_path):
    d = tmp_path / "agent"
    d.mkdir()
    (d / "model.zip").write_bytes(b"")
    (d / "model.edgegym.json").write_text(json.dumps({"algo": "maskable-ppo", "env_id": "EdgeUtility-tiny-v0"}))
    assert resolve_policy(str(d)) == f"maskable-ppo:{d / 'model.zip'}"
    assert resolve_policy(str(d / "model.zip")) == f"maskable-ppo:{d / 'model.zip'}"
    assert resolve_policy("aonline") == "aonline"  # a registered name is left alone
    assert resolve_policy("ppo:x/model.zip") == "ppo:x/model.zip"
    (d / "model.edgegym.json").unlink()
    with pytest.raises(UserError, match="no sidecar"):
        resolve_policy(str(d / "model.zip"))
    with pytest.raises(UserError, match="does not exist"):
        resolve_policy(str(tmp_path / "none.zip"))


@pytest.mark.parametrize(
    "mean,std,text",
    [(10.7, 2.18e-15, "10.7 ± 0"), (1234.567, 12.3, "1235 ± 12"), (0.01234, 0.0005, "0.01234 ± 0.00050"),
     (96.2, 1.0, "96.2 ± 1.0"), (3.2e7, 1.1e5, "3.2e+07 ± 1.1e+05"), (5.0, 0.0, "5 ± 0"),
     (float("nan"), 0.0, "–")],
)
def test_fmt_pm_rounds_to_the_std(mean, std, text):
    assert fmt_pm(mean, std) == text


def test_notice_is_one_line(capsys):
    install_notice_hook()
    warnings.warn("\x1b[33mthe trace is absent; using synthetic data\x1b[0m", UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err == "edgegym: notice: the trace is absent; using synthetic data\n"


def test_render_mode_reaches_the_env_so_the_chart_has_bars(tmp_path, capsys):
    """``edgegym render`` / ``bench --gantt`` build the env with render_mode="rgb_array" (EdgeUtility records
    its executed segments only then: without it the chart was empty)."""
    from edgegym.agents.runner import run_episode

    from edgegym.families.edge_utility.rendering import gantt_data

    seen = {}
    run_episode("EdgeUtility-tiny-v0", "o4a", 0, render_mode="rgb_array",
                on_end=lambda env, rec: seen.update(n=len(gantt_data(env)["segments"])))
    assert seen["n"] > 0
    png = tmp_path / "u.png"
    assert main(["render", "--env", "EdgeUtility-tiny-v0", "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
