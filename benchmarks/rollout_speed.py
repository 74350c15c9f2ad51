"""Decisions per CPU-second of a rollout policy (``rollout:<base>``) on one env, and with ``--no-fast`` without the
bases' ``advance`` fast paths (every continuation then runs ``predict`` + ``env.step``, the reference path).

Usage: ``python benchmarks/rollout_speed.py [--env HeteroML-v1] [--policy rollout:earliest] [--decisions 40]
[--seed 0] [--no-fast] [--breakdown N]``.

``--breakdown N``: instead, the CPU cost of the parts of one decision's continuations at decision ``N`` of the
episode (the policy's own actions up to it): the ``K`` resampled forks of a decision point (as the rollout makes
them), a keep fork of one of them, the base's action as the candidate's step (``step_quiet`` where the env has it),
and the base's ``advance`` over the rest of the horizon, each averaged over repetitions.

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


def breakdown(env_id: str, policy: str, at: int, seed: int) -> dict[str, float]:
    """CPU microseconds of the parts of a rollout decision at decision ``at`` (see the module docstring)."""
    from edgegym.agents.reference import rollout

    takes_history = getattr(rollout, "_fork_takes_history", lambda env: False)  # (code before lean forks: none)
    env, pol = make_env(env_id, policy, seed)
    try:
        obs, _ = env.reset(seed=seed)
        pol.reset(seed)
        for _ in range(at):
            action, _ = pol.predict(obs, deterministic=True)
            obs, _, term, trunc, _ = env.step(action)
            if term or trunc:
                raise ValueError(f"--breakdown {at}: the episode ends before decision {at}")
        u = env.unwrapped
        base = pol.base
        a, _ = base.predict(obs, deterministic=True)
        lean = {"history": False} if getattr(pol, "lean_forks", False) and takes_history(u) else {}
        seeds = pol._seeds()

        def timed(fn, n: int) -> float:
            t = time.process_time()
            for _ in range(n):
                fn()
            return (time.process_time() - t) / n * 1e6

        def futures():  # a fresh copy of the state each time (no fork of it made yet), then its K forks
            g = u.fork(seed=0, future="keep")
            t = time.process_time()
            out = [g.fork(seed=s, future=pol.future, **lean) for s in seeds]
            return time.process_time() - t, out

        reps = 100
        out = {f"the {len(seeds)} resampled forks of a decision point": sum(futures()[0] for _ in range(reps))
               / reps * 1e6}
        f = futures()[1][0]
        keep = timed(lambda: f.fork(seed=0, future="keep"), 1000)
        out["a keep fork of a resampled fork"] = keep
        def first(g):
            return g.step_quiet(a) if hasattr(g, "step_quiet") else g.step(a)

        step = timed(lambda: first(f.fork(seed=0, future="keep")), 500) - keep
        out["the candidate's step"] = step
        H = pol.H - 1 if pol.H else None

        def cont():
            g = f.fork(seed=0, future="keep")
            first(g)
            base.fork(g).advance(H, 0.0)

        out[f"the base's advance ({H} steps)"] = timed(cont, 300) - keep - step
        if getattr(pol, "_fuses", lambda: False)() and hasattr(u, "action_key"):
            key = u.action_key(a)

            def fused():
                g = f.fork(seed=0, future="keep")
                base.fork(g).advance_after(key, pol.H or None, 0.0)

            out[f"the candidate's step and the advance in one call ({pol.H or 'all'} steps)"] = \
                timed(fused, 300) - keep
        return out
    finally:
        env.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="HeteroML-v1")
    ap.add_argument("--policy", default="rollout:earliest")
    ap.add_argument("--decisions", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-fast", action="store_true", help="disable every policy's advance() fast path")
    ap.add_argument("--breakdown", type=int, default=None, metavar="N",
                    help="print the CPU cost of a decision's parts at decision N instead")
    args = ap.parse_args()
    if args.no_fast:
        Policy.advance = lambda self, steps, total: None  # the base class's "no fast path"
        for cls in _subclasses(Policy):
            if "advance" in vars(cls):
                cls.advance = Policy.advance
    run(args.env, args.policy, 1, args.seed + 1)  # warm-up: the kernels' first-use compile
    if args.breakdown is not None:
        parts = breakdown(args.env, args.policy, args.breakdown, args.seed)
        print(f"{args.env} {args.policy} seed {args.seed}, decision {args.breakdown}, CPU microseconds:")
        for name, us in parts.items():
            print(f"  {name}: {us:.0f}")
        return
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
