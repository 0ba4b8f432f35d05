"""The server's view of a lake: each dataset read once (lazily, thread-safe) and indexed by its key column.

The only server module that reads the lake, and only through :class:`fdkit.lake.reader.LakeReader`: handlers ask
the store, the store asks the reader.

Example:
    >>> from fdkit.lake import default_data_dir
    >>> store = Store(default_data_dir())
    >>> "AAPL" in store.keys_of("prices")
    True
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fdkit.frames.typed import json_columns
from fdkit.lake.io import default_data_dir
from fdkit.lake.reader import LakeReader

__all__ = ["Store"]


class Store:
    """Read-once access to the datasets of a lake.

    Args:
        root: the lake directory, or a reader of it.
    """

    def __init__(self, root: str | os.PathLike[str] | LakeReader) -> None:
        self.lake = root if isinstance(root, LakeReader) else LakeReader(root)
        self.root = self.lake.root
        self._frames: dict[str, pd.DataFrame] = {}
        self._groups: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
        self._lock = threading.RLock()
        self._known: set[str] | None = None
        self._sorted: dict[tuple[str, str, str], tuple[pd.DataFrame, np.ndarray]] = {}
        self._json: dict[tuple[str, str, str, tuple[str, ...]], dict[str, list[Any]]] = {}
        self._stamp = self.lake.stamp()

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> Store:
        """The store of a lake that exists and holds datasets.

        Raises:
            LakeError: a missing or empty lake (a start-up error naming the path, never a 404 per ticker).
        """
        return cls(LakeReader.open(root))

    @staticmethod
    def default_root() -> Path:
        """The lake served when none is named: ``FDKIT_DATA``, else the bundled reference lake."""
        return default_data_dir()

    def changed(self) -> bool:
        """Whether a writer (the webhook receiver) committed to the lake since it was read; if so, forget it.

        A stat and a small read per call: ``fdkit serve`` sees landed events on the next request, no restart.
        """
        stamp = self.lake.stamp()
        if stamp == self._stamp:
            return False
        with self._lock:
            self._frames.clear()
            self._groups.clear()
            self._sorted.clear()
            self._json.clear()
            self._known = None
            self._stamp = stamp
        return True

    def frame(self, name: str) -> pd.DataFrame:
        """The whole dataset ``name`` (typed; empty with its schema when absent)."""
        got = self._frames.get(name)
        if got is not None:
            return got
        with self._lock:
            if name not in self._frames:
                self._frames[name] = self.lake.read(name)
            return self._frames[name]

    def groups(self, name: str, key: str = "ticker") -> dict[str, pd.DataFrame]:
        """Dataset ``name`` split by the values of ``key``."""
        got = self._groups.get((name, key))
        if got is not None:
            return got
        with self._lock:
            if (name, key) not in self._groups:
                df = self.frame(name)
                if key in df.columns and len(df):
                    self._groups[(name, key)] = _split(df, key)
                else:
                    self._groups[(name, key)] = {}
            return self._groups[(name, key)]

    def rows(self, name: str, value: str, key: str = "ticker") -> pd.DataFrame:
        """Rows of ``name`` whose ``key`` equals ``value`` (an empty typed frame when none)."""
        sub = self.groups(name, key).get(value)
        if sub is None:
            return self.frame(name).iloc[0:0]
        return sub

    def sorted_rows(self, name: str, value: str, by: str = "time") -> tuple[pd.DataFrame, np.ndarray]:
        """Rows of ``name`` for one ticker, sorted by ``by``, with ``by`` as int64 nanoseconds for ``searchsorted``.

        The data path of date-range queries: a range is two binary searches and a view, never a scan.
        """
        key = (name, value, by)
        got = self._sorted.get(key)
        if got is not None:
            return got
        rows = self.rows(name, value)
        if not rows[by].is_monotonic_increasing:  # the lake's bars are written in order: usually a view
            rows = rows.sort_values(by, kind="stable")
        rows = rows.reset_index(drop=True)
        when = rows[by]
        if isinstance(when.dtype, pd.DatetimeTZDtype):
            when = when.dt.tz_convert("UTC").dt.tz_localize(None)
        stamps = when.to_numpy(dtype="datetime64[ns]").view("int64")
        if by == "time":  # bars carry their time in milliseconds too
            rows["time_milliseconds"] = pd.array(stamps // 1_000_000, dtype="Int64")
        with self._lock:
            self._sorted[key] = (rows, stamps)
        return rows, stamps

    def has_sorted(self, name: str, value: str, by: str = "time") -> bool:
        """Whether :meth:`sorted_rows` of this ticker is ready (a range of it is then microseconds of work)."""
        return (name, value, by) in self._sorted

    def sorted_values(self, name: str, value: str, fields: list[str], by: str = "time") -> dict[str, list[Any]]:
        """The JSON-ready values of :meth:`sorted_rows`' fields (made once per ticker: a page is list slices)."""
        key = (name, value, by, tuple(fields))
        got = self._json.get(key)
        if got is None:
            rows, _ = self.sorted_rows(name, value, by)
            got = json_columns(rows, [f for f in fields if f in rows.columns])
            with self._lock:
                self._json[key] = got
        return got

    def keys_of(self, name: str, key: str = "ticker") -> list[str]:
        """Sorted distinct values of ``key`` in dataset ``name``."""
        return sorted(self.groups(name, key))

    def known_tickers(self) -> set[str]:
        """Every ticker any dataset mentions (a ticker outside this set is unknown: 404)."""
        if self._known is None:
            with self._lock:
                known: set[str] = set()
                for name in self.lake.names():
                    known.update(self.lake.distinct(name, "ticker"))
                self._known = known
        return self._known

    def knows(self, ticker: str, dataset: str | None = None) -> bool:
        """Whether any dataset mentions ``ticker``.

        The dataset a request reads is asked first, so the set of every known ticker is only built for a ticker
        that one does not hold.
        """
        if dataset is not None and ticker in self.groups(dataset):
            return True
        return ticker in self.known_tickers()

    def cik_to_ticker(self, cik: str) -> str | None:
        """Ticker of a CIK (leading zeros optional), from company facts then filings."""
        norm = cik.strip().lstrip("0")
        for name in ("company_facts", "filings"):
            df = self.frame(name)
            if "cik" in df.columns and len(df):
                hit = df.loc[df["cik"].astype("string").str.lstrip("0") == norm, "ticker"]
                if len(hit):
                    return str(hit.iloc[0])
        return None


def _split(df: pd.DataFrame, key: str) -> dict[str, pd.DataFrame]:
    """``df`` by the values of ``key``: views of a frame written in key order (the lake's are), copies else."""
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
