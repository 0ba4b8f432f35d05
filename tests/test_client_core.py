"""Client core over real HTTP: errors, retries, pagination, cache, offline mode, key safety."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
import requests

import fdkit
import fdkit.server
from fdkit.client import paging
from fdkit.client.cache import make_session, namespace_of
from fdkit.errors import (
    AuthenticationError,
    BadRequestError,
    CacheMissError,
    InvalidCursorError,
    NotFoundError,
    PaymentRequiredError,
    RateLimitError,
    ServerError,
    StaleDataWarning,
    TransportError,
)

PRICES = {"ticker": "AAA", "interval": "day", "start_date": "2024-01-01", "end_date": "2024-12-31"}


# -- errors -------------------------------------------------------------------------------------------------
def test_400_maps_to_bad_request_with_server_message(make_client):
    with pytest.raises(BadRequestError) as e:
        make_client(cache=False).fetch("screen", {"filters": [{"field": "revnue", "operator": "gt", "value": 1}]})
    assert e.value.status == 400 and "unknown filter field 'revnue'" in e.value.message
    assert isinstance(e.value, ValueError) and e.value.path == "/financials/search/screener"


def test_a_value_the_service_would_refuse_is_refused_in_its_words_before_sending(make_client):
    """The client checks what it sends with the service's own rules (fdkit.catalog.params): no request, same words."""
    with pytest.raises(BadRequestError) as e:
        make_client(cache=False).fetch("prices", {**PRICES, "interval": "hour"})
    assert e.value.status is None and "'interval' must be one of minute, day" in e.value.message
    assert e.value.path == "/prices"


def test_401_missing_and_invalid_key(test_server, make_client):
    with pytest.raises(AuthenticationError) as e:
        make_client(api_key="wrong-key-123456", cache=False).fetch("prices", PRICES)
    assert e.value.status == 401 and e.value.message == "Invalid API key provided"
    r = requests.get(test_server.base_url + "/prices", params=PRICES)
    assert r.status_code == 401 and r.json()["error"] == "Missing API key"


def test_402_when_plan_excludes_endpoint(test_lake, tmp_path):
    with fdkit.server.start(test_lake, keys={"free-key-123456": "free"}) as srv:
        c = fdkit.Client("free-key-123456", srv.base_url, cache=False)
        with pytest.raises(PaymentRequiredError) as e:
            c.fetch("income_statements", {"ticker": "AAA", "period": "quarterly"})
        assert e.value.status == 402 and "plan" in e.value.message
        assert c.fetch("company_facts", {"ticker": "AAA"})["company_facts"]["ticker"] == "AAA"  # never 402


def test_404_maps_to_not_found(make_client):
    with pytest.raises(NotFoundError) as e:
        make_client(cache=False).fetch("prices", {**PRICES, "ticker": "ZZZZ"})
    assert isinstance(e.value, LookupError) and "ZZZZ" in e.value.message


def test_unknown_parameter_rejected_before_sending(make_client, test_server):
    before = sum(test_server.counter.requests.values())
    with pytest.raises(BadRequestError, match="no parameter 'start'"):
        make_client().fetch("prices", {**PRICES, "start": "2024-01-01"})
    assert sum(test_server.counter.requests.values()) == before


def _faulty(test_lake, script, **kw):
    return fdkit.server.start(test_lake, faults=fdkit.server.FaultPlan(script=script, paths=("/prices",), **kw))


def test_429_retry_after_is_honoured(test_lake):
    with _faulty(test_lake, ["429"], retry_after=1) as srv:
        c = fdkit.Client(srv.api_key, srv.base_url, cache=False)
        t0 = time.monotonic()
        body = c.fetch("prices", {**PRICES, "limit": 5})
        elapsed = time.monotonic() - t0
    assert len(body["prices"]) == 5
    assert elapsed >= 1.0, elapsed
    assert srv.app is not None


@pytest.mark.parametrize(("kind", "cls"), [("500", ServerError), ("503", ServerError), ("429", RateLimitError)])
def test_persistent_failures_raise_transport_errors(test_lake, kind, cls):
    with _faulty(test_lake, [kind] * 10) as srv:
        from fdkit.client.cache import make_retry

        c = fdkit.Client(
            srv.api_key, srv.base_url, cache=False, timeout=5, retry=make_retry(total=2, backoff_factor=0.01)
        )
        with pytest.raises(cls) as e:
            c.fetch("prices", {**PRICES, "limit": 5})
    assert isinstance(e.value, TransportError) and e.value.status == int(kind)
    if kind == "429":
        assert e.value.retry_after == 0 and "throttled" in e.value.message


