"""The downloader, offline: file:// URLs, a loopback HTTP server, and the pinned digests of real traces."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import shutil
import threading
import urllib.error
import urllib.request

import pytest

from edgegym.workloads import (
    KNOWN_TRACES,
    ChecksumError,
    default_cache_dir,
    download_trace,
    load_philly,
    sha256_file,
)

PAYLOAD = b"job_id,submit_time_s,duration_s,num_gpus\na,0,10,1\n" * 1000


@pytest.fixture
def origin(tmp_path):
    """A local 'upstream' file and its sha256."""
    folder = tmp_path / "origin"
    folder.mkdir()
    path = folder / "trace.csv"
    path.write_bytes(PAYLOAD)
    return path, hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture
def no_network(monkeypatch):
    """Fail any HTTP request, through urllib or requests (pooch's), to prove a cached file is used."""
    import requests

    def refuse(*args, **kwargs):
        raise AssertionError("download attempted")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(requests.Session, "request", refuse)


def test_file_url_success_and_cache_hit(origin, tmp_path, monkeypatch):
    src, sha = origin
    cache = tmp_path / "cache"
    path = download_trace(src.as_uri(), cache_dir=cache, sha256=sha)
    assert path == cache / "trace.csv"
    assert path.read_bytes() == PAYLOAD
    assert not (cache / "trace.csv.part").exists()
    src.unlink()  # the origin is gone: a verified cached copy must be reused
    assert download_trace(src.as_uri(), cache_dir=cache, sha256=sha.upper()) == path


def test_sha_mismatch_removes_partial_file(origin, tmp_path):
    src, sha = origin
    cache = tmp_path / "cache"
    wrong = "0" * 64
    with pytest.raises(ChecksumError) as info:
        download_trace(src.as_uri(), cache_dir=cache, sha256=wrong)
    message = str(info.value)
    assert "trace.csv" in message and wrong in message and sha in message
    assert (info.value.expected, info.value.got) == (wrong, sha)
    assert isinstance(info.value, ValueError)
    assert list(cache.iterdir()) == []


def test_corrupt_cached_copy_is_fetched_again(origin, tmp_path):
    src, sha = origin
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "trace.csv").write_bytes(b"truncated")
    path = download_trace(src.as_uri(), cache_dir=cache, sha256=sha)
    assert sha256_file(path) == sha


def test_no_digest_reuses_cache_unless_forced(origin, tmp_path):
    src, _ = origin
    cache = tmp_path / "cache"
    path = download_trace(src.as_uri(), cache_dir=cache, filename="renamed.csv")
    assert path.name == "renamed.csv"
    src.write_bytes(b"new content")
    assert download_trace(src.as_uri(), cache_dir=cache, filename="renamed.csv").read_bytes() == PAYLOAD
    assert (
        download_trace(src.as_uri(), cache_dir=cache, filename="renamed.csv", force=True).read_bytes()
        == b"new content"
    )


def test_fetch_goes_through_pooch_and_is_silent(origin, tmp_path, monkeypatch, capfd):
    """The fetching is pooch's (retrieve with the known sha256), and it prints nothing (pooch logs at INFO)."""
    import pooch

    src, sha = origin
    calls = []
    real = pooch.retrieve

    def spy(url, known_hash=None, **kwargs):
        calls.append((url, known_hash, kwargs["fname"]))
        return real(url, known_hash=known_hash, **kwargs)

    monkeypatch.setattr(pooch, "retrieve", spy)
    level = pooch.get_logger().level
    path = download_trace(src.as_uri(), cache_dir=tmp_path / "cache", sha256=sha)
    assert calls == [(src.as_uri(), sha, "trace.csv")]
    assert path.read_bytes() == PAYLOAD
    download_trace(src.as_uri(), cache_dir=tmp_path / "cache2")  # no digest: pooch would log one
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert pooch.get_logger().level == level  # pooch's own logging setting is restored


def test_force_keeps_the_old_copy_when_the_fetch_fails(origin, tmp_path):
    src, sha = origin
    cache = tmp_path / "cache"
    path = download_trace(src.as_uri(), cache_dir=cache, sha256=sha)
    src.unlink()
    with pytest.raises(OSError):
        download_trace(src.as_uri(), cache_dir=cache, sha256=sha, force=True)
    assert path.read_bytes() == PAYLOAD and sorted(p.name for p in cache.iterdir()) == ["trace.csv"]
    src.write_bytes(b"changed")
    with pytest.raises(ChecksumError):
        download_trace(src.as_uri(), cache_dir=cache, sha256=sha, force=True)
    assert path.read_bytes() == PAYLOAD and sorted(p.name for p in cache.iterdir()) == ["trace.csv"]


def test_default_cache_dir_from_env(origin, tmp_path, monkeypatch):
    src, sha = origin
    monkeypatch.setenv("EDGEGYM_CACHE", str(tmp_path / "envcache"))
    assert default_cache_dir() == tmp_path / "envcache"
    assert download_trace(src.as_uri(), sha256=sha).parent == tmp_path / "envcache"


def test_loopback_http_server(origin, tmp_path):
    src, sha = origin
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(src.parent))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        cache = tmp_path / "cache"
        path = download_trace(f"{base}/trace.csv", cache_dir=cache, sha256=sha)
        assert path.read_bytes() == PAYLOAD
        with pytest.raises(ChecksumError):
            download_trace(f"{base}/trace.csv", cache_dir=cache, sha256="f" * 64, filename="other.csv")
        assert not (cache / "other.csv").exists() and not (cache / "other.csv.part").exists()
        with pytest.raises(urllib.error.HTTPError):
            download_trace(f"{base}/missing.csv", cache_dir=cache)
        assert not (cache / "missing.csv.part").exists()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown trace 'nope'.*philly"):
        download_trace("nope", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="unknown trace"):
        download_trace("ftp://example.org/x.csv", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="64 hex digits"):
        download_trace("file:///x.csv", cache_dir=tmp_path, sha256="abc")
    with pytest.raises(ValueError, match="plain file name"):
        download_trace("file:///x.csv", cache_dir=tmp_path, filename="../x.csv")


def test_known_traces_table():
    assert {"philly", "itp-raw", "itp-elasticflow"} <= set(KNOWN_TRACES)
    for entry in KNOWN_TRACES.values():
        assert entry.url.startswith("https://")
        assert len(entry.sha256) == 64 and int(entry.sha256, 16) >= 0
        assert entry.filename and "/" not in entry.filename and entry.description
    assert "c793c7089bd307462686339d29707925c461f9a9" in KNOWN_TRACES["philly"].url
    assert "277ed24d0e908c31a1c98145819e2e3853d8ac00" in KNOWN_TRACES["itp-raw"].url


def test_known_digests_match_shared_traces(
    philly_file, itp_raw_file, itp_elasticflow_file, tmp_path, no_network
):
    cache = tmp_path / "cache"
    cache.mkdir()
    with gzip.open(philly_file, "rb") as f, open(cache / "philly.csv", "wb") as out:
        shutil.copyfileobj(f, out)  # SOURCE.md: the gz holds the unmodified upstream philly.csv
    shutil.copy(itp_raw_file, cache / "raw-traces.tar.gz")
    shutil.copy(itp_elasticflow_file, cache / "elasticflow-traces.tar.gz")
    for name in ("philly", "itp-raw", "itp-elasticflow"):
        path = download_trace(name, cache_dir=cache)  # verified cached copy: no download
        assert path == cache / KNOWN_TRACES[name].filename
    assert len(load_philly(cache)) == 82247
