"""The .fds accessor: ratios against filed numbers, screen semantics, point in time, panel helpers, plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fdkit.errors import BadRequestError  # noqa: E402
from fdkit.frames.filters import OPERATORS  # noqa: E402

# AAPL 10-K FY2023 (report period 2023-09-30), USD millions as filed
AAPL = dict(
    revenue=383_285,
    cost=214_137,
    op_income=114_301,
    net_income=96_995,
    equity=62_146,
    assets=352_583,
    current_assets=143_566,
    current_liabilities=145_308,
    cash=29_965,
    marketable_current=31_590,
    receivables=29_508 + 31_477,
    inventory=6_331,
    commercial_paper=5_985,
    term_debt_current=9_822,
    term_debt_noncurrent=95_281,
    pretax=113_736,
    interest=3_933,
    tax=16_741,
    cfo=110_543,
    capex=10_959,
)


@pytest.fixture(scope="module")
def aapl(ref_client):
    return ref_client.financials("AAPL", period="annual", limit=6)


def test_aapl_fy2023_ratios_by_hand(aapl):
    r = aapl.fds.ratios().loc[("AAPL", pd.Timestamp("2023-09-30"))]
    a = AAPL
    debt = a["commercial_paper"] + a["term_debt_current"] + a["term_debt_noncurrent"]
    tax_rate = a["tax"] / (a["net_income"] + a["tax"])
    expected = {
        "gross_margin": (a["revenue"] - a["cost"]) / a["revenue"],
        "operating_margin": a["op_income"] / a["revenue"],
        "net_margin": a["net_income"] / a["revenue"],
        "return_on_equity": a["net_income"] / a["equity"],
        "return_on_assets": a["net_income"] / a["assets"],
        "return_on_invested_capital": a["op_income"] * (1 - tax_rate) / (debt + a["equity"] - a["cash"]),
        "current_ratio": a["current_assets"] / a["current_liabilities"],
        "quick_ratio": (a["cash"] + a["marketable_current"] + a["receivables"]) / a["current_liabilities"],
        "cash_ratio": a["cash"] / a["current_liabilities"],
        "operating_cash_flow_ratio": a["cfo"] / a["current_liabilities"],
        "debt_to_equity": debt / a["equity"],
        "debt_to_assets": debt / a["assets"],
        "interest_coverage": (a["pretax"] + a["interest"]) / a["interest"],
        "asset_turnover": a["revenue"] / a["assets"],
        "inventory_turnover": a["cost"] / a["inventory"],
        "receivables_turnover": a["revenue"] / a["receivables"],
        "days_sales_outstanding": 365 / (a["revenue"] / a["receivables"]),
        "free_cash_flow_per_share": (a["cfo"] - a["capex"]) * 1e6 / 15_550_061_000,
        "earnings_per_share": 6.16,
    }
    for name, value in expected.items():
        assert r[name] == pytest.approx(value, rel=1e-9), name


def test_growth_and_lag(aapl):
    g = aapl.fds.ratios(growth=True)
    rev = aapl["revenue"].droplevel(0)
    want = rev.loc["2023-09-30"] / rev.loc["2022-09-24"] - 1
    assert g.loc[("AAPL", pd.Timestamp("2023-09-30")), "revenue_growth"] == pytest.approx(want, rel=1e-12)
    g2 = aapl.fds.ratios(growth=True, lag=2)
    want2 = rev.loc["2023-09-30"] / rev.loc["2021-09-25"] - 1
    assert g2.loc[("AAPL", pd.Timestamp("2023-09-30")), "revenue_growth"] == pytest.approx(want2, rel=1e-12)


def test_valuation_with_prices(ref_client, aapl):
    px = ref_client.prices("AAPL", start_date="2020-09-01", end_date="2025-12-31")
    v = aapl.fds.ratios(prices=px).loc[("AAPL", pd.Timestamp("2023-09-30"))]
    close = px.loc["AAPL"].loc[:"2023-09-30", "close"].iloc[-1]
    mcap = close * 15_550_061_000
    assert v["market_cap"] == pytest.approx(mcap, rel=1e-12)
    assert v["price_to_earnings_ratio"] == pytest.approx(close / 6.13, rel=1e-12)  # FY2023 diluted EPS, 10-K


def test_multi_ticker_equals_per_ticker(ref_client):
    both = ref_client.financials(["AAPL", "NVDA"], period="quarterly", limit=12)
    px = ref_client.prices(["AAPL", "NVDA"], start_date="2022-01-01", end_date="2026-02-24")
    together = both.fds.ratios(prices=px, growth=True)
    parts = pd.concat([both.loc[[t]].fds.ratios(prices=px, growth=True) for t in ("AAPL", "NVDA")])
    pd.testing.assert_frame_equal(together, parts)
    ttm = both.fds.ratios(trailing=True)
    assert len(ttm) and ttm.index.get_level_values("ticker").nunique() == 2


def test_client_ratios_agree_with_server_metrics(ref_client):
    fin = ref_client.financials(["AAPL", "NVDA", "GOOGL"], period="annual", limit=6)
    px = ref_client.prices(["AAPL", "NVDA", "GOOGL"], start_date="2015-01-01", end_date="2026-02-24", limit=5000)
    ours = fin.fds.ratios(prices=px, growth=True)
    server = ref_client.financial_metrics(["AAPL", "NVDA", "GOOGL"], period="annual", limit=6)
    common = [c for c in ours.columns if c in server.columns]
    assert len(common) >= 35
    joined = ours[common].join(server[common].add_suffix("_srv"), how="inner")
    first = joined.groupby(level="ticker", observed=True).head(1).index  # no previous row client-side
    checked = 0
    for c in common:
        a, b = joined[c], joined[f"{c}_srv"]
        if c.endswith("_growth") or c == "peg_ratio":
            a, b = a.drop(first), b.drop(first)
        mask = a.notna() | b.notna()
        np.testing.assert_allclose(a[mask], b[mask], rtol=1e-9, err_msg=c)
        checked += int(mask.sum())
    assert checked > 300


def test_unknown_family_is_a_bad_request(aapl):
    with pytest.raises(BadRequestError, match="unknown ratio families"):
        aapl.fds.ratios(families=["vibes"])


# -- screen ---------------------------------------------------------------------------------------------------
SCREEN_FIELDS = [
    "revenue",
    "net_income",
    "gross_margin",
    "net_margin",
    "return_on_equity",
    "current_ratio",
    "debt_to_equity",
    "total_assets",
    "free_cash_flow",
    "operating_margin",
]


@pytest.fixture(scope="module")
def screen_table(ref_client):
    tickers = ref_client.available("balance_sheets")
    fin = ref_client.financials(tickers, period="annual", limit=1)
    metrics = ref_client.financial_metrics(tickers, period="annual", limit=1)
    return fin.join(metrics[[c for c in metrics.columns if c not in fin.columns]])


_filter = st.builds(
    lambda f, op, q: (f, op, q),
    st.sampled_from(SCREEN_FIELDS),
    st.sampled_from([o for o in OPERATORS if o != "in"]),
    st.floats(min_value=0.0, max_value=1.0),
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(_filter, min_size=1, max_size=3))
def test_screen_semantics_equal_on_client_and_server(ref_client, screen_table, spec):
    filters = []
    for field, op, q in spec:  # thresholds at quantiles of the real values so filters bite
        values = screen_table[field].dropna()
        value = float(values.quantile(q)) if len(values) else 0.0
        filters.append({"field": field, "operator": op, "value": value})
    client = screen_table.fds.screen(filters).index.get_level_values("ticker").tolist()
    server = ref_client.screen(filters=filters, period="annual", limit=1000)
    assert client == server.index.get_level_values("ticker").tolist()


def test_screen_keyword_form_and_errors(screen_table):
    a = screen_table.fds.screen(revenue__gt=1e11, net_margin__gte=0.2)
    b = screen_table.fds.screen(
        [
            {"field": "revenue", "operator": "gt", "value": 1e11},
            {"field": "net_margin", "operator": "gte", "value": 0.2},
        ]
    )
    pd.testing.assert_frame_equal(a, b)
    assert a.index.get_level_values("ticker").is_monotonic_increasing
    assert screen_table.fds.screen(ticker=["NVDA", "AAPL"]).index.get_level_values(0).tolist() == ["AAPL", "NVDA"]
    with pytest.raises(BadRequestError, match="unknown filter field 'nope'"):
        screen_table.fds.screen(nope__gt=1)
    with pytest.raises(BadRequestError, match="unknown operator 'between'"):
        screen_table.fds.screen(revenue__between=1)
    with pytest.raises(BadRequestError, match="finite number"):
        screen_table.fds.screen(revenue__gt="lots")


# -- point in time --------------------------------------------------------------------------------------------
_EASTERN = "America/New_York"


def _statements(draw_dates, filing_lags, minutes):
    """Quarterly rows: filed ``lag`` days after the period (or never), some with an acceptance time."""
    rows = []
    for i, (rp, lag, minute) in enumerate(zip(draw_dates, filing_lags, minutes, strict=True)):
        filed = None if lag is None else rp + pd.Timedelta(days=lag)
        stamp = None
        if filed is not None and minute is not None:  # accepted on the filing day (EDGAR dates it so)
            stamp = (filed + pd.Timedelta(minutes=minute)).tz_localize(_EASTERN).isoformat()
        rows.append(
            {
                "ticker": "X",
                "report_period": rp,
                "filing_date": filed,
                "filing_datetime": stamp,
                "period": "quarterly",
                "revenue": float(i),
            }
        )
    df = pd.DataFrame(rows)
    df["filing_date"] = pd.to_datetime(df["filing_date"])
    df["filing_datetime"] = df["filing_datetime"].astype("string")
    return df.set_index(["ticker", "report_period"]).sort_index()


def _known_by_hand(row, lag, lag_days):
    """When a row is known, written out plainly (the documented rule), to check ``asof`` against."""
    if pd.isna(row.filing_date):
        return row.report_period + pd.Timedelta(days=lag_days)
    if lag is not None:
        return row.filing_date + pd.Timedelta(lag)
    if pd.notna(row.filing_datetime):
        at = pd.Timestamp(row.filing_datetime).tz_convert(_EASTERN)
        day = pd.Timestamp(at.date())
        return day if at.weekday() < 5 and at.hour < 16 else day + pd.Timedelta(days=1)
    return row.filing_date + pd.Timedelta(days=1)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(0, 2000), min_size=1, max_size=12, unique=True),
    st.sampled_from([None, "0D", "1D", "3D"]),
    st.sampled_from([None, "100D", "400D"]),
    st.data(),
)
def test_asof_never_uses_a_statement_before_it_is_known(day_offsets, lag, max_age, data):
    """Property: with any lag and max_age, every joined row was known by its bar and is the latest known one."""
    base = pd.Timestamp("2018-01-01")
    rps = sorted(base + pd.Timedelta(days=d) for d in day_offsets)
    n = len(rps)
    lags = data.draw(st.lists(st.one_of(st.none(), st.integers(1, 120)), min_size=n, max_size=n))
    minutes = data.draw(st.lists(st.one_of(st.none(), st.integers(0, 24 * 60 - 1)), min_size=n, max_size=n))
    stmts = _statements(rps, lags, minutes)
    days = pd.date_range("2018-01-01", "2024-06-30", freq="3D")
    px = pd.DataFrame(
        {"close": np.arange(len(days), dtype=float)},
        index=pd.MultiIndex.from_arrays([pd.Categorical(["X"] * len(days)), days], names=["ticker", "time"]),
    )
    joined = stmts.fds.asof(px, lag_days=45, lag=lag, max_age=max_age)
    t = joined.index.get_level_values("time")
    rows = stmts.reset_index()
    # the check runs on plain numpy arrays, one bar at a time (pandas' per-call overhead made it most of the test)
    avail = np.array([_known_by_hand(r, lag, 45) for r in rows.itertuples()], dtype="datetime64[ns]")
    filed = rows["filing_date"].to_numpy("datetime64[ns]")
    revenues = rows["revenue"].to_numpy(float)
    cap = None if max_age is None else pd.Timedelta(max_age).to_timedelta64()
    got_at = joined["available_from"].to_numpy("datetime64[ns]")
    for when, got, revenue in zip(t.to_numpy("datetime64[ns]"), got_at, joined["revenue"].to_numpy(float), strict=True):
        eligible = avail[avail <= when]
        if not len(eligible) or (cap is not None and when - eligible.max() > cap):
            assert np.isnat(got) and np.isnan(revenue)
            continue
        assert got == eligible.max() and got <= when
        used = np.flatnonzero((avail == got) & (revenues == revenue))
        assert len(used) == 1  # the row joined is one that was known then
        if not np.isnat(filed[used[0]]):
            assert filed[used[0]] <= when  # never a row filed after the bar's date


def test_asof_on_reference_data(ref_client):
    st_ = ref_client.income_statements("AAPL", period="quarterly", limit=12)
    px = ref_client.prices("AAPL", start_date="2023-01-03", end_date="2024-12-31")
    j = st_.fds.asof(px)
    assert list(j.index.names) == ["ticker", "time"] and len(j) == len(px)
    day = j.loc[("AAPL", pd.Timestamp("2023-11-02"))]
    nxt = j.loc[("AAPL", pd.Timestamp("2023-11-03"))]
    assert day["report_period"] == pd.Timestamp("2023-07-01")  # FY2023 10-K filed 2023-11-03, not known the day before
    assert nxt["report_period"] == pd.Timestamp("2023-09-30")


def test_asof_uses_acceptance_times_where_the_service_sends_them(ref_client):
    """AAPL's FY2024 10-K was accepted 2024-11-01 06:01 ET (pre-market): known that day. A filing without a time
    of day is known the day after its filing date; an explicit lag applies to every filing date."""
    st_ = ref_client.income_statements(["AAPL", "GOOGL"], period="quarterly", limit=None)
    aapl = st_.loc[("AAPL", pd.Timestamp("2024-09-28"))]
    assert aapl["filing_datetime"] == "2024-11-01T06:01:36-04:00" and aapl["filing_date"] == pd.Timestamp("2024-11-01")
    px = ref_client.prices(["AAPL", "GOOGL"], start_date="2024-10-28", end_date="2024-12-31")  # adjusted-only bars
    j = st_.fds.asof(px)
    assert j.loc[("AAPL", pd.Timestamp("2024-10-31")), "report_period"] == pd.Timestamp("2024-06-29")
    assert j.loc[("AAPL", pd.Timestamp("2024-11-01")), "report_period"] == pd.Timestamp("2024-09-28")
    assert j.loc[("AAPL", pd.Timestamp("2024-11-01")), "available_from"] == pd.Timestamp("2024-11-01")
    date_only = j.xs("GOOGL", level="ticker")
    known = date_only["available_from"].notna()
    assert date_only["filing_datetime"].isna().all() and known.any()
    assert (date_only["available_from"][known] == date_only["filing_date"][known] + pd.Timedelta("1D")).all()
    same_day = st_.fds.asof(px, lag="0D").xs("GOOGL", level="ticker")
    assert (same_day["available_from"][known] == same_day["filing_date"][known]).all()


# -- panel helpers ---------------------------------------------------------------------------------------------
def test_panel_helpers(ref_client):
    px = ref_client.prices(["AAPL", "MSFT"], start_date="2023-01-03", end_date="2023-06-30")
    r = px.fds.returns()
    aapl = px.loc["AAPL", "close"]
    assert r.loc["AAPL"].iloc[1] == pytest.approx(aapl.iloc[1] / aapl.iloc[0] - 1)
    assert r.groupby(level="ticker", observed=True).apply(lambda s: s.isna().sum()).tolist() == [1, 1]
    lr = px.fds.returns(kind="log", periods=5)
    assert lr.loc["MSFT"].iloc[5] == pytest.approx(
        np.log(px.loc["MSFT", "close"].iloc[5] / px.loc["MSFT", "close"].iloc[0])
    )
    rb = px.fds.rebase(100)
    assert rb.loc["AAPL"].iloc[0] == 100 and rb.loc["MSFT"].iloc[0] == 100
    m = px.fds.resample("ME")
    jan = px.loc["AAPL"].loc["2023-01"]
    assert m.loc[("AAPL", pd.Timestamp("2023-01-31")), "high"] == jan["high"].max()
    assert m.loc[("AAPL", pd.Timestamp("2023-01-31")), "volume"] == jan["volume"].sum()
    a, b = px.fds.align(r.dropna())
    assert a.index.equals(b.index) and len(a) == len(px) - 2
    with pytest.raises(ValueError, match="kind must be"):
        px.fds.returns(kind="weird")


# -- plots -----------------------------------------------------------------------------------------------------
def _png(ax, path):
    ax.figure.savefig(path)
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
    assert path.stat().st_size > 5000


def test_every_plot_renders(ref_client, tmp_path):
    px = ref_client.prices(["AAPL", "MSFT"], start_date="2023-01-03", end_date="2023-10-27")
    ax = px.fds.plot(rebase=100)
    assert [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")] == ["AAPL", "MSFT"]
    assert [list(line.get_ydata()) for line in ax.get_lines()][0] == [100, 100]  # the base, drawn first
    _png(ax, tmp_path / "prices.png")
    fin = ref_client.financials(["AAPL", "NVDA"], period="annual", limit=5)
    ax = fin.fds.plot(kind="statement", column="revenue")
    assert len(ax.get_lines()) == 2
    _png(ax, tmp_path / "statement.png")
    seg = ref_client.segmented_revenues("AAPL", period="annual", limit=3)
    ax = seg.fds.plot()
    assert len(ax.patches) > 5
    _png(ax, tmp_path / "segments.png")
    ax = fin.fds.ratios().fds.plot(kind="ratios", column="net_margin")
    assert len(ax.patches) == 2
    _png(ax, tmp_path / "ratios.png")


def test_asof_lag_and_max_age(ref_client):
    st_ = ref_client.income_statements("AAPL", period="quarterly", limit=40)
    px = ref_client.prices("AAPL", start_date="2015-01-02", end_date="2026-02-25")
    j = st_.fds.asof(px, lag="1D", max_age="400D")
    t = j.index.get_level_values("time")
    known = j["available_from"].notna()
    assert (j["available_from"][known] <= t[known]).all()
    filed = j["filing_date"][known] if "filing_date" in j else None
    if filed is not None:
        assert ((filed + pd.Timedelta("1D")) <= t[known]).all()  # never on the filing day itself
    assert ((t[known] - j["available_from"][known]) <= pd.Timedelta("400D")).all()
    # the FY2023 10-K (filed 2023-11-03) is not used on its filing day with a one-day lag
    assert j.loc[("AAPL", pd.Timestamp("2023-11-03")), "report_period"] == pd.Timestamp("2023-07-01")
    assert j.loc[("AAPL", pd.Timestamp("2023-11-06")), "report_period"] == pd.Timestamp("2023-09-30")
    first = st_.iloc[:1]  # one early statement only: it is not carried past 400 days
    carried, capped = first.fds.asof(px), first.fds.asof(px, max_age="400D")
    age = carried.index.get_level_values("time") - carried["available_from"]
    stale = (age > pd.Timedelta("400D")).to_numpy()
    assert stale.any() and capped["revenue"][stale].isna().all()
    fresh = ~stale & carried["revenue"].notna().to_numpy()
    assert fresh.any() and (capped["revenue"][fresh] == carried["revenue"][fresh]).all()


def test_growth_matches_periods_by_date_not_by_row(aapl):
    """A missing year gives a missing growth, never a growth against the wrong year."""
    gap = aapl.drop(index=("AAPL", pd.Timestamp("2022-09-24")))
    g = gap.fds.ratios(growth=True)
    assert pd.isna(g.loc[("AAPL", pd.Timestamp("2023-09-30")), "revenue_growth"])
    rev = aapl["revenue"].droplevel(0)
    two = gap.fds.ratios(growth=True, lag=2).loc[("AAPL", pd.Timestamp("2023-09-30")), "revenue_growth"]
    assert two == pytest.approx(rev.loc["2023-09-30"] / rev.loc["2021-09-25"] - 1, rel=1e-12)


def test_quarterly_growth_skips_a_missing_quarter(ref_client):
    q = ref_client.income_statements("NVDA", period="quarterly", limit=12)
    holed = q.drop(index=q.index[5])
    g = holed.fds.ratios(growth=True, families=["growth"])
    after_hole = holed.index[5]
    assert pd.isna(g.loc[after_hole, "revenue_growth"])
    full = q.fds.ratios(growth=True, families=["growth"])
    pd.testing.assert_series_equal(
        g["revenue_growth"].drop(index=after_hole), full["revenue_growth"].drop(index=[q.index[5], after_hole])
    )
