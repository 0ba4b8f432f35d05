"""A bundle: many tickers' answers of one endpoint in one body, each the part its own request would give.

The bulk wire between fdkit peers (``POST /bulk/<endpoint path>``, an fdkit extension). A body is a magic line,
then one *entry* per ticker in the order asked, then an end entry that counts them (a body cut short is detected,
never taken for fewer tickers). An entry is a 4-byte big-endian header length, a JSON header, and for an answer the
ticker's part as :func:`fdkit.frames.typed.part_bytes` writes it (Arrow IPC, the constants in its metadata), which
the client keeps in its fetch cache as it came: no JSON, no second encoding. A ticker the service could not answer
(404, 400) is an entry with its status, error and message, and no bytes.

A client that asks for it (``"tables": true`` in the request's body) may also be sent *shared tables*: a table
entry holds one part of many tickers' rows (each ticker's a run of them, in order), and each of those tickers'
entries names its run (``rows``: offset and count) in the latest table entry before it instead of bytes of its
own. The ticker's part is that slice, with the table's constants (``ticker`` set to the entry's where they name
one): the same rows and constants its own part would hold, without an Arrow stream per ticker to write and read
(a 1,000-company statement panel was 3,000 of them). Table entries are not tickers' entries; the end entry counts
both.

Example:
    >>> import pyarrow as pa
    >>> from fdkit.frames.typed import part_bytes
    >>> part = (pa.table({"close": [1.0, 2.0]}), 2, {"ticker": "AAPL"})
    >>> body = bundle_bytes([("AAPL", part_bytes(part)), ("NOPE", (404, "Not Found", "Ticker NOPE not found"))])
    >>> [(e.ticker, e.status) for e in read_bundle(body)]
    [('AAPL', 200), ('NOPE', 404)]
    >>> shared = SharedTable(part_bytes((pa.table({"close": [1.0, 2.0, 3.0]}), 3, {"ticker": "A"})))
    >>> body = bundle_bytes([("", shared), ("A", RowsOf(0, 1)), ("B", RowsOf(1, 2))])
    >>> [(e.ticker, e.offset, e.rows) for e in read_bundle(body)]
    [('A', 0, 1), ('B', 1, 2)]
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "BUNDLE_MEDIA",
    "PART_COMPRESSION_HEADER",
    "Bundle",
    "BundleEntry",
    "BrokenBundle",
    "RowsOf",
    "SharedTable",
    "bundle_bytes",
    "bundle_chunks",
    "read_bundle",
]

#: the media type of a bundle (asked for in ``Accept`` by fdkit peers only)
BUNDLE_MEDIA = "application/vnd.fdkit.bundle"
#: the header that says how a bundle's parts are compressed (``zstd``, or ``none`` for a client in the process)
PART_COMPRESSION_HEADER = "X-Fdkit-Part-Compression"
_MAGIC = b"fdkit-bundle 1\n"
_HEADER = struct.Struct(">I")
#: the largest JSON header an entry may have (a ticker and a one-line error message)
_MAX_HEADER = 64 * 2**10
#: entries are written in chunks of about this many bytes
_CHUNK = 2**20


@dataclass(frozen=True)
class SharedTable:
    """A table entry: one part (:func:`fdkit.frames.typed.part_bytes`) holding the rows of the tickers after it.

    Attributes:
        data: the part's bytes (written), a view of the body they came in (read).
    """

    data: bytes | memoryview


@dataclass(frozen=True)
class RowsOf:
    """A ticker's run of rows in the latest :class:`SharedTable` before its entry.

    Attributes:
        offset: the run's first row.
        rows: its number of rows.
    """

    offset: int
    rows: int


#: an entry as written: ``(ticker, part bytes)``, ``(ticker, (status, error, message))``, ``(ticker, RowsOf)``, or
#: ``("", SharedTable)`` (the table the next :class:`RowsOf` entries name)
Written = tuple[str, bytes | tuple[int, str, str] | RowsOf | SharedTable]


class BrokenBundle(ValueError):
    """A body that is not a whole bundle (cut short, or not one at all)."""


@dataclass(frozen=True)
class BundleEntry:
    """One ticker's entry of a bundle.

    Attributes:
        ticker: the ticker, as asked.
        status: 200 for an answer, else the HTTP status its own request would have had.
        data: the part's bytes (:func:`fdkit.frames.typed.part_from_bytes` reads them), a view of the body they
            came in; empty for an error.
        error: the error's title (``Not Found``), for an error.
        message: the error's message, for an error.
        shared: for an answer whose rows are in a shared table, that table (the same object for each of its
            tickers); ``data`` is then empty.
        offset: the first of the ticker's rows in ``shared``.
        rows: the number of the ticker's rows in ``shared``.
    """

    ticker: str
    status: int
    data: bytes | memoryview = b""
    error: str = ""
    message: str = ""
    shared: SharedTable | None = None
    offset: int = 0
    rows: int = 0


@dataclass(frozen=True)
class Bundle:
    """A bulk answer: its entries, and how their parts are compressed (``None``: not at all).

    Attributes:
        entries: one per ticker, in the order asked.
        compression: the parts' compression (``X-Fdkit-Part-Compression``), ``None`` for uncompressed parts.
    """

    entries: list[BundleEntry]
    compression: str | None = "zstd"


def _entry(ticker: str, value: bytes | tuple[int, str, str] | RowsOf | SharedTable) -> bytes:
    if isinstance(value, SharedTable):
        head = orjson.dumps({"table": memoryview(value.data).nbytes})
        return _HEADER.pack(len(head)) + head
    if isinstance(value, RowsOf):
        head = orjson.dumps({"ticker": ticker, "rows": [value.offset, value.rows]})
        return _HEADER.pack(len(head)) + head
    if isinstance(value, bytes | bytearray | memoryview):
        head = orjson.dumps({"ticker": ticker, "bytes": len(value)})
        return _HEADER.pack(len(head)) + head + bytes(value)
    status, error, message = value
    head = orjson.dumps({"ticker": ticker, "status": int(status), "error": error, "message": message})
    return _HEADER.pack(len(head)) + head


def bundle_chunks(entries: Iterable[Written]) -> Iterator[bytes | memoryview]:
    """The bytes of a bundle, entry by entry (a streamed response writes each as it is made).

    Args:
        entries: ``(ticker, part bytes)``, ``(ticker, (status, error, message))`` or ``(ticker, RowsOf)``, in
            the order asked; ``("", SharedTable)`` before the :class:`RowsOf` entries that name it.

    Yields:
        The magic line, the entries' bytes and the end entry, in chunks of about a megabyte; a shared table's
        bytes as a chunk of their own, as they are (a view: never copied into a chunk).

    Example:
        >>> b"".join(bundle_chunks([])) == bundle_bytes([])
        True
    """
    buffer: list[bytes] = [_MAGIC]
    size, count, tables = len(_MAGIC), 0, 0
    for ticker, value in entries:
        if isinstance(value, SharedTable):
            tables += 1
        else:
            count += 1
        buffer.append(_entry(ticker, value))
        size += len(buffer[-1])
        if isinstance(value, SharedTable):  # its bytes as they are, after its header: never copied into a chunk
            yield b"".join(buffer)
            yield memoryview(value.data).cast("B")
            buffer, size = [], 0
            continue
        if size >= _CHUNK:  # writes of a megabyte or so: a chunk per entry is slow to read (HTTP chunked encoding)
            yield b"".join(buffer)
            buffer, size = [], 0
    end = orjson.dumps({"end": True, "count": count, **({"tables": tables} if tables else {})})
    buffer.append(_HEADER.pack(len(end)) + end)
    yield b"".join(buffer)


def bundle_bytes(entries: Iterable[Written]) -> bytes:
    """A whole bundle's bytes (:func:`bundle_chunks` joined).

    Example:
        >>> read_bundle(bundle_bytes([]))
        []
    """
    return b"".join(bundle_chunks(entries))


def read_bundle(data: bytes) -> list[BundleEntry]:
    """The entries of a bundle, in order.

    Args:
        data: the body.

    Returns:
        One :class:`BundleEntry` per ticker.

    Raises:
        BrokenBundle: a body without the magic line, cut short, whose end entry counts other entries, or whose
            rows name no table or rows it does not hold.

    Example:
        >>> read_bundle(bundle_bytes([("X", (404, "Not Found", "no X"))]))[0].message
        'no X'
        >>> read_bundle(bundle_bytes([("X", (404, "Not Found", "no X"))])[:-3])
        Traceback (most recent call last):
        ...
        fdkit.frames.bundle.BrokenBundle: the bundle ends inside an entry (cut short?)
    """
    view = memoryview(data)
    if bytes(view[: len(_MAGIC)]) != _MAGIC:
        raise BrokenBundle("not a bundle of parts (no magic line)")
    at, out = len(_MAGIC), list[BundleEntry]()
    shared: SharedTable | None = None
    tables = 0
    while True:
        head, at = _header(view, at)
        if head.get("end"):
            if head.get("count") != len(out) or head.get("tables", 0) != tables or at != len(view):
                raise BrokenBundle(
                    f"the bundle's end counts {head.get('count')} entries and "
                    f"{head.get('tables', 0)} tables, {len(out)} and {tables} were read"
                )
            return out
        if "table" in head:
            n = head["table"]
            if type(n) is not int or n < 0 or at + n > len(view):
                raise BrokenBundle("the bundle ends inside an entry (cut short?)")
            shared, tables = SharedTable(view[at : at + n]), tables + 1
            at += n
            continue
        entry, at = _ticker_entry(head, view, at, shared)
        out.append(entry)


def _header(view: memoryview, at: int) -> tuple[dict[str, Any], int]:
    """The JSON header of the entry at ``at``, and where the entry's bytes (if any) begin."""
    if at + _HEADER.size > len(view):
        raise BrokenBundle("the bundle ends inside an entry (cut short?)")
    (size,) = _HEADER.unpack_from(view, at)
    at += _HEADER.size
    if size > _MAX_HEADER or at + size > len(view):
        raise BrokenBundle("the bundle ends inside an entry (cut short?)")
    try:
        head = orjson.loads(view[at : at + size])
    except orjson.JSONDecodeError:
        raise BrokenBundle("an entry's header is not JSON") from None
    if not isinstance(head, dict):
        raise BrokenBundle("an entry's header is not a JSON object")
    return head, at + size


