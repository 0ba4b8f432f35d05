"""Many tickers in one request between fdkit peers: ``POST /bulk/<endpoint path>``, one part per ticker.

A call for 958 tickers was 958 requests, each reading its ticker's rows from the lake's files (22 yearly files of
the price history: about a second a ticker on a loaded machine), sizing its answer, making a dict per row and
turning the dicts back into Arrow. The bulk route answers a list of tickers with the query of one request (the
endpoint's own parameters, validated as its own query is) in one body, a *bundle* (:mod:`fdkit.frames.bundle`):
for each ticker, in the order asked, the part its own request would give, all its pages joined and ``limit``
applied per ticker, or its error (404 for a ticker the lake does not know).

Endpoints answered by the generic handler (statements, price history, insider trades, ...) read every ticker's
rows in one scan (the row groups whose statistics may hold one of them), filter and order them once, and cut the
result into per-ticker parts; so do bars at their own interval (``/prices`` daily or minute), as the bars'
handler cuts them. Other queries of an endpoint with a handler of its own (bars aggregated by week) are answered
ticker by ticker by that handler, in process, from one read of a hundred tickers' rows at a time
(:meth:`fdkit.server.store.Store.reading_together`). Either way an entry is what the ticker's own request answers
(tested endpoint by endpoint against the one-ticker route).

Only endpoints of flat records keyed by ``ticker`` have the route (:func:`bulk_endpoint`); it is advertised with
the Arrow format (``X-Fdkit-Formats``), so only fdkit's own clients use it.

Example:
    >>> from fdkit.catalog.endpoints import get
    >>> bulk_endpoint(get("price_history")), bulk_endpoint(get("segmented_revenues"))
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from fdkit.catalog.endpoints import Endpoint
from fdkit.errors import FdkitError, LakeError, without_backtrace
from fdkit.frames.basis import as_traded
from fdkit.frames.bundle import RowsOf, SharedTable, Written
from fdkit.frames.typed import (
    PART_COMPRESSION,
    arrow_rows,
    part_buffer,
    part_bytes,
    part_of_rows,
    part_of_table,
    records_of,
    response_part,
)
from fdkit.server import handlers
from fdkit.server.handlers import NotFound, _date_col, filter_columns, filter_mask, rows_of_mask
from fdkit.server.rows import FrameRecords
from fdkit.server.store import Between, Store
from fdkit.wire.responses import http_status

__all__ = ["BULK_PREFIX", "MAX_BULK_TICKERS", "bulk_endpoint", "bulk_entries"]

#: the bulk route of an endpoint is its path under this prefix (``/bulk/prices/history``)
BULK_PREFIX = "/bulk"
#: the most tickers one bulk request may name (a client sends larger lists in several requests)
MAX_BULK_TICKERS = 2000
#: an endpoint with a handler of its own reads this many tickers' rows in one scan (memory: their whole histories)
READ_TOGETHER = 100
#: an uncompressed shared table (for a client in this process) of this many bytes or more has its labels written as
#: dictionaries and its columns narrower where nothing is lost: a price history request's 30-40 MB of rows then
#: hold about a third of the memory while the frame is made; a statement panel's 1-2 MB are sent as they were
#: made (the checks and casts cost 15 ms of its 200; the client narrows and compresses what it keeps, later)
COMPACT_FROM = 8 * 2**20


def bulk_endpoint(ep: Endpoint) -> bool:
    """Whether an endpoint has a bulk route: a GET list of flat records, fanned out over ``ticker``."""
    return arrow_rows(ep) and ep.ticker_param == "ticker" and "ticker" in ep.param_names


def bulk_entries(
    store: Store,
    ep: Endpoint,
    query: dict[str, Any],
    tickers: list[str],
    *,
    whole_range: bool = False,
    compression: str | None = PART_COMPRESSION,
    tables: bool = False,
) -> Iterator[Written]:
    """Each ticker's entry of a bundle: its part's bytes, or its error, in the order asked.

    Args:
        store: the lake.
        ep: a :func:`bulk_endpoint`.
        query: the validated query of one request (its ``ticker`` is replaced by each ticker in turn).
        tickers: upper-case tickers, each once.
        whole_range: every row of the query, ``limit`` aside (a bar range the client would continue window after
            window past one request's cap).
        tables: the rows of a read's tickers as one shared table, each ticker's entry naming its run of it (a
            client that asks for them: :mod:`fdkit.frames.bundle`); endpoints with a handler of their own
            answer part by part whatever this says.
        compression: how the parts' bytes are compressed (``None``: not, for a client in this process, which
            compresses what it keeps itself, after it has its frame).

    Yields:
        ``(ticker, part bytes)`` or ``(ticker, (status, error, message))``.
    """
    if not tickers:
        return
    if handlers.bars_at_own_interval(ep, query):
        yield from _bar_entries(store, ep, query, tickers, whole_range, compression, tables)
        return
    if not handlers.answers_by_rows(ep):
        source = handlers.rows_source(ep, query)
        for at in range(0, len(tickers), READ_TOGETHER):
            chunk = tickers[at : at + READ_TOGETHER]
            with store.reading_together(source, chunk):  # one scan for the chunk, not one a ticker
                for ticker in chunk:
                    yield ticker, _own_handler_entry(store, ep, {**query, "ticker": ticker}, whole_range, compression)
        return
    yield from _generic_entries(store, ep, query, tickers, whole_range, compression, tables)


def _error(exc: FdkitError) -> tuple[int, str, str]:
    return http_status(exc), exc.error or "Error", exc.message


def _limit(ep: Endpoint, query: dict[str, Any], whole_range: bool) -> int | None:
    if whole_range:
        return None
    limit = query.get("limit", ep.default_limit)
    return None if limit is None else int(limit)


def _own_handler_entry(
    store: Store, ep: Endpoint, q: dict[str, Any], whole_range: bool, compression: str | None
) -> bytes | tuple[int, str, str]:
    """One ticker through its endpoint's own handler: the part its pages would make, joined."""
    try:
        answer = handlers.handle(store, ep, q)
    except FdkitError as exc:
        if isinstance(exc, LakeError) and http_status(exc) >= 500:  # its table cannot be opened (its Delta log)
            brief = without_backtrace(exc.message)[:160]
            return 500, "Dataset unreadable", f"the service's dataset {ep.dataset!r} cannot be read ({brief})"
        return _error(exc)
    except (pa.ArrowException, OSError) as exc:  # a file of the lake that cannot be read: this ticker's answer says so
        brief = without_backtrace(str(exc))[:160] or type(exc).__name__
        return 500, "Dataset unreadable", f"the service's dataset {ep.dataset!r} cannot be read ({brief})"
    records = answer.records if answer.records is not None else []
    limit = _limit(ep, q, whole_range)
    if limit is not None:
        records = records[:limit]
    if isinstance(records, FrameRecords):
        _, fill = records_of(ep, q, {**answer.top, ep.response_key: []})
        part = part_of_rows(ep, records.frame, fill)
    else:
        part = response_part(ep, q, {**answer.top, ep.response_key: list(records)})
    return part_bytes(part, compression)


