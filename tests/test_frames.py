"""Typed tidy frames for every dataset, fetched from the reference server over real HTTP."""

from __future__ import annotations

import warnings
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from examples import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fdkit
from fdkit.catalog.endpoints import CATALOG
from fdkit.catalog.schema import SCHEMAS, pandas_dtype
from fdkit.errors import BadRequestError, NotFoundError
from fdkit.frames.dtypes import STRING_DTYPE, closed_vocabulary
from fdkit.frames.typed import empty_frame, to_frame

#: dataset -> (one ticker, two tickers) where the function fans out over a list
TWO = {
    "income_statements": ("AAPL", ["AAPL", "NVDA"]),
    "balance_sheets": ("AAPL", ["AAPL", "NVDA"]),
    "cash_flow_statements": ("AAPL", ["AAPL", "NVDA"]),
    "segmented_revenues": ("AAPL", ["AAPL", "NVDA"]),
    "income_statement_segments": ("AAPL", ["AAPL", "NVDA"]),
    "financial_metrics": ("AAPL", ["AAPL", "NVDA"]),
    "prices": ("AAPL", ["AAPL", "MSFT"]),
    "crypto_prices": ("BTC-USD", ["BTC-USD", "ETH-USD"]),
    "price_snapshot": ("AAPL", ["AAPL", "MSFT"]),
    "news": ("AAPL", ["AAPL", "MSFT"]),
    "filings": ("AAPL", ["AAPL", "NVDA"]),
    "filing_items": ("AAPL", ["AAPL", "NVDA"]),
    "insider_trades": ("AAPL", ["AAPL", "SNOW"]),
    "insider_ownership": ("SNOW", ["SNOW", "AAPL"]),
    "institutional_ownership": ("AAPL", ["AAPL", "MSFT"]),
    "company_facts": ("AAPL", ["AAPL", "NVDA"]),
    "interest_rates": ("FED", ["FED", "ECB"]),
    "interest_rate_snapshot": ("FED", ["FED", "ECB"]),
    "analyst_estimates": ("AAPL", ["AAPL", "NVDA"]),
    "earnings": ("AAPL", ["AAPL", "NVDA"]),
}
NO_DATA = {
    "balance_sheet_segments",
    "cash_flow_statement_segments",
    "kpi_guidance",
    "kpi_non_gaap",
    "kpi_metrics",
    "ipos",
}  # the bundled lake has no such rows (data/SOURCES.md)
FRAMED = [n for n, ep in CATALOG.items() if ep.kind != "listing" and EXAMPLES.get(n) is not None]


def _params(name):
    """The catalog example, with the endpoint's default limit said (no TruncatedWarning of fdkit's own making)."""
    params = dict(EXAMPLES[name])
    if CATALOG[name].finite_default is not None and "limit" in CATALOG[name].param_names:
        params.setdefault("limit", CATALOG[name].finite_default)
    return params


def _check_dtypes(name, df):
    ep = CATALOG[name]
    schema = "segment_items" if name == "segmented_revenues" else ep.schema
    table = SCHEMAS[schema]
    assert not any(dt == np.dtype(object) for dt in df.dtypes), df.dtypes[df.dtypes == np.dtype(object)]
    for col in df.columns:
        if col in table and table[col] != "nested":
            want = pandas_dtype(table[col])
            if want == "category":  # a closed vocabulary over its whole set; other labels are text in frames
                vocabulary = closed_vocabulary(col)
                if vocabulary is None:
                    assert str(df[col].dtype) == "string", (name, col, df[col].dtype)
                else:
                    assert df[col].cat.categories.tolist() == list(vocabulary), (name, col)
            elif col == "time" or (ep.kind == "search"):
                pass
            else:
                assert str(df[col].dtype) == want, (name, col, df[col].dtype)
    for level, dt in zip(
        df.index.names, df.index.dtypes if isinstance(df.index, pd.MultiIndex) else [df.index.dtype], strict=True
    ):
        assert dt != np.dtype(object), (name, level)
        if level == "ticker":
            assert dt == STRING_DTYPE, (name, level, dt)  # pandas' string dtype that Parquet keeps for index levels
        if level in ("report_period", "date", "time", "filing_date", "fiscal_period"):
            assert str(dt).startswith("datetime64[ns"), (name, level, dt)


