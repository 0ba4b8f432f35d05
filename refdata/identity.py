"""One identity per company: which membership spells are one company, and the one symbol it is served under.

A symbol is not a company. Spells of the same symbol are one company unless the sources say otherwise (CIKs or
names that disagree, or more than :data:`REUSE_GAP` between them with a name unknown: ``DELL`` 2004-2013 and
2024-, ``Q`` Qwest and Qnity); a rename (a ticker change event, or a membership change whose reason says
``rename -> NEW``) joins the old symbol's spell to the new one's. Each company is served under the symbol it
trades under today; where two companies end at the same symbol, the one holding it now keeps it and the other
gets ``SYMBOL_YEAR`` (the year its last spell ended: ``COR_2021`` is CoreSite Realty, ``COR`` Cencora), a symbol
no exchange uses, so every ticker the lake serves is one company.

Example:
    >>> spells = pd.DataFrame({
    ...     "ticker": ["ABC", "COR", "COR"], "name": ["AmerisourceBergen", "CoreSite Realty", "Cencora"],
    ...     "cik": [None, None, "0001140859"],
    ...     "start_date": pd.to_datetime(["2004-12-30", "2017-08-10", "2023-08-30"]),
    ...     "end_date": pd.to_datetime(["2023-08-29", "2021-12-27", None])})
    >>> renames = pd.DataFrame({"day": pd.to_datetime(["2023-08-30"]), "old": ["ABC"], "new": ["COR"]})
    >>> company_tickers(spells, renames).tolist()
    ['COR', 'COR_2021', 'COR']
"""

from __future__ import annotations

import os
import re

import pandas as pd

from fdkit.frames.names import name_words, same_company
from fdkit.lake.reviewed import reviewed_facts
from refdata.common import tuples

__all__ = [
    "REUSE_GAP",
    "company_tickers",
    "renames_of",
    "reviewed_renames",
    "reviewed_symbols",
    "same_company",
    "traded_through",
]

#: spells of one symbol this far apart, one of them without a name, are two companies (DELL 2013 -> 2024)
REUSE_GAP = pd.Timedelta(days=5 * 365)


def reviewed_symbols(kind: str, path: str | os.PathLike[str] | None = None) -> frozenset[str]:
    """Symbols whose spells were reviewed by hand: one company, or two, where the sources alone say otherwise.

    ``one_company``: their spells are one company although their names or CIKs differ in the sources, or a gap
    separates them (PG&E, O-I Glass, ManTech's move to the S&P 600 before its list's seed); ``two_companies``: two
    companies although no source says so (LSI Corp and Life Storage). The rows of that kind in the reviewed-facts
    table (:mod:`fdkit.lake.reviewed`); adding one is a row.

    Args:
        kind: ``one_company`` or ``two_companies``.
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        The symbols.

    Example:
        >>> sorted(reviewed_symbols("two_companies"))
        ['LSI']
    """
    return frozenset(reviewed_facts(kind, path)["ticker"].astype(str))


def reviewed_renames(path: str | os.PathLike[str] | None = None) -> dict[tuple[str, str, str], str]:
    """Ticker changes the sources show as a removal and an addition on one day with no reason, reviewed by hand.

    The ``rename`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): ``(day of the pair, old, new)``
    -> why. Adding one is a row of ``fdkit/lake/reviewed_facts.csv``.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{(day, old, new): reason}``, in the table's order.

    Example:
        >>> reviewed_renames()[("2017-10-25", "DV", "ATGE")][:22]
        'DeVry Education Group '
    """
    rows = reviewed_facts("rename", path)
    columns = [rows[c].astype(str).tolist() for c in ("start_date", "ticker", "value", "reason")]
    return {(day, old, new): why for day, old, new, why in zip(*columns, strict=True)}


#: a rename ends the old symbol's spell the day before the change: the change follows the spell's end within this
RENAME_SLACK = pd.Timedelta(days=7)
_RUNNING = pd.Timestamp("2200-01-01")  # the end of a spell still running, for ordering
_RENAME = re.compile(r"^rename\s*(?:→|->)\s*([A-Z0-9.\-]+)")


