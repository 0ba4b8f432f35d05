"""The reviewed-facts table: every reviewed move a row with its reason and evidence, checked as it is read, and a
reviewed fact added as one row takes effect in `fdkit lake validate`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from fdkit.lake import reviewed
from fdkit.lake.reviewed import COLUMNS, KINDS, REVIEWED_FACTS_CSV, ReviewedFactsError, replace_rows, reviewed_facts
from fdkit.lake.validate import validate

FDKIT = Path(__file__).resolve().parents[1] / "fdkit"
REFDATA = Path(__file__).resolve().parents[1] / "refdata"
#: the library and the reference-data pipeline: neither holds a reviewed fact as a literal
CODE = sorted([*FDKIT.rglob("*.py"), *REFDATA.rglob("*.py")])


def test_every_reviewed_move_is_a_row_with_its_reason_and_evidence():
    """The former code tables (validate's 63 moves, the S&P 400's 61, the S&P 500 source's 17) and the 188 moves the
    build confirmed against Stooq: one table, every row saying what, why and where it is seen."""
    facts = reviewed_facts()
    assert list(facts.columns) == list(COLUMNS) and set(facts["kind"]) <= set(KINDS)
    moves = facts[facts["kind"] == "price_move"]
    assert len(moves) >= 329
    by = moves["reviewed_by"].value_counts()
    assert by["fdkit maintainers"] >= 141 and by["refdata.confirmed_moves"] >= 188
    for column in ("reason", "evidence", "reviewed_on", "value"):
        assert (moves[column].str.strip() != "").all(), column
    assert moves["value"].map(lambda v: re.fullmatch(r"[+-]\d\.\d{2,4}", v) is not None).all()
    # the value is the move the reason states (to the percent)
    stated = moves["reason"].str.extract(r"^([+-]\d+)%")[0].astype(float) / 100
    assert ((stated - moves["value"].astype(float)).abs() <= 0.006).all()


def test_no_module_keeps_a_table_of_reviewed_moves_in_code():
    """(ticker, day, reason) literals are the table's rows now, not Python tuples."""
    literal = re.compile(r'\(\s*"[A-Z][A-Z0-9._-]*",\s*"\d{4}-\d{2}-\d{2}",\s*"[+-]?\d+%')
    offenders = [str(p.relative_to(FDKIT.parent)) for p in CODE if literal.search(p.read_text())]
    assert offenders == []
    assert not (FDKIT / "lake" / "reviewed_moves.py").exists() and not (FDKIT / "lake" / "confirmed_moves.csv").exists()


def _table(tmp_path: Path, **change: str) -> Path:
    path = tmp_path / "reviewed_facts.csv"
    df = pd.read_csv(REVIEWED_FACTS_CSV, dtype=str, keep_default_na=False)
    for column, value in change.items():
        df.loc[0, column] = value
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reason": ""}, "line 2 .* reason is empty"),
        ({"evidence": " "}, "line 2 .* evidence is empty"),
        ({"kind": "price_mvoe"}, "unknown kind 'price_mvoe'"),
        ({"start_date": "2015-13-40"}, "start_date '2015-13-40' is not a YYYY-MM-DD date"),
        (
            {"kind": "price_move", "ticker": "ABMD", "start_date": "2015-10-29", "end_date": ""},
            "price_move ABMD 2015-10-29 is given 2 times",
        ),
    ],
)
def test_a_row_the_table_cannot_use_is_refused_naming_it(tmp_path, change, message):
    with pytest.raises(ReviewedFactsError, match=message):
        reviewed_facts(path=_table(tmp_path, **change))
    with pytest.raises(ReviewedFactsError, match="no kind 'share_class'"):
        reviewed_facts("share_class")


