"""Fetch a trace file from its original public location into a local cache, checking its sha256.

The fetching, caching and verification are :mod:`pooch`'s (:func:`pooch.retrieve` with the known sha256:
download to a temporary file in the cache folder, check, then move into place). ``http(s)://`` URLs use
pooch's HTTP downloader; ``file://`` URLs (a local mirror, and the offline tests) use a small local-copy
downloader. pooch is imported only when something is fetched; nothing is downloaded at import time.

Cache directory: the ``cache_dir`` argument, else ``$EDGEGYM_CACHE``, else ``~/.cache/edgegym``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "KNOWN_TRACES",
    "ChecksumError",
    "KnownTrace",
    "default_cache_dir",
    "download_trace",
    "sha256_file",
]

_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class KnownTrace:
    """A trace file at a fixed upstream location (pinned commit) with its expected sha256.

    Attributes:
        url: where the file is fetched from.
        sha256: hex digest of the file as fetched.
        filename: the name it gets in the cache directory.
        description: one line on what it is and which loader reads it.
    """

    url: str
    sha256: str
    filename: str
    description: str


_ELASTICFLOW = (
    "https://raw.githubusercontent.com/microsoft/elasticflow-traces/277ed24d0e908c31a1c98145819e2e3853d8ac00"
)
_ADAPTDL = "https://raw.githubusercontent.com/petuum/adaptdl/c793c7089bd307462686339d29707925c461f9a9"
_GOOGLE = "https://storage.googleapis.com/clusterdata-2011-2"

#: Upstream locations and digests, from ``shared/traces/*/SOURCE.md``. The Google 2011 *derived* tables
#: (``google2011_jobs_window.csv.gz``, ``google2011_job_summary.csv.gz``) have no public origin of their
#: own; only a raw part of the original trace is listed, and the bucket URL is Google's documented one. The
#: window table ships inside the package instead (``edgegym.workloads.SHIPPED_TRACES``).
KNOWN_TRACES: dict[str, KnownTrace] = {
    "philly": KnownTrace(
        url=f"{_ADAPTDL}/simulator/traces/philly.csv",
        sha256="ebffb3dd1589bdf4e7bcd74496201c5ded1d557d498ee14f560463f37ec353da",
        filename="philly.csv",
        description="Microsoft Philly per-job CSV (Pollux OSDI'21 artifact, CC BY 4.0); load_philly",
    ),
    "itp-raw": KnownTrace(
        url=f"{_ELASTICFLOW}/data/raw-traces.tar.gz",
        sha256="67398e1a89245c50ae0881bf997e6cda0c95f9f47980af5bc56d67998965669f",
        filename="raw-traces.tar.gz",
        description="Microsoft ITP DL-training jobs, 10 clusters (ElasticFlow ASPLOS'23, MIT); load_itp",
    ),
    "itp-elasticflow": KnownTrace(
        url=f"{_ELASTICFLOW}/data/elasticflow-traces.tar.gz",
        sha256="e9c20b73de61d2702aef086aebc995cbc432affbd0f09969cf30879c5d1a83c4",
        filename="elasticflow-traces.tar.gz",
        description="ITP jobs plus synthetic model/deadline/iterations (ElasticFlow, MIT); load_itp",
    ),
    "google2011-job-events-00001": KnownTrace(
        url=f"{_GOOGLE}/job_events/part-00001-of-00500.csv.gz",
        sha256="8d8c0278664757c79b2ce865d3e4e83531abf836e7ed6da3321b8309a3099c58",
        filename="google2011-job_events-part-00001-of-00500.csv.gz",
        description="Google clusterdata-2011-2 raw job_events part 1 (CC BY 4.0); no loader (raw events)",
    ),
    "google2011-task-events-00001": KnownTrace(
        url=f"{_GOOGLE}/task_events/part-00001-of-00500.csv.gz",
        sha256="c122f250cf1f9817dc722a5b7457eb5caf122619accfada078de66d40f311501",
        filename="google2011-task_events-part-00001-of-00500.csv.gz",
        description="Google clusterdata-2011-2 raw task_events part 1 (CC BY 4.0); no loader (raw events)",
    ),
}


class ChecksumError(ValueError):
    """A downloaded (or cached) file does not have the expected sha256."""

    def __init__(self, path: Path, expected: str, got: str, url: str | None = None) -> None:
        self.path = Path(path)
        self.expected = expected
        self.got = got
        origin = f" (from {url})" if url else ""
        super().__init__(
            f"sha256 mismatch for {self.path.name}{origin}: expected {expected}, got {got}; "
            "the downloaded file was removed"
        )


def default_cache_dir() -> Path:
    """The download cache: ``$EDGEGYM_CACHE`` if set, else ``~/.cache/edgegym`` (not created here)."""
    env = os.environ.get("EDGEGYM_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "edgegym"


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 digest of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK_BYTES), b""):
            h.update(block)
    return h.hexdigest()


def _normalise_sha(sha256: str | None) -> str | None:
    if sha256 is None:
        return None
    sha = sha256.strip().lower()
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ValueError(f"sha256 must be 64 hex digits, got {sha256!r}")
    return sha


class _FileDownloader:
    """pooch downloader for ``file://`` URLs: copy the local file (pooch itself has no ``file`` scheme)."""

    def __call__(self, url: str, output_file: str, pooch: object) -> None:
        source = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
        with open(source, "rb") as src, open(output_file, "wb") as out:
            shutil.copyfileobj(src, out, _CHUNK_BYTES)


