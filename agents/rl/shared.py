"""A per-server shared-scorer policy for sb3-contrib MaskablePPO: one small network scores every server row.

A flat MLP over ``job | row_0 | … | row_{N-1} | global`` must learn the same per-server rule separately for
each row position. Here every row goes through the *same* network, as in Decima (H. Mao et al., "Learning
Scheduling Algorithms for Data Processing Clusters", SIGCOMM 2019) and Park (H. Mao et al., "Park: An Open
Platform for Learning-Augmented Computer Systems", NeurIPS 2019):

* context ``c = MLP_c(job ‖ global)``;
* row embedding ``h_i = MLP_h(row_i ‖ c)`` (shared weights), pooled over the rows that exist (non-zero rows:
  padding rows are all zero) by mean and max into ``p``;
* an action that picks row ``i`` gets the logit ``MLP_s(h_i ‖ p ‖ c)`` (shared scorer); the other actions (reject,
  or a family's non-row actions such as EdgeCloudML's cloud shares) get logits from ``Linear(p ‖ c)``;
* the value is ``Linear(MLP_v(p ‖ c))``.

Permuting the server rows of the observation permutes the row logits the same way and leaves the value and
the other logits unchanged (tested). No weight depends on the number of rows, so a trained network reads an env
with more or fewer rows (another cluster size) by the env's own layout (``forward_actor(obs, layout)``; a saved agent
does so in :class:`edgegym.agents.rl.learned.LearnedPolicy`). The observation layout comes from the env's
``obs_layout()``
(``{"job": (a, b), "rows_start", "rows", "row_dim", "glob": (a, b), "row_actions", "extra_actions"}``), which
:func:`edgegym.agents.rl.train.train` passes as ``policy_kwargs["layout"]`` when the hyperparameters say
``policy: SharedRowPolicy``. ``job`` and ``glob`` are each one ``(start, stop)`` range or a sequence of them (read in
order and concatenated), so that an env can leave out of the context the blocks whose width depends on the cluster
size (per-site features that are not rows) and a trained network reads every size.
"""

from __future__ import annotations

import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

__all__ = ["SharedRowNet", "SharedRowPolicy", "env_obs_layout", "layout_mismatch", "segments", "width"]


def env_obs_layout(env) -> dict | None:
    """The env's ``obs_layout()`` (unwrapped), or None when its family does not describe its observation."""
    fn = getattr(env.unwrapped, "obs_layout", None)
    return dict(fn()) if callable(fn) else None


def segments(spec) -> tuple[tuple[int, int], ...]:
    """A layout's ``job`` or ``glob`` entry as a tuple of ``(start, stop)`` ranges: one ``(a, b)`` pair, or a
    sequence of pairs (read in order). Raises ``ValueError`` naming what is wrong."""
    items = list(spec)
    if len(items) == 2 and all(hasattr(v, "__index__") for v in items):
        items = [items]
    out = []
    for seg in items:
        try:
            a, b = (int(v) for v in seg)
        except (TypeError, ValueError):
            raise ValueError(f"a layout range must be a (start, stop) pair of integers, got {seg!r}") from None
        if not 0 <= a <= b:
            raise ValueError(f"a layout range must have 0 <= start <= stop, got ({a}, {b})")
        out.append((a, b))
    return tuple(out)


def width(spec) -> int:
    """The number of features a layout's ``job`` or ``glob`` entry reads (the sum of its ranges' lengths)."""
    return sum(b - a for a, b in segments(spec))


def _take(obs: th.Tensor, segs: tuple[tuple[int, int], ...]) -> list[th.Tensor]:
    return [obs[:, a:b] for a, b in segs]


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers)


def _apply(seq: nn.Sequential, start: int, x: th.Tensor) -> th.Tensor:
    """``seq``'s modules from index ``start`` on, applied to ``x`` (``seq[start:](x)`` without building a slice)."""
    for i, m in enumerate(seq):
        if i >= start:
            x = m(x)
    return x


#: from this many rows in a batch (B x N) on, :func:`_cat_linear` takes the per-sample product once per sample
FACTOR_MIN_ROWS = 1024


