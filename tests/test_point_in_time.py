"""Point in time by construction: the filing times travel with a frame's rows whatever columns are selected, and
a join that cannot know when a row was filed refuses instead of guessing."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdkit.frames.pointintime import FILED_ATTR, filing_times
from fdkit.research.sessions import known_from

TICKERS = ["AAPL", "MSFT", "NVDA", "JPM", "XOM", "KO", "WMT", "TSLA"]


@pytest.fixture(scope="module")
def ttm(ref_client):
    return ref_client.income_statements(TICKERS, period="ttm", limit=None)


@pytest.fixture(scope="module")
def monthly(ref_client):
    return ref_client.prices(TICKERS, start_date="2019-01-02", end_date="2025-06-30").fds.resample("ME")


def _known_by_rule(frame: pd.DataFrame) -> pd.Series:
    """When each row of a fetched statement frame is known, from its own filing columns (the documented rule)."""
    filed = frame["filing_date"] + pd.Timedelta(days=1)
    return known_from(frame["filing_datetime"]).fillna(filed) if "filing_datetime" in frame else filed


def test_nvda_eps_selected_alone_is_known_from_its_filing(ref_client):
    t = ref_client.income_statements("NVDA", period="ttm", limit=None)
    px = ref_client.prices("NVDA", start_date="2023-11-01", end_date="2023-12-01")
    alone = t[["earnings_per_share_diluted"]].fds.asof(px)
    whole = t.fds.asof(px)
    pd.testing.assert_series_equal(alone["available_from"], whole["available_from"])
    on = alone.loc[("NVDA", pd.Timestamp("2023-11-30"))]
    # the Q3 FY2024 10-Q was filed 2023-11-21 after the close: known from 2023-11-22, not report_period + 45 days
    assert on["available_from"] == pd.Timestamp("2023-11-22") and on["report_period"] == pd.Timestamp("2023-10-29")
    before = alone.loc[("NVDA", pd.Timestamp("2023-11-21"))]
    assert before["report_period"] == pd.Timestamp("2023-07-30")


def test_the_readme_factor_panel_uses_no_statement_before_it_was_filed(ttm, monthly):
    # the README's own example: compute a column, select it, join point in time
    margin = ttm.eval("margin = net_income / revenue")
    panel = margin[["margin"]].fds.asof(monthly, max_age="200D")
    full = margin.fds.asof(monthly, max_age="200D")
    pd.testing.assert_series_equal(panel["available_from"], full["available_from"])
    joined = panel.dropna(subset=["report_period"])
    bar = joined.index.get_level_values("time")
    assert (joined["available_from"] <= bar).all()
    keyed = ttm.reset_index().assign(known=_known_by_rule(ttm.reset_index()))
    merged = joined.reset_index().merge(keyed[["ticker", "report_period", "known"]], on=["ticker", "report_period"])
    assert len(merged) == len(joined) and (merged["known"] <= merged["time"]).all()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.lists(st.sampled_from(TICKERS), min_size=1, max_size=4, unique=True),
    st.sets(
        st.sampled_from(
            [
                "revenue",
                "net_income",
                "earnings_per_share_diluted",
                "gross_profit",
                "operating_income",
                "fiscal_period",
                "currency",
            ]
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([None, "200D", "400D"]),
)
def test_no_column_subset_uses_a_row_before_its_filing_time(ttm, monthly, tickers, columns, max_age):
    frame = ttm[ttm.index.get_level_values("ticker").isin(tickers)]
    chosen = [c for c in ttm.columns if c in columns]
    px = monthly[monthly.index.get_level_values("ticker").isin(tickers)]
    joined = frame[chosen].fds.asof(px, max_age=max_age)
    reference = frame.fds.asof(px, max_age=max_age)
    pd.testing.assert_series_equal(joined["available_from"], reference["available_from"])
    rows = frame.reset_index()
    keys = zip(rows["ticker"].astype(str), rows["report_period"], strict=True)
    known = dict(zip(keys, _known_by_rule(rows), strict=True))
    used = joined.dropna(subset=["report_period"]).reset_index()
    for ticker, when, period in zip(used["ticker"].astype(str), used["time"], used["report_period"], strict=True):
        assert known[(ticker, period)] <= when


def test_a_frame_that_knows_no_filing_dates_is_refused_not_guessed(ttm, monthly):
    bare = pd.DataFrame(ttm[["revenue"]].to_dict())  # rebuilt by hand: no filing dates anywhere
    bare.index.names = ttm.index.names
    assert filing_times(bare) is None
    with pytest.raises(ValueError, match="lag_days"):
        bare.fds.asof(monthly)
    explicit = bare.fds.asof(monthly, lag_days=90)  # the fallback is the user's explicit choice
    got = explicit.dropna(subset=["report_period"])
    assert ((got["available_from"] - got["report_period"]) == pd.Timedelta(days=90)).all()


def test_frames_fetched_separately_and_concatenated_keep_no_stale_times(ref_client, monthly):
    a = ref_client.income_statements("AAPL", period="ttm", limit=None)
    b = ref_client.income_statements("MSFT", period="ttm", limit=None)
    assert FILED_ATTR in a.attrs
    both = pd.concat([a, b])
    assert FILED_ATTR not in both.attrs  # pandas drops attrs that differ: nothing stale survives
    with pytest.raises(ValueError, match="filing"):
        both[["revenue"]].fds.asof(monthly)
    kept = both[["revenue", "filing_date", "filing_datetime"]]  # with the columns kept, it joins as a whole frame
    pd.testing.assert_series_equal(kept.fds.asof(monthly)["available_from"], both.fds.asof(monthly)["available_from"])


def test_rows_without_a_filing_date_are_left_out_with_a_warning(ttm, monthly):
    frame = ttm.loc[["AAPL"]].copy()
    frame.iloc[-1, frame.columns.get_loc("filing_date")] = pd.NaT
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        joined = frame.drop(columns=["filing_datetime"]).fds.asof(monthly.loc[["AAPL"]])
    assert any("no filing date" in str(w.message) for w in caught)
    assert frame.index[-1][1] not in set(joined["report_period"].dropna())


def test_a_fetched_frame_still_saves_to_parquet(ttm, tmp_path):
    path = tmp_path / "ttm.parquet"
    ttm[["revenue", "filing_date"]].to_parquet(path)  # attrs are written as JSON: the carried times are a string
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, ttm[["revenue", "filing_date"]], check_freq=False)
