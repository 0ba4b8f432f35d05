"""Garbage the sources pass through is served as missing with its reason; derived values say so (issue 26, 6-7).

Checked through the public functions against the embedded service, and against the raw pystock reports read here
with plain pandas (not through the build).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
REPORTS = SHARED / "data-real-2" / "fundamentals_pystock" / "pystock_sec_reports_asof_2015_2017.csv.gz"


def _row(frame: pd.DataFrame, period_end: str) -> pd.Series:
    return frame.xs(pd.Timestamp(period_end), level="report_period").iloc[0]


@pytest.mark.parametrize(
    ("ticker", "period", "period_end", "why"),
    [
        ("WFC", "quarterly", "2015-12-31", "negative"),  # the source's Q4: -51.4bn
        ("F", "quarterly", "2016-12-31", "negative"),  # -95.3bn
        ("F", "annual", "2016-12-31", "four times its quarters"),  # 10.25bn where the quarters are ~35bn each
        ("ABBV", "quarterly", "2015-06-30", "neighbouring quarters"),  # 51m among ~5bn
        ("ABBV", "quarterly", "2015-12-31", "one of those was rejected"),  # FY - Q1..Q3 with Q2, Q3 rejected
    ],
)
def test_a_value_failing_a_sanity_rule_is_missing_with_its_reason(ref_client, ticker, period, period_end, why):
    inc = ref_client.income_statements(ticker, period=period, limit=None)
    row = _row(inc, period_end)
    assert pd.isna(row["revenue"])
    assert why in row["quality"] and "served missing" in row["quality"]
    assert str(inc["quality"].dtype) == "string"


def test_no_negative_revenue_is_served_and_ttm_of_a_rejected_quarter_is_missing(ref_client):
    tickers = ["WFC", "F", "AES", "CHRW", "ETR", "EBAY", "EMR", "BAX", "ERIE", "DECK"]
    for period in ("quarterly", "annual", "ttm"):
        inc = ref_client.income_statements(tickers, period=period, limit=None)
        assert not (inc["revenue"] < 0).any(), period
    ttm = ref_client.income_statements("WFC", period="ttm", limit=None)
    row = _row(ttm, "2015-12-31")
    assert pd.isna(row["revenue"]) and "FY2015-Q4: revenue: negative" in row["quality"]


def test_another_share_class_eps_is_missing_not_a_pe_of_0_1(ref_client):
    erie = ref_client.income_statements("ERIE", period="annual", limit=None)
    fy2016 = _row(erie, "2016-12-31")
    assert pd.isna(fy2016["earnings_per_share"]) and "P/E under 1" in fy2016["quality"]
    metrics = ref_client.financial_metrics("ERIE", period="annual", limit=None)
    pe = metrics["price_to_earnings_ratio"].dropna()
    assert (pe > 1).all()  # was 0.11


def test_derived_share_counts_are_marked_and_give_market_caps(ref_client):
    jpm = ref_client.income_statements("JPM", period="quarterly", limit=None)
    row = _row(jpm, "2016-06-30")
    # JPM's pystock reports carry no share counts: net income / EPS, marked
    assert row["weighted_average_shares"] == pytest.approx(row["net_income"] / row["earnings_per_share"], rel=1e-9)
    assert "weighted_average_shares" in row["quality"] and "derived as net income / EPS" in row["quality"]
    members = ref_client.index_members("sp500", "2016-06-30").index.get_level_values("ticker").unique()
    metrics = ref_client.financial_metrics(list(members), period="quarterly", limit=None, errors="ignore")
    window = metrics[metrics.index.get_level_values("report_period").year == 2016]
    assert window["market_cap"].notna().mean() > 0.85  # was 4 of 333 rows


@pytest.mark.skipif(not REPORTS.exists(), reason="needs ../shared/data-real-2 (the raw pystock reports)")
def test_a_symbol_two_filers_share_serves_the_parent(ref_client):
    raw = pd.read_csv(REPORTS, parse_dates=["end_date", "first_seen_date"])
    nrg = raw[(raw["symbol"] == "NRG") & (raw["doc_type"] == "10-Q") & ~raw["amend"].astype(bool)]
    # two filers under one symbol: NRG Energy and NRG Yield (its subsidiary, ~1/5 of its assets)
    both = nrg[nrg["end_date"] == "2016-09-30"].sort_values("assets")
    assert len(both) == 2 and both["assets"].iloc[0] < 0.3 * both["assets"].iloc[1]
    parent = both.iloc[1]
    inc = ref_client.income_statements("NRG", period="quarterly", limit=None)
    row = _row(inc, "2016-09-30")
    assert row["revenue"] == parent["revenues"] and row["net_income"] == parent["net_income"]


def test_a_quarterly_pe_is_the_price_over_four_trailing_quarters_eps(ref_client):
    """Issue 26 item 9: KO's Q1 2015 P/E read 82.8 on one quarter's EPS; a multiple is of a year's earnings."""
    inc = ref_client.income_statements("KO", period="quarterly", limit=None).sort_index()
    metrics = ref_client.financial_metrics("KO", period="quarterly", limit=None).sort_index()
    px = ref_client.prices("KO", start_date="2015-01-01", end_date="2017-06-30")
    closes = px.xs("KO", level="ticker")["close"]
    eps = inc["earnings_per_share_diluted"].fillna(inc["earnings_per_share"]).xs("KO", level="ticker")
    eps = eps[eps.index >= "2015-01-01"]  # the 2015-2017 span (KO's 2010 quarter of the FSDS stands alone, years back)
    pe = metrics["price_to_earnings_ratio"].xs("KO", level="ticker")
    first = eps.index[:3]
    assert pe.reindex(first).isna().all()  # no three earlier quarters: no year of earnings, no multiple
    for day in eps.index[3:]:
        year_eps = eps.loc[:day].iloc[-4:].sum()
        close = closes[closes.index.tz_localize(None) <= day].iloc[-1]
        assert pe[day] == pytest.approx(close / year_eps, rel=1e-9), day
    assert pe.dropna().between(10, 40).all()  # was 40-112 on single quarters
