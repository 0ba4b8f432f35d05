"""The HTTP transport's defences: a deadline for every call, a cap on every body, the key kept to its origin.

* :class:`DeadlineAdapter` reads each response body itself, chunk by chunk, so that an attempt ends at its deadline
  even when the server trickles one byte a second (``requests``' own timeout bounds one socket read, not the whole
  response), and so that a body, once decompressed, never grows past ``max_bytes`` (a gzip bomb costs at most the
  cap and one chunk).
* :class:`FdkitRetry` is urllib3's retry policy with two limits: backoff never sleeps past the call's deadline, and a
  ``Retry-After`` longer than ``max_retry_after`` is not slept at all: :class:`RetryAfterTooLong` is raised at once
  and the client turns it into ``RateLimitError(retry_after=...)``.
* The status line and headers are watched too: a server that trickles them (a header line a second, each socket
  read well inside its timeout) has its connection shut when the call's deadline passes (one timer per request,
  cancelled as soon as the headers are in), and the call raises :class:`DeadlineExceeded`.
* :func:`deadline` sets the deadline of the calls made inside it (thread-local: urllib3 retries in the caller's
  thread). Every attempt's connect and read timeouts are cut to what is left of it (:class:`DeadlineTimeout`), and
  so is every socket read of a body: no layer waits past the call's deadline.
* :func:`retry_budget` makes one retry policy of the whole call: the attempts urllib3 makes (connection errors,
  read errors, retried statuses) and the ones the client makes again for a body that arrived cut short, too slowly
  or broken (:class:`BodyReadError`) spend the same :class:`~urllib3.util.retry.Retry` (its ``total`` and
  ``read`` counts, its backoff), through :meth:`RetryBudget.spend`.
* A refused connection is not retried (:meth:`FdkitRetry.increment`): nothing listens there, and waiting through
  the backoff only delays the one-line error.
* :func:`call_scope` bounds a whole client call until the service first answers: the calls made inside it (in
  this thread, and in the worker threads that enter it with :func:`within`) wait at most its deadline in all
  before any answer arrives, so a probe that precedes a call's first request (a service that never answers, or
  trickles) spends the call's time, never time of its own. Once an answer came, each request has its own deadline.
* :func:`plain_reason` says why a connection or a body failed in fdkit's own words (reset, closed, cut short, timed
  out), never urllib3's wrapped exception text.
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
import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError, ReadTimeoutError
from urllib3.util.retry import Retry
from urllib3.util.timeout import Timeout

__all__ = [
    "BodyReadError",
    "DeadlineTimeout",
    "RetryBudget",
    "retry_budget",
    "DeadlineAdapter",
    "FdkitRetry",
    "OriginBoundAuth",
    "RetryAfterTooLong",
    "ResponseTooLarge",
    "DeadlineExceeded",
    "deadline",
    "remaining",
    "CallScope",
    "call_scope",
    "current_scope",
    "within",
    "plain_reason",
    "same_origin",
    "AUTH_HEADER_NAMES",
]

#: header names that carry credentials (compared case-insensitively)
AUTH_HEADER_NAMES = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})
_CHUNK = 64 * 1024
_STATE = threading.local()


class DeadlineExceeded(Exception):  # noqa: N818 - not an OSError, so requests and urllib3 let it through
    """The call's total deadline passed: no further attempt or wait is made.

    Attributes:
        last: what made the last attempt of this request fail before the deadline passed (a reset, a timeout, a
            retried status), or ``None``; :func:`plain_reason` says it in words.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.last: BaseException | None = getattr(_STATE, "last_fault", None)


class ResponseTooLarge(requests.exceptions.RequestException):
    """A response body grew past the configured cap while it was read (and decompressed)."""


class BodyReadError(requests.exceptions.RequestException):
    """The headers of a response arrived but its body did not, whole and in time: worth one more attempt.

    Attributes:
        timed_out: the body was too slow (the attempt's time ran out), rather than cut short.
    """

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


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
    scope = getattr(_STATE, "scope", None)
    for bound in (previous, scope.at if scope is not None and not scope.answered else None):
        if bound is not None:
            at = bound if at is None else min(at, bound)
    _STATE.deadline = at
    try:
        yield _STATE.deadline
    finally:
        _STATE.deadline = previous


class CallScope:
    """One client call's deadline for everything it waits on until the service first answers.

    Attributes:
        at: the absolute deadline (``time.monotonic()`` based).
        answered: the service answered (headers of any status arrived): each request has its own deadline from now.

    Example:
        >>> scope = CallScope(5.0)
        >>> scope.answered, scope.at > 0
        (False, True)
    """

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.answered = False


