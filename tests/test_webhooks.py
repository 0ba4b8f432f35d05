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
from pathlib import Path

import orjson
import pandas as pd
import pytest
import requests
from lakes import few_insider_trades

import fdkit.server
from fdkit.lake.io import default_data_dir, read_dataset
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
    return few_insider_trades(events_from_lake(DATA, since=WINDOW[0], until=WINDOW[1]))


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
    "inflation": {
        "date": "2024-05-01",
        "inflation": [{"series": "cpi_all_items", "date": "2024-05-01", "value": 1.0, "change_1m_pct": 0.1}],
    },
    "interest_rates": {
        "bank": "FED",
        "date": "2024-09-18",
        "interest_rates": [{"bank": "FED", "date": "2024-09-18", "name": "x", "rate": 4.875}],
    },
    "labor": {
        "release": "jobless_claims",
        "date": "2024-05-04",
        "labor": [{"series": "initial_claims", "date": "2024-05-04", "value": 1.0}],
    },
    "yield_curve": {"date": "2023-11-30", "yield_curve": {"date": "2023-11-30", "1_month": 5.56, "30_year": 4.54}},
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
            base = (
                SAMPLES["forward_guidance"]
                if family in ("non_gaap_metrics", "operating_kpis")
                else SAMPLES["balance_sheets"]
            )
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
    ev = next(
        parse_event(e)
        for e in window_events
        if e["type"] == "income_statements.created" and e["data"]["object"]["ticker"] == "AAPL"
    )
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


def test_one_statement_event_per_filing_ttm_first_on_annual_filings(window_events):
    inc = [parse_event(e) for e in window_events if e["type"] == "income_statements.created"]
    annual = [e for e in inc if e.payload["form_type"] == "10-K"]
    quarterly = [e for e in inc if e.payload["form_type"] == "10-Q"]
    assert annual and quarterly
    for e in annual:  # ttm entries first, then the year, then the fiscal Q4 the 10-K implies
        periods = [r["period"] for r in e.payload["income_statements"]]
        assert "annual" in periods and periods == sorted(periods, key=["ttm", "annual", "quarterly"].index)
    assert any("ttm" in [r["period"] for r in e.payload["income_statements"]] for e in annual)
    for e in quarterly:
        periods = [r["period"] for r in e.payload["income_statements"]]
        assert periods[0] == "quarterly" and set(periods) <= {"quarterly", "ttm"}
    for e in inc:  # ttm entries carry no form type; the filing's own entries carry its form
        for r in e.payload["income_statements"]:
            assert r["form_type"] == (None if r["period"] == "ttm" else e.payload["form_type"])
    # one event per filing for every statement family, over the whole lake's filings with an accession
    evs = events_from_lake(
        DATA, since="2019-01-01", until="2024-12-31", datasets=["income_statements", "balance_sheets"]
    )
    for family in ("income_statements", "balance_sheets"):
        accs = [e["data"]["object"]["accession_number"] for e in evs if e["type"] == f"{family}.created"]
        accs = [a for a in accs if a is not None]
        assert accs and len(accs) == len(set(accs)), family
    ref = read_dataset(DATA, "income_statements")
    ref = ref[ref["filing_date"].between("2019-01-01", "2024-12-31") & ref["accession_number"].notna()]
    assert len(set(accs)) == ref["accession_number"].nunique()


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
    again = few_insider_trades(events_from_lake(DATA, since=WINDOW[0], until=WINDOW[1]))
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
    "segmented_financials",
    "insider_trades",
    "insider_ownership",
    "earnings",
    "kpi_guidance",
    "kpi_non_gaap",
    "kpi_metrics",
    "interest_rates",
    "inflation",
    "labor",
    "yield_curve",
    "filing_metadata",
)


@pytest.fixture(scope="module")
def all_events(window_events, small_lake_events):
    """The replay window plus what it lacks: every one of the 18 event types (the bundled lake's insider, rate and
    filing-item events, the small lake's KPI and segment events)."""
    extra = few_insider_trades(
        events_from_lake(
            DATA, since="2020-01-01", datasets=["insider_trades", "insider_ownership", "interest_rates", "filing_items"]
        )
    )
    events = window_events + extra + small_lake_events
    assert {e["type"] for e in events} == set(EVENT_TYPES)
    return events


