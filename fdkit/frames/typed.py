"""JSON records -> typed, tidy DataFrames (vectorised through pyarrow; no per-row model objects).

Every frame follows one set of rules: ticker-keyed data is indexed ``(ticker, <date>)`` for one ticker or many;
date levels are ``datetime64[ns]`` (daily, tz-naive) or ``datetime64[ns, UTC]`` (intraday bars); numbers are
float64, counts that can be missing ``Int64``, flags ``boolean``, closed vocabularies ``category`` over their whole
value set, other labels and text ``string`` (a ticker or bank index level ``str``, the string dtype Parquet keeps
for index levels); never ``object``. No dtype depends on the data a call returned, so frames of separate calls
concatenate with their dtypes. An empty result is an empty
frame with the full schema. Dtypes come from :mod:`fdkit.catalog.schema` (:mod:`fdkit.frames.dtypes`).

Nested payloads are made tidy by their :mod:`fdkit.catalog.shapes` (named by ``Endpoint.shape``): segmented revenues
explode to one row per item per segment member, the ``/segments`` paths to one row per line item, category and
label, earnings flatten ``quarterly``/``annual`` to prefixed columns. Filing items give one row per item (the
filing's header, ``Endpoint.context_fields``, on each); their exhibits are a frame of their own
(:func:`exhibits_frame`).

Example:
    >>> body = {"ticker": "AAPL", "prices": [{"time": "2024-01-02", "open": 1.0, "high": 2.0, "low": 0.5,
    ...         "close": 1.5, "volume": 10}]}
    >>> df = to_frame("prices", [({"ticker": "AAPL", "interval": "day"}, body)])
    >>> df.index.names, str(df.index.dtypes["time"]), str(df["volume"].dtype)
    (FrozenList(['ticker', 'time']), 'datetime64[ns]', 'Int64')
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from fdkit.catalog import endpoints as _catalog
from fdkit.catalog.endpoints import Endpoint
from fdkit.catalog.schema import SCHEMAS, fields_of, pandas_dtype
from fdkit.catalog.shapes import SHAPES, Shape
from fdkit.errors import NarrowTypeWarning
from fdkit.frames.dtypes import STRING_DTYPE, as_label, closed_vocabulary, label_index
from fdkit.frames.memory import release_unused
from fdkit.frames.runs import Runs

__all__ = [
    "to_frame",
    "typed_frame",
    "empty_frame",
    "exhibits_frame",
    "records_of",
    "to_records",
    "ARROW_STREAM",
    "FORMATS_HEADER",
    "part_of_rows",
    "join_parts",
    "arrow_rows",
    "Part",
    "PageRows",
    "part_tag",
    "part_bytes",
    "part_buffer",
    "part_from_bytes",
    "plain_text",
    "as_written",
    "PART_COMPRESSION",
    "response_part",
    "frame_from_parts",
    "fields_in_frame",
    "json_columns",
]


def _coerce(values: list[Any], kind: str) -> list[Any]:
    """Slow path for payloads that do not match the declared types (numbers as strings, ints as floats...)."""
    if kind in ("float", "int"):
        num = pd.to_numeric(pd.Series(values, dtype="object"), errors="coerce")
        return [None if v != v else (round(v) if kind == "int" else v) for v in num.tolist()]
    if kind == "bool":
        return [None if v is None else str(v).strip().lower() in ("1", "true", "yes") for v in values]
    return [None if v is None else str(v) for v in values]


_ARROW = {
    "float": pa.float64(),
    "int": pa.int64(),
    "bool": pa.bool_(),
    "string": pa.string(),
    "category": pa.string(),
    "date": pa.string(),
    "datetime": pa.string(),
}


def _arrow_column(values: list[Any], logical: str, field: str = "") -> pa.Array:
    """One column as an Arrow array of the logical type (dates and times still as text).

    A date or time column whose values are not dates (a newer service, or a field the schema types too narrowly)
    stays text, with a :class:`NarrowTypeWarning`: never a crash, never a lost value.
    """
    kind = "string" if logical in ("category", "date", "datetime") else logical
    try:
        arr = pa.array(values, type=_ARROW[logical])
    except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError):
        arr = pa.array(_coerce(values, kind), type=_ARROW[logical])
    try:
        if logical == "date":
            return pc.cast(pc.cast(pc.utf8_slice_codeunits(arr, 0, 10), pa.date32()), pa.timestamp("ns"))
        if logical == "datetime":
            try:
                return pc.cast(arr, pa.timestamp("ns", tz="UTC"))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                parsed = pd.to_datetime(arr.to_pandas(), utc=True, format="ISO8601")
                return pa.array(parsed, type=pa.timestamp("ns", tz="UTC"))
    except (pa.ArrowInvalid, ValueError):
        bad = next((v for v in arr.to_pylist() if v is not None), None)
        warnings.warn(
            f"{field or 'a field'}: values such as {bad!r} are not {logical}s; kept as text",
            NarrowTypeWarning,
            stacklevel=4,
        )
    return arr


def _extra_column(values: list[Any]) -> pa.Array:
    """A field fdkit does not know, typed by what it holds (numbers, flags, text; nested values as JSON text)."""
    if any(isinstance(v, dict | list) for v in values):
        values = [None if v is None else orjson.dumps(v).decode() for v in values]
    try:
        arr = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # truly mixed: text
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())
    return arr.cast(pa.string()) if pa.types.is_null(arr.type) else arr


_MAPPER = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype(), pa.string(): pd.StringDtype()}


def _arrow_table(records: Sequence[Mapping[str, Any]], columns: Mapping[str, str], *, extras: bool = False) -> pa.Table:
    """Typed columns of ``records``; with ``extras``, fields outside ``columns`` follow as inferred columns."""
    values, exact = _transpose(records, list(columns))
    arrays = {f: _arrow_column(values[f], logical, f) for f, logical in columns.items()}
    if extras and not exact:
        unknown = [k for k in dict.fromkeys(chain.from_iterable(records)) if k not in columns]
        for f, col in _transpose(records, unknown)[0].items():
            arrays[f] = _extra_column(col)
    return pa.table(arrays) if arrays else pa.table({})


def _transpose(records: Sequence[Mapping[str, Any]], fields: list[str]) -> tuple[dict[str, list[Any]], bool]:
    """Each field's values down the records (``None`` where a record lacks it), and whether they hold no other field.

    A field every record has is read in C (``map`` of an ``itemgetter``: no row tuples, faster than ``zip`` over
    rows); a field some record lacks by a lookup per record. When every record holds exactly the fields all of them
    have (the count of keys settles it, in C), the records hold no other field, and a field none of them has is
    all ``None`` without a lookup (the public service's bars lack fdkit's ``adj_close`` and ``basis``).
    """
    out: dict[str, list[Any]] = {}
    lacking = []
    for f in fields:
        try:
            out[f] = list(map(itemgetter(f), records))
        except KeyError:
            lacking.append(f)
    exact = set(map(len, records)) <= {len(out)}
    for f in lacking:
        out[f] = [None] * len(records) if exact else [r.get(f) for r in records]
    return {f: out[f] for f in fields}, exact


def _to_pandas(table: pa.Table, columns: Mapping[str, str]) -> pd.DataFrame:
    """Typed columns as pandas: closed vocabularies as categories over their whole set, other labels as ``string``."""
    labels = [f for f, t in columns.items() if t == "category" and f in table.column_names]
    cats = [f for f in labels if closed_vocabulary(f) is not None]
    for f in cats:  # categories are made in Arrow (a dictionary), not by pandas factorising strings
        i = table.schema.get_field_index(f)
        if pa.types.is_string(table.schema.field(i).type) or pa.types.is_large_string(table.schema.field(i).type):
            table = table.set_column(i, f, pc.dictionary_encode(table.column(i).combine_chunks()))
    df = table.to_pandas(types_mapper=_MAPPER.get, categories=cats)
    for f in labels:
        df[f] = as_label(df[f])
    return df


Part = tuple[pa.Table, int, dict[str, Any]]  # a response's typed columns, its row count, its constants

#: the media type of an Arrow IPC page between fdkit peers (a part, :func:`part_bytes`); JSON is the default
ARROW_STREAM = "application/vnd.apache.arrow.stream"
#: the header a service lists its data formats in (fdkit's own service: JSON and Arrow)
FORMATS_HEADER = "X-Fdkit-Formats"


def _part(recs: list[dict[str, Any]], fill: Mapping[str, Any], columns: Mapping[str, str]) -> Part:
    """One response's typed columns; per-response constants (the ticker) are kept aside, not written per row."""
    own = {f: t for f, t in columns.items() if not (f in fill and (not recs or f not in recs[0]))}
    table = _arrow_table(recs, own, extras=True)  # fields fdkit does not know are kept, typed by their values
    return table, len(recs), {f: fill[f] for f in columns if f not in own}


