"""Every Python block of ``docs/*.md`` runs verbatim in a fresh interpreter (the README's: ``tests/test_readme.py``).

A block runs on its own, as a reader pastes it. A block that goes on from the one before it says so on its first
line with :data:`CONTINUES` and is run after that one (the chain of blocks it continues, in order). The blocks of
``docs/LAKE.md`` read ``lake/``, the lake the page's own command makes (``fdkit mirror ... --out lake``): the test
runs that command first, on the embedded default with an empty cache. A block importing a package that is not
installed (DuckDB, Polars, Dask are optional) is skipped, naming the package.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from docblocks import CONTINUES, runnable

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("FINANCIAL_DATASETS_API_KEY", "FDKIT_BASE_URL")}


CASES = [(doc, line, code) for doc in DOCS for line, code in runnable(doc.read_text())]


def _mirror_command(text: str) -> list[str]:
    """The page's ``fdkit mirror ... --out lake`` command, as written in it."""
    (command,) = re.findall(r"`(fdkit mirror [^`]*--out lake)`", " ".join(text.split()))
    return shlex.split(command)


@pytest.fixture(scope="module")
def lake_page_folder(tmp_path_factory) -> Path:
    """A folder holding ``lake/``, made by the command docs/LAKE.md gives (embedded default, empty cache)."""
    folder = tmp_path_factory.mktemp("lake-page")
    command = _mirror_command((ROOT / "docs" / "LAKE.md").read_text())
    env = {**CLEAN_ENV, "FDKIT_CACHE_DIR": str(folder / "cache")}
    r = subprocess.run(
        [sys.executable, "-m", "fdkit.cli", *command[1:]],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0 and "0 failed" in r.stdout, r.stdout + r.stderr
    assert (folder / "lake" / "prices" / "_delta_log").is_dir()
    return folder


def _missing_module(code: str) -> str | None:
    for name in re.findall(r"^\s*(?:import|from) ([\w.]+)", code, re.M):
        if importlib.util.find_spec(name.split(".")[0]) is None:
            return name.split(".")[0]
    return None


@pytest.mark.parametrize(("doc", "line", "code"), CASES, ids=[f"{d.name}:{n}" for d, n, _ in CASES])
def test_every_docs_block_runs_verbatim(doc, line, code, request, tmp_path):
    missing = _missing_module(code)
    if missing:
        pytest.skip(f"{doc.name} line {line} needs {missing}, which is not installed (pip install {missing})")
    cwd = request.getfixturevalue("lake_page_folder") if "lake/" in code else tmp_path
    env = {**CLEAN_ENV, "FDKIT_CACHE_DIR": str(tmp_path / "cache"), "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{doc.name}, the block at line {line}:\n{r.stderr[-3000:]}"


def test_the_docs_have_python_blocks_and_the_lake_page_says_how_its_lake_is_made():
    assert len([c for c in CASES if c[0].name == "LAKE.md"]) >= 5
    assert _mirror_command((ROOT / "docs" / "LAKE.md").read_text())[:2] == ["fdkit", "mirror"]


def test_a_block_that_uses_a_name_it_does_not_import_fails_here(tmp_path):
    """The check bites: the LAKE.md block of issue 45 (``deltalake`` used, not imported) is a failure."""
    r = subprocess.run(
        [sys.executable, "-c", 'files = deltalake.DeltaTable("lake/prices").file_uris()'],
        cwd=tmp_path,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0 and "NameError: name 'deltalake' is not defined" in r.stderr
    with pytest.raises(ValueError, match="continues a block above"):
        runnable(f"```python\n{CONTINUES}\nx\n```\n")
