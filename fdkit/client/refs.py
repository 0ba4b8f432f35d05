"""A kept part that is a run of a kept table: a bulk answer's shared table in the fetch cache once.

A shared table of a bulk answer (:mod:`fdkit.frames.bundle`) holds many tickers' rows. Kept ticker by ticker, it
cost an Arrow stream and a checksum per ticker to write and to read back (a 1,000-company statement panel: 3,000
of each, seconds of CPU for a frame of 6 MB). Instead the table is kept once, under a key of its own
(``table:<part tag>:<digest>``), and each ticker's key holds a *reference*: the table's key, the ticker's run of
rows and its constants, a hundred bytes. Reading a ticker's part reads the reference, then the table (once for
all its tickers of a call), and slices it. A reference whose table is gone (expired, evicted, corrupted and
dropped) is a miss: the ticker is fetched again.

Example:
    >>> ref = ref_bytes("table:abc:0f", 3, 2, {"ticker": "AAPL"})
    >>> read_ref(ref)
    ('table:abc:0f', 3, 2, {'ticker': 'AAPL'})
    >>> read_ref(b"ARROW1...") is None
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import orjson

from fdkit.frames.typed import Part, as_written, part_bytes, part_from_bytes

__all__ = ["REF", "TABLE", "ref_bytes", "read_ref", "table_key", "resolved", "sliced"]

#: the first bytes of a reference (an Arrow stream never starts so)
REF = b"fdkit-ref 1\n"
#: the key prefix of a kept table
TABLE = "table:"


def table_key(tag: str, data: bytes | memoryview) -> str:
    """The key a shared table is kept under: its endpoint's part tag and a digest of its bytes.

    Example:
        >>> table_key("abc", b"x")[:16]
        'table:abc:2d7116'
    """
    return f"{TABLE}{tag}:" + hashlib.sha256(data).hexdigest()[:32]


def ref_bytes(key: str, offset: int, rows: int, constants: dict[str, Any]) -> bytes:
    """A reference to rows ``offset .. offset + rows`` of the table kept under ``key``, with their constants."""
    return REF + orjson.dumps({"table": key, "offset": offset, "rows": rows, "constants": constants})


def read_ref(data: bytes | memoryview) -> tuple[str, int, int, dict[str, Any]] | None:
    """``(table key, offset, rows, constants)`` of a reference; ``None`` for anything else (a part's bytes).

    A reference that does not decode is ``None`` too: its part's reader then refuses it as a broken part.
    """
    if bytes(data[: len(REF)]) != REF:
        return None
    try:
        head = orjson.loads(data[len(REF) :])
        key, offset, rows, consts = head["table"], head["offset"], head["rows"], head["constants"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    if not isinstance(key, str) or type(offset) is not int or type(rows) is not int or not isinstance(consts, dict):
        return None
    return key, offset, rows, consts


def sliced(table: Part, offset: int, rows: int, constants: dict[str, Any]) -> Part | None:
    """The part a reference names in its (read) table; ``None`` when the table lacks those rows."""
    whole = table[0]
    if offset < 0 or rows < 0 or offset + rows > whole.num_rows:
        return None
    return whole.slice(offset, rows), rows, constants


def resolved(data: bytes, read_table: Callable[[str], bytes | None]) -> bytes | None:
    """A kept entry as a part's bytes: a reference resolved through its table, anything else as it is.

    Args:
        data: the entry's bytes.
        read_table: the fetch cache's bytes under a table's key (``None``: not there).

    Returns:
        The bytes, or ``None`` when the reference's table is gone (a miss).

    Example:
        >>> import pyarrow as pa
        >>> kept = part_bytes((pa.table({"x": [1.0, 2.0, 3.0]}), 3, {}))
        >>> part_from_bytes(resolved(ref_bytes("t", 1, 2, {"ticker": "B"}), {"t": kept}.get))
        (pyarrow.Table
        x: double
        ----
        x: [[2,3]], 2, {'ticker': 'B'})
    """
    ref = read_ref(data)
    if ref is None:
        return data
    key, offset, rows, consts = ref
    table = read_table(key)
    if table is None:
        return None
    part = sliced(as_written(part_from_bytes(table, text=False)), offset, rows, consts)
    return None if part is None else part_bytes(part)
