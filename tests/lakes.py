"""Small, deterministic test lakes written by the tests themselves (not reference data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fdkit.lake.io import write_dataset

TEST_TICKERS = ("AAA", "BBB")


def write_test_lake(root: Path, n_days: int = 250, layout: str = "delta") -> Path:
    """Two tickers' prices, facts, statements and rates: Delta tables (``layout="parquet"``: plain files)."""
    days = pd.bdate_range("2024-01-02", periods=n_days)
    rows = []
    for i, t in enumerate(TEST_TICKERS):
        base = 100.0 * (i + 1)
        close = base + np.arange(n_days) * 0.5
        rows.append(
            pd.DataFrame(
                {
                    "ticker": t,
                    "time": days.tz_localize("UTC"),
                    "open": close - 0.25,
                    "high": close + 1,
                    "low": close - 1,
                    "close": close,
                    "volume": np.arange(n_days) + 1000 * (i + 1),
                }
            )
        )
    write_dataset(root, "prices", pd.concat(rows, ignore_index=True), layout=layout)
    write_dataset(
        root,
        "company_facts",
        pd.DataFrame(
            {
                "ticker": list(TEST_TICKERS),
                "name": ["Alpha Test Corp", "Beta Test Corp"],
                "cik": ["0000000001", "0000000002"],
                "sector": ["Tech", "Energy"],
                "is_active": [True, True],
                "weighted_average_shares": [1e6, 2e6],
            }
        ),
        layout=layout,
    )
    stmts = []
    for t in TEST_TICKERS:
        for k, rp in enumerate(pd.date_range("2019-12-31", periods=24, freq="QE")):
            stmts.append(
                {
                    "ticker": t,
                    "report_period": rp,
                    "period": "quarterly",
                    "fiscal_period": f"Q{rp.quarter}",
                    "currency": "USD",
                    "revenue": 1000.0 + k,
                    "net_income": 100.0 + k,
                    "filing_date": rp + pd.Timedelta(days=30),
                }
            )
    write_dataset(root, "income_statements", pd.DataFrame(stmts), layout=layout)
    write_dataset(
        root,
        "interest_rates",
        pd.DataFrame(
            {
                "bank": ["FED", "FED", "ECB"],
                "date": ["2023-07-27", "2024-09-19", "2024-06-12"],
                "name": ["Federal Funds Rate"] * 2 + ["Main refinancing operations"],
                "rate": [5.375, 4.875, 4.25],
            }
        ),
        layout=layout,
    )
    return root


#: the companies whose insider-trade events a replay test posts (the bundled lake's Form 4 table dates about 1,800
#: filings a half-year since data-real-6 gave them filing dates: posting each to a receiver is minutes of commits,
#: and one company's filings exercise the same rules)
INSIDER_SAMPLE = frozenset({"AAPL", "NVDA"})


def few_insider_trades(events: list[dict]) -> list[dict]:
    """``events`` with the insider-trade events of :data:`INSIDER_SAMPLE` only (every other event kept).

    Example:
        >>> evs = [{"type": "insider_trades.created", "data": {"object": {"ticker": t}}} for t in ("AAPL", "XYZ")]
        >>> [e["data"]["object"]["ticker"] for e in few_insider_trades(evs)]
        ['AAPL']
    """
    return [
        e
        for e in events
        if e["type"] != "insider_trades.created" or e["data"]["object"].get("ticker") in INSIDER_SAMPLE
    ]
