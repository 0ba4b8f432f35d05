"""The first hour IV (issue 45): what the command line says when a newcomer's first commands go wrong or mix things.

Every command runs ``python -m fdkit.cli`` against the embedded service over the bundled lake (a fresh cache per
test), never a mock.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pandas as pd
import pytest

import fdkit

SCREEN = ["get", "screen", "--filters", '[{"field": "revenue", "operator": "gt", "value": 1e11}]', "--period", "annual"]
BANNER = "fdkit: no API key or base URL configured"


def _env(tmp_path, **more: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL")}
    return {**clean, "FDKIT_CACHE_DIR": str(tmp_path / "cache"), **more}


def _fdkit(argv: list[str], tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fdkit.cli", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(tmp_path, **env),
        cwd=tmp_path,
    )


# -- the CLI screen: one fiscal period, or the mix said ------------------------------------------------------------
def test_the_cli_screen_says_its_mix_of_years_in_one_line(tmp_path):
    r = _fdkit([*SCREEN, "--limit", "all", "-o", "-"], tmp_path)
    assert r.returncode == 0, r.stderr
    (note,) = [line for line in r.stderr.splitlines() if "--fiscal-period" in line]
    assert note.startswith("fdkit: note: each row is its company's latest annual report")
    rows = pd.read_csv(__import__("io").StringIO(r.stdout), parse_dates=["report_period"])
    years = rows["report_period"].dt.year.value_counts()
    assert len(years) > 1 and f"{years.index[0]} x{years.iloc[0]}" in note  # the most common year first, counted


def test_the_cli_screen_on_one_fiscal_period_is_pythons(tmp_path):
    r = _fdkit([*SCREEN, "--fiscal-period", "FY2016", "-o", "-"], tmp_path)
    assert r.returncode == 0 and "note" not in r.stderr, r.stderr
    rows = pd.read_csv(__import__("io").StringIO(r.stdout))
    annual = fdkit.financials(fdkit.available("balance_sheets"), period="annual", limit=None)
    want = annual.fds.screen(revenue__gt=1e11, fiscal_period="FY2016")
    assert set(rows["fiscal_period"]) == {"FY2016"} and len(rows) == len(want) > 10
    assert rows["ticker"].tolist() == want.index.get_level_values("ticker").tolist()
    assert rows["revenue"].tolist() == want["revenue"].tolist()
    bad = _fdkit([*SCREEN, "--fiscal-period", "FY1999", "-o", "-"], tmp_path)
    lines = [line for line in bad.stderr.splitlines() if line]
    assert bad.returncode == 2 and len(lines) == 1 and "FY1999" in lines[0] and "FY2016" in lines[0], bad.stderr


def test_a_command_that_goes_on_still_says_the_embedded_service_first(tmp_path):
    r = _fdkit(["get", "income_statements", "AAPL", "-o", str(tmp_path / "x.csv")], tmp_path)
    lines = r.stderr.splitlines()
    assert r.returncode == 0 and lines[0].startswith(BANNER) and len([x for x in lines if BANNER in x]) == 1
    assert lines[1].startswith("fdkit: warning: income_statements()") and lines[-1].startswith("wrote 4 rows")


# -- mirror: its help, and price_history mirrored and served again ------------------------------------------------
def test_mirror_help_explains_tickers_and_offers_price_history():
    from fdkit.cli import build_parser

    (mirror,) = [a for a in build_parser()._actions if getattr(a, "choices", None) and "mirror" in a.choices]
    options = {a.dest: a for a in mirror.choices["mirror"]._actions}
    assert "separated by spaces" in options["tickers"].help
    assert "price_history" in options["datasets"].choices and "price_history" in options["datasets"].help


def test_price_history_mirrors_and_serves_the_same_rows(tmp_path):
    import fdkit.server
    from fdkit.lake.extensions import data_packages

    if not any(p.distribution == "fdkit-history" for p in data_packages()):
        pytest.skip("fdkit-history is not installed (pip install ./history): nothing serves price_history")
    r = _fdkit(["mirror", "--tickers", "LEH", "--datasets", "price_history", "--out", "lake"], tmp_path)
    assert r.returncode == 0 and "0 failed" in r.stdout, r.stdout + r.stderr
    asked = {"start_date": "2004-01-01", "end_date": "2025-12-31", "limit": 10000}
    with fdkit.server.start(data=tmp_path / "lake") as srv:
        served = fdkit.Client(srv.api_key, srv.base_url, cache=False, progress=False).price_history("LEH", **asked)
    original = fdkit.price_history("LEH", **asked)
    assert len(served) > 1000 and served.index.get_level_values("date").max() == pd.Timestamp("2008-09-19")
    pd.testing.assert_frame_equal(served, original)


# -- the help's own example ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("extensions", ["installed", "hidden"])
def test_the_get_helps_example_writes_whole_bars(extensions, tmp_path):
    from fdkit.cli import build_parser

    (get,) = [a for a in build_parser()._actions if getattr(a, "choices", None) and "get" in a.choices]
    example = get.choices["get"].description.split("Example: ")[1]
    argv = shlex.split(example)
    assert argv[:3] == ["fdkit", "get", "prices"] and argv[-2:] == ["-o", "p.parquet"]
    env = {"FDKIT_NO_EXTENSIONS": "1"} if extensions == "hidden" else {}
    r = _fdkit(argv[1:], tmp_path, **env)
    assert r.returncode == 0 and "wrote 61 rows to p.parquet" in r.stderr, r.stderr
    bars = pd.read_parquet(tmp_path / "p.parquet")
    assert len(bars) == 61 and bars[["open", "high", "low", "close", "volume"]].notna().all().all()


# -- price_history without fdkit-history ----------------------------------------------------------------------------
def test_price_history_without_the_package_names_it(tmp_path):
    code = (
        "import fdkit\n"
        "try:\n"
        "    df = fdkit.price_history(['LEH', 'AAPL'], errors='ignore')\n"
        "    print('list', len(df), sorted(df.attrs.get('missing', {})))\n"
        "except fdkit.NotFoundError as e:\n"
        "    print('list said', e.message)\n"
        "try:\n"
        "    df = fdkit.price_history('LEH')\n"
        "    print('rows', len(df))\n"
        "except fdkit.NotFoundError as e:\n"
        "    print('said', e.message)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(tmp_path, FDKIT_NO_EXTENSIONS="1"),
    )
    assert r.returncode == 0, r.stderr
    listed, alone = r.stdout.splitlines()
    assert listed.startswith("list 0 ['AAPL', 'LEH']"), listed  # each ticker named as missing, with the reason
    assert alone.startswith("said") and "fdkit-history" in alone and "pip install ./history" in alone, alone


# -- the limit's default (the mistakes themselves: tests/test_mistakes.py) ---------------------------------------
def test_the_limits_help_says_its_default_in_one_sentence(tmp_path):
    out = _fdkit(["get", "income_statements", "--help"], tmp_path)
    text = " ".join(out.stdout.split())
    assert "(limit=None in Python) (default: 4)" in text and ".;" not in text, text


def test_the_demo_plot_says_its_axes_in_words():
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from fdkit.research.plot import price_lines

    idx = pd.MultiIndex.from_product(
        [["AAPL", "MSFT"], pd.date_range("2024-01-02", periods=3)], names=["ticker", "time"]
    )
    df = pd.DataFrame({"close": [1.0, 2.0, 3.0, 2.0, 2.0, 4.0]}, index=idx)
    ax = price_lines(df, "close", rebase=100, order=["MSFT", "AAPL"])
    assert ax.get_xlabel() == "date" and ax.get_ylabel() == "close price, rebased to 100 on the first day"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["MSFT", "AAPL"]


# -- the suite's promise: no test over its budget ---------------------------------------------------------------------
def test_a_test_over_its_budget_fails_the_run(tmp_path):
    """tests/conftest.py's gate bites: a passing test over FDKIT_TEST_BUDGET_S makes the run fail, and is named."""
    test = "tests/test_mistakes.py::test_the_table_holds_the_mistakes_of_the_first_hours"
    argv = [sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider", test]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    over, within = [
        subprocess.run(
            argv, capture_output=True, text=True, timeout=120, cwd=root, env=_env(tmp_path, FDKIT_TEST_BUDGET_S=budget)
        )
        for budget in ("0", "60")
    ]
    assert over.returncode == 1 and "1 passed" in over.stdout and "over the 0 s budget" in over.stdout, over.stdout
    assert test in over.stdout.split("budget")[-1]
    assert within.returncode == 0, within.stdout


