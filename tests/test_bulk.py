"""The bulk path between fdkit peers: many tickers in a few requests, the same frames as one request per ticker."""

from __future__ import annotations

import random

import pandas as pd
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fdkit
import fdkit.server
from fdkit.catalog.endpoints import CATALOG
from fdkit.client import bulk
from fdkit.errors import NotFoundError
from fdkit.frames.bundle import BUNDLE_MEDIA, BrokenBundle, bundle_bytes, read_bundle
from fdkit.frames.typed import part_bytes, part_from_bytes
from fdkit.server.bulk import BULK_PREFIX, MAX_BULK_TICKERS, bulk_endpoint

BULK = [ep.name for ep in CATALOG.values() if bulk_endpoint(ep) and ep.examples]
#: tickers each bundled dataset holds, a dead one, one another dataset knows, and one nobody knows
TICKERS = ["AAPL", "MSFT", "NVDA", "JPM", "LEH", "XOM", "TSLA", "BTC-USD", "NOPE"]


def _pair(server, tmp_path):
    """A client that asks in bulk (a fetch cache, a peer that says so) and one that asks ticker by ticker."""
    many = fdkit.Client(server.api_key, server.base_url, cache_dir=str(tmp_path / "bulk"), progress=False)
    one = fdkit.Client(server.api_key, server.base_url, cache=False, progress=False)
    return many, one


def _frames(name, params, tickers, many, one):
    fn = getattr(fdkit, name)
    ticker_param = CATALOG[name].ticker_param
    a = fn(**{**params, ticker_param: tickers}, errors="ignore", client=many)
    b = fn(**{**params, ticker_param: tickers}, errors="ignore", client=one)
    return a, b


@pytest.mark.parametrize("name", BULK)
def test_a_bulk_frame_is_the_frame_of_one_request_per_ticker(ref_server, tmp_path, name):
    """Every bulk endpoint, on its example query over several tickers (unknown ones too): the same frame and attrs."""
    ep = CATALOG[name]
    many, one = _pair(ref_server, tmp_path)
    params = {k: v for k, v in ep.examples[0].items() if k not in (ep.ticker_param, "cik")}
    tickers = [ep.examples[0].get(ep.ticker_param, "AAPL"), *TICKERS]
    tickers = list(dict.fromkeys(str(t).upper() for t in tickers))
    a, b = _frames(name, params, tickers, many, one)
    assert many.speaks_bundles() and bulk.uses_bulk(many, ep, len(tickers))
    pd.testing.assert_frame_equal(a, b, check_categorical=True)
    assert [str(d) for d in a.dtypes] == [str(d) for d in b.dtypes] and a.attrs == b.attrs
    assert "NOPE" in a.attrs["missing"]


_KNOWN = sorted(fdkit.available("prices"))
_RANGES = st.tuples(
    st.dates(pd.Timestamp("2003-06-01").date(), pd.Timestamp("2026-03-01").date()), st.integers(0, 4000)
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["price_history", "prices", "income_statements", "insider_trades", "dividends"]),
    seed=st.integers(0, 10**6),
    span=_RANGES,
    limit=st.sampled_from(["default", None, 1, 3, 250]),
)
def test_bulk_and_one_by_one_agree_on_random_queries(ref_server, tmp_path_factory, name, seed, span, limit):
    """Random tickers (the lake's, a dead one, unknown ones), date ranges and limits: the same frame either way."""
    ep = CATALOG[name]
    many, one = _pair(ref_server, tmp_path_factory.mktemp("bulk"))
    rng = random.Random(seed)
    tickers = rng.sample(_KNOWN, 6) + rng.sample(["NOPE", "LEH", "ZZZZ", "BSC", "WB"], 3)
    start, days = span
    end = (pd.Timestamp(start) + pd.Timedelta(days=days)).date()
    params: dict = {}
    if "start_date" in ep.param_names:
        params.update(start_date=start.isoformat(), end_date=end.isoformat())
    if name == "prices":
        params["interval"] = "day"
    if name == "income_statements":
        params.update(period=rng.choice(["annual", "quarterly", "ttm"]), report_period_gte=start.isoformat())
    if "limit" in ep.param_names and not (ep.time_index and limit == "default"):
        params["limit"] = limit
    a, b = _frames(name, params, tickers, many, one)
    pd.testing.assert_frame_equal(a, b, check_categorical=True)
    assert a.attrs == b.attrs


