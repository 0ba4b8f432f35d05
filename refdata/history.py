"""Twenty years of daily prices for every company that was ever in the S&P 500, 400 or 600 (2004-2025).

Five sources, each a dump of one date whose symbols are spelled as on that date (``../shared/data-real-5``,
``../shared/data-real-2``; see :data:`SOURCES_OF`):

* ``ml4t``: raw OHLC and Yahoo's adjusted close 2000-2012 of the S&P 500 lists of 2008 and 2012, dead names kept;
* ``stooq_2017``: split- and dividend-adjusted closes 2005-2017 of the names listed on 2017-11-10;
* ``wiki``: adjusted closes 2013-2018 of the iShares IVV holdings of each month (names that died 2013-2018);
* ``pystock``: raw OHLC and Yahoo's adjusted close 2015-03 .. 2017-03 of the whole US market;
* ``stooq_2025``: adjusted OHLC 2017-2025 of the names listed on 2025-07-09.

**Identity.** A company is a membership identity of ``index_membership`` (its ``current_ticker``, the symbol that
works in every data function). A source's symbol is given to the company that held it on the source's dump date,
and only its contiguous run of bars around that company's membership is taken (a symbol reused after a gap
brings nothing). Each date is served from the source spelled nearest to it (:data:`WINDOWS`); when two sources of
one company disagree on the days they share, the one spelled farther from those days holds another company's
history under the symbol and is not used for that company (a ``rejects`` row says so).

**Bases.** ``adj_close`` is the split- and dividend-adjusted close, linked across sources by the median ratio on
their common days, so a company's total return runs through every splice; where two segments share no day the
series breaks (``adjusted_as_of`` differs and returns are not computed across the break). ``close`` is the
as-traded close put on today's split basis, only where a raw close exists (``ml4t``, ``pystock``) and the splits
after it are known; elsewhere it is missing and ``basis`` says ``adjusted_only``: an adjusted close is never
served as ``close``.

Example:
    >>> rows = pd.DataFrame({"date": pd.to_datetime(["2010-01-04", "2010-01-05", "2010-06-01", "2010-06-02"])})
    >>> contiguous_runs(rows["date"]).tolist()  # a gap of more than 45 days starts a new run
    [0, 0, 1, 1]
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fdkit.lake.reviewed import reviewed_facts
from refdata.history_basis import as_traded, chain_source
from refdata.stage import Context

__all__ = [
    "SOURCES_OF",
    "WINDOWS",
    "Source",
    "build_history",
    "contiguous_runs",
    "holders",
    "identities",
    "link",
]

ML4T = "data-real-5/prices-sp500-raw-2000-2012/ml4t_sp500_2008_2012_members_daily_raw_2000_2012.parquet"
STOOQ_2017 = "data-real-5/prices/stooq_kaggle_sp1500_daily_adj_2005_2017.parquet"
STOOQ_2025 = "data-real-5/prices/stooq_sp1500_daily_adj_2017_2025.parquet"
WIKI = "data-real-5/prices-sp500-pit-2013-2018/sp500_members_daily_adj_2013_2018.parquet"
PYSTOCK = "data-real-2/prices/pystock_us_equities_daily_2015_2017.parquet"
START = pd.Timestamp("2004-01-01")  # a year before the S&P 500 seed (2004-12-30): momentum needs a lookback
#: a longer gap between two bars of a symbol starts another security's run
GAP = pd.Timedelta(days=45)
RUNNING = pd.Timestamp("2200-01-01")  # the end of a spell still running
#: how long a bankrupt member's OTC line is kept after its last day in an index
OTC_TAIL = pd.Timedelta(days=7)


@dataclass(frozen=True)
class Source:
    """One price dump.

    Attributes:
        name: short name (the ``source`` column of the rows it gives).
        path: the file, relative to the shared folder.
        dump: the day its symbols are spelled as of.
        adjusted_as_of: the reference date of its adjusted closes.
        raw: whether it has the raw (as-traded) close beside the adjusted one.
    """

    name: str
    path: str
    dump: pd.Timestamp
    adjusted_as_of: pd.Timestamp
    raw: bool


SOURCES_OF = {
    s.name: s
    for s in (
        Source("ml4t", ML4T, pd.Timestamp("2012-09-12"), pd.Timestamp("2012-09-12"), raw=True),
        Source("stooq_2017", STOOQ_2017, pd.Timestamp("2017-11-10"), pd.Timestamp("2017-11-10"), raw=False),
        Source("wiki", WIKI, pd.Timestamp("2018-03-27"), pd.Timestamp("2018-03-27"), raw=False),
        Source("pystock", PYSTOCK, pd.Timestamp("2017-03-31"), pd.Timestamp("2017-03-31"), raw=True),
        Source("stooq_2025", STOOQ_2025, pd.Timestamp("2025-07-09"), pd.Timestamp("2025-07-09"), raw=False),
    )
}

#: the date windows of the history and, for each, the sources in the order they are preferred (nearest spelling
#: first): the first source holding a company in a window gives all its bars there
WINDOWS: tuple[tuple[pd.Timestamp, pd.Timestamp, tuple[str, ...]], ...] = (
    (START, pd.Timestamp("2012-09-12"), ("ml4t", "stooq_2017", "wiki")),
    (pd.Timestamp("2012-09-13"), pd.Timestamp("2015-03-19"), ("stooq_2017", "wiki", "stooq_2025")),
    (pd.Timestamp("2015-03-20"), pd.Timestamp("2017-03-31"), ("pystock", "stooq_2017", "wiki", "stooq_2025")),
    (pd.Timestamp("2017-04-01"), pd.Timestamp("2017-11-10"), ("stooq_2017", "wiki", "stooq_2025")),
    (pd.Timestamp("2017-11-11"), pd.Timestamp("2025-07-09"), ("stooq_2025", "wiki")),
)


def not_the_company(path: str | os.PathLike[str] | None = None) -> dict[tuple[str, str], pd.Timestamp]:
    """Bars of a source that are another security under a member's symbol, reviewed (from the sources' own caveats).

    The ``not_the_company`` rows of the reviewed-facts table (:mod:`fdkit.lake.reviewed`): ml4t's BSC from
    2008-08-07 (an illiquid other security, not Bear Stearns), EDS of 2007-2012 and CFC+A (a Countrywide preferred
    line); pystock's MS, NEE and TCO bars mixed with another security's. Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{(source, symbol): the first day left out}``.

    Example:
        >>> not_the_company()[("ml4t", "BSC")]
        Timestamp('2008-05-31 00:00:00')
    """
    rows = reviewed_facts("not_the_company", path)
    columns = [rows[c].astype(str).tolist() for c in ("value", "ticker", "start_date")]
    return {(source, symbol): pd.Timestamp(since) for source, symbol, since in zip(*columns, strict=True)}


def source_aliases(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Symbols a dump spells as they were before a rename the membership sources do not record, reviewed.

    Or the other way round: the seed roster spells some companies as they are today. The ``source_alias`` rows of
    the reviewed-facts table (:mod:`fdkit.lake.reviewed`): YHOO -> AABA, COH -> TPR, ERTS -> EA, the post-bankruptcy
    LEHMQ -> LEH, ... Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        ``{dump symbol: the member's current_ticker}``.

    Example:
        >>> source_aliases()["PCLN"]
        'BKNG'
    """
    rows = reviewed_facts("source_alias", path)
    return dict(zip(rows["ticker"].astype(str), rows["value"].astype(str), strict=True))


