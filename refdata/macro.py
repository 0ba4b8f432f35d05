"""Macro series: policy rates (Fed, ECB), the Treasury par yield curve, the CPI release and labour-market series."""

from __future__ import annotations

import numpy as np
import pandas as pd

from refdata.common import R2
from refdata.stage import Context, Provenance, Stage, dataset

FED_TARGET = "data-real/rates/fred_DFEDTAR_fed_funds_target_1982_2008.csv"
FED_UPPER = "data-real/rates/fred_DFEDTARU_fed_funds_target_upper_2008_2025.csv"
ECB_RATES = "data-real/rates/ecb_key_interest_rates_daily_1999_2024.csv"
YIELD_CURVE = "data-real/rates/us_treasury_par_yield_curve_daily_2021_2023.csv"
CPI_RELEASE = "registry/cpi_release_series.csv.gz"
FRED = "data-real-2/macro/fred_us_macro_long_1980_2025.csv.gz"

#: FRED/BLS labour-market series served by /macro/labor (series id -> lake series name)
LABOR_SERIES = {
    "PAYEMS": "nonfarm_payrolls",
    "UNRATE": "unemployment_rate",
    "U6RATE": "u6_unemployment_rate",
    "CIVPART": "labor_force_participation_rate",
    "AHETPI": "average_hourly_earnings",
    "JTSJOL": "job_openings",
    "ICSA": "initial_jobless_claims",
}
#: BLS series id -> the lake's inflation series: the twelve series of the CPI release's summary table (CPI-U, U.S.
#: city average; all items not seasonally adjusted, the others seasonally adjusted), as the registry extract holds
#: them (scripts/extract_registry_data.py)
CPI_SERIES = {
    "CUUR0000SA0": "cpi_all_items",
    "CUSR0000SA0L1E": "cpi_core",
    "CUSR0000SAF1": "cpi_food",
    "CUSR0000SAF11": "cpi_food_at_home",
    "CUSR0000SEFV": "cpi_food_away_from_home",
    "CUSR0000SA0E": "cpi_energy",
    "CUSR0000SACE": "cpi_energy_commodities",
    "CUSR0000SETB01": "cpi_gasoline",
    "CUSR0000SEHF": "cpi_energy_services",
    "CUSR0000SACL1E": "cpi_commodities_less_food_energy",
    "CUSR0000SASLE": "cpi_services_less_energy",
    "CUSR0000SAH1": "cpi_shelter",
}
#: Treasury column -> yield_curve tenor
_TENORS = {
    "1 Mo": "1_month",
    "2 Mo": "2_month",
    "3 Mo": "3_month",
    "4 Mo": "4_month",
    "6 Mo": "6_month",
    "1 Yr": "1_year",
    "2 Yr": "2_year",
    "3 Yr": "3_year",
    "5 Yr": "5_year",
    "7 Yr": "7_year",
    "10 Yr": "10_year",
    "20 Yr": "20_year",
    "30 Yr": "30_year",
}


def _changes(df: pd.DataFrame, col: str) -> pd.DataFrame:
    """The rows where ``col`` differs from the row before (by date)."""
    df = df.dropna(subset=[col]).sort_values("date")
    return df[df[col].ne(df[col].shift())]


