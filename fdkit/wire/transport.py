"""The HTTP transport's defences: a deadline for every call, a cap on every body, the key kept to its origin.

* :class:`DeadlineAdapter` reads each response body itself, chunk by chunk, so that an attempt ends at its deadline
  even when the server trickles one byte a second (``requests``' own timeout bounds one socket read, not the whole
  response), and so that a body, once decompressed, never grows past ``max_bytes`` (a gzip bomb costs at most the
  cap and one chunk).
* :class:`FdkitRetry` is urllib3's retry policy with two limits: backoff never sleeps past the call's deadline, and a
  ``Retry-After`` longer than ``max_retry_after`` is not slept at all: :class:`RetryAfterTooLong` is raised at once
  and the client turns it into ``RateLimitError(retry_after=...)``.
* :func:`deadline` sets the deadline of the calls made inside it (thread-local: urllib3 retries in the caller's
  thread).
* :class:`OriginBoundAuth` removes the API key (every casing) from a redirect that leaves the origin it was sent
  to; the client refuses a ``next_page_url`` on another origin before sending anything.

Example:
    >>> import requests
    >>> s = requests.Session(); s.mount("http://", DeadlineAdapter(max_bytes=1_000))
    >>> isinstance(s.get_adapter("http://x"), DeadlineAdapter)
    True
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

__all__ = [
    "DeadlineAdapter",
    "FdkitRetry",
    "OriginBoundAuth",
    "RetryAfterTooLong",
    "ResponseTooLarge",
    "DeadlineExceeded",
    "deadline",
    "remaining",
    "same_origin",
    "AUTH_HEADER_NAMES",
]

#: header names that carry credentials (compared case-insensitively)
AUTH_HEADER_NAMES = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})
_CHUNK = 64 * 1024
_STATE = threading.local()


class DeadlineExceeded(Exception):  # noqa: N818 - not an OSError, so requests and urllib3 let it through
    """The call's total deadline passed: no further attempt or wait is made."""


class ResponseTooLarge(requests.exceptions.RequestException):
    """A response body grew past the configured cap while it was read (and decompressed)."""


class RetryAfterTooLong(Exception):  # noqa: N818 - not an OSError, so requests and urllib3 let it through
    """The service asked to wait longer than the client is willing to sleep.

    Attributes:
        retry_after: the seconds the service asked for.
        status: the HTTP status that carried it (429 or 503).
    """

    def __init__(self, retry_after: float, status: int) -> None:
        super().__init__(f"the service asked to retry after {retry_after:g} s")
        self.retry_after = retry_after
        self.status = status


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[float | None]:
    """Give the calls made inside this block (in this thread) a total deadline.

    Args:
        seconds: from now; ``None`` for no deadline.

    Yields:
        The absolute deadline (``time.monotonic()`` based) or ``None``.

    Example:
        >>> with deadline(5) as at:
        ...     0 < remaining() <= 5
        True
    """
    previous = getattr(_STATE, "deadline", None)
    at = None if seconds is None else time.monotonic() + seconds
    if previous is not None and at is not None:
        at = min(at, previous)
    _STATE.deadline = at if at is not None else previous
    try:
        yield _STATE.deadline
    finally:
        _STATE.deadline = previous


def remaining() -> float | None:
    """Seconds left before the current deadline (``None``: no deadline; never negative).

    Example:
        >>> remaining() is None
        True
    """
    at = getattr(_STATE, "deadline", None)
    return None if at is None else max(0.0, at - time.monotonic())


def same_origin(a: str, b: str) -> bool:
    """Whether two URLs share scheme, host and port (the default port made explicit).

    Example:
        >>> same_origin("https://api.x/prices?cursor=1", "https://api.x:443/"), same_origin("https://api.x", "https://evil.x")
        (True, False)
    """
    pa, pb = urlsplit(a), urlsplit(b)
    default = {"http": 80, "https": 443}

    def key(p: Any) -> tuple[str, str, int | None]:
        return p.scheme.lower(), (p.hostname or "").lower(), p.port or default.get(p.scheme.lower())

    return key(pa) == key(pb)


