"""Point-in-time universes over real HTTP: the members of an index on a day (dead and renamed companies included),
checked against a second, independent membership source, and a panel restricted to the members of each date."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import fdkit
from fdkit.errors import BadRequestError

SHARED = Path(__file__).resolve().parents[2] / "shared"
INTERVALS = SHARED / "data-real-4" / "index-membership-extra" / "sp500_history_intervals.csv"


def _tickers(members: pd.DataFrame) -> set[str]:
    return set(members.index.get_level_values("ticker"))


def test_members_on_a_day_include_companies_that_later_left(ref_client):
    m = ref_client.index_members("sp500", "2016-06-30")
    assert list(m.index.names) == ["ticker", "start_date"]
    assert 495 <= len(m) <= 510 and m.index.is_unique
    assert {"AAPL", "MSFT", "XOM"} <= _tickers(m)
    left = m[m["end_date"].notna()]
    assert len(left) >= 100  # acquired, delisted or dropped since: kept on the day they were members
    day = pd.Timestamp("2016-06-30")
    assert ((m.index.get_level_values("start_date") <= day) & (m["end_date"].isna() | (m["end_date"] >= day))).all()


def test_lehman_is_a_member_until_it_left_and_not_after(ref_client):
    before = ref_client.index_members("sp500", "2008-09-12")
    after = ref_client.index_members("sp500", "2008-09-16")
    assert "LEH" in _tickers(before) and "LEH" not in _tickers(after)


def test_a_renamed_company_is_listed_under_the_symbol_that_works_today(ref_client):
    m = ref_client.index_members("sp500", "2016-06-30").reset_index()
    meta = m[m["ticker"] == "META"]
    assert meta["ticker_then"].tolist() == ["FB"]
    assert len(ref_client.prices(meta["ticker"].tolist(), start_date="2016-06-28", end_date="2016-06-30")) == 3


def test_a_day_before_the_source_knows_the_index_is_refused(ref_client):
    with pytest.raises(BadRequestError, match="sp600 from 2021-03-31"):
        ref_client.index_members("sp1500", "2016-06-30")
    with pytest.raises(BadRequestError, match="sp500 from 2004-12-30"):
        ref_client.index_members("sp500", "2001-01-02")
    assert 1490 <= len(ref_client.index_members("sp1500", "2024-06-28")) <= 1530


@pytest.mark.skipif(not INTERVALS.exists(), reason="../shared/data-real-4 is not beside this clone")
@pytest.mark.parametrize("day", ["2016-06-30", "2020-06-30", "2024-06-28"])
def test_members_agree_with_an_independent_source(ref_client, day):
    """data-real-4 (index-constitution, today's tickers, its own exit conventions) read with fresh code.

    The sets differ where that source lists a merger's successor under the old company (BBT as TFC, BHI as BHGE's
    successor) or knows a rename the ticker-change table lacks (BLL -> BALL, ABC -> COR): at least 95% agree.
    """
    raw = pd.read_csv(INTERVALS, dtype=str, keep_default_na=False)
    t = pd.Timestamp(day)
    opt_in, opt_out = pd.to_datetime(raw["opt_in"]), pd.to_datetime(raw["opt_out"].replace("", None))
    theirs = set(raw.loc[(opt_in <= t) & (opt_out.isna() | (opt_out > t)), "symbol"].str.replace(".", "-"))
    ours = _tickers(ref_client.index_members("sp500", day))
    common = ours & theirs
    assert len(common) >= 0.95 * min(len(ours), len(theirs)), (sorted(ours - theirs), sorted(theirs - ours))


def test_a_panel_restricted_to_the_members_of_each_date(ref_client):
    px = ref_client.prices(["TSLA", "AAPL", "LEH"], start_date="2008-09-10", end_date="2008-09-17", errors="ignore")
    spells = ref_client.index_members("sp500")
    kept = px.fds.in_index("sp500", members=spells)
    assert set(kept.index.get_level_values("ticker")) <= {"AAPL", "LEH"}  # TSLA joined in 2020
    tsla = ref_client.prices("TSLA", start_date="2020-12-14", end_date="2020-12-31").fds.in_index("sp500", spells)
    assert tsla.index.get_level_values("time").min() == pd.Timestamp("2020-12-21")


def test_index_members_is_a_dataset_function_of_the_package():
    assert fdkit.index_members is not None and "index_members" in fdkit.__all__
