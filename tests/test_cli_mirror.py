"""The command line and the mirror loop: mirror -> serve answers equal the original; pandas, DuckDB, Dask read it."""

from __future__ import annotations

import json
import subprocess
import sys

import deltalake
import pandas as pd
import pytest
import requests

import fdkit
import fdkit.server
from fdkit.cli import main
from fdkit.mirror import mirror

TICKERS = ["AAPL", "NVDA"]
DATASETS = [
    "income_statements",
    "balance_sheets",
    "prices",
    "company_facts",
    "segmented_revenues",
    "news",
    "filings",
    "earnings",
]


@pytest.fixture(scope="module")
def mirrored(ref_server, tmp_path_factory):
    lake = tmp_path_factory.mktemp("mirror")
    client = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)
    report = mirror(TICKERS, DATASETS, lake, client=client, start_date="2003-01-01", end_date="2026-03-31")
    return lake, report, client


def test_mirror_report_and_resume(mirrored, ref_server):
    lake, report, client = mirrored
    assert not report.failed
    assert len(report.done) == len(TICKERS) * len(DATASETS)
    assert (lake / "prices" / "_delta_log").is_dir()  # a Delta table: one commit per (dataset, ticker)
    assert len(deltalake.DeltaTable(str(lake / "prices")).history()) >= len(TICKERS)
    again = mirror(TICKERS, DATASETS, lake, client=client)
    assert not again.done and len(again.skipped) == len(report.done)
    bad = mirror(["ZZZZ"], ["company_facts"], lake, client=client)
    assert list(bad.failed) == [("company_facts", "ZZZZ")]


REQUESTS = [
    ("/financials/income-statements", {"ticker": "AAPL", "period": "quarterly", "limit": 30}),
    ("/financials/balance-sheets", {"ticker": "NVDA", "period": "annual", "limit": 10}),
    (
        "/prices",
        {"ticker": "NVDA", "interval": "week", "start_date": "2020-01-01", "end_date": "2024-12-31", "limit": 400},
    ),
    ("/prices", {"ticker": "AAPL", "interval": "day", "start_date": "2023-06-01", "end_date": "2023-06-30"}),
    ("/company/facts", {"ticker": "NVDA"}),
    ("/financials/segmented-revenues", {"ticker": "AAPL", "period": "annual", "limit": 3}),
    ("/news", {"ticker": "AAPL", "limit": 20}),
    ("/filings", {"ticker": "NVDA", "filing_type": "10-K", "limit": 5}),
    ("/earnings", {"ticker": "AAPL", "limit": 4}),
]


def _walk(base, key, path, params):
    h = {"X-API-KEY": key}
    body = requests.get(base + path, params=params, headers=h, timeout=30).json()
    pages = [body]
    while "next_page_url" in body:
        body = requests.get(body["next_page_url"], headers=h, timeout=30).json()
        pages.append(body)
    for p in pages:
        p.pop("next_page_url", None)
    return pages


def test_mirror_then_serve_answers_the_same_json(mirrored, ref_server):
    lake, _, _ = mirrored
    with fdkit.server.start(data=lake) as srv:
        for path, params in REQUESTS:
            a = _walk(ref_server.base_url, ref_server.api_key, path, params)
            b = _walk(srv.base_url, srv.api_key, path, params)
            assert a == b, path


def test_lake_reads_with_pandas_duckdb_and_dask(mirrored):
    # the Delta table through its log, without fdkit: pandas, DuckDB over the Arrow dataset, Dask over its files
    lake, _, _ = mirrored
    table = deltalake.DeltaTable(str(lake / "prices"))
    pdf = table.to_pandas()
    assert set(pdf["ticker"].astype(str)) == set(TICKERS)
    duckdb = pytest.importorskip("duckdb")
    prices = table.to_pyarrow_dataset()  # noqa: F841  (DuckDB finds the Arrow dataset by its variable name)
    n = duckdb.sql("select count(*) from prices").fetchall()[0][0]
    assert n == len(pdf)
    by = duckdb.sql("select ticker, count(*) n from prices group by ticker order by ticker").fetchall()
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.read_parquet(table.file_uris())  # the live files of the current version
    counts = ddf.groupby("ticker").size().compute()
    assert sorted((str(k), int(v)) for k, v in counts.items()) == [(t, int(c)) for t, c in by]
    assert float(ddf["close"].sum().compute()) == pytest.approx(float(pdf["close"].sum()))


