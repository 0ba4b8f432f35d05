"""Typed frame parts through the client's fetch cache: a warm request is read back as Arrow, with no JSON decode.

The one place where the client's cache meets the frames layer: :mod:`fdkit.frames` stays pure (it converts), this
module orchestrates (fetch or hit, then convert).

Example:
    >>> import fdkit
    >>> from fdkit.frames import frame_from_parts
    >>> part = fetch_part(fdkit.Client(), "company_facts", {"ticker": "AAPL"})
    >>> frame_from_parts("company_facts", [part], {})["name"].tolist()
    ['Apple Inc.']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from fdkit.catalog import endpoints as _catalog
from fdkit.catalog.endpoints import Endpoint
from fdkit.client.cache import fetch_key
from fdkit.frames.typed import Part, arrow_rows, part_bytes, part_from_bytes, part_tag, response_part

__all__ = ["PartSource", "fetch_part"]


class PartSource(Protocol):
    """What :func:`fetch_part` needs of a client."""

    def clean_params(self, endpoint: Endpoint, params: Mapping[str, Any]) -> dict[str, Any]: ...  # noqa: D102

    def fetch(  # noqa: D102
        self,
        endpoint: Endpoint,
        params: Mapping[str, Any],
        *,
        refresh: bool = ...,
        progress: bool | None = ...,
    ) -> dict[str, Any]: ...

    def memoized(  # noqa: D102
        self,
        key: str,
        ttl: int,
        produce: Callable[[], bytes],
        *,
        refresh: bool = ...,
    ) -> bytes: ...

    def speaks_arrow(self) -> bool: ...  # noqa: D102

    def keeps_fetches(self) -> bool: ...  # noqa: D102

    def fetch_arrow(  # noqa: D102
        self,
        endpoint: Endpoint,
        params: Mapping[str, Any],
        *,
        refresh: bool = ...,
    ) -> Part: ...


def fetch_part(
    client: PartSource, endpoint: str | Endpoint, params: Mapping[str, Any], *, refresh: bool = False
) -> Part:
    """Fetch one request as a typed frame *part*, through the client's fetch cache.

    A warm part is read back as Arrow (no JSON decode, no per-value work); :func:`frame_from_parts` assembles parts
    into the endpoint's frame. Cached parts are keyed by :func:`part_tag`, so a changed schema never reads stale
    columns.

    Args:
        client: a :class:`fdkit.Client` (anything with ``clean_params``, ``fetch`` and ``memoized``).
        endpoint: endpoint name or object (not a search endpoint).
        params: the service's parameters.
        refresh: bypass the caches.

    Returns:
        ``(arrow table, rows, constants)``.

    Example:
        >>> import fdkit
        >>> part = fetch_part(fdkit.Client(), "company_facts", {"ticker": "AAPL"})
        >>> from fdkit.frames import frame_from_parts
        >>> frame_from_parts("company_facts", [part], {})["name"].tolist()
        ['Apple Inc.']
    """
    ep = _catalog.get(endpoint) if isinstance(endpoint, str) else endpoint
    clean = client.clean_params(ep, params)

    def fetched() -> Part:
        if arrow_rows(ep) and client.speaks_arrow():  # an fdkit peer: Arrow pages
            return client.fetch_arrow(ep, clean, refresh=refresh)
        return response_part(ep, clean, client.fetch(ep, clean, refresh=refresh, progress=False))

    if not client.keeps_fetches():  # nothing to keep: no round trip through the bytes a cache would hold
        return fetched()
    key = f"part:{part_tag(ep)}:" + fetch_key(ep.name, clean)
    return part_from_bytes(client.memoized(key, ep.ttl, lambda: part_bytes(fetched()), refresh=refresh))
