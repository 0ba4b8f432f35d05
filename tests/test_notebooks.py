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
