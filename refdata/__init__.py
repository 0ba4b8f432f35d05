"""The reference-data build: the lake in ``data/`` made from the real public sources in ``../shared/data-real*``.

Owns the stage contract (:mod:`.stage`: what a stage reads, needs, produces and says about its provenance), the
driver that runs stages in dependency order and checks what they hand back (:mod:`.driver`), the registered
stages, one module per source (:mod:`.facts`, :mod:`.statements`, :mod:`.prices`, ...), the pipeline that writes
the lake (:mod:`.pipeline`, ``python -m refdata``) and ``SOURCES.md`` / ``CONCEPTS.md`` (:mod:`.sources_doc`).
Shared constants (the us-gaap concept map, the share basis) live in :mod:`.concepts` and :mod:`.common`, so stage
modules never import each other in a circle.

Deterministic: the same sources give the same rows, byte for byte (``tests/test_reference_data.py`` rebuilds).

May import: :mod:`fdkit.lake`, :mod:`fdkit.frames`, :mod:`fdkit.research`, :mod:`fdkit.catalog`,
:mod:`fdkit.errors`. Never :mod:`fdkit.client`, :mod:`fdkit.server`, :mod:`fdkit.webhooks`, :mod:`fdkit.api` or
:mod:`fdkit.cli` (the build writes what the service later reads; it never asks the service).
"""

from __future__ import annotations