def test_a_warm_bulk_call_sends_nothing_and_the_http_cache_holds_no_copy(ref_server, tmp_path, monkeypatch):
    many, _ = _pair(ref_server, tmp_path)
    q = {"start_date": "2004-01-01", "end_date": "2025-07-09", "limit": None}
    first = fdkit.price_history(["AAPL", "LEH", "XOM"], **q, client=many)
    sent = []
    monkeypatch.setattr(many, "request_bundle", lambda *a, **k: sent.append(a) or None)
    again = fdkit.price_history(["AAPL", "LEH", "XOM"], **q, client=many)
    assert sent == [] and again.equals(first)
    # a subset, and a ticker alone, are answered from the parts the bulk call kept
    pd.testing.assert_frame_equal(fdkit.price_history(["XOM", "LEH"], **q, client=many), first.loc[["LEH", "XOM"]])
    asked = sum(ref_server.counter.requests.values())
    alone = fdkit.price_history("LEH", **q, client=many)  # its own request's path, through the kept table's rows
    pd.testing.assert_frame_equal(alone, first.loc[["LEH"]], check_categorical=False)
    assert sum(ref_server.counter.requests.values()) == asked
    session = many._ensure()  # noqa: SLF001 - the HTTP cache of this client
    urls = [r.url for r in session.cache.responses.values()]  # type: ignore[attr-defined]
    assert not any(BULK_PREFIX in u for u in urls)


def test_a_kept_table_is_kept_once_and_a_ticker_whose_table_is_gone_is_fetched_again(ref_server, tmp_path):
    """A bulk answer's shared table is one fetch-cache entry, its tickers references to it (fdkit.client.refs)."""
    import sqlite3

    many, one = _pair(ref_server, tmp_path)
    q = {"period": "quarterly", "limit": None}
    tickers = ["AAPL", "MSFT", "JPM", "XOM"]
    first = fdkit.income_statements(tickers, **q, client=many)
    bulk.wait_for_writes()
    path = many._fetch_cache.path  # type: ignore[union-attr]  # noqa: SLF001 - the client's fetch cache file
    with sqlite3.connect(path) as db:
        kept = dict(db.execute("select key, body from fetches_v2").fetchall())
    tables = [k for k in kept if k.startswith("table:")]
    refs = [k for k, body in kept.items() if k.startswith("part:") and bytes(body).startswith(b"fdkit-ref 1")]
    assert len(tables) == 1 and len(refs) == len(tickers)
    with sqlite3.connect(path) as db:
        db.execute("delete from fetches_v2 where key = ?", (tables[0],))
    asked = sum(ref_server.counter.requests.values())
    again = fdkit.income_statements(tickers, **q, client=many)
    assert sum(ref_server.counter.requests.values()) > asked  # the references named a table that is gone
    pd.testing.assert_frame_equal(again, first)
    pd.testing.assert_frame_equal(again, fdkit.income_statements(tickers, **q, client=one))


def test_a_warm_call_asks_nothing_again_of_a_ticker_the_service_does_not_know(ref_server, tmp_path, monkeypatch):
    """A 404 in a bulk answer is kept (for the endpoint's TTL, an hour at most): the warm call sends nothing and
    says the same."""
    many, _ = _pair(ref_server, tmp_path)
    q = {"start_date": "2008-09-01", "end_date": "2008-09-30"}
    first = fdkit.price_history(["LEH", "NOPE"], **q, errors="ignore", client=many)
    monkeypatch.setattr(many, "request_bundle", lambda *a, **k: pytest.fail("a warm call sent a bulk request"))
    again = fdkit.price_history(["LEH", "NOPE"], **q, errors="ignore", client=many)
    pd.testing.assert_frame_equal(again, first)
    assert again.attrs == first.attrs and "NOPE" in again.attrs["missing"]
    with pytest.raises(NotFoundError, match="Ticker NOPE not found"):
        fdkit.price_history(["LEH", "NOPE"], **q, client=many)


