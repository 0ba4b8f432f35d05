"""Issue 43 (Fidelity IV), items 6 and 7: webhook events as the service sends them, on the bundled lake.

* ``fdkit events test`` sends the newest event of each type without generating the whole lake (seconds, not
  minutes), each the event a full replay lists last of its type;
* insider events of a day go out in that day's early-morning batch, before the day's other events;
* the 8-K ``earnings.created`` objects are what ``GET /earnings`` answers for that ticker and report period;
* company facts' ``events`` carry events only (former names under their own key);
* 8-K filing items carry ``exhibits`` only where exhibits exist.
"""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest

import fdkit
from fdkit.lake import default_data_dir, read_dataset
from fdkit.webhooks import EVENT_TYPES, create_receiver, events_from_lake, parse_event
from fdkit.webhooks.generate import EARLY_BATCH, INSIDER_BATCH_LAG, latest_events

DATA = default_data_dir()
SECRET = "fidelity-iv-secret-0123456789"


@pytest.fixture()
def receiver(tmp_path):
    """The real receiver (``fdkit webhooks listen``'s app) on a free loopback port."""
    app = create_receiver(tmp_path / "lake", SECRET)
    with fdkit.server.serve_app(app) as srv:
        srv.lake = tmp_path / "lake"
        yield srv


# -- 1. fdkit events test ------------------------------------------------------------------------------------------
def test_events_test_sends_every_type_of_the_bundled_lake_in_seconds(receiver, tmp_path):
    from fdkit.cli import main

    dests = tmp_path / "destinations.json"
    dests.write_text(json.dumps([{"url": receiver.base_url + "/hook", "secret": SECRET}]))
    log = tmp_path / "log.jsonl"
    t0 = time.monotonic()
    assert main(["events", "test", "--destinations", str(dests), "--log", str(log)]) == 0
    took = time.monotonic() - t0
    assert took < 30, f"fdkit events test took {took:.1f} s (a full generation of the lake takes minutes)"
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(s["type"] for s in sent) == sorted(EVENT_TYPES) and {s["status"] for s in sent} == {200}
    landed = receiver.app.state.landing
    assert sorted(t for (t,) in landed._db.execute("select type from events")) == sorted(EVENT_TYPES)


@pytest.mark.parametrize(
    "dataset",
    [
        "earnings",
        "insider_trades",
        "insider_ownership",
        "segmented_financials",
        "interest_rates",
        "inflation",
        "labor",
        "yield_curve",
        "filing_items",
    ],
)
def test_the_test_event_is_the_newest_a_full_replay_gives(dataset):
    """The same event (id and content) a replay of the whole dataset lists last of its type."""
    full = events_from_lake(DATA, datasets=[dataset], livemode=False)
    last = {e["type"]: e for e in full}
    assert last
    got = latest_events(DATA, list(last), livemode=False)
    assert set(got) == set(last)
    for event_type, event in last.items():
        assert got[event_type]["id"] == event["id"] and got[event_type]["data"] == event["data"], event_type
        assert got[event_type]["livemode"] is False


def test_the_test_events_of_the_statements_come_from_the_latest_filing_day():
    got = latest_events(DATA, ["income_statements.created", "balance_sheets.created"])
    latest_day = read_dataset(DATA, "income_statements")["filing_date"].max().strftime("%Y-%m-%d")
    assert {e["data"]["object"]["filing_date"] for e in got.values()} == {latest_day}


def test_a_lake_without_a_dataset_gives_no_test_event_of_its_types(tmp_path):
    from fdkit.lake.io import write_dataset

    write_dataset(tmp_path, "company_facts", pd.DataFrame({"ticker": ["A"], "cik": ["0000000001"]}))
    assert latest_events(tmp_path, ["operating_kpis.created", "yield_curve.created"]) == {}


# -- 3. insider events in the early-morning batch ---------------------------------------------------------------------
def _insider_and_statement_day() -> str:
    trades = read_dataset(DATA, "insider_trades")["filing_date"]
    statements = read_dataset(DATA, "income_statements")["filing_date"]
    both = set((trades + INSIDER_BATCH_LAG).dropna()) & set(statements.dropna())
    return max(both).strftime("%Y-%m-%d")


def test_a_days_insider_events_go_out_first_in_its_morning_batch():
    day = _insider_and_statement_day()
    events = [parse_event(e) for e in events_from_lake(DATA, since=day, until=day)]
    types = [e.type for e in events]
    insider = [i for i, t in enumerate(types) if t in EARLY_BATCH]
    others = [i for i, t in enumerate(types) if t not in EARLY_BATCH]
    assert insider and others and max(insider) < min(others), types
    # the batch is of the previous day's filings
    prev = (pd.Timestamp(day) - INSIDER_BATCH_LAG).strftime("%Y-%m-%d")
    assert {events[i].payload["filing_date"] for i in insider} == {prev}
    assert all(events[i].payload["filing_date"] == day for i in others if "filing_date" in events[i].payload)


