"""Expert iteration (DAgger): a teacher labels the states the student itself visits.

DAgger (Ross, Gordon and Bagnell, "A Reduction of Imitation Learning and Structured Prediction to No-Regret Online
Learning", AISTATS 2011) turns any policy (the *teacher*: a reference policy, a baseline, a rollout policy or a saved
agent) into a fast learned policy (the *student*, the SB3 network PPO trains) without the compounding errors of plain
behaviour cloning, which only sees the states the teacher reaches:

* round 0: the teacher's own trajectories (behaviour cloning, :func:`edgegym.agents.rl.bc.collect` and
  :func:`~edgegym.agents.rl.bc.clone`);
* rounds 1..N: the current student runs ``episodes`` episodes on training seeds (argmax actions, masks honoured);
  at every state it visits the teacher is asked for its action on that very state (it is bound to the env the
  student steps and reads the current state, before the student's action is applied); the labelled states are
  added to the aggregate data set, and the student is fitted again on the whole aggregate, starting from its current
  weights;
* every round's student is evaluated (argmax) on the best-model evaluation seeds, and the best round's weights are
  the result.

β-mixture (the paper's π_i = β_i π* + (1 − β_i) π̂_i): in round ``i`` the action *executed* at a state is the
teacher's with probability ``beta ** i`` and the student's otherwise (the label is always the teacher's);
``beta = 0`` (the default) runs the pure student from round 1 on, the variant the paper recommends in practice.
The draws come from ``numpy.random.default_rng([seed, round])``.

Teachers with internal state. A teacher is stepped alongside the student: it sees the student's decisions only
through the env. Every shipped teacher of the hyperparameter files (``aonline``, ``ondisc``, ``o4a``, ``earliest``,
``greedy-min-cost``) and every learned agent decides from the env's current state alone, so its labels are exactly
its decisions on the student's states; a rollout teacher re-plans from a fork of the current state at every decision.
A teacher that keeps its own record of its past decisions (HeteroML's A_online variants keep a ledger of their own
reservations) labels the student's states with a record that assumes its own actions were taken where the student's
differed; such a teacher (``Policy.markov`` false, see :func:`teacher_is_markov`) is still usable, but its labels are
those of the teacher continued from that record, and :func:`run_dagger` says so in a warning.

Seeds: the rounds use ``seed_start, seed_start + 1, …`` (``episodes`` per round, a new block each round), which must be
disjoint from the evaluation seeds (100-104) and the best-model evaluation seeds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .bc import Demonstrations, label_episodes

__all__ = ["DaggerRound", "EVAL_SEEDS", "check_seeds", "check_teacher", "label_student_states", "run_dagger",
           "teacher_is_markov", "warm_start"]

#: the seeds ``edgegym eval`` and the reports use: never a training seed
EVAL_SEEDS = range(100, 105)


@dataclass(frozen=True, slots=True)
class DaggerRound:
    """The states one round's student visited, labelled by the teacher.

    ``demos.actions`` are the teacher's labels (a structured action, e.g. a HeteroML ``Placement``, as its nearest
    grid action), ``executed`` the actions taken (the student's, or the teacher's with the β-mixture: its own
    structured action runs, recorded here as its label), ``student`` the student's argmax action on every state;
    ``seeds`` the episodes' seeds;
    ``label_s`` the seconds spent in the teacher's decisions; ``teacher_steps`` how many executed actions were the
    teacher's."""

    demos: Demonstrations
    executed: np.ndarray
    student: np.ndarray
    seeds: tuple[int, ...]
    label_s: float
    teacher_steps: int

    @property
    def agreement(self) -> float:
        """Fraction of the visited states on which the student's argmax equals the teacher's label."""
        return float(np.mean(self.student == self.demos.actions)) if len(self.demos) else float("nan")


def check_teacher(env_id: str, teacher: str) -> None:
    """Raise :class:`~edgegym.agents.errors.UserError` when ``teacher`` is not a policy that runs on ``env_id``: an
    unknown name (the message lists the valid ones), a policy or saved agent of another family."""
    from ..errors import UserError
    from ..runner import check_env_policy

    if not isinstance(teacher, str) or not teacher:
        raise UserError(f"teacher must be a policy name, got {teacher!r}")
    try:
        check_env_policy(env_id, teacher)
    except UserError as e:
        raise UserError(f"teacher: {e}") from None


