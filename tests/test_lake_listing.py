"""A lake's dataset listing is kept between reads, and still sees a dataset a writer adds or fills."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fdkit.lake.io import list_datasets


def _write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"ticker": ["AAPL"], "value": [1.0]}), folder / "part-0.parquet")


def _age(path: Path, seconds: float = 5.0) -> None:
    """Set a folder's mtime into the past, as a listing kept since then would have seen it."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_listing_sees_a_dataset_added_after_it_was_kept(tmp_path: Path) -> None:
    _write(tmp_path / "prices")
    _age(tmp_path)
    assert list_datasets(tmp_path) == ["prices"]
    _write(tmp_path / "news")  # a new folder: the root's mtime changes
    assert list_datasets(tmp_path) == ["news", "prices"]


def test_listing_sees_a_folder_filled_after_it_was_kept(tmp_path: Path) -> None:
    _write(tmp_path / "prices")
    (tmp_path / "filings").mkdir()
    _age(tmp_path)
    assert list_datasets(tmp_path) == ["prices"]  # an empty folder is not a dataset
    _write(tmp_path / "filings")  # filled in place: the root's mtime does not change
    _age(tmp_path)
    assert list_datasets(tmp_path) == ["filings", "prices"]


def test_listing_forgets_a_removed_dataset(tmp_path: Path) -> None:
    _write(tmp_path / "prices")
    _write(tmp_path / "news")
    _age(tmp_path)
    assert list_datasets(tmp_path) == ["news", "prices"]
    for f in (tmp_path / "news").iterdir():
        f.unlink()
    (tmp_path / "news").rmdir()
    assert list_datasets(tmp_path) == ["prices"]


def test_listing_of_a_missing_lake_is_empty(tmp_path: Path) -> None:
    assert list_datasets(tmp_path / "nowhere") == []


def test_unused_categories_are_dropped_as_pandas_drops_them() -> None:
    from fdkit.frames.dtypes import without_unused

    s = pd.Series(pd.Categorical(["c", None, "a", "c"], categories=["a", "b", "c", "d"]), name="ticker")
    got, want = without_unused(s), s.cat.remove_unused_categories()
    pd.testing.assert_series_equal(got, want)
    assert without_unused(got) is got  # nothing unused: the same series