def _ticker_entry(
    head: dict[str, Any], view: memoryview, at: int, shared: SharedTable | None
) -> tuple[BundleEntry, int]:
    """A ticker's entry from its header (its run of ``shared``, its part's bytes at ``at``, or its error)."""
    ticker = head.get("ticker")
    if "rows" in head:
        run = head["rows"]
        if (
            not isinstance(ticker, str)
            or not isinstance(run, list)
            or len(run) != 2
            or any(type(v) is not int or v < 0 for v in run)
        ):
            raise BrokenBundle("an entry's header is not a bundle's (ticker, rows)")
        if shared is None:
            raise BrokenBundle(f"the entry of {ticker} names rows of a table, and no table came before it")
        return BundleEntry(ticker, 200, shared=shared, offset=run[0], rows=run[1]), at
    n, status = head.get("bytes"), head.get("status", 500)
    if not isinstance(ticker, str) or (n is not None and type(n) is not int) or type(status) is not int:
        raise BrokenBundle("an entry's header is not a bundle's (ticker, bytes or status)")
    if n is None:
        error, message = str(head.get("error") or ""), str(head.get("message") or "")
        return BundleEntry(ticker, status, error=error, message=message), at
    if n < 0 or at + n > len(view):
        raise BrokenBundle("the bundle ends inside an entry (cut short?)")
    return BundleEntry(ticker, 200, view[at : at + n]), at + n  # a view of the body: no copy
