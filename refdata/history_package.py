"""Build the ``fdkit-history`` data package: the price history stage over a built lake, written by year.

Usage::

    python -m refdata.history_package [SOURCE_DIR] [--lake data] [--out history/fdkit_history/_data]

It reads ``index_membership`` and ``splits`` from the lake (the main build's), runs
:data:`refdata.history.PRICE_HISTORY` on the sources, writes ``price_history/part-YYYY.parquet`` (rows sorted
by ticker and date, small row groups, so one company's rows are read without the rest) and puts the coverage table
of every month-end into the lake's ``SOURCES.md`` (between markers the main build keeps). It also writes
``prices/part-sp500-2016-2026.parquet``: the S&P 500 source's as-traded bars of 2016-2026 for every ticker and day
the bundled lake has none of (fdkit's reader serves them as rows of the bundled ``prices``).

Example:
    >>> spells = pd.DataFrame({"index": ["sp500"] * 2, "current_ticker": ["A", "B"], "ticker": ["A", "B"],
    ...                        "start_date": pd.to_datetime(["2005-01-03"] * 2), "end_date": pd.NaT})
    >>> bars = pd.DataFrame({"ticker": ["A"], "date": pd.to_datetime(["2005-01-31"])})
    >>> coverage(bars, spells, ["2005-01-31"])[["index", "members", "priced", "missing"]].values.tolist()
    [['sp500', 2, 1, 'B']]
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fdkit.lake.io import read_dataset, write_dataset
from fdkit.lake.reviewed import replace_rows
from refdata import confirmed_moves as moves
from refdata.driver import run_stage
from refdata.history_stage import DELISTINGS, PRICE_HISTORY, PROVENANCE
from refdata.pipeline import ROOT, source_roots
from refdata.prices import prices_left_out, sp500_identity
from refdata.sp500_bars import SP500_BARS

__all__ = ["MARK_BEGIN", "MARK_END", "coverage", "coverage_markdown", "main", "write_history"]

MARK_BEGIN = "<!-- price-history-coverage: written by python -m refdata.history_package -->"
MARK_END = "<!-- /price-history-coverage -->"
ROW_GROUP = 16_384


def write_history(df: pd.DataFrame, out: Path) -> list[Path]:
    """Write the history as one Parquet file a year (float32 prices: the sources' own precision).

    Args:
        df: the ``price_history`` rows.
        out: the package's data folder (``price_history/`` is made in it, emptied first).

    Returns:
        The files written.
    """
    base = out / "price_history"
    base.mkdir(parents=True, exist_ok=True)
    for old in base.glob("*.parquet"):
        old.unlink()
    df = df.sort_values(["ticker", "date"], kind="stable")
    files = []
    for year, part in df.groupby(df["date"].dt.year, sort=True):
        table = pa.table(
            {
                "ticker": pa.array(part["ticker"].astype(str)).dictionary_encode(),
                "date": pa.array(part["date"].dt.date, pa.date32()),
                "close": pa.array(part["close"].astype("float32"), from_pandas=True),
                "adj_close": pa.array(part["adj_close"].astype("float32"), from_pandas=True),
                "dividend": pa.array(part["dividend"].astype("float32"), from_pandas=True),
                "volume": pa.array(part["volume"].astype("Int64"), pa.int64(), from_pandas=True),
                "basis": pa.array(part["basis"].astype(str)).dictionary_encode(),
                "adjusted_as_of": pa.array(part["adjusted_as_of"].dt.date, pa.date32()),
                "price_source": pa.array(part["price_source"].astype(str)).dictionary_encode(),
            }
        )
        path = base / f"part-{year}.parquet"
        pq.write_table(table, path, compression="zstd", compression_level=9, row_group_size=ROW_GROUP)
        files.append(path)
    return files


#: the file of the package's ``prices`` rows (added to the bundled lake's ``prices`` by fdkit's reader)
PRICES_FILE = "part-sp500-2016-2026.parquet"


def prices_added(
    lake_prices: pd.DataFrame, bars: pd.DataFrame, known: set[str], window_end: pd.Timestamp
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The S&P 500 source's bars the bundled lake lacks, one company a ticker.

    A ticker the bundled lake knows (its bars, statements or a left-out price series) gets the days after its
    broad universe's window (``window_end``, 2017-03-31): the bundled lake's metrics and invariants stay those of
    its own bars; any other ticker gets every day of the source.

    Args:
        lake_prices: the bundled lake's ``prices``.
        bars: the ``sp500_bars`` of :mod:`refdata.sp500_bars` (on the lake's split basis).
        known: the tickers the bundled lake knows.
        window_end: the last day of the bundled lake's broad universe.

    Returns:
        The rows to add (sorted by ticker and time) and :func:`refdata.prices.sp500_identity` (a ticker whose
        2016-2017 closes are another company's than the lake's is left out: DD, JCI, SW).

    Example:
        >>> t = pd.to_datetime(["2016-06-01", "2017-06-02"]).tz_localize("UTC")
        >>> lake = pd.DataFrame({"ticker": ["A"], "time": t[:1], "close": [10.0], "basis": "as_traded"})
        >>> bars = pd.DataFrame({"ticker": ["A", "A", "B"], "time": [*t, t[0]], "close": [10.0, 10.5, 3.0]})
        >>> added, _ = prices_added(lake, bars, {"A"}, pd.Timestamp("2017-03-31", tz="UTC"))
        >>> added[["ticker", "close"]].values.tolist()
        [['A', 10.5], ['B', 3.0]]
    """
    identity = sp500_identity(lake_prices, bars)
    same = set(identity.loc[identity["same"], "ticker"])
    have = pd.MultiIndex.from_arrays([lake_prices["ticker"].astype(str), lake_prices["time"]])
    mine = bars[bars["ticker"].astype(str).isin(same)]
    new = ~pd.MultiIndex.from_arrays([mine["ticker"].astype(str), mine["time"]]).isin(have)
    new &= ~(mine["ticker"].astype(str).isin(known) & (mine["time"] <= window_end)).to_numpy()
    out = mine[new].sort_values(["ticker", "time"], kind="stable").reset_index(drop=True)
    return out, identity


def write_prices(rows: pd.DataFrame, lake: Path, out: Path) -> Path:
    """Write the added ``prices`` rows with the bundled lake's own Arrow schema (one dataset of both folders).

    Args:
        rows: :func:`prices_added`.
        lake: the bundled lake (its ``prices`` file gives the schema).
        out: the package's data folder (``prices/`` is made in it, emptied first).

    Returns:
        The file written.
    """
    schema = pq.read_schema(next((lake / "prices").glob("*.parquet"))).remove_metadata()
    base = out / "prices"
    base.mkdir(parents=True, exist_ok=True)
    for old in base.glob("*.parquet"):
        old.unlink()
    frame = rows.assign(ticker=rows["ticker"].astype(str))
    frame["time_milliseconds"] = frame["time"].astype("int64") // 1_000_000
    columns = {}
    for field in schema:
        values = frame[field.name] if field.name in frame else pd.Series([None] * len(frame))
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        array = pa.array(values.astype(object).where(values.notna(), None), kind, from_pandas=True)
        columns[field.name] = (
            array.dictionary_encode().cast(field.type) if pa.types.is_dictionary(field.type) else array
        )
    path = base / PRICES_FILE
    pq.write_table(
        pa.table(columns, schema=schema), path, compression="zstd", compression_level=9, row_group_size=ROW_GROUP
    )
    return path


def coverage(bars: pd.DataFrame, spells: pd.DataFrame, month_ends: Sequence[str]) -> pd.DataFrame:
    """The share of each index's members of each month-end with a bar on that month's last trading day.

    Args:
        bars: ``ticker``, ``date`` of the history.
        spells: ``index_membership`` rows.
        month_ends: the month-ends.

    Returns:
        ``index``, ``month``, ``members``, ``priced``, ``share``, ``missing`` (the unpriced members' tickers of the
        time, space-separated).
    """
    days = np.sort(bars["date"].unique())
    have = set(zip(bars["ticker"].astype(str), bars["date"], strict=True))
    rows = []
    for d in pd.to_datetime(list(month_ends)):
        traded = days[days <= np.datetime64(d)]
        if not len(traded):
            continue
        day = pd.Timestamp(traded[-1])
        live = spells[(spells["start_date"] <= d) & (spells["end_date"].isna() | (spells["end_date"] >= d))]
        for index, g in live.groupby("index", observed=True, sort=True):
            ok = [(str(t), day) in have for t in g["current_ticker"]]
            rows.append(
                {
                    "index": str(index),
                    "month": d,
                    "members": len(g),
                    "priced": int(sum(ok)),
                    "share": float(np.mean(ok)) if ok else np.nan,
                    "missing": " ".join(sorted(t for t, o in zip(g["ticker"].astype(str), ok, strict=True) if not o)),
                }
            )
    return pd.DataFrame(rows)


def coverage_markdown(cov: pd.DataFrame, rejects: pd.DataFrame, more: str = "") -> str:
    """The coverage section of ``SOURCES.md``: worst share a year per index, the worst months' missing names.

    ``more`` (the package's other sections) goes inside the section's markers, which the main build keeps.
    """
    cov = cov.assign(year=cov["month"].dt.year)
    table = cov.pivot_table(index="year", columns="index", values="share", aggfunc="min")
    lines = [
        MARK_BEGIN,
        "",
        "## `price_history` (the fdkit-history package, `history/`)",
        "",
        f"* sources: {PROVENANCE.sources}",
        f"* licence: {PROVENANCE.licence}",
        f"* method: {PROVENANCE.method}",
        f"* caveats: {PROVENANCE.caveats}",
        "",
        "## `delistings` (the fdkit-history package)",
        "",
        f"* sources: {DELISTINGS.sources}",
        f"* licence: {DELISTINGS.licence}",
        f"* method: {DELISTINGS.method}",
        "",
        "### Coverage of the price history (fdkit-history) by index membership",
        "",
        "Share of each month-end's members with a bar on the month's last trading day (the lowest month of "
        "each year; the S&P 400 list starts 2011-11-20, the S&P 600 list 2021-03-31). Targets: 95% from 2008, "
        "90% before.",
        "",
        "| year | " + " | ".join(table.columns) + " |",
        "|---|" + "---|" * len(table.columns),
    ]
    for year, r in table.iterrows():
        lines.append(f"| {year} | " + " | ".join("" if pd.isna(v) else f"{v:.1%}" for v in r) + " |")
    sp500 = cov[cov["index"] == "sp500"]
    below = [
        f"{m:%Y-%m}"
        for m, s in zip(sp500["month"], sp500["share"], strict=True)
        if s < (0.95 if m.year >= 2008 else 0.90)
    ]
    lines += [
        "",
        "Below target (sp500): " + ", ".join(below) + ".",
        "",
        "The three worst S&P 500 months and their unpriced members:",
        "",
    ]
    for worst in sp500.nsmallest(3, "share").itertuples(index=False):
        lines.append(
            f"- {worst.month:%Y-%m-%d}: {worst.priced}/{worst.members} ({worst.share:.1%}); missing: {worst.missing}"
        )
    lines += [
        "",
        "Why: each Stooq dump holds only the names listed on its date, so a company that died between "
        "2012-09 (the end of the raw 2000-2012 set) and 2013-02 (the start of WIKI), or between 2017-11 and "
        "2025-07, lacks those months; names that died 2005-2007 outside the 2008/2012 lists are in no source; "
        "LBO'd or reused symbols are served under SYMBOL_YEAR (index_membership). Sources not used for a "
        "company because they disagree with a nearer one:",
        "",
    ]
    for bad in rejects.itertuples(index=False):
        lines.append(f"- {bad.identity}: {bad.source} ({bad.reason})")
    return "\n".join([*lines, *([more] if more else []), "", MARK_END, ""])


def prices_markdown(added: pd.DataFrame, identity: pd.DataFrame) -> str:
    """The package's ``prices`` rows by year, and the tickers left out as another company's.

    Example:
        >>> added = pd.DataFrame({"ticker": ["A"], "time": pd.to_datetime(["2024-01-02"], utc=True)})
        >>> ident = pd.DataFrame({"ticker": ["A", "B"], "same": [True, False], "within": [1.0, 0.1]})
        >>> "| 2024 | 1 | 1 |" in prices_markdown(added, ident)
        True
    """
    year = added["time"].dt.year
    lines = [
        "",
        "### `prices`: as-traded bars the package adds (S&P 500 members of 2026-03, 2016-03-14 .. 2026-03-13)",
        "",
        "Installed, `/prices` and `fdkit.prices` serve these beside the bundled lake's bars (one dataset): "
        "the bars of data-real-6's S&P 500 source for every ticker and day the bundled lake has none of, as "
        "traded on the split basis of 2026-02-25 (see the bundled `prices` provenance), with `adj_close`.",
        "",
        "| year | tickers | bars |",
        "|---|---:|---:|",
    ]
    for y in sorted(year.unique()):
        part = added[year == y]
        lines.append(f"| {y} | {part['ticker'].nunique()} | {len(part):,} |")
    other = identity[~identity["same"]]
    named = ", ".join(f"{t} ({w:.0%})" for t, w in zip(other["ticker"], other["within"], strict=True))
    lines += [
        "",
        "Left out, their 2016-2017 closes another company's than the bundled lake's under the symbol "
        f"(within 1% on this share of common days): {named}",
        "",
    ]
    return "\n".join(lines)


def put_section(sources_md: Path, section: str) -> None:
    """Replace (or append) the marked coverage section of ``SOURCES.md``.

    Example:
        >>> import tempfile
        >>> md = Path(tempfile.mkdtemp()) / "SOURCES.md"
        >>> _ = md.write_text("# lake")
        >>> put_section(md, " ".join([MARK_BEGIN, "v1", MARK_END]))
        >>> put_section(md, " ".join([MARK_BEGIN, "v2", MARK_END]))
        >>> md.read_text().count("v2"), md.read_text().count("v1")
        (1, 0)
    """
    text = sources_md.read_text() if sources_md.exists() else ""
    pattern = re.compile(re.escape(MARK_BEGIN) + r".*?" + re.escape(MARK_END) + r"\n?", re.S)
    text = pattern.sub("", text).rstrip("\n") + "\n\n" + section
    sources_md.write_text(text)


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docstring).

    Args:
        argv: arguments (default ``sys.argv[1:]``).

    Returns:
        The exit status.
    """
    ap = argparse.ArgumentParser(prog="python -m refdata.history_package", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("source", nargs="?", default=str(ROOT.parent / "shared" / "data-real"), help="data-real folder")
    ap.add_argument("--lake", default=str(ROOT / "data"), help="the built lake (index_membership, splits)")
    ap.add_argument("--out", default=str(ROOT / "history" / "fdkit_history" / "_data"), help="package data folder")
    ap.add_argument("--docs", default=str(ROOT / "history" / "SOURCES.md"), help="the package's SOURCES.md")
    args = ap.parse_args(argv)
    lake = Path(args.lake)
    inputs = {name: read_dataset(lake, name) for name in PRICE_HISTORY.needs}
    result = run_stage(PRICE_HISTORY, source_roots(Path(args.source)), inputs)
    history = result["price_history"]
    files = write_history(history, Path(args.out))
    files += write_dataset(Path(args.out), "delistings", result["delistings"], schema="delistings", layout="parquet")
    bars = run_stage(SP500_BARS, source_roots(Path(args.source)), {"splits": inputs["splits"]})["sp500_bars"]
    bundled = read_dataset(lake, "prices")
    known = set(bundled["ticker"].astype(str)) | set(prices_left_out())
    known |= set(read_dataset(lake, "income_statements", columns=["ticker"])["ticker"].astype(str))
    last = bundled.groupby(bundled["ticker"].astype(str))["time"].max()
    broad_end = last[last < pd.Timestamp("2018-01-01", tz="UTC")].max()  # the 2015-2017 source's last day
    added, identity = prices_added(bundled, bars, known, broad_end)
    files.append(write_prices(added, lake, Path(args.out)))
    # the moves beyond the lake's limit on the added days that Stooq prints too: the validator's reviewed table
    union = pd.concat([bundled[["ticker", "time", "close"]], added[["ticker", "time", "close"]]], ignore_index=True)
    union = union[union["ticker"].astype(str).isin(set(added["ticker"]))]
    syms = moves.symbols_of(set(added["ticker"]), inputs["index_membership"])
    roots = source_roots(Path(args.source))
    paths = {rel: roots[rel.split("/", 1)[0]] / rel.split("/", 1)[1] for rel in moves.STOOQ}
    found = moves.confirmed(union, moves.printed_returns(paths, set().union(*syms.values())), syms)
    days = set(zip(added["ticker"].astype(str), added["time"].dt.strftime("%Y-%m-%d"), strict=True))
    found = found[[k in days for k in zip(found["ticker"], found["day"], strict=True)]]
    today = dt.date.today().isoformat()  # (a move found again keeps the day it was first found)
    replace_rows(moves.as_reviewed_facts(found, today), moves.REVIEWER)
    months = pd.date_range("2005-01-31", "2025-06-30", freq="ME").strftime("%Y-%m-%d").tolist()
    cov = coverage(history[["ticker", "date"]], inputs["index_membership"], months)
    section = coverage_markdown(cov, result["history_rejects"], more=prices_markdown(added, identity))
    put_section(lake / "SOURCES.md", section)
    Path(args.docs).write_text("# fdkit-history: provenance and coverage\n\n" + section)
    size = sum(f.stat().st_size for f in files) / 1e6
    print(f"prices: {len(added):,d} rows added, {added['ticker'].nunique():,d} tickers; {len(found)} moves confirmed")
    print(
        f"price_history: {len(history):,d} rows, {history['ticker'].nunique():,d} companies, {len(files)} files, "
        f"{size:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
