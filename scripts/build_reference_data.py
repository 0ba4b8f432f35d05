#!/usr/bin/env python3
"""Build the reference lake ``data/`` from the real public data in ``../shared/data-real``.

Usage::

    python scripts/build_reference_data.py [SOURCE_DIR] [--out data]

Deterministic: the same sources give the same rows (``tests/test_reference_data.py`` rebuilds into a temporary
directory and compares every dataset row for row). Every output dataset, its sources, licences, row counts and
date ranges are written to ``data/SOURCES.md``; the us-gaap concept -> field mapping is in ``data/CONCEPTS.md``.
Nothing here is invented: values are copied, re-based (prices), differenced (fiscal Q4, quarterly cash flows),
summed (TTM) or computed by a documented formula (metrics, estimates, earnings summaries).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import reference_universe as ru  # noqa: E402

from fdkit.catalog.schema import METRIC_FIELDS, OWNERSHIP_FORMS, SCHEMAS, STATEMENT_FIELDS  # noqa: E402
from fdkit.lake.io import read_dataset, write_dataset  # noqa: E402
from fdkit.research.ratios import compute_ratios  # noqa: E402
from fdkit.research.sessions import EASTERN, edgar_filing_date  # noqa: E402

SEC = "https://www.sec.gov"

# ---------------------------------------------------------------------------------------------------------
# us-gaap concept -> statement field (first concept present wins; documented in data/CONCEPTS.md)
# ---------------------------------------------------------------------------------------------------------
CONCEPTS: dict[str, list[str]] = {
    # income statement (durations)
    "revenue": ["Revenues", "RevenueFromContractWithCustomerExcludingAssessedTax", "SalesRevenueNet",
                "RevenueFromContractWithCustomerIncludingAssessedTax", "SalesRevenueGoodsNet"],
    "cost_of_revenue": ["CostOfGoodsAndServicesSold", "CostOfRevenue", "CostOfGoodsSold",
                        "CostOfGoodsAndServiceExcludingDepreciationDepletionAndAmortization"],
    "gross_profit": ["GrossProfit"],
    "research_and_development": ["ResearchAndDevelopmentExpense",
                                 "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost"],
    "selling_general_and_administrative_expenses": ["SellingGeneralAndAdministrativeExpense"],
    "operating_expense": ["OperatingExpenses", "CostsAndExpenses"],
    "operating_income": ["OperatingIncomeLoss"],
    "interest_expense": ["InterestExpense", "InterestExpenseNonoperating", "InterestExpenseDebt"],
    "pretax_income": ["IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
                      "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments"],
    "income_tax_expense": ["IncomeTaxExpenseBenefit"],
    "net_income_discontinued_operations": ["IncomeLossFromDiscontinuedOperationsNetOfTax"],
    "net_income_non_controlling_interests": ["NetIncomeLossAttributableToNoncontrollingInterest"],
    "net_income": ["NetIncomeLoss", "ProfitLoss"],
    "net_income_common_stock": ["NetIncomeLossAvailableToCommonStockholdersBasic"],
    "preferred_dividends_impact": ["PreferredStockDividendsIncomeStatementImpact"],
    "consolidated_income": ["ProfitLoss"],
    "earnings_per_share": ["EarningsPerShareBasic"],
    "earnings_per_share_diluted": ["EarningsPerShareDiluted"],
    "dividends_per_common_share": ["CommonStockDividendsPerShareDeclared", "CommonStockDividendsPerShareCashPaid"],
    "weighted_average_shares": ["WeightedAverageNumberOfSharesOutstandingBasic"],
    "weighted_average_shares_diluted": ["WeightedAverageNumberOfDilutedSharesOutstanding"],
    # balance sheet (instants)
    "total_assets": ["Assets"],
    "current_assets": ["AssetsCurrent"],
    "cash_and_equivalents": ["CashAndCashEquivalentsAtCarryingValue", "CashAndDueFromBanks",
                             "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"],
    "inventory": ["InventoryNet"],
    "current_investments": ["MarketableSecuritiesCurrent", "AvailableForSaleSecuritiesDebtSecuritiesCurrent",
                            "ShortTermInvestments"],
    "accounts_receivable": ["AccountsReceivableNetCurrent"],
    "nontrade_receivables": ["NontradeReceivablesCurrent"],
    "non_current_assets": ["AssetsNoncurrent"],
    "property_plant_and_equipment": ["PropertyPlantAndEquipmentNet",
                                     "PropertyPlantAndEquipmentAndFinanceLeaseRightOfUseAssetAfterAccumulatedDepreciationAndAmortization"],
    "goodwill": ["Goodwill"],
    "intangibles": ["IntangibleAssetsNetExcludingGoodwill", "FiniteLivedIntangibleAssetsNet"],
    "non_current_investments": ["MarketableSecuritiesNoncurrent", "LongTermInvestments",
                                "AvailableForSaleSecuritiesDebtSecuritiesNoncurrent"],
    "outstanding_shares": ["CommonStockSharesOutstanding"],
    "tax_assets": ["DeferredIncomeTaxAssetsNet", "DeferredTaxAssetsNet"],
    "total_liabilities": ["Liabilities"],
    "current_liabilities": ["LiabilitiesCurrent"],
    "debt_current": ["DebtCurrent"],
    "long_term_debt_current": ["LongTermDebtCurrent", "LongTermDebtAndCapitalLeaseObligationsCurrent"],
    "commercial_paper": ["CommercialPaper", "ShortTermBorrowings"],
    "trade_and_non_trade_payables": ["AccountsPayableCurrent", "AccountsPayableAndAccruedLiabilitiesCurrent"],
    "deferred_revenue": ["ContractWithCustomerLiabilityCurrent", "DeferredRevenueCurrent"],
    "deposit_liabilities": ["Deposits"],
    "non_current_liabilities": ["LiabilitiesNoncurrent"],
    "non_current_debt": ["LongTermDebtNoncurrent", "LongTermDebtAndCapitalLeaseObligations"],
    "tax_liabilities": ["AccruedIncomeTaxesNoncurrent", "DeferredTaxLiabilitiesNoncurrent",
                        "DeferredIncomeTaxLiabilitiesNet"],
    # equity including minority interest: assets = liabilities + equity holds with it
    "shareholders_equity": ["StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
                            "StockholdersEquity"],
    "retained_earnings": ["RetainedEarningsAccumulatedDeficit"],
    "accumulated_other_comprehensive_income": ["AccumulatedOtherComprehensiveIncomeLossNetOfTax"],
    "liabilities_and_equity": ["LiabilitiesAndStockholdersEquity"],
    # cash flow (durations)
    "depreciation_and_amortization": ["DepreciationDepletionAndAmortization", "DepreciationAmortizationAndOther",
                                      "DepreciationAndAmortization", "Depreciation"],
    "share_based_compensation": ["ShareBasedCompensation", "AllocatedShareBasedCompensationExpense"],
    "net_cash_flow_from_operations": ["NetCashProvidedByUsedInOperatingActivities"],
    "capex_payments": ["PaymentsToAcquirePropertyPlantAndEquipment", "PaymentsToAcquireProductiveAssets"],
    "acquisitions_payments": ["PaymentsToAcquireBusinessesNetOfCashAcquired"],
    "investment_payments": ["PaymentsToAcquireAvailableForSaleSecuritiesDebt", "PaymentsToAcquireInvestments",
                            "PaymentsToAcquireMarketableSecurities"],
    "investment_proceeds_maturities": ["ProceedsFromMaturitiesPrepaymentsAndCallsOfAvailableForSaleSecurities",
                                       "ProceedsFromSaleMaturityAndCollectionsOfInvestments"],
    "investment_proceeds_sales": ["ProceedsFromSaleOfAvailableForSaleSecuritiesDebt"],
    "net_cash_flow_from_investing": ["NetCashProvidedByUsedInInvestingActivities"],
    "debt_issued": ["ProceedsFromIssuanceOfLongTermDebt"],
    "debt_repaid": ["RepaymentsOfLongTermDebt"],
    "commercial_paper_net": ["ProceedsFromRepaymentsOfCommercialPaper"],
    "stock_issued": ["ProceedsFromIssuanceOfCommonStock"],
    "stock_repurchased": ["PaymentsForRepurchaseOfCommonStock"],
    "dividends_paid": ["PaymentsOfDividends", "PaymentsOfDividendsCommonStock"],
    "net_cash_flow_from_financing": ["NetCashProvidedByUsedInFinancingActivities"],
    "change_in_cash_and_equivalents": [
        "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalentsPeriodIncreaseDecreaseIncludingExchangeRateEffect",
        "CashAndCashEquivalentsPeriodIncreaseDecrease"],
    "effect_of_exchange_rate_changes": [
        "EffectOfExchangeRateOnCashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
        "EffectOfExchangeRateOnCashAndCashEquivalents"],
    "ending_cash_balance": ["CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
                            "CashAndCashEquivalentsAtCarryingValue"],
}  # fmt: skip

INSTANT_FIELDS = {
    "total_assets", "current_assets", "cash_and_equivalents", "inventory", "current_investments", "accounts_receivable",
    "nontrade_receivables", "non_current_assets", "property_plant_and_equipment", "goodwill", "intangibles",
    "non_current_investments", "outstanding_shares", "tax_assets", "total_liabilities", "current_liabilities",
    "debt_current", "long_term_debt_current", "commercial_paper", "trade_and_non_trade_payables", "deferred_revenue",
    "deposit_liabilities", "non_current_liabilities", "non_current_debt", "tax_liabilities", "shareholders_equity",
    "retained_earnings", "accumulated_other_comprehensive_income", "liabilities_and_equity", "ending_cash_balance",
}  # fmt: skip
PER_SHARE = {"earnings_per_share", "earnings_per_share_diluted", "dividends_per_common_share"}
SHARE_COUNTS = {"weighted_average_shares", "weighted_average_shares_diluted"}
STATEMENT_FORMS = {"10-K", "10-Q", "10-K/A", "10-Q/A", "10-KT"}
CONCEPT_ORDER = {c: i for f, cs in CONCEPTS.items() for i, c in enumerate(cs)}


def _duration_kind(days: float) -> str | None:
    if 80 <= days <= 100:
        return "Q"
    if 170 <= days <= 200:
        return "H"
    if 260 <= days <= 290:
        return "9M"
    if 350 <= days <= 380:
        return "FY"
    return None


# ---------------------------------------------------------------------------------------------------------
# facts
# ---------------------------------------------------------------------------------------------------------
def companyfacts_facts(src: Path) -> pd.DataFrame:
    """Long facts from the SEC companyfacts JSONs (us-gaap + dei), first filing of each fact kept."""
    rows = []
    for path in sorted((src / "fundamentals/sec_companyfacts").glob("CIK*.json.gz")):
        ticker = path.name.split("_", 1)[1].split(".")[0]
        data = json.loads(gzip.decompress(path.read_bytes()))
        for tax in ("us-gaap", "dei"):
            for concept, body in data["facts"].get(tax, {}).items():
                for unit, facts in body.get("units", {}).items():
                    for f in facts:
                        rows.append((ticker, concept, unit, f.get("start"), f["end"], f["val"], f.get("accn"),
                                     f.get("form"), f.get("filed"), f.get("fy"), f.get("fp")))  # fmt: skip
    df = pd.DataFrame(rows, columns=["ticker", "concept", "unit", "start", "end", "val", "accn", "form", "filed",
                                     "fy", "fp"])  # fmt: skip
    df["source"] = "companyfacts"
    return df


def _filings_index(src: Path) -> pd.DataFrame:
    frames = [pd.read_csv(p, dtype=str) for p in sorted((src / "company/sec_submissions").glob("*_index.csv"))]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def instance_facts(src: Path, skip: set[str], index: pd.DataFrame) -> pd.DataFrame:
    """Non-dimensional facts of the bundled XBRL instance documents (tickers without companyfacts)."""
    rows = []
    for path in sorted((src / "fundamentals/xbrl_instance_facts").glob("*_*.csv.gz")):
        stem = path.name[: -len(".csv.gz")]
        ticker, form = stem.split("_")[0], stem.split("_")[1]
        if ticker in skip or ticker == "UNP":
            continue
        m = re.search(r"filed(\d{4}-\d{2}-\d{2})", stem)
        filed = m.group(1) if m else None
        facts = pd.read_csv(path, dtype={"value": str, "dimensions": str})
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
        if filed is None:  # no filing date in the bundle: cannot be placed in time, left out
            continue
        facts = facts[facts["dimensions"].isna() & facts["concept"].str.startswith(("us-gaap:", "dei:"))]
        for r in facts.itertuples(index=False):
            try:
                val = float(r.value)
            except (TypeError, ValueError):
                continue
            start = None if (r.instant is True or str(r.instant) == "True") else r.period_start
            rows.append((ticker, r.concept.split(":", 1)[1], r.unit if isinstance(r.unit, str) else "", start,
                         r.period_end, val, accn, form, filed, None, None))  # fmt: skip
    df = pd.DataFrame(rows, columns=["ticker", "concept", "unit", "start", "end", "val", "accn", "form", "filed",
                                     "fy", "fp"])  # fmt: skip
    df["source"] = "xbrl_instance"
    return df


def first_reported(facts: pd.DataFrame) -> pd.DataFrame:
    """One row per (ticker, concept, start, end): the value and filing that first reported it."""
    df = every_report(facts)
    df = df.drop_duplicates(["ticker", "concept", "start", "end"], keep="first")
    df["days"] = (df["end"] - df["start"]).dt.days + 1
    df["kind"] = [None if pd.isna(d) else _duration_kind(d) for d in df["days"]]
    return df.reset_index(drop=True)


def every_report(facts: pd.DataFrame) -> pd.DataFrame:
    """Statement facts in USD, USD/shares or shares, typed and ordered by (ticker, concept, period, filing)."""
    df = facts[facts["form"].isin(STATEMENT_FORMS)].copy()
    df = df[df["unit"].isin(["USD", "USD/shares", "shares"]) | (df["unit"] == "")]
    df["start"] = pd.to_datetime(df["start"])
    df["end"] = pd.to_datetime(df["end"])
    df["filed"] = pd.to_datetime(df["filed"])
    return df.sort_values(["ticker", "concept", "start", "end", "filed", "accn"], na_position="first", kind="stable")


def build_vintages(facts: pd.DataFrame, pystock: pd.DataFrame) -> pd.DataFrame:
    """Every reported value of a statement field with the filing that reported it: the first report and each
    later filing that changed it (a restatement, or a prior-year comparative reported differently).

    XBRL facts (all filings of companyfacts, the instance documents): fiscal-year and 3-month durations and
    period-end instants, the field's first concept that the filing reported; per-share values and share counts
    on the split basis (``facts`` arrive adjusted). pystock reports: each sighting whose values changed.
    Derived rows (a fiscal Q4 = FY - 9M, TTM) have no vintages of their own."""
    per_field = []
    for field, concepts in CONCEPTS.items():  # a concept may feed two fields (ProfitLoss)
        if field in _SCHEMA_FIELDS:
            rank = {c: i for i, c in enumerate(concepts)}
            hit = facts[facts["concept"].isin(rank)]
            per_field.append(hit.assign(field=field, rank=hit["concept"].map(rank)))
    df = pd.concat(per_field, ignore_index=True)
    df["days"] = (df["end"] - df["start"]).dt.days + 1
    kind = df["days"].map(lambda d: None if pd.isna(d) else _duration_kind(d))
    instant = df["field"].isin(INSTANT_FIELDS) & df["start"].isna()
    df["period"] = np.where(instant, "instant", np.where(kind == "FY", "annual", np.where(kind == "Q", "quarterly",
                                                                                         None)))  # fmt: skip
    df = df[df["period"].notna() & (instant | ~df["field"].isin(INSTANT_FIELDS))]
    # one value per (filing, field, period): the first concept of the mapping that the filing reported
    df = df.sort_values(["ticker", "field", "period", "end", "filed", "accn", "rank"], kind="stable")
    df = df.drop_duplicates(["ticker", "field", "period", "end", "accn"], keep="first")
    xbrl = pd.DataFrame({"ticker": df["ticker"], "period": df["period"], "report_period": df["end"],
                         "field": df["field"], "value": df["val"].astype(float), "filing_date": df["filed"],
                         "accession_number": df["accn"], "form_type": df["form"]})  # fmt: skip
    out = pd.concat([xbrl, pystock], ignore_index=True)
    out = out.sort_values(["ticker", "field", "period", "report_period", "filing_date", "accession_number"],
                          kind="stable", na_position="first").reset_index(drop=True)  # fmt: skip
    key = ["ticker", "field", "period", "report_period"]
    prev = out.groupby(key, sort=False)["value"].shift()
    changed = prev.isna() | ((out["value"] - prev).abs() > 1e-9 * out["value"].abs().clip(lower=1.0))
    return out[changed].reset_index(drop=True)


_SCHEMA_FIELDS = {f for name in STATEMENT_FIELDS for f in STATEMENT_FIELDS[name]}


# ---------------------------------------------------------------------------------------------------------
# statements
# ---------------------------------------------------------------------------------------------------------
#: a statement row is its period's own report: the filing that first reported the period must come within this many
#: days of the period end (a later first report is a comparative in a later filing whose own report predates XBRL)
MAX_FILING_LAG = 200
#: the flows whose first report dates a period (the filing that first gave its revenue or net income)
_ANCHORS = set(CONCEPTS["revenue"] + CONCEPTS["net_income"])


fiscal_label = ru.fiscal_label


def fiscal_calendar(facts: pd.DataFrame) -> pd.DataFrame:
    """Fiscal years (start, end) per ticker with the fact of the filing that first reported each (its anchor)."""
    flows = facts[facts["concept"].isin(_ANCHORS) & (facts["kind"] == "FY")]
    flows = flows.sort_values(["ticker", "end", "filed", "accn"], kind="stable")
    years = flows.drop_duplicates(["ticker", "end"], keep="first")
    return years.reset_index(drop=True)


def _lag_ok(anchor, end) -> bool:
    return anchor is not None and 1 <= (anchor.filed - end).days <= MAX_FILING_LAG


def _pick(facts_by_key: dict, field: str, start, end, cutoff):
    """First concept of ``field`` with a fact for exactly (start, end) (instant: end only) filed by ``cutoff``."""
    for concept in CONCEPTS[field]:
        hit = facts_by_key.get((concept, None if field in INSTANT_FIELDS else start, end))
        if hit is not None and hit.filed <= cutoff:
            return hit
    return None


def _quarter_anchors(anchors: list, fy_start, fy_end) -> list:
    """The anchor facts of fiscal quarters 1-3 (None where the data has no report for the quarter).

    Quarter n ends about 3n months after the fiscal year starts (52/53-week calendars move ends by days, so a
    report is matched within 20 days). A quarter is reported by a 3-month flow starting in the year or by a
    year-to-date flow starting on the first day of the year; of several reports, the first filed wins."""
    out = []
    for n in (1, 2, 3):
        expected = fy_start + pd.DateOffset(months=3 * n) - pd.Timedelta(days=1)
        cands = [f for f in anchors if abs((f.end - expected).days) <= 20
                 and ((f.kind == "Q" and f.start >= fy_start - pd.Timedelta(days=5))
                      or (f.start == fy_start and f.kind in ("Q", "H", "9M")))]  # fmt: skip
        out.append(min(cands, key=lambda f: (f.filed, str(f.accn), f.end)) if cands else None)
    return out


def build_statements(facts: pd.DataFrame) -> pd.DataFrame:
    """Annual and quarterly statement rows (+ filing metadata) for every ticker with facts.

    Every row is dated by its anchor, the filing that first reported the period, and uses only facts filed by
    then: a later restatement never leaks into an earlier row. Quarters are labelled by the filer's fiscal
    calendar (the number of 3-month steps from the start of the fiscal year), never by the calendar month."""
    out_rows: list[dict] = []
    for ticker, tf in facts.groupby("ticker", sort=True):
        by_key = {}
        for r in tf.itertuples(index=False):
            by_key[(r.concept, None if pd.isna(r.start) else r.start, r.end)] = r
        durations = _index_durations(by_key)
        anchors = [r for r in tf.itertuples(index=False) if r.concept in _ANCHORS and r.kind is not None]
        for y in fiscal_calendar(tf).itertuples(index=False):
            fy_start, fy_end, label = y.start, y.end, fiscal_label(y.end)
            if _lag_ok(y, fy_end):
                rec = _statement_row(ticker, by_key, fy_start, fy_end, "annual", f"FY{label}", y)
                if rec:
                    out_rows.append(rec)
            qa = _quarter_anchors(anchors, fy_start, fy_end)
            q4 = [f for f in anchors if f.end == fy_end and f.kind == "Q"] + [y]
            qa.append(min(q4, key=lambda f: (f.filed, str(f.accn))))
            for qi, anchor in enumerate(qa, start=1):
                if anchor is None or not _lag_ok(anchor, anchor.end):
                    continue
                prev = qa[qi - 2].end if qi > 1 and qa[qi - 2] is not None else None
                rec = _quarter_row(ticker, by_key, durations, fy_start, anchor.end, prev, qi, label, anchor)
                if rec:
                    out_rows.append(rec)
    df = pd.DataFrame(out_rows)
    df = _fix_share_scale(df)
    return _derive_fields(_q4_closes_the_year(df))


def _q4_closes_the_year(df: pd.DataFrame) -> pd.DataFrame:
    """A fiscal Q4's flows = the year's - the three first-reported quarters of the same fiscal year, so the four
    quarters always add up to the year (FY - 9M would differ where a quarter was restated before the 9M report)."""
    flows = [f for f in _FLOW_FIELDS if f in df.columns]
    label = df["fiscal_period"].astype(str)
    year = label.str.extract(r"^(FY\d{4})")[0]
    q = df[df["period"] == "quarterly"]
    for (ticker, fy), g in q.groupby([q["ticker"], year[q.index]]):
        n = label[g.index].str[-1]
        if sorted(n) != ["1", "2", "3", "4"]:
            continue
        annual = df[(df["ticker"] == ticker) & (df["period"] == "annual") & (label == fy)]
        if len(annual) != 1:
            continue
        q4 = g.index[n == "4"][0]
        first3 = g.loc[n != "4", flows]
        df.loc[q4, flows] = (annual.iloc[0][flows] - first3.sum(min_count=3)).to_numpy(dtype=float)
    return df


def _meta(anchor) -> dict:
    """Filing metadata of a statement row: the filing that first reported its period."""
    return {"filing_date": anchor.filed, "accession_number": anchor.accn, "form_type": anchor.form}


def _statement_row(ticker, by_key, start, end, period, fiscal_period, anchor) -> dict | None:
    rec: dict = {"ticker": ticker, "report_period": end, "period": period, "fiscal_period": fiscal_period,
                 "currency": "USD"}  # fmt: skip
    for field in CONCEPTS:
        f = _pick(by_key, field, start, end, anchor.filed)
        if f is not None:
            rec[field] = float(f.val)
    if "revenue" not in rec and "net_income" not in rec:
        return None
    rec.update(_meta(anchor))
    return rec


def _quarter_row(ticker, by_key, durations, fy_start, q_end, prev_end, qi, fy_label, anchor) -> dict | None:
    """A fiscal quarter: direct 3-month facts, else YTD(q_end) - YTD(prev_end); instants at q_end. Only facts
    filed by the anchor's filing are used; a derived Q4 is FY - 9M of the same fiscal year."""
    cutoff = anchor.filed
    rec: dict = {"ticker": ticker, "report_period": q_end, "period": "quarterly",
                 "fiscal_period": f"FY{fy_label}-Q{qi}", "currency": "USD"}  # fmt: skip
    for field in CONCEPTS:
        if field in INSTANT_FIELDS:
            hit = _pick(by_key, field, None, q_end, cutoff)
            if hit is not None:
                rec[field] = float(hit.val)
            continue
        direct = None
        for c in CONCEPTS[field]:
            for f in durations.get((c, q_end), ()):
                if f.kind == "Q" and f.filed <= cutoff and f.start >= fy_start - pd.Timedelta(days=5):
                    direct = f
                    break
            if direct is not None:
                break
        if direct is not None:
            rec[field] = float(direct.val)
            continue
        cur = _pick(by_key, field, fy_start, q_end, cutoff)
        if field in SHARE_COUNTS:  # not additive: a quarter not reported directly has no share count of its own
            continue
        if cur is None:
            continue
        if qi == 1:
            if cur.kind == "Q":
                rec[field] = float(cur.val)
            continue
        if prev_end is None:
            continue
        prev = _pick(by_key, field, fy_start, prev_end, cutoff)
        if prev is None or prev.kind is None:
            continue
        rec[field] = float(cur.val) - float(prev.val)
    if "revenue" not in rec and "net_income" not in rec:
        return None
    rec.update(_meta(anchor))
    return rec


