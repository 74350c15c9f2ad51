"""A saved SB3 agent as a :class:`~edgegym.agents.policy.Policy`, so that it runs through the same episode loop
(:func:`edgegym.agents.runner.run_episode`) as the reference policies and baselines.

Policy names: ``ppo:PATH`` (stable-baselines3 PPO) and ``maskable-ppo:PATH`` (sb3-contrib MaskablePPO,
which is given ``action_masks()`` at every step). ``PATH`` is a ``model.zip`` written by ``edgegym train``
(or any SB3 ``save``); its sidecar ``<stem>.edgegym.json``, when present, gives the env config it was
trained with (e.g. ``{"env": {"action_mode": "cloud_split"}}``). ``rllib:DIR`` is the folder of
``edgegym train --backend rllib`` (an RLlib checkpoint and its sidecar ``DIR/model.edgegym.json``;
:mod:`edgegym.agents.rl.rllib`).
"""

from __future__ import annotations

import contextlib
import json
import sys
import zipfile
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..policy import Policy

__all__ = [
    "ALGOS",
    "PREFIXES",
    "is_rllib_checkpoint",
    "LearnedPolicy",
    "LearnedPolicyError",
    "is_learned",
    "learned_env_config",
    "load_learned_policy",
    "load_model",
    "sidecar_path",
    "split_name",
]

#: algorithm name -> (module, class); the policy-name prefix is ``<algo>:``
ALGOS = {
    "ppo": ("stable_baselines3", "PPO"),
    "maskable-ppo": ("sb3_contrib", "MaskablePPO"),
}
#: the policy-name prefix of a folder written by ``edgegym train --backend rllib`` (not an ``--algo`` choice)
RLLIB = "rllib"
#: an RLlib run's folder: ``checkpoint/`` (RLlib's algorithm checkpoint, the trained RLModule in
#: ``checkpoint/learner_group/learner/rl_module/default_policy``) and the sidecar ``model.edgegym.json``
RLLIB_CHECKPOINT_DIR = "checkpoint"
RLLIB_MODULE_SUBDIR = ("learner_group", "learner", "rl_module", "default_policy")
RLLIB_SIDECAR = "model.edgegym.json"
#: every learned-policy prefix
PREFIXES = (*ALGOS, RLLIB)


class LearnedPolicyError(ValueError):
    """A learned-policy name or model file that cannot be used (missing, corrupt, wrong spaces)."""


def is_learned(name: str) -> bool:
    """Whether ``name`` is a learned-policy name (``<algo>:PATH``)."""
    return isinstance(name, str) and any(name.startswith(a + ":") for a in PREFIXES)


