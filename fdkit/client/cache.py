"""The on-disk HTTP cache: a requests-cache session factory that never writes the API key.

* One SQLite database (WAL mode) per *namespace* under the cache dir; a namespace is a hash of the server's
  identity and the API key, so two keys never share answers and the file name reveals neither.
* Directory mode ``0700``; JSON serializer (no pickle); only ``200`` responses are stored; TTLs come from the
  endpoint catalog per request; ``stale_if_error`` serves an expired answer when the service is down.
* Every stored answer is sealed with a SHA-256 of its serialized bytes (body and metadata) when it is received,
  a last stage of requests-cache's serializer pipeline (:data:`VERIFIED_SERIALIZER`); :class:`VerifiedSQLiteCache`
  checks it before anything is deserialized. An entry that fails (bit flips, truncation, metadata requests-cache
  cannot read back) is deleted and fetched again with a warning, or, offline, is a :class:`~fdkit.errors.CacheError`
  naming the entry: corrupted bytes are never served. An older fdkit's entry (no seal) is fetched again quietly
  (offline: the same error, as it cannot be verified).
* The key is sent as ``X-API-KEY``. requests-cache redacts ignored headers by exact name only, so
  :class:`KeySafeSession` renames any casing of an auth header to one canonical spelling before the request is
  cached, and that spelling is in ``ignored_parameters``: the stored request carries ``REDACTED``.
* Cache keys ignore the scheme, host and port (the namespace already names the server) and a trailing slash,
  so the embedded server's ephemeral port does not defeat the cache across sessions.

Example:
    >>> import tempfile
    >>> from fdkit.client.cache import make_session, cache_info
    >>> d = tempfile.mkdtemp()
    >>> s = make_session(d, namespace_of("http://127.0.0.1:1", "k"))
    >>> [row["responses"] for row in cache_info(d)]
    [0]
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import platformdirs
import requests
from requests_cache import CachedResponse, CachedSession, SerializerPipeline, Stage, json_serializer
from requests_cache.backends.sqlite import SQLiteCache
from requests_cache.cache_keys import create_key
from requests_cache.policy.expiration import get_expiration_datetime
from requests_cache.policy.settings import DEFAULT_IGNORED_PARAMS
from urllib3.util.retry import Retry

from fdkit.errors import TICKER_NOT_FOUND, CacheError
from fdkit.frames.bundle import BUNDLE_MEDIA
from fdkit.wire.transport import DeadlineAdapter, FdkitRetry, OriginBoundAuth

# requests-cache logs a failed refresh of an expired answer with its traceback before it serves the old one; fdkit
# says that once, as a StaleDataWarning naming the answer's age, so with no logging configured nothing else is
# printed (an application that configures logging still gets the record)
logging.getLogger("requests_cache").addHandler(logging.NullHandler())

#: the longest a refusal (a ticker the service lacks: 404) is kept, whatever the endpoint's TTL (a lake may learn
#: the ticker); the bulk path keeps its refusals in the fetch cache for as long
MISS_TTL = 3600

_T = TypeVar("_T")

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
    "VerifiedSQLiteCache",
    "VERIFIED_SERIALIZER",
]

API_KEY_HEADER = "X-API-KEY"
#: header names that carry credentials; compared case-insensitively
_AUTH_HEADERS = {h.lower(): h for h in DEFAULT_IGNORED_PARAMS} | {API_KEY_HEADER.lower(): API_KEY_HEADER}
IGNORED_PARAMETERS = tuple(dict.fromkeys((*DEFAULT_IGNORED_PARAMS, API_KEY_HEADER)))


def default_cache_dir() -> Path:
    """Return fdkit's cache folder for the environment (see :func:`cache_root`; not created here).

    Returns:
        ``$FDKIT_CACHE_DIR/fdkit`` or the user cache folder of fdkit.

    Example:
        >>> default_cache_dir().name
        'fdkit'
    """
    return cache_root(None)


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


_SEAL = b"fdkit-sha256:"


class _Unverified(Exception):
    """A stored answer whose bytes do not match the checksum sealed with it.

    Never one of requests-cache's deserialisation errors, which it would swallow as a silent miss.
    """

    def __init__(self, message: str, *, unsealed: bool = False) -> None:
        super().__init__(message)
        self.unsealed = unsealed  # written before answers were sealed: not corrupted, only unverifiable


def _seal(text: str | bytes) -> bytes:
    body = text.encode() if isinstance(text, str) else bytes(text)
    return _SEAL + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def _unseal(value: str | bytes) -> str:
    if isinstance(value, str):
        raise _Unverified("it carries no checksum (stored by an older fdkit)", unsealed=True)
    value = bytes(value)
    if not value.startswith(_SEAL):
        raise _Unverified("it carries no checksum", unsealed=value.lstrip().startswith(b"{"))
    digest, newline, body = value[len(_SEAL) :].partition(b"\n")
    if not newline or hashlib.sha256(body).hexdigest().encode() != digest:
        raise _Unverified("its bytes do not match the SHA-256 stored when it was received")
    return body.decode()


#: requests-cache's JSON pipeline plus a last stage that seals the serialized bytes with their SHA-256 (and checks
#: the seal before anything else reads them back)
VERIFIED_SERIALIZER = SerializerPipeline(
    [*json_serializer.copy().stages, Stage(dumps=_seal, loads=_unseal)], name="fdkit-json-sha256", is_binary=True
)


class VerifiedSQLiteCache(SQLiteCache):
    """requests-cache's SQLite backend whose answers are verified before use.

    Answers are written through :data:`VERIFIED_SERIALIZER` (JSON sealed with the SHA-256 of its bytes). Reading an
    entry that fails its checksum, or whose metadata requests-cache cannot structure again (a cattrs validation
    error, a decoding error), deletes it and answers a miss, so the session fetches it again; offline (nothing can
    be fetched) it raises :class:`~fdkit.errors.CacheError` naming the entry and the file.

    Args:
        db_path: the namespace's database file.
        offline: raise instead of answering a miss.

    Example:
        >>> import tempfile
        >>> b = VerifiedSQLiteCache(Path(tempfile.mkdtemp()) / "n.sqlite")
        >>> b.get_response("absent") is None
        True
    """

    def __init__(self, db_path: str | os.PathLike[str], *, offline: bool = False, **kwargs: Any) -> None:
        super().__init__(Path(db_path), serializer=VERIFIED_SERIALIZER.copy(), wal=True, **kwargs)
        self.offline = offline

    def save_response(self, response: Any, cache_key: str | None = None, expires: Any = None) -> None:
        """Keep an answer; a 404 (a ticker the service lacks) for its endpoint's TTL but at most :data:`MISS_TTL`."""
        if response.status_code == 404:
            latest = get_expiration_datetime(MISS_TTL)  # (in the library's own convention of time zones)
            expires = latest if expires is None or expires > latest else expires
        super().save_response(response, cache_key, expires)

    def get_response(self, key: str, default: Any = None) -> Any:
        """The verified answer stored under ``key``, or ``default`` (absent, or corrupted and dropped).

        Raises:
            CacheError: a corrupted entry in offline mode.
        """
        try:
            return super().get_response(key, default)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            problem = f"unreadable: {exc}"
            quiet = False
        except _Unverified as exc:
            problem = str(exc)
            quiet = exc.unsealed and not self.offline  # an older fdkit's entry is fetched again without a word
        except Exception as exc:  # e.g. cattrs' ClassValidationError: metadata that does not structure again
            problem = f"its metadata cannot be read back ({type(exc).__name__})"
            quiet = False
        try:
            with self.responses.connection(commit=True) as con:
                con.execute(f"delete from {self.responses.table_name} where key = ?", (key,))
        except sqlite3.Error:
            pass
        where = f"the cached answer {key} in {Path(str(self.db_path)).name}"
        if self.offline:
            raise CacheError(
                f"{where} is corrupted ({problem}); it was dropped and offline mode cannot fetch it again",
                error="Corrupted cache entry",
            )
        if not quiet:
            warnings.warn(
                f"fdkit: {where} failed its checksum ({problem}); it was dropped and is fetched again", stacklevel=2
            )
        return default


