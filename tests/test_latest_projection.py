"""The latest-bar projection (``fdkit.lake.latest``): the market snapshot's cross-section without reading every bar.

Whatever the writers did (appends of new tickers, a landed bar, a mirror replacing a ticker, a file whose ticker
range spans others, a ticker with only adjusted bars, compaction), the projection kept on disk, the one a running
store brings up to date, and one made from nothing equal the reduction of the whole dataset; a commit makes only
its own tickers again; and ``/prices/snapshot/market`` answers the same bytes from the projection as from the
whole frame.
"""

from __future__ import annotations

import pandas as pd
import pytest
import requests

from fdkit.lake import latest
from fdkit.lake.io import DatasetFiles, bump_generation, default_data_dir, read_dataset, write_dataset
from fdkit.lake.tables import optimize_lake
from fdkit.server.store import Store

KEY = "k" * 32


def _bundled(*tickers: str) -> pd.DataFrame:
    df = read_dataset(default_data_dir(), "prices")
    return df[df["ticker"].astype(str).isin(tickers)].reset_index(drop=True)


def _expected(root) -> pd.DataFrame:
    return _plain(latest.last_traded(read_dataset(root, "prices")))


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(ticker=df["ticker"].astype(str)).reset_index(drop=True)


def _lazy(root) -> Store:
    store = Store(root, memory_bytes=64 * 2**20)
    store._small = lambda name: False  # type: ignore[method-assign]
    return store


def _bar(ticker: str, day: str, close: float, basis: str = "as_traded") -> pd.DataFrame:
    t = pd.Timestamp(day, tz="UTC")
    return pd.DataFrame(
        {
            "ticker": [ticker],
            "time": [t],
            "time_milliseconds": [t.value // 1_000_000],
            "open": [close],
            "high": [close],
            "low": [close],
            "close": [close],
            "volume": [1],
            "basis": [basis],
        }
    )


def _check(root, store: Store, running: latest.LastTraded, made: int | None = None) -> None:
    want = _expected(root)
    assert len(want) > 0
    bump_generation(root)  # as every writer does after its commits
    assert store.changed()
    pd.testing.assert_frame_equal(_plain(store.last_traded("prices")), want)  # a store kept across commits
    pd.testing.assert_frame_equal(_plain(_lazy(root).last_traded("prices")), want)  # a new store, from the file
    kept = latest.stored(root, "prices")  # the file the writers keep is already up to date
    listing = DatasetFiles.of(root, "prices")
    assert kept.seen == {f.relative_to(listing.base).as_posix() for f in listing.files}
    pd.testing.assert_frame_equal(_plain(kept.frame()), want)
    fresh = latest.LastTraded()  # made from nothing
    latest.update_from(fresh, root, "prices", listing)
    pd.testing.assert_frame_equal(_plain(fresh.frame()), want)
    got = latest.update_from(running, root, "prices", listing)  # incremental: only the commit's tickers
    if made is not None:
        assert got == made
    pd.testing.assert_frame_equal(_plain(running.frame()), want)


def test_the_projection_follows_every_kind_of_commit(tmp_path):
    root = tmp_path / "lake"
    write_dataset(root, "prices", _bundled("AAPL", "MSFT", "TSLA"))
    store = _lazy(root)
    running = latest.LastTraded()
    _check(root, store, running, made=3)

    write_dataset(root, "prices", _bundled("NVDA"), mode="append")  # a new ticker in a new file
    _check(root, store, running, made=1)

    write_dataset(root, "prices", _bar("AAPL", "2026-03-16", 250.0), mode="append")  # a landed bar: AAPL in 2 files
    _check(root, store, running, made=1)
    assert store.last_traded("prices").set_index("ticker").loc["AAPL", "close"] == 250.0

    # a bar without an as-traded price after the last one: the snapshot stays on the last as-traded bar
    write_dataset(root, "prices", _bar("TSLA", "2026-03-17", float("nan"), "adjusted_only"), mode="append")
    _check(root, store, running, made=1)

    only_adjusted = _bundled("MSFT").assign(basis="adjusted_only").assign(ticker="ZADJ")
    write_dataset(root, "prices", only_adjusted, mode="append")  # a ticker with no as-traded bar: no row
    _check(root, store, running, made=1)
    assert "ZADJ" not in set(store.last_traded("prices")["ticker"].astype(str))

    # a mirror rewriting MSFT (its rows replaced, the file it shared with AAPL and TSLA rewritten)
    write_dataset(root, "prices", _bundled("MSFT").iloc[:-5], partition_by="ticker", mode="append", part="part-0")
    _check(root, store, running)

    # one file whose ticker range spans every ticker (AAPL .. TSLA)
    both = pd.concat([_bar("AAPL", "2026-03-18", 251.0), _bar("TSLA", "2026-03-18", 300.0)], ignore_index=True)
    write_dataset(root, "prices", both, mode="append")
    _check(root, store, running)

    optimize_lake(root, ["prices"])  # compaction: every file replaced
    _check(root, store, running)


def test_a_missing_or_broken_file_is_made_again(tmp_path):
    root = tmp_path / "lake"
    write_dataset(root, "prices", _bundled("AAPL", "TSLA"))
    path = latest.path_of(root, "prices")
    path.write_bytes(b"not parquet")
    pd.testing.assert_frame_equal(_plain(_lazy(root).last_traded("prices")), _expected(root))
    path.unlink()
    pd.testing.assert_frame_equal(_plain(_lazy(root).last_traded("prices")), _expected(root))
    assert latest.refresh(root, "prices") == 2 and path.exists()


@pytest.mark.parametrize("small", [True, False])
def test_the_market_snapshot_is_the_same_from_the_projection(tmp_path, small):
    from fdkit.server import create_app, serve_app

    root = tmp_path / "lake"
    write_dataset(root, "prices", _bundled("AAPL", "MSFT", "TSLA", "NVDA"))
    write_dataset(root, "prices", _bar("AAPL", "2026-03-16", 250.0), mode="append")
    write_dataset(root, "company_facts", read_dataset(default_data_dir(), "company_facts"))
    answers = []
    for whole in (True, small):
        store = Store(root)
        if not whole:
            store._small = lambda name: False  # type: ignore[method-assign]
        with serve_app(create_app(root, {KEY: "pro"}, store=store)) as srv:
            r = requests.get(srv.base_url + "/prices/snapshot/market", headers={"X-API-KEY": KEY}, timeout=30)
            assert r.status_code == 200
            answers.append(r.content)
        assert store.rows_read == (len(read_dataset(root, "prices")) if whole else 0) + (
            len(read_dataset(root, "company_facts"))
        )
    assert answers[0] == answers[1]
    assert b'"AAPL"' in answers[0] and b"250.0" in answers[0]


def test_a_converted_lake_gets_its_projection(tmp_path):
    from fdkit.lake.tables import convert_lake

    root = tmp_path / "old"
    write_dataset(root, "prices", _bundled("AAPL", "TSLA"), partition_by="ticker", layout="parquet")  # older mirror
    assert not latest.path_of(root, "prices").exists()
    convert_lake(root)
    kept = latest.stored(root, "prices")
    assert set(kept.holds) == {"AAPL", "TSLA"}
    pd.testing.assert_frame_equal(_plain(kept.frame()), _expected(root))
