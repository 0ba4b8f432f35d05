"""Configuration resolution: arguments > :func:`configure` > environment > embedded default.

Example:
    >>> from fdkit.client.config import resolve
    >>> cfg = resolve(api_key="k", base_url="https://example.test", env={})
    >>> cfg.base_url, cfg.embedded
    ('https://example.test', False)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "Settings",
    "configure",
    "resolve",
    "normalise_key",
    "PUBLIC_BASE_URL",
    "current_overrides",
    "reset",
    "generation",
]

#: the public incarnation of the service, used when a key but no base URL is configured
PUBLIC_BASE_URL = "https://api.financialdatasets.ai"

_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    """Resolved client settings.

    Attributes:
        api_key: the key to send, or ``None``.
        base_url: service base URL; ``None`` when the embedded service is to be started.
        cache: use the on-disk cache.
        cache_dir: cache directory (``None``: the user cache dir).
        offline: answer from the cache only.
        timeout: seconds per HTTP request.
        max_workers: threads for multi-ticker fetches.
        progress: progress bars (``None``: on a terminal or in Jupyter, for calls over half a second).
        embedded: no key and no base URL were configured, so the embedded service serves ``data/``.
        deadline: seconds one request may take with all its retries and waits (default ``10 * timeout``).
        max_retry_after: the longest ``Retry-After`` worth waiting for; a longer one raises ``RateLimitError``.
        max_response_bytes: the largest (decompressed) response body accepted.
        max_cache_bytes: the size each namespace's HTTP cache is trimmed to (oldest answers first).
    """

    api_key: str | None = None
    base_url: str | None = None
    cache: bool = True
    cache_dir: str | None = None
    offline: bool = False
    timeout: float = 30.0
    max_workers: int = 8
    progress: bool | None = None
    embedded: bool = False
    deadline: float | None = None
    max_retry_after: float = 60.0
    max_response_bytes: int = 256 * 2**20
    max_cache_bytes: int = 2**30

    @property
    def call_deadline(self) -> float:
        """Seconds one request may take with all its retries (``deadline``; default ten times ``timeout``).

        Ten attempts' worth: room for the five retries and their backoff (1 + 2 + 4 + 8 s), never unbounded.
        """
        return self.deadline if self.deadline is not None else 10 * self.timeout

    def __repr__(self) -> str:  # never show the key
        key = "set" if self.api_key else "None"
        return (
            f"Settings(api_key={key}, base_url={self.base_url!r}, cache={self.cache}, "
            f"cache_dir={self.cache_dir!r}, offline={self.offline}, timeout={self.timeout}, "
            f"max_workers={self.max_workers}, progress={self.progress}, embedded={self.embedded}, "
            f"deadline={self.deadline}, max_retry_after={self.max_retry_after}, "
            f"max_response_bytes={self.max_response_bytes}, max_cache_bytes={self.max_cache_bytes})"
        )


_OVERRIDES: dict[str, Any] = {}
_LOCK = threading.Lock()
_GENERATION = 0  # bumped by configure()/reset(); the default client is rebuilt when it changes
_FIELDS = {
    "api_key",
    "base_url",
    "cache",
    "cache_dir",
    "offline",
    "timeout",
    "max_workers",
    "progress",
    "deadline",
    "max_retry_after",
    "max_response_bytes",
    "max_cache_bytes",
}


def configure(**settings: Any) -> None:
    """Set defaults for the default client (and for any ``Client`` that leaves a setting unset).

    Args:
        **settings: any of ``api_key``, ``base_url``, ``cache``, ``cache_dir``, ``offline``, ``timeout``,
            ``max_workers``, ``progress``, ``deadline``, ``max_retry_after``, ``max_response_bytes``,
            ``max_cache_bytes``. ``None`` removes a setting.

    Raises:
        TypeError: for an unknown setting.

    Example:
        >>> configure(timeout=10); current_overrides()["timeout"]
        10
        >>> reset()
    """
    unknown = set(settings) - _FIELDS
    if unknown:
        raise TypeError(f"unknown setting(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(_FIELDS))}")
    global _GENERATION
    with _LOCK:
        for k, v in settings.items():
            if v is None:
                _OVERRIDES.pop(k, None)
            else:
                _OVERRIDES[k] = v
        _GENERATION += 1  # the default client picks the new settings up on its next use


def current_overrides() -> dict[str, Any]:
    """Return a copy of what :func:`configure` has set.

    Returns:
        The settings dict (the key shown as ``"set"``).

    Example:
        >>> "api_key" in current_overrides()
        False
    """
    with _LOCK:
        out = dict(_OVERRIDES)
    if "api_key" in out:
        out["api_key"] = "set"
    return out


def reset() -> None:
    """Forget everything :func:`configure` set.

    Example:
        >>> reset()
    """
    global _GENERATION
    with _LOCK:
        _OVERRIDES.clear()
        _GENERATION += 1


def generation() -> int:
    """Count the changes made by :func:`configure` and :func:`reset` (the default client follows it).

    Returns:
        A number that grows with every change.

    Example:
        >>> before = generation(); configure(timeout=5); reset(); generation() - before
        2
    """
    with _LOCK:
        return _GENERATION


def normalise_key(key: str) -> str | None:
    """An API key as it is sent: surrounding whitespace (a trailing newline) stripped; ``None`` when empty.

    Args:
        key: the key as given.

    Returns:
        The key, or ``None``.

    Raises:
        ValueError: for a key with whitespace or control characters inside (never shown in the message).

    Example:
        >>> normalise_key("  sk-abc  ")
        'sk-abc'
    """
    from fdkit.errors import register_secret

    register_secret(key)  # the raw form too, so neither spelling is ever shown
    key = key.strip()
    if not key:
        return None
    if any(c.isspace() or not c.isprintable() for c in key):
        raise ValueError("the API key contains whitespace or control characters inside it (the key is not shown)")
    register_secret(key)
    return key


def resolve(env: Mapping[str, str] | None = None, **args: Any) -> Settings:
    """Resolve settings with the precedence arguments > configure() > environment > embedded default.

    Args:
        env: environment mapping (``os.environ`` by default).
        **args: explicit arguments; ``None`` means "not given".

    Returns:
        :class:`Settings`.

    Example:
        >>> resolve(env={}).embedded
        True
    """
    env = os.environ if env is None else env
    with _LOCK:
        overrides = dict(_OVERRIDES)
    from_env: dict[str, Any] = {}
    if env.get("FINANCIAL_DATASETS_API_KEY"):
        from_env["api_key"] = env["FINANCIAL_DATASETS_API_KEY"]
    if env.get("FDKIT_BASE_URL"):
        from_env["base_url"] = env["FDKIT_BASE_URL"]
    if env.get("FDKIT_CACHE_DIR"):
        from_env["cache_dir"] = env["FDKIT_CACHE_DIR"]
    if env.get("FDKIT_OFFLINE"):
        from_env["offline"] = env["FDKIT_OFFLINE"].strip().lower() in _TRUE
    if env.get("FDKIT_PROGRESS"):  # e.g. 0 for notebooks executed headless, whose outputs are kept
        from_env["progress"] = env["FDKIT_PROGRESS"].strip().lower() in _TRUE

    merged: dict[str, Any] = {}
    for layer in (from_env, overrides, {k: v for k, v in args.items() if v is not None}):
        merged.update(layer)
    if isinstance(merged.get("api_key"), str):  # a key pasted with a newline or spaces is the same key
        merged["api_key"] = normalise_key(merged["api_key"])
    s = Settings(**{k: v for k, v in merged.items() if k in _FIELDS})
    if s.base_url:
        _check_base_url(
            s.base_url,
            "Client(base_url={!r})"
            if args.get("base_url")
            else ("fdkit.configure(base_url={!r})" if overrides.get("base_url") else "FDKIT_BASE_URL={!r}"),
        )
        return replace(s, base_url=s.base_url.rstrip("/"))
    if s.api_key:
        return replace(s, base_url=PUBLIC_BASE_URL)
    return replace(s, embedded=True)


def _check_base_url(url: str, where: str) -> None:
    """A base URL is ``http://`` or ``https://`` and a host; anything else is explained before a request fails."""
    from urllib.parse import urlsplit

    from fdkit.errors import ConfigurationError

    parts = urlsplit(url.strip())
    if parts.scheme in ("http", "https") and parts.netloc:
        return
    guess = url.strip().split("://", 1)[-1].lstrip("/")
    local = guess.startswith(("localhost", "127.", "[::1]", "0.0.0.0"))
    raise ConfigurationError(
        f"{where.format(url)} is not a URL fdkit can send to: it needs a scheme and a host, e.g. "
        f"{'http' if local else 'https'}://{guess} (fdkit serve listens on http://127.0.0.1:<port>; with no base URL "
        "and no key fdkit serves its bundled data offline)",
        error="Invalid base URL",
    )


def is_loopback(url: str | None) -> bool:
    """Whether a base URL is on this machine (a service sharing its cores: no latency for more threads to hide).

    Example:
        >>> is_loopback("http://127.0.0.1:8000"), is_loopback("https://api.financialdatasets.ai")
        (True, False)
    """
    host = urlsplit(url or "").hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")