def _fix_share_scale(df: pd.DataFrame) -> pd.DataFrame:
    """Share counts tagged in thousands (NVDA's early XBRL: 550,108 for 550 million shares): where EPS x shares
    x 1,000 gives net income within 3% (and x 1 does not), the count is scaled by 1,000 (documented in
    CONCEPTS.md)."""
    if df.empty:
        return df
    ni = df["net_income"]
    for eps, shares in (("earnings_per_share", "weighted_average_shares"),
                        ("earnings_per_share_diluted", "weighted_average_shares_diluted")):  # fmt: skip
        if eps not in df.columns or shares not in df.columns:
            continue
        implied = df[eps] * df[shares]
        thousands = ((implied * 1000 - ni).abs() <= 0.03 * ni.abs()) & ((implied - ni).abs() > 0.5 * ni.abs())
        df.loc[thousands, shares] = df.loc[thousands, shares] * 1000
    return df


def _index_durations(by_key: dict) -> dict:
    """Duration facts by (concept, end), to find the facts ending on a date."""
    idx = defaultdict(list)
    for (c, s, e), f in by_key.items():
        if s is not None:
            idx[(c, e)].append(f)
    return idx


def finish_statements(rows: pd.DataFrame, src: Path, members: pd.DataFrame) -> pd.DataFrame:
    """TTM rows, the CIK, a filing URL and (where the submissions index has it) the acceptance time on every row,
    sorted: the statement table every dataset is cut from."""
    rows = _without_quarter_holes(rows)
    ttm = _ttm(rows)
    full = pd.concat([rows, ttm], ignore_index=True)
    full["cik"] = full["ticker"].map(company_ciks(src, members))
    acc = full["accession_number"].astype("string")
    cik_int = full["cik"].str.lstrip("0")
    filed = pd.to_datetime(full["filing_date"]).dt.strftime("%Y%m%d")
    by_accession = SEC + "/Archives/edgar/data/" + cik_int + "/" + acc.str.replace("-", "", regex=False) + "/" \
        + acc + "-index.htm"  # fmt: skip
    # no accession in the source (pystock reports, some instance documents): the company's filings of that
    # form up to the filing day, newest first, so the filing is the first entry
    form = full["form_type"].fillna("10-Q").astype(str)
    by_search = (SEC + "/cgi-bin/browse-edgar?action=getcompany&CIK=" + full["cik"] + "&type=" + form
                 + "&dateb=" + filed + "&owner=include&count=10")  # fmt: skip
    full["filing_url"] = by_accession.where(acc.notna(), by_search)
    full["filing_datetime"] = iso_times(acceptance_times(full["accession_number"], _filings_index(src)))
    return full.sort_values(["ticker", "period", "report_period"], kind="stable").reset_index(drop=True)


