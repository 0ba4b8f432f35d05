"""Issue 30, item 13: /index-funds, /earnings, /institutional-holdings, /filings/items and /crypto/prices answer the
fields of the service's documents, with their types, and fill what the sources hold.

Every answer comes over HTTP from ``fdkit serve`` on the bundled lake and is validated against the 2026 document's
response schema (the 2025 document's for crypto, which the 2026 document does not describe); filled values are
checked against the raw files of ``../shared`` read here, independently of the build.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import requests
from jsonschema import Draft4Validator
from reference import reference_document

SHARED = Path(__file__).resolve().parents[2] / "shared"
SEC = "https://www.sec.gov"


def _raw(relative: str) -> Path:
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{relative} is not beside this checkout")
    return path


def _get(server, path: str, params: dict[str, Any]) -> requests.Response:
    r = requests.get(server.base_url + path, params=params, headers={"X-API-KEY": server.api_key}, timeout=60)
    assert r.status_code == 200, (path, params, r.text[:300])
    return r


def _json_schema(doc: dict, schema: Any, relax: frozenset[str] = frozenset(), name: str = "") -> Any:
    """An OpenAPI 3.0 schema as JSON Schema draft 4: ``$ref`` inlined, ``nullable`` as a null type.

    ``relax`` names ``Schema.property`` places the answer may leave null (the data gaps of data/SOURCES.md).
    Draft 4 keeps ``integer`` strict: 1.0 is no integer there, as it is no integer in the document.
    """
    if isinstance(schema, list):
        return [_json_schema(doc, s, relax, name) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        ref = schema["$ref"].split("/")[-1]
        return _json_schema(doc, doc["components"]["schemas"][ref], relax, ref)
    out = {k: _json_schema(doc, v, relax, name) for k, v in schema.items() if k not in ("properties", "nullable")}
    if "properties" in schema:
        out["properties"] = {}
        for prop, sub in schema["properties"].items():
            converted = _json_schema(doc, sub, relax, name)
            if f"{name}.{prop}" in relax:
                converted = {"anyOf": [converted, {"type": "null"}]}
            out["properties"][prop] = converted
    if schema.get("nullable") and "type" in schema:
        out["type"] = [schema["type"], "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def _validate(doc: dict, path: str, body: Any, relax: frozenset[str] = frozenset(), branch: int | None = None):
    schema = doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    if branch is not None:  # /index-funds: a oneOf whose branches require nothing; each direction has its own
        schema = schema["oneOf"][branch]
    errors = sorted(Draft4Validator(_json_schema(doc, copy.deepcopy(schema), relax)).iter_errors(body), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def _properties(doc: dict, name: str) -> set[str]:
    return set(doc["components"]["schemas"][name]["properties"])


# --- /index-funds ----------------------------------------------------------------------------------------------


def test_index_fund_headers_follow_the_2026_document(ref_server):
    doc = reference_document("openapi.json")
    members = pd.read_csv(_raw("data-real/company/sp500_constituents.csv"), dtype=str)
    body = _get(ref_server, "/index-funds", {"ticker": "SPY", "limit": 7, "offset": 20}).json()
    _validate(doc, "/index-funds", body, branch=0)
    fund = body["fund"]
    documented = set(doc["components"]["schemas"]["IndexFundHoldingsResponse"]["properties"]["fund"]["properties"])
    assert documented <= set(fund), documented - set(fund)
    assert fund["total_holdings"] == len(members) == 503 and fund["holdings_resolved"] == 503
    assert (fund["returned"], fund["offset"]) == (7, 20) == (len(body["holdings"]), 20)
    assert all(type(fund[k]) is int for k in ("total_holdings", "holdings_resolved", "returned", "offset"))
    # the holdings are the constituents list, not a filing of the fund: the source says so, no filing, no assets
    assert "constituents list of 2026-08-08" in fund["source"]
    assert fund["filing_date"] is None and fund["total_net_assets"] is None
    held = _get(ref_server, "/index-funds", {"holding": "AAPL"}).json()
    _validate(doc, "/index-funds", held, branch=1)
    security = held["security"]
    documented = set(
        doc["components"]["schemas"]["IndexFundsForHoldingResponse"]["properties"]["security"]["properties"]
    )
    assert documented <= set(security), documented - set(security)
    name = members.loc[members["Symbol"] == "AAPL", "Security"].iloc[0]
    assert security == {
        "ticker": "AAPL",
        "name": name,
        "cusip": None,
        "isin": None,
        "total_funds": 1,
        "returned": 1,
        "offset": 0,
    }


def test_a_filter_that_keeps_no_constituent_keeps_the_funds_header(ref_server):
    """No bond among SPY's constituents: no holdings, the fund still named as the document types it (not nulls)."""
    doc = reference_document("openapi.json")
    body = _get(ref_server, "/index-funds", {"ticker": "SPY", "asset_class": "bond"}).json()
    _validate(doc, "/index-funds", body, branch=0)
    assert body["holdings"] == [] and body["fund"]["total_holdings"] == 0
    assert body["fund"]["name"] == "SPDR S&P 500 ETF Trust" and body["fund"]["as_of"] == "2026-08-08"