def part_tag(endpoint: str | Endpoint) -> str:
    """A short tag of an endpoint's frame columns and dtypes: cached parts of another schema never match.

    Args:
        endpoint: endpoint name or object.

    Returns:
        A hex digest.

    Example:
        >>> part_tag("prices") == part_tag("prices") != part_tag("income_statements")
        True
    """
    import hashlib

    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    columns = _columns_of(_frame_schema(ep))
    return hashlib.sha256(orjson.dumps(list(columns.items()))).hexdigest()[:12]


#: how cached and bundled parts are compressed: zstd at its default level writes a price history in about a third
#: of its Parquet bytes' double (BENCHMARKS.md, research scale) and reads back at memory speed
PART_COMPRESSION = "zstd"


#: a part smaller than this is written as it is whatever the compression asked: a few rows of a hundred statement
#: columns compress little, and reading back hundreds of tiny compressed buffers cost more than the bytes saved
#: (a 1,000-company statement panel read back from the cache: 3x slower compressed)
COMPRESS_FROM = 64 * 2**10


def part_bytes(part: Part, compression: str | None = None, *, labels: bool = True, narrow: bool | None = None) -> bytes:
    """:func:`part_buffer`'s bytes (a copy of them: a ``bytes`` object).

    Example:
        >>> part_from_bytes(part_bytes((pa.table({"x": [1.0]}), 1, {})))[1]
        1
    """
    return part_buffer(part, compression, labels=labels, narrow=narrow).to_pybytes()


def part_buffer(
    part: Part, compression: str | None = None, *, labels: bool = True, narrow: bool | None = None
) -> pa.Buffer:
    """Serialise a part (Arrow IPC; the constants travel in the schema metadata).

    Args:
        part: ``(arrow table, rows, constants)``.
        compression: ``"zstd"`` or ``"lz4"`` compresses the buffers of a part of :data:`COMPRESS_FROM` bytes or
            more (:func:`part_from_bytes` reads either); ``None`` writes them as they are (a page sent at once).
        labels: with compression, write every text column as a dictionary of its values; ``False`` leaves text
            as it is (a table many tickers' parts are sliced from: each slice would carry every value of the
            dictionary).
        narrow: write columns narrower where nothing is lost (days for midnights, float32-exact numbers as
            float32); default: with compression.

    Returns:
        The bytes, in an Arrow buffer (no copy of them).

    Example:
        >>> part = (pa.table({"x": [1.0] * 10_000}), 10_000, {"ticker": "X"})
        >>> len(part_bytes(part, "zstd")) < len(part_bytes(part))
        True
        >>> part_from_bytes(part_bytes(part, "zstd"))[1:]
        (10000, {'ticker': 'X'})
    """
    table, n, consts = part
    meta = {b"fdkit.n": str(n).encode(), b"fdkit.constants": orjson.dumps(consts)}
    options = None
    large = table.nbytes >= COMPRESS_FROM
    if compression and large:  # labels as a dictionary of values (read back as text)
        options = pa.ipc.IpcWriteOptions(compression=compression)
        for i, field in enumerate(table.schema):
            if labels and pa.types.is_string(field.type):
                table = table.set_column(i, field.name, pc.dictionary_encode(table.column(i)))
    if (bool(compression) if narrow is None else narrow) and large:
        table = _narrowed(table)
    table = table.replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue()


def part_from_bytes(data: bytes | memoryview, *, text: bool = True) -> Part:
    """Read a part written by :func:`part_bytes`.

    Args:
        data: the bytes.
        text: the part as it was written: text columns written as dictionaries and columns written narrower
            (compressed parts) are read back in their own types; ``False`` leaves them as stored
            (:func:`frame_from_parts` takes either: a closed vocabulary's categories are then made from a
            dictionary's few values, a float64 column from its float32 values, without a widened copy first).

    Returns:
        ``(arrow table, rows, constants)``.
    """
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    meta = table.schema.metadata or {}
    part = (table.replace_schema_metadata(None), int(meta[b"fdkit.n"]), orjson.loads(meta[b"fdkit.constants"]))
    return as_written(part) if text else part


def as_written(part: Part) -> Part:
    """A part read as stored (:func:`part_from_bytes` with ``text=False``) in the types it was written in."""
    table, n, consts = plain_text(part)
    return _widened(table), n, consts


def _all_as_written(parts: Sequence[Part | Runs]) -> list[Part | Runs]:
    """:func:`as_written` of many parts, the columns to convert found once per layout (a bulk answer has one).

    Example:
        >>> table = pa.table({"basis": pa.array(["as_traded"]).dictionary_encode(), "x": [1.0]})
        >>> [str(t) for t in _all_as_written([(table, 1, {}), (table, 1, {})])[1][0].schema.types]
        ['string', 'double']
    """
    out: list[Part | Runs] = []
    schema: pa.Schema | None = None
    casts: list[tuple[int, pa.Field]] = []
    for piece in parts:
        table = piece.table if isinstance(piece, Runs) else piece[0]
        if schema is None or not table.schema.equals(schema, check_metadata=True):
            schema, casts = table.schema, []
            for i, field in enumerate(schema):
                own = (field.metadata or {}).get(_OWN_TYPE)
                if pa.types.is_dictionary(field.type):
                    casts.append((i, pa.field(field.name, field.type.value_type)))
                elif own is not None and own.decode() in _WIDE:
                    casts.append((i, pa.field(field.name, _WIDE[own.decode()], field.nullable)))
        for i, field in casts:
            table = table.set_column(i, field, table.column(i).cast(field.type))
        if isinstance(piece, Runs):
            out.append(piece if table is piece.table else Runs(table, piece.offsets, piece.rows, piece.constants))
        else:
            out.append((table, piece[1], piece[2]))
    return out


#: the field metadata naming a column's own type where a compressed part holds it narrower (read back wide)
_OWN_TYPE = b"fdkit.type"
_WIDE = {"timestamp[ns]": pa.timestamp("ns"), "double": pa.float64(), "int64": pa.int64()}


def _narrowed(table: pa.Table) -> pa.Table:
    """Columns written narrower where nothing is lost (read back wide by :func:`_widened`).

    Midnight times as days, float32-exact numbers as float32, counts that fit as int32: a price history's bars
    take a quarter fewer bytes compressed (Parquet's files do the same).

    Example:
        >>> t = pa.table({"d": pa.array([0, 86_400 * 10**9], pa.timestamp("ns")), "x": [1.5, 2.25], "n": [1, 2]})
        >>> [str(f.type) for f in _narrowed(t).schema], _widened(_narrowed(t)).equals(t)
        (['date32[day]', 'float', 'int32'], True)
        >>> noon = pa.table({"t": pa.array([12 * 3600 * 10**9], pa.timestamp("ns"))})
        >>> str(_narrowed(noon).schema.field("t").type)  # a time of day: kept as it is
        'timestamp[ns]'
    """
    for i, field in enumerate(table.schema):
        column, kind, narrow = table.column(i), field.type, None
        try:
            if kind.equals(pa.timestamp("ns")):
                narrow = column.cast(pa.date32(), safe=False)
                if pc.all(pc.equal(narrow.cast(kind), column)).as_py() not in (True, None):
                    narrow = None  # a time of day (the cast keeps only the day)
            elif kind.equals(pa.int64()):
                narrow = column.cast(pa.int32())  # refused where a count does not fit
            elif kind.equals(pa.float64()):
                narrow = column.cast(pa.float32(), safe=False)
                same = pc.or_(pc.equal(narrow.cast(pa.float64()), column), pc.is_nan(column))
                if pc.all(same).as_py() not in (True, None):
                    narrow = None
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            narrow = None
        if narrow is not None:
            own = pa.field(field.name, narrow.type, field.nullable, {_OWN_TYPE: str(kind).encode()})
            table = table.set_column(i, own, narrow)
    return table


