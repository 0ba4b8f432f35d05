"""Point-in-time index membership (refdata.index_membership): the stage on a fixture, the committed dataset,
and the committed dataset checked against the raw source files by an independent replay."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fdkit.lake.io import default_data_dir, read_dataset
from refdata import index_membership, pipeline
from refdata.driver import run_stage
from refdata.index_membership import another_company

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "build" / "data-real"
RAW = ROOT.parent / "shared" / "data-real-3" / "index-membership"
DATA = default_data_dir()
needs_raw = pytest.mark.skipif(
    not (RAW / "sp500_changes.csv").exists(), reason="../shared/data-real-3 is not beside this clone"
)

COMPANIES = pd.DataFrame(
    {
        "ticker": ["AAPL", "XOM"],
        "name": ["Apple Inc.", "ExxonMobil"],
        "cik": ["0000320193", "0002115436"],
    }
)


def members(spells: pd.DataFrame, index: str, day: str) -> set[str]:
    d = pd.Timestamp(day)
    on = (
        (spells["index"] == index)
        & (spells["start_date"] <= d)
        & (spells["end_date"].isna() | (spells["end_date"] >= d))
    )
    return set(spells.loc[on, "ticker"].astype(str))


def assert_no_overlaps(spells: pd.DataFrame) -> None:
    s = spells.sort_values(["index", "ticker", "start_date"])
    assert (s["end_date"].isna() | (s["end_date"] >= s["start_date"])).all()
    nxt = s.groupby(["index", "ticker"], observed=True)["start_date"].shift(-1)
    following = nxt.notna()
    assert s.loc[following, "end_date"].notna().all()  # only the last spell of a ticker may still run
    assert (s.loc[following, "end_date"] < nxt[following]).all()


# ------------------------------------------------------------------------------------------------------------------
# the stage on the fixture
# ------------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixture_spells() -> pd.DataFrame:
    roots = pipeline.source_roots(FIXTURE)
    return run_stage(index_membership.INDEX_MEMBERSHIP, roots, {"companies": COMPANIES})["index_membership"]


def _spell(spells: pd.DataFrame, index: str, ticker: str) -> list[dict]:
    rows = spells[(spells["index"] == index) & (spells["ticker"] == ticker)]

    def day(t: pd.Timestamp) -> str | None:
        return None if pd.isna(t) else t.strftime("%Y-%m-%d")

    def text(v: object) -> object:
        return None if pd.isna(v) else v

    return [
        {"start": day(r.start_date), "end": day(r.end_date), "name": text(r.name), "cik": text(r.cik)}
        for r in rows.itertuples(index=False)
    ]


def test_spells_replay_the_seed_and_the_events(fixture_spells):
    s = fixture_spells
    assert s.columns.tolist() == ["index", "ticker", "name", "cik", "start_date", "end_date", "current_ticker"]
    # still a member since before the seed: the start today's list gives, else the seed date (start unknown)
    assert _spell(s, "sp500", "AAPL") == [
        {"start": "1982-11-30", "end": None, "name": "Apple Inc.", "cik": "0000320193"}
    ]
    assert _spell(s, "sp500", "BRK-B")[0]["start"] == "2004-12-30"  # "added 2010-02-16" contradicts the seed
    # a removal on D: the last day in the index is D - 1; a rename ends one ticker's spell and starts another's
    assert _spell(s, "sp500", "LEHMQ") == [{"start": "2004-12-30", "end": "2005-01-02", "name": None, "cik": None}]
    assert _spell(s, "sp500", "LEH") == [
        {"start": "2005-01-03", "end": "2008-09-14", "name": "Lehman Brothers Holdings", "cik": None}
    ]
    # removed and added on one day: two spells that meet, each with its own name
    assert [(x["start"], x["end"], x["name"]) for x in _spell(s, "sp500", "FOXA")] == [
        ("2004-12-30", "2019-03-18", "21st Century Fox"),
        ("2019-03-19", None, "Fox Corporation"),
    ]
    assert _spell(s, "sp500", "TSLA")[0]["start"] == "2020-12-21"
    assert _spell(s, "sp400", "MNST") == [
        {"start": "2012-01-05", "end": None, "name": "Monster Beverage", "cik": "0000865752"}
    ]
    assert_no_overlaps(s)


def test_a_ticker_alone_never_gives_an_ended_spell_a_cik(fixture_spells):
    s = fixture_spells
    # G was Gillette (S&P 500 until 2005); today G is Genpact (S&P 400): the CIK is Genpact's only
    assert _spell(s, "sp500", "G") == [{"start": "2004-12-30", "end": "2005-10-02", "name": "Gillette", "cik": None}]
    assert _spell(s, "sp400", "G")[0]["cik"] == "0001398659"
    assert _spell(s, "sp500", "FOXA")[0]["cik"] is None  # 21st Century Fox is not Fox Corporation
    # a running spell: the lake's company facts first (one CIK per ticker across the lake), else today's list
    assert _spell(s, "sp500", "XOM")[0]["cik"] == "0002115436"
    assert _spell(s, "sp500", "TSLA")[0]["cik"] == "0001318605"


def test_members_on_a_day(fixture_spells):
    s = fixture_spells
    assert members(s, "sp500", "2008-09-14") == {"AAPL", "BRK-B", "FOXA", "LEH", "XOM"}
    assert members(s, "sp500", "2008-09-15") == {"AAPL", "BRK-B", "FOXA", "XOM"}  # removed that day
    assert "TSLA" not in members(s, "sp500", "2020-12-18") and "TSLA" in members(s, "sp500", "2020-12-21")
    assert members(s, "sp600", "2021-04-08") == {"MOG-A"}  # class shares spelled with a dash, as in the lake


def test_the_stage_writes_the_schema(fixture_spells, tmp_path):
    written = pipeline.write_lake(tmp_path, [index_membership.INDEX_MEMBERSHIP], {"index_membership": fixture_spells})[
        "index_membership"
    ]
    dtypes = {c: str(t) for c, t in written.dtypes.items()}
    assert dtypes == {
        "index": "category",
        "ticker": "string",
        "name": "string",
        "cik": "string",
        "start_date": "datetime64[ns]",
        "end_date": "datetime64[ns]",
        "current_ticker": "string",
    }
    assert sorted(written["index"].cat.categories) == ["sp400", "sp500", "sp600"]


# ------------------------------------------------------------------------------------------------------------------
# the committed dataset
# ------------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lake() -> pd.DataFrame:
    return read_dataset(DATA, "index_membership")


def test_the_lake_holds_known_members_on_known_days(lake):
    assert {"AAPL", "MSFT", "XOM", "BRK-B"} <= members(lake, "sp500", "2016-06-30")
    assert "TSLA" not in members(lake, "sp500", "2020-12-18")  # added 2020-12-21
    assert "TSLA" in members(lake, "sp500", "2020-12-21")
    assert "LEH" in members(lake, "sp500", "2008-09-12") and "LEH" not in members(lake, "sp500", "2008-09-15")
    assert len(members(lake, "sp500", "2016-06-30")) == 505
    assert len(members(lake, "sp500", "2008-09-15")) == 497
    # 400 in the S&P 400's list, of which CNC, FL, JBHT and SIG were already in the S&P 500 (the S&P 400 list dates
    # their moves later): a company is in one index at a time
    assert len(members(lake, "sp400", "2016-06-30")) == 396
    assert not members(lake, "sp400", "2016-06-30") & members(lake, "sp500", "2016-06-30")
    assert len(members(lake, "sp600", "2024-06-28")) == pytest.approx(600, abs=5)


def test_the_lake_spells_do_not_overlap(lake):
    assert_no_overlaps(lake)
    assert not lake["ticker"].str.contains(".", regex=False).any()
    running = lake[lake["end_date"].isna()]
    assert running["cik"].notna().all() and running["cik"].str.fullmatch(r"\d{10}").all()
    assert running.groupby("index", observed=True).size().to_dict() == {"sp400": 400, "sp500": 503, "sp600": 602}


# ------------------------------------------------------------------------------------------------------------------
# the committed dataset against the raw files: an independent replay
# ------------------------------------------------------------------------------------------------------------------
def _replay(index: str, day: str) -> set[str]:
    """Members on ``day`` as the source's README defines them: the seed, then every event dated <= day, in order."""
    seed = pd.read_csv(RAW / f"{index}_seed.csv", dtype=str)
    changes = pd.read_csv(RAW / f"{index}_changes.csv", dtype=str, keep_default_na=False)
    on = set(seed["ticker"]) if seed["effective_date"].iloc[0] <= day else set()
    for date, action, ticker in zip(changes["date"], changes["action"], changes["ticker"], strict=True):
        if date <= day:
            on = on | {ticker} if action == "added" else on - {ticker}
    return {t.replace(".", "-") for t in on}


