"""The one Numba decorator every family's compiled kernels use.

``njit(f)`` compiles ``f`` with ``cache=True`` (and ``nogil=True``) when Numba is installed (a core
dependency); without it the function runs as plain Python with identical results, and ``f.py_func`` is ``f``
either way, so differential tests can call the pure version. Import this module only from kernel modules:
``import edgegym`` must not load Numba.
"""

from __future__ import annotations

__all__ = ["HAVE_NUMBA", "njit"]

try:
    from numba import njit as _njit

    def njit(f):
        """Compile ``f`` (cached on disk, GIL released)."""
        return _njit(cache=True, nogil=True)(f)

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised only without numba

    def njit(f):
        """No Numba: ``f`` itself, with ``f.py_func = f``."""
        f.py_func = f
        return f

    HAVE_NUMBA = False
