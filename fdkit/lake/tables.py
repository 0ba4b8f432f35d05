"""Lake maintenance: make plain Parquet datasets Delta tables, compact them, clean files no version needs.

What ``fdkit lake convert``, ``fdkit lake optimize`` and ``fdkit lake vacuum`` do, one dataset at a time, each
through ``deltalake`` (each a commit of its own; readers keep reading the version they opened). After each, the
lake's generation stamp is bumped, so a running ``fdkit serve`` lists the tables again on its next request. Each
holds the dataset's write lock (:mod:`fdkit.lake.locks`, as every writer of :mod:`fdkit.lake.writer` does): a
conversion racing a receiver's first landing happens once, and a compaction never interleaves with a commit.

Example:
    >>> import tempfile, pandas as pd
    >>> from fdkit.lake.io import write_dataset
    >>> root = tempfile.mkdtemp()
    >>> df = pd.DataFrame({"bank": ["ECB"], "date": ["2024-01-02"], "name": ["MRO"], "rate": [4.5]})
    >>> _ = write_dataset(root, "interest_rates", df, layout="parquet")
    >>> [line.split(":")[0] for line in convert_lake(root)]
    ['interest_rates']
    >>> optimize_lake(root)[0].startswith("interest_rates:")
    True
"""

from __future__ import annotations

import os
from pathlib import Path

from fdkit.errors import LakeError
from fdkit.lake import delta
from fdkit.lake.delta import ROW_GROUP_ROWS
from fdkit.lake.io import bump_generation, convert_dataset, is_delta, keep_projections, require_lake
from fdkit.lake.locks import dataset_lock

__all__ = ["convert_lake", "optimize_lake", "vacuum_lake"]


def _datasets(root: str | os.PathLike[str], names: list[str] | None) -> list[str]:
    """The datasets to work on: ``names`` (checked to exist) or every dataset of the lake."""
    present = [n for n in require_lake(root) if not n.startswith(("_", "."))]
    if not names:
        return present
    unknown = [n for n in names if n not in present]
    if unknown:
        raise LakeError(f"{root} has no dataset {unknown[0]!r} (it has {', '.join(present[:8])}...)")
    return list(names)


def _local(root: str | os.PathLike[str]) -> Path:
    text = str(root)
    if "://" in text:
        raise LakeError(f"cannot maintain {text}: fdkit converts, optimizes and vacuums local lakes only")
    return Path(root)


def convert_lake(root: str | os.PathLike[str], names: list[str] | None = None) -> list[str]:
    """Convert every plain Parquet dataset of a lake (or ``names``) to a Delta table.

    See :func:`fdkit.lake.io.convert_dataset`: in place where the files allow, else a rewrite (the old folder kept
    under ``_legacy/``). Datasets that are Delta tables already are left alone.

    Args:
        root: lake folder.
        names: only these datasets.

    Returns:
        One line per dataset.

    Raises:
        LakeError: no lake at ``root``, or no such dataset.
    """
    base = _local(root)
    out = []
    for name in _datasets(base, names):
        with dataset_lock(base, name):  # checked and converted under the lock: another writer converts it once
            if is_delta(base, name):
                out.append(f"{name}: a Delta table already")
                continue
            out.append(convert_dataset(base, name, quiet=True))
            keep_projections(base, name)  # a table converted in place made no commit through write_dataset
    bump_generation(base)
    return out


def optimize_lake(root: str | os.PathLike[str], names: list[str] | None = None) -> list[str]:
    """Compact the Delta tables of a lake: small files become large ones, rows sorted by ticker (z-order).

    A table with a ``ticker`` column (and not partitioned by it) is rewritten by ``DeltaTable.optimize.z_order``
    on ``ticker`` (one ticker's rows then sit in few row groups of few files, which the reader finds by the log's
    statistics); any other table is compacted (``optimize.compact``). Row groups keep
    :data:`fdkit.lake.delta.ROW_GROUP_ROWS` rows. The files replaced stay until :func:`vacuum_lake` (time travel).

    Args:
        root: lake folder.
        names: only these datasets (default: every Delta table).

    Returns:
        One line per table: files removed and added.

    Raises:
        LakeError: no lake at ``root``, no such dataset, or a named dataset is plain Parquet (convert it first).
    """
    delta.require_deltalake()
    from deltalake import WriterProperties

    base = _local(root)
    props = WriterProperties(max_row_group_size=ROW_GROUP_ROWS, compression="ZSTD")
    out = []
    for name in _datasets(base, names):
        if not is_delta(base, name):
            if names:
                raise LakeError(f"{name} is plain Parquet: run `fdkit lake convert {base}` first")
            out.append(f"{name}: plain Parquet, left alone (`fdkit lake convert` makes it a Delta table)")
            continue
        with dataset_lock(base, name):
            dt = delta.open_table(base / name)
            columns = [f.name for f in dt.schema().fields]
            if "ticker" in columns and "ticker" not in dt.metadata().partition_columns:
                metrics = dt.optimize.z_order(["ticker"], writer_properties=props)
                how = "z-ordered by ticker"
            else:
                metrics = dt.optimize.compact(writer_properties=props)
                how = "compacted"
            out.append(
                f"{name}: {how}, {metrics.get('numFilesRemoved', 0)} files -> {metrics.get('numFilesAdded', 0)}"
                f" (version {delta.open_table(base / name).version()})"
            )
            keep_projections(base, name)  # the files changed: the latest bars are made again from the new ones
    bump_generation(base)
    return out


def vacuum_lake(
    root: str | os.PathLike[str],
    *,
    retain_hours: float | None = None,
    dry_run: bool = False,
    names: list[str] | None = None,
) -> list[str]:
    """Delete the files of a lake's Delta tables that no version within the retention window needs.

    Args:
        root: lake folder.
        retain_hours: keep what versions of the last this many hours read (default: the table's retention, 7
            days); ``0`` keeps only the current version (time travel to older versions is then gone).
        dry_run: only say what would be deleted.
        names: only these datasets (default: every Delta table).

    Returns:
        One line per table: how many files were (or would be) deleted.

    Raises:
        LakeError: no lake at ``root``, or a negative retention.
    """
    if retain_hours is not None and retain_hours < 0:
        raise LakeError(f"--retain-hours must be 0 or more, not {retain_hours}")
    base = _local(root)
    out = []
    for name in _datasets(base, names):
        if not is_delta(base, name):
            continue
        with dataset_lock(base, name):
            dt = delta.open_table(base / name)
            gone = dt.vacuum(
                retention_hours=None if retain_hours is None else int(retain_hours),
                dry_run=dry_run,
                enforce_retention_duration=retain_hours is None,
            )
        out.append(f"{name}: {len(gone)} files {'would be ' if dry_run else ''}deleted")
    if not dry_run:
        bump_generation(base)
    return out