@pytest.mark.parametrize("name", FRAMED)
def test_frame_index_dtypes_and_parquet_roundtrip(name, ref_client, tmp_path):
    df = getattr(ref_client, name)(**_params(name))
    ep = CATALOG[name]
    assert isinstance(df, pd.DataFrame)
    if name not in NO_DATA:
        assert len(df), name
    expected_index = ["ticker", "report_period"] if ep.kind == "search" else list(ep.index)
    if ep.schema in ("prices", "crypto_prices") or name == "price_snapshot":
        expected_index = ["ticker", "time"]
    assert list(df.index.names) == expected_index
    _check_dtypes(name, df)
    path = tmp_path / f"{name}.parquet"
    df.to_parquet(path)
    back = pd.read_parquet(path)
    assert_roundtrip_equal(df, back)


def assert_roundtrip_equal(df, back):
    """Exact equality, all-missing category columns included; only an *empty* frame's date-level unit is not
    carried by pyarrow."""
    if len(df) == 0:
        assert list(back.columns) == list(df.columns) and list(back.index.names) == list(df.index.names)
        assert [str(d) for d in back.dtypes] == [str(d) for d in df.dtypes]
        return
    pd.testing.assert_frame_equal(df, back, check_categorical=True)


@pytest.mark.parametrize("name", sorted(TWO))
def test_one_and_two_tickers_same_shape(name, ref_client):
    one, two = TWO[name]
    params = {k: v for k, v in _params(name).items() if k not in ("ticker", "bank", "cik")}
    fn = getattr(ref_client, name)
    key = CATALOG[name].ticker_param
    if name == "segmented_revenues":
        params = {"period": "annual", "limit": 2}
    if name == "filing_items":
        params = {"filing_type": "10-K", "year": 2025}
        one, two = "NVDA", ["NVDA", "TSLA"]
    a = fn(**{key: one}, **params)
    b = fn(**{key: two}, **params)
    assert list(a.columns) == list(b.columns) and list(a.index.names) == list(b.index.names)
    assert a.dtypes.astype(str).tolist() == b.dtypes.astype(str).tolist()
    first = b.index.get_level_values(0).unique().tolist()
    # AAPL's bundled insider documents are Form 4s only: trades, no Form 3/5 holdings (an empty part, same shape)
    present = [t for t in two if not (name == "insider_ownership" and t == "AAPL")]
    assert sorted(first) == sorted(t.upper() for t in present)
    single = b.xs(one.upper(), level=0, drop_level=False) if isinstance(b.index, pd.MultiIndex) else b.loc[[one]]
    pd.testing.assert_frame_equal(single, a, check_categorical=False)
    c = fn(**{key: two[::-1]}, **params)
    pd.testing.assert_frame_equal(b, c)


def test_price_panel_and_wide(ref_client):
    df = ref_client.prices(["AAPL", "MSFT", "NVDA"], start_date="2023-01-03", end_date="2023-06-30")
    assert list(df.columns) == ["time_milliseconds", "open", "high", "low", "close", "volume", "adj_close", "basis"]
    assert str(df.index.dtypes["time"]) == "datetime64[ns]"  # daily: tz-naive
    wide = df.fds.wide("close")
    assert list(wide.columns) == ["AAPL", "MSFT", "NVDA"] and wide.index.name == "time" and len(wide) == 124
    assert df.loc["AAPL"].index.is_monotonic_increasing
    intraday = ref_client.prices("AAPL", interval="minute", start_date="2014-06-05", end_date="2014-06-05")
    assert str(intraday.index.dtypes["time"]) == "datetime64[ns, UTC]"


def test_pagination_is_transparent(ref_client):
    df = ref_client.prices("MSFT", start_date="2010-01-01", end_date="2023-12-31", limit=3000)
    assert len(df) == 3000 and df.index.is_unique


def test_statement_time_series_sorted_ascending(ref_client):
    df = ref_client.income_statements("AAPL", period="quarterly", limit=8)
    rp = df.index.get_level_values("report_period")
    assert rp.is_monotonic_increasing and len(df) == 8
    for col in ("period", "fiscal_period", "currency", "form_type", "filing_date"):
        assert col in df.columns


def test_financials_joins_three_statements(ref_client):
    df = ref_client.financials(["AAPL", "NVDA"], period="annual", limit=3)
    assert list(df.index.names) == ["ticker", "report_period"] and len(df) == 6
    row = df.loc[("AAPL", pd.Timestamp("2025-09-27"))]
    assert row["revenue"] == 416_161_000_000 and row["total_assets"] > 0 and row["free_cash_flow"] > 0
    assert not df.columns.duplicated().any()


