#!/usr/bin/env python3
"""fdkit benchmarks: every figure a ratio measured side by side in one run (medians; the machines are shared).

Usage::

    python benchmarks/run.py [--only decode,peer,panel,financials,server,memory,startup,bulk] [--repeat N]
                             [--markdown FILE]

Competitors are timed interleaved (A, B, A, B, ...) so machine noise hits both alike. Servers under load run in
their own processes (``fdkit serve``, and a bare uvicorn app answering the same bytes), and so does the load
generator (``benchmarks/aload.py``: aiohttp keep-alive connections on one event loop). Memory and start-up are
measured in fresh processes. The load average is printed with the results: compare runs at similar load.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import io
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pyarrow.dataset as pads

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serving import free_port  # noqa: E402  (beside this script)

import fdkit  # noqa: E402
from fdkit.frames.typed import ARROW_STREAM, frame_from_parts, part_from_bytes, to_frame  # noqa: E402
from fdkit.lake.io import default_data_dir  # noqa: E402

RESULTS: list[dict] = []
DATA = default_data_dir()
#: tickers with the full 2003-2026 daily history (the S&P 500 members outside them have 2015-2017 only)
MAIN = [
    "AAPL",
    "MSFT",
    "NVDA",
    "GOOGL",
    "AMZN",
    "META",
    "TSLA",
    "JPM",
    "V",
    "WMT",
    "KO",
    "PEP",
    "XOM",
    "IBM",
    "INTC",
    "ORCL",
    "HD",
    "COST",
    "LLY",
    "CVX",
    "JNJ",
    "PG",
    "MA",
    "UNH",
    "BAC",
    "NFLX",
    "AMD",
    "DIS",
    "AVGO",
    "GOOG",
]
KEY = "bench-key-0123456789abcdef"


def interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of each function, run in turn ``repeat`` times after one warm-up each."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def record(name: str, ratio: float, target: str, ok: bool, detail: str) -> None:
    RESULTS.append({"benchmark": name, "ratio": ratio, "target": target, "met": ok, "detail": detail})
    print(f"{name:60s} {ratio:9.2f}  target {target:8s} {'met' if ok else 'MISSED':6s}  {detail}", flush=True)


def _wait_up(url: str, seconds: float = 60) -> None:
    import requests

    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        try:
            if requests.get(url + "/healthz", timeout=2).status_code < 500:
                return
        except requests.RequestException:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


@contextmanager
def serve_process(*extra: str) -> Iterator[str]:
    """``fdkit serve`` in its own process on a free loopback port, with one known key; yields the base URL."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        keys = Path(tmp) / "keys"
        keys.write_text(f"{KEY} pro\n")
        cmd = [
            sys.executable,
            "-m",
            "fdkit.cli",
            "serve",
            "--port",
            str(port),
            "--keys",
            str(keys),
            "--log-level",
            "warning",
            *extra,
        ]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_up(url)
            yield url
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def bare_process(body: bytes) -> Iterator[str]:
    """A bare uvicorn ASGI callable answering ``body`` to every request (the floor), in its own process."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.json"
        page.write_bytes(body)
        code = (
            "import sys, uvicorn\n"
            f"body = open({str(page)!r}, 'rb').read()\n"
            "headers = [(b'content-type', b'application/json'), (b'content-length', str(len(body)).encode())]\n"
            "async def app(scope, receive, send):\n"
            "    if scope['type'] != 'http':\n"
            "        return\n"
            "    await send({'type': 'http.response.start', 'status': 200, 'headers': headers})\n"
            "    await send({'type': 'http.response.body', 'body': body})\n"
            f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='warning', access_log=False)\n"
        )
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            ends = time.monotonic() + 30
            while time.monotonic() < ends:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            yield url
        finally:
            proc.terminate()
            proc.wait(15)


def aload(url: str, *, queries: str = "fixed", seconds: float = 8, connections: int = 16) -> dict:
    """Run the load generator in its own process and return its JSON report."""
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "aload.py"),
            "--url",
            url,
            "--key",
            KEY,
            "--queries",
            queries,
            "--seconds",
            str(seconds),
            "--connections",
            str(connections),
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 120,
        check=True,
    )
    return json.loads(out.stdout)


def lake_rows(
    name: str, tickers: list[str], column: str | None = None, lo: object = None, hi: object = None
) -> pd.DataFrame:
    """The floor: the same rows read straight from the lake's Parquet with pyarrow."""
    expr = pads.field("ticker").isin(tickers)
    if column is not None:
        expr &= (pads.field(column) >= lo) & (pads.field(column) <= hi)
    return pads.dataset(DATA / name, format="parquet").to_table(filter=expr).to_pandas()


