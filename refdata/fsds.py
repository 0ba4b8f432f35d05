"""The SEC Financial Statement Data Sets (2009q3, 2010q1, 2010q2): each filing's own period as a statement row.

The data sets (DERA) give, per quarter, every 10-K/10-Q filed (``sub``: filer CIK, form, fiscal year and period,
filing day, acceptance time) and every value tagged in it (``num``: tag, ``ddate`` the period end rounded to the
month end, ``qtrs`` its length in quarters, 0 for an instant). A filing's **own period** only is a first report:
its 10-K's year (``qtrs`` 4) or its 10-Q's quarter (``qtrs`` 1; where a flow is tagged year to date only, the
year-to-date value minus the previous quarter's filing's, when that filing is in the data), and the instants on
its period end. Prior-year comparatives are never rows here (they go to ``statement_vintages`` with their filing,
as every XBRL comparative does). Only non-dimensional values of the filer itself (no ``segments``, no
``coreg``), standard us-gaap tags (``version`` not an accession number) and USD or share units are read, and
mapped to fields by the us-gaap concept map (:data:`refdata.concepts.CONCEPTS`, first concept present wins).

Filers are joined to the lake's companies by CIK, never by a symbol: a CIK the index-membership spells (or
today's constituent lists of the same source) give a company is served under that company's ticker; a filer
without a lake identity is skipped and counted. The read table ``num`` is used rather than the derived
key-financials CSV of the same folder, whose ``ticker`` is today's SEC ticker of the CIK (tickers are reused) and
which keeps about 40 of the concept map's tags.

Example:
    >>> fiscal_year_end(pd.Timestamp("2009-12-31"), "0926"), fiscal_year_end(pd.Timestamp("2009-12-31"), "0103")
    (Timestamp('2010-09-30 00:00:00'), Timestamp('2009-12-31 00:00:00'))
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from fdkit.lake.reviewed import reviewed_facts
from fdkit.research.sessions import EASTERN, edgar_filing_date
from refdata.common import split_factor
from refdata.concepts import CONCEPTS, INSTANT_FIELDS, SHARE_COUNTS, fiscal_label
from refdata.index_membership import FOLDER, INDICES
from refdata.quality import screen_statements
from refdata.stage import Context, Stage, intermediate
from refdata.statements import derive_fields, without_quarter_holes

SUB = "data-real-2/fundamentals_fsds/sec_fsds_sub.parquet"
NUM = "data-real-2/fundamentals_fsds/sec_fsds_num_2009q3_2010q2.parquet"
#: the per-share fields (divided by later splits; never differenced over quarters)
PER_SHARE = {"earnings_per_share", "earnings_per_share_diluted", "dividends_per_common_share"}
#: the most days after its period end a first report is filed (the SEC's deadlines are 60-90 days for a 10-K and
#: 40-45 for a 10-Q; a filing later than this is taken for a re-filing of a report the data sets do not hold)
MAX_LAG = {"10-K": 100, "10-Q": 60}
_RANK = {(c, f): i for f, cs in CONCEPTS.items() for i, c in enumerate(cs)}


def fiscal_year_end(period_end: pd.Timestamp, fye: str) -> pd.Timestamp:
    """The end of the fiscal year a period ending on ``period_end`` (a month end) falls in.

    Args:
        period_end: the period's end, a month end (the data sets round period ends to the nearest month end).
        fye: the filer's fiscal year end, ``MMDD`` (``0926``; ``0103``: a 52/53-week year ending early in January,
            the nearest month end of which is December's).

    Returns:
        The first month end on or after ``period_end`` in the fiscal year-end month.
    """
    month, day = int(fye[:2]), int(fye[2:])
    if day < 15:  # rounded to the previous month's end
        month = 12 if month == 1 else month - 1
    year = period_end.year if period_end.month <= month else period_end.year + 1
    return pd.Timestamp(year=year, month=month, day=1) + pd.offsets.MonthEnd(0)


def lake_identity(spells: pd.DataFrame, today: pd.DataFrame, prefer: set[str]) -> pd.DataFrame:
    """CIK -> the ticker the lake serves the company under, from index membership (never a symbol alone).

    Args:
        spells: membership spells (``ticker``, ``cik``, ``current_ticker``): the served ticker is the current one.
        today: today's constituents (``ticker`` in the lake's spelling, ``cik``).
        prefer: tickers that already have statement rows (a CIK with two share classes takes the one that has).

    Returns:
        ``cik`` (int), ``ticker``: one ticker per CIK.

    Example:
        >>> spells = pd.DataFrame({"ticker": ["FB", "NWS", "NWSA"], "cik": ["1326801", "1564708", "1564708"],
        ...                        "current_ticker": ["META", "NWS", "NWSA"]})
        >>> lake_identity(spells, spells.iloc[:0], {"NWSA"}).values.tolist()
        [[1326801, 'META'], [1564708, 'NWSA']]
    """
    served = spells["current_ticker"].fillna(spells["ticker"])
    pairs = pd.concat([pd.DataFrame({"cik": spells["cik"], "ticker": served}), today[["cik", "ticker"]]])
    pairs = pairs.dropna().astype({"ticker": str})
    pairs = pairs.assign(cik=pairs["cik"].astype(str).str.split(".").str[0].astype("int64"))
    pairs = pairs.assign(_other=~pairs["ticker"].isin(prefer)).drop_duplicates(["cik", "ticker"])
    pairs = pairs.sort_values(["cik", "_other", "ticker"], kind="stable").drop_duplicates("cik")
    return pairs[["cik", "ticker"]].reset_index(drop=True)


def own_filings(sub: pd.DataFrame, identity: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The original 10-K and 10-Q filings of the lake's companies, each with its period, fiscal year and quarter.

    Args:
        sub: the ``sub`` table (``adsh``, ``cik``, ``form``, ``period``, ``fye``, ``fp``, ``filed``, ``accepted``,
            ``has_num``).
        identity: :func:`lake_identity`.

    Returns:
        The filings (``adsh``, ``ticker``, ``cik``, ``form``, ``end``, ``fy_end``, ``n`` (quarter; 4: the year),
        ``filed``, ``accepted``) and counts of what was left out and why.

    Example:
        >>> sub = pd.DataFrame({"adsh": ["a", "b", "c"], "cik": [789019, 789019, 5], "form": ["10-Q", "10-Q/A", "10-Q"],
        ...                     "period": [20091231] * 3, "fye": ["0630"] * 3, "fp": ["Q2"] * 3,
        ...                     "filed": [20100128] * 3, "accepted": ["2010-01-28 16:05:00.0"] * 3, "has_num": True})
        >>> filings, counts = own_filings(sub, pd.DataFrame({"cik": [789019], "ticker": ["MSFT"]}))
        >>> filings[["ticker", "n"]].values.tolist(), counts["filings of filers without a lake identity"]
        ([['MSFT', 2]], 1)
    """
    s = sub[sub["has_num"].astype(bool) & sub["form"].isin(["10-K", "10-Q"])].copy()
    with_values = sub[sub["has_num"].astype(bool)]
    counts = {
        "filings": len(s),
        "amendments (not first reports)": int(with_values["form"].isin(["10-K/A", "10-Q/A"]).sum()),
    }
    s = s.merge(identity, on="cik", how="left")
    counts["filings of filers without a lake identity"] = int(s["ticker"].isna().sum())
    counts["filers without a lake identity"] = int(s.loc[s["ticker"].isna(), "cik"].nunique())
    s = s.dropna(subset=["ticker"])
    s["end"] = pd.to_datetime(s["period"].astype(str), format="%Y%m%d")
    s["filed"] = pd.to_datetime(s["filed"].astype(str), format="%Y%m%d")
    s["fy_end"] = [fiscal_year_end(e, f) for e, f in zip(s["end"], s["fye"].astype(str), strict=True)]
    months = (s["fy_end"] - s["end"]).dt.days / (365.25 / 12)
    s["n"] = (4 - np.round(months / 3)).astype(int)
    labelled = np.where(s["form"] == "10-K", "FY", "Q" + s["n"].astype(str))
    ok = (s["fp"] == labelled) & ((s["form"] == "10-K") == (s["n"] == 4))
    counts["filings whose fiscal period disagrees with the filer's calendar"] = int((~ok).sum())
    s = s[ok]
    lag = (s["filed"] - s["end"]).dt.days
    late = ~lag.between(1, s["form"].map(MAX_LAG))
    counts["filings later than the deadline allows (re-filings)"] = int(late.sum())
    s = s[~late].sort_values(["ticker", "end", "form", "filed", "adsh"], kind="stable")
    twice = s.duplicated(["ticker", "end", "form"], keep="first")
    counts["second filings for one period"] = int(twice.sum())
    s = s[~twice].assign(cik=s["cik"].astype("int64").astype(str).str.zfill(10))
    # an acceptance time from which EDGAR's rule (17:30 Eastern) does not give the filing day is not this filing's
    # first acceptance (a re-processed submission): the row is served without one
    at = pd.to_datetime(s["accepted"], format="%Y-%m-%d %H:%M:%S.%f").dt.tz_localize(EASTERN)
    stray = edgar_filing_date(at) != s["filed"]
    counts["acceptance times that contradict the filing day (left out)"] = int(stray.sum())
    s["accepted"] = s["accepted"].where(~stray, None)
    cols = ["adsh", "ticker", "cik", "form", "end", "fy_end", "n", "filed", "accepted"]
    return s[cols].reset_index(drop=True), counts


