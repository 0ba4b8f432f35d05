"""The lake layer (L4): the on-disk datasets the server reads and the build, mirror and receiver write.

Owns the layout and atomic writes (:mod:`.io`), the Delta tables every dataset fdkit writes is (:mod:`.delta`,
through ``deltalake``) and their maintenance (:mod:`.tables`: convert, optimize, vacuum), where a lake lives (a
folder or an ``s3://`` prefix read through pyarrow.fs, :mod:`.location`), the reader seam the server's store,
validate, the event generator and the receiver read through (:mod:`.reader`), the writer seam the mirror and the
receiver write through (:mod:`.writer`; :func:`.io.write_dataset` for the build, convert, optimize and vacuum hold
the same lock file per dataset, :mod:`.locks`) and the receiver's ledger of landed rows (:mod:`.ledger`), the
projections kept beside a
table for cross-sections (:mod:`.latest`: each ticker's latest bar, for the market snapshot), and the invariants a
lake must satisfy (:mod:`.validate`). The build reads back what it wrote with :func:`.io.read_dataset` (the
reader's own read).

May import: :mod:`fdkit.frames`, :mod:`fdkit.research` (pure helpers), :mod:`fdkit.catalog`, :mod:`fdkit.errors`.
"""

from __future__ import annotations

from fdkit.lake import io, latest, reader  # noqa: F401  (latest keeps its projections: io.COMMIT_HOOKS)
from fdkit.lake.io import *  # noqa: F403  (the package's public names: each module's __all__)
from fdkit.lake.reader import *  # noqa: F403  (the package's public names: each module's __all__)

__all__ = [*io.__all__, *reader.__all__]
