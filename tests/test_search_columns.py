"""The screener and line items read only the columns they need, and answer exactly as from the whole frames.

A search over a market-scale lake read every column of four statement datasets (37 columns x 860,000 rows at
10,000 tickers) to answer a few fields; the columns it needs are known from the schemas and the Delta log, so only
those are read. Whatever the request (filters by name or alias, an order, a currency, a day the screen is run as
of, unknown fields that are a 400), the answer is byte for byte the one of the whole frames.
"""

from __future__ import annotations

import pytest
import requests

from fdkit.lake.io import default_data_dir, read_dataset, write_dataset
from fdkit.server import create_app, handlers, serve_app
from fdkit.server.store import Store

KEY = "k" * 32
SEARCHED = ("income_statements", "balance_sheets", "cash_flow_statements", "financial_metrics", "company_facts")

BODIES = [
    (
        "/financials/search/screener",
        {"filters": [{"field": "revenue", "operator": "gt", "value": 1e10}], "period": "annual", "limit": 50},
    ),
    (
        "/financials/search/screener",
        {
            "filters": [
                {"field": "pe_ratio", "operator": "lt", "value": 30},
                {"field": "total_assets", "operator": "gte", "value": 1e9},
            ],
            "period": "ttm",
            "limit": 100,
        },
    ),
    (
        "/financials/search/screener",
        {
            "filters": [{"field": "net_income", "operator": "gt", "value": 0}],
            "period": "quarterly",
            "currency": "usd",
            "filing_date_lte": "2020-06-30",
        },
    ),
    ("/financials/search/screener", {"filters": [{"field": "no_such_field", "operator": "gt", "value": 0}]}),
    (
        "/financials/search",
        {
            "filters": [{"field": "revenue", "operator": "gt", "value": 1}],
            "order_by": "-report_period",
            "period": "annual",
        },
    ),
    (
        "/financials/search/line-items",
        {"tickers": ["AAPL", "MSFT"], "line_items": ["revenue", "free_cash_flow"], "period": "annual", "limit": 3},
    ),
    ("/financials/search/line-items", {"tickers": ["AAPL"], "line_items": ["revenue", "nope"]}),
]


@pytest.fixture(scope="module")
def delta_lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("search") / "lake"
    for name in SEARCHED:
        write_dataset(root, name, read_dataset(default_data_dir(), name))
    return root


def _answers(root, lazy: bool, narrow: bool, monkeypatch) -> list[tuple[int, bytes]]:
    store = Store(root)
    if lazy:
        store._small = lambda name: False  # type: ignore[method-assign]
    if not narrow:
        monkeypatch.setattr(handlers, "_search_fields", lambda store, names: None)
    out = []
    with serve_app(create_app(root, {KEY: "pro"}, store=store)) as srv:
        for path, body in BODIES:
            r = requests.post(srv.base_url + path, json=body, headers={"X-API-KEY": KEY}, timeout=60)
            out.append((r.status_code, r.content))
    monkeypatch.undo()
    if lazy and narrow:  # the valid searches kept only some columns (the refused ones read every column)
        # ("frame", name, columns, where): a few columns of one period's rows
        kept = [k for k in store.cached() if k[0] == "frame" and k[1] == "income_statements" and k[2] is not None]
        assert len(kept) >= 3 and all(len(k[2]) <= 8 and dict(k[3]).keys() == {"period"} for k in kept)
    return out


@pytest.mark.parametrize("lazy", [False, True])
def test_a_search_reads_its_columns_and_answers_as_from_every_column(delta_lake, lazy, monkeypatch):
    whole = _answers(delta_lake, lazy, narrow=False, monkeypatch=monkeypatch)
    narrow = _answers(delta_lake, lazy, narrow=True, monkeypatch=monkeypatch)
    assert [s for s, _ in whole] == [200, 200, 200, 400, 200, 200, 400]
    assert sum(len(b) > 100 for s, b in whole if s == 200) >= 4  # the answers hold rows
    assert narrow == whole


@pytest.mark.parametrize("lazy", [False, True])
def test_a_screen_of_a_lake_with_income_statements_only(tmp_path, lazy):
    """A mirror of one statement dataset: the others' columns are absent, the screen is that dataset's own."""
    root = tmp_path / "lake"
    income = read_dataset(default_data_dir(), "income_statements")
    write_dataset(root, "income_statements", income)
    store = Store(root)
    if lazy:
        store._small = lambda name: False  # type: ignore[method-assign]
    body = {"filters": [{"field": "revenue", "operator": "gt", "value": 2e10}], "period": "quarterly", "limit": 500}
    with serve_app(create_app(root, {KEY: "pro"}, store=store)) as srv:
        r = requests.post(
            srv.base_url + "/financials/search/screener", json=body, headers={"X-API-KEY": KEY}, timeout=60
        )
    assert r.status_code == 200, r.text
    got = [(row["ticker"], row["report_period"], row["revenue"]) for row in r.json()["search_results"]]
    # the same screen by hand: each ticker's latest quarter, kept when its revenue passes
    q = income[income["period"].astype(str) == "quarterly"].sort_values(["ticker", "report_period"])
    latest = q.groupby(q["ticker"].astype(str)).tail(1)
    want = latest[latest["revenue"] > 2e10].sort_values("ticker")
    assert len(want) > 20
    assert got == [
        (str(t), d.strftime("%Y-%m-%d"), float(v))
        for t, d, v in want[["ticker", "report_period", "revenue"]].itertuples(index=False)
    ]
