"""Total return from closes and the distributions they do not carry (pure pandas).

The lake's closes are on one split basis; distributions (cash dividends, specials, a spin-off's shares) are a
separate table. A price return from those closes loses every distribution: EBAY "fell" 57% on 2015-07-20, the day
its holders received PayPal. :func:`total_return_close` puts them back the way an adjusted close does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["total_return_close"]


def _long(prices: pd.DataFrame) -> pd.DataFrame:
    df = prices.reset_index() if {"ticker", "time"} - set(prices.columns) else prices.copy()
    return df.assign(_row=np.arange(len(df)), ticker=df["ticker"].astype(str))


def total_return_close(prices: pd.DataFrame, dividends: pd.DataFrame) -> pd.Series:
    """The closes adjusted for every distribution they do not carry: a total-return close, per ticker.

    The return over a day is ``(close + D) / previous close`` with ``D`` the distributions going ex that day (the
    holder's total return, the cash or the spun-off shares' value counted at the ex-date); where the frame has an
    ``adj_close`` on both days (the service's split- and dividend-adjusted close), its return is the day's instead,
    which also covers the days without an as-traded close (``basis`` adjusted_only). The chain is scaled so each
    ticker's last close (else its last adjusted close) is unchanged, as in an adjusted close. Distributions marked
    ``in_prices`` (the closes already carry them) are not applied again; one dated on a day without a bar applies on
    the next bar.

    Args:
        prices: daily bars with ``ticker``, ``time`` (columns or index levels), ``close`` and optionally
            ``adj_close``, on the split basis of ``dividends``.
        dividends: ``ticker``, ``date`` (the ex-date), ``dividend`` per share, optionally ``in_prices``.

    Returns:
        The total-return close, float64, aligned to ``prices``' rows.

    Example:
        >>> px = pd.DataFrame({"ticker": ["X"] * 3, "time": pd.to_datetime(["2015-07-16", "2015-07-17",
        ...                    "2015-07-20"]), "close": [65.59, 66.29, 28.57]})
        >>> div = pd.DataFrame({"ticker": ["X"], "date": pd.to_datetime(["2015-07-20"]), "dividend": [38.39]})
        >>> tr = total_return_close(px, div)
        >>> round(float(tr.iloc[2] / tr.iloc[1] - 1), 4)  # a spin-off day: +1.0%, not -56.9%
        0.0101
    """
    df = _long(prices)
    day = pd.to_datetime(df["time"])
    day = day.dt.tz_localize(None) if day.dt.tz is not None else day
    df = df.assign(_day=day.astype("datetime64[ns]")).sort_values(["ticker", "_day"], kind="stable")
    d = dividends
    if "in_prices" in d.columns:
        d = d[~d["in_prices"].fillna(False).astype(bool)]
    d = pd.DataFrame({"ticker": d["ticker"].astype(str), "_day": pd.to_datetime(d["date"]).astype("datetime64[ns]"),
                      "cash": d["dividend"].astype(float)}).dropna().sort_values("_day")  # fmt: skip
    # each distribution on its ex-date's bar, or the next bar
    bars = df[["ticker", "_day", "_row"]].sort_values("_day")
    on = pd.merge_asof(d, bars, on="_day", by="ticker", direction="forward").dropna(subset=["_row"])
    cash = on.groupby("_row")["cash"].sum()
    df["_cash"] = df["_row"].map(cash).fillna(0.0)
    close = df["close"].astype(float)
    prev = close.groupby(df["ticker"], sort=False).shift()
    growth = (close + df["_cash"]) / prev
    level = close
    if "adj_close" in df.columns:  # the source's own total return wins where it has one on both days
        adj = df["adj_close"].astype(float)
        growth = (adj / adj.groupby(df["ticker"], sort=False).shift()).fillna(growth)
        level = close.fillna(adj)
    index = growth.fillna(1.0).groupby(df["ticker"], sort=False).cumprod()
    scale = level.groupby(df["ticker"], sort=False).transform("last") / index.groupby(
        df["ticker"], sort=False
    ).transform("last")
    out = (index * scale).set_axis(df["_row"].to_numpy())
    return pd.Series(out.sort_index().to_numpy(), index=prices.index, name="tr_close", dtype="float64")
