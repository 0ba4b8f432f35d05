"""The after-close rule (issue 27, item 4): a release accepted at or after 16:00 New York time moves prices the
next session, and the event study dates it so, naming the source of each event's day 0."""

from __future__ import annotations

import pandas as pd

import fdkit


def test_releases_after_the_close_start_the_next_session(ref_client):
    earnings = ref_client.earnings("AAPL", limit=None).reset_index()
    timed = earnings.dropna(subset=["release_datetime"])
    assert len(timed) >= 30
    at = pd.to_datetime(timed["release_datetime"], utc=True).dt.tz_convert("America/New_York")
    assert (at.dt.hour * 60 + at.dt.minute >= 16 * 60).all()  # Apple releases at about 16:30, after the close
    assert (at.dt.strftime("%Y-%m-%d") == timed["release_date"].dt.strftime("%Y-%m-%d")).all()
    px = ref_client.prices(["AAPL", "SPY"], start_date="2015-01-02", end_date="2021-03-31")
    events = timed[(timed["release_date"] >= "2015-06-01") & (timed["release_date"] <= "2020-12-31")]
    table = fdkit.event_study(events, px, window=(-1, 1), benchmark="SPY", per_event=True)
    day0 = table.xs(0, level="event_day")
    trading = px.xs("SPY", level="ticker").index
    for _, row in day0.iterrows():  # the first session after the release day
        assert row["day0"] == trading[trading.searchsorted(row["event_date"] + pd.Timedelta(days=1))]
    assert set(day0["dated_by"].astype(str)) == {"release_datetime (after 16:00 New York: next session)"}
    summary = fdkit.event_study(events, px, window=(-1, 1), benchmark="SPY")
    assert summary.attrs["dated_by"] == {"release_datetime (after 16:00 New York: next session)": len(day0)}
