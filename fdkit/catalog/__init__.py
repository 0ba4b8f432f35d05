"""The catalog layer (L1): what the service is, declared once.

Owns the endpoint catalog (:mod:`.endpoints`: paths, parameters, examples, pagination), the record schemas
(:mod:`.schema`: one logical type per field) and the payload shapes (:mod:`.shapes`: how nested records explode to
rows and back). Client functions, server routes, OpenAPI, docs and tests are all driven from here.

May import: :mod:`fdkit.errors` only. Everything else imports this.
"""

from __future__ import annotations

from fdkit.catalog.endpoints import (  # noqa: F401  (the package's public names)
    CATALOG,
    FILING_ITEM_TITLES,
    FILING_ITEMS_8K,
    FILING_ITEMS_10K,
    FILING_ITEMS_10Q,
    NEVER,
    Endpoint,
    Param,
    by_path,
    get,
    listing_for,
)
from fdkit.catalog.schema import (  # noqa: F401  (the package's public names)
    KNOWN_CATEGORIES,
    LOGICAL_TYPES,
    OWNERSHIP_FORMS,
    SCHEMAS,
    SEGMENT_REPORT,
    STATEMENT_FIELDS,
    WIRE_TYPES,
    fields_of,
    pandas_dtype,
)
from fdkit.catalog.shapes import (  # noqa: F401  (the package's public names)
    SEGMENT_LINE_ITEMS,
    SHAPES,
    JsonSchema,
    Record,
    Shape,
)

__all__ = [
    "Param",
    "Endpoint",
    "CATALOG",
    "by_path",
    "get",
    "listing_for",
    "NEVER",
    "FILING_ITEMS_10K",
    "FILING_ITEMS_10Q",
    "FILING_ITEMS_8K",
    "FILING_ITEM_TITLES",
    "SCHEMAS",
    "LOGICAL_TYPES",
    "KNOWN_CATEGORIES",
    "SEGMENT_REPORT",
    "pandas_dtype",
    "fields_of",
    "STATEMENT_FIELDS",
    "OWNERSHIP_FORMS",
    "WIRE_TYPES",
    "Shape",
    "SHAPES",
    "Record",
    "JsonSchema",
    "SEGMENT_LINE_ITEMS",
]
