"""Helpers every source stage shares: the lake's share basis and the spelling of tickers.

* **Per-share basis**: a value reported in a filing is on the share basis of its filing day; dividing per-share
  values (and multiplying share counts) by the splits between the filing day and :data:`BASIS_DATE` puts them on
  the price basis. :func:`split_factor` is that product.
* **Tickers**: class shares are spelled with a dash (``BRK-B``), as the price sources and the service spell them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from fdkit.frames import basis
from fdkit.frames.names import same_name
from fdkit.lake.reviewed import reviewed_facts

#: licences several datasets' provenance names (SOURCES.md)
SEC_PD = "US government work (SEC EDGAR), public domain"
YAHOO = "Yahoo Finance data via a public repository without a licence file; reference/test use only"
PYSTOCK = "CC BY-SA 4.0 (eliangcs/pystock-data); prices are Yahoo data, Yahoo's terms apply"
#: how SOURCES.md names a file of the second source folder (the others are relative to data-real)
R2 = "../shared/data-real-2/"

#: everything in the lake is on the share basis of this day (the last bar of the main price source)
BASIS_DATE = pd.Timestamp("2026-02-25")
#: the 2021-2026 adjusted bars of the funds (and ^VIX), the funds in the order the file's name gives them
ETF_DAILY = "data-real/prices/etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX.csv.gz"
#: the funds whose as-traded bars (to 2021-03-31) and distributions come from LEAN's raw data and factor files
LEAN_FUNDS = ("SPY", "QQQ")


def spin_offs_in_closes(path: str | os.PathLike[str] | None = None) -> dict[str, tuple[pd.Timestamp, str]]:
    """The later spin-offs the 2003-2023 price file's split-adjusted closes also carry, reviewed.

    Yahoo treats a spin-off like a split: before the ex-date the file's closes are the as-traded close divided by a
    factor (measured by the prices stage). The ``spin_off_in_closes`` rows of the reviewed-facts table
    (:mod:`fdkit.lake.reviewed`): IBM's of Kyndryl Holdings, 2021-11-04. Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{ticker: (ex-date, the company spun off)}``.

    Example:
        >>> spin_offs_in_closes()
        {'IBM': (Timestamp('2021-11-04 00:00:00'), 'Kyndryl Holdings')}
    """
    rows = reviewed_facts("spin_off_in_closes", path)
    columns = [rows[c].astype(str).tolist() for c in ("ticker", "start_date", "value")]
    return {ticker: (pd.Timestamp(ex), name) for ticker, ex, name in zip(*columns, strict=True)}


def tuples(df: pd.DataFrame) -> Iterator[Any]:
    """The rows of a frame as named tuples (``df.itertuples(index=False)``), their fields typed loosely.

    Args:
        df: a frame.

    Returns:
        One named tuple per row.

    Example:
        >>> [r.x for r in tuples(pd.DataFrame({"x": [1, 2]}))]
        [1, 2]
    """
    return iter(df.itertuples(index=False))


def norm_ticker(t: pd.Series) -> pd.Series:
    """Tickers as the lake spells them: upper case, class shares with a dash.

    Args:
        t: tickers as a source spells them.

    Returns:
        The lake's spelling.

    Example:
        >>> norm_ticker(pd.Series([" brk.b", "AAPL"])).tolist()
        ['BRK-B', 'AAPL']
    """
    return t.astype(str).str.strip().str.upper().str.replace(".", "-", regex=False)


def wanted_tickers(members: pd.DataFrame, prices: pd.DataFrame) -> set[str]:
    """The tickers whose fundamentals and splits the lake wants: the broad universe's and the main price universe.

    Args:
        members: the broad universe's companies (``ticker``): the owners of the pystock symbols.
        prices: the main daily bars (``ticker``).

    Returns:
        The tickers.

    Example:
        >>> sorted(wanted_tickers(pd.DataFrame({"ticker": ["A"]}), pd.DataFrame({"ticker": ["B", "A"]})))
        ['A', 'B']
    """
    return set(members["ticker"]) | set(prices["ticker"].astype(str))


def split_factor(splits: pd.DataFrame, tickers: pd.Series, dates: pd.Series) -> np.ndarray:
    """Product of the split ratios with an ex-date after each date (up to the basis date).

    A value reported or traded on ``date`` is on that day's share basis; divide per-share values (multiply share
    counts) by this factor to put them on the basis of :data:`BASIS_DATE`.

    Args:
        splits: the split table (``ticker``, ``date`` = ex-date, ``ratio``).
        tickers: one ticker per value.
        dates: the day each value is on the basis of.

    Returns:
        One factor per value.

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
    """Per-share facts (USD/shares) divided and share counts (shares) multiplied by the splits after filing.

    Args:
        facts: long facts with ``ticker``, ``unit``, ``val`` and ``filed`` (the filing day).
        splits: the split table.

    Returns:
        A copy with ``val`` on the basis of :data:`BASIS_DATE`.

    Example:
        >>> s = pd.DataFrame({"ticker": ["X"], "date": pd.to_datetime(["2020-01-02"]), "ratio": [4.0]})
        >>> f = pd.DataFrame({"ticker": ["X"] * 3, "unit": ["USD/shares", "shares", "USD"], "val": [8.0, 10.0, 5.0],
        ...                   "filed": pd.to_datetime(["2019-06-01"] * 3)})
        >>> adjust_facts_for_splits(f, s)["val"].tolist()
        [2.0, 40.0, 5.0]
    """
    facts = facts.copy()
    k = split_factor(splits, facts["ticker"], facts["filed"])
    per_share = facts["unit"].eq("USD/shares").to_numpy()
    shares = facts["unit"].eq("shares").to_numpy()
    vals = facts["val"].astype(float).to_numpy()
    vals = np.where(per_share, vals / k, np.where(shares, vals * k, vals))
    facts["val"] = vals
    return facts


