"""Research scale through the public calls, against the Parquet floor: what a quant pulls, cold and warm.

Each case runs in a fresh process with an empty cache folder (cold), calls the documented function on the
embedded default, calls it again (warm), then reads the same rows with pyarrow from the installed packages' files
(the floor: the lower bound of any path through the API; the median of three reads), all in the same process.
It reports the seconds, their ratios to the floor, the bytes the call left in the cache against those rows'
Parquet bytes, the returned frame's memory and the process's peak RSS (the embedded service runs in the same
process, so its memory is counted).

Cases:
    history N    price_history of N S&P 500 ever-members (sorted sample, seed 1), 2004-01-01 .. 2025-07-09,
                 limit=None
    day N        price_history of N members of the S&P 500 on 2008-06-30, that day only (N over their number:
                 N ever-members, that day)
    financials   financials of every company with quarterly statements, period="quarterly", limit=None
    screen       the README's three-line screen: financials(available("balance_sheets"), "annual", limit=None)
    stub N       prices of N S&P 500 members of 2023-06-30 x 5 years from a service that is not fdkit's own
                 (JSON pages of 100 bars, 50 ms a request), against (pages / requests in flight) x 50 ms

Usage:
    python benchmarks/research_scale.py                  # every case, the default sizes
    python benchmarks/research_scale.py history 958      # one case
    python benchmarks/research_scale.py --json out.json  # the figures as JSON too

Needs fdkit-history installed (``pip install ./history``) for the history cases.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT = [
    ("history", 50),
    ("history", 200),
    ("history", 958),
    ("day", 50),
    ("day", 200),
    ("day", 500),
    ("day", 958),
    ("financials", 0),
    ("screen", 0),
]


def _rss_mb() -> float:
    """This process's resident memory now (Linux), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak() -> None:
    """Start the process's peak resident memory (VmHWM) afresh from now (Linux: ``/proc/self/clear_refs``)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak_mb() -> float:
    """The process's peak resident memory since :func:`_reset_peak` (or its start), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cache_bytes(folder: str) -> int:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def _parquet_bytes(root: Path, name: str, tickers: set[str]) -> tuple[int, int]:
    """The compressed bytes of those tickers' rows in a dataset's files (row groups' share by rows) and the rows."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    total, rows = 0.0, 0
    for path in sorted((root / name).glob("*.parquet")):
        f = pq.ParquetFile(path)
        for i in range(f.metadata.num_row_groups):
            group = f.metadata.row_group(i)
            col = f.read_row_group(i, columns=["ticker"]).column("ticker")
            hit = int(pc.sum(pc.is_in(col.cast("string"), value_set=pc.cast(list(tickers), "string"))).as_py() or 0)
            if hit:
                size = sum(group.column(j).total_compressed_size for j in range(group.num_columns))
                total += size * hit / group.num_rows
                rows += hit
    return int(total), rows


def _floor(root: Path, names: list[str], tickers: list[str], day: str | None = None) -> tuple[float, int]:
    """pyarrow reading the same rows from the files, to pandas: the median seconds of three reads, and the rows.

    The median of three, not one read: a statement panel's floor is 40-90 ms, and one read's noise moved the
    ratio by a whole unit.
    """
    import statistics

    import pyarrow.compute as pc
    import pyarrow.dataset as pads

    seconds, rows = [], 0
    for _ in range(3):
        t = time.perf_counter()
        rows = 0
        for name in names:
            ds = pads.dataset(str(root / name), format="parquet")
            expr = pc.field("ticker").isin(tickers)
            if day is not None:
                expr = expr & (pc.field("date") == pc.scalar(day).cast("date32"))
            frame = ds.to_table(filter=expr).to_pandas()
            rows += len(frame)
            del frame
        seconds.append(time.perf_counter() - t)
    return statistics.median(seconds), rows


def run_case(kind: str, n: int) -> dict:
    """One case in this process (the child): cold, warm, floor, bytes, RSS."""
    if kind == "stub":
        return _stub_case(n)
    os.environ["FDKIT_CACHE_DIR"] = cache = tempfile.mkdtemp(prefix="fdkit-scale-")
    import fdkit

    fdkit.prices("AAPL", start_date="2024-01-02", end_date="2024-01-05")  # the embedded service up
    out: dict = {"case": kind, "n": n}
    df = _history_case(kind, n, cache, out) if kind in ("history", "day") else _statements_case(kind, cache, out)
    out["frame_mb"] = float(df.memory_usage(index=True, deep=True).sum()) / 2**20
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["cold_x"] = out["cold_s"] / out["floor_s"]
    out["warm_x"] = out["warm_s"] / out["floor_s"]
    out["rss_x"] = out["peak_rss_mb"] / max(out["frame_mb"], 1e-9)
    # the cold call's peak over the process before it, against the frame it returned (the acceptance's ratio)
    out["growth_x"] = (out["call_peak_mb"] - out["rss_before_mb"]) / max(out["frame_mb"], 1e-9)
    if out.get("parquet_bytes"):
        out["cache_x"] = out["cache_bytes"] / out["parquet_bytes"]
    return out


def _history_case(kind: str, n: int, cache: str, out: dict) -> Any:
    """price_history of N ever-members over twenty years (``history``) or of one day's members (``day``)."""
    import random

    import fdkit_history

    import fdkit
    from fdkit.client.bulk import wait_for_writes

    history = Path(fdkit_history.DATA_DIR)
    if kind == "history":
        spells = fdkit.index_members("sp500")
        q: dict = {"start_date": "2004-01-01", "end_date": "2025-07-09", "limit": None}
    else:  # the members of that day; past their number, ever-members (those not listed then answer nothing)
        spells = fdkit.index_members("sp500", "2008-06-30")
        if n > spells.index.get_level_values("ticker").nunique():
            spells = fdkit.index_members("sp500")
        q = {"start_date": "2008-06-30", "end_date": "2008-06-30"}
    everyone = sorted(set(spells.index.get_level_values("ticker")))
    random.seed(1)
    tickers = sorted(random.sample(everyone, min(n, len(everyone))))
    before = _cache_bytes(cache)
    out["rss_before_mb"] = _rss_mb()
    _reset_peak()
    t = time.perf_counter()
    df = fdkit.price_history(tickers, **q, errors="ignore", progress=False)
    out["cold_s"] = time.perf_counter() - t
    wait_for_writes()  # the parts kept in the background after the frame was returned
    out["call_peak_mb"] = _peak_mb()  # the call's own peak, its background writes included
    out["cache_bytes"] = _cache_bytes(cache) - before
    t = time.perf_counter()
    fdkit.price_history(tickers, **q, errors="ignore", progress=False)
    out["warm_s"] = time.perf_counter() - t
    day = q["start_date"] if kind == "day" else None
    out["floor_s"], out["floor_rows"] = _floor(history, ["price_history"], tickers, day)
    if kind == "history":
        out["parquet_bytes"], _ = _parquet_bytes(history, "price_history", set(tickers))
    out["tickers"], out["rows"] = len(tickers), len(df)
    return df


