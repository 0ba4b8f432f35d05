"""What reads cost: a plain file in row groups a ticker's read can choose, a paged ticker's rows read once, and
requests in flight that follow what the service is (fdkit's own on this machine, or any other)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

import fdkit
import fdkit.server
from fdkit.catalog.endpoints import get
from fdkit.lake import default_data_dir
from fdkit.lake.io import PLAIN_ROW_GROUP_ROWS, plan_write
from fdkit.server import handlers
from fdkit.server.store import Store


def test_a_plain_file_is_written_in_row_groups(tmp_path: Path) -> None:
    n = 2 * PLAIN_ROW_GROUP_ROWS + 10
    df = pd.DataFrame(
        {
            "bank": ["ECB"] * n,
            "date": pd.date_range("1900-01-01", periods=n).strftime("%Y-%m-%d"),
            "name": ["MRO"] * n,
            "rate": [4.5] * n,
        }
    )
    ((path, data),) = plan_write(tmp_path, "interest_rates", df)  # the plain Parquet of a flat lake's writers
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 3
    assert meta.row_group(0).num_rows == PLAIN_ROW_GROUP_ROWS


def test_the_bundled_bars_are_in_row_groups() -> None:
    meta = pq.ParquetFile(default_data_dir() / "prices" / "part-0.parquet").metadata
    assert meta.num_row_groups > 1
    assert max(meta.row_group(i).num_rows for i in range(meta.num_row_groups)) <= PLAIN_ROW_GROUP_ROWS


def test_a_paged_tickers_rows_are_kept_from_its_first_page() -> None:
    store = Store(default_data_dir())
    ep = get("prices")
    q = {"ticker": "AAPL", "interval": "day", "start_date": "2019-01-01", "end_date": "2023-10-27"}
    handlers.handle(store, ep, q)  # 1,200 bars: pages of 100 follow
    assert store.has_sorted("prices", "AAPL", traded=True)
    one_page = {**q, "ticker": "MSFT", "start_date": "2023-10-02", "end_date": "2023-10-06"}
    handlers.handle(store, ep, one_page)  # one page: nothing asks for the rows again
    assert not store.has_sorted("prices", "MSFT", traded=True)


def test_requests_in_flight_follow_what_the_service_is() -> None:
    cores = max(2, os.cpu_count() or 2)
    with fdkit.server.start() as own, fdkit.server.start(arrow=False) as other:
        assert fdkit.Client(own.api_key, own.base_url, cache=False, max_workers=16).concurrency() == min(16, cores)
        # a service that does not say it is fdkit's, on loopback (a proxy, a stub): latency to hide
        assert fdkit.Client(other.api_key, other.base_url, cache=False, max_workers=16).concurrency() == 16
