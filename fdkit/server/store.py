"""The server's view of a lake: each dataset read once (lazily, thread-safe) and indexed by its key column.

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

import pandas as pd

from ..lake import LAKE_SCHEMAS, generation_stamp, read_dataset

__all__ = ["Store", "LAKE_SCHEMAS"]


class Store:
    """Read-once access to the datasets of a lake.

    Args:
        root: the lake directory.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._frames: dict[str, pd.DataFrame] = {}
        self._groups: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
        self._lock = threading.RLock()
        self._known: set[str] | None = None
        self._stamp = generation_stamp(self.root)

    def changed(self) -> bool:
        """Whether a writer (the webhook receiver) committed to the lake since it was read; if so, forget it.

        A stat and a small read per call: ``fdkit serve`` sees landed events on the next request, no restart.
        """
        stamp = generation_stamp(self.root)
        if stamp == self._stamp:
            return False
        with self._lock:
            self._frames.clear()
            self._groups.clear()
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
                self._frames[name] = read_dataset(self.root, name)
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
                    keys = df[key].astype("string")
                    self._groups[(name, key)] = {str(k): sub for k, sub in df.groupby(keys, observed=True, sort=True)}
                else:
                    self._groups[(name, key)] = {}
            return self._groups[(name, key)]

    def rows(self, name: str, value: str, key: str = "ticker") -> pd.DataFrame:
        """Rows of ``name`` whose ``key`` equals ``value`` (an empty typed frame when none)."""
        sub = self.groups(name, key).get(value)
        if sub is None:
            return self.frame(name).iloc[0:0]
        return sub

    def keys_of(self, name: str, key: str = "ticker") -> list[str]:
        """Sorted distinct values of ``key`` in dataset ``name``."""
        return sorted(self.groups(name, key))

    def known_tickers(self) -> set[str]:
        """Every ticker any dataset mentions (a ticker outside this set is unknown: 404)."""
        if self._known is None:
            with self._lock:
                known: set[str] = set()
                for p in self.root.iterdir() if self.root.exists() else []:
                    if p.is_dir():
                        df = self.frame(p.name)
                        if "ticker" in df.columns:
                            known.update(str(t) for t in df["ticker"].dropna().unique())
                self._known = known
        return self._known

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