def build_rates(point: pd.DataFrame, upper: pd.DataFrame, ecb: pd.DataFrame) -> pd.DataFrame:
    """Policy-rate changes: FED (target, then the target-range midpoint from 2008-12-16) and ECB (MRO).

    Args:
        point: FRED DFEDTAR (``date``, ``DFEDTAR``).
        upper: FRED DFEDTARU (``date``, ``DFEDTARU``).
        ecb: the ECB's key rates (``date``, ``ecb_mro_rate``).

    Returns:
        ``bank``, ``date``, ``name``, ``rate``: one row per change.

    Example:
        >>> day = pd.to_datetime
        >>> point = pd.DataFrame({"date": day(["2008-01-01", "2008-01-02"]), "DFEDTAR": [4.25, 4.25]})
        >>> upper = pd.DataFrame({"date": day(["2008-12-16"]), "DFEDTARU": [0.25]})
        >>> ecb = pd.DataFrame({"date": day(["2008-01-01"]), "ecb_mro_rate": [4.0]})
        >>> build_rates(point, upper, ecb)[["bank", "rate"]].values.tolist()
        [['ECB', 4.0], ['FED', 4.25], ['FED', 0.125]]
    """
    fed = pd.concat(
        [point.rename(columns={"DFEDTAR": "rate"}), upper.assign(rate=upper["DFEDTARU"] - 0.125)[["date", "rate"]]]
    )
    fed = _changes(fed, "rate").assign(bank="FED", name="Federal Funds Target Rate (range midpoint from 2008-12-16)")
    ecb = _changes(ecb.rename(columns={"ecb_mro_rate": "rate"}), "rate")
    ecb = ecb.assign(bank="ECB", name="ECB Main Refinancing Operations Rate")
    out = pd.concat([fed, ecb])[["bank", "date", "name", "rate"]]
    return out.sort_values(["bank", "date"]).reset_index(drop=True)


def build_yield_curve(df: pd.DataFrame) -> pd.DataFrame:
    """The Treasury's daily par yield curve, tenors named as the schema names them.

    Args:
        df: the Treasury file (``Date``, ``1 Mo`` ... ``30 Yr``).

    Returns:
        ``date`` and one column per tenor, by date.
    """
    return df.rename(columns={"Date": "date", **_TENORS}).sort_values("date").reset_index(drop=True)


def values_before(obs: pd.DataFrame, offset: pd.DateOffset) -> np.ndarray:
    """The value observed ``offset`` before each observation's date (NaN where that observation is missing).

    A change taken against it is never one against the wrong period (a gap gives a missing change).

    Args:
        obs: one series' observations (``date``, ``value``), no date twice.
        offset: how far back.

    Returns:
        One float per row of ``obs``.

    Example:
        >>> obs = pd.DataFrame({"date": pd.to_datetime(["2024-01-01", "2024-03-01"]), "value": [1.0, 3.0]})
        >>> values_before(obs, pd.DateOffset(months=2)).tolist(), values_before(obs, pd.DateOffset(months=1)).tolist()
        ([nan, 1.0], [nan, nan])
    """
    level = obs.set_index("date")["value"].astype(float)
    return level.reindex(obs["date"] - offset).to_numpy(dtype=float)


def build_inflation(release: pd.DataFrame) -> pd.DataFrame:
    """The CPI release's twelve series with their changes from a month and a year earlier.

    Changes are computed by date, so a missing month gives a missing change, never a change against the wrong
    month.

    Args:
        release: the registry extract (``series_id``, ``date``, ``value``; see :data:`CPI_SERIES`).

    Returns:
        ``series``, ``date``, ``value``, ``change_1m_pct``, ``change_12m_pct`` (percent).

    Example:
        >>> months = pd.date_range("2023-01-01", periods=13, freq="MS")
        >>> release = pd.DataFrame({"series_id": "CUSR0000SAH1", "date": months, "value": [100.0] * 12 + [104.0]})
        >>> last = build_inflation(release).iloc[-1]
        >>> last["series"], last[["change_1m_pct", "change_12m_pct"]].astype(float).tolist()
        ('cpi_shelter', [4.0, 4.0])
    """
    rows = []
    for sid, df in release[release["series_id"].isin(list(CPI_SERIES))].groupby("series_id", sort=True):
        df = df.dropna(subset=["value"]).sort_values("date")
        v = df["value"].astype(float).to_numpy()
        prev_m, prev_y = (values_before(df, pd.DateOffset(months=n)) for n in (1, 12))
        rows.append(
            pd.DataFrame(
                {
                    "series": CPI_SERIES[str(sid)],
                    "date": df["date"].to_numpy(),
                    "value": v,
                    "change_1m_pct": (v / prev_m - 1) * 100,
                    "change_12m_pct": (v / prev_y - 1) * 100,
                }
            )
        )
    out = pd.concat(rows, ignore_index=True)
    out[["change_1m_pct", "change_12m_pct"]] = out[["change_1m_pct", "change_12m_pct"]].round(6)
    return out.sort_values(["series", "date"]).reset_index(drop=True)


