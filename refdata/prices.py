"""Daily and minute bars of the equities and ETFs: one price basis, as traded on the split basis of 2026-02-25.

Dividends are never in ``open``..``close`` (the ``dividends`` dataset has them); every row says its ``basis``.

* **Main universe** (31 stocks, SPY and QQQ): the 2003-2023 file's split-adjusted bars (a spin-off Yahoo folded
  into IBM's closes taken out) and LEAN's raw SPY/QQQ bars to 2021-03-31, with the 2021-2026 file's split- and
  dividend-adjusted close as ``adj_close``; after the as-traded sources end, a dividend payer's rows are
  ``adjusted_only`` (no OHLC: the dividends are in no source) (:func:`build_prices`).
* **Broad universe** (the other S&P 500, 400 and 600 members): pystock daily bars 2015-03-20 .. 2017-03-31, raw
  closes on the split basis (:func:`broad_prices`).
* **Minute bars**: LEAN's raw minute trade bars put on the daily basis (:func:`build_minute_prices`).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from fdkit.frames import basis
from fdkit.lake.reviewed import reviewed_facts
from refdata.common import ETF_DAILY, LEAN_FUNDS, R2, YAHOO, norm_ticker, spin_offs_in_closes, split_factor
from refdata.history import spikes
from refdata.pystock_identity import relabel
from refdata.sp500_bars import DAILY as SP500_DAILY
from refdata.stage import Context, Provenance, Stage, dataset, intermediate

NEW_DAILY = "data-real/prices/us_equities_daily_adj_2021_2026.csv.gz"
OLD_DAILY = "data-real/prices/us_equities_daily_2003_2023.csv.gz"
PYSTOCK_DAILY = "data-real-2/prices/pystock_us_equities_daily_2015_2017.parquet"
LEAN_MINUTE = "data-real/prices/lean_minute_trade_bars_AAPL_SPY.csv"
LEAN_DAILY_RAW = "data-real/prices/lean_daily_raw_unadjusted.csv.gz"
LEAN_FACTORS = "data-real/prices/lean_factor_files.csv"
BAR = ["ticker", "date", "open", "high", "low", "close", "volume"]


def prices_left_out(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Broad-universe price series left out, and why (found by the lake's daily-move invariant), reviewed.

    The ``prices_left_out`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): pystock's MS, NEE and
    TCO mix in another security's bars; the others have moves beyond +/-25% with no release or action on record
    that no file but pystock's prints (names that left the S&P 1500 before the Stooq file's end, 2017-11: no
    independent source can confirm them, so none is served). Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{lake ticker: why}`` (the row's reason without its ``Left out: ``).

    Example:
        >>> prices_left_out()["CNW"]
        "moves beyond +/-25% with no release or action on record that no file but pystock's prints: 2015-09-10 +34%"
    """
    rows = reviewed_facts("prices_left_out", path)
    why = rows["reason"].astype(str).str.removeprefix("Left out: ")
    return dict(zip(rows["ticker"].astype(str), why, strict=True))


#: |adjusted / as-traded - 1| below this on the last common day: the adjusted file carries no later dividend
EXACT = 5e-4
AS_TRADED, ADJUSTED_ONLY = "as_traded", "adjusted_only"


def spin_off_factors(old: pd.DataFrame, lean: pd.DataFrame) -> dict[str, float]:
    """The factor each reviewed spin-off in the closes divides the 2003-2023 file's closes by before its ex-date.

    The spin-offs are :func:`refdata.common.spin_offs_in_closes`.

    Args:
        old: the 2003-2023 bars (``ticker``, ``date``, ``close``).
        lean: LEAN's raw daily bars (``ticker``, ``date``, ``close``).

    Returns:
        Ticker -> the median of LEAN's raw close / the file's close over their common days (IBM: 1.046).
    """
    out = {}
    for ticker, (ex, _) in spin_offs_in_closes().items():
        m = old[old["ticker"] == ticker].merge(lean[lean["ticker"] == ticker], on="date", suffixes=("", "_raw"))
        m = m[m["date"] < ex]
        if len(m):  # no common day: nothing to measure, nothing taken out
            out[ticker] = round(float(np.median(m["close_raw"] / m["close"])), 4)
    return out