def _assert_same_lake(a, b):
    for name in LANDED:
        x, y = read_landed(a, name), read_landed(b, name)
        keys = [c for c in x.columns if c not in ("ticker",)]
        x = x.sort_values(list(x.columns[:4])).reset_index(drop=True)
        y = y.sort_values(list(y.columns[:4])).reset_index(drop=True)
        assert len(x) == len(y), name
        pd.testing.assert_frame_equal(x, y, check_categorical=False, obj=name)
        del keys


def sample_per_type(events: list[dict], per_type: int = 5) -> list[dict]:
    """Every income-statement event (the window's reference rows are checked) and, of every other type, the first
    ``per_type - 1`` and the last, plus every amendment (``/A`` forms), in their order."""
    by_type: dict[str, list[dict]] = {}
    for e in events:
        by_type.setdefault(e["type"], []).append(e)
    keep = set()
    for kind, group in by_type.items():
        if kind == "income_statements.created":
            keep.update(id(e) for e in group)
            continue
        keep.update(id(e) for e in group[: per_type - 1] + group[-1:])
        keep.update(id(e) for e in group if str(e["data"]["object"].get("form_type") or "").endswith("/A"))
    return [e for e in events if id(e) in keep]


def replay_under_faults(tmp_path: Path, events: list[dict]) -> dict:
    """Deliver ``events`` shuffled, a seventh of them twice, through 30% injected 503, 500 and lost acks; check that
    each lands exactly once and that the lake equals the same events landed once each in order. The figures."""
    plan = fdkit.server.FaultPlan(rate=0.3, kinds=("503", "ack_lost", "500"), seed=7)
    app = create_receiver(tmp_path / "lake", SECRET)
    shuffled = list(events)
    random.Random(3).shuffle(shuffled)  # reordered
    dupes = shuffled[::7]  # the sender itself sends some twice
    with fdkit.server.serve_app(fdkit.server.FaultInjector(app, plan)) as srv:
        report = deliver(
            shuffled + dupes,
            [Destination(srv.base_url + "/hook", SECRET)],
            base_delay=0.01,
            max_attempts=20,
            workers=4,
            log=tmp_path / "delivery.log",
        )
    assert not report.failed
    assert set(report.acked) == {e["id"] for e in events}
    landed = app.state.landing.landed_ids()
    assert sorted(landed) == sorted({e["id"] for e in events})  # no loss, no duplicates
    assert plan.injected["503"] + plan.injected["500"] >= 5 and plan.injected["ack_lost"] >= 3, plan.injected
    _assert_same_lake(tmp_path / "lake", _expected_lake(tmp_path, events))
    return {
        "events": len(events),
        "types": len({e["type"] for e in events}),
        "sent_twice": len(dupes),
        "faults": dict(plan.injected),
        "attempts": sum(report.attempts.values()),
    }


def test_replay_under_drops_duplicates_and_reordering(tmp_path, sampled_events):
    # a few events of each of the 18 types (the scale run, every event of the window:
    # python benchmarks/faults_at_scale.py replay)
    figures = replay_under_faults(tmp_path, sampled_events)
    # the landed income statements are exactly the reference rows filed in the window
    ref = read_dataset(DATA, "income_statements")
    ref = ref[ref["filing_date"].between(*WINDOW) & ref["period"].isin(["annual", "quarterly", "ttm"])]
    got = read_landed(tmp_path / "lake", "income_statements")
    key = ["ticker", "report_period", "period"]
    assert sorted(map(tuple, got[key].astype(str).values)) == sorted(map(tuple, ref[key].astype(str).values))
    print(figures)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_listener(lake, port):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fdkit.cli",
            "webhooks",
            "listen",
            "--port",
            str(port),
            "--secret",
            SECRET,
            "--lake",
            str(lake),
        ],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("listener did not start")


@pytest.fixture(scope="module")
def sampled_events(all_events):
    """A few events of each of the 18 types (:func:`sample_per_type`): what the kill tests deliver (each event a
    subprocess listener lands costs a Delta commit; the scale run of kills is ``benchmarks/landings.py kill``)."""
    events = sample_per_type(all_events)
    assert {e["type"] for e in events} == set(EVENT_TYPES)
    return events


