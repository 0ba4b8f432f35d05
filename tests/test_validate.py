"""The lake's invariants: the bundled lake passes every one, and each one bites on a copy corrupted for it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fdkit.lake.io import dataset_schema, default_data_dir, list_datasets, read_dataset, write_dataset
from fdkit.lake.reader import LakeReader
from fdkit.lake.validate import INVARIANTS, format_report, validate

DATA = default_data_dir()


def test_the_bundled_lake_passes_every_invariant():
    results = validate(DATA)
    assert [r.name for r in results] == list(INVARIANTS)
    assert all(r.violations is not None for r in results), "an invariant was skipped on the bundled lake"
    assert all(r.ok for r in results), format_report(results, examples=True)


#: invariants the CLI test runs (the whole set runs in-process above: the CLI's part is its lines and exit codes)
CLI_INVARIANTS = ["volumes_are_counts", "identifiers_present", "inflation_changes_by_date"]


def test_the_cli_reports_one_line_per_invariant_and_fails_on_a_violation(tmp_path):
    fdkit_cli = [sys.executable, "-m", "fdkit.cli", "lake", "validate"]
    ok = subprocess.run([*fdkit_cli, "--only", *CLI_INVARIANTS], capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert [line.split()[2].rstrip(":") for line in ok.stdout.splitlines() if line.startswith("ok ")] == CLI_INVARIANTS
    bad = _corrupt(tmp_path, "prices", _negative_volume)
    bad_cli = [*fdkit_cli, str(bad), "--examples", "--only", *CLI_INVARIANTS]
    out = subprocess.run(bad_cli, capture_output=True, text=True, check=False)
    assert out.returncode == 1
    assert any(line.startswith("FAIL      1  volumes_are_counts") for line in out.stdout.splitlines()), out.stdout
    missing = subprocess.run([*fdkit_cli, str(tmp_path / "nowhere")], capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and "no Parquet lake" in missing.stderr
    typo = subprocess.run([*fdkit_cli, "--only", "volume_are_counts"], capture_output=True, text=True, check=False)
    assert typo.returncode == 2 and "volumes_are_counts" in typo.stderr


def test_a_lake_without_statements_skips_their_invariants(tmp_path):
    root = tmp_path / "lake"
    write_dataset(root, "prices", read_dataset(DATA, "prices").head(500))
    results = {r.name: r for r in validate(root)}
    assert results["volumes_are_counts"].violations == 0
    assert results["balance_sheet_identity"].violations is None
    assert "skip" in format_report(list(results.values()))
    with pytest.raises(KeyError, match="unknown invariants"):
        validate(root, only=["nope"])


# ------------------------------------------------------------------------------------------------------------------
# bite tests: each invariant fails on a copy of the lake corrupted the way it guards against
# ------------------------------------------------------------------------------------------------------------------
def _corrupt(tmp_path: Path, dataset: str, change: Callable[[pd.DataFrame], pd.DataFrame]) -> Path:
    """A lake beside the bundled one: every dataset linked, ``dataset`` rewritten by ``change``."""
    root = tmp_path / "corrupt"
    root.mkdir(exist_ok=True)
    for name in list_datasets(DATA):
        if name != dataset and not (root / name).exists():
            os.symlink(DATA / name, root / name)
    schema = dataset_schema(dataset)
    df = change(LakeReader(DATA).read(dataset, schema=schema).copy())  # a data package's dataset too
    write_dataset(root, dataset, df, schema=schema)
    return root


def _rows(df: pd.DataFrame, ticker: str, period: str | None = None) -> pd.Series:
    mask = df["ticker"].astype(str) == ticker
    if period is not None:
        mask &= df["period"].astype(str) == period
    return mask


def _one(df: pd.DataFrame, ticker: str, period: str, report_period: str) -> int:
    hit = df.index[_rows(df, ticker, period) & (df["report_period"] == pd.Timestamp(report_period))]
    assert len(hit) == 1, (ticker, period, report_period)
    return int(hit[0])


def _milliseconds_in_seconds(p: pd.DataFrame) -> pd.DataFrame:
    stored = p.index[p["time_milliseconds"].notna()]  # (the bundled file stores none: the service computes them)
    row = stored[10] if len(stored) else p.index[10]
    p.loc[row, "time_milliseconds"] = p["time"].astype("datetime64[s, UTC]").astype("int64")[row]  # a unit slip
    return p


def _negative_volume(p: pd.DataFrame) -> pd.DataFrame:
    p.loc[p.index[10], "volume"] = -5
    return p


def _unbalanced(bs):
    bs.loc[_one(bs, "AAPL", "annual", "2023-09-30"), "total_assets"] *= 1.1
    return bs


def _duplicate_row(inc):
    return pd.concat([inc, inc.iloc[[0]]], ignore_index=True)


def _skip_a_quarter(inc):
    return inc.drop(index=_one(inc, "AAPL", "quarterly", "2023-04-01"))


def _mislabel(inc):
    inc.loc[_one(inc, "NVDA", "quarterly", "2023-07-30"), "fiscal_period"] = "FY2024-Q1"  # a Q2
    return inc


def _restated_quarter(inc):
    inc.loc[_one(inc, "AAPL", "quarterly", "2023-04-01"), "revenue"] *= 1.1
    return inc


def _stale_ttm(inc):
    inc.loc[_one(inc, "AAPL", "ttm", "2023-09-30"), "revenue"] += 1e9
    return inc


def _filed_before_period_end(inc):
    i = _one(inc, "AAPL", "annual", "2023-09-30")
    inc.loc[i, "filing_date"] = inc.loc[i, "report_period"] - pd.Timedelta(days=1)
    return inc


def _comparative_filing_date(inc):  # a FY2021 row dated by the FY2023 10-K that restated it
    inc.loc[_one(inc, "AAPL", "annual", "2021-09-25"), "filing_date"] = pd.Timestamp("2023-11-03")
    return inc


def _restated_value_at_the_first_filing_date(inc):  # the 2010 restatement leaking into the FY2009 10-K's row
    inc.loc[_one(inc, "AAPL", "annual", "2009-09-26"), "revenue"] = 42_905_000_000
    return inc


def _eps_as_reported_before_the_split(inc):
    i = _one(inc, "NVDA", "quarterly", "2024-04-28")  # filed 2024-05-29, before the 10-for-1 split
    inc.loc[i, "earnings_per_share_diluted"] *= 10
    inc.loc[i, "earnings_per_share"] *= 10
    return inc


def _shares_as_reported_before_the_split(inc):
    before = _rows(inc, "NVDA", "quarterly") & (inc["filing_date"] < pd.Timestamp("2024-06-10"))
    inc.loc[before, "weighted_average_shares"] /= 10
    return inc


def _fcf_without_capex(cf):
    i = _one(cf, "AAPL", "annual", "2023-09-30")
    cf.loc[i, "capital_expenditure"] = np.nan  # free_cash_flow kept: a silently different formula
    return cf


def _no_cik(inc):
    inc.loc[_one(inc, "AAPL", "annual", "2023-09-30"), "cik"] = pd.NA
    return inc


def _dotted_ticker(cf):
    t = cf["ticker"].astype(str).replace({"BRK-B": "BRK.B"})
    cf["ticker"] = t.astype("category")
    return cf


def _pe_off(fm):
    fm.loc[_one(fm, "AAPL", "annual", "2023-09-30"), "price_to_earnings_ratio"] *= 1.1
    return fm


def _market_cap_off(cf):
    cf.loc[cf["ticker"].astype(str) == "AAPL", "market_cap"] *= 3
    return cf


def _price_spike(p):
    i = p.index[(p["ticker"].astype(str) == "MSFT") & (p["time"] == pd.Timestamp("2023-03-06", tz="UTC"))][0]
    for c in ("open", "high", "low", "close"):
        p.loc[i, c] *= 3
    return p


def _s400_removal_missed(m):
    # the S&P 400 source's own end for Atmos Energy: in the S&P 400 and 500 at once from 2019-02-15
    i = m.index[(m["index"].astype(str) == "sp400") & (m["ticker"].astype(str) == "ATO")][0]
    m.loc[i, "end_date"] = pd.Timestamp("2020-12-28")
    return m


def _cik_by_symbol(m):
    # a spell of CoreSite Realty (to 2021) given the CIK of the company that holds COR today (Cencora's). (Jefferies
    # Group given Leucadia's CIK no longer bites: company facts name that CIK Jefferies Financial Group, today's
    # name, which the spell's name matches as loosely as names are matched)
    i = m.index[m["current_ticker"].astype(str) == "COR_2021"][0]
    m.loc[i, "cik"] = "0001140859"
    m.loc[i, "name"] = "CoreSite Realty"
    return m


def _unadjusted_split(p):
    before = (p["ticker"].astype(str) == "NVDA") & (p["time"] < pd.Timestamp("2021-07-20", tz="UTC"))
    for c in ("open", "high", "low", "close"):
        p.loc[before, c] *= 4
    return p


def _weekend_bar(p):
    i = p.index[(p["ticker"].astype(str) == "MSFT") & (p["time"] == pd.Timestamp("2023-03-06", tz="UTC"))][0]
    p.loc[i, "time"] = pd.Timestamp("2023-03-04", tz="UTC")
    return p


def _value_in_thousands(io):
    i = io.index[
        (io["ticker"].astype(str) == "AAPL")
        & io["put_call"].isna()
        & (io["report_period"] == pd.Timestamp("2022-12-31"))
    ][0]
    io.loc[i, "market_value"] /= 1000
    return io


def _missing_month(inf):
    return inf.drop(index=inf.index[(inf["series"] == "cpi_all_items") & (inf["date"] == pd.Timestamp("2020-06-01"))])


def _joined_labels(seg):
    seg["segment_label"] = seg["segment_label"].astype("string")
    seg.loc[seg.index[0], "segment_label"] = "IPhone;us-gaap:StatementBusinessSegmentsAxis=AmericasMember"
    return seg


def _subtotal_kept(seg):
    row = seg[
        (seg["ticker"].astype(str) == "AAPL")
        & (seg["period"].astype(str) == "annual")
        & (seg["report_period"] == pd.Timestamp("2023-09-30"))
        & (seg["segment_type"].astype(str) == "product")
    ]
    parent = row.iloc[[0]].copy()
    parent["amount"] = row["amount"].sum()
    parent["segment_label"] = "Products"
    parent["item"] = int(seg["item"].max()) + 1
    return pd.concat([seg, parent], ignore_index=True)


def _acceptance_read_as_utc(inc):
    """The mistake of taking EDGAR's ``Z`` at its word for a document in Eastern wall time."""
    inc = inc.copy()
    inc["filing_datetime"] = inc["filing_datetime"].str.replace(r"-0[45]:00$", "+00:00", regex=True)
    return inc