#: how many common days of two sources, nearest the splice, give the ratio that links them
LINK_DAYS = 10

#: the share of common days whose daily returns may differ by more than 1% before two sources are two companies
DISAGREE_SHARE = 0.05


def contiguous_runs(dates: pd.Series) -> pd.Series:
    """Number the runs of sorted dates: a gap longer than :data:`GAP` starts the next run.

    Args:
        dates: sorted dates of one symbol.

    Returns:
        The run number of each date (0, 1, ...), aligned to ``dates``.
    """
    return (dates.diff() > GAP).cumsum().astype("int64")


def _norm(symbols: pd.Series) -> pd.Series:
    """Symbols in the lake's spelling: class shares with a dash (``BRK.B``, ``BRK_B`` -> ``BRK-B``)."""
    return symbols.astype(str).str.upper().str.replace(r"[._]", "-", regex=True)


def read_source(ctx: Context, src: Source) -> pd.DataFrame:
    """One source's bars from :data:`START`: ``symbol``, ``date``, ``adj``, ``raw`` (NaN if none), ``volume``.

    Args:
        ctx: the stage context.
        src: the source.

    Returns:
        The bars, positive adjusted closes only, sorted by symbol and date.
    """
    df = pd.read_parquet(ctx.source(src.path))
    df["date"] = pd.to_datetime(df["date"])
    df = df[df["date"] >= START]
    out = pd.DataFrame(
        {
            "symbol": _norm(df["symbol"]),
            "date": df["date"],
            "adj": (df["adj_close"] if src.raw else df["close"]).astype("float64"),
            "adj_src": (df["adj_close"] if src.raw else df["close"]).astype("float64"),
            "raw": df["close"].astype("float64") if src.raw else np.nan,
            "volume": df["volume"].astype("Int64"),
        }
    )
    out = out[(out["adj"] > 0) & out["date"].dt.day_of_week.lt(5) & ~out["symbol"].str.startswith("$")]
    for (name, symbol), since in not_the_company().items():
        if name == src.name:
            out = out[~((out["symbol"] == _norm(pd.Series([symbol])).iloc[0]) & (out["date"] >= since))]
    out = out.sort_values(["symbol", "date"], kind="stable").reset_index(drop=True)
    return out[~spikes(out)].reset_index(drop=True)


