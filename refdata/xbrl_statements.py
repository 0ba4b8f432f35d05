"""Statement rows from XBRL facts: the annual and fiscal-quarter rows of every ticker with facts, point in time.

Every row is dated by its anchor, the filing that first reported the period, and uses only facts filed by then:
a later restatement never leaks into an earlier row. Quarters are labelled by the filer's fiscal calendar (the
number of 3-month steps from the start of the fiscal year), never by the calendar month.
"""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from refdata.common import adjust_facts_for_splits, tuples
from refdata.concepts import CONCEPTS, FLOW_FIELDS, INSTANT_FIELDS, MAX_FILING_LAG, SHARE_COUNTS, fiscal_label
from refdata.stage import Context, Stage, intermediate
from refdata.statements import derive_fields

#: the flows whose first report dates a period (the filing that first gave its revenue or net income)
_ANCHORS = set(CONCEPTS["revenue"] + CONCEPTS["net_income"])


def fiscal_calendar(facts: pd.DataFrame) -> pd.DataFrame:
    """Fiscal years (start, end) per ticker with the fact of the filing that first reported each (its anchor)."""
    flows = facts[facts["concept"].isin(_ANCHORS) & (facts["kind"] == "FY")]
    flows = flows.sort_values(["ticker", "end", "filed", "accn"], kind="stable")
    years = flows.drop_duplicates(["ticker", "end"], keep="first")
    return years.reset_index(drop=True)


def _lag_ok(anchor, end) -> bool:
    return anchor is not None and 1 <= (anchor.filed - end).days <= MAX_FILING_LAG


def _pick(facts_by_key: dict, field: str, start, end, cutoff):
    """First concept of ``field`` with a fact for exactly (start, end) (instant: end only) filed by ``cutoff``."""
    for concept in CONCEPTS[field]:
        hit = facts_by_key.get((concept, None if field in INSTANT_FIELDS else start, end))
        if hit is not None and hit.filed <= cutoff:
            return hit
    return None


def _quarter_anchors(anchors: list, fy_start, fy_end) -> list:
    """The anchor facts of fiscal quarters 1-3 (None where the data has no report for the quarter).

    Quarter n ends about 3n months after the fiscal year starts (52/53-week calendars move ends by days, so a
    report is matched within 20 days). A quarter is reported by a 3-month flow starting in the year or by a
    year-to-date flow starting on the first day of the year; of several reports, the first filed wins.
    """
    out = []
    for n in (1, 2, 3):
        expected = fy_start + pd.DateOffset(months=3 * n) - pd.Timedelta(days=1)
        cands = [
            f
            for f in anchors
            if abs((f.end - expected).days) <= 20
            and (
                (f.kind == "Q" and f.start >= fy_start - pd.Timedelta(days=5))
                or (f.start == fy_start and f.kind in ("Q", "H", "9M"))
            )
        ]
        out.append(min(cands, key=lambda f: (f.filed, str(f.accn), f.end)) if cands else None)
    return out


def build_statements(facts: pd.DataFrame) -> pd.DataFrame:
    """Annual and quarterly statement rows (+ filing metadata) for every ticker with facts.

    Every row is dated by its anchor, the filing that first reported the period, and uses only facts filed by
    then: a later restatement never leaks into an earlier row. Quarters are labelled by the filer's fiscal
    calendar (the number of 3-month steps from the start of the fiscal year), never by the calendar month.
    """
    out_rows: list[dict] = []
    for ticker, tf in facts.groupby("ticker", sort=True):
        by_key = {}
        for r in tuples(tf):
            by_key[(r.concept, None if pd.isna(r.start) else r.start, r.end)] = r
        durations = _index_durations(by_key)
        anchors = [r for r in tuples(tf) if r.concept in _ANCHORS and r.kind is not None]
        for y in tuples(fiscal_calendar(tf)):
            fy_start, fy_end, label = y.start, y.end, fiscal_label(y.end)
            if _lag_ok(y, fy_end):
                rec = _statement_row(ticker, by_key, fy_start, fy_end, "annual", f"FY{label}", y)
                if rec:
                    out_rows.append(rec)
            qa = _quarter_anchors(anchors, fy_start, fy_end)
            q4 = [f for f in anchors if f.end == fy_end and f.kind == "Q"] + [y]
            qa.append(min(q4, key=lambda f: (f.filed, str(f.accn))))
            for qi, anchor in enumerate(qa, start=1):
                if anchor is None or not _lag_ok(anchor, anchor.end):
                    continue
                prev = qa[qi - 2].end if qi > 1 and qa[qi - 2] is not None else None
                rec = _quarter_row(ticker, by_key, durations, fy_start, anchor.end, prev, qi, label, anchor)
                if rec:
                    out_rows.append(rec)
    df = pd.DataFrame(out_rows)
    df = _fix_share_scale(df)
    return derive_fields(_q4_closes_the_year(df))