def _spiked_lake(tmp_path: Path) -> Path:
    """The bundled lake's prices with one unexplained +40% day (AAPL 2016-06-01), the rest linked to it."""
    lake = tmp_path / "lake"
    lake.mkdir()
    for name in ("prices", "dividends", "earnings", "splits"):
        shutil.copytree(Path(FDKIT).parent / "data" / name, lake / name)
    from fdkit.lake.io import read_dataset, write_dataset

    p = read_dataset(lake, "prices")
    spike = (p["ticker"].astype(str) == "AAPL") & (p["time"].dt.strftime("%Y-%m-%d") == "2016-06-01")
    assert spike.sum() == 1
    p.loc[spike, ["open", "high", "low", "close"]] *= 1.4
    shutil.rmtree(lake / "prices")
    write_dataset(lake, "prices", p)
    return lake


def test_a_reviewed_move_added_as_one_row_takes_effect_in_validate(tmp_path, monkeypatch):
    lake = _spiked_lake(tmp_path)
    (before,) = validate(lake, only=["daily_moves_explained"])
    flagged = set(
        zip(before.examples["ticker"].astype(str), before.examples["day"].dt.strftime("%Y-%m-%d"), strict=True)
    )
    assert ("AAPL", "2016-06-01") in flagged
    table = tmp_path / "reviewed_facts.csv"
    shutil.copy(REVIEWED_FACTS_CSV, table)
    row = pd.DataFrame(
        [
            {
                "kind": "price_move",
                "ticker": "AAPL",
                "start_date": "2016-06-01",
                "value": "+0.40",
                "reason": "+40% in this test's lake",
                "evidence": "tests/test_reviewed_facts.py",
                "reviewed_on": "2026-12-02",
            }
        ]
    )
    replace_rows(row, "a test", path=table)
    monkeypatch.setattr(reviewed, "REVIEWED_FACTS_CSV", table)
    (after,) = validate(lake, only=["daily_moves_explained"])
    days = set(zip(after.examples["ticker"].astype(str), after.examples["day"].dt.strftime("%Y-%m-%d"), strict=True))
    assert ("AAPL", "2016-06-01") not in days and after.violations == before.violations - 1


def test_a_stage_rewrites_only_its_own_rows_and_a_fact_found_again_keeps_its_day(tmp_path):
    table = tmp_path / "reviewed_facts.csv"
    shutil.copy(REVIEWED_FACTS_CSV, table)
    mine = reviewed_facts(path=table)
    mine = mine[mine["reviewed_by"] == "refdata.confirmed_moves"].drop(columns="reviewed_by")
    kept_day = mine["reviewed_on"].iloc[0]
    again = mine.assign(reviewed_on="2099-01-01").iloc[:-1]  # one move no longer found
    n = replace_rows(again, "refdata.confirmed_moves", path=table)
    out = reviewed_facts(path=table)
    assert n == len(reviewed_facts()) - 1 and out["reviewed_on"].eq(kept_day).sum() >= len(again)
    assert (
        out[out["reviewed_by"] == "fdkit maintainers"]
        .reset_index(drop=True)
        .equals(reviewed_facts().query("reviewed_by == 'fdkit maintainers'").reset_index(drop=True))
    )


def test_every_reviewed_rename_is_a_row_and_none_is_left_in_code():
    """The build's former REVIEWED_RENAMES: 16 rows of kind rename, each naming the change file's two lines."""
    renames = reviewed_facts("rename")
    assert len(renames) >= 16
    assert renames["value"].str.fullmatch(r"[A-Z][A-Z0-9-]*").all() and renames["start_date"].ne("").all()
    assert renames["evidence"].str.contains(r"index-membership/sp\d00_changes\.csv: line \d+ removes").all()
    literal = re.compile(r'\(\s*"\d{4}-\d{2}-\d{2}",\s*"[A-Z][A-Z0-9.-]*",\s*"[A-Z][A-Z0-9.-]*"\s*\)\s*:')
    offenders = [str(p.relative_to(FDKIT.parent)) for p in CODE if literal.search(p.read_text())]
    assert offenders == []


