"""The fdkit error tree.

Every failure the client can report is an :class:`FdkitError`. HTTP statuses map to one class each
(:func:`error_for_status`); each error carries the HTTP status, the server's ``error`` and ``message``
fields and the request path. None of them ever holds the API key: messages are built from the server's
body and the URL path only, and :func:`redact` scrubs any key that a caller registered with
:func:`register_secret` from every message as a second line of defence.

Example:
    >>> from fdkit.errors import NotFoundError, FdkitError
    >>> err = NotFoundError("Ticker XXXX not found", status=404, error="Not Found", path="/prices")
    >>> isinstance(err, LookupError) and isinstance(err, FdkitError)
    True
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterable
from typing import Any

__all__ = [
    "without_backtrace",
    "FdkitError",
    "TransportError",
    "RateLimitError",
    "ServerError",
    "AuthenticationError",
    "PaymentRequiredError",
    "NotFoundError",
    "BadRequestError",
    "InvalidCursorError",
    "UnknownNameError",
    "CacheMissError",
    "CacheError",
    "PaginationError",
    "MissingPayloadError",
    "ConfigurationError",
    "DateRangeWarning",
    "StaleDataWarning",
    "LakeError",
    "error_for_status",
    "http_status",
    "register_secret",
    "redact",
    "suggest",
    "TruncatedWarning",
    "NarrowTypeWarning",
    "SkippedWarning",
    "user_stacklevel",
    "warn_user",
]

_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()


def register_secret(secret: str | None) -> None:
    """Remember a secret (an API key) so that :func:`redact` removes it from any text.

    Args:
        secret: the value to scrub; ``None`` or very short values are ignored.

    Example:
        >>> register_secret("sk-canary-123456")
        >>> redact("key sk-canary-123456 leaked")
        'key *** leaked'
    """
    if secret and len(secret) >= 6:
        with _SECRETS_LOCK:
            _SECRETS.add(secret)


def redact(text: str) -> str:
    """Replace every registered secret in ``text`` by ``***``.

    Args:
        text: any string about to be shown to a user or written to a log.

    Returns:
        The text with registered secrets removed.

    Example:
        >>> redact("nothing secret here")
        'nothing secret here'
    """
    with _SECRETS_LOCK:
        secrets = tuple(_SECRETS)
    for s in secrets:
        if s in text:
            text = text.replace(s, "***")
    return text


def without_backtrace(text: str) -> str:
    r"""The first line of an error's text, without the backtrace a native library appends.

    delta-rs, with ``RUST_BACKTRACE`` set, adds ``Stack backtrace:`` and numbered frames after its message.

    Args:
        text: an exception's text.

    Returns:
        Its first non-empty line, a ``Stack backtrace:`` in it and what follows dropped.

    Example:
        >>> without_backtrace("Json error: truncated\n   0: <unknown>\n   1: start_thread")
        'Json error: truncated'
    """
    lines = [line for line in str(text).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first.split("Stack backtrace:", 1)[0].rstrip()


def suggest(wrong: str, valid: Iterable[str], *, most: int = 12) -> str:
    """Name the valid values closest to a wrong one first, then the rest, for a one-line error message.

    Args:
        wrong: what the user gave.
        valid: every accepted value.
        most: how many names to show at most.

    Returns:
        ``"did you mean 'x'? valid: x, y, ..."`` (``"valid: ..."`` when nothing is close).

    Example:
        >>> suggest("revnue", ["accounts_payable", "revenue", "revenue_growth", "ebit"], most=3)
        "did you mean 'revenue'? valid: revenue, revenue_growth, accounts_payable, ... (4 in all)"
    """
    names = sorted(set(valid))
    close = difflib.get_close_matches(wrong, names, n=most, cutoff=0.6)
    lowered = wrong.lower()
    close += [n for n in names if lowered and lowered in n.lower() and n not in close]
    ordered = close + [n for n in names if n not in close]
    shown = ", ".join(ordered[:most]) + (f", ... ({len(ordered)} in all)" if len(ordered) > most else "")
    return (f"did you mean {close[0]!r}? " if close else "") + f"valid: {shown}"


#: the service's own words for a ticker it has no record of (both contracts, and the public service): the one 404
#: the client keeps as an answer and gives a next step (the listing of the endpoint's tickers)
TICKER_NOT_FOUND = re.compile(r"^Ticker \S+ not found$")


class FdkitError(Exception):
    """Base class of every fdkit error.

    Attributes:
        status: HTTP status code, or ``None`` when no response was received.
        error: the server's short ``error`` field (e.g. ``"Not Found"``).
        message: the server's human-readable ``message`` (or fdkit's own).
        path: the request path (never the query string's secrets, never the key).
        next_step: what to do about it, where fdkit knows (said after the message), e.g. the call that lists
            the tickers a service has after a ``Ticker X not found``.

    Example:
        >>> str(FdkitError("boom", status=500, error="Internal", path="/prices"))
        'boom (HTTP 500 Internal, /prices)'
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error: str | None = None,
        path: str | None = None,
        body: Any = None,
    ) -> None:
        self.message = redact(str(message))
        self.status = status
        self.error = redact(error) if error else error
        self.path = redact(path) if path else path
        self.body = body
        self.next_step: str | None = None
        super().__init__(self.message)

    def __str__(self) -> str:
        parts = []
        if self.status is not None:
            parts.append(f"HTTP {self.status}" + (f" {self.error}" if self.error else ""))
        elif self.error:
            parts.append(self.error)
        if self.path:
            parts.append(self.path)
        said = f"{self.message} ({', '.join(parts)})" if parts else self.message
        step = getattr(self, "next_step", None)  # (an error pickled by an older fdkit has none)
        return f"{said}; {step}" if step else said

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r}, path={self.path!r})"

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across process pools, with every attribute
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))


