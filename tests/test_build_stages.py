"""The reference-data build as stages: the driver's contract, the registry, and the simple stages on tiny fixtures.

The fixtures (tests/fixtures/build/) have the layout of ../shared/data-real*, a few rows per file. Tests that run
stages on the real sources skip when ../shared is not beside this clone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdkit.lake.io import dataset_schema, default_data_dir, list_datasets, read_dataset
from refdata import crypto, distributions, filings, macro, news, pipeline, prices, sp500_bars, splits, universe
from refdata.driver import check, missing_sources, order, run_stage, run_stages
from refdata.stage import Context, Provenance, Stage, StageError, dataset, intermediate
from refdata.statements import derive_fields, with_usd_amounts

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "build" / "data-real"
ROOTS = pipeline.source_roots(FIXTURE)
SHARED = ROOT.parent / "shared" / "data-real"
needs_shared = pytest.mark.skipif(
    not (SHARED / "SOURCES.md").exists(), reason="../shared/data-real is not beside this clone"
)
DATA = default_data_dir()


# ------------------------------------------------------------------------------------------------------------------
# the driver
# ------------------------------------------------------------------------------------------------------------------
def _make(name: str, *, needs: tuple[str, ...] = (), produces: tuple[str, ...] = (), returns=None, log=None) -> Stage:
    def run(ctx: Context) -> dict[str, pd.DataFrame]:
        if log is not None:
            log.append(name)
        for n in needs:
            ctx[n]
        if returns is not None:
            return returns
        return {p: pd.DataFrame({"stage": [name]}) for p in produces}

    return Stage(name, f"stage {name}", run, needs=needs, outputs=tuple(intermediate(p) for p in produces))


def test_stages_run_after_what_they_need_and_ties_keep_registration_order():
    log: list[str] = []
    stages = [
        _make("report", needs=("table", "prices"), produces=("report",), log=log),
        _make("table", needs=("facts",), produces=("table",), log=log),
        _make("prices", produces=("prices",), log=log),
        _make("facts", produces=("facts",), log=log),
        _make("other", produces=("other",), log=log),
    ]
    assert [s.name for s in order(stages)] == ["prices", "facts", "table", "report", "other"]
    results = run_stages(stages, {})
    assert log == ["prices", "facts", "table", "report", "other"]
    assert sorted(results) == ["facts", "other", "prices", "report", "table"]
    assert [s.name for s in order(list(reversed(stages)))] == ["other", "facts", "prices", "table", "report"]


def test_the_driver_refuses_an_undeclared_output():
    sneaky = _make("sneaky", produces=("a",), returns={"a": pd.DataFrame(), "b": pd.DataFrame()})
    with pytest.raises(StageError, match=r"stage 'sneaky' produced undeclared \['b'\]"):
        run_stages([sneaky], {})


def test_the_driver_refuses_a_missing_output_and_a_non_frame():
    with pytest.raises(StageError, match=r"did not produce its declared \['b'\]"):
        run_stage(_make("s", produces=("a", "b"), returns={"a": pd.DataFrame()}), {}, {})
    with pytest.raises(StageError, match="produced 'a' as list, not a DataFrame"):
        run_stage(_make("s", produces=("a",), returns={"a": [1, 2]}), {}, {})


def test_the_driver_refuses_a_need_no_stage_produces():
    with pytest.raises(StageError, match="stage 'b' needs 'nowhere', which no stage produces"):
        order([_make("a", produces=("x",)), _make("b", needs=("x", "nowhere"), produces=("y",))])
    with pytest.raises(StageError, match=r"needs \['x'\], which no earlier stage produced"):
        run_stage(_make("b", needs=("x",), produces=("y",)), {}, {})


def test_the_driver_refuses_circles_and_doubled_names():
    with pytest.raises(StageError, match="go round in a circle"):
        order([_make("a", needs=("y",), produces=("x",)), _make("b", needs=("x",), produces=("y",))])
    with pytest.raises(StageError, match="'x' is produced by both 'a' and 'b'"):
        check([_make("a", produces=("x",)), _make("b", produces=("x",))])
    with pytest.raises(StageError, match="two stages are named 'a'"):
        check([_make("a", produces=("x",)), _make("a", produces=("y",))])


def test_a_stage_reads_only_what_it_declares(tmp_path):
    (tmp_path / "data-real").mkdir()
    (tmp_path / "data-real" / "a.csv").write_text("x\n1\n")
    roots = {"data-real": tmp_path / "data-real"}

    def peek(ctx: Context) -> dict[str, pd.DataFrame]:
        ctx.source("data-real/b.csv")
        return {}

    with pytest.raises(StageError, match="reads 'data-real/b.csv' without declaring it in sources"):
        run_stage(Stage("peek", "t", peek, sources=("data-real/a.csv",)), roots, {})

    def grab(ctx: Context) -> dict[str, pd.DataFrame]:
        ctx["secret"]
        return {}

    with pytest.raises(StageError, match="reads 'secret' without declaring it in needs"):
        run_stage(Stage("grab", "t", grab), roots, {"secret": pd.DataFrame()})
    missing = Stage("m", "t", peek, sources=("data-real/a.csv", "data-real/b.csv", "data-real-9/c.csv"))
    assert missing_sources([missing], roots) == ["m: data-real/b.csv", "m: data-real-9/c.csv"]


def test_a_stage_gets_a_copy_of_its_inputs():
    def scribble(ctx: Context) -> dict[str, pd.DataFrame]:
        df = ctx["a"]
        df["x"] = 0
        return {"b": df}

    a = pd.DataFrame({"x": [1, 2]})
    stage = Stage("scribble", "t", scribble, needs=("a",), outputs=(intermediate("b"),))
    assert run_stage(stage, {}, {"a": a})["b"]["x"].tolist() == [0, 0]
    assert a["x"].tolist() == [1, 2]


def test_the_pipeline_refuses_to_start_without_its_source_files(tmp_path):
    with pytest.raises(StageError, match="source files missing: .*xbrl_facts: data-real/fundamentals/sec_companyfacts"):
        pipeline.build(FIXTURE, tmp_path / "lake")
    assert not (tmp_path / "lake").exists()


# ------------------------------------------------------------------------------------------------------------------
# the registry
# ------------------------------------------------------------------------------------------------------------------
def test_every_registered_stage_fits_and_every_dataset_has_provenance():
    ordered = order(pipeline.STAGES)
    lake = [o for s in ordered for o in s.lake_outputs]
    assert all(isinstance(o.provenance, Provenance) and o.provenance.sources and o.provenance.licence for o in lake)
    assert all(o.typed is not None for o in lake if o.schema is None)
    for s in ordered:
        assert s.title and all(
            src.split("/", 1)[0].startswith("data-real") or src.startswith("registry/") for src in s.sources
        ), s.name
    assert sorted(o.name for o in lake) == sorted(list_datasets(DATA))


def test_build_modules_stay_small():
    for path in sorted((ROOT / "refdata").glob("*.py")):
        text = path.read_text()
        assert len(text.splitlines()) <= 500, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef):
                assert node.end_lineno - node.lineno < 80, (path.name, node.name)


# ------------------------------------------------------------------------------------------------------------------
# simple stages on the fixture
# ------------------------------------------------------------------------------------------------------------------
def test_macro_stages():
    out = run_stages(macro.STAGES, ROOTS)
    rates = out["interest_rates"]
    assert rates[["bank", "rate"]].values.tolist() == [
        ["ECB", 3.0],
        ["ECB", 2.5],
        ["FED", 1.0],
        ["FED", 0.125],
        ["FED", 0.375],
    ]
    assert pd.api.types.is_datetime64_dtype(rates["date"])
    curve = out["yield_curve"]
    assert curve["date"].is_monotonic_increasing and curve.loc[0, "10_year"] == 0.93
    assert curve["4_month"].isna().all()
    cpi = out["inflation"].set_index(["series", "date"])
    year = cpi.loc[("cpi_all_items", pd.Timestamp("2021-01-01")), "change_12m_pct"]
    assert year == pytest.approx(9 / 101 * 100, abs=1e-6)
    # June 2020 is missing: July has no 1-month change (never one against May)
    assert np.isnan(cpi.loc[("cpi_all_items", pd.Timestamp("2020-07-01")), "change_1m_pct"])
    assert cpi.loc[("cpi_core", pd.Timestamp("2024-02-01")), "change_1m_pct"] == 0.5
    labor = out["labor"].set_index(["series", "date"])["change"]
    assert labor[("nonfarm_payrolls", pd.Timestamp("2025-09-01"))] == 100
    assert np.isnan(labor[("nonfarm_payrolls", pd.Timestamp("2025-11-01"))])  # October missing
    assert labor[("initial_jobless_claims", pd.Timestamp("2025-01-11"))] == 6000
    assert set(out["labor"]["series"]) == {"nonfarm_payrolls", "initial_jobless_claims"}


def test_news_stage():
    df = run_stages(news.STAGES, ROOTS)["news"]
    assert df.columns.tolist() == ["ticker", "date", "title", "url", "source", "author", "sentiment"]
    assert df[["ticker", "date"]].values.tolist() == [
        ["AAPL", "2024-01-26"],
        ["AAPL", "2024-01-25"],
        ["MSFT", "2024-09-22"],
    ]
    assert df["source"].tolist() == ["nasdaq.com", "nasdaq.com", "insidermonkey.com"]


def test_crypto_stage():
    out = run_stages(crypto.STAGES, ROOTS)
    daily = out["crypto_prices"]
    assert daily["time"].dt.strftime("%Y-%m-%d").tolist() == ["2020-12-31", "2021-01-01", "2021-01-02"]
    assert daily["close"].tolist() == [29001.7, 29374.2, 32127.3]  # the newer file wins where both have a day
    assert str(daily["time"].dt.tz) == "UTC"
    assert out["crypto_prices_minute"]["ticker"].tolist() == ["BTC-USD", "ETH-USD"]


def test_constituents_and_filings_stages():
    out = run_stages([*universe.STAGES, filings.FILINGS], ROOTS)
    members = out["members"]
    assert members.set_index("ticker")["cik"].to_dict() == {
        "MMM": "0000066740",
        "BRK-B": "0001067983",
        "AAPL": "0000320193",
    }
    spy = out["index_funds"]
    assert spy["ticker"].tolist() == ["AAPL", "BRK-B", "MMM"] and spy["weight"].isna().all()
    f = out["filings"]
    assert f["filing_type"].tolist() == ["10-K", "8-K"]  # newest first
    assert f["url"].iloc[0] == "https://www.sec.gov/Archives/edgar/data/320193/000032019323000106/aapl-20230930.htm"
    assert out["filings_index"]["acceptanceDateTime"].notna().all()


def test_prices_main_rebases_the_old_bars():
    out = run_stages([prices.PRICES_MAIN], ROOTS)
    daily, factors = out["prices_main_2023"], out["price_factors"]
    aaa = daily[daily["ticker"] == "AAA"]
    # as traded: the old bars over the later 2-for-1 split (the overlap's volume ratio), dividends never in them;
    # adj_close: the adjusted file's on common days, before them the old adjusted close x the overlap's ratio (0.5)
    assert aaa["close"].tolist() == [5.0, 5.0, 5.0, 6.0] and set(aaa["basis"]) == {"as_traded"}
    assert aaa["adj_close"].tolist() == [4.5, 4.5, 4.5, 5.4]
    assert aaa["volume"].tolist() == [200, 200, 200, 240] and str(aaa["volume"].dtype) == "Int64"
    spy_factors, aaa_factors = factors[factors["ticker"] == "SPY"], factors[factors["ticker"] == "AAA"]
    assert aaa_factors.drop(columns="dividends_after").to_dict("records") == [
        {"ticker": "AAA", "price_factor": 0.5, "split_factor": 2, "overlap_days": 2}
    ]
    assert aaa_factors["dividends_after"].iloc[0] == pytest.approx(0.1)  # the adjusted file carries 10% more
    # ETFs: ^VIX and the file's last (incomplete) session are left out; SPY as traded from LEAN's raw bar
    spy = daily[daily["ticker"] == "SPY"]
    assert spy["time"].dt.strftime("%Y-%m-%d").tolist() == ["2021-01-04"] and "^VIX" not in set(daily["ticker"])
    assert spy[["close", "adj_close"]].values.tolist() == [[368.79, 343.3]] and spy_factors["overlap_days"].item() == 1


def _pystock_bars() -> pd.DataFrame:
    days = pd.to_datetime(["2016-05-31", "2016-06-01", "2016-06-02", "2016-06-03"])
    return pd.DataFrame(
        {
            "ticker": ["BBB"] * 4 + ["DDD"] * 3 + ["ZZZ"],
            "date": [*days, *days[:3], days[0]],
            "close": [30.0, 30.0, 10.0, 10.0, 100.0, 50.0, 51.0, 5.0],
            "adj_close": [30.0, 30.0, 10.0, 10.0, 50.0, 50.0, 51.0, 2.5],
        }
    )


def test_splits_and_dividends_stages():
    stage = run_stages([prices.PRICES_MAIN], ROOTS)
    main = stage["prices_main_2023"]
    first, last = pd.Timestamp("2015-01-01"), pd.Timestamp("2017-12-31")
    owners = pd.DataFrame(
        {
            "symbol": ["BBB", "DDD"],
            "ticker": ["BBB", "DDD"],
            "how": "index spell",
            "start": first,
            "end": last,
            "listed_first": first,
            "listed_last": last,
        }
    )
    inputs = {"prices_main_2023": main, "pystock_prices": _pystock_bars(), "pystock_owners": owners}
    table = run_stage(splits.SPLITS, ROOTS, inputs)["splits"]
    assert table.columns.tolist() == ["ticker", "date", "ratio", "source"]
    rows = table.assign(date=table["date"].dt.strftime("%Y-%m-%d")).values.tolist()
    after = "split table (coffee-cpu; ex-date = the trading day after the distribution date)"
    assert rows == [
        # a share split of the S&P 500 source that no other source has (its spin-off factor, GGG's, is no split)
        ["AAA", "2021-03-02", 2.0, "data-real-6 yfinance dump (clates/dividend-analysis), split file"],
        ["BBB", "2016-06-02", 3.0, after],  # distribution date -> the next trading day
        ["CCC", "2010-01-05", 2.0, "LEAN factor file"],
        ["DDD", "2016-06-01", 2.0, after],  # the close pairs say so too: the table wins
        # the note states the first split-adjusted session, which is the table's own date: not a day later
        ["FFF", "2016-06-02", 2.0, "split table (coffee-cpu; ex-date stated in its note)"],
    ]  # ZZZ is not a member: its close pairs are not read
    # the lake's prices: EEE (a long-history name: its dividends are the adjusted close's steps) and BBB, DDD
    # (pystock raw closes: their distributions come from the eve of each ex-date); SPY's from LEAN's factor file
    bars = _pystock_bars()
    lake = pd.concat(
        [
            main[["ticker", "time", "close"]],
            bars.assign(time=bars["date"].dt.tz_localize("UTC"))[["ticker", "time", "close"]],
        ]
    )
    lake = lake.assign(basis="as_traded")
    sp500 = run_stage(sp500_bars.SP500_BARS, ROOTS, {"splits": table})
    identity = prices.sp500_identity(lake, sp500["sp500_bars"])
    assert identity.set_index("ticker")["same"].to_dict() == {"AAA": True, "GGG": True}
    inputs = {
        "splits": table,
        "prices": lake,
        "prices_main": main,
        "pystock_prices": bars,
        "old_daily": stage["old_daily"],
        "sp500_distributions": sp500["sp500_distributions"],
        "sp500_identity_all": identity,
    }
    dividends = run_stage(distributions.DIVIDENDS, ROOTS, inputs)["dividends"]
    # AAA's after the 2003-2023 file ends, and GGG's spin-off (the eve's close x (1 - 1/1.253)) from the source
    assert dividends[["ticker", "dividend", "kind", "in_prices"]].values.tolist() == [
        ["AAA", 0.1, "cash", False],
        ["EEE", 0.4, "cash", False],
        ["GGG", 2.53, "special_or_in_kind", False],
        ["SPY", 3.8, "cash", False],
    ]
    assert dividends["date"].dt.strftime("%Y-%m-%d").tolist() == [
        "2021-03-03",
        "2021-02-25",
        "2021-03-02",
        "2021-02-26",
    ]
    # DDD's eve (2016-05-31: 100 beside 50) is its 2-for-1 split of the table, no distribution; BBB has none


def test_simple_stages_write_a_typed_lake(tmp_path):
    stages = [*macro.STAGES, *news.STAGES, *crypto.STAGES, *universe.STAGES, filings.FILINGS]
    written = pipeline.build(FIXTURE, tmp_path, stages=stages, docs=False)
    assert sorted(written) == sorted(list_datasets(tmp_path))
    news_ = read_dataset(tmp_path, "news")
    assert str(news_["date"].dtype) == "datetime64[ns]" and isinstance(news_["ticker"].dtype, pd.CategoricalDtype)
    assert str(read_dataset(tmp_path, "index_funds")["as_of"].dtype) == "datetime64[ns]"
    assert not (tmp_path / "SOURCES.md").exists()


def test_derived_statement_fields():
    rows = pd.DataFrame(
        {
            "revenue": [100.0, 50.0],
            "cost_of_revenue": [60.0, np.nan],
            "net_cash_flow_from_operations": [30.0, 20.0],
            "capex_payments": [10.0, np.nan],
            "net_income": [5.0, 4.0],
            "currency": ["USD", "EUR"],
        }
    )
    out = derive_fields(rows.copy())
    assert out["gross_profit"].tolist()[0] == 40.0 and np.isnan(out["gross_profit"].tolist()[1])
    assert out["free_cash_flow"].tolist()[0] == 20.0 and np.isnan(out["free_cash_flow"].tolist()[1])
    assert out["capital_expenditure"].tolist()[0] == -10.0
    usd = with_usd_amounts(out.assign(ebit=1.0, earnings_per_share=1.0))
    assert usd["revenue_usd"].tolist()[0] == 100.0 and np.isnan(usd["revenue_usd"].tolist()[1])


# ------------------------------------------------------------------------------------------------------------------
# stages on the real sources: each reproduces its committed dataset
# ------------------------------------------------------------------------------------------------------------------
CHEAP = [*macro.STAGES, *news.STAGES, *crypto.STAGES, *universe.STAGES, filings.FILINGS]


@needs_shared
@pytest.mark.parametrize("stage", CHEAP, ids=lambda s: s.name)
def test_a_stage_on_the_real_sources_reproduces_the_lake(stage, tmp_path):
    results = run_stage(stage, pipeline.source_roots(SHARED), {})
    written = pipeline.write_lake(tmp_path, [stage], results)
    for name, df in written.items():
        expected = read_dataset(DATA, name, schema=dataset_schema(name))
        pd.testing.assert_frame_equal(df, expected, check_exact=True)


def test_a_dataset_output_defaults_to_its_own_schema():
    assert dataset("news", Provenance("s", "l", "m")).schema == "news"
    assert dataset("prices_minute", Provenance("s", "l", "m"), schema="prices").schema == "prices"


def test_split_ex_dates_are_the_ones_the_split_table_notes_state():
    """Where the real split table's note states the first split-adjusted session, the lake's ex-date is that day."""
    stated = {
        "TSLA": [("2020-08-31", 5.0), ("2022-08-25", 3.0)],
        "NVDA": [("2021-07-20", 4.0), ("2024-06-10", 10.0)],
        "AAPL": [("2020-08-31", 4.0)],
        "V": [("2015-03-19", 4.0)],
    }
    lake = read_dataset(default_data_dir(), "splits")
    for ticker, events in stated.items():
        mine = lake[(lake["ticker"].astype(str) == ticker) & (lake["date"] >= "2015-01-01")]
        assert list(zip(mine["date"].dt.strftime("%Y-%m-%d"), mine["ratio"], strict=True)) == events, ticker


def test_a_vintage_is_a_restatement_or_a_concept_switch_against_the_report_before_it():
    """Revenues 100 (2019), then SalesRevenueNet 100 (2020: a switch, no new value), then SalesRevenueNet 105
    (2021): the 2021 change restates the 2020 report's concept; a switch with a new value is a concept_switch."""
    from refdata.vintages import build_vintages

    def fact(concept: str, val: float, filed: str, accn: str) -> dict:
        return {
            "ticker": "X",
            "concept": concept,
            "start": pd.Timestamp("2018-01-01"),
            "end": pd.Timestamp("2018-12-31"),
            "val": val,
            "filed": pd.Timestamp(filed),
            "accn": accn,
            "form": "10-K",
        }

    none = pd.DataFrame(
        columns=["ticker", "period", "report_period", "field", "value", "filing_date", "accession_number", "form_type"]
    )
    facts = pd.DataFrame(
        [
            fact("Revenues", 100, "2019-02-01", "a"),
            fact("SalesRevenueNet", 100, "2020-02-01", "b"),
            fact("SalesRevenueNet", 105, "2021-02-01", "c"),
        ]
    )
    v = build_vintages(facts, none)
    assert v[["value", "revision"]].values.tolist() == [[100.0, "first"], [105.0, "restated"]]
    facts.loc[1, "val"] = 101.0  # the switch brings a new value
    v = build_vintages(facts, none)
    assert v["revision"].tolist() == ["first", "concept_switch", "restated"]


def test_a_missing_split_is_no_spin_off():
    """A close that halves while the adjusted close does not is a 2-for-1 the split table lacks: no distribution
    is made of it (the move invariant then names it); a 30% drop is one."""
    days = pd.bdate_range("2016-12-01", periods=41)
    base = 80 + np.sin(np.arange(41))
    adj = pd.DataFrame({"symbol": "X", "date": days, "close": base})
    none = pd.DataFrame({"ticker": [], "date": pd.to_datetime([])})
    for factor, found in ((0.5, 0), (0.7, 1)):
        lake = pd.DataFrame(
            {
                "ticker": "X",
                "time": days.tz_localize("UTC"),
                "close": np.where(np.arange(41) >= 21, base * factor, base),
            }
        )
        assert len(distributions.stooq_distributions(lake, adj, none)) == found