def test_truncated_body_is_retried(test_lake):
    with _faulty(test_lake, ["truncate", "truncate"]) as srv:
        body = fdkit.Client(srv.api_key, srv.base_url, cache=False).fetch("prices", {**PRICES, "limit": 3})
    assert [p["close"] for p in body["prices"]] == [100.0, 100.5, 101.0]


# -- pagination ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("limit", [1, 99, 100, 101, 250])
def test_paginator_returns_exactly_limit_unique_records(make_client, limit):
    recs = make_client().fetch("prices", {**PRICES, "limit": limit})["prices"]
    assert len(recs) == limit
    assert len({r["time"] for r in recs}) == limit
    assert recs == sorted(recs, key=lambda r: r["time"])


def test_pagination_matches_unpaginated_lake(make_client, test_lake):
    from fdkit.lake.io import read_dataset

    recs = make_client().fetch("prices", {**PRICES, "limit": 5000})["prices"]
    lake = read_dataset(test_lake, "prices")
    lake = lake[lake["ticker"] == "AAA"]
    assert [r["close"] for r in recs] == lake["close"].tolist()


def test_paginator_restarts_once_on_invalid_cursor(test_lake, tmp_path):
    with fdkit.server.start(test_lake, cursor_secret=b"a" * 32) as first:
        port = int(first.base_url.rsplit(":", 1)[1])
        c = fdkit.Client(first.api_key, first.base_url, cache_dir=str(tmp_path), progress=False)
        # only page 1 is cached; its next_page_url holds a cursor signed with secret a
        c.request("GET", "/prices", params={**PRICES, "limit": 250}, ttl=60)
    # same port, new secret: the cached page 1 names a cursor the new server rejects
    with fdkit.server.start(test_lake, keys=[first.api_key], port=port, cursor_secret=b"b" * 32) as second:
        assert second.base_url == first.base_url
        c2 = fdkit.Client(first.api_key, second.base_url, cache_dir=str(tmp_path), progress=False)

        def get(url, refresh):
            if url is None:
                return c2.request("GET", "/prices", params={**PRICES, "limit": 250}, ttl=60, refresh=refresh)
            return c2.request("GET", url, ttl=60, refresh=refresh)

        walked = paging.collect(get, "prices", limit=250)
    assert walked.restarted
    assert len(walked.records) == 250 and len({r["time"] for r in walked.records}) == 250


def test_invalid_cursor_error_class(test_server, make_client):
    c = make_client(cache=False)
    with pytest.raises(InvalidCursorError, match="Reissue the original request"):
        c.request("GET", test_server.base_url + "/prices?cursor=garbage")


def test_repeated_next_page_url_is_detected():
    pages = {None: {"x": [1], "next_page_url": "a"}, "a": {"x": [2], "next_page_url": "a"}}
    with pytest.raises(TransportError, match="same next_page_url"):
        paging.collect(lambda u, r: pages[u], "x", limit=None)


# -- cache ----------------------------------------------------------------------------------------------------
def test_warm_cache_sends_no_request(make_client, test_server):
    c = make_client()
    cold = c.fetch("prices", {**PRICES, "limit": 250})
    seen = sum(test_server.counter.requests.values())
    warm = make_client().fetch("prices", {**PRICES, "limit": 250})
    assert warm == cold
    assert sum(test_server.counter.requests.values()) == seen


def test_a_ticker_the_service_lacks_is_a_kept_answer(make_client, test_server):
    """A 404 is cached for the endpoint's time to live, as a 200 is: asked again (offline too), nothing is sent."""
    calls = [
        lambda c: fdkit.prices("NOPE", start_date="2024-01-02", end_date="2024-01-05", client=c),
        lambda c: fdkit.income_statements("NOPE", client=c),
        lambda c: fdkit.prices(["AAA", "NOPE"], start_date="2024-01-02", end_date="2024-01-05", client=c),
    ]
    for call in calls:
        with pytest.raises(NotFoundError, match="NOPE"):
            call(make_client())
        seen = sum(test_server.counter.requests.values())
        for warm in (make_client(), make_client(offline=True)):
            with pytest.raises(NotFoundError, match="NOPE"):
                call(warm)
        assert sum(test_server.counter.requests.values()) == seen