def test_segments_explode_against_filing(ref_client):
    seg = ref_client.segmented_revenues("AAPL", period="annual", report_period="2023-09-30")
    assert list(seg.columns[:1]) == ["period"]
    iphone = seg[seg["segment_label"] == "iPhone"]
    assert iphone["amount"].tolist() == [200_583_000_000]
    assert iphone["segment_type"].tolist() == ["product"]
    assert {"name", "amount", "start_period", "end_period", "segment_label", "segment_type"} <= set(seg.columns)
    products = seg[(seg["segment_type"] == "product") & ~seg["is_subtotal"]]
    assert products["amount"].sum() == 383_285_000_000


def test_segment_hierarchy_over_http(ref_client, tmp_path):
    """NVIDIA's FY2025 Data Center is the subtotal of Compute and Networking: the frames, the line-items answer and
    the stacked bars know it, so the bars add up to the 130.5 bn of revenue instead of ~245 bn."""
    seg = ref_client.segmented_revenues("NVDA", period="annual", report_period="2025-01-26")
    assert str(seg["is_subtotal"].dtype) == "boolean" and str(seg["parent_label"].dtype) == "string"
    product = seg[seg["segment_type"] == "product"].set_index("segment_label")
    assert product.loc["Data Center", "is_subtotal"] and pd.isna(product.loc["Data Center", "parent_label"])
    assert product.loc[["Compute", "Networking"], "parent_label"].tolist() == ["Data Center", "Data Center"]
    assert product.loc[["Compute", "Networking"], "amount"].sum() == product.loc["Data Center", "amount"]
    revenue = ref_client.income_statements("NVDA", period="annual", limit=None)["revenue"]
    fy25 = revenue.loc[("NVDA", pd.Timestamp("2025-01-26"))]
    assert product.loc[~product["is_subtotal"], "amount"].sum() == fy25 == 130_497_000_000
    assert product["amount"].sum() > 1.8 * fy25  # what summing every row would claim
    ax = seg.fds.plot(kind="segments")
    heights = pd.Series([p.get_height() for p in ax.patches]).sum() * 1e9
    assert heights == pytest.approx(fy25)
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
    fin = ref_client.segmented_financials("NVDA", period="annual", limit=None)
    dc = fin[(fin["label"] == "Data Center") & (fin["is_subtotal"])]
    assert len(dc) == 1 and set(fin.loc[fin["parent_label"] == "Data Center", "label"]) == {"Compute", "Networking"}


def test_segment_explosion_rules():
    body = {
        "segmented_revenues": [
            {
                "ticker": "X",
                "report_period": "2024-12-31",
                "period": "annual",
                "items": [
                    {
                        "line_item": "Revenues",
                        "amount": 10.0,
                        "segments": [{"label": "A", "type": "product"}, {"label": "US", "type": "geography"}],
                    },
                    {"name": "Revenues", "amount": 30.0, "segments": []},
                ],
            }
        ]
    }
    df = to_frame("segmented_revenues", [({"ticker": "X"}, body)])
    assert df["name"].tolist() == ["Revenues"] * 3
    labels = df["segment_label"]
    assert labels.iloc[:2].tolist() == ["A", "US"] and pd.isna(labels.iloc[2])  # an item without members: one row
    assert df["amount"].tolist() == [10.0, 10.0, 30.0]


def test_variants_tolerated():
    search = to_frame("screen", [({}, {"results": [{"ticker": "A", "report_period": "2024-12-31", "revenue": 5}]})])
    assert search["revenue"].tolist() == [5.0]
    inst = to_frame(
        "institutional_ownership",
        [
            (
                {"ticker": "A"},
                {
                    "institutional-ownership": [
                        {"ticker": "A", "report_period": "2024-12-31", "investor": "Z", "shares": 1}
                    ]
                },
            )
        ],
    )
    assert len(inst) == 1
    filings = to_frame(
        "filings",
        [
            (
                {"ticker": "A"},
                {"filings": [{"ticker": "A", "cik": 320193, "filing_date": "2024-01-02", "accession_number": "x"}]},
            )
        ],
    )
    assert filings["cik"].tolist() == ["0000320193"]
    earnings = to_frame(
        "earnings",
        [
            (
                {"ticker": "A"},
                {"earnings": {"ticker": "A", "report_period": "2025-12-31", "quarterly": {"revenue": 1.0}}},
            )
        ],
    )
    assert earnings["quarterly_revenue"].tolist() == [1.0]