def _widened(table: pa.Table) -> pa.Table:
    """The columns :func:`_narrowed` wrote narrower, in their own types again."""
    if not any(field.metadata for field in table.schema):
        return table
    for i, field in enumerate(table.schema):
        own = (field.metadata or {}).get(_OWN_TYPE)
        if own is not None and own.decode() in _WIDE:
            table = table.set_column(
                i, pa.field(field.name, _WIDE[own.decode()], field.nullable), table.column(i).cast(_WIDE[own.decode()])
            )
    return table


def _assemble(pieces: Sequence[Part | Runs], columns: Mapping[str, str]) -> pd.DataFrame:
    """One typed frame from several responses' parts; fields outside the schema follow the schema's columns.

    A :class:`~fdkit.frames.runs.Runs` stands for its runs' parts: its rows are taken from its table in one
    stretch (a slice when the runs follow each other), its runs' constants are their rows' as a part's are.
    """
    parts = [_nonempty(p) if isinstance(p, Runs) else p for p in pieces]
    parts = [p for p in parts if (len(p) if isinstance(p, Runs) else p[1])]
    if not parts:
        return _to_pandas(_arrow_table([], columns), columns)
    extras: dict[str, pa.DataType] = {}
    layouts: dict[tuple[str, ...], pa.Schema] = {}  # a bulk answer's thousand parts: one layout
    last: pa.Schema | None = None
    for p in parts:
        schema = (p.table if isinstance(p, Runs) else p[0]).schema  # (microseconds; column names: tens of them)
        if last is None or not schema.equals(last):
            layouts[tuple(schema.names)] = schema
            last = schema
    for names, schema in layouts.items():
        for f in names:
            if f not in columns:
                extras.setdefault(f, schema.field(f).type)
    if len(layouts) > 1:  # mixed payloads: constants become columns
        order = [*columns, *extras]
        tables = []
        for table, n, consts in (q for p in parts for q in (p.parts() if isinstance(p, Runs) else [p])):
            for f, v in consts.items():
                table = table.append_column(f, _arrow_column([v] * n, columns[f], f))
            for f, kind in extras.items():
                if f not in table.column_names:
                    table = table.append_column(f, pa.nulls(n, type=kind))
            tables.append(table.select(order))
        return _to_pandas(pa.concat_tables(tables, promote_options="permissive"), columns)
    tables = [p.covering() if isinstance(p, Runs) else p[0] for p in parts]
    const_rows = [
        row
        for p in parts
        for row in (zip(p.rows.tolist(), p.constants, strict=True) if isinstance(p, Runs) else [(p[1], p[2])])
    ]
    return _with_constants(tables[0] if len(tables) == 1 else _concatenated(tables), const_rows, columns)


def _nonempty(runs: Runs) -> Runs:
    """The runs with rows (a response without rows adds no row and no label, as an empty part)."""
    keep = runs.rows > 0
    if bool(keep.all()):
        return runs
    kept = [c for c, k in zip(runs.constants, keep.tolist(), strict=True) if k]
    return Runs(runs.table, runs.offsets[keep], runs.rows[keep], kept)


def _with_constants(
    table: pa.Table, const_rows: list[tuple[int, dict[str, Any]]], columns: Mapping[str, str]
) -> pd.DataFrame:
    """The frame of a table of responses' rows (``n`` rows each, in order) with their constants as columns."""
    extras = [f for f in table.column_names if f not in columns]
    order = [*columns, *extras]
    df = _to_pandas(table, {f: t for f, t in columns.items() if f in table.column_names})
    for field in [f for f in columns if f not in table.column_names]:
        if columns[field] == "category":  # the ticker: codes into one category per response, no per-row work
            labels = [str(c[field]) for _, c in const_rows]
            cats = pd.Index(sorted(set(labels)), dtype=STRING_DTYPE)
            position = {label: i for i, label in enumerate(cats)}
            codes = np.repeat(
                np.array([position[label] for label in labels], dtype=np.int32), [n for n, _ in const_rows]
            )
            df[field] = pd.Categorical.from_codes(codes, categories=cats)
        else:
            values = [c[field] for n, c in const_rows for _ in range(n)]
            df[field] = _to_pandas(pa.table({field: _arrow_column(values, columns[field], field)}), {})[
                field
            ].to_numpy()
            df[field] = df[field].astype(pandas_dtype(columns[field]))  # type: ignore[call-overload]
    return df[order]


def _concatenated(tables: list[pa.Table]) -> pa.Table:
    """Tables of one layout as one, in one chunk per column when they are many (a thousand tickers' parts).

    Alike schemas are concatenated as they are (promoting types is 5x slower for a thousand parts); text columns
    of a thousand chunks convert to pandas at half the speed of one.

    Example:
        >>> t = pa.table({"x": [1.0]})
        >>> _concatenated([t, t, t.cast(pa.schema([("x", pa.float32())]))])["x"].to_pylist()
        [1.0, 1.0, 1.0]
    """
    try:
        table = pa.concat_tables(tables)
    except pa.ArrowInvalid:  # the same columns, some of other types (a column of nulls in one part)
        table = pa.concat_tables(tables, promote_options="permissive")
    return table.combine_chunks() if len(tables) > _FEW_CHUNKS else table


#: above this many parts, a concatenated table is combined into one chunk per column before pandas reads it
_FEW_CHUNKS = 64


def _columns_of(schema: str, extra: Iterable[str] = ()) -> dict[str, str]:
    cols = {f: t for f, t in SCHEMAS[schema].items() if t != "nested"}
    for f in extra:
        cols.setdefault(f, "float")
    return cols


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
    columns = _columns_of(schema, extra)
    return _to_pandas(_arrow_table(records, columns), columns)


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
    return ep.row_schema or ""