def test_a_kept_404_expires_within_the_hour_even_where_answers_never_do(tmp_path):
    """Filing items never expire; a 404 for one is kept an hour at most (the service may learn the filing)."""
    import datetime

    import requests
    import urllib3

    from fdkit.client.cache import MISS_TTL, VerifiedSQLiteCache

    backend = VerifiedSQLiteCache(tmp_path / "n.sqlite")
    for status in (404, 200):
        response = requests.Response()
        response.status_code, response._content, response.url = status, b"{}", f"http://x/filings/items?{status}"
        response.request = requests.Request("GET", response.url).prepare()
        response.raw = urllib3.HTTPResponse(body=b"{}", status=status, request_url=response.url)
        backend.save_response(response, f"k{status}", expires=None)  # None: never expires
    now = datetime.datetime.now(datetime.UTC)
    kept = backend.get_response("k404").expires
    assert now < kept <= now + datetime.timedelta(seconds=MISS_TTL)
    assert backend.get_response("k200").expires is None


def test_an_expired_kept_404_served_when_the_service_fails_says_its_age(tmp_path, monkeypatch, capfd):
    """stale_if_error serves an expired 404 too: the same NotFoundError, with the StaleDataWarning a 200 gets, and
    no traceback of requests-cache's on stderr."""
    import fdkit.client.cache

    monkeypatch.setattr(fdkit.client.cache, "MISS_TTL", 1)
    ask = {"start_date": "2024-01-02", "end_date": "2024-01-05"}
    with fdkit.server.start() as srv:
        url, key = srv.base_url, srv.api_key
        with fdkit.Client(key, url, cache_dir=str(tmp_path), progress=False) as c, pytest.raises(NotFoundError):
            fdkit.prices("NOPEX", **ask, client=c)
    time.sleep(1.2)  # the kept 404 expires; the service is gone
    capfd.readouterr()
    with fdkit.Client(key, url, cache_dir=str(tmp_path), progress=False, timeout=2) as c:
        with pytest.warns(StaleDataWarning, match="expired cached answer"), pytest.raises(NotFoundError, match="NOPEX"):
            fdkit.prices("NOPEX", **ask, client=c)
    assert "Traceback" not in capfd.readouterr().err


def test_offline_mode(make_client):
    params = {"ticker": "BBB", "interval": "week", "start_date": "2024-01-01", "end_date": "2024-06-30"}
    with pytest.raises(CacheMissError):
        make_client(offline=True).fetch("prices", params)
    online = make_client().fetch("prices", params)
    assert make_client(offline=True).fetch("prices", params) == online


def test_cache_dir_is_private_and_namespaced(make_client, tmp_path):
    make_client().fetch("company_facts", {"ticker": "AAA"})
    root = tmp_path / "cache" / "fdkit"  # fdkit's own folder inside the cache_dir it was given
    assert root.stat().st_mode & 0o777 == 0o700
    files = [p.name for p in root.iterdir() if not p.name.startswith(".")]
    assert files and all(len(f.split(".")[0]) == 20 for f in files)


def _casings(word: str):
    letters = [(ch.lower(), ch.upper()) if ch.isalpha() else (ch,) for ch in word]
    return ["".join(c) for c in itertools.product(*letters)]


def test_canary_key_never_written_to_cache(test_lake, tmp_path):
    canary = "CANARY-7f3a9c1e-key"
    cache_dir = tmp_path / "c"
    with fdkit.server.start(test_lake, keys=[canary]) as srv:
        session = make_session(cache_dir, namespace_of(srv.base_url, canary))
        variants = _casings("x-api-key")
        assert len(variants) == 128
        for i, name in enumerate(variants):
            r = session.get(
                srv.base_url + "/company/facts", params={"ticker": "AAA", "cik": "1", "n": i}, headers={name: canary}
            )
            assert r.status_code == 400  # ticker and cik together: not cached, but still sent with the key
            r = session.get(srv.base_url + "/prices", params={**PRICES, "limit": i + 1}, headers={name: canary})
            assert r.status_code == 200 and not r.from_cache
        c = fdkit.Client(canary, srv.base_url, cache_dir=str(cache_dir), progress=False)
        c.fetch("prices", {**PRICES, "limit": 150})
        session.close()
        c.close()
    files = [p for p in Path(cache_dir).rglob("*") if p.is_file()]
    assert files
    for p in files:
        data = p.read_bytes()
        assert canary.encode() not in data, p
        assert canary.lower().encode() not in data.lower(), p
    assert "CANARY" not in repr(c) and "CANARY" not in repr(c.settings)


