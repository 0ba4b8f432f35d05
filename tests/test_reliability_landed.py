"""Issue 44's smaller items about landed data (RELIABILITY.md section 20).

A ticker spelt in lower case by an event lands under the lake's spelling; a landed dataset is read by plain
``pd.read_parquet(folder)`` as the receiver's docstring says; a ledger an older fdkit kept is read.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pandas as pd
import pytest
import requests

import fdkit.server
from fdkit.lake.io import read_dataset
from fdkit.lake.validate import validate
from fdkit.webhooks import create_receiver, make_event, sign

SECRET = "whsec_landed_0123456789"


def post(url: str, event: dict) -> requests.Response:
    body = orjson.dumps(event)
    return requests.post(
        url, data=body, headers={"X-FDS-Signature": sign(SECRET, body), "Content-Type": "application/json"}, timeout=60
    )


def statement_event(ticker: str, period: str, revenue: float, *, record_ticker: str | None = None) -> dict:
    record = {"report_period": period, "period": "quarterly", "revenue": revenue, "currency": "USD"}
    if record_ticker is not None:
        record["ticker"] = record_ticker
    payload = {
        "ticker": ticker,
        "accession_number": f"0000000000-31-{int(revenue):06d}",
        "filing_date": "2031-01-05",
        "form_type": "10-Q",
        "income_statements": [record],
    }
    return make_event("income_statements", payload)


@pytest.fixture()
def receiver(tmp_path):
    with fdkit.server.serve_app(create_receiver(tmp_path / "lake", SECRET)) as srv:
        yield srv.base_url + "/hook", tmp_path / "lake"


def test_a_lower_case_ticker_lands_under_the_lakes_spelling(receiver):
    url, lake = receiver
    assert post(url, statement_event("aapl", "2030-03-31", 1.0)).status_code == 200
    assert post(url, statement_event(" Aapl", "2030-06-30", 2.0, record_ticker="aapl")).status_code == 200
    assert post(url, statement_event("AAPL", "2030-09-30", 3.0)).status_code == 200
    rows = read_dataset(lake, "income_statements")
    assert sorted(rows["ticker"].astype(str).unique()) == ["AAPL"]
    assert sorted(rows["revenue"]) == [1.0, 2.0, 3.0]
    assert sorted(p.name for p in (lake / "income_statements").iterdir() if p.name.startswith("ticker=")) == [
        "ticker=AAPL"
    ]
    # a record naming another ticker than its envelope is still refused (the spelling is compared, not the case)
    refused = post(url, statement_event("aapl", "2030-12-31", 4.0, record_ticker="msft"))
    assert refused.status_code == 400 and "MSFT" in refused.json()["message"], refused.text
    assert not [f for f in validate(lake) if f.violations and f.name == "landed_events_in_lake"]


def test_a_landed_dataset_is_read_by_plain_pandas(receiver):
    url, lake = receiver
    for i, ticker in enumerate(["AAPL", "MSFT", "NVDA"] * 2):  # several tickers' files, a few replaced
        period = f"2030-{3 * (i % 4) + 3:02d}-28"
        assert post(url, statement_event(ticker, period, 10.0 + i)).status_code == 200
    assert post(url, statement_event("AAPL", "2030-03-28", 99.0)).status_code == 200  # a re-filing replaces
    folder = lake / "income_statements"
    plain = pd.read_parquet(folder)  # every file of the folder, as pandas reads a Parquet dataset
    landed = read_dataset(lake, "income_statements")
    assert len(plain) >= len(landed) == 6
    live = plain.merge(
        landed[["ticker", "report_period", "revenue"]].astype({"ticker": str}), on=["report_period", "revenue"]
    )
    assert len(live) == len(landed)


def _old_ledger(lake: Path, ids: list[str]) -> None:
    """The ledger an fdkit before the writer seam kept: event ids only."""
    import sqlite3

    (lake / "_webhooks").mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(lake / "_webhooks" / "events.sqlite") as db:
        db.execute("create table events (id text primary key, type text, landed_at real)")
        db.executemany("insert into events values (?, 'income_statements.created', 0)", [(i,) for i in ids])


def test_a_ledger_an_older_fdkit_kept_is_read_by_the_mirror_and_taken_on_by_the_receiver(tmp_path):
    from fdkit.lake.writer import LakeWriter

    lake = tmp_path / "lake"
    old = statement_event("AAPL", "2030-03-31", 1.0)
    _old_ledger(lake, [old["id"]])
    # the mirror's commit of a ticker reads the ledger's landed rows: none are known in an old ledger (no crash)
    mine = pd.DataFrame(
        {"ticker": ["AAPL"], "report_period": [pd.Timestamp("2029-12-31")], "period": ["quarterly"], "revenue": [5.0]}
    )
    assert LakeWriter(lake).replace_rows("income_statements", mine, value="AAPL") == 1
    with fdkit.server.serve_app(create_receiver(lake, SECRET)) as srv:  # the receiver takes the old ledger on
        url = srv.base_url + "/hook"
        assert post(url, old).json()["status"] == "duplicate"  # its old events stay landed
        new = statement_event("AAPL", "2030-06-30", 2.0)
        assert post(url, new).json()["status"] == "landed"
    from fdkit.lake.ledger import Ledger

    ledger = Ledger(lake, readonly=True)
    try:
        assert ledger.seen(old["id"]) and ledger.seen(new["id"])
        assert [e for e, _, _ in ledger.landed_rows()] == [new["id"]]  # the new event's rows are known
    finally:
        ledger.close()
    assert sorted(read_dataset(lake, "income_statements")["revenue"]) == [2.0, 5.0]
    assert not [f for f in validate(lake) if f.name == "landed_events_in_lake" and not f.ok]
