"""Segments: revenue by product, segment and geography, and segmented line items, from dimensional XBRL facts.

Point in time, as the statements: a period's segments come from its own report (within 200 days of its end),
dated by the filing day of the instance document they come from. Each axis is checked against the period's
revenue; subtotals are marked (``is_subtotal``, ``parent_label``) so a sum over leaves never counts twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from fdkit.lake.io import conform
from refdata.accessions import accession_of as registered_accession
from refdata.accessions import filing_index_urls
from refdata.common import SEC_PD, tuples
from refdata.concepts import CONCEPT_ORDER, CONCEPTS, MAX_FILING_LAG
from refdata.segment_members import AXES, member_label, one_breakdown, with_hierarchy
from refdata.stage import Context, Provenance, Stage, dataset
from refdata.statement_segments import build_statement_segments, statement_segment_facts

SEGMENT_FACTS = "data-real/segments/segment_product_geography_revenue_from_xbrl.csv"
INSTANCE_FACTS = "data-real/fundamentals/xbrl_instance_facts/*_*.csv.gz"

_REVENUE = {"us-gaap:" + c for c in CONCEPTS["revenue"]}


def _leaves(rev: pd.DataFrame, revenue_of: dict) -> pd.DataFrame:
    """One complete breakdown per segment axis, its subtotals marked, so a sum over leaves never counts twice.

    Filers report subtotals (Apple's Products = iPhone + Mac + iPad + Wearables; NVIDIA's Data Center = Compute +
    Networking), two breakdowns on one axis (Amazon's product/service split beside its seven sales lines; Apple's
    early product lines beside its geographic segments) and memo lines (NVIDIA's Singapore billing, Meta's US
    beside US & Canada). Subtotals (members equal to the sum of two or more smaller members) are kept and marked
    ``is_subtotal``, each member below one naming it in ``parent_member``; where an axis's leaves add up to more
    than the period's revenue (+1%), members are left out by the first of these that brings the leaves to the
    revenue (within 1%): (1) one or two memo members; (2) a coarse breakdown of two or three members that alone
    add up to the revenue, beside a finer one. If none does, the axis is ambiguous and left out of that report.
    An axis that adds up to no more than the revenue has no subtotals. Where several revenue concepts report the
    same members, the first concept of the mapping is kept.
    """
    rev = rev.assign(_axis=rev["members"].map(lambda m: m[0][0] if len(m) == 1 else None),
                     _rank=rev["concept"].map(lambda c: CONCEPT_ORDER.get(c.split(":", 1)[1], 99)),
                     is_subtotal=False, parent_member=None)  # fmt: skip
    rev = rev.sort_values("_rank", kind="stable").drop_duplicates(["ticker", "start", "end", "members"])
    drop: list = []
    for key, g in rev[rev["_axis"].notna()].groupby(["ticker", "start", "end", "_axis"]):
        ticker, start, end, _ = cast("tuple[str, pd.Timestamp, pd.Timestamp, str]", key)
        total = revenue_of.get((ticker, end, "annual" if (end - start).days > 300 else "quarterly"))
        amounts = g["value"].to_numpy(dtype=float)
        keep, parents, subtotal = one_breakdown(amounts, total)
        drop.extend(g.index[~keep])
        member = g["members"].map(lambda m: m[0][1]).to_numpy()
        rev.loc[g.index, "is_subtotal"] = subtotal
        rev.loc[g.index, "parent_member"] = [member[p] if p >= 0 else None for p in parents]
    return rev.drop(index=drop).drop(columns=["_axis", "_rank"])


def build_segments(
    seg: pd.DataFrame,
    filed_of: dict[str, str],
    statements: pd.DataFrame,
    accession_of: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exploded segment revenue items and segmented financial line items from dimensional XBRL facts.

    Args:
        seg: the dimensional facts (text columns ``ticker``, ``concept``, ``dimensions``, ``period_start``, ...).
        filed_of: instance document (``filing``) -> its filing day.
        statements: the statement table (each period's revenue, to check breakdowns against; the CIKs).
        accession_of: instance document -> its accession number, where known (:func:`instance_accessions`).

    Returns:
        The segment items (one row per item x member; a report's accession where all its items come from one
        filing) and the segmented financial line items (each with its filing's accession and EDGAR index URL).
    """
    seg = seg.copy()
    seg["filing_date"] = seg["filing"].map(filed_of)
    seg = seg.dropna(subset=["filing_date", "period_start", "period_end", "value"])
    seg["value"] = seg["value"].astype(float)
    rows = []
    for r in tuples(seg):
        dims = [d.split("=", 1) for d in re.split(r"[|;]", str(r.dimensions)) if "=" in d]
        members = [(a, m) for a, m in dims if a in AXES]
        if not members or len(members) != len(dims):
            continue  # consolidation items, eliminations and other axes are not segment members
        rows.append({"ticker": r.ticker, "concept": r.concept, "start": r.period_start, "end": r.period_end,
                     "value": r.value, "filing_date": r.filing_date, "filing": r.filing,
                     "members": tuple(sorted((AXES[a], m) for a, m in members))})  # fmt: skip
    df = pd.DataFrame(rows)
    df["start"], df["end"] = pd.to_datetime(df["start"]), pd.to_datetime(df["end"])
    df["days"] = (df["end"] - df["start"]).dt.days + 1
    quarterly = np.where(df["days"] < 100, "quarterly", None)  # type: ignore[call-overload]  # None: no period
    df["period"] = np.where(df["days"] > 300, "annual", quarterly)
    df = df.dropna(subset=["period"])
    df = df.sort_values(["ticker", "concept", "start", "end", "members", "filing_date"], kind="stable")
    df = df.drop_duplicates(["ticker", "concept", "start", "end", "members"], keep="first")
    # point in time, as the statements: a period's segments come from its own report, not a later comparative
    lag = (pd.to_datetime(df["filing_date"]) - df["end"]).dt.days
    df = df[lag.between(1, MAX_FILING_LAG)]
    revenue_of = {(r.ticker, r.report_period, r.period): r.revenue
                  for r in tuples(statements.dropna(subset=["revenue"]))}  # fmt: skip
    rev = _leaves(df[df["concept"].isin(_REVENUE) & (df["members"].map(len) >= 1)].copy(), revenue_of)
    items = []
    for (ticker, end, period), g in rev.groupby(["ticker", "end", "period"], sort=True):
        g = g.sort_values(["members", "concept"], kind="stable").reset_index(drop=True)
        filing_date = g["filing_date"].min()
        accession = _report_accession(g["filing"], accession_of or {})
        for i, r in enumerate(tuples(g)):
            for j, (stype, member) in enumerate(r.members):
                items.append({"ticker": ticker, "report_period": end, "period": period, "currency": "USD",
                              "filing_date": filing_date, "accession_number": accession, "item": i, "member": j,
                              "name": r.concept.split(":", 1)[1], "amount": r.value, "start_period": r.start,
                              "end_period": r.end, "segment_label": member_label(member), "segment_type": stype,
                              "xbrl_member": member, "is_subtotal": bool(r.is_subtotal),
                              "parent_label": member_label(r.parent_member) if r.parent_member else None})  # fmt: skip
    items_df = pd.DataFrame(items)
    line_items = {"us-gaap:OperatingIncomeLoss": "operating_income", "us-gaap:GrossProfit": "gross_profit",
                  **{c: "revenue" for c in _REVENUE}}  # fmt: skip
    fin = df[df["concept"].isin(line_items) & (df["members"].map(len) == 1)].copy()
    fin = fin[fin["members"].map(lambda m: m[0][0] in ("product", "segment"))]
    fin_rows = pd.DataFrame({
        "ticker": fin["ticker"], "report_period": fin["end"], "period": fin["period"], "currency": "USD",
        "filing_date": fin["filing_date"], "statement": "income_statement",
        "line_item": fin["concept"].map(line_items), "category": fin["members"].map(lambda m: m[0][0]),
        "label": fin["members"].map(lambda m: member_label(m[0][1])), "value": fin["value"],
        "xbrl_member": fin["members"].map(lambda m: m[0][1]),
        "accession_number": fin["filing"].map(dict(accession_of or {})).astype("string"),
    }).drop_duplicates(["ticker", "report_period", "period", "line_item", "category", "label"])  # fmt: skip
    ciks = dict(zip(statements["ticker"].astype(str), statements["cik"], strict=True)) \
        if "cik" in statements.columns else {}  # fmt: skip
    fin_rows["filing_url"] = filing_index_urls(fin_rows["ticker"].astype(str).map(ciks), fin_rows["accession_number"])
    fin_rows = with_hierarchy(fin_rows, ["ticker", "report_period", "period", "line_item", "category"], revenue_of)
    return items_df, fin_rows.sort_values(["ticker", "report_period", "line_item", "category", "label"])


