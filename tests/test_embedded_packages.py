"""The embedded service's cached answers follow its lake: a data package installed after a cached answer is seen.

A data package (``fdkit-history`` and the like) is a distribution that declares an ``fdkit.lakes`` entry point. The
test installs one the way pip does, as a ``*.dist-info`` folder beside its module on the path, between two runs of
the same call in fresh processes sharing one cache folder: the first run caches an empty answer (no package holds
the ticker's history), the second, with the package installed, answers its rows (before: the cached empty answer,
for a day, the answer's ttl).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
from processes import ROOT

from fdkit.lake.io import write_dataset

TICKER = "VEEV"  # a ticker of the bundled lake that fdkit-history does not hold
CALL = f"""
import sys, fdkit
df = fdkit.Client(cache_dir=sys.argv[1]).price_history("{TICKER}", start_date="2015-01-01", end_date="2015-01-31",
                                                       errors="raise")
print("ROWS", len(df))
"""


def _install_package(site: Path) -> int:
    """A data package of ``TICKER``'s closes in January 2015, laid out as pip installs one; returns its rows."""
    module = site / "fdkit_test_package"
    days = pd.bdate_range("2015-01-02", "2015-01-30")
    rows = pd.DataFrame(
        {
            "ticker": TICKER,
            "date": days,
            "close": 40.0,
            "adj_close": 40.0,
            "dividend": 0.0,
            "volume": 1000,
            "basis": "as_traded",
            "adjusted_as_of": pd.Timestamp("2025-07-09"),
            "price_source": "ml4t",
        }
    )
    write_dataset(module / "_data", "price_history", rows, layout="parquet")
    (module / "__init__.py").write_text("from pathlib import Path\nDATA_DIR = Path(__file__).parent / '_data'\n")
    info = site / "fdkit_test_package-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fdkit-test-package\nVersion: 0.1\n")
    # sorted before "history": its price_history is the one served
    (info / "entry_points.txt").write_text("[fdkit.lakes]\naaa_test = fdkit_test_package:DATA_DIR\n")
    return len(rows)


def _rows(cache: Path, path: list[Path]) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FDKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [ROOT, *path])
    done = subprocess.run(
        [sys.executable, "-c", CALL, str(cache)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split("ROWS")[-1])


def test_a_data_package_installed_after_a_cached_empty_answer_is_seen_by_the_next_call(tmp_path):
    cache, site = tmp_path / "cache", tmp_path / "site"
    assert _rows(cache, []) == 0  # no package holds the ticker's history: an empty answer, cached for a day
    assert any(cache.rglob("*.sqlite"))
    want = _install_package(site)
    assert _rows(cache, [site]) == want  # the package installed: its rows, not the cached empty answer
