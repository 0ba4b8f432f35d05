"""Delta Lake tables (through ``deltalake``, delta-rs): how fdkit writes a dataset and finds the files of one.

A dataset folder holding ``_delta_log/`` is a Delta table: its transaction log says which Parquet files are live
(with their partition values and per-file statistics), so a write is one atomic commit, a reader never sees a
half-landed event, and older versions stay readable (time travel) until ``fdkit lake vacuum``. fdkit writes its
tables unpartitioned, rows in the order they are given (``fdkit lake optimize`` sorts them by ticker), Arrow
types the protocol knows (timestamps in microseconds, text as plain strings) and row groups of
:data:`ROW_GROUP_ROWS` rows, so that a reader of one ticker skips files by the log's min/max statistics and row
groups by the footers'. Any Delta reader (pandas through ``deltalake``, pyarrow, DuckDB, Polars, Dask, Spark)
reads the same tables without fdkit.

Example:
    >>> import tempfile, pyarrow as pa
    >>> folder = tempfile.mkdtemp()
    >>> write(folder, pa.table({"ticker": ["A", "B"], "close": [1.0, 2.0]}))
    >>> is_table(folder), [f.stats["ticker"] for f in live_files(folder)]
    (True, [('A', 'B')])
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from fdkit.errors import LakeError, without_backtrace
from fdkit.lake.location import is_url, lake_root, locate, store_timeouts, unreachable

__all__ = [
    "LOG_DIR",
    "ROW_GROUP_ROWS",
    "LiveFile",
    "is_table",
    "live_files",
    "snapshot",
    "delta_types",
    "write",
    "commit_files",
    "file_stats",
    "open_table",
    "storage_options",
]

#: the folder of a Delta table's transaction log
LOG_DIR = "_delta_log"
#: table features whose files do not hold the table's rows as they are (rows deleted beside a file, columns renamed):
#: fdkit refuses a table that enables them rather than serve wrong rows
UNREAD_FEATURES = frozenset({"deletionVectors", "columnMapping"})
#: rows per row group of the files fdkit writes (small groups: one ticker's range reads little beyond it)
ROW_GROUP_ROWS = 8192


def storage_options(root: str | os.PathLike[str], *, writing: bool = False) -> dict[str, str] | None:
    """What delta-rs needs to reach an object store, from the standard AWS environment (``None`` for a folder).

    delta-rs reads ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION`` and ``AWS_ENDPOINT_URL`` from
    the environment itself; only a plain ``http://`` endpoint (a local S3 server) must be allowed explicitly. Its
    reads get fdkit's bounds (:func:`fdkit.lake.location.store_timeouts`: a stalled store is an error within
    seconds) instead of object_store's 30 s and 10 retries; a write (``writing``) has 120 s a request, its files
    may be large.

    Example:
        >>> storage_options("/tmp/lake") is None
        True
    """
    if not is_url(root):
        return None
    options = {"AWS_REGION": os.environ.get("AWS_DEFAULT_REGION", os.environ.get("AWS_REGION", "us-east-1"))}
    connect, request, attempts = store_timeouts()
    whole = 120.0 if writing else request * 2  # object_store bounds a whole request, not a silence
    options.update(
        connect_timeout=f"{connect:g}s",
        timeout=f"{whole:g}s",
        max_retries=str(attempts - 1),
        retry_timeout=f"{whole:g}s",
    )
    endpoint = os.environ.get("AWS_ENDPOINT_URL", "")
    if endpoint.startswith("http://"):
        options["AWS_ALLOW_HTTP"] = "true"
    return options


#: what a Delta operation without the deltalake package says (it is the ``delta`` extra: the embedded default and a
#: client of a remote service read plain Parquet and never need it)
NEEDS_DELTALAKE = (
    "Delta Lake tables (fdkit mirror, the webhook receiver, fdkit lake convert/optimize/vacuum, a mirrored lake) need "
    "the deltalake package, which fdkit installs with its delta extra: pip install 'fdkit[delta]' "
    "(from a checkout: pip install -e '.[delta]')"
)


def require_deltalake() -> None:
    """Check that the deltalake package is installed, before a Delta operation imports it.

    Raises:
        LakeError: naming the extra that installs it (``pip install 'fdkit[delta]'``).

    Example:
        >>> require_deltalake()  # (installed here: the dev extras include it)
    """
    try:
        import deltalake  # noqa: F401
    except ImportError:
        raise LakeError(NEEDS_DELTALAKE) from None


def _uri(folder: str | os.PathLike[str]) -> str:
    kept = lake_root(folder)
    return str(kept) if is_url(kept) else str(Path(kept).resolve())


def is_table(folder: str | os.PathLike[str]) -> bool:
    """Whether a dataset folder (or ``s3://`` prefix) is a Delta table (it holds ``_delta_log/``).

    Example:
        >>> import tempfile
        >>> is_table(tempfile.mkdtemp())
        False
    """
    if is_url(folder):
        loc = locate(folder)
        import pyarrow.fs as pafs

        return bool(loc.info(LOG_DIR).type == pafs.FileType.Directory)
    return (Path(folder) / LOG_DIR).is_dir()


def open_table(folder: str | os.PathLike[str], version: int | None = None) -> Any:
    """The :class:`deltalake.DeltaTable` of a dataset folder (at ``version``: time travel).

    Raises:
        LakeError: the folder is not a Delta table, or the log cannot be read (naming the folder).

    Example:
        >>> import tempfile, pyarrow as pa
        >>> d = tempfile.mkdtemp(); write(d, pa.table({"x": [1]})); write(d, pa.table({"x": [2]}), mode="append")
        >>> open_table(d).version(), open_table(d, version=0).to_pyarrow_table()["x"].to_pylist()
        (1, [1])
    """
    require_deltalake()
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError, TableNotFoundError

    try:
        return DeltaTable(_uri(folder), version=version, storage_options=storage_options(folder))
    except TableNotFoundError:
        raise LakeError(f"{folder} is not a Delta table (no {LOG_DIR}/)") from None
    except (DeltaError, OSError) as exc:
        stalled = unreachable(exc, str(folder)) if is_url(folder) else None
        raise stalled or LakeError(f"cannot read the Delta table at {folder}: {without_backtrace(str(exc))}") from None


@dataclass(frozen=True)
class LiveFile:
    """One live data file of a Delta table, as its log describes it.

    Attributes:
        path: the file's path relative to the table folder (``/``-separated).
        size: bytes.
        mtime_ms: when it was added (milliseconds since the epoch).
        partition: partition column -> value (empty for fdkit's own unpartitioned tables).
        stats: column -> ``(min, max)`` of the text columns the log has statistics for.
    """

    path: str
    size: int
    mtime_ms: int
    partition: Mapping[str, str | None] = field(default_factory=dict)
    stats: Mapping[str, tuple[object, object]] = field(default_factory=dict)


def live_files(folder: str | os.PathLike[str]) -> list[LiveFile]:
    """The files a Delta table's current version is made of (from its log; no data file is opened).

    Example:
        >>> import tempfile, pyarrow as pa
        >>> d = tempfile.mkdtemp(); write(d, pa.table({"ticker": ["A"]}))
        >>> [f.partition for f in live_files(d)]
        [{}]
    """
    return snapshot(folder)[0]


def snapshot(folder: str | os.PathLike[str]) -> tuple[list[LiveFile], pa.Schema]:
    """A Delta table's live files (:func:`live_files`) and its schema as Arrow, from one read of its log.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp(); write(d, pa.table({"ticker": ["A"]}))
        >>> snapshot(d)[1].names
        ['ticker']
    """
    dt = open_table(folder)
    unread = sorted(set(dt.protocol().reader_features or ()) & UNREAD_FEATURES)
    if unread:
        what = ", ".join(unread)
        raise LakeError(
            f"the Delta table at {folder} uses {what}, which fdkit does not read (it reads a table's "
            "files as they are): rewrite it without them, or read it with Spark"
        )
    schema = pa.schema(dt.schema().to_arrow())
    parts = list(dt.metadata().partition_columns)
    actions = pa.table(dt.get_add_actions(flatten=True))
    names = actions.column_names
    text = [c[4:] for c in names if c.startswith("min.") and f"max.{c[4:]}" in names]
    kept = ["path", "size_bytes", "modification_time", *(c for c in names if c.startswith("partition."))]
    rows = actions.select([*kept, *(f"{m}.{c}" for c in text for m in ("min", "max"))]).to_pylist()
    out = []
    for r in rows:
        when = r["modification_time"]
        mtime = int(when.timestamp() * 1000) if hasattr(when, "timestamp") else int(when or 0)
        stats = {c: (r[f"min.{c}"], r[f"max.{c}"]) for c in text if isinstance(r[f"min.{c}"], str)}
        partition = {p: r.get(f"partition.{p}") for p in parts}
        out.append(
            LiveFile(
                r["path"],
                int(r["size_bytes"]),
                mtime,
                {k: None if v is None else str(v) for k, v in partition.items()},
                stats,
            )
        )
    return sorted(out, key=lambda f: f.path), schema


def delta_types(table: pa.Table) -> pa.Table:
    """``table`` with the Arrow types the Delta protocol stores: dictionaries decoded, timestamps in microseconds.

    Example:
        >>> t = pa.table({"t": pa.array([0], pa.timestamp("ns")), "s": pa.array(["a"]).dictionary_encode()})
        >>> delta_types(t).schema.types
        [TimestampType(timestamp[us]), DataType(string)]
    """

    def fix(kind: pa.DataType) -> pa.DataType:
        if pa.types.is_dictionary(kind):
            return fix(kind.value_type)
        if pa.types.is_timestamp(kind) and kind.unit == "ns":
            return pa.timestamp("us", tz=kind.tz)
        if pa.types.is_large_string(kind):
            return pa.string()
        return kind

    fields = [pa.field(f.name, fix(f.type), f.nullable) for f in table.schema]
    return table.cast(pa.schema(fields))


def _writer_properties() -> Any:
    require_deltalake()
    from deltalake import WriterProperties

    return WriterProperties(max_row_group_size=ROW_GROUP_ROWS, compression="ZSTD")


def write(
    folder: str | os.PathLike[str],
    table: pa.Table,
    *,
    mode: Literal["overwrite", "append"] = "overwrite",
    predicate: str | None = None,
) -> None:
    """Write ``table`` into the Delta table at ``folder`` as one commit (created on first write).

    Args:
        folder: the dataset folder.
        table: the rows (cast with :func:`delta_types`).
        mode: ``overwrite`` replaces the table (or, with ``predicate``, the rows it matches); ``append`` adds.
        predicate: a SQL condition (``ticker = 'AAPL'``): an overwrite replaces only the rows it matches.

    A column the table does not have yet is added to its schema (schema evolution); a column of another type
    than the table's is refused by delta-rs.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> write(d, pa.table({"ticker": ["A", "B"], "x": [1, 2]}))
        >>> write(d, pa.table({"ticker": ["A"], "x": [3]}), predicate="ticker = 'A'")
        >>> sorted(open_table(d).to_pyarrow_table()["x"].to_pylist())
        [2, 3]
    """
    require_deltalake()
    from deltalake import write_deltalake
    from deltalake.exceptions import DeltaError, SchemaMismatchError

    uri = _uri(folder)
    if not is_url(folder):
        Path(uri).mkdir(parents=True, exist_ok=True)
    exists = is_table(folder)
    rows = delta_types(table)
    common: dict[str, Any] = {
        "writer_properties": _writer_properties(),
        "storage_options": storage_options(folder, writing=True),
    }
    try:
        if not exists:
            write_deltalake(uri, rows, mode="append", **common)
        elif predicate is not None:  # the rows it matches are replaced; a new column joins the schema
            write_deltalake(uri, rows, mode="overwrite", predicate=predicate, schema_mode="merge", **common)
        elif mode == "overwrite":  # a new table version: these rows, this schema
            write_deltalake(uri, rows, mode="overwrite", schema_mode="overwrite", **common)
        else:
            write_deltalake(uri, rows, mode="append", schema_mode="merge", **common)
    except SchemaMismatchError as exc:
        raise LakeError(f"the rows do not fit the Delta table at {folder}: {without_backtrace(str(exc))}") from None
    except DeltaError as exc:
        raise LakeError(f"cannot write the Delta table at {folder}: {without_backtrace(str(exc))}") from None
    except Exception as exc:  # delta-rs raises a bare Exception for a value that does not cast to the table's type
        if type(exc) is not Exception:
            raise
        raise LakeError(f"the rows do not fit the Delta table at {folder}: {without_backtrace(str(exc))}") from None


def file_stats(table: pa.Table) -> str:
    """The statistics of one data file as the Delta log keeps them (JSON): row count, min/max/nulls per column.

    Only flat columns get min/max (numbers, text, dates), as delta-rs writes them.

    Example:
        >>> json.loads(file_stats(pa.table({"ticker": ["B", "A"], "x": [1.5, None]})))["minValues"]
        {'ticker': 'A', 'x': 1.5}
    """
    lo: dict[str, Any] = {}
    hi: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    for name in table.column_names:
        column = table.column(name)
        kind = column.type
        if not (pa.types.is_primitive(kind) or pa.types.is_string(kind)) or pa.types.is_boolean(kind):
            continue
        nulls[name] = column.null_count
        if column.null_count == len(column):
            continue
        mm = pc.min_max(column)
        lo[name], hi[name] = (_json_value(mm["min"]), _json_value(mm["max"]))
    return json.dumps({"numRecords": table.num_rows, "minValues": lo, "maxValues": hi, "nullCount": nulls})


def _json_value(scalar: pa.Scalar) -> Any:
    if pa.types.is_timestamp(scalar.type):
        value = scalar.cast(pa.timestamp("us", tz=scalar.type.tz)).as_py()
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z") if value is not None else None
    if pa.types.is_date(scalar.type):
        return scalar.as_py().isoformat()
    value = scalar.as_py()
    return value if value == value else None  # NaN has no place in JSON


def commit_files(
    folder: str | os.PathLike[str],
    adds: Iterable[tuple[str, pa.Table]],
    removes: Iterable[str] = (),
    *,
    write_file: Any,
    mtimes: Mapping[str, int] | None = None,
) -> list[str]:
    """Add and remove whole files of a Delta table in one commit (the webhook receiver's landing of one dataset).

    Each added table is cast to the table's types, written by ``write_file(path, table)`` (atomic: a file the log
    does not name yet is invisible to every reader), then the log records every add and remove at once. A table
    that does not exist yet is created from the first file's columns; a column it lacks is added to its schema
    first (schema evolution). Adding a path that is live already is skipped: committing the same files again
    changes nothing (a redelivered event).

    Args:
        folder: the table's folder.
        adds: ``(path relative to the folder, rows)`` per new file.
        removes: paths (relative) of live files the commit removes (a removed file stays for time travel).
        write_file: writes one file atomically.
        mtimes: an added file's modification time in the log (milliseconds), where it is not now: a file rewritten
            without some of its rows keeps its rows' age (readers let the record written last win by it).

    Returns:
        The paths added (relative).
    """
    require_deltalake()
    from deltalake import DeltaTable, Schema
    from deltalake.transaction import AddAction, RemoveAction

    adds = [(p, delta_types(t)) for p, t in adds]
    removes = list(removes)
    if not adds and not removes:
        return []
    uri = _uri(folder)
    if not is_table(folder):
        dt = DeltaTable.create(uri, adds[0][1].schema, storage_options=storage_options(folder, writing=True))
    else:
        dt = open_table(folder)
    current = pa.schema(dt.schema().to_arrow())
    missing = [f for _, t in adds for f in t.schema if f.name not in current.names]
    if missing:
        unique = list({f.name: f for f in missing}.values())
        dt.alter.add_columns(list(Schema.from_arrow(pa.schema(unique)).fields))
        dt = open_table(folder)
        current = pa.schema(dt.schema().to_arrow())
    parts = list(dt.metadata().partition_columns)
    stored = pa.schema([f for f in current if f.name not in parts])  # a partition column lives in folder names
    live = {f.path: f for f in live_files(folder)}
    planned = {p for p, _ in adds}
    now = int(time.time() * 1000)
    actions: list[Any] = []
    added = []
    for path, table in adds:
        if path in live:
            continue
        values = {p: _single(table, p) for p in parts}
        table = _fit(table, stored)
        write_file(PurePosixPath(path), table)
        size = os.path.getsize(Path(uri) / path) if not is_url(folder) else 0
        when = (mtimes or {}).get(path, now)
        actions.append(AddAction(path, size, values, when, True, file_stats(table)))
        added.append(path)
    for path in removes:
        if path in live and path not in planned:
            actions.append(RemoveAction(path, True, now, live[path].size, dict(live[path].partition)))
    if actions:
        dt.create_write_transaction(actions, mode="append", schema=current, partition_by=parts or None)
    return added


def _single(table: pa.Table, column: str) -> str | None:
    """The one value of a partition column in a file's rows (a file of a partitioned table holds one)."""
    if column not in table.column_names:
        raise LakeError(f"a file of a table partitioned by {column} has no {column} column")
    values = pc.unique(table.column(column).cast(pa.string())).to_pylist()
    if len(values) != 1:
        raise LakeError(f"a file of a table partitioned by {column} holds {len(values)} values of it")
    return None if values[0] is None else str(values[0])


def _fit(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns in its order and types (absent columns as nulls)."""
    columns = [
        table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(len(table), f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def relative(folder: str | os.PathLike[str], path: PurePath) -> str:
    """``path`` relative to a table folder, ``/``-separated (as the log names files).

    Example:
        >>> relative("/lake/prices", PurePath("/lake/prices/ticker=A/x.parquet"))
        'ticker=A/x.parquet'
    """
    return PurePath(path).relative_to(PurePath(str(folder))).as_posix()