@pytest.mark.parametrize("name", [n for n, ep in CATALOG.items() if ep.kind != "listing"])
def test_empty_frames_keep_the_schema(name):
    df = empty_frame(name)
    assert len(df) == 0 and not any(dt == np.dtype(object) for dt in df.dtypes)
    assert list(df.index.names) == (
        ["ticker", "report_period"]
        if CATALOG[name].kind == "search"
        else ["ticker", "time"]
        if CATALOG[name].schema in ("prices", "crypto_prices") or name == "price_snapshot"
        else list(CATALOG[name].index)
    )


def test_unknown_ticker_raises_not_found(ref_client):
    with pytest.raises(NotFoundError, match="ZZZZ"):
        ref_client.balance_sheets("ZZZZ", period="annual")
    ok = ref_client.balance_sheets(["AAPL", "ZZZZ"], period="annual", limit=4, errors="ignore")
    assert ok.index.get_level_values(0).unique().tolist() == ["AAPL"]


def test_missing_required_and_unknown_params(ref_client):
    with pytest.raises(BadRequestError, match="start_date"):
        ref_client.prices("AAPL")
    with pytest.raises(BadRequestError, match="no parameter 'start'"):
        ref_client.prices("AAPL", start="2024-01-01", start_date="2024-01-01", end_date="2024-01-02")


def test_raw_returns_json(ref_client):
    body = ref_client.company_facts("AAPL", raw=True)
    assert body["company_facts"]["ticker"] == "AAPL"
    bodies = ref_client.company_facts(["AAPL", "NVDA"], raw=True)
    assert [b["company_facts"]["ticker"] for b in bodies] == ["AAPL", "NVDA"]


def test_available_lists_every_listing(ref_client):
    for ep in (e for e in CATALOG.values() if e.kind == "listing"):
        values = ref_client.available(ep.name)
        if not ep.response_key:  # a vocabulary document
            assert isinstance(values, dict) and values, ep.name
        elif ep.dataset and ep.dataset.startswith("kpi_"):  # the lake has no KPIs: empty, not an error
            assert values == [], ep.name
        else:
            kind = dict if ep.name == "institutional_holdings_investors" else str
            assert values and all(isinstance(v, kind) for v in values), ep.name
    assert "AAPL" in ref_client.available("prices")


def test_module_functions_use_the_embedded_default():
    df = fdkit.prices("AAPL", start_date="2023-01-03", end_date="2023-01-31")
    assert len(df) == 20 and df["close"].notna().all()


def test_filing_exhibits_frame(ref_client):
    ex = ref_client.filing_exhibits("NVDA", "8-K", 2026)
    assert list(ex.index.names) == ["ticker", "filing_date"]
    assert not any(dt == np.dtype(object) for dt in ex.dtypes)


def test_demo_main_job(tmp_path, monkeypatch):
    from fdkit.cli import main

    monkeypatch.setenv("MPLBACKEND", "Agg")
    assert main(["demo", "--out", str(tmp_path), "--tickers", "AAPL", "NVDA"]) == 0
    assert (tmp_path / "prices.parquet").stat().st_size > 0 and (tmp_path / "performance.png").stat().st_size > 0


def test_demo_says_which_statements_are_too_old_to_show(tmp_path, monkeypatch, capsys):
    from fdkit.cli import main

    monkeypatch.setenv("MPLBACKEND", "Agg")
    assert main(["demo", "--out", str(tmp_path), "--tickers", "AAPL", "MSFT"]) == 0
    out = capsys.readouterr().out
    assert "latest annual statement of MSFT in this service's data is for 2016-06-30" in out
    table = out.split("money in USD bn):", 1)[1]
    assert "AAPL   2025-09-27" in table and "MSFT   2016" not in table  # filed by 2026-03-13, the window's end


