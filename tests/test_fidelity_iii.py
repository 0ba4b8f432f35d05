"""Fidelity to the real service's documents, third round, over real HTTP against ``fdkit serve``.

Keys where the 2026 document requires them, the screener's names, numbers and currencies, metering one request per
page, the parameters the documents require, and ``/docs`` without a network.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pandas as pd
import pytest
import requests
from reference import reference_document

import fdkit
import fdkit.server
from fdkit.catalog.endpoints import CATALOG, by_path

KEY_PRO = "fidelity-iii-pro-key-0001"
KEY_FREE = "fidelity-iii-free-key-0002"
SCREENER = "/financials/search/screener"


def _get(srv, path, params=None, key=True):
    headers = {"X-API-KEY": srv.api_key} if key else {}
    return requests.get(srv.base_url + path, params=params, headers=headers, timeout=60)


def _screen(srv, body):
    return requests.post(srv.base_url + SCREENER, json=body, headers={"X-API-KEY": srv.api_key}, timeout=60)


@pytest.fixture(scope="module")
def metered():
    """A server of its own over the bundled lake, with two known keys: its counts start at zero."""
    with fdkit.server.start(keys={KEY_PRO: "pro", KEY_FREE: "free"}) as srv:
        yield srv


# -- 1. keys where the 2026 document requires them -----------------------------------------------------------------
def _keyless_in_2026(op: dict) -> bool:
    """The document exempts an operation from its key: security: [], or its description says no key is needed."""
    text = f"{op.get('summary', '')} {op.get('description', '')}".lower()
    return op.get("security") == [] or "no api key required" in text or "does not require authentication" in text


def test_the_key_follows_the_2026_document_on_every_operation(ref_server):
    doc = reference_document("openapi.json")
    assert doc["security"] == [{"X-API-KEY": []}]  # the document's default: every operation needs the key
    checked = 0
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            ep = by_path(path, method.upper())
            keyless = _keyless_in_2026(op)
            assert ep.auth is not keyless, (path, op.get("security"))
            r = requests.request(method, ref_server.base_url + path, timeout=60)  # no key at all
            if keyless:
                assert r.status_code == 200, (path, r.text)
            else:
                assert r.status_code == 401 and set(r.json()) == {"error", "message"}, (path, r.status_code)
                bad = requests.request(
                    method, ref_server.base_url + path, headers={"X-API-KEY": "not-a-key-0000"}, timeout=60
                )
                assert bad.status_code == 401 and bad.json()["error"] == "Unauthorized", path
            checked += 1
    assert checked == 49


def test_the_kpi_listings_need_the_key_the_document_leaves_on_them(ref_server):
    for path, key in (("/kpi/metrics/tickers", "tickers"), ("/kpi/metrics/sectors", "sectors")):
        assert _get(ref_server, path, key=False).status_code == 401
        assert _get(ref_server, path).json()[key] == []
    doc = requests.get(ref_server.base_url + "/openapi.json", timeout=30).json()
    assert "security" not in doc["paths"]["/kpi/metrics/tickers"]["get"]  # the document-wide key applies
    assert doc["paths"]["/prices/tickers"]["get"]["security"] == []


def test_the_embedded_default_still_works_with_no_configuration(tmp_path):
    """No key, no base URL: the embedded service and its own key, keyed listings included."""
    unset = ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL", "FDKIT_OFFLINE", "FDKIT_SERVER_KEYS")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["FDKIT_CACHE_DIR"] = str(tmp_path / "cache")
    code = "import fdkit; print(len(fdkit.available('prices')), fdkit.available('kpi_metrics'))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert out.returncode == 0, out.stderr
    count, kpis = out.stdout.split(maxsplit=1)
    assert int(count) > 10 and kpis.strip() == "[]"


# -- 2. the screener ------------------------------------------------------------------------------------------------
def test_the_screener_takes_the_earliest_documents_metric_names(ref_server):
    early = reference_document("openapi-sdk-early.json")
    names = early["components"]["schemas"]["FinancialMetricsSnapshotResponse"]["properties"]
    aliases = {
        "pe_ratio": "price_to_earnings_ratio",
        "pb_ratio": "price_to_book_ratio",
        "ps_ratio": "price_to_sales_ratio",
        "ev_ebitda_ratio": "enterprise_value_to_ebitda_ratio",
        "ev_revenue_ratio": "enterprise_value_to_revenue_ratio",
    }
    assert set(aliases) <= set(names)
    for alias, metric in aliases.items():
        body = {"filters": [{"field": alias, "operator": "gt", "value": 0}], "period": "annual", "limit": 50}
        r = _screen(ref_server, body)
        assert r.status_code == 200, (alias, r.text)
        got = r.json()["search_results"]
        same = _screen(ref_server, {**body, "filters": [{**body["filters"][0], "field": metric}]}).json()
        assert got and [g["ticker"] for g in got] == [s["ticker"] for s in same["search_results"]], alias
        assert [g[alias] for g in got] == [s[metric] for s in same["search_results"]]  # answered as it was asked
    pe = _screen(ref_server, {"filters": [{"field": "pe_ratio", "operator": "lt", "value": 30}]})
    assert pe.status_code == 200 and pe.json()["search_results"]
    assert all(r["pe_ratio"] < 30 for r in pe.json()["search_results"])
    filters = _get(ref_server, "/financials/search/screener/filters", key=False).json()["metrics"]
    assert filters["pe_ratio"]["alias_of"] == "price_to_earnings_ratio"


def test_the_screeners_in_compares_numbers_on_a_numeric_field(ref_server):
    base = {"filters": [{"field": "ticker", "operator": "in", "value": ["AAPL", "NVDA"]}], "period": "annual"}
    rows = {
        r["ticker"]: r
        for r in _screen(
            ref_server,
            {
                **base,
                "filters": [
                    *base["filters"],
                    {"field": "revenue", "operator": "gt", "value": 0},
                    {"field": "earnings_per_share", "operator": "gt", "value": 0},
                ],
            },
        ).json()["search_results"]
    }
    revenue = rows["AAPL"]["revenue"]
    assert float(revenue).is_integer()
    r = _screen(
        ref_server,
        {"filters": [{"field": "revenue", "operator": "in", "value": [int(revenue), 1]}], "period": "annual"},
    )
    assert r.status_code == 200 and [x["ticker"] for x in r.json()["search_results"]] == ["AAPL"]
    eps = rows["NVDA"]["earnings_per_share"]
    r = _screen(
        ref_server,
        {
            "filters": [
                {"field": "earnings_per_share", "operator": "in", "value": [eps, 0.5]},
                {"field": "ticker", "operator": "in", "value": ["NVDA"]},
            ],
            "period": "annual",
        },
    )
    assert r.status_code == 200 and [x["ticker"] for x in r.json()["search_results"]] == ["NVDA"], r.text
    for value in (["many"], [], [True]):
        bad = _screen(ref_server, {"filters": [{"field": "revenue", "operator": "in", "value": value}]})
        assert bad.status_code == 400 and "revenue" in bad.json()["message"]
    # strings stay strings where the field is text: tickers and CIKs (a CIK as a number too)
    r = _screen(ref_server, {"filters": [{"field": "cik", "operator": "in", "value": [320193]}]})
    assert [x["ticker"] for x in r.json()["search_results"]] == ["AAPL"]


def test_the_screener_takes_any_iso_4217_currency(ref_server):
    body = {"filters": [{"field": "revenue", "operator": "gt", "value": 1e11}], "period": "annual"}
    usd = _screen(ref_server, {**body, "currency": "USD"}).json()["search_results"]
    assert usd and _screen(ref_server, {**body, "currency": "usd"}).json()["search_results"] == usd
    for code in ("NOK", "BRL", "INR", "XAU"):  # well formed: the lake has no statements in them
        r = _screen(ref_server, {**body, "currency": code})
        assert r.status_code == 200 and r.json()["search_results"] == [], code
    for bad in ("US", "EURO", "U5D", "€€€", ""):
        r = _screen(ref_server, {**body, "currency": bad})
        assert r.status_code == 400 and "currency" in r.json()["message"], bad
        assert set(r.json()) == {"error", "message"}


# -- 3. pagination and metering -------------------------------------------------------------------------------------
def test_pages_as_the_documents_page(ref_server):
    first = _get(ref_server, "/macro/inflation").json()
    assert len(first["inflation"]) == 500 and first["next_page_url"]  # pages of 500 (fdkit's own extension)
    labor = _get(ref_server, "/macro/labor").json()
    assert len(labor["labor"]) == 500 and labor["next_page_url"]
    # /index-funds as the 2026 document pages it: limit (default 50, at most 1000) and offset, no cursor
    doc = reference_document("openapi.json")
    params = {p["name"]: p["schema"] for p in doc["paths"]["/index-funds"]["get"]["parameters"]}
    assert params["limit"]["default"] == 50 and params["offset"]["default"] == 0
    whole = _get(ref_server, "/index-funds", {"ticker": "SPY", "limit": 1000}).json()["holdings"]
    page = _get(ref_server, "/index-funds", {"ticker": "SPY"}).json()
    assert len(page["holdings"]) == 50 and "next_page_url" not in page
    second = _get(ref_server, "/index-funds", {"ticker": "SPY", "offset": 50}).json()["holdings"]
    assert page["holdings"] + second == whole[:100]


def test_every_page_is_one_metered_request_of_its_key(metered):
    def get(path, params=None, key=KEY_PRO):
        return requests.get(metered.base_url + path, params=params, headers={"X-API-KEY": key}, timeout=60)

    r = get("/macro/inflation")
    assert r.headers["X-FDS-Usage"] == "1"
    pages = 1
    while r.json().get("next_page_url"):
        r = requests.get(r.json()["next_page_url"], headers={"X-API-KEY": KEY_PRO}, timeout=60)
        pages += 1
        assert r.headers["X-FDS-Usage"] == str(pages)
    assert pages >= 4  # 1,900 prints, 500 a page
    # the same page again is served again, and metered again
    assert get("/macro/inflation").headers["X-FDS-Usage"] == str(pages + 1)
    # errors are not metered; another key has its own count
    assert get("/macro/inflation", {"start_date": "yesterday"}).status_code == 400
    assert "X-FDS-Usage" not in get("/macro/inflation", {"start_date": "yesterday"}).headers
    assert get("/prices/snapshot", {"ticker": "AAPL"}, key=KEY_FREE).headers["X-FDS-Usage"] == "1"
    # a keyless listing asked with a valid key is metered; asked without one it is not
    assert get("/prices/tickers").headers["X-FDS-Usage"] == str(pages + 2)
    assert "X-FDS-Usage" not in requests.get(metered.base_url + "/prices/tickers", timeout=60).headers
    # the key's own usage, on request: named by a redacted id, never by the key
    mine = get("/usage")
    assert mine.status_code == 200 and "X-FDS-Usage" not in mine.headers  # asking costs nothing
    assert mine.json() == {"key_id": mine.json()["key_id"], "plan": "pro", "requests": pages + 2}
    assert mine.json()["key_id"].startswith("key-") and KEY_PRO not in mine.text and KEY_PRO[:8] not in mine.text
    assert get("/usage", key=KEY_FREE).json()["requests"] == 1
    assert requests.get(metered.base_url + "/usage", timeout=30).status_code == 401
    assert get("/usage", key="not-a-key-0000").json()["error"] == "Unauthorized"
    doc = requests.get(metered.base_url + "/openapi.json", timeout=30).json()
    assert "X-FDS-Usage" in doc["paths"]["/prices"]["get"]["responses"]["200"]["headers"]


def test_fdkit_serve_logs_each_keys_usage_at_shutdown_without_the_key(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{KEY_PRO} pro\n{KEY_FREE} free\n")
    log = tmp_path / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fdkit.cli", "serve", "--port", "0", "--keys", str(keys)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=tmp_path,
        )
        try:
            deadline = time.monotonic() + 120
            while not (m := re.search(r"on (http://127\.0\.0\.1:\d+)", log.read_text())):
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
            base = m.group(1)
            while True:  # the port is bound before uvicorn starts answering
                try:
                    requests.get(base + "/healthz", timeout=5)
                    break
                except requests.ConnectionError:
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
            for _ in range(3):
                r = requests.get(
                    base + "/company/facts", params={"ticker": "AAPL"}, headers={"X-API-KEY": KEY_PRO}, timeout=60
                )
                assert r.status_code == 200
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    text = log.read_text()
    from fdkit.server.usage import key_id

    assert f"{key_id(KEY_PRO)} (pro) 3 pages" in text and f"{key_id(KEY_FREE)} (free) 0 pages" in text, text
    assert KEY_PRO not in text and KEY_FREE not in text


# -- 4. smaller ----------------------------------------------------------------------------------------------------
def test_segmented_revenues_need_their_period_as_the_documents_say(ref_server, ref_client):
    for name in ("openapi-simonxabris-2025.json", "openapi-sdk-early.json"):
        doc = reference_document(name)
        params = {p["name"]: p for p in doc["paths"]["/financials/segmented-revenues"]["get"]["parameters"]}
        assert params["period"]["required"] is True
    r = _get(ref_server, "/financials/segmented-revenues", {"ticker": "AAPL"})
    assert r.status_code == 400 and "'period'" in r.json()["message"]
    assert _get(ref_server, "/financials/segmented-revenues", {"ticker": "AAPL", "period": "annual"}).ok
    seg = ref_client.segmented_revenues("AAPL", limit=1)  # fdkit's own function sends its default, annual
    assert len(seg) and set(seg["period"].astype(str)) == {"annual"}


def test_news_answers_the_documents_default_number_of_articles(ref_server):
    doc = reference_document("openapi.json")
    limit = next(p for p in doc["paths"]["/news"]["get"]["parameters"] if p["name"] == "limit")
    assert limit["schema"]["default"] == 5
    assert len(_get(ref_server, "/news", {"ticker": "AAPL"}).json()["news"]) == 5
    assert len(_get(ref_server, "/news", {"ticker": "AAPL", "limit": 25}).json()["news"]) > 5


def test_crypto_intervals_and_multiplier_as_the_2025_document(ref_server, ref_client):
    doc = reference_document("openapi-simonxabris-2025.json")
    params = {p["name"]: p for p in doc["paths"]["/crypto/prices"]["get"]["parameters"]}
    allowed = params["interval"]["schema"]["enum"]
    assert "minute" not in allowed and params["interval_multiplier"]["required"] is True
    base = {"ticker": "BTC-USD", "start_date": "2017-01-02", "end_date": "2017-01-03"}
    r = _get(ref_server, "/crypto/prices", {**base, "interval": "minute", "interval_multiplier": 1})
    assert r.status_code == 400 and "'interval'" in r.json()["message"]
    assert ", ".join(allowed) in r.json()["message"]
    r = _get(ref_server, "/crypto/prices", {**base, "interval": "day"})
    assert r.status_code == 400 and "'interval_multiplier'" in r.json()["message"]
    assert _get(ref_server, "/crypto/prices", {**base, "interval": "day", "interval_multiplier": 1}).ok
    assert len(ref_client.crypto_prices("BTC-USD", start_date="2024-01-01", end_date="2024-01-31")) == 31
    # /prices is the 2026 document's, which has no interval_multiplier: a request without it is answered
    assert "interval_multiplier" not in {
        p["name"] for p in reference_document("openapi.json")["paths"]["/prices"]["get"]["parameters"]
    }
    prices = {"ticker": "AAPL", "interval": "day", "start_date": "2024-01-02", "end_date": "2024-01-05"}
    assert _get(ref_server, "/prices", prices).ok


def test_the_openapi_version_is_the_apis_and_fdkits_is_beside_it(ref_server):
    """``info.version`` is the API's, as both documents give it (issue 43 item 5); the package's is beside it."""
    doc = requests.get(ref_server.base_url + "/openapi.json", timeout=30).json()
    assert doc["info"]["version"] == reference_document("openapi.json")["info"]["version"] == "1.0.0"
    assert doc["info"]["x-fdkit-version"] == fdkit.__version__


def test_every_8k_item_carries_its_exhibits_list(ref_server):
    from fdkit.lake.io import default_data_dir, read_dataset

    items = read_dataset(default_data_dir(), "filing_items")
    eightk = items[items["filing_type"].astype(str) == "8-K"][["ticker", "year"]].drop_duplicates()
    assert len(eightk)
    seen = 0
    for ticker, year in eightk.itertuples(index=False):
        r = _get(ref_server, "/filings/items", {"ticker": str(ticker), "filing_type": "8-K", "year": int(year)})
        assert r.status_code == 200, r.text
        for item in r.json()["items"]:
            assert item.get("exhibits") is None or item["exhibits"], (ticker, year, item["number"])  # only when some
            seen += 1
    assert seen


def test_insider_ownership_holding_types_are_the_documents(ref_server):
    """Item 3: ``holding_type`` is ``derivative`` / ``non_derivative`` (the Form 3/5 table), never ``common``."""
    own = _get(ref_server, "/insider-ownership", {"ticker": "SNOW", "limit": 50}).json()["insider_ownership"]
    kinds = {r["security_title"]: r["holding_type"] for r in own}
    assert set(kinds.values()) == {"derivative", "non_derivative"}
    assert kinds["Class A Common Stock"] == "non_derivative" and kinds["Stock Option (Right to Buy)"] == "derivative"


# -- company facts' history ----------------------------------------------------------------------------------------
def _ticker_changes_in_the_raw_file() -> list[tuple[str, str, str]]:
    """(date, old, new) of every ticker_change row of data-real-4's symbol events, parsed here with csv."""
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "shared/data-real-4/index-membership-extra/us_symbol_events.csv"
    if not path.exists():
        pytest.skip("../shared/data-real-4 is not beside this clone")
    with open(path, newline="") as f:
        return [
            (r["event_date"], r["old_symbol"], r["new_symbol"])
            for r in csv.DictReader(f)
            if r["event_type"] == "ticker_change"
        ]


