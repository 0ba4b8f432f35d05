"""What each endpoint answers: generic catalog-driven filtering plus the few endpoints with their own logic.

A handler takes the store, the endpoint and the validated query and returns an :class:`Answer`: the full
record list (the app pages it) or a single object, plus top-level fields. Errors are raised as
:class:`NotFound` / :class:`~fdkit.catalog.params.ParamError` (the client's own error classes) and become 404 /
400 through :func:`fdkit.wire.responses.problem_response`.

Generic filtering (``generic_list``) maps parameters to columns by name: ``x`` is equality (a repeatable
parameter means "any of"), ``x_gte``/``x_gt``/``x_lte``/``x_lt`` compare, ``start_date``/``end_date`` bound the
endpoint's date column, ``cik`` is resolved to a ticker.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from fdkit.catalog.endpoints import FILING_ITEM_TITLES, REGISTRATION_FORMS, Endpoint
from fdkit.catalog.params import ParamError, check_range
from fdkit.catalog.schema import COMPANY_EVENT_FIELDS, SCHEMAS, YIELD_TENORS, fields_of
from fdkit.catalog.shapes import SEGMENT_LINE_ITEMS, SHAPES
from fdkit.errors import BadRequestError, NotFoundError
from fdkit.frames.basis import as_traded
from fdkit.frames.filters import FIELD_ALIASES, apply_filters, resolve_field
from fdkit.frames.nested import restore_entry, signal_entry
from fdkit.frames.typed import to_records
from fdkit.server.rows import FrameRecords
from fdkit.server.store import Store

__all__ = ["Answer", "NotFound", "handle"]

_SUFFIX_OPS = {"_gte": "ge", "_gt": "gt", "_lte": "le", "_lt": "lt"}
_NOT_FILTERS = {"limit", "cursor", "cik", "interval", "interval_multiplier", "start_date", "end_date"}


class NotFound(NotFoundError):
    """No such ticker/record (HTTP 404): a :class:`~fdkit.errors.NotFoundError` titled ``Not Found``."""

    def __init__(self, message: str, error: str = "Not Found", **kw: Any) -> None:
        super().__init__(message, error=error, **kw)


@dataclass
class Answer:
    """A handler's result.

    Attributes:
        records: the full, ordered record list for list endpoints (paged by the app).
        obj: the single object of object endpoints.
        top: extra top-level fields (e.g. ``ticker`` of a price response).
        body: the whole response, where its keys depend on the request (``/index-funds``: ``holdings`` or
            ``funds``); ``None`` otherwise.
    """

    records: Sequence[dict[str, Any]] | None = None
    obj: Any = None
    top: dict[str, Any] = field(default_factory=dict)
    body: dict[str, Any] | None = None


Handler = Callable[[Store, Endpoint, dict[str, Any]], Answer]
_HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    """Register a handler for the named endpoints."""

    def deco(fn: Handler) -> Handler:
        for n in names:
            _HANDLERS[n] = fn
        return fn

    return deco


def handle(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Answer one validated request.

    Args:
        store: the lake.
        ep: the endpoint.
        q: validated query/body.

    Returns:
        The :class:`Answer`.
    """
    if ep.kind == "listing":
        return listing(store, ep, q)
    fallback = latest_record if ep.kind == "object" else generic_list
    return _HANDLERS.get(ep.name, fallback)(store, ep, q)


def answers_by_rows(ep: Endpoint) -> bool:
    """Whether a ticker's answer is the generic handler's rows as the lake keeps them.

    Not for an endpoint with a handler of its own, nor for one whose values go out under other names
    (``Endpoint.wire_values``): a bulk answer of many tickers then goes through :func:`handle` ticker by ticker.

    Example:
        >>> from fdkit.catalog import catalog_for
        >>> [answers_by_rows(catalog_for(c)["insider_ownership"]) for c in ("2026", "seed")]
        [True, False]
    """
    return ep.name not in _HANDLERS and not ep.wire_values


def _on_the_wire(df: pd.DataFrame, ep: Endpoint) -> pd.DataFrame:
    """``df`` with the values ``ep.wire_values`` renames under the names the service sends."""
    if not ep.wire_values:
        return df
    df = df.copy(deep=False)
    for column, names in ep.wire_values.items():
        if column not in df.columns:
            continue
        col = df[column]
        if isinstance(col.dtype, pd.CategoricalDtype) and not set(names.values()) & set(col.cat.categories):
            df[column] = col.cat.rename_categories(dict(names))  # (the codes kept)
        else:
            text = col.astype("string").replace(names)
            df[column] = text.astype("category") if isinstance(col.dtype, pd.CategoricalDtype) else text
    return df


# ---------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------
def _ticker(store: Store, ep: Endpoint, q: dict[str, Any], param: str = "ticker") -> str | None:
    if q.get("cik") is not None:
        t = store.cik_to_ticker(str(q["cik"]))
        if t is None:
            raise NotFound(f"CIK {q['cik']} not found")
        return t
    value = q.get(param)
    if value is None:
        return None
    t = str(value).strip().upper()
    if not store.knows(t, ep.dataset):
        raise NotFound(f"Ticker {t} not found")
    return t


def _one_ticker(store: Store, ep: Endpoint, q: dict[str, Any]) -> str:
    """The request's ticker (or the CIK's): required here."""
    ticker = _ticker(store, ep, q)
    if ticker is None:
        raise ParamError(f"{ep.path} needs a ticker", "Missing parameter")
    return ticker


def _dataset(ep: Endpoint) -> str:
    """The lake dataset an endpoint reads (a catalog entry without one is a programming error, not a request's)."""
    if not ep.dataset:
        raise RuntimeError(f"catalog entry {ep.name} names no dataset")
    return ep.dataset


def rows_source(ep: Endpoint, q: dict[str, Any]) -> str:
    """The dataset whose rows of one ticker an endpoint's handler reads for query ``q`` (bars: by interval).

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> rows_source(get("prices"), {"interval": "minute"}), rows_source(get("prices"), {"interval": "day"})
        ('prices_minute', 'prices')
    """
    dataset = _dataset(ep)
    if ep.name in ("prices", "crypto_prices") and q.get("interval") == "minute":
        return f"{dataset}_minute"
    return dataset


def _date_col(ep: Endpoint) -> str | None:
    dates = [c for c in ep.index if SCHEMAS.get(ep.schema or "", {}).get(c) in ("date", "datetime")]
    return dates[-1] if dates else None


def _filter(df: pd.DataFrame, ep: Endpoint, q: dict[str, Any], skip: frozenset[str] = frozenset()) -> pd.DataFrame:
    mask = filter_mask(df, ep, q, skip)
    return df if mask.all() else df[mask]  # (every row kept: no copy of them)