# -- every plot of fdkit says its axes in words ------------------------------------------------------------------------
def _plots():
    """One Axes of each plot fdkit draws, from small frames of the shapes its functions return."""
    import matplotlib

    matplotlib.use("Agg")
    from fdkit.research import plot

    days = pd.date_range("2024-01-31", periods=4, freq="ME").rename("time")
    bars = pd.DataFrame(
        {"close": [1.0, 2, 3, 4, 2, 2, 3, 3]},
        index=pd.MultiIndex.from_product([["AAPL", "MSFT"], days], names=["ticker", "time"]),
    )
    statements = bars.rename(columns={"close": "revenue"}).rename_axis(["ticker", "report_period"])
    statements["currency"] = "USD"
    segments = pd.DataFrame(
        {"segment_type": "product", "segment_label": ["iPhone", "Mac"] * 2, "amount": [2e11, 3e10, 2.1e11, 3e10]},
        index=pd.MultiIndex.from_product(
            [["AAPL"], pd.to_datetime(["2015-09-26", "2015-09-26", "2023-09-30", "2023-09-30"])],
            names=["ticker", "report_period"],
        ),
    )
    quantiles = pd.DataFrame({"q1": [0.01, 0.0, 0.02, 0.01], "q2": [0.0, 0.01, 0.0, 0.02]}, index=days)
    quantiles["long_short"] = quantiles["q2"] - quantiles["q1"]
    quantiles.attrs["factor"] = "earnings_yield"
    events = pd.DataFrame({"mean_ar": [0.001, 0.002, -0.001], "car": [0.001, 0.003, 0.002]}, index=[-1, 0, 1])
    events.attrs["events_used"] = 12
    return {
        "prices": lambda: plot.price_lines(bars, rebase=100),
        "statement": lambda: plot.statement_lines(statements, "revenue"),
        "ratios": lambda: plot.ratio_bars(statements.assign(net_margin=0.2), ["net_margin"]),
        "segments": lambda: plot.segment_bars(segments),
        "ic": lambda: plot.ic_bars(pd.DataFrame({"fwd_1": [0.1, -0.2, 0.3, 0.1]}, index=days)),
        "quantiles": lambda: plot.quantile_lines(quantiles),
        "event": lambda: plot.event_lines(events),
    }