@needs_raw
@pytest.mark.parametrize(
    ("index", "day"),
    [
        ("sp500", "2004-12-30"),
        ("sp500", "2008-09-15"),
        ("sp500", "2016-06-30"),
        ("sp500", "2019-03-19"),
        ("sp500", "2026-07-13"),
        ("sp400", "2011-11-20"),
        ("sp400", "2018-12-31"),
        ("sp600", "2023-03-31"),
    ],
)
def test_the_lake_matches_a_replay_of_the_raw_files(lake, index, day):
    """The replay, less what a larger index holds that day: the S&P 500 list wins over the S&P 400 and 600 lists."""
    larger = {"sp500": [], "sp400": ["sp500"], "sp600": ["sp500", "sp400"]}[index]
    held = set().union(*(_replay(i, day) for i in larger if i != "sp400" or day >= "2011-11-20"))
    another = {t for t, start in another_company() if start <= day}  # Jefferies Group: not Leucadia
    assert members(lake, index, day) == _replay(index, day) - (held - another)


@needs_raw
def test_the_sp500_has_about_500_members(lake):
    # 505 tickers on 2016-06-30 (dual classes: GOOG/GOOGL, FOX/FOXA, NWS/NWSA, DISCA/DISCK, UA/UAA); 497 on
    # 2008-09-15 where the index had 500 companies: the upstream list behind the seed misses a few (SOURCES.md)
    assert abs(len(_replay("sp500", "2016-06-30")) - 500) <= 5
    assert abs(len(_replay("sp500", "2008-09-15")) - 500) <= 5
    current = pd.read_csv(RAW / "sp500_current.csv", dtype=str)
    assert members(lake, "sp500", "2026-07-13") == set(current["ticker"].str.replace(".", "-", regex=False))