def _generic_entries(
    store: Store,
    ep: Endpoint,
    query: dict[str, Any],
    tickers: list[str],
    whole_range: bool,
    compression: str | None,
    tables: bool,
) -> Iterator[Written]:
    """The generic handler's answers of many tickers from one read, filtered, ordered and made Arrow once.

    :func:`fdkit.server.handlers.generic_list` per ticker reads the ticker's rows, keeps those of the query and
    sorts them by date (stable, missing dates last). Here one read gives every ticker's rows in the same order, the
    same filter runs once, one stable sort by (ticker, date) orders each ticker's rows as its own sort would, and
    the rows become Arrow columns once: a ticker's part is a slice of them.
    """
    read = _generic_read(store, ep, query, tickers)
    if isinstance(read, FdkitError):  # each ticker's own request says which package serves the endpoint
        yield from ((t, _error(read)) for t in tickers)
        return
    known: set[str] | None = None
    present = read[3]

    def unknown(t: str) -> bool:
        nonlocal known
        known = store.known_tickers() if known is None else known
        return t not in known

    yield from _sliced(
        read, tickers, _limit(ep, query, whole_range), compression, lambda t: t not in present and unknown(t), tables
    )


#: a read of many tickers' rows: their table (sorted by ticker), each row's ticker code, the codes' tickers, the
#: tickers the lake has rows of, the answer's constants
Read = tuple[pa.Table, np.ndarray, list[str], set[str], dict[str, Any]]