def test_a_reviewed_rename_added_as_one_row_joins_the_two_symbols_spells(tmp_path):
    from refdata.identity import company_tickers, renames_of

    spells = pd.DataFrame(
        {
            "ticker": ["OLDX", "NEWX"],
            "name": ["Old Name Corp", "New Name Corp"],
            "cik": [None, None],
            "start_date": pd.to_datetime(["2010-01-04", "2020-01-02"]),
            "end_date": pd.to_datetime(["2020-01-01", None]),
        }
    )
    events = pd.DataFrame(columns=["event_date", "event_type", "old_symbol", "new_symbol"])
    assert company_tickers(spells, renames_of(events, [])).tolist() == ["OLDX", "NEWX"]
    table = pd.read_csv(REVIEWED_FACTS_CSV, dtype=str, keep_default_na=False)
    row = {
        "kind": "rename",
        "ticker": "OLDX",
        "start_date": "2020-01-02",
        "end_date": "",
        "cik": "",
        "value": "NEWX",
        "reason": "Old Name Corp renamed New Name Corp (2020)",
        "evidence": "a test's own spells",
        "reviewed_by": "tests",
        "reviewed_on": "2026-12-02",
    }
    path = tmp_path / "reviewed_facts.csv"
    pd.concat([table, pd.DataFrame([row])]).to_csv(path, index=False)
    assert company_tickers(spells, renames_of(events, [], reviewed=path)).tolist() == ["NEWX", "NEWX"]


def test_symbols_reviewed_as_one_company_or_two_are_rows():
    """The build's former ONE_COMPANY and TWO_COMPANIES sets: rows naming the membership files' lines."""
    from refdata.identity import reviewed_symbols

    assert reviewed_symbols("one_company") >= {
        "PCG",
        "OI",
        "CLF",
        "IRT",
        "ATI",
        "MD",
        "RH",
        "MANT",
        "TMST",
        "RCII",
        "CBB",
    }
    assert reviewed_symbols("two_companies") == {"LSI"}
    rows = reviewed_facts()
    rows = rows[rows["kind"].isin(["one_company", "two_companies"])]
    assert rows["evidence"].str.contains(r"_(?:changes|seed|current)\.csv line \d+").all()
    assert "frozenset({" not in (REFDATA / "identity.py").read_text()


def test_spells_reviewed_as_another_companys_are_rows():
    """The build's former ANOTHER_COMPANY dict: rows naming the membership files' lines, read by the build."""
    from refdata.index_membership import another_company

    assert another_company() == {
        ("HCC", "2011-11-20"): "HCC Insurance Holdings",
        ("JEF", "2011-11-20"): "Jefferies Group",
        ("VAL", "2011-11-20"): "Valspar",
    }
    rows = reviewed_facts("another_company")
    assert rows["evidence"].str.contains(r"sp400_seed\.csv line \d+ \(seed roster of 2011-11-20\)").all()
    assert "ANOTHER_COMPANY" not in (REFDATA / "index_membership.py").read_text()


def test_a_handover_and_a_class_symbol_move_are_rows():
    """The build's former HANDOVERS and CLASS_SYMBOL_MOVES dicts: rows naming the membership files' lines."""
    from refdata.index_membership import class_symbol_moves, handovers

    assert handovers() == {("ENR", "2011-11-20"): ("2015-07-01", "EPC")}
    assert class_symbol_moves() == {"UA": ("2016-12-07", "UAA")}
    rows = reviewed_facts()
    rows = rows[rows["kind"].isin(["handover", "class_symbol_move"])]
    assert len(rows) == 2 and rows["evidence"].str.contains(r"_(?:changes|seed|current)\.csv line \d+").all()
    source = (REFDATA / "index_membership.py").read_text()
    assert "HANDOVERS" not in source and "CLASS_SYMBOL_MOVES" not in source


