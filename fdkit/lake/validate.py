"""Invariants a Parquet lake must satisfy before anyone backtests on it.

Each :class:`Invariant` reads the datasets it needs from a lake and returns the rows that violate it (an empty
frame when the lake is sound). :func:`validate` runs every invariant whose datasets the lake holds and reports one
line per invariant with its violation count; ``fdkit lake validate DIR`` prints that report and exits 1 on any
violation, so a mirrored lake can be checked the same way as the bundled one (CI runs it on ``data/``).

The invariants check the data against the rules of accounting and of markets, never against values computed
from the same lake by the same code: a balance sheet balances, quarters tile their fiscal year, per-share figures
times share counts give totals, a price series has no unexplained jumps, a 13F value divided by its share count
is near the market price, and identifiers join across datasets.

Example:
    >>> from fdkit.lake import default_data_dir
    >>> report = validate(default_data_dir(), only=["volumes_are_counts"])
    >>> [(r.name, r.violations) for r in report]
    [('volumes_are_counts', 0)]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fdkit.frames.basis import as_traded, split_like
from fdkit.frames.names import same_name
from fdkit.frames.neighbours import neighbour_median
from fdkit.lake.reader import LakeReader
from fdkit.lake.reviewed import reviewed_facts
from fdkit.research.sessions import EASTERN, edgar_filing_date

__all__ = ["INVARIANTS", "Invariant", "Result", "UnreadableDataset", "validate", "format_report"]

#: flows whose four quarters must add up to the fiscal year, and whose TTM is the sum of four quarters
FLOWS = ("revenue", "net_income", "operating_income", "net_cash_flow_from_operations")
#: statement header columns that identify a row and must never be empty
#: (the accession number is not among them: some sources name none, and the filing URL then finds the filing)
IDENTIFIERS = ("cik", "filing_url", "filing_date", "form_type", "fiscal_period")


class UnreadableDataset(Exception):  # noqa: N818 - a finding, not a failure of the validator
    """A dataset of the lake cannot be read: its files named, each with why.

    Attributes:
        dataset: the dataset's name.
        files: ``(path relative to the lake, why)`` of each file that cannot be read (empty: the dataset as a whole).
        reason: what reading the dataset raised, one line.

    Example:
        >>> str(UnreadableDataset("prices", [("prices/part-0.parquet", "not a Parquet file")], "OSError: ..."))
        "dataset 'prices' cannot be read: prices/part-0.parquet (not a Parquet file)"
    """

    def __init__(self, dataset: str, files: list[tuple[str, str]], reason: str) -> None:
        self.dataset, self.files, self.reason = dataset, files, reason
        named = "; ".join(f"{path} ({why})" for path, why in files) or reason
        super().__init__(f"dataset {dataset!r} cannot be read: {named}")


#: what reading a damaged file raises (pyarrow's errors, the OS's, deltalake's and the decoders' value errors)
_READ_ERRORS: tuple[type[BaseException], ...] = (OSError, ValueError, KeyError, IndexError, RuntimeError)


def _one_line(exc: BaseException, most: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:most] + ("..." if len(text) > most else "")


def _unreadable_files(root: Path, name: str) -> list[tuple[str, str]]:
    """The files of dataset ``name`` that cannot be read whole, each with why (read one by one)."""
    import pyarrow.parquet as pq

    from fdkit.lake.io import DatasetFiles

    try:
        listing = DatasetFiles.of(root, name)
    except _READ_ERRORS as exc:
        return [(name, f"its files cannot be listed: {_one_line(exc)}")]
    bad = []
    for path in listing.files:
        try:
            pq.read_table(str(path), filesystem=listing.filesystem)
        except _READ_ERRORS as exc:
            try:
                shown = str(Path(str(path)).relative_to(root))
            except ValueError:
                shown = str(path)
            why = _one_line(exc, 400).split("': ")[-1]  # (pyarrow names the path first: it is named already)
            bad.append((shown, why[:160]))
    return bad


class Lake:
    """Lazy, memoised reads of one lake's datasets (each read once per validation run).

    A dataset that cannot be read raises :class:`UnreadableDataset` naming its damaged files (every invariant that
    needs it reports it; the rest of the lake is still checked).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.reader = LakeReader(self.root)
        self.names = set(self.reader.names())
        self._frames: dict[str, pd.DataFrame] = {}
        self._broken: dict[str, UnreadableDataset] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name in self._broken:
            raise self._broken[name]
        if name not in self._frames:
            try:
                self._frames[name] = self.reader.read(name)
            except _READ_ERRORS as exc:
                self._broken[name] = UnreadableDataset(name, _unreadable_files(self.root, name), _one_line(exc))
                raise self._broken[name] from None
        return self._frames[name]

    def each_statement(self) -> list[tuple[str, pd.DataFrame]]:
        """``(name, frame)`` of each statement dataset the lake holds."""
        return [
            (n, self[n]) for n in ("income_statements", "balance_sheets", "cash_flow_statements") if n in self.names
        ]

    def statements(self) -> pd.DataFrame:
        """Income, balance and cash-flow rows joined on (ticker, period, report_period)."""
        key = ["ticker", "period", "report_period"]
        out = None
        for name in ("income_statements", "balance_sheets", "cash_flow_statements"):
            if name not in self.names:
                continue
            df = self[name].copy()
            df["ticker"], df["period"] = df["ticker"].astype(str), df["period"].astype(str)
            if out is None:
                out = df
            else:
                extra = [c for c in df.columns if c not in out.columns or c in key]
                out = out.merge(df[extra], on=key, how="outer")
        return out if out is not None else pd.DataFrame(columns=key)


@dataclass(frozen=True)
class Invariant:
    """One rule: ``check(lake)`` returns the violating rows (with enough columns to find them)."""

    name: str
    datasets: tuple[str, ...]
    description: str
    check: Callable[[Lake], pd.DataFrame]


@dataclass(frozen=True)
class Result:
    """The outcome of one invariant on one lake (``violations`` is ``None`` when it was not applicable)."""

    name: str
    description: str
    violations: int | None
    examples: pd.DataFrame
    #: why the invariant could not be checked (a dataset it needs cannot be read, or the check itself failed)
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the lake satisfies the invariant (a skipped invariant counts as satisfied; an unchecked one not)."""
        return not self.violations and self.error is None


INVARIANTS: dict[str, Invariant] = {}


def invariant(name: str, *datasets: str) -> Callable[[Callable[[Lake], pd.DataFrame]], Callable]:
    """Register a check under ``name``; its docstring's first line is the report's description."""

    def register(fn: Callable[[Lake], pd.DataFrame]) -> Callable[[Lake], pd.DataFrame]:
        doc = (fn.__doc__ or name).strip().splitlines()[0]
        INVARIANTS[name] = Invariant(name, tuple(datasets), doc, fn)
        return fn

    return register


def _rel(a: pd.Series, b: pd.Series) -> pd.Series:
    """|a - b| relative to |b| (NaN where either is missing)."""
    return (a - b).abs() / b.abs().where(b.abs() > 0)


def _quarters(lake: Lake) -> pd.DataFrame:
    st = lake.statements()
    return st[st["period"] == "quarterly"].sort_values(["ticker", "report_period"]).reset_index(drop=True)


# ------------------------------------------------------------------------------------------------------------------
# statements
# ------------------------------------------------------------------------------------------------------------------
@invariant("balance_sheet_identity", "balance_sheets")
def _balance_sheet(lake: Lake) -> pd.DataFrame:
    """Total assets = total liabilities + shareholders' equity (incl. minority interest) within 0.5%."""
    bs = lake["balance_sheets"]
    gap = _rel(bs["total_liabilities"] + bs["shareholders_equity"], bs["total_assets"])
    bad = gap > 0.005
    return bs.loc[
        bad, ["ticker", "period", "report_period", "total_assets", "total_liabilities", "shareholders_equity"]
    ].assign(gap=gap[bad])


