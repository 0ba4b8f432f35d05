"""Reliability IV, items 4 to 6: deadlines on a hung service, a base URL that is another web server, a lake validate
that never crashes, cursors that expire, 500 bodies without backtraces.

Real loopback sockets (a thread accepting and never answering, trickling, resetting; a plain ``http.server``); the
elapsed bounds are generous but meaningful (the deadline + 0.5 s). Figures: RELIABILITY.md, section 13.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from lakes import write_test_lake

import fdkit
import fdkit.server
from fdkit.client.cache import make_retry
from fdkit.errors import FdkitError, InvalidCursorError, NotFoundError, ServerError, TransportError
from fdkit.lake.io import read_dataset, write_dataset
from fdkit.lake.validate import validate
from fdkit.server.cursors import CursorSigner

KEY = "sk-deadline-test-key-0123456789"
#: what an fdkit message never carries: urllib3 / requests class names and their wrapped texts, HTML
FOREIGN = (
    "Max retries",
    "urllib3",
    "HTTPConnectionPool",
    "ReadTimeoutError",
    "ProtocolError",
    "MaxRetryError",
    "ConnectionResetError",
    "RemoteDisconnected",
    "IncompleteRead",
    "Caused by",
    "<html",
    "<!DOCTYPE",
    "<body",
    "Traceback",
    KEY,
)


class _Server:
    """A loopback socket server whose every connection is handled by ``behave(conn)`` in a thread of its own."""

    def __init__(self, behave: Callable[[socket.socket], None]) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.behave = behave
        self.conns: list[socket.socket] = []
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            self.behave(conn)
        except OSError:
            pass

    def close(self) -> None:
        self.stop = True
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass
        self.sock.close()


def _silent(conn: socket.socket) -> None:
    """Accepts, reads the request, never answers (the connection is held open)."""
    conn.recv(65536)


def _trickle_headers(conn: socket.socket) -> None:
    """A status line and headers a byte every 0.1 s, never finished: each socket read well inside its timeout."""
    conn.recv(65536)
    for b in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 100_000:
        conn.send(bytes([b]))
        time.sleep(0.1)


def _trickle_body(conn: socket.socket) -> None:
    """Headers at once, then a body of a byte every 0.1 s that never completes."""
    conn.recv(65536)
    conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    while True:
        conn.send(b" ")
        time.sleep(0.1)


def _reset(conn: socket.socket) -> None:
    """Reads the request, then resets the connection (RST: SO_LINGER 0)."""
    conn.recv(65536)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def _timed(fn: Callable[[], Any]) -> tuple[BaseException | None, float]:
    t = time.monotonic()
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test looks at what was raised
        return exc, time.monotonic() - t
    return None, time.monotonic() - t


def _prices(client: fdkit.Client) -> Callable[[], Any]:
    # a dataset function: the client first asks the service whether it is fdkit's (a probe), then fetches
    return lambda: client.prices("AAPL", start_date="2024-01-02", end_date="2024-01-31")


def _assert_fdkit_words(exc: BaseException | None) -> None:
    assert isinstance(exc, FdkitError), repr(exc)
    text = f"{exc} {exc!r}"
    assert not [w for w in FOREIGN if w.lower() in text.lower()], text
    assert "\n" not in str(exc)


@pytest.mark.parametrize(
    "behave",
    [_silent, _trickle_headers, _trickle_body, _reset],
    ids=["never-answers", "trickles-headers", "trickles-body", "resets"],
)
@pytest.mark.parametrize(("timeout", "deadline"), [(1.0, 2.0), (3.0, 5.0)])
def test_a_dataset_call_ends_within_its_deadline_whatever_the_server_does(tmp_path, behave, timeout, deadline):
    server = _Server(behave)
    try:
        client = fdkit.Client(
            base_url=server.url,
            api_key=KEY,
            cache_dir=str(tmp_path),
            timeout=timeout,
            deadline=deadline,
            progress=False,
        )
        exc, took = _timed(_prices(client))
    finally:
        server.close()
    print(f"{behave.__name__}: timeout {timeout} s, deadline {deadline} s: ended after {took:.2f} s: {exc}")
    assert isinstance(exc, TransportError), repr(exc)
    _assert_fdkit_words(exc)
    assert took <= deadline + 0.5, (took, exc)
    if behave is _reset:
        assert "reset by the server" in exc.message
    else:  # it waited for the service (not a quick give-up), and says how long the call could wait
        assert took >= deadline - 0.5 and f"deadline of {deadline:g} s" in exc.message, (took, exc)
        assert "reset" not in exc.message, exc  # (the socket fdkit shut at the deadline is not the server's reset)


def test_the_default_deadline_is_ten_timeouts_for_the_whole_call(tmp_path):
    """``timeout=1`` alone: the documented deadline, 10 s, holds for the probe and the request together."""
    server = _Server(_silent)
    try:
        client = fdkit.Client(base_url=server.url, api_key=KEY, cache_dir=str(tmp_path), timeout=1, progress=False)
        assert client.settings.call_deadline == 10
        exc, took = _timed(_prices(client))
    finally:
        server.close()
    print(f"never answers, timeout 1 s (deadline 10 s): ended after {took:.2f} s")
    _assert_fdkit_words(exc)
    assert 9.5 <= took <= 10.5 and "deadline of 10 s" in str(exc), (took, exc)


@pytest.mark.slow
def test_timeout_3_alone_ends_within_its_30_s_deadline(tmp_path):
    """Issue 44's case as written: a socket that accepts and never answers, ``timeout=3`` and nothing else (30 s)."""
    server = _Server(_silent)
    try:
        client = fdkit.Client(base_url=server.url, api_key=KEY, cache_dir=str(tmp_path), timeout=3, progress=False)
        assert client.settings.call_deadline == 30
        exc, took = _timed(_prices(client))
    finally:
        server.close()
    print(f"never answers, timeout 3 s (deadline 30 s): ended after {took:.2f} s: {exc}")
    _assert_fdkit_words(exc)
    assert took <= 30.5 and "deadline of 30 s" in str(exc) and "reset" not in str(exc), (took, exc)


