"""The Arrow wire between fdkit peers, and the server's column data path, over real HTTP."""

from __future__ import annotations

import functools
import re
import signal
import subprocess
import sys
import time

import orjson
import pandas as pd
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fdkit
import fdkit.server
from fdkit.catalog.endpoints import CATALOG
from fdkit.frames.basis import as_traded
from fdkit.frames.typed import ARROW_STREAM, FORMATS_HEADER, arrow_rows, part_from_bytes, to_records
from fdkit.lake.io import default_data_dir, read_dataset
from fdkit.lake.reader import LakeReader

ARROW_ENDPOINTS = [ep.name for ep in CATALOG.values() if arrow_rows(ep) and ep.examples]
_NO_ROWS = {"kpi_guidance", "kpi_non_gaap", "kpi_metrics", "ipos"}  # the bundled lake has none (SOURCES.md)


def _clients(server, tmp_path):
    arrow = fdkit.Client(server.api_key, server.base_url, cache=False, progress=False)
    json_only = fdkit.Client(server.api_key, server.base_url, cache=False, progress=False)
    arrow._arrow, json_only._arrow = True, False  # noqa: SLF001 - the two wires of one service, side by side
    return arrow, json_only


@pytest.mark.parametrize("name", ARROW_ENDPOINTS)
def test_arrow_and_json_frames_are_equal(ref_server, tmp_path, name):
    """Every dataset whose records are flat: the same frame (values, dtypes, index, attrs) over either wire."""
    ep = CATALOG[name]
    arrow, json_only = _clients(ref_server, tmp_path)
    params = dict(ep.examples[0])
    if "limit" in ep.param_names:
        params.setdefault("limit", None)  # every record the example selects
    fn = getattr(fdkit, name)
    a, j = fn(**params, client=arrow), fn(**params, client=json_only)
    assert len(a) > 0 or name in _NO_ROWS, name
    pd.testing.assert_frame_equal(a, j, check_categorical=True)
    assert [str(d) for d in a.dtypes] == [str(d) for d in j.dtypes] and a.attrs == j.attrs


def test_a_long_range_walks_arrow_pages_and_windows(ref_server, tmp_path):
    """2003-2026 daily AAPL: every bar over Arrow (one request's cap is 5,000: the client continues by dates)."""
    arrow, json_only = _clients(ref_server, tmp_path)
    a = arrow.prices("AAPL", start_date="2003-10-30", end_date="2026-03-13")
    j = json_only.prices("AAPL", start_date="2003-10-30", end_date="2026-03-13")
    lake = read_dataset(default_data_dir(), "prices")
    assert len(a) == int((lake["ticker"] == "AAPL").sum()) > 5000
    pd.testing.assert_frame_equal(a, j)
    assert arrow.speaks_arrow()


def test_arrow_pages_follow_the_link_header(ref_server):
    h = {"X-API-KEY": ref_server.api_key, "Accept": ARROW_STREAM}
    q = {"ticker": "AAPL", "period": "quarterly", "limit": 40}
    r = requests.get(ref_server.base_url + CATALOG["income_statements"].path, params=q, headers=h, timeout=30)
    assert r.headers["content-type"] == ARROW_STREAM and ARROW_STREAM in r.headers[FORMATS_HEADER]
    part = part_from_bytes(r.content)
    assert part[1] == 40 and "next" not in r.links  # one Arrow page holds what takes four JSON pages
    doc = requests.get(ref_server.base_url + "/openapi.json", timeout=30).json()
    assert ARROW_STREAM in doc["paths"][CATALOG["income_statements"].path]["get"]["responses"]["200"]["content"]
    path = CATALOG["income_statements"].path
    js = requests.get(
        ref_server.base_url + path, params=q, headers={"X-API-KEY": ref_server.api_key}, timeout=30
    ).json()
    assert len(js["income_statements"]) == 10 and js["next_page_url"]
    # a cursor opened as Arrow continues where the JSON page stopped
    r2 = requests.get(js["next_page_url"], headers=h, timeout=30)
    assert part_from_bytes(r2.content)[1] == 30
    # errors are the same JSON errors
    bad = requests.get(
        ref_server.base_url + "/prices",
        headers=h,
        timeout=30,
        params={"ticker": "NOPE", "interval": "day", "start_date": "2022-01-03", "end_date": "2022-01-07"},
    )
    assert bad.status_code == 404 and bad.json() == {"error": "Not Found", "message": "Ticker NOPE not found"}