@invariant("unique_statement_rows", "income_statements", "balance_sheets", "cash_flow_statements")
def _unique_rows(lake: Lake) -> pd.DataFrame:
    """One row per (ticker, period, report_period) and per (ticker, period, fiscal_period) in every statement."""
    bad = []
    for name, df in lake.each_statement():
        for key in (["ticker", "period", "report_period"], ["ticker", "period", "fiscal_period"]):
            dup = df[df.duplicated(key, keep=False)]
            bad.append(dup[["ticker", "period", "report_period", "fiscal_period"]].assign(dataset=name))
    return pd.concat(bad, ignore_index=True) if bad else pd.DataFrame()


@invariant("quarters_contiguous", "income_statements")
def _contiguous(lake: Lake) -> pd.DataFrame:
    """Successive quarters are 3 months apart: none doubled, none skipped inside a covered span (13 months)."""
    q = lake["income_statements"]
    q = q[q["period"] == "quarterly"].sort_values(["ticker", "report_period"])
    gap = q.groupby("ticker", observed=True)["report_period"].diff().dt.days
    bad = gap.notna() & ~gap.between(77, 105) & (gap <= 400)
    return q.loc[bad, ["ticker", "report_period", "fiscal_period"]].assign(days_since_previous=gap[bad])


def fiscal_label(report_period: pd.Series, year_ends: pd.DataFrame) -> pd.Series:
    """The fiscal label a quarter end must carry, from its filer's fiscal calendar.

    Args:
        report_period: quarter ends, aligned with ``year_ends``'s ``ticker`` rows.
        year_ends: ``ticker`` and ``report_period`` columns, plus ``fy_end``/``fy_label``: the end and label of the
            fiscal year each quarter falls in.

    Returns:
        ``FY<label>-Q<n>``, where n counts 3-month steps from the previous fiscal year end.
    """
    months = (year_ends["fy_end"] - report_period).dt.days / (365.25 / 12)
    n = 4 - np.round(months / 3).astype("Int64")
    return "FY" + year_ends["fy_label"].astype(str) + "-Q" + n.astype(str)


def _quarter_fiscal_years(lake: Lake) -> pd.DataFrame:
    """Each quarterly income row with the end and label of the fiscal year it falls in (from the annual rows)."""
    inc = lake["income_statements"]
    inc = inc.assign(ticker=inc["ticker"].astype(str), period=inc["period"].astype(str))
    years = inc[inc["period"] == "annual"][["ticker", "report_period", "fiscal_period"]]
    years = years.rename(columns={"report_period": "fy_end", "fiscal_period": "fy_label"})
    years["fy_label"] = years["fy_label"].astype(str).str.removeprefix("FY")
    q = inc[inc["period"] == "quarterly"][["ticker", "report_period", "fiscal_period"]].sort_values("report_period")
    years = years.sort_values("fy_end")
    # the fiscal year a quarter falls in is the first year end on or after it (a few days of 52/53-week slack)
    q = q.assign(_probe=q["report_period"] - pd.Timedelta(days=7))
    merged = pd.merge_asof(q, years, left_on="_probe", right_on="fy_end", by="ticker", direction="forward")
    return merged[merged["fy_end"].notna() & ((merged["fy_end"] - merged["report_period"]).dt.days < 380)]


@invariant("fiscal_labels", "income_statements")
def _fiscal_labels(lake: Lake) -> pd.DataFrame:
    """A quarter is labelled FY<year>-Q<n> by its filer's fiscal calendar (n = 3-month steps into the year)."""
    m = _quarter_fiscal_years(lake)
    want = fiscal_label(m["report_period"], m)
    bad = m["fiscal_period"].astype(str) != want
    return m.loc[bad, ["ticker", "report_period", "fiscal_period", "fy_end"]].assign(expected=want[bad])


@invariant("quarters_sum_to_year", "income_statements", "cash_flow_statements")
def _quarters_sum(lake: Lake) -> pd.DataFrame:
    """Q1+Q2+Q3+Q4 = fiscal year for flows (revenue, net income, operating income, operating cash flow), 0.5%."""
    st = lake.statements()
    annual = st[st["period"] == "annual"]
    q = _quarters(lake)
    years = _quarter_fiscal_years(lake)[["ticker", "report_period", "fy_end"]]
    q = q.merge(years, on=["ticker", "report_period"], how="inner")
    counts = q.groupby(["ticker", "fy_end"]).size().rename("quarters")
    cols = [c for c in FLOWS if c in q.columns]
    sums = q.groupby(["ticker", "fy_end"])[cols].sum(min_count=4)
    sums = sums.join(counts)
    sums = sums[sums["quarters"] == 4]
    a = annual.set_index(["ticker", "report_period"])[cols]
    a.index = a.index.set_names(["ticker", "fy_end"])
    joined = sums.join(a.add_suffix("_fy"), how="inner")
    bad = []
    for c in cols:
        err = (joined[c] - joined[f"{c}_fy"]).abs()
        off = (err > 0.005 * joined[f"{c}_fy"].abs()) & (err > 1e6)
        bad.append(
            joined.loc[off, [c, f"{c}_fy"]]
            .rename(columns={c: "quarters", f"{c}_fy": "year"})
            .assign(field=c)
            .reset_index()
        )
    return pd.concat(bad, ignore_index=True)


@invariant("ttm_is_last_four_quarters", "income_statements")
def _ttm(lake: Lake) -> pd.DataFrame:
    """A TTM row equals the sum of the four quarters ending at its report period, where the lake's quarters reach back.

    A TTM row of a ticker whose quarters in the lake begin inside its twelve months (its first filings landed by
    webhook, the earlier quarters never held) has nothing to be checked against and is not a violation; a TTM row
    whose quarters the lake does reach back to must equal their sum.
    """
    inc = lake["income_statements"]
    inc = inc.assign(ticker=inc["ticker"].astype(str), period=inc["period"].astype(str))
    q = inc[inc["period"] == "quarterly"].sort_values(["ticker", "report_period"])
    first_quarter = q.groupby("ticker")["report_period"].min()
    cols = [c for c in ("revenue", "net_income") if c in q.columns]
    rolled = q.groupby("ticker")[cols].rolling(4, min_periods=4).sum().reset_index(level=0, drop=True)
    span = q.groupby("ticker")["report_period"].diff(3).dt.days
    ref = q[["ticker", "report_period"]].assign(**{c: rolled[c] for c in cols}, span=span)
    ttm = inc[inc["period"] == "ttm"][["ticker", "report_period", *cols]]
    if ttm.empty or q.empty:  # no TTM rows, or no quarters to check them against (an annual-only lake)
        return ttm.iloc[0:0]
    # the first of the four quarters ends about nine months (273 days) before the TTM's report period
    held = ttm["ticker"].map(first_quarter) <= ttm["report_period"] - pd.Timedelta(days=250)
    ttm = ttm[held.fillna(False).astype(bool)]
    m = ttm.merge(ref, on=["ticker", "report_period"], how="left", suffixes=("", "_q"))
    bad = m["span"].isna() | ~m["span"].between(250, 300)
    for c in cols:
        bad |= _rel(m[c], m[f"{c}_q"]).gt(1e-9) & m[c].notna()
    return m.loc[bad]