def _subtotal_off(seg):
    seg = seg.copy()
    seg.loc[seg["is_subtotal"].fillna(False).astype(bool), "amount"] *= 1.1
    return seg


def _few(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["ticker"].astype(str).isin(["AAPL", "LEH", "WB"])].copy()


def _adjusted_served_as_close(df: pd.DataFrame) -> pd.DataFrame:
    df = _few(df)
    only = df["basis"].astype(str) == "adjusted_only"
    df.loc[only, "close"] = df.loc[only, "adj_close"]  # the toy-scale mistake: an adjusted close passed as close
    return df


def _two_companies_under_one_symbol(df: pd.DataFrame) -> pd.DataFrame:
    df = _few(df)
    other = df[df["ticker"].astype(str) == "LEH"].assign(ticker="WB")  # another company's history under WB
    return pd.concat([df, other], ignore_index=True)


def _garbage_q4_served(df: pd.DataFrame) -> pd.DataFrame:
    i = _one(df, "WFC", "quarterly", "2015-12-31")  # the source's Q4: FY - Q1..Q3 of mismatched concepts
    df.loc[i, "revenue"] = -51_364_000_000.0
    df.loc[i, "quality"] = pd.NA
    return df


def _zero_revenue_served(df: pd.DataFrame) -> pd.DataFrame:
    """A utility's quarter whose source read no revenue concept, served as 0 (AEP FY2015-Q1: 629m net income)."""
    i = _one(df, "AAPL", "quarterly", "2016-03-26")
    df.loc[i, "revenue"] = 0.0
    return df


