"""Reviewed facts as data: one table of what a person or a cross-check established, each with its reason and evidence.

The lake's rules flag what looks wrong (a daily move beyond +/-25%, ...); some of it really happened. Such a fact is
a row of ``fdkit/lake/reviewed_facts.csv`` (package data, so ``fdkit lake validate`` of an installed wheel reads it
too), never a literal in code:

========================  ==========================================================================================
column                    meaning
========================  ==========================================================================================
``kind``                  what the fact is about (:data:`KINDS`)
``ticker``                the lake's ticker it applies to (a dead company's is ``SYMBOL_YEAR``)
``start_date``            the day it applies to (or from), ``YYYY-MM-DD``
``end_date``              the last day of a span (empty: the day alone)
``cik``                   the company's CIK where the fact names it (empty otherwise)
``value``                 the fact's value (a move: the close-to-close return, e.g. ``-0.26``; a rename: the new symbol)
``reason``                a sentence for users: what happened
``evidence``              where it is seen: the source file and its rows, or the public record
``reviewed_by``           who or what reviewed it (a maintainer, or the build stage that cross-checked it)
``reviewed_on``           when, ``YYYY-MM-DD``
========================  ==========================================================================================

Rows written by a build stage carry the stage's module as ``reviewed_by`` and are rewritten by it alone
(:func:`replace_rows`); the others are edited by hand. :func:`reviewed_facts` checks the table as it reads it: a row
without a reason or evidence, an unknown kind, a bad date, a column not of its kind's form (:data:`FORMS`) or a
fact given twice is a :class:`ReviewedFactsError` naming the row.

Example:
    >>> moves = reviewed_facts("price_move")
    >>> moves.loc[(moves["ticker"] == "INTC") & (moves["start_date"] == "2024-08-02"), "value"].tolist()
    ['-0.26']
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pandas as pd

__all__ = ["COLUMNS", "FORMS", "KINDS", "REVIEWED_FACTS_CSV", "ReviewedFactsError", "replace_rows", "reviewed_facts"]

#: the table (package data of fdkit)
REVIEWED_FACTS_CSV = Path(__file__).resolve().parent / "reviewed_facts.csv"
#: its columns, in order
COLUMNS = (
    "kind",
    "ticker",
    "start_date",
    "end_date",
    "cik",
    "value",
    "reason",
    "evidence",
    "reviewed_by",
    "reviewed_on",
)
#: the kinds of fact the table holds, and what each means
KINDS = {
    "price_move": "a daily close-to-close move beyond the lake's limit that really happened (ticker, day of the bar)",
    "rename": "a ticker change the index lists show as a removal and an addition on one day without a reason "
    "(ticker: the old symbol, value: the new one, start_date: the day of the pair, cik: the company's)",
    "one_company": "a symbol whose membership spells are one company although their names or CIKs differ in the "
    "sources or a gap separates them (ticker: the symbol, start_date: its first spell's)",
    "two_companies": "a symbol whose membership spells are two companies although no source says so (ticker: the "
    "symbol, start_date: its first spell's)",
    "another_company": "a membership spell the sources file under a symbol's company today that was another, "
    "former company's (ticker: the symbol, start_date: the spell's first day, value: the company it was)",
    "handover": "a membership spell the sources file under one symbol across the day the symbol passed to another "
    "company (ticker: the symbol, start_date: the spell's first day, end_date: the last day it was the earlier "
    "company's, value: the symbol that company trades under today, cik: its CIK)",
    "class_symbol_move": "a symbol that passed from one share class of a company to another (ticker: the symbol, "
    "start_date: the day it passed, value: the symbol the earlier class trades under today, cik: the company's)",
    "renamed_company": "a name a membership spell gives a CIK that differs from the CIK's other names because the "
    "company renamed itself (ticker: the spell's, start_date: its first day, cik: the CIK, value: the name)",
    "share_move": "a quarter-to-quarter move of weighted shares beyond the lake's limit that really happened "
    "(ticker, start_date: the quarter's report period, value: the move, e.g. +0.38, cik: the company's)",
    "listing_owner": "a pystock listing that was an earlier company's until a day, the symbol's own after (ticker: "
    "the listing's symbol, start_date: its first crawl day, end_date: the earlier company's last day, value: that "
    "company's lake ticker)",
    "listing_same_company": "a pystock listing that is today's S&P 500 member of its symbol although their names "
    "differ (ticker: the symbol, start_date: the listing's first crawl day, value: the member's name, cik: its CIK)",
    "not_the_company": "a price source's bars under a member's symbol that are another security's (ticker: the "
    "source's symbol, start_date: the first day left out, 2004-01-01 for all of them; value: the source, a name "
    "of refdata.history.SOURCES_OF)",
    "prices_left_out": "a broad-universe price series the lake's prices leave out (ticker: the lake's ticker, "
    "start_date: the source's first day, 2015-03-20 for all of them; value: the source, pystock; reason: 'Left "
    "out: ' and why, as SOURCES.md prints it)",
    "no_as_traded": "a fund whose bars after its as-traded source's end are adjusted closes only (ticker, "
    "start_date: its first day adjusted only; value: the basis the lake serves from that day, adjusted_only; "
    "reason: 'No as-traded source: ' and why, as SOURCES.md prints it)",
    "spin_off_in_closes": "a spin-off the 2003-2023 price file's split-adjusted closes also carry, as Yahoo adjusts "
    "for a split (ticker, start_date: the ex-date, value: the company spun off, cik: the ticker's)",
    "splits_known": "a ticker whose every split from 1998 on is in the lake's split table, so its 2009-2010 "
    "per-share values go on today's basis (ticker: the lake's, start_date: its first day in LEAN's factor file, "
    "value: its symbol there)",
    "source_alias": "a symbol a price dump spells as it was before a rename the membership sources do not record, "
    "or the other way round (ticker: the dump's symbol, start_date: 2004-01-01, the history's first day, for all "
    "of them; value: the member's current_ticker); the pystock listings read these too",
    "listing_alias": "a pystock listing's symbol renamed after the crawl, a rename no source records (ticker: the "
    "listing's symbol, start_date: its first crawl day, value: the member's current_ticker)",
}
#: what a kind's columns must look like beyond every row's checks: kind -> column -> (pattern, what it is)
FORMS: dict[str, dict[str, tuple[str, str]]] = {
    "prices_left_out": {
        "value": ("pystock", "the source, pystock"),
        "reason": (r"Left out: \S.*", "'Left out: ' and why"),
    },
    "no_as_traded": {
        "value": ("adjusted_only", "the basis adjusted_only"),
        "reason": (r"No as-traded source: \S.*", "'No as-traded source: ' and why"),
    },
    "spin_off_in_closes": {
        "value": (r"\S.*", "the company spun off"),
        "cik": (r"\d{10}", "a 10-digit CIK"),
    },
    "splits_known": {"value": (r"[A-Z][A-Z0-9-]*", "a symbol of LEAN's factor file")},
    "source_alias": {"value": (r"[A-Z][A-Z0-9-]*(?:_\d{4})?", "a lake ticker")},
    "listing_alias": {"value": (r"[A-Z][A-Z0-9-]*(?:_\d{4})?", "a lake ticker")},
}
_KEY = ["kind", "ticker", "start_date", "end_date"]
_DATES = ("start_date", "end_date", "reviewed_on")


class ReviewedFactsError(ValueError):
    """The reviewed-facts table has a row it cannot be used with (the message names the row and the problem)."""


def reviewed_facts(kind: str | None = None, path: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The reviewed facts (of one ``kind``), checked: every column text, dates as ``YYYY-MM-DD``, empty as ``""``.

    Args:
        kind: one of :data:`KINDS` (default: every row).
        path: another table of the same columns (default: :data:`REVIEWED_FACTS_CSV`).

    Returns:
        The rows, in the table's order.

    Raises:
        ReviewedFactsError: a missing column, an unknown kind, a row without reason or evidence, a date that is not
            one, or one fact in two rows.

    Example:
        >>> sorted(reviewed_facts()["kind"].unique()) == sorted(KINDS)
        True
    """
    if kind is not None and kind not in KINDS:
        raise ReviewedFactsError(f"no kind {kind!r} of reviewed fact; kinds: {', '.join(sorted(KINDS))}")
    table = Path(path) if path is not None else REVIEWED_FACTS_CSV
    df = _read(str(table), table.stat().st_mtime_ns)
    return (df if kind is None else df[df["kind"] == kind]).reset_index(drop=True)


