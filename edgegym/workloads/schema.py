"""The canonical job table every trace loader produces, and its validator.

A canonical job table is a :class:`pandas.DataFrame` with one row per job, sorted by submission:

=================  ========  ==========================================================
column             dtype     meaning
=================  ========  ==========================================================
``job_id``         str       unique job identifier
``submit_time_s``  float64   submission time in seconds, >= 0, non-decreasing
``duration_s``     float64   run time in seconds, > 0
``num_gpus``       int64     GPUs (or workers / tasks) the job asked for, >= 1
=================  ========  ==========================================================

Optional columns, kept when present (and validated the same way: no NaN, numeric where numeric):

=================== ======== ==============================================================
``model``           str      model name (e.g. ITP/ElasticFlow's synthetic ``model_name``)
``cpu_req``         float64  CPU request (trace units, e.g. Google's normalised request), >= 0
``mem_req``         float64  memory request (trace units), >= 0
``priority``        int64    priority / QoS class
``deadline_s``      float64  deadline relative to the job's submission, seconds, >= 0
``num_iterations``  int64    training iterations, >= 1
=================== ======== ==============================================================

Any other column is dropped. The returned frame has a fresh ``RangeIndex``.

Row numbers in error messages: the validator reads the *index* of the frame it is given as the
0-based data-row number of the source file (what :func:`pandas.read_csv` produces), so loaders that
filter or sort keep the original index until validation and errors still name the file's row
(1-based: ``row 1`` is the first line after the header). A frame whose index is not integer is
numbered by position.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = [
    "CANONICAL_COLUMNS",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "TraceFormatError",
    "validate_job_table",
]

REQUIRED_COLUMNS: tuple[str, ...] = ("job_id", "submit_time_s", "duration_s", "num_gpus")
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "model",
    "cpu_req",
    "mem_req",
    "priority",
    "deadline_s",
    "num_iterations",
)
CANONICAL_COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + OPTIONAL_COLUMNS

# numeric columns: (name, dtype, lower bound, strict, must be integer)
_NUMERIC_RULES: tuple[tuple[str, str, float | None, bool, bool], ...] = (
    ("submit_time_s", "float64", 0.0, False, False),
    ("duration_s", "float64", 0.0, True, False),
    ("num_gpus", "int64", 1.0, False, True),
    ("cpu_req", "float64", 0.0, False, False),
    ("mem_req", "float64", 0.0, False, False),
    ("priority", "int64", None, False, True),
    ("deadline_s", "float64", 0.0, False, False),
    ("num_iterations", "int64", 1.0, False, True),
)
_STRING_COLUMNS: tuple[str, ...] = ("job_id", "model")


class TraceFormatError(ValueError):
    """A trace file (or job table) breaks the canonical schema.

    The message names the file (``source``), the row (1-based data row of the original file, with the
    job id when known) and the column, e.g.
    ``philly.csv: row 17 (job_id '17'), column 'duration': missing value (NaN)``.

    Attributes:
        source: the file (or a description of the table) the error is in.
        problem: what is wrong, without the location.
        row: 1-based data row number of the source file, or ``None`` for file-level problems.
        column: the column as named in the source file, or ``None``.
        job_id: the offending row's job id, when known.
    """

    def __init__(
        self,
        source: object,
        problem: str,
        *,
        row: int | None = None,
        column: str | None = None,
        job_id: str | None = None,
    ) -> None:
        self.source = str(source)
        self.problem = problem
        self.row = row
        self.column = column
        self.job_id = job_id
        where = [self.source]
        if row is not None:
            where.append(f"row {row}" + (f" (job_id {job_id!r})" if job_id is not None else ""))
        elif job_id is not None:
            where.append(f"job_id {job_id!r}")
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(", ".join(where) + ": " + problem)


class _Locator:
    """Turns a position in the frame under validation into the source file's row, job id and column."""

    def __init__(self, df: pd.DataFrame, source: str, names: Mapping[str, str]) -> None:
        self.df = df
        self.source = source
        self.names = names
        self.integer_index = pd.api.types.is_integer_dtype(df.index.dtype)

    def row(self, pos: int) -> int:
        return int(self.df.index[pos]) + 1 if self.integer_index else pos + 1

    def job_id(self, pos: int) -> str | None:
        if "job_id" not in self.df.columns:
            return None
        value = self.df["job_id"].iloc[pos]
        return None if pd.isna(value) else str(value)

    def column(self, col: str) -> str:
        return self.names.get(col, col)

    def error(self, pos: int | None, col: str | None, problem: str) -> TraceFormatError:
        if pos is None:
            return TraceFormatError(self.source, problem, column=None if col is None else self.column(col))
        return TraceFormatError(
            self.source,
            problem,
            row=self.row(pos),
            column=None if col is None else self.column(col),
            job_id=self.job_id(pos) if col != "job_id" else None,
        )


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _check_numeric(
    loc: _Locator, col: str, dtype: str, lo: float | None, strict: bool, integer: bool
) -> np.ndarray:
    raw = loc.df[col]
    missing = raw.isna().to_numpy()
    pos = _first(missing)
    if pos is not None:
        raise loc.error(pos, col, "missing value (NaN)")
    if pd.api.types.is_bool_dtype(raw.dtype):
        raise loc.error(None, col, "expected numbers, found booleans")
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    pos = _first(np.isnan(values))
    if pos is not None:
        raise loc.error(pos, col, f"not a number: {raw.iloc[pos]!r}")
    pos = _first(np.isinf(values))
    if pos is not None:
        raise loc.error(pos, col, f"infinite value {values[pos]!r}")
    if lo is not None:
        bad = values <= lo if strict else values < lo
        pos = _first(bad)
        if pos is not None:
            kind = "negative" if values[pos] < 0 else "out of range"
            op = ">" if strict else ">="
            raise loc.error(pos, col, f"{kind} value {values[pos]!r} (must be {op} {lo:g})")
    if integer:
        pos = _first(values != np.round(values))
        if pos is not None:
            raise loc.error(pos, col, f"non-integer value {values[pos]!r}")
    return values.astype(dtype)