def test_a_company_renamed_is_a_row_validate_reads(tmp_path, monkeypatch):
    """validate's former RENAMED dict: rows naming the membership files' lines; without Energizer's, its CIK's
    names disagree (the S&P 400 ENR spell of 2011-2015 is Edgewell's, CIK 0001096752)."""
    from fdkit.lake.validate import renamed_companies

    assert renamed_companies() >= {
        ("0000096223", "Jefferies Financial Group"),
        ("0001021860", "Nov"),
        ("0001021860", "NOV Inc."),
        ("0001096752", "Energizer"),
    }
    rows = reviewed_facts("renamed_company")
    assert rows["evidence"].str.contains(r"_(?:changes|seed|current)\.csv line \d+").all()
    assert "RENAMED" not in (FDKIT / "lake" / "validate.py").read_text()
    data = FDKIT.parent / "data"
    assert validate(data, only=["names_match_their_cik"])[0].violations == 0
    table = tmp_path / "reviewed_facts.csv"
    df = pd.read_csv(REVIEWED_FACTS_CSV, dtype=str, keep_default_na=False)
    df[~((df["kind"] == "renamed_company") & (df["ticker"] == "ENR"))].to_csv(table, index=False)
    monkeypatch.setattr(reviewed, "REVIEWED_FACTS_CSV", table)
    (without,) = validate(data, only=["names_match_their_cik"])
    assert without.violations == 1 and without.examples["ticker"].astype(str).tolist() == ["ENR"]


def test_a_share_move_reviewed_is_a_row_validate_reads():
    """validate's former DOCUMENTED_SHARE_MOVES dict: a row whose evidence names the lake's two quarters."""
    from fdkit.lake.validate import documented_share_moves

    assert ("CB", "2016-03-31") in documented_share_moves()
    rows = reviewed_facts("share_move")
    stated = rows["reason"].str.extract(r"^([+-]\d+)%")[0].astype(float) / 100
    assert ((stated - rows["value"].astype(float)).abs() <= 0.006).all()
    assert rows["evidence"].str.contains("income_statements").all()
    assert "DOCUMENTED_SHARE_MOVES" not in (FDKIT / "lake" / "validate.py").read_text()


def test_listing_owners_are_rows_naming_the_symbols_file_lines():
    """pystock_identity's former LISTING_OWNERS dict: CB, UA and ENR's listings, each the earlier company's to a day."""
    from refdata.pystock_identity import listing_owners

    owners = {k: (t, f"{d:%Y-%m-%d}") for k, (t, d) in listing_owners().items()}
    assert owners == {
        ("CB", "2015-03-23"): ("CB_2016", "2016-01-13"),
        ("ENR", "2015-03-23"): ("EPC", "2015-06-30"),
        ("UA", "2015-03-23"): ("UAA", "2016-12-06"),
    }
    rows = reviewed_facts("listing_owner")
    assert rows["evidence"].str.contains(r"pystock_symbols_2015_2017\.csv\.gz \(decompressed\): line \d+").all()
    assert "LISTING_OWNERS" not in (REFDATA / "pystock_identity.py").read_text()


def test_listings_reviewed_as_todays_member_are_rows():
    """pystock_identity's former SAME_COMPANY set: Wabtec and Supermicro, each naming the two files' lines."""
    rows = reviewed_facts("listing_same_company")
    assert set(rows["ticker"]) == {"WAB", "SMCI"}
    assert rows["evidence"].str.contains(r"sp500_current\.csv line \d+").all()
    assert "SAME_COMPANY" not in (REFDATA / "pystock_identity.py").read_text()


def test_bars_reviewed_as_another_securitys_are_rows():
    """refdata.history's former NOT_THE_COMPANY dict: ml4t's BSC, EDS, CFC+A and pystock's MS, NEE, TCO."""
    from refdata.history import SOURCES_OF, not_the_company

    left_out = not_the_company()
    assert set(left_out) == {
        ("ml4t", "BSC"),
        ("ml4t", "EDS"),
        ("ml4t", "CFC+A"),
        ("pystock", "MS"),
        ("pystock", "NEE"),
        ("pystock", "TCO"),
    }
    assert left_out[("ml4t", "BSC")] == pd.Timestamp("2008-05-31")
    assert {source for source, _ in left_out} <= set(SOURCES_OF)
    rows = reviewed_facts("not_the_company")
    assert rows["evidence"].str.contains(r"\.parquet: ").all()
    assert "NOT_THE_COMPANY =" not in (REFDATA / "history.py").read_text()


