"""Accession numbers in the lake, checked against the raw SEC sources read here with plain json/csv code.

The raw filings: every accession the companyfacts JSONs name (with its form and filing day), every row of the SEC
submissions indexes and the filing sections that name theirs (``../shared/data-real``). A row that carries an
accession must come from that filing (the same company, form and day); a row without one must have no such filing
in the sources (nothing was missed); an accession is well formed and never names two companies; the webhook events
carry what the rows carry.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from fdkit.lake.io import default_data_dir, read_dataset
from fdkit.webhooks.generate import events_from_lake
from refdata.accessions import accession_of, filing_index_urls, known_filings
from refdata.segments import instance_accessions

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data-real"
DATA = default_data_dir()
needs_raw = pytest.mark.skipif(not (SHARED / "SOURCES.md").exists(), reason="../shared/data-real is not here")
WELL_FORMED = re.compile(r"^\d{10}-\d{2}-\d{6}$")
#: the datasets whose rows carry an accession number of the company they are about (a 13F's accession is the
#: manager's, one filing over many issuers: institutional_ownership is not among them)
COMPANY_DATASETS = (
    "income_statements",
    "balance_sheets",
    "cash_flow_statements",
    "financial_metrics",
    "earnings",
    "statement_vintages",
    "segmented_revenues",
    "segmented_financials",
    "filing_items",
    "filings",
    "insider_trades",
    "insider_ownership",
)


def _raw_filings() -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(ticker, accession) -> {(form, filing day)}: companyfacts, the submissions indexes, the filing sections."""
    out: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for path in sorted((SHARED / "fundamentals" / "sec_companyfacts").glob("CIK*_*.json.gz")):
        ticker = path.name.split("_", 1)[1].removesuffix(".json.gz")
        doc = json.loads(gzip.open(path, "rt").read())
        for taxonomy in doc["facts"].values():
            for concept in taxonomy.values():
                for facts in concept["units"].values():
                    for f in facts:
                        if f.get("accn"):
                            out[(ticker, f["accn"])].add((f["form"], f["filed"]))
    for path in sorted((SHARED / "company" / "sec_submissions").glob("*_recent_filings_index.csv")):
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                out[(row["ticker"], row["accessionNumber"])].add((row["form"], row["filingDate"]))
    with gzip.open(SHARED / "text" / "sec_filing_sections.jsonl.gz", "rt") as fh:  # sections naming their filing
        for line in fh:
            section = json.loads(line)
            named = re.search(r"\d{10}-\d{2}-\d{6}", section.get("source", ""))
            if named:
                out[(section["ticker"], named.group(0))].add((section["form"], section["filing_date"]))
    return out


def _by_day(raw: dict[tuple[str, str], set[tuple[str, str]]]) -> dict[tuple[str, str, str], set[str]]:
    """(ticker, form, filing day) -> the accessions of that company's filings of that form that day."""
    out: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for (ticker, accession), filings in raw.items():
        for form, day in filings:
            out[(ticker, form, day)].add(accession)
    return out


@pytest.fixture(scope="module")
def raw() -> dict[tuple[str, str], set[tuple[str, str]]]:
    return _raw_filings()


def _lake(name: str) -> pd.DataFrame:
    return read_dataset(DATA, name)


def _day(value: object) -> str:
    return pd.Timestamp(value).strftime("%Y-%m-%d")  # type: ignore[arg-type]


# -- the matching rule, on frames made here -------------------------------------------------------------------------


def _known() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ticker": ["X", "X", "X", "Y", "Z", "Z"],
            "accession_number": [
                "0000000001-25-000001",
                "0000000001-25-000002",
                "0000000001-25-000003",
                "0000000002-25-000001",
                "0000000003-25-000001",
                "0000000003-25-000002",
            ],
            "form": ["10-K", "10-K/A", "8-K", "10-Q", "10-Q", "10-Q"],
            "filing_date": pd.to_datetime(["2025-02-05"] * 4 + ["2025-05-01"] * 2),
            "report_date": pd.to_datetime(["2024-12-31", "2024-12-31", None, "2025-03-31", "2025-03-31", "2025-03-31"]),
        }
    )


def test_one_filing_of_the_company_form_and_day_gives_its_accession() -> None:
    assert accession_of(_known(), "X", "10-K", "2025-02-05") == "0000000001-25-000001"
    assert accession_of(_known(), "X", "10-K", "2025-02-05", "2024-12-31") == "0000000001-25-000001"
    assert accession_of(_known(), "X", "10-K/A", "2025-02-05") == "0000000001-25-000002"


def test_no_accession_across_companies_forms_days_or_periods() -> None:
    known = _known()
    assert accession_of(known, "X", "10-Q", "2025-02-05") is None  # Y filed the 10-Q that day, not X
    assert accession_of(known, "Y", "10-K", "2025-02-05") is None
    assert accession_of(known, "X", "10-K", "2025-02-06") is None
    assert accession_of(known, "X", "10-K", "2025-02-05", "2025-03-31") is None
    assert accession_of(known, "X", "10-K", None) is None
    assert accession_of(known.iloc[0:0], "X", "10-K", "2025-02-05") is None


