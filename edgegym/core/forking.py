"""Forking an env mid-episode: the generic machinery behind every family's ``env.unwrapped.fork(seed, future)``.

A fork is an independent env in exactly the current state of the original (mid-episode, after any number of
steps). Two futures:

* ``future="keep"``: the jobs that have not arrived yet are the true ones. The fork is *clairvoyant*
  (``fork.clairvoyant is True``): it knows the future the original will see. For analysis and bounds only; a
  policy that plans on such a fork must say so in its name and docs.
* ``future="resample"`` (the default): the jobs that have not arrived yet are redrawn from the preset's own
  workload model, deterministically from ``seed`` (each family documents how, in its ``fork`` method). The jobs
  already arrived (the pending one included) and everything the simulator did with them are kept.

The copy is fast because what cannot change during an episode is shared between the original and the fork instead
of being copied: frozen dataclasses (presets, clusters, job tables), read-only NumPy arrays that own their data,
functions, classes and modules, plus the attributes a family names as immutable per episode
(``shared=`` of :func:`fork_env`: e.g. the observation and action spaces, the feature table, per-episode lookup
lists). Everything else (NumPy state arrays, lists, dicts, the simulator objects) is copied by
:func:`fast_copy`, a deep copy that keeps aliasing (one memo, like :func:`copy.deepcopy`) and copies lists of
numbers without a Python call per element.

Nothing here names a family: a family's ``fork`` calls :func:`fork_env` with its shared attribute names and its
own future-resampling function; :func:`splice_jobs` and :func:`shifted_arrivals` are the helpers those use.

A family's ``fork`` may also take ``history=False``: a fork for look-ahead that need not keep the executed history
of the episode so far (what only rendering and the schedule's plots read), and so holds only the state of the jobs
still in the system; its observations, masks, rewards and decisions are those of the full fork (the family
documents and tests what else it leaves out). Look-ahead policies pass it where the signature has it.

Memory: a fork's state arrays are a few hundred KB each, above the size from which glibc's ``malloc`` hands out
fresh pages and returns them to the OS when freed, so a look-ahead that makes and drops thousands of forks spent
most of each fork in page faults (~1 µs per 4 KB page; 0.98 ms of a 1.0 ms ``EdgeCloudML-v0`` fork). The first
fork therefore raises glibc's heap trim threshold to :data:`TRIM_THRESHOLD` (``mallopt(M_TRIM_THRESHOLD)``), so
freed forks' memory is reused: the same fork then takes 0.38 ms (``python benchmarks/fork_speed.py``). It is a
process-wide setting that keeps up to that much freed memory in the process; set the environment variable
``EDGEGYM_NO_MALLOPT=1`` to leave ``malloc`` alone. Other C libraries (macOS, musl) are not touched.
"""

from __future__ import annotations

import copy
import ctypes
import dataclasses
import os
import sys
import types
from collections.abc import Callable, Iterable

import numpy as np

__all__ = [
    "FUTURES",
    "TRIM_THRESHOLD",
    "cached_draw",
    "check_fork_args",
    "fast_copy",
    "fork_env",
    "fork_rng",
    "mark_fork",
    "own_generator",
    "prefix_copy",
    "shifted_arrivals",
    "splice_jobs",
]

#: the values of ``fork(..., future=...)``
FUTURES = ("resample", "keep")

#: glibc heap trim threshold (bytes) set by the first fork (see the module docstring)
TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter number
_malloc_tuned: bool | None = None  # None: not tried yet


