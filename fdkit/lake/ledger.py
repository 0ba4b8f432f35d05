"""The webhook receiver's ledger: which events landed, and which rows of which dataset each one landed.

The ledger is SQLite in WAL mode at ``<lake>/_webhooks/events.sqlite``. ``events`` holds every landed event id (a
redelivery of one is a ``duplicate``); ``landed`` holds, per event, the identity of each row it made live: the
dataset, the partition value (the ticker) and the row's key fields as JSON text (values normalized by
:func:`key_text`). Both are written in one transaction, after the rows' Delta commit and under the dataset's lock
(:mod:`fdkit.lake.locks`), so another writer holding that lock sees an event's rows and its ledger entry together
or neither.

Two readers use the rows: ``fdkit mirror`` keeps every lake row whose key an event landed (landed events win, see
:meth:`fdkit.lake.writer.LakeWriter.replace_rows`), and ``fdkit lake validate`` checks that each one is still in the
lake (the invariant ``landed_events_in_lake``).

Example:
    >>> import tempfile
    >>> ledger = Ledger(tempfile.mkdtemp())
    >>> row = ("AAPL", {"ticker": "AAPL", "report_period": "2024-03-30"})
    >>> ledger.record("ev1", "earnings.created", {"earnings": [row]})
    >>> ledger.seen("ev1"), ledger.landed_keys("earnings", "AAPL")
    (True, [{'ticker': 'AAPL', 'report_period': '2024-03-30'}])
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

__all__ = ["LEDGER_FILE", "Ledger", "key_text"]

#: where the ledger lives in a lake
LEDGER_FILE = "_webhooks/events.sqlite"

_MIDNIGHT = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)?)?")


def key_text(value: Any) -> str:
    """A key value as the ledger keeps it: text, a date as ``YYYY-MM-DD``, a missing value as ``""``.

    The same value read back from the lake (a pandas ``Timestamp``, a category) and sent in an event (JSON text)
    gives the same text.

    Example:
        >>> import pandas as pd
        >>> key_text(pd.Timestamp("2024-03-30")), key_text("2024-03-30T00:00:00Z"), key_text(None), key_text("10-K")
        ('2024-03-30', '2024-03-30', '', '10-K')
    """
    if value is None:
        return ""
    try:
        if bool(value != value):  # NaN, NaT
            return ""
    except (TypeError, ValueError):  # pd.NA
        return ""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    if text in ("NaT", "nan", "<NA>", "None"):
        return ""
    m = _MIDNIGHT.fullmatch(text)
    return m.group(1) if m else text


class Ledger:
    """The receiver's record of landed events and their rows (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str], *, readonly: bool = False) -> None:
        """Open (or, unless ``readonly``, create) the ledger of lake ``root``.

        Raises:
            FileNotFoundError: ``readonly`` and the lake has no ledger.
        """
        path = Path(root) / LEDGER_FILE
        if readonly:
            if not path.is_file():
                raise FileNotFoundError(path)
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False)
            self._db.execute("pragma journal_mode=wal")
            self._db.execute("pragma synchronous=full")
            self._db.execute("create table if not exists events (id text primary key, type text, landed_at real)")
            self._db.execute("create table if not exists landed (event_id text, dataset text, part text, key text)")
            self._db.execute("create index if not exists landed_part on landed (dataset, part)")
            self._db.commit()
        # a ledger an older fdkit kept (before the writer seam) holds event ids only: opened to write, it gains the
        # rows' table above (its old events stay duplicates, their rows unknown); opened to read, it has no rows
        tables = {r[0] for r in self._db.execute("select name from sqlite_master where type = 'table'")}
        self._events, self._rows = "events" in tables, "landed" in tables
        self._lock = threading.Lock()  # one connection, used by the receiver's worker threads in turn

    def seen(self, event_id: str) -> bool:
        """Whether the event id was landed before."""
        if not self._events:
            return False
        with self._lock:
            return self._db.execute("select 1 from events where id = ?", (event_id,)).fetchone() is not None

    def landed_ids(self) -> list[str]:
        """Every landed event id, oldest first."""
        if not self._events:
            return []
        with self._lock:
            return [r[0] for r in self._db.execute("select id from events order by landed_at")]

    def record(
        self, event_id: str, event_type: str, rows: Mapping[str, Sequence[tuple[Any, Mapping[str, Any]]]]
    ) -> None:
        """Record an event as landed, with the rows it made live (one transaction, durable when it returns).

        Args:
            event_id: the event id.
            event_type: its type.
            rows: dataset -> ``(partition value or None, key fields)`` per row made live.
        """
        entries = [
            (event_id, name, key_text(part), orjson.dumps({k: key_text(v) for k, v in key.items()}).decode())
            for name, keyed in rows.items()
            for part, key in keyed
        ]
        with self._lock, self._db:
            self._db.execute("insert or ignore into events values (?, ?, ?)", (event_id, event_type, time.time()))
            if entries and not self._db.execute("select 1 from landed where event_id = ?", (event_id,)).fetchone():
                self._db.executemany("insert into landed values (?, ?, ?, ?)", entries)

    def landed_keys(self, dataset: str, part: Any = None) -> list[dict[str, str]]:
        """The key fields of every row events landed in ``dataset`` (of partition value ``part``, or all).

        None for a ledger an older fdkit kept (event ids only: which rows its events landed was not recorded).
        """
        if not self._rows:
            return []
        sql, args = "select key from landed where dataset = ?", [dataset]
        if part is not None:
            sql, args = sql + " and part = ?", [dataset, key_text(part)]
        with self._lock:
            return [orjson.loads(r[0]) for r in self._db.execute(sql, args)]

    def landed_rows(self) -> list[tuple[str, str, dict[str, str]]]:
        """``(event id, dataset, key fields)`` of every row every event landed (none in an older fdkit's ledger)."""
        if not self._rows:
            return []
        with self._lock:
            rows = self._db.execute("select event_id, dataset, key from landed order by rowid").fetchall()
        return [(e, d, orjson.loads(k)) for e, d, k in rows]

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
