"""Whose data a pystock symbol carries: the source's symbols mapped to the lake's companies, by date.

pystock (2015-2017) files reports and bars under the symbol of the day, and a symbol is not a company: ``WTW`` is
Weight Watchers there (Willis Towers Watson traded as ``WLTW``), ``CB`` the old Chubb Corporation until
2016-01-14 and Chubb Limited (formerly ``ACE``) after, ``ECHO`` Echo Global Logistics, ``APP`` American Apparel,
``BNY`` a municipal bond fund. The index-membership spells say which company held a symbol on which days; a
symbol's listing (a name over a span of the crawl, from the source's symbols file) belongs to the company whose
spell under that symbol overlaps it, and is served under that company's lake ticker (today's symbol, or
``SYMBOL_YEAR`` for a company whose symbol another now holds). A listing no spell explains belongs to today's
S&P 500 member of that symbol only if their names agree; anything else is left out (listed in SOURCES.md), never
served under a symbol another company holds.

Example:
    >>> listings = pd.DataFrame({"symbol": ["WTW", "WLTW", "CB", "CB", "ACE"],
    ...     "name": ["Weight Watchers International", "Willis Towers Watson", "Chubb Corporation (The)",
    ...              "D/B/A Chubb Limited New", "Ace Limited"],
    ...     "first": pd.to_datetime(["2015-03-23", "2016-01-05", "2015-03-23", "2016-01-15", "2015-03-23"]),
    ...     "last": pd.to_datetime(["2017-03-31", "2017-03-31", "2016-01-14", "2017-03-31", "2016-01-13"])})
    >>> spells = pd.DataFrame({"ticker": ["WLTW", "CB", "ACE", "CB"], "current_ticker": ["WTW", "CB_2016", "CB", "CB"],
    ...     "name": [None, "Chubb Corp", "ACE Ltd", "Chubb Limited"], "cik": [None, None, None, "0000896159"],
    ...     "start_date": pd.to_datetime(["2016-01-05", "2004-12-30", "2010-07-15", "2016-01-15"]),
    ...     "end_date": pd.to_datetime([None, "2016-01-14", "2016-01-14", None])})
    >>> members = pd.DataFrame({"ticker": ["WTW", "CB"], "name": ["Willis Towers Watson", "Chubb Limited"],
    ...                         "cik": ["0001140536", "0000896159"]})
    >>> owners = symbol_owners(listings, spells, members)
    >>> owners[["symbol", "ticker"]].values.tolist()
    [['ACE', 'CB'], ['CB', 'CB_2016'], ['CB', 'CB'], ['CB', 'CB'], ['WLTW', 'WTW']]
    >>> relabel(pd.DataFrame({"ticker": ["CB", "CB", "WTW"], "date": pd.to_datetime(["2015-06-30",
    ...         "2016-06-30", "2016-06-30"])}), owners, "date")["ticker"].tolist()
    ['CB_2016', 'CB']
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from fdkit.frames.names import names_agree
from fdkit.lake.reviewed import reviewed_facts
from refdata.common import norm_ticker
from refdata.history import source_aliases
from refdata.identity import renames_of
from refdata.index_membership import EVENTS, FOLDER, INDICES
from refdata.stage import Context, Stage, intermediate

__all__ = ["SYMBOLS", "WINDOW", "symbol_owners", "relabel", "read_listings"]

SYMBOLS = "data-real-2/fundamentals_pystock/pystock_symbols_2015_2017.csv.gz"
#: a rename this long after a listing's last crawl day still names the listing's company (YHOO -> AABA 2017-06,
#: PCLN -> BKNG 2018-02); later ones belong to whoever held the symbol by then (FI -> FISV 2025 is Fiserv's, not
#: Frank's International's, which listed as FI in 2015-2017)
RENAME_REACH = pd.Timedelta(days=2 * 365)
#: the membership files whose "rename -> NEW" removals are ticker changes too
CHANGES = tuple(f"{FOLDER}/{index}_changes.csv" for index in INDICES)
#: the span of the pystock data
WINDOW = (pd.Timestamp("2015-03-01"), pd.Timestamp("2017-04-30"))
_OPEN = pd.Timestamp("2200-01-01")


def listing_owners(path: str | os.PathLike[str] | None = None) -> dict[tuple[str, str], tuple[str, pd.Timestamp]]:
    """Listings the membership source cannot tell apart, reviewed: an earlier company's until a day, then the symbol's.

    The ``listing_owner`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): the crawl's CB listing
    of 2015-03-23 is the Chubb Corporation's (``CB_2016``) to 2016-01-13 (the bar it filed under CB on 2016-01-14
    continues ACE's series, Chubb Limited's); its UA listing is Under Armour's Class A (``UAA``) to 2016-12-06, the
    Class C's from 2016-12-07; its ENR listing is Edgewell Personal Care's (``EPC``) to 2015-06-30, the spun-off
    Energizer's after. Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{(symbol, the listing's first crawl day): (the earlier company's ticker, its last day)}``.

    Example:
        >>> listing_owners()[("UA", "2015-03-23")]
        ('UAA', Timestamp('2016-12-06 00:00:00'))
    """
    rows = reviewed_facts("listing_owner", path)
    columns = [rows[c].astype(str).tolist() for c in ("ticker", "start_date", "value", "end_date")]
    return {(symbol, first): (owner, pd.Timestamp(last)) for symbol, first, owner, last in zip(*columns, strict=True)}


def read_listings(raw: pd.DataFrame) -> pd.DataFrame:
    """The source's symbols file as listings: ``symbol`` (the lake's spelling), ``name``, ``first``, ``last``.

    A symbol's first listing reaches back to the window's start and its last forward to the window's end, and
    consecutive listings of one symbol meet, so every dated row of the symbol falls in exactly one listing.

    Args:
        raw: the symbols file (``symbol``, ``name``, ``first_listed_crawl``, ``last_listed_crawl`` as YYYYMMDD).

    Returns:
        One row per listing.
    """
    df = pd.DataFrame({"symbol": norm_ticker(raw["symbol"].astype(str)), "name": raw["name"].astype(str),
                       "first": pd.to_datetime(raw["first_listed_crawl"].astype(str), format="%Y%m%d"),
                       "last": pd.to_datetime(raw["last_listed_crawl"].astype(str), format="%Y%m%d")})  # fmt: skip
    df["listed_first"], df["listed_last"] = df["first"], df["last"]
    df = df.sort_values(["symbol", "first"], kind="stable").reset_index(drop=True)
    nxt = df.groupby("symbol")["first"].shift(-1)
    df["last"] = (nxt - pd.Timedelta(days=1)).fillna(WINDOW[1])
    first = ~df["symbol"].duplicated()
    df.loc[first, "first"] = WINDOW[0]
    return df


def symbol_owners(listings: pd.DataFrame, spells: pd.DataFrame, members: pd.DataFrame,
                  renames: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """Each listing's owner: the lake ticker its rows are served under, over which days, and why.

    The membership source names some spells by a later symbol (Yahoo as ``AABA`` from 2004, Priceline as
    ``BKNG``): a listing no spell of its own symbol explains follows the symbol's later renames (``YHOO`` ->
    ``AABA`` 2017-06-19) to a spell that does.

    Args:
        listings: :func:`read_listings` (``symbol``, ``name``, ``first``, ``last``).
        spells: index-membership spells (``ticker`` of the time, ``current_ticker``, ``name``, ``cik``,
            ``start_date``, ``end_date``).
        members: today's S&P 500 members (``ticker``, ``name``, ``cik``).
        renames: ticker changes (``day``, ``old``, ``new``: :func:`refdata.identity.renames_of`).

    Returns:
        ``symbol``, ``start``, ``end``, ``ticker``, ``cik``, ``name``, ``how`` and the days the crawl listed it
        (``listed_first``, ``listed_last``), sorted by symbol and start; a listing no company explains has no row.
    """
    if "listed_first" not in listings.columns:
        listings = listings.assign(listed_first=listings["first"], listed_last=listings["last"])
    sp = spells.assign(symbol=norm_ticker(spells["ticker"].astype(str)),
                       stop=spells["end_date"].fillna(_OPEN))  # fmt: skip
    sp = sp[(sp["start_date"] <= WINDOW[1]) & (sp["stop"] >= WINDOW[0])]
    rows: list[tuple[Any, ...]] = []
    reviewed = listing_owners()
    same = frozenset(reviewed_facts("listing_same_company")["ticker"].astype(str))
    aliases = listing_aliases()
    later = {} if renames is None else {str(o): (str(n), d) for d, o, n in renames[["day", "old", "new"]].to_numpy()}
    for r in listings.itertuples():
        earlier = reviewed.get((str(r.symbol), f"{pd.Timestamp(str(r.listed_first)):%Y-%m-%d}"))
        if earlier is not None:
            start, last = pd.Timestamp(str(r.first)), pd.Timestamp(str(r.last))
            for owner, through in (earlier, (str(r.symbol), pd.Timestamp.max)):
                end = min(last, through)
                rows.append((r.symbol, start, end, owner, None, r.name, "reviewed: owners by date", r.listed_first,
                             r.listed_last))  # fmt: skip
                start = end + pd.Timedelta(days=1)
            continue
        ov, how = _spells_of(r, sp, later, aliases)
        owners = ov.groupby("current_ticker", sort=False)
        if owners.ngroups == 1:
            s = ov.iloc[0]
            cik = ov["cik"].dropna().iloc[0] if ov["cik"].notna().any() else None
            rows.append(
                (r.symbol, r.first, r.last, str(s["current_ticker"]), cik, r.name, how, r.listed_first, r.listed_last)
            )
        elif owners.ngroups > 1:  # the symbol changed hands inside the listing: each owner its spell's days
            for ticker, g in owners:
                since, until = max(r.first, g["start_date"].min()), min(r.last, g["stop"].max())
                cik = g["cik"].dropna().iloc[0] if g["cik"].notna().any() else None
                rows.append(
                    (
                        r.symbol,
                        since,
                        until,
                        str(ticker),
                        cik,
                        r.name,
                        "index spell (shared listing)",
                        r.listed_first,
                        r.listed_last,
                    )
                )
        else:
            m = members[(members["ticker"] == r.symbol)]
            if len(m) and (names_agree(m["name"].iloc[0], r.name) or r.symbol in same):
                rows.append((r.symbol, r.first, r.last, r.symbol, m["cik"].iloc[0], r.name,
                             "today's member, same name", r.listed_first, r.listed_last))  # fmt: skip
    out = pd.DataFrame(rows, columns=["symbol", "start", "end", "ticker", "cik", "name", "how", "listed_first",
                                      "listed_last"])  # fmt: skip
    return out.sort_values(["symbol", "start"], kind="stable").reset_index(drop=True)


def listing_aliases(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Renames no source records, reviewed by hand: a listing's symbol -> the member's later symbol.

    The price history's (:func:`refdata.history.source_aliases`) and the ``listing_alias`` rows of the
    reviewed-facts table (:mod:`fdkit.lake.reviewed`): Michael Kors -> Capri Holdings (2019-01-02), Wyndham
    Worldwide -> Wyndham Destinations (2018-06-01), ACE Limited -> Chubb Limited (2016-01-15, having acquired the
    Chubb Corporation; CIK 0000896159 is ACE's). Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{listing symbol: the member's current_ticker}``.

    Example:
        >>> listing_aliases()["ACE"], listing_aliases()["YHOO"]
        ('CB', 'AABA')
    """
    rows = reviewed_facts("listing_alias", path)
    return {**source_aliases(path), **dict(zip(rows["ticker"].astype(str), rows["value"].astype(str), strict=True))}


def _spells_of(
    r: Any, sp: pd.DataFrame, later: dict[str, tuple[str, pd.Timestamp]], aliases: dict[str, str]
) -> tuple[pd.DataFrame, str]:
    """The spells that explain a listing: under its symbol, a rename soon after, or a reviewed alias; and how."""
    symbol, how = str(r.symbol), "index spell"
    ov = sp[(sp["symbol"] == symbol) & (sp["start_date"] <= r.last) & (sp["stop"] >= r.first)]
    for _ in range(5):  # a rename soon after the listing, to the symbol the source files the spell under
        reach = pd.Timestamp(str(r.listed_last)) + RENAME_REACH
        if len(ov) or symbol not in later or not pd.Timestamp(str(r.first)) <= later[symbol][1] <= reach:
            break
        symbol = later[symbol][0]
        ov = sp[(sp["symbol"] == symbol) & (sp["start_date"] <= r.last) & (sp["stop"] >= r.first)]
        how = f"index spell under its later symbol {symbol}"
    if not len(ov) and str(r.symbol) in aliases:  # a rename no source records, reviewed by hand
        alias = aliases[str(r.symbol)]
        ov = sp[(sp["current_ticker"].astype(str) == alias) & (sp["start_date"] <= r.last) & (sp["stop"] >= r.first)]
        how = f"index spell under its later symbol {alias} (reviewed alias)"
    return ov, how


def relabel(df: pd.DataFrame, owners: pd.DataFrame, date: str) -> pd.DataFrame:
    """Rows of source symbols (``ticker``) moved to their owners' lake tickers by their ``date``; others dropped.

    Args:
        df: rows with the source's symbol in ``ticker`` and a date column.
        owners: :func:`symbol_owners`.
        date: the column that dates a row (a report's first sighting, a bar's day).

    Returns:
        The rows that have an owner, ``ticker`` replaced by it (a copy).
    """
    keyed = df.assign(_row=np.arange(len(df)), _symbol=df["ticker"].astype(str))
    cols = ["symbol", "start", "end", "ticker", "listed_first", "listed_last"]
    owners = owners.assign(symbol_of_spell=np.where(owners["how"].str.startswith("index spell under"), "",
                                                    owners["symbol"]))  # fmt: skip
    m = keyed[["_row", "_symbol", date]].merge(owners[[*cols, "symbol_of_spell"]], left_on="_symbol",
                                                 right_on="symbol")  # fmt: skip
    m = m[(m[date] >= m["start"]) & (m[date] <= m["end"])].drop_duplicates("_row")
    # two symbols of one company on one day (ACT and AGN around Actavis's rename): the one the crawl listed wins,
    # then the one the company's own spell names
    m = m.assign(_rank=((m[date] < m["listed_first"]) | (m[date] > m["listed_last"])).astype(int) * 2
                 + (m["_symbol"] != m["symbol_of_spell"]).astype(int))  # fmt: skip
    m = m.sort_values(["ticker", date, "_rank"], kind="stable")
    rival = m.groupby(["ticker", date])["_symbol"].transform("nunique") > 1
    best = m.groupby(["ticker", date])["_rank"].transform("min")
    m = m[~rival | (m["_rank"] == best)].sort_values("_row")
    out = keyed.iloc[m["_row"].to_numpy()].copy()
    out["ticker"] = m["ticker"].to_numpy()
    return out.drop(columns=["_row", "_symbol"]).reset_index(drop=True)


def _owners(ctx: Context) -> dict[str, pd.DataFrame]:
    listings = read_listings(pd.read_csv(ctx.source(SYMBOLS)))
    spells = ctx["index_membership"]
    # the cross-section is the S&P 1500's: the spells of the S&P 500, 400 and 600 (one company per current_ticker)
    events = pd.read_csv(ctx.source(EVENTS), dtype=str, keep_default_na=False)
    changes = [pd.read_csv(ctx.source(f), dtype=str, keep_default_na=False) for f in CHANGES]
    return {"pystock_owners": symbol_owners(listings, spells, ctx["members"], renames_of(events, changes))}


PYSTOCK_OWNERS = Stage(
    "pystock_owners",
    "Which company each pystock symbol's rows belong to, by date (index spells, else today's member by name)",
    _owners,
    sources=(SYMBOLS, EVENTS, *CHANGES),
    needs=("index_membership", "members"),
    outputs=(intermediate("pystock_owners"),),
)

STAGES = (PYSTOCK_OWNERS,)
