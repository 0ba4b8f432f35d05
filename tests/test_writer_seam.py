"""The lake's writer seam (issue 44, items 1 and 3): a mirror and the webhook receiver writing one lake at once.

Every acknowledged (200) event's rows are in the lake afterwards, the mirror's rows are complete, a plain Parquet
dataset is converted once however many writers race for it, and ``fdkit lake validate`` names a landed row that
went missing. The scale run (30 tickers, 5 repetitions) is ``python benchmarks/writer_race.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
import requests

import fdkit
import fdkit.server
from fdkit.lake.io import default_data_dir, read_dataset, write_dataset
from fdkit.lake.validate import validate
from fdkit.lake.writer import LakeWriter
from fdkit.mirror import mirror
from fdkit.webhooks import create_receiver, make_event, sign

SECRET = "whsec_writer_seam_0123456789"
DATA = default_data_dir()
TICKERS = ["ABT", "ADM", "ADSK", "AEE", "AEP", "AES", "AFL", "AIG"]
DATASETS = ["income_statements", "balance_sheets", "cash_flow_statements"]
MARKED = {"income_statements": "revenue", "balance_sheets": "total_assets"}
KEY = ["ticker", "report_period", "period"]


def statement_events(tickers: list[str], per_ticker: int) -> list[dict]:
    """Signed-ready events of the tickers' statements: half re-file a quarter the service has (a marked value), half
    file a quarter it has not (2030): either way the lake must hold the event's value afterwards."""
    rows = read_dataset(DATA, "income_statements", columns=KEY, where={"ticker": tickers})
    rows = rows[rows["period"].astype(str) == "quarterly"]
    out = []
    for t in tickers:
        known = sorted(rows.loc[rows["ticker"].astype(str) == t, "report_period"].dt.strftime("%Y-%m-%d"))[-3:]
        for i in range(per_ticker):
            family = DATASETS[(i // 2) % 2]
            period = known[i % len(known)] if i % 2 == 0 else f"{2030 + i // 4}-{3 * (i % 4) + 3:02d}-28"
            marker = 1e12 + len(out)
            record = {"report_period": period, "period": "quarterly", MARKED[family]: marker}
            payload = {
                "ticker": t,
                "accession_number": f"0000000000-30-{len(out):06d}",
                "filing_date": "2031-01-05",
                "form_type": "10-Q/A",
                family: [record],
            }
            out.append(make_event(family, payload))
    return out


def post(url: str, event: dict) -> requests.Response:
    body = orjson.dumps(event)
    return requests.post(
        url, data=body, headers={"X-FDS-Signature": sign(SECRET, body), "Content-Type": "application/json"}, timeout=60
    )


def assert_events_present(lake: Path, acked: list[dict]) -> None:
    """Every acknowledged event's record is served from the lake with the event's value."""
    for family in MARKED:
        df = read_dataset(lake, family, columns=[*KEY, MARKED[family]])
        df = df.assign(
            ticker=df["ticker"].astype(str),
            period=df["period"].astype(str),
            report_period=df["report_period"].dt.strftime("%Y-%m-%d"),
        )
        have = {(r.ticker, r.report_period, r.period): getattr(r, MARKED[family]) for r in df.itertuples()}
        for ev in acked:
            obj = ev["data"]["object"]
            if family not in obj:
                continue
            rec = obj[family][0]
            got = have.get((obj["ticker"], rec["report_period"], rec["period"]))
            assert got == rec[MARKED[family]], (
                f"event {ev['id']} ({family} {obj['ticker']} {rec['report_period']}) "
                f"was acknowledged but the lake holds {got}"
            )


def assert_mirror_complete(lake: Path, tickers: list[str]) -> None:
    """Every row the service has of the tickers is in the lake (as the mirror wrote it, or an event's re-filing)."""
    for name in DATASETS:
        want = read_dataset(DATA, name, columns=KEY, where={"ticker": tickers})
        have = read_dataset(lake, name, columns=KEY)
        want_keys = set(zip(want["ticker"].astype(str), want["report_period"], want["period"].astype(str), strict=True))
        have_keys = set(zip(have["ticker"].astype(str), have["report_period"], have["period"].astype(str), strict=True))
        missing = want_keys - have_keys
        assert not missing, f"{name}: {len(missing)} of the service's rows are not in the mirror, e.g. {min(missing)}"


def race(lake: Path, ref_server, tickers: list[str], events: list[dict], pace: float = 0.0) -> dict:
    """Mirror ``tickers`` into ``lake`` while the receiver (served by uvicorn) lands ``events`` (four at a time, one
    sent every ``pace`` seconds); what happened."""
    client = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)
    app = create_receiver(lake, SECRET)
    answers: list[tuple[float, dict, int]] = []
    span: dict[str, float] = {}
    with fdkit.server.serve_app(app) as srv:
        url = srv.base_url + "/hook"

        def run_mirror() -> None:
            span["start"] = time.monotonic()
            span["report"] = mirror(tickers, DATASETS, lake, client=client, force=True)  # type: ignore[assignment]
            span["end"] = time.monotonic()

        worker = threading.Thread(target=run_mirror)
        worker.start()

        def send(ev: dict) -> None:
            code = post(url, ev).status_code
            answers.append((time.monotonic(), ev, code))

        with ThreadPoolExecutor(4) as pool:
            for ev in events:
                pool.submit(send, ev)
                time.sleep(pace)
        worker.join()
    client.close()
    during = sum(1 for at, _, code in answers if code == 200 and span["start"] <= at <= span["end"])
    return {
        "acked": [ev for _, ev, code in answers if code == 200],
        "codes": [c for *_, c in answers],
        "during": during,
        "report": span["report"],
    }


def test_mirror_and_receiver_at_once_keep_every_acknowledged_row(tmp_path, ref_server):
    lake = tmp_path / "lake"
    # the lake starts as an older fdkit's plain Parquet (ticker= partitions): both writers convert it, once
    seed = read_dataset(DATA, "income_statements", where={"ticker": TICKERS[:2]})
    write_dataset(lake, "income_statements", seed, partition_by="ticker", layout="parquet")
    events = statement_events(TICKERS, 6)
    out = race(lake, ref_server, TICKERS, events, pace=0.1)
    assert out["codes"].count(200) == len(events) >= 40, out["codes"]
    assert not out["report"].failed and len(out["report"].done) == len(TICKERS) * len(DATASETS)
    assert out["during"] >= 5, f"only {out['during']} events landed while the mirror ran: no race was tested"
    assert_events_present(lake, out["acked"])
    assert_mirror_complete(lake, TICKERS)
    (result,) = validate(lake, only=["landed_events_in_lake"])
    assert result.ok, result.examples
    assert _operations(lake / "income_statements").count("CONVERT") == 1


def _operations(table: Path) -> list[str]:
    ops = []
    for f in sorted((table / "_delta_log").glob("*.json")):
        for line in f.read_text().splitlines():
            action = json.loads(line)
            if "commitInfo" in action:
                ops.append(action["commitInfo"].get("operation", ""))
    return ops


def _metadata_ids(table: Path) -> set[str]:
    ids = set()
    for f in (table / "_delta_log").glob("*.json"):
        for line in f.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                ids.add(action["metaData"]["id"])
    return ids


@pytest.mark.parametrize("shape", ["flat", "ticker_partitions", "delta"])
def test_a_mirror_after_a_landing_keeps_it_on_every_lake_shape(tmp_path, ref_server, shape):
    lake = tmp_path / "lake"
    seed = read_dataset(DATA, "income_statements", where={"ticker": TICKERS[:2]})
    if shape == "flat":
        write_dataset(lake, "income_statements", seed, layout="parquet")
    elif shape == "ticker_partitions":
        write_dataset(lake, "income_statements", seed, partition_by="ticker", layout="parquet")
    else:
        write_dataset(lake, "income_statements", seed)
    events = [e for e in statement_events(TICKERS[:2], 4) if "income_statements" in e["data"]["object"]]
    app = create_receiver(lake, SECRET)
    with fdkit.server.serve_app(app) as srv:
        assert all(post(srv.base_url + "/hook", e).status_code == 200 for e in events)
    client = fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)
    report = mirror(TICKERS[:2], ["income_statements"], lake, client=client, force=True)
    client.close()
    assert not report.failed
    assert_events_present(lake, events)
    want = read_dataset(DATA, "income_statements", columns=KEY, where={"ticker": TICKERS[:2]})
    have = read_dataset(lake, "income_statements", columns=KEY)
    assert len(have) == len(want) + sum(
        1 for e in events if e["data"]["object"]["income_statements"][0]["report_period"].startswith("2030")
    )
    assert validate(lake, only=["landed_events_in_lake"])[0].ok