def test_killed_receiver_loses_nothing_that_was_acked(tmp_path, sampled_events):
    all_events = sampled_events
    lake, port = tmp_path / "lake", _free_port()
    proc = _start_listener(lake, port)
    url = f"http://127.0.0.1:{port}/hook"
    acked = []
    try:
        for e in all_events[: len(all_events) // 2]:
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
        report = deliver(all_events, [Destination(url, SECRET)], base_delay=0.05)
        assert not report.failed
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    _assert_same_lake(lake, _expected_lake(tmp_path, all_events))


def test_a_receiver_killed_in_the_middle_of_landings_lands_every_event_once(tmp_path, sampled_events):
    # kill -9 while events are being landed (a Delta commit half done: files written and not yet in the log, a
    # table created and still empty, a commit made and its event id not yet recorded), three times, then deliver
    # everything again: the lake is the one a single clean pass makes, and every table's log reads
    import threading

    import deltalake

    from fdkit.webhooks import Landing

    all_events = sampled_events
    lake, port = tmp_path / "lake", _free_port()
    url = f"http://127.0.0.1:{port}/hook"

    def post_all() -> None:
        for e in all_events:
            try:
                _post(url, e)
            except requests.RequestException:  # killed: the sender will retry
                return

    for delay in (0.4, 1.1, 2.3):
        proc = _start_listener(lake, port)
        sender = threading.Thread(target=post_all)
        sender.start()
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        sender.join()
    proc = _start_listener(lake, port)
    try:
        report = deliver(all_events, [Destination(url, SECRET)], base_delay=0.05)
        assert not report.failed
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert sorted(Landing(lake).landed_ids()) == sorted({str(e["id"]) for e in all_events})
    for log in lake.glob("*/_delta_log"):
        deltalake.DeltaTable(str(log.parent)).to_pyarrow_dataset()  # every commit in the log is whole
    _assert_same_lake(lake, _expected_lake(tmp_path, all_events))


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
                "2023-01-31",
                "--destinations",
                str(dests),
                "--log",
                str(tmp_path / "log.jsonl"),
            ]
        )
        == 0
    )
    curves = read_dataset(DATA, "yield_curve", columns=["date"])["date"]
    days = int(curves.between("2023-01-01", "2023-01-31").sum())  # trading days of January 2023 with a curve
    assert days >= 19 and len(read_landed(receiver.lake, "yield_curve")) == days
    assert (tmp_path / "log.jsonl").read_text().count("\n") >= days
    landed = receiver.app.state.landing
    before = len(landed.landed_ids())
    assert main(["events", "test", "--type", "interest_rates.created", "--destinations", str(dests)]) == 0
    assert len(landed.landed_ids()) == before + 1  # a livemode=false event has its own id


