"""Every notebook executes top to bottom against the embedded default (nbclient), without errors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_ten_notebooks():
    assert len(NOTEBOOKS) == 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("FDKIT_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL", "FDKIT_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    nb = nbformat.read(path, as_version=4)
    t = time.monotonic()
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    print(f"{path.stem}: {time.monotonic() - t:.1f} s")
    images = sum(
        1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    )
    if path.stem != "07_webhooks":
        assert images >= 1, "each story has a plot"


def test_the_factor_notebooks_2010_panel_uses_no_statement_before_its_filing_day():
    """Issue 27: the GP/A and E/P ICs of notebook 08 join statements point in time (no row before it was filed)."""
    pytest.importorskip("fdkit_history")
    import nbformat
    import pandas as pd

    import fdkit

    nb = nbformat.read(next(p for p in NOTEBOOKS if p.stem == "08_factor_study"), as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    first = next(i for i, src in enumerate(code) if "fdkit.price_history(" in src)
    ns: dict = {"pd": pd, "fdkit": fdkit, "spells": fdkit.index_members("sp500")}
    exec("import warnings", ns)  # noqa: S102 - the notebook's own cells, run as the notebook runs them
    for src in code[first : first + 2]:
        exec(src, ns)  # noqa: S102
    panel, table = ns["panel10"], ns["ic_table"]
    used = panel.dropna(subset=["report_period"]).reset_index()
    statements = fdkit.income_statements(sorted(set(used["ticker"])), period="annual", limit=None, errors="ignore")
    filed = statements["filing_date"]
    keyed = used.join(filed.rename("filed"), on=["ticker", "report_period"])
    assert keyed["filed"].notna().all()
    assert (keyed["filed"] <= keyed["time"]).all()  # a month end sees only 10-Ks filed on or before it
    assert (keyed["available_from"] <= keyed["time"]).all()
    assert set(table.index.get_level_values("factor")) == {"gp_to_assets"}  # no 2010 E/P: per-share basis unknown
    assert (table["names_min"] >= 100).all() and table.loc[("gp_to_assets", "fwd_12"), "nw_lags"] == 11
