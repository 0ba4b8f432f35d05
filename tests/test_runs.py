"""A shared table's runs read into the frame whole: the same frame as the runs cut into parts of their own."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fdkit
from fdkit.catalog.endpoints import get
from fdkit.client.bulk import fetch_pieces
from fdkit.frames.runs import Run, Runs, as_part, grouped, positions
from fdkit.frames.typed import frame_from_parts

#: endpoints whose frames take the two builders: bars (time series written into preallocated columns) and
#: statements (the general path: one table, constants as columns)
CASES = {
    "prices": {"interval": "day", "start_date": "2024-01-02", "end_date": "2024-03-28"},
    "income_statements": {"period": "quarterly", "limit": 8},
}
TICKERS = ["AAPL", "MSFT", "NVDA", "JPM", "XOM", "TSLA", "KO", "PG"]


@functools.cache
def _pieces(name: str, cache_dir: str) -> tuple:
    """Each ticker's run of the service's shared table (the embedded default, asked in bulk)."""
    client = fdkit.Client(cache_dir=cache_dir, progress=False)
    asked = [{**CASES[name], "ticker": t} for t in TICKERS]
    pieces, failed = fetch_pieces(client, get(name), asked)
    assert not failed and all(isinstance(p, Run) for _, p in pieces)
    return tuple((q, p) for q, p in pieces)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("runs-cache"))


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_runs_in_any_order_cut_or_empty_give_the_frame_of_their_parts(cache_dir, name, data):
    """Any subset of the tickers, in any order, some runs cut short or emptied, parts of their own among them."""
    pieces = [p for _, p in _pieces(name, cache_dir)]
    order = data.draw(st.permutations(range(len(pieces))))
    chosen = order[: data.draw(st.integers(1, len(order)))]
    mixed = []
    for i in chosen:
        run = pieces[i]
        cut = data.draw(st.sampled_from(["whole", "short", "empty", "own part"]))
        if cut == "short":
            run = run._replace(rows=max(0, run.rows // 2))
        elif cut == "empty":
            run = run._replace(rows=0)
        mixed.append(as_part(run) if cut == "own part" else run)
    params = {**CASES[name], "ticker": "X"}
    by_runs = frame_from_parts(name, grouped(mixed), params)
    by_parts = frame_from_parts(name, [as_part(p) for p in mixed], params)
    pd.testing.assert_frame_equal(by_runs, by_parts)
    assert by_runs.attrs == by_parts.attrs


def test_a_consumed_list_of_runs_is_emptied_once_its_rows_are_in_the_frame(cache_dir):
    pieces = grouped([p for _, p in _pieces("prices", cache_dir)])
    assert len(pieces) == 1 and isinstance(pieces[0], Runs)
    frame = frame_from_parts("prices", pieces, CASES["prices"], consume=True)
    assert pieces == [None] and frame.index.get_level_values("ticker").nunique() == len(TICKERS)


def test_runs_that_name_rows_beyond_their_table_are_refused():
    table = pa.table({"x": [1.0, 2.0]})
    with pytest.raises(ValueError, match="outside their table of 2"):
        Runs(table, np.array([1]), np.array([2]), [{"ticker": "A"}])
    with pytest.raises(ValueError, match="outside"):
        Runs(table, np.array([-1]), np.array([1]), [{"ticker": "A"}])
    with pytest.raises(ValueError, match="1 offsets, 1 counts, 2 constants"):
        Runs(table, np.array([0]), np.array([1]), [{}, {}])


def test_positions_and_covering_follow_the_runs_order():
    table = pa.table({"x": np.arange(10, dtype=float)})
    runs = Runs(table, np.array([6, 0, 3]), np.array([2, 1, 0]), [{}, {}, {}])
    assert positions(runs.offsets, runs.rows).tolist() == [6, 7, 0]
    assert runs.covering()["x"].to_pylist() == [6.0, 7.0, 0.0] and not runs.contiguous()
    assert [p[0]["x"].to_pylist() for p in runs.parts()] == [[6.0, 7.0], [0.0], []]