def test_a_date_before_the_funds_first_period_is_a_404_naming_it(ref_server):
    r = requests.get(
        ref_server.base_url + "/index-funds",
        params={"ticker": "SPY", "as_of": "2016-06-30"},
        headers={"X-API-KEY": ref_server.api_key},
        timeout=60,
    )
    assert r.status_code == 404, r.text
    assert r.json()["message"] == "Fund SPY has no holdings filed as of 2016-06-30: its first period is 2026-08-08"


def test_index_fund_frames_keep_the_header_typed(ref_client):
    frame = ref_client.index_funds("SPY", limit=5)
    assert str(frame["total_net_assets"].dtype) == "float64" and str(frame["source"].dtype) == "string"
    assert frame["source"].str.contains("constituents list").all()
    assert not any(str(t) == "object" for t in frame.dtypes)


# --- /institutional-holdings -------------------------------------------------------------------------------------


def test_13f_form_type_comes_from_the_13f_source(ref_server):
    doc = reference_document("openapi.json")
    sources = _raw("data-real/SOURCES.md").read_text()
    (row,) = [line for line in sources.splitlines() if line.startswith("| `form13f_holdings_parsed.csv`")]
    assert "Parsed 13F-HR information tables" in row and "13F-HR/A" not in row  # the source's own description
    raw = pd.read_csv(_raw("data-real/insider/form13f_holdings_parsed.csv"), dtype=str).dropna(subset=["accession"])
    investors = _get(ref_server, "/institutional-holdings/investors", {}).json()["investors"]
    filers = sorted(i["cik"] for i in investors)
    assert len(filers) >= 4
    served = []
    for cik in filers:
        body = _get(ref_server, "/institutional-holdings", {"filer_cik": cik, "limit": 200}).json()
        _validate(doc, "/institutional-holdings", body)
        served += body["institutional_holdings"]
    by_ticker = _get(ref_server, "/institutional-holdings", {"ticker": "AAPL", "limit": 200}).json()
    _validate(doc, "/institutional-holdings", by_ticker)
    assert len(served) >= 100
    for pos in served + by_ticker["institutional_holdings"]:
        assert pos["form_type"] == "13F-HR" and pos["accession_number"] in set(raw["accession"])
        assert type(pos["shares"]) is int and type(pos["value_usd"]) is int


# --- /filings/items ----------------------------------------------------------------------------------------------


