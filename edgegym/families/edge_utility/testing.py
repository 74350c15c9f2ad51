"""Helpers for the EdgeUtility tests: random instances for the differential tests of the compiled kernels, and the
exact state of an env for the differential tests of its fast paths (``step_quiet``, the direct fork)."""

from __future__ import annotations

import numpy as np

from .utility_fn import aon, constant, linear, sigmoid, step

__all__ = ["env_state", "random_utility", "state"]


def random_utility(rng: np.random.Generator):
    """A utility function of a random kind (linear, all-or-nothing, sigmoid, constant, step, or a sigmoid whose
    exponent saturates), with random parameters drawn from ``rng``."""
    f = int(rng.integers(6))
    if f == 0:
        return linear(rng.uniform(1, 5), rng.uniform(5, 20))
    if f == 1:
        return aon(rng.uniform(1, 100), rng.uniform(0.5, 5), inclusive=bool(rng.random() < 0.3))
    if f == 2:
        return sigmoid(rng.uniform(1, 10), rng.uniform(50, 100), rng.uniform(0.5, 5))
    if f == 3:
        return constant(rng.uniform(0, 10))
    if f == 4:
        br = np.cumsum(rng.uniform(0.2, 2, size=int(rng.integers(1, 4))))
        return step(br, np.sort(rng.uniform(0, 10, size=br.size + 1))[::-1])
    return sigmoid(rng.uniform(200, 400), 10.0, 0.1)  # saturating exponent (x > 700 branch)


def state(obj, seen: set | None = None):
    """Every value reachable from ``obj``'s attributes (the simulator's objects, lists, dicts, arrays, generators) as
    a nested structure of plain values that ``==`` compares exactly (arrays by dtype, shape and bytes, NaN equal to
    NaN); the job tables (``jobs``, ``utab``) and other frozen inputs are named by type only."""
    seen = set() if seen is None else seen
    if isinstance(obj, np.ndarray):
        return ("a", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, list | tuple):
        return [state(v, seen) for v in obj]
    if isinstance(obj, dict):
        return {k: state(v, seen) for k, v in obj.items()}
    if isinstance(obj, float) and np.isnan(obj):
        return "nan"
    if isinstance(obj, np.random.Generator):
        return ("rng", state(obj.bit_generator.state, seen))
    if type(obj).__module__.startswith("edgegym") and not hasattr(type(obj), "__dataclass_params__"):
        if id(obj) in seen:
            return ("seen", type(obj).__name__)
        seen.add(id(obj))
        names = list(getattr(obj, "__dict__", {})) + [s for c in type(obj).__mro__ for s in getattr(c, "__slots__", ())]
        return {n: state(getattr(obj, n), seen) for n in names if hasattr(obj, n) and n not in ("jobs", "utab")}
    return obj if isinstance(obj, int | float | str | bool | type(None) | np.generic) else type(obj).__name__


def env_state(env) -> dict:
    """An EdgeUtility env's episode state (not its per-step caches of the observation): position, return, decisions,
    planned utilities, rejections, the pending job's estimates and completions, and :func:`state` of the simulator."""
    return {"k": env._k, "ret": env._return, "illegal": env._illegal, "planned": env._planned.tobytes(),
            "dec": env._decisions.tobytes(), "rej": env._rejected.tobytes(), "est": state(env._est_sim),
            "pending": state(env._pending_done), "sim": state(env.sim)}
