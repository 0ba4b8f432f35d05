"""A landing never breaks the lake: events landed into a copy of the bundled lake (flat part files beside the
receiver's hive partitions) leave every query answering 200 and `fdkit lake validate` running clean."""

from __future__ import annotations

import copy
import shutil
import uuid

import deltalake
import orjson
import pandas as pd
import pytest
import requests
from examples import EXAMPLES
from lakes import few_insider_trades

import fdkit.server
from fdkit.catalog import CATALOG
from fdkit.lake import LakeReader, default_data_dir, is_delta, read_dataset
from fdkit.lake.validate import validate
from fdkit.webhooks import create_receiver, events_from_lake, sign

DATA = default_data_dir()
SECRET = "whsec_landing_test_secret_0123456789"
STATEMENT_FAMILIES = ("income_statements", "balance_sheets", "cash_flow_statements", "financial_metrics")


def _renamed(event: dict, ticker: str) -> dict:
    """The same filing event for a ticker the lake has never seen (its accession another filer's: one accession
    names one company's filing)."""
    out = copy.deepcopy(event)
    out["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{event['id']}/{ticker}"))
    obj = out["data"]["object"]

    def own(accession: object) -> object:
        return "9999999999" + accession[10:] if isinstance(accession, str) else accession

    obj["ticker"] = ticker
    if "accession_number" in obj:
        obj["accession_number"] = own(obj["accession_number"])
    for value in obj.values():
        for rec in value if isinstance(value, list) else []:
            if isinstance(rec, dict) and "ticker" in rec:
                rec["ticker"] = ticker
                if "accession_number" in rec:
                    rec["accession_number"] = own(rec["accession_number"])
    return out


@pytest.fixture(scope="module")
def landed(tmp_path_factory):
    lake = tmp_path_factory.mktemp("landed") / "lake"
    shutil.copytree(DATA, lake)
    events = few_insider_trades(events_from_lake(DATA, since="2023-10-01", until="2024-03-31"))
    new = [
        _renamed(e, "ZZZQ")
        for e in events
        if e["type"].split(".")[0] in STATEMENT_FAMILIES and e["data"]["object"].get("ticker") == "GOOGL"
    ]
    assert new, "the window has GOOGL filings to re-address"
    with fdkit.server.serve_app(create_receiver(lake, SECRET)) as srv:
        for event in [*events, *new]:
            body = orjson.dumps(event)
            headers = {"X-FDS-Signature": sign(SECRET, body), "Content-Type": "application/json"}
            r = requests.post(srv.base_url + "/hook", data=body, headers=headers, timeout=30)
            assert r.status_code == 200, (event["type"], r.text)
    return lake


def test_the_landing_mixed_layouts_in_one_dataset(landed):
    # the state users reach: the bundled flat part file and the receiver's ticker= partitions side by side
    base = landed / "income_statements"
    assert (base / "part-0.parquet").exists() and any(base.glob("ticker=*/*.parquet"))
    # the first landing converted the plain dataset to a Delta table in place: the bundled file is its version 0
    assert is_delta(landed, "income_statements") and not is_delta(landed, "prices")
    assert deltalake.DeltaTable(str(base)).history()[-1]["operation"] == "CONVERT"


@pytest.fixture(scope="module")
def landed_server(landed):
    with fdkit.server.start(data=landed) as srv:
        yield srv


@pytest.mark.parametrize("name", [n for n, q in EXAMPLES.items() if q is not None])
def test_every_query_answers_200_after_landings(landed_server, name):
    ep, srv = CATALOG[name], landed_server
    headers = {"X-API-KEY": srv.api_key}
    if ep.method == "GET":
        r = requests.get(srv.base_url + ep.path, params=EXAMPLES[name], headers=headers, timeout=60)
    else:
        r = requests.post(srv.base_url + ep.path, json=EXAMPLES[name], headers=headers, timeout=60)
    assert r.status_code == 200, (name, r.status_code, r.text[:300])


