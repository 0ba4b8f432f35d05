#!/usr/bin/env python3
"""``fdkit serve`` over synthetic market-scale lakes: start time, memory and latency as the lake grows.

Usage::

    python benchmarks/synth_lake.py /tmp/lake-200 --tickers 200      # and 2000, 10000 ...
    python benchmarks/scale.py /tmp/lake-200 /tmp/lake-2000 [--queries 1000] [--connections 8] [--memory 1GB]
                               [--markdown FILE]

For each lake (written by ``benchmarks/synth_lake.py``), ``fdkit serve --data LAKE`` starts in its own process and
the load generator runs in another (this script with ``--load``: aiohttp keep-alive connections on one event
loop). Reported per lake: the seconds from launch to the first ``/healthz`` answer (ready) and to the first
``/prices`` answer, the server's RSS after ``--queries`` distinct random single-ticker ``/prices`` queries (random
tickers of the lake, random ranges of 1 to 1,500 days in 2005-2026) and its peak RSS, p50/p99 of those queries,
and, between the first and the last lake, the growth ratios. Then the cross-sectional queries (:data:`CROSS`: the
market snapshot, one row per ticker, and the statement screener) are timed on the same server: the first call of
each (cold) and p50/p99 of ``--cross`` more. Most tickers of a large lake are asked once, so most
queries read from disk: the figures are of the lazy data path, not of a warm memo.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import Request, urlopen

from aload import random_queries  # the load generator beside this script (python benchmarks/scale.py)
from serving import free_port, wait_ready

ROOT = Path(__file__).resolve().parent.parent
KEY = "scale-benchmark-key-0123456789"


def _rss(pid: int) -> tuple[int, int]:
    """Current and peak resident set size of a process, in bytes."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def _get(url: str, timeout: float = 120) -> int:
    with urlopen(Request(url, headers={"X-API-KEY": KEY}), timeout=timeout) as r:  # noqa: S310 (loopback only)
        r.read()
        return int(r.status)


def queries(tickers: list[str], n: int, seed: int) -> list[dict[str, str]]:
    """``n`` distinct ``/prices`` queries: a random ticker and a range of 1 to 1,500 days in 2005-2026."""
    return random_queries(tickers, n, seed, base=12_784, span=7_600)  # 2005-01-01 as days since the epoch


async def _drive(url: str, qs: list[dict[str, str]], connections: int) -> dict:
    import aiohttp

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    todo = iter(qs)
    connector = aiohttp.TCPConnector(limit=connections)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, headers={"X-API-KEY": KEY}) as session:

        async def worker() -> None:
            for q in todo:
                t = time.perf_counter()
                async with session.get(url + "/prices", params=q) as r:
                    await r.read()
                    statuses[r.status] = statuses.get(r.status, 0) + 1
                latencies.append(time.perf_counter() - t)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - t0
    xs = sorted(latencies)

    def pct(p: float) -> float:
        return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] * 1000

    return {"requests": len(xs), "seconds": elapsed, "p50_ms": pct(50), "p99_ms": pct(99), "statuses": statuses}


#: the cross-sectional queries timed after the single-ticker ones: (label, method, path, JSON body)
CROSS: list[tuple[str, str, str, dict | None]] = [
    ("market snapshot", "GET", "/prices/snapshot/market", None),
    (
        "screener",
        "POST",
        "/financials/search/screener",
        {"filters": [{"field": "revenue", "operator": "gt", "value": 1e9}], "period": "quarterly", "limit": 100},
    ),
]


def _request(url: str, method: str, body: dict | None, timeout: float = 600) -> tuple[int, int]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"X-API-KEY": KEY, **({} if body is None else {"Content-Type": "application/json"})}
    with urlopen(Request(url, data=data, headers=headers, method=method), timeout=timeout) as r:  # noqa: S310
        return int(r.status), len(r.read())


