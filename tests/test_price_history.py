"""The price history 2004-2025 (fdkit-history): identity, bases, splices, dead names (issue: twenty years of prices).

The build's rules are tested on small frames where each rule must bite; the data are checked against the raw
source files read here with plain pandas, and through the public API on the embedded service.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fdkit
from fdkit.lake.io import read_dataset
from refdata import history as h
from refdata.history_basis import inner_splits
from refdata.identity import company_tickers, traded_through

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "history" / "fdkit_history" / "_data"
SHARED = REPO.parent / "shared"
#: the raw source files the data are checked against (beside the clone, as the build reads them)
needs_sources = pytest.mark.skipif(
    not (SHARED / "data-real-5" / "SOURCES.md").exists(), reason="../shared/data-real-5 is not beside this clone"
)


@pytest.fixture(scope="module")
def history() -> pd.DataFrame:
    return read_dataset(PACKAGE, "price_history")


def _bars(source: str, symbol: str, dates: list[str], adj: list[float], raw: list[float] | None = None) -> pd.DataFrame:
    n = len(dates)
    return pd.DataFrame(
        {
            "symbol": symbol,
            "date": pd.to_datetime(dates),
            "adj": adj,
            "adj_src": adj,
            "raw": raw if raw is not None else [np.nan] * n,
            "volume": pd.array([1] * n, dtype="Int64"),
            "source": source,
            "identity": symbol,
            "run": f"{source}:{symbol}:0",
        }
    )


# --- identity -------------------------------------------------------------------------------------------------


def test_a_reused_symbol_is_two_companies_and_a_rename_one():
    spells = pd.DataFrame(
        {
            "ticker": ["ABC", "COR", "COR", "DELL", "DELL", "UIS", "UIS"],
            "name": ["AmerisourceBergen", "CoreSite Realty", "Cencora", None, "Dell Technologies", None, "Unisys"],
            "cik": [None] * 7,
            "start_date": pd.to_datetime(
                ["2004-12-30", "2017-08-10", "2023-08-30", "2004-12-30", "2024-09-23", "2004-12-30", "2021-03-31"]
            ),
            "end_date": pd.to_datetime(["2023-08-29", "2021-12-27", None, "2013-10-28", None, "2008-11-10", None]),
        }
    )
    renames = pd.DataFrame({"day": pd.to_datetime(["2023-08-30"]), "old": ["ABC"], "new": ["COR"]})
    coverage = pd.DataFrame(
        {
            "symbol": ["UIS", "UIS"],
            "first_date": pd.to_datetime(["2005-01-03", "2017-09-01"]),
            "last_date": pd.to_datetime(["2017-11-10", "2025-07-09"]),
        }
    )
    got = company_tickers(spells, renames, coverage).tolist()
    # AmerisourceBergen renamed Cencora: one company, COR; CoreSite held COR before: COR_2021; old Dell went
    # private in 2013 and DELL came back as another listing (no price file bridges the gap): DELL_2013; Unisys
    # traded throughout its 13 years outside the indices: one company
    assert got == ["COR", "COR_2021", "COR", "DELL_2013", "DELL", "UIS", "UIS"]
    assert traded_through(coverage, "UIS", pd.Timestamp("2008-11-10"), pd.Timestamp("2021-03-31"))
    assert not traded_through(coverage.iloc[:1], "UIS", pd.Timestamp("2008-11-10"), pd.Timestamp("2021-03-31"))


def test_a_symbol_means_its_holder_on_the_dump_date():
    spells = pd.DataFrame(
        {
            "index": "sp500",
            "ticker": ["COR", "COR", "ABC"],
            "current_ticker": ["COR_2021", "COR", "COR"],
            "start_date": pd.to_datetime(["2017-08-10", "2023-08-30", "2004-12-30"]),
            "end_date": pd.to_datetime(["2021-12-27", None, "2023-08-29"]),
        }
    )
    renames = pd.DataFrame({"day": pd.to_datetime(["2023-08-30"]), "old": ["ABC"], "new": ["COR"]})
    assert h.holders(spells, renames, pd.Timestamp("2017-11-10"))["COR"] == "COR_2021"
    assert h.holders(spells, renames, pd.Timestamp("2017-11-10"))["ABC"] == "COR"
    assert h.holders(spells, renames, pd.Timestamp("2025-07-09"))["COR"] == "COR"


def test_bars_of_a_symbol_after_a_gap_are_another_security():
    ids = pd.DataFrame(
        {"identity": ["X"], "first_start": pd.to_datetime(["2010-01-04"]), "last_end": pd.to_datetime(["2011-12-30"])}
    )
    days = [*pd.bdate_range("2010-01-04", "2011-12-30"), *pd.bdate_range("2014-01-02", "2014-03-31")]
    bars = pd.DataFrame(
        {
            "symbol": "X",
            "date": days,
            "adj": 1.0,
            "adj_src": 1.0,
            "raw": np.nan,
            "volume": pd.array([1] * len(days), dtype="Int64"),
        }
    )
    got = h.assign(bars, ids, h.SOURCES_OF["stooq_2017"], {"X": "X"})
    assert got["date"].max() == pd.Timestamp("2011-12-30")  # the 2014 run is not the company's


# --- splicing -------------------------------------------------------------------------------------------------


def test_two_sources_that_disagree_are_two_companies():
    early = [d.strftime("%Y-%m-%d") for d in pd.bdate_range("2012-06-01", "2012-09-12")]
    days = [d.strftime("%Y-%m-%d") for d in pd.bdate_range("2012-06-01", "2012-12-31")]
    rng = np.random.default_rng(1)
    a = 50 * np.cumprod(1 + rng.normal(0, 0.02, len(days)))
    b = 80 * np.cumprod(1 + rng.normal(0, 0.02, len(days)))  # another company's path under the symbol
    ml4t = _bars("ml4t", "X", early, list(a[: len(early)]), list(a[: len(early)]))
    pieces, rejects = h.link(pd.concat([ml4t, _bars("stooq_2017", "X", days, list(b))]))
    assert [r["source"] for r in rejects] == ["stooq_2017"]  # spelled in 2017, farther from 2012 than ml4t
    assert {p["source"].iloc[0] for p in pieces} == {"ml4t"}
    pieces, rejects = h.link(pd.concat([ml4t, _bars("stooq_2017", "X", days, list(a * 3))]))
    assert rejects == [] and len(pieces) == 2  # the same path on another basis is one company


def test_a_splice_carries_the_later_sources_basis_without_a_jump():
    early = [d.strftime("%Y-%m-%d") for d in pd.bdate_range("2012-08-01", "2012-09-12")]
    late = [d.strftime("%Y-%m-%d") for d in pd.bdate_range("2012-08-01", "2012-10-31")]
    path = 20 * np.cumprod(np.full(len(late), 1.001))
    g = pd.concat(
        [
            _bars("ml4t", "X", early, list(path[: len(early)] * 2), list(path[: len(early)] * 2)),
            _bars("stooq_2017", "X", late, list(path)),
        ]
    )
    pieces, _ = h.link(g)
    adj = pd.concat(pieces).set_index("date")["adj"]
    assert np.allclose(adj.pct_change().dropna(), 0.001)  # no jump where ml4t hands over to stooq
    assert pieces[0]["adjusted_as_of"].iloc[0] == h.SOURCES_OF["stooq_2017"].adjusted_as_of


def test_splits_are_found_in_the_raw_to_adjusted_ratio():
    days = pd.bdate_range("2005-02-22", periods=6)
    raw = [88.0, 88.5, 89.0, 44.9, 45.0, 180.5]  # 2:1 on day 3, 1:4 reverse on day 5
    adj = [1.0, 1.0057, 1.0114, 1.0205, 1.0227, 1.0256]
    piece = pd.DataFrame({"date": days, "raw": raw, "adj_src": adj})
    found = inner_splits(piece)
    assert found.to_dict() == {days[3]: 2.0, days[5]: 0.25}


# --- the data -------------------------------------------------------------------------------------------------


def test_every_row_says_its_basis_and_an_adjusted_close_is_never_close(history):
    assert history["basis"].notna().all() and history["adj_close"].notna().all()
    only = history["basis"] == "adjusted_only"
    assert history.loc[only, "close"].isna().all()
    assert history.loc[~only, "close"].notna().all()
    assert not history.duplicated(["ticker", "date"]).any()  # one company per (ticker, date)
    assert history["adjusted_as_of"].notna().all()


def test_dead_names_trade_until_they_stop_and_are_members_of_their_dates():
    leh = fdkit.price_history("LEH", start_date="2008-01-01", end_date="2008-12-31")
    days = leh.index.get_level_values("date")
    assert days.max() < pd.Timestamp("2008-10-01") and days.max() >= pd.Timestamp("2008-09-12")
    assert "LEH" in set(fdkit.index_members("sp500", "2008-09-12").index.get_level_values("ticker"))
    wb = fdkit.price_history("WB", start_date="2008-01-01", end_date="2009-12-31")
    assert wb.index.get_level_values("date").max().year == 2008
    assert "WB" in set(fdkit.index_members("sp500", "2008-06-30").index.get_level_values("ticker"))


@needs_sources
def test_as_traded_closes_match_the_raw_files(history):
    raw = pd.read_parquet(
        SHARED / "data-real-5/prices-sp500-raw-2000-2012/ml4t_sp500_2008_2012_members_daily_raw_2000_2012.parquet",
        filters=[("symbol", "in", ["IBM", "KO", "XOM"])],
        columns=["symbol", "date", "close"],
    )
    raw["date"] = pd.to_datetime(raw["date"])
    got = history[history["ticker"].isin(["IBM", "KO", "XOM"]) & (history["price_source"] == "ml4t")]
    m = got.merge(raw, left_on=["ticker", "date"], right_on=["symbol", "date"], suffixes=("", "_raw"))
    assert len(m) > 6000
    # KO split 2:1 on 2012-08-13: its earlier raw closes are twice today's basis; IBM and XOM did not split
    factor = np.where((m["ticker"] == "KO") & (m["date"] < "2012-08-13"), 2.0, 1.0)
    assert np.allclose(m["close"] * factor, m["close_raw"], rtol=1e-6)


@needs_sources
def test_total_returns_match_yahoo_where_closes_are_as_traded(history):
    # independent: Yahoo's adjusted closes 2003-2023 of the long-history names (data-real), computed by Yahoo from
    # raw closes and dividends; the history's as-traded rows build theirs from other raw files' closes and the
    # distributions those files show
    yahoo = pd.read_csv(
        SHARED / "data-real/prices/us_equities_daily_2003_2023.csv.gz",
        parse_dates=["date"],
        usecols=["ticker", "date", "adj_close"],
    ).sort_values(["ticker", "date"])
    yahoo["r_yahoo"] = yahoo.groupby("ticker")["adj_close"].pct_change()
    h = history.sort_values(["ticker", "date"])
    h = h.assign(r=h.groupby(["ticker", "adjusted_as_of"], observed=True)["adj_close"].pct_change())
    m = h.merge(yahoo[["ticker", "date", "r_yahoo"]], on=["ticker", "date"]).dropna(subset=["r", "r_yahoo"])
    diff = (m["r"] - m["r_yahoo"]).abs()
    traded = (m["basis"] == "as_traded").to_numpy()
    assert traded.sum() > 50_000
    assert (diff[traded] <= 1e-4).mean() > 0.99  # exact to the raw closes, but ex-dates (dividend rounding)
    assert (diff[traded] <= 1e-3).mean() > 0.995
    # adjusted-only rows carry the source's own precision (Stooq: 4-5 significant digits)
    assert (diff[~traded] <= 1e-3).mean() > 0.99


@needs_sources
def test_no_splice_moves_a_price(history):
    # where the served rows pass from one source to another on one basis, the day's return is the return the raw
    # file of either source gives for that day (read here with plain pandas)
    h = history[history["ticker"] != "^GSPC"].sort_values(["ticker", "date"])
    g = h.groupby("ticker", observed=True)
    src = h["price_source"].astype(str)
    prev = g["price_source"].shift().astype(str)
    same_basis = h["adjusted_as_of"] == g["adjusted_as_of"].shift()
    h = h.assign(r=h["adj_close"] / g["adj_close"].shift() - 1, prev_day=g["date"].shift(), prev_source=prev)
    splices = h[(src != prev) & prev.ne("nan") & same_basis]
    assert len(splices) > 1000
    files = {
        "ml4t": (
            "data-real-5/prices-sp500-raw-2000-2012/ml4t_sp500_2008_2012_members_daily_raw_2000_2012.parquet",
            "adj_close",
        ),
        "stooq_2017": ("data-real-5/prices/stooq_kaggle_sp1500_daily_adj_2005_2017.parquet", "close"),
        "stooq_2025": ("data-real-5/prices/stooq_sp1500_daily_adj_2017_2025.parquet", "close"),
        "wiki": ("data-real-5/prices-sp500-pit-2013-2018/sp500_members_daily_adj_2013_2018.parquet", "close"),
        "pystock": ("data-real-2/prices/pystock_us_equities_daily_2015_2017.parquet", "close"),
    }
    wanted = sorted(set(splices["ticker"].astype(str)))
    returns = {}
    for name, (path, column) in files.items():
        d = pd.read_parquet(SHARED / path, columns=["symbol", "date", column], filters=[("symbol", "in", wanted)])
        d = d.assign(date=pd.to_datetime(d["date"])).sort_values(["symbol", "date"])
        d = d.assign(prev=d.groupby("symbol")["date"].shift(), r=d.groupby("symbol")[column].pct_change())
        returns[name] = d.set_index(["symbol", "date"])[["prev", "r"]]
    off = []
    for s in splices.itertuples(index=False):
        refs = [
            returns[n].loc[(str(s.ticker), s.date)]
            for n in (str(s.price_source), s.prev_source)
            if (str(s.ticker), s.date) in returns[n].index
        ]
        refs = [x.r for x in refs if x.prev == s.prev_day]
        if refs and min(abs(s.r - r) for r in refs) > 0.02:
            off.append((str(s.ticker), s.date.date(), round(s.r, 3), [round(r, 3) for r in refs]))
    assert len(off) <= len(splices) // 200, off[:20]  # a split or distribution on the splice day itself at most


def test_a_delisting_is_data():
    leh = fdkit.delistings("LEH")
    (day,) = leh.index.get_level_values("date")
    assert day.strftime("%Y-%m") == "2008-09"
    assert leh["delisting_kind"].astype(str).tolist() == ["bankrupt"] and not leh["data_end"].iloc[0]
    wb = fdkit.delistings("WB")
    assert wb.index.get_level_values("date")[0].year == 2008
    assert fdkit.delistings("AAPL").empty  # still trading when the sources end


def test_a_delisting_is_the_companys_end_or_the_sources_said_apart():
    """A company's end and a source's end are two kinds; reasons are sentences; the return is missing and said."""
    d = fdkit.delistings(["ABMD", "LEH", "DFS", "ISIL"], errors="ignore").reset_index()
    kinds = dict(zip(d["ticker"].astype(str), d["delisting_kind"].astype(str), strict=True))
    assert kinds["LEH"] == "bankrupt" and kinds["ABMD"] == "sources_end" and kinds["ISIL"] == "acquired"
    abmd = d.loc[d["ticker"] == "ABMD", "reason"].iloc[0]
    assert abmd.startswith("The sources end on 2017-11-10; the company traded on and left the index on 2022-12")
    every = read_dataset(PACKAGE, "delistings")
    company = every[every["delisting_kind"].astype(str) != "sources_end"]
    assert set(every["delisting_kind"].astype(str)) <= {"acquired", "bankrupt", "unknown", "sources_end"}
    # a sources_end row ends on a dump's last day (the company's own end is another kind)
    assert not every.loc[every["delisting_kind"].astype(str) == "sources_end", "data_end"].eq(False).any()
    said = every["reason"].dropna().astype(str)
    assert not said.str.contains(r"\[\s*\d+\s*\]|manual override|we apply|upstream", case=False).any()
    assert len(said) > 100 and said.str.match(r"[A-Z0-9]").all() and said.str.endswith(".").all()
    assert every["delisting_return"].isna().all() and every["delisting_return_note"].str.contains("consideration").all()
    assert len(company) > 0


def test_delistings_are_the_last_bars(history):
    d = read_dataset(PACKAGE, "delistings")
    last = history.groupby("ticker", observed=True)["date"].max()
    assert len(d) > 300
    assert (d.set_index("ticker")["date"] == last.reindex(d["ticker"].astype(str)).to_numpy()).all()
    ends = d["data_end"].to_numpy(dtype=bool)
    assert 0 < ends.sum() < len(d)  # some end where a dump ends: flagged, not passed off as delistings


@needs_sources
def test_no_split_is_guessed_across_the_2012_2015_gap(history):
    # at each company's last raw 2004-2012 bar, the raw file's close over the served close is exactly the split
    # table's splits after that day: a split nobody recorded is never made up (BKNG 2012-09-11 stays 617.76)
    ml4t = history[(history["price_source"] == "ml4t") & (history["basis"] == "as_traded")]
    last = ml4t.sort_values("date").groupby("ticker", observed=True).tail(1)
    raw = pd.read_parquet(
        SHARED / "data-real-5/prices-sp500-raw-2000-2012/ml4t_sp500_2008_2012_members_daily_raw_2000_2012.parquet",
        columns=["symbol", "date", "close"],
    )
    raw = raw.assign(symbol=raw["symbol"].str.replace(".", "-", regex=False), date=pd.to_datetime(raw["date"]))
    m = last.merge(raw, left_on=["ticker", "date"], right_on=["symbol", "date"], suffixes=("", "_raw"))
    assert len(m) > 300
    splits = read_dataset(REPO / "data", "splits")
    later = [
        splits.loc[(splits["ticker"].astype(str) == t) & (splits["date"] > d), "ratio"].prod()
        for t, d in zip(m["ticker"].astype(str), m["date"], strict=True)
    ]
    assert np.allclose(m["close_raw"] / m["close"], later, rtol=1e-5)
