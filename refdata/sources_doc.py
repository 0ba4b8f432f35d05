"""Write ``SOURCES.md`` and ``CONCEPTS.md`` for a freshly built reference lake.

``SOURCES.md`` is made from the stages' own metadata (each lake dataset's :class:`~refdata.stage.Provenance`,
the stages in run order) and the figures of the lake just written: rows, keys, date range and size per dataset,
the price re-basing factors, the point-in-time coverage and the invariants of ``fdkit lake validate``.
``CONCEPTS.md`` is the us-gaap concept map of :mod:`refdata.concepts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from fdkit.lake.validate import validate
from refdata.common import tuples
from refdata.concepts import CONCEPTS, INSTANT_FIELDS
from refdata.form4_dates import filing_dates_by_year
from refdata.prices import prices_left_out
from refdata.sp500_bars import as_traded_by_year
from refdata.stage import Provenance, Stage, StageError

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
* SEC Financial Statement Data Sets (data-real-2): only 2009q3, 2010q1 and 2010q2 have their values (`num`); 2009q4
  is missing (10-Qs for September 2009 quarters, 10-Ks of fiscal years ending June-September 2009), 2010q3, 2010q4
  and 2021q1 have the filing index only. So no fiscal year has four first-reported quarters there: no Q4 and no TTM
  row comes from them, and a calendar-year filer's June 2009 quarter is dropped by the quarter-hole rule beside its
  March 2010 quarter (its values stay in `statement_vintages`). Filers the lake has no identity for (no CIK in the
  index-membership spells or today's lists: most companies that left the S&P 500 before 2026 have none) are skipped.
* pystock EPS of issuers with several share classes can be another class's (Visa reads $5.32 for a quarter of
  about $0.80 per class A share); pystock has no share counts to check it against. Such an EPS is served missing
  only where it exceeds the share price (ERIE; `refdata.quality`), so Visa's stays.
* Prices: MS, NEE and TCO 2015-2017 (the source mixes in another security's bars), and 17 names of the 2015-2017
  S&P 1500 whose moves beyond +/-25% no independent price file confirms (the `prices` provenance names them);
  dividends after the basis date of each source are not in the S&P 500 members' prices (split-adjusted only).
* KPIs (`/kpi/*`) and the webhook events `forward_guidance`, `non_gaap_metrics` and `operating_kpis`: no source
  holds guidance, non-GAAP measures or operating KPIs (the bundled 8-K texts are Items 5.02 and 9.01 only, no
  earnings press release or its exhibit 99.1; the XBRL facts are GAAP). The endpoints answer with empty lists and
  these three event types are never generated from data (`fdkit events test` sends a spec-shaped example).
* Earnings releases (8-K, Item 2.02): the sources date them (`release_date`) but hold no release text, so a
  release's webhook event carries the quarter's headline figures (revenue, EPS, net income and their changes) as
  the 10-Q/10-K that followed filed them, no accession, acceptance time or URL; `/earnings` serves one record per
  quarterly report (its 10-Q/10-K) with its `release_date`, not a separate 8-K record.
* Segmented balance-sheet and cash-flow items other than total assets, inventory, capital expenditure and
  depreciation: goodwill by segment, the most common such disclosure, is no field of the statements.
* `/ipos` (IPO registration statements: S-1, F-1, their amendments, 424B1/424B4): no bundled source holds one
  (the four companies' submissions have none; no EDGAR full index), so the bundled lake answers an empty list; a
  lake whose `filings` hold them (a mirror of a service's filings) answers them. None of the three reference
  documents describes the operation: its parameters follow the live service's (ticker, cik, filing_date, limit),
  and `classification` (ipo, spac, shell_company, resale, other) stays null without a source that reads the cover
  page.
* BoE/BoJ/BoC/RBA rate levels: only decision dates exist in data-real.

## Null where the record truly lacks the value

The 2026 document marks these fields as never null; the service answers null where the sources do not hold the
value (never a made-up one). `tests/test_reference_fuzz.py` lists the same places as the document's errors.
* Statement line items a company does not report (a bank's inventory, most companies' deposit liabilities), and
  ratios whose inputs are missing.
* `accession_number` where no source names the filing's accession (counts and reasons per dataset in
  "Accession numbers" above: statements, segments and earnings from pystock filings of 2015-2017 and some XBRL
  instance documents); a statement's or an earnings record's filing URL is then the EDGAR list of the company's
  filings of that form up to the filing day (never null), a segment row's is null.
* Company facts the sources lack for a company: SIC sector, website, listing date, number of employees, exchange.
* `filings.report_date` of forms without a period of report (EDGAR leaves it empty: 8-K/A, 144, SC 13G ...).
* `price_snapshot.market_cap` where the share count is not in the sources; `news.author` and `news.sentiment`
  (no sentiment is computed).
* As-reported reports of periods the statement datasets do not hold have no `fiscal_period`.
* `/filings/items` `accession_number` of the 10-Ks whose section source names none and which neither the
  submissions index nor the statements filed that day identify (AMZN, HD, IBM, JNJ, KO, MA, META, NFLX, PG, UNH,
  V, WMT: their statements come from instance documents without an accession).
* `/filings/items` `quarter` of an 8-K: an 8-K reports an event, not a period (the document defines the quarter
  for 10-Q filings; a 10-K's is 4, the quarter closing the fiscal year it reports).
* `/index-funds`: the fund header's `filing_date` and `total_net_assets` and the positions' `weight`,
  `market_value`, `shares`, `cusip` and `isin` (also the security header's `cusip`/`isin`): SPY's holdings are
  the S&P 500 constituents list (index membership), not the fund's N-PORT filing, which no source holds.
* Earnings fields the 2026 document returns "only when calculable" are left out of the record, not null, where
  the lake cannot derive them: `estimated_revenue`, `estimated_earnings_per_share` and the surprises always (no
  consensus estimates in the sources), changes without the quarter or year before (or whose earlier report was
  filed later). `signals` fire from the year-over-year changes only (revenue, net income, EPS, capex, margins:
  `refdata/earnings_signals.py`); EPS/revenue beats and misses, guidance, segment, non-GAAP and backlog
  signals need estimates, guidance and KPIs no source holds, so none of those fires; an entry without a signal
  has no `signals`. `filing_datetime`/`filing_window` are null where the SEC submissions index of the four bundled
  companies has no acceptance time (85 of 3,117 releases have one).
"""


