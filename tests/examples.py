"""The catalog's example requests, as the tests use them (valid: 200 on data/; invalid: 400)."""

from urllib.parse import urlsplit

from fdkit.catalog.endpoints import CATALOG

#: one valid request per data endpoint (None where the reference data has nothing to serve)
EXAMPLES: dict[str, dict | None] = {
    name: (dict(ep.examples[0]) if ep.examples else None) for name, ep in CATALOG.items() if ep.kind != "listing"
}

#: one invalid request per data endpoint (-> 400)
BAD: dict[str, dict] = {
    name: dict(ep.invalid_examples[0]) for name, ep in CATALOG.items() if ep.kind != "listing" and ep.invalid_examples
}


def ask(session, base_url: str, key: str, name: str, params: dict | None = None):
    """Send catalog endpoint ``name`` its example request (or ``params``) as the service expects it (GET or POST)."""
    ep = CATALOG[name]
    query = EXAMPLES[name] if params is None else params
    headers = {"X-API-KEY": key, "Accept": "application/json"}
    if ep.method == "POST":
        return session.post(base_url + ep.path, json=query, headers=headers, timeout=60)
    return session.get(base_url + ep.path, params=query, headers=headers, timeout=60)


def comparable(response) -> tuple[int, object]:
    """A response's status and JSON body with ``next_page_url`` cut to its path (cursors carry their issue time)."""
    body = response.json()
    if isinstance(body, dict) and body.get("next_page_url"):
        body = {**body, "next_page_url": urlsplit(body["next_page_url"]).path}
    return response.status_code, body
