"""Trace loaders: each maps one trace format to the canonical job table (:mod:`edgegym.workloads.schema`).

Where a loader's file is looked for (first match wins):

1. ``path`` (argument): a file, or a folder searched in the trace's sub-folder (e.g. ``philly_pollux/``)
   and then itself. Explicit: if the file is not there, :class:`FileNotFoundError`, never a fallback.
2. ``trace_dir`` (argument): the same, in that folder only; also explicit, so also never a fallback.
3. Otherwise (the default lookup): :func:`default_trace_dir` (``$EDGEGYM_TRACE_DIR``, then
   ``<repo>/../shared/traces`` next to the checkout unless ``$EDGEGYM_NO_SHARED=1``) when present, then the
   download cache (:func:`edgegym.workloads.download.default_cache_dir`, where
   :func:`edgegym.workloads.download_trace` puts files), then the files shipped inside the package
   (:data:`SHIPPED_TRACE_DIR`: only the Google 2011 window table, ``google2011_jobs_window.csv.gz``, which
   the default EdgeUtility presets read; byte-identical to the shared copy, sha256 in
   :data:`SHIPPED_TRACES`).

Nothing depends on the working directory.
"""

from __future__ import annotations

import gzip
import io
import lzma
import os
import tarfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .download import default_cache_dir
from .schema import CANONICAL_COLUMNS, TraceFormatError, validate_job_table

__all__ = [
    "SHIPPED_TRACES",
    "SHIPPED_TRACE_DIR",
    "TRACE_LOADERS",
    "TraceLoaderInfo",
    "default_trace_dir",
    "load_csv",
    "load_google2011",
    "load_itp",
    "load_philly",
]

TRACE_DIR_ENV = "EDGEGYM_TRACE_DIR"
#: set to ``1`` to disable the ``<repo>/../shared/traces`` lookup (simulates a user's machine)
NO_SHARED_ENV = "EDGEGYM_NO_SHARED"

#: Seconds per unit accepted by ``load_csv(time_unit=...)``.
TIME_UNITS_S: dict[str, float] = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_TIME_COLUMNS = ("submit_time_s", "duration_s", "deadline_s")

#: Package data: trace files shipped inside ``edgegym`` (the last place the default lookup searches).
SHIPPED_TRACE_DIR = Path(__file__).resolve().parent / "data"
#: Shipped file name -> sha256. The Google 2011 window table (derived from clusterdata-2011-2, CC BY 4.0; see
#: ``NOTICE``) is what every non-tiny EdgeUtility preset samples release times from, so it ships with the
#: package and ``EdgeUtility-v0`` is the same benchmark on every machine.
SHIPPED_TRACES: dict[str, str] = {
    "google2011_jobs_window.csv.gz": "9cc7b9281c61dad9477752bc6caf092d446c6372fbfc120c11d2ef59c6d0d5a5",
}


def default_trace_dir() -> Path | None:
    """The shared trace folder: ``$EDGEGYM_TRACE_DIR`` if it is a directory, else ``<repo>/../shared/traces``
    (resolved from this file, not the working directory; skipped when ``$EDGEGYM_NO_SHARED=1``); ``None``
    when neither exists."""
    env = os.environ.get(TRACE_DIR_ENV)
    if env and Path(env).expanduser().is_dir():
        return Path(env).expanduser()
    if os.environ.get(NO_SHARED_ENV, "") not in ("", "0"):
        return None
    repo = Path(__file__).resolve().parents[2]
    shared = repo.parent / "shared" / "traces"
    return shared if shared.is_dir() else None


