"""Record schemas: every field of every record the service returns, with its type, declared once.

The same table drives the typed DataFrames (:mod:`fdkit.frames`), the Parquet lake (:mod:`fdkit.lake`) and
the server's OpenAPI document and responses (:mod:`fdkit.server`). Logical types map to pandas dtypes:

==========  =======================  =====================================
logical     pandas dtype             JSON
==========  =======================  =====================================
float       ``float64``              number or null
int         ``Int64``                integer or null
string      ``string``               string or null
category    ``category``             string or null (low cardinality)
bool        ``boolean``              boolean or null
date        ``datetime64[ns]``       ``"YYYY-MM-DD"``
datetime    ``datetime64[ns, UTC]``  ISO-8601 (``...Z``)
nested      (exploded or flattened)  array/object, handled per dataset
==========  =======================  =====================================

Example:
    >>> from fdkit.catalog.schema import SCHEMAS, pandas_dtype
    >>> SCHEMAS["prices"]["close"], pandas_dtype("float")
    ('float', 'float64')
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = [
    "SCHEMAS",
    "LOGICAL_TYPES",
    "KNOWN_CATEGORIES",
    "COMPANY_EVENT_FIELDS",
    "NESTED_ITEMS",
    "SEGMENT_REPORT",
    "pandas_dtype",
    "fields_of",
    "STATEMENT_FIELDS",
    "OWNERSHIP_FORMS",
    "WIRE_TYPES",
]

F, INT, S, C, B, D, T, N = "float", "int", "string", "category", "bool", "date", "datetime", "nested"

LOGICAL_TYPES: Mapping[str, str] = MappingProxyType(
    {
        F: "float64",
        INT: "Int64",
        S: "string",
        C: "category",
        B: "boolean",
        D: "datetime64[ns]",
        T: "datetime64[ns, UTC]",
    }
)


#: category fields whose values are a fixed, documented set: frames always carry the whole set as categories, so a
#: column whose values are all missing still has categories and survives a Parquet round trip exactly (pyarrow
#: reads an empty category set back with ``object`` categories)
KNOWN_CATEGORIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "sentiment": ("negative", "neutral", "positive"),
        "put_call": ("Call", "Put"),
        "index": ("sp400", "sp500", "sp600"),  # index membership
        # statements: a TTM row (a sum of four filings) has no form type, so a TTM-only frame is all-missing
        "form_type": ("10-K", "10-Q"),
        # earnings: a surprise needs an estimate (the reference data has none), a window an acceptance time
        **{f"{p}_{s}_surprise": ("BEAT", "MEET", "MISS") for p in ("quarterly", "annual") for s in ("revenue", "eps")},
        "filing_window": ("AFTER_HOURS", "DURING_MARKET", "PRE_MARKET", "WEEKEND"),
        # insider ownership: the seed's contract says common where fdkit's names the table (non_derivative)
        "holding_type": ("common", "derivative", "non_derivative"),
        # price history: what ``close`` is on a row (refdata.history)
        "basis": ("adjusted_only", "as_traded", "price_only"),
        "delisting_kind": ("acquired", "bankrupt", "unknown", "sources_end"),
        "kind": ("cash", "special_or_in_kind"),  # dividends
        "price_source": ("ml4t", "pystock", "stooq_2017", "stooq_2025", "wiki", "yahoo_index"),
    }
)


#: the fields of each type of company-facts event: the spec's ticker change (``ticker`` = the symbol from ``date``
#: on; ``previous_ticker`` = the one before, an fdkit extension); ``former_name`` is how lakes built before
#: company facts had ``former_names`` (a field of its own) stored a former name in ``events``
COMPANY_EVENT_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "ticker_change": ("type", "date", "ticker", "previous_ticker"),
        "former_name": ("type", "name", "start_date", "end_date"),
    }
)


#: the entries of nested columns: (record schema, column) -> entry field -> logical type (a mapping: a nested
#: object). The lake writes these columns with exactly this Arrow type, so that files written apart (a mirror's
#: partition per ticker, a landing) agree whatever their rows hold: a part whose entries are all of one kind, or
#: that has none, would otherwise infer a type of its own, and the dataset's parts could not be read together.
NESTED_ITEMS: Mapping[tuple[str, str], Mapping[str, Any]] = MappingProxyType(
    {
        ("company_facts", "events"): dict.fromkeys(
            ("type", "date", "ticker", "previous_ticker", "name", "start_date", "end_date"), "string"
        ),
        ("company_facts", "former_names"): dict.fromkeys(("name", "start_date", "end_date"), "string"),
        ("earnings", "signals"): {
            **dict.fromkeys(("type", "metric", "period", "headline", "importance"), "string"),
            "details": dict.fromkeys(("current", "yoy_chg", "yoy_chg_bps"), "float"),
        },
        ("filing_items", "exhibits"): dict.fromkeys(("number", "description", "url", "text"), "string"),
    }
)


def pandas_dtype(logical: str) -> str:
    """Return the pandas dtype string of a logical type.

    Args:
        logical: one of ``float``, ``int``, ``string``, ``category``, ``bool``, ``date``, ``datetime``.

    Returns:
        The dtype name accepted by ``DataFrame.astype``.

    Example:
        >>> pandas_dtype("int")
        'Int64'
    """
    try:
        return LOGICAL_TYPES[logical]
    except KeyError:
        raise ValueError(f"unknown logical type {logical!r}") from None


def _floats(*names: str) -> dict[str, str]:
    return {n: F for n in names}


STATEMENT_HEADER = {
    "ticker": C,
    "report_period": D,
    "fiscal_period": C,
    "period": C,
    "currency": C,
    "cik": S,
    "accession_number": S,
    "filing_url": S,
    "filing_date": D,
    # extension: the SEC's acceptance time in Eastern Time (ISO 8601 with its offset), where the lake knows it
    "filing_datetime": S,
    "form_type": C,
}

INCOME_FIELDS = (
    "revenue",
    "cost_of_revenue",
    "gross_profit",
    "operating_expense",
    "selling_general_and_administrative_expenses",
    "research_and_development",
    "operating_income",
    "interest_expense",
    "ebit",
    "income_tax_expense",
    "net_income_discontinued_operations",
    "net_income_non_controlling_interests",
    "net_income",
    "net_income_common_stock",
    "preferred_dividends_impact",
    "consolidated_income",
    "earnings_per_share",
    "earnings_per_share_diluted",
    "dividends_per_common_share",
    "weighted_average_shares",
    "weighted_average_shares_diluted",
)
BALANCE_FIELDS = (
    "total_assets",
    "current_assets",
    "cash_and_equivalents",
    "inventory",
    "current_investments",
    "trade_and_non_trade_receivables",
    "non_current_assets",
    "property_plant_and_equipment",
    "goodwill_and_intangible_assets",
    "investments",
    "non_current_investments",
    "outstanding_shares",
    "tax_assets",
    "total_liabilities",
    "current_liabilities",
    "current_debt",
    "trade_and_non_trade_payables",
    "deferred_revenue",
    "deposit_liabilities",
    "non_current_liabilities",
    "non_current_debt",
    "tax_liabilities",
    "shareholders_equity",
    "retained_earnings",
    "accumulated_other_comprehensive_income",
    "total_debt",
)
CASH_FLOW_FIELDS = (
    "net_income",
    "depreciation_and_amortization",
    "share_based_compensation",
    "net_cash_flow_from_operations",
    "capital_expenditure",
    "business_acquisitions_and_disposals",
    "investment_acquisitions_and_disposals",
    "net_cash_flow_from_investing",
    "issuance_or_repayment_of_debt_securities",
    "issuance_or_purchase_of_equity_shares",
    "dividends_and_other_cash_distributions",
    "net_cash_flow_from_financing",
    "change_in_cash_and_equivalents",
    "effect_of_exchange_rate_changes",
    "ending_cash_balance",
    "free_cash_flow",
)
METRIC_FIELDS = (
    "market_cap",
    "enterprise_value",
    "price_to_earnings_ratio",
    "price_to_book_ratio",
    "price_to_sales_ratio",
    "enterprise_value_to_ebitda_ratio",
    "enterprise_value_to_revenue_ratio",
    "free_cash_flow_yield",
    "peg_ratio",
    "gross_margin",
    "operating_margin",
    "net_margin",
    "return_on_equity",
    "return_on_assets",
    "return_on_invested_capital",
    "asset_turnover",
    "inventory_turnover",
    "receivables_turnover",
    "days_sales_outstanding",
    "operating_cycle",
    "working_capital_turnover",
    "current_ratio",
    "quick_ratio",
    "cash_ratio",
    "operating_cash_flow_ratio",
    "debt_to_equity",
    "debt_to_assets",
    "interest_coverage",
    "revenue_growth",
    "earnings_growth",
    "book_value_growth",
    "earnings_per_share_growth",
    "free_cash_flow_growth",
    "operating_income_growth",
    "ebitda_growth",
    "payout_ratio",
    "earnings_per_share",
    "book_value_per_share",
    "free_cash_flow_per_share",
)

#: every numeric statement line item, by statement
STATEMENT_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "income_statements": INCOME_FIELDS,
        "balance_sheets": BALANCE_FIELDS,
        "cash_flow_statements": CASH_FLOW_FIELDS,
    }
)

EARNINGS_DIMENSION = (
    "revenue",
    "estimated_revenue",
    "earnings_per_share",
    "estimated_earnings_per_share",
    "net_income",
    "gross_profit",
    "operating_income",
    "weighted_average_shares",
    "weighted_average_shares_diluted",
    "cash_and_equivalents",
    "total_debt",
    "total_assets",
    "total_liabilities",
    "shareholders_equity",
    "net_cash_flow_from_operations",
    "capital_expenditure",
    "net_cash_flow_from_investing",
    "net_cash_flow_from_financing",
    "change_in_cash_and_equivalents",
    "free_cash_flow",
)

#: figures of an earnings release derived from the lake's history (the 2026 record): changes against the previous
#: quarter (``_chg``; the previous year in the annual payload), against the same quarter a year earlier
#: (``_yoy_chg``, quarterly only), margins and their changes in basis points and percent, surprises
_EARNINGS_CHANGED = (
    "revenue",
    "earnings_per_share",
    "gross_profit",
    "operating_income",
    "net_income",
    "net_cash_flow_from_operations",
    "net_cash_flow_from_investing",
    "net_cash_flow_from_financing",
    "capital_expenditure",
    "free_cash_flow",
)
EARNINGS_MARGINS = {"gross_margin": "gross_profit", "operating_margin": "operating_income", "net_margin": "net_income"}
EARNINGS_DERIVED: dict[str, tuple[str, ...]] = {
    "annual": (
        *(f"{x}_chg" for x in _EARNINGS_CHANGED),
        *EARNINGS_MARGINS,
        *(f"{m}_chg_{u}" for m in EARNINGS_MARGINS for u in ("bps", "pct")),
        "revenue_surprise_pct",
        "eps_surprise_pct",
    ),
}
EARNINGS_DERIVED["quarterly"] = (
    *EARNINGS_DERIVED["annual"],
    *(f"{x}_yoy_chg" for x in _EARNINGS_CHANGED),
    *(f"{m}_yoy_chg_{u}" for m in EARNINGS_MARGINS for u in ("bps", "pct")),
)
#: the income statement's amounts in USD (converted at the filing's rate; equal to the amount for USD reporters)
INCOME_USD_FIELDS = ("revenue_usd", "ebit_usd", "earnings_per_share_usd", "net_income_common_stock_usd")

_SEGMENT_ITEM = {
    # one row per item x segment member (see shapes.SegmentItems)
    "name": S,
    "amount": F,
    "start_period": D,
    "end_period": D,
    "segment_label": S,
    "segment_type": C,
    # the member as the filing tags it (``aapl:IPhoneMember``); segment_label is its human label (``iPhone``)
    "xbrl_member": S,
    # extension: the hierarchy of one axis. A subtotal (NVIDIA's Data Center) is the sum of the members that name
    # it as their parent (Compute, Networking): sum the rows that are not subtotals and nothing counts twice
    "is_subtotal": B,
    "parent_label": S,
}

#: the header of one segmented-revenues report (a nested record's top level)
SEGMENT_REPORT = {
    "ticker": C,
    "report_period": D,
    "period": C,
    "fiscal_period": C,
    "currency": C,
    "accession_number": S,
    "filing_date": D,
}
_SEGMENT_ROW = {"ticker": C, "report_period": D, "period": C, **_SEGMENT_ITEM}

_KPI_BASE = {
    "ticker": C,
    "metric_name": S,
    "value": F,
    "unit": C,
    "period": S,
    "period_type": C,
    "report_period": D,
    "segment": S,
    "source_text": S,
    "source_url": S,
}

#: a bar of prices (equities and crypto alike: the 2025 document's Price record types volume integer)
_BARS = {"ticker": C, "time": T, "time_milliseconds": INT, "open": F, "high": F, "low": F, "close": F, "volume": INT}

_SCHEMAS: dict[str, dict[str, str]] = {
    # extension ``quality``: why a value the source gave is missing (it failed a sanity rule) and which values are
    # derived rather than reported (refdata.quality); missing on a clean row
    "income_statements": {**STATEMENT_HEADER, **_floats(*INCOME_FIELDS, *INCOME_USD_FIELDS), "quality": S},
    "balance_sheets": {**STATEMENT_HEADER, **_floats(*BALANCE_FIELDS)},
    "cash_flow_statements": {**STATEMENT_HEADER, **_floats(*CASH_FLOW_FIELDS)},
    # the three statements of one period side by side (/financials): a field two statements report (net income)
    # keeps the income statement's value, the filing header the income statement's
    "financial_statements": {
        **STATEMENT_HEADER,
        **_floats(*INCOME_FIELDS, *INCOME_USD_FIELDS),
        "quality": S,
        **_floats(*BALANCE_FIELDS, *CASH_FLOW_FIELDS),
    },
    "financial_metrics": {**STATEMENT_HEADER, **_floats(*METRIC_FIELDS)},
    "segmented_revenues": {**SEGMENT_REPORT, "items": N},
    # the rows a segments frame has after explosion
    "segment_items": _SEGMENT_ROW,
    # the lake's rows of segmented revenues: the frame's columns, the report header, and the positions of the
    # item in its report and of the member in its item (so the service nests them back in their order)
    "segment_rows": {**_SEGMENT_ROW, **SEGMENT_REPORT, "item": INT, "member": INT},
    "segmented_financials": {
        "ticker": C,
        "report_period": D,
        "fiscal_period": C,
        "period": C,
        "currency": C,
        "accession_number": S,
        "filing_url": S,
        "filing_date": D,
        "line_item": S,
        "category": C,
        "label": S,
        "value": F,
        "xbrl_member": S,
        "is_subtotal": B,
        "parent_label": S,
    },
    "search_results": {"ticker": C, "report_period": D, "period": C, "currency": C, "filing_date": D},
    # adj_close and basis are fdkit extensions: open..close are as traded on today's split basis (dividends never in
    # them) where basis is as_traded, missing where it is adjusted_only (no as-traded source for the day);
    # adj_close is split- and dividend-adjusted as of 2026-02-25 where a source has it (the long-history names)
    "prices": {**_BARS, "adj_close": F, "basis": C},
    # twenty years of daily closes of every company ever in the S&P 500/400/600 (an fdkit extension, shipped by
    # the fdkit-history package): close = as traded on today's split basis (missing where no raw close exists),
    # adj_close = split- and dividend-adjusted (total return) on the basis of adjusted_as_of, dividend = cash per
    # share on the close's basis on an ex-date (0 on other as-traded days, missing where close is)
    "price_history": {
        "ticker": C,
        "date": D,
        "close": F,
        "adj_close": F,
        "dividend": F,
        "volume": INT,
        "basis": C,
        "adjusted_as_of": D,
        "price_source": C,
    },
    # the last trading day of a company of the price history that stopped trading (an fdkit extension)
    "delistings": {
        "ticker": C,
        "date": D,
        "adj_close": F,
        "delisting_kind": C,
        "reason": S,
        "data_end": B,
        "delisting_return": F,
        "delisting_return_note": S,
    },
    "crypto_prices": dict(_BARS),
    # Coinbase minute trade bars (a lake dataset no endpoint serves): volume in coins, fractional
    "crypto_prices_minute": {**_BARS, "volume": F},
    "price_snapshot": {
        "ticker": C,
        "price": F,
        "day_change": F,
        "day_change_percent": F,
        "market_cap": F,
        "time": T,
        "time_milliseconds": INT,
    },
    "news": {"ticker": C, "date": D, "title": S, "author": S, "source": C, "url": S, "sentiment": C},
    "filings": {
        "ticker": C,
        "filing_date": D,
        "cik": S,
        "accession_number": S,
        "filing_type": C,
        "report_date": D,
        "url": S,
    },
    # IPO registration statements (fdkit.catalog.endpoints.REGISTRATION_FORMS) of the filings dataset; the offering
    # is classified (ipo, spac, shell_company, resale, other) only where a source reads the cover page
    "ipos": {
        "ticker": C,
        "cik": S,
        "accession_number": S,
        "filing_type": C,
        "filing_date": D,
        "url": S,
        "classification": C,
    },
    "filing_items": {
        "ticker": C,
        "filing_date": D,
        "accession_number": S,
        "filing_type": C,
        "year": INT,
        "quarter": INT,
        "number": S,
        "name": S,
        "text": S,
        "exhibits": N,
    },
    "insider_trades": {
        "ticker": C,
        "filing_date": D,
        # exact (the EDGAR index, the SEC's Form 3/4/5 data set, a source that saw it the day after), upper_bound
        # (filed on or before filing_date: a conservative point-in-time date), lower_bound (a signature date),
        # implausible (the source's date breaks the Form 4 deadline by months: no filing_date served)
        "filing_date_kind": C,
        "issuer": S,
        "name": S,
        "title": S,
        "is_board_director": B,
        "transaction_date": D,
        "transaction_shares": F,
        "transaction_price_per_share": F,
        "transaction_value": F,
        "shares_owned_before_transaction": F,
        "shares_owned_after_transaction": F,
        "security_title": S,
        "transaction_type": C,
        "accession_number": S,
        "form_type": C,
    },
    "insider_ownership": {
        "ticker": C,
        "filing_date": D,
        "filing_date_kind": C,  # as insider_trades'
        "issuer": S,
        "name": S,
        "title": S,
        "is_board_director": B,
        "is_officer": B,
        "is_ten_percent_owner": B,
        "security_title": S,
        "shares_owned": F,
        "direct_or_indirect": C,
        "holding_type": C,
        "as_of_date": D,
        "accession_number": S,
        "form_type": C,
    },
    "institutional_ownership": {
        "ticker": C,
        "report_period": D,
        "investor": S,
        "investor_cik": S,
        "price": F,
        "shares": F,
        "market_value": F,
        "filing_date": D,
        "accession_number": S,
        # the form the information table came with: 13F-HR (an original) or 13F-HR/A (an amendment)
        "form_type": C,
        "put_call": C,
        # the 2026 record's identifiers of the held security, as the 13F reports them
        "name_of_issuer": S,
        "cusip": S,
        "title_of_class": S,
    },
    # the 2026 record of a 13F position (/institutional-holdings), mapped from the institutional_ownership rows
    "institutional_holdings": {
        "ticker": C,
        "name_of_issuer": S,
        "cusip": S,
        "report_period": D,
        "filing_date": D,
        "form_type": C,
        "accession_number": S,
        "title_of_class": S,
        "put_call": C,
        "shares": INT,
        "value_usd": INT,
        "reported_price": F,
        "filer_cik": S,
        "filer_name": S,
    },
    "company_facts": {
        "ticker": C,
        "name": S,
        "cik": S,
        "industry": S,
        "sector": C,
        "category": C,
        "exchange": C,
        "is_active": B,
        "listing_date": D,
        "location": S,
        "market_cap": F,
        "number_of_employees": INT,
        "sec_filings_url": S,
        "sic_code": S,
        "sic_industry": S,
        "sic_sector": S,
        "website_url": S,
        "weighted_average_shares": F,
        # the company's history, each entry with the fields of its type (COMPANY_EVENT_FIELDS)
        "events": N,
        # the names the SEC lists it under before its current one ({name, start_date, end_date}; an extension)
        "former_names": N,
    },
    "interest_rates": {"bank": C, "date": D, "name": S, "rate": F},
    "analyst_estimates": {
        "ticker": C,
        "fiscal_period": D,
        "period": C,
        "revenue": F,
        "earnings_per_share": F,
        "method": C,
    },
    "earnings": {
        "ticker": C,
        "report_period": D,
        "fiscal_period": C,
        "currency": C,
        "source_type": C,
        "filing_date": D,
        # the SEC's acceptance time in Eastern Time (ISO 8601 with its offset), and the market session it fell in
        "filing_datetime": S,
        "filing_window": C,
        "accession_number": S,
        "filing_url": S,
        # the day the results were announced (8-K Item 2.02), an fdkit extension: before the 10-Q/10-K's filing
        "release_date": D,
        # the acceptance time of that 8-K (ISO 8601 with its offset) where the SEC submissions index has it
        "release_datetime": S,
        # the 2026 record's signals: [{type, metric, period, headline, importance, details}] (omitted when none)
        "signals": N,
        **{f"quarterly_{f}": F for f in EARNINGS_DIMENSION},
        **{f"annual_{f}": F for f in EARNINGS_DIMENSION},
        **{f"{p}_{f}": F for p, fields in EARNINGS_DERIVED.items() for f in fields},
        **{f"{p}_{s}_surprise": C for p in ("quarterly", "annual") for s in ("revenue", "eps")},
    },
    "kpi_metrics": {**_KPI_BASE, "yoy_value": F, "yoy_change_pct": F},
    "kpi_guidance": {
        **_KPI_BASE,
        "low": F,
        "high": F,
        "point_estimate": F,
        "prior_value": F,
        "raw_text": S,
        "change_direction": C,
    },
    "kpi_non_gaap": {**_KPI_BASE, "gaap_equivalent": S, "key_adjustments": S},
    "inflation": {"series": C, "date": D, "value": F, "change_1m_pct": F, "change_12m_pct": F},
    "labor": {"series": C, "date": D, "value": F, "change": F, "change_year": F, "change_year_pct": F},
    # corporate actions (an fdkit extension): ratio = new shares per old share (4.0 for a 4-for-1 split)
    "splits": {"ticker": C, "date": D, "ratio": F, "source": C},
    # cash dividends per share by ex-date, on the split basis of prices (an fdkit extension)
    # kind: cash, or special_or_in_kind (a spin-off's shares, a special dividend); in_prices: the prices' closes of
    # the ticker already carry it, so a total return must not add it again (false in fdkit's lake: no close does)
    "dividends": {"ticker": C, "date": D, "dividend": F, "kind": C, "in_prices": B, "source": C},
    # every reported value of a statement field with the filing that reported it (an fdkit extension)
    "statement_vintages": {
        "ticker": C,
        "period": C,
        "report_period": D,
        "field": C,
        "value": F,
        "filing_date": D,
        "accession_number": S,
        "form_type": C,
        "concept": C,
        "revision": C,
    },
    "yield_curve": {
        "date": D,
        **_floats(
            "1_month",
            "2_month",
            "3_month",
            "4_month",
            "6_month",
            "1_year",
            "2_year",
            "3_year",
            "5_year",
            "7_year",
            "10_year",
            "20_year",
            "30_year",
        ),
    },
}

# the rows of /financials/segments: every statement's segment values, each saying its statement
_SCHEMAS["statement_segments"] = {**_SCHEMAS["segmented_financials"], "statement": C}

# an index fund's holdings, one row per (fund, held security) (/index-funds); source and total_net_assets are the
# fund header's (the provenance of the holdings, the fund's net assets in USD: the weights' denominator)
_SCHEMAS["index_funds"] = {
    "fund": C,
    "fund_name": S,
    "fund_cik": S,
    "ticker": C,
    "name": S,
    "cusip": S,
    "isin": S,
    "weight": F,
    "market_value": F,
    "shares": F,
    "asset_class": C,
    "as_of": D,
    "filing_date": D,
    "resolution_status": C,
    "source": S,
    "total_net_assets": F,
}

# as-reported line items, one row per (report, statement, line item) (/financials/*/as-reported)
_SCHEMAS["as_reported"] = {
    "ticker": C,
    "report_period": D,
    "fiscal_period": C,
    "period": C,
    "currency": C,
    "accession_number": S,
    "filing_url": S,
    "filing_date": D,
    "statement": C,
    "label": S,
    "full_label": S,
    "value": F,
    "parent": S,
}

# point-in-time index membership, one row per spell (an fdkit extension): start_date is the first day in the index,
# end_date the last (NaT while still a member)
_SCHEMAS["index_membership"] = {
    "index": C,
    "ticker": S,
    "name": S,
    "cik": S,
    "start_date": D,
    "end_date": D,
    "current_ticker": S,
}
#: a member as ``/index-members`` answers it: ``ticker`` works in every endpoint today, ``ticker_then`` is the
#: symbol of the time (they differ for a renamed company: FB's spell has ticker META)
_SCHEMAS["index_members"] = {
    "index": C,
    "ticker": C,
    "ticker_then": S,
    "name": S,
    "cik": S,
    "start_date": D,
    "end_date": D,
}

#: fields whose JSON type on the wire differs from their frame type: the service sends a filing's ``cik`` as an
#: integer; frames keep every CIK as the 10-digit string EDGAR spells (``records_of`` pads integers)
WIRE_TYPES: Mapping[tuple[str, str], str] = MappingProxyType({("filings", "cik"): INT})

#: the forms whose holdings ``insider_ownership`` holds (Form 4 rows are trades: ``insider_trades``)
OWNERSHIP_FORMS = ("3", "5", "3/A", "5/A")

SCHEMAS: Mapping[str, Mapping[str, str]] = MappingProxyType({k: MappingProxyType(v) for k, v in _SCHEMAS.items()})

#: yield-curve tenor columns, in maturity order
YIELD_TENORS: tuple[str, ...] = tuple(k for k in _SCHEMAS["yield_curve"] if k != "date")


def fields_of(schema: str, *, include_nested: bool = False) -> list[str]:
    """List the fields of a record schema in declaration order.

    Args:
        schema: name of the schema (a key of :data:`SCHEMAS`).
        include_nested: keep ``nested`` fields (arrays/objects) in the list.

    Returns:
        Field names.

    Example:
        >>> fields_of("interest_rates")
        ['bank', 'date', 'name', 'rate']
    """
    try:
        table = SCHEMAS[schema]
    except KeyError:
        raise KeyError(f"unknown record schema {schema!r}") from None
    return [f for f, t in table.items() if include_nested or t != N]