# -- every event type: the rules on a small lake the test writes -------------------------------------------------
def _small_lake(root):
    """Rows for the families the bundled lake cannot trigger (KPIs, balance/cash-flow segments), labour releases
    and an inflation release of twelve series."""
    from fdkit.lake.io import write_dataset

    write_dataset(
        root,
        "company_facts",
        pd.DataFrame({"ticker": ["ZZZ"], "cik": ["0000000009"], "sector": ["Airlines"], "name": ["Zed Air"]}),
    )
    seg = []
    for statement, item in (
        ("income_statement", "revenue"),
        ("balance_sheet", "assets"),
        ("cash_flow_statement", "capital_expenditure"),
    ):
        for label, value in (("North", 10.0), ("South", 20.0)):
            seg.append(
                {
                    "ticker": "ZZZ",
                    "report_period": "2024-12-31",
                    "fiscal_period": "FY2024",
                    "period": "annual",
                    "currency": "USD",
                    "accession_number": "0000000009-25-000001",
                    "filing_date": "2025-02-20",
                    "line_item": item,
                    "category": "segment",
                    "label": label,
                    "value": value,
                    "statement": statement,
                }
            )
    write_dataset(root, "segmented_financials", pd.DataFrame(seg))
    kpi = {
        "ticker": "ZZZ",
        "report_period": "2024-12-31",
        "metric_name": "load_factor",
        "value": 0.84,
        "period_type": "quarterly",
    }
    for name in ("kpi_metrics", "kpi_guidance", "kpi_non_gaap"):
        write_dataset(root, name, pd.DataFrame([kpi, {**kpi, "metric_name": "asm", "value": 1e9}]))
    labor = [
        {"series": "initial_jobless_claims", "date": d, "value": v}
        for d, v in (("2025-01-04", 201000.0), ("2025-01-11", 217000.0))
    ]  # weekly, the week covered
    labor += [
        {"series": s, "date": "2025-01-01", "value": 1.0}
        for s in ("nonfarm_payrolls", "unemployment_rate", "u6_unemployment_rate", "job_openings")
    ]
    # the claims release of the week ending 2025-01-11 publishes continued claims for the week before
    labor += [
        {"series": s, "date": "2025-01-04", "value": v}
        for s, v in (("continued_claims", 1_867_000.0), ("insured_unemployment_rate", 1.2))
    ]
    write_dataset(root, "labor", pd.DataFrame(labor))
    write_dataset(
        root,
        "inflation",
        pd.DataFrame(
            [
                {
                    "series": f"cpi_{i:02d}",
                    "date": "2025-01-01",
                    "value": 100.0 + i,
                    "change_1m_pct": 0.1,
                    "change_12m_pct": 2.9,
                }
                for i in range(12)
            ]
        ),
    )
    return root


@pytest.fixture(scope="module")
def small_lake_events(tmp_path_factory):
    root = _small_lake(tmp_path_factory.mktemp("small-lake"))
    return events_from_lake(
        root, datasets=["segmented_financials", "kpi_metrics", "kpi_guidance", "kpi_non_gaap", "labor", "inflation"]
    )


def test_generator_rules_on_a_small_lake(small_lake_events):
    by_type = {}
    for e in small_lake_events:
        by_type.setdefault(e["type"], []).append(parse_event(e))
    for family in ("income_statement_segments", "balance_sheet_segments", "cash_flow_statement_segments"):
        (ev,) = by_type[f"{family}.created"]  # one event per filing and statement
        assert ev.payload["accession_number"] == "0000000009-25-000001" and ev.payload["form_type"] == "10-K"
        (report,) = ev.payload[family]
        item = {
            "income_statement_segments": "revenue",
            "balance_sheet_segments": "assets",
            "cash_flow_statement_segments": "capital_expenditure",
        }[family]
        assert [(e["label"], e["value"]) for e in report[item]["segment"]] == [("North", 10.0), ("South", 20.0)]
        assert ev.frame()["value"].sum() == 30.0
    for family in ("forward_guidance", "non_gaap_metrics", "operating_kpis"):
        (ev,) = by_type[f"{family}.created"]  # one per (ticker, report period), with the sector
        assert ev.payload["sector"] == "Airlines" and ev.payload["report_period"] == "2024-12-31"
        assert [r["metric_name"] for r in ev.payload[family]] == ["load_factor", "asm"]
    labor = {(e.payload["release"], e.payload["date"]): e for e in by_type["labor.created"]}
    assert set(labor) == {
        ("jobless_claims", "2025-01-04"),
        ("jobless_claims", "2025-01-11"),
        ("jobs_report", "2025-01-01"),
        ("job_openings", "2025-01-01"),
    }
    assert [r["series"] for r in labor[("jobs_report", "2025-01-01")].payload["labor"]] == [
        "nonfarm_payrolls",
        "u6_unemployment_rate",
        "unemployment_rate",
    ]
    claims = {r["series"]: r["date"] for r in labor[("jobless_claims", "2025-01-11")].payload["labor"]}
    assert claims == {
        "continued_claims": "2025-01-04",
        "initial_jobless_claims": "2025-01-11",
        "insured_unemployment_rate": "2025-01-04",
    }
    assert [r["series"] for r in labor[("jobless_claims", "2025-01-04")].payload["labor"]] == ["initial_jobless_claims"]
    assert {"value", "change", "change_year", "change_year_pct"} <= set(
        labor[("jobs_report", "2025-01-01")].payload["labor"][0]
    )
    (infl,) = by_type["inflation.created"]  # all twelve series of the release, with the seed's change fields
    assert len(infl.payload["inflation"]) == 12 and infl.payload["date"] == "2025-01-01"
    assert {"change_1m_pct", "change_12m_pct"} <= set(infl.payload["inflation"][0])