def teacher_is_markov(env_id: str, teacher: str, env_config: dict | None = None) -> bool:
    """Whether ``teacher`` decides from the env's current state alone (``Policy.markov``; HeteroML's A_online
    policies keep their own schedule of their past decisions), so that its label on a state the student reached is
    its decision there."""
    from ..runner import make_env

    env, pol = make_env(env_id, teacher, 0, env_config)
    env.close()
    try:
        from ..reference.rollout import _is_markov
    except ImportError:  # a version without the rollout policies: the attribute alone
        return bool(getattr(pol, "markov", True))
    return bool(_is_markov(pol))


def check_seeds(first: int, count: int, flag: str, reserved: dict[str, range]) -> None:
    """Raise ``ValueError`` naming ``flag`` when the seeds ``first .. first + count - 1`` meet a ``reserved`` range."""
    mine = range(int(first), int(first) + max(int(count), 0))
    for name, r in reserved.items():
        if mine and r and max(mine.start, r.start) < min(mine.stop, r.stop):
            raise ValueError(f"{flag}: training seeds {mine.start}-{mine.stop - 1} overlap the {name} "
                             f"{r.start}-{r.stop - 1}; choose seeds disjoint from them")


def label_student_states(model, env_id: str, teacher: str, seeds, env_config: dict | None = None, *,
                         beta: float = 0.0, rng_seed=0, on_episode=None, workers: int = 1,
                         address: str | None = None, pool=None) -> DaggerRound:
    """Run the student ``model`` (argmax) on ``env_id`` for each seed and label every visited state by ``teacher``.

    The env is built as for behaviour cloning (the teacher's own preset overrides, then ``env_config``), the teacher
    is bound to it, and at every decision the teacher's action is asked for before the executed action (the
    student's, or with probability ``beta`` the teacher's) is applied (:func:`edgegym.agents.rl.bc.label_episodes`,
    the loop behaviour cloning runs with the teacher always executing). ``on_episode(k, n)`` reports progress.
    ``workers`` > 1 labels on that many processes, or Ray tasks on the cluster at ``address`` (``pool``: an open
    :func:`~edgegym.agents.rl.bc.labelling_pool` instead): the same labels as one process."""
    if not 0.0 <= float(beta) <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    demos, x = label_episodes(env_id, teacher, seeds, env_config, student=model, beta=float(beta), rng_seed=rng_seed,
                              on_episode=on_episode, purpose="expert iteration", workers=workers, address=address,
                              pool=pool)
    return DaggerRound(demos, x["executed"], x["student"], tuple(int(s) for s in seeds), x["label_s"],
                       x["teacher_steps"])


