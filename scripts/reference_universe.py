"""The broad universe and corporate actions of the reference lake (used by ``build_reference_data.py``).

* **Splits** (``splits`` dataset): one row per (ticker, ex-date) with the ratio of new to old shares, from three
  independent sources, in order of precedence: the community split table (distribution date -> the next trading
  day is the ex-date), LEAN factor files (a change of split factor), and the raw/adjusted close pairs of the
  pystock prices (the day before an event its adjusted close carries the event's price factor; a factor within 1%
  of q/p, p and q at most 10, is a p-for-q split; other factors are dividends or spin-offs, not splits). Only
  splits on or before the price basis date are kept: everything in the lake is on the share basis of that day.
* **Per-share basis**: a value reported in a filing is on the share basis of its filing day; dividing per-share
  values (and multiplying share counts) by the splits between the filing day and the basis date puts them on the
  price basis. :func:`split_factor` is that product.
* **Broad universe** (S&P 500 members, by the constituents list's CIKs): quarterly and annual statements from the
  SEC-derived pystock reports (first sighting = filing date or the day after; cash flows are year-to-date in a
  10-Q and are differenced within the fiscal year), and daily bars 2015-03-20 .. 2017-03-31 from raw closes on
  the split basis (not dividend-adjusted).
* **Labor** (``labor`` dataset): FRED/BLS series with the change from the previous observation by date.

Nothing here is invented: values are copied, re-based by the split table, or differenced.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from fdkit.frames import basis

#: everything in the lake is on the share basis of this day (the last bar of the main price source)
BASIS_DATE = pd.Timestamp("2026-02-25")

#: FRED/BLS labour-market series served by /macro/labor (series id -> lake series name)
LABOR_SERIES = {
    "PAYEMS": "nonfarm_payrolls",
    "UNRATE": "unemployment_rate",
    "U6RATE": "u6_unemployment_rate",
    "CIVPART": "labor_force_participation_rate",
    "AHETPI": "average_hourly_earnings",
    "JTSJOL": "job_openings",
    "ICSA": "initial_jobless_claims",
}


#: broad-universe price series left out, and why (found by the lake's daily-move invariant)
EXCLUDED_PRICES = {
    "MS": "the source mixes in another security's bars under MS (2017-02-14/15 at ~25.6 among ~45)",
    "NEE": "the source mixes in another security's bars under NEE (months at ~23-30 among ~110-125)",
}


def _norm_ticker(t: pd.Series) -> pd.Series:
    """Class shares are spelled with a dash (BRK-B), as the price sources and the service spell them."""
    return t.astype(str).str.strip().str.upper().str.replace(".", "-", regex=False)


def _nice_ratio(x: float, tolerance: float = 0.03) -> Fraction | None:
    if not np.isfinite(x) or x <= 0:
        return None
    f = Fraction(x).limit_denominator(10)
    if f.numerator <= 10 and f != 1 and abs(float(f) - x) <= tolerance * x:
        return f
    return None


def build_splits(src: Path, src2: Path, calendar: pd.DatetimeIndex, raw: pd.DataFrame) -> pd.DataFrame:
    """The split table: ticker, date (ex-date), ratio (new shares per old share), source.

    Args:
        src: the data-real folder (LEAN factor files).
        src2: the data-real-2 folder (community split table).
        calendar: trading days (sorted, tz-naive) to find the ex-date after a distribution date.
        raw: raw daily closes with Yahoo adjusted closes (``ticker``, ``date``, ``close``, ``adj_close``).
    """

    def next_trading_day(day: pd.Timestamp) -> pd.Timestamp:
        pos = calendar.searchsorted(day, side="right")
        if day < calendar[0] or pos >= len(calendar):
            return day + pd.offsets.BDay(1)
        return calendar[pos]

    rows = []
    cs = pd.read_csv(src2 / "corporate_actions/stock_splits_2015_2026_coffee-cpu.csv", parse_dates=["date"])
    for r in cs.itertuples(index=False):
        ex = next_trading_day(r.date)
        rows.append({"ticker": r.symbol, "date": ex, "ratio": float(r.ratioNew) / float(r.ratioOld),
                     "source": "split table (coffee-cpu)"})  # fmt: skip
    lean = pd.read_csv(src / "prices/lean_factor_files.csv", dtype={"date": str})
    lean["date"] = pd.to_datetime(lean["date"], format="%Y%m%d")
    for t, g in lean.sort_values(["ticker", "date"]).groupby("ticker"):
        f = g["split_factor"].to_numpy()
        for i in range(len(g) - 1):
            if f[i + 1] != f[i] and g["date"].iloc[i] < BASIS_DATE:
                ex = next_trading_day(g["date"].iloc[i])
                ratio = _nice_ratio(f[i + 1] / f[i])
                if ratio is not None:
                    rows.append({"ticker": {"FB": "META"}.get(t, t), "date": ex, "ratio": float(ratio),
                                 "source": "LEAN factor file"})  # fmt: skip
    # a crawl adjusted the closes of the days before it for the events up to the crawl, and each day kept its
    # latest crawl: around an event, adj_close / close is the event's price factor (1/n for an n-for-1 split) on
    # the day or two before it. The ex-date is the day within three of that whose raw close moves by the ratio.
    raw = raw.sort_values(["ticker", "date"]).reset_index(drop=True)
    factor = raw["adj_close"] / raw["close"]
    move = raw.groupby("ticker")["close"].shift() / raw["close"]  # the raw close's drop into each day
    jump = factor.notna() & ((factor < 0.7) | (factor > 1.4))
    for i in np.flatnonzero(jump.to_numpy()):
        ratio = _nice_ratio(1.0 / float(factor.iloc[i]), tolerance=0.01)  # a spin-off's factor is seldom that close
        if ratio is None:
            continue
        near = raw.index[(raw.index >= i - 3) & (raw.index <= i + 3) & (raw["ticker"] == raw["ticker"].iloc[i])]
        fit = (move.loc[near] / float(ratio) - 1).abs()
        if fit.notna().any() and fit.min() < 0.1:
            j = fit.idxmin()
            rows.append({"ticker": raw["ticker"].iloc[j], "date": raw["date"].iloc[j], "ratio": float(ratio),
                         "source": "raw vs adjusted close (pystock prices)"})  # fmt: skip
    df = pd.DataFrame(rows)
    df["ticker"] = _norm_ticker(df["ticker"])
    df = df[df["date"] <= BASIS_DATE]
    # one split per (ticker, ex-date within 5 days): the first source in precedence order wins
    df = df.reset_index(drop=True).reset_index(names="order").sort_values(["ticker", "date", "order"])
    keep = []
    last: dict[str, pd.Timestamp] = {}
    for r in df.itertuples(index=False):
        if r.ticker in last and (r.date - last[r.ticker]).days <= 5:
            continue
        last[r.ticker] = r.date
        keep.append(r.order)
    out = df.set_index("order").loc[keep].sort_values(["ticker", "date"]).reset_index(drop=True)
    return out[["ticker", "date", "ratio", "source"]]


#: the day the 2003-2023 Yahoo download was split-adjusted to (its last session)
YAHOO_2023_BASIS = "2023-10-27"
#: adj_close / close steps by less than this between days without an event (float rounding of the file)
_FACTOR_NOISE = 1e-5


def build_dividends(src: Path, splits: pd.DataFrame) -> pd.DataFrame:
    """Cash dividends per share by ex-date (2003-10-31 .. 2023-10-27), on the split basis of the lake's prices.

    Yahoo's ``adj_close`` is the close times a factor that steps on each ex-date by ``1 - dividend / previous
    close`` (the file's closes are split-adjusted, so splits do not move it). Where the factor steps by more than
    the file's rounding (1e-5), the step gives the dividend: ``previous close x (1 - step)`` on the file's split
    basis (2023-10-27). It is put on the ex-date's basis and rounded to 4 decimals as paid (the file's 6-decimal
    prices leave an error of about 2e-7 x the close: AAPL's 2.65 of 2012 reads 2.6501), then on the lake's basis
    (every split in the split table), as prices are.

    Returns:
        ``ticker``, ``date`` (ex-date), ``dividend`` (per share), ``source``.
    """
    d = pd.read_csv(src / "prices/us_equities_daily_2003_2023.csv.gz", parse_dates=["date"])
    d = d[~d["ticker"].str.startswith("^")].sort_values(["ticker", "date"], kind="stable").reset_index(drop=True)
    factor = d["adj_close"] / d["close"]
    step = factor.groupby(d["ticker"]).shift(1) / factor
    previous = d["close"].groupby(d["ticker"]).shift(1)
    event = (1 - step) > _FACTOR_NOISE
    out = pd.DataFrame({"ticker": d.loc[event, "ticker"], "date": d.loc[event, "date"],
                        "dividend": (previous * (1 - step))[event],
                        "source": "Yahoo adjusted close (derived)"}).reset_index(drop=True)  # fmt: skip
    tickers, days = out["ticker"].to_numpy(dtype=str), out["date"].to_numpy(dtype="datetime64[ns]")
    as_paid = (out["dividend"] * basis.split_factor(tickers, days, YAHOO_2023_BASIS, splits)).round(4)
    out["dividend"] = as_paid / basis.split_factor(tickers, days, BASIS_DATE.strftime("%Y-%m-%d"), splits)
    return out


def split_factor(splits: pd.DataFrame, tickers: pd.Series, dates: pd.Series) -> np.ndarray:
    """Product of the split ratios with an ex-date after each date (up to the basis date).

    A value reported or traded on ``date`` is on that day's share basis; divide per-share values (multiply share
    counts) by this factor to put them on the basis of :data:`BASIS_DATE`.

    Example:
        >>> s = pd.DataFrame({"ticker": ["X", "X"], "date": pd.to_datetime(["2020-01-02", "2022-01-03"]),
        ...                   "ratio": [2.0, 3.0]})
        >>> split_factor(s, pd.Series(["X", "X", "X", "Y"]),
        ...              pd.Series(pd.to_datetime(["2019-12-31", "2020-01-02", "2023-01-01", "2019-01-01"])))
        array([6., 3., 1., 1.])
    """
    days = pd.to_datetime(pd.Series(np.asarray(dates))).astype("datetime64[ns]").to_numpy()
    return basis.split_factor(np.asarray(tickers.astype(str)), days, BASIS_DATE.strftime("%Y-%m-%d"), splits)


def adjust_facts_for_splits(facts: pd.DataFrame, splits: pd.DataFrame) -> pd.DataFrame:
    """Per-share facts (USD/shares) divided and share counts (shares) multiplied by the splits after filing."""
    facts = facts.copy()
    k = split_factor(splits, facts["ticker"], facts["filed"])
    per_share = facts["unit"].eq("USD/shares").to_numpy()
    shares = facts["unit"].eq("shares").to_numpy()
    vals = facts["val"].astype(float).to_numpy()
    vals = np.where(per_share, vals / k, np.where(shares, vals * k, vals))
    facts["val"] = vals
    return facts


def raw_prices(src2: Path) -> pd.DataFrame:
    """The pystock daily bars (raw OHLC, Yahoo adjusted close), tickers spelled as the lake spells them."""
    df = pd.read_parquet(src2 / "prices/pystock_us_equities_daily_2015_2017.parquet")
    df = df.rename(columns={"symbol": "ticker"})
    df["ticker"] = _norm_ticker(df["ticker"])
    df["date"] = pd.to_datetime(df["date"])
    for c in ("open", "high", "low", "close", "adj_close"):
        df[c] = df[c].astype("float64")
    return df


def universe(src: Path) -> pd.DataFrame:
    """S&P 500 members (ticker, cik) from the constituents list."""
    sp = pd.read_csv(src / "company/sp500_constituents.csv", dtype=str)
    return pd.DataFrame({"ticker": _norm_ticker(sp["Symbol"]), "cik": sp["CIK"].str.zfill(10),
                         "name": sp["Security"], "sector": sp["GICS Sector"],
                         "industry": sp["GICS Sub-Industry"], "location": sp["Headquarters Location"]})  # fmt: skip


#: the list date of company/sp500_constituents.csv (its repository commit, data-real/SOURCES.md)
CONSTITUENTS_AS_OF = "2026-08-08"


def index_membership(src: Path) -> pd.DataFrame:
    """SPY's holdings as index membership: every S&P 500 member (the fund replicates the index).

    The constituents list names members, not the fund's filed positions: weight, market value and shares are
    missing, not invented.
    """
    sp = pd.read_csv(src / "company/sp500_constituents.csv", dtype=str)
    return pd.DataFrame({"fund": "SPY", "fund_name": "SPDR S&P 500 ETF Trust", "fund_cik": "0000884394",
                         "ticker": _norm_ticker(sp["Symbol"]), "name": sp["Security"], "cusip": None, "isin": None,
                         "weight": np.nan, "market_value": np.nan, "shares": np.nan, "asset_class": "equity",
                         "as_of": pd.Timestamp(CONSTITUENTS_AS_OF), "filing_date": pd.NaT,
                         "resolution_status": "resolved"}).sort_values("ticker", ignore_index=True)  # fmt: skip


def broad_prices(raw: pd.DataFrame, tickers: set[str], splits: pd.DataFrame) -> pd.DataFrame:
    """Daily bars of ``tickers`` on the split basis of :data:`BASIS_DATE` (raw prices / later splits)."""
    df = raw[raw["ticker"].isin(tickers)].copy()
    df = df.dropna(subset=["close"])
    df = df[(df["close"] > 0) & (df["date"].dt.day_of_week < 5)]
    k = split_factor(splits, df["ticker"], df["date"])
    for c in ("open", "high", "low", "close"):
        df[c] = (df[c] / k).round(4)
    df["volume"] = (df["volume"].astype(float) * k).round().astype("Int64")
    df["time"] = df["date"].dt.tz_localize("UTC")
    return df[["ticker", "time", "open", "high", "low", "close", "volume"]].reset_index(drop=True)


_PYSTOCK_INCOME = {"revenues": "revenue", "op_income": "operating_income", "net_income": "net_income",
                   "eps_basic": "earnings_per_share", "eps_diluted": "earnings_per_share_diluted",
                   "dividend": "dividends_per_common_share"}  # fmt: skip
_PYSTOCK_BALANCE = {"assets": "total_assets", "cur_assets": "current_assets", "cur_liab": "current_liabilities",
                    "cash": "cash_and_equivalents", "equity": "shareholders_equity"}  # fmt: skip
_PYSTOCK_CASH = {"cash_flow_op": "net_cash_flow_from_operations", "cash_flow_inv": "net_cash_flow_from_investing",
                 "cash_flow_fin": "net_cash_flow_from_financing"}  # fmt: skip
_PER_SHARE = ("earnings_per_share", "earnings_per_share_diluted", "dividends_per_common_share")


def broad_statements(src2: Path, tickers: set[str], splits: pd.DataFrame, max_lag: int) -> pd.DataFrame:
    """Annual and quarterly statement rows of ``tickers`` from the pystock reports, first sightings only.

    Quarters are labelled by the filer's fiscal calendar (3-month steps from the previous fiscal year end);
    Q4 = FY - (Q1 + Q2 + Q3) for income flows and FY - 9M year-to-date for cash flows, only when the three
    quarters of the same fiscal year are there. Per-share values are put on the split basis.
    """
    p = pd.read_csv(src2 / "fundamentals_pystock/pystock_sec_reports_asof_2015_2017.csv.gz",
                    parse_dates=["end_date", "first_seen_date"])  # fmt: skip
    p["ticker"] = _norm_ticker(p["symbol"])
    # the first crawl day saw every report already filed: its sightings are no filing dates (and a split between
    # the filing and the crawl would put their per-share values on the wrong basis), so they are left out
    p = p[p["first_seen_date"] > p["first_seen_date"].min()]
    p = p[p["ticker"].isin(tickers) & ~p["amend"].astype(bool) & p["doc_type"].isin(["10-Q", "10-K"])]
    p = p.sort_values(["ticker", "end_date", "doc_type", "first_seen_date"], kind="stable")
    p = p.drop_duplicates(["ticker", "end_date", "doc_type"], keep="first")
    lag = (p["first_seen_date"] - p["end_date"]).dt.days
    p = p[lag.between(1, max_lag)]
    k = split_factor(splits, p["ticker"], p["first_seen_date"])
    for src_col in ("eps_basic", "eps_diluted", "dividend"):
        p[src_col] = p[src_col] / k
    rows = []
    for ticker, g in p.groupby("ticker", sort=True):
        years = g[g["doc_type"] == "10-K"].sort_values("end_date")
        quarters = g[g["doc_type"] == "10-Q"].sort_values("end_date")
        fy_ends = list(years["end_date"])
        qrows = {}
        for r in quarters.itertuples(index=False):
            fe = _fiscal_year_end(r.end_date, fy_ends)
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
        for y in years.itertuples(index=False):
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
    return pd.DataFrame(rows)


def pystock_vintages(src2: Path, tickers: set[str], splits: pd.DataFrame, max_lag: int) -> pd.DataFrame:
    """Every sighting of a pystock report whose value of a field differs from the previous sighting (amended
    reports included): ticker, period, report_period, field, value, filing_date, accession_number, form_type.

    Income and cash-flow values of a 10-Q are the quarter's (cash flows: year to date, so they are left out);
    balance sheet values are period-end instants. The first sighting of each report is its first report, dated
    as in :func:`broad_statements`."""
    p = pd.read_csv(src2 / "fundamentals_pystock/pystock_sec_reports_asof_2015_2017.csv.gz",
                    parse_dates=["end_date", "first_seen_date"])  # fmt: skip
    p["ticker"] = _norm_ticker(p["symbol"])
    p = p[(p["first_seen_date"] > p["first_seen_date"].min()) & p["ticker"].isin(tickers)
          & p["doc_type"].isin(["10-Q", "10-K"])]  # fmt: skip
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
            parts.append(pd.DataFrame({"ticker": p["ticker"].to_numpy(), "period": period,
                                       "report_period": p["end_date"].to_numpy(), "field": field,
                                       "value": p[src_col].to_numpy(dtype=float),
                                       "filing_date": p["first_seen_date"].to_numpy(), "accession_number": None,
                                       "form_type": np.where(p["amend"].astype(bool), p["doc_type"] + "/A",
                                                             p["doc_type"])}))  # fmt: skip
    annual_cash = p[p["doc_type"] == "10-K"]
    annual_form = np.where(annual_cash["amend"].astype(bool), "10-K/A", "10-K")
    for src_col, field in _PYSTOCK_CASH.items():  # a 10-K's cash flows are the year's
        parts.append(pd.DataFrame({"ticker": annual_cash["ticker"].to_numpy(), "period": "annual",
                                   "report_period": annual_cash["end_date"].to_numpy(), "field": field,
                                   "value": annual_cash[src_col].to_numpy(dtype=float),
                                   "filing_date": annual_cash["first_seen_date"].to_numpy(),
                                   "accession_number": None,
                                   "form_type": annual_form}))  # fmt: skip
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


def fiscal_label(fy_end: pd.Timestamp) -> int:
    """Fiscal years are named by the calendar year they end in (NVDA FY2026 ends 2026-01-25); a 52/53-week year
    ending in the first days of January belongs to the year before."""
    return int(fy_end.year) - (1 if fy_end.month == 1 and fy_end.day <= 7 else 0)


def _pystock_row(ticker: str, r, period: str, fiscal_period: str) -> dict:
    rec = {"ticker": ticker, "report_period": r.end_date, "period": period, "fiscal_period": fiscal_period,
           "currency": "USD", "filing_date": r.first_seen_date, "accession_number": None,
           "form_type": r.doc_type}  # fmt: skip
    for src_col, field in {**_PYSTOCK_INCOME, **_PYSTOCK_BALANCE, **_PYSTOCK_CASH}.items():
        v = getattr(r, src_col)
        rec[field] = float(v) if v == v else np.nan
    return rec


def build_labor(src2: Path) -> pd.DataFrame:
    """Labour-market series (FRED/BLS): value and change from the previous observation (missing if absent)."""
    fred = pd.read_csv(src2 / "macro/fred_us_macro_long_1980_2025.csv.gz", parse_dates=["date"])
    fred = fred[fred["series_id"].isin(list(LABOR_SERIES))]
    parts = []
    for sid, g in fred.groupby("series_id", sort=True):
        g = g.sort_values("date")
        step = pd.DateOffset(weeks=1) if sid == "ICSA" else pd.DateOffset(months=1)
        level = g.set_index("date")["value"]
        prev = level.reindex(g["date"] - step).to_numpy()
        value = g["value"].to_numpy()
        parts.append(pd.DataFrame({"series": LABOR_SERIES[sid], "date": g["date"].to_numpy(), "value": value,
                                   "change": value - prev}))  # fmt: skip
    out = pd.concat(parts, ignore_index=True).dropna(subset=["value"])
    out["change"] = out["change"].round(6)
    return out.sort_values(["series", "date"]).reset_index(drop=True)


def fred_series(src2: Path, series_id: str) -> pd.DataFrame:
    """One FRED series as ``date``, ``value``."""
    fred = pd.read_csv(src2 / "macro/fred_us_macro_long_1980_2025.csv.gz", parse_dates=["date"])
    return fred[fred["series_id"] == series_id][["date", "value"]].sort_values("date").reset_index(drop=True)
