"""Memory a large read freed, handed back to the system: a research-scale call's peak is its frame, not its past.

A thousand tickers' price history is read in a few requests, each of which allocates and frees some hundred MB
(the service's rows, their Arrow table, the answer's bytes). Allocators keep what is freed for later: Arrow's pool
(mimalloc) per thread, glibc's heap past its dynamic mmap threshold. Without handing it back between requests the
call's peak was 4.5x its frame; with it, about 3x (BENCHMARKS.md, research scale).

Example:
    >>> release_unused()
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

import pyarrow as pa

__all__ = ["release_unused"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim`` (glibc; ``None`` elsewhere: musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_unused() -> None:
    """Hand memory freed by Arrow's pool and by the C heap back to the system (where the allocator can).

    Example:
        >>> release_unused()
    """
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