def test_company_facts_events_are_ticker_changes_in_the_spec_shape(ref_server):
    raw = _ticker_changes_in_the_raw_file()
    assert ("2022-06-09", "FB", "META") in raw
    meta = _get(ref_server, "/company/facts", {"ticker": "META"}).json()["company_facts"]["events"]
    assert meta == [{"type": "ticker_change", "date": "2022-06-09", "ticker": "META", "previous_ticker": "FB"}]
    # a chain, oldest first, each change one row of the raw file
    elv = _get(ref_server, "/company/facts", {"ticker": "ELV"}).json()["company_facts"]["events"]
    assert [(e["date"], e["previous_ticker"], e["ticker"]) for e in elv] == [
        ("2014-12-03", "WLP", "ANTM"),
        ("2022-06-28", "ANTM", "ELV"),
    ]
    assert all(t in raw for t in [(e["date"], e["previous_ticker"], e["ticker"]) for e in elv])
    # former names keep their own fields (an extension), no null fields of the other type
    aapl = _get(ref_server, "/company/facts", {"ticker": "AAPL"}).json()["company_facts"]["former_names"]
    assert aapl and all(set(e) == {"name", "start_date", "end_date"} for e in aapl)
    # every served ticker change of a company is one of the sources' changes (raw file or a membership rename)
    served = 0
    for ticker in ("META", "ELV", "COR", "AAPL", "MSFT"):
        for e in _get(ref_server, "/company/facts", {"ticker": ticker}).json()["company_facts"]["events"]:
            if e["type"] == "ticker_change":
                served += 1
                assert set(e) == {"type", "date", "ticker", "previous_ticker"}
    assert served == 4