def is_rllib_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is a folder written by ``edgegym train --backend rllib`` (its sidecar says ``rllib``)."""
    p = Path(path)
    side = p / RLLIB_SIDECAR
    if not (p.is_dir() and side.is_file()):
        return False
    try:
        return json.loads(side.read_text()).get("algo") == RLLIB
    except (OSError, ValueError, AttributeError):
        return False


def split_name(name: str) -> tuple[str, Path]:
    """``"maskable-ppo:runs/a/model.zip"`` -> ``("maskable-ppo", Path("runs/a/model.zip"))``."""
    algo, _, path = name.partition(":")
    if algo not in PREFIXES or not path:
        raise LearnedPolicyError(
            f"bad learned policy {name!r}: expected <algo>:PATH with algo in {', '.join(PREFIXES)}"
        )
    return algo, Path(path)


def sidecar_path(model_path: Path) -> Path:
    """``DIR/model.zip`` -> ``DIR/model.edgegym.json`` (the env id and env config of the training run); a folder
    ``DIR`` (an RLlib run's) -> ``DIR/model.edgegym.json``."""
    p = Path(model_path)
    if p.is_dir():
        return p / "model.edgegym.json"
    stem = p.name[: -len(".zip")] if p.name.endswith(".zip") else p.name
    return p.with_name(stem + ".edgegym.json")


def _resolve(path: Path) -> Path:
    if path.is_file():
        return path
    if path.suffix != ".zip" and path.with_suffix(path.suffix + ".zip").is_file():
        return path.with_suffix(path.suffix + ".zip")
    if path.is_dir() and (path / "model.zip").is_file():
        return path / "model.zip"
    if is_rllib_checkpoint(path):
        return path
    raise LearnedPolicyError(f"model file {str(path)!r} does not exist")


def _check_zip(path: Path) -> None:
    if not zipfile.is_zipfile(path):
        raise LearnedPolicyError(f"model file {str(path)!r} is corrupt or not an SB3 model (not a zip archive)")
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            bad = z.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise LearnedPolicyError(f"model file {str(path)!r} is corrupt: {e}") from None
    if bad is not None:
        raise LearnedPolicyError(f"model file {str(path)!r} is corrupt (bad member {bad!r})")
    if "data" not in names or "policy.pth" not in names:
        raise LearnedPolicyError(f"model file {str(path)!r} is not an SB3 model (no 'data' / 'policy.pth' inside)")


def learned_env_config(name: str) -> dict:
    """The env config the model of ``name`` was trained with (``{}`` without a sidecar); validates the file."""
    algo, path = split_name(name)
    path = _resolve(path)
    if algo == RLLIB:
        if not is_rllib_checkpoint(path):
            raise LearnedPolicyError(f"{str(path)!r} is not a folder written by edgegym train --backend rllib "
                                     "(no model.edgegym.json with algo 'rllib' inside)")
    else:
        if is_rllib_checkpoint(path):
            raise LearnedPolicyError(f"{str(path)!r} was trained with edgegym train --backend rllib; load it as "
                                     f"rllib:{path}")
        _check_zip(path)
    side = sidecar_path(path)
    if not side.is_file():
        return {}
    try:
        meta = json.loads(side.read_text())
    except (OSError, ValueError) as e:
        raise LearnedPolicyError(f"model metadata {str(side)!r} is corrupt: {e}") from None
    cfg = meta.get("env_config") or {}
    if not isinstance(cfg, dict):
        raise LearnedPolicyError(f"model metadata {str(side)!r}: env_config must be a mapping")
    if meta.get("algo") not in (None, algo):
        raise LearnedPolicyError(
            f"model {str(path)!r} was trained with --algo {meta['algo']}; load it as {meta['algo']}:{path}"
        )
    return {k: dict(v) for k, v in cfg.items()}


@contextlib.contextmanager
def _legacy_module_names():
    """While loading, the pre-0.3 module names of edgegym's policy classes resolve to the current ones.

    Models saved before 0.3.0 pickle their policy class as ``agents.rl.shared.SharedRowPolicy`` (the package was
    then installed as a top-level ``agents``); the aliases exist only during the load, so no top-level ``agents``
    module is left behind to collide with another project's."""
    import edgegym.agents
    import edgegym.agents.rl
    import edgegym.agents.rl.shared

    aliases = {"agents": edgegym.agents, "agents.rl": edgegym.agents.rl, "agents.rl.shared": edgegym.agents.rl.shared}
    added = [k for k in aliases if k not in sys.modules]
    sys.modules.update({k: aliases[k] for k in added})
    try:
        yield
    finally:
        for k in added:
            sys.modules.pop(k, None)


def load_model(name: str, device: str = "cpu"):
    """Load the SB3 model of ``name`` (``<algo>:PATH``); :class:`LearnedPolicyError` on any bad file."""
    import importlib

    algo, path = split_name(name)
    path = _resolve(path)
    _check_zip(path)
    mod, cls = ALGOS[algo]
    try:
        klass = getattr(importlib.import_module(mod), cls)
    except ImportError as e:
        raise LearnedPolicyError(f"{algo} needs {mod}: pip install 'edgegym[rl]' ({e})") from None
    try:
        with _legacy_module_names():
            return klass.load(str(path), device=device)
    except Exception as e:  # SB3 raises many types for a foreign / truncated archive
        raise LearnedPolicyError(
            f"model file {str(path)!r} could not be loaded as {cls} ({type(e).__name__}: {e})"
        ) from None


def _load_rllib_policy(name: str, env) -> Policy:
    """``rllib:DIR`` bound to ``env``: the RLModule alone (no Ray cluster), acting by the argmax of its masked
    logits (:class:`edgegym.agents.rl.rllib_model.RllibPolicy`)."""
    learned_env_config(name)  # validates the folder
    folder = _resolve(split_name(name)[1])
    meta = json.loads((folder / RLLIB_SIDECAR).read_text())
    mod = folder / (meta.get("module") or Path(RLLIB_CHECKPOINT_DIR, *RLLIB_MODULE_SUBDIR))
    if not mod.is_dir():
        raise LearnedPolicyError(f"{str(folder)!r} has no RLlib module ({mod.relative_to(folder).as_posix()} is "
                                 "missing)")
    try:
        from .rllib_model import RllibPolicy, load_rllib_module
    except ImportError as e:
        raise LearnedPolicyError(f"{name} needs Ray RLlib: pip install 'edgegym[rllib]' ({e})") from None
    try:
        return RllibPolicy(env, load_rllib_module(mod), masked=bool(meta.get("masked", True)))
    except ValueError as e:
        raise LearnedPolicyError(str(e)) from None


class LearnedPolicy(Policy):
    """A trained SB3 model behind the common ``predict`` interface.

    For MaskablePPO the env's ``action_masks()`` is passed at every step, so the agent only ever picks
    legal actions, exactly as during training.

    Any number of rows: a model whose policy is a
    :class:`~edgegym.agents.rl.shared.SharedRowPolicy` has no per-row weights, so on an env whose observation has
    more or fewer rows than the one it was trained on (a larger or smaller cluster) it reads the env's
    observation with the env's own ``obs_layout()`` and applies the same weights to every row (the
    *variable-row path*; ``variable_rows`` True). On an env of the trained size it takes the path it always took
    (the same actions). Other models need the trained observation; the error then names the setting that pads the
    env's rows to the model's where the env's layout names one (``rows_setting``).
    """

    def __init__(self, env, model, masked: bool, variable_rows: bool | None = None) -> None:
        super().__init__(env)
        self.model = model
        self.masked = masked
        self._fast_ok = self._fast()
        #: the env's observation layout when the variable-row path reads it, else None
        self.layout: dict | None = None
        same = self._spaces_match(env, model)
        if variable_rows is None:
            variable_rows = same is not None
        if variable_rows:
            self.layout = self._variable_layout(env, model, same)
        elif same is not None:
            raise LearnedPolicyError(same)

    @staticmethod
    def _spaces_match(env, model) -> str | None:
        """None when the env's observation and action spaces are the model's, else the error that says which."""
        for what, mine, theirs in (
            ("observation", env.observation_space, model.observation_space),
            ("action", env.action_space, model.action_space),
        ):
            if mine.shape != theirs.shape or type(mine) is not type(theirs) or getattr(mine, "n", None) != getattr(
                theirs, "n", None
            ):
                return (f"the model's {what} space {theirs} does not match the env's {mine}: evaluate it on the env "
                        f"(and env config, e.g. action_mode) it was trained on{_rows_hint(env, model)}")
        return None

    def _variable_layout(self, env, model, mismatch: str | None) -> dict:
        """The env's ``obs_layout()`` when the model's shared-row network can read it (else the error)."""
        from gymnasium import spaces

        from .shared import SharedRowPolicy, env_obs_layout, layout_mismatch

        pol = getattr(model, "policy", None)
        layout = env_obs_layout(env)
        if not isinstance(pol, SharedRowPolicy) or not self._fast_ok or layout is None:
            raise LearnedPolicyError(mismatch or "only a SharedRowPolicy model reads a variable number of rows")
        if not (isinstance(env.observation_space, spaces.Box) and len(env.observation_space.shape) == 1
                and isinstance(env.action_space, spaces.Discrete)):
            raise LearnedPolicyError(mismatch or f"the env's spaces {env.observation_space}, {env.action_space} are "
                                     "not a flat Box and a Discrete")
        why = layout_mismatch(pol.mlp_extractor, layout, int(env.action_space.n))
        if why:
            raise LearnedPolicyError(f"the model's shared-row network cannot read this env's observation ({why}): "
                                     "evaluate it on the env (and env config, e.g. action_mode) it was trained on")
        return layout

    def _fast(self) -> bool:
        """Whether :meth:`predict` may take the direct argmax path: a deterministic action of an actor-critic
        policy over a ``Discrete`` action space and a ``Box`` observation (else SB3's ``predict``)."""
        from gymnasium import spaces

        pol = getattr(self.model, "policy", None)
        return (isinstance(self.model.action_space, spaces.Discrete)
                and isinstance(self.model.observation_space, spaces.Box)
                and all(hasattr(pol, a) for a in ("mlp_extractor", "action_net", "pi_features_extractor")))

    def _argmax(self, observation, mask) -> int:
        """SB3's deterministic action computed directly: the same operations as ``model.predict(...,
        deterministic=True)`` (features, actor, action logits, masked to −1e8 as sb3-contrib's
        ``MaskableCategorical``, normalised, softmax, argmax), without its per-call conversions and distribution
        objects. A test compares both on every state of episodes of the shipped agents."""
        import torch as th

        with th.inference_mode():
            return int(th.softmax(self._logits(observation, mask), dim=-1).argmax(dim=-1)[0])

    def _logits(self, observation, mask):
        """Normalised masked logits (1, n) of one observation (inside ``inference_mode``)."""
        import torch as th

        pol = self.model.policy
        if self.layout is None:
            obs = th.as_tensor(np.asarray(observation)).reshape((1, *self.model.observation_space.shape))
            feats = pol.extract_features(obs, pol.pi_features_extractor)
            logits = pol.action_net(pol.mlp_extractor.forward_actor(feats))
        else:  # the variable-row path: the env's layout, the same weights on each of its rows
            obs = th.as_tensor(np.asarray(observation)).reshape((1, -1))
            feats = pol.extract_features(obs, pol.pi_features_extractor)
            logits = pol.action_net(pol.mlp_extractor.forward_actor(feats, self.layout))
        if mask is not None:
            logits = th.where(th.as_tensor(mask).reshape(logits.shape), logits, th.tensor(-1e8))
        return logits - logits.logsumexp(dim=-1, keepdim=True)

    def entropy(self, observations, masks) -> np.ndarray:
        """Entropy (nats) of the masked action distribution at each of ``observations`` (T, obs) with ``masks``
        (T, n) or None: the model's own (``diagnostics.policy_entropy``) on the trained layout, the variable-row
        path's logits otherwise."""
        if self.layout is None:
            from .diagnostics import policy_entropy

            return policy_entropy(self.model, observations, masks)
        import torch as th

        with th.inference_mode():
            return np.array([float(th.distributions.Categorical(logits=self._logits(o, None if masks is None
                                                                                      else masks[i])).entropy()[0])
                             for i, o in enumerate(observations)])

    def _sample(self, observation, mask) -> int:
        """A stochastic action of the variable-row path: a draw from the masked softmax with torch's generator, as
        SB3's ``predict(..., deterministic=False)`` draws."""
        import torch as th

        with th.inference_mode():
            return int(th.distributions.Categorical(logits=self._logits(observation, mask)).sample()[0])

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = True):
        """SB3-compatible ``(action, state)``; the action is unbatched."""
        if deterministic and state is None and self._fast_ok:
            mask = np.asarray(self.unwrapped.action_masks(), dtype=bool) if self.masked else None
            return self._argmax(observation, mask), None
        if self.layout is not None:  # SB3's predict would reject an observation of another size
            mask = np.asarray(self.unwrapped.action_masks(), dtype=bool) if self.masked else None
            return (self._argmax(observation, mask) if deterministic else self._sample(observation, mask)), state
        if self.masked:
            mask = np.asarray(self.unwrapped.action_masks(), dtype=bool)
            action, state = self.model.predict(
                observation, state=state, episode_start=episode_start, deterministic=deterministic, action_masks=mask
            )
        else:
            action, state = self.model.predict(
                observation, state=state, episode_start=episode_start, deterministic=deterministic
            )
        if hasattr(self.env.action_space, "n"):
            action = int(np.asarray(action).reshape(()))
        return action, state


