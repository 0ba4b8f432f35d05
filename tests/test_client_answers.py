"""The client reading answers it did not expect and sending what the documents allow, over real HTTP (issue 30,
items 11, 12 and 14).

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
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import pytest
import requests
from reference import reference_document

import fdkit
from fdkit.catalog.endpoints import CATALOG
from fdkit.client.dispatch import DEFAULTS
from fdkit.errors import BadRequestError, DateRangeWarning, MissingPayloadError

Alter = Callable[[str, dict[str, Any]], dict[str, Any]]


class _Proxy:
    """A local HTTP server answering with the real server's JSON, altered by ``alter(path, body)``."""

    def __init__(self, upstream: str, key: str) -> None:
        self.upstream, self.key = upstream, key
        self.alter: Alter = lambda path, body: body
        self.seen: list[tuple[str, str, Any]] = []  # (method, path with query, JSON body) of every request
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(size) if size else None
                proxy.seen.append((method, self.path, json.loads(data) if data else None))
                r = requests.request(
                    method,
                    proxy.upstream + self.path,
                    data=data,
                    timeout=60,
                    headers={"X-API-KEY": proxy.key, "Content-Type": "application/json", "Accept": "application/json"},
                )
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


@pytest.mark.parametrize(
    ("name", "statement"), [("income_statement_segments", None), ("segmented_financials", "income_statement")]
)
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


@pytest.mark.parametrize(
    ("name", "args", "key"),
    [
        ("prices", {"ticker": "AAPL", "start_date": "2022-01-03", "end_date": "2022-01-31"}, "prices"),  # paged
        ("company_facts", {"ticker": "AAPL"}, "company_facts"),  # one object, not paged
        ("income_statements", {"ticker": "AAPL", "period": "annual", "limit": 2}, "income_statements"),
        ("index_funds", {"ticker": "SPY", "limit": 3}, "holdings"),  # a shape with two wrappers
    ],
)
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
    with pytest.warns(DateRangeWarning, match="AAPL has no bars"):  # said, not silent
        df = proxy.client().prices("AAPL", start_date="2022-01-03", end_date="2022-01-31")
    assert len(df) == 0


# -- 14. the client sends only what the documents allow ------------------------------------------------------------
def _resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = doc
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _documented(ep) -> tuple[str, set[str]] | None:
    """The document that describes ``ep``'s path (2026, else 2025) and the parameters (or body fields) it lists,
    with those the 2025 document *requires* for the path (a service built on it refuses a request without them)."""
    found = None
    for name in ("openapi.json", "openapi-simonxabris-2025.json"):
        doc = reference_document(name)
        op = doc["paths"].get(ep.path, {}).get(ep.method.lower())
        if op is None:
            continue
        params = [_resolve(doc, p) for p in op.get("parameters", [])]
        if found is not None:  # the older document: only what it requires
            found[1].update(p["name"] for p in params if p.get("required"))
            continue
        names = {p["name"] for p in params}
        if "requestBody" in op:
            body = _resolve(doc, op["requestBody"]["content"]["application/json"]["schema"])
            names |= set(body.get("properties", {}))
        found = (name, names)
    return found


DOCUMENTED = [name for name, ep in CATALOG.items() if ep.kind != "listing"]


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_catalog_names_every_parameter_its_document_lacks(name):
    ep = CATALOG[name]
    found = _documented(ep)
    if found is None:  # an fdkit extension route: every parameter is fdkit's
        assert ep.extension_params == ()
        return
    _, allowed = found
    assert set(ep.extension_params) == set(ep.param_names) - allowed, (name, sorted(set(ep.param_names) - allowed))


def _sent(seen: list[tuple[str, str, Any]]) -> set[str]:
    """The parameters the client chose (a next page's URL is the service's own, followed verbatim: left out)."""
    names: set[str] = set()
    for _method, path, body in seen:
        query = {k for k, _ in parse_qsl(urlsplit(path).query)}
        if "cursor" not in query:
            names |= query | set(body or {})
    return names


@pytest.mark.parametrize("name", [n for n in DOCUMENTED if CATALOG[n].examples])
def test_the_client_sends_only_what_the_document_allows(proxy, name):
    ep = CATALOG[name]
    found = _documented(ep)
    if found is None:
        pytest.skip(f"{ep.path} is an fdkit extension: no document to compare with")
    document, allowed = found
    example = dict(ep.examples[0])
    fn = getattr(proxy.client(), name)
    asked = [k for k in example if k in ep.extension_params]
    if asked:  # the caller asked for an extension: refused before anything is sent, naming it
        with pytest.raises(BadRequestError, match=asked[0]) as e:
            fn(**example)
        assert "fdkit serve" in e.value.message
        assert not [s for s in proxy.seen if urlsplit(s[1]).path.rstrip("/") == ep.path]
        example = {k: v for k, v in example.items() if k not in ep.extension_params}
        if any(p.required and p.name not in example and p.name not in DEFAULTS.get(name, {}) for p in ep.params):
            return
        proxy.seen.clear()
    try:
        fn(**({"limit": None, **example} if ep.finite_default else example))
    except fdkit.errors.NotFoundError:
        pass  # no data for it in the bundled lake: what was sent is still what counts
    requests_ = [s for s in proxy.seen if urlsplit(s[1]).path.rstrip("/") == ep.path]
    assert requests_, name
    sent = _sent(requests_)
    assert sent <= allowed, (name, document, sorted(sent - allowed))


def test_as_of_sends_nothing_the_document_lacks_and_still_filters(proxy, ref_server):
    want = _real(ref_server).income_statements("AAPL", period="quarterly", limit=None, as_of="2020-01-01")
    got = proxy.client().income_statements("AAPL", period="quarterly", limit=None, as_of="2020-01-01")
    assert "filing_date_lte" not in _sent(proxy.seen)
    pd.testing.assert_frame_equal(got, want)
    assert len(got) and got["filing_date"].max() <= pd.Timestamp("2020-01-01")


def test_a_long_bar_range_is_continued_without_an_undocumented_limit(proxy):
    df = proxy.client().prices("AAPL", start_date="2003-10-30", end_date="2023-10-27")  # the lake's first AAPL bar on
    assert len(df) > 5000 and df.index.is_unique
    assert "limit" not in _sent(proxy.seen)


def test_a_bar_limit_the_document_lacks_is_applied_to_the_frame(proxy, ref_server):
    want = _real(ref_server).prices(["AAPL", "MSFT"], start_date="2022-01-03", end_date="2022-03-31", limit=7)
    got = proxy.client().prices(["AAPL", "MSFT"], start_date="2022-01-03", end_date="2022-03-31", limit=7)
    assert "limit" not in _sent(proxy.seen) and len(got) == 14
    pd.testing.assert_frame_equal(got, want)