def test_10k_items_carry_the_quarter_they_close(ref_server):
    import gzip

    doc = reference_document("openapi.json")
    with gzip.open(_raw("data-real/text/sec_filing_sections.jsonl.gz"), "rt") as f:
        sections = [json.loads(line) for line in f]
    ten_k = sorted({(s["ticker"], s["filing_date"]) for s in sections if s["form"] == "10-K"})
    assert len(ten_k) >= 10
    accession_gap = frozenset({"FilingItemsResponse.accession_number"})  # data/SOURCES.md: sources name none
    for ticker, filed in ten_k:
        year = int(filed[:4])
        body = _get(ref_server, "/filings/items", {"ticker": ticker, "filing_type": "10-K", "year": year}).json()
        _validate(doc, "/filings/items", body, relax=accession_gap)
        assert body["quarter"] == 4 and type(body["quarter"]) is int, (ticker, filed, body["quarter"])
    # GOOGL's sections name no accession: the one of its 10-K filed that day in companyfacts
    facts = pd.read_csv(
        _raw("data-real/fundamentals/sec_companyfacts/companyfacts_long_AAPL_NVDA_GOOGL_TSLA.csv.gz"), dtype=str
    )
    googl = facts[(facts["ticker"] == "GOOGL") & (facts["form"] == "10-K") & (facts["filed"] == "2025-02-05")]
    (accn,) = set(googl["accn"])
    body = _get(ref_server, "/filings/items", {"ticker": "GOOGL", "filing_type": "10-K", "year": 2025}).json()
    assert body["accession_number"] == accn
    # where the lake has the year's statements, the quarterly row filed with the 10-K is the fiscal Q4
    q = _get(
        ref_server, "/financials/income-statements", {"ticker": "AAPL", "period": "quarterly", "limit": 20}
    ).json()["income_statements"]
    assert [r["fiscal_period"] for r in q if r["filing_date"] == "2024-11-01"] == ["FY2024-Q4"]
    ten_q = _get(ref_server, "/filings/items", {"ticker": "AAPL", "filing_type": "10-Q", "year": 2025}).json()
    _validate(doc, "/filings/items", ten_q)
    assert ten_q["quarter"] == 3


# --- /crypto/prices ----------------------------------------------------------------------------------------------


def test_crypto_volume_is_an_integer_as_documented(ref_server):
    doc = reference_document("openapi-simonxabris-2025.json")
    assert doc["components"]["schemas"]["Price"]["properties"]["volume"]["type"] == "integer"
    q = {
        "ticker": "BTC-USD",
        "interval": "day",
        "interval_multiplier": 1,
        "start_date": "2024-01-01",
        "end_date": "2024-01-31",
    }
    r = _get(ref_server, "/crypto/prices", q)
    assert not re.search(r'"volume":\d+\.\d', r.text)  # on the wire: no "18426978443.0"
    body = r.json()
    _validate(doc, "/crypto/prices", body)
    raw = pd.read_csv(_raw("data-real/crypto/btc_eth_sol_usd_daily_yahoo_2021_2026.csv"), dtype={"volume": str})
    raw = raw[(raw["symbol"] == "BTC-USD") & raw["date"].between("2024-01-01", "2024-01-31")]
    assert [p["volume"] for p in body["prices"]] == [int(v) for v in raw["volume"]]
    weekly = _get(ref_server, "/crypto/prices", {**q, "interval": "week"}).json()
    _validate(doc, "/crypto/prices", weekly)
    assert all(type(p["volume"]) is int for p in weekly["prices"])


def test_crypto_frames_type_volume_as_nullable_integers(ref_client):
    frame = ref_client.crypto_prices("BTC-USD", start_date="2024-01-01", end_date="2024-01-05")
    assert str(frame["volume"].dtype) == "Int64"


# --- /earnings ---------------------------------------------------------------------------------------------------

#: the 2026 document's growth signals: metric -> (stem, lower tier, strong tier) on the year-over-year change
_TIERS = {
    "revenue": ("REVENUE", 0.10, 0.20),
    "net_income": ("NET_INCOME", 0.15, 0.30),
    "earnings_per_share": ("EPS", 0.15, 0.30),
}