@invariant("filed_after_period_for_that_period", "income_statements", "balance_sheets", "cash_flow_statements")
def _filed_after(lake: Lake) -> pd.DataFrame:
    """filing_date is after report_period and within 200 days of it (the period's own report, not a comparative)."""
    bad = []
    for name, df in lake.each_statement():
        lag = (df["filing_date"] - df["report_period"]).dt.days
        off = lag.isna() | (lag < 1) | (lag > 200)
        bad.append(df.loc[off, ["ticker", "period", "report_period", "filing_date"]].assign(dataset=name, lag=lag[off]))
    return pd.concat(bad, ignore_index=True)


@invariant("filing_date_follows_acceptance", "income_statements", "earnings")
def _acceptance(lake: Lake) -> pd.DataFrame:
    """EDGAR's filing-date rule holds for every acceptance time (17:30 ET cut-off): a wrong time zone breaks it."""
    bad = []
    for name in ("income_statements", "earnings"):
        df = lake[name].dropna(subset=["filing_datetime"])
        at = pd.to_datetime(df["filing_datetime"].astype(str), format="ISO8601", utc=True).dt.tz_convert(EASTERN)
        off = edgar_filing_date(at) != df["filing_date"]
        bad.append(df.loc[off, ["ticker", "report_period", "filing_date", "filing_datetime"]].assign(dataset=name))
    return pd.concat(bad, ignore_index=True)


@invariant("eps_times_shares_is_net_income", "income_statements")
def _eps_shares(lake: Lake) -> pd.DataFrame:
    """EPS x weighted shares = net income to common within 3% (basic and diluted; |net income| > $50m)."""
    inc = lake["income_statements"]
    inc = inc[inc["period"].astype(str) != "ttm"]
    ni = inc["net_income_common_stock"].fillna(inc["net_income"])
    bad = []
    for eps, shares in (
        ("earnings_per_share", "weighted_average_shares"),
        ("earnings_per_share_diluted", "weighted_average_shares_diluted"),
    ):
        gap = _rel(inc[eps] * inc[shares], ni)
        # EPS is rounded to the cent: allow one cent of rounding on top of 3%
        rounding = 0.005 * inc[shares] / ni.abs()
        off = (gap > 0.03 + rounding) & (ni.abs() > 5e7)
        bad.append(
            inc.loc[off, ["ticker", "period", "report_period", eps, shares]].assign(net_income=ni[off], gap=gap[off])
        )
    return pd.concat(bad, ignore_index=True)


def documented_share_moves() -> set[tuple[str, str]]:
    """(ticker, report period) of quarterly weighted share counts that really moved more than 35%.

    The reviewed-facts table's ``share_move`` rows (:mod:`fdkit.lake.reviewed`), each with its reason: ACE (now
    Chubb Limited) issued about 135 million shares to acquire the Chubb Corporation on 2016-01-14. Adding one is a
    row.

    Example:
        >>> ("CB", "2016-03-31") in documented_share_moves()
        True
    """
    rows = reviewed_facts("share_move")
    return set(zip(rows["ticker"].astype(str), rows["start_date"].astype(str), strict=True))


@invariant("share_counts_on_one_basis", "income_statements")
def _share_basis(lake: Lake) -> pd.DataFrame:
    """quarter-to-quarter weighted share counts move less than 35% (an unadjusted split shows as a 2x+ jump)."""
    q = lake["income_statements"]
    q = q[q["period"] == "quarterly"].sort_values(["ticker", "report_period"])
    by_ticker = q.groupby("ticker", observed=True)
    ratio = q["weighted_average_shares"] / by_ticker["weighted_average_shares"].shift()
    # successive quarters only: across a gap of years (another source, another era) counts move for real
    successive = by_ticker["report_period"].diff().dt.days <= 105
    documented = documented_share_moves()
    known = pd.Series(
        [(str(t), f"{d:%Y-%m-%d}") in documented for t, d in zip(q["ticker"], q["report_period"], strict=True)],
        index=q.index,
    )
    bad = ratio.notna() & ~ratio.between(1 / 1.35, 1.35) & successive & ~known
    return q.loc[bad, ["ticker", "report_period", "weighted_average_shares"]].assign(ratio=ratio[bad])


@invariant("eps_on_the_split_basis", "income_statements", "splits")
def _eps_basis(lake: Lake) -> pd.DataFrame:
    """Across a split, quarterly EPS does not move by the split's ratio unless net income does too."""
    q = lake["income_statements"]
    q = q[q["period"].astype(str) == "quarterly"].sort_values(["ticker", "report_period"])
    q = q.assign(ticker=q["ticker"].astype(str), eps=q["earnings_per_share_diluted"].fillna(q["earnings_per_share"]))
    q["eps_prev"] = q.groupby("ticker")["eps"].shift()
    q["ni_prev"] = q.groupby("ticker")["net_income"].shift()
    q["filed_prev"] = q.groupby("ticker")["filing_date"].shift()
    sp = lake["splits"]
    sp = sp[sp["ratio"] >= 1.5].assign(ticker=sp["ticker"].astype(str), ex=pd.to_datetime(sp["date"]))
    m = q.merge(sp[["ticker", "ex", "ratio"]], on="ticker")
    m = m[(m["filed_prev"] < m["ex"]) & (m["filing_date"] >= m["ex"])]
    eps_moved = ((m["eps_prev"] / m["eps"]) / m["ratio"]).between(0.85, 1.15)
    ni_moved = ((m["ni_prev"] / m["net_income"]) / m["ratio"]).between(0.85, 1.15)
    bad = eps_moved & ~ni_moved & (m["eps"] > 0) & (m["eps_prev"] > 0)
    return m.loc[bad, ["ticker", "report_period", "ex", "ratio", "eps_prev", "eps"]]


@invariant("statements_are_first_reports", "income_statements", "balance_sheets", "statement_vintages")
def _first_reports(lake: Lake) -> pd.DataFrame:
    """An annual row's revenue, net income and total assets are the first reported vintage, filed by its filing date.

    A row of an amendment (form ``.../A``: a landed 10-K/A replaces the row it amends) is instead its own filing's
    vintage (the value filed on its filing date).
    """
    v = lake["statement_vintages"]
    v = v.assign(ticker=v["ticker"].astype(str), field=v["field"].astype(str), period=v["period"].astype(str))
    first = v.sort_values("filing_date", kind="stable").drop_duplicates(["ticker", "field", "period", "report_period"])
    bad = []
    for name, field, period in (
        ("income_statements", "revenue", "annual"),
        ("income_statements", "net_income", "annual"),
        ("balance_sheets", "total_assets", "instant"),
    ):
        df = lake[name]
        df = df[df["period"].astype(str) == "annual"]
        amended = df["form_type"].astype(str).str.endswith("/A") if "form_type" in df.columns else False
        df = df.assign(amended=amended)[["ticker", "report_period", "filing_date", "amended", field]].dropna()
        df = df.assign(ticker=df["ticker"].astype(str))
        f = first[(first["field"] == field) & (first["period"] == period)]
        m = df.merge(
            f[["ticker", "report_period", "value", "filing_date"]],
            on=["ticker", "report_period"],
            how="left",
            suffixes=("", "_first"),
        )
        own = v[(v["field"] == field) & (v["period"] == period)][["ticker", "report_period", "filing_date", "value"]]
        m = m.merge(
            own.rename(columns={"value": "value_own"}), on=["ticker", "report_period", "filing_date"], how="left"
        ).drop_duplicates(["ticker", "report_period", "filing_date"])
        off_first = (
            m["value"].isna() | (m["filing_date_first"] > m["filing_date"]) | (_rel(m[field], m["value"]) > 1e-9)
        )
        off_amended = (
            m["value_own"].isna()
            | (_rel(m[field], m["value_own"]) > 1e-9)
            | ~(m["filing_date_first"] < m["filing_date"])
        )
        off = off_amended.where(m["amended"].astype(bool), off_first)
        bad.append(m.loc[off].assign(field=field))
    return pd.concat(bad, ignore_index=True)