def _generic_read(store: Store, ep: Endpoint, query: dict[str, Any], tickers: list[str]) -> Read | FdkitError:
    """The generic handler's rows of many tickers, filtered and ordered as each ticker's own request orders them.

    In Arrow where the lake's columns cast to the answer's types (:func:`_arrow_read`), else through the typed
    frame (:func:`_frame_read`). A function of its own, so that the rows are freed once their table is made (a
    generator's locals live as long as its answer is being written).
    """
    table = store.table_of_many(ep.dataset or "", tickers, between=_range_of(ep, query))
    if table.num_rows and "ticker" in table.column_names:
        read = _arrow_read(store, ep, query, tickers, table)
        if read is not None:
            return read
    del table
    return _frame_read(store, ep, query, tickers)


def _arrow_read(store: Store, ep: Endpoint, query: dict[str, Any], tickers: list[str], table: pa.Table) -> Read | None:
    """:func:`_frame_read`'s read, made of the lake's Arrow table (``None``: a column needs the frame's conversion).

    Only the columns the filter and the order read become pandas; the rows are taken in their order once and
    cast to the answer's types. A twenty-year history's 3.4M rows: their typed frame (1.3 s) and its Arrow copy
    (0.2 s) are not made.
    """
    date = _date_col(ep)
    keys = store.typed_columns(
        ep.dataset or "", table, {"ticker", *filter_columns(ep, query), *([date] if date else [])}
    )
    codes, names = _ticker_codes(keys)
    wanted = set(tickers)
    asked = np.array([n in wanted for n in names] + [False], dtype=bool)[codes]  # (a ticker missing: not asked)
    present = {names[c] for c in np.unique(codes[asked]).tolist()}
    if not present:
        return None
    kept = np.flatnonzero(asked & rows_of_mask(keys, ep) & filter_mask(keys, ep, query))
    order = kept[_order(keys, kept, codes[kept], date, ep.newest_first)]
    del keys
    fill = _constants(ep, query, tickers, present)
    part = part_of_table(ep, table.take(order), fill)
    return None if part is None else (part[0], codes[order], names, present, fill)


def _frame_read(store: Store, ep: Endpoint, query: dict[str, Any], tickers: list[str]) -> Read | FdkitError:
    """The generic handler's rows of many tickers from their typed frame (as each ticker's own request reads them)."""
    rows = store.rows_of_many(ep.dataset or "", tickers, between=_range_of(ep, query))
    absent = handlers.without_package(store, ep) if rows.empty else None
    if absent is not None:
        return absent
    codes, names = _ticker_codes(rows)
    present = {names[c] for c in np.unique(codes).tolist() if c < len(names)}
    kept = np.flatnonzero(rows_of_mask(rows, ep) & filter_mask(rows, ep, query))
    order = kept[_order(rows, kept, codes[kept], _date_col(ep), ep.newest_first)]
    rows, codes = rows.take(order), codes[order]  # (one copy of the rows kept, in their order)
    fill = _constants(ep, query, tickers, present)
    return part_of_rows(ep, rows, fill)[0], codes, names, present, fill


def _constants(ep: Endpoint, query: dict[str, Any], tickers: list[str], present: set[str]) -> dict[str, Any]:
    """The answer's constants, as the first present ticker's own request gives them."""
    first = next((t for t in tickers if t in present), tickers[0])
    return records_of(ep, {**query, "ticker": first}, {ep.response_key: []})[1]


