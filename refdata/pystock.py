"""The broad universe's fundamentals: statement rows and vintages of the S&P 500 members from the pystock reports.

The SEC-derived pystock reports (2015-2017) were crawled daily: a report's first sighting is its filing day or
the day after. Quarterly and annual statement rows come from first sightings (cash flows are year-to-date in a
10-Q and are differenced within the fiscal year); every sighting that changed a value is a vintage. Per-share
values are put on the split basis of the lake.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from refdata.common import norm_ticker, split_factor, tuples, wanted_tickers
from refdata.concepts import MAX_FILING_LAG, fiscal_label
from refdata.pystock_identity import relabel
from refdata.stage import Context, Stage, intermediate

REPORTS = "data-real-2/fundamentals_pystock/pystock_sec_reports_asof_2015_2017.csv.gz"

_PYSTOCK_INCOME = {
    "revenues": "revenue",
    "op_income": "operating_income",
    "net_income": "net_income",
    "eps_basic": "earnings_per_share",
    "eps_diluted": "earnings_per_share_diluted",
    "dividend": "dividends_per_common_share",
}
_PYSTOCK_BALANCE = {
    "assets": "total_assets",
    "cur_assets": "current_assets",
    "cur_liab": "current_liabilities",
    "cash": "cash_and_equivalents",
    "equity": "shareholders_equity",
}
_PYSTOCK_CASH = {
    "cash_flow_op": "net_cash_flow_from_operations",
    "cash_flow_inv": "net_cash_flow_from_investing",
    "cash_flow_fin": "net_cash_flow_from_financing",
}


def read_reports(path: Path) -> pd.DataFrame:
    """The pystock reports file, its dates parsed.

    Args:
        path: the ``.csv.gz`` file.

    Returns:
        One row per (report, sighting).
    """
    return pd.read_csv(path, parse_dates=["end_date", "first_seen_date"])


#: sightings of one report whose total assets are below this share of the largest are another filer's
PARENT_ASSET_SHARE = 0.67


def parent_filer_only(p: pd.DataFrame) -> pd.DataFrame:
    """The sightings of the filer a symbol belongs to, where two filers' reports share it.

    The crawler filed a parent and its separately listed subsidiary under one symbol (NRG Energy and NRG Yield,
    Diamondback and Viper, HollyFrontier and Holly Energy Partners, PBF Energy and PBF Logistics, Noble Energy and
    Noble Midstream ...: 16 symbols), so a period has two reports that differ in every figure. The parent
    consolidates the subsidiary: its total assets are the larger, and the symbol is its. Sightings of a report
    (ticker, end date, form) whose assets are under :data:`PARENT_ASSET_SHARE` of the report's largest are dropped;
    a revision of one filer's report moves its assets far less. On a symbol found shared that way, a report only
    the subsidiary filed (NRG's 10-K for 2015 is NRG Yield's alone) is dropped too: its assets are under that share
    of the median of the parent's reports.

    Args:
        p: pystock report sightings (``ticker``, ``end_date``, ``doc_type``, ``assets``).

    Returns:
        The sightings kept.

    Example:
        >>> p = pd.DataFrame({"ticker": ["NRG"] * 4, "end_date": pd.to_datetime(["2015-03-31"] * 3 + ["2015-12-31"]),
        ...                   "doc_type": ["10-Q"] * 3 + ["10-K"], "assets": [6.6e9, 40.3e9, 40.4e9, 7.8e9]})
        >>> parent_filer_only(p)["assets"].tolist()
        [40300000000.0, 40400000000.0]
    """
    largest = p.groupby(["ticker", "end_date", "doc_type"])["assets"].transform("max")
    other = p["assets"] < PARENT_ASSET_SHARE * largest
    shared = set(p.loc[other, "ticker"])
    kept = p[~other]
    parent = kept[kept["ticker"].isin(shared)].groupby("ticker")["assets"].median()
    alone = kept["ticker"].map(parent) * PARENT_ASSET_SHARE > kept["assets"]
    return kept[~alone]


def broad_statements(reports: pd.DataFrame, tickers: set[str], splits: pd.DataFrame, max_lag: int) -> pd.DataFrame:
    """Annual and quarterly statement rows of ``tickers`` from the pystock reports, first sightings only.

    Quarters are labelled by the filer's fiscal calendar (3-month steps from the previous fiscal year end; where
    the source has no 10-K of the company, the year end its 10-Q's fiscal period focus implies);
    Q4 = FY - (Q1 + Q2 + Q3) for income flows and FY - 9M year-to-date for cash flows, only when the three
    quarters of the same fiscal year are there. Per-share values are put on the split basis.

    Args:
        reports: the pystock reports (:func:`read_reports`).
        tickers: the tickers to keep.
        splits: the split table.
        max_lag: the most days between a period's end and its first sighting.

    Returns:
        Statement rows (pystock fields only; derived fields are added by the statements stage).
    """
    p = reports.copy()
    p["ticker"] = norm_ticker(p["symbol"])
    # the first crawl day saw every report already filed: its sightings are no filing dates (and a split between
    # the filing and the crawl would put their per-share values on the wrong basis), so they are left out
    p = p[p["first_seen_date"] > p["first_seen_date"].min()]
    p = p[p["ticker"].isin(tickers) & ~p["amend"].astype(bool) & p["doc_type"].isin(["10-Q", "10-K"])]
    p = parent_filer_only(p)
    # a sighting dated before its period ends is another report under a wrong end date (NRG's FY2015 10-K seen
    # 2016-02-29 as ending 2016-12-31, every figure empty): it is no first sighting of that period
    lag = (p["first_seen_date"] - p["end_date"]).dt.days
    p = p[lag >= 1]
    p = p.sort_values(["ticker", "end_date", "doc_type", "first_seen_date"], kind="stable")
    p = p.drop_duplicates(["ticker", "end_date", "doc_type"], keep="first")
    lag = (p["first_seen_date"] - p["end_date"]).dt.days
    p = p[lag.between(1, max_lag)]
    k = split_factor(splits, p["ticker"], p["first_seen_date"])
    for src_col in ("eps_basic", "eps_diluted", "dividend"):
        p[src_col] = p[src_col] / k
    rows: list[dict] = []
    for ticker, g in p.groupby("ticker", sort=True):
        rows.extend(_ticker_rows(str(ticker), g))
    return pd.DataFrame(rows)


def _ticker_rows(ticker: str, g: pd.DataFrame) -> list[dict]:
    """The quarterly and annual rows of one ticker's first sightings (see :func:`broad_statements`)."""
    rows = []
    years = g[g["doc_type"] == "10-K"].sort_values("end_date")
    quarters = g[g["doc_type"] == "10-Q"].sort_values("end_date")
    fy_ends = list(years["end_date"])
    qrows = {}
    for r in tuples(quarters):
        fe = _fiscal_year_end(r.end_date, fy_ends) or _year_end_from_focus(r.end_date, r.period_focus)
        if fe is None:
            continue
        n = 4 - int(round((fe - r.end_date).days / (365.25 / 4)))
        if not 1 <= n <= 3:
            continue
        qrows[(fe, n)] = r
    for (fe, n), r in sorted(qrows.items(), key=lambda kv: kv[1].end_date):
        rec = _pystock_row(ticker, r, "quarterly", f"FY{fiscal_label(fe)}-Q{n}")
        for src_col, field in _PYSTOCK_CASH.items():  # year-to-date in a 10-Q
            ytd = getattr(r, src_col)
            if n == 1:
                rec[field] = ytd
            else:
                prev = qrows.get((fe, n - 1))
                rec[field] = ytd - getattr(prev, src_col) if prev is not None else np.nan
        rows.append(rec)
    for y in tuples(years):
        rows.append(_pystock_row(ticker, y, "annual", f"FY{fiscal_label(y.end_date)}"))
        qs = [qrows.get((y.end_date, n)) for n in (1, 2, 3)]
        if any(q is None for q in qs):
            continue
        rec = _pystock_row(ticker, y, "quarterly", f"FY{fiscal_label(y.end_date)}-Q4")
        for src_col, field in _PYSTOCK_INCOME.items():
            rec[field] = getattr(y, src_col) - sum(getattr(q, src_col) for q in qs)
        for src_col, field in _PYSTOCK_CASH.items():
            rec[field] = getattr(y, src_col) - getattr(qs[2], src_col)
        rows.append(rec)
    return rows


