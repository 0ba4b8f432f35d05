"""The service over real HTTP: every catalog path, auth, errors, pagination, cursors, docs."""

from __future__ import annotations

import base64

import pytest
import requests
from examples import BAD, EXAMPLES

import fdkit.server
from fdkit.catalog.endpoints import CATALOG
from fdkit.catalog.schema import SCHEMAS
from fdkit.catalog.shapes import SEGMENT_LINE_ITEMS
from fdkit.lake.io import default_data_dir, read_dataset

LISTINGS = [ep for ep in CATALOG.values() if ep.kind == "listing"]
SERVED = [ep for ep in CATALOG.values() if ep.kind != "listing"]


def call(srv, ep, params, key=True, path=None):
    headers = {"X-API-KEY": srv.api_key} if key else {}
    url = srv.base_url + (path or ep.path)
    if ep.method == "POST":
        return requests.post(url, json=params, headers=headers, timeout=30)
    return requests.get(url, params=params, headers=headers, timeout=30)


def _record_fields(ep):
    fields = set(SCHEMAS[ep.schema])
    if ep.schema == "segmented_financials":
        fields |= {
            "revenue",
            "operating_income",
            "gross_profit",
            "income_statement",
            "balance_sheet",
            "cash_flow_statement",
        }
        fields |= {item for items in SEGMENT_LINE_ITEMS.values() for item in items}
    if ep.shape.startswith("as_reported"):
        fields |= {"line_items", "income_statement", "balance_sheet", "cash_flow_statement"}
    if ep.shape == "statement_bundle":
        fields |= {"income_statements", "balance_sheets", "cash_flow_statements"}
    if ep.name == "earnings":
        fields |= {"quarterly", "annual"}
    return fields


@pytest.mark.parametrize("ep", SERVED, ids=lambda e: e.name)
def test_every_endpoint_answers_200_with_its_key_and_fields(ref_server, ep):
    params = EXAMPLES[ep.name]
    if params is None:  # no source for this dataset: documented 404
        r = call(ref_server, ep, {})
        assert r.status_code == 404 and set(r.json()) == {"error", "message"}
        return
    r = call(ref_server, ep, params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert ep.response_key in body
    value = body[ep.response_key]
    records = value if isinstance(value, list) else [value]
    if (
        ep.name.startswith("kpi_")
        or ep.name == "ipos"
        or ep.name.endswith(("balance_sheet_segments", "cash_flow_statement_segments"))
    ):
        assert records == []  # no source (documented in data/SOURCES.md)
        return
    assert records, ep.name
    fields = _record_fields(ep) | {"search_results"}
    for rec in records:
        assert isinstance(rec, dict)
        extra = set(rec) - fields
        if ep.kind == "search":
            extra -= set(SCHEMAS["income_statements"]) | set(SCHEMAS["financial_metrics"])
            extra -= set(SCHEMAS["balance_sheets"]) | set(SCHEMAS["cash_flow_statements"])
        assert not extra, (ep.name, extra)


@pytest.mark.parametrize("ep", [e for e in SERVED if e.auth], ids=lambda e: e.name)
def test_every_keyed_endpoint_answers_401_without_key(ref_server, ep):
    r = call(ref_server, ep, EXAMPLES[ep.name] or {}, key=False)
    assert r.status_code == 401
    assert set(r.json()) == {"error", "message"}
    headers = {"X-API-KEY": "not-a-key-000000"}
    url = ref_server.base_url + ep.path
    r = requests.request(ep.method, url, headers=headers, timeout=30)
    assert r.status_code == 401 and r.json()["error"] == "Unauthorized"


@pytest.mark.parametrize("ep", [e for e in SERVED if e.name in BAD], ids=lambda e: e.name)
def test_every_endpoint_has_a_400(ref_server, ep):
    r = call(ref_server, ep, BAD[ep.name])
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"error", "message"} and body["message"]


