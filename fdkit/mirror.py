"""Mirror datasets from whatever service is configured into a lake of Delta tables.

Each dataset is a Delta table (``<dataset>/_delta_log/`` and its Parquet files, :mod:`fdkit.lake.delta`); each
``(dataset, ticker)`` pair is one commit that replaces that ticker's rows, so a mirror interrupted at any point
leaves whole tickers only. The commit goes through the lake's writer seam
(:meth:`fdkit.lake.writer.LakeWriter.replace_rows`): it holds the dataset's lock, and rows the webhook receiver
landed (its ledger names their keys) are never replaced, even when they landed while the ticker was being fetched
(landed events win: the module docstring of :mod:`fdkit.lake.writer` says why). ``fdkit serve --data LAKE`` (or
any Delta reader) serves the lake again with the same JSON. ``fdkit lake optimize LAKE`` afterwards compacts the
one-file-per-ticker commits into few large files sorted by ticker. A lake mirrored by an older fdkit
(``<dataset>/ticker=<T>/part-0.parquet``) is converted to Delta tables in place on the first write (logged, once).
It is resumable: finished ``(dataset, ticker)`` pairs are recorded in ``LAKE/_mirror.json`` and skipped next time
(``force=True`` redoes them); a failing ticker is reported and the rest go on.

Example:
    >>> import tempfile, fdkit
    >>> report = mirror(["AAPL"], ["company_facts"], tempfile.mkdtemp(), progress=False)
    >>> report.done
    [('company_facts', 'AAPL')]
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from fdkit.catalog import endpoints as _catalog
from fdkit.client.session import Client, default_client
from fdkit.errors import FdkitError
from fdkit.frames.typed import records_of
from fdkit.lake.delta import require_deltalake
from fdkit.lake.io import atomic_write_bytes, keep_projections
from fdkit.lake.writer import LakeWriter

__all__ = ["mirror", "MirrorReport", "MIRRORABLE"]

#: a dataset's projections (:mod:`fdkit.lake.latest`) are brought up to date after this many of its commits, and at
#: the end: once per commit would re-read the table's log and the projection for every ticker (quadratic in them)
PROJECTION_EVERY = 256

#: datasets a mirror can copy (per ticker), with the requests that fetch everything the service has
MIRRORABLE: dict[str, list[dict[str, Any]]] = {
    **{
        name: [{"period": p, "limit": 100_000} for p in ("annual", "quarterly", "ttm")]
        for name in ("income_statements", "balance_sheets", "cash_flow_statements", "financial_metrics")
    },
    "segmented_revenues": [{"period": p, "limit": 100_000} for p in ("annual", "quarterly")],
    "prices": [],  # date windows, see _price_windows
    "crypto_prices": [],
    "price_history": [],  # date windows too (fdkit-history's closes: served where the package is installed)
    "news": [{"limit": 100}],
    "filings": [{"limit": 100_000}],
    "insider_trades": [{"limit": 1000}],
    "insider_ownership": [{"limit": 1000}],
    "institutional_ownership": [{"limit": 1000}],
    "company_facts": [{}],
    "analyst_estimates": [{"period": p, "limit": 1000} for p in ("annual", "quarterly")],
    "earnings": [{"limit": 1000}],
}


@dataclass
class MirrorReport:
    """What a mirror run did.

    Attributes:
        done: ``(dataset, ticker)`` pairs written this run.
        skipped: pairs already in the lake (resumed).
        failed: ``(dataset, ticker) -> error message`` for pairs that failed.
        rows: rows written per dataset.
    """

    done: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: dict[tuple[str, str], str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)


def _price_windows(start: str, end: str, *, interval: bool = True) -> list[dict[str, Any]]:
    """Windows of at most 15 years, so no request exceeds the 5,000-bar limit of daily bars.

    Example:
        >>> [w["start_date"] for w in _price_windows("2004-01-01", "2025-12-31", interval=False)]
        ['2004-01-01', '2019-01-01']
    """
    out = []
    lo, hi = pd.Timestamp(start), pd.Timestamp(end)
    while lo <= hi:
        stop = min(hi, lo + pd.DateOffset(years=15) - pd.Timedelta(days=1))
        daily = {"interval": "day", "interval_multiplier": 1} if interval else {}  # price_history is daily only
        out.append({**daily, "start_date": f"{lo:%Y-%m-%d}", "end_date": f"{stop:%Y-%m-%d}", "limit": 5000})
        lo = stop + pd.Timedelta(days=1)
    return out


def _lake_rows(name: str, responses: list[tuple[dict[str, Any], dict[str, Any]]]) -> pd.DataFrame:
    """The lake rows of one ticker's responses (flattened by the endpoint's shape, as the server stores them)."""
    ep = _catalog.get(name)
    rows: list[dict[str, Any]] = []
    for params, body in responses:
        recs, fill = records_of(ep, params, body)
        rows.extend({**fill, **r} for r in recs)
    return pd.DataFrame(rows)


def _write(lake: Path, name: str, ticker: str, df: pd.DataFrame) -> int:
    if "ticker" not in df.columns:
        df = df.assign(ticker=ticker)
    # the ticker's rows replaced, in one commit of that ticker's rows only (memory bounded by one ticker); rows
    # webhook events landed stay (landed events win)
    return LakeWriter(lake).replace_rows(name, df, value=ticker)


def mirror(
    tickers: Sequence[str],
    datasets: Sequence[str],
    out: str | os.PathLike[str],
    *,
    client: Client | None = None,
    start_date: str = "1990-01-01",
    end_date: str | None = None,
    force: bool = False,
    progress: bool | None = None,
) -> MirrorReport:
    """Copy datasets of several tickers into a lake that ``fdkit serve --data`` can serve.

    Args:
        tickers: tickers to mirror.
        datasets: names from :data:`MIRRORABLE`.
        out: lake directory.
        client: the client (default: the default client).
        start_date: first day of price history.
        end_date: last day of price history (default today).
        force: redo pairs the lake already has.
        progress: a progress bar (default: on a terminal or in Jupyter).

    Returns:
        A :class:`MirrorReport`; failures are collected, not raised.

    Raises:
        ValueError: for a dataset that cannot be mirrored.
        LakeError: without the deltalake package (the ``delta`` extra), before anything is fetched.
    """
    unknown = [d for d in datasets if d not in MIRRORABLE]
    if unknown:
        raise ValueError(f"cannot mirror {unknown}; mirrorable: {', '.join(MIRRORABLE)}")
    require_deltalake()  # (the lake's tables are Delta tables)
    c = client or default_client()
    lake = Path(out)
    lake.mkdir(parents=True, exist_ok=True)
    manifest_path = lake / "_mirror.json"
    manifest: dict[str, list[str]] = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    report = MirrorReport()
    end = end_date or f"{pd.Timestamp.today():%Y-%m-%d}"
    pairs = [(d, t.upper()) for d in datasets for t in tickers]
    written: dict[str, int] = {}  # commits per dataset since its projections were brought up to date
    try:
        _mirror_pairs(pairs, lake, c, manifest, manifest_path, report, start_date, end, force, progress, written)
    finally:
        for name, n in written.items():
            if n:
                keep_projections(lake, name)
    return report


def _mirror_pairs(
    pairs: list[tuple[str, str]],
    lake: Path,
    c: Client,
    manifest: dict[str, list[str]],
    manifest_path: Path,
    report: MirrorReport,
    start_date: str,
    end: str,
    force: bool,
    progress: bool | None,
    written: dict[str, int],
) -> None:
    """Mirror each pair: one commit per (dataset, ticker), the manifest written after each."""
    from fdkit.client.paging import progress_bar, progress_enabled

    for name, ticker in progress_bar(pairs, desc="mirror", unit="pair", disable=not progress_enabled(progress)):
        if not force and ticker in manifest.get(name, []):
            report.skipped.append((name, ticker))
            continue
        if name in ("prices", "crypto_prices", "price_history"):
            queries = _price_windows(start_date, end, interval=name != "price_history")
        else:
            queries = MIRRORABLE[name]
        try:
            responses = []
            for q in queries:
                params = {**q, "ticker": ticker}
                responses.append((params, c.fetch(name, params, progress=False)))
            df = _lake_rows(name, responses)
            n = _write(lake, name, ticker, df) if len(df) else 0
        except FdkitError as exc:
            report.failed[(name, ticker)] = str(exc)
            continue
        if n:
            written[name] = written.get(name, 0) + 1
            if written[name] >= PROJECTION_EVERY:
                keep_projections(lake, name)
                written[name] = 0
        report.done.append((name, ticker))
        report.rows[name] = report.rows.get(name, 0) + n
        manifest.setdefault(name, [])
        if ticker not in manifest[name]:
            manifest[name].append(ticker)
        atomic_write_bytes(manifest_path, json.dumps(manifest, indent=1, sort_keys=True).encode())