def _rows_hint(env, model) -> str:
    """``"; this model reads N rows: run with --env-config ..."``: the config setting that gives ``env`` the model's
    number of observation rows, when the env's ``obs_layout()`` names it (``rows_setting``) and the model's
    observation is that layout with another number of rows (with a caveat when that is fewer rows than the env
    has now); ``""`` otherwise."""
    from gymnasium import spaces

    from .shared import env_obs_layout

    layout = env_obs_layout(env)
    setting = (layout or {}).get("rows_setting")
    mine, theirs = env.observation_space, model.observation_space
    if not setting or not all(isinstance(s, spaces.Box) and len(s.shape) == 1 for s in (mine, theirs)):
        return ""
    fixed = mine.shape[0] - int(layout["rows"]) * int(layout["row_dim"])  # the features that are not rows
    rows, rest = divmod(theirs.shape[0] - fixed, int(layout["row_dim"]))
    value = rows - int(setting.get("extra_rows", 0))
    if rest or value < 0:
        return ""
    key = f"{setting['section']}.{setting['key']}"
    fix = (f"; this model reads {rows} rows: run with --env-config '{{\"{setting['section']}\": "
           f"{{\"{setting['key']}\": {value}}}}}' ({key})")
    if value < int(layout["rows"]) - int(setting.get("extra_rows", 0)):
        fix += (f", possible only if this env accepts {key} = {value} (it has {int(layout['rows'])} rows now); an "
                "agent with the shared-row policy (SharedRowPolicy) reads any number of rows")
    return fix


