"""Shipping: the lake travels with the package, first runs are smooth, every CLI mistake is one line and exit 2.

The installed-wheel run itself (build, install into a fresh venv, ``fdkit demo`` from an empty directory) is in
``.ci/run``; these tests cover what can be checked from the source tree, in real subprocesses where the claim is
about a fresh process.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

import fdkit
from fdkit.lake.io import default_data_dir, list_datasets, require_lake

ROOT = Path(__file__).resolve().parents[1]
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL")}


def _run(argv: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fdkit.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**CLEAN_ENV, **(env or {})},
        cwd=ROOT,
    )


# -- the lake ships with the package ------------------------------------------------------------------------
def test_the_reference_data_pipeline_is_not_shipped():
    """refdata/ builds data/ and history/ in this repository; the wheel holds the library and the lake alone."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert all(p == "fdkit" or p.startswith("fdkit.") for p in cfg["packages"]), cfg["packages"]
    assert (ROOT / "refdata" / "__main__.py").exists() and not (ROOT / "fdkit" / "build").exists()
    assert "refdata" not in cfg.get("package-data", {}) and "refdata" not in cfg.get("package-dir", {})


def test_pyproject_ships_every_subpackage_and_the_lake():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "fdkit").rglob("__init__.py")
        if "_data" not in p.parts
    }
    assert on_disk <= set(cfg["packages"]), on_disk - set(cfg["packages"])
    assert cfg["package-dir"]["fdkit._data"] == "data"
    globs = cfg["package-data"]["fdkit._data"]
    for parquet in (ROOT / "data").rglob("*.parquet"):
        rel = parquet.relative_to(ROOT / "data")
        assert any(rel.match(g) for g in globs), rel


def test_default_data_dir_finds_the_checkout_lake_and_honours_fdkit_data(monkeypatch, tmp_path):
    monkeypatch.delenv("FDKIT_DATA", raising=False)
    assert default_data_dir() == ROOT / "data"
    assert len(require_lake(default_data_dir())) == len(list_datasets(ROOT / "data")) >= 20
    monkeypatch.setenv("FDKIT_DATA", str(tmp_path))
    assert default_data_dir() == tmp_path


@pytest.mark.parametrize("kind", ["missing", "file", "empty"])
def test_a_missing_or_empty_lake_is_a_startup_error_naming_the_path(kind, tmp_path):
    path = tmp_path / "lake"
    if kind == "file":
        path.write_text("x")
    elif kind == "empty":
        (path / "prices").mkdir(parents=True)
    with pytest.raises(fdkit.LakeError, match=re.escape(str(path)) + ".*FDKIT_DATA"):
        require_lake(path)
    with pytest.raises(fdkit.LakeError):
        fdkit.server.create_app(path)


def test_embedded_default_over_an_empty_lake_says_so_not_ticker_not_found(tmp_path):
    code = "import fdkit\ntry:\n    fdkit.prices('AAPL', start_date='2024-01-02', end_date='2024-01-05')\n"
    code += "except fdkit.LakeError as e:\n    print('LAKE', e)\n"
    env = {**CLEAN_ENV, "FDKIT_DATA": str(tmp_path / "nothing"), "FDKIT_CACHE_DIR": str(tmp_path / "c")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("LAKE no Parquet lake at") and "FDKIT_DATA" in r.stdout
    demo = _run(["demo", "--out", str(tmp_path / "out")], env={"FDKIT_DATA": str(tmp_path / "nothing")})
    assert demo.returncode == 2 and "no Parquet lake" in demo.stderr and "Traceback" not in demo.stderr


# -- warm calls start nothing -------------------------------------------------------------------------------
def test_warm_calls_do_not_start_the_embedded_server(tmp_path):
    calls = (
        "df = fdkit.prices(['AAPL', 'NVDA'], start_date='2024-01-02', end_date='2024-03-28')\n"
        "fin = fdkit.financials('AAPL', period='annual', limit=2)\n"
        "print(len(df), len(fin), fdkit.available('prices')[:2])\n"
    )
    probe = (
        "import sys\nfrom fdkit.client import embedded\n"
        "print('STARTED', embedded.is_running(), 'fastapi' in sys.modules)\n"
    )
    env = {**CLEAN_ENV, "FDKIT_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", "import fdkit\n" + calls + probe],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
        for _ in range(2)
    ]
    cold, warm = runs
    assert cold.returncode == 0 and warm.returncode == 0, (cold.stderr, warm.stderr)
    assert "STARTED True True" in cold.stdout
    assert "STARTED False False" in warm.stdout, warm.stdout
    assert cold.stdout.splitlines()[0] == warm.stdout.splitlines()[0]
    assert "embedded Financial Data Service" in cold.stderr and "embedded" not in warm.stderr


