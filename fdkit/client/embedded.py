"""The embedded Financial Data Service: the default when no API key and no base URL are configured.

A client of the embedded default sends its requests to the placeholder origin :data:`EMBEDDED_ORIGIN`. The
cached session answers what it can from disk; only a request that reaches the network arrives at
:class:`EmbeddedAdapter`, which starts the service (once per process, on loopback, over the bundled lake),
rewrites the URL to the service's real address and adds its key. So a call answered wholly by the cache starts
nothing, and cached links never name the ephemeral port of another process.

This module is the only place the client side reaches the server package, and it does so lazily (inside
:func:`service`): importing fdkit never imports FastAPI or uvicorn.

Example:
    >>> import fdkit
    >>> c = fdkit.Client(cache=False)
    >>> c.settings.base_url == EMBEDDED_ORIGIN
    True
    >>> c.fetch("interest_rates_banks", {})["banks"]
    ['ECB', 'FED']
"""

from __future__ import annotations

import atexit
import gc
import hashlib
import os
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson
import requests
from requests.structures import CaseInsensitiveDict

from fdkit.lake.extensions import data_packages
from fdkit.lake.io import bundled_data_dir, default_lake, fingerprint, generation_stamp, require_lake
from fdkit.lake.location import is_url
from fdkit.wire.transport import DeadlineAdapter, DeadlineExceeded, ResponseTooLarge, remaining

__all__ = ["EMBEDDED_ORIGIN", "MAX_WORKERS", "EmbeddedAdapter", "identity", "service", "is_running", "rebase"]

#: the origin embedded-default clients address; never resolved (``.invalid`` is reserved, RFC 6761)
EMBEDDED_ORIGIN = "http://embedded.fdkit.invalid"
_API_KEY_HEADER = "X-API-KEY"

#: threads a multi-ticker fetch uses with the embedded service: it shares the client's process and interpreter,
#: so more threads only contend, and each holds memory (BENCHMARKS.md: RSS +18 MB with 2, +30 MB with 8)
MAX_WORKERS = 2

_HANDLE: Any = None
_LOCK = threading.Lock()


def identity() -> str:
    """Name the embedded service's data for cache namespaces: it changes whenever what the service serves does.

    The cached answers of the embedded service are kept under this name (:func:`fdkit.client.cache.namespace_of`),
    so a changed lake is asked afresh at once, never answered from a cache of the old one. It covers the lake's files
    (names, sizes, modification times), its change stamp (every writer's commit bumps it) and, for the bundled lake,
    the data packages installed beside it (``fdkit-history``: distribution, version and the fingerprint of its
    files), which the service serves with it: a package installed or removed after an answer was cached is seen by
    the next call (before, an empty ``price_history`` stayed cached for its day).

    Returns:
        ``"embedded:<digest>"``.

    Example:
        >>> identity().startswith("embedded:")
        True
    """
    lake = default_lake()
    h = hashlib.sha256(f"{fingerprint(lake)}:{generation_stamp(lake)}".encode())
    if not is_url(lake) and Path(lake).resolve() == bundled_data_dir().resolve():
        for package in data_packages():
            h.update(f"|{package.name}:{package}:{package.root}:{fingerprint(package.root)}".encode())
    return f"embedded:{h.hexdigest()[:16]}"


def is_running() -> bool:
    """Tell whether this process has started the embedded service.

    Returns:
        ``True`` once :func:`service` has run.

    Example:
        >>> isinstance(is_running(), bool)
        True
    """
    return _HANDLE is not None


def service() -> Any:
    """Start (once per process) and return the embedded service's handle (``base_url``, ``api_key``).

    Returns:
        A :class:`fdkit.server.ServerHandle`.

    Raises:
        LakeError: when the bundled lake (or ``$FDKIT_DATA``) is missing or empty.

    Example:
        >>> service().base_url.startswith("http://127.0.0.1:")
        True
    """
    global _HANDLE
    with _LOCK:
        if _HANDLE is None:
            data = default_lake()
            require_lake(data)
            from fdkit import server  # FastAPI and uvicorn are imported only when the service really starts

            # the catalog's own contract, which fdkit's functions are written from (the 2026 document's; every
            # request of this client carries the service's key, so the seed's keys on listings would change nothing)
            handle = server.start(data=data, contract="2026")
            # the service's imports leave a full collection of ~140k objects due (60-70 ms): taken once here, at
            # startup, not inside the first large call that happens to cross the collector's threshold
            gc.collect()
            # at exit the process is ending: no wait for keep-alive connections, at most a brief one for the thread
            atexit.register(handle.stop, 0.25, force=True)
            where = f" in {data} (FDKIT_DATA)" if os.environ.get("FDKIT_DATA") else ""
            print(
                "fdkit: no API key or base URL configured; using the embedded Financial Data Service over the "
                f"bundled reference data{where} (offline, on loopback)",
                file=sys.stderr,
            )
            _HANDLE = handle
        return _HANDLE


