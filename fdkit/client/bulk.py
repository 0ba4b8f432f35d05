"""Many tickers of one endpoint in a handful of requests, between fdkit peers: the research-scale path.

A ticker list used to be one request per ticker (958 for the S&P 500's history, each paying a round trip, a
server-side read of the ticker's files and a JSON-ready answer). With a service that answers bundles (the
embedded default, ``fdkit serve``: ``X-Fdkit-Formats``), :func:`fetch_parts` asks the fetch cache for each ticker's
part first, then sends the tickers it lacks in a few bulk requests (sorted, so that each request reads its own
stretch of the lake's row groups), a bounded number in flight, and keeps every ticker's part in the fetch cache
under the key its own request would have (:func:`fdkit.client.parts.fetch_part`): a later call for any of them,
alone or in another list, is answered from the cache. Nothing of a bulk answer goes into the HTTP cache.

Each part is the one the ticker's own request gives, so the frame is the same either way (tested endpoint by
endpoint); a failed ticker is the error its own request would raise (``NotFoundError`` for an unknown one).

Example:
    >>> import fdkit
    >>> from fdkit.catalog.endpoints import get
    >>> q = {"start_date": "2008-09-01", "end_date": "2008-09-30"}
    >>> asked = [{**q, "ticker": t} for t in ("LEH", "NOPE")]
    >>> ok, failed = fetch_parts(fdkit.Client(), get("price_history"), asked, errors="ignore")
    >>> [(p["ticker"], part[1]) for p, part in ok], list(failed)
    ([('LEH', 14)], ['NOPE'])
"""

from __future__ import annotations

import datetime
import math
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa

from fdkit.catalog.endpoints import Endpoint
from fdkit.client.cache import MISS_TTL, fetch_key
from fdkit.client.next_steps import name_the_listing
from fdkit.client.paging import progress_bar, progress_enabled
from fdkit.client.refs import read_ref, ref_bytes, table_key
from fdkit.errors import FdkitError, SkippedWarning, TransportError, error_for_status, warn_user
from fdkit.frames.bundle import Bundle, BundleEntry
from fdkit.frames.memory import release_unused
from fdkit.frames.runs import Piece, Run, as_part
from fdkit.frames.typed import (
    COMPRESS_FROM,
    PART_COMPRESSION,
    Part,
    arrow_rows,
    as_written,
    part_bytes,
    part_from_bytes,
    part_tag,
)
from fdkit.wire import transport

if TYPE_CHECKING:
    from fdkit.client.session import Client, Errors

__all__ = [
    "fetch_parts",
    "fetch_pieces",
    "uses_bulk",
    "report_failures",
    "wait_for_writes",
    "MAX_PER_REQUEST",
    "MISS",
    "MISS_TTL",
]

#: the fetch-cache key prefix of a ticker the service answered with a 404 (or 400): kept, so that a warm call asks
#: nothing again, for the endpoint's TTL but at most :data:`MISS_TTL` seconds (a lake may learn the ticker)
MISS = "miss:"
_KEPT_REFUSALS = {400, 404}

#: the most tickers one bulk request names: a few requests for a market (a request's rows are read in one scan,
#: and each boundary between requests reads a row group of every file twice), enough of them to show progress
MAX_PER_REQUEST = 500
#: the most tickers one bulk request of a date range (bars, price histories) to the embedded service names
#: (answered in this process, one at a time, in the caller's thread): the service's transient memory is its
#: request's rows, a tenth of the S&P 500's history (the 958 histories' call peaked at 2.2-2.4x its frame, against
#: 2.5-2.8x in requests of 200, for 0.5 s more)
IN_PROCESS_PER_REQUEST = 100
#: the same for other endpoints (statements, filings: tens of rows a ticker): each request scans the dataset's rows
#: in memory once, so a cross-section of a thousand companies is one request (3 statements: 0.19 s of the
#: service's CPU, 0.62 s in requests of 200); at most the service's cap on one request's tickers
IN_PROCESS_CROSS_SECTION = 2000