def _without_quarter_holes(rows: pd.DataFrame) -> pd.DataFrame:
    """No skipped quarter inside a covered span: where a ticker's quarters have a hole (a gap of 4 to 13 months),
    only the longest contiguous run of that span is kept (a later one on ties). A gap over 13 months separates
    spans (different sources or eras), each handled alone. A hole would make every row-offset computation
    (growth, TTM) compare the wrong quarters."""
    q = rows[rows["period"] == "quarterly"].sort_values(["ticker", "report_period"])
    drop = []
    for _, g in q.groupby("ticker", sort=False):
        gap = g["report_period"].diff().dt.days.to_numpy()
        run = np.cumsum(~((gap >= 77) & (gap <= 105)))  # a new run after every gap that is not one quarter
        span = np.cumsum(~(gap <= 400))  # a new span after every gap of over 13 months (NaN starts both)
        frame = pd.DataFrame({"run": run, "span": span}, index=g.index)
        for _, sp in frame.groupby("span"):
            sizes = sp.groupby("run").size()
            if len(sizes) > 1:
                best = sizes[sizes == sizes.max()].index.max()
                drop.extend(sp.index[sp["run"] != best])
    return rows.drop(index=drop)


def company_ciks(src: Path, members: pd.DataFrame) -> dict[str, str]:
    """Ticker -> 10-digit CIK: the universe file, the S&P 500 list, then the SEC ticker file."""
    out: dict[str, str] = {}
    sec = pd.read_csv(src / "company/sec_company_tickers.csv", dtype=str)
    for t, c in zip(sec["ticker"].str.replace(".", "-", regex=False), sec["cik"], strict=True):
        out.setdefault(t, c.zfill(10))
    for t, c in zip(members["ticker"], members["cik"], strict=True):
        out[t] = c
    uni = pd.read_csv(src / "company/universe.csv", dtype=str)
    for t, c in zip(uni["Symbol"].str.replace(".", "-", regex=False), uni["CIK"], strict=True):
        if isinstance(c, str) and c:
            out[t] = c.split(".")[0].zfill(10)
    return out


def _sum(*cols: pd.Series) -> pd.Series:
    stacked = pd.concat(cols, axis=1)
    return stacked.sum(axis=1, min_count=1)


def _derive_fields(df: pd.DataFrame) -> pd.DataFrame:
    """Fields that are sums/differences of concepts (documented in CONCEPTS.md)."""
    g = lambda c: df[c] if c in df.columns else pd.Series(np.nan, index=df.index)  # noqa: E731
    df["gross_profit"] = g("gross_profit").fillna(g("revenue") - g("cost_of_revenue"))
    df["operating_expense"] = g("operating_expense").fillna(
        _sum(g("research_and_development"), g("selling_general_and_administrative_expenses"))
    )
    df["ebit"] = (g("pretax_income") + g("interest_expense").fillna(0.0)).fillna(g("operating_income"))
    df["net_income_common_stock"] = g("net_income_common_stock").fillna(g("net_income"))
    df["consolidated_income"] = g("consolidated_income").fillna(g("net_income"))
    df["trade_and_non_trade_receivables"] = _sum(g("accounts_receivable"), g("nontrade_receivables"))
    df["goodwill_and_intangible_assets"] = _sum(g("goodwill"), g("intangibles"))
    df["investments"] = _sum(g("current_investments"), g("non_current_investments"))
    df["non_current_assets"] = g("non_current_assets").fillna(g("total_assets") - g("current_assets"))
    # mezzanine (temporary) equity, e.g. redeemable noncontrolling interests or convertible notes classified
    # outside equity, is counted with the liabilities: where the reported liabilities and equity do not add up to
    # the reported total, total_liabilities = liabilities and equity - equity (documented in CONCEPTS.md)
    le = g("liabilities_and_equity")
    mezzanine = (g("total_liabilities") + g("shareholders_equity") - le).abs() > 0.005 * le.abs()
    df["total_liabilities"] = g("total_liabilities").mask(mezzanine & le.notna(), le - g("shareholders_equity"))
    df["total_liabilities"] = df["total_liabilities"].fillna(le - g("shareholders_equity"))
    df["non_current_liabilities"] = g("non_current_liabilities").fillna(
        g("total_liabilities") - g("current_liabilities")
    )
    df["current_debt"] = g("debt_current").fillna(_sum(g("long_term_debt_current"), g("commercial_paper")))
    df["total_debt"] = _sum(g("current_debt"), g("non_current_debt"))
    df["capital_expenditure"] = -g("capex_payments")
    df["business_acquisitions_and_disposals"] = -g("acquisitions_payments")
    df["investment_acquisitions_and_disposals"] = _sum(
        -g("investment_payments"), g("investment_proceeds_maturities"), g("investment_proceeds_sales")
    )
    df["issuance_or_repayment_of_debt_securities"] = _sum(
        g("debt_issued"), -g("debt_repaid"), g("commercial_paper_net")
    )
    df["issuance_or_purchase_of_equity_shares"] = _sum(g("stock_issued"), -g("stock_repurchased"))
    df["dividends_and_other_cash_distributions"] = -g("dividends_paid")
    # missing inputs give a missing result, never a different formula (no capex reported: no free cash flow)
    df["free_cash_flow"] = g("net_cash_flow_from_operations") - g("capex_payments")
    return df


_FLOW_FIELDS = sorted({f for name in ("income_statements", "cash_flow_statements") for f in STATEMENT_FIELDS[name]}
                      - INSTANT_FIELDS - SHARE_COUNTS - {"dividends_per_common_share"})  # fmt: skip


def _ttm(df: pd.DataFrame) -> pd.DataFrame:
    """Trailing twelve months at each quarter end with four consecutive quarters: flows summed (EPS too),
    stocks and share counts from the latest quarter."""
    q = df[df["period"] == "quarterly"].sort_values(["ticker", "report_period"])
    rows = []
    for _, g in q.groupby("ticker", sort=True):
        g = g.reset_index(drop=True)
        for i in range(3, len(g)):
            window = g.iloc[i - 3 : i + 1]
            span = (window["report_period"].iloc[-1] - window["report_period"].iloc[0]).days
            if not 250 <= span <= 300:
                continue
            last = g.iloc[i].to_dict()
            rec = {k: last[k] for k in last}
            for f in _FLOW_FIELDS:
                if f in window.columns:
                    vals = window[f]
                    rec[f] = float(vals.sum()) if vals.notna().all() else np.nan
            rec["period"] = "ttm"
            rec["fiscal_period"] = f"TTM-{last['fiscal_period']}"
            rec["form_type"] = None  # a sum of four filings is no one filing's form
            rows.append(rec)
    return pd.DataFrame(rows, columns=df.columns)