@invariant("free_cash_flow_formula", "cash_flow_statements")
def _fcf(lake: Lake) -> pd.DataFrame:
    """Free cash flow = operating cash flow + capital expenditure, missing when either input is missing."""
    cf = lake["cash_flow_statements"]
    want = cf["net_cash_flow_from_operations"] + cf["capital_expenditure"]
    bad = (cf["free_cash_flow"].isna() != want.isna()) | (_rel(cf["free_cash_flow"], want) > 1e-9)
    return cf.loc[
        bad,
        ["ticker", "period", "report_period", "net_cash_flow_from_operations", "capital_expenditure", "free_cash_flow"],
    ]


@invariant("identifiers_present", "income_statements", "balance_sheets", "cash_flow_statements")
def _identifiers(lake: Lake) -> pd.DataFrame:
    """Every statement row names its cik, filing URL, filing date, form and fiscal period (cik: where it is known).

    The cik and the filing URL wherever the lake knows the filer's CIK for the row's period: the index spell
    covering it, else company facts (a company of 2015-2017 known only by a spell without a CIK, CBS under today's
    SKYD, may have none).
    """
    facts = lake["company_facts"] if "company_facts" in lake.names else pd.DataFrame(columns=["ticker", "cik"])
    by_facts = set(facts.loc[facts["cik"].notna(), "ticker"].astype(str))
    spells = lake["index_membership"] if "index_membership" in lake.names else None
    bad = []
    for name, df in lake.each_statement():
        if "period" in df.columns:  # a TTM row is no single filing's: it has no form type
            df = df[df["period"].astype(str) != "ttm"]
        cols = [c for c in IDENTIFIERS if c in df.columns]
        empty = df[cols].isna() | (df[cols].astype("string") == "")
        unknown = ~_cik_known(df, spells, by_facts)
        for c in ("cik", "filing_url"):
            if c in empty.columns:
                empty.loc[unknown, c] = False
        off = empty.any(axis=1)
        missing = [",".join(c for c, e in zip(cols, row, strict=True) if e) for row in empty[off].to_numpy()]
        bad.append(df.loc[off, ["ticker", "period", "report_period"]].assign(dataset=name, missing=missing))
    return pd.concat(bad, ignore_index=True)


def _cik_known(rows: pd.DataFrame, spells: pd.DataFrame | None, by_facts: set[str]) -> pd.Series:
    """Whether the lake knows each statement row's filer CIK.

    A spell covering its period has one, else (no spell covers it) company facts have one for the ticker.
    """
    ticker = rows["ticker"].astype(str)
    known = ticker.isin(by_facts)
    if spells is None:
        return known
    sp = spells.assign(t=spells["current_ticker"].astype(str), stop=spells["end_date"].fillna(pd.Timestamp.max))
    keys = pd.DataFrame(
        {"t": ticker.to_numpy(), "day": pd.to_datetime(rows["report_period"]).to_numpy(), "_row": range(len(rows))}
    )
    m = keys.merge(sp[["t", "start_date", "stop", "cik"]], on="t")
    m = m[(m["start_date"] <= m["day"]) & (m["day"] <= m["stop"])]
    has_cik = m.assign(has=m["cik"].notna()).groupby("_row")["has"].max()
    out = known.to_numpy().copy()
    out[has_cik.index.to_numpy()] = np.asarray(has_cik, dtype=bool)
    return pd.Series(out, index=rows.index)


#: datasets whose accession is not the company's own filing (a 13F is the manager's, over many issuers)
NOT_THE_COMPANYS_FILING = ("institutional_ownership",)


@invariant("accessions_name_one_company", "filings")
def _accessions(lake: Lake) -> pd.DataFrame:
    """Every accession number is 10-2-6 digits and names one company's filing across the datasets (13F aside)."""
    bad: list[dict[str, str]] = []
    owners: dict[str, set[str]] = {}
    for name in sorted(lake.names - set(NOT_THE_COMPANYS_FILING)):
        df = lake[name]
        if "accession_number" not in df.columns or "ticker" not in df.columns:
            continue
        pairs = df[["ticker", "accession_number"]].dropna().astype(str).drop_duplicates()
        malformed = pairs[~pairs["accession_number"].str.fullmatch(r"\d{10}-\d{2}-\d{6}")]
        bad.extend(
            {"dataset": name, "accession_number": a, "problem": "not 10-2-6 digits"}
            for a in malformed["accession_number"]
        )
        for ticker, accession in zip(pairs["ticker"], pairs["accession_number"], strict=True):
            owners.setdefault(accession, set()).add(ticker)
    bad.extend(
        {"dataset": "*", "accession_number": a, "problem": f"tickers {sorted(t)}"}
        for a, t in owners.items()
        if len(t) > 1
    )
    return pd.DataFrame(bad)


@invariant("tickers_join_across_datasets", "company_facts")
def _tickers_join(lake: Lake) -> pd.DataFrame:
    """One spelling per company (class shares with '-', never '.') and one CIK per ticker across datasets."""
    bad: list[dict[str, str]] = []
    ciks: dict[str, set[str]] = {}
    for name in sorted(lake.names):
        df = lake[name]
        if "ticker" not in df.columns:
            continue
        t = pd.Series(df["ticker"].astype(str).unique())
        dotted = t[t.str.contains(".", regex=False) & ~t.str.endswith("-USD")]
        bad.extend({"dataset": name, "ticker": x, "problem": "'.' in ticker"} for x in dotted)
        if "cik" in df.columns:  # a spell's company is served under its current_ticker (the symbol of its day aside)
            served = df["current_ticker"] if "current_ticker" in df.columns else df["ticker"]
            pairs = pd.DataFrame({"ticker": served, "cik": df["cik"]}).dropna().astype(str).drop_duplicates()
            for tk, ck in zip(pairs["ticker"], pairs["cik"].str.lstrip("0"), strict=True):
                if ck:
                    ciks.setdefault(tk, set()).add(ck)
    bad.extend({"dataset": "*", "ticker": t, "problem": f"CIKs {sorted(c)}"} for t, c in ciks.items() if len(c) > 1)
    return pd.DataFrame(bad)


def _spells(lake: Lake) -> pd.DataFrame:
    m = lake["index_membership"]
    m = pd.DataFrame(
        {c: m[c].astype("string") for c in ("index", "ticker", "name", "cik", "current_ticker")}
        | {"start": m["start_date"], "end": m["end_date"].fillna(pd.Timestamp("2200-01-01"))}
    )
    return m.reset_index(drop=True).reset_index(names="row")