def _cat_linear(layer: nn.Linear, rows: th.Tensor, per_sample: th.Tensor) -> th.Tensor:
    """``layer(rows_i ‖ per_sample)`` for every row ``i`` of ``rows`` (B, N, a), ``per_sample`` (B, b).

    On large batches (a PPO minibatch: ``B·N >= FACTOR_MIN_ROWS``) ``per_sample``'s product is computed once per sample
    instead of once per row, the same function with the same weights (HeteroML-v1's 288 rows: forward and backward
    ~2x faster); on small ones (a rollout step) concatenating is faster, having fewer operations
    (``python benchmarks/policy_network.py``)."""
    B, N, a = rows.shape
    if B * N < FACTOR_MIN_ROWS:
        return layer(th.cat([rows, per_sample.unsqueeze(1).expand(B, N, per_sample.shape[1])], dim=2))
    w = layer.weight
    return nn.functional.linear(rows, w[:, :a]) + nn.functional.linear(per_sample, w[:, a:], layer.bias).unsqueeze(1)


class SharedRowNet(nn.Module):
    """The ``mlp_extractor`` of :class:`SharedRowPolicy`: ``latent_pi`` is the logits themselves."""

    def __init__(self, layout: dict, n_actions: int, hidden: int = 64) -> None:
        super().__init__()
        self.job = segments(layout["job"])
        self.glob = segments(layout["glob"])
        self.rows_start = int(layout["rows_start"])
        self.rows = int(layout["rows"])
        self.row_dim = int(layout["row_dim"])
        self.row_actions = bool(layout["row_actions"])
        self.n_actions = int(n_actions)
        self.n_extra = self.n_actions - (self.rows if self.row_actions else 0)
        if self.n_extra < 0:
            raise ValueError(f"layout has {self.rows} row actions but the action space has only {n_actions}")
        ctx_in = width(self.job) + width(self.glob)
        self.ctx = _mlp([ctx_in, hidden])
        self.row_net = _mlp([self.row_dim + hidden, hidden, hidden])
        self.score = nn.Sequential(_mlp([3 * hidden + hidden, hidden]), nn.Linear(hidden, 1)) if self.row_actions \
            else None
        self.extra = nn.Linear(3 * hidden, self.n_extra) if self.n_extra else None
        self.value = _mlp([3 * hidden, hidden])
        self.latent_dim_pi = self.n_actions
        self.latent_dim_vf = hidden

    def _encode(self, obs: th.Tensor, concat: bool = False, layout: dict | None = None):
        """Row embeddings ``h`` (B, N, hidden), pooled ``p ‖ c`` and context ``c`` of a batch of observations laid
        out as ``layout`` (an env's ``obs_layout()``; default: the layout the network was built for). The weights
        do not depend on the number of rows ``N``, so a layout with more or fewer rows (a larger or smaller
        cluster) is read with the same weights; see :func:`layout_mismatch` for what must agree."""
        B = obs.shape[0]
        if layout is None:
            job, glob, start, R = self.job, self.glob, self.rows_start, self.rows
        else:
            job, glob = segments(layout["job"]), segments(layout["glob"])
            start, R = int(layout["rows_start"]), int(layout["rows"])
        ctx = self.ctx(th.cat(_take(obs, job) + _take(obs, glob), dim=1))
        rows = obs[:, start : start + R * self.row_dim].reshape(B, R, self.row_dim)
        exists = (rows.abs().sum(dim=2, keepdim=True) > 0).to(obs.dtype)  # (B, N, 1): padding rows are zero
        if concat:  # the reference form: the context concatenated to every row
            h = self.row_net(th.cat([rows, ctx.unsqueeze(1).expand(B, R, ctx.shape[1])], dim=2))
        else:
            h = _apply(self.row_net, 1, _cat_linear(self.row_net[0], rows, ctx))  # row_net(row_i ‖ ctx), every row
        n = exists.sum(dim=1).clamp(min=1.0)
        mean = (h * exists).sum(dim=1) / n
        mx = th.where(exists > 0, h, th.full_like(h, -1e4)).max(dim=1).values
        mx = th.where(exists.sum(dim=1) > 0, mx, th.zeros_like(mx))
        pooled = th.cat([mean, mx, ctx], dim=1)  # (B, 3 hidden)
        return h, pooled, ctx

    def forward_actor(self, obs: th.Tensor, layout: dict | None = None) -> th.Tensor:
        """Action logits (B, n_actions) of observations laid out as ``layout`` (default: the network's own); with
        row actions, one logit per row of ``layout`` then the extra actions."""
        h, pooled, _ = self._encode(obs, layout=layout)
        return self._logits(h, pooled)

    def _logits(self, h: th.Tensor, pooled: th.Tensor, concat: bool = False) -> th.Tensor:
        parts = []
        if self.row_actions:
            parts.append(self._row_logits(h, pooled, concat))
        if self.extra is not None:
            parts.append(self.extra(pooled))
        return th.cat(parts, dim=1)

    def _row_logits(self, h: th.Tensor, pooled: th.Tensor, concat: bool = False) -> th.Tensor:
        """``score(h_i ‖ p ‖ c)`` for every row ``i``: (B, N)."""
        if concat:
            B, N = h.shape[0], h.shape[1]
            return self.score(th.cat([h, pooled.unsqueeze(1).expand(B, N, pooled.shape[1])], dim=2)).squeeze(2)
        hidden_layer = self.score[0]  # Sequential(Linear(4 hidden, hidden), Tanh)
        z = _apply(hidden_layer, 1, _cat_linear(hidden_layer[0], h, pooled))
        return _apply(self.score, 1, z).squeeze(2)

    def forward_critic(self, obs: th.Tensor) -> th.Tensor:
        return self.value(self._encode(obs)[1])

    def forward(self, obs: th.Tensor):
        h, pooled, _ = self._encode(obs)
        return self._logits(h, pooled), self.value(pooled)

    def forward_concat(self, obs: th.Tensor):
        """:meth:`forward` in its concatenating form (each row's input ``row_i ‖ context`` built in memory): the
        same function and weights, slower on large batches; the oracle of the factorised layers' test and the
        comparison of ``benchmarks/policy_network.py``."""
        h, pooled, _ = self._encode(obs, concat=True)
        return self._logits(h, pooled, concat=True), self.value(pooled)