def _client(url: str, **kw: object) -> fdkit.Client:
    return fdkit.Client(KEY, url, progress=False, **kw)  # type: ignore[arg-type]


# -- 1. decode --------------------------------------------------------------------------------------------------
def _json_page(bars: pd.DataFrame) -> bytes:
    """A ``/prices`` page of ``bars`` as the service writes it (the public service's pages hold up to 5,000)."""
    recs = [
        {
            "open": o,
            "close": c,
            "high": h,
            "low": lo,
            "volume": v,
            "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "time_milliseconds": int(t.value // 1_000_000),
        }
        for o, c, h, lo, v, t in zip(
            bars["open"],
            bars["close"],
            bars["high"],
            bars["low"],
            bars["volume"].astype(object).where(bars["volume"].notna(), None),
            bars["time"],
            strict=True,
        )
    ]
    return orjson.dumps({"ticker": "MSFT", "prices": recs})


def bench_decode(repeat: int) -> None:
    import requests

    with serve_process() as url:  # 5,000 bars of MSFT as fdkit serve answers them, then the same bars as JSON
        q = {
            "ticker": "MSFT",
            "interval": "day",
            "interval_multiplier": 1,
            "start_date": "2003-01-01",
            "end_date": "2026-02-24",
            "limit": 5000,
        }
        h = {"X-API-KEY": KEY, "Accept": ARROW_STREAM}
        arrow = requests.get(url + "/prices", params=q, timeout=60, headers=h).content
    raw = _json_page(part_from_bytes(arrow)[0].to_pandas())
    params = {"ticker": "MSFT", "interval": "day", "interval_multiplier": 1}
    assert part_from_bytes(arrow)[1] == 5000

    t = interleaved(
        {
            "orjson": lambda: orjson.loads(raw),
            "json": lambda: to_frame("prices", [(params, orjson.loads(raw))]),
            "arrow": lambda: frame_from_parts("prices", [part_from_bytes(arrow)], params),
        },
        repeat,
    )
    r = t["json"] / t["orjson"]
    record(
        "decode: 5,000-bar JSON page -> typed frame / orjson.loads",
        r,
        "<= 1.5",
        r <= 1.5,
        f"fdkit {t['json'] * 1e3:.2f} ms, orjson {t['orjson'] * 1e3:.2f} ms ({len(raw) / 1e6:.2f} MB)",
    )
    r = t["arrow"] / t["orjson"]
    record(
        "decode: the same bars as an Arrow page (fdkit peers) / orjson.loads",
        r,
        "<= 1.5",
        r <= 1.5,
        f"fdkit {t['arrow'] * 1e3:.2f} ms ({len(arrow) / 1e6:.2f} MB Arrow IPC)",
    )


