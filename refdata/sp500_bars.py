"""As-traded daily bars, cash dividends and spin-offs of the S&P 500 members of 2026-03, 2016-03-14 .. 2026-03-13.

One source (``data-real-6``, a yfinance dump): Yahoo's ``close`` is adjusted for every later split *and spin-off*
(Yahoo books a spin-off as a fractional "split"), so the price as it printed is the source's ``close_as_traded``
(``close x later_split_factor``). The lake's basis is as traded on the split basis of
:data:`~refdata.common.BASIS_DATE`: the print divided by the lake's split table after the day (never by a
spin-off), dividends never in ``open``..``close``. A factor of the source's split file is a share split when it is a
ratio of small whole numbers (2, 3/2, 5/4, 1/8, 20): the split stage adds those the lake's table lacks
(:func:`missing_share_splits`). What a factor holds beyond the lake's split of that day (1.128, 1.253, HLT's
0.487 = 1/3 x 1.462) is a spin-off, served as a ``special_or_in_kind`` distribution (the eve's close x (1 - 1 /
rest)), as the lake's other spin-offs are.

``adj_close`` is the close with every distribution of the source put back (:func:`with_adjusted_close`), on the
reference date :data:`~refdata.common.BASIS_DATE`; Yahoo's own adjusted close reproduces it within 0.1%
(tested), and is not served.

Example:
    >>> is_share_split(pd.Series([2.0, 1.5, 1.25, 0.125, 20.0, 1.128, 1.253, 0.4725])).tolist()
    [True, True, True, True, True, False, False, False]
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from fdkit.frames import basis
from fdkit.lake.reviewed import reviewed_facts
from refdata.common import BASIS_DATE, ETF_DAILY, YAHOO, split_factor
from refdata.history import spikes
from refdata.stage import Context, Stage, intermediate

__all__ = [
    "DAILY",
    "DIVIDENDS",
    "SPLITS",
    "STAGES",
    "as_traded_bars",
    "as_traded_by_year",
    "distributions",
    "is_share_split",
    "missing_share_splits",
    "no_as_traded",
    "share_splits",
    "spin_offs",
    "with_adjusted_close",
]

DAILY = "data-real-6/prices-sp500-close-2016-2026/sp500_members_daily_yahoo_close_adjclose_2016_2026.parquet"
DIVIDENDS = "data-real-6/dividends-splits-sp500/sp500_cash_dividends_yahoo_2016_2026.csv.gz"
SPLITS = "data-real-6/dividends-splits-sp500/sp500_splits_and_spinoff_factors_yahoo_2016_2026.csv"
SOURCE_NAME = "data-real-6 yfinance dump (clates/dividend-analysis)"
LICENCE = YAHOO

#: the denominators a share split's ratio is written with (3-for-2, 5-for-4, 1-for-8, ...)
_DENOMINATORS = (1, 2, 3, 4, 5, 8, 10)


def is_share_split(ratio: pd.Series) -> pd.Series:
    """Whether each factor of the split file is a share split (a ratio of small whole numbers), not a spin-off.

    Args:
        ratio: new shares per old share (below 1: a reverse split).

    Returns:
        A boolean series (a factor like 1.128 or 1.253, Yahoo's rounded spin-off ratio, is False).

    Example:
        >>> is_share_split(pd.Series([3.0, 0.5, 1.081])).tolist()
        [True, True, False]
    """
    r = ratio.astype("float64").to_numpy()
    big = np.where(r >= 1, r, 1 / r)
    whole = np.zeros(len(r), dtype=bool)
    for q in _DENOMINATORS:
        whole |= np.abs(big * q - np.round(big * q)) < 1e-6
    return pd.Series(whole & (big > 1), index=ratio.index)


def share_splits(splits: pd.DataFrame) -> pd.DataFrame:
    """The source split file's share splits up to the basis date (``ticker``, ``date``, ``ratio``).

    Example:
        >>> s = pd.DataFrame({"ticker": ["A", "B"], "ex_date": ["2020-01-02", "2024-04-02"],
        ...                   "split_ratio": [2.0, 1.253]})
        >>> share_splits(s)["ticker"].tolist()
        ['A']
    """
    s = pd.DataFrame(
        {
            "ticker": splits["ticker"].astype(str),
            "date": pd.to_datetime(splits["ex_date"]),
            "ratio": splits["split_ratio"].astype("float64"),
        }
    )
    return s[is_share_split(s["ratio"]) & (s["date"] <= BASIS_DATE)].reset_index(drop=True)


def missing_share_splits(
    splits: pd.DataFrame, lake_splits: pd.DataFrame, raw: pd.DataFrame, lake_raw: pd.DataFrame
) -> pd.DataFrame:
    """The source's share splits the lake's split table lacks, for the companies the lake holds under that ticker.

    A split is added when the lake has no split of the ticker within 5 days of it, and the lake's raw closes of the
    ticker (if any) are the source's prints on their common days before it (median within 1%: the same company;
    a symbol another company held before is left alone).

    Args:
        splits: the source's split file (``ticker``, ``ex_date``, ``split_ratio``).
        lake_splits: the lake's split table so far (``ticker``, ``date``, ``ratio``).
        raw: the source's prints (``ticker``, ``date``, ``close_as_traded``).
        lake_raw: the lake's raw closes (``ticker``, ``date``, ``close``).

    Returns:
        ``ticker``, ``date``, ``ratio``, ``source``.

    Example:
        >>> s = pd.DataFrame({"ticker": ["A"], "ex_date": ["2021-03-05"], "split_ratio": [2.0]})
        >>> none = pd.DataFrame(columns=["ticker", "date", "ratio"])
        >>> prints = pd.DataFrame({"ticker": ["A"], "date": pd.to_datetime(["2016-06-01"]),
        ...                        "close_as_traded": [58.8]})
        >>> lake = pd.DataFrame({"ticker": ["A"], "date": pd.to_datetime(["2016-06-01"]), "close": [58.81]})
        >>> missing_share_splits(s, none, prints, lake)[["ticker", "ratio"]].values.tolist()
        [['A', 2.0]]
    """
    out = []
    for r in share_splits(splits).itertuples(index=False):
        known = pd.to_datetime(lake_splits.loc[lake_splits["ticker"].astype(str) == r.ticker, "date"])
        day = pd.Timestamp(str(r.date))
        if len(known) and bool((abs(known - day) <= pd.Timedelta(days=5)).any()):
            continue
        ours = lake_raw[(lake_raw["ticker"] == r.ticker) & (lake_raw["date"] < r.date)]
        theirs = raw[(raw["ticker"] == r.ticker) & (raw["date"] < r.date)]
        common = ours[["ticker", "date", "close"]].merge(
            theirs[["ticker", "date", "close_as_traded"]], on=["ticker", "date"]
        )
        if len(common) and abs(float(np.median(common["close"] / common["close_as_traded"])) - 1) > 0.01:
            continue
        out.append({"ticker": r.ticker, "date": r.date, "ratio": r.ratio, "source": SOURCE_NAME + ", split file"})
    return pd.DataFrame(out, columns=["ticker", "date", "ratio", "source"])


def as_traded_bars(raw: pd.DataFrame, splits: pd.DataFrame) -> pd.DataFrame:
    """The source's bars on the lake's basis: as printed, divided by the lake's splits after each day.

    Args:
        raw: the source's rows (``ticker``, ``date``, OHLC on Yahoo's basis, ``close``, ``adj_close``,
            ``close_as_traded``, ``later_split_factor``, ``volume``).
        splits: the lake's split table (``ticker``, ``date``, ``ratio``).

    Returns:
        ``ticker``, ``time`` (UTC), OHLC, ``volume`` (Int64), ``adj_close``, ``basis`` (``as_traded``), sorted by
        ticker and time.

    Example:
        >>> raw = pd.DataFrame({"ticker": ["G", "G"], "date": ["2024-03-28", "2024-04-02"],
        ...                     "open": 140.0, "high": 141.0, "low": 139.0, "close": [140.09, 150.0],
        ...                     "adj_close": [139.0, 149.5], "close_as_traded": [175.53, 150.0],
        ...                     "later_split_factor": [1.253, 1.0], "volume": [100, 200]})
        >>> none = pd.DataFrame({"ticker": pd.Series([], dtype=str), "date": pd.to_datetime([]), "ratio": []})
        >>> as_traded_bars(raw, none)["close"].tolist()
        [175.53, 150.0]
    """
    df = raw.reset_index(drop=True)
    df["date"] = pd.to_datetime(df["date"]).dt.as_unit("ns")  # the lake's one resolution (pandas 3 infers seconds)
    # Yahoo's basis -> as printed (every later factor of the source) -> the lake's basis (its split table)
    to_print = df["later_split_factor"].astype("float64").to_numpy()
    lake = split_factor(splits, df["ticker"], df["date"])
    k = to_print / lake
    out = pd.DataFrame({"ticker": df["ticker"].astype(str), "time": df["date"].dt.tz_localize("UTC")})
    for col in ("open", "high", "low"):
        out[col] = (df[col].astype("float64") * k).round(4)
    # the print itself where the source derived it (close x factor, in float64)
    out["close"] = (df["close_as_traded"].astype("float64") / lake).round(4)
    out["volume"] = (df["volume"].astype("float64") / k).round().astype("Int64")
    out["adj_close"] = np.nan  # (:func:`with_adjusted_close`, from the distributions)
    out["basis"] = "as_traded"
    out = out.sort_values(["ticker", "time"], kind="stable").reset_index(drop=True)
    # a single bar off by half or more that the next takes back is a bad print (DXCM 2022-06-10 on the old share
    # basis among bars on the new): left out, as the lake's other sources' are
    return out[~spikes(out.rename(columns={"ticker": "symbol", "close": "adj"}))].reset_index(drop=True)


def with_adjusted_close(bars: pd.DataFrame, paid: pd.DataFrame) -> pd.DataFrame:
    """``adj_close`` from the closes and the distributions: the close times every later ex-date's factor.

    A distribution ``D`` going ex on ``e`` multiplies every earlier close by ``1 - D / close(eve of e)``, up to the
    reference date :data:`~refdata.common.BASIS_DATE` (later ones divide the later closes), so ``adj_close``
    is the close on the reference date and ``adj_close / close`` steps exactly on ex-dates.

    Args:
        bars: :func:`as_traded_bars`.
        paid: :func:`distributions`.

    Returns:
        ``bars`` with ``adj_close``.

    Example:
        >>> t = pd.to_datetime(["2020-05-01", "2020-05-04", "2020-05-05"]).tz_localize("UTC")
        >>> bars = pd.DataFrame({"ticker": "A", "time": t, "close": [10.0, 9.0, 9.0]})
        >>> paid = pd.DataFrame({"ticker": ["A"], "date": pd.to_datetime(["2020-05-04"]), "dividend": [1.0]})
        >>> with_adjusted_close(bars, paid)["adj_close"].tolist()
        [9.0, 9.0, 9.0]
    """
    out = bars.sort_values(["ticker", "time"], kind="stable").reset_index(drop=True)
    day = out["time"].dt.tz_localize(None).to_numpy()
    factor = np.ones(len(out))
    ref = np.datetime64(BASIS_DATE)
    tickers = out["ticker"].astype(str).to_numpy()
    starts = np.flatnonzero(np.r_[True, tickers[1:] != tickers[:-1]])
    spans = dict(zip(tickers[starts], zip(starts, np.r_[starts[1:], len(tickers)], strict=True), strict=True))
    for ticker, ex, amount in paid[["ticker", "date", "dividend"]].itertuples(index=False):
        if ticker not in spans:
            continue
        rows = np.arange(*spans[ticker])
        at = rows[np.searchsorted(day[rows], np.datetime64(ex))] if day[rows][-1] >= np.datetime64(ex) else None
        if at is None or at == rows[0]:
            continue  # no session on or after the ex-date, or none before it
        step = 1 - float(amount) / float(out["close"].iloc[at - 1])
        if np.datetime64(ex) <= ref:
            factor[rows[rows < at]] *= step
        else:
            factor[rows[rows >= at]] /= step
    out["adj_close"] = (out["close"].to_numpy() * factor).round(4)
    return out


def spin_offs(splits: pd.DataFrame, lake_splits: pd.DataFrame) -> pd.DataFrame:
    """The source's factors beyond the lake's split of the same day (within 5 days): spin-offs and the like.

    Args:
        splits: the source's split file (``ticker``, ``ex_date``, ``split_ratio``).
        lake_splits: the lake's split table (``ticker``, ``date``, ``ratio``).

    Returns:
        ``ticker``, ``date``, ``rest`` (the factor over the lake's split ratio, 1.0 where it has none), for the
        factors whose rest is not 1 (within 0.1%).

    Example:
        >>> s = pd.DataFrame({"ticker": ["H", "A"], "ex_date": ["2017-01-04", "2020-08-31"],
        ...                   "split_ratio": [0.4873, 4.0]})
        >>> lake = pd.DataFrame({"ticker": ["H", "A"], "date": pd.to_datetime(["2017-01-04", "2020-08-31"]),
        ...                      "ratio": [1 / 3, 4.0]})
        >>> spin_offs(s, lake)["rest"].round(4).tolist()
        [1.4619]
    """
    rows = []
    for ticker, ex, ratio in splits[["ticker", "ex_date", "split_ratio"]].itertuples(index=False):
        day = pd.Timestamp(ex)
        near = (pd.to_datetime(lake_splits["date"]) - day).abs().dt.days <= 5
        known = lake_splits[(lake_splits["ticker"].astype(str) == ticker) & near]
        rest = float(ratio) / (float(known["ratio"].iloc[0]) if len(known) else 1.0)
        if abs(rest - 1) > 1e-3:
            rows.append({"ticker": str(ticker), "date": day, "rest": rest})
    return pd.DataFrame(rows, columns=["ticker", "date", "rest"])


def distributions(
    dividends: pd.DataFrame, splits: pd.DataFrame, lake_splits: pd.DataFrame, bars: pd.DataFrame
) -> pd.DataFrame:
    """Cash dividends as paid and spin-offs as in-kind distributions, per share on the lake's basis.

    Args:
        dividends: the dividend file (``ticker``, ``ex_date``, ``amount_as_paid``).
        splits: the source's split file (a factor beyond the lake's split of that day is a spin-off).
        lake_splits: the lake's split table.
        bars: :func:`as_traded_bars` (the eve's close of a spin-off).

    Returns:
        ``ticker``, ``date`` (ex-date), ``dividend``, ``kind`` (``cash`` or ``special_or_in_kind``), ``in_prices``
        (False), ``source``.

    Example:
        >>> d = pd.DataFrame({"ticker": ["A"], "ex_date": ["2020-05-01"], "amount_as_paid": [1.0]})
        >>> s = pd.DataFrame({"ticker": ["A"], "ex_date": ["2020-08-31"], "split_ratio": [4.0]})
        >>> lake = s.rename(columns={"ex_date": "date", "split_ratio": "ratio"})
        >>> distributions(d, s, lake, pd.DataFrame(columns=["ticker", "time", "close"]))["dividend"].tolist()
        [0.25]
    """
    cash = pd.DataFrame({"ticker": dividends["ticker"].astype(str), "date": pd.to_datetime(dividends["ex_date"])})
    cash["dividend"] = (
        dividends["amount_as_paid"].astype("float64").to_numpy()
        / split_factor(lake_splits, cash["ticker"], cash["date"])
    ).round(6)
    cash["kind"] = "cash"
    spin = spin_offs(splits, lake_splits)
    eve = _eve_close(bars, spin)
    spun = pd.DataFrame(
        {
            "ticker": spin["ticker"],
            "date": spin["date"],
            "dividend": (eve * (1 - 1 / spin["rest"].to_numpy(dtype=float))).round(4),
        }
    )
    spun["kind"] = "special_or_in_kind"
    spun = spun.dropna(subset=["dividend"])
    # a "cash dividend" of the spin-off's size within days of it is the spin-off booked twice (DHR's Fortive,
    # 2016-07-05: 27.70 beside the factor's 24.75): left out
    near = cash.reset_index().merge(spun.astype({"date": "datetime64[ns]"}), on="ticker", suffixes=("", "_spin"))
    twice = near[
        ((near["date"] - near["date_spin"]).abs().dt.days <= 3) & (near["dividend"] > near["dividend_spin"] / 2)
    ]
    cash = cash.drop(index=twice["index"].to_list())
    out = pd.concat([cash, spun], ignore_index=True)
    out["in_prices"] = False
    out["source"] = SOURCE_NAME
    return out.sort_values(["ticker", "date"], kind="stable").reset_index(drop=True)


def _eve_close(bars: pd.DataFrame, events: pd.DataFrame) -> np.ndarray:
    """The lake-basis close of the session before each event's ex-date (NaN without one)."""
    out = np.full(len(events), np.nan)
    if not len(bars):
        return out
    days = pd.to_datetime(bars["time"]).dt.tz_localize(None)
    for i, (ticker, ex) in enumerate(events[["ticker", "date"]].itertuples(index=False)):
        before = bars.loc[(bars["ticker"] == ticker) & (days < ex), "close"]
        if len(before):
            out[i] = float(before.iloc[-1])
    return out


def no_as_traded(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The funds whose bars after their as-traded source's end are adjusted closes only, and why, reviewed.

    The ``no_as_traded`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): SPY and QQQ as traded to
    2021-03-31 (LEAN's raw bars), TLT, GLD and UUP never; no stored source has the rest. Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{ticker: why}`` (the row's reason without its ``No as-traded source: ``), in the order the ETF file's
        name gives the funds (others after them, by ticker).

    Example:
        >>> list(no_as_traded())
        ['SPY', 'QQQ', 'TLT', 'GLD', 'UUP']
    """
    rows = reviewed_facts("no_as_traded", path)
    why = dict(
        zip(
            rows["ticker"].astype(str),
            rows["reason"].astype(str).str.removeprefix("No as-traded source: "),
            strict=True,
        )
    )
    named = Path(ETF_DAILY).name.split(".")[0].split("_")
    return {t: why[t] for t in sorted(why, key=lambda t: (named.index(t) if t in named else len(named), t))}


def as_traded_by_year(px: pd.DataFrame) -> list[str]:
    """The ``SOURCES.md`` section: tickers of ``prices`` with as-traded bars and with adjusted-only rows, by year.

    Args:
        px: the lake's ``prices`` (``ticker``, ``time``, ``basis``).

    Returns:
        Markdown lines.

    Example:
        >>> px = pd.DataFrame({"ticker": ["A"], "time": pd.to_datetime(["2024-01-02"], utc=True), "basis": "as_traded"})
        >>> [r for r in as_traded_by_year(px) if r.startswith("| 2024")]
        ['| 2024 | 1 | 1 | 0 | 0 |']
    """
    year = px["time"].dt.year
    traded = basis.as_traded(px["basis"])
    lines = [
        "## As-traded bars by year (2016-2026)",
        "",
        "Tickers of `prices` with as-traded bars (`basis` as_traded: OHLC as printed, on the split basis of "
        "2026-02-25) and with `adjusted_only` rows (an adjusted close, no OHLC) in each year. After 2017-03 the "
        "bundled lake's stocks are the 31 long-history names (as traded to 2026-03-13 from the S&P 500 source "
        "of data-real-6); the funds below have no as-traded source.",
        "",
        "| year | tickers as traded | as-traded bars | tickers adjusted only | adjusted-only rows |",
        "|---|---:|---:|---:|---:|",
    ]
    for y in range(2016, 2027):
        t, a = px[(year == y) & traded], px[(year == y) & ~traded]
        lines.append(f"| {y} | {t['ticker'].nunique()} | {len(t):,} | {a['ticker'].nunique()} | {len(a):,} |")
    lines += ["", "Names without an as-traded source for part of the window:", ""]
    lines += [f"* {t}: {why}" for t, why in no_as_traded().items()]
    return [*lines, ""]


def _sp500_bars(ctx: Context) -> dict[str, pd.DataFrame]:
    raw = pd.read_parquet(ctx.source(DAILY))
    splits, lake_splits = pd.read_csv(ctx.source(SPLITS)), ctx["splits"]
    bars = as_traded_bars(raw, lake_splits)
    paid = distributions(pd.read_csv(ctx.source(DIVIDENDS)), splits, lake_splits, bars)
    return {"sp500_bars": with_adjusted_close(bars, paid), "sp500_distributions": paid}


SP500_BARS = Stage(
    "sp500_bars",
    "As-traded daily bars, dividends and spin-offs of the S&P 500 members of 2026-03 (2016-03-14 .. 2026-03-13)",
    _sp500_bars,
    sources=(DAILY, DIVIDENDS, SPLITS),
    needs=("splits",),
    outputs=(intermediate("sp500_bars"), intermediate("sp500_distributions")),
)

STAGES = (SP500_BARS,)
