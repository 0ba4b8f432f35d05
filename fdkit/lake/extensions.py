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
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

__all__ = ["GROUP", "DataPackage", "data_packages", "extension_roots"]

GROUP = "fdkit.lakes"


@dataclass(frozen=True)
class DataPackage:
    """One installed data package's lake.

    Attributes:
        name: the entry point's name (``history``).
        distribution: the installed distribution declaring it (``fdkit-history``), as its metadata spells it.
        version: that distribution's version (``None`` when its metadata does not say).
        root: the data folder, laid out as a lake.
    """

    name: str
    distribution: str
    version: str | None
    root: Path

    def __str__(self) -> str:
        return f"{self.distribution} {self.version}" if self.version else self.distribution


@cache
def data_packages() -> tuple[DataPackage, ...]:
    """The installed data packages whose data folder exists, by entry-point name.

    ``FDKIT_NO_EXTENSIONS=1`` turns them off (a run on the bundled lake alone).

    Example:
        >>> all(p.root.is_dir() and p.distribution for p in data_packages())
        True
    """
    if os.environ.get("FDKIT_NO_EXTENSIONS") == "1":
        return ()
    found = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        module, _, attr = ep.value.partition(":")
        try:
            value = getattr(importlib.import_module(module), attr or "DATA_DIR")
        except (ImportError, AttributeError):
            continue  # a broken data package is not fdkit's failure: its datasets are simply absent
        path = Path(value)
        if path.is_dir():
            dist = ep.dist
            name = (dist.metadata["Name"] if dist is not None else None) or module.partition(".")[0]
            found.append(DataPackage(ep.name, name, dist.version if dist is not None else None, path))
    return tuple(found)


def extension_roots() -> tuple[Path, ...]:
    """The data folders of the installed data packages, by entry-point name (missing folders left out).

    ``FDKIT_NO_EXTENSIONS=1`` turns them off (a run on the bundled lake alone).

    Example:
        >>> extension_roots() == tuple(p.root for p in data_packages())
        True
    """
    return tuple(p.root for p in data_packages())
