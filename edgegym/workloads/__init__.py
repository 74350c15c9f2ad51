"""Workloads: trace loaders (one canonical job table), a downloader, synthetic generators and catalogues.

numpy + pandas only (no gymnasium). Every random draw takes an explicit ``np.random.Generator``.

Typical use::

    import numpy as np
    from edgegym.workloads import load_philly, synthetic_philly_table, build_jobset

    table = load_philly()                                   # or, offline: synthetic_philly_table(300, rng)
    rng = np.random.default_rng(0)
    jobs = build_jobset(table, num_edge_servers=100, num_worker_types=8, num_ps_types=8,
                        worker_type_bandwidth_mbps=rng.uniform(100, 5120, size=8), rng=rng,
                        num_jobs=300, horizon_slots=100)
"""

from .catalog import TABLE_II_MODELS, ModelSpec, find_model, normalise_model_name
from .download import (
    KNOWN_TRACES,
    ChecksumError,
    KnownTrace,
    default_cache_dir,
    download_trace,
    sha256_file,
)
from .jobmodel import JobModelParams, arrival_slots_from_times, build_jobset, jobset_from_columns
from .loaders import (
    SHIPPED_TRACE_DIR,
    SHIPPED_TRACES,
    TRACE_LOADERS,
    TraceLoaderInfo,
    default_trace_dir,
    load_csv,
    load_google2011,
    load_itp,
    load_philly,
)
from .schema import (
    CANONICAL_COLUMNS,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    TraceFormatError,
    validate_job_table,
)
from .synthetic import (
    PHILLY_ARRIVAL_PROFILE,
    PHILLY_DURATION_LOG_MU,
    PHILLY_DURATION_LOG_SIGMA,
    PHILLY_MEAN_ARRIVAL_RATE_PER_S,
    PHILLY_NUM_GPUS_COUNTS,
    PHILLY_NUM_GPUS_VALUES,
    TwoPeakProfile,
    fit_lognormal_quantiles,
    fit_two_peak_profile,
    sample_arrival_times_s,
    synthetic_philly_columns,
    synthetic_philly_table,
)

__all__ = [
    "CANONICAL_COLUMNS",
    "KNOWN_TRACES",
    "OPTIONAL_COLUMNS",
    "PHILLY_ARRIVAL_PROFILE",
    "PHILLY_DURATION_LOG_MU",
    "PHILLY_DURATION_LOG_SIGMA",
    "PHILLY_MEAN_ARRIVAL_RATE_PER_S",
    "PHILLY_NUM_GPUS_COUNTS",
    "PHILLY_NUM_GPUS_VALUES",
    "REQUIRED_COLUMNS",
    "SHIPPED_TRACES",
    "SHIPPED_TRACE_DIR",
    "TABLE_II_MODELS",
    "TRACE_LOADERS",
    "ChecksumError",
    "JobModelParams",
    "KnownTrace",
    "ModelSpec",
    "TraceFormatError",
    "TraceLoaderInfo",
    "TwoPeakProfile",
    "arrival_slots_from_times",
    "build_jobset",
    "default_cache_dir",
    "default_trace_dir",
    "download_trace",
    "find_model",
    "fit_lognormal_quantiles",
    "fit_two_peak_profile",
    "jobset_from_columns",
    "load_csv",
    "load_google2011",
    "load_itp",
    "load_philly",
    "normalise_model_name",
    "sample_arrival_times_s",
    "sha256_file",
    "synthetic_philly_columns",
    "synthetic_philly_table",
    "validate_job_table",
]