def own_values(num: pd.DataFrame, filings: pd.DataFrame) -> pd.DataFrame:
    """The mapped values of each filing on its own period end: field, concept, quarters, value (USD or shares).

    Args:
        num: the ``num`` table.
        filings: :func:`own_filings`.

    Returns:
        ``adsh``, ``field``, ``tag``, ``qtrs``, ``value``, ``rank`` (the concept's place in the field's list).

    Example:
        >>> num = pd.DataFrame({"adsh": ["a"] * 3, "tag": ["Revenues", "Revenues", "SalesRevenueNet"],
        ...                     "version": ["us-gaap/2009"] * 3, "ddate": [20091231, 20081231, 20091231],
        ...                     "qtrs": [1, 1, 1], "uom": ["USD"] * 3, "segments": None, "coreg": None,
        ...                     "value": [19.0, 16.6, 18.0]})
        >>> filings = pd.DataFrame({"adsh": ["a"], "end": pd.to_datetime(["2009-12-31"])})
        >>> own_values(num, filings)[["field", "tag", "value"]].values.tolist()  # the comparative is no own value
        [['revenue', 'Revenues', 19.0]]
    """
    n = num[
        num["adsh"].isin(filings["adsh"])
        & num["segments"].isna()
        & num["coreg"].isna()
        & num["version"].str.startswith("us-gaap/")
        & num["uom"].isin(["USD", "shares"])
    ]
    n = n.merge(filings[["adsh", "end"]], on="adsh")
    n = n[pd.to_datetime(n["ddate"].astype(str), format="%Y%m%d") == n["end"]]
    fields = pd.DataFrame([(c, f, r) for (c, f), r in _RANK.items()], columns=["tag", "field", "rank"])
    n = n.merge(fields, on="tag")
    instant = n["field"].isin(INSTANT_FIELDS)
    n = n[instant == (n["qtrs"] == 0)]
    n = n.sort_values(["adsh", "field", "qtrs", "rank"], kind="stable").drop_duplicates(["adsh", "field", "qtrs"])
    return n[["adsh", "field", "tag", "qtrs", "value", "rank"]].reset_index(drop=True)