def validate_job_table(
    df: pd.DataFrame,
    source: str,
    *,
    sort: bool = False,
    source_columns: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Check ``df`` against the canonical schema and return a clean copy.

    Args:
        df: a job table with (at least) the canonical required columns. Its index is read as the
            0-based data-row number of the source file (see the module docstring).
        source: the file name (or description) that error messages name.
        sort: sort rows by ``submit_time_s`` (stable: equal times keep file order) instead of raising
            on unsorted submission times.
        source_columns: canonical name -> name in the source file, used only to name columns in errors.

    Returns:
        A new DataFrame with the canonical columns present in ``df`` (required first, then optional,
        in :data:`CANONICAL_COLUMNS` order), canonical dtypes and a ``RangeIndex``.

    Raises:
        TraceFormatError: no rows, a missing required column, a NaN / non-numeric / infinite value,
            a negative time, a duration <= 0, ``num_gpus`` < 1 or non-integer, a duplicate
            ``job_id``, or submission times that decrease (when ``sort`` is false).
    """
    loc = _Locator(df, str(source), dict(source_columns or {}))
    if len(df) == 0:
        raise TraceFormatError(source, "no job rows (the table is empty)")
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        names = ", ".join(repr(loc.column(c)) for c in missing)
        raise TraceFormatError(
            source,
            f"missing column(s) {names}; found columns {list(map(str, df.columns))}",
            column=loc.column(missing[0]),
        )
    out: dict[str, np.ndarray] = {}
    for col in _STRING_COLUMNS:
        if col not in df.columns:
            continue
        pos = _first(df[col].isna().to_numpy())
        if pos is not None:
            raise loc.error(pos, col, "missing value (NaN)")
        out[col] = df[col].astype(str).to_numpy(dtype=object)
    ids = pd.Series(out["job_id"])
    pos = _first(ids.duplicated().to_numpy())
    if pos is not None:
        first = _first((ids == ids.iloc[pos]).to_numpy())
        raise loc.error(
            pos, "job_id", f"duplicate job_id {ids.iloc[pos]!r} (first seen at row {loc.row(first)})"
        )
    for col, dtype, lo, strict, integer in _NUMERIC_RULES:
        if col in df.columns:
            out[col] = _check_numeric(loc, col, dtype, lo, strict, integer)

    submit = out["submit_time_s"]
    if sort:
        order = np.argsort(submit, kind="stable")
    else:
        pos = _first(np.diff(submit) < 0)
        if pos is not None:
            raise loc.error(
                pos + 1,
                "submit_time_s",
                f"submission times are not sorted: {submit[pos + 1]!r} comes after {submit[pos]!r} "
                f"(row {loc.row(pos)}); sort the file or ask the loader to sort (sort=True)",
            )
        order = np.arange(submit.size)
    table = pd.DataFrame({c: out[c][order] for c in CANONICAL_COLUMNS if c in out})
    for col in _STRING_COLUMNS:
        if col in table.columns:
            table[col] = table[col].astype(str)
    return table
