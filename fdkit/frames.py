"""JSON records -> typed, tidy DataFrames (vectorised through pyarrow; no per-row model objects).

Every frame follows one set of rules: ticker-keyed data is indexed ``(ticker, <date>)`` for one ticker or many;
date levels are ``datetime64[ns]`` (daily, tz-naive) or ``datetime64[ns, UTC]`` (intraday bars); numbers are
float64, counts that can be missing ``Int64``, flags ``boolean``, labels ``category``, text ``string``; never
``object``. An empty result is an empty frame with the full schema. Dtypes come from :mod:`fdkit.schema`.

Nested payloads are made tidy:

* segmented revenues explode to one row per item per segment member (``name``, ``amount``, ``start_period``,
  ``end_period``, ``segment_label``, ``segment_type``); an item without members keeps one row; ``line_item`` is
  accepted in place of ``name``.
* the ``/segments`` paths explode to one row per line item, category and label (``line_item``, ``category``,
  ``label``, ``value``).
* earnings flatten ``quarterly``/``annual`` objects to ``quarterly_<field>``/``annual_<field>`` columns.
* filing items give one row per item; their exhibits are a frame of their own (:func:`exhibits_frame`).

Example:
    >>> body = {"ticker": "AAPL", "prices": [{"time": "2024-01-02", "open": 1.0, "high": 2.0, "low": 0.5,
    ...         "close": 1.5, "volume": 10}]}
    >>> df = to_frame("prices", [({"ticker": "AAPL", "interval": "day"}, body)])
    >>> df.index.names, str(df.index.dtypes["time"]), str(df["volume"].dtype)
    (FrozenList(['ticker', 'time']), 'datetime64[ns]', 'Int64')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import catalog as _catalog
from .catalog import Endpoint
from .schema import SCHEMAS, fields_of

__all__ = ["to_frame", "typed_frame", "empty_frame", "exhibits_frame", "records_of"]


def _column(values: list[Any], logical: str) -> Any:
    if logical == "float":
        try:
            return pa.array(values, type=pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return pd.to_numeric(pd.Series(values, dtype="object"), errors="coerce").to_numpy(dtype="float64")
    if logical == "int":
        try:
            arr = pa.array(values, type=pa.int64())
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arr = pa.array(pd.to_numeric(pd.Series(values, dtype="object"), errors="coerce"), type=pa.float64())
            arr = pc.cast(pc.round(arr), pa.int64())
        return pd.array(arr.to_pandas(types_mapper=lambda t: pd.Int64Dtype()), dtype="Int64")
    if logical == "bool":
        return pd.array(values, dtype="boolean")
    if logical in ("string", "category"):
        text = [None if v is None else (v if isinstance(v, str) else str(v)) for v in values]
        # categories keep pandas' default string dtype, so a Parquet round trip gives an equal dtype back
        if logical == "string":
            return pd.array(text, dtype="string")
        cat = pd.Categorical(text)
        if not len(cat.categories):  # all missing: string categories, so Parquet stores a dictionary, not nulls
            cat = pd.Categorical(text, categories=pd.Index([], dtype="str"))
        return cat
    if logical == "date":
        arr = pa.array([None if v is None else str(v)[:10] for v in values], type=pa.string())
        days = pc.cast(arr, pa.date32())
        return days.to_numpy(zero_copy_only=False).astype("datetime64[ns]")
    if logical == "datetime":
        return _parse_utc(pa.array([None if v is None else str(v) for v in values], type=pa.string()))
    raise ValueError(f"cannot build a column of logical type {logical!r}")


def _parse_utc(arr: pa.Array) -> pd.DatetimeIndex:
    """ISO-8601 strings (``...Z`` or dates) -> UTC nanosecond timestamps."""
    try:
        ts = pc.cast(arr, pa.timestamp("ns", tz="UTC"))
        return pd.DatetimeIndex(ts.to_pandas())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pd.DatetimeIndex(pd.to_datetime(arr.to_pandas(), utc=True, format="ISO8601"))


def typed_frame(records: Sequence[Mapping[str, Any]], schema: str, *, extra: Iterable[str] = ()) -> pd.DataFrame:
    """Build a frame with the columns and dtypes of a record schema (no index).

    Args:
        records: decoded JSON records.
        schema: record schema name.
        extra: additional float64 columns to keep (search results name their fields).

    Returns:
        The frame; every schema column is present (missing fields are nulls of the right dtype).

    Example:
        >>> typed_frame([{"bank": "FED", "date": "2024-09-19", "rate": 4.875}], "interest_rates").dtypes["rate"]
        dtype('float64')
    """
    table = SCHEMAS[schema]
    cols: dict[str, Any] = {}
    for field, logical in table.items():
        if logical == "nested":
            continue
        cols[field] = _column([r.get(field) for r in records], logical)
    for field in extra:
        if field not in cols:
            cols[field] = _column([r.get(field) for r in records], "float")
    return pd.DataFrame(cols, index=pd.RangeIndex(len(records)))


def empty_frame(endpoint: str | Endpoint) -> pd.DataFrame:
    """The empty frame of an endpoint: full schema, right dtypes, right index.

    Args:
        endpoint: endpoint name or object.

    Returns:
        An empty typed frame.

    Example:
        >>> empty_frame("balance_sheets").index.names
        FrozenList(['ticker', 'report_period'])
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    return _finish(ep, typed_frame([], _frame_schema(ep)), {})


