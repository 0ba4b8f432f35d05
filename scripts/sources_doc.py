"""Write ``data/SOURCES.md`` and ``data/CONCEPTS.md`` for a freshly built reference lake."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

SEC_PD = "US government work (SEC EDGAR), public domain"
YAHOO = "Yahoo Finance data via a public repository without a licence file; reference/test use only"

#: dataset -> (sources in ../shared/data-real, licence, method)
PROVENANCE: dict[str, tuple[str, str, str]] = {
    "income_statements": (
        "fundamentals/sec_companyfacts/*.json.gz (AAPL, NVDA, GOOGL, TSLA); fundamentals/xbrl_instance_facts/*"
        " (other tickers, filings with a known filing date); company/sec_submissions/*_index.csv (accessions)",
        SEC_PD,
        "us-gaap concepts mapped to fields (CONCEPTS.md). Each fact keeps the value and filing of the FIRST "
        "10-K/10-Q that reported it (companyfacts repeats restated values in later filings). Quarterly flows: "
        "the 3-month fact, else YTD minus the previous YTD; fiscal Q4 = FY minus nine months, known at the "
        "10-K's filing date. TTM = sum of the last four quarters (flows), latest quarter (stocks).",
    ),
    "balance_sheets": ("as income_statements", SEC_PD, "instants at the period end; derived fields in CONCEPTS.md"),
    "cash_flow_statements": ("as income_statements", SEC_PD, "as income_statements; capex and payouts negative"),
    "financial_metrics": (
        "the three statement datasets + prices",
        SEC_PD + "; prices as below",
        "fdkit.ratios.compute_ratios (the same code as df.fds.ratios); valuation at the last close on or before "
        "the report period",
    ),
    "segmented_revenues": (
        "segments/segment_product_geography_revenue_from_xbrl.csv (dimensional XBRL facts of the bundled "
        "10-K/10-Q instance documents)",
        SEC_PD,
        "revenue facts whose only dimensions are ProductOrService, BusinessSegments or Geographical axes; one "
        "row per item x member; labels are the XBRL member names without 'Member'; first filing kept; "
        "fiscal_period from the statement of the same (ticker, report_period, period), missing where the "
        "lake has no such statement",
    ),
    "segmented_financials": (
        "as segmented_revenues",
        SEC_PD,
        "revenue, gross profit, operating income by one product or segment member; fiscal_period as for "
        "segmented_revenues",
    ),  # fmt: skip
    "prices": (
        "prices/us_equities_daily_adj_2021_2026.csv.gz (2021-02-26..), prices/us_equities_daily_2003_2023.csv.gz "
        "(before), prices/etf_index_daily_2021_2026_SPY_QQQ_TLT_GLD_UUP_VIX.csv.gz (ETFs; ^VIX and the incomplete last "
        "session 2026-03-26 left out)",
        YAHOO,
        "ONE basis: split- and dividend-adjusted as of 2026-02-25 (yfinance auto_adjust). Older bars are the "
        "2003-2023 file's dividend-adjusted OHLC re-based by the median ratio of the two files' closes over their "
        "overlap; volumes multiplied by the split ratio of later splits (e.g. NVDA 10:1 2024-06-10).",
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
        "close x latest weighted shares; former_tickers holds the SEC former names",
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
    "insider_ownership": ("as insider_trades", SEC_PD, "holding rows and the post-transaction positions"),
    "institutional_ownership": (
        "insider/form13f_holdings_parsed.csv, company/sec_company_tickers.csv",
        SEC_PD,
        "issuer names matched to tickers by normalised SEC title; values before 2023-01-03 were in USD thousands "
        "and are multiplied by 1,000; rows of one (ticker, period, investor, put/call) summed",
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
        "macro/us_cpi_monthly_1913_2026.csv, macro/core_cpi_CPILFESL_monthly_1957_2018.csv",
        "BLS via ODC-PDDL-1.0 repository; FRED via arch (NCSA)",
        "index level, month-on-month and year-on-year change in percent",
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
* MSFT statements: the bundled MSFT instance documents (FY2015) have no known filing date, and MSFT has no
  companyfacts file; the AMZN FY2022 and NFLX FY2023/2024-Q3 instance files likewise, so their periods carry the
  later filing's date (conservative for backtests). UNP is outside the universe.
* KPIs (`/kpi/*`), labor snapshot: no source in data-real; the endpoints answer with empty lists / 404.
* BoE/BoJ/BoC/RBA rate levels: only decision dates exist in data-real.
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
        "Built by `python scripts/build_reference_data.py` from `../shared/data-real` (real public data; see its",
        "SOURCES.md for repository commits). One Parquet dataset per resource under `data/<name>/`; columns and",
        "dtypes are the record schemas of `fdkit/schema.py`. Rebuilding gives the same rows (tested).",
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
    lines.append(LEFT_OUT)
    (out / "SOURCES.md").write_text("\n".join(lines))
    _write_concepts(out)


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
        "* `capital_expenditure` = -payments for PP&E; `free_cash_flow` = operating cash flow - payments for PP&E",
        "* `dividends_and_other_cash_distributions` = -dividends paid; `issuance_or_purchase_of_equity_shares` = "
        "stock issued - repurchased; `issuance_or_repayment_of_debt_securities` = issued - repaid + commercial "
        "paper (net)",
        "* quarterly share counts: the 3-month weighted average; a derived fiscal Q4 takes the fiscal year's",
        "* derived fiscal Q4 EPS = FY EPS - nine-month EPS (the usual approximation)",
        "",
    ]
    (out / "CONCEPTS.md").write_text("\n".join(lines))