def test_failed_tickers_follow_errors(ref_server, tmp_path):
    many, _ = _pair(ref_server, tmp_path)
    q = {"start_date": "2008-09-01", "end_date": "2008-09-30"}
    with pytest.raises(NotFoundError, match="NOPE"):
        fdkit.price_history(["LEH", "NOPE"], **q, client=many)
    with pytest.warns(UserWarning, match="NOPE skipped"):
        df = fdkit.price_history(["LEH", "NOPE"], **q, errors="warn", client=many)
    assert list(df.attrs["missing"]) == ["NOPE"] and set(df.index.get_level_values(0)) == {"LEH"}


def test_the_bulk_route_refuses_bad_requests_in_its_own_words(ref_server):
    url = ref_server.base_url + BULK_PREFIX + CATALOG["price_history"].path
    h = {"X-API-KEY": ref_server.api_key}
    q = {"start_date": "2008-09-01", "end_date": "2008-09-30"}
    for body, words in [
        (None, "body"),
        ({"tickers": []}, "one ticker or more"),
        ({"tickers": [1]}, "a string"),
        ({"tickers": ["A"] * (MAX_BULK_TICKERS + 1)}, "at most"),
        ({"tickers": ["LEH"], "whole_range": "yes"}, "whole_range"),
        ({"tickers": ["LEH"], "tables": "yes"}, "tables"),
    ]:
        r = requests.post(url, params=q, json=body, headers=h, timeout=30)
        assert r.status_code == 400 and words in r.json()["message"], (body, r.text)
        assert set(r.json()) == {"error", "message"}
    r = requests.post(url, params={**q, "end_date": "2008-13-01"}, json={"tickers": ["LEH"]}, headers=h, timeout=30)
    assert r.status_code == 400 and "end_date" in r.json()["message"]
    r = requests.post(url, params=q, json={"tickers": ["LEH"]}, timeout=30)
    assert r.status_code == 401
    r = requests.post(url, params=q, json={"tickers": ["leh", "NOPE", "LEH"]}, headers=h, timeout=30)
    assert r.status_code == 200 and r.headers["content-type"] == BUNDLE_MEDIA
    entries = read_bundle(r.content)
    assert r.headers["X-Fdkit-Part-Compression"] == "zstd"
    assert [(e.ticker, e.status) for e in entries] == [("LEH", 200), ("NOPE", 404)]
    own = requests.get(
        ref_server.base_url + CATALOG["price_history"].path, params={**q, "ticker": "LEH"}, headers=h, timeout=30
    ).json()["prices"]
    assert part_from_bytes(entries[0].data)[1] == len(own) > 0


def test_a_client_that_asks_for_shared_tables_gets_each_tickers_part_as_a_run_of_one_table(ref_server):
    """The same rows and constants as the ticker's own part, in one Arrow stream for the request's tickers."""
    from fdkit.client.bulk import _shared_run
    from fdkit.frames.runs import as_part
    from fdkit.frames.typed import as_written

    h = {"X-API-KEY": ref_server.api_key}
    for name, q in [
        ("price_history", {"start_date": "2008-09-01", "end_date": "2008-09-30"}),
        ("income_statements", {"period": "quarterly", "limit": 3}),
    ]:
        url = ref_server.base_url + BULK_PREFIX + CATALOG[name].path
        asked = ["XOM", "NOPE", "leh", "AAPL"] if name == "price_history" else ["MSFT", "NOPE", "AAPL"]
        shared = read_bundle(
            requests.post(url, params=q, json={"tickers": asked, "tables": True}, headers=h, timeout=30).content
        )
        plain = read_bundle(requests.post(url, params=q, json={"tickers": asked}, headers=h, timeout=30).content)
        assert [(e.ticker, e.status) for e in shared] == [(e.ticker, e.status) for e in plain]
        assert any(e.shared is not None for e in shared) and all(e.shared is None for e in plain)
        tables: dict = {}
        for a, b in zip(shared, plain, strict=True):
            if a.status != 200:
                assert a.shared is None and a.message == b.message
                continue
            table, n, consts = as_written(as_part(_shared_run(a, tables)))
            own = as_written(part_from_bytes(b.data, text=False))
            assert n == own[1] > 0 and consts == own[2] and table.equals(own[0]), (name, a.ticker)


