from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# the services the tests start (in process, and `fdkit serve` in processes of their own) keep the 2026 document's
# contract, the one the catalog and so these tests are written from; the seed's (what `fdkit serve` serves by
# default) is asked of services started with contract="seed": tests/test_contracts.py, the seed document's fuzz
os.environ["FDKIT_CONTRACT"] = "2026"  # (whatever the shell says: the tests are written for one contract)

from lakes import write_test_lake  # noqa: E402

import fdkit.server  # noqa: E402


@pytest.fixture(scope="session")
def test_lake(tmp_path_factory) -> Path:
    return write_test_lake(tmp_path_factory.mktemp("lake"))


@pytest.fixture(scope="session")
def test_server(test_lake):
    """A live server over the small test lake, with a request counter."""
    counter = fdkit.server.FaultPlan()
    with fdkit.server.start(test_lake, faults=counter) as srv:
        srv.counter = counter
        yield srv


@pytest.fixture()
def make_client(test_server, tmp_path):
    """Client factory bound to the test server, with a private cache dir."""
    import fdkit

    made = []

    def make(**kw):
        kw.setdefault("api_key", test_server.api_key)
        kw.setdefault("base_url", test_server.base_url)
        kw.setdefault("cache_dir", str(tmp_path / "cache"))
        kw.setdefault("progress", False)
        c = fdkit.Client(**kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture(scope="session")
def ref_server():
    """A live server over the bundled reference lake (data/)."""
    counter = fdkit.server.FaultPlan()
    with fdkit.server.start(faults=counter) as srv:
        srv.counter = counter
        yield srv


@pytest.fixture(scope="session")
def seed_server():
    """A live server over the bundled reference lake under the seed's contract (``fdkit serve``'s default)."""
    with fdkit.server.start(contract="seed") as srv:
        yield srv


@pytest.fixture(scope="session")
def ref_client(ref_server, tmp_path_factory):
    """A client of the reference server with its own cache dir."""
    import fdkit

    c = fdkit.Client(
        ref_server.api_key, ref_server.base_url, cache_dir=str(tmp_path_factory.mktemp("refcache")), progress=False
    )
    yield c
    c.close()


# -- a budget for each test's time ----------------------------------------------------------------------------------
#: the longest one test may take, setup and teardown included (seconds); scale runs belong in benchmarks/, and the
#: suite keeps a wide margin under its per-test timeout (pyproject's 300 s) on a busy 2-core machine
TEST_BUDGET_S = float(os.environ.get("FDKIT_TEST_BUDGET_S", "60"))
_TOOK: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each test's phases (under xdist, the controller sees every worker's reports)."""
    if "slow" not in report.keywords:  # the `-m slow` runs are the scale runs, timed on purpose
        _TOOK[report.nodeid] = _TOOK.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001 - pytest's signature
    over = sorted(((took, node) for node, took in _TOOK.items() if took > TEST_BUDGET_S), reverse=True)
    if over:
        terminalreporter.section(
            f"tests over the {TEST_BUDGET_S:g} s budget (FDKIT_TEST_BUDGET_S): the run fails", red=True
        )
        for took, node in over:
            terminalreporter.line(f"{took:7.1f} s  {node}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A passing run with a test over its budget fails: the suite's time is a promise of the README."""
    if exitstatus == 0 and any(took > TEST_BUDGET_S for took in _TOOK.values()):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
