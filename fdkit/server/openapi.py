"""The server's OpenAPI 3.1 document, generated from the endpoint catalog and the record schemas.

Example:
    >>> doc = build_openapi()
    >>> "/prices" in doc["paths"] and doc["openapi"]
    '3.1.0'
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fdkit.catalog.contracts import API_VERSION, DEFAULT_CONTRACT, catalog_for
from fdkit.catalog.endpoints import Endpoint, Param
from fdkit.catalog.schema import SCHEMAS, WIRE_TYPES, N
from fdkit.catalog.shapes import MEMBER_EXTRAS_SCHEMA, SHAPES
from fdkit.frames.typed import ARROW_STREAM, FORMATS_HEADER
from fdkit.server.usage import USAGE_HEADER

#: the response header naming the parameters (or body fields) a request sent that the endpoint ignored
IGNORED_HEADER = "X-FDS-Ignored-Parameters"

__all__ = ["build_openapi", "package_version"]


def package_version() -> str:
    """The installed fdkit's version (the document's ``info.version``).

    Returns:
        The distribution's version, or ``"0+unknown"`` when fdkit runs from a folder that was never installed.

    Example:
        >>> import fdkit
        >>> package_version() == fdkit.__version__
        True
    """
    try:
        return version("fdkit")
    except PackageNotFoundError:
        return "0+unknown"


_JSON_TYPE: dict[str, dict[str, Any]] = {
    "float": {"type": ["number", "null"]},
    "int": {"type": ["integer", "null"]},
    "string": {"type": ["string", "null"]},
    "category": {"type": ["string", "null"]},
    "bool": {"type": ["boolean", "null"]},
    "date": {"type": ["string", "null"], "format": "date"},
    "datetime": {"type": ["string", "null"], "format": "date-time"},
}

_NESTED: dict[tuple[str, str], dict[str, Any]] = {
    ("segmented_revenues", "items"): {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"]},
                "amount": {"type": ["number", "null"]},
                "start_period": {"type": ["string", "null"], "format": "date"},
                "end_period": {"type": ["string", "null"], "format": "date"},
                "segments": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string"},
                            "type": {"type": ["string", "null"]},
                            **MEMBER_EXTRAS_SCHEMA,
                        },
                    },
                },
            },
        },
    },
    ("earnings", "signals"): {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["type", "headline"],
            "properties": {
                "type": {"type": "string"},
                "metric": {"type": ["string", "null"]},
                "period": {"type": ["string", "null"]},
                "headline": {"type": "string"},
                "importance": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"]},
                "details": {"type": "object", "additionalProperties": True},
            },
        },
    },
    ("company_facts", "events"): {
        "type": "array",
        "items": {
            "type": "object",
            "description": "The company's history: its ticker changes ({type: ticker_change, date, ticker: the symbol "
            "from that date on; previous_ticker: the one before, an fdkit extension}). Former names are not events: "
            "they are under former_names.",
            "properties": {
                "type": {"type": "string"},
                "date": {"type": ["string", "null"], "format": "date"},
                "ticker": {"type": ["string", "null"]},
                "previous_ticker": {"type": ["string", "null"]},
            },
            "required": ["type"],
        },
    },
    ("company_facts", "former_names"): {
        "type": "array",
        "description": "The names the SEC lists the company under before its current one, from SEC submissions (an "
        "fdkit extension); empty where none is known.",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "start_date": {"type": ["string", "null"], "format": "date"},
                "end_date": {"type": ["string", "null"], "format": "date"},
            },
            "required": ["name"],
        },
    },
    ("filing_items", "exhibits"): {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "number": {"type": ["string", "null"]},
                "description": {"type": ["string", "null"]},
                "url": {"type": ["string", "null"]},
                "text": {"type": ["string", "null"]},
            },
        },
    },
}

_ERROR = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
}


def _record_schema(name: str, *, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for field, logical in SCHEMAS[name].items():
        if field in drop:
            continue
        logical = WIRE_TYPES.get((name, field), logical)
        props[field] = _NESTED.get((name, field), {}) if logical == N else dict(_JSON_TYPE[logical])
    return {"type": "object", "properties": props}


def _record_for(ep: Endpoint) -> dict[str, Any]:
    """One payload record: its shape's schema, without the fields the response carries once at the top."""
    if ep.kind == "search":
        rec = _record_schema("search_results")
        rec["additionalProperties"] = {"type": ["number", "string", "null"]}
        return rec
    if not ep.schema:
        raise ValueError(f"{ep.name}: a data endpoint needs a record schema")
    return SHAPES[ep.shape].record_schema(ep.schema, _record_schema, drop=ep.context_fields)