def filter_mask(df: pd.DataFrame, ep: Endpoint, q: dict[str, Any], skip: frozenset[str] = frozenset()) -> np.ndarray:
    """The rows of ``df`` the query's filters keep (its parameters other than the ticker, and its date range).

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> rows = pd.DataFrame({"period": pd.Categorical(["annual", "quarterly"]),
        ...                      "report_period": pd.to_datetime(["2024-12-31", "2025-03-31"])})
        >>> filter_mask(rows, get("income_statements"), {"period": "Quarterly"}).tolist()
        [False, True]
    """
    mask = np.ones(len(df), dtype=bool)
    date_col = _date_col(ep)
    for kind, col, op, value in _query_filters(ep, q, skip):
        if col not in df.columns:
            continue
        series = df[col]
        if kind == "date":
            value = pd.Timestamp(value)
        if isinstance(value, list):
            mask &= _text_in(series, {str(v) for v in value})
        elif op == "eq" and kind == "string":
            mask &= _text_in(series, {str(value).lower()}, lower=True)
        else:
            mask &= getattr(series, op)(value).fillna(False).to_numpy(dtype=bool)
    if date_col and date_col in df.columns:
        if q.get("start_date"):
            mask &= (df[date_col] >= _naive_or_utc(df[date_col], q["start_date"])).to_numpy(dtype=bool)
        if q.get("end_date"):
            end = _naive_or_utc(df[date_col], q["end_date"]) + pd.Timedelta(days=1)
            mask &= (df[date_col] < end).to_numpy(dtype=bool)
    return mask


def filter_columns(ep: Endpoint, q: dict[str, Any], skip: frozenset[str] = frozenset()) -> set[str]:
    """The columns :func:`filter_mask` and :func:`rows_of_mask` read for this query (a frame of them suffices).

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> sorted(filter_columns(get("income_statements"), {"period": "annual", "start_date": None}))
        ['period']
    """
    named = {col for _, col, _, _ in _query_filters(ep, q, skip)} | set(ep.row_filter)
    date_col = _date_col(ep)
    if date_col and (q.get("start_date") or q.get("end_date")):
        named.add(date_col)
    return named


def _query_filters(ep: Endpoint, q: dict[str, Any], skip: frozenset[str]) -> Iterator[tuple[str, str, str, Any]]:
    """The query's filters: ``(parameter type, column, comparison, value)`` for each parameter given."""
    colmap = ep.param_columns
    for p in ep.params:
        name = p.name
        if name in skip or name in _NOT_FILTERS or name == ep.ticker_param or q.get(name) is None:
            continue
        op = "eq"
        col = colmap.get(name, name)
        for suffix, o in _SUFFIX_OPS.items():
            if name.endswith(suffix):
                col, op = colmap.get(name, name[: -len(suffix)]), o
                break
        yield p.type, col, op, q[name]


def _text_in(series: pd.Series, values: set[str], *, lower: bool = False) -> np.ndarray:
    """Which rows' text is one of ``values`` (``lower``: compared lower-cased); missing text never is.

    A category's labels are compared once each, not row by row (a statements table's ``period``: three labels
    for 13,680 rows).
    """
    if isinstance(series.dtype, pd.CategoricalDtype):
        labels = [str(c) for c in series.cat.categories.tolist()]
        named = np.array([(c.lower() if lower else c) in values for c in labels] + [False], dtype=bool)
        codes = series.cat.codes.to_numpy()
        return named[np.where(codes >= 0, codes, len(labels))]
    text = series.astype("string")
    hit = text.str.lower().isin(values) if lower else text.isin(values)
    return hit.fillna(False).to_numpy(dtype=bool)


def _naive_or_utc(series: pd.Series, day: str) -> pd.Timestamp:
    ts = pd.Timestamp(day)
    return ts.tz_localize("UTC") if isinstance(series.dtype, pd.DatetimeTZDtype) else ts


def _sorted(df: pd.DataFrame, ep: Endpoint) -> pd.DataFrame:
    col = _date_col(ep)
    if not col or col not in df.columns or df.empty:
        return df
    keys = [col] + [k for k in ("ticker", "bank", "series") if k in df.columns and k != col]
    asc = [not ep.newest_first] + [True] * (len(keys) - 1)
    return df.sort_values(keys, ascending=asc, kind="stable")


def _schema_fields(ep: Endpoint) -> list[str]:
    return fields_of(ep.schema) if ep.schema else []


# ---------------------------------------------------------------------------------------------------------
# generic
# ---------------------------------------------------------------------------------------------------------
def without_package(store: Store, ep: Endpoint) -> NotFound | None:
    """The 404 of an endpoint whose data package (``fdkit-history``) the bundled lake is served without, else ``None``.

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> from fdkit.lake import default_data_dir
        >>> without_package(Store(default_data_dir()), get("income_statements")) is None
        True
    """
    if ep.package is None or not store.lake.bundled or _dataset(ep) in store.lake.names():
        return None  # (a lake of the user's, a mirror or a landing, is served as it is: without the dataset, empty)
    return NotFound(
        f"{ep.path} is served from the {ep.package} data package, which this service's lake does not "
        f"have: install it (pip install ./history in the fdkit repository) and start the service again"
    )


