"""A hostile world: a misbehaving service written here, careless users, corrupted and shared caches.

Each mode of :class:`Hostile` misbehaves in one way; every call must end within its deadline with the documented
error and never send the key anywhere but its own origin.
"""

from __future__ import annotations

import gzip
import http.server
import os
import pickle
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from urllib.parse import parse_qs, urlsplit

import numpy as np
import orjson
import pandas as pd
import pytest
import requests

import fdkit
from fdkit.client import bulk
from fdkit.client.cache import FetchCache, _check_sqlite, cache_root, clear_cache, make_session
from fdkit.errors import CacheError, FdkitError, PaginationError, RateLimitError, StaleDataWarning, TransportError

CANARY = "canary-9e1c2b7d-HOSTILE-key"
BAR = {"time": "2024-01-02", "open": 1.0, "high": 1.0, "low": 1.0, "close": 1.0, "volume": 1}


def _bars(start: int, n: int) -> list[dict]:
    days = pd.bdate_range("2024-01-02", periods=start + n)[start:]
    return [{**BAR, "time": f"{d:%Y-%m-%d}", "close": float(start + i)} for i, d in enumerate(days)]


class Capture(http.server.ThreadingHTTPServer):
    """A server on another loopback origin that records every request's headers."""

    daemon_threads = True

    def __init__(self) -> None:
        seen: list[dict[str, str]] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                seen.append(dict(self.headers.items()))
                body = orjson.dumps({"prices": _bars(100, 3)})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.2", 0), Handler)
        self.seen = seen
        self.url = f"http://127.0.0.2:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


