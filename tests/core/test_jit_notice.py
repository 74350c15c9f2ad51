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
    assert lines == ["edgegym: compiling the some_family kernels for this machine (first use only, about 10-25 s; "
                     "cached afterwards)"]


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
    assert numba.njit(kernel)(1) == 2
    assert "compiling the fake_family kernels" in capsys.readouterr().err
