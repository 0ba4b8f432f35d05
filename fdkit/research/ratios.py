"""Financial ratios from statement frames: the one implementation behind ``/financial-metrics`` and ``df.fds.ratios``.

Input is a wide statement frame (income + balance + cash flow fields as columns) with ``ticker``,
``report_period`` and ``period`` as columns or index levels. Every ratio is a plain vectorised expression; a
zero or missing denominator gives NaN. Output names follow the service's financial-metrics fields.

Families and formulas (``days`` is 365 for annual/ttm rows, 91.25 for quarterly rows):

* profitability: ``gross_margin`` = gross_profit / revenue, ``operating_margin`` = operating_income / revenue,
  ``net_margin`` = net_income / revenue, ``return_on_equity`` = net_income / shareholders_equity,
  ``return_on_assets`` = net_income / total_assets, ``return_on_invested_capital`` = operating_income x
  (1 - tax rate) / (total_debt + shareholders_equity - cash_and_equivalents), tax rate = income_tax_expense /
  (net_income + income_tax_expense) clipped to [0, 1].
* liquidity: ``current_ratio``, ``quick_ratio`` = (cash + current investments + receivables) / current
  liabilities, ``cash_ratio`` = cash / current liabilities, ``operating_cash_flow_ratio`` = operating cash flow /
  current liabilities.
* solvency: ``debt_to_equity`` = total_debt / equity, ``debt_to_assets`` = total_debt / total_assets,
  ``interest_coverage`` = ebit / interest_expense.
* efficiency: ``asset_turnover`` = revenue / total_assets, ``inventory_turnover`` = cost_of_revenue / inventory,
  ``receivables_turnover`` = revenue / receivables, ``days_sales_outstanding`` = days / receivables_turnover,
  ``operating_cycle`` = days_sales_outstanding + days / inventory_turnover, ``working_capital_turnover`` =
  revenue / (current assets - current liabilities).
* per share: ``earnings_per_share`` (reported, else net_income / weighted shares), ``book_value_per_share`` =
  equity / outstanding_shares, ``free_cash_flow_per_share`` = free_cash_flow / outstanding_shares,
  ``payout_ratio`` = -dividends / net_income.
* growth (period over period within ticker and period type, matched by date: the row ``lag`` x 3 months
  (quarterly, ttm) or ``lag`` x 12 months (annual) earlier, within 20 days; none there, no growth): revenue,
  earnings (net income), book value, EPS, free cash flow, operating income, EBITDA (operating income + D&A).
* valuation (needs prices: the last close on or before ``report_period``; a quarterly row's flows are those of its
  four trailing quarters, :func:`trailing_year`, missing where one is missing): ``market_cap`` = price x
  outstanding_shares (the weighted average shares where outstanding shares are not reported),
  ``enterprise_value`` = market_cap + total_debt - cash, ``price_to_earnings_ratio`` = price / diluted EPS
  (basic EPS where no diluted EPS is reported, else net income / weighted shares),
  ``price_to_book_ratio``, ``price_to_sales_ratio``, ``enterprise_value_to_ebitda_ratio``,
  ``enterprise_value_to_revenue_ratio``, ``free_cash_flow_yield``, ``peg_ratio`` = P/E / (earnings growth x 100).

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"ticker": ["X"], "report_period": pd.to_datetime(["2024-12-31"]), "period": ["annual"],
    ...                    "revenue": [100.0], "gross_profit": [40.0]})
    >>> float(compute_ratios(df)["gross_margin"].iloc[0])
    0.4
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = ["FAMILIES", "compute_ratios", "price_on_or_before", "trailing_twelve_months"]

FAMILIES: dict[str, tuple[str, ...]] = {
    "profitability": (
        "gross_margin",
        "operating_margin",
        "net_margin",
        "return_on_equity",
        "return_on_assets",
        "return_on_invested_capital",
    ),
    "liquidity": ("current_ratio", "quick_ratio", "cash_ratio", "operating_cash_flow_ratio"),
    "solvency": ("debt_to_equity", "debt_to_assets", "interest_coverage"),
    "efficiency": (
        "asset_turnover",
        "inventory_turnover",
        "receivables_turnover",
        "days_sales_outstanding",
        "operating_cycle",
        "working_capital_turnover",
    ),
    "per_share": ("earnings_per_share", "book_value_per_share", "free_cash_flow_per_share", "payout_ratio"),
    "growth": (
        "revenue_growth",
        "earnings_growth",
        "book_value_growth",
        "earnings_per_share_growth",
        "free_cash_flow_growth",
        "operating_income_growth",
        "ebitda_growth",
    ),
    "valuation": (
        "market_cap",
        "enterprise_value",
        "price_to_earnings_ratio",
        "price_to_book_ratio",
        "price_to_sales_ratio",
        "enterprise_value_to_ebitda_ratio",
        "enterprise_value_to_revenue_ratio",
        "free_cash_flow_yield",
        "peg_ratio",
    ),
}

_GROWTH_SOURCES = {
    "revenue_growth": "revenue",
    "earnings_growth": "net_income",
    "book_value_growth": "shareholders_equity",
    "earnings_per_share_growth": "earnings_per_share",
    "free_cash_flow_growth": "free_cash_flow",
    "operating_income_growth": "operating_income",
    "ebitda_growth": "ebitda",
}


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    if name in df.columns:
        return pd.to_numeric(df[name], errors="coerce").astype("float64")
    return pd.Series(np.nan, index=df.index, dtype="float64")


def _div(a: pd.Series, b: pd.Series) -> pd.Series:
    b = b.where(b != 0)
    return (a / b).astype("float64")


def _keys(df: pd.DataFrame) -> pd.DataFrame:
    """ticker, report_period, period as plain columns (from columns or index levels)."""
    out = {}
    for k in ("ticker", "report_period", "period"):
        if k in df.columns:
            out[k] = df[k].to_numpy()
        elif k in (df.index.names or []):
            out[k] = df.index.get_level_values(k).to_numpy()
        else:
            out[k] = np.full(len(df), "annual" if k == "period" else None, dtype=object)
    return pd.DataFrame(out, index=df.index)


#: the length of one period by period type: growth compares rows this many months apart (times ``lag``)
_PERIOD_MONTHS = {"annual": 12, "quarterly": 3, "ttm": 3}


def _earlier_rows(keys: pd.DataFrame, lag: int) -> np.ndarray:
    """Each row's comparison row: same ticker and period type, ``lag`` periods earlier by the calendar.

    The comparison row's report period is 3 or 12 months x ``lag`` earlier, within 20 days; -1 where there is
    none: a gap in the periods gives no comparison rather than one against the wrong period.
    """
    n = len(keys)
    frame = pd.DataFrame(
        {
            "ticker": keys["ticker"].astype(str).to_numpy(),
            "period": keys["period"].astype(str).to_numpy(),
            "day": pd.to_datetime(keys["report_period"]).astype("datetime64[ns]").to_numpy(),
            "_row": np.arange(n),
        }
    )
    months = frame["period"].map(_PERIOD_MONTHS).fillna(12).astype(int).to_numpy()
    target = (
        np.array(
            [d - pd.DateOffset(months=int(m) * lag) for d, m in zip(frame["day"], months, strict=True)],
            dtype="datetime64[ns]",
        )
        if n
        else np.array([], dtype="datetime64[ns]")
    )
    left = frame.assign(target=target).dropna(subset=["day"]).sort_values("target")
    right = frame.dropna(subset=["day"]).rename(columns={"_row": "_prev"}).sort_values("day")
    m = pd.merge_asof(
        left,
        right[["ticker", "period", "day", "_prev"]],
        left_on="target",
        right_on="day",
        by=["ticker", "period"],
        direction="nearest",
        tolerance=pd.Timedelta(days=20),
    )
    out = np.full(n, -1, dtype=np.int64)
    hit = m["_prev"].notna().to_numpy()
    out[m["_row"].to_numpy()[hit]] = m["_prev"].to_numpy()[hit].astype(np.int64)
    return out


def trailing_year(keys: pd.DataFrame, flows: dict[str, pd.Series]) -> dict[str, pd.Series]:
    """A year's worth of each flow per row: a quarterly row's sum with its three preceding quarters, else the row's.

    The quarters are matched by the calendar (:func:`_earlier_rows`); where one of the four is missing, or has no
    value, the sum is missing.

    Args:
        keys: ``ticker``, ``period`` and ``report_period`` per row.
        flows: name -> values on the rows.

    Returns:
        name -> the year's values.

    Example:
        >>> keys = pd.DataFrame({"ticker": ["X"] * 5, "period": ["quarterly"] * 4 + ["annual"],
        ...                      "report_period": pd.to_datetime(["2016-03-31", "2016-06-30", "2016-09-30",
        ...                                                       "2016-12-31", "2016-12-31"])})
        >>> trailing_year(keys, {"eps": pd.Series([1.0, 2.0, 3.0, 4.0, 10.0])})["eps"].tolist()
        [nan, nan, nan, 10.0, 10.0]
    """
    quarterly = keys["period"].astype(str).to_numpy() == "quarterly"
    earlier = [_earlier_rows(keys, lag) for lag in (1, 2, 3)]
    out = {}
    for name, values in flows.items():
        v = values.to_numpy(dtype="float64")
        total = v.copy()
        for prev in earlier:
            add = np.where(prev >= 0, v[np.maximum(prev, 0)], np.nan)
            total = total + add
        out[name] = pd.Series(np.where(quarterly, total, v), index=values.index, dtype="float64")
    return out


def price_on_or_before(keys: pd.DataFrame, prices: pd.DataFrame, max_age: pd.Timedelta | None = None) -> pd.Series:
    """The last close on or before each row's ``report_period``, per ticker.

    Args:
        keys: frame with ``ticker`` and ``report_period`` columns.
        prices: long price frame with ``ticker``, ``time`` (columns or index levels) and ``close``.
        max_age: a close older than this is no close for the row (NaN); default: any age.

    Returns:
        Closes aligned to ``keys.index`` (NaN where no earlier price exists, or where the last bar on or before the
        day has no close: an older close never stands in for it).
    """
    px = prices.reset_index() if "ticker" not in prices.columns else prices
    px = px[["ticker", "time", "close"]].copy()
    t = pd.to_datetime(px["time"])
    px["day"] = (t.dt.tz_convert(None) if t.dt.tz is not None else t).astype("datetime64[ns]").dt.normalize()
    px["ticker"] = pd.Series(px["ticker"].astype(str).to_numpy(), index=px.index, dtype="string")
    # the last bar decides: a bar without an as-traded close (basis adjusted_only) gives NaN, never an older close
    px = px.sort_values("day")
    left = pd.DataFrame(
        {
            "ticker": pd.array(keys["ticker"].astype(str).to_numpy(), dtype="string"),
            "day": pd.to_datetime(keys["report_period"]).astype("datetime64[ns]").to_numpy(),
            "_row": np.arange(len(keys)),
        }
    )
    merged = pd.merge_asof(
        left.sort_values("day"),
        px[["ticker", "day", "close"]],
        on="day",
        by="ticker",
        direction="backward",
        tolerance=max_age,
    )
    return pd.Series(merged.sort_values("_row")["close"].to_numpy(), index=keys.index, dtype="float64")


def compute_ratios(
    statements: pd.DataFrame,
    prices: pd.DataFrame | None = None,
    *,
    growth: bool = True,
    families: Iterable[str] | None = None,
    lag: int = 1,
) -> pd.DataFrame:
    """Compute ratio families for every row of a wide statement frame.

    Args:
        statements: income, balance and cash-flow fields as columns; ``ticker``, ``report_period`` and ``period``
            as columns or index levels; any number of tickers.
        prices: a long price frame (``ticker``, ``time``, ``close``) for the valuation family.
        growth: compute the growth family (period over period within ticker and period type).
        families: which families (default: all that the inputs allow).
        lag: growth compares each row with the row ``lag`` periods earlier by the calendar (same ticker and period
            type); a missing period gives a missing growth, never a comparison with the wrong period.

    Returns:
        A frame on the same index with one float64 column per ratio.

    Raises:
        ValueError: for an unknown family name.
    """
    wanted = list(families) if families is not None else list(FAMILIES)
    unknown = [f for f in wanted if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown ratio families {unknown}; known: {', '.join(FAMILIES)}")
    df = statements
    keys = _keys(df)
    g = {
        name: _col(df, name)
        for name in (
            "revenue",
            "cost_of_revenue",
            "gross_profit",
            "operating_income",
            "net_income",
            "income_tax_expense",
            "interest_expense",
            "ebit",
            "earnings_per_share",
            "earnings_per_share_diluted",
            "weighted_average_shares",
            "total_assets",
            "current_assets",
            "cash_and_equivalents",
            "inventory",
            "current_investments",
            "trade_and_non_trade_receivables",
            "current_liabilities",
            "shareholders_equity",
            "total_debt",
            "outstanding_shares",
            "net_cash_flow_from_operations",
            "free_cash_flow",
            "depreciation_and_amortization",
            "dividends_and_other_cash_distributions",
        )
    }
    g["gross_profit"] = g["gross_profit"].fillna(g["revenue"] - g["cost_of_revenue"])
    g["ebit"] = g["ebit"].fillna(g["operating_income"])
    g["earnings_per_share"] = g["earnings_per_share"].fillna(_div(g["net_income"], g["weighted_average_shares"]))
    g["ebitda"] = g["operating_income"] + g["depreciation_and_amortization"].fillna(0.0)
    g["outstanding_shares"] = g["outstanding_shares"].fillna(g["weighted_average_shares"])
    days = pd.Series(np.where(keys["period"].astype(str).to_numpy() == "quarterly", 91.25, 365.0), index=df.index)
    out: dict[str, pd.Series] = {}
    if "profitability" in wanted:
        tax_rate = _div(g["income_tax_expense"], g["net_income"] + g["income_tax_expense"]).clip(0.0, 1.0)
        invested = g["total_debt"].fillna(0.0) + g["shareholders_equity"] - g["cash_and_equivalents"].fillna(0.0)
        out["gross_margin"] = _div(g["gross_profit"], g["revenue"])
        out["operating_margin"] = _div(g["operating_income"], g["revenue"])
        out["net_margin"] = _div(g["net_income"], g["revenue"])
        out["return_on_equity"] = _div(g["net_income"], g["shareholders_equity"])
        out["return_on_assets"] = _div(g["net_income"], g["total_assets"])
        out["return_on_invested_capital"] = _div(g["operating_income"] * (1.0 - tax_rate.fillna(0.0)), invested)
    if "liquidity" in wanted:
        cl = g["current_liabilities"]
        quick = (
            g["cash_and_equivalents"]
            + g["current_investments"].fillna(0.0)
            + g["trade_and_non_trade_receivables"].fillna(0.0)
        )
        out["current_ratio"] = _div(g["current_assets"], cl)
        out["quick_ratio"] = _div(quick, cl)
        out["cash_ratio"] = _div(g["cash_and_equivalents"], cl)
        out["operating_cash_flow_ratio"] = _div(g["net_cash_flow_from_operations"], cl)
    if "solvency" in wanted:
        out["debt_to_equity"] = _div(g["total_debt"], g["shareholders_equity"])
        out["debt_to_assets"] = _div(g["total_debt"], g["total_assets"])
        out["interest_coverage"] = _div(g["ebit"], g["interest_expense"])
    if "efficiency" in wanted:
        inv_turn = _div(g["cost_of_revenue"], g["inventory"])
        rec_turn = _div(g["revenue"], g["trade_and_non_trade_receivables"])
        dso = _div(days, rec_turn)
        out["asset_turnover"] = _div(g["revenue"], g["total_assets"])
        out["inventory_turnover"] = inv_turn
        out["receivables_turnover"] = rec_turn
        out["days_sales_outstanding"] = dso
        out["operating_cycle"] = dso + _div(days, inv_turn)
        out["working_capital_turnover"] = _div(g["revenue"], g["current_assets"] - g["current_liabilities"])
    if "per_share" in wanted:
        out["earnings_per_share"] = g["earnings_per_share"]
        out["book_value_per_share"] = _div(g["shareholders_equity"], g["outstanding_shares"])
        out["free_cash_flow_per_share"] = _div(g["free_cash_flow"], g["outstanding_shares"])
        out["payout_ratio"] = _div(-g["dividends_and_other_cash_distributions"], g["net_income"])
    growth_cols: dict[str, pd.Series] = {}
    if growth and ("growth" in wanted or "valuation" in wanted):
        prev = _earlier_rows(keys, lag)
        for k, v in _GROWTH_SOURCES.items():
            now = g[v].to_numpy(dtype="float64")
            before = np.full(len(df), np.nan)
            ok = prev >= 0
            before[ok] = now[prev[ok]]
            chg = (now - before) / np.where(before != 0, np.abs(before), np.nan)
            growth_cols[k] = pd.Series(chg, index=df.index, dtype="float64")
        if "growth" in wanted:
            out.update(growth_cols)
    if "valuation" in wanted and prices is not None and len(prices):
        price = price_on_or_before(keys, prices)
        mcap = price * g["outstanding_shares"]
        ev = mcap + g["total_debt"].fillna(0.0) - g["cash_and_equivalents"].fillna(0.0)
        # a price is a multiple of a year's flows: a quarterly row's are its four trailing quarters (missing where
        # one of them is), never one quarter's (KO Q1 2015: P/E 82.8 on a quarter's EPS)
        eps = g["earnings_per_share_diluted"].fillna(g["earnings_per_share"])
        year = trailing_year(
            keys, {"eps": eps, "revenue": g["revenue"], "ebitda": g["ebitda"], "free_cash_flow": g["free_cash_flow"]}
        )
        # price over diluted EPS (basic where no diluted figure is reported): both on the price's split basis
        pe = _div(price, year["eps"])
        out["market_cap"] = mcap
        out["enterprise_value"] = ev
        out["price_to_earnings_ratio"] = pe
        out["price_to_book_ratio"] = _div(mcap, g["shareholders_equity"])
        out["price_to_sales_ratio"] = _div(mcap, year["revenue"])
        out["enterprise_value_to_ebitda_ratio"] = _div(ev, year["ebitda"])
        out["enterprise_value_to_revenue_ratio"] = _div(ev, year["revenue"])
        out["free_cash_flow_yield"] = _div(year["free_cash_flow"], mcap)
        eg = growth_cols.get("earnings_growth")
        out["peg_ratio"] = _div(pe, eg * 100.0) if eg is not None else pd.Series(np.nan, index=df.index)
    return pd.DataFrame({k: v.astype("float64") for k, v in out.items()}, index=df.index)


#: statement fields that are stocks (balance sheet) or not additive: TTM keeps the latest quarter's value
_NOT_SUMMED = {
    "total_assets",
    "current_assets",
    "cash_and_equivalents",
    "inventory",
    "current_investments",
    "trade_and_non_trade_receivables",
    "non_current_assets",
    "property_plant_and_equipment",
    "goodwill_and_intangible_assets",
    "investments",
    "non_current_investments",
    "outstanding_shares",
    "tax_assets",
    "total_liabilities",
    "current_liabilities",
    "current_debt",
    "trade_and_non_trade_payables",
    "deferred_revenue",
    "deposit_liabilities",
    "non_current_liabilities",
    "non_current_debt",
    "tax_liabilities",
    "shareholders_equity",
    "retained_earnings",
    "accumulated_other_comprehensive_income",
    "total_debt",
    "ending_cash_balance",
    "weighted_average_shares",
    "weighted_average_shares_diluted",
    "dividends_per_common_share",
}


def trailing_twelve_months(statements: pd.DataFrame) -> pd.DataFrame:
    """Trailing-twelve-month rows from quarterly rows: flows summed over four quarters, stocks from the latest.

    Args:
        statements: a wide statement frame indexed ``(ticker, report_period)`` with quarterly rows (other
            period types are ignored).

    Returns:
        One ``ttm`` row per quarter that closes four consecutive quarters (about 9 months from first to last
        report period), same index and columns.

    Example:
        >>> idx = pd.MultiIndex.from_product([["X"], pd.date_range("2024-03-31", periods=4, freq="QE")],
        ...                                  names=["ticker", "report_period"])
        >>> q = pd.DataFrame({"period": "quarterly", "revenue": [1.0, 2.0, 3.0, 4.0]}, index=idx)
        >>> trailing_twelve_months(q)["revenue"].tolist()
        [10.0]
    """
    df = statements
    if "period" in df.columns:
        df = df[df["period"].astype(str) == "quarterly"]
    df = df.sort_index()
    numeric = [c for c in df.columns if pd.api.types.is_float_dtype(df[c]) and c not in _NOT_SUMMED]
    parts = []
    for _, g in df.groupby(level="ticker", observed=True, sort=True):
        rp = g.index.get_level_values("report_period")
        span = pd.Series(rp, index=g.index).diff(3).dt.days
        summed = g[numeric].rolling(4, min_periods=4).sum()
        out = g.copy()
        out[numeric] = summed
        ok = span.between(250, 300).to_numpy()
        parts.append(out[ok])
    result = pd.concat(parts) if parts else df.iloc[0:0].copy()
    if "period" in result.columns:
        result["period"] = pd.Categorical(["ttm"] * len(result))
    return result
