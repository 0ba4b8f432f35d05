"""Helpers that keep a series' meaning (issue 40, item 1): resample keeps every column, returns never cross a break.

Property tests (hypothesis) over random panels with holes and breaks of basis, adjusted_as_of and price_source,
checked against plain loops written for the test; then the price history itself, and Parquet round trips.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fdkit  # noqa: F401 - registers .fds
from fdkit.errors import BadRequestError
from fdkit.research.returns import period_returns, price_column

LABELS = ["basis", "adjusted_as_of", "price_source"]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def panels(draw: st.DrawFn) -> pd.DataFrame:
    """1-3 tickers of business-day bars with holes, and piecewise-constant labels that break at random rows."""
    parts = []
    for k in range(draw(st.integers(1, 3))):
        start = pd.Timestamp("2020-01-01") + pd.offsets.BDay(draw(st.integers(0, 40)))
        days = pd.bdate_range(start, periods=draw(st.integers(2, 160)))
        keep = np.array(draw(st.lists(st.booleans(), min_size=len(days), max_size=len(days))), dtype=bool)
        keep[0] = True
        if draw(st.booleans()):  # a long hole: some weeks without a bar
            at = draw(st.integers(0, len(days) - 1))
            keep[at : at + draw(st.integers(5, 45))] = False
            keep[0] = True
        days = days[keep | (np.arange(len(days)) % draw(st.integers(1, 4)) == 0)]
        n = len(days)

        def piecewise(values: list, n: int = n) -> list:
            cuts = sorted(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=3)))
            choice = [draw(st.sampled_from(values)) for _ in range(len(cuts) + 1)]
            return [choice[int(np.searchsorted(cuts, i, side="right"))] for i in range(n)]

        basis = piecewise(["as_traded", "as_traded", "adjusted_only", "price_only"])
        price = np.exp(np.cumsum(draw(st.lists(st.floats(-0.1, 0.1), min_size=n, max_size=n)))) * 50
        parts.append(
            pd.DataFrame(
                {
                    "ticker": f"T{k}",
                    "date": days,
                    "adj_close": price,
                    "close": np.where(np.array(basis) != "adjusted_only", price * 1.1, np.nan),
                    "dividend": draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, np.nan]), min_size=n, max_size=n)),
                    "volume": pd.array(draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n)), dtype="Int64"),
                    "basis": pd.Categorical(basis, categories=["adjusted_only", "as_traded", "price_only"]),
                    "adjusted_as_of": pd.to_datetime(piecewise(["2025-07-09", "2025-07-09", "2012-09-12"])),
                    "price_source": pd.Categorical(
                        piecewise(["ml4t", "stooq_2017", "pystock"]), categories=["ml4t", "pystock", "stooq_2017"]
                    ),
                }
            )
        )
    frame = pd.concat(parts, ignore_index=True)
    frame["ticker"] = frame["ticker"].astype("category")
    return frame.set_index(["ticker", "date"])


def _labels(frame: pd.DataFrame) -> list[tuple]:
    return [tuple(str(v) for v in row) for row in frame[[c for c in LABELS if c in frame.columns]].to_numpy()]


def _one_series(rows: pd.DataFrame, lo: int, hi: int) -> bool:
    """Rows lo..hi (positions in one ticker's rows) are one series: same labels, no break counted inside."""
    labels = _labels(rows.iloc[lo : hi + 1])
    breaks = rows["series_breaks"].iloc[lo + 1 : hi + 1] if "series_breaks" in rows.columns else pd.Series([0])
    return len(set(labels)) == 1 and int(breaks.fillna(0).sum()) == 0


def _business_steps(a: pd.Timestamp, b: pd.Timestamp) -> int:
    return len(pd.bdate_range(a, b)) - 1


def _month_steps(a: pd.Timestamp, b: pd.Timestamp) -> int:
    return (b.year - a.year) * 12 + b.month - a.month


# -- resample ---------------------------------------------------------------------------------------------------
@SETTINGS
@given(panels(), st.sampled_from(["ME", "W-FRI", "QE"]))
def test_resample_keeps_every_column_by_its_rule(px, rule):
    out = px.fds.resample(rule)
    assert list(out.columns) == [*px.columns, "series_breaks"] and out.attrs["freq"] == rule
    for col in px.columns:
        assert out[col].dtype == px[col].dtype, col
    assert str(out["series_breaks"].dtype) == "Int64" and out["series_breaks"].notna().all()
    for ticker, rows in px.groupby(level="ticker", observed=True):
        rows = rows.droplevel("ticker")
        labels = _labels(rows)
        changed = [0] + [int(a != b) for a, b in zip(labels[:-1], labels[1:], strict=True)]
        rows = rows.assign(_changed=changed)
        bars = out.xs(ticker, level="ticker")
        groups = [(k, g) for k, g in rows.groupby(pd.Grouper(freq=rule)) if len(g)]
        assert list(bars.index) == [k for k, _ in groups]  # a bar for each period with rows, no other
        for label, g in groups:
            bar = bars.loc[label]
            last = g.iloc[-1]
            assert bar["adjusted_as_of"] == last["adjusted_as_of"] and bar["price_source"] == last["price_source"]
            assert bar["adj_close"] == last["adj_close"] or (np.isnan(bar["adj_close"]) and np.isnan(last["adj_close"]))
            assert bar["volume"] == g["volume"].sum()
            want_div = g["dividend"].sum(min_count=1)
            assert (np.isnan(want_div) and np.isnan(bar["dividend"])) or bar["dividend"] == pytest.approx(want_div)
            assert bar["series_breaks"] == g["_changed"].sum()  # counted from the previous bar's last row
            if (g["basis"] == "as_traded").all():
                assert bar["basis"] == "as_traded" and bar["close"] == last["close"]
            elif (g["basis"] == "adjusted_only").any():  # a day without an as-traded close: no bar close
                assert bar["basis"] == "adjusted_only" and np.isnan(bar["close"])
            else:
                assert bar["basis"] == last["basis"] and bar["close"] == last["close"]


# -- returns ----------------------------------------------------------------------------------------------------
def _check_backward(px, r, n, steps, column="adj_close"):
    """Every return is the price over the one n rows back, in one series, within n calendar steps; and only then."""
    for ticker, rows in px.groupby(level="ticker", observed=True):
        rows = rows.droplevel("ticker")
        got = r.xs(ticker, level="ticker").to_numpy()
        days = rows.index
        p = rows[column].to_numpy()
        for i in range(len(rows)):
            ok = i - n >= 0 and _one_series(rows, i - n, i) and steps(days[i - n], days[i]) <= n
            want = p[i] / p[i - n] - 1 if ok else np.nan
            if np.isnan(want):
                assert np.isnan(got[i]), (ticker, days[i])
            else:
                assert got[i] == pytest.approx(want, rel=1e-12), (ticker, days[i])


@SETTINGS
@given(panels(), st.integers(1, 5))
def test_a_daily_return_never_spans_a_break_or_a_hole(px, n):
    r = px.fds.returns(periods=n, freq="B")
    assert r.attrs["column"] == "adj_close" and r.dtype == "float64" and r.index.equals(px.index)
    _check_backward(px, r, n, _business_steps)
    fwd = px.fds.forward_returns([n], freq="B")[f"fwd_{n}"]
    back = r.groupby(level="ticker", observed=True).shift(-n)  # where both exist, fwd at t-n is the return at t
    both = fwd.notna() & back.notna()
    np.testing.assert_allclose(fwd[both], back[both], rtol=1e-12)


@SETTINGS
@given(panels(), st.integers(1, 3))
def test_a_monthly_return_never_spans_a_break_or_a_missing_month(px, n):
    m = px.fds.resample("ME")
    r = m.fds.returns(periods=n)  # the calendar is attrs["freq"]: a missing month is a hole
    _check_backward(m, r, n, _month_steps)
    by_calendar = m.fds.returns(periods=f"{n}ME")
    for ticker, rows in m.groupby(level="ticker", observed=True):
        rows = rows.droplevel("ticker")
        got = by_calendar.xs(ticker, level="ticker").to_numpy()
        for i, day in enumerate(rows.index):
            j = np.flatnonzero(rows.index == day - pd.offsets.MonthEnd(n))
            ok = len(j) == 1 and _one_series(rows, int(j[0]), i)
            want = rows["adj_close"].iloc[i] / rows["adj_close"].iloc[int(j[0])] - 1 if ok else np.nan
            assert (np.isnan(want) and np.isnan(got[i])) or got[i] == pytest.approx(want, rel=1e-12)


@SETTINGS
@given(panels(), st.integers(1, 3))
def test_a_momentum_window_with_a_skip_spans_no_break_or_missing_month(px, n):
    m = px.fds.resample("ME")
    mom = m.fds.returns(periods=f"{n + 1}ME", skip="1ME")  # t-(n+1) .. t-1, labelled t
    for ticker, rows in m.groupby(level="ticker", observed=True):
        rows = rows.droplevel("ticker")
        got = mom.xs(ticker, level="ticker").to_numpy()
        for i, day in enumerate(rows.index):
            recent = np.flatnonzero(rows.index == day - pd.offsets.MonthEnd(1))
            base = np.flatnonzero(rows.index == day - pd.offsets.MonthEnd(n + 1))
            ok = len(recent) == 1 and len(base) == 1 and _one_series(rows, int(base[0]), int(recent[0]))
            p = rows["adj_close"].to_numpy()
            want = p[int(recent[0])] / p[int(base[0])] - 1 if ok else np.nan
            assert (np.isnan(want) and np.isnan(got[i])) or got[i] == pytest.approx(want, rel=1e-12)


@SETTINGS
@given(panels())
def test_one_ticker_or_many_give_the_same_returns_and_dtypes(px):
    many = px.fds.forward_returns([1, "2ME"], freq="B")
    for ticker, _ in px.groupby(level="ticker", observed=True):
        one = px.xs(ticker, level="ticker", drop_level=False).fds.forward_returns([1, "2ME"], freq="B")
        pd.testing.assert_frame_equal(one, many.xs(ticker, level="ticker", drop_level=False), check_index_type=False)
    assert list(many.dtypes) == ["float64", "float64"]


def test_breaks_can_be_chosen_and_bad_arguments_are_named():
    days = pd.to_datetime(["2024-01-31", "2024-02-29", "2024-03-31"])
    idx = pd.MultiIndex.from_product([["A"], days], names=["ticker", "time"])
    px = pd.DataFrame({"adj_close": [10.0, 11.0, 12.1], "price_source": ["x", "y", "y"]}, index=idx)
    assert px.fds.returns().round(2).tolist()[1:] == [pytest.approx(np.nan, nan_ok=True), 0.1]
    assert px.fds.returns(breaks=()).round(2).tolist()[1:] == [0.1, 0.1]
    with pytest.raises(BadRequestError, match="breaks=.*adjusted_as_of"):
        px.fds.returns(breaks=("adjusted_as_of",))
    with pytest.raises(BadRequestError, match="periods must be"):
        px.fds.returns(periods=0)
    with pytest.raises(BadRequestError, match="periods must be"):
        px.fds.returns(periods="soon")
    with pytest.raises(BadRequestError, match="horizons must be"):
        px.fds.forward_returns([0])
    with pytest.raises(BadRequestError, match="no price column 'close'.*adj_close"):
        px.fds.returns(column="close")
    with pytest.raises(BadRequestError, match="no price column .*price_source"):
        px[["price_source"]].fds.returns()
    with pytest.raises(BadRequestError, match="kind must be"):
        px.fds.returns(kind="weird")
    with pytest.raises(BadRequestError, match="shorter than periods"):
        px.fds.returns(periods=2, skip=2)
    with pytest.raises(BadRequestError, match="kind of periods"):
        px.fds.returns(periods="2ME", skip=1)


def test_an_event_window_across_a_change_of_source_is_left_out():
    days = pd.bdate_range("2024-01-01", periods=12)
    idx = pd.MultiIndex.from_product([["A", "B"], days], names=["ticker", "time"])
    px = pd.DataFrame(
        {
            "adj_close": np.r_[np.linspace(10, 12, 12), np.linspace(20, 19, 12)],
            "price_source": ["x"] * 6 + ["y"] * 6 + ["x"] * 12,
        },
        index=idx,
    )
    ev = pd.DataFrame({"ticker": ["A", "A"], "date": [days[3], days[6]]})
    study = fdkit.event_study(ev, px, window=(-1, 1), benchmark="B")
    assert study.attrs["events_used"] == 1 and study.attrs["events_dropped"] == 1  # days[5] -> days[6] crosses it


def test_the_default_column_is_the_one_the_frame_has():
    frame = pd.DataFrame({"close": [1.0, np.nan, 3.0], "adj_close": [1.0, 2.0, 3.0]})
    assert price_column(frame) == "adj_close"  # close has a hole adj_close fills
    assert price_column(frame.fillna(2.0)) == "close"  # fdkit.prices: the as-traded close, complete
    assert price_column(frame.fillna(2.0).assign(adjusted_as_of=pd.Timestamp("2025-07-09"))) == "adj_close"
    assert price_column(frame[["close"]]) == "close"


# -- the price history ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def history():
    pytest.importorskip("fdkit_history")
    return fdkit.price_history(["AAPL", "GE", "LEH", "XOM"], limit=None, errors="ignore")


def test_price_history_returns_use_the_adjusted_close_and_never_cross_its_breaks(history):
    m = history.fds.resample("ME")
    assert set(history.columns) < set(m.columns)
    assert m["close"].isna().mean() > 0.3  # the as-traded close is missing on many month ends
    r, fwd = m.fds.returns(), m.fds.forward_returns([1, 12])
    assert r.attrs["column"] == fwd.attrs["column"] == "adj_close"
    assert fwd["fwd_1"].notna().mean() > 0.9
    labels = m[LABELS].astype(str)
    prev = labels.groupby(level="ticker", observed=True).shift()
    crossing = (labels != prev).any(axis=1) & prev.notna().all(axis=1)
    crossing |= m["series_breaks"] > 0
    assert crossing.sum() >= 8 and r[crossing].isna().all()  # AAPL alone changes source five times
    naive = m["adj_close"].groupby(level="ticker", observed=True).pct_change(fill_method=None)
    assert (naive[crossing].notna()).sum() >= 8  # the row-counting return crossed every one of them
    with pytest.warns(UserWarning, match="close is missing on .* adjusted_only"):
        m.fds.forward_returns([1], column="close")
    with pytest.raises(BadRequestError, match="no price column 'price'"):
        m.fds.returns(column="price")


# -- event_study(per_event=True) through Parquet ---------------------------------------------------------------
def _events_panel():
    days = pd.bdate_range("2024-01-01", periods=12)
    idx = pd.MultiIndex.from_product([["A", "B"], days], names=["ticker", "time"])
    close = np.r_[np.linspace(10, 12, 12), np.linspace(20, 19, 12)]
    return days, pd.DataFrame({"close": close}, index=idx)


def _schema(frame: pd.DataFrame) -> dict[str, str]:
    return {
        c: f"category[{d.categories.dtype}]" if isinstance(d, pd.CategoricalDtype) else str(d)
        for c, d in frame.dtypes.items()
    }


@pytest.mark.parametrize("events", ["some", "none"])
def test_event_study_per_event_round_trips_through_parquet(events, tmp_path):
    days, px = _events_panel()
    when = [days[4], days[6]] if events == "some" else []
    ev = pd.DataFrame({"ticker": ["A", "B"][: len(when)], "date": pd.to_datetime(when)})
    table = fdkit.event_study(ev, px, window=(-1, 2), per_event=True)
    assert len(table) == (8 if events == "some" else 0)
    table.to_parquet(tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(back, table, check_freq=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = fdkit.event_study(ev.iloc[:0], px, window=(-1, 2), per_event=True)
    assert _schema(empty) == _schema(table)
    assert [str(empty.index.get_level_values(i).dtype) for i in range(2)] == ["int64", "int64"]


def test_period_returns_of_a_frame_indexed_by_date_only():
    days = pd.date_range("2024-01-31", periods=4, freq="ME").delete(2)
    px = pd.DataFrame({"close": [10.0, 11.0, 13.2]}, index=pd.DatetimeIndex(days, name="time"))
    assert period_returns(px, 1, freq="ME").round(2).tolist()[1:] == [0.1, pytest.approx(np.nan, nan_ok=True)]
