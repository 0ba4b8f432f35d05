"""Distributions per share by ex-date (cash, special or in kind), on the split basis of the lake's prices.

The steps of Yahoo's adjusted-close factor (the long-history names), the eve of each ex-date in the pystock
closes (:func:`pystock_distributions`), LEAN's factor files (SPY, QQQ) and, for spin-offs none of those shows,
Stooq's adjusted closes (:func:`stooq_distributions`). No close of the lake carries a distribution (``in_prices``
false): ``df.fds.total_return()`` adds them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdkit.frames import basis
from refdata.common import BASIS_DATE, LEAN_FUNDS, YAHOO, spin_offs_in_closes
from refdata.history import STOOQ_2017
from refdata.splits import LEAN_FACTORS, trading_day_after
from refdata.stage import Context, Provenance, Stage, dataset

#: the day the 2003-2023 Yahoo download was split-adjusted to (its last session)
YAHOO_2023_BASIS = "2023-10-27"
#: adj_close / close steps by less than this between days without an event (float rounding of the file)
_FACTOR_NOISE = 1e-5


def build_dividends(d: pd.DataFrame, splits: pd.DataFrame) -> pd.DataFrame:
    """Cash dividends per share by ex-date (2003-10-31 .. 2023-10-27), on the split basis of the lake's prices.

    Yahoo's ``adj_close`` is the close times a factor that steps on each ex-date by ``1 - dividend / previous
    close`` (the file's closes are split-adjusted, so splits do not move it). Where the factor steps by more than
    the file's rounding (1e-5), the step gives the dividend: ``previous close x (1 - step)`` on the file's split
    basis (2023-10-27). It is put on the ex-date's basis and rounded to 4 decimals as paid (the file's 6-decimal
    prices leave an error of about 2e-7 x the close: AAPL's 2.65 of 2012 reads 2.6501), then on the lake's basis
    (every split in the split table), as prices are.

    Args:
        d: the 2003-2023 daily bars (``ticker``, ``date``, ``close``, ``adj_close``).
        splits: the split table.

    Returns:
        ``ticker``, ``date`` (ex-date), ``dividend`` (per share), ``source``.
    """
    d = d[~d["ticker"].str.startswith("^")].sort_values(["ticker", "date"], kind="stable").reset_index(drop=True)
    factor = d["adj_close"] / d["close"]
    step = factor.groupby(d["ticker"]).shift(1) / factor
    previous = d["close"].groupby(d["ticker"]).shift(1)
    event = (1 - step) > _FACTOR_NOISE
    out = pd.DataFrame(
        {
            "ticker": d.loc[event, "ticker"],
            "date": d.loc[event, "date"],
            "dividend": (previous * (1 - step))[event],
            "source": "Yahoo adjusted close (derived)",
        }
    ).reset_index(drop=True)
    tickers, days = out["ticker"].to_numpy(dtype=str), out["date"].to_numpy(dtype="datetime64[ns]")
    as_paid = (out["dividend"] * basis.split_factor(tickers, days, YAHOO_2023_BASIS, splits)).round(4)
    out["dividend"] = as_paid / basis.split_factor(tickers, days, BASIS_DATE.strftime("%Y-%m-%d"), splits)
    return out


#: a distribution worth more than this share of the eve's close is no regular cash dividend (a spin-off, a special)
SPECIAL_SHARE = 0.10


def pystock_distributions(raw: pd.DataFrame, prices: pd.DataFrame, splits: pd.DataFrame) -> pd.DataFrame:
    """Distributions per share of the names whose lake prices are pystock's raw closes (2015-2017).

    Each crawl adjusted the closes before it for the events up to the crawl and each day kept its latest crawl, so
    on the eve of an ex-date the adjusted close is below the close by the distribution (KO 2015-06-10: 40.33 and
    40.00, the 0.33 dividend; EBAY 2015-07-17: 66.29 and 27.90, the PayPal shares distributed). A split shows the
    same way; an eve before a split of the split table is no distribution (NI's 2015-07-02 Columbia Pipeline
    spin-off, 2.55x, is not the 5-for-2 split it resembles: the table has none). The amount is put on the lake's
    split basis (that of the prices) and dated by the next bar, the ex-date. Above :data:`SPECIAL_SHARE` of the
    eve's close it is ``special_or_in_kind`` (spin-offs, special dividends), else ``cash``. None of these are in the
    lake's prices of these names (raw closes): ``in_prices`` is false.

    Args:
        raw: the pystock bars (``ticker``, ``date``, ``close``, ``adj_close``).
        prices: the lake's daily bars (``ticker``, ``time``, ``close``) of the names to read.
        splits: the split table (``ticker``, ``date``).

    Returns:
        ``ticker``, ``date``, ``dividend``, ``kind``, ``in_prices``, ``source``.

    Example:
        >>> raw = pd.DataFrame({"ticker": ["KO"] * 3, "date": pd.to_datetime(["2015-06-10", "2015-06-11",
        ...                     "2015-06-12"]), "close": [40.33, 40.1, 39.96], "adj_close": [40.0, 40.1, 39.96]})
        >>> px = raw.assign(time=raw["date"].dt.tz_localize("UTC"))[["ticker", "time", "close"]]
        >>> none = pd.DataFrame({"ticker": [], "date": pd.to_datetime([])})
        >>> pystock_distributions(raw, px, none)[["date", "dividend", "kind"]].values.tolist()
        [[Timestamp('2015-06-11 00:00:00'), 0.33, 'cash']]
    """
    lake = prices[["ticker", "time", "close"]].assign(
        ticker=prices["ticker"].astype(str), date=prices["time"].dt.tz_localize(None)
    )
    m = raw[["ticker", "date", "close", "adj_close"]].merge(
        lake[["ticker", "date", "close"]], on=["ticker", "date"], suffixes=("", "_lake")
    )
    m = m.sort_values(["ticker", "date"]).reset_index(drop=True)
    split_days = set(zip(splits["ticker"].astype(str), pd.to_datetime(splits["date"]), strict=True))
    same = m["ticker"].eq(m["ticker"].shift(-1))
    # the eve's difference on the lake's basis, on the next bar of the same ticker (the ex-date)
    eve = ((m["close"] - m["adj_close"]) * m["close_lake"] / m["close"]).where(same & (m["adj_close"] < m["close"]))
    cash = eve.shift().round(6)
    split_next = pd.Series([(t, d) in split_days for t, d in zip(m["ticker"], m["date"], strict=True)], index=m.index)
    hit = (cash > 0) & ~split_next & ~np.isclose(m["close"].shift(), m["adj_close"].shift(), rtol=1e-6)
    share = cash / m["close_lake"].shift()
    out = pd.DataFrame(
        {
            "ticker": m.loc[hit, "ticker"],
            "date": m.loc[hit, "date"],
            "dividend": cash[hit],
            "kind": np.where(share[hit] > SPECIAL_SHARE, "special_or_in_kind", "cash"),
        }
    )
    return out.assign(in_prices=False, source="pystock adjusted close (eve of the ex-date, derived)")


#: a distribution the adjusted file shows must take at least this share of the eve's close
STOOQ_MIN_SHARE = 0.10
#: sessions either side of a day on which the two files' daily returns must agree (the same company's series)
_STOOQ_WINDOW = 20


def stooq_distributions(prices: pd.DataFrame, stooq: pd.DataFrame, known: pd.DataFrame) -> pd.DataFrame:
    """Distributions the split- and dividend-adjusted Stooq closes show and no other source records.

    On an ex-date the as-traded close falls by the distribution while the adjusted close does not: the as-traded
    return over the adjusted return is the price factor f, and the distribution is the eve's close x (1 - f).
    Read where f is below 1 - :data:`STOOQ_MIN_SHARE` on a day without a recorded distribution, and only where the
    two series are one company's: their returns agree within 0.5% on 90% of the sessions within
    :data:`_STOOQ_WINDOW` of the day (Stooq's symbols are those of 2017-11-10, and some carry another company's
    history). Hilton's spin-offs of 2017-01-04 (Park Hotels, Hilton Grand Vacations): the close fell from 82.17
    (27.39 before the 1-for-3) to 58.00, the adjusted close rose 0.16%: f = 0.705, 24.26 a share in kind. A
    factor within 1% of a forward split's (1/2, 1/3, 2/3 ...: ``fdkit.frames.basis.SPLIT_RATIOS``) is a split the
    split table lacks, not read here.

    Args:
        prices: the lake's as-traded bars (``ticker``, ``time``, ``close``) to read.
        stooq: the adjusted file (``symbol``, ``date``, ``close``).
        known: distributions already recorded (``ticker``, ``date``).

    Returns:
        ``ticker``, ``date``, ``dividend``, ``kind``, ``in_prices``, ``source``.

    Example:
        >>> days = pd.bdate_range("2016-12-01", periods=41)
        >>> base = 80 + np.sin(np.arange(41))
        >>> lake = pd.DataFrame({"ticker": "HLT", "time": days.tz_localize("UTC"),
        ...                      "close": np.where(np.arange(41) >= 21, base * 0.7, base)})
        >>> adj = pd.DataFrame({"symbol": "HLT", "date": days, "close": base * 0.7})
        >>> none = pd.DataFrame({"ticker": [], "date": pd.to_datetime([])})
        >>> out = stooq_distributions(lake, adj, none)
        >>> out["date"].dt.date.astype(str).tolist(), out["dividend"].round(2).tolist(), out["kind"].tolist()
        (['2016-12-30'], [24.27], ['special_or_in_kind'])
    """
    lake = pd.DataFrame(
        {
            "ticker": prices["ticker"].astype(str),
            "close": prices["close"].to_numpy(),
            "date": prices["time"].dt.tz_localize(None).astype("datetime64[ns]"),
        }
    )
    adj = pd.DataFrame(
        {
            "ticker": stooq["symbol"].astype(str),
            "adj": stooq["close"].astype("float64").to_numpy(),
            "date": pd.to_datetime(stooq["date"]).astype("datetime64[ns]"),
        }
    )
    m = lake.dropna(subset=["close"]).merge(adj, on=["ticker", "date"]).sort_values(["ticker", "date"])
    m = m.reset_index(drop=True)
    g = m.groupby("ticker", sort=False)
    m["prev"] = g["close"].shift()
    m["f"] = (m["close"] / m["prev"]) / (m["adj"] / g["adj"].shift())
    agree = ((m["f"] - 1).abs() < 0.005).astype(float)
    near = agree.groupby(m["ticker"]).transform(
        lambda a: a.rolling(2 * _STOOQ_WINDOW + 1, center=True, min_periods=_STOOQ_WINDOW).sum()
    )
    count = agree.groupby(m["ticker"]).transform(
        lambda a: a.rolling(2 * _STOOQ_WINDOW + 1, center=True, min_periods=_STOOQ_WINDOW).count()
    )
    same_company = (near - agree) >= 0.9 * (count - 1)
    recorded = set(zip(known["ticker"].astype(str), pd.to_datetime(known["date"]), strict=True))
    fresh = pd.Series([(t, d) not in recorded for t, d in zip(m["ticker"], m["date"], strict=True)], index=m.index)
    # a factor that is a split's ratio is a split the split table lacks, no distribution: left for the invariants
    split = m["f"].map(basis.split_like)
    hit = (m["f"] < 1 - STOOQ_MIN_SHARE) & same_company & fresh & ~split.astype(bool)
    out = pd.DataFrame(
        {
            "ticker": m.loc[hit, "ticker"],
            "date": m.loc[hit, "date"],
            "dividend": (m["prev"] * (1 - m["f"]))[hit].round(4),
        }
    )
    return out.assign(
        kind="special_or_in_kind", in_prices=False, source="Stooq adjusted close vs the as-traded close (derived)"
    ).reset_index(drop=True)


def lean_dividends(lean: pd.DataFrame, tickers: tuple[str, ...], calendar: pd.DatetimeIndex) -> pd.DataFrame:
    """Cash distributions per share of ``tickers`` from LEAN's factor files (as paid; the funds never split since).

    Between two rows with the same split factor the price factor steps by ``1 - dividend / reference price``; the
    earlier row is the last day on the old factor, so the ex-date is the next session of ``calendar``.

    Args:
        lean: the factor files (``ticker``, ``date``, ``price_factor``, ``split_factor``, ``reference_price``).
        tickers: the tickers to read (SPY, QQQ: the funds whose as-traded bars are LEAN's).
        calendar: the sessions.

    Returns:
        ``ticker``, ``date``, ``dividend``, ``kind``, ``in_prices``, ``source``.

    Example:
        >>> f = pd.DataFrame({"ticker": ["SPY"] * 3, "date": pd.to_datetime(["2020-12-17", "2021-03-18",
        ...                   "2050-12-31"]), "price_factor": [0.992505, 0.996736, 1.0], "split_factor": 1.0,
        ...                   "reference_price": [372.24, 391.48, 0.0]})
        >>> cal = pd.DatetimeIndex(pd.to_datetime(["2020-12-17", "2020-12-18", "2021-03-18", "2021-03-19"]))
        >>> lean_dividends(f, ("SPY",), cal)[["date", "dividend"]].values.tolist()
        [[Timestamp('2020-12-18 00:00:00'), 1.5801], [Timestamp('2021-03-19 00:00:00'), 1.2778]]
    """
    next_day = trading_day_after(calendar)
    rows = []
    for ticker, g in lean[lean["ticker"].isin(tickers)].sort_values(["ticker", "date"]).groupby("ticker"):
        g = g.reset_index(drop=True)
        day, pf, sf, ref = (g[c].to_numpy() for c in ("date", "price_factor", "split_factor", "reference_price"))
        for i in range(len(g) - 1):
            if sf[i] == sf[i + 1] and pf[i] != pf[i + 1] and pd.Timestamp(day[i]) < BASIS_DATE:
                paid = round(float(ref[i]) * (1 - float(pf[i]) / float(pf[i + 1])), 4)
                rows.append({"ticker": ticker, "date": next_day(pd.Timestamp(day[i])), "dividend": paid})
    out = pd.DataFrame(rows, columns=["ticker", "date", "dividend"])
    return out.assign(kind="cash", in_prices=False, source="LEAN factor file (derived)")


def _dividends(ctx: Context) -> dict[str, pd.DataFrame]:
    yahoo = build_dividends(ctx["old_daily"], ctx["splits"])
    # a step of the adjusted/as-traded ratio that is a spin-off the source folded into its closes is in kind
    spin_offs = spin_offs_in_closes()
    spin = pd.Series([ex for ex, _ in spin_offs.values()], index=list(spin_offs))
    in_kind = yahoo["date"].eq(yahoo["ticker"].map(spin))
    yahoo = yahoo.assign(kind=np.where(in_kind, "special_or_in_kind", "cash"), in_prices=False)
    prices = ctx["prices"]
    broad = set(prices["ticker"].astype(str)) - set(yahoo["ticker"]) - set(ctx["prices_main"]["ticker"].astype(str))
    raw = ctx["pystock_prices"]
    pystock = pystock_distributions(
        raw[raw["ticker"].isin(broad)], prices[prices["ticker"].astype(str).isin(broad)], ctx["splits"]
    )
    lean = pd.read_csv(ctx.source(LEAN_FACTORS), dtype={"date": str})
    lean["date"] = pd.to_datetime(lean["date"], format="%Y%m%d")
    calendar = pd.DatetimeIndex(sorted(set(ctx["prices_main"]["time"].dt.tz_localize(None))))
    funds = lean_dividends(lean, LEAN_FUNDS, calendar)
    stooq = pd.read_parquet(ctx.source(STOOQ_2017), columns=["symbol", "date", "close"])
    known = pd.concat([yahoo, pystock, funds], ignore_index=True)
    broad_bars = prices[prices["ticker"].astype(str).isin(broad) & basis.as_traded(prices["basis"])]
    spun = stooq_distributions(broad_bars, stooq, known)
    # the other sources' last day: the 2003-2023 file's for the main universe, each broad name's last bar
    main_end = pd.Timestamp(ctx["old_daily"]["date"].max()).tz_localize("UTC")
    ends = {
        **broad_bars.groupby(broad_bars["ticker"].astype(str))["time"].max().to_dict(),
        **dict.fromkeys(ctx["prices_main"]["ticker"].astype(str).unique(), main_end),
    }
    later = sp500_after(ctx["sp500_distributions"], ctx["sp500_identity_all"], ends)
    out = pd.concat([known, spun, later], ignore_index=True).sort_values(["ticker", "date"], kind="stable")
    return {"dividends": out[["ticker", "date", "dividend", "kind", "in_prices", "source"]].reset_index(drop=True)}


def sp500_after(rows: pd.DataFrame, identity: pd.DataFrame, ends: dict[str, pd.Timestamp]) -> pd.DataFrame:
    """The 2016-2026 source's distributions of one company per ticker, after the lake's other sources end.

    Args:
        rows: :func:`refdata.sp500_bars.distributions`.
        identity: :func:`refdata.prices.sp500_identity` (a ticker that is another company is left out).
        ends: ticker -> the last day (UTC) the lake's other distribution sources cover (absent: none cover it).

    Returns:
        The rows to add.

    Example:
        >>> rows = pd.DataFrame({"ticker": ["A", "A", "B"], "date": pd.to_datetime(["2017-01-03", "2024-01-03",
        ...                      "2024-01-03"]), "dividend": 0.1})
        >>> ident = pd.DataFrame({"ticker": ["A", "B"], "same": [True, False]})
        >>> sp500_after(rows, ident, {"A": pd.Timestamp("2023-10-27", tz="UTC")})["date"].dt.year.tolist()
        [2024]
    """
    same = set(identity.loc[identity["same"], "ticker"])
    end = rows["ticker"].map(ends)
    after = end.isna() | (rows["date"].dt.tz_localize("UTC") > end)
    return rows[rows["ticker"].isin(same) & after].reset_index(drop=True)


_PROVENANCE_DIVIDENDS = Provenance(
    "prices/us_equities_daily_2003_2023.csv.gz (close and adj_close; through the prices stage)",
    YAHOO,
    "cash dividends per share by ex-date, 2003-10-31 .. 2023-10-27, for the 23 of the file's 31 tickers "
    "that paid any: on an ex-date Yahoo's adj_close / close factor steps by 1 - dividend / previous close, "
    "so dividend = previous close x (1 - step) wherever the step exceeds the file's rounding (1e-5), moved "
    "from the file's split basis (2023-10-27) to the ex-date's, rounded to 4 decimals as paid, then put on "
    "the lake's basis (AAPL 2012-08-09: 2.65 as paid, 2.65/28 in the lake; NVDA's 2024 10-for-1: 0.04 -> "
    "0.004). Checked against LEAN's factor files (AAPL, BAC, IBM) and the 10-K dividends per share "
    "(tests). The step at IBM's 2021-11-04 ex-date is the Kyndryl spin-off (special_or_in_kind), which the "
    "source folded into IBM's earlier closes and the prices stage takes out of them. No close of the lake carries "
    "a distribution (in_prices false throughout; the 31 names' total return is also their adj_close). "
    "After 2023-10-27 (and for the other S&P 500 members of 2026-03 after their 2015-2017 prices end, and all of "
    "2016-2026 for those the lake has no earlier bars of): the data-real-6 dividend file's cash as paid, on the "
    "lake's split basis, and the source's spin-off factors (what a factor holds beyond the lake's split of the "
    "day) as special_or_in_kind, the eve's close x (1 - 1 / factor); tickers whose 2016-2017 closes are another "
    "company's than the lake's under that symbol are left out. SPY and QQQ (as traded from LEAN's raw bars to "
    "2021-03-31): the steps of LEAN's factor files' price factor, dividend = reference price x (1 - step), ex-date "
    "the session after the row (prices/lean_factor_files.csv, Apache-2.0). The other S&P 500 members (raw "
    "closes 2015-2017, pystock): every distribution the crawler's adjusted close shows, the close minus the "
    "adjusted close on the eve of the ex-date, on the "
    "prices' split basis; above 10% of the eve's close it is special_or_in_kind (spin-offs: EBAY/PayPal "
    "2015-07-20, HPQ/HPE 2015-11-02, BAX/Baxalta, NI/Columbia Pipeline, YUM/Yum China), else cash; not in the "
    "prices (in_prices false): `df.fds.total_return()` adds them. Spin-offs neither of those shows (the crawl's "
    "adjusted close equals its close) come from Stooq's split- and dividend-adjusted closes "
    f"({STOOQ_2017}, Kaggle CC0): where the as-traded return falls 10% or more below the adjusted one on a day "
    "without a recorded distribution, and the two series agree around it (one company), the eve's close x (1 - "
    "the ratio of the two returns) is special_or_in_kind: CTXS 2017-02-01, DRI 2015-11-10, HLT 2017-01-04, VTR "
    "2015-08-18.",
)

DIVIDENDS = Stage(
    "dividends",
    "Distributions per share by ex-date: Yahoo's adjusted-close steps (36 names), pystock's eve differences and "
    "Stooq's adjusted closes (the rest)",
    _dividends,
    sources=(LEAN_FACTORS, STOOQ_2017),
    needs=(
        "splits",
        "prices",
        "prices_main",
        "old_daily",
        "pystock_prices",
        "sp500_distributions",
        "sp500_identity_all",
    ),
    outputs=(dataset("dividends", _PROVENANCE_DIVIDENDS),),
)

STAGES = (DIVIDENDS,)