def test_over_a_window_every_days_batch_precedes_that_days_other_events():
    day = _insider_and_statement_day()
    start = (pd.Timestamp(day) - pd.Timedelta(days=30)).strftime("%Y-%m-%d")
    events = events_from_lake(DATA, since=start, until=day, datasets=["insider_trades", "income_statements"])
    seen_other: set[str] = set()
    for e in events:
        obj = e["data"]["object"]
        if e["type"] in EARLY_BATCH:
            effective = (pd.Timestamp(obj["filing_date"]) + INSIDER_BATCH_LAG).strftime("%Y-%m-%d")
            assert effective not in seen_other, (effective, e["type"])
        else:
            seen_other.add(obj["filing_date"])
    assert seen_other


# -- 5. 8-K items carry exhibits only where exhibits exist ----------------------------------------------------------
@pytest.fixture(scope="module")
def exhibits_server(tmp_path_factory):
    """A server over the bundled filings and facts plus one 8-K exhibit (the bundled lake holds none)."""
    import shutil

    from fdkit.lake.io import write_dataset

    lake = tmp_path_factory.mktemp("exhibits")
    for name in ("filing_items", "company_facts"):
        shutil.copytree(DATA / name, lake / name)
    items = read_dataset(DATA, "filing_items")
    nvda = items[(items["ticker"] == "NVDA") & (items["filing_type"].astype(str) == "8-K")]
    accession = str(nvda["accession_number"].iloc[0])
    exhibit = {
        "accession_number": accession,
        "item": "Item-9.01",
        "number": "99.1",
        "description": "Press release",
        "url": "https://www.sec.gov/Archives/x.htm",
        "text": "Revenue grew.",
    }
    write_dataset(lake, "filing_exhibits", pd.DataFrame([exhibit]))
    with fdkit.server.start(data=lake) as srv:
        srv.accession = accession
        srv.year = int(nvda["year"].iloc[0])
        yield srv