def _rebuild(cls: type[FdkitError], message: str, state: dict[str, Any]) -> FdkitError:
    err = Exception.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class TransportError(FdkitError):
    """The request did not produce a usable answer (network failure, 5xx, throttling)."""


class RateLimitError(TransportError):
    """HTTP 429 after retries were exhausted.

    Attributes:
        retry_after: seconds the server asked to wait, when it said so.
    """

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class ServerError(TransportError):
    """HTTP 5xx after retries were exhausted."""


class AuthenticationError(FdkitError):
    """HTTP 401: the API key is missing or invalid."""


class PaymentRequiredError(FdkitError):
    """HTTP 402: the key's plan does not include this endpoint (or credits ran out)."""


class NotFoundError(FdkitError, LookupError):
    """HTTP 404: unknown ticker or no such record."""


class BadRequestError(FdkitError, ValueError):
    """HTTP 400 or a parameter fdkit rejected before sending: the request is invalid."""


class UnknownNameError(BadRequestError, KeyError):
    """A dataset, endpoint or listing name fdkit does not know (a ``ValueError`` and a ``KeyError``)."""


class InvalidCursorError(BadRequestError):
    """HTTP 400 for a pagination cursor the server no longer accepts."""


class CacheMissError(FdkitError):
    """Offline mode: the response is not in the on-disk cache."""


class CacheError(FdkitError):
    """A cache entry failed its checksum (or the cache file is unreadable) and offline mode cannot refetch it."""


class PaginationError(TransportError):
    """A page walk that would not end, or would send the key elsewhere.

    An empty page with a new cursor, a cursor seen before, more pages than ``limit`` can need, or a
    ``next_page_url`` on another origin than the service's.
    """