def _param_schema(p: Param, example: Any = None) -> dict[str, Any]:
    scalars: dict[str, dict[str, Any]] = {
        "string": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
        },
        "integer": {"type": "integer"},
        "number": {"type": "number"},
        "boolean": {"type": "boolean"},
        "date": {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
    }
    base = dict(scalars.get(p.type, scalars["string"]))
    if p.enum:
        base = {"type": "string", "enum": list(p.enum)}
    if p.pattern:
        base["pattern"] = f"^{p.pattern}$"
    if p.min is not None:
        base["minimum"] = p.min
    if p.max is not None and p.name != "limit":  # a larger limit is clamped, not refused
        base["maximum"] = p.max
    if p.default is not None:
        base["default"] = p.default
    if p.repeatable:
        if isinstance(example, str):
            example = [example]
        return {"type": "array", "items": base, "minItems": 1, **({"example": example} if example else {})}
    example = p.example if example is None else example
    if example is not None:
        base["example"] = example
    return base


def _body_schema(ep: Endpoint) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for p in ep.params:
        if p.type == "array" and p.items == "filter":
            props[p.name] = {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["field", "operator", "value"],
                    "properties": {
                        "field": {"type": "string"},
                        "operator": {"type": "string", "enum": ["eq", "gt", "gte", "lt", "lte", "in"]},
                        # 'in' takes strings (tickers, CIKs) or, on a numeric field, numbers
                        "value": {
                            "oneOf": [
                                {"type": "number"},
                                {"type": "array", "minItems": 1, "items": {"type": ["string", "number"]}},
                            ]
                        },
                    },
                },
            }
        elif p.type == "array":
            props[p.name] = {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}}
        else:
            props[p.name] = _param_schema(p)
    return {
        "type": "object",
        "required": [p.name for p in ep.params if p.required],
        "properties": props,
        "additionalProperties": False,
    }


def _response_schema(ep: Endpoint) -> dict[str, Any]:
    key = ep.response_key
    if ep.response_schema is not None:
        return dict(ep.response_schema)
    if ep.kind == "listing":
        return {
            "type": "object",
            "required": [key],
            "properties": {"resource": {"type": "string"}, key: {"type": "array", "items": {"type": "string"}}},
        }
    rec = _record_for(ep)
    props: dict[str, Any] = {key: {"type": "array", "items": rec} if ep.list_payload or ep.kind != "object" else rec}
    if ep.paginated:
        props["next_page_url"] = {"type": "string", "format": "uri"}
    row = SCHEMAS.get(ep.row_schema or "", {})
    for f in ep.context_fields:
        props[f] = dict(_JSON_TYPE[row.get(f, "string")])
    return {"type": "object", "required": [key], "properties": props}