def _items(srv, params):
    import requests

    r = requests.get(srv.base_url + "/filings/items", params=params, headers={"X-API-KEY": srv.api_key}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def test_an_8k_item_carries_exhibits_only_where_it_has_some(exhibits_server):
    srv = exhibits_server
    items = {i["number"]: i for i in _items(srv, {"ticker": "NVDA", "accession_number": srv.accession})}
    assert set(items) == {"Item-5.02", "Item-9.01"}
    assert "exhibits" not in items["Item-5.02"]  # no exhibit linked: no key, not an empty list
    assert items["Item-9.01"]["exhibits"] == [
        {"number": "99.1", "description": "Press release", "url": "https://www.sec.gov/Archives/x.htm"}
    ]
    with_text = {
        i["number"]: i
        for i in _items(srv, {"ticker": "NVDA", "accession_number": srv.accession, "include_exhibits": "true"})
    }
    assert with_text["Item-9.01"]["exhibits"][0]["text"] == "Revenue grew."
    assert "exhibits" not in with_text["Item-5.02"]


def test_no_bundled_8k_item_carries_an_empty_exhibits_list(ref_server):
    items = read_dataset(DATA, "filing_items")
    eightk = items[items["filing_type"].astype(str) == "8-K"][["ticker", "accession_number"]].drop_duplicates()
    assert len(eightk)
    seen = 0
    for ticker, accession in eightk.itertuples(index=False):
        for item in _items(ref_server, {"ticker": str(ticker), "accession_number": str(accession)}):
            assert item.get("exhibits", None) != [], (ticker, accession, item["number"])
            seen += 1
    for item in _items(ref_server, {"ticker": "AAPL", "filing_type": "10-K", "year": 2024, "include_exhibits": "true"}):
        assert "exhibits" not in item  # a 10-K has no linked exhibits in the lake
    assert seen


# -- 4. company facts: events are events, former names a field of their own --------------------------------------
def test_no_company_carries_a_former_name_among_its_events(ref_server):
    import requests

    facts = read_dataset(DATA, "company_facts")
    stored = [e["type"] for events in facts["events"].dropna() for e in events]
    assert stored and set(stored) == {"ticker_change"}  # the lake itself: only ticker changes are events
    names = {
        t: [n["name"] for n in v]
        for t, v in zip(facts["ticker"], facts["former_names"], strict=True)
        if v is not None and len(v)
    }
    assert names == {
        "AAPL": ["APPLE INC", "APPLE COMPUTER INC", "APPLE COMPUTER INC/ FA"],
        "NVDA": ["NVIDIA CORP/CA"],
        "TSLA": ["TESLA MOTORS INC"],
    }  # the 5 of the SEC profiles
    for ticker in ("AAPL", "NVDA", "TSLA", "META", "MSFT"):
        r = requests.get(
            ref_server.base_url + "/company/facts",
            params={"ticker": ticker},
            headers={"X-API-KEY": ref_server.api_key},
            timeout=60,
        )
        company = r.json()["company_facts"]
        assert all(e["type"] == "ticker_change" for e in company["events"]), ticker
        assert [n["name"] for n in company["former_names"]] == names.get(ticker, []), ticker
    tesla = requests.get(
        ref_server.base_url + "/company/facts",
        params={"ticker": "TSLA"},
        headers={"X-API-KEY": ref_server.api_key},
        timeout=60,
    ).json()["company_facts"]
    assert tesla["events"] == []
    assert tesla["former_names"] == [{"name": "TESLA MOTORS INC", "start_date": "2005-02-17", "end_date": "2017-01-27"}]


def test_a_lake_that_kept_former_names_among_events_is_served_with_them_apart(tmp_path):
    """A lake built (or mirrored) before former names had their own field: the service still answers events only."""
    import requests

    from fdkit.lake.io import write_dataset

    old = [
        {"type": "ticker_change", "date": "2024-01-02", "ticker": "ZZZ", "previous_ticker": "ZZ"},
        {"type": "former_name", "name": "ZED CORP", "start_date": "2001-01-01", "end_date": "2020-05-01"},
    ]
    write_dataset(tmp_path, "company_facts", pd.DataFrame({"ticker": ["ZZZ"], "cik": ["0000000009"], "events": [old]}))
    with fdkit.server.start(tmp_path) as srv:
        r = requests.get(
            srv.base_url + "/company/facts", params={"ticker": "ZZZ"}, headers={"X-API-KEY": srv.api_key}, timeout=30
        )
    company = r.json()["company_facts"]
    assert company["events"] == [old[0]]
    assert company["former_names"] == [{"name": "ZED CORP", "start_date": "2001-01-01", "end_date": "2020-05-01"}]


# -- 2. earnings events carry the record GET /earnings answers ------------------------------------------------------
#: the fields naming the filing an earnings record comes from: a release's are the 8-K's, not its report's
FILING_IDENTITY = {"source_type", "filing_date", "filing_datetime", "filing_window", "accession_number", "filing_url"}


def _served_earnings(srv, ticker: str) -> list[dict]:
    import requests

    headers = {"X-API-KEY": srv.api_key}
    body = requests.get(
        srv.base_url + "/earnings", params={"ticker": ticker, "limit": 40}, headers=headers, timeout=60
    ).json()
    records = body["earnings"]
    while body.get("next_page_url"):
        body = requests.get(body["next_page_url"], headers=headers, timeout=60).json()
        records += body["earnings"]
    return records


@pytest.mark.parametrize("window", [("2016-04-26", "2016-04-28"), ("2024-07-20", "2024-11-10")])
def test_earnings_events_are_the_records_earnings_serves(ref_server, window):
    events = [
        e["data"]["object"] for e in events_from_lake(DATA, since=window[0], until=window[1], datasets=["earnings"])
    ]
    releases = [e for e in events if e["source_type"] == "8-K"]
    assert len(releases) >= 2
    for event in releases[:12] + [e for e in events if e["source_type"] != "8-K"][:6]:
        served = [
            r for r in _served_earnings(ref_server, event["ticker"]) if r["report_period"] == event["report_period"]
        ]
        (record,) = served  # the quarter's record (its 10-Q/10-K)
        if event["source_type"] != "8-K":
            assert event == record, (event["ticker"], event["report_period"])
            continue
        same = {k: v for k, v in event.items() if k not in FILING_IDENTITY}
        assert same == {k: v for k, v in record.items() if k not in FILING_IDENTITY}, event["ticker"]
        assert set(event) == set(record)  # the same fields, nothing left out or added
        # the filing identity is the release's: its day and time, its session, no accession or URL the sources lack
        assert event["filing_date"] == record["release_date"] <= record["filing_date"]
        assert event["filing_datetime"] == record["release_datetime"]
        assert event["accession_number"] is None and event["filing_url"] is None


def test_a_release_after_the_close_is_in_the_after_hours_window():
    from fdkit.webhooks.generate import _session

    assert _session("2016-04-26T16:30:21-04:00") == "AFTER_HOURS"
    assert _session("2016-04-26T07:00:00-04:00") == "PRE_MARKET"
    assert _session("2016-04-26T12:00:00-04:00") == "DURING_MARKET"
    assert _session("2016-04-30T12:00:00-04:00") == "WEEKEND" and _session(None) is None
