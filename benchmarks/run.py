#!/usr/bin/env python3
"""fdkit benchmarks: ratios measured side by side in one run (medians; the machines are shared and noisy).

Usage::

    python benchmarks/run.py [--only decode,cache,bulk,server,memory] [--repeat N] [--markdown BENCHMARKS.md]

Each benchmark times the competitors interleaved (A, B, A, B, ...) so that machine noise hits both alike, and
reports the ratio of the medians against its target.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import fdkit  # noqa: E402
import fdkit.server  # noqa: E402
from fdkit.frames import to_frame  # noqa: E402
from fdkit.lake import default_data_dir, read_dataset  # noqa: E402

RESULTS: list[dict] = []


def interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():  # warm-up
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
    print(f"{name:44s} {ratio:9.2f}  target {target:8s} {'met' if ok else 'MISSED':6s}  {detail}", flush=True)


# -- decode ----------------------------------------------------------------------------------------------------
def _price_page(n: int = 5000) -> bytes:
    p = read_dataset(default_data_dir(), "prices")
    p = p[p["ticker"] == "MSFT"].sort_values("time").tail(n)
    recs = [
        {"open": o, "close": c, "high": h, "low": lo, "volume": int(v), "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
         "time_milliseconds": int(t.value // 1_000_000)}
        for o, c, h, lo, v, t in zip(p["open"], p["close"], p["high"], p["low"], p["volume"], p["time"], strict=True)
    ]  # fmt: skip
    return orjson.dumps({"ticker": "MSFT", "prices": recs})


def bench_decode(repeat: int) -> None:
    from pydantic import BaseModel

    class PriceModel(BaseModel):  # how popular clients of this API decode a page
        open: float
        close: float
        high: float
        low: float
        volume: int
        time: str
        time_milliseconds: int | None = None

    raw = _price_page()
    params = {"ticker": "MSFT", "interval": "day"}

    def floor() -> object:
        return orjson.loads(raw)

    def ours() -> object:
        return to_frame("prices", [(params, orjson.loads(raw))])

    def peer() -> object:
        body = orjson.loads(raw)
        models = [PriceModel(**r) for r in body["prices"]]
        df = pd.DataFrame([m.model_dump() for m in models])
        df["time"] = pd.to_datetime(df["time"])
        return df.set_index("time")

    t = interleaved({"orjson": floor, "fdkit": ours, "peer": peer}, repeat)
    r1 = t["fdkit"] / t["orjson"]
    record("decode: 5,000-bar page -> typed frame / orjson.loads", r1, "<= 1.5", r1 <= 1.5,
           f"fdkit {t['fdkit'] * 1e3:.2f} ms, orjson {t['orjson'] * 1e3:.2f} ms ({len(raw) / 1e6:.2f} MB)")  # fmt: skip
    r2 = t["peer"] / t["fdkit"]
    record("decode: pydantic-per-row peer / fdkit", r2, ">= 10", r2 >= 10, f"peer {t['peer'] * 1e3:.1f} ms")


# -- cache -----------------------------------------------------------------------------------------------------
def bench_cache(repeat: int) -> None:
    tickers = fdkit.available("prices")[:30]
    params = {"start_date": "2021-03-01", "end_date": "2026-02-24"}
    with fdkit.server.start() as srv, tempfile.TemporaryDirectory() as tmp:
        cold_times, warm_times = [], []
        for i in range(max(2, repeat // 5)):
            d = Path(tmp) / f"c{i}"
            c = fdkit.Client(srv.api_key, srv.base_url, cache_dir=str(d), progress=False)
            t = time.perf_counter()
            cold = c.prices(tickers, **params)
            cold_times.append(time.perf_counter() - t)
            c.close()
            w = fdkit.Client(srv.api_key, srv.base_url, cache_dir=str(d), progress=False)
            t = time.perf_counter()
            warm = w.prices(tickers, **params)
            warm_times.append(time.perf_counter() - t)
            w.close()
            assert cold.equals(warm)
    cold_m, warm_m = statistics.median(cold_times), statistics.median(warm_times)
    r = cold_m / warm_m
    record("cache: 30 tickers x 5y daily, cold / warm", r, ">= 30", r >= 30,
           f"cold {cold_m:.2f} s, warm {warm_m:.3f} s, {len(cold):,} rows")  # fmt: skip


# -- bulk ------------------------------------------------------------------------------------------------------
def bench_bulk(repeat: int) -> None:
    tickers = fdkit.available("balance_sheets")
    tickers = (tickers * 3)[:30]  # 30 ticker requests per statement (the lake has 15 statement tickers)
    # the public service is remote: every answer is delayed by a simulated 50 ms round trip (an async sleep in the
    # server, so concurrent requests overlap as they would on a network)
    latency = fdkit.server.FaultPlan(rate=1.0, kinds=("slow",), slow_seconds=0.05)
    with fdkit.server.start(faults=latency) as srv:

        def run(workers: int) -> float:
            c = fdkit.Client(srv.api_key, srv.base_url, cache=False, max_workers=workers, progress=False)
            t = time.perf_counter()
            for name in ("income_statements", "balance_sheets", "cash_flow_statements"):
                ep = fdkit.catalog.get(name)
                c.fetch_many(ep, [{"ticker": tk, "period": "quarterly", "limit": 40} for tk in tickers])
            elapsed = time.perf_counter() - t
            c.close()
            return elapsed

        seq = [run(1) for _ in range(max(2, repeat // 5))]
        par = [run(16) for _ in range(max(2, repeat // 5))]
    s, p = statistics.median(seq), statistics.median(par)
    record("bulk: 30 tickers x 3 statements, sequential / concurrent", s / p, ">= 4", s / p >= 4,
           f"seq {s:.2f} s, concurrent {p:.2f} s (16 workers), 50 ms simulated latency")  # fmt: skip


# -- memory ----------------------------------------------------------------------------------------------------
def bench_memory(repeat: int) -> None:
    tickers = fdkit.available("prices")
    tickers = [t for t in tickers if not t.startswith("^")][:31]
    df = fdkit.prices(tickers, start_date="2006-01-01", end_date="2026-02-24", limit=5000)
    used = df.memory_usage(deep=True, index=True).sum()
    n = len(df)
    # lower bound: the information itself: 4 prices (float64), volume (int64), a timestamp (int64) and a 1-byte
    # ticker code per row; fdkit's time_milliseconds column, null masks and index codes count as overhead
    floor = n * (4 * 8 + 8 + 8 + 1)
    r = used / floor
    record("memory: 31 tickers x 20y daily panel / numeric floor", r, "<= 1.25", r <= 1.25,
           f"{used / 1e6:.1f} MB for {n:,} rows; floor {floor / 1e6:.1f} MB")  # fmt: skip


# -- server ----------------------------------------------------------------------------------------------------
def bench_server(repeat: int, seconds: float = 10.0, connections: int = 32) -> None:
    from load import PRICE_PAGE, run_load

    with fdkit.server.start() as srv:
        h = {"X-API-KEY": srv.api_key}
        page = requests_get(srv.base_url + "/prices", PRICE_PAGE, h)

        async def bare(scope, receive, send):  # the floor: uvicorn answering the same bytes, no framework
            if scope["type"] != "http":
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(page)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": page})

        with fdkit.server.serve_app(bare) as floor:
            runs = {"fdkit": [], "bare": []}
            for _ in range(2):  # interleaved
                runs["fdkit"].append(
                    run_load(
                        srv.base_url + "/prices", seconds=seconds, connections=connections, headers=h, params=PRICE_PAGE
                    )
                )
                runs["bare"].append(
                    run_load(
                        floor.base_url + "/prices",
                        seconds=seconds,
                        connections=connections,
                        headers=h,
                        params=PRICE_PAGE,
                    )
                )
    ours = max(runs["fdkit"], key=lambda r: r.rps)
    base = max(runs["bare"], key=lambda r: r.rps)
    r = ours.rps / base.rps
    record("server: fdkit serve /prices page / bare uvicorn", r, ">= 0.5", r >= 0.5,
           f"fdkit {ours.rps:,.0f} req/s (p50 {ours.pct(50):.1f} ms, p99 {ours.pct(99):.1f} ms, {ours.errors} errors); "
           f"bare {base.rps:,.0f} req/s (p50 {base.pct(50):.1f}, p99 {base.pct(99):.1f}); {connections} connections, "
           f"{seconds:.0f} s each")  # fmt: skip


def requests_get(url: str, params: dict, headers: dict) -> bytes:
    import requests

    r = requests.get(url, params=params, headers=headers, timeout=30)
    r.raise_for_status()
    return r.content


BENCHES = {
    "decode": bench_decode,
    "cache": bench_cache,
    "bulk": bench_bulk,
    "server": bench_server,
    "memory": bench_memory,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--markdown", help="write the table to this file")
    args = ap.parse_args(argv)
    os.environ.setdefault("FDKIT_CACHE_DIR", tempfile.mkdtemp(prefix="fdkit-bench-"))
    print(f"python {platform.python_version()}, pandas {pd.__version__}, numpy {np.__version__}, "
          f"{os.cpu_count()} cores; repeat={args.repeat}")  # fmt: skip
    for name in args.only.split(","):
        BENCHES[name.strip()](args.repeat)
    if args.markdown:
        buf = io.StringIO()
        buf.write("| benchmark | ratio | target | met | detail |\n|---|---:|---|---|---|\n")
        for r in RESULTS:
            buf.write(f"| {r['benchmark']} | {r['ratio']:.2f} | {r['target']} | {'yes' if r['met'] else 'no'} | "
                      f"{r['detail']} |\n")  # fmt: skip
        Path(args.markdown).write_text(buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
