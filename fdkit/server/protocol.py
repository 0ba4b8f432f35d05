"""uvicorn's HTTP protocol with a header-read timeout.

A connection that does not complete a request's headers in time is closed.

uvicorn closes a keep-alive connection that stays idle *after* a response (``timeout_keep_alive``), but a
connection that never sends a whole request head (opened and left idle, half-open, or a slow trickle of header
bytes) is kept for ever: 1,000 of them held 1,000 sockets and their buffers (issue 29, item 10). The protocols here
arm a timer when a connection is made and after each response, disarm it when a request's headers are complete, and
close the connection when it fires with no request in progress.

``fdkit serve`` and :func:`fdkit.server.serve_app` use :data:`HTTP_PROTOCOL` (an import string, so uvicorn's worker
processes load it too); the timeout is :data:`HEADER_TIMEOUT` seconds, or ``FDKIT_HEADER_TIMEOUT``.

Example:
    >>> issubclass(protocol_class(2.0), HeaderTimeout), protocol_class(2.0).header_timeout
    (True, 2.0)
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

__all__ = ["HEADER_TIMEOUT", "HTTP_PROTOCOL", "HeaderTimeout", "HttpProtocol", "protocol_class"]

#: seconds a connection has to send a whole request head (default of ``fdkit serve``)
HEADER_TIMEOUT = float(os.environ.get("FDKIT_HEADER_TIMEOUT") or 10.0)

try:  # uvicorn's choice with "auto": httptools where installed, else h11
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
except ImportError:  # pragma: no cover - httptools is a dependency of uvicorn[standard]
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base  # type: ignore[assignment]


class HeaderTimeout:
    """The timer of the header-read timeout, mixed into one of uvicorn's HTTP protocols."""

    header_timeout: float = HEADER_TIMEOUT
    _header_timer: asyncio.TimerHandle | None = None
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.cycle is None or self.cycle.response_complete:  # no request in progress: close the connection
            self.transport.close()


class HttpProtocol(HeaderTimeout, _Base):
    """uvicorn's HTTP protocol (httptools, else h11) closing connections whose request head is late."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Accept the connection and give it :attr:`header_timeout` seconds to send a request head."""
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        """A request head arrived (httptools): the timer stops."""
        self._disarm()
        super().on_headers_complete()

    def handle_events(self) -> None:
        """A request head arrived (h11): the timer stops."""
        super().handle_events()  # type: ignore[misc]
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()

    def on_response_complete(self) -> None:
        """The answer is sent: the next request head has :attr:`header_timeout` seconds too."""
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection ended: no timer is left behind."""
        self._disarm()
        super().connection_lost(exc)


#: what ``uvicorn.Config(http=...)`` is given (an import string: worker processes import it themselves)
HTTP_PROTOCOL = "fdkit.server.protocol:HttpProtocol"


def protocol_class(header_timeout: float) -> type[HttpProtocol]:
    """:class:`HttpProtocol` with another header-read timeout (for an in-process server).

    Args:
        header_timeout: seconds a connection has to send a request head.

    Returns:
        A subclass of :class:`HttpProtocol`.
    """
    return type("HttpProtocol", (HttpProtocol,), {"header_timeout": float(header_timeout)})
