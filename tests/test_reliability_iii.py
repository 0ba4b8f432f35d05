"""Reliability, third round: poison webhook events refused, dropped tickers named, one retry policy for every fault,
frames whose dtypes do not depend on the data, bad input as typed errors.

Each test failed before the change it guards (see RELIABILITY.md for the figures measured).
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
import warnings

import numpy as np
import orjson
import pandas as pd
import pytest
import requests

import fdkit
import fdkit.server
from fdkit.catalog.endpoints import CATALOG
from fdkit.client.cache import make_retry
from fdkit.errors import BadRequestError, FdkitError, TransportError
from fdkit.frames.dtypes import STRING_DTYPE
from fdkit.lake.io import RECORD_KEYS, default_data_dir
from fdkit.webhooks import create_receiver, events_from_lake, make_event, sign
from fdkit.webhooks.receiver import LANDING

SECRET = "whsec_reliability_iii"


# -- 1. poison webhook events are refused --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def statement_event():
    """A real income-statement event of the bundled lake (an annual filing: several records)."""
    events = events_from_lake(
        default_data_dir(), since="2024-10-01", until="2024-12-31", datasets=["income_statements"]
    )
    return next(
        e
        for e in events
        if e["data"]["object"]["ticker"] == "AAPL" and len(e["data"]["object"]["income_statements"]) > 1
    )


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
    rates = make_event(
        "interest_rates",
        {
            "bank": "FED",
            "date": "2024-11-07",
            "interest_rates": [{"bank": "ECB", "date": "2024-11-07", "name": "MRO", "rate": 3.4}],
        },
    )
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


# -- 3. one retry policy for every fault kind ----------------------------------------------------------------------
FACTS = ("/company/facts",)


def _timed(fn):
    t = time.monotonic()
    try:
        fn()
    except FdkitError as exc:
        return exc, time.monotonic() - t
    raise AssertionError("the call did not fail")


def _faulty_client(test_lake, script, retry):
    plan = fdkit.server.FaultPlan(script=list(script), paths=FACTS, retry_after=0)
    srv = fdkit.server.start(test_lake, faults=plan)
    client = fdkit.Client(srv.api_key, srv.base_url, cache=False, timeout=2, deadline=30, retry=retry)
    return srv, plan, client


@pytest.mark.parametrize("total", [1, 2, 3])
def test_truncated_bodies_are_retried_exactly_as_often_as_the_policy_says(test_lake, total):
    srv, plan, client = _faulty_client(test_lake, ["truncate"] * 5, make_retry(total=total, backoff_factor=0))
    with srv:
        exc, _ = _timed(lambda: client.fetch("company_facts", {"ticker": "AAA"}))
    assert isinstance(exc, TransportError) and "cut short" in exc.message
    assert plan.requests["/company/facts"] == total + 1  # the first attempt and `total` retries, never 4 fixed


def test_status_and_body_faults_spend_one_budget(test_lake):
    script = ["503", "truncate", "500", "truncate"]  # four faults: three retries are not enough, four are
    srv, plan, client = _faulty_client(test_lake, script, make_retry(total=3, backoff_factor=0))
    with srv:
        exc, _ = _timed(lambda: client.fetch("company_facts", {"ticker": "AAA"}))
    assert isinstance(exc, FdkitError) and plan.requests["/company/facts"] == 4
    srv, plan, client = _faulty_client(test_lake, script, make_retry(total=4, backoff_factor=0))
    with srv:
        assert client.fetch("company_facts", {"ticker": "AAA"})["company_facts"]["ticker"] == "AAA"
    assert plan.requests["/company/facts"] == 5


def test_body_retries_sleep_the_policys_backoff(test_lake):
    # urllib3's backoff after n consecutive errors: 0, then factor * 2 ** (n - 1): 0 + 1 + 2 = 3 s in all (the fixed
    # pauses of before slept 0.25 + 0.5 + 1 s whatever the policy)
    srv, plan, client = _faulty_client(test_lake, ["truncate"] * 3, make_retry(total=3, backoff_factor=0.5))
    with srv:
        t = time.monotonic()
        client.fetch("company_facts", {"ticker": "AAA"})
        took = time.monotonic() - t
    assert plan.requests["/company/facts"] == 4 and 3.0 <= took < 3.0 + 3.0, took


def test_a_refused_connection_fails_fast():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # bound, then closed: nothing listens there
    client = fdkit.Client(base_url=f"http://127.0.0.1:{port}", cache=False, timeout=5, deadline=60)
    exc, took = _timed(lambda: client.fetch("company_facts", {"ticker": "AAPL"}))
    print(f"refused: failed after {took * 1000:.1f} ms (per-attempt timeout 5 s)")
    assert isinstance(exc, TransportError) and "refused" in exc.message and "\n" not in str(exc)
    assert took < 0.5  # well under one per-attempt timeout: not retried through the backoff


class _Silent:
    """A loopback server that accepts every connection and never answers (or sends headers, then nothing)."""

    def __init__(self, headers: bytes = b"") -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.headers = headers
        self.held: list[socket.socket] = []
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)
            if self.headers:
                conn.recv(65536)
                conn.sendall(self.headers)

    def close(self) -> None:
        self.stop = True
        for c in self.held:
            c.close()
        self.sock.close()


HEADERS_ONLY = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 99\r\n\r\n{"


@pytest.mark.parametrize("headers", [b"", HEADERS_ONLY], ids=["no-answer", "headers-then-nothing"])
@pytest.mark.parametrize(("timeout", "deadline"), [(1.0, 2.5), (2.0, 3.0), (30.0, 2.0)])
def test_a_server_that_never_answers_ends_within_the_deadline(headers, timeout, deadline):
    silent = _Silent(headers)
    try:
        client = fdkit.Client(base_url=silent.url, cache=False, timeout=timeout, deadline=deadline)
        exc, took = _timed(lambda: client.fetch("company_facts", {"ticker": "AAPL"}))
    finally:
        silent.close()
    print(f"stalled ({'headers' if headers else 'nothing'}): ended after {took:.2f} s, deadline {deadline} s")
    assert isinstance(exc, TransportError) and took <= deadline + 0.5, (exc, took)


# -- 2. errors="ignore" names what it dropped ------------------------------------------------------------------------
@pytest.mark.parametrize("errors", ["ignore", "warn"])
def test_a_ticker_list_names_the_tickers_it_dropped_and_why(ref_client, errors, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = ref_client.balance_sheets(["AAPL", "NOPE", "MSFT", "ZZZZ"], period="annual", limit=2, errors=errors)
    missing = df.attrs["missing"]
    kept = sorted(df.index.get_level_values("ticker").unique())
    assert sorted(missing) == ["NOPE", "ZZZZ"] and kept == ["AAPL", "MSFT"]
    assert all(isinstance(k, str) and isinstance(v, str) and v and "\n" not in v for k, v in missing.items())
    assert "NOPE" in missing["NOPE"] or "not found" in missing["NOPE"].lower(), missing
    assert json.loads(json.dumps(missing)) == missing  # plain strings: to_parquet writes attrs as JSON
    assert (len([w for w in caught if "NOPE" in str(w.message)]) == 1) == (errors == "warn")
    df.to_parquet(tmp_path / "bs.parquet")
    assert pd.read_parquet(tmp_path / "bs.parquet").attrs["missing"] == missing


def test_nothing_dropped_is_an_empty_dict_in_every_mode(ref_client):
    for errors in ("raise", "warn", "ignore"):
        assert ref_client.company_facts(["AAPL", "NVDA"], errors=errors).attrs["missing"] == {}
        bars = ref_client.prices("AAPL", start_date="2024-01-02", end_date="2024-01-05", errors=errors)
        assert bars.attrs["missing"] == {}


def test_a_single_ticker_skipped_and_the_joined_statements_name_it_too(ref_client):
    assert list(ref_client.company_facts("NOPE", errors="ignore").attrs["missing"]) == ["NOPE"]
    fin = ref_client.financials(["AAPL", "NOPE"], limit=1, errors="ignore")
    assert list(fin.attrs["missing"]) == ["NOPE"] and len(fin)


# -- 5. bad input is a typed error naming the parameter, refused before anything is sent ------------------------------
def _sent(server) -> int:
    return sum(server.counter.requests.values())


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("news", {"ticker": "AAPL"}),
        ("balance_sheets", {"ticker": ["AAPL", "MSFT"], "period": "annual"}),
        ("prices", {"ticker": "AAPL", "start_date": "2024-01-02", "end_date": "2024-02-01"}),
    ],
)
def test_a_limit_given_as_text_is_refused_before_sending(ref_server, ref_client, name, params):
    before = _sent(ref_server)
    with pytest.raises(BadRequestError, match=r"limit must be an integer, got '10'.*pass limit=10"):
        getattr(ref_client, name)(**params, limit="10", errors="ignore")
    with pytest.raises(BadRequestError, match="limit"):
        ref_client.fetch(name, {"ticker": "AAPL", "limit": "10"})
    assert _sent(ref_server) == before


@pytest.mark.parametrize("value", ["01/02/2024", "yesterday", "2024-02-30", "2024-1-2", 20240102])
@pytest.mark.parametrize("field", ["start_date", "end_date"])
def test_a_price_date_that_is_not_iso_is_refused_naming_it(ref_server, ref_client, field, value):
    params = {"start_date": "2024-01-02", "end_date": "2024-02-01", field: value}
    before = _sent(ref_server)
    with pytest.raises(BadRequestError, match=field) as caught:
        ref_client.prices(["AAPL", "MSFT"], **params)
    assert repr(value) in caught.value.message and "\n" not in str(caught.value)
    assert _sent(ref_server) == before


def test_dates_of_every_accepted_kind_still_work(ref_client):
    import datetime

    for start in ("2024-01-02", datetime.date(2024, 1, 2), pd.Timestamp("2024-01-02"), np.datetime64("2024-01-02")):
        assert len(ref_client.prices("AAPL", start_date=start, end_date="2024-01-05")) == 4


def test_a_value_that_went_to_the_wrong_positional_parameter_is_named(ref_server, ref_client):
    before = _sent(ref_server)
    with pytest.raises(BadRequestError) as caught:
        ref_client.income_statements("AAPL", "annual")
    message = caught.value.message
    assert "cik='annual'" in message and "period='annual'" in message, message
    assert _sent(ref_server) == before
    assert len(ref_client.income_statements("AAPL", period="annual", limit=1)) == 1


def test_the_cli_refuses_an_output_it_cannot_write_in_one_line(tmp_path, capsys):
    from fdkit.cli import main

    for out in (tmp_path / "nodir" / "x.parquet", tmp_path / "x.txt", tmp_path):
        argv = ["get", "prices", "AAPL", "--start-date", "2024-01-02", "--end-date", "2024-01-05", "-o", str(out)]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len([line for line in err if line.startswith("fdkit: error:")]) == 1 and "Traceback" not in str(err)
    assert not list(tmp_path.rglob("*.parquet"))
    ok = tmp_path / "x.parquet"
    argv = ["get", "prices", "AAPL", "--start-date", "2024-01-02", "--end-date", "2024-01-05", "-o", str(ok)]
    assert main(argv) == 0 and len(pd.read_parquet(ok)) == 4


# -- 4. frames are stable across calls -------------------------------------------------------------------------------
POOLS = {
    "ticker": ["AAPL", "MSFT", "NVDA", "GOOGL", "A", "TSLA"],
    "bank": ["FED", "ECB"],
}
CRYPTO = ["BTC-USD", "ETH-USD", "SOL-USD"]
FUNDS = ["SPY", "QQQ", "IWM"]
FANNED = [n for n, ep in CATALOG.items() if ep.kind != "listing" and ep.examples and ep.ticker_param]
#: datasets without a ticker list, varied by a parameter with a closed set of values instead
VARIED = {"inflation": "series", "labor": "series", "index_members": "index"}


def _kinds(df: pd.DataFrame) -> list:
    """Every column's and index level's dtype (a categorical's categories included)."""
    levels = list(df.index.dtypes) if isinstance(df.index, pd.MultiIndex) else [df.index.dtype]
    return [*df.dtypes.tolist(), *levels]


def _fan_values(name: str) -> tuple[dict, list[str]]:
    ep = CATALOG[name]
    fan = ep.ticker_param
    params = {k: v for k, v in ep.examples[0].items() if k not in (fan, "cik")}
    pool = CRYPTO if "crypto" in name else FUNDS if name == "index_funds" else POOLS[fan]
    first = ep.examples[0].get(fan) or pool[0]
    return params, [first, *[t for t in pool if t != first]]


@pytest.mark.parametrize("name", FANNED)
def test_one_two_and_many_tickers_give_the_same_dtypes_and_concat_keeps_them(ref_client, name):
    params, values = _fan_values(name)
    fan = CATALOG[name].ticker_param
    fn = getattr(ref_client, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = fn(**{fan: values[0]}, **params)
        two = fn(**{fan: values[:2]}, **params, errors="ignore")
        many = fn(**{fan: values}, **params, errors="ignore")
        others = [fn(**{fan: v}, **params, errors="ignore") for v in values[1:]]
    assert _kinds(one) == _kinds(two) == _kinds(many), name
    other = next((f for f in others if len(f)), others[0])  # another ticker's rows, where the data has any
    if len(other) or list(other.columns) == list(one.columns):  # (an empty segment frame lacks its flattened fields)
        assert _kinds(other) == _kinds(one), name
    both = pd.concat([one, other])
    changed = [(a, b) for a, b in zip(_kinds(both), _kinds(one), strict=True) if a != b]
    assert not changed, (name, changed)
    assert not any(dt == np.dtype(object) for dt in _kinds(both)), name


@pytest.mark.parametrize("name", sorted(VARIED))
def test_datasets_without_a_ticker_list_give_the_same_dtypes_for_every_selection(ref_client, name):
    ep = CATALOG[name]
    key = VARIED[name]
    params = {**ep.examples[0], **({"date": "2022-06-30"} if name == "index_members" else {})}  # every index known
    frames = [getattr(ref_client, name)(**{**params, key: v}) for v in ep.param(key).enum]
    assert all(_kinds(f) == _kinds(frames[0]) for f in frames), name
    assert _kinds(pd.concat(frames)) == _kinds(frames[0]), name


def test_labels_are_strings_and_closed_vocabularies_carry_their_whole_set(ref_client):
    news = ref_client.news("AAPL", limit=3)
    assert news.index.dtypes["ticker"] == STRING_DTYPE and str(news["source"].dtype) == "string"
    assert news["sentiment"].cat.categories.tolist() == ["negative", "neutral", "positive"]
    facts = ref_client.company_facts(["AAPL", "MSFT"])
    assert facts.index.dtype == STRING_DTYPE and str(facts["sector"].dtype) == "string"
    bs = ref_client.balance_sheets("AAPL", period="annual", limit=1)
    assert {str(bs[c].dtype) for c in ("period", "currency", "fiscal_period", "form_type")} == {"string"}
