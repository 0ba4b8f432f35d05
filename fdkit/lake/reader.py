"""The one way into a lake for its readers.

The server's store, ``fdkit lake validate``, the event generator and the webhook receiver all read through
:class:`LakeReader`.

It answers what a reader needs (which datasets exist, a dataset typed as the schema declares, some of its columns
or rows, the distinct values of a key, whether a writer committed since) and hides how the lake is laid out on
disk. A new table format is a change of this class, not of its callers. A read with ``where`` opens only the
files and row groups that may hold its rows (partition folders by name, flat files' row groups by their min/max
statistics); a caller that keeps a :meth:`LakeReader.files` listing (the server's store) skips walking the folders.
A lake in an object store (``s3://bucket/lake``, :mod:`fdkit.lake.location`) is read the same way, through
pyarrow's S3 filesystem: the same pruning by partition folder and row-group statistics, one request per file read.

Example:
    >>> from fdkit.lake import default_data_dir
    >>> lake = LakeReader.open(default_data_dir())
    >>> "prices" in lake.names()
    True
    >>> lake.read("prices", where={"ticker": "AAPL"}, columns=["ticker", "close"])["ticker"].unique().tolist()
    ['AAPL']
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fdkit.lake import latest
from fdkit.lake.extensions import DataPackage, data_packages
from fdkit.lake.io import (
    Between,
    DatasetFiles,
    any_of,
    bundled_data_dir,
    generation_stamp,
    list_datasets,
    read_dataset,
    read_table,
    require_lake,
)
from fdkit.lake.location import LakeRoot, lake_root, unreachable

#: seconds a lake in an object store is trusted not to have changed (its change marker costs a request to ask)
REMOTE_STAMP_SECONDS = 2.0
#: seconds a request waits for an object store's change marker; a slower store is asked on in the background
STAMP_WAIT = 0.25
#: seconds a change check may be outstanding before the store counts as not answering (:attr:`LakeReader.stalled`)
STALLED_AFTER = 1.0

__all__ = ["LakeReader", "rows_where", "unreachable"]


class LakeReader:
    """Read access to one lake.

    Args:
        root: the lake directory, or its ``s3://`` URL (not checked: :meth:`open` checks).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root: LakeRoot = lake_root(root)
        # the bundled lake also serves the datasets of installed data packages (fdkit-history); a lake of the
        # user's (FDKIT_DATA, a mirror, a landing, an object store) is served as it is
        bundled = isinstance(self.root, Path) and self.root.resolve() == bundled_data_dir().resolve()
        #: whether this is the bundled lake (which installed data packages extend)
        self.bundled = bundled
        self.packages: tuple[DataPackage, ...] = data_packages() if bundled else ()
        self.extensions = tuple(p.root for p in self.packages)
        self._remote_stamp: tuple[float, str | None] | None = None
        self._stamp_lock = threading.Lock()
        self._asking: threading.Thread | None = None
        self._asked_at: float | None = None
        #: why the lake's change marker may be old (its object store did not answer the last check), else ``None``
        self.stalled: str | None = None

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> LakeReader:
        """A reader of a lake that exists and holds datasets.

        Args:
            root: the lake directory, or its ``s3://`` URL.

        Returns:
            The reader.

        Raises:
            LakeError: the folder is missing or holds no dataset, or the store refuses the listing (no such bucket,
                credentials refused): the message names the path or URL.

        Example:
            >>> import tempfile
            >>> try:
            ...     LakeReader.open(tempfile.mkdtemp())
            ... except Exception as exc:
            ...     print(type(exc).__name__)
            LakeError
        """
        require_lake(root)
        return cls(root)

    def __repr__(self) -> str:
        return f"LakeReader({str(self.root)!r})"

    def names(self) -> list[str]:
        """The datasets the lake holds, sorted (folders named ``_...`` or ``.`` are a writer's own, not datasets).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> "income_statements" in LakeReader(default_data_dir()).names()
            True
        """
        own = list_datasets(self.root)
        extra = [n for root in self.extensions for n in list_datasets(root)]
        return sorted(n for n in {*own, *extra} if not n.startswith(("_", ".")))

    def own_names(self) -> list[str]:
        """The datasets of the lake's own folder, sorted (not a data package's; no writer's ``_...`` folder).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> "price_history" in LakeReader(default_data_dir()).own_names()
            False
        """
        return [n for n in list_datasets(self.root) if not n.startswith(("_", "."))]

    def home(self, name: str) -> LakeRoot:
        """The lake folder holding dataset ``name``: this lake's, else the first data package's that has it.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> LakeReader(default_data_dir()).home("prices") == default_data_dir()
            True
        """
        if name in list_datasets(self.root):
            return self.root
        return next((root for root in self.extensions if (root / name).is_dir()), self.root)

    def from_packages(self) -> dict[str, DataPackage]:
        """The datasets this lake serves from installed data packages (``fdkit-history``), each with its package.

        Empty for a lake of the user's (``FDKIT_DATA``, a mirror), which is served as it is; a dataset of the
        bundled lake's own is its own, whichever package also has one of its name.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> from fdkit.lake.extensions import data_packages
            >>> served = LakeReader(default_data_dir()).from_packages()
            >>> all(p in data_packages() for p in served.values()) and "prices" not in served
            True
        """
        own = set(list_datasets(self.root))
        served: dict[str, DataPackage] = {}
        for package in self.packages:
            for name in list_datasets(package.root):
                if name not in own and not name.startswith(("_", ".")):
                    served.setdefault(name, package)
        return dict(sorted(served.items()))

    def files(self, name: str) -> DatasetFiles:
        """The files of dataset ``name`` grouped by layout and indexed by partition value (no file is opened).

        A dataset of the bundled lake that an installed data package also holds (``fdkit-history``'s ``prices``:
        the S&P 500 members' bars of 2016-2026) is one dataset of both folders' Parquet files: the package adds
        rows, never replaces one (its build leaves out every ticker and day the bundled lake has).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> LakeReader(default_data_dir()).files("prices").nbytes > 0
            True
        """
        home = self.home(name)
        own = DatasetFiles.of(home, name)
        if home != self.root or own.schema is not None or own.filesystem is not None:
            return own  # a package's own dataset, a Delta table or an object store: served as it is
        added = [DatasetFiles.of(root, name) for root in self.extensions if (root / name).is_dir()]
        return own.joined([a for a in added if a.schema is None and set(a.groups) <= {()}])

    def read(
        self,
        name: str,
        *,
        schema: str | None = None,
        columns: list[str] | None = None,
        where: Mapping[str, object] | None = None,
        files: DatasetFiles | None = None,
        between: Between | None = None,
    ) -> pd.DataFrame:
        """Dataset ``name`` with the declared dtypes (an empty frame with its schema when it does not exist).

        Args:
            name: dataset name.
            schema: record schema (default: the dataset's own).
            columns: only these columns.
            where: only rows whose columns equal these values (compared as text; a list, tuple or set of values:
                any of them). Text columns are filtered while the files are scanned: only the ``ticker=X/``
                folders and the row groups whose statistics may hold a value are read.
            files: a listing of the dataset from :meth:`files` (default: listed now).
            between: only rows of a date range (:func:`fdkit.lake.io.read_dataset`).

        Returns:
            The typed frame: the rows a whole read filtered afterwards would give, in the same order and dtypes (a
            categorical column may know fewer categories: those of the rows read).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> df = LakeReader(default_data_dir()).read("interest_rates", where={"bank": "ECB"})
            >>> df["bank"].unique().tolist()
            ['ECB']
        """
        wanted = None if columns is None else list(dict.fromkeys([*columns, *(where or {})]))
        files = self._with_packages(name, files)
        df = rows_where(
            read_dataset(
                self.home(name), name, schema=schema, columns=wanted, where=where, files=files, between=between
            ),
            where,
        )
        if columns is not None:
            df = df[columns]
        return df.reset_index(drop=True)

    def _with_packages(self, name: str, files: DatasetFiles | None) -> DatasetFiles | None:
        """The listing to read ``name`` from: a data package's rows of a bundled dataset are read with it."""
        if files is None and self.extensions:
            listing = self.files(name)
            return listing if any(not f.is_relative_to(listing.base) for f in listing.files) else None
        return files

    def read_table(
        self,
        name: str,
        *,
        where: Mapping[str, object] | None = None,
        files: DatasetFiles | None = None,
        between: Between | None = None,
    ) -> pa.Table:
        """Dataset ``name``'s rows as an Arrow table, as its files hold them (:func:`fdkit.lake.io.read_table`).

        The rows :meth:`read` gives before their dtypes are made (``where`` filtered here too, compared as text),
        in the same order; a data package's rows of a bundled dataset are read with it.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> t = LakeReader(default_data_dir()).read_table("interest_rates", where={"bank": "ECB"})
            >>> sorted(set(t.column("bank").to_pylist()))
            ['ECB']
        """
        files = self._with_packages(name, files)
        table = read_table(self.home(name), name, where=where, files=files, between=between)
        for column, value in (where or {}).items():
            if column in table.column_names and table.num_rows:
                values = pa.array(sorted({str(v) for v in any_of(value)}), pa.string())
                text = table.column(column)  # (a dictionary's values matched, not each row's text)
                if not (pa.types.is_string(text.type) or pa.types.is_dictionary(text.type)):
                    text = text.cast(pa.string())
                keep = pc.fill_null(pc.is_in(text, value_set=values), False)
                if not pc.all(keep).as_py():  # (the scan's filter usually kept only these: no copy then)
                    table = table.filter(keep)
        return table

    def distinct(self, name: str, column: str = "ticker", files: DatasetFiles | None = None) -> set[str]:
        """The distinct values of ``column`` in dataset ``name`` (empty when the dataset has no such column).

        Only that column of each file is read, as dictionary indices in batches of a million rows (or the
        ``column=`` folder names of a partitioned dataset, or a Delta file's min/max when they are equal), never the
        whole dataset.

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> sorted(LakeReader(default_data_dir()).distinct("interest_rates", "bank"))
            ['ECB', 'FED']
        """
        listing = files if files is not None else self.files(name)
        out: set[str] = set()
        for part, group in listing.groups.items():
            if column in part:
                out.update(listing.by_value.get((part, column), {}))
                continue
            for f in group:
                bounds = listing.stats.get(f, {}).get(column)
                if bounds is not None and bounds[0] == bounds[1]:  # a Delta file of one value: its log says which
                    out.add(str(bounds[0]))
                    continue
                try:
                    pf = pq.ParquetFile(str(f), filesystem=listing.filesystem, read_dictionary=[column])
                except KeyError:  # pyarrow's answer to a read_dictionary column the file does not have
                    return set()
                for batch in pf.iter_batches(batch_size=2**20, columns=[column]):  # bounded memory
                    out.update(_unique(batch.column(0)))
        return out

    def last_traded(
        self, name: str, files: DatasetFiles | None = None, projection: latest.LastTraded | None = None
    ) -> latest.LastTraded:
        """Each ticker's last as-traded bar, from the projection kept beside the table (:mod:`fdkit.lake.latest`).

        Args:
            name: a dataset of bars (``prices``, ``crypto_prices``).
            files: its listing (default: listed now).
            projection: the projection a caller keeps from an earlier version (default: the one on disk); it is
                brought up to date in place, reading only the files added since and the tickers they change.

        Returns:
            The projection, up to date (``.frame()``: ``ticker, time, close, previous_close``).

        Example:
            >>> from fdkit.lake import default_data_dir
            >>> "AAPL" in set(LakeReader(default_data_dir()).last_traded("prices").frame()["ticker"])
            True
        """
        home = self.home(name)
        listing = files if files is not None else self.files(name)
        kept = projection if projection is not None else latest.stored(home, name)
        latest.update_from(kept, home, name, listing)
        return kept

    @staticmethod
    def reduce_last_traded(bars: pd.DataFrame) -> pd.DataFrame:
        """:func:`fdkit.lake.latest.last_traded` of bars already read (a dataset small enough to be kept whole).

        Example:
            >>> bars = pd.DataFrame({"ticker": ["A"], "time": pd.to_datetime(["2024-01-02"]), "close": [1.0]})
            >>> LakeReader.reduce_last_traded(bars)["close"].tolist()
            [1.0]
        """
        return latest.last_traded(bars)

    def stamp(self) -> str | None:
        """The lake's change marker: it differs after every writer's commit (a stat, cheap enough per request).

        A lake in an object store is asked at most every :data:`REMOTE_STAMP_SECONDS`, in a thread of its own: the
        caller waits at most :data:`STAMP_WAIT` seconds for the answer and otherwise goes on with the marker last
        known (a stalled store never holds up a request; :attr:`stalled` says why the marker may be old).

        Example:
            >>> import tempfile
            >>> LakeReader(tempfile.mkdtemp()).stamp() is None
            True
        """
        if isinstance(self.root, Path):
            return generation_stamp(self.root)
        with self._stamp_lock:
            known = self._remote_stamp
            due = known is None or time.monotonic() - known[0] >= REMOTE_STAMP_SECONDS
            asking = None
            if due and (self._asking is None or not self._asking.is_alive()):  # one question in flight at most
                asking = threading.Thread(target=self._ask_stamp, name="fdkit-lake-stamp", daemon=True)
                self._asking, self._asked_at = asking, time.monotonic()
                asking.start()
        if asking is not None:  # the caller that asked waits a little; the others go on with the marker known
            asking.join(STAMP_WAIT)
        with self._stamp_lock:
            if self._asking is not None and self._asking.is_alive() and self._asked_at is not None:
                waited = time.monotonic() - self._asked_at
                if waited >= STALLED_AFTER and self.stalled is None:
                    self.stalled = (
                        f"the lake's object store at {self.root} did not answer a change check for {waited:.1f} s"
                    )
            return None if self._remote_stamp is None else self._remote_stamp[1]

    def _ask_stamp(self) -> None:
        """Ask the store for the change marker (in the stamp's thread); a failure keeps the last one known."""
        try:
            got = generation_stamp(self.root)
        except Exception as exc:  # noqa: BLE001 - the store's failure is said in `stalled`, never raised here
            with self._stamp_lock:
                self.stalled = (
                    f"the lake's object store at {self.root} did not answer a change check "
                    f"({' '.join(str(exc).split())[:200]})"
                )
                # asked again at the next interval, not at once (a refused store is not asked in a loop)
                when = time.monotonic()
                self._remote_stamp = (when, None if self._remote_stamp is None else self._remote_stamp[1])
            return
        with self._stamp_lock:
            self._remote_stamp = (time.monotonic(), got)
            self.stalled = None


