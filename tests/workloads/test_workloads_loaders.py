"""Trace loaders against the real traces in ../shared/traces (skipped when absent) and small files."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from edgegym.workloads import (
    TRACE_LOADERS,
    TraceFormatError,
    default_trace_dir,
    load_csv,
    load_google2011,
    load_itp,
    load_philly,
)


def assert_canonical(table: pd.DataFrame) -> None:
    assert list(table.columns[:4]) == ["job_id", "submit_time_s", "duration_s", "num_gpus"]
    assert np.all(np.diff(table["submit_time_s"].to_numpy()) >= 0)
    assert table["submit_time_s"].min() >= 0
    assert table["duration_s"].min() > 0
    assert table["num_gpus"].min() >= 1
    assert table["job_id"].is_unique
    assert not table.isna().any().any()


# ------------------------------------------------------------------------------------------- Philly


def test_philly_full_trace(philly_table, philly_file):
    table = philly_table
    assert_canonical(table)
    assert len(table) == 82247
    assert table["submit_time_s"].iloc[0] == 0.0
    # span 2017-09-04 10:30:41 .. 2017-12-22 08:02:11
    assert table["submit_time_s"].iloc[-1] == pytest.approx(9408690.0)
    assert table["duration_s"].median() == 1144.0
    # job_id = 1-based data row of the file: row 1 is "2017-10-09 07:01:55,66.0,1,66.0,11cb48"
    row1 = table[table["job_id"] == "1"].iloc[0]
    assert row1["duration_s"] == 66.0 and row1["num_gpus"] == 1
    first = pd.Timestamp("2017-09-04 10:30:41")
    assert row1["submit_time_s"] == (pd.Timestamp("2017-10-09 07:01:55") - first).total_seconds()


def test_philly_default_path_and_folder(philly_file, philly_table):
    assert len(load_philly(philly_file.parent)) == len(philly_table)
    assert len(load_philly(trace_dir=philly_file.parent.parent, cluster="11cb48")) == 16091


def test_philly_cluster_filter(philly_file):
    table = load_philly(philly_file, cluster="6214e9")
    assert_canonical(table)
    assert len(table) == 41226
    assert table["submit_time_s"].iloc[0] == 0.0
    with pytest.raises(ValueError, match="no jobs in cluster 'nope'.*6214e9"):
        load_philly(philly_file, cluster="nope")


def test_philly_sorts_stably(tmp_path):
    text = (
        "timestamp,duration,num_gpus,gpu_time,cluster\n"
        "2017-10-09 07:00:10,5.0,1,5.0,a\n"
        "2017-10-09 07:00:00,6.0,2,12.0,a\n"
        "2017-10-09 07:00:10,7.0,4,28.0,b\n"
    )
    path = tmp_path / "philly.csv"
    path.write_text(text)
    table = load_philly(path)
    assert table["job_id"].tolist() == ["2", "1", "3"]
    assert table["submit_time_s"].tolist() == [0.0, 10.0, 10.0]
    assert load_philly(tmp_path, cluster="b")["submit_time_s"].tolist() == [0.0]


def test_philly_bad_row_names_original_row(tmp_path):
    text = (
        "timestamp,duration,num_gpus,gpu_time,cluster\n"
        "2017-10-09 07:00:10,5.0,1,5.0,a\n"
        "2017-10-09 07:00:00,-6.0,2,12.0,a\n"
    )
    path = tmp_path / "philly.csv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(
        TraceFormatError, match=r"philly\.csv\.gz, row 2 \(job_id '2'\), column 'duration'.*negative"
    ):
        load_philly(path)
    path.write_bytes(gzip.compress(text.replace("2017-10-09 07:00:00", "yesterday").encode()))
    with pytest.raises(TraceFormatError, match=r"row 2, column 'timestamp'.*unreadable"):
        load_philly(path)


# ---------------------------------------------------------------------------------------------- ITP


def test_itp_raw_cluster01(itp_raw_file):
    table = load_itp(itp_raw_file)
    assert_canonical(table)
    assert len(table) == 1595
    assert table.iloc[0]["job_id"] == "965d744f-0445-c1a8-12af-97e4c536c66e"
    assert table.iloc[0]["submit_time_s"] == 1932025.0
    assert table.iloc[0]["num_gpus"] == 64
    assert list(table.columns) == ["job_id", "submit_time_s", "duration_s", "num_gpus"]


def test_itp_all_clusters_from_folder(itp_raw_file):
    sizes = {"cluster02": 5778, "cluster05": 3629, "cluster10": 260}
    for cluster, n in sizes.items():
        assert len(load_itp(itp_raw_file.parent, cluster=cluster)) == n
    with pytest.raises(ValueError, match="no cluster 'cluster99'.*cluster01"):
        load_itp(itp_raw_file, cluster="cluster99")


def test_itp_elasticflow_extra_columns(itp_elasticflow_file, itp_raw_file):
    table = load_itp(itp_elasticflow_file)
    assert_canonical(table)
    assert list(table.columns) == [
        "job_id",
        "submit_time_s",
        "duration_s",
        "num_gpus",
        "model",
        "deadline_s",
        "num_iterations",
    ]
    first = table.iloc[0]  # 965d744f...,1932025,45775,resnet50,1933904,256,64,2429
    assert first["model"] == "resnet50"
    assert first["deadline_s"] == 1933904 - 1932025
    assert first["num_iterations"] == 45775
    assert (table["deadline_s"] > 0).all()
    raw = load_itp(itp_raw_file)
    pd.testing.assert_frame_equal(raw, table[raw.columns])
    jobs195 = load_itp(trace_dir=itp_raw_file.parent.parent, archive="elasticflow", cluster="195job")
    assert len(jobs195) == 195


def test_itp_plain_csv(tmp_path, itp_raw_file):
    with tarfile.open(itp_raw_file) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("cluster10.csv"))
        (tmp_path / "cluster10.csv").write_bytes(tar.extractfile(member).read())
    table = load_itp(tmp_path / "cluster10.csv")
    assert len(table) == 260


def test_itp_unknown_archive():
    with pytest.raises(ValueError, match="archive must be one of"):
        load_itp(archive="zip")


# ---------------------------------------------------------------------------------------- Google 2011


def test_google_window(google_window_file):
    table = load_google2011(google_window_file)
    assert_canonical(table)
    assert len(table) == 14930 - 7 - 2  # no end time; end == submit
    assert list(table.columns) == [
        "job_id",
        "submit_time_s",
        "duration_s",
        "num_gpus",
        "cpu_req",
        "mem_req",
        "priority",
    ]
    first = table.iloc[0]  # 6251639646,604.046,605.569,675.252,FINISH,1,9,1,0.0625,...,0.0159,...
    assert first["job_id"] == "6251639646"
    assert first["duration_s"] == pytest.approx(675.252 - 604.046)
    assert (first["cpu_req"], first["mem_req"], first["priority"]) == (0.0625, 0.0159, 9)
    assert table["num_gpus"].max() == 10500
    assert table["duration_s"].median() == pytest.approx(169, rel=0.05)


def test_google_summary(google_summary_file):
    table = load_google2011(google_summary_file.parent, table="summary")
    assert_canonical(table)
    assert len(table) == 672074 - 4011 - 17
    assert (table["num_gpus"] == 1).all()
    with pytest.raises(ValueError, match="table must be one of"):
        load_google2011(table="events")


# ------------------------------------------------------------------------------- path resolution


def test_default_trace_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEGYM_TRACE_DIR", str(tmp_path))
    assert default_trace_dir() == tmp_path
    (tmp_path / "philly_pollux").mkdir()
    (tmp_path / "philly_pollux" / "philly.csv").write_text(
        "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:00:10,5.0,1,5.0,a\n"
    )
    assert len(load_philly()) == 1


def test_default_trace_dir_falls_back_to_repo(monkeypatch):
    monkeypatch.delenv("EDGEGYM_TRACE_DIR", raising=False)
    monkeypatch.delenv("EDGEGYM_NO_SHARED", raising=False)
    found = default_trace_dir()
    expected = Path(__file__).resolve().parents[2].parent / "shared" / "traces"
    assert found == (expected if expected.is_dir() else None)


def test_no_shared_disables_the_repo_fallback(monkeypatch):
    monkeypatch.delenv("EDGEGYM_TRACE_DIR", raising=False)
    monkeypatch.setenv("EDGEGYM_NO_SHARED", "1")
    assert default_trace_dir() is None


def test_missing_trace_error_is_helpful(isolated_dirs):
    for load, name in ((load_philly, "philly"), (load_itp, "itp-raw")):
        with pytest.raises(FileNotFoundError) as info:
            load()
        message = str(info.value)
        assert "EDGEGYM_TRACE_DIR" in message and f"download_trace({name!r})" in message
    # the Google summary table is not shipped and has no public download: the message says so (no bad hint)
    with pytest.raises(FileNotFoundError) as info:
        load_google2011(table="summary")
    message = str(info.value)
    assert "EDGEGYM_TRACE_DIR" in message and "no public download" in message and "download_trace(" not in message
    with pytest.raises(FileNotFoundError, match="trace file not found"):
        load_philly(isolated_dirs / "nowhere.csv")


def test_shipped_google_window_is_the_last_default_lookup(isolated_dirs):
    """Traces hidden: the window table comes from the package data (byte-identical to the shared copy)."""
    from edgegym.workloads import SHIPPED_TRACE_DIR, SHIPPED_TRACES, sha256_file

    shipped = SHIPPED_TRACE_DIR / "google2011_jobs_window.csv.gz"
    assert shipped.is_file() and shipped.stat().st_size <= 1_000_000
    assert sha256_file(shipped) == SHIPPED_TRACES[shipped.name]
    table = load_google2011()
    assert len(table) == 14930 - 7 - 2  # SOURCE.md: 7 still running, 2 never ran
    # a copy in $EDGEGYM_TRACE_DIR comes first: a one-row table there wins over the shipped one
    own = isolated_dirs / "traces" / "google_2011"
    own.mkdir()
    with gzip.open(own / shipped.name, "wt") as f:
        f.write("job_id,submit_time_s,end_time_s,num_tasks\n1,600.0,700.0,3\n")
    assert load_google2011()["num_gpus"].tolist() == [3]


def test_explicit_location_never_falls_back(isolated_dirs):
    """``path`` / ``trace_dir`` given: only there; not the cache, not the shipped copy (an error instead)."""
    (isolated_dirs / "cache" / "philly.csv").write_text(
        "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:00:10,5.0,1,5.0,a\n"
    )
    empty = isolated_dirs / "empty"
    empty.mkdir()
    assert load_philly()["duration_s"].tolist() == [5.0]  # the default lookup reads the cache
    for load, kwargs in ((load_philly, {"trace_dir": empty}), (load_google2011, {"trace_dir": empty}),
                         (load_google2011, {"path": empty})):
        with pytest.raises(FileNotFoundError, match="never falls back"):
            load(**kwargs)
    with pytest.raises(FileNotFoundError, match="trace folder not found"):
        load_google2011(trace_dir=isolated_dirs / "nowhere")


def test_loader_reads_download_cache(isolated_dirs):
    (isolated_dirs / "cache" / "philly.csv").write_text(
        "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:00:10,5.0,1,5.0,a\n"
    )
    assert load_philly()["duration_s"].tolist() == [5.0]


# ------------------------------------------------------------------------------------- generic CSV


def test_csv_with_mapping_and_unit(tmp_path):
    path = tmp_path / "custom.csv"
    path.write_text("arrival_ms,runtime_ms,gpus,name,arch\n0,1000,1,j0,LeNet\n2500,500,2,j1,bert\n")
    table = load_csv(
        path,
        columns={
            "submit_time_s": "arrival_ms",
            "duration_s": "runtime_ms",
            "num_gpus": "gpus",
            "job_id": "name",
            "model": "arch",
        },
        time_unit="ms",
    )
    assert table["submit_time_s"].tolist() == [0.0, 2.5]
    assert table["duration_s"].tolist() == [1.0, 0.5]
    assert table["job_id"].tolist() == ["j0", "j1"]
    assert table["model"].tolist() == ["LeNet", "bert"]


def test_csv_mapping_errors_name_source_column(tmp_path):
    path = tmp_path / "custom.csv"
    path.write_text("t,dur,gpus\n0,10,1\n1,,1\n")
    mapping = {"submit_time_s": "t", "duration_s": "dur", "num_gpus": "gpus"}
    with pytest.raises(TraceFormatError, match=r"custom\.csv, row 2 \(job_id '2'\), column 'dur'.*NaN"):
        load_csv(path, columns=mapping)
    with pytest.raises(TraceFormatError, match=r"column 'runtime'.*missing column 'runtime'"):
        load_csv(path, columns={**mapping, "duration_s": "runtime"})
    with pytest.raises(ValueError, match="unknown canonical key"):
        load_csv(path, columns={"arrival": "t"})
    with pytest.raises(ValueError, match="time_unit"):
        load_csv(path, columns=mapping, time_unit="fortnight")


def test_csv_datetime_submissions_and_sort(tmp_path):
    path = tmp_path / "dt.csv"
    path.write_text("submit_time_s,duration_s,num_gpus\n2020-01-01 00:01:00,60,1\n2020-01-01 00:00:00,30,1\n")
    with pytest.raises(TraceFormatError, match="not sorted"):
        load_csv(path)
    table = load_csv(path, sort=True)
    assert table["submit_time_s"].tolist() == [0.0, 60.0]
    assert table["job_id"].tolist() == ["2", "1"]


# ---------------------------------------------------------------------------------------- registry


def test_registry():
    assert set(TRACE_LOADERS) == {"philly", "itp", "google2011", "csv"}
    for name, (load, description) in TRACE_LOADERS.items():
        assert callable(load) and load.__doc__
        assert isinstance(description, str) and description and "\n" not in description
        assert TRACE_LOADERS[name].load is load
    assert TRACE_LOADERS["philly"].load is load_philly
