"""The canonical-table validator: every error names the file, the row and the column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edgegym.workloads import (
    CANONICAL_COLUMNS,
    TraceFormatError,
    load_csv,
    validate_job_table,
)

GOOD = "job_id,submit_time_s,duration_s,num_gpus\na,0,10,1\nb,5,20,2\nc,5,30,4\nd,9,40,8\n"


def write(tmp_path: Path, text: str, name: str = "jobs.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def replace_row(row: int, line: str) -> str:
    """GOOD with data row ``row`` (1-based) replaced by ``line``."""
    lines = GOOD.splitlines()
    lines[row] = line
    return "\n".join(lines) + "\n"


def test_good_file_round_trips(tmp_path):
    table = load_csv(write(tmp_path, GOOD))
    assert list(table.columns) == ["job_id", "submit_time_s", "duration_s", "num_gpus"]
    assert table["job_id"].tolist() == ["a", "b", "c", "d"]
    assert table["submit_time_s"].dtype == np.float64
    assert table["duration_s"].dtype == np.float64
    assert table["num_gpus"].dtype == np.int64
    assert isinstance(table.index, pd.RangeIndex)


@pytest.mark.parametrize(
    ("row", "line", "column", "fragment"),
    [
        (3, "c,,30,4", "submit_time_s", "NaN"),
        (2, "b,5,,2", "duration_s", "NaN"),
        (4, "d,9,40,", "num_gpus", "NaN"),
        (2, ",5,20,2", "job_id", "NaN"),
        (3, "c,5,abc,4", "duration_s", "not a number"),
        (1, "a,-1,10,1", "submit_time_s", "negative"),
        (2, "b,5,-20,2", "duration_s", "negative"),
        (2, "b,5,0,2", "duration_s", "must be > 0"),
        (3, "c,5,30,0", "num_gpus", "must be >= 1"),
        (3, "c,5,30,1.5", "num_gpus", "non-integer"),
        (2, "b,5,inf,2", "duration_s", "infinite"),
        (3, "b,5,30,4", "job_id", "duplicate"),
    ],
)
def test_bad_value_names_file_row_and_column(tmp_path, row, line, column, fragment):
    path = write(tmp_path, replace_row(row, line), name="bad_trace.csv")
    with pytest.raises(TraceFormatError) as info:
        load_csv(path)
    message = str(info.value)
    assert "bad_trace.csv" in message
    assert f"row {row}" in message
    assert repr(column) in message
    assert fragment in message
    assert info.value.row == row
    assert info.value.column == column
    assert isinstance(info.value, ValueError)


def test_missing_column(tmp_path):
    path = write(tmp_path, "job_id,submit_time_s,num_gpus\na,0,1\n", name="nodur.csv")
    with pytest.raises(TraceFormatError, match=r"nodur\.csv.*column 'duration_s'.*missing column"):
        load_csv(path)


def test_unsorted_names_the_row_and_sort_fixes_it(tmp_path):
    path = write(tmp_path, replace_row(3, "c,1,30,4"), name="unsorted.csv")
    with pytest.raises(TraceFormatError) as info:
        load_csv(path)
    message = str(info.value)
    assert "unsorted.csv" in message and "row 3" in message and "'submit_time_s'" in message
    assert "not sorted" in message and "sort=True" in message
    table = load_csv(path, sort=True)
    assert table["job_id"].tolist() == ["a", "c", "b", "d"]
    assert np.all(np.diff(table["submit_time_s"]) >= 0)


def test_sort_is_stable_for_equal_times(tmp_path):
    text = "job_id,submit_time_s,duration_s,num_gpus\nx,5,1,1\ny,0,1,1\nz,5,1,1\nw,5,1,1\n"
    table = load_csv(write(tmp_path, text), sort=True)
    assert table["job_id"].tolist() == ["y", "x", "z", "w"]


def test_empty_file(tmp_path):
    path = write(tmp_path, "", name="empty.csv")
    with pytest.raises(TraceFormatError, match=r"empty\.csv.*empty file"):
        load_csv(path)


def test_header_only_file_has_no_rows(tmp_path):
    path = write(tmp_path, "job_id,submit_time_s,duration_s,num_gpus\n", name="header.csv")
    with pytest.raises(TraceFormatError, match=r"header\.csv.*no job rows"):
        load_csv(path)


def test_validate_dataframe_uses_index_as_source_row():
    # index = 0-based data-row number of the original file, as a loader keeps it through sorting
    df = pd.DataFrame(
        {"job_id": ["p", "q"], "submit_time_s": [0.0, 1.0], "duration_s": [1.0, np.nan], "num_gpus": [1, 1]},
        index=[41, 7],
    )
    with pytest.raises(TraceFormatError) as info:
        validate_job_table(df, "mytrace.csv", source_columns={"duration_s": "runtime"})
    assert info.value.row == 8
    assert "mytrace.csv, row 8 (job_id 'q'), column 'runtime'" in str(info.value)


def test_optional_columns_kept_in_canonical_order_and_others_dropped():
    df = pd.DataFrame(
        {
            "num_iterations": [10, 20],
            "extra": ["x", "y"],
            "model": ["LeNet", "bert"],
            "job_id": [1, 2],
            "submit_time_s": [0, 3],
            "duration_s": [1, 2],
            "num_gpus": [1.0, 2.0],
            "deadline_s": [100, 200],
            "priority": [0, 11],
        }
    )
    table = validate_job_table(df, "frame")
    assert list(table.columns) == [c for c in CANONICAL_COLUMNS if c in df.columns]
    assert table["job_id"].tolist() == ["1", "2"]
    assert table["num_gpus"].dtype == np.int64
    assert table["num_iterations"].dtype == np.int64
    assert table["priority"].dtype == np.int64
    assert table["deadline_s"].dtype == np.float64


def test_optional_column_nan_is_an_error():
    df = pd.DataFrame(
        {
            "job_id": ["a", "b"],
            "submit_time_s": [0, 1],
            "duration_s": [1, 1],
            "num_gpus": [1, 1],
            "cpu_req": [0.1, None],
        }
    )
    with pytest.raises(TraceFormatError, match=r"row 2 .*column 'cpu_req'.*NaN"):
        validate_job_table(df, "frame")


def test_empty_dataframe():
    with pytest.raises(TraceFormatError, match="no job rows"):
        validate_job_table(pd.DataFrame(columns=list(CANONICAL_COLUMNS[:4])), "frame")


def test_validate_does_not_modify_input():
    df = pd.DataFrame(
        {"job_id": ["a", "b"], "submit_time_s": [3, 1], "duration_s": [1, 1], "num_gpus": [1, 1]}
    )
    before = df.copy()
    out = validate_job_table(df, "frame", sort=True)
    pd.testing.assert_frame_equal(df, before)
    assert out["job_id"].tolist() == ["b", "a"]
