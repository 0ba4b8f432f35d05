"""The mistakes of a first hour, in one table: each answers in one line that names the fix.

Every row is something a newcomer typed (issue 45 and the rounds before it), run as they would run it: a Python
line in a fresh interpreter, or a command of the console script. A mistake visible in the arguments alone is run
against a socket that counts the connections made to it and answers none: the row proves the mistake is named
before any request (a probe of the service included). The others run on the embedded default over the bundled
lake. No answer may show a Python frame (``Traceback``, ``file.py:12``).

Adding a mistake is one row.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field

import pytest

#: the key of the rows visible in the arguments, run against :func:`listener` (which answers nothing)
KEY = "mistakes-table-key-01"
NO_HISTORY = {"FDKIT_NO_EXTENSIONS": "1"}
DAYS = "start_date='2024-01-02', end_date='2024-01-05'"
CLI_DAYS = ["--start-date", "2024-01-02", "--end-date", "2024-01-05"]
PYTHON_FRAME = re.compile(r"Traceback|\.py:\d+|^\s+File \"", re.M)


@dataclass(frozen=True)
class Slip:
    """One mistake and what fdkit must answer.

    Attributes:
        what: the mistake, in a few words.
        typed: a Python statement (``str``) or a command line after ``fdkit`` (``list``).
        says: phrases the one-line answer contains (the fix among them).
        raises: the exception's class (Python), or the exit code (command line).
        local: visible in the arguments alone: run where no service listens.
        env: more of the environment (a package hidden, a base URL).
    """

    what: str
    typed: str | list[str]
    says: tuple[str, ...]
    raises: str | int
    local: bool = True
    env: dict[str, str] = field(default_factory=dict)


PYTHON = [
    Slip("tickers as separate arguments", f"fdkit.prices('AAPL', 'MSFT', {DAYS})",
         ("interval='MSFT' looks like a ticker", "prices(['AAPL', 'MSFT'], ...)"), "BadRequestError"),
    Slip("tickers as separate arguments, a limit's place", "fdkit.insider_trades('AAPL', 'MSFT')",
         ("limit='MSFT' looks like a ticker", "insider_trades(['AAPL', 'MSFT'], ...)"), "BadRequestError"),
    Slip("several tickers in one string", f"fdkit.prices('AAPL,MSFT', {DAYS})",
         ("prices(['AAPL', 'MSFT'], ...)", "fdkit get prices AAPL MSFT"), "BadRequestError"),
    Slip("several tickers in one string, with spaces", f"fdkit.prices('aapl, msft', {DAYS})",
         ("prices(['AAPL', 'MSFT'], ...)",), "BadRequestError"),
    Slip("several tickers in one string, spaces alone", f"fdkit.prices('AAPL MSFT', {DAYS})",
         ("prices(['AAPL', 'MSFT'], ...)",), "BadRequestError"),
    Slip("an empty ticker list", f"fdkit.prices([], {DAYS})", ("the list of tickers is empty",), "BadRequestError"),
    Slip("a number among the tickers", f"fdkit.prices(['AAPL', 3], {DAYS})",
         ("every ticker of a list is a string; got 3",), "BadRequestError"),
    Slip("an empty ticker", "fdkit.income_statements('')", ("'ticker' must not be empty",), "BadRequestError"),
    Slip("limit='all'", "fdkit.income_statements('AAPL', limit='all')", ("pass limit=None",), "BadRequestError"),
    Slip("a limit in quotes", "fdkit.income_statements('AAPL', limit='10')", ("pass limit=10",), "BadRequestError"),
    Slip("a limit of zero", "fdkit.income_statements('AAPL', limit=0)", ("'limit' must be >= 1",), "BadRequestError"),
    Slip("the period where cik goes", "fdkit.income_statements('AAPL', 'annual')",
         ("'annual' went to cik", "pass period='annual' by name"), "BadRequestError"),
    Slip("a misspelt period", "fdkit.income_statements('AAPL', period='anual')",
         ("'period' must be one of annual, quarterly, ttm", "did you mean 'annual'?"), "BadRequestError"),
    Slip("a misspelt parameter", "fdkit.income_statements('AAPL', perod='annual')",
         ("has no parameter 'perod'", "did you mean 'period'?"), "BadRequestError"),
    Slip("an interval in other words", f"fdkit.prices('AAPL', {DAYS}, interval='daily')",
         ("'interval' must be one of", "did you mean 'day'?"), "BadRequestError"),
    Slip("no dates for bars", "fdkit.prices('AAPL')", ("needs 'start_date', 'end_date'",), "BadRequestError"),
    Slip("dates the wrong way round", "fdkit.prices('AAPL', start_date='2024-01-05', end_date='2024-01-02')",
         ("start_date 2024-01-05 is after end_date 2024-01-02",), "BadRequestError"),
    Slip("a date as the US writes it", "fdkit.prices('AAPL', start_date='01/02/2024', end_date='2024-01-05')",
         ("start_date must be a date as YYYY-MM-DD", "got '01/02/2024'"), "BadRequestError"),
    Slip("an index that does not exist", "fdkit.index_members('sp501')",
         ("'index' must be one of sp500", "did you mean 'sp500'?"), "BadRequestError"),
    Slip("a dataset name misspelt", "fdkit.available('pricez')", ("did you mean 'prices'?",), "UnknownNameError"),
    Slip("a base URL without its scheme", f"fdkit.prices('AAPL', {DAYS})",
         ("FDKIT_BASE_URL='localhost:8000'", "http://localhost:8000"), "ConfigurationError",
         env={"FDKIT_BASE_URL": "localhost:8000"}),
    Slip("a share class with a dot", f"fdkit.prices('BRK.B', {DAYS})", ("'BRK-B'",), "NotFoundError", local=False),
    Slip("a ticker the service lacks", f"fdkit.prices('NOPEX', {DAYS})",
         ("Ticker NOPEX not found", "fdkit.available('prices') lists the tickers it has"), "NotFoundError",
         local=False),
    Slip("twenty years of prices without fdkit-history", "fdkit.price_history('LEH')",
         ("fdkit-history", "pip install ./history"), "NotFoundError", local=False, env=NO_HISTORY),
]  # fmt: skip

CLI = [
    Slip("a ticker the service lacks", ["get", "prices", "NOPEX", *CLI_DAYS],
         ("Ticker NOPEX not found", "'fdkit tickers prices' lists the tickers it has"), 1, local=False),
    Slip("a company the service lacks", ["get", "income_statements", "NOPEX"],
         ("'fdkit tickers balance_sheets' lists the tickers it has",), 1, local=False),
    Slip("a demo of a ticker the service lacks", ["demo", "--tickers", "NOPEX", "--out", "out"],
         ("no prices for NOPEX", "'fdkit tickers prices' lists the tickers it has"), 1, local=False),
    Slip("several tickers in one argument", ["get", "prices", "AAPL,MSFT", *CLI_DAYS],
         ("fdkit get prices AAPL MSFT",), 2),
    Slip("a limit that is not a number", ["get", "income_statements", "AAPL", "--limit", "ten"],
         ("a number of records or 'all'",), 2),
    Slip("dates the wrong way round", ["get", "prices", "AAPL", "--start-date", "2024-01-05", "--end-date",
         "2024-01-02"], ("start_date 2024-01-05 is after end_date 2024-01-02",), 2),
    Slip("an interval in other words", ["get", "prices", "AAPL", *CLI_DAYS, "--interval", "daily"],
         ("invalid choice 'daily'; did you mean 'day'?",), 2),
    Slip("a dataset name misspelt", ["get", "pricez", "AAPL"], ("did you mean 'prices'?",), 2),
    Slip("a filter that is not JSON", ["get", "screen", "--filters", "[revenue > 1e11]", "--period", "annual"],
         ('[{"field": "revenue", "operator": "gt", "value": 1e11}]',), 2),
    Slip("a lake validate on no lake", ["lake", "validate", "nolake/"],
         ("give fdkit lake validate a lake folder", "does not exist"), 2),
    Slip("a lake convert on no lake", ["lake", "convert", "nolake/"],
         ("give fdkit lake convert a lake folder", "does not exist"), 2),
    Slip("a lake optimize on no lake", ["lake", "optimize", "nolake/"],
         ("give fdkit lake optimize a lake folder", "does not exist"), 2),
    Slip("a lake vacuum on no lake", ["lake", "vacuum", "nolake/"],
         ("give fdkit lake vacuum a lake folder", "does not exist"), 2),
    Slip("a contract that does not exist", ["serve", "--contract", "2027"], ("seed", "2026"), 2),
    Slip("a listing of a dataset that has none", ["tickers", "interest_rates"], ("invalid choice",), 2),
]  # fmt: skip


class Listener:
    """A loopback socket that accepts connections, counts them and closes each at once."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