# -- the CLI: every mistake is one line on stderr and exit code 2 ------------------------------------------
def _busy_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s


def test_every_cli_mistake_is_one_line_and_exit_2(tmp_path):
    busy = _busy_port()
    bad_keys = tmp_path / "keys.txt"
    bad_keys.write_text("k" * 20)
    bad_keys.chmod(0o000)
    unreadable = [] if os.geteuid() == 0 else [["serve", "--port", "0", "--keys", str(bad_keys)]]
    cases = [
        ["get", "screen", "--filters", "not json"],
        ["get", "screen", "--filters", '[{"field": "revnue", "operator": "gt", "value": 1}]'],
        ["events", "replay", "--destinations", str(tmp_path / "missing.json")],
        ["events", "test", "--destinations", str(tmp_path / "missing.json")],
        ["serve", "--port", "99999"],
        ["serve", "--port", "http"],
        ["serve", "--port", str(busy.getsockname()[1])],
        ["serve", "--port", "0", "--keys", str(tmp_path / "no-such-keys.txt")],
        ["serve", "--port", "0", "--data", str(tmp_path / "no-lake")],
        ["webhooks", "listen", "--lake", str(tmp_path), "--secret", "s", "--port", "-1"],
        ["get", "pricez", "AAPL"],
        ["get", "prices", "AAPL", "--start-date", "2024-13-01", "--end-date", "2024-02-01"],
        ["get", "prices", "AAPL", "--start-date", "yesterday", "--end-date", "2024-02-01"],
        ["demo", "--start-date", "2024-02-30"],
        *unreadable,
    ]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(_run, cases))
    busy.close()
    for argv, r in zip(cases, results, strict=True):
        lines = [ln for ln in r.stderr.splitlines() if ln and not ln.startswith("fdkit: no API key")]
        assert r.returncode == 2, (argv, r.returncode, r.stderr)
        assert len(lines) == 1 and "error" in lines[0] and "Traceback" not in r.stderr, (argv, r.stderr)
    by_case = {" ".join(a[:2]): r.stderr for a, r in zip(cases, results, strict=True)}
    assert "did you mean 'revenue'? valid: revenue," in results[1].stderr
    assert "did you mean 'prices'? valid: prices," in by_case["get pricez"]
    assert "out of range" in results[4].stderr and "in use" in results[6].stderr


def test_interval_has_a_default_and_is_not_shown_as_required():
    r = _run(["get", "prices", "--help"])
    text = " ".join(r.stdout.split())
    assert "Bar interval. (default: day)" in text
    assert "(required)" in text.rsplit("--start-date START_DATE", 1)[1]  # dates stay required


