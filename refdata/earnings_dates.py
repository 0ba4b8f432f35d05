"""Earnings release dates: the day each quarterly report's results were announced (8-K, Item 2.02).

The source (package ``stocks-earnings-dates`` 0.1.9, in ``../shared/data-real-3/earnings-dates/``) lists, per
ticker of today's S&P 500, the filing dates of its 8-K reports with Item 2.02 (Results of Operations). A report's
release is the latest such date after its period ended and on or before its 10-Q/10-K was filed: companies
announce results first and file the report later (MMM's Q1 2016 results: released 2016-04-26, 10-Q filed
2016-05-03). A report with no release date in that interval keeps none (the research helpers then fall back to
the filing date, and say so).

Example:
    >>> dates = pd.DataFrame({"ticker": ["MMM", "MMM"], "earnings_date": ["2016-01-26", "2016-04-26"]})
    >>> reports = pd.DataFrame({"ticker": ["MMM", "MMM"],
    ...                         "report_period": pd.to_datetime(["2016-03-31", "2016-06-30"]),
    ...                         "filing_date": pd.to_datetime(["2016-05-03", "2016-08-02"])})
    >>> release_dates(reports, dates).dt.strftime("%Y-%m-%d").fillna("-").tolist()
    ['2016-04-26', '-']
"""

from __future__ import annotations

import pandas as pd

from refdata.stage import Context, Stage, intermediate

__all__ = ["EARNINGS_DATES", "STAGES", "release_dates"]

SOURCE = "data-real-3/earnings-dates/earnings_dates.csv"
#: how the release dates are described where they are served (SOURCES.md, the earnings provenance)
CITATION = (
    "../shared/data-real-3/earnings-dates/earnings_dates.csv (package stocks-earnings-dates 0.1.9: filing dates "
    "of 8-K reports with Item 2.02; no licence stated, the dates are facts of public SEC filings)"
)


def release_dates(reports: pd.DataFrame, dates: pd.DataFrame) -> pd.Series:
    """The release date of each report: the latest 8-K Item 2.02 date in ``(report_period, filing_date]``.

    Args:
        reports: ``ticker``, ``report_period``, ``filing_date`` (one row per report).
        dates: ``ticker``, ``earnings_date`` (text or dates).

    Returns:
        A ``datetime64`` series aligned to ``reports`` (NaT where no release falls in the interval).
    """
    d = pd.DataFrame(
        {
            "ticker": dates["ticker"].astype(str).str.replace(".", "-", regex=False),
            "release": pd.to_datetime(dates["earnings_date"]),
        }
    ).dropna()
    r = pd.DataFrame(
        {
            "ticker": reports["ticker"].astype(str),
            "start": pd.to_datetime(reports["report_period"]),
            "end": pd.to_datetime(reports["filing_date"]),
            "row": range(len(reports)),
        }
    )
    pairs = r.merge(d, on="ticker", how="inner")
    inside = pairs[(pairs["release"] > pairs["start"]) & (pairs["release"] <= pairs["end"])]
    latest = inside.groupby("row")["release"].max()
    return pd.Series(latest.reindex(range(len(reports))).to_numpy(), index=reports.index, dtype="datetime64[ns]")


def _earnings_dates(ctx: Context) -> dict[str, pd.DataFrame]:
    dates = pd.read_csv(ctx.source(SOURCE), dtype=str)
    return {"earnings_dates": dates[["ticker", "earnings_date"]]}


EARNINGS_DATES = Stage(
    "earnings_dates",
    "Earnings release dates (8-K Item 2.02 filing dates)",
    _earnings_dates,
    sources=(SOURCE,),
    outputs=(intermediate("earnings_dates"),),
)

STAGES = (EARNINGS_DATES,)
