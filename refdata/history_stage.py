"""The price history stage: the spliced history (:mod:`refdata.history`), the index level, the delistings.

Example:
    >>> PRICE_HISTORY.produces
    ('price_history', 'delistings', 'history_rejects')
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from refdata.history import SOURCES_OF, START, build_history, read_source
from refdata.identity import renames_of
from refdata.stage import Context, Provenance, Stage, dataset, intermediate

__all__ = ["DELISTINGS", "END_KINDS", "PRICE_HISTORY", "PROVENANCE", "delistings", "index_level", "sentence"]

#: the S&P 500 index level (Yahoo ^GSPC via FinanceToolkit, MIT), the benchmark of a reconstruction from members
GSPC = "data-real/prices/gspc_daily_2000_2025.csv"
MEMBERSHIP_CHANGES = tuple(f"data-real-3/index-membership/{i}_changes.csv" for i in ("sp400", "sp500", "sp600"))
EVENTS = "data-real-4/index-membership-extra/us_symbol_events.csv"


def _price_history(ctx: Context) -> dict[str, pd.DataFrame]:
    bars = {name: read_source(ctx, src) for name, src in SOURCES_OF.items()}
    events = pd.read_csv(ctx.source(EVENTS), dtype=str, keep_default_na=False)
    changes = [pd.read_csv(ctx.source(p), dtype=str, keep_default_na=False) for p in MEMBERSHIP_CHANGES]
    spells = ctx["index_membership"]
    history, rejects = build_history(bars, spells, renames_of(events, changes), ctx["splits"])
    return {
        "price_history": pd.concat([history, index_level(ctx)], ignore_index=True),
        "delistings": delistings(history, spells, changes, events),
        "history_rejects": rejects,
    }


#: the last day of each dump: a company whose bars end there may have traded on (the data end, not the company)
DATA_ENDS = frozenset({*(s.dump for s in SOURCES_OF.values()), pd.Timestamp("2018-02-27"), pd.Timestamp("2012-09-11")})
_BANKRUPT = re.compile(r"chapter 11|bankrupt", re.I)
_ACQUIRED = re.compile(r"acqui|merg|bought|buyout|taken private|combined|purchase", re.I)
#: a removal this many days or fewer from a company's last bar is why its bars end (farther: another event)
NEAR_DAYS = 10
#: the end kinds: the company's (acquired, bankrupt, unknown) or the sources' (sources_end: a dump's last day)
END_KINDS = ("acquired", "bankrupt", "unknown", "sources_end")
#: why no delisting return is given: what a return after the last bar needs, which no stored source has
NO_RETURN = "no stored source gives the consideration paid or a price after the last bar"
_CITATION = re.compile(r"\s*\[\s*\d+\s*\]")  # an encyclopedia's footnote mark: [ 24 ]
_BUILD_NOTE = re.compile(r"upstream|we apply|ticker_renames|seed dataset", re.I)
_RENAME_NOTE = re.compile(r"^\s*rename\s+(?:\S+\s*)?(?:->|→)\s*\S+:\s*", re.I)  # a build's "rename HTA -> HR: ..." tag


def sentence(text: str | None) -> str | None:
    """A source's removal note as a sentence for users: footnote marks and build notes left out.

    Example:
        >>> sentence("manual override: S&P 500 removal effective 2008-09-15 after Chapter 11 filing. The upstream "
        ...          "seed dataset encodes the company under LEHMQ; we apply a rename.")
        'S&P 500 removal effective 2008-09-15 after Chapter 11 filing.'
        >>> sentence("Renesas Electronics acquired Intersil . [ 257 ]"), sentence("rename → HR: HTA merged.")
        ('Renesas Electronics acquired Intersil.', 'HTA merged.')
    """
    if not text:
        return None
    text = _CITATION.sub("", _RENAME_NOTE.sub("", text.removeprefix("manual override:")))
    text = re.sub(r"\s+([.,;:])", r"\1", text).strip()
    kept = [part for part in re.split(r"(?<=\.)\s+", text) if part and not _BUILD_NOTE.search(part)]
    said = " ".join(kept).strip()
    return (said[0].upper() + said[1:] + ("" if said.endswith(".") else ".")) if said else None


def _removal_notes(changes: list[pd.DataFrame], events: pd.DataFrame) -> dict[tuple[str, pd.Timestamp], str]:
    """The sources' notes of each removal and delisting, by (symbol, day)."""
    text: dict[tuple[str, pd.Timestamp], str] = {}
    for ch in changes:
        for r in ch[ch["action"] == "removed"].itertuples(index=False):
            if isinstance(r.reason, str) and r.reason and not r.reason.startswith(("derived from", "Market cap")):
                text[(str(r.ticker).replace(".", "-"), pd.Timestamp(str(r.date)))] = r.reason
    for r in events[events["event_type"] == "delisting"].itertuples(index=False):
        if isinstance(r.notes, str) and "no longer queryable" not in r.notes:
            text.setdefault((str(r.old_symbol).replace(".", "-"), pd.Timestamp(str(r.event_date))), r.notes)
    return text


