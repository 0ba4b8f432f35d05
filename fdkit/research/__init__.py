"""The research layer (L2): ratios, factors, event studies, trading sessions and plots. Pure pandas: never fetches.

Used by the ``.fds`` accessor (:mod:`fdkit.accessor`), the server's metrics and the lake's invariants.

May import: :mod:`fdkit.frames`, :mod:`fdkit.catalog`, :mod:`fdkit.errors`. Never the lake, network, client or server.
"""

from __future__ import annotations