def test_payload_details_from_the_bundled_lake():
    rates = [parse_event(e) for e in events_from_lake(DATA, since="2024-01-01", datasets=["interest_rates"])]
    assert rates and all(e.payload["date"] == e.payload["interest_rates"][0]["date"] for e in rates)
    (curve,) = [
        parse_event(e) for e in events_from_lake(DATA, since="2023-11-30", until="2023-11-30", datasets=["yield_curve"])
    ]
    assert curve.payload["date"] == "2023-11-30" and curve.payload["yield_curve"]["date"] == "2023-11-30"
    assert curve.payload["yield_curve"]["10_year"] == pytest.approx(4.37)
    owners = [parse_event(e) for e in events_from_lake(DATA, datasets=["insider_ownership"])]
    assert owners and {e.payload["form_type"] for e in owners} <= {"3", "5", "3/A", "5/A"}
    rec = owners[0].payload["insider_ownership"][0]
    assert {"as_of_date", "holding_type"} <= set(rec) and "report_date" not in rec


def test_parser_accepts_what_the_spec_allows():
    ev = parse_event(
        make_event(
            "income_statements",
            {**SAMPLES["balance_sheets"], "filing_date": None, "form_type": "10-K/A", "income_statements": []},
        )
    )
    assert ev.payload["filing_date"] is None
    assert parse_event(make_event("forward_guidance", {**SAMPLES["forward_guidance"], "report_period": None}))
    for form, item in (("10-K/A", "Item-7"), ("10-Q/A", "Part-1,Item-2"), ("8-K/A", "Item-2.02")):
        meta = {**SAMPLES["filing_items.metadata"], "filing_type": form, "available_items": [item]}
        assert parse_event(make_event("filing_items.metadata", meta)).payload["filing_type"] == form
    flat = {"date": "2023-11-30", "1_month": 5.56, "30_year": 4.54}  # an older sender's flat curve
    keyed = make_event("yield_curve", SAMPLES["yield_curve"])
    assert parse_event(make_event("yield_curve", flat)).frame().equals(parse_event(keyed).frame())
    extra = {**keyed, "request": {"id": None}, "data": {"object": {**keyed["data"]["object"], "source": "x"}}}
    assert parse_event(extra).payload["source"] == "x"  # unknown fields of the envelope and payload are kept


def _trade(form, accession, filed, *shares):
    return make_event(
        "insider_trades",
        {
            "ticker": "AAA",
            "accession_number": accession,
            "filing_date": filed,
            "form_type": form,
            "insider_trades": [
                {
                    "name": "Doe Jane",
                    "transaction_date": "2024-03-01",
                    "transaction_shares": s,
                    "security_title": "Common Stock",
                }
                for s in shares
            ],
        },
    )


@pytest.mark.parametrize("order", ["original first", "amendment first"])
def test_insider_amendment_replaces_the_filing_it_amends(receiver, order):
    original = _trade("4", "0001-24-000001", "2024-03-04", -100.0, -200.0)
    amendment = _trade("4/A", "0001-24-000002", "2024-03-10", -150.0)
    other = _trade("4", "0001-24-000003", "2024-02-01", 50.0)  # an earlier filing the amendment does not touch
    url = receiver.base_url + "/hook"
    events = [other, original, amendment] if order == "original first" else [amendment, other, original]
    for e in events:
        assert _post(url, e).status_code == 200
    got = read_landed(receiver.lake, "insider_trades").sort_values("filing_date")
    assert got["transaction_shares"].tolist() == [50.0, -150.0]  # the amended state, not three rows
    assert got["form_type"].astype(str).tolist() == ["4", "4/A"]