def _dash(symbol: object) -> str:
    return str(symbol).strip().upper().replace(".", "-")


def renames_of(
    events: pd.DataFrame, changes: list[pd.DataFrame], reviewed: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """Every known rename: ticker changes, removals whose reason is ``rename -> NEW``, :func:`reviewed_renames`.

    Args:
        events: ``event_date``, ``event_type``, ``old_symbol``, ``new_symbol`` (text).
        changes: the membership change files (``date``, ``action``, ``ticker``, ``reason``).
        reviewed: another reviewed-facts table (default: fdkit's).

    Returns:
        ``day``, ``old``, ``new`` (lake spelling), one row per rename, by day.

    Example:
        >>> ch = pd.DataFrame({"date": ["2023-08-30"], "action": ["removed"], "ticker": ["ABC"],
        ...                    "reason": ["rename → COR: AmerisourceBergen renamed Cencora."]})
        >>> ev = pd.DataFrame(columns=["event_date", "event_type", "old_symbol", "new_symbol"])
        >>> got = renames_of(ev, [ch])
        >>> got[got["old"] == "ABC"].values.tolist(), len(got) == 1 + len(reviewed_renames())
        ([[Timestamp('2023-08-30 00:00:00'), 'ABC', 'COR']], True)
    """
    rows = list(reviewed_renames(reviewed))  # first: a reviewed day wins over another source's for the same change
    rows += [
        (r.event_date, r.old_symbol, r.new_symbol)
        for r in tuples(events)
        if r.event_type == "ticker_change" and isinstance(r.new_symbol, str) and r.new_symbol
    ]
    for ch in changes:
        for r in tuples(ch[ch["action"] == "removed"]):
            hit = _RENAME.match(str(r.reason))
            if hit:
                rows.append((r.date, r.ticker, hit.group(1)))
    out = pd.DataFrame(rows, columns=["day", "old", "new"])
    out = out.assign(day=pd.to_datetime(out["day"]), old=out["old"].map(_dash), new=out["new"].map(_dash))
    out = out[out["old"] != out["new"]]
    return out.drop_duplicates(["old", "new"]).sort_values("day", kind="stable").reset_index(drop=True)


def _first_word(name: object) -> str | None:
    """A name's first word without punctuation or corporate prefixes (``The Goodyear Tire ...`` -> ``GOODYEAR``)."""
    if not isinstance(name, str):
        return None
    words = name_words(name)
    return words[0] if words else None


def _conflict(a: pd.Series, b: pd.Series) -> bool:
    """Whether the sources say two spells are two companies.

    CIKs both known and different, or names both known whose first words differ (names vary in form:
    ``Goodyear Tire & Rubber``, ``The Goodyear Tire and Rubber Company``; a new company under an old symbol rarely
    shares the first word: ``Echo Global`` / ``EchoStar``).
    """
    if isinstance(a.cik, str) and isinstance(b.cik, str) and a.cik.lstrip("0") != b.cik.lstrip("0"):
        return True
    x, y = _first_word(a["name"]), _first_word(b["name"])
    return x is not None and y is not None and x != y


def _walk(symbol: str, since: pd.Timestamp, ended: pd.Timestamp, renames: pd.DataFrame) -> tuple[str, list]:
    """A spell's symbol followed through the renames after it started; the (day, new symbol) hops taken."""
    hops = []
    for _ in range(10):  # each hop moves forward in time
        r = renames[(renames["old"] == symbol) & (renames["day"] > since)]
        if pd.notna(ended):
            r = r[r["day"] <= ended + RENAME_SLACK]
        if r.empty:
            break
        since, symbol = r["day"].iloc[0], r["new"].iloc[0]
        hops.append((since, symbol))
        ended = _RUNNING  # the renamed company runs on under its new symbol
    return symbol, hops


def traded_through(coverage: pd.DataFrame | None, symbol: str, since: pd.Timestamp, until: pd.Timestamp) -> bool:
    """Whether the price files, joined, hold ``symbol`` from ``since`` to ``until`` (one listing throughout).

    Example:
        >>> cov = pd.DataFrame({"symbol": ["X", "X"], "first_date": pd.to_datetime(["2005-01-03", "2017-09-01"]),
        ...                     "last_date": pd.to_datetime(["2017-11-10", "2025-07-09"])})
        >>> traded_through(cov, "X", pd.Timestamp("2008-11-10"), pd.Timestamp("2021-03-31"))
        True
    """
    if coverage is None:
        return False
    slack = pd.Timedelta(days=30)
    reach = None
    for r in tuples(coverage[coverage["symbol"] == symbol].sort_values("first_date")):
        if reach is None:
            if r.first_date > since + slack:
                return False
            reach = r.last_date
        elif r.first_date <= reach + slack:
            reach = max(reach, r.last_date)
    return reach is not None and reach >= until


def company_tickers(spells: pd.DataFrame, renames: pd.DataFrame, coverage: pd.DataFrame | None = None) -> pd.Series:
    """The one symbol each spell's company is served under (see the module's docstring).

    Args:
        spells: ``ticker`` (lake spelling), ``name``, ``cik``, ``start_date``, ``end_date``.
        renames: :func:`renames_of`.
        coverage: the price files' symbol coverage (``symbol``, ``first_date``, ``last_date``): a symbol that
            traded throughout a gap between two spells is one listing, however long the gap.

    Returns:
        One symbol per spell, aligned to ``spells``.
    """
    s = spells.reset_index(drop=True)
    one, two = reviewed_symbols("one_company"), reviewed_symbols("two_companies")
    parent = list(range(len(s)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    walked = [_walk(r.ticker, r.start_date, r.end_date, renames) for r in tuples(s)]
    for _, g in s.groupby("ticker", sort=False):  # one symbol: one company unless the sources disagree
        idx = g.sort_values("start_date").index.tolist()
        for k, i in enumerate(idx):
            a = s.loc[i]
            for j in reversed(idx[:k]):  # the latest company of the symbol first
                members = [m for m in idx[:k] if find(m) == find(j)]
                last_end = s.loc[members, "end_date"].max()
                named = isinstance(a["name"], str) and s.loc[members, "name"].notna().any()
                reused = (
                    pd.notna(last_end)
                    and a.start_date - last_end > REUSE_GAP
                    and not named
                    and not traded_through(coverage, a.ticker, last_end, a.start_date)
                )
                moved = any(w[1] and w[1][0][0] <= a.start_date + RENAME_SLACK for w in (walked[m] for m in members))
                conflict = a.ticker not in one and any(_conflict(a, s.loc[m]) for m in members)
                reused = reused or (a.ticker in two and pd.notna(last_end) and a.start_date > last_end)
                if a.ticker in one or (not reused and not moved and not conflict):
                    parent[find(i)] = find(j)
                    break
    for i, (_, hops) in enumerate(walked):  # a rename joins the spell to the new symbol's spell of that day
        if hops:
            day, new = hops[0]
            after = pd.Timestamp(str(s.at[i, "end_date"])) + pd.Timedelta(days=1)  # or the day the index applied it
            starts = s["start_date"]
            near = s[
                (s["ticker"] == new)
                & (((starts - day).abs() <= RENAME_SLACK) | ((starts - after).abs() <= RENAME_SLACK))
            ].index
            for j in near:
                parent[find(i)] = find(j)
    company = [find(i) for i in range(len(s))]
    symbol = pd.Series([w[0] for w in walked], index=s.index)
    frame = pd.DataFrame(
        {"company": company, "symbol": symbol, "end": s["end_date"].astype("datetime64[ns]").fillna(_RUNNING)}
    )
    served = frame.groupby("company").agg(symbol=("symbol", "last"), end=("end", "max"))
    served["symbol"] = frame.sort_values("end").groupby("company")["symbol"].last()
    out = served["symbol"].copy()
    for _, g in served.groupby("symbol"):
        if len(g) > 1:
            for c in g.sort_values("end").index[:-1]:  # the latest holder keeps the symbol
                last = pd.Timestamp(str(g.at[c, "end"]))  # an ended spell: never _RUNNING
                out[c] = f"{g.at[c, 'symbol']!s}_{last.year}"
    return pd.Series(frame["company"].map(out).to_numpy(), index=spells.index, dtype="string")