#: the rows of each kind the table holds (price_move: at least, the build's cross-check adds rows)
ROWS_OF = {
    "price_move": 329,
    "rename": 16,
    "one_company": 11,
    "two_companies": 1,
    "another_company": 3,
    "handover": 1,
    "class_symbol_move": 1,
    "renamed_company": 4,
    "share_move": 1,
    "listing_owner": 3,
    "listing_same_company": 2,
    "not_the_company": 6,
    "prices_left_out": 20,
    "no_as_traded": 5,
    "spin_off_in_closes": 1,
    "splits_known": 6,
    "source_alias": 21,
    "listing_alias": 3,
}


def test_the_table_holds_every_kind_and_its_rows():
    counts = reviewed_facts()["kind"].value_counts().to_dict()
    assert set(counts) == set(KINDS) == set(ROWS_OF)
    assert counts.pop("price_move") >= ROWS_OF["price_move"]
    assert counts == {k: n for k, n in ROWS_OF.items() if k != "price_move"}


def _with(tmp_path: Path, kind: str, **change: str) -> Path:
    """The table with the first row of ``kind`` changed."""
    path = tmp_path / "reviewed_facts.csv"
    df = pd.read_csv(REVIEWED_FACTS_CSV, dtype=str, keep_default_na=False)
    first = df.index[df["kind"] == kind][0]
    for column, value in change.items():
        df.loc[first, column] = value
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("prices_left_out", {"value": "stooq"}, r"prices_left_out APOL 2015-03-20\): value 'stooq' is not the source"),
        ("prices_left_out", {"reason": "moves beyond 25%"}, r"reason 'moves beyond 25%' is not 'Left out: ' and why"),
        ("no_as_traded", {"value": "as_traded"}, r"no_as_traded GLD 2021-01-04\): value 'as_traded' is not the basis"),
        ("no_as_traded", {"reason": "adjusted closes"}, "reason 'adjusted closes' is not 'No as-traded source: '"),
        ("spin_off_in_closes", {"value": ""}, r"spin_off_in_closes IBM 2021-11-04\): value '' is not the company"),
        ("spin_off_in_closes", {"cik": "51143"}, "cik '51143' is not a 10-digit CIK"),
        ("splits_known", {"value": "aapl"}, r"splits_known AAPL 1998-01-02\): value 'aapl' is not a symbol of LEAN's"),
        (
            "source_alias",
            {"value": "Tapestry"},
            r"source_alias ANTM 2004-01-01\): value 'Tapestry' is not a lake ticker",
        ),
        ("listing_alias", {"value": ""}, r"listing_alias ACE 2015-03-23\): value '' is not a lake ticker"),
    ],
)
def test_a_row_not_of_its_kinds_form_is_refused_naming_it(tmp_path, kind, change, message):
    with pytest.raises(ReviewedFactsError, match=message):
        reviewed_facts(path=_with(tmp_path, kind, **change))


def test_price_series_left_out_are_rows():
    """refdata.prices' former EXCLUDED_PRICES dict: pystock's MS, NEE, TCO (another security's bars) and 17
    series whose moves no other file confirms; the build, SOURCES.md and the history package read the rows."""
    from refdata.prices import prices_left_out

    left_out = prices_left_out()
    assert {"MS", "NEE", "TCO", "APOL", "HCC_2016", "SUNE", "WOOF"} <= set(left_out) and len(left_out) == 20
    assert left_out["MS"].startswith("the source mixes in another security's bars under MS")
    rows = reviewed_facts("prices_left_out")
    assert rows["evidence"].str.startswith("data-real-2/prices/pystock_us_equities_daily_2015_2017.parquet: ").all()
    for module in ("prices.py", "sources_doc.py", "history_package.py"):
        assert "EXCLUDED_PRICES" not in (REFDATA / module).read_text(), module


