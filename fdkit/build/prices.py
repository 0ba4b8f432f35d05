"""Daily and minute bars of the equities and ETFs: one price basis, split- and dividend-adjusted as of 2026-02-25.

* **Main universe** (36 tickers and the ETFs): yfinance ``auto_adjust`` bars 2021-2026; 2003-2021 from the
  2003-2023 file, re-based onto that basis per ticker (:func:`build_prices`).
* **Broad universe** (the other S&P 500 members): pystock daily bars 2015-03-20 .. 2017-03-31, raw closes on the
  split basis, not dividend-adjusted (:func:`broad_prices`).
* **Minute bars**: LEAN's raw minute trade bars put on the daily basis (:func:`build_minute_prices`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdkit.build.common import R2, YAHOO, norm_ticker, split_factor
from fdkit.build.stage import Context, Provenance, Stage, dataset, intermediate

NEW_DAILY = "data-real/prices/us_equities_daily_adj_2021_2026.csv.gz"
OLD_DAILY = "data-real/prices/us_equities_daily_2003_2023.csv.gz"
ETF_DAILY = "data-real/prices/etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX.csv.gz"
PYSTOCK_DAILY = "data-real-2/prices/pystock_us_equities_daily_2015_2017.parquet"
LEAN_MINUTE = "data-real/prices/lean_minute_trade_bars_AAPL_SPY.csv"
LEAN_DAILY_RAW = "data-real/prices/lean_daily_raw_unadjusted.csv.gz"
BAR = ["ticker", "date", "open", "high", "low", "close", "volume"]

#: broad-universe price series left out, and why (found by the lake's daily-move invariant)
EXCLUDED_PRICES = {
    "MS": "the source mixes in another security's bars under MS (2017-02-14/15 at ~25.6 among ~45)",
    "NEE": "the source mixes in another security's bars under NEE (months at ~23-30 among ~110-125)",
}


def build_prices(new: pd.DataFrame, old: pd.DataFrame, etf: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Daily bars of the universe on one basis: split- and dividend-adjusted as of 2026-02-25 (yfinance auto_adjust).

    2003-2021 comes from the 2003-2023 file re-based onto that basis per ticker: prices by the median ratio of the
    two files' closes over their overlap, volumes by the splits after 2023 (the overlap's volume ratio).

    Args:
        new: the 2021-2026 adjusted bars (``ticker``, ``date``, OHLC, ``volume``).
        old: the 2003-2023 bars (with ``adj_close``).
        etf: the ETF bars 2021-2026.

    Returns:
        The bars (``ticker``, ``time`` UTC, OHLC, ``volume``) and the re-basing factors per ticker.
    """
    # ^VIX is an index level, not a traded price; the file's last session (2026-03-26) is an incomplete download
    # (zero volumes, closes copied across tickers), so it is left out
    etf = etf[(etf["ticker"] != "^VIX") & (etf["date"] < etf["date"].max())]
    parts, factors = [], []
    for ticker, n in new.groupby("ticker", sort=True):
        o = old[old["ticker"] == ticker]
        if len(o):
            early, factor = _rebased(o, n)
            parts.append(early)
            factors.append({"ticker": ticker, **factor})
        parts.append(n)
    parts.append(etf[BAR])
    daily = pd.concat(parts, ignore_index=True).sort_values(["ticker", "date"], kind="stable")
    daily = daily.drop_duplicates(["ticker", "date"], keep="last")
    for col in ("open", "high", "low", "close"):
        daily[col] = daily[col].round(4)
    daily["time"] = daily["date"].dt.tz_localize("UTC")
    daily["volume"] = daily["volume"].round().astype("Int64")
    return daily.drop(columns=["date"]).reset_index(drop=True), pd.DataFrame(factors)