def test_events_test_sends_every_type(receiver, tmp_path):
    import json

    from fdkit.cli import main

    dests = tmp_path / "destinations.json"
    dests.write_text(json.dumps([{"url": receiver.base_url + "/hook", "secret": SECRET}]))
    assert main(["events", "test", "--destinations", str(dests), "--data", str(_small_lake(tmp_path / "lake2"))]) == 0
    landed = receiver.app.state.landing
    assert sorted(t for (t,) in landed._db.execute("select type from events")) == sorted(EVENT_TYPES)
    assert main(["events", "test", "--type", "nope.created", "--destinations", str(dests)]) == 2


def test_an_amended_filing_sent_again_stays_replaced(receiver):
    original = _trade("4", "0001-24-000001", "2024-03-04", -100.0, -200.0)
    amendment = _trade("4/A", "0001-24-000002", "2024-03-10", -150.0)
    url = receiver.base_url + "/hook"
    for e in (original, amendment):
        assert _post(url, e).status_code == 200
    (parked,) = (receiver.lake / "_webhooks" / "amended").rglob("*.parquet")
    live = receiver.lake / "insider_trades" / parked.parent.name / parked.name
    parked.replace(live)  # as if the receiver had stopped between writing the amendment and parking the original
    assert _post(url, {**original, "id": str(uuid.uuid4())}).status_code == 200  # the original again, new id
    got = read_landed(receiver.lake, "insider_trades")
    assert got["transaction_shares"].tolist() == [-150.0]
    assert len(list((receiver.lake / "_webhooks" / "amended").rglob("*.parquet"))) == 1


# -- envelope times, batches and one event per filing (issue 30, item 7) -------------------------------------------
def test_created_is_when_the_event_was_recorded_not_the_data_date():
    before = int(time.time())
    events = events_from_lake(DATA, since="2024-01-01", until="2024-01-31")
    assert events and all(before <= e["created"] <= int(time.time()) + 1 for e in events)


def test_insider_events_go_out_in_the_next_mornings_batch():
    by_filing = {}
    for e in events_from_lake(DATA, datasets=["insider_trades", "insider_ownership"]):
        by_filing.setdefault(e["data"]["object"]["filing_date"], []).append(e)
    filed = sorted(by_filing)[0]
    batch = (pd.Timestamp(filed) + pd.Timedelta(days=1)).strftime("%Y-%m-%d")
    # a window of the filing day alone holds none of them; the batch day's holds them all
    insider = ["insider_trades", "insider_ownership"]
    assert not events_from_lake(DATA, since=filed, until=filed, datasets=insider)
    again = events_from_lake(DATA, since=batch, until=batch, datasets=insider)
    assert {e["id"] for e in again} == {e["id"] for e in by_filing[filed]}


def test_segment_entries_carry_no_filing_date():
    events = [e for e in events_from_lake(DATA, datasets=["segmented_financials"])]
    assert events
    for e in events:
        payload = e["data"]["object"]
        assert payload["filing_date"]  # the header has it
        family = e["type"].removesuffix(".created")
        assert all("filing_date" not in entry for entry in payload[family])


def test_two_filings_of_one_type_on_one_day_are_two_metadata_events(tmp_path):
    items = read_dataset(DATA, "filing_items")
    one = items[items["accession_number"].notna()].iloc[[0]]
    twin = one.assign(accession_number=one["accession_number"].astype(str).str[:-1] + "9")
    df = pd.concat([one, twin], ignore_index=True)
    found = events_for_rows(
        "filing_items", df, facts=read_dataset(DATA, "company_facts"), base_url="https://fds.example"
    )
    accessions = sorted(e["data"]["object"]["accession_number"] for _, e in found)
    assert accessions == sorted(df["accession_number"].astype(str)) and len({e["id"] for _, e in found}) == 2
    assert all(e["data"]["object"]["url"].startswith("https://fds.example/filings/items?") for _, e in found)


def test_the_events_commands_point_urls_at_the_public_url(receiver, tmp_path):
    from fdkit.cli import main

    dests = tmp_path / "d.json"
    dests.write_text(orjson.dumps([{"url": receiver.base_url + "/hook", "secret": SECRET}]).decode())
    assert (
        main(
            [
                "events",
                "test",
                "--type",
                "filing_items.metadata.created",
                "--destinations",
                str(dests),
                "--public-url",
                "https://fds.example.com/",
            ]
        )
        == 0
    )
    landed = read_landed(receiver.lake, "filing_metadata")
    assert landed["url"].astype(str).str.startswith("https://fds.example.com/filings/items?").all()
    assert main(["events", "test", "--destinations", str(dests), "--public-url", "fds.example.com"]) == 2


