"""benchmarks/regression_gate.py without timing anything: the comparison of recorded and measured ratios (pass /
fail per path), the baseline file's checks and the shipped baseline, and the test-only kernel slowdown's patching."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gate():
    spec = importlib.util.spec_from_file_location("regression_gate", ROOT / "benchmarks" / "regression_gate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["regression_gate"] = mod  # its dataclass looks its module up there
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop("regression_gate", None)


def test_compare_fails_only_beyond_the_tolerance(gate):
    recorded = {"a": 1.0, "b": 2.0, "c": 0.5, "d": 4.0}
    measured = {"a": 0.76, "b": 1.49, "c": 0.9, "d": 3.0}  # -24 %, -25.5 %, +80 %, exactly -25 %
    checks = gate.compare(recorded, measured, 0.25)
    assert [(c.name, c.status) for c in checks] == [("a", "ok"), ("b", "slower"), ("c", "ok"), ("d", "ok")]
    assert [c.name for c in checks if c.failed] == ["b"]
    assert checks[0].change == pytest.approx(-0.24) and checks[2].change == pytest.approx(0.8)
    # a tighter tolerance catches the smaller slowdowns too
    assert [c.name for c in gate.compare(recorded, measured, 0.1) if c.failed] == ["a", "b", "d"]


def test_compare_skipped_and_new_paths_pass(gate):
    checks = gate.compare({"a": 1.0, "philly": 0.05}, {"a": 1.0, "philly": None, "extra": 3.0}, 0.25)
    assert [(c.name, c.status) for c in checks] == [("a", "ok"), ("philly", "skipped"), ("extra", "new")]
    assert not any(c.failed for c in checks)
    assert checks[1].change is None and checks[2].recorded is None
    # a recorded path this run did not measure at all is skipped too, never a failure
    assert [c.status for c in gate.compare({"gone": 1.0}, {}, 0.25)] == ["skipped"]


@pytest.mark.parametrize("tol", [-0.1, 1.0, 2.0])
def test_compare_refuses_a_tolerance_outside_0_1(gate, tol):
    with pytest.raises(ValueError, match="tolerance"):
        gate.compare({"a": 1.0}, {"a": 1.0}, tol)


def test_read_baseline_names_the_file_and_key(gate, tmp_path):
    f = tmp_path / "base.json"
    with pytest.raises(SystemExit, match="base.json: no baseline; record one with --update"):
        gate.read_baseline(f)
    f.write_text("{not json", encoding="utf-8")
    with pytest.raises(SystemExit, match="base.json: not valid JSON"):
        gate.read_baseline(f)
    f.write_text(json.dumps({"edgegym_version": "0.5.1"}), encoding="utf-8")
    with pytest.raises(SystemExit, match="key 'ratios'"):
        gate.read_baseline(f)
    for bad in (0.0, -1.0, "fast", True, float("nan")):
        f.write_text(json.dumps({"ratios": {"steps/X-v0": 0.05, "fork/X-v0": bad}}), encoding="utf-8")
        with pytest.raises(SystemExit, match=r"key 'ratios\.fork/X-v0' must be a positive number"):
            gate.read_baseline(f)
    f.write_text(json.dumps({"ratios": {"steps/X-v0": 0.05}}), encoding="utf-8")
    assert gate.read_baseline(f)["ratios"] == {"steps/X-v0": 0.05}


def test_the_shipped_baseline_records_every_measured_path(gate):
    base = gate.read_baseline(gate.DEFAULT_BASELINE)
    assert list(base["ratios"]) == gate.path_names()
    assert base["edgegym_version"] and base["machine"]["cpu"] and base["commit"]
    assert len(gate.path_names()) == 8 + 2 + 4 + 2  # eight ids, two decisions, four forks, the Philly prefix (two paths)


def test_slowed_kernel_wraps_the_function_and_restores_it(gate, monkeypatch):
    mod = types.ModuleType("fake_kernels")
    calls = []

    def kernel(x, y=1):
        calls.append((x, y))
        return x + y

    mod.kernel = kernel
    monkeypatch.setitem(sys.modules, "fake_kernels", mod)
    with gate.slowed_kernel("fake_kernels:kernel=1.5"):
        assert mod.kernel is not kernel
        assert mod.kernel(2, y=3) == 5 and calls == [(2, 3)]  # the real kernel runs once, with its arguments
    assert mod.kernel is kernel
    with gate.slowed_kernel(None):
        assert mod.kernel is kernel