@pytest.fixture(scope="module")
def listener():
    heard = Listener()
    yield heard
    heard.sock.close()


def _run(argv: list[str], tmp_path, slip: Slip, listener: Listener) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL")}
    local = {"FDKIT_BASE_URL": listener.url, "FINANCIAL_DATASETS_API_KEY": KEY} if slip.local else {}
    env = {**clean, "FDKIT_CACHE_DIR": str(tmp_path / "cache"), **local, **slip.env}
    before = listener.accepted
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    if slip.local:  # named from the arguments alone: nothing reached the service, not even a probe
        assert listener.accepted == before, f"{slip.what}: fdkit connected to the service before refusing it"
    return ran


@pytest.mark.parametrize("slip", PYTHON, ids=[s.what for s in PYTHON])
def test_a_python_mistake_is_one_line_naming_the_fix(slip, tmp_path, listener):
    code = (
        "import fdkit\n"
        f"try:\n    {slip.typed}\n"
        "except Exception as exc:\n    print(type(exc).__name__)\n    print(str(exc))\n"
        "else:\n    print('no error')\n"
    )
    r = _run([sys.executable, "-c", code], tmp_path, slip, listener)
    assert r.returncode == 0 and not PYTHON_FRAME.search(r.stderr), r.stderr
    raised, *said = r.stdout.splitlines()
    assert raised == slip.raises and len(said) == 1, r.stdout
    assert all(phrase in said[0] for phrase in slip.says), said[0]