def _find_trace_file(
    path: str | os.PathLike | None,
    trace_dir: str | os.PathLike | None,
    subdir: str,
    filenames: Sequence[str],
    download_name: str | None,
) -> Path:
    """Resolve a loader's file (order in the module docstring): an explicit file or folder (``path``, else
    ``trace_dir``: only there), else the shared folder, the download cache and the shipped package data.
    ``download_name`` is the :data:`KNOWN_TRACES` key that fetches it, ``None`` when it has no public origin."""
    explicit = path if path is not None else trace_dir
    if explicit is not None:
        p = Path(explicit).expanduser()
        if path is not None and p.is_file():
            return p
        if not p.is_dir():
            raise FileNotFoundError(f"trace {'file' if path is not None else 'folder'} not found: {p}")
        folders = [p / subdir, p]
    else:
        root = default_trace_dir()
        folders = ([root / subdir, root] if root is not None else []) + [default_cache_dir(), SHIPPED_TRACE_DIR]
    tried = []
    for folder in folders:
        for name in filenames:
            candidate = folder / name
            if candidate.is_file():
                return candidate
            if folder != SHIPPED_TRACE_DIR:  # the package folder is an internal detail, not worth listing
                tried.append(str(candidate))
    what = " or ".join(filenames)
    if explicit is not None:
        raise FileNotFoundError(
            f"could not find the trace {what} in the folder given ({'path' if path is not None else 'trace_dir'}="
            f"{str(explicit)!r}); looked at: {', '.join(tried)}. An explicit location never falls back to another."
        )
    fetch = (
        f"fetch it with edgegym.workloads.download_trace({download_name!r})"
        if download_name
        else "it has no public download (a table derived from the original trace): copy it there"
    )
    raise FileNotFoundError(
        f"could not find the trace {what}; looked at: {', '.join(tried)}. "
        f"Point {TRACE_DIR_ENV} (or trace_dir=/path=) at the shared traces folder, or {fetch}."
    )


def _read_csv(source: object, buffer: object, source_name: str, **kwargs) -> pd.DataFrame:
    """``pd.read_csv`` whose failures on unreadable content raise :class:`TraceFormatError` naming the file."""
    try:
        return pd.read_csv(buffer, **kwargs)
    except pd.errors.EmptyDataError:
        raise TraceFormatError(source_name, "empty file (no header and no rows)") from None
    except pd.errors.ParserError as exc:
        raise TraceFormatError(source_name, f"not a readable CSV: {exc}") from None
    except UnicodeDecodeError as exc:
        raise TraceFormatError(
            source_name, f"not a UTF-8 text CSV (binary, or another encoding: convert it to UTF-8): {exc.reason} "
            f"at byte {exc.start}"
        ) from None
    except (EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError, OSError) as exc:
        if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
            raise
        raise TraceFormatError(source_name, f"corrupt or truncated compressed file: {exc}") from None


def _require(df: pd.DataFrame, columns: Sequence[str], source: str) -> None:
    if len(df.columns) == 0:
        raise TraceFormatError(source, "empty file (no columns)")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise TraceFormatError(
            source,
            f"missing column(s) {missing}; found columns {list(map(str, df.columns))}",
            column=missing[0],
        )


def _all_datetimes(raw: pd.Series) -> bool:
    return bool(pd.to_datetime(raw, errors="coerce", format="mixed").notna().all())


def _seconds_since_first(raw: pd.Series, source: str, column: str, fmt: str = "ISO8601") -> np.ndarray:
    """Date-time strings -> seconds since the earliest one; an unreadable one raises naming its row."""
    ts = pd.to_datetime(raw, errors="coerce", format=fmt)
    bad = np.flatnonzero(ts.isna().to_numpy())
    if bad.size:
        pos = int(bad[0])
        raise TraceFormatError(
            source, f"unreadable date-time {raw.iloc[pos]!r}", row=int(raw.index[pos]) + 1, column=column
        )
    return (ts - ts.min()).dt.total_seconds().to_numpy(dtype=np.float64)


# ----------------------------------------------------------------------------------------------- Philly


