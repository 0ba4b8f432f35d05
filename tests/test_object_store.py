"""A lake in an object store: ``fdkit serve --data s3://bucket/lake`` against a real local S3 server (moto).

The bundled lake is copied into a bucket of a ``moto_server`` started on a free port; the endpoint, credentials and
region reach fdkit through the standard AWS environment variables only. The S3 lake answers every catalog example
exactly as the local lake does; reads through it still prune partitions and row groups; a missing bucket or refused
credentials is a one-line error naming the URL; a request value never becomes an object key.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
import requests
from examples import EXAMPLES, ask, comparable
from lakes import TEST_TICKERS, write_test_lake
from processes import ROOT, Serve, env_with, stop, wait_for

from fdkit.errors import LakeError
from fdkit.lake.io import DatasetFiles, UnsafePathError, _row_groups, bundled_data_dir, conform, write_dataset
from fdkit.lake.reader import LakeReader

pytest.importorskip("moto", reason="the object-store tests need moto[server] (the dev extra)")

BUCKET = "fdkit-test"
KEY = "object-store-key-0123456789"


def aws_env(endpoint: str, **extra: str) -> dict[str, str]:
    """The AWS variables that point a process at the moto server at ``endpoint``."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        **extra,
    }


def new_bucket(mp: pytest.MonkeyPatch, aws: dict[str, str]) -> pafs.FileSystem:
    """This process pointed at moto (``aws`` set through ``mp``) and the test bucket made: its filesystem."""
    for k, v in aws.items():
        mp.setenv(k, v)
    fs, _ = pafs.FileSystem.from_uri(f"s3://{BUCKET}/?allow_bucket_creation=true")
    fs.create_dir(BUCKET)
    return fs


def _moto(log: Path, **env: str) -> tuple[subprocess.Popen, str]:
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-p", "0"], stdout=out, stderr=subprocess.STDOUT, env=env_with(env)
        )
    return proc, wait_for(r"Running on (http://127\.0\.0\.1:\d+)", log, proc).group(1)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A moto S3 server with the bundled lake at ``s3://fdkit-test/lake`` and a hive-partitioned test lake at
    ``s3://fdkit-test/hive``; the AWS variables point this process (and the servers it starts) at it."""
    tmp = tmp_path_factory.mktemp("s3")
    proc, endpoint = _moto(tmp / "moto.log")
    aws = aws_env(endpoint)
    try:
        with pytest.MonkeyPatch.context() as mp:
            fs = new_bucket(mp, aws)
            bundled = LakeReader(bundled_data_dir())
            for name in bundled.names():  # the bundled lake's datasets and those of installed data packages
                pafs.copy_files(
                    str(Path(bundled.home(name)) / name), f"{BUCKET}/lake/{name}", destination_filesystem=fs
                )
                for f in bundled.files(name).files:  # a package's rows of a bundled dataset (fdkit-history's prices)
                    if not Path(f).is_relative_to(Path(bundled.home(name)) / name):
                        pafs.copy_files(str(f), f"{BUCKET}/lake/{name}/{Path(f).name}", destination_filesystem=fs)
            hive = write_test_lake(tmp / "hive", layout="parquet")  # plain Parquet, as an older fdkit wrote
            prices = LakeReader(hive).read("prices")
            (tmp / "flat" / "prices").mkdir(parents=True)  # one file of many row groups, in ticker order
            table = pa.Table.from_pandas(conform(prices, "prices"), preserve_index=False)
            pq.write_table(table, tmp / "flat" / "prices" / "part-0.parquet", row_group_size=50)
            write_dataset(hive, "prices", prices, partition_by="ticker", layout="parquet")
            delta_lake = write_test_lake(tmp / "delta")  # Delta tables, as fdkit writes now
            pafs.copy_files(str(delta_lake), f"{BUCKET}/delta", destination_filesystem=fs)
            pafs.copy_files(str(hive), f"{BUCKET}/hive", destination_filesystem=fs)
            pafs.copy_files(str(tmp / "flat"), f"{BUCKET}/flat", destination_filesystem=fs)
            yield {
                "env": aws,
                "log": tmp / "moto.log",
                "hive": hive,
                "flat": tmp / "flat",
                "tmp": tmp,
                "delta": delta_lake,
            }
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def s3_server(s3):
    keys = s3["tmp"] / "keys"
    keys.write_text(f"{KEY} pro\n")
    srv = Serve(s3["tmp"] / "serve.log", "--data", f"s3://{BUCKET}/lake", "--keys", str(keys), env=s3["env"])
    yield srv
    srv.stop()