def test_replay_to_a_down_destination_reports_progress_and_gives_up_at_its_deadline(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    dests = tmp_path / "d.json"
    dests.write_text(json.dumps([{"url": f"http://127.0.0.1:{port}/hook", "secret": "s", "types": ["*"]}]))
    t = time.monotonic()
    r = _run(
        [
            "events",
            "replay",
            "--since",
            "2024-01-01",
            "--until",
            "2024-03-31",
            "--destinations",
            str(dests),
            "--deadline",
            "3",
        ]
    )
    took = time.monotonic() - t
    assert r.returncode == 1, r.stderr
    assert re.search(r"fdkit events: \d+/\d+ deliveries finished", r.stderr)
    assert "not delivered" in r.stderr and "Traceback" not in r.stderr
    assert took < 30, took


# -- available(), notebooks, Parquet, the test cache ---------------------------------------------------------
def test_available_answers_every_dataset_name_the_readme_suggests():
    readme = (ROOT / "README.md").read_text()
    names = set(re.findall(r"available\(\s*[\"'](\w+)[\"']", readme))
    assert {"prices", "balance_sheets"} <= names
    for name in names | {"income_statements", "cash_flow_statements", "financial_metrics", "segmented_revenues"}:
        assert len(fdkit.available(name)) > 0, name


def test_available_unknown_name_is_a_one_line_value_error():
    with pytest.raises(ValueError, match=r"no listing of tickers for 'pricez'; did you mean 'prices'") as info:
        fdkit.available("pricez")
    assert "\n" not in str(info.value)


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_notebook_outputs_hold_no_machine_paths_or_warnings(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", [])) + json.dumps(out.get("data", {}))
            assert not re.search(r"(/work/|/tmp/|/root/|/home/|/Users/|site-packages|[A-Z]:\\\\)", text), text[:300]
            assert "Warning" not in text and out.get("output_type") != "error", text[:300]


def test_importing_fdkit_imports_no_notebook_progress_module():
    code = "import sys, fdkit\nfdkit.prices('AAPL', start_date='2024-01-02', end_date='2024-01-05', progress=True)\n"
    code += "print(sorted(m for m in sys.modules if m.startswith('tqdm.')))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=CLEAN_ENV)
    assert r.returncode == 0, r.stderr
    assert "tqdm.notebook" not in r.stdout and "tqdm.autonotebook" not in r.stdout


def test_all_missing_category_columns_round_trip_through_parquet(ref_client, tmp_path):
    for frame in (ref_client.news("AAPL", limit=5), ref_client.institutional_ownership(ticker="AAPL")):
        missing = [
            c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype) and frame[c].isna().all()
        ]
        assert missing, "the check needs an all-missing category column"
        frame.to_parquet(tmp_path / "f.parquet")
        pd.testing.assert_frame_equal(frame, pd.read_parquet(tmp_path / "f.parquet"))


def test_the_suite_never_writes_to_the_users_cache():
    from fdkit.client.cache import default_cache_dir

    home_cache = Path.home() / ".cache"
    assert os.environ.get("FDKIT_CACHE_DIR")
    assert home_cache not in default_cache_dir().parents


# -- deltalake is the delta extra: the embedded default never needs it, a Delta operation names the extra ----------
def _without_deltalake(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``import deltalake`` fails, as in an install without the ``delta`` extra."""
    fake = tmp_path / "shadow" / "deltalake"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("deltalake is not installed here")\n')
    return {**os.environ, "PYTHONPATH": str(tmp_path / "shadow"), "FDKIT_CACHE_DIR": str(tmp_path / "cache")}


def test_the_embedded_default_needs_no_deltalake_and_a_delta_operation_names_its_extra(tmp_path):
    env = _without_deltalake(tmp_path)
    code = "import fdkit; print(len(fdkit.prices(['AAPL', 'MSFT'], start_date='2024-01-02', end_date='2024-01-31')))"
    served = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert served.returncode == 0 and served.stdout.split()[-1] == "42", served.stderr
    mirror = [sys.executable, "-m", "fdkit.cli", "mirror", "--tickers", "AAPL", "--datasets", "prices"]
    said = subprocess.run(
        [*mirror, "--out", str(tmp_path / "lake")], capture_output=True, text=True, timeout=300, env=env
    )
    assert said.returncode == 2 and "Traceback" not in said.stderr, said.stderr
    (line,) = said.stderr.strip().splitlines()
    assert "pip install 'fdkit[delta]'" in line and not (tmp_path / "lake" / "prices").exists()
