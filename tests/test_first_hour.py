"""The first hour of a new user (issue 30, items 14, 16, 17, 19 and 20): what fdkit says, where, and what it sends.

Every call goes to the embedded server over the bundled lake (or ``fdkit serve``), never to a mock.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import warnings

import pytest

import fdkit
from fdkit.errors import TruncatedWarning


def _here() -> int:
    """The line number of the caller's line."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


# -- 17. warnings point at the user's line and say the CLI spelling ------------------------------------------------
def _caught(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = call()
    return caught, line


def test_a_truncated_warning_points_at_the_users_line():
    def one():
        fdkit.income_statements("AAPL", period="annual")
        return _here() - 1

    def method():
        fdkit.Client(progress=False).balance_sheets("AAPL", period="quarterly")
        return _here() - 1

    def bundle():
        fdkit.financials("AAPL", period="quarterly")
        return _here() - 1

    for call in (one, method, bundle):
        caught, line = _caught(call)
        truncated = [w for w in caught if issubclass(w.category, TruncatedWarning)]
        assert len(truncated) == 1, [str(w.message) for w in caught]
        w = truncated[0]
        assert (w.filename, w.lineno) == (__file__, line), (call.__name__, w.filename, w.lineno)
        assert "limit=None" in str(w.message) and "--limit all" in str(w.message)


def test_errors_warn_points_at_the_users_line_and_says_the_cli_spelling():
    def call():
        df = fdkit.company_facts(["AAPL", "NOPE"], errors="warn")
        assert list(df.attrs["missing"]) == ["NOPE"]
        return _here() - 2

    caught, line = _caught(call)
    (w,) = [w for w in caught if "NOPE" in str(w.message)]
    assert (w.filename, w.lineno) == (__file__, line)
    assert "--errors ignore" in str(w.message) and "attrs['missing']" in str(w.message)
    assert w.category is fdkit.SkippedWarning  # (a UserWarning: its own name, so the CLI says no Python class)


def test_the_cli_takes_limit_all_where_python_takes_limit_none(tmp_path):
    run = [sys.executable, "-m", "fdkit.cli", "get", "income_statements", "AAPL", "-o", str(tmp_path / "x.csv")]
    env = {**os.environ, "FDKIT_CACHE_DIR": str(tmp_path / "cache")}
    capped = subprocess.run(run, capture_output=True, text=True, timeout=300, env=env)
    assert capped.returncode == 0 and "--limit all" in capped.stderr
    # one line in fdkit's words: no "file:line: TruncatedWarning" and no source line under it
    (said,) = [line for line in capped.stderr.splitlines() if "warning" in line.lower()]
    assert said.startswith("fdkit: warning: income_statements() returned the default 4") and "Warning" not in said
    assert "sys.exit" not in capped.stderr and ".py:" not in capped.stderr
    every = subprocess.run([*run, "--limit", "all"], capture_output=True, text=True, timeout=300, env=env)
    assert every.returncode == 0 and "warning" not in every.stderr, every.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncatedWarning)
        want = len(fdkit.income_statements("AAPL", limit=None))
    assert f"wrote {want} rows" in every.stderr and want > 4
    bad = subprocess.run([*run, "--limit", "many"], capture_output=True, text=True, timeout=300, env=env)
    assert bad.returncode == 2 and "'all'" in bad.stderr


@pytest.mark.parametrize("limit", [None, 4])
def test_no_warning_when_the_user_chose_a_limit(limit):
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncatedWarning)
        fdkit.income_statements("AAPL", limit=limit)


# -- 20. the suite's own doctests raise no warning of fdkit's own making -------------------------------------------
def test_the_generated_examples_raise_no_warning_of_fdkits_own():
    import doctest

    import fdkit.api
    import fdkit.client.methods

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for module in (fdkit.api, fdkit.client.methods):
            result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
            assert result.failed == 0 and result.attempted > 50, (module.__name__, result)
    ours = [f"{w.category.__name__}: {w.message}" for w in caught if w.category.__module__.startswith("fdkit")]
    assert ours == []


