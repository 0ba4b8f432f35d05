"""The one way into a lake for its writers (beside :class:`fdkit.lake.reader.LakeReader` for its readers).

``fdkit mirror``, the webhook receiver, :func:`fdkit.lake.io.write_dataset` (the build, benchmarks) and ``fdkit
lake convert|optimize|vacuum`` all write through :class:`LakeWriter`; nothing outside :mod:`fdkit.lake` imports
``deltalake``. Writers that run at the same time on one lake are safe by construction:

* **One writer per dataset at a time.** Every read-decide-commit cycle holds the dataset's lock
  (:mod:`fdkit.lake.locks`: a lock file per dataset, ``flock``, between processes and threads). A writer decides
  on what is committed when it holds the lock, never on an older read.
* **A conversion happens once.** A plain Parquet dataset (the bundled lake's, an older fdkit's ``ticker=``
  partitions or flat files) becomes a Delta table on its first write (:meth:`LakeWriter.ensure_table`); the check
  and the conversion are made under the lock, so a second writer finds the table and uses it (one ``CONVERT`` in the
  log, one ``metaData.id``).
* **Landed events win.** A mirror replaces a ticker's rows with the ones it fetched, except every row whose key a
  webhook event landed (the receiver's ledger, :mod:`fdkit.lake.ledger`): those rows stay, and the mirror's rows of
  the same key are not added (:meth:`LakeWriter.replace_rows`). Why this rule rather than "newest write wins": the
  receiver acknowledged those rows (200) and recorded their event ids, so the sender's redelivery of them is a
  ``duplicate`` and a row the mirror removed would never come back; a mirror's row that is not written comes back
  from the service on the next ``fdkit mirror --force``. An event's rows are the newest the lake knows (pushed when
  filed); the service a mirror reads may lag. The receiver commits an event's rows and its ledger entry under the
  same lock, so a mirror sees both or neither.

Example:
    >>> import tempfile, pandas as pd
    >>> from fdkit.lake.io import read_dataset
    >>> root = tempfile.mkdtemp()
    >>> w = LakeWriter(root)
    >>> df = pd.DataFrame({"ticker": ["A", "B"], "report_period": ["2024-03-30"] * 2, "source_type": ["8-K"] * 2})
    >>> [w.replace_rows("earnings", df[df.ticker == t], value=t) for t in ("A", "B")]
    [1, 1]
    >>> sorted(read_dataset(root, "earnings")["ticker"].astype(str))
    ['A', 'B']
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fdkit.errors import LakeError
from fdkit.lake import delta
from fdkit.lake.io import (
    _table,
    atomic_write_bytes,
    bump_generation,
    conform,
    convert_dataset,
    dataset_schema,
    is_delta,
    keep_projections,
    parquet_bytes,
    safe_segment,
)
from fdkit.lake.ledger import LEDGER_FILE, Ledger, key_text
from fdkit.lake.locks import datasets_lock

__all__ = ["LakeWriter", "LakeWriteError", "CommitConflict"]


class LakeWriteError(LakeError, OSError):
    """A commit that could not be made (the log refused it, the disk is full): nothing of it is live."""


class CommitConflict(LakeWriteError):
    """Another writer (not fdkit's, which holds the lock) committed to the table between the read and the commit."""


class LakeWriter:
    """Write access to one local lake (see the module docstring for what concurrent writers may rely on).

    Args:
        root: the lake folder.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        if "://" in str(root):
            raise LakeError(f"cannot write to {root}: fdkit writes local lakes only (write one, then copy it)")
        self.root = Path(root)

    @contextmanager
    def lock(self, *names: str) -> Iterator[None]:
        """Hold the write locks of these datasets (reentrant within a thread; sorted, so no deadlock)."""
        for name in names:
            safe_segment(name, "dataset name")
        with datasets_lock(self.root, names):
            yield

    def folder(self, name: str) -> Path:
        """The folder of dataset ``name``."""
        return self.root / safe_segment(name, "dataset name")

    def ensure_table(self, name: str) -> bool:
        """Make a plain Parquet dataset a Delta table, once whoever asks first; whether the dataset is a table now.

        Example:
            >>> import tempfile
            >>> LakeWriter(tempfile.mkdtemp()).ensure_table("prices")   # nothing there yet
            False
        """
        with self.lock(name):
            folder = self.folder(name)
            if is_delta(self.root, name):
                return True
            if folder.is_dir() and any(folder.rglob("*.parquet")):
                convert_dataset(self.root, name)  # logged (one line)
                keep_projections(self.root, name)
                return True
            return False

    def live(self, name: str) -> list[delta.LiveFile]:
        """The live files of dataset ``name``'s table (converted first if it is plain Parquet; none if absent)."""
        with self.lock(name):
            return delta.live_files(self.folder(name)) if self.ensure_table(name) else []

    def commit(
        self,
        name: str,
        adds: Iterable[tuple[str, pa.Table]],
        removes: Iterable[str] = (),
        mtimes: Mapping[str, int] | None = None,
        write_file: Any = None,
    ) -> list[str]:
        """Add and remove whole files of dataset ``name`` in one commit (each file written atomically first).

        Args:
            name: the dataset.
            adds: ``(path relative to the table folder, rows)`` per new file.
            removes: paths (relative) of live files to remove.
            mtimes: the log's modification time (ms) of an added file that rewrites an older one (its rows' age).
            write_file: ``write_file(path, rows)`` writes one file atomically (default: temp file, fsync, rename).

        Returns:
            The paths added.

        Raises:
            LakeWriteError: the log refused the commit (nothing of it is live).
        """
        delta.require_deltalake()
        from deltalake.exceptions import CommitFailedError, DeltaError

        folder = self.folder(name)
        with self.lock(name):
            self.ensure_table(name)
            try:
                return delta.commit_files(
                    folder, adds, removes, write_file=write_file or _file_writer(folder), mtimes=mtimes
                )
            except CommitFailedError as exc:
                raise CommitConflict(f"another writer committed to the Delta table {name}: {exc}") from None
            except DeltaError as exc:
                raise LakeWriteError(f"cannot commit to the Delta table {name}: {exc}") from None

    def write(self, name: str, df: pd.DataFrame, **options: Any) -> list[Path]:
        """:func:`fdkit.lake.io.write_dataset` under the dataset's lock (the build, benchmarks, tests).

        Example:
            >>> import tempfile
            >>> df = pd.DataFrame({"bank": ["ECB"], "date": ["2024-01-02"], "name": ["MRO"], "rate": [4.5]})
            >>> [p.name for p in LakeWriter(tempfile.mkdtemp()).write("interest_rates", df, layout="parquet")]
            ['part-0.parquet']
        """
        from fdkit.lake.io import write_dataset

        with self.lock(name):
            return write_dataset(self.root, name, df, **options)

    def replace_rows(
        self, name: str, df: pd.DataFrame, *, value: str, column: str = "ticker", projections: bool = False
    ) -> int:
        """Replace the rows of one ``column`` value (a ticker) with ``df``'s, in one commit; landed events win.

        Under the dataset's lock: the live files that may hold the value's rows are read (by partition value or the
        log's min/max statistics); their rows of that value are removed, except rows whose key an event landed
        (:class:`fdkit.lake.ledger.Ledger`); ``df``'s rows are added, except those with such a key. A file that
        holds other rows too is rewritten without the removed ones. Rows of other values are never touched.

        Args:
            name: the dataset.
            df: the new rows of ``value`` (each row's ``column`` is ``value``).
            value: the value whose rows are replaced.
            column: the column (``ticker``).
            projections: bring the table's projections up to date after the commit.

        Returns:
            The rows of ``df`` committed (fewer than ``len(df)`` when events landed some of its keys).

        Raises:
            ValueError: ``df`` holds rows of another value.
        """
        safe_segment(value, column)
        if column in df.columns and (df[column].astype(str) != value).any():
            raise ValueError(f"replace_rows of {column} {value!r} was given rows of other {column} values")
        schema = dataset_schema(name)
        new = _table(conform(df, schema) if schema else df, schema)
        with self.lock(name):
            landed = self._landed(name, value)
            exists = self.ensure_table(name)
            adds: list[tuple[str, pa.Table]] = []
            removes: list[str] = []
            ages: dict[str, int] = {}  # a rewritten file keeps its rows' age: a landed row stays the newer one
            parts: list[str] = []
            if exists:
                parts = list(delta.open_table(self.folder(name)).metadata().partition_columns)
                for f in delta.live_files(self.folder(name)):
                    rest = self._without(name, f, column, value, landed, parts)
                    if rest is None:
                        continue
                    removes.append(f.path)
                    if rest.num_rows:
                        adds.append((self._new_path(f.partition, column, value, parts), rest))
                        ages[adds[-1][0]] = f.mtime_ms
            new = new.filter(pc.invert(_landed_mask(new, landed))) if landed else new
            if new.num_rows:
                adds.append((self._new_path({column: value} if column in parts else {}, column, value, parts), new))
            if adds or removes:
                self.commit(name, adds, removes, mtimes=ages)
                bump_generation(self.root)
            if projections:
                keep_projections(self.root, name)
        return int(new.num_rows)

    def _landed(self, name: str, value: str) -> list[dict[str, str]]:
        """The key fields of the rows events landed in ``name`` for ``value`` (none without a ledger)."""
        if not (self.root / LEDGER_FILE).is_file():
            return []
        ledger = Ledger(self.root, readonly=True)
        try:
            return ledger.landed_keys(name, value)
        finally:
            ledger.close()

    def _without(
        self, name: str, f: delta.LiveFile, column: str, value: str, landed: list[dict[str, str]], parts: list[str]
    ) -> pa.Table | None:
        """File ``f``'s rows once ``value``'s unlanded rows are gone, or ``None`` when it keeps them all."""
        if column in f.partition:
            if f.partition[column] != value:
                return None
        elif column in f.stats:
            lo, hi = f.stats[column]
            if isinstance(lo, str) and isinstance(hi, str) and not lo <= value <= hi:
                return None
        table = pq.read_table(self.folder(name) / f.path)
        for p in parts:  # a partition column lives in folder names, not in the file
            if p not in table.column_names:
                table = table.append_column(p, pa.array([f.partition.get(p)] * table.num_rows, pa.string()))
        if column not in table.column_names:
            return None
        mine = pc.fill_null(pc.equal(table.column(column).cast(pa.string()), value), False)
        if landed:
            mine = pc.and_(mine, pc.invert(_landed_mask(table, landed)))
        if not pc.any(mine).as_py():
            return None
        return table.filter(pc.invert(mine))

    @staticmethod
    def _new_path(partition: Mapping[str, str | None], column: str, value: str, parts: list[str]) -> str:
        folder = "/".join(f"{p}={partition.get(p)}" for p in parts)
        stem = f"part-{uuid.uuid4().hex[:16]}.parquet"
        return str(PurePosixPath(folder) / stem) if folder else stem


def _file_writer(folder: Path) -> Any:
    """Writes one file of a table atomically (temp file, fsync, rename): invisible until the log names it."""

    def write_file(rel: PurePosixPath, table: pa.Table) -> None:
        atomic_write_bytes(folder / rel, parquet_bytes(table))

    return write_file


def _landed_mask(table: pa.Table, landed: list[dict[str, str]]) -> pa.ChunkedArray | pa.Array:
    """Which rows of ``table`` have the key of a landed row (their key fields, as :func:`key_text` gives them)."""
    by_fields: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for key in landed:
        fields = tuple(sorted(key))
        by_fields.setdefault(fields, set()).add(tuple(key[f] for f in fields))
    mask = pa.array([False] * table.num_rows)
    for fields, keys in by_fields.items():
        if not set(fields) <= set(table.column_names):
            continue
        columns = [table.column(f).to_pylist() for f in fields]
        hits = [tuple(key_text(v) for v in row) in keys for row in zip(*columns, strict=True)]
        mask = pc.or_(mask, pa.array(hits, pa.bool_()))
    return mask