def test_a_shared_table_bundle_that_names_rows_it_lacks_is_broken(ref_server, tmp_path):
    import pyarrow as pa

    from fdkit.errors import TransportError
    from fdkit.frames.bundle import Bundle, BundleEntry, RowsOf, SharedTable

    table = SharedTable(part_bytes((pa.table({"x": [1.0, 2.0]}), 2, {"ticker": "A"})))
    assert [e.rows for e in read_bundle(bundle_bytes([("", table), ("A", RowsOf(0, 2))]))] == [2]
    with pytest.raises(BrokenBundle, match="no table came before"):
        read_bundle(bundle_bytes([("A", RowsOf(0, 1)), ("", table)]))
    whole = bundle_bytes([("", table), ("A", RowsOf(0, 1)), ("B", RowsOf(1, 1))])
    with pytest.raises(BrokenBundle, match="tables"):  # a table entry left out: the end counts it
        read_bundle(whole.replace(b'"tables":1', b'"tables":2'))
    client, _ = _pair(ref_server, tmp_path)
    ep = CATALOG["price_history"]
    lying = Bundle([BundleEntry("A", 200, shared=table, offset=1, rows=5)], None)
    with pytest.raises(TransportError, match="broken part for A"):
        bulk._take(client, ep, [(0, lying)], ["k"], {}, {})


def test_a_peer_that_answers_part_by_part_gives_the_same_frame(ref_server, tmp_path, monkeypatch):
    """An older ``fdkit serve`` does not know ``tables``: its bundles of one part per ticker read as before."""
    import fdkit.server.app as app

    tickers = ["AAPL", "MSFT", "NOPE", "XOM"]
    q = {"start_date": "2023-01-01", "end_date": "2023-03-31"}
    many, one = _pair(ref_server, tmp_path)
    expected = fdkit.prices(tickers, **q, errors="ignore", client=one)
    own = app._bulk_body
    monkeypatch.setattr(app, "_bulk_body", lambda raw: (*own(raw)[:2], False))
    older = fdkit.Client(ref_server.api_key, ref_server.base_url, cache_dir=str(tmp_path / "older"), progress=False)
    got = fdkit.prices(tickers, **q, errors="ignore", client=older)
    assert older.speaks_bundles()
    pd.testing.assert_frame_equal(got, expected, check_categorical=True)


