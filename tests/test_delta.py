"""The lake's Delta tables: writes are commits with the catalog's schema, plain Parquet lakes convert, optimize and
vacuum keep what time travel needs, the server's store prunes by the log's statistics, and readers other than
fdkit (pandas, pyarrow, DuckDB, Polars, Dask) read the same tables."""

from __future__ import annotations

import shutil

import deltalake
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from fdkit.cli import main
from fdkit.errors import LakeError
from fdkit.lake import LakeReader, bundled_data_dir, delta, is_delta, read_dataset, write_dataset
from fdkit.lake.tables import convert_lake, optimize_lake, vacuum_lake
from fdkit.server.store import Store

DATA = bundled_data_dir()
RATES = pd.DataFrame(
    {
        "bank": ["ECB", "FED"],
        "date": ["2024-06-12", "2024-09-19"],
        "name": ["Main refinancing operations", "Federal Funds Rate"],
        "rate": [4.25, 4.875],
    }
)


def _prices(tickers: list[str]) -> pd.DataFrame:
    df = read_dataset(DATA, "prices", where=None)
    return df[df["ticker"].astype(str).isin(tickers)]


@pytest.fixture(scope="module")
def delta_lake(tmp_path_factory):
    """Three tickers' prices, one commit each (as ``fdkit mirror`` writes), and the interest rates."""
    root = tmp_path_factory.mktemp("delta") / "lake"
    prices = _prices(["AAPL", "MSFT", "NVDA"])
    for _, rows in prices.groupby(prices["ticker"].astype(str), observed=True):
        write_dataset(root, "prices", rows, partition_by="ticker", mode="append", part="part-0")
    write_dataset(root, "interest_rates", RATES)
    return root


def test_a_write_is_a_commit_with_the_catalog_schema(delta_lake):
    table = deltalake.DeltaTable(str(delta_lake / "prices"))
    assert table.version() == 2 and len(table.file_uris()) == 3  # one commit, one file per ticker
    schema = pa.schema(table.schema().to_arrow())
    assert schema.field("time").type == pa.timestamp("us", tz="UTC") and schema.field("ticker").type == pa.string()
    back = LakeReader(delta_lake).read("prices")
    declared = read_dataset(DATA, "prices").dtypes
    assert {c: str(d) for c, d in back.dtypes.items()} == {c: str(d) for c, d in declared.items()}  # as ever
    assert len(back) == len(_prices(["AAPL", "MSFT", "NVDA"]))


def test_a_ticker_written_again_replaces_its_rows_in_one_commit(tmp_path):
    rows = _prices(["AAPL"])
    write_dataset(tmp_path, "prices", rows, partition_by="ticker", mode="append", part="part-0")
    write_dataset(tmp_path, "prices", rows.tail(10), partition_by="ticker", mode="append", part="part-0")
    assert len(read_dataset(tmp_path, "prices")) == 10
    old = delta.open_table(tmp_path / "prices", version=0).to_pyarrow_table()
    assert old.num_rows == len(rows)  # time travel: the first version is still there


def test_schema_enforcement_and_an_added_column(tmp_path):
    write_dataset(tmp_path, "interest_rates", RATES)
    with pytest.raises(ValueError):  # the catalog's schema first: a rate must be a number
        write_dataset(tmp_path, "interest_rates", RATES.assign(rate="high"), mode="append")
    with pytest.raises(LakeError, match="do not fit"):  # and the table's own, for a writer that skips the catalog
        delta.write(tmp_path / "interest_rates", pa.table({"bank": ["ECB"], "rate": ["x"]}), mode="append")
    extra = RATES.assign(date=["2025-01-30", "2025-01-29"], decided_by=pd.Series(["council", "fomc"], dtype="string"))
    write_dataset(tmp_path, "interest_rates", extra, mode="append")  # schema evolution: a new column
    df = read_dataset(tmp_path, "interest_rates")
    assert len(df) == 4 and df["decided_by"].isna().sum() == 2 and set(df["decided_by"].dropna()) == {"council", "fomc"}
    assert "decided_by" in pa.schema(delta.open_table(tmp_path / "interest_rates").schema().to_arrow()).names