def test_current_tickers_follow_ticker_changes_only(fixture_spells):
    s = fixture_spells[fixture_spells["index"] == "sp500"].set_index("ticker")
    assert s.loc["LEHMQ", "current_ticker"] == "LEH"  # renamed the day after its spell ended
    # a merger's successor (PG) is another company, and G is Genpact's today: Gillette is served as G_2005
    assert s.loc["G", "current_ticker"] == "G_2005"
    assert s.loc["TSLA", "current_ticker"] == "TSLQ"  # a running spell follows a later change
    assert s.loc["AAPL", "current_ticker"] == "AAPL"


def test_the_lake_maps_renamed_members_to_their_symbol_today():
    m = read_dataset(default_data_dir(), "index_membership").set_index(["index", "ticker", "start_date"]).sort_index()
    fb = m.loc[("sp500", "FB")]
    assert (fb["current_ticker"] == "META").all()
    antm = m.loc[("sp500", "ANTM")]
    assert (antm["current_ticker"] == "ELV").all()  # Anthem's spell ended the day before ANTM became ELV


def test_companies_that_moved_between_lists_or_were_renamed_are_one_company(lake):
    """One company, one symbol: a company that left the S&P 400 for the S&P 600 years before that list's seed roster
    (2021) is one company, reviewed (ManTech, TimkenSteel, Rent-A-Center); renames without a recorded reason are
    reviewed (DeVry -> Adtalem, Rent-A-Center -> Upbound, TimkenSteel -> Metallus); Mednax (Pediatrix) and
    Restoration Hardware (RH) kept their symbols under new names."""
    now = {
        (i, t): c
        for i, t, c in zip(
            lake["index"].astype(str), lake["ticker"].astype(str), lake["current_ticker"].astype(str), strict=True
        )
    }
    assert now[("sp400", "MANT")] == now[("sp600", "MANT")] == "MANT"
    assert now[("sp400", "TMST")] == now[("sp600", "TMST")] == now[("sp600", "MTUS")] == "MTUS"
    assert now[("sp400", "RCII")] == now[("sp600", "RCII")] == now[("sp600", "UPBD")] == "UPBD"
    assert now[("sp400", "DV")] == "ATGE" and now[("sp600", "DV")] == "DV"  # DoubleVerify holds DV since 2023
    assert now[("sp400", "MD")] == now[("sp600", "MD")] == "MD"
    assert set(lake.loc[lake["ticker"].astype(str) == "RH", "current_ticker"].astype(str)) == {"RH"}
    assert not lake["current_ticker"].astype(str).str.fullmatch(r"(MANT|TMST|RCII|DV|MD|RH)_\d{4}").any()


