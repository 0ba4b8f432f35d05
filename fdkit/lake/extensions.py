"""Data packages that extend the bundled lake (``fdkit-history``): found through the ``fdkit.lakes`` entry point.

A data package declares ``[project.entry-points."fdkit.lakes"] name = "module:DATA_DIR"``, a folder laid out as a
lake. The bundled lake serves the datasets of every installed package beside its own (its own win on a name);
a lake of the user's (``FDKIT_DATA``, a mirror) is served as it is.

Example:
    >>> all(p.is_dir() for p in extension_roots())
    True
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

__all__ = ["GROUP", "extension_roots"]

GROUP = "fdkit.lakes"


@cache
def extension_roots() -> tuple[Path, ...]:
    """The data folders of the installed data packages, by entry-point name (missing folders left out).

    ``FDKIT_NO_EXTENSIONS=1`` turns them off (a run on the bundled lake alone).
    """
    if os.environ.get("FDKIT_NO_EXTENSIONS") == "1":
        return ()
    roots = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        module, _, attr = ep.value.partition(":")
        try:
            value = getattr(importlib.import_module(module), attr or "DATA_DIR")
        except (ImportError, AttributeError):
            continue  # a broken data package is not fdkit's failure: its datasets are simply absent
        path = Path(value)
        if path.is_dir():
            roots.append(path)
    return tuple(roots)