def _unmarked_outlier(df: pd.DataFrame) -> pd.DataFrame:
    i = _one(df, "AAPL", "quarterly", "2016-03-26")
    df.loc[i, "revenue"] = df.loc[i, "revenue"] * 10  # another concept's figure, passed through unmarked
    return df


def _accession_of_another_company(df: pd.DataFrame) -> pd.DataFrame:
    """A segment row given a filing of another company (a match across companies)."""
    has = df["accession_number"].notna()
    nvda = df.index[has & (df["ticker"].astype(str) == "NVDA")][0]
    aapl = df.loc[has & (df["ticker"].astype(str) == "AAPL"), "accession_number"].iloc[0]
    df.loc[nvda, "accession_number"] = aapl
    return df


def _dividend_adjusted_close(df: pd.DataFrame) -> pd.DataFrame:
    """The toy-scale mistake: a dividend-adjusted close served as the close (KO 2016: 33.62 for a traded 45.33)."""
    ko = (df["ticker"].astype(str) == "KO") & df["adj_close"].notna()
    df.loc[ko, "close"] = df.loc[ko, "adj_close"] * 0.999
    return df


BITES: dict[str, tuple[str, Callable[[pd.DataFrame], pd.DataFrame]]] = {
    "balance_sheet_identity": ("balance_sheets", _unbalanced),
    "unique_statement_rows": ("income_statements", _duplicate_row),
    "quarters_contiguous": ("income_statements", _skip_a_quarter),
    "fiscal_labels": ("income_statements", _mislabel),
    "quarters_sum_to_year": ("income_statements", _restated_quarter),
    "ttm_is_last_four_quarters": ("income_statements", _stale_ttm),
    "filed_after_period_for_that_period": ("income_statements", _filed_before_period_end),
    "eps_times_shares_is_net_income": ("income_statements", _eps_as_reported_before_the_split),
    "share_counts_on_one_basis": ("income_statements", _shares_as_reported_before_the_split),
    "eps_on_the_split_basis": ("income_statements", _eps_as_reported_before_the_split),
    "statements_are_first_reports": ("income_statements", _restated_value_at_the_first_filing_date),
    "free_cash_flow_formula": ("cash_flow_statements", _fcf_without_capex),
    "identifiers_present": ("income_statements", _no_cik),
    "accessions_name_one_company": ("segmented_financials", _accession_of_another_company),
    "tickers_join_across_datasets": ("company_facts", _dotted_ticker),
    "pe_matches_price_over_eps": ("financial_metrics", _pe_off),
    "market_cap_matches_price_times_shares": ("company_facts", _market_cap_off),
    "daily_moves_explained": ("prices", _price_spike),
    "one_company_per_ticker_and_cik": ("index_membership", _s400_removal_missed),
    "names_match_their_cik": ("index_membership", _cik_by_symbol),
    "splits_applied_to_prices": ("prices", _unadjusted_split),
    "prices_on_one_basis": ("prices", _dividend_adjusted_close),
    "volumes_are_counts": ("prices", _negative_volume),
    "bar_milliseconds_are_their_times": ("prices", _milliseconds_in_seconds),
    "bars_on_trading_days": ("prices", _weekend_bar),
    "institutional_value_near_market_price": ("institutional_ownership", _value_in_thousands),
    "inflation_changes_by_date": ("inflation", _missing_month),
    "segment_labels_clean": ("segmented_revenues", _joined_labels),
    "segment_members_within_revenue": ("segmented_revenues", _subtotal_kept),
    "filing_date_follows_acceptance": ("income_statements", _acceptance_read_as_utc),
    "subtotals_are_their_members_sums": ("segmented_revenues", _subtotal_off),
    "history_says_its_basis": ("price_history", _adjusted_served_as_close),
    "history_one_company_per_ticker_day": ("price_history", _two_companies_under_one_symbol),
    "no_negative_revenue": ("income_statements", _garbage_q4_served),
    "no_zero_revenue_beside_income": ("income_statements", _zero_revenue_served),
    "quarter_revenue_in_band_or_marked": ("income_statements", _unmarked_outlier),
}


