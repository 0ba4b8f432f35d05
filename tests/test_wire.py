"""Wire behaviour clients written for the real service rely on (over real HTTP)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import requests
from reference import reference_document

from fdkit.catalog.endpoints import CATALOG
from fdkit.errors import TruncatedWarning


def _get(srv, path, params, **kw):
    return requests.get(srv.base_url + path, params=params, headers={"X-API-KEY": srv.api_key}, timeout=30, **kw)


def test_a_limit_above_the_maximum_is_clamped_not_refused(ref_server):
    r = _get(ref_server, "/news", {"ticker": "AAPL", "limit": 1000})
    assert r.status_code == 200 and len(r.json()["news"]) == 10  # the first page of up to 100 records
    walk = _get(
        ref_server,
        "/prices",
        {"ticker": "AAPL", "interval": "day", "start_date": "2003-01-01", "end_date": "2026-02-25", "limit": 99999},
    )
    assert walk.status_code == 200
    for bad in (0, -1, "ten", 1.5):
        assert _get(ref_server, "/news", {"ticker": "AAPL", "limit": bad}).status_code == 400


def test_enum_values_are_case_insensitive_and_answered_in_canonical_case(ref_server):
    r = _get(ref_server, "/financials/income-statements", {"ticker": "AAPL", "period": "Annual", "limit": 2})
    assert r.status_code == 200 and {s["period"] for s in r.json()["income_statements"]} == {"annual"}
    p = _get(
        ref_server,
        "/prices",
        {"ticker": "AAPL", "interval": "DAY", "start_date": "2023-01-03", "end_date": "2023-01-06"},
    )
    assert p.status_code == 200 and len(p.json()["prices"]) == 4
    assert (
        _get(
            ref_server,
            "/prices",
            {"ticker": "AAPL", "interval": "daily", "start_date": "2023-01-03", "end_date": "2023-01-06"},
        ).status_code
        == 400
    )


def test_item_names_with_commas_are_not_split(ref_server):
    from fdkit.catalog.endpoints import FILING_ITEMS_10Q
    from fdkit.catalog.params import validate_query

    ep = CATALOG["filing_items"]
    q = validate_query(
        ep,
        [
            ("ticker", "AAPL"),
            ("filing_type", "10-Q"),
            ("year", "2024"),
            ("item", "Part-1,Item-2"),
            ("item", "part-2,item-1a"),
        ],
    )
    assert q["item"] == ["Part-1,Item-2", "Part-2,Item-1A"] and set(q["item"]) <= set(FILING_ITEMS_10Q)
    r = requests.get(
        ref_server.base_url + "/filings/items",
        headers={"X-API-KEY": ref_server.api_key},
        timeout=30,
        params=[("ticker", "AAPL"), ("filing_type", "10-Q"), ("year", "2024"), ("item", "Part-1,Item-2")],
    )
    assert r.status_code in (200, 404) and "Invalid" not in r.text


@pytest.mark.parametrize("name", [n for n, ep in CATALOG.items() if ep.examples and ep.method == "GET"])
def test_no_missing_value_is_ever_serialised_as_text(ref_server, name):
    ep = CATALOG[name]
    r = _get(ref_server, ep.path, ep.examples[0])
    assert r.status_code == 200, r.text
    for marker in ('"<NA>"', '"NaT"', '"nan"', '"None"', "NaN"):
        assert marker not in r.text, (name, marker)


def test_filing_items_answer_for_filings_without_an_accession(ref_server):
    import pandas as pd

    from fdkit.lake.io import default_data_dir

    items = pd.read_parquet(default_data_dir() / "filing_items")
    missing = items[items["accession_number"].isna()]
    if missing.empty:
        pytest.skip("every filing in the reference lake has an accession number")
    row = missing.iloc[0]
    params = {"ticker": str(row["ticker"]), "filing_type": str(row["filing_type"]), "year": int(row["year"])}
    if pd.notna(row.get("quarter")):
        params["quarter"] = int(row["quarter"])
    r = _get(ref_server, "/filings/items", params)
    assert r.status_code == 200 and r.json()["items"] and r.json()["accession_number"] is None


def test_405_answers_carry_allow(ref_server):
    r = requests.post(ref_server.base_url + "/prices", headers={"X-API-KEY": ref_server.api_key}, timeout=30)
    assert r.status_code == 405 and "GET" in r.headers["Allow"] and set(r.json()) == {"error", "message"}


# -- routes of the 2026 document ----------------------------------------------------------------------------------
def _ops_2026():
    doc = reference_document("openapi.json")
    return [(m.upper(), p) for p, ops in doc["paths"].items() for m in ops if m in ("get", "post")]


def test_listing_and_vocabulary_routes_of_the_2026_document(ref_server):
    import pandas as pd

    from fdkit.catalog.endpoints import FILING_ITEMS_8K, FILING_ITEMS_10K, FILING_ITEMS_10Q
    from fdkit.lake.io import default_data_dir, read_dataset

    def body(path, params=None):
        r = requests.get(ref_server.base_url + path, params=params, timeout=30)  # keyless, as listings are
        assert r.status_code == 200, (path, r.text)
        return r.json()

    earnings = read_dataset(default_data_dir(), "earnings")
    assert body("/earnings/tickers")["tickers"] == sorted(earnings["ticker"].astype(str).unique())
    assert "0000320193" in body("/filings/ciks")["ciks"]  # Apple's CIK, as EDGAR spells it
    types = body("/filings/types")["filing_types"]
    assert {"10-K", "10-Q", "8-K", "4"} <= set(types) and types == sorted(types)
    assert "AAPL" in body("/institutional-holdings/tickers")["tickers"]
    filers = body("/institutional-holdings/investors", {"name": "street"})["investors"]
    assert filers == [{"cik": filers[0]["cik"], "name": "BULL STREET ADVISORS, LLC"}] and filers[0]["cik"].isdigit()
    # the KPI listings stay under the document's key (no security: [] on them): asked with it
    key = {"X-API-KEY": ref_server.api_key}
    kpi_tickers = requests.get(ref_server.base_url + "/kpi/metrics/tickers", headers=key, timeout=30).json()
    kpi_sectors = requests.get(ref_server.base_url + "/kpi/metrics/sectors", headers=key, timeout=30).json()
    assert kpi_tickers["tickers"] == [] and kpi_sectors["sectors"] == []
    items = body("/filings/items/types")
    assert {k: [i["name"] for i in v] for k, v in items.items()} == {
        "10-K": list(FILING_ITEMS_10K),
        "10-Q": list(FILING_ITEMS_10Q),
        "8-K": list(FILING_ITEMS_8K),
    }
    titles = {i["name"]: i["title"] for i in items["10-K"]}
    assert titles["Item-1A"] == "Risk Factors" and titles["Item-7A"].startswith("Quantitative and Qualitative")
    assert list(body("/filings/items/types", {"filing_type": "8-K"})) == ["8-K"]
    filters = body("/financials/search/screener/filters")
    assert {"revenue", "total_assets", "free_cash_flow", "price_to_earnings_ratio"} <= set(filters["metrics"])
    assert filters["operators"] == ["eq", "gt", "gte", "lt", "lte", "in"]
    del pd


def test_market_snapshot_and_rate_snapshot_without_a_bank(ref_server):
    snaps = _get(ref_server, "/prices/snapshot/market", {}).json()["snapshots"]
    by = {s["ticker"]: s for s in snaps}
    one = _get(ref_server, "/prices/snapshot", {"ticker": "AAPL"}).json()["snapshot"]
    assert by["AAPL"] == one and len(by) == len(snaps) > 400  # the same record as the one-ticker snapshot
    rates = _get(ref_server, "/macro/interest-rates/snapshot", {})
    assert rates.status_code == 200  # never 400: every bank's current rate
    assert {r["bank"] for r in rates.json()["interest_rates"]} == {"ECB", "FED"}
    fed = _get(ref_server, "/macro/interest-rates/snapshot", {"bank": "FED"}).json()["interest_rates"]
    assert fed == [r for r in rates.json()["interest_rates"] if r["bank"] == "FED"]


def test_statement_period_defaults_to_annual(ref_server):
    plain = _get(ref_server, "/financials/income-statements", {"ticker": "AAPL", "limit": 3}).json()
    annual = _get(ref_server, "/financials/income-statements", {"ticker": "AAPL", "period": "annual", "limit": 3})
    assert plain["income_statements"] == annual.json()["income_statements"]
    assert {s["period"] for s in plain["income_statements"]} == {"annual"}


def test_every_operation_of_the_2026_document_is_routed(ref_server):
    served = {(ep.method, ep.path) for ep in CATALOG.values()}
    missing = [op for op in _ops_2026() if op not in served]
    assert missing == [], missing
    seed = reference_document("openapi-simonxabris-2025.json")
    unserved = {(m.upper(), p) for p, ops in seed["paths"].items() for m in ops} - served
    # no options or press-release source in the reference data: those routes answer the 404 their document lists
    assert unserved == {("GET", "/options"), ("GET", "/options/chain"), ("GET", "/earnings/press-releases")}


def test_the_three_statements_and_all_segments_in_one_answer(ref_server, ref_client):
    q = {"ticker": "AAPL", "period": "quarterly", "limit": 3}
    bundle = _get(ref_server, "/financials", q).json()["financials"]
    for key in ("income_statements", "balance_sheets", "cash_flow_statements"):
        alone = _get(ref_server, f"/financials/{key.replace('_', '-')}", q).json()[key]
        assert bundle[key] == alone, key  # the same records as the statement's own endpoint
    wide = ref_client.financial_statements("AAPL", period="quarterly", limit=3)
    joined = ref_client.financials("AAPL", period="quarterly", limit=3)
    pd.testing.assert_frame_equal(wide[joined.columns], joined, check_categorical=False)
    seg = _get(ref_server, "/financials/segments", {"ticker": "AAPL", "period": "annual", "limit": 2}).json()
    report = seg["segmented_financials"][0]
    one_q = {"ticker": "AAPL", "period": "annual", "limit": 1}
    one = _get(ref_server, "/financials/income-statements/segments", one_q).json()["segmented_financials"][0]
    assert report["income_statement"] == {k: one[k] for k in report["income_statement"]}
    assert report["income_statement"]["depreciation"] is None  # documented, not in the lake: null, not absent
    assert report["balance_sheet"] is None and report["cash_flow_statement"] is None  # none in the lake
    rows = ref_client.segmented_financials("AAPL", period="annual", limit=2)
    assert set(rows["statement"].astype(str)) == {"income_statement"} and rows["value"].notna().all()


def test_institutional_holdings_in_the_2026_shape(ref_server, ref_client):
    by_ticker = _get(ref_server, "/institutional-holdings", {"ticker": "AAPL", "limit": 50}).json()
    assert by_ticker["ticker"] == "AAPL"
    seed = _get(ref_server, "/institutional-ownership", {"ticker": "AAPL", "limit": 50}).json()
    seed = seed["institutional-ownership"]
    rows = by_ticker["institutional_holdings"]
    assert len(rows) == len(seed) > 0
    for new, old in zip(rows, seed, strict=True):  # the same positions, the 2026 names
        assert new["filer_name"] == old["investor"] and new["value_usd"] == round(old["market_value"])
        assert new["shares"] == round(old["shares"]) and new["cusip"] == "037833100"  # Apple's CUSIP
    assert all(isinstance(r["shares"], int) and isinstance(r["value_usd"], int) for r in rows)
    cik = rows[0]["filer_cik"]
    by_filer = _get(ref_server, "/institutional-holdings", {"filer_cik": cik.lstrip("0")}).json()
    assert by_filer["filer_cik"] == cik and by_filer["institutional_holdings"]
    assert all("filer_cik" not in r for r in by_filer["institutional_holdings"])  # only in ticker mode
    assert _get(ref_server, "/institutional-holdings", {"filer_cik": "1"}).status_code == 404
    assert _get(ref_server, "/institutional-holdings", {}).status_code == 400
    df = ref_client.institutional_holdings("AAPL", limit=5)
    assert str(df["shares"].dtype) == "Int64" and list(df.index.names) == ["ticker", "report_period"]


def test_index_funds_from_index_membership(ref_server, ref_client):
    import pandas as pd

    constituents = Path(__file__).resolve().parents[2] / "shared" / "data-real" / "company" / "sp500_constituents.csv"
    spy = _get(ref_server, "/index-funds", {"ticker": "SPY", "limit": 1000}).json()
    assert spy["fund"]["total_holdings"] == len(spy["holdings"]) == 503
    if constituents.exists():  # checked against the source list, not the lake
        members = set(pd.read_csv(constituents)["Symbol"].str.replace(".", "-", regex=False))
        assert {h["ticker"] for h in spy["holdings"]} == members
    assert all(h["weight"] is None for h in spy["holdings"])  # not in the sources: null, never estimated
    page = _get(ref_server, "/index-funds", {"ticker": "SPY", "limit": 10, "offset": 10}).json()["holdings"]
    assert page == spy["holdings"][10:20]
    held = _get(ref_server, "/index-funds", {"holding": "AAPL"}).json()
    assert held["holding"] == "AAPL" and [f["ticker"] for f in held["funds"]] == ["SPY"]
    assert requests.get(ref_server.base_url + "/index-funds/tickers", timeout=30).json()["tickers"] == ["SPY"]
    assert _get(ref_server, "/index-funds", {"ticker": "SPY", "holding": "AAPL"}).status_code == 400
    assert _get(ref_server, "/index-funds", {"ticker": "QQQ"}).status_code == 404
    frame = ref_client.index_funds(holding="AAPL")
    assert list(frame.index) == [("SPY", "AAPL")] and frame["fund_name"].iloc[0] == "SPDR S&P 500 ETF Trust"
    assert len(ref_client.index_funds("SPY", limit=None)) == 503
    # the default: 50 holdings a frame, as the raw answer, and the warning that more exist (it gave 51 and none)
    with pytest.warns(TruncatedWarning, match="default 50 records for SPY"):
        assert len(ref_client.index_funds("SPY")) == 50


def test_as_reported_statements(ref_server, ref_client):
    q = {"ticker": "AAPL", "period": "annual", "report_period": "2024-09-28"}
    (inc,) = _get(ref_server, "/financials/income-statements/as-reported", q).json()["as_reported_income_statements"]
    items = {i["label"]: i["value"] for i in inc["line_items"]}
    # Apple's 10-K for fiscal 2024 (filed 2024-11-01), as printed
    assert items["Revenue"] == 391_035_000_000 and items["Net income"] == 93_736_000_000
    assert inc["filing_date"] == "2024-11-01" and inc["accession_number"] == "0000320193-24-000123"
    assert inc["filing_url"].endswith("000032019324000123/0000320193-24-000123-index.htm")
    (bs,) = _get(ref_server, "/financials/balance-sheets/as-reported", q).json()["as_reported_balance_sheets"]
    assert {i["label"]: i["value"] for i in bs["line_items"]}["Total assets"] == 364_980_000_000
    (both,) = _get(ref_server, "/financials/as-reported", q).json()["as_reported_financials"]
    assert both["income_statement"]["line_items"] == inc["line_items"]
    assert both["balance_sheet"]["line_items"] == bs["line_items"]
    # FY2023 as its own 10-K reported it, not as later 10-Ks restated it
    fy23 = ref_client.as_reported_income_statements("AAPL", period="annual", report_period="2023-09-30")
    assert fy23.set_index("label")["value"]["Revenue"] == 383_285_000_000
    assert set(fy23["statement"].astype(str)) == {"income_statement"}
    wide = ref_client.as_reported_financials("AAPL", period="annual", report_period="2024-09-28")
    assert set(wide["statement"].astype(str)) == {"income_statement", "balance_sheet", "cash_flow_statement"}
    assert _get(ref_server, "/financials/as-reported", {"ticker": "AAPL", "period": "ttm"}).status_code == 400


# -- records: every documented field is answered ------------------------------------------------------------------
#: documented fields a 200 may lack, and why (the document is wrong, or the field is conditional by its own text)
ABSENT_BY_DESIGN = {
    ("/financial-metrics", "*"): "the document describes the body as one flat metrics record; the service (and "
    "every client) answers {'financial_metrics': [records]}",
    ("/financial-metrics/snapshot", "*"): "the 2025 document describes the body as the record itself; the body is "
    "{'snapshot': record}",
    ("/prices", "next_page_url"): "present only when another page exists",
    ("/institutional-holdings", "filer_cik"): "echoed only in filer mode (the example asks by ticker)",
    ("/institutional-holdings", "subsidiaries"): "present only when a position aggregates several information-table "
    "rows; the lake keeps the summed position",
    ("/filings/items", "exhibits"): "8-K items or include_exhibits=true only (the example asks for a 10-K)",
    ("/earnings", "signals"): "omitted when no signal fires (the document says so): the example's latest NVDA "
    "quarters may fire none of the growth and margin signals the lake can compute (data/SOURCES.md)",
}


def _resolve(doc, schema, depth=0):
    if depth > 10 or not isinstance(schema, dict):
        return {}
    if "$ref" in schema:
        return _resolve(doc, doc["components"]["schemas"][schema["$ref"].split("/")[-1]], depth + 1)
    if "allOf" in schema:
        props = {}
        for part in schema["allOf"]:
            props.update(_resolve(doc, part, depth + 1).get("properties", {}))
        return {"type": "object", "properties": props}
    return schema


@pytest.mark.parametrize("doc_name", ["openapi.json", "openapi-simonxabris-2025.json"])
def test_every_documented_field_is_answered(ref_server, doc_name):
    doc = reference_document(doc_name)
    checked = 0
    missing = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            eps = [e for e in CATALOG.values() if e.path == path and e.method == method.upper() and e.examples]
            schema = op.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
            if not eps or "schema" not in schema:
                continue
            ep, top = eps[0], _resolve(doc, schema["schema"])
            if method == "get":
                body = _get(ref_server, path, ep.examples[0]).json()
            else:
                body = requests.post(
                    ref_server.base_url + path,
                    json=ep.examples[0],
                    timeout=30,
                    headers={"X-API-KEY": ref_server.api_key},
                ).json()
            for key, sub in (top.get("properties") or {}).items():
                if key not in body:
                    missing.append((path, key))
                    continue
                item = _resolve(doc, sub)
                item = _resolve(doc, item.get("items", {})) if item.get("type") == "array" else item
                records = [
                    r for r in (body[key] if isinstance(body[key], list) else [body[key]]) if isinstance(r, dict)
                ]
                if records and item.get("properties"):
                    have = set().union(*map(set, records))
                    missing += [(path, f) for f in item["properties"] if f not in have]
            checked += 1
    unexplained = [m for m in missing if m not in ABSENT_BY_DESIGN and (m[0], "*") not in ABSENT_BY_DESIGN]
    assert checked >= (40 if doc_name == "openapi.json" else 15)
    assert not unexplained, unexplained


def test_a_newer_service_s_fields_become_columns_and_narrow_types_never_crash():
    import http.server
    import threading
    import warnings

    import orjson

    import fdkit

    bodies = {
        "/prices": {
            "ticker": "AAPL",
            "prices": [
                {
                    "time": "2024-01-02T00:00:00Z",
                    "open": 1.0,
                    "high": 2.0,
                    "low": 0.5,
                    "close": 1.5,
                    "volume": 10,
                    "vwap": 1.4,
                    "session": "regular",
                    "trades": 7,
                    "auction": True,
                    "flags": {"halted": False},
                },
                {
                    "time": "2024-01-03T00:00:00Z",
                    "open": 1.5,
                    "high": 2.5,
                    "low": 1.0,
                    "close": 2.0,
                    "volume": 12,
                    "vwap": 1.9,
                    "session": None,
                    "trades": 9,
                    "auction": False,
                    "flags": None,
                },
            ],
        },
        "/analyst-estimates": {
            "analyst_estimates": [
                {"ticker": "AAPL", "fiscal_period": "FY2026", "period": "annual", "revenue": 4.5e11},
                {"ticker": "AAPL", "fiscal_period": "FY2027", "period": "annual", "revenue": 4.8e11},
            ]
        },
    }

    class Newer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            data = orjson.dumps(bodies[self.path.split("?")[0].rstrip("/")])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Newer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        client = fdkit.Client(base_url=f"http://127.0.0.1:{srv.server_address[1]}", api_key="k" * 20, cache=False)
        px = client.prices("AAPL", start_date="2024-01-02", end_date="2024-01-03", limit=10)
        kinds = {c: str(t) for c, t in px.dtypes.items()}
        assert kinds["vwap"] == "float64" and kinds["trades"] == "Int64" and kinds["auction"] == "boolean"
        assert kinds["session"] in ("string", "str") and px["flags"].iloc[0] == '{"halted":false}'
        assert "object" not in kinds.values() and px["close"].tolist() == [1.5, 2.0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = client.analyst_estimates("AAPL", limit=10)
        assert sorted(est.index.get_level_values("fiscal_period")) == ["FY2026", "FY2027"]
        assert any(issubclass(w.category, fdkit.NarrowTypeWarning) for w in caught)
    finally:
        srv.shutdown()


def test_records_in_the_seed_and_2026_names(ref_server, ref_client):
    own = _get(ref_server, "/insider-ownership", {"ticker": "SNOW", "limit": 50}).json()["insider_ownership"]
    assert own and {r["form_type"] for r in own} <= {"3", "5", "3/A", "5/A"}  # Form 4 rows are trades
    assert {"as_of_date", "holding_type"} <= set(own[0]) and "report_date" not in own[0]
    infl = _get(ref_server, "/macro/inflation/snapshot", {}).json()["inflation"]
    assert {"change_1m_pct", "change_12m_pct"} <= set(infl[0]) and "change_mom" not in infl[0]
    facts = _get(ref_server, "/company/facts", {"ticker": "AAPL"}).json()["company_facts"]
    assert (
        "former_tickers" not in facts
        and {"name": "APPLE COMPUTER INC", "start_date": "1994-01-26", "end_date": "2007-01-04"}
        in facts["former_names"]
    )
    assert _get(ref_server, "/company/facts", {"ticker": "MSFT"}).json()["company_facts"]["events"] == []
    filing = _get(ref_server, "/filings", {"ticker": "AAPL", "limit": 1}).json()["filings"][0]
    assert filing["cik"] == 320193 and ref_client.filings("AAPL", limit=1)["cik"].iloc[0] == "0000320193"
    tenk = _get(ref_server, "/filings/items", {"ticker": "AAPL", "filing_type": "10-K", "year": 2024}).json()
    assert tenk["quarter"] == 4  # the quarter closing the fiscal year the 10-K reports
    inc = _get(ref_server, "/financials/income-statements", {"ticker": "AAPL", "limit": 1}).json()
    (row,) = inc["income_statements"]  # a USD reporter: the USD amounts are the amounts
    assert row["revenue_usd"] == row["revenue"] and row["ebit_usd"] == row["ebit"]
    assert row["earnings_per_share_usd"] == row["earnings_per_share"]


def test_earnings_in_the_2026_record(ref_server, ref_client):
    rows = _get(ref_server, "/earnings", {"ticker": "AAPL", "limit": 12}).json()["earnings"]
    by = {r["report_period"]: r for r in rows}
    q2 = by["2025-03-29"]  # Apple's fiscal Q2 2025 10-Q, accepted 06:00 ET on 2025-05-02
    assert q2["filing_datetime"] == "2025-05-02T06:00:46-04:00" and q2["filing_window"] == "PRE_MARKET"
    quarterly, annual = q2["quarterly"], q2["annual"]
    # revenue 95,359 M against 124,300 M the quarter before and 90,753 M a year before (Apple's 10-Qs)
    assert quarterly["revenue_chg"] == pytest.approx(95_359 / 124_300 - 1, abs=1e-6)
    assert quarterly["revenue_yoy_chg"] == pytest.approx(95_359 / 90_753 - 1, abs=1e-6)
    assert quarterly["gross_margin"] == pytest.approx(quarterly["gross_profit"] / quarterly["revenue"])
    assert "revenue_yoy_chg" not in annual and "revenue_chg" in annual  # the year-over-year fields: quarterly only
    assert "revenue_surprise" not in quarterly  # no estimates: omitted, as documented, and no beat or miss fires
    assert not any(s["type"].endswith(("_BEAT", "_MISS")) for s in q2.get("signals", []))
    frame = ref_client.earnings("AAPL", limit=12)
    assert str(frame["quarterly_revenue_surprise"].dtype) == "category"
    assert frame.loc[("AAPL", pd.Timestamp("2025-03-29")), "filing_window"] == "PRE_MARKET"


@pytest.mark.parametrize("day", ["2015-09-30", "2016-06-30", "2017-03-31", "2020-01-15", "2024-11-01"])
def test_screen_and_line_items_as_of_never_use_a_later_filing(ref_client, day):
    filters = [{"field": "revenue", "operator": "gt", "value": 5e10}]
    known = ref_client.screen(filters, period="annual", limit=None, as_of=day)
    assert (known["filing_date"] <= pd.Timestamp(day)).all()
    items = ref_client.line_items(["AAPL", "NVDA"], ["revenue"], period="annual", limit=3, as_of=day)
    assert (items["filing_date"] <= pd.Timestamp(day)).all()
    full = ref_client.line_items(["AAPL", "NVDA"], ["revenue"], period="annual", limit=50)
    expected = full[full["filing_date"] <= pd.Timestamp(day)].groupby(level="ticker", observed=True).tail(3)
    assert sorted(items.index.tolist()) == sorted(expected.index.tolist())  # the latest 3 known then, per ticker
