"""The HTTP wire shared by both sides (L4).

Deadlines, body caps and the origin-bound session of every outgoing call (:mod:`.transport`), and the JSON and
error responses of fdkit's ASGI apps (:mod:`.responses`).

May import: :mod:`fdkit.errors`.
"""

from __future__ import annotations