def _ranged_batch(query: dict[str, Any]) -> int:
    """The tickers of one in-process request of a date range: more the shorter the range.

    :data:`IN_PROCESS_PER_REQUEST` for twenty years of bars or an open range, more for a short one, so that a
    request's rows (tickers x days) stay about those of a hundred twenty-year histories and the members of one
    day are one request (one scan of the lake), not five.

    Example:
        >>> _ranged_batch({"start_date": "2008-06-30", "end_date": "2008-06-30"})
        2000
        >>> _ranged_batch({"start_date": "2004-01-01", "end_date": "2025-07-09"})
        100
    """
    try:
        end, start = (datetime.date.fromisoformat(str(query[k])[:10]) for k in ("end_date", "start_date"))
        days = (end - start).days + 1
    except (KeyError, TypeError, ValueError):  # an open range: as long as the data
        return IN_PROCESS_PER_REQUEST
    years = max(days, 1) / 365.25
    return int(min(IN_PROCESS_CROSS_SECTION, max(IN_PROCESS_PER_REQUEST, IN_PROCESS_PER_REQUEST * 20 / years)))


def uses_bulk(client: Client, ep: Endpoint, tickers: int) -> bool:
    """Whether a list of ``tickers`` goes out as bulk requests: a flat list endpoint, several, a peer that says so.

    Example:
        >>> import fdkit
        >>> from fdkit.catalog.endpoints import get
        >>> uses_bulk(fdkit.Client(), get("prices"), 2), uses_bulk(fdkit.Client(cache=False), get("prices"), 2)
        (True, False)
    """
    return (
        tickers > 1
        and ep.ticker_param == "ticker"
        and arrow_rows(ep)
        and client.keeps_fetches()
        and client.speaks_bundles()
    )


Fetched = tuple[list[tuple[Mapping[str, Any], Part]], dict[str, FdkitError]]
#: :func:`fetch_pieces`' answer: each ticker's part or its run of a shared table, and the failures
FetchedPieces = tuple[list[tuple[Mapping[str, Any], Piece]], dict[str, FdkitError]]


def fetch_parts(
    client: Client,
    ep: Endpoint,
    requests_: Sequence[Mapping[str, Any]],
    *,
    errors: Errors = "raise",
    progress: bool | None = None,
) -> Fetched:
    """Each request's part (one per ticker, the query otherwise the same), from the fetch cache or bulk requests.

    What :func:`fetch_pieces` fetches, each ticker's run of a shared table cut out as a part of its own.

    Args:
        client: the client (a peer that answers bundles: :func:`uses_bulk`).
        ep: the endpoint.
        requests_: one parameter mapping per ticker, alike but for the ticker.
        errors: ``raise`` the first failure (in input order), ``warn`` and skip, ``ignore`` and skip.
        progress: one bar over the tickers fetched (with its ETA); default: the client's setting.

    Returns:
        ``(results, failures)`` as :meth:`fdkit.Client.fetch_many` returns them: ``(params, part)`` in input order,
        failures by ticker.

    Raises:
        FdkitError: with ``errors="raise"``, the first failure in input order; a failure of a request as a whole
            (the service unreachable, a bad query) whatever ``errors`` is, as one request per ticker would raise.
    """
    pieces, failed = fetch_pieces(client, ep, requests_, errors=errors, progress=progress)
    return [(q, as_written(as_part(piece)) if isinstance(piece, Run) else piece) for q, piece in pieces], failed


