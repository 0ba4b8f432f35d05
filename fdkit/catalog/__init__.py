"""The catalog layer (L1): what the service is, declared once.

Owns the endpoint catalog (:mod:`.endpoints`: paths, parameters, examples, pagination), the record schemas
(:mod:`.schema`: one logical type per field) and the payload shapes (:mod:`.shapes`: how nested records explode to
rows and back). Client functions, server routes, OpenAPI, docs and tests are all driven from here.

May import: :mod:`fdkit.errors` only. Everything else imports this.
"""

from __future__ import annotations

from fdkit.catalog import contracts, endpoints, schema, shapes
from fdkit.catalog.contracts import *  # noqa: F403  (the package's public names: each module's __all__)
from fdkit.catalog.endpoints import *  # noqa: F403  (the package's public names: each module's __all__)
from fdkit.catalog.schema import *  # noqa: F403  (the package's public names: each module's __all__)
from fdkit.catalog.shapes import *  # noqa: F403  (the package's public names: each module's __all__)

__all__ = [*contracts.__all__, *endpoints.__all__, *schema.__all__, *shapes.__all__]