def test_a_bundle_cut_short_is_never_taken_for_fewer_tickers():
    import pyarrow as pa

    part = part_bytes((pa.table({"x": [1.0]}), 1, {"ticker": "A"}), "zstd")
    body = bundle_bytes([("A", part), ("B", part)])
    assert [e.ticker for e in read_bundle(body)] == ["A", "B"]
    for cut in (1, 10, len(body) // 2, len(body) - 1):
        with pytest.raises(BrokenBundle):
            read_bundle(body[:cut])
    with pytest.raises(BrokenBundle):
        read_bundle(b"<html>not a bundle</html>")


@pytest.mark.parametrize("period", ["annual", "quarterly", "ttm"])
def test_financials_of_a_list_is_the_same_frame_by_bulk_requests(ref_server, tmp_path, period):
    """financials() of a ticker list from a peer joins the three statements' bulk answers: the frame of one
    /financials request per ticker, its attrs and its one TruncatedWarning."""
    many, one = _pair(ref_server, tmp_path)
    tickers = ["AAPL", "NVDA", "A", "MSFT", "NOPE"]
    for limit in (None, 2):
        a = fdkit.financials(tickers, period=period, limit=limit, errors="ignore", client=many, progress=False)
        b = fdkit.financials(tickers, period=period, limit=limit, errors="ignore", client=one, progress=False)
        pd.testing.assert_frame_equal(a, b)
        assert a.attrs == b.attrs and list(a.attrs["missing"]) == ["NOPE"]
    with pytest.warns(UserWarning, match="NOPE skipped") as said:
        fdkit.financials(tickers, period=period, limit=1, errors="warn", client=many, progress=False)
    assert len([w for w in said if "NOPE skipped" in str(w.message)]) == 1  # once, not once a statement
    with pytest.warns(fdkit.errors.TruncatedWarning, match=r"^financials\(\) returned the default 4") as caught:
        fdkit.financials(tickers[:4], period=period, client=many)
    assert len([w for w in caught if issubclass(w.category, fdkit.errors.TruncatedWarning)]) == 1


def test_the_embedded_default_answers_bulk_requests_in_process_with_the_same_frames(ref_server, tmp_path, monkeypatch):
    """The embedded default's bulk requests never cross the loopback socket; their frames are the HTTP route's."""
    import fdkit.server

    embedded = fdkit.Client(cache_dir=str(tmp_path / "embedded"), progress=False)
    http = fdkit.Client(ref_server.api_key, ref_server.base_url, cache_dir=str(tmp_path / "http"), progress=False)
    answered = []
    real = fdkit.server.bulk_in_process
    monkeypatch.setattr(fdkit.server, "bulk_in_process", lambda *a, **k: answered.append(a[1]) or real(*a, **k))
    tickers = ["AAPL", "LEH", "MSFT", "NOPE", "XOM"]
    for name, q in [
        ("price_history", {"start_date": "2007-01-01", "end_date": "2009-12-31"}),
        ("prices", {"interval": "day", "start_date": "2016-01-01", "end_date": "2023-10-27"}),
        ("income_statements", {"period": "quarterly", "limit": None}),
    ]:
        a = getattr(fdkit, name)(tickers, **q, errors="ignore", client=embedded)
        b = getattr(fdkit, name)(tickers, **q, errors="ignore", client=http)
        pd.testing.assert_frame_equal(a, b, check_categorical=True)
        assert list(a.attrs["missing"]) == list(b.attrs["missing"]) and "NOPE" in a.attrs["missing"]
    assert answered == ["/bulk/prices/history", "/bulk/prices", "/bulk/financials/income-statements"]
    with pytest.raises(fdkit.errors.BadRequestError, match="end_date"):  # the route's own 400, in process too
        embedded.request_bundle(CATALOG["price_history"], {"end_date": "2008-13-01"}, ["LEH"])


@pytest.mark.parametrize(
    ("name", "tickers", "q"),
    [
        (
            "prices",
            ["AAPL", "SPY", "MSFT", "LEH", "NOPE"],
            {"interval": "day", "start_date": "2015-06-01", "end_date": "2024-06-30", "adjusted": True},
        ),
        (
            "prices",
            ["AAPL", "SPY", "MSFT", "NOPE"],
            {"interval": "minute", "start_date": "2014-06-05", "end_date": "2014-06-06"},
        ),
        (
            "prices",
            ["AAPL", "SPY", "MSFT", "NOPE"],
            {"interval": "week", "interval_multiplier": 2, "start_date": "2016-01-01", "end_date": "2016-12-31"},
        ),
        (
            "prices",
            ["AAPL", "XOM", "JPM"],
            {"interval": "day", "start_date": "2024-06-24", "end_date": "2024-06-28", "limit": 2},
        ),
        (
            "crypto_prices",
            ["BTC-USD", "ETH-USD", "NOPE-USD"],
            {"interval": "day", "start_date": "2021-01-01", "end_date": "2021-03-31"},
        ),
    ],
)
def test_bars_in_bulk_are_each_tickers_own_bars(ref_server, tmp_path, name, tickers, q):
    """Daily bars adjusted or as traded, minute bars (a ticker with days but no minutes: an empty part), bars
    aggregated by the handler, a limit per ticker, crypto: the bulk route's frame is one request per ticker's."""
    many, one = _pair(ref_server, tmp_path)
    a = getattr(fdkit, name)(tickers, **q, errors="ignore", client=many)
    b = getattr(fdkit, name)(tickers, **q, errors="ignore", client=one)
    assert many.speaks_bundles() and bulk.uses_bulk(many, CATALOG[name], len(tickers))
    assert tickers[0] in set(a.index.get_level_values("ticker"))
    pd.testing.assert_frame_equal(a, b, check_categorical=True)
    assert a.attrs == b.attrs


def test_tickers_are_taken_as_their_own_requests_take_them(ref_server, tmp_path):
    """Stray spaces and case are one ticker; a ticker the parameter refuses is its own 400, not the call's."""
    many, one = _pair(ref_server, tmp_path)
    q = {"start_date": "2008-09-01", "end_date": "2008-09-30"}
    a = fdkit.price_history([" LEH", "XOM", "leh "], **q, client=many)
    pd.testing.assert_frame_equal(a, fdkit.price_history(["LEH", "XOM"], **q, client=one))
    bad = ["A" * 201, "Z\x01"]
    a = fdkit.price_history(["XOM", *bad, "LEH"], **q, errors="ignore", client=many)
    b = fdkit.price_history(["XOM", *bad, "LEH"], **q, errors="ignore", client=one)
    pd.testing.assert_frame_equal(a, b)
    assert set(a.attrs["missing"]) == set(b.attrs["missing"]) == {t.upper() for t in bad}
    assert all("not a valid value" in why for why in a.attrs["missing"].values())


def test_bulk_usage_counts_the_tickers_answered(ref_server):
    url = ref_server.base_url + BULK_PREFIX + CATALOG["price_history"].path
    h = {"X-API-KEY": ref_server.api_key}

    def used() -> int:
        return requests.get(ref_server.base_url + "/usage", headers=h, timeout=30).json()["requests"]

    before = used()
    r = requests.post(
        url,
        params={"start_date": "2008-09-01", "end_date": "2008-09-30"},
        json={"tickers": ["LEH", "NOPE", "ZZZZ"]},
        headers=h,
        timeout=30,
    )
    assert r.status_code == 200 and used() - before == 1  # errors count nothing, as their own requests would


def test_a_bulk_answer_over_the_response_cap_is_asked_for_in_smaller_requests(ref_server, tmp_path):
    """max_response_bytes bounds a bulk answer as it bounds a page: the client asks for fewer tickers at a time."""
    small = fdkit.Client(
        ref_server.api_key,
        ref_server.base_url,
        cache_dir=str(tmp_path / "small"),
        progress=False,
        max_response_bytes=256 * 2**10,
    )
    one = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)
    tickers = _KNOWN[:12]
    a = fdkit.price_history(tickers, limit=None, errors="ignore", client=small)
    b = fdkit.price_history(tickers, limit=None, errors="ignore", client=one)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) > 12 * 1000  # (about 60,000 bars: more than one capped answer holds)


