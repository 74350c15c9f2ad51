"""The one Numba decorator every family's compiled kernels use.

``njit(f)`` compiles ``f`` with ``cache=True`` (and ``nogil=True``) when Numba is installed (a core
dependency); ``njit_inline(f)`` also asks Numba to inline ``f`` into the compiled functions that call it (at the
IR level: a call of a compiled function costs two reference-count updates per array argument, which dominates
small helpers called in hot loops with many arrays); without it the function runs as plain Python with
identical results, and ``f.py_func`` is ``f`` either way, so differential tests can call the pure version.
Import this module only from kernel modules: ``import edgegym`` must not load Numba.

The first time a kernel module compiles on a machine (a Numba cache miss: loading a cached kernel compiles nothing),
one line on stderr says so (``edgegym: compiling …``), since the first step of a family can then take 10-25 s;
``EDGEGYM_COMPILE_NOTICE=0`` silences it.
"""

from __future__ import annotations

import os
import sys

__all__ = ["HAVE_NUMBA", "compile_notice", "njit", "njit_inline"]

_noticed: set[str] = set()


def compile_notice(module: str, stream=None) -> bool:
    """Print the one-line compile notice for the kernel module ``module`` once per process; whether it printed."""
    if module in _noticed or os.environ.get("EDGEGYM_COMPILE_NOTICE", "1") == "0":
        return False
    _noticed.add(module)
    family = module.split(".")[-2] if module.count(".") >= 2 else module
    print(f"edgegym: compiling the {family} kernels for this machine (first use only, about 10-25 s; "
          "cached afterwards)", file=stream or sys.stderr, flush=True)
    return True


try:
    from numba import njit as _njit
    from numba.core import event as _event

    class _CompileListener(_event.Listener):
        """Numba fires ``numba:compile`` only on a real compile (never on a cache load)."""

        def on_start(self, event):
            disp = (event.data or {}).get("dispatcher")
            module = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
            if module.startswith("edgegym."):
                compile_notice(module)

        def on_end(self, event):
            pass

    _event.register("numba:compile", _CompileListener())

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