def test_two_receivers_converting_one_dataset_commit_one_convert(tmp_path):
    lake = tmp_path / "lake"
    seed = read_dataset(DATA, "income_statements", where={"ticker": TICKERS[:4]})
    write_dataset(lake, "income_statements", seed, layout="parquet")
    apps = [create_receiver(lake, SECRET), create_receiver(lake, SECRET)]
    events = [e for e in statement_events(TICKERS[:4], 2) if "income_statements" in e["data"]["object"]]
    with fdkit.server.serve_app(apps[0]) as one, fdkit.server.serve_app(apps[1]) as two:
        urls = [one.base_url + "/hook", two.base_url + "/hook"]
        with ThreadPoolExecutor(len(events)) as pool:
            codes = list(pool.map(lambda ie: post(urls[ie[0] % 2], ie[1]).status_code, enumerate(events)))
    assert codes == [200] * len(events)
    table = lake / "income_statements"
    assert _operations(table).count("CONVERT") == 1, _operations(table)
    assert len(_metadata_ids(table)) == 1
    assert_events_present(lake, events)


def test_two_processes_converting_at_once_convert_once(tmp_path):
    lake = tmp_path / "lake"
    write_dataset(
        lake,
        "income_statements",
        read_dataset(DATA, "income_statements", where={"ticker": TICKERS}),
        partition_by="ticker",
        layout="parquet",
    )
    start = time.time() + 4  # both processes are imported by then, and convert at the same instant
    code = (
        "import sys, time; from fdkit.lake.writer import LakeWriter; w = LakeWriter(sys.argv[1]); "
        "time.sleep(max(0, float(sys.argv[2]) - time.time())); print(w.ensure_table('income_statements'))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(lake), str(start)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    assert [p.communicate(timeout=60)[0].strip() for p in procs] == ["True", "True"]
    table = lake / "income_statements"
    assert _operations(table) == ["CONVERT"] and len(_metadata_ids(table)) == 1


def test_validate_names_a_landed_row_that_went_missing(tmp_path):
    lake = tmp_path / "lake"
    events = [e for e in statement_events(TICKERS[:1], 4) if "income_statements" in e["data"]["object"]]
    app = create_receiver(lake, SECRET)
    with fdkit.server.serve_app(app) as srv:
        assert all(post(srv.base_url + "/hook", e).status_code == 200 for e in events)
    assert validate(lake, only=["landed_events_in_lake"])[0].ok
    gone = next(e for e in events if e["data"]["object"]["income_statements"][0]["report_period"].startswith("2030"))
    period = gone["data"]["object"]["income_statements"][0]["report_period"]
    writer = LakeWriter(lake)
    victim = [f.path for f in writer.live("income_statements") if period in f.path]
    assert len(victim) == 1
    writer.commit("income_statements", [], victim)  # a writer that deletes a landed row
    (result,) = validate(lake, only=["landed_events_in_lake"])
    assert result.violations == 1
    assert result.examples["event_id"].tolist() == [gone["id"]]
    assert period in result.examples["key"].iloc[0]


def test_validate_stays_crash_free_on_any_ledger_and_lake(tmp_path):
    import sqlite3

    lake = tmp_path / "lake"
    write_dataset(lake, "interest_rates", read_dataset(DATA, "interest_rates").head(5), layout="parquet")
    assert validate(lake, only=["landed_events_in_lake"])[0].ok  # no ledger at all
    (lake / "_webhooks").mkdir()
    with sqlite3.connect(lake / "_webhooks" / "events.sqlite") as db:  # an older fdkit's ledger: event ids only
        db.execute("create table events (id text primary key, type text, landed_at real)")
        db.execute("insert into events values ('x', 'earnings.created', 0)")
    assert validate(lake, only=["landed_events_in_lake"])[0].ok
    (lake / "_webhooks" / "events.sqlite").unlink()
    event = statement_events(TICKERS[:1], 4)[3]
    assert "balance_sheets" in event["data"]["object"]
    with fdkit.server.serve_app(create_receiver(lake, SECRET)) as srv:
        assert post(srv.base_url + "/hook", event).status_code == 200
    import shutil

    shutil.rmtree(lake / "balance_sheets")  # the dataset an event landed in is gone altogether
    (result,) = validate(lake, only=["landed_events_in_lake"])
    assert result.error is None and result.violations == 1


def test_only_the_lake_package_imports_deltalake():
    import ast

    package = Path(fdkit.__file__).parent
    outside = []
    for path in package.rglob("*.py"):
        if path.is_relative_to(package / "lake"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "deltalake" or n.startswith("deltalake.") for n in names):
                outside.append(str(path.relative_to(package)))
    assert not outside, f"deltalake imported outside fdkit/lake (write through fdkit.lake.writer): {outside}"
