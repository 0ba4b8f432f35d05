"""One company per ticker in the 2015-2017 cross-section (issue 26, items 1-2): pystock's symbols follow their owners.

Checked through the public functions against the raw pystock files read here with plain pandas: the reports and
bars a symbol carried belong to the company that held the symbol that day, served under its lake ticker.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fdkit.errors import DateRangeWarning

SHARED = Path(__file__).resolve().parents[2] / "shared"
REPORTS = SHARED / "data-real-2" / "fundamentals_pystock" / "pystock_sec_reports_asof_2015_2017.csv.gz"
BARS = SHARED / "data-real-2" / "prices" / "pystock_us_equities_daily_2015_2017.parquet"
pytestmark = pytest.mark.skipif(not REPORTS.exists(), reason="needs ../shared/data-real-2 (the raw pystock files)")


def _raw_revenue(symbol: str, end: str) -> float:
    raw = pd.read_csv(REPORTS, parse_dates=["end_date", "first_seen_date"])
    r = raw[(raw["symbol"] == symbol) & (raw["end_date"] == end) & (raw["doc_type"] == "10-Q") & ~raw["amend"]]
    return float(r.sort_values("first_seen_date")["revenues"].iloc[0])


def _quarter(client, ticker: str, end: str) -> pd.Series:
    inc = client.income_statements(ticker, period="quarterly", limit=None)
    return inc.xs(ticker, level="ticker").loc[pd.Timestamp(end)]


def test_a_reused_symbol_serves_the_company_that_holds_it_today(ref_client):
    """WTW in pystock is Weight Watchers; Willis Towers Watson traded as WLTW: WTW serves Willis's bars only."""
    raw = pd.read_parquet(BARS, filters=[("symbol", "in", ["WLTW", "WTW"])])
    raw = raw.assign(date=pd.to_datetime(raw["date"])).set_index(["symbol", "date"])["close"]
    px = ref_client.prices("WTW", start_date="2016-06-30", end_date="2016-06-30")
    assert px["close"].iloc[0] == pytest.approx(raw[("WLTW", pd.Timestamp("2016-06-30"))], abs=0.005)
    reports = pd.read_csv(REPORTS)
    ww = reports[(reports["symbol"] == "WTW") & (reports["doc_type"] == "10-Q")]["revenues"].dropna()
    served = ref_client.income_statements("WTW", period="quarterly", limit=None)["revenue"].dropna()
    assert len(ww) and not set(ww) & set(served)  # none of Weight Watchers' figures


def test_a_symbol_that_changed_hands_is_two_companies(ref_client):
    """CB was the Chubb Corporation until 2016-01-14, Chubb Limited (formerly ACE) after: CB_2016 is the first."""
    old = _quarter(ref_client, "CB_2016", "2015-09-30")
    assert old["revenue"] == _raw_revenue("CB", "2015-09-30")  # the Chubb Corporation's 10-Q
    new = ref_client.income_statements("CB", period="quarterly", limit=None).xs("CB", level="ticker")
    assert pd.Timestamp("2016-06-30") in new.index and pd.Timestamp("2015-09-30") in new.index
    assert new.loc[pd.Timestamp("2015-09-30"), "revenue"] == _raw_revenue("ACE", "2015-09-30")  # ACE's, not Chubb's


def test_prices_follow_the_company_not_the_symbol(ref_client):
    """BNY in pystock is a municipal bond fund; BNY Mellon traded as BK: BNY's 2016 bars are BK's."""
    raw = pd.read_parquet(BARS, filters=[("symbol", "in", ["BK", "BNY"])])
    raw = raw.assign(date=pd.to_datetime(raw["date"])).set_index(["symbol", "date"])["close"]
    px = ref_client.prices("BNY", start_date="2016-06-30", end_date="2016-06-30")
    assert px["close"].iloc[0] == pytest.approx(raw[("BK", pd.Timestamp("2016-06-30"))], abs=0.005)
    assert px["close"].iloc[0] != pytest.approx(raw[("BNY", pd.Timestamp("2016-06-30"))], abs=0.5)
    yahoo = ref_client.prices("AABA", start_date="2016-06-30", end_date="2016-06-30")  # pystock's YHOO
    assert yahoo["close"].iloc[0] == pytest.approx(37.56, abs=0.01)


