"""Webhook events end to end: models, rules, signatures, delivery under faults, a receiver that lands once."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid

import orjson
import pandas as pd
import pytest
import requests

import fdkit.server
from fdkit.lake import default_data_dir, read_dataset
from fdkit.webhooks import (
    EVENT_TYPES,
    Destination,
    create_receiver,
    deliver,
    events_for_rows,
    events_from_lake,
    make_event,
    parse_event,
    read_landed,
    sign,
)
from fdkit.webhooks.events import FAMILIES

SECRET = "whsec_test_0123456789"
DATA = default_data_dir()
WINDOW = ("2023-10-01", "2024-03-31")


@pytest.fixture(scope="module")
def window_events():
    return events_from_lake(DATA, since=WINDOW[0], until=WINDOW[1])


def _post(url, event, secret=SECRET, t=None):
    body = orjson.dumps(event)
    return requests.post(
        url,
        data=body,
        headers={"X-FDS-Signature": sign(secret, body, t), "Content-Type": "application/json"},
        timeout=10,
    )


# -- models ------------------------------------------------------------------------------------------------------
SAMPLES = {
    "balance_sheets": {
        "ticker": "A",
        "accession_number": "x",
        "filing_date": "2024-01-02",
        "form_type": "10-Q",
        "balance_sheets": [{"report_period": "2023-12-31", "period": "quarterly", "total_assets": 1.0}],
    },
    "forward_guidance": {
        "ticker": "A",
        "accession_number": "x",
        "sector": "Tech",
        "report_period": "2024-03-31",
        "forward_guidance": [{"metric_name": "revenue", "value": 1.0}],
    },
    "earnings": {"ticker": "A", "report_period": "2024-03-31", "source_type": "8-K", "quarterly": {"revenue": 1.0}},
    "inflation": {"date": "2024-05-01", "inflation": [{"series": "cpi_all_items", "date": "2024-05-01", "value": 1.0}]},
    "interest_rates": {
        "bank": "FED",
        "interest_rates": [{"bank": "FED", "date": "2024-09-18", "name": "x", "rate": 4.875}],
    },
    "labor": {
        "release": "jobless_claims",
        "date": "2024-05-04",
        "labor": [{"series": "initial_claims", "date": "2024-05-04", "value": 1.0}],
    },
    "yield_curve": {"date": "2023-11-30", "1_month": 5.56, "4_month": None, "30_year": 4.54},
    "filing_items.metadata": {
        "ticker": "AAPL",
        "cik": "0000320193",
        "filing_type": "10-K",
        "accession_number": "a",
        "filing_date": "2024-11-01",
        "available_items": ["Item-1", "Item-1A"],
        "url": "http://x/filings/items?ticker=AAPL",
    },
}


def test_eighteen_event_types_each_validate_and_frame():
    assert len(EVENT_TYPES) == 18
    for family in FAMILIES:
        sample = SAMPLES.get(family)
        if sample is None:  # the other filing-level and release-level families share the header models
            base = SAMPLES["forward_guidance"] if family in ("non_gaap_metrics", "operating_kpis") \
                else SAMPLES["balance_sheets"]  # fmt: skip
            key = "forward_guidance" if "forward_guidance" in base else "balance_sheets"
            records = base[key]
            if family.endswith("_segments"):
                records = [
                    {
                        "report_period": "2023-12-31",
                        "period": "annual",
                        "revenue": {"product": [{"label": "X", "value": 1.0}], "segment": []},
                    }
                ]
            sample = {k: v for k, v in base.items() if k != key} | {family: records}
        ev = parse_event(make_event(family, sample))
        df = ev.frame()
        assert isinstance(df, pd.DataFrame) and len(df) >= 1, family


def test_bad_payloads_rejected():
    with pytest.raises(ValueError):
        make_event("inflation", {"date": "2024-05-15", "inflation": []})  # not the first of the month
    with pytest.raises(ValueError):
        make_event("filing_items.metadata", {**SAMPLES["filing_items.metadata"], "available_items": ["Item-99"]})
    with pytest.raises(ValueError):
        make_event("filing_items.metadata", {**SAMPLES["filing_items.metadata"], "cik": "320193"})
    with pytest.raises(ValueError):
        make_event("interest_rates", {"bank": "FED", "interest_rates": []})
    with pytest.raises(ValueError):
        make_event("earnings", {**SAMPLES["earnings"], "source_type": "S-1"})


def test_event_frame_equals_endpoint_frame(ref_client, window_events):
    ev = next(parse_event(e) for e in window_events if e["type"] == "income_statements.created"
              and e["data"]["object"]["ticker"] == "AAPL")  # fmt: skip
    mine = ev.frame()
    rp = mine.index.get_level_values("report_period")[0]
    theirs = ref_client.income_statements("AAPL", period="annual", report_period=f"{rp:%Y-%m-%d}")
    row = mine[mine["period"] == "annual"]
    pd.testing.assert_frame_equal(row[theirs.columns], theirs, check_categorical=False)


# -- rules ---------------------------------------------------------------------------------------------------------
def test_form5_with_trades_and_holdings_fires_both(window_events):
    evs = events_from_lake(DATA, datasets=["insider_trades", "insider_ownership"])
    form5 = [parse_event(e) for e in evs if e["data"]["object"].get("form_type") == "5"]
    by_acc = {}
    for e in form5:
        by_acc.setdefault(e.payload["accession_number"], set()).add(e.family)
    assert any(fams == {"insider_trades", "insider_ownership"} for fams in by_acc.values())


def test_income_statement_ttm_first_on_annual_filings(window_events):
    inc = [parse_event(e) for e in window_events if e["type"] == "income_statements.created"]
    annual = [e for e in inc if e.payload["form_type"] == "10-K"]
    quarterly = [e for e in inc if e.payload["form_type"] == "10-Q"]
    assert annual and quarterly
    for e in annual:
        periods = [r["period"] for r in e.payload["income_statements"]]
        if "annual" in periods:
            assert periods[-1] == "annual" and (periods == ["annual"] or periods == ["ttm", "annual"])
        else:  # the derived fiscal Q4 of the 10-K
            assert periods == ["quarterly"]
    assert any("ttm" in [r["period"] for r in e.payload["income_statements"]] for e in annual)
    for e in quarterly:
        periods = [r["period"] for r in e.payload["income_statements"]]
        assert periods[0] == "quarterly" and len(periods) <= 2


def test_inflation_and_rates_rules(ref_client, window_events):
    infl = [parse_event(e) for e in window_events if e["type"] == "inflation.created"]
    assert infl and all(e.payload["date"].endswith("-01") for e in infl)
    assert all(r["date"] == e.payload["date"] for e in infl for r in e.payload["inflation"])
    rates = events_from_lake(DATA, datasets=["interest_rates"])
    last_fed = [parse_event(e) for e in rates if e["data"]["object"]["bank"] == "FED"][-1]
    snap = ref_client.interest_rate_snapshot("FED", raw=True)["interest_rates"]
    assert last_fed.payload["interest_rates"] == snap
    # a revision of a published date fires nothing
    rows = read_dataset(DATA, "interest_rates")
    published = set()
    first = events_for_rows("interest_rates", rows.tail(1), published=published)
    revised = rows.tail(1).assign(rate=rows.tail(1)["rate"] + 0.25)
    assert len(first) == 1 and events_for_rows("interest_rates", revised, published=published) == []


def test_replay_ids_are_stable(window_events):
    again = events_from_lake(DATA, since=WINDOW[0], until=WINDOW[1])
    assert [e["id"] for e in again] == [e["id"] for e in window_events]
    assert len({e["id"] for e in window_events}) == len(window_events)


# -- receiver ------------------------------------------------------------------------------------------------------
@pytest.fixture()
def receiver(tmp_path):
    app = create_receiver(tmp_path / "lake", SECRET)
    with fdkit.server.serve_app(app) as srv:
        srv.lake = tmp_path / "lake"
        yield srv


def test_forged_stale_and_malformed_deliveries_are_rejected(receiver, window_events):
    ev = window_events[0]
    assert _post(receiver.base_url + "/hook", ev, secret="wrong-secret").status_code == 401
    assert _post(receiver.base_url + "/hook", ev, t=int(time.time()) - 3600).status_code == 401
    r = requests.post(receiver.base_url + "/hook", data=orjson.dumps(ev), timeout=10)
    assert r.status_code == 401 and "missing" in r.json()["message"]
    for bad in (
        b"{not json",
        orjson.dumps({**ev, "type": "unknown.created"}),
        orjson.dumps({k: v for k, v in ev.items() if k != "data"}),
    ):
        r = requests.post(
            receiver.base_url + "/hook", data=bad, headers={"X-FDS-Signature": sign(SECRET, bad)}, timeout=10
        )
        assert r.status_code == 400 and set(r.json()) == {"error", "message"}
    assert not [p for p in receiver.lake.rglob("*.parquet")]  # nothing written
    assert _post(receiver.base_url + "/hook", ev).json()["status"] == "landed"
    assert _post(receiver.base_url + "/hook", ev).json()["status"] == "duplicate"


def test_amendment_replaces_and_late_original_is_ignored(receiver):
    base = {
        "ticker": "AAA",
        "accession_number": "0001-24-000001",
        "filing_date": "2024-02-01",
        "form_type": "10-K",
        "income_statements": [{"report_period": "2023-12-31", "period": "annual", "revenue": 100.0}],
    }
    amended = {
        **base,
        "accession_number": "0001-24-000009",
        "filing_date": "2024-03-15",
        "form_type": "10-K/A",
        "income_statements": [{"report_period": "2023-12-31", "period": "annual", "revenue": 90.0}],
    }
    url = receiver.base_url + "/hook"
    assert _post(url, make_event("income_statements", amended)).status_code == 200
    assert _post(url, make_event("income_statements", base)).json()["records"] == 0  # late original ignored
    got = read_landed(receiver.lake, "income_statements")
    assert got["revenue"].tolist() == [90.0] and got["form_type"].astype(str).tolist() == ["10-K/A"]


def test_earnings_twice_per_quarter_and_once_per_quarter_view(receiver):
    url = receiver.base_url + "/hook"
    e8k = make_event("earnings", {**SAMPLES["earnings"], "filing_date": "2024-04-25"})
    e10q = make_event(
        "earnings",
        {**SAMPLES["earnings"], "source_type": "10-Q", "filing_date": "2024-05-02", "quarterly": {"revenue": 1.1}},
    )
    for e in (e8k, e10q, e8k):
        assert _post(url, e).status_code == 200
    got = read_landed(receiver.lake, "earnings")
    assert sorted(got["source_type"].astype(str)) == ["10-Q", "8-K"]  # retry of the 8-K deduplicated by id
    view = got.sort_values("filing_date").groupby(["ticker", "report_period"], observed=True).tail(1)
    assert view["source_type"].astype(str).tolist() == ["10-Q"]


def _expected_lake(tmp_path, events):
    """Ground truth: the same events landed once each, in order, with no faults."""
    from fdkit.webhooks import Landing

    landing = Landing(tmp_path / "expected")
    for e in events:
        ev = parse_event(e)
        landing.land(ev)
        landing.commit(ev)
    landing.close()
    return tmp_path / "expected"


LANDED = (
    "income_statements",
    "balance_sheets",
    "cash_flow_statements",
    "financial_metrics",
    "earnings",
    "interest_rates",
    "inflation",
    "filing_metadata",
)


def _assert_same_lake(a, b):
    for name in LANDED:
        x, y = read_landed(a, name), read_landed(b, name)
        keys = [c for c in x.columns if c not in ("ticker",)]
        x = x.sort_values(list(x.columns[:4])).reset_index(drop=True)
        y = y.sort_values(list(y.columns[:4])).reset_index(drop=True)
        assert len(x) == len(y), name
        pd.testing.assert_frame_equal(x, y, check_categorical=False, obj=name)
        del keys


def test_replay_under_drops_duplicates_and_reordering(tmp_path, window_events):
    plan = fdkit.server.FaultPlan(rate=0.3, kinds=("503", "ack_lost", "500"), seed=7)
    app = create_receiver(tmp_path / "lake", SECRET)
    events = list(window_events)
    random.Random(3).shuffle(events)  # reordered
    dupes = events[::7]  # the sender itself sends some twice
    with fdkit.server.serve_app(fdkit.server.FaultInjector(app, plan)) as srv:
        report = deliver(events + dupes, [Destination(srv.base_url + "/hook", SECRET)], base_delay=0.01,
                         max_attempts=20, workers=4, log=tmp_path / "delivery.log")  # fmt: skip
    assert not report.failed
    assert set(report.acked) == {e["id"] for e in window_events}
    landed = app.state.landing.landed_ids()
    assert sorted(landed) == sorted({e["id"] for e in window_events})  # no loss, no duplicates
    assert plan.injected["503"] + plan.injected["500"] >= 5 and plan.injected["ack_lost"] >= 5
    _assert_same_lake(tmp_path / "lake", _expected_lake(tmp_path, window_events))
    # the landed income statements are exactly the reference rows filed in the window
    ref = read_dataset(DATA, "income_statements")
    ref = ref[ref["filing_date"].between(*WINDOW) & ref["period"].isin(["annual", "quarterly", "ttm"])]
    got = read_landed(tmp_path / "lake", "income_statements")
    key = ["ticker", "report_period", "period"]
    assert sorted(map(tuple, got[key].astype(str).values)) == sorted(map(tuple, ref[key].astype(str).values))
    print(
        f"delivered {len(window_events)} events, {len(dupes)} sent twice, faults {dict(plan.injected)}, "
        f"attempts {sum(report.attempts.values())}"
    )


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_listener(lake, port):
    proc = subprocess.Popen([sys.executable, "-m", "fdkit.cli", "webhooks", "listen", "--port", str(port),
                             "--secret", SECRET, "--lake", str(lake)], stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("listener did not start")


def test_killed_receiver_loses_nothing_that_was_acked(tmp_path, window_events):
    lake, port = tmp_path / "lake", _free_port()
    proc = _start_listener(lake, port)
    url = f"http://127.0.0.1:{port}/hook"
    acked = []
    try:
        for e in window_events[: len(window_events) // 2]:
            if _post(url, e).status_code == 200:
                acked.append(e["id"])
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    proc = _start_listener(lake, port)
    try:
        from fdkit.webhooks import Landing

        landed_before = set(Landing(lake).landed_ids())
        assert set(acked) <= landed_before
        report = deliver(window_events, [Destination(url, SECRET)], base_delay=0.05)
        assert not report.failed
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    _assert_same_lake(lake, _expected_lake(tmp_path, window_events))


def test_landed_lake_is_served(tmp_path, window_events, receiver):
    for e in window_events[:40]:
        _post(receiver.base_url + "/hook", e)
    with fdkit.server.start(data=receiver.lake) as srv:
        r = requests.get(srv.base_url + "/macro/interest-rates/banks")
        assert r.status_code == 200
    assert uuid.UUID(window_events[0]["id"])


def test_cli_replay_and_test_events(receiver, tmp_path):
    import json

    from fdkit.cli import main

    dests = tmp_path / "destinations.json"
    dests.write_text(
        json.dumps(
            [
                {
                    "url": receiver.base_url + "/hook",
                    "secret": SECRET,
                    "types": ["interest_rates.created", "yield_curve.created"],
                }
            ]
        )
    )
    assert (
        main(
            [
                "events",
                "replay",
                "--since",
                "2023-01-01",
                "--until",
                "2023-03-31",
                "--destinations",
                str(dests),
                "--log",
                str(tmp_path / "log.jsonl"),
            ]
        )
        == 0
    )
    assert len(read_landed(receiver.lake, "yield_curve")) == 62  # trading days in 2023Q1 with a curve
    assert (tmp_path / "log.jsonl").read_text().count("\n") >= 62
    landed = receiver.app.state.landing
    before = len(landed.landed_ids())
    assert main(["events", "test", "--type", "interest_rates.created", "--destinations", str(dests)]) == 0
    assert len(landed.landed_ids()) == before + 1  # a livemode=false event has its own id
