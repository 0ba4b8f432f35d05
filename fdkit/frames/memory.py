"""Memory a large read freed, handed back to the system: a research-scale call's peak is its frame, not its past.

A thousand tickers' price history is read in a few requests, each of which allocates and frees some hundred MB
(the service's rows, their Arrow table, the answer's bytes). Allocators keep what is freed for later: Arrow's pool
(mimalloc) per thread, glibc's heap past its dynamic mmap threshold. Without handing it back between requests the
call's peak was 4.5x its frame; with it, about 3x (BENCHMARKS.md, research scale).

Python's cyclic garbage collector is paused for a bulk call: its full pass walks every object of the process
(the service's and pandas' modules: about 150,000), and a thousand companies' statements set off one, 70 ms of a
0.6 s call; the call's cycles are collected when it ends.

Example:
    >>> release_unused()
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import threading
from collections.abc import Callable, Iterator

import pyarrow as pa

__all__ = ["collection_paused", "release_unused"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim`` (glibc; ``None`` elsewhere: musl, macOS, Windows)."""
    try:
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # the process's own symbols: glibc's, where linked
    except (OSError, TypeError):  # (Windows has no such handle)
        trim = None
    if trim is None:  # (find_library runs ldconfig in a subprocess: 7 ms, only where the process's own lack it)
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

    Within :func:`collection_paused`, the cycles of the objects made since the pause began are collected first
    (the young generations only: milliseconds), so that what they hold is freed too.

    Example:
        >>> release_unused()
    """
    if _PAUSED[0]:  # within a paused collector: the young objects' cycles (a request's frames), collected first
        gc.collect(1)
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_PAUSE = threading.Lock()
_PAUSED = [0, False]  # the calls within the pause, and whether the collector was enabled before the first


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off within the block (calls of several threads: off until the last ends).

    Reference counting frees memory as usual; only cycles wait for the block's end, where the collector is
    enabled again if it was before (a process that turned it off keeps it off).

    Example:
        >>> import gc
        >>> with collection_paused():
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """
    with _PAUSE:
        if _PAUSED[0] == 0:
            _PAUSED[1] = gc.isenabled()
            gc.disable()
        _PAUSED[0] += 1
    try:
        yield
    finally:
        with _PAUSE:
            _PAUSED[0] -= 1
            if _PAUSED[0] == 0 and _PAUSED[1]:
                gc.enable()
