"""The catalog's example requests, as the tests use them (valid: 200 on data/; invalid: 400)."""

from fdkit.catalog.endpoints import CATALOG

#: one valid request per data endpoint (None where the reference data has nothing to serve)
EXAMPLES: dict[str, dict | None] = {
    name: (dict(ep.examples[0]) if ep.examples else None) for name, ep in CATALOG.items() if ep.kind != "listing"
}

#: one invalid request per data endpoint (-> 400)
BAD: dict[str, dict] = {
    name: dict(ep.invalid_examples[0]) for name, ep in CATALOG.items() if ep.kind != "listing" and ep.invalid_examples
}