def test_a_table_with_deletion_vectors_is_refused_by_name(tmp_path):
    write_dataset(tmp_path, "interest_rates", RATES)
    table = deltalake.DeltaTable(str(tmp_path / "interest_rates"))
    table.alter.set_table_properties({"delta.enableDeletionVectors": "true"})
    with pytest.raises(LakeError, match="deletionVectors"):
        LakeReader(tmp_path).read("interest_rates")


def test_the_store_reads_one_ticker_by_the_logs_statistics(delta_lake):
    listing = LakeReader(delta_lake).files("prices")
    assert {b for s in listing.stats.values() for b in s["ticker"]} == {"AAPL", "MSFT", "NVDA"}
    store = Store(delta_lake, memory_bytes=2**20)  # too small to read the dataset whole: one ticker at a time
    rows = store.rows("prices", "MSFT")
    assert set(rows["ticker"].astype(str)) == {"MSFT"} and store.rows_read == len(rows)
    assert store.keys_of("prices") == ["AAPL", "MSFT", "NVDA"]  # from the log alone


def test_convert_optimize_vacuum_round_trip_with_time_travel(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    for name in ("prices", "income_statements", "interest_rates"):
        shutil.copytree(DATA / name, lake / name)
    before = {n: LakeReader(lake).read(n) for n in ("prices", "income_statements")}
    lines = convert_lake(lake)
    assert all("in place" in line for line in lines) and all(is_delta(lake, n) for n in before)
    for name, df in before.items():
        pd.testing.assert_frame_equal(LakeReader(lake).read(name), df)
    write_dataset(
        lake,
        "prices",
        before["prices"].query("ticker == 'AAPL'").tail(5),
        partition_by="ticker",
        mode="append",
        part="part-0",
    )
    optimize_lake(lake, ["prices"])
    prices = delta.open_table(lake / "prices")
    assert prices.version() == 2
    aapl = LakeReader(lake).read("prices", where={"ticker": "AAPL"})
    assert (
        len(aapl) == 5
        and len(LakeReader(lake).read("prices"))
        == len(before["prices"]) - len(before["prices"].query("ticker == 'AAPL'")) + 5
    )
    first = delta.open_table(lake / "prices", version=0).to_pyarrow_table()  # time travel to the converted files
    assert first.num_rows == len(before["prices"])
    assert vacuum_lake(lake, retain_hours=0, dry_run=True, names=["prices"])[0].endswith("would be deleted")
    assert vacuum_lake(lake, retain_hours=0, names=["prices"]) == ["prices: 2 files deleted"]
    assert (
        len(LakeReader(lake).read("prices"))
        == len(before["prices"]) - len(before["prices"].query("ticker == 'AAPL'")) + 5
    )
    with pytest.raises(Exception):  # noqa: B017  (the files of version 0 are gone)
        delta.open_table(lake / "prices", version=0).to_pyarrow_table()


def test_a_mixed_layout_converts_by_a_rewrite_keeping_the_old_files(tmp_path):
    # the flat file beside an older receiver's ticker= partitions: not one table, so it is rewritten
    lake = tmp_path / "lake"
    shutil.copytree(DATA / "income_statements", lake / "income_statements")
    flat = read_dataset(DATA, "income_statements")
    amended = flat[flat["ticker"].astype(str) == "AAPL"].tail(1).assign(revenue=1.0)
    write_dataset(lake, "income_statements", amended, partition_by="ticker", mode="append", part="x", layout="parquet")
    expected = LakeReader(lake).read("income_statements")  # the later record replaces its key's
    line = convert_lake(lake)[0]
    assert "rewritten as a Delta table" in line and is_delta(lake, "income_statements")
    got = LakeReader(lake).read("income_statements")
    assert len(got) == len(expected) and (got["revenue"] == 1.0).sum() == 1
    assert any((lake / "_legacy").glob("income_statements-*/ticker=AAPL/x.parquet"))


def test_the_lake_commands_answer_bad_input_in_one_line(tmp_path, capsys):
    assert main(["lake", "vacuum", str(tmp_path / "missing")]) == 2
    assert main(["lake", "optimize", str(DATA), "--dataset", "nope"]) == 2
    shutil.copytree(DATA / "interest_rates", tmp_path / "lake" / "interest_rates")
    assert main(["lake", "vacuum", str(tmp_path / "lake"), "--retain-hours", "-3"]) == 2
    assert main(["lake", "optimize", str(tmp_path / "lake"), "--dataset", "interest_rates"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 4
    assert "fdkit lake convert" in err.strip().splitlines()[-1]
    assert main(["lake", "convert", str(tmp_path / "lake")]) == 0
    assert main(["lake", "optimize", str(tmp_path / "lake")]) == 0
    assert main(["lake", "vacuum", str(tmp_path / "lake"), "--retain-hours", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("interest_rates: converted")
    assert out[-1] == "interest_rates: 0 files deleted"  # one file: nothing was compacted


# -- readers other than fdkit, as docs/LAKE.md shows them --------------------------------------------------------
def test_pandas_and_pyarrow_read_the_delta_lake(delta_lake):
    table = deltalake.DeltaTable(str(delta_lake / "prices"))
    pdf = table.to_pandas(filters=[("ticker", "=", "NVDA")])
    assert set(pdf["ticker"]) == {"NVDA"} and len(pdf) == len(_prices(["NVDA"]))
    ds = table.to_pyarrow_dataset()
    assert ds.count_rows(filter=pc.field("ticker") == "AAPL") == len(_prices(["AAPL"]))


def test_duckdb_reads_the_delta_lake(delta_lake):
    duckdb = pytest.importorskip("duckdb")
    prices = deltalake.DeltaTable(str(delta_lake / "prices")).to_pyarrow_dataset()  # noqa: F841  (by name below)
    n = duckdb.sql("select count(*) from prices where ticker = 'MSFT'").fetchall()[0][0]
    assert n == len(_prices(["MSFT"]))


def test_polars_reads_the_delta_lake(delta_lake):
    pl = pytest.importorskip("polars", reason="polars is not installed (pip install polars)")
    df = pl.read_delta(str(delta_lake / "prices")).filter(pl.col("ticker") == "AAPL")
    assert df.height == len(_prices(["AAPL"]))


def test_dask_reads_the_delta_lake(delta_lake):
    dd = pytest.importorskip("dask.dataframe")
    files = deltalake.DeltaTable(str(delta_lake / "prices")).file_uris()  # the current version's files
    counts = dd.read_parquet(files).groupby("ticker").size().compute()
    assert {str(k): int(v) for k, v in counts.items()} == {t: len(_prices([t])) for t in ("AAPL", "MSFT", "NVDA")}


def test_an_older_mirror_converts_in_place_partitioned_and_takes_new_writes(tmp_path):
    # `ticker=X/part-0.parquet` folders, as fdkit mirror wrote before: one table partitioned by ticker, no rewrite
    rows = read_dataset(DATA, "income_statements")
    rows = rows[rows["ticker"].astype(str).isin(["AAPL", "MSFT"])]
    write_dataset(
        tmp_path, "income_statements", rows, partition_by="ticker", mode="append", part="part-0", layout="parquet"
    )
    aapl = rows[rows["ticker"].astype(str) == "AAPL"].tail(3)
    write_dataset(tmp_path, "income_statements", aapl, partition_by="ticker", mode="append", part="part-0")
    table = delta.open_table(tmp_path / "income_statements")
    assert table.metadata().partition_columns == ["ticker"] and table.version() == 1
    assert (tmp_path / "income_statements" / "ticker=MSFT" / "part-0.parquet").exists()  # converted in place
    got = LakeReader(tmp_path).read("income_statements")
    assert got["ticker"].astype(str).value_counts().to_dict() == {
        "MSFT": int((rows["ticker"].astype(str) == "MSFT").sum()),
        "AAPL": 3,
    }
    assert len(LakeReader(tmp_path).read("income_statements", where={"ticker": "AAPL"})) == 3


def test_the_first_write_into_a_plain_dataset_converts_it_with_one_log_line(tmp_path, caplog):
    shutil.copytree(DATA / "interest_rates", tmp_path / "interest_rates")
    with caplog.at_level("WARNING", logger="fdkit.lake"):
        write_dataset(tmp_path, "interest_rates", RATES.assign(date=["2025-03-06", "2025-03-19"]), mode="append")
    assert [r.getMessage() for r in caplog.records] == ["interest_rates: converted to a Delta table in place (1 files)"]
    assert len(read_dataset(tmp_path, "interest_rates")) == len(read_dataset(DATA, "interest_rates")) + 2