def test_funds_without_an_as_traded_source_are_rows():
    """refdata.sp500_bars' former NO_AS_TRADED dict: SPY and QQQ after 2021-03-31, TLT, GLD and UUP throughout;
    SOURCES.md lists them in the ETF file's order, as the dict did."""
    from refdata.sp500_bars import as_traded_by_year, no_as_traded

    assert list(no_as_traded()) == ["SPY", "QQQ", "TLT", "GLD", "UUP"]
    assert no_as_traded()["TLT"] == "only the 2021-2026 ETF file's adjusted closes"
    px = pd.DataFrame({"ticker": ["A"], "time": pd.to_datetime(["2024-01-02"], utc=True), "basis": "as_traded"})
    assert "* QQQ: as traded to 2021-03-31 (LEAN's raw bars); no as-traded source after" in as_traded_by_year(px)
    rows = reviewed_facts("no_as_traded")
    assert rows["evidence"].str.contains(r"etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX\.csv\.gz: ").all()
    assert "NO_AS_TRADED" not in (REFDATA / "sp500_bars.py").read_text()


def test_a_spin_off_in_the_closes_is_a_row():
    """refdata.common's former SPIN_OFFS_IN_CLOSES dict: IBM's Kyndryl spin-off of 2021-11-04, read by the prices
    stage (the factor it takes out) and the dividends stage (the step that is in kind)."""
    from refdata.common import spin_offs_in_closes

    assert spin_offs_in_closes() == {"IBM": (pd.Timestamp("2021-11-04"), "Kyndryl Holdings")}
    rows = reviewed_facts("spin_off_in_closes")
    assert rows["evidence"].str.contains("us_equities_daily_2003_2023.csv.gz: IBM closes").all()
    for module in ("common.py", "prices.py", "distributions.py"):
        assert "SPIN_OFFS_IN_CLOSES" not in (REFDATA / module).read_text(), module


def test_tickers_whose_splits_are_all_known_are_rows():
    """refdata.fsds' former SPLITS_KNOWN_SINCE_2009 set: the stocks of LEAN's factor files (META's as FB)."""
    from refdata.fsds import splits_known

    assert splits_known() == {"AAPL", "BAC", "GOOG", "GOOGL", "IBM", "META"}
    rows = reviewed_facts("splits_known")
    assert rows["evidence"].str.contains(r"lean_factor_files\.csv: lines \d+-\d+").all()
    assert "SPLITS_KNOWN_SINCE_2009" not in (REFDATA / "fsds.py").read_text()


def test_symbols_spelled_before_a_rename_are_rows():
    """refdata.history's former SOURCE_ALIASES dict (21 dump symbols, read by the history and the pystock
    listings) and pystock_identity's former extra ALIASES (KORS, WYN, ACE, read by the listings alone)."""
    from refdata.history import source_aliases
    from refdata.pystock_identity import listing_aliases

    dumps = source_aliases()
    assert len(dumps) == 21 and dumps["YHOO"] == "AABA" and dumps["LEHMQ"] == "LEH" and "ACE" not in dumps
    assert listing_aliases() == {**dumps, "KORS": "CPRI", "WYN": "WYND", "ACE": "CB"}
    rows = reviewed_facts("source_alias")
    assert rows["evidence"].str.contains(r"\.parquet: [\d,]+ [A-Z]+ bars, ").all()
    rows = reviewed_facts("listing_alias")
    assert rows["evidence"].str.contains(r"pystock_symbols_2015_2017\.csv\.gz \(decompressed\): line \d+").all()
    assert "SOURCE_ALIASES" not in (REFDATA / "history.py").read_text()
    assert "ALIASES" not in (REFDATA / "pystock_identity.py").read_text()