def _report_accession(filings: pd.Series, accession_of: Mapping[str, str]) -> str | None:
    """A segment report's accession: that of its one filing, ``None`` where its items come from several or none."""
    found = {accession_of.get(f) for f in filings}
    return found.pop() if len(found) == 1 else None


def with_fiscal_labels(rows: pd.DataFrame, statements: pd.DataFrame) -> pd.DataFrame:
    """Label segment rows with the fiscal period of the statement of the same (ticker, report_period, period)."""
    labels = statements[["ticker", "report_period", "period", "fiscal_period"]].drop_duplicates(
        ["ticker", "report_period", "period"]
    )
    labels = labels.assign(
        ticker=labels["ticker"].astype(str),
        period=labels["period"].astype(str),
        report_period=pd.to_datetime(labels["report_period"]).dt.strftime("%Y-%m-%d"),
    )
    keys = (
        rows[["ticker", "report_period", "period"]]
        .astype(str)
        .assign(report_period=pd.to_datetime(rows["report_period"]).dt.strftime("%Y-%m-%d"))
    )
    merged = keys.merge(labels, on=["ticker", "report_period", "period"], how="left", validate="many_to_one")
    out = rows.copy()
    out["fiscal_period"] = merged["fiscal_period"].to_numpy()
    return out