@pytest.mark.parametrize("ep", LISTINGS, ids=lambda e: e.name)
def test_listings_need_no_key_and_answer_with_and_without_slash(ref_server, ep):
    # open listings need no key (the 2026 document's security: []); the KPI listings, which it leaves under its
    # key, need one (tests/test_fidelity_iii.py)
    headers = {"X-API-KEY": ref_server.api_key} if ep.auth else {}
    for path in (ep.path, ep.path + "/"):
        r = requests.get(ref_server.base_url + path, headers=headers, timeout=30)
        assert r.status_code == 200
        body = r.json()
        if not ep.response_key:  # a vocabulary document: its own shape (tested in test_wire)
            assert body, ep.name
            continue
        values = body[ep.response_key]
        if ep.dataset and ep.dataset.startswith("kpi_"):  # the lake has no KPIs: the documented empty shape
            assert values == [], ep.name
        elif ep.name == "institutional_holdings_investors":
            assert values and all(set(v) == {"cik", "name"} for v in values)
        else:
            assert values and all(isinstance(v, str) for v in values), ep.name


def test_trailing_slash_and_header_case(ref_server):
    ep = CATALOG["company_facts"]
    for path in (ep.path, ep.path + "/"):
        for name in ("X-API-KEY", "x-api-key", "X-Api-Key"):
            r = requests.get(
                ref_server.base_url + path, params={"ticker": "AAPL"}, headers={name: ref_server.api_key}, timeout=30
            )
            assert r.status_code == 200 and r.json()["company_facts"]["name"] == "Apple Inc."


def test_unknown_ticker_404_and_unknown_route_json(ref_server):
    r = call(ref_server, CATALOG["income_statements"], {"ticker": "ZZZZ", "period": "annual"})
    assert r.status_code == 404 and r.json()["error"] == "Not Found"
    r = requests.get(ref_server.base_url + "/no/such/route", timeout=30)
    assert r.status_code == 404 and set(r.json()) == {"error", "message"}
    r = requests.delete(ref_server.base_url + "/prices", timeout=30)
    assert r.status_code == 405 and set(r.json()) == {"error", "message"}


def test_malformed_json_body_is_400(ref_server):
    r = requests.post(
        ref_server.base_url + "/financials/search/screener",
        data=b"{not json",
        headers={"X-API-KEY": ref_server.api_key, "Content-Type": "application/json"},
        timeout=30,
    )
    assert r.status_code == 400 and r.json()["error"] == "Invalid JSON"
    r = call(ref_server, CATALOG["screen"], {"filters": [{"field": "nope", "operator": "gt", "value": 1}]})
    assert r.status_code == 400 and "nope" in r.json()["message"]
    r = call(ref_server, CATALOG["screen"], {"filters": [{"field": "revenue", "operator": "between", "value": 1}]})
    assert r.status_code == 400 and "between" in r.json()["message"]


def test_402_for_a_free_plan_key(tmp_path):
    with fdkit.server.start(keys={"free-plan-key-01": "free"}) as srv:
        h = {"X-API-KEY": "free-plan-key-01"}
        r = requests.get(
            srv.base_url + "/financials/income-statements",
            params={"ticker": "AAPL", "period": "annual"},
            headers=h,
            timeout=30,
        )
        assert r.status_code == 402 and set(r.json()) == {"error", "message"}
        r = requests.get(srv.base_url + "/company/facts", params={"ticker": "AAPL"}, headers=h, timeout=30)
        assert r.status_code == 200


def _walk(srv, ep, params):
    r = call(srv, ep, params)
    assert r.status_code == 200
    body = r.json()
    records, pages = list(body[ep.response_key]), 1
    while "next_page_url" in body:
        assert body["next_page_url"].startswith(srv.base_url + ep.path + "?cursor=")
        r = requests.get(body["next_page_url"], headers={"X-API-KEY": srv.api_key}, timeout=30)
        assert r.status_code == 200
        body = r.json()
        records += body[ep.response_key]
        pages += 1
    return records, pages