def _expected_growth(quarterly: dict[str, Any]) -> set[str]:
    out = set()
    for metric, (stem, low, strong) in _TIERS.items():
        chg = quarterly.get(f"{metric}_yoy_chg")
        if chg is not None and abs(chg) >= low:
            out.add(("STRONG_" if abs(chg) >= strong else "") + stem + ("_INCREASE" if chg > 0 else "_DECLINE"))
    return out


def _earnings(server, ticker: str) -> list[dict[str, Any]]:
    """Up to 40 report periods of a ticker's earnings records, every page followed."""
    body = _get(server, "/earnings", {"ticker": ticker, "limit": 40}).json()
    records = body["earnings"]
    while body.get("next_page_url"):
        r = requests.get(body["next_page_url"], headers={"X-API-KEY": server.api_key}, timeout=60)
        assert r.status_code == 200
        body = r.json()
        records += body["earnings"]
    return records


@pytest.mark.parametrize("ticker", ["AAPL", "NVDA", "ABT", "MMM"])
def test_earnings_answers_match_the_2026_document(ref_server, ticker):
    doc = reference_document("openapi.json")
    body = {"earnings": _earnings(ref_server, ticker)}
    assert len(body["earnings"]) >= 8
    # the accession is a data gap where the sources name none (data/SOURCES.md): null there, nowhere else
    _validate(doc, "/earnings", body, relax=frozenset({"EarningsRecord.accession_number"}))
    for rec in body["earnings"]:
        assert isinstance(rec["filing_url"], str) and rec["filing_url"].startswith(SEC + "/")


def test_earnings_signals_follow_the_document_thresholds(ref_server):
    doc = reference_document("openapi.json")
    signal_types = set(doc["components"]["schemas"]["Signal"]["properties"]["type"]["enum"])
    fired = 0
    for ticker in ("AAPL", "NVDA", "TSLA", "ABT", "MMM", "AMZN"):
        records = _earnings(ref_server, ticker)
        by_period = {r["fiscal_period"]: r for r in records}
        for rec in records:
            quarterly, signals = rec.get("quarterly", {}), rec.get("signals")
            assert signals != []  # omitted when none fires, never an empty list
            types = [s["type"] for s in signals or []]
            assert set(types) <= signal_types and len(types) <= 8
            growth = {t for t in types if not t.startswith(("MARGIN_", "CAPEX_", "STRONG_CAPEX_"))}
            assert growth == _expected_growth(quarterly), (ticker, rec["fiscal_period"])
            margins = {s["metric"] for s in signals or [] if s["type"].startswith("MARGIN_")}
            moved = {
                m
                for m in ("gross_margin", "operating_margin", "net_margin")
                if abs(quarterly.get(f"{m}_yoy_chg_bps") or 0) >= 100
            }
            assert margins == moved
            # capex: the change of the spending itself (capex is negative), against the same quarter a year earlier
            fy, q = rec["fiscal_period"].removeprefix("FY").split("-")
            before = by_period.get(f"FY{int(fy) - 1}-{q}", {}).get("quarterly", {}).get("capital_expenditure")
            now = quarterly.get("capital_expenditure")
            capex = [t for t in types if "CAPEX" in t]
            if before and now is not None and abs(abs(now) / abs(before) - 1) >= 0.15:
                up = abs(now) > abs(before)
                assert capex and capex[0].endswith("INCREASE" if up else "DECLINE"), (ticker, rec["fiscal_period"])
            for s in signals or []:
                assert s["period"] == rec["fiscal_period"] and None not in s["details"].values()
                key = "yoy_chg_bps" if s["type"].startswith("MARGIN_") else "yoy_chg"
                assert set(s["details"]) == {"current", key}
            rank = [{"HIGH": 0, "MEDIUM": 1, "LOW": 2}[s["importance"]] for s in signals or []]
            assert rank == sorted(rank)
            fired += len(types)
    assert fired > 50


