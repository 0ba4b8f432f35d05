"""Nested entries (lists of objects) stored with a declared Arrow type, losslessly.

A nested column (company facts' ``events``, earnings' ``signals``) is written with the one Arrow type the catalog
declares (:data:`fdkit.catalog.schema.NESTED_ITEMS`), so that files written apart agree. An entry may carry fields
the declaration does not name (an event type or a signal detail of a newer document): they travel in the struct's
``_extra`` field as JSON text and come back in place when the entry is read, so nothing a source sent is lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["EXTRA", "fit_entries", "restore_entry", "signal_entry"]

#: the struct field that holds an entry's undeclared fields (JSON text; missing when there are none)
EXTRA = "_extra"


def _fit(value: Any, spec: Mapping[str, Any]) -> dict[str, Any] | None:
    if value is None:
        return None
    entry = dict(value)
    out: dict[str, Any] = {}
    for key, kind in spec.items():
        item = entry.pop(key, None)
        out[key] = _fit(item, kind) if isinstance(kind, Mapping) and item is not None else item
    out[EXTRA] = orjson.dumps(entry, option=orjson.OPT_SORT_KEYS).decode() if entry else None
    return out


def fit_entries(entries: list[Any] | None, spec: Mapping[str, Any]) -> list[dict[str, Any] | None] | None:
    """Entries shaped for their declared struct: declared fields in place, any others kept as ``_extra`` JSON.

    Args:
        entries: the cell's entries (dicts), or ``None``.
        spec: field -> logical type, or a mapping for a nested object.

    Returns:
        The entries to store.

    Example:
        >>> fit_entries([{"type": "delisting", "date": "2024-01-02", "reason": "acquired"}], {"type": "string",
        ...                                                                                 "date": "string"})
        [{'type': 'delisting', 'date': '2024-01-02', '_extra': '{"reason":"acquired"}'}]
    """
    return None if entries is None else [_fit(e, spec) for e in entries]


def restore_entry(stored: Any) -> dict[str, Any]:
    """An entry as it was written: its ``_extra`` fields back in place, at every level.

    Args:
        stored: the entry read back (a mapping).

    Returns:
        The entry as a dict.

    Example:
        >>> restore_entry({"type": "delisting", "date": "2024-01-02", "_extra": '{"reason":"acquired"}'})
        {'type': 'delisting', 'date': '2024-01-02', 'reason': 'acquired'}
    """
    entry = {k: (restore_entry(v) if isinstance(v, Mapping) else v) for k, v in dict(stored).items() if k != EXTRA}
    extra = dict(stored).get(EXTRA)
    if extra:
        entry.update(orjson.loads(extra))
    return entry


def signal_entry(stored: Any) -> dict[str, Any]:
    """A stored earnings signal as the 2026 document's ``Signal``: its null details left out (the document omits them).

    Args:
        stored: the signal read back from the lake.

    Returns:
        The signal.

    Example:
        >>> signal_entry({"type": "MARGIN_EXPANSION", "details": {"current": 0.3, "yoy_chg": None}})
        {'type': 'MARGIN_EXPANSION', 'details': {'current': 0.3}}
    """
    sig = restore_entry(stored)
    sig["details"] = {k: v for k, v in dict(sig.get("details") or {}).items() if v is not None}
    return sig