def records_of(
    ep: Endpoint, params: Mapping[str, Any], body: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The flat records of one response and the values to fill where the payload omits them (ticker, bank).

    Args:
        ep: the endpoint.
        params: the request parameters.
        body: the decoded response.

    Returns:
        ``(records, constants)``: records ready for a typed frame (nested payloads exploded/flattened) and the
        per-response constants (the request's ticker or bank, filing headers).
    """
    shape = SHAPES[ep.shape]
    value = shape.payload(body, ep.response_key)
    if value is None and ep.kind == "search":
        value = body.get("results")  # an older key of the screener
    if value is None:
        return [], {}
    records = value if isinstance(value, list) else [value]
    fill: dict[str, Any] = {}
    for key in ("ticker", "bank") if shape.fills_ticker else ("bank",):
        v = body.get(key) if isinstance(body.get(key), str) else params.get(key)
        if isinstance(v, str):
            fill[key] = v.upper()
    for key in ep.context_fields:
        if body.get(key) is not None:
            fill[key] = body[key]
    for key, value in ep.row_filter.items():  # the endpoint's slice of a dataset names itself (statement)
        fill.setdefault(key, value)
    if type(shape) is Shape and set(map(type, records)) <= {dict}:
        records = list(records)  # flat records of decoded JSON are their own rows (what flatten gives, in C)
    else:
        records = shape.flatten(records)
    if "cik" in SCHEMAS.get(ep.schema or "", {}) and records and any(isinstance(r.get("cik"), int) for r in records):
        records = [{**r, "cik": f"{r['cik']:010d}"} if isinstance(r.get("cik"), int) else r for r in records]
    return records, fill


def _finish(ep: Endpoint, df: pd.DataFrame, params: Mapping[str, Any]) -> pd.DataFrame:
    df = _labelled(_indexed(ep, df, params))
    if ep.split_adjusted:  # prices and per-share values of the service share one split basis (fdkit.frames.basis)
        df.attrs["split_basis"] = "adjusted"
    return df


def _indexed(ep: Endpoint, df: pd.DataFrame, params: Mapping[str, Any]) -> pd.DataFrame:
    index = list(ep.index)
    when = ep.time_index
    if when is not None and params.get("interval") != "minute" and when in df.columns:
        df[when] = df[when].dt.tz_localize(None)  # daily and longer bars: tz-naive dates
    index = [c for c in index if c in df.columns]
    if not index:
        return df
    df = _set_index(df, index)
    if len(df) > 1 and not df.index.is_monotonic_increasing:
        df = df.sort_index(kind="stable")
    return df


def _labelled(df: pd.DataFrame) -> pd.DataFrame:
    """Labels whose dtype does not depend on the data (:func:`fdkit.frames.dtypes.as_label`), index levels included.

    The per-response constants (a ticker) are coded as categories while the frame is assembled and indexed (no
    per-row work); here they become what every frame has: text (a ``string`` column, a ``str`` index level), or a
    category over a closed vocabulary.
    """
    for col in [c for c, kind in df.dtypes.items() if isinstance(kind, pd.CategoricalDtype)]:  # (no column made)
        df[col] = as_label(df[col])
    df.index = label_index(df.index)
    return df


def _set_index(df: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """``set_index`` without re-factorising what is already coded (categoricals, strictly increasing dates)."""
    if len(names) == 1:
        return df.set_index(names[0])
    levels, codes = [], []
    for name in names:
        col = df[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            levels.append(col.cat.categories)
            codes.append(col.cat.codes.to_numpy())
            continue
        values = col.to_numpy()
        if col.dtype.kind == "M" and len(values) and not col.isna().any() and bool((values[1:] > values[:-1]).all()):
            levels.append(pd.Index(col.array))
            codes.append(np.arange(len(values)))
            continue
        c, u = pd.factorize(col, sort=True)
        levels.append(u)
        codes.append(c)
    if any((c < 0).any() for c in codes):  # missing keys: let pandas handle them
        return df.set_index(names)
    # pandas-stubs types levels/codes as nested sequences; Index objects and int arrays are what pandas takes
    index = pd.MultiIndex(levels=levels, codes=codes, names=names, verify_integrity=False)  # type: ignore[arg-type]
    return df.drop(columns=names).set_axis(index, axis=0)


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
    schema = _frame_schema(ep)
    decoded = [records_of(ep, params, body) for params, body in responses]
    extra: list[str] = []
    if ep.kind == "search":
        known = set(SCHEMAS[schema])
        extra = list(dict.fromkeys(k for recs, _ in decoded for r in recs for k in r if k not in known))
    columns = _columns_of(schema, extra)
    parts = [_part(recs, fill, columns) for recs, fill in decoded]
    params = responses[0][0] if responses else {}
    fast = _series_frame(ep, parts, columns, params)
    return fast if fast is not None else _finish(ep, _assemble(parts, columns), params)


def response_part(endpoint: str | Endpoint, params: Mapping[str, Any], body: Mapping[str, Any]) -> Part:
    """The typed columns of one response, as :func:`frame_from_parts` assembles them.

    A part can be cached with :func:`part_bytes`. Search endpoints, whose columns depend on the request, are not
    supported.

    Args:
        endpoint: endpoint name or object.
        params: the request parameters.
        body: the decoded response.

    Returns:
        ``(arrow table, rows, constants)``.
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    recs, fill = records_of(ep, params, body)
    return _part(recs, fill, _columns_of(_frame_schema(ep)))


def part_of_rows(endpoint: str | Endpoint, frame: pd.DataFrame, fill: Mapping[str, Any]) -> Part:
    """The part :func:`response_part` would make of these rows' JSON, built from their typed columns directly.

    The server's Arrow pages of flat records come from here: no JSON and no per-value work in between. The
    columns are the endpoint's frame columns (its row schema) not given as constants, with the same Arrow types
    the JSON path gives them.

    Args:
        endpoint: endpoint name or object (a flat record shape).
        frame: the rows, typed as the lake types them.
        fill: per-response constants (the request's ticker).

    Returns:
        ``(arrow table, rows, constants)``.

    Example:
        >>> rows = pd.DataFrame({"bank": ["FED"], "date": pd.to_datetime(["2024-09-19"]), "rate": [4.875]})
        >>> table, n, consts = part_of_rows("interest_rates", rows, {"bank": "FED"})
        >>> table.column_names, n, consts
        (['date', 'name', 'rate'], 1, {'bank': 'FED'})
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    columns = _columns_of(_frame_schema(ep))
    arrays: dict[str, pa.Array] = {}
    for f, logical in columns.items():
        if f in fill:  # a constant of the response (its ticker), as in the JSON path
            continue
        kind = _ARROW_TYPED.get(logical, pa.string())
        if f not in frame.columns:
            arrays[f] = pa.nulls(len(frame), type=kind)
            continue
        col = frame[f]
        if isinstance(col.dtype, pd.CategoricalDtype) and logical in ("category", "string"):
            arrays[f] = pa.array(col, from_pandas=True).cast(kind)  # a dictionary decoded in Arrow: no text per row
            continue
        if logical in ("category", "string"):
            col = col.astype("string")
        arrays[f] = pa.array(col, from_pandas=True).cast(kind)
    return pa.table(arrays), len(frame), {f: fill[f] for f in columns if f in fill}


_ARROW_TYPED = {**_ARROW, "date": pa.timestamp("ns"), "datetime": pa.timestamp("ns", tz="UTC")}


def part_of_table(endpoint: str | Endpoint, table: pa.Table, fill: Mapping[str, Any]) -> Part | None:
    """The part :func:`part_of_rows` makes of these rows' typed frame, made from the lake's Arrow table directly.

    Each column is cast to the type the frame's column would become (counts widened, text and dictionaries as
    text, missing columns as nulls; a float NaN is missing, as pandas makes it); no pandas in between. A column
    stored as a compressed part writes it narrower (float32, days, int32) is kept so, its field naming its own
    type (:func:`_widened` reads it back wide): not widened here to be narrowed again, value by value checked;
    labels of a few values stay the dictionary they are stored as. ``None`` where a column needs more than a
    cast (text dates, numbers stored as text: the typed frame's conversion decides those).

    Args:
        endpoint: endpoint name or object (a flat record shape).
        table: the rows as the lake's files hold them.
        fill: per-response constants (the request's ticker).

    Returns:
        ``(arrow table, rows, constants)``, or ``None``.

    Example:
        >>> day, rate = pa.array([19_985], pa.date32()), pa.array([4.875], pa.float32())
        >>> rows = pa.table({"bank": ["FED"], "date": day, "rate": rate})
        >>> table, n, consts = part_of_table("interest_rates", rows, {"bank": "FED"})
        >>> [str(t) for t in table.schema.types], n, consts
        (['date32[day]', 'string', 'float'], 1, {'bank': 'FED'})
        >>> [str(t) for t in _widened(table).schema.types]
        ['timestamp[ns]', 'string', 'double']
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    columns = _columns_of(_frame_schema(ep))
    arrays: dict[str, pa.ChunkedArray | pa.Array] = {}
    fields: dict[str, pa.Field] = {}
    n = table.num_rows
    for f, logical in columns.items():
        if f in fill:
            continue
        kind = _ARROW_TYPED.get(logical, pa.string())
        if f not in table.column_names:
            arrays[f] = pa.nulls(n, type=kind)
            continue
        column = table.column(f)
        have = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if not _plain_cast(have, logical):
            return None
        if pa.types.is_dictionary(column.type) and kind.equals(pa.string()) and _few_labels(column):
            arrays[f] = column  # labels as the lake keeps them: a bundle's table writes them so (not decoded here
            continue  # to be encoded again); a reader takes a dictionary's values as the text they are
        narrow = _NARROWER.get(kind)
        if narrow is not None and have.equals(narrow):  # stored as a compressed part writes it: kept so, named
            if logical == "float" and pc.any(pc.is_nan(column)).as_py():
                column = pc.if_else(pc.is_nan(column), pa.scalar(None, narrow), column)
            fields[f] = pa.field(f, narrow, metadata={_OWN_TYPE: str(kind).encode()})
            arrays[f] = column
            continue
        try:
            column = column if column.type.equals(kind) else column.cast(kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # out of range: the frame's conversion says so
            return None
        if logical == "float" and pa.types.is_floating(have) and pc.any(pc.is_nan(column)).as_py():
            column = pc.if_else(pc.is_nan(column), pa.scalar(None, kind), column)
        arrays[f] = column
    schema = pa.schema([fields.get(f) or pa.field(f, a.type) for f, a in arrays.items()])
    return pa.table(list(arrays.values()), schema=schema), n, {f: fill[f] for f in columns if f in fill}


def _few_labels(column: pa.ChunkedArray, most: int = 64) -> bool:
    """Whether a dictionary column's chunks each know at most ``most`` labels (a basis, a source: not names)."""
    return all(len(chunk.dictionary) <= most for chunk in column.chunks)


def _plain_cast(have: pa.DataType, logical: str) -> bool:
    """Whether an Arrow type holds a logical type's values so that a cast gives what the typed frame holds."""
    if logical in ("string", "category"):
        return pa.types.is_string(have) or pa.types.is_large_string(have)
    if logical == "float":
        return pa.types.is_floating(have) or pa.types.is_integer(have)
    if logical == "int":
        return pa.types.is_integer(have)
    if logical == "bool":
        return pa.types.is_boolean(have)
    if logical == "date":
        return pa.types.is_date(have) or (pa.types.is_timestamp(have) and have.tz is None)
    if logical == "datetime":
        return pa.types.is_timestamp(have) and have.tz is not None
    return False


def arrow_rows(endpoint: str | Endpoint) -> bool:
    """Whether an endpoint's Arrow pages count its records (a GET list of flat records).

    Its walk, ``limit`` and windows then work on rows. Nested records (segments, as-reported reports) explode
    into several rows each, so they travel as JSON.

    Example:
        >>> arrow_rows("prices"), arrow_rows("segmented_revenues")
        (True, False)
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    return ep.method == "GET" and ep.kind == "list" and type(SHAPES[ep.shape]) is Shape


class PageRows:
    """One Arrow page of a walk, sized by its rows (what :func:`fdkit.client.paging.collect` counts)."""

    def __init__(self, part: Part) -> None:
        self.part = part

    def __len__(self) -> int:
        return self.part[1]


def join_parts(parts: Sequence[Part], limit: int | None = None) -> Part:
    """The pages of one request as one part, cut to ``limit`` rows.

    Args:
        parts: the pages' parts, in order (one request: the same columns and constants).
        limit: the most rows kept (``None``: all).

    Returns:
        ``(arrow table, rows, constants)``.

    Example:
        >>> page = (pa.table({"x": [1.0, 2.0]}), 2, {"ticker": "X"})
        >>> table, n, consts = join_parts([page, page], limit=3)
        >>> table.column("x").to_pylist(), n, consts
        ([1.0, 2.0, 1.0], 3, {'ticker': 'X'})
    """
    if len(parts) == 1 and (limit is None or parts[0][1] <= limit):
        return parts[0]
    table = pa.concat_tables([p[0] for p in parts], promote_options="permissive")
    if limit is not None and table.num_rows > limit:
        table = table.slice(0, limit)
    return table, table.num_rows, parts[0][2] if parts else {}


def frame_from_parts(
    endpoint: str | Endpoint, parts: Sequence[Part | Runs], params: Mapping[str, Any], *, consume: bool = False
) -> pd.DataFrame:
    """Assemble parts of one endpoint into its typed, indexed frame (same result as :func:`to_frame`).

    Args:
        endpoint: endpoint name or object.
        parts: from :func:`response_part` (or :func:`part_from_bytes`); a :class:`~fdkit.frames.runs.Runs` stands
            for its runs' parts (:func:`fdkit.frames.runs.grouped`), its table read in a few stretches.
        params: one request's parameters (the interval decides tz-naive or UTC times).
        consume: ``parts`` is a list the caller no longer needs: each part is dropped from it (set to ``None``) as
            soon as its rows are in the frame's columns, so a large panel's parts and frame do not all exist at
            once (a part held nowhere else is freed there and then).

    Returns:
        The frame.

    Example:
        >>> body = {"ticker": "AAPL", "prices": [{"time": "2024-01-02T05:00:00Z", "close": 1.0},
        ...                                      {"time": "2024-01-03T05:00:00Z", "close": 2.0}]}
        >>> page = response_part("prices", {"ticker": "AAPL", "interval": "day"}, body)
        >>> frame_from_parts("prices", [page], {"interval": "day"})["close"].tolist()
        [1.0, 2.0]
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    columns = _columns_of(_frame_schema(ep))
    fast = _series_frame(ep, parts, columns, params, consume=consume and isinstance(parts, list))
    if fast is not None:
        return fast
    return _finish(ep, _assemble(_all_as_written(parts), columns), params)


def _series_frame(
    ep: Endpoint,
    parts: Sequence[Part | Runs],
    columns: Mapping[str, str],
    params: Mapping[str, Any],
    *,
    consume: bool = False,
) -> pd.DataFrame | None:
    """The frame of time-series parts written part by part into its preallocated columns, in its final dtypes.

    What :func:`_assemble` + :func:`_finish` give, without the concatenated table, the pandas conversion, the
    consolidation of same-typed columns, factorising labels, sorting and relabelling, for the common shape: an
    ``(<constant label>, <date>)`` index (a ticker per response), every part holding the schema's columns (absent
    ones are missing values) with their Arrow types, its dates present and strictly increasing, closed vocabularies
    holding only their values. Anything else returns ``None`` before anything is written (the general path).

    Each value is copied once, from its part into the frame's column (past :data:`_CONSOLIDATED` bytes the float
    columns go straight into the one block pandas keeps them in; below it pandas' constructor, faster for a page,
    copies them once more); with ``consume`` each part is dropped from ``parts`` once copied, so the transient
    memory of a panel is about its frame plus the parts not yet copied, not parts + table + pandas copies.
    """
    plan = _series_plan(ep, columns)
    if plan is None:
        return None
    key, when, own, types, kinds, vocabularies = plan
    parts = _rising(parts, key, when, consume=consume)  # newest-first answers (statements, filings) turned round
    checked = _checked_units(parts, key, when, own, types, kinds, vocabularies)  # everything, before writing
    if checked is None:
        return None
    units, codes_of = checked
    if not units or len({u[0] for u in units}) != len(units):
        return None
    units.sort(key=itemgetter(0))  # labels sorted, then time
    rows = [u[1] for u in units]
    target = _SeriesColumns(sum(rows), when, kinds, types, vocabularies)
    segments = _segments(units)
    left = {i: 0 for _, i, _ in segments}  # each piece's segments not yet copied
    for _, i, _ in segments:
        left[i] += 1
    for at, i, n in segments:
        piece = parts[i]
        shared = isinstance(piece, Runs) and piece.table.nbytes >= _RELEASE_AFTER  # (a statement table's 3 MB: no)
        if isinstance(piece, Runs):
            target.copy(piece.table.slice(at, n), {f: codes_of[i, f].slice(at, n) for f in vocabularies})
        else:
            target.copy(piece[0], {f: codes_of[i, f] for f in vocabularies})
        del piece
        left[i] -= 1
        if not left[i]:
            for f in vocabularies:
                del codes_of[i, f]
            if consume:
                parts[i] = None  # type: ignore[index]  # the caller's list: this piece's rows are in the columns now
                if shared:  # a request's table of many tickers: its memory back to the system at once
                    release_unused()
    if consume:
        for i in range(len(parts)):  # the empty ones too
            parts[i] = None  # type: ignore[index]
    utc = columns[when] == "datetime" and not (when == ep.time_index and params.get("interval") != "minute")
    position, level = _time_level(target.pop_times(), utc)
    names = pd.Index(sorted(u[0] for u in units), dtype=STRING_DTYPE)
    keys: Any = np.repeat(np.arange(len(names), dtype=np.int32 if len(names) > 32_000 else np.int16), rows)
    # pandas-stubs types levels/codes as nested sequences; Index objects and int arrays are what pandas takes
    levels: Any = [names, level]
    index = pd.MultiIndex(levels=levels, codes=[keys, position], names=[key, when], verify_integrity=False)
    df = target.frame(index, columns)
    if ep.split_adjusted:
        df.attrs["split_basis"] = "adjusted"
    return df


#: what :func:`_series_frame` writes: ``(label key, time key, the other columns, their Arrow types, their kinds, the
#: closed vocabularies)``
SeriesPlan = tuple[str, str, list[str], dict[str, Any], dict[str, str], dict[str, pa.Array]]


def _series_plan(ep: Endpoint, columns: Mapping[str, str]) -> SeriesPlan | None:
    """How :func:`_series_frame` writes the endpoint's frame; ``None``: not a ``(<label>, <date>)`` series it writes."""
    if len(ep.index) != 2:
        return None
    key, when = ep.index
    if columns.get(key) != "category" or closed_vocabulary(key) is not None:
        return None
    if columns.get(when) not in ("date", "datetime"):
        return None
    own = [f for f in columns if f != key]
    types = {f: _ARROW_TYPED.get(columns[f]) for f in own}
    kinds = {f: _series_kind(columns[f], f) for f in own if f != when}
    if any(t is None for t in types.values()) or any(k is None for k in kinds.values()):
        return None
    vocabularies = {f: pa.array(closed_vocabulary(f), pa.string()) for f, k in kinds.items() if k == "category"}
    return key, when, own, types, {f: str(k) for f, k in kinds.items()}, vocabularies


class _SeriesColumns:
    """A series frame's columns, preallocated and written stretch by stretch in their final types.

    Floats go into one ``(columns, rows)`` block (past :data:`_CONSOLIDATED` bytes the frame's own), ints into
    values and masks, closed vocabularies into codes, other dates into nanoseconds, text and booleans stay Arrow
    chunks (pandas' Arrow-backed arrays take them as they are).
    """

    def __init__(
        self, total: int, when: str, kinds: dict[str, str], types: dict[str, Any], vocabularies: dict[str, pa.Array]
    ) -> None:
        self.when, self.kinds, self.types, self.vocabularies = when, kinds, types, vocabularies
        self.floats = [f for f, k in kinds.items() if k == "float"]
        self.block = np.empty((len(self.floats), total), dtype=np.float64)
        self.ints: dict[str, Any] = {f: np.empty(total, np.int64) for f, k in kinds.items() if k == "int"}
        self.masks = {f: np.empty(total, np.bool_) for f in self.ints}
        self.codes: dict[str, Any] = {
            f: np.empty(total, np.int8 if len(v) < 127 else np.int32) for f, v in vocabularies.items()
        }
        self.arrow: dict[str, list[pa.Array]] = {f: [] for f, k in kinds.items() if k in ("bool", "string")}
        self.stamps: dict[str, Any] = {f: np.empty(total, np.int64) for f, k in kinds.items() if k == "time"}
        self.times: np.ndarray | None = np.empty(total, np.int64)
        self.lo = 0

    def copy(self, table: pa.Table, codes: dict[str, Any]) -> None:
        """Write the next stretch of rows: ``table``'s columns and the vocabularies' ``codes`` of its rows."""
        lo, hi = self.lo, self.lo + table.num_rows
        assert self.times is not None
        self.times[lo:hi] = _int64s(table.column(self.when))
        for j, f in enumerate(self.floats):
            _fill(self.block[j, lo:hi], table.column(f))
        for f, ints in self.ints.items():
            column = table.column(f)
            _fill(ints[lo:hi], pc.fill_null(column, 0) if column.null_count else column)
            self.masks[f][lo:hi] = column.is_null().to_numpy(zero_copy_only=False) if column.null_count else False
        for f, target in self.codes.items():
            _fill(target[lo:hi], pc.fill_null(codes[f], -1))
        for f, target in self.stamps.items():  # other dates: nanoseconds, missing ones NaT's
            column = table.column(f)
            ns = column.cast(pa.timestamp("ns")) if pa.types.is_date32(column.type) else column
            _fill(target[lo:hi], pc.fill_null(ns.cast(pa.int64()), _NAT))
        for f, chunks in self.arrow.items():
            column = table.column(f)
            chunks.extend((column.cast(self.types[f]) if pa.types.is_dictionary(column.type) else column).chunks)
        self.lo = hi

    def pop_times(self) -> np.ndarray:
        """The index's times as int64 nanoseconds (handed over: the columns no longer hold them)."""
        times, self.times = self.times, None
        assert times is not None
        return times

    def frame(self, index: pd.MultiIndex, columns: Mapping[str, str]) -> pd.DataFrame:
        """The frame of the columns written, on ``index`` (the columns are handed over to it)."""
        built: dict[str, Any] = {}
        for f, kind in self.kinds.items():
            if kind == "int":
                built[f] = pd.arrays.IntegerArray(self.ints.pop(f), self.masks.pop(f))
            elif kind == "time":
                stamps = self.stamps.pop(f).view("M8[ns]")
                date = columns[f] == "date"
                built[f] = pd.array(stamps) if date else pd.DatetimeIndex(stamps).tz_localize("UTC").array
            elif kind == "category":
                dtype: Any = pd.CategoricalDtype(pd.Index(self.vocabularies[f].to_pylist(), dtype=STRING_DTYPE))
                built[f] = pd.Categorical.from_codes(self.codes.pop(f), dtype=dtype)
            elif kind != "float":
                chunked = pa.chunked_array(self.arrow.pop(f), type=self.types[f])
                mapped = pd.BooleanDtype() if kind == "bool" else pd.StringDtype()
                built[f] = mapped.__from_arrow__(chunked)  # type: ignore[union-attr]
        block, floats, self.block = self.block, self.floats, np.empty((0, 0))
        if block.nbytes < _CONSOLIDATED:  # small: pandas' constructor (it copies the floats into one block: cheap)
            data = {f: (block[floats.index(f)] if k == "float" else built.pop(f)) for f, k in self.kinds.items()}
            return pd.DataFrame(data, index=index, copy=False)
        df = pd.DataFrame(block.T, index=index, columns=floats, copy=False)  # a panel: the block is the frame's
        del block
        for f in [f for f in self.kinds if f in built]:  # the other columns inserted around it (no copy)
            df.insert(list(self.kinds).index(f), f, built.pop(f))
        return df


def _time_level(times: np.ndarray, utc: bool) -> tuple[Any, pd.Index]:
    """The time level of a series index and each row's position in it (rising times: themselves, in order)."""
    total = len(times)
    stamp = times.view("M8[ns]")
    level: pd.Index = pd.DatetimeIndex(stamp, tz="UTC") if utc else pd.DatetimeIndex(stamp)
    position: Any = np.arange(total, dtype=np.int32 if total < 2**31 else np.int64)
    if total > 1 and not bool((times[1:] > times[:-1]).all()):
        days = _day_codes(times)
        if days is None:
            position, level = pd.factorize(level, sort=True)
        else:
            position, first, present = days
            level = pd.DatetimeIndex((first + present * _DAY).view("M8[ns]"), tz="UTC" if utc else None)
    return position, level


#: a day in nanoseconds
_DAY = 86_400 * 10**9


def _day_codes(times: np.ndarray, step: int = 2**20) -> tuple[np.ndarray, int, np.ndarray] | None:
    """Midnights as positions among their distinct days: ``(codes, first day's ns, the days present - first)``.

    What :func:`pandas.factorize` (sorted) gives for dates, without its hash table (110 MB for a twenty-year
    panel's 3.5 million bars): the days counted by their offset from the first, in steps of ``step`` values.
    ``None`` for times of day, or days spread over more than a million (then factorise).

    Example:
        >>> d = np.array([3, 1, 3, 2], dtype=np.int64) * _DAY
        >>> codes, first, present = _day_codes(d)
        >>> codes.tolist(), first // _DAY, present.tolist()
        ([2, 0, 2, 1], 1, [0, 1, 2])
    """
    first, last = int(times.min()), int(times.max())
    if first % _DAY or (last - first) // _DAY > 1_000_000:
        return None
    counts = np.zeros((last - first) // _DAY + 1, np.int64)
    for at in range(0, len(times), step):
        chunk = times[at : at + step] - first
        if bool((chunk % _DAY).any()):
            return None
        counts += np.bincount(chunk // _DAY, minlength=len(counts))
    seen = counts > 0
    rank = (np.cumsum(seen) - 1).astype(np.int32)
    codes = np.empty(len(times), np.int32)
    for at in range(0, len(times), step):
        codes[at : at + step] = rank[(times[at : at + step] - first) // _DAY]
    return codes, first, np.flatnonzero(seen).astype(np.int64)


def _checked_units(
    parts: Sequence[Part | Runs],
    key: str,
    when: str,
    own: list[str],
    types: Mapping[str, pa.DataType | None],
    kinds: Mapping[str, str | None],
    vocabularies: Mapping[str, pa.Array],
) -> Units | None:
    """Each response with rows as ``(label, rows, piece, first row)``, and the pieces' vocabulary codes.

    ``None`` when a piece is not what :func:`_series_frame` writes: a constant besides ``key``, other columns or
    types, missing or unordered times, a value outside a closed vocabulary.
    """
    units: list[tuple[str, int, int, int]] = []
    codes_of: dict[tuple[int, str], pa.ChunkedArray] = {}
    coded = vocabularies.keys() | {f for f, k in kinds.items() if k == "string"}  # (dictionaries taken)
    for i, piece in enumerate(parts):
        spans = _labelled_spans(piece, key)
        if spans is None:
            return None
        if not spans:
            continue
        table = piece.table if isinstance(piece, Runs) else piece[0]
        if table.column_names != own:
            return None
        if any(not _typed_as(table.schema.field(f).type, types[f], f in coded) for f in own):
            return None
        stamps = table.column(when)
        if stamps.null_count or not _increasing(_int64s(stamps), spans):
            return None
        for f, vocabulary in vocabularies.items():
            column = table.column(f)
            found = _vocabulary_codes(column, vocabulary)
            if found.null_count != column.null_count:  # a value outside the vocabulary: the general path warns
                return None
            codes_of[i, f] = found
        units.extend((label, n, i, at) for label, at, n in spans)
    return units, codes_of


#: :func:`_checked_units`' answer
Units = tuple[list[tuple[str, int, int, int]], dict[tuple[int, str], pa.ChunkedArray]]


def _labelled_spans(piece: Part | Runs, key: str) -> list[tuple[str, int, int]] | None:
    """A piece's responses with rows as ``(label, first row, rows)``; ``None``: not one ``key`` constant each."""
    runs: Iterable[tuple[dict[str, Any], int, int]]
    if isinstance(piece, Runs):
        runs = zip(piece.constants, piece.offsets.tolist(), piece.rows.tolist(), strict=True)
        height = piece.table.num_rows
    else:
        runs, height = [(piece[2], 0, piece[1])], piece[1]
        if piece[0].num_rows != piece[1]:
            return None
    spans = []
    for consts, at, n in runs:
        if not n:
            continue
        label = consts.get(key)
        if len(consts) != 1 or not isinstance(label, str) or at < 0 or at + n > height:
            return None
        spans.append((label, at, n))
    return spans


def _rising(parts: Sequence[Part | Runs], key: str, when: str, *, consume: bool) -> Sequence[Part | Runs]:
    """The pieces, each whose responses' times all strictly fall (newest first) with each response's rows reversed.

    Statements and filings are answered newest first; their frame is sorted by time. A piece whose every response
    falls is taken once in rising order (each response's rows stay where they were, reversed), so the series path
    writes it as it writes bars, instead of the general path's conversion and sort. Other pieces are left as they
    are (one whose times are neither is refused by :func:`_checked_units`). With ``consume`` the caller's list is
    changed in place (the turned piece replaces the original, which is freed); else a new list is returned.

    Example:
        >>> t = pa.table({"report_period": pa.array([3, 2, 1], pa.date32()), "revenue": [3.0, 2.0, 1.0]})
        >>> [turned] = _rising([(t, 3, {"ticker": "A"})], "ticker", "report_period", consume=False)
        >>> turned[0]["revenue"].to_pylist()
        [1.0, 2.0, 3.0]
    """
    turned: dict[int, Part | Runs] = {}
    for i, piece in enumerate(parts):
        spans = _labelled_spans(piece, key)
        table = piece.table if isinstance(piece, Runs) else piece[0]
        if not spans or when not in table.column_names or table.column(when).null_count:
            continue
        ns = _int64s(table.column(when))
        if _increasing(ns, spans) or not _increasing(ns, spans, falling=True):
            continue
        at, n = _bounds(spans)
        rows = np.repeat(at, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
        order = np.arange(table.num_rows)
        order[rows] = np.repeat(2 * at + n - 1, n) - rows  # each span's rows, last first
        rising = table.take(order)
        turned[i] = (
            Runs(rising, piece.offsets, piece.rows, piece.constants)
            if isinstance(piece, Runs)
            else (rising, piece[1], piece[2])
        )
    if not turned:
        return parts
    out = parts if consume and isinstance(parts, list) else list(parts)
    for i, piece in turned.items():
        out[i] = piece
    return out


def _bounds(spans: list[tuple[str, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The spans' first rows and row counts, as int64 arrays."""
    return (
        np.fromiter((at for _, at, _ in spans), np.int64, len(spans)),
        np.fromiter((n for _, _, n in spans), np.int64, len(spans)),
    )


def _increasing(ns: np.ndarray, spans: list[tuple[str, int, int]], *, falling: bool = False) -> bool:
    """Whether the times of each span's rows strictly increase (with ``falling``: strictly decrease).

    One comparison of neighbours over the whole column, kept where both rows are of one span (a thousand tickers'
    runs: no test per run).

    Example:
        >>> ns = np.array([1, 2, 3, 9, 8])
        >>> _increasing(ns, [("A", 0, 3), ("B", 3, 2)]), _increasing(ns, [("B", 3, 2)], falling=True)
        (False, True)
    """
    if len(ns) < 2:
        return True
    step = ns[1:] < ns[:-1] if falling else ns[1:] > ns[:-1]
    at, n = _bounds(spans)
    long = n > 1
    marks = np.zeros(len(ns), np.int64)  # +1 where a span's neighbours begin, -1 past them
    np.add.at(marks, at[long], 1)
    np.add.at(marks, (at + n - 1)[long], -1)
    return bool(step[np.cumsum(marks)[:-1] > 0].all())


def _segments(units: list[tuple[str, int, int, int]]) -> list[tuple[int, int, int]]:
    """Sorted responses as stretches ``(first row, piece, rows)`` of their pieces: neighbours in a table are one."""
    out: list[list[int]] = []
    for _, n, i, at in units:
        if out and out[-1][1] == i and out[-1][0] + out[-1][2] == at:
            out[-1][2] += n
        else:
            out.append([at, i, n])
    return [(at, i, n) for at, i, n in out]


#: float columns of at least this many bytes in all are written into the frame's own block: the constructor's
#: consolidation would copy them once more (a 1,000-ticker panel: +100 MB at the peak); below it, the constructor
#: is faster than inserting columns one by one (0.1 against 0.7 ms for a 5,000-bar page)
_CONSOLIDATED = 16 * 2**20
#: a shared table of this many bytes or more has its memory handed back to the system once its rows are in the
#: frame (a price history request's 10-12 MB); a smaller one's few MB are not worth the 3 ms a release takes
_RELEASE_AFTER = 8 * 2**20
#: pandas' missing time as int64 nanoseconds
_NAT = np.iinfo(np.int64).min


#: the narrower types a compressed part may hold a column in (:func:`_narrowed`), which the frame is made from as
#: they are (a float32 copied into the float64 column, days into nanoseconds): no widened copy of the part first
_NARROWER = {pa.float64(): pa.float32(), pa.int64(): pa.int32(), pa.timestamp("ns"): pa.date32()}


def _typed_as(kind: pa.DataType, wanted: pa.DataType | None, vocabulary: bool) -> bool:
    """Whether a part's column has the type the frame's column is made from (or its codes, or its narrower type)."""
    if wanted is None:
        return False
    if vocabulary and pa.types.is_dictionary(kind):
        return bool(kind.value_type.equals(wanted))
    return bool(kind.equals(wanted) or kind.equals(_NARROWER.get(wanted, wanted)))


def _vocabulary_codes(column: pa.ChunkedArray, vocabulary: pa.Array) -> pa.Array | pa.ChunkedArray:
    """Each value's position in a closed vocabulary (null outside it); of a dictionary column, its few values'."""
    if not pa.types.is_dictionary(column.type):
        return pc.index_in(column, value_set=vocabulary)
    chunks = []
    for chunk in column.chunks:
        known = pc.index_in(chunk.dictionary, value_set=vocabulary)
        chunks.append(pc.take(known, chunk.indices))
    return pa.chunked_array(chunks, type=pa.int32())


def plain_text(part: Part) -> Part:
    """A part whose dictionary columns (as :func:`part_from_bytes` may leave them) are text again.

    Example:
        >>> table = pa.table({"basis": pa.array(["as_traded"] * 2).dictionary_encode()})
        >>> plain_text((table, 2, {}))[0].schema.field("basis").type
        DataType(string)
    """
    table, n, consts = part
    if not any(pa.types.is_dictionary(kind) for kind in table.schema.types):
        return part
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table, n, consts


def _series_kind(logical: str, field: str) -> str | None:
    """How :func:`_series_frame` writes a column of this logical type (``None``: it does not)."""
    if logical in ("float", "int", "bool", "string"):
        return logical
    if logical in ("date", "datetime"):
        return "time"
    if logical == "category":
        return "string" if closed_vocabulary(field) is None else "category"
    return None


def _int64s(column: pa.ChunkedArray) -> np.ndarray:
    """A timestamp column's nanoseconds (no nulls), without a copy when it is one chunk; of days, their midnights."""
    if pa.types.is_date32(column.type):
        return column.cast(pa.int32()).to_numpy().astype(np.int64) * 86_400_000_000_000
    if column.num_chunks == 1:
        return column.chunk(0).view(pa.int64()).to_numpy()
    return column.cast(pa.int64()).to_numpy()


def _fill(target: np.ndarray, column: pa.ChunkedArray | pa.Array) -> None:
    """Copy an Arrow column's values into ``target`` chunk by chunk (nulls of floats as NaN)."""
    lo = 0
    for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        hi = lo + len(chunk)
        target[lo:hi] = chunk.to_numpy(zero_copy_only=False)
        lo = hi


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
                rows.append(
                    {
                        "ticker": body.get("ticker") or params.get("ticker"),
                        "filing_date": body.get("filing_date"),
                        "accession_number": body.get("accession_number"),
                        "item": item.get("number"),
                        **{k: ex.get(k) for k in ("number", "description", "url", "text")},
                    }
                )
    text = ("accession_number", "item", "number", "description", "url", "text")
    columns = {"ticker": "category", "filing_date": "date", **{k: "string" for k in text}}
    return _labelled(_to_pandas(_arrow_table(rows, columns), columns).set_index(["ticker", "filing_date"]))


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


# ---------------------------------------------------------------------------------------------------------
# frame -> JSON records (the service's answers, webhook payloads)
# ---------------------------------------------------------------------------------------------------------
def _column_values(s: pd.Series) -> list[Any]:
    dtype = s.dtype
    if isinstance(dtype, pd.DatetimeTZDtype) or dtype.kind == "M":
        utc = isinstance(dtype, pd.DatetimeTZDtype)
        fast = _iso_times(s, utc)
        if fast is not None:
            return fast
        out = s.dt.strftime("%Y-%m-%dT%H:%M:%SZ" if utc else "%Y-%m-%d")
        return out.astype(object).where(s.notna(), None).tolist()
    if dtype.kind == "f":
        arr = s.to_numpy()
        return [None if v != v else v for v in arr.tolist()]
    if isinstance(dtype, pd.CategoricalDtype | pd.StringDtype | pd.api.extensions.ExtensionDtype):
        # labels, text, Int64, boolean: Python values, None where missing (one conversion, no per-column mask)
        return s.to_numpy(dtype=object, na_value=_NONE).tolist()
    if dtype is np.dtype(object):
        return [None if (v is None or (isinstance(v, float) and v != v)) else _plain(v) for v in s.tolist()]
    return s.tolist()


#: missing values as JSON's null (pandas-stubs type ``na_value`` without ``None``, which pandas takes)
_NONE: Any = None


def _iso_times(s: pd.Series, utc: bool) -> list[Any] | None:
    """Times as ISO text by numpy (``YYYY-MM-DD``, or ``YYYY-MM-DDTHH:MM:SSZ`` in UTC), ``None`` where missing.

    What ``strftime`` gives (nanosecond times are of the years 1678-2262: four digits, which both spell alike),
    20 times faster for a page; ``None`` (use ``strftime``) for times nanoseconds cannot hold.

    Example:
        >>> _iso_times(pd.Series(pd.to_datetime(["2024-01-02 05:00", None], utc=True)), utc=True)
        ['2024-01-02T05:00:00Z', None]
    """
    try:
        if getattr(s.dtype, "unit", "ns") != "ns":  # (a cast of other units wraps around silently: checked here)
            s = s.dt.as_unit("ns")
        stamps = s.to_numpy(dtype="datetime64[ns]")  # (aware times: their UTC instants)
    except (OverflowError, ValueError):  # (pandas' OutOfBoundsDatetime is a ValueError)
        return None
    missing = np.isnat(stamps)
    if utc:
        text = np.char.add(np.datetime_as_string(stamps.astype("datetime64[s]"), unit="s"), "Z")
    else:
        text = np.datetime_as_string(stamps.astype("datetime64[D]"), unit="D")
    out = text.astype(object)
    out[missing] = None
    return out.tolist()


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def to_records(df: pd.DataFrame, fields: list[str] | None = None) -> list[dict[str, Any]]:
    """Turn typed rows into JSON-ready dicts (dates ISO, missing values ``None``).

    Args:
        df: typed frame.
        fields: columns to emit, in order (default: all).

    Returns:
        One dict per row.

    Example:
        >>> to_records(pd.DataFrame({"a": [1.5, np.nan]}))
        [{'a': 1.5}, {'a': None}]
    """
    fields = [f for f in (fields or list(df.columns)) if f in df.columns]
    columns = json_columns(df, fields)
    return [dict(zip(fields, row, strict=True)) for row in zip(*columns.values(), strict=True)] if fields else []


def json_columns(df: pd.DataFrame, fields: list[str]) -> dict[str, list[Any]]:
    """Each field's JSON-ready values (what :func:`to_records` puts in the records), column by column.

    Args:
        df: typed frame.
        fields: columns present in ``df``.

    Returns:
        ``{field: [value per row]}``.

    Example:
        >>> json_columns(pd.DataFrame({"d": pd.to_datetime(["2024-01-02"])}), ["d"])
        {'d': ['2024-01-02']}
    """
    return {f: _column_values(df[f]) for f in fields}