def test_earnings_year_on_year_changes_are_point_in_time_against_companyfacts(ref_server):
    """NVDA's 10-Q quarters: the change against the same quarter a year earlier as FIRST reported (its own 10-Q)."""
    facts = pd.read_csv(
        _raw("data-real/fundamentals/sec_companyfacts/companyfacts_long_AAPL_NVDA_GOOGL_TSLA.csv.gz"),
        dtype={"accn": str},
    )
    rev = facts[(facts["ticker"] == "NVDA") & (facts["concept"] == "Revenues") & (facts["unit"] == "USD")].copy()
    rev["days"] = (pd.to_datetime(rev["end"]) - pd.to_datetime(rev["start"])).dt.days
    first = rev[rev["days"].between(80, 100)].sort_values("filed").drop_duplicates("end")  # first report of each
    first = first.set_index(pd.to_datetime(first["end"]))
    checked = 0
    for rec in _earnings(ref_server, "NVDA"):
        if rec["source_type"] != "10-Q" or "revenue_yoy_chg" not in rec.get("quarterly", {}):
            continue
        end = pd.Timestamp(rec["report_period"])
        year_ago = first[(first.index > end - pd.Timedelta(days=385)) & (first.index < end - pd.Timedelta(days=345))]
        if end not in first.index or len(year_ago) != 1:
            continue
        assert year_ago["filed"].iloc[0] <= rec["filing_date"]  # known when this quarter was filed
        now, then = first.loc[end, "val"], year_ago["val"].iloc[0]
        assert rec["quarterly"]["revenue"] == pytest.approx(now)
        assert rec["quarterly"]["revenue_yoy_chg"] == pytest.approx((now - then) / abs(then), rel=1e-9)
        checked += 1
    assert checked >= 8


def test_earnings_filing_urls_name_the_filing(ref_server):
    index = pd.read_csv(_raw("data-real/company/sec_submissions/NVDA_recent_filings_index.csv"), dtype=str)
    members = pd.read_csv(_raw("data-real/company/sp500_constituents.csv"), dtype=str)
    with_accession = 0
    for rec in _earnings(ref_server, "NVDA"):
        acc = rec["accession_number"]
        hit = index[index["accessionNumber"] == acc]
        if hit.empty:  # older than the submissions index: the companyfacts accession, its EDGAR filing index
            assert acc is not None
        else:
            assert hit["filingDate"].iloc[0] == rec["filing_date"] and hit["form"].iloc[0] == rec["source_type"]
        assert rec["filing_url"] == f"{SEC}/Archives/edgar/data/1045810/{acc.replace('-', '')}/{acc}-index.htm"
        with_accession += 1
    assert with_accession >= 40
    cik = members.loc[members["Symbol"] == "ABT", "CIK"].iloc[0].zfill(10)
    for rec in _earnings(ref_server, "ABT"):  # pystock rows: no accession in the source, the EDGAR list instead
        if rec["filing_date"] < "2015":  # the SEC data sets' 2010 row names its accession: the EDGAR filing index
            acc = rec["accession_number"]
            assert rec["filing_url"] == f"{SEC}/Archives/edgar/data/{int(cik)}/{acc.replace('-', '')}/{acc}-index.htm"
            continue
        assert rec["accession_number"] is None
        day = rec["filing_date"].replace("-", "")
        assert rec["filing_url"] == (
            f"{SEC}/cgi-bin/browse-edgar?action=getcompany&CIK={cik}"
            f"&type={rec['source_type']}&dateb={day}&owner=include&count=10"
        )


def test_earnings_frames_keep_declared_dtypes(ref_client):
    frame = ref_client.earnings("AAPL", limit=8)
    assert frame["filing_url"].notna().all() and str(frame["filing_url"].dtype) == "string"
    assert not any(str(t) == "object" for t in frame.dtypes)
