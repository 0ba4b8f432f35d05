"""Write ``data/SOURCES.md`` and ``data/CONCEPTS.md`` for a freshly built reference lake."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

SEC_PD = "US government work (SEC EDGAR), public domain"
YAHOO = "Yahoo Finance data via a public repository without a licence file; reference/test use only"
PYSTOCK = "CC BY-SA 4.0 (eliangcs/pystock-data); prices are Yahoo data, Yahoo's terms apply"
R2 = "../shared/data-real-2/"

#: dataset -> (sources in ../shared/data-real, licence, method)
PROVENANCE: dict[str, tuple[str, str, str]] = {
    "income_statements": (
        "fundamentals/sec_companyfacts/*.json.gz (AAPL, NVDA, GOOGL, TSLA); fundamentals/xbrl_instance_facts/*"
        " (other tickers, filings with a known filing date); company/sec_submissions/*_index.csv (accessions); "
        f"{R2}fundamentals_pystock/pystock_sec_reports_asof_2015_2017.csv.gz (S&P 500 members 2015-2017, "
        "company/sp500_constituents.csv for the CIKs)",
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
        "fiscal year, Q4 = FY - (Q1+Q2+Q3). cik on every row; filing_url = the EDGAR filing index where the "
        "accession is known, else the EDGAR list of the company's filings of that form up to the filing day "
        "(pystock rows and some instance documents name no accession). filing_datetime (an extension, as on "
        "earnings): the SEC's acceptance time in Eastern Time where the submissions index has the accession. "
        "EDGAR's acceptanceDateTime always ends in Z, but the bundled documents differ: AAPL's is Eastern wall "
        "time, MSFT's, NVDA's and TSLA's UTC; each company's zone is the reading under which EDGAR's filing-date "
        "rule (accepted by 17:30 ET on a business day: that day, else the next) reproduces the filing dates of "
        "the same document (AAPL: 98.6% Eastern vs 94.6% UTC; MSFT 11.2% vs 99.2%; NVDA 32.1% vs 98.5%; TSLA "
        "22.3% vs 97.7%, every form). The invariant filing_date_follows_acceptance checks the result.",
    ),
    "balance_sheets": ("as income_statements", SEC_PD, "instants at the period end; derived fields in CONCEPTS.md"),
    "cash_flow_statements": ("as income_statements", SEC_PD, "as income_statements; capex and payouts negative"),
    "financial_metrics": (
        "the three statement datasets + prices",
        SEC_PD + "; prices as below",
        "fdkit.research.ratios.compute_ratios (the same code as df.fds.ratios); valuation at the last close on or "
        "before the report period",
    ),
    "segmented_revenues": (
        "segments/segment_product_geography_revenue_from_xbrl.csv (dimensional XBRL facts of the bundled "
        "10-K/10-Q instance documents)",
        SEC_PD,
        "revenue facts whose only dimensions are ProductOrService, BusinessSegments or Geographical axes (members "
        "separated by '|' or ';'); one row per item x member; labels are human (the member's words, a table of "
        "spellings camel case cannot tell - iPhone, 'Wearables, Home and Accessories' - and ISO country names), "
        "the raw member in xbrl_member; "
        "first filing kept, and only a period's own report (within 200 days of its end). Where an axis adds up "
        "to more than the period's revenue (+1%), subtotals (a member equal to the sum of two or more smaller "
        "ones: Apple's Product, NVIDIA's Data Center, Tesla's Automotive Revenues) are kept with is_subtotal "
        "true, each member below one naming it in parent_label (the smallest holding it; a subtotal cutting "
        "across another, Tesla's Sales and Services, is named by none); if the leaves still exceed the revenue, "
        "the first of these that brings them to it (1%) is left out: one or two memo members (NVIDIA's Singapore "
        "billing), a coarse breakdown of two or three members beside a finer one (Amazon's product/service "
        "split); if none does, the axis is ambiguous and left out of that report (Apple's FY2010 product lines "
        "mixed with its geographic segments). Without a revenue figure, subtotals are marked the same way. "
        "fiscal_period from the statement of the same (ticker, report_period, period), missing where the lake "
        "has no such statement",
    ),
    "segmented_financials": (
        "as segmented_revenues",
        SEC_PD,
        "revenue, gross profit, operating income by one product or segment member; fiscal_period as for "
        "segmented_revenues; subtotals marked as there (revenue: only where the hierarchy reproduces the "
        "period's revenue, nothing marked or left out otherwise)",
    ),  # fmt: skip
    "prices": (
        "prices/us_equities_daily_adj_2021_2026.csv.gz (2021-02-26..), prices/us_equities_daily_2003_2023.csv.gz "
        "(before), prices/etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX.csv.gz (ETFs; ^VIX and the incomplete last "
        "session 2026-03-26 left out)",
        YAHOO,
        "The universe's 36 tickers: split- and dividend-adjusted as of 2026-02-25 (yfinance auto_adjust). Older "
        "bars are the 2003-2023 file's dividend-adjusted OHLC re-based by the median ratio of the two files' "
        "closes over their overlap; volumes multiplied by the ratio of later splits, read from the overlap's "
        "volume ratio (AVGO 10, not the 11 its dividend-carrying close ratio rounds to). Other S&P 500 members, "
        f"2015-03-20 .. 2017-03-31, from {R2}prices/pystock_us_equities_daily_2015_2017.parquet: raw closes "
        "divided (volumes multiplied) by the splits after each day: split-adjusted as of 2026-02-25 but NOT "
        "dividend-adjusted. Left out: MS and NEE (the source mixes another security's bars into theirs).",
    ),
    "splits": (
        f"{R2}corporate_actions/stock_splits_2015_2026_coffee-cpu.csv; prices/lean_factor_files.csv; the raw and "
        f"adjusted closes of {R2}prices/pystock_us_equities_daily_2015_2017.parquet",
        "MIT (split table); Apache-2.0 (LEAN); " + PYSTOCK,
        "one row per (ticker, ex-date): ratio = new shares per old share. Precedence: the split table (its date is "
        "the distribution date; the ex-date is the next trading day), LEAN factor files (a change of split "
        "factor), then the pystock close pairs (around an event the crawl's adjusted close carries the event's "
        "price factor; a factor within 1% of q/p with p, q <= 10 is a p-for-q split, dated by the day the raw "
        "close moves by it; other factors are dividends or spin-offs). Only splits up to 2026-02-25. Complete for "
        "what the lake's per-share values need (splits after each ticker's first filing in the lake), not a "
        "full history (e.g. NVDA's 2000-2007 splits are missing).",
    ),
    "dividends": (
        "prices/us_equities_daily_2003_2023.csv.gz (close and adj_close)",
        YAHOO,
        "cash dividends per share by ex-date, 2003-10-31 .. 2023-10-27, for the 23 of the file's 31 tickers "
        "that paid any: on an ex-date Yahoo's adj_close / close factor steps by 1 - dividend / previous close, "
        "so dividend = previous close x (1 - step) wherever the step exceeds the file's rounding (1e-5), moved "
        "from the file's split basis (2023-10-27) to the ex-date's, rounded to 4 decimals as paid, then put on "
        "the lake's basis (AAPL 2012-08-09: 2.65 as paid, 2.65/28 in the lake; NVDA's 2024 10-for-1: 0.04 -> "
        "0.004). Checked against LEAN's factor files (AAPL, BAC, IBM) and the 10-K dividends per share "
        "(tests). The lake's daily prices are already dividend-adjusted; pystock members have no dividends.",
    ),
    "statement_vintages": (
        "as income_statements (every filing of companyfacts, the instance documents, every pystock sighting)",
        SEC_PD + "; pystock rows " + PYSTOCK,
        "every reported value of a statement field with the filing that reported it: the first report and each "
        "later filing that changed it (restatements, 10-K/As, prior-year comparatives reported differently); "
        "fiscal-year and 3-month durations and period-end instants (period 'instant'), the field's first concept "
        "the filing reported; per-share values and share counts on the split basis. Derived rows (a fiscal Q4, "
        "TTM) have no vintages. The statement datasets hold the first report; `filing_date_lte=D` here gives "
        "what was known on D.",
    ),
    "labor": (
        f"{R2}macro/fred_us_macro_long_1980_2025.csv.gz (PAYEMS, UNRATE, U6RATE, CIVPART, AHETPI, JTSJOL, ICSA)",
        "BLS / US Department of Labor via FRED, public domain",
        "the FRED vintage of 2026-01-02 (not real-time vintages); change = value - the value a month (claims: a "
        "week) earlier, by date: missing where that observation is missing (October 2025, shutdown)",
    ),
    "prices_minute": (
        "prices/lean_minute_trade_bars_AAPL_SPY.csv + prices/lean_daily_raw_unadjusted.csv.gz",
        "Apache-2.0 (QuantConnect LEAN sample data)",
        "raw US/Eastern bars converted to UTC and put on the daily basis by each day's adjusted/raw close ratio; "
        "days without both closes (SPY 2013 and 2023: no adjusted daily bar) are left out",
    ),
    "crypto_prices": (
        "crypto/btc_eth_sol_usd_daily_yahoo_2021_2026.csv (2021-), crypto/btc_eth_usd_daily_yahoo_2014_2022.csv",
        YAHOO + "; the 2014-2022 file's repository is MIT",
        "UTC daily bars, spliced at 2021-01-01",
    ),
    "crypto_prices_minute": (
        "crypto/lean_coinbase_minute_trades_BTC_ETH.csv.gz",
        "Apache-2.0 (LEAN)",
        "Coinbase minute trade bars, UTC",
    ),  # fmt: skip
    "company_facts": (
        "company/universe.csv, company/sec_entity_profiles_AAPL_MSFT_NVDA_TSLA.csv, company/employees_from_10k.csv",
        "S&P 500 constituents ODC-PDDL-1.0; SEC data public domain",
        "GICS sector/sub-industry, HQ, CIK; SIC and exchange where the SEC profile is bundled; market cap = last "
        "close x the latest shares outstanding (else weighted shares), both on the split basis; former_tickers "
        "holds the SEC former names. The other S&P 500 members (company/sp500_constituents.csv) with name, CIK, "
        "sector, industry and location. Class shares are spelled with a dash (BRK-B) everywhere.",
    ),
    "filings": ("company/sec_submissions/*_recent_filings_index.csv", SEC_PD, "URL = EDGAR archive path"),
    "filing_items": (
        "text/sec_filing_sections.jsonl.gz",
        SEC_PD,
        "10-K items as Item-N, 10-Q as Part-P,Item-N, 8-K split on its 'Item X.XX' headings; 10-Q quarter = the "
        "fiscal quarter of the statement filed that day, else the calendar quarter 45 days before filing",
    ),
    "insider_trades": (
        "insider/form345_transactions_parsed.csv, insider/raw/*.xml, insider/insider_filings_index_*.csv",
        SEC_PD,
        "transaction rows; filing date from the EDGAR index, else the signature date, else the period of report; "
        "shares negative for dispositions",
    ),
    "insider_ownership": (
        "as insider_trades",
        SEC_PD,
        "the holding rows of Forms 3 and 5 (and 3/A, 5/A; Form 4 rows are trades and their resulting positions "
        "are insider_trades.shares_owned_after_transaction); as_of_date = the form's period of report; "
        "holding_type = non_derivative or derivative (its table); a derivative holding's shares_owned = the "
        "shares underlying it. The bundled documents carry no amendment (3/A, 4/A, 5/A), so no webhook replay "
        "exercises the receiver's amendment rule on real data (tests do, on events they write)",
    ),
    "institutional_ownership": (
        "insider/form13f_holdings_parsed.csv, company/sec_company_tickers.csv",
        SEC_PD,
        "issuer names matched to tickers by normalised SEC title; values before 2023-01-03 were in USD thousands "
        "and are multiplied by 1,000, and so are the filings after it whose median value / shares is about a "
        "thousandth of the close (filers that kept reporting thousands); share counts on the split basis; rows "
        "of one (ticker, period, investor, put/call) summed. name_of_issuer, cusip and title_of_class as the "
        "13F reports them; /institutional-holdings serves these rows in the 2026 shape, where form_type is null "
        "(the parsed information tables do not say whether they came with a 13F-HR or a 13F-HR/A)",
    ),
    "index_funds": (
        "company/sp500_constituents.csv (the S&P 500 list of 2026-08-08)",
        "ODC-PDDL-1.0",
        "SPY (SPDR S&P 500 ETF Trust, CIK 0000884394) as index membership: one row per member; the fund's filed "
        "positions are not in the sources, so weight, market_value, shares, cusip and isin are missing (null), "
        "never estimated",
    ),
    "interest_rates": (
        "rates/fred_DFEDTAR_*.csv, rates/fred_DFEDTARU_*.csv, rates/ecb_key_interest_rates_daily_1999_2024.csv",
        "FRED (Fed Board H.15, public domain; repository MIT); ECB data",
        "one row per change; FED = target until 2008-12-15, then the midpoint of the 25 bp target range "
        "(upper - 0.125); ECB = main refinancing operations rate",
    ),
    "yield_curve": (
        "rates/us_treasury_par_yield_curve_daily_2021_2023.csv",
        "US Treasury, public domain",
        "daily par curve; 4-month tenor from 2022-10-19",
    ),  # fmt: skip
    "inflation": (
        f"macro/us_cpi_monthly_1913_2026.csv (cpi_all_items), {R2}macro/fred_us_macro_long_1980_2025.csv.gz "
        "(CPILFESL: cpi_core 1980-2025)",
        "BLS via ODC-PDDL-1.0 repository; BLS via FRED, public domain",
        "index level, change_1m_pct and change_12m_pct (percent), computed by date: a missing month "
        "(October 2025) gives missing changes against it, never a change against the wrong month. Two series "
        "of the CPI release's twelve are in the sources, so an inflation event carries two entries",
    ),
    "news": (
        "text/fnspid_nasdaq_headlines_AAPL_page.csv, text/yahoo_headlines_sep2024_MSFT_ADBE_ORCL_PANW.csv",
        "FNSPID CC BY-NC 4.0 (non-commercial); Yahoo headlines without a licence file",
        "headlines with a parseable date; source = URL host; no sentiment is computed",
    ),
    "analyst_estimates": (
        "the statement datasets",
        SEC_PD,
        "the service's own model, method 'trend-3y' (see scripts/build_reference_data.py:build_estimates)",
    ),  # fmt: skip
    "earnings": (
        "the statement datasets",
        SEC_PD,
        "one record per quarterly report: the quarter and the TTM figures; estimates not filled",
    ),  # fmt: skip
}

LEFT_OUT = """\
## Left out (and why)
* Tweets (stocknet): tweets are not news.
* Hourly bars (LEAN AAPL 1998-2021, BTC/ETH 2018-2022): the service's intervals aggregate minute bars; hourly bars
  served as `minute` would mislead. Size would also exceed the 25 MB target.