class Hostile(http.server.ThreadingHTTPServer):
    """The misbehaving service: ``/<mode>/prices`` answers in the named bad way."""

    daemon_threads = True

    def __init__(self, other: str = "") -> None:
        hostile = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _json(self, body: object, status: int = 200, headers: dict[str, str] | None = None) -> None:
                data = orjson.dumps(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                parts = urlsplit(self.path)
                mode = parts.path.strip("/").split("/")[0]
                page = int(parse_qs(parts.query).get("page", ["0"])[0])
                hostile.hits[mode] = hostile.hits.get(mode, 0) + 1
                base = f"http://127.0.0.1:{hostile.server_address[1]}/{mode}/prices"
                if mode == "offorigin":
                    self._json({"prices": _bars(0, 2), "next_page_url": f"{other}/prices?page=1"})
                elif mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", f"{other}/prices")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif mode == "retryafter":
                    self._json({"error": "Too Many Requests", "message": "slow down"}, 429, {"Retry-After": "86400"})
                elif mode == "empty":
                    self._json({"prices": [], "next_page_url": f"{base}?page={page + 1}"})
                elif mode == "loop":
                    self._json({"prices": _bars(page, 1), "next_page_url": f"{base}?page=1"})
                elif mode == "runaway":
                    self._json({"prices": _bars(page, 1), "next_page_url": f"{base}?page={page + 1}"})
                elif mode == "duplicates":  # page 1 repeats the last two bars of page 0 (an off-by-two cursor)
                    bars = _bars(0, 5) if page == 0 else _bars(3, 5)
                    nxt = {"next_page_url": f"{base}?page=1"} if page == 0 else {}
                    self._json({"prices": bars, **nxt})
                elif mode == "trickle":
                    data = orjson.dumps({"prices": _bars(0, 50)})
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    try:
                        for i in range(0, len(data), 8):
                            self.wfile.write(data[i : i + 8])
                            self.wfile.flush()
                            time.sleep(0.25)
                    except OSError:
                        return
                elif mode == "trickleheaders":  # a header line every 0.25 s: each read is quick, the headers never end
                    self.send_response(200)
                    try:
                        for i in range(120):
                            self.send_header(f"X-Slow-{i}", "x")
                            self.flush_headers()
                            time.sleep(0.25)
                    except OSError:
                        return
                elif mode == "stall":
                    time.sleep(30)
                elif mode == "bomb":  # 200 MB of zeros, ~200 kB on the wire
                    data = hostile.bomb()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    try:
                        self.wfile.write(data)
                    except OSError:
                        return
                else:
                    self._json({"error": "Not Found", "message": "no such mode"}, 404)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.hits: dict[str, int] = {}
        self._bomb: bytes | None = None
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def bomb(self) -> bytes:
        if self._bomb is None:
            self._bomb = gzip.compress(b'{"prices": [' + b" " * (200 * 2**20) + b"]}", compresslevel=9)
        return self._bomb

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{mode}"


@pytest.fixture(scope="module")
def capture():
    srv = Capture()
    yield srv
    srv.shutdown()


@pytest.fixture(scope="module")
def hostile(capture):
    srv = Hostile(other=capture.url)
    yield srv
    srv.shutdown()


def _client(url: str, **kw) -> fdkit.Client:
    kw.setdefault("cache", False)
    kw.setdefault("timeout", 2)
    kw.setdefault("deadline", 6)
    kw.setdefault("retry", fdkit.client.cache.make_retry(total=2, backoff_factor=0.05))
    return fdkit.Client(CANARY, url, progress=False, **kw)


PRICES = {"ticker": "AAA", "interval": "day", "start_date": "2024-01-01", "end_date": "2024-12-31"}


def _timed(fn):
    t = time.monotonic()
    try:
        fn()
    except FdkitError as exc:
        return exc, time.monotonic() - t
    raise AssertionError("no error raised")


# -- the key and the clock ----------------------------------------------------------------------------------
def test_off_origin_next_page_is_refused_and_the_key_never_leaves(hostile, capture):
    before = len(capture.seen)
    exc, took = _timed(lambda: _client(hostile.url("offorigin")).fetch("prices", PRICES))
    assert isinstance(exc, PaginationError) and "origin" in exc.message and took < 6
    assert len(capture.seen) == before  # nothing was sent there at all
    assert CANARY not in str(exc) and CANARY not in repr(exc)


def test_cross_origin_redirect_is_followed_without_the_key(hostile, capture):
    before = len(capture.seen)
    body = _client(hostile.url("redirect")).fetch("prices", PRICES)
    assert len(body["prices"]) == 3
    sent = capture.seen[before:]
    assert sent and all(k.lower() not in ("x-api-key", "authorization") for h in sent for k in h)
    assert all(CANARY not in str(v) for h in sent for v in h.values())


def test_a_huge_retry_after_raises_at_once_with_its_value(hostile):
    exc, took = _timed(lambda: _client(hostile.url("retryafter")).fetch("prices", PRICES))
    assert isinstance(exc, RateLimitError) and exc.retry_after == 86400 and took < 2
    assert pickle.loads(pickle.dumps(exc)).retry_after == 86400  # errors pickle with their attributes


@pytest.mark.parametrize("mode", ["empty", "loop"])
def test_pagination_always_ends(hostile, mode):
    exc, took = _timed(lambda: _client(hostile.url(mode)).fetch("prices", PRICES))
    assert isinstance(exc, PaginationError) and isinstance(exc, TransportError), exc
    assert took < 6 and hostile.hits[mode] <= 6  # one restart at most, then the error


def test_a_runaway_walk_stops_at_its_limit(hostile):
    body = _client(hostile.url("runaway")).fetch("prices", {**PRICES, "limit": 50})
    assert len(body["prices"]) == 50 and hostile.hits["runaway"] == 50  # every page holds a record: <= limit pages


def test_records_repeated_across_pages_are_dropped_with_a_warning(hostile):
    with pytest.warns(UserWarning, match="repeated 2 record"):
        body = _client(hostile.url("duplicates")).fetch("prices", PRICES)
    times = [b["time"] for b in body["prices"]]
    assert len(times) == len(set(times)) == 8


@pytest.mark.parametrize("mode", ["trickle", "trickleheaders", "stall"])
def test_a_trickling_or_stalled_service_fails_at_the_deadline(hostile, mode):
    exc, took = _timed(lambda: _client(hostile.url(mode), timeout=1.5, deadline=4).fetch("prices", PRICES))
    assert isinstance(exc, TransportError) and took < 4 + 2.5, (exc, took)


def test_a_gzip_bomb_fails_clearly_within_the_cap(hostile):
    code = (
        "import resource, fdkit\n"
        f"c = fdkit.Client('k', {hostile.url('bomb')!r}, cache=False, max_response_bytes=8 * 2**20, timeout=20)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "q = {'ticker': 'A', 'interval': 'day', 'start_date': '2024-01-01', 'end_date': '2024-01-31'}\n"
        "try:\n    c.fetch('prices', q)\n"
        "except fdkit.TransportError as e:\n    print('ERR', e.message[:60])\n"
        "print('GROWTH_MB', (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)\n"
    )
    hostile.bomb()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "ERR the response body is larger than the cap" in r.stdout, r.stdout + r.stderr
    growth = float(r.stdout.split("GROWTH_MB")[1])
    assert growth < 64, growth  # 200 MB decompressed never held: the cap plus one chunk


def test_no_network_with_a_key_fails_within_the_deadline_in_one_line():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    c = fdkit.Client(CANARY, f"http://127.0.0.1:{port}", cache=False, timeout=1, deadline=3)
    exc, took = _timed(lambda: c.fetch("company_facts", {"ticker": "AAPL"}))
    assert took < 3 + 1.5 and "\n" not in str(exc) and f"127.0.0.1:{port}" in exc.message
    public = fdkit.Client(CANARY, cache=False)  # a key and no base URL: the public service
    msg = public._unreachable(requests.ConnectionError("Name or service not known"))
    assert "https://api.financialdatasets.ai" in msg and "API key is set" in msg and "FINANCIAL_DATASETS_API_KEY" in msg


def test_keys_with_whitespace_are_stripped_and_never_shown(test_server, tmp_path):
    key = test_server.api_key
    ok = fdkit.Client(f"  {key}\n", test_server.base_url, cache=False).fetch("company_facts", {"ticker": "AAA"})
    assert ok["company_facts"]["ticker"] == "AAA"
    env = {
        **os.environ,
        "FINANCIAL_DATASETS_API_KEY": CANARY + "\n",
        "FDKIT_BASE_URL": test_server.base_url,
        "FDKIT_CACHE_DIR": str(tmp_path),
    }
    r = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", "get", "company_facts", "AAA"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert r.returncode == 1 and "Invalid API key" in r.stderr
    assert CANARY not in r.stderr + r.stdout
    for bad in (CANARY, CANARY + "\n", " " + CANARY):
        with pytest.raises(FdkitError) as info:
            fdkit.Client(bad, test_server.base_url, cache=False).fetch("company_facts", {"ticker": "AAA"})
        assert CANARY not in str(info.value) + repr(info.value)


# -- caches -------------------------------------------------------------------------------------------------
def test_processes_sharing_one_cache_dir_lose_no_rows(tmp_path, ref_client):
    code = (
        "import fdkit\n"
        "t = fdkit.available('balance_sheets')[:10]\n"
        "p = fdkit.prices(t, start_date='2023-01-02', end_date='2024-06-28')\n"
        "s = fdkit.income_statements(t, period='quarterly', limit=8)\n"
        "f = fdkit.company_facts(t)\n"
        "print(len(t), len(p), len(s), len(f))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL")}
    env["FDKIT_CACHE_DIR"] = str(tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    counts = {o[0].strip() for o in outs}
    assert len(counts) == 1, counts  # every process got every row
    n, prices, statements, facts = map(int, counts.pop().split())
    tickers = fdkit.available("balance_sheets", client=ref_client)[:10]
    expected = (
        len(ref_client.prices(tickers, start_date="2023-01-02", end_date="2024-06-28")),
        len(ref_client.income_statements(tickers, period="quarterly", limit=8)),
    )
    assert n == 10 and facts == 10 and (prices, statements) == expected


@pytest.mark.parametrize("tickers", ["AAA", ["AAA", "BBB"]], ids=["one ticker", "a list (bulk, batch read)"])
def test_a_corrupted_cache_entry_is_dropped_and_refetched(make_client, tmp_path, tickers):
    c = make_client()
    good = c.prices(tickers, start_date="2024-01-01", end_date="2024-06-30")
    bulk.wait_for_writes()  # (a list's parts are kept in the background)
    root = cache_root(str(tmp_path / "cache"))
    [fetch_db] = root.glob("*.fetch.sqlite")
    with sqlite3.connect(fetch_db) as db:  # flip one byte in every stored body
        for key, body in db.execute(f"select key, body from {FetchCache.TABLE}").fetchall():
            flipped = bytearray(body)
            flipped[len(flipped) // 2] ^= 0x55
            db.execute(f"update {FetchCache.TABLE} set body = ? where key = ?", (bytes(flipped), key))
    with pytest.raises(CacheError):
        make_client(offline=True).prices(tickers, start_date="2024-01-01", end_date="2024-06-30")
    if isinstance(tickers, list):  # the offline read dropped every reference it checked: kept once more
        make_client().prices(tickers, start_date="2024-01-01", end_date="2024-06-30")
        bulk.wait_for_writes()
    with sqlite3.connect(fetch_db) as db:  # corrupt again (the offline read dropped what it checked)
        for key, body in db.execute(f"select key, body from {FetchCache.TABLE}").fetchall():
            db.execute(f"update {FetchCache.TABLE} set body = ? where key = ?", (body[:-1] + b"?", key))
    with pytest.warns(UserWarning, match="failed (its|their) checksum"):
        again = make_client().prices(tickers, start_date="2024-01-01", end_date="2024-06-30")
    pd.testing.assert_frame_equal(again, good)  # never 3.35e79: the entry was fetched again


def test_an_unreadable_cache_file_is_set_aside(make_client, test_server, tmp_path):
    where = str(tmp_path / "cache")
    code = f"import fdkit; fdkit.Client({test_server.api_key!r}, {test_server.base_url!r}, cache_dir={where!r})"
    code += ".company_facts('AAA')"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)  # written and closed by another process
    root = cache_root(str(tmp_path / "cache"))
    for db in root.glob("*.sqlite"):
        db.write_bytes(b"this is not a database" * 100)
        for extra in root.glob(db.name + "-*"):
            extra.unlink()
    with pytest.warns(UserWarning, match="unreadable"):
        df = make_client().company_facts("AAA")
    assert df.index.tolist() == ["AAA"] and list(root.glob("*.corrupt-*"))


def test_a_cache_file_another_process_holds_is_not_set_aside(tmp_path):
    """Processes share a cache folder: a database locked by a long write (or checkpointed) is busy, not broken.

    Setting it aside (and unlinking its -wal/-shm) broke every other process's open database ('file is not a
    database', 'malformed' in the doctests of a parallel run).
    """
    path = tmp_path / "ns.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("pragma journal_mode=wal")
    holder.execute("pragma locking_mode=exclusive")  # others wait (then 'database is locked') until it closes
    holder.execute("create table t (x)")
    holder.execute("insert into t values (1)")
    release = threading.Timer(6.0, holder.close)  # longer than sqlite3's default 5 s wait
    release.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _check_sqlite(path)
    finally:
        release.join()
    assert path.exists() and not list(tmp_path.glob("*.corrupt-*"))


def test_the_cache_folder_is_fdkits_own(tmp_path, make_client):
    (tmp_path / "notes.sqlite").write_text("mine")
    os.chmod(tmp_path, 0o755)
    make_client(cache_dir=str(tmp_path)).company_facts("AAA")
    assert (tmp_path / "fdkit" / ".fdkit-cache").exists() and (tmp_path / "fdkit").stat().st_mode & 0o777 == 0o700
    assert tmp_path.stat().st_mode & 0o777 == 0o755  # the given folder's mode is left alone
    rows = fdkit.client.cache.cache_info(tmp_path)
    assert rows and all(r["fetches"] >= 1 and r["bytes"] > 0 for r in rows)  # the fetch cache is visible
    assert clear_cache(tmp_path) > 0 and (tmp_path / "notes.sqlite").read_text() == "mine"
    other = tmp_path / "x"
    (other / "fdkit").mkdir(parents=True)
    (other / "fdkit" / "thesis.tex").write_text("not a cache")
    with pytest.raises(CacheError, match="not an fdkit cache"):
        make_client(cache_dir=str(other)).company_facts("AAA")


def test_stale_answers_say_so_and_the_cache_is_bounded(make_client, tmp_path):
    make_client().prices("BBB", start_date="2024-01-01", end_date="2024-03-31")
    [fetch_db] = cache_root(str(tmp_path / "cache")).glob("*.fetch.sqlite")
    with sqlite3.connect(fetch_db) as db:
        db.execute(f"update {FetchCache.TABLE} set expires = ?", (time.time() - 7200,))
    with pytest.warns(StaleDataWarning, match=r"expired 2\.0 h ago"):
        make_client(offline=True).prices("BBB", start_date="2024-01-01", end_date="2024-03-31")
    session = make_session(str(tmp_path / "bound"), "ns", max_cache_bytes=None)
    for i in range(300):
        session.cache.responses[f"k{i}"] = _fake_response(i)
    session.close()
    session.cache.close()
    path = cache_root(str(tmp_path / "bound")) / "ns.sqlite"
    big = path.stat().st_size
    trimmed = make_session(str(tmp_path / "bound"), "ns", max_cache_bytes=big // 4)
    kept = len(trimmed.cache.responses)
    trimmed.close()
    trimmed.cache.close()
    with sqlite3.connect(path) as db:  # the database's own size, its write-ahead log checkpointed
        db.execute("pragma wal_checkpoint(TRUNCATE)")
        size = db.execute("pragma page_count").fetchone()[0] * db.execute("pragma page_size").fetchone()[0]
    assert size <= big // 4 and 0 < kept < 300
    assert "k299" in make_session(str(tmp_path / "bound"), "ns").cache.responses  # the newest answers stay


def _fake_response(i: int):
    from requests_cache import CachedResponse

    r = CachedResponse(status_code=200, content=os.urandom(2000), url=f"http://fds/x?i={i}")
    return r


def test_numpy_and_pandas_scalars_are_accepted_values(ref_client):
    df = ref_client.prices(
        "AAPL", start_date=np.datetime64("2022-01-03"), end_date=pd.Timestamp("2022-01-31"), limit=np.int64(5)
    )
    assert len(df) == 5
    fin = ref_client.income_statements(np.str_("AAPL"), period="annual", limit=np.int32(2))
    assert len(fin) == 2


# -- the server ---------------------------------------------------------------------------------------------
def test_keys_files_parse_as_documented(tmp_path):
    from fdkit.server.auth import KeysFileError, load_keys

    f = tmp_path / "keys.txt"
    f.write_bytes(
        "\ufeffmy#strong#secret-key-1 free # the partner\r\n# a comment\r\n\r\nanother-long-key-0002\r\n".encode()
    )
    keys = load_keys(f)
    assert keys.plans == {"my#strong#secret-key-1": "free", "another-long-key-0002": "pro"}
    for text, line in (
        ("good-long-key-000001\nshort\n", 2),
        ("k-long-enough-0000001 gold\n", 1),
        ("a-long-key-000000001 free extra\n", 1),
    ):
        f.write_text(text)
        with pytest.raises(KeysFileError, match=f"line {line}"):
            load_keys(f)
    f.write_text("tiny\n")
    assert load_keys(f, allow_short=True).plans == {"tiny": "pro"}
    r = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", "serve", "--port", "0", "--keys", str(f)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "line 1" in r.stderr and "tiny" not in r.stderr  # the key itself is never shown


def test_post_bodies_over_the_cap_are_413(ref_server):
    big = b'{"tickers": ["' + b"A" * (2 * 2**20) + b'"], "line_items": ["revenue"]}'
    r = requests.post(
        ref_server.base_url + "/financials/search/line-items",
        data=big,
        headers={"X-API-KEY": ref_server.api_key, "Content-Type": "application/json"},
        timeout=30,
    )
    assert r.status_code == 413 and r.json()["error"] == "Payload Too Large"


def test_the_memo_is_bounded_by_bytes(test_lake):
    from fdkit.server.memo import AnswerMemo

    memo = AnswerMemo(budget=1000)
    for i in range(100):
        memo.get_or_make(i, lambda i=i: "x" * i, len)
    assert memo.bytes <= 1000 and len(memo) < 100
    assert memo.get_or_make("huge", lambda: "y" * 5000, len) and "huge" not in memo._items
    with fdkit.server.start(test_lake) as srv:
        memo = srv.app.state.memo
        memo.budget = 100_000
        for day in range(1, 29):
            requests.get(
                srv.base_url + "/prices",
                params={**PRICES, "start_date": f"2024-02-{day:02d}"},
                headers={"X-API-KEY": srv.api_key},
                timeout=30,
            )
        assert 0 < memo.bytes <= 100_000
        a = requests.get(srv.base_url + "/prices", params={**PRICES, "limit": 3}, headers={"X-API-KEY": srv.api_key})
        n = len(memo)
        b = requests.get(srv.base_url + "/prices", params={**PRICES, "limit": 7}, headers={"X-API-KEY": srv.api_key})
        assert len(memo) == n and len(a.json()["prices"]) == 3 and len(b.json()["prices"]) == 7  # limit: same entry


@pytest.mark.parametrize("value", ["99999999999", "-99999999999", "9" * 18, "2147483648", "100001"])
def test_overflowing_integers_are_400(ref_server, value):
    for name, params in (("interval_multiplier", PRICES_REF), ("limit", {"ticker": "AAPL", "period": "annual"})):
        path = "/prices" if name == "interval_multiplier" else "/financials/income-statements"
        r = requests.get(
            ref_server.base_url + path,
            params={**params, name: value},
            headers={"X-API-KEY": ref_server.api_key},
            timeout=30,
        )
        assert r.status_code in (200, 400), (name, value, r.status_code)
        if name == "interval_multiplier" or abs(int(value)) > 2**31 - 1:
            assert r.status_code == 400 and set(r.json()) == {"error", "message"}


PRICES_REF = {"ticker": "AAPL", "interval": "minute", "start_date": "2024-01-02", "end_date": "2024-01-03"}


def test_next_page_url_uses_the_public_url_not_the_host_header(test_lake):
    with fdkit.server.start(test_lake, public_url="https://data.example.org") as srv:
        r = requests.get(
            srv.base_url + "/prices",
            params=PRICES,
            headers={"X-API-KEY": srv.api_key, "Host": "evil.example.com"},
            timeout=30,
        )
    assert r.json()["next_page_url"].startswith("https://data.example.org/prices?cursor=")


def test_a_shared_cursor_secret_lets_servers_accept_each_others_cursors(test_lake, monkeypatch):
    monkeypatch.setenv("FDKIT_CURSOR_SECRET", "s" * 40)
    with (
        fdkit.server.start(test_lake, keys=["a-key-long-enough-01"]) as one,
        fdkit.server.start(test_lake, keys=["a-key-long-enough-01"]) as two,
    ):
        h = {"X-API-KEY": "a-key-long-enough-01"}
        first = requests.get(one.base_url + "/prices", params=PRICES, headers=h, timeout=30).json()
        cursor = first["next_page_url"].split("cursor=")[1]
        r = requests.get(two.base_url + "/prices", params={"cursor": cursor}, headers=h, timeout=30)
    assert r.status_code == 200 and r.json()["prices"][0]["time"] != first["prices"][0]["time"]


def test_every_public_error_is_an_fdkit_error_or_a_documented_value_error(ref_client):
    for call in (
        lambda: ref_client.prices("AAPL", start_date="2024-02-30", end_date="2024-03-01"),
        lambda: ref_client.prices("NOPE", start_date="2024-01-02", end_date="2024-01-03"),
        lambda: ref_client.company_facts(),
        lambda: ref_client.prices([], start_date="2024-01-02", end_date="2024-01-03"),
        lambda: fdkit.available("nope"),
    ):
        with pytest.raises(FdkitError):
            call()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError):
            fdkit.client.config.normalise_key("two words")


def test_every_integer_parameter_refuses_huge_values(ref_server):
    from fdkit.catalog.endpoints import CATALOG

    checked = 0
    for ep in CATALOG.values():
        ints = [p for p in ep.params if p.type == "integer"]
        if not ints or not ep.examples:
            continue
        for p in ints:
            for huge in ("99999999999", "-99999999999", str(2**63)):
                example = {**ep.examples[0], p.name: huge}
                if ep.method == "POST":
                    example[p.name] = int(huge)
                    r = requests.post(
                        ref_server.base_url + ep.path,
                        json=example,
                        headers={"X-API-KEY": ref_server.api_key},
                        timeout=30,
                    )
                else:
                    r = requests.get(
                        ref_server.base_url + ep.path,
                        params=example,
                        headers={"X-API-KEY": ref_server.api_key},
                        timeout=30,
                    )
                if p.name == "limit" and p.max is not None and not huge.startswith("-"):
                    assert r.status_code == 200, (ep.path, p.name, huge)  # clamped to the endpoint's maximum
                else:
                    assert r.status_code == 400 and set(r.json()) == {"error", "message"}, (ep.path, p.name, huge)
                checked += 1
    assert checked >= 80


# -- webhooks -----------------------------------------------------------------------------------------------
def test_headers_trickled_through_a_proxy_end_at_the_deadline_too(hostile):
    """The watchdog watches the connections of requests' proxy managers as well (``HTTP(S)_PROXY``)."""
    from fdkit.wire import transport

    s = requests.Session()
    s.trust_env = False
    s.mount("http://", transport.DeadlineAdapter(max_retries=0))
    origin = hostile.url("trickleheaders").split("/trickleheaders")[0]
    t = time.monotonic()
    with pytest.raises(transport.DeadlineExceeded), transport.deadline(1.0):  # the test server acts as the proxy
        s.get("http://example.invalid/trickleheaders/prices", proxies={"http": origin}, timeout=10)
    assert time.monotonic() - t < 2.5


@pytest.mark.parametrize("part", ["body", "headers"])
def test_a_trickling_receiver_is_a_failed_attempt_at_the_deadline_and_retried(part):
    from fdkit.webhooks import Destination, deliver, make_event

    calls: list[float] = []

    class Trickle(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            calls.append(time.monotonic())
            if len(calls) > 1:  # the retry is answered at once
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
                return
            self.send_response(200)
            try:
                for i in range(40 if part == "headers" else 0):  # a header line every 0.5 s for 20 s
                    self.send_header(f"X-Slow-{i}", "x")
                    self.flush_headers()
                    time.sleep(0.5)
            except OSError:
                return
            self.send_header("Content-Length", "40")
            self.end_headers()
            try:
                for _ in range(40):  # 40 bytes over 20 s: each read is quick, the whole answer is not
                    self.wfile.write(b".")
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                return

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    rates = [{"bank": "FED", "date": "2024-09-18", "name": "x", "rate": 4.875}]
    event = make_event("interest_rates", {"bank": "FED", "interest_rates": rates}, livemode=False)
    t = time.monotonic()
    report = deliver(
        [event],
        [Destination(f"http://127.0.0.1:{srv.server_address[1]}/hook", "s")],
        attempt_deadline=1.5,
        base_delay=0.05,
    )
    took = time.monotonic() - t
    srv.shutdown()
    assert report.acked == [event["id"]] and report.attempts[event["id"]] == 2
    assert calls[1] - calls[0] < 3 and took < 5, (calls, took)


def test_a_signed_event_whose_ticker_is_a_path_is_400_and_writes_nothing(tmp_path):
    from fdkit.webhooks import create_receiver, make_event, sign

    lake = tmp_path / "lake"
    receiver = fdkit.server.serve_app(create_receiver(lake, "secret"))
    for ticker in ("../../x", "a/b", "..", "x\x00y"):
        payload = {
            "ticker": ticker,
            "accession_number": "0001",
            "filing_date": "2024-01-02",
            "form_type": "4",
            "insider_trades": [{"name": "N", "transaction_shares": 1.0}],
        }
        body = orjson.dumps(make_event("insider_trades", payload, livemode=False))
        r = requests.post(
            receiver.base_url + "/hook",
            data=body,
            timeout=30,
            headers={"X-FDS-Signature": sign("secret", body), "Content-Type": "application/json"},
        )
        assert r.status_code == 400 and set(r.json()) == {"error", "message"}, (ticker, r.status_code, r.text)
    receiver.stop()
    assert not (tmp_path / "x").exists() and not list(tmp_path.rglob("*.parquet"))


def test_envelopes_carry_the_destinations_pinned_api_version_and_bodies_are_capped(tmp_path):
    from fdkit.webhooks import Destination, create_receiver, deliver, make_event, sign

    seen: list[dict] = []

    class Keep(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            seen.append(orjson.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Keep)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    rates = [{"bank": "FED", "date": "2024-09-18", "name": "x", "rate": 4.875}]
    event = make_event("interest_rates", {"bank": "FED", "interest_rates": rates}, livemode=False)
    url = f"http://127.0.0.1:{srv.server_address[1]}/hook"
    deliver([event], [Destination(url, "s", api_version="2025-06-01"), Destination(url, "s")])
    srv.shutdown()
    assert sorted(e["api_version"] for e in seen) == ["2025-06-01", event["api_version"]]

    receiver = fdkit.server.serve_app(create_receiver(tmp_path / "lake", "secret", max_body_bytes=2**20))
    try:
        unsigned = requests.post(receiver.base_url + "/hook", data=b"{}", timeout=30)
        assert unsigned.status_code == 401  # refused on its header, before its body is read

        def stream():  # 64 MiB, never buffered by the receiver: refused once 1 MiB has arrived
            for _ in range(64):
                yield b" " * 2**20

        try:
            big = requests.post(
                receiver.base_url + "/hook",
                data=stream(),
                timeout=60,
                headers={"X-FDS-Signature": sign("secret", b"{}")},
            )
            assert big.status_code == 413
        except requests.ConnectionError:
            pass  # the receiver answered 413 and closed while the client was still sending
        declared = requests.post(
            receiver.base_url + "/hook",
            data=b" " * (2 * 2**20),
            timeout=30,
            headers={"X-FDS-Signature": sign("secret", b"{}")},
        )
        assert declared.status_code == 413 and declared.json()["error"] == "Payload Too Large"
    finally:
        receiver.stop()
    assert not list((tmp_path / "lake").rglob("*.parquet"))


def test_fdkit_serve_sees_what_the_receiver_lands_without_a_restart(tmp_path, test_lake):
    import shutil

    from fdkit.webhooks import Destination, create_receiver, deliver, make_event

    lake = tmp_path / "lake"
    shutil.copytree(test_lake, lake)
    receiver = fdkit.server.serve_app(create_receiver(lake, "secret"))
    with fdkit.server.start(lake, keys=["serve-key-0123456789"]) as srv:
        h = {"X-API-KEY": "serve-key-0123456789"}
        q = {"ticker": "NEWCO", "period": "quarterly"}
        assert requests.get(srv.base_url + "/financials/balance-sheets", params=q, headers=h).status_code == 404
        payload = {
            "ticker": "NEWCO",
            "accession_number": "0000000001-24-000001",
            "filing_date": "2024-02-01",
            "form_type": "10-Q",
            "balance_sheets": [{"report_period": "2023-12-31", "period": "quarterly", "total_assets": 123.0}],
        }
        event = make_event("balance_sheets", payload, livemode=False)
        report = deliver([event], [Destination(receiver.base_url + "/hook", "secret")])
        acked = time.monotonic()
        assert report.acked == [event["id"]]
        r = requests.get(srv.base_url + "/financials/balance-sheets", params=q, headers=h)
        assert r.status_code == 200 and time.monotonic() - acked < 1.0
        assert r.json()["balance_sheets"][0]["total_assets"] == 123.0
    receiver.stop()


def test_a_poison_event_lands_nothing_answers_400_and_is_dead_lettered(tmp_path):
    from fdkit.webhooks import Destination, create_receiver, deliver, make_event

    lake = tmp_path / "lake"
    receiver = fdkit.server.serve_app(create_receiver(lake, "secret"))
    good = {"report_period": "2023-12-31", "period": "quarterly", "total_assets": 1.0}
    bad = {"report_period": "2023-09-30", "period": "quarterly", "total_assets": "lots"}
    payload = {
        "ticker": "POIS",
        "accession_number": "0000000001-24-000009",
        "filing_date": "2024-02-01",
        "form_type": "10-Q",
        "balance_sheets": [good, bad],
    }
    event = make_event("balance_sheets", payload, livemode=False)
    t = time.monotonic()
    report = deliver([event], [Destination(receiver.base_url + "/hook", "secret")], base_delay=0.05)
    receiver.stop()
    assert report.failed and report.attempts[event["id"]] == 1 and time.monotonic() - t < 5  # 400: not retried
    assert "refused: HTTP 400" in report.failed[event["id"]]
    assert not list(lake.rglob("*.parquet"))  # not even the good record
    dead = [orjson.loads(line) for line in (lake / "_webhooks" / "dead-letter.jsonl").read_bytes().splitlines()]
    assert (
        [d["id"] for d in dead] == [event["id"]] and "total_assets" in dead[0]["reason"] or "lots" in dead[0]["reason"]
    )


def test_a_fetch_cache_file_that_stops_being_a_database_midway_is_set_aside(tmp_path):
    """The file is overwritten while the client has it open: the next read is a miss, never a raw sqlite3 error."""
    fc = FetchCache(tmp_path / "ns.fetch.sqlite")
    fc.put("k", b'{"x": 1}', ttl=60)
    assert fc.get("k") == b'{"x": 1}'
    fc._local.db.close()
    fc._local.db = None
    for extra in tmp_path.glob("ns.fetch.sqlite-*"):
        extra.unlink()
    (tmp_path / "ns.fetch.sqlite").write_bytes(b"this is not a database" * 300)
    with pytest.warns(UserWarning, match="moved aside"):
        assert fc.get("k") is None
    fc.put("k", b'{"x": 2}', ttl=60)  # a fresh file
    assert fc.get("k") == b'{"x": 2}' and list(tmp_path.glob("*.corrupt-*"))
    fc._local.db.close()
    fc._local.db = None
    for extra in tmp_path.glob("ns.fetch.sqlite-*"):
        extra.unlink()
    (tmp_path / "ns.fetch.sqlite").write_bytes(b"this is not a database" * 300)
    with pytest.raises(fdkit.errors.CacheError, match="offline"), pytest.warns(UserWarning, match="moved aside"):
        fc.entry("k", offline=True)