def test_fdkit_serve_answers_every_catalog_example_from_s3_as_from_the_local_lake(s3, s3_server, ref_server):
    assert f"datasets from s3://{BUCKET}/lake" in s3_server.log.read_text()
    answered = 0
    with requests.Session() as remote, requests.Session() as local:
        for name, params in EXAMPLES.items():
            if params is None:
                continue
            got = comparable(ask(remote, s3_server.url, KEY, name))
            want = comparable(ask(local, ref_server.base_url, ref_server.api_key, name))
            assert got == want, name
            answered += got[0] == 200
    assert answered >= 40, answered  # every example with data answers 200 from both
    # a walk of pages from the S3 lake gives the local lake's rows
    query = {"ticker": "MSFT", "interval": "day", "start_date": "2022-01-01", "end_date": "2022-12-29"}
    remote_rows, pages = _walk(s3_server.url + "/prices", KEY, query)
    assert remote_rows == _walk(ref_server.base_url + "/prices", ref_server.api_key, query)[0]
    assert len(remote_rows) == 250 and pages == 3


def _walk(url: str, key: str, params: dict | None) -> tuple[list[dict], int]:
    rows: list[dict] = []
    pages = 0
    nxt: str | None = url
    while nxt:
        body = requests.get(nxt, params=params, headers={"X-API-KEY": key}, timeout=60).json()
        rows, nxt, params, pages = rows + body["prices"], body.get("next_page_url"), None, pages + 1
    return rows, pages


def test_reads_through_s3_prune_partitions_and_row_groups(s3):
    log = s3["log"]
    before = log.read_text()
    lake = LakeReader.open(f"s3://{BUCKET}/hive")
    got = lake.read("prices", where={"ticker": "AAA"})
    want = LakeReader(s3["hive"]).read("prices", where={"ticker": "AAA"})
    pd.testing.assert_frame_equal(got, want)
    asked = log.read_text()[len(before) :]
    assert "ticker=AAA" in asked and "ticker=BBB" not in asked  # only AAA's folder was opened
    assert sorted(lake.distinct("prices")) == list(TEST_TICKERS)
    # a flat file: only the row groups whose statistics may hold the ticker are read, as from a local file
    flat = DatasetFiles.of(f"s3://{BUCKET}/flat", "prices")
    local = DatasetFiles.of(s3["flat"], "prices")
    assert flat.filesystem is not None and flat.nbytes == local.nbytes
    kept = _row_groups(flat, pads.dataset([str(f) for f in flat.files], filesystem=flat.filesystem), {"ticker": "BBB"})
    kept_local = _row_groups(local, pads.dataset([str(f) for f in local.files]), {"ticker": "BBB"})
    groups = [[g.id for g in f.row_groups] for f in kept.get_fragments()]
    assert groups == [[g.id for g in f.row_groups] for f in kept_local.get_fragments()]
    assert sum(map(len, groups)) == 5 and flat.open(flat.files[0]).num_row_groups == 10  # 250 of 500 rows
    pd.testing.assert_frame_equal(
        LakeReader(f"s3://{BUCKET}/flat").read("prices", where={"ticker": "BBB"}),
        LakeReader(s3["flat"]).read("prices", where={"ticker": "BBB"}),
    )


def test_a_delta_lake_in_s3_reads_from_its_log_as_the_local_one(s3):
    lake = LakeReader.open(f"s3://{BUCKET}/delta")
    listing = lake.files("prices")
    assert listing.schema is not None and listing.filesystem is not None  # the log's files, opened through S3
    for ticker in TEST_TICKERS:
        pd.testing.assert_frame_equal(
            lake.read("prices", where={"ticker": ticker}),
            LakeReader(s3["delta"]).read("prices", where={"ticker": ticker}),
        )
    assert sorted(lake.distinct("prices")) == list(TEST_TICKERS)
    assert len(lake.read("income_statements")) == len(LakeReader(s3["delta"]).read("income_statements"))