* FinanceToolkit / Yahoo statement exports: SEC XBRL covers the same facts with filing dates.
* The MSFT FY2015 instance documents have no known filing date (MSFT's 2015-2017 statements come from pystock);
  the AMZN FY2022 and NFLX FY2023/2024-Q3 instance files likewise, so their periods carry the later filing's
  date (conservative for backtests). UNP is outside the universe.
* XBRL periods first reported as comparatives more than 200 days after their end (e.g. AAPL FY2007-FY2008,
  first seen in the FY2009 10-K): their own reports predate XBRL, so no row could carry its true filing date.
* SEC Financial Statement Data Sets 2009q3-2010q2 (data-real-2): not used yet; with prices for only ~30 tickers
  in 2010 they would add little point-in-time coverage (see the table below). A candidate for the next build.
* pystock EPS of issuers with several share classes can be another class's (Visa reads $5.32 for a quarter of
  about $0.80 per class A share); pystock has no share counts to check it against.
* Prices: MS and NEE 2015-2017 (the source mixes in another security's bars); dividends after the basis date
  of each source are not in the S&P 500 members' prices (split-adjusted only).
* KPIs (`/kpi/*`): no source in data-real; the endpoints answer with empty lists.
* BoE/BoJ/BoC/RBA rate levels: only decision dates exist in data-real.

## Null where the record truly lacks the value

The 2026 document marks these fields as never null; the service answers null where the sources do not hold the
value (never a made-up one). `tests/test_reference_fuzz.py` lists the same places as the document's errors.
* Statement line items a company does not report (a bank's inventory, most companies' deposit liabilities), and
  ratios whose inputs are missing.
* `accession_number` / `filing_url` of statements, segments and earnings from pystock filings and some XBRL
  instance documents (the sources name no accession); the filing URL is then the EDGAR list of the company's
  filings of that form.
* Company facts the sources lack for a company: SIC sector, website, listing date, number of employees, exchange.
* `filings.report_date` of forms without a period of report (EDGAR leaves it empty: 8-K/A, 144, SC 13G ...).
* `price_snapshot.market_cap` where the share count is not in the sources; `news.author` and `news.sentiment`
  (no sentiment is computed).
* `institutional_holdings.form_type`: the parsed information tables do not say 13F-HR or 13F-HR/A.
* As-reported reports of periods the statement datasets do not hold have no `fiscal_period`.
* Earnings fields the 2026 document returns "only when calculable" (changes, margins, surprises, estimates) are
  left out of the record, not null, where the lake cannot derive them; `signals` is left out (no estimates or
  guidance in the sources, so none fires). `filing_datetime`/`filing_window` are null where the SEC submissions
  index of the four bundled companies has no acceptance time (85 of 3,120 releases have one).
"""


def _date_range(df: pd.DataFrame) -> str:
    for col in ("report_period", "time", "date", "filing_date", "fiscal_period"):
        if col in df.columns and len(df) and pd.api.types.is_datetime64_any_dtype(df[col]):
            s = df[col].dropna()
            if len(s):
                lo, hi = s.min(), s.max()
                return f"{lo:%Y-%m-%d} .. {hi:%Y-%m-%d} ({col})"
    return ""


def write_sources_md(out: Path, written: dict[str, pd.DataFrame]) -> None:
    lines = [
        "# data/ - the reference lake",
        "",
        "Built by `python scripts/build_reference_data.py` from `../shared/data-real` and `../shared/data-real-2`",
        "(real public data; see their SOURCES.md for repository commits). One Parquet dataset per resource under",
        "`data/<name>/`; columns and dtypes are the record schemas of `fdkit/catalog/schema.py`. Rebuilding gives the",
        "same rows (tested), and every invariant of `fdkit lake validate` holds (tested; table below).",
        "",
        "| dataset | rows | tickers/keys | date range | size |",
        "|---|---:|---:|---|---:|",
    ]
    for name, df in sorted(written.items()):
        if name.startswith("_"):
            continue
        key = "ticker" if "ticker" in df.columns else ("bank" if "bank" in df.columns else "series")
        n_keys = df[key].nunique() if key in df.columns else ""
        size = sum(p.stat().st_size for p in (out / name).rglob("*.parquet"))
        lines.append(f"| `{name}` | {len(df):,} | {n_keys} | {_date_range(df)} | {size / 1024:.0f} KiB |")
    lines += ["", "## Provenance, licence and method", ""]
    for name in sorted(PROVENANCE):
        src, lic, how = PROVENANCE[name]
        lines += [f"### `{name}`", f"* sources: {src}", f"* licence: {lic}", f"* method: {how}", ""]
    factors = written.get("_price_factors")
    if factors is not None and len(factors):
        lines += ["## Price re-basing factors (2003-2021 bars onto the 2026 basis)", "",
                  "| ticker | price factor | split factor | overlap days |", "|---|---:|---:|---:|"]  # fmt: skip
        for r in factors.itertuples(index=False):
            lines.append(f"| {r.ticker} | {r.price_factor:.6f} | {r.split_factor:g} | {r.overlap_days} |")
        lines.append("")
    lines += _coverage(written)
    lines += _invariants(out)
    lines.append(LEFT_OUT)
    (out / "SOURCES.md").write_text("\n".join(lines))
    _write_concepts(out)


#: days on which the point-in-time coverage is counted
COVERAGE_DAYS = ("2010-03-31", "2015-06-30", "2016-06-30", "2022-06-30")


def _coverage(written: dict[str, pd.DataFrame]) -> list[str]:
    """Tickers with a quarterly income statement for a period ending in the 6 months before the day, filed on or
    before it, and a price bar that day: the cross-section a point-in-time backtest has."""
    inc, px = written["income_statements"], written["prices"]
    day_of = px["time"].dt.tz_convert(None)
    lines = ["## Point-in-time coverage", "",
             "Tickers with a quarterly income statement (revenue reported) for a period ending at most six months "
             "before the day, filed on or before it, and a price bar on the day.", "",
             "| day | statements known | price bars | both | what limits it |", "|---|---:|---:|---:|---|"]  # fmt: skip
    why = {
        "2010-03-31": "prices: only the universe's ~30 tickers before 2015; XBRL statements only for AAPL, NVDA",
        "2015-06-30": "pystock sightings start 2015-03-23 (earlier filings have no filing date)",
        "2016-06-30": "the pystock window (S&P 500 members, 2015-2017)",
        "2022-06-30": "statements after 2017: companyfacts (AAPL, NVDA, GOOGL, TSLA) and FY2024+ instance files",
    }
    for d in COVERAGE_DAYS:
        day = pd.Timestamp(d)
        q = inc[(inc["period"] == "quarterly") & inc["revenue"].notna() & (inc["filing_date"] <= day)
                & (inc["report_period"] >= day - pd.DateOffset(months=6))]  # fmt: skip
        known = set(q["ticker"].astype(str))
        bars = set(px.loc[day_of == day, "ticker"].astype(str))
        lines.append(f"| {d} | {len(known)} | {len(bars)} | {len(known & bars)} | {why[d]} |")
    return [*lines, ""]


def _invariants(out: Path) -> list[str]:
    """The validation report of the lake just written (``fdkit lake validate``)."""
    from fdkit.lake.validate import validate

    lines = ["## Invariants (`fdkit lake validate`)", "", "| invariant | violations | rule |", "|---|---:|---|"]
    for r in validate(out):
        rule = r.description.replace("|", "\\|")
        lines.append(f"| `{r.name}` | {r.violations if r.violations is not None else '-'} | {rule} |")
    return [*lines, ""]


def _write_concepts(out: Path) -> None:
    from build_reference_data import CONCEPTS, INSTANT_FIELDS

    lines = [
        "# us-gaap concept -> statement field",
        "",
        "The first concept with a fact for the period wins. Helper rows (lower case, not schema fields) feed the",
        "derived fields below.",
        "",
        "| field | kind | us-gaap concepts (in priority order) |",
        "|---|---|---|",
    ]
    for field, concepts in CONCEPTS.items():
        kind = "instant" if field in INSTANT_FIELDS else "duration"
        lines.append(f"| `{field}` | {kind} | {', '.join(concepts)} |")
    lines += [
        "",
        "## Derived fields",
        "",
        "* `gross_profit` = GrossProfit, else revenue - cost_of_revenue",
        "* `operating_expense` = OperatingExpenses/CostsAndExpenses, else R&D + SG&A",
        "* `ebit` = pretax income + interest expense, else operating income",
        "* `trade_and_non_trade_receivables` = accounts receivable + non-trade receivables",
        "* `goodwill_and_intangible_assets` = goodwill + intangibles; `investments` = current + non-current",
        "* `current_debt` = DebtCurrent, else long-term debt current + commercial paper; `total_debt` = current + "
        "non-current debt",
        "* `capital_expenditure` = -payments for PP&E; `free_cash_flow` = operating cash flow - payments for PP&E, "
        "missing when either is missing (never operating cash flow alone)",
        "* `shareholders_equity` includes minority interest; `total_liabilities` = Liabilities, or liabilities and "
        "equity - equity where the reported liabilities and equity do not add up to the reported total (mezzanine "
        "equity such as redeemable noncontrolling interests counts with the liabilities)",
        "* share counts tagged in thousands (NVDA's early filings: EPS x shares x 1,000 = net income) are scaled "
        "by 1,000",
        "* per-share values and share counts are on the split basis of 2026-02-25 (see SOURCES.md, `splits`)",
        "* `dividends_and_other_cash_distributions` = -dividends paid; `issuance_or_purchase_of_equity_shares` = "
        "stock issued - repurchased; `issuance_or_repayment_of_debt_securities` = issued - repaid + commercial "
        "paper (net)",
        "* quarterly share counts: the 3-month weighted average; a quarter not reported directly has none",
        "* derived fiscal Q4 flows = FY - (Q1 + Q2 + Q3), EPS too (the usual approximation)",
        "",
    ]
    (out / "CONCEPTS.md").write_text("\n".join(lines))