def _sliced(
    read: Read, tickers: list[str], limit: int | None, compression: str | None, missing: Any, tables: bool
) -> Iterator[Written]:
    """Each ticker's part, in the order asked: its slice of the read's table, or its 404.

    The table is sorted by its rows' codes (positions into the codes' tickers); ``limit`` caps a ticker's rows;
    ``missing(ticker)`` says the lake does not know it. With ``tables``, the rows go once, as a shared table (the
    read's constants; its labels as dictionaries, its columns narrower where nothing is lost), and each ticker's
    entry names its run of them (:mod:`fdkit.frames.bundle`): the entries are made at once and the read is let go.
    """
    table, codes, names, _, fill = read
    del read
    # (uncompressed parts, for a client in this process, are its own business; so is a small shared table for it)
    compact = bool(compression) or (tables and table.nbytes >= COMPACT_FROM)
    if compact:
        table = _dictionaries(table)
    starts = np.searchsorted(codes, np.arange(len(names)), side="left")
    stops = np.searchsorted(codes, np.arange(len(names)), side="right")
    del codes
    if tables and limit is not None and bool((stops - starts > limit).any()):  # the table holds the rows sent
        counts = np.minimum(stops, starts + limit) - starts
        table = table.take(
            np.concatenate([np.zeros(0, np.int64), *(np.arange(a, a + n) for a, n in zip(starts, counts, strict=True))])
        )
        stops = np.cumsum(counts)
        starts = stops - counts
    where = {name: (int(a), int(b)) for name, a, b in zip(names, starts, stops, strict=True)}
    if not tables:
        return _own_parts(table, where, tickers, fill, limit, compression, missing)
    out: list[Written] = [
        ("", SharedTable(part_buffer((table, table.num_rows, fill), compression, labels=False, narrow=compact)))
    ]
    del table
    for t in tickers:
        if missing(t):
            out.append((t, _error(NotFound(f"Ticker {t} not found"))))
            continue
        lo, hi = where.get(t, (0, 0))
        if limit is not None:
            hi = min(hi, lo + limit)
        out.append((t, RowsOf(lo, hi - lo)))
    return iter(out)


def _own_parts(
    table: pa.Table,
    where: dict[str, tuple[int, int]],
    tickers: list[str],
    fill: dict[str, Any],
    limit: int | None,
    compression: str | None,
    missing: Any,
) -> Iterator[Written]:
    """Each ticker's part of its own (a client that reads no shared tables), made as the answer is written."""
    for t in tickers:
        if missing(t):
            yield t, _error(NotFound(f"Ticker {t} not found"))
            continue
        lo, hi = where.get(t, (0, 0))
        if limit is not None:
            hi = min(hi, lo + limit)
        consts = {**fill, "ticker": t} if "ticker" in fill else fill
        yield t, part_bytes((table.slice(lo, hi - lo), hi - lo, consts), compression)


def _bar_entries(
    store: Store,
    ep: Endpoint,
    query: dict[str, Any],
    tickers: list[str],
    whole_range: bool,
    compression: str | None,
    tables: bool,
) -> Iterator[Written]:
    """Bars at their own interval (daily, minute) of many tickers, as :func:`handlers.prices` cuts them.

    The handler's data path per ticker: its bars (as traded unless ``adjusted``), sorted by time, the range
    ``[start, midnight after end)`` of them, ``time_milliseconds`` beside ``time``. Here, for each
    :data:`READ_TOGETHER` tickers (their whole histories are in memory at once, no more), one read of their bars,
    one filter, one stable sort by (ticker, time) and one Arrow table, sliced per ticker.
    """
    for at in range(0, len(tickers), READ_TOGETHER):
        yield from _bar_chunk(store, ep, query, tickers[at : at + READ_TOGETHER], whole_range, compression, tables)


def _bar_chunk(
    store: Store,
    ep: Endpoint,
    query: dict[str, Any],
    tickers: list[str],
    whole_range: bool,
    compression: str | None,
    tables: bool,
) -> Iterator[Written]:
    dataset, source = handlers._dataset(ep), handlers.rows_source(ep, query)
    read = _bar_read(store, ep, query, tickers, source)
    present = read[3]
    yield from _sliced(
        read,
        tickers,
        _limit(ep, query, whole_range),
        compression,
        lambda t: t not in present and not (source != dataset and store.has(dataset, t)),
        tables,
    )


def _range_of(ep: Endpoint, query: dict[str, Any]) -> Between | None:
    """The date range the generic handler's filter keeps, for the read to skip what lies outside it.

    ``[start_date, the day after end_date)`` of the endpoint's date column; ``None`` without one.
    """
    column = _date_col(ep)
    start, end = query.get("start_date"), query.get("end_date")
    if column is None or (not start and not end):
        return None
    lo = pd.Timestamp(start) if start else None
    hi = pd.Timestamp(end) + pd.Timedelta(days=1) if end else None
    return column, lo, hi


