"""Shared constants of the build: the us-gaap concept -> statement field map and the conventions built on it.

Every stage that reads XBRL facts, and ``CONCEPTS.md`` (:mod:`refdata.sources_doc`), take the mapping from here,
so no stage module imports another for a constant.

Example:
    >>> CONCEPTS["gross_profit"], "total_assets" in INSTANT_FIELDS, duration_kind(91)
    (['GrossProfit'], True, 'Q')
"""

from __future__ import annotations

import pandas as pd

from fdkit.catalog.schema import STATEMENT_FIELDS

#: EDGAR's host (filing index and company-search URLs)
SEC = "https://www.sec.gov"

# ---------------------------------------------------------------------------------------------------------
# us-gaap concept -> statement field (first concept present wins; documented in data/CONCEPTS.md)
# ---------------------------------------------------------------------------------------------------------
CONCEPTS: dict[str, list[str]] = {
    # income statement (durations)
    "revenue": [
        "Revenues",
        "RevenueFromContractWithCustomerExcludingAssessedTax",
        "SalesRevenueNet",
        "RevenueFromContractWithCustomerIncludingAssessedTax",
        "SalesRevenueGoodsNet",
    ],
    "cost_of_revenue": [
        "CostOfGoodsAndServicesSold",
        "CostOfRevenue",
        "CostOfGoodsSold",
        "CostOfGoodsAndServiceExcludingDepreciationDepletionAndAmortization",
    ],
    "gross_profit": ["GrossProfit"],
    "research_and_development": [
        "ResearchAndDevelopmentExpense",
        "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost",
    ],
    "selling_general_and_administrative_expenses": ["SellingGeneralAndAdministrativeExpense"],
    "operating_expense": ["OperatingExpenses", "CostsAndExpenses"],
    "operating_income": ["OperatingIncomeLoss"],
    "interest_expense": ["InterestExpense", "InterestExpenseNonoperating", "InterestExpenseDebt"],
    "pretax_income": [
        "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
        "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments",
    ],
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
    "cash_and_equivalents": [
        "CashAndCashEquivalentsAtCarryingValue",
        "CashAndDueFromBanks",
        "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
    ],
    "inventory": ["InventoryNet"],
    "current_investments": [
        "MarketableSecuritiesCurrent",
        "AvailableForSaleSecuritiesDebtSecuritiesCurrent",
        "ShortTermInvestments",
    ],
    "accounts_receivable": ["AccountsReceivableNetCurrent"],
    "nontrade_receivables": ["NontradeReceivablesCurrent"],
    "non_current_assets": ["AssetsNoncurrent"],
    "property_plant_and_equipment": [
        "PropertyPlantAndEquipmentNet",
        "PropertyPlantAndEquipmentAndFinanceLeaseRightOfUseAssetAfterAccumulatedDepreciationAndAmortization",
    ],
    "goodwill": ["Goodwill"],
    "intangibles": ["IntangibleAssetsNetExcludingGoodwill", "FiniteLivedIntangibleAssetsNet"],
    "non_current_investments": [
        "MarketableSecuritiesNoncurrent",
        "LongTermInvestments",
        "AvailableForSaleSecuritiesDebtSecuritiesNoncurrent",
    ],
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
    "tax_liabilities": [
        "AccruedIncomeTaxesNoncurrent",
        "DeferredTaxLiabilitiesNoncurrent",
        "DeferredIncomeTaxLiabilitiesNet",
    ],
    # equity including minority interest: assets = liabilities + equity holds with it
    "shareholders_equity": [
        "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
        "StockholdersEquity",
    ],
    "retained_earnings": ["RetainedEarningsAccumulatedDeficit"],
    "accumulated_other_comprehensive_income": ["AccumulatedOtherComprehensiveIncomeLossNetOfTax"],
    "liabilities_and_equity": ["LiabilitiesAndStockholdersEquity"],
    # cash flow (durations)
    "depreciation_and_amortization": [
        "DepreciationDepletionAndAmortization",
        "DepreciationAmortizationAndOther",
        "DepreciationAndAmortization",
        "Depreciation",
    ],
    "share_based_compensation": ["ShareBasedCompensation", "AllocatedShareBasedCompensationExpense"],
    "net_cash_flow_from_operations": ["NetCashProvidedByUsedInOperatingActivities"],
    "capex_payments": ["PaymentsToAcquirePropertyPlantAndEquipment", "PaymentsToAcquireProductiveAssets"],
    "acquisitions_payments": ["PaymentsToAcquireBusinessesNetOfCashAcquired"],
    "investment_payments": [
        "PaymentsToAcquireAvailableForSaleSecuritiesDebt",
        "PaymentsToAcquireInvestments",
        "PaymentsToAcquireMarketableSecurities",
    ],
    "investment_proceeds_maturities": [
        "ProceedsFromMaturitiesPrepaymentsAndCallsOfAvailableForSaleSecurities",
        "ProceedsFromSaleMaturityAndCollectionsOfInvestments",
    ],
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
        "CashAndCashEquivalentsPeriodIncreaseDecrease",
    ],
    "effect_of_exchange_rate_changes": [
        "EffectOfExchangeRateOnCashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
        "EffectOfExchangeRateOnCashAndCashEquivalents",
    ],
    "ending_cash_balance": [
        "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents",
        "CashAndCashEquivalentsAtCarryingValue",
    ],
}