def _date_range(df: pd.DataFrame) -> str:
    """The span of a dataset's first date column (``lo .. hi (column)``), empty without one.

    Example:
        >>> _date_range(pd.DataFrame({"date": pd.to_datetime(["2024-01-02", "2023-05-01"])}))
        '2023-05-01 .. 2024-01-02 (date)'
    """
    for col in ("report_period", "time", "date", "filing_date", "fiscal_period"):
        if col in df.columns and len(df) and pd.api.types.is_datetime64_any_dtype(df[col]):
            s = df[col].dropna()
            if len(s):
                lo, hi = s.min(), s.max()
                return f"{lo:%Y-%m-%d} .. {hi:%Y-%m-%d} ({col})"
    return ""


def provenance_of(stages: Sequence[Stage]) -> dict[str, Provenance]:
    """The provenance of every lake dataset the stages write.

    Args:
        stages: the stages.

    Returns:
        Dataset name -> provenance.

    Raises:
        StageError: a lake dataset without provenance.
    """
    out = {}
    for stage in stages:
        for o in stage.lake_outputs:
            if o.provenance is None:
                raise StageError(f"stage {stage.name!r}: lake dataset {o.name!r} has no provenance for SOURCES.md")
            out[o.name] = o.provenance
    return out


def _source_folders(stages: Sequence[Stage]) -> str:
    folders = sorted({rel.split("/", 1)[0] for s in stages for rel in s.sources})
    names = [f"`../shared/{f}`" if f != "registry" else "the repository's `sources/registry` (extracts from registry "
             "packages, see its SOURCES.md)" for f in folders]  # fmt: skip
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else "no source folder"


