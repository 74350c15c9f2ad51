"""Instance generation for the EdgeUtility family: Table I processing times, delays, utility mixes, estimation
errors and bursty release times.

The experiment setup is that of Zhang et al., "Online Approximation Scheme for Scheduling Heterogeneous Utility Jobs in
Edge Computing", IEEE/ACM ToN 2023, §V-A (Table I, utility functions in §V-A.3, delays in §V-A.4); where the paper gives
no value (simulation delays, processing-time distributions, error distribution) the defaults are ours. numpy only; every
draw takes an explicit ``np.random.Generator``.

Trace release times are read by :mod:`edgegym.envs.edge_utility` (which may use pandas) and passed in
as an array; :func:`bursty_release_times` is the offline stand-in calibrated to the Google 2011 trace.
"""

from __future__ import annotations

import numpy as np

from .simulator import UtilityJobs
from .utility_fn import FAMILIES, UtilityFn

__all__ = [
    "DEVICE_TYPES",
    "TABLE_I_MODELS",
    "TABLE_I_MEAN_MS",
    "TABLE_I_STD_MS",
    "GOOGLE_BURST_QUANTILES",
    "build_utility_jobs",
    "bursty_release_times",
    "rescale_release_times",
    "sample_utilities",
    "sample_utility",
]

# Table I of the paper (MXNet v1.8.0 inference time, ms): rows = models, columns = (Jetson Nano, Raspberry Pi 4b)
TABLE_I_MODELS = (
    "DenseNet-121",
    "DenseNet-169",
    "MobileNet 0.25",
    "MobileNet 0.5",
    "MobileNetV2 0.25",
    "MobileNetV2 0.5",
    "ResNet-18 V1",
    "ResNet-18 V2",
    "SqueezeNet 1.0",
)
DEVICE_TYPES = ("jetson_nano", "raspberry_pi_4b")
TABLE_I_MEAN_MS = np.array(
    [[245, 141], [317, 195], [84, 37], [81, 35], [125, 59], [124, 59], [71, 29], [70, 28], [73, 29]], dtype=float
)  # (9, 2)
TABLE_I_STD_MS = np.array(
    [[60, 2], [74, 6], [24, 10], [21, 1], [30, 1], [32, 1], [17, 1], [23, 1], [17, 1]], dtype=float
)  # (9, 2)

# Task-level burst sizes of the Google 2011 window table (tasks submitted at one instant = num_tasks of a
# job, capped at 300): the 0, 5, ..., 100 % quantiles, measured with
# ``np.quantile(np.minimum(load_google2011().num_gpus, 300), np.linspace(0, 1, 21))``.
GOOGLE_BURST_QUANTILES = np.array(
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 10, 18, 100, 300], dtype=float
)


#: the parameters each sampled utility family draws, in draw order: (field, low, high) of a uniform draw (§V-A.3)
UTILITY_DRAWS = {
    "linear": (("a", 10.0, 20.0), ("b", 20.0, 100.0)),
    "aon": (("a", 1.0, 100.0), ("c", 0.5, 5.0)),
    "sigmoid": (("a", 1.0, 10.0), ("b", 50.0, 100.0), ("c", 0.5, 5.0)),
}


def _check_family(family: str) -> tuple:
    draws = UTILITY_DRAWS.get(family)
    if draws is None:
        raise ValueError(f"cannot sample utility family {family!r} (valid: linear, aon, sigmoid)")
    return draws


def sample_utility(rng: np.random.Generator, family: str, aon_inclusive: bool = False) -> UtilityFn:
    """One utility function with the paper's experiment parameters (§V-A.3; uniform draws)."""
    draws = _check_family(family)
    params = {name: rng.uniform(lo, hi) for name, lo, hi in draws}
    return UtilityFn(family, **params, inclusive=bool(aon_inclusive) and family == "aon")


def sample_utilities(rng: np.random.Generator, families, aon_inclusive: bool = False) -> tuple[UtilityFn, ...]:
    """``tuple(sample_utility(rng, f, aon_inclusive) for f in families)`` with every parameter drawn in one call:
    the same uniform draws in the same order (numpy's array-parameter ``uniform`` draws one value per element with
    the scalar call's arithmetic), so the same functions, at a fraction of the Python calls. ``ValueError`` for a
    family that cannot be sampled (before any draw)."""
    families = list(families)
    spec = [_check_family(f) for f in families]
    lo = [x[1] for draws in spec for x in draws]
    hi = [x[2] for draws in spec for x in draws]
    values = iter(rng.uniform(np.array(lo, dtype=float), np.array(hi, dtype=float)).tolist() if lo else ())
    inc = bool(aon_inclusive)
    out = []
    for f in families:  # UtilityFn(family, a, b, c, inclusive): the fields UTILITY_DRAWS names, in its order
        if f == "linear":
            out.append(UtilityFn(f, next(values), next(values)))
        elif f == "aon":
            out.append(UtilityFn(f, next(values), 0.0, next(values), inc))
        else:
            out.append(UtilityFn(f, next(values), next(values), next(values)))
    return tuple(out)