def instance_filing_days(paths: list[Path], index: pd.DataFrame, facts: pd.DataFrame) -> dict[str, str]:
    """The filing day of each bundled instance document (the ``filing`` its segment facts name).

    Its file name's ``filed`` date, else the submissions index's filing of that form and period end, else the
    day companyfacts first reported a fact of that form and period end.

    Args:
        paths: the instance documents, sorted.
        index: the submissions index.
        facts: the first-reported facts.

    Returns:
        File stem -> ``YYYY-MM-DD``, for the documents whose day is known.
    """
    filed_of = {}
    for p in paths:
        stem = p.name[: -len(".csv.gz")]
        m = re.search(r"filed(\d{4}-\d{2}-\d{2})", stem)
        if m:
            filed_of[stem] = m.group(1)
            continue
        t, form = stem.split("_")[:2]
        end = stem.rsplit("_", 1)[1]
        hit = index[(index["ticker"] == t) & (index["form"] == form) & (index["reportDate"] == end)] \
            if len(index) else pd.DataFrame()  # fmt: skip
        if len(hit):
            filed_of[stem] = hit["filingDate"].iloc[0]
        else:  # companyfacts knows when the 10-K/10-Q for that period end was first filed
            f = facts[(facts["ticker"] == t) & (facts["end"] == pd.Timestamp(end)) & (facts["form"] == form)]
            if len(f):
                filed_of[stem] = f["filed"].min().strftime("%Y-%m-%d")
    return filed_of


def instance_accessions(filed_of: Mapping[str, str], known: pd.DataFrame) -> dict[str, str]:
    """The accession number of each bundled instance document whose filing the register knows.

    A document is ``<ticker>_<form>_<label>_<period end | filed<day>>``: its accession is that of the one
    registered filing of its company and form filed on its filing day (and, where the name gives the period end,
    reporting that period) (:func:`refdata.accessions.accession_of`).

    Args:
        filed_of: document (file stem) -> its filing day (:func:`instance_filing_days`).
        known: the register of filings (intermediate ``known_filings``).

    Returns:
        File stem -> accession number, for the documents one registered filing matches.

    Example:
        >>> known = pd.DataFrame({"ticker": ["X"], "form": ["10-K"], "accession_number": ["0000000001-25-000001"],
        ...                       "filing_date": [pd.Timestamp("2025-02-05")], "report_date": [pd.NaT]})
        >>> instance_accessions({"X_10-K_FY2024_filed2025-02-05": "2025-02-05", "Y_10-K_FY2024_filed2025-02-05":
        ...                      "2025-02-05"}, known)
        {'X_10-K_FY2024_filed2025-02-05': '0000000001-25-000001'}
    """
    out = {}
    for stem, filed in sorted(filed_of.items()):
        ticker, form, *_, last = stem.split("_")
        period = None if last.startswith("filed") else last
        accession = registered_accession(known, ticker, form, filed, period)
        if accession is not None:
            out[stem] = accession
    return out


def typed_segment_items(df: pd.DataFrame) -> pd.DataFrame:
    """The lake dtypes of ``segmented_revenues`` (exploded items: not a record schema, ``segment_rows`` + header).

    Args:
        df: the segment items.

    Returns:
        The typed frame.
    """
    base = conform(df, "segment_items")
    base["fiscal_period"] = df["fiscal_period"].astype("string").astype("category")
    base["currency"] = df["currency"].astype("category")
    base["accession_number"] = df["accession_number"].astype("string") if "accession_number" in df.columns \
        else pd.Series(pd.NA, index=df.index, dtype="string")  # fmt: skip
    base["filing_date"] = pd.to_datetime(df["filing_date"])
    base["item"] = df["item"].astype("Int64")
    base["member"] = df["member"].astype("Int64")
    return base


