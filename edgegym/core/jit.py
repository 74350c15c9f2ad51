"""The one Numba decorator every family's compiled kernels use.

``njit(f)`` compiles ``f`` with ``cache=True`` (and ``nogil=True``) when Numba is installed (a core
dependency); ``njit_inline(f)`` also asks Numba to inline ``f`` into the compiled functions that call it (at the
IR level: a call of a compiled function costs two reference-count updates per array argument, which dominates
small helpers called in hot loops with many arrays); without it the function runs as plain Python with
identical results, and ``f.py_func`` is ``f`` either way, so differential tests can call the pure version.
Import this module only from kernel modules and the modules that load them: ``import edgegym`` must not load Numba.

The first time a kernel module compiles on a machine (a Numba cache miss: loading a cached kernel compiles nothing),
one line on stderr says so (``edgegym: compiling …``), with the time its family's first use took when measured
(``Family.extra["first_compile_s"]``, written by ``benchmarks/compile_time.py``); ``EDGEGYM_COMPILE_NOTICE=0``
silences it. Every compile of an edgegym kernel is timed (:func:`compile_seconds`), so that the episode runner can
keep the compile out of an episode's ``wall_s`` and report it on its own.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["HAVE_NUMBA", "compile_notice", "compile_seconds", "compile_times", "compiled_entry", "fingerprint", "njit",
           "njit_inline"]

_noticed: set[str] = set()
#: kernel module -> [wall s, CPU s] spent compiling it in this process (outermost compiles only)
_spent: dict[str, list[float]] = {}
#: the wall seconds of ``_spent`` summed (read once per step by the episode runner: O(1))
_total = [0.0]
#: the compile in progress: nesting depth, its kernel module, and its start (wall, CPU)
_current: dict = {"depth": 0, "module": "", "t0": 0.0, "c0": 0.0}


def compile_seconds() -> float:
    """Wall seconds this process has spent compiling edgegym kernels so far (Numba cache misses; 0.0 when every
    kernel came from the cache). The difference across an episode is the compile time inside it."""
    return _total[0]


def compile_times() -> dict[str, dict[str, float]]:
    """Per kernel module, the ``wall_s`` and ``cpu_s`` this process spent compiling it (cache misses only)."""
    return {m: {"wall_s": w, "cpu_s": c} for m, (w, c) in _spent.items()}


def _family_of_module(module: str):
    """The registered family whose folder holds ``module`` (``edgegym.families.<key>.…``), or ``None``."""
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["edgegym", "families"]:
        return None
    from edgegym.families import families

    return next((f for f in families().values() if f.key == parts[2]), None)


def compile_notice(module: str, stream=None) -> bool:
    """Print the one-line compile notice for the kernel module ``module`` once per process; whether it printed.

    The line names the family and, when its record declares it (``Family.extra["first_compile_s"]``, and
    ``"first_compile_v1_s"`` when the ``-v1`` ids compile more), the CPU time its first use took when measured
    with an empty Numba cache (``benchmarks/compile_time.py``)."""
    if module in _noticed or os.environ.get("EDGEGYM_COMPILE_NOTICE", "1") == "0":
        return False
    _noticed.add(module)
    fam = _family_of_module(module)
    name = fam.name if fam is not None else (module.split(".")[-2] if module.count(".") >= 2 else module)
    extra = (fam.extra or {}) if fam is not None else {}
    measured, v1 = extra.get("first_compile_s"), extra.get("first_compile_v1_s")
    took = ""
    if measured:
        also = f", the -v1 ids {v1:.0f} s" if v1 and v1 > measured + 1 else ""
        took = f"measured at about {measured:.0f} s of CPU{also} with an empty cache, longer on a busy machine; "
    print(f"edgegym: compiling the {name} kernels for this machine (first use only: {took}cached afterwards)",
          file=stream or sys.stderr, flush=True)
    return True


try:
    from numba import njit as _njit
    from numba.core import event as _event

    class _CompileListener(_event.Listener):
        """Numba fires ``numba:compile`` only on a real compile (never on a cache load)."""

        def on_start(self, event):
            disp = (event.data or {}).get("dispatcher")
            module = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
            # compiles nest (a kernel compiles the kernels it calls) and hold Numba's global lock: time the outermost
            if _current["depth"] == 0:
                _current.update(module=module, t0=time.perf_counter(), c0=time.process_time())
            _current["depth"] += 1
            if module.startswith("edgegym."):
                compile_notice(module)

        def on_end(self, event):
            _current["depth"] = max(_current["depth"] - 1, 0)
            if _current["depth"] == 0 and _current["module"].startswith("edgegym."):
                spent = _spent.setdefault(_current["module"], [0.0, 0.0])
                wall = time.perf_counter() - _current["t0"]
                spent[0] += wall
                spent[1] += time.process_time() - _current["c0"]
                _total[0] += wall

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


# -- a compiled version called without the dispatcher -----------------------------------------------------------------
#
# Numba's dispatcher resolves the compiled version from the types of every argument at every call: about 1.1 µs of a
# ~2.8 µs call with ~75 arguments (measured on a no-op kernel), paid each env step. A caller that calls one kernel
# with the same argument types step after step can look the compiled version up once (:func:`compiled_entry`) and call
# its entry point. This rests on two of Numba's internals (``numba._dispatcher.compute_fingerprint``, what the
# dispatcher itself keys its lookup on, and ``CompileResult.entry_point``): where either is missing or behaves
# otherwise, :func:`compiled_entry` returns ``None`` and the caller calls the dispatcher, the reference.

try:  # pragma: no branch
    from numba._dispatcher import compute_fingerprint as _fingerprint
except Exception:  # pragma: no cover - Numba missing, or its internals moved
    _fingerprint = None

#: (dispatcher, argument fingerprints) -> entry point, filled by :func:`compiled_entry`
_ENTRIES: dict = {}


def fingerprint(value):
    """Numba's type fingerprint of ``value`` (an array's dtype, dimensions, layout and writeability; a scalar's
    type): two values with equal fingerprints select the same compiled version. ``None`` without Numba."""
    return None if _fingerprint is None else _fingerprint(value)


def _key_of(dispatcher, value):
    """``value``'s part of a :func:`compiled_entry` key: its :func:`fingerprint`, or, for a value Numba types by its
    class and has no fingerprint for (a ``StructRef`` proxy, a jitclass instance), its Numba type."""
    try:
        return _fingerprint(value)
    except NotImplementedError:
        return dispatcher.typeof_pyval(value)


def compiled_entry(dispatcher, args: tuple):
    """The compiled entry point of the Numba kernel ``dispatcher`` for the argument types of ``args``, or ``None``.

    ``None`` where Numba is missing, where its internals differ from what this rests on, or where no version for
    these types is compiled yet (call the dispatcher then: it compiles one, and a later lookup finds it). The entry
    point does not check its arguments' types: call it only with arguments whose :func:`fingerprint` equals that of
    the corresponding value of ``args`` (a value without one, as a ``StructRef`` proxy: of the same Numba type)
    (per-episode arrays: checked here once; per-call values: the caller checks each with :func:`fingerprint`, or
    passes Python scalars of the same type). Looked up once per process for each distinct dispatcher and set of
    fingerprints."""
    if _fingerprint is None or not HAVE_NUMBA:
        return None
    try:
        key = (dispatcher, tuple(_key_of(dispatcher, a) for a in args))
        entry = _ENTRIES.get(key)
        if entry is None:
            cres = dispatcher.overloads.get(tuple(dispatcher.typeof_pyval(a) for a in args))
            entry = getattr(cres, "entry_point", None)
            if entry is None or not callable(entry):
                return None
            _ENTRIES[key] = entry
        return entry
    except Exception:  # pragma: no cover - an unhashable fingerprint, or Numba's internals moved: the dispatcher
        return None
