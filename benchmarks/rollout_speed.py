"""Decisions per CPU-second of a rollout policy (``rollout:<base>``) on one env, and with ``--no-fast`` without the
bases' ``advance`` fast paths (every continuation then runs ``predict`` + ``env.step``, the reference path).

Usage: ``python benchmarks/rollout_speed.py [--env HeteroML-v1] [--policy rollout:earliest] [--decisions 40]
[--seed 0] [--no-fast]``.

The policy is built as ``edgegym run`` builds it (the env with the policy's overrides, then the policy); the first
``--decisions`` decisions of the episode of ``--seed`` are timed with ``time.process_time`` (CPU seconds of this
process; the kernels' first-use compile is excluded by a warm-up decision on a throwaway env first). Prints the
decisions per CPU-second and a digest of the actions taken (equal with and without ``--no-fast``).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edgegym.agents.policy import Policy  # noqa: E402
from edgegym.agents.runner import make_env  # noqa: E402


def _action_key(a) -> str:
    return repr(a) if not hasattr(a, "item") else repr(a.item())


def run(env_id: str, policy: str, decisions: int, seed: int) -> tuple[int, float, str, int]:
    """``(decisions taken, CPU seconds, digest of the actions, decisions where rollout left its base)``."""
    env, pol = make_env(env_id, policy, seed)
    try:
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        h = hashlib.sha256()
        n, cpu = 0, 0.0
        done = False
        while not done and n < decisions:
            t = time.process_time()
            action, _ = pol.predict(obs, deterministic=True)
            cpu += time.process_time() - t
            h.update(_action_key(action).encode())
            obs, _, term, trunc, _ = env.step(action)
            done = term or trunc
            n += 1
        return n, cpu, h.hexdigest()[:16], int(getattr(pol, "changed", 0))
    finally:
        env.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="HeteroML-v1")
    ap.add_argument("--policy", default="rollout:earliest")
    ap.add_argument("--decisions", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-fast", action="store_true", help="disable every policy's advance() fast path")
    args = ap.parse_args()
    if args.no_fast:
        Policy.advance = lambda self, steps, total: None  # the base class's "no fast path"
        for cls in _subclasses(Policy):
            if "advance" in vars(cls):
                cls.advance = Policy.advance
    run(args.env, args.policy, 1, args.seed + 1)  # warm-up: the kernels' first-use compile
    n, cpu, digest, changed = run(args.env, args.policy, args.decisions, args.seed)
    print(f"{args.env} {args.policy} seed {args.seed} {'no-fast' if args.no_fast else 'fast'}: {n} decisions in "
          f"{cpu:.2f} CPU s = {n / cpu:.2f} decisions per CPU-second (actions {digest}, {changed} left the base)")


def _subclasses(cls):
    """Every subclass of ``cls`` (after importing every registered policy module)."""
    from edgegym.agents.registry import POLICIES

    len(POLICIES)  # imports every policy module

    out, todo = [], [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.append(sub)
            todo.append(sub)
    return out


if __name__ == "__main__":
    main()
