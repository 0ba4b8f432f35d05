#!/usr/bin/env python3
"""A bounded loopback load generator: N concurrent keep-alive connections for T seconds, then it stops.

Usage::

    python benchmarks/load.py [--seconds 60] [--connections 64]

run against an embedded ``fdkit serve`` on 127.0.0.1 (never any other address). Reports requests/s, errors,
p50 and p99 latency.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

__all__ = ["LoadResult", "run_load"]


@dataclass
class LoadResult:
    """Outcome of a load run."""

    requests: int = 0
    errors: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)

    @property
    def rps(self) -> float:
        """Completed requests per second."""
        return self.requests / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        """Latency percentile in milliseconds."""
        if not self.latencies:
            return float("nan")
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q / 100 * len(xs)))] * 1000

    def summary(self) -> str:
        """One line."""
        return (
            f"{self.requests:,} requests in {self.seconds:.1f} s = {self.rps:,.0f} req/s, {self.errors} errors, "
            f"p50 {self.pct(50):.1f} ms, p99 {self.pct(99):.1f} ms"
        )


def run_load(
    url: str,
    *,
    seconds: float,
    connections: int,
    headers: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> LoadResult:
    """GET ``url`` from ``connections`` threads with keep-alive sessions until ``seconds`` pass.

    Args:
        url: a loopback URL.
        seconds: duration (the run stops by itself).
        connections: concurrent connections.
        headers: request headers.
        params: query parameters.

    Returns:
        A :class:`LoadResult`; a response other than 200 or an exception counts as an error.

    Raises:
        ValueError: for a URL that is not on loopback.
    """
    host = requests.utils.urlparse(url).hostname or ""
    if not (host.startswith("127.") or host in ("localhost", "::1")):
        raise ValueError("the load generator only targets loopback addresses")
    result = LoadResult()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker() -> None:
        s = requests.Session()
        local_lat: list[float] = []
        local_status: dict[int, int] = {}
        errors = 0
        while time.monotonic() < deadline:
            t = time.perf_counter()
            try:
                r = s.get(url, headers=headers, params=params, timeout=30)
                r.content  # noqa: B018  (read the whole body)
                local_status[r.status_code] = local_status.get(r.status_code, 0) + 1
                if r.status_code != 200:
                    errors += 1
            except requests.RequestException:
                errors += 1
            local_lat.append(time.perf_counter() - t)
        s.close()
        with lock:
            result.latencies.extend(local_lat)
            result.requests += len(local_lat)
            result.errors += errors
            for k, v in local_status.items():
                result.statuses[k] = result.statuses.get(k, 0) + v

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(connections)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(seconds + 60)
    result.seconds = time.monotonic() - t0
    return result


PRICE_PAGE = {
    "ticker": "AAPL",
    "interval": "day",
    "interval_multiplier": 1,
    "start_date": "2024-01-02",
    "end_date": "2024-12-31",
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--connections", type=int, default=64)
    args = ap.parse_args(argv)
    import fdkit.server

    with fdkit.server.start() as srv:
        res = run_load(
            srv.base_url + "/prices",
            seconds=args.seconds,
            connections=args.connections,
            headers={"X-API-KEY": srv.api_key},
            params=PRICE_PAGE,
        )
    print(f"load: {args.connections} connections, /prices page of 100 bars: {res.summary()}; statuses {res.statuses}")
    return 0 if res.errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
