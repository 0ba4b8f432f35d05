"""The FastAPI application, its routes generated from the endpoint catalog.

Each request goes: auth (401/402) -> parameters (400) -> handler over the lake (404) -> page with a signed cursor.
Every error body is ``{"error": str, "message": str}``; no traceback ever reaches a client.

The routes are those of one contract (:mod:`fdkit.catalog.contracts`): under the seed's (the default) every
route requires a valid ``X-API-KEY``; under the 2026 document's, all but the listings it leaves open
(``security: []``, ``Endpoint.auth=False``). Each answered page given with a valid key is metered
(:mod:`fdkit.server.usage`): ``X-FDS-Usage`` on the answer, ``GET /usage`` for the caller's own count, every
key's count (by a redacted id) on stderr when ``fdkit serve`` shuts down. ``/docs`` is Swagger UI and ``/redoc``
ReDoc, from assets the server ships (no CDN: they work offline); ``/`` sends a browser to ``/docs`` and answers
other clients the links as JSON.

Example:
    >>> from fdkit.lake import default_data_dir
    >>> app = create_app(default_data_dir())
    >>> sorted(r.path for r in app.routes if r.path.startswith("/prices"))[:2]
    ['/prices', '/prices/']
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import orjson
import pyarrow as pa
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from fdkit.catalog.contracts import DEFAULT_CONTRACT, catalog_for, check_contract
from fdkit.catalog.endpoints import Endpoint
from fdkit.catalog.params import validate_body, validate_query, validate_value
from fdkit.errors import (
    AuthenticationError,
    BadRequestError,
    FdkitError,
    InvalidCursorError,
    LakeError,
    PaymentRequiredError,
    without_backtrace,
)
from fdkit.frames.bundle import BUNDLE_MEDIA, PART_COMPRESSION_HEADER, RowsOf, SharedTable, bundle_chunks
from fdkit.frames.typed import (
    ARROW_STREAM,
    FORMATS_HEADER,
    PART_COMPRESSION,
    part_bytes,
    part_of_rows,
    records_of,
    response_part,
)
from fdkit.server import reported  # noqa: F401  (registers the as-reported handlers)
from fdkit.server.auth import Keys, load_keys, plan_allows
from fdkit.server.bulk import BULK_PREFIX, MAX_BULK_TICKERS, bulk_endpoint, bulk_entries
from fdkit.server.cursors import CursorSigner
from fdkit.server.docs import DOCS_ASSETS_PATH, docs_asset, docs_page, index, redoc_page
from fdkit.server.handlers import answers_at_once, handle
from fdkit.server.memo import PAGE_OVERHEAD, AnswerMemo, compact, deep_bytes, object_bytes
from fdkit.server.openapi import IGNORED_HEADER, build_openapi, package_version
from fdkit.server.rows import FrameRecords, encode_lazy
from fdkit.server.store import DEFAULT_MEMORY_BYTES, STALE_HEADER, Store, parse_bytes
from fdkit.server.usage import USAGE_HEADER, Usage, key_id
from fdkit.wire.responses import error_response, http_status, json_response, problem_response, read_capped

__all__ = ["create_app", "app_from_env", "DirectRoutes", "bulk_answer"]

#: an :class:`~fdkit.server.handlers.Answer` object itself (its attributes), measured with tracemalloc
ANSWER_BYTES = 256

#: advertised on every data answer (FORMATS_HEADER): JSON, Arrow pages, and bundles of many tickers' parts (the bulk
#: routes, :mod:`fdkit.server.bulk`)
_FORMATS = f"application/json, {ARROW_STREAM}, {BUNDLE_MEDIA}"
#: rows of one Arrow page: fewer, larger pages between peers (the cursor is an offset, so pages of either size mix)
ARROW_PAGE_ROWS = 50_000

log = logging.getLogger("fdkit.server")

MISSING_KEY = "Please include an X-API-KEY header in your request."


def create_app(
    data: str | os.PathLike[str],
    keys: Keys | str | os.PathLike[str] | None = None,
    *,
    cursor_secret: bytes | None = None,
    store: Store | None = None,
    public_url: str | None = None,
    memo_bytes: int = 128 * 2**20,
    max_body_bytes: int = 2**20,
    arrow: bool = True,
    page_bytes: int = 16 * 2**20,
    memory_bytes: int | None = None,
    contract: str | None = None,
) -> FastAPI:
    """Build the service app over a lake.

    Args:
        data: lake directory.
        keys: :class:`~fdkit.server.auth.Keys`, a keys file, or ``None`` (``FDKIT_SERVER_KEYS`` or a generated key).
        cursor_secret: HMAC key for cursors (random when ``None``).
        store: a ready :class:`Store` (tests share one across apps).
        public_url: the base URL clients reach the service at; ``next_page_url`` links are built on it, never on a
            request's ``Host`` header (``None``: the address the request came in on, for in-process servers).
        memo_bytes: the memo of answers is bounded by this many bytes (of JSON).
        max_body_bytes: a larger POST body is refused with 413 while it is read.
        arrow: answer Arrow pages to requests that accept them, and say so (``X-Fdkit-Formats``); ``False``
            serves JSON only, as the public service does.
        page_bytes: the pages sent are kept (their bytes, up to this many), so a page asked again costs a lookup.
        memory_bytes: the lake data the store keeps in memory is bounded by this many bytes (default
            :data:`fdkit.server.store.DEFAULT_MEMORY_BYTES`; ignored with ``store``).
        contract: ``"seed"`` (every endpoint needs a key, ...) or ``"2026"`` (the 2026 document's);
            :mod:`fdkit.catalog.contracts` lists where they differ. ``None``: ``FDKIT_CONTRACT``, else the seed's
            (:func:`contract_from_env`).

    Returns:
        The FastAPI app; ``app.state.keys`` holds the keys, ``app.state.usage`` the metered requests per key,
        ``app.state.catalog`` the endpoints it serves.

    Raises:
        LakeError: when ``data`` is missing or holds no dataset.
        UnknownNameError: for a contract the service does not keep.
    """
    contract = contract_from_env() if contract is None else check_contract(contract)
    served = catalog_for(contract)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        # at shutdown (a server run with its lifespan, as ``fdkit serve``): every key's usage, by its redacted id
        print(f"fdkit serve: {app.state.usage.summary(app.state.keys.plans)}", file=sys.stderr, flush=True)

    app = FastAPI(
        title="Financial Data Service (fdkit serve)",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    # a missing or empty lake is a startup error naming the path, never a 404 per ticker
    app.state.store = store or Store.open(data, memory_bytes=memory_bytes or DEFAULT_MEMORY_BYTES)
    app.state.keys = keys if isinstance(keys, Keys) else load_keys(keys)
    app.state.signer = CursorSigner(cursor_secret or cursor_secret_from_env() or secrets.token_bytes(32))
    store_ = app.state.store

    memo = AnswerMemo(memo_bytes)
    app.state.memo = memo
    app.state.public_url = public_url.rstrip("/") if public_url else None
    app.state.max_body_bytes = max_body_bytes
    app.state.arrow = arrow
    app.state.usage = Usage()
    app.state.contract = contract
    app.state.catalog = served

    def answer_for(ep: Endpoint, query: dict[str, Any], key: tuple[str, bytes]) -> Any:
        """Answer a validated query, memoised under ``key`` (:func:`_memo_key`; bounded by bytes).

        The lake does not change while it is served, so the pages of one walk (and repeated requests) do not
        recompute the query.
        """
        return memo.get_or_make(key, lambda: handle(store_, ep, query), _answer_size)

    app.state.answer_for = answer_for
    # the bytes of pages sent (a page asked again is sent again without any work), bounded by bytes
    app.state.pages = AnswerMemo(page_bytes)
    openapi_doc = build_openapi(contract=contract)

    @app.exception_handler(FdkitError)
    async def _fdkit_error(request: Request, exc: FdkitError) -> Response:
        return problem_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _http_error_response(app, request, exc)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
        return error_response(400, "Bad Request", "invalid request")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s", request.url.path)
        return error_response(500, "Internal Server Error", "the server failed to answer; please retry")

    @app.get("/openapi.json", include_in_schema=False)
    def _openapi() -> Response:
        return json_response(openapi_doc)

    @app.get("/", include_in_schema=False)
    def _index(request: Request) -> Response:
        return index(request.headers.get("accept", ""), app.title, package_version())

    @app.get("/docs", include_in_schema=False)
    def _docs() -> Response:
        return docs_page("/openapi.json", "Financial Data Service")

    @app.get("/redoc", include_in_schema=False)
    def _redoc() -> Response:
        return redoc_page("/openapi.json", "Financial Data Service")

    @app.get(DOCS_ASSETS_PATH + "/{name}", include_in_schema=False)
    def _docs_asset(name: str) -> Response:
        return docs_asset(name)

    @app.get("/usage", include_in_schema=False)
    def _usage(request: Request) -> Response:
        """The caller's own metered requests (never metered itself); 401 without a valid key."""
        try:
            key = _valid_key(request)
        except FdkitError as exc:
            return problem_response(exc)
        keys: Keys = request.app.state.keys
        return json_response(
            {"key_id": key_id(key), "plan": keys.plan_of(key), "requests": request.app.state.usage.count(key)}
        )

    @app.get("/healthz", include_in_schema=False)
    def _health() -> Response:
        return json_response({"status": "ok"})

    direct: dict[tuple[str, str], Any] = {}
    for ep in served.values():
        route = _add_route(app, ep)
        for path in (ep.path, ep.path + "/"):
            direct[(ep.method, path)] = route
        if bulk_endpoint(ep):
            bulk = _add_bulk_route(app, ep)
            for path in (BULK_PREFIX + ep.path, BULK_PREFIX + ep.path + "/"):
                direct[("POST", path)] = bulk
    app.add_middleware(DirectRoutes, routes=direct)
    return app


def _http_error_response(app: FastAPI, request: Request, exc: StarletteHTTPException) -> Response:
    """A 404 or 405 of a path or method no route takes, as ``{"error", "message"}`` (a 405 with its ``Allow``)."""
    titles = {404: "Not Found", 405: "Method Not Allowed"}
    msg = f"no route {request.method} {request.url.path}" if exc.status_code in (404, 405) else str(exc.detail)
    headers = dict(exc.headers or {})
    if exc.status_code == 405 and "allow" not in {k.lower() for k in headers}:
        paths = [r for r in app.routes if getattr(r, "path", None) == request.url.path]
        allowed = sorted({m for r in paths for m in getattr(r, "methods", ()) or ()})
        if allowed:
            headers["Allow"] = ", ".join(allowed)
    return error_response(exc.status_code, titles.get(exc.status_code, "Error"), msg, headers or None)


class DirectRoutes:
    """ASGI middleware: a request for a catalog route goes to its function by one dict lookup.

    Starlette's router tries every route's pattern in turn (about 100 here) and wraps the call in two more
    layers; the catalog's routes are plain paths, so a lookup finds them. Anything else (``/docs``, unknown paths,
    a method a path does not take) continues to FastAPI, which answers it as before (404, 405 with ``Allow``).

    Args:
        app: the next ASGI app.
        routes: ``(method, path)`` -> the route's function.
    """

    def __init__(self, app: Any, routes: dict[tuple[str, str], Any]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:  # noqa: D102
        if scope["type"] == "http":
            route = self.routes.get((scope["method"], scope["path"]))
            if route is not None:
                response = await route(Request(scope, receive))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _add_route(app: FastAPI, ep: Endpoint) -> Callable[[Request], Awaitable[Response]]:
    async def route(request: Request) -> Response:
        # liberal in what it accepts, as the real service: names it does not know are ignored, and named in a
        # header so that a typo is visible without breaking a client written for another version of the API
        ignored: list[str] = []
        try:
            api_key = _authorize(request, ep)
            if ep.method == "POST":
                raw = await read_capped(request, request.app.state.max_body_bytes)
                try:
                    body = orjson.loads(raw) if raw else None
                except orjson.JSONDecodeError:
                    raise BadRequestError("the request body is not valid JSON", error="Invalid JSON") from None
                if body is None:
                    raise BadRequestError("this endpoint takes a JSON body", error="Missing body")
                ignored.extend(dict.fromkeys(k for k, _ in request.query_params.multi_items()))
                query, offset = validate_body(ep, body, ignored=ignored), 0
            else:
                query, offset = _query_and_offset(request, ep, ignored)
            state = request.app.state
            arrow = _wants_arrow(request, ep)
            page_rows = max(ep.page_size or 0, ARROW_PAGE_ROWS) if arrow else ep.page_size
            if state.store.changed():  # the lake was written to (e.g. a webhook landing): answer afresh
                state.memo.clear()
                state.pages.clear()
            key = _memo_key(ep, query)
            base = state.public_url or str(request.base_url).rstrip("/")
            page_key = (key, offset, page_rows, query.get("limit"), base, arrow)
            page = state.pages.peek(page_key)
            if page is None:
                if state.memo.peek(key) is not None or answers_at_once(state.store, ep, query):
                    page = _page(request, ep, query, key, offset, page_rows, arrow)  # microseconds: no thread hop
                else:
                    page = await run_in_threadpool(_page, request, ep, query, key, offset, page_rows, arrow)
                page = (compact(page[0]), *page[1:])  # orjson's buffer is up to 3x the page's length
                state.pages.get_or_make(page_key, lambda: page, lambda p: len(p[0]) + PAGE_OVERHEAD)
            body, media, extra = page
            headers = {FORMATS_HEADER: _FORMATS} if state.arrow else {}
            headers.update(extra)
            headers.update(_stale_header(state.store))
            headers.update(_ignored_header(ignored) or {})
            if api_key is not None:  # one metered request per page answered
                headers[USAGE_HEADER] = str(state.usage.record(api_key))
            return Response(body, media_type=media, headers=headers)
        except FdkitError as exc:  # the one error vocabulary: the classes the client raises
            return _refusal(request, ep, exc, ignored)
        except Exception as exc:  # a file of the lake that cannot be read: say which dataset
            gone = request.app.state.store.unreachable(exc)
            if gone is not None:
                log.warning("%s (on %s)", gone.message, request.url.path)
                return problem_response(gone)
            if not is_unreadable(exc):
                raise
            log.exception("the dataset %s of the lake could not be read on %s", ep.dataset, request.url.path)
            return problem_response(unreadable(ep, exc))

    route.__name__ = ep.name
    for path in (ep.path, ep.path + "/"):
        app.add_api_route(path, route, methods=[ep.method], include_in_schema=False)
    return route


def _refusal(request: Request, ep: Endpoint, exc: FdkitError, ignored: list[str]) -> Response:
    """The answer of a catalog route that raised one of fdkit's errors: its status and ``{"error", "message"}``.

    A lake whose object store did not answer within its bounds is a 503 (retry later); a dataset whose table cannot
    be opened (its Delta log) is named as unreadable; any other error is answered as it is, with the ignored
    parameters' header and, from a service that speaks them, fdkit's formats (a 401 too: a client's probe learns
    from it that the service is fdkit's).
    """
    gone = request.app.state.store.unreachable(exc)
    if gone is not None:
        log.warning("%s (on %s)", gone.message, request.url.path)
        return problem_response(gone)
    if is_unreadable(exc):
        log.error("the dataset %s of the lake could not be read on %s: %s", ep.dataset, request.url.path, exc.message)
        return problem_response(unreadable(ep, exc))
    response = problem_response(exc)
    response.headers.update(_ignored_header(ignored) or {})
    if request.app.state.arrow:
        response.headers[FORMATS_HEADER] = _FORMATS
    return response


def _add_bulk_route(app: FastAPI, ep: Endpoint) -> Callable[[Request], Awaitable[Response]]:
    """``POST /bulk<path>``: the endpoint's query in the query string, ``{"tickers": [...]}`` in the body.

    The answer is a bundle (:mod:`fdkit.frames.bundle`): each ticker's part or error, in the order asked
    (:mod:`fdkit.server.bulk`), streamed as it is made; a ticker the parameter does not take is its own 400 entry.
    A request wrong as a whole (its query, its body, its key) is answered as the endpoint's own request would be:
    ``{"error", "message"}`` with its status. Each ticker answered with a part is one metered request (``GET
    /usage``; the answer has no ``X-FDS-Usage``, its count not being known before the body is made).
    """

    async def route(request: Request) -> Response:
        try:
            raw = await read_capped(request, request.app.state.max_body_bytes)
        except FdkitError as exc:
            return problem_response(exc)
        status, media, headers, chunks = await run_in_threadpool(
            bulk_answer,
            request.app.state,
            ep,
            request.query_params.multi_items(),
            raw,
            request.headers.get("x-api-key"),
        )
        if status != 200:
            return Response(b"".join(chunks), status_code=status, media_type=media, headers=headers)
        return StreamingResponse(chunks, media_type=media, headers=headers)

    route.__name__ = f"{ep.name}_bulk"
    for path in (BULK_PREFIX + ep.path, BULK_PREFIX + ep.path + "/"):
        app.add_api_route(path, route, methods=["POST"], include_in_schema=False)
    return route


Answered = tuple[int, str, dict[str, str], Iterator[bytes | memoryview]]


def bulk_answer(
    state: Any,
    ep: Endpoint,
    items: list[tuple[str, str]],
    raw: bytes,
    api_key: str | None,
    *,
    compression: str | None = PART_COMPRESSION,
) -> Answered:
    """A bulk request's status, media type, headers and body chunks.

    The route's answer, and the embedded default's in process (:func:`fdkit.server.bulk_in_process`: the same
    bytes without the loopback hop).

    The lake is read before this returns (its faults are the request's status); the body's entries after the first
    are made as the chunks are asked for.

    Args:
        state: the app's state (``app.state``).
        ep: a bulk endpoint.
        items: the query string's items.
        raw: the body.
        api_key: the request's ``X-API-KEY``.
        compression: of the parts (``None`` in process: the client compresses what it keeps, later); said in
            the ``X-Fdkit-Part-Compression`` header.

    Returns:
        ``(status, media type, headers, chunks)``.
    """
    ignored: list[str] = []
    try:
        key = _authorize_key(state, ep, api_key)
        tickers, whole_range, tables = _bulk_body(raw)
        refused = _refused_tickers(ep, tickers)  # each ticker checked as its own request's would be: its own 400
        valid = [t for t in tickers if t not in refused]
        kept = [(k, v) for k, v in items if k != "ticker"]
        if len(kept) < len(items):
            ignored.append("ticker")  # the body's tickers are the request's
        query = validate_query(ep, [*kept, ("ticker", valid[0] if valid else "A")], ignored=ignored)
        if state.store.changed():
            state.memo.clear()
            state.pages.clear()
        entries = bulk_entries(
            state.store, ep, query, valid, whole_range=whole_range, compression=compression, tables=tables
        )
        first = next(entries, None)  # the read: its faults are the request's
    except FdkitError as exc:
        gone = state.store.unreachable(exc)
        if gone is not None:
            log.warning("%s (bulk %s)", gone.message, ep.path)
            return _problem(problem_response(gone))
        if is_unreadable(exc):
            log.error("the dataset %s of the lake could not be read (bulk %s): %s", ep.dataset, ep.path, exc.message)
            return _problem(problem_response(unreadable(ep, exc)))
        return _problem(problem_response(exc, _ignored_header(ignored)))
    except Exception as exc:
        gone = state.store.unreachable(exc)
        if gone is not None:
            log.warning("%s (bulk %s)", gone.message, ep.path)
            return _problem(problem_response(gone))
        if not is_unreadable(exc):
            raise
        log.exception("the dataset %s of the lake could not be read (bulk %s)", ep.dataset, ep.path)
        return _problem(problem_response(unreadable(ep, exc)))
    headers = {
        FORMATS_HEADER: _FORMATS,
        PART_COMPRESSION_HEADER: compression or "none",
        **(_ignored_header(ignored) or {}),
    }
    answered = _chain([first] if first is not None else [], entries)
    return 200, BUNDLE_MEDIA, headers, bundle_chunks(_metered(state, key, _in_order(tickers, refused, answered)))


def _refused_tickers(ep: Endpoint, tickers: list[str]) -> dict[str, tuple[int, str, str]]:
    """The tickers of a bulk request the ``ticker`` parameter does not take, each with its 400."""
    refused = {}
    p = ep.param("ticker")
    plain = _PLAIN_TICKER if p.pattern is None and p.enum is None else None
    for t in tickers:
        if plain is not None and plain.fullmatch(t):  # (text the parameter takes: the common case, checked at once)
            continue
        try:
            validate_value(ep, "ticker", t)
        except FdkitError as exc:
            refused[t] = (http_status(exc), exc.error or "Invalid parameter", exc.message)
    return refused


#: a symbol that a ticker parameter without a pattern or vocabulary takes as it is
_PLAIN_TICKER = re.compile(r"[A-Z0-9][A-Z0-9.^=-]{0,15}")


def _in_order(tickers: list[str], refused: dict[str, tuple[int, str, str]], answered: Iterator[Any]) -> Iterator[Any]:
    """The entries in the order asked: the refused tickers' 400s between the answered ones' (shared tables as met)."""
    for t in tickers:
        if t in refused:
            yield t, refused[t]
            continue
        entry = next(answered)
        while isinstance(entry[1], SharedTable):
            yield entry
            entry = next(answered)
        yield entry


def _metered(state: Any, key: str | None, entries: Iterator[Any]) -> Iterator[Any]:
    """Each ticker answered (an entry with a part) is one metered request, as its own would be; errors count nothing.

    Counted as they are sent, a few hundred at a time (a body cut short counts what was sent before it, give or
    take the last few hundred).
    """
    if key is None:
        yield from entries
        return
    sent = 0
    try:
        for entry in entries:
            if isinstance(entry[1], bytes | bytearray | memoryview | RowsOf):
                sent += 1
                if sent == _METERED_AT_ONCE:
                    state.usage.record(key, sent)
                    sent = 0
            yield entry
    finally:
        if sent:
            state.usage.record(key, sent)


#: the tickers of a bulk answer counted in one go
_METERED_AT_ONCE = 256


def _problem(response: Response) -> Answered:
    headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-type")}
    return response.status_code, "application/json", headers, iter([bytes(response.body)])


def _chain(*iterables: Any) -> Any:
    for it in iterables:
        yield from it


def _bulk_body(raw: bytes) -> tuple[list[str], bool, bool]:
    """A bulk request's body: its tickers (upper case, each once), ``whole_range`` and ``tables``.

    ``whole_range`` asks for every row of the range; ``tables`` says the client reads shared tables
    (:mod:`fdkit.frames.bundle`).
    """
    try:
        body = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        raise BadRequestError("the request body is not valid JSON", error="Invalid JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("tickers"), list) or not body["tickers"]:
        raise BadRequestError(
            'a bulk request\'s body is {"tickers": ["AAPL", ...]}, with one ticker or more', error="Invalid body"
        )
    raw_tickers = body["tickers"]
    if len(raw_tickers) > MAX_BULK_TICKERS:
        raise BadRequestError(
            f"a bulk request names at most {MAX_BULK_TICKERS} tickers, not {len(raw_tickers)}: "
            "send them in several requests",
            error="Invalid body",
        )
    if any(not isinstance(t, str) for t in raw_tickers):  # (a string the ticker does not take: its own 400)
        raise BadRequestError("every ticker of a bulk request is a string", error="Invalid body")
    whole = body.get("whole_range", False)
    if not isinstance(whole, bool):
        raise BadRequestError("'whole_range' is true or false", error="Invalid body")
    tables = body.get("tables", False)
    if not isinstance(tables, bool):
        raise BadRequestError("'tables' is true or false", error="Invalid body")
    return list(dict.fromkeys(t.strip().upper() for t in raw_tickers)), whole, tables


def _stale_header(store: Store) -> dict[str, str]:
    """``X-Fdkit-Lake: stale; <why>`` while the lake's object store is not answering (logged once per stall)."""
    why = store.stalled()
    if why != store.stall_said:
        if why is not None and store.stall_said is None:
            log.warning("%s; serving what is in memory", why)
        elif why is None:
            log.warning("the lake's object store at %s answers again", store.root)
        store.stall_said = why
    if why is None:
        return {}
    said = " ".join(f"stale; {why}; answered from memory".split())  # one line of ASCII: a header's value
    return {STALE_HEADER: said.encode("ascii", "replace").decode()[:400]}


def is_unreadable(exc: BaseException) -> bool:
    """Whether ``exc``, raised while a dataset was read, says the lake's files cannot be read.

    A Parquet file that does not decode (pyarrow's errors, the OS's), a Delta table whose log or files delta-rs
    cannot read (its own exception classes), or fdkit's :class:`~fdkit.errors.LakeError` for a table it cannot open.

    Example:
        >>> is_unreadable(OSError("Parquet magic bytes not found")), is_unreadable(ValueError("x"))
        (True, False)
    """
    if isinstance(exc, FdkitError):
        return isinstance(exc, LakeError) and http_status(exc) >= 500
    return isinstance(exc, pa.ArrowException | OSError) or type(exc).__module__.startswith("deltalake")


def unreadable(ep: Endpoint, exc: BaseException) -> LakeError:
    """The error of a request whose dataset cannot be read (a corrupted or truncated file): a 500 naming it.

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> unreadable(get("prices"), OSError("Parquet magic bytes not found")).message
        "the service's dataset 'prices' cannot be read (OSError: Parquet magic bytes not found); its files need repair"
    """
    brief = without_backtrace(str(exc))[:160]  # (delta-rs appends a backtrace when RUST_BACKTRACE is set)
    return LakeError(
        f"the service's dataset {ep.dataset!r} cannot be read ({type(exc).__name__}: {brief}); its files need repair",
        status=500,
        error="Dataset unreadable",
    )


def _wants_arrow(request: Request, ep: Endpoint) -> bool:
    """An Arrow page is answered to a GET of a list endpoint whose request accepts one (fdkit peers ask)."""
    return (
        request.app.state.arrow
        and ep.method == "GET"
        and ep.kind == "list"
        and ARROW_STREAM in request.headers.get("accept", "")
    )


def _memo_key(ep: Endpoint, query: dict[str, Any]) -> tuple[str, bytes]:
    """What an answer depends on: the endpoint and the query (but ``limit``, which only cuts a list)."""
    key_query = {k: v for k, v in query.items() if k != "limit"} if ep.kind == "list" else query
    # a compact copy: orjson's own bytes object keeps its 4 KB write buffer (measured with tracemalloc), which
    # was most of what a memo entry really held
    return ep.name, compact(orjson.dumps(key_query, option=orjson.OPT_SORT_KEYS))


def _page(
    request: Request,
    ep: Endpoint,
    query: dict[str, Any],
    key: tuple[str, bytes],
    offset: int,
    page_rows: int | None,
    arrow: bool,
) -> tuple[bytes, str, dict[str, str]]:
    """One page's bytes, media type and headers (``Link`` for an Arrow page with a next one)."""
    payload = _answer(request, ep, query, key, offset, page_rows)
    if arrow and isinstance(payload, dict) and ep.response_key in payload:
        return _arrow_page(ep, query, payload)
    return orjson.dumps(payload, default=encode_lazy), "application/json", {}


def _arrow_page(ep: Endpoint, query: dict[str, Any], payload: dict[str, Any]) -> tuple[bytes, str, dict[str, str]]:
    """The page as an Arrow IPC stream: the typed columns the client would build from the JSON page.

    Rows kept as columns (:class:`FrameRecords`) go to Arrow straight from them; other pages through the client's
    own JSON-to-columns code (:func:`fdkit.frames.response_part`), so a frame is the same either way. The next
    page's URL travels in a ``Link`` header (``rel="next"``).
    """
    page = payload[ep.response_key]
    rest = {k: v for k, v in payload.items() if k not in (ep.response_key, "next_page_url")}
    if isinstance(page, FrameRecords):
        _, fill = records_of(ep, query, {**rest, ep.response_key: []})
        part = part_of_rows(ep, page.frame, fill)
    else:
        part = response_part(ep, query, {**rest, ep.response_key: page})
    headers = {"Link": f'<{payload["next_page_url"]}>; rel="next"'} if payload.get("next_page_url") else {}
    return part_bytes(part), ARROW_STREAM, headers


def app_from_env() -> FastAPI:
    """The app of one ``fdkit serve --workers N`` worker process, configured by its parent's environment.

    ``FDKIT_DATA`` (the lake), ``FDKIT_SERVER_KEYS``, ``FDKIT_CURSOR_SECRET`` (shared, so that a cursor issued by
    one worker opens on any other), ``FDKIT_PUBLIC_URL``, ``FDKIT_ALLOW_SHORT_KEYS``, ``FDKIT_SERVER_MEMORY``
    (each worker's store budget, e.g. ``512MB``) and ``FDKIT_CONTRACT`` (``seed``, the default, or ``2026``).

    Returns:
        The app.
    """
    keys = load_keys(None, allow_short=bool(os.environ.get("FDKIT_ALLOW_SHORT_KEYS")))
    memory = os.environ.get("FDKIT_SERVER_MEMORY")
    return create_app(
        os.environ.get("FDKIT_DATA") or Store.default_root(),
        keys,
        public_url=os.environ.get("FDKIT_PUBLIC_URL"),
        memory_bytes=parse_bytes(memory) if memory else None,
        contract=contract_from_env(),
    )


def contract_from_env() -> str:
    """The contract a service is started with when none is named: ``FDKIT_CONTRACT``, else the seed's.

    Returns:
        ``"seed"`` or ``"2026"``.

    Raises:
        UnknownNameError: when ``FDKIT_CONTRACT`` names no contract.

    Example:
        >>> import os
        >>> contract_from_env() == (os.environ.get("FDKIT_CONTRACT") or "seed")
        True
    """
    return check_contract(os.environ.get("FDKIT_CONTRACT") or DEFAULT_CONTRACT)


def cursor_secret_from_env() -> bytes | None:
    """``FDKIT_CURSOR_SECRET`` as the cursors' HMAC key: several workers or restarts then accept each other's cursors.

    Returns:
        The secret's bytes, or ``None`` when the variable is unset.

    Raises:
        ValueError: for a secret shorter than 32 characters.
    """
    text = os.environ.get("FDKIT_CURSOR_SECRET")
    if not text:
        return None
    if len(text) < 32:
        raise ValueError("FDKIT_CURSOR_SECRET must be at least 32 characters")
    return text.encode()


def _answer_size(answer: Any) -> int:
    """The bytes an answer really holds, for the memo's budget.

    Its lazy records (the objects they own, not the store's columns they view) or its Python values all the way
    down, plus the answer itself.
    """
    own = ANSWER_BYTES + object_bytes(answer.top)
    if isinstance(answer.records, FrameRecords):
        return answer.records.nbytes() + own
    value = answer.records if answer.records is not None else answer.obj if answer.body is None else answer.body
    return deep_bytes(value) + own


def _valid_key(request: Request) -> str:
    """The request's key, when it is one of the service's (401 otherwise)."""
    return _checked_key(request.app.state.keys, request.headers.get("x-api-key"))  # (headers: any casing)


def _checked_key(keys: Keys, key: str | None) -> str:
    """``key``, when it is one of the service's (401 otherwise)."""
    if not key:
        raise AuthenticationError(MISSING_KEY, error="Missing API key")
    if keys.plan_of(key) is None:
        raise AuthenticationError("Invalid API key provided", error="Unauthorized")
    return key


def _authorize(request: Request, ep: Endpoint) -> str | None:
    """The key the request is metered under: its valid key (401/402 where the endpoint needs one it lacks).

    An endpoint without ``auth`` (a listing the 2026 document leaves open) answers any request; a valid key sent
    with it is still metered, a missing or unknown one is not.
    """
    return _authorize_key(request.app.state, ep, request.headers.get("x-api-key"))


def _authorize_key(state: Any, ep: Endpoint, key: str | None) -> str | None:
    """:func:`_authorize` of a key as sent (``None``: none was)."""
    keys: Keys = state.keys
    if not ep.auth:
        return key if key and keys.plan_of(key) is not None else None
    key = _checked_key(keys, key)
    plan = keys.plan_of(key) or ""
    if not plan_allows(plan, ep):
        raise PaymentRequiredError(
            f"Your plan ({plan}) does not include {ep.path}. Please upgrade.", error="Payment Required"
        )
    return key


def _ignored_header(ignored: list[str]) -> dict[str, str] | None:
    if not ignored:
        return None
    # header values are printable ASCII: every other character (controls too) is escaped
    shown = [n[:64].encode("unicode_escape").decode("ascii") for n in ignored]
    return {IGNORED_HEADER: ", ".join(shown[:20]) + (f", ... ({len(shown)} in all)" if len(shown) > 20 else "")}


def _query_and_offset(request: Request, ep: Endpoint, ignored: list[str]) -> tuple[dict[str, Any], int]:
    items = request.query_params.multi_items()
    cursor = [v for k, v in items if k == "cursor"]
    if cursor and ep.paginated:
        if len(cursor) > 1:
            raise InvalidCursorError("give one cursor", error="Invalid cursor")
        opened = request.app.state.signer.open(cursor[0], ep.name)
        return opened["query"], opened["offset"]
    return validate_query(ep, items, ignored=ignored), 0


def _answer(
    request: Request,
    ep: Endpoint,
    query: dict[str, Any],
    key: tuple[str, bytes],
    offset: int,
    page_rows: int | None = None,
) -> dict[str, Any]:
    ans = request.app.state.answer_for(ep, query, key)
    if ans.body is not None:  # the handler shaped the whole response (a document, or keys that vary)
        return dict(ans.body)
    out: dict[str, Any] = dict(ans.top)
    if ans.records is None:
        out[ep.response_key] = ans.obj
        return out
    limit = query.get("limit", ep.default_limit)
    records = ans.records if limit is None else ans.records[: int(limit)]
    if not ep.paginated:
        out[ep.response_key] = records
        return out
    page_size = page_rows or ep.page_size or len(records)
    page = records[offset : offset + page_size]
    out[ep.response_key] = page
    nxt = offset + page_size
    if nxt < len(records):
        cursor = request.app.state.signer.issue(ep.name, query, nxt)
        base = request.app.state.public_url or str(request.base_url).rstrip("/")
        out["next_page_url"] = f"{base}{ep.path}?{urlencode({'cursor': cursor})}"
    return out