def test_a_ticker_list_on_a_hung_service_ends_within_one_deadline(tmp_path):
    server = _Server(_silent)
    try:
        client = fdkit.Client(
            base_url=server.url, api_key=KEY, cache_dir=str(tmp_path), timeout=1, deadline=2, progress=False
        )
        t = time.monotonic()
        df = client.prices(
            ["AAPL", "MSFT", "NVDA", "AMZN", "META"], start_date="2024-01-02", end_date="2024-01-31", errors="ignore"
        )
        took = time.monotonic() - t
    finally:
        server.close()
    print(f"never answers, 5 tickers, deadline 2 s: ended after {took:.2f} s")
    assert took <= 2.5 and df.empty and sorted(df.attrs["missing"]) == ["AAPL", "AMZN", "META", "MSFT", "NVDA"]
    assert all("deadline" in why for why in df.attrs["missing"].values())


def test_spent_retries_on_timeouts_are_said_in_fdkits_words(tmp_path):
    server = _Server(_silent)
    try:
        client = fdkit.Client(
            base_url=server.url,
            api_key=KEY,
            cache=False,
            timeout=0.3,
            deadline=30,
            retry=make_retry(total=1, backoff_factor=0),
        )
        exc, took = _timed(lambda: client.fetch("company_facts", {"ticker": "AAPL"}))
    finally:
        server.close()
    _assert_fdkit_words(exc)
    assert "every attempt the retry policy allows" in str(exc) and took < 5, (took, exc)


def test_a_reset_on_every_attempt_says_so(tmp_path):
    server = _Server(_reset)
    try:
        client = fdkit.Client(
            base_url=server.url,
            api_key=KEY,
            cache=False,
            timeout=1,
            deadline=30,
            retry=make_retry(total=2, backoff_factor=0),
        )
        exc, took = _timed(lambda: client.fetch("company_facts", {"ticker": "AAPL"}))
    finally:
        server.close()
    _assert_fdkit_words(exc)
    assert "the connection was reset by the server" in str(exc) and "could not reach" not in str(exc), exc
    assert took < 5