@pytest.mark.parametrize("kind", ["prices", "statement", "ratios", "segments", "ic", "quantiles", "event"])
def test_every_plot_labels_both_axes_in_words(kind):
    import matplotlib.pyplot as plt

    ax = _plots()[kind]()
    plt.close("all")  # (the Axes keeps what it says)
    for label in (ax.get_xlabel(), ax.get_ylabel()):
        assert label and "_" not in label and label not in ("time", "report_period", "ticker"), (kind, label)
    legend = ax.get_legend()
    if kind == "segments":  # the stack's top first, beside the bars; a gap of years shows as one
        assert [t.get_text() for t in legend.get_texts()] == ["iPhone", "Mac"]  # drawn Mac first, at the bottom
        assert [t.get_text() for t in ax.get_xticklabels()] == ["2015-09", "2023-09"]
    if kind == "ic":  # drawn bars first, then their mean; which way is good is said
        assert [t.get_text() for t in legend.get_texts()][0].startswith("rank IC of each date")
        assert "above 0" in ax.get_ylabel()


# -- fdkit tickers: the next step an unknown ticker names ------------------------------------------------------------
@pytest.mark.parametrize("dataset", ["prices", "income_statements", "balance_sheets"])
def test_fdkit_tickers_lists_what_the_service_has(dataset, tmp_path):
    r = _fdkit(["tickers", dataset, "--like", "aap"], tmp_path)
    assert r.returncode == 0 and "AAPL" in r.stdout.split(), r.stderr
    assert all("AAP" in t for t in r.stdout.split())
