"""The webhook receiver under slow and large deliveries (issue 44 item 3) and spec-legal nulls (issue 43 item 6).

Trickling connections are closed (the server's header-read timeout, the receiver's body timeout) while normal
events land; a large event does not hold up a small one; a body over the cap is 413 in the ``{"error", "message"}``
shape; a release without a report period and a filing without a filing date land. The full figures (300
connections, a 20,000-record event) are ``python benchmarks/receiver_slow.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import orjson
import pytest
import requests

import fdkit.server
from fdkit.lake.io import read_dataset
from fdkit.lake.validate import validate
from fdkit.webhooks import create_receiver, make_event, sign

SECRET = "whsec_timeouts_0123456789"


def post(url: str, event: dict, timeout: float = 60) -> requests.Response:
    body = orjson.dumps(event)
    return requests.post(
        url,
        data=body,
        headers={"X-FDS-Signature": sign(SECRET, body), "Content-Type": "application/json"},
        timeout=timeout,
    )


def rate_event(i: int) -> dict:
    day = f"2031-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
    return make_event(
        "interest_rates",
        {"bank": "FED", "date": day, "interest_rates": [{"bank": "FED", "date": day, "name": "x", "rate": 4.0}]},
    )


def trades_event(n: int, ticker: str = "AAPL") -> dict:
    trades = [
        {
            "ticker": ticker,
            "name": "A Person",
            "title": "Director",
            "is_board_director": True,
            "transaction_date": "2024-01-02",
            "transaction_shares": float(i + 1),
            "transaction_price_per_share": 1.0,
            "transaction_value": float(i + 1),
            "shares_owned_before_transaction": 0.0,
            "shares_owned_after_transaction": float(i + 1),
            "security_title": "Common",
            "filing_date": "2024-01-03",
        }
        for i in range(n)
    ]
    return make_event(
        "insider_trades",
        {
            "ticker": ticker,
            "accession_number": f"0000000000-24-{n:06d}",
            "filing_date": "2024-01-03",
            "form_type": "4",
            "insider_trades": trades,
        },
    )


def closed_within(sock: socket.socket, limit: float) -> float | None:
    """Seconds until the server closed ``sock`` (its answer read and dropped), or ``None`` within ``limit``."""
    start = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - start < limit:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - start
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - start
    return None


def open_trickling(port: int, n: int, body: bool) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        if body:  # whole headers, then a body that never comes
            s.sendall(
                b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"X-FDS-Signature: t=" + str(int(time.time())).encode() + b",v1=00\r\n"
                b"Content-Length: 100000\r\n\r\n{"
            )
        else:
            s.sendall(b"POST /hook HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    return socks


def trickle(socks: list[socket.socket], stop: threading.Event, body: bool) -> None:
    while not stop.wait(0.5):
        for s in socks:
            try:
                s.send(b" " if body else b"X-Slow: 1\r\n")
            except OSError:
                pass


def test_trickling_connections_are_closed_while_events_land(tmp_path):
    app = create_receiver(tmp_path / "lake", SECRET, body_timeout=2.0)
    with fdkit.server.serve_app(app, header_timeout=2.0) as srv:
        port = int(srv.base_url.rsplit(":", 1)[1])
        heads = open_trickling(port, 100, body=False)
        bodies = open_trickling(port, 100, body=True)
        stop = threading.Event()
        feeders = [
            threading.Thread(target=trickle, args=(heads, stop, False)),
            threading.Thread(target=trickle, args=(bodies, stop, True)),
        ]
        for f in feeders:
            f.start()
        t0 = time.monotonic()
        codes = [post(srv.base_url + "/hook", rate_event(i), timeout=10).status_code for i in range(20)]
        served = time.monotonic() - t0
        waits = [closed_within(s, 8.0) for s in heads + bodies]
        stop.set()
        for f in feeders:
            f.join()
        for s in heads + bodies:
            s.close()
    assert codes == [200] * 20 and served < 8, (codes, served)
    still_open = sum(w is None for w in waits)
    assert still_open == 0, f"{still_open} of 200 trickling connections were still open"


def test_a_slow_body_is_answered_408_in_the_error_shape(tmp_path):
    app = create_receiver(tmp_path / "lake", SECRET, body_timeout=1.0)
    with fdkit.server.serve_app(app, header_timeout=5.0) as srv:
        port = int(srv.base_url.rsplit(":", 1)[1])
        (s,) = open_trickling(port, 1, body=True)
        s.settimeout(5)
        answer = s.recv(65536)
        s.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and b"connection: close" in head.lower()
    assert set(orjson.loads(body)) == {"error", "message"}


def test_a_body_over_the_cap_is_413_in_the_error_shape(tmp_path):
    app = create_receiver(tmp_path / "lake", SECRET, max_body_bytes=10_000)
    with fdkit.server.serve_app(app) as srv:
        answer = post(srv.base_url + "/hook", trades_event(200))
    assert answer.status_code == 413
    assert set(answer.json()) == {"error", "message"} and "10,000" in answer.json()["message"]


def test_a_large_event_does_not_hold_up_a_small_one(tmp_path):
    big = trades_event(20_000)  # 6.4 MB: one file of one insider filing
    app = create_receiver(tmp_path / "lake", SECRET, max_body_bytes=32 * 2**20)
    with fdkit.server.serve_app(app) as srv:
        url = srv.base_url + "/hook"
        done: dict[str, float] = {}

        def send_big() -> None:
            t = time.monotonic()
            assert post(url, big).status_code == 200
            done["big"] = time.monotonic() - t

        sender = threading.Thread(target=send_big)
        sender.start()
        time.sleep(0.2)  # the big one is being read, parsed or landed
        waits = []
        for small in (rate_event(1), trades_event(1, ticker="MSFT")):  # another dataset, then the same one
            t = time.monotonic()
            assert post(url, small).status_code == 200
            waits.append(time.monotonic() - t)
        sender.join()
    assert max(waits) < 5.0, f"small events took {waits} s beside a 20,000-record one ({done['big']:.2f} s)"
    assert len(read_dataset(tmp_path / "lake", "insider_trades")) == 20_001


def test_an_event_of_too_many_files_is_413_and_dead_lettered(tmp_path):
    records = [{"report_period": f"{1900 + i}-12-31", "period": "annual", "revenue": 1.0} for i in range(30)]
    event = make_event(
        "income_statements",
        {
            "ticker": "AAPL",
            "accession_number": "x",
            "filing_date": "2024-01-02",
            "form_type": "10-K",
            "income_statements": records,
        },
    )
    app = create_receiver(tmp_path / "lake", SECRET, max_event_files=20)
    with fdkit.server.serve_app(app) as srv:
        answer = post(srv.base_url + "/hook", event)
    assert answer.status_code == 413 and set(answer.json()) == {"error", "message"}
    assert "30 files" in answer.json()["message"]
    letters = (tmp_path / "lake" / "_webhooks" / "dead-letter.jsonl").read_text().splitlines()
    assert [orjson.loads(line)["id"] for line in letters] == [event["id"]]


def test_fdkit_webhooks_listen_closes_a_silent_connection(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "FDKIT_HEADER_TIMEOUT": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fdkit.cli",
            "webhooks",
            "listen",
            "--port",
            str(port),
            "--secret",
            SECRET,
            "--lake",
            str(tmp_path / "lake"),
        ],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "the listener did not start"
                time.sleep(0.1)
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /hook HTTP/1.1\r\n")
        waited = closed_within(s, 6.0)
        s.close()
    finally:
        proc.terminate()
        proc.wait(10)
    assert waited is not None and waited < 4, waited


# -- spec-legal nulls (issue 43 item 6) ---------------------------------------------------------------------------
def kpi_event(report_period: str | None, value: float, accession: str | None = "0000320193-24-000001") -> dict:
    return make_event(
        "forward_guidance",
        {
            "ticker": "AAPL",
            "accession_number": accession,
            "sector": "Tech",
            "report_period": report_period,
            "forward_guidance": [{"metric_name": "revenue", "value": value}],
        },
    )


def metadata_event(filing_date: str | None, accession: str | None) -> dict:
    return make_event(
        "filing_items.metadata",
        {
            "ticker": "AAPL",
            "cik": "0000320193",
            "filing_type": "8-K",
            "accession_number": accession,
            "filing_date": filing_date,
            "available_items": ["Item-2.02"],
            "url": "http://x/items",
        },
    )


@pytest.fixture()
def receiver(tmp_path):
    with fdkit.server.serve_app(create_receiver(tmp_path / "lake", SECRET)) as srv:
        srv.lake = tmp_path / "lake"
        yield srv


def test_a_release_without_a_report_period_lands(receiver):
    url = receiver.base_url + "/hook"
    one, two = kpi_event(None, 1.0, accession=None), kpi_event(None, 2.0, accession=None)
    answers = [post(url, e) for e in (one, two, one)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert [a.json()["status"] for a in answers] == ["landed", "landed", "duplicate"]
    df = read_dataset(receiver.lake, "kpi_guidance")
    assert sorted(df["value"].tolist()) == [1.0, 2.0]  # two releases without a period: neither replaced the other
    assert df["report_period"].isna().all()
    assert validate(receiver.lake, only=["landed_events_in_lake"])[0].ok


def test_filing_items_metadata_without_a_filing_date_lands(receiver):
    url = receiver.base_url + "/hook"
    events = [
        metadata_event(None, "0000320193-24-000009"),
        metadata_event(None, None),
        metadata_event("2024-11-01", "a"),
    ]
    assert [post(url, e).status_code for e in events] == [200, 200, 200]
    df = read_dataset(receiver.lake, "filing_metadata")
    assert len(df) == 3 and df["filing_date"].isna().sum() == 2
    assert validate(receiver.lake, only=["landed_events_in_lake"])[0].ok
    assert not (receiver.lake / "_webhooks" / "dead-letter.jsonl").exists()