def run_dagger(model, env_id: str, teacher: str, round0: Demonstrations, *, rounds: int, episodes: int,
               env_config: dict | None = None, eval_seeds=(), beta: float = 0.0, seed_start: int = 30_000,
               epochs: int = 20, seed: int = 0, keep_best: bool = True, progress=None, workers: int = 1,
               address: str | None = None, pool=None, on_round=None) -> dict:
    """Rounds 1..``rounds`` of DAgger on ``model`` (already fitted to ``round0``, the teacher's own trajectories).

    Every round: label the student's states (:func:`label_student_states`, seeds ``seed_start + (i-1)·episodes``
    onwards, executed actions the teacher's with probability ``beta ** i``), aggregate, fit again on the aggregate
    (warm start, ``epochs`` passes), evaluate the student (argmax) on ``eval_seeds``. Round 0 (the behaviour-cloned
    model) is evaluated first. With ``keep_best`` the weights of the best evaluated round (highest mean return; the
    earliest on ties) are loaded back at the end. ``workers`` (> 1), ``address`` and ``pool``: where the teacher
    labels (:func:`label_student_states`).

    Returns ``{"teacher", "beta", "episodes", "epochs", "seed_start", "rounds": [...], "best_round",
    "restored_round", "wall_s", "label_s", "fit_s", "eval_s"}``; a round row holds ``round``, ``seeds``
    (first, last), ``beta`` (the executed-teacher probability), ``new_states``, ``dataset_size`` (the aggregate
    after the round), ``agreement`` (student argmax vs teacher label on the new states, before refitting),
    ``train_agreement`` (on the aggregate, after refitting; both ``None`` for round 0), ``teacher_label_s``,
    ``teacher_steps``,
    ``student_objective`` (the visiting student's mean episode objective), ``eval_mean_return``,
    ``eval_mean_objective``, ``eval_std_objective``, ``max_action_share`` and the round's times. ``warnings``: a
    teacher that is not Markov (:func:`teacher_is_markov`). ``progress(msg)``
    gets one line per phase of every round. ``on_round(row)``, when given, is called after every round's
    evaluation (round 0 included); a true return value ends the rounds there (``stopped_round`` in the summary).
    """
    import copy

    from .bc import clone
    from .best import evaluate_model

    if int(rounds) < 0:
        raise ValueError(f"dagger_rounds must be >= 0, got {rounds}")
    if int(episodes) < 1:
        raise ValueError(f"dagger_episodes must be >= 1, got {episodes}")
    if not 0.0 <= float(beta) <= 1.0:
        raise ValueError(f"dagger_beta must be in [0, 1], got {beta}")
    say = progress or (lambda msg: None)
    eval_seeds = [int(s) for s in eval_seeds]
    warnings = []
    markov = teacher_is_markov(env_id, teacher, env_config) if int(rounds) > 0 else True
    if not markov:
        warnings.append(f"DAgger teacher {teacher} keeps its own record of its past decisions: its labels on the "
                        "student's states assume its own earlier decisions were taken (use a teacher that decides "
                        "from the env's state, e.g. a rollout policy over one)")
        say(f"warning: {warnings[-1]}")
    t_start = time.perf_counter()
    totals = {"label_s": 0.0, "fit_s": 0.0, "eval_s": 0.0}
    best = {"row": None, "state": None}

    def evaluate(row: dict) -> None:
        t = time.perf_counter()
        recs = evaluate_model(model, env_id, eval_seeds, env_config) if eval_seeds else []
        row["eval_s"] = time.perf_counter() - t
        totals["eval_s"] += row["eval_s"]
        if not recs:
            return
        objs = np.array([r["objective"] for r in recs])
        row.update(eval_mean_return=float(np.mean([r["episode_return"] for r in recs])),
                   eval_mean_objective=float(objs.mean()), eval_std_objective=float(objs.std()),
                   max_action_share=float(max(r["max_action_share"] for r in recs)))
        if best["row"] is None or row["eval_mean_return"] > best["row"]["eval_mean_return"]:
            best["row"], best["state"] = row, copy.deepcopy(model.policy.state_dict())

    data = [round0]
    size = len(round0)
    row0 = {"round": 0, "seeds": None, "beta": 1.0, "new_states": size, "dataset_size": size,
            "agreement": None, "train_agreement": None, "teacher_label_s": None, "teacher_steps": size,
            "student_objective": float(np.mean(round0.objective)) if round0.objective.size else float("nan")}
    evaluate(row0)
    history = [row0]
    stopped = 0 if on_round is not None and on_round(row0) else None
    if "eval_mean_objective" in row0:
        say(f"DAgger round 0 (the teacher's own trajectories, {size} states): student objective "
            f"{row0['eval_mean_objective']:.6g} on the evaluation seeds")
    for i in range(1, int(rounds) + 1 if stopped is None else 1):
        t_round = time.perf_counter()
        first = int(seed_start) + (i - 1) * int(episodes)
        b = float(beta) ** i if beta > 0 else 0.0
        say(f"DAgger round {i}/{rounds}: the student runs {episodes} episode(s) (seeds {first}-{first + episodes - 1}"
            + (f", teacher's action executed with probability {b:.3g}" if b > 0 else "") + "), the teacher labels "
            "every state")
        t = time.perf_counter()
        rnd = label_student_states(model, env_id, teacher, range(first, first + int(episodes)), env_config, beta=b,
                                   rng_seed=[int(seed), i], workers=workers, address=address,
                                   pool=pool)
        collect_s = time.perf_counter() - t
        totals["label_s"] += rnd.label_s
        data.append(rnd.demos)
        agg = Demonstrations.concat(data)
        t = time.perf_counter()
        say(f"DAgger round {i}/{rounds}: {len(rnd.demos)} new states (agreement with the teacher "
            f"{rnd.agreement:.1%}; teacher {rnd.label_s:.2f} s), fitting {len(agg)} states for {epochs} epochs")
        fit = clone(model, agg, epochs=int(epochs), seed=int(seed) + i, reset_value_bias=False)
        fit_s = time.perf_counter() - t
        totals["fit_s"] += fit_s
        row = {"round": i, "seeds": [first, first + int(episodes) - 1], "beta": b, "new_states": len(rnd.demos),
               "dataset_size": len(agg), "agreement": rnd.agreement, "train_agreement": fit["train_agreement"],
               "teacher_label_s": rnd.label_s, "teacher_label_ms_per_state": 1e3 * rnd.label_s / max(len(rnd.demos), 1),
               "teacher_steps": rnd.teacher_steps, "student_objective": float(np.mean(rnd.demos.objective)),
               "collect_s": collect_s, "fit_s": fit_s, "final_nll": fit["final_nll"]}
        evaluate(row)
        row["wall_s"] = time.perf_counter() - t_round
        history.append(row)
        say(f"DAgger round {i}/{rounds} done in {row['wall_s']:.1f} s: dataset {len(agg)} states, agreement "
            f"{rnd.agreement:.1%} -> {fit['train_agreement']:.1%} after refitting"
            + (f", student objective {row['eval_mean_objective']:.6g} on the evaluation seeds (best: round "
               f"{best['row']['round']})" if "eval_mean_objective" in row else ""))
        if on_round is not None and on_round(row):
            stopped = i
            break
    restored = None
    if keep_best and best["row"] is not None and best["row"] is not history[-1]:
        model.policy.load_state_dict(best["state"])
        restored = best["row"]["round"]
        say(f"DAgger: restored the best round's model (round {restored}: objective "
            f"{best['row']['eval_mean_objective']:.6g}; the last round's: {history[-1]['eval_mean_objective']:.6g})")
    return {"teacher": teacher, "beta": float(beta), "episodes": int(episodes), "epochs": int(epochs),
            "teacher_workers": pool.workers if pool is not None else int(workers),
            "seed_start": int(seed_start), "eval_seeds": eval_seeds, "rounds": history,
            "best_round": best["row"]["round"] if best["row"] is not None else None,
            "best": best["row"], "restored_round": restored, "stopped_round": stopped, "teacher_markov": markov,
            "warnings": warnings,
            "wall_s": time.perf_counter() - t_start, **totals}


