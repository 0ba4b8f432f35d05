"""Schemathesis against the real service's OpenAPI documents (2026 and the 2025 seed document), over real HTTP.

A client written from those documents must work against ``fdkit serve``: no 5xx, no status code the document
does not list, the documented content type, and every response valid against the document's schema. The runs are
given valid tickers (and banks, CIKs) so they reach 200s. Where the document itself is wrong, the place is listed in
:data:`DOCUMENT_ERRORS` with why, and only that place is relaxed (marked nullable); every other field stays strict.
``FDKIT_FUZZ_EXAMPLES`` / 7 cases per operation (default 14; ``FDKIT_FUZZ_EXAMPLES=700`` gives 100).
"""

from __future__ import annotations

import copy
import json
import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from reference import REFERENCE
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

DOCUMENTS = ("openapi.json", "openapi-simonxabris-2025.json")
EXAMPLES = max(5, int(os.environ.get("FDKIT_FUZZ_EXAMPLES", "100")) // 7)

#: values a generated request draws from, so that runs reach 200s (other parameters stay free)
VALID = {
    "ticker": ["AAPL", "NVDA", "MSFT", "GOOGL"],
    "cik": ["0000320193", "0001045810"],
    "bank": ["FED", "ECB"],
    "filer_cik": ["0001790837"],
    "holding": ["AAPL", "MSFT"],
}
#: per path, values that differ from the above (crypto pairs; years with filings)
VALID_AT = {
    "/crypto/prices": {"ticker": ["BTC-USD", "ETH-USD"]},
    "/crypto/prices/snapshot": {"ticker": ["BTC-USD", "ETH-USD"]},
    "/filings/items": {"year": [2024, 2025]},
}
#: values the search bodies draw from: screener fields, tickers and line items the lake has
BODY_VALUES = {
    "field": ["revenue", "net_income", "total_assets", "free_cash_flow", "price_to_earnings_ratio"],
    "tickers": ["AAPL", "NVDA", "MSFT"],
    "line_items": ["revenue", "net_income", "total_assets", "free_cash_flow"],
}

_NULL_WHERE_UNREPORTED = (
    "a company that does not report a line item (a bank has no inventory, most have no deposit liabilities) has no "
    "value for it; the document types statement fields as numbers without `nullable` (the service answers null)"
)
_NO_ACCESSION = "filings the sources name without an accession number or index URL (data/SOURCES.md) answer null"
_FORM4_TABLE = (
    "the Form 4 table of data-real-2 (89,556 of the insider rows) has no filing date, director flag or security "
    "title, leaves title empty for some owners, has no price for gifts and some awards, and no holding before a "
    "trade whose direction it does not say: those are null (data/SOURCES.md), never made up"
)
#: (schema, property or "*") -> why the document is wrong there; these places alone accept null
DOCUMENT_ERRORS: dict[tuple[str, str], str] = {
    ("IncomeStatement", "*"): _NULL_WHERE_UNREPORTED,
    ("BalanceSheet", "*"): _NULL_WHERE_UNREPORTED,
    ("CashFlowStatement", "*"): _NULL_WHERE_UNREPORTED,
    ("FinancialMetrics", "*"): "a ratio without its inputs (no inventory: no inventory turnover) is null",
    ("FinancialMetricSnapshot", "*"): "a ratio without its inputs is null",
    ("CompanyFacts", "*"): "facts the sources do not hold for a company (SIC sector, website, listing date, "
    "employees, exchange) are null; the document marks none nullable",
    ("EarningsRecord", "accession_number"): _NO_ACCESSION,
    ("EarningsRecord", "filing_url"): _NO_ACCESSION,
    ("SegmentMetadata", "accession_number"): _NO_ACCESSION,
    ("SegmentMetadata", "filing_url"): _NO_ACCESSION,
    ("SegmentMetadata", "fiscal_period"): "as-reported periods older than the statement datasets have no fiscal "
    "label in the lake",
    ("Filing", "report_date"): "forms without a period of report (8-K/A, 144, SC 13G ...) have none (EDGAR leaves "
    "reportDate empty)",
    ("PriceSnapshot", "market_cap"): "a ticker whose share count the sources lack has no market cap",
    **{
        ("InsiderTrade", f): _FORM4_TABLE
        for f in (
            "filing_date",
            "title",
            "is_board_director",
            "security_title",
            "transaction_price_per_share",
            "transaction_value",
            "shares_owned_before_transaction",
            "shares_owned_after_transaction",
        )
    },
    ("News", "sentiment"): "no sentiment is computed for the bundled headlines (data/SOURCES.md)",
    ("News", "author"): "headlines whose source names no author",
    ("FilingItemsResponse", "accession_number"): _NO_ACCESSION,
    ("FilingItemsResponse", "quarter"): "an 8-K reports an event, not a period: null (a 10-Q's and a 10-K's "
    "quarter are integers; data/SOURCES.md)",
}
#: places whose documented type is wrong rather than too strict about null: checked as any value
DOCUMENT_TYPE_ERRORS = {
    ("search_results", "additionalProperties"): "the screener's and line items' metric fields are numbers; the "
    "document types the additional properties as strings",
}


#: response schemas written as ``oneOf`` whose branches require nothing, so every answer matches both: checked as
#: ``anyOf`` (the answer must match one of the documented shapes)
AMBIGUOUS_ONE_OF = {
    "/index-funds": "IndexFundHoldingsResponse and IndexFundsForHoldingResponse declare no required properties",
}


def _relaxed(doc: dict) -> dict:
    """The document with valid identifiers to draw from and its listed errors relaxed (nullable there only)."""
    doc = copy.deepcopy(doc)

    def fix(param: dict, path: str = "") -> dict:
        values = {**VALID, **VALID_AT.get(path, {})}
        if param.get("name") in values and param.get("in") == "query":
            kind = "integer" if isinstance(values[param["name"]][0], int) else "string"
            param = {**param, "schema": {"type": kind, "enum": values[param["name"]]}}
        return param

    shared = doc.get("components", {}).get("parameters", {})
    for name, param in list(shared.items()):
        shared[name] = fix(param)
    for path, ops in doc["paths"].items():
        for op in ops.values():
            if not isinstance(op, dict):
                continue
            params = op.get("parameters", [])
            for i, param in enumerate(params):  # a shared parameter a path needs other values of: inlined
                if "$ref" in param and path in VALID_AT:
                    param = shared.get(param["$ref"].split("/")[-1], param)
                params[i] = fix(param, path) if "$ref" not in param else param
    for path in AMBIGUOUS_ONE_OF:
        for op in doc["paths"].get(path, {}).values():
            for media in op.get("responses", {}).get("200", {}).get("content", {}).values():
                if "oneOf" in media.get("schema", {}):
                    media["schema"] = {"anyOf": media["schema"]["oneOf"]}
    schemas = doc.get("components", {}).get("schemas", {})
    for name in ("SearchFiltersRequest", "SearchLineItemsRequest"):
        props = schemas.get(name, {}).get("properties", {})
        if "filters" in props:
            props["filters"]["items"]["properties"]["field"] = {"type": "string", "enum": BODY_VALUES["field"]}
        for key in ("tickers", "line_items"):
            if key in props:
                props[key]["items"] = {"type": "string", "enum": BODY_VALUES[key]}
    responses = [
        m.get("schema", {})
        for ops in doc["paths"].values()
        for op in ops.values()
        if isinstance(op, dict)
        for m in op.get("responses", {}).get("200", {}).get("content", {}).values()
    ]
    for schema in [*schemas.values(), *responses]:
        results = (schema.get("properties") or {}).get("search_results", {})
        if isinstance(results.get("items"), dict) and "additionalProperties" in results["items"]:
            results["items"]["additionalProperties"] = {}  # DOCUMENT_TYPE_ERRORS: numbers typed as text
    if "volume" in schemas.get("Price", {}).get("properties", {}):
        schemas["Price"]["properties"]["volume"].pop("type", None)  # DOCUMENT_TYPE_ERRORS: fractional volumes
    for (name, prop), _why in DOCUMENT_ERRORS.items():
        parts = [schemas.get(name, {})] + list(schemas.get(name, {}).get("allOf", []))
        for part in parts:
            for key, spec in (part.get("properties") or {}).items():
                if prop in ("*", key) and isinstance(spec, dict):
                    spec["nullable"] = True
    return doc


def _operations(name: str) -> list:
    path = REFERENCE / name
    if not path.exists():
        return []
    schema = schemathesis.openapi.from_dict(_relaxed(json.loads(path.read_text())))
    return [(name, result.ok()) for result in schema.get_all_operations()]


OPERATIONS = [op for name in DOCUMENTS for op in _operations(name)]
COUNTS: dict[str, list[int]] = {}


def test_every_reference_operation_is_fuzzed():
    if not REFERENCE.exists():
        pytest.skip("shared/reference is not beside this checkout")
    assert len([o for o in OPERATIONS if o[0] == "openapi.json"]) == 49
    assert len([o for o in OPERATIONS if o[0] != "openapi.json"]) == 22


@pytest.mark.parametrize("doc_operation", OPERATIONS, ids=lambda o: f"{o[0]}:{o[1].label}")
def test_reference_document_conforms(doc_operation, ref_server, seed_server):
    name, operation = doc_operation
    statuses: list[int] = []
    # each document against the contract written from it: the 2026 one's, the seed's (fdkit.catalog.contracts)
    server = ref_server if name == "openapi.json" else seed_server

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
    )
    def run(case):
        response = case.call(base_url=server.base_url, headers={"X-API-KEY": server.api_key}, timeout=30)
        statuses.append(response.status_code)
        case.validate_response(
            response,
            checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
        )

    run()
    print(f"{name} {operation.label}: {len(statuses)} cases, {statuses.count(200)} answered 200")
    assert statuses