def pystock_vintages(reports: pd.DataFrame, tickers: set[str], splits: pd.DataFrame, max_lag: int) -> pd.DataFrame:
    """Every sighting of a pystock report whose value of a field differs from the previous sighting.

    Amended reports included. Income and cash-flow values of a 10-Q are the quarter's (cash flows: year to date,
    so they are left out); balance sheet values are period-end instants. The first sighting of each report is its
    first report, dated as in :func:`broad_statements`.

    Args:
        reports: the pystock reports (:func:`read_reports`).
        tickers: the tickers to keep.
        splits: the split table.
        max_lag: the most days between a period's end and its first sighting.

    Returns:
        ``ticker``, ``period``, ``report_period``, ``field``, ``value``, ``filing_date``, ``accession_number``,
        ``form_type``.
    """
    p = reports.copy()
    p["ticker"] = norm_ticker(p["symbol"])
    p = p[
        (p["first_seen_date"] > p["first_seen_date"].min())
        & p["ticker"].isin(tickers)
        & p["doc_type"].isin(["10-Q", "10-K"])
    ]
    p = parent_filer_only(p)
    p = p[(p["first_seen_date"] - p["end_date"]).dt.days >= 1]
    first = p.groupby(["ticker", "end_date", "doc_type"])["first_seen_date"].transform("min")
    p = p[(first - p["end_date"]).dt.days <= max_lag]
    k = split_factor(splits, p["ticker"], p["first_seen_date"])
    for src_col in ("eps_basic", "eps_diluted", "dividend"):
        p[src_col] = p[src_col] / k
    parts = []
    for cols, which in ((_PYSTOCK_INCOME, "flow"), (_PYSTOCK_BALANCE, "instant")):
        for src_col, field in cols.items():
            period = np.where(which == "instant", "instant", np.where(p["doc_type"] == "10-K", "annual", "quarterly"))
            parts.append(
                pd.DataFrame(
                    {
                        "ticker": p["ticker"].to_numpy(),
                        "period": period,
                        "report_period": p["end_date"].to_numpy(),
                        "field": field,
                        "value": p[src_col].to_numpy(dtype=float),
                        "filing_date": p["first_seen_date"].to_numpy(),
                        "accession_number": None,
                        "form_type": np.where(p["amend"].astype(bool), p["doc_type"] + "/A", p["doc_type"]),
                    }
                )
            )
    annual_cash = p[p["doc_type"] == "10-K"]
    annual_form = np.where(annual_cash["amend"].astype(bool), "10-K/A", "10-K")
    for src_col, field in _PYSTOCK_CASH.items():  # a 10-K's cash flows are the year's
        parts.append(
            pd.DataFrame(
                {
                    "ticker": annual_cash["ticker"].to_numpy(),
                    "period": "annual",
                    "report_period": annual_cash["end_date"].to_numpy(),
                    "field": field,
                    "value": annual_cash[src_col].to_numpy(dtype=float),
                    "filing_date": annual_cash["first_seen_date"].to_numpy(),
                    "accession_number": None,
                    "form_type": annual_form,
                }
            )
        )
    return pd.concat(parts, ignore_index=True).dropna(subset=["value"])


