"""A read of a date range skips what lies outside it, and gives the rows a whole read filtered to it gives."""

from __future__ import annotations

import pandas as pd
import pytest

from fdkit.lake import default_data_dir
from fdkit.lake.io import read_dataset
from fdkit.server.store import Store


def _within(df: pd.DataFrame, column: str, lo: pd.Timestamp | None, hi: pd.Timestamp | None) -> pd.DataFrame:
    when = df[column]
    if isinstance(when.dtype, pd.DatetimeTZDtype):
        lo = None if lo is None else lo.tz_localize("UTC")
        hi = None if hi is None else hi.tz_localize("UTC")
    keep = pd.Series(True, index=df.index)
    if lo is not None:
        keep &= when >= lo
    if hi is not None:
        keep &= when < hi
    return df[keep.to_numpy()].reset_index(drop=True)


@pytest.mark.parametrize(
    ("lo", "hi"),
    [("2024-01-02", "2024-01-03"), ("2023-06-01", None), (None, "2010-01-01"), ("2030-01-01", "2030-02-01")],
    ids=["one day", "open end", "open start", "no rows"],
)
def test_a_range_of_utc_times_is_the_whole_read_filtered(lo, hi):
    lo, hi = (None if v is None else pd.Timestamp(v) for v in (lo, hi))
    where = {"ticker": ("AAPL", "MSFT")}
    whole = read_dataset(default_data_dir(), "prices", where=where)
    ranged = read_dataset(default_data_dir(), "prices", where=where, between=("time", lo, hi))
    pd.testing.assert_frame_equal(ranged, _within(whole, "time", lo, hi), check_categorical=False)


def test_a_day_of_the_price_history_reads_that_day_not_the_tickers_histories():
    pytest.importorskip("fdkit_history")
    store = Store(default_data_dir())
    tickers = ["AAPL", "LEH", "XOM", "NOPE"]
    day = ("date", pd.Timestamp("2008-06-30"), pd.Timestamp("2008-07-01"))
    ranged = store.rows_of_many("price_history", tickers, between=day)
    read_for_day = store.rows_read
    whole = store.rows_of_many("price_history", tickers)
    read_whole = store.rows_read - read_for_day
    assert sorted(ranged["ticker"].astype(str)) == ["AAPL", "LEH", "XOM"]
    assert read_for_day == 3 and read_whole > 10_000
    pd.testing.assert_frame_equal(
        ranged.reset_index(drop=True), _within(whole, "date", *day[1:]), check_categorical=False
    )
