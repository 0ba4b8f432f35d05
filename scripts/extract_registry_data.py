"""Extract the data fdkit's build takes from registry packages into ``sources/registry/`` (run by hand, rarely).

The build never imports a registry package: it reads the small, deterministic extracts this script writes, so a
rebuild needs only the repository and ``../shared``. Each extract names its package and version in
``sources/registry/SOURCES.md``.

* ``cpi_release_series.csv.gz``: the twelve CPI-U series of the BLS CPI release's summary table (U.S. city average;
  all items not seasonally adjusted, the eleven others seasonally adjusted), monthly, from the ``cpi`` package's
  ``cpi.db`` (palewire/cpi 2.1.0, MIT licence; BLS CPI database, public domain).

Usage:
    python -m venv /tmp/cpi && /tmp/cpi/bin/pip install cpi==2.1.0
    python scripts/extract_registry_data.py /tmp/cpi/lib/python3.*/site-packages/cpi/cpi.db
"""

from __future__ import annotations

import gzip
import io
import sqlite3
import sys
from pathlib import Path

import pandas as pd

from refdata.macro import CPI_SERIES

OUT = Path(__file__).resolve().parents[1] / "sources" / "registry"


def extract_cpi(db: Path) -> pd.DataFrame:
    """The monthly observations of :data:`CPI_SERIES` from the ``cpi`` package's database.

    Args:
        db: the package's ``cpi.db``.

    Returns:
        ``series_id``, ``title``, ``date`` (first of the month), ``value``, by series and date.
    """
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        marks = ",".join("?" * len(CPI_SERIES))
        df = pd.read_sql_query(
            f"select s.id as series_id, s.title, i.year, i.period, i.value from indexes i join series s "
            f"on s.id = i.series where s.id in ({marks}) and i.period between 'M01' and 'M12'",
            con,
            params=list(CPI_SERIES),
        )
    df["date"] = pd.to_datetime(df["year"].astype(str) + "-" + df["period"].str[1:] + "-01")
    return df[["series_id", "title", "date", "value"]].sort_values(["series_id", "date"]).reset_index(drop=True)


def write_csv_gz(df: pd.DataFrame, path: Path) -> None:
    """Write ``df`` as a gzip CSV whose bytes depend on the rows only (no timestamp in the gzip header)."""
    text = df.to_csv(index=False, date_format="%Y-%m-%d").encode()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(text)
    path.write_bytes(buf.getvalue())


def main(argv: list[str]) -> int:
    """Write every extract; argv: the path of the ``cpi`` package's ``cpi.db``."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    df = extract_cpi(Path(argv[0]))
    write_csv_gz(df, OUT / "cpi_release_series.csv.gz")
    print(
        f"cpi_release_series.csv.gz: {len(df)} rows, {df['series_id'].nunique()} series, "
        f"{df['date'].min():%Y-%m} .. {df['date'].max():%Y-%m}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