def rescale_release_times(times_s: np.ndarray, rate_per_s: float) -> np.ndarray:
    """Shift to start at 0 and rescale so the mean rate ``(n − 1)/span`` equals ``rate_per_s`` (the paper gives
    only the mean rate, §V-A.2)."""
    t = np.sort(np.asarray(times_s, dtype=float))
    t = t - t[0]
    span = t[-1] if t.size else 0.0
    if t.size < 2 or span <= 0:
        return np.arange(t.size) / rate_per_s
    return t * ((t.size - 1) / rate_per_s / span)


def bursty_release_times(rng: np.random.Generator, n: int, rate_per_s: float,
                         burst_quantiles: np.ndarray = GOOGLE_BURST_QUANTILES) -> np.ndarray:
    """Compound-Poisson release times (an offline stand-in for the trace): bursts of simultaneous releases whose
    sizes follow the Google trace's task-burst distribution (inverse CDF through ``burst_quantiles``),
    burst epochs Poisson; rescaled so that the mean rate is ``rate_per_s``."""
    q = np.asarray(burst_quantiles, dtype=float)
    levels = np.linspace(0, 1, q.size)
    sizes = []
    total = 0
    while total < n:
        s = int(max(1, round(float(np.interp(rng.random(), levels, q)))))
        sizes.append(s)
        total += s
    gaps = rng.exponential(1.0, size=len(sizes))
    epochs = np.cumsum(gaps) - gaps[0]
    t = np.repeat(epochs, sizes)[:n]
    return rescale_release_times(t, rate_per_s)


def build_utility_jobs(
    rng: np.random.Generator,
    release_s: np.ndarray,
    server_type: np.ndarray,
    has_cloud: bool,
    *,
    families=("linear", "aon", "sigmoid"),
    edge_delay_ms=(5.0, 50.0),
    cloud_delay_ms=(100.0, 200.0),
    cloud_time_factor: float = 0.5,
    min_fraction: float = 0.2,
    time_scale: float = 1.0,
    delta: float = 0.0,
    aon_inclusive: bool = False,
    estimate: str = "exact",
    delay_scale: float = 1.0,
) -> UtilityJobs:
    """Draw one episode's jobs (§V-A; the paper gives no simulation delays, processing-time or error distributions).

    Per job: a Table I model (uniform), a utility family (uniform over ``families``) and its parameters.
    Per (job, edge server): processing time ~ Normal(mean, std) of the server's device type, truncated below at
    ``min_fraction·mean`` (clipped), times ``time_scale``; Δ↑ = Δ↓ ~ U(edge_delay_ms). Cloud: p =
    ``cloud_time_factor`` × the faster device's mean, Δ↑ = Δ↓ ~ U(cloud_delay_ms). These are the nominal
    values = the scheduler's estimates; the truth is ``estimate × (1 + δ·z)``, z ~ U(−1, 1) independent per
    (job, server, quantity). The noise ``z`` is drawn whatever δ is, so one seed gives the same nominal
    instance for every δ.

    ``estimate="table_mean"``: the scheduler's processing-time estimate is the Table I mean of the job's model
    on the server's device (× ``time_scale``; the cloud's is already a mean), while the truth is the draw
    above (× the δ noise): the paper's scheduler knows the profiled Table I, not each inference's time. The
    draws are the same as with ``"exact"``, so one seed gives the same true instance in both modes.
    ``delay_scale`` multiplies every delay (``network.scale_delays`` passes ``time_scale``).
    """
    if estimate not in ("exact", "table_mean"):
        raise ValueError(f"unknown estimate mode {estimate!r} (valid: exact, table_mean)")
    r = np.asarray(release_s, dtype=float)
    J = r.size
    st = np.asarray(server_type, dtype=np.int64)
    S = st.size
    M = S + int(has_cloud)
    fams = tuple(families)
    for f in fams:
        if f not in FAMILIES[:3]:
            raise ValueError(f"utility family {f!r} cannot be sampled (valid: linear, aon, sigmoid)")
    model = rng.integers(0, TABLE_I_MODELS.__len__(), size=J)
    fam_idx = rng.integers(0, len(fams), size=J)
    utilities = sample_utilities(rng, [fams[k] for k in fam_idx.tolist()], aon_inclusive)
    mean = TABLE_I_MEAN_MS[model][:, st] / 1000.0  # (J, S)
    std = TABLE_I_STD_MS[model][:, st] / 1000.0
    p = np.maximum(rng.normal(mean, std), min_fraction * mean) * time_scale
    up = rng.uniform(edge_delay_ms[0], edge_delay_ms[1], size=(J, S)) / 1000.0 * delay_scale
    p_est = mean * time_scale if estimate == "table_mean" else p
    if has_cloud:
        pc = cloud_time_factor * TABLE_I_MEAN_MS[model].min(axis=1) / 1000.0 * time_scale
        uc = rng.uniform(cloud_delay_ms[0], cloud_delay_ms[1], size=J) / 1000.0 * delay_scale
        p = np.column_stack([p, pc])
        p_est = np.column_stack([p_est, pc])
        up = np.column_stack([up, uc])
    down = up.copy()
    z = rng.uniform(-1.0, 1.0, size=(3, J, M))
    return UtilityJobs(
        release_s=r,
        p_s=p * (1 + delta * z[0]),
        up_s=up * (1 + delta * z[1]),
        down_s=down * (1 + delta * z[2]),
        p_est_s=p_est,
        up_est_s=up,
        down_est_s=down,
        utilities=utilities,
        model=model,
    )