# ---------------------------------------------------------------------------------------------------------
# prices
# ---------------------------------------------------------------------------------------------------------
def build_prices(src: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Daily bars of the universe on one basis: split- and dividend-adjusted as of 2026-02-25 (yfinance
    auto_adjust). 2003-2021 comes from the 2003-2023 file re-based onto that basis per ticker."""
    new = pd.read_csv(src / "prices/us_equities_daily_adj_2021_2026.csv.gz", parse_dates=["date"])
    old = pd.read_csv(src / "prices/us_equities_daily_2003_2023.csv.gz", parse_dates=["date"])
    etf = pd.read_csv(src / "prices/etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX.csv.gz", parse_dates=["date"])
    # ^VIX is an index level, not a traded price; the file's last session (2026-03-26) is an incomplete download
    # (zero volumes, closes copied across tickers), so it is left out
    etf = etf[(etf["ticker"] != "^VIX") & (etf["date"] < etf["date"].max())]
    parts, factors = [], []
    for ticker, n in new.groupby("ticker", sort=True):
        o = old[old["ticker"] == ticker]
        if len(o):
            overlap = o.merge(n[["date", "close", "volume"]], on="date", suffixes=("", "_new"))
            price_factor = float(np.median(overlap["close_new"] / overlap["adj_close"]))
            # later splits: the overlap's volume ratio is the split ratio (closes also carry dividends, so
            # rounding their ratio gave AVGO 11 instead of 10)
            split = float(np.median(overlap["volume_new"] / overlap["volume"]))
            split = max(1.0, round(split)) if split > 1.5 else 1.0
            early = o[o["date"] < n["date"].min()].copy()
            k = early["adj_close"] / early["close"] * price_factor
            for col in ("open", "high", "low", "close"):
                early[col] = early[col] * k
            early["volume"] = (early["volume"] * split).round()
            parts.append(early[["ticker", "date", "open", "high", "low", "close", "volume"]])
            factors.append({"ticker": ticker, "price_factor": price_factor, "split_factor": split,
                            "overlap_days": len(overlap)})  # fmt: skip
        parts.append(n)
    parts.append(etf[["ticker", "date", "open", "high", "low", "close", "volume"]])
    daily = pd.concat(parts, ignore_index=True).sort_values(["ticker", "date"], kind="stable")
    daily = daily.drop_duplicates(["ticker", "date"], keep="last")
    for col in ("open", "high", "low", "close"):
        daily[col] = daily[col].round(4)
    daily["time"] = daily["date"].dt.tz_localize("UTC")
    daily["volume"] = daily["volume"].round().astype("Int64")
    return daily.drop(columns=["date"]).reset_index(drop=True), pd.DataFrame(factors)


def build_minute_prices(src: Path, daily: pd.DataFrame) -> pd.DataFrame:
    """LEAN minute bars (raw, US/Eastern) on the daily basis: each day scaled by adjusted close / raw close."""
    m = pd.read_csv(src / "prices/lean_minute_trade_bars_AAPL_SPY.csv")
    raw_daily = pd.read_csv(src / "prices/lean_daily_raw_unadjusted.csv.gz", parse_dates=["date"])
    m["ts"] = pd.to_datetime(m["datetime_et"]).dt.tz_localize("America/New_York").dt.tz_convert("UTC")
    m["date"] = pd.to_datetime(m["datetime_et"].str[:10])
    adj = daily.assign(date=daily["time"].dt.tz_localize(None))[["ticker", "date", "close", "volume"]]
    scale = raw_daily[["ticker", "date", "close", "volume"]].merge(
        adj, on=["ticker", "date"], suffixes=("_raw", "_adj")
    )
    scale["k"] = scale["close_adj"] / scale["close_raw"]
    # volumes on the daily basis are split-adjusted: the day's adjusted/raw volume ratio is the split ratio
    scale["split"] = (scale["volume_adj"].astype(float) / scale["volume_raw"]).round().clip(lower=1)
    m = m.merge(scale[["ticker", "date", "k", "split"]], on=["ticker", "date"], how="inner")
    for col in ("open", "high", "low", "close"):
        m[col] = (m[col] * m["k"]).round(4)
    m["volume"] = (m["volume"] * m["split"]).round()
    out = m[["ticker", "ts", "open", "high", "low", "close", "volume"]].rename(columns={"ts": "time"})
    out["volume"] = out["volume"].astype("Int64")
    return out.sort_values(["ticker", "time"]).reset_index(drop=True)


def build_crypto(src: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Crypto daily bars (Yahoo, UTC days; 2014-2020 from the older file) and Coinbase minute bars (UTC)."""
    new = pd.read_csv(src / "crypto/btc_eth_sol_usd_daily_yahoo_2021_2026.csv", parse_dates=["date"])
    old = pd.read_csv(src / "crypto/btc_eth_usd_daily_yahoo_2014_2022.csv", parse_dates=["date"])
    old = old[old["date"] < new["date"].min()]
    daily = pd.concat([old.drop(columns=["adj_close"]), new], ignore_index=True).rename(columns={"symbol": "ticker"})
    daily = daily.dropna(subset=["close"]).sort_values(["ticker", "date"]).drop_duplicates(["ticker", "date"])
    daily["time"] = daily["date"].dt.tz_localize("UTC")
    minute = pd.read_csv(src / "crypto/lean_coinbase_minute_trades_BTC_ETH.csv.gz")
    minute["ticker"] = minute["symbol"].str.replace("USD", "-USD", regex=False)
    minute["time"] = pd.to_datetime(minute["datetime_utc"]).dt.tz_localize("UTC")
    cols = ["ticker", "time", "open", "high", "low", "close", "volume"]
    return daily[cols].reset_index(drop=True), minute[cols].sort_values(["ticker", "time"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------------
# segments
# ---------------------------------------------------------------------------------------------------------
_AXES = {"srt:ProductOrServiceAxis": "product", "us-gaap:StatementBusinessSegmentsAxis": "segment",
         "srt:StatementGeographicalAxis": "geography", "us-gaap:StatementGeographicalAxis": "geography"}  # fmt: skip
_REVENUE = {"us-gaap:" + c for c in CONCEPTS["revenue"]}


#: member names whose label the filer spells in a way camel case cannot tell (as printed in the filings)
_MEMBER_LABELS = {
    "IPhone": "iPhone", "IPad": "iPad", "Service": "Services", "ServicesAndOther": "Services and Other",
    "WearablesHomeandAccessories": "Wearables, Home and Accessories", "OEMAndOther": "OEM and Other",
    "ChinaIncludingHongKong": "China (including Hong Kong)", "GreaterChina": "Greater China",
    "RestOfAsiaPacific": "Rest of Asia Pacific", "AsiaPacific": "Asia Pacific", "AppleIphone": "iPhone",
    "AppleIpad": "iPad", "AppleMac": "Mac", "Ipod": "iPod",
    "IphoneRelatedProductsAndServices": "iPhone and Related Products and Services",
    "IpadRelatedProductsAndServices": "iPad and Related Products and Services",
    "YouTubeAdvertisingRevenue": "YouTube Ads", "LinkedInCorporation": "LinkedIn", "MedTech": "MedTech",
    "USCanada": "US & Canada", "A.Pacific": "Asia Pacific", "MajorProductLineDcor": "Major Product Line Décor",
    "HealthandWellness": "Health and Wellness", "MexicoandCentralAmerica": "Mexico and Central America",
    "SamsClubUS": "Sam's Club US", "NonUs": "Non-US", "Unitedhealthcare": "UnitedHealthcare",
    "Optumhealth": "Optum Health", "Optuminsight": "Optum Insight", "Optumrx": "Optum Rx",
    "ReportableSegment": "Reportable Segment",
    "ReportableSegmentAggregationBeforeOtherOperatingSegment": "Reportable Segments before Other",
}  # fmt: skip
#: ISO 3166 country members (``country:US``)
_COUNTRIES = {
    "US": "United States", "CN": "China", "SG": "Singapore", "TW": "Taiwan", "JP": "Japan", "GB": "United Kingdom",
    "IE": "Ireland", "DE": "Germany", "FR": "France", "IN": "India", "KR": "South Korea", "HK": "Hong Kong",
    "CA": "Canada", "MX": "Mexico", "BR": "Brazil", "NL": "Netherlands", "CH": "Switzerland", "AU": "Australia",
    "IL": "Israel", "IT": "Italy", "ES": "Spain", "SE": "Sweden", "BE": "Belgium", "LU": "Luxembourg",
}  # fmt: skip
_CONNECTORS = {"And": "and", "Of": "of", "Including": "including", "The": "the", "For": "for", "To": "to"}


def _member_label(member: str) -> str:
    """The human label of an XBRL member: ``aapl:IPhoneMember`` -> ``iPhone``, ``srt:AmericasMember`` and
    ``aapl:AmericasSegmentMember`` -> ``Americas``, ``country:US`` -> ``United States``,
    ``nvda:ProfessionalVisualizationMember`` -> ``Professional Visualization``."""
    local = member.split(":", 1)[-1]
    local = local[: -len("Member")] if local.endswith("Member") else local
    if local in _MEMBER_LABELS:
        return _MEMBER_LABELS[local]
    if local.endswith("Segment") and len(local) > len("Segment"):
        local = local[: -len("Segment")]
    if local in _MEMBER_LABELS:
        return _MEMBER_LABELS[local]
    if local in _COUNTRIES:
        return _COUNTRIES[local]
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+|[A-Z]+", local)
    return " ".join(_CONNECTORS.get(w, w) if i else w for i, w in enumerate(words)) or local


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
    same members, the first concept of the mapping is kept."""
    rev = rev.assign(_axis=rev["members"].map(lambda m: m[0][0] if len(m) == 1 else None),
                     _rank=rev["concept"].map(lambda c: CONCEPT_ORDER.get(c.split(":", 1)[1], 99)),
                     is_subtotal=False, parent_member=None)  # fmt: skip
    rev = rev.sort_values("_rank", kind="stable").drop_duplicates(["ticker", "start", "end", "members"])
    drop: list = []
    for (ticker, start, end, _), g in rev[rev["_axis"].notna()].groupby(["ticker", "start", "end", "_axis"]):
        total = revenue_of.get((ticker, end, "annual" if (end - start).days > 300 else "quarterly"))
        amounts = g["value"].to_numpy(dtype=float)
        keep, parents, subtotal = _one_breakdown(amounts, total)
        drop.extend(g.index[~keep])
        member = g["members"].map(lambda m: m[0][1]).to_numpy()
        rev.loc[g.index, "is_subtotal"] = subtotal
        rev.loc[g.index, "parent_member"] = [member[p] if p >= 0 else None for p in parents]
    return rev.drop(index=drop).drop(columns=["_axis", "_rank"])


def _one_breakdown(amounts: np.ndarray, total: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which members of one axis to keep, each member's parent (its index, -1 for none) and which members are
    subtotals (see :func:`_leaves`)."""
    from itertools import combinations  # noqa: PLC0415

    n = len(amounts)
    keep, none, no = np.ones(n, dtype=bool), np.full(n, -1), np.zeros(n, dtype=bool)
    if total is not None and total > 0 and amounts.sum() <= 1.01 * total:
        return keep, none, no
    parents, subtotal = _parents(amounts)
    if total is None or not total > 0:
        return keep, parents, subtotal

    def close(x: float) -> bool:
        return abs(x - total) <= 0.01 * total

    leaf = np.flatnonzero(~subtotal)
    if close(amounts[leaf].sum()):
        return keep, parents, subtotal
    left_out = None
    for size in (1, 2):
        left_out = left_out or next((c for c in combinations(leaf, size)
                                     if close(amounts[leaf].sum() - amounts[list(c)].sum())), None)  # fmt: skip
    for size in (2, 3):
        left_out = left_out or next((c for c in combinations(leaf, size) if close(amounts[list(c)].sum())
                                     and close(amounts[leaf].sum() - amounts[list(c)].sum())), None)  # fmt: skip
    if left_out is None:
        return no.copy(), none, no
    keep[list(left_out)] = False
    for i in np.flatnonzero(subtotal):  # a subtotal of a member left out goes with it
        if not keep[_descendants(parents, int(i))].all():
            keep[i] = False
    return keep, np.where(keep[np.maximum(parents, 0)] | (parents < 0), parents, -1), subtotal


def _parents(amounts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each member's parent (index, -1 for none) and which members are subtotals (up to 16 members).

    A subtotal is a member equal (within 0.1%) to the sum of two or more smaller members. Subtotals form a tree
    where their members nest (Product = iPhone + Mac + iPad + Wearables; Total = Product + Services): each member
    names the smallest subtotal holding it. A subtotal cutting across another (Tesla's Sales and Services beside
    its Automotive Revenues: automotive sales in both, leasing in one) is still a subtotal, named by no member."""
    from itertools import combinations  # noqa: PLC0415

    n = len(amounts)
    parents, subtotal = np.full(n, -1), np.zeros(n, dtype=bool)
    if n > 16:
        return parents, subtotal
    covers: dict[int, frozenset[int]] = {}  # accepted subtotals -> the leaves below them
    for i in np.argsort(amounts, kind="stable"):
        target = amounts[i]
        smaller = [j for j in range(n) if amounts[j] < target]
        if not target > 0 or len(smaller) < 2 or amounts[smaller].sum() < 0.999 * target:
            continue
        for size in range(2, len(smaller) + 1):
            hit = next((c for c in combinations(smaller, size)
                        if abs(amounts[list(c)].sum() - target) <= 0.001 * target), None)  # fmt: skip
            if hit:
                break
        if not hit:
            continue
        subtotal[i] = True
        leaves = frozenset().union(*(covers.get(c, frozenset({c})) for c in hit))
        if all(c <= leaves or not (c & leaves) for c in covers.values()):
            covers[int(i)] = leaves
            for c in hit:
                parents[c] = i
    return parents, subtotal


def _descendants(parents: np.ndarray, i: int) -> list[int]:
    """The members below member ``i``."""
    below = list(np.flatnonzero(parents == i))
    for j in list(below):
        below.extend(_descendants(parents, int(j)))
    return below


def build_segments(src: Path, filed_of: dict[str, str], statements: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exploded segment revenue items and segmented financial line items from dimensional XBRL facts."""
    seg = pd.read_csv(src / "segments/segment_product_geography_revenue_from_xbrl.csv", dtype=str)
    seg["filing_date"] = seg["filing"].map(filed_of)
    seg = seg.dropna(subset=["filing_date", "period_start", "period_end", "value"])
    seg["value"] = seg["value"].astype(float)
    rows = []
    for r in seg.itertuples(index=False):
        dims = [d.split("=", 1) for d in re.split(r"[|;]", str(r.dimensions)) if "=" in d]
        members = [(a, m) for a, m in dims if a in _AXES]
        if not members or len(members) != len(dims):
            continue  # consolidation items, eliminations and other axes are not segment members
        rows.append({"ticker": r.ticker, "concept": r.concept, "start": r.period_start, "end": r.period_end,
                     "value": r.value, "filing_date": r.filing_date, "filing": r.filing,
                     "members": tuple(sorted((_AXES[a], m) for a, m in members))})  # fmt: skip
    df = pd.DataFrame(rows)
    df["start"], df["end"] = pd.to_datetime(df["start"]), pd.to_datetime(df["end"])
    df["days"] = (df["end"] - df["start"]).dt.days + 1
    df["period"] = np.where(df["days"] > 300, "annual", np.where(df["days"] < 100, "quarterly", None))
    df = df.dropna(subset=["period"])
    df = df.sort_values(["ticker", "concept", "start", "end", "members", "filing_date"], kind="stable")
    df = df.drop_duplicates(["ticker", "concept", "start", "end", "members"], keep="first")
    # point in time, as the statements: a period's segments come from its own report, not a later comparative
    lag = (pd.to_datetime(df["filing_date"]) - df["end"]).dt.days
    df = df[lag.between(1, MAX_FILING_LAG)]
    revenue_of = {(r.ticker, r.report_period, r.period): r.revenue
                  for r in statements.dropna(subset=["revenue"]).itertuples(index=False)}  # fmt: skip
    rev = _leaves(df[df["concept"].isin(_REVENUE) & (df["members"].map(len) >= 1)].copy(), revenue_of)
    items = []
    for (ticker, end, period), g in rev.groupby(["ticker", "end", "period"], sort=True):
        g = g.sort_values(["members", "concept"], kind="stable").reset_index(drop=True)
        filing_date = g["filing_date"].min()
        for i, r in enumerate(g.itertuples(index=False)):
            for j, (stype, member) in enumerate(r.members):
                items.append({"ticker": ticker, "report_period": end, "period": period, "currency": "USD",
                              "filing_date": filing_date, "item": i, "member": j,
                              "name": r.concept.split(":", 1)[1], "amount": r.value, "start_period": r.start,
                              "end_period": r.end, "segment_label": _member_label(member), "segment_type": stype,
                              "xbrl_member": member, "is_subtotal": bool(r.is_subtotal),
                              "parent_label": _member_label(r.parent_member) if r.parent_member else None})  # fmt: skip
    items_df = pd.DataFrame(items)
    line_items = {"us-gaap:OperatingIncomeLoss": "operating_income", "us-gaap:GrossProfit": "gross_profit",
                  **{c: "revenue" for c in _REVENUE}}  # fmt: skip
    fin = df[df["concept"].isin(line_items) & (df["members"].map(len) == 1)].copy()
    fin = fin[fin["members"].map(lambda m: m[0][0] in ("product", "segment"))]
    fin_rows = pd.DataFrame({
        "ticker": fin["ticker"], "report_period": fin["end"], "period": fin["period"], "currency": "USD",
        "filing_date": fin["filing_date"], "statement": "income_statement",
        "line_item": fin["concept"].map(line_items), "category": fin["members"].map(lambda m: m[0][0]),
        "label": fin["members"].map(lambda m: _member_label(m[0][1])), "value": fin["value"],
        "xbrl_member": fin["members"].map(lambda m: m[0][1]),
    }).drop_duplicates(["ticker", "report_period", "period", "line_item", "category", "label"])  # fmt: skip
    fin_rows = _with_hierarchy(fin_rows, ["ticker", "report_period", "period", "line_item", "category"], revenue_of)
    return items_df, fin_rows.sort_values(["ticker", "report_period", "line_item", "category", "label"])


def _with_hierarchy(rows: pd.DataFrame, group: list[str], revenue_of: dict) -> pd.DataFrame:
    """Mark each group's subtotals (``is_subtotal``) and name each member's parent (``parent_label``).

    Revenue members are checked against the period's revenue as segment items are (:func:`_one_breakdown`);
    where no hierarchy reproduces the revenue (two breakdowns on one axis), nothing is marked and nothing left out.
    Other line items have no total to check against: subtotals are the members equal to a sum of smaller ones."""
    rows = rows.assign(is_subtotal=False, parent_label=None)
    for key, g in rows.groupby(group, sort=False, observed=True):
        amounts = g["value"].to_numpy(dtype=float)
        fields = dict(zip(group, key, strict=True))
        if fields["line_item"] == "revenue":
            total = revenue_of.get((fields["ticker"], fields["report_period"], fields["period"]))
            keep, parents, subtotal = _one_breakdown(amounts, total)
            if not keep.all():
                continue
        else:
            parents, subtotal = _parents(amounts)
        labels = g["label"].to_numpy()
        rows.loc[g.index, "is_subtotal"] = subtotal
        rows.loc[g.index, "parent_label"] = [labels[p] if p >= 0 else None for p in parents]
    return rows


# ---------------------------------------------------------------------------------------------------------
# company, filings, filing items
# ---------------------------------------------------------------------------------------------------------
def build_company_facts(
    src: Path, statements: pd.DataFrame, daily: pd.DataFrame, members: pd.DataFrame
) -> pd.DataFrame:
    """The universe's companies, then the other S&P 500 members (name, CIK, sector, industry, location).

    ``market_cap`` = last close x the last reported shares outstanding (the weighted average where none is
    reported), both on the lake's split basis."""
    uni = pd.read_csv(src / "company/universe.csv", dtype=str)
    uni["Symbol"] = uni["Symbol"].str.replace(".", "-", regex=False)  # BRK.B is BRK-B everywhere in the lake
    prof = pd.read_csv(src / "company/sec_entity_profiles_AAPL_MSFT_NVDA_TSLA.csv", dtype=str).set_index("ticker")
    emp = pd.read_csv(src / "company/employees_from_10k.csv", dtype=str).set_index("ticker")
    ciks = company_ciks(src, members)
    last_close = daily.sort_values("time").groupby("ticker", observed=True)["close"].last()
    last_close.index = last_close.index.astype(str)
    q = statements[statements["period"] != "ttm"].sort_values("report_period")
    rows = []

    def shares_of(t: str) -> float:
        st = q[q["ticker"] == t]
        for col in ("outstanding_shares", "weighted_average_shares"):
            v = st[col].dropna() if col in st.columns else pd.Series(dtype=float)
            if len(v):
                return float(v.iloc[-1])
        return np.nan

    for u in uni.itertuples(index=False):
        t = u.Symbol
        p = prof.loc[t] if t in prof.index else None
        cik = ciks.get(t)
        shares_v = shares_of(t)
        price = last_close.get(t, np.nan)
        employees = emp.loc[t, "employees"] if t in emp.index else u.employees
        rows.append({
            "ticker": t, "name": (p["name"] if p is not None else None) or u.Security,
            "cik": cik, "industry": u._4, "sector": u._3, "category": "Common Stock" if u.asset_class == "equity"
            else "Cryptocurrency", "exchange": p["exchanges"] if p is not None else None,
            "is_active": True, "listing_date": None, "location": u._5 if isinstance(u._5, str) else None,
            "market_cap": float(price * shares_v) if price == price and shares_v == shares_v else None,
            "number_of_employees": int(float(employees)) if isinstance(employees, str) and employees else None,
            "sec_filings_url": f"{SEC}/cgi-bin/browse-edgar?action=getcompany&CIK={cik}" if cik else None,
            "sic_code": p["sic"] if p is not None else None,
            "sic_industry": p["sic_description"] if p is not None else None,
            "sic_sector": None, "website_url": None, "weighted_average_shares": shares_v,
            "events": company_events(p["former_names"] if p is not None else None),
        })  # fmt: skip
    known = {r["ticker"] for r in rows}
    for m in members.itertuples(index=False):
        if m.ticker in known:
            continue
        rows.append({"ticker": m.ticker, "name": m.name, "cik": m.cik, "industry": m.industry, "sector": m.sector,
                     "category": "Common Stock", "is_active": True, "location": m.location,
                     "sec_filings_url": f"{SEC}/cgi-bin/browse-edgar?action=getcompany&CIK={m.cik}"})  # fmt: skip
    return pd.DataFrame(rows)


def company_events(former_names: object) -> list[dict[str, str | None]]:
    """The company's history as the 2026 ``events`` array: one ``former_name`` event per name the SEC lists
    (``APPLE INC (2007-01-10..2019-08-05)|...``), with the dates the name was in use."""
    events: list[dict[str, str | None]] = []
    for part in str(former_names).split("|") if isinstance(former_names, str) else []:
        m = re.match(r"^(.*?)\s*\((\d{4}-\d{2}-\d{2})?\.\.(\d{4}-\d{2}-\d{2})?\)$", part.strip())
        if m:
            events.append({"type": "former_name", "name": m.group(1), "start_date": m.group(2),
                           "end_date": m.group(3)})  # fmt: skip
    return events


def build_filings(index: pd.DataFrame) -> pd.DataFrame:
    df = index.copy()
    acc = df["accessionNumber"].str.replace("-", "", regex=False)
    cik_int = df["cik"].astype(int).astype(str)
    return pd.DataFrame({
        "ticker": df["ticker"], "filing_date": df["filingDate"], "cik": df["cik"],
        "accession_number": df["accessionNumber"], "filing_type": df["form"],
        "report_date": df["reportDate"].where(df["reportDate"].notna() & (df["reportDate"] != ""), None),
        "url": SEC + "/Archives/edgar/data/" + cik_int + "/" + acc + "/" + df["primaryDocument"].fillna(""),
    }).sort_values(["ticker", "filing_date", "accession_number"], ascending=[True, False, True])  # fmt: skip


_8K_ITEM = re.compile(r"(?im)^\s*item\s+(\d\.\d\d)\.?\s*(.*)$")


def build_filing_items(src: Path, index: pd.DataFrame, statements: pd.DataFrame) -> pd.DataFrame:
    rows = []
    with gzip.open(src / "text/sec_filing_sections.jsonl.gz", "rt") as fh:
        sections = [json.loads(line) for line in fh]
    fiscal_q = {(r.ticker, str(r.filing_date)[:10]): r.fiscal_period
                for r in statements[statements["period"] == "quarterly"].itertuples(index=False)
                if not pd.isna(r.filing_date)}  # fmt: skip
    for s in sections:
        ticker, form, filed = s["ticker"], s["form"], s["filing_date"]
        m = re.search(r"\d{10}-\d{2}-\d{6}", s.get("source", ""))
        accn = m.group(0) if m else None
        if accn is None and len(index):
            hit = index[(index["ticker"] == ticker) & (index["form"] == form) & (index["filingDate"] == filed)]
            accn = hit["accessionNumber"].iloc[0] if len(hit) else None
        quarter = None
        if form == "10-Q":
            fp = fiscal_q.get((ticker, filed))
            quarter = int(fp[-1]) if fp else (pd.Timestamp(filed) - pd.Timedelta(days=45)).quarter
        base = {"ticker": ticker, "filing_date": filed, "accession_number": accn, "filing_type": form,
                "year": int(filed[:4]), "quarter": quarter}  # fmt: skip
        item = s["item"]
        if form == "8-K":
            text = s["text"]
            heads = list(_8K_ITEM.finditer(text))
            for i, h in enumerate(heads):
                body = text[h.start() : heads[i + 1].start() if i + 1 < len(heads) else len(text)].strip()
                rows.append({**base, "number": f"Item-{h.group(1)}", "name": h.group(2).strip()[:200] or None,
                             "text": body})  # fmt: skip
            continue
        if form == "10-Q":
            part, num = item.split("-", 1)
            number = f"Part-{part[1:]},Item-{num}"
        else:
            number = f"Item-{item}"
        rows.append({**base, "number": number, "name": s.get("title"), "text": s["text"]})
    df = pd.DataFrame(rows)
    return df.sort_values(["ticker", "filing_date", "filing_type", "number"], kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------------
# insiders, institutions
# ---------------------------------------------------------------------------------------------------------
_CODES = {"S": "Sale", "P": "Purchase", "A": "Grant", "M": "Option Exercise", "F": "Tax Withholding",
          "G": "Gift", "D": "Disposition to Issuer", "C": "Conversion", "J": "Other",
          "X": "Option Exercise"}  # fmt: skip


def _signature_dates(src: Path) -> dict[tuple[str, str, str], str]:
    out = {}
    for p in sorted((src / "insider/raw").glob("*")):
        text = p.read_text(errors="replace")
        start = text.find("<ownershipDocument")
        if start < 0:
            continue
        try:
            root = ET.fromstring(text[start : text.rfind("</ownershipDocument>") + len("</ownershipDocument>")])
        except ET.ParseError:
            continue

        def get(path: str, doc: ET.Element = root) -> str:
            return (doc.findtext(path) or "").strip()

        key = (get("issuer/issuerCik").zfill(10), get("documentType"), get("periodOfReport"))
        sig = get("ownerSignature/signatureDate")
        if sig:
            out[key] = sig
    return out


def build_insiders(src: Path, index: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = pd.read_csv(src / "insider/form345_transactions_parsed.csv", dtype=str)
    filed_by_accn = dict(zip(index["accessionNumber"], index["filingDate"], strict=True)) if len(index) else {}
    sigs = _signature_dates(src)

    def filing_date(r) -> str:
        return filed_by_accn.get(r.accession) or sigs.get((str(r.issuer_cik).zfill(10), r.document_type,
                                                           r.period_of_report)) or r.period_of_report  # fmt: skip

    df["filing_date"] = [filing_date(r) for r in df.itertuples(index=False)]
    num = lambda c: pd.to_numeric(df[c], errors="coerce")  # noqa: E731
    shares = num("shares")
    signed = np.where(df["acquired_disposed"] == "D", -shares, shares)
    after = num("shares_owned_after")
    common = {"ticker": df["issuer_symbol"], "filing_date": df["filing_date"], "issuer": df["issuer_name"],
              "name": df["owner_name"], "title": df["officer_title"],
              "is_board_director": df["is_director"].isin(["1", "true", "True"]),
              "security_title": df["security_title"], "accession_number": df["accession"],
              "form_type": df["document_type"]}  # fmt: skip
    tx = df["row_type"].str.endswith("Transaction")
    trades = pd.DataFrame({**common, "transaction_date": df["transaction_date"], "transaction_shares": signed,
                           "transaction_price_per_share": num("price_per_share"),
                           "transaction_value": shares * num("price_per_share"),
                           "shares_owned_before_transaction": after - signed,
                           "shares_owned_after_transaction": after,
                           "transaction_type": df["transaction_code"].map(_CODES).fillna(df["transaction_code"]),
                           })[tx]  # fmt: skip
    # a derivative holding states the shares underlying it
    owned = after.fillna(num("underlying_shares").where(df["table"] == "derivative"))
    hold = pd.DataFrame({**common, "is_officer": df["is_officer"].isin(["1", "true", "True"]),
                         "is_ten_percent_owner": df["is_ten_pct"].isin(["1", "true", "True"]),
                         "shares_owned": owned, "direct_or_indirect": df["direct_indirect"],
                         "holding_type": df["table"], "as_of_date": df["period_of_report"]})  # fmt: skip
    # ownership: the holdings reported on Forms 3 and 5 (and their amendments); Form 4 rows are trades
    hold = hold[df["row_type"].str.endswith("Holding") & df["document_type"].isin(OWNERSHIP_FORMS)]
    order = ["ticker", "filing_date", "accession_number"]
    return (trades.sort_values(order, kind="stable").reset_index(drop=True),
            hold.sort_values(order, kind="stable").reset_index(drop=True))  # fmt: skip


def _norm_name(s: str) -> str:
    s = re.sub(r"[^A-Z0-9 ]", " ", str(s).upper())
    s = re.sub(r"\b(INC|CORP|CORPORATION|CO|COMPANY|LTD|PLC|CLASS|CL|THE|HLDGS|HOLDINGS|NEW|COM)\b", " ", s)
    return " ".join(s.split())


def build_institutional(src: Path, daily: pd.DataFrame, splits: pd.DataFrame) -> pd.DataFrame:
    """13F positions: values in dollars, share counts on the lake's split basis.

    13F values were in thousands of dollars until the SEC's 2023 switch to dollars, but some filers kept
    reporting thousands after it. The unit is decided per filing: where the median of value / shares over the
    filing's priced positions is within a factor of 10 of the raw close / 1,000, the filing is in thousands."""
    df = pd.read_csv(src / "insider/form13f_holdings_parsed.csv", dtype=str)
    df = df[df["manager"].notna() & df["period"].notna()]
    tickers = pd.read_csv(src / "company/sec_company_tickers.csv", dtype=str)
    by_name: dict[str, str] = {}
    for r in tickers.itertuples(index=False):  # first listed ticker of a title wins (the SEC file's order)
        by_name.setdefault(_norm_name(r.title), str(r.ticker).replace(".", "-"))
    df["ticker"] = df["name_of_issuer"].map(lambda n: by_name.get(_norm_name(n)))
    df = df.dropna(subset=["ticker"])
    period = pd.to_datetime(df["period"].str[:8], format="%Y%m%d")
    filed = pd.to_datetime(df["filed"].str[:8], format="%Y%m%d")
    value = pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=float)
    shares = pd.to_numeric(df["shares_or_principal"], errors="coerce").to_numpy(dtype=float)
    # the close on the report date, on the basis of the filing day (raw shares are as of the filing)
    keys = pd.DataFrame({"ticker": df["ticker"].to_numpy(), "report_period": period.to_numpy()})
    from fdkit.lake.validate import close_near  # noqa: PLC0415

    close = close_near(keys, daily).to_numpy() * ru.split_factor(splits, keys["ticker"], filed)
    ratio = pd.Series(value / shares / close).replace([np.inf, -np.inf], np.nan)
    per_filing = ratio.groupby(df["accession"].to_numpy()).median()
    in_thousands = df["accession"].map(per_filing).between(1e-4, 1e-2).to_numpy()
    thousands = in_thousands | (filed < pd.Timestamp("2023-01-03")).to_numpy()
    value = np.where(thousands, value * 1000.0, value)
    k = ru.split_factor(splits, keys["ticker"], filed)
    out = pd.DataFrame({"ticker": df["ticker"].to_numpy(), "report_period": period.to_numpy(),
                        "investor": df["manager"].str.upper().to_numpy(),
                        "investor_cik": df["accession"].str[:10].to_numpy(), "shares": shares * k,
                        "market_value": value, "filing_date": filed.to_numpy(),
                        "accession_number": df["accession"].to_numpy(),
                        "put_call": df["put_call"].to_numpy(),
                        "name_of_issuer": df["name_of_issuer"].to_numpy(), "cusip": df["cusip"].to_numpy(),
                        "title_of_class": df["title_of_class"].to_numpy()})  # fmt: skip
    key = ["ticker", "report_period", "investor", "put_call"]
    out = out.groupby(key, dropna=False, as_index=False).agg(
        investor_cik=("investor_cik", "first"),
        shares=("shares", "sum"),
        market_value=("market_value", "sum"),
        filing_date=("filing_date", "first"),
        accession_number=("accession_number", "first"),
        name_of_issuer=("name_of_issuer", "first"),
        cusip=("cusip", "first"),
        title_of_class=("title_of_class", "first"),
    )
    out["price"] = out["market_value"] / out["shares"]
    return out.sort_values(["ticker", "report_period", "investor"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------------
# macro, news
# ---------------------------------------------------------------------------------------------------------
def _changes(df: pd.DataFrame, col: str) -> pd.DataFrame:
    df = df.dropna(subset=[col]).sort_values("date")
    return df[df[col].ne(df[col].shift())]


def build_rates(src: Path) -> pd.DataFrame:
    """Policy-rate changes: FED (target, then the target-range midpoint from 2008-12-16) and ECB (MRO)."""
    point = pd.read_csv(src / "rates/fred_DFEDTAR_fed_funds_target_1982_2008.csv", parse_dates=["date"])
    upper = pd.read_csv(src / "rates/fred_DFEDTARU_fed_funds_target_upper_2008_2025.csv", parse_dates=["date"])
    fed = pd.concat([point.rename(columns={"DFEDTAR": "rate"}),
                     upper.assign(rate=upper["DFEDTARU"] - 0.125)[["date", "rate"]]])  # fmt: skip
    fed = _changes(fed, "rate").assign(bank="FED", name="Federal Funds Target Rate (range midpoint from 2008-12-16)")
    ecb = pd.read_csv(src / "rates/ecb_key_interest_rates_daily_1999_2024.csv", parse_dates=["date"])
    ecb = _changes(ecb.rename(columns={"ecb_mro_rate": "rate"}), "rate")
    ecb = ecb.assign(bank="ECB", name="ECB Main Refinancing Operations Rate")
    out = pd.concat([fed, ecb])[["bank", "date", "name", "rate"]]
    return out.sort_values(["bank", "date"]).reset_index(drop=True)


def build_yield_curve(src: Path) -> pd.DataFrame:
    df = pd.read_csv(src / "rates/us_treasury_par_yield_curve_daily_2021_2023.csv", parse_dates=["Date"])
    names = {"1 Mo": "1_month", "2 Mo": "2_month", "3 Mo": "3_month", "4 Mo": "4_month", "6 Mo": "6_month",
             "1 Yr": "1_year", "2 Yr": "2_year", "3 Yr": "3_year", "5 Yr": "5_year", "7 Yr": "7_year",
             "10 Yr": "10_year", "20 Yr": "20_year", "30 Yr": "30_year"}  # fmt: skip
    return df.rename(columns={"Date": "date", **names}).sort_values("date").reset_index(drop=True)


def build_inflation(src: Path, src2: Path) -> pd.DataFrame:
    """CPI (all items, 1913-2026) and core CPI (FRED CPILFESL, 1980-2025): changes computed by date, so a
    missing month gives a missing change, never a change against the wrong month."""
    cpi = pd.read_csv(src / "macro/us_cpi_monthly_1913_2026.csv", parse_dates=["Date"])
    cpi = cpi.rename(columns={"Date": "date", "Index": "value"})[["date", "value"]]
    core = ru.fred_series(src2, "CPILFESL")
    rows = []
    for name, df in (("cpi_all_items", cpi), ("cpi_core", core)):
        df = df.dropna(subset=["value"]).sort_values("date")
        level = df.set_index("date")["value"].astype(float)
        v = df["value"].astype(float).to_numpy()
        prev_m = level.reindex(df["date"] - pd.DateOffset(months=1)).to_numpy()
        prev_y = level.reindex(df["date"] - pd.DateOffset(years=1)).to_numpy()
        rows.append(pd.DataFrame({"series": name, "date": df["date"].to_numpy(), "value": v,
                                  "change_1m_pct": (v / prev_m - 1) * 100,
                                  "change_12m_pct": (v / prev_y - 1) * 100}))  # fmt: skip
    out = pd.concat(rows, ignore_index=True)
    out[["change_1m_pct", "change_12m_pct"]] = out[["change_1m_pct", "change_12m_pct"]].round(6)
    return out


def build_news(src: Path) -> pd.DataFrame:
    a = pd.read_csv(src / "text/fnspid_nasdaq_headlines_AAPL_page.csv", dtype=str).dropna(subset=["date"])
    a = pd.DataFrame({"ticker": a["ticker_page"], "date": a["date"], "title": a["headline"], "url": a["url"]})
    y = pd.read_csv(src / "text/yahoo_headlines_sep2024_MSFT_ADBE_ORCL_PANW.csv", dtype=str)
    y["date"] = pd.to_datetime(y["datetime_utc"], errors="coerce", utc=True).dt.strftime("%Y-%m-%d")
    y = pd.DataFrame({"ticker": y["ticker"], "date": y["date"], "title": y["headline"], "url": y["url"]})
    df = pd.concat([a, y], ignore_index=True).dropna(subset=["date", "title"])
    df["source"] = df["url"].str.extract(r"https?://(?:www\.)?([^/]+)")[0]
    df["author"] = None
    df["sentiment"] = None
    df = df.drop_duplicates(["ticker", "date", "title"])
    return df.sort_values(["ticker", "date", "title"], ascending=[True, False, True]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------------
# derived: metrics, estimates, earnings
# ---------------------------------------------------------------------------------------------------------
def build_metrics(all_statements: pd.DataFrame, daily: pd.DataFrame) -> pd.DataFrame:
    prices = daily[["ticker", "time", "close"]]
    ratios = compute_ratios(all_statements, prices, growth=True)
    head = all_statements[[c for c in SCHEMAS["financial_metrics"] if c in all_statements.columns
                           and c not in METRIC_FIELDS]]  # fmt: skip
    return pd.concat([head, ratios[[c for c in METRIC_FIELDS if c in ratios.columns]]], axis=1)


def build_estimates(all_statements: pd.DataFrame) -> pd.DataFrame:
    """Method ``trend-3y``: next two fiscal years (annual) / next four quarters (quarterly), each the last value
    grown at the compound growth rate of the last three years (quarterly: same quarter a year earlier), rate
    clipped to [-50%, +100%] a year."""
    rows = []
    for (ticker, period), g in all_statements[all_statements["period"].isin(["annual", "quarterly"])].groupby(
            ["ticker", "period"], sort=True):  # fmt: skip
        g = g.sort_values("report_period").dropna(subset=["revenue"])
        lag = 3 if period == "annual" else 12
        if len(g) <= lag:
            continue
        horizon = 2 if period == "annual" else 4
        step = pd.DateOffset(years=1) if period == "annual" else pd.DateOffset(months=3)
        for h in range(1, horizon + 1):
            rec = {"ticker": ticker, "period": period, "method": "trend-3y",
                   "fiscal_period": g["report_period"].iloc[-1] + step * h}  # fmt: skip
            for field in ("revenue", "earnings_per_share"):
                base_pos = len(g) - 1 - ((4 - h) % 4 if period == "quarterly" else 0)
                last, earlier = g[field].iloc[base_pos], g[field].iloc[base_pos - lag]
                years = 3
                if last and earlier and last > 0 and earlier > 0:
                    rate = float(np.clip((last / earlier) ** (1 / years) - 1, -0.5, 1.0))
                else:
                    rate = 0.0
                periods_ahead = h if period == "annual" else (h + 3) // 4
                rec[field] = float(last * (1 + rate) ** periods_ahead) if last == last else np.nan
            rows.append(rec)
    return pd.DataFrame(rows)


def with_usd_amounts(income: pd.DataFrame) -> pd.DataFrame:
    """The ``*_usd`` amounts of the income statement: the amount itself for a USD reporter, else missing (the
    sources carry no exchange rates, so a non-USD amount is never converted with a made-up rate)."""
    usd = income["currency"].astype("string").eq("USD").fillna(False).to_numpy(dtype=bool)
    out = income.copy()
    for field, base in (("revenue_usd", "revenue"), ("ebit_usd", "ebit"), ("earnings_per_share_usd",
                        "earnings_per_share"), ("net_income_common_stock_usd", "net_income_common_stock")):  # fmt: skip
        out[field] = income[base].where(usd)
    return out


def _change(now: pd.Series, before: pd.Series) -> pd.Series:
    """(now - before) / |before|: the sign says the direction even when the base is negative; missing at 0."""
    base = before.abs().where(before != 0)
    return (now - before) / base


def _earlier(df: pd.DataFrame, days: int, slack: int) -> pd.DataFrame:
    """For each row, the same ticker's row whose report period ended ``days`` (+/- ``slack``) before it."""
    left = df.reset_index()[["ticker", "report_period"]].assign(
        _want=lambda d: d["report_period"] - pd.Timedelta(days=days)
    )
    right = df.reset_index().rename(columns={"report_period": "_rp"})
    found = pd.merge_asof(left.sort_values("_want"), right.sort_values("_rp"), left_on="_want", right_on="_rp",
                          by="ticker", direction="nearest", tolerance=pd.Timedelta(days=slack))  # fmt: skip
    return found.set_index(["ticker", "report_period"]).reindex(df.index)


def earnings_derived(frame: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """The 2026 record's derived figures of one payload (``quarterly`` or ``annual``), matched by date.

    A quarterly change is against the quarter ending about three months before, a year-over-year one against
    about a year before (a missing quarter gives a missing change, never one against the wrong quarter); the
    annual payload (trailing twelve months) changes against the year before.
    """
    from fdkit.catalog.schema import EARNINGS_DERIVED, EARNINGS_MARGINS  # noqa: PLC0415

    cur = frame[[c for c in frame.columns if c.startswith(prefix + "_")]].rename(columns=lambda c: c[len(prefix) + 1 :])
    prev = _earlier(cur, 91 if prefix == "quarterly" else 365, 20)
    year = _earlier(cur, 365, 20)
    out = pd.DataFrame(index=cur.index)
    for m, base in EARNINGS_MARGINS.items():
        cur[m] = cur[base] / cur["revenue"].where(cur["revenue"] != 0)
        prev[m] = prev[base] / prev["revenue"].where(prev["revenue"] != 0)
        year[m] = year[base] / year["revenue"].where(year["revenue"] != 0)
    for f in EARNINGS_DERIVED[prefix]:
        if f in EARNINGS_MARGINS:
            out[f] = cur[f]
        elif f.endswith(("_chg_bps", "_chg_pct")):
            m, ref = f.split("_chg_")[0].removesuffix("_yoy"), year if "_yoy_" in f else prev
            out[f] = (cur[m] - ref[m]) * 10_000 if f.endswith("bps") else _change(cur[m], ref[m])
        elif f.endswith("_yoy_chg"):
            x = f.removesuffix("_yoy_chg")
            out[f] = _change(cur[x], year[x])
        elif f.endswith("_chg"):
            x = f.removesuffix("_chg")
            out[f] = _change(cur[x], prev[x])
        elif f == "revenue_surprise_pct":
            out[f] = cur["revenue"] / cur["estimated_revenue"] - 1
        elif f == "eps_surprise_pct":
            out[f] = _change(cur["earnings_per_share"], cur["estimated_earnings_per_share"])
    for kind in ("revenue", "eps"):
        pct = out[f"{kind}_surprise_pct"]
        out[f"{kind}_surprise"] = np.select([pct > 0, pct < 0, pct == 0], ["BEAT", "MISS", "MEET"], default=None)
    return out.add_prefix(prefix + "_")


_ET = EASTERN


def filing_window(accepted: pd.Series) -> pd.Series:
    """The market session of an Eastern-Time acceptance time: PRE_MARKET (weekday 04:00-09:30), DURING_MARKET
    (09:30-16:00), AFTER_HOURS (other weekday times), WEEKEND; missing where the time is."""
    minutes = accepted.dt.hour * 60 + accepted.dt.minute
    weekend = accepted.dt.day_of_week >= 5
    window = np.select([weekend, (minutes >= 240) & (minutes < 570), (minutes >= 570) & (minutes < 960)],
                       ["WEEKEND", "PRE_MARKET", "DURING_MARKET"], default="AFTER_HOURS")  # fmt: skip
    return pd.Series(window, index=accepted.index).where(accepted.notna())


def build_earnings(all_statements: pd.DataFrame, index: pd.DataFrame) -> pd.DataFrame:
    """One record per quarterly report: the quarter's figures and the trailing-twelve-month figures, the derived
    figures of the 2026 record and, where the SEC submissions index has it, the acceptance time (with its offset)."""
    q = all_statements[all_statements["period"] == "quarterly"].set_index(["ticker", "report_period"])
    ttm = all_statements[all_statements["period"] == "ttm"].set_index(["ticker", "report_period"])
    from fdkit.catalog.schema import EARNINGS_DIMENSION  # noqa: PLC0415

    nan = pd.Series(np.nan, index=q.index)
    out = pd.DataFrame({
        **{f"quarterly_{d}": q[d] if d in q.columns else nan for d in EARNINGS_DIMENSION},
        **{f"annual_{d}": ttm[d].reindex(q.index) if d in ttm.columns else nan for d in EARNINGS_DIMENSION},
    }, index=q.index)  # fmt: skip
    out["fiscal_period"] = q["fiscal_period"]
    out["currency"] = q["currency"]
    out["source_type"] = q["form_type"].str.replace("/A", "", regex=False)
    out["filing_date"] = q["filing_date"]
    out["accession_number"] = q["accession_number"]
    out = out.join(earnings_derived(out, "quarterly")).join(earnings_derived(out, "annual"))
    stamp = acceptance_times(out["accession_number"], index)
    out["filing_datetime"] = iso_times(stamp)
    out["filing_window"] = filing_window(stamp)
    return out.reset_index()


def acceptance_times(accessions: pd.Series, index: pd.DataFrame) -> pd.Series:
    """The SEC's acceptance time of each accession, in Eastern Time; missing where the submissions index has none.

    EDGAR's ``acceptanceDateTime`` always carries a ``Z``, yet the bundled documents differ: Apple's is Eastern
    wall time (its 10-Qs read 18:04, after its 16:30 release, and are dated the next day), the others are UTC.
    Each company's zone is the reading under which EDGAR's filing-date rule reproduces the filing dates the
    same document states (:func:`fdkit.research.sessions.edgar_filing_date`)."""
    if not len(index) or "acceptanceDateTime" not in index.columns:
        return pd.Series(pd.NaT, index=accessions.index, dtype=f"datetime64[ns, {_ET}]")
    stamps = []
    for _, doc in index.groupby("ticker", sort=True):
        wall = pd.to_datetime(doc["acceptanceDateTime"].str[:19], format="ISO8601")
        readings = {zone: wall.dt.tz_localize(zone, ambiguous="NaT", nonexistent="NaT").dt.tz_convert(_ET)
                    for zone in (_ET, "UTC")}  # fmt: skip
        filed = pd.to_datetime(doc["filingDate"])
        agree = {z: float((edgar_filing_date(at, doc["form"]) == filed).mean()) for z, at in readings.items()}
        stamps.append(pd.Series(readings[max(agree, key=agree.__getitem__)].to_numpy(), index=doc["accessionNumber"]))
    by_accession = pd.concat(stamps)
    by_accession = by_accession[~by_accession.index.duplicated()]
    return accessions.astype(object).map(by_accession).astype(f"datetime64[ns, {_ET}]")


def iso_times(stamp: pd.Series) -> pd.Series:
    """ISO 8601 with the offset (``2023-11-02T18:04:31-04:00``), None where missing."""
    return stamp.map(lambda t: t.isoformat() if pd.notna(t) else None)


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


# ---------------------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------------------
def build(src: Path, out: Path, src2: Path | None = None) -> dict[str, pd.DataFrame]:
    src2 = src2 or src.parent / "data-real-2"
    index = _filings_index(src)
    cf = companyfacts_facts(src)
    inst = instance_facts(src, set(cf["ticker"].unique()), index)
    reports = every_report(pd.concat([cf, inst], ignore_index=True))
    facts = first_reported(reports)
    daily, factors = build_prices(src)
    members = ru.universe(src)
    raw = ru.raw_prices(src2)
    main_tickers = set(daily["ticker"].astype(str))
    wanted = set(members["ticker"]) | main_tickers
    calendar = pd.DatetimeIndex(sorted(set(daily["time"].dt.tz_localize(None)) | set(raw["date"])))
    splits = ru.build_splits(src, src2, calendar, raw[raw["ticker"].isin(wanted)])
    facts = ru.adjust_facts_for_splits(facts, splits)
    vintages = build_vintages(ru.adjust_facts_for_splits(reports, splits),
                              ru.pystock_vintages(src2, wanted, splits, MAX_FILING_LAG))  # fmt: skip
    xbrl = build_statements(facts)
    broad = ru.broad_statements(src2, wanted, splits, MAX_FILING_LAG)
    broad = broad[~broad["ticker"].isin(set(cf["ticker"]))]  # companyfacts tickers have their full XBRL history
    have = set(zip(xbrl["ticker"], xbrl["period"], xbrl["report_period"], strict=True))
    broad = broad[[k not in have for k in zip(broad["ticker"], broad["period"], broad["report_period"], strict=True)]]
    all_st = finish_statements(pd.concat([xbrl, _derive_fields(broad)], ignore_index=True), src, members)
    stmts = {name: all_st[[c for c in SCHEMAS[name] if c in all_st.columns]] for name in STATEMENT_FIELDS}
    broad_px = set(members["ticker"]) - main_tickers - set(ru.EXCLUDED_PRICES)
    daily = (
        pd.concat([daily, ru.broad_prices(raw, broad_px, splits)], ignore_index=True)
        .sort_values(["ticker", "time"], kind="stable")
        .reset_index(drop=True)
    )
    filed_of = {}
    for p in sorted((src / "fundamentals/xbrl_instance_facts").glob("*_*.csv.gz")):
        stem = p.name[: -len(".csv.gz")]
        m = re.search(r"filed(\d{4}-\d{2}-\d{2})", stem)
        if m:
            filed_of[stem] = m.group(1)
        else:
            t, form = stem.split("_")[:2]
            end = stem.rsplit("_", 1)[1]
            hit = index[(index["ticker"] == t) & (index["form"] == form) & (index["reportDate"] == end)] \
                if len(index) else []  # fmt: skip
            if len(hit):
                filed_of[stem] = hit["filingDate"].iloc[0]
            else:  # companyfacts knows when the 10-K/10-Q for that period end was first filed
                f = facts[(facts["ticker"] == t) & (facts["end"] == pd.Timestamp(end)) & (facts["form"] == form)]
                if len(f):
                    filed_of[stem] = f["filed"].min().strftime("%Y-%m-%d")
    seg_items, seg_fin = build_segments(src, filed_of, all_st)
    seg_items, seg_fin = (with_fiscal_labels(d, all_st) for d in (seg_items, seg_fin))
    crypto_daily, crypto_minute = build_crypto(src)
    stmts["income_statements"] = with_usd_amounts(stmts["income_statements"])
    datasets: dict[str, tuple[pd.DataFrame, str | None]] = {
        **{name: (df, name) for name, df in stmts.items()},
        "financial_metrics": (build_metrics(all_st, daily), "financial_metrics"),
        "segmented_revenues": (seg_items, None),
        "segmented_financials": (seg_fin, None),
        "prices": (daily, "prices"),
        "prices_minute": (build_minute_prices(src, daily), "prices"),
        "crypto_prices": (crypto_daily, "crypto_prices"),
        "crypto_prices_minute": (crypto_minute, "crypto_prices"),
        "company_facts": (build_company_facts(src, all_st, daily, members), "company_facts"),
        "filings": (build_filings(index), "filings"),
        "filing_items": (build_filing_items(src, index, all_st), "filing_items"),
        "institutional_ownership": (build_institutional(src, daily, splits), "institutional_ownership"),
        "interest_rates": (build_rates(src), "interest_rates"),
        "yield_curve": (build_yield_curve(src), "yield_curve"),
        "inflation": (build_inflation(src, src2), "inflation"),
        "labor": (ru.build_labor(src2), "labor"),
        "splits": (splits, "splits"),
        "dividends": (ru.build_dividends(src, splits), "dividends"),
        "index_funds": (ru.index_membership(src), "index_funds"),
        "statement_vintages": (vintages, "statement_vintages"),
        "news": (build_news(src), "news"),
        "analyst_estimates": (build_estimates(all_st), "analyst_estimates"),
        "earnings": (build_earnings(all_st, index), "earnings"),
    }
    trades, holdings = build_insiders(src, index)
    datasets["insider_trades"] = (trades, "insider_trades")
    datasets["insider_ownership"] = (holdings, "insider_ownership")
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, (df, schema) in sorted(datasets.items()):
        if schema is None:
            df = _typed_extra(name, df)
        write_dataset(out, name, df, schema=schema)
        written[name] = read_dataset(out, name, schema=schema)
    written["_price_factors"] = factors
    return written


def _typed_extra(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Lake datasets whose rows are not a record schema (exploded segments)."""
    from fdkit.lake.io import conform

    if name == "segmented_revenues":
        base = conform(df, "segment_items")
        base["fiscal_period"] = df["fiscal_period"].astype("string").astype("category")
        base["currency"] = df["currency"].astype("category")
        base["accession_number"] = pd.Series(pd.NA, index=df.index, dtype="string")
        base["filing_date"] = pd.to_datetime(df["filing_date"])
        base["item"] = df["item"].astype("Int64")
        base["member"] = df["member"].astype("Int64")
        return base
    if name == "segmented_financials":
        base = conform(df, "segmented_financials")
        base["statement"] = df["statement"].astype("category")
        return base
    return df


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", nargs="?", default=str(ROOT.parent / "shared" / "data-real"))
    ap.add_argument("--out", default=str(ROOT / "data"))
    args = ap.parse_args(argv)
    src = Path(args.source)
    if not (src / "SOURCES.md").exists():
        print(f"build_reference_data: {src} is not a data-real folder (no SOURCES.md)", file=sys.stderr)
        return 2
    written = build(src, Path(args.out))
    from sources_doc import write_sources_md  # noqa: PLC0415

    write_sources_md(Path(args.out), written)
    for name, df in sorted(written.items()):
        if not name.startswith("_"):
            print(f"{name:28s} {len(df):>8,d} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
