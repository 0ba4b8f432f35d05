"""The reference-data pipeline: the registered stages, the lake they write, and the command line.

Usage::

    python -m refdata [SOURCE_DIR] [--out data]
    python scripts/build_reference_data.py [SOURCE_DIR] [--out data]

``SOURCE_DIR`` is ``../shared/data-real``; its sibling folders (``data-real-2``, ...) are the other source roots.
Deterministic: the same sources give the same rows (``tests/test_reference_data.py`` rebuilds into a temporary
directory and compares every dataset row for row). Every output dataset, its sources, licences, row counts and
date ranges are written to ``SOURCES.md``; the us-gaap concept -> field mapping to ``CONCEPTS.md``. Nothing is
invented: values are copied, re-based (prices), differenced (fiscal Q4, quarterly cash flows), summed (TTM) or
computed by a documented formula (metrics, estimates, earnings summaries).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from fdkit.lake.io import read_dataset, write_dataset
from refdata import (
    accessions,
    company,
    crypto,
    derived,
    distributions,
    earnings_dates,
    facts,
    filings,
    fsds,
    index_membership,
    macro,
    news,
    ownership,
    prices,
    pystock,
    pystock_identity,
    segments,
    sp500_bars,
    splits,
    statements,
    universe,
    vintages,
    xbrl_statements,
)
from refdata.driver import missing_sources, order, run_stages
from refdata.sources_doc import write_sources_md
from refdata.stage import Stage, StageError

__all__ = ["STAGES", "build", "main", "source_roots", "write_lake"]

#: every stage of the build, in registration order (the driver runs them in dependency order, ties in this order)
STAGES: tuple[Stage, ...] = (
    *universe.STAGES,
    *filings.STAGES,
    *facts.STAGES,
    *accessions.STAGES,
    *prices.STAGES,
    *splits.STAGES,
    *sp500_bars.STAGES,
    *distributions.STAGES,
    *pystock_identity.STAGES,
    *pystock.STAGES,
    *fsds.STAGES,
    *xbrl_statements.STAGES,
    *statements.STAGES,
    *vintages.STAGES,
    *crypto.STAGES,
    *segments.STAGES,
    *company.STAGES,
    *index_membership.STAGES,
    *ownership.STAGES,
    *macro.STAGES,
    *news.STAGES,
    *earnings_dates.STAGES,
    *derived.STAGES,
)

#: the checkout this module lives in (the default source is ``../shared/data-real`` beside it, the lake ``data/``)
ROOT = Path(__file__).resolve().parents[1]
#: data extracted from registry packages (``scripts/extract_registry_data.py``), kept in the repository: the source
#: folder ``registry``
REGISTRY = ROOT / "sources" / "registry"


def source_roots(src: Path) -> dict[str, Path]:
    """The source folders a build reads: ``data-real`` is ``src``, the others its sibling folders.

    Args:
        src: the ``data-real`` folder.

    Returns:
        Folder name (the first part of a stage's source path) -> path; ``registry`` is a sibling folder of that
        name if there is one, else the repository's ``sources/registry`` (extracts from registry packages).

    Example:
        >>> source_roots(Path("/x/shared/data-real"))["data-real"].as_posix()
        '/x/shared/data-real'
    """
    roots = {p.name: p for p in sorted(src.parent.iterdir()) if p.is_dir()} if src.parent.is_dir() else {}
    roots["data-real"] = src
    roots.setdefault("registry", REGISTRY)  # a sibling folder named registry (a test's fixture tree) comes first
    return roots


def write_lake(out: Path, stages: Sequence[Stage], results: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Write every lake output of the stages (in name order) and read each back as the service will.

    A dataset whose output has a ``typed`` hook (rows that follow no record schema exactly) is typed by it first;
    each is written with :func:`fdkit.lake.io.write_dataset` and its declared schema.

    Args:
        out: the lake folder (made if missing).
        stages: the stages.
        results: every output by name.

    Returns:
        Dataset name -> its rows as read back.
    """
    out.mkdir(parents=True, exist_ok=True)
    outputs = sorted((o for s in stages for o in s.lake_outputs), key=lambda o: o.name)
    written = {}
    for o in outputs:
        df = results[o.name]
        if o.typed is not None:
            df = o.typed(df)
        write_dataset(out, o.name, df, schema=o.schema, layout="parquet")
        written[o.name] = read_dataset(out, o.name, schema=o.schema)
    return written


def build(
    src: Path,
    out: Path,
    *,
    stages: Sequence[Stage] = STAGES,
    docs: bool = True,
    on_done: Callable[[Stage, float], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Run the stages on the sources, write the lake and (``docs``) its ``SOURCES.md`` and ``CONCEPTS.md``.

    Args:
        src: the ``data-real`` folder (its siblings are the other source folders).
        out: the lake folder.
        stages: the stages to run (default: all registered).
        docs: write ``SOURCES.md`` and ``CONCEPTS.md``.
        on_done: called with each stage and its run time in seconds.

    Returns:
        Dataset name -> its rows as written.

    Raises:
        StageError: a declared source file is missing, or a stage breaks its contract.
    """
    roots = source_roots(src)
    missing = missing_sources(stages, roots)
    if missing:
        raise StageError("source files missing: " + "; ".join(missing))
    ordered = order(stages)
    results = run_stages(ordered, roots, on_done=on_done)
    written = write_lake(out, ordered, results)
    if docs:
        write_sources_md(out, written, ordered, results.get("price_factors"))
    return written


def main(argv: list[str] | None = None) -> int:
    """The command line: build the lake from a source folder.

    Args:
        argv: arguments (default ``sys.argv[1:]``).

    Returns:
        The exit status.
    """
    ap = argparse.ArgumentParser(prog="python -m refdata", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("source", nargs="?", default=str(ROOT.parent / "shared" / "data-real"), help="data-real folder")
    ap.add_argument("--out", default=str(ROOT / "data"), help="lake folder to write (default: the checkout's data/)")
    ap.add_argument("--stages", action="store_true", help="list the stages in run order and exit")
    args = ap.parse_args(argv)
    if args.stages:
        for s in order(STAGES):
            print(f"{s.name:24s} {s.title}")
        return 0
    src = Path(args.source)
    if not (src / "SOURCES.md").exists():
        print(f"build_reference_data: {src} is not a data-real folder (no SOURCES.md)", file=sys.stderr)
        return 2

    def report(stage: Stage, seconds: float) -> None:
        print(f"stage {stage.name:24s} {seconds:6.2f} s", flush=True)

    written = build(src, Path(args.out), on_done=report)
    for name, df in sorted(written.items()):
        print(f"{name:28s} {len(df):>8,d} rows")
    return 0
