"""JSON responses of fdkit's ASGI apps (the service and the webhook receiver), and the one error body.

Every error either app answers is ``{"error": str, "message": str}``, built from an :class:`~fdkit.errors.FdkitError`
by :func:`problem_response`: the server raises the same error classes the client raises.

Example:
    >>> from fdkit.errors import NotFoundError
    >>> r = problem_response(NotFoundError("Ticker X not found"))
    >>> r.status_code, r.body
    (404, b'{"error":"Not Found","message":"Ticker X not found"}')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from fdkit.errors import BadRequestError, FdkitError, http_status, without_backtrace

__all__ = ["json_response", "error_response", "problem_response", "read_capped", "PayloadTooLarge"]

_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    500: "Internal Server Error",
}


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None, default: Callable[[Any], Any] | None = None
) -> Response:
    """A JSON response encoded with orjson.

    Args:
        body: anything orjson encodes.
        status: HTTP status.
        headers: extra headers.
        default: orjson's hook for other objects (lazy records).

    Returns:
        The response.

    Example:
        >>> json_response({"ok": True}).body
        b'{"ok":true}'
    """
    return Response(
        orjson.dumps(body, default=default), status_code=status, media_type="application/json", headers=headers
    )


def error_response(status: int, error: str, message: str, headers: dict[str, str] | None = None) -> Response:
    """The service's error body ``{"error", "message"}``.

    Args:
        status: HTTP status.
        error: short title.
        message: what went wrong and what to do.
        headers: extra headers.

    Returns:
        The response.

    Example:
        >>> error_response(400, "Bad Request", "no").status_code
        400
    """
    return json_response({"error": error, "message": message}, status, headers)


def problem_response(exc: FdkitError, headers: dict[str, str] | None = None) -> Response:
    """The response for an fdkit error raised while answering: its status, title and message.

    Args:
        exc: the error (its class decides the status; ``exc.status`` wins when set).
        headers: extra headers.

    Returns:
        The ``{"error", "message"}`` response.
    """
    status = http_status(exc)
    message = exc.message if status < 500 else without_backtrace(exc.message)  # a 500 never carries a backtrace
    return error_response(status, exc.error or _TITLES.get(status, "Error"), message, headers)


class PayloadTooLarge(BadRequestError):
    """HTTP 413: a request body over the app's cap."""

    def __init__(self, message: str, **kw: Any) -> None:
        kw.setdefault("status", 413)
        kw.setdefault("error", "Payload Too Large")
        super().__init__(message, **kw)


async def read_capped(request: Request, cap: int) -> bytes:
    """A request body, refused once it passes ``cap`` bytes: checked while reading, never buffered whole.

    Args:
        request: the request.
        cap: the largest body accepted.

    Returns:
        The body.

    Raises:
        PayloadTooLarge: the declared or the received length passes the cap.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise PayloadTooLarge(f"the request body is larger than {cap:,} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise PayloadTooLarge(f"the request body is larger than {cap:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