def _quarter_flows(values: pd.DataFrame, filings: pd.DataFrame) -> pd.DataFrame:
    """Each filing's flows for its own quarter or year: the direct value, else YTD minus the previous quarter's YTD."""
    meta = filings.set_index("adsh")
    v = values.assign(n=values["adsh"].map(meta["n"]))
    flow = ~v["field"].isin(INSTANT_FIELDS)
    want = np.where(v["n"] == 4, 4, 1)
    direct = v[flow & (v["qtrs"] == want)]
    ytd = v[flow & (v["n"].between(2, 3)) & (v["qtrs"] == v["n"]) & ~v["field"].isin(SHARE_COUNTS | PER_SHARE)]
    prev_of = filings.assign(n=filings["n"] + 1)[["ticker", "fy_end", "n", "adsh"]].rename(columns={"adsh": "prev"})
    keys = filings[["adsh", "ticker", "fy_end", "n"]].merge(prev_of, on=["ticker", "fy_end", "n"])
    ytd = ytd.merge(keys[["adsh", "prev"]], on="adsh")
    prev = v[flow][["adsh", "field", "tag", "qtrs", "value"]].rename(columns={"adsh": "prev", "value": "before"})
    ytd = ytd.merge(prev.assign(qtrs=prev["qtrs"] + 1), on=["prev", "field", "tag", "qtrs"])
    ytd = ytd.assign(value=ytd["value"] - ytd["before"])
    ytd = ytd[~ytd.set_index(["adsh", "field"]).index.isin(direct.set_index(["adsh", "field"]).index)]
    instants = v[~flow]
    return pd.concat([direct, ytd[direct.columns], instants], ignore_index=True)[["adsh", "field", "value"]]


