"""Balance-sheet and cash-flow segments from the instance documents' dimensional facts (issue 30, item 8).

Checked against the raw instance documents in ``../shared``, parsed here with csv and gzip alone.
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest
import requests

from fdkit.lake.io import default_data_dir, read_dataset
from fdkit.webhooks import events_from_lake, parse_event

INSTANCES = Path(__file__).resolve().parents[2] / "shared/data-real/fundamentals/xbrl_instance_facts"
DATA = default_data_dir()


def _needs_instances() -> None:
    if not INSTANCES.exists():
        pytest.skip("../shared/data-real is not beside this clone")


def _raw(document: str, concept: str, member: str) -> list[float]:
    _needs_instances()
    with gzip.open(INSTANCES / f"{document}.csv.gz", "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    one = [r for r in rows if r["dimensions"].endswith("=" + member) and "|" not in r["dimensions"]]
    return [float(r["value"]) for r in one if r["concept"] == concept]


def _served(ticker: str, statement: str, item: str) -> dict[tuple[str, str], float]:
    df = read_dataset(DATA, "segmented_financials")
    df = df[(df["ticker"] == ticker) & (df["statement"] == statement) & (df["line_item"] == item)]
    return {(str(r.report_period.date()), str(r.label)): r.value for r in df.itertuples()}


def test_balance_sheet_segments_are_the_documents_figures():
    inventory = _served("TSLA", "balance_sheet", "inventory")
    raw = _raw("TSLA_10-Q_2024Q2_2024-06-30", "us-gaap:InventoryNet", "tsla:AutomotiveSegmentMember")
    assert inventory[("2024-06-30", "Automotive")] in raw


def test_cash_flow_segments_carry_the_statements_sign():
    capex = _served("KO", "cash_flow_statement", "capital_expenditure")
    _needs_instances()  # (the glob below looks in that folder)
    raw = _raw(
        next(p.name[: -len(".csv.gz")] for p in sorted(INSTANCES.glob("KO_10-K_*2024*.csv.gz"))),
        "us-gaap:SegmentExpenditureAdditionToLongLivedAssets",
        "ko:NorthAmericaSegmentMember",
    )
    assert raw and -capex[("2024-12-31", "North America")] in raw  # an outflow, negative as on the statements
    assert all(v <= 0 for v in capex.values()) and not any(str(v) == "-0.0" for v in capex.values())
    dna = _served("KO", "cash_flow_statement", "depreciation_and_amortization")
    assert dna and all(v >= 0 for v in dna.values())


def test_balance_sheet_and_cash_flow_segment_events_come_from_the_data():
    events = [parse_event(e) for e in events_from_lake(DATA, datasets=["segmented_financials"])]
    by_type = {t: [e for e in events if e.type == t] for t in {e.type for e in events}}
    assert len(by_type["balance_sheet_segments.created"]) >= 5
    assert len(by_type["cash_flow_statement_segments.created"]) >= 5
    ev = by_type["cash_flow_statement_segments.created"][0]
    assert ev.frame()["value"].notna().all()


def test_the_segments_endpoints_serve_them(ref_server):
    r = requests.get(
        ref_server.base_url + "/financials/balance-sheets/segments",
        params={"ticker": "TSLA", "period": "quarterly", "limit": 20},
        headers={"X-API-KEY": ref_server.api_key},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    reports = r.json()["segmented_financials"]
    assert any(rep.get("inventory", {}).get("segment") for rep in reports)