@invariant("one_company_per_ticker_and_cik", "index_membership", "company_facts")
def _one_company(lake: Lake) -> pd.DataFrame:
    """A company is in one index at a time; tickers sharing a CIK on one day (or in company facts) are share classes.

    Share classes of one company (GOOG and GOOGL) name it alike; two companies under one CIK, or one company in
    the S&P 500 and 400 at once, are a join on the symbol alone.
    """
    m = _spells(lake)
    j = m.merge(m, on="current_ticker")
    j = j[(j["row_x"] < j["row_y"]) & (j["start_x"] <= j["end_y"]) & (j["start_y"] <= j["end_x"])]
    bad = [
        {"ticker": t, "cik": pd.NA, "problem": f"spells overlap: {a} {s1:%Y-%m-%d} and {b} {s2:%Y-%m-%d}"}
        for t, a, s1, b, s2 in zip(
            j["current_ticker"], j["index_x"], j["start_x"], j["index_y"], j["start_y"], strict=True
        )
    ]
    c = m.dropna(subset=["cik"])
    j = c.merge(c, on="cik")
    j = j[(j["row_x"] < j["row_y"]) & (j["current_ticker_x"] != j["current_ticker_y"])]
    j = j[(j["start_x"] <= j["end_y"]) & (j["start_y"] <= j["end_x"])]
    bad += [
        {"ticker": f"{a}/{b}", "cik": k, "problem": f"one CIK, two companies: {x!r}, {y!r}"}
        for a, b, k, x, y in zip(
            j["current_ticker_x"], j["current_ticker_y"], j["cik"], j["name_x"], j["name_y"], strict=True
        )
        if not same_name(x, y)
    ]
    cf = lake["company_facts"].dropna(subset=["cik"])
    for cik, g in cf.groupby(cf["cik"].astype(str)):
        names = g["name"].astype(str).tolist()
        if any(not same_name(names[0], n) for n in names[1:]):
            bad.append({"ticker": "/".join(g["ticker"].astype(str)), "cik": cik, "problem": f"names {names}"})
    return pd.DataFrame(bad, columns=["ticker", "cik", "problem"])


def renamed_companies() -> set[tuple[str, str]]:
    """(CIK, a spell's name) where the name differs from the CIK's others because the company renamed itself.

    The reviewed-facts table's ``renamed_company`` rows (:mod:`fdkit.lake.reviewed`): Leucadia National, renamed
    Jefferies Financial Group in 2018; National Oilwell Varco, renamed NOV Inc. in 2021; Energizer Holdings,
    renamed Edgewell Personal Care in 2015. Adding one is a row.

    Example:
        >>> ("0001021860", "NOV Inc.") in renamed_companies()
        True
    """
    rows = reviewed_facts("renamed_company")
    return set(zip(rows["cik"].astype(str), rows["value"].astype(str), strict=True))


@invariant("names_match_their_cik", "index_membership", "company_facts")
def _names_of_a_cik(lake: Lake) -> pd.DataFrame:
    """Every name the lake gives a CIK (spells, company facts) is its company's, or the company renamed itself.

    A spell's name is the company's at the time (the index's change list); it is held against the CIK's name in
    company facts, else against the name of the CIK's latest spell. A CIK named otherwise was found by the symbol
    alone (Leucadia's CIK on Jefferies Group's spell of 2011-2013).
    """
    m = _spells(lake).dropna(subset=["cik", "name"]).sort_values("start")
    cf = lake["company_facts"].dropna(subset=["cik"])
    reference = {str(k): str(n) for k, n in m.groupby("cik", observed=True)["name"].last().items()}
    reference |= dict(zip(cf["cik"].astype(str), cf["name"].astype(str), strict=True))
    known = m["cik"].astype(str).map(reference)
    renamed = renamed_companies()
    agree = [same_name(n, k) or (str(c), str(n)) in renamed for c, n, k in zip(m["cik"], m["name"], known, strict=True)]
    off = ~np.array(agree, dtype=bool)
    return m.loc[off, ["index", "ticker", "cik", "name", "start"]].assign(reference_name=known[off])


@invariant("pe_matches_price_over_eps", "financial_metrics", "income_statements", "prices")
def _pe(lake: Lake) -> pd.DataFrame:
    """Served P/E within 1% of (last close on or before the period end) / a year's diluted (else basic) EPS.

    A year's EPS: the row's, or on a quarterly row the sum of its four trailing quarters' (missing if one is).
    """
    from fdkit.research.ratios import price_on_or_before, trailing_year

    fm = lake["financial_metrics"]
    inc = lake["income_statements"][
        ["ticker", "period", "report_period", "earnings_per_share", "earnings_per_share_diluted", "net_income"]
    ]
    inc = inc.assign(eps=inc["earnings_per_share_diluted"].fillna(inc["earnings_per_share"])).reset_index(drop=True)
    inc["eps"] = trailing_year(inc, {"eps": inc["eps"]})["eps"]
    m = fm[["ticker", "period", "report_period", "price_to_earnings_ratio"]].merge(
        inc, on=["ticker", "period", "report_period"], how="inner"
    )
    price = price_on_or_before(m, lake["prices"])
    eps = m["eps"]
    want = price / eps
    off = want.notna() & (eps > 0)
    off &= ~(_rel(m["price_to_earnings_ratio"], want) <= 0.01)
    return m.loc[off].assign(price=price[off], expected=want[off])


@invariant("market_cap_matches_price_times_shares", "company_facts", "prices", "balance_sheets")
def _market_cap(lake: Lake) -> pd.DataFrame:
    """Company facts' market cap within 5% of the last close x the last reported shares outstanding."""
    cf = lake["company_facts"][["ticker", "market_cap"]].dropna()
    bs = lake["balance_sheets"]
    bs = bs[bs["period"].astype(str) == "quarterly"].dropna(subset=["outstanding_shares"])
    # a count reported over ten years before the last close gives no market cap (as company facts take it)
    last_day = lake["prices"].groupby("ticker", observed=True)["time"].max().dt.tz_localize(None)
    recent = bs["report_period"] >= bs["ticker"].map(last_day).astype("datetime64[ns]") - pd.Timedelta(days=10 * 365)
    bs = bs[recent.fillna(True).astype(bool)]
    shares = bs.sort_values("report_period").groupby("ticker", observed=True)["outstanding_shares"].last()
    px = lake["prices"].sort_values("time").groupby("ticker", observed=True)["close"].last()
    m = cf.assign(ticker=cf["ticker"].astype(str))
    m["expected"] = m["ticker"].map(px.rename(index=str)) * m["ticker"].map(shares.rename(index=str))
    return m[m["expected"].notna() & (_rel(m["market_cap"], m["expected"]) > 0.05)]


# ------------------------------------------------------------------------------------------------------------------
# prices
# ------------------------------------------------------------------------------------------------------------------
def reviewed_moves() -> dict[tuple[str, str], str]:
    """The reviewed moves' reasons by (ticker, day): the reviewed-facts table's ``price_move`` rows, as it is now.

    Daily moves beyond +/-25% that really happened (ticker, day of the bar) without a corporate action of the
    lake's own (splits, distributions) or an earnings release of its earnings dataset on the day or the session
    before, each with its reason and evidence (:mod:`fdkit.lake.reviewed`; each printed by a file the lake's bars
    do not come from: tests/test_reference_data.py).

    Example:
        >>> reviewed_moves()[("INTC", "2024-08-02")].startswith("-26% after its Q2 2024 results")
        True
    """
    moves = reviewed_facts("price_move")
    return dict(zip(zip(moves["ticker"], moves["start_date"], strict=True), moves["reason"], strict=True))


