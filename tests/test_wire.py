"""Wire behaviour clients written for the real service rely on (over real HTTP)."""

from __future__ import annotations

import pytest
import requests

from fdkit.catalog import CATALOG


def _get(srv, path, params, **kw):
    return requests.get(srv.base_url + path, params=params, headers={"X-API-KEY": srv.api_key}, timeout=30, **kw)


def test_a_limit_above_the_maximum_is_clamped_not_refused(ref_server):
    r = _get(ref_server, "/news", {"ticker": "AAPL", "limit": 1000})
    assert r.status_code == 200 and len(r.json()["news"]) == 10  # the first page of up to 100 records
    walk = _get(ref_server, "/prices", {"ticker": "AAPL", "interval": "day", "start_date": "2003-01-01",
                                        "end_date": "2026-02-25", "limit": 99999})  # fmt: skip
    assert walk.status_code == 200
    for bad in (0, -1, "ten", 1.5):
        assert _get(ref_server, "/news", {"ticker": "AAPL", "limit": bad}).status_code == 400


def test_enum_values_are_case_insensitive_and_answered_in_canonical_case(ref_server):
    r = _get(ref_server, "/financials/income-statements", {"ticker": "AAPL", "period": "Annual", "limit": 2})
    assert r.status_code == 200 and {s["period"] for s in r.json()["income_statements"]} == {"annual"}
    p = _get(ref_server, "/prices", {"ticker": "AAPL", "interval": "DAY", "start_date": "2024-01-02",
                                     "end_date": "2024-01-05"})  # fmt: skip
    assert p.status_code == 200 and len(p.json()["prices"]) == 4
    assert _get(ref_server, "/prices", {"ticker": "AAPL", "interval": "daily", "start_date": "2024-01-02",
                                        "end_date": "2024-01-05"}).status_code == 400  # fmt: skip


def test_item_names_with_commas_are_not_split(ref_server):
    from fdkit.catalog import FILING_ITEMS_10Q
    from fdkit.server.params import validate_query

    ep = CATALOG["filing_items"]
    q = validate_query(ep, [("ticker", "AAPL"), ("filing_type", "10-Q"), ("year", "2024"), ("item", "Part-1,Item-2"),
                            ("item", "part-2,item-1a")])  # fmt: skip
    assert q["item"] == ["Part-1,Item-2", "Part-2,Item-1A"] and set(q["item"]) <= set(FILING_ITEMS_10Q)
    r = requests.get(ref_server.base_url + "/filings/items", headers={"X-API-KEY": ref_server.api_key}, timeout=30,
                     params=[("ticker", "AAPL"), ("filing_type", "10-Q"), ("year", "2024"),
                             ("item", "Part-1,Item-2")])  # fmt: skip
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

    from fdkit.lake import default_data_dir

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
