"""A cross-sectional computation over the lake's files on a Dask distributed cluster (``LocalCluster``): the
example a user who outgrows one machine starts from (docs/examples/cross_section_on_dask.py) answers what pandas
computes from the same lake by fdkit's own reader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fdkit.frames.basis import as_traded
from fdkit.lake import LakeReader, default_data_dir
from fdkit.lake.io import write_dataset

distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "cross_section_on_dask.py"
sys.path.insert(0, str(EXAMPLE.parent))
import cross_section_on_dask as example  # noqa: E402

cloudpickle.register_pickle_by_value(example)  # the workers are other processes without examples/ on their path


def _by_pandas(lake: Path) -> pd.DataFrame:
    """The same statistics from fdkit's reader and pandas alone: each ticker's as-traded closes, day over day."""
    bars = LakeReader(lake).read("prices", columns=["ticker", "time", "close", "basis"])
    bars = bars[as_traded(bars["basis"]) & bars["close"].notna()].sort_values(["ticker", "time"], kind="stable")
    by = bars.groupby(bars["ticker"].astype(str))
    ret = by["close"].pct_change().where(by["time"].diff() <= pd.Timedelta(days=10))
    out = ret.dropna().groupby(bars.loc[ret.dropna().index, "time"]).agg(["count", "mean", "std"])
    return out.rename(columns={"count": "names", "std": "dispersion"}).astype({"names": "int64"})


@pytest.fixture(scope="module")
def cluster_client():
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, processes=True) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_the_bundled_lake_on_a_local_cluster(cluster_client):
    got = example.cross_section(example.live_files(default_data_dir()))
    want = _by_pandas(default_data_dir())
    assert len(got) > 5000 and got["names"].max() > 400  # 2003-2026, the 2015-2017 cross-section's 600-odd names
    got.index.name = want.index.name
    pd.testing.assert_frame_equal(got, want[got.columns], check_freq=False, rtol=1e-9)
    assert len(cluster_client.scheduler_info()["workers"]) == 2


def test_a_delta_lake_is_read_through_its_live_files(tmp_path, cluster_client):
    bars = LakeReader(default_data_dir()).read("prices")
    bars = bars[bars["ticker"].astype(str).isin(["AAPL", "MSFT", "NVDA", "KO"])]
    lake = tmp_path / "lake"
    write_dataset(lake, "prices", bars[bars["time"] < "2020-01-01"])
    write_dataset(lake, "prices", bars[bars["time"] >= "2020-01-01"], mode="append")  # a second commit
    assert (lake / "prices" / "_delta_log").is_dir() and len(example.live_files(lake)) >= 2
    got = example.cross_section(example.live_files(lake))
    want = _by_pandas(lake)
    got.index = got.index.as_unit("ns")  # Delta keeps microseconds; fdkit's reader gives nanoseconds
    got.index.name = want.index.name
    pd.testing.assert_frame_equal(got, want[got.columns], check_freq=False, rtol=1e-9)


def test_the_example_runs_as_a_script(tmp_path):
    out = tmp_path / "cross_section.parquet"
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), str(default_data_dir()), "--workers", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    saved = pd.read_parquet(out)
    assert list(saved.columns) == ["names", "mean", "dispersion"] and len(saved) > 5000