@contextlib.contextmanager
def call_scope(seconds: float | None) -> Iterator[CallScope | None]:
    """Bound the calls made inside this block (in this thread) by one deadline until the service first answers.

    A scope already open in this thread is kept (a compound call is one call); ``None`` opens none.

    Args:
        seconds: from now.

    Yields:
        The scope in force (``None``: none).

    Example:
        >>> with call_scope(2) as scope, deadline(30):
        ...     remaining() <= 2
        True
    """
    current = getattr(_STATE, "scope", None)
    if current is not None or seconds is None:
        yield current
        return
    scope = CallScope(seconds)
    _STATE.scope = scope
    try:
        yield scope
    finally:
        _STATE.scope = None


def current_scope() -> CallScope | None:
    """The scope of the call this thread is making (hand it to worker threads with :func:`within`).

    Example:
        >>> current_scope() is None
        True
    """
    return getattr(_STATE, "scope", None)


@contextlib.contextmanager
def within(scope: CallScope | None) -> Iterator[None]:
    """Make a worker thread's requests part of the caller's call (its :class:`CallScope`).

    Args:
        scope: what :func:`current_scope` said in the calling thread.

    Example:
        >>> with within(CallScope(1)):
        ...     current_scope() is not None
        True
    """
    previous = getattr(_STATE, "scope", None)
    _STATE.scope = scope if previous is None else previous
    try:
        yield
    finally:
        _STATE.scope = previous


def remaining() -> float | None:
    """Seconds left before the current deadline (``None``: no deadline; never negative).

    Example:
        >>> remaining() is None
        True
    """
    at = getattr(_STATE, "deadline", None)
    return None if at is None else max(0.0, at - time.monotonic())


class DeadlineTimeout(Timeout):
    """urllib3's :class:`~urllib3.util.timeout.Timeout`, cut to what is left of the call's deadline when it is read.

    urllib3 reads ``connect_timeout`` before it connects and ``read_timeout`` before it waits for the headers, on
    every attempt (retries included); both are then at most :func:`remaining`. Once the deadline has passed,
    :class:`DeadlineExceeded` is raised instead of starting another wait. The start of each attempt is kept
    (thread-local) so that the body of the attempt that answered gets that attempt's own time.

    Example:
        >>> with deadline(0.5):
        ...     DeadlineTimeout(connect=30, read=30).clone().connect_timeout <= 0.5
        True
    """

    def clone(self) -> DeadlineTimeout:  # noqa: D102 - urllib3 clones the pool's timeout for every attempt
        return DeadlineTimeout(connect=self._connect, read=self._read, total=self.total)

    def start_connect(self) -> float:  # noqa: D102
        started = super().start_connect()
        _STATE.attempt_started = started
        return started

    @property
    def connect_timeout(self) -> Any:  # noqa: D102
        return _cut(super().connect_timeout)

    @property
    def read_timeout(self) -> Any:  # noqa: D102
        return _cut(super().read_timeout)


def _cut(seconds: Any) -> Any:
    left = remaining()
    if left is None:
        return seconds
    if left <= 0:
        raise DeadlineExceeded("the call's deadline passed before another wait could start")
    return left if not isinstance(seconds, int | float) else min(float(seconds), left)


