"""The statement table: XBRL rows and the broad universe's pystock rows joined, finished and cut into datasets.

Finishing adds TTM rows (sum of four consecutive quarters), the CIK, a filing URL and the SEC acceptance time on
every row and removes quarter holes. The table (intermediate ``statements``) feeds metrics, earnings, estimates,
segments, company facts and filing items; ``income_statements``, ``balance_sheets`` and ``cash_flow_statements``
are its columns of each record schema.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fdkit.catalog.schema import SCHEMAS, STATEMENT_FIELDS
from fdkit.research.sessions import EASTERN
from refdata.accessions import filing_index_urls
from refdata.common import PYSTOCK, R2, SEC_PD, company_ciks
from refdata.concepts import FLOW_FIELDS, SEC
from refdata.filings import acceptance_times, iso_times
from refdata.quality import mark_served_out_of_band, screen_statements
from refdata.stage import Context, Provenance, Stage, dataset, intermediate


def finish_statements(rows: pd.DataFrame, ciks: dict[str, str], index: pd.DataFrame) -> pd.DataFrame:
    """The statement table every dataset is cut from: rows with TTM rows, CIK, filing URL and acceptance time.

    Args:
        rows: annual and quarterly statement rows (fields derived).
        ciks: ticker -> CIK.
        index: the submissions index (acceptance times).

    Returns:
        The rows and their TTM rows, sorted by ticker, period and report period.
    """
    rows = mark_served_out_of_band(without_quarter_holes(rows))
    ttm = _ttm(rows)
    full = pd.concat([rows, ttm], ignore_index=True)
    # the lake's one CIK per ticker; a source row's own CIK where the lists name none (a company joined by CIK)
    own_cik = full["cik"] if "cik" in full.columns else pd.Series(None, index=full.index, dtype=object)
    full["cik"] = full["ticker"].map(ciks).fillna(own_cik)
    acc = full["accession_number"].astype("string")
    filed = pd.to_datetime(full["filing_date"]).dt.strftime("%Y%m%d")
    by_accession = filing_index_urls(full["cik"], acc)
    # no accession in the source (pystock reports, some instance documents): the company's filings of that
    # form up to the filing day, newest first, so the filing is the first entry
    form = full["form_type"].fillna("10-Q").astype(str)
    by_search = (
        SEC
        + "/cgi-bin/browse-edgar?action=getcompany&CIK="
        + full["cik"]
        + "&type="
        + form
        + "&dateb="
        + filed
        + "&owner=include&count=10"
    )
    full["filing_url"] = by_accession.where(acc.notna(), by_search)
    accepted = acceptance_times(full["accession_number"], index)
    if "accepted" in full.columns:  # a source's own acceptance time (Eastern wall time: the SEC data sets)
        own = pd.to_datetime(full["accepted"], format="%Y-%m-%d %H:%M:%S.%f").dt.tz_localize(EASTERN)
        accepted = accepted.fillna(own)
        full = full.drop(columns=["accepted"])
    full["filing_datetime"] = iso_times(accepted)
    return full.sort_values(["ticker", "period", "report_period"], kind="stable").reset_index(drop=True)


def without_quarter_holes(rows: pd.DataFrame) -> pd.DataFrame:
    """No skipped quarter inside a covered span.

    Where a ticker's quarters have a hole (a gap of 4 to 13 months), only the longest contiguous run of that span
    is kept (a later one on ties). A gap over 13 months separates spans (different sources or eras), each handled
    alone. A hole would make every row-offset computation (growth, TTM) compare the wrong quarters.

    Args:
        rows: statement rows (``ticker``, ``period``, ``report_period``).

    Returns:
        The rows without the quarters outside the kept runs (annual rows all kept).

    Example:
        >>> rows = pd.DataFrame({"ticker": ["X"] * 3, "period": ["quarterly"] * 3,
        ...                      "report_period": pd.to_datetime(["2009-06-30", "2010-03-31", "2010-06-30"])})
        >>> without_quarter_holes(rows)["report_period"].dt.strftime("%Y-%m").tolist()
        ['2010-03', '2010-06']
    """
    q = rows[rows["period"] == "quarterly"].sort_values(["ticker", "report_period"])
    drop = []
    for _, g in q.groupby("ticker", sort=False):
        gap = g["report_period"].diff().dt.days.to_numpy()
        run = np.cumsum(~((gap >= 77) & (gap <= 105)))  # a new run after every gap that is not one quarter
        span = np.cumsum(~(gap <= 400))  # a new span after every gap of over 13 months (NaN starts both)
        frame = pd.DataFrame({"run": run, "span": span}, index=g.index)
        for _, sp in frame.groupby("span"):
            sizes = sp.groupby("run").size()
            if len(sizes) > 1:
                best = sizes[sizes == sizes.max()].index.max()
                drop.extend(sp.index[sp["run"] != best])
    return rows.drop(index=drop)


def _sum(*cols: pd.Series) -> pd.Series:
    stacked = pd.concat(cols, axis=1)
    return stacked.sum(axis=1, min_count=1)


def derive_fields(df: pd.DataFrame) -> pd.DataFrame:
    """Fields that are sums/differences of concepts (documented in CONCEPTS.md)."""

    def g(c: str) -> pd.Series:
        return df[c] if c in df.columns else pd.Series(np.nan, index=df.index)

    df["gross_profit"] = g("gross_profit").fillna(g("revenue") - g("cost_of_revenue"))
    df["operating_expense"] = g("operating_expense").fillna(
        _sum(g("research_and_development"), g("selling_general_and_administrative_expenses"))
    )
    df["ebit"] = (g("pretax_income") + g("interest_expense").fillna(0.0)).fillna(g("operating_income"))
    df["net_income_common_stock"] = g("net_income_common_stock").fillna(g("net_income"))
    df["consolidated_income"] = g("consolidated_income").fillna(g("net_income"))
    df["trade_and_non_trade_receivables"] = _sum(g("accounts_receivable"), g("nontrade_receivables"))
    df["goodwill_and_intangible_assets"] = _sum(g("goodwill"), g("intangibles"))
    df["investments"] = _sum(g("current_investments"), g("non_current_investments"))
    df["non_current_assets"] = g("non_current_assets").fillna(g("total_assets") - g("current_assets"))
    # mezzanine (temporary) equity, e.g. redeemable noncontrolling interests or convertible notes classified
    # outside equity, is counted with the liabilities: where the reported liabilities and equity do not add up to
    # the reported total, total_liabilities = liabilities and equity - equity (documented in CONCEPTS.md)
    le = g("liabilities_and_equity")
    mezzanine = (g("total_liabilities") + g("shareholders_equity") - le).abs() > 0.005 * le.abs()
    df["total_liabilities"] = g("total_liabilities").mask(mezzanine & le.notna(), le - g("shareholders_equity"))
    df["total_liabilities"] = df["total_liabilities"].fillna(le - g("shareholders_equity"))
    df["non_current_liabilities"] = g("non_current_liabilities").fillna(
        g("total_liabilities") - g("current_liabilities")
    )
    df["current_debt"] = g("debt_current").fillna(_sum(g("long_term_debt_current"), g("commercial_paper")))
    df["total_debt"] = _sum(g("current_debt"), g("non_current_debt"))
    df["capital_expenditure"] = -g("capex_payments")
    df["business_acquisitions_and_disposals"] = -g("acquisitions_payments")
    df["investment_acquisitions_and_disposals"] = _sum(
        -g("investment_payments"), g("investment_proceeds_maturities"), g("investment_proceeds_sales")
    )
    df["issuance_or_repayment_of_debt_securities"] = _sum(
        g("debt_issued"), -g("debt_repaid"), g("commercial_paper_net")
    )
    df["issuance_or_purchase_of_equity_shares"] = _sum(g("stock_issued"), -g("stock_repurchased"))
    df["dividends_and_other_cash_distributions"] = -g("dividends_paid")
    # missing inputs give a missing result, never a different formula (no capex reported: no free cash flow)
    df["free_cash_flow"] = g("net_cash_flow_from_operations") - g("capex_payments")
    return df


def _ttm(df: pd.DataFrame) -> pd.DataFrame:
    """Trailing twelve months at each quarter end with four consecutive quarters.

    Flows are summed (EPS too), stocks and share counts come from the latest quarter.
    """
    q = df[df["period"] == "quarterly"].sort_values(["ticker", "report_period"])
    rows = []
    for _, g in q.groupby("ticker", sort=True):
        g = g.reset_index(drop=True)
        for i in range(3, len(g)):
            window = g.iloc[i - 3 : i + 1]
            span = (window["report_period"].iloc[-1] - window["report_period"].iloc[0]).days
            if not 250 <= span <= 300:
                continue
            last = g.iloc[i].to_dict()
            rec = {k: last[k] for k in last}
            for f in FLOW_FIELDS:
                if f in window.columns:
                    vals = window[f]
                    rec[f] = float(vals.sum()) if vals.notna().all() else np.nan
            rec["period"] = "ttm"
            rec["fiscal_period"] = f"TTM-{last['fiscal_period']}"
            if "quality" in window.columns:  # a sum carries the notes of the quarters it adds up
                notes = [
                    f"{fp}: {q}"
                    for fp, q in zip(window["fiscal_period"], window["quality"], strict=True)
                    if isinstance(q, str)
                ]
                rec["quality"] = "; ".join(notes) if notes else pd.NA
            rec["form_type"] = None  # a sum of four filings is no one filing's form
            rows.append(rec)
    return pd.DataFrame(rows, columns=df.columns)


def with_usd_amounts(income: pd.DataFrame) -> pd.DataFrame:
    """The ``*_usd`` amounts of the income statement.

    The amount itself for a USD reporter, else missing (the sources carry no exchange rates, so a non-USD amount is
    never converted with a made-up rate).

    Args:
        income: the income statement rows.

    Returns:
        A copy with ``revenue_usd``, ``ebit_usd``, ``earnings_per_share_usd``, ``net_income_common_stock_usd``.
    """
    usd = income["currency"].astype("string").eq("USD").fillna(False).to_numpy(dtype=bool)
    out = income.copy()
    for field, base in (
        ("revenue_usd", "revenue"),
        ("ebit_usd", "ebit"),
        ("earnings_per_share_usd", "earnings_per_share"),
        ("net_income_common_stock_usd", "net_income_common_stock"),
    ):
        out[field] = income[base].where(usd)
    return out


def join_statements(xbrl: pd.DataFrame, pystock: pd.DataFrame, companyfacts_tickers: set[str]) -> pd.DataFrame:
    """XBRL rows plus the pystock rows of tickers and periods XBRL does not cover (fields derived).

    Args:
        xbrl: statement rows from XBRL facts.
        pystock: statement rows from the pystock reports.
        companyfacts_tickers: tickers with their full XBRL history (no pystock rows at all).

    Returns:
        The rows, XBRL first.
    """
    broad = pystock[~pystock["ticker"].isin(companyfacts_tickers)]
    have = set(zip(xbrl["ticker"], xbrl["period"], xbrl["report_period"], strict=True))
    broad = broad[[k not in have for k in zip(broad["ticker"], broad["period"], broad["report_period"], strict=True)]]
    return pd.concat([xbrl, derive_fields(broad)], ignore_index=True)


def with_rows_of_other_eras(rows: pd.DataFrame, more: pd.DataFrame, companyfacts_tickers: set[str]) -> pd.DataFrame:
    """The rows plus another source's screened rows for the periods they lack (the FSDS's 2009-2010 rows).

    The other source's rows are screened by the sanity rules on their own (their neighbouring quarters are their
    own: years lie between them and the rows here); a period the rows have (by report period or fiscal label), and
    a ticker with its full XBRL history, is left to the rows.

    Args:
        rows: the screened statement rows.
        more: the other source's screened rows (fields derived, ``quality`` set).
        companyfacts_tickers: tickers with their full XBRL history.

    Returns:
        ``rows`` then the rows of ``more`` kept.

    Example:
        >>> rows = pd.DataFrame({"ticker": ["X"], "period": ["annual"], "report_period": pd.to_datetime(["2016-12-31"]),
        ...                      "fiscal_period": ["FY2016"]})
        >>> more = pd.DataFrame({"ticker": ["X", "X"], "period": ["annual"] * 2, "fiscal_period": ["FY2016", "FY2009"],
        ...                      "report_period": pd.to_datetime(["2016-12-31", "2009-12-31"])})
        >>> with_rows_of_other_eras(rows, more, set())["fiscal_period"].tolist()
        ['FY2016', 'FY2009']
    """
    if more.empty:
        return rows
    known = {
        *zip(rows["ticker"], rows["period"], rows["report_period"], strict=True),
        *zip(rows["ticker"], rows["period"], rows["fiscal_period"], strict=True),
    }
    more = more[~more["ticker"].isin(companyfacts_tickers)]
    keep = [
        (t, p, r) not in known and (t, p, f) not in known
        for t, p, r, f in zip(more["ticker"], more["period"], more["report_period"], more["fiscal_period"], strict=True)
    ]
    return pd.concat([rows, more[keep]], ignore_index=True)


def _served(owners: pd.DataFrame, spells: pd.DataFrame) -> pd.DataFrame:
    """The companies of 2015-2017 that left every index (no spell runs), by the name they listed under last.

    The SEC ticker file names a symbol's holder today: for these, maybe another company (Rock-Tenn's RKT is Rocket
    Companies'); a company still in an index is today's holder of its symbol.
    """
    running = set(spells.loc[spells["end_date"].isna(), "current_ticker"].astype(str))
    last = owners.sort_values("end", kind="stable").groupby("ticker", sort=True)["name"].last()
    gone = ~last.index.astype(str).isin(running)
    return pd.DataFrame({"ticker": last.index[gone].astype(str), "name": last[gone].to_numpy()})


def _statements(ctx: Context) -> dict[str, pd.DataFrame]:
    sec = pd.read_csv(ctx.source("data-real/company/sec_company_tickers.csv"), dtype=str)
    uni = pd.read_csv(ctx.source("data-real/company/universe.csv"), dtype=str)
    ciks = company_ciks(sec, ctx["members"], uni, served=_served(ctx["pystock_owners"], ctx["index_membership"]))
    for ticker, cik in zip(ctx["pystock_owners"]["ticker"], ctx["pystock_owners"]["cik"], strict=True):
        if isinstance(cik, str) and cik:  # companies of the 2015-2017 window known only from the index spells
            ciks.setdefault(ticker, cik)
    rows = join_statements(
        ctx["xbrl_statements"], ctx["pystock_statements"], set(ctx["companyfacts_tickers"]["ticker"])
    )
    rows = screen_statements(rows, ctx["prices"])
    rows = with_rows_of_other_eras(rows, ctx["fsds_statements"], set(ctx["companyfacts_tickers"]["ticker"]))
    table = finish_statements(rows, ciks, ctx["filings_index"])
    out = {name: table[[c for c in SCHEMAS[name] if c in table.columns]] for name in STATEMENT_FIELDS}
    out["income_statements"] = with_usd_amounts(out["income_statements"])
    return {"statements": table, **out}


_PROVENANCE = {
    "income_statements": (
        "fundamentals/sec_companyfacts/*.json.gz (AAPL, NVDA, GOOGL, TSLA); fundamentals/xbrl_instance_facts/*"
        " (other tickers, filings with a known filing date); company/sec_submissions/*_index.csv (accessions); "
        f"{R2}fundamentals_pystock/pystock_sec_reports_asof_2015_2017.csv.gz (S&P 500 members 2015-2017, "
        "company/sp500_constituents.csv for the CIKs); "
        f"{R2}fundamentals_fsds/sec_fsds_sub.parquet and sec_fsds_num_2009q3_2010q2.parquet (SEC Financial Statement "
        "Data Sets 2009q3, 2010q1, 2010q2: filings of the lake's companies, joined by CIK)",
        SEC_PD + "; pystock rows " + PYSTOCK,
        "us-gaap concepts mapped to fields (CONCEPTS.md). POINT IN TIME: a row is dated by its anchor, the filing "
        "that first reported the period (its first revenue or net income fact), and uses only facts filed by "
        "then, each with the value of the FIRST filing that reported it: a later restatement never reaches an "
        "earlier row. A period whose first XBRL report came more than 200 days after its end (a comparative in a "
        "later filing; its own report predates XBRL) is left out. Quarters are found and labelled by the filer's "
        "fiscal calendar: quarter n ends about 3n months after the fiscal year starts (52/53-week years within "
        "20 days), never by calendar month. Quarterly flows: the 3-month fact, else YTD minus the previous YTD "
        "of the same fiscal year; fiscal Q4 = FY minus the three first-reported quarters (so the four always add "
        "up to the year), known at the 10-K's filing date; a quarter not reported directly has no share count. "
        "Where a ticker's quarters have a hole (a gap of 4-13 months), only the longest contiguous run of that "
        "span is kept. SPLIT BASIS: per-share values (USD/shares) are divided, and share counts multiplied, by "
        "the splits (dataset `splits`) between the fact's filing day and 2026-02-25, the prices' basis. TTM = "
        "sum of the last four quarters (flows, EPS too), latest quarter (stocks); a TTM row has no form type. "
        "pystock rows (tickers without companyfacts, periods without XBRL rows): the crawler's first sighting "
        "is the filing date (the filing day or the day after; sightings on its first day, 2015-03-23, are "
        "left out: they are no filing dates), amended reports left out, 10-Q cash flows differenced within the "
        "fiscal year, Q4 = FY - (Q1+Q2+Q3); where two filers' reports share a symbol (a parent and its listed "
        "subsidiary: NRG and NRG Yield, 16 symbols) the parent's, the one with the larger total assets, and "
        "sightings dated before their period's end (another report under a wrong end date) are no first "
        "sightings. SANITY RULES (refdata.quality): a value that fails one is served missing with the reason "
        "in `quality` (an extension): negative revenue, a quarter's revenue outside 0.2-5x the median of its "
        "neighbouring quarters (outside 0.5-2x: kept, marked), a year's outside 0.5-2x four times its quarters' "
        "median, an annualised EPS above the share price, a Q4 differenced from a rejected value; weighted "
        "shares the source lacks are net income / EPS (|EPS| >= 0.10, within 0.8-1.25x the ticker's counts "
        "around it), marked derived in `quality`. cik on every row; filing_url = the EDGAR filing index where the "
        "accession is known, else the EDGAR list of the company's filings of that form up to the filing day "
        "(pystock rows and some instance documents name no accession). filing_datetime (an extension, as on "
        "earnings): the SEC's acceptance time in Eastern Time where the submissions index has the accession. "
        "EDGAR's acceptanceDateTime always ends in Z, but the bundled documents differ: AAPL's is Eastern wall "
        "time, MSFT's, NVDA's and TSLA's UTC; each company's zone is the reading under which EDGAR's filing-date "
        "rule (accepted by 17:30 ET on a business day: that day, else the next) reproduces the filing dates of "
        "the same document (AAPL: 98.6% Eastern vs 94.6% UTC; MSFT 11.2% vs 99.2%; NVDA 32.1% vs 98.5%; TSLA "
        "22.3% vs 97.7%, every form). The invariant filing_date_follows_acceptance checks the result. "
        "FSDS ROWS (refdata/fsds.py; 2009-2010 report periods): the 10-K and 10-Q filings of 2009q3, 2010q1 and "
        "2010q2 whose filer CIK the index-membership spells or today's S&P 500/400/600 lists give a company, served "
        "under that company's ticker (a filer without one is skipped: 197 of 502 filers, 493 of 1,297 "
        "filings); a ticker with companyfacts (AAPL, NVDA, GOOGL, TSLA) keeps its XBRL rows. Each filing gives "
        "one row, its OWN period: the "
        "10-K's year (values of 4 quarters), the 10-Q's quarter (1 quarter; a flow tagged year to date only is "
        "the YTD minus the previous quarter's filing's, when that filing is in the data), instants at its period "
        "end; non-dimensional, filer-only, standard us-gaap values in USD or shares; the first concept of the map "
        "present wins. Prior-year comparatives are no rows (they are in statement_vintages). report_period = "
        "the data sets' period, the month end NEAREST the true end (a 52/53-week quarter ending 2009-12-26 reads "
        "2009-12-31); fiscal labels from the filer's fiscal year end (`fye`), the filing's own `fp` agreeing; "
        "filing_date = `filed`, filing_datetime = `accepted` (Eastern), left out where EDGAR's 17:30 rule does "
        "not give the filing day from it (5 filings); 97 amendments, 9 filings whose `fp` disagrees with "
        "`fye`, filings later than 100 (10-K) or "
        "60 (10-Q) days after the period and a second filing for one period are not first reports and are left "
        "out. Checks against the filing's own values: EPS x weighted shares must give net income to common "
        "within 3% (a count in thousands is scaled; any other count is served missing, the reason in quality), "
        "total liabilities + equity = total assets within 0.5% (else liabilities served missing); then the "
        "sanity rules, on these rows alone (their neighbouring quarters are their own). 2009q4 is missing, so no "
        "Q4 or TTM row comes from these sets, and a calendar-year filer's June 2009 quarter is dropped by the "
        "quarter-hole rule beside its March 2010 quarter.",
    ),
    "balance_sheets": ("as income_statements", SEC_PD, "instants at the period end; derived fields in CONCEPTS.md"),
    "cash_flow_statements": ("as income_statements", SEC_PD, "as income_statements; capex and payouts negative"),
}

STATEMENTS = Stage(
    "statements",
    "The statement table (XBRL and pystock rows, TTM, CIK, filing URL) and the three statement datasets",
    _statements,
    sources=("data-real/company/sec_company_tickers.csv", "data-real/company/universe.csv"),
    needs=(
        "xbrl_statements",
        "pystock_statements",
        "companyfacts_tickers",
        "members",
        "pystock_owners",
        "filings_index",
        "prices",
        "fsds_statements",
        "index_membership",
    ),
    outputs=(
        intermediate("statements"),
        *(dataset(name, Provenance(*_PROVENANCE[name])) for name in STATEMENT_FIELDS),
    ),
)

STAGES = (STATEMENTS,)
