"""The client's cheaper paths keep their contracts (issue 28 item 6): one deadline thread, parts without a cache."""

from __future__ import annotations

import threading

import pandas as pd

import fdkit
from fdkit.wire import transport


def test_every_deadline_waits_on_one_shared_thread_and_the_heap_stays_small(ref_server):
    client = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False, deadline=30)
    for _ in range(150):  # each request has a deadline, so each has a header watchdog
        client.request("GET", "/macro/interest-rates/banks")
    timers = [t for t in threading.enumerate() if t.name == "fdkit-deadlines"]
    assert len(timers) == 1 and timers[0].daemon
    assert len(transport._TIMERS._heap) <= 64 + 1  # cancelled watchdogs are compacted away, not kept 30 s each


def test_a_watchdog_fires_at_its_deadline_and_not_once_cancelled():
    class Sock:
        shut = 0

        def shutdown(self, how):
            Sock.shut += 1

    late = transport._HeaderWatchdog(0.05)
    late.watch(Sock())
    early = transport._HeaderWatchdog(0.05)
    early.watch(Sock())
    assert early.cancel() is False
    for _ in range(100):
        if late.fired:
            break
        threading.Event().wait(0.02)
    assert late.fired and Sock.shut == 1 and late.cancel() is True


def test_a_client_without_a_cache_builds_the_frame_of_a_cached_one(ref_server, tmp_path):
    q = {"start_date": "2021-03-01", "end_date": "2021-12-31"}
    plain = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)
    cached = fdkit.Client(ref_server.api_key, ref_server.base_url, cache_dir=str(tmp_path), progress=False)
    assert not plain.keeps_fetches() and cached.keeps_fetches()
    tickers = ["MSFT", "AAPL", "NVDA"]
    pd.testing.assert_frame_equal(plain.prices(tickers, **q), cached.prices(tickers, **q), check_exact=True)
    pd.testing.assert_frame_equal(plain.prices(tickers, **q), cached.prices(tickers, **q), check_exact=True)  # warm