#: the largest daily close-to-close move that needs no explanation
MOVE_LIMIT = 0.25
#: the largest move an earnings release explains without review
EARNINGS_MOVE_LIMIT = 0.6


@invariant("daily_moves_explained", "prices")
def _moves(lake: Lake) -> pd.DataFrame:
    """No daily move beyond +/-25%, distributions added back, without an earnings release or a reviewed reason.

    The move is the close over the eve's close less what went ex in between (closes are on one split basis, so a
    split explains nothing); an earnings release explains its day and the next session's bar (after the close),
    up to 60% and not a split's ratio.
    Dividends and earnings are read where the lake has them.
    """
    p = lake["prices"][["ticker", "time", "close"]].sort_values(["ticker", "time"]).reset_index(drop=True)
    p = p.assign(ticker=p["ticker"].astype(str), day=p["time"].dt.tz_convert(None).astype("datetime64[ns]"))
    g = p.groupby("ticker", sort=False)
    prev, prev_close = g["day"].shift(), g["close"].shift()
    r = p["close"] / prev_close - 1
    off = (r.abs() > MOVE_LIMIT) & ((p["day"] - prev).dt.days < 10)  # across a gap in coverage no daily move
    bad = p.loc[off, ["ticker", "day", "close"]].assign(move=r[off], prev=prev[off], eve=prev_close[off])
    paid = pd.Series(0.0, index=bad.index)
    if "dividends" in lake.names:
        d = lake["dividends"]
        d = pd.DataFrame(
            {
                "ticker": d["ticker"].astype(str),
                "ex": pd.to_datetime(d["date"]).astype("datetime64[ns]"),
                "dividend": d["dividend"].astype("float64"),
            }
        )
        on = bad.reset_index().merge(d, on="ticker")
        went = on[(on["ex"] > on["prev"]) & (on["ex"] <= on["day"])].groupby("index")["dividend"].sum()
        paid = paid.add(went, fill_value=0.0)
    net = bad["close"] / (bad["eve"] - paid) - 1
    explained = (net.abs() <= MOVE_LIMIT) & (bad["eve"] > paid)
    if "earnings" in lake.names:
        e = lake["earnings"]
        e = pd.DataFrame(
            {"ticker": e["ticker"].astype(str), "release": pd.to_datetime(e["release_date"]).astype("datetime64[ns]")}
        ).dropna()
        on = bad.reset_index().merge(e, on="ticker")
        released = set(on.loc[(on["release"] >= on["prev"]) & (on["release"] <= on["day"]), "index"])
        # results explain a move, not one beyond 60% or of a split's size (a split the table lacks, on that day)
        plausible = (bad["move"].abs() <= EARNINGS_MOVE_LIMIT) & ~(1 + bad["move"]).map(split_like).astype(bool)
        explained |= bad.index.isin(list(released)) & plausible.to_numpy()
    keys = zip(bad["ticker"], bad["day"].dt.strftime("%Y-%m-%d"), strict=True)
    reviewed = reviewed_moves()
    listed = np.array([k in reviewed for k in keys], dtype=bool)
    out = bad.assign(net_of_distributions=net)
    return out[~(explained.to_numpy() | listed)].drop(columns=["prev", "eve"])


@invariant("splits_applied_to_prices", "splits", "prices")
def _splits_in_prices(lake: Lake) -> pd.DataFrame:
    """No split of the split table shows in prices: the close-to-close move on an ex-date is not the split's ratio."""
    p = lake["prices"][["ticker", "time", "close"]].sort_values(["ticker", "time"])
    p = p.assign(ticker=p["ticker"].astype(str), day=p["time"].dt.tz_convert(None).astype("datetime64[ns]"))
    p["move"] = p["close"] / p.groupby("ticker")["close"].shift()
    sp = lake["splits"]
    sp = sp.assign(ticker=sp["ticker"].astype(str), day=pd.to_datetime(sp["date"]).astype("datetime64[ns]"))
    m = sp.merge(p[["ticker", "day", "move"]], on=["ticker", "day"], how="inner")
    off = (m["move"] * m["ratio"]).between(0.9, 1.1) & ~m["ratio"].between(0.9, 1.1)
    return m.loc[off, ["ticker", "day", "ratio", "move"]]


@invariant("prices_on_one_basis", "prices", "dividends")
def _one_basis(lake: Lake) -> pd.DataFrame:
    """Closes carry no dividend: adj_close / close moves exactly where a distribution goes ex; basis on every row.

    As-traded rows have a close, adjusted-only rows no price; the ratio's steps are allowed the 4-decimal rounding.
    """
    p = lake["prices"][["ticker", "time", "open", "close", "adj_close", "basis"]].sort_values(["ticker", "time"])
    p = p.assign(ticker=p["ticker"].astype(str), day=p["time"].dt.tz_convert(None).astype("datetime64[ns]"))
    traded = as_traded(p["basis"])  # no basis given: the documents' bars, as traded
    problem = pd.Series(pd.NA, index=p.index, dtype="string")
    problem[~(p["basis"].isna() | p["basis"].astype("string").isin(["as_traded", "adjusted_only"]))] = "unknown basis"
    problem[traded & p["close"].isna()] = "as_traded without a close"
    problem[~traded & (p["close"].notna() | p["open"].notna())] = "adjusted_only with a price"
    g = p.groupby("ticker", sort=False)
    prev_close, prev_adj, prev_day = g["close"].shift(), g["adj_close"].shift(), g["day"].shift()
    step = (p["adj_close"] / p["close"]) / (prev_adj / prev_close) - 1
    rounding = 1e-4 * (1 / p["close"] + 1 / p["adj_close"] + 1 / prev_close + 1 / prev_adj)
    moved = step.abs() > rounding
    d = lake["dividends"]
    d = pd.DataFrame({"ticker": d["ticker"].astype(str), "ex": pd.to_datetime(d["date"]).astype("datetime64[ns]")})
    cand = p.loc[moved.fillna(False), ["ticker", "day"]].assign(prev=prev_day[moved.fillna(False)])
    hit = cand.reset_index().merge(d, on="ticker")
    explained = set(hit.loc[(hit["ex"] > hit["prev"]) & (hit["ex"] <= hit["day"]), "index"])
    unexplained = [i for i in cand.index if i not in explained]
    problem[unexplained] = "adj_close / close moved without a distribution"
    # and the converse: a distribution going ex moves adj_close / close by about its share of the close (a close
    # that already carries dividends moves with adj_close and shows none)
    both = p["close"].notna() & p["adj_close"].notna() & prev_close.notna() & prev_adj.notna()
    bars = p.loc[both, ["ticker", "day"]].assign(prev=prev_day[both]).reset_index()
    cash = lake["dividends"].assign(ticker=lake["dividends"]["ticker"].astype(str))
    cash = cash.assign(ex=pd.to_datetime(cash["date"]).astype("datetime64[ns]"))
    on = bars.merge(cash[["ticker", "ex", "dividend"]], on="ticker")
    went_ex: pd.Series = on[(on["ex"] > on["prev"]) & (on["ex"] <= on["day"])].groupby("index")["dividend"].sum()
    share = went_ex / prev_close.reindex(went_ex.index)
    missed = share.index[(share > 4 * rounding.reindex(share.index)) & (step.reindex(share.index) < share / 2)]
    problem[missed] = "a distribution went ex and adj_close / close did not move"
    out = p.assign(problem=problem, step=step)
    return out.loc[problem.notna(), ["ticker", "day", "basis", "close", "adj_close", "step", "problem"]]


