"""The frames layer (L2): records and Arrow parts <-> typed, tidy DataFrames. Pure: no I/O, no client.

Owns the typed-frame conversion (:mod:`.typed`), shared column dtypes (:mod:`.dtypes`), price and share bases
(:mod:`.basis`), the screener's filter semantics (:mod:`.filters`) and the filing times that travel with a frame's
rows (:mod:`.pointintime`).

May import: :mod:`fdkit.catalog`, :mod:`fdkit.errors`. Never the lake, the network, the client or the server.
"""

from __future__ import annotations

from fdkit.frames import basis, dtypes, filters, typed
from fdkit.frames.basis import *  # noqa: F403  (the package's public names: each module's __all__)
from fdkit.frames.dtypes import *  # noqa: F403  (the package's public names: each module's __all__)
from fdkit.frames.filters import *  # noqa: F403  (the package's public names: each module's __all__)
from fdkit.frames.typed import *  # noqa: F403  (the package's public names: each module's __all__)

__all__ = [*typed.__all__, *dtypes.__all__, *basis.__all__, *filters.__all__]
