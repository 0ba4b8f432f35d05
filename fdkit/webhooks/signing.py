"""Webhook signatures (ours; the service's spec shows none): ``X-FDS-Signature: t=<unix>,v1=<hex>``.

``v1`` is HMAC-SHA256 over ``"<t>.<raw body>"`` with the destination's secret. Receivers reject a bad signature
and a timestamp older (or newer) than a tolerance, which stops replays of captured deliveries.

Example:
    >>> header = sign(b"whsec", b'{"id": 1}', timestamp=1700000000)
    >>> verify(b"whsec", b'{"id": 1}', header, now=1700000010)
    1700000000
"""

from __future__ import annotations

import hashlib
import hmac
import time

__all__ = ["HEADER", "sign", "verify", "SignatureError", "DEFAULT_TOLERANCE"]

HEADER = "X-FDS-Signature"
DEFAULT_TOLERANCE = 300


class SignatureError(ValueError):
    """The signature header is missing, malformed, stale or does not match."""


def _secret(secret: str | bytes) -> bytes:
    return secret.encode() if isinstance(secret, str) else secret


def sign(secret: str | bytes, body: bytes, timestamp: int | None = None) -> str:
    """Compute the signature header value for a body.

    Args:
        secret: the destination's secret.
        body: the exact bytes sent.
        timestamp: unix seconds (now by default).

    Returns:
        ``t=<unix>,v1=<hex>``.
    """
    t = int(time.time() if timestamp is None else timestamp)
    mac = hmac.new(_secret(secret), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def check_header(header: str | None, *, tolerance: int = DEFAULT_TOLERANCE, now: float | None = None) -> int:
    """What can be checked before the body is read: the header is there, well formed and fresh.

    Args:
        header: the ``X-FDS-Signature`` value.
        tolerance: seconds a timestamp may differ from now.
        now: the current time (tests).

    Returns:
        The signed timestamp.

    Raises:
        SignatureError: saying what is wrong.

    Example:
        >>> check_header(sign("s", b"{}"), tolerance=60) > 0
        True
    """
    if not header:
        raise SignatureError(f"missing {HEADER} header")
    pairs = [p.split("=", 1) for p in header.split(",") if "=" in p]
    try:
        t = int(dict(pairs)["t"])
    except (KeyError, ValueError):
        raise SignatureError("malformed signature header: no timestamp") from None
    if not [v for k, v in pairs if k == "v1"]:
        raise SignatureError("malformed signature header: no v1 signature")
    current = time.time() if now is None else now
    if abs(current - t) > tolerance:
        raise SignatureError(f"stale signature: timestamp {t} is more than {tolerance}s from now")
    return t


def verify(
    secret: str | bytes,
    body: bytes,
    header: str | None,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> int:
    """Check a signature header.

    Args:
        secret: the shared secret.
        body: the raw request body.
        header: the ``X-FDS-Signature`` value.
        tolerance: seconds a timestamp may differ from now.
        now: the current time (tests).

    Returns:
        The signed timestamp.

    Raises:
        SignatureError: saying what is wrong.
    """
    t = check_header(header, tolerance=tolerance, now=now)
    given = [v for k, v in (p.split("=", 1) for p in str(header).split(",") if "=" in p) if k == "v1"]
    expected = hmac.new(_secret(secret), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, g) for g in given):
        raise SignatureError("signature does not match the body")
    return t
