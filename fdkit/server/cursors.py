"""Opaque, HMAC-signed pagination cursors bound to the endpoint and the original query.

A cursor is ``base64url(json payload) + "." + base64url(hmac-sha256)``. The payload holds the endpoint name,
the canonical original query, the offset of the next page and the time it was issued. A cursor that was
modified, truncated, signed by another server, issued for another endpoint or too old is rejected with a
:class:`CursorError`, which the app turns into a 400 telling the client to reissue the original request.

Example:
    >>> signer = CursorSigner(b"k" * 32)
    >>> c = signer.issue("prices", {"ticker": "AAPL"}, 100)
    >>> signer.open(c, "prices")["offset"]
    100
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import time
from typing import Any

import orjson

from fdkit.errors import InvalidCursorError

__all__ = ["CursorSigner", "CursorError", "REISSUE"]

REISSUE = "Reissue the original request without a cursor to start again from the first page."
#: how far in the future a cursor's issue time may lie (clocks of several workers differ a little): later, or not
#: a finite number, and the cursor would never expire, so it is refused
MAX_CLOCK_SKEW = 300.0


class CursorError(InvalidCursorError):
    """The cursor cannot be used (tampered, foreign, stale or garbage): HTTP 400 titled ``Invalid cursor``."""

    def __init__(self, message: str, error: str = "Invalid cursor", **kw: Any) -> None:
        super().__init__(message, error=error, **kw)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorSigner:
    """Issues and verifies cursors with one server secret.

    Args:
        secret: HMAC key (random per server unless given).
        max_age: seconds a cursor stays valid.
    """

    def __init__(self, secret: bytes, max_age: float = 24 * 3600) -> None:
        self._secret = secret
        self.max_age = max_age

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def issue(self, endpoint: str, query: dict[str, Any], offset: int) -> str:
        """Issue the cursor of the page starting at ``offset``.

        Args:
            endpoint: catalog name of the endpoint.
            query: the validated original query (JSON-serialisable).
            offset: index of the first record of the next page.

        Returns:
            The opaque cursor string.
        """
        payload = orjson.dumps(
            {"e": endpoint, "q": query, "o": offset, "t": int(time.time())}, option=orjson.OPT_SORT_KEYS
        )
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def open(self, cursor: str, endpoint: str) -> dict[str, Any]:
        """Verify a cursor and return ``{"query", "offset"}``.

        Args:
            cursor: the string from ``next_page_url``.
            endpoint: the endpoint it is presented to.

        Returns:
            The original query and the offset.

        Raises:
            CursorError: with a message saying what is wrong and to reissue the request.
        """
        try:
            body, sig = cursor.split(".", 1)
            payload = _unb64(body)
            given = _unb64(sig)
        except (ValueError, TypeError) as exc:
            raise CursorError(f"The cursor is malformed. {REISSUE}") from exc
        if not hmac.compare_digest(given, self._sign(payload)):
            raise CursorError(f"The cursor is invalid (modified, truncated or issued by another server). {REISSUE}")
        try:
            data = orjson.loads(payload)
            e, q, o, t = data["e"], data["q"], int(data["o"]), float(data["t"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise CursorError(f"The cursor is malformed. {REISSUE}") from exc
        if e != endpoint:
            raise CursorError(f"The cursor was issued for another endpoint. {REISSUE}")
        now = time.time()
        if not math.isfinite(t) or t > now + MAX_CLOCK_SKEW:  # (a NaN compares false: it would never expire)
            raise CursorError(f"The cursor's issue time is not a time it could have been issued at. {REISSUE}")
        if now - t > self.max_age:
            raise CursorError(f"The cursor has expired. {REISSUE}")
        if o < 0 or not isinstance(q, dict):
            raise CursorError(f"The cursor is malformed. {REISSUE}")
        return {"query": q, "offset": o}