def statement_rows(values: pd.DataFrame, filings: pd.DataFrame, splits: pd.DataFrame) -> pd.DataFrame:
    """One statement row per filing: its own period's fields, on the lake's split basis, derived fields added.

    Args:
        values: :func:`own_values`.
        filings: :func:`own_filings`.
        splits: the split table.

    Returns:
        Annual (10-K) and quarterly (10-Q) rows with ``cik`` and ``accepted`` (the acceptance time, Eastern).

    Example:
        >>> filings = pd.DataFrame({"adsh": ["a"], "ticker": ["X"], "cik": ["0000000001"], "form": ["10-K"],
        ...                         "end": pd.to_datetime(["2009-12-31"]), "fy_end": pd.to_datetime(["2009-12-31"]),
        ...                         "n": [4], "filed": pd.to_datetime(["2010-02-20"]), "accepted": [None]})
        >>> values = pd.DataFrame({"adsh": ["a", "a"], "field": ["revenue", "cost_of_revenue"],
        ...                        "tag": ["Revenues", "CostOfRevenue"], "qtrs": [4, 4], "value": [10.0, 6.0]})
        >>> row = statement_rows(values, filings, pd.DataFrame(columns=["ticker", "date", "ratio"])).iloc[0]
        >>> row["fiscal_period"], float(row["gross_profit"]), row["form_type"]
        ('FY2009', 4.0, '10-K')
    """
    wide = _quarter_flows(values, filings).pivot(index="adsh", columns="field", values="value")
    rows = filings.merge(wide, left_on="adsh", right_index=True, how="inner")
    k = split_factor(splits, rows["ticker"], rows["filed"])
    for f in PER_SHARE & set(rows.columns):
        rows[f] = rows[f] / k
    for f in SHARE_COUNTS & set(rows.columns):
        rows[f] = rows[f] * k
    rows = rows[rows.reindex(columns=["revenue", "net_income"]).notna().any(axis=1)]
    label = rows["fy_end"].map(fiscal_label).astype(str)
    annual = rows["n"] == 4
    rows = rows.assign(
        report_period=rows["end"],
        period=np.where(annual, "annual", "quarterly"),
        fiscal_period=np.where(annual, "FY" + label, "FY" + label + "-Q" + rows["n"].astype(str)),
        currency="USD",
        filing_date=rows["filed"],
        accession_number=rows["adsh"],
        form_type=rows["form"],
    )
    rows = rows.drop(columns=["adsh", "form", "end", "fy_end", "n", "filed"])
    return derive_fields(rows.sort_values(["ticker", "report_period", "period"], kind="stable").reset_index(drop=True))


