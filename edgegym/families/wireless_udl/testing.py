"""Test helpers of the WirelessUDL family (used by ``tests/wireless_udl`` and ``tests/speed``): schedule invariants
of program (2), and the exact comparisons of the differential tests.

:func:`check_schedule` re-derives everything from the simulator's schedule log (``record_schedule``) and
raises ``AssertionError`` naming the broken invariant; it returns the cost recomputed by hand from eq. (1)
and f_i, to compare with the simulator's own total (I7). :func:`assert_same_candidates` and
:func:`assert_same_step` compare two candidate tables and two ``step`` results exactly (``==``, dtypes included).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .simulator import EPS, Simulator, job_latency_cost

__all__ = ["assert_same_candidates", "assert_same_step", "check_schedule", "lockstep_run", "reference_pair"]


def reference_pair(preset, config: dict | None, seed: int):
    """Two ``WirelessUDLEnv(preset, config)`` reset with ``seed``: the compiled env and the numpy reference env
    (``_use_reference``), for the differential tests' lockstep runs."""
    from .env import WirelessUDLEnv

    e1 = WirelessUDLEnv(preset, config=config)
    e2 = WirelessUDLEnv(preset, config=config)
    e2._use_reference = True
    e1.reset(seed=seed)
    e2.reset(seed=seed)
    return e1, e2


def assert_same_candidates(c1, c2, where: str) -> None:
    """Every field of two :class:`~.candidates.Candidates` tables equal, with the same dtypes."""
    for f in c1.__dataclass_fields__:
        a, b = getattr(c1, f), getattr(c2, f)
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: candidate field {f}")
        assert np.asarray(a).dtype == np.asarray(b).dtype, f"{where}: dtype of {f}"


def assert_same_step(s1: tuple, s2: tuple, where: str) -> None:
    """Two ``step`` results ``(obs, reward, terminated, truncated, info)`` equal: the observations (float32), the
    reward and flags, and every info entry (the action masks as arrays)."""
    o1, r1, t1, tr1, i1 = s1
    o2, r2, t2, tr2, i2 = s2
    np.testing.assert_array_equal(o1, o2, err_msg=where)
    assert o1.dtype == o2.dtype == np.float32, where
    assert (r1, t1, tr1) == (r2, t2, tr2), where
    assert set(i1) == set(i2), where
    for k in i1:
        if k == "action_mask":
            np.testing.assert_array_equal(i1[k], i2[k], err_msg=where)
        else:
            assert i1[k] == i2[k], f"{where}: info {k}"


def lockstep_run(env, ref, rng, where: str, steps: int | None = None) -> int:
    """Step two WirelessUDL envs with the same random legal actions to the episode's end (or ``steps`` more steps);
    every output ``==``; the number of states compared.

    Each state's masks are compared, and every 3rd state's candidate tables field by field (reading ``_cand``
    builds a table kept as the kernel's blocks, so that both kinds are stepped from). Every 7th action is a masked
    one (both envs take the cheapest legal row and count it), every 5th a NumPy integer, every 11th goes through
    ``step_quiet`` and ``observe``; at the episode's end the returns, metrics and illegal-action counts."""
    n = 0
    while True:
        at = f"{where} job {env._k}"
        m1, m2 = env.action_masks(), ref.action_masks()
        np.testing.assert_array_equal(m1, m2, err_msg=at)
        if n % 3 == 0:  # builds a lazy table from the blocks (the next step then reads the built one)
            assert_same_candidates(env._cand, ref._cand, at)
        n += 1
        if steps is not None and n > steps:
            return n
        if n % 7 == 0 and not m1.all():
            a = int(np.flatnonzero(~m1)[0])  # masked: both take the cheapest legal row and count it
        else:
            a = int(rng.choice(np.flatnonzero(m1)))
        if n % 5 == 0:
            a = np.int64(a)
        if n % 11 == 0:
            q1, q2 = env.step_quiet(a), ref.step_quiet(a)
            assert q1 == q2, at
            np.testing.assert_array_equal(env.observe(), ref.observe(), err_msg=at)
            done = q1[1] or q1[2]
        else:
            s1, s2 = env.step(a), ref.step(a)
            assert_same_step(s1, s2, at)
            done = s1[2] or s1[3]
            if done:
                assert s1[4]["episode_metrics"] == s2[4]["episode_metrics"], at
        if done:
            assert env.episode_return() == ref.episode_return(), at
            assert env.episode_metrics() == ref.episode_metrics(), at
            assert env._illegal == ref._illegal, at
            return n


def check_schedule(sim: Simulator, unbiased: bool | None = None) -> float:
    """Check I1-I6 (and per-slot unbiased sampling when ``unbiased``) on ``sim.log``; return the recomputed cost."""
    inst = sim.inst
    if unbiased is None:
        unbiased = sim.sampling == "proportional"
    usage = defaultdict(lambda: np.zeros_like(inst.cap))
    trained = np.zeros_like(inst.data)  # (I, R) by origin
    last = np.full(inst.num_jobs, -1)
    transfer = param = 0.0
    seen = set()
    for rec in sorted(sim.log, key=lambda r: (r.job, r.t)):
        i, t, y, ps, g = rec.job, rec.t, rec.y, rec.ps, rec.g
        assert (i, t) not in seen, f"job {i} scheduled twice in slot {t}"
        seen.add((i, t))
        assert t >= inst.arrival[i], f"I6: job {i} active in slot {t} before its arrival {inst.arrival[i]}"
        assert y.sum() > 0 and 0 <= ps < inst.num_sites, f"I2: job {i} slot {t} has workers {y} and PS {ps}"
        usage[t] += np.outer(y, inst.m[i])
        usage[t][ps] += inst.n[i]
        assert np.all(g >= 0), f"negative transfer for job {i} in slot {t}"
        d = g.sum(axis=0)
        assert np.all(d <= inst.kappa[i] * y), f"I3: job {i} slot {t} trains {d} with capacity {inst.kappa[i] * y}"
        trained[i] += g.sum(axis=1)
        assert np.all(trained[i] <= inst.data[i]), f"I4: job {i} trained more than its data by slot {t}"
        if unbiased:
            x = trained[i].sum()
            share = inst.data[i] * x / inst.data[i].sum()
            assert np.all(np.abs(trained[i] - share) < 1 + EPS), (
                f"unbiased sampling: job {i} slot {t} trained {trained[i]} by origin vs shares {share}")
        transfer += inst.chunk_mb[i] * float(np.sum(inst.q * g))
        param += inst.param_mb[i] * float(np.dot(inst.q[:, ps], y))
        last[i] = max(last[i], t) if d.sum() > 0 else last[i]
    for t, u in usage.items():
        assert np.all(u <= inst.cap + EPS), f"I1: slot {t} uses {u} > capacity {inst.cap}"
    done = sim.penalty == 0
    for i in np.flatnonzero(done):
        assert np.array_equal(trained[i], inst.data[i]), f"I5: job {i} trained {trained[i]} of {inst.data[i]}"
        assert last[i] == sim.t_last[i], f"job {i}: last training slot {last[i]} vs recorded {sim.t_last[i]}"
    lat = sum(float(job_latency_cost(inst, i, last[i] - inst.arrival[i] + sim.offset)) for i in np.flatnonzero(done))
    return transfer + param + lat + float(sim.penalty.sum())
