"""Earnings release dates (refdata.earnings_dates): the stage on a fixture, and the served release dates against
the SEC's own submissions (8-K with Item 2.02), read with fresh code."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from fdkit.lake.io import default_data_dir, read_dataset
from refdata import earnings_dates, pipeline
from refdata.driver import run_stage

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "build" / "data-real"
SUBMISSIONS = Path(__file__).resolve().parents[2] / "shared" / "data-real" / "company" / "sec_submissions"
CIKS = {"AAPL": "0000320193", "MSFT": "0000789019", "NVDA": "0001045810", "TSLA": "0001318605"}


def test_the_stage_reads_the_release_dates():
    out = run_stage(earnings_dates.EARNINGS_DATES, pipeline.source_roots(FIXTURE), {})["earnings_dates"]
    assert out.columns.tolist() == ["ticker", "earnings_date"] and len(out) == 3
    reports = pd.DataFrame(
        {
            "ticker": ["MMM", "BRK-B", "MMM"],
            "report_period": pd.to_datetime(["2016-03-31", "2016-03-31", "2015-12-31"]),
            "filing_date": pd.to_datetime(["2016-05-03", "2016-05-06", "2016-02-09"]),
        }
    )
    got = earnings_dates.release_dates(reports, out)
    assert got.tolist() == [pd.Timestamp("2016-04-26"), pd.Timestamp("2016-05-06"), pd.Timestamp("2016-01-26")]


def test_every_release_is_before_its_filing_and_after_its_period():
    e = read_dataset(default_data_dir(), "earnings")
    known = e[e["release_date"].notna()]
    # the source dates the releases of today's S&P 500 companies: 80% of their records (dead ones have none)
    covered = e[e["ticker"].isin(set(known["ticker"]))]
    assert len(known) >= 0.8 * len(covered)
    assert ((known["release_date"] > known["report_period"]) & (known["release_date"] <= known["filing_date"])).all()


@pytest.mark.skipif(not SUBMISSIONS.exists(), reason="../shared/data-real is not beside this clone")
def test_release_dates_are_8k_item_2_02_filings_at_the_sec():
    e = read_dataset(default_data_dir(), "earnings")
    checked = 0
    for ticker, cik in sorted(CIKS.items()):
        sub = json.loads(gzip.open(SUBMISSIONS / f"CIK{cik}_{ticker}.json.gz").read())
        recent = pd.DataFrame(sub["filings"]["recent"])
        results = recent[(recent["form"] == "8-K") & recent["items"].str.contains("2.02", regex=False)]
        sec_days = set(pd.to_datetime(results["filingDate"]))
        ours = e.loc[(e["ticker"] == ticker) & (e["release_date"] >= min(sec_days)), "release_date"]
        assert set(ours) <= sec_days, (ticker, sorted(set(ours) - sec_days))
        checked += len(ours)
    assert checked >= 60  # the submissions' recent filings overlap the lake's reports (MSFT's end in 2016)
