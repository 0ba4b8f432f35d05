"""The on-disk HTTP cache: a requests-cache session factory that never writes the API key.

* One SQLite database (WAL mode) per *namespace* under the cache dir; a namespace is a hash of the server's
  identity and the API key, so two keys never share answers and the file name reveals neither.
* Directory mode ``0700``; JSON serializer (no pickle); only ``200`` responses are stored; TTLs come from the
  endpoint catalog per request; ``stale_if_error`` serves an expired answer when the service is down.
* The key is sent as ``X-API-KEY``. requests-cache redacts ignored headers by exact name only, so
  :class:`KeySafeSession` renames any casing of an auth header to one canonical spelling before the request is
  cached, and that spelling is in ``ignored_parameters``: the stored request carries ``REDACTED``.
* Cache keys ignore the scheme, host and port (the namespace already names the server) and a trailing slash,
  so the embedded server's ephemeral port does not defeat the cache across sessions.

Example:
    >>> import tempfile
    >>> from fdkit.cache import make_session, cache_info
    >>> d = tempfile.mkdtemp()
    >>> s = make_session(d, namespace_of("http://127.0.0.1:1", "k"))
    >>> [row["responses"] for row in cache_info(d)]
    [0]
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import platformdirs
import requests
from requests.adapters import HTTPAdapter
from requests_cache import CachedResponse, CachedSession
from requests_cache.backends.sqlite import SQLiteCache
from requests_cache.cache_keys import create_key
from requests_cache.policy.settings import DEFAULT_IGNORED_PARAMS
from urllib3.util.retry import Retry

__all__ = [
    "API_KEY_HEADER",
    "KeySafeSession",
    "make_session",
    "make_retry",
    "default_cache_dir",
    "namespace_of",
    "cache_info",
    "clear_cache",
    "is_cache_miss",
    "FetchCache",
    "fetch_key",
]

API_KEY_HEADER = "X-API-KEY"
#: header names that carry credentials; compared case-insensitively
_AUTH_HEADERS = {h.lower(): h for h in DEFAULT_IGNORED_PARAMS} | {API_KEY_HEADER.lower(): API_KEY_HEADER}
IGNORED_PARAMETERS = tuple(dict.fromkeys((*DEFAULT_IGNORED_PARAMS, API_KEY_HEADER)))


def default_cache_dir() -> Path:
    """Return the cache directory: ``$FDKIT_CACHE_DIR`` or the user cache dir of fdkit.

    Returns:
        A path (not created yet).

    Example:
        >>> default_cache_dir().name in ("fdkit", os.environ.get("FDKIT_CACHE_DIR", "fdkit").rstrip("/").split("/")[-1])
        True
    """
    env = os.environ.get("FDKIT_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("fdkit"))


def namespace_of(server_identity: str, api_key: str | None) -> str:
    """Name the cache namespace of one (server, key) pair by a hash that reveals neither.

    Args:
        server_identity: the base URL of the service (or the embedded lake's identity).
        api_key: the key in use, or ``None``.

    Returns:
        A 20-character hexadecimal name.

    Example:
        >>> len(namespace_of("https://api.example", "secret"))
        20
    """
    h = hashlib.sha256()
    h.update(server_identity.rstrip("/").encode())
    h.update(b"\0")
    h.update((api_key or "").encode())
    return h.hexdigest()[:20]


def _canonical_auth_headers(headers: requests.structures.CaseInsensitiveDict) -> None:
    for name in list(headers.keys()):
        canonical = _AUTH_HEADERS.get(name.lower())
        if canonical is not None and name != canonical:
            value = headers[name]
            del headers[name]
            headers[canonical] = value


def _server_agnostic_key(request: Any, **kwargs: Any) -> str:
    """Cache key without scheme/host/port and without a trailing slash on the path."""
    parts = urlsplit(request.url or "")
    path = parts.path.rstrip("/") or "/"
    req = request.copy()
    req.url = urlunsplit(("http", "fds", path, parts.query, ""))
    return create_key(req, **kwargs)


class KeySafeSession(CachedSession):
    """A :class:`requests_cache.CachedSession` that spells auth headers canonically before caching.

    requests-cache redacts ``ignored_parameters`` by exact header name; this session renames any casing of a
    credential header (``x-api-key``, ``X-Api-Key`` ...) to the canonical spelling first, so the stored copy of
    the request always carries ``REDACTED`` instead of the key.

    Example:
        >>> import tempfile
        >>> s = make_session(tempfile.mkdtemp(), "ns")
        >>> isinstance(s, KeySafeSession)
        True
    """

    def send(self, request: requests.PreparedRequest, **kwargs: Any):  # type: ignore[override]
        """Send a prepared request through the cache, auth headers canonicalised first."""
        _canonical_auth_headers(request.headers)
        return super().send(request, **kwargs)


def make_retry(total: int = 5, backoff_factor: float = 0.5, backoff_max: float = 30.0) -> Retry:
    """Build the urllib3 retry policy used by every fdkit session.

    Retries connection errors, read errors and the statuses 429, 500, 502, 503, 504 (GET and the idempotent
    search POSTs), honouring ``Retry-After``; the final failing response is returned, not raised, so the
    client maps it to its error class.

    Args:
        total: maximum number of retries.
        backoff_factor: exponential backoff base in seconds.
        backoff_max: cap on one backoff sleep.

    Returns:
        A configured :class:`urllib3.util.retry.Retry`.

    Example:
        >>> make_retry().respect_retry_after_header
        True
    """
    return Retry(
        total=total,
        connect=total,
        read=total,
        status=total,
        other=0,
        backoff_factor=backoff_factor,
        backoff_max=backoff_max,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=frozenset({"GET", "HEAD", "POST"}),
        respect_retry_after_header=True,
        raise_on_status=False,
    )


def mount_retries(session: requests.Session, retry: Retry | None = None, pool_size: int = 16) -> None:
    """Mount the fdkit retry policy on both schemes of ``session``.

    Args:
        session: the session to configure.
        retry: a policy; :func:`make_retry` by default.
        pool_size: connections kept per host (match the client's worker count).

    Example:
        >>> s = requests.Session(); mount_retries(s)
        >>> s.get_adapter("http://x").max_retries.total
        5
    """
    adapter = HTTPAdapter(max_retries=retry or make_retry(), pool_connections=pool_size, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def make_session(
    cache_dir: str | os.PathLike[str] | None,
    namespace: str,
    *,
    retry: Retry | None = None,
    pool_size: int = 16,
    offline: bool = False,
) -> KeySafeSession:
    """Create the cached session of one namespace.

    Args:
        cache_dir: directory for the cache files (created with mode ``0700``); default :func:`default_cache_dir`.
        namespace: from :func:`namespace_of`.
        retry: retry policy; :func:`make_retry` by default.
        pool_size: HTTP connection pool size.
        offline: never touch the network: uncached requests get a ``504 Not Cached`` (see :func:`is_cache_miss`).

    Returns:
        A :class:`KeySafeSession`.

    Example:
        >>> import tempfile
        >>> make_session(tempfile.mkdtemp(), "abc").settings.allowable_codes
        (200,)
    """
    root = _private_dir(Path(cache_dir) if cache_dir else default_cache_dir())
    backend = SQLiteCache(root / f"{namespace}.sqlite", serializer="json", wal=True)
    session = KeySafeSession(
        backend=backend,
        allowable_codes=(200,),
        allowable_methods=("GET", "HEAD", "POST"),
        ignored_parameters=IGNORED_PARAMETERS,
        stale_if_error=True,
        key_fn=_server_agnostic_key,
        only_if_cached=offline,
        cache_control=False,
    )
    mount_retries(session, retry, pool_size)
    return session


def is_cache_miss(response: requests.Response) -> bool:
    """Tell whether ``response`` is requests-cache's synthetic offline miss.

    Args:
        response: any response.

    Returns:
        True for the ``504 Not Cached`` answer of an only-if-cached request.

    Example:
        >>> r = requests.Response(); r.status_code = 200
        >>> is_cache_miss(r)
        False
    """
    return isinstance(response, CachedResponse) and response.status_code == 504 and response.reason == "Not Cached"


def _cache_files(root: Path) -> Iterable[Path]:
    if not root.exists():
        return []
    return sorted(p for p in root.glob("*.sqlite") if not p.name.endswith(".fetch.sqlite"))


def cache_info(cache_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Describe each namespace in the cache dir.

    Args:
        cache_dir: directory; default :func:`default_cache_dir`.

    Returns:
        One dict per namespace: ``namespace``, ``path``, ``responses``, ``bytes``.

    Example:
        >>> import tempfile
        >>> cache_info(tempfile.mkdtemp())
        []
    """
    root = Path(cache_dir) if cache_dir else default_cache_dir()
    rows = []
    for path in _cache_files(root):
        backend = SQLiteCache(path, serializer="json")
        try:
            n = len(backend.responses)
        finally:
            backend.close()
        size = sum(p.stat().st_size for p in root.glob(path.stem + "*"))
        rows.append({"namespace": path.stem, "path": str(path), "responses": n, "bytes": size})
    return rows


def clear_cache(cache_dir: str | os.PathLike[str] | None = None, namespace: str | None = None) -> int:
    """Delete cache files (one namespace or all).

    Args:
        cache_dir: directory; default :func:`default_cache_dir`.
        namespace: only this namespace; all when ``None``.

    Returns:
        Number of files removed.

    Example:
        >>> import tempfile
        >>> clear_cache(tempfile.mkdtemp())
        0
    """
    root = Path(cache_dir) if cache_dir else default_cache_dir()
    removed = 0
    for path in _cache_files(root):
        if namespace and path.stem != namespace:
            continue
        for p in [*root.glob(path.name + "*"), *root.glob(path.stem + ".fetch.sqlite*")]:  # dbs, -wal/-shm
            p.unlink(missing_ok=True)
            removed += 1
    return removed


class FetchCache:
    """A cache of whole logical fetches (all pages merged), next to the HTTP cache of one namespace.

    A paginated fetch is answered from one row instead of one HTTP-cache lookup per page. Rows hold the merged
    JSON (orjson bytes; never the key: the namespace already separates keys) and an expiry taken from the
    endpoint's TTL. The HTTP cache below still holds every page, so a partly warm fetch is cheap too.

    Example:
        >>> import tempfile
        >>> fc = FetchCache(Path(tempfile.mkdtemp()) / "ns.fetch.sqlite")
        >>> fc.put("k", b'{"x": 1}', ttl=60); fc.get("k")
        b'{"x": 1}'
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import sqlite3
        import threading

        self.path = Path(path)
        self._local = threading.local()
        self._sqlite = sqlite3
        with self._conn() as db:
            db.execute("create table if not exists fetches (key text primary key, expires real, body blob)")

    def _conn(self):
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._sqlite.connect(self.path, timeout=30)
            db.execute("pragma journal_mode=wal")
            self._local.db = db
        return db

    def get(self, key: str, *, allow_stale: bool = False) -> bytes | None:
        """The cached body, or ``None`` when absent or expired (unless ``allow_stale``)."""
        import time

        row = self._conn().execute("select expires, body from fetches where key = ?", (key,)).fetchone()
        if row is None:
            return None
        expires, body = row
        if not allow_stale and expires >= 0 and expires < time.time():
            return None
        return bytes(body)

    def put(self, key: str, body: bytes, ttl: int) -> None:
        """Store a body for ``ttl`` seconds (``-1``: never expires)."""
        import time

        expires = -1.0 if ttl < 0 else time.time() + ttl
        with self._conn() as db:
            db.execute("insert or replace into fetches values (?, ?, ?)", (key, expires, body))


def fetch_key(endpoint: str, params: dict[str, Any]) -> str:
    """The cache key of a logical fetch: endpoint + canonical parameters, hashed.

    Args:
        endpoint: endpoint name.
        params: cleaned parameters.

    Returns:
        A hex digest.

    Example:
        >>> fetch_key("prices", {"b": 1, "a": 2}) == fetch_key("prices", {"a": 2, "b": 1})
        True
    """
    import orjson

    blob = orjson.dumps({"e": endpoint, "p": params}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()
