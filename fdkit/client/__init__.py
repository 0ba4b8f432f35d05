"""The client layer (L5): one way from a dataset call to the service and back.

Owns configuration (:mod:`.config`), the HTTP cache (:mod:`.cache`), the paginator (:mod:`.paging`), the
transport class :class:`~fdkit.client.session.Client` (:mod:`.session`), the dataset machinery below it
(:mod:`.dispatch`, the generated :mod:`.methods`, :mod:`.compound`, :mod:`.parts`) and the embedded start-up
(:mod:`.embedded`, the one declared door to :mod:`fdkit.server`, opened inside a function).

May import: :mod:`fdkit.wire`, :mod:`fdkit.lake`, :mod:`fdkit.frames`, :mod:`fdkit.catalog`, :mod:`fdkit.errors`.
Never :mod:`fdkit.webhooks` or the build; the server only through :mod:`.embedded`.
"""

from __future__ import annotations

from fdkit.client.session import (  # noqa: F401  (the package's public names)
    Client,
    Errors,
    default_client,
)

__all__ = [
    "Client",
    "default_client",
    "Errors",
]