#: invariants whose bite test needs more than a corrupted copy of the reference lake, and where it is
ELSEWHERE = {
    # a receiver's lake: its ledger of landed events and a row of one deleted
    "landed_events_in_lake": "tests/test_writer_seam.py::test_validate_names_a_landed_row_that_went_missing",
}


def test_every_invariant_has_a_bite_test():
    assert set(BITES) | set(ELSEWHERE) == set(INVARIANTS) and not set(BITES) & set(ELSEWHERE)
    root = Path(__file__).resolve().parents[1]
    for where in ELSEWHERE.values():
        path, test = where.split("::")
        assert f"def {test}(" in (root / path).read_text(), where


@pytest.mark.parametrize("name", list(BITES))
def test_each_invariant_bites(tmp_path, name):
    dataset, change = BITES[name]
    lake = _corrupt(tmp_path, dataset, change)
    (result,) = validate(lake, only=[name])
    assert result.violations, f"{name} did not notice the corruption of {dataset}"


def test_a_comparative_filing_date_is_caught(tmp_path):
    lake = _corrupt(tmp_path, "income_statements", _comparative_filing_date)
    (result,) = validate(lake, only=["filed_after_period_for_that_period"])
    assert result.violations == 1


def _accession_without_dashes(df: pd.DataFrame) -> pd.DataFrame:
    i = df.index[df["accession_number"].notna()][0]
    df.loc[i, "accession_number"] = str(df.loc[i, "accession_number"]).replace("-", "")
    return df


