"""The factor and event toolkit equals hand-written pandas on the same panels, over real HTTP."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fdkit
from fdkit.errors import BadRequestError


@pytest.fixture(scope="module")
def monthly(ref_client):
    """Month-end closes of the S&P 500 cross-section, 2015-04 .. 2017-03, with a momentum factor."""
    tickers = [t for t in ref_client.available("income_statements") if t[0] in "ABCDEFGHIJ"]
    px = ref_client.prices(tickers, start_date="2015-03-20", end_date="2017-03-31", errors="ignore")
    m = px.fds.resample("ME")
    m = m.join(m.fds.forward_returns([1, 3]))
    m["mom_3"] = m.groupby(level="ticker", observed=True)["close"].pct_change(3)
    return m


def test_forward_returns_by_hand(monthly):
    c = monthly["close"]
    want = c.groupby(level="ticker", observed=True).shift(-3) / c - 1
    pd.testing.assert_series_equal(monthly["fwd_3"], want, check_names=False)


def test_rank_ic_equals_pandas_spearman_per_date(monthly):
    ic = monthly.fds.rank_ic("mom_3", ["fwd_1", "fwd_3"])
    date = monthly.index.names[1]
    hand = {}
    for day, g in monthly.groupby(level=date):
        pair = g[["mom_3", "fwd_1"]].dropna()
        if len(pair) >= 3:
            hand[day] = pair["mom_3"].rank().corr(pair["fwd_1"].rank())
    hand = pd.Series(hand)
    assert len(hand) >= 15 and monthly.index.get_level_values("ticker").nunique() >= 100
    np.testing.assert_allclose(ic["fwd_1"].dropna().to_numpy(), hand.to_numpy(), rtol=1e-12)
    summary = monthly.fds.rank_ic("mom_3", ["fwd_1", "fwd_3"], summary=True)
    assert summary.loc["fwd_1", "mean"] == pytest.approx(hand.mean(), rel=1e-12)
    assert summary.loc["fwd_1", "t_stat"] == pytest.approx(hand.mean() / (hand.std() / np.sqrt(len(hand))), rel=1e-9)
    assert list(summary.index) == ["fwd_1", "fwd_3"]


def test_quantile_spreads_equal_pandas_qcut(monthly):
    got = monthly.fds.quantile_returns("mom_3", "fwd_1", n=5)
    date = monthly.index.names[1]
    rows = {}
    for day, g in monthly.groupby(level=date):
        pair = g[["mom_3", "fwd_1"]]
        x = pair["mom_3"].dropna()
        if len(x) < 5:
            continue
        bucket = pd.qcut(x.rank(method="first"), 5, labels=False) + 1
        means = pair.loc[bucket.index, "fwd_1"].groupby(bucket).mean()
        rows[day] = means.reindex(range(1, 6))
    hand = pd.DataFrame(rows).T
    hand = hand.dropna(how="all")
    got = got.loc[hand.index]
    np.testing.assert_allclose(
        got[["q1", "q2", "q3", "q4", "q5"]].to_numpy(), hand.to_numpy(), rtol=1e-12, equal_nan=True
    )
    np.testing.assert_allclose(got["long_short"].to_numpy(), (hand[5] - hand[1]).to_numpy(), rtol=1e-12)
    cum = monthly.fds.quantile_returns("mom_3", "fwd_1", n=5, cumulative=True)
    assert cum.attrs["cumulative"] and (cum > 0).all().all()


def test_quantiles_one_ticker_or_many_same_shape(ref_client):
    px = ref_client.prices(["AAPL", "MSFT", "NVDA", "GOOGL"], start_date="2023-01-03", end_date="2023-02-28")
    q = px.fds.quantiles("close", n=2)
    assert str(q.dtype) == "Int64" and q.index.equals(px.index)
    day = q.xs(pd.Timestamp("2023-01-03"), level="time")
    assert sorted(day.tolist()) == [1, 1, 2, 2]
    one = ref_client.prices("AAPL", start_date="2023-01-03", end_date="2023-02-28")
    assert one.fds.quantiles("close", n=2).isna().all()  # one ticker a day: no buckets to fill


def test_event_study_by_hand(ref_client):
    px = ref_client.prices(["NVDA", "AAPL", "SPY"], start_date="2023-01-03", end_date="2025-12-31")
    filings = ref_client.filings("NVDA", filing_type="10-Q", limit=6)
    events = filings.reset_index()[["ticker", "filing_date"]]
    # total returns (the adjusted close): SPY has no as-traded close after 2021-03
    out = fdkit.event_study(events, px, window=(-2, 5), benchmark="SPY", column="adj_close")
    r = px["adj_close"].groupby(level="ticker", observed=True).pct_change().unstack("ticker")
    ar = r["NVDA"] - r["SPY"]
    days = r.index
    hand = []
    for d in events["filing_date"]:
        pos = days.searchsorted(d)
        if pos - 2 >= 1 and pos + 5 < len(days):
            hand.append(ar.iloc[pos - 2 : pos + 6].to_numpy())
    hand = np.vstack(hand)
    assert out.attrs["events_used"] == len(hand) >= 4
    np.testing.assert_allclose(out["mean_ar"].to_numpy(), hand.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(out["car"].to_numpy(), hand.cumsum(axis=1).mean(axis=0), rtol=1e-12)
    assert list(out.index) == list(range(-2, 6))
    ax = out.fds.plot()
    assert ax.get_xlabel() == "trading days from the event (0: the event day)"
    assert ax.get_ylabel() == "abnormal return" and ax.get_title() == f"Event study ({len(hand)} events)"


def test_clear_errors(ref_client):
    px = ref_client.prices("AAPL", start_date="2023-01-03", end_date="2023-01-31")
    with pytest.raises(BadRequestError, match="no factor column 'nope'"):
        px.fds.rank_ic("nope", "close")
    with pytest.raises(BadRequestError, match="horizons"):
        px.fds.forward_returns([0])
    with pytest.raises(BadRequestError, match="window must contain day 0"):
        fdkit.event_study(pd.DataFrame({"ticker": ["AAPL"], "date": ["2023-01-10"]}), px, window=(1, 5))
    with pytest.raises(BadRequestError, match="benchmark 'SPY'"):
        fdkit.event_study(pd.DataFrame({"ticker": ["AAPL"], "date": ["2023-01-10"]}), px, benchmark="SPY")
    with pytest.raises(BadRequestError, match="indexed \\(ticker, date\\)"):
        fdkit.research.factors.quantiles(px.reset_index(), "close")


def _nw_reference(values: np.ndarray, lags: int) -> float:
    """The same t-statistic from statsmodels: OLS on a constant with HAC (Newey-West) standard errors."""
    sm = pytest.importorskip("statsmodels.api")
    fit = sm.OLS(values, np.ones(len(values))).fit(cov_type="HAC", cov_kwds={"maxlags": lags})
    return float(fit.tvalues[0])


def test_overlapping_horizons_get_newey_west_t_statistics(ref_client):
    tickers = [t for t in ref_client.available("prices") if t[0] in "ABCDEFGHIJKLMN"][:120]
    px = ref_client.prices(tickers, start_date="2013-01-01", end_date="2019-12-31", errors="ignore")
    m = px.fds.resample("ME")
    m = m.join(m.fds.forward_returns([1, 12]))
    m["mom_12"] = m.groupby(level="ticker", observed=True)["close"].pct_change(12)
    ic = m.fds.rank_ic("mom_12", ["fwd_1", "fwd_12"])
    summary = m.fds.rank_ic("mom_12", ["fwd_1", "fwd_12"], summary=True, min_names=3)
    assert summary.loc["fwd_12", "nw_lags"] == 11 and summary.loc["fwd_1", "nw_lags"] == 0
    for col, lags in (("fwd_1", 0), ("fwd_12", 11)):
        want = _nw_reference(ic[col].dropna().to_numpy(), lags)
        assert summary.loc[col, "t_stat"] == pytest.approx(want, rel=0.10)
    naive = ic["fwd_12"].mean() / (ic["fwd_12"].std() / np.sqrt(ic["fwd_12"].count()))
    assert abs(summary.loc["fwd_12", "t_stat"]) < abs(naive)  # overlap no longer counted as independent evidence
    names = m.fds.rank_ic("mom_12", "fwd_12", summary=True, min_names=3)
    assert (
        names.loc["fwd_12", "names_min"] >= 3 and names.loc["fwd_12", "names_mean"] >= names.loc["fwd_12", "names_min"]
    )


def test_a_narrow_or_short_cross_section_gets_no_t_statistic(monthly):
    few = monthly[monthly.index.get_level_values("ticker").isin(["AAPL", "ABT", "ADBE", "AMZN"])]
    with pytest.warns(UserWarning, match="no t-statistic"):
        s = few.fds.rank_ic("mom_3", "fwd_1", summary=True)
    assert np.isnan(s.loc["fwd_1", "t_stat"]) and s.loc["fwd_1", "names_mean"] <= 4
    with pytest.warns(UserWarning, match="fewer than 50 dates"):
        monthly.fds.rank_ic("mom_3", "fwd_1", summary=True, min_dates=50)


def test_event_study_per_event_rows_and_car_by_hand(ref_client):
    tickers = ["AAPL", "MSFT", "NVDA", "JPM", "XOM", "KO"]
    px = ref_client.prices([*tickers, "SPY"], start_date="2021-01-04", end_date="2025-06-30")
    earnings = ref_client.earnings(tickers, limit=None).reset_index()
    events = earnings[(earnings["filing_date"] >= "2021-03-01") & (earnings["filing_date"] <= "2025-06-01")]
    events = events[["ticker", "filing_date"]].reset_index(drop=True)
    events = pd.concat([events, events.iloc[[0, 1]].assign(ticker="KO")], ignore_index=True)  # days shared by two
    table = fdkit.event_study(events, px, window=(-1, 1), benchmark="SPY", per_event=True, column="adj_close")
    assert list(table.index.names) == ["event_id", "event_day"] and table.attrs["benchmark"] == "SPY"
    assert {"ticker", "event_date", "day0", "date", "ar", "car"} <= set(table.columns)
    r = px["adj_close"].groupby(level="ticker", observed=True).pct_change().unstack("ticker")
    days = r.index
    checked = 0
    for event_id, row in events.iterrows():
        pos = days.searchsorted(row["filing_date"])
        if not (pos - 1 >= 1 and pos + 1 < len(days)):
            continue
        ar = (r[row["ticker"]] - r["SPY"]).iloc[pos - 1 : pos + 2].to_numpy()
        got = table.loc[event_id]
        assert got["car"].iloc[-1] == pytest.approx(ar.sum(), abs=1e-12)  # CAR[-1,+1]
        assert got.loc[0, "date"] == days[pos] and (got["ticker"] == row["ticker"]).all()
        checked += 1
    assert checked == table.index.get_level_values("event_id").nunique() >= 30
    summary = fdkit.event_study(events, px, window=(-1, 1), benchmark="SPY", column="adj_close")
    np.testing.assert_allclose(summary["car"].to_numpy(), table.groupby(level="event_day")["car"].mean().to_numpy())
    # events sharing a day 0 are one cluster: averaged first, then tested across days
    by_day = table.xs(1, level="event_day").groupby("day0")["car"].mean()
    want = by_day.mean() / (by_day.std() / np.sqrt(len(by_day)))
    assert summary.loc[1, "car_t_stat_clustered"] == pytest.approx(want, rel=1e-9)
    assert summary.loc[1, "clusters"] == len(by_day) < summary.loc[1, "n"]


def test_earnings_events_are_dated_by_their_release_not_their_filing(ref_client):
    earnings = ref_client.earnings("MMM", limit=None).reset_index()
    q1 = earnings[earnings["report_period"] == "2016-03-31"].iloc[0]
    assert q1["release_date"] == pd.Timestamp("2016-04-26") and q1["filing_date"] == pd.Timestamp("2016-05-03")
    px = ref_client.prices(["MMM", "AAPL", "MSFT"], start_date="2015-03-20", end_date="2017-03-31")
    events = earnings[["ticker", "release_date", "filing_date", "report_period"]]
    table = fdkit.event_study(events, px, window=(-1, 1), per_event=True)
    rows = table.reset_index()
    row = rows[rows["event_date"] == pd.Timestamp("2016-04-26")]
    assert (
        len(row) == 3
        and (row["dated_by"] == "release_date").all()
        and row["day0"].iloc[0] == pd.Timestamp("2016-04-26")
    )
    summary = fdkit.event_study(events, px, window=(-1, 1))
    assert summary.attrs["dated_by"].get("release_date", 0) == summary.attrs["events_used"] >= 6


def test_a_report_without_a_release_falls_back_to_its_filing_and_says_so(ref_client):
    px = ref_client.prices(["MMM", "AAPL"], start_date="2016-01-04", end_date="2016-12-30")
    events = pd.DataFrame(
        {
            "ticker": ["MMM", "MMM"],
            "release_date": pd.to_datetime(["2016-04-26", None]),
            "filing_date": pd.to_datetime(["2016-05-03", "2016-08-02"]),
        }
    )
    study = fdkit.event_study(events, px, window=(-1, 1))
    assert study.attrs["dated_by"] == {"release_date": 1, "filing_date": 1}


def test_quantile_turnover_by_hand_and_quantile_returns_round_trip_parquet(monthly, tmp_path):
    turn = monthly.fds.turnover("mom_3", n=5)
    q = monthly.fds.quantiles("mom_3", n=5).dropna()
    date = monthly.index.names[1]
    days = sorted(q.index.get_level_values(date).unique())
    a, b = days[3], days[4]
    top = {d: set(q[(q.index.get_level_values(date) == d) & (q == 5)].index.get_level_values("ticker")) for d in (a, b)}
    assert turn.loc[b, "q5"] == pytest.approx(len(top[b] - top[a]) / len(top[b]))
    assert ((turn >= 0) & (turn <= 1)).all().all()
    spreads = monthly.fds.quantile_returns("mom_3", "fwd_1", n=5)
    spreads.to_parquet(tmp_path / "q.parquet")  # text column names: no round-trip warning, same frame back
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "q.parquet"), spreads, check_freq=False)


def test_segment_plot_draws_the_segment_type_the_frame_has(ref_client):
    seg = ref_client.segmented_revenues("AAPL", period="annual")
    geography = seg[seg["segment_type"] == "geography"]
    ax = geography.fds.plot(kind="segments")
    assert len(ax.patches) > 0 and ax.get_title() == "AAPL revenue by geography"


def test_a_stock_that_stops_trading_keeps_its_return_to_its_last_price():
    days = pd.date_range("2024-01-31", periods=4, freq="ME")
    idx = pd.MultiIndex.from_tuples(
        [("A", d) for d in days] + [("DEAD", d) for d in days[:2]], names=["ticker", "time"]
    )
    px = pd.DataFrame({"close": [10.0, 11, 12, 13, 20, 15]}, index=idx)
    plain = px.fds.forward_returns([2])
    kept = px.fds.forward_returns([2], to_last_price=True)
    assert np.isnan(plain.loc[("DEAD", days[0]), "fwd_2"])
    assert kept.loc[("DEAD", days[0]), "fwd_2"] == pytest.approx(15 / 20 - 1)  # held until it stopped trading
    assert np.isnan(kept.loc[("A", days[3]), "fwd_2"])  # a living stock's future is still unknown
    pd.testing.assert_series_equal(kept.loc["A", "fwd_2"], plain.loc["A", "fwd_2"])


def test_the_extension_datasets_have_their_ticker_listings(ref_client):
    assert {"AAPL", "KO"} <= set(ref_client.available("dividends"))
    assert {"NVDA", "TSLA"} <= set(ref_client.available("splits"))
