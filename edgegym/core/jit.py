"""The one Numba decorator every family's compiled kernels use.

``njit(f)`` compiles ``f`` with ``cache=True`` (and ``nogil=True``) when Numba is installed (a core
dependency); ``njit_inline(f)`` also asks Numba to inline ``f`` into the compiled functions that call it (at the
IR level: a call of a compiled function costs two reference-count updates per array argument, which dominates
small helpers called in hot loops with many arrays); without it the function runs as plain Python with
identical results, and ``f.py_func`` is ``f`` either way, so differential tests can call the pure version.
Import this module only from kernel modules: ``import edgegym`` must not load Numba.
"""

from __future__ import annotations

__all__ = ["HAVE_NUMBA", "njit", "njit_inline"]

try:
    from numba import njit as _njit

    def njit(f):
        """Compile ``f`` (cached on disk, GIL released)."""
        return _njit(cache=True, nogil=True)(f)

    def njit_inline(f):
        """Compile ``f`` (cached, GIL released) to be inlined into its compiled callers."""
        return _njit(cache=True, nogil=True, inline="always")(f)

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised only without numba

    def njit(f):
        """No Numba: ``f`` itself, with ``f.py_func = f``."""
        f.py_func = f
        return f

    njit_inline = njit
    HAVE_NUMBA = False