def test_a_malformed_accession_is_caught(tmp_path):
    lake = _corrupt(tmp_path, "segmented_financials", _accession_without_dashes)
    (result,) = validate(lake, only=["accessions_name_one_company"])
    assert result.violations == 1
    assert result.examples["problem"].tolist() == ["not 10-2-6 digits"]


def _spin_off_forgotten(df: pd.DataFrame) -> pd.DataFrame:
    return df[~((df["ticker"].astype(str) == "HLT") & (pd.to_datetime(df["date"]) == pd.Timestamp("2017-01-04")))]


def _split_forgotten(p: pd.DataFrame) -> pd.DataFrame:
    # HLT's bars before its 1-for-3 as the crawl printed them (the split table's row gone from the prices)
    before = (p["ticker"].astype(str) == "HLT") & (p["time"] < pd.Timestamp("2017-01-04", tz="UTC"))
    for c in ("open", "high", "low", "close"):
        p.loc[before, c] /= 3
    return p


@pytest.mark.parametrize(("dataset", "change"), [("dividends", _spin_off_forgotten), ("prices", _split_forgotten)])
def test_a_move_without_its_corporate_action_is_caught(tmp_path, dataset, change):
    """HLT's -29% of 2017-01-04 is explained by its spin-offs only; without them, or without its split, it is not."""
    lake = _corrupt(tmp_path, dataset, change)
    (result,) = validate(lake, only=["daily_moves_explained"])
    assert result.violations == 1
    assert result.examples["ticker"].tolist() == ["HLT"]