def _rebased(o: pd.DataFrame, n: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """One ticker's old bars before the new file starts, on the new file's basis, and the factors used."""
    overlap = o.merge(n[["date", "close", "volume"]], on="date", suffixes=("", "_new"))
    price_factor = float(np.median(overlap["close_new"] / overlap["adj_close"]))
    # later splits: the overlap's volume ratio is the split ratio (closes also carry dividends, so
    # rounding their ratio gave AVGO 11 instead of 10)
    split = float(np.median(overlap["volume_new"] / overlap["volume"]))
    split = max(1.0, round(split)) if split > 1.5 else 1.0
    early = o[o["date"] < n["date"].min()].copy()
    k = early["adj_close"] / early["close"] * price_factor
    for col in ("open", "high", "low", "close"):
        early[col] = early[col] * k
    early["volume"] = (early["volume"] * split).round()
    return early[BAR], {"price_factor": price_factor, "split_factor": split, "overlap_days": len(overlap)}


def raw_prices(df: pd.DataFrame) -> pd.DataFrame:
    """The pystock daily bars (raw OHLC, Yahoo adjusted close), tickers spelled as the lake spells them.

    Args:
        df: the pystock bars as stored (``symbol``, ``date``, OHLC, ``adj_close``, ``volume``).

    Returns:
        ``ticker``, ``date`` and the bars, prices as float64.
    """
    df = df.rename(columns={"symbol": "ticker"})
    df["ticker"] = norm_ticker(df["ticker"])
    df["date"] = pd.to_datetime(df["date"])
    for c in ("open", "high", "low", "close", "adj_close"):
        df[c] = df[c].astype("float64")
    return df


def broad_prices(raw: pd.DataFrame, tickers: set[str], splits: pd.DataFrame) -> pd.DataFrame:
    """Daily bars of ``tickers`` on the split basis of :data:`~fdkit.build.common.BASIS_DATE` (raw / later splits).

    Args:
        raw: the pystock bars (:func:`raw_prices`).
        tickers: the tickers to keep.
        splits: the split table.

    Returns:
        ``ticker``, ``time`` (UTC), OHLC, ``volume``: weekdays with a positive close.
    """
    df = raw[raw["ticker"].isin(tickers)].copy()
    df = df.dropna(subset=["close"])
    df = df[(df["close"] > 0) & (df["date"].dt.day_of_week < 5)]
    k = split_factor(splits, df["ticker"], df["date"])
    for c in ("open", "high", "low", "close"):
        df[c] = (df[c] / k).round(4)
    df["volume"] = (df["volume"].astype(float) * k).round().astype("Int64")
    df["time"] = df["date"].dt.tz_localize("UTC")
    return df[["ticker", "time", "open", "high", "low", "close", "volume"]].reset_index(drop=True)


def build_minute_prices(m: pd.DataFrame, raw_daily: pd.DataFrame, daily: pd.DataFrame) -> pd.DataFrame:
    """LEAN minute bars (raw, US/Eastern) on the daily basis: each day scaled by adjusted close / raw close.

    Args:
        m: LEAN minute bars (``ticker``, ``datetime_et``, OHLC, ``volume``).
        raw_daily: LEAN's raw daily bars (``ticker``, ``date``, ``close``, ``volume``).
        daily: the lake's daily bars.

    Returns:
        ``ticker``, ``time`` (UTC), OHLC, ``volume``, for the days with both closes.
    """
    m = m.copy()
    m["ts"] = pd.to_datetime(m["datetime_et"]).dt.tz_localize("America/New_York").dt.tz_convert("UTC")
    m["date"] = pd.to_datetime(m["datetime_et"].str[:10])
    adj = daily.assign(date=daily["time"].dt.tz_localize(None))[["ticker", "date", "close", "volume"]]
    scale = raw_daily[["ticker", "date", "close", "volume"]].merge(
        adj, on=["ticker", "date"], suffixes=("_raw", "_adj")
    )
    scale["k"] = scale["close_adj"] / scale["close_raw"]
    # volumes on the daily basis are split-adjusted: the day's adjusted/raw volume ratio is the split ratio
    scale["split"] = (scale["volume_adj"].astype(float) / scale["volume_raw"]).round().clip(lower=1)
    m = m.merge(scale[["ticker", "date", "k", "split"]], on=["ticker", "date"], how="inner")
    for col in ("open", "high", "low", "close"):
        m[col] = (m[col] * m["k"]).round(4)
    m["volume"] = (m["volume"] * m["split"]).round()
    out = m[["ticker", "ts", "open", "high", "low", "close", "volume"]].rename(columns={"ts": "time"})
    out["volume"] = out["volume"].astype("Int64")
    return out.sort_values(["ticker", "time"]).reset_index(drop=True)


def _prices_main(ctx: Context) -> dict[str, pd.DataFrame]:
    new, old, etf = (pd.read_csv(ctx.source(p), parse_dates=["date"]) for p in (NEW_DAILY, OLD_DAILY, ETF_DAILY))
    daily, factors = build_prices(new, old, etf)
    return {"prices_main": daily, "price_factors": factors}


def _pystock_prices(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"pystock_prices": raw_prices(pd.read_parquet(ctx.source(PYSTOCK_DAILY)))}


def _prices(ctx: Context) -> dict[str, pd.DataFrame]:
    daily = ctx["prices_main"]
    broad = set(ctx["members"]["ticker"]) - set(daily["ticker"].astype(str)) - set(EXCLUDED_PRICES)
    return {
        "prices": pd.concat([daily, broad_prices(ctx["pystock_prices"], broad, ctx["splits"])], ignore_index=True)
        .sort_values(["ticker", "time"], kind="stable")
        .reset_index(drop=True)
    }


def _prices_minute(ctx: Context) -> dict[str, pd.DataFrame]:
    m = pd.read_csv(ctx.source(LEAN_MINUTE))
    raw_daily = pd.read_csv(ctx.source(LEAN_DAILY_RAW), parse_dates=["date"])
    return {"prices_minute": build_minute_prices(m, raw_daily, ctx["prices"])}


_PROVENANCE_PRICES = Provenance(
    "prices/us_equities_daily_adj_2021_2026.csv.gz (2021-02-26..), prices/us_equities_daily_2003_2023.csv.gz "
    "(before), prices/etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX.csv.gz (ETFs; ^VIX and the incomplete last "
    "session 2026-03-26 left out)",
    YAHOO,
    "The universe's 36 tickers: split- and dividend-adjusted as of 2026-02-25 (yfinance auto_adjust). Older "
    "bars are the 2003-2023 file's dividend-adjusted OHLC re-based by the median ratio of the two files' "
    "closes over their overlap; volumes multiplied by the ratio of later splits, read from the overlap's "
    "volume ratio (AVGO 10, not the 11 its dividend-carrying close ratio rounds to). Other S&P 500 members, "
    f"2015-03-20 .. 2017-03-31, from {R2}prices/pystock_us_equities_daily_2015_2017.parquet: raw closes "
    "divided (volumes multiplied) by the splits after each day: split-adjusted as of 2026-02-25 but NOT "
    "dividend-adjusted. Left out: MS and NEE (the source mixes another security's bars into theirs).",
)

_PROVENANCE_PRICES_MINUTE = Provenance(
    "prices/lean_minute_trade_bars_AAPL_SPY.csv + prices/lean_daily_raw_unadjusted.csv.gz",
    "Apache-2.0 (QuantConnect LEAN sample data)",
    "raw US/Eastern bars converted to UTC and put on the daily basis by each day's adjusted/raw close ratio; "
    "days without both closes (SPY 2013 and 2023: no adjusted daily bar) are left out",
)


PRICES_MAIN = Stage(
    "prices_main",
    "Daily bars of the main universe and the ETFs on the 2026-02-25 basis, with the re-basing factors",
    _prices_main,
    sources=(NEW_DAILY, OLD_DAILY, ETF_DAILY),
    outputs=(intermediate("prices_main"), intermediate("price_factors")),
)

PYSTOCK_PRICES = Stage(
    "pystock_prices",
    "The raw pystock daily bars of 2015-2017 (broad universe), tickers in the lake's spelling",
    _pystock_prices,
    sources=(PYSTOCK_DAILY,),
    outputs=(intermediate("pystock_prices"),),
)

PRICES = Stage(
    "prices",
    "Daily bars: the main universe plus the other S&P 500 members 2015-2017 on the split basis",
    _prices,
    needs=("prices_main", "pystock_prices", "members", "splits"),
    outputs=(dataset("prices", _PROVENANCE_PRICES),),
)

PRICES_MINUTE = Stage(
    "prices_minute",
    "LEAN minute bars (AAPL, SPY) on the daily basis",
    _prices_minute,
    sources=(LEAN_MINUTE, LEAN_DAILY_RAW),
    needs=("prices",),
    outputs=(dataset("prices_minute", _PROVENANCE_PRICES_MINUTE, schema="prices"),),
)

STAGES = (PRICES_MAIN, PYSTOCK_PRICES, PRICES, PRICES_MINUTE)