@invariant("volumes_are_counts", "prices")
def _volumes(lake: Lake) -> pd.DataFrame:
    """Volumes are whole numbers and never negative."""
    p = lake["prices"]
    v = p["volume"].astype("Float64")
    off = (v < 0) | (v != v.round())
    return p.loc[off.fillna(False).astype(bool), ["ticker", "time", "volume"]]


@invariant("bar_milliseconds_are_their_times", "prices")
def _bar_milliseconds(lake: Lake) -> pd.DataFrame:
    """A bar's stored time_milliseconds is its time in milliseconds since the epoch (the service computes it)."""
    p = lake["prices"]
    if "time_milliseconds" not in p.columns:
        return p.loc[[], ["ticker", "time"]]
    ms = p["time"].astype("datetime64[ms, UTC]").astype("int64")
    off = ms != p["time_milliseconds"].astype("Int64")
    return p.loc[off.fillna(False).astype(bool), ["ticker", "time", "time_milliseconds"]]


@invariant("bars_on_trading_days", "prices")
def _bars(lake: Lake) -> pd.DataFrame:
    """Daily equity bars fall on weekdays, one per ticker and day."""
    p = lake["prices"]
    day = p["time"].dt.tz_convert(None) if p["time"].dt.tz is not None else p["time"]
    weekend = day.dt.day_of_week >= 5
    dup = p.duplicated(["ticker", "time"], keep=False)
    return p.loc[weekend | dup, ["ticker", "time"]].assign(weekend=weekend[weekend | dup])


@invariant("history_says_its_basis", "price_history")
def _history_basis(lake: Lake) -> pd.DataFrame:
    """Every price_history row says its basis, and an adjusted close is never served as close."""
    h = lake["price_history"]
    basis = h["basis"].astype("string")
    wrong = (
        basis.isna()
        | h["adj_close"].isna()
        | h["adjusted_as_of"].isna()
        | ((basis == "adjusted_only") & h["close"].notna())
        | ((basis != "adjusted_only") & h["close"].isna())
    ).fillna(True)
    return h.loc[wrong.to_numpy(dtype=bool), ["ticker", "date", "close", "adj_close", "basis"]]


@invariant("history_one_company_per_ticker_day", "price_history")
def _history_unique(lake: Lake) -> pd.DataFrame:
    """price_history holds one bar per ticker and day, on a weekday (one company per symbol and date)."""
    h = lake["price_history"]
    bad = h.duplicated(["ticker", "date"], keep=False) | (h["date"].dt.day_of_week >= 5)
    return h.loc[bad, ["ticker", "date", "price_source"]]


# ------------------------------------------------------------------------------------------------------------------
# other datasets
# ------------------------------------------------------------------------------------------------------------------
@invariant("no_negative_revenue", "income_statements")
def _negative_revenue(lake: Lake) -> pd.DataFrame:
    """No revenue below zero (a Q4 of mismatched concepts): such a value is served missing, its reason in quality."""
    inc = lake["income_statements"]
    return inc.loc[inc["revenue"] < 0, ["ticker", "period", "report_period", "revenue"]]


@invariant("no_zero_revenue_beside_income", "income_statements")
def _zero_revenue(lake: Lake) -> pd.DataFrame:
    """No revenue of zero beside a non-zero net income (no revenue concept read): served missing, said in quality."""
    inc = lake["income_statements"]
    bad = (inc["revenue"] == 0) & inc["net_income"].notna() & (inc["net_income"] != 0)
    return inc.loc[bad, ["ticker", "period", "report_period", "revenue", "net_income"]]


@invariant("quarter_revenue_in_band_or_marked", "income_statements")
def _quarter_band(lake: Lake) -> pd.DataFrame:
    """A quarter's revenue is within 0.5-2x the median of its ticker's neighbouring quarters, or quality marks it."""
    inc = lake["income_statements"]
    q = inc[inc["period"].astype(str) == "quarterly"].sort_values(["ticker", "report_period"])
    # neighbours within a covered span: quarters years apart (another source, another era) are not neighbours
    span = (
        (q.groupby("ticker", observed=True)["report_period"].diff().dt.days > 400)
        .groupby(q["ticker"], observed=True)
        .cumsum()
    )
    q = q.assign(ticker=q["ticker"].astype(str) + "|" + span.astype(str))
    ratio = q["revenue"] / neighbour_median(q, "revenue")
    quality = q["quality"].astype("string") if "quality" in q.columns else pd.Series(pd.NA, index=q.index)
    marked = quality.str.contains("revenue:", regex=False).fillna(False).astype(bool)
    off = ratio.notna() & ~ratio.between(0.5, 2.0) & ~marked
    return q.loc[off, ["ticker", "report_period", "revenue"]].assign(ratio=ratio[off])


def close_near(keys: pd.DataFrame, prices: pd.DataFrame, days: int = 7) -> pd.Series:
    """The last close on or before each ``report_period``, if it is at most ``days`` old (else NaN)."""
    from fdkit.research.ratios import price_on_or_before

    return price_on_or_before(keys, prices, max_age=pd.Timedelta(days=days))


@invariant("institutional_value_near_market_price", "institutional_ownership", "prices")
def _thirteen_f(lake: Lake) -> pd.DataFrame:
    """13F market value / shares within 50% of the close on the report date (units: dollars, not thousands)."""
    io = lake["institutional_ownership"]
    io = io[io["put_call"].isna() & (io["shares"] > 0)]
    close = close_near(io[["ticker", "report_period"]], lake["prices"])
    implied = io["market_value"] / io["shares"]
    off = close.notna() & (_rel(implied, close) > 0.5)
    return io.loc[off, ["ticker", "report_period", "investor", "shares", "market_value"]].assign(
        implied=implied[off], close=close[off]
    )


@invariant("inflation_changes_by_date", "inflation")
def _inflation(lake: Lake) -> pd.DataFrame:
    """month-on-month and year-on-year changes equal the levels a month and a year earlier (missing if absent)."""
    inf = lake["inflation"]
    bad = []
    for _, g in inf.groupby("series", observed=True):
        lvl = g.set_index("date")["value"]
        prev_m = lvl.reindex(g["date"] - pd.DateOffset(months=1)).to_numpy()
        prev_y = lvl.reindex(g["date"] - pd.DateOffset(years=1)).to_numpy()
        for col, prev in (("change_1m_pct", prev_m), ("change_12m_pct", prev_y)):
            want = (g["value"].to_numpy() / prev - 1) * 100
            have = g[col].to_numpy(dtype=float)
            off = (np.isnan(want) != np.isnan(have)) | (np.abs(have - want) > 1e-4)
            bad.append(g.loc[off, ["series", "date", "value", col]].assign(expected=want[off]))
    return pd.concat(bad, ignore_index=True) if bad else pd.DataFrame()


@invariant("segment_labels_clean", "segmented_revenues")
def _segment_labels(lake: Lake) -> pd.DataFrame:
    """Segment labels are single members (no ';' or '|' separators, no empty labels)."""
    seg = lake["segmented_revenues"]
    lab = seg["segment_label"].astype("string")
    off = lab.isna() | lab.str.contains(r"[;|]", regex=True) | (lab.str.strip() == "")
    return seg.loc[off.fillna(True).astype(bool), ["ticker", "report_period", "segment_label"]]