@pytest.mark.parametrize("limit", [1, 10, 11, 57, 100, 101, 999])
def test_price_walk_returns_limit_unique_and_matches_lake(ref_server, limit):
    ep = CATALOG["prices"]
    params = {"ticker": "MSFT", "interval": "day", "start_date": "2019-01-01", "end_date": "2023-12-31", "limit": limit}
    records, pages = _walk(ref_server, ep, params)
    assert len(records) == limit and len({r["time"] for r in records}) == limit
    assert pages == -(-limit // 100)
    lake = read_dataset(default_data_dir(), "prices")
    lake = lake[(lake["ticker"] == "MSFT") & (lake["time"] >= "2019-01-01")].sort_values("time").head(limit)
    assert [r["close"] for r in records] == lake["close"].tolist()


def test_statement_walk_matches_lake(ref_server):
    ep = CATALOG["income_statements"]
    records, pages = _walk(ref_server, ep, {"ticker": "NVDA", "period": "quarterly", "limit": 35})
    assert len(records) == 35 and pages == 4
    lake = read_dataset(default_data_dir(), "income_statements")
    lake = (
        lake[(lake["ticker"] == "NVDA") & (lake["period"] == "quarterly")]
        .sort_values("report_period", ascending=False)
        .head(35)
    )
    assert [r["report_period"] for r in records] == lake["report_period"].dt.strftime("%Y-%m-%d").tolist()


def _cursor(srv, ep, params):
    body = call(srv, ep, params).json()
    return body["next_page_url"].split("cursor=", 1)[1]


def test_tampered_foreign_truncated_and_garbage_cursors(ref_server):
    prices = CATALOG["prices"]
    cur = requests.utils.unquote(
        _cursor(
            ref_server,
            prices,
            {"ticker": "AAPL", "interval": "day", "start_date": "2020-01-01", "end_date": "2021-01-01"},
        )
    )
    payload, sig = cur.split(".")
    raw = bytearray(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    raw[raw.index(b'"o":') + 4] = ord("9")  # change the offset
    tampered = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode() + "." + sig
    news_cursor = requests.utils.unquote(_cursor(ref_server, CATALOG["news"], {"ticker": "AAPL", "limit": 30}))
    h = {"X-API-KEY": ref_server.api_key}
    cases = {
        "tampered": (prices.path, tampered),
        "truncated": (prices.path, cur[:-5]),
        "garbage": (prices.path, "%%%"),
        "foreign-endpoint": (prices.path, news_cursor),
    }
    for name, (path, c) in cases.items():
        r = requests.get(ref_server.base_url + path, params={"cursor": c}, headers=h, timeout=30)
        assert r.status_code == 400, name
        body = r.json()
        assert set(body) == {"error", "message"} and "without a cursor" in body["message"], name


def test_cursor_from_another_server_is_rejected(ref_server):
    with fdkit.server.start() as other:
        cur = requests.utils.unquote(_cursor(other, CATALOG["news"], {"ticker": "AAPL", "limit": 30}))
    r = requests.get(
        ref_server.base_url + "/news", params={"cursor": cur}, headers={"X-API-KEY": ref_server.api_key}, timeout=30
    )
    assert r.status_code == 400


def test_cursor_ignores_other_params(ref_server):
    ep = CATALOG["news"]
    cur = requests.utils.unquote(_cursor(ref_server, ep, {"ticker": "AAPL", "limit": 30}))
    h = {"X-API-KEY": ref_server.api_key}
    a = requests.get(ref_server.base_url + ep.path, params={"cursor": cur}, headers=h, timeout=30).json()
    b = requests.get(
        ref_server.base_url + ep.path, params={"cursor": cur, "ticker": "MSFT"}, headers=h, timeout=30
    ).json()
    assert a == b and a["news"][0]["ticker"] == "AAPL"


def test_interval_aggregation(ref_server):
    ep = CATALOG["prices"]
    base = {"ticker": "AAPL", "start_date": "2023-01-01", "end_date": "2023-03-31"}
    day = call(ref_server, ep, {**base, "interval": "day"}).json()["prices"]
    week = call(ref_server, ep, {**base, "interval": "week"}).json()["prices"]
    month = call(ref_server, ep, {**base, "interval": "month"}).json()["prices"]
    two_day = call(ref_server, ep, {**base, "interval": "day", "interval_multiplier": 2}).json()["prices"]
    assert len(month) == 3 and len(two_day) == -(-len(day) // 2)
    jan = [d for d in day if d["time"].startswith("2023-01")]
    assert month[0]["open"] == jan[0]["open"] and month[0]["close"] == jan[-1]["close"]
    assert month[0]["high"] == max(d["high"] for d in jan) and month[0]["low"] == min(d["low"] for d in jan)
    assert month[0]["volume"] == sum(d["volume"] for d in jan)
    assert sum(w["volume"] for w in week) == sum(d["volume"] for d in day)
    assert two_day[0]["close"] == day[1]["close"] and two_day[0]["open"] == day[0]["open"]
    minute = call(
        ref_server,
        ep,
        {
            "ticker": "AAPL",
            "interval": "minute",
            "interval_multiplier": 5,
            "start_date": "2014-06-05",
            "end_date": "2014-06-05",
            "limit": 5000,
        },
    )
    bars = minute.json()["prices"]
    assert bars and all(int(b["time"][14:16]) % 5 == 0 for b in bars)


def test_openapi_and_docs_describe_every_route(ref_server):
    doc = requests.get(ref_server.base_url + "/openapi.json", timeout=30).json()
    for ep in CATALOG.values():
        assert ep.method.lower() in doc["paths"][ep.path], ep.path
    assert requests.get(ref_server.base_url + "/docs", timeout=30).status_code == 200


def test_institutional_ownership_key_and_both_missing(ref_server):
    ep = CATALOG["institutional_ownership"]
    r = call(ref_server, ep, {"ticker": "AAPL"})
    assert "institutional-ownership" in r.json()
    inv = r.json()["institutional-ownership"][0]["investor"]
    narrowed = call(ref_server, ep, {"ticker": "AAPL", "investor": inv}).json()["institutional-ownership"]
    assert narrowed and all(h["investor"] == inv for h in narrowed)
    r = call(ref_server, ep, {})
    assert r.status_code == 400 and "'investor' or 'ticker'" in r.json()["message"]


def test_aggregated_bars_can_be_labelled_by_their_last_day(ref_server):
    import requests as rq

    q = {"ticker": "AAPL", "interval": "month", "start_date": "2023-01-01", "end_date": "2023-03-31"}
    h = {"X-API-KEY": ref_server.api_key}
    start = rq.get(ref_server.base_url + "/prices", params=q, headers=h, timeout=30).json()["prices"]
    end = rq.get(ref_server.base_url + "/prices", params={**q, "label": "end"}, headers=h, timeout=30).json()["prices"]
    assert [b["time"][:10] for b in start] == ["2023-01-03", "2023-02-01", "2023-03-01"]
    assert [b["time"][:10] for b in end] == ["2023-01-31", "2023-02-28", "2023-03-31"]
    assert [b["close"] for b in start] == [b["close"] for b in end]


@pytest.mark.parametrize("ep", [e for e in SERVED if EXAMPLES.get(e.name) is not None], ids=lambda e: e.name)
def test_unknown_parameters_are_ignored_and_named(ref_server, ep):
    """Liberal in what it accepts: a client of the real service sends extras; they are named, never a 400."""
    plain = call(ref_server, ep, EXAMPLES[ep.name])
    extra = call(ref_server, ep, {**EXAMPLES[ep.name], "x_client_version": "2.1", "format": "json"})
    assert extra.status_code == plain.status_code == 200, extra.text
    assert extra.headers["X-FDS-Ignored-Parameters"] == "x_client_version, format"
    assert extra.json() == plain.json()
    assert "X-FDS-Ignored-Parameters" not in plain.headers