def _statements_case(kind: str, cache: str, out: dict) -> Any:
    """financials of every company (``financials``: quarterly) or the README's screen (``screen``: annual)."""
    import fdkit
    from fdkit.lake import default_data_dir

    everyone = fdkit.available("balance_sheets") if kind == "screen" else fdkit.available("income_statements")
    period = "annual" if kind == "screen" else "quarterly"
    before = _cache_bytes(cache)
    out["rss_before_mb"] = _rss_mb()
    _reset_peak()
    t = time.perf_counter()
    df = fdkit.financials(everyone, period=period, limit=None, errors="ignore", progress=False)
    if kind == "screen":
        df.fds.screen(revenue__gt=1e11, fiscal_period="FY2016").fds.ratios()
    out["cold_s"] = time.perf_counter() - t
    out["call_peak_mb"] = _peak_mb()
    out["cache_bytes"] = _cache_bytes(cache) - before
    t = time.perf_counter()
    fdkit.financials(everyone, period=period, limit=None, errors="ignore", progress=False)
    out["warm_s"] = time.perf_counter() - t
    names = ["income_statements", "balance_sheets", "cash_flow_statements"]
    out["floor_s"], out["floor_rows"] = _floor(Path(default_data_dir()), names, everyone)
    out["tickers"], out["rows"] = len(everyone), len(df)
    return df


