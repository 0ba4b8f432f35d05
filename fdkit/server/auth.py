r"""API keys and plans of ``fdkit serve``.

Keys come from ``--keys FILE`` (see :func:`parse_keys` for the format) or ``FDKIT_SERVER_KEYS`` (comma-separated
``key`` or ``key:plan``). Keys shorter than 16 characters are refused there unless ``--allow-short-keys``. The
plans:

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

from fdkit.catalog.endpoints import Endpoint

__all__ = ["Keys", "PLANS", "KeysFileError", "MIN_KEY_LENGTH", "parse_keys", "load_keys", "plan_allows"]

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


MIN_KEY_LENGTH = 16


class KeysFileError(ValueError):
    """A keys file (or ``FDKIT_SERVER_KEYS``) that cannot be read as written; names the line, never the key."""


def parse_keys(text: str, *, allow_short: bool = True, source: str = "keys file") -> Keys:
    """Parse a keys file.

    The format: one key per line, optionally followed by whitespace and a plan (``pro`` or ``free``; default
    ``pro``). ``#`` starts a comment at the start of a line or after whitespace (so ``my#strong#key`` is one key).
    A key is any run of printable, non-whitespace characters. A byte-order mark and CRLF line ends are accepted.

    Args:
        text: file content.
        allow_short: accept keys shorter than :data:`MIN_KEY_LENGTH` characters.
        source: what the text is, for error messages.

    Returns:
        :class:`Keys`.

    Raises:
        KeysFileError: for a malformed line, an unknown plan or a short key, naming the line number.

    Example:
        >>> parse_keys("my#strong#secret-key free  # the partner's key").plan_of("my#strong#secret-key")
        'free'
    """
    plans: dict[str, str] = {}
    for lineno, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        tokens = []
        for token in raw.split():
            if token.startswith("#"):
                break
            tokens.append(token)
        if not tokens:
            continue
        if len(tokens) > 2:
            raise KeysFileError(f"{source} line {lineno}: expected 'KEY [PLAN]', found {len(tokens)} words")
        key, plan = tokens[0], (tokens[1] if len(tokens) > 1 else "pro")
        if not key.isprintable():
            raise KeysFileError(f"{source} line {lineno}: the key has non-printable characters")
        if plan not in PLANS:
            raise KeysFileError(f"{source} line {lineno}: unknown plan {plan!r}; plans: {', '.join(PLANS)}")
        if not allow_short and len(key) < MIN_KEY_LENGTH:
            raise KeysFileError(
                f"{source} line {lineno}: the key is shorter than {MIN_KEY_LENGTH} characters "
                "(use --allow-short-keys to accept it)"
            )
        plans[key] = plan
    return Keys(plans)


def load_keys(
    keys: str | os.PathLike[str] | Mapping[str, str] | list[str] | None = None, *, allow_short: bool = False
) -> Keys:
    """Load keys from a file path, a mapping, a list, ``FDKIT_SERVER_KEYS``, or generate one.

    Args:
        keys: a path to a keys file, ``{key: plan}``, a list of keys, or ``None``.
        allow_short: accept keys shorter than 16 characters from a file or the environment (keys given as a
            mapping or list in Python are taken as they are).

    Returns:
        :class:`Keys` with at least one key.

    Raises:
        KeysFileError: for a malformed keys file or variable.
        OSError: when the keys file cannot be read.
    """
    if isinstance(keys, Mapping):
        out = Keys({str(k): str(p) for k, p in keys.items()})
        bad = [p for p in out.plans.values() if p not in PLANS]
        if bad:
            raise KeysFileError(f"unknown plan {bad[0]!r}; plans: {', '.join(PLANS)}")
    elif isinstance(keys, list | tuple):
        out = Keys({str(k): "pro" for k in keys})
    elif keys is not None:
        out = parse_keys(Path(keys).read_text(encoding="utf-8-sig"), allow_short=allow_short, source=str(keys))
    elif os.environ.get("FDKIT_SERVER_KEYS"):
        entries = []
        for item in (i.strip() for i in os.environ["FDKIT_SERVER_KEYS"].split(",")):
            key, sep, plan = item.rpartition(":")
            entries.append(f"{key} {plan}" if sep and plan in PLANS else item)
        out = parse_keys("\n".join(entries), allow_short=allow_short, source="FDKIT_SERVER_KEYS entry")
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