def spikes(bars: pd.DataFrame) -> pd.Series:
    """Single bad bars: a close off by half or more that the next bar takes back (within 20% of the day before).

    Example:
        >>> b = pd.DataFrame({"symbol": "X", "adj": [66.0, 0.667, 66.5, 67.0]})
        >>> spikes(b).tolist()  # SLG 2014-03-04 in the 2005-2017 dump
        [False, True, False, False]
    """
    g = bars.groupby("symbol", sort=False)["adj"]
    before, after = g.shift(1), g.shift(-1)
    jump = bars["adj"] / before
    back = after / bars["adj"]
    return (((jump < 0.5) & (back > 1.8)) | ((jump > 2.0) & (back < 0.55))) & ((after / before - 1).abs() < 0.2)


def identities(spells: pd.DataFrame) -> pd.DataFrame:
    """One row per company of the membership spells (its ``current_ticker``, one company each) and its span.

    Args:
        spells: ``index_membership`` rows (``ticker``, ``start_date``, ``end_date``, ``current_ticker``).

    Returns:
        ``identity``, ``first_start``, ``last_end`` (far future while a spell runs).

    Example:
        >>> s = pd.DataFrame({"ticker": ["WLP", "ELV"], "current_ticker": ["ELV", "ELV"],
        ...                   "start_date": pd.to_datetime(["2005-01-03", "2022-06-28"]),
        ...                   "end_date": pd.to_datetime(["2014-12-02", None])})
        >>> identities(s)[["identity", "first_start"]].values.tolist()
        [['ELV', Timestamp('2005-01-03 00:00:00')]]
    """
    s = spells.assign(
        identity=spells["current_ticker"].astype(str), end=spells["end_date"].astype("datetime64[ns]").fillna(RUNNING)
    )
    g = s.groupby("identity", sort=True)
    return pd.DataFrame({"first_start": g["start_date"].min(), "last_end": g["end"].max()}).reset_index()