def test_a_json_only_service_still_works():
    """A service that does not advertise Arrow (the public one) is asked for JSON, and frames are the same."""
    with fdkit.server.start(arrow=False) as plain, fdkit.server.start() as peer:
        c_plain = fdkit.Client(plain.api_key, plain.base_url, cache=False, progress=False)
        c_peer = fdkit.Client(peer.api_key, peer.base_url, cache=False, progress=False)
        q = {"start_date": "2020-01-02", "end_date": "2023-10-27"}  # as-traded bars (adjusted=true is fdkit's own)
        a, b = c_plain.prices(["AAPL", "MSFT"], **q), c_peer.prices(["AAPL", "MSFT"], **q)
        assert not c_plain.speaks_arrow() and c_peer.speaks_arrow()
        pd.testing.assert_frame_equal(a, b)
        r = requests.get(
            plain.base_url + "/prices",
            headers={"X-API-KEY": plain.api_key, "Accept": ARROW_STREAM},
            params={"ticker": "AAPL", "interval": "day", "start_date": "2022-01-03", "end_date": "2022-01-07"},
            timeout=30,
        )
        assert r.headers["content-type"] == "application/json" and FORMATS_HEADER not in r.headers


_PRICES = LakeReader(default_data_dir()).read("prices")  # with an installed data package's rows
_TICKERS = ["AAPL", "MSFT", "NVDA", "BTC-USD", "A", "ZTS", "SPY"]


@functools.cache
def _traded_rows(ticker: str) -> pd.DataFrame:
    """A ticker's as-traded bars of the whole dataset (adjusted-only bars are answered to adjusted=true only)."""
    return _PRICES[(_PRICES["ticker"] == ticker) & as_traded(_PRICES["basis"])]


