"""The README's figures of the data and the tool are what the code and the lake give (issue 45, item 6).

Each test reads its figure from the README's own sentence (so a rewritten sentence without its figure fails here,
and a changed figure is checked again) and computes it from the embedded default over the bundled lake. Timings
and the suite's own counts are measurements of a run (``benchmarks/``, the README's test command), not figures of
the data: they are not checked here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pyarrow.dataset as pads
import pytest

import fdkit

ROOT = Path(__file__).resolve().parents[1]
README = " ".join((ROOT / "README.md").read_text().split())  # one line: a sentence broken over lines joins


def figure(pattern: str) -> list[int]:
    """The numbers a README sentence states (commas dropped), or a failure naming the sentence that is gone."""
    found = re.search(pattern, README)
    assert found is not None, f"the README no longer says {pattern!r}"
    return [int(g.replace(",", "")) for g in found.groups()]


def _history_installed() -> bool:
    from fdkit.lake.extensions import data_packages

    return any(p.distribution == "fdkit-history" for p in data_packages())


def test_the_invariant_count():
    from fdkit.lake.validate import INVARIANTS

    (said,) = figure(r"`fdkit lake validate \[DIR\]` runs (\d+) invariants")
    assert said == len(INVARIANTS)


def test_the_fy2016_screen_rows_and_the_bar_plot_threshold():
    from fdkit.research.plot import _MANY_BARS

    (rows,) = figure(r'attrs\["fiscal_periods"\] == \{"FY2016": (\d+)\}')
    (bars,) = figure(r"# over (\d+) tickers: sorted horizontal bars")
    annual = fdkit.financials(fdkit.available("balance_sheets"), period="annual", limit=None)
    big = annual.fds.screen(revenue__gt=1e11, fiscal_period="FY2016")
    assert big.attrs["fiscal_periods"] == {"FY2016": rows} and len(big) == rows
    assert bars == _MANY_BARS < rows  # the README's example is drawn as sorted horizontal bars
    (companies,) = figure(r"the statements of ([\d,]+) companies\)")
    assert companies == len(fdkit.available("balance_sheets"))


def test_the_bundled_price_tickers_and_their_spans(tmp_path):
    (total, stocks) = figure(r"`fdkit.prices` then has ([\d,]+) tickers \(the (\d+) long-history stocks to 2026-03-13")
    (funds,) = figure(r"and (\d+) funds to 2026-03-25, the others 2015-2017\)")
    bars = pads.dataset(ROOT / "data" / "prices").to_table(columns=["ticker", "time"]).to_pandas()
    last = bars.groupby("ticker", observed=True)["time"].max().dt.strftime("%Y-%m-%d")
    assert len(last) == total and (last == "2026-03-13").sum() == stocks
    assert (last == "2026-03-25").sum() == funds and (last <= "2017-12-31").sum() == total - stocks - funds
    code = "import fdkit; print(len(fdkit.available('prices')))"
    # a cache of its own: the embedded default's answers are cached alike with and without the data packages
    env = {**os.environ, "FDKIT_NO_EXTENSIONS": "1", "FDKIT_CACHE_DIR": str(tmp_path / "cache")}
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert alone.returncode == 0 and int(alone.stdout) == total, alone.stderr


def test_the_history_packages_price_tickers():
    (more,) = figure(r"2016-03-14 \.\. 2026-03-13 of (\d+) more S&P 500 members of 2026-03")
    (served,) = figure(r"\(one dataset: ([\d,]+) tickers;")
    package = ROOT / "history" / "fdkit_history" / "_data" / "prices"
    tickers = pads.dataset(package).to_table(columns=["ticker"]).column("ticker").to_pandas()
    assert tickers.nunique() == more
    if not _history_installed():
        pytest.skip("fdkit-history is not installed (pip install ./history): the served count needs it")
    assert len(fdkit.available("prices")) == served


def test_the_sp500_ever_members():
    (ever,) = figure(r"The S&P 500's (\d+) ever-members over twenty years")
    spells = fdkit.index_members("sp500")
    assert spells.index.get_level_values("ticker").nunique() == ever


def test_the_event_types_and_those_the_bundled_lake_triggers():
    from fdkit.lake import default_data_dir
    from fdkit.webhooks import EVENT_TYPES
    from fdkit.webhooks.generate import latest_events

    (types,) = figure(r"for (\d+) event types when data enters the lake")
    (triggered, of) = figure(r"The bundled lake triggers (\d+) of the (\d+) types")
    assert types == of == len(EVENT_TYPES)
    latest = latest_events(default_data_dir(), list(EVENT_TYPES), livemode=False, base_url="http://127.0.0.1:8000")
    assert len(latest) == triggered


def test_the_members_of_2016_06_30_with_a_bar_and_a_statement():
    (both, members, recent) = figure(
        r"(\d+) of the (\d+) members of 2016-06-30 have a bar and a quarterly statement filed by then "
        r"\((\d+) one for a quarter ending in the 200 days before"
    )
    day = pd.Timestamp("2016-06-30")
    tickers = fdkit.index_members("sp500", "2016-06-30").index.get_level_values("ticker").unique().tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # members without a bar that day are the point, not news
        px = fdkit.prices(tickers, start_date="2016-06-30", end_date="2016-06-30", errors="ignore")
        inc = fdkit.income_statements(
            tickers, period="quarterly", filing_date_lte="2016-06-30", limit=1, errors="ignore"
        )
    priced = set(px.dropna(subset=["close"]).index.get_level_values("ticker").astype(str))
    latest = inc.reset_index().assign(ticker=lambda d: d["ticker"].astype(str))
    stated = set(latest["ticker"])
    fresh = set(latest.loc[latest["report_period"] >= day - pd.Timedelta(days=200), "ticker"])
    assert (len(tickers), len(priced & stated), len(priced & fresh)) == (members, both, recent)


def test_the_history_packages_size():
    """``fdkit-history (about 95 MB, ...)``: the package's files, as ``-e ./history`` leaves them in place."""
    (said,) = figure(r"`fdkit-history` \(about (\d+) MB")
    files = [f for f in (ROOT / "history" / "fdkit_history").rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    size = sum(f.stat().st_size for f in files) / 1e6
    assert abs(size - said) <= 0.1 * said, f"the package holds {size:.0f} MB, the README says about {said}"