def load_philly(
    path: str | os.PathLike | None = None,
    cluster: str | None = None,
    *,
    trace_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Load the Microsoft Philly per-job CSV of the Pollux artifact (``philly.csv.gz`` or ``philly.csv``).

    Columns read: ``timestamp,duration,num_gpus,gpu_time,cluster``. The file's rows are **not** sorted
    by submission; this loader sorts them by timestamp with a stable sort (equal timestamps keep file
    order).

    Args:
        path: the CSV (plain or .gz) or a folder holding it; default: the shared traces folder
            (``philly_pollux/``), then the download cache.
        cluster: keep only this Philly virtual cluster (VC hash, e.g. ``"6214e9"``); ``None`` keeps all.
        trace_dir: the shared traces folder, overriding :func:`default_trace_dir` (only that folder is searched).

    Returns:
        The canonical table: ``job_id`` = the job's 1-based data-row number in the file (line number
        minus the header), ``submit_time_s`` = seconds since the first submission (of the kept jobs),
        ``duration_s``, ``num_gpus``.

    Raises:
        FileNotFoundError: the file is not found (the message says where it looked).
        TraceFormatError: malformed content; ValueError: an unknown ``cluster``.
    """
    file = _find_trace_file(path, trace_dir, "philly_pollux", ("philly.csv.gz", "philly.csv"), "philly")
    source = str(file)
    raw = _read_csv(file, file, source)
    _require(raw, ("timestamp", "duration", "num_gpus", "cluster"), source)
    if cluster is not None:
        keep = raw["cluster"].astype(str) == str(cluster)
        if not keep.any():
            known = sorted(raw["cluster"].dropna().astype(str).unique())
            raise ValueError(f"{source}: no jobs in cluster {cluster!r}; clusters in the file: {known}")
        raw = raw[keep]
    table = pd.DataFrame(
        {
            "job_id": (raw.index + 1).astype(str),
            "submit_time_s": _seconds_since_first(raw["timestamp"], source, "timestamp"),
            "duration_s": raw["duration"],
            "num_gpus": raw["num_gpus"],
        },
        index=raw.index,
    )
    names = {"submit_time_s": "timestamp", "duration_s": "duration"}
    return validate_job_table(table, source, sort=True, source_columns=names)


# -------------------------------------------------------------------------------------------------- ITP

_ITP_ARCHIVES = {"raw": "raw-traces.tar.gz", "elasticflow": "elasticflow-traces.tar.gz"}


def load_itp(
    path: str | os.PathLike | None = None,
    cluster: str = "cluster01",
    *,
    archive: str = "raw",
    trace_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Load one cluster of the Microsoft ITP trace (ElasticFlow, ASPLOS'23), read straight out of the tarball.

    Args:
        path: ``raw-traces.tar.gz`` or ``elasticflow-traces.tar.gz`` (read in memory, nothing is
            extracted to disk), an extracted cluster CSV, or a folder holding the archive; default: the
            shared traces folder (``microsoft_itp/``), then the download cache.
        cluster: the CSV inside the archive without ``.csv``: ``"cluster01"`` ... ``"cluster10"``, or
            ``"195job"`` (ElasticFlow archive only). Ignored when ``path`` is a CSV.
        archive: which archive to look for when ``path`` is a folder or ``None``: ``"raw"`` or
            ``"elasticflow"``.
        trace_dir: the shared traces folder, overriding :func:`default_trace_dir` (only that folder is searched).

    Returns:
        The canonical table: ``job_id`` (anonymised UUID), ``submit_time_s`` = ``submission_time``
        (seconds since the start of collection, not shifted), ``duration_s``, ``num_gpus``; with the
        ElasticFlow columns also ``model`` (``model_name``), ``deadline_s`` (``deadline`` minus
        ``submission_time``: a deadline relative to submission) and ``num_iterations``
        (``num_iteration``). Those three columns are synthetic in the trace (see its SOURCE.md).

    Raises:
        FileNotFoundError, TraceFormatError; ValueError for an unknown ``cluster`` or ``archive``.
    """
    if archive not in _ITP_ARCHIVES:
        raise ValueError(f"archive must be one of {sorted(_ITP_ARCHIVES)}, got {archive!r}")
    file = _find_trace_file(path, trace_dir, "microsoft_itp", (_ITP_ARCHIVES[archive],), "itp-" + archive)
    if tarfile.is_tarfile(file):
        with tarfile.open(file, "r:*") as tar:
            members = {
                Path(m.name).name: m for m in tar.getmembers() if m.isfile() and m.name.endswith(".csv")
            }
            member = members.get(f"{cluster}.csv")
            if member is None:
                names = sorted(n[: -len(".csv")] for n in members)
                raise ValueError(f"{file}: no cluster {cluster!r} in the archive; clusters: {names}")
            source = f"{file}::{member.name}"
            extracted = tar.extractfile(member)
            if extracted is None:  # pragma: no cover - a regular member always has a file object
                raise TraceFormatError(source, "archive member is not a readable file")
            data = io.BytesIO(extracted.read())
        raw = _read_csv(file, data, source)
    else:
        source = str(file)
        raw = _read_csv(file, file, source)
    _require(raw, ("job_id", "submission_time", "duration", "num_gpu"), source)
    table = pd.DataFrame(
        {
            "job_id": raw["job_id"],
            "submit_time_s": raw["submission_time"],
            "duration_s": raw["duration"],
            "num_gpus": raw["num_gpu"],
        },
        index=raw.index,
    )
    names = {"submit_time_s": "submission_time", "duration_s": "duration", "num_gpus": "num_gpu"}
    if "model_name" in raw.columns:
        table["model"] = raw["model_name"]
        names["model"] = "model_name"
    if "deadline" in raw.columns:
        table["deadline_s"] = pd.to_numeric(raw["deadline"], errors="coerce") - pd.to_numeric(
            raw["submission_time"], errors="coerce"
        )
        names["deadline_s"] = "deadline"
    if "num_iteration" in raw.columns:
        table["num_iterations"] = raw["num_iteration"]
        names["num_iterations"] = "num_iteration"
    return validate_job_table(table, source, source_columns=names)