# -- 2. peer pipeline -------------------------------------------------------------------------------------------
def bench_peer(repeat: int) -> None:
    import json as stdjson

    import requests
    from pydantic import BaseModel

    class Price(BaseModel):
        open: float
        close: float
        high: float
        low: float
        volume: int
        time: str
        time_milliseconds: int | None = None

    class PricesResponse(BaseModel):  # how popular clients of this API model a page
        ticker: str | None = None
        prices: list[Price]
        next_page_url: str | None = None

    tickers = ["AAPL", "MSFT", "NVDA", "GOOGL", "AMZN", "META", "TSLA", "JPM", "V", "WMT"]
    q = {"interval": "day", "interval_multiplier": 1, "start_date": "2021-03-01", "end_date": "2026-02-24"}
    with serve_process() as url:
        session = requests.Session()
        session.headers["X-API-KEY"] = KEY

        def peer() -> object:
            frames = []
            for t in tickers:
                page = PricesResponse(
                    **stdjson.loads(session.get(url + "/prices", params={**q, "ticker": t}, timeout=60).text)
                )
                rows = list(page.prices)
                while page.next_page_url:
                    page = PricesResponse(**stdjson.loads(session.get(page.next_page_url, timeout=60).text))
                    rows.extend(page.prices)
                df = pd.DataFrame([r.model_dump() for r in rows])
                df["ticker"] = t
                frames.append(df)
            out = pd.concat(frames, ignore_index=True)
            out["time"] = pd.to_datetime(out["time"])
            return out.set_index(["ticker", "time"])

        client = _client(url, cache=False)
        t = interleaved({"peer": peer, "fdkit": lambda: client.prices(tickers, **q)}, max(3, repeat // 4))
        n = len(client.prices(tickers, **q))
    r = t["peer"] / t["fdkit"]
    record(
        "peer pipeline (json + pydantic + DataFrame) / fdkit, 10 tickers x 5y",
        r,
        ">= 10",
        r >= 10,
        f"peer {t['peer']:.3f} s, fdkit {t['fdkit']:.3f} s, {n:,} rows, both against fdkit serve, no cache",
    )


# -- 3. cold panel via the embedded service ---------------------------------------------------------------------
def bench_panel(repeat: int) -> None:
    tickers = MAIN[:20]
    lo, hi = "2021-03-01", "2026-02-24"
    floor_lo, floor_hi = pd.Timestamp(lo, tz="UTC"), pd.Timestamp(hi, tz="UTC") + pd.Timedelta(hours=23)
    colds: list[float] = []
    floors: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(max(3, repeat // 4)):
            client = fdkit.Client(cache_dir=str(Path(tmp) / f"c{i}"), progress=False)  # the embedded default
            client.request("GET", "/healthz")  # the service is up; the panel's requests are what is timed
            gc.collect()
            t = time.perf_counter()
            got = client.prices(tickers, start_date=lo, end_date=hi)
            colds.append(time.perf_counter() - t)
            client.close()
            t = time.perf_counter()
            floor = lake_rows("prices", tickers, "time", floor_lo, floor_hi)
            floors.append(time.perf_counter() - t)
    assert len(got) == len(floor), (len(got), len(floor))
    c, f = statistics.median(colds), statistics.median(floors)
    record(
        "cold 20 tickers x 5y panel, embedded service / pyarrow read of data/",
        c / f,
        "<= 5",
        c / f <= 5,
        f"fdkit {c:.3f} s, pyarrow {f * 1e3:.1f} ms, {len(got):,} rows",
    )


# -- 4. financials ----------------------------------------------------------------------------------------------
def bench_financials(repeat: int) -> None:
    tickers = fdkit.available("balance_sheets")[:15]
    names = ("income_statements", "balance_sheets", "cash_flow_statements")

    def floor() -> object:
        return [lake_rows(n, tickers) for n in names]

    colds, warms, floors = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(max(3, repeat // 4)):
            client = fdkit.Client(cache_dir=str(Path(tmp) / f"c{i}"), progress=False)
            client.request("GET", "/healthz")
            t = time.perf_counter()
            cold = fdkit.financials(tickers, period="quarterly", limit=None, client=client)
            colds.append(time.perf_counter() - t)
            t = time.perf_counter()
            warm = fdkit.financials(tickers, period="quarterly", limit=None, client=client)
            warms.append(time.perf_counter() - t)
            t = time.perf_counter()
            floor()
            floors.append(time.perf_counter() - t)
            client.close()
    assert cold.equals(warm)
    c, w, f = statistics.median(colds), statistics.median(warms), statistics.median(floors)
    record(
        "financials 15 tickers quarterly, warm / pyarrow read of 3 tables",
        w / f,
        "<= 1.5",
        w / f <= 1.5,
        f"warm {w * 1e3:.1f} ms, pyarrow {f * 1e3:.1f} ms, {len(warm):,} rows x {warm.shape[1]} columns",
    )
    record(
        "financials 15 tickers quarterly, cold / the same floor", c / f, "<= 10", c / f <= 10, f"cold {c * 1e3:.0f} ms"
    )


# -- 5, 6. server -----------------------------------------------------------------------------------------------
def bench_server(repeat: int, seconds: float = 8.0) -> None:
    import requests

    with serve_process() as url:
        page = requests.get(
            url + "/prices",
            headers={"X-API-KEY": KEY},
            timeout=30,
            params={
                "ticker": "AAPL",
                "interval": "day",
                "interval_multiplier": 1,
                "start_date": "2024-01-02",
                "end_date": "2024-12-31",
            },
        ).content
        with bare_process(page) as floor:
            runs: dict[str, list[dict]] = {"fdkit": [], "bare": []}
            for _ in range(2):  # interleaved
                runs["fdkit"].append(aload(url, seconds=seconds))
                runs["bare"].append(aload(floor, seconds=seconds))
        randoms = [aload(url, queries="random", seconds=seconds) for _ in range(2)]
    with serve_process("--workers", "2") as url2:
        aload(url2, queries="random", seconds=2)  # both workers have read the lake
        two = max((aload(url2, queries="random", seconds=seconds) for _ in range(2)), key=lambda r: r["rps"])
    ours = max(runs["fdkit"], key=lambda r: r["rps"])
    base = max(runs["bare"], key=lambda r: r["rps"])
    r = ours["rps"] / base["rps"]
    record(
        "server: fixed /prices page, fdkit serve / bare uvicorn",
        r,
        ">= 0.5",
        r >= 0.5,
        f"fdkit {ours['rps']:,.0f} req/s (p50 {ours['p50_ms']:.1f} ms, p99 {ours['p99_ms']:.1f} ms, "
        f"{ours['errors']} errors); bare {base['rps']:,.0f} req/s; 16 connections, separate processes",
    )
    rnd = max(randoms, key=lambda r: r["rps"])
    record(
        "server: distinct random /prices queries, req/s",
        rnd["rps"],
        ">= 1,500",
        rnd["rps"] >= 1500,
        f"{rnd['requests']:,} requests over {rnd['distinct']:,} distinct queries, p50 {rnd['p50_ms']:.1f} ms, "
        f"p99 {rnd['p99_ms']:.1f} ms, {rnd['errors']} errors",
    )
    r = two["rps"] / rnd["rps"]
    record(
        "server: random queries, fdkit serve --workers 2 / 1 worker",
        r,
        "(info)",
        True,
        f"{two['rps']:,.0f} req/s with 2 workers on {os.cpu_count()} cores, the load generator on the same machine",
    )


# -- 7. memory --------------------------------------------------------------------------------------------------
_RSS_CODE = """
import gc, json, os, sys
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
import fdkit
tickers = TICKERS
fdkit.prices("AAPL", start_date="2024-01-02", end_date="2024-01-31")  # the service and the imports are up
gc.collect()
before = rss()
df = fdkit.prices(tickers, start_date="2016-03-01", end_date="2026-02-24")
gc.collect()
print(json.dumps({"growth": rss() - before, "rows": len(df), "frame": int(df.memory_usage(deep=True).sum())}))
""".replace("TICKERS", repr(MAIN[:20]))


def bench_memory(repeat: int) -> None:
    results = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "FDKIT_CACHE_DIR": tmp}
            out = subprocess.run(
                [sys.executable, "-c", _RSS_CODE],
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
                check=True,
                cwd=ROOT,
            )
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    res = sorted(results, key=lambda r: r["growth"])[1]
    bound = res["rows"] * 6 * 8
    r = res["growth"] / bound
    record(
        "memory: process RSS growth, 20 tickers x 10y panel / rows x 6 x 8 B",
        r,
        "<= 8",
        r <= 8,
        f"RSS +{res['growth'] / 1e6:.1f} MB, frame.memory_usage {res['frame'] / 1e6:.1f} MB, "
        f"{res['rows']:,} rows, bound {bound / 1e6:.1f} MB (median of 3 fresh processes)",
    )


# -- 8. start-up ------------------------------------------------------------------------------------------------
_STARTUP_CODE = """
import time
t = time.perf_counter()
import fdkit
df = fdkit.prices("AAPL", start_date="2024-01-02", end_date="2024-03-28")
print(time.perf_counter() - t)
"""


def bench_startup(repeat: int) -> None:
    times = []
    for _ in range(max(5, repeat // 4)):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "FDKIT_CACHE_DIR": tmp}
            out = subprocess.run(
                [sys.executable, "-c", _STARTUP_CODE],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
                check=True,
                cwd=ROOT,
            )
            times.append(float(out.stdout.strip().splitlines()[-1]))
    m = statistics.median(times)
    record(
        "time to first frame in a new process, embedded default (s)",
        m,
        "<= 0.6",
        m <= 0.6,
        f"import fdkit + one 60-bar frame, empty cache; median of {len(times)}, min {min(times):.2f} s",
    )


# -- 9. bulk ----------------------------------------------------------------------------------------------------
def bench_bulk(repeat: int) -> None:
    tickers = MAIN
    q = {"start_date": "2021-03-01", "end_date": "2026-02-24"}
    with serve_process() as url:
        one, many = _client(url, cache=False, max_workers=1), _client(url, cache=False, max_workers=16)
        t = interleaved(
            {"1": lambda: one.prices(tickers, **q), "16": lambda: many.prices(tickers, **q)}, max(3, repeat // 4)
        )
    r = t["1"] / t["16"]
    record(
        "bulk: 30 tickers x 5y, 16 workers / 1 worker, no injected latency",
        r,
        ">= 1.5",
        r >= 1.5,
        f"1 worker {t['1']:.3f} s, 16 workers {t['16']:.3f} s ({min(16, max(2, os.cpu_count() or 2))} threads: a "
        f"loopback service gets at most max(2, cores)), fdkit serve in its own process",
    )


BENCHES = {
    "decode": bench_decode,
    "peer": bench_peer,
    "panel": bench_panel,
    "financials": bench_financials,
    "server": bench_server,
    "memory": bench_memory,
    "startup": bench_startup,
    "bulk": bench_bulk,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--markdown", help="write the table to this file")
    args = ap.parse_args(argv)
    wanted = [name.strip() for name in args.only.split(",")]
    unknown = [name for name in wanted if name not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark {', '.join(unknown)}; valid: {', '.join(BENCHES)}")
    missing = [m for m in ("aiohttp", "pydantic") if importlib.util.find_spec(m) is None]
    if missing:  # the load generator (aiohttp) and the peer pipeline (pydantic) are the bench extra's
        ap.error(f"{' and '.join(missing)} not installed: pip install -e '.[bench]'")
    os.environ.setdefault("FDKIT_CACHE_DIR", tempfile.mkdtemp(prefix="fdkit-bench-"))
    load = os.getloadavg()
    print(
        f"python {platform.python_version()}, pandas {pd.__version__}, numpy {np.__version__}, "
        f"{os.cpu_count()} cores; repeat={args.repeat}; load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}"
    )
    for name in wanted:
        BENCHES[name](args.repeat)
    end = os.getloadavg()
    print(f"load average at the end {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")
    if args.markdown:
        buf = io.StringIO()
        buf.write(f"load average {load[0]:.2f} at the start, {end[0]:.2f} at the end\n\n")
        buf.write("| benchmark | ratio | target | met | detail |\n|---|---:|---|---|---|\n")
        for r in RESULTS:
            buf.write(
                f"| {r['benchmark']} | {r['ratio']:.2f} | {r['target']} | {'yes' if r['met'] else 'no'} | "
                f"{r['detail']} |\n"
            )
        Path(args.markdown).write_text(buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