@invariant("segment_members_within_revenue", "segmented_revenues", "income_statements")
def _segments_sum(lake: Lake) -> pd.DataFrame:
    """The leaf members (not subtotals) of one segment axis add up to at most the reported revenue (+1%)."""
    seg = lake["segmented_revenues"]
    one = seg.groupby(["ticker", "report_period", "period", "item"], observed=True)["member"].transform("size") == 1
    seg = seg[one & ~seg["is_subtotal"].fillna(False)]
    sums = (
        seg.groupby(["ticker", "report_period", "period", "segment_type"], observed=True)["amount"].sum().reset_index()
    )
    inc = lake["income_statements"][["ticker", "report_period", "period", "revenue"]]
    m = sums.assign(ticker=sums["ticker"].astype(str), period=sums["period"].astype(str)).merge(
        inc.assign(ticker=inc["ticker"].astype(str), period=inc["period"].astype(str)),
        on=["ticker", "report_period", "period"],
        how="inner",
    )
    return m[m["amount"] > 1.01 * m["revenue"]]


@invariant("subtotals_are_their_members_sums", "segmented_revenues", "segmented_financials")
def _subtotals(lake: Lake) -> pd.DataFrame:
    """A segment subtotal equals the sum of the members naming it as parent (0.1%); every parent is a subtotal."""
    bad = []
    sides = (
        ("segmented_revenues", ["ticker", "report_period", "period", "segment_type"], "segment_label", "amount"),
        ("segmented_financials", ["ticker", "report_period", "period", "line_item", "category"], "label", "value"),
    )
    for name, key, label, value in sides:
        df = lake[name]
        df = df.assign(**{c: df[c].astype(str) for c in key if str(df[c].dtype) == "category"})
        kids = df.dropna(subset=["parent_label"]).groupby([*key, "parent_label"])[value].sum()
        subs = df[df["is_subtotal"].fillna(False)].set_index([*key, label])[value]
        subs.index = subs.index.set_names([*key, "parent_label"])
        both = pd.concat({"subtotal": subs, "members": kids}, axis=1)
        off = both["subtotal"].isna() | (both["members"] - both["subtotal"]).abs().gt(0.001 * both["subtotal"].abs())
        bad.append(both[off].reset_index().assign(dataset=name))
    return pd.concat(bad, ignore_index=True)


# ------------------------------------------------------------------------------------------------------------------
# writers
# ------------------------------------------------------------------------------------------------------------------
#: key fields a newer filing of the same record may change (an amendment names another accession and filing date)
_AMENDABLE = ("accession_number", "filing_date")


@invariant("landed_events_in_lake")
def _landed_in_lake(lake: Lake) -> pd.DataFrame:
    """Every row the webhook receiver acknowledged (its ledger holds it as landed) is in the lake, or an amendment."""
    import sqlite3

    from fdkit.lake.ledger import LEDGER_FILE, Ledger, key_text

    if not (lake.root / LEDGER_FILE).is_file():
        return pd.DataFrame(columns=["event_id", "dataset", "key"])
    try:
        ledger = Ledger(lake.root, readonly=True)
        try:
            rows = ledger.landed_rows()
        finally:
            ledger.close()
    except sqlite3.OperationalError:  # a ledger of an older fdkit keeps event ids only: nothing to look for
        return pd.DataFrame(columns=["event_id", "dataset", "key"])
    bad = []
    present: dict[tuple[str, tuple[str, ...]], set[tuple[str, ...]]] = {}
    for event_id, dataset, key in rows:
        fields = tuple(sorted(key))
        found = dataset in lake.names and any(
            tuple(key[f] for f in sub) in _keys_of(lake, dataset, sub, present, key_text)
            for sub in (fields, tuple(f for f in fields if f not in _AMENDABLE))
            if sub
        )
        if not found:
            bad.append({"event_id": event_id, "dataset": dataset, "key": ", ".join(f"{f}={key[f]}" for f in fields)})
    return pd.DataFrame(bad, columns=["event_id", "dataset", "key"])


def _keys_of(lake: Lake, dataset: str, fields: tuple[str, ...], memo: dict, key_text: Callable) -> set:
    """The ``fields`` of every row of ``dataset`` as key text (a column the dataset lacks reads as missing)."""
    if (dataset, fields) not in memo:
        df = lake[dataset]
        columns = [df[f].map(key_text) if f in df.columns else pd.Series([""] * len(df)) for f in fields]
        memo[(dataset, fields)] = set(zip(*[c.tolist() for c in columns], strict=True)) if len(df) else set()
    found: set = memo[(dataset, fields)]
    return found


# ------------------------------------------------------------------------------------------------------------------
# running
# ------------------------------------------------------------------------------------------------------------------
def validate(root: str | os.PathLike[str], only: Iterable[str] | None = None) -> list[Result]:
    """Run the invariants on a lake.

    Args:
        root: lake root.
        only: names of the invariants to run (default: all of :data:`INVARIANTS`).

    Returns:
        One :class:`Result` per invariant; ``violations`` is ``None`` for an invariant whose datasets the lake
        does not hold (a mirror of prices alone skips the statement checks).

    Raises:
        KeyError: for an unknown invariant name.

    Example:
        >>> from fdkit.lake import default_data_dir
        >>> all(r.ok for r in validate(default_data_dir(), only=["bars_on_trading_days"]))
        True
    """
    names = list(only) if only is not None else list(INVARIANTS)
    unknown = [n for n in names if n not in INVARIANTS]
    if unknown:
        raise KeyError(f"unknown invariants {unknown}; known: {', '.join(INVARIANTS)}")
    lake = Lake(root)
    out = []
    for name in names:
        inv = INVARIANTS[name]
        if not set(inv.datasets) <= lake.names:
            out.append(Result(name, inv.description, None, pd.DataFrame()))
            continue
        try:
            bad = inv.check(lake)
        except UnreadableDataset as exc:  # a finding: the damaged files named
            out.append(Result(name, inv.description, None, pd.DataFrame(), error=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - a lake of a shape the check did not foresee: named, not a traceback
            why = f"the check failed on this lake ({type(exc).__name__}: {_one_line(exc)})"
            out.append(Result(name, inv.description, None, pd.DataFrame(), error=why))
            continue
        out.append(Result(name, inv.description, len(bad), bad.head(5)))
    return out


def format_report(results: list[Result], *, examples: bool = False) -> str:
    """One line per invariant: status, violation count, name and rule (and the first violations if asked).

    Args:
        results: from :func:`validate`.
        examples: append up to five violating rows under each failed invariant.

    Returns:
        The report text.

    Example:
        >>> print(format_report([Result("x", "a rule", 0, pd.DataFrame())]))
        ok        0  x: a rule
    """
    lines = []
    for r in results:
        status = "ERR" if r.error else ("skip" if r.violations is None else ("ok" if r.ok else "FAIL"))
        count = "-" if r.violations is None else f"{r.violations:,d}"
        lines.append(f"{status:4s} {count:>6s}  {r.name}: {r.description}")
        if r.error:
            lines.append(f"       not checked: {r.error}")
        if examples and r.violations:
            lines.extend("       " + line for line in r.examples.to_string(max_colwidth=40).splitlines())
    return "\n".join(lines)