#: the first behaviour-cloning episode's seed (``bc_seed``): in the protocol's training seeds, after DAgger's 30,000..
BC_SEED = 35_000


def check_not_test_seeds(key: str, seeds) -> None:
    """``ValueError`` naming ``key`` when any of ``seeds`` is a held-out test seed (:data:`~..protocol.TEST_SEEDS`):
    training and model selection never see them."""
    from ..protocol import TEST_SEEDS

    for r in TEST_SEEDS:
        hit = [int(s) for s in seeds if int(s) in r]
        if hit:
            raise ValueError(f"{key}: seed{'s' if len(hit) > 1 else ''} {hit[0]}"
                             f"{'-' + str(hit[-1]) if len(hit) > 1 else ''} of training or model selection "
                             f"{'are' if len(hit) > 1 else 'is'} among the held-out test seeds "
                             f"{r.start}-{r.stop - 1}; choose seeds outside them (e.g. the default)")


def warm_start(model, env_id: str, bc: dict, dagger: dict | None = None, *, env_config: dict | None = None,
               eval_seeds=(), seed: int = 0, keep_best: bool = True, progress=None,
               phases: dict | None = None, address: str | None = None, on_round=None) -> tuple[dict, dict | None]:
    """Behaviour cloning of a teacher into ``model`` (an SB3 / sb3-contrib actor-critic), then DAgger rounds: the
    warm start of both ``edgegym train`` backends.

    ``bc``: the hyperparameter keys ``bc_teacher`` (a policy name), ``bc_episodes`` (10), ``bc_epochs`` (20),
    ``bc_seed`` (35,000, in the protocol's training seeds): the teacher's episodes on seeds ``bc_seed, bc_seed + 1, …`` are collected and
    ``model.policy`` is fitted to them (:func:`edgegym.agents.rl.bc.collect`, :func:`~edgegym.agents.rl.bc.clone`).
    ``dagger``: the validated settings ``rounds``, ``episodes``, ``beta``, ``epochs``, ``seed``, ``workers`` (the
    teacher's processes, 1 by default, for the cloning episodes and the labels, one
    :func:`~edgegym.agents.rl.bc.labelling_pool` for all; Ray tasks on the cluster at ``address`` when given); with
    ``rounds > 0`` :func:`run_dagger` follows, evaluating on ``eval_seeds``. ``progress(msg)`` gets a line per
    phase; ``phases``, when given, gets ``behaviour_cloning_s`` and ``dagger_s``. Returns ``(behaviour_cloning,
    dagger)``: the cloning summary (teacher, seeds, the fit's figures, the teacher's mean objective, collection and
    fitting seconds) and :func:`run_dagger`'s summary (``None`` without rounds). ``on_round``: :func:`run_dagger`'s
    per-round hook (with no rounds, called once on the cloned model's row, ``eval_mean_objective`` absent)."""
    dg = dagger or {}
    workers = int(dg.get("workers", 1))
    if workers <= 1:
        return _warm_start(model, env_id, bc, dg, env_config, eval_seeds, seed, keep_best, progress, phases, None,
                           on_round)
    from .bc import labelling_pool

    with labelling_pool(workers, address, env_id, bc["bc_teacher"], env_config) as pool:  # one start-up for all
        return _warm_start(model, env_id, bc, dg, env_config, eval_seeds, seed, keep_best, progress, phases, pool,
                           on_round)


