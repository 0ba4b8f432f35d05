"""XBRL facts: SEC companyfacts JSONs and the bundled instance documents, as one long table of reported facts.

The stage hands later stages every statement fact with the filing that reported it (``reports``), the first
report of each fact (``facts``: the statements are built from these) and the tickers companyfacts covers (their
full XBRL history; the pystock reports fill only the others). Values are as filed: the statement and vintage stages
put per-share values and share counts on the split basis.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pandas as pd

from refdata.common import tuples
from refdata.concepts import STATEMENT_FORMS, duration_kind
from refdata.stage import Context, Stage, intermediate

COMPANYFACTS = "data-real/fundamentals/sec_companyfacts/CIK*.json.gz"
INSTANCE_FACTS = "data-real/fundamentals/xbrl_instance_facts/*_*.csv.gz"
FACT_COLUMNS = ["ticker", "concept", "unit", "start", "end", "val", "accn", "form", "filed", "fy", "fp"]


def companyfacts_facts(paths: list[Path]) -> pd.DataFrame:
    """Long facts from the SEC companyfacts JSONs (us-gaap + dei), every filing of each fact.

    Args:
        paths: ``CIK<cik>_<ticker>.json.gz`` files, sorted.

    Returns:
        One row per reported fact (:data:`FACT_COLUMNS` and ``source``).
    """
    rows = []
    for path in paths:
        ticker = path.name.split("_", 1)[1].split(".")[0]
        data = json.loads(gzip.decompress(path.read_bytes()))
        for tax in ("us-gaap", "dei"):
            for concept, body in data["facts"].get(tax, {}).items():
                for unit, facts in body.get("units", {}).items():
                    for f in facts:
                        rows.append(
                            (
                                ticker,
                                concept,
                                unit,
                                f.get("start"),
                                f["end"],
                                f["val"],
                                f.get("accn"),
                                f.get("form"),
                                f.get("filed"),
                                f.get("fy"),
                                f.get("fp"),
                            )
                        )
    df = pd.DataFrame(rows, columns=FACT_COLUMNS)
    df["source"] = "companyfacts"
    return df


def _instance_filing(
    stem: str, ticker: str, form: str, facts: pd.DataFrame, index: pd.DataFrame
) -> tuple[str | None, str | None]:
    """The accession and filing day of one instance document: its file name's ``filed`` date, else the index."""
    m = re.search(r"filed(\d{4}-\d{2}-\d{2})", stem)
    filed = m.group(1) if m else None
    period_end = facts.loc[facts["concept"] == "dei:DocumentPeriodEndDate", "value"]
    accn = None
    if len(index):
        hit = index[(index["ticker"] == ticker) & (index["form"] == form)]
        if filed:
            hit = hit[hit["filingDate"] == filed]
        elif len(period_end):
            hit = hit[hit["reportDate"] == str(period_end.iloc[0])[:10]]
        else:
            hit = hit.iloc[0:0]
        if len(hit):
            accn, filed = hit["accessionNumber"].iloc[0], hit["filingDate"].iloc[0]
    return accn, filed


def instance_facts(paths: list[Path], skip: set[str], index: pd.DataFrame) -> pd.DataFrame:
    """Non-dimensional facts of the bundled XBRL instance documents (tickers without companyfacts).

    A document whose filing day is neither in its file name nor in the submissions index cannot be placed in time
    and is left out; so is UNP (outside the universe).

    Args:
        paths: ``<ticker>_<form>_<period>[_filed<day>].csv.gz`` files, sorted.
        skip: tickers companyfacts covers.
        index: the submissions index.

    Returns:
        One row per fact (:data:`FACT_COLUMNS` and ``source``).
    """
    rows = []
    for path in paths:
        stem = path.name[: -len(".csv.gz")]
        ticker, form = stem.split("_")[0], stem.split("_")[1]
        if ticker in skip or ticker == "UNP":
            continue
        facts = pd.read_csv(path, dtype={"value": str, "dimensions": str})
        accn, filed = _instance_filing(stem, ticker, form, facts, index)
        if filed is None:  # no filing date in the bundle: cannot be placed in time, left out
            continue
        facts = facts[facts["dimensions"].isna() & facts["concept"].str.startswith(("us-gaap:", "dei:"))]
        for r in tuples(facts):
            try:
                val = float(r.value)
            except (TypeError, ValueError):
                continue
            start = None if (r.instant is True or str(r.instant) == "True") else r.period_start
            rows.append(
                (
                    ticker,
                    r.concept.split(":", 1)[1],
                    r.unit if isinstance(r.unit, str) else "",
                    start,
                    r.period_end,
                    val,
                    accn,
                    form,
                    filed,
                    None,
                    None,
                )
            )
    df = pd.DataFrame(rows, columns=FACT_COLUMNS)
    df["source"] = "xbrl_instance"
    return df


def every_report(facts: pd.DataFrame) -> pd.DataFrame:
    """Statement facts in USD, USD/shares or shares, typed and ordered by (ticker, concept, period, filing).

    Args:
        facts: long facts (:data:`FACT_COLUMNS`).

    Returns:
        The facts of statement forms, dates typed, sorted.
    """
    df = facts[facts["form"].isin(STATEMENT_FORMS)].copy()
    df = df[df["unit"].isin(["USD", "USD/shares", "shares"]) | (df["unit"] == "")]
    df["start"] = pd.to_datetime(df["start"])
    df["end"] = pd.to_datetime(df["end"])
    df["filed"] = pd.to_datetime(df["filed"])
    return df.sort_values(["ticker", "concept", "start", "end", "filed", "accn"], na_position="first", kind="stable")


def first_reported(facts: pd.DataFrame) -> pd.DataFrame:
    """One row per (ticker, concept, start, end): the value and filing that first reported it, with its kind.

    Args:
        facts: long facts.

    Returns:
        The first reports, with ``days`` (the duration) and ``kind`` (:func:`~refdata.concepts.duration_kind`).
    """
    df = every_report(facts)
    df = df.drop_duplicates(["ticker", "concept", "start", "end"], keep="first")
    df["days"] = (df["end"] - df["start"]).dt.days + 1
    df["kind"] = [None if pd.isna(d) else duration_kind(d) for d in df["days"]]
    return df.reset_index(drop=True)


def _xbrl_facts(ctx: Context) -> dict[str, pd.DataFrame]:
    cf = companyfacts_facts(ctx.glob(COMPANYFACTS))
    inst = instance_facts(ctx.glob(INSTANCE_FACTS), set(cf["ticker"].unique()), ctx["filings_index"])
    reports = every_report(pd.concat([cf, inst], ignore_index=True))
    return {
        "reports": reports,
        "facts": first_reported(reports),
        "companyfacts_tickers": pd.DataFrame({"ticker": sorted(set(cf["ticker"]))}),
    }


XBRL_FACTS = Stage(
    "xbrl_facts",
    "Every statement fact of companyfacts and the instance documents, with its filing",
    _xbrl_facts,
    sources=(COMPANYFACTS, INSTANCE_FACTS),
    needs=("filings_index",),
    outputs=(intermediate("reports"), intermediate("facts"), intermediate("companyfacts_tickers")),
)

STAGES = (XBRL_FACTS,)