def generic_list(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Filter the endpoint's dataset by its parameters and order it by date."""
    dataset = _dataset(ep)
    tparam = ep.ticker_param
    if tparam == "ticker" or q.get("cik") is not None:
        ticker = _ticker(store, ep, q)
        df = store.rows(dataset, ticker) if ticker else store.frame(dataset)
    elif tparam and q.get(tparam) is not None:
        key = str(q[tparam]).strip().upper()
        if key not in store.groups(dataset, tparam):
            raise NotFound(f"{tparam} {key} not found")
        df = store.rows(dataset, key, tparam)
    else:
        df = store.frame(dataset)
    absent = without_package(store, ep) if df.empty else None  # (the lake's datasets listed only then)
    if absent is not None:
        raise absent
    df = _sorted(_filter(_rows_of(df, ep), ep, q), ep)
    return Answer(records=to_records(_on_the_wire(df, ep), _schema_fields(ep)))


def latest_record(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """An ``object`` endpoint without a handler of its own: the newest record :func:`generic_list` finds."""
    records = generic_list(store, ep, q).records or []
    if not records:
        raise NotFound(f"no {ep.name.replace('_', ' ')} for {q.get(ep.ticker_param or 'ticker') or 'this query'}")
    return Answer(obj=records[0])


@handles("earnings")
def earnings(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Earnings records, the flat lake columns nested back by the endpoint's shape."""
    ticker = _ticker(store, ep, q)
    df = _sorted(store.rows("earnings", ticker or ""), ep)
    records = SHAPES[ep.shape].nest(to_records(df, fields_of("earnings")))
    if "signals" in df.columns:  # the document: "returned only when at least one signal fires"
        for rec, fired in zip(records, df["signals"], strict=True):
            if fired is not None and len(fired):
                rec["signals"] = [signal_entry(s) for s in fired]
    return Answer(records=records)


@handles("segmented_revenues")
def segmented_revenues(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Reports with nested ``items[{name, amount, start_period, end_period, segments[{label, type}]}]``."""
    ticker = _ticker(store, ep, q)
    df = _filter(store.rows("segmented_revenues", ticker or ""), ep, q)
    if df.empty:
        return Answer(records=[])
    df = df.sort_values(["report_period", "item", "member"], ascending=[False, True, True], kind="stable")
    return Answer(records=SHAPES[ep.shape].nest(to_records(df)))


@handles("income_statement_segments", "balance_sheet_segments", "cash_flow_statement_segments", "segmented_financials")
def statement_segments(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Segmented financials: per report, ``{line_item: {product: [...], segment: [...]}}``."""
    ticker = _ticker(store, ep, q)
    df = _rows_of(store.rows("segmented_financials", ticker or ""), ep)
    df = _sorted(_filter(df, ep, q), ep)
    shape = SHAPES[ep.shape]
    reports = shape.nest(to_records(df, shape.row_fields()))  # type: ignore[attr-defined]
    statement = ep.row_filter.get("statement")
    for rep in reports:  # documented line items a report lacks are null, never absent
        parts = {statement: rep} if statement else {s: rep[s] for s in SEGMENT_LINE_ITEMS if rep.get(s) is not None}
        for name, part in parts.items():
            for item in SEGMENT_LINE_ITEMS[name]:
                part.setdefault(item, None)
    return Answer(records=reports)


@handles("financial_statements")
def financial_statements(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The three statements of the query, ``limit`` periods of each, under their own keys."""
    from fdkit.catalog.endpoints import get

    limit = q.get("limit", ep.default_limit)
    obj = {}
    for name in ("income_statements", "balance_sheets", "cash_flow_statements"):
        records = generic_list(store, get(name), q).records or []
        obj[name] = records if limit is None else records[: int(limit)]
    return Answer(obj=obj)


def _rows_of(df: pd.DataFrame, ep: Endpoint) -> pd.DataFrame:
    """The rows of a dataset an endpoint serves (``Endpoint.row_filter``)."""
    if not ep.row_filter:
        return df
    mask = rows_of_mask(df, ep)
    return df if mask.all() else df[mask]


def rows_of_mask(df: pd.DataFrame, ep: Endpoint) -> np.ndarray:
    """Which rows of a dataset an endpoint serves (``Endpoint.row_filter``: columns equal to a text).

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> rows_of_mask(pd.DataFrame({"x": [1]}), get("income_statements")).tolist()
        [True]
    """
    mask = np.ones(len(df), dtype=bool)
    for column, value in ep.row_filter.items():
        if column in df.columns:
            mask &= _text_in(df[column], {str(value)})
    return mask


# ---------------------------------------------------------------------------------------------------------
# prices
# ---------------------------------------------------------------------------------------------------------
@handles("prices", "crypto_prices")
def prices(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """OHLCV bars, aggregated to ``interval`` x ``interval_multiplier``.

    An output bar has the first open, max high, min low, last close (and adjusted close) and summed volume of its
    source bars; it is ``as_traded`` only if all of them are (else ``adjusted_only``, without OHLC). With
    ``label=start`` (the default) minute bars are stamped with the start of their N-minute bucket and day, week,
    month and year bars with the time of their first source bar (the first trading day); with ``label=end`` every
    aggregated bar is stamped with its last source bar's time (the last trading day), the date its close is known.
    """
    ticker = str(q["ticker"]).strip().upper()
    interval, mult = q["interval"], int(q.get("interval_multiplier") or 1)
    start, end = q["start_date"], q["end_date"]
    check_range(q)
    dataset = _dataset(ep)
    source = rows_source(ep, q)
    if ticker not in store.groups(dataset) and ticker not in store.groups(source):
        raise NotFound(f"Ticker {ticker} not found")
    traded = not q.get("adjusted")  # the documents' bars have numbers in open..close: as-traded bars unless asked
    cols = [c for c in fields_of(ep.schema or "prices") if c != "ticker"]
    lo, hi = _midnight_ns(start), _midnight_ns(end, days_after=1)  # the first day .. midnight after the last
    if (interval, mult) not in {("day", 1), ("minute", 1)}:
        # every day goes into its period's bar; a bar with a day that has no as-traded price is adjusted_only,
        # and left out unless asked (a month cut at its last traded day would pass as the month's bar)
        every, at = store.sorted_rows(source, ticker)
        part = every.iloc[int(np.searchsorted(at, lo, "left")) : int(np.searchsorted(at, hi, "left"))]
        df = _aggregate(part, interval, mult, label=q.get("label") or "start")
        if traded and "basis" in df.columns:
            df = df[as_traded(df["basis"])]
        df = df.assign(time_milliseconds=(df["time"].astype("int64") // 1_000_000).astype("Int64"))
        return Answer(records=to_records(df, cols), top={"ticker": ticker})
    # the data path: a view of time-sorted columns; only the rows of the page sent become records (formatted from
    # the page's rows alone: a ticker's first page costs no JSON-ready copy of its whole history)
    # the memo keeps positions and a getter, never the store's frame (which the store may let go of)
    rows, stamps = store.sorted_rows(source, ticker, traded=traded)
    first, stop = int(np.searchsorted(stamps, lo, "left")), int(np.searchsorted(stamps, hi, "left"))
    if stop - first > (ep.page_size or 0):  # pages will follow, each asking for these rows: kept from the first
        store.keep_sorted(source, ticker, (rows, stamps), traded=traded)
    frame = partial(_sorted_frame, store, source, ticker, traded)
    blocks = partial(store.sorted_json, source, ticker, tuple(cols), traded)  # the rest: first, last, ahead, rows
    return Answer(records=FrameRecords(frame, cols, first, stop, frame=rows, blocks=blocks), top={"ticker": ticker})


def _sorted_frame(store: Store, source: str, ticker: str, traded: bool) -> pd.DataFrame:
    return store.sorted_rows(source, ticker, traded=traded)[0]


def _midnight_ns(day: str, days_after: int = 0) -> int:
    """Midnight UTC of ``day`` (plus ``days_after``) in nanoseconds, clipped to what int64 holds.

    A valid date such as 0002-01-10 is before every bar, and 9999-12-31 after every bar. (Days counted from the
    date's ordinal: numpy's parsing of the two dates was 5% of a random ``/prices`` query's CPU.)

    Example:
        >>> _midnight_ns("1970-01-02"), _midnight_ns("1970-01-01", days_after=1), _midnight_ns("0002-01-10") < 0
        (86400000000000, 86400000000000, True)
    """
    try:
        days = date.fromisoformat(str(day)[:10]).toordinal() - _EPOCH_ORDINAL + days_after
    except ValueError:  # (a date Python's calendar cannot hold: numpy's reading, as before)
        days = int((np.datetime64(str(day)[:10], "D") + np.timedelta64(days_after, "D")).astype("int64"))
    bound = np.iinfo(np.int64)
    if days < _FIRST_NS_DAY:
        return int(bound.min)
    if days > _LAST_NS_DAY:
        return int(bound.max)
    return days * 86_400 * 10**9


_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
#: the days (since 1970-01-01) of 1678-01-01 and 2261-12-31: the dates whose midnight nanoseconds int64 holds
_FIRST_NS_DAY = date(1678, 1, 1).toordinal() - _EPOCH_ORDINAL
_LAST_NS_DAY = date(2261, 12, 31).toordinal() - _EPOCH_ORDINAL


def bars_at_own_interval(ep: Endpoint, q: dict[str, Any]) -> bool:
    """Whether a query of bars asks for them at their own interval (daily or minute bars, a valid range).

    Such a query aggregates nothing: its answer is a range of the ticker's sorted bars.

    Example:
        >>> from fdkit.catalog.endpoints import get
        >>> q = {"interval": "day", "start_date": "2024-01-02", "end_date": "2024-01-05"}
        >>> bars_at_own_interval(get("prices"), q), bars_at_own_interval(get("prices"), {**q, "interval": "week"})
        (True, False)
    """
    if ep.name not in ("prices", "crypto_prices") or q.get("start_date", "") > q.get("end_date", ""):
        return False
    return (q.get("interval"), int(q.get("interval_multiplier") or 1)) in {("day", 1), ("minute", 1)}


def time_ns(when: pd.Series) -> np.ndarray:
    """A time column as int64 nanoseconds since the epoch, UTC (a copy: the caller may change it)."""
    if isinstance(when.dtype, pd.DatetimeTZDtype):
        when = when.dt.tz_convert("UTC").dt.tz_localize(None)
    return when.to_numpy(dtype="datetime64[ns]").view("int64").copy()


def answers_at_once(store: Store, ep: Endpoint, q: dict[str, Any]) -> bool:
    """Whether a query is answered in microseconds, so the server answers it on its event loop (no thread hop).

    Bars of a ticker whose sorted columns are ready, at their own interval: a range is two binary searches.
    """
    own_interval = (q.get("interval"), int(q.get("interval_multiplier") or 1)) in {("day", 1), ("minute", 1)}
    if ep.name not in ("prices", "crypto_prices") or not own_interval:
        return False
    source = f"{ep.dataset}_minute" if q.get("interval") == "minute" else str(ep.dataset)
    return store.has_sorted(source, str(q.get("ticker", "")).strip().upper(), traded=not q.get("adjusted"))


def _aggregate(df: pd.DataFrame, interval: str, mult: int, label: str = "start") -> pd.DataFrame:
    if df.empty:
        return df
    t = df["time"]
    naive = t.dt.tz_convert("UTC").dt.tz_localize(None)
    if interval == "minute":
        group = naive.dt.floor(f"{mult}min")
    elif interval == "day":
        group = pd.Series(np.arange(len(df)) // mult, index=df.index)
    else:
        freq = {"week": "W-SUN", "month": "M", "year": "Y"}[interval]
        codes = naive.dt.to_period(freq)
        ordinal = codes.map(lambda p: p.ordinal).astype("int64")
        group = (ordinal - ordinal.iloc[0]) // mult
    g = df.groupby(group.to_numpy(), sort=True)
    first_time = g["time"].last() if label == "end" else g["time"].first()
    if interval == "minute" and label != "end":
        first_time = pd.Series(pd.DatetimeIndex(first_time.index).tz_localize("UTC"), index=first_time.index)
    out = pd.DataFrame(
        {
            "time": first_time,
            "open": g["open"].first(skipna=False),
            "high": g["high"].max(),
            "low": g["low"].min(),
            "close": g["close"].last(skipna=False),
            "volume": g["volume"].sum(min_count=1),
        }
    )
    if "adj_close" in df.columns:
        out["adj_close"] = g["adj_close"].last(skipna=False)
    if "basis" in df.columns:  # a bar is as traded only if every bar it is made of is
        traded = as_traded(df["basis"]).groupby(group.to_numpy(), sort=True).all()
        out.loc[~traded, ["open", "high", "low", "close"]] = np.nan
        out["basis"] = np.where(traded, "as_traded", "adjusted_only")
    if "ticker" in df.columns:
        out["ticker"] = df["ticker"].iloc[0]
    return out.reset_index(drop=True)


@handles("price_snapshot", "crypto_price_snapshot")
def price_snapshot(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The latest as-traded daily close with its change from the previous close (equities, or crypto pairs)."""
    ticker = _one_ticker(store, ep, q)
    own = _dataset(ep)
    df = store.rows(own, ticker).sort_values("time")
    if df.empty:  # the other market's bars: a client may ask either snapshot for either kind of ticker
        df = store.rows("crypto_prices" if own == "prices" else "prices", ticker).sort_values("time")
    if df.empty:
        raise NotFound(f"no prices for {ticker}")
    df = _with_previous_close(df)
    if df.empty:
        raise NotFound(
            f"{ticker} has no as-traded price in this service's data: its bars carry only an adjusted "
            "close (/prices?adjusted=true)"
        )
    last = df.iloc[-1]
    prev = last["previous_close"]
    change = float(last["close"] - prev) if prev == prev else None
    pct = float(change / prev * 100) if change is not None and prev else None
    facts = store.rows("company_facts", ticker)
    shares = facts["weighted_average_shares"].iloc[0] if len(facts) else np.nan
    ts = last["time"]
    snap = {
        "ticker": ticker,
        "price": _number(last["close"]),  # none where the last bar has no as-traded close (basis adjusted_only)
        "day_change": _number(change),
        "day_change_percent": _number(pct),
        "market_cap": _number(last["close"] * shares),
        "time": ts.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "time_milliseconds": int(ts.value // 1_000_000),
    }
    # the documents type these as numbers, never null: a value not known is left out
    return Answer(obj={k: v for k, v in snap.items() if v is not None})


def _with_previous_close(bars: pd.DataFrame) -> pd.DataFrame:
    """The bars with an as-traded price, each with the close of the bar right before it (time-sorted input).

    A snapshot is the last as-traded price and says when it was; its change is against the session before it,
    missing where that session has no as-traded close (never an older close: AAPL's last bar follows years of
    adjusted-only bars).
    """
    key = bars["ticker"].astype(str) if "ticker" in bars.columns else pd.Series("", index=bars.index)
    prev = bars["close"].groupby(key, sort=False).shift()
    out = bars.assign(previous_close=prev)
    return out[as_traded(out["basis"])] if "basis" in bars.columns else out


def _number(value: Any) -> float | None:
    """A float, or None for a missing value (JSON has no NaN)."""
    return None if value is None or pd.isna(value) else float(value)


@handles("market_price_snapshot")
def market_price_snapshot(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The latest daily close of every ticker with its change from the previous close, by ticker."""
    last = store.last_traded("prices").set_index("ticker")  # the latest-bar projection: no bar is read
    prev = last["previous_close"]  # missing where the bar before the last traded one has no as-traded close
    change = last["close"] - prev.reindex(last.index)
    facts = store.frame("company_facts").drop_duplicates("ticker").set_index("ticker")["weighted_average_shares"]
    out = pd.DataFrame(
        {
            "ticker": last.index.astype(str),
            "price": last["close"].to_numpy(),
            "day_change": change.to_numpy(),
            "day_change_percent": (change / prev.reindex(last.index) * 100).to_numpy(),
            "market_cap": (last["close"] * facts.reindex(last.index)).to_numpy(),
            "time": last["time"].to_numpy(),
            "time_milliseconds": (last["time"].astype("int64") // 1_000_000).to_numpy(),
        }
    )
    records = to_records(out, fields_of("price_snapshot"))
    return Answer(obj=[{k: v for k, v in r.items() if v is not None} for r in records])  # no null number


# ---------------------------------------------------------------------------------------------------------
# filings, company, ownership
# ---------------------------------------------------------------------------------------------------------
@handles("filing_items")
def filing_items(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Items of one filing: by ticker, type and year, or by ticker and accession number alone.

    A 10-Q takes its quarter, one 8-K of several that year its accession number; an accession number says the
    filing's type and year itself (given too, they must match it: a 404 otherwise).
    """
    ticker = _one_ticker(store, ep, q)
    df = store.rows("filing_items", ticker)
    accession = _accession(q.get("accession_number"))
    if accession is not None:
        df = df[(df["accession_number"].astype("string") == accession).fillna(False).to_numpy(dtype=bool)]
    if q.get("filing_type") is not None:
        df = df[(df["filing_type"].astype("string") == q["filing_type"]).fillna(False).to_numpy(dtype=bool)]
    if q.get("year") is not None:
        df = df[(df["year"] == q["year"]).fillna(False).to_numpy(dtype=bool)]
    if q.get("quarter") is not None:
        df = df[(df["quarter"] == q["quarter"]).fillna(False).to_numpy(dtype=bool)]
    if df.empty:
        raise NotFound(_no_filing(store, ticker, q, accession))
    latest = df.sort_values("filing_date").iloc[-1]
    filing_type = str(latest["filing_type"])
    accession = None if pd.isna(latest["accession_number"]) else str(latest["accession_number"])
    if accession is None:  # a filing without an accession in the lake: its items share its filing date
        df = df[df["accession_number"].isna() & (df["filing_date"] == latest["filing_date"])]
    else:
        df = df[df["accession_number"].astype("string") == accession]
    if q.get("item"):
        df = df[df["number"].astype("string").isin(q["item"])]
    items = to_records(df, ["number", "name", "text"])
    if filing_type == "8-K" or q.get("include_exhibits"):
        ex = store.frame("filing_exhibits")
        ex = (
            ex[(ex["accession_number"].astype("string") == accession).fillna(False)]
            if len(ex) and accession
            else ex.iloc[0:0]
        )
        cols = ["number", "description", "url"] + (["text"] if q.get("include_exhibits") else [])
        for it in items:  # the document: "only present for 8-K filings when exhibits exist"
            sub = ex[(ex["item"].astype("string") == it["number"]).fillna(False)] if len(ex) else ex
            if len(sub):
                it["exhibits"] = to_records(sub, cols)
    facts = store.rows("company_facts", ticker)
    cik = str(facts["cik"].iloc[0]) if len(facts) and pd.notna(facts["cik"].iloc[0]) else None
    top = {
        "resource": "filing_items",
        "ticker": ticker,
        "cik": cik,
        "filing_type": filing_type,
        "accession_number": accession,
        "year": None if pd.isna(latest["year"]) else int(latest["year"]),
        "quarter": None if pd.isna(latest["quarter"]) else int(latest["quarter"]),  # a 10-Q's, a 10-K's Q4
        "filing_date": latest["filing_date"].strftime("%Y-%m-%d"),
    }
    return Answer(obj=items, top=top)


_ACCESSION = re.compile(r"(\d{10})-?(\d{2})-?(\d{6})")


def _accession(value: Any) -> str | None:
    """An accession number in EDGAR's dashed form (``0000320193-24-000123``; given without its dashes too)."""
    if value is None:
        return None
    text = str(value).strip()
    m = _ACCESSION.fullmatch(text)
    return "-".join(m.groups()) if m else text


def _no_filing(store: Store, ticker: str, q: dict[str, Any], accession: str | None) -> str:
    """The 404's message: the filing asked for, as it was asked (and whose it is, an accession of another ticker)."""
    form = f"{q['filing_type']} " if q.get("filing_type") else ""
    text = f"no {form}filing of {ticker}"
    if accession is not None:
        text += f" with accession number {accession}"
    when = " ".join(
        ([str(q["year"])] if q.get("year") is not None else []) + ([f"Q{q['quarter']}"] if q.get("quarter") else [])
    )
    text = f"{text} for {when}" if when else text
    if accession is not None:
        every = store.frame("filing_items", columns=["ticker", "accession_number"])
        owners = every[(every["accession_number"].astype("string") == accession).fillna(False).to_numpy(dtype=bool)]
        others = sorted({str(t) for t in owners["ticker"]} - {ticker})
        if others:
            text += f"; that accession number is a filing of {', '.join(others)}"
    return text


@handles("filings")
def filings(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Filings, newest first; ``cik`` is an integer, as the service documents it."""
    records = generic_list(store, ep, q).records or []
    for r in records:
        r["cik"] = int(r["cik"]) if r.get("cik") else None
    return Answer(records=records)


@handles("news")
def news(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """A company's articles, or without a ticker broad market news: every ticker's, newest first.

    An article the lake lists under several tickers (the same ``url``) is answered once in broad news, where it
    is newest; a company's own answer keeps each of its articles.
    """
    answer = generic_list(store, ep, q)
    if q.get("ticker") is not None or not answer.records:
        return answer
    seen: set[str] = set()
    records = []
    for r in answer.records:  # newest first: the first of an article's rows is its newest
        url = r.get("url")
        if url:
            if url in seen:
                continue
            seen.add(url)
        records.append(r)
    return Answer(records=records)


@handles("ipos")
def ipos(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The registration statements of initial public offerings among the filings, newest first."""
    ticker = _ticker(store, ep, q) if q.get("ticker") or q.get("cik") else None
    df = store.rows("filings", ticker) if ticker else store.frame("filings")
    df = df[df["filing_type"].astype("string").isin(REGISTRATION_FORMS).fillna(False).to_numpy(dtype=bool)]
    df = _sorted(_filter(df, ep, q), ep)
    records = to_records(df, [f for f in fields_of("ipos") if f in df.columns])
    for r in records:
        r["cik"] = int(r["cik"]) if r.get("cik") else None
        r.setdefault("classification", None)  # the cover page decides it: no bundled source reads one
    return Answer(records=records)


@handles("company_facts")
def company_facts(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """One company's facts, by ticker or CIK."""
    ticker = _one_ticker(store, ep, q)
    rows = store.rows("company_facts", ticker)
    if rows.empty:
        raise NotFound(f"no company facts for {ticker}")
    facts = to_records(rows.iloc[:1], fields_of("company_facts"))[0]
    stored = rows["events"].iloc[0] if "events" in rows.columns else None
    events = [] if stored is None else [_company_event(restore_entry(e)) for e in stored]  # none: empty
    names = rows["former_names"].iloc[0] if "former_names" in rows.columns else None
    former = [] if names is None else [restore_entry(n) for n in names]
    # a lake built before former names had a field of their own kept them among the events: events are events
    former += [{k: e.get(k) for k in ("name", "start_date", "end_date")} for e in events if e["type"] == "former_name"]
    facts["events"] = [e for e in events if e["type"] != "former_name"]
    facts["former_names"] = former
    return Answer(obj=facts)


_EVENT_FIELDS = frozenset(f for fields in COMPANY_EVENT_FIELDS.values() for f in fields)


def _company_event(entry: dict[str, Any]) -> dict[str, Any]:
    """One history entry with the fields of its type (the lake stores the union of every type's fields)."""
    fields = COMPANY_EVENT_FIELDS.get(str(entry.get("type")))
    if fields is None:  # a type this version does not know (a landed lake's): what it carries
        return {k: v for k, v in entry.items() if v is not None}
    # its type's fields, and any a newer source added (kept by the lake), never another type's empty ones
    return {**{k: entry.get(k) for k in fields}, **{k: v for k, v in entry.items() if k not in _EVENT_FIELDS}}


@handles("institutional_ownership")
def institutional_ownership(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """13F holdings by investor and/or ticker (both narrow), newest report first, largest position first."""
    df = store.frame("institutional_ownership")
    if q.get("ticker"):
        df = store.rows("institutional_ownership", _one_ticker(store, ep, q))
    if q.get("investor"):
        inv = str(q["investor"]).strip().upper()
        df = df[df["investor"].astype("string").str.upper() == inv]
        if df.empty and not q.get("ticker"):
            raise NotFound(f"Investor {q['investor']} not found")
    df = _filter(df, ep, q, skip=frozenset({"investor"}))
    df = df.sort_values(["report_period", "market_value", "ticker"], ascending=[False, False, True], kind="stable")
    return Answer(records=to_records(df, fields_of("institutional_ownership")))


@handles("institutional_holdings")
def institutional_holdings(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """13F positions in the 2026 shape, by held ticker and/or filer CIK (filer fields in ticker mode)."""
    df, top = store.frame("institutional_ownership"), {}
    if q.get("ticker"):
        top["ticker"] = _one_ticker(store, ep, q)
        df = store.rows("institutional_ownership", top["ticker"])
    if q.get("filer_cik"):
        cik = str(q["filer_cik"]).strip().zfill(10)
        df = df[(df["investor_cik"].astype("string") == cik).fillna(False).to_numpy(dtype=bool)]
        top["filer_cik"] = cik
        if df.empty and not q.get("ticker") and cik not in set(store.frame("institutional_ownership")["investor_cik"]):
            raise NotFound(f"Filer CIK {cik} not found; see /institutional-holdings/investors")
    df = _filter(df, ep, q, skip=frozenset({"filer_cik"}))
    df = df.sort_values(["report_period", "market_value", "ticker"], ascending=[False, False, True], kind="stable")
    out = pd.DataFrame(
        {
            "ticker": df["ticker"],
            "name_of_issuer": df["name_of_issuer"],
            "cusip": df["cusip"],
            "report_period": df["report_period"],
            "filing_date": df["filing_date"],
            "form_type": df["form_type"],
            "accession_number": df["accession_number"],
            "title_of_class": df["title_of_class"],
            "put_call": df["put_call"],
            "shares": df["shares"].round().astype("Int64"),
            "value_usd": df["market_value"].round().astype("Int64"),
            "reported_price": df["price"],
            "filer_cik": df["investor_cik"],
            "filer_name": df["investor"],
        }
    )
    fields = fields_of("institutional_holdings")
    if "ticker" not in top:  # filer mode: the filer is the request's, not a field of each position
        fields = [f for f in fields if f not in ("filer_cik", "filer_name")]
    return Answer(records=to_records(out, fields), top=top)


@handles("index_funds")
def index_funds(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """A fund's holdings (``ticker``) or the funds holding a security (``holding``), as of a date."""
    every = df = store.frame("index_funds")
    if q.get("as_of"):
        df = df[(df["as_of"] <= pd.Timestamp(q["as_of"])).to_numpy(dtype=bool)]
        df = df[(df["as_of"] == df.groupby("fund", observed=True)["as_of"].transform("max")).to_numpy(dtype=bool)]
    start = int(q.get("offset") or 0)
    stop = None if (wanted := q.get("limit") or ep.default_limit) is None else start + int(wanted)  # (None: all)
    if q.get("ticker"):
        fund = str(q["ticker"]).strip().upper()
        fund_rows = df[(df["fund"].astype("string") == fund).to_numpy(dtype=bool)].sort_values("ticker", kind="stable")
        if fund_rows.empty and fund not in set(store.keys_of("index_funds", "fund")):
            raise NotFound(f"Fund {fund} not found; see /index-funds/tickers")
        if fund_rows.empty:  # a fund known, but no filing of it on or before the date asked
            first_day = every.loc[(every["fund"].astype("string") == fund).to_numpy(dtype=bool), "as_of"].min()
            raise NotFound(
                f"Fund {fund} has no holdings filed as of {q['as_of']}: its first period is {first_day:%Y-%m-%d}"
            )
        rows = fund_rows  # the constituents asked for; the fund's header is the fund's whatever they are
        if q.get("asset_class"):
            same = fund_rows["asset_class"].astype("string") == q["asset_class"]
            rows = fund_rows[same.fillna(False).to_numpy(dtype=bool)]
        head = to_records(
            fund_rows.iloc[:1],
            ["fund_name", "fund_cik", "asset_class", "as_of", "filing_date", "source", "total_net_assets"],
        )
        first = head[0] if head else {}
        resolved = int((rows["resolution_status"].astype("string") == "resolved").fillna(False).sum())
        cols = [
            "ticker",
            "name",
            "cusip",
            "isin",
            "weight",
            "market_value",
            "shares",
            "asset_class",
            "resolution_status",
        ]
        page = to_records(rows.iloc[start:stop], cols)
        header = {
            "ticker": fund,
            "name": first.get("fund_name"),
            "cik": first.get("fund_cik"),
            "asset_class": first.get("asset_class"),
            "as_of": first.get("as_of"),
            "filing_date": first.get("filing_date"),
            "source": first.get("source"),
            "total_net_assets": first.get("total_net_assets"),
            "total_holdings": len(rows),
            "holdings_resolved": resolved,
            "returned": len(page),
            "offset": start,
        }
        return Answer(body={"ticker": fund, "fund": header, "holdings": page})
    held = str(q["holding"]).strip().upper()
    if q.get("asset_class"):  # (documented with ``ticker`` only; taken here as before, on the holding's class)
        df = df[(df["asset_class"].astype("string") == q["asset_class"]).fillna(False).to_numpy(dtype=bool)]
    rows = df[(df["ticker"].astype("string") == held).to_numpy(dtype=bool)].sort_values("fund", kind="stable")
    if rows.empty and held not in store.known_tickers():
        raise NotFound(f"Ticker {held} not found")
    funds = rows.drop(columns=["ticker", "name"]).rename(
        columns={"fund": "ticker", "fund_name": "name", "fund_cik": "cik"}
    )
    cols = ["ticker", "name", "cik", "asset_class", "as_of", "filing_date", "weight", "market_value", "shares"]
    page = to_records(funds.iloc[start:stop], cols)
    ids = to_records(rows.iloc[:1], ["name", "cusip", "isin"])
    first = ids[0] if ids else {}
    security = {
        "ticker": held,
        "name": first.get("name"),
        "cusip": first.get("cusip"),
        "isin": first.get("isin"),
        "total_funds": len(rows),
        "returned": len(page),
        "offset": start,
    }
    return Answer(body={"holding": held, "security": security, "funds": page})


# ---------------------------------------------------------------------------------------------------------
# macro
# ---------------------------------------------------------------------------------------------------------
#: the indices a composite index is made of
_COMPOSITES = {"sp1500": ("sp500", "sp400", "sp600")}


@handles("index_members")
def index_members(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Members of an index on a day (or every spell), each under the symbol that works in every endpoint today.

    A day before the source's seed roster of an index is refused (400): its membership then is not known, and an
    empty or partial list would read as a fact.
    """
    df = store.frame("index_membership")
    parts = _COMPOSITES.get(str(q["index"]), (str(q["index"]),))
    df = df[df["index"].astype("string").isin(parts).to_numpy(dtype=bool)]
    if q.get("date"):
        day = pd.Timestamp(q["date"])
        seeds = {str(i): g["start_date"].mode().iloc[0] for i, g in df.groupby("index", observed=True)}
        late = {i: s for i, s in seeds.items() if day < s}
        if late:
            known = ", ".join(f"{i} from {s:%Y-%m-%d}" for i, s in sorted(late.items()))
            raise ParamError(f"membership on {day:%Y-%m-%d} is not known: {known}", "Invalid date")
        on = (df["start_date"] <= day) & (df["end_date"].isna() | (df["end_date"] >= day))
        df = df[on.to_numpy(dtype=bool)]
    df = df.assign(ticker_then=df["ticker"], ticker=df["current_ticker"].fillna(df["ticker"]))
    df = df.sort_values(["ticker", "start_date", "index"], kind="stable")
    return Answer(records=to_records(df, fields_of("index_members")))


def _bank(store: Store, q: dict[str, Any]) -> pd.DataFrame:
    bank = str(q["bank"]).strip().upper()
    df = store.rows("interest_rates", bank, "bank")
    if df.empty:
        raise NotFound(f"Bank {bank} not found; see /macro/interest-rates/banks")
    return df.sort_values("date", kind="stable")


@handles("interest_rate_snapshot")
def interest_rate_snapshot(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The bank's current policy rate (its latest row); every bank's when none is named."""
    if q.get("bank") is None:
        df = store.frame("interest_rates").sort_values(["bank", "date"], kind="stable")
        return Answer(obj=to_records(df.groupby("bank", observed=True).tail(1), fields_of("interest_rates")))
    return Answer(obj=to_records(_bank(store, q).iloc[-1:], fields_of("interest_rates")))


@handles("inflation_snapshot", "labor_snapshot")
def latest_print(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The latest print of every series, one entry each (series keep their own calendars: weekly, monthly)."""
    dataset = _dataset(ep)
    df = store.frame(dataset)
    if df.empty:
        raise NotFound(f"no {dataset} data is served")
    latest = df.sort_values(["series", "date"], kind="stable").groupby("series", observed=True).tail(1)
    return Answer(obj=to_records(latest, fields_of(ep.schema or dataset)))


@handles("yield_curve_snapshot")
def yield_curve_snapshot(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The latest curve, one key per tenor (null where not published)."""
    df = store.frame("yield_curve")
    if df.empty:
        raise NotFound("no yield curve data is served")
    return Answer(obj=to_records(df.sort_values("date").iloc[-1:], ["date", *YIELD_TENORS])[0])


# ---------------------------------------------------------------------------------------------------------
# search
# ---------------------------------------------------------------------------------------------------------
_SEARCHED = ("income_statements", "balance_sheets", "cash_flow_statements", "financial_metrics")
#: the fields every search answer names
_SEARCH_KEYS = ["ticker", "report_period", "period", "currency", "filing_date"]


def _search_fields(store: Store, names: list[str]) -> list[str] | None:
    """The columns a search needs (its answer's and those its fields resolve to), or ``None`` for every column.

    ``None`` where a dataset's columns are only known by reading it, or a name is no column of any (the whole
    frames then answer, with the same error as ever).
    """
    known: set[str] = set()
    for name in _SEARCHED:
        have = store.columns_of(name)
        if have is None:
            return None
        known |= have
    wanted = list(_SEARCH_KEYS)
    for n in names:
        hit = [c for c in (n, resolve_field(n, known)) if c is not None and c in known]
        if not hit:
            return None
        wanted += hit
    return list(dict.fromkeys(wanted))


def _search_frame(
    store: Store, period: str, known_by: str | None = None, fields: list[str] | None = None
) -> pd.DataFrame:
    """Statements and metrics of one period joined per (ticker, report_period).

    With ``known_by`` (a day), only the periods filed by then: the screen a researcher could have run that day.
    With ``fields`` (:func:`_search_fields`), only those columns are read: the same rows and values of them.
    """
    key = ["ticker", "report_period"]
    frames = []
    for name in _SEARCHED:
        have = store.columns_of(name) if fields is not None else None
        picked = None if have is None else [c for c in fields or [] if c in have]
        df = store.frame(name, picked, where={"period": period})  # one period's rows only are read
        if known_by is not None:
            df = df[(df["filing_date"] <= pd.Timestamp(known_by)).fillna(False).to_numpy(dtype=bool)]
        frames.append(df)
    base = frames[0]
    for other in frames[1:]:
        extra = [c for c in other.columns if c not in base.columns or c in key]
        if other.empty:  # no rows (a dataset the lake lacks, or none filed by the day): its columns, no join
            base = base.assign(**{c: pd.Series(index=base.index, dtype=other[c].dtype) for c in extra if c not in key})
            base = base.sort_values(key, kind="stable")  # in the order an outer merge gives its keys
        else:
            base = base.merge(other[extra], on=key, how="outer")
    return base


def _filter_list(q: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's filters as dicts (anything else is left to :func:`apply_filters` to refuse)."""
    filters = q.get("filters")
    return [f for f in filters if isinstance(f, dict)] if isinstance(filters, list) else []


@handles("screen", "financials_search")
def screener(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Latest period per ticker passing every filter (AND), sorted by ticker (or ``order_by``)."""
    order = str(q.get("order_by") or "ticker")
    fields = _search_fields(store, [*(str(f.get("field")) for f in _filter_list(q)), order.lstrip("-")])
    df = _search_frame(store, q.get("period", "ttm"), q.get("filing_date_lte"), fields)
    if q.get("currency"):  # any ISO 4217 code: one the lake has no statements in matches nothing
        same = df["currency"].astype("string").str.upper().eq(str(q["currency"]).upper())
        df = df[same.fillna(False).to_numpy(dtype=bool)]
    df = df.sort_values("report_period").groupby("ticker", observed=True).tail(1)
    try:
        hits = apply_filters(df, q["filters"])
    except BadRequestError as exc:
        raise ParamError(exc.message, exc.error or "Invalid filters") from None
    for f in q["filters"]:  # a field named by its alias (pe_ratio) is answered under the name the request used
        if f["field"] not in hits.columns:
            hits = hits.assign(**{f["field"]: hits[resolve_field(f["field"], hits.columns) or f["field"]]})
    order = str(q.get("order_by") or "ticker")
    hits = hits.sort_values(order.lstrip("-"), ascending=not order.startswith("-"), kind="stable")
    hits = hits.iloc[: int(q.get("limit") or ep.default_limit or 10)]
    wanted = ["ticker", "report_period", "period", "currency", "filing_date"]
    wanted += [f["field"] for f in q["filters"] if f["field"] not in wanted]
    return Answer(obj=to_records(hits, list(dict.fromkeys(wanted))))


@handles("line_items")
def line_items(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """The chosen line items for each ticker, ``limit`` latest periods each."""
    fields = _search_fields(store, [str(i) for i in q["line_items"]])
    df = _search_frame(store, q.get("period", "ttm"), q.get("filing_date_lte"), fields)
    unknown = [i for i in q["line_items"] if i not in df.columns]
    if unknown:
        raise ParamError(f"unknown line item(s) {', '.join(map(repr, unknown))}", "Invalid line item")
    tickers = [t.strip().upper() for t in q["tickers"]]
    missing = [t for t in tickers if t not in store.known_tickers()]
    if missing:
        raise NotFound(f"Ticker {', '.join(missing)} not found")
    df = df[df["ticker"].astype("string").isin(tickers)]
    if q.get("end_date"):  # as clients of the real service send it: report periods up to that day
        df = df[df["report_period"] <= pd.Timestamp(q["end_date"])]
    df = df.sort_values(["ticker", "report_period"], ascending=[True, False])
    df = df.groupby("ticker", observed=True).head(int(q.get("limit") or 1))
    cols = ["ticker", "report_period", "period", "currency", "filing_date", *q["line_items"]]
    return Answer(obj=to_records(df, list(dict.fromkeys(cols))))


# ---------------------------------------------------------------------------------------------------------
# listings
# ---------------------------------------------------------------------------------------------------------
def listing(store: Store, ep: Endpoint, q: dict[str, Any]) -> Answer:
    """Names a dataset has: tickers, CIKs, banks, investors, insider names, periods, sectors, form types.

    Also the vocabulary documents (item titles, screener fields) and the 13F filers with their CIKs.
    """
    key = ep.response_key
    if not key:  # a vocabulary document: the whole body
        return Answer(body=_DOCUMENTS[ep.name](store, q))
    if ep.name == "institutional_holdings_investors":
        return Answer(obj=_filers(store, q), top={"resource": ep.dataset})
    if ep.name == "analyst_estimates_periods":
        values: list[str] = ["annual", "quarterly"]
    elif ep.name == "index_funds_tickers":
        values = store.keys_of(ep.dataset or "", "fund")
    elif key == "filing_types":
        values = store.keys_of(ep.dataset or "", "filing_type")
    elif key == "sectors":
        facts = store.frame("company_facts")
        with_data = set(store.keys_of(ep.dataset or "", "ticker"))
        values = sorted(
            {
                str(s)
                for t, s in zip(facts["ticker"], facts["sector"], strict=True)
                if str(t) in with_data and pd.notna(s)
            }
        )
    elif key == "tickers":
        values = store.keys_of(ep.dataset or "", "ticker")
    elif key == "ciks":
        values = sorted({str(c) for c in store.frame(ep.dataset or "")["cik"].dropna()})
    elif key == "banks":
        values = store.keys_of("interest_rates", "bank")
    elif key == "investors":
        values = store.keys_of("institutional_ownership", "investor")
    elif key == "names":
        df = store.frame("insider_trades")
        if q.get("ticker"):
            df = store.rows("insider_trades", _ticker(store, ep, q) or "")
        values = sorted({str(n) for n in df["name"].dropna()})
    elif key == "transaction_types":
        values = sorted({str(n) for n in store.frame("insider_trades")["transaction_type"].dropna()})
    else:  # pragma: no cover - catalog test guards this
        raise NotFound(f"no listing {key}")
    return Answer(obj=values, top={"resource": ep.dataset or ep.name})


def _item_types(store: Store, q: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    forms = [q["filing_type"]] if q.get("filing_type") else list(FILING_ITEM_TITLES)
    return {
        f: [
            {"name": n, "title": t, "description": f"{f} {n.replace(',', ' ').replace('-', ' ')}: {t}"}
            for n, t in FILING_ITEM_TITLES[f].items()
        ]
        for f in forms
    }


def _screener_filters(store: Store, q: dict[str, Any]) -> dict[str, Any]:
    metrics: dict[str, dict[str, str]] = {}
    for source in ("income_statements", "balance_sheets", "cash_flow_statements", "financial_metrics"):
        for f, logical in SCHEMAS[source].items():
            if logical in ("float", "int") and f not in metrics:
                metrics[f] = {"type": "number", "source": source}
    for alias, target in FIELD_ALIASES.items():  # the earliest document's names, accepted as the metric they mean
        if target in metrics:
            metrics[alias] = {**metrics[target], "alias_of": target}
    return {"metrics": metrics, "operators": ["eq", "gt", "gte", "lt", "lte", "in"]}


def _filers(store: Store, q: dict[str, Any]) -> list[dict[str, Any]]:
    df = store.frame("institutional_ownership")[["investor", "investor_cik"]].drop_duplicates("investor")
    if q.get("name"):
        df = df[df["investor"].astype("string").str.contains(str(q["name"]), case=False, regex=False)]
    df = df.sort_values("investor")
    return [
        {"cik": None if pd.isna(c) else str(c), "name": str(n)}
        for n, c in zip(df["investor"], df["investor_cik"], strict=True)
    ]


#: the listings whose answer is a document rather than names (``Endpoint.response_schema``)
_DOCUMENTS: dict[str, Callable[[Store, dict[str, Any]], dict[str, Any]]] = {
    "filing_items_types": _item_types,
    "screener_filters": _screener_filters,
}