def _fiscal_year_end(end: pd.Timestamp, fy_ends: list[pd.Timestamp]) -> pd.Timestamp | None:
    """The end of the fiscal year a quarter ending on ``end`` falls in (52/53-week years: a week of slack)."""
    for fe in fy_ends:
        if -7 <= (fe - end).days < 375:
            return fe
    if fy_ends:  # after the last 10-K: the next year ends a year (give or take a week) later
        fe = fy_ends[-1]
        while (fe - end).days < -7:
            fe = fe + pd.DateOffset(years=1)
        return fe
    return None


def _year_end_from_focus(end: pd.Timestamp, focus: object) -> pd.Timestamp | None:
    """A fiscal year's end from a 10-Q's own fiscal period focus (``Q1``..``Q3``).

    Where no 10-K of the company is in the source: its quarter end plus the quarters left (ADBE's Q1 ending
    2016-03-04: about 2016-12-04).

    Example:
        >>> _year_end_from_focus(pd.Timestamp("2016-03-04"), "Q1")
        Timestamp('2016-12-04 00:00:00')
    """
    if not isinstance(focus, str) or focus not in ("Q1", "Q2", "Q3"):
        return None
    return end + pd.DateOffset(months=3 * (4 - int(focus[1])))


def _pystock_row(ticker: str, r, period: str, fiscal_period: str) -> dict:
    rec = {
        "ticker": ticker,
        "report_period": r.end_date,
        "period": period,
        "fiscal_period": fiscal_period,
        "currency": "USD",
        "filing_date": r.first_seen_date,
        "accession_number": None,
        "form_type": r.doc_type,
    }
    for src_col, field in {**_PYSTOCK_INCOME, **_PYSTOCK_BALANCE, **_PYSTOCK_CASH}.items():
        v = getattr(r, src_col)
        rec[field] = float(v) if v == v else np.nan
    return rec


def _pystock(ctx: Context) -> dict[str, pd.DataFrame]:
    reports = read_reports(ctx.source(REPORTS))
    # a report belongs to the company that held its symbol when it was first seen (WTW's are Weight Watchers')
    reports = relabel(reports.assign(ticker=norm_ticker(reports["symbol"])), ctx["pystock_owners"], "first_seen_date")
    reports["symbol"] = reports["ticker"]
    wanted = wanted_tickers(ctx["pystock_owners"], ctx["prices_main"])
    splits = ctx["splits"]
    return {
        "pystock_statements": broad_statements(reports, wanted, splits, MAX_FILING_LAG),
        "pystock_vintages": pystock_vintages(reports, wanted, splits, MAX_FILING_LAG),
    }


PYSTOCK_FUNDAMENTALS = Stage(
    "pystock_fundamentals",
    "Statement rows and vintages of the S&P 500 members of 2015-2017 and today from the pystock reports",
    _pystock,
    sources=(REPORTS,),
    needs=("pystock_owners", "prices_main", "splits"),
    outputs=(intermediate("pystock_statements"), intermediate("pystock_vintages")),
)

STAGES = (PYSTOCK_FUNDAMENTALS,)