def typed_segmented_financials(df: pd.DataFrame) -> pd.DataFrame:
    """The lake dtypes of ``segmented_financials`` (its record schema plus the statement each row comes from).

    Args:
        df: the segmented line items.

    Returns:
        The typed frame.
    """
    base = conform(df, "segmented_financials")
    base["statement"] = df["statement"].astype("category")
    return base


def _segments(ctx: Context) -> dict[str, pd.DataFrame]:
    statements = ctx["statements"]
    filed_of = instance_filing_days(ctx.glob(INSTANCE_FACTS), ctx["filings_index"], ctx["facts"])
    seg = pd.read_csv(ctx.source(SEGMENT_FACTS), dtype=str)
    accessions = instance_accessions(filed_of, ctx["known_filings"])
    items, fin = build_segments(seg, filed_of, statements, accessions)
    other = build_statement_segments(statement_segment_facts(ctx.glob(INSTANCE_FACTS)), filed_of, statements,
                                     accessions)  # fmt: skip
    fin = pd.concat([fin, other], ignore_index=True) if len(other) else fin
    return {
        "segmented_revenues": with_fiscal_labels(items, statements),
        "segmented_financials": with_fiscal_labels(fin, statements),
    }


_PROVENANCE_REVENUES = Provenance(
    "segments/segment_product_geography_revenue_from_xbrl.csv (dimensional XBRL facts of the bundled "
    "10-K/10-Q instance documents)",
    SEC_PD,
    "revenue facts whose only dimensions are ProductOrService, BusinessSegments or Geographical axes (members "
    "separated by '|' or ';'); one row per item x member; labels are human (the member's words, a table of "
    "spellings camel case cannot tell - iPhone, 'Wearables, Home and Accessories' - and ISO country names), "
    "the raw member in xbrl_member; "
    "first filing kept, and only a period's own report (within 200 days of its end). Where an axis adds up "
    "to more than the period's revenue (+1%), subtotals (a member equal to the sum of two or more smaller "
    "ones: Apple's Product, NVIDIA's Data Center, Tesla's Automotive Revenues) are kept with is_subtotal "
    "true, each member below one naming it in parent_label (the smallest holding it; a subtotal cutting "
    "across another, Tesla's Sales and Services, is named by none); if the leaves still exceed the revenue, "
    "the first of these that brings them to it (1%) is left out: one or two memo members (NVIDIA's Singapore "
    "billing), a coarse breakdown of two or three members beside a finer one (Amazon's product/service "
    "split); if none does, the axis is ambiguous and left out of that report (Apple's FY2010 product lines "
    "mixed with its geographic segments). Without a revenue figure, subtotals are marked the same way. "
    "fiscal_period from the statement of the same (ticker, report_period, period), missing where the lake "
    "has no such statement. accession_number: that of the instance document's filing, the one filing of the "
    "company and form filed that day (and, where the file name gives the period end, reporting it) in the SEC "
    "submissions indexes or companyfacts (refdata.accessions); null where a report's items come from several "
    "documents or neither source covers the company (the bundled documents name no accession)",
)

_PROVENANCE_FINANCIALS = Provenance(
    "as segmented_revenues",
    SEC_PD,
    "revenue, gross profit, operating income by one product or segment member; from the instance documents' "
    "dimensional facts too, the balance sheet's total_assets (Assets) and inventory (InventoryNet) at the "
    "report's period end and the cash flow statement's capital_expenditure (ASC 280's "
    "SegmentExpenditureAdditionToLongLivedAssets, negated to the statements' outflow sign) and "
    "depreciation_and_amortization (DepreciationDepletionAndAmortization, else DepreciationAndAmortization) by "
    "one product or segment member, a period's own report only (the first document giving it); goodwill by "
    "segment, the most common of these disclosures, is no field of the statements and is left out; "
    "fiscal_period as for "
    "segmented_revenues; subtotals marked as there (revenue: only where the hierarchy reproduces the "
    "period's revenue, nothing marked or left out otherwise); accession_number as segmented_revenues (each row "
    "that of its own document), filing_url the EDGAR index of that filing (as on the statements), null without "
    "an accession",
)

SEGMENTS = Stage(
    "segments",
    "Segment revenue items and segmented line items from the dimensional XBRL facts",
    _segments,
    sources=(SEGMENT_FACTS, INSTANCE_FACTS),
    needs=("filings_index", "facts", "statements", "known_filings"),
    outputs=(
        dataset("segmented_revenues", _PROVENANCE_REVENUES, schema=None, typed=typed_segment_items),
        dataset("segmented_financials", _PROVENANCE_FINANCIALS, schema=None, typed=typed_segmented_financials),
    ),
)

STAGES = (SEGMENTS,)