def _stub_case(n: int, latency: float = 0.05) -> dict:
    """A service that is not fdkit's own, 50 ms a request: N tickers x 5 years of daily bars, against the bound.

    The stub is ``fdkit serve`` in a process of its own (as a remote service is: its CPU is not the client's),
    answering JSON only (no ``X-Fdkit-Formats``: the client treats it as any other service, one ticker at a time,
    page after page) behind a fault plan that delays every answer by ``latency`` (``asyncio.sleep``: the service
    is not busy meanwhile). The bound is (pages / requests in flight) x latency; the client keeps
    ``Client.concurrency()`` requests in flight (a service that is not fdkit's own: ``max_workers``, 8). (429 and
    ``Retry-After`` are honoured by the same client: tests/test_reliability*.py.)
    """
    import random

    import fdkit

    stub = subprocess.Popen(
        [sys.executable, __file__, "--stub-server", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert stub.stdin is not None and stub.stdout is not None
    try:
        where = json.loads(stub.stdout.readline())

        def served() -> tuple[int, float]:
            """The requests the stub has answered, and its CPU seconds."""
            stub.stdin.write("count\n")
            stub.stdin.flush()
            count, cpu = stub.stdout.readline().split()
            return int(count), float(cpu)

        out: dict = {"case": "stub", "n": n, "latency_s": latency}
        client = fdkit.Client(where["api_key"], where["base_url"], cache=False, progress=False)
        members = fdkit.index_members("sp500", "2023-06-30", client=client)
        priced = set(fdkit.available("prices", client=client))
        tickers = sorted(set(members.index.get_level_values("ticker")) & priced)
        random.seed(1)
        tickers = sorted(random.sample(tickers, min(n, len(tickers))))
        before = served()
        cpu, t = time.process_time(), time.perf_counter()
        df = client.prices(tickers, interval="day", start_date="2019-01-01", end_date="2023-10-27", errors="ignore")
        out["cold_s"], out["client_cpu_s"] = time.perf_counter() - t, time.process_time() - cpu
        if df.empty:  # a run that fetched nothing measures nothing: say why instead of a ratio
            why = next(iter(df.attrs.get("missing", {}).values()), "no rows")
            raise SystemExit(f"research_scale.py stub: the stub answered no bars ({why})")
        after = served()
        pages, out["stub_cpu_s"] = after[0] - before[0], after[1] - before[1]
        in_flight = client.concurrency()
    finally:
        stub.stdin.close()
        stub.wait(timeout=30)
    out.update(
        pages=pages,
        in_flight=in_flight,
        bound_s=pages / in_flight * latency,
        tickers=len(tickers),
        rows=len(df),
        frame_mb=float(df.memory_usage(deep=True).sum()) / 2**20,
    )
    out["bound_x"] = out["cold_s"] / out["bound_s"]
    return out


def _stub_server(latency: float) -> None:
    """The stub service of :func:`_stub_case` (this process): its address on stdout, then requests served on
    each ``count`` line of stdin, until stdin closes."""
    import fdkit.server
    from fdkit.server import FaultPlan

    plan = FaultPlan(rate=1.0, kinds=("slow",), slow_seconds=latency)
    with fdkit.server.start(arrow=False, faults=plan, contract="2026") as srv:  # the document the stub answers like
        print(json.dumps({"base_url": srv.base_url, "api_key": srv.api_key}), flush=True)
        for _ in sys.stdin:
            print(sum(plan.requests.values()), time.process_time(), flush=True)


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", nargs="?", choices=["history", "day", "financials", "screen", "stub"])
    parser.add_argument("n", nargs="?", type=int, default=0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stub-server", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--json", help="write the figures to this file too")
    args = parser.parse_args()
    if args.stub_server is not None:
        _stub_server(args.stub_server)
        return
    if args.child:
        print(json.dumps(run_case(args.case, args.n)))
        return
    cases = [(args.case, args.n)] if args.case else DEFAULT
    rows = []
    for kind, n in cases:
        done = subprocess.run(
            [sys.executable, __file__, kind, str(n), "--child"],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "FDKIT_PROGRESS": "0"},
        )
        if done.returncode:
            print(done.stderr[-2000:], file=sys.stderr)
            raise SystemExit(f"{kind} {n} failed")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        if kind == "stub":
            print(
                f"stub       {row['tickers']:5d} tickers {row['rows']:9,d} rows: {row['cold_s']:6.2f} s for "
                f"{row['pages']:,} pages, {row['in_flight']} in flight at {row['latency_s'] * 1000:.0f} ms: bound "
                f"{row['bound_s']:.2f} s, {row['bound_x']:.2f}x the bound; client CPU {row['client_cpu_s']:.1f} s, "
                f"the stub's {row['stub_cpu_s']:.1f} s",
                flush=True,
            )
            continue
        per = row["cold_s"] / max(row["tickers"], 1) * 1000
        cache = (
            f" cache {row['cache_bytes'] / 2**20:.1f} MB ({row['cache_x']:.2f}x Parquet)" if "cache_x" in row else ""
        )
        grown = row["call_peak_mb"] - row["rss_before_mb"]
        print(
            f"{kind:10s} {row['tickers']:5d} tickers {row['rows']:9,d} rows: cold {row['cold_s']:6.2f} s "
            f"({row['cold_x']:5.1f}x floor, {per:5.2f} ms/ticker), warm {row['warm_s']:5.2f} s "
            f"({row['warm_x']:4.1f}x), floor {row['floor_s']:5.2f} s;{cache} frame {row['frame_mb']:.0f} MB, "
            f"cold call's peak +{grown:.0f} MB over the process before it ({row['growth_x']:.1f}x the frame; "
            f"whole run's peak {row['peak_rss_mb']:.0f} MB)",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
