"""``edgegym.core.jit.compiled_entry``: the compiled version of a kernel looked up once and called without Numba's
dispatcher gives what the dispatcher gives; types never compiled find no entry (the caller calls the dispatcher)."""

from __future__ import annotations

import numpy as np
import pytest

from edgegym.core import jit

pytestmark = pytest.mark.skipif(not jit.HAVE_NUMBA, reason="needs Numba")


@jit.njit
def _scaled(a, i, x):
    return a[i] * x


def test_entry_after_compile_gives_the_dispatchers_result():
    a = np.arange(7.0)
    _scaled(a, 0, 1.0)  # compiled (or loaded from the cache) for (float64[:], int64, float64)
    entry = jit.compiled_entry(_scaled, (a, 0, 1.0))
    assert entry is not None
    rng = np.random.default_rng(0)
    for _ in range(200):
        b = rng.random(7)
        i, x = int(rng.integers(7)), float(rng.random())
        assert jit.fingerprint(b) == jit.fingerprint(a)
        assert entry(b, i, x) == _scaled(b, i, x)
    assert jit.compiled_entry(_scaled, (a, 3, 2.5)) is entry  # looked up once per set of fingerprints


def test_no_entry_for_types_never_compiled():
    a = np.arange(5, dtype=np.int16)
    assert jit.compiled_entry(_scaled, (a, 0, 1.0)) is None
    assert jit.compiled_entry(_scaled, (np.arange(4.0).reshape(2, 2), 0, 1.0)) is None


def test_fingerprint_separates_what_selects_a_version():
    a = np.zeros(3)
    assert jit.fingerprint(a) == jit.fingerprint(np.ones(5))
    assert jit.fingerprint(a) != jit.fingerprint(a.astype(np.float32))
    assert jit.fingerprint(a) != jit.fingerprint(a[::2])  # layout
    ro = a.copy()
    ro.flags.writeable = False
    assert jit.fingerprint(a) != jit.fingerprint(ro)


def test_entry_for_an_argument_without_a_fingerprint():
    """A StructRef proxy has no Numba fingerprint: its Numba type keys the lookup instead (HeteroML-v1's step hands
    its kernels one), and the entry gives what the dispatcher gives."""
    from numba import njit
    from numba.core import types
    from numba.experimental import structref

    @structref.register
    class _PairType(types.StructRef):
        pass

    class _Pair(structref.StructRefProxy):
        pass

    structref.define_proxy(_Pair, _PairType, ["a", "x"])

    @njit
    def scaled_pair(p, i):
        return p.a[i] * p.x

    pair = _Pair(np.arange(4.0), 2.0)
    with pytest.raises(NotImplementedError):
        jit.fingerprint(pair)
    assert jit.compiled_entry(scaled_pair, (pair, 1)) is None  # not compiled yet
    want = scaled_pair(pair, 3)
    entry = jit.compiled_entry(scaled_pair, (pair, 1))
    assert entry is not None
    assert entry(pair, 3) == want == 6.0
    assert jit.compiled_entry(scaled_pair, (_Pair(np.ones(2), 5.0), 0)) is entry