def rebase(url: str) -> str:
    """Point an absolute URL (a ``next_page_url`` of the embedded service) at :data:`EMBEDDED_ORIGIN`.

    Args:
        url: an absolute URL or a path.

    Returns:
        The same path and query on the placeholder origin.

    Example:
        >>> rebase("http://127.0.0.1:51234/prices?cursor=abc")
        'http://embedded.fdkit.invalid/prices?cursor=abc'
    """
    parts = urlsplit(url)
    return f"{EMBEDDED_ORIGIN}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")


class EmbeddedAdapter(DeadlineAdapter):
    """The transport for :data:`EMBEDDED_ORIGIN`: starts the service on first use and sends to its loopback port.

    Example:
        >>> s = requests.Session(); s.mount(EMBEDDED_ORIGIN, EmbeddedAdapter())
        >>> s.get(EMBEDDED_ORIGIN + "/macro/interest-rates/banks", timeout=10).json()["banks"]
        ['ECB', 'FED']
    """

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        """Send ``request`` to the running embedded service, with its key (a bulk request: answered in process)."""
        handle = service()
        url = request.url or ""
        if url.startswith(EMBEDDED_ORIGIN):
            request.url = handle.base_url + url[len(EMBEDDED_ORIGIN) :]
        request.headers[_API_KEY_HEADER] = handle.api_key
        if request.method == "POST" and urlsplit(request.url or "").path.startswith(BULK_PATH_PREFIX):
            answered = _in_process(handle, request, self.max_bytes)
            if answered is not None:
                return answered
        return super().send(request, *args, **kwargs)


#: the paths of the service's bulk routes (``fdkit.server.bulk.BULK_PREFIX``)
BULK_PATH_PREFIX = "/bulk/"


def _in_process(handle: Any, request: requests.PreparedRequest, max_bytes: int | None) -> requests.Response | None:
    """A bulk request answered by the service in this process: the bytes its route would send, without the socket.

    The service shares this process (the embedded default): a bulk answer of a market (tens of megabytes) through
    loopback and HTTP's chunked encoding cost a fifth of the call. The answer is made by the route's own function
    (``fdkit.server.app.bulk_answer``), so the client reads the same bytes; faults of the service are answered as
    the route answers them (4xx/5xx with ``{"error", "message"}``, an unexpected one as the app's 500). The call's
    deadline and the response cap hold as over the socket: an answer made past the deadline is not taken, one
    over ``max_response_bytes`` is refused (the client then asks for fewer tickers at a time).
    """
    from fdkit import server  # (the service is running: its package is imported already)

    if remaining() == 0.0:
        raise DeadlineExceeded
    parts = urlsplit(request.url or "")
    body = request.body if isinstance(request.body, bytes) else (request.body or "").encode()
    try:
        answered = server.bulk_in_process(
            handle,
            parts.path,
            parse_qsl(parts.query, keep_blank_values=True),
            body,
            request.headers.get(_API_KEY_HEADER),
        )
    except Exception:  # noqa: BLE001 - the app's own answer to what it did not expect: a 500, never a traceback
        answered = (
            500,
            "application/json",
            {},
            orjson.dumps({"error": "Internal Server Error", "message": "the server failed to answer; please retry"}),
        )
    if answered is None:
        return None
    if remaining() == 0.0:
        raise DeadlineExceeded
    status, media, headers, content = answered
    if max_bytes is not None and len(content) > max_bytes:
        raise ResponseTooLarge(
            f"the response body is larger than the cap of {max_bytes:,} bytes "
            "(max_response_bytes); it was not read further"
        )
    response = requests.Response()
    response.status_code = status
    response.headers = CaseInsensitiveDict({**headers, "Content-Type": media, "Content-Length": str(len(content))})
    response._content = content  # noqa: SLF001 - a whole body, as requests keeps one it has read
    response.url = request.url or ""
    response.request = request
    response.reason = "OK" if status == 200 else "Error"
    response.encoding = None
    return response