def old_as_traded(old: pd.DataFrame, factors: dict[str, float]) -> pd.DataFrame:
    """The 2003-2023 bars with the later spin-offs taken out of their OHLC (as traded, on the 2023-10-27 splits).

    Args:
        old: the 2003-2023 bars.
        factors: :func:`spin_off_factors`.

    Returns:
        A copy whose open/high/low/close before each spin-off's ex-date are multiplied by its factor.

    Example:
        >>> d = pd.DataFrame({"ticker": ["IBM", "IBM"], "date": pd.to_datetime(["2016-06-30", "2022-01-03"]),
        ...                   "open": 1.0, "high": 1.0, "low": 1.0, "close": [145.11, 130.0]})
        >>> old_as_traded(d, {"IBM": 1.046})["close"].round(2).tolist()
        [151.79, 130.0]
    """
    out, ex = old.copy(), spin_offs_in_closes()
    for ticker, k in factors.items():
        before = (out["ticker"] == ticker) & (out["date"] < ex[ticker][0])
        for col in ("open", "high", "low", "close"):
            out.loc[before, col] = out.loc[before, col] * k
    return out


def build_prices(
    new: pd.DataFrame, old: pd.DataFrame, etf: pd.DataFrame, lean: pd.DataFrame, lean_factors: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Daily bars of the main universe and the ETFs: as-traded OHLC where a source has them, an adjusted close always.

    ``open``..``close`` are as traded on the split basis of 2026-02-25 (dividends never in them): the 2003-2023
    file's split-adjusted bars (spin-offs taken out: :func:`old_as_traded`) divided by the splits after 2023-10-27,
    and for SPY/QQQ LEAN's raw bars to 2021-03-31. ``adj_close`` is the split- and dividend-adjusted close as of
    2026-02-25 (the 2021-2026 file; earlier rows linked to it over the files' overlap). After the as-traded sources
    end, a row of a security that paid a dividend before the adjusted file's download has ``basis``
    ``adjusted_only`` and no OHLC (the dividends of 2023-11 .. 2026-02 are in no stored source, so no as-traded
    price can be derived); the adjusted file's last session is as traded (nothing after it to adjust for).

    Args:
        new: the 2021-2026 adjusted bars (``ticker``, ``date``, OHLC, ``volume``).
        old: the 2003-2023 bars (with ``adj_close``), spin-offs already taken out (:func:`old_as_traded`).
        etf: the ETF bars 2021-2026 (adjusted).
        lean: LEAN's raw daily bars (``ticker``, ``date``, OHLC, ``volume``).
        lean_factors: LEAN's factor files (``ticker``, ``date``, ``price_factor``, ``split_factor``).

    Returns:
        The bars (``ticker``, ``time`` UTC, OHLC, ``volume``, ``adj_close``, ``basis``) and the factors per ticker.
    """
    # ^VIX is an index level, not a traded price; the file's last session (2026-03-26) is an incomplete download
    # (zero volumes, closes copied across tickers), so it is left out
    etf = etf[(etf["ticker"] != "^VIX") & (etf["date"] < etf["date"].max())]
    parts, factors = [], []
    for ticker, n in new.groupby("ticker", sort=True):
        bars, factor = _linked(old[old["ticker"] == ticker], n, last_exact=True)
        parts.append(bars)
        factors.append({"ticker": ticker, **factor})
    for ticker, n in etf.groupby("ticker", sort=True):
        raw = _lean_as_traded(lean, lean_factors, str(ticker)) if ticker in LEAN_FUNDS else old.iloc[:0]
        bars, factor = _linked(raw, n, last_exact=False)
        parts.append(bars)
        factors.append({"ticker": ticker, **factor})
    daily = pd.concat(parts, ignore_index=True).sort_values(["ticker", "date"], kind="stable")
    for col in ("open", "high", "low", "close", "adj_close"):
        daily[col] = daily[col].round(4)
    daily["time"] = daily["date"].dt.tz_localize("UTC")
    daily["volume"] = daily["volume"].round().astype("Int64")
    return daily.drop(columns=["date"]).reset_index(drop=True), pd.DataFrame(factors)


def _lean_as_traded(lean: pd.DataFrame, factors: pd.DataFrame, ticker: str) -> pd.DataFrame:
    """LEAN's raw bars of ``ticker`` as traded on its factor file's split basis, with its adjusted close."""
    bars = lean[lean["ticker"] == ticker].sort_values("date")
    f = factors[factors["ticker"] == ticker].sort_values("date")
    # a factor-file row holds for the days up to and including its date
    m = pd.merge_asof(bars, f[["date", "price_factor", "split_factor"]], on="date", direction="forward")
    out = m[["ticker", "date"]].copy()
    for col in ("open", "high", "low", "close"):
        out[col] = m[col] * m["split_factor"]
    out["volume"] = m["volume"] / m["split_factor"]
    out["adj_close"] = m["close"] * m["split_factor"] * m["price_factor"]
    return out


def _linked(old: pd.DataFrame, n: pd.DataFrame, *, last_exact: bool) -> tuple[pd.DataFrame, dict]:
    """One security's as-traded bars (``old``) and its adjusted bars (``n``) as one series (see build_prices)."""
    overlap = old.merge(n[["date", "close", "volume"]], on="date", suffixes=("", "_new"))
    if len(overlap):
        price_factor = float(np.median(overlap["close_new"] / overlap["adj_close"]))
        # later splits: the overlap's volume ratio (closes also carry dividends: AVGO's close ratio rounds to 11)
        split = float(np.median(overlap["volume_new"] / overlap["volume"]))
        split = max(1.0, round(split)) if split > 1.5 else 1.0
        tail = overlap.tail(5)
        carried = float(np.median(tail["close_new"] / (tail["close"] / split)))
    else:
        price_factor, split, carried = np.nan, 1.0, np.nan
    early = old.copy()
    for col in ("open", "high", "low", "close"):
        early[col] = early[col] / split
    early["volume"] = early["volume"] * split
    early["adj_close"] = early["adj_close"] * price_factor
    # on common days the adjusted close of record is the adjusted file's
    early = early.merge(n[["date", "close"]].rename(columns={"close": "_adj"}), on="date", how="left")
    early["adj_close"] = early["_adj"].fillna(early["adj_close"])
    late = n[n["date"] > old["date"].max()].copy() if len(old) else n.copy()
    late["adj_close"] = late["close"]
    exact = abs(carried - 1) < EXACT
    if not exact:
        keep = (late["date"] == n["date"].max()) & last_exact
        late.loc[~keep, ["open", "high", "low", "close"]] = np.nan
    early["basis"] = AS_TRADED
    late["basis"] = np.where(late["close"].notna(), AS_TRADED, ADJUSTED_ONLY)
    cols = [*BAR, "adj_close", "basis"]
    bars = pd.concat([early[cols], late[cols]], ignore_index=True)
    return bars, {
        "price_factor": price_factor,
        "split_factor": split,
        "overlap_days": len(overlap),
        "dividends_after": 1 - carried if len(overlap) else np.nan,
    }


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
    """Daily bars of ``tickers`` on the split basis of :data:`~refdata.common.BASIS_DATE` (raw / later splits).

    Args:
        raw: the pystock bars (:func:`raw_prices`).
        tickers: the tickers to keep.
        splits: the split table.

    Returns:
        ``ticker``, ``time`` (UTC), OHLC, ``volume``: weekdays with a positive close, single bad prints the next bar
        takes back left out.
    """
    df = raw[raw["ticker"].isin(tickers)].copy()
    df = df.dropna(subset=["close"])
    df = df[(df["close"] > 0) & (df["date"].dt.day_of_week < 5)].sort_values(["ticker", "date"], kind="stable")
    # a single bad print the next bar takes back (VNO 2015-06-29 at 23.78 among ~96, on 10,100 shares)
    df = df[~spikes(df.rename(columns={"ticker": "symbol", "close": "adj"}))]
    k = split_factor(splits, df["ticker"], df["date"])
    for c in ("open", "high", "low", "close"):
        df[c] = (df[c] / k).round(4)
    df["volume"] = (df["volume"].astype(float) * k).round().astype("Int64")
    df["time"] = df["date"].dt.tz_localize("UTC")
    # their distributions are the dividends dataset's (no adjusted close of 2026 exists for them)
    df["adj_close"], df["basis"] = np.nan, AS_TRADED
    return df[["ticker", "time", "open", "high", "low", "close", "volume", "adj_close", "basis"]].reset_index(drop=True)


def build_minute_prices(m: pd.DataFrame, splits: pd.DataFrame) -> pd.DataFrame:
    """LEAN minute bars (raw, US/Eastern) as traded on today's split basis: prices over the splits after each day.

    Args:
        m: LEAN minute bars (``ticker``, ``datetime_et``, OHLC, ``volume``).
        splits: the split table.

    Returns:
        ``ticker``, ``time`` (UTC), OHLC, ``volume`` (times the splits after the day), ``adj_close`` (missing),
        ``basis``.

    Example:
        >>> m = pd.DataFrame({"ticker": ["AAPL"], "datetime_et": ["2014-06-06 15:59:00"], "open": 645.0,
        ...                   "high": 646.0, "low": 644.0, "close": 645.57, "volume": 1000})
        >>> s = pd.DataFrame({"ticker": ["AAPL", "AAPL"], "date": pd.to_datetime(["2014-06-09", "2020-08-31"]),
        ...                   "ratio": [7.0, 4.0]})
        >>> build_minute_prices(m, s)[["close", "volume"]].values.tolist()
        [[23.0561, 28000]]
    """
    m = m.copy()
    m["ts"] = pd.to_datetime(m["datetime_et"]).dt.tz_localize("America/New_York").dt.tz_convert("UTC")
    m["date"] = pd.to_datetime(m["datetime_et"].str[:10])
    k = split_factor(splits, m["ticker"], m["date"])
    for col in ("open", "high", "low", "close"):
        m[col] = (m[col] / k).round(4)
    m["volume"] = (m["volume"] * k).round()
    out = m[["ticker", "ts", "open", "high", "low", "close", "volume"]].rename(columns={"ts": "time"})
    out["volume"] = out["volume"].astype("Int64")
    out["adj_close"], out["basis"] = np.nan, AS_TRADED
    return out.sort_values(["ticker", "time"]).reset_index(drop=True)


#: two series under one ticker are one company when their closes are within this of each other ...
SAME_CLOSE = 0.01
#: ... on at least this share of their common days (a few bad prints of one source allowed)
SAME_SHARE = 0.98


def sp500_identity(lake: pd.DataFrame, bars: pd.DataFrame) -> pd.DataFrame:
    """Whether each ticker of the 2016-2026 bars is the company the lake's as-traded bars of that ticker are.

    Args:
        lake: the lake's bars (``ticker``, ``time``, ``close``, ``basis``).
        bars: :func:`refdata.sp500_bars.as_traded_bars`.

    Returns:
        One row per ticker of ``bars``: ``common_days``, ``within`` (the share of common days whose closes agree
        within :data:`SAME_CLOSE`), ``median_gap``, ``same`` (no common day, or ``within`` >= :data:`SAME_SHARE`).

    Example:
        >>> t = pd.to_datetime(["2016-06-01", "2016-06-02"]).tz_localize("UTC")
        >>> lake = pd.DataFrame({"ticker": ["A", "A", "B", "B"], "time": [*t, *t], "close": [10.0, 11.0, 5.0, 5.0],
        ...                      "basis": "as_traded"})
        >>> new = pd.DataFrame({"ticker": ["A", "A", "B", "B", "C"], "time": [*t, *t, t[0]],
        ...                     "close": [10.0, 11.05, 9.0, 9.0, 1.0]})
        >>> sp500_identity(lake, new)[["ticker", "same"]].values.tolist()
        [['A', True], ['B', False], ['C', True]]
    """
    ours = lake[basis.as_traded(lake["basis"])][["ticker", "time", "close"]].astype({"ticker": str})
    common = ours.merge(
        bars[["ticker", "time", "close"]].astype({"ticker": str}), on=["ticker", "time"], suffixes=("", "_new")
    )
    gap = (common["close_new"] / common["close"] - 1).abs()
    by = common.assign(gap=gap, ok=gap <= SAME_CLOSE).groupby("ticker")
    stats = pd.DataFrame({"common_days": by.size(), "within": by["ok"].mean(), "median_gap": by["gap"].median()})
    out = pd.DataFrame({"ticker": sorted(set(bars["ticker"].astype(str)))}).merge(
        stats.reset_index(), on="ticker", how="left"
    )
    out["common_days"] = out["common_days"].fillna(0).astype("int64")
    out["same"] = (out["common_days"] == 0) | (out["within"] >= SAME_SHARE)
    return out


def with_sp500_bars(daily: pd.DataFrame, bars: pd.DataFrame, identity: pd.DataFrame, end: pd.Timestamp) -> pd.DataFrame:
    """The main universe's bars with the 2016-2026 source's as-traded bars after the 2003-2023 file's ``end``.

    A main-universe stock the source holds (and :func:`sp500_identity` finds the same company) gets the source's
    OHLC and volume after ``end``, as traded (its ``adjusted_only`` rows become bars), to the source's last day;
    ``adj_close`` stays the 2021-2026 file's where it has the day (the adjusted close of record), else the source's.

    Args:
        daily: :func:`build_prices`'s bars (``ticker``, ``time``, OHLC, ``volume``, ``adj_close``, ``basis``).
        bars: the 2016-2026 source's bars on the lake's basis.
        identity: :func:`sp500_identity`.
        end: the last day of the 2003-2023 file.

    Returns:
        The bars, sorted by ticker and time.
    """
    same = set(identity.loc[identity["same"], "ticker"])
    tickers = (set(daily["ticker"].astype(str)) & same) - set(LEAN_FUNDS)
    cut = pd.Timestamp(end).tz_localize("UTC")
    main = daily["ticker"].astype(str).isin(tickers)
    late = daily[main & (daily["time"] > cut)][["ticker", "time", "adj_close"]].astype({"ticker": str})
    new = bars[bars["ticker"].isin(tickers) & (bars["time"] > cut)].merge(
        late, on=["ticker", "time"], how="left", suffixes=("", "_record")
    )
    new["adj_close"] = new["adj_close_record"].fillna(new["adj_close"])
    keep = daily[~(main & (daily["time"] > cut))].astype({"ticker": str})
    out = pd.concat([keep, new[keep.columns.intersection(new.columns)]], ignore_index=True)
    return out.sort_values(["ticker", "time"], kind="stable").reset_index(drop=True)


def _prices_main(ctx: Context) -> dict[str, pd.DataFrame]:
    new, old, etf, lean = (
        pd.read_csv(ctx.source(p), parse_dates=["date"]) for p in (NEW_DAILY, OLD_DAILY, ETF_DAILY, LEAN_DAILY_RAW)
    )
    lean_factors = pd.read_csv(ctx.source(LEAN_FACTORS), dtype={"date": str})
    lean_factors["date"] = pd.to_datetime(lean_factors["date"], format="%Y%m%d")
    old = old_as_traded(old, spin_off_factors(old, lean))
    daily, factors = build_prices(new, old, etf, lean, lean_factors)
    return {"prices_main_2023": daily, "price_factors": factors, "old_daily": old}


def _prices_sp500(ctx: Context) -> dict[str, pd.DataFrame]:
    daily, bars = ctx["prices_main_2023"], ctx["sp500_bars"]
    identity = sp500_identity(daily, bars)
    end = ctx["old_daily"]["date"].max()
    return {"prices_main": with_sp500_bars(daily, bars, identity, end), "sp500_identity": identity}


def _pystock_prices(ctx: Context) -> dict[str, pd.DataFrame]:
    # a bar belongs to the company that held its symbol that day (the source files bars under the day's symbol)
    return {
        "pystock_prices": relabel(raw_prices(pd.read_parquet(ctx.source(PYSTOCK_DAILY))), ctx["pystock_owners"], "date")
    }


def _prices(ctx: Context) -> dict[str, pd.DataFrame]:
    daily = ctx["prices_main"]
    broad = set(ctx["pystock_owners"]["ticker"]) - set(daily["ticker"].astype(str)) - set(prices_left_out())
    broad_bars = broad_prices(ctx["pystock_prices"], broad, ctx["splits"])
    # the broad universe's identity against the 2016-2026 source (which tickers the history package extends)
    identity = pd.concat([ctx["sp500_identity"], sp500_identity(broad_bars, ctx["sp500_bars"])], ignore_index=True)
    identity = identity.sort_values(["ticker", "common_days"], kind="stable").drop_duplicates("ticker", keep="last")
    return {
        "prices": pd.concat([daily, broad_bars], ignore_index=True)
        .sort_values(["ticker", "time"], kind="stable")
        .reset_index(drop=True),
        "sp500_identity_all": identity.reset_index(drop=True),
    }


def _prices_minute(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"prices_minute": build_minute_prices(pd.read_csv(ctx.source(LEAN_MINUTE)), ctx["splits"])}


_PROVENANCE_PRICES = Provenance(
    "prices/us_equities_daily_2003_2023.csv.gz (as traded, 2003-10-30 .. 2023-10-27), "
    "prices/lean_daily_raw_unadjusted.csv.gz + prices/lean_factor_files.csv (SPY, QQQ as traded to 2021-03-31), "
    "prices/us_equities_daily_adj_2021_2026.csv.gz and prices/etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX.csv.gz "
    "(adjusted closes; ^VIX and the incomplete last session 2026-03-26 left out)",
    YAHOO + "; LEAN sample data Apache-2.0",
    "One basis: open..close as traded on the split basis of 2026-02-25, dividends never in them; `basis` on every "
    "row. The 31 long-history stocks: the 2003-2023 file's split-adjusted OHLC (equal to the raw closes of LEAN, "
    "ml4t and pystock over later splits; IBM's carry the 2021-11-04 Kyndryl spin-off as a factor, measured against "
    "LEAN's raw closes and taken out) divided by the splits after 2023-10-27 (the overlap's volume ratio). SPY and "
    "QQQ: LEAN's raw bars times their factor file's split factor. `adj_close`: the 2021-2026 files' split- and "
    "dividend-adjusted close (as of 2026-02-25; ETFs 2026-03-26); earlier days the source's own adjusted close "
    "linked over the overlap. After 2023-10-27 the 31 stocks' bars are the S&P 500 source of data-real-6 "
    f"({SP500_DAILY}, Yahoo data via clates/dividend-analysis, no licence file): its print (close x the later "
    "split and spin-off factors) divided by the lake's splits after the day, to 2026-03-13; it agrees with the "
    "2003-2023 file on every common day (98% or more within 1%, tested), and with the dividends dataset it "
    "reproduces the 2021-2026 adjusted file within 0.1% (tested); `adj_close` stays the 2021-2026 file's to "
    "2026-02-25, then the source's adjusted close on the same reference. SPY and QQQ after 2021-03-31, and TLT, "
    "GLD, UUP throughout, have no as-traded source: `adjusted_only`, with `adj_close` and no OHLC (no stored "
    "source has their distributions). Other S&P 500, 400 and 600 members, 2015-03-20 .. 2017-03-31, "
    "from "
    f"{R2}prices/pystock_us_equities_daily_2015_2017.parquet: raw closes divided (volumes multiplied) by the splits "
    "after each day; no `adj_close` (their distributions are the dividends dataset). Left out (prices only; their "
    "statements are served): " + "; ".join(f"{t} ({why})" for t, why in sorted(prices_left_out().items())) + ".",
)

_PROVENANCE_PRICES_MINUTE = Provenance(
    "prices/lean_minute_trade_bars_AAPL_SPY.csv",
    "Apache-2.0 (QuantConnect LEAN sample data)",
    "raw US/Eastern bars converted to UTC, as traded on today's split basis: prices divided (volumes multiplied) "
    "by the splits of the split table after each day (AAPL 2014: 28; SPY: none)",
)


PRICES_MAIN = Stage(
    "prices_main",
    "Daily bars of the main universe and the ETFs on the 2026-02-25 basis, with the re-basing factors",
    _prices_main,
    sources=(NEW_DAILY, OLD_DAILY, ETF_DAILY, LEAN_DAILY_RAW, LEAN_FACTORS),
    outputs=(intermediate("prices_main_2023"), intermediate("price_factors"), intermediate("old_daily")),
)

PRICES_SP500 = Stage(
    "prices_sp500",
    "The main universe's bars after 2023-10-27 as traded, from the 2016-2026 S&P 500 source",
    _prices_sp500,
    needs=("prices_main_2023", "sp500_bars", "old_daily"),
    outputs=(intermediate("prices_main"), intermediate("sp500_identity")),
)

PYSTOCK_PRICES = Stage(
    "pystock_prices",
    "The raw pystock daily bars of 2015-2017 (broad universe), under the lake ticker of the company of each day",
    _pystock_prices,
    sources=(PYSTOCK_DAILY,),
    needs=("pystock_owners",),
    outputs=(intermediate("pystock_prices"),),
)

PRICES = Stage(
    "prices",
    "Daily bars: the main universe plus the other S&P 1500 members 2015-2017 on the split basis",
    _prices,
    needs=("prices_main", "pystock_prices", "pystock_owners", "splits", "sp500_bars", "sp500_identity"),
    outputs=(dataset("prices", _PROVENANCE_PRICES), intermediate("sp500_identity_all")),
)

PRICES_MINUTE = Stage(
    "prices_minute",
    "LEAN minute bars (AAPL, SPY) as traded on today's split basis",
    _prices_minute,
    sources=(LEAN_MINUTE,),
    needs=("splits",),
    outputs=(dataset("prices_minute", _PROVENANCE_PRICES_MINUTE, schema="prices"),),
)

STAGES = (PRICES_MAIN, PRICES_SP500, PYSTOCK_PRICES, PRICES, PRICES_MINUTE)
