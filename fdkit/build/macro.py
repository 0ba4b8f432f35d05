"""Macro series: policy rates (Fed, ECB), the Treasury par yield curve, CPI inflation and labour-market series."""

from __future__ import annotations

import pandas as pd

from fdkit.build.common import R2
from fdkit.build.stage import Context, Provenance, Stage, dataset

FED_TARGET = "data-real/rates/fred_DFEDTAR_fed_funds_target_1982_2008.csv"
FED_UPPER = "data-real/rates/fred_DFEDTARU_fed_funds_target_upper_2008_2025.csv"
ECB_RATES = "data-real/rates/ecb_key_interest_rates_daily_1999_2024.csv"
YIELD_CURVE = "data-real/rates/us_treasury_par_yield_curve_daily_2021_2023.csv"
CPI = "data-real/macro/us_cpi_monthly_1913_2026.csv"
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
#: Treasury column -> yield_curve tenor
_TENORS = {"1 Mo": "1_month", "2 Mo": "2_month", "3 Mo": "3_month", "4 Mo": "4_month", "6 Mo": "6_month",
           "1 Yr": "1_year", "2 Yr": "2_year", "3 Yr": "3_year", "5 Yr": "5_year", "7 Yr": "7_year",
           "10 Yr": "10_year", "20 Yr": "20_year", "30 Yr": "30_year"}  # fmt: skip


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
    fed = pd.concat([point.rename(columns={"DFEDTAR": "rate"}),
                     upper.assign(rate=upper["DFEDTARU"] - 0.125)[["date", "rate"]]])  # fmt: skip
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


def fred_series(fred: pd.DataFrame, series_id: str) -> pd.DataFrame:
    """One FRED series as ``date``, ``value``.

    Args:
        fred: the long FRED file (``series_id``, ``date``, ``value``).
        series_id: the series.

    Returns:
        Its observations by date.
    """
    return fred[fred["series_id"] == series_id][["date", "value"]].sort_values("date").reset_index(drop=True)


def build_inflation(cpi: pd.DataFrame, core: pd.DataFrame) -> pd.DataFrame:
    """CPI (all items, 1913-2026) and core CPI (FRED CPILFESL, 1980-2025) with their changes.

    Changes are computed by date, so a missing month gives a missing change, never a change against the wrong
    month.

    Args:
        cpi: the CPI file (``Date``, ``Index``).
        core: core CPI (``date``, ``value``).

    Returns:
        ``series``, ``date``, ``value``, ``change_1m_pct``, ``change_12m_pct`` (percent).
    """
    cpi = cpi.rename(columns={"Date": "date", "Index": "value"})[["date", "value"]]
    rows = []
    for name, df in (("cpi_all_items", cpi), ("cpi_core", core)):
        df = df.dropna(subset=["value"]).sort_values("date")
        level = df.set_index("date")["value"].astype(float)
        v = df["value"].astype(float).to_numpy()
        prev_m = level.reindex(df["date"] - pd.DateOffset(months=1)).to_numpy()
        prev_y = level.reindex(df["date"] - pd.DateOffset(years=1)).to_numpy()
        rows.append(pd.DataFrame({"series": name, "date": df["date"].to_numpy(), "value": v,
                                  "change_1m_pct": (v / prev_m - 1) * 100,
                                  "change_12m_pct": (v / prev_y - 1) * 100}))  # fmt: skip
    out = pd.concat(rows, ignore_index=True)
    out[["change_1m_pct", "change_12m_pct"]] = out[["change_1m_pct", "change_12m_pct"]].round(6)
    return out


def build_labor(fred: pd.DataFrame) -> pd.DataFrame:
    """Labour-market series (FRED/BLS): value and change from the previous observation (missing if absent).

    Args:
        fred: the long FRED file.

    Returns:
        ``series``, ``date``, ``value``, ``change`` (a month earlier; claims: a week).
    """
    fred = fred[fred["series_id"].isin(list(LABOR_SERIES))]
    parts = []
    for sid, g in fred.groupby("series_id", sort=True):
        g = g.sort_values("date")
        step = pd.DateOffset(weeks=1) if sid == "ICSA" else pd.DateOffset(months=1)
        level = g.set_index("date")["value"]
        prev = level.reindex(g["date"] - step).to_numpy()
        value = g["value"].to_numpy()
        parts.append(pd.DataFrame({"series": LABOR_SERIES[str(sid)], "date": g["date"].to_numpy(), "value": value,
                                   "change": value - prev}))  # fmt: skip
    out = pd.concat(parts, ignore_index=True).dropna(subset=["value"])
    out["change"] = out["change"].round(6)
    return out.sort_values(["series", "date"]).reset_index(drop=True)


def _read_dated(ctx: Context, rel: str, column: str = "date") -> pd.DataFrame:
    return pd.read_csv(ctx.source(rel), parse_dates=[column])


def _rates(ctx: Context) -> dict[str, pd.DataFrame]:
    point, upper, ecb = (_read_dated(ctx, p) for p in (FED_TARGET, FED_UPPER, ECB_RATES))
    return {"interest_rates": build_rates(point, upper, ecb)}


def _yield_curve(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"yield_curve": build_yield_curve(_read_dated(ctx, YIELD_CURVE, "Date"))}


def _inflation(ctx: Context) -> dict[str, pd.DataFrame]:
    core = fred_series(_read_dated(ctx, FRED), "CPILFESL")
    return {"inflation": build_inflation(_read_dated(ctx, CPI, "Date"), core)}


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
    f"macro/us_cpi_monthly_1913_2026.csv (cpi_all_items), {R2}macro/fred_us_macro_long_1980_2025.csv.gz "
    "(CPILFESL: cpi_core 1980-2025)",
    "BLS via ODC-PDDL-1.0 repository; BLS via FRED, public domain",
    "index level, change_1m_pct and change_12m_pct (percent), computed by date: a missing month "
    "(October 2025) gives missing changes against it, never a change against the wrong month. Two series "
    "of the CPI release's twelve are in the sources, so an inflation event carries two entries",
)

_PROVENANCE_LABOR = Provenance(
    f"{R2}macro/fred_us_macro_long_1980_2025.csv.gz (PAYEMS, UNRATE, U6RATE, CIVPART, AHETPI, JTSJOL, ICSA)",
    "BLS / US Department of Labor via FRED, public domain",
    "the FRED vintage of 2026-01-02 (not real-time vintages); change = value - the value a month (claims: a "
    "week) earlier, by date: missing where that observation is missing (October 2025, shutdown)",
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
    "CPI and core CPI with their 1-month and 12-month changes",
    _inflation,
    sources=(CPI, FRED),
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