def test_a_request_value_never_becomes_an_object_key(s3, s3_server):
    before = s3["log"].read_text()
    for ticker in ("../hive/prices", "AAPL/../../x", "..", "ticker=AAPL"):
        r = requests.get(
            s3_server.url + "/prices",
            headers={"X-API-KEY": KEY},
            timeout=30,
            params={"ticker": ticker, "interval": "day", "start_date": "2022-01-03", "end_date": "2022-01-31"},
        )
        assert r.status_code in (400, 404), (ticker, r.status_code)
    asked = s3["log"].read_text()[len(before) :]
    assert ".." not in asked and "hive" not in asked


def test_an_object_key_a_path_would_fold_is_refused(s3):
    fs, _ = pafs.FileSystem.from_uri(f"s3://{BUCKET}/odd")
    with fs.open_output_stream(f"{BUCKET}/odd/prices/ticker=A..B/part-0.parquet") as out:
        out.write((bundled_data_dir() / "interest_rates" / "part-0.parquet").read_bytes())
    with pytest.raises(UnsafePathError, match="ticker=A..B"):
        DatasetFiles.of(f"s3://{BUCKET}/odd", "prices")
    with pytest.raises(UnsafePathError):
        DatasetFiles.of(f"s3://{BUCKET}/lake", "../hive")


def _serve_error(data: str, env: dict[str, str]) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", "serve", "--port", "0", "--data", data],
        capture_output=True,
        text=True,
        timeout=120,
        env=env_with(env),
        cwd=ROOT,
    )
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    return r.stderr


def test_a_missing_bucket_or_an_empty_prefix_is_a_clear_error(s3):
    err = _serve_error("s3://no-such-bucket/lake", s3["env"])
    assert err.startswith("fdkit: error: cannot list the lake at s3://no-such-bucket/lake:") and "does not exist" in err
    err = _serve_error(f"s3://{BUCKET}/nothing-here", s3["env"])
    assert f"no Parquet lake at s3://{BUCKET}/nothing-here" in err
    with pytest.raises(LakeError, match="gs:// scheme is not supported"):
        LakeReader.open("gs://bucket/lake")


def test_refused_credentials_are_a_clear_error(tmp_path):
    # a second S3 server that checks credentials: the made-up key is unknown to it
    proc, endpoint = _moto(tmp_path / "moto.log", INITIAL_NO_AUTH_ACTION_COUNT="0")
    try:
        env = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "AKIAUNKNOWNKEY000000",
            "AWS_SECRET_ACCESS_KEY": "not-a-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        err = _serve_error(f"s3://{BUCKET}/lake", env)
        assert err.startswith(f"fdkit: error: cannot list the lake at s3://{BUCKET}/lake:"), err
        assert re.search(r"INVALID_ACCESS_KEY_ID|ACCESS_DENIED", err) and "not-a-secret" not in err
    finally:
        stop(proc)


def test_fdkit_data_may_name_the_store(s3, tmp_path):
    """``FDKIT_DATA=s3://...`` is the lake ``fdkit serve`` serves; commands that need a folder say so."""
    keys = tmp_path / "keys"
    keys.write_text(f"{KEY} pro\n")
    srv = Serve(tmp_path / "serve.log", "--keys", str(keys), env={**s3["env"], "FDKIT_DATA": f"s3://{BUCKET}/hive"})
    try:
        r = requests.get(srv.url + "/company/facts", params={"ticker": "AAA"}, headers={"X-API-KEY": KEY}, timeout=30)
        assert r.status_code == 200 and r.json()["company_facts"]["name"] == "Alpha Test Corp"
    finally:
        srv.stop()
    r = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", "lake", "validate"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env_with({**s3["env"], "FDKIT_DATA": f"s3://{BUCKET}/hive"}),
    )
    assert r.returncode == 2 and "give this command a local folder" in r.stderr and "Traceback" not in r.stderr


def test_the_latest_bar_projection_of_a_lake_in_a_bucket_is_the_local_one(s3):
    """A dataset too large to keep whole answers the market snapshot from its projection: in a bucket too (its keys
    are relative paths; joined to the folder twice they named no file, and the snapshot was empty)."""
    from fdkit.server.store import Store

    remote, local = Store(f"s3://{BUCKET}/lake"), Store(bundled_data_dir())
    remote._small = local._small = lambda name: False  # type: ignore[method-assign]
    got, want = remote.last_traded("prices"), local.last_traded("prices")
    assert len(got) > 1000
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_categorical=False)
