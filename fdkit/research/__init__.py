"""The research layer (L3): ratios, factors, event studies, universes, sessions and plots. Pure: never fetches.

Owns ratios (:mod:`.ratios`), factor and event studies (:mod:`.factors`), point-in-time universes
(:mod:`.universe`), market sessions (:mod:`.sessions`) and plots (:mod:`.plot`). Used by the ``.fds`` accessor
(:mod:`fdkit.accessor`), the build's derived datasets (metrics) and the lake's invariants.

May import: :mod:`fdkit.frames`, :mod:`fdkit.catalog`, :mod:`fdkit.errors`. Never the lake, network, client or server.
"""

from __future__ import annotations