def test_key_not_in_exception_text(test_server, make_client):
    secret = "secret-key-in-url-0001"
    c = make_client(api_key=secret, cache=False)
    with pytest.raises(AuthenticationError) as e:
        c.fetch("prices", PRICES)
    assert secret not in str(e.value) and secret not in repr(e.value)


def test_config_precedence(monkeypatch, tmp_path):
    from fdkit.client.config import resolve

    env = {"FINANCIAL_DATASETS_API_KEY": "env-key", "FDKIT_BASE_URL": "http://env.example/"}
    assert resolve(env=env).base_url == "http://env.example"
    fdkit.configure(base_url="http://configured.example")
    try:
        assert resolve(env=env).base_url == "http://configured.example"
        assert resolve(env=env, base_url="http://arg.example").base_url == "http://arg.example"
        assert resolve(env=env).api_key == "env-key"
    finally:
        fdkit.configure(base_url=None)
    assert resolve(env={"FINANCIAL_DATASETS_API_KEY": "k"}).base_url == "https://api.financialdatasets.ai"
    assert resolve(env={}).embedded
    with pytest.raises(TypeError, match="unknown setting"):
        fdkit.configure(colour="red")


def test_fetch_many_collects_per_ticker_failures(make_client):
    c = make_client()
    params = [{**PRICES, "ticker": t, "limit": 3} for t in ("AAA", "NOPE", "BBB")]
    ok, failed = c.fetch_many("prices", params, errors="ignore")
    assert [p["ticker"] for p, _ in ok] == ["AAA", "BBB"]
    assert list(failed) == ["NOPE"] and isinstance(failed["NOPE"], NotFoundError)
    with pytest.raises(NotFoundError):
        c.fetch_many("prices", params)
    with pytest.warns(UserWarning, match="NOPE"):
        c.fetch_many("prices", params, errors="warn")


def test_fetch_cache_answers_a_walk_in_one_read(make_client, test_server, tmp_path):
    params = {**PRICES, "ticker": "BBB", "limit": 250}
    cold = make_client().fetch("prices", params)
    seen = sum(test_server.counter.requests.values())
    warm = make_client().fetch("prices", params)
    assert warm == cold and sum(test_server.counter.requests.values()) == seen
    refreshed = make_client().fetch("prices", params, refresh=True)
    assert refreshed == cold and sum(test_server.counter.requests.values()) == seen + 3
    files = sorted(p.name for p in (tmp_path / "cache" / "fdkit").iterdir() if p.suffix == ".sqlite")
    assert any(f.endswith(".fetch.sqlite") for f in files)
    from fdkit.client.cache import cache_info, clear_cache

    assert [r["responses"] > 0 for r in cache_info(tmp_path / "cache")] == [True]
    assert clear_cache(tmp_path / "cache") >= 2
    assert not list((tmp_path / "cache").glob("*.sqlite"))


def test_embedded_default_works_offline_from_its_cache(tmp_path, monkeypatch):
    for var in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL", "FDKIT_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    online = fdkit.Client(cache_dir=str(tmp_path), progress=False)
    assert online.settings.embedded and online.base_url.startswith("http://127.0.0.1:")
    a = online.prices("NVDA", start_date="2024-06-03", end_date="2024-06-14")
    b = online.company_facts("NVDA")
    offline = fdkit.Client(cache_dir=str(tmp_path), offline=True, progress=False)
    pd_a = offline.prices("NVDA", start_date="2024-06-03", end_date="2024-06-14")
    assert pd_a.equals(a) and offline.company_facts("NVDA").equals(b)
    with pytest.raises(CacheMissError):
        offline.company_facts("AAPL")


def test_warm_frames_come_back_as_arrow_parts(make_client, test_server):
    c = make_client()
    cold = c.prices(["AAA", "BBB"], start_date="2024-01-01", end_date="2024-12-31")
    seen = sum(test_server.counter.requests.values())
    warm = make_client().prices(["AAA", "BBB"], start_date="2024-01-01", end_date="2024-12-31")
    assert sum(test_server.counter.requests.values()) == seen
    import pandas as pd

    pd.testing.assert_frame_equal(cold, warm)
    offline = make_client(offline=True).prices(["BBB", "AAA"], start_date="2024-01-01", end_date="2024-12-31")
    pd.testing.assert_frame_equal(cold, offline)
