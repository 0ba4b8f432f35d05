r"""API keys and plans of ``fdkit serve``.

Keys come from ``--keys FILE`` (one key per line, optionally followed by a plan name; ``#`` comments) or
``FDKIT_SERVER_KEYS`` (comma-separated ``key`` or ``key:plan``). The plans:

========  ==============================================================================
plan      endpoints
========  ==============================================================================
``pro``   every endpoint (the default plan of a key)
``free``  catalog entries with ``tier="free"``: prices, price snapshot, news, filings,
          company facts, interest rates, yield curve; a paid endpoint answers 402
========  ==============================================================================

Listing endpoints need no key; company facts never answer 402.

Example:
    >>> keys = parse_keys(chr(10).join(["k1 free", "# comment", "k2"]))
    >>> keys.plan_of("k1"), keys.plan_of("k2"), keys.plan_of("nope")
    ('free', 'pro', None)
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog import Endpoint

__all__ = ["Keys", "PLANS", "parse_keys", "load_keys", "plan_allows"]

#: plan name -> set of tiers it includes
PLANS: Mapping[str, frozenset[str]] = {"pro": frozenset({"free", "paid"}), "free": frozenset({"free"})}


@dataclass
class Keys:
    """The keys a server accepts, each with its plan."""

    plans: dict[str, str] = field(default_factory=dict)

    @property
    def first(self) -> str | None:
        """The first key (what :func:`fdkit.server.start` reports as ``api_key``)."""
        return next(iter(self.plans), None)

    def plan_of(self, key: str | None) -> str | None:
        """Plan of ``key``, or ``None`` when it is not a valid key (constant-time comparison)."""
        if not key:
            return None
        found = None
        for known, plan in self.plans.items():
            if hmac.compare_digest(known.encode(), key.encode()):
                found = plan
        return found


def parse_keys(text: str) -> Keys:
    """Parse a keys file: ``key [plan]`` per line.

    Args:
        text: file content.

    Returns:
        :class:`Keys`.

    Raises:
        ValueError: for an unknown plan name.
    """
    plans: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(":", " ").split()
        key, plan = parts[0], (parts[1] if len(parts) > 1 else "pro")
        if plan not in PLANS:
            raise ValueError(f"unknown plan {plan!r} in keys file; plans: {', '.join(PLANS)}")
        plans[key] = plan
    return Keys(plans)


def load_keys(keys: str | os.PathLike[str] | Mapping[str, str] | list[str] | None = None) -> Keys:
    """Load keys from a file path, a mapping, a list, ``FDKIT_SERVER_KEYS``, or generate one.

    Args:
        keys: a path to a keys file, ``{key: plan}``, a list of keys, or ``None``.

    Returns:
        :class:`Keys` with at least one key.
    """
    if isinstance(keys, Mapping):
        out = parse_keys("\n".join(f"{k} {p}" for k, p in keys.items()))
    elif isinstance(keys, list | tuple):
        out = parse_keys("\n".join(keys))
    elif keys is not None:
        out = parse_keys(Path(keys).read_text())
    elif os.environ.get("FDKIT_SERVER_KEYS"):
        out = parse_keys("\n".join(os.environ["FDKIT_SERVER_KEYS"].split(",")))
    else:
        out = Keys()
    if not out.plans:
        out.plans[f"fdk_{secrets.token_urlsafe(24)}"] = "pro"
    return out


def plan_allows(plan: str, endpoint: Endpoint) -> bool:
    """Whether ``plan`` includes ``endpoint`` (``free`` endpoints, company facts among them, are in every plan).

    Args:
        plan: plan name.
        endpoint: the endpoint.

    Returns:
        True when allowed.
    """
    return endpoint.tier in PLANS.get(plan, frozenset())