def retain_freed_memory() -> bool:
    """Raise glibc's heap trim threshold to :data:`TRIM_THRESHOLD` once per process, so the memory of dropped forks
    is reused instead of being returned to the OS and page-faulted back (see the module docstring). Returns whether
    the setting is in effect; a no-op (False) off glibc or with ``EDGEGYM_NO_MALLOPT=1`` in the environment."""
    global _malloc_tuned
    if _malloc_tuned is None:
        _malloc_tuned = False
        if os.environ.get("EDGEGYM_NO_MALLOPT", "") in ("", "0") and sys.platform.startswith("linux"):
            try:
                import platform

                if platform.libc_ver()[0] == "glibc":
                    _malloc_tuned = bool(ctypes.CDLL("libc.so.6").mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
            except (OSError, AttributeError):  # no libc.so.6 / no mallopt: leave malloc alone
                _malloc_tuned = False
    return _malloc_tuned

_ATOMIC = (int, float, bool, complex, str, bytes, type(None), range, slice, type(Ellipsis), np.generic,
           types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type, property)
_ATOMIC_TYPES = frozenset(t for t in _ATOMIC if t is not np.generic)
_MISSING = object()


def check_fork_args(env, seed, future) -> None:
    """``ValueError`` naming ``future`` / ``seed`` when bad; ``RuntimeError`` when ``env`` was never reset."""
    if not isinstance(future, str) or future not in FUTURES:
        raise ValueError(f"fork: future must be one of {', '.join(repr(f) for f in FUTURES)}, got {future!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise ValueError(f"fork: seed must be an integer >= 0 (it seeds the resampled future), got {seed!r}")
    if getattr(env, "sim", None) is None and getattr(env, "_inst", None) is None:
        raise RuntimeError(f"fork: call reset() on the {type(env).__name__} before forking it (there is no episode "
                           "to fork yet)")


def fork_rng(seed: int) -> np.random.Generator:
    """The generator of a fork's resampled future (the same ``seed`` always gives the same future)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), 0x5EED_F0CC]))


def own_generator(obj, name: str) -> None:
    """Give ``obj`` a generator of its own in ``obj.<name>`` where it still shares it with a fork or a parent
    (``obj._rng_shared``, set by a family's fork that shares a generator until one side draws from it): a copy in
    the same state, so that each side's stream is the one it would have had with a copy made at the fork."""
    if obj.__dict__.get("_rng_shared"):
        obj._rng_shared = False
        g = getattr(obj, name)
        if g is not None:
            setattr(obj, name, fast_copy(g))


def _is_frozen_dataclass(x) -> bool:
    params = getattr(type(x), "__dataclass_params__", None)
    return params is not None and params.frozen


def fast_copy(obj, memo: dict | None = None):
    """A deep copy of ``obj`` that shares what is immutable (see the module docstring) and keeps aliasing.

    ``memo`` (``id -> copy``) works as :func:`copy.deepcopy`'s: pre-seed ``memo[id(x)] = x`` to share ``x``
    between the original and the copy. Objects of unknown types fall back to :func:`copy.deepcopy` with the same
    memo."""
    if memo is None:
        memo = {}
    return _copy(obj, memo)


def _copy(x, memo: dict):
    t = type(x)
    if t in _ATOMIC_TYPES:
        return x
    i = id(x)
    y = memo.get(i, _MISSING)
    if y is not _MISSING:
        return y
    if t is np.ndarray:
        if not x.flags.writeable and x.base is None and x.dtype != object:
            y = x  # read-only and owning its data: immutable
        elif x.dtype == object:
            y = copy.deepcopy(x, memo)
        else:
            y = x.copy()
    elif t is list:
        y = []
        memo[i] = y
        if x and type(x[0]) in (float, int, bool) and all(type(e) in (float, int, bool) for e in x):
            y.extend(x)
        else:
            y.extend([_copy(e, memo) for e in x])
        return y
    elif t is tuple:
        items = [_copy(e, memo) for e in x]
        y = x if all(a is b for a, b in zip(items, x, strict=True)) else tuple(items)
    elif t is dict:
        y = {}
        memo[i] = y
        for k, v in x.items():
            y[_copy(k, memo)] = _copy(v, memo)
        return y
    elif isinstance(x, np.generic) or _is_frozen_dataclass(x):
        y = x
    elif t is np.random.Generator:  # same stream, without a pickle round trip
        bg = x.bit_generator
        y = np.random.Generator(type(bg)())
        y.bit_generator.state = bg.state
    elif t.__module__.startswith("edgegym") and not hasattr(x, "__deepcopy__") and (
            hasattr(x, "__dict__") or hasattr(t, "__slots__")):
        y = t.__new__(t)
        memo[i] = y
        d = getattr(x, "__dict__", None)
        if d is not None:
            y.__dict__.update({k: _copy(v, memo) for k, v in d.items()})
        for klass in t.__mro__:
            for s in getattr(klass, "__slots__", ()):
                if s not in ("__dict__", "__weakref__") and hasattr(x, s):
                    object.__setattr__(y, s, _copy(getattr(x, s), memo))
        return y
    else:
        y = copy.deepcopy(x, memo)
    memo[i] = y
    return y


def fork_env(env, *, seed: int, future: str, shared: Iterable[str] = (),
             resample: Callable[[object, np.random.Generator], None] | None = None,
             copies: dict[str, Callable] | None = None):
    """The fork of ``env`` (see the module docstring): a fast copy sharing the attributes named in ``shared``
    (immutable for the episode), marked ``clairvoyant`` for ``future="keep"``; for ``future="resample"``,
    ``resample(fork, rng)`` (the family's) redraws the fork's future from :func:`fork_rng` of ``seed``."""
    check_fork_args(env, seed, future)
    retain_freed_memory()
    if "_fork_draws" not in env.__dict__:
        env._fork_draws = {}  # the redrawn job tables of resampled forks, shared by the env and its forks
    memo: dict = {}
    for name in shared:  # attribute names, dotted for attributes of sub-objects ("sim.p_edge")
        v = _resolve(env, name)
        if v is not None:
            memo[id(v)] = v
    for name, fn in (copies or {}).items():
        v = _resolve(env, name)
        if v is not None and id(v) not in memo:
            memo[id(v)] = fn(v, env)
    fork = mark_fork(env, _copy(env, memo), seed, future)
    if future == "resample" and resample is not None:
        resample(fork, fork_rng(seed))
    return fork


def mark_fork(env, fork, seed: int, future: str):
    """Set ``fork``'s marks as :func:`fork_env` does (for a family that copies its state itself): ``clairvoyant``
    (a ``"keep"`` fork of the real env knows the true future; a ``"keep"`` fork of a resampled fork only its
    parent's), ``resampled`` and ``fork_seed``. Returns ``fork``."""
    fork.clairvoyant = bool(getattr(env, "clairvoyant", False)) or (
        future == "keep" and not getattr(env, "resampled", False))
    fork.resampled = bool(getattr(env, "resampled", False)) or future == "resample"
    fork.fork_seed = int(seed)
    return fork


def _resolve(obj, dotted: str):
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def prefix_copy(a: np.ndarray, n: int, axis: int = 0) -> np.ndarray:
    """A copy of ``a`` whose first ``n`` entries along ``axis`` are ``a``'s and the rest zero (for a buffer whose
    entries past ``n`` are zero or unused): only the live part is copied."""
    out = np.zeros(a.shape, dtype=a.dtype)
    n = max(0, min(int(n), a.shape[axis]))
    idx = (slice(None),) * axis + (slice(0, n),)
    out[idx] = a[idx]
    return out


def cached_draw(env, key, rng: np.random.Generator, draw: Callable[[np.random.Generator], object], owner=None):
    """``draw(rng)`` (a family's redraw of the whole job table), memoised per ``key`` (the fork seed, plus whatever
    else the draw depends on) in ``env._fork_draws``, a dict the family shares between an env and its forks: a
    look-ahead that forks with the same seeds at every decision draws each table once per episode. ``rng`` is left
    in the state the draw left it in, cached or not, so later draws of the fork are the same either way. ``owner``:
    an object the draw depends on (e.g. the episode's cluster); a cached draw is used only for the same object."""
    cache = env.__dict__.get("_fork_draws")
    if cache is None:
        cache = env._fork_draws = {}
    hit = cache.get(key)
    if hit is None or hit[2] is not owner:
        if len(cache) >= 64:
            cache.clear()
        new = draw(rng)
        cache[key] = (new, rng.bit_generator.state, owner)
        return new
    new, state, _ = hit
    rng.bit_generator.state = state
    return new


def splice_jobs(old, new, start: int, *, rows: int | None = None, fields: tuple[str, ...] | None = None,
                revalidate: bool = True, **overrides):
    """The job table ``old`` with rows ``start..`` taken from ``new`` (same dataclass, same number of jobs).

    Every field that is an array or a tuple with one entry per job is spliced; other fields keep ``old``'s value;
    ``overrides`` (e.g. the arrival times) replace fields after the splice. ``start >= J`` returns ``old``
    (updated with ``overrides``). ``rows``: the number of jobs, for a per-job table without ``num_jobs``;
    ``fields``: splice only these fields (for a table that also holds per-site arrays).

    ``revalidate=False`` skips the dataclass's ``__post_init__`` (its checks and conversions): the spliced arrays
    keep ``old``'s dtypes and are made read-only like ``old``'s. Only for a table whose ``__post_init__`` checks
    rows one by one (so rows of two valid tables are valid) and derives nothing, with ``overrides`` that keep it
    valid (e.g. :func:`shifted_arrivals` of two non-decreasing arrival vectors)."""
    J = _num_rows(old) if rows is None else int(rows)
    if rows is None and _num_rows(new) != J:
        raise ValueError(f"splice_jobs: the redrawn job table has {_num_rows(new)} jobs, the episode {J}")
    changes = {}
    if start < J:
        for f in dataclasses.fields(old):
            if fields is not None and f.name not in fields:
                continue
            a, b = getattr(old, f.name), getattr(new, f.name)
            if isinstance(a, np.ndarray) and a.ndim and a.shape[0] == J and isinstance(b, np.ndarray) \
                    and b.shape[1:] == a.shape[1:] and b.shape[0] == J:
                changes[f.name] = np.concatenate([a[:start], np.asarray(b[start:], dtype=a.dtype)])
            elif isinstance(a, tuple) and isinstance(b, tuple) and len(a) == J and len(b) == J:
                changes[f.name] = a[:start] + b[start:]
    changes.update(overrides)
    if not changes:
        return old
    if revalidate:
        return dataclasses.replace(old, **changes)
    out = copy.copy(old)
    for name, v in changes.items():
        prev = getattr(old, name)
        if isinstance(prev, np.ndarray):
            v = np.asarray(v, dtype=prev.dtype)
            if not prev.flags.writeable:
                v.setflags(write=False)
        object.__setattr__(out, name, v)
    return out


def _num_rows(jobs) -> int:
    n = getattr(jobs, "num_jobs", None)
    if n is None:
        raise TypeError(f"splice_jobs needs a job table with num_jobs, got {type(jobs).__name__}")
    return int(n)


def shifted_arrivals(old: np.ndarray, new: np.ndarray, start: int) -> np.ndarray:
    """Arrivals ``old[:start]`` followed by ``new``'s from ``start`` on, shifted so that they continue from the
    last kept arrival with ``new``'s own gaps: ``out[i] = old[start-1] + (new[i] - new[start-1])`` for
    ``i >= start`` (non-decreasing when both are)."""
    old = np.asarray(old)
    new = np.asarray(new)
    out = old.copy()
    if 0 < start < old.shape[0]:
        out[start:] = old[start - 1] + (new[start:] - new[start - 1])
    elif start == 0:
        out[:] = new
    return out
