"""Accession numbers: the filings the sources name, and the one filing a row without an accession came from.

The register (intermediate ``known_filings``) lists every filing a source names with its accession number: the
SEC submissions indexes (``company/sec_submissions``: AAPL, MSFT, NVDA, TSLA, every form, with the report date)
and the companyfacts JSONs (AAPL, NVDA, GOOGL, TSLA: the 10-K and 10-Q filings of their statement facts, the
report date being the last period a filing's duration facts end on before its filing day). A row whose own source
names no accession (a bundled instance document, a filing section) gets one only when exactly one registered
filing of the same company and form was filed that same day (and, where the row knows its report period, reports
that period): never a guess across companies, forms or days.
"""

from __future__ import annotations

import re

import pandas as pd

from refdata.concepts import SEC
from refdata.stage import Context, Stage, intermediate

__all__ = ["ACCESSION", "KNOWN_COLUMNS", "STAGES", "accession_of", "filing_index_urls", "known_filings"]

#: an accession number: the filer agent's CIK, the year, the filing's sequence (10-2-6 digits)
ACCESSION = re.compile(r"^\d{10}-\d{2}-\d{6}$")
#: the register's columns
KNOWN_COLUMNS = ["ticker", "accession_number", "form", "filing_date", "report_date", "source"]


def known_filings(index: pd.DataFrame, reports: pd.DataFrame) -> pd.DataFrame:
    """The register: every filing the submissions indexes and companyfacts name, with its accession number.

    Args:
        index: the submissions index (``ticker``, ``accessionNumber``, ``form``, ``filingDate``, ``reportDate``).
        reports: the statement facts (``ticker``, ``accn``, ``form``, ``filed``, ``start``, ``end``, ``source``);
            only those from companyfacts are read (an instance document's accession comes from the index).

    Returns:
        One row per (ticker, accession, source) (:data:`KNOWN_COLUMNS`), dates as datetimes.

    Example:
        >>> ix = pd.DataFrame({"ticker": ["X"], "accessionNumber": ["0000000001-24-000001"], "form": ["10-K"],
        ...                    "filingDate": ["2024-02-01"], "reportDate": ["2023-12-31"]})
        >>> known_filings(ix, pd.DataFrame())[["accession_number", "report_date"]].iloc[0].tolist()
        ['0000000001-24-000001', Timestamp('2023-12-31 00:00:00')]
    """
    frames = []
    if len(index):
        frames.append(
            pd.DataFrame(
                {
                    "ticker": index["ticker"],
                    "accession_number": index["accessionNumber"],
                    "form": index["form"],
                    "filing_date": pd.to_datetime(index["filingDate"]),
                    "report_date": pd.to_datetime(index["reportDate"].where(index["reportDate"].fillna("") != "")),
                    "source": "submissions",
                }
            )
        )
    if len(reports):
        cf = reports[(reports["source"] == "companyfacts") & reports["accn"].notna()]
        cf = cf.assign(filed=pd.to_datetime(cf["filed"]), end=pd.to_datetime(cf["end"]))
        # the report period: the last period a duration fact ends on before the filing day (a fact ending after
        # it is a forecast or a mistagged date, never the period the filing reports)
        period = cf[cf["start"].notna() & (cf["end"] < cf["filed"])].groupby("accn")["end"].max()
        one = cf.drop_duplicates(["ticker", "accn"]).sort_values(["ticker", "accn"], kind="stable")
        frames.append(
            pd.DataFrame(
                {
                    "ticker": one["ticker"],
                    "accession_number": one["accn"],
                    "form": one["form"],
                    "filing_date": one["filed"],
                    "report_date": one["accn"].map(period),
                    "source": "companyfacts",
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=KNOWN_COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    out = out[out["accession_number"].astype(str).str.match(ACCESSION.pattern)]
    return out.sort_values(["ticker", "filing_date", "accession_number", "source"], kind="stable").reset_index(
        drop=True
    )


def accession_of(
    known: pd.DataFrame,
    ticker: str,
    form: str,
    filing_date: str | pd.Timestamp | None,
    report_date: str | pd.Timestamp | None = None,
) -> str | None:
    """The accession of the one registered filing of a company and form filed on a day, else ``None``.

    Args:
        known: the register (:func:`known_filings`).
        ticker: the company.
        form: the form exactly (``10-K`` never matches ``10-K/A``: the bundled documents are the originals).
        filing_date: the filing day.
        report_date: the period the row reports, where it knows it: a filing whose register entry names another
            report period is no match.

    Returns:
        The accession number, or ``None`` where no filing or more than one matches.

    Example:
        >>> known = pd.DataFrame({"ticker": ["X", "X", "Y"], "form": ["10-K", "8-K", "10-K"],
        ...                       "accession_number": ["0000000001-24-000001", "0000000001-24-000002",
        ...                                            "0000000002-24-000001"],
        ...                       "filing_date": pd.to_datetime(["2024-02-01"] * 3),
        ...                       "report_date": pd.to_datetime(["2023-12-31", None, "2023-12-31"])})
        >>> accession_of(known, "X", "10-K", "2024-02-01")
        '0000000001-24-000001'
        >>> accession_of(known, "X", "10-K", "2024-02-02") is None  # another day: no match
        True
        >>> accession_of(known, "X", "10-K", "2024-02-01", report_date="2024-03-31") is None  # another period
        True
    """
    if not len(known) or filing_date is None or pd.isna(filing_date):
        return None
    hit = known[
        (known["ticker"] == ticker) & (known["form"] == form) & (known["filing_date"] == pd.Timestamp(filing_date))
    ]
    if report_date is not None and len(hit):
        period = pd.Timestamp(report_date)
        hit = hit[hit["report_date"].isna() | (hit["report_date"] == period)]
    found = hit["accession_number"].unique()
    return str(found[0]) if len(found) == 1 else None


def filing_index_urls(ciks: pd.Series, accessions: pd.Series) -> pd.Series:
    """The EDGAR index page of each filing (``.../edgar/data/<cik>/<accession digits>/<accession>-index.htm``).

    The URL every row with an accession carries (statements, segments); missing where the CIK or the accession is.

    Args:
        ciks: the filers' CIKs (zero-padded text).
        accessions: accession numbers.

    Returns:
        The URLs.

    Example:
        >>> filing_index_urls(pd.Series(["0000320193", None]), pd.Series(["0000320193-24-000123", "x"])).tolist()
        ['https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/0000320193-24-000123-index.htm', <NA>]
    """
    acc = accessions.astype("string")
    cik = ciks.astype("string").str.lstrip("0")
    return SEC + "/Archives/edgar/data/" + cik + "/" + acc.str.replace("-", "", regex=False) + "/" + acc + "-index.htm"


def _register(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"known_filings": known_filings(ctx["filings_index"], ctx["reports"])}


REGISTER = Stage(
    "accessions",
    "The register of filings the submissions indexes and companyfacts name, with their accession numbers",
    _register,
    needs=("filings_index", "reports"),
    outputs=(intermediate("known_filings"),),
)

STAGES = (REGISTER,)