def fetch_pieces(
    client: Client,
    ep: Endpoint,
    requests_: Sequence[Mapping[str, Any]],
    *,
    errors: Errors = "raise",
    progress: bool | None = None,
) -> FetchedPieces:
    """:func:`fetch_parts`, each ticker's rows of a shared table left a :class:`~fdkit.frames.runs.Run` of it.

    The frame builder reads a shared table's runs in a few stretches (:func:`fdkit.frames.runs.grouped`), so a
    thousand tickers' rows are neither cut into a thousand parts nor concatenated again.

    Example:
        >>> import fdkit
        >>> from fdkit.catalog.endpoints import get
        >>> asked = [{"ticker": t, "period": "annual"} for t in ("AAPL", "MSFT")]
        >>> pieces, failed = fetch_pieces(fdkit.Client(), get("income_statements"), asked)
        >>> [type(piece).__name__ for _, piece in pieces], failed
        (['Run', 'Run'], {})
    """
    cleaned = _cleaned(client, ep, requests_)
    tag = part_tag(ep)
    keys = [f"part:{tag}:" + fetch_key(ep.name, c) for c in cleaned]
    parts: dict[int, Piece] = {}
    failures: dict[int, FdkitError] = {}
    # a few queries, not two a ticker (after what an earlier call of the endpoint keeps in the background)
    held = client.cached_parts([*keys, *(MISS + key for key in keys)])
    tables: dict[str, Part | None] = {}  # the kept shared tables read so far, by key (None: gone)
    for i, key in enumerate(keys):
        hit = held.get(key)
        part = None if hit is None else _kept_part(client, hit, tables)
        if part is not None:
            parts[i] = part
            continue
        # a ticker the service said it has no answer for, within its TTL
        miss = held.get(MISS + key)
        if miss is not None:
            failures[i] = _failure(ep, orjson.loads(miss))
    cold = sorted(
        (i for i in range(len(keys)) if i not in parts and i not in failures), key=lambda i: str(cleaned[i]["ticker"])
    )
    if cold:
        _fetch_cold(client, ep, cleaned, keys, cold, parts, failures, progress)
    results = [(requests_[i], parts[i]) for i in range(len(keys)) if i in parts]
    named = {str(cleaned[i]["ticker"]): failures[i] for i in sorted(failures)}
    report_failures(ep, named, errors)
    return results, named


