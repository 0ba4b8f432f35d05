#!/usr/bin/env python3
"""Does a worker's memory level off? ``fdkit serve`` under distinct random ``/prices`` queries, RSS sampled.

Usage::

    python benchmarks/memory.py [--data LAKE] [--workers 1] [--seconds 300] [--connections 16] [--memory 1GB]
                                [--src PATH] [--json FILE]

``fdkit serve`` runs in its own process (``--workers N``: uvicorn's worker processes), the load generator in
another (``benchmarks/aload.py --queries random`` with ``--distinct 2,000,000`` queries over every ticker of the
lake, so almost no query is asked twice: every answer is new to the memo). First every ticker is asked once, so
the store has read what it keeps of the lake (``--memory`` bounds it); the RSS of each worker then is the *base*.
During the load every worker's RSS is sampled every ``--every`` seconds. Printed: the curve (seconds, RSS of each
worker in MB), the base, the peak, the growth over the last third of the run, and the documented bounds the
growth must stay within (the answer memo's 128 MiB and the kept pages' 16 MiB per worker).

``--src PATH`` puts another checkout first on ``PYTHONPATH`` for the server (``git worktree add /tmp/before
<commit>``), to measure the code before a change with the same script and lake.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.request import Request, urlopen

import psutil
from serving import free_port, wait_ready

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KEY = "memory-benchmark-key-0123456789"
MEMO_BYTES = 128 * 2**20  # fdkit.server.app.create_app(memo_bytes=...) default
PAGE_BYTES = 16 * 2**20  # create_app(page_bytes=...) default


def _get(url: str, timeout: float = 60) -> int:
    with urlopen(Request(url, headers={"X-API-KEY": KEY}), timeout=timeout) as r:  # noqa: S310 (loopback only)
        r.read()
        return int(r.status)


def _tickers(lake: Path) -> list[str]:
    from fdkit.lake.reader import LakeReader

    return sorted(LakeReader.open(lake).distinct("prices"))


def _workers(proc: psutil.Process, n: int) -> list[psutil.Process]:
    """The processes that answer: the server itself, or uvicorn's worker children."""
    if n == 1:
        return [proc]
    deadline = time.time() + 60
    while time.time() < deadline:
        kids = [k for k in proc.children(recursive=True) if "spawn_main" in " ".join(k.cmdline())]
        if len(kids) >= n:
            return sorted(kids, key=lambda k: k.pid)[:n]
        time.sleep(0.2)
    raise RuntimeError("the worker processes did not start")


def measure(
    lake: Path, workers: int, seconds: float, connections: int, memory: str, every: float, src: str | None
) -> dict:
    """Start the server, warm it, drive it and sample its workers' RSS."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    tickers = _tickers(lake)
    with tempfile.TemporaryDirectory() as tmp:
        keys = Path(tmp) / "keys"
        keys.write_text(f"{KEY} pro\n")
        env = {**os.environ, "FDKIT_CACHE_DIR": tmp}
        if src:
            env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
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
            "--workers",
            str(workers),
        ]
        proc = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(proc, url, KEY, pause=0.1)
            procs = _workers(psutil.Process(proc.pid), workers)
            for _ in range(workers):  # every worker reads every ticker once (the connections land on any)
                for t in tickers:
                    _get(
                        f"{url}/prices?ticker={t}&interval=day&interval_multiplier=1&start_date=2024-01-02&end_date=2024-01-31"
                    )
            base = [p.memory_info().rss for p in procs]
            curve: list[tuple[float, list[float]]] = [(0.0, [b / 2**20 for b in base])]
            load_cmd = [
                sys.executable,
                str(HERE / "aload.py"),
                "--url",
                url,
                "--key",
                KEY,
                "--connections",
                str(connections),
                "--seconds",
                str(seconds),
                "--queries",
                "random",
                "--distinct",
                "2000000",
                "--tickers",
                ",".join(tickers),
            ]
            out: dict = {}

            def drive() -> None:
                done = subprocess.run(load_cmd, capture_output=True, text=True, check=True, timeout=seconds + 600)
                out.update(json.loads(done.stdout))

            driver = threading.Thread(target=drive)
            driver.start()
            t0 = time.monotonic()
            while driver.is_alive():
                driver.join(every)
                curve.append((time.monotonic() - t0, [p.memory_info().rss / 2**20 for p in procs]))
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    last_third = [c for c in curve if c[0] >= curve[-1][0] * 2 / 3]
    growth_late = [max(c[1][i] for c in last_third) - last_third[0][1][i] for i in range(workers)]
    peak = [max(c[1][i] for c in curve) for i in range(workers)]
    return {
        "lake": str(lake),
        "tickers": len(tickers),
        "workers": workers,
        "store_memory": memory,
        "base_mb": [b / 2**20 for b in base],
        "peak_mb": peak,
        "growth_mb": [peak[i] - base[i] / 2**20 for i in range(workers)],
        "growth_last_third_mb": growth_late,
        "bound_mb": (MEMO_BYTES + PAGE_BYTES) / 2**20,
        "curve": curve,
        "load": out,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="the lake (default: the bundled one)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--memory", default="1GB", help="fdkit serve --memory (the store's budget)")
    ap.add_argument("--every", type=float, default=10.0, help="seconds between RSS samples")
    ap.add_argument("--src", help="a checkout to serve from instead of the installed fdkit (PYTHONPATH)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    if args.data is None:
        from fdkit.lake.io import default_data_dir

        args.data = str(default_data_dir())
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    r = measure(Path(args.data), args.workers, args.seconds, args.connections, args.memory, args.every, args.src)
    for t, rss in r["curve"]:
        print(f"{t:6.0f} s  " + "  ".join(f"{x:7.0f} MB" for x in rss))
    load = r["load"]
    print(
        f"{r['tickers']} tickers, {r['workers']} worker(s): base {', '.join(f'{x:.0f}' for x in r['base_mb'])} MB, "
        f"peak {', '.join(f'{x:.0f}' for x in r['peak_mb'])} MB, growth "
        f"{', '.join(f'{x:.0f}' for x in r['growth_mb'])} MB (bound {r['bound_mb']:.0f} MB), growth in the last "
        f"third {', '.join(f'{x:.0f}' for x in r['growth_last_third_mb'])} MB; {load.get('requests', 0):,} "
        f"requests, {load.get('rps', 0):,.0f} req/s, errors {load.get('errors')}, p99 {load.get('p99_ms', 0):.0f} ms"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
