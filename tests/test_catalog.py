"""The catalog is complete and self-consistent."""

from __future__ import annotations

import pytest

from fdkit.catalog.endpoints import CATALOG, by_path, get, listing_for
from fdkit.catalog.schema import SCHEMAS

REQUIRED = [
    ("GET", "/financials/balance-sheets"),
    ("GET", "/financials/income-statements"),
    ("GET", "/financials/cash-flow-statements"),
    ("GET", "/financials/segmented-revenues"),
    ("GET", "/financials/income-statements/segments"),
    ("GET", "/financials/balance-sheets/segments"),
    ("GET", "/financials/cash-flow-statements/segments"),
    ("POST", "/financials/search/screener"),
    ("POST", "/financials/search/line-items"),
    ("GET", "/financial-metrics"),
    ("GET", "/prices"),
    ("GET", "/prices/snapshot"),
    ("GET", "/crypto/prices"),
    ("GET", "/news"),
    ("GET", "/filings"),
    ("GET", "/filings/items"),
    ("GET", "/insider-trades"),
    ("GET", "/insider-ownership"),
    ("GET", "/institutional-ownership"),
    ("GET", "/company/facts"),
    ("GET", "/macro/interest-rates"),
    ("GET", "/macro/interest-rates/snapshot"),
    ("GET", "/analyst-estimates"),
    ("GET", "/earnings"),
    ("GET", "/kpi/guidance"),
    ("GET", "/kpi/non-gaap"),
    ("GET", "/kpi/metrics"),
    ("GET", "/macro/inflation/snapshot"),
    ("GET", "/macro/labor/snapshot"),
    ("GET", "/macro/labor"),
    ("GET", "/macro/inflation"),
    ("GET", "/splits"),
    ("GET", "/crypto/prices/snapshot"),
    ("GET", "/financials/vintages"),
    ("GET", "/macro/yield-curve/snapshot"),
]
LISTINGS = [
    "/financials/segmented-revenues/tickers/",
    "/financials/balance-sheets/tickers/",
    "/company/facts/tickers/",
    "/company/facts/ciks/",
    "/filings/tickers/",
    "/prices/tickers/",
    "/prices/snapshot/tickers/",
    "/crypto/prices/tickers/",
    "/institutional-ownership/investors/",
    "/institutional-ownership/tickers/",
    "/macro/interest-rates/banks/",
    "/analyst-estimates/tickers/",
    "/analyst-estimates/periods",
    "/insider-trades/names",
    "/insider-trades/transaction-types",
]


@pytest.mark.parametrize(("method", "path"), REQUIRED)
def test_required_path_present(method, path):
    ep = by_path(path, method)
    assert ep.method == method
    assert ep.auth and ep.kind != "listing"


@pytest.mark.parametrize("path", LISTINGS)
def test_listing_present_and_keyless(path):
    ep = by_path(path)
    assert ep.kind == "listing" and not ep.auth and ep.tier == "free"


def test_every_entry_is_complete():
    for ep in CATALOG.values():
        assert ep.path.startswith("/") and not ep.path.endswith("/")
        assert ep.response_key or ep.response_schema is not None, ep.name  # a document is its own body
        assert ep.ttl != 0
        if ep.kind != "listing":
            assert ep.schema in SCHEMAS, ep.name
            for col in ep.index:
                assert col in SCHEMAS[ep.schema] or ep.kind == "search", (ep.name, col)
        for p in ep.params:
            assert p.type in {"string", "integer", "number", "boolean", "date", "array"}
            if p.enum:
                assert p.default is None or p.default in p.enum
            if p.min is not None and p.max is not None:
                assert p.min <= p.max
        for group in ep.one_of + ep.exclusive:
            assert set(group) <= set(ep.param_names)
        if ep.paginated:
            assert ep.page_size and ep.param("limit")


def test_page_sizes_and_defaults():
    assert get("prices").page_size == 100 and get("prices").param("limit").max == 5000
    assert get("income_statements").page_size == 10 and get("income_statements").default_limit == 4
    assert get("filing_items").ttl == -1
    assert get("price_snapshot").ttl < get("income_statements").ttl
    assert get("institutional_ownership").response_key == "institutional-ownership"
    assert get("company_facts").tier == "free"


def test_lookup_errors_name_the_problem():
    with pytest.raises(KeyError, match="unknown endpoint 'nope'"):
        get("nope")
    with pytest.raises(KeyError, match="no listing"):
        listing_for("nope")
    assert listing_for("prices").path == "/prices/tickers"
