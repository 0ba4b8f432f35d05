#!/usr/bin/env python3
"""The scale runs of three reliability tests whose suite versions are small (RELIABILITY.md sections 3 and 21).

Usage::

    python benchmarks/faults_at_scale.py replay     # every event of the replay window (~370) under 30% faults
    python benchmarks/faults_at_scale.py release    # all 127 8-K releases of three days landed, replayed once
    python benchmarks/faults_at_scale.py bulk [--step 4] [--repeat 1]   # every 4th ticker under 20% faults

Each runs the same function as its test in ``tests/`` (``replay_under_faults`` and ``land_releases_and_replay`` of
``tests/test_webhooks.py``, ``bulk_under_faults`` of ``tests/test_reliability.py``) on the scale the test had before
it was made small (the test: a few events of each of the 18 types, every 16th release, every 40th ticker), and
prints its figures and time. A failed check raises, as in the test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def replay() -> dict:
    import test_webhooks as tw
    from lakes import few_insider_trades

    from fdkit.webhooks import events_from_lake

    window = few_insider_trades(events_from_lake(tw.DATA, since=tw.WINDOW[0], until=tw.WINDOW[1]))
    extra = few_insider_trades(
        events_from_lake(
            tw.DATA,
            since="2020-01-01",
            datasets=["insider_trades", "insider_ownership", "interest_rates", "filing_items"],
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        small = tw._small_lake(Path(tmp) / "small-lake")
        events = (
            window
            + extra
            + events_from_lake(
                small,
                datasets=["segmented_financials", "kpi_metrics", "kpi_guidance", "kpi_non_gaap", "labor", "inflation"],
            )
        )
        (Path(tmp) / "run").mkdir()
        return tw.replay_under_faults(Path(tmp) / "run", events)


def release() -> dict:
    import test_webhooks as tw

    with tempfile.TemporaryDirectory() as tmp:
        landed, events = tw.land_releases_and_replay(Path(tmp), 1)
    return {"releases_landed": landed, "events": events}


def bulk(step: int) -> dict:
    import test_reliability as tr

    import fdkit.server

    with fdkit.server.start() as srv:
        return tr.bulk_under_faults(srv, step)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", choices=["replay", "release", "bulk"])
    ap.add_argument("--step", type=int, default=4, help="bulk: every STEP-th ticker (default 4)")
    ap.add_argument("--repeat", type=int, default=1, help="runs in a row (default 1)")
    args = ap.parse_args()
    for i in range(args.repeat):
        t = time.monotonic()
        figures = {"replay": replay, "release": release, "bulk": lambda: bulk(args.step)}[args.run]()
        print(f"run {i + 1}: {time.monotonic() - t:.1f} s {figures}", flush=True)


if __name__ == "__main__":
    main()