def _end(last_day: pd.Timestamp, at_dump: bool, left: pd.Timestamp | None, note: str | None) -> tuple[str, str | None]:
    """A company's end kind and the sentence saying it, from its last bar and its last removal (day, note).

    Example:
        >>> kind, why = _end(pd.Timestamp("2017-11-10"), True, pd.Timestamp("2022-12-22"), "J&J acquired Abiomed.")
        >>> kind, why.split("; ")
        ('sources_end', ['The sources end on 2017-11-10', 'the company traded on and left the index on 2022-12-22', \
'the note of that index change: J&J acquired Abiomed.'])
    """
    said = sentence(note)
    if left is not None and abs((left - last_day).days) <= NEAR_DAYS:  # the company's end: it left the index then
        if not said:
            return "unknown", f"It left the index on {left:%Y-%m-%d}; no source says why."
        return ("bankrupt" if _BANKRUPT.search(said) else "acquired" if _ACQUIRED.search(said) else "unknown"), said
    if not at_dump:
        return "unknown", None
    # the bars end where a dump ends: the sources' end, not the company's
    why = f"The sources end on {last_day:%Y-%m-%d}"
    if left is not None and left > last_day:
        why += f"; the company traded on and left the index on {left:%Y-%m-%d}"
        why += f"; the note of that index change: {said}" if said else "."
    return "sources_end", why if why.endswith(".") else why + "."