def _warm_start(model, env_id, bc, dg, env_config, eval_seeds, seed, keep_best, progress, phases, pool,
                on_round=None):
    """:func:`warm_start`'s phases, the teacher labelling in ``pool`` (``None``: in this process)."""
    from .bc import clone, collect

    say = progress or (lambda msg: None)
    teacher = bc["bc_teacher"]
    t_bc = time.perf_counter()
    n_bc, bc_seed, epochs = int(bc.get("bc_episodes", 10)), int(bc.get("bc_seed", BC_SEED)), int(bc.get("bc_epochs", 20))
    check_not_test_seeds("bc_seed", range(bc_seed, bc_seed + n_bc))
    if dg.get("rounds", 0):
        first = int(dg.get("seed", 30_000))
        check_not_test_seeds("dagger_seed", range(first, first + int(dg["rounds"]) * int(dg.get("episodes", 5))))
    check_not_test_seeds("eval_seed", list(eval_seeds))
    say(f"behaviour cloning: collecting {n_bc} episodes of {teacher} (seeds {bc_seed}-{bc_seed + n_bc - 1})")
    demos = collect(env_id, teacher, range(bc_seed, bc_seed + n_bc), env_config,
                    on_episode=(lambda k, n: say(f"behaviour cloning: episode {k}/{n} collected"))
                    if progress else None, pool=pool)
    t_fit = time.perf_counter()
    say(f"behaviour cloning: fitting {len(demos)} decisions for {epochs} epochs")
    bc_summary = {"teacher": teacher, "seeds": [bc_seed, bc_seed + n_bc - 1],
                  **clone(model, demos, epochs=epochs, seed=seed),
                  "teacher_objective_mean": float(demos.objective.mean()),
                  "collect_s": t_fit - t_bc, "fit_s": time.perf_counter() - t_fit,
                  "wall_s": time.perf_counter() - t_bc}
    say(f"behaviour cloning: done in {bc_summary['wall_s']:.1f} s "
        f"(agreement with the teacher {bc_summary['train_agreement']:.1%})")
    phases = {} if phases is None else phases
    phases["behaviour_cloning_s"] = bc_summary["wall_s"]
    if int(dg.get("rounds", 0)) <= 0:
        if on_round is not None:
            bc_summary["stopped"] = bool(on_round({"round": 0, "dataset_size": len(demos)}))
        return bc_summary, None
    eval_seeds = [int(s) for s in eval_seeds]
    say(f"DAgger: {dg['rounds']} round(s) of {dg['episodes']} episode(s), teacher {teacher}"
        + (f", labelling on {pool.workers} {'Ray tasks' if pool.address else 'processes'}" if pool else "")
        + (f", student evaluated on seeds {eval_seeds[0]}-{eval_seeds[-1]}" if eval_seeds else ""))
    summary = run_dagger(model, env_id, teacher, demos, rounds=dg["rounds"], episodes=dg["episodes"],
                         env_config=env_config, eval_seeds=eval_seeds, beta=dg["beta"], seed_start=dg["seed"],
                         epochs=dg["epochs"], seed=seed, keep_best=keep_best, progress=progress, pool=pool,
                         on_round=on_round)
    phases["dagger_s"] = summary["wall_s"]
    return bc_summary, summary