def _operation(ep: Endpoint) -> dict[str, Any]:
    content: dict[str, Any] = {"application/json": {"schema": _response_schema(ep)}}
    headers: dict[str, Any] = {
        IGNORED_HEADER: {
            "description": "Query parameters or body fields the endpoint does not know, ignored (comma "
            "separated); absent when none was sent.",
            "schema": {"type": "string"},
        },
        FORMATS_HEADER: {
            "description": "The formats this service answers data in (fdkit's own service: "
            f"application/json, {ARROW_STREAM}).",
            "schema": {"type": "string"},
        },
        USAGE_HEADER: {
            "description": "Requests metered to the key this one was sent with, this one included (one "
            "per page answered); absent without a valid key.",
            "schema": {"type": "integer"},
        },
    }
    if ep.method == "GET" and ep.kind == "list":
        content[ARROW_STREAM] = {
            "schema": {"type": "string", "format": "binary"},
            "description": "An fdkit extension, asked for with Accept: the page's typed columns as an Arrow IPC "
            "stream (the request's constants, e.g. its ticker, in the schema metadata), pages of up to 50,000 "
            "rows; the next page's URL in a Link header (rel=next).",
        }
        headers["Link"] = {"description": 'Arrow pages: <next page URL>; rel="next"', "schema": {"type": "string"}}
    responses: dict[str, Any] = {
        "200": {"description": "OK", "content": content, "headers": headers},
        "400": {"$ref": "#/components/responses/BadRequest"},
    }
    if ep.auth:
        responses["401"] = {"$ref": "#/components/responses/Unauthorized"}
        if ep.tier == "paid":
            responses["402"] = {"$ref": "#/components/responses/PaymentRequired"}
    if ep.kind != "listing" or ep.param_names:
        responses["404"] = {"$ref": "#/components/responses/NotFound"}
    op: dict[str, Any] = {
        "operationId": ep.name,
        "summary": ep.summary,
        "tags": [ep.path.strip("/").split("/")[0]],
        "responses": responses,
    }
    if not ep.auth:
        op["security"] = []
    example = dict(ep.examples[0]) if ep.examples else {}  # the catalog's example request
    if ep.method == "POST":
        body = {"schema": _body_schema(ep), **({"example": example} if example else {})}
        op["requestBody"] = {"required": True, "content": {"application/json": body}}
    else:
        op["parameters"] = [
            {
                "name": p.name,
                "in": "query",
                "required": p.required,
                "description": p.description,
                "schema": _param_schema(p, example.get(p.name)),
                **({"style": "form", "explode": True} if p.repeatable else {}),
            }
            for p in ep.params
        ]
        if ep.paginated:
            op["parameters"].append(
                {
                    "name": "cursor",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "Opaque cursor from next_page_url; other parameters are then ignored.",
                }
            )
    return op


def build_openapi(
    title: str = "Financial Data Service (fdkit serve)", contract: str = DEFAULT_CONTRACT
) -> dict[str, Any]:
    """Build the OpenAPI document of every endpoint a service of ``contract`` serves.

    Args:
        title: the document's title.
        contract: ``"seed"`` (the default) or ``"2026"`` (:mod:`fdkit.catalog.contracts`).

    Returns:
        The OpenAPI 3.1 document as a dict; ``info.version`` is the API's (``1.0.0``, as both documents),
        ``info.x-fdkit-version`` the installed fdkit's and ``info.x-fdkit-contract`` the contract.

    Example:
        >>> doc = build_openapi(contract="2026")
        >>> doc["info"]["version"], doc["info"]["x-fdkit-contract"], doc["paths"]["/prices/tickers"]["get"]["security"]
        ('1.0.0', '2026', [])
    """
    paths: dict[str, Any] = {}
    for ep in catalog_for(contract).values():
        paths.setdefault(ep.path, {})[ep.method.lower()] = _operation(ep)
    err = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    keys = (
        "Every operation needs an X-API-KEY (the seed's contract; `fdkit serve --contract 2026` leaves the listings "
        "open that the 2026 document does)."
        if contract == "seed"
        else "Every operation needs an X-API-KEY but the listings the 2026 document leaves open (security: [])."
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": API_VERSION,
            "x-fdkit-version": package_version(),
            "x-fdkit-contract": contract,
            "description": "A spec-faithful implementation of the Financial Data Service over a Parquet lake. "
            f"Every path also answers with a trailing slash. {keys} Each page answered to a valid key is metered: "
            f"{USAGE_HEADER} on the answer; GET /usage answers the key's own count ({{key_id, plan, requests}}; the "
            "key_id is a hash, never the key).",
        },
        "paths": paths,
        "security": [{"ApiKey": []}],
        "components": {
            "securitySchemes": {"ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-KEY"}},
            "schemas": {"Error": _ERROR},
            "responses": {
                name: {"description": name, "content": err}
                for name in ("BadRequest", "Unauthorized", "PaymentRequired", "NotFound")
            },
        },
    }
