"""The server's memos: least recently used first out, bounded by bytes (not entries).

An answer is kept under the key of what changes it (the endpoint and the validated query without ``limit``, which
only slices the list). Its size is the length of its JSON, so no query can pin more than the budget. The store
keeps what it read from the lake (a ticker's rows, its sorted columns) in one too, sized by their memory.

Example:
    >>> m = AnswerMemo(budget=100)
    >>> m.get_or_make("k", lambda: ["x" * 10], lambda v: 12)
    ['xxxxxxxxxx']
    >>> m.bytes, len(m)
    (12, 1)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["AnswerMemo"]


class AnswerMemo:
    """A thread-safe LRU memo bounded by the summed size of its values.

    Args:
        budget: the most bytes kept; an answer larger than the budget is answered but not kept.
    """

    def __init__(self, budget: int = 128 * 2**20) -> None:
        self.budget = budget
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._making: dict[Hashable, threading.Lock] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        """Whether ``key`` is kept (its place in the eviction order is left as it is)."""
        return key in self._items

    def keys(self) -> list[Hashable]:
        """The keys kept, least recently used first.

        Example:
            >>> m = AnswerMemo(budget=10)
            >>> _ = m.get_or_make("a", lambda: 1, lambda v: 6); _ = m.get_or_make("b", lambda: 2, lambda v: 6)
            >>> m.keys(), m.bytes
            (['b'], 6)
        """
        with self._lock:
            return list(self._items)

    def get_or_make(self, key: Hashable, make: Callable[[], Any], size: Callable[[Any], int]) -> Any:
        """The value of ``key``, made (outside the memo's lock) and kept when absent.

        Threads asking for the same absent key at once wait for one of them to make it (a ticker is read once).

        Args:
            key: what the value depends on.
            make: computes the value.
            size: its size in bytes.

        Returns:
            The value.
        """
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[0]
            making = self._making.setdefault(key, threading.Lock())
        with making:
            with self._lock:
                hit = self._items.get(key)
                if hit is not None:  # another thread made it meanwhile
                    self._items.move_to_end(key)
                    return hit[0]
            try:
                value = make()
                n = size(value)
                if n <= self.budget:
                    self.put(key, value, n)
            finally:
                with self._lock:
                    if self._making.get(key) is making:
                        del self._making[key]
        return value

    def put(self, key: Hashable, value: Any, n: int) -> None:
        """Keep ``value`` under ``key`` as ``n`` bytes, dropping the least recently used beyond the budget.

        A value larger than the whole budget is not kept.
        """
        if n > self.budget:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._items[key] = (value, n)
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
            self.bytes = 0