# -- 5. /docs offline -----------------------------------------------------------------------------------------------
class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.refs += [v for k, v in attrs if k in ("src", "href") and v]


def test_docs_and_every_asset_it_loads_come_from_the_server_itself(ref_server):
    r = requests.get(ref_server.base_url + "/docs", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    assert not re.search(r"https?://", page), "the page names another host"
    parser = _Refs()
    parser.feed(page)
    refs = parser.refs + re.findall(r"url: '([^']+)'", page)  # the OpenAPI document the page loads
    assert len(refs) >= 4, refs
    kinds = {
        "swagger-ui-bundle.js": "javascript",
        "swagger-ui.css": "text/css",
        "favicon.png": "image/png",
        "openapi.json": "application/json",
    }
    for ref in refs:
        url = urljoin(ref_server.base_url + "/docs", ref)
        assert urlsplit(url).netloc == urlsplit(ref_server.base_url).netloc, ref
        got = requests.get(url, timeout=30)
        assert got.status_code == 200 and got.content, ref
        assert kinds[ref.rsplit("/", 1)[-1]] in got.headers["content-type"], (ref, got.headers["content-type"])
    assert requests.get(ref_server.base_url + "/docs/assets/index.html", timeout=30).status_code == 404


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (.ci/run installs Debian's where it can)")
def test_docs_render_headless_with_every_operation(ref_server):
    out = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--virtual-time-budget=20000",
            "--dump-dom",
            ref_server.base_url + "/docs",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    shown = set(re.findall(r'data-path="([^"]+)"', out.stdout))
    assert shown == {ep.path for ep in CATALOG.values()}, sorted({ep.path for ep in CATALOG.values()} - shown)
    # the version Swagger UI shows is the API's (info.version, 1.0.0 as both documents), fdkit's beside it
    assert (
        "Financial Data Service (fdkit serve)" in out.stdout
        and '<small><pre class="version"> 1.0.0 </pre>' in out.stdout
    )


# -- /ipos ---------------------------------------------------------------------------------------------------------
def test_ipos_answers_the_registration_statements_of_a_lake_newest_first(tmp_path):
    """Item 6: /ipos is routed; the bundled lake holds no registration statement (an empty list), a lake that
    holds them (a mirror of a service's filings) answers them, filtered and newest first."""
    from fdkit.lake.io import write_dataset

    with fdkit.server.start() as bundled:
        r = _get(bundled, "/ipos", {"limit": 5})
        assert r.status_code == 200 and r.json()["ipos"] == []
        assert _get(bundled, "/ipos", {"filing_date": "2024-02-30"}).status_code == 400
        assert _get(bundled, "/ipos", {"ticker": "AAPL", "cik": "320193"}).status_code == 400
    rows = [
        ("ARM", "0001973239", "0001193125-23-208437", "F-1", "2023-08-21"),
        ("ARM", "0001973239", "0001193125-23-236452", "424B4", "2023-09-15"),
        ("CART", "0001579091", "0001193125-23-222345", "S-1", "2023-08-25"),
        ("CART", "0001579091", "0001193125-23-240015", "8-K", "2023-09-22"),
    ]
    filings = pd.DataFrame(rows, columns=["ticker", "cik", "accession_number", "filing_type", "filing_date"])
    write_dataset(tmp_path, "filings", filings.assign(url="https://www.sec.gov/x", report_date=None))
    with fdkit.server.start(tmp_path) as srv:
        got = _get(srv, "/ipos", {}).json()["ipos"]
        assert [(r["ticker"], r["filing_type"], r["filing_date"]) for r in got] == [
            ("ARM", "424B4", "2023-09-15"),
            ("CART", "S-1", "2023-08-25"),
            ("ARM", "F-1", "2023-08-21"),
        ]
        assert got[0]["cik"] == 1973239 and got[0]["classification"] is None
        one = _get(srv, "/ipos", {"ticker": "CART"}).json()["ipos"]
        assert [r["accession_number"] for r in one] == ["0001193125-23-222345"]  # the 8-K is no registration
        day = _get(srv, "/ipos", {"filing_date": "2023-08-21"}).json()["ipos"]
        assert [r["ticker"] for r in day] == ["ARM"]
        frame = fdkit.Client(srv.api_key, srv.base_url, cache=False, progress=False).ipos(limit=None)
        assert len(frame) == 3 and str(frame.index.get_level_values("filing_date").dtype) == "datetime64[ns]"
