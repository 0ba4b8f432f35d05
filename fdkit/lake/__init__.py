"""The lake layer (L4): the on-disk datasets the server reads and the build, mirror and receiver write.

Owns the layout and atomic writes (:mod:`.io`), the reader seam the server's store, validate, the event generator
and the receiver read through (:mod:`.reader`), and the invariants a lake must satisfy (:mod:`.validate`). The
build reads back what it wrote with :func:`.io.read_dataset` (the reader's own read).

May import: :mod:`fdkit.frames`, :mod:`fdkit.research` (pure helpers), :mod:`fdkit.catalog`, :mod:`fdkit.errors`.
"""

from __future__ import annotations

from fdkit.lake.io import (  # noqa: F401  (the package's public names)
    GENERATION_FILE,
    LAKE_SCHEMAS,
    UnsafePathError,
    as_category,
    atomic_write_bytes,
    bump_generation,
    conform,
    dataset_schema,
    default_data_dir,
    fingerprint,
    generation_stamp,
    list_datasets,
    plan_write,
    read_dataset,
    require_lake,
    safe_segment,
    write_dataset,
)
from fdkit.lake.reader import LakeReader  # noqa: F401

__all__ = [
    "LakeReader",
    "default_data_dir",
    "require_lake",
    "fingerprint",
    "list_datasets",
    "read_dataset",
    "write_dataset",
    "conform",
    "atomic_write_bytes",
    "as_category",
    "LAKE_SCHEMAS",
    "dataset_schema",
    "safe_segment",
    "UnsafePathError",
    "bump_generation",
    "plan_write",
    "generation_stamp",
    "GENERATION_FILE",
]