def _unique(values: pa.Array) -> list[str]:
    """The distinct non-null values of a column chunk as text (of a dictionary column: its used entries only)."""
    if pa.types.is_dictionary(values.type):
        used = pc.unique(values.indices).drop_null()
        values = values.dictionary.take(used)
    return [str(v) for v in pc.unique(values).to_pylist() if v is not None]


def rows_where(df: pd.DataFrame, where: Mapping[str, object] | None) -> pd.DataFrame:
    """The rows of ``df`` whose columns equal the values of ``where``, compared as text (missing never matches).

    Args:
        df: a typed frame.
        where: column -> value (``None``: every row).

    Returns:
        The matching rows, in order, with their index.

    Example:
        >>> rows_where(pd.DataFrame({"bank": ["ECB", "FED", None]}), {"bank": "ECB"})["bank"].tolist()
        ['ECB']
        >>> rows_where(pd.DataFrame({"bank": ["ECB", "FED", None]}), {"bank": ("FED", "ECB")})["bank"].tolist()
        ['ECB', 'FED']
    """
    for column, value in (where or {}).items():
        values = any_of(value)
        col = df[column]
        if isinstance(col.dtype, pd.CategoricalDtype):  # (a category's text compared once, not a row's)
            wanted = {str(v) for v in values}
            named = np.fromiter((str(c) in wanted for c in col.cat.categories), bool, len(col.cat.categories))
            codes = col.cat.codes.to_numpy()
            df = df[(codes >= 0) & named[np.maximum(codes, 0)]] if named.any() else df.iloc[0:0]
            continue
        text = col.astype("string")
        found = text == values[0] if len(values) == 1 else text.isin(values)
        df = df[found.fillna(False).to_numpy(dtype=bool)]
    return df