def layout_mismatch(net: SharedRowNet, layout: dict, n_actions: int) -> str | None:
    """Why ``net`` cannot read observations laid out as ``layout`` with ``n_actions`` actions (None: it can).

    The network reads any number of rows with the same weights; what must agree is the width of the job and
    global blocks, the features per row, whether actions pick rows, and the number of other actions."""
    rows = int(layout["rows"])
    extra = int(n_actions) - (rows if layout.get("row_actions") else 0)
    mine = {"job features": width(net.job), "global features": width(net.glob),
            "features per row": net.row_dim, "row actions": net.row_actions, "non-row actions": net.n_extra}
    theirs = {"job features": width(layout["job"]),
              "global features": width(layout["glob"]), "features per row": int(layout["row_dim"]),
              "row actions": bool(layout.get("row_actions")), "non-row actions": extra}
    diff = [f"{k} {mine[k]} (model) vs {theirs[k]} (env)" for k in mine if mine[k] != theirs[k]]
    return "; ".join(diff) or None


class SharedRowPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy whose logits come from :class:`SharedRowNet` (``policy_kwargs``: ``layout``, ``hidden``).

    Works for any ``Discrete`` action space whose env provides ``obs_layout()``; ``net_arch`` is ignored.
    """

    def __init__(self, observation_space, action_space, lr_schedule, *args, layout: dict | None = None,
                 hidden: int = 64, **kwargs) -> None:
        if layout is None:
            raise ValueError("SharedRowPolicy needs policy_kwargs['layout'] (the env's obs_layout())")
        self.layout = dict(layout)
        self.hidden = int(hidden)
        kwargs.pop("net_arch", None)
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SharedRowNet(self.layout, int(self.action_space.n), self.hidden)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor's actor output is already the logits
        net = self.mlp_extractor
        for head in (net.score[-1] if net.score is not None else None, net.extra):  # small initial logits
            if head is not None:
                nn.init.orthogonal_(head.weight, gain=0.01)
                nn.init.zeros_(head.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(layout=self.layout, hidden=self.hidden)
        data.pop("net_arch", None)
        return data

    def logits(self, obs: th.Tensor) -> th.Tensor:
        """Unmasked action logits of a batch of observations."""
        return self.mlp_extractor.forward_actor(self.extract_features(obs))