#: labour series measured in percent: their change from a year earlier is in points, never in percent
PERCENT_SERIES = frozenset(
    {"unemployment_rate", "u6_unemployment_rate", "labor_force_participation_rate", "insured_unemployment_rate"}
)


def build_labor(fred: pd.DataFrame) -> pd.DataFrame:
    """Labour-market series (FRED/BLS) with their changes from the prior period and from a year earlier.

    Each change is taken against the observation of that date (a month or a week earlier; a year: twelve months or
    52 weeks), so a missing observation gives a missing change, never one against the wrong period.

    Args:
        fred: the long FRED file (``series_id``, ``date``, ``value``).

    Returns:
        ``series``, ``date``, ``value``, ``change`` (from the prior month; claims: week), ``change_year`` (from a
        year earlier) and ``change_year_pct`` (that change in percent; missing for series measured in percent).

    Example:
        >>> months = pd.date_range("2023-01-01", periods=13, freq="MS")
        >>> fred = pd.DataFrame({"series_id": "PAYEMS", "date": months, "value": [100.0] * 12 + [103.0]})
        >>> build_labor(fred).iloc[-1][["change", "change_year", "change_year_pct"]].astype(float).tolist()
        [3.0, 3.0, 3.0]
    """
    fred = fred[fred["series_id"].isin(list(LABOR_SERIES))]
    parts = []
    for sid, g in fred.groupby("series_id", sort=True):
        g = g.dropna(subset=["value"]).sort_values("date")
        weekly = sid == "ICSA"
        step, year = (
            (pd.DateOffset(weeks=1), pd.DateOffset(weeks=52))
            if weekly
            else (pd.DateOffset(months=1), pd.DateOffset(months=12))
        )
        value = g["value"].to_numpy(dtype=float)
        prev, a_year_ago = values_before(g, step), values_before(g, year)
        name = LABOR_SERIES[str(sid)]
        pct = (value / a_year_ago - 1) * 100 if name not in PERCENT_SERIES else float("nan")
        parts.append(
            pd.DataFrame(
                {
                    "series": name,
                    "date": g["date"].to_numpy(),
                    "value": value,
                    "change": value - prev,
                    "change_year": value - a_year_ago,
                    "change_year_pct": pct,
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    changes = ["change", "change_year", "change_year_pct"]
    out[changes] = out[changes].round(6)
    return out.sort_values(["series", "date"]).reset_index(drop=True)


def _read_dated(ctx: Context, rel: str, column: str = "date") -> pd.DataFrame:
    return pd.read_csv(ctx.source(rel), parse_dates=[column])


def _rates(ctx: Context) -> dict[str, pd.DataFrame]:
    point, upper, ecb = (_read_dated(ctx, p) for p in (FED_TARGET, FED_UPPER, ECB_RATES))
    return {"interest_rates": build_rates(point, upper, ecb)}


def _yield_curve(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"yield_curve": build_yield_curve(_read_dated(ctx, YIELD_CURVE, "Date"))}


def _inflation(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"inflation": build_inflation(_read_dated(ctx, CPI_RELEASE))}


def _labor(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"labor": build_labor(_read_dated(ctx, FRED))}


_PROVENANCE_RATES = Provenance(
    "rates/fred_DFEDTAR_*.csv, rates/fred_DFEDTARU_*.csv, rates/ecb_key_interest_rates_daily_1999_2024.csv",
    "FRED (Fed Board H.15, public domain; repository MIT); ECB data",
    "one row per change; FED = target until 2008-12-15, then the midpoint of the 25 bp target range "
    "(upper - 0.125); ECB = main refinancing operations rate",
)

_PROVENANCE_YIELD_CURVE = Provenance(
    "rates/us_treasury_par_yield_curve_daily_2021_2023.csv",
    "US Treasury, public domain",
    "daily par curve; 4-month tenor from 2022-10-19",
)

_PROVENANCE_INFLATION = Provenance(
    "registry/cpi_release_series.csv.gz (the repository's sources/registry/: the twelve CPI-U series of the BLS "
    "CPI release's summary table extracted from the PyPI package cpi 2.1.0's cpi.db by "
    "scripts/extract_registry_data.py)",
    "BLS CPI database, public domain; the cpi package (palewire/cpi), MIT licence",
    "cpi_all_items (not seasonally adjusted, 1913-), cpi_core (all items less food and energy) and cpi_food, "
    "cpi_food_at_home, cpi_food_away_from_home, cpi_energy, cpi_energy_commodities, cpi_gasoline, "
    "cpi_energy_services, cpi_commodities_less_food_energy, cpi_services_less_energy, cpi_shelter (seasonally "
    "adjusted, as BLS revises them: February 2026 factors) to 2026-08; index level, change_1m_pct and "
    "change_12m_pct (percent), computed by date: a missing month (October 2025, shutdown) gives missing changes "
    "against it, never a change against the wrong month. Checked against independent files in tests: all items "
    "equals data-real's BLS CPI-U file on all 1,360 common months; core is within 0.05% of FRED's CPILFESL "
    "(data-real-2, vintage 2026-01-02; equal before 2021, the months BLS's later seasonal factors revise)",
)

_PROVENANCE_LABOR = Provenance(
    f"{R2}macro/fred_us_macro_long_1980_2025.csv.gz (PAYEMS, UNRATE, U6RATE, CIVPART, AHETPI, JTSJOL, ICSA)",
    "BLS / US Department of Labor via FRED, public domain",
    "the FRED vintage of 2026-01-02 (not real-time vintages); change = value - the value a month (claims: a "
    "week) earlier, change_year = value - the value twelve months (claims: 52 weeks) earlier, change_year_pct = "
    "that change in percent (missing for the three series measured in percent), each by date: missing where that "
    "observation is missing (October 2025, shutdown). Releases: jobs_report (payrolls, both unemployment rates, "
    "participation, hourly earnings), job_openings (JOLTS), jobless_claims (initial claims; continued claims and "
    "the insured unemployment rate, which the release dates a week earlier, are not in the sources: a landed "
    "event's entries for them are kept and served)",
)

INTEREST_RATES = Stage(
    "interest_rates",
    "Policy-rate changes of the Fed and the ECB",
    _rates,
    sources=(FED_TARGET, FED_UPPER, ECB_RATES),
    outputs=(dataset("interest_rates", _PROVENANCE_RATES),),
)

YIELD_CURVE_STAGE = Stage(
    "yield_curve",
    "The Treasury's daily par yield curve",
    _yield_curve,
    sources=(YIELD_CURVE,),
    outputs=(dataset("yield_curve", _PROVENANCE_YIELD_CURVE),),
)

INFLATION = Stage(
    "inflation",
    "The CPI release's twelve series with their 1-month and 12-month changes",
    _inflation,
    sources=(CPI_RELEASE,),
    outputs=(dataset("inflation", _PROVENANCE_INFLATION),),
)

LABOR = Stage(
    "labor",
    "Labour-market series (FRED/BLS) with their changes",
    _labor,
    sources=(FRED,),
    outputs=(dataset("labor", _PROVENANCE_LABOR),),
)

STAGES = (INTEREST_RATES, YIELD_CURVE_STAGE, INFLATION, LABOR)
