"""The server's store reads lazily: one ticker's question reads that ticker's rows, what it keeps stays within its
byte budget (least recently used out first), and a landing is seen after ``changed()``."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdkit.lake import LakeReader, read_dataset
from fdkit.lake.io import DatasetFiles, _row_groups, bump_generation, conform, write_dataset
from fdkit.server.store import Store, parse_bytes

TICKERS = [f"T{i:02d}" for i in range(1, 9)]
BARS = 400


def _bars(tickers: list[str], n: int = BARS, start: str = "2020-01-01", seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.bdate_range(start, periods=n, tz="UTC")
    close = 50 + rng.random((len(tickers), n)).cumsum(axis=1)
    return pd.DataFrame(
        {
            "ticker": np.repeat(tickers, n),
            "time": np.tile(days.to_numpy(), len(tickers)),
            "time_milliseconds": np.tile(days.as_unit("ms").asi8, len(tickers)),
            "open": close.ravel(),
            "high": close.ravel() + 1,
            "low": close.ravel() - 1,
            "close": close.ravel(),
            "volume": np.arange(len(tickers) * n, dtype="int64"),
        }
    )


@pytest.fixture
def hive_lake(tmp_path):
    """Prices partitioned by ticker (as ``fdkit mirror`` writes), statements too."""
    root = tmp_path / "lake"
    write_dataset(root, "prices", _bars(TICKERS), partition_by="ticker")
    facts = pd.DataFrame({"ticker": TICKERS, "cik": [f"{i:010d}" for i in range(1, 9)], "name": TICKERS})
    write_dataset(root, "company_facts", facts)
    return root


@pytest.fixture
def flat_lake(tmp_path):
    """Prices in one flat file sorted by ticker, row groups of 100 rows (four per ticker)."""
    root = tmp_path / "flat"
    table = pa.Table.from_pandas(conform(_bars(TICKERS), "prices"), preserve_index=False)
    (root / "prices").mkdir(parents=True)
    pq.write_table(table, root / "prices" / "part-0.parquet", row_group_size=100)
    return root


def _lazy(root, budget: int = 64 * 2**20) -> Store:
    """A store that reads per ticker (the test lakes are small: every dataset would be read whole otherwise)."""
    store = Store(root, memory_bytes=budget)
    store._small = lambda name: False  # type: ignore[method-assign]
    return store


def _expected(root, name: str, ticker: str) -> pd.DataFrame:
    df = read_dataset(root, name)
    return df[df["ticker"].astype("string") == ticker].reset_index(drop=True)


@pytest.mark.parametrize("lake", ["hive_lake", "flat_lake"])
def test_one_ticker_reads_only_its_rows(lake, request):
    root = request.getfixturevalue(lake)
    store = _lazy(root)
    assert store.cached() == [] and store.rows_read == 0  # nothing is read at start
    assert "T03" in store.groups("prices") and "NOPE" not in store.groups("prices")
    assert store.knows("T05", "prices") and store.keys_of("prices") == TICKERS
    # tickers come from folder names or the ticker column (flat files), or, in a Delta table whose files' ticker
    # ranges hold several, from the asked tickers' own rows (T03's and T05's): never from other tickers' rows
    membership = store.rows_read
    assert membership == (2 * BARS if lake == "hive_lake" else 0)

    got = store.rows("prices", "T03")
    pd.testing.assert_frame_equal(got, _expected(root, "prices", "T03"), check_categorical=False)
    assert store.rows_read == membership + BARS
    assert store.cached() == []  # asked once: answered, not kept (a sweep over a market passes through)
    again = store.rows("prices", "T03")
    pd.testing.assert_frame_equal(again, got)
    assert store.rows_read == membership + 2 * BARS
    assert store.cached() == [("rows", "prices", "ticker", "T03")]  # asked twice: kept
    store.rows("prices", "T03")
    assert store.rows_read == membership + 2 * BARS

    rows, stamps = store.sorted_rows("prices", "T04")
    assert rows["ticker"].astype("string").eq("T04").all() and len(rows) == BARS
    assert np.all(np.diff(stamps) > 0) and not store.has_sorted("prices", "T04")
    assert store.rows_read == membership + 3 * BARS  # T04's presence and rows: one read
    store.sorted_rows("prices", "T04")
    assert store.has_sorted("prices", "T04") and {k[0] for k in store.cached()} == {"rows", "sorted"}
    assert not any("T04" != k[2] for k in store.cached() if k[0] == "sorted")

    assert store.rows("prices", "NOPE").empty and list(store.rows("prices", "NOPE").columns) == list(got.columns)


def test_a_request_reads_its_ticker_once_and_a_second_request_keeps_it(hive_lake):
    """A ``/prices`` request asks the store for its ticker's rows once (the answer hands them to its page); a
    ticker asked for once is not kept, so a sweep over a market's tickers leaves nothing behind."""
    import requests

    from fdkit.server import create_app, serve_app

    store = _lazy(hive_lake)
    key = "k" * 32
    ranges = [("2020-01-01", "2020-03-31"), ("2020-03-01", "2020-05-31"), ("2020-02-01", "2020-02-28")]  # 1 page
    with serve_app(create_app(hive_lake, {key: "pro"}, store=store)) as srv:
        reads = []
        for start, end in ranges:
            r = requests.get(
                srv.base_url + "/prices",
                params={
                    "ticker": "T03",
                    "interval": "day",
                    "interval_multiplier": 1,
                    "start_date": start,
                    "end_date": end,
                    "limit": 5000,
                },
                headers={"X-API-KEY": key},
                timeout=30,
            )
            want = _expected(hive_lake, "prices", "T03")
            day = want["time"].dt.tz_convert(None)
            want = want[(day >= start) & (day <= end)]
            assert [p["close"] for p in r.json()["prices"]] == want["close"].tolist()
            reads.append(store.rows_read)
            if len(reads) == 1:
                assert not store.has_sorted("prices", "T03", traded=True)  # asked once: not kept
        assert reads == [BARS, 2 * BARS, 2 * BARS]  # read once a request, kept from the second
        assert store.has_sorted("prices", "T03", traded=True)


