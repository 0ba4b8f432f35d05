"""The server's view of a lake: read lazily, what is asked and no more, and kept within a byte budget.

The only server module that reads the lake, and only through :class:`fdkit.lake.reader.LakeReader`: handlers ask
the store, the store asks the reader.

Start-up reads nothing but the lake's change stamp. A dataset is listed (its files, grouped by layout and indexed
by partition value) the first time it is asked for. A one-ticker question (:meth:`Store.rows`,
:meth:`Store.sorted_rows`) reads that ticker's rows only: its ``ticker=X/`` folder, or
the row groups of flat files whose min/max statistics may hold it. A dataset small beside the budget (the bundled
reference lake's) is read whole once and split by ticker, as a whole read is then about as cheap as one ticker's.
Everything kept (whole datasets, a ticker's rows, its sorted columns) counts against one byte budget
(``memory_bytes``; ``fdkit serve --memory``), least recently used out first; one ticker's rows are kept from their
second ask (a sweep over a market asks most tickers once); the distinct tickers of a dataset come from its folder
names or its ticker column alone.

Example:
    >>> from fdkit.lake import default_data_dir
    >>> store = Store(default_data_dir(), memory_bytes=64 * 2**20)
    >>> "AAPL" in store.keys_of("prices")
    True
    >>> len(store.rows("prices", "AAPL")) > 1000, store.cached_bytes() <= 64 * 2**20
    (True, True)
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fdkit.catalog.schema import SCHEMAS
from fdkit.errors import LakeError
from fdkit.frames.basis import as_traded
from fdkit.lake.io import Between, DatasetFiles, LakeRoot, dataset_schema, default_lake, frame_of_table
from fdkit.lake.reader import LakeReader, rows_where, unreachable
from fdkit.server.memo import ENTRY_OVERHEAD, AnswerMemo, object_bytes
from fdkit.server.rows import json_blocks

if TYPE_CHECKING:
    from fdkit.lake.latest import LastTraded

__all__ = ["Between", "Store", "DEFAULT_MEMORY_BYTES", "STALE_HEADER", "parse_bytes"]

#: the header of an answer served from memory while the lake's object store does not answer (why, in words)
STALE_HEADER = "X-Fdkit-Lake"

#: what the store keeps by default: sized for a laptop serving a market-scale lake next to other programs
DEFAULT_MEMORY_BYTES = 2**30

#: a dataset whose files take at most ``budget / SMALL_SHARE`` bytes on disk is read whole and split by ticker (its
#: frame takes a few times its Parquet size in memory); a larger one is read a ticker at a time
SMALL_SHARE = 64

_UNITS = {
    "": 1,
    "B": 1,
    "K": 2**10,
    "KB": 2**10,
    "KIB": 2**10,
    "M": 2**20,
    "MB": 2**20,
    "MIB": 2**20,
    "G": 2**30,
    "GB": 2**30,
    "GIB": 2**30,
    "T": 2**40,
    "TB": 2**40,
    "TIB": 2**40,
}


def parse_bytes(text: str | int) -> int:
    """A size such as ``512MB``, ``1.5G`` or ``1073741824`` in bytes (units are powers of 1,024).

    Args:
        text: the size.

    Returns:
        The number of bytes.

    Raises:
        ValueError: for anything else, or a size below 1 MB.

    Example:
        >>> parse_bytes("512MB"), parse_bytes("1g"), parse_bytes(2**21)
        (536870912, 1073741824, 2097152)
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(text))
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _UNITS:
        raise ValueError(f"not a size: {text!r} (e.g. 512MB, 2GB)")
    n = int(float(m.group(1)) * _UNITS[unit])
    if n < 2**20:
        raise ValueError(f"a memory budget of {text!r} is below 1 MB")
    return n


