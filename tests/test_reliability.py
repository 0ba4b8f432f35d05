"""Reliability and security: faults lose nothing, bad input never 500s, the key never leaks, load holds.

The fast subset runs in CI; the full run (60 s x 64 connections, more fuzz cases) is
``FDKIT_FUZZ_EXAMPLES=100 python -m pytest -m "slow or not slow" tests/test_reliability.py tests/test_fuzz.py``.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pandas as pd
import pytest
import requests

import fdkit
import fdkit.server
from fdkit.client.cache import make_retry
from fdkit.errors import AuthenticationError
from fdkit.server.faults import FaultInjector, ResetProxy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from load import PRICE_PAGE, run_load  # noqa: E402


def _bulk(client: fdkit.Client, tickers, statement_tickers) -> dict[str, pd.DataFrame]:
    return {
        "prices": client.prices(tickers, start_date="2024-01-01", end_date="2024-12-31"),
        "company_facts": client.company_facts([t for t in tickers if not t.startswith("^")], errors="ignore"),
        "income_statements": client.income_statements(statement_tickers, period="quarterly", limit=20),
        "news": client.news(["AAPL", "MSFT"], limit=60),
    }


#: the test's spread of tickers: every 40th (~28 of the lake's ~1,050 with prices); the scale run takes every 4th
#: (``python benchmarks/faults_at_scale.py bulk``)
BULK_STEP = 40


def test_bulk_fetch_under_faults_equals_fault_free(ref_server):
    figures = bulk_under_faults(ref_server, BULK_STEP)
    print(figures)


def bulk_under_faults(ref_server, step: int) -> dict:
    """Every ``step``-th ticker's prices, facts, statements (and news) through 20% injected faults (429, 500, 503,
    truncated and slow bodies) and 20% connection resets equal the fault-free fetch; returns the figures."""
    # a spread over the alphabet: the faults are the subject, and their count grows with the requests, not with
    # which tickers they are for
    tickers = fdkit.available("prices", client=fdkit.Client(base_url=ref_server.base_url, cache=False))[::step]
    stmt = fdkit.available("balance_sheets", client=fdkit.Client(base_url=ref_server.base_url, cache=False))[::step]
    clean = _bulk(fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False), tickers, stmt)
    plan = fdkit.server.FaultPlan(
        rate=0.2, kinds=("429", "500", "503", "truncate", "slow"), seed=11, retry_after=0, slow_seconds=2.5
    )
    # the same service (its store warm from the fault-free fetch: the faults are the subject, not cold reads)
    # behind the fault injector
    with (
        fdkit.server.serve_app(FaultInjector(ref_server.app, plan), keys=ref_server.keys) as faulty,
        ResetProxy(faulty.base_url, rate=0.2, seed=28) as proxy,
    ):
        # faults are the subject here, not the deadline (busy CI machines) nor the retry budget: with the default
        # of 5 retries a request, a run of 6 faults ending in a status (p ~ 0.2^5 x 0.12 a request, ~500 requests)
        # drops a ticker that errors="ignore" then leaves out, about one run in fifty (seen once in CI)
        client = fdkit.Client(
            ref_server.api_key,
            proxy.base_url,
            cache=False,
            timeout=1.5,
            progress=False,
            deadline=120,
            retry=make_retry(total=10, backoff_factor=0.05),
        )
        got = _bulk(client, tickers, stmt)
    for name, frame in clean.items():
        pd.testing.assert_frame_equal(got[name], frame, obj=name)
        assert frame.index.is_unique or name == "news"
    injected = dict(plan.injected)
    assert sum(injected.values()) >= 20 and len(injected) == 5 and proxy.resets >= 1, (injected, proxy.resets)
    return {
        "tickers": len(tickers),
        "statement_tickers": len(stmt),
        "faults": injected,
        "resets": proxy.resets,
        "requests": sum(plan.requests.values()),
        "rows": sum(len(f) for f in clean.values()),
    }


HOSTILE = [
    "../../etc/passwd",
    "..%2F..%2Fetc%2Fpasswd",
    "AAPL' OR '1'='1",
    "AAPL; DROP TABLE prices;--",
    "<script>alert(1)</script>",
    "${jndi:ldap://x}",
    "A" * 5000,
    "\u202eLPAA",
    "AAPL\u0000",
    "%00",
    "*",
    "{{7*7}}",
    "AAPL\r\nX-Injected: 1",
]


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_injection_shaped_parameters_never_500(ref_server, value):
    h = {"X-API-KEY": ref_server.api_key}
    base = ref_server.base_url
    calls = [
        ("/prices", {"ticker": value, "interval": "day", "start_date": "2024-01-02", "end_date": "2024-01-05"}),
        ("/prices", {"ticker": "AAPL", "interval": value, "start_date": "2024-01-02", "end_date": "2024-01-05"}),
        ("/financials/income-statements", {"ticker": value, "period": "annual"}),
        ("/financials/income-statements", {"cik": value, "period": "annual"}),
        ("/company/facts", {"ticker": value}),
        ("/news", {"ticker": "AAPL", "start_date": value}),
        ("/filings/items", {"ticker": value, "filing_type": "10-K", "year": "2024"}),
        ("/institutional-ownership", {"investor": value}),
        ("/macro/interest-rates", {"bank": value}),
        ("/insider-trades", {"ticker": "AAPL", "name": value}),
        ("/prices", {"cursor": value}),
    ]
    for path, params in calls:
        try:
            r = requests.get(base + path, params=params, headers=h, timeout=30)
        except requests.exceptions.InvalidHeader:
            continue
        assert r.status_code in (200, 400, 404), (path, params, r.status_code, r.text[:200])
        assert set(r.json()) == {"error", "message"} or r.status_code == 200
    r = requests.get(base + "/" + value[:200], timeout=30)
    assert r.status_code in (400, 404, 405)
    r = requests.post(
        base + "/financials/search/screener",
        headers=h,
        timeout=30,
        json={"filters": [{"field": value, "operator": "gt", "value": 1}]},
    )
    assert r.status_code == 400


def test_key_never_in_logs_or_errors(ref_server, caplog, tmp_path):
    canary = "CANARY-log-key-4e9a1b"
    caplog.set_level(logging.DEBUG)
    for name in ("urllib3", "requests_cache", "fdkit", "fdkit.server", "uvicorn", ""):
        logging.getLogger(name).setLevel(logging.DEBUG)
    with fdkit.server.start(keys=[canary]) as srv:
        c = fdkit.Client(canary, srv.base_url, cache_dir=str(tmp_path), progress=False)
        c.prices("AAPL", start_date="2024-01-02", end_date="2024-06-28")
        bad = fdkit.Client(canary + "x", srv.base_url, cache_dir=str(tmp_path), progress=False)
        with pytest.raises(AuthenticationError) as e:
            bad.prices("AAPL", start_date="2024-01-02", end_date="2024-01-05")
    assert caplog.records, "debug logging was captured"
    assert canary not in caplog.text
    assert canary not in str(e.value) and canary not in repr(e.value) and canary not in repr(c)
    assert canary not in repr(srv) and canary not in repr(c.settings)


def test_short_load_has_no_errors(ref_server):
    res = run_load(
        ref_server.base_url + "/prices",
        seconds=5,
        connections=16,
        headers={"X-API-KEY": ref_server.api_key},
        params=PRICE_PAGE,
    )
    print(f"load (CI subset): 16 connections x 5 s: {res.summary()}")
    assert res.errors == 0 and res.requests > 50


@pytest.mark.slow
def test_full_load_60s_64_connections(ref_server):
    res = run_load(
        ref_server.base_url + "/prices",
        seconds=60,
        connections=64,
        headers={"X-API-KEY": ref_server.api_key},
        params=PRICE_PAGE,
    )
    print(f"load (full): 64 connections x 60 s: {res.summary()}")
    assert res.errors == 0


def test_load_generator_refuses_non_loopback():
    with pytest.raises(ValueError, match="loopback"):
        run_load("http://10.0.0.1/prices", seconds=1, connections=1)