def cross_sections(url: str, repeat: int, pid: int) -> dict:
    """Time each cross-sectional query: its first call (cold), then ``repeat`` more (p50 / p99), and the RSS peak."""
    out: dict = {}
    for label, method, path, body in CROSS:
        times, status, size = [], 0, 0
        for _ in range(repeat + 1):
            t = time.perf_counter()
            status, size = _request(url + path, method, body)
            times.append((time.perf_counter() - t) * 1000)
        warm = sorted(times[1:])
        out[label] = {
            "first_ms": times[0],
            "p50_ms": warm[len(warm) // 2],
            "p99_ms": warm[min(len(warm) - 1, int(0.99 * len(warm)))],
            "status": status,
            "bytes": size,
            "peak_rss_mb": _rss(pid)[1] / 2**20,
        }
    return out


def _tickers(lake: Path) -> list[str]:
    """The lake's tickers: its ``ticker=`` folders (hive), else the ``company_facts`` rows (flat, Delta)."""
    hive = sorted(p.name.split("=", 1)[1] for p in (lake / "prices").iterdir() if p.name.startswith("ticker="))
    if hive:
        return hive
    sys.path.insert(0, str(ROOT))
    from fdkit.lake.io import read_dataset

    return sorted(read_dataset(lake, "company_facts", columns=["ticker"])["ticker"].astype(str))


def measure(lake: Path, n_queries: int, connections: int, memory: str, seed: int, cross: int = 20) -> dict:
    """Start ``fdkit serve`` on ``lake``, drive it, and return the figures."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        keys = Path(tmp) / "keys"
        keys.write_text(f"{KEY} pro\n")
        env = {**os.environ, "FDKIT_CACHE_DIR": tmp}
        cmd = [
            sys.executable,
            "-m",
            "fdkit.cli",
            "serve",
            "--data",
            str(lake),
            "--port",
            str(port),
            "--keys",
            str(keys),
            "--memory",
            memory,
        ]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(proc, url, KEY, pause=0.02)
            ready = time.perf_counter() - t0
            names = _tickers(lake)
            first_q = queries(names, 1, seed + 1)[0]
            _get(url + "/prices?" + "&".join(f"{k}={v}" for k, v in first_q.items()))
            first = time.perf_counter() - t0
            rss_ready = _rss(proc.pid)[0]
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(queries(names, n_queries, seed), f)
            out = subprocess.run(
                [sys.executable, __file__, "--load", url, f.name, "--connections", str(connections)],
                capture_output=True,
                text=True,
                check=True,
                timeout=3600,
            )
            os.unlink(f.name)
            load = json.loads(out.stdout)
            rss, peak = _rss(proc.pid)
            xs = cross_sections(url, cross, proc.pid) if cross else {}
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
    files = list((lake / "prices").rglob("*.parquet"))
    return {
        "lake": str(lake),
        "tickers": len(names),
        "price_files": len(files),
        "price_bytes": sum(p.stat().st_size for p in files),
        "ready_s": ready,
        "first_prices_s": first,
        "rss_ready_mb": rss_ready / 2**20,
        "rss_mb": rss / 2**20,
        "peak_rss_mb": peak / 2**20,
        **load,
        "cross": xs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lakes", nargs="+")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--memory", default="1GB", help="fdkit serve --memory")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--cross",
        type=int,
        default=20,
        help="times each cross-sectional query is repeated after its first call (0: none)",
    )
    ap.add_argument("--markdown", help="append the table to this file")
    ap.add_argument("--load", action="store_true", help=argparse.SUPPRESS)  # the load generator's own process
    args = ap.parse_args(argv)
    if args.load:
        url, path = args.lakes
        print(json.dumps(asyncio.run(_drive(url, json.loads(Path(path).read_text()), args.connections))))
        return 0
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f}", file=sys.stderr)
    results = []
    for lake in args.lakes:
        r = measure(Path(lake), args.queries, args.connections, args.memory, args.seed, args.cross)
        print(json.dumps(r), flush=True)
        results.append(r)
    lines = [
        "| lake | ready | first /prices | RSS at ready | RSS after queries (peak) | p50 / p99 | statuses |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['tickers']:,} tickers ({r['price_files']:,} price files, {r['price_bytes'] / 2**30:.2f} "
            f"GB) | {r['ready_s']:.2f} s | {r['first_prices_s']:.2f} s | {r['rss_ready_mb']:.0f} MB | "
            f"{r['rss_mb']:.0f} MB ({r['peak_rss_mb']:.0f} MB) | {r['p50_ms']:.1f} / {r['p99_ms']:.1f} ms | "
            f"{r['statuses']} |"
        )
    if len(results) > 1:
        a, b = results[0], results[-1]
        ratio = {k: b[k] / a[k] for k in ("ready_s", "first_prices_s", "rss_mb", "p99_ms")}
        lines.append(
            f"\nGrowth {a['tickers']:,} -> {b['tickers']:,} tickers: ready x{ratio['ready_s']:.2f}, "
            f"first /prices x{ratio['first_prices_s']:.2f}, RSS x{ratio['rss_mb']:.2f}, "
            f"p99 x{ratio['p99_ms']:.2f}."
        )
    if any(r["cross"] for r in results):
        lines += [
            "",
            "| lake | query | first call | p50 / p99 after it | server RSS peak so far | status |",
            "|---|---|---:|---:|---:|---|",
        ]
        for r in results:
            for label, c in r["cross"].items():
                lines.append(
                    f"| {r['tickers']:,} tickers | {label} | {c['first_ms']:.0f} ms | {c['p50_ms']:.1f} / "
                    f"{c['p99_ms']:.1f} ms | {c['peak_rss_mb']:.0f} MB | {c['status']} |"
                )
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
