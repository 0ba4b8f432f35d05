#!/usr/bin/env python3
"""A cross-section of a whole lake on a Dask cluster: every day's equal-weight return and return dispersion.

The lake's files are read by Dask's workers directly (Delta tables through their log's live files, plain Parquet
folders as fdkit's reader lists them): no fdkit on the workers, no fdkit service in between. A user whose lake has
outgrown one machine runs the same lines against a cluster's scheduler.

Usage::

    python docs/examples/cross_section_on_dask.py LAKE [--scheduler tcp://HOST:8786 | --workers 2] [--out FILE.parquet]

For each trading day: ``names`` (the tickers with an as-traded daily return that day), ``mean`` (their
equal-weight return) and ``dispersion`` (the cross-sectional standard deviation of their returns). A return is a
ticker's as-traded close (``basis`` as_traded, or none said) over its previous one, at most 10 days before (closes
are split-adjusted, so a split is no return; dividends are not in the closes).

Example (the bundled lake, a local cluster of two worker processes)::

    lake=$(python -c 'import fdkit.lake; print(fdkit.lake.default_data_dir())')
    python docs/examples/cross_section_on_dask.py "$lake"
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import dask.dataframe as dd
import deltalake
import pandas as pd
from distributed import Client, LocalCluster

from fdkit.lake.reader import LakeReader

#: the columns read of the prices table
COLUMNS = ["ticker", "time", "close", "basis"]
#: a return over a longer gap between two bars is not a daily return (the longest market closure since 1933 was
#: the week after 2001-09-11: 7 days between bars); some lakes' as-traded closes pause for years
MAX_GAP = pd.Timedelta(days=10)


def live_files(lake: str | Path, name: str = "prices") -> list[str]:
    """The files holding dataset ``name`` now: a Delta table's live files (its log says), else the folder's.

    The bundled lake's ``prices`` also has files in an installed data package (fdkit-history's S&P 500 bars of
    2016-2026): fdkit's reader lists them with the lake's own (on this machine; the workers read the files).

    Args:
        lake: the lake's directory.
        name: the dataset.

    Returns:
        Paths or URIs of Parquet files.
    """
    path = Path(lake) / name
    if (path / "_delta_log").is_dir():
        return list(deltalake.DeltaTable(str(path)).file_uris())
    return sorted(str(p) for p in LakeReader(lake).files(name).files)


def ticker_returns(bars: pd.DataFrame) -> pd.DataFrame:
    """One ticker's daily returns: as-traded closes in time order, each over the one before.

    Args:
        bars: one ticker's rows (``ticker``, ``time``, ``close``).

    Returns:
        ``time`` and ``ret`` (missing on the first bar and after a gap of more than :data:`MAX_GAP`).
    """
    bars = bars.sort_values("time")
    ret = bars["close"].pct_change().where(bars["time"].diff() <= MAX_GAP)
    return pd.DataFrame({"time": bars["time"].to_numpy(), "ret": ret.to_numpy()})


def cross_section(files: list[str]) -> pd.DataFrame:
    """Each day's equal-weight return and cross-sectional dispersion, computed on the current Dask client.

    Args:
        files: the prices table's Parquet files (:func:`live_files`).

    Returns:
        One row per day (index ``time``): ``names``, ``mean``, ``dispersion``.
    """
    bars = dd.read_parquet(files, columns=COLUMNS)
    traded = bars["basis"].isna() | (bars["basis"].astype(str) == "as_traded")  # no basis said: as traded
    bars = bars[traded & ~bars["close"].isna()][["ticker", "time", "close"]]
    bars = bars.assign(ticker=bars["ticker"].astype(str))
    meta = pd.DataFrame({"time": pd.Series(dtype=bars["time"].dtype), "ret": pd.Series(dtype="float64")})
    returns = bars.groupby("ticker").apply(ticker_returns, meta=meta).dropna(subset=["ret"])  # one shuffle
    stats = returns.groupby("time")["ret"].agg(["count", "mean", "std"]).compute()
    stats = stats.rename(columns={"count": "names", "std": "dispersion"}).sort_index()
    return stats.astype({"names": "int64"})


def main(argv: list[str] | None = None) -> int:
    """Run :func:`cross_section` on a local cluster or a running scheduler and print (or save) the result."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lake")
    ap.add_argument("--scheduler", help="a running Dask scheduler's address (default: a local cluster)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster")
    ap.add_argument("--out", help="write the result to this Parquet file")
    args = ap.parse_args(argv)
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)  # a finished shuffle's notice is a WARNING
    files = live_files(args.lake)
    if not files:
        print(f"no prices files in {args.lake}", file=sys.stderr)
        return 2
    if args.scheduler:
        with Client(args.scheduler):
            stats = cross_section(files)
    else:
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster):  # fmt: skip
            stats = cross_section(files)
    if args.out:
        stats.to_parquet(args.out)
    print(stats.tail(10).to_string())
    print(f"{len(stats)} days, {int(stats['names'].max())} names at most", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