class _Html(http.server.BaseHTTPRequestHandler):
    status = 404

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        page = (
            f"<!DOCTYPE html><html><head><title>Error</title></head><body><h1>{self.status}</h1>"
            + "<p>nothing here</p>" * 50
            + "</body></html>"
        ).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: Any) -> None:
        pass


class _Html502(_Html):
    status = 502


@pytest.mark.parametrize(("handler", "kind"), [(_Html, NotFoundError), (_Html502, ServerError)], ids=["404", "502"])
def test_a_base_url_that_is_another_web_server_is_named_not_its_page(tmp_path, handler, kind):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        client = fdkit.Client(
            base_url=f"http://127.0.0.1:{httpd.server_address[1]}",
            api_key=KEY,
            cache_dir=str(tmp_path),
            timeout=2,
            retry=make_retry(total=1, backoff_factor=0),
            progress=False,
        )
        exc, took = _timed(_prices(client))
    finally:
        httpd.shutdown()
        httpd.server_close()
    print(f"HTML {handler.status}: {exc}")
    assert isinstance(exc, kind) and exc.status == handler.status, repr(exc)
    _assert_fdkit_words(exc)
    assert f"HTTP {handler.status}" in exc.message and "HTML page" in exc.message
    assert "does not look like a Financial Data Service" in exc.message or "proxy or gateway" in exc.message
    assert "nothing here" not in str(exc) and took < 5


# -- fdkit lake validate never crashes: annual-only, empty, truncated and bit-flipped datasets -------------------------
def _annual_only(root: Path) -> str:
    """Income statements of 10-Ks only (the webhook receiver's lake after a few annual filings)."""
    inc = read_dataset(root, "income_statements")
    annual = inc[inc["fiscal_period"].astype(str) == "Q4"].assign(period="annual", fiscal_period="FY")
    shutil.rmtree(root / "income_statements")
    write_dataset(root, "income_statements", annual.reset_index(drop=True))
    return ""


def _empty(root: Path) -> str:
    inc = read_dataset(root, "income_statements")
    shutil.rmtree(root / "income_statements")
    write_dataset(root, "income_statements", inc.head(0))
    return ""


def _data_file(root: Path, dataset: str) -> Path:
    [f] = (root / dataset).glob("*.parquet")
    return f


def _truncated(root: Path) -> str:
    f = _data_file(root, "income_statements")
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    return f.name


def _flipped(root: Path) -> str:
    f = _data_file(root, "income_statements")
    data = bytearray(f.read_bytes())
    middle = len(data) // 2
    for i in range(middle, middle + 64):
        data[i] ^= 0xFF
    f.write_bytes(bytes(data))
    return f.name


@pytest.mark.parametrize(
    "damage", [_annual_only, _empty, _truncated, _flipped], ids=["annual-only", "empty", "truncated", "bit-flipped"]
)
def test_lake_validate_never_crashes_and_names_what_it_cannot_read(tmp_path, damage):
    root = write_test_lake(tmp_path / "lake")
    named = damage(root)
    out = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", "lake", "validate", str(root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    text = out.stdout + out.stderr
    print(f"{damage.__name__}: rc {out.returncode}: {text.splitlines()[-1]}")
    assert out.returncode in (0, 1) and "Traceback" not in text, text
    if named:  # the damaged file is a finding: named, with why, and the run fails
        assert out.returncode == 1 and named in out.stdout and "cannot be read" in out.stdout, text
        assert "ERR" in out.stdout
    else:  # a lake of another shape is a sound lake: every invariant that applies holds
        assert out.returncode == 0, text


def test_an_unreadable_dataset_is_a_result_not_an_exception(tmp_path):
    root = write_test_lake(tmp_path / "lake")
    name = _truncated(root)
    results = {r.name: r for r in validate(root)}
    broken = [r for r in results.values() if r.error]
    assert broken and all(name in (r.error or "") and not r.ok for r in broken)
    assert results["volumes_are_counts"].ok  # the rest of the lake is still checked


# -- cursors expire: a signed cursor whose issue time is not a time (NaN) or far in the future is refused -------------
SECRET = b"s" * 32


