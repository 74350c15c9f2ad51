"""Slot-driven scheduling disciplines of the HeteroML family: the elastic / preemptive baselines.

The slot driver (:func:`run_slot_driver`) advances slot by slot; at every slot the discipline re-plans the
allocation of every active (arrived, unfinished) job from scratch; a job with N workers (type m*, PS type p*,
placement with actual co-location q) progresses N · rho(q) mini-batches in the slot and completes at the end of the
slot where its progress reaches W_j (c_j = that slot + 1, the same convention as the reservation driver). A job
that ran before, was stopped and runs again loses ``o_pre`` slots of progress (``env.preempt_overhead_slots``).

* ``drf``: DRF, elastic (progressive filling on dominant shares of the pooled capacity, one worker at a time, ties by
  arrival; then PLACE per job in arrival order, shrinking N until it fits).
* ``antman``: resource-guarantee jobs (w_j >= median weight of the trace) keep their resources and start with the
  ideal configuration when it fits in capacity minus RG usage (preempting opportunistic jobs); an RG job waiting more
  than Theta slots becomes opportunistic; opportunistic jobs use leftovers with N = min(N*, max that fits).
* ``tiresias``: SRSF, gang: active jobs sorted by remaining time (ideal config) x #GPUs, the full ideal configuration
  allocated in that order when it fits (smaller ones backfill); ``tiresias_las``: the 2D-LAS option (priority =
  attained GPU-slots, 2 queues split at ``env.las_threshold_gpu_slots``, FIFO within a queue, promotion to the
  high queue after waiting as long as the job has run).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from .placement import place
from .simulator import HeteroCluster, HeteroJobs, iteration_slots

__all__ = ["SlotResult", "run_slot_driver", "DISCIPLINES"]

DISCIPLINES = ("drf", "antman", "tiresias", "tiresias_las")


@dataclass(frozen=True, slots=True)
class SlotResult:
    completion: np.ndarray  # (J,) int64
    first_start: np.ndarray  # (J,) int64
    preemptions: int
    gpu_utilisation: float


def run_slot_driver(cluster: HeteroCluster, jobs: HeteroJobs, ideal, env_cfg, discipline: str, max_slots: int = 1 << 20):
    """Run the elastic / preemptive discipline over the whole trace (see the module docstring)."""
    if discipline not in DISCIPLINES:
        raise ValueError(f"unknown discipline {discipline!r} (valid: {', '.join(DISCIPLINES)})")
    J, H = jobs.num_jobs, cluster.num_servers
    W = jobs.work.astype(np.float64)
    m_star, p_star = ideal.worker_type, ideal.ps_type
    n_star = ideal.workers.copy()
    for j in range(J):  # [R] the ideal N* shrinks until it fits an empty cluster (else a gang job never runs)
        while n_star[j] > 1 and place(cluster, cluster.capacity, int(m_star[j]), int(p_star[j]), int(n_star[j])) is None:
            n_star[j] -= 1
    progress = np.zeros(J)
    completion = np.full(J, -1, dtype=np.int64)
    first = np.full(J, -1, dtype=np.int64)
    ran_prev = np.zeros(J, dtype=bool)
    attained = np.zeros(J)  # GPU-slots
    waited = np.zeros(J)
    held: dict[int, tuple] = {}  # AntMan RG jobs: j -> (workers, ps)
    rg = jobs.weight >= np.median(jobs.weight)
    o_pre = env_cfg.preempt_overhead_slots
    preemptions = 0
    gpu_used = 0.0
    cap_tot = cluster.capacity.sum(axis=0)
    e_gpu = cluster.worker_res[:, 0]
    # per-job rate per worker for the ideal types, co-located / spread, as a function of N (cached)
    rate_cache: dict = {}

    def rate(j, n, q):
        key = (j, n, q)
        r = rate_cache.get(key)
        if r is None:
            r = 1.0 / iteration_slots(cluster, jobs, j, int(m_star[j]), int(p_star[j]), n, q)
            rate_cache[key] = r
        return r

    def ideal_rem_time(j):
        return (W[j] - progress[j]) / (n_star[j] * rate(j, int(n_star[j]), False))

    def foot(j, w, s):
        f = np.outer(w, cluster.worker_res[m_star[j]])
        if cluster.arch == "ps":
            f += np.outer(s, cluster.ps_res[p_star[j]])
        return f

    # what any placement of j needs on some server: one worker, and (PS architecture) one PS
    room = {j: (cluster.worker_res[m_star[j]],) + ((cluster.ps_res[p_star[j]],) if cluster.arch == "ps" else ())
            for j in range(J)}
    t = 1
    nxt = 0
    active: list[int] = []
    while nxt < J or active:
        if t > max_slots:
            raise RuntimeError("slot driver did not finish")
        while nxt < J and jobs.arrival[nxt] <= t:
            active.append(nxt)
            nxt += 1
        if not active:
            t = int(jobs.arrival[nxt])
            continue
        free = cluster.capacity.copy()
        alloc: dict[int, tuple] = {}
        if discipline == "drf":
            # progressive filling on the pooled capacity
            share = {j: np.max(cluster.worker_res[m_star[j]] / np.maximum(cap_tot, 1e-12)) for j in active}
            ps_share = {
                j: (cluster.ps_res[p_star[j]] if cluster.arch == "ps" else np.zeros(cluster.num_resources)) for j in active
            }
            pool = cap_tot.copy()
            n_of = {j: 0 for j in active}
            heap = [(0.0, int(jobs.arrival[j]), j) for j in active]
            heapq.heapify(heap)
            while heap:
                _, _, j = heapq.heappop(heap)
                need = cluster.worker_res[m_star[j]] + (ps_share[j] if n_of[j] == 0 else 0.0)
                if n_of[j] >= jobs.chunks[j] or np.any(need > pool + 1e-9):
                    continue
                pool -= need
                n_of[j] += 1
                heapq.heappush(heap, (n_of[j] * share[j], int(jobs.arrival[j]), j))
            for j in sorted(active, key=lambda j: (jobs.arrival[j], j)):
                n = n_of[j]
                if n >= 1 and not all(np.all(free + 1e-9 >= x, axis=1).any() for x in room[j]):
                    continue  # no server has room for one worker (or for one PS): no N fits, PLACE would fail
                    # for every N (a necessary condition only: the result is that of the loop below)
                while n >= 1:
                    got = place(cluster, free, int(m_star[j]), int(p_star[j]), n)
                    if got is not None:
                        alloc[j] = got
                        free -= foot(j, *got)
                        break
                    n -= 1
        elif discipline == "antman":
            theta = env_cfg.antman_threshold_slots
            for j in list(held):
                if completion[j] >= 0:
                    del held[j]
            for j, (w_, s_) in held.items():
                alloc[j] = (w_, s_)
                free -= foot(j, w_, s_)
            fifo = sorted(active, key=lambda j: (jobs.arrival[j], j))
            for j in fifo:
                if j in held or not rg[j]:
                    continue
                if waited[j] > theta:
                    rg[j] = False  # waited too long: becomes opportunistic
                    continue
                got = place(cluster, free, int(m_star[j]), int(p_star[j]), int(n_star[j]))
                if got is not None:
                    alloc[j] = got
                    held[j] = got
                    free -= foot(j, *got)
            for j in fifo:  # opportunistic jobs: leftovers
                if j in alloc:
                    continue
                if rg[j] and j not in held:
                    continue
                n = int(n_star[j])
                while n >= 1:
                    got = place(cluster, free, int(m_star[j]), int(p_star[j]), n)
                    if got is not None:
                        alloc[j] = got
                        free -= foot(j, *got)
                        break
                    n -= 1
        else:
            if discipline == "tiresias":
                key = {j: (ideal_rem_time(j) * n_star[j] * e_gpu[m_star[j]], jobs.arrival[j], j) for j in active}
            else:
                thr = env_cfg.las_threshold_gpu_slots
                key = {}
                for j in active:
                    q = 0 if (attained[j] < thr or waited[j] >= max(1.0, attained[j] / max(1, n_star[j]))) else 1
                    key[j] = (q, jobs.arrival[j], j)
            for j in sorted(active, key=lambda j: key[j]):
                got = place(cluster, free, int(m_star[j]), int(p_star[j]), int(n_star[j]))
                if got is not None:
                    alloc[j] = got
                    free -= foot(j, *got)
        if not alloc and not held:
            # the cluster stayed empty: no active job fits even alone (cannot happen for ideal configurations built
            # by instance.build_instance, which fit one worker + PS on an empty server); stop instead of looping
            raise RuntimeError(
                f"slot driver ({discipline}): jobs {sorted(active)[:10]} cannot run even on an empty cluster"
            )
        # progress
        done = []
        for j in active:
            if j in alloc:
                w_, s_ = alloc[j]
                n = int(w_.sum())
                q = int(np.count_nonzero((w_ > 0) | (s_ > 0))) == 1
                eff = 1.0
                if not ran_prev[j] and progress[j] > 0:
                    eff = max(0.0, 1.0 - o_pre)
                    preemptions += 1
                if first[j] < 0:
                    first[j] = t
                progress[j] += eff * n * rate(j, n, q)
                attained[j] += n * e_gpu[m_star[j]]
                gpu_used += n * e_gpu[m_star[j]]
                ran_prev[j] = True
                waited[j] = 0
                if progress[j] >= W[j] - 1e-6:
                    completion[j] = t + 1
                    done.append(j)
            else:
                ran_prev[j] = False
                waited[j] += 1
        if done:
            dset = set(done)
            active = [j for j in active if j not in dset]
            for j in done:
                held.pop(j, None)
        t += 1
    util = gpu_used / max(1.0, cap_tot[0] * (completion.max() - 1))
    return SlotResult(completion, first, preemptions, float(util))