def test_an_offline_call_right_after_a_bulk_call_reads_what_it_kept(tmp_path):
    """The embedded default keeps its parts in the background; an offline client of the same cache waits for them."""
    q = {"start_date": "2004-01-01", "end_date": "2025-07-09", "limit": None}
    online = fdkit.Client(cache_dir=str(tmp_path), progress=False)
    tickers = _KNOWN[:40]
    first = fdkit.price_history(tickers, **q, errors="ignore", client=online)
    offline = fdkit.Client(cache_dir=str(tmp_path), offline=True, progress=False)
    again = fdkit.price_history(tickers, **q, errors="ignore", client=offline)
    pd.testing.assert_frame_equal(again, first)


def test_a_bundle_whose_headers_are_not_a_bundles_is_broken():
    import struct

    import orjson

    for head in ({"ticker": "A", "bytes": "x"}, {"ticker": "A", "status": "oops"}, {"bytes": 1}, [1, 2], None):
        raw = orjson.dumps(head)
        body = b"fdkit-bundle 1\n" + struct.pack(">I", len(raw)) + raw
        with pytest.raises(BrokenBundle):
            read_bundle(body)


def test_a_new_client_of_a_remembered_peer_asks_in_bulk_without_asking_first(ref_server, tmp_path):
    """The cache folder's peer mark says the service answers bundles: a new process's first call is bulk, and a
    warm one sends nothing at all."""
    q = {"start_date": "2008-09-01", "end_date": "2008-09-30"}
    first = fdkit.Client(ref_server.api_key, ref_server.base_url, cache_dir=str(tmp_path), progress=False)
    fdkit.price_history(["LEH", "XOM"], **q, client=first)
    asked = sum(ref_server.counter.requests.values())
    later = fdkit.Client(ref_server.api_key, ref_server.base_url, cache_dir=str(tmp_path), progress=False)
    assert later.speaks_bundles() and sum(ref_server.counter.requests.values()) == asked
    fdkit.price_history(["LEH", "XOM"], **q, client=later)  # warm
    assert sum(ref_server.counter.requests.values()) == asked
    fdkit.price_history(["LEH", "BAC"], **q, client=later)  # BAC cold: one bulk request, no probe before it
    assert ref_server.counter.requests[BULK_PREFIX + CATALOG["price_history"].path] >= 1
    assert sum(ref_server.counter.requests.values()) == asked + 1