class Store:
    """Lazy, byte-bounded access to the datasets of a lake.

    Args:
        root: the lake directory, or a reader of it.
        memory_bytes: the most bytes of lake data kept in memory (frames, sorted columns); an
            item larger than the budget is answered but not kept.

    Attributes:
        rows_read: how many rows the store has read from the lake (tests and benchmarks watch it).
    """

    def __init__(self, root: str | os.PathLike[str] | LakeReader, *, memory_bytes: int = DEFAULT_MEMORY_BYTES) -> None:
        self.lake = root if isinstance(root, LakeReader) else LakeReader(root)
        self.root = self.lake.root
        self.memory_bytes = int(memory_bytes)
        self.cache = AnswerMemo(self.memory_bytes)
        self.rows_read = 0
        self._lock = threading.RLock()
        self._gen = 0  # bumped by changed(): what a reader still makes from the old lake is kept under dead keys
        self._files: dict[str, DatasetFiles] = {}
        self._keys: dict[tuple[str, str], frozenset[str]] = {}
        self._has: dict[tuple[str, str, str], bool] = {}
        # the rows has() read to answer (one ticker's at most), until the read they spare takes them
        self._fresh: tuple[tuple[Any, ...], pd.DataFrame] | None = None
        self._known: set[str] | None = None
        self._stamp = self.lake.stamp()
        self.stall_said: str | None = None  # the stall the server last logged (it logs each once)
        # dataset -> (the listing it was brought up to, the latest-bar projection): kept across changes of the lake
        # (its rows are keyed by the files they were made from, so a commit only makes its own tickers again)
        self._latest: dict[str, tuple[DatasetFiles, LastTraded]] = {}
        self._latest_lock = threading.Lock()
        # per thread: (generation, dataset, key) -> (the values read together, their rows by value)
        self._together = threading.local()

    @classmethod
    def open(cls, root: str | os.PathLike[str], *, memory_bytes: int = DEFAULT_MEMORY_BYTES) -> Store:
        """The store of a lake that exists and holds datasets.

        Raises:
            LakeError: a missing or empty lake (a start-up error naming the path, never a 404 per ticker).
        """
        return cls(LakeReader.open(root), memory_bytes=memory_bytes)

    @staticmethod
    def default_root() -> LakeRoot:
        """The lake served when none is named: ``FDKIT_DATA`` (a folder or an ``s3://`` URL), else the bundled lake."""
        return default_lake()

    def changed(self) -> bool:
        """Whether a writer (the webhook receiver) committed to the lake since it was read; if so, forget it.

        A stat per call: ``fdkit serve`` sees landed events on the next request, no restart.
        """
        stamp = self.lake.stamp()
        if stamp == self._stamp:
            return False
        with self._lock:
            self._gen += 1
            self.cache.clear()
            self._files.clear()
            self._keys.clear()
            self._has.clear()
            self._fresh = None
            self._known = None
            self._stamp = stamp
        return True

    def stalled(self) -> str | None:
        """Why what the store serves from memory may be older than the lake (its object store is not answering).

        ``None`` while the lake answers (a local lake always does). Set when a change check of the lake's object
        store goes unanswered or fails, or a read fails for want of an answer (:meth:`unreachable`); cleared by the
        next change check the store answers.
        """
        return self.lake.stalled

    def unreachable(self, exc: BaseException) -> LakeError | None:
        """The 503 a read's failure ``exc`` stands for when the lake's object store did not answer, else ``None``.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> Store(default_data_dir()).unreachable(OSError("Parquet magic bytes not found")) is None
            True
        """
        if isinstance(self.root, Path):
            return None
        gone = unreachable(exc, str(self.root))
        if gone is not None and self.lake.stalled is None:
            self.lake.stalled = f"the lake's object store at {self.root} did not answer a read"
        return gone

    def cached_bytes(self) -> int:
        """The bytes of lake data the store keeps now (at most ``memory_bytes``)."""
        return self.cache.bytes

    def cached(self) -> list[tuple[Any, ...]]:
        """What the store keeps, least recently used first: ``(kind, dataset, ...)`` tuples.

        Kinds: ``frame`` (a whole dataset), ``split`` (a small dataset split by a key), ``rows`` (one key value's
        rows), ``sorted`` (a ticker's rows sorted by time), ``cik``.
        """
        return [k[1:] for k in self.cache.keys() if isinstance(k, tuple) and k and k[0] == self._gen]

    # -- metadata -----------------------------------------------------------------------------------------------
    def files(self, name: str) -> DatasetFiles:
        """The listing of dataset ``name`` (made on first use, kept until the lake changes)."""
        got = self._files.get(name)
        if got is None:
            got = self.lake.files(name)
            with self._lock:
                self._files[name] = got
        return got

    def _small(self, name: str) -> bool:
        """Whether dataset ``name`` is read whole and split (small beside the budget) rather than per key."""
        return self.files(name).nbytes * SMALL_SHARE <= self.memory_bytes

    def has(self, name: str, value: str, key: str = "ticker") -> bool:
        """Whether dataset ``name`` holds a row whose ``key`` is ``value``, reading as little as that needs.

        Known once the distinct values are; else, in a Delta table whose log has the key's min/max for every file,
        no file whose range holds the value means no, a file of that value alone means yes, and otherwise the rows
        that may hold it are read (the row groups whose statistics may), and kept for the read of them that follows
        (:meth:`rows`, :meth:`sorted_rows`): a ticker's first question reads its own rows once, not every file's
        ticker column (56M values at 10,000 tickers).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> store = Store(default_data_dir())
            >>> store.has("prices", "AAPL"), store.has("prices", "NOPE")
            (True, False)
        """
        value = str(value)
        got = self._keys.get((name, key))
        if got is not None:
            return value in got
        together = self._read_together(name, key)
        if together is not None and value in together[0]:
            return value in together[1]
        listing = self.files(name)
        stats = listing.stats
        if self._small(name) or not listing.files or any(key not in stats.get(f, {}) for f in listing.files):
            return value in self._values(name, key)
        hit = self._has.get((name, key, value))
        if hit is None:
            cover = [stats[f][key] for f in listing.files if _within(value, stats[f][key])]
            if not cover:
                hit = False
            elif any(lo == hi == value for lo, hi in cover):
                hit = True
            else:  # read its rows: the question that follows (rows, sorted_rows) takes them instead of reading
                rows = self._read(name, where={key: value})
                hit = len(rows) > 0
                if hit:
                    with self._lock:
                        self._fresh = ((self._gen, name, key, value), rows)
            with self._lock:
                self._has[(name, key, value)] = hit
        return hit

    def _read_rows(self, name: str, value: str, key: str = "ticker") -> pd.DataFrame:
        """Rows of ``key`` = ``value``: those :meth:`has` just read for the same question, else read now."""
        together = self._read_together(name, key)
        if together is not None and value in together[1]:
            return together[1][value].copy()  # its own frame: kept alone, it holds none of the others' rows
        with self._lock:
            fresh, self._fresh = self._fresh, None
        if fresh is not None and fresh[0] == (self._gen, name, key, value):
            return fresh[1]
        return self._read(name, where={key: value})

    def _read_together(self, name: str, key: str) -> tuple[frozenset[str], dict[str, pd.DataFrame]] | None:
        return getattr(self._together, "read", {}).get((self._gen, name, key))

    @contextmanager
    def reading_together(self, name: str, values: list[str], key: str = "ticker") -> Iterator[None]:
        """Within the block, this thread's one-value questions of ``values`` take their rows from one read of all.

        The bulk route's endpoints with a handler of their own (``/prices``) answer ticker by ticker; each ticker's
        read of a large dataset costs a scan of the row groups that may hold it (about 40 ms for one ticker of the
        S&P 500 bars, whatever its range). One read of every ticker's rows (:meth:`rows_of_many`), split by ticker,
        answers :meth:`has`, :meth:`rows` and :meth:`sorted_rows` instead: the same rows in the same order as each
        ticker's own read, kept (or not) as they would be. A small dataset is kept whole already: nothing to do.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> store = Store(default_data_dir(), memory_bytes=2**20)
            >>> with store.reading_together("prices", ["AAPL", "MSFT", "NOPE"]):
            ...     store.has("prices", "NOPE"), len(store.rows("prices", "AAPL")) > 1000
            (False, True)
        """
        if self._small(name) or not values:
            yield
            return
        asked = frozenset(str(v) for v in values)
        rows = _split(self.rows_of_many(name, sorted(asked), key), key)
        token = (self._gen, name, key)
        read = dict(getattr(self._together, "read", {}))
        read[token] = (asked, rows)
        self._together.read = read
        try:
            yield
        finally:
            self._together.read = {k: v for k, v in read.items() if k != token}

    def _values(self, name: str, key: str) -> frozenset[str]:
        """The distinct values of ``key`` in ``name``: from folder names, or that one column of flat files."""
        got = self._keys.get((name, key))
        if got is None:
            got = frozenset(self.lake.distinct(name, key, files=self.files(name)))
            with self._lock:
                self._keys[(name, key)] = got
        return got

    # -- reads --------------------------------------------------------------------------------------------------
    def _kept(self, kind: str, *parts: Hashable, make: Any, size: Any = None, repeated: bool = False) -> Any:
        """``make()`` kept within the budget under ``(kind, *parts)``; ``repeated``: kept once asked for twice.

        One ticker's rows are ``repeated`` items: a sweep over a market's tickers, each asked once, reads them and
        lets them go (memory follows the tickers asked again, not the lake's size: BENCHMARKS.md, scale).
        """
        return self.cache.get_or_make((self._gen, kind, *parts), make, size or _frame_bytes, keep_on_repeat=repeated)

    def _read(self, name: str, **kw: Any) -> pd.DataFrame:
        df = self.lake.read(name, files=self.files(name), **kw)
        self.rows_read += len(df)
        return df

    def frame(
        self, name: str, columns: list[str] | None = None, where: Mapping[str, object] | None = None
    ) -> pd.DataFrame:
        """The whole dataset ``name`` (typed; empty with its schema when absent), or only some of its columns or rows.

        For cross-sections (screener, snapshots) and small datasets; kept within the budget like the rest (a
        dataset larger than the budget is read for each call). ``columns`` (names :meth:`columns_of` has) reads
        only those of a large dataset: the same rows, in the same order and dtypes, as the whole frame's columns.
        ``where`` (column -> value, compared as text) keeps only the rows that match: a large dataset's scan filters
        them (one period of the statements, a third of their rows, for a screen); a small one's whole frame is
        filtered.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> store = Store(default_data_dir())
            >>> q = store.frame("income_statements", ["ticker", "revenue"], where={"period": "quarterly"})
            >>> q.columns.tolist(), len(q) < len(store.frame("income_statements"))
            (['ticker', 'revenue'], True)
        """
        where = dict(where or {})
        if columns is None and not where:
            return self._kept("frame", name, make=lambda: self._read(name))
        cols = None if columns is None else list(dict.fromkeys(columns))
        if self._small(name):
            df = rows_where(self.frame(name), where)
            return df if cols is None else df[[c for c in cols if c in df.columns]]
        return self._kept(
            "frame",
            name,
            None if cols is None else tuple(cols),
            tuple(sorted(where.items())),
            make=lambda: self._read(name, columns=cols, where=where or None),
        )

    def columns_of(self, name: str) -> set[str] | None:
        """The columns a whole read of dataset ``name`` has, known without reading it (``None``: only a read tells).

        The fields its schema declares and, for a Delta table, those of the table's schema (its log says).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> "revenue" in Store(default_data_dir()).columns_of("income_statements")
            True
        """
        schema = dataset_schema(name)
        declared = set(SCHEMAS[schema]) if schema else set()
        listing = self.files(name)
        if self._small(name) or not listing.files:
            return set(self.frame(name).columns) if listing.files else declared
        return declared | set(listing.schema.names) if listing.schema is not None else None

    def last_traded(self, name: str) -> pd.DataFrame:
        """Each ticker's last as-traded bar and the close before it (:func:`fdkit.lake.latest.last_traded`).

        The market-wide snapshot's cross-section. A dataset small beside the budget is reduced from its frame; a
        larger one from its projection (:mod:`fdkit.lake.latest`: the file the writers keep beside the table, brought
        up to the current version by reading only the files added since), never from every bar.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> last = Store(default_data_dir()).last_traded("prices")
            >>> last.columns.tolist(), bool(last["ticker"].is_unique)
            (['ticker', 'time', 'close', 'previous_close'], True)
        """
        if self._small(name):
            return self._kept("latest", name, make=lambda: self.lake.reduce_last_traded(self.frame(name)))
        listing = self.files(name)
        with self._latest_lock:
            got = self._latest.get(name)
            if got is None or got[0] is not listing:
                projection = self.lake.last_traded(name, listing, None if got is None else got[1])
                self._latest[name] = (listing, projection)
            else:
                projection = got[1]
            return projection.frame()

    def groups(self, name: str, key: str = "ticker") -> Mapping[str, pd.DataFrame]:
        """Dataset ``name`` by the values of ``key``.

        A mapping whose keys come from metadata (folder names or the key column) and whose frames are read when
        they are asked for (:meth:`rows`): ``ticker in store.groups("prices")`` reads no prices.
        """
        return _Groups(self, name, key)

    def rows(self, name: str, value: str, key: str = "ticker") -> pd.DataFrame:
        """Rows of ``name`` whose ``key`` equals ``value`` (an empty typed frame when none).

        Only those rows are read (the ``key=value/`` folders, the row groups whose statistics may hold ``value``),
        unless the dataset is small enough to be kept whole.
        """
        value = str(value)
        if not self.has(name, value, key):
            return self._kept(
                "empty",
                name,
                make=lambda: self.frame(name).iloc[0:0] if self._small(name) else self._read(name, where={key: "\x00"}),
            )
        if self._small(name):
            split = self._kept("split", name, key, make=lambda: _split(self.frame(name), key))
            return split[value]
        return self._kept("rows", name, key, value, make=lambda: self._read_rows(name, value, key), repeated=True)

    def rows_of_many(
        self, name: str, values: list[str], key: str = "ticker", between: Between | None = None
    ) -> pd.DataFrame:
        """Rows of ``name`` whose ``key`` is one of ``values``, in the lake's order (an empty typed frame when none).

        The bulk read of many tickers: one scan of the row groups whose statistics may hold one of them (a large
        dataset), or the kept split of a small one; what a ticker's own read (:meth:`rows`) gives, for each
        ticker, in the same order. Not kept: a bulk answer is not asked again, its parts are (client side). With
        ``between`` (a date column's range), a large dataset's read skips the files and row groups outside it (the
        caller filters the rows by the same range: a small dataset's rows are all given).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> df = Store(default_data_dir()).rows_of_many("prices", ["MSFT", "AAPL", "NOPE"])
            >>> sorted(df["ticker"].astype(str).unique())
            ['AAPL', 'MSFT']
        """
        wanted = sorted({str(v) for v in values})
        if self._small(name):  # the kept frame's rows of those values, in its order (one isin, no per-value frames)
            return rows_where(self.frame(name), {key: tuple(wanted)}).reset_index(drop=True)
        return self._read(name, where={key: tuple(wanted)}, between=between)

    def table_of_many(
        self, name: str, values: list[str], key: str = "ticker", between: Between | None = None
    ) -> pa.Table:
        """:meth:`rows_of_many`'s rows as the lake's files hold them: an Arrow table, in the same order.

        For answers made in Arrow (the bulk route's), which need no typed frame of the rows. A small dataset's
        whole table is kept within the budget, as its frame is (a second cross-section reads no file); a large
        one's read is not kept. Rows of other ``values`` may remain where the read cannot tell them apart
        cheaply: the caller filters by ``key`` (as text).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> t = Store(default_data_dir()).table_of_many("prices", ["MSFT", "AAPL", "NOPE"])
            >>> sorted(set(t.column("ticker").to_pylist()))
            ['AAPL', 'MSFT']
        """
        wanted = sorted({str(v) for v in values})
        if self._small(name):
            return self._kept("table", name, make=lambda: self._read_table(name), size=_table_bytes)
        return self._read_table(name, where={key: tuple(wanted)}, between=between)

    def typed_columns(self, name: str, table: pa.Table, columns: set[str]) -> pd.DataFrame:
        """Some columns of a table :meth:`table_of_many` gave, as dataset ``name``'s typed frame has them.

        The dtypes of :meth:`rows_of_many`'s frame (a declared column the table lacks as nulls), for the columns
        an answer's filter and order read; the rest of the rows stay Arrow.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> store = Store(default_data_dir())
            >>> t = store.table_of_many("interest_rates", ["FED"], key="bank")
            >>> str(store.typed_columns("interest_rates", t, {"date"}).dtypes["date"])
            'datetime64[ns]'
        """
        schema = dataset_schema(name)
        fields = [c for c in SCHEMAS[schema] if c in columns] if schema else None
        return frame_of_table(table.select([c for c in table.column_names if c in columns]), schema, fields)

    def _read_table(self, name: str, **kw: Any) -> pa.Table:
        table = self.lake.read_table(name, files=self.files(name), **kw)
        self.rows_read += table.num_rows
        return table

    def _rows_once(self, name: str, value: str) -> pd.DataFrame:
        """One ticker's rows for a derived item: kept rows if there are, else read and not kept themselves."""
        if self._small(name) or (self._gen, "rows", name, "ticker", value) in self.cache:
            return self.rows(name, value)
        if not self.has(name, value):
            return self.rows(name, value)
        return self._read_rows(name, value)

    def sorted_rows(
        self, name: str, value: str, by: str = "time", *, traded: bool = False
    ) -> tuple[pd.DataFrame, np.ndarray]:
        """Rows of ``name`` for one ticker, sorted by ``by``, with ``by`` as int64 nanoseconds for ``searchsorted``.

        The data path of date-range queries: a range is two binary searches and a view, never a scan. ``traded``
        keeps only the bars with an as-traded price (``basis`` as_traded, where the dataset says a basis).
        """

        def make() -> tuple[pd.DataFrame, np.ndarray]:
            rows = self._rows_once(name, value)
            if traded and "basis" in rows.columns:
                rows = rows[as_traded(rows["basis"])]
            if not rows[by].is_monotonic_increasing:  # the lake's bars are written in order: usually a view
                rows = rows.sort_values(by, kind="stable")
            rows = rows.reset_index(drop=True)
            when = rows[by]
            if getattr(when.dtype, "unit", None) == "ns" and hasattr(when.array, "asi8"):
                stamps = when.array.asi8  # nanoseconds since the epoch (UTC), a view of the column: no copy kept
            else:
                if isinstance(when.dtype, pd.DatetimeTZDtype):
                    when = when.dt.tz_convert("UTC").dt.tz_localize(None)
                stamps = when.to_numpy(dtype="datetime64[ns]").view("int64")
            if by == "time":  # bars carry their time in milliseconds too
                rows["time_milliseconds"] = pd.array(stamps // 1_000_000, dtype="Int64")
            return rows, stamps

        return self._kept("sorted", name, value, by, traded, make=make, repeated=True, size=_sorted_bytes)

    def keep_sorted(
        self, name: str, value: str, rows: tuple[pd.DataFrame, np.ndarray], by: str = "time", *, traded: bool = False
    ) -> None:
        """Keep what :meth:`sorted_rows` gave now, not from its second ask.

        An answer of several pages asks for the rows again with each page: a JSON walk of a ticker's five years
        read them twice, at 10-120 ms a read.
        """
        key = (self._gen, "sorted", name, value, by, traded)
        if key not in self.cache:
            self.cache.put(key, rows, _sorted_bytes(rows) + object_bytes(key) + ENTRY_OVERHEAD)

    def sorted_json(
        self,
        name: str,
        value: str,
        fields: tuple[str, ...],
        traded: bool,
        first: int,
        last: int,
        ahead: int,
        rows: Callable[[], pd.DataFrame],
    ) -> list[tuple[bytes, np.ndarray]]:
        """Blocks ``first..last`` of a ticker's :meth:`sorted_rows` as JSON (:func:`~fdkit.server.rows.json_blocks`).

        Kept within the budget: a JSON page of a ticker asked again (any range over the same bars) is cut from
        bytes made once. With ``ahead`` (the answer runs on: its pages will be asked), a block not kept is made
        with the rest of the page's and ``ahead`` more in one conversion, and all are kept; otherwise a block is
        kept from its second ask, as the rows are. ``rows`` gives the sorted rows, asked only when blocks are made.
        """
        got: list[tuple[bytes, np.ndarray]] = []
        for k in range(first, last + 1):
            hit = self.cache.peek(key := (self._gen, "json", name, value, fields, traded, k))
            if hit is None and ahead > 0:
                run = json_blocks(rows(), list(fields), k, last + ahead)
                for j, made in enumerate(run):
                    self.cache.put((*key[:-1], k + j), made, _block_bytes(made) + object_bytes(key) + ENTRY_OVERHEAD)
                return got + run[: last - k + 1]
            if hit is None:
                make = partial(_json_block, rows, fields, k)
                hit = self._kept("json", name, value, fields, traded, k, make=make, size=_block_bytes, repeated=True)
            got.append(hit)
        return got

    def has_sorted(self, name: str, value: str, by: str = "time", *, traded: bool = False) -> bool:
        """Whether :meth:`sorted_rows` of this ticker is ready (a range of it is then microseconds of work)."""
        return (self._gen, "sorted", name, value, by, traded) in self.cache

    def keys_of(self, name: str, key: str = "ticker") -> list[str]:
        """Sorted distinct values of ``key`` in dataset ``name``."""
        return sorted(self._values(name, key))

    def known_tickers(self) -> set[str]:
        """Every ticker any dataset of the lake itself mentions (a ticker outside this set is unknown: 404).

        A data package's dataset (the price history's dead names) makes a ticker known to that dataset's own
        endpoints only: ``/financials`` of Lehman stays a 404, not an empty answer.
        """
        if self._known is None:
            known: set[str] = set()
            for name in self.lake.own_names():
                known.update(self._values(name, "ticker"))
            with self._lock:
                self._known = known
        return self._known

    def knows(self, ticker: str, dataset: str | None = None) -> bool:
        """Whether any dataset mentions ``ticker``.

        The dataset a request reads is asked first, so the set of every known ticker is only built for a ticker
        that one does not hold.
        """
        if dataset is not None and self.has(dataset, ticker):
            return True
        return ticker in self.known_tickers()

    def cik_to_ticker(self, cik: str) -> str | None:
        """Ticker of a CIK (leading zeros optional), from company facts then filings (their two columns only)."""
        norm = cik.strip().lstrip("0")
        for name in ("company_facts", "filings"):
            found = self._kept("cik", name, make=lambda n=name: _first_by_cik(self, n), size=_dict_bytes)
            if norm in found:
                return found[norm]
        return None


def _json_block(rows: Callable[[], pd.DataFrame], fields: tuple[str, ...], block: int) -> tuple[bytes, np.ndarray]:
    return json_blocks(rows(), list(fields), block, block)[0]


def _block_bytes(value: tuple[bytes, np.ndarray]) -> int:
    """The memory of an encoded block: its bytes object (33 bytes of header) and its offsets (112 of header)."""
    return len(value[0]) + 33 + value[1].nbytes + 112


def _sorted_bytes(value: tuple[pd.DataFrame, np.ndarray]) -> int:
    """The memory of a ticker's sorted rows and their stamps (stamps that view the rows' column: not again)."""
    return _frame_bytes(value[0]) + (value[1].nbytes if value[1].base is None else 0)


class _Groups(Mapping[str, pd.DataFrame]):
    """A dataset by the values of a key: keys from metadata, each frame read when it is asked for."""

    def __init__(self, store: Store, name: str, key: str) -> None:
        self._store, self._name, self._key = store, name, key

    def _values(self) -> frozenset[str]:
        return self._store._values(self._name, self._key)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self._store.has(self._name, value, self._key)

    def __getitem__(self, value: str) -> pd.DataFrame:
        if value not in self:
            raise KeyError(value)
        return self._store.rows(self._name, value, self._key)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._values()))

    def __len__(self) -> int:
        return len(self._values())