def test_a_new_ticker_and_an_existing_one_are_served_from_the_landed_lake(landed_server):
    srv = landed_server
    with fdkit.Client(srv.api_key, srv.base_url, cache=False, progress=False) as c:
        new = c.income_statements("ZZZQ", period="quarterly", limit=None)
        old = c.income_statements("AAPL", period="quarterly", limit=None)
    assert len(new) >= 1 and set(new.index.get_level_values("ticker")) == {"ZZZQ"}
    assert len(old) == len(read_dataset(DATA, "income_statements").query("ticker == 'AAPL' and period == 'quarterly'"))


def test_every_dataset_reads_whole_with_its_schema_after_landings(landed):
    lake = LakeReader(landed)
    for name in lake.names():
        df = lake.read(name)
        assert len(df) >= len(read_dataset(DATA, name)), name


def test_validate_is_clean_on_the_landed_lake(landed):
    # before: the TTM rows of a ticker whose first filings landed by webhook had no four quarters to match, its
    # statements had no vintages (the receiver did not land them), and a redelivered segment filing doubled its
    # members (segmented_financials had no record key): three invariants failed after any landing
    before = {r.name: r.ok for r in validate(DATA)}
    after = {r.name: (r.ok, r.violations) for r in validate(landed)}
    assert set(after) == set(before) and all(before.values())
    assert {name: v for name, (ok, v) in after.items() if not ok} == {}
    assert after["unique_statement_rows"][0] and after["inflation_changes_by_date"][0]


def test_a_landed_filing_lands_its_vintages_once(landed):
    vintages = LakeReader(landed).read("statement_vintages")
    new = vintages[vintages["ticker"].astype(str) == "ZZZQ"]
    assert {"revenue", "net_income", "total_assets"} <= set(new["field"].astype(str))
    key = ["ticker", "period", "report_period", "field", "filing_date"]
    assert not vintages.duplicated(key).any()  # the window's filings the lake already had are one vintage each


def test_an_amendment_landed_after_its_original_keeps_validate_clean(tmp_path):
    from fdkit.webhooks import make_event

    lake = tmp_path / "lake"
    shutil.copytree(DATA, lake)
    inc = read_dataset(DATA, "income_statements")
    row = inc[(inc["ticker"].astype(str) == "AAPL") & (inc["period"].astype(str) == "annual")].iloc[-1]
    record = {
        k: (None if v != v else v.isoformat()[:10] if hasattr(v, "isoformat") else v)
        for k, v in row.to_dict().items()
        if k != "ticker"
    }
    record = {**record, "revenue": float(row["revenue"]) * 0.99}  # the amendment restates revenue
    filed = (row["filing_date"] + pd.Timedelta(days=60)).date().isoformat()
    amended = {
        "ticker": "AAPL",
        "accession_number": "0000320193-99-000001",
        "filing_date": filed,
        "form_type": "10-K/A",
        "income_statements": [
            {**record, "filing_date": filed, "form_type": "10-K/A", "accession_number": "0000320193-99-000001"}
        ],
    }
    with fdkit.server.serve_app(create_receiver(lake, SECRET)) as srv:
        body = orjson.dumps(make_event("income_statements", amended))
        r = requests.post(
            srv.base_url + "/hook", data=body, headers={"X-FDS-Signature": sign(SECRET, body)}, timeout=30
        )
        assert r.status_code == 200, r.text
    served = LakeReader(lake).read("income_statements")
    now = served[
        (served["ticker"].astype(str) == "AAPL")
        & (served["report_period"] == row["report_period"])
        & (served["period"].astype(str) == "annual")
    ]
    assert now["form_type"].astype(str).tolist() == ["10-K/A"]  # the amendment replaced the row
    results = {r.name: r.violations for r in validate(lake, only=["statements_are_first_reports"])}
    assert results == {"statements_are_first_reports": 0}