def write_sources_md(
    out: Path, written: Mapping[str, pd.DataFrame], stages: Sequence[Stage], price_factors: pd.DataFrame | None = None
) -> None:
    """Write ``SOURCES.md`` and ``CONCEPTS.md`` into a lake.

    Args:
        out: the lake.
        written: dataset name -> its rows as read back from the lake.
        stages: the stages that built it, in run order.
        price_factors: the price re-basing factors (``ticker``, ``price_factor``, ``split_factor``,
            ``overlap_days``).
    """
    lines = [
        "# data/ - the reference lake",
        "",
        f"Built by `python -m refdata` (or `python scripts/build_reference_data.py`) from {_source_folders(stages)}",
        "(real public data; see their SOURCES.md for repository commits). One Parquet dataset per resource under",
        "`data/<name>/`; columns and dtypes are the record schemas of `fdkit/catalog/schema.py`. Rebuilding gives the",
        "same rows (tested), and every invariant of `fdkit lake validate` holds (tested; table below).",
        "",
        "| dataset | rows | tickers/keys | date range | size |",
        "|---|---:|---:|---|---:|",
    ]
    for name, df in sorted(written.items()):
        key = "ticker" if "ticker" in df.columns else ("bank" if "bank" in df.columns else "series")
        n_keys = df[key].nunique() if key in df.columns else ""
        size = sum(p.stat().st_size for p in (out / name).rglob("*.parquet"))
        lines.append(f"| `{name}` | {len(df):,} | {n_keys} | {_date_range(df)} | {size / 1024:.0f} KiB |")
    lines += ["", "## Provenance, licence and method", ""]
    provenance = provenance_of(stages)
    for name in sorted(provenance):
        p = provenance[name]
        lines += [f"### `{name}`", f"* sources: {p.sources}", f"* licence: {p.licence}", f"* method: {p.method}"]
        lines += [f"* caveats: {p.caveats}"] if p.caveats else []
        lines.append("")
    lines += _stages(stages)
    if price_factors is not None and len(price_factors):
        lines += ["## Price bases: linking the as-traded and the adjusted sources", "",
                  "`adj_close` of the as-traded source's days = its own adjusted close x the price factor (onto the "
                  "2026-02-25 adjustment); its OHLC / the split factor (splits after it ends); dividends after = "
                  "1 - adjusted / as-traded close on its last days: above 0.05% the adjusted file's later rows have "
                  "`basis` adjusted_only and no OHLC (blank: no as-traded source).", "",
                  "| ticker | price factor | split factor | overlap days | dividends after |",
                  "|---|---:|---:|---:|---:|"]  # fmt: skip
        for r in tuples(price_factors):
            after = "" if r.dividends_after != r.dividends_after else f"{r.dividends_after:.4%}"
            lines.append(f"| {r.ticker} | {r.price_factor:.6f} | {r.split_factor:g} | {r.overlap_days} | {after} |")
        lines.append("")
    lines += _coverage(written)
    lines += as_traded_by_year(written["prices"]) + filing_dates_by_year(written["insider_trades"])
    lines += _member_coverage(written)
    lines += _fill_rates(written)
    lines += _accessions(written)
    lines += _invariants(out)
    lines.append(LEFT_OUT)
    text = "\n".join(lines)
    kept = _kept_section(out / "SOURCES.md")
    (out / "SOURCES.md").write_text(text.rstrip("\n") + "\n\n" + kept if kept else text)
    _write_concepts(out)


def _stages(stages: Sequence[Stage]) -> list[str]:
    """The build's stages in run order: what each makes, from which files and earlier outputs."""
    lines = ["## Build stages (in run order)", "",
             "Each stage is a module of `refdata/`; intermediates (in italics) are handed to later stages, "
             "never written.", "", "| stage | makes | outputs | needs | source files |",
             "|---|---|---|---|---:|"]  # fmt: skip
    lake = {o.name for s in stages for o in s.lake_outputs}

    def shown(name: str) -> str:
        return f"`{name}`" if name in lake else f"*{name}*"

    for s in stages:
        outputs = ", ".join(shown(o.name) for o in s.outputs)
        needs = ", ".join(shown(n) for n in s.needs) or "-"
        lines.append(f"| `{s.name}` | {s.title} | {outputs} | {needs} | {len(s.sources)} |")
    return [*lines, ""]