def test_flat_files_are_read_by_the_row_groups_whose_statistics_hold_the_ticker(flat_lake):
    listing = DatasetFiles.of(flat_lake, "prices")
    ds = pads.dataset([str(f) for f in listing.files], format="parquet")
    kept = _row_groups(listing, ds, {"ticker": ["T03"]})
    assert sum(f.num_row_groups for f in kept.get_fragments()) == BARS // 100  # of 32 in the file
    assert not list(_row_groups(listing, ds, {"ticker": ["ZZZ"]}).get_fragments())
    both = _row_groups(listing, ds, {"ticker": ["T03", "ZZZ", "T05"]})  # any of several: their row groups only
    assert sum(f.num_row_groups for f in both.get_fragments()) == 2 * BARS // 100


def test_the_budget_bounds_what_is_kept_and_answers_stay_right(hive_lake):
    one = _frame_size(_expected(hive_lake, "prices", "T01"))
    budget = int(one * 3.5)  # room for about one ticker's rows and sorted rows
    store = _lazy(hive_lake, budget)
    for ticker in [*TICKERS, *TICKERS[::-1], "T02", "T07"]:
        for _ in range(2):  # kept from the second ask
            rows, _ = store.sorted_rows("prices", ticker)
            direct = store.rows("prices", ticker)
            want = _expected(hive_lake, "prices", ticker)
            assert rows["close"].tolist() == want.sort_values("time")["close"].tolist()
            assert direct["close"].tolist() == want["close"].tolist()
            assert store.cached_bytes() <= budget
    assert len({k[2] if k[0] == "sorted" else k[3] for k in store.cached()}) < len(TICKERS)
    assert store.rows_read > len(TICKERS) * BARS  # evicted tickers were read again


def _frame_size(df: pd.DataFrame) -> int:
    return int(df.memory_usage(index=True, deep=True).sum())


def test_whole_frames_count_against_the_budget(hive_lake):
    store = _lazy(hive_lake, 2**20)
    whole = store.frame("prices")
    assert len(whole) == len(TICKERS) * BARS
    if _frame_size(whole) > 2**20:
        assert store.cached() == []  # larger than the budget: answered, not kept
    assert store.cached_bytes() <= 2**20


