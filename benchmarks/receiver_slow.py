#!/usr/bin/env python3
"""The webhook receiver under slow connections and a large event (issue 44 item 3), run as ``fdkit webhooks listen``.

Usage::

    python benchmarks/receiver_slow.py trickle [--connections 300] [--seconds 30] [--tree PATH]
    python benchmarks/receiver_slow.py big [--records 20000] [--tree PATH]

``trickle``: ``fdkit webhooks listen`` (its own process, default timeouts) while ``--connections`` connections
trickle, half a header line every 0.5 s, half whole headers then a body byte every 0.5 s, and a sender delivers a
small signed event every 0.2 s. Prints how many connections the receiver closed by 12, 15 and ``--seconds`` seconds,
and the events' answers and slowest latency.

``big``: one signed event of ``--records`` records, twice: a statement event (a file a record: refused 413 beyond
the receiver's files per event) and an insider filing (one file, 6.4 MB at 20,000 records: the listener runs with
``--max-body-bytes 64 MiB`` where it has the option); while each lands, small events of another dataset and of the
same one are delivered. Prints each answer and latency.

``--tree`` runs the listener from another checkout (its ``PYTHONPATH``), for the figures before a change.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson
import pandas as pd
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fdkit.webhooks import make_event, sign  # noqa: E402

SECRET = "whsec_receiver_slow_0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listener(tree: Path, lake: Path, port: int, extra: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [
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
        str(lake),
        *extra,
    ]
    proc = subprocess.Popen(cmd, env=env, cwd=tree, stderr=subprocess.DEVNULL)  # cwd: `-m` imports from it first
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the listener did not start")


def post(url: str, event: dict, timeout: float = 600) -> tuple[int, float]:
    body = orjson.dumps(event)
    t = time.monotonic()
    try:
        r = requests.post(url, data=body, headers={"X-FDS-Signature": sign(SECRET, body)}, timeout=timeout)
        return r.status_code, time.monotonic() - t
    except requests.RequestException:
        return -1, time.monotonic() - t


def rate_event(i: int) -> dict:
    day = f"{2031 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
    rec = {"bank": "FED", "date": day, "name": "x", "rate": 4.0}
    return make_event("interest_rates", {"bank": "FED", "date": day, "interest_rates": [rec]})


def statement_event(n: int, ticker: str = "AAPL") -> dict:
    days = pd.date_range("1900-01-31", periods=n, freq="ME").strftime("%Y-%m-%d")
    recs = [{"report_period": d, "period": "quarterly", "revenue": float(i)} for i, d in enumerate(days)]
    return make_event(
        "income_statements",
        {
            "ticker": ticker,
            "accession_number": f"0000000000-24-{n:06d}",
            "filing_date": "2024-05-01",
            "form_type": "10-Q",
            "income_statements": recs,
        },
    )


def trades_event(n: int, ticker: str = "AAPL") -> dict:
    trades = [
        {
            "ticker": ticker,
            "name": "A Person",
            "title": "Director",
            "transaction_date": "2024-01-02",
            "transaction_shares": float(i + 1),
            "transaction_price_per_share": 1.0,
            "filing_date": "2024-01-03",
            "security_title": "Common",
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


def _trickler(port: int, body: bool) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    if body:
        s.sendall(
            b"POST /hook HTTP/1.1\r\nHost: x\r\nX-FDS-Signature: t="
            + str(int(time.time())).encode()
            + b",v1=00\r\nContent-Length: 100000\r\n\r\n{"
        )
    else:
        s.sendall(b"POST /hook HTTP/1.1\r\nHost: x\r\n")
    s.setblocking(False)
    return s


def trickle(tree: Path, n: int, seconds: float) -> dict:
    lake, port = Path(tempfile.mkdtemp()) / "lake", free_port()
    proc = listener(tree, lake, port, [])
    url = f"http://127.0.0.1:{port}/hook"
    try:
        socks = [(_trickler(port, i % 2 == 1), i % 2 == 1) for i in range(n)]
        start = time.monotonic()
        closed: dict[int, float] = {}
        answers: list[tuple[int, float]] = []
        stop = threading.Event()

        def sender() -> None:
            i = 0
            while not stop.is_set():
                answers.append(post(url, rate_event(i), timeout=30))
                i += 1
                stop.wait(0.2)

        worker = threading.Thread(target=sender)
        worker.start()
        last_feed = 0.0
        while time.monotonic() - start < seconds and len(closed) < n:
            now = time.monotonic()
            for i, (s, body) in enumerate(socks):
                if i in closed:
                    continue
                try:
                    if s.recv(65536) == b"":
                        closed[i] = now - start
                        continue
                except BlockingIOError:
                    pass
                except OSError:
                    closed[i] = now - start
                    continue
                if now - last_feed >= 0.5:
                    try:
                        s.send(b" " if body else b"X-Slow: 1\r\n")
                    except OSError:
                        closed[i] = now - start
            if now - last_feed >= 0.5:
                last_feed = now
            time.sleep(0.05)
        stop.set()
        worker.join()
        for s, _ in socks:
            s.close()
    finally:
        proc.terminate()
        proc.wait(10)
    times = sorted(closed.values())
    return {
        "connections": n,
        "closed_by_12s": sum(t <= 12 for t in times),
        "closed_by_15s": sum(t <= 15 for t in times),
        f"closed_by_{seconds:g}s": len(times),
        "first_close_s": round(times[0], 2) if times else None,
        "last_close_s": round(times[-1], 2) if times else None,
        "events": len(answers),
        "events_200": sum(c == 200 for c, _ in answers),
        "slowest_event_s": round(max((t for _, t in answers), default=0), 3),
    }


def big(tree: Path, records: int) -> dict:
    lake, port = Path(tempfile.mkdtemp()) / "lake", free_port()
    helps = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", "webhooks", "listen", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
    ).stdout
    extra = ["--max-body-bytes", str(64 * 2**20)] if "--max-body-bytes" in helps else []
    proc = listener(tree, lake, port, extra)
    url = f"http://127.0.0.1:{port}/hook"
    out: dict = {}
    try:
        for name, event, same in (
            ("statements", statement_event(records), statement_event(1, "MSFT")),
            ("insider_trades", trades_event(records), trades_event(1, "MSFT")),
        ):
            done: dict = {}
            worker = threading.Thread(target=lambda e=event, d=done: d.update(big=post(url, e)))
            worker.start()
            time.sleep(0.3)
            other = post(url, rate_event(hash(name) % 300), timeout=180)
            mine = post(url, same, timeout=180)
            worker.join(600)
            out[name] = {
                "bytes": len(orjson.dumps(event)),
                "big": done.get("big"),
                "small_other_dataset": other,
                "small_same_dataset": mine,
            }
    finally:
        proc.terminate()
        proc.wait(10)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trickle")
    t.add_argument("--connections", type=int, default=300)
    t.add_argument("--seconds", type=float, default=30.0)
    t.add_argument("--tree", type=Path, default=ROOT)
    b = sub.add_parser("big")
    b.add_argument("--records", type=int, default=20_000)
    b.add_argument("--tree", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    if args.cmd == "trickle":
        print(trickle(args.tree, args.connections, args.seconds))
    else:
        print(big(args.tree, args.records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