def test_cli_get_writes_parquet_with_documented_dtypes(tmp_path):
    out = tmp_path / "p.parquet"
    assert (
        main(["get", "prices", "AAPL", "--start-date", "2023-01-03", "--end-date", "2023-03-31", "-o", str(out)]) == 0
    )
    df = pd.read_parquet(out)
    assert list(df.index.names) == ["ticker", "time"] and str(df.index.dtypes["time"]) == "datetime64[ns]"
    assert df.dtypes.astype(str).to_dict() == {
        "time_milliseconds": "Int64",
        "open": "float64",
        "high": "float64",
        "low": "float64",
        "close": "float64",
        "volume": "Int64",
        "adj_close": "float64",
        "basis": "category",
    }
    csv = tmp_path / "f.csv"
    assert main(["get", "company_facts", "AAPL", "NVDA", "-o", str(csv)]) == 0
    assert len(pd.read_csv(csv)) == 2


def test_cli_bad_arguments_one_line_exit_2():
    for argv in (
        ["get", "prices", "AAPL", "--interval", "hourly"],
        ["get", "nope"],
        ["mirror", "--tickers", "A"],
        ["get", "prices", "AAPL"],
        ["get", "prices", "AAPL", "--start-date", "2024-01-02", "--end-date", "2024-01-03", "-o", "x.xlsx"],
    ):
        r = subprocess.run([sys.executable, "-m", "fdkit.cli", *argv], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2, (argv, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if ln and not ln.startswith("fdkit: no API key")]
        assert len(lines) == 1 and "error" in lines[0], (argv, r.stderr)


def test_cli_help_and_cache_commands(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", "get", "prices", "--help"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and "--start-date" in r.stdout and "--interval" in r.stdout
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    assert main(["cache", "clear", "--cache-dir", str(tmp_path)]) == 0


def test_cli_get_stdout_csv(capsys):
    assert main(["get", "interest_rate_snapshot", "FED", "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("bank,date") and "FED" in out
    json.dumps(out)


def test_mirror_of_crypto_bars_sends_what_the_service_requires(tmp_path, ref_client):
    report = mirror(
        ["BTC-USD"],
        ["crypto_prices"],
        tmp_path / "lake",
        client=ref_client,
        start_date="2021-01-01",
        end_date="2021-03-31",
    )
    assert report.done == [("crypto_prices", "BTC-USD")] and not report.failed


def test_the_mirror_keeps_the_latest_bar_projection_every_so_many_commits(ref_server, tmp_path, monkeypatch):
    """A mirror commits one ticker at a time and brings the market snapshot's projection up to date every
    ``PROJECTION_EVERY`` commits and at the end (not after each: that re-reads the log and the projection)."""
    import fdkit.mirror as mirror_module
    from fdkit.lake import latest
    from fdkit.lake.io import DatasetFiles, read_dataset

    refreshed = []
    real = mirror_module.keep_projections
    monkeypatch.setattr(mirror_module, "PROJECTION_EVERY", 1)
    monkeypatch.setattr(
        mirror_module, "keep_projections", lambda root, name: (refreshed.append(name), real(root, name))
    )
    lake = tmp_path / "lake"
    client = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)
    report = mirror(TICKERS, ["prices"], lake, client=client, start_date="2023-01-01", end_date="2023-03-31")
    assert not report.failed and report.rows["prices"] > 100
    assert refreshed == ["prices", "prices"]  # after each commit (every 1 here), none more at the end
    listing = DatasetFiles.of(lake, "prices")
    assert len(listing.files) == 2  # a commit (a file) per ticker
    kept = latest.stored(lake, "prices")
    assert kept.seen == {f.relative_to(listing.base).as_posix() for f in listing.files}
    want = latest.last_traded(read_dataset(lake, "prices"))
    assert kept.frame()["close"].tolist() == want["close"].tolist() and len(want) == 2

    refreshed.clear()
    monkeypatch.setattr(mirror_module, "PROJECTION_EVERY", 256)
    mirror(TICKERS, ["prices"], lake, client=client, start_date="2023-01-01", end_date="2023-06-30", force=True)
    assert refreshed == ["prices"]  # once, at the end
    assert (
        latest.stored(lake, "prices").frame()["close"].tolist()
        == latest.last_traded(read_dataset(lake, "prices"))["close"].tolist()
    )