# -- the same into a mirrored lake: every dataset partitioned by ticker, as `fdkit mirror` writes ----------------------
def _mirrored_copy(out, tickers: set[str]):
    """The bundled lake's rows of ``tickers`` written as Delta tables with :func:`fdkit.lake.io.write_dataset`, as
    ``fdkit mirror`` writes; datasets without a ticker copied as they are (plain Parquet folders)."""
    from fdkit.lake.io import write_dataset

    reader = LakeReader(DATA)
    for name in reader.names():
        src = DATA / name
        df = read_dataset(DATA, name)  # a data package's dataset (price history) too: the mirror holds its rows
        if "ticker" not in df.columns:
            shutil.copytree(src, out / name) if src.is_dir() else write_dataset(out, name, df)
            continue
        df = df[df["ticker"].astype(str).isin(tickers)]
        if len(df):
            write_dataset(out, name, df, partition_by="ticker", mode="append", part="part-0")
    return out


def _at_most(n: int, events: list[dict]) -> list[dict]:
    """The first ``n`` events of each type, in delivery order (every family lands; 145 insider trades took 20 s)."""
    seen: dict[str, int] = {}
    out = []
    for e in events:
        seen[e["type"]] = seen.get(e["type"], 0) + 1
        if seen[e["type"]] <= n:
            out.append(e)
    return out


def _every_family_events(tmp_path) -> list[dict]:
    from test_webhooks import _small_lake  # the families the bundled lake cannot trigger (KPIs, segments)

    from fdkit.webhooks.events import EVENT_TYPES

    events = few_insider_trades(events_from_lake(DATA, since="2023-10-01", until="2024-03-31"))
    events += _at_most(
        12,
        events_from_lake(
            DATA, since="2020-01-01", datasets=["insider_trades", "insider_ownership", "interest_rates", "filing_items"]
        ),
    )
    small = _small_lake(tmp_path / "small")
    # only the families the bundled lake cannot trigger: the small lake's inflation values are made up
    events += events_from_lake(small, datasets=["segmented_financials", "kpi_metrics", "kpi_guidance", "kpi_non_gaap"])
    assert {e["type"] for e in events} == set(EVENT_TYPES)
    return events


@pytest.fixture(scope="module")
def mirrored_landed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mirrored")
    events = _every_family_events(tmp)
    tickers = {str(v) for q in EXAMPLES.values() if q for k, v in q.items() if k in ("ticker", "tickers")}
    tickers |= {str(e["data"]["object"].get("ticker")) for e in events}
    lake = _mirrored_copy(tmp / "lake", {t for t in tickers if t and t != "None"} | {"GOOGL"})
    assert is_delta(lake, "prices") and not is_delta(lake, "inflation")  # Delta tables beside copied plain folders
    with fdkit.server.serve_app(create_receiver(lake, SECRET)) as srv:
        for event in events:
            body = orjson.dumps(event)
            headers = {"X-FDS-Signature": sign(SECRET, body), "Content-Type": "application/json"}
            r = requests.post(srv.base_url + "/hook", data=body, headers=headers, timeout=30)
            assert r.status_code == 200, (event["type"], r.text)
    return lake


@pytest.fixture(scope="module")
def mirrored_server(mirrored_landed):
    with fdkit.server.start(data=mirrored_landed) as srv:
        yield srv


@pytest.mark.parametrize("name", [n for n, q in EXAMPLES.items() if q is not None])
def test_every_query_answers_200_after_landings_in_a_mirrored_lake(mirrored_server, name):
    ep, srv = CATALOG[name], mirrored_server
    headers = {"X-API-KEY": srv.api_key}
    if ep.method == "GET":
        r = requests.get(srv.base_url + ep.path, params=EXAMPLES[name], headers=headers, timeout=60)
    else:
        r = requests.post(srv.base_url + ep.path, json=EXAMPLES[name], headers=headers, timeout=60)
    assert r.status_code == 200, (name, r.status_code, r.text[:300])


def test_validate_is_clean_after_every_event_family_landed_in_a_mirrored_lake(mirrored_landed):
    after = {r.name: r.violations for r in validate(mirrored_landed)}
    assert {name: v for name, v in after.items() if v} == {}