def _bar_read(store: Store, ep: Endpoint, query: dict[str, Any], tickers: list[str], source: str) -> Read:
    """Bars of many tickers in the query's range, as-traded unless ``adjusted``, ordered by (ticker, time)."""
    rows = store.rows_of_many(source, tickers)
    codes, names = _ticker_codes(rows)
    present = {names[c] for c in np.unique(codes).tolist() if c < len(names)}
    lo, hi = handlers._midnight_ns(query["start_date"]), handlers._midnight_ns(query["end_date"], days_after=1)
    stamps = handlers.time_ns(rows["time"]) if len(rows) else np.zeros(0, np.int64)
    keep = (stamps >= lo) & (stamps < hi)
    if not query.get("adjusted") and "basis" in rows.columns:
        keep &= as_traded(rows["basis"]).to_numpy(dtype=bool)
    rows, codes, stamps = rows[keep], codes[keep], stamps[keep]
    order = np.lexsort((stamps, codes))
    rows, codes, stamps = rows.iloc[order], codes[order], stamps[order]
    rows = rows.assign(time_milliseconds=pd.array(stamps // 1_000_000, dtype="Int64"))
    _, fill = records_of(ep, {**query, "ticker": tickers[0]}, {"ticker": tickers[0], ep.response_key: []})
    return part_of_rows(ep, rows, fill)[0], codes, names, present, fill


def _dictionaries(table: pa.Table, most: int = 64) -> pa.Table:
    """Labels (text of at most ``most`` distinct values) dictionary-encoded once for every slice of the table.

    Each part's bytes then encode none of them again. A slice carries the dictionary whole: fine for a basis, a
    source or a period, not for accession numbers, names or titles (a part of a 1,000-company statement panel
    then carried every company's: 3x slower read back), which each part encodes on its own.
    """
    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type):
            encoded = pc.dictionary_encode(table.column(i)).combine_chunks()
            if len(encoded.dictionary) <= most:
                table = table.set_column(i, field.name, encoded)
    return table


def _text(column: pd.Series) -> pd.Series:
    return column.astype("string")


def _ticker_codes(rows: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each row's ticker as its position among the sorted distinct tickers (no text compared per row)."""
    if not len(rows) or "ticker" not in rows.columns:
        return np.zeros(len(rows), np.int64), []
    column = rows["ticker"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        labels = column.cat.categories.to_numpy(dtype=object)  # (not value by value: a thousand tickers' labels)
        categories = [str(c) for c in labels.tolist()]
        rank = np.argsort(np.argsort(np.array(categories, dtype=object), kind="stable"), kind="stable")
        raw = column.cat.codes.to_numpy()
        codes = np.where(raw >= 0, rank[np.maximum(raw, 0)] if len(rank) else 0, len(categories))
        return codes.astype(np.int64), sorted(categories)
    found, uniques = pd.factorize(_text(column), sort=True, use_na_sentinel=True)
    return np.where(found >= 0, found, len(uniques)).astype(np.int64), [str(u) for u in uniques]


def _order(rows: pd.DataFrame, kept: np.ndarray, codes: np.ndarray, date: str | None, newest_first: bool) -> np.ndarray:
    """The stable order of the ``kept`` rows by (ticker, date), missing dates last, as positions into ``kept``.

    As the one-ticker sort orders each ticker's rows; ``codes`` are the kept rows' ticker codes.
    """
    if not len(kept):
        return np.arange(0)
    if not date or date not in rows.columns:
        return np.argsort(codes, kind="stable")
    when = rows[date]
    if isinstance(when.dtype, pd.DatetimeTZDtype):
        when = when.dt.tz_convert("UTC").dt.tz_localize(None)
    missing = when.isna().to_numpy()[kept]
    ns = when.to_numpy(dtype="datetime64[ns]").view("int64")[kept]
    if newest_first:
        ns[~missing] = -ns[~missing]
    ns[missing] = np.iinfo(np.int64).max
    if not newest_first and len(codes) and int(codes.max()) < 2**15:  # a ticker's rows read in date order (the
        by_ticker = np.argsort(codes.astype(np.int16), kind="stable")  # lake's files): a radix sort by ticker is
        ranked, at = codes[by_ticker], ns[by_ticker]  # the order, checked (3.4M rows: 30 ms, not 130)
        if not bool(((at[1:] < at[:-1]) & (ranked[1:] == ranked[:-1])).any()):
            return by_ticker
    return np.lexsort((ns, codes))