def _cleaned(client: Client, ep: Endpoint, requests_: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each request as it is sent; requests alike but for the ticker cost the first's check and their ticker's."""
    if not requests_:
        return []
    first = requests_[0]
    base = client.clean_params(ep, first)
    out = [base]
    for q in requests_[1:]:
        ticker = q.get("ticker")
        if (
            ticker is None
            or "ticker" not in base
            or q.keys() != first.keys()
            or any(q[k] is not first[k] for k in q if k != "ticker")
        ):
            out.append(client.clean_params(ep, q))
            continue
        own = ticker if type(ticker) is str else client.clean_params(ep, {"ticker": ticker})["ticker"]
        out.append({**base, "ticker": own})  # (text is sent as it is: its cleaning is the check of its type)
    return out


def _fetch_cold(
    client: Client,
    ep: Endpoint,
    cleaned: list[dict[str, Any]],
    keys: list[str],
    cold: list[int],
    parts: dict[int, Piece],
    failures: dict[int, FdkitError],
    progress: bool | None,
) -> None:
    """Bulk requests for the tickers the cache lacks; their parts into ``parts`` (and the cache), errors aside."""
    query = {k: v for k, v in cleaned[cold[0]].items() if k != "ticker"}
    # what a ticker's own request continues window after window past one request's cap: the whole range at once
    whole = bool(ep.time_index and "limit" not in query and query.get("end_date"))
    # the embedded service answers in this process, under the same interpreter lock: one request at a time, of
    # fewer tickers, holds half the memory for the same time (BENCHMARKS.md, research scale)
    in_process = client.settings.embedded
    workers = 1 if in_process else client.concurrency()
    ranged = bool(ep.time_index) or "start_date" in ep.param_names  # a date range a ticker: histories, bars
    most = (_ranged_batch(query) if ranged else IN_PROCESS_CROSS_SECTION) if in_process else MAX_PER_REQUEST
    n = math.ceil(len(cold) / most)
    n = max(n, min(workers, math.ceil(len(cold) / 50)))  # a few requests in flight when there are enough tickers
    size = math.ceil(len(cold) / n)
    batches = [cold[k : k + size] for k in range(0, len(cold), size)]
    show = progress_enabled(client.settings.progress if progress is None else progress)
    bar = progress_bar(total=len(cold), desc=ep.name, unit="ticker", leave=False, disable=not show)

    scope = transport.current_scope()  # the pool's requests are part of the caller's call

    def one(batch: list[int]) -> list[tuple[int, Bundle]]:
        """The batch's bundle; a batch whose answer is over the response cap is asked again in halves."""
        try:
            with transport.within(scope):
                bundle = client.request_bundle(ep, query, [str(cleaned[i]["ticker"]) for i in batch], whole_range=whole)
        except TransportError as exc:
            if exc.error != "Response too large" or len(batch) == 1:
                raise
            half = len(batch) // 2
            return one(batch[:half]) + one(batch[half:])
        if [e.ticker for e in bundle.entries] != [str(cleaned[i]["ticker"]) for i in batch]:
            raise TransportError(
                f"the service's bulk answer for {ep.path} does not name the tickers asked, in their order",
                path=ep.path,
                error="Broken bundle",
            )
        return [(i, bundle) for i in batch]

    if workers == 1 or len(batches) == 1:  # one at a time: in the caller's thread (the service's memory, freed
        try:  # after each request, is the frame's to reuse: one allocator arena, not one a thread)
            for batch in batches:
                answered = one(batch)
                large = _answer_bytes(answered) >= RELEASE_FROM
                _take(client, ep, answered, keys, parts, failures)
                bar.update(len(answered))
                if large:  # what the request's read held, back to the system before the next (a few ms a time)
                    release_unused()
        finally:
            bar.close()
        return
    pool = ThreadPoolExecutor(max_workers=min(workers, len(batches)), thread_name_prefix="fdkit-bulk")
    try:
        for answered in pool.map(one, batches):
            _take(client, ep, answered, keys, parts, failures)
            bar.update(len(answered))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()


#: an answer of this many bytes or more (its parts and shared tables, each once) has its memory handed back before
#: the next request: a price history's 10-12 MB answers are (without, the 958 histories' call peaked at 2.7x its
#: frame, against 2.5x), a statement panel's 2-3 MB answers are not worth the 3-4 ms a release takes
RELEASE_FROM = 8 * 2**20


def _answer_bytes(answered: list[tuple[int, Bundle]]) -> int:
    """The bytes of the bundles answered (each bundle once): their parts' and shared tables' (each table once).

    Example:
        >>> from fdkit.frames.bundle import Bundle, BundleEntry, SharedTable
        >>> table = SharedTable(b"x" * 100)
        >>> entries = [BundleEntry(t, 200, b"", shared=table, offset=0, rows=1) for t in ("A", "B")]
        >>> _answer_bytes([(0, Bundle(entries, None))])
        100
    """
    bundles = {id(b): b for _, b in answered}.values()
    shared = {id(e.shared): len(e.shared.data) for b in bundles for e in b.entries if e.shared is not None}
    return sum(len(e.data) for b in bundles for e in b.entries) + sum(shared.values())


def _kept_part(client: Client, data: bytes, tables: dict[str, Part | None]) -> Piece | None:
    """A kept ticker's part: its bytes, or its run of a kept shared table (read once a call); ``None``: gone."""
    ref = read_ref(data)
    if ref is None:
        # labels stay dictionaries (the frame's categories are made of their few values), narrowed columns
        # narrow: nothing is copied per row before the frame
        return part_from_bytes(data, text=False)
    key, offset, rows, consts = ref
    if key not in tables:
        kept = client.cached_part(key)
        try:  # (as stored: its labels dictionaries, its columns maybe narrower; the frame is made from them)
            tables[key] = None if kept is None else part_from_bytes(kept, text=False)
        except (pa.ArrowException, KeyError, ValueError):  # (checked bytes that are not a part: fetched again)
            tables[key] = None
    table = tables[key]
    if table is None or offset < 0 or rows < 0 or offset + rows > table[0].num_rows:
        return None  # (a table without the rows named: the reference is fetched again)
    return Run(table[0], offset, rows, consts)


def _take(
    client: Client,
    ep: Endpoint,
    answered: list[tuple[int, Bundle]],
    keys: list[str],
    parts: dict[int, Piece],
    failures: dict[int, FdkitError],
) -> None:
    """A batch's entries: parts read (a broken one fails the call: never kept), errors kept as the service's word.

    A shared table is read once and each of its tickers' parts is its run of it (nothing cut), in the types it
    was written in. It is kept once in the background (compressed when it came uncompressed), each of its tickers
    kept as a reference to its rows (:mod:`fdkit.client.refs`); the frame does not wait for them.
    """
    kept: list[tuple[str, bytes | memoryview]] = []
    behind: list[tuple[str, bytes | memoryview]] = []
    refused: list[tuple[str, bytes | memoryview]] = []
    shared: dict[int, Shared] = {}
    positions: dict[int, int] = {}
    tables: dict[int, Part] = {}
    for i, bundle in answered:
        k = positions[id(bundle)] = positions.get(id(bundle), -1) + 1
        entry = bundle.entries[k]
        if entry.status == 200:
            try:
                part: Piece
                if entry.shared is not None:
                    part = _shared_run(entry, tables)
                else:
                    part = part_from_bytes(entry.data, text=False)
            except (pa.ArrowException, KeyError, ValueError):
                raise TransportError(
                    f"the service's bulk answer for {ep.path} holds a broken part for {entry.ticker}",
                    path=ep.path,
                    error="Broken bundle",
                ) from None
            parts[i] = part
            if entry.shared is not None:
                runs = shared.setdefault(id(entry.shared), (entry.shared.data, bundle.compression is not None, []))
                runs[2].append((keys[i], entry.offset, entry.rows, entry_constants(part)))
            else:
                (behind if bundle.compression is None else kept).append((keys[i], entry.data))
            continue
        said = {"status": entry.status, "error": entry.error, "message": entry.message}
        failures[i] = _failure(ep, said)
        if entry.status in _KEPT_REFUSALS:  # the service's word on the ticker, not a passing fault
            refused.append((MISS + keys[i], orjson.dumps(said)))
    client.keep_parts(kept, ep.ttl)
    _keep_behind(client, part_tag(ep), behind, list(shared.values()), ep.ttl)  # compressed, kept, later
    client.keep_parts(refused, min(ep.ttl, MISS_TTL) if ep.ttl >= 0 else MISS_TTL)


def entry_constants(piece: Piece) -> dict[str, Any]:
    """A piece's constants (a run's: the table's, with its ticker)."""
    return piece.constants if isinstance(piece, Run) else piece[2]


def _shared_run(entry: BundleEntry, tables: dict[int, Part]) -> Run:
    """A ticker's run of a shared table (the table read once per bundle, as it was written)."""
    assert entry.shared is not None
    table = tables.get(id(entry.shared))
    if table is None:  # as it came: labels as dictionaries, columns maybe narrower (the frame is made from them)
        table = tables[id(entry.shared)] = part_from_bytes(entry.shared.data, text=False)
    if entry.offset < 0 or entry.rows < 0 or entry.offset + entry.rows > table[0].num_rows:
        raise ValueError(f"rows {entry.offset}..{entry.offset + entry.rows} of a table of {table[0].num_rows}")
    own = {**table[2], "ticker": entry.ticker} if "ticker" in table[2] else table[2]
    return Run(table[0], entry.offset, entry.rows, own)


#: a shared table to keep: its bytes as they came, whether they came compressed, and its tickers' runs
#: ``(key, offset, rows, constants)``
Shared = tuple[bytes | memoryview, bool, list[tuple[str, int, int, dict[str, Any]]]]


#: the most answers waiting to be kept in the background: a faster producer waits (each holds a request's bytes;
#: unbounded, the 958 histories' call peaked at 3.0x its frame)
MOST_BEHIND = 2
#: cache writes of uncompressed parts, compressed off the call's path (one thread: they queue; a new call of the
#: client waits for them first, so it reads what the last one kept); joined at interpreter exit
_BEHIND: ThreadPoolExecutor | None = None
_PENDING: list[tuple[str, Future[None]]] = []
_BEHIND_LOCK = threading.Lock()


def _keep_behind(
    client: Client, tag: str, items: list[tuple[str, bytes | memoryview]], shared: list[Shared], ttl: int
) -> None:
    """Keep parts in the fetch cache in the background, compressed (the caller builds its frame meanwhile).

    ``items`` are parts' uncompressed bytes; each of ``shared`` is kept once, with a reference per ticker. The
    write goes to the cache of the client's service as it is now (a client reconfigured meanwhile, for another
    service, never receives them).
    """
    global _BEHIND
    keep = client.part_keeper()
    if (not items and not shared) or keep is None:
        return

    def compressed(data: bytes | memoryview) -> bytes | memoryview:
        return part_bytes(part_from_bytes(data, text=False), PART_COMPRESSION) if len(data) >= COMPRESS_FROM else data

    def write() -> None:
        out = [(key, compressed(data)) for key, data in items]
        for data, ready, runs in shared:
            table = data if ready else compressed(data)
            at = table_key(tag, table)
            out.append((at, table))
            out.extend((key, ref_bytes(at, offset, rows, consts)) for key, offset, rows, consts in runs)
        keep(out, ttl)

    with _BEHIND_LOCK:
        if _BEHIND is None:
            _BEHIND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fdkit-keep")
        unfinished = [f for _, f in _PENDING if not f.done()]
    # the call waits while MOST_BEHIND answers are still to be kept: the bytes queued stay a request's or two
    wait(unfinished[: max(0, len(unfinished) - MOST_BEHIND + 1)])
    with _BEHIND_LOCK:
        _PENDING.append((f":{tag}:", _BEHIND.submit(write)))  # in each of the endpoint's keys


def wait_for_writes(key: str | None = None) -> None:
    """Wait until the parts being kept in the background are in the fetch cache (their failures are warnings).

    Args:
        key: wait only for the writes of the endpoint this fetch-cache key is of (a financials panel's second
            statement does not wait for the first's parts to be kept); ``None``: for every write.

    Example:
        >>> wait_for_writes()
    """
    with _BEHIND_LOCK:
        pending = [(tag, f) for tag, f in _PENDING if key is None or tag in key]
    if not pending:
        return
    for tag, future in pending:  # every caller waits for all it saw (another thread's call may be waiting too)
        exc = future.exception()
        with _BEHIND_LOCK:
            mine = (tag, future) in _PENDING
            if mine:
                _PENDING.remove((tag, future))
        if exc is not None and mine:  # said once; a failed write loses nothing but a later hit
            warn_user(f"fdkit: parts of a bulk answer could not be kept in the fetch cache: {exc}")


def _failure(ep: Endpoint, said: Mapping[str, Any]) -> FdkitError:
    """The error a ticker's own request would raise, from a bundle's entry (or its kept copy)."""
    body = {"error": said.get("error", ""), "message": said.get("message", "")}
    return name_the_listing(error_for_status(int(said.get("status") or 500), body, ep.path), ep.path)


def report_failures(ep: Endpoint, failures: Mapping[str, FdkitError], errors: Errors) -> None:
    """What a multi-ticker call does with its failed tickers: raise the first (in input order), warn, or nothing.

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> from fdkit.errors import NotFoundError
        >>> report_failures(get("prices"), {"NOPE": NotFoundError("Ticker NOPE not found")}, "ignore")
    """
    if not failures:
        return
    if errors == "raise":
        raise next(iter(failures.values()))
    if errors == "warn":
        for who, exc in failures.items():
            warn_user(
                f"{ep.name}: {who} skipped (errors='warn'; named in df.attrs['missing']; errors='ignore' "
                f"skips quietly, fdkit get {ep.name}: --errors ignore): {exc}",
                SkippedWarning,
            )