def test_a_long_date_range_is_returned_whole(ref_client):
    """One request caps at 5,000 bars; the client continues window by window (no silent truncation, and no
    warning of a truncation that did not happen)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", fdkit.TruncatedWarning)
        df = ref_client.prices("AAPL", start_date="2003-10-30", end_date="2026-02-25")  # the lake's first AAPL bar
    lake = pd.read_parquet(Path(__file__).resolve().parents[1] / "data" / "prices")
    lake = lake[(lake["ticker"].astype(str) == "AAPL") & (lake["time"] < pd.Timestamp("2026-02-26", tz="UTC"))]
    days = df.index.get_level_values("time")
    assert len(df) == len(lake) > 5000 and days.is_unique and days.is_monotonic_increasing
    assert days[-1] == pd.Timestamp("2026-02-25") and days[0] == lake["time"].min().tz_localize(None)
    assert len(ref_client.prices("AAPL", start_date="2003-10-30", end_date="2026-02-25", limit=7)) == 7


def test_a_default_limit_that_leaves_records_out_says_so(ref_client):
    """No silent truncation: the default of 4 periods warns once when more exist; limit=None gives everything."""
    with pytest.warns(fdkit.TruncatedWarning, match=r"default 4 records for AAPL, NVDA.*limit=None") as caught:
        four = ref_client.income_statements(["AAPL", "NVDA"], period="annual")
    assert len([w for w in caught if issubclass(w.category, fdkit.TruncatedWarning)]) == 1
    assert four.groupby(level="ticker", observed=True).size().tolist() == [4, 4]
    everything = ref_client.income_statements(["AAPL", "NVDA"], period="annual", limit=None)
    lake = pd.read_parquet(Path(__file__).resolve().parents[1] / "data" / "income_statements")
    lake = lake[lake["ticker"].isin(["AAPL", "NVDA"]) & (lake["period"] == "annual")]
    assert len(everything) == len(lake) > 8
    with warnings.catch_warnings():
        warnings.simplefilter("error", fdkit.TruncatedWarning)
        ref_client.income_statements("AAPL", period="annual", limit=4)  # asked for: no warning
        ref_client.company_facts("AAPL")  # no limit: nothing to say
        ref_client.filings("AAPL", filing_type="10-K", limit=3)
    with pytest.warns(fdkit.TruncatedWarning, match="maximum of 100 records"):
        ref_client.news("AAPL", limit=None)
    with pytest.warns(fdkit.TruncatedWarning, match=r"financials\(\) returned the default 4"):
        fdkit.financials("AAPL", period="annual", client=ref_client)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(day=st.dates(min_value=date(2009, 1, 1), max_value=date(2026, 6, 30)))
def test_as_of_never_returns_a_row_filed_later(ref_client, day):
    got = ref_client.income_statements(["AAPL", "NVDA"], period="quarterly", limit=None, as_of=day)
    assert (got["filing_date"] <= pd.Timestamp(day)).all()
    lake = pd.read_parquet(Path(__file__).resolve().parents[1] / "data" / "income_statements")
    lake = lake[lake["ticker"].isin(["AAPL", "NVDA"]) & (lake["period"] == "quarterly")]
    assert len(got) == int((lake["filing_date"] <= pd.Timestamp(day)).sum())


def test_as_of_degrades_to_a_client_side_filter():
    from fdkit.client.dispatch import _known_by

    df = pd.DataFrame({"filing_date": pd.to_datetime(["2016-01-27", "2016-04-27", None])})
    assert len(_known_by(df, pd.Timestamp("2016-02-01"))) == 1  # unknown filing date: not known then
    wide = fdkit.financials("AAPL", period="quarterly", limit=None, as_of="2016-06-30")
    assert wide.index.get_level_values("report_period").max() == pd.Timestamp("2016-03-26")


@pytest.mark.parametrize("period", ["annual", "quarterly", "ttm"])
def test_financials_is_the_join_of_the_three_statements(ref_client, period):
    """One /financials request per ticker gives the frame that joining the three statement endpoints gives (the
    income statement's value where a field is in two statements)."""
    tickers = ["AAPL", "NVDA", "A"]
    parts = [
        getattr(ref_client, name)(tickers, period=period, limit=None)
        for name in ("income_statements", "balance_sheets", "cash_flow_statements")
    ]
    joined = parts[0]
    for other in parts[1:]:
        joined = joined.join(other[[c for c in other.columns if c not in joined.columns]], how="outer")
    got = fdkit.financials(tickers, period=period, limit=None, client=ref_client)
    pd.testing.assert_frame_equal(got, joined.sort_index())
    assert got.attrs == parts[0].attrs