def _q4_closes_the_year(df: pd.DataFrame) -> pd.DataFrame:
    """A fiscal Q4's flows = the year's - the three first-reported quarters of the same fiscal year.

    So the four quarters always add up to the year (FY - 9M would differ where a quarter was restated before the
    9M report).
    """
    flows = [f for f in FLOW_FIELDS if f in df.columns]
    label = df["fiscal_period"].astype(str)
    year = label.str.extract(r"^(FY\d{4})")[0]
    q = df[df["period"] == "quarterly"]
    for (ticker, fy), g in q.groupby([q["ticker"], year[q.index]]):
        n = label[g.index].str[-1]
        if sorted(n) != ["1", "2", "3", "4"]:
            continue
        annual = df[(df["ticker"] == ticker) & (df["period"] == "annual") & (label == fy)]
        if len(annual) != 1:
            continue
        q4 = g.index[n == "4"][0]
        first3 = g.loc[n != "4", flows]
        df.loc[q4, flows] = (annual.iloc[0][flows] - first3.sum(min_count=3)).to_numpy(dtype=float)
    return df


def _meta(anchor) -> dict:
    """Filing metadata of a statement row: the filing that first reported its period."""
    return {"filing_date": anchor.filed, "accession_number": anchor.accn, "form_type": anchor.form}


def _statement_row(ticker, by_key, start, end, period, fiscal_period, anchor) -> dict | None:
    rec: dict = {
        "ticker": ticker,
        "report_period": end,
        "period": period,
        "fiscal_period": fiscal_period,
        "currency": "USD",
    }
    for field in CONCEPTS:
        f = _pick(by_key, field, start, end, anchor.filed)
        if f is not None:
            rec[field] = float(f.val)
    if "revenue" not in rec and "net_income" not in rec:
        return None
    rec.update(_meta(anchor))
    return rec


def _quarter_row(ticker, by_key, durations, fy_start, q_end, prev_end, qi, fy_label, anchor) -> dict | None:
    """A fiscal quarter's row: direct 3-month facts, else YTD(q_end) - YTD(prev_end); instants at q_end.

    Only facts filed by the anchor's filing are used; a derived Q4 is FY - 9M of the same fiscal year.
    """
    cutoff = anchor.filed
    rec: dict = {
        "ticker": ticker,
        "report_period": q_end,
        "period": "quarterly",
        "fiscal_period": f"FY{fy_label}-Q{qi}",
        "currency": "USD",
    }
    for field in CONCEPTS:
        if field in INSTANT_FIELDS:
            hit = _pick(by_key, field, None, q_end, cutoff)
            if hit is not None:
                rec[field] = float(hit.val)
            continue
        direct = None
        for c in CONCEPTS[field]:
            for f in durations.get((c, q_end), ()):
                if f.kind == "Q" and f.filed <= cutoff and f.start >= fy_start - pd.Timedelta(days=5):
                    direct = f
                    break
            if direct is not None:
                break
        if direct is not None:
            rec[field] = float(direct.val)
            continue
        cur = _pick(by_key, field, fy_start, q_end, cutoff)
        if field in SHARE_COUNTS:  # not additive: a quarter not reported directly has no share count of its own
            continue
        if cur is None:
            continue
        if qi == 1:
            if cur.kind == "Q":
                rec[field] = float(cur.val)
            continue
        if prev_end is None:
            continue
        prev = _pick(by_key, field, fy_start, prev_end, cutoff)
        if prev is None or prev.kind is None:
            continue
        rec[field] = float(cur.val) - float(prev.val)
    if "revenue" not in rec and "net_income" not in rec:
        return None
    rec.update(_meta(anchor))
    return rec


def _fix_share_scale(df: pd.DataFrame) -> pd.DataFrame:
    """Share counts tagged in thousands, scaled by 1,000 (documented in CONCEPTS.md).

    NVDA's early XBRL reads 550,108 for 550 million shares: where EPS x shares x 1,000 gives net income within 3%
    (and x 1 does not), the count is scaled.
    """
    if df.empty:
        return df
    ni = df["net_income"]
    for eps, shares in (
        ("earnings_per_share", "weighted_average_shares"),
        ("earnings_per_share_diluted", "weighted_average_shares_diluted"),
    ):
        if eps not in df.columns or shares not in df.columns:
            continue
        implied = df[eps] * df[shares]
        thousands = ((implied * 1000 - ni).abs() <= 0.03 * ni.abs()) & ((implied - ni).abs() > 0.5 * ni.abs())
        df.loc[thousands, shares] = df.loc[thousands, shares] * 1000
    return df


def _index_durations(by_key: dict) -> dict:
    """Duration facts by (concept, end), to find the facts ending on a date."""
    idx = defaultdict(list)
    for (c, s, e), f in by_key.items():
        if s is not None:
            idx[(c, e)].append(f)
    return idx


def _xbrl_statements(ctx: Context) -> dict[str, pd.DataFrame]:
    return {"xbrl_statements": build_statements(adjust_facts_for_splits(ctx["facts"], ctx["splits"]))}


XBRL_STATEMENTS = Stage(
    "xbrl_statements",
    "Annual and quarterly statement rows from the first-reported XBRL facts, on the split basis",
    _xbrl_statements,
    needs=("facts", "splits"),
    outputs=(intermediate("xbrl_statements"),),
)

STAGES = (XBRL_STATEMENTS,)
