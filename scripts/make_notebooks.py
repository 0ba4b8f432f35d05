#!/usr/bin/env python3
"""Write the research notebooks in notebooks/ (each tells one story against the embedded default).

Usage: ``python scripts/make_notebooks.py [--execute] [--only NAME ...]`` (``--execute`` stores the outputs too;
``--only`` writes the notebooks named, e.g. ``08_factor_study``). The notebooks are committed; ``tests/test_notebooks.py`` executes
every one of them top to bottom with nbclient.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks"

SETUP = """%matplotlib inline
import matplotlib.pyplot as plt
import pandas as pd

import fdkit

pd.set_option("display.width", 140)
pd.set_option("display.max_columns", 12)"""

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    "01_quickstart": [
        (
            "md",
            "# Quickstart: a price panel in three lines\n\nWith no API key and no base URL, fdkit starts its "
            "embedded Financial Data Service over the bundled reference data: everything below runs offline.",
        ),
        ("code", SETUP),
        (
            "code",
            'px = fdkit.prices(["AAPL", "MSFT", "NVDA", "GOOGL"], start_date="2023-01-03", end_date="2025-12-31")\n'
            "px.head()",
        ),
        (
            "md",
            "The frame is long and tidy: indexed `(ticker, time)`, typed columns, the same shape for one ticker "
            "or many.",
        ),
        ("code", "px.dtypes"),
        (
            "md",
            "Every bar says its `basis`. `open`..`close` are as traded (dividends never in them; NVDA's 10-for-1 "
            "split of 2024-06-10 is taken out, so the series is on today's share basis); a fund without an "
            "as-traded source (SPY after 2021-03) is `adjusted_only`: no as-traded price, only `adj_close`. Growth "
            "and returns use total return (`tr_close`), which puts every dividend back.",
        ),
        ("code", 'px["basis"].groupby(level="ticker", observed=True).value_counts().unstack()'),
        ("code", 'close = px.fds.wide("close")   # date x ticker\nclose.loc["2024-06-03":"2024-06-14"]'),
        (
            "code",
            'tr = px.fds.total_return()\nax = tr.fds.plot(column="tr_close", rebase=100, '
            'title="Growth of 100 (total return)")\nplt.show()',
        ),
        ("code", 'tr.fds.returns(column="tr_close").groupby(level="ticker", observed=True).agg(["mean", "std"])'),
    ],
    "02_fundamentals_ratios": [
        (
            "md",
            "# Fundamentals and ratios\n\nQuarterly statement time series, trailing-twelve-month ratios and a "
            "peer comparison. The ratios use the same code as the service's `/financial-metrics`.",
        ),
        ("code", SETUP),
        (
            "code",
            'peers = ["AAPL", "NVDA", "GOOGL", "TSLA"]\n'
            'fin = fdkit.financials(peers, period="quarterly", limit=16)\n'
            'fin[["revenue", "net_income", "total_assets", "free_cash_flow"]].tail()',
        ),
        ("code", 'ax = fin.fds.plot(kind="statement", column="revenue", title="Quarterly revenue")\nplt.show()'),
        (
            "code",
            'px = fdkit.prices(peers, start_date="2021-01-04", end_date="2026-02-24")\n'
            "ttm = fin.fds.ratios(prices=px, trailing=True, growth=True)\n"
            'ttm[["gross_margin", "net_margin", "return_on_equity", "price_to_earnings_ratio"]].dropna().tail(8)',
        ),
        ("code", 'ax = ttm.fds.plot(kind="ratios", column="net_margin", title="Net margin, latest TTM")\nplt.show()'),
        ("md", "The service computes the same metrics:"),
        (
            "code",
            'fdkit.financial_metrics("AAPL", period="annual", limit=3)[["gross_margin", "net_margin", '
            '"return_on_equity"]]',
        ),
    ],
    "03_segments": [
        (
            "md",
            "# Segments: what a company sells, where\n\nSegmented revenues explode to one row per item per "
            "segment member, straight from the dimensional XBRL facts of the 10-K.",
        ),
        ("code", SETUP),
        ("code", 'seg = fdkit.segmented_revenues("AAPL", period="annual", limit=6)\nseg.head(10)'),
        (
            "code",
            'products = seg[(seg["segment_type"] == "product") & ~seg["is_subtotal"]]  # leaves: nothing twice\n'
            'products.pivot_table(index="report_period", columns="segment_label", values="amount", '
            "observed=True) / 1e9",
        ),
        (
            "md",
            "Filers report subtotals beside their parts (Apple's Product; NVIDIA's Data Center = Compute + "
            "Networking). A subtotal has `is_subtotal` set and its parts name it in `parent_label`; sums and the "
            "stacked bars use the leaves, so they add up to the revenue.",
        ),
        (
            "code",
            'nv = fdkit.segmented_revenues("NVDA", period="annual", report_period="2025-01-26")\n'
            'nv[nv["segment_type"] == "product"][["segment_label", "amount", "is_subtotal", "parent_label"]]',
        ),
        ("code", 'ax = seg.fds.plot(segment_type="product", title="Apple revenue by product (billions)")\nplt.show()'),
        (
            "code",
            'ax = seg.fds.plot(segment_type="geography", title="Apple revenue by geography (billions)")\nplt.show()',
        ),
    ],
    "04_screen_backtest": [
        (
            "md",
            "# Screen, then a point-in-time backtest\n\nScreen on the latest annual figures, then test a rule "
            "month by month over the S&P 500 cross-section of 2015-2017, using only what was **filed** by each "
            "month end (`fds.asof`: a filing counts from the close after the SEC accepted it where the service "
            "sends the acceptance time, else from the day after its filing date) and nothing older than 200 days "
            "(`max_age`), so nothing leaks from the future and nothing stale is carried forward.",
        ),
        ("code", SETUP + "\nimport numpy as np"),
        (
            "code",
            'hits = fdkit.screen(filters=[{"field": "revenue", "operator": "gt", "value": 1e11},\n'
            '                              {"field": "net_margin", "operator": "gte", "value": 0.15}], '
            'period="annual")\nhits',
        ),
        (
            "code",
            'universe = fdkit.available("income_statements")\n'
            'ttm = fdkit.income_statements(universe, period="ttm", limit=12, errors="ignore")\n'
            'ttm["net_margin"] = ttm["net_income"] / ttm["revenue"]\n'
            'px = fdkit.prices(universe, start_date="2015-03-20", end_date="2017-03-31", errors="ignore")\n'
            'monthly = px.fds.resample("ME")\n'
            'pit = ttm[["net_margin"]].fds.asof(monthly, max_age="200D")  # known at each month end\n'
            'pit[["close", "report_period", "available_from", "net_margin"]].dropna().tail()',
        ),
        (
            "code",
            'ret = monthly.fds.forward_returns([1])["fwd_1"]  # next month\n'
            'signal = pit["net_margin"] >= 0.15\n'
            'strategy = ret[signal].groupby(level="time").mean()\n'
            'benchmark = ret[pit["net_margin"].notna()].groupby(level="time").mean()\n'
            'curve = pd.DataFrame({"TTM net margin >= 15%": strategy, "all with a TTM net margin": benchmark}).dropna()\n'
            "equity = (1 + curve).cumprod()\nequity.tail()",
        ),
        (
            "code",
            'ax = equity.plot(title="Equity curve (point in time, S&P 500 members)")\nax.set_ylabel("growth of 1")\n'
            'ax.set_xlabel("month end")\nax.axhline(1, color="grey", lw=0.8, ls="--")\nplt.show()',
        ),
        (
            "code",
            "known = pit.dropna(subset=['available_from'])\n"
            "assert (known['available_from'] <= known.index.get_level_values('time')).all()\n"
            "assert ((known.index.get_level_values('time') - known['available_from']) <= pd.Timedelta('200D')).all()\n"
            "print(len(known), 'ticker-months, no statement used before its filing date or after 200 days')",
        ),
    ],
    "05_filings_insiders_institutions": [
        ("md", "# Filings, insiders and institutions"),
        ("code", SETUP),
        ("code", 'filings = fdkit.filings("AAPL", filing_type=["10-K", "10-Q"], limit=8)\nfilings'),
        (
            "code",
            'items = fdkit.filing_items("AAPL", filing_type="10-K", year=2024)\n'
            'items.assign(chars=items["text"].str.len())[["number", "name", "chars"]]',
        ),
        ("code", 'print(items.loc[items["number"] == "Item-1A", "text"].iloc[0][:800])'),
        (
            "code",
            'trades = fdkit.insider_trades("AAPL", limit=10)  # the ten newest\n'
            'trades[["name", "title", "transaction_date", "transaction_shares", "transaction_price_per_share", '
            '"transaction_type"]]',
        ),
        ("code", 'holders = fdkit.institutional_ownership("AAPL")\nholders[["investor", "shares", "market_value"]]'),
        (
            "code",
            'ax = (holders.groupby("investor")["market_value"].sum() / 1e6).sort_values().plot.barh(\n'
            '    title="AAPL holdings by 13F filer (USD millions)")\n'
            'ax.set_xlabel("market value of the AAPL shares held (USD millions)")\n'
            'ax.set_ylabel("13F filer, largest holding at the top")\nplt.show()',
        ),
    ],
    "06_macro": [
        ("md", "# Macro: policy rates, the yield curve and inflation"),
        ("code", SETUP),
        (
            "code",
            'rates = fdkit.interest_rates(["FED", "ECB"], start_date="2000-01-01")\n'
            'wide = rates["rate"].unstack("bank").ffill()\nwide.tail()',
        ),
        (
            "code",
            'ax = wide.plot(drawstyle="steps-post", title="Policy rates (%)")\n'
            'ax.set_ylabel("policy rate (%)")\nax.set_xlabel("date")\nax.legend(title="central bank")\nplt.show()',
        ),
        ("code", "curve = fdkit.yield_curve_snapshot()\ncurve"),
        (
            "code",
            'hist = fdkit.yield_curve(start_date="2021-01-01", end_date="2023-11-30")\n'
            'spread = hist["10_year"] - hist["2_year"]\n'
            'ax = spread.plot(title="10y - 2y Treasury spread (%)")\nax.axhline(0, color="grey")\n'
            'ax.set_ylabel("10-year minus 2-year yield (percentage points)")\nax.set_xlabel("date")\nplt.show()',
        ),
        ("code", "fdkit.inflation_snapshot()"),
        ("code", 'fdkit.interest_rate_snapshot(["FED", "ECB"])'),
    ],
    "08_factor_study": [
        (
            "md",
            "# A factor study: does cheapness predict returns?\n\nEarnings yield (trailing diluted EPS over "
            "the price) of the S&P 500 **members of each month** (point in time: companies that later left the "
            "index are in, companies that joined later are out), known at each month end (statements from the "
            "day after they were filed), against the next month's and the next year's returns: the rank "
            "information coefficient (IC) per month, with t-statistics that account for overlapping horizons, "
            "and the returns of quintile portfolios.",
        ),
        ("code", SETUP),
        (
            "code",
            "import warnings\n\n"
            'spells = fdkit.index_members("sp500")  # every membership spell, dead companies included\n'
            'first, last = pd.Timestamp("2015-03-31"), pd.Timestamp("2017-03-31")\n'
            'live = spells[(spells.index.get_level_values("start_date") <= last)\n'
            '              & (spells["end_date"].isna() | (spells["end_date"] >= first))]\n'
            'universe = sorted(set(live.index.get_level_values("ticker")))  # ever a member in the window\n'
            'px = fdkit.prices(universe, start_date="2015-03-20", end_date="2017-03-31", errors="ignore")\n'
            'every_month = px.fds.resample("ME")  # every name\'s months: returns are taken before any filter\n'
            'monthly = every_month.fds.in_index("sp500", spells)  # each month: its members only\n'
            'print(len(universe), "members in the window;", px.index.get_level_values("ticker").nunique(),\n'
            '      "with prices in the reference lake")',
        ),
        (
            "code",
            'ttm = fdkit.income_statements(universe, period="ttm", limit=12, errors="ignore")\n'
            'panel = ttm[["earnings_per_share_diluted"]].fds.asof(monthly, max_age="200D")  # filing dates travel\n'
            'panel["earnings_yield"] = panel["earnings_per_share_diluted"] / panel["close"]\n'
            "panel = panel.join(every_month.fds.forward_returns([1, 12]))  # a member's next month, also if it leaves\n"
            'panel[["close", "report_period", "available_from", "earnings_yield", "fwd_1"]].dropna().tail()',
        ),
        (
            "md",
            "The IC per month, and its summary: the twelve-month horizon overlaps eleven months from one month "
            "to the next, so its t-statistic uses Newey-West errors with 11 lags, and a horizon with too few "
            "months gets no t-statistic at all (a warning says so):",
        ),
        (
            "code",
            'ic = panel.fds.rank_ic("earnings_yield", ["fwd_1", "fwd_12"])\n'
            "with warnings.catch_warnings(record=True) as caught:  # the summary says why a t-statistic is missing\n"
            '    warnings.simplefilter("always")\n'
            '    summary = panel.fds.rank_ic("earnings_yield", ["fwd_1", "fwd_12"], summary=True)\n'
            "for w in caught:\n"
            "    print(w.message)\n"
            "summary",
        ),
        ("code", 'ax = ic.fds.plot(kind="ic", title="Earnings yield: rank IC with next month\'s return")\nplt.show()'),
        (
            "md",
            "**Survivorship check.** The members of 2015-03-31 held to 2017-03-31, equally weighted, a name that "
            "stopped trading (acquired, merged) held to its last bar and in cash after it; beside them today's "
            "members (the list a naive study starts from) held over the same two years, and the index (SPY). The "
            "names that joined the index later did so because they had done well, so a cross-section of today's "
            "members overstates what an investor could have held:",
        ),
        (
            "code",
            'today = sorted(set(fdkit.index_members("sp500", "2026-06-30").index.get_level_values("ticker")))\n'
            'naive_px = fdkit.prices(today, start_date="2015-03-20", end_date="2017-03-31", errors="ignore")\n'
            'spy = fdkit.prices("SPY", start_date="2015-03-20", end_date="2017-03-31")\n'
            "\n"
            "def held(p):  # 2015-03-31 -> 2017-03-31, price returns; a name that stopped trading: to its last bar\n"
            '    c = p["close"].unstack("ticker")\n'
            '    start = c[c.index <= pd.Timestamp("2015-03-31")].iloc[-1]\n'
            '    end = c[c.index <= pd.Timestamp("2017-03-31")].ffill().iloc[-1]\n'
            "    last = c.apply(lambda s: s.last_valid_index())\n"
            '    return pd.DataFrame({"r": end / start - 1, "last": last}).dropna(subset=["r"])\n'
            "\n"
            'members_then = set(fdkit.index_members("sp500", "2015-03-31").index.get_level_values("ticker"))\n'
            "pit, naive = held(px), held(naive_px)\n"
            "pit = pit[pit.index.isin(members_then)]\n"
            'dead = pit[pit["last"] < pd.Timestamp("2017-03-31")]  # stopped trading inside the window\n'
            "later = naive[~naive.index.isin(members_then)]  # in today's list, not yet members in 2015\n"
            'index_return = float(held(spy)["r"].iloc[0])\n'
            'pd.DataFrame({"names": [len(pit), len(dead), len(naive), len(later), 1],\n'
            '              "mean 2-year return": [pit["r"].mean(), dead["r"].mean(), naive["r"].mean(),\n'
            '                                     later["r"].mean(), index_return]},\n'
            '             index=["members of 2015-03-31", "  of which stopped trading by 2017-03-31",\n'
            '                    "today\'s members", "  of which joined after 2015-03-31", "the index (SPY)"])',
        ),
        (
            "md",
            "Price returns throughout. The point-in-time members, dead ones included, return less than the index "
            "here: equal weight against capitalisation weight, and in 2015-2017 the largest companies did best while "
            "the equal weight holds more of the energy and materials names that fell with commodities. The members "
            "that stopped trading did not drag the average down: most left by acquisition, at a premium. Today's "
            "members return far more than either, and the difference between the first and third rows is "
            "survivorship: the names that joined later had done well, which is why they joined.",
        ),
        (
            "md",
            "Quintile portfolios, rebalanced monthly (q1 = the lowest earnings yield, q5 = the highest: the cheapest "
            "stocks), and the long-short spread (q5 minus q1):",
        ),
        (
            "code",
            'quintiles = panel.fds.quantile_returns("earnings_yield", "fwd_1", n=5)\n'
            "quintiles.mean().to_frame('mean monthly return')",
        ),
        (
            "code",
            'ax = quintiles.fds.plot(kind="quantiles", title="Earnings-yield quintiles: growth of 1")\nplt.show()',
        ),
        (
            "md",
            "## Gross profitability, 2010-2011\n\nThe 2015-2017 statements carry gross profit "
            "for a few percent of rows; the SEC Financial Statement Data Sets carry it for every filer that tags it, "
            "for the 10-Ks of fiscal 2009 (filed early 2010). So the second study runs a year earlier: gross profit "
            "over total assets (GP/A, Novy-Marx 2013) of the S&P 500 **members of each month end**, joined point in "
            "time on the statements' filing "
            "dates (`.fds.asof` refuses undated rows), against the next month's and the next year's total returns. "
            "Prices 2009-2012 come from `fdkit.price_history` (the history package `fdkit-history`): the "
            "as-traded close for the ratio, the adjusted close for returns (never across a change of its basis "
            "or source: `.fds.forward_returns` leaves those NaN), dead names held to their last bar.",
        ),
        (
            "code",
            'start, end = pd.Timestamp("2010-01-31"), pd.Timestamp("2012-12-31")\n'
            'live10 = spells[(spells.index.get_level_values("start_date") <= end)\n'
            '                & (spells["end_date"].isna() | (spells["end_date"] >= start))]\n'
            'names = sorted(set(live10.index.get_level_values("ticker")))\n'
            "# the price history (fdkit-history) of every member of those years, dead ones included: one call, a few "
            "requests\n"
            'daily = fdkit.price_history(names, start_date="2009-12-01", end_date="2012-12-31", limit=None, '
            'errors="ignore")\n'
            'px10 = daily[["close", "adj_close", "basis", "adjusted_as_of", "price_source"]].rename_axis(["ticker", "time"])\n'
            "# every column survives the resample (series_breaks counts the changes of basis or source in a month);\n"
            "# the forward returns are of adj_close (the history's total-return close), never across such a change,\n"
            "# taken over every month of every name before the membership filter (a name that leaves the index\n"
            "# has not stopped trading)\n"
            'all10 = px10.fds.resample("ME")\n'
            'monthly10 = all10.fds.in_index("sp500", spells)  # members of each month\n'
            "fwd10 = all10.fds.forward_returns([1, 12], to_last_price=True)\n"
            'annual = fdkit.income_statements(names, period="annual", limit=None, errors="ignore")\n'
            'assets = fdkit.balance_sheets(names, period="annual", limit=None, errors="ignore")\n'
            'fy = annual[["gross_profit", "earnings_per_share_diluted", "earnings_per_share", "filing_date",\n'
            '             "filing_datetime"]].join(assets[["total_assets"]])\n'
            'fy = fy[fy.index.get_level_values("report_period").year.isin([2009, 2010])]\n'
            'fy["gp_to_assets"] = fy["gross_profit"] / fy["total_assets"]\n'
            'panel10 = fy[["gp_to_assets", "filing_date"]].fds.asof(monthly10, max_age="400D")\n'
            "panel10 = panel10.join(fwd10)\n"
            "# the months the fiscal-2009 10-Ks are known for most names (none is used before its filing day)\n"
            'months = panel10.index.get_level_values("time")\n'
            'panel10 = panel10[(months >= "2010-03-31") & (months <= "2011-02-28")]\n'
            'print(len(names), "members 2010-2012,", monthly10.index.get_level_values("ticker").nunique(),\n'
            '      "with history prices,", fy.index.get_level_values("ticker").nunique(), "with a fiscal 2009/10 10-K;",\n'
            '      "rows used before their filing day:", int((panel10["available_from"] > panel10.index.get_level_values("time")).sum()))',
        ),
        (
            "code",
            "with warnings.catch_warnings(record=True) as caught:\n"
            '    warnings.simplefilter("always")\n'
            '    ic_table = pd.concat({f: panel10.fds.rank_ic(f, ["fwd_1", "fwd_12"], summary=True)\n'
            '                          for f in ["gp_to_assets"]}, names=["factor", "horizon"])\n'
            "for w in caught:\n"
            "    print(w.message)\n"
            "ic_table",
        ),
        (
            "md",
            "**What this sample can and cannot show.** Two years of monthly ICs (2015-2017) and twelve (2010-2011) "
            "are a handful of independent observations: a one-month IC's t-statistic is a first look, not evidence. "
            "The twelve-month horizon of 2010-2011 is twelve overlapping windows, about one year of returns: its "
            "Newey-West t (11 lags on 12 observations) is printed because the method is right, but a t of about 4 "
            "from one year says how stable the ranking was within that year, not that GP/A is priced. The "
            "study rests on **one year of fundamentals** (the fiscal-2009 10-Ks, filed January-March 2010; the SEC "
            "data sets of 2009q4 and of 2010q3 on have no values in the sources), about 110 names a month for "
            "GP/A (banks and insurers report no gross profit) of the ~500 members: only members whose CIK the lake "
            "knows get statements, and most companies that left the index later have none, so the cross-section "
            "leans towards survivors although the prices (fdkit-history) include dead names to their last bar. "
            "The earnings yield is not studied in 2010: the filings' per-share values are served missing where a "
            "split between 2010 and 2015 may hide (no source of the split table covers those years), so an E/P "
            "would be 2-10x off for the companies that split (KO, MA, UNP...). The 2015-2017 E/P above uses "
            "as-traded closes and per-share values on one split basis, for the members of each month, dead ones "
            "included (see `data/SOURCES.md` for the coverage of every quarter-end). What the samples do show: the "
            "studies run point in time, each month seeing only reports filed by then (checked in "
            "`tests/test_notebooks.py`).",
        ),
    ],
    "09_event_study": [
        (
            "md",
            "# An event study: the market's answer to strong quarters\n\nEvents: quarterly reports of the "
            "S&P 500 members whose revenue grew more than 20% on the same quarter a year earlier (matched by "
            "date, not by row), dated by their filing. Abnormal returns against the equal-weighted panel, from "
            "five days before the filing to twenty after.",
        ),
        ("code", SETUP),
        (
            "code",
            'universe = fdkit.available("income_statements")\n'
            'q = fdkit.income_statements(universe, period="quarterly", limit=12, errors="ignore")\n'
            'growth = q.fds.ratios(growth=True, lag=4, families=["growth"])["revenue_growth"]  # year on year\n'
            'events = q.loc[growth > 0.2, ["filing_date"]].reset_index()\n'
            'px = fdkit.prices(universe, start_date="2015-03-20", end_date="2017-03-31", errors="ignore")\n'
            "study = fdkit.event_study(events, px, window=(-5, 20))\n"
            'print(study.attrs["events_used"], "events used,", study.attrs["events_dropped"], "outside the prices")\n'
            'study[["mean_ar", "t_stat", "car", "car_t_stat"]].loc[[-5, -1, 0, 1, 5, 10, 20]]',
        ),
        ("code", 'ax = study.fds.plot(title="Revenue growth > 20%: cumulative abnormal return")\nplt.show()'),
    ],
    "07_webhooks": [
        (
            "md",
            "# Webhooks: receive events and watch the lake update\n\nA receiver lands signed events into "
            "a lake exactly once; here the service replays a window of its reference data to it (ten days of 2024 "
            "around Apple's 10-K and a Fed decision).",
        ),
        (
            "code",
            SETUP + "\nimport tempfile\nfrom pathlib import Path\n\nimport fdkit.server\n"
            "from fdkit.lake import default_data_dir\nfrom fdkit.webhooks import Destination, create_receiver, deliver, events_from_lake, read_landed",
        ),
        (
            "code",
            'lake = Path(tempfile.mkdtemp()) / "lake"\nsecret = "whsec_demo"\n'
            "receiver = fdkit.server.serve_app(create_receiver(lake, secret))\nreceiver.base_url",
        ),
        (
            "code",
            'events = events_from_lake(default_data_dir(), since="2024-10-30", until="2024-11-08")\n'
            'pd.Series([e["type"] for e in events]).value_counts()',
        ),
        (
            "code",
            'report = deliver(events[:10], [Destination(receiver.base_url + "/hook", secret)])\n'
            'print(len(report.acked), "acknowledged")\nread_landed(lake, "income_statements")'
            '[["ticker", "report_period", "period", "revenue"]]',
        ),
        (
            "code",
            'report = deliver(events, [Destination(receiver.base_url + "/hook", secret)])  # again: duplicates '
            'are ignored\nprint(len(report.acked), "acknowledged,", len(receiver.app.state.landing.'
            'landed_ids()), "landed once each")',
        ),
        (
            "code",
            "with fdkit.server.start(data=lake) as srv:\n"
            "    c = fdkit.Client(srv.api_key, srv.base_url, cache=False)\n"
            '    served = c.interest_rates("FED")\nserved',
        ),
        ("code", "receiver.stop()"),
    ],
}


def main() -> int:
    import os
    import sys

    execute = "--execute" in sys.argv
    only = sys.argv[sys.argv.index("--only") + 1 :] if "--only" in sys.argv else list(NOTEBOOKS)
    if execute:  # the stored outputs without progress bars (a reader sees the results, not the waiting)
        os.environ["FDKIT_PROGRESS"] = "0"
    OUT.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        if name not in only:
            continue
        nb = new_notebook(cells=[new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in cells])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        if execute:  # commit the notebooks with their outputs, so they read well without running them
            import nbclient

            nbclient.NotebookClient(
                nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(OUT)}}
            ).execute()
        nbformat.write(nb, OUT / f"{name}.ipynb")
    print(f"wrote {len(only)} notebooks to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