def _old_path(ticker: str, start: str, end: str, limit: int) -> dict:
    """The page as the server built it before its column data path: filter the dataset, sort, then a record per
    matching row, then the first page."""
    df = _traded_rows(ticker)
    t = df["time"]
    lo, hi = pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC") + pd.Timedelta(days=1)
    df = df[(t >= lo) & (t < hi)].sort_values("time", kind="stable")
    df = df.assign(time_milliseconds=(df["time"].astype("int64") // 1_000_000).astype("Int64"))
    cols = [c for c in fdkit.catalog.schema.fields_of("prices") if c != "ticker"]
    return {"ticker": ticker, "prices": to_records(df, cols)[:limit][:100]}


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ticker=st.sampled_from([t for t in _TICKERS if t != "BTC-USD"]),
    start=st.dates(min_value=pd.Timestamp("2003-01-01").date(), max_value=pd.Timestamp("2026-03-31").date()),
    days=st.integers(0, 3000),
    limit=st.sampled_from([None, 1, 50, 100, 5000]),
)
def test_the_data_path_answers_byte_identical_json(ref_server, ticker, start, days, limit):
    """Property: the column data path's first page equals, byte for byte, the page the old path built."""
    end = start + pd.Timedelta(days=days)
    q = {"ticker": ticker, "interval": "day", "start_date": str(start), "end_date": str(end)}
    if limit is not None:
        q["limit"] = limit
    r = requests.get(ref_server.base_url + "/prices", params=q, headers={"X-API-KEY": ref_server.api_key}, timeout=30)
    assert r.status_code == 200
    body = r.json()
    expected = _old_path(ticker, str(start), str(end), limit or 5000)
    got = {k: v for k, v in body.items() if k != "next_page_url"}
    assert orjson.dumps(got) == orjson.dumps(expected)


def test_dates_outside_what_nanoseconds_hold_are_ranges_not_errors(ref_server):
    """A valid date before 1678 or after 2261 bounds the range like any other (the old path's answer)."""
    for start, end in (("0002-01-10", "2004-01-02"), ("2025-12-01", "9999-12-31"), ("0001-01-01", "0001-12-31")):
        q = {"ticker": "AAPL", "interval": "day", "start_date": start, "end_date": end}
        r = requests.get(
            ref_server.base_url + "/prices", params=q, headers={"X-API-KEY": ref_server.api_key}, timeout=30
        )
        assert r.status_code == 200, (start, end, r.text)
        got = {k: v for k, v in r.json().items() if k != "next_page_url"}
        # the same answer as the range clipped to dates pandas holds (no bar is before 1900 or after 2261)
        assert got == _old_path("AAPL", max(start, "1900-01-01"), min(end, "2261-12-31"), 5000)


def test_serve_workers_share_one_port_keys_and_cursors(tmp_path):
    """``fdkit serve --workers 2``: one port, the keys file's key on every worker, and a cursor issued by one worker
    opens on the other (every page on a new connection)."""
    keys = tmp_path / "keys"
    keys.write_text("workers-key-0123456789 pro\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fdkit.cli", "serve", "--port", "0", "--workers", "2", "--keys", str(keys)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        url = re.search(r"on (http://127\.0\.0\.1:\d+)", line).group(1)  # type: ignore[union-attr]
        assert "2 worker processes" in line
        h = {"X-API-KEY": "workers-key-0123456789", "Connection": "close"}
        for _ in range(100):  # the workers are up when both answer
            try:
                if requests.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.2)
        nxt, params, rows, pages = (
            url + "/prices",
            {
                "ticker": "AAPL",
                "interval": "day",
                "start_date": "2020-01-01",
                "end_date": "2024-12-31",
                "adjusted": "true",
            },
            0,
            0,
        )
        while nxt:
            r = requests.get(nxt, params=params, headers=h, timeout=30)
            assert r.status_code == 200, r.text
            body, params = r.json(), None
            rows, pages, nxt = rows + len(body["prices"]), pages + 1, body.get("next_page_url")
        assert (rows, pages) == (1258, 13)
        assert (
            requests.get(
                url + "/prices", headers={"X-API-KEY": "wrong-key-0123456789"}, timeout=30, params={"ticker": "AAPL"}
            ).status_code
            == 401
        )
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)


def test_the_embedded_service_is_fetched_with_at_most_two_threads(ref_server):
    """The embedded service shares the client's process: a multi-ticker fetch uses at most two threads there (more
    only contend and hold memory); a service on loopback at most the machine's cores (and two), as it shares them
    and has no latency to hide; a service elsewhere gets the configured eight."""
    import os
    import threading

    from fdkit.client.embedded import MAX_WORKERS

    def names(client):
        seen = set()

        def fetch(params):
            seen.add(threading.current_thread().name)
            time.sleep(0.02)  # long enough that a pool would spread the requests
            return {}

        client.fetch_many("company_facts", [{"ticker": t} for t in ["AAPL", "MSFT", "NVDA", "TSLA"] * 4], fetch=fetch)
        return seen

    embedded = fdkit.Client(cache=False, progress=False, max_workers=8)
    loopback = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False, max_workers=8)
    remote = fdkit.Client("k", "http://192.0.2.1:9", cache=False, progress=False, max_workers=8)  # never asked
    assert embedded.settings.embedded and len(names(embedded)) <= MAX_WORKERS == 2
    assert 2 <= len(names(loopback)) <= max(2, os.cpu_count() or 2)
    assert len(names(remote)) > 2
