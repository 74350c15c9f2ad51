"""Train sb3-contrib MaskablePPO for a small budget, then evaluate it against the reference policy.

    python examples/train_maskable_ppo.py [TIMESTEPS] [OUT_DIR]

The same as ``edgegym train --env EdgeUtility-tiny-v0 --algo maskable-ppo --timesteps 4096 --out OUT_DIR``
followed by ``edgegym eval --model OUT_DIR --seeds 100-102`` and ``edgegym run --policy o4a --seeds 100-102``.
A few thousand steps only show the mechanics; results/agents.md reports real training runs. Without ``OUT_DIR``
the model goes to a temporary folder that is removed at the end.
"""

import contextlib
import sys
import tempfile

import numpy as np
from edgegym.agents.rl.train import train
from edgegym.agents.runner import run_episode

env_id = "EdgeUtility-tiny-v0"  # Discrete action space with action_masks(): what MaskablePPO needs
timesteps = int(sys.argv[1]) if len(sys.argv) > 1 else 4096

with contextlib.ExitStack() as stack:
    out = sys.argv[2] if len(sys.argv) > 2 else stack.enter_context(tempfile.TemporaryDirectory())
    summary = train(env_id, "maskable-ppo", timesteps, seed=0, out=out, n_envs=1, eval_freq=0, checkpoint_freq=0,
                    progress=False)
    where = f" -> {summary['model']}" if len(sys.argv) > 2 else ""
    print(f"trained {summary['num_timesteps']} steps in {summary['wall_s']:.1f} s{where}")

    seeds = [100, 101, 102]  # held-out seeds (training used 0..n_envs-1 and their continuations)
    for policy, label in ((f"maskable-ppo:{summary['model']}", "maskable-ppo (this run)"), ("o4a", "o4a"),
                          ("random", "random")):
        objs = [run_episode(env_id, policy, s)["objective"] for s in seeds]
        print(f"{label:<40} total utility {np.mean(objs):8.1f} ± {np.std(objs, ddof=1):.1f} over seeds {seeds}")
