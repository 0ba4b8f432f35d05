"""The fast decode paths give the frames of the general path, on random pages (issue 28 item 6).

``to_frame`` (JSON records) and ``frame_from_parts`` (Arrow parts) build bar frames column by column
(``_series_frame``) and read records field by field (``_transpose``). Here both are compared, on random pages, with
the general path as it was: every value looked up per record, unknown fields always scanned, the parts
concatenated, converted by pandas, indexed, sorted and relabelled (``_assemble`` + ``_finish``).
"""

from __future__ import annotations

import warnings
from itertools import chain
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fdkit.catalog import endpoints as catalog
from fdkit.frames import typed
from fdkit.frames.typed import frame_from_parts, part_bytes, part_from_bytes, records_of, to_frame

PRICES = catalog.get("prices")
COLUMNS = typed._columns_of(typed._frame_schema(PRICES))


def reference_part(recs: list[dict[str, Any]], fill: dict[str, Any], columns: dict[str, str]) -> typed.Part:
    """A response's part as the general path made it before the fast paths: a lookup per value, every key scanned."""
    own = {f: t for f, t in columns.items() if not (f in fill and (not recs or f not in recs[0]))}
    arrays = {f: typed._arrow_column([r.get(f) for r in recs], t, f) for f, t in own.items()}
    for f in [k for k in dict.fromkeys(chain.from_iterable(recs)) if k not in own]:
        arrays[f] = typed._extra_column([r.get(f) for r in recs])
    return pa.table(arrays) if arrays else pa.table({}), len(recs), {f: fill[f] for f in columns if f not in own}


def reference_frame(responses: list[tuple[dict[str, Any], dict[str, Any]]]) -> pd.DataFrame:
    parts = [reference_part(*records_of(PRICES, params, body), COLUMNS) for params, body in responses]
    return typed._finish(PRICES, typed._assemble(parts, COLUMNS), responses[0][0])


def same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes) == list(want.dtypes)
    assert list(got.index.dtypes) == list(want.index.dtypes)
    assert got.index.names == want.index.names
    if isinstance(want.index, pd.MultiIndex):
        for a, b in zip(got.index.levels, want.index.levels, strict=True):
            assert a.equals(b) and a.dtype == b.dtype
    assert got.attrs == want.attrs


DAY = 86_400_000
floats = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=64))
ints = st.one_of(st.none(), st.integers(min_value=-(2**53), max_value=2**53))