def load_learned_policy(name: str, env) -> Policy:
    """Load ``<algo>:PATH`` (an SB3 model: :class:`LearnedPolicy`; ``rllib:DIR``:
    :class:`~edgegym.agents.rl.rllib.RllibPolicy`) and bind it to ``env`` (whose spaces must match the model's)."""
    import torch

    torch.set_num_threads(1)
    algo, path = split_name(name)
    if algo == RLLIB:
        return _load_rllib_policy(name, env)
    model = load_model(name)
    try:
        return LearnedPolicy(env, model, masked=algo == "maskable-ppo")
    except LearnedPolicyError as e:
        raise LearnedPolicyError(f"{e}{_trained_env_hint(path, env)}") from None


def _trained_env_hint(path: Path, env) -> str:
    """``"; the trained env had ..."``: the ``env`` settings of the env the model was trained on (its sidecar's
    env id and config) that differ from ``env``'s and change its observation shape, as the ``--env-config`` that
    sets them; ``""`` when there is no sidecar or no such setting. The number of rows is left to the model."""
    import gymnasium as gym

    side = sidecar_path(_resolve(path))
    try:
        meta = json.loads(side.read_text())
        trained = gym.make(meta["env_id"], config=meta.get("env_config") or None).unwrapped.preset.to_dict()["env"]
        mine = env.unwrapped.preset
        here = mine.to_dict()["env"]
    except Exception:  # noqa: BLE001 - no sidecar, an unknown id, no preset: no hint, the error stands
        return ""
    from .shared import env_obs_layout

    rows_key = ((env_obs_layout(env) or {}).get("rows_setting") or {}).get("key")  # _rows_hint's
    fix = {}
    for key, value in trained.items():
        if key in here and here[key] != value and value is not None and key != rows_key:
            try:
                shape = env.unwrapped.__class__(mine, config={"env": {key: value}}).observation_space.shape
            except Exception:  # noqa: BLE001 - a value this env cannot take is no hint
                continue
            if shape != env.observation_space.shape:
                fix[key] = value
    if not fix:
        return ""
    return (f"; the env it was trained on ({meta['env_id']}) has {', '.join(f'env.{k} = {v}' for k, v in fix.items())}:"
            f" --env-config '{json.dumps({'env': fix})}'")


def resolve_policy(name: str) -> str:
    """A saved agent given by path (``DIR`` or ``DIR/model.zip``) -> ``<algo>:PATH``, the algorithm read from
    its sidecar ``model.edgegym.json``; any other name is returned unchanged."""
    if not isinstance(name, str) or ":" in name.split("/")[0]:
        return name
    path = Path(name)
    if path.is_dir() and (path / "model.zip").is_file():
        path = path / "model.zip"
    if path.suffix != ".zip":
        return name
    side = sidecar_path(path)
    if not side.is_file():
        if path.exists():
            raise UserError(f"cannot tell the algorithm of {str(path)!r} (no sidecar {side.name}): "
                            "name it as ppo:PATH or maskable-ppo:PATH")
        raise UserError(f"model file {str(path)!r} does not exist")
    try:
        algo = json.loads(side.read_text())["algo"]
    except (OSError, ValueError, KeyError):
        raise UserError(f"{side}: unreadable sidecar (expected JSON with an 'algo' key)") from None
    return f"{algo}:{path}"
