#!/usr/bin/env python3
"""Write a synthetic market-scale lake: N tickers of real-shaped daily bars and quarterly statements.

Usage::

    python benchmarks/synth_lake.py OUT --tickers N [--bars 5600] [--seed 7] [--layout hive|flat|delta]

Each ticker gets ``--bars`` business-day bars ending 2026-02-27 (5,600 bars start in late 2004): a geometric
random walk with its own drift and volatility (volatility clustering, fat-tailed days), consistent open/high/low/
close and log-normal volumes, plus one ``company_facts`` row and ``income_statements`` for every quarter of the
span (revenue growing with noise, margins per ticker). The lake is written the way the lake writes
(:func:`fdkit.lake.io.write_dataset`: typed by the schema, zstd, atomic files): ``--layout hive`` (the default)
partitions by ticker as ``fdkit mirror`` does (``prices/ticker=T00001/part-0.parquet``); ``--layout flat`` writes
prices as flat part files sorted by ticker then time with row groups of 8,192 rows (what min/max statistics prune);
``--layout delta`` writes every dataset as a Delta table (what ``fdkit mirror`` and the receiver write now), prices
as commits of about 4M rows sorted by ticker then time, row groups of 8,192 rows, so the log's per-file min/max
choose the file and the footers' the row groups; each prices commit also brings the latest-bar projection up to
date (``_projections/prices.last_traded.parquet``, :mod:`fdkit.lake.latest`: its new file read once), as every
Delta writer does.
Tickers are named ``T00001`` ... so that runs at several scales share their first tickers. Prints one JSON line:
rows, files, bytes, seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fdkit.lake.io import atomic_write_bytes, bump_generation, conform, write_dataset  # noqa: E402

END = pd.Timestamp("2026-02-27")
SECTORS = ["Technology", "Health Care", "Financials", "Energy", "Industrials", "Consumer Staples", "Utilities"]


def tickers(n: int) -> list[str]:
    """The synthetic tickers of an ``n``-ticker lake (the first ones are the same at every scale)."""
    return [f"T{i:05d}" for i in range(1, n + 1)]


def bars(names: list[str], n_bars: int, rng: np.random.Generator) -> pd.DataFrame:
    """Daily bars of ``names``, ``n_bars`` each, sorted by ticker then time."""
    days = pd.bdate_range(end=END, periods=n_bars, tz="UTC")
    k = len(names)
    drift = rng.normal(0.0003, 0.0004, (k, 1))
    base_vol = rng.uniform(0.008, 0.035, (k, 1))
    # volatility clusters: a slowly wandering multiplier; fat tails: Student-t shocks
    regime = np.exp(np.cumsum(rng.normal(0, 0.05, (k, n_bars)), axis=1) * 0.2)
    shocks = rng.standard_t(4, (k, n_bars)) / np.sqrt(2)
    # no daily move past +22% / -18% (the lake's invariant daily_moves_explained: no undocumented move beyond 25%)
    ret = np.clip(drift + base_vol * np.clip(regime, 0.3, 4) * shocks, -0.2, 0.2)
    close = rng.uniform(5, 300, (k, 1)) * np.exp(np.cumsum(ret, axis=1))
    # a walk that drifts under $1 is scaled up (same returns): closes rounded to 1/100 of a cent near zero jump
    close *= np.maximum(1.0, 1.0 / close.min(axis=1, keepdims=True))
    prev = np.concatenate([close[:, :1], close[:, :-1]], axis=1)
    open_ = prev * np.exp(rng.normal(0, 0.004, (k, n_bars)))
    span = np.abs(rng.normal(0, 0.6, (k, n_bars))) * base_vol
    high = np.maximum(open_, close) * (1 + span)
    low = np.minimum(open_, close) * (1 - span)
    volume = np.exp(rng.normal(np.log(rng.uniform(2e5, 3e7, (k, 1))), 0.5, (k, n_bars)))
    return pd.DataFrame(
        {
            "ticker": np.repeat(names, n_bars),
            "time": np.tile(days.to_numpy(), k),
            "time_milliseconds": np.tile(days.as_unit("ms").asi8, k),
            "open": open_.round(4).ravel(),
            "high": high.round(4).ravel(),
            "low": low.round(4).ravel(),
            "close": close.round(4).ravel(),
            "volume": volume.astype("int64").ravel(),
        }
    )


def statements(names: list[str], first: pd.Timestamp, rng: np.random.Generator) -> pd.DataFrame:
    """Quarterly income statements of ``names`` from ``first`` to the end of the bars."""
    quarters = pd.date_range(first, END, freq="QE")
    k, q = len(names), len(quarters)
    revenue = rng.uniform(5e7, 5e9, (k, 1)) * np.exp(np.cumsum(rng.normal(0.015, 0.05, (k, q)), axis=1))
    margin = rng.uniform(0.2, 0.7, (k, 1))
    net = revenue * margin * rng.uniform(0.1, 0.4, (k, q))
    shares = rng.uniform(5e7, 5e9, (k, 1))
    ends = np.tile(quarters.to_numpy(), k)
    return pd.DataFrame(
        {
            "ticker": np.repeat(names, q),
            "report_period": ends,
            "fiscal_period": np.tile([f"{d.year}-Q{(d.month - 1) // 3 + 1}" for d in quarters], k),
            "period": "quarterly",
            "currency": "USD",
            "filing_date": ends + np.timedelta64(35, "D"),
            "form_type": "10-Q",
            # the identifiers every statement row names (invariant identifiers_present), the CIK of facts()
            "cik": np.repeat([f"{9_000_000 + int(t[1:]) - 1:010d}" for t in names], q),
            "filing_url": np.repeat(
                [f"https://www.sec.gov/Archives/edgar/data/{9_000_000 + int(t[1:]) - 1}/synthetic.htm" for t in names],
                q,
            ),
            "revenue": revenue.ravel(),
            "cost_of_revenue": (revenue * (1 - margin)).ravel(),
            "gross_profit": (revenue * margin).ravel(),
            "net_income": net.ravel(),
            "earnings_per_share": (net / shares).ravel(),
        }
    )


def facts(names: list[str], rng: np.random.Generator) -> pd.DataFrame:
    """One ``company_facts`` row per ticker."""
    k = len(names)
    return pd.DataFrame(
        {
            "ticker": names,
            "name": [f"Synthetic {t} Inc." for t in names],
            "cik": [f"{9_000_000 + i:010d}" for i in range(k)],
            "sector": rng.choice(SECTORS, k),
            "exchange": "NYSE",
            "is_active": True,
            "market_cap": rng.uniform(1e8, 1e12, k),
            "weighted_average_shares": rng.uniform(5e7, 5e9, k),
        }
    )


def write(out: Path, n: int, n_bars: int = 5600, seed: int = 7, layout: str = "hive", batch: int = 100) -> dict:
    """Write the lake and return what was written."""
    rng = np.random.default_rng(seed)
    names = tickers(n)
    t0 = time.perf_counter()
    rows = 0
    flat: list[pd.DataFrame] = []
    for i in range(0, n, batch):
        chunk = names[i : i + batch]
        df = bars(chunk, n_bars, rng)
        rows += len(df)
        if layout == "hive":
            write_dataset(out, "prices", df, partition_by="ticker", mode="append", part="part-0", layout="parquet")
        else:
            flat.append(df)
            if sum(len(f) for f in flat) >= 4_000_000 or i + batch >= n:
                big = pd.concat(flat, ignore_index=True)
                if layout == "delta":
                    write_dataset(out, "prices", big, mode="append")  # one commit, sorted by ticker then time
                else:
                    _flat_part(out / "prices", big, len(list((out / "prices").glob("*"))))
                flat = []
        first = df["time"].iloc[0].tz_localize(None)
        if layout == "delta":
            write_dataset(out, "income_statements", statements(chunk, first, rng), mode="append")
        else:
            write_dataset(
                out,
                "income_statements",
                statements(chunk, first, rng),
                partition_by="ticker",
                mode="append",
                part="part-0",
                layout="parquet",
            )
    write_dataset(out, "company_facts", facts(names, rng), layout="delta" if layout == "delta" else "parquet")
    bump_generation(out)
    files = [f for f in out.rglob("*.parquet") if "_delta_log" not in f.parts]
    return {
        "tickers": n,
        "price_rows": rows,
        "files": len(files),
        "bytes": sum(f.stat().st_size for f in files),
        "seconds": round(time.perf_counter() - t0, 1),
        "layout": layout,
    }


def _flat_part(base: Path, df: pd.DataFrame, index: int) -> None:
    """One flat prices part file, typed as the lake types it, in row groups of 8,192 rows."""
    table = pa.Table.from_pandas(conform(df, "prices"), preserve_index=False)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", row_group_size=8192)
    atomic_write_bytes(base / f"part-{index}.parquet", sink.getvalue().to_pybytes())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--tickers", type=int, required=True)
    ap.add_argument("--bars", type=int, default=5600)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--layout", choices=("hive", "flat", "delta"), default="hive")
    args = ap.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"{args.out} is not empty", file=sys.stderr)
        return 2
    print(json.dumps(write(args.out, args.tickers, args.bars, args.seed, args.layout)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