def test_a_quarter_fires_its_release_8k_then_its_report():
    import csv
    from pathlib import Path

    raw = Path(__file__).resolve().parents[2] / "shared/data-real-3/earnings-dates/earnings_dates.csv"
    if not raw.exists():
        pytest.skip("../shared/data-real-3 is not beside this clone")
    with open(raw, newline="") as f:
        released = {(r["ticker"], r["earnings_date"]) for r in csv.DictReader(f)}
    events = [
        parse_event(e) for e in events_from_lake(DATA, since="2016-01-01", until="2016-12-31", datasets=["earnings"])
    ]
    eightk = [e for e in events if e.payload["source_type"] == "8-K"]
    assert len(eightk) >= 100
    assert all((e.payload["ticker"], e.payload["filing_date"]) in released for e in eightk)  # the source's days
    reports = {
        (e.payload["ticker"], e.payload["report_period"]): e
        for e in events
        if e.payload["source_type"] in ("10-Q", "10-K")
    }
    ev = next(e for e in eightk if e.payload["ticker"] == "MMM" and ("MMM", e.payload["report_period"]) in reports)
    report = reports[("MMM", ev.payload["report_period"])]
    assert ev.payload["filing_date"] <= report.payload["filing_date"]  # the release first
    for field in ("revenue", "earnings_per_share", "net_income"):
        assert ev.payload["quarterly"][field] == report.payload["quarterly"][field]
    assert ev.payload["quarterly"] == report.payload["quarterly"]  # the record /earnings serves, the 8-K's identity
    assert ev.payload.get("signals") == report.payload.get("signals")
    # a release inside a window fires even when its report is filed after it
    day = ev.payload["filing_date"]
    found = events_from_lake(DATA, since=day, until=day, datasets=["earnings"])
    (late,) = [e for e in found if e["data"]["object"]["ticker"] == "MMM"]
    assert late["data"]["object"]["source_type"] == "8-K"


# -- review mends: windows, landed releases, signals, fields the catalog does not declare ----------------------------
def test_a_claims_event_is_the_same_whatever_window_holds_it(tmp_path):
    from fdkit.lake.io import write_dataset

    labor = [
        {"series": "initial_jobless_claims", "date": "2024-11-02", "value": 221000.0},
        {"series": "continued_claims", "date": "2024-10-26", "value": 1892000.0},
    ]
    write_dataset(tmp_path, "labor", pd.DataFrame(labor))
    write_dataset(tmp_path, "company_facts", pd.DataFrame({"ticker": ["A"], "cik": ["0000000001"]}))
    whole = events_from_lake(tmp_path, datasets=["labor"])
    window = events_from_lake(tmp_path, since="2024-11-01", until="2024-11-30", datasets=["labor"])
    assert [e["id"] for e in whole] == [e["id"] for e in window] and len(whole) == 1
    assert whole[0]["data"] == window[0]["data"]  # one id, one content
    assert events_from_lake(tmp_path, since="2024-10-20", until="2024-10-31", datasets=["labor"]) == []


def test_window_dates_in_any_spelling():
    import datetime as dt

    padded = events_from_lake(DATA, since="2024-01-01", until="2024-12-31", datasets=["interest_rates"])
    assert padded
    for since in ("2024-1-1", dt.date(2024, 1, 1)):
        found = events_from_lake(DATA, since=since, until="2024-12-31", datasets=["interest_rates"])
        assert [e["id"] for e in found] == [e["id"] for e in padded]