def holders(spells: pd.DataFrame, renames: pd.DataFrame, day: pd.Timestamp) -> dict[str, str]:
    """Which company a symbol of a dump of ``day`` means.

    Each spell that began by ``day`` claims its symbol followed through the renames dated by then, from the day
    the company took that symbol; a company's first spell also claims its symbol before it began (its history
    before it joined an index). The latest to have taken a symbol by ``day`` holds it.

    Args:
        spells: ``index_membership`` rows.
        renames: :func:`refdata.identity.renames_of`.
        day: the dump's date.

    Returns:
        symbol -> identity (``current_ticker``).

    Example:
        >>> spells = pd.DataFrame({"ticker": ["COR", "COR"], "current_ticker": ["COR_2021", "COR"],
        ...                        "start_date": pd.to_datetime(["2017-08-10", "2023-08-30"])})
        >>> none = pd.DataFrame({"day": pd.to_datetime([]), "old": [], "new": []})
        >>> [holders(spells, none, pd.Timestamp(day))["COR"] for day in ("2017-11-10", "2025-07-09")]
        ['COR_2021', 'COR']
    """
    claims: dict[str, list[tuple[pd.Timestamp, str]]] = {}
    first = spells.groupby("current_ticker")["start_date"].transform("min")
    for r, earliest in zip(spells.itertuples(index=False), first, strict=True):
        symbol, took = str(r.ticker), pd.Timestamp(str(r.start_date))
        if took <= day:
            for _ in range(10):  # each hop moves forward in time
                hop = renames[(renames["old"] == symbol) & (renames["day"] > took) & (renames["day"] <= day)]
                if hop.empty:
                    break
                took, symbol = pd.Timestamp(hop["day"].iloc[0]), str(hop["new"].iloc[0])
        elif r.start_date != earliest:
            continue
        claims.setdefault(symbol, []).append((took, str(r.current_ticker)))
    known = set(spells["current_ticker"].astype(str))
    for symbol, member in source_aliases().items():
        if member in known:  # weaker than any claim through the spells
            claims.setdefault(symbol, []).append((pd.Timestamp("1900-01-01"), member))
    out = {}
    for symbol, c in claims.items():
        by_then = [x for x in c if x[0] <= day]
        out[symbol] = max(by_then)[1] if by_then else min(c)[1]
    return out


def assign(bars: pd.DataFrame, ids: pd.DataFrame, src: Source, owner: dict[str, str]) -> pd.DataFrame:
    """A source's bars given to companies: each symbol's contiguous runs that meet its holder's index spells.

    Args:
        bars: :func:`read_source` rows.
        ids: :func:`identities`.
        src: the source.
        owner: :func:`holders` on the source's dump date.

    Returns:
        The kept bars with ``identity``, ``source`` and ``run`` (``symbol:run``).

    Example:
        >>> ids = pd.DataFrame({"identity": ["X"], "first_start": pd.to_datetime(["2010-01-04"]),
        ...                     "last_end": pd.to_datetime(["2010-12-31"])})
        >>> days = pd.to_datetime(["2010-06-01", "2010-06-02", "2014-01-02"])  # 2014: another security's run
        >>> bars = pd.DataFrame({"symbol": "X", "date": days, "adj": 1.0, "adj_src": 1.0, "raw": float("nan"),
        ...                      "volume": pd.array([1, 1, 1], dtype="Int64")})
        >>> assign(bars, ids, SOURCES_OF["stooq_2017"], {"X": "X"})["date"].dt.year.tolist()
        [2010, 2010]
    """
    df = bars[bars["symbol"].isin(owner)].copy()
    df["identity"] = df["symbol"].map(owner)
    df["run"] = df.groupby("symbol", sort=False)["date"].transform(contiguous_runs)
    span = ids.set_index("identity")
    first = df["identity"].map(span["first_start"]) - GAP
    last = df["identity"].map(span["last_end"]) + GAP
    runs = df.groupby(["symbol", "run"])["date"].agg(["min", "max"])
    key = pd.MultiIndex.from_frame(df[["symbol", "run"]])
    meets = (runs["max"].reindex(key).to_numpy() >= first.to_numpy()) & (
        runs["min"].reindex(key).to_numpy() <= last.to_numpy()
    )
    df = df[meets]
    # a bankrupt company's OTC line (LEHMQ) trades on after the exchange delisted it: its bars stop a week after
    # the company's last day in an index (Lehman: the crash of 2008-09-15 kept, the OTC quotes of 2009-2012 not)
    otc = df["symbol"].str.len().gt(3) & df["symbol"].str.endswith("Q")
    df = df[~otc | (df["date"] <= df["identity"].map(span["last_end"]) + OTC_TAIL)]
    # one bar a day per company: where a source holds a company under two symbols (ERTS and EA), its holder's own
    df = df.assign(alias=df["symbol"].isin(list(source_aliases())) & ~df["symbol"].isin(set(df["identity"])))
    df = df.sort_values(["identity", "date", "alias"], kind="stable").drop_duplicates(["identity", "date"])
    df = df.drop(columns="alias").sort_values(["symbol", "date"], kind="stable")
    df["source"] = src.name
    df["run"] = src.name + ":" + df["symbol"] + ":" + df["run"].astype(str)
    return df.reset_index(drop=True)