class _Watched:
    """Hands the socket the current request waits on (per thread) to the header watchdog."""

    def request(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        result = super().request(*args, **kwargs)  # type: ignore[misc]
        watchdog = getattr(_STATE, "watchdog", None)
        if watchdog is not None:
            watchdog.watch(getattr(self, "sock", None))  # connected now: the socket the headers will come on
        return result


class _WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_WATCHED_POOLS = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


class _HeaderWatchdog:
    """Shuts the socket of this thread's request when ``seconds`` pass before its headers arrived.

    It holds the socket itself, never the connection (a pooled connection may carry a later request on a new
    socket), and once cancelled it does nothing, even when its timer already started to fire (one lock). Every
    watchdog of the process waits on one shared timer thread (:class:`_Timers`): a thread started per request
    cost about a millisecond a request on a busy machine, more than the rest of a loopback request.
    """

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sock: Any = None
        self._done = False
        self._lock = threading.Lock()
        _STATE.watchdog = self
        _TIMERS.add(time.monotonic() + seconds, self)

    def watch(self, sock: Any) -> None:
        """The socket to shut if the deadline passes (the one the request was sent on)."""
        with self._lock:
            if self._done:
                return
            self._sock = sock
            if self.fired and sock is not None:  # the deadline passed while the request was still being sent
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def fire(self) -> None:
        """The deadline passed: shut the socket being waited on (nothing once cancelled)."""
        with self._lock:
            if self._done:
                return
            self.fired = True
            if self._sock is not None:
                with contextlib.suppress(OSError):
                    self._sock.shutdown(socket.SHUT_RDWR)

    @property
    def done(self) -> bool:
        """Whether the watchdog was cancelled."""
        return self._done

    def cancel(self) -> bool:
        """Stop watching; return whether the watchdog had fired (its request's headers were cut short)."""
        with self._lock:
            self._done, self._sock = True, None
            fired = self.fired
        _TIMERS.cancelled()
        _STATE.watchdog = None
        return fired


class _Timers:
    """One daemon thread firing the watchdogs whose deadline passed, earliest first (a heap of deadlines).

    Cancelled watchdogs are dropped when they reach the top of the heap, or all at once when they are most of it,
    so the heap stays the size of the requests in flight.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _HeaderWatchdog]] = []
        self._order = itertools.count()
        self._stale = 0
        self._thread: threading.Thread | None = None

    def add(self, at: float, dog: _HeaderWatchdog) -> None:
        """Fire ``dog`` at ``at`` (``time.monotonic()`` based) unless it is cancelled first."""
        with self._cond:
            heapq.heappush(self._heap, (at, next(self._order), dog))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True, name="fdkit-deadlines")
                self._thread.start()
            elif self._heap[0][2] is dog:
                self._cond.notify()  # an earlier deadline than the thread waits for

    def cancelled(self) -> None:
        """Count a cancelled watchdog; compact the heap when they are most of it."""
        with self._cond:
            self._stale += 1
            if self._stale > 64 and self._stale * 2 > len(self._heap):
                self._heap = [entry for entry in self._heap if not entry[2].done]
                heapq.heapify(self._heap)
                self._stale = 0

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)
                    self._stale = max(0, self._stale - 1)
                if not self._heap:
                    self._cond.wait()
                    continue
                at, _, dog = self._heap[0]
                wait = at - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
            dog.fire()

    def _after_fork(self) -> None:
        self._cond = threading.Condition()
        self._heap, self._stale, self._thread = [], 0, None


_TIMERS = _Timers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_TIMERS._after_fork)  # the thread does not survive a fork; its lock may not


_NO_POOL: Any = None  # a read timeout the client counts itself happened outside any connection pool


class RetryBudget:
    """One call's retry policy, spent by urllib3's retries and the client's own (bodies) alike.

    The adapter of this thread sends with :attr:`retry` (the policy as spent so far) and, once a response's
    headers arrived, takes back the policy urllib3 left (its history included). A body fault then spends one
    more retry of the same policy with :meth:`spend`.

    Args:
        policy: the call's retry policy (``None``: the adapter's own, learnt from the first response).

    Example:
        >>> b = RetryBudget(Retry(total=1, backoff_factor=0))
        >>> b.spend("GET", "/x", BodyReadError("cut short")), b.spend("GET", "/x", BodyReadError("cut short"))
        (True, False)
    """

    def __init__(self, policy: Retry | None) -> None:
        self.retry = policy
        self.spent = 0

    def spend(self, method: str, url: str, error: BaseException) -> bool:
        """Count one more failed attempt (a body fault); sleep the policy's backoff within the deadline.

        Args:
            method: the request's method (the policy may not retry it).
            url: the request's URL.
            error: what went wrong.

        Returns:
            Whether another attempt may be made: ``False`` when the policy is spent, does not retry ``method``,
            or its backoff would end past the call's deadline.
        """
        policy = self.retry if self.retry is not None else Retry(total=0)
        timed_out = isinstance(error, BodyReadError) and error.timed_out
        cause: Exception = ReadTimeoutError(_NO_POOL, url, str(error)) if timed_out else ProtocolError(str(error))
        _STATE.last_fault = error
        try:
            policy = policy.increment(method, url, error=cause)
        except Exception:  # MaxRetryError (spent), or the error itself for a method the policy does not retry
            return False
        self.retry = policy
        self.spent += 1
        pause = policy.get_backoff_time()
        left = remaining()
        if left is not None and left <= pause:
            return False  # the deadline passes (or would, waiting): no further attempt
        if pause > 0:
            time.sleep(pause)
        return True


@contextlib.contextmanager
def retry_budget(policy: Retry | None) -> Iterator[RetryBudget]:
    """Make the requests sent inside this block (in this thread) spend one :class:`RetryBudget`.

    Args:
        policy: the call's retry policy (``None``: the adapter's own).

    Yields:
        The budget.

    Example:
        >>> with retry_budget(Retry(total=3)) as b:
        ...     b.retry.total
        3
    """
    previous = getattr(_STATE, "budget", None)
    budget = RetryBudget(policy)
    _STATE.budget = budget
    _STATE.last_fault = None
    try:
        yield budget
    finally:
        _STATE.budget = previous


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

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> FdkitRetry:
        """urllib3's ``increment``, except that a refused connection is final (raised as spent at once)."""
        if _refused(error):
            raise MaxRetryError(_pool, url or "", error) from error
        watchdog = getattr(_STATE, "watchdog", None)
        if error is not None and not (watchdog is not None and watchdog.fired):  # (not the socket fdkit shut itself)
            _STATE.last_fault = error  # said when the deadline passes during the backoff that follows
        return super().increment(method, url, response, error, _pool, _stacktrace)

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

    Each attempt (urllib3's retries included) waits at most its ``timeout`` and never past the call's
    :func:`deadline` (:class:`DeadlineTimeout`); the body of the attempt that answered is read within what is left
    of that attempt's time, every socket read cut to it. A body that does not arrive whole and in time raises
    :class:`BodyReadError`. Inside :func:`retry_budget` the adapter sends with the call's policy as spent so far.

    Args:
        max_bytes: the largest decompressed body accepted (``None``: no cap).
        **kwargs: :class:`~requests.adapters.HTTPAdapter`'s arguments.
    """

    def __init__(self, *args: Any, max_bytes: int | None = 256 * 2**20, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """The pool manager of requests, its connections watched by the header watchdog."""
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _WATCHED_POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        """The proxy manager of requests (``HTTP(S)_PROXY``), its connections watched as well."""
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = _WATCHED_POOLS
        return manager

    @property
    def max_retries(self) -> Retry:
        """The retry policy of the next send: the call's budget as spent so far, else the adapter's own."""
        budget = getattr(_STATE, "budget", None)
        if budget is not None and budget.retry is not None:
            return budget.retry
        return self._max_retries

    @max_retries.setter
    def max_retries(self, value: Retry) -> None:
        self._max_retries = value

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        """Send, then read the body under the attempt's deadline (its ``timeout``) and the call's deadline."""
        per_attempt = _seconds(timeout)  # the attempt's own time
        left = remaining()  # the whole call's
        if left is not None and left <= 0:
            raise DeadlineExceeded("the call's deadline passed before the request was sent")
        connect, read = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        _STATE.attempt_started = time.monotonic()
        cut: Any = DeadlineTimeout(connect=connect, read=read)  # requests passes a urllib3 Timeout on as it is
        watchdog = _HeaderWatchdog(left) if left is not None else None
        fired = False
        try:
            response = super().send(request, stream=True, timeout=cut, verify=verify, cert=cert, proxies=proxies)
        except requests.RequestException as exc:
            fired = watchdog is not None and watchdog.cancel()
            if fired:
                raise DeadlineExceeded(
                    f"the call's deadline passed while waiting for the headers of {request.url}"
                ) from exc
            raise
        finally:
            if watchdog is not None and not fired:
                fired = watchdog.cancel()
        if fired:  # the headers were cut short: never an answer
            response.close()
            raise DeadlineExceeded(f"the call's deadline passed while waiting for the headers of {request.url}")
        budget = getattr(_STATE, "budget", None)
        spent = getattr(response.raw, "retries", None)
        if budget is not None and isinstance(spent, Retry):
            budget.retry = spent  # what urllib3 spent on the way to these headers
        if not stream:
            ends = None if per_attempt is None else _STATE.attempt_started + per_attempt
            response._content = self._read(response, ends)
            response._content_consumed = True  # type: ignore[attr-defined]
        scope = getattr(_STATE, "scope", None)
        if scope is not None:
            scope.answered = True  # a whole answer: later requests of the call have deadlines of their own
        return response

    def _read(self, response: requests.Response, ends: float | None) -> bytes:
        raw = response.raw
        sock = getattr(getattr(raw, "connection", None), "sock", None)
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                wait = _left_of(ends)
                if wait is not None:
                    if wait <= 0:
                        left = remaining()
                        if left is not None and left <= 0:
                            raise DeadlineExceeded(f"the call's deadline passed while reading {response.url}")
                        raise BodyReadError(f"the response was not complete in time ({response.url})", timed_out=True)
                    if sock is not None:
                        sock.settimeout(wait)  # one socket read never outlasts the attempt or the call
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
        except (DeadlineExceeded, ResponseTooLarge, BodyReadError):
            raw.close()
            raise
        except Exception as exc:  # urllib3's protocol, decode and read-timeout errors
            raw.close()
            if isinstance(exc, ReadTimeoutError | TimeoutError):
                left = remaining()
                if left is not None and left <= 0:
                    raise DeadlineExceeded(f"the call's deadline passed while reading {response.url}") from exc
                raise BodyReadError(f"the response was not complete in time ({response.url})", timed_out=True) from exc
            raise BodyReadError(f"{plain_reason(exc)} ({response.url})") from exc
        finally:
            response.raw.release_conn()
        return b"".join(chunks)


def _left_of(ends: float | None) -> float | None:
    """Seconds until the earlier of an attempt's end and the call's deadline (``None``: neither is set)."""
    left = remaining()
    if ends is None:
        return left
    until = ends - time.monotonic()
    return until if left is None else min(until, left)


def _refused(error: BaseException | None) -> bool:
    """Whether urllib3's error is a refused connection (nothing listens at the address)."""
    if not isinstance(error, NewConnectionError):
        return False
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: urllib3's ``reason``, exceptions among its ``args``, causes and contexts."""
    seen: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo and len(seen) < 20:
        e = todo.pop(0)
        if any(e is s for s in seen):
            continue
        seen.append(e)
        reason = getattr(e, "reason", None)
        nested = [a for a in getattr(e, "args", ()) if isinstance(a, BaseException)]
        for more in (reason, *nested, e.__cause__, e.__context__):
            if isinstance(more, BaseException):
                todo.append(more)
    return seen


def plain_reason(exc: BaseException) -> str:
    """Why a connection or a response failed, in a few words of fdkit's own (no urllib3 or requests class names).

    Args:
        exc: what requests, urllib3 or the socket raised (wrapped any number of times).

    Returns:
        E.g. ``the connection was reset by the server``, ``connection refused``, ``the response was cut short after
        10 bytes (89 more expected)``.

    Example:
        >>> plain_reason(requests.ConnectionError(ProtocolError("Connection aborted.", ConnectionResetError(104, "x"))))
        'the connection was reset by the server'
    """
    import http.client
    import ssl

    from urllib3.exceptions import ConnectTimeoutError, DecodeError, IncompleteRead, NameResolutionError

    chain = _chain(exc)

    def first(*kinds: type[BaseException]) -> Any:
        return next((e for e in chain if isinstance(e, kinds)), None)

    if first(ConnectionRefusedError):
        return "connection refused (nothing listens there; fdkit does not retry a refused connection)"
    if first(ConnectionResetError):
        return "the connection was reset by the server"
    if first(BrokenPipeError, ConnectionAbortedError):
        return "the server closed the connection while the request was being sent"
    if first(http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    cut = first(IncompleteRead, http.client.IncompleteRead)
    if cut is not None:
        got, more = getattr(cut, "partial", None), getattr(cut, "expected", None)
        got = len(got) if isinstance(got, bytes | bytearray) else got
        detail = (
            f" after {got:,} bytes ({more:,} more expected)" if isinstance(got, int) and isinstance(more, int) else ""
        )
        return f"the response was cut short{detail}"
    if first(NameResolutionError, socket.gaierror):
        return "the host name could not be resolved"
    if first(ConnectTimeoutError):
        return "the connection could not be made in time"
    if first(ReadTimeoutError, TimeoutError, requests.exceptions.Timeout):
        return "no answer in time"
    if first(DecodeError):
        return "the response body could not be decompressed"
    tls = first(ssl.SSLError)
    if tls is not None:
        return f"the TLS connection failed ({getattr(tls, 'reason', None) or 'handshake'})"
    if first(ProtocolError, http.client.HTTPException):
        return "the response was not valid HTTP or was cut short"
    os_error = next((e for e in chain if isinstance(e, OSError) and getattr(e, "strerror", None)), None)
    if os_error is not None:
        return str(os_error.strerror).rstrip(".").lower()
    return "the connection failed"


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
