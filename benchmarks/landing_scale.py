#!/usr/bin/env python3
"""Every event family landed into a mirrored lake at market scale: queries still answer, validate stays clean.

Usage::

    python benchmarks/landing_scale.py OUT [--tickers 2000]

The lake: ``--tickers`` synthetic tickers written by ``benchmarks/synth_lake.py`` (prices, quarterly statements,
company facts; hive by ticker as ``fdkit mirror`` writes) plus every dataset of the bundled lake written hive by
ticker the same way (``<dataset>/ticker=T/part-0.parquet``; datasets without a ticker copied as they are). Then
``fdkit lake validate`` runs (before), ``fdkit webhooks listen`` (its own process) receives every event family (the
bundled lake's events of 2023-07 .. 2024-06, its insider, rate and filing-item events since 2020, and KPI and
balance/cash-flow segment events of a ticker written for them), ``fdkit serve`` (its own process) answers every
catalog example query, and validate runs again (after). Prints one JSON line: the lake's size, the seconds of each
step, the statuses of the example queries, and the invariants that fail before and after the landing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import synth_lake  # noqa: E402
from landings import KEY, SECRET, _free_port, _listener, _wait  # noqa: E402

from fdkit.lake import LakeReader, default_data_dir, read_dataset  # noqa: E402
from fdkit.lake.io import write_dataset  # noqa: E402
from fdkit.lake.validate import validate  # noqa: E402
from fdkit.webhooks import Destination, deliver, events_from_lake  # noqa: E402
from fdkit.webhooks.events import EVENT_TYPES  # noqa: E402


def mirrored_bundled(out: Path) -> None:
    """Every dataset of the bundled lake into ``out``, hive by ticker where it has one."""
    data = default_data_dir()
    for name in LakeReader(data).names():
        df = read_dataset(data, name)
        if "ticker" not in df.columns:
            src = data / name
            shutil.copytree(src, out / name) if src.is_dir() else write_dataset(out, name, df)
        else:  # a ticker that cannot name a folder (a few odd symbols of 13F tables) has no mirror either
            df = df[df["ticker"].astype(str).str.fullmatch(r"[A-Za-z0-9._=-]+")]
            if len(df):
                write_dataset(out, name, df, partition_by="ticker", mode="append", part="part-0")


def every_family(tmp: Path) -> list[dict]:
    """Events of every family (the small lake of tests/test_webhooks.py for the ones the bundled lake lacks)."""
    from test_webhooks import _small_lake

    data = default_data_dir()
    events = events_from_lake(data, since="2023-07-01", until="2024-06-30")
    events += events_from_lake(
        data, since="2020-01-01", datasets=["insider_trades", "insider_ownership", "interest_rates", "filing_items"]
    )
    small = _small_lake(tmp / "small")
    events += events_from_lake(small, datasets=["segmented_financials", "kpi_metrics", "kpi_guidance", "kpi_non_gaap"])
    assert {e["type"] for e in events} == set(EVENT_TYPES)
    return events


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--tickers", type=int, default=2000)
    args = ap.parse_args(argv)
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    r: dict = {}
    t = time.perf_counter()
    r["synthetic"] = synth_lake.write(out, args.tickers)
    mirrored_bundled(out)
    files = list(out.rglob("*.parquet"))
    r.update(
        files=len(files),
        gb=round(sum(f.stat().st_size for f in files) / 2**30, 2),
        write_s=round(time.perf_counter() - t, 1),
    )
    t = time.perf_counter()
    r["validate_before"] = {x.name: x.violations for x in validate(out) if not x.ok}
    r["validate_before_s"] = round(time.perf_counter() - t, 1)
    events = every_family(out.parent)
    port = _free_port()
    listen = _listener(out, port)
    t = time.perf_counter()
    try:
        report = deliver(events, [Destination(f"http://127.0.0.1:{port}/hook", SECRET)], base_delay=0.05, workers=4)
    finally:
        listen.terminate()
        listen.wait(30)
    r.update(
        events=len(events),
        families=len({e["type"] for e in events}),
        acked=len(report.acked),
        failed=len(report.failed),
        land_s=round(time.perf_counter() - t, 1),
    )
    from examples import EXAMPLES

    from fdkit.catalog import CATALOG

    keys = out.parent / "keys"
    keys.write_text(f"{KEY} pro\n")
    sport = _free_port()
    import subprocess

    serve = subprocess.Popen(
        [sys.executable, "-m", "fdkit.cli", "serve", "--data", str(out), "--port", str(sport), "--keys", str(keys)],
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{sport}"
    statuses: dict[str, int] = {}
    t = time.perf_counter()
    try:
        _wait(base + "/healthz", serve, 300)
        for name, q in EXAMPLES.items():
            if q is None:
                continue
            ep = CATALOG[name]
            h = {"X-API-KEY": KEY}
            resp = (
                requests.get(base + ep.path, params=q, headers=h, timeout=300)
                if ep.method == "GET"
                else requests.post(base + ep.path, json=q, headers=h, timeout=300)
            )
            statuses[name] = resp.status_code
    finally:
        serve.terminate()
        serve.wait(30)
    r.update(
        queries=len(statuses),
        queries_200=sum(s == 200 for s in statuses.values()),
        not_200={k: v for k, v in statuses.items() if v != 200},
        queries_s=round(time.perf_counter() - t, 1),
    )
    t = time.perf_counter()
    r["validate_after"] = {x.name: x.violations for x in validate(out) if not x.ok}
    r["validate_after_s"] = round(time.perf_counter() - t, 1)
    print(json.dumps(r, default=str))
    return 0 if not r["validate_after"] and not r["not_200"] and not r["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