#: EDGAR numbers CIKs in the order registrants register: 0001700000 was reached in the spring of 2017 (Warrior Met
#: Coal, registered in 2016, is 0001691303; Sea Ltd, 2017, 0001703399), so a registrant at or above it filed none of
#: the 2015-2017 reports of the lake's companies that left
CIK_REGISTERED_AFTER_WINDOW = 1_700_000


def company_ciks(
    sec_tickers: pd.DataFrame, members: pd.DataFrame, universe: pd.DataFrame, served: pd.DataFrame | None = None
) -> dict[str, str]:
    """Ticker -> 10-digit CIK: the universe file, the S&P 500 list, then the SEC ticker file; the filer's where known.

    The lists give today's registrant. Where the SEC's ticker file (a snapshot older than the lists) names the same
    company under another CIK, the company has formed a holding company since (BlackRock 2024, Ferguson 2024,
    ExxonMobil: 0002115436 in the 2026 list), and every filing of the lake (2009-2017 for these) was filed under the
    SEC file's CIK: that one is the lake's. A ticker the SEC file gives another company (BNY: a municipal fund in
    the snapshot, BNY Mellon today) keeps the lists' CIK. A ticker the lists do not name, whose company the lake
    serves (``served``: a company of 2015-2017 that left), loses the SEC file's CIK where the file names another
    company registered after the window (:data:`CIK_REGISTERED_AFTER_WINDOW`): the file gives a symbol's holder
    today (RKT: Rocket Companies, 2020, not Rock-Tenn), while an old registrant under a new name is the company
    (Kellogg, now Kellanova; DeVry, now Adtalem).

    Args:
        sec_tickers: ``company/sec_company_tickers.csv`` (``ticker``, ``cik``, ``title``; text).
        members: the S&P 500 members (``ticker``, ``cik``, ``name``).
        universe: ``company/universe.csv`` (``Symbol``, ``CIK``, ``Security``; text).
        served: the companies the lake serves under tickers the lists may not name (``ticker``, ``name``).

    Returns:
        The CIK of each ticker.

    Example:
        >>> sec = pd.DataFrame({"ticker": ["BRK.B", "X", "XOM"], "cik": ["1067983", "1", "34088"],
        ...                     "title": ["Berkshire Hathaway", "Municipal Income Trust", "EXXON MOBIL CORP"]})
        >>> members = pd.DataFrame({"ticker": ["X", "XOM"], "cik": ["0000000002", "0002115436"],
        ...                         "name": ["X Corp", "ExxonMobil"]})
        >>> uni = pd.DataFrame({"Symbol": ["Y"], "CIK": ["3.0"], "Security": ["Y Inc."]})
        >>> company_ciks(sec, members, uni)
        {'BRK-B': '0001067983', 'X': '0000000002', 'XOM': '0000034088', 'Y': '0000000003'}
        >>> sec2 = pd.concat([sec, pd.DataFrame({"ticker": ["RKT"], "cik": ["1805284"], "title": ["Rocket Cos"]})])
        >>> gone = pd.DataFrame({"ticker": ["RKT"], "name": ["Rock-Tenn"]})  # RKT's holder registered in 2020
        >>> "RKT" in company_ciks(sec2, members, uni, served=gone)
        False
    """
    out: dict[str, str] = {}
    sec: dict[str, tuple[str, str]] = {}
    for t, c, title in zip(
        sec_tickers["ticker"].str.replace(".", "-", regex=False),
        sec_tickers["cik"],
        sec_tickers.get("title", pd.Series("", index=sec_tickers.index)),
        strict=True,
    ):
        sec.setdefault(t, (c.zfill(10), str(title)))
        out.setdefault(t, c.zfill(10))
    names: dict[str, str] = {}
    for t, c, n in zip(members["ticker"], members["cik"], members.get("name", members["ticker"]), strict=True):
        out[t], names[t] = c, str(n)
    security = universe.get("Security", universe["Symbol"])
    for t, c, n in zip(universe["Symbol"].str.replace(".", "-", regex=False), universe["CIK"], security, strict=True):
        if isinstance(c, str) and c:
            out[t], names[t] = c.split(".")[0].zfill(10), str(n)
    for t, name in names.items():
        filer = sec.get(t)
        if filer is not None and filer[0] != out[t] and same_name(name, filer[1]):
            out[t] = filer[0]
    if served is not None:
        for t, name in zip(served["ticker"].astype(str), served["name"], strict=True):
            filer = sec.get(t)
            if (
                t not in names
                and filer is not None
                and out.get(t) == filer[0]
                and not same_name(name, filer[1])
                and int(filer[0]) >= CIK_REGISTERED_AFTER_WINDOW
            ):
                del out[t]  # the file's holder of the symbol today registered after the company's filings
    return out
