"""The SEC Financial Statement Data Sets stage: the lake's 2009-2010 rows against the raw ``num`` table.

The expected values are read from the raw parquet files with plain pandas here, independently of
:mod:`refdata.fsds`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fdkit.lake.io import default_data_dir, read_dataset
from refdata import fsds

FOLDER = Path(__file__).resolve().parents[1].parent / "shared" / "data-real-2" / "fundamentals_fsds"
pytestmark = pytest.mark.skipif(not FOLDER.is_dir(), reason="the FSDS source folder is not beside the checkout")


@pytest.fixture(scope="module")
def raw() -> tuple[pd.DataFrame, pd.DataFrame]:
    sub = pd.read_parquet(FOLDER / "sec_fsds_sub.parquet")
    num = pd.read_parquet(FOLDER / "sec_fsds_num_2009q3_2010q2.parquet")
    return sub, num


@pytest.fixture(scope="module")
def lake_rows() -> pd.DataFrame:
    inc = read_dataset(default_data_dir(), "income_statements")
    bs = read_dataset(default_data_dir(), "balance_sheets")
    key = ["ticker", "period", "report_period"]
    rows = inc.merge(bs[[*key, "total_assets"]], on=key)
    rows = rows.assign(ticker=rows["ticker"].astype(str), period=rows["period"].astype(str))
    return rows[rows["report_period"].between("2009-01-01", "2010-12-31")]


def _raw_value(num: pd.DataFrame, adsh: str, tag: str, ddate: int, qtrs: int) -> float:
    hit = num[
        (num["adsh"] == adsh)
        & (num["tag"] == tag)
        & (num["ddate"] == ddate)
        & (num["qtrs"] == qtrs)
        & num["segments"].isna()
        & num["coreg"].isna()
    ]
    assert len(hit) == 1, (adsh, tag, ddate, qtrs, len(hit))
    return float(hit["value"].iloc[0])


def test_hand_picked_values(raw, lake_rows):
    sub, num = raw
    msft = lake_rows[(lake_rows["ticker"] == "MSFT") & (lake_rows["fiscal_period"] == "FY2010-Q2")].iloc[0]
    assert msft["revenue"] == 19_022_000_000 == _raw_value(num, msft["accession_number"], "Revenues", 20091231, 1)
    assert str(msft["filing_date"].date()) == "2010-01-28"
    aapl_filing = sub[(sub["cik"] == 320193) & (sub["filed"] == 20100125) & (sub["form"] == "10-Q")]["adsh"].iloc[0]
    assert _raw_value(num, aapl_filing, "SalesRevenueNet", 20091231, 1) == 15_683_000_000
    aapl = lake_rows[(lake_rows["ticker"] == "AAPL") & (lake_rows["fiscal_period"] == "FY2010-Q1")].iloc[0]
    assert aapl["revenue"] == 15_683_000_000  # AAPL's row comes from companyfacts: the same filing's value


def test_a_random_sample_is_the_filings_own_period(raw, lake_rows):
    sub, num = raw
    own = lake_rows[lake_rows["accession_number"].isin(set(sub["adsh"]))]
    own = own[~own["ticker"].isin(["AAPL", "NVDA", "GOOGL", "TSLA"])]  # companyfacts rows: the XBRL stage's
    assert len(own) > 400
    meta = sub.set_index("adsh")
    checked = 0
    for r in own.sample(40, random_state=7).itertuples(index=False):
        s = meta.loc[r.accession_number]
        assert str(s["form"]) in ("10-K", "10-Q") and int(s["filed"]) == int(r.filing_date.strftime("%Y%m%d"))
        assert int(s["period"]) == int(r.report_period.strftime("%Y%m%d"))  # the filing's own period, no comparative
        qtrs = 4 if r.period == "annual" else 1
        for field, instant in (("revenue", False), ("net_income", False), ("total_assets", True)):
            value = getattr(r, field)
            if pd.isna(value):
                continue
            cands = num[
                (num["adsh"] == r.accession_number)
                & num["tag"].isin(fsds.CONCEPTS[field])
                & (num["ddate"] == int(s["period"]))
                & (num["qtrs"] == (0 if instant else qtrs))
                & num["segments"].isna()
                & num["coreg"].isna()
            ]
            if field == "revenue" and cands.empty:
                continue  # a year-to-date difference (checked by the stage's own test below)
            assert value in set(cands["value"].astype(float)), (r.ticker, r.fiscal_period, field, value)
            checked += 1
    assert checked > 60


def test_every_row_is_of_a_filer_the_lake_knows_by_cik(raw, lake_rows):
    sub, _ = raw
    members = read_dataset(default_data_dir(), "index_membership").dropna(subset=["cik"])
    own = lake_rows[lake_rows["accession_number"].isin(set(sub["adsh"]))]
    own = own[~own["ticker"].isin(["AAPL", "NVDA", "GOOGL", "TSLA"])]
    filer = own["accession_number"].map(sub.set_index("adsh")["cik"]).astype(int)
    served = members["current_ticker"].fillna(members["ticker"]).astype(str)
    known = set(zip(members["cik"].astype(int), served, strict=True))
    # the lake's one CIK per ticker may be today's list's rather than the filer's (XOM); all others match
    mismatched = [(c, t) for c, t in zip(filer, own["ticker"], strict=True) if (c, t) not in known]
    assert len({t for _, t in mismatched}) <= 3, mismatched[:10]


def test_year_to_date_flows_are_differenced_within_the_fiscal_year():
    filings = pd.DataFrame(
        {
            "adsh": ["q2", "q3"],
            "ticker": ["X", "X"],
            "cik": ["1", "1"],
            "form": ["10-Q"] * 2,
            "end": pd.to_datetime(["2009-12-31", "2010-03-31"]),
            "fy_end": pd.to_datetime(["2010-06-30"] * 2),
            "n": [2, 3],
            "filed": pd.to_datetime(["2010-01-28", "2010-04-22"]),
            "accepted": None,
        }
    )
    values = pd.DataFrame(
        {
            "adsh": ["q2", "q3", "q3", "q2", "q3"],
            "field": ["net_cash_flow_from_operations"] * 2 + ["revenue", "revenue", "revenue"],
            "tag": ["NetCashProvidedByUsedInOperatingActivities"] * 2 + ["Revenues"] * 3,
            "qtrs": [2, 3, 3, 1, 1],
            "value": [10.0, 16.0, 40.0, 19.0, 14.0],
            "rank": 0,
        }
    )
    rows = fsds.statement_rows(values, filings, pd.DataFrame(columns=["ticker", "date", "ratio"]))
    q3 = rows[rows["fiscal_period"] == "FY2010-Q3"].iloc[0]
    assert q3["net_cash_flow_from_operations"] == 6.0 and q3["revenue"] == 14.0  # direct 3-month value wins
    assert rows[rows["fiscal_period"] == "FY2010-Q2"]["net_cash_flow_from_operations"].isna().all()  # no Q1 filing
