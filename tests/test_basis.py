"""Split bases: frames say theirs, ratios give the same P/E whatever basis the prices are on."""

from __future__ import annotations

import pandas as pd
import pytest

from fdkit.errors import BadRequestError
from fdkit.frames.basis import basis_of, rebase, split_factor


@pytest.fixture(scope="module")
def nvda(ref_client):
    px = ref_client.prices("NVDA", start_date="2020-01-02", end_date="2025-12-31")
    ttm = ref_client.financials("NVDA", period="ttm", limit=40)
    return px, ttm


def test_service_frames_say_they_are_adjusted(ref_client, nvda):
    px, ttm = nvda
    assert basis_of(px) == basis_of(ttm) == "adjusted"
    assert basis_of(ref_client.financial_metrics("NVDA", period="ttm", limit=4)) == "adjusted"
    assert basis_of(ref_client.news("AAPL", limit=1)) is None  # nothing per share in news


@pytest.mark.parametrize("basis", ["raw", "2023-10-27", "2021-07-21"])
def test_pe_is_the_same_whatever_basis_the_prices_are_on(ref_client, nvda, basis):
    px, ttm = nvda
    other = px.fds.adjust(basis)
    assert basis_of(other) == basis
    if basis == "raw":  # as traded: 10x before the 2024 split and 40x before the 2021 one
        ratio = (
            other.loc[("NVDA", pd.Timestamp("2021-01-04")), "close"]
            / px.loc[("NVDA", pd.Timestamp("2021-01-04")), "close"]
        )
        assert ratio == pytest.approx(40.0)
    want = ttm.fds.ratios(prices=px)["price_to_earnings_ratio"]
    got = ttm.fds.ratios(prices=other)["price_to_earnings_ratio"]
    pd.testing.assert_series_equal(got, want, rtol=1e-9)
    splits = ref_client.splits("NVDA").reset_index()
    explicit = ttm.fds.ratios(prices=other, splits=splits)["price_to_earnings_ratio"]
    pd.testing.assert_series_equal(explicit, want, rtol=1e-9)


def test_unmarked_prices_are_taken_as_they_are(nvda):
    px, ttm = nvda
    raw = px.fds.adjust("raw")
    raw.attrs = {}
    pe = ttm.fds.ratios(prices=raw)["price_to_earnings_ratio"]
    assert pe.loc[("NVDA", pd.Timestamp("2023-01-29"))] > 400  # a raw price over adjusted EPS: 10x off, unflagged


def test_round_trips_and_volume_counts(nvda, tmp_path):
    px, _ = nvda
    raw = px.fds.adjust("raw")
    assert str(raw["volume"].dtype) == "Int64"
    back = raw.fds.adjust("adjusted")
    pd.testing.assert_frame_equal(back, px, rtol=1e-12)
    raw.to_parquet(tmp_path / "raw.parquet")
    assert basis_of(pd.read_parquet(tmp_path / "raw.parquet")) == "raw"


def test_statement_values_move_by_their_filing_day(ref_client):
    inc = ref_client.income_statements("NVDA", period="quarterly", limit=12)
    reported = inc.fds.adjust("raw")
    row = ("NVDA", pd.Timestamp("2024-04-28"))  # filed 2024-05-29, before the 10-for-1 split: $5.98 as reported
    assert reported.loc[row, "earnings_per_share_diluted"] == pytest.approx(5.98)
    assert reported.loc[("NVDA", pd.Timestamp("2024-07-28")), "earnings_per_share_diluted"] == pytest.approx(0.67)


def test_bad_bases_are_clear_errors(nvda):
    px, _ = nvda
    with pytest.raises(BadRequestError, match="unknown split basis"):
        px.fds.adjust("yesterday-ish")
    unmarked = px.copy()
    unmarked.attrs = {}
    with pytest.raises(BadRequestError, match="does not say its split basis"):
        rebase(unmarked, "raw", pd.DataFrame({"ticker": [], "date": [], "ratio": []}))


def test_split_factor_counts_only_splits_after_the_day_and_up_to_the_basis():
    s = pd.DataFrame({"ticker": ["X", "X"], "date": pd.to_datetime(["2020-01-02", "2022-01-03"]), "ratio": [2.0, 3.0]})
    days = pd.to_datetime(["2019-01-02", "2021-01-04", "2023-01-03"]).to_numpy()
    tickers = pd.Series(["X", "X", "X"]).to_numpy()
    assert split_factor(tickers, days, "adjusted", s).tolist() == [6.0, 3.0, 1.0]
    assert split_factor(tickers, days, "2021-06-01", s).tolist() == [2.0, 1.0, 1.0]
    assert split_factor(tickers, days, "raw", s).tolist() == [1.0, 1.0, 1.0]