def test_report_events_carry_their_signals_and_releases_none():
    events = [
        e["data"]["object"]
        for e in events_from_lake(DATA, since="2016-01-01", until="2016-12-31", datasets=["earnings"])
    ]
    reports = [e for e in events if e["source_type"] in ("10-Q", "10-K")]
    fired = [e for e in reports if "signals" in e]
    assert fired and all(e["signals"] and e["signals"][0]["type"] for e in fired)
    by_report = {(e["ticker"], e["report_period"]): e.get("signals") for e in reports}
    assert all(
        e.get("signals") == by_report.get((e["ticker"], e["report_period"]))
        for e in events
        if e["source_type"] == "8-K" and (e["ticker"], e["report_period"]) in by_report
    )  # its report's
    served = read_dataset(DATA, "earnings")
    with_signals = served[served["signals"].map(lambda s: s is not None and len(s) > 0)]
    one = fired[0]
    row = with_signals[
        (with_signals["ticker"] == one["ticker"])
        & (with_signals["report_period"] == pd.Timestamp(one["report_period"]))
    ]
    assert [s["type"] for s in row["signals"].iloc[0]] == [s["type"] for s in one["signals"]]


RELEASE_STEP = 16


def test_a_landed_release_is_replayed_once(tmp_path):
    landed, events = land_releases_and_replay(tmp_path, RELEASE_STEP)
    assert landed >= 5, landed


def land_releases_and_replay(tmp_path: Path, step: int) -> tuple[int, int]:
    """Land every ``step``-th 8-K release of three days into a copy of the bundled lake, generate the days' events
    again: each event once (a landed release is not a second event). Returns (releases landed, events)."""
    import shutil

    lake = tmp_path / "lake"
    shutil.copytree(DATA, lake)
    window = ("2016-04-26", "2016-04-28")  # three days of the earnings season: dozens of releases
    events = events_from_lake(lake, since=window[0], until=window[1], datasets=["earnings"])
    releases = [e for e in events if e["data"]["object"]["source_type"] == "8-K"]
    assert releases
    from fdkit.webhooks.events import parse_event as parse
    from fdkit.webhooks.receiver import Landing

    landing = Landing(lake)  # what the receiver does with each delivered event
    # a spread of the window's releases (each landing commits to the converted bundled table, ~0.5 s; all 127 of
    # them: python benchmarks/faults_at_scale.py release)
    for e in releases[::step]:
        landing.land(parse(e))
        landing.commit(parse(e))
    landing.close()
    again = events_from_lake(lake, since=window[0], until=window[1], datasets=["earnings"])
    assert len({e["id"] for e in again}) == len(again) == len(events)
    return len(releases[::step]), len(events)


def test_fields_the_catalog_does_not_declare_survive_the_lake(tmp_path):
    from fdkit.lake.io import write_dataset

    facts = pd.DataFrame(
        {
            "ticker": ["ZZZ"],
            "name": ["Zed"],
            "cik": ["0000000009"],
            "events": [
                [
                    {
                        "type": "ticker_change",
                        "date": "2024-01-02",
                        "ticker": "ZZZ",
                        "previous_ticker": "ZZ",
                        "cusip": "123",
                    },
                    {"type": "delisting", "date": "2025-01-02", "reason": "acquired"},
                ]
            ],
        }
    )
    write_dataset(tmp_path, "company_facts", facts)
    signal = {
        "type": "EPS_BEAT",
        "metric": "earnings_per_share",
        "period": "quarterly",
        "headline": "beat",
        "importance": "HIGH",
        "details": {"actual": 1.4, "estimate": 1.33, "surprise_pct": 5.3},
    }
    earnings = pd.DataFrame(
        {
            "ticker": ["ZZZ"],
            "report_period": ["2024-03-31"],
            "source_type": ["10-Q"],
            "filing_date": ["2024-04-30"],
            "signals": [[signal]],
        }
    )
    write_dataset(tmp_path, "earnings", earnings)
    with fdkit.server.start(tmp_path) as srv:
        headers = {"X-API-KEY": srv.api_key}
        got = requests.get(srv.base_url + "/company/facts", params={"ticker": "ZZZ"}, headers=headers, timeout=30)
        assert got.json()["company_facts"]["events"] == [
            {"type": "ticker_change", "date": "2024-01-02", "ticker": "ZZZ", "previous_ticker": "ZZ", "cusip": "123"},
            {"type": "delisting", "date": "2025-01-02", "reason": "acquired"},
        ]
        got = requests.get(srv.base_url + "/earnings", params={"ticker": "ZZZ"}, headers=headers, timeout=30)
        assert got.json()["earnings"][0]["signals"] == [signal]
