"""Segmented balance-sheet and cash-flow line items from the instance documents' dimensional facts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from refdata.accessions import filing_index_urls
from refdata.common import tuples
from refdata.concepts import MAX_FILING_LAG
from refdata.segment_members import AXES, member_label, with_hierarchy

#: dimensional facts of the balance sheet and the cash flow statement served as segmented line items: concept ->
#: (statement, line item, sign): the cash flow statement's capital expenditure is an outflow (negative), as on the
#: statements; ASC 280's "expenditures for additions to long-lived assets" is the segment disclosure of it
STATEMENT_SEGMENT_CONCEPTS: dict[str, tuple[str, str, float]] = {
    "us-gaap:Assets": ("balance_sheet", "total_assets", 1.0),
    "us-gaap:InventoryNet": ("balance_sheet", "inventory", 1.0),
    "us-gaap:SegmentExpenditureAdditionToLongLivedAssets": ("cash_flow_statement", "capital_expenditure", -1.0),
    "us-gaap:DepreciationDepletionAndAmortization": ("cash_flow_statement", "depreciation_and_amortization", 1.0),
    "us-gaap:DepreciationAndAmortization": ("cash_flow_statement", "depreciation_and_amortization", 1.0),
}


def statement_segment_facts(paths: list[Path]) -> pd.DataFrame:
    """The balance-sheet and cash-flow facts of :data:`STATEMENT_SEGMENT_CONCEPTS` of the instance documents.

    Args:
        paths: the instance documents (``<ticker>_<form>_<label>_<end | filed day>.csv.gz``).

    Returns:
        ``filing`` (file stem), ``ticker``, ``form``, ``concept``, ``dimensions``, ``period_start``, ``period_end``,
        ``instant``, ``value`` (text as read), for facts with dimensions.

    Example:
        >>> statement_segment_facts([]).empty
        True
    """
    frames = []
    for p in paths:
        stem = p.name[: -len(".csv.gz")]
        df = pd.read_csv(p, dtype=str, usecols=["concept", "value", "period_start", "period_end", "instant",
                                                "dimensions"])  # fmt: skip
        df = df[df["concept"].isin(list(STATEMENT_SEGMENT_CONCEPTS)) & df["dimensions"].notna()]
        ticker, form = stem.split("_")[:2]
        frames.append(df.assign(filing=stem, ticker=ticker, form=form))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def build_statement_segments(facts: pd.DataFrame, filed_of: Mapping[str, str], statements: pd.DataFrame,
                             accession_of: Mapping[str, str] | None = None) -> pd.DataFrame:  # fmt: skip
    """Segmented balance-sheet and cash-flow line items: one product or segment member each, point in time.

    A balance-sheet item is the member's amount at the document's period end (a 10-K's annual, a 10-Q's quarterly
    report); a cash-flow item one of a year (> 300 days) or a quarter (< 100 days). Only a period's own report
    counts (filed within :data:`MAX_FILING_LAG` days of the period's end; the first document that gives it).

    Args:
        facts: :func:`statement_segment_facts`.
        filed_of: document -> filing day.
        statements: the statement table (CIKs, for the filing URLs).
        accession_of: document -> accession number, where known.

    Returns:
        Rows of ``segmented_financials`` with their ``statement``.

    Example:
        >>> facts = pd.DataFrame({"filing": ["KO_10-K_FY2024_filed2025-02-20"], "ticker": ["KO"], "form": ["10-K"],
        ...     "concept": ["us-gaap:SegmentExpenditureAdditionToLongLivedAssets"], "value": ["602000000"],
        ...     "dimensions": ["us-gaap:StatementBusinessSegmentsAxis=ko:NorthAmericaSegmentMember"],
        ...     "period_start": ["2024-01-01"], "period_end": ["2024-12-31"], "instant": ["False"]})
        >>> out = build_statement_segments(facts, {"KO_10-K_FY2024_filed2025-02-20": "2025-02-20"}, pd.DataFrame())
        >>> out[["statement", "line_item", "label", "value"]].values.tolist()
        [['cash_flow_statement', 'capital_expenditure', 'North America', -602000000.0]]
    """
    if facts.empty:
        return pd.DataFrame()
    rows = []
    for r in tuples(facts.assign(filing_date=facts["filing"].map(filed_of)).dropna(subset=["filing_date", "value"])):
        dims = [d.split("=", 1) for d in re.split(r"[|;]", str(r.dimensions)) if "=" in d]
        if len(dims) != 1 or AXES.get(dims[0][0]) not in ("product", "segment"):
            continue  # one product or segment member, nothing else (consolidation items, other axes)
        end = pd.Timestamp(r.period_end)
        period: str | None
        if str(r.instant) == "True":
            period = "annual" if r.form == "10-K" else "quarterly"
        else:
            days = (end - pd.Timestamp(r.period_start)).days + 1
            period = "annual" if days > 300 else "quarterly" if days < 100 else None
        lag = (pd.Timestamp(r.filing_date) - end).days
        if period is None or not 1 <= lag <= MAX_FILING_LAG:
            continue
        statement, item, sign = STATEMENT_SEGMENT_CONCEPTS[r.concept]
        member = dims[0][1]
        value = sign * float(r.value) + 0.0  # + 0.0: a negated zero is zero
        rows.append({"ticker": r.ticker, "report_period": end, "period": period, "currency": "USD",
                     "filing_date": r.filing_date, "statement": statement, "line_item": item,
                     "category": AXES[dims[0][0]], "label": member_label(member), "value": value,
                     "xbrl_member": member, "accession_number": (accession_of or {}).get(r.filing),
                     "_rank": list(STATEMENT_SEGMENT_CONCEPTS).index(r.concept)})  # fmt: skip
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows).sort_values(["filing_date", "_rank"], kind="stable")
    keys = ["ticker", "report_period", "period", "line_item", "category", "label"]
    df = df.drop_duplicates(keys, keep="first").drop(columns="_rank")  # the first report; the preferred concept
    df["accession_number"] = df["accession_number"].astype("string")
    ciks = dict(zip(statements["ticker"].astype(str), statements["cik"], strict=True)) \
        if "cik" in statements.columns else {}  # fmt: skip
    df["filing_url"] = filing_index_urls(df["ticker"].astype(str).map(ciks), df["accession_number"])
    df = with_hierarchy(df, ["ticker", "report_period", "period", "line_item", "category"], {})
    return df.sort_values(["ticker", "report_period", "statement", "line_item", "category", "label"])