@pytest.mark.parametrize("slip", CLI, ids=[s.what for s in CLI])
def test_a_command_line_mistake_is_one_line_naming_the_fix(slip, tmp_path, listener):
    r = _run([sys.executable, "-m", "fdkit.cli", *slip.typed], tmp_path, slip, listener)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == slip.raises and len(lines) == 1, r.stderr
    assert lines[0].startswith("fdkit") and not PYTHON_FRAME.search(r.stderr), r.stderr
    assert all(phrase in lines[0] for phrase in slip.says), lines[0]


def test_a_warning_on_the_command_line_is_one_line_in_fdkits_words(tmp_path, listener):
    """``--errors warn``: the skipped ticker is said as fdkit says it, not as Python's two-line warning."""
    slip = Slip("a skipped ticker", [], (), 0, local=False)
    argv = ["get", "prices", "AAPL", "NOPEX", *CLI_DAYS, "--errors", "warn", "-o", "-"]
    r = _run([sys.executable, "-m", "fdkit.cli", *argv], tmp_path, slip, listener)
    assert r.returncode == 0 and not PYTHON_FRAME.search(r.stderr), r.stderr
    (said,) = [line for line in r.stderr.splitlines() if "NOPEX" in line]
    assert said.startswith("fdkit: warning: prices: NOPEX skipped") and "Warning:" not in said, said
    assert "'fdkit tickers prices' lists the tickers it has" in said and "fdkit.available" not in said, said


def test_the_table_holds_the_mistakes_of_the_first_hours():
    assert len(PYTHON) >= 20 and len(CLI) >= 10
    assert len({s.what for s in PYTHON}) == len(PYTHON) and len({s.what for s in CLI}) == len(CLI)


def test_what_the_service_takes_is_sent_not_refused(ref_server, tmp_path):
    """The client's checks are the service's rules on the wire's text: nothing they accept is refused locally."""
    import warnings

    import fdkit

    c = fdkit.Client(ref_server.api_key, ref_server.base_url, cache_dir=str(tmp_path / "cache"), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_cik = fdkit.income_statements(cik=320193, limit=1, client=c)  # a number: the query carries its text
        items = fdkit.filing_items("AAPL", filing_type="10-K", year=2024, item="Item-1,Item-1A", client=c)
        backwards = fdkit.news("AAPL", start_date="2024-02-01", end_date="2024-01-01", client=c)
    assert by_cik.index.get_level_values("ticker").tolist() == ["AAPL"]
    assert set(items["number"].astype(str)) == {"Item-1", "Item-1A"}  # a comma list, split as the service splits it
    assert backwards.empty  # the service answers a backwards news range with no rows, not a 400
