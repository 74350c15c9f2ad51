"""Make an edgegym env, step it with random legal actions, and read what it reports.

    python examples/make_and_step.py
"""

import gymnasium as gym
import numpy as np

import edgegym  # noqa: F401  (registers the envs)
from edgegym.core.features import observation_features

env = gym.make("EdgeUtility-tiny-v0")  # 3 edge servers + a cloud, 40 jobs, mixed utility functions
obs, info = env.reset(seed=0)
print("observation:", env.observation_space.shape, " action:", env.action_space)

# what each observation index means (the same list the env sizes its observation from)
for i, (name, meaning, low, high) in enumerate(observation_features(env)[:4]):
    print(f"  obs[{i}] {name} = {obs[i]:.3f}   ({meaning}; range [{low:g}, {high:g}])")

rng = np.random.default_rng(0)
done, ret, steps = False, 0.0, 0
while not done:
    legal = np.flatnonzero(env.unwrapped.action_masks())  # illegal actions raise ValueError
    obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
    ret += reward
    steps += 1
    done = terminated or truncated

m = info["episode_metrics"]
print(f"{steps} steps, return {ret:.2f} = total utility {m['total_utility']:.2f}, "
      f"average response time {m['avg_response_time']:.3f} s")
env.close()