#: days on which the point-in-time coverage is counted
COVERAGE_DAYS = ("2010-03-31", "2015-06-30", "2016-06-30", "2022-06-30")


def _coverage(written: Mapping[str, pd.DataFrame]) -> list[str]:
    """The cross-section a point-in-time backtest has on a few days.

    Tickers with a quarterly income statement for a period ending in the 6 months before the day, filed on or
    before it, and a price bar that day.
    """
    inc, px = written["income_statements"], written["prices"]
    day_of = px["time"].dt.tz_convert(None)
    lines = ["## Point-in-time coverage", "",
             "Tickers with a quarterly income statement (revenue reported) for a period ending at most six months "
             "before the day, filed on or before it, and a price bar on the day.", "",
             "| day | statements known | price bars | both | what limits it |", "|---|---:|---:|---:|---|"]  # fmt: skip
    why = {
        "2010-03-31": "prices: only the universe's ~30 tickers before 2015 (fdkit-history has the members' prices); "
        "quarters: the SEC data sets' 10-Qs (December 2009 quarters of non-calendar fiscal years; a calendar "
        "year's Q4 2009 is a 10-K year, no quarter, and 2009q4's 10-Qs are not in the sets)",
        "2015-06-30": "pystock sightings start 2015-03-23 (earlier filings have no filing date)",
        "2016-06-30": "the pystock window (S&P 500 and 400 members, 2015-2017)",
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


#: the quarter-ends of the S&P 500, 400 and 1500 coverage tables (the pystock window)
MEMBER_DAYS = ("2015-06-30", "2015-09-30", "2015-12-31", "2016-03-31", "2016-06-30", "2016-09-30", "2016-12-30",
               "2017-03-31")  # fmt: skip


def _member_coverage(written: Mapping[str, pd.DataFrame]) -> list[str]:
    """The S&P 500, S&P 400 and S&P 1500 members of each quarter-end 2015-06 .. 2017-03 with a bar and a statement.

    Members are the ``index_membership`` spells running that day, under the lake ticker of each company (dead ones
    included); a statement counts if a quarterly row was filed on or before the day (any age), as the public
    functions return it.
    """
    lines = [
        "## S&P 500 members of each quarter-end with prices and statements",
        "",
        "Members = the index spells running that day (dead companies included, each under its lake ticker); "
        "*bar*: an as-traded bar that day; *statement*: a quarterly income statement filed on or before the "
        "day. The missing are named with what the sources lack: the pystock crawl (2015-03-23 .. 2017-03-31) "
        "has no 10-Q of the company before the day (its reports are sparse for some filers), a second share "
        "class whose filer's statements are under the other class (GOOG, BF-B, DISCK, FOX, NWS, UA), or no "
        "bar in pystock's price file (*left out*: a series the lake does not serve, `prices` provenance).",
        "",
    ]
    lines += _member_table(written, ("sp500",), named=True)
    lines += [
        "## S&P 400 members of each quarter-end with prices and statements",
        "",
        "As above, for the S&P 400 (its spells from the source's seed of 2011-11-20 on).",
        "",
    ]
    lines += _member_table(written, ("sp400",), named=True)
    lines += [
        "## S&P 1500 members of each quarter-end with prices and statements",
        "",
        "The S&P 500, 400 and 600 members of the day together. The source's S&P 600 list starts on "
        "2021-03-31: no S&P 600 member of 2015-2017 is known, so these are the 500's and the 400's (the "
        "missing are named in their tables).",
        "",
    ]
    return lines + _member_table(written, ("sp500", "sp400", "sp600"), named=False)


def _member_table(written: Mapping[str, pd.DataFrame], indices: Sequence[str], named: bool) -> list[str]:
    """One coverage table: per quarter-end the members of ``indices``, with a bar, a statement, both."""
    spells, inc, px = written["index_membership"], written["income_statements"], written["prices"]
    spells = spells[spells["index"].astype(str).isin(indices)]
    day_of = px["time"].dt.tz_convert(None)
    traded = px["close"].notna()
    q = inc[inc["period"].astype(str) == "quarterly"]
    head = "| day | members | with a bar | with a statement | both |" + (" missing (why) |" if named else "")
    lines = [head, "|---|---:|---:|---:|---:|" + ("---|" if named else "")]
    left_out = prices_left_out()
    for d in MEMBER_DAYS:
        day = pd.Timestamp(d)
        on = spells[(spells["start_date"] <= day) & (spells["end_date"].isna() | (spells["end_date"] >= day))]
        members = set(on["current_ticker"].astype(str))
        bars = set(px.loc[(day_of == day) & traded, "ticker"].astype(str))
        stated = set(q.loc[q["filing_date"] <= day, "ticker"].astype(str))
        both = members & bars & stated
        row = f"| {d} | {len(members)} | {len(members & bars)} | {len(members & stated)} | {len(both)} |"
        if named:
            gaps = []
            for t in sorted(members - both):
                why = [] if t in bars else ["no bar, left out" if t in left_out else "no bar"]
                gaps.append(f"{t} ({', '.join([*why, *([] if t in stated else ['no statement'])])})")
            row += f" {', '.join(gaps)} |"
        lines.append(row)
    return [*lines, ""]


#: the cross-section window of the fill-rate table (the pystock reports' span)
FILL_WINDOW = ("2015-01-01", "2017-06-30")
#: ... and of the SEC Financial Statement Data Sets' rows (filings of 2009q3, 2010q1, 2010q2)
FSDS_WINDOW = ("2009-01-01", "2010-12-31")


def _fill_rates(written: Mapping[str, pd.DataFrame]) -> list[str]:
    """Per statement field: the share of rows with a value, and the values rejected or derived.

    Shares over all annual and quarterly rows and over the 2015-2017 cross-section; rejected (a sanity rule set
    them missing) and derived values are counted from ``quality``.
    """
    lines = ["## Field fill rates of the statements", "",
             "Share of annual and quarterly rows with a value: all rows, and the rows of the 2015-2017 cross-section "
             f"(report periods {FILL_WINDOW[0]} .. {FILL_WINDOW[1]}, the pystock reports, which carry revenue, "
             "operating and net income, EPS, dividends per share, total and current assets, current liabilities, "
             "cash, equity and the three cash-flow totals only), and the rows of 2009-2010 (report periods "
             f"{FSDS_WINDOW[0]} .. {FSDS_WINDOW[1]}, mostly the SEC Financial Statement Data Sets, every mapped tag "
             "of the filing). *rejected*: values the source gave that failed a "
             "sanity rule and are served missing, their reason in the row's `quality` (`refdata.quality`); "
             "*derived*: values computed, not reported (weighted shares = net income / EPS), named there too.", "",
             "| dataset | field | all rows | 2015-2017 | 2009-2010 | rejected | derived |",
             "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name in ("income_statements", "balance_sheets", "cash_flow_statements"):
        df = written[name]
        df = df[df["period"].astype(str) != "ttm"]
        window = df[(df["report_period"] >= FILL_WINDOW[0]) & (df["report_period"] <= FILL_WINDOW[1])]
        early = df[(df["report_period"] >= FSDS_WINDOW[0]) & (df["report_period"] <= FSDS_WINDOW[1])]
        notes = df["quality"].astype("string") if "quality" in df.columns else pd.Series(pd.NA, index=df.index)
        fields = [c for c in df.columns if str(df[c].dtype) in ("float64", "Float64")]
        for f in fields:
            rejected = int(notes.str.contains(rf"(?:^|; ){f}: [^;]*served missing", regex=True).fillna(False).sum())
            derived = int(notes.str.contains(rf"(?:^|; )[a-z_, ]*\b{f}\b[a-z_, ]*: derived", regex=True)
                          .fillna(False).sum())  # fmt: skip
            lines.append(f"| {name} | {f} | {df[f].notna().mean():.1%} | {window[f].notna().mean():.1%} | "
                         f"{early[f].notna().mean():.1%} | {rejected} | {derived} |")  # fmt: skip
    return [*lines, ""]


_STATEMENTS_WHY = (
    "filed 2015-2017: pystock rows (the crawler kept no accession; companyfacts covers none of these companies "
    "and the submissions indexes start 2015-03 for AAPL, later for MSFT, NVDA, TSLA; the SEC Financial Statement "
    "Data Sets' values cover filings of 2009q3, 2010q1 and 2010q2 only, whose rows have their accession); "
    "filed 2024 or later: instance documents of companies "
    "neither a submissions index nor companyfacts covers"
)
#: why the rows of a dataset without an accession have none (every source of the dataset was searched)
NO_ACCESSION_WHY = {
    "income_statements": _STATEMENTS_WHY,
    "balance_sheets": _STATEMENTS_WHY,
    "cash_flow_statements": _STATEMENTS_WHY,
    "financial_metrics": "as income_statements",
    "earnings": "as income_statements (an earnings record is its quarterly statement's report)",
    "statement_vintages": "as income_statements: pystock reports and instance documents of companies no source "
    "with accessions covers",
    "segmented_revenues": "instance documents of companies neither a submissions index nor companyfacts covers "
    "(the documents name no accession)",
    "segmented_financials": "as segmented_revenues",
    "filing_items": "10-K/10-Q sections of companies neither a submissions index nor companyfacts covers (the "
    "sections name their HTML file, not the accession)",
    "insider_trades": "the S&P 500 Form 4 table (data-real-2) has no accession and no filing date, and the issuer "
    "indexes of AAPL, MSFT, NVDA, TSLA name no reporting owner, so a transaction cannot be tied to one filing; "
    "the bundled SNOW and 374Water documents name none and their issuers have no index",
    "insider_ownership": "the bundled Snowflake Forms 3 and 5 name no accession and Snowflake has no index",
}


def _accessions(written: Mapping[str, pd.DataFrame]) -> list[str]:
    """Per dataset with accession numbers: how many rows carry one, and why the rest cannot."""
    lines = ["## Accession numbers", "",
             "Rows that carry the SEC accession number of the filing they come from: the one their source names, "
             "else the one filing of the same company and form filed the same day (and, where the row knows it, "
             "reporting the same period) in the SEC submissions indexes or companyfacts (`refdata.accessions`); "
             "never a guess across companies, forms or days. The rest have none because:", "",
             "| dataset | rows | with accession | without | of these filed by 2017 / later / undated | tickers "
             "without | why the rest has none |", "|---|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for name, df in sorted(written.items()):
        if "accession_number" not in df.columns:
            continue
        has = df["accession_number"].notna()
        without = int((~has).sum())
        filed = pd.to_datetime(df.loc[~has, "filing_date"]) if "filing_date" in df.columns else pd.Series()
        early = int((filed.dt.year <= 2017).sum()) if len(filed) else 0
        undated = int(filed.isna().sum()) if len(filed) else without
        split = f"{early:,} / {without - early - undated:,} / {undated:,}"
        tickers = df.loc[~has, "ticker"].astype(str).nunique() if "ticker" in df.columns else 0
        why = NO_ACCESSION_WHY.get(name, "-") if without else "-"
        lines.append(f"| `{name}` | {len(df):,} | {int(has.sum()):,} | {without:,} | {split} | {tickers} | {why} |")
    return [*lines, ""]


def _invariants(out: Path) -> list[str]:
    """The validation report of the lake just written (``fdkit lake validate``)."""
    lines = ["## Invariants (`fdkit lake validate`)", "", "| invariant | violations | rule |", "|---|---:|---|"]
    for r in validate(out):
        rule = r.description.replace("|", "\\|")
        lines.append(f"| `{r.name}` | {r.violations if r.violations is not None else '-'} | {rule} |")
    return [*lines, ""]


def _write_concepts(out: Path) -> None:
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


#: the section the history package's build writes into ``SOURCES.md`` (its coverage table), kept across rebuilds
KEPT_BEGIN = "<!-- price-history-coverage"
KEPT_END = "<!-- /price-history-coverage -->"


def _kept_section(path: Path) -> str:
    """The marked section of an existing ``SOURCES.md`` (empty when none): another build's, not this one's."""
    if not path.exists():
        return ""
    text = path.read_text()
    start, end = text.find(KEPT_BEGIN), text.find(KEPT_END)
    return text[start : end + len(KEPT_END)] + "\n" if 0 <= start < end else ""
