"""The latest as-traded bar of every ticker, kept beside a prices table so that a market-wide snapshot reads no bars.

A cross-section of the whole market (``/prices/snapshot/market``: each ticker's last as-traded close with the close
of the bar before it) would otherwise read every bar of the dataset: 56M rows at 10,000 tickers. This module keeps
that cross-section as a *projection*: one row per ticker (:func:`last_traded` of its bars), together with the data
files each ticker's rows are in. Data files of a Delta table never change once written, so a ticker's row stays
right for as long as its files are live; when a commit adds or removes files, only the tickers of the added files
and of the removed ones are made again (:meth:`LastTraded.update`), from their files alone.

The writers keep it on disk (``<lake>/_projections/<dataset>.last_traded.parquet``): every Delta commit of
:func:`fdkit.lake.io.write_dataset` (``fdkit mirror``, the webhook receiver, ``benchmarks/synth_lake.py``) and
``fdkit lake optimize`` call :func:`refresh`. A reader (``fdkit serve``) loads it and brings it up to date with the
current version the same way, so a missing, old or foreign file is slower, never wrong: it only says which files
each row was made from.

Example:
    >>> import tempfile
    >>> from fdkit.lake.io import write_dataset
    >>> root = tempfile.mkdtemp()
    >>> bars = pd.DataFrame({"ticker": ["A", "A", "B"], "time": pd.to_datetime(["2024-01-02", "2024-01-03",
    ...                      "2024-01-03"], utc=True), "close": [1.0, 2.0, 5.0]})
    >>> _ = write_dataset(root, "prices", bars)
    >>> load(root, "prices").frame()[["ticker", "close", "previous_close"]].to_dict("list")
    {'ticker': ['A', 'B'], 'close': [2.0, 5.0], 'previous_close': [1.0, nan]}
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fdkit.frames.basis import as_traded
from fdkit.lake.io import COMMIT_HOOKS, DatasetFiles, atomic_write_bytes, parquet_bytes, read_dataset
from fdkit.lake.location import is_url

__all__ = [
    "LastTraded",
    "last_traded",
    "refresh",
    "load",
    "stored",
    "update_from",
    "reader_of",
    "path_of",
    "PROJECTED",
    "PROJECTIONS_DIR",
    "COLUMNS",
]

log = logging.getLogger("fdkit.lake")

#: datasets whose latest-bar projection the writers keep
PROJECTED = frozenset({"prices", "crypto_prices"})
#: the folder of a lake that holds projections (not a dataset: readers skip folders named ``_...``)
PROJECTIONS_DIR = "_projections"
#: the columns of a bar the projection is made from
READ_COLUMNS = ["ticker", "time", "close", "basis"]
#: the columns of the projection
COLUMNS = ["ticker", "time", "close", "previous_close"]
#: a file holding at most this many of the tickers to make again is read a ticker at a time (its row groups chosen
#: by statistics), else whole
PER_TICKER_READS = 32

#: reads the bars of a dataset's files: ``(files, ticker or None) -> typed frame of READ_COLUMNS``
Reader = Callable[[list[PurePath], str | None], pd.DataFrame]


def last_traded(bars: pd.DataFrame) -> pd.DataFrame:
    """Each ticker's last as-traded bar with the close of the bar right before it (``previous_close``).

    The bars of any tickers, in any order (sorted here by ticker, then time, stable); a ticker without an as-traded
    bar has no row. The change on the day is against the session just before the last as-traded one, missing where
    that session has no as-traded close.

    Args:
        bars: typed bars with ``ticker``, ``time``, ``close`` (and ``basis``, when the dataset has one).

    Returns:
        ``ticker, time, close, previous_close``, one row per ticker, in ticker order.

    Example:
        >>> bars = pd.DataFrame({"ticker": ["A", "A"], "time": pd.to_datetime(["2024-01-02", "2024-01-03"]),
        ...                      "close": [1.0, 2.0]})
        >>> last_traded(bars)[["close", "previous_close"]].to_numpy().tolist()
        [[2.0, 1.0]]
    """
    bars = bars.sort_values(["ticker", "time"], kind="stable")
    key = bars["ticker"].astype(str)
    prev = bars["close"].groupby(key, sort=False).shift()
    out = bars.assign(previous_close=prev)
    if "basis" in bars.columns:
        out = out[as_traded(out["basis"])]
    return out[COLUMNS].groupby("ticker", observed=True).tail(1)


@dataclasses.dataclass
class LastTraded:
    """The projection of one dataset: each ticker's :func:`last_traded` row and the files its rows are in.

    Attributes:
        seen: the data files (relative to the dataset folder) the projection accounts for.
        holds: ticker -> the files holding its rows.
        rows: ticker -> its row as ``(time in ns since the epoch, close, previous close)``, absent for a ticker
            without an as-traded bar (a tuple, not a frame: 10,000 tickers hold a few MB).
        time_dtype: the dtype of the dataset's ``time`` column (the rows are typed as a read of it would be).
    """

    seen: frozenset[str] = frozenset()
    holds: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    rows: dict[str, tuple[int, float, float]] = dataclasses.field(default_factory=dict)
    time_dtype: object = None
    _frame: pd.DataFrame | None = dataclasses.field(default=None, repr=False)

    def update(self, files: list[str], ranges: dict[str, tuple[object, object]] | None, read: Reader) -> int:
        """Bring the projection to a version made of ``files``; returns how many tickers were made again.

        Args:
            files: the live data files, relative to the dataset folder, in the order a reader scans them.
            ranges: file -> ``(min, max)`` of its ``ticker`` column where known (a Delta log's statistics): which
                files may hold a ticker, so that a ticker found in one file is made as soon as that file is read.
            read: reads the bars of some files (of one ticker, or all).

        Example:
            >>> p = LastTraded()
            >>> bars = pd.DataFrame({"ticker": ["A"], "time": pd.to_datetime(["2024-01-02"]), "close": [1.0]})
            >>> p.update(["f1"], None, lambda files, ticker: bars), p.holds
            (1, {'A': ('f1',)})
        """
        live = set(files)
        order = {f: i for i, f in enumerate(files)}
        removed, added = self.seen - live, live - self.seen
        stale = {t for t, held in self.holds.items() if removed.intersection(held)}
        if not added and not stale:
            if removed:
                self.seen = frozenset(live)
            return 0
        # which files may hold a ticker: its old live files and the added files whose range holds it
        add_ranges = [(f, (ranges or {}).get(f)) for f in sorted(added, key=order.__getitem__)]
        pending: dict[str, list[tuple[int, pd.DataFrame]]] = {}
        waiting: dict[str, set[str]] = {}
        new_holds: dict[str, list[str]] = {}
        made = 0

        def consume(f: str, parts: dict[str, pd.DataFrame]) -> int:
            ready: list[pd.DataFrame] = []
            for t, g in parts.items():
                new_holds.setdefault(t, []).append(f)
                if t not in waiting:  # first sight: every file that may hold it
                    may = {h for h in self.holds.get(t, ()) if h in live}
                    may |= {a for a, r in add_ranges if r is None or _within(t, r)}
                    waiting[t] = may
                waiting[t].discard(f)
                pending.setdefault(t, []).append((order[f], g))
                if not waiting[t]:
                    ready.append(_joined(pending.pop(t)))
                    del waiting[t]
            if not ready:
                return 0
            return self._set(last_traded(pd.concat(ready, ignore_index=True)), {t for g in ready for t in _tickers(g)})

        for f in sorted(added, key=order.__getitem__):  # every ticker of an added file is made again
            made += consume(f, _by_ticker(read([PurePath(f)], None)))
        # then the old live files of those tickers and of the tickers a removed file held, for those tickers only
        old: dict[str, set[str]] = {}
        for t in stale | set(waiting):
            for f in self.holds.get(t, ()):
                if f in live and f not in added:
                    old.setdefault(f, set()).add(t)
        for f in sorted(old, key=order.__getitem__):
            wanted = old[f]
            if len(wanted) <= PER_TICKER_READS:
                parts = {}
                for t in sorted(wanted):
                    parts.update(_by_ticker(read([PurePath(f)], t)))
            else:
                parts = _by_ticker(read([PurePath(f)], None))
            made += consume(f, {t: g for t, g in parts.items() if t in wanted})
        if pending:  # tickers whose last candidate file held none of their rows
            rest = [_joined(v) for v in pending.values()]
            made += self._set(last_traded(pd.concat(rest, ignore_index=True)), set(pending))
        touched = stale | set(new_holds)
        for t in touched:
            if t in new_holds:
                self.holds[t] = tuple(sorted(new_holds[t], key=order.__getitem__))
            else:  # its files were removed and no live file holds it any more
                self.holds.pop(t, None)
                self.rows.pop(t, None)
        self.seen = frozenset(live)
        self._frame = None
        return made

    def _set(self, made: pd.DataFrame, tickers: set[str]) -> int:
        """Keep the rows :func:`last_traded` made for ``tickers`` (a ticker without one loses its row)."""
        when = made["time"]
        if self.time_dtype is None or len(made):
            self.time_dtype = when.dtype
        if isinstance(when.dtype, pd.DatetimeTZDtype):
            when = when.dt.tz_convert("UTC").dt.tz_localize(None)
        stamps = when.to_numpy(dtype="datetime64[ns]").view("int64").tolist()
        got = {
            str(t): (int(w), float(c), float(p))
            for t, w, c, p in zip(
                made["ticker"].astype(str),
                stamps,
                made["close"].to_numpy(dtype="float64"),
                made["previous_close"].to_numpy(dtype="float64"),
                strict=True,
            )
        }
        for t in tickers:
            if t in got:
                self.rows[t] = got[t]
            else:
                self.rows.pop(t, None)
        self._frame = None
        return len(tickers)

    def frame(self) -> pd.DataFrame:
        """Every ticker's row, in ticker order (``ticker, time, close, previous_close``), typed as the dataset."""
        if self._frame is None:
            tickers = sorted(self.rows)
            values = [self.rows[t] for t in tickers]
            stamps = pd.Series(np.array([v[0] for v in values], dtype="int64").view("datetime64[ns]"))
            kind = self.time_dtype
            if isinstance(kind, pd.DatetimeTZDtype):
                stamps = stamps.dt.tz_localize("UTC").dt.tz_convert(kind.tz)
            if kind is not None:
                stamps = stamps.astype(kind)  # type: ignore[call-overload]
            self._frame = pd.DataFrame(
                {
                    "ticker": pd.Series(tickers, dtype=object),
                    "time": stamps,
                    "close": np.array([v[1] for v in values], dtype="float64"),
                    "previous_close": np.array([v[2] for v in values], dtype="float64"),
                }
            )
        return self._frame

    def to_table(self) -> pa.Table:
        """The projection as a table (what :func:`refresh` writes): each ticker's files and its row."""
        tickers = sorted(self.holds)
        none = (0, float("nan"), float("nan"))
        values = [self.rows.get(t, none) for t in tickers]
        table = pa.table(
            {
                "ticker": pa.array(tickers, pa.string()),
                "files": pa.array(["\n".join(self.holds[t]) for t in tickers], pa.string()),
                "has_row": pa.array([t in self.rows for t in tickers], pa.bool_()),
                "time_ns": pa.array([v[0] for v in values], pa.int64()),
                "close": pa.array([v[1] for v in values], pa.float64()),
                "previous_close": pa.array([v[2] for v in values], pa.float64()),
            }
        )
        meta = {
            b"fdkit.seen": "\n".join(sorted(self.seen)).encode(),
            b"fdkit.time_dtype": str(self.time_dtype).encode(),
        }
        return table.replace_schema_metadata(meta)

    @classmethod
    def from_table(cls, table: pa.Table) -> LastTraded:
        """The projection :meth:`to_table` wrote."""
        meta = table.schema.metadata or {}
        seen_text = meta.get(b"fdkit.seen", b"").decode()
        kind_text = meta.get(b"fdkit.time_dtype", b"None").decode()
        kind = None if kind_text == "None" else pd.api.types.pandas_dtype(kind_text)
        cols = {c: table.column(c).to_pylist() for c in table.column_names}
        holds = {t: tuple(f.split("\n")) if f else () for t, f in zip(cols["ticker"], cols["files"], strict=True)}
        rows = {
            t: (int(w), float(c), float(p))
            for t, has, w, c, p in zip(
                cols["ticker"], cols["has_row"], cols["time_ns"], cols["close"], cols["previous_close"], strict=True
            )
            if has
        }
        return cls(frozenset(seen_text.split("\n")) if seen_text else frozenset(), holds, rows, kind)


def _by_ticker(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``df`` by ticker (views where the rows are in ticker runs, as the lake's files are written)."""
    if not len(df):
        return {}
    column = df["ticker"]
    cat = column if isinstance(column.dtype, pd.CategoricalDtype) else column.astype("string").astype("category")
    codes, names = cat.cat.codes.to_numpy(), cat.cat.categories
    runs = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate([[0], runs])
    stops = np.concatenate([runs, [len(codes)]])
    if len(set(codes[starts].tolist())) == len(starts) and (codes >= 0).all():
        return {str(names[codes[a]]): df.iloc[a:b] for a, b in zip(starts, stops, strict=True)}
    keys = column.astype("string")
    return {str(k): g for k, g in df.groupby(keys, observed=True, sort=False)}


def _joined(parts: list[tuple[int, pd.DataFrame]]) -> pd.DataFrame:
    """One ticker's rows from several files, in the order a reader scans the files."""
    parts = sorted(parts, key=lambda p: p[0])
    return parts[0][1] if len(parts) == 1 else pd.concat([g for _, g in parts])


def _tickers(df: pd.DataFrame) -> Iterable[str]:
    return {str(t) for t in df["ticker"].astype(str).unique()}


def _within(value: str, bounds: tuple[object, object]) -> bool:
    lo, hi = bounds
    return (lo is None or str(lo) <= value) and (hi is None or value <= str(hi))


# -- on disk ----------------------------------------------------------------------------------------------------
def path_of(root: str | os.PathLike[str], name: str) -> Path:
    """Where the projection of dataset ``name`` of a local lake is kept.

    Example:
        >>> path_of("/lake", "prices").as_posix()
        '/lake/_projections/prices.last_traded.parquet'
    """
    return Path(root) / PROJECTIONS_DIR / f"{name}.last_traded.parquet"


def reader_of(root: str | os.PathLike[str], name: str, listing: DatasetFiles) -> Reader:
    """A :data:`Reader` of dataset ``name`` through :func:`fdkit.lake.io.read_dataset`, over ``listing``'s files.

    Example:
        >>> from fdkit.lake.io import DatasetFiles, bundled_data_dir
        >>> listing = DatasetFiles.of(bundled_data_dir(), "prices")
        >>> read = reader_of(bundled_data_dir(), "prices", listing)
        >>> read(listing.files, "AAPL")["ticker"].astype(str).unique().tolist()
        ['AAPL']
    """

    def read(files: list[PurePath], ticker: str | None) -> pd.DataFrame:
        # a file of the listing as it is (an object store's keys are relative: joining them again named no file, so
        # the projection of a lake in a bucket was empty), else a path below the dataset's folder
        known = set(listing.files)
        paths = [
            PurePath(f)
            if PurePath(f) in known or PurePath(f).is_absolute()
            else listing.base.joinpath(*PurePath(f).parts)
            for f in files
        ]
        only = listing.only(paths)
        where = None if ticker is None else {"ticker": ticker}
        df = read_dataset(root, name, columns=READ_COLUMNS, where=where, files=only)
        if ticker is not None:
            df = df[(df["ticker"].astype("string") == ticker).fillna(False).to_numpy(dtype=bool)]
        return df[[c for c in READ_COLUMNS if c in df.columns]]

    return read


def update_from(projection: LastTraded, root: str | os.PathLike[str], name: str, listing: DatasetFiles) -> int:
    """Bring ``projection`` up to the version ``listing`` (a :class:`fdkit.lake.io.DatasetFiles`) lists."""
    # a data package's files of the dataset (fdkit-history's prices) are outside the folder: named by full path
    rel = {f: (f.relative_to(listing.base) if f.is_relative_to(listing.base) else f).as_posix() for f in listing.files}
    files = [rel[f] for f in listing.files]
    ranges = {rel[f]: s["ticker"] for f, s in listing.stats.items() if "ticker" in s}
    if not ranges and listing.by_value:  # ticker=X/ folders: each file holds one ticker
        for (_, column), values in listing.by_value.items():
            if column == "ticker":
                for value, held in values.items():
                    for f in held:
                        ranges[rel[f]] = (value, value)
    base_read = reader_of(root, name, listing)

    def read(paths: list[PurePath], ticker: str | None) -> pd.DataFrame:
        return base_read([listing.base.joinpath(*p.parts) for p in paths], ticker)

    return projection.update(files, ranges or None, read)


def load(root: str | os.PathLike[str], name: str, listing: DatasetFiles | None = None) -> LastTraded:
    """The projection of dataset ``name``, up to date: the kept file brought to the current version (or made).

    Args:
        root: lake root.
        name: dataset name.
        listing: the dataset's :class:`fdkit.lake.io.DatasetFiles` (default: listed now).

    Returns:
        The projection (not written back: :func:`refresh` does).
    """
    listing = listing if listing is not None else DatasetFiles.of(root, name)
    projection = stored(root, name)
    update_from(projection, root, name, listing)
    return projection


def stored(root: str | os.PathLike[str], name: str) -> LastTraded:
    """The kept projection as it is on disk (empty when there is none, it cannot be read, or the lake is remote).

    Example:
        >>> import tempfile
        >>> stored(tempfile.mkdtemp(), "prices").holds
        {}
    """
    if is_url(root):
        return LastTraded()
    path = path_of(root, name)
    if not path.exists():
        return LastTraded()
    try:
        return LastTraded.from_table(pq.read_table(path))
    except (OSError, KeyError, ValueError, pa.ArrowException) as exc:
        log.warning("%s: the latest-bar projection %s is unreadable (%s); it is made again", name, path, exc)
        return LastTraded()


def refresh(root: str | os.PathLike[str], name: str) -> int:
    """Bring the kept projection of dataset ``name`` up to date after a commit (the writers call this).

    Returns:
        How many tickers were made again.

    Example:
        >>> import tempfile
        >>> from fdkit.lake.io import write_dataset
        >>> root = tempfile.mkdtemp()
        >>> bars = pd.DataFrame({"ticker": ["A"], "time": pd.to_datetime(["2024-01-02"], utc=True), "close": [1.0]})
        >>> _ = write_dataset(root, "prices", bars)      # refreshes it
        >>> path_of(root, "prices").exists(), refresh(root, "prices")
        (True, 0)
    """
    listing = DatasetFiles.of(root, name)
    projection = stored(root, name)
    made = update_from(projection, root, name, listing)
    path = path_of(root, name)
    if made or not path.exists() or projection.seen != _read_seen(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, parquet_bytes(projection.to_table()))
    return made


def _read_seen(path: Path) -> frozenset[str]:
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException):
        return frozenset()
    text = meta.get(b"fdkit.seen", b"").decode()
    return frozenset(text.split("\n")) if text else frozenset()


def _after_commit(root: str | os.PathLike[str], name: str) -> None:
    if name in PROJECTED:
        refresh(root, name)


COMMIT_HOOKS.append(_after_commit)
