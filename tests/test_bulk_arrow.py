"""The bulk route's Arrow read: the same rows, order and types as its read through the typed frame."""

from __future__ import annotations

import pyarrow as pa
import pytest

from fdkit.catalog.endpoints import CATALOG
from fdkit.frames.typed import as_written, part_of_table
from fdkit.lake.io import default_lake
from fdkit.server import bulk, handlers
from fdkit.server.store import Store

#: endpoints the generic handler answers in bulk (their own handlers and bars read otherwise)
GENERIC = [
    ep.name for ep in CATALOG.values() if bulk.bulk_endpoint(ep) and ep.examples and ep.name not in handlers._HANDLERS
]
TICKERS = ["AAPL", "MSFT", "NVDA", "JPM", "LEH", "XOM", "NOPE"]


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(default_lake())


def _runs(read: bulk.Read, tickers: list[str]) -> dict[str, pa.Table]:
    """Each ticker's rows of a read, as the bundle cuts them."""
    table, codes, names, _, _ = read
    out = {}
    for t in tickers:
        if t in names:
            code = names.index(t)
            rows = [i for i, c in enumerate(codes.tolist()) if c == code]
            out[t] = table.take(rows) if rows else table.slice(0, 0)
    return out


def _queries(name: str) -> list[dict]:
    ep = CATALOG[name]
    base = {k: v for k, v in ep.examples[0].items() if k not in (ep.ticker_param, "cik")}
    queries = [base]
    if "start_date" in ep.param_names:
        queries.append({**base, "start_date": "2008-01-01", "end_date": "2008-12-31"})
    if "period" in ep.param_names:
        queries += [{**base, "period": p} for p in ("annual", "quarterly", "ttm")]
    if "report_period_gte" in ep.param_names:
        queries.append({**base, "report_period_gte": "2015-01-01", "report_period_lt": "2018-01-01"})
    if "filing_date_gte" in ep.param_names:
        queries.append({**base, "filing_date_gte": "2020-01-01"})
    return queries


@pytest.mark.parametrize("name", GENERIC)
def test_the_arrow_read_is_the_frame_read(store, name):
    """Every generic bulk endpoint, on its example and filtered queries: the Arrow read is taken (no fallback)
    and each ticker's rows are the frame read's, value for value and type for type."""
    ep = CATALOG[name]
    if not store.files(ep.dataset or "").files:
        pytest.skip(f"the bundled lake has no {ep.dataset} dataset")
    tickers = list(dict.fromkeys([str(ep.examples[0].get(ep.ticker_param, "AAPL")).upper(), *TICKERS]))
    compared = 0
    for query in _queries(name):
        q = {**query}
        table = store.table_of_many(ep.dataset or "", tickers, between=bulk._range_of(ep, q))
        if not table.num_rows:
            continue
        fast = bulk._arrow_read(store, ep, q, tickers, table)
        slow = bulk._frame_read(store, ep, q, tickers)
        assert not isinstance(slow, Exception)
        if not slow[3]:  # none of the tickers in the dataset: the frame read says so (its 404s, its package)
            assert fast is None
            continue
        assert fast is not None, (name, q)  # the lake's own files cast: the Arrow read answers
        fast = (as_written((fast[0], 0, {}))[0], *fast[1:])  # (sent as stored: labels, narrower numbers)
        assert fast[0].schema == slow[0].schema, (name, q)
        assert fast[3] == slow[3] and fast[4] == slow[4], (name, q)  # the tickers present, the constants
        a, b = _runs(fast, tickers), _runs(slow, tickers)
        assert {t for t, r in a.items() if r.num_rows} == {t for t, r in b.items() if r.num_rows}, (name, q)
        for t, rows in b.items():
            if rows.num_rows:
                assert a[t].equals(rows), (name, q, t)
        compared += 1
    assert compared, name  # the example's ticker is in the lake: at least its own query is compared


def test_a_column_a_cast_cannot_make_falls_back_to_the_frame():
    """Dates stored as text need the frame's parsing: the Arrow part is refused, not guessed."""
    rows = pa.table({"bank": ["FED"], "date": ["2024-09-19"], "rate": [4.875]})
    assert part_of_table("interest_rates", rows, {"bank": "FED"}) is None
    nan = pa.table({"date": pa.array([0], pa.date32()), "rate": [float("nan")]})
    part = part_of_table("interest_rates", nan, {"bank": "FED"})
    assert part is not None and part[0].column("rate").null_count == 1  # a NaN is missing, as pandas makes it
