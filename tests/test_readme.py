"""Every Python block of the README runs verbatim in a fresh interpreter (embedded default, empty cache), and its
point-in-time panel uses no statement before it was filed.

A block that goes on from the one above says so on its first line (``docblocks.CONTINUES``) and runs after it, as
the blocks of ``docs/*.md`` do.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from docblocks import runnable

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = [code for _, code in runnable((ROOT / "README.md").read_text())]
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL")}

#: appended to the factor-study block: the joined rows were filed (known) by each bar's date
NO_LOOK_AHEAD = """
joined = panel.dropna(subset=["report_period"])
assert (joined["available_from"] <= joined.index.get_level_values("time")).all()
filed = ttm.reset_index()[["ticker", "report_period", "filing_date"]]
rows = joined.reset_index()[["ticker", "time", "report_period"]].merge(filed, on=["ticker", "report_period"])
assert len(rows) == len(joined) and (rows["filing_date"] < rows["time"]).all()
print("LOOK-AHEAD CHECKED", len(rows))
"""


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_readme_block_runs_verbatim(number, tmp_path):
    code = "import matplotlib\nmatplotlib.use('Agg')\n" + BLOCKS[number]
    if "fds.asof(monthly" in code:
        code += NO_LOOK_AHEAD
    env = {**CLEAN_ENV, "FDKIT_CACHE_DIR": str(tmp_path / "cache"), "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    if "fds.asof(monthly" in code:
        assert "LOOK-AHEAD CHECKED" in r.stdout


def test_the_readme_has_its_python_blocks():
    assert len(BLOCKS) >= 3
