"""Point-in-time index membership: one row per membership spell of the S&P 500, S&P 400 and S&P 600.

The source (package ``pitindex`` 0.2.1, in ``../shared/data-real-3/index-membership/``) gives, per index, a seed
roster on a start date, every addition and removal after it, and today's members with their CIK. Membership on day
T is the seed, then every event dated on or before T applied in file order: a ticker added on D is a member from D,
one removed on D was a member until the day before. Replaying the events gives the spells; a spell already running
on the seed date started on or before it (its start is the seed date unless today's list says when the company was
added). Tickers are the source's, the symbol at the time of the spell, with class shares spelled with a dash as
everywhere in the lake (the source's ``BRK.B`` is ``BRK-B``).

Example:
    >>> seed = pd.DataFrame({"effective_date": ["2004-12-30"] * 2, "ticker": ["AAA", "BBB"]})
    >>> changes = pd.DataFrame({"date": ["2006-03-01", "2006-03-01"], "action": ["removed", "added"],
    ...                         "ticker": ["BBB", "CCC"], "name": ["B Corp", "C Corp"], "reason": ["", ""]})
    >>> current = pd.DataFrame({"ticker": ["AAA", "CCC"], "name": ["A Inc.", "C Corp"], "cik": ["1", "3"],
    ...                         "date_added": ["1990-01-02", ""]})
    >>> spells = membership_spells("sp500", seed, changes, current)
    >>> spells["ticker"].tolist(), spells["cik"].fillna("-").tolist()
    (['AAA', 'BBB', 'CCC'], ['1', '-', '3'])
    >>> spells["start_date"].dt.strftime("%Y-%m-%d").tolist()  # AAA: today's list says when it was added
    ['1990-01-02', '2004-12-30', '2006-03-01']
    >>> spells["end_date"].dt.strftime("%Y-%m-%d").tolist()  # BBB's last day is the day before its removal
    [nan, '2006-02-28', nan]
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from fdkit.lake.reviewed import reviewed_facts
from refdata.common import tuples
from refdata.identity import company_tickers, renames_of, same_company
from refdata.stage import Context, Provenance, Stage, dataset

INDICES = ("sp500", "sp400", "sp600")
FOLDER = "data-real-3/index-membership"
EVENTS = "data-real-4/index-membership-extra/us_symbol_events.csv"
#: which symbols each price file holds and over which dates: tells a symbol reused after a gap from one that traded on
COVERAGE = "data-real-5/prices/coverage_index.csv.gz"
SOURCES = (
    *(f"{FOLDER}/{index}_{part}.csv" for index in INDICES for part in ("seed", "changes", "current")),
    EVENTS,
    COVERAGE,
)
COLUMNS = ["index", "ticker", "name", "cik", "start_date", "end_date"]


def _text(value: object) -> str | None:
    """A source cell as text, ``None`` where empty."""
    return value if isinstance(value, str) and value.strip() else None


def membership_spells(index: str, seed: pd.DataFrame, changes: pd.DataFrame, current: pd.DataFrame) -> pd.DataFrame:
    """The membership spells of one index, replayed from its seed roster and its events.

    An addition of a member or a removal of a non-member changes nothing. A spell's name is the one its addition
    gives, else its removal, else (still a member) today's list. A spell still running has today's CIK; a spell
    running since the seed that is still running starts on the date today's list says the company was added, where
    that is on or before the seed date (else on the seed date: its true start is not in the source).

    Args:
        index: the index's name (``sp500``).
        seed: ``effective_date``, ``ticker`` (one date).
        changes: ``date``, ``action`` (``added``/``removed``), ``ticker``, ``name``, in the order they apply.
        current: today's members: ``ticker``, ``name``, ``cik``, ``date_added`` (may be empty).

    Returns:
        :data:`COLUMNS`, one row per spell, sorted by ticker and start; ``cik`` only for spells still running.
    """
    seed_day = pd.Timestamp(seed["effective_date"].iloc[0])
    running: dict[str, dict] = {t: {"ticker": t, "name": None, "start_date": seed_day} for t in seed["ticker"]}
    spells = []
    for r in tuples(changes.assign(day=pd.to_datetime(changes["date"])).sort_values("day", kind="stable")):
        if r.action == "added" and r.ticker not in running:
            running[r.ticker] = {"ticker": r.ticker, "name": _text(r.name), "start_date": r.day}
        elif r.action == "removed" and r.ticker in running:
            spell = running.pop(r.ticker)
            end = r.day - pd.Timedelta(days=1)
            spells.append({**spell, "name": spell["name"] or _text(r.name), "cik": None, "end_date": end})
        elif r.action not in ("added", "removed"):
            raise ValueError(f"{index}: unknown action {r.action!r} on {r.date}")
    today = current.set_index("ticker")
    for ticker, spell in running.items():
        listed = {
            c: _text(today.at[ticker, c]) if ticker in today.index else None for c in ("name", "cik", "date_added")
        }
        added = listed["date_added"]
        if spell["start_date"] == seed_day and added is not None and pd.Timestamp(added) <= seed_day:
            spell["start_date"] = pd.Timestamp(added)
        name = spell["name"] or listed["name"]
        spells.append({**spell, "name": name, "cik": listed["cik"], "end_date": pd.NaT})
    out = pd.DataFrame(spells, columns=[c for c in COLUMNS if c != "index"]).assign(index=index)
    return out[COLUMNS].sort_values(["ticker", "start_date"], kind="stable").reset_index(drop=True)


def with_ciks(spells: pd.DataFrame, known: pd.DataFrame) -> pd.DataFrame:
    """The CIK of each spell as the lake knows the company: one CIK per ticker across the lake.

    A running spell takes the CIK the lake's company facts give its ticker, else the one today's list gives. An
    ended spell takes the CIK of a company known today under its ticker only where that company's name agrees with
    the spell's (:func:`same_company`): tickers are reused (``G`` was Gillette, now Genpact), so a ticker alone
    never gives a CIK, and a spell without a name gets none.

    Args:
        spells: the spells (``ticker`` in the lake's spelling, ``name``, ``cik``, ``end_date``).
        known: companies known today, in order of preference (the lake's company facts first): ``ticker``,
            ``name``, ``cik``.

    Returns:
        The spells with ``cik`` set.

    Example:
        >>> ended = pd.to_datetime(["2005-10-02", None, "2010-01-01"])
        >>> spells = pd.DataFrame({"ticker": ["G", "X", "Y"], "name": ["Gillette", "X Inc.", "Y Co."],
        ...                        "cik": [None, "0000000009", None], "end_date": ended})
        >>> known = pd.DataFrame({"ticker": ["G", "X", "Y"], "name": ["Genpact", "X", "Y Company"],
        ...                       "cik": ["1", "2", "3"]})
        >>> with_ciks(spells, known)["cik"].fillna("-").tolist()
        ['-', '0000000002', '0000000003']
    """
    by_ticker: dict[str, list[tuple[str, str]]] = {}
    for r in tuples(known.dropna(subset=["cik"])):
        by_ticker.setdefault(str(r.ticker), []).append((r.name, str(r.cik).zfill(10)))
    out = spells.copy()
    for i, r in zip(out.index, tuples(out), strict=True):
        companies = by_ticker.get(r.ticker, [])
        if pd.isna(r.end_date):
            out.at[i, "cik"] = companies[0][1] if companies else r.cik
            continue
        hits = [cik for name, cik in companies if not pd.isna(r.name) and same_company(r.name, name)]
        out.at[i, "cik"] = hits[0] if hits else None
    return out


def another_company(path: str | os.PathLike[str] | None = None) -> dict[tuple[str, str], str]:
    """Membership spells the sources file under a symbol's company today that were another company's, reviewed.

    The ``another_company`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): the S&P 400 spells of
    Jefferies Group (JEF, Leucadia's since), Valspar (VAL, Valaris's since) and HCC Insurance (HCC, Warrior Met
    Coal's since). Such a spell is served as ``SYMBOL_YEAR`` (the year it ended), without a CIK. Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{(ticker, the spell's first day): the company it was}``, in the table's order.

    Example:
        >>> another_company()[("JEF", "2011-11-20")]
        'Jefferies Group'
    """
    rows = reviewed_facts("another_company", path)
    columns = [rows[c].astype(str).tolist() for c in ("ticker", "start_date", "value")]
    return {(ticker, start): company for ticker, start, company in zip(*columns, strict=True)}


def handovers(path: str | os.PathLike[str] | None = None) -> dict[tuple[str, str], tuple[str, str]]:
    """Membership spells the sources file under one symbol across the day it passed to another company, reviewed.

    The ``handover`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): Energizer Holdings split on
    2015-07-01, the company of the S&P 400 ENR spell until then became Edgewell Personal Care (EPC); the spun-off
    Energizer took ENR. The spell is cut in two on the day. Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{(ticker, the spell's first day): (the day the symbol passed, the earlier company's symbol today)}``.

    Example:
        >>> handovers()[("ENR", "2011-11-20")]
        ('2015-07-01', 'EPC')
    """
    rows = reviewed_facts("handover", path)
    days = (pd.to_datetime(rows["end_date"], format="%Y-%m-%d") + pd.Timedelta(days=1)).dt.strftime("%Y-%m-%d")
    columns = [rows[c].astype(str).tolist() for c in ("ticker", "start_date", "value")]
    return {(t, start): (day, earlier) for t, start, earlier, day in zip(*columns, days, strict=True)}


def class_symbol_moves(path: str | os.PathLike[str] | None = None) -> dict[str, tuple[str, str]]:
    """Share classes whose symbols moved, reviewed: spells of the symbol ended before the day are the other class's.

    The ``class_symbol_move`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): Under Armour's Class
    A traded as UA until 2016-12-06, then as UAA; Class C took UA. Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{symbol: (the day it passed, the symbol the earlier class trades under today)}``.

    Example:
        >>> class_symbol_moves()
        {'UA': ('2016-12-07', 'UAA')}
    """
    rows = reviewed_facts("class_symbol_move", path)
    columns = [rows[c].astype(str).tolist() for c in ("ticker", "start_date", "value")]
    return {symbol: (day, now) for symbol, day, now in zip(*columns, strict=True)}


def one_index_at_a_time(spells: pd.DataFrame) -> pd.DataFrame:
    """A company is in one of the S&P 500, 400 and 600 at a time: where the sources overlap, the larger index wins.

    The sources date a move between indices in each index's own change list, sometimes days apart, and the S&P
    400 and 600 lists miss changes their seed diffs find only years later (ATO in the S&P 400 to 2020-12-28, in the
    S&P 500 from 2019-02-15; AGL Resources in the S&P 400 for 2013 while in the S&P 500 from 2011 to 2016). The
    S&P 500's list is the better kept (a second upstream, fja05680/sp500): where a spell of one company
    (``current_ticker``) in the S&P 400 or 600 overlaps one of its S&P 500 spells, the smaller index's spell ends
    the day before the S&P 500 spell begins, or begins the day after it ends, or goes where it lies within it (a
    spell around the S&P 500 one keeps its part before and its part after).
    Between the S&P 400 and 600 (one list as good as the other) the spell that began first ends the day before the
    other begins.

    Args:
        spells: membership spells (``index``, ``current_ticker``, ``start_date``, ``end_date``).

    Returns:
        The spells, overlaps resolved.

    Example:
        >>> s = pd.DataFrame({"index": ["sp400", "sp500", "sp400", "sp500"],
        ...                   "current_ticker": ["ATO", "ATO", "GAS", "GAS"],
        ...                   "start_date": pd.to_datetime(["2011-11-20", "2019-02-15", "2013-01-25", "2011-12-13"]),
        ...                   "end_date": pd.to_datetime(["2020-12-28", None, "2013-10-29", "2016-06-30"])})
        >>> out = one_index_at_a_time(s)
        >>> out["index"].tolist(), out["end_date"].dt.strftime("%Y-%m-%d").fillna("-").tolist()
        (['sp400', 'sp500', 'sp500'], ['2019-02-14', '-', '2016-06-30'])
        >>> around = pd.DataFrame({"index": ["sp400", "sp500"], "current_ticker": "X",
        ...                        "start_date": pd.to_datetime(["2012-01-02", "2014-01-02"]),
        ...                        "end_date": pd.to_datetime(["2018-01-01", "2015-12-31"])})
        >>> out = one_index_at_a_time(around).sort_values("start_date")
        >>> [f"{i} {a:%Y-%m} {b:%Y-%m}" for i, a, b in zip(out["index"], out["start_date"], out["end_date"])]
        ['sp400 2012-01 2014-01', 'sp500 2014-01 2015-12', 'sp400 2016-01 2018-01']
    """
    out = spells.copy()
    running, day = pd.Timestamp("2200-01-01"), pd.Timedelta(days=1)
    index: dict[Any, str] = {k: str(v) for k, v in out["index"].items()}
    start: dict[Any, pd.Timestamp] = {k: pd.Timestamp(v) for k, v in out["start_date"].items()}
    end: dict[Any, pd.Timestamp] = {k: pd.Timestamp(v) if pd.notna(v) else running for k, v in out["end_date"].items()}
    dropped: set = set()
    tails: list[tuple[Any, pd.Timestamp, pd.Timestamp]] = []
    for _, g in out.sort_values("start_date", kind="stable").groupby("current_ticker", sort=False):
        for a in g.index:
            for b in g.index:
                if a == b or a in dropped or b in dropped or index[a] == index[b]:
                    continue
                if not (start[a] <= end[b] and start[b] <= end[a]):
                    continue
                if index[b] == "sp500":  # a, of a smaller index, gives way
                    if start[a] < start[b]:
                        if end[a] > end[b]:  # a spell around the S&P 500 one: its part after it is kept too
                            tails.append((a, end[b] + day, end[a]))
                        end[a] = start[b] - day
                    elif end[a] > end[b]:
                        start[a] = end[b] + day
                    else:
                        dropped.add(a)
                elif index[a] != "sp500" and start[a] < start[b]:  # S&P 400 and 600: a migration
                    end[a] = start[b] - day
    out["start_date"] = pd.Series(start).reindex(out.index)
    out["end_date"] = pd.Series(end).reindex(out.index).where(lambda e: e != running)
    after = [out.loc[[a]].assign(start_date=first, end_date=last) for a, first, last in tails]
    after = [piece.assign(end_date=piece["end_date"].where(piece["end_date"] != running)) for piece in after]
    return pd.concat([out.drop(index=list(dropped)), *after])


def build_index_membership(
    sources: dict[str, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]],
    companies: pd.DataFrame,
    changes: pd.DataFrame | None = None,
    coverage: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The ``index_membership`` rows of every index, tickers in the lake's spelling (``BRK-B``).

    Args:
        sources: index name -> (seed, changes, current), read as text.
        companies: the companies the lake knows today, as its company facts name them (``ticker``, ``name``,
            ``cik``).
        changes: symbol events (``ticker_change`` rows give ``current_ticker``); none: every spell keeps its own.
        coverage: the price files' symbol coverage (see :func:`refdata.identity.company_tickers`).

    Returns:
        One row per spell, sorted by index, ticker and start, with ``current_ticker``.
    """
    spells = pd.concat([membership_spells(i, *sources[i]) for i in sorted(sources)], ignore_index=True)
    spells["ticker"] = spells["ticker"].str.replace(".", "-", regex=False)
    today = pd.concat([sources[i][2][["ticker", "name", "cik"]] for i in sorted(sources)], ignore_index=True)
    today = today.assign(ticker=today["ticker"].str.replace(".", "-", regex=False))
    known = pd.concat([companies[["ticker", "name", "cik"]].astype({"ticker": str}), today], ignore_index=True)
    out = with_ciks(spells, known.drop_duplicates(["ticker", "cik"]))
    events = pd.DataFrame(columns=["event_date", "event_type", "old_symbol", "new_symbol"])
    renames = renames_of(events if changes is None else changes, [sources[i][1] for i in sorted(sources)])
    out["current_ticker"] = company_tickers(out, renames, coverage)
    for ticker, start in another_company():
        spell = (out["ticker"] == ticker) & (out["start_date"] == pd.Timestamp(start))
        ends = out.loc[spell, "end_date"].dt.year.astype("Int64").astype(str)
        out.loc[spell, "current_ticker"] = ticker + "_" + ends
        out.loc[spell, "cik"] = None
    for (ticker, start), (day, earlier_symbol) in handovers().items():
        spell = (out["ticker"] == ticker) & (out["start_date"] == pd.Timestamp(start))
        if spell.any():
            earlier = out[spell].assign(
                end_date=pd.Timestamp(day) - pd.Timedelta(days=1), current_ticker=earlier_symbol
            )
            ciks = out.loc[(out["current_ticker"] == earlier_symbol) & out["cik"].notna(), "cik"]
            earlier["cik"] = ciks.iloc[0] if len(ciks) else None
            out.loc[spell, "start_date"] = pd.Timestamp(day)
            out = pd.concat([out, earlier], ignore_index=True)
    for symbol, (moved, now) in class_symbol_moves().items():
        before = (out["ticker"] == symbol) & (out["end_date"] < pd.Timestamp(moved))
        ciks = out.loc[(out["current_ticker"] == now) & out["cik"].notna(), "cik"]
        out.loc[before, "current_ticker"] = now
        out.loc[before, "cik"] = ciks.iloc[0] if len(ciks) else None
    out = one_index_at_a_time(out)
    return out.sort_values(["index", "ticker", "start_date"], kind="stable").reset_index(drop=True)


def _index_membership(ctx: Context) -> dict[str, pd.DataFrame]:
    def read(index: str, part: str) -> pd.DataFrame:
        return pd.read_csv(ctx.source(f"{FOLDER}/{index}_{part}.csv"), dtype=str, keep_default_na=False)

    sources = {i: (read(i, "seed"), read(i, "changes"), read(i, "current")) for i in INDICES}
    changes = pd.read_csv(ctx.source(EVENTS), dtype=str, keep_default_na=False)
    coverage = pd.read_csv(ctx.source(COVERAGE), parse_dates=["first_date", "last_date"])
    coverage["symbol"] = coverage["symbol"].astype(str).str.replace(".", "-", regex=False)
    return {"index_membership": build_index_membership(sources, ctx["companies"], changes, coverage)}


_PROVENANCE = Provenance(
    "../shared/data-real-3/index-membership/sp500_*.csv, sp400_*.csv, sp600_*.csv (seed roster, changes, today's "
    "members; package pitindex 0.2.1, folder pitindex/data/); CIKs also from the companies the lake's company "
    "facts name (stage `companies`); which symbols the "
    "price files hold when, from ../shared/data-real-5/prices/coverage_index.csv.gz; ticker changes from "
    "../shared/data-real-4/index-membership-extra/us_symbol_events.csv (package index-constitution 1.0.1)",
    "MIT (pitindex, Ariel Nacamulli; index-constitution contributors); reconstructed from Wikipedia's constituent "
    "lists and fja05680/sp500",
    "one row per membership spell of the S&P 500 (seed 2004-12-30, events 2005-01-03 ..), S&P 400 (seed "
    "2011-11-20) and S&P 600 (seed 2021-03-31): the seed roster, then every addition and removal replayed in "
    "file order (membership on day T = the seed plus every event dated <= T). start_date = the addition's date "
    "(the first day in the index); end_date = the removal's date minus one day (the last day in the index), NaT "
    "while still a member. A spell running on the seed date has start_date = the date today's list gives as "
    "'date added' where it is still running and that date is on or before the seed date (AAPL 1982-11-30), else "
    "THE SEED DATE ITSELF: it began on or before that day and its true start is not in the source (S&P 400 and "
    "600 lists give no dates added). name = the name the addition gives, else the removal, else today's list. "
    "cik of a spell still running = the CIK company facts give the ticker (one CIK per ticker across the lake), else "
    "today's list; of an ended spell = the CIK of a company known today under the same ticker (company facts, "
    "then the three lists) only where its name agrees with the spell's (tickers are reused: G was Gillette, now "
    "Genpact), else null. A rename is a removal and an addition on one day: the old ticker's spell ends the day "
    "before, the new ticker's starts that day. Tickers are the source's (the symbol at the time of the spell), "
    "class shares spelled with a dash as everywhere in the lake (the source's BRK.B is BRK-B). current_ticker = "
    "the symbol the company trades under today: the spell's ticker followed through the ticker changes of "
    "../shared/data-real-4/index-membership-extra/us_symbol_events.csv (package index-constitution 1.0.1, MIT; "
    "ticker_change rows only: a merger's successor is another company), a spell ending the day before its "
    "symbol changed taking the new one (FB -> META 2022-06-09, ANTM -> ELV 2022-06-28); the membership files' "
    "own 'rename -> NEW' removals count as ticker changes too (ABC -> COR 2023-08-30), and so do the reviewed "
    "renames the lists show as a removal and an addition without a reason (the rename rows of "
    "fdkit/lake/reviewed_facts.csv: "
    "DV -> ATGE 2017, RCII -> UPBD 2023, TMST -> MTUS 2024). One symbol, one company "
    "(refdata.identity): spells of one symbol are one company unless their CIKs or the first words of their "
    "names differ, or more than five years separate them with a name unknown and no price file shows the symbol "
    "trading in between; where "
    "two companies end at one symbol, the one holding it now keeps it and the other is "
    "served as SYMBOL_YEAR, the year its last spell ended (G_2005 Gillette, DELL_2013 the Dell taken private, "
    "COR_2021 CoreSite, ECHO_2021 Echo Global Logistics), a symbol no exchange uses; reviewed exceptions "
    "(the one_company rows of fdkit/lake/reviewed_facts.csv): PCG, OI, CLF, IRT, ATI, MD (Mednax, now "
    "Pediatrix), RH (Restoration "
    "Hardware, now RH), and MANT, TMST, RCII, CBB (from the S&P 400 to the S&P 600 years before the S&P 600 list's "
    "seed roster of 2021: the gap is the list's); the S&P 400 spell of Jefferies Group (2011-2013) is "
    "JEF_2013, without a CIK, Valspar's of 2011-2017 VAL_2017 and HCC Insurance's HCC_2016 "
    "(the another_company rows of fdkit/lake/reviewed_facts.csv: the source gives Leucadia's; Valaris and Warrior Met "
    "Coal hold "
    "VAL and HCC); the S&P 400 ENR spell until 2015-06-30 is Edgewell Personal "
    "Care's, EPC, the company that spun off today's Energizer (the handover rows of the table); UA's "
    "spells ended before 2016-12-07 are Under Armour's Class A, UAA today (its class_symbol_move rows). A company "
    "is in one index at a time: where its S&P 400 or 600 spell overlaps its S&P 500 spell the smaller index's "
    "gives way (its end moves to the day before, its start to the day after, or it goes: ATO's S&P 400 spell ends "
    "2019-02-14, not 2020-12-28; AGL Resources' S&P 400 spell of 2013 goes); between the S&P 400 and 600 the "
    "earlier spell ends the day before the later begins.",
    "a reconstruction from public lists, not S&P's files; a handful of dates can be a day off. Join other "
    "datasets on CIK or on dates, not on the symbol alone (a symbol may since belong to another company). XOM: "
    "the source and the SEC ticker file give CIK 0000034088, the S&P list of 2026-08-08 0002115436 (a later "
    "registrant): the spell carries 34088, the CIK every XOM filing of the lake was filed under (company_ciks). "
    "The S&P 500 counts 495-499 members from 2004-12-30 to 2014 (497 on "
    "2008-09-15, after Lehman's removal that day) where the index had 500 companies: its upstream list "
    "(fja05680/sp500, the seed's source) itself holds 495 tickers on 2004-12-30 and 496-499 until mid-2015, so a "
    "few members are missing there; from 2015 the count is 500-507 (505 on 2016-06-30), dual share classes "
    "(GOOG/GOOGL, FOX/FOXA, NWS/NWSA, UA/UAA) being two tickers each. The source's bootstrap rename LEHMQ -> LEH "
    "leaves a LEHMQ spell of 2004-12-30 .. 2005-01-02.",
)

INDEX_MEMBERSHIP = Stage(
    "index_membership",
    "Point-in-time S&P 500, 400 and 600 membership spells",
    _index_membership,
    sources=SOURCES,
    needs=("companies",),
    outputs=(dataset("index_membership", _PROVENANCE),),
)

STAGES = (INDEX_MEMBERSHIP,)
