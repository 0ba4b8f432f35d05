"""Reliability, third round: poison webhook events refused, dropped tickers named, one retry policy for every fault,
frames whose dtypes do not depend on the data, bad input as typed errors.

Each test failed before the change it guards (see RELIABILITY.md for the figures measured).
"""

from __future__ import annotations

import copy

import orjson
import pytest
import requests

import fdkit.server
from fdkit.lake.io import RECORD_KEYS, default_data_dir
from fdkit.webhooks import create_receiver, events_from_lake, make_event, sign
from fdkit.webhooks.receiver import LANDING

SECRET = "whsec_reliability_iii"


# -- 1. poison webhook events are refused --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def statement_event():
    """A real income-statement event of the bundled lake (an annual filing: several records)."""
    events = events_from_lake(default_data_dir(), since="2024-10-01", until="2024-12-31",
                              datasets=["income_statements"])  # fmt: skip
    return next(e for e in events if e["data"]["object"]["ticker"] == "AAPL"
                and len(e["data"]["object"]["income_statements"]) > 1)  # fmt: skip


@pytest.fixture()
def receiver(tmp_path):
    lake = tmp_path / "lake"
    srv = fdkit.server.serve_app(create_receiver(lake, SECRET))
    srv.lake = lake
    yield srv
    srv.stop()


def _post(url: str, event: dict) -> requests.Response:
    body = orjson.dumps(event)
    return requests.post(url, data=body, headers={"X-FDS-Signature": sign(SECRET, body)}, timeout=10)


def _dead_letters(lake) -> list[dict]:
    path = lake / "_webhooks" / "dead-letter.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def _refused(receiver, event: dict, *words: str) -> None:
    r = _post(receiver.base_url + "/hook", event)
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"error", "message"}
    assert all(w in body["message"] for w in words), body["message"]
    assert not list(receiver.lake.rglob("*.parquet"))  # not even the event's good records
    dead = _dead_letters(receiver.lake)
    assert [d["id"] for d in dead] == [event["id"]] and all(w in dead[0]["reason"] for w in words)
    again = _post(receiver.base_url + "/hook", event)  # never remembered as landed: refused again, not "duplicate"
    assert again.status_code == 400


def test_a_statement_record_without_its_report_period_is_refused_and_dead_lettered(receiver, statement_event):
    event = copy.deepcopy(statement_event)
    del event["data"]["object"]["income_statements"][-1]["report_period"]
    _refused(receiver, event, "report_period", "record")


def test_a_record_naming_another_ticker_than_its_envelope_is_refused(receiver, statement_event):
    event = copy.deepcopy(statement_event)
    event["data"]["object"]["income_statements"][0]["ticker"] = "MSFT"
    _refused(receiver, event, "ticker", "'MSFT'", "'AAPL'")


@pytest.mark.parametrize("field", ["period", "ticker"])
def test_a_statement_record_without_a_key_field_is_refused(receiver, statement_event, field):
    event = copy.deepcopy(statement_event)
    event["data"]["object"]["income_statements"][0][field] = None  # a null key overrides the envelope's ticker too
    _refused(receiver, event, field)


def test_an_interest_rate_of_another_bank_and_an_undated_earnings_record_are_refused(tmp_path):
    rates = make_event("interest_rates", {"bank": "FED", "date": "2024-11-07", "interest_rates": [
        {"bank": "ECB", "date": "2024-11-07", "name": "MRO", "rate": 3.4}]})  # fmt: skip
    earnings = make_event("earnings", {"ticker": "AAPL", "source_type": "8-K", "quarterly": {"revenue": 1.0}})
    for event, words in ((rates, ("bank", "'ECB'", "'FED'")), (earnings, ("report_period",))):
        lake = tmp_path / event["type"]
        srv = fdkit.server.serve_app(create_receiver(lake, SECRET))
        srv.lake = lake
        try:
            _refused(srv, event, *words)
        finally:
            srv.stop()


def test_the_untouched_event_still_lands(receiver, statement_event):
    r = _post(receiver.base_url + "/hook", statement_event)
    assert r.status_code == 200 and r.json()["status"] == "landed"
    assert list(receiver.lake.rglob("*.parquet")) and not _dead_letters(receiver.lake)


def test_every_landing_rule_requires_its_partition_and_the_lake_record_key():
    for family, rule in LANDING.items():
        needed = {rule.partition} - {None} | set(RECORD_KEYS.get(rule.dataset, ()))
        assert needed <= set(rule.required), (family, needed - set(rule.required))
