"""The CPI release's twelve series and the labour releases (issue 30, item 5): lake, events, receiver, service.

Values are checked against the raw files in ``../shared`` parsed here with fresh code, never against the lake alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
import requests

import fdkit.server
from fdkit.lake.io import default_data_dir, read_dataset
from fdkit.webhooks import create_receiver, events_from_lake, make_event, parse_event, sign
from fdkit.webhooks.events import example_payload

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
REGISTRY = ROOT / "sources" / "registry" / "cpi_release_series.csv.gz"
needs_shared = pytest.mark.skipif(
    not (SHARED / "data-real" / "SOURCES.md").exists(), reason="../shared/data-real is not beside this clone"
)
DATA = default_data_dir()
TWELVE = {
    "cpi_all_items",
    "cpi_core",
    "cpi_food",
    "cpi_food_at_home",
    "cpi_food_away_from_home",
    "cpi_energy",
    "cpi_energy_commodities",
    "cpi_gasoline",
    "cpi_energy_services",
    "cpi_commodities_less_food_energy",
    "cpi_services_less_energy",
    "cpi_shelter",
}
SECRET = "whsec_test_labour"


def _fred(series_id: str) -> pd.Series:
    raw = pd.read_csv(SHARED / "data-real-2" / "macro" / "fred_us_macro_long_1980_2025.csv.gz")
    one = raw[raw["series_id"] == series_id]
    return pd.Series(one["value"].to_numpy(float), index=pd.to_datetime(one["date"])).dropna()


def _lake(name: str, series: str) -> pd.DataFrame:
    df = read_dataset(DATA, name)
    return df[df["series"].astype(str) == series].set_index("date")


def test_the_lake_holds_the_twelve_series_of_the_cpi_release():
    inf = read_dataset(DATA, "inflation")
    assert set(inf["series"].astype(str)) == TWELVE
    recent = inf[inf["date"].between("2024-01-01", "2026-08-01")]
    per_month = recent.groupby("date")["series"].nunique()
    # all twelve every month but October 2025 (the shutdown): BLS published only gasoline (from non-survey data)
    assert per_month.drop(pd.Timestamp("2025-10-01")).eq(12).all() and len(per_month) == 32
    assert set(recent.loc[recent["date"] == "2025-10-01", "series"].astype(str)) == {"cpi_gasoline"}
    # the changes are the values' own, by date
    gas = _lake("inflation", "cpi_gasoline")["value"]
    assert _lake("inflation", "cpi_gasoline").loc["2025-06-01", "change_12m_pct"] == pytest.approx(
        (gas["2025-06-01"] / gas["2024-06-01"] - 1) * 100, abs=1e-6
    )


@needs_shared
def test_cpi_values_agree_with_independent_files():
    raw = pd.read_csv(SHARED / "data-real" / "macro" / "us_cpi_monthly_1913_2026.csv")
    bls = pd.Series(raw["Index"].to_numpy(float), index=pd.to_datetime(raw["Date"])).dropna()
    lake = _lake("inflation", "cpi_all_items")["value"]
    common = bls.index.intersection(lake.index)
    assert len(common) >= 1360 and (lake[common] == bls[common]).all()
    core, fred = _lake("inflation", "cpi_core")["value"], _fred("CPILFESL")
    common = fred.index.intersection(core.index)
    assert len(common) >= 540
    ratio = (core[common] / fred[common] - 1).abs()
    assert ratio.max() < 5e-4 and (ratio[common < pd.Timestamp("2021-01-01")] == 0).all()


def test_inflation_events_carry_the_twelve_series():
    (ev,) = [
        parse_event(e) for e in events_from_lake(DATA, since="2024-10-01", until="2024-10-01", datasets=["inflation"])
    ]
    assert ev.payload["date"] == "2024-10-01"
    assert {r["series"] for r in ev.payload["inflation"]} == TWELVE
    assert all({"value", "change_1m_pct", "change_12m_pct"} <= set(r) for r in ev.payload["inflation"])


@needs_shared
def test_labour_changes_from_a_year_earlier_agree_with_fred():
    payrolls, raw = _lake("labor", "nonfarm_payrolls"), _fred("PAYEMS")
    day = pd.Timestamp("2023-12-01")
    assert raw[day] == 156_930  # the figure SOURCES.md quotes
    year = raw[day] - raw[pd.Timestamp("2022-12-01")]
    assert payrolls.loc[day, "change_year"] == pytest.approx(year)
    assert payrolls.loc[day, "change_year_pct"] == pytest.approx(year / raw[pd.Timestamp("2022-12-01")] * 100)
    claims, icsa = _lake("labor", "initial_jobless_claims"), _fred("ICSA")
    week = pd.Timestamp("2024-11-02")
    assert claims.loc[week, "change_year"] == pytest.approx(icsa[week] - icsa[week - pd.Timedelta(weeks=52)])
    # a series measured in percent changes in points, never in percent
    rate = _lake("labor", "unemployment_rate")
    assert rate["change_year"].notna().sum() > 500 and rate["change_year_pct"].isna().all()
    # a missing month (October 2025) gives missing changes against it, never a change against another month
    assert np.isnan(rate.loc["2025-11-01", "change"]) and "2025-10-01" not in rate.index


def test_labour_events_are_the_three_releases():
    evs = [parse_event(e) for e in events_from_lake(DATA, since="2024-01-01", until="2024-12-31", datasets=["labor"])]
    releases = {e.payload["release"] for e in evs}
    assert releases == {"jobs_report", "job_openings", "jobless_claims"}
    jobs = next(e for e in evs if e.payload["release"] == "jobs_report" and e.payload["date"] == "2024-06-01")
    assert {r["series"] for r in jobs.payload["labor"]} == {
        "nonfarm_payrolls",
        "unemployment_rate",
        "u6_unemployment_rate",
        "labor_force_participation_rate",
        "average_hourly_earnings",
    }
    assert all({"value", "change", "change_year", "change_year_pct"} <= set(r) for r in jobs.payload["labor"])
    assert sum(e.payload["release"] == "jobless_claims" for e in evs) == 52  # weekly, dated the week covered


def test_the_receiver_keeps_every_entry_of_a_claims_release_and_the_service_serves_them(tmp_path):
    lake = tmp_path / "lake"
    event = make_event("labor", example_payload("labor"), livemode=True, created=1730721600)
    with fdkit.server.serve_app(create_receiver(lake, SECRET)) as rx:
        body = orjson.dumps(event)
        headers = {"X-FDS-Signature": sign(SECRET, body), "Content-Type": "application/json"}
        r = requests.post(rx.base_url + "/hook", data=body, timeout=10, headers=headers)
        assert r.status_code == 200, r.text
    landed = read_dataset(lake, "labor").set_index("series")
    assert set(landed.index) == {"continued_claims", "initial_jobless_claims", "insured_unemployment_rate"}
    assert landed.loc["continued_claims", "date"] == pd.Timestamp("2024-10-26")  # a week before the release's date
    assert landed.loc["continued_claims", "change_year"] == 66000.0
    with fdkit.server.start(lake) as srv:
        r = requests.get(
            srv.base_url + "/macro/labor",
            params={"series": "continued_claims"},
            headers={"X-API-KEY": srv.api_key},
            timeout=10,
        )
        assert r.status_code == 200, r.text
        (row,) = r.json()["labor"]
        assert row["value"] == 1892000.0 and row["date"] == "2024-10-26" and row["change_year_pct"] == 3.614458