def _first_by_cik(store: Store, name: str) -> dict[str, str]:
    """``{CIK without leading zeros: the ticker of its first row}`` of dataset ``name`` (two columns read)."""
    try:
        df = store._read(name, columns=["cik", "ticker"])
    except KeyError:  # a dataset without these columns
        return {}
    out: dict[str, str] = {}
    for cik, ticker in zip(df["cik"].astype("string").str.lstrip("0"), df["ticker"].astype("string"), strict=True):
        if not pd.isna(cik) and not pd.isna(ticker) and cik not in out:
            out[str(cik)] = str(ticker)
    return out


def _split(df: pd.DataFrame, key: str) -> dict[str, pd.DataFrame]:
    """``df`` by the values of ``key``: views of a frame written in key order (the lake's are), copies else."""
    if key not in df.columns or not len(df):
        return {}
    column = df[key]
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        names = column.cat.categories
    else:
        cat = column.astype("string").astype("category")
        codes, names = cat.cat.codes.to_numpy(), cat.cat.categories
    runs = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate([[0], runs])
    stops = np.concatenate([runs, [len(codes)]])
    if len(set(codes[starts].tolist())) == len(starts) and (codes >= 0).all():  # each key in one run
        return {str(names[codes[a]]): df.iloc[a:b] for a, b in zip(starts, stops, strict=True)}
    keys = column.astype("string")
    return {str(k): sub for k, sub in df.groupby(keys, observed=True, sort=True)}


def _table_bytes(table: pa.Table) -> int:
    """The memory of an Arrow table (its buffers; a slice counts its parents' whole)."""
    return int(table.get_total_buffer_size()) + 512


def _frame_bytes(value: Any) -> int:
    """The memory of a frame (or of the frames of a split), counted once per buffer-holding column."""
    if isinstance(value, dict):
        frames = list(value.values())
        if not frames:
            return 256
        base = frames[0]
        # views of one frame: count the rows of every part at the first part's bytes per row
        rows = sum(len(f) for f in frames)
        per_row = _frame_bytes(base) / max(len(base), 1)
        return int(per_row * rows) + 512 * len(frames)
    return int(value.memory_usage(index=True, deep=True).sum()) + 512


def _dict_bytes(d: dict[str, str]) -> int:
    """An estimate of a small text-to-text dict's memory."""
    return 256 + 200 * len(d)


def _within(value: str, bounds: tuple[object, object]) -> bool:
    """Whether a min/max pair of a file's statistics may hold ``value`` (a missing bound holds anything)."""
    lo, hi = bounds
    return (lo is None or str(lo) <= value) and (hi is None or value <= str(hi))