def _resigned(cursor: str, **changes: Any) -> str:
    """The cursor with its payload changed, signed again with the server's secret (a forger holding it)."""
    body, _ = cursor.split(".", 1)
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload.update(changes)
    raw = json.dumps(payload, sort_keys=True).encode()
    sig = CursorSigner(SECRET)._sign(raw)
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()  # noqa: E731
    return f"{b64(raw)}.{b64(sig)}"


@pytest.mark.parametrize(
    "t",
    ["nan", "NaN", "inf", "-inf", time.time() + 10 * 365 * 86400, 1e300],
    ids=["nan", "NaN", "inf", "-inf", "ten-years-ahead", "1e300"],
)
def test_a_cursor_issued_at_no_time_or_in_the_future_is_refused(t):
    signer = CursorSigner(SECRET)
    cursor = _resigned(signer.issue("prices", {"ticker": "AAA"}, 10), t=t)
    with pytest.raises(InvalidCursorError, match="issue time"):
        signer.open(cursor, "prices")
    assert signer.open(_resigned(cursor, t=time.time() + 60), "prices")["offset"] == 10  # a little clock skew is fine


def test_the_service_answers_a_never_expiring_cursor_with_a_400(test_lake):
    with fdkit.server.start(test_lake, cursor_secret=SECRET) as srv:
        headers = {"X-API-KEY": srv.api_key}
        first = requests.get(
            srv.base_url + "/prices",
            params={"ticker": "AAA", "interval": "day", "start_date": "2024-01-02", "end_date": "2024-12-31"},
            headers=headers,
            timeout=30,
        ).json()
        url = first["next_page_url"]
        cursor = parse_qs(urlsplit(url).query)["cursor"][0]
        ok = requests.get(url, headers=headers, timeout=30)
        forged = requests.get(
            srv.base_url + "/prices", params={"cursor": _resigned(cursor, t="nan")}, headers=headers, timeout=30
        )
    assert ok.status_code == 200, ok.text
    assert forged.status_code == 400 and set(forged.json()) == {"error", "message"}, forged.text
    assert forged.json()["error"] == "Invalid cursor" and "issue time" in forged.json()["message"]


# -- a 500 for a dataset the service cannot read says so, and never carries delta-rs's backtrace --------------------
_SERVE_BROKEN_LOG = """
import json, sys, requests
from pathlib import Path
sys.path.insert(0, {tests!r})
from lakes import write_test_lake
import fdkit.server
root = write_test_lake(Path({root!r}))
log = root / "prices" / "_delta_log" / "00000000000000000000.json"
log.write_text(log.read_text()[:-40] + "garbage{{")
q = {{"interval": "day", "start_date": "2024-01-02", "end_date": "2024-02-01"}}
with fdkit.server.start(root) as srv:
    h = {{"X-API-KEY": srv.api_key}}
    one = requests.get(srv.base_url + "/prices", params={{**q, "ticker": "AAA"}}, headers=h, timeout=30)
    bulk = requests.post(srv.base_url + "/bulk/prices", params=q, json={{"tickers": ["AAA", "BBB"]}}, headers=h,
                         timeout=30)
    answers = [[one.status_code, one.text]]
    if bulk.status_code == 200:  # a bundle: each ticker's entry says why it has no part
        from fdkit.frames.bundle import read_bundle
        answers += [[e.status, json.dumps({{"error": e.error, "message": e.message}})]
                    for e in read_bundle(bulk.content)]
    else:
        answers.append([bulk.status_code, bulk.text])
    print(json.dumps(answers))
"""


def test_a_500_for_an_unreadable_delta_log_names_the_dataset_without_a_backtrace(tmp_path):
    script = _SERVE_BROKEN_LOG.format(tests=str(Path(__file__).parent), root=str(tmp_path / "lake"))
    env = {**os.environ, "RUST_BACKTRACE": "full"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    for status, text in json.loads(out.stdout.strip().splitlines()[-1]):
        body = json.loads(text)
        assert status == 500 and set(body) == {"error", "message"}, text
        assert body["error"] == "Dataset unreadable" and "'prices'" in body["message"], text
        assert "\n" not in body["message"] and "backtrace" not in text.lower(), text
        assert not re.search(r"\b\d+: (<unknown>|[a-z_]+::)", text) and "start_thread" not in text, text