def test_two_filings_the_same_day_are_no_match() -> None:
    assert accession_of(_known(), "Z", "10-Q", "2025-05-01") is None


def test_the_register_reads_the_index_and_companyfacts_filings() -> None:
    index = pd.DataFrame(
        {
            "ticker": ["X", "X"],
            "accessionNumber": ["0000000001-25-000001", "bad"],
            "form": ["10-K", "8-K"],
            "filingDate": ["2025-02-05", "2025-02-06"],
            "reportDate": ["2024-12-31", ""],
        }
    )
    reports = pd.DataFrame(
        {
            "ticker": ["G", "G", "G", "G"],
            "accn": ["0000000009-25-000004"] * 3 + [None],
            "form": ["10-Q"] * 4,
            "filed": pd.to_datetime(["2025-04-25"] * 4),
            "start": pd.to_datetime(["2025-01-01", "2025-01-01", None, "2025-01-01"]),
            "end": pd.to_datetime(["2025-03-31", "2025-06-30", "2025-04-20", "2025-03-31"]),
            "source": ["companyfacts"] * 4,
        }
    )
    known = known_filings(index, reports)
    assert known["accession_number"].tolist() == ["0000000009-25-000004", "0000000001-25-000001"]  # "bad" dropped
    g = known[known["ticker"] == "G"].iloc[0]
    # the report period ends before the filing day (a duration ending after it, or an instant, is not it)
    assert g["report_date"] == pd.Timestamp("2025-03-31")
    assert g["source"] == "companyfacts"


def test_an_instance_document_gets_the_accession_of_its_filing_only() -> None:
    known = _known()
    filed = {
        "X_10-K_FY2024_filed2025-02-05": "2025-02-05",
        "X_10-K_FY2024_2024-12-31": "2025-02-05",
        "X_10-K_FY2023_2023-12-31": "2025-02-05",
        "Z_10-Q_2025Q1_filed2025-05-01": "2025-05-01",
        "W_10-K_FY2024_filed2025-02-05": "2025-02-05",
    }
    assert instance_accessions(filed, known) == {
        "X_10-K_FY2024_filed2025-02-05": "0000000001-25-000001",
        "X_10-K_FY2024_2024-12-31": "0000000001-25-000001",
    }


def test_filing_urls_are_the_edgar_index_of_the_filing() -> None:
    urls = filing_index_urls(pd.Series(["0001652044", "0001652044"]), pd.Series(["0001652044-25-000014", None]))
    assert urls.iloc[0] == (
        "https://www.sec.gov/Archives/edgar/data/1652044/000165204425000014/0001652044-25-000014-index.htm"
    )
    assert pd.isna(urls.iloc[1])


# -- the lake ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*COMPANY_DATASETS, "institutional_ownership"])
def test_accessions_are_well_formed(name: str) -> None:
    acc = _lake(name)["accession_number"].dropna().astype(str)
    bad = acc[~acc.str.match(WELL_FORMED.pattern)]
    assert bad.empty, bad.head().tolist()


def test_one_accession_never_names_two_companies() -> None:
    owner: dict[str, set[str]] = defaultdict(set)
    for name in COMPANY_DATASETS:
        df = _lake(name).dropna(subset=["accession_number"])
        for accession, ticker in zip(df["accession_number"].astype(str), df["ticker"].astype(str), strict=True):
            owner[accession].add(ticker)
    shared = {a: t for a, t in owner.items() if len(t) > 1}
    assert not shared, list(shared.items())[:5]


@needs_raw
@pytest.mark.parametrize(
    "name,form_column", [("segmented_revenues", None), ("segmented_financials", None), ("filing_items", "filing_type")]
)
def test_filled_rows_come_from_the_filing_their_accession_names(name: str, form_column: str | None, raw) -> None:
    """The raw sources list the accession as a filing of the row's company, filed the row's day, of its form."""
    df = _lake(name).dropna(subset=["accession_number"])
    assert len(df)
    for r in df.drop_duplicates(["ticker", "accession_number", "filing_date"]).itertuples():
        filings = raw.get((str(r.ticker), str(r.accession_number)))
        assert filings, (r.ticker, r.accession_number)
        forms = {form for form, day in filings if day == _day(r.filing_date)}
        assert forms, (r.ticker, r.accession_number, filings)
        expected = {str(getattr(r, form_column))} if form_column else {"10-K", "10-Q"}
        assert forms & expected, (r.ticker, r.accession_number, forms)


@needs_raw
@pytest.mark.parametrize(
    "name,form_column",
    [("income_statements", "form_type"), ("earnings", "source_type"), ("filing_items", "filing_type")],
)
def test_no_accession_a_source_has_is_missed(name: str, form_column: str, raw) -> None:
    """A row without an accession has no filing of its company and form that day in the raw sources."""
    by_day = _by_day(raw)
    df = _lake(name)
    df = df[df["accession_number"].isna() & df[form_column].notna()]
    keys = [(str(r.ticker), str(getattr(r, form_column)), _day(r.filing_date)) for r in df.itertuples()]
    missed = [k for k in keys if len(by_day.get(k, ())) == 1]
    assert not missed, missed[:5]


