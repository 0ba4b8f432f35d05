#!/usr/bin/env python3
"""A load generator in its own process: N keep-alive connections (aiohttp, one event loop) for T seconds.

Usage::

    python benchmarks/aload.py --url http://127.0.0.1:8000 --key KEY [--connections 16] [--seconds 8]
                               [--queries fixed|random] [--distinct 5000] [--seed 7]

``fixed`` asks the same ``/prices`` page again and again (a memo hit after the first); ``random`` draws from
``--distinct`` different ``/prices`` queries (ticker, start and end dates), each asked about once, so the server
answers from its data path rather than from a memo. Only loopback addresses are accepted. Prints one JSON object:
``requests``, ``errors``, ``seconds``, ``rps``, ``p50_ms``, ``p99_ms``, ``statuses``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from urllib.parse import urlparse

import aiohttp

FIXED = {
    "ticker": "AAPL",
    "interval": "day",
    "interval_multiplier": 1,
    "start_date": "2024-01-02",
    "end_date": "2024-12-31",
}


def random_queries(
    tickers: list[str], n: int, seed: int, base: int = 12_420, span: int = 8_000
) -> list[dict[str, str]]:
    """``n`` distinct ``/prices`` queries: a ticker and a date range of 1 to 1,500 days starting in the ``span``
    days from ``base`` (days since the epoch; default 2004-01-02 .. 2026)."""
    rng = random.Random(seed)
    seen: set[tuple[str, int, int]] = set()
    out = []
    while len(out) < n:
        t = rng.choice(tickers)
        start = base + rng.randrange(0, span)
        end = start + rng.randrange(1, 1_500)
        if (t, start, end) in seen:
            continue
        seen.add((t, start, end))
        day = lambda d: time.strftime("%Y-%m-%d", time.gmtime(d * 86_400))  # noqa: E731
        out.append(
            {"ticker": t, "interval": "day", "interval_multiplier": 1, "start_date": day(start), "end_date": day(end)}
        )
    return out


async def run(url: str, key: str, connections: int, seconds: float, queries: list[dict[str, str]]) -> dict:
    """Drive the load and return the counts and latency percentiles."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    errors = 0
    deadline = time.monotonic() + seconds
    counter = iter(range(10**12))
    connector = aiohttp.TCPConnector(limit=connections, force_close=False)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, headers={"X-API-KEY": key}) as session:

        async def worker() -> None:
            nonlocal errors
            while time.monotonic() < deadline:
                q = queries[next(counter) % len(queries)]
                t = time.perf_counter()
                try:
                    async with session.get(url + "/prices", params=q) as r:
                        await r.read()
                        statuses[r.status] = statuses.get(r.status, 0) + 1
                        if r.status != 200:
                            errors += 1
                except (TimeoutError, aiohttp.ClientError):
                    errors += 1
                latencies.append(time.perf_counter() - t)

        t0 = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.monotonic() - t0
    xs = sorted(latencies)

    def pct(p: float) -> float:
        return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1000 if xs else float("nan")

    return {
        "requests": len(xs),
        "errors": errors,
        "seconds": elapsed,
        "rps": len(xs) / elapsed,
        "p50_ms": pct(50),
        "p99_ms": pct(99),
        "statuses": statuses,
        "distinct": len(queries),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", default="")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--queries", choices=("fixed", "random"), default="fixed")
    ap.add_argument("--distinct", type=int, default=5000)
    ap.add_argument("--tickers", default="AAPL,MSFT,NVDA,GOOGL,AMZN,META,TSLA,JPM,V,WMT,KO,PEP,XOM,IBM,INTC,ORCL")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    host = urlparse(args.url).hostname or ""
    if not (host.startswith("127.") or host in ("localhost", "::1")):
        print("the load generator only targets loopback addresses", file=sys.stderr)
        return 2
    queries = [FIXED] if args.queries == "fixed" else random_queries(args.tickers.split(","), args.distinct, args.seed)
    print(json.dumps(asyncio.run(run(args.url.rstrip("/"), args.key, args.connections, args.seconds, queries))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