class _DigestRecorder:
    """Wraps a pooch downloader and records the sha256 of what it wrote (for :class:`ChecksumError`)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.got: str | None = None

    def __call__(self, url: str, output_file: str, pooch: object) -> None:
        self.inner(url, output_file, pooch)
        self.got = sha256_file(output_file)


@contextlib.contextmanager
def _quiet_pooch():
    """pooch logs every download at INFO on stderr; this downloader has always been silent."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _as_urllib_error(exc: Exception, url: str) -> OSError:
    """A requests failure as the ``urllib.error`` exception this function has always raised."""
    import requests

    response = getattr(exc, "response", None)
    if isinstance(exc, requests.HTTPError) and response is not None:
        return urllib.error.HTTPError(url, response.status_code, str(response.reason), response.headers, None)
    return urllib.error.URLError(f"{url}: {exc}")


def download_trace(
    name_or_url: str,
    cache_dir: str | os.PathLike | None = None,
    sha256: str | None = None,
    filename: str | None = None,
    *,
    force: bool = False,
    timeout_s: float = 60.0,
) -> Path:
    """Fetch a trace into the cache directory and return its path (with :func:`pooch.retrieve`).

    Args:
        name_or_url: a key of :data:`KNOWN_TRACES` (e.g. ``"philly"``, ``"itp-raw"``) or a URL with
            scheme ``http``, ``https`` or ``file``.
        cache_dir: where to store it; default :func:`default_cache_dir`. Created if missing.
        sha256: expected hex digest. Defaults to the table's digest for a known name; for a bare URL
            without it, the file is not verified.
        filename: the file's name in the cache; default the table's name, else the URL's last segment.
        force: download again even if a cached copy exists (the old copy is kept if the new fetch fails).
        timeout_s: socket timeout of the request, seconds.

    Returns:
        The cached file's path. A cached copy that verifies (or, when no digest is known, any cached
        copy) is returned without a download; one that fails verification is fetched again.

    Raises:
        ValueError: an unknown name, an unsupported URL scheme or a malformed digest.
        ChecksumError: the fetched file's digest differs from ``sha256``; names the file and both
            digests, and the partial file is removed.
        urllib.error.URLError, OSError: the fetch itself failed (an HTTP error status is a
            ``urllib.error.HTTPError``; the partial file is removed).
    """
    known = KNOWN_TRACES.get(name_or_url)
    if known is not None:
        url = known.url
        sha = _normalise_sha(sha256 if sha256 is not None else known.sha256)
        name = filename or known.filename
    else:
        url = name_or_url
        scheme = urllib.parse.urlparse(url).scheme.lower()
        if scheme not in ("http", "https", "file"):
            raise ValueError(
                f"unknown trace {name_or_url!r}: expected one of {sorted(KNOWN_TRACES)} "
                "or an http(s):// or file:// URL"
            )
        sha = _normalise_sha(sha256)
        name = filename or Path(urllib.parse.unquote(urllib.parse.urlparse(url).path)).name
        if not name:
            raise ValueError(f"cannot infer a file name from {url!r}; pass filename=")
    if Path(name).name != name or name in (".", ".."):
        raise ValueError(f"filename must be a plain file name, got {name!r}")

    import pooch
    import requests

    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    if urllib.parse.urlparse(url).scheme.lower() == "file":
        inner = _FileDownloader()
    else:
        inner = pooch.HTTPDownloader(timeout=timeout_s, headers={"User-Agent": "edgegym-trace-downloader"})
    downloader = _DigestRecorder(inner)
    kept = None
    if force and target.exists():  # pooch re-fetches only a missing or failing copy: set the old one aside
        kept = directory / (name + ".old")
        os.replace(target, kept)
    try:
        try:
            with _quiet_pooch():
                path = pooch.retrieve(url, known_hash=sha, fname=name, path=directory, downloader=downloader)
        except requests.RequestException as exc:
            raise _as_urllib_error(exc, url) from exc
        except ValueError as exc:  # pooch's hash mismatch (its temporary file is already removed)
            if sha is not None and downloader.got is not None and downloader.got != sha:
                raise ChecksumError(target, sha, downloader.got, url) from exc
            raise
    except BaseException:
        if kept is not None:
            os.replace(kept, target)
        raise
    if kept is not None:
        kept.unlink()
    return Path(path)
