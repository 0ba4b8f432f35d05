"""Metering: the pages a service answered, counted per API key, as the real service meters one request per page.

Every answer of a catalog route given with a valid key counts one (each page of a paged walk is one request;
errors count nothing). The count goes back to the caller in the ``X-FDS-Usage`` header of each metered answer and
on ``GET /usage`` (the caller's own usage, never another key's); ``fdkit serve`` writes every key's count to
stderr when it shuts down. Keys are never written anywhere: a key appears as :func:`key_id`, a short hash. With
``--workers N`` each worker process counts its own answers.

Example:
    >>> usage = Usage()
    >>> usage.record("a-secret-key-0001"), usage.record("a-secret-key-0001")
    (1, 2)
    >>> usage.count("a-secret-key-0001"), usage.count("another-key-00002")
    (2, 0)
    >>> "a-secret" in usage.summary({"a-secret-key-0001": "pro"})
    False
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Mapping

__all__ = ["USAGE_HEADER", "Usage", "key_id"]

#: the response header carrying the key's metered requests so far (this one included)
USAGE_HEADER = "X-FDS-Usage"


def key_id(key: str) -> str:
    """A key's redacted id: what logs and answers name a key by (a hash prefix; the key cannot be read from it).

    Args:
        key: the API key.

    Returns:
        ``"key-"`` and the first 12 hex digits of the key's SHA-256.

    Example:
        >>> key_id("a-secret-key-0001")
        'key-d6a9462fa33b'
    """
    return "key-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


class Usage:
    """Pages answered per key id (thread-safe)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def record(self, key: str, requests: int = 1) -> int:
        """Count metered requests of ``key`` (one, or a bulk request's tickers at once).

        Args:
            key: the caller's (valid) key.
            requests: how many.

        Returns:
            The key's count, these requests included.

        Example:
            >>> usage = Usage(); usage.record("k"), usage.record("k", 3)
            (1, 4)
        """
        ident = key_id(key)
        with self._lock:
            self._counts[ident] += requests
            return self._counts[ident]

    def count(self, key: str) -> int:
        """The metered requests of ``key`` so far.

        Args:
            key: an API key.

        Returns:
            Its count (0 for a key that made none).
        """
        with self._lock:
            return self._counts.get(key_id(key), 0)

    def summary(self, plans: Mapping[str, str]) -> str:
        """One line naming every key of ``plans`` by its id, with its plan and count (for the shutdown log).

        Args:
            plans: ``{key: plan}`` of the service's keys.

        Returns:
            ``"usage: key-... (pro) 12 pages; key-... (free) 0 pages"``.
        """
        with self._lock:
            parts = [f"{key_id(k)} ({plan}) {self._counts.get(key_id(k), 0)} pages" for k, plan in plans.items()]
        return "usage: " + ("; ".join(parts) or "no keys")
