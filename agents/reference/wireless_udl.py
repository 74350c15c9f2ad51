"""``Okita`` for unbiased distributed learning over wireless edge sites (the WirelessUDL family).

Paper: Z. Han, R. Zhou, J. Pang, H. Tan, Y. Cao, "Online Scheduling Unbiased Distributed Learning over Wireless
Edge Networks", IEEE ICPADS, 2021.

``Okita`` (Alg. 1 with PA, Alg. 2, and DTA, Alg. 3) runs every slot: for every unfinished job it enumerates the
worker count N (window ``l = ceil(M_i / (κ_i N))``), places the PS and workers by the site score Q (PA), routes
the window's data by DTA and keeps the N minimising bandwidth + latency cost (the *tentative optimum*, under
full capacities); it then serves jobs by decreasing priority O_i(t) and, on a resource conflict, compares
re-placing the job in the leftover resources (*migrate*) with skipping the slot (*delay*) and takes the cheaper.

Guarantee: none of a competitive kind. The paper proves feasibility (Thm. 1) and polynomial time (Thm. 2); its
"competitive ratio < 1.8" is an empirical ratio to an offline optimum, checked here against the MILP optimum
(workers bounded by capacity only) on tiny instances, not asserted as a bound.

Two forms, and a variant:

* ``okita`` — the faithful, preemptive form: the env's ``replan`` mode with the slot discipline
  :class:`edgegym.families.wireless_udl.disciplines.OkitaDiscipline`; the per-arrival action is a no-op.
* ``okita-one`` — Okita with one worker per job (:class:`OkitaRule` with rule ``one`` on the replan mode's
  worker-rule action, ``env.replan_workers``): not the paper's algorithm but a variant under its own name. Okita's
  tentative optimum N* is chosen under a plan fixed for the job's window, where the data of remote sites is
  transferred to the workers; in the replan mode a single worker (with its PS) is re-placed every slot, by PA's
  score, at the sites that still hold data, so it trains mostly local data at little transfer and no parameter
  exchange. Under a bounded latency cost (the default preset's logistic reading, at most b ≈ 300-400 per job)
  the slower job costs less in total (the measurements are on the Okita policy page of the documentation).
* ``okita-a`` — :class:`OkitaA`, the arrival-time form on the ``commit`` mode: the tentative plan
  (N_tent, PA under C) if it fits the calendar now, else the cheaper of *migrate* (the ``now`` candidate with
  N_tent: PA under the window's free resources) and *delay* (the ``wait`` candidate: the tentative placement at
  its earliest fitting start); ties go to ``now``. Both are rows of the candidate table (N_tent is always in
  it), so the policy is exactly an env action.

Deviations (readings of the paper's gaps):
    * Program (2) is missing from the paper's text; the model reconstructs it (every chunk trained once, PS
      present iff the job trains, completion = last slot with training, latency ``t_last − a_i + 1``).
    * "Calculate d from y" (Alg. 1 l. 22, OSF) is SPLIT: local data first, then spare capacity by decreasing Q;
      OSF uses the window workload (h = l). DTA sorts sources by the source→destination price (M at the start of
      the slot).
    * The paper's presets use ``complete`` sampling (Alg. 3 on the untrained data M). Under the
      ``proportional`` variant the chunks trained in a slot come from the origin sites in proportion to their
      data, DTA routes the slot's per-origin quota, and Okita's estimates (tentative enumeration, migrate cost)
      run the plan slot by slot so that they model the cost it will pay.
    * Alg. 1 l. 17 (lost tilde): cost2 = cost_i − f(t + l* − a) + f(t + Δ + l* − a), Δ = max l* over the placed
      jobs occupying the conflicting sites (1 if none). Migration keeps N_i* (no shrinking).
    * PA skips resources a worker does not use and PS sites where the PS does not fit; PA's "≤" tie rule
      (last tied PS site wins) is kept. The q term of Q is normalised by max q (``q_norm: one`` is literal).
    * α = (1, 1), β = (1, 1, 1) (not given). Piecewise latency uses a repaired priority (the printed formula
      gives every piecewise job the same first term). The logistic cost's priority weight is its printed τ.
    * The tentative per-N bandwidth estimates are cached per job and recomputed when its data changes (the
      latency term is re-scored every slot): identical decisions, faster.
    * Okita-A is non-preemptive: its delay estimate comes from the calendar, not from l_ĩ*.
"""

from __future__ import annotations

import numpy as np
from edgegym.agents.policy import NoOpPolicy, Policy, PolicySpec, advance_constant

__all__ = ["POLICY_SPECS", "OkitaA", "OkitaRule"]

FAMILY = ("WirelessUDL",)


class OkitaA(Policy):
    """Arrival-time Okita on the commit mode (see the module docstring); reads ``env.unwrapped.view()``."""

    def decide(self, view) -> tuple[int, str]:
        """``(action, reason)`` with reason ``keep`` (tentative plan fits now), ``migrate`` or ``delay``."""
        c = view.cand
        rows = np.flatnonzero(c.N == c.n_tent)
        j = int(rows[0]) // 2
        now, wait = 2 * j, 2 * j + 1
        if c.mask[now] and c.mask[wait] and c.start[wait] == view.t:
            return now, "keep"  # the tentative placement fits the calendar now: both rows are that plan
        if not c.mask[now] and not c.mask[wait]:  # cannot happen for N_tent (wait always fits eventually)
            return int(np.argmin(np.where(c.mask, c.total, np.inf))), "fallback"
        cost1 = c.total[now] if c.mask[now] else np.inf
        cost2 = c.total[wait] if c.mask[wait] else np.inf
        return (wait, "delay") if cost1 > cost2 else (now, "migrate")

    def act(self, obs):
        return self.decide(self.unwrapped.view())[0]


class OkitaRule(Policy):
    """The same worker rule for every arriving job (replan mode with ``env.replan_workers``; see
    :data:`edgegym.families.wireless_udl.disciplines.WORKER_RULES`)."""

    def __init__(self, env, rule: str = "one") -> None:
        from edgegym.families.wireless_udl.disciplines import WORKER_RULES

        super().__init__(env)
        if rule not in WORKER_RULES:
            raise ValueError(f"unknown worker rule {rule!r}; expected one of {', '.join(WORKER_RULES)}")
        self.rule = WORKER_RULES.index(rule)

    def act(self, obs):
        return self.rule

    def advance(self, steps: int | None, total: float):
        """:func:`~edgegym.agents.policy.advance_constant` with this rule."""
        return advance_constant(self, self.rule, steps, total)


POLICY_SPECS = (
    PolicySpec(
        "okita",
        lambda env, seed: NoOpPolicy(env),
        FAMILY,
        "Okita (Han et al., ICPADS 2021; Alg. 1-3), faithful preemptive form: re-plans every active job every slot",
        {"env": {"mode": "replan", "discipline": "okita"}},
    ),
    PolicySpec(
        "okita-one",
        lambda env, seed: OkitaRule(env, "one"),
        FAMILY,
        "Okita with one worker per job, re-placed every slot (a variant of Okita, replan mode; not the paper's)",
        {"env": {"mode": "replan", "discipline": "okita", "replan_workers": True}},
        variant=True,
    ),
    PolicySpec(
        "okita-a",
        lambda env, seed: OkitaA(env),
        FAMILY,
        "Okita-A: Okita's tentative plan at arrival, keep / migrate / delay on the calendar (non-preemptive)",
        {"env": {"mode": "commit"}},
    ),
)
