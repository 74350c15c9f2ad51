"""The one-line notice while edgegym's kernels compile (a Numba cache miss), once per kernel module."""

from __future__ import annotations

import io

import pytest

numba = pytest.importorskip("numba")

from edgegym.core import jit  # noqa: E402


def test_notice_once_per_module(monkeypatch):
    monkeypatch.setattr(jit, "_noticed", set())
    monkeypatch.delenv("EDGEGYM_COMPILE_NOTICE", raising=False)
    buf = io.StringIO()
    assert jit.compile_notice("edgegym.families.some_family._kernels", buf)
    assert not jit.compile_notice("edgegym.families.some_family._kernels", buf)
    lines = buf.getvalue().splitlines()
    assert lines == ["edgegym: compiling the some_family kernels for this machine (first use only: cached afterwards)"]


def test_notice_quotes_the_family_s_measured_first_compile(monkeypatch):
    """A registered family's kernel module: the line names the family and the time its record declares."""
    from dataclasses import replace

    from edgegym.families import families

    fam = next(iter(families().values()))
    monkeypatch.delenv("EDGEGYM_COMPILE_NOTICE", raising=False)
    for extra, took in (({"first_compile_s": 17.5}, "about 18 s of CPU"),
                        ({"first_compile_s": 27.0, "first_compile_v1_s": 76.3}, "about 27 s of CPU, the -v1 ids 76 s"),
                        ({"first_compile_s": 13.0, "first_compile_v1_s": 13.2}, "about 13 s of CPU")):
        fake = replace(fam, extra={**fam.extra, **extra})
        monkeypatch.setattr(jit, "_family_of_module", lambda module, fake=fake: fake)
        monkeypatch.setattr(jit, "_noticed", set())
        buf = io.StringIO()
        assert jit.compile_notice(f"edgegym.families.{fam.key}._kernels", buf)
        assert buf.getvalue() == (f"edgegym: compiling the {fam.name} kernels for this machine (first use only: "
                                  f"measured at {took} with an empty cache, longer on a busy machine; cached "
                                  "afterwards)\n")


def test_every_family_declares_its_measured_first_compile():
    from edgegym.families import families

    for fam in families().values():
        assert fam.extra.get("first_compile_s", 0) > 0, fam.name


def test_family_of_module():
    from edgegym.families import families

    for fam in families().values():
        assert jit._family_of_module(f"edgegym.families.{fam.key}._kernels") is fam
    assert jit._family_of_module("edgegym.families.no_such_family._kernels") is None
    assert jit._family_of_module("someone_else.kernels") is None


def test_notice_can_be_silenced(monkeypatch):
    monkeypatch.setattr(jit, "_noticed", set())
    monkeypatch.setenv("EDGEGYM_COMPILE_NOTICE", "0")
    buf = io.StringIO()
    assert not jit.compile_notice("edgegym.families.x._kernels", buf)
    assert buf.getvalue() == ""


def test_a_real_compile_of_an_edgegym_kernel_prints_it(monkeypatch, capsys):
    """Numba's ``numba:compile`` event (fired on compiles, never on cache loads) triggers the notice; other
    packages' compiles do not."""
    monkeypatch.setattr(jit, "_noticed", set())
    monkeypatch.delenv("EDGEGYM_COMPILE_NOTICE", raising=False)

    def kernel(x):
        return x + 1

    def other(x):
        return x + 2

    kernel.__module__ = "edgegym.families.fake_family._kernels"
    other.__module__ = "someone_else.kernels"
    assert numba.njit(other)(1) == 3
    assert capsys.readouterr().err == ""
    before = jit.compile_seconds()
    assert numba.njit(kernel)(1) == 2
    assert "compiling the fake_family kernels" in capsys.readouterr().err
    # the compile is timed (the runner keeps it out of an episode's wall_s), per kernel module
    assert jit.compile_seconds() > before
    times = jit.compile_times()["edgegym.families.fake_family._kernels"]
    assert times["wall_s"] > 0 and times["cpu_s"] > 0


def test_runner_keeps_the_compile_out_of_wall_s(monkeypatch):
    """A compile during an episode is subtracted from its ``wall_s``: simulated by a clock that jumps 100 s during
    the first step while the compile counter grows by the same 100 s."""
    import time
    import types

    from edgegym.agents import runner

    jump = [0.0]
    monkeypatch.setattr(jit, "compile_seconds", lambda: jump[0])
    monkeypatch.setattr(runner, "time", types.SimpleNamespace(perf_counter=lambda: time.perf_counter() + jump[0]))

    def on_step(n):
        if n == 1:
            jump[0] += 100.0

    rec = runner.run_episode("EdgeCloudML-tiny-v0", "aonline", 0, on_step=on_step)
    assert 0 <= rec["wall_s"] < 50
    jump[0] = 0.0
    monkeypatch.setattr(jit, "compile_seconds", lambda: 0.0)  # the same jump, no compile: it stays in wall_s
    assert runner.run_episode("EdgeCloudML-tiny-v0", "aonline", 0, on_step=on_step)["wall_s"] >= 100
