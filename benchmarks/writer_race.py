#!/usr/bin/env python3
"""A mirror and the webhook receiver writing one lake at once (issue 44 item 1), at scale, several times.

Usage::

    python benchmarks/writer_race.py [--tickers 30] [--events-per-ticker 2] [--repeat 5] [--pace 0] [--legacy]

Each repetition: a fresh lake whose ``income_statements`` starts as an older fdkit's plain Parquet (``ticker=``
partitions) of the first tickers; ``fdkit.mirror`` copies the income statements, balance sheets and cash-flow
statements of ``--tickers`` tickers from the embedded fdkit service (the bundled lake) while the real receiver
(``create_receiver`` served by uvicorn on loopback) lands signed statement events of the same tickers, four at a
time (one sent every ``--pace`` seconds: 0 sends them all at once, at the mirror's start): half re-file a quarter
the service has (a marked value), half file a quarter it has not. Afterwards: how many
events were acknowledged (200), how many of those while the mirror ran, how many acknowledged rows are missing from
the lake (or hold another value), whether the mirror's rows are complete, what ``fdkit lake validate``'s
``landed_events_in_lake`` says, and how many CONVERT commits the converted table has. ``--legacy`` runs the mirror's
old per-ticker predicate overwrite instead (what the issue reproduced). The checks are the acceptance test's
(``tests/test_writer_seam.py``), imported from it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import test_writer_seam as seam  # noqa: E402

import fdkit.mirror  # noqa: E402
import fdkit.server  # noqa: E402
from fdkit.lake.io import read_dataset, write_dataset  # noqa: E402
from fdkit.lake.validate import validate  # noqa: E402


def tickers(n: int) -> list[str]:
    """``n`` tickers of the bundled lake with a few years of statements (the four large ones left out)."""
    df = read_dataset(seam.DATA, "income_statements", columns=["ticker", "period"])
    counts = df[df["period"].astype(str) == "quarterly"]["ticker"].astype(str).value_counts()
    return sorted(counts[(counts >= 4) & (counts < 60)].index)[:n]


def _legacy_write(lake: Path, name: str, ticker: str, df) -> int:
    if "ticker" not in df.columns:
        df = df.assign(ticker=ticker)
    write_dataset(lake, name, df, partition_by="ticker", mode="append", part="part-0", projections=False)
    return len(df)


def missing(lake: Path, acked: list[dict]) -> int:
    """Acknowledged event records the lake does not serve with the event's value."""
    gone = 0
    for ev in acked:
        try:
            seam.assert_events_present(lake, [ev])
        except AssertionError:
            gone += 1
    return gone


def one(ref, names: list[str], per_ticker: int, pace: float) -> dict:
    lake = Path(tempfile.mkdtemp()) / "lake"
    seed = read_dataset(seam.DATA, "income_statements", where={"ticker": names[:5]})
    write_dataset(lake, "income_statements", seed, partition_by="ticker", layout="parquet")
    events = seam.statement_events(names, per_ticker)
    t0 = time.monotonic()
    out = seam.race(lake, ref, names, events, pace=pace)
    seconds = time.monotonic() - t0
    try:
        seam.assert_mirror_complete(lake, names)
        complete = True
    except AssertionError:
        complete = False
    (check,) = validate(lake, only=["landed_events_in_lake"])
    return {
        "events": len(events),
        "acked": len(out["acked"]),
        "during_mirror": out["during"],
        "missing": missing(lake, out["acked"]),
        "mirror_complete": complete,
        "mirror_pairs": len(out["report"].done),
        "validate_violations": check.violations,
        "converts": seam._operations(lake / "income_statements").count("CONVERT"),
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tickers", type=int, default=30)
    ap.add_argument("--events-per-ticker", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--legacy", action="store_true", help="the mirror's old per-ticker overwrite")
    ap.add_argument("--pace", type=float, default=0.0, help="seconds between two events sent (spread over the mirror)")
    args = ap.parse_args(argv)
    if args.legacy:
        fdkit.mirror._write = _legacy_write  # type: ignore[assignment]
    names = tickers(args.tickers)
    failed = 0
    with fdkit.server.start() as ref:
        for i in range(args.repeat):
            r = one(ref, names, args.events_per_ticker, args.pace)
            print(f"run {i + 1}: {r}", flush=True)
            failed += bool(r["missing"] or not r["mirror_complete"] or r["validate_violations"] or r["converts"] != 1)
    print(f"{args.repeat - failed} of {args.repeat} runs kept every acknowledged row and the whole mirror")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
