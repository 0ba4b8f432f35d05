"""The seed's contract (the default of ``fdkit serve``) and the 2026 document's (``--contract 2026``), over real HTTP.

Each difference of :data:`fdkit.catalog.contracts.DIFFERENCES` asked of a service of each contract; everything
else is the same (the catalog's endpoints the differences do not name are served as they are); the table of
``docs/CONTRACTS.md`` is the one the catalog makes; fdkit's own client works against either.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import requests

import fdkit
from fdkit.catalog import CATALOG, DIFFERENCES, catalog_for, differences_table
from fdkit.errors import UnknownNameError

ROOT = Path(__file__).resolve().parents[1]
BARS = {"ticker": "AAPL", "interval": "day", "start_date": "2024-06-24", "end_date": "2024-06-28"}


def _get(srv, path: str, params: dict | None = None, key: str | None = "valid") -> requests.Response:
    headers = {} if key is None else {"X-API-KEY": srv.api_key if key == "valid" else key}
    return requests.get(srv.base_url + path, params=params or {}, headers=headers, timeout=30)


def _walk(srv, path: str, params: dict) -> tuple[list[dict], int]:
    """Every record of a paged answer, following ``next_page_url`` as a plain client does; and the pages."""
    r = _get(srv, path, params)
    assert r.status_code == 200, r.text
    key = CATALOG["inflation"].response_key if path == "/macro/inflation" else path.rsplit("/", 1)[-1]
    records, pages = list(r.json()[key]), 1
    while r.json().get("next_page_url"):
        r = requests.get(r.json()["next_page_url"], headers={"X-API-KEY": srv.api_key}, timeout=30)
        assert r.status_code == 200, r.text
        records += r.json()[key]
        pages += 1
    return records, pages


def test_the_docs_table_is_the_catalogs():
    text = (ROOT / "docs" / "CONTRACTS.md").read_text()
    start, end = text.index("-->\n") + 4, text.index("<!-- /differences -->")
    assert text[start:end] == differences_table(), "docs/CONTRACTS.md is stale: rewrite its table"
    assert len(differences_table().splitlines()) == 2 + len(DIFFERENCES)


def test_only_the_differences_change_endpoints():
    seed, v2026 = catalog_for("seed"), catalog_for("2026")
    assert v2026 is CATALOG and list(seed) == list(CATALOG)
    named = {name for d in DIFFERENCES for name in d.endpoints()}
    assert named and all(d.endpoints() for d in DIFFERENCES)  # each difference changes something
    for name, ep in CATALOG.items():
        assert (seed[name] is ep) == (name not in named), name
    with pytest.raises(UnknownNameError, match="unknown contract 'v3'; the service keeps seed, 2026"):
        catalog_for("v3")


def test_keys_on_listings(seed_server, ref_server):
    listings = [ep.path for ep in CATALOG.values() if ep.kind == "listing"]
    open_ones = [ep.path for ep in CATALOG.values() if not ep.auth]
    assert len(open_ones) >= 12
    for path in listings:
        for key in (None, "fdk_not_a_key_of_this_service"):
            r = _get(seed_server, path, key=key)
            assert r.status_code == 401 and set(r.json()) == {"error", "message"}, (path, key, r.text)
        assert _get(seed_server, path).status_code == 200, path
    for path in open_ones:
        assert _get(ref_server, path, key=None).status_code == 200, path
    # a data endpoint needs a key under both
    assert _get(ref_server, "/prices", BARS, key=None).status_code == 401


def test_macro_pages(seed_server, ref_server):
    query = {"series": "cpi_all_items", "start_date": "2015-01-01", "end_date": "2019-12-31"}
    seed, seed_pages = _walk(seed_server, "/macro/inflation", query)
    v2026, pages_2026 = _walk(ref_server, "/macro/inflation", query)
    assert len(seed) == 60 and seed == v2026
    assert (seed_pages, pages_2026) == (6, 1)
    first = _get(seed_server, "/macro/labor", {"limit": 25}).json()
    assert len(first["labor"]) == 10 and first["next_page_url"]


def test_index_fund_holdings(seed_server, ref_server):
    whole = _get(seed_server, "/index-funds", {"ticker": "SPY"}).json()
    assert len(whole["holdings"]) == whole["fund"]["total_holdings"] == 503
    assert "next_page_url" not in whole or whole["next_page_url"] is None
    assert len(_get(seed_server, "/index-funds", {"ticker": "SPY", "limit": 7}).json()["holdings"]) == 7
    first = _get(ref_server, "/index-funds", {"ticker": "SPY"}).json()
    assert len(first["holdings"]) == 50 and first["holdings"] == whole["holdings"][:50]
    second = _get(ref_server, "/index-funds", {"ticker": "SPY", "offset": 50}).json()
    assert second["holdings"] == whole["holdings"][50:100]


def test_interval_multiplier_of_prices(seed_server, ref_server):
    r = _get(seed_server, "/prices", BARS)
    assert r.status_code == 400 and "interval_multiplier" in r.json()["message"]
    seed = _get(seed_server, "/prices", {**BARS, "interval_multiplier": 1}).json()["prices"]
    assert seed == _get(ref_server, "/prices", BARS).json()["prices"]
    assert [b["close"] for b in seed][-1] == 210.62  # AAPL 2024-06-28, as traded


def test_holding_types(seed_server, ref_server):
    query = {"ticker": "SNOW", "limit": 50}
    seed = _get(seed_server, "/insider-ownership", query).json()["insider_ownership"]
    v2026 = _get(ref_server, "/insider-ownership", query).json()["insider_ownership"]
    assert {r["holding_type"] for r in seed} == {"common", "derivative"}
    assert {r["holding_type"] for r in v2026} == {"non_derivative", "derivative"}
    renamed = [
        {**r, "holding_type": "common" if r["holding_type"] == "non_derivative" else r["holding_type"]} for r in v2026
    ]
    assert seed == renamed  # the same records otherwise


def test_documents(seed_server, ref_server):
    seed = _get(seed_server, "/openapi.json", key=None).json()
    v2026 = _get(ref_server, "/openapi.json", key=None).json()
    assert seed["info"]["version"] == v2026["info"]["version"] == "1.0.0"
    assert (seed["info"]["x-fdkit-contract"], v2026["info"]["x-fdkit-contract"]) == ("seed", "2026")
    listing = "/prices/tickers"
    assert "security" not in seed["paths"][listing]["get"] and "401" in seed["paths"][listing]["get"]["responses"]
    assert v2026["paths"][listing]["get"]["security"] == []
    prices = {p["name"]: p for p in seed["paths"]["/prices"]["get"]["parameters"]}
    assert prices["interval_multiplier"]["required"] is True


def test_fdkit_works_against_either(seed_server, ref_server, tmp_path):
    frames = {}
    for name, srv in (("seed", seed_server), ("2026", ref_server)):
        with fdkit.Client(srv.api_key, srv.base_url, cache_dir=str(tmp_path / name), progress=False) as c:
            bars = fdkit.prices(["AAPL", "MSFT"], start_date="2024-06-24", end_date="2024-06-28", client=c)
            held = fdkit.insider_ownership(["SNOW", "AAPL"], limit=None, client=c)  # the bulk route of fdkit peers
            cpi = fdkit.inflation(series="cpi_all_items", limit=None, client=c)
            tickers = fdkit.available("prices", client=c)
        frames[name] = (bars, held, cpi, tickers)
    (bars, held, cpi, tickers), (bars26, held26, cpi26, tickers26) = frames["seed"], frames["2026"]
    pd.testing.assert_frame_equal(bars, bars26)
    pd.testing.assert_frame_equal(cpi, cpi26)
    assert tickers == tickers26 and len(tickers) > 1000
    assert set(held["holding_type"].dropna()) == {"common", "derivative"}
    assert set(held26["holding_type"].dropna()) == {"derivative", "non_derivative"}
    assert held.dtypes.equals(held26.dtypes)  # one vocabulary holds both (a category each)
    pd.testing.assert_frame_equal(held.drop(columns="holding_type"), held26.drop(columns="holding_type"))


@pytest.mark.parametrize("contract", ["seed", "2026"])
def test_a_service_that_is_not_fdkits_own_answers_prices_under_either_document(contract, tmp_path):
    """A service fdkit does not recognise gets only documented parameters, and what the 2025 document requires
    (``interval_multiplier`` on ``/prices``: a service built on it refuses bars without it)."""
    import fdkit.server

    with fdkit.server.start(arrow=False, contract=contract) as srv:  # no X-Fdkit-Formats: any other service
        with fdkit.Client(srv.api_key, srv.base_url, cache_dir=str(tmp_path), progress=False) as c:
            assert not c.speaks_fdkit()
            bars = fdkit.prices(["AAPL", "MSFT"], start_date="2024-06-24", end_date="2024-06-28", client=c)
    assert len(bars) == 10 and bars.loc[("AAPL", pd.Timestamp("2024-06-28")), "close"] == pytest.approx(210.62)


def test_serve_takes_the_switch(tmp_path):
    fdkit_cli = [sys.executable, "-m", "fdkit.cli"]
    bad = subprocess.run([*fdkit_cli, "serve", "--contract", "2025"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice '2025'" in bad.stderr and "Traceback" not in bad.stderr
    helped = subprocess.run([*fdkit_cli, "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert "--contract {seed,2026}" in helped.stdout and "docs/CONTRACTS.md" in helped.stdout