def _note(rows: pd.DataFrame, mask: pd.Series, text: pd.Series) -> None:
    """Append ``text`` to the ``quality`` notes of the rows in ``mask`` (in place)."""
    old = rows.loc[mask, "quality"]
    rows.loc[mask, "quality"] = [f"{o}; {t}" if isinstance(o, str) else t for o, t in zip(old, text[mask], strict=True)]


def splits_known(path: str | os.PathLike[str] | None = None) -> frozenset[str]:
    """Tickers whose every split from 1998 on is in the split table (LEAN's factor files), reviewed.

    Their 2009-2010 per-share values can be put on today's basis. The ``splits_known`` rows of the reviewed-facts
    table (:mod:`fdkit.lake.reviewed`): AAPL, BAC, GOOG, GOOGL, IBM and META (LEAN's FB). Adding one is a row.

    Args:
        path: another reviewed-facts table (default: fdkit's).

    Returns:
        The lake's tickers.

    Example:
        >>> sorted(splits_known())
        ['AAPL', 'BAC', 'GOOG', 'GOOGL', 'IBM', 'META']
    """
    return frozenset(reviewed_facts("splits_known", path)["ticker"].astype(str))


def unknown_split_basis(rows: pd.DataFrame) -> pd.DataFrame:
    """Per-share values and share counts served missing where the splits since the filing are not all known.

    The split table is complete from 2015 (and for the tickers of LEAN's factor files); a split between a 2009-2010
    filing and 2015 (KO 2-for-1 in 2012, MA 10-for-1 and UNP 2-for-1 in 2014) would leave EPS, dividends per share
    and share counts on the filing's basis, 2-10x off today's prices: they are missing, the reason in ``quality``
    (amounts in dollars are unaffected). Class A figures of a class B ticker (BRK-B) go the same way.

    Args:
        rows: the statement rows (``ticker``, per-share fields, share counts, ``quality``).

    Returns:
        A copy.

    Example:
        >>> r = pd.DataFrame({"ticker": ["KO", "IBM"], "earnings_per_share": [3.5, 10.0], "quality": pd.NA})
        >>> out = unknown_split_basis(r)
        >>> out["earnings_per_share"].tolist(), out["quality"].notna().tolist()
        ([nan, 10.0], [True, False])
    """
    out = rows.copy()
    fields = [f for f in sorted(PER_SHARE | SHARE_COUNTS) if f in out.columns]
    unknown = ~out["ticker"].astype(str).isin(splits_known()) & out[fields].notna().any(axis=1)
    out.loc[unknown, fields] = np.nan
    text = pd.Series(
        ", ".join(fields) + ": served missing (the splits between this 2009-2010 filing and 2015 are "
        "in no source of the split table, so the basis is unknown)",
        index=out.index,
    )
    if "quality" not in out.columns:
        out["quality"] = pd.Series(pd.NA, index=out.index, dtype="string")
    _note(out, unknown, text)
    return out


