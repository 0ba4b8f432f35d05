"""The server's memos: least recently used first out, bounded by bytes (not entries).

An answer is kept under the key of what changes it (the endpoint and the validated query without ``limit``, which
only slices the list). Its size is the memory it really holds (measured: see :data:`ENTRY_OVERHEAD`), so no query
can pin more than the budget: the value's size as its maker says, plus the key's objects and the memo's own
bookkeeping per entry. The store keeps what it read from the lake (a ticker's rows, its sorted columns) in one too,
sized by their memory.

Example:
    >>> m = AnswerMemo(budget=1000)
    >>> m.get_or_make("k", lambda: ["x" * 10], lambda v: 12)
    ['xxxxxxxxxx']
    >>> m.bytes == 12 + object_bytes("k") + ENTRY_OVERHEAD, len(m)
    (True, 1)
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["AnswerMemo", "compact", "object_bytes", "ENTRY_OVERHEAD", "PAGE_OVERHEAD", "SIGHTINGS", "deep_bytes"]

#: what the memo itself allocates per entry (its ordered-dict node and the ``(value, size)`` tuple), measured with
#: tracemalloc, rounded up
ENTRY_OVERHEAD = 160
#: a kept page's tuple, media type and headers besides its body
PAGE_OVERHEAD = 512
#: keys a memo remembers having been asked for once (``keep_on_repeat``): ~230 bytes each (a store's key tuples,
#: measured with tracemalloc), ~3.7 MB at most, outside the byte budget
SIGHTINGS = 16_384


def compact(data: bytes) -> bytes:
    """A copy of ``data`` that holds its length only (orjson's bytes keep their larger write buffer).

    Example:
        >>> compact(b"abc")
        b'abc'
    """
    return bytes(memoryview(data))


def object_bytes(*objs: Any) -> int:
    """The memory of plain values and of what tuples, lists and dicts of them hold directly (one level).

    As ``sys.getsizeof`` counts it plus 16 bytes per object for the allocator (instances: their size only, so that
    their attribute dictionary is not made by asking).

    Example:
        >>> object_bytes("ab") == sys.getsizeof("ab") + 16
        True
    """
    total = 0
    for obj in objs:
        total += sys.getsizeof(obj) + 16
        if isinstance(obj, dict):
            inner: Any = [x for kv in obj.items() for x in kv]
        elif isinstance(obj, (tuple, list)):
            inner = obj
        else:
            continue
        total += sum(sys.getsizeof(x) + 16 for x in inner if isinstance(x, (str, bytes, int, float)))
    return total


def deep_bytes(value: Any) -> int:
    """The memory of a JSON-like value: dicts, lists, tuples, strings, numbers ... all the way down.

    Each object is counted once, as ``sys.getsizeof`` counts it plus 16 bytes per object for the allocator.

    Example:
        >>> deep_bytes(["ab", "ab"]) < deep_bytes(["ab", "cd"])  # one string object counted once
        True
    """
    seen: set[int] = set()
    total = 0
    stack = [value]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj) + 16
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
    return total


class AnswerMemo:
    """A thread-safe LRU memo bounded by the summed size of its values.

    Args:
        budget: the most bytes kept; an answer larger than the budget is answered but not kept. An entry counts
            its value's size (as ``size`` says), its key's objects and :data:`ENTRY_OVERHEAD`.
    """

    def __init__(self, budget: int = 128 * 2**20, *, sightings: int = SIGHTINGS) -> None:
        self.budget = budget
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._making: dict[Hashable, threading.Lock] = {}
        # keys asked for once and not kept (``keep_on_repeat``), most recent last, at most ``sightings`` of them
        self._seen: OrderedDict[Hashable, bool] = OrderedDict()
        self._sightings = sightings

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        """Whether ``key`` is kept (its place in the eviction order is left as it is)."""
        return key in self._items

    def keys(self) -> list[Hashable]:
        """The keys kept, least recently used first.

        Example:
            >>> m = AnswerMemo(budget=300)  # room for one entry of 6 bytes, its key and the memo's own
            >>> _ = m.get_or_make("a", lambda: 1, lambda v: 6); _ = m.get_or_make("b", lambda: 2, lambda v: 6)
            >>> m.keys(), m.bytes == 6 + object_bytes("b") + ENTRY_OVERHEAD
            (['b'], True)
        """
        with self._lock:
            return list(self._items)

    def get_or_make(
        self, key: Hashable, make: Callable[[], Any], size: Callable[[Any], int], *, keep_on_repeat: bool = False
    ) -> Any:
        """The value of ``key``, made (outside the memo's lock) and kept when absent.

        Threads asking for the same absent key at once wait for one of them to make it (a ticker is read once).

        Args:
            key: what the value depends on.
            make: computes the value.
            size: its size in bytes.
            keep_on_repeat: keep the value only once its key has been asked for before (among the last
                ``sightings`` keys asked for once): a sweep of one-off questions (each ticker of a market, once)
                then passes through without evicting what is asked again and again, and memory follows what is
                reused rather than how many distinct keys were asked. A second ask while the first is being made
                counts too.

        Returns:
            The value.

        Example:
            >>> m = AnswerMemo(budget=10_000)
            >>> _ = m.get_or_make("once", lambda: 1, lambda v: 8, keep_on_repeat=True)
            >>> "once" in m
            False
            >>> _ = m.get_or_make("once", lambda: 1, lambda v: 8, keep_on_repeat=True)
            >>> "once" in m
            True
        """
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[0]
            if keep_on_repeat:
                self._sight(key)
            making = self._making.setdefault(key, threading.Lock())
        with making:
            with self._lock:
                hit = self._items.get(key)
                if hit is not None:  # another thread made it meanwhile
                    self._items.move_to_end(key)
                    return hit[0]
            try:
                value = make()
                n = size(value) + object_bytes(key) + ENTRY_OVERHEAD
                with self._lock:
                    wanted = not keep_on_repeat or self._seen.get(key, False)
                if n <= self.budget and wanted:
                    self.put(key, value, n)
            finally:
                with self._lock:
                    if self._making.get(key) is making:
                        del self._making[key]
        return value

    def _sight(self, key: Hashable) -> None:
        """Count one ask of a key that is not kept (under the lock): ``False`` once, ``True`` from the second."""
        if key in self._seen:
            self._seen[key] = True
            self._seen.move_to_end(key)
            return
        self._seen[key] = False
        while len(self._seen) > self._sightings:
            self._seen.popitem(last=False)

    def put(self, key: Hashable, value: Any, n: int) -> None:
        """Keep ``value`` under ``key`` as ``n`` bytes, dropping the least recently used beyond the budget.

        ``n`` is the whole entry's size (:meth:`get_or_make` adds the key's and the memo's own bytes to the value's).
        A value larger than the whole budget is not kept.
        """
        if n > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._items[key] = (value, n)
            self._seen.pop(key, None)
            self.bytes += n
            while self.bytes > self.budget and self._items:
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped

    def peek(self, key: Hashable) -> Any:
        """The value of ``key`` if it is kept (marked as recently used), else ``None``; never makes one."""
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def clear(self) -> None:
        """Forget everything (the lake changed)."""
        with self._lock:
            self._items.clear()
            self._seen.clear()
            self.bytes = 0
