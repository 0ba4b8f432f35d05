#!/usr/bin/env python3
"""Does a market-wide panel fit its numbers? A client fetches N tickers x Y years of bars; its memory is measured.

Usage::

    python benchmarks/client_panel.py LAKE [--tickers 1000] [--start 2016-03-01] [--end 2026-02-27] [--json FILE]

``fdkit serve`` over ``LAKE`` runs in its own process (a synthetic lake: ``benchmarks/synth_lake.py LAKE --tickers
1000 --bars 2520 --layout flat`` writes ten years of bars for 1,000 tickers); the client runs in another fresh
process (``--client``), so that its RSS is the panel's alone: ``fdkit.Client(...).prices(tickers, start, end,
limit=None)`` over Arrow pages, no cache, a progress bar on stderr. Its RSS is sampled every 20 ms. Printed:
rows, seconds, the frame's own bytes (``memory_usage(deep=True)``), its *numeric bound* (rows x the bytes a row's
numbers need: five float64 prices, two Int64 with their masks, the datetime64 level and the category codes of the
ticker level), the RSS growth at its peak and once the frame is built, and their ratios to the bound (the issue's
target: within 1.25x).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from memory import KEY, _tickers  # noqa: E402  (the sibling benchmark's helpers)
from serving import free_port, wait_ready  # noqa: E402


def _client(url: str, tickers: list[str], start: str, end: str) -> dict:
    """The client side (a fresh process): fetch the panel, sampling this process's RSS."""
    import numpy as np

    me = psutil.Process()
    samples: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append(me.memory_info().rss)
            time.sleep(0.02)

    import fdkit  # imported before the base is taken: its own footprint is not the panel's

    client = fdkit.Client(KEY, url, cache=False, progress=True, timeout=120)
    base = me.memory_info().rss
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    df = client.prices(tickers, interval="day", start_date=start, end_date=end, limit=None)
    seconds = time.perf_counter() - t0
    after = me.memory_info().rss
    done.set()
    sampler.join()
    n = len(df)
    codes = np.asarray(df.index.codes[0]).dtype.itemsize
    bound = n * (5 * 8 + 2 * 9 + 8 + codes)
    frame = int(df.memory_usage(deep=True, index=True).sum())
    peak = max(samples + [after]) - base
    return {
        "tickers": len(tickers),
        "rows": n,
        "seconds": round(seconds, 2),
        "rows_per_s": round(n / seconds),
        "frame_mb": round(frame / 2**20, 1),
        "bound_mb": round(bound / 2**20, 1),
        "rss_growth_peak_mb": round(peak / 2**20, 1),
        "rss_growth_after_mb": round((after - base) / 2**20, 1),
        "frame_over_bound": round(frame / bound, 2),
        "peak_over_bound": round(peak / bound, 2),
        "after_over_bound": round((after - base) / bound, 2),
    }


def main(argv: list[str] | None = None) -> int:
    """Serve the lake in one process, fetch the panel in another, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lake", type=Path)
    ap.add_argument("--tickers", type=int, default=1000)
    ap.add_argument("--start", default="2016-03-01")
    ap.add_argument("--end", default="2026-02-27")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--client", help=argparse.SUPPRESS)  # internal: URL of the server to fetch from
    args = ap.parse_args(argv)
    tickers = _tickers(args.lake)[: args.tickers]
    if args.client:
        print(json.dumps(_client(args.client, tickers, args.start, args.end)))
        return 0
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        keys = Path(tmp) / "keys"
        keys.write_text(f"{KEY} pro\n")
        env = {**os.environ, "FDKIT_CACHE_DIR": tmp}
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fdkit.cli",
                "serve",
                "--data",
                str(args.lake),
                "--port",
                str(port),
                "--keys",
                str(keys),
            ],
            cwd=tmp,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_ready(server, url, KEY, pause=0.1)
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    str(args.lake),
                    "--tickers",
                    str(args.tickers),
                    "--start",
                    args.start,
                    "--end",
                    args.end,
                    "--client",
                    url,
                ],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