class MissingPayloadError(FdkitError):
    """A 2xx answer without the key its endpoint keeps its records under (``{"data": [...]}`` for ``prices``).

    Never read as "no records": the answer is not the one the endpoint documents (another service at the base URL,
    a proxy's page, a changed API). The message names the missing key and the keys the answer has.

    Attributes:
        key: the missing key (``"prices"``).
        keys: the top-level keys the answer had.

    Example:
        >>> err = MissingPayloadError.of("/prices", "prices", {"data": []})
        >>> err.key, err.keys
        ('prices', ['data'])
        >>> print(err.message)
        the answer of /prices has no 'prices' key (its keys: data); is the base URL a Financial Data Service?
    """

    def __init__(self, message: str, *, key: str = "", keys: list[str] | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.key = key
        self.keys = list(keys or [])

    @classmethod
    def of(cls, path: str, key: str, body: Any) -> MissingPayloadError:
        """The error for ``body``, the answer of ``path``, that lacks ``key``.

        Args:
            path: the request path.
            key: the endpoint's response key.
            body: the decoded answer.

        Returns:
            The error, naming the key and the answer's keys.
        """
        keys = [str(k) for k in body] if isinstance(body, dict) else []
        has = ", ".join(keys[:12]) + (", ..." if len(keys) > 12 else "") if keys else "none"
        return cls(
            f"the answer of {path} has no {key!r} key (its keys: {has}); is the base URL a Financial Data Service?",
            key=key,
            keys=keys,
            error="Missing payload",
            path=path,
        )


class ConfigurationError(FdkitError, ValueError):
    """A setting fdkit cannot use (a base URL without ``http://`` or ``https://``), named with where it came from."""


class DateRangeWarning(UserWarning):
    """Dates asked for lie outside a ticker's data: the frame is empty there, and the warning says where the data is."""


class StaleDataWarning(UserWarning):
    """An answer came from the cache after it expired (offline mode, or the service failed): its age is named."""


class TruncatedWarning(UserWarning):
    """A call without ``limit`` returned its endpoint's default number of records while more exist.

    The message says how to get the rest: ``limit=None`` for everything, or a larger ``limit``.
    """


class SkippedWarning(UserWarning):
    """A ticker of a list was skipped under ``errors="warn"``.

    The frame holds the others; ``df.attrs["missing"]`` names it with why (``errors="ignore"`` skips quietly).
    """


class NarrowTypeWarning(UserWarning):
    """A field's values do not fit the type fdkit declares for it: the column keeps them as text.

    For example ``FY2026`` where a date is declared: never a crash, never a lost value.
    """


class LakeError(FdkitError):
    """A Parquet lake to serve or read is missing, empty or unreadable (names the path and ``FDKIT_DATA``)."""


_BY_STATUS: dict[int, type[FdkitError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: PaymentRequiredError,
    404: NotFoundError,
    429: RateLimitError,
}


def error_for_status(
    status: int,
    body: Any,
    path: str,
    *,
    retry_after: float | None = None,
) -> FdkitError:
    """Build the error for a non-2xx response.

    Args:
        status: HTTP status code.
        body: the decoded JSON body (``{"error", "message"}``, ``{"detail"}`` for 429) or text.
        path: the URL path of the request.
        retry_after: the parsed ``Retry-After`` header, for 429.

    Returns:
        An instance of the matching :class:`FdkitError` subclass.

    Example:
        >>> e = error_for_status(404, {"error": "Not Found", "message": "Ticker X not found"}, "/prices")
        >>> type(e).__name__, e.message
        ('NotFoundError', 'Ticker X not found')
    """
    error: str | None = None
    message: str | None = None
    if isinstance(body, dict):
        error = _as_text(body.get("error"))
        message = _as_text(body.get("message") or body.get("detail"))
    elif isinstance(body, str) and body.strip():
        message = body.strip()[:300]
    message = message or error or f"HTTP {status}"
    if status == 400 and _mentions_cursor(error, message):
        return InvalidCursorError(message, status=status, error=error, path=path, body=body)
    if status == 429:
        return RateLimitError(message, status=status, error=error, path=path, retry_after=retry_after)
    if status >= 500:
        return ServerError(message, status=status, error=error, path=path, body=body)
    cls = _BY_STATUS.get(status, FdkitError)
    return cls(message, status=status, error=error, path=path, body=body)


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _mentions_cursor(error: str | None, message: str | None) -> bool:
    text = f"{error or ''} {message or ''}".lower()
    return "cursor" in text


def http_status(exc: FdkitError) -> int:
    """The HTTP status a service answers for ``exc`` (its ``status`` when set, else its class's).

    Args:
        exc: an fdkit error raised while answering a request.

    Returns:
        400, 401, 402, 404, 429 or 500.

    Example:
        >>> http_status(NotFoundError("Ticker X not found")), http_status(BadRequestError("bad"))
        (404, 400)
    """
    if exc.status is not None:
        return exc.status
    for status, cls in _BY_STATUS.items():
        if isinstance(exc, cls):
            return status
    return 500


#: the folder of the fdkit package: frames whose file is under it are fdkit's own, never the user's line
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel(skip: int = 0) -> int:
    """The ``stacklevel`` that makes a warning point at the first line outside the fdkit package (the user's).

    Python 3.12's ``warnings.warn(skip_file_prefixes=...)`` does this; fdkit supports 3.11, so the frames are
    walked here, once for every warning of the package. In a worker thread with no user frame the outermost
    frame is named.

    Args:
        skip: frames between the caller and ``warnings.warn`` (0 when the caller itself calls it).

    Returns:
        The level for ``warnings.warn`` in the caller (1 is the caller's own line).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warnings.warn("here", stacklevel=user_stacklevel())
        >>> caught[0].filename.startswith(_PACKAGE_DIR)
        False
    """
    frame = sys._getframe(1 + skip)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` pointing at the user's line (the first frame outside fdkit), not at fdkit's own.

    Args:
        message: the warning's text (it says what to do, in Python and on the command line where both exist).
        category: the warning class.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_user("fdkit: something to know", TruncatedWarning)
        >>> caught[0].category.__name__, caught[0].filename.startswith(_PACKAGE_DIR)
        ('TruncatedWarning', False)
    """
    warnings.warn(message, category, stacklevel=user_stacklevel(skip=1) + 1)
