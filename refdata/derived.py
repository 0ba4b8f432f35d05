"""Derived datasets: financial metrics (ratios), the service's own estimates and the earnings records.

Nothing here is read from a source file: each is computed from the statement table (and prices) by a documented
formula.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdkit.catalog.schema import EARNINGS_DERIVED, EARNINGS_DIMENSION, EARNINGS_MARGINS, METRIC_FIELDS, SCHEMAS
from fdkit.research.ratios import compute_ratios
from refdata.common import SEC_PD
from refdata.earnings_dates import CITATION, release_dates
from refdata.earnings_signals import earnings_signals
from refdata.filings import acceptance_times, filing_window, iso_times
from refdata.stage import Context, Provenance, Stage, dataset


def build_metrics(all_statements: pd.DataFrame, daily: pd.DataFrame) -> pd.DataFrame:
    """The statement header and the ratios of :func:`fdkit.research.ratios.compute_ratios` for every statement row.

    Args:
        all_statements: the statement table.
        daily: the daily bars (valuation at the last close on or before the report period).

    Returns:
        The ``financial_metrics`` rows.
    """
    prices = daily[["ticker", "time", "close"]]
    ratios = compute_ratios(all_statements, prices, growth=True)
    head = all_statements[
        [c for c in SCHEMAS["financial_metrics"] if c in all_statements.columns and c not in METRIC_FIELDS]
    ]
    return pd.concat([head, ratios[[c for c in METRIC_FIELDS if c in ratios.columns]]], axis=1)


def build_estimates(all_statements: pd.DataFrame) -> pd.DataFrame:
    """The service's own estimates, method ``trend-3y``.

    Next two fiscal years (annual) / next four quarters (quarterly), each the last value grown at the compound
    growth rate of the last three years (quarterly: same quarter a year earlier), rate clipped to [-50%, +100%] a
    year.

    Args:
        all_statements: the statement table.

    Returns:
        The ``analyst_estimates`` rows.
    """
    rows = []
    for (ticker, period), g in all_statements[all_statements["period"].isin(["annual", "quarterly"])].groupby(
        ["ticker", "period"], sort=True
    ):
        g = g.sort_values("report_period").dropna(subset=["revenue"])
        lag = 3 if period == "annual" else 12
        if len(g) <= lag:
            continue
        # the rows ``lag`` back must be three years back (not an earlier era's report across a gap of years)
        span = (g["report_period"].iloc[-1] - g["report_period"].iloc[-1 - lag]).days
        if not 3 * 365 - 60 <= span <= 3 * 365 + 60:
            continue
        horizon = 2 if period == "annual" else 4
        step = pd.DateOffset(years=1) if period == "annual" else pd.DateOffset(months=3)
        for h in range(1, horizon + 1):
            rec = {
                "ticker": ticker,
                "period": period,
                "method": "trend-3y",
                "fiscal_period": g["report_period"].iloc[-1] + step * h,
            }
            for field in ("revenue", "earnings_per_share"):
                base_pos = len(g) - 1 - ((4 - h) % 4 if period == "quarterly" else 0)
                last, earlier = g[field].iloc[base_pos], g[field].iloc[base_pos - lag]
                years = 3
                if last and earlier and last > 0 and earlier > 0:
                    rate = float(np.clip((last / earlier) ** (1 / years) - 1, -0.5, 1.0))
                else:
                    rate = 0.0
                periods_ahead = h if period == "annual" else (h + 3) // 4
                rec[field] = float(last * (1 + rate) ** periods_ahead) if last == last else np.nan
            rows.append(rec)
    return pd.DataFrame(rows)


def _change(now: pd.Series, before: pd.Series) -> pd.Series:
    """(now - before) / |before|: the sign says the direction even when the base is negative; missing at 0."""
    base = before.abs().where(before != 0)
    return (now - before) / base


def _earlier(df: pd.DataFrame, days: int, slack: int, filed: pd.Series | None = None) -> pd.DataFrame:
    """For each row, the same ticker's row whose report period ended ``days`` (+/- ``slack``) before it.

    With ``filed`` (each row's filing date), point in time: a row filed after the one it is compared with is no
    match (its values were not known then).
    """
    left = df.reset_index()[["ticker", "report_period"]].assign(
        _want=lambda d: d["report_period"] - pd.Timedelta(days=days)
    )
    right = df.reset_index().rename(columns={"report_period": "_rp"})
    found = pd.merge_asof(
        left.sort_values("_want"),
        right.sort_values("_rp"),
        left_on="_want",
        right_on="_rp",
        by="ticker",
        direction="nearest",
        tolerance=pd.Timedelta(days=slack),
    )
    found = found.set_index(["ticker", "report_period"]).reindex(df.index)
    if filed is not None:
        then = pd.Series(filed.to_numpy(), index=df.index)
        earlier_filed = then.reindex(pd.MultiIndex.from_arrays([found.index.get_level_values(0), found["_rp"]]))
        late = earlier_filed.to_numpy() > then.to_numpy()
        found.loc[late, [c for c in found.columns if c != "_rp"]] = np.nan
    return found.drop(columns=["_rp", "_want"], errors="ignore")


def earnings_derived(frame: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """The 2026 record's derived figures of one payload (``quarterly`` or ``annual``), matched by date.

    A quarterly change is against the quarter ending about three months before, a year-over-year one against
    about a year before (a missing quarter gives a missing change, never one against the wrong quarter); the
    annual payload (trailing twelve months) changes against the year before.
    """
    cur = frame[[c for c in frame.columns if c.startswith(prefix + "_")]].rename(columns=lambda c: c[len(prefix) + 1 :])
    filed = frame["filing_date"] if "filing_date" in frame.columns else None
    prev = _earlier(cur, 91 if prefix == "quarterly" else 365, 20, filed)
    year = _earlier(cur, 365, 20, filed)
    out = pd.DataFrame(index=cur.index)
    for m, base in EARNINGS_MARGINS.items():
        cur[m] = cur[base] / cur["revenue"].where(cur["revenue"] != 0)
        prev[m] = prev[base] / prev["revenue"].where(prev["revenue"] != 0)
        year[m] = year[base] / year["revenue"].where(year["revenue"] != 0)
    for f in EARNINGS_DERIVED[prefix]:
        if f in EARNINGS_MARGINS:
            out[f] = cur[f]
        elif f.endswith(("_chg_bps", "_chg_pct")):
            m, ref = f.split("_chg_")[0].removesuffix("_yoy"), year if "_yoy_" in f else prev
            out[f] = (cur[m] - ref[m]) * 10_000 if f.endswith("bps") else _change(cur[m], ref[m])
        elif f.endswith("_yoy_chg"):
            x = f.removesuffix("_yoy_chg")
            out[f] = _change(cur[x], year[x])
        elif f.endswith("_chg"):
            x = f.removesuffix("_chg")
            out[f] = _change(cur[x], prev[x])
        elif f == "revenue_surprise_pct":
            out[f] = cur["revenue"] / cur["estimated_revenue"] - 1
        elif f == "eps_surprise_pct":
            out[f] = _change(cur["earnings_per_share"], cur["estimated_earnings_per_share"])
    for kind in ("revenue", "eps"):
        pct = out[f"{kind}_surprise_pct"]
        conditions, labels = [pct > 0, pct < 0, pct == 0], ["BEAT", "MISS", "MEET"]
        out[f"{kind}_surprise"] = np.select(conditions, labels, default=None)  # type: ignore[call-overload]
    return out.add_prefix(prefix + "_")


def build_earnings(
    all_statements: pd.DataFrame, index: pd.DataFrame, releases: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One record per quarterly report: the quarter's figures and the trailing-twelve-month figures.

    With the derived figures of the 2026 record and, where the SEC submissions index has it, the acceptance time
    (with its offset).

    Args:
        all_statements: the statement table.
        index: the submissions index.
        releases: 8-K Item 2.02 dates (``ticker``, ``earnings_date``): each report's ``release_date``.

    Returns:
        The ``earnings`` rows.
    """
    q = all_statements[all_statements["period"] == "quarterly"].set_index(["ticker", "report_period"])
    ttm = all_statements[all_statements["period"] == "ttm"].set_index(["ticker", "report_period"])
    nan = pd.Series(np.nan, index=q.index)
    out = pd.DataFrame(
        {
            **{f"quarterly_{d}": q[d] if d in q.columns else nan for d in EARNINGS_DIMENSION},
            **{f"annual_{d}": ttm[d].reindex(q.index) if d in ttm.columns else nan for d in EARNINGS_DIMENSION},
        },
        index=q.index,
    )
    out["fiscal_period"] = q["fiscal_period"]
    out["currency"] = q["currency"]
    out["source_type"] = q["form_type"].str.replace("/A", "", regex=False)
    out["filing_date"] = q["filing_date"]
    out["accession_number"] = q["accession_number"]
    out["filing_url"] = q["filing_url"]
    out = out.join(earnings_derived(out, "quarterly")).join(earnings_derived(out, "annual"))
    stamp = acceptance_times(out["accession_number"], index)
    out["filing_datetime"] = iso_times(stamp)
    out["filing_window"] = filing_window(stamp)
    capex = out[["quarterly_capital_expenditure"]].rename(columns=lambda c: c.removeprefix("quarterly_"))
    year_ago = _earlier(capex, 365, 20, out["filing_date"])["capital_expenditure"].to_numpy()
    out = out.reset_index()
    fired = [
        earnings_signals({**{str(k): v for k, v in r.items()}, "capex_year_ago": ya})
        for r, ya in zip(out.to_dict("records"), year_ago, strict=True)
    ]
    out["signals"] = pd.Series(fired, index=out.index, dtype=object)
    if releases is not None:
        out["release_date"] = release_dates(out, releases)
        out["release_datetime"] = iso_times(release_times(out, index))
    return out


def release_times(rows: pd.DataFrame, index: pd.DataFrame) -> pd.Series:
    """The acceptance time (Eastern) of the 8-K with Item 2.02 that each row's ``release_date`` names.

    Where the SEC submissions index has the company (its 8-Ks, their items and acceptance times): Apple's releases
    are accepted around 16:30, after the close, so prices react the next session. Missing elsewhere.

    Args:
        rows: earnings rows (``ticker``, ``release_date``).
        index: the submissions index (``ticker``, ``form``, ``filingDate``, ``items``, ``accessionNumber``).

    Returns:
        One Eastern-Time timestamp per row (NaT where unknown).
    """
    none = pd.Series(pd.NaT, index=rows.index, dtype=pd.DatetimeTZDtype("ns", "America/New_York"))
    if not len(index) or not {"items", "form", "filingDate", "accessionNumber"} <= set(index.columns):
        return none
    k = index[(index["form"] == "8-K") & index["items"].astype(str).str.contains("2.02", regex=False)]
    k = k.assign(day=pd.to_datetime(k["filingDate"])).drop_duplicates(["ticker", "day"], keep=False)
    keys = pd.DataFrame(
        {
            "ticker": rows["ticker"].astype(str).to_numpy(),
            "day": pd.to_datetime(rows["release_date"]).to_numpy(),
            "_row": np.arange(len(rows)),
        }
    )
    m = keys.merge(k[["ticker", "day", "accessionNumber"]], on=["ticker", "day"], how="inner")
    if m.empty:
        return none
    at = acceptance_times(m["accessionNumber"], index)
    out = none.copy()
    out.iloc[m["_row"].to_numpy()] = at.to_numpy()
    return out


def _metrics(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"financial_metrics": build_metrics(ctx["statements"], ctx["prices"])}


def _estimates(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"analyst_estimates": build_estimates(ctx["statements"])}


def _earnings(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"earnings": build_earnings(ctx["statements"], ctx["filings_index"], ctx["earnings_dates"])}


_PROVENANCE_METRICS = Provenance(
    "the three statement datasets + prices",
    SEC_PD + "; prices as below",
    "fdkit.research.ratios.compute_ratios (the same code as df.fds.ratios); valuation at the last close on or "
    "before the report period",
)

_PROVENANCE_ESTIMATES = Provenance(
    "the statement datasets",
    SEC_PD,
    "the service's own model, method 'trend-3y' (see refdata/derived.py:build_estimates)",
)

_PROVENANCE_EARNINGS = Provenance(
    "the statement datasets; release dates from " + CITATION,
    SEC_PD,
    "one record per quarterly report: the quarter and the TTM figures; estimates not filled (no consensus "
    "estimates in the sources). Changes against the previous quarter and the same fiscal quarter a year "
    "earlier (report period 91 / 365 days before, +/- 20), POINT IN TIME: the earlier row as first reported and "
    "only if filed on or before this one. signals: the document's growth and margin signals from the quarter's "
    "year-over-year changes (refdata/earnings_signals.py: revenue 10%/20%, net income, EPS and capex "
    "spending 15%/30%, a margin 100 bps; importance HIGH strong tier, MEDIUM lower tier, LOW margin; at most 8), "
    "omitted where none fires. accession_number as the statement's; filing_url = the statement's (the EDGAR "
    "filing index, else the EDGAR list of the company's filings of that form up to the filing day). release_date (an "
    "fdkit extension) = the latest 8-K Item 2.02 date after the period ended and on or before the report was "
    "filed: the day the results were announced (no time of day: a release after the close moves prices the next "
    "session)",
    "release dates exist only for tickers of today's S&P 500 (the source's survivorship); checked against the "
    "SEC submissions of AAPL, MSFT, NVDA and TSLA (every source date in their overlap is an 8-K with Item 2.02)",
)

FINANCIAL_METRICS = Stage(
    "financial_metrics",
    "Ratios of every statement row (fdkit.research.ratios)",
    _metrics,
    needs=("statements", "prices"),
    outputs=(dataset("financial_metrics", _PROVENANCE_METRICS),),
)

ANALYST_ESTIMATES = Stage(
    "analyst_estimates",
    "The service's own estimates (method trend-3y)",
    _estimates,
    needs=("statements",),
    outputs=(dataset("analyst_estimates", _PROVENANCE_ESTIMATES),),
)

EARNINGS = Stage(
    "earnings",
    "One earnings record per quarterly report, with derived figures and acceptance times",
    _earnings,
    needs=("statements", "filings_index", "earnings_dates"),
    outputs=(dataset("earnings", _PROVENANCE_EARNINGS),),
)

STAGES = (FINANCIAL_METRICS, ANALYST_ESTIMATES, EARNINGS)