def _agreement(a: pd.DataFrame, b: pd.DataFrame, near: pd.Timestamp) -> tuple[int, float, float]:
    """Two sources' bars of a company: their common days, the share of them whose returns differ by over 1%.

    Args:
        a: one source's bars (``date``, ``adj``).
        b: the other's.
        near: the day of the splice.

    Returns:
        The number of common days, that share, and the median ratio of ``b``'s adjusted close to ``a``'s on the
        :data:`LINK_DAYS` common days nearest the splice (NaN when none is within :data:`GAP` of it: a split or a
        distribution inside a long overlap must not move the link).
    """
    m = a[["date", "adj"]].merge(b[["date", "adj"]], on="date", suffixes=("_a", "_b")).sort_values("date")
    if len(m) < 5:
        return len(m), 0.0, float("nan")
    diff = (m["adj_a"].pct_change() - m["adj_b"].pct_change()).abs().iloc[1:]
    distance = (m["date"] - near).abs()
    close_by = m[distance <= GAP].assign(distance=distance).nsmallest(LINK_DAYS, "distance")
    ratio = float((close_by["adj_b"] / close_by["adj_a"]).median()) if len(close_by) else float("nan")
    return len(m), float((diff > 0.01).mean()), ratio


def link(g: pd.DataFrame) -> tuple[list[pd.DataFrame], list[dict]]:
    """One company's bars from all sources as a series of pieces, one per window, linked to the latest basis.

    Each window takes its bars from the first source of its order holding the company there. Going back from the
    latest piece, each piece is scaled onto the next one's basis by the median ratio on the two sources' common
    days; a piece sharing no day with the next one starts a new basis (a break). Two sources that disagree on their
    common days (over :data:`DISAGREE_SHARE` of daily returns more than 1% apart) are two companies under one
    symbol: the one spelled farther from those days is dropped for this company and the pieces are chosen again.

    Args:
        g: the company's :func:`assign` rows of every source.

    Returns:
        The pieces (``adj`` rescaled, with ``adjusted_as_of``) in date order, and the rejected sources (one dict
        each: ``identity``, ``source``, ``reason``).
    """
    rejects: list[dict] = []
    dropped: set[str] = set()
    by_source = {name: part for name, part in g.groupby("source", sort=False)}
    while True:
        pieces = []
        for lo, hi, order in WINDOWS:
            covered: list[tuple[pd.Timestamp, pd.Timestamp]] = []
            for name in order:
                part = by_source.get(name)
                if name in dropped or part is None:
                    continue
                part = part[(part["date"] >= lo) & (part["date"] <= hi)]
                for a, b in covered:  # a later source only fills the days before or after an earlier one's bars
                    part = part[(part["date"] < a) | (part["date"] > b)]
                if len(part):
                    pieces.append(part.copy())
                    covered.append((part["date"].min(), part["date"].max()))
        pieces.sort(key=lambda p: p["date"].iloc[0])
        conflict = None
        factor, basis = 1.0, None
        for k in range(len(pieces) - 1, -1, -1):
            name = pieces[k]["source"].iloc[0]
            later = pieces[k + 1]["source"].iloc[0] if k + 1 < len(pieces) else None
            if later is None or later == name:
                basis = basis if later == name else SOURCES_OF[name].adjusted_as_of
            else:
                n, bad, ratio = _agreement(by_source[name], by_source[later], pieces[k + 1]["date"].iloc[0])
                if n >= 5 and bad > DISAGREE_SHARE:
                    conflict = (name, later, n, bad)
                    break
                if n >= 5 and np.isfinite(ratio):
                    factor = factor * ratio
                else:
                    factor, basis = 1.0, SOURCES_OF[name].adjusted_as_of
            pieces[k]["adj"] = pieces[k]["adj"] * factor
            pieces[k]["adjusted_as_of"] = basis
        if conflict is None:
            return pieces, rejects
        name, later, n, bad = conflict
        common = by_source[name].merge(by_source[later][["date"]], on="date")["date"]
        mid = common.iloc[len(common) // 2]
        far = max((name, later), key=lambda s: abs(SOURCES_OF[s].dump - mid))
        near = later if far == name else name
        dropped.add(far)
        rejects.append(
            {
                "identity": g["identity"].iloc[0],
                "source": far,
                "reason": f"disagrees with {near} on {bad:.0%} of {n} common days: another company's "
                f"history under the symbol",
            }
        )


BASES = ("as_traded", "adjusted_only", "price_only")
HISTORY_COLUMNS = [
    "ticker",
    "date",
    "close",
    "adj_close",
    "dividend",
    "volume",
    "basis",
    "adjusted_as_of",
    "price_source",
]


def company_history(g: pd.DataFrame, table: pd.DataFrame) -> tuple[pd.DataFrame, list[dict]]:
    """One company's served bars (:data:`HISTORY_COLUMNS`) and the sources rejected for it."""
    identity = str(g["identity"].iloc[0])
    reference = g[g["source"] == "stooq_2017"]
    parts = []
    for _, rows in g.groupby("source", sort=False):  # raw sources: total return from closes and distributions
        rows = rows.sort_values("date", kind="stable").copy()
        if str(rows["source"].iloc[0]) in ("ml4t", "pystock"):
            chain_source(rows, identity, table, reference if len(reference) else None)
        parts.append(rows)
    pieces, rejects = link(pd.concat(parts))
    if not pieces:
        return pd.DataFrame(columns=HISTORY_COLUMNS), rejects
    as_traded(pieces, identity, table)
    for p in pieces:  # a dead name's adjusted close the source left unadjusted: a price return only
        p["unadjusted"] = p["source"].iloc[0] == "ml4t" and bool(np.isclose(p["raw"], p["adj_src"], rtol=1e-4).all())
    out = pd.concat(pieces, ignore_index=True)
    out["dividend"] = out["dividend"].where(out["close"].notna()) if "dividend" in out else np.nan
    unadjusted = out["unadjusted"].astype(bool)
    out["adj_close"] = out["adj"]  # a price-only piece keeps its linked level: no jump where it hands over
    out["basis"] = np.select(
        [unadjusted & out["close"].notna(), out["close"].notna()], ["price_only", "as_traded"], "adjusted_only"
    )
    out = out.dropna(subset=["adj_close"]).assign(ticker=identity, price_source=out["source"])
    return out[HISTORY_COLUMNS], rejects


def build_history(
    bars: dict[str, pd.DataFrame], spells: pd.DataFrame, renames: pd.DataFrame, table: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The price history of every company of the membership spells.

    Args:
        bars: source name -> :func:`read_source` rows.
        spells: ``index_membership`` rows.
        renames: :func:`refdata.identity.renames_of`.
        table: the split table (``ticker``, ``date``, ``ratio``).

    Returns:
        The bars (:data:`HISTORY_COLUMNS`, sorted by ticker and date) and the rejects (``identity``, ``source``,
        ``reason``).
    """
    ids = identities(spells)
    rows = pd.concat(
        [assign(bars[n], ids, s, holders(spells, renames, s.dump)) for n, s in SOURCES_OF.items()], ignore_index=True
    )
    parts, rejects = [], []
    for _, g in rows.groupby("identity", sort=True):
        part, bad = company_history(g.sort_values(["source", "date"], kind="stable"), table)
        parts.append(part)
        rejects.extend(bad)
    out = pd.concat(parts, ignore_index=True).sort_values(["ticker", "date"], kind="stable")
    return out.reset_index(drop=True), pd.DataFrame(rejects, columns=["identity", "source", "reason"])
