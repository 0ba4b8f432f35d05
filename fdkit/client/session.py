"""The client: configuration, the cached session, the error mapping and the one ``fetch()``.

Example:
    >>> import fdkit
    >>> with fdkit.server.start() as srv:
    ...     c = fdkit.Client(api_key=srv.api_key, base_url=srv.base_url, cache=False)
    ...     body = c.fetch("company_facts", {"ticker": "AAPL"})
    >>> body["company_facts"]["name"]
    'Apple Inc.'
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import requests
from urllib3.util.retry import Retry

from fdkit.catalog import endpoints as _catalog
from fdkit.catalog.endpoints import Endpoint
from fdkit.catalog.shapes import SHAPES
from fdkit.client import compound, embedded
from fdkit.client.bulk import report_failures, wait_for_writes
from fdkit.client.cache import (
    API_KEY_HEADER,
    FetchCache,
    cache_root,
    fetch_key,
    is_cache_miss,
    make_retry,
    make_session,
    mount_retries,
    namespace_of,
)
from fdkit.client.config import PUBLIC_BASE_URL, Settings, is_loopback, resolve
from fdkit.client.config import generation as config_generation
from fdkit.client.dispatch import Errors, check_value
from fdkit.client.methods import DatasetMethods
from fdkit.client.next_steps import name_the_listing
from fdkit.client.paging import collect, progress_bar, progress_enabled
from fdkit.client.refs import resolved
from fdkit.errors import (
    BadRequestError,
    CacheMissError,
    FdkitError,
    LakeError,
    MissingPayloadError,
    PaginationError,
    RateLimitError,
    StaleDataWarning,
    TransportError,
    error_for_status,
    redact,
    register_secret,
    warn_user,
)
from fdkit.frames.bundle import BUNDLE_MEDIA, PART_COMPRESSION_HEADER, BrokenBundle, Bundle, read_bundle
from fdkit.frames.typed import ARROW_STREAM, FORMATS_HEADER, PageRows, Part, join_parts, part_from_bytes, response_part
from fdkit.wire import transport
from fdkit.wire.transport import OriginBoundSession, same_origin

__all__ = ["Client", "default_client", "Errors"]

#: where an endpoint's bulk route is (``fdkit.server.bulk.BULK_PREFIX``; the client does not import the server)
BULK_PREFIX = "/bulk"


class Client(DatasetMethods):
    """A client of the Financial Data Service.

    Every dataset function (``prices``, ``balance_sheets``, ...) is also a method of the client. With neither an
    API key nor a base URL configured, the client starts the embedded service on loopback and serves the bundled
    reference data, so everything works offline.

    Args:
        api_key: API key; falls back to :func:`fdkit.configure` and ``FINANCIAL_DATASETS_API_KEY``.
        base_url: service base URL; falls back to :func:`fdkit.configure` and ``FDKIT_BASE_URL``.
        cache: keep an on-disk HTTP cache (requests-cache).
        cache_dir: where; falls back to ``FDKIT_CACHE_DIR`` and the user cache dir.
        offline: answer from the cache only; misses raise :class:`~fdkit.errors.CacheMissError`.
        session: any :class:`requests.Session` to use as is (caching is then the session's business).
        timeout: seconds per HTTP request.
        max_workers: threads for multi-ticker fetches (at most ``fdkit.client.embedded.MAX_WORKERS``, 2, with the
            embedded service, which shares the process: measured, 8 threads held +30 MB of RSS for a 20-ticker panel
            against +18 MB with 2, for no speed; at most the machine's cores, and 2, with a service on loopback,
            which has no latency to hide and shares those cores: 16 threads were slower than 1 on 2 cores).
        progress: progress bars; ``None`` shows them on a terminal or in Jupyter (calls over half a second).
        retry: the one retry policy of every request (default :func:`fdkit.client.cache.make_retry`): the attempts
            urllib3 repeats (connection and read errors, 429/5xx) and the ones fdkit repeats for a body cut short,
            too slow or broken spend the same ``total`` and follow its backoff. A refused connection is not retried.
        deadline: seconds one request may take with all its retries and waits (default ``10 * timeout``); no
            attempt, backoff or socket read goes past it. Until the service first answers, a whole dataset call (its
            probe of the service and its first requests, in every worker thread) waits at most this long in all.
        max_retry_after: the longest ``Retry-After`` worth waiting (default 60 s); a longer one raises
            :class:`~fdkit.errors.RateLimitError` at once, with its ``retry_after``.
        max_response_bytes: the largest decompressed response body accepted (default 256 MiB).
        max_cache_bytes: each HTTP cache namespace is trimmed to this size, oldest first (default 1 GiB).

    Example:
        >>> import fdkit
        >>> c = fdkit.Client()          # embedded default: no key, no base URL
        >>> c.fetch("prices_tickers", {})["tickers"][:2]
        ['A', 'AABA']
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        cache: bool | None = None,
        cache_dir: str | None = None,
        offline: bool | None = None,
        session: requests.Session | None = None,
        timeout: float | None = None,
        max_workers: int | None = None,
        progress: bool | None = None,
        retry: Retry | None = None,
        deadline: float | None = None,
        max_retry_after: float | None = None,
        max_response_bytes: int | None = None,
        max_cache_bytes: int | None = None,
    ) -> None:
        self._retry = retry
        self._args: dict[str, Any] = dict(
            api_key=api_key,
            base_url=base_url,
            cache=cache,
            cache_dir=cache_dir,
            offline=offline,
            timeout=timeout,
            max_workers=max_workers,
            progress=progress,
            deadline=deadline,
            max_retry_after=max_retry_after,
            max_response_bytes=max_response_bytes,
            max_cache_bytes=max_cache_bytes,
        )
        register_secret(api_key)
        if isinstance(api_key, str):
            register_secret(api_key.strip())
        self._user_session = session
        self._lock = threading.Lock()
        self._settings: Settings | None = None
        self._session: requests.Session | None = None
        self._identity: str | None = None
        self._fetch_cache: FetchCache | None = None
        self._arrow: bool | None = None  # whether the service answers Arrow pages (learned from its answers)
        self._bundles: bool | None = None  # whether it answers bulk requests with bundles (the same header says)
        self._peer: bool | None = None  # whether the service is fdkit's own (X-Fdkit-Formats on its answers)
        self._peer_mark: Path | None = None

    # -- configuration --------------------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The resolved :class:`~fdkit.client.config.Settings` (the embedded service is started on first use)."""
        self._ensure()
        if self._settings is None:  # pragma: no cover - _ensure always sets it
            raise RuntimeError("the client's settings were not resolved")
        return self._settings

    @property
    def base_url(self) -> str:
        """Base URL requests go to (for the embedded default, its loopback address: asking starts it)."""
        if self.settings.embedded:
            return str(embedded.service().base_url)
        return str(self.settings.base_url)

    def __repr__(self) -> str:
        s = self._settings
        if s is None:
            return "Client(unresolved)"
        return f"Client(base_url={s.base_url!r}, api_key={'set' if s.api_key else 'None'}, cache={s.cache})"

    def _ensure(self) -> requests.Session:
        if self._session is not None:
            return self._session
        with self._lock:
            if self._session is not None:
                return self._session
            settings = resolve(**self._args)
            identity = settings.base_url or ""
            if settings.embedded:  # the service starts on the first request that misses the cache
                settings = replace(settings, api_key=None, base_url=embedded.EMBEDDED_ORIGIN)
                identity = embedded.identity()
                self._arrow = True  # the embedded service is fdkit's own: it answers Arrow pages
                self._bundles = True  # and bundles of many tickers (this fdkit's own service)
            register_secret(settings.api_key)
            pool_size = max(settings.max_workers, 4)
            if self._user_session is not None:
                session = self._user_session
            elif settings.cache or settings.offline:
                namespace = namespace_of(identity, settings.api_key)
                session = make_session(
                    settings.cache_dir,
                    namespace,
                    retry=self._new_retry(settings),
                    pool_size=pool_size,
                    offline=settings.offline,
                    max_bytes=settings.max_response_bytes,
                    max_cache_bytes=settings.max_cache_bytes,
                )
                root = cache_root(settings.cache_dir, create=True)
                self._fetch_cache = FetchCache(root / f"{namespace}.fetch.sqlite")
                # that the service is fdkit's own, remembered for offline use (the requests' keys depend on it)
                self._peer_mark = root / f"{namespace}.fdkit-peer"
            else:
                session = OriginBoundSession()
                mount_retries(
                    session, self._new_retry(settings), pool_size=pool_size, max_bytes=settings.max_response_bytes
                )
            if settings.embedded:
                adapter = embedded.EmbeddedAdapter(
                    max_retries=self._new_retry(settings),
                    pool_connections=pool_size,
                    pool_maxsize=pool_size,
                    max_bytes=settings.max_response_bytes,
                )
                session.mount(embedded.EMBEDDED_ORIGIN, adapter)
            if self._user_session is None and (settings.embedded or is_loopback(settings.base_url)):
                session.trust_env = False  # no proxy ever applies to loopback; skips an environment scan per call
            self._settings, self._identity, self._session = settings, identity, session
            return session

    def _new_retry(self, settings: Settings) -> Retry:
        return self._retry if self._retry is not None else make_retry(max_retry_after=settings.max_retry_after)

    def close(self) -> None:
        """Close the HTTP session (the cache files stay).

        Example:
            >>> Client(base_url="http://127.0.0.1:9").close()
        """
        with self._lock:
            if self._session is not None and self._user_session is None:
                self._session.close()
            self._session = None

    def call_scope(self) -> contextlib.AbstractContextManager[transport.CallScope | None]:
        """One deadline for a whole call until the service first answers (:func:`fdkit.wire.transport.call_scope`).

        The dataset functions make their calls inside it: a probe of the service and the call's first requests
        share the call's deadline (``deadline``, default ``10 * timeout``), so a service that never answers ends
        the call within it. Worker threads of the call enter the same scope.

        Example:
            >>> with Client(cache=False).call_scope() as scope:
            ...     scope.answered
            False
        """
        return transport.call_scope(self.settings.call_deadline)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the hand-written dataset functions as methods (the generated ones come from DatasetMethods) -----------
    def available(self, resource: str, what: str = "tickers", **params: Any) -> Any:
        """:func:`fdkit.available` with this client.

        Example:
            >>> Client().available("interest_rates", "banks")
            ['ECB', 'FED']
        """
        return compound.available(self, resource, what, **params)

    def financials(
        self,
        ticker: str | Sequence[str],
        period: str = "annual",
        limit: int | Literal["default"] | None = "default",
        *,
        errors: Errors = "raise",
        progress: bool | None = None,
        **filters: Any,
    ) -> Any:
        """:func:`fdkit.financials` with this client.

        Example:
            >>> "free_cash_flow" in Client().financials("AAPL", limit=1).columns
            True
        """
        return compound.financials(self, ticker, period, limit, errors=errors, progress=progress, **filters)

    def filing_exhibits(self, ticker: str, filing_type: str, year: int, **params: Any) -> Any:
        """:func:`fdkit.filing_exhibits` with this client.

        Example:
            >>> list(Client().filing_exhibits("NVDA", "8-K", 2026).columns)[:2]
            ['accession_number', 'item']
        """
        return compound.filing_exhibits(self, ticker, filing_type, year, **params)

    # -- one HTTP request -----------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        ttl: int | None = None,
        refresh: bool = False,
    ) -> dict[str, Any]:
        """Send one request and decode its JSON, mapping failures to the error tree.

        Args:
            method: ``GET`` or ``POST``.
            path_or_url: a path on the base URL, or an absolute URL (``next_page_url``) on the base URL's origin,
                used verbatim; an absolute URL on another origin is refused (``PaginationError``: the key would
                leave its origin).
            params: query parameters (lists repeat the parameter).
            json: JSON body for POST.
            ttl: cache lifetime of this response in seconds (``-1``: never expires).
            refresh: bypass the cache for this request (the answer replaces the cached one).

        Returns:
            The decoded JSON object.

        Raises:
            FdkitError: the subclass matching the failure (see :mod:`fdkit.errors`).

        Example:
            >>> Client().request("GET", "/macro/interest-rates/banks")["banks"]
            ['ECB', 'FED']
        """
        return self._exchange(
            method,
            path_or_url,
            params=params,
            json=json,
            ttl=ttl,
            refresh=refresh,
            accept="application/json",
            decode=_json_object,
        )

    def request_page(
        self,
        path_or_url: str,
        *,
        params: Mapping[str, Any] | None = None,
        ttl: int | None = None,
        refresh: bool = False,
    ) -> tuple[Part | None, dict[str, Any] | None, str | None]:
        """GET one page, as an Arrow part where the service answers one (fdkit peers), else as JSON.

        Args:
            path_or_url: a path on the base URL, or a next page's absolute URL on the service's origin.
            params: query parameters.
            ttl: cache lifetime in seconds.
            refresh: bypass the cache.

        Returns:
            ``(part, None, next_url)`` for an Arrow page, ``(None, body, next_url)`` for a JSON one.

        Example:
            >>> part, body, nxt = Client().request_page("/prices", params={"ticker": "AAPL", "interval": "day",
            ...     "start_date": "2022-01-03", "end_date": "2022-01-31"})
            >>> part[1] if part else len(body["prices"])
            20
        """
        return self._exchange(
            "GET",
            path_or_url,
            params=params,
            json=None,
            ttl=ttl,
            refresh=refresh,
            accept=_ACCEPT_ARROW,
            decode=_page_of,
        )

    def speaks_arrow(self) -> bool:
        """Whether the service said it answers Arrow pages (``X-Fdkit-Formats``; fdkit peers do).

        Example:
            >>> c = Client()
            >>> _ = c.request("GET", "/macro/interest-rates/banks")
            >>> c.speaks_arrow()
            True
        """
        return bool(self._arrow)

    def speaks_bundles(self) -> bool:
        """Whether many tickers can be asked in one bulk request (``POST /bulk<path>``, fdkit peers that say so).

        Never offline (a bulk answer is not cached as such: its tickers' parts are) and never to a service that
        has not said it answers bundles (``X-Fdkit-Formats``); the embedded service always does.

        Example:
            >>> Client().speaks_bundles()
            True
        """
        self._ensure()
        if self.settings.offline:
            return False
        if self._bundles is None:
            self.speaks_fdkit()  # an earlier run's mark says (a mark of an older fdkit: not until an answer says)
        return bool(self._bundles)

    def request_bundle(
        self, endpoint: Endpoint, params: Mapping[str, Any], tickers: Sequence[str], *, whole_range: bool = False
    ) -> Bundle:
        """One bulk request: each ticker's part (or error) for the query ``params`` (without its ticker).

        Sent with fdkit's retries, deadline and error mapping; never kept in the HTTP cache (the parts are kept in
        the fetch cache by the caller, :func:`fdkit.client.bulk.fetch_parts`).

        Args:
            endpoint: a bulk endpoint (:func:`fdkit.server.bulk.bulk_endpoint`).
            params: the cleaned parameters of one request, its ticker left out.
            tickers: the tickers, each once.
            whole_range: every bar of the range (what a request continued window after window gives).

        Returns:
            The :class:`~fdkit.frames.bundle.Bundle`: one entry per ticker, in order (its part's bytes, or its run
            of a shared table's rows: the client reads both), and the parts' compression.

        Example:
            >>> from fdkit.catalog.endpoints import get
            >>> q = {"start_date": "2008-09-01", "end_date": "2008-09-30"}
            >>> bundle = Client().request_bundle(get("price_history"), q, ["LEH", "NOPE"])
            >>> [(e.ticker, e.status) for e in bundle.entries]
            [('LEH', 200), ('NOPE', 404)]
        """
        body = {"tickers": list(tickers), "whole_range": whole_range, "tables": True}
        return self._exchange(
            "POST",
            BULK_PREFIX + endpoint.path,
            params=dict(params),
            json=body,
            ttl=None,
            refresh=True,
            accept=BUNDLE_MEDIA,
            decode=_bundle_of,
        )

    def cached_part(self, key: str) -> bytes | None:
        """The fetch cache's bytes under ``key`` (fresh; offline, stale ones too, with a warning), or ``None``.

        A reference to a kept table's rows (:mod:`fdkit.client.refs`) is returned as it is kept.
        """
        self._ensure()
        fc = self._fetch_cache
        return None if fc is None else self._cached(fc, key, key.split(":", 1)[0])

    def cached_parts(self, keys: Sequence[str]) -> dict[str, bytes]:
        """:meth:`cached_part` of many keys in a few queries: the bytes of those the fetch cache has.

        Example:
            >>> Client().cached_parts(["part:none:nothing"])
            {}
        """
        self._ensure()
        fc = self._fetch_cache
        if fc is None or not keys:
            return {}
        for prefix in dict.fromkeys(k.rsplit(":", 1)[0] + ":" for k in keys):
            wait_for_writes(prefix)
        offline = self.settings.offline
        hits = fc.entries(keys, allow_stale=offline, offline=offline)
        late = max((lag for _, lag in hits.values()), default=0.0)
        if late > 0:
            what = keys[0].split(":", 1)[0]
            warn_user(
                f"fdkit: {what}: serving cached answers that expired up to {late / 3600:.1f} h ago (offline; "
                "to fetch again: fdkit.configure(offline=False), or unset FDKIT_OFFLINE)",
                StaleDataWarning,
            )
        return {k: body for k, (body, _) in hits.items()}

    def keep_parts(self, items: Sequence[tuple[str, bytes | memoryview]], ttl: int) -> None:
        """Keep many parts in the fetch cache at once (one transaction); nothing without a cache."""
        keep = self.part_keeper()
        if keep is not None and items:
            keep(items, ttl)

    def part_keeper(self) -> Callable[[Sequence[tuple[str, bytes | memoryview]], int], None] | None:
        """What keeps parts in this client's fetch cache as it is now (``None`` without one): bound to that cache.

        A write made later (in the background) goes where this client's answers went, even if the client is
        reconfigured for another service meanwhile.
        """
        self._ensure()
        return None if self._fetch_cache is None else self._fetch_cache.put_many

    def speaks_fdkit(self) -> bool:
        """Whether the service is fdkit's own (``fdkit serve``, the embedded default).

        fdkit's own answers the parameters fdkit adds to the documents (``Endpoint.extension_params``); any other
        service is sent only what its document lists. Learned from ``X-Fdkit-Formats`` on the service's answers;
        when nothing was answered yet, one documented keyless listing (``/macro/interest-rates/banks``) is asked
        once, without the key and without retries. A service that cannot be asked (or offline) is not assumed to
        be fdkit's.

        Example:
            >>> Client().speaks_fdkit()
            True
        """
        self._ensure()
        if self.settings.embedded or self._peer:
            return True
        if self._peer_mark is not None and self._peer_mark.exists():  # learned by an earlier run, kept with the cache
            self._peer = True
            if self._bundles is None:
                with contextlib.suppress(OSError):
                    self._bundles = BUNDLE_MEDIA in self._peer_mark.read_text()
            return True
        if self.settings.offline:
            return False
        if self._peer is None:
            self._probe()
        return bool(self._peer)

    def _probe(self) -> None:
        """Ask the service once which formats it speaks (``X-Fdkit-Formats``): whether it is fdkit's, and bulk.

        No key (the 2026 document needs none there; a service of the seed's contract answers 401, with the same
        header when it is fdkit's); a fault is asked again a few times, as a fetch would be, since
        requests' parameters depend on the answer; unanswered: not fdkit's, not kept. The probe is part of the call
        that needs it: it is sent through fdkit's transport within the call's deadline (an attempt at most 5 s, or
        ``timeout``), so a service that never answers (or trickles) costs the call no time beyond its deadline.
        """
        s = self.settings
        session = OriginBoundSession()
        mount_retries(session, Retry(total=0, raise_on_status=False), pool_size=1, max_bytes=1 << 20)
        session.trust_env = not is_loopback(s.base_url)
        try:
            with transport.deadline(s.call_deadline):
                for attempt in range(4):
                    try:
                        answer = session.get(
                            f"{self.base_url}/macro/interest-rates/banks",
                            allow_redirects=False,
                            timeout=min(5.0, float(s.timeout or 5.0)),
                        )
                    except requests.ConnectionError as exc:
                        if transport.plain_reason(exc).startswith("connection refused"):
                            break  # nothing listens there: the call's request says so at once
                        answer = None
                    except (requests.RequestException, transport.DeadlineExceeded):
                        answer = None
                    if answer is not None and (answer.status_code < 500 and answer.status_code != 429):
                        self._peer = bool(self._peer) or FORMATS_HEADER in answer.headers
                        self._bundles = BUNDLE_MEDIA in answer.headers.get(FORMATS_HEADER, "")
                        self._remember_peer()
                        return
                    pause, left = 0.1 * 2**attempt, transport.remaining()
                    if attempt == 3 or (left is not None and left <= pause):
                        break  # the call's deadline passes: its request says so
                    time.sleep(pause)
        finally:
            session.close()
        if self._bundles is None:  # (no bulk until an answer says so: the service's answers set it again)
            self._bundles = False

    def _remember_peer(self) -> None:
        """Mark the cache folder: this service (and key) is fdkit's own, so offline runs build the same requests.

        The mark holds what the service said it speaks (``X-Fdkit-Formats``): a later run knows it answers bulk
        requests without asking (a warm call sends nothing).
        """
        mark = self._peer_mark
        if not self._peer or mark is None or self.settings.offline:
            return
        said = BUNDLE_MEDIA if self._bundles else ""
        with contextlib.suppress(OSError):
            if not mark.exists() or mark.read_text() != said:
                mark.write_text(said)

    def _exchange(
        self,
        method: str,
        path_or_url: str,
        *,
        params: Mapping[str, Any] | None,
        json: Any,
        ttl: int | None,
        refresh: bool,
        accept: str,
        decode: Callable[[requests.Response, bytes], Any],
    ) -> Any:
        """One request with fdkit's retries, deadline and error mapping.

        ``decode`` turns a 2xx body into the result, raising :class:`_BadBody` for a body worth asking again
        (truncated, or not what it says it is).
        """
        session = self._ensure()
        settings = self.settings
        if "://" not in path_or_url:
            url = f"{settings.base_url}{path_or_url}"
        elif settings.embedded:  # a next_page_url of the embedded service: its port is this process's business
            url = embedded.rebase(path_or_url)
        elif same_origin(path_or_url, str(settings.base_url)):
            url = path_or_url
        else:  # the key goes to its own origin only: a link elsewhere is refused before anything is sent
            raise PaginationError(
                f"refusing to follow {_origin(path_or_url)}: it is not the service's origin "
                f"({_origin(str(settings.base_url))}) and the API key is sent only there",
                path=urlsplit(path_or_url).path,
                error="Off-origin link",
            )
        path = urlsplit(url).path
        headers = {"Accept": accept}
        if settings.api_key:
            headers[API_KEY_HEADER] = settings.api_key
        kwargs: dict[str, Any] = {"params": params, "headers": headers, "timeout": settings.timeout}
        if json is not None:
            kwargs["data"] = orjson.dumps(json)
            headers["Content-Type"] = "application/json"
        cached = hasattr(session, "cache")
        last_error: FdkitError | None = None
        # one policy for every fault: urllib3's retries (connections, reads, statuses) and the bodies retried here
        # (cut short, too slow, broken) spend the same Retry, with its backoff, within the call's deadline
        with transport.deadline(settings.call_deadline), transport.retry_budget(self._new_retry(settings)) as budget:
            for attempt in itertools.count():
                if cached:
                    kwargs["expire_after"] = ttl
                    kwargs["force_refresh"] = refresh or attempt > 0
                try:
                    response = session.request(method, url, **kwargs)
                    content = response.content
                except transport.RetryAfterTooLong as exc:
                    raise RateLimitError(
                        f"the service asked to retry after {exc.retry_after:g} s, longer than fdkit waits "
                        f"(max_retry_after={settings.max_retry_after:g} s, or the call's deadline)",
                        status=exc.status,
                        path=path,
                        retry_after=exc.retry_after,
                        error="Too Many Requests",
                    ) from None
                except transport.ResponseTooLarge as exc:
                    raise TransportError(str(exc), path=path, error="Response too large") from None
                except transport.DeadlineExceeded as exc:
                    if last_error is not None:
                        before = f" (last: {last_error.message})"
                    else:
                        before = f" (last: {_why_unreachable(exc.last)})" if exc.last is not None else ""
                    last_error = TransportError(
                        f"no answer from {self._describe_service()} within the call's deadline of "
                        f"{settings.call_deadline:g} s{before}",
                        path=path,
                        error="Deadline",
                    )
                    break
                except transport.BodyReadError as exc:  # the headers came, the body did not (whole, in time)
                    last_error = self._body_fault(exc, path)
                    fault: BaseException = exc
                except (
                    requests.exceptions.ChunkedEncodingError,
                    requests.exceptions.ContentDecodingError,
                ) as exc:  # the same, from a session whose adapter does not read bodies itself
                    last_error = TransportError(
                        f"the response body was cut short: {transport.plain_reason(exc)}", path=path
                    )
                    fault = exc
                except requests.exceptions.Timeout as exc:  # the policy's retries are spent (or it retries none)
                    what = "connect" if isinstance(exc, requests.exceptions.ConnectTimeout) else "answer"
                    raise TransportError(
                        f"no answer from {self._describe_service()}: every attempt the retry policy allows failed to "
                        f"{what} within {settings.timeout:g} s (timeout; the call's deadline is "
                        f"{settings.call_deadline:g} s)",
                        path=path,
                        error="Timeout",
                    ) from None
                except requests.exceptions.ConnectionError as exc:  # the same: urllib3 applied the policy
                    raise TransportError(self._unreachable(exc), path=path, error="Unreachable") from None
                except requests.exceptions.RequestException as exc:
                    raise TransportError(f"request failed: {_why_unreachable(exc)}", path=path) from None
                else:
                    scope = transport.current_scope()
                    if scope is not None and not getattr(response, "from_cache", False):
                        scope.answered = True  # (an answer made in process never reaches the adapter)
                    if is_cache_miss(response):
                        raise CacheMissError(
                            "offline mode and this request is not in the cache", path=path, error="Not Cached"
                        )
                    if response.status_code >= 400:
                        raise _refusal(response, content, path, str(settings.base_url))
                    formats = response.headers.get(FORMATS_HEADER)
                    if formats is not None:
                        self._arrow = ARROW_STREAM in formats
                        learned = self._bundles is None
                        self._bundles = BUNDLE_MEDIA in formats
                        if not self._peer or learned:
                            self._peer = True
                            self._remember_peer()
                    try:
                        result = decode(response, content)
                    except _BadBody as exc:
                        last_error = TransportError(str(exc), path=path)
                        fault = exc
                    except _NotAnObject:
                        raise TransportError("the service returned JSON that is not an object", path=path) from None
                    else:
                        _warn_if_stale(response, path)
                        return result
                if not budget.spend(method, url, fault):
                    break  # the policy is spent, or its backoff would end past the deadline
        raise last_error or TransportError("the request failed", path=path)

    def _body_fault(self, exc: transport.BodyReadError, path: str) -> TransportError:
        s = self.settings
        if exc.timed_out:
            return TransportError(
                f"no complete answer within {s.timeout:g} s per attempt, {s.call_deadline:g} s in all: {_brief(exc)}",
                path=path,
            )
        return TransportError(f"the response body was cut short: {_brief(exc)}", path=path)

    def _unreachable(self, exc: BaseException) -> str:
        """One line: which service, why it was chosen, what went wrong (in fdkit's words), what to do instead."""
        why, s = _why_unreachable(exc), self.settings
        if why.startswith(("connection refused", "the host name", "the connection could not be made")):
            return f"could not reach {self._describe_service()}: {why}"
        if why == "no answer in time":
            return (
                f"no answer from {self._describe_service()} within {s.timeout:g} s (timeout), on every attempt "
                f"the retry policy allows (the call's deadline is {s.call_deadline:g} s)"
            )
        return f"no answer from {self._describe_service()}: {why}, on every attempt the retry policy allows"

    def _describe_service(self) -> str:
        """The service's URL, why it was chosen and what to do instead (one line, never the key)."""
        s = self.settings
        why = ""
        if not s.embedded and s.api_key and s.base_url == PUBLIC_BASE_URL:
            why = (
                " (chosen because an API key is set; to use the bundled data offline instead, give no key: unset "
                "FINANCIAL_DATASETS_API_KEY and FDKIT_BASE_URL)"
            )
        elif not s.embedded:
            why = " (the configured base URL; with no key and no base URL fdkit serves its bundled data offline)"
        return f"{s.base_url}{why}"

    # -- one logical fetch ----------------------------------------------------------------------------------
    def fetch(
        self,
        endpoint: str | Endpoint,
        params: Mapping[str, Any] | None = None,
        *,
        refresh: bool = False,
        progress: bool | None = None,
    ) -> dict[str, Any]:
        """Fetch one endpoint, following every page, and return the merged JSON.

        For paginated endpoints the records of all pages (at most ``limit``) are merged under the response key
        and ``next_page_url`` is dropped; other top-level fields of the first page are kept.

        Args:
            endpoint: an endpoint name (``"prices"``) or :class:`~fdkit.catalog.Endpoint`.
            params: the service's parameters (query string, or JSON body for POST endpoints).
            refresh: bypass the cache.
            progress: page progress bar; defaults to the client's setting.

        Returns:
            The decoded JSON.

        Raises:
            BadRequestError: for a parameter the endpoint does not have (before anything is sent).

        Example:
            >>> body = Client().fetch("prices", {"ticker": "AAPL", "interval": "day",
            ...     "start_date": "2022-01-03", "end_date": "2022-01-31"})
            >>> len(body["prices"])
            20
        """
        ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
        clean = _clean_params(ep, params or {})
        query, body = (None, clean) if ep.method == "POST" else (clean, None)
        if not ep.paginated:
            return _with_payload(
                ep, self.request(ep.method, ep.path, params=query, json=body, ttl=ep.ttl, refresh=refresh)
            )
        self._ensure()
        fc, key = self._fetch_cache, fetch_key(ep.name, clean)
        if fc is not None and not refresh:
            hit = self._cached(fc, key, ep.path)
            if hit is not None:
                return orjson.loads(hit)

        def get(url: str | None, again: bool) -> dict[str, Any]:
            if url is None:
                return self.request(ep.method, ep.path, params=query, json=body, ttl=ep.ttl, refresh=refresh or again)
            return self.request("GET", url, ttl=ep.ttl, refresh=refresh or again)

        limit = clean.get("limit", ep.default_limit)
        show = self.settings.progress if progress is None else progress
        walked = collect(
            get,
            ep.response_key,
            limit=limit,
            progress=show,
            description=ep.name,
            record_key=ep.record_key,
            where=ep.path,
        )
        merged = {k: v for k, v in walked.first.items() if k != "next_page_url"}
        records = walked.records
        if ep.time_index and "limit" not in clean and limit and len(records) >= limit and clean.get("end_date"):
            records = self._continue_by_dates(ep, clean, records, limit, refresh)
        merged[ep.response_key] = records
        if fc is not None:
            fc.put(key, orjson.dumps(merged), ep.ttl)
        return merged

    def fetch_arrow(
        self, endpoint: str | Endpoint, params: Mapping[str, Any] | None = None, *, refresh: bool = False
    ) -> Part:
        """Fetch one list endpoint as typed Arrow columns, following every page (fdkit peers answer Arrow).

        The same walk as :meth:`fetch` (:func:`fdkit.client.paging.collect`: loop and runaway guards, a restart on a
        rejected cursor, ``limit``, a date range continued past one request's cap), over Arrow pages; a page the
        service answers in JSON is turned into columns by the same code as the JSON path, so the frame is the same.

        Args:
            endpoint: an endpoint name or :class:`~fdkit.catalog.Endpoint` (GET, list).
            params: the service's parameters.
            refresh: bypass the cache.

        Returns:
            ``(arrow table, rows, constants)``, as :func:`fdkit.frames.frame_from_parts` assembles.

        Example:
            >>> from fdkit.frames import frame_from_parts
            >>> q = {"ticker": "AAPL", "interval": "day", "start_date": "2022-01-03", "end_date": "2022-01-31"}
            >>> len(frame_from_parts("prices", [Client().fetch_arrow("prices", q)], q))
            20
        """
        ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
        clean = _clean_params(ep, params or {})

        def get(url: str | None, again: bool) -> dict[str, Any]:
            part, body, nxt = self.request_page(
                url or ep.path, params=clean if url is None else None, ttl=ep.ttl, refresh=refresh or again
            )
            if part is None:  # a JSON answer (a service that does not speak Arrow after all): its columns
                part = response_part(ep, clean, _with_payload(ep, body or {}))
            return {"next_page_url": nxt, "part": part}

        limit = clean.get("limit", ep.default_limit)
        walked = collect(
            get,
            ep.response_key,
            limit=limit,
            progress=False,
            description=ep.name,
            chunk=lambda page: PageRows(page["part"]),
        )
        part = join_parts([c.part for c in walked.chunks], limit)
        when = ep.time_index
        if when and "limit" not in clean and limit and part[1] >= limit and clean.get("end_date"):
            part = self._continue_arrow_by_dates(ep, clean, part, limit, refresh)
        return part

    def _continue_arrow_by_dates(
        self, ep: Endpoint, clean: dict[str, Any], part: Part, cap: int, refresh: bool
    ) -> Part:
        """:meth:`_continue_by_dates` over Arrow parts: window after window from the day of the last bar."""
        when = ep.time_index or "time"
        parts = [part]
        end = pd.Timestamp(str(clean["end_date"])) + pd.Timedelta(days=1)
        for _ in range(10_000):  # a bound, never reached: each window moves the start forward
            column = parts[-1][0].column(when)
            if not len(column):
                break
            last = pd.Timestamp(column[-1].as_py())
            if (last.tz_convert(None) if last.tzinfo else last) >= end:
                break
            more = self.fetch_arrow(ep, {**clean, "start_date": f"{last:%Y-%m-%d}", "limit": cap}, refresh=refresh)
            fresh = more[0].filter(pc.greater(more[0].column(when), column[-1]))
            if not fresh.num_rows:
                break
            parts.append((fresh, fresh.num_rows, more[2]))
            if more[1] < cap:
                break
        return join_parts(parts)

    def _continue_by_dates(
        self, ep: Endpoint, clean: dict[str, Any], records: list[Any], cap: int, refresh: bool
    ) -> list[Any]:
        """A date range longer than one request's cap (5,000 bars) is fetched whole, window after window.

        Each next window starts on the day of the last bar received; bars at or before that bar are dropped, so
        the windows join without gaps or repeats. Only when the caller gave no ``limit``.
        """
        when = ep.time_index or "time"
        out = list(records)
        for _ in range(10_000):  # a bound, never reached: each window moves the start forward
            last = str(out[-1].get(when) or "")
            if not last or last[:10] > str(clean["end_date"]):
                break
            window = {**clean, "start_date": last[:10]}
            if "limit" not in ep.extension_params or self.speaks_fdkit():  # else the service's own cap pages
                window["limit"] = cap
            more = self.fetch(ep, window, refresh=refresh, progress=False).get(ep.response_key) or []
            fresh = [r for r in more if str(r.get(when) or "") > last]
            out.extend(fresh)
            if not fresh or len(more) < cap:
                break
        return out

    def keeps_fetches(self) -> bool:
        """Whether :meth:`memoized` keeps what it produces (the client has a fetch cache: ``cache=True``).

        Example:
            >>> Client(cache=False).keeps_fetches()
            False
        """
        self._ensure()
        return self._fetch_cache is not None

    def memoized(self, key: str, ttl: int, produce: Callable[[], bytes], *, refresh: bool = False) -> bytes:
        """Bytes derived from fetched answers (typed frame parts), kept in the fetch cache next to the HTTP cache.

        Offline, a stale entry is still served. Without a cache the bytes are produced every time.

        Args:
            key: the entry's key (it must name everything the bytes depend on).
            ttl: lifetime in seconds (``-1``: never expires).
            produce: makes the bytes on a miss (it may fetch).
            refresh: ignore a cached entry.

        Returns:
            The bytes.

        Example:
            >>> Client(cache=False).memoized("k", 60, lambda: b"v")
            b'v'
        """
        self._ensure()
        fc = self._fetch_cache
        if fc is not None and not refresh:
            hit = self._cached(fc, key, key.split(":", 1)[0])
            if hit is not None:  # a ticker kept as its run of a bulk answer's table: that slice's bytes
                hit = resolved(hit, lambda table: self._cached(fc, table, "table"))
            if hit is not None:
                return hit
        data = produce()
        if fc is not None:
            fc.put(key, data, ttl)
        return data

    def _cached(self, fc: FetchCache, key: str, what: str) -> bytes | None:
        """A fetch-cache hit (offline: stale ones too, with a warning naming their age).

        Parts of the endpoint an earlier bulk call is still keeping in the background are waited for first (an
        offline call right after it reads them).
        """
        wait_for_writes(key)
        offline = self.settings.offline
        hit = fc.entry(key, allow_stale=offline, offline=offline)
        if hit is None:
            return None
        body, late = hit
        if late > 0:
            warn_user(
                f"fdkit: {what}: serving a cached answer that expired {late / 3600:.1f} h ago (offline; "
                "to fetch again: fdkit.configure(offline=False), or unset FDKIT_OFFLINE)",
                StaleDataWarning,
            )
        return body

    def clean_params(self, endpoint: str | Endpoint, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """The parameters as they are sent: unknown names refused, ``None`` dropped, dates and flags as text.

        Args:
            endpoint: endpoint name or object.
            params: the caller's parameters.

        Returns:
            The wire parameters.

        Raises:
            BadRequestError: naming a parameter the endpoint does not have.

        Example:
            >>> Client(cache=False).clean_params("news", {"ticker": "AAPL", "limit": None})
            {'ticker': 'AAPL'}
        """
        ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
        return _clean_params(ep, params or {})

    def concurrency(self) -> int:
        """Requests a multi-ticker call keeps in flight: ``max_workers``, fewer where more would only contend.

        The embedded service runs in this process (:data:`fdkit.client.embedded.MAX_WORKERS`, 2); ``fdkit serve``
        on loopback shares this machine's cores (at most their number, and 2); any other service (remote, or a
        proxy or stub on loopback in front of one) has latency to hide.

        Example:
            >>> Client().concurrency()
            2
        """
        self._ensure()
        most = self.settings.max_workers
        if self.settings.embedded:  # the service runs in this process: more threads only contend (BENCHMARKS.md)
            return min(most, embedded.MAX_WORKERS)
        if is_loopback(self.settings.base_url) and self.speaks_fdkit():  # this machine's cores: no latency to hide
            return min(most, max(2, os.cpu_count() or 2))
        return most

    def fetch_many(
        self,
        endpoint: str | Endpoint,
        params_list: Sequence[Mapping[str, Any]],
        *,
        errors: Errors = "raise",
        refresh: bool = False,
        progress: bool | None = None,
        label: Callable[[Mapping[str, Any]], str] | None = None,
        fetch: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> tuple[list[tuple[Mapping[str, Any], Any]], dict[str, FdkitError]]:
        """Fetch several requests of one endpoint concurrently (bounded pool), in input order.

        Args:
            endpoint: endpoint name or object.
            params_list: one parameter mapping per request (typically one per ticker).
            errors: ``raise`` the first failure after all finished, ``warn`` and skip, or ``ignore`` and skip.
            refresh: bypass the cache.
            progress: a per-request progress bar; defaults to the client's setting.
            label: names a request in error reports (default: its ticker).
            fetch: what to do per request (default: :meth:`fetch`, the merged JSON); the dataset functions pass
                :func:`fdkit.client.parts.fetch_part`, which answers typed columns from the fetch cache.

        Returns:
            ``(results, failures)``: the successful ``(params, body or part)`` pairs in input order and the
            failures by label (the dataset functions name them in the frame's ``attrs["missing"]``, see
            :func:`fdkit.client.dispatch.call`).

        Raises:
            FdkitError: with ``errors="raise"``, the first failure in input order.

        Example:
            >>> ok, failed = Client().fetch_many("company_facts", [{"ticker": "AAPL"}, {"ticker": "MSFT"}])
            >>> [b["company_facts"]["ticker"] for _, b in ok], failed
            (['AAPL', 'MSFT'], {})
        """
        if errors not in ("raise", "warn", "ignore"):
            raise BadRequestError(f"errors must be 'raise', 'warn' or 'ignore', not {errors!r}")
        ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
        name = label or (lambda p: str(p.get(ep.ticker_param or "ticker", p)))
        workers = max(1, min(self.concurrency(), len(params_list)))
        show = progress_enabled(self.settings.progress if progress is None else progress) and len(params_list) > 1

        scope = transport.current_scope()  # the worker threads' requests are part of the caller's call

        def one(p: Mapping[str, Any]) -> Any:
            try:
                with transport.within(scope):
                    if fetch is not None:
                        return fetch(p)
                    return self.fetch(ep, p, refresh=refresh, progress=False)
            except LakeError:
                raise  # no lake is no per-ticker failure: never skipped by errors="ignore"
            except FdkitError as exc:
                return exc

        if workers == 1:
            outcomes: Iterable[Any] = map(one, params_list)
        else:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fdkit")
            outcomes = pool.map(one, params_list)
        if show:
            outcomes = progress_bar(outcomes, total=len(params_list), desc=ep.name, unit="req", leave=False)
        results: list[tuple[Mapping[str, Any], Any]] = []
        failures: dict[str, FdkitError] = {}
        try:
            for p, outcome in zip(params_list, outcomes, strict=True):
                if isinstance(outcome, FdkitError):
                    failures[name(p)] = outcome
                else:
                    results.append((p, outcome))
        finally:
            if workers > 1:
                pool.shutdown(wait=True)
        report_failures(ep, failures, errors)
        return results, failures


def _bundle_of(response: requests.Response, content: bytes) -> Bundle:
    """A bulk answer's entries (a body cut short is asked again, as a broken page is)."""
    if not response.headers.get("content-type", "").startswith(BUNDLE_MEDIA):
        raise _BadBody("the service did not answer the bulk request with a bundle")
    try:
        entries = read_bundle(content)
    except BrokenBundle as exc:
        raise _BadBody(f"the service returned a broken bundle: {exc}") from None
    compression = response.headers.get(PART_COMPRESSION_HEADER, "zstd")
    return Bundle(entries, None if compression == "none" else compression)


def _with_payload(ep: Endpoint, body: dict[str, Any]) -> dict[str, Any]:
    """The answer, if it has the key its endpoint keeps its records under (never read as "no records").

    A document answer (no response key: ``/filings/items/types``) is its own payload.
    """
    if ep.response_key and not any(k in body for k in SHAPES[ep.shape].wrapper_keys(ep.response_key)):
        raise MissingPayloadError.of(ep.path, ep.response_key, body)
    return body


def _clean_params(ep: Endpoint, params: Mapping[str, Any]) -> dict[str, Any]:
    known = set(ep.param_names)
    unknown = [k for k, v in params.items() if v is not None and k not in known]
    if unknown:
        raise BadRequestError(
            f"{ep.path} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters are: {', '.join(ep.param_names) or 'none'}",
            error="Invalid parameter",
            path=ep.path,
        )
    out: dict[str, Any] = {}
    for k, v in params.items():
        if v is None:
            continue
        if hasattr(v, "isoformat") and (ep.method == "GET" or ep.param(k).type == "date"):
            v = v.isoformat()[:10] if ep.param(k).type == "date" else v.isoformat()
        elif isinstance(v, bool) and ep.method == "GET":
            v = "true" if v else "false"
        check_value(ep, k, v)  # a value of the wrong type is refused before anything is sent
        out[k] = v
    return out


def _brief(exc: BaseException, most: int = 200) -> str:
    text = " ".join(str(exc).split())  # one line
    return redact(text[:most] + ("..." if len(text) > most else ""))


def _why_unreachable(exc: BaseException) -> str:
    """The root of a connection failure in a few words of fdkit's own (``connection refused``, ``reset``)."""
    return redact(transport.plain_reason(exc))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _refusal(response: requests.Response, content: bytes, path: str, base_url: str) -> FdkitError:
    """The error a 4xx or 5xx answer is: the service's own, or another server's page named as such.

    A kept answer past its time (an expired 404 served because the service failed now) says so, as a 200 does.
    """
    foreign = _not_the_service(response, content, base_url)
    if foreign is not None:
        return foreign(path)
    _warn_if_stale(response, path)  # an expired kept 404, served because the service failed now
    failed = error_for_status(response.status_code, _decode_quietly(content), path, retry_after=_retry_after(response))
    return name_the_listing(failed, path)


def _warn_if_stale(response: requests.Response, path: str) -> None:
    """An expired cached answer (offline, or served because the service failed) says so, with its age."""
    from datetime import datetime

    if not getattr(response, "from_cache", False) or not getattr(response, "is_expired", False):
        return
    created = getattr(response, "created_at", None)
    age = ""
    if created is not None:
        now = datetime.now(UTC) if created.tzinfo else datetime.utcnow()
        age = f" {(now - created).total_seconds() / 3600:.1f} h old"
    warn_user(
        f"fdkit: {path}: serving an expired cached answer{age} (offline, or the service failed)", StaleDataWarning
    )


def _not_the_service(response: requests.Response, content: bytes, base_url: str) -> Callable[[str], FdkitError] | None:
    """An error answer that is not the service's ``{"error", "message"}`` JSON (another web server's HTML page).

    Returns what builds the error for the request's path (the status's own class, a message naming the status and
    saying the base URL does not look like a Financial Data Service; never the page), or ``None`` for the service's
    own JSON error.
    """
    from http import HTTPStatus

    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict):
        return None
    status = response.status_code
    try:
        phrase = f" {HTTPStatus(status).phrase}"
    except ValueError:
        phrase = ""
    media = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    if not content.strip():
        kind = "an empty body"
    elif "html" in media or content.lstrip()[:1] == b"<":
        kind = "an HTML page"
    else:
        kind = f"a {media} body"
    if status >= 500:
        where = "a proxy or gateway answered, or the base URL is not a Financial Data Service"
    else:
        where = "the base URL does not look like a Financial Data Service"
    message = (
        f"{base_url} answered HTTP {status}{phrase} with {kind}, not the service's JSON error "
        f'{{"error", "message"}}: {where} (fdkit serve, or {PUBLIC_BASE_URL})'
    )

    def build(path: str) -> FdkitError:
        said = {"error": "Not a Financial Data Service", "message": message}
        return error_for_status(status, said, path, retry_after=_retry_after(response))

    return build


def _decode_quietly(content: bytes) -> Any:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return content.decode("utf-8", "replace")


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


_DEFAULT: Client | None = None
_DEFAULT_GENERATION = -1
_DEFAULT_LOCK = threading.Lock()


def default_client() -> Client:
    """Return the process-wide client used by ``fdkit.<dataset>(...)`` functions.

    Returns:
        The default :class:`Client` (rebuilt after :func:`fdkit.configure`).

    Example:
        >>> default_client() is default_client()
        True
    """
    global _DEFAULT, _DEFAULT_GENERATION
    with _DEFAULT_LOCK:
        now = config_generation()
        if _DEFAULT is not None and _DEFAULT_GENERATION != now:
            _DEFAULT.close()
            _DEFAULT = None
        if _DEFAULT is None:
            _DEFAULT, _DEFAULT_GENERATION = Client(), now
        return _DEFAULT


_ACCEPT_ARROW = f"{ARROW_STREAM}, application/json;q=0.9"


class _BadBody(Exception):
    """A 2xx body that cannot be what it says (truncated JSON, a broken Arrow stream): worth asking again."""


class _NotAnObject(Exception):
    """JSON that is not an object: the service answered something else than its API."""


def _json_object(response: requests.Response, content: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        raise _BadBody("the service returned invalid JSON (truncated body?)") from None
    if not isinstance(body, dict):
        raise _NotAnObject
    return body


def _page_of(response: requests.Response, content: bytes) -> tuple[Part | None, dict[str, Any] | None, str | None]:
    """An Arrow page (its part and the ``Link: rel=next`` URL) or a JSON page (its body and ``next_page_url``)."""
    if response.headers.get("content-type", "").startswith(ARROW_STREAM):
        try:
            part = part_from_bytes(content)
        except (pa.ArrowInvalid, KeyError, ValueError):
            raise _BadBody("the service returned a broken Arrow page (truncated body?)") from None
        return part, None, response.links.get("next", {}).get("url")
    body = _json_object(response, content)
    nxt = body.get("next_page_url")
    return None, body, nxt if isinstance(nxt, str) and nxt else None
