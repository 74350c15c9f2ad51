"""Exact action validation shared by every env family: no silent coercion.

``step(3.5)``, ``step("3")``, ``step(True)`` or ``step(inf)`` on a ``Discrete`` space, and a complex,
string or wrongly shaped array on a ``Box`` space, raise a ``ValueError`` that names the expected space,
instead of running as some other action.

* ``Discrete(n, start)``: a Python ``int`` (not ``bool``), a NumPy integer scalar, or a 0-d integer array
  (what ``Discrete.sample()``, SB3's ``predict`` and Gymnasium's vector envs give), in ``[start, start+n)``.
* ``MultiDiscrete``: an integer array of the space's shape within ``[start, start + nvec)``.
* ``Box``: real numbers (integer or float dtype; a list is read as an array) of exactly the space's shape,
  all finite. Bounds are left to the env (some envs accept a tolerance or clip).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_action", "check_box_action", "check_discrete_action", "check_multidiscrete_action"]


def _short(action) -> str:
    text = repr(action)
    return text if len(text) <= 80 else text[:77] + "..."


def check_discrete_action(space, action) -> int:
    """The action of a ``Discrete`` space as a Python ``int``; ``ValueError`` naming the space otherwise."""
    lo, hi = int(space.start), int(space.start) + int(space.n) - 1

    def fail(why: str):  # the message is built only on failure (the space's repr costs a few µs per step)
        return ValueError(f"action {_short(action)} is not in the action space {space}: {why}; expected an integer "
                          f"in [{lo}, {hi}] (a Python int or a NumPy integer scalar)")

    if type(action) is int:  # the common case first
        a = action
    elif isinstance(action, bool | np.bool_):
        raise fail("a bool")
    elif isinstance(action, numbers.Integral):
        a = int(action)
    elif isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        a = int(action)
    else:
        kind = type(action).__name__
        if isinstance(action, np.ndarray):
            kind = f"an array of dtype {action.dtype} and shape {action.shape}"
        raise fail(kind)
    if not lo <= a <= hi:
        raise fail("out of range")
    return a


def _real_array(space, action, what: str) -> np.ndarray:
    def head() -> str:  # built only on failure: repr of a large array costs ~1 ms
        return f"action {_short(action)} is not in the action space {space}"

    try:
        a = np.asarray(action)
    except (TypeError, ValueError) as e:  # ragged nested lists
        raise ValueError(f"{head()}: {e}; expected {what} of shape {space.shape}") from None
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{head()}: dtype {a.dtype}; expected {what} of shape {space.shape} (real numbers, not "
                         "bool, complex, strings or objects)")
    if a.shape != space.shape:
        raise ValueError(f"{head()}: shape {a.shape}; expected {what} of shape {space.shape}")
    return a


def check_box_action(space, action) -> np.ndarray:
    """The action of a ``Box`` space as a float64 array (real, finite, the space's shape); ``ValueError`` else."""
    a = _real_array(space, action, "finite real numbers").astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"action {_short(action)} is not in the action space {space}: non-finite values; "
                         f"expected finite real numbers of shape {space.shape}")
    return a


def check_multidiscrete_action(space, action) -> np.ndarray:
    """The action of a ``MultiDiscrete`` space as an int64 array; ``ValueError`` naming the space otherwise."""
    a = _real_array(space, action, "integers")
    head = f"action {_short(action)} is not in the action space {space}"
    if a.dtype.kind == "f":
        raise ValueError(f"{head}: dtype {a.dtype}; expected integers of shape {space.shape}")
    a = a.astype(np.int64)
    if np.any(a < space.start) or np.any(a >= space.start + space.nvec):
        raise ValueError(f"{head}: out of range")
    return a


def check_action(space, action):
    """Validate ``action`` against ``space`` exactly (see the module docstring); return it in canonical form.

    ``space`` is a Gymnasium space, recognised by its class name (core does not import gymnasium).
    """
    kind = type(space).__name__
    if kind == "Discrete":
        return check_discrete_action(space, action)
    if kind == "MultiDiscrete":
        return check_multidiscrete_action(space, action)
    if kind == "Box":
        return check_box_action(space, action)
    if not space.contains(action):
        raise ValueError(f"action {_short(action)} is not in the action space {space}")
    return action