def consistent(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with values that contradict the filing's own other values served missing, the reason in ``quality``.

    * EPS x weighted shares must give net income to common within 3% (plus a cent of rounding) where |net income|
      is over $50m: a count tagged in thousands is scaled by 1,000 (as for XBRL facts); any other count that does
      not fit is served missing.
    * total assets = total liabilities + equity within 0.5%: else total liabilities (and the non-current
      liabilities derived from them) are served missing.

    Args:
        rows: :func:`statement_rows`.

    Returns:
        A copy with ``quality`` (string; missing on clean rows).

    Example:
        >>> r = pd.DataFrame({"net_income": [1e9], "net_income_common_stock": [1e9], "earnings_per_share": [2.0],
        ...                   "weighted_average_shares": [5e5], "earnings_per_share_diluted": [2.0],
        ...                   "weighted_average_shares_diluted": [4e8], "total_assets": [10e9],
        ...                   "total_liabilities": [6e9], "shareholders_equity": [4e9]})
        >>> out = consistent(r)
        >>> out["weighted_average_shares"].tolist(), out["weighted_average_shares_diluted"].tolist()
        ([500000000.0], [nan])
    """
    out = rows.copy()
    out["quality"] = pd.Series(pd.NA, index=out.index, dtype="string")
    ni = out["net_income_common_stock"].fillna(out["net_income"])
    for eps, shares in (
        ("earnings_per_share", "weighted_average_shares"),
        ("earnings_per_share_diluted", "weighted_average_shares_diluted"),
    ):
        if eps not in out.columns or shares not in out.columns:
            continue
        gap = (out[eps] * out[shares] - ni).abs() / ni.abs()
        off = (gap > 0.03 + 0.005 * out[shares] / ni.abs()) & (ni.abs() > 5e7)
        thousands = off & ((out[eps] * out[shares] * 1000 - ni).abs() <= 0.03 * ni.abs())
        out.loc[thousands, shares] = out.loc[thousands, shares] * 1000
        bad = off & ~thousands
        text = shares + ": EPS x shares is " + (100 * gap).round(1).astype(str) + "% off net income, served missing"
        _note(out, bad, text)
        out.loc[bad, shares] = np.nan
    if {"total_assets", "total_liabilities", "shareholders_equity"} <= set(out.columns):
        gap = (out["total_liabilities"] + out["shareholders_equity"] - out["total_assets"]).abs() / out["total_assets"]
        bad = gap > 0.005
        text = (
            "total_liabilities: liabilities + equity are " + (100 * gap).round(1).astype(str) + "% off total "
            "assets in the source, served missing"
        )
        _note(out, bad, text)
        out.loc[bad, ["total_liabilities", "non_current_liabilities"]] = np.nan
    return out


def vintage_facts(num: pd.DataFrame, filings: pd.DataFrame) -> pd.DataFrame:
    """Every mapped quarter, year and instant value of the filings (comparatives too), as the XBRL ``reports``.

    Args:
        num: the ``num`` table.
        filings: :func:`own_filings`.

    Returns:
        ``ticker``, ``concept``, ``unit`` (``USD/shares`` for per-share concepts), ``start`` (an instant: none;
        the period's length from ``qtrs``), ``end``, ``val``, ``accn``, ``form``, ``filed``: the facts
        :func:`refdata.vintages.build_vintages` reads.

    Example:
        >>> num = pd.DataFrame({"adsh": ["a", "a"], "tag": ["Revenues", "EarningsPerShareBasic"],
        ...                     "version": ["us-gaap/2009"] * 2, "ddate": [20081231, 20091231], "qtrs": [4, 4],
        ...                     "uom": ["USD"] * 2, "segments": None, "coreg": None, "value": [9.0, 1.5]})
        >>> filings = pd.DataFrame({"adsh": ["a"], "ticker": ["X"], "form": ["10-K"],
        ...                         "filed": pd.to_datetime(["2010-02-20"])})
        >>> vintage_facts(num, filings)[["concept", "unit", "start"]].astype(str).values.tolist()
        [['EarningsPerShareBasic', 'USD/shares', '2009-01-01'], ['Revenues', 'USD', '2008-01-01']]
    """
    n = num[
        num["adsh"].isin(filings["adsh"])
        & num["segments"].isna()
        & num["coreg"].isna()
        & num["version"].str.startswith("us-gaap/")
        & num["uom"].isin(["USD", "shares"])
        & num["qtrs"].isin([0, 1, 4])
        & num["tag"].isin({c for c, _ in _RANK})
    ]
    n = n.merge(filings[["adsh", "ticker", "form", "filed"]], on="adsh")
    end = pd.to_datetime(n["ddate"].astype(str), format="%Y%m%d")
    months = n["qtrs"].astype(int) * 3
    start = pd.Series(
        [
            pd.NaT if m == 0 else e - pd.DateOffset(months=m) + pd.Timedelta(days=1)
            for e, m in zip(end, months, strict=True)
        ],
        index=n.index,
        dtype="datetime64[ns]",
    )
    per_share = {c for (c, f) in _RANK if f in PER_SHARE}
    unit = np.where(n["tag"].isin(per_share), "USD/shares", n["uom"])
    out = pd.DataFrame(
        {
            "ticker": n["ticker"],
            "concept": n["tag"],
            "unit": unit,
            "start": start,
            "end": end,
            "val": n["value"].astype(float),
            "accn": n["adsh"],
            "form": n["form"],
            "filed": n["filed"],
        }
    )
    return out.sort_values(
        ["ticker", "concept", "start", "end", "filed", "accn"], na_position="first", kind="stable"
    ).reset_index(drop=True)


#: today's constituents lists of the membership sources (a CIK per ticker)
CURRENT = tuple(f"{FOLDER}/{index}_current.csv" for index in INDICES)


def _identity(ctx: Context) -> pd.DataFrame:
    """The lake's companies by CIK: the membership spells (the ``index_membership`` dataset), today's lists."""
    spells = ctx["index_membership"]
    today = pd.concat(
        [pd.read_csv(ctx.source(path), dtype=str, keep_default_na=False)[["ticker", "cik"]] for path in CURRENT],
        ignore_index=True,
    )
    today = today.assign(ticker=today["ticker"].str.replace(".", "-", regex=False)).replace("", None)
    # today's lists give a company's CIK; its served ticker is that of its running spell
    today = today.merge(
        spells[spells["end_date"].isna()][["ticker", "current_ticker"]].drop_duplicates("ticker"),
        on="ticker",
        how="left",
    )
    today = today.assign(ticker=today["current_ticker"].fillna(today["ticker"]))[["ticker", "cik"]]
    prefer = set(ctx["pystock_statements"]["ticker"]) | set(ctx["companyfacts_tickers"]["ticker"])
    return lake_identity(spells, today, prefer)


def _fsds(ctx: Context) -> dict[str, pd.DataFrame]:
    filings, _ = own_filings(pd.read_parquet(ctx.source(SUB)), _identity(ctx))
    # tickers with their full XBRL history (companyfacts) have these periods already, from the same filings
    filings = filings[~filings["ticker"].isin(set(ctx["companyfacts_tickers"]["ticker"]))].reset_index(drop=True)
    num = pd.read_parquet(
        ctx.source(NUM), columns=["adsh", "tag", "version", "ddate", "qtrs", "uom", "segments", "coreg", "value"]
    )
    rows = without_quarter_holes(statement_rows(own_values(num, filings), filings, ctx["splits"]))
    rows = screen_statements(unknown_split_basis(consistent(rows)), ctx["prices"])
    return {"fsds_statements": rows, "fsds_facts": vintage_facts(num, filings)}


FSDS = Stage(
    "fsds_fundamentals",
    "Statement rows (each filing's own period) and vintages from the SEC Financial Statement Data Sets 2009-2010",
    _fsds,
    sources=(SUB, NUM, *CURRENT),
    needs=("index_membership", "splits", "companyfacts_tickers", "pystock_statements", "prices"),
    outputs=(intermediate("fsds_statements"), intermediate("fsds_facts")),
)

STAGES = (FSDS,)
