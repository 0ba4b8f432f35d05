"""The real service's OpenAPI documents (``../shared/reference`` beside the checkout), for the wire-fidelity tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

#: where the reference documents are: the shared folder beside the repository (CI clones it there)
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"


def reference_document(name: str) -> dict[str, Any]:
    """A reference OpenAPI document, decoded; the calling test is skipped where the folder is not beside us."""
    path = REFERENCE / name
    if not path.exists():
        pytest.skip("shared/reference is not beside this checkout")
    return json.loads(path.read_text())
