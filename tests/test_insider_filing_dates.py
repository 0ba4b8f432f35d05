"""Insider trades with filing dates: exact where a source fixes them, else a conservative bound, and which it is.

The SEC's own Form 3/4/5 index of 2024Q3 is read here with plain pandas (not the build's code) to check the exact
dates of that quarter; the served rows come through the client and the plain wire.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import requests

SEC = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data-real-6"
    / "insider-form4-filing-dates"
    / ("sec_form345_2024q3_form4_submissions.csv.gz")
)
KINDS = {"exact", "upper_bound", "lower_bound", "implausible"}


def test_nvda_since_2024_has_rows_each_with_a_filing_date_and_its_kind(ref_client):
    t = ref_client.insider_trades("NVDA", filing_date_gte="2024-01-01", limit=None)
    assert len(t) > 100
    filed = t.index.get_level_values("filing_date")
    assert filed.notna().all() and (filed >= pd.Timestamp("2024-01-01")).all()
    assert set(t["filing_date_kind"].astype(str)) <= {"exact", "upper_bound"} and "exact" in set(
        t["filing_date_kind"].astype(str)
    )
    # a filing date is on or after its transaction (a bound too: the window's end), within the 90-day rule
    lag = (filed - t["transaction_date"]).dt.days
    assert lag.between(0, 90).all()


def test_the_newest_ten_are_the_newest_filings(ref_server):
    r = requests.get(
        ref_server.base_url + "/insider-trades",
        params={"ticker": "AAPL", "limit": 10},
        headers={"X-API-KEY": ref_server.api_key},
        timeout=30,
    )
    rows = r.json()["insider_trades"]
    dates = [row["filing_date"] for row in rows]
    assert len(rows) == 10 and all(dates) and dates == sorted(dates, reverse=True)
    assert dates[0] >= "2026-01-01" and all(row["filing_date_kind"] in KINDS for row in rows)


@pytest.mark.skipif(not SEC.exists(), reason="needs ../shared/data-real-6")
def test_50_sampled_exact_dates_of_2024q3_are_the_sec_index_dates(ref_client):
    sec = pd.read_csv(SEC, dtype=str)
    sec = sec[sec["document_type"].isin(["4", "4/A"])]
    symbol = sec["issuertradingsymbol"].str.upper().str.replace(".", "-", regex=False)
    known = set(zip(symbol, sec["period_of_report"], sec["filing_date"], strict=True))
    tickers = sorted(set(symbol) & set(ref_client.available("prices")))[:150]
    t = ref_client.insider_trades(
        tickers, filing_date_gte="2024-07-01", filing_date_lte="2024-09-30", limit=None, errors="ignore"
    )
    exact = t[t["filing_date_kind"].astype(str) == "exact"].reset_index()
    assert len(exact) >= 50
    sample = exact.sample(50, random_state=20261202)
    got = list(
        zip(
            sample["ticker"].astype(str),
            sample["transaction_date"].dt.strftime("%Y-%m-%d"),
            sample["filing_date"].dt.strftime("%Y-%m-%d"),
            strict=True,
        )
    )
    assert [g for g in got if g not in known] == []


def test_an_upper_bound_is_never_before_the_transaction_and_implausible_dates_are_not_served(ref_client):
    t = ref_client.insider_trades(["MSFT", "JPM", "KO"], limit=None)
    kind = t["filing_date_kind"].astype("string")
    filed = t.index.get_level_values("filing_date")
    assert filed[(kind == "implausible").fillna(False).to_numpy()].isna().all()
    bound = (kind == "upper_bound").fillna(False).to_numpy()
    assert bound.any() and (filed[bound] >= t["transaction_date"][bound]).all()
