"""Sanity rules for statement values: a value that fails one is served as missing, its reason recorded.

The sources pass garbage through (issue: a Q4 computed as FY - Q1..Q3 where the source read different concepts for
the year and the quarters, one share class's EPS beside another's). Each rule here looks at one class of failure,
sets the failing values to missing and says why in the row's ``quality`` column (``"; "``-joined notes, missing
when the row is clean). Values that are *derived* rather than reported (weighted shares from net income / EPS) are
named there too, so a user can tell a reported number from a computed one.

Rules run in order (:data:`RULES`); a Q4 derived from a rejected value of its fiscal year is rejected after them.
Adding a rule is one function of ``(rows, context) -> notes`` registered in :data:`RULES`.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"ticker": ["X"] * 5, "period": ["quarterly"] * 4 + ["annual"],
    ...     "fiscal_period": ["FY2016-Q1", "FY2016-Q2", "FY2016-Q3", "FY2016-Q4", "FY2016"],
    ...     "report_period": pd.to_datetime(["2016-03-31", "2016-06-30", "2016-09-30", "2016-12-31", "2016-12-31"]),
    ...     "revenue": [10.0, 11.0, 12.0, -2.0, 31.0], "net_income": [1.0, 1.0, 1.0, 1.0, 4.0],
    ...     "earnings_per_share": [0.1, 0.1, 0.1, 0.1, 0.4]})
    >>> out = screen_statements(rows)
    >>> out["revenue"].tolist()[3]
    nan
    >>> out["quality"].tolist()[3].split("; ")
    ['revenue: negative (-2) in the source, served missing', 'weighted_average_shares: derived as net income / EPS']
    >>> out["weighted_average_shares"].tolist()
    [10.0, 10.0, 10.0, 10.0, 10.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from fdkit.frames.neighbours import neighbour_median

#: a quarter whose revenue is this far from the median of its ticker's neighbouring quarters is no quarter's revenue
REJECT_BAND = (0.2, 5.0)
#: ... and this far is kept but marked (seasonal businesses reach 3x: a holiday quarter)
MARK_BAND = (0.5, 2.0)
#: a fiscal year's revenue this far from four times its quarters' median is another concept's
ANNUAL_BAND = (0.5, 2.0)
#: the largest earnings yield (annualised EPS / price) taken for real: above it the EPS is another share class's
#: or another unit's (a price-to-earnings ratio under 1)
MAX_EARNINGS_YIELD = 1.0
#: EPS smaller than this (in absolute value) gives no share count (a cent of rounding is over 5% of it)
MIN_EPS_FOR_SHARES = 0.10
#: a derived share count this far from the median of the ticker's counts around it is dropped
SHARE_BAND = (0.8, 1.25)

Notes = dict[Any, list[str]]
Rule = Callable[[pd.DataFrame, pd.DataFrame | None], Notes]


def _fmt(x: float) -> str:
    return f"{x / 1e9:,.2f}bn" if abs(x) >= 1e8 else f"{x:,.4g}"


def negative_revenue(rows: pd.DataFrame, prices: pd.DataFrame | None = None) -> Notes:
    """Revenue below zero: no company sells a negative amount (a Q4 differenced from mismatched concepts).

    Args:
        rows: statement rows (``revenue``); values failing are set to missing in place.
        prices: unused.

    Returns:
        Row label -> notes.

    Example:
        >>> df = pd.DataFrame({"revenue": [5.0, -1.0]})
        >>> negative_revenue(df), df["revenue"].tolist()
        ({1: ['revenue: negative (-1) in the source, served missing']}, [5.0, nan])
    """
    bad = rows.index[rows["revenue"] < 0]
    notes = {i: [f"revenue: negative ({_fmt(float(rows['revenue'][i]))}) in the source, served missing"] for i in bad}
    rows.loc[bad, "revenue"] = np.nan
    return notes


def zero_revenue_beside_income(rows: pd.DataFrame, prices: pd.DataFrame | None = None) -> Notes:
    """Revenue of exactly zero beside a net income that is not: the source read no revenue concept.

    A utility's or a bank's revenue under a concept of its own (AEP FY2015 Q1-Q3, CBSH, SCG) is not a company that
    sold nothing.

    Args:
        rows: statement rows (``revenue``, ``net_income``); values failing are set to missing in place.
        prices: unused.

    Returns:
        Row label -> notes.

    Example:
        >>> df = pd.DataFrame({"revenue": [5.0, 0.0, 0.0], "net_income": [1.0, 6.29e8, 0.0]})
        >>> notes = zero_revenue_beside_income(df)
        >>> notes[1]
        ['revenue: 0 in the source beside a net income of 0.63bn (no revenue concept read), served missing']
        >>> df["revenue"].tolist()
        [5.0, nan, 0.0]
    """
    if "net_income" not in rows.columns:
        return {}
    income = rows["net_income"]
    bad = rows.index[(rows["revenue"] == 0) & income.notna() & (income != 0)]
    said = "(no revenue concept read), served missing"
    notes = {i: [f"revenue: 0 in the source beside a net income of {_fmt(float(income[i]))} {said}"] for i in bad}
    rows.loc[bad, "revenue"] = np.nan
    return notes


def quarter_out_of_band(rows: pd.DataFrame, prices: pd.DataFrame | None = None) -> Notes:
    """A quarter's revenue against the median of its neighbouring quarters (up to four each side).

    Outside :data:`REJECT_BAND` it is another concept's figure (ABBV FY2015-Q2: 51m among ~5bn) and is set to
    missing; outside :data:`MARK_BAND` only it is kept and marked (seasonal quarters).

    Args:
        rows: statement rows (``ticker``, ``period``, ``report_period``, ``revenue``); changed in place.
        prices: unused.

    Returns:
        Row label -> notes.

    Example:
        >>> df = pd.DataFrame({"ticker": ["X"] * 5, "period": ["quarterly"] * 5,
        ...                    "report_period": pd.date_range("2016-03-31", periods=5, freq="QE"),
        ...                    "revenue": [10.0, 0.1, 11.0, 25.0, 10.0]})
        >>> sorted(quarter_out_of_band(df)), df["revenue"].tolist()
        ([1, 3], [10.0, nan, 11.0, 25.0, 10.0])
    """
    q = rows[(rows["period"] == "quarterly") & rows["revenue"].notna()]
    ratio = q["revenue"] / neighbour_median(q, "revenue")
    recurs = _recurs_a_year_apart(q)
    notes: Notes = {}
    revenue = q["revenue"].to_dict()
    for i, r in ratio.dropna().items():
        if recurs.get(i, False) and not MARK_BAND[0] <= r <= MARK_BAND[1]:
            notes[i] = [
                f"revenue: {r:.3g}x the median of its neighbouring quarters, as the same quarter a year "
                "apart (a seasonal business; kept)"
            ]
        elif not REJECT_BAND[0] <= r <= REJECT_BAND[1]:
            notes[i] = [
                f"revenue: {_fmt(float(revenue[i]))} is {r:.3g}x the median of its neighbouring "
                "quarters (outside 0.2-5x: another concept's figure), served missing"
            ]
            rows.loc[i, "revenue"] = np.nan
        elif not MARK_BAND[0] <= r <= MARK_BAND[1]:
            notes[i] = [f"revenue: {r:.3g}x the median of its neighbouring quarters (outside 0.5-2x; kept)"]
    # a rejection moves its neighbours' medians: mark what is out of band among the quarters served
    kept = rows[(rows["period"] == "quarterly") & rows["revenue"].notna()]
    after = kept["revenue"] / neighbour_median(kept, "revenue")
    for i, r in after.dropna().items():
        if i not in notes and not MARK_BAND[0] <= r <= MARK_BAND[1]:
            notes[i] = [f"revenue: {r:.3g}x the median of its neighbouring quarters served (outside 0.5-2x; kept)"]
    return notes


def _recurs_a_year_apart(q: pd.DataFrame) -> dict:
    """Row label -> whether the same ticker's quarter a year before or after is within 0.8-1.25x of it.

    H&R Block's tax-season quarter is 17x its other quarters every year: a pattern that recurs is the business,
    not another concept's figure.
    """
    out = {}
    by = {t: g for t, g in q.groupby(q["ticker"].astype(str), sort=False)}
    for i, t, day, value in zip(q.index, q["ticker"].astype(str), q["report_period"], q["revenue"], strict=True):
        g = by[t]
        gap = (g["report_period"] - day).abs()
        near_year = g[(gap >= pd.Timedelta(days=350)) & (gap <= pd.Timedelta(days=380))]["revenue"]
        out[i] = bool(((near_year / value).between(0.8, 1.25)).any())
    return out


def annual_out_of_band(rows: pd.DataFrame, prices: pd.DataFrame | None = None) -> Notes:
    """A fiscal year's revenue against four times the median of the ticker's quarters around its end.

    F FY2016: 10.25bn where its quarters are ~35bn each: set to missing.

    Args:
        rows: statement rows (``ticker``, ``period``, ``report_period``, ``revenue``); changed in place.
        prices: unused.

    Returns:
        Row label -> notes.

    Example:
        >>> df = pd.DataFrame({"ticker": ["F"] * 5, "period": ["quarterly"] * 4 + ["annual"],
        ...                    "report_period": pd.to_datetime(["2016-03-31", "2016-06-30", "2016-09-30",
        ...                                                     "2016-12-31", "2016-12-31"]),
        ...                    "revenue": [35.0, 37.0, 33.0, 36.0, 10.25]})
        >>> list(annual_out_of_band(df)), df["revenue"].tolist()[-1]
        ([4], nan)
    """
    q = rows[(rows["period"] == "quarterly") & rows["revenue"].notna() & (rows["revenue"] > 0)]
    notes: Notes = {}
    for i in rows.index[(rows["period"] == "annual") & rows["revenue"].notna()]:
        end = pd.Timestamp(rows["report_period"][i])
        near = q[
            (q["ticker"] == rows["ticker"][i])
            & (q["report_period"] > end - pd.Timedelta(days=400))
            & (q["report_period"] <= end + pd.Timedelta(days=100))
        ]
        if len(near) < 3:
            continue
        r = float(rows["revenue"][i]) / (4 * float(near["revenue"].median()))
        if not ANNUAL_BAND[0] <= r <= ANNUAL_BAND[1]:
            notes[i] = [
                f"revenue: {_fmt(float(rows['revenue'][i]))} is {r:.3g}x four times its quarters' median "
                "(another concept's figure), served missing"
            ]
            rows.loc[i, "revenue"] = np.nan
    return notes


def implausible_eps(rows: pd.DataFrame, prices: pd.DataFrame | None = None) -> Notes:
    """EPS whose annualised value exceeds the share price (P/E under 1): another share class's or unit's.

    ERIE FY2015: 566.75 a share against a price of ~80 (the Class B figure beside Class A quarters).

    Args:
        rows: statement rows (``ticker``, ``period``, ``report_period``, EPS fields); changed in place.
        prices: ``ticker``, ``time`` and ``close`` on the rows' split basis (no prices: no check).

    Returns:
        Row label -> notes.

    Example:
        >>> df = pd.DataFrame({"ticker": ["E", "E"], "period": ["annual", "quarterly"],
        ...                    "report_period": pd.to_datetime(["2015-12-31", "2016-03-31"]),
        ...                    "earnings_per_share": [566.75, 0.83]})
        >>> px = pd.DataFrame({"ticker": ["E"], "time": pd.to_datetime(["2015-12-30"], utc=True), "close": [80.0]})
        >>> list(implausible_eps(df, px)), df["earnings_per_share"].tolist()
        ([0], [nan, 0.83])
    """
    if prices is None or prices.empty:
        return {}
    px = prices[["ticker", "time", "close"]].dropna(subset=["time"])  # a bar without a close: no check
    px = px.assign(ticker=px["ticker"].astype(str), day=px["time"].dt.tz_localize(None).astype("datetime64[ns]"))
    keys = rows[["ticker", "report_period"]].assign(
        ticker=rows["ticker"].astype(str), day=rows["report_period"].astype("datetime64[ns]")
    )
    keys = keys.reset_index(names="_row").sort_values("day")
    near = pd.merge_asof(
        keys, px.sort_values("day")[["ticker", "day", "close"]], on="day", by="ticker", tolerance=pd.Timedelta(days=10)
    )
    close = near.set_index("_row")["close"].reindex(rows.index)
    per_year = rows["period"].map({"quarterly": 4.0, "annual": 1.0, "ttm": 1.0})
    notes: Notes = {}
    for field in ("earnings_per_share", "earnings_per_share_diluted"):
        if field not in rows.columns:
            continue
        ey = rows[field] * per_year / close
        for i in rows.index[ey > MAX_EARNINGS_YIELD]:
            notes.setdefault(i, []).append(
                f"{field}: {float(rows[field][i]):,.4g} against a close of {close[i]:,.4g} "
                "(P/E under 1: another share class or unit), served missing"
            )
            rows.loc[i, field] = np.nan
    return notes


def derived_shares(rows: pd.DataFrame, prices: pd.DataFrame | None = None) -> Notes:
    """Weighted shares where the source reports none: net income / EPS (basic and diluted), marked as derived.

    Only where |EPS| is at least :data:`MIN_EPS_FOR_SHARES`, the two have the same sign and the count is within
    :data:`SHARE_BAND` of the median of at least two of the ticker's counts around it (four rows each side):
    a count that stands alone, or apart, is a net income that is not the EPS's (non-controlling interests,
    another class, a Q4's EPS taken as FY - Q1..Q3 over changing counts).

    Args:
        rows: statement rows; changed in place.
        prices: unused.

    Returns:
        Row label -> notes.

    Example:
        >>> df = pd.DataFrame({"ticker": ["X"] * 4, "report_period": pd.date_range("2016-03-31", periods=4, freq="QE"),
        ...                    "net_income": [2e9, 2.1e9, 1e6, 2e9], "earnings_per_share": [2.0, 2.0, 0.01, 2.0]})
        >>> derived_shares(df)[0], df["weighted_average_shares"].tolist()
        (['weighted_average_shares: derived as net income / EPS'], [1000000000.0, 1050000000.0, nan, 1000000000.0])
    """
    derived: dict[Any, list[str]] = {}
    for eps, shares in (
        ("earnings_per_share", "weighted_average_shares"),
        ("earnings_per_share_diluted", "weighted_average_shares_diluted"),
    ):
        if eps not in rows.columns or "net_income" not in rows.columns:
            continue
        if shares not in rows.columns:
            rows[shares] = np.nan
        # net income to common over EPS (where the source names it): preferred dividends are no common earnings
        common = rows["net_income_common_stock"] if "net_income_common_stock" in rows.columns else None
        n = (rows["net_income"] if common is None else common.fillna(rows["net_income"])) / rows[eps]
        ok = rows[shares].isna() & (rows[eps].abs() >= MIN_EPS_FOR_SHARES) & (n > 0)
        candidate = rows[shares].where(~ok, n.round())
        # a count far from the ticker's other counts around it is a net income that is not the EPS's (non-
        # controlling interests, another class): no count rather than a wrong one
        if {"ticker", "report_period"} <= set(rows.columns):
            ratio = candidate / neighbour_median(rows.assign(_n=candidate), "_n", least=2)
            ok &= ratio.between(*SHARE_BAND)
        ok &= ~_apart_from_next(rows.assign(_n=candidate.where(ok | rows[shares].notna())), ok)
        rows.loc[ok, shares] = n[ok].round()
        for i in rows.index[ok]:
            derived.setdefault(i, []).append(shares)
    return {i: [f"{', '.join(fields)}: derived as net income / EPS"] for i, fields in derived.items()}


def _apart_from_next(rows: pd.DataFrame, derived: pd.Series) -> pd.Series:
    """Derived counts (``_n``) more than :data:`SHARE_JUMP` from the next quarter's (at most 105 days on).

    Two counts each inside :data:`SHARE_BAND` of their medians can still be 1.5x apart (ALEX 60.9m, then 42.1m):
    of such a pair the derived one farther from its median gives way (both where both are derived).
    """
    q = rows[rows["period"].astype(str) == "quarterly"] if "period" in rows.columns else rows
    q = q.dropna(subset=["_n"]).sort_values(["ticker", "report_period"], kind="stable")
    off = neighbour_median(q, "_n", least=2)
    far = (q["_n"] / off).map(lambda r: abs(np.log(r)) if r == r and r > 0 else 0.0)
    nxt = q.groupby(q["ticker"].astype(str))["_n"].shift(-1)
    gap = q.groupby(q["ticker"].astype(str))["report_period"].shift(-1) - q["report_period"]
    drop = pd.Series(False, index=rows.index)
    jumps = q.index[
        ((nxt / q["_n"]).map(lambda r: not 1 / SHARE_JUMP <= r <= SHARE_JUMP)) & nxt.notna() & (gap.dt.days <= 105)
    ]
    pos = {i: k for k, i in enumerate(q.index)}
    for i in jumps:
        j = q.index[pos[i] + 1]
        pair = [x for x in (i, j) if derived[x]]
        if pair:
            drop[max(pair, key=lambda x: far[x])] = True
    return drop


#: successive quarters' share counts further apart than this are no counts of one basis (the lake's invariant)
SHARE_JUMP = 1.35


#: the rules in the order they run; a Q4 derived from a rejected value is rejected after them
RULES: tuple[Rule, ...] = (
    negative_revenue,
    zero_revenue_beside_income,
    quarter_out_of_band,
    annual_out_of_band,
    implausible_eps,
    derived_shares,
)


def _q4_of_rejected(rows: pd.DataFrame, rejected: pd.Series) -> Notes:
    """A Q4 revenue is FY - Q1..Q3: where any of those was rejected, so is the Q4 (and it is not marked kept)."""
    fy = rows["fiscal_period"].astype(str).str.extract(r"^(FY\d{4})")[0]
    key = rows["ticker"].astype(str) + "|" + fy.fillna("")
    bad_years = set(key[rejected & fy.notna()])
    q4 = rows.index[
        (rows["period"] == "quarterly")
        & rows["fiscal_period"].astype(str).str.endswith("-Q4")
        & key.isin(bad_years)
        & rows["revenue"].notna()
    ]
    rows.loc[q4, "revenue"] = np.nan
    return {i: ["revenue: Q4 = FY - Q1..Q3 and one of those was rejected, served missing"] for i in q4}


def mark_served_out_of_band(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows, the quarters served outside :data:`MARK_BAND` of their neighbours marked in ``quality``.

    The rules judge each quarter among the rows they see; the quarters rejected after them (a Q4 of a rejected
    year) and the rows a later step drops (a hole in the quarters) move the medians of the quarters served. Here
    neighbours are the ticker's quarterly rows in order, served revenue or not, within a covered span (rows more
    than 400 days apart start another), as the lake's invariant takes them; a row whose ``quality`` already speaks
    of its revenue is left as it is.

    Args:
        rows: the statement rows served (``ticker``, ``period``, ``report_period``, ``revenue``, ``quality``).

    Returns:
        A copy with the marks added.

    Example:
        >>> df = pd.DataFrame({"ticker": ["X"] * 4, "period": ["quarterly"] * 4, "quality": pd.NA,
        ...                    "report_period": pd.date_range("2016-03-31", periods=4, freq="QE"),
        ...                    "revenue": [1.0, 5.0, 1.0, 1.0]})
        >>> mark_served_out_of_band(df)["quality"].tolist()[1]
        'revenue: 5x the median of its neighbouring quarters served (outside 0.5-2x; kept)'
    """
    out = rows.copy()
    q = out[out["period"].astype(str) == "quarterly"].sort_values(["ticker", "report_period"], kind="stable")
    key = q["ticker"].astype(str)
    span = (q.groupby(key, sort=False)["report_period"].diff().dt.days > 400).groupby(key, sort=False).cumsum()
    ratio = q["revenue"] / neighbour_median(q.assign(ticker=key + "|" + span.astype(str)), "revenue")
    quality = out["quality"].astype("string") if "quality" in out.columns else pd.Series(pd.NA, index=out.index)
    spoken = quality.str.contains("revenue:", regex=False).fillna(False).astype(bool)
    off = ratio.dropna()
    off = off[~off.between(*MARK_BAND) & ~spoken[off.index]]
    notes = {
        i: f"revenue: {r:.3g}x the median of its neighbouring quarters served (outside 0.5-2x; kept)"
        for i, r in off.items()
    }
    if notes:
        add = pd.Series(notes, dtype="string").reindex(quality.index)
        quality = quality.where(add.isna(), (quality + "; " + add).fillna(add))
    out["quality"] = quality
    return out


