"""A fault injector in front of the service (ASGI middleware), for reliability tests and demos.

Faults: ``429`` (with ``Retry-After``), ``500``, ``503``, ``truncate`` (a body cut short: the declared length is
not delivered and the connection drops), ``slow`` (the answer comes after ``slow_seconds``), ``ack_lost`` (the
request is processed but the caller gets a 503, so it sends it again: a duplicate delivery). Faults are drawn
with probability ``rate`` from ``kinds`` by a seeded generator, or taken in order from ``script`` first
(``None`` in a script lets one request through). Listing the faults it injected lets a test count them.

Example:
    >>> plan = FaultPlan(script=["429", None])
    >>> plan.next_fault("/prices"), plan.next_fault("/prices"), plan.next_fault("/prices")
    ('429', None, None)
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import orjson

__all__ = ["FaultPlan", "FaultInjector", "ResetProxy", "KINDS"]

KINDS = ("429", "500", "503", "truncate", "slow", "ack_lost")


@dataclass
class FaultPlan:
    """What to inject.

    Attributes:
        rate: probability of a fault per request (after the script is used up).
        kinds: fault kinds drawn from.
        script: faults to inject first, in order (``None`` = no fault for that request).
        seed: random seed.
        retry_after: seconds announced by ``429``/``503``.
        slow_seconds: delay of ``slow``.
        paths: only requests whose path starts with one of these (all when empty).
        injected: faults injected so far, by kind.
        requests: requests seen so far, by path (a plan with ``rate=0`` is a request counter).
    """

    rate: float = 0.0
    kinds: tuple[str, ...] = KINDS
    script: list[str | None] = field(default_factory=list)
    seed: int = 0
    retry_after: float = 0
    slow_seconds: float = 2.0
    paths: tuple[str, ...] = ()
    injected: Counter = field(default_factory=Counter)
    requests: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        bad = [k for k in (*self.kinds, *(s for s in self.script if s)) if k not in KINDS]
        if bad:
            raise ValueError(f"unknown fault kind(s) {bad}; kinds: {KINDS}")
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()
        self._script = list(self.script)

    def next_fault(self, path: str) -> str | None:
        """Draw the fault for a request to ``path`` (thread-safe); every request is counted in ``requests``."""
        with self._lock:
            self.requests[path] += 1
        if self.paths and not any(path.startswith(p) for p in self.paths):
            return None
        with self._lock:
            if self._script:
                kind = self._script.pop(0)
            elif self.rate and self._rng.random() < self.rate:
                kind = self._rng.choice(self.kinds)
            else:
                kind = None
            if kind:
                self.injected[kind] += 1
            return kind


class FaultInjector:
    """ASGI middleware applying a :class:`FaultPlan`."""

    def __init__(self, app, plan: FaultPlan) -> None:
        self.app = app
        self.plan = plan

    async def __call__(self, scope, receive, send) -> None:
        """Answer one ASGI call, possibly with a fault."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kind = self.plan.next_fault(scope.get("path", ""))
        if kind is None:
            await self.app(scope, receive, send)
        elif kind in ("429", "500", "503"):
            status = int(kind)
            headers = [(b"content-type", b"application/json")]
            if status in (429, 503):
                headers.append((b"retry-after", str(int(self.plan.retry_after)).encode()))
            body = (
                {"detail": f"Request was throttled. Expected available in {int(self.plan.retry_after)} seconds."}
                if status == 429
                else {
                    "error": "Service Unavailable" if status == 503 else "Internal Server Error",
                    "message": "injected fault",
                }
            )
            await _send(send, status, headers, orjson.dumps(body))
        elif kind == "slow":
            await asyncio.sleep(self.plan.slow_seconds)
            await self.app(scope, receive, send)
        elif kind == "ack_lost":

            async def swallow(message) -> None:
                return None

            await self.app(scope, receive, swallow)
            lost = orjson.dumps({"error": "Service Unavailable", "message": "injected lost acknowledgement"})
            await _send(send, 503, [(b"content-type", b"application/json")], lost)
        else:  # truncate: announce more bytes than are sent, then drop the connection
            captured: list[bytes] = []
            start: dict = {}

            async def capture(message) -> None:
                if message["type"] == "http.response.start":
                    start.update(message)
                elif message["type"] == "http.response.body":
                    captured.append(message.get("body", b""))

            await self.app(scope, receive, capture)
            full = b"".join(captured)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(full)).encode()))
            await send({"type": "http.response.start", "status": start.get("status", 200), "headers": headers})
            await send({"type": "http.response.body", "body": full[: max(1, len(full) // 2)], "more_body": True})
            raise ConnectionAbortedError("injected truncated body")


async def _send(send, status: int, headers: Iterable[tuple[bytes, bytes]], body: bytes) -> None:
    hdrs = list(headers) + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})


class ResetProxy:
    """A loopback TCP proxy that resets a share of connections (RST after the request arrives).

    Connection resets cannot be produced from inside an ASGI app, so this sits in front of the server: each new
    connection is, with probability ``rate``, read once and closed with ``SO_LINGER`` 0 (the client sees a reset);
    otherwise bytes are relayed both ways. Runs in a background thread; ``stop()`` ends it.

    Example:
        >>> import fdkit.server
        >>> with fdkit.server.start() as srv, ResetProxy(srv.base_url, rate=0.0) as proxy:
        ...     proxy.base_url.startswith("http://127.0.0.1:")
        True
    """

    def __init__(self, upstream: str, rate: float = 0.2, seed: int = 0) -> None:
        import socket
        import struct
        from urllib.parse import urlsplit

        parts = urlsplit(upstream)
        self._up = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.rate = rate
        self._rng = random.Random(seed)
        self.resets = 0
        self._linger = struct.pack("ii", 1, 0)
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(512)
        self._sock.settimeout(0.2)  # set before the thread starts: stop() may close the socket at any time after
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="fdkit-reset-proxy")
        self._thread.start()

    def _serve(self) -> None:
        import socket

        while not self._stop.is_set():
            try:
                client, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with _RNG_LOCK:
                reset = self._rng.random() < self.rate
            if reset:
                self.resets += 1
                try:
                    client.settimeout(2)
                    client.recv(65536)
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, self._linger)
                finally:
                    client.close()
                continue
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client) -> None:
        import socket

        try:
            upstream = socket.create_connection(self._up, timeout=30)
        except OSError:
            client.close()
            return

        def pipe(src, dst) -> None:
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        t = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
        t.start()
        pipe(client, upstream)
        t.join(30)
        client.close()
        upstream.close()

    def stop(self) -> None:
        """Stop accepting connections."""
        self._stop.set()
        self._sock.close()
        self._thread.join(5)

    def __enter__(self) -> ResetProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_RNG_LOCK = threading.Lock()