def _frame_schema(ep: Endpoint) -> str:
    if ep.name == "segmented_revenues":
        return "segment_items"
    return ep.schema or ""


def records_of(ep: Endpoint, params: Mapping[str, Any], body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The flat records of one response, with the request's ticker (or bank) filled in where the payload omits it.

    Args:
        ep: the endpoint.
        params: the request parameters.
        body: the decoded response.

    Returns:
        Records ready for :func:`typed_frame` (nested payloads exploded/flattened).
    """
    value = body.get(ep.response_key)
    if value is None and ep.kind == "search":
        value = body.get("results")  # an older key of the screener
    if value is None:
        return []
    records = value if isinstance(value, list) else [value]
    fill: dict[str, Any] = {}
    for key in ("ticker", "bank"):
        v = body.get(key) if isinstance(body.get(key), str) else params.get(key)
        if isinstance(v, str):
            fill[key] = v.upper()
    if ep.name == "filing_items":
        for key in ("ticker", "filing_type", "accession_number", "filing_date", "year", "quarter"):
            if body.get(key) is not None:
                fill[key] = body[key]
    if ep.name == "segmented_revenues":
        records = _explode_segments(records)
    elif ep.schema == "segmented_financials":
        records = _explode_line_items(records)
    elif ep.name == "earnings":
        records = [_flatten_earnings(r) for r in records]
    if fill:
        records = [{**fill, **{k: v for k, v in r.items() if v is not None or k not in fill}} for r in records]
    if "cik" in SCHEMAS.get(ep.schema or "", {}):
        for r in records:
            if isinstance(r.get("cik"), int):
                r["cik"] = f"{r['cik']:010d}"
    return records


def _explode_segments(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for rep in reports:
        head = {k: v for k, v in rep.items() if k != "items"}
        for item in rep.get("items") or []:
            base = {**head, "name": item.get("name", item.get("line_item")), "amount": item.get("amount"),
                    "start_period": item.get("start_period"), "end_period": item.get("end_period")}  # fmt: skip
            members = item.get("segments") or []
            if not members:
                rows.append({**base, "segment_label": None, "segment_type": None})
            for m in members:
                rows.append({**base, "segment_label": m.get("label"), "segment_type": m.get("type")})
    return rows


def _explode_line_items(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    header = set(SCHEMAS["segmented_financials"])
    rows = []
    for rep in reports:
        head = {k: v for k, v in rep.items() if k in header}
        for line_item, cats in rep.items():
            if line_item in header or not isinstance(cats, dict):
                continue
            for category, entries in cats.items():
                for e in entries or []:
                    rows.append({**head, "line_item": line_item, "category": category, "label": e.get("label"),
                                 "value": e.get("value")})  # fmt: skip
    return rows


def _flatten_earnings(rec: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in rec.items() if k not in ("quarterly", "annual")}
    for dim in ("quarterly", "annual"):
        for k, v in (rec.get(dim) or {}).items():
            out[f"{dim}_{k}"] = v
    return out


def _finish(ep: Endpoint, df: pd.DataFrame, params: Mapping[str, Any]) -> pd.DataFrame:
    index = list(ep.index)
    if ep.kind == "search":
        index = ["ticker", "report_period"]
    if ep.schema in ("prices", "crypto_prices") or ep.name == "price_snapshot":
        intraday = params.get("interval") == "minute"
        if not intraday and "time" in df.columns:
            df["time"] = df["time"].dt.tz_convert("UTC").dt.tz_localize(None).astype("datetime64[ns]")
        index = ["ticker", "time"]
    index = [c for c in index if c in df.columns]
    if not index:
        return df
    df = df.set_index(index)
    if len(df) > 1:
        df = df.sort_index(kind="stable")
    return df


Responses = Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]


def to_frame(endpoint: str | Endpoint, responses: Responses) -> pd.DataFrame:
    """Turn one or more ``(params, body)`` responses of one endpoint into one typed, indexed frame.

    Args:
        endpoint: endpoint name or object.
        responses: the requests' parameters and decoded bodies (one per ticker for multi-ticker calls).

    Returns:
        The tidy frame, sorted by its index (an empty typed frame when there are no records).

    Example:
        >>> to_frame("interest_rates", [({"bank": "FED"}, {"interest_rates": []})]).index.names
        FrozenList(['bank', 'date'])
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    records: list[dict[str, Any]] = []
    for params, body in responses:
        records.extend(records_of(ep, params, body))
    schema = _frame_schema(ep)
    extra: list[str] = []
    if ep.kind == "search":
        known = set(SCHEMAS[schema])
        extra = list(dict.fromkeys(k for r in records for k in r if k not in known))
    df = typed_frame(records, schema, extra=extra)
    return _finish(ep, df, responses[0][0] if responses else {})


def exhibits_frame(responses: Responses) -> pd.DataFrame:
    """The exhibits of filing-items responses: one row per exhibit, indexed ``(ticker, filing_date)``.

    Args:
        responses: ``(params, body)`` pairs of ``/filings/items``.

    Returns:
        Columns ``accession_number``, ``item``, ``number``, ``description``, ``url``, ``text`` (strings).

    Example:
        >>> exhibits_frame([]).columns.tolist()
        ['accession_number', 'item', 'number', 'description', 'url', 'text']
    """
    rows = []
    for params, body in responses:
        for item in body.get("items") or []:
            for ex in item.get("exhibits") or []:
                rows.append({"ticker": body.get("ticker") or params.get("ticker"),
                             "filing_date": body.get("filing_date"), "accession_number": body.get("accession_number"),
                             "item": item.get("number"),
                             **{k: ex.get(k) for k in ("number", "description", "url", "text")}})  # fmt: skip
    cols = {"ticker": _column([r["ticker"] for r in rows], "category"),
            "filing_date": _column([r["filing_date"] for r in rows], "date")}  # fmt: skip
    for k in ("accession_number", "item", "number", "description", "url", "text"):
        cols[k] = _column([r[k] for r in rows], "string")
    return pd.DataFrame(cols).set_index(["ticker", "filing_date"])


def fields_in_frame(endpoint: str) -> list[str]:
    """Columns (index levels included) of an endpoint's frame, in schema order.

    Args:
        endpoint: endpoint name.

    Returns:
        Field names.

    Example:
        >>> fields_in_frame("interest_rates")
        ['bank', 'date', 'name', 'rate']
    """
    return fields_of(_frame_schema(_catalog.get(endpoint)))