def delistings(
    history: pd.DataFrame, spells: pd.DataFrame, changes: list[pd.DataFrame], events: pd.DataFrame
) -> pd.DataFrame:
    """The last trading day of every company whose bars end before the sources do, and why where known.

    Args:
        history: the price history (``ticker``, ``date``, ``adj_close``, ``price_source``).
        spells: ``index_membership`` rows.
        changes: the membership change files (their removal reasons).
        events: the symbol events (their delisting notes).

    Returns:
        ``ticker``, ``date`` (the last bar), ``adj_close`` (its close), ``delisting_kind`` (:data:`END_KINDS`: the
        company's end, ``acquired``, ``bankrupt`` or ``unknown``, where its last removal is within
        :data:`NEAR_DAYS` of the last bar; ``sources_end`` where the bars end on a dump's last day and no removal
        is near), ``reason`` (a sentence: the source's note, or where the sources end and when the company left
        the index), ``data_end`` (the last bar is a dump's last day), ``delisting_return`` (missing: see
        :data:`NO_RETURN`) and ``delisting_return_note``.

    Example:
        >>> h = pd.DataFrame({"ticker": ["X", "X", "Y"], "date": pd.to_datetime(["2008-09-12", "2008-09-15",
        ...                   "2025-07-09"]), "adj_close": [3.65, 0.21, 10.0], "price_source": "ml4t"})
        >>> s = pd.DataFrame({"ticker": ["X"], "current_ticker": ["X"], "end_date": pd.to_datetime(["2008-09-14"])})
        >>> ch = [pd.DataFrame({"date": ["2008-09-15"], "action": ["removed"], "ticker": ["X"],
        ...                     "reason": ["removal after Chapter 11 filing"]})]
        >>> ev = pd.DataFrame(columns=["event_date", "event_type", "old_symbol", "notes"])
        >>> delistings(h, s, ch, ev)[["ticker", "delisting_kind", "reason", "data_end"]].values.tolist()
        [['X', 'bankrupt', 'Removal after Chapter 11 filing.', False]]
    """
    last = history.sort_values(["ticker", "date"]).groupby("ticker", observed=True).tail(1)
    last = last[last["date"] < history["date"].max() - pd.Timedelta(days=5)]
    text = _removal_notes(changes, events)
    ended = spells.dropna(subset=["end_date"]).sort_values("end_date")
    final = ended.groupby(ended["current_ticker"].astype(str)).tail(1).set_index("current_ticker")
    ends = []
    for k, day in zip(last["ticker"].astype(str), last["date"], strict=True):
        left = note = None
        if k in final.index:  # the company's last removal from an index (its symbol then), and the source's note
            symbol, left = str(final.at[k, "ticker"]), pd.Timestamp(str(final.at[k, "end_date"])) + pd.Timedelta(days=1)
            near = [v for (t, d), v in text.items() if t == symbol and abs((d - left).days) <= 7]
            note = near[0] if near else None
        ends.append(_end(pd.Timestamp(day), pd.Timestamp(day) in DATA_ENDS, left, note))
    out = pd.DataFrame(
        {
            "ticker": last["ticker"].astype(str).to_numpy(),
            "date": last["date"].to_numpy(),
            "adj_close": last["adj_close"].to_numpy(),
            "delisting_kind": pd.Categorical([kind for kind, _ in ends], categories=END_KINDS),
            "reason": pd.array([why for _, why in ends], dtype="string"),
            "data_end": last["date"].isin(DATA_ENDS).to_numpy(),
            "delisting_return": pd.array([None] * len(last), dtype="Float64"),
            "delisting_return_note": pd.array([NO_RETURN] * len(last), dtype="string"),
        }
    )
    return out.reset_index(drop=True)


def index_level(ctx: Context) -> pd.DataFrame:
    """The S&P 500 index level as ``^GSPC`` rows: a price index (no dividends), so ``basis`` is ``price_only``."""
    g = pd.read_csv(ctx.source(GSPC), parse_dates=["date"])
    g = g[g["date"] >= START].sort_values("date")
    return pd.DataFrame(
        {
            "ticker": "^GSPC",
            "date": g["date"],
            "close": g["close"],
            "adj_close": g["close"],
            "dividend": np.nan,
            "volume": g["volume"].astype("Int64"),
            "basis": "price_only",
            "adjusted_as_of": g["date"].max(),
            "price_source": "yahoo_index",
        }
    )