def test_a_symbol_idle_for_years_between_two_companies_stays_two(lake):
    """Burlington Resources (S&P 500 to 2006) is not Broadridge; Motorola Mobility is not Marcus & Millichap."""
    spells = lake.assign(ticker=lake["ticker"].astype(str), current=lake["current_ticker"].astype(str))
    for symbol, year in (("BR", 2006), ("MMI", 2012)):
        ended = spells[(spells["ticker"] == symbol) & (spells["end_date"].dt.year == year)]
        assert len(ended) and (ended["current"] == f"{symbol}_{year}").all(), ended


def test_symbols_that_passed_to_another_company_serve_each_company_apart(lake):
    """Valspar (VAL to 2017) is not Valaris, HCC Insurance (to 2015) not Warrior Met Coal; Energizer Holdings until
    its 2015 split is Edgewell Personal Care (EPC), the spun-off Energizer holds ENR from 2015-07-01; renames the
    lists show without a reason reach today's symbols."""
    spells = lake.assign(ticker=lake["ticker"].astype(str), current=lake["current_ticker"].astype(str))

    def served(index: str, symbol: str, day: str) -> set[str]:
        running = spells["end_date"].isna() | (spells["end_date"] >= day)
        on = spells[
            (spells["index"].astype(str) == index)
            & (spells["ticker"] == symbol)
            & (spells["start_date"] <= day)
            & running
        ]
        return set(on["current"])

    assert served("sp400", "VAL", "2016-06-30") == {"VAL_2017"}
    assert served("sp400", "HCC", "2014-06-30") == {"HCC_2016"}
    assert served("sp400", "ENR", "2014-06-30") == {"EPC"} and served("sp400", "ENR", "2016-06-30") == {"ENR"}
    for old, new, day in [
        ("HLS", "EHC", "2016-12-30"),
        ("OZRK", "OZK", "2016-06-30"),
        ("POL", "AVNT", "2016-06-30"),
        ("WTR", "WTRG", "2016-06-30"),
        ("ACXM", "RAMP", "2016-06-30"),
        ("NCR", "VYX", "2016-06-30"),
        ("RE", "EG", "2016-06-30"),  # a reviewed day wins over the symbol events file's later one
    ]:
        assert served("sp400", old, day) == {new}, old


def test_a_company_that_left_never_carries_the_cik_of_its_symbols_holder_today():
    """The SEC ticker file names today's holders: Rock-Tenn's RKT is Rocket Companies' there, HCC Warrior Met Coal's."""
    inc = read_dataset(DATA, "income_statements")
    tickers = inc["ticker"].astype(str)
    ciks = {t: set(g.dropna().astype(str)) for t, g in inc["cik"].groupby(tickers)}
    assert "0001805284" not in ciks.get("RKT", set())  # Rocket Companies
    assert "0001691303" not in ciks.get("HCC_2016", set()) and "HCC" not in ciks  # Warrior Met Coal
    assert ciks["CLF"] == {"0000764065"} and ciks["XOM"] == {"0000034088"}  # still in an index: today's holder


def test_a_spin_off_the_crawl_carried_as_a_split_is_a_distribution():
    """Graham Holdings' Cable One spin-off (2015-07-01) is no 5-for-3 split: as traded 1,075.05 -> 693.63."""
    splits = read_dataset(DATA, "splits")
    assert not ((splits["ticker"].astype(str) == "GHC") & (splits["date"] == "2015-07-01")).any()
    div = read_dataset(DATA, "dividends")
    ghc = div[(div["ticker"].astype(str) == "GHC") & (div["date"] == "2015-07-01")]
    assert ghc["kind"].astype(str).tolist() == ["special_or_in_kind"] and 400 < float(ghc["dividend"].iloc[0]) < 450
