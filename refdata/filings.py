"""SEC submissions: the filings index (an intermediate many stages read), ``filings`` and ``filing_items``.

Also the acceptance times of filings (:func:`acceptance_times`), which the statements and earnings carry.
"""

from __future__ import annotations

import gzip
import json
import re

import numpy as np
import pandas as pd

from fdkit.research.sessions import EASTERN, edgar_filing_date
from refdata.accessions import accession_of
from refdata.common import SEC_PD, tuples
from refdata.concepts import SEC
from refdata.stage import Context, Provenance, Stage, dataset, intermediate

INDEX_FILES = "data-real/company/sec_submissions/*_index.csv"


def read_filings_index(paths: list) -> pd.DataFrame:
    """The SEC submissions indexes of the bundled companies, one row per filing (all columns as text).

    Args:
        paths: the ``*_index.csv`` files, sorted.

    Returns:
        The concatenated index (an empty frame without files).
    """
    frames = [pd.read_csv(p, dtype=str) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def build_filings(index: pd.DataFrame) -> pd.DataFrame:
    """The ``filings`` rows: one per filing of the index, the URL its EDGAR archive path.

    Args:
        index: the submissions index.

    Returns:
        Filings, newest first per ticker.

    Example:
        >>> ix = pd.DataFrame({"ticker": ["X"], "filingDate": ["2024-01-02"], "cik": ["0000000001"],
        ...                    "accessionNumber": ["0000000001-24-000001"], "form": ["8-K"], "reportDate": [""],
        ...                    "primaryDocument": ["x.htm"]})
        >>> build_filings(ix)["url"].iloc[0]
        'https://www.sec.gov/Archives/edgar/data/1/000000000124000001/x.htm'
    """
    df = index.copy()
    acc = df["accessionNumber"].str.replace("-", "", regex=False)
    cik_int = df["cik"].astype(int).astype(str)
    return pd.DataFrame(
        {
            "ticker": df["ticker"],
            "filing_date": df["filingDate"],
            "cik": df["cik"],
            "accession_number": df["accessionNumber"],
            "filing_type": df["form"],
            "report_date": df["reportDate"].where(df["reportDate"].notna() & (df["reportDate"] != ""), None),
            "url": SEC + "/Archives/edgar/data/" + cik_int + "/" + acc + "/" + df["primaryDocument"].fillna(""),
        }
    ).sort_values(["ticker", "filing_date", "accession_number"], ascending=[True, False, True])


_8K_ITEM = re.compile(r"(?im)^\s*item\s+(\d\.\d\d)\.?\s*(.*)$")


def _section_rows(s: dict, base: dict) -> list[dict]:
    """The item rows of one filing section: an 8-K split on its ``Item X.XX`` headings, else one row."""
    item = s["item"]
    if s["form"] == "8-K":
        text = s["text"]
        heads = list(_8K_ITEM.finditer(text))
        rows = []
        for i, h in enumerate(heads):
            body = text[h.start() : heads[i + 1].start() if i + 1 < len(heads) else len(text)].strip()
            rows.append(
                {**base, "number": f"Item-{h.group(1)}", "name": h.group(2).strip()[:200] or None, "text": body}
            )
        return rows
    if s["form"] == "10-Q":
        part, num = item.split("-", 1)
        number = f"Part-{part[1:]},Item-{num}"
    else:
        number = f"Item-{item}"
    return [{**base, "number": number, "name": s.get("title"), "text": s["text"]}]


def _filing_quarter(form: str, fiscal_period: str | None, filed: str) -> int | None:
    """The fiscal quarter a 10-Q or 10-K reports (a 10-K closes the fiscal year: quarter 4); none for an 8-K.

    The quarter of the statement filed the same day where the lake has one (``FY2025-Q3`` -> 3), else a 10-Q's
    calendar quarter 45 days before filing.

    Example:
        >>> _filing_quarter("10-K", None, "2024-11-01"), _filing_quarter("10-Q", "FY2025-Q3", "2025-08-01")
        (4, 3)
    """
    if form == "10-K":
        return int(fiscal_period[-1]) if fiscal_period else 4
    if form == "10-Q":
        return int(fiscal_period[-1]) if fiscal_period else (pd.Timestamp(filed) - pd.Timedelta(days=45)).quarter
    return None


def build_filing_items(sections: list[dict], known: pd.DataFrame, statements: pd.DataFrame) -> pd.DataFrame:
    """The ``filing_items`` rows: 10-K items, 10-Q part items and the items of an 8-K, with their text.

    A section's accession is the one its source names, else that of the one registered filing of the company and
    form filed that day (:func:`refdata.accessions.accession_of`), else missing.

    Args:
        sections: the parsed filing sections (``ticker``, ``form``, ``filing_date``, ``item``, ``text``, ...).
        known: the register of filings (accession numbers of sections that name none).
        statements: the statement table (a 10-Q's fiscal quarter is that of the statement filed the same day).

    Returns:
        Items sorted by ticker, filing date, form and number.
    """
    rows = []
    fiscal_q = {
        (r.ticker, str(r.filing_date)[:10]): r.fiscal_period
        for r in tuples(statements[statements["period"] == "quarterly"])
        if not pd.isna(r.filing_date)
    }
    for s in sections:
        ticker, form, filed = s["ticker"], s["form"], s["filing_date"]
        m = re.search(r"\d{10}-\d{2}-\d{6}", s.get("source", ""))
        accn = m.group(0) if m else None
        if accn is None:
            accn = accession_of(known, ticker, form, filed)
        quarter = _filing_quarter(form, fiscal_q.get((ticker, filed)), filed)
        base = {
            "ticker": ticker,
            "filing_date": filed,
            "accession_number": accn,
            "filing_type": form,
            "year": int(filed[:4]),
            "quarter": quarter,
        }
        rows.extend(_section_rows(s, base))
    df = pd.DataFrame(rows)
    return df.sort_values(["ticker", "filing_date", "filing_type", "number"], kind="stable").reset_index(drop=True)


def filing_window(accepted: pd.Series) -> pd.Series:
    """The market session of an Eastern-Time acceptance time.

    PRE_MARKET (weekday 04:00-09:30), DURING_MARKET (09:30-16:00), AFTER_HOURS (other weekday times), WEEKEND;
    missing where the time is.

    Args:
        accepted: acceptance times in Eastern Time.

    Returns:
        The session of each.

    Example:
        >>> t = pd.Series(pd.to_datetime(["2024-01-02 08:00", "2024-01-02 18:00", "2024-01-06 12:00", None]))
        >>> filing_window(t).tolist()
        ['PRE_MARKET', 'AFTER_HOURS', 'WEEKEND', nan]
    """
    minutes = accepted.dt.hour * 60 + accepted.dt.minute
    weekend = accepted.dt.day_of_week >= 5
    window = np.select(
        [weekend, (minutes >= 240) & (minutes < 570), (minutes >= 570) & (minutes < 960)],
        ["WEEKEND", "PRE_MARKET", "DURING_MARKET"],
        default="AFTER_HOURS",
    )
    return pd.Series(window, index=accepted.index).where(accepted.notna())


def acceptance_times(accessions: pd.Series, index: pd.DataFrame) -> pd.Series:
    """The SEC's acceptance time of each accession, in Eastern Time; missing where the submissions index has none.

    EDGAR's ``acceptanceDateTime`` always carries a ``Z``, yet the bundled documents differ: Apple's is Eastern
    wall time (its 10-Qs read 18:04, after its 16:30 release, and are dated the next day), the others are UTC.
    Each company's zone is the reading under which EDGAR's filing-date rule reproduces the filing dates the
    same document states (:func:`fdkit.research.sessions.edgar_filing_date`).

    Args:
        accessions: accession numbers.
        index: the submissions index.

    Returns:
        One Eastern-Time timestamp per accession.
    """
    if not len(index) or "acceptanceDateTime" not in index.columns:
        return pd.Series(pd.NaT, index=accessions.index, dtype=pd.DatetimeTZDtype("ns", EASTERN))
    stamps = []
    for _, doc in index.groupby("ticker", sort=True):
        wall = pd.to_datetime(doc["acceptanceDateTime"].str[:19], format="ISO8601")
        readings = {
            zone: wall.dt.tz_localize(zone, ambiguous="NaT", nonexistent="NaT").dt.tz_convert(EASTERN)
            for zone in (EASTERN, "UTC")
        }
        filed = pd.to_datetime(doc["filingDate"])
        agree = {z: float((edgar_filing_date(at, doc["form"]) == filed).mean()) for z, at in readings.items()}
        stamps.append(pd.Series(readings[max(agree, key=agree.__getitem__)].to_numpy(), index=doc["accessionNumber"]))
    by_accession = pd.concat(stamps)
    by_accession = by_accession[~by_accession.index.duplicated()]
    return accessions.astype(object).map(by_accession).astype(pd.DatetimeTZDtype("ns", EASTERN))


def iso_times(stamp: pd.Series) -> pd.Series:
    """ISO 8601 with the offset (``2023-11-02T18:04:31-04:00``), missing where the time is.

    Args:
        stamp: timezone-aware timestamps.

    Returns:
        Text.

    Example:
        >>> t = iso_times(pd.Series([pd.Timestamp("2023-11-02 18:04:31", tz=EASTERN), pd.NaT]))
        >>> t.iloc[0], t.isna().tolist()
        ('2023-11-02T18:04:31-04:00', [False, True])
    """
    return stamp.map(lambda t: t.isoformat() if pd.notna(t) else None)


def _filings(ctx: Context) -> dict[str, pd.DataFrame]:
    index = read_filings_index(ctx.glob(INDEX_FILES))
    return {"filings_index": index, "filings": build_filings(index)}


def _filing_items(ctx: Context) -> dict[str, pd.DataFrame]:
    with gzip.open(ctx.source("data-real/text/sec_filing_sections.jsonl.gz"), "rt") as fh:
        sections = [json.loads(line) for line in fh]
    return {"filing_items": build_filing_items(sections, ctx["known_filings"], ctx["statements"])}


FILINGS = Stage(
    "filings",
    "The SEC submissions index of the bundled companies and its filings",
    _filings,
    sources=(INDEX_FILES,),
    outputs=(
        intermediate("filings_index"),
        dataset(
            "filings",
            Provenance("company/sec_submissions/*_recent_filings_index.csv", SEC_PD, "URL = EDGAR archive path"),
        ),
    ),
)

FILING_ITEMS = Stage(
    "filing_items",
    "Items of 10-K, 10-Q and 8-K filings with their text",
    _filing_items,
    sources=("data-real/text/sec_filing_sections.jsonl.gz",),
    needs=("known_filings", "statements"),
    outputs=(
        dataset(
            "filing_items",
            Provenance(
                "text/sec_filing_sections.jsonl.gz",
                SEC_PD,
                "10-K items as Item-N, 10-Q as Part-P,Item-N, 8-K split on its 'Item X.XX' headings; quarter (the "
                "document's 'quarter of the filing') = the fiscal quarter of the statement filed that day: a 10-Q's "
                "quarter, a 10-K's fiscal Q4 (the quarter closing the year it reports); else a 10-Q's calendar "
                "quarter 45 days before filing, a 10-K's 4. An 8-K reports an event, not a period: its quarter is "
                "null. accession_number: the one the section's source names, else that of the one filing of the "
                "company and form filed that day in the SEC submissions indexes or companyfacts (GOOGL's 10-K), else "
                "null",
            ),
        ),
    ),
)

STAGES = (FILINGS, FILING_ITEMS)