PROVENANCE = Provenance(
    "../shared/data-real-5/prices-sp500-raw-2000-2012/ (ml4t: Yahoo raw OHLC + adjusted close of the S&P 500 lists "
    "of 2008 and 2012, via rohansaphal97/machine-learning-for-trading @57f878856002), ../shared/data-real-5/prices/"
    "stooq_kaggle_sp1500_daily_adj_2005_2017.parquet (Kaggle 'Huge Stock Market Dataset', Stooq), "
    "../shared/data-real-5/prices/stooq_sp1500_daily_adj_2017_2025.parquet (Stooq bulk download via "
    "gregwu/stock_db @7c8614093b3f), ../shared/data-real-5/prices-sp500-pit-2013-2018/ (Quandl WIKI via "
    "teddykoker/survivorship-free-spy @0bcc715e2dd3), ../shared/data-real-2/prices/pystock (raw + Yahoo adjusted "
    "2015-03 .. 2017-03); identities from index_membership; ^GSPC (the S&P 500 index level) from "
    "../shared/data-real/prices/gspc_daily_2000_2025.csv (Yahoo via JerBouma/FinanceToolkit, MIT)",
    "Kaggle CC0 (the 2005-2017 Stooq dump); Stooq's terms of use (the 2017-2025 dump); Yahoo data redistributed "
    "without a licence file (ml4t, pystock CC BY-SA 4.0 for the packaging); Quandl WIKI (community, free); "
    "reference and research use",
    "one row per company and trading day 2004-01-02 .. 2025-07-09 for every company of index_membership (its "
    "current_ticker): each date from the source spelled nearest to it (refdata.history.WINDOWS), a source's "
    "symbol given to the company holding it on the dump date (renames followed, reused symbols left to their "
    "owner of the time), only its contiguous run of bars around the company's index spells; single bad bars the "
    "next bar takes back are dropped. adj_close = the split- and dividend-adjusted close: for the raw sources "
    "rebuilt from raw closes and the distributions they show (ml4t: the step of its adjusted/raw ratio on an "
    "ex-date; pystock: the eve-of-ex-date difference of its daily-crawled adjusted close), then linked across "
    "sources by the median ratio on the 10 common days nearest each splice (adjusted_as_of = the reference date "
    "of the chain; it changes where two sources share no day near a splice, and returns are not computed across "
    "such a break). close = the raw close divided by the splits after it (found in the raw/adjusted ratio, in "
    "pystock's eve ratio, and in the split table after 2015; across the 2012-2015 gap only where no split can "
    "hide in it, else close is missing: a split is never guessed): the as-traded price on today's split basis, "
    "only where a raw close exists (ml4t 2004-2012, pystock 2015-2017). dividend = cash per share on the close's "
    "basis on an ex-date. basis = as_traded "
    "(both), adjusted_only (no raw close: close is missing, never an adjusted close), price_only (a dead name "
    "whose source left the adjusted close unadjusted: adj_close = close, dividends missing). Two sources that "
    "disagree on over 5% of their common days' returns are two companies under one symbol: the one spelled "
    "farther from those days is not used for that company.",
    "survivors only outside 2000-2012 (ml4t) and 2013-2018 (WIKI): names that died 2012-09 .. 2013-02 or "
    "2017-11 .. 2025-07 lack those months (see the coverage table), and some live ones lack 2012-09 .. 2013-02 "
    "too where the 2017 dump spells them otherwise (a basis break there); volumes are each source's own "
    "(split-adjusted in the adjusted files, raw x later splits in the raw ones); open/high/low are not kept.",
)

DELISTINGS = Provenance(
    "the price history (its last bar per company); reasons from the removal reasons of "
    "../shared/data-real-3/index-membership/*_changes.csv and the delisting notes of "
    "../shared/data-real-4/index-membership-extra/us_symbol_events.csv",
    "as the price history (its sources' terms) and the membership sources (MIT: pitindex, index-constitution)",
    "one row per company whose bars end more than five days before the sources do: date = its last bar, "
    "adj_close its adjusted close; delisting_kind = the company's end where its last index removal is within 10 "
    "days of the last bar (bankrupt / acquired where the source's note says so: Chapter 11, bankrupt; acquired, "
    "merged, bought, taken private; else unknown), sources_end where the bars end on a dump's last day (2012-09-12, "
    "2017-03-31, 2017-11-10, 2018-02-27/03-27) and no removal is near: the company traded on after it; reason = "
    "the source's note as a sentence (footnote marks and build notes left out), or where the sources end and when "
    "the company left the index; data_end = the last bar is a dump's last day; delisting_return missing: no stored "
    "source gives the consideration paid or a price after the last bar (delisting_return_note says so).",
)

PRICE_HISTORY = Stage(
    "price_history",
    "Daily closes 2004-2025 of every S&P 500/400/600 company, each row with its basis (the fdkit-history package)",
    _price_history,
    sources=(*(s.path for s in SOURCES_OF.values()), *MEMBERSHIP_CHANGES, EVENTS, GSPC),
    needs=("index_membership", "splits"),
    outputs=(dataset("price_history", PROVENANCE), dataset("delistings", DELISTINGS), intermediate("history_rejects")),
)