class FdkitRetry(Retry):
    """urllib3's :class:`~urllib3.util.retry.Retry`, bounded by the call's deadline and a ``Retry-After`` cap.

    Args:
        max_retry_after: the longest ``Retry-After`` (seconds) worth sleeping; a longer one raises
            :class:`RetryAfterTooLong`.
        **kwargs: :class:`~urllib3.util.retry.Retry`'s arguments.
    """

    def __init__(self, *args: Any, max_retry_after: float = 60.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_retry_after = max_retry_after

    def new(self, **kw: Any) -> FdkitRetry:  # noqa: D102 - urllib3 copies policies with new()
        out = super().new(**kw)
        out.max_retry_after = self.max_retry_after
        return out

    def sleep_for_retry(self, response: Any = None) -> bool:  # noqa: D102
        retry_after = _retry_after_of(response)
        if retry_after is None:
            return False
        if retry_after > self.max_retry_after:
            raise RetryAfterTooLong(retry_after, getattr(response, "status", 429))
        left = remaining()
        if left is not None and retry_after > left:
            raise RetryAfterTooLong(retry_after, getattr(response, "status", 429))
        time.sleep(retry_after)
        return True

    def _sleep_backoff(self) -> None:
        backoff = self.get_backoff_time()
        left = remaining()
        if left is not None:
            if left <= 0:
                raise DeadlineExceeded("the call's deadline passed while retrying")
            backoff = min(backoff, left)
        if backoff > 0:
            time.sleep(backoff)


class DeadlineAdapter(HTTPAdapter):
    """An :class:`~requests.adapters.HTTPAdapter` that reads bodies itself: a whole-response deadline and a size cap.

    Args:
        max_bytes: the largest decompressed body accepted (``None``: no cap).
        **kwargs: :class:`~requests.adapters.HTTPAdapter`'s arguments.
    """

    def __init__(self, *args: Any, max_bytes: int | None = 256 * 2**20, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> requests.Response:  # fmt: skip
        """Send, then read the body under the attempt's deadline (its ``timeout``) and the call's deadline."""
        budget = _seconds(timeout)  # the attempt's own time
        left = remaining()  # the whole call's
        if left is not None:
            if left <= 0:
                raise DeadlineExceeded("the call's deadline passed before the request was sent")
            budget = left if budget is None else min(budget, left)
            timeout = budget
        start = time.monotonic()
        response = super().send(request, stream=True, timeout=timeout, verify=verify, cert=cert, proxies=proxies)
        if stream:
            return response
        ends = None if budget is None else start + budget
        response._content = self._read(response, ends)
        response._content_consumed = True  # type: ignore[attr-defined]
        return response

    def _read(self, response: requests.Response, ends: float | None) -> bytes:
        raw = response.raw
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                if ends is not None and time.monotonic() > ends:
                    left = remaining()
                    if left is not None and left <= 0:
                        raise DeadlineExceeded(f"the call's deadline passed while reading {response.url}")
                    raise requests.exceptions.ReadTimeout(f"the response was not complete in time ({response.url})")
                chunk = raw.read1(_CHUNK, decode_content=True)
                if not chunk:
                    break
                size += len(chunk)
                if self.max_bytes is not None and size > self.max_bytes:
                    raise ResponseTooLarge(
                        f"the response body is larger than the cap of {self.max_bytes:,} bytes "
                        f"(max_response_bytes); it was not read further"
                    )
                chunks.append(chunk)
        except (DeadlineExceeded, ResponseTooLarge, requests.exceptions.ReadTimeout):
            raw.close()
            raise
        except Exception as exc:  # urllib3's protocol, decode and read-timeout errors
            raw.close()
            raise _as_requests_error(exc) from exc
        finally:
            response.raw.release_conn()
        return b"".join(chunks)


def _retry_after_of(response: Any) -> float | None:
    """The ``Retry-After`` a response asks for, in seconds, as sent (urllib3 caps it at six hours)."""
    if response is None:
        return None
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _seconds(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, tuple):
        parts = [t for t in timeout if t is not None]
        return float(sum(parts)) if parts else None
    return float(timeout)


def _as_requests_error(exc: Exception) -> requests.exceptions.RequestException:
    from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError

    if isinstance(exc, ReadTimeoutError):
        return requests.exceptions.ReadTimeout(str(exc))
    if isinstance(exc, DecodeError):
        return requests.exceptions.ContentDecodingError(str(exc))
    if isinstance(exc, ProtocolError):
        return requests.exceptions.ChunkedEncodingError(str(exc))
    if isinstance(exc, requests.exceptions.RequestException):
        return exc
    return requests.exceptions.ConnectionError(str(exc))


class OriginBoundAuth:
    """A :class:`requests.Session` mixin: a redirect to another origin carries no credential header."""

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        """Drop every credential header (any casing) when the redirect leaves the original request's origin."""
        super().rebuild_auth(prepared_request, response)  # type: ignore[misc]
        if not same_origin(response.request.url or "", prepared_request.url or ""):
            for name in list(prepared_request.headers):
                if name.lower() in AUTH_HEADER_NAMES:
                    del prepared_request.headers[name]


class OriginBoundSession(OriginBoundAuth, requests.Session):
    """A plain session (no cache) whose redirects keep credentials to their origin."""
