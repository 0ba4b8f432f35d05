#!/usr/bin/env python3
"""Landings under stress: a receiver killed while events arrive, cursor walkers while events land.

Usage::

    python benchmarks/landings.py kill [--events 300] [--kills 10]
    python benchmarks/landings.py walkers [--walkers 10] [--seconds 60]
    python benchmarks/landings.py diskfull --fs MOUNT [--events 100]    # MOUNT: a small filesystem of its own

``diskfull``: the receiver's lake lies on ``--fs`` (e.g. ``mount -t tmpfs -o size=3m tmpfs /tmp/tinyfs``), a filler
file takes all but 64 KB of it, and ``--events`` events are delivered once each: the landings that find the disk
full must answer JSON 507 and be recorded as not landed. Then the filler is removed and every event is delivered
again: each lands exactly once (no id twice, no duplicated record).

``kill``: ``fdkit webhooks listen`` runs in its own process over a copy of the bundled lake; the sender
(:func:`fdkit.webhooks.deliver`, retrying with backoff) delivers ``--events`` real events of the bundled lake
(statements, earnings, segments, rates, inflation, labour, yield curve, insider filings) from a thread while the
receiver is killed with SIGKILL ``--kills`` times at random moments and started again. Then: every event acked,
every event id landed exactly once, every landed dataset without a duplicated record key, and ``fdkit lake
validate`` clean.

``walkers``: ``fdkit serve`` (its own process) over a copy of the bundled lake while the receiver (another process)
lands rate, yield-curve, inflation, labour and statement events into it; ``--walkers`` threads walk ``/prices``
cursors (100-bar pages of one ticker over 2015-2024) again and again. Each walk must return exactly the lake's bars
of that ticker and range: no page repeated, none missing. Prints the pages walked, duplicates and missing rows.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serving import free_port as _free_port  # noqa: E402  (landing_scale.py imports it from here)

from fdkit.lake import LakeReader, default_data_dir  # noqa: E402
from fdkit.lake.io import RECORD_KEYS  # noqa: E402
from fdkit.lake.validate import validate  # noqa: E402
from fdkit.webhooks import Destination, Landing, deliver, events_from_lake  # noqa: E402

SECRET = "whsec_landings_benchmark_0123456789"
KEY = "landings-benchmark-key-0123456789"


def _wait(url: str, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1, headers={"X-API-KEY": KEY})
            return
        except requests.ConnectionError:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args} exited with {proc.returncode}") from None
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer")


def _listener(lake: Path, port: int) -> subprocess.Popen:
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
            str(lake),
        ],
        stderr=subprocess.DEVNULL,
    )
    _wait(f"http://127.0.0.1:{port}/healthz", proc)
    return proc


def _events(n: int) -> list[dict]:
    data = default_data_dir()
    events = events_from_lake(data, since="2023-07-01", until="2024-06-30")
    events += events_from_lake(
        data, since="2020-01-01", datasets=["insider_trades", "insider_ownership", "interest_rates", "filing_items"]
    )
    events = list({e["id"]: e for e in events}.values())  # the two windows share some rate events
    random.Random(5).shuffle(events)
    return events[:n]


def _copy_lake(tmp: Path) -> Path:
    lake = tmp / "lake"
    shutil.copytree(default_data_dir(), lake)
    return lake


def kill(n_events: int, kills: int, seed: int) -> dict:
    """Deliver events while the receiver is killed and restarted; check exactly-once and a valid lake."""
    rng = random.Random(seed)
    events = _events(n_events)
    with tempfile.TemporaryDirectory() as tmp:
        lake, port = _copy_lake(Path(tmp)), _free_port()
        url = f"http://127.0.0.1:{port}/hook"
        proc = _listener(lake, port)
        report_box: dict = {}

        def send() -> None:
            report_box["r"] = deliver(
                events, [Destination(url, SECRET)], base_delay=0.05, max_delay=1.0, max_attempts=200, workers=4
            )

        sender = threading.Thread(target=send)
        t0 = time.monotonic()
        sender.start()
        killed = 0
        while killed < kills and sender.is_alive():
            time.sleep(rng.uniform(0.1, 0.6))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            killed += 1
            proc = _listener(lake, port)
        sender.join()
        elapsed = time.monotonic() - t0
        proc.terminate()
        proc.wait(30)
        report = report_box["r"]
        landing = Landing(lake)
        landed = landing.landed_ids()
        landing.close()
        reader = LakeReader(lake)
        dupes = {}
        for name, key in RECORD_KEYS.items():
            if name in reader.names():
                df = reader.read(name)
                dupes[name] = int(df.duplicated([k for k in key if k in df.columns]).sum())
        results = validate(lake)
        failed = {r.name: r.violations for r in results if not r.ok}
    ids = [e["id"] for e in events]
    return {
        "events": len(events),
        "kills": killed,
        "seconds": round(elapsed, 1),
        "acked": len(report.acked),
        "failed": len(report.failed),
        "attempts": sum(report.attempts.values()),
        "landed": len(landed),
        "landed_twice": len(landed) - len(set(landed)),
        "not_landed": len(set(ids) - set(landed)),
        "duplicated_records": sum(dupes.values()),
        "validate_failed": failed,
    }


def walkers(n_walkers: int, seconds: float, seed: int) -> dict:
    """Walk /prices cursors from threads while events land; count pages, duplicates and missing bars."""
    events = [
        e
        for e in _events(10_000)
        if e["type"].split(".")[0]
        in ("interest_rates", "yield_curve", "inflation", "labor", "income_statements", "balance_sheets")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        lake = _copy_lake(Path(tmp))
        keys = Path(tmp) / "keys"
        keys.write_text(f"{KEY} pro\n")
        sport, rport = _free_port(), _free_port()
        serve = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fdkit.cli",
                "serve",
                "--data",
                str(lake),
                "--port",
                str(sport),
                "--keys",
                str(keys),
            ],
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{sport}"
        _wait(base + "/healthz", serve)
        listen = _listener(lake, rport)
        prices = LakeReader(lake).read("prices")
        tickers = ["AAPL", "MSFT", "NVDA", "JPM", "KO", "XOM", "IBM", "WMT", "PEP", "INTC"]
        expected = {}
        for t in tickers:
            rows = prices[(prices["ticker"].astype(str) == t) & prices["time"].between("2015-01-01", "2024-12-31")]
            expected[t] = sorted(rows["time"].dt.strftime("%Y-%m-%d"))
        stop = time.monotonic() + seconds
        counts = {"pages": 0, "walks": 0, "duplicates": 0, "missing": 0, "extra": 0, "errors": 0}
        lock = threading.Lock()

        def walk(i: int) -> None:
            rng = random.Random(seed + i)
            s = requests.Session()
            s.headers["X-API-KEY"] = KEY
            while time.monotonic() < stop:
                t = rng.choice(tickers)
                params = {
                    "ticker": t,
                    "interval": "day",
                    "interval_multiplier": 1,
                    "start_date": "2015-01-01",
                    "end_date": "2024-12-31",
                    "limit": 5000,
                }
                url, got, pages = base + "/prices", [], 0
                while url:
                    r = s.get(url, params=params, timeout=60)
                    if r.status_code != 200:
                        with lock:
                            counts["errors"] += 1
                        break
                    body = r.json()
                    got += [b["time"][:10] for b in body["prices"]]
                    pages += 1
                    url, params = body.get("next_page_url"), None
                want = expected[t]
                with lock:
                    counts["pages"] += pages
                    counts["walks"] += 1
                    counts["duplicates"] += len(got) - len(set(got))
                    counts["missing"] += len(set(want) - set(got))
                    counts["extra"] += len(set(got) - set(want))

        threads = [threading.Thread(target=walk, args=(i,)) for i in range(n_walkers)]
        for th in threads:
            th.start()
        report = deliver(events, [Destination(f"http://127.0.0.1:{rport}/hook", SECRET)], base_delay=0.05, workers=2)
        for th in threads:
            th.join()
        listen.terminate()
        serve.terminate()
        listen.wait(30)
        serve.wait(30)
    return {
        "walkers": n_walkers,
        "seconds": seconds,
        "events_landed": len(report.acked),
        "events_failed": len(report.failed),
        **counts,
    }


def diskfull(fs: Path, n_events: int) -> dict:
    """Land events on a full filesystem, then again with room: 507s first, then every event exactly once."""
    events = _events(n_events)
    lake = fs / "lake"
    shutil.rmtree(lake, ignore_errors=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/hook"
    proc = _listener(lake, port)
    filler = fs / "filler"
    try:
        free = shutil.disk_usage(fs).free
        with open(filler, "wb") as f:
            f.write(b"\0" * max(0, free - 64 * 1024))
        statuses: dict[int, int] = {}
        bodies_json = True
        for e in events:  # once each, no retry: what a full disk answers
            r = requests.post(url, data=json.dumps(e).encode(), headers={"X-FDS-Signature": _sign(e)}, timeout=60)
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            if r.status_code >= 500:
                bodies_json &= r.headers.get("content-type", "").startswith("application/json") and set(r.json()) == {
                    "error",
                    "message",
                }
        landing = Landing(lake)
        landed_full = len(landing.landed_ids())
        landing.close()
        filler.unlink()
        report = deliver(events, [Destination(url, SECRET)], base_delay=0.05, max_attempts=5, workers=2)
    finally:
        filler.unlink(missing_ok=True)
        proc.terminate()
        proc.wait(30)
    landing = Landing(lake)
    landed = landing.landed_ids()
    landing.close()
    reader = LakeReader(lake)
    dupes = 0
    for name, key in RECORD_KEYS.items():
        if name in reader.names():
            df = reader.read(name)
            dupes += int(df.duplicated([k for k in key if k in df.columns]).sum())
    shutil.rmtree(lake, ignore_errors=True)
    return {
        "events": len(events),
        "first_pass_statuses": statuses,
        "error_bodies_json": bodies_json,
        "landed_while_full": landed_full,
        "second_pass_acked": len(report.acked),
        "second_pass_failed": len(report.failed),
        "landed": len(landed),
        "landed_twice": len(landed) - len(set(landed)),
        "not_landed": len({e["id"] for e in events} - set(landed)),
        "duplicated_records": dupes,
    }


def _sign(event: dict) -> str:
    from fdkit.webhooks import sign

    return sign(SECRET, json.dumps(event).encode())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    k = sub.add_parser("kill")
    k.add_argument("--events", type=int, default=300)
    k.add_argument("--kills", type=int, default=10)
    k.add_argument("--seed", type=int, default=11)
    w = sub.add_parser("walkers")
    w.add_argument("--walkers", type=int, default=10)
    w.add_argument("--seconds", type=float, default=60.0)
    w.add_argument("--seed", type=int, default=3)
    d = sub.add_parser("diskfull")
    d.add_argument("--fs", required=True, type=Path)
    d.add_argument("--events", type=int, default=100)
    args = ap.parse_args(argv)
    if args.what == "diskfull":
        print(json.dumps(diskfull(args.fs, args.events)))
        return 0
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    out = (
        kill(args.events, args.kills, args.seed)
        if args.what == "kill"
        else walkers(args.walkers, args.seconds, args.seed)
    )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