@pytest.mark.parametrize("layout", ["delta", "parquet"])
def test_bulk_frames_equal_one_request_per_ticker_on_a_lake_after_landings(tmp_path, layout):
    """The state a lake reaches: a flat file, then an amended record and a new ticker landed in ``ticker=``
    partitions (the record of the file written last wins), served by ``fdkit serve``: bulk and one request per
    ticker give the same frames."""
    from fdkit.lake.io import default_data_dir, read_dataset, write_dataset
    from tests.lakes import write_test_lake

    root = write_test_lake(tmp_path / "lake", layout=layout)
    income = read_dataset(default_data_dir(), "income_statements")
    income = income[income["ticker"].astype(str).isin(["AAPL", "MSFT", "NVDA"])]
    write_dataset(root, "income_statements", income, layout=layout)
    amended = income[income["ticker"].astype(str) == "AAPL"].head(2).assign(revenue=1.0)
    landed = pd.concat([amended, amended.assign(ticker="NEWCO")], ignore_index=True)
    write_dataset(root, "income_statements", landed, partition_by="ticker", mode="append", layout=layout)
    with fdkit.server.start(data=root) as srv:
        many, one = _pair(srv, tmp_path)
        queries = [
            ("income_statements", {"period": "quarterly", "limit": None}),
            ("income_statements", {"period": "annual", "limit": 2}),
            ("prices", {"interval": "day", "start_date": "2024-01-01", "end_date": "2024-06-30"}),
        ]
        for name, q in queries:
            tickers = ["AAPL", "NEWCO", "MSFT", "NVDA", "AAA", "BBB", "NOPE"]
            a, b = _frames(name, q, tickers, many, one)
            pd.testing.assert_frame_equal(a, b, check_categorical=True)
            assert a.attrs == b.attrs
        assert many.speaks_bundles()
        period = str(amended["period"].iloc[0])
        got = fdkit.income_statements(["AAPL", "NEWCO", "MSFT"], period=period, limit=None, client=many)
        assert (got.loc["AAPL", "revenue"] == 1.0).sum() >= 1 and "NEWCO" in got.index.get_level_values(0)