@st.composite
def bar(draw: Any, day: int, fields: frozenset[str], intraday: bool) -> dict[str, Any]:
    when = day * (60_000 if intraday else DAY)
    stamp = pd.Timestamp(when, unit="ms", tz="UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    record: dict[str, Any] = {"time": stamp}
    for f in ("open", "high", "low", "close", "adj_close"):
        if f in fields:
            record[f] = draw(floats)
    if "volume" in fields:
        record["volume"] = draw(ints)
    if "time_milliseconds" in fields:
        record["time_milliseconds"] = when
    if "basis" in fields:
        record["basis"] = draw(st.sampled_from([None, "as_traded", "adjusted_only", "price_only", "other_basis"]))
    if "extra" in fields:
        record["extra"] = draw(st.one_of(st.none(), st.text(max_size=3)))  # (an int on one page and text on
        # another do not concatenate in the general path either: pyarrow refuses to merge the types)
    if draw(st.integers(0, 30)) == 0:  # now and then a record lacks a field the others have
        record.pop(draw(st.sampled_from(sorted(record))), None)
    return record


@st.composite
def pages(draw: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    intraday = draw(st.booleans())
    params = {"interval": "minute" if intraday else "day"}
    fields = draw(
        st.frozensets(
            st.sampled_from(
                ["open", "high", "low", "close", "volume", "time_milliseconds", "adj_close", "basis", "extra"]
            )
        )
    )
    tickers = draw(st.lists(st.sampled_from(["AAPL", "MSFT", "ZZ", "BRK.B", "A"]), min_size=1, max_size=4))
    out = []
    for ticker in tickers:
        days = draw(st.lists(st.integers(10_000, 10_060), max_size=12))
        if draw(st.booleans()):  # the usual page: strictly increasing times, or falling (newest first)
            days = sorted(set(days), reverse=draw(st.booleans()))
        records = [draw(bar(d, fields, intraday)) for d in days]
        out.append(({**params, "ticker": ticker}, {"ticker": ticker, "prices": records}))
    return out


def frames(responses: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[Any, Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = reference_frame(responses)
        got = to_frame(PRICES, responses)
        parts = [part_from_bytes(part_bytes(typed.response_part(PRICES, p, b))) for p, b in responses]
        arrow = frame_from_parts(PRICES, parts, responses[0][0])
    return want, got, arrow


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses=pages())
def test_fast_paths_give_the_general_frame(responses: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    want, got, arrow = frames(responses)
    same(got, want)
    same(arrow, want)


def test_the_fast_path_is_taken_for_a_rising_or_falling_page_and_not_for_an_unsorted_one() -> None:
    body = {
        "prices": [
            {"time": f"2024-01-0{d}T00:00:00Z", "open": 1.0, "close": float(d), "high": 2.0, "low": 1.0, "volume": 5}
            for d in (2, 3, 4)
        ]
    }
    part = typed.response_part(PRICES, {"ticker": "AAPL"}, body)
    assert typed._series_frame(PRICES, [part], COLUMNS, {"interval": "day"}) is not None
    body["prices"].reverse()  # newest first, as statements and filings are answered: turned round, then written
    part = typed.response_part(PRICES, {"ticker": "AAPL"}, body)
    fast = typed._series_frame(PRICES, [part], COLUMNS, {"interval": "day"})
    assert fast is not None and fast["close"].tolist() == [2.0, 3.0, 4.0]
    body["prices"][1:] = body["prices"][:0:-1]  # 4, 2, 3: neither rising nor falling
    part = typed.response_part(PRICES, {"ticker": "AAPL"}, body)
    assert typed._series_frame(PRICES, [part], COLUMNS, {"interval": "day"}) is None
    same(
        to_frame(PRICES, [({"ticker": "AAPL", "interval": "day"}, body)]),
        reference_frame([({"ticker": "AAPL", "interval": "day"}, body)]),
    )


def test_a_value_outside_the_vocabulary_still_warns() -> None:
    body = {"prices": [{"time": "2024-01-02T00:00:00Z", "close": 1.0, "basis": "other_basis"}]}
    with pytest.warns(Warning, match="outside its vocabulary"):
        df = to_frame(PRICES, [({"ticker": "AAPL", "interval": "day"}, body)])
    assert "other_basis" in df["basis"].cat.categories


def test_records_with_unknown_fields_keep_them_as_columns() -> None:
    body = {
        "prices": [
            {"time": "2024-01-02T00:00:00Z", "close": 1.0, "vwap": 1.5},
            {"time": "2024-01-03T00:00:00Z", "close": 2.0},
        ]
    }
    df = to_frame(PRICES, [({"ticker": "AAPL", "interval": "day"}, body)])
    assert df["vwap"].tolist()[0] == 1.5 and pd.isna(df["vwap"].tolist()[1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(responses=pages())
def test_a_panel_sized_frame_and_consumed_parts_give_the_same_frame(responses) -> None:
    """Past ``_CONSOLIDATED`` the float columns are the frame's own block and the others are inserted around it;
    with ``consume`` every part is dropped from the caller's list."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = reference_frame(responses)
        parts = [typed.response_part(PRICES, p, b) for p, b in responses]
        limit = typed._CONSOLIDATED
        typed._CONSOLIDATED = 0
        try:
            got = frame_from_parts(PRICES, parts, responses[0][0], consume=True)
        finally:
            typed._CONSOLIDATED = limit
    same(got, want)
    fast = (
        typed._series_frame(PRICES, [typed.response_part(PRICES, p, b) for p, b in responses], COLUMNS, responses[0][0])
        is not None
    )
    assert all(p is None for p in parts) == fast  # dropped only by the path that copies them