def test_a_share_class_keeps_its_history_when_its_symbol_moves(ref_client):
    """Under Armour's Class A traded as UA until 2016-12-06, as UAA after; Class C took UA on 2016-12-07."""
    raw = pd.read_parquet(BARS, filters=[("symbol", "in", ["UA", "UAA"])])
    raw = raw.assign(date=pd.to_datetime(raw["date"])).set_index(["symbol", "date"])["close"]
    class_a = ref_client.prices("UAA", start_date="2016-03-01", end_date="2016-12-09")["close"].droplevel("ticker")
    # on today's basis: the Class C dividend of 2016-04-08 (one per Class A share) halves the earlier closes
    assert class_a[pd.Timestamp("2016-04-07")] == pytest.approx(raw[("UA", pd.Timestamp("2016-04-07"))] / 2)
    assert class_a[pd.Timestamp("2016-12-06")] == pytest.approx(raw[("UA", pd.Timestamp("2016-12-06"))])
    assert class_a[pd.Timestamp("2016-12-07")] == pytest.approx(raw[("UAA", pd.Timestamp("2016-12-07"))])
    assert (class_a.pct_change().dropna().abs() < 0.25).all()  # no jump where the symbol moved, nor at the dividend
    with pytest.warns(DateRangeWarning, match="UA's bars start on 2016-12-07"):
        class_c = ref_client.prices("UA", start_date="2016-01-01", end_date="2016-12-09")
    assert class_c.index.get_level_values("time").min() == pd.Timestamp("2016-12-07")


def test_the_members_of_2016_06_30_have_prices_and_statements(ref_client):
    """Dead and living members of that day under the tickers index_members gives: 482 of 505 have a bar and a
    quarterly statement filed by then (465 one for a quarter ending in the 200 days before); SOURCES.md names the
    rest and why (pystock has no 10-Q of the company by then, a second share class, no bar)."""
    members = ref_client.index_members("sp500", "2016-06-30").index.get_level_values("ticker").unique().tolist()
    px = ref_client.prices(members, start_date="2016-06-30", end_date="2016-06-30", errors="ignore")
    inc = ref_client.income_statements(
        members, period="quarterly", filing_date_lte="2016-06-30", limit=1, errors="ignore"
    )
    priced = set(px.dropna(subset=["close"]).index.get_level_values("ticker").astype(str))
    stated = set(inc.index.get_level_values("ticker").astype(str))
    both = priced & stated
    assert len(members) == 505 and len(both) >= 480, len(both)
    assert {"AABA", "EMC", "LLTC"} <= both  # companies that left: acquired (EMC, LLTC), renamed (Yahoo: AABA)


def test_todays_members_keep_their_history_and_reused_symbols_do_not(ref_client):
    """A. O. Smith, Domino's, Wabtec, Super Micro were no S&P 500 members in 2015-2017 but are the same companies:
    their bars stay. APP (American Apparel, now AppLovin's symbol), Q (Quintiles, now Qnity's), SNDK (the old
    SanDisk, now SNDK_2016) serve none of the old companies' 2015-2017 bars."""
    kept = ref_client.prices(["AOS", "DPZ", "WAB", "SMCI"], start_date="2016-06-30", end_date="2016-06-30")
    assert set(kept.index.get_level_values("ticker").astype(str)) == {"AOS", "DPZ", "WAB", "SMCI"}
    reused = ref_client.prices(["APP", "Q", "SNDK"], start_date="2015-03-20", end_date="2017-03-31", errors="ignore")
    assert reused.empty or reused.index.get_level_values("time").min() > pd.Timestamp("2017-03-31")
    old = ref_client.prices("SNDK_2016", start_date="2015-03-20", end_date="2016-05-11")
    assert len(old) > 200  # the old SanDisk, to its last bar of 2016