def test_landed_data_is_seen_after_changed(hive_lake):
    store = _lazy(hive_lake)
    assert len(store.rows("prices", "T01")) == BARS and "NEW" not in store.groups("prices")
    assert store.cik_to_ticker("1") == "T01"
    assert not store.changed()
    # a landing: a new ticker's partition, and an amended bar of T01 beside its old one
    write_dataset(hive_lake, "prices", _bars(["NEW"], 20), partition_by="ticker", mode="append")
    later = _bars(["T01"], 5, start="2021-07-01")
    write_dataset(hive_lake, "prices", later, partition_by="ticker", mode="append")
    bump_generation(hive_lake)
    assert store.changed() and store.cached() == []
    assert "NEW" in store.groups("prices") and store.knows("NEW") and len(store.rows("prices", "NEW")) == 20
    assert len(store.rows("prices", "T01")) == BARS + 5
    rows, stamps = store.sorted_rows("prices", "T01")
    assert np.all(np.diff(stamps) >= 0) and len(rows) == BARS + 5


def test_mixed_layouts_read_per_ticker_as_a_whole_read_filtered(tmp_path):
    # the bundled flat file with a dictionary ticker column, and the receiver's ticker= partitions beside it
    root = tmp_path / "mixed"
    write_dataset(root, "prices", _bars(TICKERS[:4]))
    write_dataset(root, "prices", _bars(["T02", "T09"], 10, start="2022-01-03"), partition_by="ticker", mode="append")
    reader = LakeReader(root)
    whole = read_dataset(root, "prices")
    for ticker in ("T02", "T09", "T01", "NOPE"):
        want = whole[whole["ticker"].astype("string") == ticker].reset_index(drop=True)
        got = reader.read("prices", where={"ticker": ticker})
        pd.testing.assert_frame_equal(got, want, check_categorical=False)
        assert list(got.dtypes.astype(str)) == list(whole.dtypes.astype(str))
    store = _lazy(root)
    assert len(store.rows("prices", "T02")) == BARS + 10 and store.keys_of("prices") == [
        "T01",
        "T02",
        "T03",
        "T04",
        "T09",
    ]


def test_where_on_a_keyed_dataset_keeps_the_record_written_last(tmp_path):
    root = tmp_path / "keyed"
    rates = pd.DataFrame(
        {"bank": ["ECB", "FED"], "date": ["2024-01-02"] * 2, "name": ["MRO", "FFR"], "rate": [4.5, 5.5]}
    )
    write_dataset(root, "interest_rates", rates)
    amended = rates.iloc[[1]].assign(rate=5.25)
    write_dataset(root, "interest_rates", amended, partition_by="bank", mode="append")
    reader = LakeReader(root)
    assert reader.read("interest_rates", where={"bank": "FED"})["rate"].tolist() == [5.25]
    assert reader.read("interest_rates", where={"bank": "ECB"})["rate"].tolist() == [4.5]


def test_the_memory_option_reads_sizes():
    from fdkit.cli import build_parser

    assert parse_bytes("512MB") == 512 * 2**20 and parse_bytes("1.5GB") == int(1.5 * 2**30)
    for bad in ("lots", "12 parsecs", "10KB"):
        with pytest.raises(ValueError):
            parse_bytes(bad)
    assert build_parser().parse_args(["serve", "--memory", "256MB"]).memory == "256MB"


def test_a_tickers_presence_comes_from_the_log_not_from_every_ticker_column(tmp_path):
    """A Delta table's per-file ticker min/max answer "is T here?" without reading every file's ticker column."""
    root = tmp_path / "delta"
    write_dataset(root, "prices", _bars(TICKERS[:3]))  # T01..T03 in one file
    write_dataset(root, "prices", _bars(["T05"]), mode="append")  # a file of T05 alone
    write_dataset(root, "prices", _bars(["T07", "T09"]), mode="append")  # T07..T09: T08 is in its range, not in it
    store = _lazy(root)

    def every_ticker(*args, **kwargs):
        raise AssertionError("read every ticker column")

    store.lake.distinct = every_ticker  # type: ignore[method-assign]
    assert [t for t in ["T01", "T02", "T04", "T05", "T07", "T08", "T09", "T10", "A"] if store.has("prices", t)] == [
        "T01",
        "T02",
        "T05",
        "T07",
        "T09",
    ]
    assert "T05" in store.groups("prices") and "T08" not in store.groups("prices")
    assert store.knows("T09", "prices")
    pd.testing.assert_frame_equal(
        store.rows("prices", "T07"), _expected(root, "prices", "T07"), check_categorical=False
    )
    assert store.rows("prices", "T08").empty
    # the rows of T01, T02, T07 and T09 (their files hold others) to know they are there, then T07's again (what
    # has() read is spared to the question right after it only: T09's was)
    assert store.rows_read == 5 * BARS