#: the fields that are period-end instants (balance-sheet stocks); every other field is a duration
INSTANT_FIELDS = {
    "total_assets",
    "current_assets",
    "cash_and_equivalents",
    "inventory",
    "current_investments",
    "accounts_receivable",
    "nontrade_receivables",
    "non_current_assets",
    "property_plant_and_equipment",
    "goodwill",
    "intangibles",
    "non_current_investments",
    "outstanding_shares",
    "tax_assets",
    "total_liabilities",
    "current_liabilities",
    "debt_current",
    "long_term_debt_current",
    "commercial_paper",
    "trade_and_non_trade_payables",
    "deferred_revenue",
    "deposit_liabilities",
    "non_current_liabilities",
    "non_current_debt",
    "tax_liabilities",
    "shareholders_equity",
    "retained_earnings",
    "accumulated_other_comprehensive_income",
    "liabilities_and_equity",
    "ending_cash_balance",
}
#: share counts (multiplied by later splits; not additive over quarters)
SHARE_COUNTS = {"weighted_average_shares", "weighted_average_shares_diluted"}
#: the forms whose facts feed the statements
STATEMENT_FORMS = {"10-K", "10-Q", "10-K/A", "10-Q/A", "10-KT"}
#: a concept's rank within its field's list (the first listed wins)
CONCEPT_ORDER = {c: i for f, cs in CONCEPTS.items() for i, c in enumerate(cs)}

#: the statement fields of the record schemas (a vintage is kept only for these)
SCHEMA_FIELDS = {f for name in STATEMENT_FIELDS for f in STATEMENT_FIELDS[name]}
#: the flows of a quarter: summed into a TTM row, differenced into a fiscal Q4
FLOW_FIELDS = sorted(
    {f for name in ("income_statements", "cash_flow_statements") for f in STATEMENT_FIELDS[name]}
    - INSTANT_FIELDS
    - SHARE_COUNTS
    - {"dividends_per_common_share"}
)

#: a statement row is its period's own report: the filing that first reported the period must come within this many
#: days of the period end (a later first report is a comparative in a later filing whose own report predates XBRL)
MAX_FILING_LAG = 200


def duration_kind(days: float) -> str | None:
    """The kind of a duration fact by its length in days: ``Q``, ``H`` (half year), ``9M``, ``FY`` or ``None``.

    Args:
        days: end - start + 1.

    Returns:
        The kind, ``None`` for other lengths.

    Example:
        >>> [duration_kind(d) for d in (91, 182, 273, 364, 30)]
        ['Q', 'H', '9M', 'FY', None]
    """
    if 80 <= days <= 100:
        return "Q"
    if 170 <= days <= 200:
        return "H"
    if 260 <= days <= 290:
        return "9M"
    if 350 <= days <= 380:
        return "FY"
    return None


def fiscal_label(fy_end: pd.Timestamp) -> int:
    """The name of the fiscal year ending on a day: the calendar year it ends in, or the year before.

    A 52/53-week year ending in the first days of January belongs to the year before (NVDA FY2026 ends
    2026-01-25).

    Args:
        fy_end: the last day of the fiscal year.

    Returns:
        The fiscal year's number.

    Example:
        >>> fiscal_label(pd.Timestamp("2026-01-25")), fiscal_label(pd.Timestamp("2023-01-01"))
        (2026, 2022)
    """
    return int(fy_end.year) - (1 if fy_end.month == 1 and fy_end.day <= 7 else 0)