def test_a_jupyter_kernel_shows_progress_bars_by_default(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    code = (
        "from fdkit.client.paging import in_jupyter, progress_bar, progress_enabled\n"
        "print(in_jupyter(), progress_enabled(None), progress_enabled(False))\n"
        "for _ in progress_bar(range(3), desc='fdkit-bar', delay=0): pass"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    stdout = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    drawn = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    drawn += "".join(str(o.get("data", {})) for o in outputs if o.get("output_type") == "display_data")
    assert stdout.split() == ["True", "True", "False"]
    assert "fdkit-bar" in drawn  # the bar itself: a widget with ipywidgets, else the text bar on stderr
    from fdkit.client.paging import in_jupyter

    assert not in_jupyter()  # this process is no kernel


# -- 19. the slips of a first hour are named: the table of tests/test_mistakes.py ------------------------------------
def test_dates_outside_the_data_warn_at_the_users_line():
    from fdkit.errors import DateRangeWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before = fdkit.prices("AAPL", start_date="1990-01-02", end_date="2004-01-05")
        line = _here() - 1
        nothing = fdkit.prices(["AAPL", "NVDA"], start_date="1980-01-02", end_date="1981-01-05")
        inside = fdkit.prices("aapl", start_date="2024-01-02", end_date="2024-03-28")  # as typed: no false alarm
    said = [w for w in caught if issubclass(w.category, DateRangeWarning)]
    assert len(said) == 2 and len(before) and len(nothing) == 0 and len(inside)
    assert "AAPL's bars start on 2003-" in str(said[0].message) and (said[0].filename, said[0].lineno) == (
        __file__,
        line,
    )
    assert "AAPL has no bars" in str(said[1].message) and "NVDA has no bars" in str(said[1].message)


@pytest.mark.parametrize("url", ["localhost:8000", "api.financialdatasets.ai", "127.0.0.1:8000/"])
def test_a_base_url_without_a_scheme_is_explained(url, monkeypatch):
    from fdkit.errors import ConfigurationError

    monkeypatch.setenv("FDKIT_BASE_URL", url)
    monkeypatch.setenv("FINANCIAL_DATASETS_API_KEY", "first-hour-key-0001")
    with pytest.raises(ConfigurationError) as e:
        fdkit.Client().prices("AAPL", start_date="2024-01-02", end_date="2024-01-05")
    assert f"FDKIT_BASE_URL={url!r}" in e.value.message and "://" + url.rstrip("/") in e.value.message
    assert "first-hour-key-0001" not in str(e.value)
    with pytest.raises(ConfigurationError, match=r"Client\(base_url="):
        _ = fdkit.Client(base_url=url, api_key="first-hour-key-0001").settings


# -- 16. a screen compares one fiscal period, and its plot stays readable ------------------------------------------
def _no_overlap(labels) -> bool:
    """No two drawn labels cover each other (their boxes may touch: half a pixel of slack)."""
    boxes = [t.get_window_extent().shrunk(0.98, 0.9) for t in labels if t.get_text()]
    return not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_a_screen_of_latest_reports_names_its_mixed_periods():
    latest = fdkit.financials(fdkit.available("balance_sheets"), period="annual", limit=1)
    big = latest.fds.screen(revenue__gt=1e11)  # the service's screener: each company's latest period
    periods = big.attrs["fiscal_periods"]
    assert len(periods) > 1 and sum(periods.values()) == len(big)
    ax = big.fds.ratios().fds.plot(kind="ratios", column="net_margin")
    most = sorted(periods, key=periods.get, reverse=True)[:2]  # the title names the most common periods first
    assert "latest of each ticker" in ax.get_title() and all(p in ax.get_title() for p in most)


def test_a_screen_on_one_fiscal_period_and_a_readable_plot_of_20_tickers():
    import matplotlib

    matplotlib.use("Agg")
    annual = fdkit.financials(fdkit.available("balance_sheets"), period="annual", limit=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = annual.fds.screen(revenue__gt=5e10, fiscal_period="FY2016")
    assert set(big["fiscal_period"].astype(str)) == {"FY2016"} and big.attrs["fiscal_periods"] == {"FY2016": len(big)}
    assert len(big) >= 20 and big.index.get_level_values("ticker").is_unique
    ax = big.fds.ratios().fds.plot(kind="ratios", column="net_margin")
    ax.figure.canvas.draw()
    assert ax.get_title() == "net_margin, FY2016"
    assert len([t for t in ax.get_yticklabels() if t.get_text()]) == len(big)
    assert _no_overlap(ax.get_yticklabels())
    with pytest.raises(fdkit.BadRequestError, match="FY2016"):
        annual.fds.screen(revenue__gt=5e10, fiscal_period="FY1999")


# -- 20. the docs say what the tool does ----------------------------------------------------------------------------
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _readme() -> str:
    return " ".join((ROOT / "README.md").read_text().split())  # one line: quotes broken over lines join


def test_the_readmes_cache_info_line_is_what_the_command_prints(tmp_path):
    import re

    env = {**os.environ, "FDKIT_CACHE_DIR": str(tmp_path)}
    run = [sys.executable, "-m", "fdkit.cli", "cache", "info"]
    empty = subprocess.run(run, capture_output=True, text=True, timeout=120, env=env)
    assert "`no cache files`" in _readme() and empty.stdout.strip() == "no cache files"
    fetch = "import fdkit; fdkit.prices('AAPL', start_date='2024-01-02', end_date='2024-01-05')"
    subprocess.run([sys.executable, "-c", fetch], capture_output=True, timeout=300, env=env, check=True)
    printed = subprocess.run(run, capture_output=True, text=True, timeout=120, env=env).stdout.strip().splitlines()
    (documented,) = re.findall(r"`([0-9a-f]{20} +\d+ responses +[\d.]+ MB +\S+\.sqlite)`", _readme())
    shape = re.compile(r"[0-9a-f]{20} +\d+ responses +[\d.]+ MB +\S+\.sqlite")
    assert printed and all(shape.fullmatch(line) for line in printed), printed
    assert documented.split()[2:4] == printed[0].split()[2:4] == ["responses", documented.split()[3]]


def test_every_extra_the_docs_name_exists_and_every_extra_is_named():
    import re
    import tomllib

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named = set(re.findall(r"\.\[(\w+)\]", _readme() + (ROOT / "CONTRIBUTING.md").read_text()))
    assert named <= extras, named - extras
    assert extras <= named, extras - named  # lake, notebooks, bench, dev: each says how it is installed


def test_fdkit_serve_prints_the_generated_key_as_the_readme_says(tmp_path):
    prefix = "fdkit serve: no keys configured; generated key:"
    assert f"`{prefix} fdk_...`" in _readme()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fdkit.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    try:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if prefix in line or len(lines) > 20:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    (said,) = [line for line in lines if prefix in line]
    assert said.split(prefix)[1].strip().startswith("fdk_")


def test_a_price_plot_of_25_tickers_keeps_its_legend_beside_the_lines():
    import matplotlib

    matplotlib.use("Agg")
    # 25 names that traded throughout the quarter (the first 25 of the lake's tickers include companies that had
    # left or not yet listed)
    tickers = [
        "AAPL",
        "ABT",
        "ADBE",
        "AMZN",
        "BAC",
        "CAT",
        "CSCO",
        "CVX",
        "DIS",
        "GE",
        "HD",
        "IBM",
        "INTC",
        "JNJ",
        "JPM",
        "KO",
        "MCD",
        "MMM",
        "MRK",
        "MSFT",
        "NKE",
        "PFE",
        "PG",
        "WMT",
        "XOM",
    ]
    ax = fdkit.prices(tickers, start_date="2016-01-04", end_date="2016-03-31").fds.plot(rebase=100)
    ax.figure.canvas.draw()
    legend = ax.get_legend()
    assert len(legend.get_texts()) == 25
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # beside the axes, not over the lines
    assert legend.get_window_extent().x1 <= ax.figure.bbox.x1  # and inside the figure (a saved image shows it)
    assert _no_overlap(legend.get_texts())


@pytest.mark.parametrize(("value", "want"), [("0", False), ("1", True), (None, None)])
def test_fdkit_progress_in_the_environment(value, want):
    from fdkit.client.config import resolve

    assert resolve(env={} if value is None else {"FDKIT_PROGRESS": value}).progress is want
    assert ("`FDKIT_PROGRESS=0`" in _readme()) is True


def _options(parser, path):
    """Every option of every subcommand: (command, flag, default, help)."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, [*path, name])
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            yield " ".join(path), action.option_strings[-1], action.default, action.help or ""


def test_every_subcommands_help_says_what_each_option_is_and_its_default():
    """Help that hides defaults (`fdkit demo --help`, `mirror --tickers`) costs a newcomer a read of the code."""
    from fdkit.cli import build_parser

    options = list(_options(build_parser(), ["fdkit"]))
    assert len(options) > 100
    silent = [(cmd, flag) for cmd, flag, _, about in options if not about.strip()]
    hidden = [
        (cmd, flag, default)
        for cmd, flag, default, about in options
        if default not in (None, False) and "default" not in about.lower()
    ]
    assert silent == [] and hidden == []
    from fdkit.catalog.endpoints import CATALOG

    said = {(cmd, flag): about for cmd, flag, _, about in options}
    service_defaults = [  # a default the service assumes is shown too (`screen --period`: ttm, `prices --label`)
        (ep.name, p.name)
        for ep in CATALOG.values()
        if ep.kind != "listing"
        for p in ep.params
        if p.default not in (None, False)
        and "default" not in said[(f"fdkit get {ep.name}", f"--{p.name}".replace("_", "-"))]
    ]
    assert service_defaults == []
    adjusted = said[("fdkit get prices", "--no-adjusted")]
    assert "(default: on)" in adjusted  # a flag that is on by default can be turned off
    for command in (["cache", "info"], ["cache", "clear"], ["demo"]):  # a subcommand's own help, not its parent's
        (sub,) = _subparsers(build_parser(), command)
        usage = sub.format_usage()
        assert usage.startswith(f"usage: fdkit {' '.join(command)} "), usage


def _subparsers(parser, command):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command[0] in action.choices:
            sub = action.choices[command[0]]
            if len(command) == 1:
                yield sub
            else:
                yield from _subparsers(sub, command[1:])