@needs_raw
@pytest.mark.parametrize("name", ["segmented_revenues", "segmented_financials"])
def test_no_segment_accession_a_source_has_is_missed(name: str, raw) -> None:
    """A segment row without an accession: no single 10-K or 10-Q of its company that day in the raw sources."""
    by_day = _by_day(raw)
    df = _lake(name)
    df = df[df["accession_number"].isna()]
    form = {"annual": "10-K", "quarterly": "10-Q"}
    missed = [
        (r.ticker, r.filing_date)
        for r in df.itertuples()
        if len(by_day.get((str(r.ticker), form[str(r.period)], _day(r.filing_date)), ())) == 1
    ]
    assert not missed, missed[:5]


def test_segments_carry_the_accessions_the_sources_have() -> None:
    """AAPL, GOOGL, NVDA and TSLA: the submissions indexes or companyfacts name every one of their filings."""
    for name in ("segmented_revenues", "segmented_financials"):
        df = _lake(name)
        covered = df[df["ticker"].astype(str).isin(["AAPL", "GOOGL", "NVDA", "TSLA"])]
        assert len(covered) > 100
        assert covered["accession_number"].notna().all(), name


def test_segment_filing_urls_are_built_as_the_statements() -> None:
    """The EDGAR index URL of the accession, as every statement row with an accession carries it."""
    inc = _lake("income_statements").dropna(subset=["accession_number"])
    ciks = dict(zip(inc["ticker"].astype(str), inc["cik"].astype(str), strict=False))

    def url(cik: str, acc: str) -> str:
        return f"https://www.sec.gov/Archives/edgar/data/{int(cik)}/{acc.replace('-', '')}/{acc}-index.htm"

    assert all(u == url(c, a) for u, c, a in zip(inc["filing_url"], inc["cik"], inc["accession_number"], strict=True))
    seg = _lake("segmented_financials")
    has = seg["accession_number"].notna()
    assert has.sum() > 100
    assert seg.loc[~has, "filing_url"].isna().all()
    for r in seg[has].itertuples():
        assert r.filing_url == url(ciks[str(r.ticker)], str(r.accession_number))


def test_segment_and_statement_rows_of_one_filing_share_its_accession() -> None:
    """A segment report filed the day its company's statement was filed names the statement's accession."""
    inc = _lake("income_statements").dropna(subset=["accession_number"])
    inc = inc[inc["period"].astype(str) != "ttm"]
    of_day = {
        (str(t), _day(d)): str(a)
        for t, d, a in zip(inc["ticker"], inc["filing_date"], inc["accession_number"], strict=True)
    }
    seg = _lake("segmented_financials").dropna(subset=["accession_number"])
    rows = zip(seg["ticker"], seg["filing_date"], seg["accession_number"], strict=True)
    pairs = [(of_day.get((str(t), _day(d))), str(a)) for t, d, a in rows]
    checked = [(s, a) for s, a in pairs if s is not None]
    assert len(checked) > 50
    assert all(s == a for s, a in checked)


@pytest.fixture(scope="module")
def events() -> list[dict]:
    datasets = ("income_statements", "segmented_financials", "filing_items", "earnings")
    return events_from_lake(DATA, datasets=datasets)


@needs_raw
def test_events_carry_the_accession_of_their_filing(events: list[dict], raw) -> None:
    """Every event that names an accession names one the raw sources list for its company and filing day."""
    named = 0
    for e in events:
        body = e["data"]["object"]
        acc = body.get("accession_number")
        if acc is None:
            continue
        named += 1
        days = {day for _, day in raw.get((body["ticker"], acc), set())}
        assert body["filing_date"] in days or not days, (e["type"], body["ticker"], acc)
        if e["type"].startswith(("income_statement_segments", "filing_items")):
            assert days, (e["type"], body["ticker"], acc)  # filled by the build: always from a raw filing
    assert named


def test_segment_and_filing_item_events_carry_accessions(events: list[dict]) -> None:
    """The filled rows reach the events: segment events of the covered companies, GOOGL's 10-K items."""
    seg = [e["data"]["object"] for e in events if e["type"] == "income_statement_segments.created"]
    covered = [b for b in seg if b["ticker"] in ("AAPL", "GOOGL", "NVDA", "TSLA")]
    assert covered and all(b["accession_number"] for b in covered)
    assert all(b["accession_number"] is None for b in seg if b not in covered)
    items = [e["data"]["object"] for e in events if e["type"] == "filing_items.metadata.created"]
    googl = [b for b in items if b["ticker"] == "GOOGL" and b["filing_type"] == "10-K"]
    assert googl and all(b["accession_number"] for b in googl)


def test_statement_events_carry_their_rows_accession(events: list[dict]) -> None:
    """A statement event's accession is the one its rows carry (none where they carry none)."""
    evs = [e["data"]["object"] for e in events if e["type"] == "income_statements.created"]
    assert sum(b["accession_number"] is not None for b in evs) >= 200
    for b in evs:
        accs = {r.get("accession_number") for r in b["income_statements"]}
        assert accs == {b["accession_number"]}, (b["ticker"], b["filing_date"], accs)
