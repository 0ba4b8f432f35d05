"""``fdkit serve``: the Financial Data Service over a Parquet lake, in-process or standalone.

Example:
    >>> import requests, fdkit.server
    >>> with fdkit.server.start() as srv:
    ...     r = requests.get(srv.base_url + "/company/facts", params={"ticker": "AAPL"},
    ...                      headers={"X-API-KEY": srv.api_key})
    >>> r.json()["company_facts"]["cik"]
    '0000320193'
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from fdkit.catalog.endpoints import CATALOG
from fdkit.lake.io import LakeRoot, default_lake, lake_root
from fdkit.server.app import bulk_answer, create_app
from fdkit.server.auth import Keys, load_keys
from fdkit.server.bulk import BULK_PREFIX, bulk_endpoint
from fdkit.server.faults import FaultInjector, FaultPlan

__all__ = ["start", "serve_app", "ServerHandle", "create_app", "FaultPlan", "FaultInjector", "bulk_in_process"]


class ServerHandle:
    """A running service: ``base_url``, ``api_key``, ``stop()``; also a context manager."""

    def __init__(
        self, server: uvicorn.Server, thread: threading.Thread, base_url: str, keys: Keys, app: Any, data: LakeRoot
    ) -> None:
        self._server = server
        self._thread = thread
        self.base_url = base_url
        self.keys = keys
        self.api_key: str = keys.first or ""
        self.app = app
        self.data = data

    def __repr__(self) -> str:  # never show the key
        return f"ServerHandle(base_url={self.base_url!r}, data={str(self.data)!r})"

    def stop(self, timeout: float = 10.0, *, force: bool = False) -> None:
        """Stop the server and wait for its thread.

        Args:
            timeout: the longest wait for the thread, in seconds.
            force: do not wait for open connections to finish (at interpreter exit: the process is ending).
        """
        self._server.should_exit = True
        if force:
            self._server.force_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_app(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    timeout: float = 30.0,
    keys: Keys | None = None,
    data: LakeRoot | None = None,
    header_timeout: float | None = None,
) -> ServerHandle:
    """Run any ASGI app with uvicorn in a background thread on ``host:port`` (0 = an ephemeral port).

    Args:
        app: the ASGI app.
        host: interface (loopback by default).
        port: TCP port.
        timeout: seconds to wait for it to be up.
        keys: keys to report on the handle.
        data: lake to report on the handle.
        header_timeout: seconds a connection has to send a request head before it is closed (default
            :data:`fdkit.server.protocol.HEADER_TIMEOUT`).

    Returns:
        A :class:`ServerHandle`.

    Raises:
        RuntimeError: when the server did not start in time.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    from fdkit.server.protocol import HEADER_TIMEOUT, protocol_class

    http = protocol_class(HEADER_TIMEOUT if header_timeout is None else header_timeout)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30, backlog=2048, http=http
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="fdkit-serve")
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    return ServerHandle(
        server, thread, f"http://{host}:{bound_port}", keys or Keys({"": "pro"}), app, data or Path(".")
    )


def start(
    data: str | os.PathLike[str] | None = None,
    keys: Any = None,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    faults: FaultPlan | None = None,
    cursor_secret: bytes | None = None,
    timeout: float = 30.0,
    public_url: str | None = None,
    arrow: bool = True,
    contract: str | None = None,
) -> ServerHandle:
    """Start the service in a background thread on loopback.

    Args:
        data: lake directory or ``s3://`` URL (default: ``FDKIT_DATA``, else the bundled reference data).
        keys: keys file path, ``{key: plan}``, list of keys, or ``None`` (``FDKIT_SERVER_KEYS`` or one generated).
        port: TCP port (0 = an ephemeral one).
        host: interface (loopback by default).
        faults: inject faults (tests, demos).
        cursor_secret: HMAC key of the pagination cursors (random by default).
        timeout: seconds to wait for the server to be up.
        public_url: base of ``next_page_url`` links (default: the address each request came in on).
        arrow: answer Arrow pages to fdkit peers (``False``: JSON only, as the public service).
        contract: ``"seed"`` or ``"2026"`` (:mod:`fdkit.catalog.contracts`); ``None``: ``FDKIT_CONTRACT``, else
            the seed's.

    Returns:
        A :class:`ServerHandle`.

    Raises:
        RuntimeError: when the server did not start in time.
    """
    root = lake_root(data) if data is not None else default_lake()
    key_table = keys if isinstance(keys, Keys) else load_keys(keys)
    app = create_app(
        root, key_table, cursor_secret=cursor_secret, public_url=public_url, arrow=arrow, contract=contract
    )
    asgi = FaultInjector(app, faults) if faults is not None else app
    handle = serve_app(asgi, host=host, port=port, timeout=timeout, keys=key_table, data=root)
    handle.app = app
    return handle


_BULK_PATHS = {BULK_PREFIX + ep.path: ep for ep in CATALOG.values() if bulk_endpoint(ep)}


def bulk_in_process(
    handle: ServerHandle, path: str, items: list[tuple[str, str]], body: bytes, api_key: str | None
) -> tuple[int, str, dict[str, str], bytes] | None:
    """A bulk request answered by a service running in this process, without the loopback hop.

    What the embedded default's transport does with its bulk requests: the bytes the route would send (the same
    function makes them), read here at memory speed instead of through a socket and HTTP's chunked encoding.

    Args:
        handle: the running service (:func:`start`).
        path: the request's path (``/bulk/prices/history``, a trailing slash allowed).
        items: the query string's items.
        body: the request's body.
        api_key: its ``X-API-KEY``.

    Returns:
        ``(status, media type, headers, body)``, or ``None`` for a path that is no bulk route.

    Example:
        >>> with start() as srv:
        ...     status, media, _, _ = bulk_in_process(srv, "/bulk/prices/history", [("end_date", "2008-09-30")],
        ...                                           b'{"tickers": ["LEH"]}', srv.api_key)
        >>> status, media
        (200, 'application/vnd.fdkit.bundle')
    """
    ep = _BULK_PATHS.get(path.rstrip("/"))
    if ep is None:
        return None
    ep = handle.app.state.catalog[ep.name]  # (the endpoint as the service's contract has it)
    # the parts uncompressed: the client compresses what it keeps after it has its frame (off the call's path)
    status, media, headers, chunks = bulk_answer(handle.app.state, ep, items, body, api_key, compression=None)
    return status, media, headers, b"".join(chunks)
