"""The client reading answers it did not expect, over real HTTP (issue 30, items 11 and 12).

The embedded server never sends such answers, so a small local HTTP server stands in front of the real one
(``fdkit serve`` over the bundled lake): it forwards each request, alters the real JSON answer the way a test asks
(an additive field, a missing wrapper key) and sends it on. Nothing is mocked below the socket.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pandas as pd
import pytest
import requests

import fdkit
from fdkit.errors import MissingPayloadError

Alter = Callable[[str, dict[str, Any]], dict[str, Any]]


class _Proxy:
    """A local HTTP server answering with the real server's JSON, altered by ``alter(path, body)``."""

    def __init__(self, upstream: str, key: str) -> None:
        self.upstream, self.key = upstream, key
        self.alter: Alter = lambda path, body: body
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(size) if size else None
                r = requests.request(method, proxy.upstream + self.path, data=data, timeout=60,
                                     headers={"X-API-KEY": proxy.key, "Content-Type": "application/json",
                                              "Accept": "application/json"})  # fmt: skip
                body = r.json()
                if r.ok and isinstance(body, dict):
                    body = proxy.alter(self.path.split("?")[0], body)
                    if body.get("next_page_url"):
                        body["next_page_url"] = body["next_page_url"].replace(proxy.upstream, proxy.base_url)
                out = json.dumps(body).encode()
                self.send_response(r.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def client(self) -> fdkit.Client:
        return fdkit.Client("proxy-key-000001", self.base_url, cache=False, progress=False)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def proxy(ref_server) -> Iterator[_Proxy]:
    p = _Proxy(ref_server.base_url, ref_server.api_key)
    yield p
    p.close()


def _real(ref_server) -> fdkit.Client:
    return fdkit.Client(ref_server.api_key, ref_server.base_url, cache=False, progress=False)


# -- 11. an additive field is never fatal ----------------------------------------------------------------------------
def _line_items(report: dict[str, Any], statement: str | None) -> dict[str, Any]:
    return report[statement] if statement else report


def _additive(statement: str | None) -> Alter:
    """Every kind of schema-valid addition: a scalar and an object beside a line item's breakdowns, a new
    breakdown category, a nested field inside an entry, a nested object at the report's top level."""

    def alter(path: str, body: dict[str, Any]) -> dict[str, Any]:
        for report in body["segmented_financials"]:
            items = _line_items(report, statement)
            items["revenue"]["note"] = "restated"
            items["revenue"]["source"] = {"form": "10-K", "pages": [12, 13]}
            items["revenue"]["geography"] = {"Americas": 1.0}
            items["revenue"]["product"][0]["dimensions"] = {"axis": "srt:ProductOrServiceAxis"}
            report["restatement"] = {"reason": "reclassified", "amounts": [1, 2]}
        return body

    return alter


@pytest.mark.parametrize(("name", "statement"), [("income_statement_segments", None),
                                                 ("segmented_financials", "income_statement")])  # fmt: skip
def test_an_additive_field_in_a_line_item_is_ignored(ref_server, proxy, name, statement):
    want = getattr(_real(ref_server), name)("AAPL", period="annual", limit=2)
    proxy.alter = _additive(statement)
    got = getattr(proxy.client(), name)("AAPL", period="annual", limit=2)
    assert len(want) > 10
    pd.testing.assert_frame_equal(got, want)


def test_an_additive_field_in_segmented_revenues_is_kept(ref_server, proxy):
    want = _real(ref_server).segmented_revenues("AAPL", period="annual", limit=2)

    def alter(path: str, body: dict[str, Any]) -> dict[str, Any]:
        for report in body["segmented_revenues"]:
            report["restatement"] = {"reason": "reclassified"}
            report["items"][0]["note"] = {"form": "10-K"}
            report["items"][0]["segments"][0]["axis"] = {"name": "srt:ProductOrServiceAxis"}
        return body

    proxy.alter = alter
    got = proxy.client().segmented_revenues("AAPL", period="annual", limit=2)
    pd.testing.assert_frame_equal(got[want.columns], want)
    assert json.loads(got["restatement"].iloc[0]) == {"reason": "reclassified"}


# -- 12. a 200 without its wrapper key is an error, never an empty frame -------------------------------------------
def _renamed(key: str) -> Alter:
    def alter(path: str, body: dict[str, Any]) -> dict[str, Any]:
        return {("data" if k == key else k): v for k, v in body.items()}

    return alter


@pytest.mark.parametrize(("name", "args", "key"), [
    ("prices", {"ticker": "AAPL", "start_date": "2024-01-02", "end_date": "2024-01-31"}, "prices"),  # paged
    ("company_facts", {"ticker": "AAPL"}, "company_facts"),  # one object, not paged
    ("income_statements", {"ticker": "AAPL", "period": "annual", "limit": 2}, "income_statements"),
    ("index_funds", {"ticker": "SPY", "limit": 3}, "holdings"),  # a shape with two wrappers
])  # fmt: skip
def test_an_answer_without_its_wrapper_key_names_the_key(ref_server, proxy, name, args, key):
    assert len(getattr(_real(ref_server), name)(**args))  # the real answer has rows
    proxy.alter = _renamed(key)
    with pytest.raises(MissingPayloadError) as e:
        getattr(proxy.client(), name)(**args)
    assert e.value.key in (key, fdkit.catalog.endpoints.get(name).response_key) and e.value.keys
    assert repr(key) in e.value.message or repr(e.value.key) in e.value.message
    assert "data" in e.value.message
    with pytest.raises(MissingPayloadError):  # raw=True reads the same answer
        getattr(proxy.client(), name)(**args, raw=True)


def test_a_later_page_without_its_wrapper_key_is_an_error(ref_server, proxy):
    args = {"ticker": "AAPL", "interval": "day", "start_date": "2023-01-01", "end_date": "2024-12-31", "limit": 300}
    first: list[str] = []

    def alter(path: str, body: dict[str, Any]) -> dict[str, Any]:
        first.append(path)
        return body if len(first) == 1 else _renamed("prices")(path, body)

    proxy.alter = alter
    with pytest.raises(MissingPayloadError, match="'prices'"):
        proxy.client().fetch("prices", args)
    assert len(first) >= 2  # the first page was read, a later one refused


def test_an_empty_answer_is_still_an_empty_frame(proxy):
    def alter(path: str, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "prices": []}

    proxy.alter = alter
    df = proxy.client().prices("AAPL", start_date="2024-01-02", end_date="2024-01-31")
    assert len(df) == 0