class KeySafeSession(OriginBoundAuth, CachedSession):
    """A :class:`requests_cache.CachedSession` that spells auth headers canonically before caching.

    requests-cache redacts ``ignored_parameters`` by exact header name; this session renames any casing of a
    credential header (``x-api-key``, ``X-Api-Key`` ...) to the canonical spelling first, so the stored copy of
    the request always carries ``REDACTED`` instead of the key. A redirect to another origin carries no key.

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


def make_retry(
    total: int = 5, backoff_factor: float = 0.5, backoff_max: float = 30.0, max_retry_after: float = 60.0
) -> Retry:
    """Build the urllib3 retry policy used by every fdkit session.

    Retries connection errors, read errors and the statuses 429, 500, 502, 503, 504 (GET and the idempotent
    search POSTs), honouring ``Retry-After``; the final failing response is returned, not raised, so the
    client maps it to its error class.

    Args:
        total: maximum number of retries.
        backoff_factor: exponential backoff base in seconds.
        backoff_max: cap on one backoff sleep.
        max_retry_after: the longest ``Retry-After`` worth sleeping (a longer one is a ``RateLimitError`` at once).

    Returns:
        A configured :class:`fdkit.wire.transport.FdkitRetry` (its sleeps also end at the call's deadline).

    Example:
        >>> make_retry().respect_retry_after_header
        True
    """
    return FdkitRetry(
        max_retry_after=max_retry_after,
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


def mount_retries(
    session: requests.Session, retry: Retry | None = None, pool_size: int = 16, max_bytes: int | None = 256 * 2**20
) -> None:
    """Mount the fdkit retry policy on both schemes of ``session``.

    Args:
        session: the session to configure.
        retry: a policy; :func:`make_retry` by default.
        pool_size: connections kept per host (match the client's worker count).
        max_bytes: the largest decompressed response body accepted.

    Example:
        >>> s = requests.Session(); mount_retries(s)
        >>> s.get_adapter("http://x").max_retries.total
        5
    """
    adapter = DeadlineAdapter(
        max_retries=retry or make_retry(), pool_connections=pool_size, pool_maxsize=pool_size, max_bytes=max_bytes
    )
    session.mount("http://", adapter)
    session.mount("https://", adapter)


_MARKER = ".fdkit-cache"


def cache_root(cache_dir: str | os.PathLike[str] | None = None, *, create: bool = False) -> Path:
    """The folder fdkit keeps its cache files in: its own, never a folder it did not make.

    With no ``cache_dir`` (and no ``FDKIT_CACHE_DIR``) it is the user cache folder named ``fdkit``. A given
    ``cache_dir`` holds fdkit's folder ``<cache_dir>/fdkit``: fdkit creates it (mode ``0700``), marks it, and only
    ever changes modes or deletes files inside it. A ``<cache_dir>/fdkit`` that holds other files and no mark is
    refused.

    Args:
        cache_dir: where the cache goes; default ``$FDKIT_CACHE_DIR`` or the user cache folder.
        create: make the folder when it does not exist.

    Returns:
        The folder.

    Raises:
        CacheError: when the folder exists, holds other files and is not marked as fdkit's.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp(); cache_root(d, create=True).relative_to(d).as_posix()
        'fdkit'
    """
    given = cache_dir or os.environ.get("FDKIT_CACHE_DIR")
    root = Path(given).expanduser() / "fdkit" if given else Path(platformdirs.user_cache_dir("fdkit"))
    marker = root / _MARKER
    if root.exists() and not marker.exists() and given and any(root.iterdir()):
        raise CacheError(f"{root} exists and is not an fdkit cache folder; choose another cache_dir")
    if create:
        fresh = not root.exists()
        root.mkdir(parents=True, exist_ok=True)
        if fresh or not marker.exists():
            os.chmod(root, 0o700)
            marker.write_text("fdkit cache folder: fdkit creates, trims and clears the files here\n")
    return root


def make_session(
    cache_dir: str | os.PathLike[str] | None,
    namespace: str,
    *,
    retry: Retry | None = None,
    pool_size: int = 16,
    offline: bool = False,
    max_bytes: int | None = 256 * 2**20,
    max_cache_bytes: int | None = 2**30,
) -> KeySafeSession:
    """Create the cached session of one namespace.

    Args:
        cache_dir: where fdkit's cache folder goes (see :func:`cache_root`).
        namespace: from :func:`namespace_of`.
        retry: retry policy; :func:`make_retry` by default.
        pool_size: HTTP connection pool size.
        offline: never touch the network: uncached requests get a ``504 Not Cached`` (see :func:`is_cache_miss`).
        max_bytes: the largest decompressed response body accepted.
        max_cache_bytes: the size the namespace's HTTP cache is trimmed to (oldest answers first) when opened.

    Returns:
        A :class:`KeySafeSession`.

    Example:
        >>> import tempfile
        >>> make_session(tempfile.mkdtemp(), "abc").settings.allowable_codes
        (200, 404)
    """
    root = cache_root(cache_dir, create=True)
    path = root / f"{namespace}.sqlite"
    _check_sqlite(path)
    backend = opened_while_shared(lambda: VerifiedSQLiteCache(path, offline=offline))
    if max_cache_bytes is not None:
        opened_while_shared(lambda: trim(backend, path, max_cache_bytes))
    session = KeySafeSession(
        backend=backend,
        allowable_codes=(200, 404),  # a ticker the service lacks is a kept answer too: a warm call asks nothing
        allowable_methods=("GET", "HEAD", "POST"),
        ignored_parameters=IGNORED_PARAMETERS,
        stale_if_error=True,
        key_fn=_server_agnostic_key,
        match_headers=["Accept"],  # an Arrow page and a JSON answer to the same URL are two entries
        only_if_cached=offline,
        cache_control=False,
        filter_fn=_not_a_bundle,
    )
    mount_retries(session, retry, pool_size, max_bytes)
    return session


def _not_a_bundle(response: requests.Response) -> bool:
    """Whether an answer goes into the HTTP cache: not a bulk answer, and of 404s only ``Ticker X not found``.

    A bulk answer's tickers' parts go to the fetch cache. A missing data package, an unknown route or a proxy's
    page is asked again: the user may fix it.
    """
    if response.status_code == 404:
        try:
            said = response.json()
        except ValueError:
            return False
        return isinstance(said, dict) and bool(TICKER_NOT_FOUND.match(str(said.get("message", ""))))
    return not response.headers.get("content-type", "").startswith(BUNDLE_MEDIA)


def opened_while_shared(open_: Callable[[], _T], attempts: int = 8) -> _T:
    """Run ``open_`` (opening or setting up a cache database) again while another process holds the file.

    Processes share a cache folder: two opening a new database at once race to switch it to write-ahead logging,
    and the loser reads 'database is locked' (or, while the winner builds the log, a transient I/O error) at once,
    without waiting for the busy timeout. Such an attempt is repeated after a short, growing pause.

    Args:
        open_: the opening step.
        attempts: how many times to try.

    Returns:
        What ``open_`` returns.

    Example:
        >>> opened_while_shared(lambda: 42)
        42
    """
    for attempt in range(attempts):
        try:
            return open_()
        except sqlite3.OperationalError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def _sqlite_problem(path: Path) -> str | None:
    """Why a cache database cannot be read, or ``None`` when it can (or is only busy: in use, not broken)."""
    # cheap on every open (no scan of the whole file): the schema must read. Only through SQLite: opening and
    # closing the file any other way (a Python open() to read its header) drops every POSIX lock this process's
    # SQLite connections hold on it, and another process then writes under them: the way to corrupt a database
    # (sqlite.org/howtocorrupt.html, 2.2)
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
            db.execute("select count(*) from sqlite_master").fetchone()
        return None
    except sqlite3.OperationalError:
        # locked, busy, or an I/O error while another process recovers or checkpoints the shared file: the file
        # is in use, not broken; setting it aside (and its -wal/-shm) would break that process's open database
        return None
    except sqlite3.DatabaseError as exc:
        return str(exc)
    except FileNotFoundError:  # set aside by another process meanwhile
        return None


def _check_sqlite(path: Path) -> None:
    """An unreadable cache database is set aside (with a warning) rather than served from or crashed on.

    Processes share a cache folder, so a file is set aside only when it fails twice, a moment apart: a file
    another process is creating or checkpointing is not a broken one.
    """
    if not path.exists() or _sqlite_problem(path) is None:
        return
    time.sleep(0.2)
    problem = _sqlite_problem(path)
    if problem is None:
        return
    bad = path.with_name(path.name + f".corrupt-{int(time.time())}")
    try:
        path.rename(bad)
    except FileNotFoundError:  # another process set it aside first
        return
    for extra in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        extra.unlink(missing_ok=True)
    warnings.warn(
        f"fdkit: the cache file {path.name} was unreadable ({problem}); it was moved aside and answers "
        "will be fetched again",
        stacklevel=3,
    )


def trim(backend: SQLiteCache, path: Path, max_bytes: int) -> int:
    """Keep a namespace's HTTP cache under ``max_bytes``: expired answers go first, then the oldest stored.

    Args:
        backend: the namespace's requests-cache backend.
        path: its database file.
        max_bytes: the bound.

    Returns:
        How many answers were removed.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp()); b = SQLiteCache(d / "n.sqlite", serializer="json")
        >>> trim(b, d / "n.sqlite", 10**9)
        0
    """
    responses = backend.responses

    def size() -> int:  # the database's own size (its write-ahead log is transient)
        with responses.connection() as con:
            pages = con.execute("pragma page_count").fetchone()[0]
            page = con.execute("pragma page_size").fetchone()[0]
        return int(pages * page)

    if size() <= max_bytes:
        return 0
    before = len(responses)
    backend.delete(expired=True)
    while size() > max_bytes and len(responses):
        n = max(1, len(responses) // 4)
        with responses.connection(commit=True) as con:  # rowid grows with every write: the smallest are oldest
            con.execute(
                f"delete from {responses.table_name} where rowid in "
                f"(select rowid from {responses.table_name} order by rowid limit ?)",
                (n,),
            )
        responses.vacuum()
    with responses.connection(commit=True) as con:
        con.execute("pragma wal_checkpoint(TRUNCATE)")
    return before - len(responses)


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


def _namespaces(root: Path) -> list[str]:
    if not root.exists():
        return []
    stems = {p.name.removesuffix(".fetch.sqlite").removesuffix(".sqlite") for p in root.glob("*.sqlite")}
    return sorted(stems)


def _files_of(root: Path, namespace: str) -> list[Path]:
    """Every file of a namespace: HTTP and fetch caches, their WAL/SHM files, corrupt copies set aside."""
    return sorted(p for p in root.glob(namespace + ".*") if p.is_file())


def cache_info(cache_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """Describe each namespace in the cache folder (HTTP answers and whole fetches, with their sizes).

    Args:
        cache_dir: as for :func:`cache_root`.

    Returns:
        One dict per namespace: ``namespace``, ``path``, ``responses``, ``fetches``, ``bytes``.

    Example:
        >>> import tempfile
        >>> cache_info(tempfile.mkdtemp())
        []
    """
    root = cache_root(cache_dir)
    rows = []
    for ns in _namespaces(root):
        http, fetch = root / f"{ns}.sqlite", root / f"{ns}.fetch.sqlite"
        responses = fetches = 0
        for path, table in ((http, "responses"), (fetch, FetchCache.TABLE)):
            if path.exists():
                try:
                    with sqlite3.connect(path) as db:
                        n = db.execute(f"select count(*) from {table}").fetchone()[0]
                except sqlite3.DatabaseError:
                    n = 0
                if table == "responses":
                    responses = n
                else:
                    fetches = n
        size = sum(p.stat().st_size for p in _files_of(root, ns))
        rows.append({"namespace": ns, "path": str(http), "responses": responses, "fetches": fetches, "bytes": size})
    return rows


def clear_cache(cache_dir: str | os.PathLike[str] | None = None, namespace: str | None = None) -> int:
    """Delete fdkit's cache files (one namespace or all); nothing else in the folder is touched.

    Args:
        cache_dir: as for :func:`cache_root`.
        namespace: only this namespace; all when ``None``.

    Returns:
        Number of files removed.

    Example:
        >>> import tempfile
        >>> clear_cache(tempfile.mkdtemp())
        0
    """
    root = cache_root(cache_dir)
    removed = 0
    for ns in _namespaces(root):
        if namespace and ns != namespace:
            continue
        for p in _files_of(root, ns):
            p.unlink(missing_ok=True)
            removed += 1
    return removed


class FetchCache:
    """A cache of whole logical fetches (all pages merged) and typed frame parts, next to the HTTP cache.

    A paginated fetch is answered from one row instead of one HTTP-cache lookup per page. Rows hold the body
    (orjson or Arrow bytes; never the key: the namespace already separates keys), a SHA-256 of it, and an expiry
    from the endpoint's TTL. A row whose checksum does not match is dropped, never served (:meth:`get`).

    Example:
        >>> import tempfile
        >>> fc = FetchCache(Path(tempfile.mkdtemp()) / "ns.fetch.sqlite")
        >>> fc.put("k", b'{"x": 1}', ttl=60); fc.get("k")
        b'{"x": 1}'
    """

    TABLE = "fetches_v2"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import sqlite3
        import threading

        self.path = Path(path)
        self._local = threading.local()
        self._sqlite = sqlite3
        _check_sqlite(self.path)

        def create() -> None:
            with self._conn() as db:
                db.execute(
                    f"create table if not exists {self.TABLE} "
                    "(key text primary key, expires real, digest blob, body blob)"
                )

        opened_while_shared(create)

    def _conn(self) -> Any:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._sqlite.connect(self.path, timeout=30)
            try:
                db.execute("pragma journal_mode=wal")
                # a cache: a commit need not reach the disk before the call goes on (WAL keeps the file whole; a
                # power cut may lose the last answers kept, which are fetched again)
                db.execute("pragma synchronous=normal")
                db.execute("pragma journal_size_limit=8388608")  # the log shrinks back after a large bulk answer
            except self._sqlite.OperationalError:
                db.close()  # another process is switching the new file to WAL: the caller tries again
                raise
            self._local.db = db
        return db

    def entry(self, key: str, *, allow_stale: bool = False, offline: bool = False) -> tuple[bytes, float] | None:
        """The cached body and how many seconds ago it expired (``0`` when fresh), or ``None``.

        Args:
            key: the entry's key.
            allow_stale: return an expired entry too.
            offline: a corrupted entry raises :class:`~fdkit.errors.CacheError` (it cannot be fetched again).

        Returns:
            ``(body, expired_for_seconds)`` or ``None`` (absent, expired, or corrupted and dropped).

        Raises:
            CacheError: a corrupted entry in offline mode.
        """
        try:
            row = (
                self._conn().execute(f"select expires, digest, body from {self.TABLE} where key = ?", (key,)).fetchone()
            )
        except self._sqlite.DatabaseError as exc:
            if not self._set_aside(exc):
                raise
            if offline:
                raise CacheError(
                    f"the fetch cache {self.path.name} was unreadable ({exc}); it was moved aside and "
                    "offline mode cannot fetch its answers again"
                ) from None
            return None
        if row is None:
            return None
        expires, digest, body = row
        body = bytes(body)
        if hashlib.sha256(body).digest() != bytes(digest or b""):
            with self._conn() as db:
                db.execute(f"delete from {self.TABLE} where key = ?", (key,))
            if offline:
                raise CacheError("a cached answer failed its checksum and offline mode cannot fetch it again")
            warnings.warn(
                "fdkit: a cached answer failed its checksum; it was dropped and is fetched again", stacklevel=3
            )
            return None
        late = 0.0 if expires < 0 else max(0.0, time.time() - expires)
        if late > 0 and not allow_stale:
            return None
        return body, late

    def entries(
        self, keys: Sequence[str], *, allow_stale: bool = False, offline: bool = False
    ) -> dict[str, tuple[bytes, float]]:
        """:meth:`entry` of many keys in a few queries (a bulk call's thousand tickers): the keys found, checked.

        Args:
            keys: the entries' keys.
            allow_stale: return expired entries too.
            offline: a corrupted entry raises :class:`~fdkit.errors.CacheError` (it cannot be fetched again).

        Returns:
            ``{key: (body, expired_for_seconds)}`` of the entries present, fresh (unless ``allow_stale``) and whole;
            a corrupted one is dropped (one warning for all of them).

        Raises:
            CacheError: a corrupted entry in offline mode.

        Example:
            >>> import tempfile
            >>> fc = FetchCache(Path(tempfile.mkdtemp()) / "ns.fetch.sqlite")
            >>> fc.put_many([("a", b"1"), ("b", b"2")], ttl=60); fc.entries(["b", "c"])
            {'b': (b'2', 0.0)}
        """
        rows: list[tuple[str, float, bytes, bytes]] = []
        try:
            for at in range(0, len(keys), _KEYS_PER_QUERY):
                chunk = list(keys[at : at + _KEYS_PER_QUERY])
                marks = ",".join("?" * len(chunk))
                rows.extend(
                    self._conn().execute(
                        f"select key, expires, digest, body from {self.TABLE} where key in ({marks})", chunk
                    )
                )
        except self._sqlite.DatabaseError:  # each entry's own lookup says what is wrong (and sets a broken file aside)
            found = {k: self.entry(k, allow_stale=allow_stale, offline=offline) for k in keys}
            return {k: hit for k, hit in found.items() if hit is not None}
        now, out, broken = time.time(), {}, []
        for key, expires, digest, body in rows:
            body = bytes(body)
            if hashlib.sha256(body).digest() != bytes(digest or b""):
                broken.append(key)
                continue
            late = 0.0 if expires < 0 else max(0.0, now - expires)
            if late == 0 or allow_stale:
                out[key] = (body, late)
        if broken:
            with self._conn() as db:
                db.executemany(f"delete from {self.TABLE} where key = ?", [(k,) for k in broken])
            if offline:
                raise CacheError("a cached answer failed its checksum and offline mode cannot fetch it again")
            warnings.warn(
                f"fdkit: {len(broken)} cached answer(s) failed their checksum; they were dropped and are fetched again",
                stacklevel=3,
            )
        return out

    def get(self, key: str, *, allow_stale: bool = False) -> bytes | None:
        """The cached body, or ``None`` when absent, expired (unless ``allow_stale``) or corrupted."""
        hit = self.entry(key, allow_stale=allow_stale)
        return None if hit is None else hit[0]

    def put(self, key: str, body: bytes, ttl: int) -> None:
        """Store a body for ``ttl`` seconds (``-1``: never expires), with its checksum."""
        expires = -1.0 if ttl < 0 else time.time() + ttl
        for attempt in range(2):
            try:
                with self._conn() as db:
                    db.execute(
                        f"insert or replace into {self.TABLE} values (?, ?, ?, ?)",
                        (key, expires, hashlib.sha256(body).digest(), body),
                    )
                return
            except self._sqlite.DatabaseError as exc:
                if attempt or not self._set_aside(exc):
                    raise

    def put_many(self, items: Sequence[tuple[str, bytes | memoryview]], ttl: int) -> None:
        """Store many bodies for ``ttl`` seconds in one transaction (a bulk answer's parts), each with its checksum.

        Example:
            >>> import tempfile
            >>> fc = FetchCache(Path(tempfile.mkdtemp()) / "ns.fetch.sqlite")
            >>> fc.put_many([("a", b"1"), ("b", b"2")], ttl=60); fc.get("b")
            b'2'
        """
        expires = -1.0 if ttl < 0 else time.time() + ttl
        rows = [(key, expires, hashlib.sha256(body).digest(), body) for key, body in items]
        for attempt in range(2):
            try:
                with self._conn() as db:
                    db.executemany(f"insert or replace into {self.TABLE} values (?, ?, ?, ?)", rows)
                if sum(len(r[3]) for r in rows) > 8 * 2**20:  # a market's parts: the log would hold them twice
                    with contextlib.suppress(self._sqlite.OperationalError):  # (busy: shrunk at a later checkpoint)
                        self._conn().execute("pragma wal_checkpoint(truncate)")
                return
            except self._sqlite.DatabaseError as exc:
                if attempt or not self._set_aside(exc):
                    raise

    def _set_aside(self, exc: Exception) -> bool:
        """A fetch-cache file that stopped being a database is moved aside and started afresh (True), once a call.

        Busy or locked files are not (False): they are in use, not broken.
        """
        if isinstance(exc, self._sqlite.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
            return False
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
        bad = self.path.with_name(self.path.name + f".corrupt-{int(time.time())}")
        with contextlib.suppress(FileNotFoundError):
            self.path.rename(bad)
        warnings.warn(
            f"fdkit: the fetch cache {self.path.name} was unreadable ({exc}); it was moved aside and "
            "answers are fetched again",
            stacklevel=4,
        )
        with self._conn() as fresh:
            fresh.execute(
                f"create table if not exists {self.TABLE} (key text primary key, expires real, digest blob, body blob)"
            )
        return True


#: the keys one query of :meth:`FetchCache.entries` names (SQLite's bound on a statement's variables is far above)
_KEYS_PER_QUERY = 500


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