def screen_statements(rows: pd.DataFrame, prices: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows with every :data:`RULES` applied: failing values missing, the reasons in ``quality``.

    Args:
        rows: annual and quarterly statement rows (``ticker``, ``period``, ``fiscal_period``, ``report_period``,
            ``revenue``, ``net_income``, EPS).
        prices: daily closes on the rows' split basis for :func:`implausible_eps` (optional).

    Returns:
        A copy with ``quality`` (string; missing on clean rows). Notes a source stage already recorded in
        ``quality`` come first.
    """
    out = rows.copy()
    before = out["revenue"].notna()
    notes: Notes = {}
    if "quality" in out.columns:  # a source stage's own notes (e.g. values that contradict their own filing)
        notes = {i: [q] for i, q in out["quality"].items() if isinstance(q, str)}
    for rule in RULES:
        for i, ns in rule(out, prices).items():
            notes.setdefault(i, []).extend(ns)
    for i, ns in _q4_of_rejected(out, before & out["revenue"].isna()).items():
        notes[i] = [n for n in notes.get(i, []) if "(kept" not in n] + ns
    quality = pd.Series(pd.NA, index=out.index, dtype="string")
    for i, ns in notes.items():
        quality[i] = "; ".join(ns)
    out["quality"] = quality
    return out