# ------------------------------------------------------------------------------------------ Google 2011

_GOOGLE_TABLES = {"window": "google2011_jobs_window.csv.gz", "summary": "google2011_job_summary.csv.gz"}


def load_google2011(
    path: str | os.PathLike | None = None,
    table: str = "window",
    *,
    trace_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Load a derived job table of the Google 2011 cluster trace (``clusterdata-2011-2``).

    Args:
        path: the table's CSV (.gz) or a folder holding it; default: the shared traces folder
            (``google_2011/``), then the download cache, then (window table only) the copy shipped inside the
            package, byte-identical to the shared one. Neither table has a public download of its own (they
            are derived from the raw trace), so :func:`edgegym.workloads.download_trace` cannot fetch them.
        table: ``"window"`` (``google2011_jobs_window.csv.gz``: 14,930 jobs of the first 19.3 h, with
            task counts and requests) or ``"summary"`` (``google2011_job_summary.csv.gz``: all 672,074
            jobs, timing only). Which columns the file has decides how it is read, so ``path`` may
            point at either.
        trace_dir: the shared traces folder, overriding :func:`default_trace_dir` (only that folder is searched).

    Returns:
        The canonical table: ``job_id``, ``submit_time_s`` (seconds of trace time, not shifted),
        ``duration_s`` = ``end_time_s - submit_time_s``, ``num_gpus`` = ``num_tasks`` clipped to >= 1
        (1 for the summary table, which has no task counts); for the window table also ``cpu_req`` /
        ``mem_req`` (mean normalised per-task requests) and ``priority``.

        Dropped rows (documented behaviour, not errors): jobs without an end time (still running at
        trace end: 7 in the window table, 4,011 in the summary) and jobs whose end time equals their
        submission time (they never ran: 2 and 17 rows).

    Raises:
        FileNotFoundError, TraceFormatError; ValueError for an unknown ``table``.
    """
    if table not in _GOOGLE_TABLES:
        raise ValueError(f"table must be one of {sorted(_GOOGLE_TABLES)}, got {table!r}")
    file = _find_trace_file(path, trace_dir, "google_2011", (_GOOGLE_TABLES[table],), None)
    source = str(file)
    raw = _read_csv(file, file, source)
    _require(raw, ("job_id", "submit_time_s", "end_time_s"), source)
    end = pd.to_numeric(raw["end_time_s"], errors="coerce")
    submit = pd.to_numeric(raw["submit_time_s"], errors="coerce")
    keep = raw["end_time_s"].notna() & ~(end == submit)
    raw = raw[keep]
    out = pd.DataFrame(
        {
            "job_id": raw["job_id"],
            "submit_time_s": raw["submit_time_s"],
            "duration_s": end[keep] - submit[keep],
        },
        index=raw.index,
    )
    names = {"duration_s": "end_time_s"}
    if "num_tasks" in raw.columns:
        out["num_gpus"] = pd.to_numeric(raw["num_tasks"], errors="coerce").clip(lower=1)
        names["num_gpus"] = "num_tasks"
    else:
        out["num_gpus"] = 1
    for canonical, column in (
        ("cpu_req", "cpu_req_mean"),
        ("mem_req", "mem_req_mean"),
        ("priority", "priority"),
    ):
        if column in raw.columns:
            out[canonical] = raw[column]
            names[canonical] = column
    return validate_job_table(out, source, source_columns=names)


# ----------------------------------------------------------------------------------------- generic CSV


def load_csv(
    path: str | os.PathLike,
    columns: Mapping[str, str] | None = None,
    time_unit: str = "s",
    sort: bool = False,
) -> pd.DataFrame:
    """Load any job CSV, given which of its columns hold the canonical fields.

    Args:
        path: a CSV file (compression inferred from the extension, e.g. ``.gz``).
        columns: canonical name -> column name in the file, e.g.
            ``{"submit_time_s": "arrival", "duration_s": "runtime", "num_gpus": "gpus"}``. Canonical
            columns not in the mapping are taken from a file column of the same name when present.
            Without a ``job_id`` column the 1-based data-row number is used.
        time_unit: unit of the file's time columns (submission, duration, deadline): one of
            ``ns, us, ms, s, min, h``. A submission column of date-time strings is parsed instead and
            measured in seconds since its earliest value.
        sort: sort rows by submission time (stable) instead of raising on unsorted rows.

    Returns:
        The validated canonical table.

    Raises:
        ValueError: an unknown canonical key in ``columns`` or an unknown ``time_unit``.
        TraceFormatError: empty file, a missing mapped column, bad values, or unsorted rows (when
            ``sort`` is false); the message names the file, row and source column.
    """
    if time_unit not in TIME_UNITS_S:
        raise ValueError(f"time_unit must be one of {list(TIME_UNITS_S)}, got {time_unit!r}")
    mapping = dict(columns or {})
    unknown = [k for k in mapping if k not in CANONICAL_COLUMNS]
    if unknown:
        raise ValueError(f"columns has unknown canonical key(s) {unknown}; known: {list(CANONICAL_COLUMNS)}")
    file = Path(path).expanduser()
    source = str(file)
    raw = _read_csv(file, file, source)
    if len(raw.columns) == 0:
        raise TraceFormatError(source, "empty file (no columns)")
    for canonical, column in mapping.items():
        if column not in raw.columns:
            raise TraceFormatError(
                source,
                f"missing column {column!r} (mapped to {canonical!r}); "
                f"found columns {list(map(str, raw.columns))}",
                column=column,
            )
    names = {c: mapping.get(c, c) for c in CANONICAL_COLUMNS}
    table = pd.DataFrame(index=raw.index)
    for canonical in CANONICAL_COLUMNS:
        if names[canonical] in raw.columns:
            table[canonical] = raw[names[canonical]]
    if "job_id" not in table.columns:
        table.insert(0, "job_id", (raw.index + 1).astype(str))
    scale = TIME_UNITS_S[time_unit]
    for col in _TIME_COLUMNS:
        if col not in table.columns:
            continue
        values = table[col]
        numeric = pd.to_numeric(values, errors="coerce")
        if (numeric.notna() | values.isna()).all():  # all numbers; a NaN stays NaN for the validator
            table[col] = numeric * scale
        elif col == "submit_time_s" and values.notna().all() and _all_datetimes(values):
            table[col] = _seconds_since_first(values, source, names[col], fmt="mixed")
        # otherwise left as is: the validator names the first value that is not a number
    return validate_job_table(table, source, sort=sort, source_columns=names)


# ------------------------------------------------------------------------------------------- registry


class TraceLoaderInfo(NamedTuple):
    """A registry entry: the loader and a one-line description (unpacks as ``(load, description)``)."""

    load: Callable[..., pd.DataFrame]
    description: str


#: Loader name -> (callable, one-line description), for the CLI's ``list``.
TRACE_LOADERS: dict[str, TraceLoaderInfo] = {
    "philly": TraceLoaderInfo(
        load_philly, "Microsoft Philly 2017, 82,247 DL jobs (Pollux artifact philly.csv); optional VC filter"
    ),
    "itp": TraceLoaderInfo(
        load_itp, "Microsoft ITP 2021, 10 clusters of DL jobs (ElasticFlow raw/elasticflow tarballs)"
    ),
    "google2011": TraceLoaderInfo(
        load_google2011, "Google Borg 2011 derived job tables (window: 14,930 jobs with tasks; summary: all)"
    ),
    "csv": TraceLoaderInfo(load_csv, "any job CSV, with a canonical->source column mapping and a time unit"),
}