@functools.lru_cache(maxsize=4)
def _read(path: str, mtime_ns: int) -> pd.DataFrame:
    """The table read and checked once per version of the file (``mtime_ns`` is the version)."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    _check(df, Path(path).name)
    return df


def _check(df: pd.DataFrame, name: str) -> None:
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ReviewedFactsError(
            f"{name} lacks the column(s) {', '.join(missing)}; its columns are {', '.join(COLUMNS)}"
        )
    for i, row in enumerate(df.itertuples(index=False), start=2):  # line 1 is the header
        where = f"{name} line {i} ({row.kind} {row.ticker} {row.start_date})"
        if row.kind not in KINDS:
            raise ReviewedFactsError(f"{where}: unknown kind {row.kind!r} (kinds: {', '.join(sorted(KINDS))})")
        for column in ("ticker", "start_date", "reason", "evidence", "reviewed_by", "reviewed_on"):
            if not str(getattr(row, column)).strip():
                raise ReviewedFactsError(f"{where}: {column} is empty (every fact says what, why and where seen)")
        for column in _DATES:
            value = str(getattr(row, column))
            if value and (len(value) != 10 or pd.to_datetime(value, format="%Y-%m-%d", errors="coerce") is pd.NaT):
                raise ReviewedFactsError(f"{where}: {column} {value!r} is not a YYYY-MM-DD date")
        for column, (pattern, what) in FORMS.get(str(row.kind), {}).items():
            if not re.fullmatch(pattern, str(getattr(row, column)), flags=re.DOTALL):
                raise ReviewedFactsError(f"{where}: {column} {getattr(row, column)!r} is not {what}")
    twice = df[df.duplicated(_KEY, keep=False)]
    if len(twice):
        first = twice.iloc[0]
        raise ReviewedFactsError(
            f"{name}: {first['kind']} {first['ticker']} {first['start_date']} is given "
            f"{len(twice[(twice[_KEY] == first[_KEY]).all(axis=1)])} times"
        )


def replace_rows(rows: pd.DataFrame, reviewed_by: str, path: str | os.PathLike[str] | None = None) -> int:
    """Rewrite the table's rows of one reviewer (a build stage's) with ``rows``; every other row is kept as it is.

    Args:
        rows: the reviewer's rows now (the :data:`COLUMNS`; ``reviewed_by`` is set to ``reviewed_by``).
        reviewed_by: whose rows are replaced.
        path: the table (default: :data:`REVIEWED_FACTS_CSV`).

    Returns:
        How many rows the table has afterwards.

    A row equal to one of the old rows but for ``reviewed_on`` keeps the old row's day.

    Raises:
        ReviewedFactsError: the new table would not pass :func:`reviewed_facts`'s checks (nothing is written).
    """
    table = Path(path) if path is not None else REVIEWED_FACTS_CSV
    old = pd.read_csv(table, dtype=str, keep_default_na=False) if table.exists() else pd.DataFrame(columns=COLUMNS)
    new = rows.assign(reviewed_by=reviewed_by).reindex(columns=list(COLUMNS)).astype(object)
    new = new.where(new.notna(), "").astype(str)
    # a fact found again as it was keeps the day it was first reviewed (a rebuild rewrites the same bytes)
    same = [c for c in COLUMNS if c != "reviewed_on"]
    first = dict(zip(map(tuple, old[same].to_numpy().tolist()), old["reviewed_on"], strict=True))
    new["reviewed_on"] = [
        first.get(tuple(r), day) for r, day in zip(new[same].to_numpy().tolist(), new["reviewed_on"], strict=True)
    ]
    out = pd.concat([old[old["reviewed_by"] != reviewed_by], new], ignore_index=True)
    out = out.sort_values(["kind", "ticker", "start_date", "end_date"], kind="stable").reset_index(drop=True)
    _check(out, table.name)
    out.to_csv(table, index=False, lineterminator="\n")
    return len(out)