@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, 6000), length=st.integers(0, 300), fields=st.sampled_from([0, 1, 2]))
def test_a_page_formatted_alone_is_the_slice_of_the_whole_tickers_values(start, length, fields):
    """``/prices`` formats only the rows of the page sent: the same records as slicing the whole ticker's values."""
    from fdkit.frames.typed import json_columns
    from fdkit.server.rows import FrameRecords

    frame = _AAPL()
    cols = [["time", "open", "close", "volume", "basis", "adj_close"], ["close"], ["time_milliseconds", "low"]][fields]
    stop = min(start + length, len(frame))
    values = json_columns(frame, cols)  # the whole ticker's JSON-ready values, sliced
    whole = [dict(zip(cols, row, strict=True)) for row in zip(*(values[c][start:stop] for c in cols), strict=True)]
    alone = FrameRecords(frame, cols, start, stop).to_list()
    assert alone == whole
    assert orjson.dumps(alone) == orjson.dumps(whole)


@settings(max_examples=80, deadline=None)
@given(
    start=st.integers(0, 6000),
    length=st.integers(0, 900),
    cut=st.integers(0, 150),
    page=st.integers(1, 300),
    fields=st.sampled_from([0, 1]),
)
def test_a_json_page_cut_from_encoded_blocks_is_the_page_encoded_alone(start, length, cut, page, fields):
    """A ``/prices`` JSON page cut from the store's encoded blocks (any range, across block edges, a page of a
    slice of the answer) has the bytes of its own rows encoded alone: missing prices ``null``, dates ISO, the
    fields in order; only the blocks the page covers are asked for, and when pages follow, the blocks ahead of
    it are encoded and kept with them."""
    from fdkit.server.rows import AHEAD_BLOCKS, JSON_BLOCK, FrameRecords, encode_lazy

    frame, store = _AAPL(), _STORE()
    store.cache.clear()
    cols = [["time", "open", "close", "volume", "basis", "adj_close", "time_milliseconds"], ["close", "time"]][fields]
    asked: list[tuple[int, int]] = []

    def blocks(first, last, ahead, rows):
        asked.append((first, last))
        return store.sorted_json("prices", "AAPL", tuple(cols), False, first, last, ahead, rows)

    stop = min(start + length, len(frame))
    answer = FrameRecords(frame, cols, start, stop, blocks=blocks)[cut:]
    rows = answer[:page]
    first, last = min(start + cut, stop), min(start + cut + page, stop)
    alone = orjson.dumps(FrameRecords(frame, cols, first, last).to_list())
    for _ in range(3):  # made (and kept if pages follow), made again and kept (from a block's second ask), kept
        assert rows.json_bytes() == alone
    assert orjson.dumps({"prices": rows}, default=encode_lazy) == b'{"prices":' + alone + b"}"
    covered = [(first // JSON_BLOCK, (last - 1) // JSON_BLOCK)] if last > first else []
    assert asked == covered * 4
    kept = {key[-1] for key in store.cache.keys() if key[1] == "json"}
    if last > first:
        ahead = min(AHEAD_BLOCKS, (stop - 1) // JSON_BLOCK - (last - 1) // JSON_BLOCK)
        assert kept == set(range(first // JSON_BLOCK, (last - 1) // JSON_BLOCK + ahead + 1))


def _STORE() -> Store:  # noqa: N802
    """One store across the examples (its encoded blocks are kept from their second ask)."""
    if not _STORES:
        from fdkit.lake.io import default_data_dir

        _STORES.append(Store(default_data_dir()))
    return _STORES[0]


_STORES: list[Store] = []
_AAPL_ROWS: list[pd.DataFrame] = []
_AAPL_STORE: list[Store] = []  # (one store across the examples: its blocks are kept from their second ask)


def _AAPL() -> pd.DataFrame:  # noqa: N802
    """AAPL's bars sorted by time, as the store keeps them (adjusted-only bars with missing prices included)."""
    if not _AAPL_ROWS:
        from fdkit.lake.io import default_data_dir

        _AAPL_ROWS.append(Store(default_data_dir()).sorted_rows("prices", "AAPL")[0])
    return _AAPL_ROWS[0]
